"""Open array-api-extra's index updates, ``y = at(x, idx).set(v)`` (or ``return at(x,
idx).set(v)``), before a function is lowered.

Libraries written for the array API (SciPy's ``zscore``, ``pearsonr``) update entries of an
array with ``xpx.at(x, idx).set(v)`` (``add``, ``subtract``, ``multiply``, ``divide``,
``power``): on a NumPy array it writes into ``x`` itself, where it can, and returns it. adgen
reads the statement as that write, ``x[idx] = v`` (``x[idx] += v``...), and binds the name
to ``x`` -- the write checked like any other (an argument's array or a view another name
holds is refused by name). An update with ``copy=`` or ``xp=``, or of an expression that is
not a name, stays as written.

>>> import gast
>>> from adgen.frontend.lower.at_updates import open_at_updates
>>> class at:  # (a stand-in with the name and module of array-api-extra's)
...     pass
>>> at.__module__ = "scipy._lib.array_api_extra._lib._at"
>>> tree = gast.parse(
...     "def f(x, m):\\n"
...     "    z = x / 2.0\\n"
...     "    z = xpx.at(z, m).set(0.0)\\n"
...     "    w = xpx.at(z)[1:].add(1.0)\\n"
...     "    return xpx.at(w, 0).multiply(2.0)"
... )
>>> open_at_updates(tree.body[0], {"xpx": type("M", (), {"at": at})}.__getitem__)
>>> print(gast.unparse(tree.body[0]).strip())  # doctest: +ELLIPSIS
def f(x, m):
    z = x / 2.0
    z = <...asarray>(z)
    z[m] = 0.0
    z = <...asarray>(z)
    z[1:] += 1.0
    w = z
    w = <...asarray>(w)
    w[0] *= 2.0
    return w
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gast
import numpy as np

# at(...).<method>(v): the operator its write is
_OPERATORS = {
    "add": gast.Add,
    "subtract": gast.Sub,
    "multiply": gast.Mult,
    "divide": gast.Div,
    "power": gast.Pow,
}


def _is_at(obj: Any) -> bool:
    """Is ``obj`` array-api-extra's ``at`` (its own package, or a library's vendored copy)?"""
    module = getattr(obj, "__module__", "") or ""
    return isinstance(obj, type) and obj.__name__ == "at" and module.endswith("_lib._at")


def open_at_updates(fn: Any, lookup: Callable[[str], Any]) -> None:
    """Rewrite ``name = at(x, idx).op(v)`` (and ``at(x)[idx].op(v)``) in the body of the gast
    ``FunctionDef`` ``fn`` as the write it makes into ``x`` (see the module's documentation);
    ``lookup(name)``: a global or closure name's value (KeyError if none)."""

    def resolved(node: Any) -> Any:
        if isinstance(node, gast.Name):
            try:
                return lookup(node.id)
            except KeyError:
                return None
        if isinstance(node, gast.Attribute):
            base = resolved(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def rewrite(stmt: Any) -> list[Any] | None:
        if not (
            (
                isinstance(stmt, gast.Return)  # `return at(out, cond).set(v)`
                or (
                    isinstance(stmt, gast.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name)
                )
            )
            and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Attribute)
            and (stmt.value.func.attr == "set" or stmt.value.func.attr in _OPERATORS)
            and len(stmt.value.args) == 1
            and not stmt.value.keywords
        ):
            return None
        made = stmt.value.func.value
        index = None
        if isinstance(made, gast.Subscript):  # at(x)[idx]
            made, index = made.value, made.slice
        if not (isinstance(made, gast.Call) and not made.keywords and _is_at(resolved(made.func))):
            return None
        args = made.args
        if index is None and len(args) == 2:
            index = args[1]
        if len(args) not in (1, 2) or index is None or not isinstance(args[0], gast.Name):
            return None
        array = args[0]
        target = gast.Subscript(
            value=gast.Name(id=array.id, ctx=gast.Load(), annotation=None, type_comment=None),
            slice=index,
            ctx=gast.Store(),
        )
        value = stmt.value.args[0]
        op = stmt.value.func.attr
        write: Any = (
            gast.Assign(targets=[target], value=value, type_comment=None)
            if op == "set"
            else gast.AugAssign(target=target, op=_OPERATORS[op](), value=value)
        )
        # (a NumPy scalar is not writeable: array-api-extra updates a 0-d copy of it;
        # np.asarray gives that, and an array itself, whose write is checked as before)
        name = gast.Name(id=array.id, ctx=gast.Load(), annotation=None, type_comment=None)
        cast = gast.Call(func=gast.Constant(value=np.asarray, kind=None), args=[name], keywords=[])
        own = gast.Assign(
            targets=[gast.Name(id=array.id, ctx=gast.Store(), annotation=None, type_comment=None)],
            value=cast,
            type_comment=None,
        )
        for n in gast.walk(own):
            gast.copy_location(n, stmt)
        out = [own, gast.copy_location(write, stmt)]
        if isinstance(stmt, gast.Return):
            name = gast.Name(id=array.id, ctx=gast.Load(), annotation=None, type_comment=None)
            out.append(gast.copy_location(gast.Return(value=name), stmt))
        elif stmt.targets[0].id != array.id:
            bound = gast.Assign(
                targets=[stmt.targets[0]],
                value=gast.Name(id=array.id, ctx=gast.Load(), annotation=None, type_comment=None),
                type_comment=None,
            )
            out.append(gast.copy_location(bound, stmt))
        return out

    def block(stmts: list[Any]) -> list[Any]:
        out: list[Any] = []
        for stmt in stmts:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and not isinstance(
                    stmt, (gast.FunctionDef, gast.ClassDef)
                ):
                    setattr(stmt, field, block(inner))
            made = rewrite(stmt)
            out.extend(made if made is not None else [stmt])
        return out

    fn.body = block(fn.body)
