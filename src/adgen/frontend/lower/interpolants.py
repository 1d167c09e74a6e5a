# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Calls of SciPy's interpolants made outside the differentiated function (issue 35, item
4): ``cs(x)``, ``cs(x, nu)``, ``cs.derivative(n)(x)`` of ``cs = CubicSpline(t, y)`` (a
``PPoly``, ``BSpline``, ``interp1d``, ``RegularGridInterpolator``: what
:func:`adgen.runtime.interp_support` accepts) become a call of ``rt.interp_value(cs, x, nu)``
(``rt.grid_value(cs, x)``), the object a constant of the derivative, whose rules
(:mod:`adgen.rules.interpolate`) differentiate w.r.t. the points."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.errors import NoRuleError
from adgen.frontend.lower.state import LowererState
from adgen.rules import registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class InterpolantsMixin(LowererState):
    """Calls of SciPy's interpolation objects made outside."""

    def derived_interpolant(self: Lowerer, node: gast.Call) -> Any:
        """``cs.derivative(n)`` (``antiderivative``) of a SciPy interpolant made outside, the
        order a number: that interpolant, made now; else None."""
        func = node.func
        if not (
            isinstance(func, gast.Attribute)
            and func.attr in ("derivative", "antiderivative")
            and not node.keywords
            and all(isinstance(a, gast.Constant) and type(a.value) is int for a in node.args)
        ):
            return None
        ok, base = self.static_object(func.value)
        family = rt.interp_support(base) if ok else None
        if family is None or family[0] not in ("ppoly", "bspline"):
            return None
        return getattr(base, func.attr)(*(a.value for a in node.args))

    def interpolant_call(
        self: Lowerer,
        node: gast.Call,
        obj: Any,
        family: tuple[str, str],
        args: list[Any],
        kwargs: list[tuple[str, Any]],
        target: str | None,
        hint: str,
    ) -> ir.Atom:
        """``s(x)``, ``s(x, nu)`` of a SciPy interpolant ``s`` made outside the function (a
        constant of the derivative): ``rt.interp_value(s, x, nu)`` (``rt.grid_value(s, x)``
        for a ``RegularGridInterpolator``), differentiated w.r.t. the points
        (:mod:`adgen.rules.interpolate`)."""
        kind = type(obj).__name__
        if not family[0]:
            raise NoRuleError(
                f"adgen does not differentiate a call of {family[1]}",
                self.parsed.loc(node),
                "use a CubicSpline, PchipInterpolator, Akima1DInterpolator, BSpline, interp1d "
                "('linear', 'slinear', 'quadratic', 'cubic') or a linear "
                "RegularGridInterpolator, or write the interpolation with NumPy",
            )
        named = dict(kwargs)
        nu = named.pop("nu", args[1] if len(args) == 2 else ir.Const(0))
        grid = family[0] == "grid"
        accepted = 1 if grid or family[0] == "interp1d" else 2
        if not args or len(args) > accepted or named or (grid and "nu" in dict(kwargs)):
            self.refuse(
                node,
                f"this call of a `{kind}` (adgen differentiates `s(x)`"
                + ("" if accepted == 1 else ", `s(x, nu)`")
                + ", without other options)",
                "make the interpolant with the options you need (extrapolate=...) outside",
            )
        if not (isinstance(nu, ir.Const) and type(nu.value) is int and nu.value >= 0):
            self.refuse(
                node,
                f"a derivative order `nu` of a `{kind}` that is not a constant integer",
                "write the order as a number (`s(x, 1)`)",
            )
        helper = rt.grid_value if grid else rt.interp_value
        prim = registry.lookup(helper)
        assert prim is not None, helper
        held = self.value_atom(obj, "interpolant")
        call = [held, args[0]] if grid else [held, args[0], nu]
        return self.emit(target, hint, prim, call, [], node)
