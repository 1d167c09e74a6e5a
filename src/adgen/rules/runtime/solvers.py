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
    if len(cotangents) == 1:
        (c,) = cotangents
        return c.ravel() if type(c) is np.ndarray and c.dtype.kind in "fc" else np.ravel(_floats(c))
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
    (the trajectory ``ans``) for its cotangent ``g``, by the adjoint method
    (:func:`_ode_adjoint`, LSODA as ``odeint``)."""
    args = tuple(args)
    key = (g, ans, y0, t, args, tfirst, rtol, atol)

    def compute() -> tuple[Any, Any, tuple[Any, ...]]:
        tol = 1.49012e-8  # odeint's default tolerances
        ys = np.asarray(ans)
        gy0, gt, gargs = _ode_adjoint(
            func,
            _floats(t),
            ys,
            _floats(g).reshape(ys.shape),
            args,
            tfirst,
            {
                "method": "LSODA",
                "rtol": tol if rtol is None else rtol,
                "atol": tol if atol is None else atol,
            },
            backsolve=True,
        )
        gy0 = gy0.reshape(np.shape(y0)) if np.size(y0) == gy0.size else gy0
        return gy0, gt.reshape(np.shape(t)), gargs

    return func.remember(key, compute)  # type: ignore[no-any-return]


def _ode_adjoint(
    func: Any,
    ts: np.ndarray,
    ys: np.ndarray,
    gs: np.ndarray,
    args: tuple[Any, ...],
    tfirst: bool,
    options: dict[str, Any],
    backsolve: bool = False,
) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...]]:
    """The cotangents of the initial state, the output times and ``args`` of a trajectory
    ``ys[i] = y(ts[i])`` of ``y' = func(...)`` for its cotangent ``gs`` (rows per time): from
    the last time to the first, the state is recomputed forwards from ``ys[i - 1]`` on
    ``[ts[i - 1], ts[i]]`` (``solve_ivp`` with ``options``, dense output) and the adjoint
    system ``a' = -a f_y``, ``q' = -a f_args`` integrated backwards on it with the same
    options; ``gs[i - 1]`` is added to ``a`` at ``ts[i - 1]``. A time's cotangent is
    ``gs[i] . f(y_i)`` (``-a . f(y_0)`` for the first, where the state is given).

    ``backsolve=True`` (``odeint``'s LSODA, whose steps run in Fortran) first integrates the
    state backwards with the adjoint from ``ys[i]``, in one ``odeint`` call an interval; the
    interval is done again as above where the state it ends on is not ``ys[i - 1]`` within
    a thousand times the tolerances (at most 1 % at loose ones): the state is unstable
    backwards (a dissipative system). ``solve_ivp``'s derivatives use it too: within the
    tolerances, LSODA's solution is the method's."""
    from scipy.integrate import solve_ivp

    n = ys.shape[1]
    m = _flat_cotangents(args).size

    def f(tt: Any, y: np.ndarray) -> np.ndarray:
        return np.ravel(func(*_ode_call(tfirst, y, tt, args)))

    a = gs[-1].copy()
    q = np.zeros(m)
    gt = np.zeros(len(ts))

    vjp = func.pullback() if hasattr(func, "pullback") else func.vjp

    def joint(z: np.ndarray, tt: Any) -> np.ndarray:  # (state, adjoint, parameters)
        value, cots = vjp(_ode_call(tfirst, z[:n], tt, args), z[n : 2 * n])
        gy = cots[1] if tfirst else cots[0]
        return np.concatenate([np.ravel(value), -np.ravel(gy), -_flat_cotangents(cots[2:])])

    for i in range(len(ts) - 1, 0, -1):
        gt[i] += gs[i] @ f(ts[i], ys[i])
        if ts[i] != ts[i - 1] and backsolve:
            end = _backsolved(joint, ys, i, a, m, ts, options)
            if end is not None:
                a, q = end[n : 2 * n] + gs[i - 1], q + end[2 * n :]
                continue
        if ts[i] != ts[i - 1]:
            forward = _checked(
                solve_ivp(f, (ts[i - 1], ts[i]), ys[i - 1], dense_output=True, **options),
                "recomputing the state",
            )

            def adjoint(tt: Any, z: np.ndarray, state: Any = forward.sol) -> np.ndarray:
                _, cots = vjp(_ode_call(tfirst, state(tt), tt, args), z[:n])
                gy = cots[1] if tfirst else cots[0]
                return -np.concatenate([np.ravel(gy), _flat_cotangents(cots[2:])])

            back = _checked(
                solve_ivp(adjoint, (ts[i], ts[i - 1]), np.concatenate([a, np.zeros(m)]), **options),
                "the adjoint system",
            )
            z = back.y[:, -1]
            a, q = z[:n], q + z[n:]
        a = a + gs[i - 1]
    gt[0] = -(a - gs[0]) @ f(ts[0], ys[0])
    return a, gt, _unflatten(q, args)


# -- reverse mode by forward sensitivities, where the inputs are few ------------------------
# A cotangent of an ODE solve's y0 (or of its args) is also the trajectory's Jacobian in them
# (the forward sensitivities, integrated with the state) contracted with the trajectory's
# cotangent. With few inputs that costs less than the adjoint: one solve from the first time
# instead of one an output interval (each a restart of the solver), and the right-hand
# sides of all the sensitivities in one batched forward pass of the callback's code
# (adgen.modes.batched) instead of one reverse pass a call. CVODES and SciMLSensitivity
# choose the same way for small systems.

SENSITIVITIES_MAX = 32  # the inputs (tangents of one batched pass) above which: the adjoint
SYSTEM_MAX = 256  # the state with all its sensitivities (the solver's system), at most


def _float_arg(a: Any) -> bool:
    """Is ``a`` a real floating value (an argument that takes a tangent)?"""
    if isinstance(a, np.ndarray):
        return a.dtype.kind == "f"
    return isinstance(a, (float, np.floating))


def _plain_arg(a: Any) -> bool:
    """Is ``a`` a number or a NumPy array of numbers (not complex, not a structure)?"""
    if isinstance(a, np.ndarray):
        return a.dtype.kind in "fiub"
    return isinstance(a, (int, float, np.integer, np.floating))


def _sensitivity_cotangent(
    func: Any,
    ts: np.ndarray,
    y0: Any,
    gs: np.ndarray,
    args: tuple[Any, ...],
    tfirst: bool,
    wanted: str,
    options: dict[str, Any],
) -> np.ndarray | None:
    """The cotangent of ``y0`` (``wanted`` "y0") or of ``args`` flattened (``wanted``
    "args", zero for arguments that are not floating) of the trajectory ``y(ts[i])`` from
    ``y(ts[0]) = y0``, for its cotangent ``gs`` (rows per time), by forward sensitivities:
    ``S' = f_y S + f_args``, ``S(ts[0])`` the identity (or zero), integrated with the state by
    ``odeint`` with ``options`` (its tolerances apply to the sensitivities too). None where
    that way does not apply or is not cheaper (too many inputs, arguments of other types, a
    callback with no batched code, the solver failing): the caller takes the adjoint."""
    import warnings

    from scipy.integrate import odeint

    y0f = np.ravel(_floats(y0))
    n = y0f.size
    batched = getattr(func, "batched", None)
    if batched is None or y0f.dtype.kind != "f" or not all(_plain_arg(a) for a in args):
        return None
    marked = tuple(wanted == "args" and _float_arg(a) for a in args)
    sizes = [int(np.size(a)) for a in args]
    k = n if wanted == "y0" else sum(s for s, m in zip(sizes, marked) if m)
    if k == 0 or k > SENSITIVITIES_MAX or n * (k + 1) > SYSTEM_MAX:
        return None
    call = _ode_call(tfirst, y0f, ts[0], args)
    code = batched(call, (*_ode_call(tfirst, True, False, marked),))
    if code is None:
        return None
    unit, start, arg_dots = np.eye(k), 0, []
    for a, size, m in zip(args, sizes, marked):
        if m:
            arg_dots.append(unit[:, start : start + size].reshape((k, *np.shape(a))))
            start += size

    def augmented(z: np.ndarray, tt: Any) -> np.ndarray:
        y, out = z[:n], np.empty(n * (k + 1))
        call = _ode_call(tfirst, y, tt, args)
        out[:n] = np.ravel(func(*call))
        _, dots = code(*call, z[n:].reshape(k, n), *arg_dots)
        rows = out[n:].reshape(k, n)
        if isinstance(dots, (tuple, list)):  # (a list of the state's entries)
            for i, d in enumerate(dots):
                rows[:, i] = d
        else:
            rows[...] = np.reshape(dots, (k, n))
        return out

    s0 = np.eye(n) if wanted == "y0" else np.zeros((k, n))
    rtol, atol = options["rtol"], options["atol"]
    tiled = {
        "rtol": rtol if np.ndim(rtol) == 0 else np.tile(rtol, k + 1),
        "atol": atol if np.ndim(atol) == 0 else np.tile(atol, k + 1),
        "hmax": options.get("hmax", 0.0),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a failed solve says so: the adjoint is taken)
        try:
            z, info = odeint(
                augmented, np.concatenate([y0f, s0.ravel()]), ts, full_output=True, **tiled
            )
        except ValueError:  # (a right-hand side whose tangents are not the state's shape)
            return None
    if info["message"] != "Integration successful.":
        return None
    cot = np.einsum("tkn,tn->k", z[:, n:].reshape(len(ts), k, n), gs)
    if wanted == "y0":
        return cot
    flat, start = [], 0
    for size, m in zip(sizes, marked):
        flat.append(cot[start : start + size] if m else np.zeros(size))
        start += size if m else 0
    return np.concatenate(flat)


# the options of solve_ivp (its **options) a differentiated call may give, with SciPy's
# defaults: only those given are passed on (SciPy warns of options a method does not use)
_IVP_OPTIONS = ("rtol", "atol", "max_step", "first_step", "min_step", "lband", "uband")


def _ivp_options(method: Any, **given: Any) -> dict[str, Any]:
    options = {k: v for k, v in given.items() if v is not None}
    options["method"] = method
    return options


def _backsolved(
    joint: Any,
    ys: np.ndarray,
    i: int,
    a: np.ndarray,
    m: int,
    ts: np.ndarray,
    options: dict[str, Any],
) -> np.ndarray | None:
    """The state, adjoint and parameters' cotangent at ``ts[i - 1]``, integrated backwards
    together by ``odeint`` from ``ys[i]``; None where the state it ends on is not ``ys[i - 1]``
    within a thousand times the tolerances (at most 1 % at loose ones)."""
    import warnings

    from scipy.integrate import odeint

    rtol, atol = options["rtol"], options["atol"]
    z0 = np.concatenate([ys[i], a, np.zeros(m)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (an unstable solve says so: it is done again)
        z, info = odeint(joint, z0, [ts[i], ts[i - 1]], rtol=rtol, atol=atol, full_output=True)
    if info["message"] != "Integration successful.":
        return None
    end = z[-1]
    n = ys.shape[1]
    factor = min(1e3, max(10.0, 1e-2 / np.max(rtol)))  # (at most 1% off at loose tolerances)
    slack = factor * (np.max(atol) + np.max(rtol) * np.abs(ys[i - 1]))
    if not np.all(np.abs(end[:n] - ys[i - 1]) <= slack):
        return None
    return end


def ode_solution(
    fun: Any,
    t_span: Any,
    y0: Any,
    method: Any = "RK45",
    t_eval: Any = None,
    dense_output: bool = False,
    events: Any = None,
    vectorized: bool = False,
    args: Any = None,
    rtol: Any = None,
    atol: Any = None,
    max_step: Any = None,
    first_step: Any = None,
    min_step: Any = None,
    jac: Any = None,
    lband: Any = None,
    uband: Any = None,
) -> tuple[Any, ...]:
    """``scipy.integrate.solve_ivp``'s result as the tuple of the fields a differentiated
    program reads (:data:`ODE_FIELDS`): ``(y, t, success, status, message, nfev, njev,
    nlu)``. Options left at None are not passed.

    >>> y, t, success, *_ = ode_solution(lambda t, y: -y, (0.0, 1.0), [1.0], t_eval=[1.0])
    >>> bool(success), t.tolist(), round(float(y[0, 0]), 3)
    (True, [1.0], 0.368)
    """
    from scipy.integrate import solve_ivp

    extra = {} if jac is None else {"jac": jac}
    sol = solve_ivp(
        fun,
        t_span,
        y0,
        t_eval=t_eval,
        dense_output=dense_output,
        events=events,
        vectorized=vectorized,
        args=args,
        **extra,
        **_ivp_options(
            method,
            rtol=rtol,
            atol=atol,
            max_step=max_step,
            first_step=first_step,
            min_step=min_step,
            lband=lband,
            uband=uband,
        ),
    )
    return tuple(getattr(sol, field) for field in ODE_FIELDS)


ODE_FIELDS = ("y", "t", "success", "status", "message", "nfev", "njev", "nlu")


def ode_solution_jvp(
    ans: Any,
    fun: Any,
    t_span: Any,
    y0: Any,
    args: Any,
    dy0: Any,
    dargs: Any,
    method: Any = "RK45",
    rtol: Any = None,
    atol: Any = None,
    max_step: Any = None,
    first_step: Any = None,
    min_step: Any = None,
) -> np.ndarray:
    """The tangent of ``solve_ivp``'s ``y`` (``ans[0]``, at the times ``ans[1]``) for the
    tangents of ``y0`` and ``args`` (None: zero): the tangent system integrated with the
    state by ``solve_ivp`` with the same method and options, at the same times."""
    from scipy.integrate import solve_ivp

    _succeeded(ans)
    args = () if args is None else tuple(args)
    y0f = np.ravel(_floats(y0))
    n = y0f.size
    dargs = _tangents(dargs, args)
    ts = np.asarray(ans[1])
    t0 = float(np.ravel(t_span)[0])
    zero = np.zeros(())

    def augmented(tt: Any, z: np.ndarray) -> np.ndarray:
        value, tangent = fun.jvp((tt, z[:n], *args), (zero, z[n:], *dargs))
        return np.concatenate([np.ravel(value), np.ravel(tangent)])

    s0 = np.zeros(n) if dy0 is None else np.ravel(_floats(dy0)) + np.zeros(n)
    options = _ivp_options(
        method,
        rtol=_doubled(rtol),
        atol=_doubled(atol),
        max_step=max_step,
        first_step=first_step,
        min_step=min_step,
    )
    sol = _checked(
        solve_ivp(augmented, (t0, ts[-1]), np.concatenate([y0f, s0]), t_eval=ts, **options),
        "solve_ivp's tangent system",
    )
    return sol.y[n:]


def _succeeded(ans: Any) -> None:
    if not ans[2]:
        raise ArithmeticError(
            f"solve_ivp did not succeed ({ans[4]}): its solution has no derivative"
        )


def _doubled(tol: Any) -> Any:
    """A tolerance for the state and its tangent (a vector one repeated)."""
    return tol if tol is None or np.ndim(tol) == 0 else np.concatenate([tol, tol])


def ode_solution_vjp(
    g: Any,
    ys: Any,
    ts: Any,
    success: Any,
    fun: Any,
    t_span: Any,
    y0: Any,
    args: Any,
    method: Any = "RK45",
    rtol: Any = None,
    atol: Any = None,
    max_step: Any = None,
) -> tuple[Any, tuple[Any, ...]]:
    """The cotangents of ``y0`` and each of ``args`` of ``solve_ivp`` for the cotangent
    ``g`` of its ``y`` (``ys``, at the times ``ts``), by the adjoint method with the call's
    method and options (:func:`_ode_adjoint`)."""
    args = () if args is None else tuple(args)
    key = (g, ys, t_span, y0, args, method, rtol, atol, max_step)

    def compute() -> tuple[Any, tuple[Any, ...]]:
        _succeeded((ys, ts, success, None, "see its message"))
        rows, times, gs = _ivp_rows(ys, ts, t_span, y0, g)
        options = _ivp_adjoint_options(method, rtol, atol, max_step)
        gy0, _, gargs = _ode_adjoint(fun, times, rows, gs, args, True, options, backsolve=True)
        return (gy0.reshape(np.shape(y0)) if np.size(y0) == gy0.size else gy0), gargs

    return fun.remember(key, compute)  # type: ignore[no-any-return]


def _ivp_slopes(ys: Any, ts: Any, fun: Any, args: Any) -> np.ndarray:
    """``fun(t, y)`` at each point of ``solve_ivp``'s trajectory, as columns like ``ys``."""
    args = () if args is None else tuple(args)
    rows = np.asarray(ys)
    times = np.ravel(_floats(ts))
    return np.stack(
        [np.ravel(fun(times[i], rows[:, i], *args)) for i in range(times.size)], axis=1
    ).reshape(rows.shape)


def ivp_time_tangent(ys: Any, ts: Any, fun: Any, args: Any, dt: Any) -> np.ndarray:
    """The tangent of ``solve_ivp``'s ``y`` for tangents ``dt`` of its ``t_eval``: the
    slope at each output time times that time's tangent."""
    return _ivp_slopes(ys, ts, fun, args) * np.ravel(_floats(dt))[None, :]


def ivp_time_cotangent(g: Any, ys: Any, ts: Any, fun: Any, args: Any) -> np.ndarray:
    """The cotangent of ``solve_ivp``'s ``t_eval`` for the cotangent ``g`` of its ``y``."""
    slopes = _ivp_slopes(ys, ts, fun, args)
    return np.sum(_floats(g) * slopes, axis=0).reshape(np.shape(ts))


def _ivp_rows(ys: Any, ts: Any, t_span: Any, y0: Any, g: Any) -> tuple[Any, Any, Any]:
    """``solve_ivp``'s trajectory as rows per time, its times and ``g`` in rows, starting
    at ``t_span[0]`` (where the state is ``y0``: prepended when ``t_eval`` starts later)."""
    rows, times = np.asarray(ys).T, _floats(ts)
    gs = _floats(g).T.reshape(rows.shape)
    t0 = float(np.ravel(t_span)[0])
    if times.size == 0 or times[0] != t0:
        rows = np.concatenate([np.ravel(_floats(y0))[None, :], rows])
        times = np.concatenate([[t0], times])
        gs = np.concatenate([np.zeros((1, gs.shape[1])), gs])
    return rows, times, gs


def _ivp_adjoint_options(method: Any, rtol: Any, atol: Any, max_step: Any) -> dict[str, Any]:
    return _ivp_options(
        method,
        rtol=1e-3 if rtol is None else rtol,
        atol=1e-6 if atol is None else atol,
        max_step=max_step,
    )


# -- second order: a cotangent of a solver's inputs, differentiated in forward mode ------------
# (adgen.hessian, adgen.hvp: forward mode over the gradient's code). Each cotangent is a
# helper of its own (a rule's result is one value), and its tangent comes from
# _ode_adjoint_tangent: the adjoint system integrated backwards together with its tangent.


def odeint_y0_cotangent(
    g: Any, ys: Any, func: Any, y0: Any, t: Any, args: Any, tfirst: bool = False,
    rtol: Any = None, atol: Any = None,
) -> Any:  # fmt: skip
    """``y0``'s cotangent of ``odeint`` (:func:`odeint_vjp`, or forward sensitivities where
    they cost less: :func:`_odeint_by_sensitivities`)."""
    found = _odeint_by_sensitivities(g, ys, func, y0, t, args, "y0", tfirst, rtol, atol)
    if found is not None:
        return found.reshape(np.shape(y0)) if np.size(y0) == found.size else found
    return odeint_vjp(g, ys, func, y0, t, args, tfirst, rtol, atol)[0]


def odeint_t_cotangent(
    g: Any, ys: Any, func: Any, y0: Any, t: Any, args: Any, tfirst: bool = False,
    rtol: Any = None, atol: Any = None,
) -> Any:  # fmt: skip
    """The output times' cotangent of ``odeint`` (:func:`odeint_vjp`)."""
    return odeint_vjp(g, ys, func, y0, t, args, tfirst, rtol, atol)[1]


def odeint_args_cotangent(
    g: Any, ys: Any, func: Any, y0: Any, t: Any, args: Any, k: int, tfirst: bool = False,
    rtol: Any = None, atol: Any = None,
) -> Any:  # fmt: skip
    """``args[k]``'s cotangent of ``odeint`` (:func:`odeint_vjp`, or forward sensitivities
    where they cost less)."""
    found = _odeint_by_sensitivities(g, ys, func, y0, t, args, "args", tfirst, rtol, atol)
    if found is not None:
        return _unflatten(found, tuple(args))[k]
    return odeint_vjp(g, ys, func, y0, t, args, tfirst, rtol, atol)[2][k]


def _odeint_by_sensitivities(
    g: Any, ys: Any, func: Any, y0: Any, t: Any, args: Any, wanted: str, tfirst: bool,
    rtol: Any, atol: Any,
) -> np.ndarray | None:  # fmt: skip
    """``odeint``'s cotangent of ``y0`` or of ``args`` (flat) by forward sensitivities
    (:func:`_sensitivity_cotangent`, remembered for the call), or None."""
    args = tuple(args)
    key = (g, ys, y0, t, args, tfirst, rtol, atol, wanted)

    def compute() -> np.ndarray | None:
        tol = 1.49012e-8  # odeint's default tolerances
        rows = np.asarray(ys)
        options = {"rtol": tol if rtol is None else rtol, "atol": tol if atol is None else atol}
        gs = _floats(g).reshape(rows.shape)
        return _sensitivity_cotangent(func, _floats(t), y0, gs, args, tfirst, wanted, options)

    return func.remember(key, compute)  # type: ignore[no-any-return]


def odeint_cotangents_tangent(
    g: Any, ys: Any, func: Any, y0: Any, t: Any, args: Any, dys: Any, dargs: Any,
    tfirst: bool = False, rtol: Any = None, atol: Any = None,
) -> tuple[Any, tuple[Any, ...]]:  # fmt: skip
    """The tangents of ``odeint``'s cotangents of ``y0`` and ``args`` along the tangents of
    the trajectory ``ys`` and of ``args`` (None: zero), ``g`` held."""
    args = tuple(args)
    key = (g, ys, args, dys, dargs, "tangent")

    def compute() -> tuple[Any, tuple[Any, ...]]:
        tol = 1.49012e-8
        rows = np.asarray(ys)
        drows = np.zeros_like(rows) if dys is None else _floats(dys).reshape(rows.shape)
        options = {"rtol": tol if rtol is None else rtol, "atol": tol if atol is None else atol}
        da, dq = _ode_adjoint_tangent(
            func, _floats(t), rows, _floats(g).reshape(rows.shape), drows, args,
            _tangents(dargs, args), tfirst, options,
        )  # fmt: skip
        return (da.reshape(np.shape(y0)) if np.size(y0) == da.size else da), dq

    return func.remember(key, compute)  # type: ignore[no-any-return]


def ivp_y0_cotangent(
    g: Any, ys: Any, ts: Any, success: Any, fun: Any, t_span: Any, y0: Any, args: Any,
    method: Any = "RK45", rtol: Any = None, atol: Any = None, max_step: Any = None,
) -> Any:  # fmt: skip
    """``y0``'s cotangent of ``solve_ivp`` (:func:`ode_solution_vjp`, or forward
    sensitivities where they cost less)."""
    found = _ivp_by_sensitivities(
        g, ys, ts, success, fun, t_span, y0, args, "y0", method, rtol, atol, max_step
    )
    if found is not None:
        return found.reshape(np.shape(y0)) if np.size(y0) == found.size else found
    return ode_solution_vjp(
        g, ys, ts, success, fun, t_span, y0, args, method, rtol, atol, max_step
    )[0]


def ivp_args_cotangent(
    g: Any, ys: Any, ts: Any, success: Any, fun: Any, t_span: Any, y0: Any, args: Any,
    k: int, method: Any = "RK45", rtol: Any = None, atol: Any = None, max_step: Any = None,
) -> Any:  # fmt: skip
    """``args[k]``'s cotangent of ``solve_ivp`` (:func:`ode_solution_vjp`, or forward
    sensitivities where they cost less)."""
    found = _ivp_by_sensitivities(
        g, ys, ts, success, fun, t_span, y0, args, "args", method, rtol, atol, max_step
    )
    if found is not None:
        return _unflatten(found, () if args is None else tuple(args))[k]
    return ode_solution_vjp(
        g, ys, ts, success, fun, t_span, y0, args, method, rtol, atol, max_step
    )[1][k]


def _ivp_by_sensitivities(
    g: Any, ys: Any, ts: Any, success: Any, fun: Any, t_span: Any, y0: Any, args: Any,
    wanted: str, method: Any, rtol: Any, atol: Any, max_step: Any,
) -> np.ndarray | None:  # fmt: skip
    """``solve_ivp``'s cotangent of ``y0`` or of ``args`` (flat) by forward sensitivities
    (:func:`_sensitivity_cotangent`, by LSODA as the adjoint is), or None."""
    args = () if args is None else tuple(args)
    key = (g, ys, t_span, y0, args, method, rtol, atol, max_step, wanted)

    def compute() -> np.ndarray | None:
        _succeeded((ys, ts, success, None, "see its message"))
        _, times, gs = _ivp_rows(ys, ts, t_span, y0, g)
        options = _ivp_adjoint_options(method, rtol, atol, max_step)
        if max_step is not None and np.isfinite(max_step):
            options["hmax"] = max_step
        return _sensitivity_cotangent(fun, times, y0, gs, args, True, wanted, options)

    return fun.remember(key, compute)  # type: ignore[no-any-return]


def ivp_cotangents_tangent(
    g: Any, ys: Any, ts: Any, fun: Any, t_span: Any, y0: Any, args: Any, dys: Any,
    dy0: Any, dargs: Any, method: Any = "RK45", rtol: Any = None, atol: Any = None,
    max_step: Any = None,
) -> tuple[Any, tuple[Any, ...]]:  # fmt: skip
    """The tangents of ``solve_ivp``'s cotangents of ``y0`` and ``args`` along the tangents
    of its ``y`` (``dys``), ``y0`` and ``args`` (None: zero), ``g`` held."""
    args = () if args is None else tuple(args)
    key = (g, ys, args, dys, dy0, dargs, "tangent")

    def compute() -> tuple[Any, tuple[Any, ...]]:
        rows, times, gs = _ivp_rows(ys, ts, t_span, y0, g)
        drows_given = np.zeros_like(np.asarray(ys)) if dys is None else _floats(dys)
        dy0f = np.zeros(rows.shape[1]) if dy0 is None else np.ravel(_floats(dy0))
        drows, _, _ = _ivp_rows(drows_given, ts, t_span, dy0f, g)
        options = _ivp_adjoint_options(method, rtol, atol, max_step)
        options.pop("method")
        da, dq = _ode_adjoint_tangent(
            fun, times, rows, gs, drows, args, _tangents(dargs, args), True, options
        )
        return (da.reshape(np.shape(y0)) if np.size(y0) == da.size else da), dq

    return fun.remember(key, compute)  # type: ignore[no-any-return]


def _ode_adjoint_tangent(
    func: Any,
    ts: np.ndarray,
    ys: np.ndarray,
    gs: np.ndarray,
    dys: np.ndarray,
    args: tuple[Any, ...],
    dargs: tuple[Any, ...],
    tfirst: bool,
    options: dict[str, Any],
) -> tuple[np.ndarray, tuple[Any, ...]]:
    """The tangents of :func:`_ode_adjoint`'s cotangents of the initial state and ``args``
    along the tangents ``dys`` of the trajectory's points and ``dargs`` of ``args`` (``gs``
    held): the state, the adjoint and the parameters' cotangent are integrated backwards
    together with their tangents (``odeint``, one call an interval), the tangent system's
    right-hand side from forward and forward-over-reverse passes of ``func``. Where the
    state does not come back to the trajectory's point within the tolerances (a system
    unstable backwards), the derivative is refused."""
    import warnings

    from scipy.integrate import odeint

    n = ys.shape[1]
    m = _flat_cotangents(args).size
    zero = np.zeros(())

    def doubled(z: np.ndarray, tt: Any) -> np.ndarray:
        y, a, dy, da = z[:n], z[n : 2 * n], z[2 * n + m : 3 * n + m], z[3 * n + m : 4 * n + m]
        call = _ode_call(tfirst, y, tt, args)
        tangents = _ode_call(tfirst, dy, zero, dargs)
        value, dvalue = func.jvp(call, tangents)
        cots, dcots = func.vjp_jvp(call, a, tangents)
        _, more = func.vjp(call, da)
        at = 1 if tfirst else 0
        return np.concatenate(
            [
                np.ravel(value),
                -np.ravel(cots[at]),
                -_flat_cotangents(cots[2:]),
                np.ravel(dvalue),
                -np.ravel(dcots[at]) - np.ravel(more[at]),
                -_flat_cotangents(dcots[2:]) - _flat_cotangents(more[2:]),
            ]
        )

    rtol, atol = options["rtol"], options["atol"]
    a, da = gs[-1].copy(), np.zeros(n)
    q, dq = np.zeros(m), np.zeros(m)
    for i in range(len(ts) - 1, 0, -1):
        if ts[i] != ts[i - 1]:
            z0 = np.concatenate([ys[i], a, np.zeros(m), dys[i], da, np.zeros(m)])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                z, info = odeint(
                    doubled, z0, [ts[i], ts[i - 1]], rtol=rtol, atol=atol, full_output=True
                )
            end = z[-1]
            factor = min(1e3, max(10.0, 1e-2 / np.max(rtol)))
            slack = factor * (np.max(atol) + np.max(rtol) * np.abs(ys[i - 1]))
            # (the state's tangent shares its linearisation: stable backwards with it)
            if info["message"] != "Integration successful." or not np.all(
                np.abs(end[:n] - ys[i - 1]) <= slack
            ):
                raise ArithmeticError(
                    "the second derivative through an ODE solver integrates the state "
                    "backwards, and this system is unstable backwards (stiff, dissipative): "
                    "adgen does not differentiate its gradient again; take the Hessian by "
                    "finite differences of adgen's gradient"
                )
            a, q = end[n : 2 * n], q + end[2 * n : 2 * n + m]
            da, dq = end[3 * n + m : 4 * n + m], dq + end[4 * n + m :]
        a = a + gs[i - 1]
    del q
    return da, _unflatten(dq, args)
