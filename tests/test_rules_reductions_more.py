"""Conventions of the reductions, scans and statistics rules, with exact values.

* ties (``np.median``, ``np.quantile``, ``np.percentile``, ``np.sort``): tied entries share
  the derivative of their run of order statistics evenly; ``np.ptp``, ``np.nanmax`` and
  ``np.nanmin`` split it evenly between tied extrema like ``np.max``;
* ``np.std`` / ``np.nanstd`` at zero variance: derivative 0 (the two-entry ``std`` is
  ``abs``, whose derivative at 0 is 0);
* ``np.cumprod`` with zeros: exact (no division by the input);
* NaN-ignoring functions (``np.nansum`` ...): NaN entries get a zero derivative.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads

NAN = np.nan


def total_cumprod(x):
    return np.sum(np.cumprod(x))


def total_cumprod_rows(x):
    return np.sum(np.cumprod(x, axis=1) * np.array([1.0, 2.0, 3.0]))


def total_nancumprod(x):
    return np.sum(np.nancumprod(x))


def total_nancumsum(x):
    return np.sum(np.nancumsum(x))


def std_all(x):
    return np.std(x)


def std_rows(x):
    return np.sum(np.std(x, axis=1, ddof=1))


def nanstd_all(x):
    return np.nanstd(x)


def median_all(x):
    return np.median(x)


def quantile_q(x, q):
    return np.quantile(x, q)


def sort_weighted(x):
    return np.sum(np.sort(x) * np.array([1.0, 2.0, 4.0]))


def ptp_all(x):
    return np.ptp(x)


def nanmax_all(x):
    return np.nanmax(x)


def nanmin_all(x):
    return np.nanmin(x)


def nansum_all(x):
    return np.nansum(x)


def nanmean_all(x):
    return np.nanmean(x)


def nanvar_all(x):
    return np.nanvar(x)


def nanprod_all(x):
    return np.nanprod(x)


def nanmedian_all(x):
    return np.nanmedian(x)


def both_modes(f: Any, x: np.ndarray, expected: Any) -> None:
    """The gradient by reverse mode, and each of its entries by forward mode, exactly."""
    np.testing.assert_array_equal(adgen.grad(f)(x), expected)
    for i in range(x.size):
        t = np.zeros_like(x)
        t.flat[i] = 1.0
        assert adgen.jvp(f, (x,), (t,))[1] == np.asarray(expected).flat[i]


def test_cumprod_is_exact_with_zeros() -> None:
    both_modes(total_cumprod, np.array([2.0, 0.0, 3.0, 0.5]), [1.0, 11.0, 0.0, 0.0])
    both_modes(total_cumprod, np.array([0.0, 2.0, 0.0]), [3.0, 0.0, 0.0])
    x = np.array([[0.0, 2.0, 5.0], [3.0, 0.0, 0.0]])
    # row 0: d/dx00 = 1 + 2*x01 + 3*x01*x02 = 35; the others are multiplied by x00 = 0
    # row 1: d/dx10 = 1; d/dx11 = 2*x10 + 3*x10*x12 = 6; d/dx12 = 3*x10*x11 = 0
    both_modes(total_cumprod_rows, x, [[35.0, 0.0, 0.0], [1.0, 6.0, 0.0]])


def test_std_at_zero_variance_is_zero() -> None:
    both_modes(std_all, np.array([0.7, 0.7, 0.7]), [0.0, 0.0, 0.0])
    both_modes(nanstd_all, np.array([0.5, NAN, 0.5]), [0.0, 0.0, 0.0])
    # one constant row, one not: only the constant row's derivative is 0
    g = adgen.grad(std_rows)(np.array([[2.0, 2.0], [1.0, 3.0]]))
    np.testing.assert_allclose(g, [[0.0, 0.0], [-(0.5**0.5), 0.5**0.5]])


def test_order_statistics_share_ties_evenly() -> None:
    both_modes(median_all, np.array([1.0, 2.0, 2.0]), [0.0, 0.5, 0.5])
    both_modes(median_all, np.array([3.0, 1.0, 2.0, 2.0]), [0.0, 0.0, 0.5, 0.5])
    np.testing.assert_array_equal(
        adgen.grad(quantile_q)(np.array([1.0, 1.0, 3.0]), 0.25), [0.5, 0.5, 0.0]
    )
    np.testing.assert_array_equal(
        adgen.grad(quantile_q)(np.array([1.0, 1.0, 3.0]), 0.75), [0.25, 0.25, 0.5]
    )
    # sort: the tied entries 2.0 take the sorted slots weighted 2 and 4: each gets 3
    both_modes(sort_weighted, np.array([2.0, 1.0, 2.0]), [3.0, 1.0, 3.0])


def test_ptp_and_nan_extrema_split_ties() -> None:
    both_modes(ptp_all, np.array([1.0, 3.0, 3.0, 0.0]), [0.0, 0.5, 0.5, -1.0])
    both_modes(ptp_all, np.array([2.0, 2.0]), [0.0, 0.0])
    both_modes(nanmax_all, np.array([3.0, NAN, 3.0, 1.0]), [0.5, 0.0, 0.5, 0.0])
    both_modes(nanmin_all, np.array([3.0, NAN, 1.0]), [0.0, 0.0, 1.0])


@pytest.mark.parametrize(
    "f, x, expected",
    [
        (nansum_all, [1.0, NAN, 3.0], [1.0, 0.0, 1.0]),
        (nanmean_all, [1.0, NAN, 3.0], [0.5, 0.0, 0.5]),
        (nanvar_all, [1.0, NAN, 3.0], [-1.0, 0.0, 1.0]),
        (nanstd_all, [1.0, NAN, 3.0], [-0.5, 0.0, 0.5]),
        (nanprod_all, [2.0, NAN, 3.0], [3.0, 0.0, 2.0]),
        (nanprod_all, [0.0, NAN, 3.0], [3.0, 0.0, 0.0]),
        (total_nancumsum, [1.0, NAN, 3.0], [3.0, 0.0, 1.0]),
        (total_nancumprod, [2.0, NAN, 3.0], [5.0, 0.0, 2.0]),
        (nanmedian_all, [1.0, NAN, 3.0, 2.0], [0.0, 0.0, 0.0, 1.0]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_nan_entries_get_zero_derivative(f: Any, x: list[float], expected: list[float]) -> None:
    both_modes(f, np.array(x), expected)


# -- inside loops and branches -----------------------------------------------------------------
def smoothed(x, steps):
    y = x
    for _ in range(steps):
        if np.var(y) > 0.1:
            y = np.cumsum(y) / 3.0
        else:
            y = y - np.median(y) * np.std(y, ddof=1)
    return np.sum(np.cumprod(y) * np.sort(y))


def test_reductions_in_a_loop_and_branch() -> None:
    x = np.array([0.3, -0.8, 0.5, 1.1, -0.2])
    check_grads(smoothed, x, 3)
    g = adgen.grad(smoothed)(x, 3)
    _, t = adgen.jvp(smoothed, (x, 3), (np.ones_like(x), None))
    np.testing.assert_allclose(np.sum(g), t, rtol=1e-12)


# -- np.gradient without axis= counts one result: f must be 1-d ------------------------------
def gradient_unpacked(a):
    gy, gx = np.gradient(a)
    return np.sum(gy * gx)


def gradient_indexed(a):
    g = np.gradient(a)
    return np.sum(g[0] * g[1])


def gradient_stacked(a):
    return np.sum(np.stack(np.gradient(a)) ** 2)


def gradient_of_a_vector(a):
    g = np.gradient(a, 0.5)
    return np.sum(g * g * a)


@pytest.mark.parametrize("fn", [gradient_unpacked, gradient_indexed, gradient_stacked])
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_gradient_of_a_matrix_without_axis_is_refused_at_its_line(fn, mode) -> None:
    """adgen counts np.gradient's results when it writes the code: without axis= (and with
    at most one spacing) one result, so f must be 1-d. For a matrix, both modes refuse at
    the np.gradient line with the advice (reverse mode stopped with a TypeError elsewhere)."""
    a = np.arange(12.0).reshape(3, 4) ** 1.5
    with pytest.raises(adgen.UnsupportedSyntaxError) as info:
        if mode == "forward":
            adgen.jvp(fn, (a,), (np.ones_like(a),))
        else:
            adgen.grad(fn)(a)
    assert "np.gradient(f) without axis=" in info.value.message
    assert "axis=(0, 1, ...)" in info.value.hint
    assert info.value.loc is not None and "np.gradient" in info.value.loc.text


def test_gradient_of_a_vector_keeps_its_derivatives_and_the_general_code_checks() -> None:
    from adgen.pipeline import derivative, run

    a = np.linspace(0.0, 1.0, 6) ** 2
    check_grads(gradient_of_a_vector, a)
    hessian = adgen.hessian(gradient_of_a_vector)(a)
    g = adgen.grad(gradient_of_a_vector)
    columns = [(g(a + 1e-6 * e) - g(a - 1e-6 * e)) / 2e-6 for e in np.eye(6)]
    np.testing.assert_allclose(hessian, np.stack(columns, axis=-1), rtol=1e-5, atol=1e-6)
    general = derivative(gradient_of_a_vector, "reverse", ("a",))  # (no shapes known)
    np.testing.assert_allclose(run(general, a, 1.0)[1][0], adgen.grad(gradient_of_a_vector)(a))
    with pytest.raises(adgen.UnsupportedSyntaxError, match="np.gradient.f. without axis="):
        run(general, np.ones((3, 3)), 1.0)  # the refusal, decided when the code runs
