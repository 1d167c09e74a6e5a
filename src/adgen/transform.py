"""The pipeline, end to end: parse -> lower -> forward / reverse -> compile, cached.

>>> import numpy as np
>>> def f(x):
...     return np.sum(np.sin(x) * x)
>>> d = derivative(f, "reverse", ("x",))
>>> d.compiled(np.array([0.0, 1.0]), 1.0)[1][0].round(4).tolist()
[0.0, 1.3818]
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import cache, ir
from .compile import load
from .errors import AdgenError, InternalError, SourceLocation
from .forward import Generated, forward
from .lower import lower
from .parse import LiveScope, parse_function
from .reverse import reverse

MODES = ("forward", "reverse")


@dataclass(frozen=True)
class Derivative:
    """A compiled derivative: the IR it came from, its source, and the function."""

    function: ir.Function
    generated: Generated
    compiled: Callable[..., Any]
    mode: str
    wrt: tuple[str, ...]


def _where(fn: types.FunctionType) -> SourceLocation:
    return SourceLocation(fn.__code__.co_filename, fn.__code__.co_firstlineno)


def guarded(fn: types.FunctionType, what: str, action: Callable[[], Any]) -> Any:
    """Run ``action``; turn any non-adgen exception into an :class:`InternalError`."""
    limit = sys.getrecursionlimit()
    try:
        # lowering recurses through nested expressions and inlined calls
        sys.setrecursionlimit(max(limit, 20_000))
        return action()
    except AdgenError:
        raise
    except RecursionError:
        raise AdgenError(
            f"{fn.__qualname__} is too deeply nested to {what}",
            _where(fn),
            "split the expression into several statements",
        ) from None
    except Exception as exc:  # pragma: no cover - reached only through adgen bugs
        raise InternalError(
            f"internal error while trying to {what} {fn.__qualname__}: {type(exc).__name__}: {exc}",
            _where(fn),
            "this is a bug in adgen; please report it with this function",
        ) from exc
    finally:
        sys.setrecursionlimit(limit)


def lowered(fn: types.FunctionType) -> ir.Function:
    """The function's IR (cached; rebuilt when the function or a name it uses changes)."""

    def build() -> tuple[ir.Function, list[Any]]:
        scope = LiveScope(fn)
        result = lower(parse_function(fn, scope))
        return result, scope.seen

    value: ir.Function = guarded(fn, "read", lambda: cache.cached(fn, ("ir",), build))
    return value


def derivative(
    fn: types.FunctionType,
    mode: str,
    wrt: tuple[str, ...],
    scalars: frozenset[str] = frozenset(),
    structure: tuple[tuple[str, Any], ...] = (),
) -> Derivative:
    """The compiled forward- or reverse-mode derivative of ``fn`` w.r.t. the parameters ``wrt``.

    ``scalars`` names parameters known to be scalars (Python numbers, NumPy
    scalars, 0-d arrays): the code is specialised for them, which lets it skip
    broadcasting helpers entirely on scalar code. ``structure`` gives the shape of
    arguments that are dicts, lists or tuples (see :mod:`adgen.trees`); ``wrt`` and
    ``scalars`` then name their leaves.
    """
    key = (mode, wrt, scalars, structure)
    hit = cache.lookup(fn, key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    if mode not in MODES:
        raise ValueError(f"mode must be 'forward' or 'reverse', not {mode!r}")

    def build() -> tuple[Derivative, list[Any]]:
        scope = LiveScope(fn)
        function = lower(parse_function(fn, scope), dict(structure) or None)
        gen = (forward if mode == "forward" else reverse)(function, list(wrt), scalars)
        return Derivative(function, gen, load(gen, function.free), mode, wrt), scope.seen

    value: Derivative = guarded(fn, "differentiate", lambda: cache.cached(fn, key, build))
    return value
