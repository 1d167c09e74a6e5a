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
    "diagonal_vjp",
    "dot_vjp_a",
    "dot_vjp_b",
    "getitem_vjp",
    "matmul_vjp_a",
    "matmul_vjp_b",
    "matrix_power_jvp",
    "matrix_power_vjp",
    "mean_vjp",
    "minmax_vjp",
    "norm_grad",
    "prod_vjp",
    "require_square",
    "require_tall",
    "unbroadcast",
    "unreduce",
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
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                out = np.sign(x) * (np.abs(x) / safe) ** (ord - 1)
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
