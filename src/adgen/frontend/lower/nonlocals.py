# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""``nonlocal`` names of a nested ``def`` (issue 34: real programs as written).

A nested function adgen inlines where it is called writes a variable of the function it is
defined in (``nonlocal idx; ... idx += n``, a counter that walks a parameter vector as
ADBench's GMM objective does). That variable is one IR name in the enclosing function
(:meth:`~adgen.frontend.lower.state.LowererState` gives every name a nested ``def`` declares
``nonlocal`` one, since each call may rebind it, in a loop or a comprehension), and the nested
function's assignments bind it there, its reads read it there. ``v += e`` binds ``v + e``: a
number's new value; an array would be updated in place, which adgen checks when the code runs
(refused, naming the name).

>>> import numpy as np
>>> import adgen
>>> def columns(d, theta):
...     idx = 0
...     def take(n):
...         nonlocal idx
...         part = theta[idx:idx + n]
...         idx += n
...         return part
...     return np.concatenate([take(k + 1) for k in range(d)])
>>> adgen.grad(lambda t: np.sum(columns(2, t) ** 2))(np.array([1.0, 2.0, 3.0]))
array([2., 4., 6.])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir
from adgen.frontend.lower.state import LowererState
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class NonlocalsMixin(LowererState):
    """Assignments to names a nested function declares ``nonlocal``."""

    def nonlocal_owner(self: Lowerer, name: str) -> Lowerer:
        """The Lowerer of the function whose variable ``name`` is (the nearest enclosing
        function that binds it); refused if none does."""
        owner = self.enclosing
        while owner is not None and name not in owner.multi:
            owner = owner.enclosing
        if owner is None:
            self.refuse(
                self.current,
                f"`nonlocal {name}` of a name no enclosing function binds",
                "bind it in the function that defines this one",
            )
        return owner

    def assign_nonlocal(self: Lowerer, stmt: Any) -> bool:
        """``v = e`` or ``v op= e`` of a name this function declares ``nonlocal``: the
        enclosing function's variable bound to the new value. False for any other
        statement."""
        if isinstance(stmt, gast.Assign):
            if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], gast.Name):
                return False
            name, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            name = stmt.target.id
            value = gast.copy_location(
                gast.BinOp(
                    left=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
                    op=stmt.op,
                    right=stmt.value,
                ),
                stmt,
            )
        else:
            return False
        if name not in self.nonlocals:
            return False
        owner = self.nonlocal_owner(name)
        if isinstance(stmt, gast.AugAssign):
            self.check_not_array(owner.env[name], name, stmt)
        atom = self.expr(value, None, name)
        owner.bind(name, owner.new_name(name), atom)
        return True

    def check_not_array(self: Lowerer, old: ir.Atom, name: str, stmt: Any) -> None:
        """``v op= e`` of a nonlocal ``v`` is ``v = v op e`` for a number; an array would be
        updated in place (seen by every name holding it): refused when the code runs."""
        sample = self.argument_sample(old) if isinstance(old, ir.Var) else None
        if isinstance(old, ir.Const) or isinstance(sample, (int, float, np.generic)):
            return
        test = self.emit(
            None,
            "is_array",
            _prim(isinstance),
            [old, self.free_atom("np.ndarray", np.ndarray)],
            [],
            stmt,
        )
        negated = self.emit(None, "cond", _prim(registry.operator.not_), [test], [], stmt)
        op = _SYMBOLS.get(type(stmt.op).__name__, type(stmt.op).__name__)
        what = f"`{name} {op}= ...` of the nonlocal array `{name}` (an update in place)"
        words = (("what", ir.Const(what)), ("hint", ir.Const(f"write `{name} = {name} + ...`")))
        self.block.append(ir.Assign((), registry.ASSERT, (negated,), words, self.line))


_SYMBOLS = {
    "Add": "+", "Sub": "-", "Mult": "*", "Div": "/", "FloorDiv": "//", "Mod": "%", "Pow": "**",
    "MatMult": "@", "BitAnd": "&", "BitOr": "|", "BitXor": "^", "LShift": "<<", "RShift": ">>",
}  # fmt: skip


def _prim(fn: Any) -> registry.Primitive:
    prim = registry.lookup(fn)
    assert prim is not None, fn
    return prim
