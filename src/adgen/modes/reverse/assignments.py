"""The adjoint of an assignment: what reverse mode writes for one IR statement ``y = f(x)``.

A rule's call with one result or several, a sequence rule (``np.stack``), an in-place
write ``y[i] = v``, a list's ``append`` and ``pop``, and a call kept as a call (recursion):
each adds its inputs' shares of the result's adjoint to their adjoints, then puts back
the values the statement overwrote (see :mod:`adgen.modes.reverse.state`).
"""

from __future__ import annotations

import ast

from adgen import ir
from adgen.backend.emit import CodeWriter
from adgen.errors import UnsupportedSyntaxError
from adgen.modes.expand import (
    StatementRule,
    call,
    line_label,
    loc_of,
    name,
    source_text,
    subscript_store,
    zero_like,
)
from adgen.modes.reverse.blocks import _args_of
from adgen.modes.reverse.state import _assign, _State
from adgen.seam import LazyDerivative


class _Assignments(_State):
    """The adjoint sweep's part for assignments, one kind of statement a method."""

    def adjoint_assign(self, stmt: ir.Assign, w: CodeWriter) -> None:
        self.projecting = self.complex_values.touches(stmt)
        try:
            self._adjoint_assign(stmt, w)
        finally:
            w.drop_comment()
            self.projecting = False

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
            if not self._array(y) and _may_index_a_number(index):
                # (a 0-d cotangent summed with another is a NumPy scalar: `y[mask] = v` of a
                # 0-d y; an index with a slice or an integer is of an array of some axes)
                w.stmt(_assign(self.bar(y), call("rt.writable", name(self.bar(y)))))
            store = subscript_store(self.bar(y), ir.atom_to_ast(index))
            w.stmt(ast.Assign(targets=[store], value=ast.Constant(0.0), lineno=0))
            if share is not None:
                assert isinstance(v, ir.Var)
                self.accumulate(v.name, share, w)
        if self.saves(stmt, y):
            restore = subscript_store(y, ir.atom_to_ast(index))
            w.stmt(ast.Assign(targets=[restore], value=self.pop(), lineno=0), restored=y)

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
            if stmt.prim.returns_tuple:
                # the callee's reverse-mode code takes one cotangent for its one result
                raise UnsupportedSyntaxError(
                    "reverse mode of a recursive call of a function returning a tuple",
                    loc_of(fn, stmt.line),
                    "return one array from the recursive function (np.stack the values), or "
                    "use forward mode; for second derivatives of reverse-mode code, forward "
                    "over reverse (adgen.hessian, adgen.hvp, adgen.jacfwd(adgen.grad(f)))",
                )
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
        # a sequence's differentiated elements (a solver's args=): (position, variable)
        elements = sr.sequence_elements(facts.useful) if useful and reached else []
        if useful and reached:
            sr.refuse_nondifferentiable_inputs(facts.varied)
            seq_atom = sr.atoms.get(stmt.prim.sequence or "")
            if isinstance(seq_atom, ir.Var) and seq_atom.name in facts.useful:
                raise UnsupportedSyntaxError(
                    f"{stmt.prim.name} of a list built in the function",
                    loc_of(fn, stmt.line),
                    "write the tuple in the call: args=(a, b)",
                )
        if any(v in stmt.targets for _, v in elements):
            raise UnsupportedSyntaxError(
                f"{stmt.prim.name} whose result rebinds a name its sequence reads",
                loc_of(fn, stmt.line),
                "give the result another name",
            )
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
            self.element_contributions(sr, elements, ast.Tuple(elts=held, ctx=ast.Load()), w)
            return
        if inputs:  # templates index the tuple: (a_bar, b_bar)[1] is folded to b_bar
            self.contributions(sr, inputs, ast.Tuple(elts=parts, ctx=ast.Load()), w)
        self.element_contributions(sr, elements, ast.Tuple(elts=parts, ctx=ast.Load()), w)
        for x in reversed(saved):
            w.stmt(_assign(x, self.pop()))
        for x in resets:
            w.stmt(_assign(self.bar(x), zero_like(x, self.classes)))

    def element_contributions(
        self, sr: StatementRule, elements: list[tuple[int, str]], g: ast.expr, w: CodeWriter
    ) -> None:
        """Add each differentiated element's share of ``g`` (the results' cotangents) to its
        adjoint: a sequence rule with several results (``quad(f, a, b, args=(c, d))``)."""
        if not elements:
            return
        seq = sr.prim.sequence
        assert seq is not None
        template = sr.prim.vjp[seq]
        for position, var in elements:
            sr.bindings[template.extra[0]] = ast.Constant(position)
            pre, expr = sr.expand("vjp", seq, g)
            for s in pre:
                w.stmt(s)
            self.accumulate(var, expr, w)  # the part has the element's own shape

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
                self.accumulate(seq_atom.name, self._items_cotangent(stmt, sr, seq_atom.name, g), w)
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

    def _items_cotangent(self, stmt: ir.Assign, sr: StatementRule, var: str, g: str) -> ast.expr:
        """The cotangent of ``var``, the sequence ``stmt`` reads (``np.stack(var)``): a list
        the function built gets a list, an array passed there its items stacked back.
        ``np.array(var)`` of a number or 0-d array has no items: the result holds ``var`` as
        it is (where ``var``'s kind is not known, the code asks)."""
        fn, facts = self.fn, self.facts
        assert stmt.prim.sequence is not None
        number = stmt.prim.sequence_number and var not in facts.lists
        whole = call("rt.unbroadcast", name(g), name(var))
        if number and self._number(var):
            return whole
        template = stmt.prim.vjp[stmt.prim.sequence]
        k = self.namer.fresh("k")
        sr.bindings[template.extra[0]] = name(k)
        pre, expr = sr.expand("vjp", stmt.prim.sequence, g)
        if pre:
            raise UnsupportedSyntaxError(
                f"reverse mode of {stmt.prim.name} of a list", loc_of(fn, stmt.line)
            )
        count = call("range", call("len", name(var)))
        parts: ast.expr = ast.ListComp(
            elt=expr,
            generators=[
                ast.comprehension(
                    target=ast.Name(id=k, ctx=ast.Store()), iter=count, ifs=[], is_async=0
                )
            ],
        )
        if var not in facts.lists:
            parts = call("rt.items_vjp", parts, name(var))
        if number and not self._array(var):
            parts = ast.IfExp(test=call("np.ndim", name(var)), body=parts, orelse=whole)
        return parts


def _may_index_a_number(index: ir.Atom) -> bool:
    """Could ``index`` index a 0-d array (``...``, ``()``, a boolean mask of its own, a value
    known only when the code runs)? Not a slice or an integer, which need an axis."""
    items = index.items if isinstance(index, ir.Tup) else (index,)
    return not any(
        isinstance(a, ir.Slc) or (isinstance(a, ir.Const) and type(a.value) is int) for a in items
    )
