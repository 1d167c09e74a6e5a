"""SciPy's interpolation objects (``scipy.interpolate``), registered only when SciPy is
installed.

adgen lowers a call ``s(x)`` (``s(x, nu)``, ``s.derivative(n)(x)``) of an interpolant made
outside the differentiated function -- ``CubicSpline``, ``PchipInterpolator``,
``Akima1DInterpolator``, ``PPoly``, ``BPoly``, ``BSpline`` (``make_interp_spline``'s
result), ``interp1d`` of kind ``'linear'``, ``'slinear'``, ``'quadratic'`` or ``'cubic'``, a
linear ``RegularGridInterpolator`` -- to ``rt.interp_value(s, x, nu)`` (``rt.grid_value``
for a grid), the object a constant of the derivative. Its derivative w.r.t. the points is
the interpolant's next derivative there:

    d s^(nu)(x) = s^(nu+1)(x) dx        x_bar = sum over the data's other axes of g s^(nu+1)(x)

which is ``rt.interp_value`` again, so every order follows. At a knot the derivative is the
one-sided one of the piece SciPy evaluates (:mod:`adgen.rules.runtime.interpolate`); outside
the data, an interpolant that fills a constant has derivative 0 there. A linear grid
interpolant's gradient is :func:`adgen.runtime.grid_slopes` (first order only: its second
derivative is refused by name).

Made inside the function from differentiated data, an interpolant linear in its data is
differentiated w.r.t. the data at every order (``rt.interp_fit``; a linear grid
interpolant ``RegularGridInterpolator((gx, gy), values)``: ``rt.grid_fit``, whose
transpose ``rt.grid_fit_vjp`` spreads each point's cotangent over its cell's corners);
one that is not linear in it is differentiated w.r.t. the points only (``rt.interp_fit_at``;
a grid interpolant of another method or filling a constant: ``rt.grid_fit_at``, refused by
name where a derivative reaches it).
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import Template, lookup, nondifferentiable, refused_derivative, rule
from adgen.rules.samples import Arg, Domain, example

try:
    import scipy.interpolate
except ImportError:  # pragma: no cover - SciPy is optional
    scipy = None  # type: ignore[assignment]

nondifferentiable(rt.interp_lead, rt.interp_support, rt.interp_data_axis)


def _refused(fn: Any, param: str, reason: str) -> None:
    """Make ``fn``'s rule refuse, with ``reason``, a differentiated value reaching ``param``
    (both modes), where it would otherwise say only that the parameter has no derivative."""
    prim = lookup(fn)
    assert prim is not None, fn
    body: list[ast.stmt] = [ast.Return(value=ast.Constant(value=None))]
    prim.jvp.pop(param, None)  # (not a parameter with a derivative: refused in both modes)
    prim.vjp[param] = Template("d", body, frozenset(), "", refusal=reason)
    prim.diff_params = tuple(p.name for p in prim.params if p.name in prim.jvp)


_INSIDE = Arg((5,), Domain(0.1, 2.9))
_SPLINE = "scipy.interpolate.CubicSpline(np.arange(4.0), np.array([0.0, 1.0, -1.0, 2.0]))"

if scipy is not None:

    @rule(
        rt.interp_value,
        examples=[
            example(f"rt.interp_value({_SPLINE}, x, 0)", x=_INSIDE),
            example(f"rt.interp_value({_SPLINE}, x, 1)", x=_INSIDE),
            example(
                "rt.interp_value(scipy.interpolate.BSpline(np.array([0.0, 0.0, 0.0, 0.0, 1.0, "
                "2.0, 3.0, 3.0, 3.0, 3.0]), np.cos(np.arange(12.0)).reshape(6, 2), 3), x, 0)",
                x=Arg((3,), Domain(0.2, 2.8)),
            ),
            example(
                "rt.interp_value(scipy.interpolate.interp1d(np.arange(4.0), "
                "np.array([0.0, 1.0, -1.0, 2.0]), kind='cubic'), x, 0)",
                x=_INSIDE,
            ),
        ],
    )
    def interp_value(obj, x, nu=0):
        def jvp_x(dx):
            slope = rt.interp_value(obj, x, nu + 1)
            return slope * rt.interp_spread(dx, np.ndim(slope), rt.interp_lead(obj))

        def vjp_x(g):
            slope = rt.interp_value(obj, x, nu + 1)
            return rt.interp_gather(g * slope, np.ndim(x), rt.interp_lead(obj))

    @rule(rt.interp_spread, examples=[example("rt.interp_spread(d, 3, 1)", d=(4,))])
    def interp_spread(d, ndim, lead):
        def jvp_d(dd):
            return rt.interp_spread(dd, ndim, lead)

        def vjp_d(g):
            return rt.interp_gather(g, np.ndim(d), lead)

    @rule(rt.interp_gather, examples=[example("rt.interp_gather(g, 1, 1)", g=(2, 3, 4))])
    def interp_gather(g, xdim, lead):
        def jvp_g(dg):
            return rt.interp_gather(dg, xdim, lead)

        def vjp_g(h):
            return rt.interp_spread(h, np.ndim(g), lead)

    @rule(
        rt.grid_value,
        examples=[
            example(
                "rt.grid_value(scipy.interpolate.RegularGridInterpolator((np.arange(3.0), "
                "np.arange(4.0)), np.cos(np.arange(12.0)).reshape(3, 4)), x)",
                x=Arg((5, 2), Domain(0.1, 1.9)),
                twice=False,
            ),
        ],
    )
    def grid_value(ans, obj, xi):
        def jvp_xi(dxi):
            return np.reshape(np.sum(rt.grid_slopes(obj, xi) * dxi, axis=-1), np.shape(ans))

        def vjp_xi(g):
            return np.reshape(g, np.shape(xi)[:-1] + (1,)) * rt.grid_slopes(obj, xi)

    _SECOND = (
        "the second derivative of a RegularGridInterpolator (adgen differentiates a linear "
        "grid interpolant once)"
    )
    refused_derivative(rt.grid_slopes, reason=_SECOND)
    _refused(rt.grid_slopes, "xi", _SECOND)

    # a linear grid interpolant made inside the function: ``RegularGridInterpolator((gx, gy),
    # values)(xi)``, linear in the values (every order w.r.t. them), once w.r.t. the points
    _GRID = "(np.arange(3.0), np.array([0.0, 0.5, 2.0, 3.0]))"

    @rule(
        rt.grid_fit,
        examples=[
            example(
                f"rt.grid_fit({_GRID}, v, np.array([[0.5, 0.2], [1.5, 2.5], [0.1, 0.6]]), '{{}}')",
                v=(3, 4),
            ),
            example(
                f"rt.grid_fit({_GRID}, v, x, '{{}}')",
                v=(3, 4),
                x=Arg((5, 2), Domain(0.1, 1.9)),
                twice=False,
            ),
            example(
                f"rt.grid_fit({_GRID}, np.cos(np.arange(12.0)).reshape(3, 4), x, '{{}}')",
                x=Arg((2, 3, 2), Domain(0.1, 1.9)),
                twice=False,
            ),
        ],
    )
    def grid_fit(ans, points, values, xi, options):
        def jvp_values(dv):
            return rt.grid_fit(points, dv, xi, options)

        def jvp_xi(dxi):
            slopes = rt.grid_fit_slopes(points, values, xi, options)
            return np.reshape(np.sum(slopes * dxi, axis=-1), np.shape(ans))

        def vjp_values(g):
            return rt.grid_fit_vjp(points, xi, g, np.shape(values), options)

        def vjp_xi(g):
            slopes = rt.grid_fit_slopes(points, values, xi, options)
            return np.reshape(g, np.shape(xi)[:-1] + (1,)) * slopes

    @rule(
        rt.grid_fit_vjp,
        examples=[
            example(
                f"rt.grid_fit_vjp({_GRID}, np.array([[0.5, 0.2], [1.5, 2.5]]), g, (3, 4), '{{}}')",
                g=(2,),
            ),
        ],
    )
    def grid_fit_vjp(points, xi, g, vshape, options):
        def jvp_g(dg):
            return rt.grid_fit_vjp(points, xi, dg, vshape, options)

        def vjp_g(h):
            return rt.grid_fit(points, h, xi, options)

    _GRID_AT = (
        "the derivative of a RegularGridInterpolator made inside the function with another "
        "method than 'linear', or filling a constant outside the grid (adgen differentiates "
        "the linear method, raising or extrapolating outside: `fill_value=None`)"
    )
    refused_derivative(rt.grid_fit_at, reason=_GRID_AT)
    for _param in ("points", "values", "xi"):
        _refused(rt.grid_fit_at, _param, _GRID_AT)
    refused_derivative(rt.grid_fit_slopes, reason=_SECOND)
    for _grid_fn, _param in (
        (rt.grid_fit_slopes, "xi"),
        (rt.grid_fit_slopes, "values"),
        (rt.grid_fit_vjp, "xi"),
    ):
        _refused(_grid_fn, _param, _SECOND)

    # interpolants made inside the function: ``CubicSpline(t, y)(x)``; linear in ``y``
    _FIT = "np.linspace(0.0, 3.0, 6), y, x, 'CubicSpline', \"{'bc_type': 'natural'}\""

    @rule(
        rt.interp_fit,
        examples=[
            example(f"rt.interp_fit({_FIT}, 0)", y=(6,), x=_INSIDE),
            example(f"rt.interp_fit({_FIT}, 1)", y=(6, 2), x=_INSIDE),
            example(
                "rt.interp_fit(np.arange(5.0), y, x, 'interp1d', \"{'kind': 'cubic'}\", 0)",
                y=(2, 5),
                x=Arg((3,), Domain(0.2, 3.8)),
            ),
        ],
    )
    def interp_fit(t, y, x, maker, options, nu=0):
        def jvp_y(dy):
            return rt.interp_fit(t, dy, x, maker, options, nu)

        def jvp_x(dx):
            slope = rt.interp_fit(t, y, x, maker, options, nu + 1)
            lead = rt.interp_data_axis(maker, options, np.ndim(y))
            return slope * rt.interp_spread(dx, np.ndim(slope), lead)

        def vjp_y(g):
            return rt.interp_fit_vjp(t, x, g, np.shape(y), maker, options, nu)

        def vjp_x(g):
            slope = rt.interp_fit(t, y, x, maker, options, nu + 1)
            lead = rt.interp_data_axis(maker, options, np.ndim(y))
            return rt.interp_gather(g * slope, np.ndim(x), lead)

    @rule(
        rt.interp_fit_vjp,
        examples=[
            example(
                "rt.interp_fit_vjp(np.linspace(0.0, 3.0, 6), x, g, (6, 2), 'CubicSpline', '{}', 1)",
                x=_INSIDE,
                g=(5, 2),
            ),
        ],
    )
    def interp_fit_vjp(t, x, g, yshape, maker, options, nu=0):
        def jvp_g(dg):
            return rt.interp_fit_vjp(t, x, dg, yshape, maker, options, nu)

        def jvp_x(dx):
            lead = rt.interp_data_axis(maker, options, np.size(yshape))
            spread = g * rt.interp_spread(dx, np.ndim(g), lead)
            return rt.interp_fit_vjp(t, x, spread, yshape, maker, options, nu + 1)

        def vjp_g(h):
            return rt.interp_fit(t, h, x, maker, options, nu)

        def vjp_x(h):
            lead = rt.interp_data_axis(maker, options, np.size(yshape))
            slope = rt.interp_fit(t, h, x, maker, options, nu + 1)
            return rt.interp_gather(g * slope, np.ndim(x), lead)

    @rule(
        rt.interp_fit_at,
        examples=[
            example(
                "rt.interp_fit_at(np.linspace(0.0, 3.0, 6), np.cos(np.arange(6.0)), x, "
                "'PchipInterpolator', '{}', 0)",
                x=_INSIDE,
            ),
        ],
    )
    def interp_fit_at(t, y, x, maker, options, nu=0):
        def jvp_x(dx):
            slope = rt.interp_fit_at(t, y, x, maker, options, nu + 1)
            lead = rt.interp_data_axis(maker, options, np.ndim(y))
            return slope * rt.interp_spread(dx, np.ndim(slope), lead)

        def vjp_x(g):
            slope = rt.interp_fit_at(t, y, x, maker, options, nu + 1)
            lead = rt.interp_data_axis(maker, options, np.ndim(y))
            return rt.interp_gather(g * slope, np.ndim(x), lead)

    _KNOTS = (
        "the derivative w.r.t. the knots of an interpolant made inside the function "
        "(`CubicSpline(t, y)` with `t` differentiated: the interpolant is not linear in them)"
    )
    for _fn in (rt.interp_fit, rt.interp_fit_at, rt.interp_fit_vjp):
        _refused(_fn, "t", _KNOTS)
    for _grid_fn in (rt.grid_fit, rt.grid_fit_vjp, rt.grid_fit_slopes):
        _refused(_grid_fn, "points", _KNOTS)
    _refused(
        rt.interp_fit_at,
        "y",
        "the derivative w.r.t. its data of an interpolant that is not linear in them "
        "(PchipInterpolator, Akima1DInterpolator; a CubicSpline or make_interp_spline with "
        "boundary values or periodic; an interp1d filling a constant outside)",
    )

    _PASSED = (
        "the derivative of an interpolant made inside the function and passed on as a value "
        "(adgen differentiates `s(x)` where `s = CubicSpline(t, y)` is made: call it there)"
    )
    refused_derivative(rt.interp_made, reason=_PASSED)
    for _param in ("t", "y"):
        _refused(rt.interp_made, _param, _PASSED)
