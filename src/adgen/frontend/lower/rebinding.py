"""A list the function builds, then rebinds to what it made of it, gets a name per value.

``rows = []``, appends in a loop, then ``rows = np.array(rows).T``: Python's one name holds a
list, then an array. The lowering gives a name written in place one IR name for all its
bindings, and the derivative code treats an IR name as a list or as an array throughout, so
the two values are given two names: the rebinding's target, and every use after it, are
renamed -- which is Python's meaning wherever the rebinding is a statement of the function's
body itself (every later statement sees the new value) and no nested function or class may
read the name.

>>> import gast
>>> code = '''
... def f(x):
...     rows = []
...     for i in range(3):
...         rows.append(x * i)
...     rows = np.array(rows).T
...     return rows[0] + len([rows for _ in x])
... '''
>>> fn = gast.parse(code).body[0]
>>> split_rebound_lists(fn, lambda base: base + "_array")
>>> print(gast.unparse(fn).strip())
def f(x):
    rows = []
    for i in range(3):
        rows.append(x * i)
    rows_array = np.array(rows).T
    return rows_array[0] + len([rows_array for _ in x])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gast

# a nested scope that may read a name when it is called, later than where it is written
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
# a comprehension binds its targets in a scope of its own
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def split_rebound_lists(fn: Any, fresh: Callable[[str], str]) -> None:
    """Rename, in the gast ``FunctionDef`` ``fn``, each value a name bound to a list display
    earlier takes at a later assignment of the function's body (``fresh(name)``: a name used
    nowhere in ``fn``); see the module's doc."""
    unsafe = _read_by_scopes(fn) | _declared(fn) | _bound_by_comprehensions(fn)
    lists: set[str] = set()
    for k, stmt in enumerate(fn.body):
        target = _single_target(stmt)
        if target is None:
            continue
        old = target.id
        if isinstance(stmt.value, (gast.List, gast.ListComp)):
            lists.add(old)
        elif old in lists and old not in unsafe:
            new = fresh(old)
            target.id = new
            _rename(fn.body[k + 1 :], old, new)
            lists.discard(old)


def _single_target(stmt: Any) -> Any:
    """The name ``stmt`` assigns, where it is ``name = value`` (else None)."""
    if (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
    ):
        return stmt.targets[0]
    return None


def _rename(stmts: list[Any], old: str, new: str) -> None:
    for stmt in stmts:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and node.id == old:
                node.id = new


def _read_by_scopes(fn: Any) -> set[str]:
    """The names a nested function, lambda or class of ``fn`` mentions."""
    return {
        n.id
        for scope in gast.walk(fn)
        if isinstance(scope, _SCOPES) and scope is not fn
        for n in gast.walk(scope)
        if isinstance(n, gast.Name)
    }


def _declared(fn: Any) -> set[str]:
    """The names ``fn`` declares ``global`` or ``nonlocal``."""
    return {
        name
        for n in gast.walk(fn)
        if isinstance(n, (gast.Global, gast.Nonlocal))
        for name in n.names
    }


def _bound_by_comprehensions(fn: Any) -> set[str]:
    """The names a comprehension of ``fn`` binds as its own (its loop targets)."""
    return {
        n.id
        for c in gast.walk(fn)
        if isinstance(c, _COMPREHENSIONS)
        for g in c.generators
        for n in gast.walk(g.target)
        if isinstance(n, gast.Name)
    }
