"""Helpers of ``rules/optimize.py``: derivatives of roots found by SciPy, by implicit
differentiation.

Each takes the function the solver was given as ``func`` (the object described in
:mod:`adgen.rules.runtime.solvers`: ``func(*args)``, ``func.jvp``, ``func.vjp``,
``func.remember``) and its extra arguments ``args`` (the user's ``args=`` and the variables
the function reads, appended by the lowering).

A root ``x*`` of ``f(x, θ) = 0`` (``θ`` = ``args``), with ``J = ∂f/∂x`` at ``(x*, θ)``
invertible, moves with ``θ`` as the implicit function theorem says::

    J dx* = -(∂f/∂θ) dθ                       (forward: one solve per tangent)
    θ̄ = -(∂f/∂θ)ᵀ λ,   Jᵀ λ = x̄*             (reverse: one solve, one reverse pass of f)

``J`` is made dense, column by column, by ``n`` forward passes of ``f`` (the solvers adgen
differentiates this way take small ``x``: a scalar or a few unknowns). A ``J`` that is
singular, or not finite, at the root (a double root, a sign change at a pole) makes the
derivative raise ``ArithmeticError``: there the root does not move smoothly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .solvers import _floats, _tangents


def _opt_flat_tangent(x: Any, i: int, n: int) -> Any:
    """The unit tangent of ``x``'s flat coordinate ``i`` (a number for a scalar ``x``)."""
    if np.ndim(x) == 0:
        return 1.0
    e = np.zeros(n)
    e[i] = 1.0
    return e.reshape(np.shape(x))


def _opt_jacobian(func: Any, x: Any, args: tuple[Any, ...], what: str) -> tuple[Any, np.ndarray]:
    """``f(x, *args)`` and ``∂f/∂x`` there as a dense ``(m, n)`` matrix (flat ``f`` and ``x``),
    checked finite and well conditioned."""
    n = int(np.size(x))
    zeros = _tangents(None, args)
    columns, value = [], None
    for i in range(n):
        value, column = func.jvp((x, *args), (_opt_flat_tangent(x, i, n), *zeros))
        columns.append(np.ravel(_floats(column)))
    jac = np.stack(columns, axis=1) if columns else np.zeros((0, 0))
    if jac.shape[0] != n:
        raise ArithmeticError(
            f"{what}: the function gives {jac.shape[0]} value(s) for {n} unknown(s); "
            "implicit differentiation needs as many equations as unknowns"
        )
    if not np.all(np.isfinite(jac)) or n == 0:
        raise ArithmeticError(
            f"{what}: the derivative of the function at the root is not finite: the root "
            "does not move smoothly with the parameters"
        )
    if np.linalg.cond(jac) * np.finfo(np.float64).eps >= 1.0:
        raise ArithmeticError(
            f"{what}: the derivative of the function w.r.t. the unknowns is singular at the "
            "root (a double root, or a sign change that is no root): the root has no "
            "derivative w.r.t. the parameters there"
        )
    return value, jac


def _opt_shaped(flat: np.ndarray, like: Any) -> Any:
    """``flat`` in the shape of ``like`` (a float for a scalar)."""
    if np.ndim(like) == 0:
        return float(flat[0])
    return flat.reshape(np.shape(like))


def root_jvp(ans: Any, func: Any, args: tuple[Any, ...], dargs: Any, what: str = "root") -> Any:
    """The tangent of the root ``ans`` of ``func(x, *args) = 0`` for the tangents ``dargs`` of
    ``args`` (None: zeros): ``-J⁻¹ (∂f/∂args · dargs)``.

    >>> from types import SimpleNamespace
    >>> f = SimpleNamespace(jvp=lambda a, t: (a[0] ** 2 - a[1], 2 * a[0] * t[0] - t[1]))
    >>> float(root_jvp(2.0, f, (4.0,), (1.0,)))  # x = sqrt(c): dx/dc = 1 / (2 x)
    0.25
    """
    args = tuple(args)
    dargs = _tangents(dargs, args)
    _, rhs = func.jvp((ans, *args), (np.zeros_like(_floats(ans)), *dargs))
    _, jac = _opt_jacobian(func, ans, args, what)
    return _opt_shaped(-np.linalg.solve(jac, np.ravel(_floats(rhs))), ans)


def root_vjp(g: Any, ans: Any, func: Any, args: tuple[Any, ...], what: str = "root") -> Any:
    """The cotangents of ``args`` (a tuple) of the root ``ans`` of ``func(x, *args) = 0`` for
    its cotangent ``g``: ``-(∂f/∂args)ᵀ λ`` with ``Jᵀ λ = g`` (one solve, one reverse pass,
    shared by the cotangents of all ``args``).

    >>> from types import SimpleNamespace
    >>> f = SimpleNamespace(
    ...     vjp=lambda a, c: (a[0] ** 2 - a[1], (2 * a[0] * c, -c)),
    ...     jvp=lambda a, t: (a[0] ** 2 - a[1], 2 * a[0] * t[0] - t[1]),
    ...     remember=lambda key, compute: compute(),
    ... )
    >>> [float(c) for c in root_vjp(1.0, 2.0, f, (4.0,))]
    [0.25]
    """
    args = tuple(args)
    key = (g, ans, args)
    return func.remember(key, lambda: _opt_root_adjoint(g, ans, func, args, what))


def _opt_root_adjoint(
    g: Any, ans: Any, func: Any, args: tuple[Any, ...], what: str
) -> tuple[Any, ...]:
    value, jac = _opt_jacobian(func, ans, args, what)
    lam = np.linalg.solve(jac.T, np.ravel(_floats(g)) + np.zeros(jac.shape[0]))
    _, cotangents = func.vjp((ans, *args), _opt_shaped(-lam, value))
    return tuple(cotangents[1:])


def _opt_fsolve_status(func: Any, x0: Any, args: tuple[Any, ...], options: dict[str, Any]) -> None:
    """Raise ``ArithmeticError`` with SciPy's message if ``fsolve`` did not converge: it is run
    again from the same start with ``full_output=1`` (the same iterates, so the same status)."""
    from scipy.optimize import fsolve

    *_, ier, message = fsolve(func, x0, args=args, full_output=1, **options)
    if ier != 1:
        raise ArithmeticError(
            f"fsolve: the solver did not converge, so its result has no derivative: {message}"
        )


def _opt_fsolve_options(
    fprime: Any,
    col_deriv: Any,
    xtol: Any,
    maxfev: Any,
    band: Any,
    epsfcn: Any,
    factor: Any,
    diag: Any,
) -> dict[str, Any]:
    return {
        "fprime": fprime, "col_deriv": col_deriv, "xtol": xtol, "maxfev": maxfev, "band": band,
        "epsfcn": epsfcn, "factor": factor, "diag": diag,
    }  # fmt: skip


def fsolve_jvp(
    ans: Any,
    func: Any,
    x0: Any,
    args: tuple[Any, ...],
    dargs: Any,
    fprime: Any = None,
    col_deriv: Any = 0,
    xtol: Any = 1.49012e-08,
    maxfev: Any = 0,
    band: Any = None,
    epsfcn: Any = None,
    factor: Any = 100,
    diag: Any = None,
) -> Any:
    """The tangent of ``fsolve(func, x0, args)`` (the root ``ans``) for the tangents ``dargs``
    of ``args`` (:func:`root_jvp`), once SciPy's status says it converged."""
    args = tuple(args)
    options = _opt_fsolve_options(fprime, col_deriv, xtol, maxfev, band, epsfcn, factor, diag)
    _opt_fsolve_status(func, x0, args, options)
    return root_jvp(ans, func, args, dargs, "fsolve")


def fsolve_vjp(
    g: Any,
    ans: Any,
    func: Any,
    x0: Any,
    args: tuple[Any, ...],
    fprime: Any = None,
    col_deriv: Any = 0,
    xtol: Any = 1.49012e-08,
    maxfev: Any = 0,
    band: Any = None,
    epsfcn: Any = None,
    factor: Any = 100,
    diag: Any = None,
) -> tuple[Any, ...]:
    """The cotangents of ``args`` of ``fsolve(func, x0, args)`` (the root ``ans``) for its
    cotangent ``g`` (:func:`root_vjp`), once SciPy's status says it converged."""
    args = tuple(args)
    options = _opt_fsolve_options(fprime, col_deriv, xtol, maxfev, band, epsfcn, factor, diag)

    def compute() -> tuple[Any, ...]:
        _opt_fsolve_status(func, x0, args, options)
        return _opt_root_adjoint(g, ans, func, args, "fsolve")

    return func.remember((g, ans, x0, args), compute)  # type: ignore[no-any-return]


# -- minima ------------------------------------------------------------------------------------


def minimum(
    fun: Any,
    x0: Any,
    args: Any = (),
    method: Any = None,
    jac: Any = None,
    hess: Any = None,
    hessp: Any = None,
    bounds: Any = None,
    constraints: Any = (),
    tol: Any = None,
    callback: Any = None,
    options: Any = None,
) -> tuple[Any, ...]:
    """``scipy.optimize.minimize``'s result as the tuple of the fields a differentiated
    program reads (:data:`MINIMIZE_FIELDS`), then the result itself (for the derivatives).

    >>> x, value, success, *_ = minimum(lambda x: (x[0] - 2.0) ** 2, [0.0])
    >>> round(float(x[0]), 4), bool(success)
    (2.0, True)
    """
    from scipy.optimize import minimize

    res = minimize(
        fun, x0, args=args, method=method, jac=jac, hess=hess, hessp=hessp, bounds=bounds,
        constraints=constraints, tol=tol, callback=callback, options=options,
    )  # fmt: skip
    return (*(res.get(f, -1) for f in MINIMIZE_FIELDS), res)


MINIMIZE_FIELDS = ("x", "fun", "success", "status", "message", "nit", "nfev")


def _opt_free(x: Any, bounds: Any) -> np.ndarray:
    """Which flat coordinates of ``x`` are not held at a bound (``bounds``: None, pairs
    ``(low, high)`` with None for no bound, or an object with ``lb`` and ``ub``)."""
    xf = np.ravel(_floats(x))
    if bounds is None:
        return np.ones(xf.size, dtype=bool)
    if hasattr(bounds, "lb"):
        low = np.broadcast_to(_floats(bounds.lb), xf.shape)
        high = np.broadcast_to(_floats(bounds.ub), xf.shape)
    else:
        pairs = list(bounds)
        low = np.array([-np.inf if p[0] is None else float(p[0]) for p in pairs])
        high = np.array([np.inf if p[1] is None else float(p[1]) for p in pairs])
    scale = 1e-12 * (1.0 + np.abs(xf))
    return ~((xf <= low + scale) | (xf >= high - scale))  # type: ignore[no-any-return]


def _opt_hessian(fun: Any, x: Any, args: tuple[Any, ...], free: np.ndarray) -> np.ndarray:
    """The Hessian of ``fun`` w.r.t. ``x`` on the free coordinates (dense, by forward over
    reverse passes), checked finite and positive definite."""
    n = int(np.size(x))
    zeros = _tangents(None, args)
    columns = []
    for i in np.flatnonzero(free):
        _, tangents = fun.vjp_jvp((x, *args), 1.0, (_opt_flat_tangent(x, int(i), n), *zeros))
        columns.append(np.ravel(_floats(tangents[0]))[free])
    hess = np.stack(columns, axis=1) if columns else np.zeros((0, 0))
    if not np.all(np.isfinite(hess)):
        raise ArithmeticError(
            "minimize: the Hessian of the function at the minimum is not finite: the minimum "
            "does not move smoothly with the parameters"
        )
    hess = 0.5 * (hess + hess.T)
    if hess.size and np.linalg.eigvalsh(hess)[0] <= 1e-12 * max(1.0, np.abs(hess).max()):
        raise ArithmeticError(
            "minimize: the Hessian of the function at the point found is not positive "
            "definite (a flat direction, or not a strict minimum): the minimizer has no "
            "derivative w.r.t. the parameters there"
        )
    return hess


def _opt_converged(res: Any) -> None:
    if not res.success:
        raise ArithmeticError(
            f"minimize: the solver did not converge, so its result has no derivative: {res.message}"
        )


def minimize_jvp(res: Any, fun: Any, args: tuple[Any, ...], dargs: Any, bounds: Any = None) -> Any:
    """The tangent of the minimizer ``res.x`` of ``fun(x, *args)`` for the tangents
    ``dargs`` of ``args``: at a minimum ``∇ₓf(x*, θ) = 0``, so ``H dx* = -(∂²f/∂x∂θ) dθ``
    on the coordinates not held at a bound (0 on those)."""
    _opt_converged(res)
    x = res.x
    args = tuple(args)
    dargs = _tangents(dargs, args)
    free = _opt_free(x, bounds)
    hess = _opt_hessian(fun, x, args, free)
    _, tangents = fun.vjp_jvp((x, *args), 1.0, (np.zeros_like(_floats(x)), *dargs))
    dx = np.zeros(np.size(x))
    dx[free] = -np.linalg.solve(hess, np.ravel(_floats(tangents[0]))[free])
    return _opt_shaped(dx, x)


def minimize_vjp(
    g: Any, res: Any, fun: Any, args: tuple[Any, ...], bounds: Any = None
) -> tuple[Any, ...]:
    """The cotangents of ``args`` of the minimizer ``res.x`` of ``fun(x, *args)`` for its
    cotangent ``g``: ``H λ = g`` on the free coordinates, then ``-(∂²f/∂θ∂x) λ``."""
    args = tuple(args)
    if not np.any(g):  # (res.x is not read: minimize's other fields are)
        return tuple(np.zeros_like(_floats(a)) for a in args)
    return fun.remember(  # type: ignore[no-any-return]
        (g, res, args, bounds), lambda: _opt_minimize_adjoint(g, res, fun, args, bounds)
    )


def _opt_minimize_adjoint(
    g: Any, res: Any, fun: Any, args: tuple[Any, ...], bounds: Any
) -> tuple[Any, ...]:
    _opt_converged(res)
    x = res.x
    free = _opt_free(x, bounds)
    hess = _opt_hessian(fun, x, args, free)
    lam = np.zeros(np.size(x))
    lam[free] = np.linalg.solve(hess, (np.ravel(_floats(g)) + np.zeros(np.size(x)))[free])
    _, mixed = fun.vjp_jvp((x, *args), 1.0, (_opt_shaped(lam, x), *_tangents(None, args)))
    return tuple(-_floats(m) for m in mixed[1:])


def minimum_value_jvp(res: Any, fun: Any, args: tuple[Any, ...], dargs: Any) -> Any:
    """The tangent of the minimum ``res.fun`` of ``fun(x, *args)`` for the tangents ``dargs``
    of ``args``, by the envelope theorem: ``∂f/∂θ · dθ`` at ``(x*, θ)`` (``x*`` moves, but
    ``f`` is stationary along the way it may move)."""
    _opt_converged(res)
    args = tuple(args)
    _, tangent = fun.jvp((res.x, *args), (np.zeros_like(_floats(res.x)), *_tangents(dargs, args)))
    return tangent


def minimum_value_vjp(g: Any, res: Any, fun: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The cotangents of ``args`` of the minimum ``res.fun`` for its cotangent ``g``: ``g
    ∂f/∂θ`` at ``(x*, θ)`` (the envelope theorem)."""
    if not np.any(g):  # (res.fun is not read)
        return tuple(np.zeros_like(_floats(a)) for a in args)
    _opt_converged(res)
    _, cotangents = fun.vjp((res.x, *tuple(args)), g)
    return tuple(cotangents[1:])
