# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Early returns on options decided when transforming, before a helper's returns are
structured (issue 34, part 2).

``if not broadcast: return args[0]`` or ``if not args: return args`` at the top of a library
helper, where ``broadcast`` and ``args`` are parameters adgen knows when it inlines the call
(a constant, a tuple of known length): Python runs one side only, so adgen keeps only that
side before it gives the helper's returns a single exit (:meth:`single_exit` would otherwise
bind every ``return``'s value, of every path, to one result name -- refused for a tuple of
differentiated values, or for a function). Only tests that read parameters no statement
before them binds again are tried, each lowered on trial and kept only if it is a constant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.frontend.lower.state import LowererState

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer

# expressions a decided test may be made of (no call: a trial must not run anything)
_PLAIN = (
    gast.Name,
    gast.Constant,
    gast.Compare,
    gast.BoolOp,
    gast.UnaryOp,
    gast.Attribute,
    gast.Load,
    gast.cmpop,
    gast.boolop,
    gast.unaryop,
)


class DecidedMixin(LowererState):
    """``if`` statements of an inlined helper decided by its parameters."""

    def prune_decided(self: Lowerer, stmts: list[Any]) -> list[Any]:
        """``stmts`` (a helper's body) with each top-level ``if`` whose test reads only
        parameters not bound again before it, and is a constant when lowered, replaced by
        the side Python runs (a new list: the function's tree is not changed)."""
        out: list[Any] = []
        stored: set[str] = set()
        for stmt in stmts:
            chosen = self.decided_side(stmt, stored) if isinstance(stmt, gast.If) else None
            if chosen is not None:
                out.extend(self.prune_decided(chosen))
                if out and isinstance(out[-1], gast.Return):
                    return out  # (what follows never runs)
            else:
                out.append(stmt)
            stored |= {
                n.id
                for n in gast.walk(stmt)
                if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
            }
        return out

    def decided_side(self: Lowerer, stmt: gast.If, stored: set[str]) -> list[Any] | None:
        nodes = list(gast.walk(stmt.test))
        names = {n.id for n in nodes if isinstance(n, gast.Name)}
        if not all(isinstance(n, _PLAIN) for n in nodes):
            return None
        spec = self.node.args
        params = {a.id for a in [*spec.posonlyargs, *spec.args, *spec.kwonlyargs]}
        params |= {a.id for a in (spec.vararg, spec.kwarg) if a is not None}
        if not names or not names <= params or names & stored:
            return None
        mark = len(self.block)
        try:
            test = self.expr(stmt.test, None, "cond")
        except Exception:  # (refused here: the `if` is lowered as written, and says why)
            test = None
        del self.block[mark:]  # (a trial: the `if` kept is lowered again where it stands)
        if not isinstance(test, ir.Const):
            return None
        return list(stmt.body if test.value else stmt.orelse)
