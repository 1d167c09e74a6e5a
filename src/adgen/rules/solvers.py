"""SciPy's solvers (``scipy.integrate``, ``scipy.optimize``), registered only when SciPy is
installed: calls given a function (a lambda, a nested ``def`` or a module-level function),
whose derivatives call adgen's own forward and reverse code for that function.

The lowering of such a call (:mod:`adgen.frontend.lower.solvers`) passes each function as a
:class:`~adgen.seam.Callback` and appends the variables of the differentiated function it
reads to the call's ``args``, so a template's ``args`` holds every value the function depends
on besides the solver's own arguments. What each derivative means: the derivative of the
numerical solution within the solver's tolerances (docs/solvers.md).

* ``odeint(func, y0, t, args=())``: forward mode integrates the tangent system with the
  state (``odeint``, same tolerances); reverse mode the adjoint system backwards, interval
  by interval (:func:`adgen.runtime.odeint_vjp`). Derivatives w.r.t. ``y0``, ``t`` and
  ``args``; ``full_output`` is refused by name (its result is a tuple with a dict). ``Dfun``
  (the Jacobian the user gives) is passed to the solver as it is; the derivatives do not
  use it.

Second order through a solver is refused by name (the helpers' rules).
"""

from __future__ import annotations

from adgen.rules import runtime as rt
from adgen.rules.registry import (
    Callbacks,
    refused_derivative,
    refused_mode,
    sequence_rule,
    takes_functions,
)
from adgen.rules.runtime import solvers as _helpers

try:
    import scipy.integrate
except ImportError:  # pragma: no cover - SciPy is optional
    scipy = None  # type: ignore[assignment]

_AGAIN = (
    "a derivative through a SciPy solver differentiated again (second order): adgen does "
    "not do this yet; take the higher derivative by finite differences of adgen's gradient"
)

if scipy is not None:
    integrate = scipy.integrate

    @sequence_rule(integrate.odeint, sequence="args")
    def odeint(
        ans,
        func,
        y0,
        t,
        args=(),
        Dfun=None,  # noqa: N803 - SciPy's parameter names
        col_deriv=0,
        full_output=0,
        ml=None,
        mu=None,
        rtol=None,
        atol=None,
        tcrit=None,
        h0=0.0,
        hmax=0.0,
        hmin=0.0,
        ixpr=0,
        mxstep=0,
        mxhordr=12,
        mxords=5,
        printmessg=0,
        tfirst=False,
    ):
        def jvp_y0(d):
            return rt.odeint_jvp(
                ans, func, y0, t, args, d, None, None, tfirst, rtol, atol, mxstep, hmax, hmin
            )

        def jvp_t(d):
            return rt.odeint_jvp(
                ans, func, y0, t, args, None, d, None, tfirst, rtol, atol, mxstep, hmax, hmin
            )

        def jvp_args(parts):
            return rt.odeint_jvp(
                ans, func, y0, t, args, None, None, parts, tfirst, rtol, atol, mxstep, hmax, hmin
            )

        def vjp_y0(g):
            return rt.odeint_y0_cotangent(g, ans, func, y0, t, args, tfirst, rtol, atol)

        def vjp_t(g):
            return rt.odeint_t_cotangent(g, ans, func, y0, t, args, tfirst, rtol, atol)

        def vjp_args(g, k):
            return rt.odeint_args_cotangent(g, ans, func, y0, t, args, k, tfirst, rtol, atol)

    takes_functions(
        integrate.odeint,
        Callbacks(("func", "Dfun"), leading=2, refused=(("full_output", 0),)),
    )

    @sequence_rule(rt.ode_solution, sequence="args", outputs=len(_helpers.ODE_FIELDS))
    def ode_solution(
        ans,
        fun,
        t_span,
        y0,
        method="RK45",
        t_eval=None,
        dense_output=False,
        events=None,
        vectorized=False,
        args=None,
        rtol=None,
        atol=None,
        max_step=None,
        first_step=None,
        min_step=None,
        jac=None,
        lband=None,
        uband=None,
    ):
        def jvp_y0(d):
            return (
                rt.ode_solution_jvp(
                    ans,
                    fun,
                    t_span,
                    y0,
                    args,
                    d,
                    None,
                    method,
                    rtol,
                    atol,
                    max_step,
                    first_step,
                    min_step,
                ),
                rt.zeros_like(ans[1]),
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
            )

        def jvp_args(parts):
            return (
                rt.ode_solution_jvp(
                    ans,
                    fun,
                    t_span,
                    y0,
                    args,
                    None,
                    parts,
                    method,
                    rtol,
                    atol,
                    max_step,
                    first_step,
                    min_step,
                ),
                rt.zeros_like(ans[1]),
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
            )

        def jvp_t_eval(d):
            return (
                rt.ivp_time_tangent(ans[0], ans[1], fun, args, d),
                d + rt.zeros_like(ans[1]),
                0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            )  # fmt: skip

        def vjp_t_eval(g):
            return rt.ivp_time_cotangent(g[0], ans[0], ans[1], fun, args) + g[1]

        def vjp_y0(g):
            return rt.ivp_y0_cotangent(
                g[0], ans[0], ans[1], ans[2], fun, t_span, y0, args, method, rtol, atol,
                max_step,
            )  # fmt: skip

        def vjp_args(g, k):
            return rt.ivp_args_cotangent(
                g[0], ans[0], ans[1], ans[2], fun, t_span, y0, args, k, method, rtol, atol,
                max_step,
            )  # fmt: skip

    takes_functions(
        integrate.solve_ivp,
        Callbacks(
            ("fun", "jac"),
            leading=2,
            refused=(("events", None), ("vectorized", False)),
            runs_as=rt.ode_solution,
            fields=_helpers.ODE_FIELDS,
        ),
    )

    # -- second order: each cotangent of odeint and solve_ivp in forward mode (hessian, hvp);
    # linear in g, and along the trajectory, y0 and args by the adjoint's tangent system
    @sequence_rule(rt.odeint_y0_cotangent, sequence="args")
    def odeint_y0_cotangent(ans, g, ys, func, y0, t, args, tfirst=False, rtol=None, atol=None):
        def jvp_g(d):
            return rt.odeint_y0_cotangent(d, ys, func, y0, t, args, tfirst, rtol, atol)

        def jvp_ys(d):
            return rt.odeint_cotangents_tangent(
                g, ys, func, y0, t, args, d, None, tfirst, rtol, atol
            )[0]

        def jvp_y0(d):
            return rt.zeros_like(ans)

        def jvp_args(parts):
            return rt.odeint_cotangents_tangent(
                g, ys, func, y0, t, args, None, parts, tfirst, rtol, atol
            )[0]

        def vjp_g(c):
            return rt.zeros_like(g)

        def vjp_ys(c):
            return rt.zeros_like(ys)

        def vjp_y0(c):
            return rt.zeros_like(y0)

        def vjp_args(c, j):
            return rt.zeros_like(args[j])

    @sequence_rule(rt.odeint_args_cotangent, sequence="args")
    def odeint_args_cotangent(ans, g, ys, func, y0, t, args, k, tfirst=False, rtol=None, atol=None):
        def jvp_g(d):
            return rt.odeint_args_cotangent(d, ys, func, y0, t, args, k, tfirst, rtol, atol)

        def jvp_ys(d):
            return rt.odeint_cotangents_tangent(
                g, ys, func, y0, t, args, d, None, tfirst, rtol, atol
            )[1][k]

        def jvp_y0(d):
            return rt.zeros_like(ans)

        def jvp_args(parts):
            return rt.odeint_cotangents_tangent(
                g, ys, func, y0, t, args, None, parts, tfirst, rtol, atol
            )[1][k]

        def vjp_g(c):
            return rt.zeros_like(g)

        def vjp_ys(c):
            return rt.zeros_like(ys)

        def vjp_y0(c):
            return rt.zeros_like(y0)

        def vjp_args(c, j):
            return rt.zeros_like(args[j])

    @sequence_rule(rt.ivp_y0_cotangent, sequence="args")
    def ivp_y0_cotangent(
        ans, g, ys, ts, success, fun, t_span, y0, args, method="RK45", rtol=None, atol=None,
        max_step=None,
    ):  # fmt: skip
        def jvp_g(d):
            return rt.ivp_y0_cotangent(
                d, ys, ts, success, fun, t_span, y0, args, method, rtol, atol, max_step
            )

        def jvp_ys(d):
            return rt.ivp_cotangents_tangent(
                g, ys, ts, fun, t_span, y0, args, d, None, None, method, rtol, atol, max_step
            )[0]

        def jvp_ts(d):
            return rt.zeros_like(ans)

        def jvp_success(d):
            return rt.zeros_like(ans)

        def jvp_y0(d):
            return rt.ivp_cotangents_tangent(
                g, ys, ts, fun, t_span, y0, args, None, d, None, method, rtol, atol, max_step
            )[0]

        def jvp_args(parts):
            return rt.ivp_cotangents_tangent(
                g, ys, ts, fun, t_span, y0, args, None, None, parts, method, rtol, atol,
                max_step,
            )[0]  # fmt: skip

        def vjp_g(c):
            return rt.zeros_like(g)

        def vjp_ys(c):
            return rt.zeros_like(ys)

        def vjp_ts(c):
            return rt.zeros_like(ts)

        def vjp_success(c):
            return rt.zeros_like(success)

        def vjp_y0(c):
            return rt.zeros_like(y0)

        def vjp_args(c, j):
            return rt.zeros_like(args[j])

    @sequence_rule(rt.ivp_args_cotangent, sequence="args")
    def ivp_args_cotangent(
        ans, g, ys, ts, success, fun, t_span, y0, args, k, method="RK45", rtol=None,
        atol=None, max_step=None,
    ):  # fmt: skip
        def jvp_g(d):
            return rt.ivp_args_cotangent(
                d, ys, ts, success, fun, t_span, y0, args, k, method, rtol, atol, max_step
            )

        def jvp_ys(d):
            return rt.ivp_cotangents_tangent(
                g, ys, ts, fun, t_span, y0, args, d, None, None, method, rtol, atol, max_step
            )[1][k]

        def jvp_ts(d):
            return rt.zeros_like(ans)

        def jvp_success(d):
            return rt.zeros_like(ans)

        def jvp_y0(d):
            return rt.ivp_cotangents_tangent(
                g, ys, ts, fun, t_span, y0, args, None, d, None, method, rtol, atol, max_step
            )[1][k]

        def jvp_args(parts):
            return rt.ivp_cotangents_tangent(
                g, ys, ts, fun, t_span, y0, args, None, None, parts, method, rtol, atol,
                max_step,
            )[1][k]  # fmt: skip

        def vjp_g(c):
            return rt.zeros_like(g)

        def vjp_ys(c):
            return rt.zeros_like(ys)

        def vjp_ts(c):
            return rt.zeros_like(ts)

        def vjp_success(c):
            return rt.zeros_like(success)

        def vjp_y0(c):
            return rt.zeros_like(y0)

        def vjp_args(c, j):
            return rt.zeros_like(args[j])

    _AGAIN_REVERSE = (
        "a gradient through an ODE solver differentiated in reverse mode again: adgen "
        "differentiates it in forward mode (adgen.hessian, adgen.hvp, adgen.jacfwd of the "
        "gradient)"
    )
    for _helper in (
        rt.odeint_y0_cotangent,
        rt.odeint_args_cotangent,
        rt.ivp_y0_cotangent,
        rt.ivp_args_cotangent,
    ):
        refused_mode(_helper, "reverse", _AGAIN_REVERSE)

refused_derivative(
    _helpers.odeint_jvp,
    _helpers.odeint_vjp,
    _helpers.odeint_t_cotangent,
    _helpers.odeint_cotangents_tangent,
    _helpers.ode_solution_jvp,
    _helpers.ode_solution_vjp,
    _helpers.ivp_cotangents_tangent,
    _helpers.ivp_time_tangent,
    _helpers.ivp_time_cotangent,
    reason=_AGAIN,
)
