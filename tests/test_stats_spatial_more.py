"""More of ``scipy.spatial.distance`` and ``scipy.stats`` in differentiated programs (issue
35, items 3 and 5): kernels and losses built on ``cdist``/``pdist`` in the Minkowski, cosine
and other metrics, and likelihoods built on CDFs and the chi-squared law, checked in both
modes against analytic derivatives or central differences; and the refusals, by name, of
what has no rule (a shape parameter of ``t.cdf``, an unsupported metric).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError
from adgen.testing import check_grads

pytest.importorskip("scipy.stats")
import scipy.spatial.distance as ssd  # noqa: E402
import scipy.stats  # noqa: E402
from scipy.stats import chi2, t  # noqa: E402

RNG = np.random.default_rng(35)
XA = RNG.standard_normal((5, 3))
XB = RNG.standard_normal((4, 3))
WEIGHTS = RNG.standard_normal((5, 4))


def both_modes(f: Any, args: tuple[Any, ...], wrt: int, expected: Any) -> None:
    """Reverse mode gives ``expected``; forward mode in a random direction its inner product."""
    np.testing.assert_allclose(adgen.grad(f, wrt=wrt)(*args), expected, rtol=1e-9, atol=1e-12)
    tangent = np.random.default_rng(1).standard_normal(np.shape(args[wrt]))
    tangents: list[Any] = [np.zeros_like(np.asarray(a, float)) for a in args]
    tangents[wrt] = tangent if np.ndim(args[wrt]) else float(tangent)
    out, out_dot = adgen.jvp(f, args, tangents)
    assert out == pytest.approx(f(*args), rel=1e-13)
    assert out_dot == pytest.approx(float(np.sum(expected * tangent)), rel=1e-9, abs=1e-12)


# -- scipy.spatial.distance ----------------------------------------------------------------


def minkowski_kernel(a: Any, b: Any, ell: Any) -> Any:
    k = np.exp(-ssd.cdist(a, b, "minkowski", p=3) / ell)
    return np.sum(WEIGHTS * k)


def test_a_minkowski_kernel_has_the_analytic_gradient() -> None:
    ell = 1.3
    u = XA[:, None, :] - XB[None, :, :]
    d = np.sum(np.abs(u) ** 3, axis=2) ** (1 / 3)
    k = np.exp(-d / ell)
    dd_da = (u * np.abs(u)) / d[:, :, None] ** 2  # |u|^2 sign(u) / d^2
    expected_a = np.sum((WEIGHTS * k * -1 / ell)[:, :, None] * dd_da, axis=1)
    expected_b = -np.sum((WEIGHTS * k * -1 / ell)[:, :, None] * dd_da, axis=0)
    expected_ell = np.sum(WEIGHTS * k * d / ell**2)
    both_modes(minkowski_kernel, (XA, XB, ell), 0, expected_a)
    both_modes(minkowski_kernel, (XA, XB, ell), 1, expected_b)
    both_modes(minkowski_kernel, (XA, XB, ell), 2, expected_ell)
    check_grads(minkowski_kernel, XA, XB, ell)


def cosine_loss(emb: Any, targets: Any) -> Any:
    """Mean cosine distance of each embedding to its own target."""
    d = ssd.cdist(emb, targets, "cosine")
    return np.mean(np.diag(d))


def test_a_cosine_distance_loss_has_the_analytic_gradient() -> None:
    targets = RNG.standard_normal((5, 3))
    na = np.linalg.norm(XA, axis=1, keepdims=True)
    nt = np.linalg.norm(targets, axis=1, keepdims=True)
    c = np.sum(XA * targets, axis=1, keepdims=True) / (na * nt)
    expected = -(targets / (na * nt) - c * XA / na**2) / 5
    both_modes(cosine_loss, (XA, targets), 0, expected)
    check_grads(cosine_loss, XA, targets)


VI = np.array([[2.0, 0.5, 0.0], [0.1, 1.0, 0.2], [0.0, 0.3, 1.5]])


@pytest.mark.parametrize(
    "metric, p",
    [
        ("minkowski", 1.5),
        ("minkowski", 4.0),
        ("cosine", None),
        ("correlation", None),
        ("seuclidean", None),
        ("mahalanobis", None),
        ("chebyshev", None),
        ("canberra", None),
    ],
)
def test_pdist_in_each_new_metric_matches_finite_differences(metric: str, p: Any) -> None:
    weights = np.arange(1.0, 11.0)

    def energy(x: Any) -> Any:
        if metric == "minkowski":
            d = ssd.pdist(x, metric, p=p)
        elif metric == "seuclidean":
            d = ssd.pdist(x, metric, V=np.array([0.5, 2.0, 1.0]))
        elif metric == "mahalanobis":
            d = ssd.pdist(x, metric, VI=VI)
        else:
            d = ssd.pdist(x, metric)
        return np.sum(weights * d**2)

    check_grads(energy, XA)


def test_chebyshev_ties_split_the_derivative_evenly_as_np_max_does() -> None:
    a = np.array([[0.0, 0.0]])
    b = np.array([[1.0, -1.0]])  # |u| = (1, 1): both coordinates are the maximum

    def f(x: Any) -> Any:
        return np.sum(ssd.cdist(x, b, "chebyshev"))

    def g(x: Any) -> Any:
        return np.max(np.abs(x - b))

    np.testing.assert_allclose(adgen.grad(f)(a), adgen.grad(g)(a))
    np.testing.assert_allclose(adgen.grad(f)(a), [[-0.5, 0.5]])


def test_coincident_points_give_a_finite_gradient_where_the_seed_is_zero() -> None:
    x = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 0.5]])

    def f(x: Any) -> Any:
        return ssd.pdist(x, "minkowski", p=3.0)[1]  # the pair (0, 2) only

    grad = adgen.grad(f)(x)
    assert np.all(np.isfinite(grad))
    check_grads(f, x)


V_DATA = np.array([0.5, 1.5, 2.0])
VI_DATA = np.eye(3) + 0.25
METRICS_WITH_A_KINK_AT_ZERO = {
    "euclidean": lambda a, b: ssd.cdist(a, b) if b is not None else ssd.pdist(a),
    "minkowski-3": lambda a, b: (
        ssd.cdist(a, b, "minkowski", p=3.0) if b is not None else ssd.pdist(a, "minkowski", p=3.0)
    ),
    "minkowski-1.5": lambda a, b: (
        ssd.cdist(a, b, "minkowski", p=1.5) if b is not None else ssd.pdist(a, "minkowski", p=1.5)
    ),
    "seuclidean": lambda a, b: (
        ssd.cdist(a, b, "seuclidean", V=V_DATA)
        if b is not None
        else ssd.pdist(a, "seuclidean", V=V_DATA)
    ),
    "mahalanobis": lambda a, b: (
        ssd.cdist(a, b, "mahalanobis", VI=VI_DATA)
        if b is not None
        else ssd.pdist(a, "mahalanobis", VI=VI_DATA)
    ),
}


@pytest.mark.parametrize("metric", sorted(METRICS_WITH_A_KINK_AT_ZERO))
def test_coincident_points_take_the_zero_subgradient_as_np_linalg_norm_does(
    metric: str,
) -> None:
    # two rows equal: their distance (a kink) contributes 0 to both modes' derivatives,
    # np.linalg.norm's convention at a zero norm -- reverse mode gave nan rows before
    X = XA.copy()
    X[1] = X[0]
    T = RNG.standard_normal(X.shape)
    distance = METRICS_WITH_A_KINK_AT_ZERO[metric]

    def condensed(x: Any) -> Any:
        return np.sum(distance(x, None) ** 1.5)

    def paired(x: Any) -> Any:
        return np.sum(distance(x, X[:2] + 0.0))

    for f in (condensed, paired):
        g = adgen.grad(f)(X)
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(adgen.jvp(f, (X,), (T,))[1], np.sum(g * T), rtol=1e-10)
    if metric == "euclidean":  # the same sum written with np.linalg.norm

        def normed(x: Any) -> Any:
            return np.sum(np.linalg.norm(x[:, None, :] - X[None, :2, :], axis=2))

        np.testing.assert_allclose(adgen.grad(paired)(X), adgen.grad(normed)(X), atol=1e-12)
    # away from the kink, unchanged: the pair that coincides moved apart
    Y = X.copy()
    Y[1] += 0.1
    check_grads(condensed, Y)


def test_an_unsupported_metric_is_refused_by_name() -> None:
    def f(x: Any) -> Any:
        return np.sum(ssd.pdist(x, "jensenshannon"))

    with pytest.raises(AdgenError, match="jensenshannon"):
        adgen.grad(f)(np.abs(XA))


def test_a_differentiated_mahalanobis_vi_and_weights_are_refused_by_name() -> None:
    def f(x: Any, vi: Any) -> Any:
        return np.sum(ssd.cdist(x, XB, "mahalanobis", VI=vi))

    with pytest.raises(AdgenError, match="`VI`"):
        adgen.grad(f, wrt=1)(XA, np.eye(3))

    def g(x: Any) -> Any:
        return np.sum(ssd.cdist(x, XB, "minkowski", p=2.0, w=np.ones(3)))

    with pytest.raises(AdgenError, match=r"w="):
        adgen.grad(g)(XA)


# -- scipy.stats -----------------------------------------------------------------------------

Y = RNG.standard_normal(10) * 1.5 + 0.2


def censored_t_loglik(mu: Any, log_s: Any) -> Any:
    """Observations above 2 are censored: their likelihood is the survival probability."""
    s = np.exp(log_s)
    seen = Y[Y <= 2.0]
    cut = Y[Y > 2.0]
    return np.sum(t.logpdf(seen, 4.0, mu, s)) + np.sum(t.logsf(np.full(len(cut), 2.0), 4.0, mu, s))


def interval_t_loglik(mu: Any, s: Any) -> Any:
    """Each value is known only to lie in [y - 0.5, y + 0.5]: log(F(hi) - F(lo))."""
    hi = scipy.stats.t.cdf(Y + 0.5, 3.0, loc=mu, scale=s)
    lo = scipy.stats.t.cdf(Y - 0.5, 3.0, loc=mu, scale=s)
    return np.sum(np.log(hi - lo))


def test_a_student_t_cdf_likelihood_has_the_analytic_gradient() -> None:
    mu, s = 0.3, 1.2
    zh, zl = (Y + 0.5 - mu) / s, (Y - 0.5 - mu) / s
    ph, pl = t.pdf(zh, 3.0) / s, t.pdf(zl, 3.0) / s
    mass = t.cdf(zh, 3.0) - t.cdf(zl, 3.0)
    both_modes(interval_t_loglik, (mu, s), 0, np.sum(-(ph - pl) / mass))
    both_modes(interval_t_loglik, (mu, s), 1, np.sum(-(zh * ph - zl * pl) / mass))
    check_grads(censored_t_loglik, 0.3, 0.1)


def chi2_loglik(x: Any, scale: Any) -> Any:
    return np.sum(chi2.logpdf(x, 3.0, scale=scale))


def test_a_chi2_log_likelihood_w_r_t_x_and_scale() -> None:
    x, scale = np.array([0.5, 1.7, 3.2, 6.0]), 1.4
    y = x / scale
    expected_x = ((1.5 - 1.0) / y - 0.5) / scale
    expected_scale = np.sum(-(1.0 + y * ((1.5 - 1.0) / y - 0.5)) / scale)
    both_modes(chi2_loglik, (x, scale), 0, expected_x)
    both_modes(chi2_loglik, (x, scale), 1, expected_scale)
    check_grads(chi2_loglik, x, scale)


def test_the_chi2_degrees_of_freedom_and_its_cdf() -> None:
    x = np.array([0.5, 1.7, 3.2])

    def f(k: Any) -> Any:
        return np.sum(chi2.logpdf(x, k))

    check_grads(f, 2.5)

    def g(x: Any, s: Any) -> Any:
        return np.sum(chi2.cdf(x, 4.0, scale=s) + chi2.logsf(x, 4.0, 0.1, s))

    check_grads(g, x, 1.3)
    np.testing.assert_allclose(
        adgen.grad(g)(x, 1.3)[0],
        chi2.pdf(0.5, 4.0, scale=1.3)
        + (-chi2.pdf(0.5, 4.0, 0.1, 1.3) / chi2.sf(0.5, 4.0, 0.1, 1.3)),
    )


@pytest.mark.parametrize("dist", ["norm", "logistic", "cauchy", "laplace", "expon", "uniform"])
def test_quantiles_invert_the_cdf_to_first_and_second_order(dist: str) -> None:
    law = getattr(scipy.stats, dist)

    def f(q: Any, m: Any, s: Any) -> Any:
        return np.sum(law.ppf(q, m, s) ** 2 + law.isf(q, m, s))

    q = np.array([0.2, 0.45, 0.7])
    check_grads(f, q, 0.1, 1.3)
    expected = 1.0 / law.pdf(law.ppf(q, 0.1, 1.3), 0.1, 1.3)
    np.testing.assert_allclose(adgen.grad(lambda q: np.sum(law.ppf(q, 0.1, 1.3)))(q), expected)
    h = adgen.hessian(lambda q: np.sum(law.cdf(q, 0.1, 1.3)))(q)
    assert np.all(np.isfinite(h))


def test_a_shape_parameter_of_t_cdf_is_refused_by_name() -> None:
    def f(x: Any, nu: Any) -> Any:
        return np.sum(scipy.stats.t.cdf(x, nu))

    with pytest.raises(AdgenError, match=r"scipy\.stats\.t\.cdf.*`df`"):
        adgen.grad(f, wrt=1)(Y, 3.0)
    # w.r.t. x alone it is fine
    np.testing.assert_allclose(adgen.grad(f)(Y, 3.0), t.pdf(Y, 3.0))


def test_lognorm_cdf_w_r_t_its_shape() -> None:
    x = np.array([0.6, 1.5, 2.4])

    def f(sig: Any, s: Any) -> Any:
        return np.sum(
            scipy.stats.lognorm.logcdf(x, sig, scale=s) * scipy.stats.lognorm.ppf(0.3, sig)
        )

    check_grads(f, 0.8, 1.2)


# -- the standard forms' own methods, as libraries call them -----------------------------------

STANDARD_FORMS = {
    "logistic._cdf": (lambda x: scipy.stats.logistic._cdf(x), scipy.stats.logistic.cdf),
    "logistic._logsf": (lambda x: scipy.stats.logistic._logsf(x), scipy.stats.logistic.logsf),
    "gamma._cdf": (
        lambda x: scipy.stats.gamma._cdf(x, 2.5),
        lambda x: scipy.stats.gamma.cdf(x, 2.5),
    ),
    "gamma._logpdf": (
        lambda x: scipy.stats.gamma._logpdf(x, 2.5),
        lambda x: scipy.stats.gamma.logpdf(x, 2.5),
    ),
    "beta._sf": (
        lambda x: scipy.stats.beta._sf(x, 2.0, 3.0),
        lambda x: scipy.stats.beta.sf(x, 2.0, 3.0),
    ),
    "expon._logsf": (lambda x: scipy.stats.expon._logsf(x), scipy.stats.expon.logsf),
    "laplace._cdf": (lambda x: scipy.stats.laplace._cdf(x), scipy.stats.laplace.cdf),
    "weibull_min._logcdf": (
        lambda x: scipy.stats.weibull_min._logcdf(x, 1.5),
        lambda x: scipy.stats.weibull_min.logcdf(x, 1.5),
    ),
    "cauchy._isf": (lambda x: scipy.stats.cauchy._isf(x), scipy.stats.cauchy.isf),
    "chi2._ppf": (lambda x: scipy.stats.chi2._ppf(x, 3.0), lambda x: scipy.stats.chi2.ppf(x, 3.0)),
    "lognorm._pdf": (
        lambda x: scipy.stats.lognorm._pdf(x, 0.8),
        lambda x: scipy.stats.lognorm.pdf(x, 0.8),
    ),
    "uniform._cdf": (lambda x: scipy.stats.uniform._cdf(x), scipy.stats.uniform.cdf),
}


@pytest.mark.parametrize("form", sorted(STANDARD_FORMS))
def test_a_standard_form_has_its_public_methods_derivative(form: str) -> None:
    # `scipy.stats.logistic._cdf(x)` (statsmodels' links, SciPy's own code): loc 0, scale
    # 1, no argument checks -- the derivative of the public method at those, both modes
    own, public = STANDARD_FORMS[form]
    point = np.array([0.15, 0.35, 0.6, 0.8])  # (inside every support; q of ppf/isf)

    def f(x: Any) -> Any:
        return np.sum(np.sin(own(x)))

    def g(x: Any) -> Any:
        return np.sum(np.sin(public(x)))

    np.testing.assert_allclose(f(point), g(point), rtol=1e-12)
    np.testing.assert_allclose(adgen.grad(f)(point), adgen.grad(g)(point), rtol=1e-10)
    check_grads(f, point)
