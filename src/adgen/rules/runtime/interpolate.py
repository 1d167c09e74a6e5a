"""Helpers of the rules for SciPy's interpolation objects (:mod:`adgen.rules.interpolate`).

An interpolant ``s`` (``CubicSpline``, ``PchipInterpolator``, ``Akima1DInterpolator``,
``PPoly``, ``BPoly``, ``BSpline``, ``interp1d``) evaluated at points ``x`` has the result
shape ``lead + x.shape + trail`` (``lead``: the data's axes before the interpolation axis,
``trail``: those after it); its derivative w.r.t. ``x`` is ``s``'s next derivative there,
each point's slope multiplying its own tangent (:func:`interp_spread` puts a tangent of
``x``'s shape where the result holds it, :func:`interp_gather` sums a cotangent back).

At a knot a piecewise polynomial has two one-sided derivatives: these helpers take the one
of the piece SciPy evaluates there (``PPoly``, ``BSpline``: the piece on the right; the last
knot the last piece; ``interp1d``'s ``'linear'`` kind: the segment on the left, the first
knot the first segment; ``RegularGridInterpolator``: the cell below, the first grid point
the first cell).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .core import refuse_unless

# the interpolants (``scipy.interpolate``) whose calls adgen differentiates w.r.t. the points
INTERPOLANTS = (
    "CubicSpline",
    "PchipInterpolator",
    "Akima1DInterpolator",
    "CubicHermiteSpline",
    "PPoly",
    "BPoly",
    "BSpline",
    "make_interp_spline",
    "interp1d",
    "RegularGridInterpolator",
)


def interp_support(obj: Any) -> tuple[str, str] | None:
    """``(family, refusal)``: the family of a SciPy interpolation object adgen evaluates
    derivatives of (``"ppoly"``, ``"bspline"``, ``"interp1d"``, ``"grid"``), and ``""``, or
    ``("", reason)`` for one it refuses (an unsupported kind or method); None for any other
    object (SciPy's interpolation not imported, or not one of its objects).

    >>> interp_support(np.sin) is None
    True
    """
    si = sys.modules.get("scipy.interpolate")
    if si is None:
        return None
    if isinstance(obj, (si.PPoly, si.BPoly)):
        return "ppoly", ""
    if isinstance(obj, si.BSpline):
        return "bspline", ""
    if isinstance(obj, si.interp1d):
        order = _interp1d_order(obj)
        if order is not None:
            return "interp1d", ""
        return "", (
            "interp1d of a piecewise constant kind ('zero', 'nearest', 'previous', 'next') "
            "or an order above 3 (adgen differentiates the kinds 'linear', 'slinear', "
            "'quadratic', 'cubic')"
        )
    if isinstance(obj, si.RegularGridInterpolator):
        if obj.method != "linear":
            return "", f"RegularGridInterpolator with method {obj.method!r} (adgen: 'linear')"
        if np.ndim(obj.values) != len(obj.grid):
            return "", "RegularGridInterpolator of values with more axes than the grid's"
        return "grid", ""
    module = vars(type(obj)).get("__module__", "")  # (a type's attribute, not an object's)
    if isinstance(module, str) and module.startswith("scipy.interpolate"):
        return "", f"a `{type(obj).__name__}` (scipy.interpolate) object"
    return None


def _interp1d_order(obj: Any) -> int | None:
    """The degree of an ``interp1d``'s pieces (1 to 3), or None for another kind."""
    if obj._kind == "linear":
        return 1
    spline = getattr(obj, "_spline", None)
    k = getattr(spline, "k", None) if obj._kind == "spline" else None
    return k if k in (1, 2, 3) else None


def interp_lead(obj: Any) -> int:
    """The number of axes of ``obj(x)`` before those of the points ``x`` (the interpolation
    axis of the data).

    >>> import scipy.interpolate
    >>> interp_lead(scipy.interpolate.CubicSpline([0.0, 1.0, 2.0], np.ones((2, 3)), axis=1))
    1
    """
    return 0 if interp_support(obj)[0] == "grid" else int(obj.axis)  # type: ignore[index]


def _points_first(value: Any, xdim: int, lead: int) -> Any:
    """``value`` (points' axes first) with those axes moved to where ``lead`` puts them."""
    if lead == 0 or xdim == 0:
        return value
    return np.moveaxis(value, tuple(range(xdim)), tuple(range(lead, lead + xdim)))


def interp_value(obj: Any, x: Any, nu: int = 0) -> Any:
    """The ``nu``-th derivative of the interpolant ``obj`` at the points ``x`` (``obj(x)``
    for ``nu = 0``); for a ``RegularGridInterpolator`` only ``nu = 0``.

    >>> import scipy.interpolate
    >>> s = scipy.interpolate.CubicSpline([0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 4.0, 9.0])
    >>> float(interp_value(s, 1.5, 1))
    3.0
    """
    family = interp_support(obj)
    refuse_unless(
        family is not None and family[0] != "",
        f"the derivative of {family[1] if family else type(obj).__name__}",
        "write the interpolation with NumPy, or use a CubicSpline, BSpline or interp1d",
    )
    kind = family[0]  # type: ignore[index]
    if nu == 0 or kind in ("ppoly", "bspline"):
        return obj(x) if nu == 0 else obj(x, nu)
    refuse_unless(
        kind == "interp1d",
        "derivatives of a RegularGridInterpolator of order 2",
        "differentiate it once (its slopes are rt.grid_slopes)",
    )
    x = np.asarray(x)
    xs = np.asarray(obj.x)
    ys = np.moveaxis(np.asarray(obj.y), obj.axis, 0)
    if obj._kind == "linear":
        if nu >= 2:
            out = np.zeros(x.shape + ys.shape[1:], dtype=np.result_type(ys, x, 1.0))
        else:
            hi = np.clip(np.searchsorted(xs, x), 1, len(xs) - 1)
            lo = hi - 1
            out = (ys[hi] - ys[lo]) / (xs[hi] - xs[lo]).reshape(x.shape + (1,) * (ys.ndim - 1))
    else:
        import scipy.interpolate

        spline = scipy.interpolate.make_interp_spline(xs, ys, k=_interp1d_order(obj))
        out = spline(x, nu)
    if not obj._extrapolate:  # outside the data: the fill value, a constant
        inside = ((x >= xs[0]) & (x <= xs[-1])).reshape(x.shape + (1,) * (ys.ndim - 1))
        out = np.where(inside, out, 0.0)
    return _points_first(out, x.ndim, obj.axis)


def interp_spread(d: Any, ndim: int, lead: int) -> Any:
    """The tangent ``d`` of the points, shaped to multiply a result of ``ndim`` axes whose
    points' axes start at ``lead``.

    >>> interp_spread(np.ones(3), 3, 1).shape
    (1, 3, 1)
    """
    shape = np.shape(d)
    return np.reshape(d, (1,) * lead + shape + (1,) * (ndim - lead - len(shape)))


def interp_gather(g: Any, xdim: int, lead: int) -> Any:
    """The cotangent ``g`` of a result summed over the axes that are not the points' (the
    ``xdim`` axes from ``lead``): the transpose of :func:`interp_spread`.

    >>> interp_gather(np.ones((2, 3, 4)), 1, 1)
    array([8., 8., 8.])
    """
    ndim = np.ndim(g)
    axes = tuple(range(lead)) + tuple(range(lead + xdim, ndim))
    return np.sum(g, axis=axes) if axes else g


def grid_value(obj: Any, xi: Any) -> Any:
    """A linear ``RegularGridInterpolator`` ``obj`` at the points ``xi``: ``obj(xi)``.

    >>> import scipy.interpolate
    >>> grid = ([0.0, 1.0], [0.0, 2.0])
    >>> g = scipy.interpolate.RegularGridInterpolator(grid, [[0.0, 2.0], [1.0, 3.0]])
    >>> grid_value(g, np.array([[0.5, 0.5]]))
    array([1.])
    """
    return obj(xi)


def grid_slopes(obj: Any, xi: Any) -> Any:
    """The gradient of a linear ``RegularGridInterpolator`` at the points ``xi`` (shape
    ``(..., ndim)``, one slope per coordinate): within a cell the interpolant is linear in
    each coordinate, so its slope along one is the difference of its values on the cell's
    two faces (the cell below a grid line; outside the grid the edge cell where it
    extrapolates, 0 where it fills a constant).

    >>> import scipy.interpolate
    >>> grid = ([0.0, 1.0], [0.0, 2.0])
    >>> g = scipy.interpolate.RegularGridInterpolator(grid, [[0.0, 2.0], [1.0, 3.0]])
    >>> grid_slopes(g, np.array([0.5, 0.5]))
    array([1., 1.])
    """
    xi = np.asarray(xi, dtype=float)
    out = np.empty_like(xi)
    outside = np.zeros(xi.shape[:-1], dtype=bool)
    for d, grid in enumerate(obj.grid):
        grid = np.asarray(grid)
        c = xi[..., d]
        i = np.clip(np.searchsorted(grid, c) - 1, 0, len(grid) - 2)
        lo, hi = xi.copy(), xi.copy()
        lo[..., d], hi[..., d] = grid[i], grid[i + 1]
        out[..., d] = (obj(hi) - obj(lo)) / (grid[i + 1] - grid[i])
        outside |= (c < grid[0]) | (c > grid[-1])
    if obj.fill_value is not None:
        out[outside] = 0.0
    return out


# -- interpolants made inside the differentiated function -------------------------------------
#
# ``s = CubicSpline(t, y, **options)`` then ``s(x, nu)``: ``rt.interp_fit(t, y, x, maker,
# options, nu)``, ``maker`` the name of the class or function of ``scipy.interpolate`` that
# makes ``s``, ``options`` its constant keyword arguments written as a Python literal (a dict).
# These makers, with these options, make an interpolant linear in the data ``y`` (the
# coefficients of a ``BSpline``): the derivative w.r.t. ``y`` is the interpolant of the
# tangent, and the cotangent is the transpose of ``y -> s(x)``, read off the interpolants of
# the basis vectors (:func:`interp_fit_vjp`).


def interp_made(t: Any, y: Any, maker: str, options: str) -> Any:
    """The interpolant ``scipy.interpolate.<maker>(t, y, **options)``.

    >>> s = interp_made([0.0, 1.0, 2.0], [0.0, 1.0, 4.0], "interp1d", "{'kind': 'linear'}")
    >>> float(s(1.5))
    2.5
    """
    import ast

    import scipy.interpolate

    return getattr(scipy.interpolate, maker)(t, y, **ast.literal_eval(options))


def interp_data_axis(maker: str, options: str, ndim: int) -> int:
    """The axis of the data ``y`` (of ``ndim`` axes) that is interpolated along: the number
    of axes of the result before the points'.

    >>> interp_data_axis("interp1d", "{}", 2), interp_data_axis("CubicSpline", "{}", 2)
    (1, 0)
    """
    import ast

    axis = ast.literal_eval(options).get("axis", -1 if maker == "interp1d" else 0)
    return int(axis) % max(ndim, 1)


def interp_fit(t: Any, y: Any, x: Any, maker: str, options: str, nu: int = 0) -> Any:
    """The ``nu``-th derivative at the points ``x`` of the interpolant ``maker`` makes of the
    data ``(t, y)``.

    >>> float(interp_fit([0.0, 1.0, 2.0], [0.0, 1.0, 4.0], 1.5, "interp1d", "{}", 1))
    3.0
    """
    return interp_value(interp_made(t, y, maker, options), x, nu)


def interp_fit_vjp(
    t: Any, x: Any, g: Any, yshape: tuple[int, ...], maker: str, options: str, nu: int = 0
) -> Any:
    """The cotangent of the data ``y`` (of shape ``yshape``) of :func:`interp_fit`, given the
    result's cotangent ``g``: ``sum_i W[i, j] g[i]``, ``W[i, j]`` the interpolant of the
    ``j``-th basis vector at ``x[i]`` (the interpolant is linear in ``y``).

    >>> interp_fit_vjp([0.0, 1.0, 2.0], np.array([0.5, 2.0]), np.ones(2), (3,), "interp1d", "{}")
    array([0.5, 0.5, 1. ])
    """
    axis = interp_data_axis(maker, options, len(yshape))
    n = yshape[axis]
    named = options
    if maker == "interp1d":  # the basis along the first axis, as the splines take it
        import ast

        chosen = ast.literal_eval(options)
        chosen["axis"] = 0
        named = repr(chosen)
    x = np.asarray(x)
    basis = interp_fit(t, np.eye(n, dtype=np.result_type(g, 1.0)), x, maker, named, nu)
    xdim = x.ndim
    g_points_first = np.moveaxis(g, tuple(range(axis, axis + xdim)), tuple(range(xdim)))
    summed = np.tensordot(basis, g_points_first, axes=(tuple(range(xdim)), tuple(range(xdim))))
    return np.moveaxis(summed, 0, axis)


def grid_fit(points: Any, values: Any, xi: Any, options: str) -> Any:
    """A linear ``RegularGridInterpolator`` made inside the function, of the grid
    ``points`` and the ``values`` on it, at the points ``xi``: it is linear in the values.

    >>> grid_fit(([0.0, 1.0], [0.0, 2.0]), [[0.0, 2.0], [1.0, 3.0]], [0.5, 0.5], "{}")
    array([1.])
    """
    return interp_made(points, values, "RegularGridInterpolator", options)(xi)


def grid_fit_at(points: Any, values: Any, xi: Any, options: str) -> Any:
    """:func:`grid_fit` of a grid interpolant adgen does not differentiate (another method
    than ``'linear'``, a constant filled outside): its value, for code no derivative
    reaches.

    >>> grid = ([0.0, 1.0], [0.0, 2.0])
    >>> grid_fit_at(grid, [[0.0, 2.0], [1.0, 3.0]], [0.2, 0.5], "{'method': 'nearest'}")
    array([0.])
    """
    return interp_made(points, values, "RegularGridInterpolator", options)(xi)


def grid_fit_slopes(points: Any, values: Any, xi: Any, options: str) -> Any:
    """The gradient of :func:`grid_fit` w.r.t. the points ``xi`` (:func:`grid_slopes`).

    >>> grid_fit_slopes(([0.0, 1.0], [0.0, 2.0]), [[0.0, 2.0], [1.0, 3.0]], [0.5, 0.5], "{}")
    array([1., 1.])
    """
    return grid_slopes(interp_made(points, values, "RegularGridInterpolator", options), xi)


def grid_fit_vjp(points: Any, xi: Any, g: Any, vshape: tuple[int, ...], options: str) -> Any:
    """The cotangent of the values (of shape ``vshape``) of :func:`grid_fit`, given the
    result's cotangent ``g`` (shape ``xi.shape[:-1]``): each point's cotangent spread over
    the ``2**ndim`` corners of its cell with the interpolation's weights (the cell below a
    grid line; outside the grid the edge cell, whose weights then extrapolate, as the
    interpolant does with ``fill_value=None``). ``options`` as the interpolant was made.

    >>> grid = ([0.0, 1.0], [0.0, 2.0])
    >>> grid_fit_vjp(grid, np.array([[0.5, 0.5]]), np.array([4.0]), (2, 2), "{}").tolist()
    [[1.5, 0.5], [1.5, 0.5]]
    """
    xi = np.asarray(xi, dtype=float)
    g = np.asarray(g)
    out = np.zeros(vshape, dtype=np.result_type(g, 1.0))
    cells, fractions = [], []
    for d, grid in enumerate(points):
        grid = np.asarray(grid, dtype=float)
        c = xi[..., d]
        i = np.clip(np.searchsorted(grid, c) - 1, 0, len(grid) - 2)
        cells.append(i)
        fractions.append((c - grid[i]) / (grid[i + 1] - grid[i]))
    for corner in range(2 ** len(cells)):
        weight = g
        index = []
        for d, (i, f) in enumerate(zip(cells, fractions, strict=True)):
            up = (corner >> d) & 1
            weight = weight * (f if up else 1.0 - f)
            index.append(np.ravel(i + up))
        np.add.at(out, tuple(index), np.ravel(np.broadcast_to(weight, np.shape(cells[0]))))
    return out


def interp_fit_at(t: Any, y: Any, x: Any, maker: str, options: str, nu: int = 0) -> Any:
    """:func:`interp_fit` of an interpolant that is not linear in its data
    (``PchipInterpolator``, ``Akima1DInterpolator``, a ``CubicSpline`` with boundary values):
    differentiated w.r.t. the points ``x`` only.

    >>> float(interp_fit_at([0.0, 1.0, 2.0], [0.0, 1.0, 4.0], 1.5, "PchipInterpolator", "{}"))
    2.1875
    """
    return interp_value(interp_made(t, y, maker, options), x, nu)
