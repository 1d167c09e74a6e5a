# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other)
"""Array namespaces known when transforming: ``xp = array_namespace(x)`` (issues 34, 35).

A library's getter that returns NumPy whatever the arrays while its array API support is off
(SciPy's ``array_namespace``, scikit-learn's ``get_namespace``: :func:`registry.
array_namespace_result`), and the getters of code written for the array API --
``x.__array_namespace__()``, array-api-compat's ``array_namespace``/``get_namespace``, a helper
returning one of those -- asked when transforming of samples of the arguments' kinds (adgen
makes code for those kinds): the name is bound to the module, whose functions have rules
(:func:`adgen.rules.arrayapi.namespace_with_rules`). For arrays of a library NumPy's calls
reach (Dask's, CuPy's), the samples are NumPy's: the namespace is NumPy's, and the code
(NumPy's functions) computes on those arrays.
"""

from __future__ import annotations

import ast
import inspect
import sys
import types
from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir
from adgen.errors import AdgenError
from adgen.frontend.lower.state import LowererState
from adgen.frontend.parse import parsed_block
from adgen.rules import arrayapi, registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


# how a refusal names the getter ``x.__array_namespace__()``
_METHOD = "`.__array_namespace__()`"


class NamespacesMixin(LowererState):
    """``xp = array_namespace(x)``: the module a namespace getter returns, known when
    transforming."""

    def assign_namespace(self: Lowerer, stmt: Any) -> bool:
        """``xp = array_namespace(x)``, ``xp, _ = get_namespace(a, b)``: a library's array
        namespace getter whose result the registry knows when transforming
        (:func:`registry.array_namespace_result`) -- the namespace is bound as a module the
        function reads (``xp.sum`` is ``np.sum``), the flags as constants. False if the
        statement is not such a call (nor bound to plain names bound nowhere else)."""
        value, targets = stmt.value, stmt.targets
        if isinstance(value, gast.IfExp) and len(targets) == 1:
            # `xp = array_namespace(a, b) if xp is None else xp`, the test decided now
            mark = len(self.block)
            try:
                test = self.expr(value.test, None, "cond")
            except AdgenError:
                test = None
            del self.block[mark:]  # (a trial: lowered again as written if not decided)
            if not isinstance(test, ir.Const):
                return False
            value = value.body if test.value else value.orelse
            if isinstance(value, gast.Name) and isinstance(targets[0], gast.Name):
                module = self.bound_module(value)  # `else xp` of a namespace given: kept
                return module is not None and value.id == targets[0].id
        if len(targets) != 1 or not isinstance(value, gast.Call):
            return False
        result: Any = self.namespace_of_kinds(value)  # x.__array_namespace__(): the arrays' module
        if result is None:
            given = [kw.value for kw in value.keywords if kw.arg == "xp"]
            passed = None
            if given and not self.known_none(given[0]):
                passed = self.bound_module(given[0])  # get_namespace(a, xp=xp): that namespace
                if passed is None:
                    return False
            try:
                ok, fn = self.static_object(value.func)
            except AdgenError:
                return False
            result = registry.array_namespace_result(fn) if ok else None
            if passed is not None and isinstance(result, tuple):
                result = (passed.value, *result[1:])
        target = targets[0]
        if result is None:
            return False
        if isinstance(target, gast.Name):
            pairs = [(target, result)]
        elif (
            isinstance(target, (gast.Tuple, gast.List))
            and isinstance(result, tuple)
            and len(target.elts) == len(result)
        ):
            pairs = list(zip(target.elts, result))
        else:
            return False
        # (a name other branches bind too: where this one runs in straight-line code, an `if`
        # decided when transforming around it, it is the binding the code after it sees)
        # (or a name bound only here, read only after it in the same block)
        if not all(
            isinstance(t, gast.Name)
            and (
                t.id not in self.multi
                or self.depth == 0
                or _bound_once_read_after(self.as_lowered(), t.id, stmt)
            )
            for t, _ in pairs
        ):
            return False
        for t, v in pairs:
            if isinstance(v, types.ModuleType):
                self.env.pop(t.id, None)
                self.local_functions[t.id] = v
                self.bound.add(t.id)
            else:
                self.bind(t.id, self.new_name(t.id), ir.Const(v))
        return True

    def namespace_of_kinds(self: Lowerer, call: gast.Call) -> types.ModuleType | None:
        """The module ``x.__array_namespace__()`` or array-api-compat's ``array_namespace(*xs)``
        (``get_namespace``) returns for arrays of the kinds of ``x`` (of ``xs``), asked when
        transforming of samples of those kinds: adgen makes code for the kinds of the
        arguments (NumPy's arrays: NumPy 2's ``numpy``, or array-api-compat's NumPy
        namespace; array-api-strict's: ``array_api_strict``). ``None``: not such a call.
        Refused: a namespace adgen has no rules for, or arrays of a kind not known then."""
        func = call.func
        if isinstance(func, gast.Attribute) and func.attr == "__array_namespace__":
            if call.args:
                self.refuse(call, "`.__array_namespace__()` with positional arguments")
            arrays: list[Any] = [func.value]
            label = _METHOD

            def getter(sample: Any, **options: Any) -> Any:
                return sample.__array_namespace__(**options)

        else:
            try:  # (a constant: the getter a helper returns, :func:`_returned_getter`)
                ok, fn = (
                    (True, func.value)
                    if isinstance(func, gast.Constant)
                    else (self.static_object(func))
                )
            except AdgenError:
                return None
            if ok and isinstance(fn, types.FunctionType) and not arrayapi.compat_getter(fn):
                inner = _returned_getter(fn, call)  # def get_xp(*xs): return array_namespace(*xs)
                return None if inner is None else self.namespace_of_kinds(inner)
            if not ok or not arrayapi.compat_getter(fn):
                return None
            if any(isinstance(a, gast.Starred) for a in call.args):
                self.refuse(call, f"`{fn.__name__}(*arrays)`", "name the arrays")
            arrays, getter, label = list(call.args), fn, f"`{fn.__name__}`"
        options: dict[str, Any] = {}
        for kw in call.keywords:
            known = None if kw.arg is None else self.outside_data(self.expr(kw.value, None, "k"))
            if known is None:
                self.refuse(kw.value, f"{label} given an option not known when transforming")
            options[str(kw.arg)] = known[0]
        samples = [self.library_sample(self.expr(a, None, "x"), a, label) for a in arrays]
        try:
            module = getter(*samples, **options)
        except Exception as exc:  # (the program raises when it runs)
            self.refuse(call, f"{label} of these arguments ({type(exc).__name__}: {exc})")
        if not arrayapi.namespace_with_rules(module):
            name = getattr(module, "__name__", type(module).__name__)
            self.refuse(
                call,
                f"the array namespace `{name}` ({label} of these arrays): adgen maps the "
                "functions of NumPy's, array-api-compat's NumPy and array-api-strict's",
                "write NumPy's functions (np.*) for arrays NumPy's calls reach (Dask, CuPy)",
            )
        return module  # type: ignore[no-any-return]

    def library_sample(self: Lowerer, atom: ir.Atom, node: Any, label: str) -> Any:
        """A value of the library and kind of ``atom``'s (an argument of the function, or
        an array a NumPy rule made of arguments' kinds), for an array namespace getter to be
        asked of when transforming."""
        kind = self.foreign_kind(atom)
        if kind is not None:
            library = str(kind[2])
            if not library.startswith("array-api:"):
                # Dask's, CuPy's: NumPy's calls reach them (``__array_function__``), and
                # adgen's code for them is NumPy's -- the namespace is NumPy's, whose
                # functions are the standard's there as in their own namespace
                if label == _METHOD:  # (the library's own: Dask's arrays have none)
                    self.refuse(
                        node,
                        f"{label} of {library} arrays: adgen takes their namespace from "
                        "array-api-compat",
                        "xp = array_api_compat.array_namespace(x)",
                    )
                return _numpy_like(kind)
            module = sys.modules.get(library.partition("array-api:")[2])
            if module is not None:
                return module.asarray(0.0)  # (a value of that library: its namespace's)
            self.refuse(node, f"{label} of {library} arrays: that library is not imported")
        sample = self.argument_sample(atom)
        if sample is None:
            self.refuse(
                node,
                f"{label} of a value whose kind adgen does not know when transforming (adgen "
                "makes code for the kinds of the function's arguments)",
                "ask for the namespace of an argument of the function",
            )
        return sample

    def dtype_sample(self: Lowerer, atom: ir.Atom) -> Any:
        """:meth:`argument_sample`, or for an argument that is an array of a library NumPy's
        calls reach (Dask's, CuPy's), a NumPy array of its shape and dtype: for what only those
        decide (never for a test of its type)."""
        sample = self.argument_sample(atom)
        kind = self.foreign_kind(atom) if sample is None else None
        if kind is not None and not str(kind[2]).startswith("array-api:"):
            return _numpy_like(kind)
        return sample

    def foreign_kind(self: Lowerer, atom: ir.Atom) -> tuple[Any, ...] | None:
        """The kind ``(shape, dtype, library)`` the code is made for where ``atom`` is an
        argument of the function holding another library's array; else None."""
        traced = self.traced(atom)
        if traced is None or traced[0][0] not in ("arg", "own") or not self.root.kinds:
            return None
        kind = self.root.kinds.get(str(traced[0][1]))
        return kind if isinstance(kind, tuple) and len(kind) == 3 else None

    def check_bounds_kept(self: Lowerer, fn: Any, args: list[Any], kwargs: Any, node: Any) -> None:
        """array-api-compat's ``clip(x, min, max)`` computes ``np.clip``'s numbers where ``x``
        is floating and each bound a Python number, None, or an array or NumPy number of ``x``'s
        dtype (``eps = xp.finfo(x.dtype).eps``; it casts the bounds to that dtype: of an
        integer ``x``, ``0.5`` is ``0``); refused otherwise. Where the kinds of ``x`` or of a
        bound are not known when transforming, the code checks it when it runs
        (``rt.bounds_kept``; the shapes decide it where they are known then), refusing by
        the same words otherwise."""
        bounds = [*args[1:], *(a for k, a in kwargs if k in ("min", "max"))]
        x = self.dtype_sample(args[0]) if args else None
        floating = None if x is None else np.result_type(x).kind in "fc"

        def fits(bound: Any) -> bool | None:  # (None: known only when the code runs)
            if isinstance(bound, ir.Const) and type(bound.value) in (float, int, type(None)):
                return True
            if isinstance(bound, ir.Const):  # (np.finfo(x.dtype).eps)
                sample = bound.value
            else:
                sample = self.dtype_sample(bound) if isinstance(bound, ir.Var) else None
                if sample is None and isinstance(bound, ir.Var):
                    return None
            if not isinstance(sample, (np.ndarray, np.generic)):
                return False
            return None if x is None else sample.dtype == np.result_type(x)

        kept = [fits(b) for b in bounds]
        if floating is False or False in kept:
            self.refuse(
                node,
                f"array-api-compat's `{fn.__name__}` here: it casts its bounds to x's dtype "
                "where NumPy's clip promotes, and adgen cannot tell when transforming that x "
                "is floating and the bounds Python numbers or arrays of its dtype",
                "cast the bounds (xp.asarray(b, dtype=x.dtype)) or call np.clip",
            )
        if floating and all(kept):
            return
        test = self.call_prim(rt.bounds_kept, [args[0], *bounds], "floating")
        what = (
            f"array-api-compat's `{fn.__name__}` of an array that is not floating, or of bounds "
            "of another dtype: it casts its bounds to x's dtype where NumPy's clip promotes"
        )
        words = (("what", ir.Const(what)), ("hint", ir.Const("call np.clip")))
        self.block.append(ir.Assign((), registry.ASSERT, (test,), words, self.line))


def _numpy_like(kind: tuple[Any, ...]) -> Any:
    """A read-only NumPy array of the shape and dtype of another library's array described by
    ``kind`` (:func:`adgen.middle.shapes.describe`: shape, dtype, library), nothing allocated."""
    return np.broadcast_to(np.zeros((), np.dtype(kind[1])), tuple(kind[0]))


def _bound_once_read_after(function: Any, name: str, stmt: Any) -> bool:
    """Is ``stmt`` the only statement of ``function`` binding ``name``, and every read of it
    in the statements after ``stmt`` in ``stmt``'s own block (so every read sees it)?"""
    stores = [
        n
        for n in gast.walk(function)
        if isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load)
    ]
    if len(stores) != 1 or not any(s is stores[0] for s in gast.walk(stmt)):
        return False
    for node in gast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                after = block[[id(s) for s in block].index(id(stmt)) + 1 :]
                seen = {
                    id(n)
                    for s in after
                    for n in gast.walk(s)
                    if isinstance(n, gast.Name) and n.id == name
                }
                loads = [
                    n
                    for n in gast.walk(function)
                    if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
                ]
                return all(id(n) in seen for n in loads)
    return False


def _returned_getter(fn: types.FunctionType, call: gast.Call) -> gast.Call | None:
    """For a helper ``fn`` whose body only returns an array namespace getter's result of its
    parameters (``def get_xp(*arrays): return array_api_compat.array_namespace(*arrays)``,
    ``return x.__array_namespace__()``), that getter's call of ``call``'s arguments (the
    getter a constant of the helper's module, its options constants); None for any other
    function or call."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    tree = parsed_block(code)
    if tree is None or not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    body = tree.body[0].body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # (the docstring)
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return None
    inner = body[0].value
    spec = tree.body[0].args
    if not isinstance(inner, ast.Call) or spec.kwonlyargs or spec.kwarg or spec.posonlyargs:
        return None
    if call.keywords or any(isinstance(a, gast.Starred) for a in call.args):
        return None
    names = [a.arg for a in spec.args]
    if len(call.args) > len(names) and spec.vararg is None:
        return None
    if len(call.args) < len(names) - len(spec.defaults):
        return None
    passed = dict(zip(names, call.args))
    rest = list(call.args[len(names) :])
    star = spec.vararg.arg if spec.vararg is not None else None

    def argument(node: ast.expr) -> list[Any] | None:
        if isinstance(node, ast.Name) and node.id in passed:
            return [passed[node.id]]
        if isinstance(node, ast.Starred) and isinstance(node.value, ast.Name):
            return rest if node.value.id == star else None
        return None

    keywords = []
    for kw in inner.keywords:
        if kw.arg is None or not isinstance(kw.value, ast.Constant):
            return None
        keywords.append(gast.keyword(arg=kw.arg, value=gast.Constant(kw.value.value, None)))
    func = inner.func
    if isinstance(func, ast.Attribute) and func.attr == "__array_namespace__":
        base = argument(func.value)
        if base is None or len(base) != 1 or inner.args:
            return None
        method = gast.Attribute(value=base[0], attr=func.attr, ctx=gast.Load())
        made = gast.Call(func=method, args=[], keywords=keywords)
        return gast.copy_location(made, call)  # type: ignore[no-any-return]
    getter = _global_object(fn, func)
    if getter is None or not arrayapi.compat_getter(getter):
        return None
    args: list[Any] = []
    for a in inner.args:
        found = argument(a)
        if found is None:
            return None
        args.extend(found)
    constant = gast.Constant(getter, None)  # (the getter itself: resolved by the caller)
    made = gast.Call(func=constant, args=args, keywords=keywords)
    return gast.copy_location(made, call)  # type: ignore[no-any-return]


def _global_object(fn: types.FunctionType, node: ast.expr) -> Any:
    """The object ``name`` or ``module.attr...`` names in ``fn``'s module; None if unknown."""
    if isinstance(node, ast.Name):
        return fn.__globals__.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _global_object(fn, node.value)
        return getattr(base, node.attr, None) if isinstance(base, types.ModuleType) else None
    return None
