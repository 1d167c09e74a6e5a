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
    out_2 = x1 * x2
    out_3 = out_1 + out_2
    del out_2
    out_4 = np.sin(x2)
    out = out_3 - out_4
    del out_3
    # adjoint of line 2: return np.log(x1) + x1 * x2 - np.sin(x2)
    out_4_bar = rt.unbroadcast(-out_bar, out_4)
    x2_bar = out_4_bar * np.cos(x2)
    out_1_bar = rt.unbroadcast(out_bar, out_1)
    x1_bar = rt.unbroadcast(out_bar * x2, x1)
    x2_bar = x2_bar + rt.unbroadcast(out_bar * x1, x2)
    x1_bar = x1_bar + out_1_bar / x1
    return (out, (x1_bar, x2_bar))
<BLANKLINE>
"""

from __future__ import annotations

import ast
import os

from . import ir
from .emit import CodeWriter
from .errors import UnsupportedSyntaxError
from .expand import StatementRule, add, call, loc_of, name, source_text
from .forward import Generated, refuse_control_flow
from .names import Namer
from .shapes import Classes, broadcast_classes


def _activity(fn: ir.Function, wrt: list[str]) -> tuple[set[str], set[str]]:
    """(depends on an input, and reaches the result) for straight-line code."""
    varied = set(wrt)
    assigns = [s for s in fn.body if isinstance(s, ir.Assign)]
    for s in assigns:
        if s.prim.differentiable and StatementRule.varied_inputs(s, varied):
            varied.update(s.targets)
    ret = next(s for s in fn.body if isinstance(s, ir.Return))
    useful = set(ir.atom_vars(ret.value)) & varied
    for s in reversed(assigns):
        if useful.intersection(s.targets) and s.prim.differentiable:
            useful.update(v for v in StatementRule.varied_inputs(s, varied))
    return varied, useful


def _forward_sweep(w: CodeWriter, fn: ir.Function, keep: set[str], classes: Classes) -> None:
    """The primal statements; each value the adjoint sweep does not read is deleted after its
    last use (unless it is a scalar), so the sweep keeps only what the adjoint needs."""
    body = [s for s in fn.body if isinstance(s, ir.Assign)]
    last_use: dict[str, int] = {}
    for i, stmt in enumerate(body):
        for t in stmt.targets:
            last_use[t] = i
        for atom in ir.stmt_args(stmt):
            for v in ir.atom_vars(atom):
                last_use[v] = i
    dead: dict[int, list[str]] = {}
    for v, i in last_use.items():
        if v not in keep and classes.get(v, frozenset({v})):
            dead.setdefault(i, []).append(v)
    for i, stmt in enumerate(body):
        w.source_comment(stmt.line, source_text(fn, stmt.line))
        w.stmt(ir.stmt_to_ast(stmt))
        if i in dead:
            names: list[ast.expr] = [ast.Name(id=v, ctx=ast.Del()) for v in sorted(dead[i])]
            w.stmt(ast.Delete(targets=names))
    ret = fn.body[-1]
    if isinstance(ret, ir.Return) and ret.line != (body[-1].line if body else None):
        w.source_comment(ret.line, source_text(fn, ret.line))


def reverse(fn: ir.Function, wrt: list[str], scalars: frozenset[str] = frozenset()) -> Generated:
    for stmt in fn.body:
        refuse_control_flow(fn, stmt, "reverse")
    namer = Namer(fn.user_names | set(fn.free))
    classes = broadcast_classes(fn, scalars)
    varied, useful = _activity(fn, wrt)
    ret = next(s for s in fn.body if isinstance(s, ir.Return))
    if not isinstance(ret.value, (ir.Var, ir.Const, ir.Free)):
        raise UnsupportedSyntaxError(
            "reverse mode of a function returning a tuple is not supported yet",
            loc_of(fn, ret.line),
            "differentiate one result at a time",
        )
    out_name = ret.value.name if isinstance(ret.value, ir.Var) else "out"
    seed = namer.adjoint(out_name)
    gen_name = namer.claim(f"{fn.name}_vjp")
    params = fn.params + [seed]
    w = CodeWriter()
    w.comment(
        f"adgen: reverse mode (vector-Jacobian product) of {fn.name} "
        f"({os.path.basename(fn.filename)}:{fn.firstlineno}) w.r.t. {', '.join(wrt)}"
        + (f"; for scalar {', '.join(p for p in fn.params if p in scalars)}" if scalars else "")
    )
    w.open(f"def {gen_name}({', '.join(params)}):")
    sweep = CodeWriter()  # the adjoint sweep, written first to learn what it reads
    sweep.depth = w.depth
    # var -> the name holding its adjoint so far (its own `v_bar`, or an alias of
    # another adjoint when its only contribution so far was that name)
    adjoint: dict[str, str] = {}
    if isinstance(ret.value, ir.Var) and ret.value.name in useful:
        adjoint[ret.value.name] = seed

    for stmt in reversed(fn.body):
        if not isinstance(stmt, ir.Assign) or not stmt.prim.differentiable:
            continue
        if not any(t in adjoint for t in stmt.targets):
            continue
        if len(stmt.targets) != 1:
            raise UnsupportedSyntaxError(
                f"{stmt.prim.name} with several results has no reverse rule yet",
                loc_of(fn, stmt.line),
            )
        sr = StatementRule(stmt, namer, loc_of(fn, stmt.line))
        sr.refuse_nondifferentiable_inputs(varied)
        g = adjoint[stmt.targets[0]]
        for param, var in sr.active_params(useful):
            pre, expr = sr.expand("vjp", param, g)
            if pre:
                sweep.source_comment(
                    stmt.line, source_text(fn, stmt.line), prefix="adjoint of line"
                )
            for s in pre:
                sweep.stmt(s)
            if sr.cotangent_needs_unbroadcast(param, classes):
                expr = call("rt.unbroadcast", expr, name(var))
            if var in adjoint:
                expr = add(name(adjoint[var]), expr)
            elif isinstance(expr, ast.Name):
                adjoint[var] = expr.id  # no copy: the adjoint *is* that value
                continue
            adjoint[var] = namer.adjoint(var)
            sweep.source_comment(stmt.line, source_text(fn, stmt.line), prefix="adjoint of line")
            sweep.stmt(ir.assign(adjoint[var], expr))
    keep = sweep.reads | set(ir.atom_vars(ret.value)) | set(fn.params)
    _forward_sweep(w, fn, keep, classes)
    w.extend(sweep)
    grads: list[ast.expr] = []
    for p in wrt:
        if p in adjoint:
            grads.append(name(adjoint[p]))
        else:
            grads.append(call("np.zeros_like", name(p)))
    result = ast.Tuple(
        elts=[ir.atom_to_ast(ret.value), ast.Tuple(elts=grads, ctx=ast.Load())], ctx=ast.Load()
    )
    w.stmt(ast.Return(value=result))
    w.close()
    return Generated(gen_name, params, w.render())
