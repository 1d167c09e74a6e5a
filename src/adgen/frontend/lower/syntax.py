"""What the user's syntax tree says about a name: questions the parts of the Lowerer share.

Which names are assigned inside blocks, written in place, grown as lists (appends, pops,
concatenations with a list literal): pure functions of gast nodes, asked before and while a
function is lowered.
"""

from __future__ import annotations

from typing import Any

import gast


def _assigned_in_blocks(body: list[Any]) -> set[str]:
    """User names assigned (or used as loop variables) inside if/for/while blocks."""
    names: set[str] = set()

    def stored(node: Any) -> set[str]:
        return {
            n.id
            for n in gast.walk(node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
        }

    for stmt in body:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            names |= stored(stmt)
    return names


def _written_in_place(nodes: list[Any]) -> set[str]:
    """Names written through a subscript (``y[i] = v``, ``y[i] += v``) or appended to
    (``nodes``: every node of a tree, as :func:`gast.walk` finds them)."""
    names = set(_appended(nodes))
    for n in nodes:
        targets = (
            n.targets
            if isinstance(n, gast.Assign)
            else [n.target]
            if isinstance(n, gast.AugAssign)
            else []
        )
        for t in targets:
            if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                names.add(t.value.id)
    return names


def _appended(nodes: list[Any]) -> set[str]:
    """Names of lists grown with ``xs.append(v)`` or shrunk with ``xs.pop()`` (``nodes``: every
    node of a tree)."""
    grown = {
        n.value.func.value.id
        for n in nodes
        if isinstance(n, gast.Expr)
        and isinstance(n.value, gast.Call)
        and isinstance(n.value.func, gast.Attribute)
        and n.value.func.attr == "append"
        and isinstance(n.value.func.value, gast.Name)
    }
    return grown | {n.func.value.id for n in nodes if _is_pop(n)} | _concatenated(nodes)


def _concatenated(nodes: list[Any]) -> set[str]:
    """Names bound to a list concatenation with a list literal (``xs = xs + [v]``,
    ``ys = [v] + xs``, ``xs += [v]``): real lists, grown by appends (``nodes``: every node of
    a tree)."""
    names = set()
    for n in nodes:
        if (
            isinstance(n, gast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], gast.Name)
            and isinstance(n.value, gast.BinOp)
            and isinstance(n.value.op, gast.Add)
            and (isinstance(n.value.left, gast.List) or isinstance(n.value.right, gast.List))
        ):
            names.add(n.targets[0].id)
        elif (
            isinstance(n, gast.AugAssign)
            and isinstance(n.target, gast.Name)
            and isinstance(n.op, gast.Add)
            and isinstance(n.value, gast.List)
        ):
            names.add(n.target.id)
    return names


def _popped_into(nodes: list[Any], lists: set[str]) -> set[str]:
    """Names ``v`` of the statements ``v = xs.pop()`` that pop from one of ``lists``."""
    return {
        n.targets[0].id
        for n in nodes
        if isinstance(n, gast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], gast.Name)
        and _is_pop(n.value)
        and n.value.func.value.id in lists
    }


def _is_pop(node: Any) -> bool:
    """``xs.pop()`` (the last item, taken off the list)."""
    return (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and node.func.attr == "pop"
        and isinstance(node.func.value, gast.Name)
        and not node.args
        and not node.keywords
    )


def _own_nodes(fn: Any) -> list[Any]:
    """Every node of the function ``fn``, but those inside the functions (``def``, ``lambda``)
    defined in it, whose names are their own (a nested ``def``'s ``xs`` is not ``fn``'s)."""
    found = [fn]
    for n in found:
        for child in gast.iter_child_nodes(n):
            if isinstance(child, (gast.FunctionDef, gast.Lambda)):
                found.extend(child.args.defaults)  # defaults are evaluated where it is defined
                continue
            found.append(child)
    return found


def _nested_results(fn: Any) -> list[tuple[set[str], list[Any]]]:
    """For each function defined inside ``fn`` (``def``, ``lambda``): the names it reads from
    ``fn`` (free in it) and the expressions it returns -- a call of it may return a view of
    one of those arrays, which the caller keeps under a name adgen sees only as a call."""
    found: list[tuple[set[str], list[Any]]] = []
    for n in _own_nodes(fn):
        for child in gast.iter_child_nodes(n):
            if not isinstance(child, (gast.FunctionDef, gast.Lambda)):
                continue
            inner = list(gast.walk(child))
            local = {
                a.id
                for a in inner
                if isinstance(a, gast.Name) and isinstance(a.ctx, (gast.Store, gast.Param))
            }
            free = {
                a.id
                for a in inner
                if isinstance(a, gast.Name) and isinstance(a.ctx, gast.Load) and a.id not in local
            }
            if isinstance(child, gast.Lambda):
                results = [child.body]
            else:
                results = [r.value for r in inner if isinstance(r, gast.Return) and r.value]
            found.append((free, results))
    return found
