"""Programs in the styles that call ``scipy.linalg.solve_banded`` and the Poisson
distribution functions (issue 35: refusals left on autograd's grid): an implicit
heat-equation step solved as a tridiagonal system, and a right-censored Poisson regression
(``logsf`` for the censored counts, ``logcdf`` for the left-censored). Each gradient is
checked against central differences, in both modes, and the Hessian against differences of
the gradient."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import differences

import adgen

scipy = pytest.importorskip("scipy")
from scipy import linalg, stats  # noqa: E402

from adgen.rules.scipy_linalg import SUPPORTED  # noqa: E402

BANDED = pytest.mark.skipif(not SUPPORTED, reason="no scipy.linalg rules before SciPy 1.16")


U0 = np.sin(np.linspace(0.0, np.pi, 12))
TARGET = 0.6 * U0


def implicit_heat(kappa):
    """Backward-Euler steps of u_t = (kappa u_x)_x with cell conductivities ``kappa``: each
    step solves (I - dt A) u_new = u, A tridiagonal, in band storage."""
    n, dt = U0.size, 0.05
    k_left = np.concatenate([[kappa[0]], kappa])[:n]
    k_right = np.concatenate([kappa, [kappa[-1]]])[:n]
    ab = np.zeros((3, n))
    ab[0, 1:] = -dt * k_right[:-1]
    ab[1] = 1.0 + dt * (k_left + k_right)
    ab[2, :-1] = -dt * k_left[1:]
    u = U0
    for _ in range(4):
        u = linalg.solve_banded((1, 1), ab, u)
    return np.sum((u - TARGET) ** 2)


COUNTS = np.array([0, 3, 1, 7, 2, 9, 4])
CENSORED = np.array([False, False, True, False, False, True, False])  # counts of at least
X = np.column_stack([np.ones(7), np.linspace(-1.0, 1.0, 7)])


def censored_poisson(beta):
    """Negative log-likelihood: exact counts by ``logpmf``, right-censored ones (at least
    the count seen) by ``logsf`` at count - 1, and a left-censored total by ``logcdf``."""
    mu = np.exp(X @ beta)
    exact = stats.poisson.logpmf(COUNTS, mu)
    at_least = stats.poisson.logsf(COUNTS - 1, mu)
    ll = np.sum(np.where(CENSORED, at_least, exact))
    ll = ll + stats.poisson.logcdf(30, np.sum(mu)) + np.log(stats.poisson.cdf(3, mu[0]))
    return -ll


@pytest.mark.parametrize(
    ("f", "x"),
    [
        pytest.param(implicit_heat, np.linspace(0.5, 1.5, 11), marks=BANDED),
        (censored_poisson, np.array([0.8, 0.6])),
    ],
    ids=["implicit_heat", "censored_poisson"],
)
def test_gradient_both_modes_and_hessian(f, x):
    gradient = adgen.grad(f)(x)
    np.testing.assert_allclose(gradient, differences(f, x), rtol=1e-6, atol=1e-9)
    direction = np.linspace(1.0, -1.0, x.size)
    _, tangent = adgen.jvp(f, (x,), (direction,))
    np.testing.assert_allclose(tangent, gradient @ direction, rtol=1e-9)
    hessian = adgen.hessian(f)(x)
    g = adgen.grad(f)
    expected = np.stack([differences(lambda v, i=i: g(v)[i], x) for i in range(x.size)])
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-7)
