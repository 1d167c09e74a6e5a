"""Robust location and scale estimators as statsmodels writes them (issue 34): a centre
passed as a function and applied with ``np.apply_over_axes`` (read as the Python NumPy
writes it), and an iteration that returns from inside its loop once converged and raises
after it. Checked against finite differences and against the estimators' own values."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import differences

import adgen

RNG = np.random.default_rng(21)


def centred_abs(x, center=np.median):
    c = np.apply_over_axes(center, x, 0)
    return np.sum(np.abs(x - c))


def summed_over_two_axes(x):
    return np.sum(np.apply_over_axes(np.sum, x * x, [0, 2]) ** 2)


def mean_centred(x, axes=1):
    return np.sum((x - np.apply_over_axes(np.mean, x, axes)) ** 3)


@pytest.mark.parametrize(
    "f, shape",
    [(centred_abs, (5, 3)), (summed_over_two_axes, (2, 3, 2)), (mean_centred, (3, 4))],
    ids=["median_centre", "two_axes", "mean_centre"],
)
def test_apply_over_axes_with_a_function_passed(f, shape):
    x = RNG.normal(size=shape)
    g = adgen.grad(f)(x)
    np.testing.assert_allclose(g, differences(f, x), rtol=1e-6, atol=1e-8)
    v = RNG.normal(size=shape)
    _, t = adgen.jvp(f, (x,), (v,))
    np.testing.assert_allclose(t, np.sum(g * v), rtol=1e-10)


def test_statsmodels_median_absolute_deviation_as_installed():
    scale = pytest.importorskip("statsmodels.robust.scale")
    x = RNG.normal(size=15)
    g = adgen.grad(scale.mad)(x)
    np.testing.assert_allclose(g, differences(scale.mad, x), rtol=1e-6, atol=1e-9)
    assert np.isclose(adgen.value_and_grad(scale.mad)(x)[0], scale.mad(x), rtol=1e-14)


def test_statsmodels_huber_location_and_scale_iterated_to_convergence():
    # Huber's proposal 2: iterates location and scale, returns from inside the loop once
    # both settle, raises after the loop otherwise; its docstring continues a line at
    # column 0 (the method's source is read as it stands)
    scale = pytest.importorskip("statsmodels.robust.scale")
    huber = scale.Huber(maxiter=60, tol=1e-13)
    x = RNG.normal(size=15)

    def location_plus_scale(x):
        mu, s = huber(x)
        return mu + 2.0 * s

    g = adgen.grad(location_plus_scale)(x)
    np.testing.assert_allclose(g, differences(location_plus_scale, x), rtol=1e-5, atol=1e-8)
    value = adgen.value_and_grad(location_plus_scale)(x)[0]
    assert np.isclose(value, location_plus_scale(x), rtol=1e-13)


class _Estimator:
    def estimate(self, x):
        """A docstring whose line continues at column 0, as statsmodels' do: \
the method's text is not dedented by it"""
        y = x * 2.0
        return np.sum(y * y)


def test_a_method_whose_docstring_has_a_line_at_column_0():
    est = _Estimator()
    x = RNG.normal(size=3)
    np.testing.assert_allclose(adgen.grad(est.estimate)(x), 8.0 * x, rtol=1e-14)

    def uses_the_method(x):
        y = np.sum(est.estimate(x) * x)
        return y

    np.testing.assert_allclose(
        adgen.grad(uses_the_method)(x), differences(uses_the_method, x), rtol=1e-6, atol=1e-8
    )
