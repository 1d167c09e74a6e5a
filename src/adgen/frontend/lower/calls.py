# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower calls: primitives, methods, and the user's own functions (inlined).

A call of a function with a derivative rule is one IR statement; a call of the user's own
Python function (or of a nested ``def`` or a lambda bound to a name, which see the enclosing
function's variables) is inlined -- its body lowered in place by a Lowerer of its own -- and a
recursive one is kept as a call (see :mod:`adgen.seam`). ``adgen.grad`` & co. called inside are
lowered in :mod:`adgen.frontend.lower.nested_derivatives`.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gast

from adgen import ir, seam
from adgen.checkpointing import checkpoint
from adgen.errors import (
    AdgenError,
    NonDifferentiableError,
    NoRuleError,
    UnsupportedSyntaxError,
)
from adgen.frontend.lower import generators
from adgen.frontend.lower.as_written import _qualname
from adgen.frontend.lower.callables import UnknownSpread
from adgen.frontend.lower.objects import (  # noqa: F401 (LocalFunction & co. are named here)
    FrozenMethod,
    LocalDerivative,
    LocalFunction,
    LocalInstance,
    LocalPartial,
    LocalPullback,
    StaticArg,
    is_user_class,
    is_user_object,
)
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.syntax import (
    _fixed_length_lists,
    _is_pop,
)
from adgen.frontend.parse import LiveScope, ParsedFunction, as_def, parse_function
from adgen.rules import arrayapi, registry
from adgen.rules import runtime as rt
from adgen.rules.axis_policy import axis_policy

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


# how deep calls to the user's functions may nest (each is inlined)
MAX_INLINE_DEPTH = 256


class CallsMixin(LowererState):
    """Calls: primitives, methods, the user's functions inlined."""

    def call(self: Lowerer, node: gast.Call, target: str | None, hint: str) -> ir.Atom:
        """A call: by a rule, inlined, or run as written; a call adgen cannot read because a
        spread's length is known only when the code runs (``np.broadcast_shapes(*shapes)``)
        copied as written (:meth:`call_as_written`)."""
        mark = len(self.block)
        try:
            return self.call_read(node, target, hint)
        except UnknownSpread as exc:
            del self.block[mark:]  # (what reading it wrote)
            return self.call_as_written(node, exc.plain(), target, hint)

    def call_read(self: Lowerer, node: gast.Call, target: str | None, hint: str) -> ir.Atom:
        func = node.func
        method = self.named_method(func)
        if method is not None:  # getattr(model, "predict_proba")(x): model.predict_proba(x)
            node = gast.copy_location(
                gast.Call(func=method, args=node.args, keywords=node.keywords), node
            )
            func = node.func
        if isinstance(func, gast.Call):  # adgen.grad(lambda y: x * y)(2.0): nested AD
            ok, maker = self.static_object(func.func)
            kind = seam.entry_kind(maker) if ok else None
            if kind in ("grad", "value_and_grad"):
                return self.nested_grad(node, kind, func, node.args, node.keywords)
            if ok and seam.operator_kind(maker) is not None:  # adgen.hessian(g)(x)
                return self.nested_operator(node, maker, func)
        if _is_pop(node) and func.value.id in self.env and func.value.id in self.multi:
            return self.pop(node, func.value.id, target, hint)
        args: list[Any] = []
        made = self.made_class(func)
        if isinstance(func, gast.Lambda):  # (lambda v: v * v)(x), as map(lambda ...) makes
            ok, fn = True, self.lambda_function(func)
        elif made is not None:  # Dense(W, b)(x): the instance, then its __call__
            ok, fn = True, self.construct(f"{made.__name__}(...)", func, made)
        elif isinstance(func, gast.Call) and self.is_partial(func):  # partial(f, a)(x)
            ok, fn = True, self.make_partial(func)
        elif isinstance(func, gast.Call) and self.derived_interpolant(func) is not None:
            ok, fn = True, self.derived_interpolant(func)  # cs.derivative(2)(x)
        elif isinstance(func, gast.Call):  # make(s)(x): what the helper returned, if it is a
            returned = self.call_maybe_static(func, None)  # function or an object
            ok, fn = (True, returned.value) if isinstance(returned, StaticArg) else (False, None)
        else:
            ok, fn = self.static_object(func)
        if ok:  # np.apply_over_axes, lfilter(b, a, x, zi=zi): read as the Python it is
            fn = registry.read_as_python(fn)
            fn = registry.read_for_options(fn, len(node.args), [k.arg for k in node.keywords])
        if ok and fn is map:  # map(f, xs): [f(x) for x in xs]
            return self.mapped(node, target, hint)
        if ok and fn is len and len(node.args) == 1 and not node.keywords:
            seq = self.static_sequence(node.args[0])
            if seq is not None:  # len(self.layers): known now
                return ir.Const(len(seq.items))
            held = self.env.get(node.args[0].id) if isinstance(node.args[0], gast.Name) else None
            # a list or tuple of known length (*args), a list grown in straight-line code
            known = list(held.items) if isinstance(held, ir.Tup) else self.known_list(held)
            if known is not None:
                return ir.Const(len(known))
        if ok and self.named_tuple_class(fn):  # R(stat, p): a tuple whose items have names
            return self.named_tuple(node, fn, hint)
        self.check_special(node, ok, fn)
        if ok and seam.entry_kind(fn) == "jvp":
            return self.nested_jvp(node)
        refusal: AdgenError | None = None  # what adgen says of the call if it cannot run it
        if not ok and isinstance(func, gast.Attribute):
            ok, fn, refusal = self.outside_call(func)
        solver = registry.callbacks_of(fn) if ok else None
        if solver is not None:  # odeint(rhs, y0, t): functions given to a solver
            return self.solver_call(node, fn, solver, target, hint)
        static = ok and (self.takes_functions(fn) or self.given_local_functions(node, fn))
        if ok:
            node = self.listed_arguments(node, fn)
        if not ok:
            if isinstance(func, gast.Attribute):
                method = registry.method_function(func.attr)
                folded = self.value_method(node, func, target, hint) if method is None else None
                if folded is None and method is None:
                    folded = self.dict_get(node, func)  # (options.get("ensure_2d", True))
                if folded is not None:
                    return folded
                if method is None:
                    return self.local_method(node, func, target, hint)
                fn, pack = method
                args.append(self.expr(func.value, None, hint))
                rest = self.packed_arguments(node, hint) if pack else None
                if rest is None:
                    rest = self.call_arguments(node, False, hint)
                if pack and len(rest) > 1:
                    rest = [ir.Tup(tuple(rest))]
                args.extend(rest)
            else:
                self.refuse(
                    func,
                    "calling a computed value",
                    "call a function by its name (adgen must know which function it is)",
                )
        else:
            args = self.call_arguments(
                node, static, hint, functions=isinstance(fn, types.FunctionType)
            )
        kwargs = self.call_keywords(node, static, hint)
        if ok and (family := self.interpolant_family(fn)) is not None:  # cs(x), cs made outside
            return self.interpolant_call(node, fn, family, args, kwargs, target, hint)
        if ok and (made := self.parametrised(node, fn, args, kwargs, target, hint)) is not None:
            return made  # k.clone_with_theta(theta), then its calls
        if isinstance(fn, FrozenMethod):  # d.logpdf(x) of d = scipy.stats.norm(mu, s)
            fn, args, kwargs = fn.method, [*args, *fn.args], [*kwargs, *fn.kwargs]
        if ok and isinstance(func, gast.Attribute):  # a method of an object made outside
            fn, args, kwargs = self.outside_method_rule(fn, args, kwargs)  # with a rule
        if registry.rows_as_arrays(fn) and args and isinstance(args[0], ir.Tup):
            args[0] = self.array_rows(args[0], node, hint)  # np.concatenate([x, [x[-1]]])
        if fn is registry.np.array and (len(args) > 1 or kwargs):  # (np.array([1, 0], bool))
            fn, args, kwargs = _array_as_asarray(args, kwargs)
        if isinstance(fn, LocalPullback):
            if len(node.args) != 1 or node.keywords:
                self.refuse(node, "this call of a pullback", "pass one cotangent")
            return self.nested_pullback(node, fn, self.expr(node.args[0], None, "ct"))
        if isinstance(fn, LocalDerivative):
            return self.nested_grad(node, fn.kind, fn.maker, node.args, node.keywords)
        paired = self.known_items_call(fn, args, kwargs)  # zip(*pairs), dict(zip(keys, v))
        if paired is not None:
            return paired
        if (
            (fn is list or fn is tuple)
            and len(args) == 1
            and not kwargs
            and isinstance(args[0], ir.Tup)
        ):
            return args[0]  # list(zip(*pairs)): a sequence known now, only read
        if fn is tuple and len(args) == 1 and not kwargs and isinstance(args[0], ir.Var):
            known = self.known_list(args[0])
            if known is not None:  # tuple(out) of a list grown by appends: its items
                return ir.Tup(tuple(known), kind="tuple")
        if ok and args and registry.returns_its_arrays(fn, self.known_options(kwargs)):
            return args[0] if len(args) == 1 else ir.Tup(tuple(args), kind="tuple")
        fn = self.callable_of(fn, func)
        if isinstance(fn, seam.LazyDerivative):  # a recursive call's derivative, read again
            fn = fn.function()
        while isinstance(fn, (LocalPartial, functools.partial)):
            fn, args, kwargs = self.unpartial(fn, args, kwargs)
            fn = self.callable_of(fn, func)
        prim = None if isinstance(fn, (LocalFunction, LocalInstance)) else registry.lookup(fn)
        if prim is None and hasattr(fn, "adgen_function"):
            fn = self.derivative_function(fn)
        if prim is None and (getattr(fn, "__module__", None) or "").startswith(f"{rt.__name__}."):
            # adgen's own helpers are differentiated by their rules only (docs/rules.md),
            # never by reading their source
            raise NoRuleError(
                f"adgen's helper rt.{fn.__name__} has no derivative rule (every helper "
                "generated code calls should have one: this is a bug of adgen)",
                self.parsed.loc(func),
                "please report it; meanwhile differentiate in another order (adgen.hessian, "
                "adgen.jvp of adgen.grad)",
            )
        if prim is not None:
            prim = prim.localize(self.outside_name)  # a user's rule: name its function, helpers
        if prim is not None and arrayapi.casts_bounds(fn):  # array-api-compat's clip
            self.check_bounds_kept(fn, args, kwargs, func)
        if prim is None:
            return self.call_without_rule(node, fn, refusal, args, kwargs, target, hint)
        return self.rule_call(node, fn, prim, args, kwargs, target, hint)

    def call_without_rule(
        self: Lowerer,
        node: gast.Call,
        fn: Any,
        refusal: AdgenError | None,
        args: list[Any],
        kwargs: list[tuple[str, Any]],
        target: str | None,
        hint: str,
    ) -> ir.Atom:
        """A call of a function without a rule: the user's function (or method) inlined, a
        class of the user's (in an expression: run as written), else run as written."""
        if (why := arrayapi.compat_refusal(fn)) is not None:
            # array-api-compat's wrapper unlike NumPy's function: run as written where no
            # differentiated value reaches it (xp.unique_values of the labels), else refused
            said = NoRuleError(why, self.parsed.loc(node.func), "write the NumPy function you mean")
            return self.opaque(fn, said, args, kwargs, target, hint, node)
        if isinstance(fn, LocalFunction):
            return self.inline(
                node, fn.parsed(self), None, fn.defaults, args, kwargs, target, fn.enclosing
            )
        if (
            isinstance(fn, types.MethodType)
            and isinstance(fn.__func__, types.FunctionType)
            and (isinstance(fn.__self__, (LocalInstance, type)) or is_user_object(fn.__self__))
        ):
            owner = fn.__self__
            passed = any(isinstance(a, StaticArg) for a in [*args, *(v for _, v in kwargs)])
            if isinstance(owner, LocalInstance) or passed:
                bound = [StaticArg(owner), *args]
                if not isinstance(owner, LocalInstance):
                    return self.inline_or_run(node, fn.__func__, bound, kwargs, target, hint)
                with self.noting_refusal(owner.cls):
                    return self.inline_or_run(node, fn.__func__, bound, kwargs, target, hint)
            # a method of an object made outside: inlined, or run as written if adgen cannot
            # read it (a library's object, `scaler.transform(X)`)
            mark, reads = len(self.block), set(self.root.attrs_read)
            try:
                bound = [StaticArg(owner), *args]
                return self.inline_function(node, fn.__func__, bound, kwargs, target)
            except (UnsupportedSyntaxError, NoRuleError, NonDifferentiableError) as exc:
                del self.block[mark:]
                self.root.attrs_read = reads  # (what the failed inlining read is not read)
                return self.opaque(fn, exc, args, kwargs, target, hint, node)
        if isinstance(fn, types.FunctionType):
            return self.inline_or_run(node, fn, args, kwargs, target, hint)
        if getattr(fn, "adgen_user_function", False) and hasattr(fn, "node"):
            parsed, defaults = self.callee(fn, node)
            return self.inline(node, parsed, fn, defaults, args, kwargs, target, None)
        made_as_written = self.root.as_written_classes.get(fn) if isinstance(fn, type) else None
        if made_as_written is not None:  # (run as written: refused if a derivative reaches it)
            return self.opaque(fn, made_as_written, args, kwargs, target, hint, node)
        if is_user_class(fn) and not registry.helper_class(fn):
            # an instance adgen could not follow: refused now (a scikit-learn loss is made as
            # written, a constant of the derivative its helpers are given)
            raise UnsupportedSyntaxError(
                f"adgen does not support making a `{fn.__name__}` here (in an expression that "
                "does not call it, a comprehension, a list built by appends): adgen could not "
                "follow the instance",
                self.parsed.loc(node),
                f"make it in an assignment (`m = {fn.__name__}(...)`, `self.layer = "
                f"{fn.__name__}(...)`), a list or tuple written out (`[{fn.__name__}(W1, b1), "
                f"{fn.__name__}(W2, b2)]`), an argument of your own function, or call it at "
                f"once (`{fn.__name__}(...)(x)`)",
            )
        refusal = refusal or self.no_rule_error(node.func, fn)
        return self.opaque(fn, refusal, args, kwargs, target, hint, node)

    def check_special(self: Lowerer, node: gast.Call, ok: bool, fn: Any) -> None:
        """Refuse the calls that mean something else inside a differentiated function."""
        if not ok:
            return
        if seam.entry_kind(fn) not in (None, "jvp"):
            self.refuse(
                node,
                "this use of adgen inside a differentiated function",
                "call adgen.grad(f)(x), adgen.value_and_grad(f)(x), adgen.jvp(f, (x,), (t,)) "
                "or out, pullback = adgen.vjp(f, x) there",
            )
        if fn is checkpoint:
            self.refuse(
                node,
                "adgen.checkpoint here",
                "it marks a `for` loop: write `for i in adgen.checkpoint(range(n)):`",
            )
        if fn is super:
            self.refuse(
                node,
                "`super()`",
                "call the base class's method by name: `Base.__init__(self, ...)`",
            )

    def note_settled(self: Lowerer, sub: Lowerer, emitted: list[ir.Stmt]) -> None:
        """After inlining ``sub`` (which wrote ``emitted``): its variables that blocks rebind
        but that were bound only once, where it started, to a constant keep it for good (no
        code of it runs again): :meth:`settled` may read them there (``multioutput`` returned
        by a helper that tested and kept it)."""
        inside = ir.Function("", [], emitted, "", 0, {})
        counts: dict[str, int] = {}
        for stmt in inside.statements():
            if isinstance(stmt, ir.Assign):
                for t in stmt.targets:
                    counts[t] = counts.get(t, 0) + 1
            elif isinstance(stmt, ir.For):
                counts[stmt.target] = counts.get(stmt.target, 0) + 2
        for name, first in sub.first_values.items():
            value = self.settled(first) if counts.get(name) == 1 else None
            if isinstance(value, ir.Const):  # (what it copied may mean another value later)
                self.root.settled_values[name] = value

    def inline_or_run(
        self: Lowerer,
        node: Any,
        fn: types.FunctionType,
        args: list[Any],
        kwargs: list[tuple[str, Any]],
        target: str | None,
        hint: str,
    ) -> ir.Atom:
        """A call of a Python function: inlined; or, if adgen cannot lower its body (a
        library's function that raises, one whose source cannot be read), run as written
        (:meth:`opaque`), the refusal kept for where a differentiated value reaches it."""
        unwrapped = registry.transparent_wrapper(fn)
        if unwrapped is not None:
            return self.checked_call(node, unwrapped, args, kwargs, target, hint)
        policy = axis_policy(fn)
        if policy is not None:  # scipy.stats.skew(x): the plain path of SciPy's wrapper
            return self.statistic_call(node, fn, policy, args, kwargs, target, hint)
        mark = len(self.block)
        try:
            parsed, defaults = self.callee(fn, node)
            return self.inline(node, parsed, fn, defaults, args, kwargs, target, None)
        except (UnsupportedSyntaxError, NoRuleError, NonDifferentiableError) as exc:
            if self.outside_arguments(args, kwargs, fn) is None:
                raise  # a function or an object made here passed: it cannot run as written
            del self.block[mark:]  # what the failed inlining wrote
            return self.opaque(fn, exc, args, kwargs, target, hint, node)

    def outside_name(self: Lowerer, preferred: str, obj: Any) -> str:
        """The name generated code gives an object a user's rule calls (one name per object)."""
        for key, value in self.free.items():
            if value is obj and key.isidentifier():
                return key
        if preferred not in self.free and self.root.names_global(preferred, obj):
            self.free[preferred] = obj  # the program calls it by this name too
            return preferred
        name = self.namer.claim(preferred)
        while name in self.free:
            name = self.namer.fresh(preferred)
        self.free[name] = obj
        return name

    def names_global(self: Lowerer, name: str, obj: Any) -> bool:
        """Does ``name`` mean ``obj`` everywhere in this function (never a local of it)?"""
        for n in gast.walk(self.node):
            if isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load):
                return False
        try:
            return self.parsed.scope.lookup(name) is obj
        except KeyError:
            return False

    # -- calls to the user's own functions: inlined ---------------------------------------------
    def derivative_function(self: Lowerer, obj: Any) -> types.FunctionType:
        """A call of an adgen derivative (``g = adgen.grad(f)`` called as ``g(x)``): the plain
        function computing it, whose source calls adgen's generated code, is inlined -- so
        the derivative is taken through the generated code, never through ``f``."""
        fn: types.FunctionType = obj.adgen_function()
        root_scope = self.root.parsed.scope
        if isinstance(root_scope, LiveScope):
            root_scope._record("adgen", obj, "adgen_function", fn)
        return fn

    def callee(self: Lowerer, fn: Any, node: Any) -> tuple[ParsedFunction, dict[str, Any]]:
        """Parse a called Python function; its default values become atoms."""
        if isinstance(fn, types.FunctionType):
            root_scope = self.root.parsed.scope
            if isinstance(root_scope, LiveScope):
                # the callee's lookups count as the caller's: redefining them is noticed
                scope = LiveScope(fn, root_scope.seen, root_scope._keys)
                scope._record("attr", fn, "__code__", fn.__code__)
                scope._record("attr", fn, "__defaults__", fn.__defaults__)
            else:
                scope = LiveScope(fn)
            try:
                parsed = parse_function(fn, scope)
            except UnsupportedSyntaxError:
                raise
            except AdgenError as exc:
                raise NoRuleError(
                    f"cannot read the source of `{_qualname(fn)}`, called here ({exc.message})",
                    self.parsed.loc(node),
                    "register a derivative rule for it with @adgen.rules.rule",
                ) from None
            if generators.is_generator(parsed.node):  # `for W, b in unpack(w):`
                made = None
                if generators.place(node) in generators.consumed_whole(self.as_lowered()):
                    made = generators.as_list_function(parsed.node)
                if made is not None:
                    parsed = dataclasses.replace(parsed, node=made)
            names = [a.id for a in [*parsed.node.args.posonlyargs, *parsed.node.args.args]]
            values = fn.__defaults__ or ()
            given = {
                **dict(zip(names[len(names) - len(values) :], values)),
                **(fn.__kwdefaults__ or {}),
            }
            defaults = {p: self.default_atom(v, p) for p, v in given.items()}
            return parsed, defaults
        parsed = ParsedFunction(
            node=fn.node,
            name=fn.node.name,
            filename=fn.scope.filename,
            line_offset=0,
            col_offset=0,
            lines=fn.scope.lines,
            scope=fn.scope,
        )
        names = [a.id for a in fn.node.args.args]
        defaults = {}
        for p, d in zip(names[len(names) - len(fn.node.args.defaults) :], fn.node.args.defaults):
            if not isinstance(d, gast.Constant):
                self.refuse(d, "non-constant default values in a file read statically")
            defaults[p] = ir.Const(d.value)
        return parsed, defaults

    def value_atom(self: Lowerer, value: Any, hint: str) -> ir.Atom:
        """An atom for a Python value known at transform time (a default argument)."""
        if value is None or isinstance(value, (bool, int, float, str)):
            return ir.Const(value)
        name = self.namer.fresh(hint)
        self.free[name] = value
        return self.free_atom(name, value)

    def inline(
        self: Lowerer,
        node: Any,
        parsed: ParsedFunction,
        fn: Any,
        defaults: dict[str, Any],
        args: list[Any],
        kwargs: list[tuple[str, Any]],
        target: str | None,
        enclosing: Lowerer | None,
        on_yield: Callable[[Lowerer, ir.Atom], None] | None = None,
    ) -> ir.Atom:
        """Lower a call to the user's own function by lowering its body in place
        (``on_yield``: a generator's, lowering its caller's loop body where it yields)."""
        code = fn.__code__ if isinstance(fn, types.FunctionType) else parsed.node
        # the objects and functions passed: a method of one object calling the same method of
        # another (a tree of layers) is not a recursion
        # (nor one passing another option, a string known now: statsmodels' `predict(params,
        # which="prob")` calling `self.predict(params)` for the mean)
        passed = [*enumerate(args), *kwargs]
        statics = tuple(
            id(a.value) if isinstance(a, StaticArg) else (k, a.value)
            for k, a in passed
            if isinstance(a, StaticArg) or (isinstance(a, ir.Const) and isinstance(a.value, str))
        )
        # (nor one given a part of a list or tuple of known structure: a recursion over the
        # structure, `leaves(t)` calling `leaves(v)` for each item, ends with it)
        statics += tuple((k, _structure(a)) for k, a in passed if isinstance(a, (ir.Tup, ir.Dct)))
        identity = (code, statics)
        if any(code is f[0] and statics == f[1] for f in self.root.inlining):
            if not isinstance(fn, types.FunctionType):
                self.refuse(
                    node,
                    f"recursive calls of `{parsed.name}` here (a nested or statically read "
                    "function)",
                    "make it a module-level function, or write the recursion as a loop",
                )
            return self.recursive_call(node, fn, parsed, defaults, args, kwargs)
        if len(self.root.inlining) >= MAX_INLINE_DEPTH:
            self.refuse(
                node, f"calls nested more than {MAX_INLINE_DEPTH} deep", "flatten the helpers"
            )
        # the package's class Lowerer (made of this module's mixin, among others)
        sub = type(self)(parsed, parent=self, fn=fn if isinstance(fn, types.FunctionType) else None)
        sub.static_result_ok = self.root.static_result_for == id(node)
        sub.enclosing = enclosing
        sub.on_yield = on_yield
        sub.call_target = target
        sub.block = self.block
        bound = self.bind_arguments(node, parsed, defaults, args, kwargs)
        self.root.inlining.append(identity)
        mark = len(self.block)
        try:
            result = sub.lower_inlined(bound)
            self.note_settled(sub, self.block[mark:])
            if registry.copies_when_asked(fn, bound) and isinstance(result, ir.Var):
                # check_array(X, copy=True): a new array by its contract, which adgen's
                # alias analysis cannot see through the helper's branches; copied once more
                # so that the caller may write into it
                cast = registry.lookup(registry.np.asarray)
                assert cast is not None
                copy: list[tuple[str, ir.Atom]] = [("copy", ir.Const(True))]
                return self.emit(target, "copied", cast, [result], copy, node)
            fresh = isinstance(result, ir.Var) and self.new_array(result)
            self.root.fresh_calls[id(node)] = self.root.fresh_calls.get(id(node), True) and fresh
            self.root.kept.append(node)
            return result
        except AdgenError as e:
            e.in_function(parsed.name)
            raise
        finally:
            self.root.inlining.pop()

    def recursive_call(
        self: Lowerer,
        node: Any,
        fn: types.FunctionType,
        parsed: ParsedFunction,
        defaults: dict[str, ir.Atom],
        args: list[ir.Atom],
        kwargs: list[tuple[str, ir.Atom]],
    ) -> ir.Atom:
        """A call that would inline a function into itself: kept as a call, whose derivative is
        the function's own generated derivative (see :mod:`adgen.seam`)."""
        params = [a.id for a in parsed.node.args.args]
        if parsed.node.args.vararg or parsed.node.args.kwarg or parsed.node.args.kwonlyargs:
            self.refuse(node, "recursive calls of functions with *args or keyword-only parameters")
        if any(isinstance(a, StaticArg) for a in [*args, *(v for _, v in kwargs)]):
            self.refuse(
                node,
                f"passing a function or an object to the recursive function `{parsed.name}`",
                "pass values only, or write the recursion as a loop",
            )
        bound = dict(zip(params, args))
        for k, v in kwargs:
            if k not in params or k in bound:
                self.refuse(node, f"the argument `{k}` in this call of `{parsed.name}`")
            bound[k] = v
        for p in params:
            if p not in bound:
                if p not in defaults:
                    self.refuse(node, f"calling `{parsed.name}` without `{p}`", "pass each one")
                bound[p] = defaults[p]
        spelled = self.root.callee_names.get(fn)
        if spelled is None:
            spelled = self.namer.claim(fn.__name__)
            self.root.callee_names[fn] = spelled
            self.free[spelled] = fn
        returns_tuple = any(
            isinstance(n, gast.Return) and isinstance(n.value, gast.Tuple)
            for n in gast.walk(parsed.node)
        )
        prim = registry.user_call(spelled, fn, params, returns_tuple)
        name = self.namer.fresh(f"{parsed.name}_out")
        self.block.append(ir.Assign((name,), prim, tuple(bound[p] for p in params), (), self.line))
        self.producers[name] = prim
        return ir.Var(name)

    def lower_inlined(self: Lowerer, bound: dict[str, Any]) -> Any:
        """The call's value (an atom), or the function or object the helper returned as
        itself where its caller takes one (a ``StaticArg``: static_results)."""
        self.note_param_tuples(bound)
        rebound: dict[str, Any] = {}  # parameters bound again in a block: bound below
        for p, atom in bound.items():
            self.bound.add(p)
            if isinstance(atom, StaticArg):  # a function or an object: the name means it
                if p in self.multi:  # (bound again in a block: refused if one is lowered)
                    self.root.static_params.add((self, p))
                self.env.pop(p, None)
                self.local_functions[p] = atom.value
            elif p in self.multi and not (
                isinstance(atom, ir.Tup) and p in _fixed_length_lists(self.node)
            ):  # (`args = list(args)`, then written by index: the list has the name's IR name)
                rebound[p] = atom
                self.env[p] = atom  # (for the tests decided now; bound below)
            else:
                self.env[p] = atom
        self.refuse_generators()
        body = list(self.node.body)
        if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
            body = body[1:]
        # a procedure (`__init__`, a check that raises): returns None
        body = self.ending_with_none(body)
        body = self.prune_decided(body)  # (`if not broadcast: return x` on an option)
        self.bind_parameters_again(body, rebound)
        self.check_returns(body)
        body = self.single_exit(body)
        if not isinstance(body[-1], gast.Return):
            self.result = self.call_target or self.namer.claim(self.prefix + "out")
            self.result_items = self.tuple_result(body, self.prefix + "out")
        self.lowered_body = body
        self.lower_block(body)
        if self.static_returns:
            return self.static_returned()
        if self.result_items:
            return ir.Tup(tuple(ir.Var(n) for n in self.result_items))
        if self.result is not None:
            return ir.Var(self.result)
        assert self.returned is not None
        return self.returned

    def define_local_function(self: Lowerer, node: Any, stmt: Any, name: str | None = None) -> None:
        """A nested ``def`` or a lambda bound to a name: inlined where it is called, seeing the
        enclosing function's variables as they are at the call."""
        if isinstance(node, gast.FunctionDef):
            if node.decorator_list:
                self.refuse(node, "decorators on nested functions", "define it without decorators")
            name = node.name
        assert name is not None
        node = as_def(node, name)
        defaults: dict[str, Any] = {}
        names = [a.id for a in node.args.args]
        given = list(zip(names[len(names) - len(node.args.defaults) :], node.args.defaults))
        given += [(a.id, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d]
        for p, d in given:
            found = self.static_argument(d)
            # the value now: a name rebound later (in a loop) must not change it
            defaults[p] = (
                found if found is not None else self.copied_apart(self.expr(d, None, p), p)
            )
        self.local_functions[name] = LocalFunction(node, self, defaults)
        self.bound.add(name)

    def array_rows(self: Lowerer, seq: ir.Tup, node: Any, hint: str) -> ir.Tup:
        """``np.array([[a, b], [c, d]])``: each nested row becomes an array first."""
        prim = registry.lookup(registry.np.array)
        assert prim is not None
        items: list[ir.Atom] = []
        for item in seq.items:
            if isinstance(item, ir.Tup) and any(True for _ in ir.atom_vars(item)):
                inner = self.array_rows(item, node, hint)
                items.append(self.emit(None, hint, prim, [inner], [], node))
            else:
                items.append(item)
        return ir.Tup(tuple(items))


def _has_return(node: Any) -> bool:
    """Does this statement hold a ``return`` of its own (not one of a nested ``def``)?"""
    if isinstance(node, gast.Return):
        return True
    if isinstance(node, (gast.FunctionDef, gast.Lambda)):
        return False
    return any(_has_return(child) for child in gast.iter_child_nodes(node))


def _array_as_asarray(args: list[Any], kwargs: list[tuple[str, Any]]) -> tuple[Any, Any, Any]:
    """``np.array(x, dtype, copy=..., order=...)`` as the call of ``np.asarray`` it is where
    ``asarray`` takes ``copy`` (NumPy 2): ``np.asarray(x, dtype, order=..., copy=True)``
    (``np.array`` copies unless told not to). Other options (``ndmin``, ``subok``, ``like``)
    are left to ``np.array``'s rule, which refuses them."""
    names = ("object", "dtype", "copy", "order")
    named = dict(zip(names, args))
    named.update(kwargs)
    if (
        len(args) > len(names)
        or not named.keys() <= set(names)
        or "object" not in named
        or not registry.asarray_takes_copy()
    ):
        return registry.np.array, args, kwargs
    rest = [(k, named[k]) for k in ("dtype", "order") if k in named]
    return (
        registry.np.asarray,
        [named["object"]],
        [*rest, ("copy", named.get("copy", ir.Const(True)))],
    )


def _structure(atom: Any) -> Any:
    """The nesting of a tuple, list or dict atom of known items (its leaves ``None``)."""
    if isinstance(atom, ir.Tup):
        return ("tuple", tuple(_structure(a) for a in atom.items))
    if isinstance(atom, ir.Dct):
        return ("dict", atom.keys, tuple(_structure(a) for a in atom.values))
    return None
