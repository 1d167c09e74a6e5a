# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Calls of SciPy's solvers, with the functions they are given (issue 36).

``odeint(rhs, y0, t, args=(k,))``, ``quad(lambda x: np.exp(-a * x), 0, 1)``,
``brentq(f, 0, 2, args=(c,))``: a solver's rule (:mod:`adgen.rules.solvers`) names the
parameters that take a function (:func:`adgen.rules.registry.callbacks_of`). Each function
passed there -- a lambda, a nested ``def`` or a module-level function -- becomes a
:class:`~adgen.seam.Callback`, a value of the call like any constant: the function as written
(SciPy calls it) and, made when first needed, adgen's forward and reverse code for it. The
variables of the differentiated function it reads become its last parameters (the function is
*lifted*, as for ``adgen.grad`` inside a function: :mod:`adgen.frontend.nested`) and their
values are appended to the solver's ``args`` tuple, so that derivatives flow to them through
the solver's rule like through any other argument.
"""

from __future__ import annotations

import ast
import inspect
import types
from typing import TYPE_CHECKING, Any

import gast

from adgen import ir, seam
from adgen.backend.compile import load
from adgen.errors import AdgenError
from adgen.frontend import nested
from adgen.frontend.lower.objects import LocalFunction, LocalInstance, LocalRecord, StaticArg
from adgen.frontend.lower.state import LowererState
from adgen.frontend.parse import LiveScope, ParsedFunction, as_def, plain_arguments, unwrap
from adgen.generated import Generated
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class SolversMixin(LowererState):
    """Calls of functions that take functions: SciPy's solvers."""

    def solver_call(
        self: Lowerer, node: gast.Call, fn: Any, spec: registry.Callbacks, target: Any, hint: str
    ) -> Any:
        """Lower ``node``, a call of the solver ``fn``: each function it is given as a
        :class:`~adgen.seam.Callback`, the outer variables they read appended to ``args``."""
        runs = spec.runs_as if spec.runs_as is not None else fn
        prim = registry.lookup(runs)
        name = getattr(fn, "__name__", "the solver")
        if prim is None:  # (a registration without a rule: a bug of adgen's rule modules)
            self.refuse(node, f"calling `{name}` here")
        if spec.fields and self.root.static_result_for != id(node):
            self.refuse(
                node,
                f"the result of {name} used where adgen does not read it",
                f"bind it to a name (`sol = {name}(...)`) and read its attributes "
                f"({', '.join(f'sol.{f}' for f in spec.fields[:2])}...)",
            )
        if any(isinstance(a, gast.Starred) for a in node.args):
            self.refuse(node, f"`*args` in a call of {name}", "pass the arguments one by one")
        keywords: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is not None:
                keywords[kw.arg] = kw.value
            else:  # **options: a dict whose keys are known now
                keywords.update(self.spread_keywords(kw.value))
        try:
            bound = inspect.signature(fn).bind(*node.args, **keywords)
        except TypeError as exc:
            self.refuse(node, f"this call of {name} ({exc})", f"see help({name})")
        for option, keep in spec.refused:
            given = bound.arguments.get(option)
            if given is not None and _constant_value(given, keep) != keep:
                self.refuse(
                    given,
                    f"`{option}=` in a differentiated call of {name}",
                    f"leave {option} at {keep!r}",
                )
        extra: list[Any] = []
        if spec.extra is not None and spec.extra in bound.arguments:
            given = bound.arguments[spec.extra]
            atom = self.expr(given, None, spec.extra)
            if isinstance(atom, ir.Tup):
                extra = list(atom.items)
            elif spec.single:  # args=k: SciPy passes (k,)
                extra = [atom]
            else:
                self.refuse(
                    given,
                    f"`{spec.extra}=` of {name} that is not a tuple written in the function",
                    f"write {spec.extra}=(a, b) (a tuple display)",
                )
        if any(isinstance(a, ir.Tup) for a in extra):  # args=(params,) of (W, b) pairs
            extra = self.flat_arguments(bound, spec, extra)
        lifted: dict[str, tuple[Any, Any]] = {}  # parameter -> (its function node, fdef)
        captured: list[str] = []
        defaults: dict[str, Any] = {}  # a default the solver leaves (lambda x, k=k: ...)
        for param in spec.functions:
            given = bound.arguments.get(param)
            if given is None or (
                isinstance(given, gast.Constant)
                and (given.value is None or isinstance(given.value, str))
            ):  # (a string names SciPy's own way: least_squares(jac="3-point"), passed as it is)
                continue
            fdef = self.solver_function_def(given, name, param)
            if fdef is not None:
                free = [c for c in self.captured_names(given, fdef) if c not in captured]
                if any(c in defaults for c in free):  # (another function's default)
                    self.refuse(
                        given,
                        "a default of one function a solver is given that "
                        "another reads as a variable",
                        "give the parameter another name",
                    )
                fdef = self.without_defaults(given, fdef, spec.leading + len(extra), defaults)
                captured += [
                    c for c in self.captured_names(given, fdef, defaults) if c not in captured
                ]
            lifted[param] = (given, fdef)
        values = {
            p: self.callback_atom(p, given, fdef, captured, fn)
            for p, (given, fdef) in lifted.items()
        }
        if spec.extra is not None and (extra or captured):
            outer = [defaults[c] if c in defaults else self.outer_values([c])[0] for c in captured]
            values[spec.extra] = ir.Tup((*extra, *outer), kind="tuple")
        given_nodes = dict(bound.arguments)
        for p in inspect.signature(fn).parameters.values():
            if p.kind == p.VAR_KEYWORD:  # solve_ivp(..., rtol=1e-8): its **options
                given_nodes.update(given_nodes.pop(p.name, {}))
        known = inspect.signature(runs).parameters
        for option, given in given_nodes.items():
            if option not in known:
                self.refuse(
                    given,
                    f"the option `{option}` of {name} in a differentiated call",
                    f"adgen passes on {', '.join(known)}",
                )
        args: list[Any] = []
        kwargs: list[tuple[str, Any]] = []
        positional = len(node.args)
        for i, param in enumerate(known):
            if param in values:
                value = values.pop(param)
            elif param in given_nodes:
                given = given_nodes[param]
                value = given if isinstance(given, _ATOMS) else self.expr(given, None, param)
            else:
                continue
            if i < positional:
                args.append(value)
            else:
                kwargs.append((param, value))
        result = self.emit(target if not spec.fields else None, hint, prim, args, kwargs, node)
        if not spec.fields:
            return result
        assert isinstance(result, ir.Tup)
        return StaticArg(LocalRecord(name, dict(zip(spec.fields, result.items))))

    def solver_field(self: Lowerer, node: gast.Attribute) -> ir.Atom | None:
        """``minimize(...).x``: a field of the record a solver's call makes, read at once
        (None where ``node`` is another attribute)."""
        call = node.value
        if not isinstance(call, gast.Call) or not isinstance(
            call.func, (gast.Name, gast.Attribute)
        ):
            return None
        ok, fn = self.static_object(call.func)
        spec = registry.callbacks_of(fn) if ok else None
        if spec is None or not spec.fields:
            return None
        record = self.call_maybe_static(call, None)
        assert isinstance(record, StaticArg) and isinstance(record.value, LocalRecord)
        if node.attr not in record.value.fields:
            self.refuse(
                node,
                f"the attribute `.{node.attr}` of {record.value.solver}'s result",
                f"adgen reads {', '.join(record.value.fields)}",
            )
        return record.value.fields[node.attr]  # type: ignore[no-any-return]

    def spread_keywords(self: Lowerer, value: Any) -> dict[str, Any]:
        """The atoms of ``**options`` in a solver's call: a dict display, a name bound to one,
        or a dict of the module (``**TOLERANCES``) read now."""
        ok, obj = self.static_object(value)
        if ok and isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
            return {k: self.value_atom(v, k) for k, v in obj.items()}
        spread = self.expr(value, None, "options")
        if not isinstance(spread, ir.Dct) or not all(isinstance(k, str) for k in spread.keys):
            self.refuse(
                value,
                "`**options` whose keys adgen does not know when reading the function",
                "pass the options one by one",
            )
        return dict(zip(spread.keys, spread.values))

    def flat_arguments(
        self: Lowerer, bound: inspect.BoundArguments, spec: registry.Callbacks, extra: list[Any]
    ) -> list[ir.Atom]:
        """The leaves of a solver's ``args`` that hold lists or tuples of arrays (a network's
        ``[(W1, b1), (W2, b2)]``), passed to each function it is given through a lambda
        taking the leaves and calling the function with the structure rebuilt: ``lambda y,
        t, a1, a2, a3, a4: nn_predict(y, t, [(a1, a2), (a3, a4)])``. (``bound``: the
        call's arguments, whose functions are replaced by those lambdas.)"""
        leaves: list[ir.Atom] = []  # (the lambda's own names: no variable of the function)

        def load(n: str) -> Any:
            return gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None)

        def rebuilt(atom: ir.Atom) -> Any:
            if not isinstance(atom, ir.Tup):
                leaves.append(atom)
                return load(f"_adgen_leaf_{len(leaves)}")
            items = [rebuilt(a) for a in atom.items]
            if atom.kind == "list":
                return gast.List(elts=items, ctx=gast.Load())
            return gast.Tuple(elts=items, ctx=gast.Load())

        structures = [rebuilt(a) for a in extra]
        leading = [f"_adgen_arg_{k}" for k in range(1, spec.leading + 1)]
        params = leading + [f"_adgen_leaf_{k}" for k in range(1, len(leaves) + 1)]
        for param in spec.functions:
            given = bound.arguments.get(param)
            if given is None or isinstance(given, gast.Constant):
                continue
            call = gast.Call(func=given, args=[*map(load, leading), *structures], keywords=[])
            wrapper = gast.Lambda(args=plain_arguments(params), body=call)
            for n in gast.walk(wrapper):
                if n is not given and not any(n is m for m in gast.walk(given)):
                    gast.copy_location(n, given)
            bound.arguments[param] = wrapper
        return leaves

    def solver_function_def(self: Lowerer, given: Any, name: str, param: str) -> Any:
        """The ``def`` of a lambda or nested function passed to a solver; None for a function
        of outside (a module-level function, a bound method, a ``functools.partial``, a
        callable object, a NumPy function with a rule): it reads no variable of the function
        being lowered."""
        if isinstance(given, gast.Lambda):
            return as_def(given, "lam")
        if isinstance(given, (gast.Name, gast.Attribute)):
            ok, obj = self.static_object(given)
            if ok and isinstance(obj, seam.Callback):  # derivative code differentiated again:
                return None  # the function it was given, its variables in args already
            if ok and isinstance(obj, LocalFunction) and obj.enclosing is self:
                return obj.node
            if ok and _outside_callable(obj):
                return None
        self.refuse(
            given,
            f"passing this as `{param}` of {name}",
            "pass a lambda, a function defined in this function, or a function, method or "
            "partial made outside it",
        )

    def without_defaults(
        self: Lowerer, given: Any, fdef: Any, supplied: int, defaults: dict[str, Any]
    ) -> Any:
        """``fdef`` without the parameters past the ``supplied`` ones the solver passes, whose
        defaults are then their values (``lambda x, k=k: ...`` in a loop): each is read
        as a variable of the function, bound in ``defaults`` to its default's atom."""
        if fdef.args.vararg or fdef.args.kwarg or fdef.args.kwonlyargs:
            self.refuse(
                given,
                "*args or **kwargs on a function passed to a solver",
                "pass every value in the solver's args=, or read it from the enclosing function",
            )
        params, values = fdef.args.args, fdef.args.defaults
        if not values:
            return fdef
        kept = max(supplied, len(params) - len(values))
        for param, value in zip(params[kept:], values[len(values) - (len(params) - kept) :]):
            if param.id in defaults:  # (two functions' defaults of one name)
                self.refuse(given, f"the default of `{param.id}` here", "give it another name")
            defaults[param.id] = self.expr(value, None, param.id)
        args = plain_arguments(list(params[:kept]))
        made = gast.FunctionDef(
            name=fdef.name,
            args=args,
            body=fdef.body,
            decorator_list=[],
            returns=None,
            type_comment=None,
            type_params=[],
        )
        return gast.copy_location(made, fdef)

    def captured_names(
        self: Lowerer, given: Any, fdef: Any, defaults: dict[str, Any] | None = None
    ) -> list[str]:
        """The variables of the function being lowered that ``fdef`` reads (and the names
        of ``defaults``, parameters turned into such variables)."""
        captured = [c for c in nested.free_names(fdef) if self.sees(c) or c in (defaults or {})]
        for c in captured:
            lowerer: Lowerer | None = self
            while lowerer is not None:
                if c in lowerer.local_functions:
                    self.refuse(
                        given,
                        f"a function passed to a solver that calls the local function `{c}`",
                        "make that helper a module-level function",
                    )
                lowerer = lowerer.enclosing
        return captured

    def callback_atom(
        self: Lowerer, param: str, given: Any, fdef: Any, captured: list[str], fn: Any
    ) -> ir.Atom:
        """The :class:`~adgen.seam.Callback` for the function ``given`` (lifted over
        ``captured``), as a value of the call."""
        if fdef is None:
            _, obj = self.static_object(given)
            if isinstance(obj, seam.Callback):
                return self.value_atom(obj, obj.name)
            parsed, _ = self.callee(self.readable_callable(obj, given), given)
            primal: Any = obj
        else:
            parsed = nested.lifted(fdef, captured, self.parsed)
            # (a file read statically, python -m adgen: the code is printed, never run)
            live = isinstance(self.parsed.scope, LiveScope)
            primal = self.compiled_lifted(parsed) if live else _not_run
        wrt = [a.id for a in parsed.node.args.args]
        defaults = getattr(primal, "__defaults__", None) or ()
        name = given.id if isinstance(given, gast.Name) else "function"
        return self.value_atom(seam.Callback(parsed, primal, wrt, defaults), name)

    def readable_callable(self: Lowerer, obj: Any, given: Any) -> types.FunctionType:
        """A plain function adgen reads for the outside callable ``obj``: itself, the function
        calling a bound method, a partial or a callable object (:func:`parse.unwrap`), or one
        calling a function with a rule (``np.sin``: ``def sin(x0): return sin_fn(x0)``)."""
        if not isinstance(self.root.parsed.scope, LiveScope) and hasattr(obj, "node"):
            return obj  # type: ignore[no-any-return] # (python -m adgen: a function of the file)
        if registry.lookup(obj) is not None and not isinstance(obj, types.FunctionType):
            count = getattr(obj, "nin", None)
            if count is None:
                try:
                    params = inspect.signature(obj).parameters.values()
                except (TypeError, ValueError):
                    self.refuse(given, f"passing `{getattr(obj, '__name__', obj)}` to a solver")
                count = sum(1 for p in params if p.default is p.empty and p.kind <= p.KEYWORD_ONLY)
            label = getattr(obj, "__name__", "function")
            label = label if label.isidentifier() else "function"
            names = [f"x{i}" for i in range(count)]
            text = f"def {label}({', '.join(names)}):\n    return {label}_fn({', '.join(names)})\n"
            made = load(Generated(label, names, text), {f"{label}_fn": obj})
            assert isinstance(made, types.FunctionType)
            return made
        try:
            return unwrap(obj)
        except AdgenError as exc:
            self.refuse(given, f"passing `{getattr(obj, '__name__', obj)}` to a solver ({exc})")

    def compiled_lifted(self: Lowerer, parsed: ParsedFunction) -> types.FunctionType:
        """The lifted function as Python runs it: compiled from its syntax tree at its place
        in the user's file (tracebacks show the user's lines), reading the same globals."""
        scope = self.parsed.scope
        assert isinstance(scope, LiveScope)
        fdef = gast.gast_to_ast(parsed.node)
        ast.increment_lineno(fdef, parsed.line_offset)
        module = ast.fix_missing_locations(ast.Module(body=[fdef], type_ignores=[]))
        code = compile(module, parsed.filename, "exec")
        inner = next(c for c in code.co_consts if isinstance(c, types.CodeType))
        outer = scope.fn
        cells = dict(zip(outer.__code__.co_freevars, outer.__closure__ or ()))
        namespace = outer.__globals__
        if any(n in cells for n in inner.co_names):  # the outer function's own closure
            namespace = dict(namespace)
            for n in inner.co_names:
                if n in cells:
                    try:
                        namespace[n] = cells[n].cell_contents
                    except ValueError:
                        pass
        return types.FunctionType(inner, namespace, parsed.name)


def _constant_value(given: Any, otherwise: Any) -> Any:
    """The value of a constant argument (a literal, or an atom of one); something other than
    ``otherwise`` for anything else (an option passed as a variable is not a value it keeps)."""
    if isinstance(given, (gast.Constant, ir.Const)):
        return given.value
    return object()


_ATOMS = (ir.Var, ir.Const, ir.Free, ir.Tup, ir.Slc, ir.Dct)  # (options spread from a dict)


def _outside_callable(obj: Any) -> bool:
    """A function made outside the function being lowered, which a solver can be given."""
    return callable(obj) and not isinstance(
        obj, (type, types.ModuleType, LocalFunction, LocalInstance, LocalRecord)
    )


def _not_run(*args: Any) -> Any:
    raise AdgenError(
        "this function was read from a file without running it (python -m adgen): call "
        "adgen.grad on the imported function to run its derivative"
    )
