"""Drop the copies the chain rule writes: ``a = b`` where ``b`` can be read instead.

Through ``+`` and plain assignments, the adjoint sweep of reverse mode writes adjoints that
are copies of others (``a_bar = out_bar``), and it starts accumulating an adjoint from zeros
(``x_bar = 0.0`` then ``x_bar = x_bar + e``). This pass reads the original where the copy
was read, starts a sum with its first term, and makes one name of a copy and the name it
is copied back into; :func:`drop_copies` lists the exact cases and shows them, source in
and source out.

Reverse mode runs it first, on the function as its two sweeps wrote it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from adgen.backend.codeopt.common import (
    _blocks,
    _is_name,
    _NameCache,
    _names,
    _simple_assign,
    _statements,
)


def drop_copies(source: str) -> str:
    """Two peepholes on a generated function (mostly its reverse sweep, where the chain rule
    through ``+`` and plain assignments writes adjoints that are copies of others):

    * ``a = b``, where ``a`` is bound nowhere else and read only in the lines that follow,
      before ``b`` is bound again: those lines read ``b`` and the copy goes;
    * ``v = 0.0`` followed, before any other use of ``v``, by ``v = v + e``: ``v = e``;
    * in the first kind, ``b = a`` among those lines binds ``b`` to its own value and goes;
    * ``a = b``, where ``a`` is bound again in the lines that follow, all its uses are
      there, ``b`` is untouched there and the last of them binds ``b`` from ``a``: one name.

    >>> print(drop_copies(
    ...     "def f_vjp(x, out_bar):\\n"
    ...     "    # adjoint of line 2\\n"
    ...     "    a_bar = out_bar\\n"
    ...     "    b_bar = a_bar * 2.0\\n"
    ...     "    x_bar = 0.0\\n"
    ...     "    x_bar = x_bar + b_bar * x\\n"
    ...     "    return (x_bar,)\\n"
    ... ), end="")
    def f_vjp(x, out_bar):
        # adjoint of line 2
        b_bar = out_bar * 2.0
        x_bar = b_bar * x
        return (x_bar,)

    A loop body's adjoint (the chain rule through ``acc = acc_2 - z`` and
    ``x = x_new``), before and after:

    >>> print(drop_copies(
    ...     "def f_vjp(x, acc_bar):\\n"
    ...     "    for i in range(3):\\n"
    ...     "        acc_2_bar = acc_bar\\n"
    ...     "        z_bar = z_bar - acc_bar\\n"
    ...     "        acc_bar = 0.0\\n"
    ...     "        acc_bar = acc_bar + acc_2_bar\\n"
    ...     "        x_new_bar = x_bar\\n"
    ...     "        x_new_bar = x_new_bar + acc_2_bar * z\\n"
    ...     "        x_bar = x_new_bar * 0.9\\n"
    ...     "    return (x_bar, z_bar)\\n"
    ... ), end="")
    def f_vjp(x, acc_bar):
        for i in range(3):
            z_bar = z_bar - acc_bar
            x_bar = x_bar + acc_bar * z
            x_bar = x_bar * 0.9
        return (x_bar, z_bar)
    """
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return source
    fn = tree.body[0]
    stores: dict[str, int] = {a.arg: 1 for a in fn.args.args}
    reads: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            table = reads if isinstance(node.ctx, ast.Load) else stores
            table[node.id] = table.get(node.id, 0) + 1
    names = _NameCache()
    changed: dict[int, ast.stmt] = {}
    dropped: set[int] = set()
    blocks = list(_blocks(fn.body))
    state = _CopyState(changed, reads, names, dropped)
    for block in blocks:  # zero resets first: the copies they hid become visible
        for i, stmt in enumerate(block):
            pair = _simple_assign(stmt)
            if (
                pair is not None
                and isinstance(pair[1], ast.Constant)
                and type(pair[1].value) is float
                and pair[1].value == 0.0
                and _first_add(block, i, pair[0], changed, names)
            ):
                dropped.add(id(stmt))
                stores[pair[0]] -= 1
    for block in blocks:
        for i, stmt in enumerate(block):
            if id(stmt) in dropped:
                continue
            pair = _simple_assign(stmt)
            if pair is None:
                continue
            target, value = pair
            if isinstance(value, ast.Name) and value.id != target and stores.get(target) == 1:
                undone = _substitute_copy(block, i, target, value.id, state)
                if undone is not None:
                    dropped.add(id(stmt))
                    dropped.update(id(s) for s in undone)
                    if undone:  # (a name never stored here: a free variable, a global)
                        stores[value.id] -= len(undone)
    for block in blocks:  # then copies into names bound again
        for i, stmt in enumerate(block):
            pair = _simple_assign(stmt)
            if id(stmt) in dropped or pair is None:
                continue
            target, value = pair
            if isinstance(value, ast.Name) and value.id != target:
                if _coalesce_copy(block, i, target, value.id, state):
                    dropped.add(id(stmt))
    if not changed and not dropped:
        return source
    for block in blocks:  # a block every statement of which goes keeps a `pass`
        if all(id(s) in dropped for s in block):
            dropped.discard(id(block[0]))
            changed[id(block[0])] = ast.copy_location(ast.Pass(), block[0])
    lines = source.split("\n")
    edits = [s for s in _statements(fn.body) if id(s) in dropped or id(s) in changed]
    for stmt in sorted(edits, key=lambda s: s.lineno, reverse=True):
        shown = changed.get(id(stmt), stmt)
        new = [] if id(stmt) in dropped else [" " * stmt.col_offset + ast.unparse(shown)]
        lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno] = new
    return "\n".join(lines)


_JUMPS = (ast.Return, ast.Break, ast.Continue, ast.Raise)


_SIMPLE = (ast.Assign, ast.AugAssign, ast.Expr, ast.Delete, ast.Return)


@dataclass
class _CopyState:
    """What drop_copies has done so far: statements rewritten and dropped, reads left of
    each name, and each statement's names."""

    changed: dict[int, ast.stmt]
    reads: dict[str, int]
    names: _NameCache
    dropped: set[int]


def _substitute_copy(
    block: list[ast.stmt], i: int, target: str, source: str, state: _CopyState
) -> list[ast.stmt] | None:
    """Replace reads of ``target`` by ``source`` after ``block[i]`` (``target = source``), if
    every read of ``target`` is in simple statements before ``source`` is bound again. A
    ``source = target`` among them binds ``source`` to its own value: it goes too (returned
    with the others to drop; None if nothing can be replaced)."""
    changed, reads, names, dropped = state.changed, state.reads, state.names, state.dropped
    span: list[ast.stmt] = []
    undone: list[ast.stmt] = []
    found = 0
    for stmt in block[i + 1 :]:
        if found == reads.get(target, 0):
            break
        if id(stmt) in dropped:
            continue
        loads, others = names.of(stmt)
        if not isinstance(stmt, _SIMPLE):  # a loop or branch: never rewritten inside
            if names.mentions(stmt, target) or names.mentions(stmt, source):
                return None
            continue
        if target in others:
            return None
        copy = _simple_assign(stmt)
        if copy is not None and copy[0] == source and _is_name(copy[1], target):
            undone.append(stmt)  # source = target: source keeps its value
            found += 1
            continue
        span.append(stmt)
        found += loads.get(target, 0)
        if source in others or isinstance(stmt, _JUMPS):
            break
    if found != reads.get(target, 0):
        return None
    for stmt in span:
        loads, _ = names.of(stmt)
        if target in loads:
            _Rename(target, source).visit(stmt)
            loads[source] = loads.get(source, 0) + loads.pop(target)
            changed[id(stmt)] = stmt
    # the copy's own read of source goes, and so do the reads of target it undoes
    reads[source] = reads.get(source, 0) + reads.pop(target, 0) - len(undone) - 1
    _forget_deletes(block, i, target, state)
    return undone


def _coalesce_copy(
    block: list[ast.stmt], i: int, target: str, source: str, state: _CopyState
) -> bool:
    """``block[i]`` is ``target = source`` and ``target`` is bound again later: if every use
    of ``target`` is in the simple statements that follow, ``source`` is untouched there, and
    the last of them binds ``source`` from ``target`` (``x_bar = x_new_bar * 0.9``), the two
    are one name: ``target`` becomes ``source`` throughout and the copy goes."""
    changed, reads, names, dropped = state.changed, state.reads, state.names, state.dropped
    span: list[ast.stmt] = []
    found = 0
    for stmt in block[i + 1 :]:
        if id(stmt) in dropped:
            continue
        if not isinstance(stmt, _SIMPLE) or isinstance(stmt, ast.AugAssign):
            return False
        loads, others = names.of(stmt)
        if target in others and _simple_assign(stmt) is None:
            return False
        span.append(stmt)
        found += loads.get(target, 0)
        if source in others:
            assign = _simple_assign(stmt)
            if assign is None or source in loads or found != reads.get(target, 0):
                return False
            break
        if source in loads or isinstance(stmt, _JUMPS):
            return False
    else:
        return False
    for stmt in span:
        loads, others = names.of(stmt)
        if target in loads or target in others:
            _Rename(target, source, stores=True).visit(stmt)
            if target in loads:
                loads[source] = loads.get(source, 0) + loads.pop(target)
            if target in others:
                others.discard(target)
                others.add(source)
            changed[id(stmt)] = stmt
    reads[source] = reads.get(source, 0) + reads.pop(target, 0) - 1  # less the copy's
    _forget_deletes(block, i, target, state)
    return True


def _forget_deletes(block: list[ast.stmt], i: int, target: str, state: _CopyState) -> None:
    """``target``, bound at ``block[i]``, is gone (its copy dropped): a ``del target`` after
    it, which freed it, goes too (or loses that name)."""
    for stmt in block[i + 1 :]:
        if isinstance(stmt, ast.Delete) and any(_is_name(t, target) for t in stmt.targets):
            kept = [t for t in stmt.targets if not _is_name(t, target)]
            if kept:
                stmt.targets = kept
                state.changed[id(stmt)] = stmt
            else:
                state.dropped.add(id(stmt))


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str, stores: bool = False) -> None:
        self.old, self.new, self.stores = old, new, stores

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id == self.old and (self.stores or isinstance(node.ctx, ast.Load)):
            node.id = self.new
        return node


def _first_add(
    block: list[ast.stmt], i: int, var: str, changed: dict[int, ast.stmt], names: _NameCache
) -> bool:
    """``block[i]`` is ``var = 0.0``: is the next use of ``var`` a ``var = var + e``? Then it
    becomes ``var = e``."""
    for stmt in block[i + 1 :]:
        if isinstance(stmt, _JUMPS):
            return False
        if not names.mentions(stmt, var):
            continue
        assign = _simple_assign(stmt)
        if assign is None or assign[0] != var:
            return False
        value = assign[1]
        if (
            isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Add)
            and isinstance(value.left, ast.Name)
            and value.left.id == var
            and var not in _names(value.right)
        ):
            assert isinstance(stmt, ast.Assign)
            loads, _ = names.of(stmt)
            stmt.value = value.right
            loads[var] -= 1
            if not loads[var]:
                del loads[var]
            changed[id(stmt)] = stmt
            return True
        return False
    return False
