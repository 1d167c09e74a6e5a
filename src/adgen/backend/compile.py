"""Compile generated source in memory, visible to tracebacks, ``inspect`` and debuggers.

The source is registered in :mod:`linecache` under a pseudo-filename made from
its content, so ``inspect.getsource`` of a generated function works and a
traceback through generated code shows its lines. Nothing touches the disk.

>>> from adgen.generated import Generated
>>> fn = load(Generated("double", ["x"], "def double(x):\\n    return 2 * x\\n"), {})
>>> fn(3.0), fn.__code__.co_filename
(6.0, '<adgen double 0992f2f8>')
>>> import inspect; print(inspect.getsource(fn), end="")
def double(x):
    return 2 * x
"""

from __future__ import annotations

import hashlib
import linecache
from collections.abc import Callable
from typing import Any

from adgen.errors import LimitError
from adgen.generated import Generated
from adgen.rules.namespace import TEMPLATE_GLOBALS

# the longest derivative code adgen compiles (lines): beyond it compiling takes minutes and
# gigabytes; such a function is better split, or written with loops instead of unrolled
MAX_LINES = 400_000


# pseudo-filename -> the lists of that code whose `v = xs.pop()` put back a value v had
_RESTORING: dict[str, tuple[str, ...]] = {}


def restoring_lists(filename: str) -> tuple[str, ...]:
    """The lists from which the code compiled under ``filename`` restores saved values
    (:attr:`Generated.restoring`); none for any other file."""
    return _RESTORING.get(filename, ())


def pseudo_filename(gen: Generated) -> str:
    digest = hashlib.sha256(gen.source.encode()).hexdigest()[:8]
    return f"<adgen {gen.name} {digest}>"


def load(
    gen: Generated, free: dict[str, Any], names: dict[str, Any] | None = None
) -> Callable[..., Any]:
    """Compile ``gen`` with the module aliases and the function's free values in scope
    (``names`` in place of the module aliases: :func:`adgen.backend.namespaces.globals_for`)."""
    filename = pseudo_filename(gen)
    lines = [line + "\n" for line in gen.source.split("\n")][:-1] if gen.source else []
    linecache.cache[filename] = (len(gen.source), None, lines, filename)
    if gen.restoring:
        _RESTORING[filename] = tuple(gen.restoring)
    if len(lines) > MAX_LINES:
        raise LimitError(
            f"the code adgen wrote for {gen.name} has {len(lines)} lines, more than "
            f"adgen compiles ({MAX_LINES})",
            hint="split the function, or write repeated statements as a loop",
        )
    try:
        code = compile(gen.source, filename, "exec")
    except (SyntaxError, RecursionError, MemoryError) as exc:
        # "too many statically nested blocks": Python compiles at most 20 nested loops and
        # branches, and a helper inlined in a loop nests its own blocks inside the caller's
        raise LimitError(
            f"Python cannot compile the code adgen wrote for {gen.name}: "
            f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}",
            hint="nest fewer loops and branches (a helper's count inside its caller's) or "
            "split long expressions into statements",
        ) from exc
    namespace: dict[str, Any] = {"__name__": "adgen.generated", **TEMPLATE_GLOBALS, **free}
    if names:
        namespace.update(names)
    exec(code, namespace)
    fn: Callable[..., Any] = namespace[gen.name]
    return fn
