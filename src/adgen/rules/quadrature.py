"""SciPy's quadratures (``scipy.integrate``), registered only when SciPy is installed.

Quadrature of a function -- ``quad``, ``quad_vec``, ``fixed_quad`` given a lambda, a nested
``def`` or a module-level function -- lowers as the solvers of :mod:`adgen.rules.solvers`
do: the function is a :class:`~adgen.seam.Callback`, the variables of the differentiated
function it reads appended to ``args``, so ``args`` holds every value the integrand depends
on besides ``x``. The value is differentiated under the integral sign::

    d/dθ ∫_a^b f(x, θ) dx = ∫_a^b ∂f/∂θ(x, θ) dx + f(b, θ) db/dθ - f(a, θ) da/dθ

* ``quad(func, a, b, args=())`` and ``quad_vec(f, a, b, args=())``: ``(value, abserr)``;
  ``abserr`` has no derivative (its tangent is 0). The integral of the integrand's
  derivative is computed by SciPy with the call's tolerances (forward: ``quad`` of the
  integrand's tangent; reverse: ``quad_vec`` of its cotangents w.r.t. every argument at
  once, shared by the arguments' templates), so a derivative is the derivative of the
  exact integral within those tolerances, not of SciPy's particular rule. A limit's term
  is zero at an infinite limit. ``full_output``, ``weight`` and ``complex_func`` (and
  ``quad_vec``'s ``full_output``) are refused by name; ``args=k`` means ``args=(k,)``.
* ``fixed_quad(func, a, b, args=(), n=5)``: ``(value, None)``, Gauss-Legendre of order
  ``n``, differentiated exactly (its nodes move with the limits; the integrand's forward
  and reverse code at the same nodes).
* Quadratures of samples: ``trapezoid`` (NumPy's rule: linear in ``y`` and in ``x``),
  ``cumulative_trapezoid`` (linear in ``y`` and in ``x``; ``initial`` is a constant),
  ``simpson`` and ``romb`` (linear in ``y``: the cotangent is ``g`` times each sample's
  weight; ``simpson``'s sample points ``x`` are not differentiated and are refused).

Second order through a quadrature of a function is refused by name (the helpers' rules).
"""

from __future__ import annotations

import inspect

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import (
    Callbacks,
    refused_derivative,
    rule,
    sequence_rule,
    takes_functions,
)
from adgen.rules.runtime import quadrature as _helpers
from adgen.rules.samples import example

try:
    import scipy.integrate
except ImportError:  # pragma: no cover - SciPy is optional
    scipy = None  # type: ignore[assignment]

_AGAIN = (
    "a derivative through a SciPy quadrature of a function differentiated again (second "
    "order): adgen does not do this yet; take the higher derivative by finite differences "
    "of adgen's gradient"
)


def _params(fn: object) -> list[str]:
    try:
        return list(inspect.signature(fn).parameters)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # pragma: no cover
        return []


if scipy is not None:
    integrate = scipy.integrate

    @sequence_rule(integrate.quad, sequence="args", outputs=2)
    def quad(
        ans,
        func,
        a,
        b,
        args=(),
        full_output=0,
        epsabs=1.49e-08,
        epsrel=1.49e-08,
        limit=50,
        points=None,
        weight=None,
        wvar=None,
        wopts=None,
        maxp1=50,
        limlst=50,
        complex_func=False,
    ):
        def jvp_a(d):
            return (-rt.quad_end(func, a, args, ans[0]) * d, np.zeros_like(ans[1]))

        def jvp_b(d):
            return (rt.quad_end(func, b, args, ans[0]) * d, np.zeros_like(ans[1]))

        def jvp_args(parts):
            return (
                rt.quad_jvp(func, a, b, args, parts, epsabs, epsrel, limit, points),
                np.zeros_like(ans[1]),
            )

        def vjp_a(g):
            return -g[0] * rt.quad_end(func, a, args)

        def vjp_b(g):
            return g[0] * rt.quad_end(func, b, args)

        def vjp_args(g, k):
            return g[0] * rt.quad_vjp(func, a, b, args, epsabs, epsrel, limit, points)[k]

    takes_functions(
        integrate.quad,
        Callbacks(
            ("func",),
            single=True,
            refused=(("full_output", 0), ("weight", None), ("complex_func", False)),
        ),
    )

    if _params(integrate.quad_vec)[:12] == [
        "f",
        "a",
        "b",
        "epsabs",
        "epsrel",
        "norm",
        "cache_size",
        "limit",
        "workers",
        "points",
        "quadrature",
        "full_output",
    ]:

        @sequence_rule(integrate.quad_vec, sequence="args", outputs=2)
        def quad_vec(
            ans,
            f,
            a,
            b,
            epsabs=1e-200,
            epsrel=1e-08,
            norm="2",
            cache_size=100000000.0,
            limit=10000,
            workers=1,
            points=None,
            quadrature=None,
            full_output=False,
            *,
            args=(),
        ):
            def jvp_a(d):
                return (-rt.quad_end(f, a, args, ans[0]) * d, np.zeros_like(ans[1]))

            def jvp_b(d):
                return (rt.quad_end(f, b, args, ans[0]) * d, np.zeros_like(ans[1]))

            def jvp_args(parts):
                return (
                    rt.quad_vec_jvp(
                        f, a, b, args, parts, epsabs, epsrel, norm, limit, points, quadrature
                    ),
                    np.zeros_like(ans[1]),
                )

            def vjp_a(g):
                return -rt.quad_vec_end_vjp(g[0], f, a, args)

            def vjp_b(g):
                return rt.quad_vec_end_vjp(g[0], f, b, args)

            def vjp_args(g, k):
                return rt.quad_vec_vjp(g[0], f, a, b, args, epsabs, epsrel, limit, points)[k]

        takes_functions(
            integrate.quad_vec,
            Callbacks(("f",), single=True, refused=(("full_output", False), ("workers", 1))),
        )

    @sequence_rule(integrate.fixed_quad, sequence="args", outputs=2)
    def fixed_quad(ans, func, a, b, args=(), n=5):
        def jvp_a(d):
            return (rt.fixed_quad_jvp(func, a, b, args, d, None, None, n), None)

        def jvp_b(d):
            return (rt.fixed_quad_jvp(func, a, b, args, None, d, None, n), None)

        def jvp_args(parts):
            return (rt.fixed_quad_jvp(func, a, b, args, None, None, parts, n), None)

        def vjp_a(g):
            return rt.fixed_quad_vjp(g[0], func, a, b, args, n)[0]

        def vjp_b(g):
            return rt.fixed_quad_vjp(g[0], func, a, b, args, n)[1]

        def vjp_args(g, k):
            return rt.fixed_quad_vjp(g[0], func, a, b, args, n)[2][k]

    takes_functions(integrate.fixed_quad, Callbacks(("func",)))

    # -- quadratures of samples: linear in y ---------------------------------------------

    if hasattr(np, "trapezoid") and _params(integrate.trapezoid) == ["y", "x", "dx", "axis"]:

        @rule(
            integrate.trapezoid,
            examples=[
                example("scipy.integrate.trapezoid(y)", y=(5,)),
                example("scipy.integrate.trapezoid(y, x, axis=0)", y=(4, 3), x=(4,)),
            ],
        )
        def trapezoid(y, x=None, dx=1.0, axis=-1):
            """NumPy's ``np.trapezoid`` (its rule): linear in ``y`` and in ``x``."""

            def jvp_y(d):
                return (
                    np.trapezoid(d, dx=dx, axis=axis)
                    if x is None
                    else np.trapezoid(d, x, axis=axis)
                )

            def jvp_x(d):
                return np.trapezoid(y, d, axis=axis)

            def vjp_y(g):
                return rt.trapezoid_vjp_y(g, y, x, dx, axis)

            def vjp_x(g):
                return rt.trapezoid_vjp_x(g, y, x, axis=axis)

    if _params(integrate.simpson) == ["y", "x", "dx", "axis"]:

        @rule(
            integrate.simpson,
            examples=[
                example("scipy.integrate.simpson(y)", y=(5,)),
                example("scipy.integrate.simpson(y, dx=0.5)", y=(6,)),
                example(
                    "scipy.integrate.simpson(y, x=np.linspace(0.0, 1.0, 5) ** 2, axis=0)", y=(5, 2)
                ),
                example("scipy.integrate.simpson(y, x=np.linspace(0.0, 1.0, 6) ** 2)", y=(6,)),
            ],
        )
        def simpson(y, x=None, *, dx=1.0, axis=-1):
            """Linear in ``y``; the sample points ``x`` are not differentiated."""

            def jvp_y(d):
                return scipy.integrate.simpson(d, x=x, dx=dx, axis=axis)

            def vjp_y(g):
                return rt.simpson_vjp_y(g, y, x, dx, axis)

        @rule(
            rt.simpson_vjp_y,
            examples=[
                example("rt.simpson_vjp_y(g, y)", g=(), y=(5,)),
                example("rt.simpson_vjp_y(g, y, np.linspace(0.0, 1.0, 6) ** 2)", g=(), y=(6,)),
                example("rt.simpson_vjp_y(g, y, None, 0.5, 0)", g=(2,), y=(5, 2)),
            ],
        )
        def simpson_vjp_y(ans, g, y, x=None, dx=1.0, axis=-1):
            """Linear in ``g`` (``y`` only gives the shape): the transpose is Simpson's rule."""

            def jvp_g(d):
                return rt.simpson_vjp_y(d, y, x, dx, axis)

            def jvp_y(d):
                return rt.zeros_like(ans)

            def vjp_g(c):
                return scipy.integrate.simpson(c, x=x, dx=dx, axis=axis)

            def vjp_y(c):
                return rt.zeros_like(y)

    if _params(integrate.romb) == ["y", "dx", "axis", "show"]:

        @rule(
            integrate.romb,
            examples=[
                example("scipy.integrate.romb(y)", y=(5,)),
                example("scipy.integrate.romb(y, dx=0.5, axis=0)", y=(3, 2)),
            ],
        )
        def romb(y, dx=1.0, axis=-1, show=False):
            """Linear in ``y``."""

            def jvp_y(d):
                return scipy.integrate.romb(d, dx=dx, axis=axis)

            def vjp_y(g):
                return rt.romb_vjp_y(g, y, dx, axis)

        @rule(
            rt.romb_vjp_y,
            examples=[
                example("rt.romb_vjp_y(g, y)", g=(), y=(5,)),
                example("rt.romb_vjp_y(g, y, 0.5, 0)", g=(2,), y=(3, 2)),
            ],
        )
        def romb_vjp_y(ans, g, y, dx=1.0, axis=-1):
            """Linear in ``g``: the transpose is Romberg's rule."""

            def jvp_g(d):
                return rt.romb_vjp_y(d, y, dx, axis)

            def jvp_y(d):
                return rt.zeros_like(ans)

            def vjp_g(c):
                return scipy.integrate.romb(c, dx=dx, axis=axis)

            def vjp_y(c):
                return rt.zeros_like(y)

    if _params(integrate.cumulative_trapezoid) == ["y", "x", "dx", "axis", "initial"]:

        @rule(
            integrate.cumulative_trapezoid,
            examples=[
                example("scipy.integrate.cumulative_trapezoid(y)", y=(5,)),
                example("scipy.integrate.cumulative_trapezoid(y, initial=0)", y=(5,)),
                example("scipy.integrate.cumulative_trapezoid(y, x, axis=0)", y=(4, 3), x=(4,)),
                example("scipy.integrate.cumulative_trapezoid(y, x)", y=(2, 4), x=(2, 4)),
            ],
        )
        def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
            """Linear in ``y`` and in ``x``; ``initial`` is a constant."""

            def jvp_y(d):
                return scipy.integrate.cumulative_trapezoid(
                    d, x, dx=dx, axis=axis, initial=None if initial is None else 0.0
                )

            def jvp_x(d):
                return scipy.integrate.cumulative_trapezoid(
                    y, d, dx=dx, axis=axis, initial=None if initial is None else 0.0
                )

            def vjp_y(g):
                return rt.cumulative_trapezoid_vjp_y(g, y, x, dx, axis, initial)

            def vjp_x(g):
                return rt.cumulative_trapezoid_vjp_x(g, y, x, axis, initial)

        @rule(
            rt.cumulative_trapezoid_vjp_y,
            examples=[
                example("rt.cumulative_trapezoid_vjp_y(g, y)", g=(4,), y=(5,)),
                example(
                    "rt.cumulative_trapezoid_vjp_y(g, y, x, axis=0)", g=(3, 3), y=(4, 3), x=(4,)
                ),
                example("rt.cumulative_trapezoid_vjp_y(g, y, None, 1.0, -1, 0)", g=(5,), y=(5,)),
            ],
        )
        def cumulative_trapezoid_vjp_y(ans, g, y, x=None, dx=1.0, axis=-1, initial=None):
            """Linear in ``g`` and in ``x`` (``y`` only gives the shape)."""

            def jvp_g(d):
                return rt.cumulative_trapezoid_vjp_y(d, y, x, dx, axis, initial)

            def jvp_y(d):
                return rt.zeros_like(ans)

            def jvp_x(d):
                return rt.cumulative_trapezoid_vjp_y(g, y, d, dx, axis, initial)

            def vjp_g(c):
                return scipy.integrate.cumulative_trapezoid(
                    c, x, dx=dx, axis=axis, initial=None if initial is None else 0.0
                )

            def vjp_y(c):
                return rt.zeros_like(y)

            def vjp_x(c):
                return rt.cumulative_trapezoid_vjp_x(g, c, x, axis, initial)

        @rule(
            rt.cumulative_trapezoid_vjp_x,
            examples=[
                example("rt.cumulative_trapezoid_vjp_x(g, y, x)", g=(4,), y=(5,), x=(5,)),
                example("rt.cumulative_trapezoid_vjp_x(g, y, x, 0)", g=(3, 3), y=(4, 3), x=(4,)),
            ],
        )
        def cumulative_trapezoid_vjp_x(ans, g, y, x, axis=-1, initial=None):
            """Linear in ``g`` and in ``y`` (``x`` only gives the shape)."""

            def jvp_g(d):
                return rt.cumulative_trapezoid_vjp_x(d, y, x, axis, initial)

            def jvp_y(d):
                return rt.cumulative_trapezoid_vjp_x(g, d, x, axis, initial)

            def jvp_x(d):
                return rt.zeros_like(ans)

            def vjp_g(c):
                return scipy.integrate.cumulative_trapezoid(
                    y, c, axis=axis, initial=None if initial is None else 0.0
                )

            def vjp_y(c):
                return rt.cumulative_trapezoid_vjp_y(g, y, c, 1.0, axis, initial)

            def vjp_x(c):
                return rt.zeros_like(x)


refused_derivative(
    _helpers.quad_end,
    _helpers.quad_jvp,
    _helpers.quad_vjp,
    _helpers.quad_vec_jvp,
    _helpers.quad_vec_vjp,
    _helpers.quad_vec_end_vjp,
    _helpers.fixed_quad_jvp,
    _helpers.fixed_quad_vjp,
    reason=_AGAIN,
)
