"""Check adgen's derivatives of your own functions.

:func:`check_grads` compares forward mode with central finite differences
along random directions, and reverse mode with forward mode through the
dot-product identity ``<u, J v> == <J^T u, v>``:

>>> import numpy as np
>>> def f(x, y):
...     return np.sum(np.sin(x) * y)
>>> check_grads(f, np.array([0.1, 0.5]), 2.0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .api import _float_like, _params, jvp, vjp
from .errors import entry_point
from .parse import unwrap


def _as64(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return np.asarray(value, dtype=np.float64) if value.dtype.kind == "f" else value
    return float(value) if _float_like(value) else value


def _random_like(rng: np.random.Generator, value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return np.asarray(rng.standard_normal(value.shape), dtype=value.dtype)
    if isinstance(value, np.generic):
        return value.dtype.type(rng.standard_normal())
    return float(rng.standard_normal())


def _parts(value: Any) -> list[Any]:
    """A function's result as a list of arrays (a tuple or list result is several)."""
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _cotangent_like(rng: np.random.Generator, out: Any) -> Any:
    u = _random_like(rng, np.asarray(out) if np.ndim(out) else out)
    if isinstance(out, np.ndarray) and out.ndim == 0:
        u = np.asarray(u, dtype=out.dtype)
    return u


def _vdot(a: Any, b: Any) -> float:
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))


@entry_point
def check_grads(
    f: Callable[..., Any],
    *args: Any,
    wrt: Sequence[int] | None = None,
    modes: Sequence[str] = ("forward", "reverse"),
    eps: float = 1e-6,
    rtol: float | None = None,
    atol: float | None = None,
    directions: int = 2,
    seed: int = 0,
) -> None:
    """Raise ``AssertionError`` if adgen's derivatives of ``f`` at ``args`` look wrong.

    ``wrt`` lists the argument positions to check (default: every
    floating-point argument). Forward mode is checked against central finite
    differences (computed in float64), reverse mode against forward mode.
    Tolerances default to 1e-5 (relative) for float64 and 2e-3 for float32.
    """
    fn = unwrap(f)
    names = _params(fn)
    args_list = list(args)
    if wrt is None:
        wrt = [i for i, a in enumerate(args_list) if _float_like(a)]
    if not wrt:
        raise ValueError("check_grads: no floating-point argument to check")
    low = any(np.result_type(args_list[i]) == np.float32 for i in wrt)
    rtol = rtol if rtol is not None else (2e-3 if low else 1e-5)
    atol = atol if atol is not None else (2e-3 if low else 1e-6)
    rng = np.random.default_rng(seed)
    for _ in range(directions):
        tangents: list[Any] = [None] * len(args_list)
        for i in wrt:
            tangents[i] = _random_like(rng, args_list[i])
        out, out_dot = jvp(fn, args_list, tangents)
        if "forward" in modes:
            plus = [_as64(a) for a in args_list]
            minus = [_as64(a) for a in args_list]
            for i in wrt:
                plus[i] = plus[i] + eps * _as64(tangents[i])
                minus[i] = minus[i] - eps * _as64(tangents[i])
            numeric = [
                (np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * eps)
                for p, m in zip(_parts(fn(*plus)), _parts(fn(*minus)), strict=True)
            ]
            adgen_dot = [np.asarray(d, np.float64) for d in _parts(out_dot)]
            scale = max((np.max(np.abs(n), initial=1.0) for n in numeric), default=1.0)
            if not all(
                np.allclose(d, n, rtol=rtol, atol=atol * scale)
                for d, n in zip(adgen_dot, numeric, strict=True)
            ):
                raise AssertionError(
                    f"forward mode of {fn.__name__} w.r.t. {[names[i] for i in wrt]} disagrees "
                    f"with finite differences:\n  adgen:   {adgen_dot!r}"
                    f"\n  numeric: {numeric!r}"
                )
        if "reverse" in modes:
            _, pullback = vjp(fn, *args_list)
            us = [_cotangent_like(rng, o) for o in _parts(out)]
            cotangents = pullback(type(out)(us) if isinstance(out, (tuple, list)) else us[0])
            lhs = sum(_vdot(u, d) for u, d in zip(us, _parts(out_dot), strict=True))
            rhs = sum(_vdot(cotangents[i], tangents[i]) for i in wrt)
            scale = max(abs(lhs), abs(rhs), 1.0)
            if abs(lhs - rhs) > max(rtol * scale, atol):
                raise AssertionError(
                    f"reverse mode of {fn.__name__} disagrees with forward mode: "
                    f"<u, J v> = {lhs!r} but <J^T u, v> = {rhs!r}"
                )
