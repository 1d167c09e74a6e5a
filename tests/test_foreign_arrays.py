"""What the API says of arrays of other libraries: which it differentiates, which it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import adgen

da = pytest.importorskip("dask.array")


def _sum_of_squares(x):
    return np.sum(x * x)


class _LooksLikeAnArray:
    """Shape and dtype, convertible to NumPy, but no dispatch protocol (a pandas Series is such
    an object: its arithmetic aligns by index labels, not positions)."""

    shape = (3,)
    dtype = np.dtype(np.float64)
    ndim = 1

    def __array__(self, dtype=None, copy=None):
        return np.ones(3)


def test_an_object_no_protocol_reaches_is_refused_by_name() -> None:
    with pytest.raises(adgen.AdgenError, match="_LooksLikeAnArray, whose library adgen"):
        adgen.grad(_sum_of_squares)(_LooksLikeAnArray())


def test_an_integer_dask_array_is_refused_as_an_integer_array() -> None:
    with pytest.raises(adgen.AdgenError, match="it is an integer array"):
        adgen.grad(_sum_of_squares)(da.arange(3, chunks=2))


def test_a_zero_d_dask_result_is_a_scalar_for_grad() -> None:
    x = da.from_array(np.array([1.0, 2.0, 3.0]), chunks=2)
    g = adgen.grad(_sum_of_squares)(x)
    assert isinstance(g, da.Array) and g.dtype == np.float64
    np.testing.assert_array_equal(g.compute(), [2.0, 4.0, 6.0])


def test_a_float32_dask_array_gets_a_float32_gradient() -> None:
    x = da.from_array(np.array([1.0, 2.0], dtype=np.float32), chunks=1)
    g = adgen.grad(_sum_of_squares)(x)
    assert isinstance(g, da.Array) and g.dtype == np.float32
    np.testing.assert_allclose(g.compute(), [2.0, 4.0])
