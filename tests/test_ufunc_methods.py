"""Methods of NumPy's ufuncs, read as the NumPy calls they are (issue 35):
``np.subtract.outer(x, y)`` (pairwise differences: kernels, distance matrices),
``np.add.reduce``/``np.multiply.reduce``/``np.maximum.reduce`` (sums, products and maxima
along axis 0 by default), ``np.add.accumulate``/``np.multiply.accumulate`` (running sums and
products). Before, each was refused as "the method `.outer()`"."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from derivative_checks import differences

import adgen

X = np.array([[0.3, -0.2, 0.5, 1.1], [0.9, 0.1, -0.4, 0.6], [-0.5, 0.8, 0.2, -0.3]])


def rbf_kernel_energy(x: Any) -> Any:
    """An RBF kernel of the rows' first coordinates against the second row, weighted."""
    d = np.subtract.outer(x[:, 0], x[1])
    K = np.exp(-0.5 * d**2) + np.multiply.outer(x[:, 1], x[2])
    return np.sum(K * np.add.outer(np.arange(3.0), np.ones(4)))


def survival_curve(x: Any) -> Any:
    """Survival probabilities as running products of one minus hazards (a life table)."""
    hazards = 1.0 / (1.0 + np.exp(-x))
    survival = np.multiply.accumulate(1.0 - hazards, axis=1)
    return np.sum(np.log(survival[:, -1])) + np.sum(np.add.accumulate(x) ** 2)


def column_statistics(x: Any) -> Any:
    """Column sums (axis 0 by default), row products and the largest entry."""
    totals = np.add.reduce(x)
    products = np.multiply.reduce(x + 2.0, axis=1)
    return np.sum(totals**2) + np.sum(np.log(products)) + np.maximum.reduce(x, axis=None)


def relative_powers(x: Any) -> Any:
    return np.sum(np.power.outer(np.abs(x[0]) + 0.5, np.array([1.0, 2.0, 0.5]))) + np.sum(
        np.arctan2.outer(x[1], x[2] + 2.0)
    )


PROGRAMS = [rbf_kernel_energy, survival_curve, column_statistics, relative_powers]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_ufunc_methods_in_both_modes_and_at_second_order(f: Any) -> None:
    want = differences(f, X)
    np.testing.assert_allclose(adgen.grad(f)(X), want, rtol=1e-6, atol=1e-8)
    t = np.cos(np.arange(X.size)).reshape(X.shape)
    value, tangent = adgen.jvp(f, (X,), (t,))
    assert value == pytest.approx(f(X), rel=1e-13)
    assert tangent == pytest.approx(float(np.sum(want * t)), rel=1e-6, abs=1e-8)
    g = adgen.grad(f)
    basis = np.eye(X.size).reshape(X.size, *X.shape)
    H = np.stack([(g(X + 1e-5 * e) - g(X - 1e-5 * e)) / 2e-5 for e in basis])
    np.testing.assert_allclose(
        adgen.hessian(f)(X).reshape(X.size, X.size), H.reshape(X.size, X.size), atol=1e-5
    )


def test_an_option_the_reduction_does_not_take_is_refused_by_its_name() -> None:
    def masked(x: Any) -> Any:
        return np.sum(np.add.reduce(x, where=x > 0))

    with pytest.raises(adgen.AdgenError, match="np.sum with `where=`"):
        adgen.grad(masked)(X)


def test_a_ufunc_method_without_a_form_is_still_refused_by_name() -> None:
    def running_max(x: Any) -> Any:
        return np.sum(np.maximum.accumulate(x, axis=1))

    with pytest.raises(adgen.AdgenError, match=r"`\.accumulate\(\)`"):
        adgen.grad(running_max)(X)
