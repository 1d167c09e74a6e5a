"""Forward mode: emit a function computing the primal and its tangent together.

For ``f(x, y)`` differentiated w.r.t. ``x`` the generated ``f_jvp(x, y, x_dot)``
returns ``(f(x, y), J_x f . x_dot)``. Only values that depend on a
differentiated input get a tangent (activity analysis); each original line's
primal and tangent statements stand together under a comment quoting it.

>>> import numpy as np
>>> from adgen.parse import parse_function
>>> from adgen.lower import lower
>>> def f(x1, x2):
...     return np.log(x1) + x1 * x2 - np.sin(x2)
>>> print(forward(lower(parse_function(f)), ["x1"]).source)  # doctest: +ELLIPSIS
# adgen: forward mode (Jacobian-vector product) of f (<doctest ...>:1) w.r.t. x1
def f_jvp(x1, x2, x1_dot):
    # line 2: return np.log(x1) + x1 * x2 - np.sin(x2)
    out_1 = np.log(x1)
    out_1_dot = x1_dot / x1
    out_2 = x1 * x2
    out_2_dot = x1_dot * x2
    out_3 = out_1 + out_2
    out_3_dot = out_1_dot + out_2_dot
    out_4 = np.sin(x2)
    out = out_3 - out_4
    return (out, out_3_dot)
<BLANKLINE>
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from . import ir
from .emit import CodeWriter
from .errors import UnsupportedSyntaxError
from .expand import StatementRule, add, call, loc_of, name, source_text
from .names import Namer
from .shapes import broadcast_classes


@dataclass
class Generated:
    """A generated function: its name, parameters and source text."""

    name: str
    params: list[str]
    source: str


def refuse_control_flow(fn: ir.Function, stmt: ir.Stmt, mode: str) -> None:
    if isinstance(stmt, (ir.If, ir.For, ir.While)):
        raise UnsupportedSyntaxError(
            f"{mode} mode does not support control flow yet",
            loc_of(fn, stmt.line),
            "use np.where for elementwise choices and array operations instead of loops",
        )


def forward(fn: ir.Function, wrt: list[str], scalars: frozenset[str] = frozenset()) -> Generated:
    namer = Namer(fn.user_names | set(fn.free))
    classes = broadcast_classes(fn, scalars)
    active: set[str] = set(wrt)
    tangent = {p: namer.tangent(p) for p in wrt}
    gen_name = namer.claim(f"{fn.name}_jvp")
    params = fn.params + [tangent[p] for p in wrt]
    w = CodeWriter()
    w.comment(
        f"adgen: forward mode (Jacobian-vector product) of {fn.name} "
        f"({os.path.basename(fn.filename)}:{fn.firstlineno}) w.r.t. {', '.join(wrt)}"
        + (f"; for scalar {', '.join(p for p in fn.params if p in scalars)}" if scalars else "")
    )
    w.open(f"def {gen_name}({', '.join(params)}):")
    for stmt in fn.body:
        refuse_control_flow(fn, stmt, "forward")
        w.source_comment(stmt.line, source_text(fn, stmt.line))
        if isinstance(stmt, ir.Return):
            value = stmt.value
            if isinstance(value, ir.Var) and value.name in active:
                dot: ast.expr = name(tangent[value.name])
            else:
                value_ast = ir.atom_to_ast(value)
                dot = call(
                    "np.zeros_like",
                    value_ast,
                    dtype=call("np.result_type", ir.atom_to_ast(value), ast.Constant(0.0)),
                )
            w.stmt(ast.Return(value=ast.Tuple(elts=[ir.atom_to_ast(value), dot], ctx=ast.Load())))
            continue
        assert isinstance(stmt, ir.Assign)
        w.stmt(ir.stmt_to_ast(stmt))
        if not stmt.prim.differentiable:
            continue
        sr = StatementRule(stmt, namer, loc_of(fn, stmt.line))
        sr.refuse_nondifferentiable_inputs(active)
        inputs = sr.active_params(active)
        if not inputs:
            continue
        if len(stmt.targets) != 1:
            raise UnsupportedSyntaxError(
                f"{stmt.prim.name} with several results has no forward rule yet",
                loc_of(fn, stmt.line),
            )
        total: ast.expr | None = None
        for param, var in inputs:
            pre, expr = sr.expand("jvp", param, tangent[var])
            for s in pre:
                w.stmt(s)
            total = expr if total is None else add(total, expr)
        assert total is not None
        target = stmt.targets[0]
        if sr.tangent_needs_broadcast([p for p, _ in inputs], classes):
            total = call("np.broadcast_to", total, call("np.shape", name(target)))
        active.add(target)
        if isinstance(total, ast.Name):
            tangent[target] = total.id  # no copy: the tangent *is* that value
            continue
        tangent[target] = namer.tangent(target)
        w.stmt(ir.assign(tangent[target], total))
    w.close()
    return Generated(gen_name, params, w.render())
