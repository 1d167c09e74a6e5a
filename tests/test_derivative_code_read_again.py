"""Derivative code adgen reads again (Hessians, higher derivatives) stays inside what adgen
differentiates.

Two classes found by the random-program fuzzer and by SciPy's ``quantile``:

* a list of shape numbers built in a branch and written by index (``shape = list(x.shape);
  shape[axis] = 1; x = np.full(shape, np.nan)``): reverse mode saved and put back the list
  though no adjoint read it, and the Hessian, reading that code again, took the list popped
  from the tape for a differentiated value ("np.full with respect to its argument `shape`");
* ``math.fabs``, whose derivative calls ``math.copysign``, which had no rule of its own.
"""

from __future__ import annotations

import math

import numpy as np
from derivative_checks import differences

import adgen
from adgen.testing import check_grads


def padded_sort(x, axis=0):
    if x.shape[axis] == 0:  # (an empty sample: one NaN in its place, as SciPy's quantile)
        shape = list(x.shape)
        shape[axis] = 1
        x = np.full(shape, np.nan)
    y = np.sort(x)
    return np.sum(y[1:] ** 2 * np.cos(y[:-1]))


def test_a_shape_list_written_in_a_branch_is_not_saved_where_no_adjoint_reads_it():
    x = np.array([0.3, -1.2, 2.0, 0.7])
    source = adgen.source(padded_sort, mode="reverse")
    assert "shape[axis] = stack.pop()" not in source and "shape = stack.pop()" not in source
    check_grads(padded_sort, x)
    grad = adgen.grad(padded_sort)
    hessian = adgen.hessian(padded_sort)(x)
    step = 1e-5
    columns = [(grad(x + step * e) - grad(x - step * e)) / (2 * step) for e in np.eye(x.size)]
    np.testing.assert_allclose(hessian, np.stack(columns, axis=1), rtol=1e-6, atol=1e-8)


def gathered(x):
    # the index list is read by the adjoint of the first gather after it is written: its
    # old item must still be put back
    idx = [int(i) for i in np.argsort(x)[:2]]
    y = x[idx]
    idx[0] = 2
    z = x[idx]
    return np.sum(y**2 * np.sin(z))


def test_a_list_an_adjoint_reads_is_still_put_back():
    x = np.array([0.5, -0.25, 1.5, 0.1])
    source = adgen.source(gathered, mode="reverse")
    assert "idx[0] = stack.pop()" in source
    check_grads(gathered, x)
    np.testing.assert_allclose(adgen.grad(gathered)(x), differences(gathered, x), rtol=1e-7)


def soft_abs(s):
    return math.fabs(s) * math.sin(s) + math.copysign(s * s, math.cos(3.0 * s))


def test_math_fabs_and_copysign_at_second_and_third_order():
    for s in (0.7, -1.3):
        d1 = adgen.grad(soft_abs)
        d2 = adgen.grad(d1)
        d3 = adgen.grad(d2)
        step = 1e-5
        assert d1(s) == pytest_approx((soft_abs(s + step) - soft_abs(s - step)) / (2 * step))
        assert d2(s) == pytest_approx((d1(s + step) - d1(s - step)) / (2 * step))
        assert d3(s) == pytest_approx((d2(s + step) - d2(s - step)) / (2 * step))


def pytest_approx(value: float):
    import pytest

    return pytest.approx(value, rel=1e-6, abs=1e-8)
