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

import dataclasses
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.errors import NoRuleError
from adgen.frontend.lower.objects import StaticArg
from adgen.frontend.lower.state import LowererState
from adgen.rules import registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


# the makers of interpolants adgen follows inside a function: the options it takes, and the
# name of an option that may be passed third, positionally
MAKERS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "CubicSpline": (("bc_type", "extrapolate"), None),
    "PchipInterpolator": (("extrapolate",), None),
    "Akima1DInterpolator": (("extrapolate", "method"), None),
    "make_interp_spline": (("k", "bc_type"), "k"),
    "interp1d": (("kind", "bounds_error", "fill_value", "assume_sorted"), "kind"),
    "BSpline": (("k", "extrapolate"), "k"),
    "RegularGridInterpolator": (("method", "bounds_error", "fill_value"), "method"),
}


@dataclass(frozen=True)
class LocalInterpolant:
    """An interpolant made inside the function (``s = CubicSpline(t, y)``): its maker, its
    knots and data (atoms), its options (a Python literal) and whether it is linear in the
    data; ``nu``: the derivative the program took (``s.derivative(2)``)."""

    maker: str
    t: Any
    y: Any
    options: str
    linear: bool
    nu: int = 0


def _linear(maker: str, options: dict[str, Any]) -> bool:
    """Is the interpolant ``maker`` makes with ``options`` linear in its data? (PCHIP and
    Akima are not; boundary conditions with values, a constant filled outside, a periodic
    spline (its data must repeat) make it affine or constrained.)"""
    if maker in ("PchipInterpolator", "Akima1DInterpolator"):
        return False
    if maker == "RegularGridInterpolator":  # (raising outside, or extrapolating linearly)
        return options.get("method", "linear") == "linear" and (
            options.get("bounds_error", True) is True or options.get("fill_value", 0) is None
        )
    if options.get("bc_type") not in (None, "not-a-knot", "natural", "clamped"):
        return False
    return maker != "interp1d" or options.get("fill_value", "extrapolate") == "extrapolate"


def _constant(node: Any) -> tuple[Any] | None:
    """``(value,)`` of an option written as a literal (``'natural'``, ``(1, 0.5)``,
    ``((1, 0.0), (2, -1.0))``), else None."""
    if isinstance(node, gast.Constant):
        return (node.value,)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        inner = _constant(node.operand)
        if inner is None or not isinstance(inner[0], (int, float)):
            return None
        return (-inner[0] if isinstance(node.op, gast.USub) else inner[0],)
    if isinstance(node, (gast.Tuple, gast.List)):
        items = [_constant(e) for e in node.elts]
        if any(item is None for item in items):
            return None
        return (tuple(item[0] for item in items if item is not None),)
    return None


class InterpolantsMixin(LowererState):
    """Calls of SciPy's interpolation objects made outside."""

    def derived_interpolant(self: Lowerer, node: gast.Call) -> Any:
        """What ``node`` makes, called at once: ``cs.derivative(n)`` of an interpolant (made
        outside: that interpolant, made now; made inside: a :class:`LocalInterpolant` of a
        higher order), or ``CubicSpline(t, y)`` (a :class:`LocalInterpolant`); else None."""
        made = self.made_interpolant(node)
        if made is not None:
            return made
        func = node.func
        if not (
            isinstance(func, gast.Attribute)
            and func.attr in ("derivative", "antiderivative")
            and not node.keywords
            and all(isinstance(a, gast.Constant) and type(a.value) is int for a in node.args)
        ):
            return None
        ok, base = self.static_object(func.value)
        orders = [a.value for a in node.args]
        if ok and isinstance(base, LocalInterpolant):
            if func.attr == "antiderivative":
                self.refuse(node, f"the antiderivative of a `{base.maker}` made inside")
            return dataclasses.replace(base, nu=base.nu + (orders[0] if orders else 1))
        family = rt.interp_support(base) if ok else None
        if family is None or family[0] not in ("ppoly", "bspline"):
            return None
        return getattr(base, func.attr)(*orders)

    def interpolant_static(self: Lowerer, node: Any) -> StaticArg | None:
        """``s = CubicSpline(t, y)``: the name means the interpolant made there (only in an
        assignment: passed to a function, it is run as written, a value)."""
        made = self.made_interpolant(node)
        return None if made is None else StaticArg(made)

    def interpolant_value(self: Lowerer, node: gast.Name, local: Any) -> ir.Atom:
        """``s`` of ``s = CubicSpline(t, y)`` used as a value (passed to a function): the
        interpolant made where it is used, ``rt.interp_made(t, y, maker, options)``, whose
        derivative w.r.t. the data adgen refuses by name."""
        if local.nu:
            self.refuse(node, f"passing on a derivative of the `{local.maker}` `{node.id}`")
        prim = registry.lookup(rt.interp_made)
        assert prim is not None
        call = [local.t, local.y, ir.Const(local.maker), ir.Const(local.options)]
        return self.emit(None, node.id, prim, call, [], node)

    def made_interpolant(self: Lowerer, node: Any) -> LocalInterpolant | None:
        """``CubicSpline(t, y, bc_type="natural")`` (a maker of :data:`MAKERS`): its data
        lowered once, where the program makes it, and its options (constants); else None."""
        if not isinstance(node, gast.Call) or not isinstance(
            node.func, (gast.Name, gast.Attribute)
        ):
            return None
        made = self.interpolants.get(id(node))
        if made is not None:
            return made
        try:
            ok, maker = self.static_object(node.func)
        except Exception:
            return None
        si = sys.modules.get("scipy.interpolate")
        name = getattr(maker, "__name__", "")
        if not ok or si is None or name not in MAKERS or getattr(si, name, None) is not maker:
            return None
        takes, third = MAKERS[name]
        if (
            len(node.args) < 2
            or len(node.args) > 2 + (third is not None)
            or any(isinstance(a, gast.Starred) for a in node.args)
        ):
            self.refuse(node, f"this call of `{name}` (adgen reads `{name}(x, y, ...)`)")
        options: dict[str, Any] = {}
        given = [(third, node.args[2])] if len(node.args) == 3 else []
        for key, value in [*given, *((kw.arg, kw.value) for kw in node.keywords)]:
            if key is None:
                self.refuse(node, f"`**kwargs` in a call of `{name}` made inside the function")
            known = _constant(value)
            if key not in takes or known is None:
                self.refuse(
                    value,
                    f"the option `{key}` of `{name}` made inside the function (adgen takes "
                    f"{', '.join(f'`{k}`' for k in takes)}, each a constant)",
                    "make the interpolant outside the function, or use the options listed",
                )
            options[str(key)] = known[0]
        linear = _linear(name, options)
        t = self.expr(node.args[0], None, "knots")
        y = self.expr(node.args[1], None, "data")
        made = self.interpolants[id(node)] = LocalInterpolant(name, t, y, repr(options), linear)
        return made

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
        local = obj if isinstance(obj, LocalInterpolant) else None
        kind = local.maker if local is not None else type(obj).__name__
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
        if local is not None and grid:  # made inside: linear in the values
            helper: Any = rt.grid_fit if local.linear else rt.grid_fit_at
            call = [local.t, local.y, args[0], ir.Const(local.options)]
        elif local is not None:  # made inside: the data, then how it is made
            helper = rt.interp_fit if local.linear else rt.interp_fit_at
            order = ir.Const(nu.value + local.nu)
            call = [local.t, local.y, args[0], ir.Const(kind), ir.Const(local.options), order]
        else:
            helper = rt.grid_value if grid else rt.interp_value
            held = self.value_atom(obj, "interpolant")
            call = [held, args[0]] if grid else [held, args[0], nu]
        prim = registry.lookup(helper)
        assert prim is not None, helper
        return self.emit(target, hint, prim, call, [], node)

    def interpolant_family(self: Lowerer, fn: Any) -> tuple[str, str] | None:
        """What :func:`adgen.runtime.interp_support` says of ``fn``, an interpolant made
        outside; for one made inside (:class:`LocalInterpolant`) the family its maker makes."""
        if isinstance(fn, LocalInterpolant):
            families = {"interp1d": "interp1d", "RegularGridInterpolator": "grid"}
            return families.get(fn.maker, "ppoly"), ""
        return rt.interp_support(fn)
