"""Conversions library code makes of its arguments, settled by the call's kinds (issue 38):
``np.asarray(x)`` / ``np.asanyarray(x, dtype=...)`` of a NumPy array already of that dtype is
the array itself (``x = np.asarray(x)`` then rebinds nothing, so reverse mode saves nothing),
and the test of a sum's ``dtype=`` (``rt.accumulates_in``) is decided when the dtype is a
constant, so the branch it takes is the only code (SciPy's array-API helpers: ``rosen``'s
Hessian no longer broadcasts its tangents at run time). Where the dtype differs, the
conversion stays. Every derivative is checked against its closed form."""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen import ir
from adgen.frontend.lower import lower
from adgen.frontend.parse import parse_function
from adgen.middle.shapes import describe, settle_broadcasts

FLOAT = np.float64


def converted(x):
    x = np.asanyarray(x, dtype=FLOAT)
    y = np.asarray(x)
    return np.sum(y[1:] * y[:-1], dtype=FLOAT)


def cast_to_single(x):
    x = np.asarray(x, dtype=np.float32)
    return np.sum(x * x)


def prims(fn, x):
    lowered = lower(parse_function(fn))
    settled = settle_broadcasts(lowered, (("x", describe(x)),))
    return [s.prim.name for s in settled.statements() if isinstance(s, ir.Assign)]


def test_a_conversion_to_the_dtype_the_array_has_is_the_array_itself():
    x = np.linspace(0.5, 2.0, 5)
    names = prims(converted, x)
    assert "np.asanyarray" not in names and "np.asarray" not in names, names
    source = adgen.source(converted, "reverse", args=(x,))
    assert "stack" not in source, source  # (x no longer rebound: nothing saved)
    expected = np.concatenate([x[1:2], x[:-2] + x[2:], x[-2:-1]])
    np.testing.assert_allclose(adgen.grad(converted)(x), expected, rtol=1e-12)
    hessian = np.eye(5, k=1) + np.eye(5, k=-1)
    np.testing.assert_allclose(adgen.hessian(converted)(x), hessian, atol=1e-12)


def test_a_conversion_to_another_dtype_stays():
    x = np.linspace(0.5, 2.0, 4)
    assert "np.asarray" in prims(cast_to_single, x)
    np.testing.assert_allclose(adgen.grad(cast_to_single)(x), 2 * x, rtol=1e-6)


@pytest.mark.parametrize(("dtype", "grad"), [(np.float64, 1.0), (np.int64, 0.0)])
def test_a_sums_dtype_decides_its_derivative_when_transforming(dtype, grad):
    def total(x):
        return np.sum(x * 3.0, dtype=dtype) + np.sum(x * x)

    x = np.array([0.5, 1.5, 2.5])
    expected = 3.0 * grad + 2 * x
    np.testing.assert_allclose(adgen.grad(total)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(adgen.hessian(total)(x), 2 * np.eye(3), atol=1e-12)


def test_scipy_rosen_hessian_is_scipys(batched_sources):
    optimize = pytest.importorskip("scipy.optimize")
    x = np.random.default_rng(4).normal(size=12)
    np.testing.assert_allclose(
        adgen.hessian(optimize.rosen)(x), optimize.rosen_hess(x), rtol=1e-10, atol=1e-10
    )
    assert batched_sources
    assert not any("accumulates_in" in s or "stack" in s for s in batched_sources)
