"""Batched forward mode: ``k`` tangents pushed through one pass of the code.

``f_jvps(x, y, x_dots)`` returns ``(None, tangents)`` where ``x_dots`` holds ``k`` tangents
of ``x`` along a leading axis (``x_dots.shape == (k, *x.shape)``) and each result's tangents
are ``(k, *result.shape)``; the result itself is not computed where only it needed the work
(:mod:`adgen.backend.codeopt.drop_dead`). ``adgen.jacfwd`` and ``adgen.hessian`` pass the
basis vectors of ``x`` this way (in chunks), as JAX's ``vmap`` of ``jvp`` does, instead of
running the forward-mode code once per column.

The code is made for a call's kinds, so each tangent's place in a broadcast is decided when
writing (or, for a name whose shape the call does not decide, from its value when the code
runs): an elementwise rule's template reads its operands' tangents with axes of length 1
inserted after the batch axis (``x_dot[:, None]`` for a vector meeting a matrix) and serves
as it is; other rules give a batched template of their own (``bjvp_<p>`` beside ``jvp_<p>``,
see :func:`adgen.rules.registry.rule`); a rule without one, or a function with several
results, has its template run once per tangent in a loop over the batch for that statement
alone (``np.stack`` of the results). Lists the function builds hold one batch per item. What
this mode does not batch -- calls kept as calls (recursion), adgen's lists of derivatives
(``rt.accumulate``), arrays of other libraries -- raises :class:`NotBatched` with the reason,
and ``jacfwd`` runs the one-tangent code once per column instead.

>>> import numpy as np
>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> from adgen.middle.shapes import describe
>>> def f(x, a):
...     return np.sin(x) * a + np.sum(x)
>>> sig = (("x", describe(np.ones(3))), ("a", describe(np.ones((2, 3)))))
>>> print(forward_batched(lower(parse_function(f)), ["x"], signature=sig).source)
... # doctest: +ELLIPSIS
# adgen: batched forward mode (k Jacobian-vector products at once) of f ...
def f_jvps(x, a, x_dot):
    batch = np.shape(x_dot)[0]
    # line 2: return np.sin(x) * a + np.sum(x)
    out_2_dot = np.broadcast_to((np.cos(x) * x_dot)[:, None] * a, (batch, 2, 3))
    out_3_dot = np.sum(x_dot, axis=rt.batch_axis(None, np.ndim(x)))
    out_dot = np.broadcast_to(out_2_dot + out_3_dot[:, None, None], (batch, 2, 3))
    return (None, out_dot)
<BLANKLINE>

A chain of elementwise steps from one batch of tangents is written on coefficients of the
primal's size (:meth:`_Batched.linear_coefficient`): each step's tangents are a coefficient
times the batch they started from, and the batch is multiplied once, where something else
reads it (the rest of the products go with :mod:`~adgen.backend.codeopt.drop_dead`):

>>> def g(x):
...     y = np.exp(-x) * 2.0
...     return np.cumsum(np.log1p(y))
>>> print(forward_batched(lower(parse_function(g)), ["x"], signature=sig[:1]).source)
... # doctest: +ELLIPSIS
# adgen: batched forward mode (k Jacobian-vector products at once) of g ...
def g_jvps(x, x_dot):
    # line 2: y = np.exp(-x) * 2.0
    y_2 = np.exp(-x)
    y_2_coef_1 = -1.0 * y_2
    y = y_2 * 2.0
    y_coef_1 = y_2_coef_1 * 2.0
    # line 3: return np.cumsum(np.log1p(y))
    out_1_dot = y_coef_1 / (1.0 + y) * x_dot
    out_dot = np.cumsum(np.reshape(out_1_dot, (np.shape(out_1_dot)[0], -1)), axis=1)
    return (None, out_dot)
<BLANKLINE>
"""

from __future__ import annotations

import ast
import copy
import math

import numpy as np

from adgen import ir
from adgen.backend.codeopt import reuse_buffers
from adgen.backend.codeopt.drop_dead import drop_dead
from adgen.generated import Generated
from adgen.middle.shapes import Signature
from adgen.modes.expand import StatementRule, add, call, loc_of, name, owned, subscript_store
from adgen.modes.forward import _Forward, emit_function
from adgen.pyast import dotted_text
from adgen.rules import known
from adgen.rules.known import LIBRARY
from adgen.rules.registry import Template

# what an elementwise rule's template may call and still serve tangents with a batch axis:
# functions of its operands' values, and helpers that work entry by entry
_ENTRYWISE_HELPERS = {
    "rt.zero_safe",
    "rt.zero_safe_tangent",
    "rt.zeros_like",
    "rt.power",
    "rt.real_like",
    "rt.known_constant",
    "rt.known_real",
    "rt.known_scalar",
}
_SHAPE_CALLS = {
    "np.shape",
    "np.ndim",
    "np.size",
    "np.reshape",
    "np.broadcast_to",
    "np.sum",
    "np.mean",
    "np.ravel",
    "np.transpose",
    "np.matmul",
    "np.dot",
}


def _items(index: ir.Atom) -> tuple[ir.Atom, ...]:
    """The items of an index: a tuple's, or the index itself (a list is one index array)."""
    return index.items if isinstance(index, ir.Tup) and index.kind != "list" else (index,)


def _reads(node: ast.AST, seed: ast.expr) -> bool:
    """Does ``node`` read the tangents ``seed`` names?"""
    names = {n.id for n in ast.walk(seed) if isinstance(n, ast.Name)}
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def linear_in(expr: ast.expr, seed: str) -> bool:
    """Is ``expr`` a linear function of the name ``seed`` entry by entry (sums of it times,
    or over, values that do not read it), so that ``expr`` of ``c * t`` is ``expr`` of ``c``
    times ``t`` for real arrays ``c`` and ``t``?

    >>> [linear_in(ast.parse(e, mode="eval").body, "s") for e in (
    ...     "-(s * a / b)", "s * a - s * np.cos(a)", "np.where(a > 0, s, 0.0)", "s + 1.0",
    ...     "np.where(s == 0, 0, s)", "a")]
    [True, True, True, False, False, False]
    """
    if isinstance(expr, ast.Name):
        return expr.id == seed
    if isinstance(expr, ast.Constant):
        return type(expr.value) in (int, float) and expr.value == 0  # (zero times the seed)
    if isinstance(expr, ast.Call) and dotted_text(expr.func) == "np.where" and not expr.keywords:
        if len(expr.args) == 3 and not _reads_name(expr.args[0], seed):
            return all(linear_in(a, seed) for a in expr.args[1:])
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return linear_in(expr.operand, seed)
    if isinstance(expr, ast.BinOp):
        left, right = (linear_in(side, seed) for side in (expr.left, expr.right))
        if isinstance(expr.op, (ast.Add, ast.Sub)):
            return left and right
        if isinstance(expr.op, ast.Mult):
            reads = [_reads_name(side, seed) for side in (expr.left, expr.right)]
            return (left and not reads[1]) or (right and not reads[0])
        if isinstance(expr.op, ast.Div):
            return left and not _reads_name(expr.right, seed)
    return False


def _reads_name(node: ast.AST, seed: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == seed for n in ast.walk(node))


def _substituted(expr: ast.expr, seed: str, value: ast.expr) -> ast.expr:
    """``expr`` with ``value`` for the name ``seed`` (a product by the constant 1.0 left out)."""

    class Put(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            return copy.deepcopy(value) if node.id == seed else node

        def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
            self.generic_visit(node)
            if isinstance(node.op, ast.Mult):
                for one, other in ((node.left, node.right), (node.right, node.left)):
                    if (
                        isinstance(one, ast.Constant)
                        and type(one.value) is float
                        and one.value == 1
                    ):
                        return other
            return node

    return Put().visit(copy.deepcopy(expr))  # type: ignore[no-any-return]


def _is_one(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is float and node.value == 1


def _is_number(node: ast.expr) -> bool:
    """A literal number, or its negation (a coefficient written in place, not bound)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


class NotBatched(Exception):
    """Why a function's tangents cannot go through one pass together."""

    def __init__(self, why: str, line: int | None = None) -> None:
        super().__init__(why)
        self.why = why
        self.line = line


def entrywise(body: list[ast.stmt]) -> bool:
    """Does an elementwise rule's template read its tangent entry by entry only (so that a
    tangent with a batch axis in front, and axes of length 1 after it, serves as it is)?"""
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Attribute) and node.attr in ("shape", "ndim", "size", "T"):
                return False
            if isinstance(node, ast.keyword) and node.arg in ("axis", "axes", "keepdims"):
                return False
            if isinstance(node, ast.Call):
                spelled = dotted_text(node.func) or ""
                if spelled in _SHAPE_CALLS:
                    return False
                if spelled.startswith("rt.") and spelled not in _ENTRYWISE_HELPERS:
                    return False
    return True


class _Batched(_Forward):
    def __init__(
        self, fn: ir.Function, wrt: list[str], scalars: frozenset[str], signature: Signature
    ) -> None:
        super().__init__(fn, wrt, scalars, signature)
        if not signature or LIBRARY in self.known:
            raise NotBatched("made only for NumPy arrays of known shapes")
        self.batch = self.namer.claim("batch")
        # statements whose template ran once per tangent (what adgen.source reports)
        self.looped: list[str] = []
        # the tangents of lists the function builds (a list of batches, one per item)
        self.list_tangents: set[str] = set()
        # tangents that are one coefficient (a primal-sized array) times another tangent, the
        # root: name -> (root, coefficient) -- see linear_coefficient
        self.coefficients: dict[str, tuple[str, ast.expr]] = {}

    def prologue(self) -> None:
        first = name(self.tangent_of(self.wrt[0]))
        size = ast.Subscript(value=call("np.shape", first), slice=ast.Constant(0), ctx=ast.Load())
        self.w.stmt(ir.assign(self.batch, size))

    def is_list(self, seed: ast.expr) -> bool:
        return isinstance(seed, ast.Name) and seed.id in self.list_tangents

    def returned(self, atom: ir.Atom) -> ast.expr:
        return ast.Constant(None)  # (jacfwd reads the tangents only: the result's work goes)

    # -- zeros --------------------------------------------------------------------------------

    def zero_of(self, var: str) -> ast.expr:
        return call("rt.batch_zeros", name(var), name(self.batch))

    def zero_of_atom(self, atom: ir.Atom) -> ast.expr:
        return call("rt.batch_zeros", ir.atom_to_ast(atom), name(self.batch))

    # -- statements ---------------------------------------------------------------------------

    def assign(self, stmt: ir.Assign) -> None:
        if stmt.prim.user_fn is not None:
            raise NotBatched(f"the call of {stmt.prim.name} kept as a call", stmt.line)
        super().assign(stmt)

    def setitem(self, stmt: ir.Assign) -> None:
        """``y[index] = v``: ``y_dot[:, index] = v_dot`` where the index leaves the batch
        axis in front, else item by item."""
        self.w.stmt(ir.stmt_to_ast(stmt))
        y = stmt.targets[0]
        if y not in self.active:
            return
        _, index, v = stmt.args
        active = isinstance(v, ir.Var) and v.name in self.active
        if y in self.facts.lists:  # (a list's tangent: a list of batches, one per item)
            item = name(self.tangent_of(v.name)) if active else self.zero_of_atom(v)  # type: ignore[union-attr]
            store = subscript_store(self.tangent_of(y), ir.atom_to_ast(index))
            self.w.stmt(ast.Assign(targets=[store], value=item, lineno=0))
            return
        y_shape = self.static_shape(ir.Var(y))
        rank = None if y_shape is None else self.region_rank(y_shape, index)
        v_shape = self.static_shape(v) if active else ()
        if rank is not None and v_shape is not None:
            value: ast.expr = ast.Constant(0.0)
            if active:
                assert isinstance(v, ir.Var)
                value = self.lifted(name(self.tangent_of(v.name)), rank - len(v_shape))
            store = ast.Subscript(
                value=name(self.tangent_of(y)), slice=self.batched_index(index), ctx=ast.Store()
            )
            self.w.stmt(ast.Assign(targets=[store], value=value, lineno=0))
            return
        k = self.namer.fresh("k")
        self.w.open(f"for {k} in range({self.batch}):")
        value = ast.Constant(0.0)
        if active:
            assert isinstance(v, ir.Var)
            value = self.item(name(self.tangent_of(v.name)), k)
        # (`y_dot[k, ...]`: a view even where y is 0-d, whose `y_dot[k]` is a number)
        row = ast.Tuple(elts=[name(k), ast.Constant(...)], ctx=ast.Load())
        store = ast.Subscript(
            value=ast.Subscript(value=name(self.tangent_of(y)), slice=row, ctx=ast.Load()),
            slice=ir.atom_to_ast(index),
            ctx=ast.Store(),
        )
        self.w.stmt(ast.Assign(targets=[store], value=value, lineno=0))
        self.w.close()

    def region_rank(self, shape: tuple[int, ...], index: ir.Atom) -> int | None:
        """The number of axes of ``y[index]`` where a slice in front of ``index`` leaves the
        batch axis first (at most one index array), else None."""
        if self.index_arrays(index) > 1:
            return None
        stand_ins: list[object] = []
        for item in _items(index):
            if isinstance(item, ir.Slc):
                stand_ins.append(slice(None))
            elif isinstance(item, ir.Const) and (item.value is None or item.value is Ellipsis):
                stand_ins.append(item.value)
            elif isinstance(item, ir.Const) and type(item.value) is int:
                stand_ins.append(0)
            elif isinstance(item, ir.Var) and item.name in self.known:
                item_shape, dtype = self.known[item.name]
                stand_ins.append(np.zeros(item_shape, dtype=np.dtype(dtype)))
            else:
                return None
        try:
            region = np.broadcast_to(0.0, shape)[tuple(stand_ins)]  # type: ignore[arg-type]
            return int(np.ndim(region))
        except (IndexError, TypeError, ValueError):
            return None

    @staticmethod
    def batched_index(index: ir.Atom) -> ast.expr:
        """``index`` with a slice in front: ``(slice(None), *index)`` as subscript syntax."""
        return ast.Tuple(
            elts=[
                ast.Slice(lower=None, upper=None, step=None),
                *map(ir.atom_to_ast, _items(index)),
            ],
            ctx=ast.Load(),
        )

    @staticmethod
    def item(expr: ast.expr, k: str) -> ast.expr:
        return ast.Subscript(value=expr, slice=name(k), ctx=ast.Load())

    @staticmethod
    def lifted(expr: ast.expr, axes: int) -> ast.expr:
        """``expr[:, None, ...]``: ``axes`` axes of length 1 after the batch axis."""
        if axes <= 0:
            return expr
        index: list[ast.expr] = [ast.Slice(lower=None, upper=None, step=None)]
        index += [ast.Constant(None)] * axes
        return ast.Subscript(
            value=expr, slice=ast.Tuple(elts=index, ctx=ast.Load()), ctx=ast.Load()
        )

    def tangent_code(self, stmt: ir.Assign, live: list[str], new: str | None) -> None:
        prim = stmt.prim
        if not prim.differentiable:
            super().tangent_code(stmt, live, new)  # (zeros for a value without derivative)
            return
        if prim.lists:
            raise NotBatched(f"{prim.name} of lists of derivatives", stmt.line)
        several = prim.outputs is not None
        if not several and len(stmt.targets) != 1:
            raise NotBatched(f"{prim.name} with several results", stmt.line)
        sr = StatementRule(stmt, self.namer, loc_of(self.fn, stmt.line), self.known, self.scalars)
        sr.refuse_nondifferentiable_inputs(self.active)
        if new is not None:
            sr.bindings["ans"] = name(new)
        # (the primal value is bound already: its shape may be read when the code runs)
        values = [new or stmt.targets[0]] if not several else list(stmt.targets)
        inputs: list[tuple[str, ast.expr]] = [
            (p, name(self.tangent_of(v))) for p, v in sr.active_params(self.active)
        ]
        if prim.sequence:
            seq = sr.atoms.get(prim.sequence)
            if isinstance(seq, ir.Var) and seq.name in self.facts.lists & self.active:
                # a list the function built: its tangent is a list of batches, one per item
                self.list_tangents.add(self.tangent_of(seq.name))
            if sr.sequence_elements(self.active):
                assert isinstance(seq, ir.Tup)
                # (a batched template takes numbers and arrays, not nested sequences)
                flat = all(
                    isinstance(a, (ir.Var, ir.Free))
                    or isinstance(a, ir.Const)
                    and type(a.value) in (int, float)
                    for a in seq.items
                )
                parts = self.sequence_seed(seq, flat and prim.sequence in prim.batched)
                inputs.append((prim.sequence, parts))
        if not inputs:
            for t in live:
                self.w.stmt(ir.assign(self.tangent_of(t), self.zero_of(t)))
            return
        if several:
            totals = self.per_tangent(sr, inputs, values, [t in live for t in stmt.targets])
            for t, each in zip(stmt.targets, totals, strict=True):
                if each is not None:
                    self.bind_tangent(t, each)
            return
        if prim.elementwise and self.linear_coefficient(sr, inputs, stmt.targets[0], values[0]):
            return
        total: ast.expr | None = None
        exact = True  # does the sum have the result's shape (k, *shape) for certain?
        looped: list[tuple[str, ast.expr]] = []
        for param, seed in inputs:
            expr = self.batched_contribution(sr, param, seed, stmt.line)
            if expr is None and prim.elementwise and param != prim.sequence:
                expr = self.entrywise_contribution(sr, param, seed, values[0])
                # (a copy, `y = x`, has x's shape: its tangent is x's batch itself, as y is x
                # -- a write into one is a write into the other, in both)
                exact = exact and (prim.name == "assign" or self.same_shapes(sr, values[0]))
            if expr is None:
                looped.append((param, seed))
                continue
            total = expr if total is None else add(total, expr)
        if looped:
            (part,) = self.per_tangent(sr, looped, values, [True])
            assert part is not None
            total = part if total is None else add(total, part)
        assert total is not None
        if not exact:
            total = call("np.broadcast_to", total, self.batch_shape(values[0]))
        self.bind_tangent(stmt.targets[0], total)

    def linear_coefficient(
        self, sr: StatementRule, inputs: list[tuple[str, ast.expr]], target: str, value: str
    ) -> bool:
        """Write an elementwise statement's tangents as a coefficient of the result's shape
        times one tangent, the root, where each differentiated operand's are (a tangent is its
        own root, coefficient 1): the templates, linear in their tangent entry by entry, run on
        the coefficients -- primal-sized arrays, not batches of ``k`` -- and the batch is made
        by one product (which :func:`~adgen.backend.codeopt.drop_dead.drop_dead` drops where
        only the next coefficient reads it). A chain of elementwise steps from one batch of
        tangents (a GLM's gradient, differentiated again for its Hessian) then costs one
        product with the batch. Only for real arrays of the result's shape, bound once at
        the function's top level (root too): False, nothing written, otherwise."""
        if target in self.facts.multi or target in self.facts.mutated:
            return False
        kind = self.known.get(value)
        if kind is None or not kind[0] or np.dtype(kind[1]).kind != "f":
            return False
        root = ""
        coefficients: list[tuple[str, ast.expr]] = []
        for param, seed in inputs:
            atom = sr.atoms.get(param)
            if not isinstance(atom, ir.Var) or self.known.get(atom.name) != kind:
                return False
            held = self.coefficients.get(atom.name)
            if held is None:
                if not isinstance(seed, ast.Name) or atom.name in self.facts.multi:
                    return False
                held = (seed.id, ast.Constant(1.0))  # (a tangent is its own root)
            if root and held[0] != root:
                return False
            root = held[0]
            coefficients.append((param, held[1]))
        placeholder = self.namer.fresh("seed")
        total: ast.expr | None = None
        for param, coefficient in coefficients:
            if not entrywise(sr.prim.jvp[param].body):
                return False
            pre, expr = sr.expand("jvp", param, name(placeholder))
            if pre or not linear_in(expr, placeholder):
                return False
            part = _substituted(expr, placeholder, coefficient)
            total = part if total is None else add(total, part)
        assert total is not None
        if _is_one(total):  # (the root itself)
            self.coefficients[target] = (root, total)
            self.bind_tangent(target, name(root))
            return True
        if not _is_number(total):
            bound = self.namer.fresh(f"{target}_coef")
            self.w.stmt(ir.assign(bound, total))
            total = name(bound)
        self.coefficients[target] = (root, total)
        product = ast.BinOp(left=copy.deepcopy(total), op=ast.Mult(), right=name(root))
        self.w.stmt(ir.assign(self.tangent_of(target), product))
        return True

    def bind_tangent(self, target: str, total: ast.expr) -> None:
        if isinstance(total, ast.Name) and target not in self.facts.multi:
            if total.id not in self.multi_tangents:
                self.tangent[target] = total.id  # no copy: the tangent *is* that value
                return
        if target in self.facts.mutated:
            total = owned(total)
        self.w.stmt(ir.assign(self.tangent_of(target), total))

    def sequence_seed(self, seq: ir.Tup, batched: bool) -> ast.Tuple:
        """The tangents of a sequence's elements: batches for the differentiated ones; for
        the others zeros (a batch of them for a batched template, else one, which the loop
        over the batch passes as it is) -- constants as the one-tangent code has them."""
        parts: list[ast.expr] = []
        for a in seq.items:
            if isinstance(a, ir.Var) and a.name in self.active:
                parts.append(name(self.tangent_of(a.name)))
            elif batched:
                parts.append(self.zero_of_atom(a))
            else:
                parts.append(ast.Starred(value=call("rt.zeros_like", ir.atom_to_ast(a))))
        return ast.Tuple(elts=parts, ctx=ast.Load())

    def batched_contribution(
        self, sr: StatementRule, param: str, seed: ast.expr, line: int
    ) -> ast.expr | None:
        """A parameter's contribution from the rule's batched template (or, for ``x[i]``,
        the subscript itself), or None."""
        template = sr.prim.batched.get(param)
        one = sr.prim.jvp.get(param)
        if one is not None and one.refusal is not None:
            template = None  # (refused in forward mode: the one-tangent template says why)
        if (
            param == sr.prim.sequence
            and not self.is_list(seed)
            and (
                not isinstance(seed, ast.Tuple)
                or any(isinstance(e, ast.Starred) for e in seed.elts)
            )
        ):  # (an array's rows as the sequence; constants' zeros for the one-tangent templates)
            template = None
        expr = self.expand(sr, template, seed) if template is not None else None
        if expr is None and sr.prim.name == "getitem" and param == "a":
            expr = self.getitem(sr, seed)
        return expr

    def entrywise_contribution(
        self, sr: StatementRule, param: str, seed: ast.expr, value: str
    ) -> ast.expr | None:
        """An elementwise rule's own template, given its operand's tangents with axes of
        length 1 after the batch axis up to the result's rank."""
        if not entrywise(sr.prim.jvp[param].body):
            return None
        atom = sr.atoms[param]
        have, result = self.static_shape(atom), self.static_shape(ir.Var(value))
        if have is not None and result is not None:
            lifted = self.lifted(seed, len(result) - len(have))
        else:
            lifted = call("rt.lifted", seed, call("np.ndim", name(value)))
        pre, expr = sr.expand("jvp", param, lifted)
        for s in pre:
            self.w.stmt(s)
        if not any(_reads(node, seed) for node in [*pre, expr]):
            # (a zero of the operand's shape: no batch axis)
            expr = call("np.broadcast_to", expr, self.batch_shape(value))
        return expr

    def static_shape(self, atom: ir.Atom) -> tuple[int, ...] | None:
        if isinstance(atom, ir.Var):
            known = self.known.get(atom.name)
            return None if known is None else known[0]
        if isinstance(atom, ir.Const):
            return tuple(np.shape(atom.value))
        return None

    def batch_shape(self, value: str, batch: bool = True) -> ast.expr:
        """``(batch, *value.shape)`` (without ``batch``: the shape), written as constants
        where the call's shapes decide it."""
        shape = self.static_shape(ir.Var(value))
        lead: list[ast.expr] = [name(self.batch)] if batch else []
        if shape is not None:
            return ast.Tuple(elts=[*lead, *map(ast.Constant, shape)], ctx=ast.Load())
        if not batch:
            return call("np.shape", name(value))
        rest = ast.Starred(value=call("np.shape", name(value)), ctx=ast.Load())
        return ast.Tuple(elts=[*lead, rest], ctx=ast.Load())

    def same_shapes(self, sr: StatementRule, value: str) -> bool:
        """Do all the statement's array operands have the result's shape (no broadcast)?"""
        result = self.static_shape(ir.Var(value))
        if result is None:
            return False
        for p in sr.prim.params:
            atom = sr.atoms.get(p.name)
            if isinstance(atom, ir.Var) and self.static_shape(atom) != result:
                return False
        return True

    def expand(self, sr: StatementRule, template: Template, seed: ast.expr) -> ast.expr | None:
        """A batched template instantiated (its statements written), or None where it
        declines this call's shapes (``return None``) or leaves a test to run time."""
        stmts, expr = template.expand(sr.bindings, seed, sr._fresh, self.known, self.scalars)
        if isinstance(expr, ast.Constant) and expr.value is None:
            return None
        if any(isinstance(n, ast.If) for s in stmts for n in ast.walk(s)):
            return None
        for s in stmts:
            self.w.stmt(known.specialize(s, self.known))  # type: ignore[arg-type]
        return known.specialize(expr, self.known)  # type: ignore[return-value]

    def getitem(self, sr: StatementRule, seed: ast.expr) -> ast.expr | None:
        """``x[index]``'s tangents: ``x_dot[:, index]`` where that keeps the batch axis first;
        of a list the function built (its tangent a list of batches), ``x_dot[index]``."""
        index = sr.atoms.get("index")
        base = sr.atoms.get("a")
        if index is not None and isinstance(base, ir.Var) and base.name in self.facts.lists:
            return ast.Subscript(value=seed, slice=ir.atom_to_ast(index), ctx=ast.Load())
        if index is None or self.index_arrays(index) > 1:
            return None
        return ast.Subscript(value=seed, slice=self.batched_index(index), ctx=ast.Load())

    def index_arrays(self, index: ir.Atom) -> int:
        """How many items of ``index`` are arrays (two index arrays apart would move their axes
        before the batch axis); more than any index has where a name's kind is not known."""
        items = _items(index)
        count = 0
        for item in items:
            if isinstance(item, ir.Slc) or (
                isinstance(item, ir.Const)
                and (item.value is None or item.value is Ellipsis or type(item.value) is int)
            ):
                continue
            known = self.known.get(item.name) if isinstance(item, ir.Var) else None
            if known is None and not isinstance(item, ir.Const):
                return len(items) + 2  # (a name of no known kind may hold a tuple of indices)
            if known is not None and not known[0] and np.dtype(known[1]).kind in "iu":
                continue
            count += 1
        return count

    def per_tangent(
        self,
        sr: StatementRule,
        seeds: list[tuple[str, ast.expr]],
        values: list[str],
        wanted: list[bool],
    ) -> list[ast.expr | None]:
        """The one-tangent templates run once per tangent of the batch, stacked: one stack
        per ``wanted`` result (of a function with several, only the differentiated ones:
        another's template may refuse when it runs, as in the one-tangent code)."""
        w = self.w
        self.looped.append(sr.prim.name)
        parts = [self.namer.fresh(f"{v}_parts") if want else "" for v, want in zip(values, wanted)]
        k = self.namer.fresh("k")
        for p in parts:
            if p:
                w.stmt(ir.assign(p, ast.List(elts=[], ctx=ast.Load())))
        w.open(f"for {k} in range({self.batch}):")
        totals: list[ast.expr | None] = [None] * len(values)
        for param, seed in seeds:
            if isinstance(seed, ast.Tuple):  # a sequence's tangents (constants' zeros as is)
                seed_k: ast.expr = ast.Tuple(
                    elts=[
                        e.value if isinstance(e, ast.Starred) else self.item(e, k)
                        for e in seed.elts
                    ],
                    ctx=ast.Load(),
                )
            elif self.is_list(seed):  # [item[k] for item in the list's tangents]
                e = self.namer.fresh("item")
                seed_k = ast.ListComp(
                    elt=self.item(name(e), k),
                    generators=[
                        ast.comprehension(
                            target=ast.Name(id=e, ctx=ast.Store()), iter=seed, ifs=[], is_async=0
                        )
                    ],
                )
            else:
                seed_k = self.item(seed, k)
            pre, expr = sr.expand("jvp", param, seed_k)
            for s in pre:
                w.stmt(s)
            if sr.prim.outputs is None:
                items = [expr]
            elif isinstance(expr, ast.Tuple) and len(expr.elts) == len(values):
                items = list(expr.elts)
            else:
                held = self.namer.fresh(f"{values[0]}_dots")
                w.stmt(ir.assign(held, expr))
                items = [
                    ast.Subscript(value=name(held), slice=ast.Constant(j), ctx=ast.Load())
                    for j in range(len(values))
                ]
            totals = [
                item if total is None else add(total, item)
                for total, item in zip(totals, items, strict=True)
            ]
        for p, total, value in zip(parts, totals, values, strict=True):
            if not p:
                continue
            assert total is not None
            item = call("np.broadcast_to", total, self.batch_shape(value, batch=False))
            method = ast.Attribute(value=name(p), attr="append", ctx=ast.Load())
            w.stmt(ast.Expr(value=ast.Call(func=method, args=[item], keywords=[])))
        w.close()
        return [call("np.stack", name(p)) if p else None for p in parts]


# the length of the batch axis where the code is written (not known then): a prime no real
# axis is likely to have, so that shapes with it are equal only where both have the batch
# axis (and small enough for NumPy's shape arithmetic: np.broadcast_shapes)
_BATCH_AXIS = 999_983


def _with_seeds(gen: _Batched) -> dict[str, tuple[tuple[int, ...], str]]:
    """What is known of the values when writing, and of the tangents given for float64
    arguments: ``(k, *x.shape)``, float64 (``jacfwd``, ``hessian`` and the solvers' batched
    callbacks pass their bases and sensitivities in the argument's floating dtype), so that
    :func:`~adgen.backend.codeopt.reuse_buffers.reuse_buffers` can write the tangents'
    arithmetic into the tangents' own arrays."""
    known = dict(gen.known)
    for x in gen.wrt:
        kind = gen.known.get(x)
        if kind is not None and isinstance(kind[0], tuple) and np.dtype(kind[1]) == np.float64:
            known[gen.tangent_of(x)] = ((_BATCH_AXIS, *kind[0]), "float64")
    return known


def forward_batched(
    fn: ir.Function,
    wrt: list[str],
    scalars: frozenset[str] = frozenset(),
    signature: Signature = (),
    fuse: bool = True,
) -> Generated:
    """The batched JVP of ``fn`` w.r.t. ``wrt``, made for the shapes of ``signature``;
    :class:`NotBatched` where this mode does not apply."""
    gen = _Batched(fn, wrt, scalars, signature)
    title = "batched forward mode (k Jacobian-vector products at once)"
    generated = emit_function(gen, "jvps", title, fuse, reuse=False)
    source = drop_dead(generated.source)
    if fuse and reuse_buffers.applies(gen.known):
        # (as large as reuse_buffers asks with as many tangents as the argument has numbers:
        # jacfwd's and hessian's batches, in code written for the batch axis' stand-in)
        size = math.prod(gen.known.get(gen.wrt[0], ((1,), ""))[0] or (1,))
        least = reuse_buffers.MIN_BYTES * _BATCH_AXIS // max(size, 1)
        source = reuse_buffers.reuse_buffers(source, _with_seeds(gen), least)
    generated = Generated(generated.name, generated.params, source, generated.restoring)
    if gen.looped:
        note = ", ".join(sorted(set(gen.looped)))
        first, rest = generated.source.split("\n", 1)
        source = f"{first}\n# adgen: run once per tangent (no batched rule): {note}\n{rest}"
        generated = Generated(generated.name, generated.params, source, generated.restoring)
    return generated
