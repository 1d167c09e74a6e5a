"""Rewrite ``break`` and ``continue`` as flags, and a ``return`` inside a loop as a ``break``
and a ``return`` after it, before a function is lowered.

Each ``break`` or ``continue`` sets a flag of its own, and the statements after it in the loop
body run only while the flag is unset, so every loop stays structured: a ``for`` loop runs its
remaining iterations as no-ops after a ``break`` (binding fresh loop variables, so the user's
keep their last values), a ``while`` loop tests the flag in its condition. The rewrite works on
the gast tree (:func:`_structure_jumps`, called by the Lowerer's constructor).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gast

if TYPE_CHECKING:
    from adgen.frontend.lower.state import _UserNamer


def _name(id_: str, store: bool = False) -> Any:
    ctx = gast.Store() if store else gast.Load()
    return gast.Name(id=id_, ctx=ctx, annotation=None, type_comment=None)


def _set_flag(flag: str, value: bool | int, where: Any) -> Any:
    stmt = gast.Assign(
        targets=[_name(flag, True)], value=gast.Constant(value=value, kind=None), type_comment=None
    )
    return gast.copy_location(stmt, where)


def _jumps(stmts: list[Any], kind: type) -> bool:
    """Does this loop body hold a ``break``/``continue`` of its own (not of a nested loop)?"""
    for stmt in stmts:
        if isinstance(stmt, kind):
            return True
        if isinstance(stmt, gast.If) and (_jumps(stmt.body, kind) or _jumps(stmt.orelse, kind)):
            return True
    return False


def _lift_returns(stmts: list[Any], namer: _UserNamer) -> list[Any]:
    """``return e`` inside a loop (an iteration until converged, then ``raise``) as ``flag =
    k; break``, and after the loop ``if flag == k: return e``: ``e`` is evaluated after the
    loop on the values it had when the loop broke (the rest of the body and the remaining
    iterations change none of them, :func:`_structure_jumps`). Inner loops first, so a
    ``return`` leaves every loop around it. A loop with an ``else`` or a ``return`` inside
    another construct (``try``, ``with``) is left as written (refused).

    >>> import ast
    >>> from adgen.frontend.lower.state import _UserNamer
    >>> from adgen.names import Namer
    >>> source = [
    ...     "def f(x):",
    ...     "    for i in range(9):",
    ...     "        x = x / 2",
    ...     "        if x < 1:",
    ...     "            return x, i",
    ...     "    raise ValueError('no')",
    ... ]
    >>> fdef = gast.parse(chr(10).join(source)).body[0]
    >>> fdef.body = _lift_returns(fdef.body, _UserNamer(Namer(set()), {"f", "x", "i"}))
    >>> print(ast.unparse(gast.gast_to_ast(fdef)))
    def f(x):
        returned_1 = 0
        for i in range(9):
            x = x / 2
            if x < 1:
                returned_1 = 1
                break
        if returned_1 == 1:
            return (x, i)
        raise ValueError('no')
    """
    out: list[Any] = []
    for stmt in stmts:
        if isinstance(stmt, gast.If):
            stmt.body = _lift_returns(stmt.body, namer)
            stmt.orelse = _lift_returns(stmt.orelse, namer)
        elif isinstance(stmt, (gast.For, gast.While)) and not stmt.orelse:
            stmt.body = _lift_returns(stmt.body, namer)  # (inner loops: after them now)
            if _returns_of(stmt.body) and _liftable(stmt.body):
                flag = namer.fresh("returned")
                exits: list[Any] = []
                stmt.body = _returns_to_breaks(stmt.body, flag, exits)
                out.append(_set_flag(flag, 0, stmt))
                out.append(stmt)
                for k, ret in enumerate(exits, 1):
                    test = gast.Compare(
                        left=_name(flag), ops=[gast.Eq()], comparators=[gast.Constant(k, None)]
                    )
                    gast.copy_location(test, ret)
                    out.append(gast.copy_location(gast.If(test=test, body=[ret], orelse=[]), ret))
                continue
        out.append(stmt)
    return out


def _returns_of(stmts: list[Any]) -> list[Any]:
    """The ``return`` statements in ``stmts`` (not those of a nested ``def`` or class)."""
    found = []
    todo = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Return):
            found.append(node)
        elif not isinstance(node, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            todo.extend(gast.iter_child_nodes(node))
    return found


def _liftable(stmts: list[Any]) -> bool:
    """Is every ``return`` in ``stmts`` reached through ``if`` statements only (so that a
    ``break`` in its place leaves this loop), the last statement of its block (not a ``try``'s
    body opened before its ``finally``: what follows it would run before the value is read
    again)?"""
    for k, stmt in enumerate(stmts):
        if isinstance(stmt, gast.Return) and k + 1 < len(stmts):
            return False
        if isinstance(stmt, gast.If):
            if not (_liftable(stmt.body) and _liftable(stmt.orelse)):
                return False
        elif not isinstance(stmt, gast.Return) and _returns_of([stmt]):
            return False
    return True


def _returns_to_breaks(stmts: list[Any], flag: str, exits: list[Any]) -> list[Any]:
    """``stmts`` with each ``return`` (through ``if`` statements) as ``flag = k; break``, the
    ``return`` put in ``exits`` (k its place there, from 1)."""
    out: list[Any] = []
    for stmt in stmts:
        if isinstance(stmt, gast.Return):
            exits.append(stmt)
            out.append(_set_flag(flag, len(exits), stmt))
            out.append(gast.copy_location(gast.Break(), stmt))
            continue
        if isinstance(stmt, gast.If):
            stmt.body = _returns_to_breaks(stmt.body, flag, exits)
            stmt.orelse = _returns_to_breaks(stmt.orelse, flag, exits)
        out.append(stmt)
    return out


def _structure_jumps(stmts: list[Any], namer: _UserNamer) -> list[Any]:
    """Rewrite ``break`` and ``continue`` as flags guarding the rest of the loop body, so loops
    stay structured (a ``for`` loop keeps running its remaining iterations as no-ops after a
    ``break``; a ``while`` loop stops, as its condition tests the flag first)."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, gast.If):
            stmt.body = _structure_jumps(stmt.body, namer)
            stmt.orelse = _structure_jumps(stmt.orelse, namer)
        elif isinstance(stmt, (gast.For, gast.While)):
            body = _structure_jumps(stmt.body, namer)
            brk = namer.fresh("broke") if _jumps(body, gast.Break) else None
            cont = namer.fresh("skipped") if _jumps(body, gast.Continue) else None
            if brk or cont:
                body = _guard(body, brk, cont)
                if cont:
                    body = [_set_flag(cont, False, stmt), *body]
                if brk and isinstance(stmt, gast.For):
                    # after a `break` the remaining iterations are no-ops, and must not move
                    # the loop variables on: the loop binds fresh names, the guarded body
                    # copies them to the user's
                    body = [*_loop_targets_inside(stmt, namer), *body]
                    guard = gast.UnaryOp(op=gast.Not(), operand=_name(brk))
                    body = [gast.copy_location(gast.If(test=guard, body=body, orelse=[]), stmt)]
                elif brk:
                    stmt.test = gast.BoolOp(
                        op=gast.And(),
                        values=[gast.UnaryOp(op=gast.Not(), operand=_name(brk)), stmt.test],
                    )
                    gast.copy_location(stmt.test, stmt)
                if brk:
                    out.append(_set_flag(brk, False, stmt))
                    stmt.adgen_broken = brk  # (a generator it iterates over would run on)
            stmt.body = body
        out.append(stmt)
    return out


def _loop_targets_inside(loop: Any, namer: _UserNamer) -> list[Any]:
    """Give the names ``loop`` binds (its target, or the names of a tuple target, nested in
    any way) fresh names; the assignments, to put at the start of the body, that bind the
    user's names from them."""
    copies = []
    for part in gast.walk(loop.target):
        if not isinstance(part, gast.Name):
            continue
        user = part.id
        part.id = namer.fresh(f"{user}_next")
        assign = gast.Assign(targets=[_name(user, True)], value=_name(part.id), type_comment=None)
        gast.copy_location(assign.targets[0], part)
        copies.append(gast.copy_location(assign, part))
    return copies


def _guard(stmts: list[Any], brk: str | None, cont: str | None) -> list[Any]:
    """``break``/``continue`` set their flag; the statements after one run only if unset."""
    out: list[Any] = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, gast.Break):
            assert brk is not None
            out.append(_set_flag(brk, True, stmt))
            return out
        if isinstance(stmt, gast.Continue):
            assert cont is not None
            out.append(_set_flag(cont, True, stmt))
            return out
        if isinstance(stmt, gast.If) and (
            _jumps([stmt], gast.Break) or _jumps([stmt], gast.Continue)
        ):
            stmt.body = _guard(stmt.body, brk, cont)
            stmt.orelse = _guard(stmt.orelse, brk, cont)
            out.append(stmt)
            rest = stmts[i + 1 :]
            if rest:
                flags = [_name(f) for f in (brk, cont) if f]
                test = flags[0] if len(flags) == 1 else gast.BoolOp(op=gast.Or(), values=flags)
                guard = gast.UnaryOp(op=gast.Not(), operand=test)
                out.append(
                    gast.copy_location(
                        gast.If(test=guard, body=_guard(rest, brk, cont), orelse=[]), stmt
                    )
                )
            return out
        out.append(stmt)
    return out
