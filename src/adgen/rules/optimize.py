"""SciPy's root finders (``scipy.optimize``), registered only when SciPy is installed:
derivatives of a root by implicit differentiation.

A root finder is given a function ``f`` and its extra arguments ``args`` (θ: the user's
``args=`` and the variables of the differentiated function ``f`` reads, appended by the
lowering, :mod:`adgen.frontend.lower.solvers`). Its result ``x*`` solves ``f(x*, θ) = 0``;
where ``J = ∂f/∂x`` is invertible there, the implicit function theorem gives

    dx* = -J⁻¹ (∂f/∂θ) dθ            (forward mode)
    θ̄ = -(∂f/∂θ)ᵀ J⁻ᵀ x̄*             (reverse mode)

with ``∂f/∂x`` and ``∂f/∂θ`` from adgen's own forward and reverse code for ``f``
(:mod:`adgen.rules.runtime.optimize`). This is the derivative of the exact root at the
point the solver found: as exact as that point is (a solver's tolerance ``xtol``, ``tol``).
The start of the search -- a bracket ``a, b``, a first guess ``x0`` -- does not move the
root: its derivative is 0.

* ``brentq``, ``brenth``, ``ridder``, ``bisect``, ``toms748`` (``f(x, *args)``, a scalar
  root in the bracket ``[a, b]``);
* ``newton(func, x0, fprime=None, args=())``: a scalar ``x0``, or an array (SciPy's
  vectorised form; the derivative solves with the whole Jacobian). ``fprime`` and
  ``fprime2`` are passed to SciPy as they are; the derivatives do not use them;
* ``fsolve(func, x0, args=())``: a vector root; its derivative reruns ``fsolve`` from the
  same start with ``full_output=1`` to read SciPy's status (the same iterates), and raises
  with SciPy's message if it did not converge.

* ``res = minimize(fun, x0, args=(), ...)``: the result is a record of its fields
  (``Callbacks.fields``): ``res.x`` differentiated from the stationarity ``∇ₓf(x*, θ) =
  0`` (``H dx* = -(∂²f/∂x∂θ) dθ``, ``H`` by forward-over-reverse passes of ``fun``;
  coordinates held at a bound do not move and the others solve with ``H`` restricted to
  them); ``res.fun`` by the envelope theorem (``∂f/∂θ · dθ``); ``success``, ``message``
  and ``nit`` without derivative. ``constraints`` and ``callback`` are refused.
* ``sol = root_scalar(f, ...)``: ``sol.root`` as for the scalar finders, once
  ``sol.converged`` (SciPy's ``root_scalar`` does not raise); ``sol = root(fun, x0, ...)``:
  ``sol.x`` as for ``fsolve``, once ``sol.success``, and ``sol.fun`` with derivative 0 (at the
  exact root ``f(x*(θ), θ) = 0`` for every θ).
* ``res = minimize_scalar(fun, ...)``: ``res.x`` from ``f'(x*, θ) = 0`` (0 at a bound of
  ``method="bounded"``: where the quadratic model's minimum lies beyond it), ``res.fun`` by
  the envelope theorem.
* ``res = least_squares(fun, x0, ...)``: ``res.x`` from ``Jᵀr = 0`` with the exact Hessian
  ``JᵀJ + Σ rᵢ ∇²rᵢ`` (coordinates in ``res.active_mask`` fixed), ``res.cost`` by the envelope
  theorem, ``res.fun`` as ``J dx* + r_θ dθ``; ``popt, pcov = curve_fit(f, xdata, ydata, ...)``:
  ``popt`` the same way for the residuals ``(f(xdata, *p) - ydata) / sigma`` (so w.r.t. the
  data and ``sigma`` too; the variables ``f`` reads reach the rule as ``_captured``, as
  ``curve_fit`` has no ``args``); ``pcov``'s derivative is refused.

Refused by name: ``full_output`` (the result is then a tuple with SciPy's report), and
``disp=False`` of the scalar finders (SciPy then returns an unconverged point silently;
with ``disp=True`` it raises). Second order through a root is refused by name (the
helpers' rules).
"""

from __future__ import annotations

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import (
    Callbacks,
    refused_derivative,
    refused_mode,
    sequence_rule,
    takes_functions,
)
from adgen.rules.runtime import optimize as _helpers

try:
    import scipy.optimize
except ImportError:  # pragma: no cover - SciPy is optional
    scipy = None  # type: ignore[assignment]

_AGAIN = (
    "a derivative through a SciPy root finder differentiated again (second order): adgen "
    "does not do this yet; take the higher derivative by finite differences of adgen's "
    "gradient"
)

if scipy is not None:
    optimize = scipy.optimize

    @sequence_rule(
        optimize.brentq, optimize.brenth, optimize.ridder, optimize.bisect, sequence="args"
    )
    def bracketed_root(
        ans, f, a, b, args=(), xtol=2e-12, rtol=8.881784197001252e-16, maxiter=100,
        full_output=False, disp=True,
    ):  # fmt: skip
        def jvp_a(d):
            return rt.zeros_like(ans)

        def jvp_b(d):
            return rt.zeros_like(ans)

        def jvp_args(parts):
            return rt.root_jvp(ans, f, args, parts, "a bracketing root finder")

        def vjp_a(g):
            return rt.zeros_like(a)

        def vjp_b(g):
            return rt.zeros_like(b)

        def vjp_args(g, k):
            return rt.root_cotangent(g, ans, f, args, k, "a bracketing root finder")

    @sequence_rule(optimize.toms748, sequence="args")
    def toms748(
        ans, f, a, b, args=(), k=1, xtol=2e-12, rtol=8.881784197001252e-16, maxiter=100,
        full_output=False, disp=True,
    ):  # fmt: skip
        def jvp_a(d):
            return rt.zeros_like(ans)

        def jvp_b(d):
            return rt.zeros_like(ans)

        def jvp_args(parts):
            return rt.root_jvp(ans, f, args, parts, "toms748")

        def vjp_a(g):
            return rt.zeros_like(a)

        def vjp_b(g):
            return rt.zeros_like(b)

        def vjp_args(g, k):
            return rt.root_cotangent(g, ans, f, args, k, "toms748")

    @sequence_rule(optimize.newton, sequence="args")
    def newton(
        ans, func, x0, fprime=None, args=(), tol=1.48e-08, maxiter=50, fprime2=None, x1=None,
        rtol=0.0, full_output=False, disp=True,
    ):  # fmt: skip
        def jvp_x0(d):
            return rt.zeros_like(ans)

        def jvp_x1(d):
            return rt.zeros_like(ans)

        def jvp_args(parts):
            return rt.root_jvp(ans, func, args, parts, "newton")

        def vjp_x0(g):
            return rt.zeros_like(x0)

        def vjp_x1(g):
            return rt.zeros_like(x1)

        def vjp_args(g, k):
            return rt.root_cotangent(g, ans, func, args, k, "newton")

    @sequence_rule(optimize.fsolve, sequence="args")
    def fsolve(
        ans, func, x0, args=(), fprime=None, full_output=0, col_deriv=0, xtol=1.49012e-08,
        maxfev=0, band=None, epsfcn=None, factor=100, diag=None,
    ):  # fmt: skip
        def jvp_x0(d):
            return rt.zeros_like(ans)

        def jvp_args(parts):
            return rt.fsolve_jvp(
                ans, func, x0, args, parts, fprime, col_deriv, xtol, maxfev, band, epsfcn,
                factor, diag,
            )  # fmt: skip

        def vjp_x0(g):
            return rt.zeros_like(x0)

        def vjp_args(g, k):
            return rt.fsolve_vjp(
                g, ans, func, x0, args, fprime, col_deriv, xtol, maxfev, band, epsfcn, factor,
                diag,
            )[k]  # fmt: skip

    @sequence_rule(rt.minimum, sequence="args", outputs=len(_helpers.MINIMIZE_FIELDS) + 1)
    def minimum(
        ans, fun, x0, args=(), method=None, jac=None, hess=None, hessp=None, bounds=None,
        constraints=(), tol=None, callback=None, options=None,
    ):  # fmt: skip
        def jvp_x0(d):
            return (rt.zeros_like(ans[0]), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

        def jvp_args(parts):
            return (
                rt.minimize_jvp(ans[-1], fun, args, parts, bounds),
                rt.minimum_value_jvp(ans[-1], fun, args, parts),
                0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            )  # fmt: skip

        def vjp_x0(g):
            return rt.zeros_like(x0)

        def vjp_args(g, k):
            return (
                rt.minimize_vjp(g[0], ans[-1], fun, args, bounds)[k]
                + rt.minimum_value_vjp(g[1], ans[-1], fun, args)[k]
            )

    @sequence_rule(rt.scalar_root, sequence="args", outputs=len(_helpers.ROOT_SCALAR_FIELDS))
    def scalar_root(
        ans, f, args=(), method=None, bracket=None, fprime=None, fprime2=None, x0=None,
        x1=None, xtol=None, rtol=None, maxiter=None, options=None,
    ):  # fmt: skip
        def jvp_args(parts):
            return (rt.scalar_root_jvp(ans, f, args, parts), 0.0, 0.0, 0.0, 0.0)

        def vjp_args(g, k):
            return rt.scalar_root_vjp(g[0], ans, f, args)[k]

    @sequence_rule(rt.vector_root, sequence="args", outputs=len(_helpers.ROOT_FIELDS) + 1)
    def vector_root(
        ans, fun, x0, args=(), method="hybr", jac=None, tol=None, callback=None, options=None
    ):
        def jvp_x0(d):
            return (rt.zeros_like(ans[0]), 0.0, 0.0, 0.0, 0.0, rt.zeros_like(ans[5]), 0.0)

        def jvp_args(parts):
            return (
                rt.vector_root_jvp(ans[-1], fun, args, parts),
                0.0, 0.0, 0.0, 0.0,
                rt.vector_root_residual(ans[-1]),
                0.0,
            )  # fmt: skip

        def vjp_x0(g):
            return rt.zeros_like(x0)

        def vjp_args(g, k):
            return rt.vector_root_vjp(g[0], g[5], ans[-1], fun, args)[k]

    @sequence_rule(
        rt.scalar_minimum, sequence="args", outputs=len(_helpers.MINIMIZE_SCALAR_FIELDS) + 1
    )
    def scalar_minimum(
        ans, fun, bracket=None, bounds=None, args=(), method=None, tol=None, options=None
    ):
        def jvp_args(parts):
            return (
                rt.scalar_minimum_jvp(ans[-1], fun, args, parts, method, bounds),
                rt.scalar_minimum_value_jvp(ans[-1], fun, args, parts),
                0.0, 0.0, 0.0, 0.0, 0.0,
            )  # fmt: skip

        def vjp_args(g, k):
            return (
                rt.scalar_minimum_vjp(g[0], ans[-1], fun, args, method, bounds)[k]
                + rt.scalar_minimum_value_vjp(g[1], ans[-1], fun, args)[k]
            )

    @sequence_rule(
        rt.least_squares_fit, sequence="args", outputs=len(_helpers.LEAST_SQUARES_FIELDS) + 1
    )
    def least_squares_fit(
        ans, fun, x0, jac="2-point", bounds=(-np.inf, np.inf), method="trf", ftol=1e-08,
        xtol=1e-08, gtol=1e-08, x_scale=None, loss="linear", f_scale=1.0, diff_step=None,
        tr_solver=None, tr_options=None, jac_sparsity=None, max_nfev=None, verbose=0, args=(),
        kwargs=None, callback=None, workers=None,
    ):  # fmt: skip
        def jvp_x0(d):
            return (rt.zeros_like(ans[0]), 0.0, rt.zeros_like(ans[2]), 0.0, 0.0, 0.0, 0.0, 0.0)

        def jvp_args(parts):
            t = rt.least_squares_jvp(ans[-1], fun, args, parts)
            return (t[0], t[1], t[2], 0.0, 0.0, 0.0, 0.0, 0.0)

        def vjp_x0(g):
            return rt.zeros_like(x0)

        def vjp_args(g, k):
            return rt.least_squares_vjp(g[0], g[1], g[2], ans[-1], fun, args)[k]

    @sequence_rule(rt.fitted_curve, sequence="_captured", outputs=2)
    def fitted_curve(
        ans, f, xdata, ydata, p0=None, sigma=None, absolute_sigma=False, check_finite=None,
        bounds=(-np.inf, np.inf), method=None, jac=None, full_output=False, nan_policy=None,
        ftol=None, xtol=None, gtol=None, maxfev=None, max_nfev=None, _captured=(),
    ):  # fmt: skip
        def jvp_xdata(d):
            return (
                rt.curve_fit_jvp(
                    ans[0], f, xdata, ydata, sigma, bounds, _captured, d, None, None, None
                ),
                rt.curve_fit_covariance_jvp(ans[1]),
            )

        def jvp_ydata(d):
            return (
                rt.curve_fit_jvp(
                    ans[0], f, xdata, ydata, sigma, bounds, _captured, None, d, None, None
                ),
                rt.curve_fit_covariance_jvp(ans[1]),
            )

        def jvp_sigma(d):
            return (
                rt.curve_fit_jvp(
                    ans[0], f, xdata, ydata, sigma, bounds, _captured, None, None, d, None
                ),
                rt.curve_fit_covariance_jvp(ans[1]),
            )

        def jvp__captured(parts):
            return (
                rt.curve_fit_jvp(
                    ans[0], f, xdata, ydata, sigma, bounds, _captured, None, None, None, parts
                ),
                rt.curve_fit_covariance_jvp(ans[1]),
            )

        def vjp_xdata(g):
            return rt.curve_fit_vjp(g, ans[0], f, xdata, ydata, sigma, bounds, _captured)[0]

        def vjp_ydata(g):
            return rt.curve_fit_vjp(g, ans[0], f, xdata, ydata, sigma, bounds, _captured)[1]

        def vjp_sigma(g):
            return rt.curve_fit_vjp(g, ans[0], f, xdata, ydata, sigma, bounds, _captured)[2]

        def vjp__captured(g, k):
            return rt.curve_fit_vjp(g, ans[0], f, xdata, ydata, sigma, bounds, _captured)[3 + k]

    _SCALAR = (("full_output", False), ("disp", True))
    for _finder in (
        optimize.brentq,
        optimize.brenth,
        optimize.ridder,
        optimize.bisect,
        optimize.toms748,
    ):
        takes_functions(_finder, Callbacks(("f",), single=True, refused=_SCALAR))
    takes_functions(optimize.newton, Callbacks(("func", "fprime", "fprime2"), refused=_SCALAR))
    takes_functions(
        optimize.minimize,
        Callbacks(
            ("fun", "jac", "hess", "hessp", "callback"),
            single=True,
            refused=(("constraints", None), ("callback", None)),
            runs_as=rt.minimum,
            fields=_helpers.MINIMIZE_FIELDS,
        ),
    )
    takes_functions(
        optimize.root_scalar,
        Callbacks(
            ("f", "fprime", "fprime2"),
            single=True,
            runs_as=rt.scalar_root,
            fields=_helpers.ROOT_SCALAR_FIELDS,
        ),
    )
    takes_functions(
        optimize.root,
        Callbacks(
            ("fun", "jac", "callback"),
            single=True,
            refused=(("callback", None),),
            runs_as=rt.vector_root,
            fields=_helpers.ROOT_FIELDS,
        ),
    )
    takes_functions(
        optimize.minimize_scalar,
        Callbacks(
            ("fun",),
            single=True,
            runs_as=rt.scalar_minimum,
            fields=_helpers.MINIMIZE_SCALAR_FIELDS,
        ),
    )
    takes_functions(
        optimize.least_squares,
        Callbacks(
            ("fun", "jac", "callback"),
            refused=(("loss", "linear"), ("kwargs", None), ("callback", None)),
            runs_as=rt.least_squares_fit,
            fields=_helpers.LEAST_SQUARES_FIELDS,
        ),
    )
    takes_functions(
        optimize.curve_fit,
        Callbacks(
            ("f", "jac"),
            extra="_captured",
            refused=(("full_output", False),),
            runs_as=rt.fitted_curve,
        ),
    )
    takes_functions(
        optimize.fsolve, Callbacks(("func", "fprime"), single=True, refused=(("full_output", 0),))
    )

    @sequence_rule(rt.root_cotangent, sequence="args")
    def root_cotangent(ans, g, root, func, args, k, what="root"):
        """A root's cotangent differentiated again (``hessian``, ``hvp``: forward over
        reverse): linear in ``g``; along ``root`` and ``args`` by second derivatives of the
        function (:func:`adgen.runtime.root_vjp_jvp`). Reverse over reverse is refused."""

        def jvp_g(d):
            return rt.root_cotangent(d, root, func, args, k, what)

        def jvp_root(d):
            return rt.root_vjp_jvp(g, root, func, args, d, None, what)[k]

        def jvp_args(parts):
            return rt.root_vjp_jvp(g, root, func, args, None, parts, what)[k]

        def vjp_g(c):
            return rt.zeros_like(g)

        def vjp_root(c):
            return rt.zeros_like(root)

        def vjp_args(c, j):
            return rt.zeros_like(args[j])

    refused_mode(
        rt.root_cotangent,
        "reverse",
        "a gradient through a SciPy root finder differentiated in reverse mode again: adgen "
        "differentiates it in forward mode (adgen.hessian, adgen.hvp, adgen.jacfwd of the "
        "gradient)",
    )

refused_derivative(
    _helpers.root_jvp,
    _helpers.root_vjp,
    _helpers.root_vjp_jvp,
    _helpers.fsolve_jvp,
    _helpers.fsolve_vjp,
    _helpers.minimize_jvp,
    _helpers.minimize_vjp,
    _helpers.minimum_value_jvp,
    _helpers.minimum_value_vjp,
    _helpers.scalar_root_jvp,
    _helpers.scalar_root_vjp,
    _helpers.vector_root_jvp,
    _helpers.vector_root_vjp,
    _helpers.vector_root_residual,
    _helpers.scalar_minimum_jvp,
    _helpers.scalar_minimum_vjp,
    _helpers.scalar_minimum_value_jvp,
    _helpers.scalar_minimum_value_vjp,
    _helpers.least_squares_jvp,
    _helpers.least_squares_vjp,
    _helpers.curve_fit_jvp,
    _helpers.curve_fit_vjp,
    _helpers.curve_fit_covariance_jvp,
    reason=_AGAIN,
)
