"""The two sweeps over blocks: the forward sweep in order, the adjoint sweep backwards.

The forward sweep runs the primal code, saving on the stack each value a later statement
overwrites that the adjoint sweep reads; the adjoint sweep takes the statements in reverse,
re-taking branches, running ``for`` loops over ``reversed(...)`` and ``while`` loops as many
times as the forward sweep counted. A checkpointed loop saves only a snapshot per segment
of iterations and recomputes each segment when its adjoint needs it. The statements
themselves are :mod:`adgen.modes.reverse.assignments`' part.
"""

from __future__ import annotations

import ast

from adgen import ir
from adgen.backend.emit import CodeWriter, open_block, open_while
from adgen.modes.expand import call, line_label, name, source_text
from adgen.modes.reverse.assignments import _Assignments
from adgen.modes.reverse.blocks import _bound, _carried, _reads
from adgen.modes.reverse.state import _assign


class _Reverse(_Assignments):
    """Writes one reverse-mode function; ``pushed`` names are saved before being overwritten."""

    # -- adjoint sweep -------------------------------------------------------------------------
    def adjoint_block(self, block: list[ir.Stmt], w: CodeWriter) -> None:
        fn = self.fn
        for stmt in reversed(block):
            # adjoints reset to zero are written out before they are read: by the adjoint of
            # the statement that binds them, and by any block (whose loops and branches add
            # to them); no reset is left pending past a block's end
            if isinstance(stmt, ir.Assign):
                self.flush(w, set(stmt.targets))
            elif not isinstance(stmt, ir.Return):
                self.flush(w)
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
        self.flush(w)

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
                        saved = call(f"{self.stack}.append", call("rt.copy_of", region))
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
        self.started -= self.local.get(id(stmt), set())
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
                    parts.append(call("rt.copy_of", name(v)))
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
        (and would otherwise have saved). Values local to one iteration are not: each
        iteration binds them before anything reads them, and nothing outside the loop does."""
        bound = _bound(stmt.body) - self.local.get(id(stmt), set())
        return sorted(((self.pushed & bound) | _carried(stmt)) - {stmt.target})
