"""Compile generated source in memory, visible to tracebacks, ``inspect`` and debuggers.

The source is registered in :mod:`linecache` under a pseudo-filename made from
its content, so ``inspect.getsource`` of a generated function works and a
traceback through generated code shows its lines. Nothing touches the disk.

>>> from adgen.forward import Generated
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

from .forward import Generated
from .rules.registry import TEMPLATE_GLOBALS


def pseudo_filename(gen: Generated) -> str:
    digest = hashlib.sha256(gen.source.encode()).hexdigest()[:8]
    return f"<adgen {gen.name} {digest}>"


def load(gen: Generated, free: dict[str, Any]) -> Callable[..., Any]:
    """Compile ``gen`` with the module aliases and the function's free values in scope."""
    filename = pseudo_filename(gen)
    lines = [line + "\n" for line in gen.source.split("\n")][:-1] if gen.source else []
    linecache.cache[filename] = (len(gen.source), None, lines, filename)
    code = compile(gen.source, filename, "exec")
    namespace: dict[str, Any] = {"__name__": "adgen.generated", **TEMPLATE_GLOBALS, **free}
    exec(code, namespace)
    fn: Callable[..., Any] = namespace[gen.name]
    return fn
