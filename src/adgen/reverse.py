"""Reverse mode: emit a forward sweep followed by an adjoint sweep.

For ``f(x, y)`` differentiated w.r.t. ``x`` the generated
``f_vjp(x, y, out_bar)`` returns ``(f(x, y), (x_bar,))`` where ``x_bar`` is the
vector-Jacobian product ``out_bar . J_x f``. Adjoints exist only for values
that depend on a differentiated input *and* reach the result; the first
contribution to an adjoint assigns it, later ones add to it (never in place,
so no array the caller passed is ever written). Each original line's adjoint
statements stand under a comment quoting it, in reverse order. The forward
sweep deletes each value the adjoint sweep does not read after its last use
(scalars excepted), so only what the adjoint needs is kept.

Control flow is replayed backwards: a branch is re-taken on its (restored)
condition, a ``for`` loop runs over ``reversed(...)`` of its range, a ``while``
loop runs as many times as the forward sweep counted. A name rebound inside a
block whose old value the adjoint sweep reads is pushed on a stack (a Python
list of references, no copies) before it is overwritten, and popped back when
the adjoint sweep passes that assignment.

>>> import numpy as np
>>> from adgen.parse import parse_function
>>> from adgen.lower import lower
>>> def f(x1, x2):
...     return np.log(x1) + x1 * x2 - np.sin(x2)
>>> print(reverse(lower(parse_function(f)), ["x1", "x2"]).source)  # doctest: +ELLIPSIS
# adgen: reverse mode (vector-Jacobian product) of f (<doctest ...>:1) w.r.t. x1, x2
def f_vjp(x1, x2, out_bar):
    # line 2: return np.log(x1) + x1 * x2 - np.sin(x2)
    out_1 = np.log(x1)
    out_1_like = rt.Like(out_1)
    out_4 = np.sin(x2)
    out_4_like = rt.Like(out_4)
    out = out_1 + x1 * x2 - out_4
    del out_1, out_4
    # adjoint of line 2: return np.log(x1) + x1 * x2 - np.sin(x2)
    out_4_bar = -rt.unbroadcast(out_bar, out_4_like)
    x2_bar = out_4_bar * np.cos(x2)
    out_1_bar = rt.unbroadcast(out_bar, out_1_like)
    x1_bar = rt.unbroadcast(out_bar * x2, x1)
    x2_bar = x2_bar + rt.unbroadcast(out_bar * x1, x2)
    x1_bar = x1_bar + out_1_bar / x1
    return (out, (x1_bar, x2_bar))
<BLANKLINE>

Values whose adjoint needs only their shape are kept as ``rt.Like`` (shape and dtype), and
``del`` lines free each array after its last use (:mod:`adgen.codeopt`).
"""

from __future__ import annotations

import ast
import copy
import os

from . import ir
from .analysis import Facts
from .calls import LazyDerivative
from .codeopt.batch_saves import batch_saves
from .codeopt.drop_copies import drop_copies
from .codeopt.fuse_temporaries import fuse_temporaries
from .codeopt.keep_shapes_only import keep_shapes_and_free
from .codeopt.sum_before_linear import sum_before_linear
from .complexvalues import refuse_complex
from .emit import CodeWriter, Transformer, open_block, open_while
from .errors import UnsupportedSyntaxError
from .expand import (
    StatementRule,
    add,
    call,
    line_label,
    loc_of,
    name,
    owned,
    source_text,
    subscript_store,
    zero_like,
)
from .generated import Generated
from .names import Namer
from .shapes import (
    Classes,
    Signature,
    broadcast_classes,
    scalar_names,
    specialise,
    specialised_for,
)


def _assign(target: str, value: ast.expr) -> ast.stmt:
    return ir.assign(target, value)


def _iteration_local(fn: ir.Function, facts: Facts) -> dict[int, set[str]]:
    """For each plain ``for`` loop (by id), the values local to one iteration: bound once,
    directly in the loop's body, and read only by later statements directly in that body.
    Each iteration's adjoint sweep then meets every contribution to such a value's adjoint
    unconditionally, after none from another iteration."""
    counts = ir.binding_counts(fn)
    where: dict[int, tuple[int, int]] = {}  # statement -> (its loop, its place in the body)
    loops = [
        s
        for s in fn.statements()
        if isinstance(s, ir.For)
        and not s.checkpoint
        and not any(isinstance(c, ir.For) and c.checkpoint for c in _walk(s.body))
    ]
    inside_checkpoint = {
        id(c)
        for s in fn.statements()
        if isinstance(s, ir.For) and s.checkpoint
        for c in _walk(s.body)
    }
    candidates: dict[str, tuple[int, int]] = {}
    for loop in loops:
        if id(loop) in inside_checkpoint:
            continue
        for k, s in enumerate(loop.body):
            where[id(s)] = (id(loop), k)
            if isinstance(s, ir.Assign) and len(s.targets) == 1:
                t = s.targets[0]
                if (
                    counts.get(t) == 1
                    and t in facts.managed
                    and t not in facts.lists
                    and t not in facts.mutated
                ):
                    candidates[t] = (id(loop), k)
    for kind, v, s in ir.events(fn.body):
        if kind != "read" or v not in candidates:
            continue
        loop_id, k = candidates[v]
        at = where.get(id(s))
        if not isinstance(s, ir.Assign) or at is None or at[0] != loop_id or at[1] <= k:
            del candidates[v]
    local: dict[int, set[str]] = {}
    for v, (loop_id, _) in candidates.items():
        local.setdefault(loop_id, set()).add(v)
    return local


class _Reverse:
    """Writes one reverse-mode function; ``pushed`` names are saved before being overwritten."""

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
    ) -> None:
        self.fn = fn
        self.wrt = wrt
        self.facts = facts
        self.classes = classes
        self.scalars = scalar_names(classes)
        self.known = known or {}
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

    # -- adjoint sweep -------------------------------------------------------------------------
    def adjoint_block(self, block: list[ir.Stmt], w: CodeWriter) -> None:
        fn = self.fn
        for stmt in reversed(block):
            if isinstance(stmt, ir.Assign):
                self.adjoint_assign(stmt, w)
            elif isinstance(stmt, ir.If):
                body, orelse = CodeWriter(w.depth + 1, w.text), CodeWriter(w.depth + 1, w.text)
                self.adjoint_block(stmt.body, body)
                self.adjoint_block(stmt.orelse, orelse)
                if body.lines or orelse.lines:
                    w.source_comment(
                        stmt.line,
                        source_text(fn, stmt.line),
                        "adjoint of line",
                        line_label(fn, stmt.line),
                    )
                    open_block(w, stmt)
                    w.extend(body) if body.lines else w.line("pass")
                    w.close()
                    if orelse.lines:
                        w.open("else:")
                        w.extend(orelse)
                        w.close()
            elif isinstance(stmt, ir.For) and stmt.checkpoint:
                self.adjoint_checkpointed(stmt, w)
            elif isinstance(stmt, ir.For):
                body = CodeWriter(w.depth + 1, w.text)
                self.started -= self.local.get(id(stmt), set())
                self.adjoint_block(stmt.body, body)
                if body.lines:
                    w.source_comment(
                        stmt.line,
                        source_text(fn, stmt.line),
                        "adjoint of line",
                        line_label(fn, stmt.line),
                    )
                    it = ast.unparse(ir.atom_to_ast(stmt.iter))
                    w.open(f"for {stmt.target} in reversed({it}):")
                    w.reads.update(ir.atom_vars(stmt.iter))
                    w.extend(body)
                    w.close()
                if stmt.target in self.pushed:
                    w.stmt(_assign(stmt.target, self.pop()))
            elif isinstance(stmt, ir.While):
                body = CodeWriter(w.depth + 1, w.text)
                self.adjoint_block(stmt.body, body)
                self.while_needed[id(stmt)] = bool(body.lines)
                if body.lines:
                    w.source_comment(
                        stmt.line,
                        source_text(fn, stmt.line),
                        "adjoint of line",
                        line_label(fn, stmt.line),
                    )
                    count = self.counter(stmt)
                    w.stmt(_assign(count, self.pop()))
                    w.open(f"for _ in range({count}):")
                    w.extend(body)
                    w.close()

    def restore(self, w: CodeWriter, t: str, saved: list[str], reset: bool) -> None:
        """After an assignment's adjoint: put back the values it overwrote, and start the
        adjoint of ``t``'s previous value from zero."""
        for x in reversed(saved):  # pushed in order, so popped in reverse
            w.stmt(_assign(x, self.pop()))
        if reset and t not in self.local_names:
            w.stmt(_assign(self.bar(t), zero_like(t, self.classes)))

    def pop(self) -> ast.expr:
        return call(f"{self.stack}.pop")

    def adjoint_assign(self, stmt: ir.Assign, w: CodeWriter) -> None:
        try:
            self._adjoint_assign(stmt, w)
        finally:
            w.drop_comment()

    def adjoint_setitem(self, stmt: ir.Assign, w: CodeWriter) -> None:
        """``y[index] = v`` backwards: v's cotangent is read from the written slots, which then
        hold no derivative of the old y; the overwritten values are put back."""
        fn, facts = self.fn, self.facts
        y = stmt.targets[0]
        _, index, v = stmt.args
        w.defer_comment(
            stmt.line, source_text(fn, stmt.line), "adjoint of line", line_label(fn, stmt.line)
        )
        index_ast = ir.atom_to_ast(index)
        if y in facts.useful:
            share: ast.expr | None = None
            if isinstance(v, ir.Var) and v.name in facts.useful:
                written = call("rt.written", name(self.bar(y)), index_ast)
                share = call("rt.unbroadcast", written, name(v.name))
                if v.name == y:
                    # y[::-1] = y: the old y's adjoint is what stays of y's once the written
                    # slots are cleared, plus their share (taken before they are cleared)
                    held = self.namer.fresh(f"{y}_written_bar")
                    w.stmt(_assign(held, share))
                    share = name(held)
                else:
                    self.accumulate(v.name, share, w)
                    share = None
            store = subscript_store(self.bar(y), ir.atom_to_ast(index))
            w.stmt(ast.Assign(targets=[store], value=ast.Constant(0.0), lineno=0))
            if share is not None:
                assert isinstance(v, ir.Var)
                self.accumulate(v.name, share, w)
        if self.saves(stmt, y):
            restore = subscript_store(y, ir.atom_to_ast(index))
            w.stmt(ast.Assign(targets=[restore], value=self.pop(), lineno=0))

    def adjoint_user_call(self, stmt: ir.Assign, w: CodeWriter) -> None:
        """A call kept as a call (recursion), backwards: the callee's own reverse-mode function
        (it recomputes the callee's forward sweep) gives each argument its share."""
        fn, facts = self.fn, self.facts
        t = stmt.targets[0]
        saved = [x for x in stmt.targets if self.saves(stmt, x)]
        reset = t in facts.managed and t in facts.multi and id(stmt) not in self.first_binding
        w.defer_comment(
            stmt.line, source_text(fn, stmt.line), "adjoint of line", line_label(fn, stmt.line)
        )
        g = self.bar(t) if t in facts.managed else self.adjoint.get(t)
        params = [p.name for p in stmt.prim.params]
        active = [
            (p, a.name)
            for p, a in zip(params, stmt.args)
            if isinstance(a, ir.Var) and a.name in facts.useful
        ]
        if g is not None and t in facts.useful and active:
            wrt = tuple(p for p, _ in active)
            vjp_name = self.namer.fresh(f"{stmt.prim.name}_vjp")
            self.fn.free[vjp_name] = LazyDerivative(stmt.prim.user_fn, "reverse", wrt)
            shares = self.namer.fresh(f"{t}_shares")
            result = call(vjp_name, *[ir.atom_to_ast(a) for a in stmt.args], name(g))
            part = ast.Subscript(value=result, slice=ast.Constant(1), ctx=ast.Load())
            w.stmt(_assign(shares, part))
            for k, (_, var) in enumerate(active):
                share = ast.Subscript(value=name(shares), slice=ast.Constant(k), ctx=ast.Load())
                self.accumulate(var, share, w)
        self.restore(w, t, saved, reset)

    def adjoint_several(self, stmt: ir.Assign, w: CodeWriter, useful: bool) -> None:
        """A function with several results, backwards: the templates get the tuple of the
        results' cotangents (zeros for results no derivative reaches)."""
        fn, facts = self.fn, self.facts
        w.defer_comment(
            stmt.line, source_text(fn, stmt.line), "adjoint of line", line_label(fn, stmt.line)
        )
        parts: list[ast.expr] = []
        reached = False
        for x in stmt.targets:
            g = self.bar(x) if x in facts.managed else self.adjoint.get(x)
            if g is None or x not in facts.useful:
                parts.append(zero_like(x, self.classes))
            else:
                parts.append(name(g))
                reached = True
        saved = [x for x in stmt.targets if self.saves(stmt, x)]
        resets = [
            x
            for x in stmt.targets
            if x in facts.managed and x in facts.multi and id(stmt) not in self.first_binding
        ]
        sr = StatementRule(stmt, self.namer, loc_of(fn, stmt.line), self.known, self.scalars)
        inputs = sr.active_params(facts.useful) if useful and reached else []
        if useful and reached:
            sr.refuse_nondifferentiable_inputs(facts.varied)
        rebinds = [v for _, v in inputs if v in stmt.targets]
        if inputs and rebinds:
            # `xs, last = rt.split_last(xs)`: the shares go to the *old* xs. Hold the new
            # values' cotangents (and the results, if a template reads them), put the old
            # values back, then the old value's adjoint starts with its share.
            held: list[ast.expr] = []
            for x, part in zip(stmt.targets, parts, strict=True):
                h = self.namer.fresh(self.bar(x))
                w.stmt(_assign(h, part))
                held.append(name(h))
            if any("ans" in stmt.prim.vjp[p].free_names for p, _ in inputs):
                ans = self.namer.fresh(f"{stmt.targets[0]}_results")
                w.stmt(_assign(ans, sr.bindings["ans"]))
                sr.bindings["ans"] = name(ans)
            for x in reversed(saved):
                w.stmt(_assign(x, self.pop()))
            fresh = {v for v in rebinds if v in resets}
            for x in resets:
                if x not in fresh:
                    w.stmt(_assign(self.bar(x), zero_like(x, self.classes)))
            self.contributions(sr, inputs, ast.Tuple(elts=held, ctx=ast.Load()), w, fresh)
            return
        if inputs:  # templates index the tuple: (a_bar, b_bar)[1] is folded to b_bar
            self.contributions(sr, inputs, ast.Tuple(elts=parts, ctx=ast.Load()), w)
        for x in reversed(saved):
            w.stmt(_assign(x, self.pop()))
        for x in resets:
            w.stmt(_assign(self.bar(x), zero_like(x, self.classes)))

    def adjoint_append(self, stmt: ir.Assign, w: CodeWriter) -> None:
        """``xs.append(v)`` backwards: the last element's cotangent goes to ``v``; the list
        loses its last element again (if an adjoint reads it)."""
        fn, facts = self.fn, self.facts
        xs = stmt.targets[0]
        v = stmt.args[1]
        w.defer_comment(
            stmt.line, source_text(fn, stmt.line), "adjoint of line", line_label(fn, stmt.line)
        )
        if xs in facts.useful:
            last = self.namer.fresh(f"{xs}_last")
            split = call("rt.split_last", name(self.bar(xs)))
            targets = ast.Tuple(
                elts=[
                    ast.Name(id=self.bar(xs), ctx=ast.Store()),
                    ast.Name(id=last, ctx=ast.Store()),
                ],
                ctx=ast.Store(),
            )
            w.stmt(ast.Assign(targets=[targets], value=split, lineno=0))
            if isinstance(v, ir.Var) and v.name in facts.useful:
                self.accumulate(v.name, name(last), w)
        if xs in self.pushed:
            w.stmt(ast.Expr(value=call(f"{xs}.pop")))

    def adjoint_pop(self, stmt: ir.Assign, w: CodeWriter) -> None:
        """``v = xs.pop()`` backwards: v's cotangent goes back onto the list's cotangent (where
        the adjoint of the ``xs.append`` that put the item there takes it); the item goes
        back onto the list (if an adjoint reads it) and v gets its old value again."""
        fn, facts = self.fn, self.facts
        xs, v = stmt.targets
        w.defer_comment(
            stmt.line, source_text(fn, stmt.line), "adjoint of line", line_label(fn, stmt.line)
        )
        if xs in facts.useful:
            g = self.bar(v) if v in facts.managed else self.adjoint.get(v)
            item = name(g) if g is not None and v in facts.useful else zero_like(v, self.classes)
            w.stmt(ast.Expr(value=call(f"{self.bar(xs)}.append", item)))
        if xs in self.pushed:
            w.stmt(ast.Expr(value=call(f"{xs}.append", name(v))))
        reset = v in facts.managed and v in facts.multi and id(stmt) not in self.first_binding
        self.restore(w, v, [v] if self.saves(stmt, v) else [], reset)

    def _adjoint_assign(self, stmt: ir.Assign, w: CodeWriter) -> None:
        fn, facts = self.fn, self.facts
        if not stmt.targets:  # assert: nothing to undo
            return
        if stmt.prim.name == "setitem":
            self.adjoint_setitem(stmt, w)
            return
        if stmt.prim.name == "append":
            self.adjoint_append(stmt, w)
            return
        if stmt.prim.name == "pop":
            self.adjoint_pop(stmt, w)
            return
        if stmt.prim.user_fn is not None:
            self.adjoint_user_call(stmt, w)
            return
        t = stmt.targets[0]
        useful = (
            stmt.prim.differentiable
            and any(x in facts.useful for x in stmt.targets)
            and not facts.test_names.intersection(stmt.targets)
        )
        if stmt.prim.outputs is not None:
            self.adjoint_several(stmt, w, useful)
            return
        if useful and len(stmt.targets) != 1:
            raise UnsupportedSyntaxError(
                f"{stmt.prim.name} with several results has no reverse rule yet",
                loc_of(fn, stmt.line),
            )
        saved = [x for x in stmt.targets if self.saves(stmt, x)]
        managed = t in facts.managed
        reset = managed and t in facts.multi and id(stmt) not in self.first_binding
        if not useful and not saved and not reset:
            return
        comment = (
            stmt.line,
            source_text(fn, stmt.line),
            "adjoint of line",
            line_label(fn, stmt.line),
        )
        if not useful:
            w.defer_comment(*comment)
            self.restore(w, t, saved, reset)
            return
        if managed:
            g = self.bar(t)
        elif t in self.adjoint:
            g = self.adjoint[t]
        else:
            return  # no derivative reaches this value
        sr = StatementRule(stmt, self.namer, loc_of(fn, stmt.line), self.known, self.scalars)
        sr.refuse_nondifferentiable_inputs(facts.varied)
        inputs = sr.active_params(facts.useful)
        seq_atom = sr.atoms.get(stmt.prim.sequence or "")
        # a sequence rule's other differentiable parameters (np.select's default)
        others = [(p, v) for p, v in inputs if p != stmt.prim.sequence]
        if stmt.prim.sequence and (saved or reset) and t in _args_of(stmt):
            # `s = np.stack((s, 2 * s))` in a loop: the shares go to the *old* s, so the new
            # value's adjoint is set aside and the old value (and adjoint) come first
            w.defer_comment(*comment)
            g_saved = self.namer.fresh(self.bar(t))
            w.stmt(_assign(g_saved, name(g)))
            g = g_saved
            templates = [stmt.prim.vjp[stmt.prim.sequence]] + [stmt.prim.vjp[p] for p, _ in others]
            if any("ans" in tp.free_names for tp in templates):
                ans = self.namer.fresh(t)
                w.stmt(_assign(ans, name(t)))
                sr.bindings["ans"] = name(ans)
            self.restore(w, t, saved, reset)
            saved, reset = [], False
        if stmt.prim.sequence and isinstance(seq_atom, ir.Var):
            # a list the function built (its cotangent is a list), or an array whose items
            # (rows) are the elements: np.array(y), np.stack(y)
            w.defer_comment(*comment)
            if seq_atom.name in facts.useful:
                template = stmt.prim.vjp[stmt.prim.sequence]
                k = self.namer.fresh("k")
                sr.bindings[template.extra[0]] = name(k)
                pre, expr = sr.expand("vjp", stmt.prim.sequence, g)
                if pre:
                    raise UnsupportedSyntaxError(
                        f"reverse mode of {stmt.prim.name} of a list", loc_of(fn, stmt.line)
                    )
                count = call("range", call("len", name(seq_atom.name)))
                parts: ast.expr = ast.ListComp(
                    elt=expr,
                    generators=[
                        ast.comprehension(
                            target=ast.Name(id=k, ctx=ast.Store()), iter=count, ifs=[], is_async=0
                        )
                    ],
                )
                if seq_atom.name not in facts.lists:
                    parts = call("rt.items_vjp", parts, name(seq_atom.name))
                self.accumulate(seq_atom.name, parts, w)
            self.contributions(sr, others, g, w)
            self.restore(w, t, saved, reset)
            return
        if stmt.prim.sequence:
            w.defer_comment(*comment)
            template = stmt.prim.vjp[stmt.prim.sequence]
            for position, var in sr.sequence_elements(facts.useful):
                sr.bindings[template.extra[0]] = ast.Constant(position)
                pre, expr = sr.expand("vjp", stmt.prim.sequence, g)
                for s in pre:
                    w.stmt(s)
                self.accumulate(var, expr, w)  # the part has the element's own shape
            self.contributions(sr, others, g, w)
            self.restore(w, t, saved, reset)
            return
        self_ref = any(v == t for _, v in inputs) or t in {
            v for a in ir.stmt_args(stmt) for v in ir.atom_vars(a)
        }
        if not inputs and not saved and not reset:
            return
        w.defer_comment(*comment)
        if saved and self_ref:
            # the old value is an argument: restore it first, keep the new one aside
            g_saved = self.namer.fresh(self.bar(t))
            w.stmt(_assign(g_saved, name(g)))
            g = g_saved
            if any("ans" in sr.prim.vjp[p].free_names for p, _ in inputs):
                ans = self.namer.fresh(t)
                w.stmt(_assign(ans, name(t)))
                sr.bindings["ans"] = name(ans)
            w.stmt(_assign(t, self.pop()))
            # the old value's adjoint starts with this statement's contribution to it
            fresh = {t} if reset else set()
            self.contributions(sr, inputs, g, w, fresh)
            if fresh:
                w.stmt(_assign(self.bar(t), zero_like(t, self.classes)))
            return
        fresh = set()
        if reset and any(v == t for _, v in inputs) and not saved:
            # `y = f(y)`: the old y's adjoint is this statement's contribution, written last
            inputs = [iv for iv in inputs if iv[1] != t] + [iv for iv in inputs if iv[1] == t]
            fresh = {t}
            reset = False
        self.contributions(sr, inputs, g, w, fresh)
        self.restore(w, t, saved, reset)

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
                if var in self.facts.mutated:
                    expr = owned(expr, var in self.facts.lists)
                w.stmt(_assign(self.bar(var), expr))
                continue
            self.accumulate(var, expr, w)

    def accumulate(self, var: str, expr: ast.expr, w: CodeWriter) -> None:
        """Add a contribution to ``var``'s adjoint (the first one assigns it, outside blocks)."""
        if var in self.facts.lists:
            bar = self.bar(var)
            if var not in self.facts.managed and var not in self.adjoint:
                self.adjoint[var] = bar
                w.stmt(_assign(bar, call("list", expr)))
                return
            w.stmt(_assign(bar, call("rt.accumulate", name(self.adjoint.get(var, bar)), expr)))
            self.adjoint[var] = bar
            return
        if var in self.facts.managed:
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

    # -- forward sweep -------------------------------------------------------------------------
    def forward_block(
        self, block: list[ir.Stmt], w: CodeWriter, dead: dict[int, list[str]]
    ) -> None:
        fn = self.fn
        for i, stmt in enumerate(block):
            w.source_comment(stmt.line, source_text(fn, stmt.line), label=line_label(fn, stmt.line))
            if isinstance(stmt, ir.Assign):
                for x in stmt.targets:
                    if self.saves(stmt, x) and stmt.prim.name == "setitem":
                        # an in-place write: save (a copy of) the values it overwrites
                        region = ast.Subscript(
                            value=name(x), slice=ir.atom_to_ast(stmt.args[1]), ctx=ast.Load()
                        )
                        saved = call(f"{self.stack}.append", call("np.copy", region))
                        w.stmt(ast.Expr(value=saved))
                    elif self.saves(stmt, x) and not (
                        stmt.prim.name in ("append", "pop") and x == stmt.targets[0]
                    ):  # a list changed in place is not saved (its adjoint undoes the change)
                        w.stmt(ast.Expr(value=call(f"{self.stack}.append", name(x))))
                w.stmt(ir.stmt_to_ast(stmt))
            elif isinstance(stmt, ir.If):
                open_block(w, stmt)
                self.forward_block(stmt.body, w, {}) if stmt.body else w.line("pass")
                w.close()
                if stmt.orelse:
                    w.open("else:")
                    self.forward_block(stmt.orelse, w, {})
                    w.close()
            elif (
                isinstance(stmt, ir.For) and self.checkpoint_needed.get(id(stmt)) and not self.plain
            ):
                self.forward_checkpointed(stmt, w)
            elif isinstance(stmt, ir.For):
                if stmt.target in self.pushed:
                    w.stmt(ast.Expr(value=call(f"{self.stack}.append", name(stmt.target))))
                open_block(w, stmt)
                self.forward_block(stmt.body, w, {}) if stmt.body else w.line("pass")
                w.close()
            elif isinstance(stmt, ir.While):
                needed = self.while_needed.get(id(stmt), False)
                count = self.counter(stmt) if needed else ""
                if needed:
                    w.stmt(_assign(count, ast.Constant(0)))
                open_while(w, stmt, lambda block: self.forward_block(block, w, {}))
                self.forward_block(stmt.body, w, {}) if stmt.body else w.line("pass")
                if needed:
                    w.stmt(
                        _assign(
                            count, ast.BinOp(left=name(count), op=ast.Add(), right=ast.Constant(1))
                        )
                    )
                w.close()
                if needed:
                    w.stmt(ast.Expr(value=call(f"{self.stack}.append", name(count))))
            if i in dead:
                names: list[ast.expr] = [ast.Name(id=v, ctx=ast.Del()) for v in sorted(dead[i])]
                w.stmt(ast.Delete(targets=names))

    # -- checkpointed loops ------------------------------------------------------------------
    def adjoint_checkpointed(self, stmt: ir.For, w: CodeWriter) -> None:
        """The adjoint of ``for i in adgen.checkpoint(range(n)):``, segment by segment.

        The forward sweep (:meth:`forward_checkpointed`) ran the loop without saving anything
        but a snapshot of the values the loop changes at the start of each segment of
        ``every`` iterations. Going back, each segment, last first: restore its snapshot, run
        its iterations again saving values as usual (the ordinary forward sweep of the body),
        then run their ordinary adjoints in reverse. Every segment leaves the values as its
        snapshot had them, so each iteration's adjoint sees exactly what it would have seen
        without checkpointing and the gradient is the same.
        """
        fn = self.fn
        segment_depth = w.depth + 2
        body = CodeWriter(segment_depth, w.text)
        self.adjoint_block(stmt.body, body)
        needed = self.checkpoint_needed[id(stmt)] = bool(body.lines)
        if needed:
            every, start, segment = self.segment_names(stmt)
            snapshot = self.snapshot_names(stmt)
            self.restored.update(snapshot)
            it = ast.unparse(ir.atom_to_ast(stmt.iter))
            w.source_comment(
                stmt.line, source_text(fn, stmt.line), "adjoint of line", line_label(fn, stmt.line)
            )
            w.comment("checkpointed loop, one segment at a time, last first: restore its snapshot,")
            w.comment("run its iterations again saving values, then their adjoints in reverse")
            w.stmt(_assign(every, self.segment_length(stmt)))
            w.open(f"for {start} in reversed(range(0, len({it}), {every})):")
            if snapshot:
                # one entry per name, popped in reverse (generated code stays in the subset
                # adgen differentiates again: no tuple unpacking of a popped value)
                for v in reversed(snapshot):
                    w.stmt(_assign(v, call(f"{self.snapshots}.pop")))
            bounds = ast.BinOp(left=name(start), op=ast.Add(), right=name(every))
            part = ast.Slice(lower=name(start), upper=bounds, step=None)
            w.stmt(
                _assign(
                    segment,
                    ast.Subscript(value=ir.atom_to_ast(stmt.iter), slice=part, ctx=ast.Load()),
                )
            )
            # the recomputation reads the snapshot and values the loop does not change: only
            # the latter must be kept (or saved) for it
            reads = set(w.reads)
            w.open(f"for {stmt.target} in {segment}:")
            self.forward_block(stmt.body, w, {}) if stmt.body else w.line("pass")
            w.close()
            w.reads = reads | _reads(stmt.body) - _bound(stmt.body) - {stmt.target}
            w.reads.update(ir.atom_vars(stmt.iter))
            w.open(f"for {stmt.target} in reversed({segment}):")
            w.extend(body)
            w.close()
            w.close()
        if stmt.target in self.pushed:
            w.stmt(_assign(stmt.target, self.pop()))

    def forward_checkpointed(self, stmt: ir.For, w: CodeWriter) -> None:
        """A checkpointed loop in the forward sweep: the primal iterations, saving nothing but
        a snapshot (a copy where the loop writes into an array) at each segment's start."""
        every, start, segment = self.segment_names(stmt)
        snapshot = self.snapshot_names(stmt)
        carried = _carried(stmt)
        it = ast.unparse(ir.atom_to_ast(stmt.iter))
        w.comment("checkpointed loop: nothing saved per iteration, only a snapshot of the values")
        w.comment(f"it changes at the start of each segment of {every} iterations")
        w.stmt(_assign(every, self.segment_length(stmt)))
        if stmt.target in self.pushed:
            w.stmt(ast.Expr(value=call(f"{self.stack}.append", name(stmt.target))))
        w.open(f"for {start} in range(0, len({it}), {every}):")
        w.reads.update(ir.atom_vars(stmt.iter))
        if snapshot:
            parts: list[ast.expr] = []
            for v in snapshot:
                if v in carried and v in self.facts.lists:
                    parts.append(call("list", name(v)))
                elif v in carried and v in self.facts.mutated:
                    parts.append(call("np.copy", name(v)))
                else:
                    parts.append(name(v))
            for part in parts:
                w.stmt(ast.Expr(value=call(f"{self.snapshots}.append", part)))
        w.open(f"for {stmt.target} in {it}[{start}:{start} + {every}]:")
        pushed, while_needed, plain = self.pushed, self.while_needed, self.plain
        self.pushed, self.while_needed, self.plain = set(), {}, True
        try:
            self.forward_block(stmt.body, w, {}) if stmt.body else w.line("pass")
        finally:
            self.pushed, self.while_needed, self.plain = pushed, while_needed, plain
        w.close()
        w.close()

    def segment_names(self, stmt: ir.For) -> tuple[str, str, str]:
        if id(stmt) not in self.checkpoint_names:
            self.checkpoint_names[id(stmt)] = (
                self.namer.fresh("every"),
                self.namer.fresh("start"),
                self.namer.fresh("segment"),
            )
        return self.checkpoint_names[id(stmt)]

    def segment_length(self, stmt: ir.For) -> ast.expr:
        """``rt.checkpoint_every(len(loop), every)``: computed again in the adjoint sweep from
        the loop's own (restored) values, so a checkpointed loop may stand in another loop."""
        args: list[ast.expr] = [call("len", ir.atom_to_ast(stmt.iter))]
        if stmt.every is not None:
            args.append(ir.atom_to_ast(stmt.every))
        return call("rt.checkpoint_every", *args)

    def snapshot_names(self, stmt: ir.For) -> list[str]:
        """What a snapshot holds: the names the loop changes whose value at a segment's start
        matters, i.e. that an iteration reads before writing or that the adjoint sweep reads
        (and would otherwise have saved)."""
        bound = _bound(stmt.body)
        return sorted(((self.pushed & bound) | _carried(stmt)) - {stmt.target})


def _args_of(stmt: ir.Assign) -> set[str]:
    """The names a statement reads."""
    return {v for a in ir.stmt_args(stmt) for v in ir.atom_vars(a)}


def _bound(block: list[ir.Stmt]) -> set[str]:
    """Every name a block binds (assignments and loop variables, nested blocks included)."""
    names: set[str] = set()
    for s in _walk(block):
        if isinstance(s, ir.Assign):
            names.update(s.targets)
        elif isinstance(s, ir.For):
            names.add(s.target)
    return names


def _reads(block: list[ir.Stmt]) -> set[str]:
    """Every name a block reads (nested blocks included)."""
    names: set[str] = set()
    for s in _walk(block):
        if isinstance(s, ir.Assign):
            for a in ir.stmt_args(s):
                names.update(ir.atom_vars(a))
        elif isinstance(s, ir.If):
            names.update(ir.atom_vars(s.test))
        elif isinstance(s, ir.For):
            names.update(ir.atom_vars(s.iter))
            if s.every is not None:
                names.update(ir.atom_vars(s.every))
        elif isinstance(s, ir.While):
            names.update(ir.atom_vars(s.test))
    return names


def _carried(loop: ir.For) -> set[str]:
    """Names the loop body binds that an iteration may read before binding them: their
    values flow from one iteration to the next (an in-place write ``y[i] = v`` reads y)."""
    bound = _bound(loop.body)
    carried: set[str] = set()

    def read(names: set[str], defined: set[str]) -> None:
        carried.update((names & bound) - defined)

    def visit(block: list[ir.Stmt], defined: set[str]) -> set[str]:
        defined = set(defined)
        for s in block:
            if isinstance(s, ir.Assign):
                read({v for a in ir.stmt_args(s) for v in ir.atom_vars(a)}, defined)
                defined.update(s.targets)
            elif isinstance(s, ir.If):
                read(set(ir.atom_vars(s.test)), defined)
                defined = visit(s.body, defined) & visit(s.orelse, defined)
            elif isinstance(s, ir.For):  # the body may not run: what it binds is not defined
                read(set(ir.atom_vars(s.iter)), defined)
                if s.every is not None:
                    read(set(ir.atom_vars(s.every)), defined)
                visit(s.body, defined | {s.target})
            elif isinstance(s, ir.While):  # the test runs at least once, the body maybe not
                defined = visit(s.test_body, defined)
                read(set(ir.atom_vars(s.test)), defined)
                visit(s.body, defined)
        return defined

    visit(loop.body, {loop.target})
    return carried


class _Rename(Transformer):
    def __init__(self, names: dict[str, ast.expr]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.names.get(node.id, node)


def _walk(block: list[ir.Stmt]) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for stmt in block:
        out.append(stmt)
        if isinstance(stmt, ir.If):
            out += _walk(stmt.body) + _walk(stmt.orelse)
        elif isinstance(stmt, ir.For):
            out += _walk(stmt.body)
        elif isinstance(stmt, ir.While):
            out += _walk(stmt.test_body) + _walk(stmt.body)
    return out


def _names(stmt: ir.Stmt) -> set[str]:
    """Every name a (compound) statement reads or binds."""
    names: set[str] = set()
    for s in _walk([stmt]):
        if isinstance(s, ir.Assign):
            names.update(s.targets)
            for a in ir.stmt_args(s):
                names.update(ir.atom_vars(a))
        elif isinstance(s, ir.If):
            names.update(ir.atom_vars(s.test))
        elif isinstance(s, ir.For):
            names.add(s.target)
            names.update(ir.atom_vars(s.iter))
        elif isinstance(s, ir.While):
            names.update(ir.atom_vars(s.test))
        elif isinstance(s, ir.Return):
            names.update(ir.atom_vars(s.value))
    return names


def _sweep(
    fn: ir.Function,
    wrt: list[str],
    scalars: frozenset[str],
    namer: Namer,
    pushed: set[str],
    facts: Facts,
    classes: Classes,
    text: bool = True,
    aux: bool = False,
    seed: str = "",
    known: dict[str, tuple[tuple[int, ...], str]] | None = None,
) -> tuple[_Reverse, CodeWriter]:
    gen = _Reverse(fn, wrt, scalars, namer, pushed, facts, classes, known)
    ret = fn.body[-1]
    assert isinstance(ret, ir.Return)
    sweep = CodeWriter(1, text)
    if isinstance(ret.value, ir.Var) and ret.value.name in gen.facts.useful:
        seed = namer.adjoint(ret.value.name)
        gen.adjoint[ret.value.name] = seed
        gen.aliasable.add(seed)
    elif aux and isinstance(ret.value, ir.Tup):
        head = ret.value.items[0]
        if isinstance(head, ir.Var) and head.name in gen.facts.useful:
            gen.accumulate(head.name, name(seed), sweep)
    elif isinstance(ret.value, ir.Tup):
        # one cotangent per result: out_bar[k] seeds the adjoint of the k-th result
        for k, atom in enumerate(ret.value.items):
            if isinstance(atom, ir.Var) and atom.name in gen.facts.useful:
                part = ast.Subscript(value=name(seed), slice=ast.Constant(k), ctx=ast.Load())
                gen.accumulate(atom.name, part, sweep)
    gen.adjoint_block(fn.body, sweep)
    return gen, sweep


def reverse(
    fn: ir.Function,
    wrt: list[str],
    scalars: frozenset[str] = frozenset(),
    aux: bool = False,
    batch: bool = True,
    signature: Signature = (),
    fuse: bool = True,
) -> Generated:
    """``aux=True``: the function returns ``(value, aux)``; only ``value`` is differentiated
    (the cotangent passed is ``value``'s) and ``aux`` is returned as it is. ``batch=False``
    keeps one save per value in loops (:mod:`adgen.codeopt.batch_saves` packs them into
    tuples, which adgen cannot differentiate again: code meant for higher order is not
    batched).
    ``signature`` describes the arguments the code is specialised for
    (:func:`adgen.shapes.infer`): their shapes decide broadcasting when the code is made.
    ``fuse=False`` keeps one statement per IR statement (no
    :mod:`adgen.codeopt.fuse_temporaries`)."""
    ret = fn.body[-1]
    assert isinstance(ret, ir.Return)
    if aux and not (isinstance(ret.value, ir.Tup) and len(ret.value.items) == 2):
        raise UnsupportedSyntaxError(
            "has_aux=True needs the function to return a pair (value, aux)",
            loc_of(fn, ret.line),
            "return value, aux",
        )
    results = ret.value.items if isinstance(ret.value, ir.Tup) else (ret.value,)
    if aux:
        results = results[:1]
    if not all(isinstance(a, (ir.Var, ir.Const, ir.Free)) for a in results):
        raise UnsupportedSyntaxError(
            "reverse mode of a function returning nested tuples",
            loc_of(fn, ret.line),
            "return a flat tuple of values",
        )
    namer = Namer(fn.user_names | set(fn.free))
    if isinstance(ret.value, ir.Var):
        seed = namer.adjoint(ret.value.name)
    else:  # a tuple (or constant) result: a cotangent name no variable's adjoint can take
        seed = namer.claim("out_bar")
    gen_name = namer.claim(f"{fn.name}_vjp")
    # first pass: save every rebound name, to learn which ones the adjoint sweep reads
    facts = Facts(fn, wrt)
    refuse_complex(fn, facts.varied)
    classes, shapes, known = specialise(
        fn, broadcast_classes(fn, scalars, facts.rebound), signature
    )
    candidates = facts.multi - facts.test_names
    pushed = set(candidates)
    swept: tuple[_Reverse, CodeWriter] | None = None
    if not candidates and not aux:
        # nothing to save (straight-line code, mostly): the probe would sweep with the same
        # (empty) set and read what the sweep reads, so the sweep itself serves as the probe
        swept = _sweep(fn, wrt, scalars, namer, pushed, facts, classes, seed=seed, known=known)
        reads = swept[1].reads
    else:
        for _ in range(5):  # saving fewer names can make a restore unnecessary: iterate
            probe_namer = copy.deepcopy(namer)  # only what the probe reads is used: no text
            _, probe = _sweep(
                fn, wrt, scalars, probe_namer, pushed, facts, classes, text=False, known=known
            )
            reads = probe.reads
            if candidates & reads == pushed:
                break
            pushed = candidates & reads
    readers: dict[str, int] = {}
    for stmt in fn.statements():
        if isinstance(stmt, ir.Assign):
            for v in {v for a in ir.stmt_args(stmt) for v in ir.atom_vars(a)}:
                readers[v] = readers.get(v, 0) + 1
    for stmt in fn.statements():
        if (
            fn.filename.startswith("<adgen ")  # the user's lists are checked when lowering
            and isinstance(stmt, ir.Assign)
            and stmt.prim.name == "assign"
            and isinstance(stmt.args[0], ir.Var)
            and stmt.args[0].name in facts.lists
            and readers.get(stmt.args[0].name, 0) > 1  # not a temporary read only here
            and {stmt.targets[0], stmt.args[0].name} & facts.mutated
            and {stmt.targets[0], stmt.args[0].name} & facts.useful
        ):
            # one list object under two names, changed in place (adgen's own code, where
            # lists are not checked for aliases): the adjoint would treat them as two lists
            raise UnsupportedSyntaxError(
                "reverse mode of a list bound to a second name "
                f"(`{stmt.targets[0]} = {stmt.args[0].name}`) and changed in place",
                loc_of(fn, stmt.line),
                "differentiate in another order (forward mode over this code: adgen.jvp)",
            )
        if isinstance(stmt, ir.While) and facts.test_names & reads:
            raise UnsupportedSyntaxError(
                "reverse mode cannot replay this loop condition",
                loc_of(fn, stmt.line),
                "compute the condition into a variable inside the loop body",
            )
    gen, sweep = swept or _sweep(
        fn, wrt, scalars, namer, pushed, facts, classes, aux=aux, seed=seed, known=known
    )

    w = CodeWriter()
    w.comment(
        f"adgen: reverse mode (vector-Jacobian product) of {fn.name} "
        f"({os.path.basename(fn.filename)}:{fn.firstlineno}) w.r.t. {', '.join(wrt)}"
        + (f"; for scalar {', '.join(p for p in fn.params if p in scalars)}" if scalars else "")
        + specialised_for(fn, shapes)
    )
    w.open(f"def {gen_name}({', '.join(fn.params + [seed])}):")
    if gen.pushed or gen.counters:
        w.stmt(_assign(gen.stack, ast.List(elts=[], ctx=ast.Load())))
    if any(gen.checkpoint_needed.values()):
        w.stmt(_assign(gen.snapshots, ast.List(elts=[], ctx=ast.Load())))
    unbound = sorted(
        v
        for v in gen.pushed | gen.restored
        if v not in fn.params
        and not any(
            id(s) in gen.first_binding and v in s.targets
            for s in fn.body
            if isinstance(s, ir.Assign)
        )
    )
    if unbound:
        w.stmt(
            ast.Assign(
                targets=[ast.Name(id=v, ctx=ast.Store()) for v in unbound],
                value=ast.Constant(None),
                lineno=0,
            )
        )
    keep = sweep.reads | set(ir.atom_vars(ret.value)) | set(fn.params) | facts.multi | facts.managed
    last_use: dict[str, int] = {}
    for i, stmt in enumerate(fn.body):
        for v in _names(stmt):
            last_use[v] = i
    # values worth freeing: results of differentiable operations (a comparison's bool or a
    # shape is not worth a `del` line)
    worth = {
        t
        for s in fn.statements()
        if isinstance(s, ir.Assign) and s.prim.differentiable
        for t in s.targets
    }
    dead: dict[int, list[str]] = {}
    for v, i in last_use.items():
        if v not in keep and v in worth and gen.classes.get(v, frozenset({v})):
            dead.setdefault(i, []).append(v)
    dead.pop(len(fn.body) - 1, None)
    gen.forward_block(fn.body, w, dead)
    # the adjoint sweep restores old values of saved names: keep the results aside (a copy if
    # the sweep puts old values back into the array itself)
    kept: dict[str, ast.expr] = {}
    for var in sorted(set(ir.atom_vars(ret.value)) & (gen.pushed | gen.restored)):
        held = call("np.copy", name(var)) if var in gen.facts.mutated else name(var)
        kept[var] = name(namer.fresh(var))
        w.stmt(_assign(kept[var].id, held))  # type: ignore[attr-defined]
    value = _Rename(kept).visit(ir.atom_to_ast(ret.value))
    for v in sorted(gen.facts.managed):
        if v in gen.local_names:
            continue  # each iteration assigns it before anything reads it
        if not (isinstance(ret.value, ir.Var) and v == ret.value.name):
            w.stmt(_assign(gen.bar(v), zero_like(v, gen.classes)))
        elif v in gen.facts.mutated:  # the caller's cotangent is never written into
            w.stmt(_assign(gen.bar(v), call("np.copy", name(gen.bar(v)))))
    w.extend(sweep)
    grads: list[ast.expr] = []
    for p in wrt:
        if p in gen.facts.managed:
            grads.append(name(gen.bar(p)))
        elif p in gen.adjoint:
            grads.append(name(gen.adjoint[p]))
        else:
            grads.append(call("np.zeros_like", name(p)))
    result = ast.Tuple(elts=[value, ast.Tuple(elts=grads, ctx=ast.Load())], ctx=ast.Load())
    w.stmt(ast.Return(value=result))
    w.close()
    text = drop_copies(w.render())
    text = batch_saves(text, gen.stack) if batch else text
    if known:  # code specialised for shapes: adjoints have their values' shapes
        sizes = {v: k[0] for v, k in known.items()}
        sizes.update({gen.bar(v): k[0] for v, k in known.items() if gen.bar(v) not in known})
        text = sum_before_linear(text, sizes)
    # names provably holding scalars (and their adjoints): nothing to free or shrink
    scalar = {v for v, cls in gen.classes.items() if cls == frozenset()}
    small = frozenset(scalar | {gen.bar(v) for v in scalar})
    text = fuse_temporaries(text) if fuse else text
    text = keep_shapes_and_free(text, small)
    return Generated(gen_name, fn.params + [seed], text, gen.restoring)
