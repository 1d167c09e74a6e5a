"""Brute-force checks of the NumPy helpers in adgen.rules.runtime (``rt`` in generated code).

Every vector-Jacobian product (vjp) helper is compared with J^T g, where the Jacobian J of
the primal function is built column by column: exactly for linear primals (sum, mean,
broadcasting, indexing, matmul/dot in one argument), exactly through multilinearity for
``np.prod``, and by central finite differences elsewhere.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from adgen.rules import runtime
from adgen.rules.runtime import (
    dot_vjp_a,
    dot_vjp_b,
    getitem_vjp,
    matmul_vjp_a,
    matmul_vjp_b,
    mean_vjp,
    minmax_vjp,
    prod_vjp,
    unbroadcast,
    unreduce,
)

settings.register_profile("runtime", deadline=None, max_examples=60)
settings.load_profile("runtime")

Fn = Callable[[np.ndarray], Any]


# --------------------------------------------------------------------------- helpers


def rand(shape: tuple[int, ...], seed: int = 0, dtype: Any = np.float64) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def linear_jacobian(f: Fn, x: np.ndarray) -> np.ndarray:
    """Jacobian of a LINEAR f at x, column i = f(e_i). Shape (out_size, in_size)."""
    x = np.asarray(x, dtype=np.float64)
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = 1.0
        cols.append(np.ravel(f(e.reshape(x.shape))).astype(np.float64))
    out_size = np.size(f(x))
    return np.stack(cols, axis=1) if cols else np.zeros((out_size, 0))


def multilinear_jacobian(f: Fn, x: np.ndarray) -> np.ndarray:
    """Exact Jacobian of f that is affine in each entry separately (e.g. np.prod).

    df/dx_i = f(x with x_i = 1) - f(x with x_i = 0): no division, no step size.
    """
    x = np.asarray(x, dtype=np.float64)
    cols = []
    for i in range(x.size):
        one, zero = x.ravel().copy(), x.ravel().copy()
        one[i], zero[i] = 1.0, 0.0
        cols.append(np.ravel(f(one.reshape(x.shape)) - f(zero.reshape(x.shape))))
    return np.stack(cols, axis=1)


def fd_jacobian(f: Fn, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central finite-difference Jacobian in float64."""
    x = np.asarray(x, dtype=np.float64)
    cols = []
    for i in range(x.size):
        d = np.zeros(x.size)
        d[i] = eps
        d = d.reshape(x.shape)
        cols.append((np.ravel(f(x + d)) - np.ravel(f(x - d))) / (2 * eps))
    return np.stack(cols, axis=1)


def assert_vjp(result: Any, jac: np.ndarray, g: Any, x_shape: tuple[int, ...], **tol: Any) -> None:
    """result must have x's shape and equal J^T g."""
    assert np.shape(result) == x_shape
    expected = jac.T @ np.ravel(np.asarray(g, dtype=np.float64))
    np.testing.assert_allclose(
        np.ravel(result), expected, **(tol or {"rtol": 1e-10, "atol": 1e-10})
    )


@st.composite
def shape_and_axis(draw: st.DrawFn, min_dims: int = 0) -> tuple[tuple[int, ...], Any, bool]:
    """A shape, an axis argument (None, int incl. negative, or tuple) and keepdims."""
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=4, min_side=1, max_side=3))
    nd = len(shape)
    if nd == 0:
        axis = draw(st.sampled_from([None, ()]))
    else:
        kind = draw(st.sampled_from(["none", "int", "tuple"]))
        if kind == "none":
            axis = None
        elif kind == "int":
            axis = draw(st.integers(-nd, nd - 1))
        else:
            axes = draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd))
            axis = tuple(a - nd if draw(st.booleans()) else a for a in axes)
    return shape, axis, draw(st.booleans())


# --------------------------------------------------------------------------- doctests


MODULES = [
    importlib.import_module(f"{runtime.__name__}.{info.name}")
    for info in pkgutil.iter_modules(runtime.__path__)
]


def test_docstring_examples_pass() -> None:
    attempted = 0
    for module in MODULES:
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__
        attempted += result.attempted
    assert attempted >= 10
    public = [name for name in runtime.__all__]
    for name in public:
        assert ">>>" in (getattr(runtime, name).__doc__ or ""), name


# the tools the helpers use to run on arrays of other libraries: generated code never calls them
HELPERS_TOOLS = {f"{runtime.__name__}.libraries"}


def test_rt_holds_every_helper_of_every_module() -> None:
    """Generated code names each helper ``rt.<name>``, whichever module defines it."""
    assert len(MODULES) >= 5
    for module in MODULES:
        if module.__name__ in HELPERS_TOOLS:
            assert not any(
                getattr(runtime, n, None) is v
                for n, v in vars(module).items()
                if callable(v)
                and not n.startswith("_")
                and getattr(v, "__module__", None) == module.__name__
            )
            continue
        for name, value in vars(module).items():
            if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__:
                assert getattr(runtime, name) is value, f"{module.__name__}.{name}"


def test_adgen_runtime_is_the_public_name_of_rt() -> None:
    import adgen.runtime as public

    helpers = [n for n, v in vars(runtime).items() if callable(v) and not n.startswith("_")]
    assert len(helpers) > 80
    assert all(getattr(public, name) is getattr(runtime, name) for name in helpers)
    assert public.__all__ == runtime.__all__
    assert set(helpers) <= set(dir(public))
    with pytest.raises(AttributeError):
        public.no_such_helper  # noqa: B018


# --------------------------------------------------------------------------- unbroadcast


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3))
def test_unbroadcast_matches_adjoint_of_broadcast(shapes: Any) -> None:
    x_shape = shapes.input_shapes[0]
    out_shape = shapes.result_shape
    x = rand(x_shape, 1)
    g = rand(out_shape, 2)
    jac = linear_jacobian(lambda v: np.broadcast_to(v, out_shape), x)
    assert_vjp(unbroadcast(g, x), jac, g, x_shape)


def test_unbroadcast_returns_g_itself_when_shapes_match() -> None:
    g = rand((2, 3))
    assert unbroadcast(g, np.zeros((2, 3))) is g
    s = 2.5
    assert unbroadcast(s, 1.0) is s


def test_unbroadcast_to_scalar_sums_everything() -> None:
    g = rand((2, 3, 4))
    for x in (1.0, np.float32(1.0), np.array(1.0)):
        out = unbroadcast(g, x)
        assert np.shape(out) == ()
        np.testing.assert_allclose(out, g.sum())


def test_unbroadcast_size_one_axes_keep_dims() -> None:
    g = rand((5, 2, 3, 4))
    out = unbroadcast(g, np.zeros((1, 3, 1)))
    assert out.shape == (1, 3, 1)
    np.testing.assert_allclose(out, g.sum(axis=(0, 1, 3))[None, :, None])


def test_unbroadcast_smaller_g_is_broadcast_up() -> None:
    out = unbroadcast(0.0, np.zeros((2, 3)))
    assert np.shape(out) == (2, 3)
    assert np.all(np.asarray(out) == 0.0)


def test_unbroadcast_float32_preserved() -> None:
    g = rand((4, 2, 3), dtype=np.float32)
    for x in (np.zeros(3, np.float32), np.zeros((2, 1), np.float32), np.float32(0.0)):
        assert np.asarray(unbroadcast(g, x)).dtype == np.float32


# --------------------------------------------------------------------------- unreduce / mean


@given(shape_and_axis())
def test_unreduce_is_adjoint_of_sum(case: Any) -> None:
    shape, axis, keepdims = case
    x = rand(shape, 3)
    y = np.sum(x, axis=axis, keepdims=keepdims)
    g = rand(np.shape(y), 4)
    jac = linear_jacobian(lambda v: np.sum(v, axis=axis, keepdims=keepdims), x)
    assert_vjp(unreduce(g, x, axis, keepdims), jac, g, shape)


@given(shape_and_axis())
def test_mean_vjp_is_adjoint_of_mean(case: Any) -> None:
    shape, axis, keepdims = case
    x = rand(shape, 5)
    y = np.mean(x, axis=axis, keepdims=keepdims)
    g = rand(np.shape(y), 6)
    jac = linear_jacobian(lambda v: np.mean(v, axis=axis, keepdims=keepdims), x)
    assert_vjp(mean_vjp(g, x, axis, keepdims), jac, g, shape)


def test_unreduce_and_mean_scalar_inputs() -> None:
    assert np.shape(unreduce(2.0, 3.0)) == ()
    assert float(unreduce(2.0, 3.0)) == 2.0
    assert float(mean_vjp(2.0, 3.0)) == 2.0
    np.testing.assert_allclose(mean_vjp(np.float32(6.0), np.zeros(3, np.float32)), [2.0] * 3)


def test_unreduce_mean_float32_preserved() -> None:
    x = np.zeros((2, 3, 4), np.float32)
    g = np.ones((2, 4), np.float32)
    assert unreduce(g, x, axis=-2).dtype == np.float32
    assert mean_vjp(g, x, axis=1).dtype == np.float32
    assert mean_vjp(np.ones((1, 3, 1), np.float32), x, (0, 2), True).dtype == np.float32


# --------------------------------------------------------------------------- prod


@st.composite
def prod_case(draw: st.DrawFn) -> tuple[np.ndarray, Any, bool]:
    shape, axis, keepdims = draw(shape_and_axis())
    size = int(np.prod(shape))
    values = draw(
        hnp.arrays(np.float64, shape, elements=st.floats(-2, 2).filter(lambda v: abs(v) > 0.1))
    )
    n_zeros = draw(st.integers(0, min(size, 3)))
    zero_at = draw(st.lists(st.integers(0, size - 1), min_size=n_zeros, max_size=n_zeros))
    flat = values.ravel().copy()
    flat[zero_at] = 0.0
    return flat.reshape(shape), axis, keepdims


@given(prod_case())
def test_prod_vjp_exact_with_zeros(case: Any) -> None:
    x, axis, keepdims = case
    y = np.prod(x, axis=axis, keepdims=keepdims)
    g = rand(np.shape(y), 7)
    jac = multilinear_jacobian(lambda v: np.prod(v, axis=axis, keepdims=keepdims), x)
    assert_vjp(prod_vjp(g, x, axis, keepdims), jac, g, x.shape)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (-1, 0), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_prod_vjp_matches_finite_differences(axis: Any, keepdims: bool) -> None:
    x = rand((2, 3, 2), 8)
    y = np.prod(x, axis=axis, keepdims=keepdims)
    g = rand(np.shape(y), 9)
    jac = fd_jacobian(lambda v: np.prod(v, axis=axis, keepdims=keepdims), x)
    assert_vjp(prod_vjp(g, x, axis, keepdims), jac, g, x.shape, rtol=1e-6, atol=1e-8)


def test_prod_vjp_one_and_two_zeros_explicit() -> None:
    # One zero: only the zero entry gets a gradient (product of the others).
    np.testing.assert_array_equal(prod_vjp(1.0, np.array([2.0, 0.0, 3.0])), [0.0, 6.0, 0.0])
    # Two zeros: every partial derivative is zero.
    np.testing.assert_array_equal(prod_vjp(1.0, np.array([0.0, 5.0, 0.0])), [0.0, 0.0, 0.0])
    # Along an axis, rows with and without zeros.
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]])
    out = prod_vjp(np.array([1.0, 1.0, 1.0]), x, axis=1)
    np.testing.assert_array_equal(out, [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0], [6.0, 3.0, 2.0]])
    assert np.all(np.isfinite(out))


def test_prod_vjp_scalar_and_empty() -> None:
    assert float(prod_vjp(3.0, 0.0)) == 3.0
    out = prod_vjp(np.ones(2), np.zeros((2, 0)), axis=1)
    assert out.shape == (2, 0)


def test_prod_vjp_float32_preserved() -> None:
    x = np.array([[1.0, 0.0], [2.0, 3.0]], np.float32)
    assert prod_vjp(np.ones(2, np.float32), x, axis=0).dtype == np.float32
    assert prod_vjp(np.float32(1.0), x).dtype == np.float32


# --------------------------------------------------------------------------- min / max


def tie_split_jacobian(x: np.ndarray, ans: Any, axis: Any, keepdims: bool) -> np.ndarray:
    """J[o, i] = 1/count_o if x_i is in reduction slice o and equals the extremum there."""
    member = linear_jacobian(lambda v: np.sum(v, axis=axis, keepdims=keepdims), x)
    hit = member * (x.ravel()[None, :] == np.ravel(ans)[:, None])
    return hit / hit.sum(axis=1, keepdims=True)


@given(
    shape_and_axis(),
    st.sampled_from([np.max, np.min]),
    st.data(),
)
def test_minmax_vjp_splits_ties_evenly(case: Any, op: Any, data: st.DataObject) -> None:
    shape, axis, keepdims = case
    # Few distinct values -> many ties.
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 1.0, 2.0])))
    ans = op(x, axis=axis, keepdims=keepdims)
    g = rand(np.shape(ans), 10)
    jac = tie_split_jacobian(x, ans, axis, keepdims)
    assert_vjp(minmax_vjp(g, ans, x, axis, keepdims), jac, g, shape)


@pytest.mark.parametrize("op", [np.max, np.min])
@pytest.mark.parametrize("axis", [None, 1, -1, (0, 2), (-3, -1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_minmax_vjp_matches_finite_differences(op: Any, axis: Any, keepdims: bool) -> None:
    x = np.random.default_rng(11).permutation(24).astype(np.float64).reshape(2, 3, 4)
    ans = op(x, axis=axis, keepdims=keepdims)
    g = rand(np.shape(ans), 12)
    jac = fd_jacobian(lambda v: op(v, axis=axis, keepdims=keepdims), x, eps=1e-3)
    assert_vjp(minmax_vjp(g, ans, x, axis, keepdims), jac, g, x.shape, rtol=1e-9, atol=1e-9)


def test_minmax_vjp_ties_explicit() -> None:
    x = np.array([1.0, 3.0, 3.0, 2.0])
    np.testing.assert_array_equal(minmax_vjp(4.0, 3.0, x), [0.0, 2.0, 2.0, 0.0])
    x = np.array([[5.0, 5.0, 5.0], [1.0, 0.0, 0.0]])
    out = minmax_vjp(np.array([3.0, 1.0]), np.max(x, axis=1), x, axis=1)
    np.testing.assert_allclose(out, [[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    out = minmax_vjp(np.array([3.0, 1.0]), np.min(x, axis=-1), x, axis=-1)
    np.testing.assert_allclose(out, [[1.0, 1.0, 1.0], [0.0, 0.5, 0.5]])


def test_minmax_vjp_nan_and_scalar() -> None:
    x = np.array([1.0, np.nan, 3.0])
    out = minmax_vjp(1.0, np.max(x), x)
    np.testing.assert_array_equal(out, [0.0, 1.0, 0.0])
    assert float(minmax_vjp(2.0, 7.0, 7.0)) == 2.0


def test_minmax_vjp_float32_preserved() -> None:
    x = np.array([[1.0, 2.0], [2.0, 2.0]], np.float32)
    out = minmax_vjp(np.ones(2, np.float32), np.max(x, axis=0), x, axis=0)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.0, 0.5], [1.0, 0.5]])
    assert minmax_vjp(1.0, np.max(x), x).dtype == np.float32
    xi = np.array([1, 3, 3])
    assert minmax_vjp(1.0, 3, xi).dtype == np.float64


# --------------------------------------------------------------------------- matmul


def check_matmul(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    a, b = rand(a_shape, 13), rand(b_shape, 14)
    g = rand(np.shape(np.matmul(a, b)), 15)
    jac_a = linear_jacobian(lambda v: np.matmul(v, b), a)
    jac_b = linear_jacobian(lambda v: np.matmul(a, v), b)
    assert_vjp(matmul_vjp_a(g, a, b), jac_a, g, a_shape)
    assert_vjp(matmul_vjp_b(g, a, b), jac_b, g, b_shape)


@given(hnp.mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=3, max_side=3))
def test_matmul_vjps_all_cases(shapes: Any) -> None:
    check_matmul(*shapes.input_shapes)


MATMUL_CASES = [
    ((3,), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 1, 2, 3), (4, 3, 2)),
    ((3,), (4, 3, 2)),
    ((4, 2, 3), (3,)),
    ((1, 2, 3), (4, 3, 2)),
]


@pytest.mark.parametrize(("a_shape", "b_shape"), MATMUL_CASES)
def test_matmul_vjps_explicit_cases(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    check_matmul(a_shape, b_shape)


@pytest.mark.parametrize(("a_shape", "b_shape"), MATMUL_CASES)
def test_matmul_vjps_float32_preserved(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    a, b = rand(a_shape, dtype=np.float32), rand(b_shape, dtype=np.float32)
    g = np.ones(np.shape(a @ b), np.float32)
    assert np.asarray(matmul_vjp_a(g, a, b)).dtype == np.float32
    assert np.asarray(matmul_vjp_b(g, a, b)).dtype == np.float32


# --------------------------------------------------------------------------- dot


DOT_CASES = [
    ((), ()),
    ((), (3,)),
    ((3,), ()),
    ((), (2, 3)),
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (3,)),
    ((2, 3), (4, 3, 2)),
    ((3,), (2, 3, 4)),
    ((2, 2, 3), (4, 3, 2)),
    ((2, 1, 3), (2, 2, 3, 2)),
]


@pytest.mark.parametrize(("a_shape", "b_shape"), DOT_CASES)
def test_dot_vjps_match_jacobian(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    a, b = rand(a_shape, 16), rand(b_shape, 17)
    g = rand(np.shape(np.dot(a, b)), 18)
    jac_a = linear_jacobian(lambda v: np.dot(v, b), a)
    jac_b = linear_jacobian(lambda v: np.dot(a, v), b)
    assert_vjp(dot_vjp_a(g, a, b), jac_a, g, a_shape)
    assert_vjp(dot_vjp_b(g, a, b), jac_b, g, b_shape)


def test_dot_vjps_python_scalars() -> None:
    assert float(np.asarray(dot_vjp_a(2.0, 3.0, 5.0))) == 10.0
    assert float(np.asarray(dot_vjp_b(2.0, 3.0, 5.0))) == 6.0


@pytest.mark.parametrize(("a_shape", "b_shape"), DOT_CASES)
def test_dot_vjps_float32_preserved(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    a, b = rand(a_shape, dtype=np.float32), rand(b_shape, dtype=np.float32)
    g = np.ones(np.shape(np.dot(a, b)), np.float32)
    assert np.asarray(dot_vjp_a(g, a, b)).dtype == np.float32
    assert np.asarray(dot_vjp_b(g, a, b)).dtype == np.float32


# --------------------------------------------------------------------------- getitem


GETITEM_CASES: list[tuple[tuple[int, ...], Any]] = [
    ((5,), 2),
    ((5,), -1),
    ((5,), slice(1, 4)),
    ((5,), slice(None, None, -2)),
    ((3, 4), (1, slice(None))),
    ((3, 4), (Ellipsis, 2)),
    ((3, 4), (None, slice(0, 2), None)),
    ((3, 4), np.int64(1)),
    ((2, 3, 4), (slice(None), 0, slice(1, None, 2))),
    ((5,), np.array([0, 2, 0, 0, 4])),  # repeated indices accumulate
    ((5,), [1, 1, 3]),
    ((3, 4), (np.array([0, 2, 0]), np.array([1, 3, 1]))),  # repeated pairs
    ((3, 4), (slice(None), np.array([3, 3, 0]))),
    ((3, 4), (np.array([[0, 0], [2, 2]]), slice(1, 3))),
    ((5,), np.array([True, False, True, True, False])),
    ((3, 4), np.arange(12).reshape(3, 4) % 3 == 0),
    ((3, 4), (np.array([True, False, True]), 1)),
    ((), ()),
    ((), Ellipsis),
]


@pytest.mark.parametrize(("shape", "index"), GETITEM_CASES)
def test_getitem_vjp_matches_jacobian(shape: tuple[int, ...], index: Any) -> None:
    x = rand(shape, 19)
    g = rand(np.shape(x[index]), 20)
    jac = linear_jacobian(lambda v: v[index], x)
    out = getitem_vjp(g, x, index)
    assert_vjp(out, jac, g, shape)
    assert out.dtype == np.float64


def test_getitem_vjp_repeated_indices_explicit() -> None:
    out = getitem_vjp(np.array([1.0, 2.0, 4.0]), np.zeros(3), [0, 0, 0])
    np.testing.assert_array_equal(out, [7.0, 0.0, 0.0])
    out = getitem_vjp(1.0, np.zeros((2, 2)), (np.array([1, 1]), np.array([0, 0])))
    np.testing.assert_array_equal(out, [[0.0, 0.0], [2.0, 0.0]])


def test_getitem_vjp_dtypes() -> None:
    x32 = np.zeros(4, np.float32)
    assert getitem_vjp(np.ones(2, np.float32), x32, slice(2)).dtype == np.float32
    assert getitem_vjp(np.ones(2, np.float32), x32, [0, 0]).dtype == np.float32
    assert getitem_vjp(1.0, x32, 1).dtype == np.float32
    assert getitem_vjp(np.ones(2), np.arange(4), [1, 2]).dtype == np.float64
    assert getitem_vjp(np.ones(2, np.int64), np.arange(4), [1, 2]).dtype == np.float64
    assert getitem_vjp(np.ones(2, np.float32), np.arange(4, dtype=np.int8), [1, 2]).dtype == (
        np.float32
    )


# --------------------------------------------------------------------------- purity


def test_helpers_do_not_mutate_their_arguments() -> None:
    x = rand((2, 3, 4), 21)
    x[0, 0, :2] = 0.0
    x[1, 1, :] = x[1, 1, 0]
    b = rand((4, 2), 22)
    calls: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
        (unbroadcast, (rand((5, 2, 3, 4)), x)),
        (unreduce, (rand((2, 4)), x, 1)),
        (mean_vjp, (rand((2, 1, 4)), x, -2, True)),
        (prod_vjp, (rand((3,)), x, (0, -1))),
        (minmax_vjp, (rand((2, 4)), np.max(x, axis=1), x, 1)),
        (getitem_vjp, (rand((3,)), x, (0, 0, [1, 1, 2]))),
        (matmul_vjp_a, (rand((2, 3, 2)), x, b)),
        (matmul_vjp_b, (rand((2, 3, 2)), x, b)),
        (dot_vjp_a, (rand((2, 3, 2)), x, b)),
        (dot_vjp_b, (rand((2, 3, 2)), x, b)),
    ]
    for fn, args in calls:
        before = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
        fn(*args)
        for old, new in zip(before, args, strict=True):
            if isinstance(new, np.ndarray):
                np.testing.assert_array_equal(old, new, err_msg=fn.__name__)
