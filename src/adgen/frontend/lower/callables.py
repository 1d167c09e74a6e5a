# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower functions used as values: callbacks, ``map``, the arguments of inlined calls.

Every call of the user's own code is inlined, so a function passed to another function need
not be a value of the IR: the callee's parameter is bound to the function itself
(:class:`~adgen.frontend.lower.objects.StaticArg`), and ``f(y, t)`` inside it inlines that
function -- a nested ``def``, a lambda, a module-level function, a bound method or a NumPy
function; so is an object of the user's (:mod:`adgen.frontend.lower.objects`). A tuple or list
of them (``(np.sin, np.cos)``, ``[Dense(W1, b1), Dense(W2, b2)]``, a model's list of layers) is
a :class:`~adgen.frontend.lower.objects.StaticSeq`: a loop over it is unrolled, an item taken by
a constant index. ``map(f, xs)`` is the list comprehension ``[f(x) for x in xs]`` (over a
sequence known now, the tuple of the calls).

The arguments of a call are spread here too (``f(*args)``, ``f(**kwargs)``, of a length known
now), and bound to the parameters of the function inlined (``*args`` a tuple, ``**kwargs`` a
dict of the other keywords, keyword-only parameters).
"""

from __future__ import annotations

import functools
import types
from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir
from adgen.errors import AdgenError, UnsupportedSyntaxError
from adgen.frontend.lower.objects import (
    _DATA,
    LocalDerivative,
    LocalFunction,
    LocalInstance,
    LocalPartial,
    LocalPullback,
    StaticArg,
    StaticSeq,
    callable_rule,
    is_library,
    is_user_class,
    is_user_object,
    passable,
)
from adgen.frontend.lower.state import LowererState
from adgen.frontend.parse import LiveScope, ParsedFunction, as_def
from adgen.rules import registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


# what a library's function is given as itself (not as a value of the IR)
_PASSED_BY_NAME = (types.FunctionType, types.BuiltinFunctionType, np.ufunc)


class UnknownSpread(UnsupportedSyntaxError):
    """``f(*seq)`` where the number of items of ``seq`` is not known when transforming: the
    call is then copied as written where no differentiated value reaches it
    (:meth:`~adgen.frontend.lower.verbatim.VerbatimMixin.call_as_written`)."""

    def plain(self) -> UnsupportedSyntaxError:
        """The refusal as users see it."""
        return UnsupportedSyntaxError(self.message, self.loc, self.hint)


class _ListView:
    """A list read when the function was transformed, as the cache checks it: ``get(i)`` is
    its item ``i`` (``get("len")`` its length), so a list changed in place makes the
    derivative again."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def get(self, key: Any, default: Any = None) -> Any:
        if key == "len":
            return len(self.items)
        return self.items[key] if isinstance(key, int) and key < len(self.items) else default


def _static_display(node: Any) -> bool:
    """Could this list or tuple display hold only functions and objects (no number, no
    arithmetic, no subscript)? (A cheap look before lowering its items.)"""
    return all(
        isinstance(e, (gast.Name, gast.Attribute, gast.Call, gast.Lambda)) for e in node.elts
    )


def _function(value: Any) -> bool:
    """Is ``value`` a function (the user's, NumPy's, a method, a lambda written here)?"""
    return isinstance(value, (*_PASSED_BY_NAME, types.MethodType, LocalFunction))


def _static_table(node: gast.Dict) -> bool:
    """Could this dict display map constant keys to functions and objects only (a table of
    methods chosen by an option)? (A cheap look before lowering its values.)"""
    return (
        bool(node.keys)
        and all(isinstance(k, gast.Constant) and isinstance(k.value, (str, int)) for k in node.keys)
        and all(isinstance(v, (gast.Name, gast.Attribute, gast.Lambda)) for v in node.values)
    )


class CallablesMixin(LowererState):
    """Functions (and sequences of functions or objects) as values; arguments of calls."""

    def takes_functions(self: Lowerer, fn: Any) -> bool:
        """Is ``fn`` inlined, so that a function or an object passed to it can be passed as
        itself (:class:`StaticArg`)?"""
        if isinstance(fn, (LocalFunction, LocalInstance)):
            return True
        if isinstance(fn, (LocalPartial, functools.partial)):
            return self.takes_functions(fn.func)
        if isinstance(fn, types.MethodType):
            return isinstance(fn.__func__, types.FunctionType)
        if is_user_class(fn) or is_user_object(fn):
            return True
        if isinstance(fn, types.FunctionType):
            # a library's function (copy.deepcopy(model), logging.info("%s", model)) is given
            # values, as before: it runs as written if adgen cannot read it
            return registry.reads_as_python(fn) or (
                not is_library(fn.__module__)
                and registry.lookup(fn) is None
                and not hasattr(fn, "adgen_function")
            )
        return False

    def given_local_functions(self: Lowerer, node: gast.Call, fn: Any) -> bool:
        """Does the call ``node`` of a Python function ``fn`` pass a function of this
        function's own (a lambda, a nested ``def``)? A library's function given one is read
        with it as itself: it could not run as written on it (SciPy's ``apply_where(c,
        args, special_case)``)."""
        if not isinstance(fn, types.FunctionType):
            return False
        for a in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(a, gast.Lambda):
                return True
            if isinstance(a, gast.Name):
                try:
                    ok, value = self.static_object(a)
                except AdgenError:
                    continue
                if ok and isinstance(value, LocalFunction):
                    return True
        return False

    def default_atom(self: Lowerer, value: Any, hint: str) -> Any:
        """A default value: a function or an object of the user's as itself, else an atom."""
        if passable(value) and not isinstance(value, (types.ModuleType, type(None))):
            return StaticArg(value)
        return self.value_atom(value, hint)

    def static_argument(self: Lowerer, node: Any) -> StaticArg | None:
        """The function or object an argument names, if it is not a value of the IR (a
        function, a method, a class, an object of the user's); else None."""
        if isinstance(node, gast.Lambda):
            return StaticArg(self.lambda_function(node))
        made = self.made_class(node)
        if made is not None:  # Seq(Leaf(a), Leaf(b)): an instance made for the call
            return StaticArg(self.construct(f"{made.__name__}(...)", node, made))
        if self.is_partial(node):  # functools.partial(dynamics, k=k)
            return StaticArg(self.make_partial(node))
        frozen = self.frozen_distribution(node)
        if frozen is not None:  # scipy.stats.norm(mu, s)
            return StaticArg(frozen)
        helped = self.made_helper_object(node)
        if helped is not None:  # HalfPoissonLoss(): made now
            return StaticArg(helped)
        if isinstance(node, (gast.List, gast.Tuple)) and node.elts and _static_display(node):
            items = [self.static_argument(e) for e in node.elts]
            if all(item is not None for item in items):  # [Dense(W1, b1), Dense(W2, b2)]
                return StaticArg(StaticSeq([item.value for item in items if item is not None]))
        if isinstance(node, gast.Dict) and _static_table(node):
            items = [self.static_argument(v) for v in node.values]
            if all(item is not None and _function(item.value) for item in items):
                # {"vasicek": _vasicek_entropy, ...}: a table of functions (a dict holding
                # objects, `{"estimator": est}`, is data: spread, passed on)
                keys = [k.value for k in node.keys]  # (constants: _static_table)
                return StaticArg(dict(zip(keys, [i.value for i in items if i is not None])))
        if isinstance(node, gast.Name):
            if node.id in self.env:
                return None
            local = self.local_functions.get(node.id)
            if local is not None:
                if isinstance(local, (LocalDerivative, LocalPullback)):
                    return None
                return StaticArg(local)
            if self.enclosing is not None and self.enclosing.sees(node.id):
                return self.enclosing.static_argument(node)
        if not isinstance(node, (gast.Name, gast.Attribute, gast.Subscript)):
            return None
        try:
            ok, obj = self.static_object(node)
        except Exception:
            return None
        if ok and isinstance(obj, StaticSeq):
            return StaticArg(obj)
        if ok and isinstance(obj, (list, tuple)):
            seq = self.sequence_of_objects(obj)
            return StaticArg(seq) if seq is not None else None
        if ok and isinstance(obj, types.ModuleType):  # f(x, xp=np): the name means np there
            return StaticArg(obj)
        if not ok or isinstance(obj, _DATA) or not passable(obj):
            return None
        return StaticArg(obj)

    def bind_function_defaults(self: Lowerer) -> None:
        """Parameters of the function differentiated whose default is a function (``def
        loss(w, act=np.tanh)``): the name means that function, which is read where it is
        called; the generated code checks, when it runs, that the caller passed the default
        (another function needs other code: it is refused by name, with how to bind it)."""
        scope = self.parsed.scope
        if self.parent is not None or not isinstance(scope, LiveScope):
            return
        if self.parsed.filename.startswith("<adgen "):
            return  # adgen's own code passes such a parameter on as it was given
        fn = scope.fn
        code = fn.__code__
        names = code.co_varnames[: code.co_argcount]
        defaults = fn.__defaults__ or ()
        for p, d in zip(names[len(names) - len(defaults) :], defaults):
            atom = self.env.get(p)
            if p in self.multi or not isinstance(atom, ir.Var) or not _function_value(d):
                continue
            label = getattr(d, "__name__", type(d).__name__)
            never = UnsupportedSyntaxError(f"adgen compares `{p}` with its default", None, "")
            test = self.opaque(IsDefault(d), never, [atom], [], None, "same", self.node)
            what = (
                f"passing another function as `{p}` to `{fn.__name__}`: adgen made its "
                f"derivative for the default, `{label}`"
            )
            hint = f"differentiate functools.partial({fn.__name__}, {p}=your_function)"
            checks = (("what", ir.Const(what)), ("hint", ir.Const(hint)))
            self.block.append(ir.Assign((), registry.ASSERT, (test,), checks, self.line))
            self.env.pop(p)
            self.local_functions[p] = d

    def bound_module(self: Lowerer, node: Any) -> StaticArg | None:
        """A name the function bound to a module (``xp = array_namespace(x)``), passed to a
        library's function (``xp_promote(x, xp=xp)``): the module itself, never a value."""
        if isinstance(node, gast.Name) and node.id not in self.env:
            local = self.local_functions.get(node.id)
            if isinstance(local, types.ModuleType):
                return StaticArg(local)
            if local is None and node.id not in self.bound:  # (a module's global name:
                try:  # `capabilities(numpy, device='cpu')` of adgen's code, read again)
                    ok, value = self.static_object(node)
                except AdgenError:
                    return None
                if ok and isinstance(value, types.ModuleType):
                    return StaticArg(value)
        return None

    def is_partial(self: Lowerer, node: Any) -> bool:
        """Is ``node`` a call of ``functools.partial``?"""
        try:
            return isinstance(node, gast.Call) and self.is_call_to(node, functools.partial)
        except Exception:
            return False

    def make_partial(self: Lowerer, node: gast.Call) -> LocalPartial:
        """``functools.partial(f, *args, **kwargs)`` inside the function: ``f`` must be a
        function adgen knows; the arguments are lowered now, as Python evaluates them."""
        if not node.args or isinstance(node.args[0], gast.Starred):
            self.refuse(node, "this form of functools.partial", "write partial(f, ...)")
        func = self.static_argument(node.args[0])
        if func is None:
            self.refuse(
                node.args[0],
                "functools.partial of a value adgen does not know as a function",
                "pass a function by its name, a lambda or a nested def",
            )
        rest = gast.copy_location(
            gast.Call(func=node.func, args=node.args[1:], keywords=node.keywords), node
        )
        # the values now: a name rebound later (in a loop) must not change them
        args = [
            a if isinstance(a, StaticArg) else self.copied_apart(a, "arg")
            for a in self.call_arguments(rest, True)
        ]
        kwargs = [
            (k, v if isinstance(v, StaticArg) else self.copied_apart(v, k))
            for k, v in self.call_keywords(rest, True)
        ]
        return LocalPartial(func.value, args, kwargs)

    def unpartial(
        self: Lowerer, fn: Any, args: list[Any], kwargs: list[tuple[str, Any]]
    ) -> tuple[Any, list[Any], list[tuple[str, Any]]]:
        """A call of a partial: its function, with its arguments first and its keywords
        (those of the call win, as in Python)."""
        if isinstance(fn, functools.partial):  # made outside: its arguments are constants
            fn = LocalPartial(
                fn.func,
                [self.default_atom(a, "arg") for a in fn.args],
                [(k, self.default_atom(v, k)) for k, v in fn.keywords.items()],
            )
        given = {k for k, _ in kwargs}
        merged = [(k, v) for k, v in fn.kwargs if k not in given] + kwargs
        return fn.func, [*fn.args, *args], merged

    def refuse_sequence(self: Lowerer, name: str, node: Any = None) -> None:
        """Refuse a sequence of functions or objects used as a value."""
        self.refuse(
            node if node is not None else self.node,
            f"using `{name}`, a list or tuple of functions or objects, as a value",
            "loop over it (`for layer in layers:`), take an item by a constant index, or pass "
            "it to your own function",
        )

    def sequence_of_objects(self: Lowerer, value: Any) -> StaticSeq | None:
        """A list or tuple from outside whose items are all functions or objects of the user's
        (a model's layers): its items, the list recorded for the cache; else None."""
        if not isinstance(value, (list, tuple)) or not value:
            return None
        if not all(passable(v) and not isinstance(v, (type, *_DATA)) for v in value):
            return None
        if isinstance(value, list):
            view = _ListView(value)
            self.record("item", view, "len", len(value))
            for k, item in enumerate(value):
                self.record("item", view, k, item)
        return StaticSeq(list(value))

    def static_sequence(self: Lowerer, node: Any) -> StaticSeq | None:
        """The functions or objects ``node`` names as a sequence known now, if it does."""
        if isinstance(node, (gast.Name, gast.Attribute, gast.List, gast.Tuple)):
            found = self.static_argument(node)
            if found is not None and isinstance(found.value, StaticSeq):
                return found.value
        return None

    def lower_static_loop(self: Lowerer, stmt: Any) -> bool:
        """``for layer in self.layers:`` (``for i, f in enumerate(fs):``) over functions or
        objects known now: one copy of the body per item, ``layer`` meaning that item."""
        it, target, counter = stmt.iter, stmt.target, None
        if self.indexed_objects_loop(stmt):
            return True
        if (
            isinstance(it, gast.Call)
            and len(it.args) == 1
            and not it.keywords
            and isinstance(target, gast.Tuple)
            and len(target.elts) == 2
            and isinstance(target.elts[0], gast.Name)
            and self.is_call_to(it, enumerate)
        ):
            it, counter, target = it.args[0], target.elts[0], target.elts[1]
        seq = self.static_sequence(it)
        if seq is None:
            return False
        if not isinstance(target, gast.Name):
            self.refuse(target, "unpacking functions or objects in a loop", "use one name")
        if stmt.orelse:
            self.refuse(stmt, "`else` clauses on loops", "move that code after the loop")
        line = self.key(stmt)
        for k, item in enumerate(seq.items):
            self.line = line
            block, self.block = self.block, []
            self.depth += 1
            if counter is not None:
                self.bind(counter.id, self.new_name(counter.id), ir.Const(k))
            self.env.pop(target.id, None)
            self.local_functions[target.id] = item
            self.bound.add(target.id)
            self.lower_block(stmt.body)
            self.depth -= 1
            body, self.block = self.block, block
            self.block.append(ir.If(ir.Const(True), body, [], line))
        return True

    def indexed_objects_loop(self: Lowerer, stmt: Any) -> bool:
        """``for i in range(self.k_variables): cost += self.gp[i].func(...)``: a loop over a
        range of a length known now whose body picks functions or objects known now by the
        counter -- one copy of the body per step, ``i`` a constant in each (as
        :meth:`lower_static_loop` does for ``for g in self.gp``). False (nothing lowered) for
        any other loop."""
        it, target = stmt.iter, stmt.target
        if not (
            isinstance(it, gast.Call)
            and len(it.args) == 1
            and not it.keywords
            and isinstance(target, gast.Name)
            and not stmt.orelse
            and self.is_call_to(it, range)
        ):
            return False

        def objects(node: Any) -> bool:
            try:
                ok, value = self.static_object(node)
            except AdgenError:
                return False
            return ok and self.sequence_of_objects(value) is not None

        picked = [
            n
            for s in stmt.body
            for n in gast.walk(s)
            if isinstance(n, gast.Subscript)
            and isinstance(n.slice, gast.Name)
            and n.slice.id == target.id
            and isinstance(n.value, (gast.Name, gast.Attribute))
        ]
        if not any(objects(n.value) for n in picked):
            return False
        count = self.settled(self.expr(it.args[0], None, "n"))
        if not (isinstance(count, ir.Const) and type(count.value) is int and count.value <= 256):
            return False
        line = self.key(stmt)
        for k in range(count.value):
            self.line = line
            block, self.block = self.block, []
            self.depth += 1
            self.env[target.id] = ir.Const(k)  # (a constant in this copy: `self.gp[i]`)
            self.lower_block(stmt.body)
            self.depth -= 1
            body, self.block = self.block, block
            self.block.append(ir.If(ir.Const(True), body, [], line))
        return True

    def static_item(self: Lowerer, node: gast.Subscript) -> tuple[bool, Any]:
        """``ACTIVATIONS["tanh"]``, ``self.acts[name]`` with ``name`` a constant: a function
        (or an object of the user's) picked from a dict or a tuple known now, by a key known
        now -- a callback chosen statically. Anything else is not static here."""
        if isinstance(node.value, gast.Dict):  # {"box-cox": boxcox, ...}[self.method]
            table = self.static_argument(node.value)
            ok, container = (True, table.value) if table is not None else (False, None)
        else:
            ok, container = self.static_object(node.value)
        if ok and isinstance(container, StaticSeq):
            container = tuple(container.items)
        elif ok and isinstance(container, list):
            seq = self.sequence_of_objects(container)  # model.layers[0]
            container = tuple(seq.items) if seq is not None else None
        if not ok or not isinstance(container, (dict, tuple)):
            return False, None
        key = node.slice
        held = self.env.get(key.id) if isinstance(key, gast.Name) else None
        held = self.settled(held) if held is not None else None  # (`method` bound in ifs)
        value: Any
        known, value = self.known_value(held) if held is not None else (False, None)
        if known and (isinstance(held, ir.Const) or type(value) in (str, int)):
            pass  # (a constant; a closure's or a global's name the function was given)
        elif isinstance(key, gast.Name) and key.id not in self.env:  # a global or a closure's
            known_key, value = self.static_object(key)
            if not known_key or type(value) not in (str, int):
                return False, None
        elif isinstance(key, gast.Constant):
            value = key.value
        elif (
            isinstance(key, gast.UnaryOp)
            and isinstance(key.op, gast.USub)
            and isinstance(key.operand, gast.Constant)
            and type(key.operand.value) is int
        ):
            value = -key.operand.value  # layers[-1]
        elif isinstance(key, gast.Attribute):  # ACTIVATIONS[self.activation]: an option
            known_key, value = self.static_object(key)
            if not known_key or type(value) not in (str, int):
                return False, None
        else:
            return False, None
        try:
            item = container[value]
        except (KeyError, IndexError, TypeError):
            return False, None
        module = isinstance(item, types.ModuleType)  # (pd = sys.modules["pandas"])
        if not (passable(item) or module) or isinstance(item, type):
            return False, None
        if isinstance(container, dict):
            self.record("item", container, value, item)  # (a dict's .get tells a change)
        return True, item

    def lambda_function(self: Lowerer, node: Any) -> Any:
        """A lambda written where it is used (``map(lambda v: v * v, xs)``, ``euler(lambda y,
        t: -k * y, y0, ts)``): a local function of its own."""
        fdef = as_def(node, "lambda")
        names = [a.id for a in fdef.args.args]
        defaults = {
            p: self.copied_apart(self.expr(d, None, p), p)
            for p, d in zip(names[len(names) - len(fdef.args.defaults) :], fdef.args.defaults)
        }
        return LocalFunction(fdef, self, defaults)

    # -- calls with functions and sequences as arguments ---------------------------------------
    def call_arguments(
        self: Lowerer, node: gast.Call, static: bool, hint: str = "arg", functions: bool = False
    ) -> list[Any]:
        """The positional arguments of a call, ``*seq`` spread where ``seq`` has a length known
        now (a tuple or list display, a name bound to one, a ``*args`` parameter); with
        ``static``, a function or an object as its :class:`StaticArg`; with ``functions``, a
        function defined outside the function as its :class:`StaticArg` (a library's
        function is passed it as itself, by its name where it runs as written)."""
        args: list[Any] = []
        for a in node.args:
            if isinstance(a, gast.Starred):
                seq = self.spread(a.value, hint)
                if not isinstance(seq, ir.Tup):
                    raise UnknownSpread(
                        "adgen does not support "
                        "`*args` in a call where the number of items is not known when adgen "
                        "reads the function",
                        self.parsed.loc(a),
                        "spread a tuple or list written in the function (or a `*args` "
                        "parameter), or pass the arguments one by one",
                    )
                args.extend(seq.items)
                continue
            found = self.static_argument(a) if static else self.bound_module(a)
            if found is None and functions and isinstance(a, (gast.Name, gast.Attribute)):
                found = self.static_argument(a)  # apply_where(c, args, operator.truediv)
                if found is not None and not (
                    isinstance(found.value, _PASSED_BY_NAME)
                    or registry.lookup(found.value) is not None  # (xp.round: NumPy's, a rule)
                ):
                    found = None
            if found is None and static and isinstance(a, gast.Call):
                found = self.call_maybe_static(a, None)  # m.loglike(Params.from_parts(p))
            args.append(found if found is not None else self.expr(a, None, hint))
        return args

    def packed_arguments(self: Lowerer, node: gast.Call, hint: str) -> list[Any] | None:
        """The arguments of a method that packs its own into one tuple (``x.reshape(*y.shape,
        -1)``), where a spread's length is known only when the code runs: that tuple, joined
        then (``rt.joined_items``); None where every length is known now (the arguments are
        read one by one, :meth:`call_arguments`)."""
        if not any(isinstance(a, gast.Starred) for a in node.args):
            return None
        parts: list[ir.Atom] = []
        for a in node.args:
            if not isinstance(a, gast.Starred):
                parts.append(ir.Tup((self.expr(a, None, hint),)))
                continue
            parts.append(self.spread(a.value, hint))
        if all(isinstance(p, ir.Tup) for p in parts):
            return [item for p in parts for item in p.items]  # type: ignore[union-attr]
        joined = registry.lookup(rt.joined_items)
        assert joined is not None
        return [self.emit(None, hint, joined, parts, [], node)]

    def spread(self: Lowerer, node: Any, hint: str) -> ir.Atom:
        """What ``*node`` spreads: its items where their number is known now (a tuple, a
        shape of a known kind, a list of a fixed length, a generator over a sequence known
        now: ``f(*(a[c] for a in args))``), else the sequence as it is."""
        if isinstance(node, gast.GeneratorExp):
            items = self.unrolled(node)
            if items is not None:
                return ir.Tup(tuple(items))
        seq = self.expr(node, None, hint)
        if isinstance(seq, ir.Free):  # `f(x, *SHAPES)` of a tuple made outside
            seq = self.spread_outside(node, seq, hint)
        if not isinstance(seq, ir.Tup):
            seq = self.spread_shape(node, seq, hint)
        return self.fixed_list_items(node, seq, hint)

    def spread_shape(self: Lowerer, node: Any, seq: ir.Atom, hint: str) -> ir.Atom:
        """``*x.shape`` where the code is made for ``x``'s kind (its number of axes known):
        the items ``x.shape[0], x.shape[1], ...``; else ``seq`` as it is."""
        if not (isinstance(node, gast.Attribute) and node.attr == "shape"):
            return seq
        sample = self.argument_sample(self.expr(node.value, None, hint))
        if not isinstance(sample, np.ndarray):
            return seq
        getitem = registry.lookup(registry.operator.getitem)
        assert getitem is not None
        items = [
            self.emit(None, hint, getitem, [seq, ir.Const(k)], [], node) for k in range(sample.ndim)
        ]
        return ir.Tup(tuple(items))

    def call_keywords(
        self: Lowerer, node: gast.Call, static: bool, hint: str = "arg"
    ) -> list[tuple[str, Any]]:
        """The keyword arguments of a call, ``**kw`` spread where ``kw`` is a dict with keys
        known now (a ``**kwargs`` parameter, a dict display)."""
        kwargs: list[tuple[str, Any]] = []
        for kw in node.keywords:
            if kw.arg is None:
                spread = self.expr(kw.value, None, hint)
                if isinstance(spread, ir.Free):  # `f(x, **OPTIONS)` of a dict made outside
                    spread = self.spread_outside(kw.value, spread, hint)
                if not isinstance(spread, ir.Dct):
                    self.refuse(
                        kw.value,
                        "`**kwargs` in a call where the keys are not known when adgen reads "
                        "the function",
                        "pass keyword arguments one by one",
                    )
                kwargs.extend(zip(spread.keys, spread.values))
                continue
            found = self.static_argument(kw.value) if static else self.bound_module(kw.value)
            atom = found if found is not None else self.expr(kw.value, None, hint)
            kwargs.append((kw.arg, atom))
        return kwargs

    def mapped(self: Lowerer, node: gast.Call, target: str | None, hint: str) -> ir.Atom:
        """``map(f, xs)``: over sequences known now (tuples, list displays, ``zip(*pairs)``)
        the tuple of the calls ``(f(xs[0]), f(xs[1]), ...)``; else the list comprehension
        ``[f(x) for x in xs]``."""
        if (
            len(node.args) < 2
            or node.keywords
            or any(isinstance(a, gast.Starred) for a in node.args)
        ):
            self.refuse(node, "this form of map", "write `map(f, xs)` or a list comprehension")
        seqs = [self.expr(a, None, hint) for a in node.args[1:]]
        names = [self.user_namer.fresh("mapped") for _ in seqs]
        for name, seq in zip(names, seqs):
            self.env[name] = seq  # hidden names: the sequences are evaluated once
        if not all(isinstance(seq, ir.Tup) for seq in seqs):
            return self.expr(self.map_comprehension(node, names), target, hint)
        count = min(len(seq.items) for seq in seqs if isinstance(seq, ir.Tup))
        calls = [
            gast.Call(
                func=node.args[0],
                args=[
                    gast.Subscript(
                        value=gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None),
                        slice=gast.Constant(value=k, kind=None),
                        ctx=gast.Load(),
                    )
                    for n in names
                ],
                keywords=[],
            )
            for k in range(count)
        ]
        for call in calls:
            for n in gast.walk(call):
                gast.copy_location(n, node)
        return ir.Tup(tuple(self.expr(call, None, hint) for call in calls))

    def bind_arguments(
        self: Lowerer,
        node: Any,
        parsed: ParsedFunction,
        defaults: dict[str, Any],
        args: list[Any],
        kwargs: list[tuple[str, Any]],
    ) -> dict[str, Any]:
        """What each parameter of the inlined function means: positional (positional-only
        too) and keyword arguments, defaults, ``*args`` as a tuple (its length known now),
        keyword-only parameters, ``**kwargs`` as a dict of the other keywords."""
        spec = parsed.node.args
        name = parsed.name
        positional = [a.id for a in spec.posonlyargs]  # (`def f(x, /, y)`: x by position)
        params = positional + [a.id for a in spec.args]
        kwonly = [a.id for a in spec.kwonlyargs]
        bound = dict(zip(params, args))
        extra = args[len(params) :]
        if spec.vararg is not None:
            if any(isinstance(a, StaticArg) for a in extra):
                self.refuse(node, f"functions or objects in the `*{spec.vararg.id}` of `{name}`")
            bound[spec.vararg.id] = ir.Tup(tuple(extra))
        elif extra:
            self.refuse(node, f"calling `{name}` with {len(args)} arguments", "check the call")
        spread: list[tuple[str, Any]] = []
        for k, v in kwargs:
            if k in bound or k in (p for p, _ in spread):
                self.refuse(node, f"the argument `{k}` given twice to `{name}`", "check the call")
            if (k in params and k not in positional) or k in kwonly:
                bound[k] = v
            elif spec.kwarg is not None and not isinstance(v, StaticArg):
                spread.append((k, v))
            else:
                self.refuse(node, f"the argument `{k}` in this call of `{name}`", "check the call")
        if spec.kwarg is not None:
            bound[spec.kwarg.id] = ir.Dct(tuple(k for k, _ in spread), tuple(v for _, v in spread))
        for p in params + kwonly:
            if p not in bound:
                if p not in defaults:
                    self.refuse(node, f"calling `{name}` without `{p}`", "pass every argument")
                bound[p] = defaults[p]
        return bound

    def map_comprehension(self: Lowerer, node: gast.Call, seqs: list[str]) -> Any:
        """``map(f, xs)`` (``map(f, xs, ys)``) as ``[f(x) for x in xs]`` (``zip``-ped), the
        sequences already lowered and bound to the hidden names ``seqs``."""
        names = [self.user_namer.fresh("item") for _ in seqs]

        def load(n: str) -> Any:
            return gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None)

        def store(n: str) -> Any:
            return gast.Name(id=n, ctx=gast.Store(), annotation=None, type_comment=None)

        call = gast.Call(func=node.args[0], args=[load(n) for n in names], keywords=[])
        if len(names) == 1:
            target, it = store(names[0]), load(seqs[0])
        else:
            target = gast.Tuple(elts=[store(n) for n in names], ctx=gast.Store())
            zipped = self.user_namer.fresh("zip")
            self.local_functions[zipped] = zip  # the builtin, whatever `zip` names here
            it = gast.Call(func=load(zipped), args=[load(n) for n in seqs], keywords=[])
        gen = gast.comprehension(target=target, iter=it, ifs=[], is_async=0)
        comp = gast.ListComp(elt=call, generators=[gen])
        for n in gast.walk(comp):
            gast.copy_location(n, node)
        return comp


def _function_value(value: Any) -> bool:
    """A function given as a parameter's default (``act=np.tanh``): a Python function, a
    builtin, a bound method, a ``functools.partial``, or a function adgen has a rule for --
    not a class (``dtype=np.float64`` is a value generated code passes on)."""
    if isinstance(value, type):
        return False
    kinds = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial)
    return isinstance(value, kinds) or callable_rule(value)


class IsDefault:
    """Is the value the caller passed the parameter's default (the function adgen read)? An
    object generated code calls as written (derivative code read again passes the value
    on, never the function)."""

    adgen_reads_only = True
    __name__ = "is_default"

    def __init__(self, default: Any) -> None:
        self.default = default

    def __call__(self, value: Any) -> bool:
        return value is self.default
