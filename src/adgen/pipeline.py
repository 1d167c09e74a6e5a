"""The pipeline, end to end: parse -> lower -> settle -> optimize -> forward / reverse ->
compile, cached.

>>> import numpy as np
>>> def f(x):
...     return np.sum(np.sin(x) * x)
>>> d = derivative(f, "reverse", ("x",))
>>> d.compiled(np.array([0.0, 1.0]), 1.0)[1][0].round(4).tolist()
[0.0, 1.3818]
"""

from __future__ import annotations

import re
import sys
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from adgen import ir
from adgen.backend import cache, diskcache
from adgen.backend.compile import load, pseudo_filename
from adgen.backend.namespaces import globals_for
from adgen.errors import (
    AdgenError,
    DerivativeError,
    InternalError,
    LimitError,
    NonDifferentiableError,
    SourceLocation,
    UnsupportedSyntaxError,
)
from adgen.frontend.lower import lower
from adgen.frontend.lower.deferred import DEFERRED
from adgen.frontend.parse import LiveScope, parse_function
from adgen.generated import Generated
from adgen.middle.branches import settle_branches
from adgen.middle.fills import settle_unit_fills
from adgen.middle.optimize import optimize
from adgen.middle.shapes import Signature, is_complex, settle_broadcasts, settle_checks
from adgen.modes.batched import NotBatched, forward_batched
from adgen.modes.complexvalues import settle_kinds
from adgen.modes.forward import forward
from adgen.modes.reverse import reverse
from adgen.rules.runtime.core import Refusal

# reverse_grad: reverse mode for adgen.grad, the result itself not computed where it is a
# real number the caller discards; forward_tangent: forward mode returning the tangent only
# (adgen.hvp: the gradient's tangent, not the gradient); forward_batched: adgen.modes.batched
MODES = ("forward", "forward_tangent", "reverse", "reverse_aux", "reverse_grad", "forward_batched")
# derivatives specialised for argument shapes, per function and options; calls with more
# kinds of shapes share the general code (which works for every shape)
MAX_SPECIALISED = 8
# (function, options) whose general derivative adgen refused: code is made for each call's
# kinds instead (the function tests their types, which only kinds decide)
_KINDS_NEEDED: set[tuple[types.FunctionType, tuple[Any, ...]]] = set()


@dataclass(frozen=True)
class Derivative:
    """A compiled derivative: the IR it came from, its source, and the function."""

    function: ir.Function
    generated: Generated
    compiled: Callable[..., Any]
    mode: str
    wrt: tuple[str, ...]


# the classes a branch made a refusal by the analysis may carry besides DEFERRED's
_BRANCH_REFUSALS: dict[str, type[AdgenError]] = {"NonDifferentiableError": NonDifferentiableError}


def _where(fn: types.FunctionType) -> SourceLocation:
    return SourceLocation(fn.__code__.co_filename, fn.__code__.co_firstlineno)


def guarded(fn: types.FunctionType, what: str, action: Callable[[], Any]) -> Any:
    """Run ``action``; turn any non-adgen exception into an :class:`InternalError`."""
    limit = sys.getrecursionlimit()
    try:
        # lowering recurses through nested expressions and inlined calls
        sys.setrecursionlimit(max(limit, 20_000))
        return action()
    except LimitError as exc:
        if exc.loc is None:  # raised where the user's function is not known: name it
            raise LimitError(exc.message, _where(fn), exc.hint) from exc.__cause__
        raise
    except (AdgenError, NotBatched):
        raise
    except RecursionError:
        raise LimitError(
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


def cache_key(
    mode: str,
    wrt: tuple[str, ...],
    scalars: frozenset[str] = frozenset(),
    structure: tuple[tuple[str, Any], ...] = (),
    optimized: bool = True,
    batched: bool = True,
    signature: Signature = (),
    backend: str = "numpy",
) -> tuple[Any, ...]:
    """What :func:`derivative` caches its result under (for ``fn``), given its arguments."""
    key: tuple[Any, ...] = (mode, wrt, scalars, structure)
    if not optimized or not batched:
        key += (optimized, batched)
    if backend != "numpy":  # (before the signature: key[:-1] is the key of every shape)
        key += (("backend", backend),)
    if signature:
        key += (signature,)
    return key


def derivative(
    fn: types.FunctionType,
    mode: str,
    wrt: tuple[str, ...],
    scalars: frozenset[str] = frozenset(),
    structure: tuple[tuple[str, Any], ...] = (),
    optimized: bool = True,
    batched: bool = True,
    signature: Signature = (),
    backend: str = "numpy",
) -> Derivative:
    """The compiled forward- or reverse-mode derivative of ``fn`` w.r.t. the parameters ``wrt``.

    ``scalars`` names parameters known to be scalars (Python numbers, NumPy
    scalars, 0-d arrays): the code is specialised for them, which lets it skip
    broadcasting helpers entirely on scalar code. ``structure`` gives the shape of
    arguments that are dicts, lists or tuples (see :mod:`adgen.trees`); ``wrt`` and
    ``scalars`` then name their leaves. ``optimized=False`` differentiates the IR as
    lowered, without :mod:`adgen.middle.optimize`'s passes. ``batched=False`` is for code adgen
    will differentiate again: reverse mode then saves loop values one by one.
    ``signature`` pairs parameters (leaves) with :func:`adgen.middle.shapes.describe` of the
    arguments of a call: the code is then specialised for their shapes and dtypes, and
    cached for them (like a jit cache). ``backend`` is ``"numba"`` (or ``"numba:strict"``) for
    code compiled by Numba where it can be (:mod:`adgen.backend.numba_jit`).
    """
    key = cache_key(mode, wrt, scalars, structure, optimized, batched, signature, backend)
    hit = cache.lookup(fn, key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    if (
        signature
        and mode != "forward_batched"  # (made for shapes only: as many as jacfwd meets)
        and cache.variants(fn, key[:-1]) >= MAX_SPECIALISED
        and not any(is_complex(d) for _, d in signature)
        and (fn, key[:-1]) not in _KINDS_NEEDED
    ):
        # called with ever new shapes: one general derivative serves the others (made for
        # real arguments: complex ones always get code made for them) -- unless adgen
        # reads the function only for the kinds of its arguments (a library's type tests)
        try:
            return derivative(
                fn, mode, wrt, scalars, structure, optimized, batched, backend=backend
            )
        except AdgenError:
            _KINDS_NEEDED.add((fn, key[:-1]))
    if mode not in MODES:
        raise ValueError(f"mode must be 'forward' or 'reverse', not {mode!r}")

    def build() -> tuple[Derivative, list[Any]]:
        scope = LiveScope(fn)
        function = lower(parse_function(fn, scope), dict(structure) or None, wrt, signature)
        # what the call's kinds and shapes decide: adgen's own checks; in derivative code
        # read again (nested derivatives), its kind questions, no-op unbroadcasts, and
        # products with the arrays of ones that seed a sum's adjoint
        function = settle_checks(function, signature)
        function = settle_kinds(function, signature)
        function = settle_broadcasts(function, signature)
        function = settle_unit_fills(function, signature)
        function = settle_branches(function, signature)
        if optimized:
            function = optimize(function)

        def make() -> Generated:
            if mode == "forward_batched":  # (NotBatched where it does not apply)
                return forward_batched(function, list(wrt), scalars, signature, fuse=optimized)
            if mode in ("forward", "forward_tangent"):
                return forward(
                    function,
                    list(wrt),
                    scalars,
                    signature,
                    fuse=optimized,
                    reuse=optimized and batched,  # (not code adgen reads again)
                    value=mode == "forward",
                )
            aux, value = mode == "reverse_aux", mode != "reverse_grad"
            return reverse(function, list(wrt), scalars, aux, batched, signature, optimized, value)

        disk_key = (
            key
            if backend == "numpy"
            else cache_key(mode, wrt, scalars, structure, optimized, batched, signature)
        )  # (the same generated code)
        gen, compiled = diskcache.generated(
            fn,
            function,
            scope.seen,
            disk_key,
            make,
            lambda g: load(g, function.free, globals_for(signature)),
        )
        if backend != "numpy":
            from adgen.backend import numba_jit

            names = globals_for(signature)
            strict = backend.endswith(":strict")
            compiled = numba_jit.wrap(gen, compiled, function, function.free, names, strict)
        made = Derivative(function, gen, compiled, mode, wrt)
        _BY_FILE[pseudo_filename(gen)] = made
        return made, scope.seen

    value: Derivative = guarded(fn, "differentiate", lambda: cache.cached(fn, key, build))
    return value


# function -> cache key -> why batched forward mode does not apply there (asked once; kept
# while the function lives, as the derivative cache's entries are)
_NOT_BATCHED: weakref.WeakKeyDictionary[types.FunctionType, dict[tuple[Any, ...], str]] = (
    weakref.WeakKeyDictionary()
)


def batched(
    fn: types.FunctionType,
    wrt: tuple[str, ...],
    scalars: frozenset[str],
    structure: tuple[tuple[str, Any], ...],
    signature: Signature,
) -> Derivative | str:
    """The batched forward-mode derivative of ``fn`` (see :mod:`adgen.modes.batched`) for a
    call's shapes, or why there is none (then ``jacfwd`` runs one pass per column)."""
    key = cache_key("forward_batched", wrt, scalars, structure, True, True, signature)
    known = _NOT_BATCHED.get(fn, {}).get(key)
    if known is not None:
        return known
    try:
        return derivative(fn, "forward_batched", wrt, scalars, structure, signature=signature)
    except NotBatched as exc:
        where = f" (line {exc.line})" if exc.line else ""
        _NOT_BATCHED.setdefault(fn, {})[key] = why = f"{exc.why}{where}"
        return why


_COMMENT = re.compile(r"^\s*# (?:adjoint of )?line (.+?): ")


# the pseudo-filename of generated code -> the derivative it is (a derivative of derivative
# code names the user's line through the code it differentiated)
_BY_FILE: weakref.WeakValueDictionary[str, Derivative] = weakref.WeakValueDictionary()


def locate(d: Derivative, generated_line: int) -> SourceLocation | None:
    """The user's line whose derivative stands at this line of the generated source (through
    every derivative code in between, at higher orders)."""
    loc, seen = _locate_once(d, generated_line), 0
    while loc is not None and loc.filename in _BY_FILE and seen < 16:
        inner = _locate_once(_BY_FILE[loc.filename], loc.lineno)
        if inner is None:
            break
        loc, seen = inner, seen + 1
    return loc


def _locate_once(d: Derivative, generated_line: int) -> SourceLocation | None:
    lines = d.generated.source.splitlines()
    for text in reversed(lines[: max(generated_line - 1, 0)]):
        match = _COMMENT.match(text)
        if match is None:
            continue
        return d.function.location(match.group(1))
    return None


def _raises_as_written(d: Derivative, line: int) -> bool:
    """Is this line of the generated code a ``raise`` the program wrote (copied as written)?"""
    lines = d.generated.source.splitlines()
    return 0 < line <= len(lines) and lines[line - 1].lstrip().startswith("raise ")


def run(d: Derivative, *args: Any) -> Any:
    """Call compiled derivative code; a failure inside it names the user's line."""
    try:
        return d.compiled(*args)
    except AdgenError:
        raise
    except Exception as exc:
        code = getattr(d.compiled, "__code__", None)
        filename = code.co_filename if code is not None else None
        tb, line = exc.__traceback__, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is not None and _raises_as_written(d, line):
            raise  # the program's own `raise`, copied as written: its exception as it is
        loc = locate(d, line) if line is not None else None
        if isinstance(exc, Refusal):  # decided when the code ran: a refusal all the same
            # (a branch the analysis made a refusal carries its error's class: Facts)
            kind = DEFERRED.get(exc.kind) or _BRANCH_REFUSALS.get(exc.kind)
            if kind is not None:
                raise kind(exc.what, loc, exc.hint) from None
            what = f"adgen does not support {exc.what}"
            raise UnsupportedSyntaxError(what, loc, exc.hint) from None
        what, values = "this line", "the shapes and values on this line"
        if loc is None:  # before the code of the first line: name the function
            fn = d.function
            raw = fn.source_lines.get(fn.firstlineno, "")
            loc = SourceLocation(fn.filename, fn.firstlineno, len(raw) - len(raw.lstrip()), raw)
            what, values = f"`{fn.name}`", "the arguments"
        hint = f"adgen.source(f) shows the generated code; check {values}"
        if isinstance(exc, RecursionError):
            hint = (
                "the derivative of a recursive call needs more stack than the call itself: "
                "write the recursion as a loop, or raise sys.setrecursionlimit"
            )
        raise DerivativeError(
            f"{type(exc).__name__} while computing the derivative of {what}: {exc}",
            loc,
            hint,
        ) from exc
