"""Derivatives taken inside the function being differentiated (nested AD).

A function may itself call ``adgen.grad``, ``adgen.value_and_grad`` or ``adgen.jvp`` on a
lambda or nested ``def`` that reads the outer function's variables::

    def f(x):
        return adgen.grad(lambda y: x * y)(2.0)      # d/dy (x * y) = x

The inner function is *lifted*: the variables it reads from the outer function become extra
parameters (``def lam(y, x): return x * y``), adgen writes its derivative w.r.t. its own
parameters only, and that generated code is inlined into the outer function like any other
call. The outer derivative then differentiates the inner derivative's code: the inner and
outer perturbations can never be confused, because each derivative is code over named
variables, not a tagged number (see the AD survey's discussion of perturbation confusion).
"""

from __future__ import annotations

from typing import Any

import gast

from adgen.frontend.parse import ParsedFunction, plain_arguments


def free_names(fdef: Any) -> list[str]:
    """Names ``fdef`` reads but neither takes as a parameter nor binds, in order of use."""
    params = {a.id for a in fdef.args.args}
    stored = {
        n.id
        for stmt in fdef.body
        for n in gast.walk(stmt)
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))
    }
    seen: list[str] = []
    for stmt in fdef.body:
        for n in gast.walk(stmt):
            if (
                isinstance(n, gast.Name)
                and isinstance(n.ctx, gast.Load)
                and n.id not in params
                and n.id not in stored
                and n.id not in seen
            ):
                seen.append(n.id)
    return seen


def lifted(fdef: Any, captured: list[str], outer: ParsedFunction) -> ParsedFunction:
    """``fdef`` with the captured variables as extra parameters, read from the outer file."""
    args = plain_arguments([*fdef.args.args, *captured])
    node = gast.FunctionDef(
        name=fdef.name,
        args=args,
        body=list(fdef.body),
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    gast.copy_location(node, fdef)
    return ParsedFunction(
        node=node,
        name=fdef.name,
        filename=outer.filename,
        line_offset=outer.line_offset,
        col_offset=outer.col_offset,
        lines=outer.lines,
        scope=outer.scope,
    )
