"""Forward mode: emit a function computing the primal and its tangent together.

For ``f(x, y)`` differentiated w.r.t. ``x`` the generated ``f_jvp(x, y, x_dot)``
returns ``(f(x, y), J_x f . x_dot)``. Only values that depend on a
differentiated input get a tangent (activity analysis); each original line's
primal and tangent statements stand together under a comment quoting it.

>>> import numpy as np
>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> def f(x1, x2):
...     return np.log(x1) + x1 * x2 - np.sin(x2)
>>> print(forward(lower(parse_function(f)), ["x1"]).source)  # doctest: +ELLIPSIS
# adgen: forward mode (Jacobian-vector product) of f (<doctest ...>:1) w.r.t. x1
def f_jvp(x1, x2, x1_dot):
    # line 2: return np.log(x1) + x1 * x2 - np.sin(x2)
    out_3_dot = x1_dot / x1 + x1_dot * x2
    out = np.log(x1) + x1 * x2 - np.sin(x2)
    return (out, out_3_dot)
<BLANKLINE>
"""

from __future__ import annotations

import ast
import os

from adgen import ir
from adgen.backend.codeopt import reuse_buffers
from adgen.backend.codeopt.collect_terms import collect_terms
from adgen.backend.codeopt.direct_reductions import direct_reductions
from adgen.backend.codeopt.drop_broadcasts import drop_broadcasts
from adgen.backend.codeopt.drop_dead import drop_dead
from adgen.backend.codeopt.fuse_temporaries import fuse_temporaries
from adgen.backend.codeopt.share_repeated import share_repeated
from adgen.backend.emit import CodeWriter, open_block, open_while
from adgen.errors import UnsupportedSyntaxError
from adgen.generated import Generated
from adgen.middle.analysis import Facts
from adgen.middle.shapes import (
    Signature,
    broadcast_classes,
    scalar_names,
    specialise,
    specialised_for,
)
from adgen.modes.complexvalues import refuse_complex
from adgen.modes.expand import (
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
from adgen.names import Namer
from adgen.seam import LazyDerivative


class _Forward:
    def __init__(
        self, fn: ir.Function, wrt: list[str], scalars: frozenset[str], signature: Signature
    ) -> None:
        self.wrt = tuple(wrt)
        self.scalar_params = scalars
        self.facts = Facts(fn, wrt, reverse=False)
        # (a branch reaching a call run as written made a refusal: Facts)
        self.fn = fn = self.facts.fn
        self.namer = Namer(fn.user_names | set(fn.free))
        classes = broadcast_classes(fn, scalars, self.facts.rebound)
        self.classes, self.shapes, self.known = specialise(fn, classes, signature)
        refuse_complex(fn, self.facts.varied, self.known)
        self.scalars = scalar_names(self.classes)
        # tangents only for values that depend on an input and reach the result
        self.active = self.facts.useful | set(wrt)
        # the names bound only to rt.Like / rt.saved_shape of a value (reverse mode's records
        # of a shape: adgen.backend.codeopt.save_shapes_only), nowhere read as numbers
        records = ("rt.Like", "rt.saved_shape")
        assigns = [s for s in fn.statements() if isinstance(s, ir.Assign)]
        self.shape_records = (
            {t for s in assigns if s.prim.name in records for t in s.targets}
            - {t for s in assigns if s.prim.name not in records for t in s.targets}
            - {s.target for s in fn.statements() if isinstance(s, ir.For)}
        )
        self.tangent = {p: self.namer.tangent(p) for p in wrt}
        self.multi_tangents = {self.namer.tangent(v) for v in self.facts.multi & self.active}
        self.w = CodeWriter()

    # the primal result is returned beside the tangent (False: None in its place, and the
    # work only it needs dropped: hvp's code)
    value = True

    def returned(self, atom: ir.Atom) -> ast.expr:
        """The primal result the function returns beside its tangent."""
        return ir.atom_to_ast(atom) if self.value else ast.Constant(None)

    def prologue(self) -> None:
        """Statements the function starts with (none: batched mode names its batch size)."""

    def zero_of(self, var: str) -> ast.expr:
        """A zero tangent for the name ``var``."""
        return zero_like(var, self.classes)

    def zero_of_atom(self, atom: ir.Atom) -> ast.expr:
        """A zero tangent for a value the code holds (a constant, a name without tangent)."""
        return call("rt.zeros_like", ir.atom_to_ast(atom))

    def tangent_of(self, var: str) -> str:
        if var not in self.tangent:
            self.tangent[var] = self.namer.tangent(var)
        return self.tangent[var]

    def block(self, block: list[ir.Stmt]) -> None:
        w = self.w
        for stmt in block:
            if isinstance(stmt, ir.Assign):
                w.source_comment(
                    stmt.line, source_text(self.fn, stmt.line), label=line_label(self.fn, stmt.line)
                )
                self.assign(stmt)
            elif isinstance(stmt, (ir.If, ir.For)):
                w.source_comment(
                    stmt.line, source_text(self.fn, stmt.line), label=line_label(self.fn, stmt.line)
                )
                open_block(w, stmt)
                self.block(stmt.body) if stmt.body else w.line("pass")
                w.close()
                if isinstance(stmt, ir.If) and stmt.orelse:
                    w.open("else:")
                    self.block(stmt.orelse)
                    w.close()
            elif isinstance(stmt, ir.While):
                w.source_comment(
                    stmt.line, source_text(self.fn, stmt.line), label=line_label(self.fn, stmt.line)
                )
                open_while(w, stmt, self.block)
                self.block(stmt.body) if stmt.body else w.line("pass")
                w.close()
            elif isinstance(stmt, ir.Return):
                w.source_comment(
                    stmt.line, source_text(self.fn, stmt.line), label=line_label(self.fn, stmt.line)
                )
                value = stmt.value
                pair = ast.Tuple(
                    elts=[self.returned(value), self.result_tangent(value)], ctx=ast.Load()
                )
                w.stmt(ast.Return(value=pair))

    def result_tangent(self, atom: ir.Atom) -> ast.expr:
        """A returned value's tangent, tuple by tuple: ``(x, (y,))`` -> ``(x_dot, (y_dot,))``."""
        if isinstance(atom, ir.Tup):
            return ast.Tuple(elts=[self.result_tangent(a) for a in atom.items], ctx=ast.Load())
        if isinstance(atom, ir.Dct):  # a dict result: a dict of the values' tangents
            return ast.Dict(
                keys=[ast.Constant(k) for k in atom.keys],
                values=[self.result_tangent(a) for a in atom.values],
            )
        if isinstance(atom, ir.Var) and atom.name in self.active:
            return name(self.tangent_of(atom.name))
        if isinstance(atom, ir.Var) and atom.name in self.shape_records:
            # a shape and dtype kept (rt.Like), read for nothing else: its own zero
            return name(atom.name)
        return self.zero_of_atom(atom)

    def pop(self, stmt: ir.Assign) -> None:
        """``v = xs.pop()``: the tangent list holds one tangent per item (zeros for items with
        none), so it is popped alongside -- into ``v``'s tangent, or dropped."""
        w = self.w
        w.stmt(ir.stmt_to_ast(stmt))
        xs, v = stmt.targets
        taken = call(f"{self.tangent_of(xs)}.pop") if xs in self.active else None
        if v in self.active:
            w.stmt(ir.assign(self.tangent_of(v), taken or self.zero_of(v)))
        elif taken is not None:
            w.stmt(ast.Expr(value=taken))

    def assign(self, stmt: ir.Assign) -> None:
        w, fn = self.w, self.fn
        if stmt.prim.name == "setitem":
            self.setitem(stmt)
            return
        if stmt.prim.user_fn is not None:
            self.user_call(stmt)
            return
        if stmt.prim.name == "append":
            w.stmt(ir.stmt_to_ast(stmt))
            xs = stmt.targets[0]
            if xs in self.active:
                v = stmt.args[1]
                if isinstance(v, ir.Var) and v.name in self.active:
                    part: ast.expr = name(self.tangent_of(v.name))
                elif isinstance(v, ir.Var) and v.name in self.shape_records:
                    part = name(v.name)  # (a shape kept: its own zero)
                else:
                    part = self.zero_of_atom(v)
                method = ast.Attribute(
                    value=name(self.tangent_of(xs)), attr="append", ctx=ast.Load()
                )
                w.stmt(ast.Expr(value=ast.Call(func=method, args=[part], keywords=[])))
            return
        if stmt.prim.name == "pop":
            self.pop(stmt)
            return
        live = [t for t in stmt.targets if t in self.active]
        reads = {v for a in ir.stmt_args(stmt) for v in ir.atom_vars(a)}
        if not live or not reads.intersection(stmt.targets):
            w.stmt(ir.stmt_to_ast(stmt))
            if not live:
                return
            self.tangent_code(stmt, live, None)
            return
        # `y = f(y, ...)`: the tangent reads the old y and the new value: the primal goes to a
        # temporary, the tangent is computed, then y is rebound
        if len(stmt.targets) != 1:
            raise UnsupportedSyntaxError(
                f"{stmt.prim.name} with several results cannot rebind its own argument",
                loc_of(fn, stmt.line),
            )
        new = self.namer.fresh(stmt.targets[0])
        w.stmt(ir.assign(new, ir.primal_expr(stmt)))
        self.tangent_code(stmt, live, new)
        w.stmt(ir.assign(stmt.targets[0], name(new)))

    def user_call(self, stmt: ir.Assign) -> None:
        """A call kept as a call (recursion): ``y, y_dot = h_jvp(*args, *tangents)``."""
        t = stmt.targets[0]
        params = [p.name for p in stmt.prim.params]
        active = [
            (p, a.name)
            for p, a in zip(params, stmt.args)
            if isinstance(a, ir.Var) and a.name in self.active
        ]
        if t not in self.active or not active:
            self.w.stmt(ir.stmt_to_ast(stmt))
            if t in self.active:
                self.w.stmt(ir.assign(self.tangent_of(t), self.zero_of(t)))
            return
        wrt = tuple(p for p, _ in active)
        jvp_name = self.namer.fresh(f"{stmt.prim.name}_jvp")
        self.fn.free[jvp_name] = LazyDerivative(stmt.prim.user_fn, "forward", wrt)
        args = [ir.atom_to_ast(a) for a in stmt.args]
        args += [name(self.tangent_of(v)) for _, v in active]
        pair: list[ast.expr] = [ast.Name(t, ast.Store()), ast.Name(self.tangent_of(t), ast.Store())]
        targets = ast.Tuple(elts=pair, ctx=ast.Store())
        self.w.stmt(ast.Assign(targets=[targets], value=call(jvp_name, *args), lineno=0))

    def setitem(self, stmt: ir.Assign) -> None:
        """``y[index] = v``: the tangent is written in place alongside."""
        self.w.stmt(ir.stmt_to_ast(stmt))
        y = stmt.targets[0]
        if y not in self.active:
            return
        _, index, v = stmt.args
        value: ast.expr = ast.Constant(0.0)
        if isinstance(v, ir.Var) and v.name in self.active:
            value = name(self.tangent_of(v.name))
        store = subscript_store(self.tangent_of(y), ir.atom_to_ast(index))
        self.w.stmt(ast.Assign(targets=[store], value=value, lineno=0))

    def tangent_code(self, stmt: ir.Assign, live: list[str], new: str | None) -> None:
        w, fn = self.w, self.fn
        inputs: list[tuple[str, str]] = []
        sr = None
        if stmt.prim.differentiable:
            sr = StatementRule(stmt, self.namer, loc_of(fn, stmt.line), self.known, self.scalars)
            sr.refuse_nondifferentiable_inputs(self.active)
            inputs = sr.active_params(self.active)
            if new is not None:
                sr.bindings["ans"] = name(new)
            seq_atom = sr.atoms.get(stmt.prim.sequence or "")
            packed: ast.expr | None = None
            if stmt.prim.sequence and stmt.prim.outputs is not None:
                # several results (a solver's args=): the sequence is one more input there
                if isinstance(seq_atom, ir.Var) and seq_atom.name in self.active:
                    raise UnsupportedSyntaxError(
                        f"{stmt.prim.name} of a list built in the function",
                        loc_of(fn, stmt.line),
                        "write the tuple in the call: args=(a, b)",
                    )
                if sr.sequence_elements(self.active):
                    self.several_tangents(stmt, sr, inputs, live)
                    return
            elif (
                stmt.prim.sequence
                and isinstance(seq_atom, ir.Var)
                and seq_atom.name in self.facts.lists
                and seq_atom.name in self.active
            ):
                pre, packed = sr.expand(
                    "jvp", stmt.prim.sequence, name(self.tangent_of(seq_atom.name))
                )
                for s in pre:
                    w.stmt(s)
            elif stmt.prim.sequence and sr.sequence_elements(self.active):
                for _, var in sr.sequence_elements(self.active):
                    self.tangent_of(var)
                parts = sr.sequence_tangents(self.tangent, self.active)
                pre, packed = sr.expand("jvp", stmt.prim.sequence, parts)
                for s in pre:
                    w.stmt(s)
            if packed is not None:
                # the sequence's tangent, plus those of the rule's other differentiable
                # parameters (np.select's default)
                for param, var in inputs:
                    if param != stmt.prim.sequence:
                        pre, expr = sr.expand("jvp", param, self.tangent_of(var))
                        for s in pre:
                            w.stmt(s)
                        packed = add(packed, expr)
                target = stmt.targets[0]
                if target in self.facts.mutated:
                    packed = owned(packed, target in self.facts.lists)
                w.stmt(ir.assign(self.tangent_of(target), packed))
                return
        if not inputs:
            # bound to a value without derivative here, but differentiated elsewhere
            for t in live:
                w.stmt(ir.assign(self.tangent_of(t), self.zero_of(t)))
            return
        assert sr is not None
        if stmt.prim.outputs is not None:
            self.several_tangents(stmt, sr, inputs, live)
            return
        if len(stmt.targets) != 1:
            raise UnsupportedSyntaxError(
                f"{stmt.prim.name} with several results has no forward rule yet",
                loc_of(fn, stmt.line),
            )
        total: ast.expr | None = None
        for param, var in inputs:
            pre, expr = sr.expand("jvp", param, self.tangent_of(var))
            for s in pre:
                w.stmt(s)
            total = expr if total is None else self.sum(stmt, total, expr)
        assert total is not None
        target = stmt.targets[0]
        if sr.tangent_needs_broadcast([p for p, _ in inputs], self.classes):
            total = call("np.broadcast_to", total, call("np.shape", name(new or target)))
        if (
            isinstance(total, ast.Name)
            and target not in self.facts.multi
            and total.id not in self.multi_tangents
        ):
            self.tangent[target] = total.id  # no copy: the tangent *is* that value
            return
        if target in self.facts.mutated:
            total = owned(total, target in self.facts.lists)
        w.stmt(ir.assign(self.tangent_of(target), total))

    @staticmethod
    def sum(stmt: ir.Assign, total: ast.expr, part: ast.expr) -> ast.expr:
        """Two tangent contributions added: item by item for a list of derivatives (``+``
        would concatenate the lists)."""
        if stmt.prim.lists:
            return call("rt.accumulate", total, part)
        return add(total, part)

    def several_tangents(
        self, stmt: ir.Assign, sr: StatementRule, inputs: list[tuple[str, str]], live: list[str]
    ) -> None:
        """A function with several results: each template returns a tuple of tangents (one
        per result); the results nobody differentiates get no tangent code."""
        w = self.w
        parts: list[list[ast.expr]] = []
        seeds: list[tuple[str, str | ast.expr]] = [(p, self.tangent_of(v)) for p, v in inputs]
        if stmt.prim.sequence and sr.sequence_elements(self.active):
            for _, var in sr.sequence_elements(self.active):
                self.tangent_of(var)
            seeds.append((stmt.prim.sequence, sr.sequence_tangents(self.tangent, self.active)))
        for param, seed in seeds:
            pre, expr = sr.expand("jvp", param, seed)
            for s in pre:
                w.stmt(s)
            if isinstance(expr, ast.Tuple) and len(expr.elts) == len(stmt.targets):
                parts.append(list(expr.elts))
                continue
            held = self.namer.fresh(f"{stmt.targets[0]}_dots")
            w.stmt(ir.assign(held, expr))
            parts.append(
                [
                    ast.Subscript(value=name(held), slice=ast.Constant(k), ctx=ast.Load())
                    for k in range(len(stmt.targets))
                ]
            )
        for k, target in enumerate(stmt.targets):
            if target not in live:
                continue
            total = parts[0][k]
            for more in parts[1:]:
                total = self.sum(stmt, total, more[k]) if k == 0 else add(total, more[k])
            if target in self.facts.mutated:
                total = owned(total, target in self.facts.lists)
            w.stmt(ir.assign(self.tangent_of(target), total))


def forward(
    fn: ir.Function,
    wrt: list[str],
    scalars: frozenset[str] = frozenset(),
    signature: Signature = (),
    fuse: bool = True,
    reuse: bool = False,
    value: bool = True,
) -> Generated:
    """The JVP of ``fn`` w.r.t. ``wrt``; ``signature``: the arguments it is specialised for;
    ``fuse=False`` keeps one statement per IR statement (no :func:`fuse_temporaries`);
    ``reuse=True`` (code adgen will not read again) writes results into dead temporaries
    (:func:`~adgen.backend.codeopt.reuse_buffers.reuse_buffers`); ``value=False`` returns
    ``None`` in the result's place and drops the work only the result needs
    (:func:`~adgen.backend.codeopt.drop_dead.drop_dead`: what ``hvp`` runs, the gradient's
    tangent without the gradient)."""
    gen = _Forward(fn, wrt, scalars, signature)
    gen.value = value
    return emit_function(gen, "jvp", "forward mode (Jacobian-vector product)", fuse, reuse)


def emit_function(gen: _Forward, suffix: str, title: str, fuse: bool, reuse: bool) -> Generated:
    """The function ``gen`` writes: its header, the tangents of parameters rebound later,
    the body, and the passes over the text."""
    fn, wrt, scalars = gen.fn, list(gen.wrt), gen.scalar_params
    params = fn.params + [gen.tangent[p] for p in wrt]
    gen_name = gen.namer.claim(f"{fn.name}_{suffix}")
    w = gen.w
    w.comment(
        f"adgen: {title} of {fn.name} "
        f"({os.path.basename(fn.filename)}:{fn.firstlineno}) w.r.t. {', '.join(wrt)}"
        + (f"; for scalar {', '.join(p for p in fn.params if p in scalars)}" if scalars else "")
        + specialised_for(fn, gen.shapes)
    )
    w.open(f"def {gen_name}({', '.join(params)}):")
    gen.prologue()
    for p in fn.params:
        if p in gen.active and p not in wrt:  # rebound later from differentiated values
            w.stmt(ir.assign(gen.tangent_of(p), gen.zero_of(p)))
    gen.block(fn.body)
    w.close()
    text = w.render()
    # a restoring pop's tangent is popped from the tangent list alongside: it restores too
    lists = ir.restoring_lists(fn)
    restoring = lists + tuple(gen.tangent_of(xs) for xs in lists if xs in gen.active)
    if fuse and reuse and reuse_buffers.applies(gen.known):
        text = collect_terms(text, gen.known)
    text = share_repeated(fuse_temporaries(text)) if fuse else text
    if not gen.value:  # (the result not returned: the work only it needs goes)
        text = drop_dead(text)
    if fuse and reuse and reuse_buffers.applies(gen.known):
        text = drop_broadcasts(text, gen.known)
        text = reuse_buffers.reuse_buffers(text, gen.known)
        text = direct_reductions(text, gen.known)
    return Generated(gen_name, params, text, restoring)
