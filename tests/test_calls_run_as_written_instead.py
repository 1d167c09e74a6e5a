"""A NumPy or SciPy call in a form its rule does not take (a parameter the rule lacks, more
arguments than it binds) runs as written where no differentiated value reaches it -- the
form library code uses for bookkeeping (``np.sum(weights, where=valid)``,
``np.atleast_1d(a, b, c)`` of options) -- and is refused by name, with the function it is
in, where one does."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import differences

import adgen
from adgen.errors import AdgenError


def weighted_loss(theta, X, y, w):
    """A weighted least-squares loss normalised by the weight of the valid rows only."""
    valid = np.isfinite(y)
    total = np.sum(w, where=valid)  # (the rule of np.sum has no `where=`: w is data)
    r = np.where(valid, X @ theta - np.nan_to_num(y), 0.0)
    return np.sum(w * r * r) / total


def piecewise_energy(x, breakpoint, n):
    """Options made arrays together, as SciPy's helpers do (`np.atleast_1d(a, b, c)`)."""
    lo, bp, hi = np.atleast_1d(0, breakpoint, n)
    left = x[lo[0] : bp[0]]
    right = x[bp[0] : hi[0]]
    return np.sum(left**2) + 3.0 * np.sum(np.sin(right))


RNG = np.random.default_rng(11)
X = RNG.normal(size=(12, 3))
Y = RNG.normal(size=12)
Y[[2, 7]] = np.nan
W = RNG.uniform(0.5, 2.0, size=12)


def test_an_inactive_call_in_a_form_the_rule_does_not_take_runs_as_written():
    theta = RNG.normal(size=3)

    def f(t):
        return weighted_loss(t, X, Y, W)

    expected = differences(f, theta)
    np.testing.assert_allclose(adgen.grad(f)(theta), expected, rtol=1e-7, atol=1e-9)
    _, tangent = adgen.jvp(f, (theta,), (np.ones(3),))
    np.testing.assert_allclose(tangent, expected.sum(), rtol=1e-7)
    assert f(theta) == pytest.approx(adgen.value_and_grad(f)(theta)[0], rel=1e-14)


def test_several_options_made_arrays_at_once_run_as_written():
    x = np.linspace(0.2, 1.4, 9)

    def f(v):
        return piecewise_energy(v, 4, 9)

    np.testing.assert_allclose(adgen.grad(f)(x), differences(f, x), rtol=1e-7, atol=1e-9)
    h = adgen.hessian(f)(x)
    np.testing.assert_allclose(np.diag(h)[:4], 2.0, rtol=1e-12)
    np.testing.assert_allclose(np.diag(h)[4:], -3.0 * np.sin(x[4:]), rtol=1e-12)


def helper_sum(v):
    return np.sum(v**2, where=v > 0.5)


def loss_through_helper(v):
    return helper_sum(v) + 1.0


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_differentiated_value_in_that_form_is_refused_naming_the_functions(mode):
    x = np.linspace(0.1, 1.0, 4)
    with pytest.raises(AdgenError) as info:
        if mode == "grad":
            adgen.grad(loss_through_helper)(x)
        else:
            adgen.jvp(loss_through_helper, (x,), (x,))
    message = str(info.value)
    assert "where=" in message
    assert "in helper_sum (called from loss_through_helper)" in message
    assert "test_calls_run_as_written_instead.py:" in message
