"""Small NumPy helpers called by adgen's generated derivative code.

Every helper is a plain function of its arguments: no classes, no global state and no
in-place mutation of the inputs (a helper may build a fresh array and write into it).
They accept Python floats, NumPy scalars, 0-d arrays and n-d arrays, and they keep the
floating dtype of their inputs (float32 stays float32).

Naming: ``g`` is always the cotangent of the primal *output*; the helpers return the
cotangent of one primal *input*.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

Axis = int | tuple[int, ...] | None

__all__ = [
    "dot_vjp_a",
    "dot_vjp_b",
    "getitem_vjp",
    "matmul_vjp_a",
    "matmul_vjp_b",
    "mean_vjp",
    "minmax_vjp",
    "prod_vjp",
    "unbroadcast",
    "unreduce",
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
]


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
        return np.full(shape, g, dtype=np.result_type(g, x))
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
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    g = np.asarray(g, dtype=dtype)
    axes = _normalize_axes(axis, x.ndim)
    ans_full = unreduce(ans, x, axis, keepdims)
    hit = x == ans_full
    count = np.sum(hit, axis=axes, keepdims=True)
    if not np.all(count):  # an extremum matched nothing: it must be NaN
        hit = hit | (np.isnan(x) & np.isnan(ans_full))
        count = np.sum(hit, axis=axes, keepdims=True)
    return hit.astype(dtype) * (unreduce(g, x, axis, keepdims) / count.astype(dtype))


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


def zeros_like(x: Any) -> Any:
    """A zero derivative for ``x``: ``0.0`` for Python numbers (and for ``None``, a name not
    yet bound), else zeros of ``x``'s shape in its floating dtype.

    >>> zeros_like(3.0), zeros_like(None)
    (0.0, 0.0)
    >>> zeros_like(np.ones(2, dtype=np.float32)).dtype
    dtype('float32')
    >>> zeros_like(np.arange(2)).tolist()
    [0.0, 0.0]
    """
    if x is None or isinstance(x, (bool, int, float)):
        return 0.0
    if isinstance(x, list):
        return [zeros_like(e) for e in x]
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


def concatenated_part(g: Any, arrays: Any, k: int, axis: int = 0, at_least_2d: bool = False) -> Any:
    """The part of ``g`` (the cotangent of ``np.concatenate(arrays, axis)``) that came from
    ``arrays[k]``.

    >>> concatenated_part(np.arange(5.0), (np.ones(2), np.ones(3)), 1).tolist()
    [2.0, 3.0, 4.0]
    """
    shapes = [np.shape(np.atleast_2d(a) if at_least_2d else a) for a in arrays]
    sizes = [s[axis] for s in shapes]
    start = sum(sizes[:k])
    index = [slice(None)] * np.ndim(g)
    index[axis] = slice(start, start + sizes[k])
    return np.asarray(g)[tuple(index)]


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
