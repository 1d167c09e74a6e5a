"""Helpers of the elementwise rules (:mod:`adgen.rules.elementwise`).

The derivatives of ``np.interp`` (``rt.interp_slope``, ``rt.interp_vjp_fp``) and of
``np.polyval`` (``rt.polyval_dx``, ``rt.polyval_vjp_p``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .core import unbroadcast
from .libraries import as_array, cast, dtype_kind, eager, foreign, scatter_add, zeros_for


def _interp_alike(x: Any, *like: Any) -> Any:
    """``x`` as an array of the library of the first of ``like`` that is another library's
    array (the knots, a list or a NumPy array, beside a Dask ``x``), else as it is."""
    if not foreign(x):
        for other in like:
            if foreign(other):
                return np.asarray(x, like=other)
    return as_array(x)


def _interp_gather(table: Any, index: Any) -> Any:
    """``table[index]`` (``table`` 1-D, ``index`` an integer array of any shape), also for
    arrays of libraries that index with 1-D integer arrays only (Dask).

    >>> _interp_gather(np.array([1.0, 2.0, 3.0]), np.array([[2, 0]])).tolist()
    [[3.0, 1.0]]
    """
    if eager(table, index):
        return table[index]
    table = _interp_alike(table, index)
    return np.reshape(table[np.ravel(index)], np.shape(index))


def _interp_segments(x: Any, xp: Any) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """For each ``x``: the segment ``[xp[j], xp[j + 1]]`` holding it (``xp[j] <= x < xp[j + 1]``,
    the last one at ``xp[-1]``), and masks of the points left of ``xp[0]`` / right of ``xp[-1]``."""
    xv = _interp_alike(x, xp)
    xp = _interp_alike(xp, xv)
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
    xp_a = as_array(xp)
    fp_a = as_array(fp)
    seg, left, right = _interp_segments(x, xp_a)
    if xp_a.size < 2:
        slope = zeros_for(np.shape(seg), np.result_type(fp_a, 0.0), seg, fp_a)
    else:
        slope = _interp_gather(np.diff(fp_a) / np.diff(xp_a), seg)
    return np.where(left | right, 0.0, slope)


def interp_slope_vjp(c: Any, x: Any, xp: Any, fp: Any) -> NDArray[Any]:
    """The transpose of :func:`interp_slope` in ``fp`` (linear there), shaped and typed like
    ``fp``: each ``c`` at an ``x`` inside the knots goes, divided by the width of the
    segment holding it, to the knot on its right and, negated, to the knot on its left.

    >>> x = np.array([-1.0, 0.25, 1.5, 3.0])
    >>> interp_slope_vjp(np.ones(4), x, [0.0, 0.5, 2.0], np.zeros(3)).tolist()
    [-2.0, 1.3333333333333335, 0.6666666666666666]
    """
    fp_a = as_array(fp)
    xp_a = as_array(xp)
    dtype = fp_a.dtype if dtype_kind(fp_a) in "fc" else np.float64
    out = zeros_for((xp_a.size,), np.float64, c, x, xp_a, fp_a)
    if xp_a.size >= 2:
        xv = np.ravel(x)
        cv = np.ravel(np.broadcast_to(c, np.shape(x)))
        seg, lo, hi = _interp_segments(xv, xp_a)
        width = _interp_gather(xp_a, seg + 1) - _interp_gather(xp_a, seg)
        w = np.where(lo | hi, 0.0, cv) / width
        out = scatter_add(out, seg + 1, w)
        out = scatter_add(out, seg, -w)
    return cast(np.reshape(out, np.shape(fp)), dtype, copy=False)


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
    fp_a = as_array(fp)
    xp_a = as_array(xp)
    n = xp_a.size
    dtype = fp_a.dtype if dtype_kind(fp_a) in "fc" else np.float64
    xv = np.ravel(x)  # the result has the shape of x
    gv = np.ravel(np.broadcast_to(g, np.shape(x)))
    seg, lo, hi = _interp_segments(xv, xp_a)
    inside = ~(lo | hi)
    out = zeros_for((n,), np.float64, g, x, xp_a, fp_a)
    if n >= 2:
        below = _interp_gather(xp_a, seg)
        t = (xv - below) / (_interp_gather(xp_a, seg + 1) - below)
        w = np.where(inside, gv, 0.0)
        out = scatter_add(out, seg, w * (1.0 - t))
        out = scatter_add(out, seg + 1, w * t)
    else:
        out = scatter_add(out, 0, np.sum(np.where(inside, gv, 0.0)))
    if left is None:
        out = scatter_add(out, 0, np.sum(np.where(lo, gv, 0.0)))
    if right is None:
        out = scatter_add(out, n - 1, np.sum(np.where(hi, gv, 0.0)))
    return cast(out, dtype, copy=False)


def _falling_factorials(exponents: NDArray[Any], order: int) -> NDArray[Any]:
    """``j * (j - 1) * ... * (j - order + 1)`` for each exponent ``j``: the factor the
    ``order``-th derivative brings to ``x ** j``."""
    out = np.ones(np.shape(exponents), dtype=np.float64)
    for i in range(order):
        out = out * (exponents - i)
    return out


def _polyder_coefficients(p: Any, order: int = 1) -> NDArray[Any]:
    """The coefficients of the ``order``-th derivative of the polynomial with ``np.polyval``'s
    coefficients ``p`` (highest power first, along the first axis; more axes broadcast with
    ``x``): empty when ``order`` is at least the number of coefficients."""
    p = as_array(p)
    n = p.shape[0]
    m = max(n - order, 0)
    factors = _falling_factorials(np.arange(n - 1, n - 1 - m, -1), order)
    factors = np.reshape(factors, (m,) + (1,) * (p.ndim - 1))
    return p[:m] * cast(factors, p.dtype if dtype_kind(p) in "fc" else np.float64)


def polyval_dx(p: Any, x: Any, order: int = 1) -> Any:
    """d^order np.polyval(p, x) / dx^order: ``np.polyval`` of the derivative's coefficients
    (0 when ``order`` is at least the number of coefficients; ``order=0`` is
    ``np.polyval(p, x)`` itself).

    >>> polyval_dx(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0])).tolist()
    [2.0, 4.0]
    >>> polyval_dx(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0]), order=2).tolist()
    [2.0, 2.0]
    """
    d = _polyder_coefficients(p, order)
    if d.shape[0] == 0:
        p_a = as_array(p)
        shape = np.broadcast_shapes(p_a.shape[1:], np.shape(x))
        return zeros_for(shape, np.result_type(p_a, x, 0.0), x, p_a)
    return _horner(d, x)


def _horner(p: Any, x: Any) -> Any:
    """``np.polyval(p, x)`` computed as NumPy does (Horner's rule, ``p`` an array), for the
    arrays of every library (Dask has no ``np.polyval``).

    >>> _horner(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0])).tolist()
    [3.0, 6.0]
    """
    x = as_array(x)
    y = np.zeros_like(x)
    for k in range(p.shape[0]):
        y = y * x + p[k]
    return y


def polyval_vjp_p(g: Any, p: Any, x: Any, order: int = 0) -> NDArray[Any]:
    """The cotangent of the coefficients ``p`` in ``np.polyval(p, x)`` (``order=0``): ``p[k]``
    multiplies ``x ** (n - 1 - k)``. With ``order``, that of ``p`` in
    ``polyval_dx(p, x, order)``, where ``p[k]`` multiplies the ``order``-th derivative of
    that power.

    >>> polyval_vjp_p(np.ones(2), np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0])).tolist()
    [13.0, 5.0, 2.0]
    >>> polyval_vjp_p(np.ones(2), np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0]), 1).tolist()
    [10.0, 2.0, 0.0]
    """
    p_a = as_array(p)
    n = p_a.shape[0]
    dtype = p_a.dtype if dtype_kind(p_a) in "fc" else np.dtype(np.float64)
    if n == 0:
        return zeros_for(p_a.shape, dtype, p_a)
    rows: list[Any] = [None] * n  # each coefficient's, stacked (no item assignment)
    power = np.ones_like(as_array(x), dtype=np.result_type(x, 0.0))
    for k in range(n - 1 - order, -1, -1):
        factor = _falling_factorials(as_array(n - 1 - k), order)
        row = unbroadcast(g * power * cast(factor, power.dtype), p_a[k])
        rows[k] = np.broadcast_to(as_array(row, dtype), p_a.shape[1:])
        power = power * x
    for k in range(max(n - order, 0), n):  # the powers the derivative removed
        rows[k] = zeros_for(p_a.shape[1:], dtype, g, x, p_a)
    return np.stack(rows)
