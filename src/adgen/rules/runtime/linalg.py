"""Helpers of :mod:`adgen.rules.linalg`: products, indexing and ``np.linalg``.

The cotangents of ``np.matmul`` (``@``) and ``np.dot`` where the operands' numbers of axes
are not known when the code is written; of ``x[index]`` (``rt.getitem_vjp``) and, for
reverse mode's ``y[index] = v``, of ``v`` (``rt.written``); and the checks and
derivatives of ``np.linalg`` (square or tall matrices, distinct values, norms, matrix
powers, diagonals).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .core import Axis, _normalize_axes, unbroadcast, zeros_like
from .libraries import as_array, cast, dtype_kind, eager, foreign, summed_at, zeros_for


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


def matmul_vjp_a(g: Any, a: Any, b: Any) -> ArrayLike:
    """Cotangent of ``np.matmul(a, b)`` with respect to ``a``.

    Handles 1-D operands and batched operands with broadcast batch dimensions.

    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> b = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> matmul_vjp_a(np.ones((2, 2)), a, b).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    >>> matmul_vjp_a(2.0, np.array([1.0, 2.0]), np.array([3.0, 4.0])).tolist()
    [6.0, 8.0]
    """
    g, a, b = as_array(g), as_array(a), as_array(b)
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


def matmul_vjp_b(g: Any, a: Any, b: Any) -> ArrayLike:
    """Cotangent of ``np.matmul(a, b)`` with respect to ``b``.

    Handles 1-D operands and batched operands with broadcast batch dimensions.

    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> b = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> matmul_vjp_b(np.ones((2, 2)), a, b).tolist()
    [[4.0, 4.0], [6.0, 6.0]]
    >>> matmul_vjp_b(np.ones((3, 2)), np.ones((3, 2, 4)), np.ones(4)).tolist()
    [6.0, 6.0, 6.0, 6.0]
    """
    g, a, b = as_array(g), as_array(a), as_array(b)
    if a.ndim == 2 and b.ndim == 2:
        return a.T @ g
    if a.ndim == 2 and b.ndim == 1:  # matrix @ vector
        return g @ a
    return _matmul_vjp_b_nd(g, a, b)


def dot_vjp_a(g: Any, a: Any, b: Any) -> ArrayLike:
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
    g, a, b = as_array(g), as_array(a), as_array(b)
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


def dot_vjp_b(g: Any, a: Any, b: Any) -> ArrayLike:
    """Cotangent of ``np.dot(a, b)`` with respect to ``b``.

    >>> dot_vjp_b(1.0, np.array([1.0, 2.0]), np.array([3.0, 4.0])).tolist()
    [1.0, 2.0]
    >>> dot_vjp_b(np.ones((2, 2)), np.array([[1.0, 2.0], [3.0, 4.0]]), np.eye(2)).tolist()
    [[4.0, 4.0], [6.0, 6.0]]
    >>> dot_vjp_b(np.ones(2), np.ones((2, 3)), np.ones(3)).tolist()
    [2.0, 2.0, 2.0]
    """
    g, a, b = as_array(g), as_array(a), as_array(b)
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


# -- x[index], and y[index] = v --------------------------------------------------------------------


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


# (the values of NumPy's own real types: getitem_vjp's fast path)
_NUMPY_REALS = (np.ndarray, float, np.float64, np.float32)


def getitem_vjp(g: ArrayLike, x: ArrayLike, index: Any) -> NDArray[Any]:
    """Cotangent of ``x[index]`` with respect to ``x``.

    Returns a fresh array of ``x``'s shape holding ``g`` at ``index`` and zeros elsewhere.
    Repeated integer indices accumulate.

    >>> getitem_vjp(np.array([1.0, 2.0]), np.zeros(3), slice(1, None)).tolist()
    [0.0, 1.0, 2.0]
    >>> getitem_vjp(np.array([1.0, 2.0, 4.0]), np.zeros(3), np.array([0, 2, 0])).tolist()
    [5.0, 0.0, 2.0]
    """
    if (
        type(x) is np.ndarray
        and x.dtype.kind == "f"
        and type(g) in _NUMPY_REALS
        and (type(index) in (int, slice) or type(index) is tuple and _is_basic_index(index))
    ):  # x[k], x[a:b] of a NumPy array (the common case in small code: no other test needed)
        out = np.zeros(x.shape, dtype=np.result_type(x.dtype, g))
        out[index] = g
        return out
    if isinstance(x, (list, tuple)):  # an item of a list the function built (or a tuple
        out_list: Any = list(zeros_like(x))  # of one): its cotangent is a list
        out_list[index] = g
        return out_list
    dtype = np.result_type(x, g)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    if not eager(g, x, *(index if isinstance(index, tuple) else (index,))):
        return _put_back(g, x, index, dtype)
    out = np.zeros(np.shape(x), dtype=dtype)
    if _is_basic_index(index):
        out[index] = g
    else:
        np.add.at(out, index, g)
    return out


def _put_back(g: Any, x: Any, index: Any, dtype: Any) -> Any:
    """:func:`getitem_vjp` for arrays of another library: a basic index is written into
    zeros on their side (without its new axes, which Dask does not write through); another
    index sums ``g`` by the flat positions of the entries it picked (no ``np.add.at``).

    >>> _put_back(np.ones((1, 2)), np.zeros(3), (None, slice(1, None)), float).tolist()
    [0.0, 1.0, 1.0]
    """
    shape = np.shape(x)
    if _is_basic_index(index):
        parts = index if isinstance(index, tuple) else (index,)
        kept = tuple(i for i in parts if i is not None)
        view = np.broadcast_to(np.zeros((), dtype=np.int8), shape)  # shapes only, no memory
        out = zeros_for(shape, dtype, x, g)
        out[kept] = np.reshape(np.broadcast_to(g, np.shape(view[index])), np.shape(view[kept]))
        return out
    positions = _index_positions(shape, index)
    return np.reshape(cast(summed_at(positions, g, math.prod(shape)), dtype), shape)


def _index_positions(shape: tuple[int, ...], index: Any) -> Any:
    """The flat positions of the entries ``zeros(shape)[index]`` picks, in the shape of
    that result: NumPy's own where the index holds NumPy arrays only (all of NumPy's
    indexing), else an array of the index arrays' library.

    >>> _index_positions((2, 3), (np.array([1, 0]), np.array([2, 2]))).tolist()
    [5, 2]
    """
    parts = index if isinstance(index, tuple) else (index,)
    like = next((i for i in parts if foreign(i)), None)
    return np.reshape(np.arange(math.prod(shape), like=like), shape)[index]


def written(g: Any, index: Any) -> Any:
    """The cotangent of ``v`` in ``y[index] = v``: ``g[index]``, except that where an integer
    index array names an element more than once only the last write (the one that stays)
    gets it.

    >>> written(np.array([1.0, 2.0, 3.0]), 1).tolist()
    2.0
    >>> written(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 0])).tolist()
    [0.0, 3.0, 1.0]

    The cotangent of a list (``hs[t] = v`` rebinds an item) is a list, whose items may be
    arrays or zeros (``0.0``): the item's, as it is.

    >>> written([np.ones(2), 0.0], 1), written([np.ones(2), 0.0], 0).tolist()
    (0.0, [1.0, 1.0])
    """
    if type(g) is np.ndarray and type(index) in (int, slice):
        return np.copy(g[index])  # (the common case: no other test needed)
    if isinstance(g, list):
        item = g[index]
        return np.copy(item) if isinstance(item, np.ndarray) else item
    g = as_array(g)
    if not eager(g, *(index if isinstance(index, tuple) else (index,))):
        return _written_foreign(g, index)
    picked = np.copy(g[index])  # a copy: the caller zeroes those slots of g next
    if _is_basic_index(index) or isinstance(index, np.ndarray) and index.dtype == bool:
        return picked
    positions = np.reshape(np.arange(g.size), g.shape)[index]
    flat = np.ravel(positions)
    # keep the last occurrence of each position
    _, last_from_end = np.unique(flat[::-1], return_index=True)
    keep = np.zeros(flat.shape, dtype=bool)
    keep[flat.size - 1 - last_from_end] = True
    return np.where(np.reshape(keep, np.shape(positions)), picked, 0.0)


def _written_foreign(g: Any, index: Any) -> Any:
    """:func:`written` for arrays of another library: ``g[index]`` (a copy, as the caller
    zeroes those slots of ``g`` next), an advanced index taken by flat positions (Dask takes
    one index array at a time) with only the last write of each position kept (the positions
    are NumPy's where the index is: their values decide).

    >>> _written_foreign(np.arange(3.0), np.array([0, 2, 0])).tolist()
    [0.0, 2.0, 0.0]
    """
    if _is_basic_index(index):
        return g[index].copy()
    positions = _index_positions(np.shape(g), index)
    picked = np.reshape(np.ravel(g)[np.ravel(positions)], np.shape(positions))
    flat = np.ravel(positions)
    _, last_from_end = np.unique(flat[::-1], return_index=True)
    keep = np.zeros(flat.shape, dtype=bool)
    keep[flat.size - 1 - last_from_end] = True
    return np.where(np.reshape(keep, np.shape(positions)), picked, 0.0)


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
    r: Any, x: Any, ord: Any = None, axis: Axis = None, keepdims: bool = False, kind: str = "norm"
) -> NDArray[Any]:
    """The derivative of each norm in ``r`` (``np.linalg.norm(x, ord, axis, keepdims)``)
    w.r.t. the entries of ``x`` it reduces (shape of ``x``): the norm's tangent is
    ``np.sum(norm_grad(...) * dx, axis, keepdims)`` and its cotangent
    ``unreduce(g, x, axis, keepdims) * norm_grad(...)``.

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
    x = as_array(x)
    dtype = x.dtype if dtype_kind(x) in "fc" else np.dtype(np.float64)
    x = cast(x, dtype, copy=False)
    axes, matrix = _norm_axes(x.ndim, ord, axis, kind)
    r = as_array(r, dtype)
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
            hit = cast(np.abs(x) == r, dtype)
            out = np.sign(x) * hit / np.sum(hit, axis=axes, keepdims=True)
        else:  # 0 where the norm is 0 (for ord < 1 that is not 0 * inf)
            with np.errstate(divide="ignore", invalid="ignore"):
                out = np.where(r == 0, 0, np.sign(x) * (np.abs(x) / safe) ** (ord - 1))
        return as_array(out, dtype)
    if ord is None or ord == "fro":
        return as_array(x / safe, dtype)
    if kind != "matrix" and axis is not None:  # (row axis, column axis), in that order
        axes = tuple(int(a) % x.ndim for a in axis)  # type: ignore[union-attr]
    xm = np.moveaxis(x, axes, (-2, -1))
    if ord in (1, -1, np.inf, -np.inf):
        along = -2 if ord in (1, -1) else -1  # column sums (1) or row sums (inf)
        sums = np.sum(np.abs(xm), axis=along, keepdims=True)
        best = np.max(sums, axis=-1 if along == -2 else -2, keepdims=True)
        if ord in (-1, -np.inf):
            best = np.min(sums, axis=-1 if along == -2 else -2, keepdims=True)
        hit = cast(sums == best, dtype)
        gm = np.sign(xm) * hit / np.sum(hit, axis=(-2, -1), keepdims=True)
    elif ord in (2, -2, "nuc"):
        u, s, vh = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":
            tol = s[..., :1] * max(xm.shape[-2:]) * np.finfo(dtype).eps
            gm = (u * cast(s > tol, dtype)[..., None, :]) @ vh
        else:
            k = 0 if ord == 2 else -1
            gm = u[..., :, k, None] * vh[..., k, None, :]
            gm = gm * cast(s[..., :1, None] > 0, dtype)
    else:
        raise ValueError(f"invalid norm order {ord!r} for matrices")
    return as_array(np.moveaxis(gm, (-2, -1), axes), dtype)


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


def require_matrix(a: Any, what: str) -> None:
    """Raise ``ValueError`` unless ``a`` is one matrix (not a stack): derivative code of
    ``what`` holds only for those.

    >>> require_matrix(np.ones((3, 2)), "scipy.linalg.lstsq")
    >>> require_matrix(np.ones((2, 3, 2)), "scipy.linalg.lstsq")
    Traceback (most recent call last):
    ...
    ValueError: adgen: the derivative of scipy.linalg.lstsq needs one matrix, not shape (2, 3, 2)
    """
    if np.ndim(a) != 2:
        raise ValueError(
            f"adgen: the derivative of {what} needs one matrix, not shape {np.shape(a)}"
        )


def require_given(value: Any, what: str) -> None:
    """Raise ``ValueError`` where a result the derivative reads is None: ``what`` gives none.

    >>> require_given(np.ones(2), "scipy.linalg.lstsq")
    >>> require_given(None, "lstsq with gelsy")
    Traceback (most recent call last):
    ...
    ValueError: adgen: the derivative of lstsq with gelsy needs a result it does not give
    """
    if value is None:
        raise ValueError(f"adgen: the derivative of {what} needs a result it does not give")


def distinct(values: Any, what: str, nonzero: bool = False) -> Any:
    """``values`` (eigen- or singular values, over the last axis), after checking that no two
    coincide to working precision (and, with ``nonzero``, that none is zero): the vectors of
    ``what`` are not unique otherwise, their derivative does not exist, and the formulas,
    which divide by the gaps, would return huge meaningless numbers. Raises ``ValueError``.
    The values of another library's array (lazy, or on a device) are not checked.

    >>> distinct(np.array([1.0, 2.0]), "np.linalg.eigh").tolist()
    [1.0, 2.0]
    >>> distinct(np.array([1.0, 1.0, 3.0]), "np.linalg.eigh")
    Traceback (most recent call last):
    ...
    ValueError: adgen: the derivative of np.linalg.eigh needs distinct values, got [1. 1. 3.]
    >>> distinct(np.array([1j, 1j]), "np.linalg.eig")
    Traceback (most recent call last):
    ...
    ValueError: adgen: the derivative of np.linalg.eig needs distinct values, got [0.+1.j 0.+1.j]
    """
    v = as_array(values)
    if v.ndim == 0 or v.shape[-1] == 0 or not eager(v):  # a lazy array is not looked at
        return values
    scale = np.max(np.abs(v), axis=-1, keepdims=True)
    tol = 1e-9 * np.where(scale > 0, scale, 1.0)
    if np.iscomplexobj(v):  # (np.linalg.eig's) no order to sort by: every pair's distance
        gaps = np.abs(v[..., :, None] - v[..., None, :])
        gaps = gaps + np.where(np.eye(v.shape[-1], dtype=bool), np.inf, 0.0)
        bad = np.any(gaps <= tol[..., None], axis=(-2, -1))
    else:
        bad = np.any(np.diff(np.sort(v, axis=-1), axis=-1) <= tol, axis=-1)
    if nonzero:
        bad = bad | np.any(np.abs(v) <= tol, axis=-1)
    if np.any(bad):
        kind = "distinct nonzero" if nonzero else "distinct"
        raise ValueError(f"adgen: the derivative of {what} needs {kind} values, got {v}")
    return values


def full_rank(values: Any, what: str) -> Any:
    """``values`` (singular values, over the last axis), after checking that none is zero to
    working precision relative to the largest: ``what`` is not differentiable at a
    rank-deficient matrix, and its formulas, which divide by the singular values, would
    return huge meaningless numbers there. Raises ``ValueError``. The values of another
    library's array (lazy, or on a device) are not checked.

    >>> full_rank(np.array([2.0, 1.0]), "f").tolist()
    [2.0, 1.0]
    >>> full_rank(np.array([2.0, 0.0]), "f")
    Traceback (most recent call last):
    ...
    ValueError: adgen: the derivative of f needs full-rank matrices, got singular values [2. 0.]
    """
    v = as_array(values)
    if v.ndim == 0 or v.shape[-1] == 0 or not eager(v):  # a lazy array is not looked at
        return values
    scale = np.max(np.abs(v), axis=-1, keepdims=True)
    if np.any(np.abs(v) <= 1e-9 * scale):
        raise ValueError(
            f"adgen: the derivative of {what} needs full-rank matrices, got singular values {v}"
        )
    return values


def _powers(a: NDArray[Any], n: int) -> list[NDArray[Any]]:
    """``[a**0, a**1, ..., a**(n-1)]`` (matrix powers, stacked over leading axes)."""
    eye = np.eye(a.shape[-1], dtype=a.dtype)
    eye = np.broadcast_to(eye if eager(a) else np.asarray(eye, like=a), a.shape)
    out = [eye]
    for _ in range(n - 1):
        out.append(out[-1] @ a)
    return out


def matrix_power_jvp(da: Any, a: Any, n: int) -> NDArray[Any]:
    """Tangent of ``np.linalg.matrix_power(a, n)`` for the tangent ``da`` of ``a``:
    ``Σ_k aᵏ da aⁿ⁻¹⁻ᵏ`` (``a⁻¹`` and its tangent ``-a⁻¹ da a⁻¹`` for ``n < 0``; zeros for
    ``n == 0``). Linear in ``da``; :func:`matrix_power_vjp` is its transpose.

    >>> matrix_power_jvp(np.eye(2), np.eye(2) * 2.0, 2).tolist()
    [[4.0, 0.0], [0.0, 4.0]]
    """
    a = as_array(a)
    da = as_array(da, np.result_type(a, da))
    if n == 0:
        return zeros_for(np.broadcast_shapes(a.shape, da.shape), da.dtype, da, a)
    if n < 0:
        inv = np.linalg.inv(a)
        return matrix_power_jvp(-(inv @ da @ inv), inv, -n)
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
    a = as_array(a)
    g = as_array(g, np.result_type(a, g))
    if n == 0:
        return zeros_for(a.shape, g.dtype, g, a)
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
    x = as_array(x)
    dtype = np.result_type(x, g)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    n, m = x.shape[-2:]
    rows = np.arange(max(0, -offset), min(n, m - offset))
    if not eager(g, x) and rows.size:
        # no writes through two index arrays (Dask has none): row k of the diagonal's block
        # is g[..., k] times the one-hot row of its column, the block padded to x's rows
        ones = np.zeros((rows.size, m), dtype=dtype)
        ones[np.arange(rows.size), rows + offset] = 1
        block = np.broadcast_to(np.expand_dims(g, -1) * ones, (*x.shape[:-2], rows.size, m))
        widths = [(0, 0)] * (x.ndim - 2) + [(rows[0], n - 1 - rows[-1]), (0, 0)]
        return np.pad(cast(block, dtype), widths)
    out = zeros_for(x.shape, dtype, x, g)
    if not rows.size:
        return out
    out[..., rows, rows + offset] = g
    return out
