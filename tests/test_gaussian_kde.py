"""A ``scipy.stats.gaussian_kde`` made outside the function, its log-density and density
differentiated w.r.t. the points (issue 34): the estimate is a constant of the derivative,
the values are SciPy's own, the gradient and Hessian adgen's closed forms -- checked
against finite differences, in both modes and at second order."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import check, differences

import adgen
from adgen.errors import AdgenError

stats = pytest.importorskip("scipy.stats")

RNG = np.random.default_rng(31)
KDE1 = stats.gaussian_kde(RNG.normal(size=40))
KDE2 = stats.gaussian_kde(RNG.normal(size=(2, 30)) + np.array([[0.0], [1.0]]))


def log_density_1d(z):
    return np.sum(KDE1.logpdf(z))


def density_1d(z):
    return np.sum(KDE1.pdf(z) * z)


def log_density_2d(z):
    return np.sum(KDE2.logpdf(z) ** 2)


def evaluated_2d(z):
    return np.sum(np.log(KDE2.evaluate(z)))


@pytest.mark.parametrize(
    "f, shape",
    [(log_density_1d, (4,)), (density_1d, (3,)), (log_density_2d, (2, 3)), (evaluated_2d, (2,))],
    ids=["logpdf_1d", "pdf_1d", "logpdf_2d", "evaluate_one_point_2d"],
)
def test_kde_density_gradients_against_differences(f, shape):
    check(f, RNG.normal(size=shape))
    z = RNG.normal(size=shape)
    assert np.isclose(adgen.value_and_grad(f)(z)[0], f(z), rtol=1e-14)


@pytest.mark.parametrize("f, shape", [(log_density_1d, (3,)), (log_density_2d, (2, 2))])
def test_kde_log_density_hessians_against_differences_of_the_gradient(f, shape):
    z = RNG.normal(size=shape)
    h = adgen.hessian(f)(z)
    g = adgen.grad(f)
    fd = np.stack(
        [
            differences(lambda v, e=e: np.sum(g(v) * e), z)
            for e in np.eye(z.size).reshape(-1, *shape)
        ]
    )
    np.testing.assert_allclose(
        h.reshape(z.size, z.size), fd.reshape(z.size, z.size), rtol=1e-5, atol=1e-7
    )


def test_a_third_derivative_is_refused_by_name():
    def third(z):
        return np.sum(adgen.hessian(log_density_1d)(z))

    with pytest.raises(AdgenError, match="third derivative of a gaussian_kde"):
        adgen.grad(third)(RNG.normal(size=2))
