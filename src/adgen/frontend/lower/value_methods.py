# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Methods of Python values that only read them: a string's (``which.startswith("lin")``)
and a number's (``(n - 1).bit_length()``), evaluated when transforming where the value is
known then, else run as written with the program.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import gast

from adgen import ir
from adgen.errors import UnsupportedSyntaxError
from adgen.frontend.lower.state import LowererState
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class ValueMethodsMixin(LowererState):
    """Methods of strings and numbers."""

    def value_method(
        self: Lowerer, node: gast.Call, func: gast.Attribute, target: str | None, hint: str
    ) -> ir.Atom | None:
        """A string's or a number's method (:meth:`string_method`, :meth:`number_method`);
        None for any other call."""
        folded = self.string_method(node, func)
        return folded if folded is not None else self.number_method(node, func, target, hint)

    def string_method(self: Lowerer, node: gast.Call, func: gast.Attribute) -> ir.Atom | None:
        """``which.startswith("lin")`` of a string known when transforming (an option's
        constant), with constant arguments: its value, now (a string's methods only read).
        None for any other call."""
        if func.attr not in registry.STRING_METHODS or not isinstance(
            func.value, (gast.Name, gast.Constant)
        ):
            return None
        if isinstance(func.value, gast.Name) and func.value.id not in self.env:
            return None
        owner = self.settled(self.expr(func.value, None, "text"))
        if not (isinstance(owner, ir.Const) and isinstance(owner.value, str)):
            return None
        if any(isinstance(a, gast.Starred) for a in node.args) or any(
            kw.arg is None for kw in node.keywords
        ):
            return None
        args = [self.settled(self.expr(a, None, "arg")) for a in node.args]
        kwargs = {kw.arg: self.settled(self.expr(kw.value, None, kw.arg)) for kw in node.keywords}
        if not all(isinstance(a, ir.Const) for a in [*args, *kwargs.values()]):
            return None
        try:
            value = getattr(owner.value, func.attr)(
                *(a.value for a in args),  # type: ignore[union-attr]
                **{k: v.value for k, v in kwargs.items()},  # type: ignore[union-attr]
            )
        except Exception:
            return None  # (Python's error is raised where the code runs)
        if value is None or isinstance(value, (str, bool, int)):
            return ir.Const(value)
        return None

    def number_method(
        self: Lowerer, node: gast.Call, func: gast.Attribute, target: str | None, hint: str
    ) -> ir.Atom | None:
        """``(quotient - 1).bit_length()``, ``x.is_integer()``: a method of a Python number
        that only reads it (:data:`registry.NUMBER_METHODS`). Its value now where the number
        is known when transforming; else run as written with the program (a length the
        arguments' shapes decide), refused only where a differentiated value reaches it.
        None for any other call."""
        kinds = registry.NUMBER_METHODS.get(func.attr)
        if kinds is None or node.args or node.keywords:
            return None
        if isinstance(func.value, gast.Name) and func.value.id not in self.env:
            return None
        owner = self.settled(self.expr(func.value, None, "number"))
        if isinstance(owner, ir.Const) and type(owner.value) in kinds:
            return ir.Const(getattr(owner.value, func.attr)())
        load = ast.Load()
        method = ast.Attribute(value=ast.Name(id="__adgen_0", ctx=load), attr=func.attr, ctx=load)
        refusal = UnsupportedSyntaxError(
            f"adgen does not differentiate `.{func.attr}()` of a differentiated number",
            self.parsed.loc(func),
            "compute it from values you do not differentiate",
        )
        template = ast.Call(func=method, args=[], keywords=[])
        prim = registry.as_written(template, f".{func.attr}", refusal)
        return self.emit(target, hint, prim, [owner], [], node)
