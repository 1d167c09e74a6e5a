"""Small NumPy helpers called by adgen's generated derivative code.

Every helper is a plain function of its arguments: no classes, no global state and no
in-place mutation of the inputs (a helper may build a fresh array and write into it).
They accept Python floats, NumPy scalars, 0-d arrays and n-d arrays, and they keep the
floating dtype of their inputs (float32 stays float32).

Naming: ``g`` is always the cotangent of the primal *output*; the helpers return the
cotangent of one primal *input*.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

Axis = int | tuple[int, ...] | None

__all__ = [
    "backwards",
    "cast_like",
    "checkpoint_every",
    "diagonal_vjp",
    "dot_vjp_a",
    "dot_vjp_b",
    "getitem_vjp",
    "interp_slope",
    "interp_vjp_fp",
    "matmul_vjp_a",
    "matmul_vjp_b",
    "matrix_power_jvp",
    "matrix_power_vjp",
    "mean_vjp",
    "minmax_vjp",
    "polyval_dx",
    "polyval_vjp_p",
    "norm_grad",
    "prod_vjp",
    "distinct",
    "require_square",
    "require_tall",
    "unbroadcast",
    "unreduce",
    "choose_vjp",
    "cross_vjp",
    "einsum_jvp",
    "einsum_vjp",
    "inner_vjp_a",
    "inner_vjp_b",
    "kron_vjp",
    "multi_dot_jvp",
    "multi_dot_vjp",
    "select_vjp",
    "take_along_axis_vjp",
    "take_vjp",
    "tensordot_vjp_a",
    "tensordot_vjp_b",
    "vecdot_vjp",
    # shaping helpers
    "copying_pad_mode",
    "gathered_vjp",
    "inserted_tangent",
    "inserted_values_vjp",
    "pad_interior",
    "rollaxis_destination",
    "source_index",
    # reductions, scans and statistics
    "average_weights",
    "average_weights_vjp",
    "corrcoef_jvp",
    "corrcoef_vjp",
    "convolve_vjp",
    "correlate_vjp",
    "cov_jvp",
    "cov_vjp",
    "cumprod_jvp",
    "cumprod_vjp",
    "cumsum_vjp",
    "diff_jvp",
    "diff_vjp",
    "quantile_jvp",
    "quantile_vjp",
    "quantile_weights",
    "sort_jvp",
    "sort_vjp",
    "trapezoid_vjp_x",
    "trapezoid_vjp_y",
    "trapezoid_y_weights",
    # derivatives of the helpers
    "rebroadcast",
    "written_vjp",
    # singular points: a zero seed contributes exactly zero
    "power",
    "zero_safe",
    "zero_safe_tangent",
]


# -- what a rule's template may ask of its operands' shapes ----------------------------------------
# When adgen specialises a derivative for the shapes of a call's arguments it knows the shape
# and dtype of most values before the code runs. A template asks with these functions; adgen
# replaces each call by the answer (a constant) and decides the ``if`` tests built on them, so
# none of them is ever called by generated code. Called at run time they answer "not known"
# (-1 or None).


def known_ndim(x: Any) -> int:
    """In a template: the number of axes of ``x`` when it is known at transform time, else -1."""
    return -1


def known_shape(x: Any) -> tuple[int, ...] | None:
    """In a template: the shape of ``x`` when it is known at transform time."""
    return None


def known_scalar(x: Any) -> bool:
    """In a template: is ``x`` provably a number (a Python or NumPy scalar: its broadcast
    class is empty, see :mod:`adgen.shapes`)? Then ``a if x != 0 else b`` may test it."""
    return False


def known_constant(x: Any) -> Any:
    """In a template: the value of ``x`` when the call passes a number or a string there
    (``x ** 2``, ``ord="fro"``), else None (a variable, a name from outside the function)."""
    return None


# -- singular points ------------------------------------------------------------------------------
# A rule whose partial derivative can be infinite or NaN where the function itself is finite
# (sqrt at 0, arcsin at 1, arctan2 at (0, 0)) gives ``0 * inf = nan`` where its tangent or
# cotangent entry is exactly zero. Such a rule is registered ``singular=True`` and each of its
# contributions is then written ``rt.zero_safe(contribution, seed)``. adgen differentiates
# that code again (second order), so both helpers have rules (adgen.rules.adjoints).

_max = np.maximum.reduce  # NaN in, NaN out; no overflow (a sum could), no error state


def power(x: Any, y: Any) -> Any:
    """``x ** y``, except that a zero Python number raised to a negative power is ``inf`` as
    in IEEE ``pow`` (``-inf`` for ``-0.0`` and an odd integer power) instead of Python's
    ``ZeroDivisionError``. Arrays and NumPy scalars get ``**`` itself. Derivative code of a
    power evaluates ``x ** (y - 1)``, infinite at ``x == 0`` for ``y < 1``.

    >>> power(0.0, -0.5), power(-0.0, -1), power(4.0, 0.5), power(np.float64(0.0), 2)
    (inf, -inf, 2.0, np.float64(0.0))
    """
    try:
        return x**y
    except ZeroDivisionError:
        odd = float(y).is_integer() and int(y) % 2 == 1
        return math.copysign(math.inf, x) if odd else math.inf


def zero_safe(r: Any, seed: Any) -> Any:
    """``r``, the contribution of a tangent or cotangent ``seed`` (``seed * partial``), with
    its NaN entries set to 0 where ``seed`` is 0: a zero seed contributes exactly zero, even
    where the partial derivative is infinite or NaN. Entries with a nonzero seed keep their
    value (``inf`` or NaN where the derivative does not exist).

    Costs one reduction over ``r`` when it holds no NaN (the common case); ``r``'s shape
    holds ``seed``'s (``seed`` is one of its factors).

    >>> zero_safe(np.array([np.nan, np.inf, np.nan, 0.5]), np.array([0.0, 1.0, 2.0, 3.0]))
    array([0. , inf, nan, 0.5])
    >>> zero_safe(math.nan, 0.0), zero_safe(math.nan, 1.0)
    (0.0, nan)
    """
    if isinstance(r, np.ndarray):
        if r.size == 0 or not math.isnan(_max(r, axis=None)):
            return r
        return np.where(np.isnan(r) & (np.asarray(seed) == 0), 0, r)
    if r == r or seed != 0:
        return r
    return type(r)(0)


def zero_safe_tangent(t: Any, r: Any, seed: Any) -> Any:
    """The derivative of ``zero_safe(r, seed)`` in ``r``, applied to ``t`` (a tangent or
    cotangent of ``r``'s shape): ``t``, with 0 where ``zero_safe`` replaced a NaN by 0. It
    is linear in ``t``; the mask is piecewise constant in ``r`` and ``seed``.

    >>> nans = np.array([math.nan, math.nan])
    >>> zero_safe_tangent(np.array([5.0, 6.0]), nans, np.array([0.0, 1.0]))
    array([0., 6.])
    """
    if isinstance(r, np.ndarray):
        if r.size == 0 or not math.isnan(_max(r, axis=None)):
            return t
        return np.where(np.isnan(r) & (np.asarray(seed) == 0), 0, t)
    if r == r or seed != 0:
        return t
    return np.zeros_like(t) if isinstance(t, np.ndarray) else type(t)(0)


def _normalize_axes(axis: Axis, ndim: int) -> tuple[int, ...]:
    """Return ``axis`` as a sorted tuple of non-negative axes of an ``ndim``-d array.

    >>> _normalize_axes(None, 3), _normalize_axes(-1, 3), _normalize_axes((2, 0), 3)
    ((0, 1, 2), (2,), (0, 2))
    """
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError("repeated axis")
    return tuple(sorted(out))


def unbroadcast(g: ArrayLike, x: ArrayLike) -> ArrayLike:
    """Sum the cotangent ``g`` of a broadcast result back down to ``np.shape(x)``.

    Leading axes that broadcasting added are summed away; axes where ``x`` has size 1 are
    summed with ``keepdims``. ``g`` itself is returned when the shapes already agree.

    >>> g = np.ones((2, 3))
    >>> unbroadcast(g, np.zeros(3)).tolist()
    [2.0, 2.0, 2.0]
    >>> unbroadcast(g, np.zeros((2, 1))).tolist()
    [[3.0], [3.0]]
    >>> float(unbroadcast(g, 1.0))
    6.0
    >>> unbroadcast(g, g) is g
    True
    """
    # attribute access first: this runs once per broadcasting operation, often on scalars
    x_shape = getattr(x, "shape", None)
    g_shape = getattr(g, "shape", None)
    if x_shape is None:
        x_shape = np.shape(x)
    if g_shape is None:
        g_shape = np.shape(g)
    if g_shape == x_shape:
        return g
    return _unbroadcast_to(g, g_shape, x_shape)


def _unbroadcast_to(g: ArrayLike, g_shape: tuple[int, ...], x_shape: tuple[int, ...]) -> Any:
    """:func:`unbroadcast` once the shapes are known to differ."""
    if not x_shape:
        return np.sum(g)
    extra = len(g_shape) - len(x_shape)
    if extra < 0:  # ``g`` has fewer axes (e.g. a scalar zero cotangent): broadcast it up
        return np.broadcast_to(g, x_shape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(extra)))
    axes = tuple(
        i for i, (n, m) in enumerate(zip(x_shape, np.shape(g), strict=True)) if n == 1 and m != 1
    )
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    return g


class Like:
    """The shape and dtype of an array, kept instead of the array where reverse mode needs
    only those (``rt.unbroadcast(g, x)``, ``rt.unreduce(g, x)``), so the array can be freed.

    >>> like = Like(np.zeros((2, 3), dtype=np.float32))
    >>> like.shape, like.dtype, unbroadcast(np.ones((4, 2, 3)), like).shape
    ((2, 3), dtype('float32'), (2, 3))
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, x: ArrayLike) -> None:
        self.shape = np.shape(x)
        dtype = getattr(x, "dtype", None)
        self.dtype = np.result_type(x) if dtype is None else dtype


def unreduce(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> NDArray[Any]:
    """Broadcast ``g`` back to ``np.shape(x)``: the adjoint of ``np.sum(x, axis, keepdims)``.

    Returns a read-only broadcast view.

    >>> x = np.zeros((2, 3))
    >>> unreduce(np.array([1.0, 2.0]), x, axis=-1).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    >>> unreduce(5.0, x).tolist()
    [[5.0, 5.0, 5.0], [5.0, 5.0, 5.0]]
    >>> unreduce(np.array([[1.0, 2.0, 3.0]]), x, axis=0, keepdims=True).tolist()
    [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    """
    shape = getattr(x, "shape", None)
    if shape is None:
        shape = np.shape(x)
    if not shape:  # a scalar: nothing was reduced
        return g  # type: ignore[return-value]
    if axis is None and not keepdims:
        return np.full(shape, g, dtype=np.result_type(g, x.dtype if type(x) is Like else x))
    if keepdims or axis is None:
        return np.broadcast_to(g, shape)
    return np.broadcast_to(np.expand_dims(g, _normalize_axes(axis, len(shape))), shape)


def mean_vjp(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> NDArray[Any]:
    """Cotangent of ``np.mean(x, axis, keepdims)`` with respect to ``x``.

    >>> mean_vjp(1.0, np.zeros(4)).tolist()
    [0.25, 0.25, 0.25, 0.25]
    >>> mean_vjp(np.array([3.0, 6.0]), np.zeros((2, 3)), axis=1).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    shape = np.shape(x)
    count = 1
    for a in _normalize_axes(axis, len(shape)):
        count *= shape[a]
    return unreduce(g, x, axis, keepdims) / count


def _matmul_vjp_a_nd(g: NDArray[Any], a: NDArray[Any], b: NDArray[Any]) -> ArrayLike:
    """Cotangent of ``a @ b`` w.r.t. ``a`` for the 1-D and batched (N-D) cases.

    >>> _matmul_vjp_a_nd(np.ones(2), np.ones(3), np.ones((3, 2))).tolist()
    [2.0, 2.0, 2.0]
    """
    if a.ndim == 1 and b.ndim == 1:  # inner product: scalar output
        return g * b
    if a.ndim == 1:  # (k,) @ (..., k, n) -> (..., n)
        return unbroadcast(np.matmul(b, g[..., None])[..., 0], a)
    if b.ndim == 1:  # (..., m, k) @ (k,) -> (..., m)
        return unbroadcast(g[..., None] * b, a)
    return unbroadcast(np.matmul(g, np.swapaxes(b, -1, -2)), a)


def matmul_vjp_a(g: ArrayLike, a: ArrayLike, b: ArrayLike) -> ArrayLike:
    """Cotangent of ``np.matmul(a, b)`` with respect to ``a``.

    Handles 1-D operands and batched operands with broadcast batch dimensions.

    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> b = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> matmul_vjp_a(np.ones((2, 2)), a, b).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    >>> matmul_vjp_a(2.0, np.array([1.0, 2.0]), np.array([3.0, 4.0])).tolist()
    [6.0, 8.0]
    """
    g, a, b = np.asarray(g), np.asarray(a), np.asarray(b)
    if a.ndim == 2 and b.ndim == 2:
        return g @ b.T
    if a.ndim == 2 and b.ndim == 1:  # matrix @ vector
        return np.multiply.outer(g, b)
    return _matmul_vjp_a_nd(g, a, b)


def _matmul_vjp_b_nd(g: NDArray[Any], a: NDArray[Any], b: NDArray[Any]) -> ArrayLike:
    """Cotangent of ``a @ b`` w.r.t. ``b`` for the 1-D and batched (N-D) cases.

    >>> _matmul_vjp_b_nd(np.ones(2), np.ones((2, 3)), np.ones(3)).tolist()
    [2.0, 2.0, 2.0]
    """
    if a.ndim == 1 and b.ndim == 1:  # inner product: scalar output
        return g * a
    if a.ndim == 1:  # (k,) @ (..., k, n) -> (..., n)
        return unbroadcast(a[:, None] * g[..., None, :], b)
    if b.ndim == 1:  # (..., m, k) @ (k,) -> (..., m)
        return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), g[..., None])[..., 0], b)
    return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), g), b)


def matmul_vjp_b(g: ArrayLike, a: ArrayLike, b: ArrayLike) -> ArrayLike:
    """Cotangent of ``np.matmul(a, b)`` with respect to ``b``.

    Handles 1-D operands and batched operands with broadcast batch dimensions.

    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> b = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> matmul_vjp_b(np.ones((2, 2)), a, b).tolist()
    [[4.0, 4.0], [6.0, 6.0]]
    >>> matmul_vjp_b(np.ones((3, 2)), np.ones((3, 2, 4)), np.ones(4)).tolist()
    [6.0, 6.0, 6.0, 6.0]
    """
    g, a, b = np.asarray(g), np.asarray(a), np.asarray(b)
    if a.ndim == 2 and b.ndim == 2:
        return a.T @ g
    if a.ndim == 2 and b.ndim == 1:  # matrix @ vector
        return g @ a
    return _matmul_vjp_b_nd(g, a, b)


def dot_vjp_a(g: ArrayLike, a: ArrayLike, b: ArrayLike) -> ArrayLike:
    """Cotangent of ``np.dot(a, b)`` with respect to ``a``.

    ``np.dot`` sums over the last axis of ``a`` and the second-to-last axis of ``b``
    (the last axis when ``b`` is 1-D); with a scalar operand it is a plain product.

    >>> dot_vjp_a(1.0, np.array([1.0, 2.0]), np.array([3.0, 4.0])).tolist()
    [3.0, 4.0]
    >>> dot_vjp_a(np.ones((2, 2)), np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[3.0, 7.0], [3.0, 7.0]]
    >>> dot_vjp_a(np.ones(3), 2.0, np.array([1.0, 2.0, 3.0])).tolist()
    6.0
    """
    g, a, b = np.asarray(g), np.asarray(a), np.asarray(b)
    if a.ndim == 2 and b.ndim == 2:
        return g @ b.T
    if a.ndim == 1 and b.ndim == 1:  # an inner product
        return g * b
    if a.ndim == 1 and b.ndim == 2:  # (k,) . (k, n) -> (n,)
        return b @ g
    if a.ndim == 0 or b.ndim == 0:
        return unbroadcast(g * b, a)
    if b.ndim == 1:  # (..., k) . (k,) -> (...)
        return np.multiply.outer(g, b)
    # (..., k) . (j..., k, n) -> (..., j..., n): contract g's (j..., n) with b's (j..., n).
    g_axes = list(range(a.ndim - 1, g.ndim))
    b_axes = [*range(b.ndim - 2), b.ndim - 1]
    return np.tensordot(g, b, axes=(g_axes, b_axes))


def dot_vjp_b(g: ArrayLike, a: ArrayLike, b: ArrayLike) -> ArrayLike:
    """Cotangent of ``np.dot(a, b)`` with respect to ``b``.

    >>> dot_vjp_b(1.0, np.array([1.0, 2.0]), np.array([3.0, 4.0])).tolist()
    [1.0, 2.0]
    >>> dot_vjp_b(np.ones((2, 2)), np.array([[1.0, 2.0], [3.0, 4.0]]), np.eye(2)).tolist()
    [[4.0, 4.0], [6.0, 6.0]]
    >>> dot_vjp_b(np.ones(2), np.ones((2, 3)), np.ones(3)).tolist()
    [2.0, 2.0, 2.0]
    """
    g, a, b = np.asarray(g), np.asarray(a), np.asarray(b)
    if a.ndim == 2 and b.ndim == 2:
        return a.T @ g
    if a.ndim == 1 and b.ndim == 1:  # an inner product
        return g * a
    if a.ndim == 2 and b.ndim == 1:  # (m, k) . (k,) -> (m,)
        return g @ a
    if a.ndim == 1 and b.ndim == 2:  # (k,) . (k, n) -> (n,)
        return np.multiply.outer(a, g)
    if a.ndim == 0 or b.ndim == 0:
        return unbroadcast(g * a, b)
    # Contract the leading (...) axes of a with the matching leading axes of g.
    lead = list(range(a.ndim - 1))
    gb = np.tensordot(a, g, axes=(lead, lead))  # shape (k, j..., n) or (k,)
    if b.ndim == 1:
        return gb
    return np.moveaxis(gb, 0, -2)


def _exclusive_prods(x: NDArray[Any]) -> NDArray[Any]:
    """Product of all *other* entries along the last axis, without dividing.

    Entry ``i`` is ``prod(x[..., :i]) * prod(x[..., i+1:])``, built from exclusive cumulative
    products from the left and from the right, so zeros in ``x`` are handled exactly.

    >>> _exclusive_prods(np.array([2.0, 0.0, 3.0, 4.0])).tolist()
    [0.0, 24.0, 0.0, 0.0]
    """
    ones = np.ones(x.shape[:-1] + (1,), dtype=x.dtype)
    left = np.concatenate([ones, np.cumprod(x[..., :-1], axis=-1)], axis=-1)
    right = np.concatenate([np.cumprod(x[..., :0:-1], axis=-1)[..., ::-1], ones], axis=-1)
    return left * right


def prod_vjp(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> NDArray[Any]:
    """Cotangent of ``np.prod(x, axis, keepdims)`` with respect to ``x``.

    Exact when ``x`` contains zeros (no division by ``x``): each entry receives ``g`` times
    the product of the other entries it was multiplied with.

    >>> prod_vjp(1.0, np.array([2.0, 3.0, 4.0])).tolist()
    [12.0, 8.0, 6.0]
    >>> prod_vjp(1.0, np.array([2.0, 0.0, 4.0])).tolist()
    [0.0, 8.0, 0.0]
    >>> prod_vjp(np.ones(2), np.array([[1.0, 2.0], [0.0, 5.0]]), axis=1).tolist()
    [[2.0, 1.0], [5.0, 0.0]]
    """
    x = np.asarray(x)
    g_full = unreduce(g, x, axis, keepdims)
    axes = _normalize_axes(axis, x.ndim)
    if x.size == 0:
        return np.zeros(x.shape, dtype=np.result_type(g_full, x))
    if axes == tuple(range(x.ndim)):  # full reduction: work on the raveled array
        return g_full * _exclusive_prods(x.reshape(-1)).reshape(x.shape)
    # Move the reduced axes to the end and flatten them into one.
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    perm = kept + axes
    xt = np.transpose(x, perm)
    others = _exclusive_prods(xt.reshape(xt.shape[: len(kept)] + (-1,)))
    return g_full * np.transpose(others.reshape(xt.shape), np.argsort(perm))


def _exclusive_prods_hvp(x: NDArray[Any], w: NDArray[Any]) -> NDArray[Any]:
    """Along the last axis, entry ``i`` of ``H w`` for ``H`` the Hessian of the product:
    ``sum over j != i of w[j] * prod(x[k] for k not in (i, j))``. The exclusive products of
    :func:`_exclusive_prods` in dual numbers (value, derivative along ``w``): no division.
    """
    n = x.shape[-1]
    left, dleft = np.ones(x.shape[:-1], dtype=x.dtype), np.zeros(x.shape[:-1], dtype=x.dtype)
    lefts, dlefts = [], []
    for i in range(n):
        lefts.append(left)
        dlefts.append(dleft)
        left, dleft = left * x[..., i], dleft * x[..., i] + left * w[..., i]
    right, dright = np.ones(x.shape[:-1], dtype=x.dtype), np.zeros(x.shape[:-1], dtype=x.dtype)
    out = [np.zeros(x.shape[:-1], dtype=x.dtype)] * n
    for i in reversed(range(n)):
        out[i] = dlefts[i] * right + lefts[i] * dright
        right, dright = right * x[..., i], dright * x[..., i] + right * w[..., i]
    return np.stack(out, axis=-1) if n else np.zeros(x.shape, dtype=x.dtype)


def prod_hvp(x: ArrayLike, w: ArrayLike, axis: Axis = None) -> NDArray[Any]:
    """The Hessian of ``np.prod(x, axis)`` (one per reduced group) times ``w`` (shaped like
    ``x``): entry ``i`` is the sum over the other entries ``j`` of its group of ``w[j]``
    times the product of the entries other than ``i`` and ``j``. Exact with zeros in ``x``.

    >>> prod_hvp(np.array([2.0, 3.0, 4.0]), np.array([1.0, 0.0, 0.0])).tolist()
    [0.0, 4.0, 3.0]
    >>> prod_hvp(np.array([[1.0, 2.0], [0.0, 5.0]]), np.ones((2, 2)), axis=1).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    x = np.asarray(x)
    dtype = np.result_type(x, w, 1.0)
    x = x.astype(dtype, copy=False)
    w = np.broadcast_to(np.asarray(w, dtype=dtype), x.shape)
    axes = _normalize_axes(axis, x.ndim)
    if x.size == 0:
        return np.zeros(x.shape, dtype=dtype)
    if axes == tuple(range(x.ndim)):
        return _exclusive_prods_hvp(x.reshape(-1), w.reshape(-1)).reshape(x.shape)
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    perm = kept + axes
    xt, wt = np.transpose(x, perm), np.transpose(w, perm)
    flat = xt.shape[: len(kept)] + (-1,)
    out = _exclusive_prods_hvp(xt.reshape(flat), wt.reshape(flat))
    return np.transpose(out.reshape(xt.shape), np.argsort(perm))


def minmax_vjp(
    g: ArrayLike, ans: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False
) -> NDArray[Any]:
    """Cotangent of ``np.max`` / ``np.min`` (primal result ``ans``) with respect to ``x``.

    The cotangent goes to the entries equal to the extremum, split evenly among ties.
    NaN extrema send the cotangent to the NaN entries.

    >>> x = np.array([1.0, 3.0, 3.0, 2.0])
    >>> minmax_vjp(1.0, np.max(x), x).tolist()
    [0.0, 0.5, 0.5, 0.0]
    >>> x = np.array([[1.0, 5.0], [4.0, 0.0]])
    >>> minmax_vjp(np.array([10.0, 20.0]), np.min(x, axis=0), x, axis=0).tolist()
    [[10.0, 0.0], [0.0, 20.0]]
    """
    x = np.asarray(x)
    dtype = np.result_type(g, x)
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    axes = _normalize_axes(axis, x.ndim)
    if axis is not None and not keepdims:  # put the reduced axes back: ans and g broadcast
        ans = np.expand_dims(ans, axes)
        g = np.expand_dims(g, axes)
    hit = x == ans
    count = np.count_nonzero(hit, axis=axes, keepdims=True)
    if not count.all():  # an extremum matched nothing: it must be NaN
        hit = hit | (np.isnan(x) & np.isnan(ans))
        count = np.count_nonzero(hit, axis=axes, keepdims=True)
    share = np.asarray(g, dtype=dtype) / count.astype(dtype)
    return hit * share  # type: ignore[no-any-return]


def _is_basic_index(index: Any) -> bool:
    """True when ``index`` uses only basic indexing (ints, slices, None, Ellipsis).

    >>> _is_basic_index((0, slice(None), None, Ellipsis)), _is_basic_index([0, 0])
    (True, False)
    """
    items = index if isinstance(index, tuple) else (index,)
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, slice):
            continue
        if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            continue
        return False
    return True


def getitem_vjp(g: ArrayLike, x: ArrayLike, index: Any) -> NDArray[Any]:
    """Cotangent of ``x[index]`` with respect to ``x``.

    Returns a fresh array of ``x``'s shape holding ``g`` at ``index`` and zeros elsewhere.
    Repeated integer indices accumulate.

    >>> getitem_vjp(np.array([1.0, 2.0]), np.zeros(3), slice(1, None)).tolist()
    [0.0, 1.0, 2.0]
    >>> getitem_vjp(np.array([1.0, 2.0, 4.0]), np.zeros(3), np.array([0, 2, 0])).tolist()
    [5.0, 0.0, 2.0]
    """
    if isinstance(x, list):  # an element of a list the function built
        out_list = zeros_like(x)
        out_list[index] = g
        return out_list
    dtype = np.result_type(x, g)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    out = np.zeros(np.shape(x), dtype=dtype)
    if _is_basic_index(index):
        out[index] = g
    else:
        np.add.at(out, index, g)
    return out


def cast_like(g: Any, x: Any, protected: tuple[Any, ...] | list[Any] = ()) -> Any:
    """A derivative ``g`` returned as the derivative of ``x`` is returned by adgen: a Python
    float for a Python float, ``x``'s type for a NumPy scalar, an array of ``x``'s shape and
    dtype for an array (a fresh one if ``g`` is ``x``, read-only, or may share memory with an
    array of ``protected``); pairwise for tuples; anything else as it is. adgen's API returns
    every derivative through it, and so does a standalone module (``adgen.export``).

    >>> cast_like(np.float64(5.5), 2.0)
    5.5
    >>> type(cast_like(5.5, np.float32(2.0))).__name__
    'float32'
    >>> cast_like(np.ones(2), np.zeros((3, 2), dtype=np.float32)).dtype
    dtype('float32')
    >>> [type(v).__name__ for v in cast_like((np.float64(1.0), 2.0), (1.0, np.float64(0.5)))]
    ['float', 'float64']
    """
    if type(x) is float:
        return g if type(g) is float else float(g)
    if isinstance(x, np.ndarray):  # a few attribute reads when g is what it should be
        if type(g) is not np.ndarray:
            g = np.asarray(g)
        if g.shape != x.shape:
            g = np.broadcast_to(g, x.shape)
        if g.dtype is not x.dtype and g.dtype != x.dtype:
            return g.astype(x.dtype)
        if (
            g is x
            or not g.flags.writeable
            or (
                protected
                and any(isinstance(p, np.ndarray) and np.may_share_memory(g, p) for p in protected)
            )
        ):
            return g.copy()
        return g
    if isinstance(x, np.generic):
        return x.dtype.type(g)
    if type(x) is tuple and type(g) is tuple and len(g) == len(x):
        return tuple(cast_like(a, b, protected) for a, b in zip(g, x))
    return g


def zeros_like(x: Any) -> Any:
    """A zero derivative for ``x``: ``0.0`` for Python numbers (and for ``None``, a name not
    yet bound), else zeros of ``x``'s shape in its floating dtype.

    >>> zeros_like(3.0), zeros_like(None)
    (0.0, 0.0)
    >>> zeros_like(np.ones(2, dtype=np.float32)).dtype
    dtype('float32')
    >>> zeros_like(np.arange(2)).tolist()
    [0.0, 0.0]
    >>> zeros_like((np.ones(2), 1.0))
    (array([0., 0.]), 0.0)
    """
    if x is None or isinstance(x, (bool, int, float)):
        return 0.0
    if isinstance(x, list):
        return [zeros_like(e) for e in x]
    if isinstance(x, tuple):  # a function's tuple result
        return tuple(zeros_like(e) for e in x)
    a = np.asarray(x)
    return np.zeros(a.shape, dtype=a.dtype if a.dtype.kind in "fc" else np.float64)


def written(g: Any, index: Any) -> Any:
    """The cotangent of ``v`` in ``y[index] = v``: ``g[index]``, except that where an integer
    index array names an element more than once only the last write (the one that stays)
    gets it.

    >>> written(np.array([1.0, 2.0, 3.0]), 1).tolist()
    2.0
    >>> written(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 0])).tolist()
    [0.0, 3.0, 1.0]
    """
    g = np.asarray(g)
    picked = np.copy(g[index])  # a copy: the caller zeroes those slots of g next
    if _is_basic_index(index) or isinstance(index, np.ndarray) and index.dtype == bool:
        return picked
    positions = np.arange(g.size).reshape(g.shape)[index]
    flat = np.ravel(positions)
    # keep the last occurrence of each position
    _, last_from_end = np.unique(flat[::-1], return_index=True)
    keep = np.zeros(flat.shape, dtype=bool)
    keep[flat.size - 1 - last_from_end] = True
    return np.where(keep.reshape(np.shape(positions)), picked, 0.0)


# the functions that join arrays along an existing axis, by the name the rules pass
_JOIN_AXES = {"hstack": 0, "vstack": 0, "dstack": 2, "column_stack": 1}


def _join_shape(shape: tuple[int, ...], join: str) -> tuple[int, ...]:
    """A part's shape as ``np.<join>`` takes it: ``np.hstack`` at least 1-d, ``np.vstack``
    at least 2-d (a 1-d array is a row), ``np.dstack`` at least 3-d (``(1, n, 1)``,
    ``(m, n, 1)``), ``np.column_stack`` at least 2-d (a 1-d array is a column)."""
    n = len(shape)
    if join == "hstack" and n == 0:
        return (1,)
    if join == "vstack" and n < 2:
        return (1,) * (2 - n) + shape
    if join == "dstack" and n < 3:
        return {0: (1, 1, 1), 1: (1, *shape, 1)}.get(n, (*shape, 1))
    if join == "column_stack" and n < 2:
        return (*shape, 1) if n else (1, 1)
    return shape


def _joined_block(arrays: Any, k: int, axis: Any, join: str) -> tuple[int, int, int]:
    """``(axis, start, stop)``: where ``arrays[k]`` lies along the axis a join of ``arrays``
    concatenates: ``np.concatenate(arrays, axis)`` (``axis=None``: the flattened parts end to
    end), or ``np.hstack(arrays)``, ``np.vstack``, ``np.dstack``, ``np.column_stack`` when
    ``join`` names one (each part shaped as that function takes it)."""
    if join != "concatenate" and join not in _JOIN_AXES:
        raise ValueError(f"unknown join {join!r}")
    shapes = [np.shape(a) for a in arrays]
    if join == "concatenate" and axis is None:
        widths = [int(np.prod(s)) for s in shapes]
        axis = 0
    else:
        if join != "concatenate":
            shapes = [_join_shape(s, join) for s in shapes]
            # np.hstack joins 1-d arrays end to end, the others side by side
            axis = 1 if join == "hstack" and len(shapes[0]) > 1 else _JOIN_AXES[join]
        widths = [s[axis] for s in shapes]
    start = sum(widths[:k])
    return axis, start, start + widths[k]


def concatenated_part(g: Any, arrays: Any, k: int, axis: Any = 0, join: str = "concatenate") -> Any:
    """The part of ``g`` (the cotangent of ``np.concatenate(arrays, axis)``, or of
    ``np.hstack(arrays)``, ``np.vstack``, ``np.dstack``, ``np.column_stack`` when ``join``
    names one) that came from ``arrays[k]``, in the shape of ``arrays[k]``.

    >>> concatenated_part(np.arange(5.0), (np.ones(2), np.ones(3)), 1).tolist()
    [2.0, 3.0, 4.0]
    >>> concatenated_part(np.arange(3.0), (1.0, np.ones(2)), 0, join="hstack").tolist()
    0.0
    >>> concatenated_part(np.arange(6.0), (np.ones((2, 2)), np.ones(2)), 0, None).tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """
    axis, start, stop = _joined_block(arrays, k, axis, join)
    index = [slice(None)] * np.ndim(g)
    index[axis] = slice(start, stop)
    return np.reshape(np.asarray(g)[tuple(index)], np.shape(arrays[k]))


def concatenated_part_vjp(
    c: Any, g: Any, arrays: Any, k: int, axis: Any = 0, join: str = "concatenate"
) -> Any:
    """The transpose of :func:`concatenated_part` in ``g``: zeros shaped like ``g`` with ``c``
    where ``arrays[k]``'s part lies.

    >>> concatenated_part_vjp(np.ones(3), np.zeros(5), (np.ones(2), np.ones(3)), 1).tolist()
    [0.0, 0.0, 1.0, 1.0, 1.0]
    >>> concatenated_part_vjp(2.0, np.zeros(3), (1.0, np.ones(2)), 0, join="hstack").tolist()
    [2.0, 0.0, 0.0]
    """
    axis, start, stop = _joined_block(arrays, k, axis, join)
    index = [slice(None)] * np.ndim(g)
    index[axis] = slice(start, stop)
    out = np.zeros(np.shape(g), dtype=np.result_type(g, c, 1.0))
    out[tuple(index)] = np.reshape(c, np.shape(out[tuple(index)]))
    return out


def accumulate(a: Any, b: Any) -> Any:
    """``a + b`` for derivatives, elementwise when ``a`` is the derivative of a list.

    >>> accumulate([1.0, np.ones(2)], [2.0, np.ones(2)])[1].tolist()
    [2.0, 2.0]
    >>> accumulate(1.0, 2.0)
    3.0
    """
    if isinstance(a, list):
        return [accumulate(x, y) for x, y in zip(a, b)]
    return a + b


def split_last(xs: Any) -> tuple[Any, Any]:
    """``(xs[:-1], xs[-1])``: the derivative of a list without its last element, and that one.

    >>> split_last([1.0, 2.0, 3.0])
    ([1.0, 2.0], 3.0)
    """
    return xs[:-1], xs[-1]


def items_vjp(parts: Any, xs: Any) -> Any:
    """The cotangent of an array passed where a sequence of arrays goes (``np.stack(y)``
    stacks ``y``'s rows) from the cotangents of its items: stacked back into ``y``'s shape.

    >>> items_vjp([np.ones(2), np.zeros(2)], np.arange(4.0).reshape(2, 2)).tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    """
    a = np.asarray(xs)
    dtype = a.dtype if a.dtype.kind in "fc" else np.dtype(np.float64)
    if not len(parts):
        return np.zeros(a.shape, dtype=dtype)
    return np.stack([np.asarray(p) for p in parts]).astype(dtype, copy=False).reshape(a.shape)


def as_list(d: Any) -> list[Any]:
    """``list(d)``: the tangent of ``list(x)`` (generated code calls ``list`` by this name
    inside rule templates, which name only ``np``, ``math`` and ``rt``)."""
    return list(d)


def list_vjp(g: Any, iterable: Any) -> Any:
    """The cotangent of ``list(iterable)``: a list for a list, the rows stacked back for an
    array (``list(a)`` is the list of ``a``'s rows).

    >>> list_vjp([1.0, 2.0], np.zeros(2)).tolist(), list_vjp([1.0, 2.0], [0.0, 0.0])
    ([1.0, 2.0], [1.0, 2.0])
    """
    if isinstance(iterable, list):
        return list(g)
    return items_vjp(g, iterable)


def join_last(rest: Any, last: Any) -> list[Any]:
    """``[*rest, last]``: the derivative of a list from that of all its items but the last
    and that of the last (the inverse of :func:`split_last`).

    >>> join_last([1.0, 2.0], 3.0)
    [1.0, 2.0, 3.0]
    """
    return [*rest, last]


# -- contractions and indexing helpers --


def _sum_to(g: Any, shape: tuple[int, ...]) -> NDArray[Any]:
    """Sum (or broadcast) ``g`` to ``shape``, like :func:`unbroadcast`, always an array.

    >>> _sum_to(np.ones((2, 3)), (1, 3)).tolist()
    [[2.0, 2.0, 2.0]]
    >>> _sum_to(np.ones(3), (2, 3)).shape
    (2, 3)
    """
    g = np.asarray(g)
    if g.shape != shape:
        g = np.asarray(_unbroadcast_to(g, g.shape, shape))
    return np.broadcast_to(g, shape)


def _einsum_letter(label: Any) -> str:
    if label is Ellipsis:
        return "..."
    label = int(label)
    return chr(ord("A") + label) if label < 26 else chr(ord("a") + label - 26)


def _einsum_spec(operands: tuple[Any, ...]) -> tuple[list[str], str, list[int]]:
    """The input subscripts, the output subscripts and the positions of the arrays among
    ``operands`` (the arguments of ``np.einsum``, string or interleaved form).

    >>> _einsum_spec(("ij,jk", 1, 2))
    (['ij', 'jk'], 'ik', [1, 2])
    >>> _einsum_spec((1, [0, 1], 2, [1, 2], [0, 2]))
    (['AB', 'BC'], 'AC', [0, 2])
    """
    if isinstance(operands[0], str):
        spec = operands[0].replace(" ", "")
        positions = list(range(1, len(operands)))
        lhs, arrow, out = spec.partition("->")
        inputs = lhs.split(",")
    else:
        positions = list(range(0, 2 * (len(operands) // 2), 2))
        inputs = ["".join(_einsum_letter(x) for x in operands[p + 1]) for p in positions]
        arrow = "->" if len(operands) % 2 else ""
        out = "".join(_einsum_letter(x) for x in operands[-1]) if arrow else ""
    if not arrow:  # implicit output: labels seen once, sorted; broadcast axes first
        letters = "".join(s.replace("...", "") for s in inputs)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        if any("..." in s for s in inputs):
            out = "..." + out
    return inputs, out, positions


def einsum_jvp(ans: Any, operands: tuple[Any, ...], parts: tuple[Any, ...], optimize: Any) -> Any:
    """Tangent of ``np.einsum(*operands)``: the sum over the arrays of the same contraction
    with that array replaced by its tangent (all-zero tangents are skipped).

    >>> a, b = np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> einsum_jvp(a @ b, ("ij,jk", a, b), (0.0, np.ones((2, 2)), np.zeros((2, 2))), False).tolist()
    [[4.0, 6.0], [4.0, 6.0]]
    """
    _, _, positions = _einsum_spec(operands)
    total: Any = None
    for p in positions:
        if not np.any(parts[p]):
            continue
        args = list(operands)
        args[p] = parts[p]
        term = np.einsum(*args, optimize=optimize)
        total = term if total is None else total + term
    if total is None:
        return np.zeros_like(ans)
    return total


def einsum_vjp(g: Any, operands: tuple[Any, ...], k: int, optimize: Any) -> NDArray[Any]:
    """Cotangent of ``np.einsum(*operands)`` with respect to ``operands[k]``.

    The output's cotangent is contracted with the other arrays; labels only ``operands[k]``
    carries are broadcast, broadcast (ellipsis or size-1) axes summed back, and a label
    repeated in ``operands[k]`` (a diagonal, ``"ii->i"``) puts the cotangent on that diagonal.

    >>> einsum_vjp(np.array([1.0, 2.0]), ("ii->i", np.ones((2, 2))), 1, False).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    >>> einsum_vjp(1.0, ("ij->", np.ones((2, 2))), 1, False).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    inputs, out, positions = _einsum_spec(operands)
    x = np.asarray(operands[k])
    index = positions.index(k)
    spec = inputs[index]
    pre, ell, post = spec.partition("...")
    labels = pre + post
    unique = "".join(dict.fromkeys(labels))
    others = [(inputs[i], operands[p]) for i, p in enumerate(positions) if i != index]
    seen = set(out.replace("...", "")).union(*(set(s.replace("...", "")) for s, _ in others))
    kept = "".join(c for c in unique if c in seen)
    lhs = ",".join([out, *(s for s, _ in others)])
    subs = lhs + "->" + ("..." if ell or "..." in lhs else "") + kept
    r = np.asarray(np.einsum(subs, g, *(a for _, a in others), optimize=optimize))
    n_ell = x.ndim - len(labels)
    ell_shape = x.shape[len(pre) : len(pre) + n_ell]
    sizes = {c: x.shape[n_ell * (i >= len(pre)) + i] for i, c in enumerate(labels)}
    if len(kept) != len(unique):  # labels only this operand has: size-1 axes, broadcast
        lead = r.shape[: r.ndim - len(kept)]
        tail = r.shape[r.ndim - len(kept) :]
        r = r.reshape(lead + tuple(tail[kept.index(c)] if c in kept else 1 for c in unique))
    r = _sum_to(r, ell_shape + tuple(sizes[c] for c in unique))
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    if len(unique) != len(labels):  # a repeated label: the cotangent goes on the diagonal
        full = np.zeros(ell_shape + tuple(sizes[c] for c in labels), dtype=dtype)
        np.einsum("..." + labels + "->..." + unique, full)[...] = r
        r = full
    else:
        r = np.array(r, dtype=dtype)
    # the ellipsis axes go back between the labels before and after them
    return np.moveaxis(r, list(range(n_ell, n_ell + len(pre))), list(range(len(pre))))


def _tensordot_axes(axes: Any, na: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        return list(range(na - int(axes), na)), list(range(int(axes)))
    xs, ys = axes
    xs = [xs] if isinstance(xs, (int, np.integer)) else list(xs)
    ys = [ys] if isinstance(ys, (int, np.integer)) else list(ys)
    return xs, ys


def tensordot_vjp_a(g: Any, a: Any, b: Any, axes: Any = 2) -> NDArray[Any]:
    """Cotangent of ``np.tensordot(a, b, axes)`` with respect to ``a``.

    >>> tensordot_vjp_a(np.ones(2), np.ones((2, 3)), np.arange(3.0), 1).tolist()
    [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    """
    a, b = np.asarray(a), np.asarray(b)
    xs, ys = _tensordot_axes(axes, a.ndim)
    xs = [x % a.ndim for x in xs] if a.ndim else xs
    ys = [y % b.ndim for y in ys] if b.ndim else ys
    a_free = [i for i in range(a.ndim) if i not in xs]
    b_free = [i for i in range(b.ndim) if i not in ys]
    n = len(a_free)
    r = np.tensordot(g, b, axes=(list(range(n, n + len(b_free))), b_free))
    # r's axes: a's free axes, then b's contracted axes in b's order
    ys_sorted = sorted(ys)
    source = {ax: j for j, ax in enumerate(a_free)}
    for x, y in zip(xs, ys):
        source[x] = n + ys_sorted.index(y)
    r = np.transpose(r, [source[i] for i in range(a.ndim)])
    return np.asarray(r, dtype=_float_dtype(a))


def tensordot_vjp_b(g: Any, a: Any, b: Any, axes: Any = 2) -> NDArray[Any]:
    """Cotangent of ``np.tensordot(a, b, axes)`` with respect to ``b``.

    >>> tensordot_vjp_b(np.ones(2), np.ones((2, 3)), np.arange(3.0), 1).tolist()
    [2.0, 2.0, 2.0]
    """
    a, b = np.asarray(a), np.asarray(b)
    xs, ys = _tensordot_axes(axes, a.ndim)
    xs = [x % a.ndim for x in xs] if a.ndim else xs
    ys = [y % b.ndim for y in ys] if b.ndim else ys
    a_free = [i for i in range(a.ndim) if i not in xs]
    b_free = [i for i in range(b.ndim) if i not in ys]
    n = len(a_free)
    r = np.tensordot(a, g, axes=(a_free, list(range(n))))
    # r's axes: a's contracted axes in a's order, then b's free axes
    xs_sorted = sorted(xs)
    source = {ax: len(xs) + j for j, ax in enumerate(b_free)}
    for x, y in zip(xs, ys):
        source[y] = xs_sorted.index(x)
    r = np.transpose(r, [source[i] for i in range(b.ndim)])
    return np.asarray(r, dtype=_float_dtype(b))


def inner_vjp_a(g: Any, a: Any, b: Any) -> NDArray[Any]:
    """Cotangent of ``np.inner(a, b)`` with respect to ``a`` (a product when one is 0-d).

    >>> inner_vjp_a(np.ones(2), np.ones((2, 3)), np.arange(3.0)).tolist()
    [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0:
        return np.asarray(np.sum(g * b), dtype=_float_dtype(a))
    if b.ndim == 0:
        return np.asarray(g * b, dtype=_float_dtype(a))
    return np.asarray(np.tensordot(g, b, b.ndim - 1), dtype=_float_dtype(a))


def inner_vjp_b(g: Any, a: Any, b: Any) -> NDArray[Any]:
    """Cotangent of ``np.inner(a, b)`` with respect to ``b``.

    >>> inner_vjp_b(np.ones(2), np.ones((2, 3)), np.arange(3.0)).tolist()
    [2.0, 2.0, 2.0]
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return inner_vjp_a(g, b, a)
    lead = list(range(a.ndim - 1))
    r = np.tensordot(a, g, axes=(lead, lead))  # (n, B...)
    return np.asarray(np.moveaxis(r, 0, -1), dtype=_float_dtype(b))


def kron_vjp(g: Any, a: Any, b: Any, first: bool) -> NDArray[Any]:
    """Cotangent of ``np.kron(a, b)`` with respect to ``a`` (``first``) or ``b``.

    >>> kron_vjp(np.ones(4), np.ones(2), np.array([1.0, 2.0]), True).tolist()
    [3.0, 3.0]
    """
    a, b = np.asarray(a), np.asarray(b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    pairs = tuple(n for ab in zip(sa, sb) for n in ab)
    gr = np.reshape(g, pairs)  # axes a0, b0, a1, b1, ...
    if first:
        r = np.sum(
            gr * np.reshape(b, tuple(n for m in sb for n in (1, m))),
            axis=tuple(range(1, 2 * nd, 2)),
        )
        return np.asarray(np.reshape(r, a.shape), dtype=_float_dtype(a))
    r = np.sum(
        gr * np.reshape(a, tuple(n for m in sa for n in (m, 1))), axis=tuple(range(0, 2 * nd, 2))
    )
    return np.asarray(np.reshape(r, b.shape), dtype=_float_dtype(b))


def cross_vjp(
    g: Any, a: Any, b: Any, axisa: int, axisb: int, axisc: int, axis: Any, first: bool
) -> NDArray[Any]:
    """Cotangent of ``np.cross(a, b, axisa, axisb, axisc, axis)`` with respect to ``a``
    (``first``) or ``b``: ``b x g`` and ``g x a``, with 2-vectors taken as 3-vectors of
    zero third component.

    >>> cross_vjp(np.array([0.0, 0.0, 1.0]), np.array([1.0, 0, 0]), np.array([0, 1.0, 0]),
    ...           -1, -1, -1, None, True).tolist()
    [1.0, 0.0, 0.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b, g = np.asarray(a), np.asarray(b), np.asarray(g)
    am, bm = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
    if am.shape[-1] == 2 and bm.shape[-1] == 2:  # a scalar result: the z component
        g3 = np.stack([np.zeros_like(g), np.zeros_like(g), g], axis=-1)
    else:
        g3 = np.moveaxis(g, axisc, -1)

    def three(v: NDArray[Any]) -> NDArray[Any]:
        if v.shape[-1] == 3:
            return v
        return np.concatenate([v, np.zeros(v.shape[:-1] + (1,), dtype=v.dtype)], axis=-1)

    x = am if first else bm
    r = np.cross(three(bm), g3) if first else np.cross(g3, three(am))
    r = _sum_to(r[..., : x.shape[-1]], x.shape)
    return np.asarray(np.moveaxis(r, -1, axisa if first else axisb), dtype=_float_dtype(x))


def multi_dot_jvp(arrays: Any, parts: Any) -> Any:
    """Tangent of ``np.linalg.multi_dot(arrays)``: the sum over the factors of the product
    with that factor replaced by its tangent (all-zero tangents are skipped).

    >>> multi_dot_jvp((np.eye(2), np.ones((2, 2))), (np.ones((2, 2)), 0.0)).tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    total: Any = None
    for k, part in enumerate(parts):
        if not np.any(part):
            continue
        factors = list(arrays)
        factors[k] = np.broadcast_to(part, np.shape(arrays[k]))
        term = np.linalg.multi_dot(factors)
        total = term if total is None else total + term
    if total is None:
        return np.zeros_like(np.linalg.multi_dot(list(arrays)))
    return total


def multi_dot_vjp(g: Any, arrays: Any, k: int) -> NDArray[Any]:
    """Cotangent of ``np.linalg.multi_dot(arrays)`` with respect to ``arrays[k]``
    (a 1-D first factor is a row, a 1-D last factor a column).

    >>> multi_dot_vjp(np.ones((2, 2)), (np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])), 0).tolist()
    [[3.0, 7.0], [3.0, 7.0]]
    """
    mats = [np.asarray(m) for m in arrays]
    x = mats[k]
    if mats[0].ndim == 1:
        mats[0] = mats[0][None, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, None]
    g2 = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    before, after = mats[:k], mats[k + 1 :]
    if before:
        left = before[0] if len(before) == 1 else np.linalg.multi_dot(before)
        g2 = left.T @ g2
    if after:
        right = after[0] if len(after) == 1 else np.linalg.multi_dot(after)
        g2 = g2 @ right.T
    return np.asarray(np.reshape(g2, x.shape), dtype=_float_dtype(x))


def vecdot_vjp(g: Any, x: Any, y: Any, axis: int = -1) -> NDArray[Any]:
    """Cotangent of ``np.vecdot(x, y, axis=axis)`` with respect to ``x``.

    >>> vecdot_vjp(np.array([1.0, 2.0]), np.ones((2, 3)), np.arange(3.0)).tolist()
    [[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]]
    """
    xm, ym = np.moveaxis(np.asarray(x), axis, -1), np.moveaxis(np.asarray(y), axis, -1)
    r = _sum_to(np.expand_dims(g, -1) * ym, xm.shape)
    return np.asarray(np.moveaxis(r, -1, axis), dtype=_float_dtype(x))


def take_vjp(g: Any, a: Any, indices: Any, axis: Any = None, mode: str = "raise") -> NDArray[Any]:
    """Cotangent of ``np.take(a, indices, axis, mode=mode)`` with respect to ``a``: ``g``
    scattered back, repeated indices adding up (as ``np.add.at``).

    >>> take_vjp(np.array([1.0, 2.0, 4.0]), np.zeros(3), [0, 2, 0]).tolist()
    [5.0, 0.0, 2.0]
    """
    shape = np.shape(a)
    out = np.zeros(shape, dtype=_float_dtype(a))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    idx = np.asarray(indices)
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    if axis is None:
        flat = out.reshape(-1)
        np.add.at(flat, idx, g)
        return flat.reshape(shape)
    where = (slice(None),) * (axis % len(shape)) + (idx,)
    np.add.at(out, where, g)
    return out


def take_along_axis_vjp(g: Any, arr: Any, indices: Any, axis: Any) -> NDArray[Any]:
    """Cotangent of ``np.take_along_axis(arr, indices, axis)`` with respect to ``arr``
    (repeated indices add up).

    >>> take_along_axis_vjp(np.ones((1, 3)), np.zeros((1, 2)), np.array([[0, 1, 0]]), 1).tolist()
    [[2.0, 1.0]]
    """
    shape = np.shape(arr)
    out = np.zeros(shape, dtype=_float_dtype(arr))
    idx = np.asarray(indices)
    if axis is None:
        flat = out.reshape(-1)
        np.add.at(flat, idx, g)
        return flat.reshape(shape)
    axis = axis % len(shape)
    g = np.asarray(g)
    where = []
    for i, n in enumerate(shape):
        if i == axis:
            where.append(idx)
        else:
            view = [1] * len(shape)
            view[i] = n
            where.append(np.arange(n).reshape(view))
    full = np.broadcast_shapes(*(w.shape for w in where))
    np.add.at(out, tuple(np.broadcast_to(w, full) for w in where), np.broadcast_to(g, full))
    return out


def select_vjp(g: Any, condlist: Any, choicelist: Any, k: int) -> Any:
    """Cotangent of ``np.select(condlist, choicelist, default)`` with respect to
    ``choicelist[k]``: ``g`` where condition ``k`` is the first that holds.

    >>> conds = [np.array([1, 0, 1]), np.array([1, 1, 0])]
    >>> select_vjp(np.ones(3), conds, [np.zeros(3)] * 2, 1).tolist()
    [0.0, 1.0, 0.0]
    """
    taken = np.asarray(condlist[k], dtype=bool)
    for c in condlist[:k]:
        taken = taken & ~np.asarray(c, dtype=bool)
    x = choicelist[k]
    r = _sum_to(np.where(taken, g, 0.0).astype(_float_dtype(x)), np.shape(x))
    if isinstance(x, (float, int)):
        return float(r)
    return np.asarray(r)


def select_otherwise(condlist: Any) -> Any:
    """Where no condition of ``np.select(condlist, ...)`` holds (where it takes ``default``).

    >>> select_otherwise([np.array([1, 0, 0]), np.array([0, 0, 1])]).tolist()
    [False, True, False]
    """
    none = ~np.asarray(condlist[0], dtype=bool)
    for c in condlist[1:]:
        none = none & ~np.asarray(c, dtype=bool)
    return none


def choose_vjp(g: Any, a: Any, choices: Any, k: int, mode: str = "raise") -> Any:
    """Cotangent of ``np.choose(a, choices, mode=mode)`` with respect to ``choices[k]``.

    >>> choose_vjp(np.ones(3), np.array([0, 1, 0]), [np.zeros(3), np.zeros(3)], 0).tolist()
    [1.0, 0.0, 1.0]
    """
    idx = np.asarray(a)
    n = len(choices)
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    x = choices[k]
    r = _sum_to(np.where(idx == k, g, 0.0).astype(_float_dtype(x)), np.shape(x))
    if isinstance(x, (float, int)):
        return float(r)
    return np.asarray(r)


# -- shaping helpers --
# Functions that copy entries of an array into a new shape (np.tile, np.repeat, np.pad,
# np.diag, np.insert...) are differentiated by applying the very same function to an array
# of *source indices*: each entry of the result then names the entry of the input it was
# copied from (0 for entries copied from nowhere), and the cotangent of the input sums the
# result's cotangent over the entries copied from it.


def source_index(x: ArrayLike) -> NDArray[Any]:
    """Integer array of ``x``'s shape numbering its entries from 1 (row-major order).

    >>> source_index(np.zeros((2, 2))).tolist()
    [[1, 2], [3, 4]]
    >>> source_index(2.0).shape
    ()
    """
    shape = np.shape(x)
    size = int(np.prod(shape, dtype=np.int64))
    return np.arange(1, size + 1, dtype=np.int64).reshape(shape)


def gathered_vjp(g: ArrayLike, x: ArrayLike, taken: ArrayLike) -> NDArray[Any]:
    """Cotangent of a result that copies entries of ``x``: ``taken`` (of the result's shape)
    holds, for each entry of the result, ``k`` if it is a copy of entry ``k - 1`` of
    ``x.ravel()`` and 0 if it comes from elsewhere. Copies accumulate.

    >>> x = np.zeros(2)
    >>> gathered_vjp(np.array([1.0, 2.0, 4.0]), x, np.repeat(source_index(x), [2, 1])).tolist()
    [3.0, 4.0]
    >>> gathered_vjp(np.array([1.0, 2.0, 4.0]), x, np.array([0, 2, 0])).tolist()
    [0.0, 2.0]
    """
    shape = np.shape(x)
    size = int(np.prod(shape, dtype=np.int64))
    dtype = np.result_type(g, x)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    taken = np.ravel(taken)
    g = np.broadcast_to(g, np.shape(taken) if np.ndim(g) == 0 else np.shape(g))
    g = np.ravel(g)
    hit = taken > 0
    sums = np.bincount(taken[hit] - 1, weights=g[hit], minlength=size)
    return sums.astype(dtype, copy=False).reshape(shape)


def rollaxis_destination(ndim: int, axis: int, start: int = 0) -> int:
    """Where ``np.rollaxis(a, axis, start)`` puts ``axis`` (``a`` has ``ndim`` axes), so
    that the roll equals ``np.moveaxis(a, axis, destination)``.

    >>> rollaxis_destination(3, 2, 0), rollaxis_destination(3, 0, 3), rollaxis_destination(3, 1, 2)
    (0, 2, 1)
    """
    axis = int(axis) % ndim
    start = int(start)
    if start < 0:
        start += ndim
    if axis < start:
        start -= 1
    return start


def pad_interior(shape: tuple[int, ...], pad_width: Any) -> tuple[slice, ...]:
    """The index of the original array inside ``np.pad(x, pad_width)`` for ``x`` of ``shape``.

    >>> pad_interior((3, 2), ((1, 2), (0, 1)))
    (slice(1, 4, None), slice(0, 2, None))
    >>> pad_interior((3,), 2)
    (slice(2, 5, None),)
    """
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (len(shape), 2))
    return tuple(slice(int(b), int(b) + n) for (b, _), n in zip(widths, shape, strict=True))


_COPYING_PAD_MODES = ("edge", "reflect", "symmetric", "wrap")


def copying_pad_mode(mode: Any) -> str:
    """``mode`` itself if ``np.pad`` fills the border with copies of entries (``'edge'``,
    ``'reflect'``, ``'symmetric'``, ``'wrap'``); other modes (statistics, ramps, callables)
    have no derivative rule and raise ``NotImplementedError``.

    >>> copying_pad_mode("wrap")
    'wrap'
    """
    if isinstance(mode, str) and mode in _COPYING_PAD_MODES:
        return mode
    modes = ", ".join(map(repr, _COPYING_PAD_MODES))
    raise NotImplementedError(
        f"adgen differentiates np.pad in modes 'constant', {modes} only, not {mode!r}"
    )


def inserted_tangent(arr: Any, obj: Any, dvalues: Any, axis: Any = None) -> Any:
    """Tangent of ``np.insert(arr, obj, values, axis)`` from the tangent of ``values``: zero
    when ``arr`` is not floating (``np.insert`` casts ``values`` to ``arr``'s dtype).

    >>> inserted_tangent(np.zeros(2), 1, 5.0).tolist()
    [0.0, 5.0, 0.0]
    >>> inserted_tangent(np.arange(2), 1, 5.0).tolist()
    [0.0, 0.0, 0.0]
    """
    if not np.issubdtype(np.result_type(arr), np.inexact):
        return np.zeros(np.shape(np.insert(arr, obj, 0, axis=axis)), dtype=np.result_type(dvalues))
    return np.insert(
        np.zeros(np.shape(arr), dtype=np.result_type(dvalues)), obj, dvalues, axis=axis
    )


def inserted_values_vjp(g: Any, arr: Any, obj: Any, values: Any, axis: Any = None) -> Any:
    """Cotangent of ``values`` in ``np.insert(arr, obj, values, axis)`` (cotangent ``g``):
    ``g`` summed over the slots each value was broadcast to; zero when ``arr`` is not
    floating.

    >>> inserted_values_vjp(np.arange(4.0), np.zeros(2), 1, np.zeros(2)).tolist()
    [1.0, 2.0]
    >>> float(inserted_values_vjp(np.arange(5.0).reshape(1, 5), np.zeros((1, 3)), [0, 2], 1.0, 1))
    3.0
    """
    if not np.issubdtype(np.result_type(arr), np.inexact):
        return gathered_vjp(np.zeros_like(g), values, np.zeros(np.shape(g), dtype=np.int64))
    slots = np.insert(np.zeros(np.shape(arr), dtype=np.int64), obj, source_index(values), axis=axis)
    return gathered_vjp(g, values, slots)


# -- reductions, scans and statistics helpers --


def _float_dtype(*xs: Any) -> Any:
    """The floating dtype derivatives of ``xs`` take (float64 for integer inputs)."""
    dtype = np.result_type(*xs)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def _linear_scan(a: NDArray[Any], b: NDArray[Any]) -> NDArray[Any]:
    """``s`` with ``s[..., i] = a[..., i] * s[..., i - 1] + b[..., i]`` (``s[..., -1] = 0``),
    by recursive doubling along the last axis: only products and sums, no division.

    >>> _linear_scan(np.array([2.0, 0.0, 3.0]), np.array([1.0, 1.0, 1.0])).tolist()
    [1.0, 1.0, 4.0]
    """
    a, b = np.array(a), np.array(b)
    n = a.shape[-1]
    k = 1
    while k < n:
        b_new = b.copy()
        b_new[..., k:] = b[..., k:] + a[..., k:] * b[..., :-k]
        a_new = a.copy()
        a_new[..., k:] = a[..., k:] * a[..., :-k]
        a, b = a_new, b_new
        k *= 2
    return b


def _exclusive_cumprod(x: NDArray[Any]) -> NDArray[Any]:
    """``prod(x[..., :i])`` at ``i`` along the last axis (1 at ``i = 0``), without division."""
    ones = np.ones(x.shape[:-1] + (1,), dtype=x.dtype)
    return np.concatenate([ones, np.cumprod(x[..., :-1], axis=-1)], axis=-1)


def _scan_axis(x: Any, axis: int | None) -> tuple[NDArray[Any], int]:
    """``x`` as an array scanned along ``axis`` (raveled when ``axis`` is None), and the axis."""
    x = np.asarray(x)
    if axis is None:
        return np.ravel(x), 0
    return x, int(axis) % max(x.ndim, 1)


def cumprod_jvp(
    dx: ArrayLike, x: ArrayLike, axis: int | None = None, include_initial: bool = False
) -> NDArray[Any]:
    """Tangent of ``np.cumprod(x, axis)`` (``np.cumulative_prod`` with ``include_initial``).

    Exact when ``x`` holds zeros: ``t[i] = x[i] * t[i-1] + prod(x[:i]) * dx[i]``, solved by a
    scan of products and sums (no division by ``x``).

    >>> cumprod_jvp(np.array([1.0, 1.0, 1.0]), np.array([2.0, 0.0, 3.0])).tolist()
    [1.0, 2.0, 6.0]
    """
    dtype = _float_dtype(x, dx)
    xs, ax = _scan_axis(x, axis)
    ds = np.broadcast_to(np.asarray(dx, dtype=dtype).reshape(np.shape(x)), np.shape(x))
    ds = np.ravel(ds) if axis is None else ds
    xm = np.moveaxis(xs, ax, -1).astype(dtype)
    dm = np.moveaxis(ds, ax, -1)
    t = _linear_scan(xm, _exclusive_cumprod(xm) * dm)
    if include_initial:
        t = np.concatenate([np.zeros(t.shape[:-1] + (1,), dtype=dtype), t], axis=-1)
    return np.moveaxis(t, -1, ax)


def cumprod_vjp(
    g: ArrayLike, x: ArrayLike, axis: int | None = None, include_initial: bool = False
) -> NDArray[Any]:
    """Cotangent of ``np.cumprod(x, axis)`` with respect to ``x``, exact with zeros in ``x``.

    ``x̄[j] = prod(x[:j]) * r[j]`` with ``r[j] = g[j] + x[j+1] * r[j+1]`` (a scan, no division).

    >>> cumprod_vjp(np.ones(3), np.array([2.0, 0.0, 3.0])).tolist()
    [1.0, 8.0, 0.0]
    """
    dtype = _float_dtype(x, g)
    xs, ax = _scan_axis(x, axis)
    xm = np.moveaxis(xs, ax, -1).astype(dtype)
    gm = np.moveaxis(np.asarray(g, dtype=dtype), ax, -1)
    if include_initial:
        gm = gm[..., 1:]
    # r[j] = g[j] + x[j+1] r[j+1]: a forward scan over the reversed axis
    shifted = np.concatenate([np.zeros(xm.shape[:-1] + (1,), dtype=dtype), xm[..., :0:-1]], -1)
    r = _linear_scan(shifted, gm[..., ::-1])[..., ::-1]
    out = np.moveaxis(_exclusive_cumprod(xm) * r, -1, ax)
    return np.reshape(out, np.shape(x))


def cumsum_vjp(
    g: ArrayLike, x: ArrayLike, axis: int | None = None, include_initial: bool = False
) -> NDArray[Any]:
    """Cotangent of ``np.cumsum(x, axis)`` with respect to ``x``: reversed cumulative sums.

    >>> cumsum_vjp(np.array([1.0, 2.0, 3.0]), np.zeros(3)).tolist()
    [6.0, 5.0, 3.0]
    """
    dtype = _float_dtype(x, g)
    _, ax = _scan_axis(x, axis)
    gm = np.moveaxis(np.asarray(g, dtype=dtype), ax, -1)
    if include_initial:
        gm = gm[..., 1:]
    out = np.moveaxis(np.cumsum(gm[..., ::-1], axis=-1)[..., ::-1], -1, ax)
    return np.reshape(out, np.shape(x))


def _tie_average(v: NDArray[Any], xs: NDArray[Any]) -> NDArray[Any]:
    """Average ``v`` over runs of equal values of the sorted ``xs`` (last axis).

    >>> _tie_average(np.array([1.0, 2.0, 4.0, 8.0]), np.array([0.0, 1.0, 1.0, 2.0])).tolist()
    [1.0, 3.0, 3.0, 8.0]
    """
    n = xs.shape[-1]
    if n == 0:
        return v
    idx = np.arange(n)
    start = np.ones(xs.shape, dtype=bool)
    start[..., 1:] = xs[..., 1:] != xs[..., :-1]
    end = np.ones(xs.shape, dtype=bool)
    end[..., :-1] = start[..., 1:]
    s = np.maximum.accumulate(np.where(start, idx, 0), axis=-1)
    e = np.minimum.accumulate(np.where(end, idx + 1, n)[..., ::-1], axis=-1)[..., ::-1]
    if np.all(e - s == 1):
        return v
    zero = np.zeros(v.shape[:-1] + (1,), dtype=v.dtype)
    cs = np.concatenate([zero, np.cumsum(v, axis=-1)], axis=-1)
    s_b = np.broadcast_to(s, v.shape)
    e_b = np.broadcast_to(e, v.shape)
    total = np.take_along_axis(cs, e_b, -1) - np.take_along_axis(cs, s_b, -1)
    return (total / (e_b - s_b)).astype(v.dtype)


def _sorted_along(x: Any, axis: int | None) -> tuple[NDArray[Any], int, NDArray[Any]]:
    """``(x moved so that axis is last, that axis, stable argsort along it)``."""
    xs, ax = _scan_axis(x, axis)
    xm = np.moveaxis(xs, ax, -1)
    return xm, ax, np.argsort(xm, axis=-1, kind="stable")


def sort_jvp(dx: ArrayLike, x: ArrayLike, axis: int | None = -1) -> NDArray[Any]:
    """Tangent of ``np.sort(x, axis)``: ``dx`` permuted like ``x``; tied entries of ``x``
    share the average of their tangents.

    >>> sort_jvp(np.array([1.0, 2.0, 3.0]), np.array([3.0, 1.0, 2.0])).tolist()
    [2.0, 3.0, 1.0]
    """
    dtype = _float_dtype(x, dx)
    xm, ax, order = _sorted_along(x, axis)
    d = np.broadcast_to(np.asarray(dx, dtype=dtype), np.shape(x))
    dm = np.moveaxis(np.ravel(d) if axis is None else d, ax, -1)
    out = _tie_average(np.take_along_axis(dm, order, -1), np.take_along_axis(xm, order, -1))
    return np.moveaxis(out, -1, ax)


def sort_vjp(g: ArrayLike, x: ArrayLike, axis: int | None = -1) -> NDArray[Any]:
    """Cotangent of ``np.sort(x, axis)`` with respect to ``x`` (the adjoint of
    :func:`sort_jvp`).

    >>> sort_vjp(np.array([1.0, 2.0, 3.0]), np.array([3.0, 1.0, 2.0])).tolist()
    [3.0, 1.0, 2.0]
    """
    dtype = _float_dtype(x, g)
    xm, ax, order = _sorted_along(x, axis)
    gm = np.moveaxis(np.asarray(g, dtype=dtype), ax, -1)
    gm = _tie_average(gm, np.take_along_axis(xm, order, -1))
    out = np.zeros(xm.shape, dtype=dtype)
    np.put_along_axis(out, order, gm, axis=-1)
    return np.reshape(np.moveaxis(out, -1, ax), np.shape(x))


def quantile_weights(
    x: ArrayLike, q: ArrayLike, axis: Axis = None, ignore_nan: bool = False
) -> NDArray[Any]:
    """``w`` of shape ``np.shape(q) + np.shape(x)`` with ``np.quantile(x, q, axis)`` equal to
    ``np.sum(w * x)`` over the reduced axes (default linear method): weights ``1 - t`` and
    ``t`` on the two order statistics around the virtual index ``q * (n - 1)``. Tied entries
    share the weight of their run of order statistics evenly. With ``ignore_nan`` (nanmedian,
    nanquantile), NaN entries are left out and get weight 0.

    >>> quantile_weights(np.array([4.0, 1.0, 3.0, 2.0]), 0.5).tolist()
    [0.0, 0.0, 0.5, 0.5]
    >>> quantile_weights(np.array([1.0, 2.0, 2.0]), 0.5).tolist()
    [0.0, 0.5, 0.5]
    """
    x = np.asarray(x)
    dtype = _float_dtype(x)
    qa = np.asarray(q, dtype=np.float64)
    axes = _normalize_axes(axis, x.ndim)
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    perm = kept + axes
    xt = np.transpose(x, perm)
    batch = xt.shape[: len(kept)]
    xm = xt.reshape(batch + (-1,))
    n = int(np.shape(xm)[-1])
    order = np.argsort(xm, axis=-1, kind="stable")
    xs = np.take_along_axis(xm, order, -1)
    valid = np.sum(~np.isnan(xm), axis=-1) if ignore_nan else np.full(batch, n)
    qb = qa.reshape(qa.shape + (1,) * len(batch))
    v = qb * (np.maximum(valid, 1) - 1)  # shape q + batch
    lo = np.floor(v).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(valid, 1) - 1)
    t = v - lo
    pos = np.arange(n)
    ws = (pos == lo[..., None]) * (1.0 - t)[..., None] + (pos == hi[..., None]) * t[..., None]
    ws = np.where((valid > 0)[..., None], ws, 0.0)
    ws = _tie_average(np.asarray(ws, dtype=dtype), xs)
    w = np.zeros(ws.shape, dtype=dtype)
    np.put_along_axis(w, np.broadcast_to(order, ws.shape), ws, axis=-1)
    w = w.reshape(qa.shape + xt.shape)
    k = qa.ndim
    return np.transpose(w, tuple(range(k)) + tuple(k + i for i in np.argsort(perm)))


def quantile_jvp(
    dx: ArrayLike,
    x: ArrayLike,
    q: ArrayLike,
    axis: Axis = None,
    keepdims: bool = False,
    ignore_nan: bool = False,
) -> Any:
    """Tangent of ``np.quantile(x, q, axis, keepdims=keepdims)`` (and of median, percentile
    with ``q / 100``, and the NaN-ignoring variants with ``ignore_nan``).

    >>> float(quantile_jvp(np.array([1.0, 10.0, 100.0]), np.array([3.0, 1.0, 2.0]), 0.25))
    55.0
    """
    x = np.asarray(x)
    w = quantile_weights(x, q, axis, ignore_nan)
    dtype = _float_dtype(x, dx)
    d = np.where(np.isnan(x), 0.0, np.asarray(dx, dtype=dtype)) if ignore_nan else dx
    k = np.ndim(q)
    axes = tuple(k + a for a in _normalize_axes(axis, x.ndim))
    return np.sum(w * d, axis=axes, keepdims=keepdims).astype(dtype)


def quantile_vjp(
    g: ArrayLike,
    x: ArrayLike,
    q: ArrayLike,
    axis: Axis = None,
    keepdims: bool = False,
    ignore_nan: bool = False,
) -> NDArray[Any]:
    """Cotangent of ``np.quantile(x, q, axis, keepdims=keepdims)`` with respect to ``x``.

    >>> quantile_vjp(1.0, np.array([3.0, 1.0, 2.0]), 0.25).tolist()
    [0.0, 0.5, 0.5]
    """
    x = np.asarray(x)
    w = quantile_weights(x, q, axis, ignore_nan)
    dtype = _float_dtype(x, g)
    k = np.ndim(q)
    g = np.asarray(g, dtype=dtype)
    if not keepdims:
        g = np.expand_dims(g, tuple(k + a for a in _normalize_axes(axis, x.ndim)))
    return np.sum(w * g, axis=tuple(range(k))).astype(dtype)


def diff_vjp(
    g: ArrayLike,
    x: ArrayLike,
    n: int = 1,
    axis: int = -1,
    prepend: Any = None,
    append: Any = None,
) -> NDArray[Any]:
    """Cotangent of ``np.diff(x, n, axis, prepend=..., append=...)`` with respect to ``x``:
    ``(-1)**n`` times the ``n``-th difference of ``g`` padded with ``n`` zeros on each side.

    >>> diff_vjp(np.array([1.0, 2.0]), np.zeros(3)).tolist()
    [-1.0, -1.0, 2.0]
    """
    x = np.asarray(x)
    dtype = _float_dtype(x, g)
    ax = int(axis) % x.ndim
    gm = np.moveaxis(np.asarray(g, dtype=dtype), ax, -1)
    if n == 0:
        full = gm
    else:
        pad = np.zeros(gm.shape[:-1] + (n,), dtype=dtype)
        full = (-1) ** n * np.diff(np.concatenate([pad, gm, pad], axis=-1), n=n, axis=-1)
    before = 0 if prepend is None else (np.shape(prepend)[ax] if np.ndim(prepend) else 1)
    full = full[..., before : before + x.shape[ax]]
    return np.moveaxis(full, -1, ax)


def trapezoid_y_weights(y: ArrayLike, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """``w`` (broadcastable to ``y``) with ``np.trapezoid(y, x, dx, axis)`` equal to
    ``np.sum(w * y, axis)``: half the spacings around each sample.

    >>> trapezoid_y_weights(np.zeros(4), dx=2.0).tolist()
    [1.0, 2.0, 2.0, 1.0]
    """
    y = np.asarray(y)
    ax = int(axis) % y.ndim
    if x is None:
        d = np.full(y.shape[ax] - 1, dx, dtype=_float_dtype(y, dx))
        shape = [1] * y.ndim
        shape[ax] = -1
        d = d.reshape(shape)
    else:
        xa = np.asarray(x)
        d = np.diff(xa, axis=-1 if xa.ndim == 1 else ax)
        if xa.ndim == 1:
            shape = [1] * y.ndim
            shape[ax] = -1
            d = d.reshape(shape)
    dm = np.moveaxis(np.asarray(d), ax if np.ndim(d) == y.ndim else -1, -1)
    zero = np.zeros(dm.shape[:-1] + (1,), dtype=dm.dtype)
    w = 0.5 * (np.concatenate([zero, dm], -1) + np.concatenate([dm, zero], -1))
    return np.moveaxis(w, -1, ax)


def trapezoid_vjp_y(
    g: ArrayLike, y: ArrayLike, x: Any = None, dx: Any = 1.0, axis: int = -1
) -> NDArray[Any]:
    """Cotangent of ``np.trapezoid(y, x, dx, axis)`` with respect to ``y``.

    >>> trapezoid_vjp_y(1.0, np.zeros(3), np.array([0.0, 1.0, 3.0])).tolist()
    [0.5, 1.5, 1.0]
    """
    y = np.asarray(y)
    dtype = _float_dtype(y, g)
    w = trapezoid_y_weights(y, x, dx, axis)
    ge = np.expand_dims(np.asarray(g, dtype=dtype), int(axis) % y.ndim)
    return unbroadcast(np.broadcast_to(ge * w, y.shape), y).astype(dtype)  # type: ignore[union-attr]


def trapezoid_vjp_x(g: ArrayLike, y: ArrayLike, x: ArrayLike, axis: int = -1) -> NDArray[Any]:
    """Cotangent of ``np.trapezoid(y, x, axis=axis)`` with respect to the sample points ``x``
    (1-d along ``axis``, or of ``y``'s shape).

    >>> trapezoid_vjp_x(1.0, np.array([1.0, 1.0, 1.0]), np.array([0.0, 1.0, 3.0])).tolist()
    [-1.0, 0.0, 1.0]
    """
    y = np.asarray(y)
    xa = np.asarray(x)
    dtype = _float_dtype(xa, g)
    ax = int(axis) % y.ndim
    ym = np.moveaxis(y, ax, -1)
    avg = 0.5 * (ym[..., 1:] + ym[..., :-1])  # the cotangent of diff(x) is g * avg
    gd = np.expand_dims(np.asarray(g, dtype=dtype), -1) * avg
    zero = np.zeros(gd.shape[:-1] + (1,), dtype=gd.dtype)
    gx = np.concatenate([zero, gd], -1) - np.concatenate([gd, zero], -1)
    if xa.ndim == 1:
        return np.sum(gx.reshape(-1, gx.shape[-1]), axis=0).astype(dtype)
    return unbroadcast(np.moveaxis(gx, -1, ax), xa).astype(dtype)  # type: ignore[union-attr]


def _cov_rows(m: Any, y: Any, rowvar: bool) -> NDArray[Any]:
    """The variables-by-observations matrix ``np.cov`` works on (float64)."""
    x = np.array(m, ndmin=2, dtype=np.float64)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        ya = np.array(y, ndmin=2, dtype=np.float64)
        if not rowvar and ya.shape[0] != 1:
            ya = ya.T
        x = np.concatenate((x, ya), axis=0)
    return x


def _cov_part(d: Any, which: int, m: Any, y: Any, rowvar: bool) -> NDArray[Any]:
    """The tangent ``d`` of ``m`` (which=0) or ``y`` (which=1) as rows of :func:`_cov_rows`."""
    zm = np.zeros(np.shape(m)) if which else d
    zy = None if y is None else (d if which else np.zeros(np.shape(y)))
    return _cov_rows(zm, zy, rowvar)


def _cov_factor(x: NDArray[Any], bias: bool, ddof: Any) -> Any:
    if ddof is None:
        ddof = 0 if bias else 1
    return x.shape[1] - ddof


def cov_jvp(
    d: ArrayLike,
    which: int,
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: Any = None,
) -> Any:
    """Tangent of ``np.cov(m, y, rowvar, bias, ddof)`` for the tangent ``d`` of ``m``
    (``which=0``) or ``y`` (``which=1``): ``(dX Xcᵀ + Xc dXᵀ) / (N - ddof)``.

    >>> cov_jvp(np.array([1.0, 0.0]), 0, np.array([1.0, 3.0])).tolist()
    -2.0
    """
    x = _cov_rows(m, y, rowvar)
    xc = x - np.mean(x, axis=1, keepdims=True)
    dx = _cov_part(d, which, m, y, rowvar)
    out = (dx @ xc.T + xc @ dx.T) / _cov_factor(x, bias, ddof)
    return out.squeeze()


def cov_vjp(
    g: ArrayLike,
    which: int,
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: Any = None,
) -> NDArray[Any]:
    """Cotangent of ``np.cov(m, y, rowvar, bias, ddof)`` with respect to ``m`` (``which=0``)
    or ``y`` (``which=1``): ``(G + Gᵀ) Xc / (N - ddof)``, in the argument's dtype.

    >>> cov_vjp(1.0, 0, np.array([1.0, 3.0])).tolist()
    [-2.0, 2.0]
    """
    x = _cov_rows(m, y, rowvar)
    xc = x - np.mean(x, axis=1, keepdims=True)
    k = x.shape[0]
    gm = np.broadcast_to(np.asarray(g, dtype=np.float64).reshape(-1), (k * k,)).reshape(k, k)
    gx = (gm + gm.T) @ xc / _cov_factor(x, bias, ddof)
    arg = np.asarray(y if which else m)
    k0 = _cov_rows(m, None, rowvar).shape[0]
    part = gx[k0:] if which else gx[:k0]
    if not rowvar and np.array(arg, ndmin=2).shape[0] != 1:
        part = part.T
    return part.reshape(arg.shape).astype(_float_dtype(arg))


def corrcoef_jvp(d: ArrayLike, which: int, x: Any, y: Any = None, rowvar: bool = True) -> Any:
    """Tangent of ``np.corrcoef(x, y, rowvar)`` for the tangent ``d`` of ``x`` (``which=0``)
    or ``y`` (``which=1``).

    >>> float(corrcoef_jvp(np.array([1.0, 0.0]), 0, np.array([1.0, 3.0])))
    0.0
    """
    c = np.cov(x, y, rowvar)
    dc = cov_jvp(d, which, x, y, rowvar)
    if np.ndim(c) == 0:
        return np.zeros_like(c)
    s = np.sqrt(np.diag(c))
    r = c / np.outer(s, s)
    h = np.diag(dc) / (2.0 * np.diag(c))
    return dc / np.outer(s, s) - r * (h[:, None] + h[None, :])


def corrcoef_vjp(g: ArrayLike, which: int, x: Any, y: Any = None, rowvar: bool = True) -> Any:
    """Cotangent of ``np.corrcoef(x, y, rowvar)`` with respect to ``x`` (``which=0``) or
    ``y`` (``which=1``).

    >>> corrcoef_vjp(1.0, 0, np.array([1.0, 3.0])).tolist()
    [0.0, 0.0]
    """
    c = np.cov(x, y, rowvar)
    arg = np.asarray(y if which else x)
    if np.ndim(c) == 0:
        return np.zeros(arg.shape, dtype=_float_dtype(arg))
    gm = np.asarray(g, dtype=np.float64)
    s = np.sqrt(np.diag(c))
    r = c / np.outer(s, s)
    gc = gm / np.outer(s, s)
    gr = gm * r
    gc = gc - np.diag((np.sum(gr, axis=1) + np.sum(gr, axis=0)) / (2.0 * np.diag(c)))
    return cov_vjp(gc, which, x, y, rowvar)


def _full_cotangent(g: ArrayLike, n: int, m: int, mode: str) -> NDArray[Any]:
    """``g`` (the cotangent of ``np.convolve(a, v, mode)``, ``len(a) = n``, ``len(v) = m``)
    placed in the ``n + m - 1`` entries of the full convolution, zeros elsewhere."""
    g = np.asarray(g)
    full = np.zeros(n + m - 1, dtype=g.dtype)
    if mode == "full":
        start = 0
    elif mode == "same":
        start = (min(n, m) - 1) // 2
    else:
        start = min(n, m) - 1
    full[start : start + g.shape[0]] = g
    return full


def convolve_vjp(g: ArrayLike, a: ArrayLike, v: ArrayLike, mode: str, which: int) -> Any:
    """Cotangent of ``np.convolve(a, v, mode)`` with respect to ``a`` (``which=0``) or ``v``
    (``which=1``): the full cotangent correlated with the other operand.

    >>> convolve_vjp(np.ones(4), np.array([1.0, 2.0]), np.array([1.0, 1.0, 1.0]), "full", 0)
    array([3., 3.])
    """
    a, v = np.asarray(a), np.asarray(v)
    dtype = _float_dtype(a, v, g)
    full = _full_cotangent(np.asarray(g, dtype=dtype), a.shape[0], v.shape[0], mode)
    other = v if which == 0 else a
    return np.correlate(full, other.astype(dtype), "valid")


def correlate_vjp(g: ArrayLike, a: ArrayLike, v: ArrayLike, mode: str, which: int) -> Any:
    """Cotangent of ``np.correlate(a, v, mode)`` (real: ``np.convolve(a, v[::-1], mode)``)
    with respect to ``a`` (``which=0``) or ``v`` (``which=1``).

    >>> correlate_vjp(np.ones(2), np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0]), "valid", 1)
    array([3., 5.])
    """
    vr = np.asarray(v)[::-1]
    out = convolve_vjp(g, a, vr, mode, which)
    return out if which == 0 else out[::-1]


def _average_shape(w: Any, a: Any, axis: Axis) -> tuple[int, ...]:
    """The shape ``np.average`` gives weights ``w`` before broadcasting them against ``a``."""
    if np.shape(w) == np.shape(a):
        return np.shape(w)
    axes = _normalize_axes(axis, np.ndim(a))
    return tuple(s if i in axes else 1 for i, s in enumerate(np.shape(a)))


def average_weights(w: ArrayLike, a: ArrayLike, axis: Axis = None) -> NDArray[Any]:
    """The weights of ``np.average(a, axis, weights=w)`` broadcast to ``a``'s shape (1-d
    weights lie along ``axis``).

    >>> average_weights(np.array([1.0, 2.0]), np.zeros((3, 2)), axis=1).tolist()[0]
    [1.0, 2.0]
    """
    return np.broadcast_to(np.reshape(w, _average_shape(w, a, axis)), np.shape(a))


def average_weights_vjp(g: ArrayLike, w: ArrayLike, a: ArrayLike, axis: Axis = None) -> Any:
    """The adjoint of :func:`average_weights`: ``g`` summed back to the weights' shape.

    >>> average_weights_vjp(np.ones((3, 2)), np.ones(2), np.zeros((3, 2)), axis=1).tolist()
    [3.0, 3.0]
    """
    small = np.zeros(_average_shape(w, a, axis))
    return np.reshape(unbroadcast(g, small), np.shape(w))


def diff_jvp(
    dx: ArrayLike, x: ArrayLike, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None
) -> NDArray[Any]:
    """Tangent of ``np.diff(x, n, axis, prepend=..., append=...)`` for constant ``prepend`` and
    ``append`` (their tangents are zeros), in ``dx``'s dtype.

    >>> diff_jvp(np.array([1.0, 2.0]), np.zeros(2), prepend=5.0, append=7.0).tolist()
    [1.0, 1.0, -2.0]
    """
    d = np.asarray(dx)
    ax = int(axis) % d.ndim
    parts = [d]
    for extra, where in ((prepend, 0), (append, 1)):
        if extra is None:
            continue
        shape = list(d.shape)
        shape[ax] = np.shape(extra)[ax] if np.ndim(extra) else 1
        zeros = np.zeros(shape, dtype=d.dtype)
        parts = [zeros, *parts] if where == 0 else [*parts, zeros]
    return np.diff(np.concatenate(parts, axis=ax), n=n, axis=ax)


# -- elementwise helpers --


def _interp_segments(x: Any, xp: Any) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """For each ``x``: the segment ``[xp[j], xp[j + 1]]`` holding it (``xp[j] <= x < xp[j + 1]``,
    the last one at ``xp[-1]``), and masks of the points left of ``xp[0]`` / right of ``xp[-1]``."""
    xv = np.asarray(x)
    xp = np.asarray(xp)
    seg = np.clip(np.searchsorted(xp, xv, side="right") - 1, 0, max(xp.size - 2, 0))
    return seg, xv < xp[0], xv > xp[-1]


def interp_slope(x: Any, xp: Any, fp: Any) -> Any:
    """d np.interp(x, xp, fp) / dx: the slope of the segment holding each ``x`` (``xp``
    increasing); at an inner knot the slope of the segment to its right, at ``xp[-1]`` that
    of the last segment, outside ``[xp[0], xp[-1]]`` (constant there) 0.

    >>> x = np.array([-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
    >>> interp_slope(x, [0.0, 1.0, 2.0], [0.0, 2.0, 3.0]).tolist()
    [0.0, 2.0, 2.0, 1.0, 1.0, 1.0, 0.0]
    """
    xp_a = np.asarray(xp)
    fp_a = np.asarray(fp)
    seg, left, right = _interp_segments(x, xp_a)
    if xp_a.size < 2:
        slope = np.zeros(np.shape(seg), dtype=np.result_type(fp_a, 0.0))
    else:
        slope = (np.diff(fp_a) / np.diff(xp_a))[seg]
    return np.where(left | right, 0.0, slope)


def interp_vjp_fp(g: Any, x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None) -> Any:
    """The cotangent of ``fp`` in ``np.interp(x, xp, fp, left, right)``: each ``g`` shared
    between the two knots around its ``x`` by the interpolation weights; outside the knots,
    to the end knot when ``left``/``right`` is None, else nowhere (a constant was returned).

    >>> xp, fp = [0.0, 1.0], [0.0, 0.0]
    >>> interp_vjp_fp(np.ones(3), np.array([-1.0, 0.25, 5.0]), xp, fp).tolist()
    [1.75, 1.25]
    >>> interp_vjp_fp(np.ones(2), np.array([-1.0, 5.0]), xp, fp, left=0.0).tolist()
    [0.0, 1.0]
    """
    fp_a = np.asarray(fp)
    xp_a = np.asarray(xp)
    n = xp_a.size
    dtype = fp_a.dtype if fp_a.dtype.kind == "f" else np.float64
    xv = np.ravel(x)  # the result has the shape of x
    gv = np.ravel(np.broadcast_to(g, np.shape(x)))
    seg, lo, hi = _interp_segments(xv, xp_a)
    inside = ~(lo | hi)
    out = np.zeros(n, dtype=np.float64)
    if n >= 2:
        t = (xv - xp_a[seg]) / (xp_a[seg + 1] - xp_a[seg])
        w = np.where(inside, gv, 0.0)
        np.add.at(out, seg, w * (1.0 - t))
        np.add.at(out, seg + 1, w * t)
    else:
        out[0] += np.sum(np.where(inside, gv, 0.0))
    if left is None:
        out[0] += np.sum(np.where(lo, gv, 0.0))
    if right is None:
        out[-1] += np.sum(np.where(hi, gv, 0.0))
    return out.astype(dtype, copy=False)


def _polyder_coefficients(p: Any) -> NDArray[Any]:
    """The coefficients of p' for ``np.polyval``'s coefficients ``p`` (highest power first,
    along the first axis; more axes broadcast with ``x``)."""
    p = np.asarray(p)
    n = p.shape[0]
    powers = np.arange(n - 1, 0, -1).reshape((n - 1,) + (1,) * (p.ndim - 1))
    return p[:-1] * powers.astype(p.dtype if p.dtype.kind == "f" else np.float64)


def polyval_dx(p: Any, x: Any) -> Any:
    """d np.polyval(p, x) / dx = np.polyval(p', x) (0 for a constant polynomial).

    >>> polyval_dx(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0])).tolist()
    [2.0, 4.0]
    """
    d = _polyder_coefficients(p)
    if d.shape[0] == 0:
        return np.zeros(np.shape(np.polyval(p, x)), dtype=np.result_type(p, x, 0.0))
    return np.polyval(d, x)


def polyval_vjp_p(g: Any, p: Any, x: Any) -> NDArray[Any]:
    """The cotangent of the coefficients ``p`` in ``np.polyval(p, x)``: ``p[k]`` multiplies
    ``x ** (n - 1 - k)``.

    >>> polyval_vjp_p(np.ones(2), np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0])).tolist()
    [13.0, 5.0, 2.0]
    """
    p_a = np.asarray(p)
    n = p_a.shape[0]
    dtype = p_a.dtype if p_a.dtype.kind == "f" else np.float64
    out = np.zeros(p_a.shape, dtype=dtype)
    power = np.ones_like(np.asarray(x), dtype=np.result_type(x, 0.0))
    for k in range(n - 1, -1, -1):
        out[k] = unbroadcast(g * power, p_a[k])
        power = power * x
    return out


# -- np.linalg helpers --


def require_square(a: Any, what: str) -> None:
    """Raise ``ValueError`` unless ``a`` is a (stack of) square matrices: derivative code of
    ``what`` holds only for square inputs there (it is checked when that code runs).

    >>> require_square(np.eye(2), "np.linalg.svd with full_matrices=True")
    >>> require_square(np.ones((3, 2)), "np.linalg.svd")
    Traceback (most recent call last):
    ...
    ValueError: adgen: the derivative of np.linalg.svd needs square matrices, not shape (3, 2)
    """
    shape = np.shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(
            f"adgen: the derivative of {what} needs square matrices, not shape {shape}"
        )


def _norm_axes(ndim: int, ord: Any, axis: Axis, kind: str) -> tuple[tuple[int, ...], bool]:
    """The axes a norm reduces and whether it is a matrix norm (NumPy's rules)."""
    if kind == "matrix":
        return _normalize_axes((-2, -1), ndim), True
    axes = _normalize_axes(axis, ndim)
    if kind == "vector":
        return axes, False
    if axis is None:
        return axes, ord is not None and ndim == 2
    return axes, len(axes) == 2


def norm_grad(
    ans: Any, x: Any, ord: Any = None, axis: Axis = None, keepdims: bool = False, kind: str = "norm"
) -> NDArray[Any]:
    """The derivative of each norm in ``ans`` w.r.t. the entries of ``x`` it reduces (shape
    of ``x``): the norm's tangent is ``np.sum(norm_grad(...) * dx, axis, keepdims)`` and its
    cotangent ``unreduce(g, x, axis, keepdims) * norm_grad(...)``.

    ``kind`` is ``"norm"`` (``np.linalg.norm``), ``"vector"`` (``np.linalg.vector_norm``,
    several axes flattened) or ``"matrix"`` (``np.linalg.matrix_norm``, the last two axes).
    Conventions where the norm has a kink: 0 for a zero norm (every ord); ``sign(0) = 0``
    for the 1-norms; ties of the ``inf`` / ``-inf`` / matrix 1 and inf norms share the
    derivative evenly; the matrix 2 / -2 norms take the first / last singular pair NumPy
    returns; the nuclear norm takes ``u vᵀ`` over the singular values above the rank
    tolerance of ``np.linalg.matrix_rank`` (the least-norm subgradient).

    >>> norm_grad(5.0, np.array([3.0, -4.0])).tolist()
    [0.6, -0.8]
    >>> norm_grad(0.0, np.zeros(2)).tolist()
    [0.0, 0.0]
    >>> norm_grad(2.0, np.array([2.0, -2.0, 1.0]), np.inf).tolist()
    [0.5, -0.5, 0.0]
    """
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x = x.astype(dtype, copy=False)
    axes, matrix = _norm_axes(x.ndim, ord, axis, kind)
    r = np.asarray(ans, dtype=dtype)
    if not keepdims:
        r = np.expand_dims(r, axes)
    safe = np.where(r == 0, 1, r)
    if not matrix:
        if ord is None or ord == 2:
            out = x / safe
        elif ord == 0:
            out = np.zeros_like(x)
        elif ord == 1:
            out = np.sign(x)
        elif ord in (np.inf, -np.inf):
            hit = (np.abs(x) == r).astype(dtype)
            out = np.sign(x) * hit / np.sum(hit, axis=axes, keepdims=True)
        else:  # 0 where the norm is 0 (for ord < 1 that is not 0 * inf)
            with np.errstate(divide="ignore", invalid="ignore"):
                out = np.where(r == 0, 0, np.sign(x) * (np.abs(x) / safe) ** (ord - 1))
        return np.asarray(out, dtype=dtype)
    if ord is None or ord == "fro":
        return np.asarray(x / safe, dtype=dtype)
    if kind != "matrix" and axis is not None:  # (row axis, column axis), in that order
        axes = tuple(int(a) % x.ndim for a in axis)  # type: ignore[union-attr]
    xm = np.moveaxis(x, axes, (-2, -1))
    if ord in (1, -1, np.inf, -np.inf):
        along = -2 if ord in (1, -1) else -1  # column sums (1) or row sums (inf)
        sums = np.sum(np.abs(xm), axis=along, keepdims=True)
        best = np.max(sums, axis=-1 if along == -2 else -2, keepdims=True)
        if ord in (-1, -np.inf):
            best = np.min(sums, axis=-1 if along == -2 else -2, keepdims=True)
        hit = (sums == best).astype(dtype)
        gm = np.sign(xm) * hit / np.sum(hit, axis=(-2, -1), keepdims=True)
    elif ord in (2, -2, "nuc"):
        u, s, vh = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":
            tol = s[..., :1] * max(xm.shape[-2:]) * np.finfo(dtype).eps
            gm = (u * (s > tol)[..., None, :]) @ vh
        else:
            k = 0 if ord == 2 else -1
            gm = u[..., :, k, None] * vh[..., k, None, :]
            gm = gm * (s[..., :1, None] > 0)
    else:
        raise ValueError(f"invalid norm order {ord!r} for matrices")
    return np.asarray(np.moveaxis(gm, (-2, -1), axes), dtype=dtype)


def require_tall(a: Any, what: str) -> None:
    """Raise ``ValueError`` unless ``a`` is a (stack of) matrices with at least as many rows
    as columns: derivative code of ``what`` holds only for those.

    >>> require_tall(np.ones((3, 2)), "np.linalg.qr")
    """
    shape = np.shape(a)
    if len(shape) < 2 or shape[-2] < shape[-1]:
        raise ValueError(
            f"adgen: the derivative of {what} needs matrices with rows >= columns, not shape "
            f"{shape}"
        )


def distinct(values: Any, what: str, nonzero: bool = False) -> Any:
    """``values`` (eigen- or singular values, over the last axis), after checking that no two
    coincide to working precision (and, with ``nonzero``, that none is zero): the vectors of
    ``what`` are not unique otherwise, their derivative does not exist, and the formulas,
    which divide by the gaps, would return huge meaningless numbers. Raises ``ValueError``.

    >>> distinct(np.array([1.0, 2.0]), "np.linalg.eigh").tolist()
    [1.0, 2.0]
    >>> distinct(np.array([1.0, 1.0, 3.0]), "np.linalg.eigh")
    Traceback (most recent call last):
    ...
    ValueError: adgen: the derivative of np.linalg.eigh needs distinct values, got [1. 1. 3.]
    """
    v = np.asarray(values)
    if v.ndim == 0 or v.shape[-1] == 0:
        return values
    scale = np.max(np.abs(v), axis=-1, keepdims=True)
    tol = 1e-9 * np.where(scale > 0, scale, 1.0)
    bad = np.any(np.diff(np.sort(v, axis=-1), axis=-1) <= tol, axis=-1)
    if nonzero:
        bad = bad | np.any(np.abs(v) <= tol, axis=-1)
    if np.any(bad):
        kind = "distinct nonzero" if nonzero else "distinct"
        raise ValueError(f"adgen: the derivative of {what} needs {kind} values, got {v}")
    return values


def _powers(a: NDArray[Any], n: int) -> list[NDArray[Any]]:
    """``[a**0, a**1, ..., a**(n-1)]`` (matrix powers, stacked over leading axes)."""
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    out = [eye]
    for _ in range(n - 1):
        out.append(out[-1] @ a)
    return out


def matrix_power_jvp(a: Any, n: int, da: Any) -> NDArray[Any]:
    """Tangent of ``np.linalg.matrix_power(a, n)``: ``Σ_k aᵏ da aⁿ⁻¹⁻ᵏ`` (``a⁻¹`` and its
    tangent ``-a⁻¹ da a⁻¹`` for ``n < 0``; zeros for ``n == 0``).

    >>> matrix_power_jvp(np.eye(2) * 2.0, 2, np.eye(2)).tolist()
    [[4.0, 0.0], [0.0, 4.0]]
    """
    a = np.asarray(a)
    da = np.asarray(da, dtype=np.result_type(a, da))
    if n == 0:
        return np.zeros(np.broadcast_shapes(a.shape, da.shape), dtype=da.dtype)
    if n < 0:
        inv = np.linalg.inv(a)
        return matrix_power_jvp(inv, -n, -(inv @ da @ inv))
    pw = _powers(a, n)
    out = pw[0] @ da @ pw[n - 1]
    for k in range(1, n):
        out = out + pw[k] @ da @ pw[n - 1 - k]
    return out


def matrix_power_vjp(g: Any, a: Any, n: int) -> NDArray[Any]:
    """Cotangent of ``np.linalg.matrix_power(a, n)`` w.r.t. ``a``.

    >>> matrix_power_vjp(np.ones((2, 2)), np.eye(2), 2).tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    a = np.asarray(a)
    g = np.asarray(g, dtype=np.result_type(a, g))
    if n == 0:
        return np.zeros(a.shape, dtype=g.dtype)
    if n < 0:
        inv = np.linalg.inv(a)
        gi = matrix_power_vjp(g, inv, -n)
        return -(np.swapaxes(inv, -1, -2) @ gi @ np.swapaxes(inv, -1, -2))
    pt = [np.swapaxes(p, -1, -2) for p in _powers(a, n)]
    out = pt[0] @ g @ pt[n - 1]
    for k in range(1, n):
        out = out + pt[k] @ g @ pt[n - 1 - k]
    return out


def diagonal_vjp(g: Any, x: Any, offset: int = 0) -> NDArray[Any]:
    """Cotangent of ``np.linalg.diagonal(x, offset=offset)`` (the last two axes) w.r.t. ``x``:
    zeros of ``x``'s shape with ``g`` on that diagonal.

    >>> diagonal_vjp(np.array([1.0, 2.0]), np.zeros((2, 3)), 1).tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    """
    x = np.asarray(x)
    dtype = np.result_type(x, g)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    out = np.zeros(x.shape, dtype=dtype)
    n, m = x.shape[-2:]
    rows = np.arange(max(0, -offset), min(n, m - offset))
    out[..., rows, rows + offset] = g
    return out


# -- derivatives of the helpers --
# Second derivatives differentiate the code adgen generated, which calls the helpers above;
# ``adgen.rules.adjoints`` gives them rules. Most are linear in their cotangent, and the
# transposes of those linear maps that no NumPy function computes live here.


def rebroadcast(c: ArrayLike, g: ArrayLike) -> ArrayLike:
    """The adjoint of ``unbroadcast(g, x)`` with respect to ``g``: ``c`` (shaped like the
    result of ``unbroadcast``) broadcast back to ``np.shape(g)``, or summed to it where
    ``unbroadcast`` had broadcast ``g`` up. ``c`` itself when the shapes agree.

    >>> rebroadcast(np.array([1.0, 2.0]), np.zeros((3, 2))).tolist()
    [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]
    >>> float(rebroadcast(np.ones((2, 3)), 0.0))
    6.0
    >>> c = np.ones(2)
    >>> rebroadcast(c, np.zeros(2)) is c
    True
    """
    shape = np.shape(g)
    if np.shape(c) == shape:
        return c
    out = _sum_to(c, shape)
    return out if shape else out[()]


def _last_writes(shape: tuple[int, ...], index: Any) -> Any:
    """The mask (shaped like ``zeros(shape)[index]``) of the writes of ``y[index] = v`` that
    stay: where an integer index array names an element several times, the last one. ``None``
    when every write stays (basic indexing, boolean masks)."""
    if _is_basic_index(index) or isinstance(index, np.ndarray) and index.dtype == bool:
        return None
    positions = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)[index]
    flat = np.ravel(positions)
    _, last_from_end = np.unique(flat[::-1], return_index=True)
    keep = np.zeros(flat.shape, dtype=bool)
    keep[flat.size - 1 - last_from_end] = True
    return keep.reshape(np.shape(positions))


def written_vjp(c: ArrayLike, g: ArrayLike, index: Any) -> NDArray[Any]:
    """The adjoint of ``written(g, index)`` with respect to ``g``: zeros of ``g``'s shape
    with ``c`` put at ``index`` (only the writes that stay, as ``written`` reads them).

    >>> written_vjp(np.array([1.0, 2.0, 3.0]), np.zeros(3), np.array([0, 2, 0])).tolist()
    [3.0, 0.0, 2.0]
    >>> written_vjp(5.0, np.zeros(3), 1).tolist()
    [0.0, 5.0, 0.0]
    """
    keep = _last_writes(np.shape(g), index)
    if keep is not None:
        c = np.where(keep, c, 0.0)
    return getitem_vjp(c, g, index)


# -- loops of generated code --


def backwards(r: range) -> range:
    """``reversed(r)`` as a range again (``r[::-1]``): reverse-mode code runs its loops
    backwards with it, and code differentiated again can reverse them once more.

    >>> list(backwards(range(1, 4)))
    [3, 2, 1]
    """
    if not isinstance(r, range):
        raise TypeError(f"rt.backwards takes a range, not {type(r).__name__}")
    return r[::-1]


# --------------------------------------------------------------------------- checkpointing


def checkpoint_every(n: int, every: int | None = None) -> int:
    """Segment length of a checkpointed loop of ``n`` iterations: ``every`` if given (a
    positive integer), else ``ceil(sqrt(n))`` (at least 1).

    >>> checkpoint_every(10), checkpoint_every(16), checkpoint_every(0), checkpoint_every(10, 4)
    (4, 4, 1, 4)
    """
    if every is None:
        return math.isqrt(n - 1) + 1 if n > 1 else 1
    try:
        k = operator.index(every)
    except TypeError:
        raise TypeError(
            f"adgen.checkpoint: every= must be a positive integer, got {every!r}"
        ) from None
    if k < 1:
        raise ValueError(f"adgen.checkpoint: every= must be a positive integer, got {k}")
    return k
