"""The derivative cache: one compiled derivative per (function, options), never stale.

Entries hang off the function object (weakly: a deleted function frees them).
Each entry remembers the code object it was made from and every outside name
it resolved (globals, closure cells) with the object found; a lookup that
finds any of them changed -- a notebook cell re-run redefining a helper, a
global rebound, an outside array reshaped in place (code may be specialised for its
shape) -- rebuilds instead of serving old code.
"""

from __future__ import annotations

import threading
import types
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from adgen.frontend.parse import dependencies_unchanged

T = TypeVar("T")

_lock = threading.RLock()
stats = {"hits": 0, "builds": 0}
# bumped by clear(): an entry held on to (see entry()) from before is no longer served
generation = 0
Entry = tuple[Any, Any, list[Any], Any]  # (code, value, names looked up, defaults)
_entries: weakref.WeakKeyDictionary[types.FunctionType, dict[Hashable, Entry]] = (
    weakref.WeakKeyDictionary()
)


def lookup(fn: types.FunctionType, key: Hashable) -> Any:
    """The value cached for (fn, key) if it is still valid, else None (no lock: reads only)."""
    held = entry(fn, key)
    return held[1] if held is not None and fresh(fn, held) else None


def entry(fn: types.FunctionType, key: Hashable) -> Entry | None:
    """The entry for (fn, key), valid or not: a caller may keep it and ask :func:`fresh`
    (with :data:`generation` unchanged) instead of looking it up again."""
    per_fn = _entries.get(fn)
    return per_fn.get(key) if per_fn is not None else None


def fresh(fn: types.FunctionType, held: Entry) -> bool:
    """Is the entry still right for ``fn``: same code, defaults and outside names?"""
    if held[0] is fn.__code__ and held[3] is fn.__defaults__ and dependencies_unchanged(held[2]):
        stats["hits"] += 1
        return True
    return False


def variants(fn: types.FunctionType, base: tuple[Any, ...]) -> int:
    """How many entries of ``fn`` extend the key ``base`` by one item (specialisations)."""
    per_fn = _entries.get(fn) or {}
    n = len(base)
    return sum(
        1 for k in list(per_fn) if isinstance(k, tuple) and len(k) == n + 1 and k[:n] == base
    )


def cached(fn: types.FunctionType, key: Hashable, build: Callable[[], tuple[T, list[Any]]]) -> T:
    """The value built for (fn, key), rebuilt if fn's code or anything it looked up changed.

    ``build`` returns ``(value, seen)`` where ``seen`` lists the lookups made
    (see :class:`adgen.frontend.parse.LiveScope`).
    """
    hit = lookup(fn, key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    with _lock:
        hit = lookup(fn, key)  # another thread may have built it meanwhile
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        value, seen = build()
        _entries.setdefault(fn, {})[key] = (fn.__code__, value, seen, fn.__defaults__)
        stats["builds"] += 1
        return value


def clear() -> None:
    global generation
    with _lock:
        _entries.clear()
        generation += 1
