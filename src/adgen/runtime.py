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
    "column_stack_part",
    "copying_pad_mode",
    "dstack_part",
    "gathered_vjp",
    "inserted_tangent",
    "inserted_values_vjp",
    "pad_interior",
    "rollaxis_destination",
    "source_index",
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


# -- contractions and indexing helpers --


def _sum_to(g: Any, shape: tuple[int, ...]) -> NDArray[Any]:
    """Sum (or broadcast) ``g`` to ``shape``: leading extra axes and axes where ``shape`` has
    size 1 are summed, missing ones broadcast.

    >>> _sum_to(np.ones((2, 3)), (1, 3)).tolist()
    [[2.0, 2.0, 2.0]]
    >>> _sum_to(np.ones(3), (2, 3)).shape
    (2, 3)
    """
    g = np.asarray(g)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(extra)))
    if g.ndim == len(shape):
        axes = tuple(i for i, (n, m) in enumerate(zip(shape, g.shape)) if n == 1 and m != 1)
        if axes:
            g = np.sum(g, axis=axes, keepdims=True)
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


def _float_dtype(x: Any) -> Any:
    dtype = np.asarray(x).dtype
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


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


def _part_along(g: Any, widths: list[int], k: int, axis: int) -> Any:
    """The ``k``-th block of ``g`` along ``axis`` when it is cut into blocks of ``widths``."""
    start = sum(widths[:k])
    index = [slice(None)] * np.ndim(g)
    index[axis] = slice(start, start + widths[k])
    return np.asarray(g)[tuple(index)]


def dstack_part(g: Any, tup: Any, k: int) -> Any:
    """The cotangent of ``tup[k]`` in ``np.dstack(tup)`` (cotangent ``g``).

    >>> dstack_part(np.arange(6.0).reshape(1, 2, 3), (np.ones(2), np.ones((1, 2, 2))), 1).tolist()
    [[[1.0, 2.0], [4.0, 5.0]]]
    """
    widths = [np.shape(np.atleast_3d(a))[2] for a in tup]
    return np.reshape(_part_along(g, widths, k, 2), np.shape(tup[k]))


def column_stack_part(g: Any, tup: Any, k: int) -> Any:
    """The cotangent of ``tup[k]`` in ``np.column_stack(tup)`` (cotangent ``g``): 1-d
    arrays are columns.

    >>> column_stack_part(np.arange(6.0).reshape(2, 3), (np.ones(2), np.ones((2, 2))), 0).tolist()
    [0.0, 3.0]
    """
    widths = [1 if np.ndim(a) < 2 else np.shape(a)[1] for a in tup]
    return np.reshape(_part_along(g, widths, k, 1), np.shape(tup[k]))


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
