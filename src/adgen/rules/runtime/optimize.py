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

from .core import Refusal
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
    return value, _opt_checked(jac, n, what)


def _opt_checked(jac: np.ndarray, n: int, what: str) -> np.ndarray:
    """``jac`` (``∂f/∂x`` at the root), checked square, finite and well conditioned."""
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
    singular = jac[0, 0] == 0.0 if n == 1 else np.linalg.cond(jac) * np.finfo(float).eps >= 1.0
    if singular:
        raise ArithmeticError(
            f"{what}: the derivative of the function w.r.t. the unknowns is singular at the "
            "root (a double root, or a sign change that is no root): the root has no "
            "derivative w.r.t. the parameters there"
        )
    return jac


def _opt_solve(jac: np.ndarray, b: Any) -> np.ndarray:
    """``jac⁻¹ b`` for the (checked, regular) square ``jac``; a division for one unknown."""
    b = np.ravel(_floats(b)) + np.zeros(jac.shape[0])
    return b / jac[0, 0] if jac.shape == (1, 1) else np.linalg.solve(jac, b)


def _opt_shaped(flat: np.ndarray, like: Any) -> Any:
    """``flat`` in the shape of ``like`` (a float for a scalar)."""
    if np.ndim(like) == 0:
        return float(flat[0])
    return flat.reshape(np.shape(like))


def root_jvp(root: Any, func: Any, args: tuple[Any, ...], dargs: Any, what: str = "root") -> Any:
    """The tangent of the root ``root`` of ``func(x, *args) = 0`` for the tangents ``dargs``
    of ``args`` (None: zeros): ``-J⁻¹ (∂f/∂args · dargs)``.

    >>> from types import SimpleNamespace
    >>> f = SimpleNamespace(jvp=lambda a, t: (a[0] ** 2 - a[1], 2 * a[0] * t[0] - t[1]))
    >>> float(root_jvp(2.0, f, (4.0,), (1.0,)))  # x = sqrt(c): dx/dc = 1 / (2 x)
    0.25
    """
    args = tuple(args)
    dargs = _tangents(dargs, args)
    _, rhs = func.jvp((root, *args), (np.zeros_like(_floats(root)), *dargs))
    _, jac = _opt_jacobian(func, root, args, what)
    return _opt_shaped(-_opt_solve(jac, rhs), root)


def root_vjp(g: Any, root: Any, func: Any, args: tuple[Any, ...], what: str = "root") -> Any:
    """The cotangents of ``args`` (a tuple) of the root ``root`` of ``func(x, *args) = 0`` for
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
    key = (g, root, args)
    return func.remember(key, lambda: _opt_root_adjoint(g, root, func, args, what))


def root_cotangent(
    g: Any, root: Any, func: Any, args: tuple[Any, ...], k: int, what: str = "root"
) -> Any:
    """The cotangent of ``args[k]`` of the root: ``root_vjp(g, root, func, args)[k]`` (the
    solve is shared by the cotangents of all ``args``: :func:`root_vjp` remembers it).

    >>> from types import SimpleNamespace
    >>> f = SimpleNamespace(
    ...     vjp=lambda a, c: (a[0] ** 2 - a[1], (2 * a[0] * c, -c)),
    ...     jvp=lambda a, t: (a[0] ** 2 - a[1], 2 * a[0] * t[0] - t[1]),
    ...     remember=lambda key, compute: compute(),
    ... )
    >>> float(root_cotangent(1.0, 2.0, f, (4.0,), 0))
    0.25
    """
    return root_vjp(g, root, func, args, what)[k]


def root_vjp_jvp(
    g: Any,
    root: Any,
    func: Any,
    args: tuple[Any, ...],
    droot: Any,
    dargs: Any,
    what: str = "root",
) -> tuple[Any, ...]:
    """The tangent of :func:`root_vjp` ``(g, root, func, args)`` along the tangents ``droot``
    and ``dargs`` (None: zeros), ``g`` held: with ``λ = J⁻ᵀ g`` and ``(ρₓ, ρ_θ)`` the
    tangents of ``(Jᵀλ, (∂f/∂θ)ᵀλ)`` (``λ`` held; forward over reverse passes of ``f``), it
    is ``-ρ_θ + (∂f/∂θ)ᵀ J⁻ᵀ ρₓ`` -- second derivatives of ``f`` and one more solve. A
    gradient through a root differentiated again (``hessian``, ``hvp``) uses it."""
    args = tuple(args)
    key = (g, root, args, droot, dargs, "tangent")
    return func.remember(  # type: ignore[no-any-return]
        key, lambda: _opt_root_adjoint_tangent(g, root, func, args, droot, dargs, what)
    )


def _opt_root_adjoint_tangent(
    g: Any, root: Any, func: Any, args: tuple[Any, ...], droot: Any, dargs: Any, what: str
) -> tuple[Any, ...]:
    dargs = _tangents(dargs, args)
    droot = np.zeros_like(_floats(root)) if droot is None else droot
    value, jac = _opt_jacobian(func, root, args, what)
    lam = _opt_solve(jac.T, g)
    _, rho = func.vjp_jvp((root, *args), _opt_shaped(lam, value), (droot, *dargs))
    back = _opt_root_adjoint(rho[0], root, func, args, what)
    return tuple(-_floats(r) - b for r, b in zip(rho[1:], back, strict=True))


def _opt_root_adjoint(
    g: Any, ans: Any, func: Any, args: tuple[Any, ...], what: str
) -> tuple[Any, ...]:
    if np.ndim(ans) == 0:  # one unknown: one reverse pass gives both ∂f/∂x and ∂f/∂args
        value, cots = func.vjp((ans, *args), 1.0)
        if np.ndim(value) == 0:
            slope = _opt_checked(np.reshape(_floats(cots[0]), (-1, 1)), 1, what)[0, 0]
            scale = -_floats(g) / slope
            return tuple(scale * _floats(c) for c in cots[1:])
    value, jac = _opt_jacobian(func, ans, args, what)
    lam = _opt_solve(jac.T, g)
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


# -- root_scalar, root -------------------------------------------------------------------------

ROOT_SCALAR_FIELDS = ("root", "converged", "flag", "iterations", "function_calls")


def scalar_root(
    f: Any,
    args: Any = (),
    method: Any = None,
    bracket: Any = None,
    fprime: Any = None,
    fprime2: Any = None,
    x0: Any = None,
    x1: Any = None,
    xtol: Any = None,
    rtol: Any = None,
    maxiter: Any = None,
    options: Any = None,
) -> tuple[Any, ...]:
    """``scipy.optimize.root_scalar``'s result as the tuple of its fields
    (:data:`ROOT_SCALAR_FIELDS`).

    >>> root, converged, *_ = scalar_root(lambda x: x**2 - 2.0, bracket=(0.0, 2.0), xtol=1e-14)
    >>> round(root, 12), converged
    (1.414213562373, True)
    """
    from scipy.optimize import root_scalar

    sol = root_scalar(
        f, args=args, method=method, bracket=bracket, fprime=fprime, fprime2=fprime2, x0=x0,
        x1=x1, xtol=xtol, rtol=rtol, maxiter=maxiter, options=options,
    )  # fmt: skip
    return tuple(getattr(sol, name) for name in ROOT_SCALAR_FIELDS)


def _opt_scalar_converged(ans: Any) -> None:
    if not ans[1]:
        raise ArithmeticError(
            "root_scalar: the solver did not converge, so its root has no derivative "
            f"(flag: {ans[2]!r})"
        )


def scalar_root_jvp(ans: Any, f: Any, args: tuple[Any, ...], dargs: Any) -> Any:
    """The tangent of ``root_scalar``'s ``root`` (``ans[0]``) for the tangents ``dargs`` of
    ``args`` (:func:`root_jvp`), once its ``converged`` (``ans[1]``) says it converged."""
    _opt_scalar_converged(ans)
    return root_jvp(ans[0], f, args, dargs, "root_scalar")


def scalar_root_vjp(g: Any, ans: Any, f: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The cotangents of ``args`` of ``root_scalar``'s ``root`` for its cotangent ``g``
    (:func:`root_vjp`), once it converged; zeros if the root is not read."""
    args = tuple(args)
    if not np.any(g):
        return tuple(np.zeros_like(_floats(a)) for a in args)
    _opt_scalar_converged(ans)
    return root_vjp(g, ans[0], f, args, "root_scalar")  # type: ignore[no-any-return]


ROOT_FIELDS = ("x", "success", "status", "message", "nfev", "fun")


def vector_root(
    fun: Any,
    x0: Any,
    args: Any = (),
    method: Any = "hybr",
    jac: Any = None,
    tol: Any = None,
    callback: Any = None,
    options: Any = None,
) -> tuple[Any, ...]:
    """``scipy.optimize.root``'s result as the tuple of its fields (:data:`ROOT_FIELDS`),
    then the result itself.

    >>> x, success, *_ = vector_root(lambda x: x**3 - 8.0, [1.0], tol=1e-12)
    >>> round(float(x[0]), 9), bool(success)
    (2.0, True)
    """
    from scipy.optimize import root

    res = root(
        fun, x0, args=args, method=method, jac=jac, tol=tol, callback=callback, options=options
    )
    return (*(res.get(f, -1) for f in ROOT_FIELDS), res)


def _opt_succeeded(res: Any, what: str) -> None:
    if not res.success:
        raise ArithmeticError(
            f"{what}: the solver did not converge, so its result has no derivative: {res.message}"
        )


def vector_root_jvp(res: Any, fun: Any, args: tuple[Any, ...], dargs: Any) -> Any:
    """The tangent of ``root``'s ``x`` for the tangents ``dargs`` of ``args``
    (:func:`root_jvp`), once its ``success`` says it converged."""
    _opt_succeeded(res, "root")
    return root_jvp(res.x, fun, args, dargs, "root")


def vector_root_residual(res: Any) -> Any:
    """The tangent of ``root``'s ``fun``, ``f(x*, θ)``: 0, once it converged. At the exact
    root (the point the derivatives are those of) ``f(x*(θ), θ) = 0`` for every ``θ``
    near, so its derivative is 0 (``f_x dx* + f_θ dθ = 0`` by the implicit function
    theorem)."""
    _opt_succeeded(res, "root")
    return np.zeros_like(_floats(res.fun))


def vector_root_vjp(
    g: Any, g_fun: Any, res: Any, fun: Any, args: tuple[Any, ...]
) -> tuple[Any, ...]:
    """The cotangents of ``args`` of ``root``'s ``x`` and ``fun`` for their cotangents ``g``
    and ``g_fun`` (``fun`` contributes nothing: :func:`vector_root_residual`)."""
    args = tuple(args)
    if not np.any(g) and not np.any(g_fun):
        return tuple(np.zeros_like(_floats(a)) for a in args)
    _opt_succeeded(res, "root")
    if not np.any(g):
        return tuple(np.zeros_like(_floats(a)) for a in args)
    return root_vjp(g, res.x, fun, args, "root")  # type: ignore[no-any-return]


# -- minimize_scalar ---------------------------------------------------------------------------

MINIMIZE_SCALAR_FIELDS = ("x", "fun", "success", "message", "nit", "nfev")


def scalar_minimum(
    fun: Any,
    bracket: Any = None,
    bounds: Any = None,
    args: Any = (),
    method: Any = None,
    tol: Any = None,
    options: Any = None,
) -> tuple[Any, ...]:
    """``scipy.optimize.minimize_scalar``'s result as the tuple of its fields
    (:data:`MINIMIZE_SCALAR_FIELDS`), then the result itself.

    >>> x, value, success, *_ = scalar_minimum(lambda x: (x - 1.5) ** 2 + 1.0, tol=1e-10)
    >>> round(float(x), 6), round(float(value), 6), bool(success)
    (1.5, 1.0, True)
    """
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(
        fun, bracket=bracket, bounds=bounds, args=args, method=method, tol=tol, options=options
    )
    return (*(res.get(f, -1) for f in MINIMIZE_SCALAR_FIELDS), res)


def _opt_scalar_curvature(
    res: Any, fun: Any, args: tuple[Any, ...], method: Any, bounds: Any
) -> float | None:
    """``f''(x*)`` at the minimum ``res.x`` of ``minimize_scalar`` (positive, else raise), or
    None where the minimum is held at a bound (``method="bounded"``): there the quadratic
    model of ``f`` has its minimum beyond the bound."""
    _opt_succeeded(res, "minimize_scalar")
    x = float(res.x)
    zeros = _tangents(None, args)
    grad, curv = fun.vjp_jvp((x, *args), 1.0, (1.0, *zeros))
    g, h = float(_floats(grad[0])), float(_floats(curv[0]))
    if not (np.isfinite(g) and np.isfinite(h)):
        raise ArithmeticError(
            "minimize_scalar: the derivatives of the function at the minimum are not "
            "finite: the minimum does not move smoothly with the parameters"
        )
    if isinstance(method, str) and method.lower() == "bounded" and bounds is not None:
        low, high = (float(b) for b in bounds)
        if h > 0:
            unconstrained = x - g / h
            if unconstrained <= low or unconstrained >= high:
                return None
        elif (x - low) <= 1e-6 * (1.0 + abs(x)) + 1e-5 or (high - x) <= 1e-6 * (
            1.0 + abs(x)
        ) + 1e-5:
            return None
    if h <= 1e-12 * max(1.0, abs(g)):
        raise ArithmeticError(
            "minimize_scalar: the second derivative of the function at the point found is "
            "not positive (a flat or not a strict minimum): the minimizer has no derivative "
            "w.r.t. the parameters there"
        )
    return h


def scalar_minimum_jvp(
    res: Any, fun: Any, args: tuple[Any, ...], dargs: Any, method: Any = None, bounds: Any = None
) -> Any:
    """The tangent of ``minimize_scalar``'s ``x`` for the tangents ``dargs`` of ``args``:
    ``f''(x*) dx* = -(∂f'/∂θ) dθ``, or 0 at a bound (``method="bounded"``)."""
    args = tuple(args)
    h = _opt_scalar_curvature(res, fun, args, method, bounds)
    if h is None:
        return 0.0
    _, mixed = fun.vjp_jvp((float(res.x), *args), 1.0, (0.0, *_tangents(dargs, args)))
    return -float(_floats(mixed[0])) / h


def scalar_minimum_vjp(
    g: Any, res: Any, fun: Any, args: tuple[Any, ...], method: Any = None, bounds: Any = None
) -> tuple[Any, ...]:
    """The cotangents of ``args`` of ``minimize_scalar``'s ``x`` for its cotangent ``g``:
    ``-(∂²f/∂θ∂x) g / f''(x*)`` (zeros at a bound)."""
    args = tuple(args)
    if not np.any(g):
        return tuple(np.zeros_like(_floats(a)) for a in args)

    def compute() -> tuple[Any, ...]:
        h = _opt_scalar_curvature(res, fun, args, method, bounds)
        if h is None:
            return tuple(np.zeros_like(_floats(a)) for a in args)
        lam = float(_floats(g)) / h
        _, mixed = fun.vjp_jvp((float(res.x), *args), 1.0, (lam, *_tangents(None, args)))
        return tuple(-_floats(m) for m in mixed[1:])

    return fun.remember((g, res, args, method, bounds), compute)  # type: ignore[no-any-return]


def scalar_minimum_value_jvp(res: Any, fun: Any, args: tuple[Any, ...], dargs: Any) -> Any:
    """The tangent of ``minimize_scalar``'s ``fun`` (the envelope theorem: ``∂f/∂θ · dθ``;
    at a bound too, where ``x*`` does not move)."""
    _opt_succeeded(res, "minimize_scalar")
    args = tuple(args)
    _, tangent = fun.jvp((float(res.x), *args), (0.0, *_tangents(dargs, args)))
    return tangent


def scalar_minimum_value_vjp(g: Any, res: Any, fun: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The cotangents of ``args`` of ``minimize_scalar``'s ``fun`` for its cotangent ``g``."""
    args = tuple(args)
    if not np.any(g):
        return tuple(np.zeros_like(_floats(a)) for a in args)
    _opt_succeeded(res, "minimize_scalar")
    _, cotangents = fun.vjp((float(res.x), *args), g)
    return tuple(cotangents[1:])


# -- least_squares -----------------------------------------------------------------------------

LEAST_SQUARES_FIELDS = ("x", "cost", "fun", "success", "status", "message", "nfev")


def least_squares_fit(
    fun: Any,
    x0: Any,
    jac: Any = "2-point",
    bounds: Any = (-np.inf, np.inf),
    method: Any = "trf",
    ftol: Any = 1e-08,
    xtol: Any = 1e-08,
    gtol: Any = 1e-08,
    x_scale: Any = None,
    loss: Any = "linear",
    f_scale: Any = 1.0,
    diff_step: Any = None,
    tr_solver: Any = None,
    tr_options: Any = None,
    jac_sparsity: Any = None,
    max_nfev: Any = None,
    verbose: Any = 0,
    args: Any = (),
    kwargs: Any = None,
    callback: Any = None,
    workers: Any = None,
) -> tuple[Any, ...]:
    """``scipy.optimize.least_squares``'s result as the tuple of its fields
    (:data:`LEAST_SQUARES_FIELDS`), then the result itself. Options left at None are not
    passed (SciPy's defaults).

    >>> x, cost, r, success, *_ = least_squares_fit(lambda x: x - [1.0, 2.0], [0.0, 0.0])
    >>> x.round(6).tolist(), bool(success)
    ([1.0, 2.0], True)
    """
    from scipy.optimize import least_squares

    given = {
        "x_scale": x_scale, "tr_solver": tr_solver, "tr_options": tr_options,
        "jac_sparsity": jac_sparsity, "max_nfev": max_nfev, "kwargs": kwargs,
        "callback": callback, "workers": workers, "diff_step": diff_step,
    }  # fmt: skip
    res = least_squares(
        fun, x0, jac=jac, bounds=bounds, method=method, ftol=ftol, xtol=xtol, gtol=gtol,
        loss=loss, f_scale=f_scale, verbose=verbose, args=args,
        **{k: v for k, v in given.items() if v is not None},
    )  # fmt: skip
    return (*(res.get(f, -1) for f in LEAST_SQUARES_FIELDS), res)


def _opt_dense_jacobian(fun: Any, x: Any, args: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``fun(x, *args)`` (flat) and ``∂fun/∂x`` as a dense ``(m, n)`` matrix."""
    n = int(np.size(x))
    zeros = _tangents(None, args)
    columns, value = [], None
    for i in range(n):
        value, column = fun.jvp((x, *args), (_opt_flat_tangent(x, i, n), *zeros))
        columns.append(np.ravel(_floats(column)))
    if value is None:
        value = fun(x, *args)
    r = np.ravel(_floats(value))
    return r, (np.stack(columns, axis=1) if columns else np.zeros((r.size, 0)))


class _OptLeastSquares:
    """The optimality of ``min ½‖r(x, θ)‖²`` at ``x*``: ``G = Jᵀr = 0`` on the free coordinates,
    with ``H = ∂G/∂x = JᵀJ + Σ rᵢ ∇²rᵢ`` (the second term by forward-over-reverse passes of
    ``r`` with the cotangent ``r`` held fixed)."""

    def __init__(self, fun: Any, x: Any, args: tuple[Any, ...], free: np.ndarray, what: str):
        self.fun, self.x, self.args, self.free, self.what = fun, x, args, free, what
        self.r, self.jac = _opt_dense_jacobian(fun, x, args)
        self.rv = _opt_shaped(self.r, fun(x, *args))
        n = int(np.size(x))
        zeros = _tangents(None, args)
        columns = []
        for i in np.flatnonzero(free):
            _, tangents = fun.vjp_jvp(
                (x, *args), self.rv, (_opt_flat_tangent(x, int(i), n), *zeros)
            )
            columns.append(np.ravel(_floats(tangents[0]))[free])
        second = np.stack(columns, axis=1) if columns else np.zeros((0, 0))
        jf = self.jac[:, free]
        hess = jf.T @ jf + second
        if not np.all(np.isfinite(hess)):
            raise ArithmeticError(
                f"{what}: the derivatives of the residuals at the solution are not finite: the "
                "solution does not move smoothly with the parameters"
            )
        hess = 0.5 * (hess + hess.T)
        if hess.size and np.linalg.eigvalsh(hess)[0] <= 1e-12 * max(1.0, np.abs(hess).max()):
            raise ArithmeticError(
                f"{what}: the Hessian of the sum of squares at the solution is not positive "
                "definite (parameters the residuals do not determine, or not a strict "
                "minimum): the solution has no derivative w.r.t. the parameters there"
            )
        self.hess = hess

    def jvp(self, dargs: Any) -> tuple[Any, Any, Any]:
        """The tangents of ``(x*, cost, r(x*))`` for the tangents ``dargs`` of ``args``."""
        fun, x, args = self.fun, self.x, self.args
        dargs = _tangents(dargs, args)
        zero = np.zeros_like(_floats(x))
        _, dr_theta = fun.jvp((x, *args), (zero, *dargs))
        dr_theta = np.ravel(_floats(dr_theta)) + np.zeros(self.r.size)
        _, mixed = fun.vjp_jvp((x, *args), self.rv, (zero, *dargs))
        rhs = self.jac.T @ dr_theta + np.ravel(_floats(mixed[0]))
        dx = np.zeros(np.size(x))
        dx[self.free] = -np.linalg.solve(self.hess, rhs[self.free])
        dr = self.jac @ dx + dr_theta
        dcost = float(self.r @ dr_theta)  # the envelope theorem
        return _opt_shaped(dx, x), dcost, _opt_shaped(dr, self.rv)

    def vjp(self, gx: Any, gcost: Any, gr: Any) -> tuple[Any, ...]:
        """The cotangents of ``args`` for the cotangents of ``(x*, cost, r(x*))``."""
        fun, x, args = self.fun, self.x, self.args
        n = int(np.size(x))
        gr = np.ravel(_floats(gr)) + np.zeros(self.r.size)
        xbar = np.ravel(_floats(gx)) + np.zeros(n) + self.jac.T @ gr
        lam = np.zeros(n)
        lam[self.free] = np.linalg.solve(self.hess, xbar[self.free])
        direct = float(_floats(gcost)) * self.r + gr - self.jac @ lam
        _, cotangents = fun.vjp((x, *args), _opt_shaped(direct, self.rv))
        _, mixed = fun.vjp_jvp((x, *args), self.rv, (_opt_shaped(lam, x), *_tangents(None, args)))
        return tuple(_floats(c) - _floats(m) for c, m in zip(cotangents[1:], mixed[1:]))


def _opt_least_squares_free(res: Any) -> np.ndarray:
    mask = getattr(res, "active_mask", None)
    if mask is None:
        return np.ones(np.size(res.x), dtype=bool)
    return np.ravel(np.asarray(mask)) == 0  # type: ignore[no-any-return]


def least_squares_jvp(res: Any, fun: Any, args: tuple[Any, ...], dargs: Any) -> tuple[Any, ...]:
    """The tangents of ``least_squares``'s ``(x, cost, fun)`` for the tangents ``dargs`` of
    ``args``: ``H dx* = -(Jᵀ r_θ + Σ rᵢ ∇²ₓθ rᵢ) dθ`` on the coordinates not held at a bound
    (``res.active_mask``), ``dcost = rᵀ r_θ dθ`` (the envelope theorem), ``dr = J dx* + r_θ
    dθ``."""
    _opt_succeeded(res, "least_squares")
    args = tuple(args)
    model = _OptLeastSquares(fun, res.x, args, _opt_least_squares_free(res), "least_squares")
    return model.jvp(dargs)


def least_squares_vjp(
    gx: Any, gcost: Any, gr: Any, res: Any, fun: Any, args: tuple[Any, ...]
) -> tuple[Any, ...]:
    """The cotangents of ``args`` of ``least_squares``'s ``(x, cost, fun)`` for their
    cotangents (one adjoint solve shared by all of ``args``)."""
    args = tuple(args)
    if not (np.any(gx) or np.any(gcost) or np.any(gr)):
        return tuple(np.zeros_like(_floats(a)) for a in args)

    def compute() -> tuple[Any, ...]:
        _opt_succeeded(res, "least_squares")
        if not (np.any(gx) or np.any(gr)):  # only the cost: no Hessian
            _, cotangents = fun.vjp((res.x, *args), float(_floats(gcost)) * _floats(res.fun))
            return tuple(cotangents[1:])
        model = _OptLeastSquares(fun, res.x, args, _opt_least_squares_free(res), "least_squares")
        return model.vjp(gx, gcost, gr)

    return fun.remember((gx, gcost, gr, res, args), compute)  # type: ignore[no-any-return]


# -- curve_fit ---------------------------------------------------------------------------------


def fitted_curve(
    f: Any,
    xdata: Any,
    ydata: Any,
    p0: Any = None,
    sigma: Any = None,
    absolute_sigma: Any = False,
    check_finite: Any = None,
    bounds: Any = (-np.inf, np.inf),
    method: Any = None,
    jac: Any = None,
    full_output: Any = False,
    nan_policy: Any = None,
    ftol: Any = None,
    xtol: Any = None,
    gtol: Any = None,
    maxfev: Any = None,
    max_nfev: Any = None,
    _captured: Any = (),
) -> tuple[Any, Any]:
    """``scipy.optimize.curve_fit``'s ``(popt, pcov)``, for the function ``f(x, *p,
    *captured)`` (the variables a lifted ``f`` reads come last: ``_captured``, appended by
    adgen's lowering); ``p0`` None: ones, one per parameter of ``f`` (SciPy's default).

    >>> popt, pcov = fitted_curve(lambda x, a, b: a * x + b, [0.0, 1.0, 2.0], [1.0, 3.0, 5.0])
    >>> popt.round(6).tolist()
    [2.0, 1.0]
    """
    from scipy.optimize import curve_fit

    captured = tuple(_captured)
    if p0 is None:
        names = getattr(f, "wrt", None)  # (adgen's function: its parameters, lifted)
        if names is None:
            import inspect

            names = list(inspect.signature(f).parameters)
        count = len(names) - 1 - len(captured)
        if count < 1:
            raise ValueError("curve_fit: pass p0 (the number of parameters is not known)")
        p0 = np.ones(count)

    def model(x: Any, *p: Any) -> Any:
        return f(x, *p, *captured)

    gradient = jac
    if callable(jac) and captured:

        def gradient(x: Any, *p: Any) -> Any:
            return jac(x, *p, *captured)

    extra = {
        "ftol": ftol, "xtol": xtol, "gtol": gtol, "maxfev": maxfev, "max_nfev": max_nfev,
        "nan_policy": nan_policy,
    }  # fmt: skip
    popt, pcov = curve_fit(
        model, xdata, ydata, p0=p0, sigma=sigma, absolute_sigma=absolute_sigma,
        check_finite=check_finite, bounds=bounds, method=method, jac=gradient,
        **{k: v for k, v in extra.items() if v is not None},
    )  # fmt: skip
    return popt, pcov


class _OptCurveResidual:
    """The weighted residuals of ``curve_fit``, ``r(p; x, y, σ, c) = (f(x, *p, *c) - y) / σ``,
    as a function of ``(p, x, y, σ, *c)`` with the interface of a solver's function (call,
    ``jvp``, ``vjp``, ``vjp_jvp``) built on ``f``'s: what :class:`_OptLeastSquares` needs."""

    def __init__(self, f: Any) -> None:
        self.f = f

    def _f_args(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        p, x, _, _, *captured = args
        return (x, *np.ravel(_floats(p)), *captured)

    def _f_tangents(self, args: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, ...]:
        dp, dx, _, _, *dcaptured = tangents
        return (dx, *(np.ravel(_floats(dp)) + np.zeros(np.size(args[0]))), *dcaptured)

    def _weights(self, args: tuple[Any, ...]) -> np.ndarray:
        return 1.0 / _floats(args[3])  # type: ignore[no-any-return]

    def __call__(self, *args: Any) -> Any:
        return (_floats(self.f(*self._f_args(args))) - args[2]) * self._weights(args)

    def jvp(self, args: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        w = self._weights(args)
        value, dvalue = self.f.jvp(self._f_args(args), self._f_tangents(args, tangents))
        r = (_floats(value) - args[2]) * w
        return r, w * (_floats(dvalue) - tangents[2]) - r * w * tangents[3]

    def _split(self, args: tuple[Any, ...], cots: tuple[Any, ...]) -> tuple[Any, ...]:
        """f's cotangents ``(x, p_1..p_k, *c)`` as those of ``(p, x, *c)``."""
        k = int(np.size(args[0]))
        dp = np.array([float(_floats(c)) for c in cots[1 : 1 + k]]).reshape(np.shape(args[0]))
        return (dp, cots[0], *cots[1 + k :])

    def vjp(self, args: tuple[Any, ...], cotangent: Any) -> tuple[Any, tuple[Any, ...]]:
        w = self._weights(args)
        c = _floats(cotangent)
        value, cots = self.f.vjp(self._f_args(args), c * w)
        r = (_floats(value) - args[2]) * w
        p_bar, x_bar, *captured_bar = self._split(args, tuple(cots))
        return r, (p_bar, x_bar, -c * w, -c * r * w, *captured_bar)

    def vjp_jvp(
        self, args: tuple[Any, ...], cotangent: Any, tangents: tuple[Any, ...]
    ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        w = self._weights(args)
        c = _floats(cotangent)
        ds = _floats(tangents[3])
        fargs, ftangents = self._f_args(args), self._f_tangents(args, tangents)
        cots, dcots = self.f.vjp_jvp(fargs, c * w, ftangents)
        _, more = self.f.vjp(fargs, -c * w * w * ds)  # the cotangent c w moves with σ
        value, dvalue = self.f.jvp(fargs, ftangents)
        gap, dgap = _floats(value) - args[2], _floats(dvalue) - tangents[2]
        p_bar, x_bar, *captured_bar = self._split(args, tuple(cots))
        dcots = tuple(_floats(a) + _floats(b) for a, b in zip(dcots, more))
        dp_bar, dx_bar, *dcaptured_bar = self._split(args, dcots)
        return (
            (p_bar, x_bar, -c * w, -c * gap * w * w, *captured_bar),
            (
                dp_bar, dx_bar, c * w * w * ds, -c * dgap * w * w + 2 * c * gap * w**3 * ds,
                *dcaptured_bar,
            ),
        )  # fmt: skip

    def remember(self, key: tuple[Any, ...], compute: Any) -> Any:
        return self.f.remember(key, compute)


def _opt_curve_model(
    popt: Any, f: Any, xdata: Any, ydata: Any, sigma: Any, bounds: Any, captured: Any
) -> _OptLeastSquares:
    if sigma is not None and np.ndim(sigma) > 1:
        raise Refusal(
            "the derivative of curve_fit with a covariance matrix `sigma` (2-d)",
            "pass the standard deviations of ydata (a 1-d sigma)",
        )
    y = _floats(ydata)
    s = np.ones_like(y) if sigma is None else np.broadcast_to(_floats(sigma), y.shape)
    args = (xdata, y, s, *tuple(captured))
    low, high = (bounds.lb, bounds.ub) if hasattr(bounds, "lb") else bounds
    low = np.broadcast_to(_floats(low), np.shape(popt))
    high = np.broadcast_to(_floats(high), np.shape(popt))
    p = np.ravel(_floats(popt))
    scale = 1e-10 * (1.0 + np.abs(p))
    free = ~((p <= np.ravel(low) + scale) | (p >= np.ravel(high) - scale))
    return _OptLeastSquares(_OptCurveResidual(f), _floats(popt), args, free, "curve_fit")


def curve_fit_jvp(
    popt: Any,
    f: Any,
    xdata: Any,
    ydata: Any,
    sigma: Any,
    bounds: Any,
    captured: Any,
    dxdata: Any,
    dydata: Any,
    dsigma: Any,
    dcaptured: Any,
) -> Any:
    """The tangent of ``curve_fit``'s ``popt`` for the tangents of ``xdata``, ``ydata``,
    ``sigma`` and the variables ``f`` reads (None: zeros): the least-squares optimality of
    the weighted residuals (:class:`_OptLeastSquares`); parameters at a bound do not move."""
    model = _opt_curve_model(popt, f, xdata, ydata, sigma, bounds, captured)
    zeros = _tangents(None, model.args)
    given = (dxdata, dydata, dsigma, *_tangents(dcaptured, tuple(captured)))
    dargs = tuple(z if d is None else d for z, d in zip(zeros, given))
    return model.jvp(dargs)[0]


def curve_fit_vjp(
    g: Any,
    popt: Any,
    f: Any,
    xdata: Any,
    ydata: Any,
    sigma: Any,
    bounds: Any,
    captured: Any,
) -> tuple[Any, ...]:
    """The cotangents of ``(xdata, ydata, sigma, *captured)`` of ``curve_fit``'s ``popt``
    for the cotangents ``g`` of ``(popt, pcov)``: ``pcov``'s derivative is refused."""
    if np.any(g[1]):
        raise Refusal(
            "the derivative of curve_fit's covariance `pcov`",
            "differentiate popt only; compute a covariance with adgen.jacfwd of the residuals",
        )
    captured = tuple(captured)

    def compute() -> tuple[Any, ...]:
        model = _opt_curve_model(popt, f, xdata, ydata, sigma, bounds, captured)
        if not np.any(g[0]):
            return tuple(np.zeros_like(_floats(a)) for a in model.args)
        return model.vjp(g[0], 0.0, np.zeros_like(model.r))

    return f.remember((g[0], popt, xdata, ydata, sigma, captured), compute)  # type: ignore[no-any-return]


def curve_fit_covariance_jvp(pcov: Any) -> Any:
    """The tangent of ``curve_fit``'s ``pcov``: refused (when it reaches the result)."""
    raise Refusal(
        "the derivative of curve_fit's covariance `pcov`",
        "differentiate popt only; compute a covariance with adgen.jacfwd of the residuals",
    )
