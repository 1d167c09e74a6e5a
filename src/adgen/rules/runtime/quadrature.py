"""Helpers of ``rules/quadrature.py``: derivatives of SciPy's quadratures.

Adaptive quadrature of a function (``quad``, ``quad_vec``): differentiation under the
integral sign, ``d/dθ ∫_a^b f(x, θ) dx = ∫_a^b ∂f/∂θ dx``, the integral of the integrand's
derivative computed by SciPy with the options of the call (so a derivative is exact to the
same tolerances as the value), and the limits' terms ``d/db = f(b)``, ``d/da = -f(a)``
(zero at an infinite limit, where a convergent integrand vanishes). ``func`` is the
:class:`~adgen.seam.Callback` the call was given (the function as written; its forward and
reverse code w.r.t. every argument); reverse mode integrates the integrand's cotangents of
every argument at once (``quad_vec``), remembered so that each argument's template reads the
same integration.

Fixed-order Gauss quadrature (``fixed_quad``) is differentiated exactly: the derivative of
``(b - a)/2 Σ w_i f(x_i, θ)`` with the nodes ``x_i`` moving with the limits.

Quadratures of samples (``simpson``, ``romb``) are linear in the samples ``y``; their
cotangent is ``g`` times each sample's weight, the weights read off the rule applied to the
unit vectors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .solvers import _flat_cotangents, _floats, _tangents, _unflatten


def _quad_options(
    epsabs: Any, epsrel: Any, limit: Any, points: Any, a: Any, b: Any
) -> dict[str, Any]:
    options = {"epsabs": epsabs, "epsrel": epsrel, "limit": limit}
    if points is not None and np.isfinite(a) and np.isfinite(b):
        options["points"] = points
    return options


def quad_end(func: Any, x: Any, args: tuple[Any, ...], like: Any = 0.0) -> Any:
    """The integrand at the limit ``x`` (``d/db ∫_a^b f = f(b)``); zeros shaped like the
    integral ``like`` at an infinite limit (the integrand of a convergent integral vanishes
    there; it is not evaluated).

    >>> class F:
    ...     def __call__(self, x, c):
    ...         return c * x
    >>> float(quad_end(F(), 2.0, (3.0,))), float(quad_end(F(), np.inf, (3.0,)))
    (6.0, 0.0)
    """
    if not np.all(np.isfinite(x)):
        return np.zeros_like(_floats(like))
    return func(x, *args)


def quad_jvp(
    func: Any,
    a: Any,
    b: Any,
    args: tuple[Any, ...],
    parts: Any,
    epsabs: Any = 1.49e-8,
    epsrel: Any = 1.49e-8,
    limit: Any = 50,
    points: Any = None,
) -> Any:
    """The tangent of ``quad(func, a, b, args)`` for the tangents ``parts`` of ``args``
    (the limits held): ``∫_a^b ∂f/∂args · parts dx`` by ``quad`` with the same options."""
    from scipy.integrate import quad

    args = tuple(args)
    dots = _tangents(parts, args)

    def tangent(x: float) -> float:
        return float(func.jvp((x, *args), (0.0, *dots))[1])

    return quad(tangent, a, b, **_quad_options(epsabs, epsrel, limit, points, a, b))[0]


def quad_vjp(
    func: Any,
    a: Any,
    b: Any,
    args: tuple[Any, ...],
    epsabs: Any = 1.49e-8,
    epsrel: Any = 1.49e-8,
    limit: Any = 50,
    points: Any = None,
) -> tuple[Any, ...]:
    """``∫_a^b ∂f/∂args_k dx`` for each of ``args`` (the cotangents of ``quad(func, a, b,
    args)`` for a cotangent 1), all at once by ``quad_vec`` of the integrand's reverse code
    (``max`` norm, the call's tolerances), remembered for the same inputs."""
    args = tuple(args)
    key = ("quad", a, b, args, epsabs, epsrel, limit, points)
    return func.remember(  # type: ignore[no-any-return]
        key, lambda: _integrated_cotangents(func, a, b, args, 1.0, epsabs, epsrel, limit, points)
    )


def _integrated_cotangents(
    func: Any,
    a: Any,
    b: Any,
    args: tuple[Any, ...],
    g: Any,
    epsabs: Any,
    epsrel: Any,
    limit: Any,
    points: Any,
) -> tuple[Any, ...]:
    from scipy.integrate import quad_vec

    if not args:
        return ()

    vjp = func.pullback() if hasattr(func, "pullback") else func.vjp

    def cotangents(x: float) -> np.ndarray:
        return _flat_cotangents(vjp((x, *args), g)[1][1:])

    options = _quad_options(epsabs, epsrel, limit, points, a, b)
    options["epsabs"] = max(float(options["epsabs"]), 1e-200)
    total = quad_vec(cotangents, a, b, norm="max", **options)[0]
    return _unflatten(np.asarray(total), args)


def quad_vec_jvp(
    func: Any,
    a: Any,
    b: Any,
    args: tuple[Any, ...],
    parts: Any,
    epsabs: Any = 1e-200,
    epsrel: Any = 1e-8,
    norm: Any = "2",
    limit: Any = 10000,
    points: Any = None,
    quadrature: Any = None,
) -> Any:
    """The tangent of ``quad_vec(func, a, b, args=args)`` for the tangents ``parts`` of
    ``args`` (the limits held): ``∫_a^b ∂f/∂args · parts dx`` by ``quad_vec``, same
    options."""
    from scipy.integrate import quad_vec

    args = tuple(args)
    dots = _tangents(parts, args)

    def tangent(x: float) -> Any:
        return func.jvp((x, *args), (0.0, *dots))[1]

    options = {"epsabs": epsabs, "epsrel": epsrel, "norm": norm, "limit": limit}
    options["points"], options["quadrature"] = points, quadrature
    return quad_vec(tangent, a, b, **options)[0]


def quad_vec_vjp(
    g: Any,
    func: Any,
    a: Any,
    b: Any,
    args: tuple[Any, ...],
    epsabs: Any = 1e-200,
    epsrel: Any = 1e-8,
    limit: Any = 10000,
    points: Any = None,
) -> tuple[Any, ...]:
    """The cotangents of ``args`` of ``quad_vec(func, a, b, args=args)`` for the result's
    cotangent ``g``: ``∫_a^b (∂f/∂args_k)ᵀ g dx``, all at once (``quad_vec``, ``max`` norm),
    remembered for the same inputs."""
    args = tuple(args)
    key = ("quad_vec", g, a, b, args, epsabs, epsrel, limit, points)
    return func.remember(  # type: ignore[no-any-return]
        key, lambda: _integrated_cotangents(func, a, b, args, g, epsabs, epsrel, limit, points)
    )


def quad_vec_end_vjp(g: Any, func: Any, x: Any, args: tuple[Any, ...]) -> Any:
    """The cotangent of the upper limit of ``quad_vec`` (``<g, f(b)>``; minus it for the
    lower limit), 0 at an infinite limit.

    >>> class F:
    ...     def __call__(self, x):
    ...         return np.array([x, 2 * x])
    >>> float(quad_vec_end_vjp(np.array([1.0, 1.0]), F(), 2.0, ()))
    6.0
    """
    return np.sum(_floats(g) * quad_end(func, x, args, g))


def _gauss(func: Any, a: Any, b: Any, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes ``t`` on [-1, 1], weights ``w`` and the points ``x`` in [a, b]."""
    from scipy.special import roots_legendre

    t, w = roots_legendre(n)
    x = (_floats(b) - a) * (t + 1) / 2.0 + a
    return t, w, x


def fixed_quad_jvp(
    func: Any,
    a: Any,
    b: Any,
    args: tuple[Any, ...],
    da: Any,
    db: Any,
    parts: Any,
    n: int = 5,
) -> Any:
    """The tangent of ``fixed_quad(func, a, b, args, n)[0]``, exactly: the derivative of
    ``(b - a)/2 Σ w_i f(x_i)``, the nodes ``x_i = a + (b - a)(t_i + 1)/2`` moving with the
    limits (tangents None: zero)."""
    args = tuple(args)
    t, w, x = _gauss(func, a, b, n)
    da = 0.0 if da is None else da
    db = 0.0 if db is None else db
    dx = da * (1 - t) / 2.0 + db * (1 + t) / 2.0
    value, tangent = func.jvp((x, *args), (dx, *_tangents(parts, args)))
    half = (_floats(b) - a) / 2.0
    return (db - da) / 2.0 * np.sum(w * value, axis=-1) + half * np.sum(w * tangent, axis=-1)


def fixed_quad_vjp(
    g: Any, func: Any, a: Any, b: Any, args: tuple[Any, ...], n: int = 5
) -> tuple[Any, Any, tuple[Any, ...]]:
    """The cotangents of ``a``, ``b`` and each of ``args`` of ``fixed_quad(func, a, b, args,
    n)[0]`` for its cotangent ``g``, exactly (the transpose of :func:`fixed_quad_jvp`),
    remembered for the same inputs."""
    args = tuple(args)
    key = ("fixed_quad", g, a, b, args, n)
    return func.remember(  # type: ignore[no-any-return]
        key, lambda: _fixed_quad_cotangents(g, func, a, b, args, n)
    )


def _fixed_quad_cotangents(
    g: Any, func: Any, a: Any, b: Any, args: tuple[Any, ...], n: int
) -> tuple[Any, Any, tuple[Any, ...]]:
    t, w, x = _gauss(func, a, b, n)
    half = (_floats(b) - a) / 2.0
    g = _floats(g)
    gw = half * np.expand_dims(g, -1) * w  # the cotangent of f(x_i) (a vectorized integrand)
    value, cots = func.vjp((x, *args), gw)
    gx = np.broadcast_to(_floats(cots[0]), x.shape)
    spread = np.sum(np.expand_dims(g, -1) * w * value) / 2.0  # the share of (b - a) / 2
    ga = -spread + np.sum(gx * (1 - t) / 2.0)
    gb = spread + np.sum(gx * (1 + t) / 2.0)
    return ga, gb, tuple(cots[1:])


def _axis_weights(w: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    """A vector of weights along ``axis`` of an ``ndim``-d array, shaped to broadcast."""
    shape = [1] * ndim
    shape[axis] = w.size
    return w.reshape(shape)


def simpson_vjp_y(g: Any, y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The cotangent of ``y`` of ``simpson(y, x=x, dx=dx, axis=axis)``: ``g`` times each
    sample's weight (Simpson's rule is linear in ``y``), the weights read off the rule applied
    to the unit vectors (for ``x`` shaped like ``y``, row by row).

    >>> np.round(simpson_vjp_y(1.0, np.zeros(5), dx=0.5), 6)
    array([0.166667, 0.666667, 0.333333, 0.666667, 0.166667])
    """
    from scipy.integrate import simpson

    y = np.asarray(y)
    axis = axis % y.ndim
    n = y.shape[axis]
    eye = np.eye(n)
    gx = np.expand_dims(_floats(g), axis)
    if x is None or np.ndim(x) == 1:
        w = simpson(eye, dx=dx, axis=-1) if x is None else simpson(eye, x=x, axis=-1)
        return gx * _axis_weights(w, y.ndim, axis)
    rows = np.moveaxis(np.broadcast_to(x, y.shape), axis, -1)
    flat = rows.reshape(-1, n)
    w = np.stack([simpson(eye, x=row, axis=-1) for row in flat])
    return gx * np.moveaxis(w.reshape(rows.shape), -1, axis)


def romb_vjp_y(g: Any, y: Any, dx: Any = 1.0, axis: int = -1) -> Any:
    """The cotangent of ``y`` of ``romb(y, dx=dx, axis=axis)``: ``g`` times each sample's
    weight (Romberg's rule is linear in ``y``).

    >>> np.round(romb_vjp_y(1.0, np.zeros(3), dx=1.0), 6)
    array([0.333333, 1.333333, 0.333333])
    """
    from scipy.integrate import romb

    y = np.asarray(y)
    axis = axis % y.ndim
    n = y.shape[axis]
    w = romb(np.eye(n), dx=dx, axis=-1)
    return np.expand_dims(_floats(g), axis) * _axis_weights(w, y.ndim, axis)


def cumulative_trapezoid_vjp_y(
    g: Any, y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1, initial: Any = None
) -> Any:
    """The cotangent of ``y`` of ``cumulative_trapezoid(y, x, dx, axis, initial)``: the
    result's ``j``-th item sums ``h_i (y_i + y_{i+1}) / 2`` over the intervals ``i <= j``, so
    interval ``i`` gets the cotangents of the items from ``i`` on (``S_i``) and a sample
    ``k`` gets ``(h_{k-1} S_{k-1} + h_k S_k) / 2``.

    >>> cumulative_trapezoid_vjp_y(np.ones(2), np.zeros(3))
    array([1. , 1.5, 0.5])
    """
    y = np.asarray(y)
    axis = axis % y.ndim
    gm = np.moveaxis(_floats(g), axis, -1)
    if initial is not None:
        gm = gm[..., 1:]  # the initial value is a constant
    s = np.flip(np.cumsum(np.flip(gm, -1), axis=-1), -1)
    h = _spacings(x, dx, y, axis)
    share = h * s / 2.0
    out = np.zeros(share.shape[:-1] + (share.shape[-1] + 1,), dtype=share.dtype)
    out[..., :-1] += share
    out[..., 1:] += share
    return np.moveaxis(out, -1, axis)


def cumulative_trapezoid_vjp_x(g: Any, y: Any, x: Any, axis: int = -1, initial: Any = None) -> Any:
    """The cotangent of ``x`` of ``cumulative_trapezoid(y, x, axis=axis, initial=initial)``:
    the spacing ``h_i = x_{i+1} - x_i`` gets ``S_i (y_i + y_{i+1}) / 2`` (summed over the
    other axes for a 1-d ``x``), a sample ``x_k`` that of ``h_{k-1}`` minus that of ``h_k``.

    >>> cumulative_trapezoid_vjp_x(np.ones(2), np.ones(3), np.arange(3.0))
    array([-2.,  1.,  1.])
    """
    y = np.asarray(y)
    axis = axis % y.ndim
    gm = np.moveaxis(_floats(g), axis, -1)
    if initial is not None:
        gm = gm[..., 1:]
    s = np.flip(np.cumsum(np.flip(gm, -1), axis=-1), -1)
    ym = np.moveaxis(y, axis, -1)
    gh = s * (ym[..., :-1] + ym[..., 1:]) / 2.0
    if np.ndim(x) == 1:
        gh = np.sum(gh.reshape(-1, gh.shape[-1]), axis=0)
    out = np.zeros(gh.shape[:-1] + (gh.shape[-1] + 1,), dtype=gh.dtype)
    out[..., 1:] += gh
    out[..., :-1] -= gh
    return out if np.ndim(x) == 1 else np.moveaxis(out, -1, axis)


def _spacings(x: Any, dx: Any, y: np.ndarray, axis: int) -> Any:
    """The spacings ``h_i`` along the last axis (``axis`` of ``y`` moved there)."""
    if x is None:
        return dx
    x = np.asarray(x)
    if x.ndim == 1:
        return np.diff(x)
    return np.diff(np.moveaxis(np.broadcast_to(x, y.shape), axis, -1), axis=-1)
