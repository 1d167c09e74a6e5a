"""SciPy's distributions and random draws inside differentiated code (issue 18).

``scipy.stats.norm.logpdf(x, loc, scale)`` and the other distributions' methods have rules
(``adgen/rules/stats.py``), however the program names them (``scipy.stats.norm``, ``st.norm``,
``from scipy.stats import norm``), with positional or keyword arguments, defaults and
broadcasting; and a random generator the function makes itself (``rs =
np.random.RandomState(0)``) draws constants of the derivative. Each program is checked in
both modes: against a hand-written gradient where there is one, else central differences
(``check_grads``), and at second order where adgen supports it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from derivative_checks import differences

import adgen
from adgen.errors import NonDifferentiableError, NoRuleError, UnsupportedSyntaxError
from adgen.testing import check_grads

pytest.importorskip("scipy.stats")
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402
import scipy.stats as st  # noqa: E402
from scipy.special import softmax  # noqa: E402
from scipy.stats import dirichlet, multivariate_normal, norm, poisson  # noqa: E402

RNG = np.random.default_rng(18)
X = RNG.standard_normal((12, 3))
Y = X @ np.array([0.5, -1.0, 2.0]) + 0.3 * RNG.standard_normal(12)


def both_modes(f: Any, args: tuple[Any, ...], wrt: int, expected: Any) -> None:
    """Reverse mode gives ``expected`` (the gradient w.r.t. argument ``wrt``); forward mode
    in a random direction ``t`` gives ``<expected, t>``; the value is ``f``'s own."""
    np.testing.assert_allclose(adgen.grad(f, wrt=wrt)(*args), expected, rtol=1e-10, atol=1e-12)
    tangent = np.random.default_rng(1).standard_normal(np.shape(args[wrt]))
    tangents: list[Any] = [np.zeros_like(np.asarray(a, float)) for a in args]
    tangents[wrt] = tangent if np.ndim(args[wrt]) else float(tangent)
    out, out_dot = adgen.jvp(f, args, tangents)
    assert out == pytest.approx(f(*args), rel=1e-13)
    assert out_dot == pytest.approx(float(np.sum(expected * tangent)), rel=1e-10, abs=1e-12)


# -- scipy.stats.norm ------------------------------------------------------------------------


def gaussian_loglik(mu: Any, log_s: Any, y: Any) -> Any:
    s = np.exp(log_s)
    prior = norm.logpdf(mu, 0.0, 10.0) + scipy.stats.norm.logpdf(log_s)
    return np.sum(norm.logpdf(y, loc=mu, scale=s)) + prior


def test_a_gaussian_log_likelihood_has_the_analytic_gradient_in_both_modes() -> None:
    mu, log_s = 0.4, -0.2
    s = np.exp(log_s)
    z = (Y - mu) / s
    d_mu = np.sum(z / s) - mu / 100.0
    d_log_s = np.sum(z * z - 1.0) - log_s  # d/ds times s, and the prior's
    both_modes(gaussian_loglik, (mu, log_s, Y), 0, d_mu)
    both_modes(gaussian_loglik, (mu, log_s, Y), 1, d_log_s)


def test_the_data_is_differentiated_too() -> None:
    def f(y: Any, mu: Any, s: Any) -> Any:
        return np.sum(st.norm.logpdf(y, mu, s))

    both_modes(f, (Y, 0.3, 1.7), 0, -(Y - 0.3) / 1.7**2)


def bayesian_regression(w: Any, sigma: Any) -> Any:
    mean = X @ w
    loglik = np.sum(scipy.stats.norm.logpdf(Y, mean, sigma))
    return loglik + np.sum(norm.logpdf(w, scale=3.0))


def test_bayesian_linear_regression() -> None:
    w = np.array([0.2, -0.4, 1.1])
    r = Y - X @ w
    expected = X.T @ r / 0.8**2 - w / 9.0
    both_modes(bayesian_regression, (w, 0.8), 0, expected)
    check_grads(bayesian_regression, w, 0.8)


@pytest.mark.parametrize(
    "call",
    [
        "norm.logpdf(x, mu, s)",
        "norm.logpdf(x, loc=mu, scale=s)",
        "scipy.stats.norm.logpdf(x, mu, scale=s)",
        "st.norm.pdf(x, mu, s)",
        "norm.logcdf(x, mu, s)",
        "norm.cdf(x, loc=mu, scale=s)",
        "norm.logpdf(x - mu) - np.log(s)",
        "norm.cdf(x / s)",
    ],
)
def test_norm_forms_and_broadcasting(call: str, tmp_path: Path) -> None:
    """x (4, 3), mu (3,), s (4, 1): the cotangents of mu and s are summed over the axes
    broadcasting added."""
    source = (
        "import numpy as np\nimport scipy.stats\nimport scipy.stats as st\n"
        "from scipy.stats import norm\n\n"
        f"def f(x, mu, s):\n    return np.sum({call} ** 2)\n"
    )
    fn = _module(tmp_path, source).f
    x = RNG.standard_normal((4, 3))
    check_grads(fn, x, np.array([0.1, -0.3, 0.2]), np.array([[0.7], [1.2], [0.9], [1.5]]))


def _module(folder: Path, source: str) -> Any:
    import importlib.util

    path = folder / f"m{abs(hash(source))}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_second_order_of_a_gaussian_log_likelihood() -> None:
    def loglik(theta: Any) -> Any:
        return np.sum(norm.logpdf(Y, theta[0], np.exp(theta[1])))

    theta = np.array([0.3, 0.1])
    s = np.exp(theta[1])
    z = (Y - theta[0]) / s
    expected = np.array(
        [
            [-len(Y) / s**2, -2.0 * np.sum(z) / s],
            [-2.0 * np.sum(z) / s, -2.0 * np.sum(z * z)],
        ]
    )
    np.testing.assert_allclose(adgen.hessian(loglik)(theta), expected, rtol=1e-10)


# -- multivariate_normal ---------------------------------------------------------------------


def gp_marginal_loglik(log_ell: Any, log_sf: Any, log_sn: Any, xs: Any, ys: Any) -> Any:
    sq = (xs[:, None] - xs[None, :]) ** 2
    k = np.exp(2.0 * log_sf) * np.exp(-0.5 * sq / np.exp(2.0 * log_ell))
    k = k + np.exp(2.0 * log_sn) * np.eye(len(xs))
    return st.multivariate_normal.logpdf(ys, mean=np.zeros(len(xs)), cov=k)


def test_a_gaussian_process_marginal_likelihood_has_the_analytic_gradient() -> None:
    xs = np.linspace(0.0, 3.0, 7)
    ys = np.sin(xs) + 0.1 * RNG.standard_normal(7)
    log_ell, log_sf, log_sn = 0.1, 0.2, -1.0
    sq = (xs[:, None] - xs[None, :]) ** 2
    kse = np.exp(2.0 * log_sf) * np.exp(-0.5 * sq / np.exp(2.0 * log_ell))
    k = kse + np.exp(2.0 * log_sn) * np.eye(7)
    alpha = np.linalg.solve(k, ys)
    inner = np.outer(alpha, alpha) - np.linalg.inv(k)
    dk = {  # dK / d(log parameter)
        0: kse * sq / np.exp(2.0 * log_ell),
        1: 2.0 * kse,
        2: 2.0 * np.exp(2.0 * log_sn) * np.eye(7),
    }
    args = (log_ell, log_sf, log_sn, xs, ys)
    for k_arg, d in dk.items():
        both_modes(gp_marginal_loglik, args, k_arg, 0.5 * np.sum(inner * d))
    check_grads(gp_marginal_loglik, *args, wrt=(0, 1, 2))


def test_multivariate_normal_in_x_and_mean_has_the_analytic_gradient() -> None:
    a = RNG.standard_normal((3, 3))
    cov = a @ a.T + 3.0 * np.eye(3)
    points = RNG.standard_normal((5, 3))
    mean = np.array([0.2, -0.1, 0.4])

    def f(x: Any, m: Any) -> Any:
        return np.sum(multivariate_normal.logpdf(x, m, cov))

    z = np.linalg.solve(cov, (points - mean).T).T
    both_modes(f, (points, mean), 0, -z)
    both_modes(f, (points, mean), 1, np.sum(z, axis=0))
    both_modes(f, (points[0], mean), 0, -z[0])  # one point: shape (d,)
    np.testing.assert_allclose(adgen.hessian(f, wrt=1)(points, mean), -5.0 * np.linalg.inv(cov))


def test_multivariate_normal_reads_the_lower_triangle_of_cov_as_scipy_does() -> None:
    a = RNG.standard_normal((3, 3))
    cov = a @ a.T + 3.0 * np.eye(3)
    cov[0, 2] += 5.0  # SciPy reads the lower triangle only: this entry changes nothing
    points = RNG.standard_normal((4, 3))

    def f(c: Any) -> Any:
        return np.sum(scipy.stats.multivariate_normal.logpdf(points, cov=c))

    g = adgen.grad(f)(cov)
    assert np.all(g[np.triu_indices(3, 1)] == 0.0)
    check_grads(f, cov)

    def given_mean(c: Any) -> Any:
        return np.sum(scipy.stats.multivariate_normal.logpdf(points, np.zeros(3), c))

    check_grads(given_mean, np.array([0.5, 1.5, 2.0]))  # the diagonal
    check_grads(given_mean, 1.3)  # a multiple of the identity


def test_second_order_of_multivariate_normal_in_its_covariance_parameters() -> None:
    points = RNG.standard_normal((6, 2))

    def f(theta: Any) -> Any:
        low = np.array([[np.exp(theta[0]), 0.0], [theta[1], np.exp(theta[2])]])
        return np.sum(multivariate_normal.logpdf(points, np.zeros(2), low @ low.T))

    theta = np.array([0.1, 0.3, -0.2])
    hess = adgen.hessian(f)(theta)
    step = 1e-5
    grad = adgen.grad(f)
    numeric = np.array(
        [(grad(theta + step * e) - grad(theta - step * e)) / (2 * step) for e in np.eye(3)]
    )
    np.testing.assert_allclose(hess, numeric, rtol=1e-6, atol=1e-8)


# -- t, gamma, beta, poisson, dirichlet --------------------------------------------------------


def robust_regression(w: Any, log_nu: Any, log_s: Any) -> Any:
    resid = Y - X @ w
    return np.sum(st.t.logpdf(resid, np.exp(log_nu), scale=np.exp(log_s)))


def test_student_t_robust_regression() -> None:
    check_grads(robust_regression, np.array([0.4, -0.9, 1.8]), 1.2, -0.3)


def test_a_censored_log_normal_survival_model() -> None:
    """Observed times contribute the density, censored ones the survival function."""
    events = np.array([0.7, 1.9, 3.2, 0.4, 2.5])
    censored = np.array([2.0, 4.1, 1.2])

    def survival(mu: Any, log_sig: Any) -> Any:
        sig = np.exp(log_sig)
        observed = np.sum(st.lognorm.logpdf(events, sig, scale=np.exp(mu)))
        return observed + np.sum(norm.logsf((np.log(censored) - mu) / sig))

    check_grads(survival, 0.4, -0.3)
    check_grads(lambda m: np.sum(st.expon.logpdf(events, scale=np.exp(m))), 0.2)


def test_heavy_tailed_regressions() -> None:
    def laplace_fit(w: Any, log_b: Any) -> Any:
        return np.sum(st.laplace.logpdf(Y, X @ w, np.exp(log_b)))

    def cauchy_fit(w: Any, log_b: Any) -> Any:
        return np.sum(st.cauchy.logpdf(Y - X @ w, scale=np.exp(log_b)))

    w = np.array([0.4, -0.9, 1.8])
    check_grads(laplace_fit, w, 0.1)
    check_grads(cauchy_fit, w, 0.1)
    r = Y - X @ w
    both_modes(laplace_fit, (w, 0.1), 0, X.T @ np.sign(r) / np.exp(0.1))


def test_a_mixture_of_two_gaussians() -> None:
    def mixture(m: Any, log_s: Any, logit_p: Any, x: Any) -> Any:
        p = scipy.special.expit(logit_p)
        s = np.exp(log_s)
        dens = p * norm.pdf(x, m[0], s[0]) + (1.0 - p) * norm.pdf(x, m[1], s[1])
        return np.sum(np.log(dens))

    x = np.concatenate([RNG.normal(-1.0, 0.5, 8), RNG.normal(2.0, 1.0, 8)])
    check_grads(mixture, np.array([-0.8, 1.5]), np.array([-0.5, 0.1]), 0.2, x, wrt=(0, 1, 2))


def test_gamma_and_beta_in_all_their_parameters() -> None:
    def f(a: Any, b: Any, loc: Any, scale: Any, x: Any) -> Any:
        u = x / (np.max(x) + 1.0)
        g = st.gamma.logpdf(x, a, loc=loc, scale=scale) + st.gamma.pdf(x, a, loc, scale)
        return np.sum(g) + np.sum(st.beta.logpdf(u, a, b) * st.beta.pdf(u, a, b, scale=1.2))

    x = np.array([0.5, 1.2, 2.5, 4.0])
    check_grads(f, 2.2, 1.6, -0.3, 1.4, x)


def test_poisson_glm_log_likelihood_has_the_analytic_gradient() -> None:
    counts = np.array([0, 2, 1, 5, 3, 0, 7, 1, 2, 4, 1, 0])

    def glm(beta: Any) -> Any:
        rate = np.exp(X @ beta)
        return np.sum(poisson.logpmf(counts, rate))

    beta = np.array([0.1, -0.2, 0.3])
    expected = X.T @ (counts - np.exp(X @ beta))
    both_modes(glm, (beta,), 0, expected)
    check_grads(lambda b: np.sum(st.poisson.pmf(counts, np.exp(X @ b))), beta)


def test_a_dirichlet_multinomial_prior() -> None:
    counts = np.array([3.0, 0.0, 5.0, 2.0])

    def posterior(theta: Any, log_alpha: Any) -> Any:
        p = softmax(theta)
        prior = dirichlet.logpdf(p, np.exp(log_alpha))
        return prior + np.sum(counts * np.log(p))

    theta = np.array([0.1, -0.4, 0.6, 0.0])
    log_alpha = np.array([0.2, 0.5, -0.3, 0.1])
    check_grads(posterior, theta, log_alpha)
    alpha = np.exp(log_alpha)
    # the analytic gradient in theta: (alpha - 1 + counts) - p * sum(alpha - 1 + counts)
    p = softmax(theta)
    both_modes(
        posterior, (theta, log_alpha), 0, alpha - 1 + counts - p * np.sum(alpha - 1 + counts)
    )

    def k_minus_one(theta: Any, alpha: Any) -> Any:  # the last component left out
        return scipy.stats.dirichlet.pdf(softmax(theta)[:3], alpha)

    check_grads(k_minus_one, theta, alpha)


# -- where the value is -inf or nan; what stays refused ----------------------------------------


def test_outside_the_support_the_derivative_is_nan_never_a_wrong_number() -> None:
    def logp(x: Any, a: Any) -> Any:
        return st.gamma.logpdf(x, a)

    def dens(x: Any, a: Any) -> Any:
        return st.gamma.pdf(x, a)

    x = np.array([-1.0, 0.5, 2.0])
    with np.errstate(invalid="ignore", divide="ignore"):
        out, tangent = adgen.jvp(logp, (x, 2.0), (np.ones(3), 1.0))
        assert out[0] == -np.inf and np.isnan(tangent[0]) and np.all(np.isfinite(tangent[1:]))
        gx, ga = adgen.grad(lambda x, a: np.sum(logp(x, a)), wrt=(0, 1))(x, 2.0)
        assert np.isnan(gx[0]) and np.isnan(ga)
        gx = adgen.grad(lambda x, a: np.sum(dens(x, a)))(x, 2.0)
        assert gx[0] == 0.0 and np.all(np.isfinite(gx))
        bad = adgen.grad(lambda m: np.sum(norm.logpdf(x, m, -1.0)))(0.0)  # scale < 0: nan
        assert np.isnan(bad)


def edge_masked(x: Any) -> Any:
    return np.sum(np.array([0.0, 1.0]) * st.gamma.logpdf(x, 1.0))


def test_at_the_edge_of_the_support_a_zero_seed_contributes_zero() -> None:
    """gamma(1) at x == 0 is finite and its partial is not (0 / 0): the entry the result
    does not depend on gets exactly 0, in both modes and for Python numbers too."""
    x = np.array([0.0, 2.0])
    with np.errstate(invalid="ignore", divide="ignore"):
        assert adgen.grad(edge_masked)(x).tolist() == [0.0, -1.0]
        _, tangent = adgen.jvp(edge_masked, (x,), (np.array([0.0, 1.0]),))
        assert tangent == -1.0
        value, tangent = adgen.jvp(lambda m: poisson.logpmf(0, m), (0.0,), (1.0,))
        assert (value, tangent) == (0.0, -1.0)  # d/dmu (-mu) at mu == 0, k == 0


def test_differentiated_counts_are_refused() -> None:
    def f(k: Any, mu: Any) -> Any:
        return np.sum(poisson.logpmf(k, mu))

    with pytest.raises(NonDifferentiableError, match="argument `k`"):
        adgen.grad(f, wrt=0)(np.array([1.0, 2.0]), 2.0)


def test_a_distribution_frozen_inside_the_function() -> None:
    # d = norm(mu, s) then d.logpdf(x): the distribution's method given the parameters
    # after the data (it was refused: "a frozen distribution")
    def inline(mu: Any, x: Any) -> Any:
        return np.sum(norm(mu, 1.5).logpdf(x))

    def named(mu: Any, x: Any) -> Any:
        d = norm(loc=mu, scale=np.exp(mu))
        return np.sum(d.logpdf(x) + d.cdf(x))

    def data(mu: Any, x: Any) -> Any:
        d = norm(0.0, 1.0)
        return np.sum(d.logpdf(x - mu))

    def helper_takes_it(dist: Any, x: Any) -> Any:
        return np.sum(dist.logpdf(x))

    def passed(mu: Any, x: Any) -> Any:
        return helper_takes_it(st.t(4.0, mu, 2.0), x) + helper_takes_it(st.norm(mu), x * x)

    def per_step(mu: Any, x: Any) -> Any:
        total = 0.0
        for i in range(3):
            step = st.norm(mu * i, 1.0 + i)
            total = total + np.sum(step.logpdf(x))
        return total

    def joint(mu: Any, x: Any) -> Any:
        cov = np.array([[1.0, 0.2, 0.0], [0.2, 1.5, 0.1], [0.0, 0.1, 0.8]])
        return multivariate_normal(mu * np.ones(3), cov).logpdf(x)

    mu, x = 0.4, np.array([0.3, -1.2, 0.9])
    for f in (inline, named, data, passed, per_step, joint):
        check_grads(f, mu, x)
    # inline is scipy.stats.norm.logpdf(x, mu, 1.5): d/dmu = sum(x - mu) / 1.5^2
    np.testing.assert_allclose(adgen.grad(inline)(mu, x), np.sum(x - mu) / 2.25, rtol=1e-12)
    np.testing.assert_allclose(adgen.hessian(named)(mu, x), _second(named, mu, x), rtol=1e-5)


def _second(f: Any, mu: float, x: Any) -> float:
    g = adgen.grad(f)
    return float((g(mu + 1e-5, x) - g(mu - 1e-5, x)) / 2e-5)


def test_a_method_of_a_frozen_distribution_without_a_rule_is_refused() -> None:
    def draws(mu: Any) -> Any:
        return np.sum(norm(mu, 1.0).rvs(size=3, random_state=0))

    with pytest.raises(NoRuleError) as info:
        adgen.grad(draws)(0.5)
    assert "frozen distribution" in info.value.message


def _singular_pdf(x: Any, m: Any, cov: Any, log: bool) -> Any:
    fn = multivariate_normal.logpdf if log else multivariate_normal.pdf
    return fn(x, m, cov, allow_singular=True)


def _default_pdf(x: Any, m: Any, cov: Any, log: bool) -> Any:
    fn = multivariate_normal.logpdf if log else multivariate_normal.pdf
    return fn(x, m, cov)


def _one(f: Any, args: tuple[Any, ...], argnum: int) -> Any:
    """``f`` as a function of its argument ``argnum`` alone."""
    return lambda v: f(*args[:argnum], v, *args[argnum + 1 :])


@pytest.mark.parametrize("log", [False, True], ids=["pdf", "logpdf"])
def test_allow_singular_differentiates_along_the_support(log: bool) -> None:
    """``allow_singular=True``: at a nonsingular ``cov`` the derivatives are the default's;
    at a singular one the density lives on ``mean`` + range(cov), and the derivatives w.r.t.
    ``x`` and ``mean`` are the ones along it (SciPy's pseudo-inverse); w.r.t. a singular
    ``cov`` they are nan, never a number."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 3))
    args = (rng.normal(size=3), rng.normal(size=3), a @ a.T + np.eye(3), log)
    for argnum in (0, 1, 2):
        got = adgen.grad(_singular_pdf, argnum)(*args)
        np.testing.assert_allclose(got, adgen.grad(_default_pdf, argnum)(*args), rtol=1e-12)
        want = differences(_one(_singular_pdf, args, argnum), args[argnum])
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    singular = np.diag([2.0, 0.5, 0.0])
    on = (np.array([0.3, -0.4, 0.0]), np.zeros(3), singular, log)  # x - mean in range(cov)
    for argnum in (0, 1):
        got = adgen.grad(_singular_pdf, argnum)(*on)
        along = differences(lambda v: _one(_singular_pdf, on, argnum)(np.r_[v, on[argnum][2]]),
                            on[argnum][:2])  # fmt: skip
        np.testing.assert_allclose(got[:2], along, rtol=1e-6)
        assert got[2] == 0.0  # (the support's own directions only)
    at_cov = adgen.grad(_singular_pdf, 2)(*on)  # (SciPy reads the lower triangle only)
    assert np.all(np.isnan(at_cov[np.tril_indices(3)])) and np.all(np.triu(at_cov, 1) == 0.0)
    off = (np.array([0.3, -0.4, 0.1]), *on[1:])  # off the support: density 0, log-density -inf
    got = adgen.grad(_singular_pdf, 0)(*off)
    assert np.all(np.isnan(got)) if log else np.all(got == 0.0)


def test_entropy_of_a_multivariate_normal() -> None:
    """``entropy(mean, cov)`` = (d (1 + log 2 pi) + log det S) / 2: w.r.t. cov S^-1 / 2 (on the
    lower triangle SciPy reads), w.r.t. mean 0."""
    rng = np.random.default_rng(4)
    a = rng.normal(size=(3, 3))
    m, cov = rng.normal(size=3), a @ a.T + np.eye(3)
    entropy = multivariate_normal.entropy
    got_m, got_c = adgen.grad(lambda m, c: entropy(m, c), (0, 1))(m, cov)
    np.testing.assert_array_equal(got_m, 0.0)
    want = differences(lambda c: entropy(m, c), cov)
    np.testing.assert_allclose(got_c, want, rtol=1e-6, atol=1e-9)
    check_grads(lambda c: entropy(m, c), cov)
    check_grads(lambda m, d: entropy(m, d), m, np.array([0.5, 2.0, 1.5]))
    check_grads(lambda d: entropy(cov=d), 1.7)


def _run(code: str) -> list[str]:
    """The words ``code`` prints, run by a fresh Python that imports this adgen."""
    src = Path(adgen.__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_scipy_stats_rules_load_lazily() -> None:
    out = _run(
        "import sys, adgen\n"
        "from adgen.rules import loader, lookup\n"
        "print('scipy' in sys.modules, loader.loaded('stats'))\n"
        "import scipy.stats\n"
        "print(lookup(scipy.stats.norm.logpdf).name, loader.loaded('stats'))\n"
    )
    assert out == ["False", "False", "scipy.stats.norm.logpdf", "True"]


def test_adgen_works_where_scipy_is_not_installed(tmp_path: Path) -> None:
    (tmp_path / "nosci.py").write_text(
        "import numpy as np\n\ndef f(x):\n    return np.sum(np.tanh(x))\n"
    )
    out = _run(
        "import sys\n"
        "sys.modules['scipy'] = None  # `import scipy` fails\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import numpy as np, adgen, nosci\n"
        "from adgen.rules import loader\n"
        "loader.load_all()\n"
        "print(loader.loaded('stats'), any(n.startswith('scipy') for n in adgen.supported()))\n"
        "print(adgen.grad(nosci.f)(np.zeros(2)).tolist())\n"
    )
    assert out == ["True", "False", "[1.0,", "1.0]"]


# -- random draws inside the function: constants of the derivative ---------------------------


def jitter_of(rs: Any, n: int) -> Any:
    return rs.rand(n)


def noisy_objective(w: Any) -> Any:
    rs = np.random.RandomState(0)
    noise = rs.randn(12, 3)
    jitter = jitter_of(rs, 12)  # a helper of the program draws from it too
    pred = (X + 0.1 * noise) @ w
    return np.sum((pred - Y) ** 2 * (1.0 + jitter))


def test_a_noisy_objective_with_random_state_draws() -> None:
    w = np.array([0.3, -0.7, 1.2])
    rs = np.random.RandomState(0)
    xn = X + 0.1 * rs.randn(12, 3)
    weights = 1.0 + rs.rand(12)
    expected = 2.0 * xn.T @ (weights * (xn @ w - Y))
    both_modes(noisy_objective, (w,), 0, expected)
    np.testing.assert_allclose(
        adgen.hessian(noisy_objective)(w), 2.0 * xn.T @ (weights[:, None] * xn)
    )


def test_generator_draws_and_a_constant_shuffle() -> None:
    def minibatch_loss(w: Any) -> Any:
        rng = np.random.default_rng(3)
        order = np.arange(12)
        rng.shuffle(order)
        batch = order[:6]
        e = rng.standard_exponential(6)
        return np.sum((X[batch] @ w - Y[batch]) ** 2 * e)

    w = np.array([0.3, -0.7, 1.2])
    rng = np.random.default_rng(3)
    order = np.arange(12)
    rng.shuffle(order)
    b = order[:6]
    e = rng.standard_exponential(6)
    expected = 2.0 * X[b].T @ (e * (X[b] @ w - Y[b]))
    both_modes(minibatch_loss, (w,), 0, expected)

    # a generator passed in draws as written (an argument that is no data: an object);
    # methods of a value computed by differentiated operations stay refused
    def given(w: Any, rs: Any) -> Any:
        return np.sum(w * rs.randn(3))

    def computed(w: Any) -> Any:
        y = w * 2.0
        return y.frobnicate()

    drawn = np.random.RandomState(0).randn(3)
    np.testing.assert_allclose(adgen.grad(given)(np.ones(3), np.random.RandomState(0)), drawn)
    with pytest.raises(UnsupportedSyntaxError, match="method `.frobnicate\\(\\)`"):
        adgen.grad(computed)(np.ones(3))


def test_random_methods_given_differentiated_values_are_refused() -> None:
    def shuffled(w: Any) -> Any:
        rs = np.random.RandomState(0)
        y = w * 2.0
        rs.shuffle(y)
        return np.sum(y * np.arange(3.0))

    def drawn(w: Any) -> Any:
        rs = np.random.RandomState(0)
        return np.sum(rs.exponential(w))

    for f in (shuffled, drawn):
        with pytest.raises(NoRuleError, match="method `.(shuffle|exponential)\\(\\)` of `rs`"):
            adgen.grad(f)(np.ones(3))


def test_a_random_write_into_what_reverse_mode_reads_again_is_refused() -> None:
    def f(w: Any) -> Any:
        rs = np.random.RandomState(0)
        data = np.arange(3.0)
        first = np.sum(w * data) ** 2  # its adjoint reads data again
        rs.shuffle(data)
        return first + np.sum(w * data)

    with pytest.raises(NonDifferentiableError, match="may change `data` in place"):
        adgen.grad(f)(np.ones(3))
    out, tangent = adgen.jvp(f, (np.ones(3),), (np.ones(3),))  # forward mode reads as it runs
    assert out == pytest.approx(f(np.ones(3)))
    assert tangent == pytest.approx(2 * 3.0 * 3.0 + 3.0)


def exponweib_loglik(s: Any, x: Any) -> Any:
    return np.sum(st.exponweib.logpdf(x, 1.0, 1.0, scale=s))  # (shapes 1: an exponential)


def test_another_distribution_is_refused_by_name_and_takes_a_users_rule() -> None:
    from adgen.rules import registrations

    x = np.array([0.5, 1.0, 2.0])
    with pytest.raises(NoRuleError, match="no derivative rule for `scipy.stats.exponweib.logpdf`"):
        adgen.grad(exponweib_loglik)(1.5, x)
    with registrations():

        @adgen.rule(st.exponweib.logpdf, elementwise=True)
        def exponweib_logpdf(x, a, c, scale=1.0):  # type: ignore[no-untyped-def]
            def jvp_x(d):  # type: ignore[no-untyped-def]
                return -d / scale

            def vjp_x(g):  # type: ignore[no-untyped-def]
                return -g / scale

            def jvp_scale(d):  # type: ignore[no-untyped-def]
                return d * (x / scale - 1.0) / scale

            def vjp_scale(g):  # type: ignore[no-untyped-def]
                return g * (x / scale - 1.0) / scale

        both_modes(exponweib_loglik, (1.5, x), 0, np.sum((x / 1.5 - 1.0) / 1.5))
    with pytest.raises(NoRuleError):
        adgen.grad(exponweib_loglik)(1.5, x)


def test_a_draw_into_an_array_the_program_reads_is_never_hidden() -> None:
    """``out=``: the draw writes into ``buf``, which a differentiated operation read before.
    Forward mode reads values as the program does; reverse mode refuses (its adjoint sweep
    would read ``buf`` again), and so do the rules of ``rng.standard_normal`` and
    ``rng.random``, whose calls have no effect in generated code."""

    def positional(w: Any) -> Any:
        rng = np.random.default_rng(0)
        buf = np.ones(3)
        first = np.sum(w * buf) ** 2
        rng.standard_exponential(3, np.float64, "zig", buf)
        return first + np.sum(w * buf)

    def keyword(w: Any) -> Any:
        rng = np.random.default_rng(0)
        buf = np.ones(3)
        first = np.sum(w * buf) ** 2
        rng.standard_exponential(out=buf)
        return first + np.sum(w * buf)

    w = np.ones(3)
    drawn = np.random.default_rng(0).standard_exponential(3)
    for f in (positional, keyword):
        with pytest.raises(NonDifferentiableError, match="may change `buf` in place"):
            adgen.grad(f)(w)
        tangent = np.array([0.3, -0.2, 0.5])
        out, out_dot = adgen.jvp(f, (w,), (tangent,))
        assert out == pytest.approx(f(w))
        assert out_dot == pytest.approx(2 * 3.0 * np.sum(tangent) + np.sum(drawn * tangent))

    def ruled(w: Any) -> Any:
        rng = np.random.default_rng(0)
        buf = np.ones(3)
        rng.standard_normal(out=buf)
        return np.sum(w * buf)

    with pytest.raises(UnsupportedSyntaxError, match="with `out=`"):
        adgen.grad(ruled)(w)


PRIOR = st.norm(0.5, 2.0)
STUDENT = st.t(4.0, loc=0.2, scale=1.5)
MVN = st.multivariate_normal(np.array([0.1, -0.2]), np.array([[1.0, 0.3], [0.3, 2.0]]))
DIRICHLET = st.dirichlet(np.array([2.0, 3.0, 1.5]))


def frozen_outside(w, X):
    # distributions frozen once at module level, as scripts often write their priors
    return (
        np.sum(PRIOR.logpdf(w))
        + np.sum(STUDENT.logpdf(X @ w))
        + np.sum(MVN.logpdf(X[:, :2] * w[0]))
        + DIRICHLET.logpdf(np.exp(w[:3]) / np.sum(np.exp(w[:3])))
        + np.sum(PRIOR.logcdf(w) + STUDENT.pdf(w))
    )


def test_methods_of_distributions_frozen_outside_the_function() -> None:
    w = np.array([0.3, -0.4, 0.8])
    X = np.array([[1.0, 0.5, -0.2], [0.3, -1.0, 0.4], [0.2, 0.1, 0.9], [-0.5, 0.7, 0.3]])
    value, g = adgen.value_and_grad(frozen_outside)(w, X)
    np.testing.assert_allclose(value, frozen_outside(w, X), rtol=1e-12)
    check_grads(frozen_outside, w, X, wrt=(0,))
    # PRIOR.logpdf is scipy.stats.norm.logpdf(w, 0.5, 2.0): its gradient is -(w - 0.5) / 4
    np.testing.assert_allclose(
        adgen.grad(lambda v: np.sum(PRIOR.logpdf(v)))(w), -(w - 0.5) / 4.0, rtol=1e-12
    )


FLOODS = np.array([2.1, 3.4, 1.7, 5.2, 2.8, 4.1, 3.0, 2.4])


def gumbel_loglik(params):
    """Annual maxima fitted by a Gumbel distribution (location, log scale)."""
    return np.sum(scipy.stats.gumbel_r.logpdf(FLOODS, params[0], np.exp(params[1])))


def test_gumbel_and_inverse_gaussian_log_likelihoods_against_their_scores():
    """``gumbel_r.logpdf`` (z = (x - m) / s: -z - exp(-z) - log s) has score
    ``sum (1 - exp(-z)) / s`` w.r.t. m and ``sum (z (1 - exp(-z)) - 1)`` w.r.t. log s;
    ``invgauss.logpdf(x, mu)`` has ``sum (x - mu) / mu^3`` w.r.t. mu."""
    p = np.array([2.5, np.log(0.9)])
    s = np.exp(p[1])
    z = (FLOODS - p[0]) / s
    want = np.array([np.sum((1 - np.exp(-z)) / s), np.sum(z * (1 - np.exp(-z)) - 1)])
    np.testing.assert_allclose(adgen.grad(gumbel_loglik)(p), want, rtol=1e-12)
    np.testing.assert_allclose(adgen.jvp(gumbel_loglik, (p,), (np.array([1.0, 0.0]),))[1], want[0])
    mu = 2.7
    score = adgen.grad(lambda m: np.sum(scipy.stats.invgauss.logpdf(FLOODS, m)))(mu)
    assert score == pytest.approx(np.sum(FLOODS - mu) / mu**3, rel=1e-12)


def skew_normal_loglik(params):
    """A skew-normal fit: shape, location and log scale."""
    return np.sum(scipy.stats.skewnorm.logpdf(FLOODS, params[0], params[1], np.exp(params[2])))


def test_skew_normal_and_truncated_normal_log_likelihoods():
    """``skewnorm.logpdf`` (log 2 phi(z) Phi(a z) / s) has score ``sum z r`` w.r.t. the shape
    ``a`` (r = phi(a z) / Phi(a z)); ``truncnorm.logpdf`` w.r.t. its bounds is ``n phi(a) /
    Z`` and ``-n phi(b) / Z`` (Z the mass between them); both against differences too."""
    p = np.array([1.2, 2.0, np.log(1.1)])
    z = (FLOODS - p[1]) / np.exp(p[2])
    r = scipy.stats.norm.pdf(p[0] * z) / scipy.stats.norm.cdf(p[0] * z)
    g = adgen.grad(skew_normal_loglik)(p)
    assert g[0] == pytest.approx(np.sum(z * r), rel=1e-10)
    np.testing.assert_allclose(g, differences(skew_normal_loglik, p), rtol=1e-6)
    data = np.array([-0.4, 0.2, 0.9, -1.1, 0.5])

    def truncated(bounds):
        return np.sum(scipy.stats.truncnorm.logpdf(data, bounds[0], bounds[1]))

    a, b = -1.5, 1.7
    mass = scipy.stats.norm.cdf(b) - scipy.stats.norm.cdf(a)
    want = data.size * np.array([scipy.stats.norm.pdf(a), -scipy.stats.norm.pdf(b)]) / mass
    np.testing.assert_allclose(adgen.grad(truncated)(np.array([a, b])), want, rtol=1e-12)
