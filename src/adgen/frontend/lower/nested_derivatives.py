# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower adgen called inside the function: nested derivatives.

``adgen.grad(F, wrt)(args)`` (and ``value_and_grad``), ``adgen.jvp(F, primals, tangents)`` and
``out, pullback = adgen.vjp(F, *primals)`` inside the differentiated function: F's generated
derivative code, inlined (see :mod:`adgen.frontend.nested`); the outer variables F reads become
extra
parameters of it.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import gast

from adgen import ir, seam, trees
from adgen.errors import InternalError
from adgen.frontend import nested
from adgen.frontend.lower.calls import LocalFunction, LocalPullback
from adgen.frontend.lower.state import LowererState, _tree_atom
from adgen.frontend.parse import LiveScope, ParsedFunction, as_def
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class NestedDerivativesMixin(LowererState):
    """adgen.grad, jvp and vjp called inside the function."""

    # -- adgen called inside the function: nested derivatives ----------------------------------
    def nested_function(
        self: Lowerer, node: Any, f: Any
    ) -> tuple[ParsedFunction, list[str], list[str]]:
        """The function ``f`` differentiated inside: its lifted form (the outer variables it
        reads become extra parameters), its own parameters, and those outer variables."""
        if not isinstance(self.root.parsed.scope, LiveScope):
            self.refuse(node, "adgen.grad / adgen.jvp inside a function read statically")
        if isinstance(f, gast.Lambda):
            fdef = as_def(f, "lam")
        elif isinstance(f, gast.Name) and isinstance(
            local := self.local_functions.get(f.id), LocalFunction
        ):
            if local.enclosing is not self:  # passed in: it reads another function's names
                self.refuse(
                    f,
                    f"differentiating `{f.id}` here: a local function passed as an argument",
                    "differentiate it where it is defined, or make it a module-level function",
                )
            fdef = local.node
        else:
            ok, obj = self.static_object(f)
            if not (ok and isinstance(obj, types.FunctionType)):
                self.refuse(
                    f,
                    "differentiating this function inside another",
                    "pass a lambda, a nested def or a module-level function",
                )
            parsed, _ = self.callee(obj, f)  # module-level: reads no outer variables
            return parsed, [a.id for a in parsed.node.args.args], []
        if fdef.args.defaults or fdef.args.vararg or fdef.args.kwarg or fdef.args.kwonlyargs:
            self.refuse(fdef, "defaults, *args or **kwargs on a function differentiated inside")
        captured = [c for c in nested.free_names(fdef) if self.sees(c)]
        for c in captured:
            lowerer: Lowerer | None = self
            while lowerer is not None:
                if c in lowerer.local_functions:
                    self.refuse(
                        f,
                        f"a function differentiated inside that calls the local function `{c}`",
                        "make that helper a module-level function",
                    )
                lowerer = lowerer.enclosing
        params = [a.id for a in fdef.args.args]
        return nested.lifted(fdef, captured, self.parsed), params, captured

    def outer_values(self: Lowerer, captured: list[str]) -> list[ir.Atom]:
        return [
            self.name(gast.Name(id=c, ctx=gast.Load(), annotation=None, type_comment=None))
            for c in captured
        ]

    def nested_code(
        self: Lowerer,
        lifted: ParsedFunction,
        mode: str,
        params: list[str],
        atoms: list[Any],
        wrt: list[str],
        whole: Collection[str] = (),
    ) -> tuple[Any, list[ir.Atom]]:
        """The derivative code of the lifted function for its arguments ``atoms`` (one per
        parameter of ``params``, its own and the outer variables'): a tuple, list or dict
        known item by item among them (``args=(a, b)`` passed on) is a tree whose leaves are
        parameters of the code (:mod:`adgen.trees`), except for the parameters in ``whole``
        (passed as one value). Returns the code and its arguments (the leaves)."""
        structure: dict[str, trees.Desc] = {}
        flat: list[ir.Atom] = []
        leaves: dict[str, list[str]] = {}
        for p, atom in zip(params, atoms, strict=True):
            desc, items = _tree(atom) if p not in whole else (trees.LEAF, [atom])
            if trees.is_tree(desc):
                structure[p] = desc
            leaves[p] = trees.leaf_names(p, desc)
            flat += items
        wrt_leaves = [leaf for p in wrt for leaf in leaves[p]]
        return seam.derivative_code(lifted, mode, wrt_leaves, None, structure), flat

    def spread_tree(self: Lowerer, node: Any, atom: Any) -> Any:
        """``atom`` as a tuple or list known item by item where its value is a tuple or list
        known now (a constant, an outside value: its items read from it), else as it is."""
        if isinstance(atom, (ir.Tup, ir.Dct)):
            return atom
        known, value = self.known_value(atom)
        if not (known and type(value) in (tuple, list)):
            return atom
        getitem = registry.lookup(registry.operator.getitem)
        assert getitem is not None
        items = (
            ir.Const(v) if isinstance(atom, ir.Const) else self.emit(
                None, "item", getitem, [atom, ir.Const(k)], [], node
            )
            for k, v in enumerate(value)
        )  # fmt: skip
        return ir.Tup(tuple(items), kind=type(value).__name__)

    def inline_code(self: Lowerer, node: Any, code: Any, args: list[ir.Atom]) -> ir.Atom:
        """Inline adgen-generated code (a nested derivative) called with ``args``."""
        assert isinstance(code, types.FunctionType)
        parsed, defaults = self.callee(code, node)
        return self.inline(node, parsed, code, defaults, args, [], None, None)

    def nested_wrt(self: Lowerer, node: Any, params: list[str], wrt: Any) -> tuple[list[str], bool]:
        ok, value = (True, 0) if wrt is None else _literal(wrt)
        single = isinstance(value, (int, str)) and not isinstance(value, bool)
        items = [value] if single else value
        if not ok or not isinstance(items, (list, tuple)) or not items:
            self.refuse(node, "this `wrt`", "write wrt as an integer, a name, or a tuple of those")
        names = []
        for item in items:
            if (
                isinstance(item, int)
                and not isinstance(item, bool)
                and -len(params) <= item < len(params)
            ):
                names.append(params[item])
            elif isinstance(item, str) and item in params:
                names.append(item)
            else:
                self.refuse(node, f"wrt={item!r} here", f"the parameters are {', '.join(params)}")
        return names, single

    def nested_grad(
        self: Lowerer,
        node: Any,
        kind: str,
        maker: gast.Call,
        call_args: list[Any],
        keywords: list[Any],
    ) -> ir.Atom:
        """``adgen.grad(F, wrt)(args)`` (or value_and_grad) inside the differentiated function:
        F's generated reverse-mode code, inlined (see :mod:`adgen.frontend.nested`)."""
        if keywords or any(isinstance(a, gast.Starred) for a in call_args):
            self.refuse(node, "keyword or starred arguments here", "pass the arguments in order")
        wrt_node = maker.args[1] if len(maker.args) > 1 else None
        for kw in maker.keywords:
            if kw.arg == "wrt":
                wrt_node = kw.value
            elif kw.arg == "has_aux":
                ok, aux = _literal(kw.value)
                if not ok or aux:
                    self.refuse(kw.value, "has_aux inside a differentiated function")
            else:
                self.refuse(kw.value, f"the argument `{kw.arg}` here")
        if len(maker.args) < 1 or len(maker.args) > 2:
            self.refuse(maker, f"this call of adgen.{kind}", f"write adgen.{kind}(f, wrt)")
        f = maker.args[0]
        ok, obj = self.static_object(f)
        if ok and (isinstance(obj, types.FunctionType) or hasattr(obj, "adgen_function")):
            # a module-level function (or derivative): no outer variables to capture
            ok_wrt, wrt = (True, 0) if wrt_node is None else _literal(wrt_node)
            if not ok_wrt:
                self.refuse(wrt_node, "this `wrt`", "write wrt as a constant")
            return self.inline_derivative(node, seam.derivative_of(kind, obj, wrt), call_args)
        lifted, params, captured = self.nested_function(node, f)
        wrt, single = self.nested_wrt(wrt_node or maker, params, wrt_node)
        if len(call_args) != len(params):
            self.refuse(node, f"calling it with {len(call_args)} arguments", "check the call")
        args = [self.expr(a, None, "arg") for a in call_args]
        code, flat = self.nested_code(
            lifted, "reverse", params + captured, args + self.outer_values(captured), wrt
        )
        result = self.inline_code(node, code, flat + [ir.Const(1.0)])
        if not (isinstance(result, ir.Tup) and isinstance(result.items[1], ir.Tup)):
            raise InternalError("nested reverse-mode code did not return (value, gradients)")
        value = result.items[0]
        grads = _regrouped(result.items[1].items, [args[params.index(p)] for p in wrt])
        gradient: ir.Atom = grads[0] if single else ir.Tup(tuple(grads))
        return gradient if kind == "grad" else ir.Tup((value, gradient))

    def nested_operator(self: Lowerer, node: gast.Call, maker: Any, made: gast.Call) -> ir.Atom:
        """``adgen.hessian(g, wrt)(args)`` (jacfwd, jacrev, jacobian, hvp, laplacian) inside
        the differentiated function, of a module-level function ``g``: the operator is applied
        when transforming, and the plain function standing for its result (it calls ``g``'s
        generated derivative code, see :mod:`adgen.composable`) is inlined."""
        what = f"adgen.{maker.__name__}"
        if made.keywords or len(made.args) not in (1, 2) or node.keywords:
            self.refuse(made, f"this call of {what}", f"write {what}(f, wrt)(args)")
        ok, obj = self.static_object(made.args[0])
        if not (ok and (isinstance(obj, types.FunctionType) or hasattr(obj, "adgen_function"))):
            self.refuse(
                made.args[0],
                f"{what} of this function inside a differentiated function",
                "pass a module-level function (or an adgen derivative of one)",
            )
        ok_wrt, wrt = (True, 0) if len(made.args) == 1 else _literal(made.args[1])
        if not ok_wrt:
            self.refuse(made.args[1], "this `wrt`", "write wrt as a constant")
        if any(isinstance(a, gast.Starred) for a in node.args):
            self.refuse(node, "starred arguments here", "pass the arguments in order")
        return self.inline_derivative(node, maker(obj, wrt), node.args)

    def inline_derivative(self: Lowerer, node: Any, made: Any, call_args: list[Any]) -> ir.Atom:
        """A derivative adgen made when transforming, called here: the plain function
        standing for it (it calls generated derivative code) inlined."""
        fn = self.derivative_function(made)
        parsed, defaults = self.callee(fn, node)
        args = [self.expr(a, None, "arg") for a in call_args]
        return self.inline(node, parsed, fn, defaults, args, [], None, None)

    def nested_vjp(self: Lowerer, node: gast.Call, out: Any, pullback: Any) -> None:
        """``out, pullback = adgen.vjp(F, *primals)`` inside the differentiated function: out
        is F's value; calling ``pullback(ct)`` inlines F's generated reverse-mode code."""
        if len(node.args) < 2 or node.keywords:
            self.refuse(node, "this call of adgen.vjp", "write adgen.vjp(f, *primals)")
        if any(isinstance(a, gast.Starred) for a in node.args):
            self.refuse(node, "starred arguments here", "pass the primals one by one")
        lifted, params, captured = self.nested_function(node, node.args[0])
        if len(node.args) - 1 != len(params):
            self.refuse(node, f"passing {len(node.args) - 1} primals for {len(params)} parameters")
        args = [self.expr(a, None, "arg") for a in node.args[1:]]
        value = self.inline(
            node, lifted, None, {}, args + self.outer_values(captured), [], None, None
        )
        self.bind_target(out, value)
        self.local_functions[pullback.id] = LocalPullback(lifted, params, captured, args)
        self.bound.add(pullback.id)

    def nested_pullback(self: Lowerer, node: Any, fn: LocalPullback, ct: ir.Atom) -> ir.Atom:
        """``pullback(ct)`` of ``out, pullback = adgen.vjp(F, *primals)``: F's generated
        reverse-mode code, inlined; a cotangent per primal, in its structure."""
        outer = self.outer_values(fn.captured)
        code, flat = self.nested_code(
            fn.lifted, "reverse", fn.params + fn.captured, fn.args + outer, fn.params
        )
        result = self.inline_code(node, code, flat + [ct])
        if not (isinstance(result, ir.Tup) and isinstance(result.items[1], ir.Tup)):
            raise InternalError("nested reverse-mode code did not return (value, cotangents)")
        return ir.Tup(tuple(_regrouped(result.items[1].items, fn.args)))

    def nested_jvp(self: Lowerer, node: gast.Call) -> ir.Atom:
        """``adgen.jvp(F, (a, b), (ta, tb))`` inside the differentiated function: F's generated
        forward-mode code, inlined; ``None`` tangents hold arguments constant."""
        if len(node.args) != 3 or node.keywords:
            self.refuse(
                node, "this call of adgen.jvp", "write adgen.jvp(f, (args...), (tangents...))"
            )
        f, primals, tangents = node.args
        for part in (primals, tangents):
            if not isinstance(part, (gast.Tuple, gast.List)):
                self.refuse(part, "primals or tangents that are not written as a tuple here")
        lifted, params, captured = self.nested_function(node, f)
        if len(primals.elts) != len(params) or len(tangents.elts) > len(params):
            self.refuse(node, "primals or tangents that do not match the parameters")
        wrt = [
            p
            for p, t in zip(params, tangents.elts)
            if not (isinstance(t, gast.Constant) and t.value is None)
        ]
        args = [self.spread_tree(node, self.expr(a, None, "arg")) for a in primals.elts]
        if not wrt:
            self.refuse(tangents, "adgen.jvp with every tangent None", "pass a tangent")
        dots: list[Any] = []
        whole: set[str] = set()  # (a tangent not known item by item: the argument passed whole)
        for p, a, t in zip(params, args, tangents.elts):
            if isinstance(t, gast.Constant) and t.value is None:
                continue
            tangent = self.spread_tree(node, self.expr(t, None, "tangent"))
            desc, items = _tree(tangent)
            if desc == _tree(a)[0]:
                dots += items
            else:
                whole.add(p)
                dots.append(tangent)
        code, flat = self.nested_code(
            lifted, "forward", params + captured, args + self.outer_values(captured), wrt, whole
        )
        return self.inline_code(node, code, flat + dots)


def _tree(atom: Any) -> tuple[trees.Desc, list[Any]]:
    """The structure of an argument known item by item (a tuple, list or dict atom, nested
    in any way) and its leaves; any other atom is a leaf."""
    if isinstance(atom, ir.Tup):
        parts = [_tree(a) for a in atom.items]
        kind = "list" if atom.kind == "list" else "tuple"
        return (kind, tuple(d for d, _ in parts)), [leaf for _, items in parts for leaf in items]
    if isinstance(atom, ir.Dct) and all(isinstance(k, str) for k in atom.keys):
        parts = [_tree(a) for a in atom.values]
        desc = ("dict", tuple(atom.keys), tuple(d for d, _ in parts))
        return desc, [leaf for _, items in parts for leaf in items]
    return trees.LEAF, [atom]


def _regrouped(per_leaf: Any, primals: list[Any]) -> list[Any]:
    """Per-leaf results back in the structure of each primal (a tuple's cotangent a tuple)."""
    out, at = [], 0
    for primal in primals:
        desc, _ = _tree(primal)
        n = trees.count(desc)
        out.append(_tree_atom(desc, iter(per_leaf[at : at + n])))
        at += n
    return out


def _literal(node: Any) -> tuple[bool, Any]:
    """``(True, value)`` for a literal written in the source (``1``, ``"x"``, ``(0, 1)``)."""
    try:
        return True, ast.literal_eval(gast.gast_to_ast(node))
    except (ValueError, TypeError, SyntaxError):
        return False, None
