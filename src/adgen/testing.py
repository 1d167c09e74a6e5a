"""Check adgen's derivatives of your own functions.

:func:`check_grads` compares forward mode with central finite differences
along random directions, and reverse mode with forward mode through the
dot-product identity ``<u, J v> == <J^T u, v>``:

>>> import numpy as np
>>> def f(x, y):
...     return np.sum(np.sin(x) * y)
>>> check_grads(f, np.array([0.1, 0.5]), 2.0)

Arguments that are dicts, lists or tuples of arrays are checked leaf by leaf:

>>> def g(params, x):
...     return np.sum(np.tanh(params["W"] @ x) * params["b"][0])
>>> check_grads(g, {"W": np.eye(2), "b": (0.5,)}, np.array([0.3, -0.2]))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from adgen import trees
from adgen.api import _float_like, _params, jvp, vjp
from adgen.errors import entry_point
from adgen.frontend.parse import unwrap
from adgen.rules.runtime import is_complex


def _tree_map(f: Callable[..., Any], value: Any, *others: Any) -> Any:
    """``f`` applied leaf by leaf to ``value`` (a dict, list or tuple of leaves, or a leaf)
    and values of the same structure."""
    desc = trees.describe(value)
    if not trees.is_tree(desc):
        return f(value, *others)
    columns = [trees.flatten(v, desc) for v in (value, *others)]
    return trees.unflatten(desc, [f(*leaf) for leaf in zip(*columns, strict=True)])


def _leaves(value: Any) -> list[Any]:
    return trees.flatten(value, trees.describe(value))


def _differentiable(value: Any) -> bool:
    """A floating-point argument, or a dict / list / tuple of them."""
    found = _leaves(value)
    return bool(found) and all(_float_like(leaf) for leaf in found)


def _wide(value: Any) -> Any:
    """``value`` as float64 (complex128 if complex)."""
    return np.asarray(value, np.complex128 if np.iscomplexobj(value) else np.float64)


def _as64(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            return np.asarray(value, dtype=np.complex128 if value.dtype.kind == "c" else np.float64)
        return value
    if is_complex(value):
        return complex(value)
    return float(value) if _float_like(value) else value


def _random_like(rng: np.random.Generator, value: Any) -> Any:
    if trees.is_tree(trees.describe(value)):
        return _tree_map(lambda leaf: _random_like(rng, leaf), value)
    shape = np.shape(value)
    r = rng.standard_normal(shape)
    if is_complex(value):
        r = r + 1j * rng.standard_normal(shape)
    if isinstance(value, np.ndarray):
        return np.asarray(r, dtype=value.dtype)
    if isinstance(value, np.generic):
        return value.dtype.type(r)
    return complex(r) if is_complex(value) else float(r)


def _parts(value: Any) -> list[Any]:
    """A function's result as a list of arrays (a tuple or list result is several)."""
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _cotangent_like(rng: np.random.Generator, out: Any) -> Any:
    u = _random_like(rng, np.asarray(out) if np.ndim(out) else out)
    if isinstance(out, np.ndarray) and out.ndim == 0:
        u = np.asarray(u, dtype=out.dtype)
    return u


def _vdot(a: Any, b: Any) -> float:
    """The pairing of cotangents with tangents, ``Re(sum(a * b))`` (no conjugate: adgen's
    convention for complex values, JAX's); the dot product for real values (of every leaf,
    for dicts, lists and tuples)."""
    return sum(
        float(np.real(np.sum(_wide(p) * _wide(q))))
        for p, q in zip(_leaves(a), _leaves(b), strict=True)
    )


def _central_differences(
    fn: Callable[..., Any],
    args: list[Any],
    wrt: Sequence[int],
    tangents: list[Any],
    eps: float,
    noise: list[Any] | None = None,
) -> list[Any]:
    """(f(x + eps t) - f(x - eps t)) / (2 eps), each result in float64. ``noise``, if given,
    gets how far rounding f's values may move each (a few units in the last place of f, over
    2 eps: where f is large and its derivative small, that is more than the tolerance)."""
    plus = [_tree_map(_as64, a) for a in args]
    minus = [_tree_map(_as64, a) for a in args]
    for i in wrt:
        plus[i] = _tree_map(lambda p, t: p + eps * _as64(t), plus[i], tangents[i])
        minus[i] = _tree_map(lambda m, t: m - eps * _as64(t), minus[i], tangents[i])
    pairs = [
        (_wide(p), _wide(m)) for p, m in zip(_parts(fn(*plus)), _parts(fn(*minus)), strict=True)
    ]
    if noise is not None:
        ulp = np.finfo(np.float64).eps
        noise.extend(4 * ulp * (np.abs(p) + np.abs(m)) / (2 * eps) for p, m in pairs)
    return [(p - m) / (2 * eps) for p, m in pairs]


def _agree(
    got: list[Any], numeric: list[Any], rtol: float, atol: float, noise: list[Any] | None = None
) -> bool:
    """``got`` is ``numeric`` up to ``rtol`` and ``atol`` times the largest numeric entry, and
    the rounding error ``noise`` of each numeric result, if given."""
    scale = max((np.max(np.abs(n), initial=1.0) for n in numeric), default=1.0)
    noise = noise if noise is not None else [0.0] * len(numeric)
    return all(
        bool(np.all(np.abs(np.subtract(d, n)) <= atol * scale + e + rtol * np.abs(n)))
        for d, n, e in zip(got, numeric, noise, strict=True)
    )


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
    floating-point argument, and every dict, list or tuple of them). Forward
    mode is checked against central finite differences (computed in float64),
    reverse mode against forward mode. Where forward mode and the differences disagree, a
    step 100 times smaller is tried too (it passes if that agrees), and one 100 times
    larger tells whether the differences can judge at all ("cannot be checked here").
    Tolerances default to 1e-5 (relative) for float64 and 2e-3 for float32; the differences
    at the first step may also be off by their rounding error (a few units in the last place
    of f's values, over the step), which for a large f with a small derivative is more.

    Complex arguments and results are checked under adgen's convention (JAX's): tangents
    are complex directions (finite differences along them), and reverse mode must satisfy
    ``Re(sum(u * J v)) == Re(sum(J^T u * v))`` for complex ``u`` and ``v``.
    """
    fn = unwrap(f)
    names = _params(fn)
    args_list = list(args)
    if wrt is None:
        wrt = [i for i, a in enumerate(args_list) if _differentiable(a)]
    if not wrt:
        raise ValueError("check_grads: no floating-point argument to check")
    low = any(
        np.result_type(leaf) in (np.float32, np.complex64)
        for i in wrt
        for leaf in _leaves(args_list[i])
    )
    rtol = rtol if rtol is not None else (2e-3 if low else 1e-5)
    atol = atol if atol is not None else (2e-3 if low else 1e-6)
    # (a derivative object itself: adgen makes its code for the arguments' kinds)
    target = f if hasattr(f, "adgen_function") else fn
    rng = np.random.default_rng(seed)
    for _ in range(directions):
        tangents: list[Any] = [None] * len(args_list)
        for i in wrt:
            tangents[i] = _random_like(rng, args_list[i])
        out, out_dot = jvp(target, args_list, tangents)
        if "forward" in modes:
            noise: list[Any] = []
            numeric = _central_differences(target, args_list, wrt, tangents, eps, noise)
            adgen_dot = [_wide(d) for d in _parts(out_dot)]
            if not _agree(adgen_dot, numeric, rtol, atol, noise) and not _agree(
                adgen_dot,
                _central_differences(target, args_list, wrt, tangents, eps / 100),
                rtol,
                atol,
            ):  # (a step 100 times smaller may vindicate adgen: f curves fast here; its
                # differences are taken as they are: their rounding error is 100 times more)
                what = f"forward mode of {fn.__name__} w.r.t. {[names[i] for i in wrt]}"
                # finite differences are only a witness where f is smooth at the scale of
                # the step: at a step 100 times larger they must say the same
                wider = _central_differences(target, args_list, wrt, tangents, 100 * eps)
                if not _agree(wider, numeric, 100 * rtol, 100 * atol, noise):
                    raise AssertionError(
                        f"{what} cannot be checked here: central differences at steps "
                        f"{eps:g} and {100 * eps:g} disagree with each other, so {fn.__name__} "
                        "is not smooth (or varies too fast) at these arguments for finite "
                        "differences to judge; try other arguments:"
                        f"\n  adgen:            {adgen_dot!r}"
                        f"\n  numeric, step {eps:g}: {numeric!r}"
                        f"\n  numeric, step {100 * eps:g}: {wider!r}"
                    )
                raise AssertionError(
                    f"{what} disagrees with finite differences:\n  adgen:   {adgen_dot!r}"
                    f"\n  numeric: {numeric!r}"
                )
        if "reverse" in modes:
            _, pullback = vjp(target, *args_list)
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
