# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower calls adgen runs as written: a call without a rule that adgen does not inline (its
result a constant of the derivative, refused later if a differentiated value reaches it), and
the methods of objects that are not data (a logger, a random generator, a library object).

:meth:`AsWrittenMixin.opaque` makes the one IR statement such a call is;
:func:`adgen.middle.analysis.check_opaque_calls` refuses it where a differentiated value
reaches it.
"""

from __future__ import annotations

import copy
import types
from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir
from adgen.errors import AdgenError, NoRuleError, UnsupportedSyntaxError
from adgen.frontend.lower.objects import LocalFunction, StaticArg
from adgen.frontend.lower.state import LowererState, RuleNotTaken
from adgen.rules import registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


def _qualname(fn: Any) -> str:
    """``module.qualname`` of a function or method (the builtins' without a module)."""
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{name}" if module and module != "builtins" else name


def _bound_once(function: Any, name: str) -> bool:
    """Is ``name`` bound by one statement of ``function`` only, a plain assignment?"""
    stores = [
        n
        for n in gast.walk(function)
        if isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load)
    ]
    return len(stores) == 1 and any(
        isinstance(s, gast.Assign) and s.targets == [stores[0]] for s in gast.walk(function)
    )


class AsWrittenMixin(LowererState):
    """Calls run as written, and methods of objects that are not data."""

    def opaque(
        self: Lowerer,
        fn: Any,
        refusal: AdgenError,
        args: list[ir.Atom],
        kwargs: list[tuple[str, ir.Atom]],
        target: str | None,
        hint: str,
        node: Any,
        receiver: Any = None,
    ) -> ir.Atom:
        """A call adgen has no rule for and does not inline: one statement that runs it as
        written; its result is a constant of the derivative. :mod:`adgen.middle.analysis`
        raises ``refusal`` (what adgen said of it before) if a differentiated value reaches
        it where that would matter. ``receiver``: the object of a method call (``rng`` of
        ``rng.normal(...)``), its first argument."""
        passed = self.outside_arguments(args, kwargs, fn)
        if (
            not callable(fn)
            or getattr(fn, "adgen_user_function", False)
            or registry.reads_frame(fn, len(args))
            or passed is None
        ):
            raise refusal
        args, kwargs = passed
        # lists stay lists (lowering makes every sequence a tuple: np.add.at(a, [0, 1], 1) must
        # not index with a tuple)
        label = _qualname(fn)
        written = {kw.arg: kw.value for kw in node.keywords} if isinstance(node, gast.Call) else {}
        nodes = list(node.args) if isinstance(node, gast.Call) else []
        if receiver is not None:
            nodes.insert(0, receiver)
        ambiguous = None
        try:
            nodes += [node] * (len(args) - len(nodes))
            if not getattr(fn, "adgen_any_sequence", False):  # (a probe reads either alike)
                args = [self.as_written(n, a, hint, label) for n, a in zip(nodes, args)]
                kwargs = [
                    (k, self.as_written(written.get(k, node), v, hint, label)) for k, v in kwargs
                ]
        except UnsupportedSyntaxError as exc:
            ambiguous = exc  # raised if no differentiated value reaches the call (else refusal)
        prim = registry.opaque_call(fn, self.named(refusal), len(args), [k for k, _ in kwargs])
        if not prim.reads_only:  # (`model.refit(...)`: what it may change is read no more)
            for obj in [getattr(fn, "__self__", None), *map(self.free_object, args)]:
                self.note_changed(obj, label, node)
        prim.ambiguous = ambiguous
        prim = prim.localize(self.outside_name)
        stored = self.read_back(fn, args, kwargs)
        if not stored:
            return self.emit(target, hint, prim, args, kwargs, node)
        # (`vars(self)["W"]` after `self.W = p * 2`: the result may hold a value the function
        # stored, which carries no derivative through the call: refused if one is differentiated)
        result = self.emit(None, hint, prim, args, kwargs, node)
        through = registry.lookup(rt.read_back)
        assert through is not None
        return self.emit(target, hint, through, [result, ir.Tup(tuple(stored))], [], node)

    def rule_call(
        self: Lowerer,
        node: Any,
        fn: Any,
        prim: registry.Primitive,
        args: list[Any],
        kwargs: list[tuple[str, Any]],
        target: str | None,
        hint: str,
    ) -> ir.Atom:
        """A call of ``fn``, which has the rule ``prim``; where the rule does not take the
        call's form (``np.sum(w, where=m)``, ``np.atleast_1d(a, b, c)``) and ``fn`` is NumPy's
        or SciPy's, run as written, refused where a differentiated value reaches it."""
        given, mark = (args, kwargs), len(self.block)
        # (a rule decides `weights is None` when expanding: None passed on through helpers
        # is that constant there)
        args = [self.none_if_known(a) for a in args]
        kwargs = [(k, self.none_if_known(a)) for k, a in kwargs]
        args, kwargs = self.arrays_of_lists(fn, prim, args, kwargs, node, hint)
        library = (getattr(fn, "__module__", None) or "").split(".")[0] in ("numpy", "scipy")
        try:
            return self.emit(target, hint, prim, args, kwargs, node, instead=library)
        except RuleNotTaken as exc:
            del self.block[mark:]
            if self.outside_arguments(*given, fn) is None:
                raise exc.refusal from None
            return self.opaque(fn, exc.refusal, *given, target, hint, node)

    def named(self: Lowerer, refusal: AdgenError) -> AdgenError:
        """``refusal`` (raised later, if a differentiated value reaches the call) saying which
        function the call is in, and the functions that one was inlined into."""
        if refusal.loc is None or refusal.loc.function:
            return refusal  # (said of a function inlined here: it names where it stands)
        named = copy.copy(refusal)
        lowerer: Lowerer | None = self
        while lowerer is not None:
            named.in_function(lowerer.parsed.name)
            lowerer = lowerer.parent
        return named

    def free_object(self: Lowerer, atom: Any) -> Any:
        """The object an outside atom (``ir.Free``) is, None for any other atom."""
        if not isinstance(atom, ir.Free):
            return None
        known, value = self.known_value(atom)
        return value if known else None

    def outside_arguments(
        self: Lowerer, args: list[Any], kwargs: list[tuple[str, Any]], fn: Any = None
    ) -> tuple[list[ir.Atom], list[tuple[str, ir.Atom]]] | None:
        """The arguments of a call run as written as atoms: a module, or a function or class
        that exists outside the function (``f(y, xp)`` of the namespace a library's helper
        got), passed as itself by its name (it holds no differentiated value); an object
        made outside too where ``fn`` only reads its arguments (``vars(estimator)``: it
        changes none of the attributes the code reads when it runs); None where another
        argument is not a value of the IR (an object made inside the function, a lambda or a
        ``def`` reading the function's variables)."""
        reads = fn is not None and registry.reads_only(fn, len(args), [k for k, _ in kwargs])

        def atom(value: Any) -> ir.Atom | None:
            if not isinstance(value, StaticArg):
                return value  # type: ignore[no-any-return]
            obj = value.value
            if isinstance(obj, types.ModuleType):
                preferred = obj.__name__.rpartition(".")[2]
            elif isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type)):
                preferred = getattr(obj, "__name__", "") or "function"
            elif reads and not type(obj).__module__.startswith("adgen."):
                preferred = type(obj).__name__.lower()  # (not one of adgen's own records)
            else:
                return None
            name = preferred if preferred.isidentifier() else "outside"
            return ir.Free(self.outside_name(name, obj))

        atoms = [atom(a) for a in args]
        options = [(k, atom(v)) for k, v in kwargs]
        if any(a is None for a in atoms) or any(v is None for _, v in options):
            return None
        return atoms, options  # type: ignore[return-value]

    def as_written(self: Lowerer, node: Any, atom: ir.Atom, hint: str, label: str) -> ir.Atom:
        """An argument of a call run as written, with the type the program gives it: a list
        display is a list again (its atom is a tuple). A tuple atom that is not written in the
        call (a name bound to a list or a tuple, a tree argument) is refused: adgen does not
        know which it was."""
        if not isinstance(atom, ir.Tup):
            return atom
        if isinstance(node, gast.Name):  # `idx = [0, 2]` once, then f(a, idx)
            node = self.only_display(node.id) or node
        if isinstance(node, (gast.ListComp, gast.GeneratorExp)):  # (unrolled: a list)
            make = registry.lookup(list)
            assert make is not None
            return self.emit(None, hint, make, [atom], [], node)
        if not isinstance(node, (gast.List, gast.Tuple)) or len(node.elts) != len(atom.items):
            self.refuse(
                node,
                f"passing this list or tuple to `{label}`, which adgen runs as written (it has "
                "no rule for it): adgen does not know here which of the two it is",
                "write the list or tuple in the call itself (`f(a, [0, 2])`), or pass an array",
            )
        parts = zip(node.elts, atom.items)
        items = ir.Tup(tuple(self.as_written(n, a, hint, label) for n, a in parts))
        if isinstance(node, gast.Tuple):
            return items
        make = registry.lookup(list)
        assert make is not None
        return self.emit(None, hint, make, [items], [], node)

    def only_display(self: Lowerer, name: str) -> Any:
        """The list or tuple display ``name`` is bound to, if that is its only binding in the
        function (not a parameter, never assigned again); else None."""
        if name in self.params:
            return None
        # where the source binds it (lowering may have copied a statement into two branches,
        # as it does to give an early return a single exit: a copy has the same place)
        places = {
            (n.lineno, n.col_offset)
            for n in gast.walk(self.node)
            if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
        }
        if len(places) != 1:
            return None
        for n in gast.walk(self.node):
            if (
                isinstance(n, gast.Assign)
                and len(n.targets) == 1
                and isinstance(n.targets[0], gast.Name)
                and n.targets[0].id == name
            ):
                displays = (gast.List, gast.Tuple, gast.ListComp)  # (a comprehension: a list)
                value = n.value
                for kind, made in ((list, gast.List), (tuple, gast.Tuple)):
                    if (  # `xs = list([a, b])` (adgen's own code writes so), `tuple((a, b))`
                        self.is_call_to(value, kind)
                        and len(value.args) == 1
                        and not value.keywords
                        and isinstance(value.args[0], (gast.List, gast.Tuple))
                    ):
                        display = made(elts=value.args[0].elts, ctx=gast.Load())
                        return gast.copy_location(display, value)
                return value if isinstance(value, displays) else None
        return None

    def local_method(
        self: Lowerer, node: gast.Call, func: gast.Attribute, target: str | None, hint: str
    ) -> ir.Atom:
        """``rng.normal(size=3)`` where ``rng`` is a local value made by a call run as written
        (``rng = np.random.default_rng(0)``) and the method has no rule: run as written too,
        the object one of its arguments (so a differentiated value reaching the call, or a
        write into what a differentiated operation read, is refused as for any such call).
        A method of any other value is refused."""
        made = None
        maker: Any = None
        if isinstance(func.value, gast.Name) and (
            func.value.id not in self.multi or _bound_once(self.as_lowered(), func.value.id)
        ):  # (`le = LabelEncoder()` in a branch, then `le.fit(labels)`: that object)
            atom = self.env.get(func.value.id)
            if isinstance(atom, ir.Var):
                made = self.producers.get(atom.name)
            if made is None and atom is not None:
                maker = self.object_passed(atom)
        if made is not None and registry.makes_object(made):
            maker = made.runs
        if maker is None:
            raise self.method_refusal(func)
        frozen = registry.frozen_refusal(maker, func.attr)
        args = [self.expr(func.value, None, hint)]
        spread = None  # `rs.randn(*mean.shape)` of a length known only when the code runs
        for a in node.args:
            if not isinstance(a, gast.Starred):
                args.append(self.expr(a, None, hint))
                continue
            seq = self.spread_shape(a.value, self.expr(a.value, None, hint), hint)
            if isinstance(seq, ir.Tup):
                args.extend(seq.items)
            elif spread is None:
                spread = len(args) - 1  # (the call spreads it as it runs)
                args.append(seq)
            else:
                self.refuse(a, "two `*` arguments of lengths known only when the code runs")
        fn = registry.ObjectMethod(func.attr, maker, spread)
        kwargs: list[tuple[str, ir.Atom]] = []
        for kw in node.keywords:
            if kw.arg is None:
                self.refuse(kw.value, "`**kwargs` in calls", "pass keyword arguments one by one")
            kwargs.append((kw.arg, self.expr(kw.value, None, hint)))
        refusal = NoRuleError(
            f"adgen has no derivative rule for the method `.{func.attr}()` of "
            f"`{func.value.id}` ({f'made by {made.name}' if made is not None else 'an object'}"
            "), which a differentiated value reaches",
            self.parsed.loc(func),
            "pass it values you do not differentiate (a random draw: scale and shift a "
            "standard one, `mu + sigma * rng.standard_normal(n)`)"
            if "random" in (getattr(maker, "__module__", None) or "")
            else "adgen runs this object's methods as written: pass them values you do not "
            "differentiate, and compute the differentiated part with NumPy's functions",
        )
        if frozen is not None:
            refusal = NoRuleError(frozen[0], self.parsed.loc(func), frozen[1])
        return self.opaque(fn, refusal, args, kwargs, target, hint, node, receiver=func.value)

    def object_passed(self: Lowerer, atom: ir.Atom) -> Any:
        """For an object the caller passed (an argument of the function differentiated, not
        differentiated itself) or an outside one, that is not the program's data -- a random
        generator given as ``rs`` (``rs.randn(n)``), a model: its class (its methods run as
        written, :class:`registry.ObjectMethod`); None for anything else (an array, a number,
        a list, a value the code computes)."""
        traced = self.traced(atom)
        if traced is None or traced[0][0] not in ("arg", "outside"):
            return None
        if traced[0][0] == "outside":
            known, value = self.known_value(ir.Free(str(traced[0][1])))
            data = (np.ndarray, np.generic, list, tuple, dict, set, int, float, complex, str)
            if not known or value is None or isinstance(value, data):
                return None
            return type(value)
        # code made for the kinds of the arguments: an argument without one is no data (an
        # array, a number, None, a sequence of those all have kinds)
        if not self.root.kinds or str(traced[0][1]) in self.root.kinds:
            return None
        return object

    def no_rule_error(self: Lowerer, node: Any, fn: Any) -> NoRuleError:
        """The error for a call of ``fn``, which has no rule and is not inlined."""
        label = _called(fn)  # `module.function`, or calling a `module.Class` object
        frozen = registry.frozen_refusal(fn)
        if frozen is not None:
            return NoRuleError(frozen[0], self.parsed.loc(node), frozen[1])
        if isinstance(fn, types.FunctionType) or getattr(fn, "adgen_user_function", False):
            return NoRuleError(
                f"calls to other Python functions ({label}) are not differentiated yet",
                self.parsed.loc(node),
                "inline the helper's body, or register a rule for it with @adgen.rules.rule",
            )
        return NoRuleError(
            f"adgen has no derivative rule for {label}",
            self.parsed.loc(node),
            "register one with @adgen.rules.rule(...) (see docs/rules.md), or, if it has no "
            "derivative, adgen.rules.nondifferentiable(...)",
        )

    def method_refusal(self: Lowerer, func: gast.Attribute, method: Any = None) -> AdgenError:
        """The error for a method adgen has no rule for (``method``: the bound method of an
        outside object, if it is one)."""
        spelled = registry.spelled(method) if method is not None else None
        if spelled is not None and spelled.startswith(("np.", "scipy.")):  # st.expon.logpdf
            return NoRuleError(
                f"adgen has no derivative rule for `{spelled}`",
                self.parsed.loc(func),
                "write it with NumPy functions that have rules, or register one with "
                "@adgen.rules.rule(...) (see docs/rules.md)",
            )
        if isinstance(func.value, gast.Call):  # norm(mu, s).logpdf(x): a frozen distribution?
            ok, maker = self.static_object(func.value.func)
            frozen = registry.frozen_refusal(maker, func.attr) if ok else None
            if frozen is not None:
                return UnsupportedSyntaxError(frozen[0], self.parsed.loc(func), frozen[1])
        return UnsupportedSyntaxError(
            f"adgen does not support the method `.{func.attr}()`",
            self.parsed.loc(func),
            "call the NumPy function instead, e.g. np.sum(x) for x.sum()",
        )

    def outside_call(self: Lowerer, func: gast.Attribute) -> tuple[bool, Any, AdgenError | None]:
        """:meth:`outside_method`, and what adgen says of a call of it if it cannot run it
        -- or the Python a ufunc's method is read as (``np.add.reduce``, ``np.subtract.outer``:
        :func:`registry.read_as_python`), with nothing to say."""
        ok, fn = self.outside_method(func)
        form = registry.read_as_python(fn) if ok else fn
        if form is not fn:
            return True, form, None
        return ok, fn, self.method_refusal(func, fn) if ok else None

    def outside_method(self: Lowerer, func: gast.Attribute) -> tuple[bool, Any]:
        """``log.info``, ``rng.normal``, ``np.add.at``: a method of an outside object that is
        not data (not an array, list, dict or set, whose methods may write into what the
        program reads) and has no array-method rule -- run as written (:meth:`opaque`)."""
        if registry.method_function(func.attr) is not None:
            return False, None
        ok, base = self.static_object(func.value)
        data = (registry.np.ndarray, list, dict, set, bytearray)
        if not ok or isinstance(base, (types.ModuleType, LocalFunction, *data)):
            return False, None
        method = getattr(base, func.attr, None)
        return (True, method) if callable(method) else (False, None)


def _called(fn: Any) -> str:
    """How a refusal names the function ``fn`` called: ``module.qualname``, or for an object
    (np.vectorize copies its function's name) ``calling a `module.Class` object``."""
    if (hasattr(fn, "__qualname__") or hasattr(fn, "__name__")) and not isinstance(
        fn, registry.np.vectorize
    ):
        return f"`{_qualname(fn)}`"
    return f"calling a `{_qualname(type(fn))}` object"
