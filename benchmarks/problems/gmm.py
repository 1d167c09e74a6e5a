"""ADBench's Gaussian mixture model objective (Srajer et al. 2018), w.r.t. alphas, means, icf.

``icf`` holds, per component, the log of the diagonal of the inverse-covariance
Cholesky factor ``Q`` (first ``d`` entries) and its strictly lower triangle in
column-major order (the next ``d(d-1)/2``). The objective is ADBench's::

    sum_i logsumexp_k(alpha_k + sum(q_k) - 0.5 |Q_k (x_i - mu_k)|^2)
    - n logsumexp(alpha) + log Wishart prior(Q) + constants

with every ``logsumexp`` written with max-subtraction in plain NumPy. The
primal is straight-line NumPy (no einsum, no concatenate, no in-place writes):
the lower triangle is scattered into ``d x d`` matrices with a constant 0/1
matrix, ``scatter``.
"""

from __future__ import annotations

import math

import numpy as np

from .base import Args, Problem

SIZES: dict[str, tuple[int, int, int]] = {  # name: (d, k, n)
    "tiny": (3, 2, 5),
    "d10_k25_n1000": (10, 25, 1000),
    "d10_k25_n10000": (10, 25, 10000),
}


def gmm(alphas, means, icf, x, scatter, gamma, m, const):
    """ADBench's GMM objective (negative log-likelihood form as in ADBench's reference code)."""
    k = means.shape[0]
    d = means.shape[1]
    n = x.shape[0]
    qs = icf[:, :d]
    ls = icf[:, d:]
    qdiags = np.exp(qs)
    sum_qs = np.sum(qs, axis=1)
    lower = np.reshape(ls @ scatter, (k, d, d))
    xc = x[None, :, :] - means[:, None, :]
    lxc = qdiags[:, None, :] * xc + xc @ np.transpose(lower, (0, 2, 1))
    sqsum = np.sum(lxc * lxc, axis=2)
    inner = alphas[:, None] + sum_qs[:, None] - 0.5 * sqsum
    inner_max = np.max(inner, axis=0, keepdims=True)
    lse = np.log(np.sum(np.exp(inner - inner_max), axis=0)) + inner_max[0]
    alpha_max = np.max(alphas)
    lse_alphas = np.log(np.sum(np.exp(alphas - alpha_max))) + alpha_max
    prior = 0.5 * gamma * gamma * (np.sum(qdiags * qdiags) + np.sum(ls * ls)) - m * np.sum(sum_qs)
    return const + np.sum(lse) - n * lse_alphas + prior


def gmm_hand(alphas, means, icf, x, scatter, gamma, m, const):
    """Value and gradient w.r.t. (alphas, means, icf), derived and written by hand."""
    k, d = means.shape
    n = x.shape[0]
    qs = icf[:, :d]
    ls = icf[:, d:]
    qdiags = np.exp(qs)
    sum_qs = qs.sum(axis=1)
    lower = (ls @ scatter).reshape(k, d, d)
    xc = x[None, :, :] - means[:, None, :]
    lxc = qdiags[:, None, :] * xc + xc @ lower.transpose(0, 2, 1)
    inner = (alphas + sum_qs)[:, None] - 0.5 * np.einsum("knd,knd->kn", lxc, lxc)
    inner_max = inner.max(axis=0)
    e = np.exp(inner - inner_max)
    s = e.sum(axis=0)
    lse = np.log(s) + inner_max
    a_max = alphas.max()
    ea = np.exp(alphas - a_max)
    sa = ea.sum()
    lse_alphas = math.log(sa) + a_max
    prior = 0.5 * gamma * gamma * (np.sum(qdiags * qdiags) + np.sum(ls * ls)) - m * sum_qs.sum()
    value = const + lse.sum() - n * lse_alphas + prior

    w = e / s  # d value / d inner: softmax over components, (k, n)
    w_k = w.sum(axis=1)
    g_alphas = w_k - n * (ea / sa)
    g_lxc = -w[:, :, None] * lxc  # d value / d lxc
    g_qdiags = np.einsum("knd,knd->kd", g_lxc, xc) + gamma * gamma * qdiags
    g_lower = g_lxc.transpose(0, 2, 1) @ xc  # (k, d, d)
    g_ls = g_lower.reshape(k, d * d) @ scatter.T + gamma * gamma * ls
    s_lxc = g_lxc.sum(axis=1)  # sum over points before the (linear) map back to xc
    g_means = -(qdiags * s_lxc + np.einsum("ki,kij->kj", s_lxc, lower))
    g_qs = g_qdiags * qdiags + (w_k - m)[:, None]
    g_icf = np.concatenate([g_qs, g_ls], axis=1)
    return value, (g_alphas, g_means, g_icf)


def scatter_matrix(d: int) -> np.ndarray:
    """The 0/1 matrix mapping ADBench's column-major lower triangle to a flat ``d x d``."""
    out = np.zeros((d * (d - 1) // 2, d * d))
    idx = 0
    for j in range(d):
        for i in range(j + 1, d):
            out[idx, i * d + j] = 1.0
            idx += 1
    return out


def wishart_constant(d: int, k: int, n: int, gamma: float, m: int) -> float:
    """The parameter-independent terms: ``-n d/2 log(2 pi)`` and ``-k C`` of the prior."""
    dof = d + m + 1
    log_gamma_distrib = 0.25 * d * (d - 1) * math.log(math.pi) + sum(
        math.lgamma(0.5 * dof + 0.5 * (1 - j)) for j in range(1, d + 1)
    )
    c = dof * d * (math.log(gamma) - 0.5 * math.log(2.0)) - log_gamma_distrib
    return -0.5 * n * d * math.log(2.0 * math.pi) - k * c


def inputs(size: str, seed: int = 0) -> Args:
    """Random inputs as ADBench generates them (uniform means/x, small icf)."""
    d, k, n = SIZES[size]
    rng = np.random.default_rng(seed)
    alphas = rng.standard_normal(k)
    means = rng.uniform(0.0, 1.0, (k, d))
    icf = rng.uniform(-0.5, 0.5, (k, d + d * (d - 1) // 2))
    x = rng.uniform(0.0, 1.0, (n, d))
    gamma, m = 1.0, 0
    const = wishart_constant(d, k, n, gamma, m)
    return alphas, means, icf, x, scatter_matrix(d), gamma, float(m), const


PROBLEM = Problem(
    name="gmm",
    description="ADBench GMM objective w.r.t. (alphas, means, icf)",
    primal=gmm,
    hand=gmm_hand,
    wrt=(0, 1, 2),
    inputs=inputs,
    sizes=("d10_k25_n1000", "d10_k25_n10000"),
    quick="d10_k25_n1000",
)
