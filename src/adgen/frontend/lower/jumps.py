"""Rewrite ``break`` and ``continue`` as flags, before a function is lowered.

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


def _set_flag(flag: str, value: bool, where: Any) -> Any:
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
