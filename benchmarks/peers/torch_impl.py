"""PyTorch (CPU, float64, one thread): each problem rewritten in torch, ``loss.backward()``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..problems import Args, Problem
from . import Prepared, Unsupported, as_numpy

torch.set_num_threads(1)
Tensor = torch.Tensor
SQRT2 = math.sqrt(2.0)


def gmm(alphas, means, icf, x, scatter, gamma, m, const):  # noqa: ANN001, ANN201
    """ADBench GMM in torch."""
    k, d = means.shape
    n = x.shape[0]
    qs = icf[:, :d]
    ls = icf[:, d:]
    qdiags = torch.exp(qs)
    sum_qs = qs.sum(dim=1)
    lower = (ls @ scatter).reshape(k, d, d)
    xc = x[None, :, :] - means[:, None, :]
    lxc = qdiags[:, None, :] * xc + xc @ lower.transpose(1, 2)
    inner = (alphas + sum_qs)[:, None] - 0.5 * (lxc * lxc).sum(dim=2)
    lse = torch.logsumexp(inner, dim=0)
    prior = 0.5 * gamma * gamma * ((qdiags * qdiags).sum() + (ls * ls).sum()) - m * sum_qs.sum()
    return const + lse.sum() - n * torch.logsumexp(alphas, dim=0) + prior


def helmholtz(x, b, A, R, T):  # noqa: ANN001, ANN201
    """Helmholtz free energy in torch."""
    bx = b @ x
    xax = x @ (A @ x)
    ratio = (1.0 + (1.0 + SQRT2) * bx) / (1.0 + (1.0 - SQRT2) * bx)
    return R * T * (x * torch.log(x / (1.0 - bx))).sum() - xax / (math.sqrt(8.0) * bx) * torch.log(
        ratio
    )


def mlp(W1, b1, W2, b2, X, Y):  # noqa: ANN001, ANN201
    """MLP loss in torch."""
    h = torch.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    return -(Y * torch.log_softmax(z, dim=1)).sum() / X.shape[0]


def lstm(main_params, extra_params, state, sequence):  # noqa: ANN001, ANN201
    """ADBench LSTM objective (any even number of state rows) in torch."""
    c, b = sequence.shape
    layers = main_params.shape[0] // 2
    h = [state[2 * i] for i in range(layers)]
    cell = [state[2 * i + 1] for i in range(layers)]
    total = 0.0
    x = sequence[0]
    for t in range(c - 1):
        inp = x * extra_params[0]
        for i in range(layers):
            gates = torch.cat((inp, h[i], inp, h[i])) * main_params[2 * i] + main_params[2 * i + 1]
            f = torch.sigmoid(gates[:b])
            ig = torch.sigmoid(gates[b : 2 * b])
            o = torch.sigmoid(gates[2 * b : 3 * b])
            g = torch.tanh(gates[3 * b :])
            cell[i] = cell[i] * f + ig * g
            h[i] = o * torch.tanh(cell[i])
            inp = h[i]
        ypred = inp * extra_params[1] + extra_params[2]
        ynorm = ypred - torch.log(torch.exp(ypred).sum() + 2.0)
        total = total + (sequence[t + 1] * ynorm).sum()
        x = sequence[t + 1]
    return -total / ((c - 1) * b)


def scalar_loop(a, b, c, iterations):  # noqa: ANN001, ANN201
    """The scalar recurrence on 0-d tensors."""
    x, y, z = a, b, c
    acc = 0.0
    for _ in range(iterations):
        s = torch.sin(x) * y + 0.5 * torch.cos(z)
        t = torch.tanh(s) - 0.3 * x * z
        u = torch.exp(-0.1 * t * t) + torch.sqrt(1.0 + y * y)
        x_new = 0.9 * x + 0.1 * torch.sin(u) * t
        y = 0.8 * y + 0.2 * torch.cos(t + x_new)
        z = 0.5 * torch.log(1.0 + u * u) + 0.1 * z
        x = x_new
        acc = acc + x * y - z
    return acc


def spring(x0, v0, k, diff, rest, target, steps, dt, damping):  # noqa: ANN001, ANN201
    """The spring chain in torch."""
    x, v = x0, v0
    for _ in range(steps):
        ext = diff @ x - rest
        force = -((k * ext + 0.1 * ext**3) @ diff) - damping * v
        x = x + dt * v
        v = v + dt * force
    return ((x - target) ** 2).sum() + 0.5 * (v * v).sum()


IMPLS: dict[str, Callable[..., Any]] = {
    "gmm": gmm,
    "helmholtz": helmholtz,
    "mlp": mlp,
    "lstm": lstm,
    "scalar_loop": scalar_loop,
    "spring": spring,
}


def _to_torch(value: Any) -> Any:
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value
    return torch.as_tensor(value, dtype=torch.float64)


def build(problem: Problem, args: Args) -> Prepared:
    """Leaf tensors with ``requires_grad``, forward, ``backward()``, read ``.grad``."""
    if problem.name not in IMPLS:
        raise Unsupported("no torch implementation")
    f = IMPLS[problem.name]
    base = [_to_torch(a) for a in args]
    for i in problem.wrt:  # differentiated floats become 0-d tensors
        base[i] = torch.as_tensor(args[i], dtype=torch.float64)

    def call() -> Any:
        full = list(base)
        leaves = []
        for i in problem.wrt:
            leaf = base[i].detach().requires_grad_(True)
            full[i] = leaf
            leaves.append(leaf)
        loss = f(*full)
        loss.backward()
        return loss.detach(), tuple(leaf.grad for leaf in leaves)

    def result(raw: Any) -> tuple[float, Any]:
        value, grads = raw
        return float(value), tuple(as_numpy(g) for g in grads)

    return Prepared(call, result)
