"""Dataflow facts about an IR function, shared by forward and reverse mode.

* ``multi``: names bound by more than one statement or inside a block (if/for/while bodies,
  loop variables). Their value depends on the path taken, so derivative code never aliases
  them and reverse mode saves their overwritten values.
* ``varied``: names that depend on a differentiated input through differentiable primitives.
* ``useful``: varied names through which a derivative reaches the result.
* ``managed``: useful names whose adjoint is touched inside a block: their adjoints are
  initialised to zero before the adjoint sweep and always accumulated explicitly.

Loops are handled by iterating to a fixed point (the sets only grow).

>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> def f(x, n):
...     s = 0.0
...     for i in range(n):
...         s = s + x * i
...     return s
>>> facts = Facts(lower(parse_function(f)), ["x"])
>>> sorted(facts.multi), sorted(facts.varied), sorted(facts.managed)
(['i', 's', 's_1'], ['s', 's_1', 'x'], ['s', 's_1', 'x'])
"""

from __future__ import annotations

from collections.abc import Iterator

from adgen import ir


def _args(stmt: ir.Assign) -> Iterator[str]:
    for atom in ir.stmt_args(stmt):
        yield from ir.atom_vars(atom)


def _block_statements(block: list[ir.Stmt], inside: bool) -> Iterator[tuple[ir.Stmt, bool]]:
    """Every statement with whether it stands inside an if/for/while block."""
    for stmt in block:
        yield stmt, inside
        if isinstance(stmt, ir.If):
            yield from _block_statements(stmt.body, True)
            yield from _block_statements(stmt.orelse, True)
        elif isinstance(stmt, ir.For):
            yield from _block_statements(stmt.body, True)
        elif isinstance(stmt, ir.While):
            yield from _block_statements(stmt.test_body, True)
            yield from _block_statements(stmt.body, True)


class Facts:
    def __init__(self, fn: ir.Function, wrt: list[str]) -> None:
        self.fn = fn
        placed = list(_block_statements(fn.body, False))
        self.has_blocks = any(isinstance(s, (ir.If, ir.For, ir.While)) for s, _ in placed)
        counts: dict[str, int] = {}
        self.multi: set[str] = set()
        self.test_names: set[str] = set()  # computed by while-loop tests only
        for stmt, inside in placed:
            if isinstance(stmt, ir.Assign):
                for t in stmt.targets:
                    counts[t] = counts.get(t, 0) + 1
                    if inside:
                        self.multi.add(t)
            elif isinstance(stmt, ir.For):
                self.multi.add(stmt.target)
            if isinstance(stmt, ir.While):
                for s, _ in _block_statements(stmt.test_body, True):
                    if isinstance(s, ir.Assign):
                        self.test_names.update(s.targets)
        # bound by several statements (or a loop header, or a parameter rebound): shape unknown
        self.rebound = {n for n, c in counts.items() if c > 1} | {
            p for p in fn.params if p in counts
        }
        self.rebound |= {s.target for s, _ in placed if isinstance(s, ir.For)}
        self.multi |= self.rebound
        assigns = [s for s, _ in placed if isinstance(s, ir.Assign)]
        # arrays written in place (y[i] = v): their tangents and adjoints must be owned arrays
        self.mutated = {
            s.targets[0] for s in assigns if s.prim.name in ("setitem", "append", "pop")
        }
        # lists built with xs = [] and xs.append(v): their derivatives are lists too
        # (and so are the results of adgen's own list helpers, rt.accumulate, rt.split_last)
        self.lists = {
            s.targets[0]
            for s in assigns
            if s.targets and (s.prim.name in ("list", "append", "pop") or s.prim.lists)
        }
        grown = True
        while grown:  # ys = xs and rt.zeros_like(xs) of a list are lists too
            copies = {
                s.targets[0]
                for s in assigns
                if s.prim.name in ("assign", "rt.zeros_like")
                and s.args
                and isinstance(s.args[0], ir.Var)
                and s.args[0].name in self.lists
            }
            grown = not copies <= self.lists
            self.lists |= copies
        self.varied = set(wrt)
        # reverse mode's `v = stack.pop()` puts back a value v had (v keeps one name: lowering
        # makes it so), so v stays as differentiable as it was; any other pop may move any
        # value, so there the item varies with the list
        changed = True
        while changed:
            changed = False
            for s in assigns:
                if not s.prim.differentiable or any(t in self.test_names for t in s.targets):
                    continue
                if ir.restores(s):
                    continue  # v = stack.pop() puts back v's own saved value: v stays as it was
                if any(v in self.varied for v in _args(s)) and not set(s.targets) <= self.varied:
                    self.varied.update(s.targets)
                    changed = True
        self.useful = {v for v in _returned(fn) if v in self.varied}
        changed = True
        while changed:  # information flows backwards: walk the statements in reverse
            changed = False
            for s in reversed(assigns):
                if s.prim.differentiable and self.useful.intersection(s.targets):
                    new = {v for v in _args(s) if v in self.varied} - self.useful
                    if new:
                        self.useful |= new
                        changed = True
        in_blocks: set[str] = set()
        for stmt, inside in placed:
            if inside and isinstance(stmt, ir.Assign):
                in_blocks.update(stmt.targets)
                in_blocks.update(_args(stmt))
        self.managed = (in_blocks | self.multi) & self.useful


def _returned(fn: ir.Function) -> set[str]:
    names: set[str] = set()
    for stmt in fn.statements():
        if isinstance(stmt, ir.Return):
            names.update(ir.atom_vars(stmt.value))
    return names
