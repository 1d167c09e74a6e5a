"""``xs.extend(items)`` as the appends it makes, before a function is lowered.

adgen follows a list the function builds through its appends (``xs = []``, then
``xs.append(v)``). ``extend`` of a display is an append of each item; ``extend`` of a
comprehension (statsmodels' ``pacf.extend([yule_walker(x, k)[0][-1] for k in range(1,
nlags + 1)])``) is a loop appending its values, written so when the comprehension's
variables are read nowhere else in the function (a ``for`` binds them in the function's
scope, where a comprehension does not). Any other ``extend`` is left as written (refused by
name when lowered).

>>> import gast
>>> tree = gast.parse(
...     "def f(x, n):\\n"
...     "    out = [x]\\n"
...     "    out.extend((x * 2, x * 3))\\n"
...     "    out.extend([x * k for k in range(n) if k > 1])\\n"
...     "    return out"
... )
>>> extends_as_appends(tree.body[0])
>>> print(gast.unparse(tree.body[0]).strip())
def f(x, n):
    out = [x]
    out.append(x * 2)
    out.append(x * 3)
    for k in range(n):
        if k > 1:
            out.append(x * k)
    return out
"""

from __future__ import annotations

from typing import Any

import gast

from adgen.frontend.lower.syntax import _is_append


def _appending(name: str, value: Any, where: Any) -> Any:
    """``name.append(value)`` as a statement at ``where``."""
    load = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
    method = gast.Attribute(value=load, attr="append", ctx=gast.Load())
    call = gast.Call(func=method, args=[value], keywords=[])
    made = gast.Expr(value=call)
    for node in gast.walk(made):
        gast.copy_location(node, where)
    return made


def _as_appends(stmt: Any, fn: Any) -> list[Any] | None:
    """The statements ``stmt`` (``xs.extend(items)``) means, or None (left as written)."""
    if not _is_append(stmt, "extend"):
        return None
    name, items = stmt.value.func.value.id, stmt.value.args[0]
    if isinstance(items, (gast.List, gast.Tuple)) and not any(
        isinstance(e, gast.Starred) for e in items.elts
    ):
        return [_appending(name, e, stmt) for e in items.elts]
    if not (isinstance(items, (gast.ListComp, gast.GeneratorExp)) and len(items.generators) == 1):
        return None
    generator = items.generators[0]
    bound = {n.id for n in gast.walk(generator.target) if isinstance(n, gast.Name)}
    inside = {id(n) for n in gast.walk(items)}
    elsewhere = any(
        isinstance(n, gast.Name) and n.id in bound and id(n) not in inside for n in gast.walk(fn)
    )
    if elsewhere or generator.is_async:
        return None
    body: list[Any] = [_appending(name, items.elt, stmt)]
    for test in reversed(generator.ifs):
        body = [gast.copy_location(gast.If(test=test, body=body, orelse=[]), stmt)]
    loop = gast.For(
        target=generator.target, iter=generator.iter, body=body, orelse=[], type_comment=None
    )
    return [gast.copy_location(loop, stmt)]


def extends_as_appends(fn: Any) -> None:
    """Rewrite, in the gast ``FunctionDef`` ``fn`` (its blocks too), each ``xs.extend(...)``
    statement it can as the appends it makes (see the module's doc)."""

    def rewrite(stmts: list[Any]) -> list[Any]:
        out: list[Any] = []
        for stmt in stmts:
            made = _as_appends(stmt, fn) if isinstance(stmt, gast.Expr) else None
            if made is not None:
                out.extend(made)
                continue
            for field in ("body", "orelse", "finalbody"):
                block = getattr(stmt, field, None)
                if isinstance(block, list) and block and not isinstance(stmt, gast.FunctionDef):
                    setattr(stmt, field, rewrite(block))
            for handler in getattr(stmt, "handlers", None) or []:
                handler.body = rewrite(handler.body)
            out.append(stmt)
        return out

    fn.body = rewrite(fn.body)
