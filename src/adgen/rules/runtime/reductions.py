"""Helpers of the reductions, scans and statistics (:mod:`adgen.rules.reductions`).

Cotangents of ``np.mean``, ``np.prod`` (exact with zeros; and its Hessian times a vector,
for second order), ``np.max`` / ``np.min`` (ties share), cumulative sums and products,
sorts and quantiles, ``np.diff``, ``np.trapezoid``, ``np.cov`` / ``np.corrcoef``,
``np.convolve`` / ``np.correlate`` and ``np.average``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .core import Axis, _float_dtype, _normalize_axes, refuse_unless, unbroadcast, unreduce
from .libraries import as_array, cast, eager, full_for, zeros_for


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


def accumulates_in(dtype: Any, x: Any) -> bool:
    """For ``np.sum(x, dtype=dtype)`` (``np.mean``): does the result carry ``x``'s derivative?
    True for a real floating ``dtype`` (the sum of ``x`` cast to it), False for an integer or
    boolean one (piecewise constant: derivative 0). A complex ``x`` or ``dtype`` is refused
    by name (which part the cast keeps is not what adgen's convention says).

    >>> accumulates_in(np.float64, np.zeros(2, np.float32)), accumulates_in("int64", np.zeros(2))
    (True, False)
    """
    namespace = getattr(x, "__array_namespace__", None)
    if namespace is not None and not hasattr(x, "__array_function__"):  # array API arrays
        xp = namespace()
        kind = "c" if xp.isdtype(dtype, "complex floating") else "?"
        kind = "f" if xp.isdtype(dtype, "real floating") else kind
        complex_x = xp.isdtype(x.dtype, "complex floating")
    else:
        kind, complex_x = np.dtype(dtype).kind, np.iscomplexobj(x)
    refuse_unless(
        kind != "c" and not complex_x,
        "a sum or mean of complex values with `dtype=` (or of real ones cast to a complex dtype)",
        "cast first: `np.sum(x.astype(dtype))`",
    )
    return kind == "f"


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation of axes undoing ``perm`` (a tuple: some libraries take no array).

    >>> _inverse((2, 0, 1))
    (1, 2, 0)
    """
    return tuple(int(i) for i in np.argsort(perm))


def _exclusive_prods(x: NDArray[Any]) -> NDArray[Any]:
    """Product of all *other* entries along the last axis, without dividing.

    Entry ``i`` is ``prod(x[..., :i]) * prod(x[..., i+1:])``, built from exclusive cumulative
    products from the left and from the right, so zeros in ``x`` are handled exactly.

    >>> _exclusive_prods(np.array([2.0, 0.0, 3.0, 4.0])).tolist()
    [0.0, 24.0, 0.0, 0.0]
    """
    ones = full_for(x.shape[:-1] + (1,), 1, x.dtype, x)
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
    x = as_array(x)
    g_full = unreduce(g, x, axis, keepdims)
    axes = _normalize_axes(axis, x.ndim)
    if x.size == 0:
        return zeros_for(x.shape, np.result_type(g_full, x), x)
    if axes == tuple(range(x.ndim)):  # full reduction: work on the raveled array
        return g_full * np.reshape(_exclusive_prods(np.reshape(x, (-1,))), x.shape)
    # Move the reduced axes to the end and flatten them into one.
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    perm = kept + axes
    xt = np.transpose(x, perm)
    others = _exclusive_prods(np.reshape(xt, xt.shape[: len(kept)] + (-1,)))
    return g_full * np.transpose(np.reshape(others, xt.shape), _inverse(perm))


def _exclusive_prods_hvp(x: NDArray[Any], w: NDArray[Any]) -> NDArray[Any]:
    """Along the last axis, entry ``i`` of ``H w`` for ``H`` the Hessian of the product:
    ``sum over j != i of w[j] * prod(x[k] for k not in (i, j))``. The exclusive products of
    :func:`_exclusive_prods` in dual numbers (value, derivative along ``w``): no division.
    """
    n = x.shape[-1]
    one, zero = full_for(x.shape[:-1], 1, x.dtype, x), zeros_for(x.shape[:-1], x.dtype, x)
    left, dleft = one, zero
    lefts, dlefts = [], []
    for i in range(n):
        lefts.append(left)
        dlefts.append(dleft)
        left, dleft = left * x[..., i], dleft * x[..., i] + left * w[..., i]
    right, dright = one, zero
    out = [zero] * n
    for i in reversed(range(n)):
        out[i] = dlefts[i] * right + lefts[i] * dright
        right, dright = right * x[..., i], dright * x[..., i] + right * w[..., i]
    return np.stack(out, axis=-1) if n else zeros_for(x.shape, x.dtype, x)


def prod_hvp(x: ArrayLike, w: ArrayLike, axis: Axis = None) -> NDArray[Any]:
    """The Hessian of ``np.prod(x, axis)`` (one per reduced group) times ``w`` (shaped like
    ``x``): entry ``i`` is the sum over the other entries ``j`` of its group of ``w[j]``
    times the product of the entries other than ``i`` and ``j``. Exact with zeros in ``x``.

    >>> prod_hvp(np.array([2.0, 3.0, 4.0]), np.array([1.0, 0.0, 0.0])).tolist()
    [0.0, 4.0, 3.0]
    >>> prod_hvp(np.array([[1.0, 2.0], [0.0, 5.0]]), np.ones((2, 2)), axis=1).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    x = as_array(x)
    dtype = np.result_type(x, w, 1.0)
    x = cast(x, dtype, copy=False)
    w = np.broadcast_to(as_array(w, dtype), x.shape)
    axes = _normalize_axes(axis, x.ndim)
    if x.size == 0:
        return zeros_for(x.shape, dtype, x)
    if axes == tuple(range(x.ndim)):
        return np.reshape(_exclusive_prods_hvp(np.reshape(x, (-1,)), np.reshape(w, (-1,))), x.shape)
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    perm = kept + axes
    xt, wt = np.transpose(x, perm), np.transpose(w, perm)
    flat = xt.shape[: len(kept)] + (-1,)
    out = _exclusive_prods_hvp(np.reshape(xt, flat), np.reshape(wt, flat))
    return np.transpose(np.reshape(out, xt.shape), _inverse(perm))


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
    if type(x) is np.ndarray and x.dtype.kind == "f" and type(axis) is int and keepdims:
        # (the common case, NumPy floats, a max kept for broadcasting: no other test needed)
        hit = x == ans
        count = hit.sum(axis=axis, keepdims=True, dtype=x.dtype)
        if count.all():
            return hit * (g / count)
    x = as_array(x)
    dtype = _float_dtype(g, x)  # (of any library's dtypes: float64 for integers)
    axes = _normalize_axes(axis, x.ndim)
    if axis is not None and not keepdims:  # put the reduced axes back: ans and g broadcast
        ans = np.expand_dims(ans, axes)
        g = np.expand_dims(g, axes)
    hit = x == ans
    if eager(x, ans):
        count = np.count_nonzero(hit, axis=axes, keepdims=True)
        if not count.all():  # an extremum matched nothing: it must be NaN
            hit = hit | (np.isnan(x) & np.isnan(ans))
            count = np.count_nonzero(hit, axis=axes, keepdims=True)
    else:  # no test of the values: NaN extrema (which match nothing) take the NaN entries
        hit = hit | (np.isnan(x) & np.isnan(ans))
        count = np.sum(hit, axis=axes, keepdims=True)
    share = as_array(g, dtype) / cast(count, dtype)
    return cast(hit, dtype) * share  # (array-API arrays take no booleans in products)


# -- reductions, scans and statistics helpers --


def _linear_scan(a: NDArray[Any], b: NDArray[Any]) -> NDArray[Any]:
    """``s`` with ``s[..., i] = a[..., i] * s[..., i - 1] + b[..., i]`` (``s[..., -1] = 0``),
    by recursive doubling along the last axis: only products and sums, no division.

    >>> _linear_scan(np.array([2.0, 0.0, 3.0]), np.array([1.0, 1.0, 1.0])).tolist()
    [1.0, 1.0, 4.0]
    """
    if not eager(a, b):  # no item assignment (Dask): each step joins the head and the rest
        n = a.shape[-1]
        k = 1
        while k < n:
            b = np.concatenate([b[..., :k], b[..., k:] + a[..., k:] * b[..., :-k]], axis=-1)
            a = np.concatenate([a[..., :k], a[..., k:] * a[..., :-k]], axis=-1)
            k *= 2
        return b
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
    ones = full_for(x.shape[:-1] + (1,), 1, x.dtype, x)
    return np.concatenate([ones, np.cumprod(x[..., :-1], axis=-1)], axis=-1)


def _scan_axis(x: Any, axis: int | None) -> tuple[NDArray[Any], int]:
    """``x`` as an array scanned along ``axis`` (raveled when ``axis`` is None), and the axis."""
    x = as_array(x)
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
    ds = np.broadcast_to(np.reshape(as_array(dx, dtype), np.shape(x)), np.shape(x))
    ds = np.ravel(ds) if axis is None else ds
    xm = cast(np.moveaxis(xs, ax, -1), dtype)
    dm = np.moveaxis(ds, ax, -1)
    t = _linear_scan(xm, _exclusive_cumprod(xm) * dm)
    if include_initial:
        t = np.concatenate([zeros_for(t.shape[:-1] + (1,), dtype, t), t], axis=-1)
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
    xm = cast(np.moveaxis(xs, ax, -1), dtype)
    gm = np.moveaxis(as_array(g, dtype), ax, -1)
    if include_initial:
        gm = gm[..., 1:]
    # r[j] = g[j] + x[j+1] r[j+1]: a forward scan over the reversed axis
    shifted = np.concatenate([zeros_for(xm.shape[:-1] + (1,), dtype, xm), xm[..., :0:-1]], -1)
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
    gm = np.moveaxis(as_array(g, dtype), ax, -1)
    if include_initial:
        gm = gm[..., 1:]
    out = np.moveaxis(np.cumsum(gm[..., ::-1], axis=-1)[..., ::-1], -1, ax)
    return np.reshape(out, np.shape(x))


def linear_recurrence(
    a: ArrayLike, b: ArrayLike, axis: Axis = None, reverse: bool = False, initial: float = 0.0
) -> NDArray[Any]:
    """``t`` shaped like ``a`` with ``t[0] = initial`` and ``t[i + 1] = a[i] * t[i] + b[i]``
    along the entries of each group of ``axis`` (all entries when None, several axes in C
    order), from the last entry backwards with ``reverse``. ``b`` broadcasts to ``a``.

    Exclusive (``t[i]`` does not use ``a[i]``, ``b[i]``), products and sums only (exact with
    zeros): the scans of the derivatives of ``np.cumprod`` and ``np.prod`` are made of it.
    ``initial=1.0`` with ``b = 0`` gives the products of the entries before each one; the
    derivative in ``a`` along ``da`` is ``linear_recurrence(a, da * t, axis, reverse)``.

    >>> linear_recurrence(np.array([2.0, 0.0, 3.0, 5.0]), 0.0, initial=1.0).tolist()
    [1.0, 2.0, 0.0, 0.0]
    >>> linear_recurrence(np.array([2.0, 3.0, 4.0]), np.ones(3), reverse=True).tolist()
    [4.0, 1.0, 0.0]
    >>> linear_recurrence(np.full((2, 2), 2.0), np.ones((2, 2)), axis=0).tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    a = as_array(a)
    dtype = _float_dtype(a, b)
    bb = np.broadcast_to(as_array(b, dtype), a.shape)
    axes = _normalize_axes(axis, a.ndim)
    if a.size == 0:
        return zeros_for(a.shape, dtype, a)
    kept = tuple(i for i in range(a.ndim) if i not in axes)
    perm = kept + axes
    at = np.transpose(cast(a, dtype, copy=False), perm)
    flat = at.shape[: len(kept)] + (-1,)
    am = np.reshape(at, flat)
    bm = np.reshape(np.transpose(bb, perm), flat)
    if reverse:
        am, bm = am[..., ::-1], bm[..., ::-1]
    # u[i] = t[i + 1] is the inclusive scan u[i] = a[i] u[i - 1] + b[i] from u[-1] = initial
    if initial != 0:
        bm = np.concatenate([bm[..., :1] + am[..., :1] * initial, bm[..., 1:]], axis=-1)
    u = _linear_scan(am, bm)
    first = full_for(u.shape[:-1] + (1,), initial, dtype, u)
    t = np.concatenate([first, u[..., :-1]], axis=-1)
    if reverse:
        t = t[..., ::-1]
    return np.transpose(np.reshape(t, at.shape), _inverse(perm))


def _tie_average(v: NDArray[Any], xs: NDArray[Any]) -> NDArray[Any]:
    """Average ``v`` over runs of equal values of the sorted ``xs`` (last axis).

    >>> _tie_average(np.array([1.0, 2.0, 4.0, 8.0]), np.array([0.0, 1.0, 1.0, 2.0])).tolist()
    [1.0, 3.0, 3.0, 8.0]
    """
    n = xs.shape[-1]
    if n == 0:
        return v
    idx = np.arange(n)
    first = full_for(xs.shape[:-1] + (1,), True, bool, xs)
    start = np.concatenate([first, xs[..., 1:] != xs[..., :-1]], axis=-1)
    end = np.concatenate([start[..., 1:], first], axis=-1)
    s = np.maximum.accumulate(np.where(start, idx, 0), axis=-1)
    e = np.minimum.accumulate(np.where(end, idx + 1, n)[..., ::-1], axis=-1)[..., ::-1]
    if eager(s, e) and np.all(e - s == 1):
        return v
    zero = zeros_for(v.shape[:-1] + (1,), v.dtype, v)
    cs = np.concatenate([zero, np.cumsum(v, axis=-1)], axis=-1)
    s_b = np.broadcast_to(s, v.shape)
    e_b = np.broadcast_to(e, v.shape)
    total = np.take_along_axis(cs, e_b, -1) - np.take_along_axis(cs, s_b, -1)
    return cast(total / cast(e_b - s_b, total.dtype), v.dtype)


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
    d = np.broadcast_to(as_array(dx, dtype), np.shape(x))
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
    gm = np.moveaxis(as_array(g, dtype), ax, -1)
    gm = _tie_average(gm, np.take_along_axis(xm, order, -1))
    if eager(gm, order):
        out = zeros_for(xm.shape, dtype, gm)
        np.put_along_axis(out, order, gm, axis=-1)
    else:  # no writes: the inverse permutation takes the entries back
        out = np.take_along_axis(gm, np.argsort(order, axis=-1), -1)
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
    x = as_array(x)
    dtype = _float_dtype(x)
    qa = as_array(q, np.float64)
    axes = _normalize_axes(axis, x.ndim)
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    perm = kept + axes
    xt = np.transpose(x, perm)
    batch = xt.shape[: len(kept)]
    xm = np.reshape(xt, batch + (-1,))
    k = qa.ndim
    if _sorts(xm):
        w = _order_weights(xm, qa, ignore_nan, dtype)
    else:  # no argsort (Dask): each group of entries sorted apart, as NumPy arrays
        shape = qa.shape + xm.shape[-1:]  # (the library's keywords: each group's weights)
        along: Any = np.apply_along_axis  # Dask's takes dtype= and shape= (NumPy's: no)
        w = along(_order_weights, -1, xm, qa, ignore_nan, dtype, dtype=dtype, shape=shape)
        # w: batch + q + (n,)
        w = np.moveaxis(w, tuple(range(len(batch))), tuple(range(k, k + len(batch))))
    w = np.reshape(w, qa.shape + xt.shape)
    return np.transpose(w, tuple(range(k)) + tuple(k + i for i in _inverse(perm)))


def _sorts(x: Any) -> bool:
    """Does ``x``'s library sort (``np.argsort``, ``np.take_along_axis``)? NumPy's and CuPy's
    do; Dask's do not (it computes them with a warning)."""
    return eager(x) or type(x).__module__.partition(".")[0] != "dask"


def _order_weights(xm: NDArray[Any], qa: NDArray[Any], ignore_nan: bool, dtype: Any) -> Any:
    """:func:`quantile_weights` of the groups of entries along the last axis of ``xm``:
    shape ``qa.shape + xm.shape``."""
    batch = xm.shape[:-1]
    n = int(xm.shape[-1])
    order = np.argsort(xm, axis=-1, kind="stable")
    xs = np.take_along_axis(xm, order, -1)
    valid = np.sum(~np.isnan(xm), axis=-1) if ignore_nan else full_for(batch, n, np.int64, xm)
    qb = np.reshape(qa, qa.shape + (1,) * len(batch))
    v = qb * (np.maximum(valid, 1) - 1)  # shape q + batch
    lo = cast(np.floor(v), np.int64)
    hi = np.minimum(lo + 1, np.maximum(valid, 1) - 1)
    t = v - lo
    pos = np.arange(n)
    ws = (pos == lo[..., None]) * (1.0 - t)[..., None] + (pos == hi[..., None]) * t[..., None]
    ws = np.where((valid > 0)[..., None], ws, 0.0)
    ws = _tie_average(as_array(ws, dtype), xs)
    w = zeros_for(ws.shape, dtype, ws)
    np.put_along_axis(w, np.broadcast_to(order, ws.shape), ws, axis=-1)
    return w


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
    x = as_array(x)
    w = quantile_weights(x, q, axis, ignore_nan)
    dtype = _float_dtype(x, dx)
    d = np.where(np.isnan(x), 0.0, as_array(dx, dtype)) if ignore_nan else dx
    k = np.ndim(q)
    axes = tuple(k + a for a in _normalize_axes(axis, x.ndim))
    return cast(np.sum(w * d, axis=axes, keepdims=keepdims), dtype)


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
    x = as_array(x)
    w = quantile_weights(x, q, axis, ignore_nan)
    dtype = _float_dtype(x, g)
    k = np.ndim(q)
    g = as_array(g, dtype)
    if not keepdims:
        g = np.expand_dims(g, tuple(k + a for a in _normalize_axes(axis, x.ndim)))
    return cast(np.sum(w * g, axis=tuple(range(k))), dtype)


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
    x = as_array(x)
    dtype = _float_dtype(x, g)
    ax = int(axis) % x.ndim
    gm = np.moveaxis(as_array(g, dtype), ax, -1)
    if n == 0:
        full = gm
    else:
        pad = zeros_for(gm.shape[:-1] + (n,), dtype, gm)
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
    y = as_array(y)
    ax = int(axis) % y.ndim
    if x is None:
        d = full_for((y.shape[ax] - 1,), dx, _float_dtype(y, dx), y)
        shape = [1] * y.ndim
        shape[ax] = -1
        d = np.reshape(d, shape)
    else:
        xa = as_array(x)
        d = np.diff(xa, axis=-1 if xa.ndim == 1 else ax)
        if xa.ndim == 1:
            shape = [1] * y.ndim
            shape[ax] = -1
            d = np.reshape(d, shape)
    dm = np.moveaxis(as_array(d), ax if np.ndim(d) == y.ndim else -1, -1)
    zero = zeros_for(dm.shape[:-1] + (1,), dm.dtype, dm)
    w = 0.5 * (np.concatenate([zero, dm], -1) + np.concatenate([dm, zero], -1))
    return np.moveaxis(w, -1, ax)


def trapezoid_vjp_y(
    g: ArrayLike, y: ArrayLike, x: Any = None, dx: Any = 1.0, axis: int = -1
) -> NDArray[Any]:
    """Cotangent of ``np.trapezoid(y, x, dx, axis)`` with respect to ``y``.

    >>> trapezoid_vjp_y(1.0, np.zeros(3), np.array([0.0, 1.0, 3.0])).tolist()
    [0.5, 1.5, 1.0]
    """
    y = as_array(y)
    dtype = _float_dtype(y, g)
    w = trapezoid_y_weights(y, x, dx, axis)
    ge = np.expand_dims(as_array(g, dtype), int(axis) % y.ndim)
    return cast(unbroadcast(np.broadcast_to(ge * w, y.shape), y), dtype)  # type: ignore[union-attr]


def trapezoid_vjp_x(g: ArrayLike, y: ArrayLike, x: ArrayLike, axis: int = -1) -> NDArray[Any]:
    """Cotangent of ``np.trapezoid(y, x, axis=axis)`` with respect to the sample points ``x``
    (1-d along ``axis``, or of ``y``'s shape).

    >>> trapezoid_vjp_x(1.0, np.array([1.0, 1.0, 1.0]), np.array([0.0, 1.0, 3.0])).tolist()
    [-1.0, 0.0, 1.0]
    """
    y = as_array(y)
    xa = as_array(x)
    dtype = _float_dtype(xa, g)
    ax = int(axis) % y.ndim
    ym = np.moveaxis(y, ax, -1)
    avg = 0.5 * (ym[..., 1:] + ym[..., :-1])  # the cotangent of diff(x) is g * avg
    gd = np.expand_dims(as_array(g, dtype), -1) * avg
    zero = zeros_for(gd.shape[:-1] + (1,), gd.dtype, gd)
    gx = np.concatenate([zero, gd], -1) - np.concatenate([gd, zero], -1)
    if xa.ndim == 1:
        return cast(np.sum(np.reshape(gx, (-1, gx.shape[-1])), axis=0), dtype)
    return cast(unbroadcast(np.moveaxis(gx, -1, ax), xa), dtype)  # type: ignore[union-attr]


def _cov_rows(m: Any, y: Any, rowvar: bool) -> NDArray[Any]:
    """The variables-by-observations matrix ``np.cov`` works on (float64)."""
    x = np.atleast_2d(as_array(m, np.float64))
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        ya = np.atleast_2d(as_array(y, np.float64))
        if not rowvar and ya.shape[0] != 1:
            ya = ya.T
        x = np.concatenate((x, ya), axis=0)
    return x


def _cov_part(d: Any, which: int, m: Any, y: Any, rowvar: bool) -> NDArray[Any]:
    """The tangent ``d`` of ``m`` (which=0) or ``y`` (which=1) as rows of :func:`_cov_rows`."""
    zm = zeros_for(np.shape(m), np.float64, d, m) if which else d
    zy = None if y is None else (d if which else zeros_for(np.shape(y), np.float64, d, y))
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
    gm = np.reshape(np.broadcast_to(np.reshape(as_array(g, np.float64), (-1,)), (k * k,)), (k, k))
    gx = (gm + gm.T) @ xc / _cov_factor(x, bias, ddof)
    arg = as_array(y if which else m)
    k0 = _cov_rows(m, None, rowvar).shape[0]
    part = gx[k0:] if which else gx[:k0]
    if not rowvar and arg.ndim == 2 and arg.shape[0] != 1:
        part = part.T
    return cast(np.reshape(part, arg.shape), _float_dtype(arg))


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
    arg = as_array(y if which else x)
    if np.ndim(c) == 0:
        return zeros_for(arg.shape, _float_dtype(arg), arg, g)
    gm = as_array(g, np.float64)
    s = np.sqrt(np.diag(c))
    r = c / np.outer(s, s)
    gc = gm / np.outer(s, s)
    gr = gm * r
    gc = gc - np.diag((np.sum(gr, axis=1) + np.sum(gr, axis=0)) / (2.0 * np.diag(c)))
    return cov_vjp(gc, which, x, y, rowvar)


def _full_cotangent(g: ArrayLike, n: int, m: int, mode: str) -> NDArray[Any]:
    """``g`` (the cotangent of ``np.convolve(a, v, mode)``, ``len(a) = n``, ``len(v) = m``)
    placed in the ``n + m - 1`` entries of the full convolution, zeros elsewhere."""
    g = as_array(g)
    if mode == "full":
        start = 0
    elif mode == "same":
        start = (min(n, m) - 1) // 2
    else:
        start = min(n, m) - 1
    before = zeros_for((start,), g.dtype, g)
    after = zeros_for((n + m - 1 - start - g.shape[0],), g.dtype, g)
    return np.concatenate([before, g, after])


def convolve_vjp(g: ArrayLike, a: ArrayLike, v: ArrayLike, mode: str, which: int) -> Any:
    """Cotangent of ``np.convolve(a, v, mode)`` with respect to ``a`` (``which=0``) or ``v``
    (``which=1``): the full cotangent correlated with the other operand.

    >>> convolve_vjp(np.ones(4), np.array([1.0, 2.0]), np.array([1.0, 1.0, 1.0]), "full", 0)
    array([3., 3.])
    """
    a, v = as_array(a), as_array(v)
    dtype = _float_dtype(a, v, g)
    full = _full_cotangent(as_array(g, dtype), a.shape[0], v.shape[0], mode)
    other = v if which == 0 else a
    return np.correlate(full, cast(other, dtype), "valid")


def correlate_vjp(g: ArrayLike, a: ArrayLike, v: ArrayLike, mode: str, which: int) -> Any:
    """Cotangent of ``np.correlate(a, v, mode)`` (real: ``np.convolve(a, v[::-1], mode)``)
    with respect to ``a`` (``which=0``) or ``v`` (``which=1``).

    >>> correlate_vjp(np.ones(2), np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0]), "valid", 1)
    array([3., 5.])
    """
    vr = as_array(v)[::-1]
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
    d = as_array(dx)
    ax = int(axis) % d.ndim
    parts = [d]
    for extra, where in ((prepend, 0), (append, 1)):
        if extra is None:
            continue
        shape = list(d.shape)
        shape[ax] = np.shape(extra)[ax] if np.ndim(extra) else 1
        zeros = zeros_for(tuple(shape), d.dtype, d)
        parts = [zeros, *parts] if where == 0 else [*parts, zeros]
    return np.diff(np.concatenate(parts, axis=ax), n=n, axis=ax)


# -- np.gradient: finite differences along each axis, a tuple of results ----------------------
def _gradient_spacings(spacings: tuple[Any, ...]) -> tuple[Any, ...]:
    """The spacings a call of np.gradient passed (``spacing0``...``spacing3``; None: not)."""
    given = tuple(s for s in spacings if s is not None)
    if given != spacings[: len(given)]:
        raise TypeError("np.gradient: spacings are positional arguments after f")
    return given


def _gradient_axes(ndim: int, axis: Any, count: int) -> tuple[int, ...]:
    """The axes np.gradient differentiates along, in the order of its results. Without
    ``axis`` and with at most one spacing, adgen counts one result when it writes the code
    (it cannot see the number of axes of ``f`` then), so ``f`` must be 1-d: checked here."""
    if axis is None:
        if count <= 1 and ndim != 1:
            raise ValueError(
                "adgen: np.gradient(f) without axis= (and with at most one spacing) is "
                f"differentiated as one result, for a 1-d f; this f has {ndim} axes: pass "
                f"axis={tuple(range(ndim))} or one spacing per axis"
            )
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(int(a) % ndim for a in axes)


def gradients(
    f: ArrayLike,
    spacing0: Any = None,
    spacing1: Any = None,
    spacing2: Any = None,
    spacing3: Any = None,
    *,
    axis: Any = None,
    edge_order: int = 1,
) -> tuple[NDArray[Any], ...]:
    """``np.gradient(f, spacing0, ..., axis=axis, edge_order=edge_order)`` as a tuple, whatever the
    number of its results (np.gradient returns a lone array for one axis). It is linear in
    ``f``: the tangent of np.gradient is this function of the tangent.

    >>> gradients(np.array([1.0, 2.0, 4.0]))
    (array([1. , 1.5, 2. ]),)
    >>> [g.tolist() for g in gradients(np.array([[0.0, 1.0], [2.0, 4.0]]), 2.0, 1.0)]
    [[[1.0, 1.5], [1.0, 1.5]], [[1.0, 1.0], [2.0, 2.0]]]
    """
    spacings = _gradient_spacings((spacing0, spacing1, spacing2, spacing3))
    f = as_array(f)
    axes = _gradient_axes(f.ndim, axis, len(spacings))
    if eager(f):
        gradient: Any = np.gradient  # (NumPy's stubs want edge_order a literal 1 or 2)
        out = gradient(f, *spacings, axis=axis, edge_order=edge_order)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)
    # another library's array (Dask's np.gradient wants chunks longer than edge_order + 1)
    dtype = _float_dtype(f)
    return tuple(
        _gradient_along(cast(f, dtype), ax, h, edge_order)
        for ax, h in zip(axes, _gradient_per_axis(spacings, len(axes)))
    )


def _gradient_per_axis(spacings: tuple[Any, ...], count: int) -> tuple[Any, ...]:
    """The spacing (a number or coordinates) of each of the ``count`` axes, as np.gradient
    reads its ``*varargs``."""
    if not spacings:
        return (1.0,) * count
    if len(spacings) == 1 and np.ndim(spacings[0]) == 0:
        return spacings * count
    if len(spacings) != count:
        raise TypeError("invalid number of arguments")
    return spacings


def _gradient_along(f: Any, ax: int, h: Any, edge_order: int) -> Any:
    """np.gradient of ``f`` along axis ``ax`` (spacing or coordinates ``h``), from the weights
    of :func:`_gradient_stencils` (slices and concatenations only)."""
    fm = np.moveaxis(f, ax, -1)
    n = fm.shape[-1]
    a, b, c, first, last = _gradient_stencils(h, n, edge_order)
    inner = a * fm[..., :-2] + c * fm[..., 2:]
    if np.ndim(b) or b != 0.0:
        inner = inner + b * fm[..., 1:-1]
    head = sum(w * fm[..., k] for k, w in enumerate(first))
    tail = sum(w * fm[..., n - len(last) + k] for k, w in enumerate(last))
    out = np.concatenate([np.expand_dims(head, -1), inner, np.expand_dims(tail, -1)], -1)
    return np.moveaxis(cast(out, fm.dtype), -1, ax)


def _gradient_stencils(h: Any, n: int, edge_order: int) -> tuple[Any, ...]:
    """The weights of np.gradient along an axis of length ``n``, for a spacing ``h`` (a number)
    or coordinates ``h`` (1-d, length ``n``), as NumPy computes them: ``(a, b, c)`` of the
    interior, ``out[i] = a f[i-1] + b f[i] + c f[i+1]`` (numbers, or arrays of length
    ``n - 2``), then the weights of ``f[0], f[1](, f[2])`` in ``out[0]`` and of
    ``(f[-3], )f[-2], f[-1]`` in ``out[-1]``."""
    if n < edge_order + 1:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least "
            "(edge_order + 1) elements are required."
        )
    if np.ndim(h) == 0:
        a, b, c = -0.5 / h, 0.0, 0.5 / h
        if edge_order == 1:
            return a, b, c, (-1.0 / h, 1.0 / h), (-1.0 / h, 1.0 / h)
        return a, b, c, (-1.5 / h, 2.0 / h, -0.5 / h), (0.5 / h, -2.0 / h, 1.5 / h)
    dx = np.diff(as_array(h, _float_dtype(h)))
    dx1, dx2 = dx[:-1], dx[1:]
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    if edge_order == 1:
        return a, b, c, (-1.0 / dx[0], 1.0 / dx[0]), (-1.0 / dx[-1], 1.0 / dx[-1])
    p, q = dx[0], dx[1]
    first = (-(2.0 * p + q) / (p * (p + q)), (p + q) / (p * q), -p / (q * (p + q)))
    p, q = dx[-2], dx[-1]
    last = (q / (p * (p + q)), -(q + p) / (p * q), (2.0 * q + p) / (q * (p + q)))
    return a, b, c, first, last


def _gradient_adjoint(g: Any, ax: int, h: Any, edge_order: int) -> Any:
    """The transpose of np.gradient along axis ``ax`` (spacing or coordinates ``h``) applied
    to ``g``: each weight sends ``g`` at the point it computes back to the point it reads."""
    gm = np.moveaxis(g, ax, -1)
    n = gm.shape[-1]
    a, b, c, first, last = _gradient_stencils(h, n, edge_order)
    dtype, batch = gm.dtype, gm.shape[:-1]

    def zeros(k: int) -> Any:
        return zeros_for(batch + (k,), dtype, gm)

    inner = gm[..., 1:-1]
    out = np.concatenate([a * inner, zeros(2)], -1) + np.concatenate([zeros(2), c * inner], -1)
    if np.ndim(b) or b != 0.0:  # (uniform spacing: the centre has weight 0)
        out = out + np.concatenate([zeros(1), b * inner, zeros(1)], -1)
    m = len(first)
    head = np.stack([w * gm[..., 0] for w in first], axis=-1)
    tail = np.stack([w * gm[..., -1] for w in last], axis=-1)
    out = out + np.concatenate([head, zeros(n - m)], -1) + np.concatenate([zeros(n - m), tail], -1)
    return np.moveaxis(cast(out, dtype), -1, ax)


def gradient_vjp(
    gs: Any,
    spacing0: Any = None,
    spacing1: Any = None,
    spacing2: Any = None,
    spacing3: Any = None,
    *,
    axis: Any = None,
    edge_order: int = 1,
) -> NDArray[Any]:
    """Cotangent of ``f`` in ``np.gradient(f, spacing0, ..., axis=axis, edge_order=...)``,
    given the tuple ``gs`` of its results' cotangents: the sum of the transposes of the
    finite differences along each axis.

    >>> gradient_vjp((np.array([1.0, 0.0, 0.0]),)).tolist()
    [-1.0, 1.0, 0.0]
    >>> gradient_vjp((np.array([0.0, 1.0, 0.0, 0.0]),), edge_order=2).tolist()
    [-0.5, 0.0, 0.5, 0.0]
    """
    spacings = _gradient_spacings((spacing0, spacing1, spacing2, spacing3))
    dtype = _float_dtype(*gs)
    shape = np.broadcast_shapes(*(np.shape(g) for g in gs))
    axes = _gradient_axes(len(shape), axis, len(spacings))
    if len(gs) != len(axes):
        raise ValueError(
            f"adgen: np.gradient has {len(axes)} results here, not {len(gs)} cotangents"
        )
    parts = [
        _gradient_adjoint(np.broadcast_to(as_array(g, dtype), shape), ax, h, edge_order)
        for g, ax, h in zip(gs, axes, _gradient_per_axis(spacings, len(axes)))
    ]
    return sum(parts[1:], parts[0])


# -- np.partition: a permutation chosen by the values, like np.sort -----------------------------
def _partition_ranks(x: Any, kth: Any, axis: int | None) -> tuple[NDArray[Any], int]:
    """Where each entry of ``np.partition(x, kth, axis)`` stands in ``np.sort(x, axis)``
    (along that axis moved last; raveled for ``axis=None``), and the axis. Entries tied in
    value may take each other's place: their derivatives are shared evenly (as for sort)."""
    xs, ax = _scan_axis(x, axis)
    part = np.moveaxis(np.partition(xs, kth, axis=ax), ax, -1)
    return np.argsort(np.argsort(part, axis=-1, kind="stable"), axis=-1), ax


def partition_jvp(dx: ArrayLike, x: ArrayLike, kth: Any, axis: int | None = -1) -> NDArray[Any]:
    """Tangent of ``np.partition(x, kth, axis)``: ``dx`` permuted like ``x``; tied entries of
    ``x`` share the average of their tangents (as in :func:`sort_jvp`).

    >>> partition_jvp(np.array([1.0, 2.0, 3.0]), np.array([3.0, 1.0, 2.0]), 1).tolist()
    [2.0, 3.0, 1.0]
    """
    ranks, ax = _partition_ranks(x, kth, axis)
    ordered = np.moveaxis(sort_jvp(dx, x, axis), ax, -1)
    return np.moveaxis(np.take_along_axis(ordered, ranks, -1), -1, ax)


def partition_vjp(g: ArrayLike, x: ArrayLike, kth: Any, axis: int | None = -1) -> NDArray[Any]:
    """Cotangent of ``np.partition(x, kth, axis)`` with respect to ``x`` (the adjoint of
    :func:`partition_jvp`).

    >>> partition_vjp(np.array([1.0, 2.0, 3.0]), np.array([3.0, 1.0, 2.0]), 1).tolist()
    [3.0, 1.0, 2.0]
    """
    ranks, ax = _partition_ranks(x, kth, axis)
    gm = np.moveaxis(as_array(g, _float_dtype(x, g)), ax, -1)
    ordered = np.take_along_axis(gm, np.argsort(ranks, axis=-1), -1)
    return sort_vjp(np.moveaxis(ordered, -1, ax), x, axis)
