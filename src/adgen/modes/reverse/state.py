"""The state of one reverse-mode function while it is written, and adding to adjoints.

:class:`_State` holds what the parts of the writer share: the facts about the function,
which names are saved on the stack, the name holding each adjoint so far, the loops'
counters and checkpoints. Its methods restore saved values and add a contribution to an
adjoint (the first one assigns it). :class:`adgen.modes.reverse.assignments._Assignments` and
:class:`adgen.modes.reverse.sweeps._Reverse` build on it.
"""

from __future__ import annotations

import ast

from adgen import ir
from adgen.backend.emit import CodeWriter
from adgen.middle.analysis import Facts
from adgen.middle.shapes import Classes, scalar_names
from adgen.modes.complexvalues import ComplexValues
from adgen.modes.expand import StatementRule, add, call, name, owned, zero_like
from adgen.modes.reverse.blocks import _iteration_local, _walk
from adgen.names import Namer


def _assign(target: str, value: ast.expr) -> ast.stmt:
    return ir.assign(target, value)


class _State:
    """What writing one reverse-mode function keeps track of, and its adjoints: ``pushed``
    names are saved before being overwritten; an adjoint's first contribution assigns it."""

    def __init__(
        self,
        fn: ir.Function,
        wrt: list[str],
        scalars: frozenset[str],
        namer: Namer,
        pushed: set[str],
        facts: Facts,
        classes: Classes,
        known: dict[str, tuple[tuple[int, ...], str]] | None = None,
        complex_values: ComplexValues | None = None,
    ) -> None:
        self.fn = fn
        self.wrt = wrt
        self.facts = facts
        self.classes = classes
        self.scalars = scalar_names(classes)
        self.known = known or {}
        # which values may be complex; `projecting`: the statement whose adjoint is being
        # written touches one, so its shares to real values are projected onto the reals
        self.complex_values = complex_values or ComplexValues(fn, self.known)
        self.projecting = False
        self.namer = namer
        self.pushed = pushed
        self.stack = namer.claim("stack") if pushed or self._has_while() else "stack"
        # the lists this code restores saved values from (see Generated.restoring)
        self.restoring = ir.restoring_lists(fn) + (
            (self.stack,) if pushed or self._has_while() else ()
        )
        self.counters: dict[int, str] = {}
        self.while_needed: dict[int, bool] = {}
        # names bound for the first time at top level: nothing before reads their old value
        self.first_binding: set[int] = set()
        seen = set(fn.params)
        for stmt in fn.body:
            if isinstance(stmt, ir.Assign) and not seen.intersection(stmt.targets):
                self.first_binding.add(id(stmt))
            for s in _walk([stmt]):
                if isinstance(s, ir.Assign):
                    seen.update(s.targets)
                elif isinstance(s, ir.For):
                    seen.add(s.target)
        # adjoints of names outside blocks: the name holding the adjoint so far
        self.adjoint: dict[str, str] = {}
        self.aliasable: set[str] = set()
        # checkpointed loops (see adjoint_checkpointed): the list of their snapshots, whether
        # each one needs its adjoint, its (segment length, segment start, segment) names,
        # every name some snapshot restores, and whether the primal runs without saving
        checkpointed = any(isinstance(s, ir.For) and s.checkpoint for s in fn.statements())
        self.snapshots = namer.claim("snapshots") if checkpointed else "snapshots"
        self.restoring += (self.snapshots,) if checkpointed else ()
        self.checkpoint_needed: dict[int, bool] = {}
        self.checkpoint_names: dict[int, tuple[str, str, str]] = {}
        self.restored: set[str] = set()
        self.plain = False
        # iteration-local values of plain for loops (see _iteration_local): their adjoint's
        # first contribution in each iteration assigns it; `started` holds those written so far
        self.local = _iteration_local(fn, facts)
        self.local_names = set().union(*self.local.values()) if self.local else set()
        self.started: set[str] = set()
        # adjoints reset to zero whose zeros are not written yet: the next contribution is
        # assigned instead of added to zeros (`h_bar = zeros; h_bar = h_bar + e` is
        # `h_bar = e`); written (flush) before anything else reads the adjoint
        self.pending: set[str] = set()
        self.deferred: set[str] = set()  # (those pending when the sweep starts)

    def _number(self, var: str) -> bool:
        """Is ``var`` provably a number or a 0-d array (a scalar's class, or known 0-d)?"""
        known = self.known.get(var)
        return var in self.scalars or (known is not None and known[0] == ())

    def _array(self, var: str) -> bool:
        """Is ``var`` provably an array of at least one dimension?"""
        known = self.known.get(var)
        return known is not None and known[0] != ()

    def _has_while(self) -> bool:
        return any(isinstance(s, ir.While) for s in self.fn.statements())

    def bar(self, var: str) -> str:
        return self.namer.adjoint(var)

    def counter(self, stmt: ir.While) -> str:
        if id(stmt) not in self.counters:
            self.counters[id(stmt)] = self.namer.fresh("loop")
        return self.counters[id(stmt)]

    def saves(self, stmt: ir.Assign, target: str) -> bool:
        return target in self.pushed and id(stmt) not in self.first_binding

    def restore(self, w: CodeWriter, t: str, saved: list[str], reset: bool) -> None:
        """After an assignment's adjoint: put back the values it overwrote, and start the
        adjoint of ``t``'s previous value from zero."""
        for x in reversed(saved):  # pushed in order, so popped in reverse
            w.stmt(_assign(x, self.pop()))
        if reset and t not in self.local_names:
            if t in self.facts.lists or t in self.facts.mutated:
                # (a list's adjoint is added to item by item; an array written into has its
                # adjoint written into: they need the zeros themselves)
                w.stmt(_assign(self.bar(t), zero_like(t, self.classes)))
            else:
                self.pending.add(t)

    def flush(self, w: CodeWriter, names: set[str] | None = None) -> None:
        """Write the zeros of pending adjoint resets (of ``names``, or all), in name order."""
        for var in sorted(self.pending if names is None else self.pending & names):
            self.pending.discard(var)
            w.stmt(_assign(self.bar(var), zero_like(var, self.classes)))

    def pop(self) -> ast.expr:
        return call(f"{self.stack}.pop")

    def contributions(
        self,
        sr: StatementRule,
        inputs: list[tuple[str, str]],
        g: str | ast.expr,
        w: CodeWriter,
        fresh: set[str] | None = None,
    ) -> None:
        """Add each input's share of ``g`` to its adjoint (names in ``fresh`` are assigned)."""
        fresh = fresh if fresh is not None else set()
        for param, var in inputs:
            pre, expr = sr.expand("vjp", param, g)
            for s in pre:
                w.stmt(s)
            if sr.cotangent_needs_unbroadcast(param, self.classes):
                if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
                    # sum, then negate (the same numbers; the negation on the smaller array)
                    expr.operand = sr.unbroadcast(expr.operand, var, g)
                else:
                    expr = sr.unbroadcast(expr, var, g)
            if var in fresh:
                fresh.discard(var)
                self.pending.discard(var)
                if self.projecting and var not in self.facts.lists:
                    expr = self.project(var, expr)
                if var in self.facts.mutated:
                    expr = owned(expr, var in self.facts.lists)
                w.stmt(_assign(self.bar(var), expr))
                continue
            self.accumulate(var, expr, w)

    def project(self, var: str, expr: ast.expr) -> ast.expr:
        """A share of a statement touching complex values, as a cotangent of ``var``: its real
        part for a real ``var`` (the transpose of embedding the reals in the complex numbers),
        decided when the code runs (``rt.real_like``) where ``var`` may be either."""
        kind = self.complex_values.kind(var)
        if kind == "real":
            return call("np.real", expr)
        if kind == "unknown":
            return call("rt.real_like", expr, call("rt.is_complex", name(var)))
        return expr

    def accumulate(self, var: str, expr: ast.expr, w: CodeWriter) -> None:
        """Add a contribution to ``var``'s adjoint (the first one assigns it, outside blocks)."""
        if self.projecting and var not in self.facts.lists:
            expr = self.project(var, expr)
        if var in self.facts.lists:
            bar = self.bar(var)
            if var not in self.facts.managed and var not in self.adjoint:
                self.adjoint[var] = bar
                w.stmt(_assign(bar, call("list", expr)))
                return
            current = name(self.adjoint.get(var, bar))
            item = _list_item_share(expr, var)
            if item is not None:  # the share of one item xs[i]: add to that item only
                index, g = item
                w.stmt(_assign(bar, call("rt.accumulate_item", current, index, g)))
            else:
                w.stmt(_assign(bar, call("rt.accumulate", current, expr)))
            self.adjoint[var] = bar
            return
        if var in self.facts.managed:
            if var in self.pending:  # reset to zero: this contribution is all there is so far
                self.pending.discard(var)
                w.stmt(_assign(self.bar(var), expr))
                return
            if var in self.local_names and var not in self.started:
                # the first contribution of this iteration: nothing else was added since the
                # value was made, so it is assigned (no reset to zeros is needed either)
                self.started.add(var)
                w.stmt(_assign(self.bar(var), expr))
                return
            w.stmt(_assign(self.bar(var), add(name(self.bar(var)), expr)))
            return
        if var in self.adjoint:
            expr = add(name(self.adjoint[var]), expr)
        elif isinstance(expr, ast.Name) and expr.id in self.aliasable:
            self.adjoint[var] = expr.id  # no copy: the adjoint *is* that value
            self.aliasable.add(expr.id)
            return
        self.adjoint[var] = self.bar(var)
        self.aliasable.add(self.adjoint[var])
        w.stmt(_assign(self.adjoint[var], expr))


def _list_item_share(expr: ast.expr, var: str) -> tuple[ast.expr, ast.expr] | None:
    """``(index, g)`` if ``expr`` is ``rt.getitem_vjp(g, var, index)``: the share of the item
    ``var[index]`` of a list (else None).

    >>> _list_item_share(ast.parse("rt.getitem_vjp(g, xs, -1)").body[0].value, "xs") is None
    False
    """
    if not (
        isinstance(expr, ast.Call)
        and ast.unparse(expr.func) == "rt.getitem_vjp"
        and len(expr.args) == 3
        and not expr.keywords
        and isinstance(expr.args[1], ast.Name)
        and expr.args[1].id == var
    ):
        return None
    return expr.args[2], expr.args[0]
