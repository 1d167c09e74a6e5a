"""Helpers of ``rules/solvers.py``: derivatives through SciPy's solvers.

Each takes the function the solver was given as ``func``, an object with ``func(*args)``
(the function as written), ``func.jvp(args, tangents) -> (value, tangent)`` and
``func.vjp(args, cotangent) -> (value, cotangents)`` (adgen's forward and reverse code for
it, w.r.t. every argument) and ``func.remember(key, compute)`` (the last value computed for
the same inputs: a solver's several cotangents come from one adjoint solve).

ODEs (``odeint``): forward mode integrates the tangent system with the state, by the same
solver and tolerances; reverse mode integrates the adjoint system backwards between
consecutive output times, the state recomputed forwards on that interval and interpolated
(memory of one interval's dense output, whatever the number of steps).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _floats(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=np.result_type(np.asarray(value).dtype, np.float64))


def _tangents(parts: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """One tangent per argument (zeros where none is given)."""
    if parts is None:
        return tuple(np.zeros_like(_floats(a)) for a in args)
    return tuple(
        np.zeros_like(_floats(a)) if d is None else d for a, d in zip(args, parts, strict=True)
    )


def _flat_cotangents(cotangents: tuple[Any, ...]) -> np.ndarray:
    if not cotangents:
        return np.zeros(0)
    return np.concatenate([np.ravel(_floats(c)) for c in cotangents])


def _unflatten(flat: np.ndarray, like: tuple[Any, ...]) -> tuple[Any, ...]:
    out, start = [], 0
    for a in like:
        shape = np.shape(a)
        size = int(np.prod(shape))
        piece = flat[start : start + size]
        start += size
        out.append(piece.reshape(shape) if shape else piece[0])
    return tuple(out)


def _ode_call(tfirst: bool, y: Any, t: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    return (t, y, *args) if tfirst else (y, t, *args)


def _odeint_options(rtol: Any, atol: Any, mxstep: Any, hmax: Any, hmin: Any) -> dict[str, Any]:
    return {"rtol": rtol, "atol": atol, "mxstep": mxstep, "hmax": hmax, "hmin": hmin}


def _checked(result: Any, what: str) -> Any:
    if not result.success:
        raise ArithmeticError(
            f"{what}: the solver adgen ran for the derivative failed: {result.message}"
        )
    return result


def odeint_jvp(
    ans: Any,
    func: Any,
    y0: Any,
    t: Any,
    args: tuple[Any, ...],
    dy0: Any,
    dt: Any,
    dargs: Any,
    tfirst: bool = False,
    rtol: Any = None,
    atol: Any = None,
    mxstep: Any = 0,
    hmax: Any = 0.0,
    hmin: Any = 0.0,
) -> np.ndarray:
    """The tangent of ``odeint(func, y0, t, args)`` (the trajectory ``ans``) for the tangents
    of ``y0``, ``t`` and ``args`` (None: zero): the tangent system ``s' = f_y s + f_args
    dargs``, integrated with the state by ``odeint`` with the same options; a time point's
    tangent adds ``f(y(t_i)) dt_i``."""
    from scipy.integrate import odeint

    y0f = np.ravel(_floats(y0))
    t = np.asarray(t)
    args = tuple(args)
    n = y0f.size
    dargs = _tangents(dargs, args)
    zero = np.zeros(())

    def augmented(z: np.ndarray, tt: Any) -> np.ndarray:
        y, s = z[:n], z[n:]
        value, tangent = func.jvp(
            _ode_call(tfirst, y, tt, args), (*_order(tfirst, s, zero), *dargs)
        )
        return np.concatenate([np.ravel(value), np.ravel(tangent)])

    s0 = np.zeros(n) if dy0 is None else np.ravel(_floats(dy0)) + np.zeros(n)
    if dt is not None:
        f0 = np.ravel(func(*_ode_call(tfirst, y0f, t[0], args)))
        s0 = s0 - f0 * np.ravel(dt)[0]
    atol2 = atol if atol is None or np.ndim(atol) == 0 else np.concatenate([atol, atol])
    rtol2 = rtol if rtol is None or np.ndim(rtol) == 0 else np.concatenate([rtol, rtol])
    z = odeint(
        augmented, np.concatenate([y0f, s0]), t, **_odeint_options(rtol2, atol2, mxstep, hmax, hmin)
    )
    tangent = z[:, n:]
    if dt is not None:
        dts = np.ravel(dt)
        for i in range(len(t)):
            if dts[i] != 0.0:
                tangent[i] += np.ravel(func(*_ode_call(tfirst, ans[i], t[i], args))) * dts[i]
    return tangent


def _order(tfirst: bool, y: Any, t: Any) -> tuple[Any, Any]:
    return (t, y) if tfirst else (y, t)


def odeint_vjp(
    g: Any,
    ans: Any,
    func: Any,
    y0: Any,
    t: Any,
    args: tuple[Any, ...],
    tfirst: bool = False,
    rtol: Any = None,
    atol: Any = None,
) -> tuple[Any, Any, tuple[Any, ...]]:
    """The cotangents of ``y0``, ``t`` and each of ``args`` of ``odeint(func, y0, t, args)``
    (the trajectory ``ans``) for its cotangent ``g``, by the adjoint method: between
    consecutive output times (last to first), the state is recomputed forwards from the
    trajectory's point (``solve_ivp``, LSODA, dense output) and the adjoint system
    ``a' = -a f_y``, ``q' = -a f_args`` integrated backwards; ``g``'s row at a time point
    is added to ``a`` there."""
    args = tuple(args)
    key = (g, ans, y0, t, args, tfirst, rtol, atol)
    return func.remember(
        key, lambda: _odeint_adjoint(g, ans, func, y0, t, args, tfirst, rtol, atol)
    )  # type: ignore[no-any-return]


def _odeint_adjoint(
    g: Any,
    ans: Any,
    func: Any,
    y0: Any,
    t: Any,
    args: tuple[Any, ...],
    tfirst: bool,
    rtol: Any,
    atol: Any,
) -> tuple[Any, Any, tuple[Any, ...]]:
    from scipy.integrate import solve_ivp

    t = np.asarray(t)
    ts = _floats(t)
    ys = np.asarray(ans)
    n = ys.shape[1]
    gs = _floats(g).reshape(ys.shape)
    m = _flat_cotangents(args).size
    rtol = 1.49012e-8 if rtol is None else rtol
    atol = 1.49012e-8 if atol is None else atol

    def f(tt: Any, y: np.ndarray) -> np.ndarray:
        return np.ravel(func(*_ode_call(tfirst, y, tt, args)))

    a = gs[-1].copy()
    q = np.zeros(m)
    gt = np.zeros(len(ts))
    for i in range(len(ts) - 1, 0, -1):
        gt[i] += gs[i] @ f(ts[i], ys[i])
        if ts[i] == ts[i - 1]:
            a = a + gs[i - 1]
            continue
        forward = _checked(
            solve_ivp(
                f,
                (ts[i - 1], ts[i]),
                ys[i - 1],
                method="LSODA",
                dense_output=True,
                rtol=rtol,
                atol=atol,
            ),
            "odeint",
        )
        state = forward.sol

        def adjoint(tt: Any, z: np.ndarray, state: Any = state) -> np.ndarray:
            y = state(tt)
            _, cots = func.vjp(_ode_call(tfirst, y, tt, args), z[:n])
            gy = cots[1] if tfirst else cots[0]
            return -np.concatenate([np.ravel(gy), _flat_cotangents(cots[2:])])

        z0 = np.concatenate([a, np.zeros(m)])
        back = _checked(
            solve_ivp(adjoint, (ts[i], ts[i - 1]), z0, method="LSODA", rtol=rtol, atol=atol),
            "odeint",
        )
        z = back.y[:, -1]
        a = z[:n] + gs[i - 1]
        q = q + z[n:]
    gt[0] = -(a - gs[0]) @ f(ts[0], ys[0])
    gy0 = a.reshape(np.shape(y0)) if np.size(y0) == n else a
    return gy0, gt.reshape(np.shape(t)), _unflatten(q, args)
