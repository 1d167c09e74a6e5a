# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower the objects of the user's classes: their methods and attributes, instances made inside.

- an object made outside the function (a global ``model``, a default or closure value) is a
  constant: its attributes are read when the function is transformed (the cache notices when
  one is rebound), its methods are inlined like any function with ``self`` bound to it (one
  adgen cannot read, of a library's object, runs as written when only constants reach it);
- an instance of a module-level class made inside the function (``m = Linear(W, b)``) is a
  :class:`LocalInstance`: ``__init__`` is inlined, and each ``self.name = value`` records what
  the attribute means (an IR atom); reading ``m.W`` gives that atom, ``m(x)`` and
  ``m.forward(x)`` inline the method with ``self`` bound to the record. Attributes are written
  only in straight-line code of the block the instance was made in (a write inside a loop or
  a branch is refused: the record could not say which value the attribute has).

The values that stand for what is not an IR value live here too: :class:`StaticArg` (a function
or an object passed as itself), :class:`StaticSeq` (a sequence of them), the local functions.
Functions as values are lowered in :mod:`adgen.frontend.lower.callables`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import types
import weakref
from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir
from adgen.errors import NonDifferentiableError, NoRuleError, UnsupportedSyntaxError
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.syntax import TreeIndex, _block_local
from adgen.frontend.parse import LiveScope, ParsedFunction
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer

_ABSENT = object()  # (inspect.getattr_static's answer for no such attribute)


class LocalRecord:
    """The result of a solver returning an object (``sol = solve_ivp(...)``): the atoms of
    the attributes a program reads (``sol.y``, ``sol.t``, ``sol.success``)."""

    def __init__(self, solver: str, fields: dict[str, Any]) -> None:
        self.solver = solver
        self.fields = fields


class LocalFunction:
    """A nested ``def`` (or a lambda bound to a name) of the function being lowered."""

    def __init__(self, node: Any, enclosing: Lowerer, defaults: dict[str, Any]) -> None:
        self.node = node
        self.enclosing = enclosing
        self.defaults = defaults

    def parsed(self, caller: Lowerer) -> ParsedFunction:
        outer = self.enclosing.parsed
        return ParsedFunction(
            node=self.node,
            name=self.node.name,
            filename=outer.filename,
            line_offset=outer.line_offset,
            col_offset=outer.col_offset,
            lines=outer.lines,
            scope=outer.scope,
        )


class LocalDerivative:
    """``g = adgen.grad(F, wrt)`` inside the function: ``g(args)`` is a nested derivative."""

    def __init__(self, kind: str, maker: Any) -> None:
        self.kind = kind
        self.maker = maker


class LocalPullback:
    """``out, pullback = adgen.vjp(F, *primals)`` inside the function: ``pullback(ct)``."""

    def __init__(
        self, lifted: ParsedFunction, params: list[str], captured: list[str], args: list[ir.Atom]
    ) -> None:
        self.lifted = lifted
        self.params = params
        self.captured = captured
        self.args = args


class LocalInstance:
    """An instance of a module-level class made inside the function: its class and what each
    attribute means (an IR atom, or a :class:`StaticArg` for a function or an object)."""

    def __init__(self, cls: type, name: str, block: list[ir.Stmt]) -> None:
        self.cls = cls
        self.name = name
        self.attrs: dict[str, ir.Atom | StaticArg] = {}
        # the block it is made in: its attributes are written only there, in straight-line
        # code (a write in a loop or a branch would leave the record unsure)
        self.block = block


class LocalFrozen:
    """A distribution frozen inside the function (``d = scipy.stats.norm(mu, s)``): the
    distribution, and the parameters it was given (atoms), passed after the data to the
    method called on it (``d.logpdf(x)`` is ``scipy.stats.norm.logpdf(x, mu, s)``)."""

    def __init__(self, dist: Any, args: list[ir.Atom], kwargs: list[tuple[str, ir.Atom]]) -> None:
        self.dist = dist
        self.args = args
        self.kwargs = kwargs


class FrozenMethod:
    """``d.logpdf`` of a :class:`LocalFrozen`: the distribution's method, and the parameters
    to pass after the program's arguments."""

    def __init__(self, method: Any, frozen: LocalFrozen) -> None:
        self.method = method
        self.args = frozen.args
        self.kwargs = frozen.kwargs


class LocalPartial:
    """``functools.partial(f, *args, **kwargs)``: the function (or a local one) and the
    arguments it was given (atoms, or :class:`StaticArg`), made inside the function or outside."""

    def __init__(self, func: Any, args: list[Any], kwargs: list[tuple[str, Any]]) -> None:
        self.func = func
        self.args = args
        self.kwargs = kwargs


class StaticSeq:
    """A tuple or list of functions or objects known now (``(np.sin, np.cos)``,
    ``[Dense(W1, b1), Dense(W2, b2)]``, a model's list of layers): a loop over it is unrolled,
    an item taken by a constant index is that function or object."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items


class StaticArg:
    """An argument that is not an IR value: a function, a bound method, a class or an object
    (passed to a function adgen inlines, whose parameter then means the same thing)."""

    def __init__(self, value: Any) -> None:
        self.value = value


# modules whose classes are not read as the user's own (their objects' methods run as written)
_LIBRARIES = {"numpy", "scipy", "adgen", "builtins", "jax", "torch", "pandas"}
_DATA = (
    np.ndarray,
    np.generic,
    int,
    float,
    complex,
    str,
    bytes,
    list,
    tuple,
    dict,
    set,
    frozenset,
    range,
    slice,
    type(None),
)


# what names a function (plain strings: a decorator's wrapper tests them)
_NAMES = frozenset({"__name__", "__qualname__", "__module__"})


def is_library(module: Any) -> bool:
    """Is this module (a name) a library's (NumPy, SciPy, the standard library...)? A module
    that is no name (a compiled type whose ``__module__`` is a descriptor, as Cython's
    functions have under NumPy 2.2) is a library's.

    >>> is_library("numpy.linalg"), is_library("my_model"), is_library(None)
    (True, False, False)
    """
    if module is not None and not isinstance(module, str):
        return True
    root = (module or "").split(".")[0]
    return root in _LIBRARIES or root in getattr(sys, "stdlib_module_names", ())


def is_user_class(obj: Any) -> bool:
    """A class of the user's (not of a library's, no metaclass, no ``__new__`` of its own)."""
    return (
        isinstance(obj, type)
        and type(obj) is type
        and not is_library(obj.__module__)
        and getattr(obj, "__new__", None) is object.__new__
    )


def _runs_code_on_store(obj: Any, attr: str) -> bool:
    """Does ``obj.attr = value`` run code of ``obj``'s class (a property's setter, another
    data descriptor, a ``__setattr__`` of its own) rather than only store the value?

    >>> class K:
    ...     @property
    ...     def theta(self):
    ...         return 0.0
    ...     @theta.setter
    ...     def theta(self, value):
    ...         self.length_scale = value
    >>> _runs_code_on_store(K(), "theta"), _runs_code_on_store(K(), "n_iter_")
    (True, False)
    """
    cls = type(obj)
    if getattr(cls, "__setattr__", object.__setattr__) is not object.__setattr__:
        return True
    raw = inspect.getattr_static(cls, attr, None)
    return raw is not None and hasattr(type(raw), "__set__")


def _cached_getter(raw: Any) -> types.FunctionType | None:
    """The getter of a cached property (``functools.cached_property``, statsmodels'
    ``cache_readonly``): a property whose value is kept after the first read -- the same
    value, where its getter reads only what does not change. None for anything else."""
    getter = getattr(raw, "func", None) if isinstance(raw, functools.cached_property) else None
    if getter is None and type(raw).__name__ in ("cache_readonly", "CachedAttribute"):
        getter = getattr(raw, "fget", None) or getattr(raw, "func", None)
    return getter if isinstance(getter, types.FunctionType) else None


def is_user_object(obj: Any) -> bool:
    """An instance of a user's class (not data, not a function, not a library's object)."""
    return (
        not isinstance(obj, (*_DATA, type, types.ModuleType, types.FunctionType))
        and not isinstance(obj, (types.MethodType, types.BuiltinFunctionType))
        and hasattr(obj, "__dict__")
        and not is_library(type(obj).__module__)
    )


def _owner(cls: type, attr: str, after: type | None = None) -> type | None:
    """The class of ``cls``'s method resolution order that defines ``attr`` (only those after
    ``after``, if given: ``super()``)."""
    mro = cls.__mro__
    if after is not None:
        mro = mro[mro.index(after) + 1 :] if after in mro else ()
    for klass in mro:
        if attr in vars(klass):
            return klass
    return None


class ObjectsMixin(LowererState):
    """Functions and objects as values; methods; instances of the user's classes."""

    # -- what a name or an attribute means, when it is not an IR value --------------------------
    def callable_of(self: Lowerer, fn: Any, func: Any) -> Any:
        """What calling ``fn`` calls: for an object of the user's (one made inside the function
        too), its ``__call__`` bound to it."""
        if isinstance(fn, LocalInstance) or (is_user_object(fn) and not callable_rule(fn)):
            attr = gast.copy_location(
                gast.Attribute(value=func, attr="__call__", ctx=gast.Load()), func
            )
            found, method = self.member(fn, attr)
            return method if found else fn
        return fn

    def member(self: Lowerer, base: Any, node: gast.Attribute) -> tuple[bool, Any]:
        """``base.attr`` for an object adgen reads: a method (bound to ``base``), a static or
        class method, a class attribute, or an attribute of an object made outside."""
        attr = node.attr
        if attr in _NAMES and isinstance(
            base, (types.FunctionType, types.BuiltinFunctionType, type)
        ):  # `fit_method.__name__ == "partial_fit"`, `estimator.__class__.__name__`
            return True, getattr(base, attr)
        if isinstance(base, LocalFrozen):
            return True, self.frozen_method(base, node)
        if isinstance(base, LocalInstance):
            value = base.attrs.get(attr)
            if value is not None:
                return (True, value.value) if isinstance(value, StaticArg) else (False, None)
            return self.class_member(base.cls, base, node)
        if is_user_class(base):
            return self.class_member(base, None, node)
        if not is_user_object(base):  # a library's object: only a method adgen has a rule for
            raw = inspect.getattr_static(base, attr, None)  # (partial(mvn.pdf, ...): no getattr
            if isinstance(raw, types.FunctionType):  # of a property, which may compute)
                method = getattr(base, attr)
                if registry.lookup(method) is not None:
                    return True, method
            return False, None
        if (id(base), attr) in self.root.attrs_shadowed:
            return False, None  # (a value the function stored: instance_attribute gives it)
        if type(base).__getattribute__ is not object.__getattribute__:
            value = getattr(base, attr)  # the class says what its attributes are
            self.record("attr", base, attr, value)
            return True, value
        if attr in vars(base):  # an attribute of the object: a constant of the derivative
            value = vars(base)[attr]
            self.record("attr", base, attr, value)
            return True, value
        raw = inspect.getattr_static(base, attr, None)
        if isinstance(raw, property):
            try:
                value = getattr(base, attr)
            except Exception:
                value = None
            if is_user_object(value):  # `model.family.link`: an object, read now like any
                self.record("attr", base, attr, value)  # attribute of an outside object
                return True, value
        if isinstance(raw, (types.FunctionType, staticmethod, classmethod, property)):
            return self.class_member(type(base), base, node)
        try:  # a class attribute, a slot, what __getattr__ makes: a constant too
            value = getattr(base, attr)
        except AttributeError:
            self.refuse(
                node, f"reading `.{attr}`: `{type(base).__name__}` has no attribute `{attr}`"
            )
        self.record("attr", base, attr, value)
        return True, value

    def super_member(self: Lowerer, node: gast.Attribute) -> tuple[bool, Any]:
        """``super().attr`` in a method adgen inlines: looked up after the method's class."""
        fn = self.fn
        args = self.node.args.args
        if (
            fn is None
            or "__class__" not in fn.__code__.co_freevars
            or not args
            or not fn.__closure__
        ):
            self.refuse(node, "`super()` here", "call the base class's method by name")
        cell = fn.__closure__[fn.__code__.co_freevars.index("__class__")]
        instance = self.local_functions.get(args[0].id)
        if isinstance(instance, LocalInstance):
            cls = instance.cls
        elif is_user_object(instance) or is_user_class(instance):
            cls = instance if isinstance(instance, type) else type(instance)
        else:
            self.refuse(node, "`super()` in a method whose `self` adgen does not know")
        return self.class_member(cls, instance, node, after=cell.cell_contents)

    def class_member(
        self: Lowerer, cls: type, instance: Any, node: gast.Attribute, after: type | None = None
    ) -> tuple[bool, Any]:
        """``attr`` looked up on ``cls`` (for ``instance``, if not None)."""
        attr = node.attr
        owner = _owner(cls, attr, after)
        if owner is None:
            what = f"`{cls.__name__}`" + (" instance" if instance is not None else "")
            self.refuse(
                node,
                f"reading `.{attr}`: {what} has no attribute `{attr}` here",
                "assign every attribute in __init__ (adgen reads the class's source)",
            )
        raw = class_dict(owner)[attr]
        self.record("item", class_dict(owner), attr, raw)
        if isinstance(raw, staticmethod):
            return True, raw.__func__
        if isinstance(raw, classmethod):
            return True, types.MethodType(raw.__func__, cls)
        if isinstance(raw, types.FunctionType):
            return True, raw if instance is None else types.MethodType(raw, instance)
        if isinstance(raw, property) and instance is not None:
            return True, Property(raw, instance)
        cached = _cached_getter(raw)  # functools.cached_property, statsmodels' cache_readonly
        if cached is not None and instance is not None:
            return True, Property(property(cached), instance)
        if hasattr(type(raw), "__get__") and not isinstance(raw, _DATA):
            self.refuse(
                node, f"the attribute `{attr}` of `{cls.__name__}` (a descriptor adgen cannot read)"
            )
        return True, raw

    def attribute_test(self: Lowerer, node: gast.Call, fn: Any) -> ir.Atom | None:
        """``getattr(x, "name", default)`` (or ``inspect.getattr_static``) of a module, or of
        an argument of a kind the code is made for, decided when transforming: the default
        where the kind has no such attribute (``getattr(X, "__narwhals_dataframe__", None)``
        of an array), its ``dtype`` or ``ndim``, or what ``getattr_static`` finds on its
        class. None: not decided (lowered as any other call)."""
        if node.keywords:
            return None
        first, name_node = node.args[0], node.args[1]
        if (
            isinstance(first, gast.Name)
            and first.id not in self.env
            and isinstance(name_node, gast.Constant)
            and isinstance(name_node.value, str)
        ):  # getattr(xp, "float16", xp.float32) of a namespace passed to a library's helper
            module = self.static_argument(first)
            if module is not None and isinstance(module.value, types.ModuleType):
                missing = object()
                found = fn(module.value, name_node.value, missing)
                if found is missing:
                    return self.expr(node.args[2], None, "default")
                return self.static_atom(found, name_node.value, node)
        absent = self.absent_attribute(node, fn)
        if absent is not None:
            return absent
        mark = len(self.block)
        sample = self.argument_sample(self.expr(node.args[0], None, "x"))
        name = self.settled(self.expr(node.args[1], None, "name"))
        if sample is None or not (isinstance(name, ir.Const) and isinstance(name.value, str)):
            del self.block[mark:]
            return None
        missing = object()
        found = fn(sample, name.value, missing)
        if found is missing:
            return self.expr(node.args[2], None, "default")
        if fn is getattr and name.value in ("dtype", "ndim"):
            return self.static_atom(found, name.value, node)
        if fn is inspect.getattr_static and not isinstance(found, (np.ndarray, np.generic)):
            return self.static_atom(found, name.value, node)
        del self.block[mark:]
        return None

    def record(self: Lowerer, kind: str, container: Any, name: Any, value: Any) -> None:
        """Note a value read from an object, so that the cached derivative is made again if
        the object is changed (rebinding an attribute, redefining a method)."""
        if kind == "attr":
            if (id(container), name) in self.root.attrs_written:
                self.refuse(
                    self.current,
                    f"reading the attribute `{name}` of an object made outside the function, "
                    "which the function also writes (adgen reads such attributes when "
                    "transforming)",
                    "keep the changing value in a variable, and store it at the end",
                )
            if id(container) in self.root.objects_changed:
                self.refuse(
                    self.current,
                    f"reading the attribute `{name}` of an object made outside the function, "
                    "which a call adgen runs as written may change (adgen reads such "
                    "attributes when transforming)",
                    "call that method before differentiating, or keep the values it sets in "
                    "variables",
                )
            self.root.attrs_read.add((id(container), name))
        scope = self.root.parsed.scope
        if isinstance(scope, LiveScope):
            scope._record(kind, container, name, value)

    def static_atom(self: Lowerer, value: Any, hint: str, node: Any = None) -> ir.Atom:
        """The atom of a value read from an object: numbers, strings and tuples of them are
        constants, anything else an outside value."""
        if isinstance(value, StaticSeq):
            self.refuse_sequence(hint, node)
        if value is None or isinstance(value, (bool, int, float, str)):
            return ir.Const(value)
        if isinstance(value, tuple) and all(
            v is None or isinstance(v, (bool, int, float, str)) for v in value
        ):
            return ir.Tup(tuple(ir.Const(v) for v in value))
        return self.value_atom(value, hint)

    # -- attributes of instances made inside -----------------------------------------------------
    def instance_attribute(self: Lowerer, node: gast.Attribute, hint: str) -> ir.Atom | None:
        """``m.W`` for an instance made inside (the atom its record holds) or a property of an
        object (its getter inlined); None for other attributes."""
        try:
            ok, base = self.static_object(node.value)
        except Exception:
            return None
        if not ok:
            return None
        if isinstance(base, LocalRecord):
            if node.attr not in base.fields:
                self.refuse(
                    node,
                    f"the attribute `.{node.attr}` of {base.solver}'s result",
                    f"adgen reads {', '.join(base.fields)}",
                )
            return base.fields[node.attr]  # type: ignore[no-any-return]
        if isinstance(base, LocalInstance):
            value = base.attrs.get(node.attr)
            if isinstance(value, StaticArg):
                return None
            if value is not None:
                return value
        if not (isinstance(base, LocalInstance) or is_user_object(base)):
            return None
        stored = self.root.attrs_shadowed.get((id(base), node.attr))
        if stored is not None:  # `self.W = ...` earlier in straight-line code: that value
            return stored
        found, member = self.member(base, node)
        if not (found and isinstance(member, Property)):
            return None
        fget = member.prop.fget
        if isinstance(fget, types.FunctionType):
            mark = len(self.block)
            try:
                return self.inline_function(node, fget, [StaticArg(member.instance)], [])
            except (UnsupportedSyntaxError, NoRuleError, NonDifferentiableError):
                if isinstance(base, LocalInstance):
                    raise
                del self.block[mark:]
        if isinstance(base, LocalInstance):
            self.refuse(node, f"the property `{node.attr}` (its getter is not Python code)")
        value = getattr(base, node.attr)  # of an object made outside: a constant
        self.record("attr", base, node.attr, value)
        return self.static_atom(value, node.attr)

    def assign_attribute(self: Lowerer, target: gast.Attribute, value: Any) -> None:
        """``self.W = v`` (``m.h = v``) on an instance made inside the function, in straight-line
        code: the record of the instance now says ``W`` means ``v``. ``value``: the
        expression, or its atom already computed (an item of ``self.a, self.b = a, b``)."""
        if not isinstance(value, gast.AST):  # (computed: the atom itself)
            value = _Computed(value)
        try:
            ok, base = self.static_object(target.value)
        except Exception:
            ok, base = False, None
        if ok and (is_user_object(base) or isinstance(base, types.FunctionType)):
            self.store_outside(target, base, self.value_of(value, target.attr))
            return
        if not (ok and isinstance(base, LocalInstance)):
            self.refuse(
                target,
                "assignments to attributes (other than of an instance of your class made "
                "inside the function)",
                "keep the value in a variable; an object made outside the function is a "
                "constant of the derivative",
            )
        if self.block is not base.block:
            self.refuse(
                target,
                f"writing the attribute `{target.attr}` of `{base.name}` (a `{base.cls.__name__}`) "
                "inside a loop or a branch",
                "keep the changing value in a variable (`h = cell.step(h, x)`), or write the "
                "attribute in straight-line code",
            )
        static = None if isinstance(value, _Computed) else self.static_argument(value)
        if static is not None:  # a function, an object, Dense(W, b)
            base.attrs[target.attr] = static
            return
        base.attrs[target.attr] = self.copied_apart(self.value_of(value, target.attr), target.attr)

    def value_of(self: Lowerer, value: Any, hint: str) -> ir.Atom:
        """The atom of an expression, or of one already computed (:class:`_Computed`)."""
        return value.atom if isinstance(value, _Computed) else self.expr(value, None, hint)

    def update_attribute(self: Lowerer, stmt: Any) -> None:
        """``self.n += 1`` on an instance made inside, where the attribute holds a number known
        now and so does the value: the new number. Anything else is refused: an array would
        change in place, and another name may share it."""
        target = stmt.target
        try:
            ok, base = self.static_object(target.value)
        except Exception:
            ok, base = False, None
        current = base.attrs.get(target.attr) if ok and isinstance(base, LocalInstance) else None
        fn = registry.BINOP_FUNCTIONS.get(type(stmt.op).__name__)
        if isinstance(current, ir.Const) and fn is not None:
            value = self.expr(stmt.value, None, target.attr)
            try:
                result = fn(current.value, value.value) if isinstance(value, ir.Const) else None
            except Exception:  # 1 / 0: Python raises
                result = None
            if result is not None:
                new = gast.copy_location(gast.Constant(value=result, kind=None), stmt)
                self.assign_attribute(target, new)
                return
        if ok and (is_user_object(base) or isinstance(base, types.FunctionType)):
            # `self.n_calls += 1`, `objective.calls += 1` of an object made outside: its old
            # value read when the code runs (not when transforming), the new one stored
            if fn is None:
                self.refuse(stmt, f"the operator `{type(stmt.op).__name__}`")
            obj = self.value_atom(base, "obj")
            old = self.outside_attribute(registry.read_attribute, "reads", target, [obj])
            prim = registry.lookup(fn)
            assert prim is not None
            rhs = self.expr(stmt.value, None, "v")
            new = self.emit(None, target.attr, prim, [old, rhs], [], stmt)
            self.store_outside(target, base, new, obj)
            return
        self.refuse(
            stmt,
            f"augmented assignment to the attribute `{target.attr}` (an array would change in "
            "place, and another name may share it)",
            f"write `self.{target.attr} = self.{target.attr} + ...` to make a new value",
        )

    def copied_apart(self: Lowerer, atom: ir.Atom, hint: str) -> ir.Atom:
        """``atom``, its names copied to names of their own (a name rebound later, inside a
        block, must not change what an attribute means)."""
        if isinstance(atom, ir.Var):
            name = self.namer.fresh(hint)
            self.copy(name, atom)
            return ir.Var(name)
        if isinstance(atom, ir.Tup):
            return ir.Tup(tuple(self.copied_apart(a, hint) for a in atom.items))
        if isinstance(atom, ir.Dct):
            return ir.Dct(atom.keys, tuple(self.copied_apart(a, hint) for a in atom.values))
        return atom

    # -- making an instance --------------------------------------------------------------------
    def assign_static(self: Lowerer, name: str, value: Any) -> bool:
        """``m = Linear(W, b)`` (an instance made inside), ``f = np.tanh``, ``step =
        self.step``, ``g = f``: the name means the instance, the function or the object. False
        if ``value`` is a value of the IR."""
        found: Any = None
        cls = self.made_class(value)
        if (
            cls is None
            and isinstance(value, gast.Call)
            and not self.is_partial(value)
            and self.frozen_distribution(value) is None
            and self.made_interpolant(value) is None
            and self.made_helper_object(value) is None
        ):
            return False
        if cls is None:
            found = self.static_argument(value) or self.interpolant_static(value)
            if found is None:
                return False
        if name in self.multi and not _block_local(
            self.as_lowered(), value, name, self.tree_index()
        ):
            what = f"a `{cls.__name__}`" if cls is not None else "a function or an object"
            self.refuse(
                value,
                f"binding `{name}` to {what} in a loop or a branch where `{name}` is bound "
                "elsewhere too, or read outside the statements after this one (adgen must know "
                "which it is)",
                "give it a name of its own, read only in the statements after it in the same "
                "block (or call it where it is made: `h = Dense(W[i], b[i])(h)`)",
            )
        if cls is not None:
            found = StaticArg(self.construct(name, value, cls))
        self.env.pop(name, None)
        self.local_functions[name] = found.value
        self.bound.add(name)
        return True

    def as_lowered(self: Lowerer) -> Any:
        """The function as it is lowered: its body without the sides of ``if``s decided by
        options (:meth:`prune_decided`), its returns given one exit (a new node: the
        function's own tree is not changed)."""
        if self.lowered_body is None:
            return self.node
        node = gast.FunctionDef(
            name=self.node.name,
            args=self.node.args,
            body=self.lowered_body,
            decorator_list=[],
            returns=None,
            type_comment=None,
            **({"type_params": []} if "type_params" in gast.FunctionDef._fields else {}),
        )
        return gast.copy_location(node, self.node)

    def tree_index(self: Lowerer) -> TreeIndex:
        """:class:`TreeIndex` of :meth:`as_lowered`, made once its body is settled (lowering
        changes no statement of it after that)."""
        body = self.lowered_body
        if body is None:
            return TreeIndex(self.as_lowered())
        if self.lowered_index is None or self.lowered_index[0] is not body:
            self.lowered_index = (body, TreeIndex(self.as_lowered()))
        return self.lowered_index[1]

    def frozen_distribution(self: Lowerer, node: Any) -> LocalFrozen | None:
        """``scipy.stats.norm(mu, s)`` (a call of a distribution whose methods have rules),
        its parameters lowered once, where the program evaluates them; else None."""
        if not isinstance(node, gast.Call) or not isinstance(
            node.func, (gast.Name, gast.Attribute)
        ):
            return None
        made = self.frozen.get(id(node))
        if made is not None:
            return made
        try:
            ok, dist = self.static_object(node.func)
        except Exception:
            return None
        if not ok or not registry.method_rules(dist):
            return None
        if any(isinstance(a, gast.Starred) for a in node.args) or any(
            kw.arg is None for kw in node.keywords
        ):
            self.refuse(node, "`*args` or `**kwargs` in the parameters of a distribution")
        args = [self.expr(a, None, "parameter") for a in node.args]
        kwargs = [(kw.arg, self.expr(kw.value, None, kw.arg)) for kw in node.keywords]
        made = self.frozen[id(node)] = LocalFrozen(dist, args, kwargs)
        return made

    def frozen_method(self: Lowerer, frozen: LocalFrozen, node: gast.Attribute) -> FrozenMethod:
        """``d.logpdf`` of a distribution frozen inside the function: the distribution's own
        method, which must have a rule."""
        method = getattr(frozen.dist, node.attr, None)
        if method is None or registry.lookup(method) is None:
            said = registry.frozen_refusal(frozen.dist, node.attr)
            assert said is not None
            raise NoRuleError(said[0], self.parsed.loc(node), said[1])
        return FrozenMethod(method, frozen)

    def called_class(self: Lowerer, value: Any) -> Any:
        """The class (or other object) a call ``value`` names by a name or an attribute
        (``Linear(W, b)``, ``kernels.RBF(1.0)``), where adgen knows it now; else None."""
        if not (
            isinstance(value, gast.Call) and isinstance(value.func, (gast.Name, gast.Attribute))
        ):
            return None
        try:
            ok, cls = self.static_object(value.func)
        except Exception:
            return None
        return cls if ok else None

    def made_class(self: Lowerer, value: Any) -> type | None:
        """The class of the user's ``value`` calls (``Linear(W, b)``), if it is one."""
        cls = self.called_class(value)
        if cls is None or not is_user_class(cls) or cls in self.root.as_written_classes:
            return None
        if registry.helper_class(cls):  # (a scikit-learn loss: made as written, a constant
            return None  # of the derivative that helpers are given)
        return cls  # type: ignore[no-any-return]

    def construct(self: Lowerer, name: str, call: gast.Call, cls: type) -> LocalInstance:
        """``m = Linear(W, b)`` inside the function: ``__init__`` inlined with ``self`` bound to
        a new record."""
        hooks = [
            h
            for h in ("__setattr__", "__getattr__", "__getattribute__", "__delattr__")
            if getattr(cls, h, None) is not getattr(object, h, None)
        ]
        frozen = getattr(getattr(cls, "__dataclass_params__", None), "frozen", False)
        if hooks or frozen:
            what = f"its own `{hooks[0]}`" if hooks else "frozen fields"
            self.refuse(
                call,
                f"making a `{cls.__name__}` inside the function: the class has {what}",
                "make the object outside the function and pass what it computes, or a plain class",
            )
        inst = LocalInstance(cls, name, self.block)
        args = self.call_arguments(call, True)
        kwargs = self.call_keywords(call, True)
        if dataclasses.is_dataclass(cls) and "__init__" in vars(cls):
            self.dataclass_init(call, inst, args, kwargs)
            post = getattr(cls, "__post_init__", None)
            if isinstance(post, types.FunctionType):
                self.inline_function(call, post, [StaticArg(inst)], [])
            return inst
        init = _owner(cls, "__init__")
        fn = class_dict(init)["__init__"] if init is not None else None
        if init is None or init is object or fn is None:
            if args or kwargs:
                self.refuse(call, f"arguments to `{cls.__name__}()`, which has no __init__")
            return inst
        if not isinstance(fn, types.FunctionType):
            self.refuse(call, f"making a `{cls.__name__}` (its __init__ is not Python code)")
        self.record("item", class_dict(init), "__init__", fn)
        with self.noting_refusal(cls):
            self.inline_function(call, fn, [StaticArg(inst), *args], kwargs)
        return inst

    def inline_function(
        self: Lowerer,
        node: Any,
        fn: types.FunctionType,
        args: list[Any],
        kwargs: list[Any],
        target: str | None = None,
    ) -> ir.Atom:
        """Inline a call of the Python function ``fn`` (its source must be readable)."""
        parsed, defaults = self.callee(fn, node)
        return self.inline(node, parsed, fn, defaults, args, kwargs, target, None)

    def dataclass_init(
        self: Lowerer, call: Any, inst: LocalInstance, args: list[Any], kwargs: list[Any]
    ) -> None:
        """The ``__init__`` a dataclass writes for itself: each field from its argument or
        its default."""
        fields = [f for f in dataclasses.fields(inst.cls) if f.init]
        if len(args) > len(fields):
            self.refuse(call, f"{len(args)} arguments to `{inst.cls.__name__}`", "check the call")
        given = dict(zip((f.name for f in fields), args))
        for k, v in kwargs:
            if k in given or k not in {f.name for f in fields}:
                self.refuse(call, f"the argument `{k}` to `{inst.cls.__name__}`", "check the call")
            given[k] = v
        for f in fields:
            if f.name not in given:
                if f.default is dataclasses.MISSING:
                    self.refuse(
                        call, f"making a `{inst.cls.__name__}` without `{f.name}`", "pass it"
                    )
                given[f.name] = self.static_atom(f.default, f.name)
            value = given[f.name]
            inst.attrs[f.name] = (
                value if isinstance(value, StaticArg) else self.copied_apart(value, f.name)
            )


def callable_rule(fn: Any) -> bool:
    """Has this object a derivative rule of its own?"""
    try:
        return registry.lookup(fn) is not None
    except TypeError:
        return False


class _Computed:
    """An atom computed already, where an expression is expected (an item unpacked)."""

    def __init__(self, atom: Any) -> None:
        self.atom = atom


class Property:
    """A property of an object adgen reads, and the object (its getter is inlined)."""

    def __init__(self, prop: property, instance: Any) -> None:
        self.prop = prop
        self.instance = instance


def passable(obj: Any) -> bool:
    """Can ``obj`` be passed to a function adgen inlines as itself (not as a value)?"""
    if isinstance(obj, (LocalFunction, LocalInstance, LocalPartial)):
        return True
    if any(obj is t for t in (float, int, bool, complex)) or (
        isinstance(obj, type) and issubclass(obj, np.generic)
    ):
        return False  # a dtype: a value (x.astype(float))
    return callable(obj) or is_user_object(obj) or inspect.isclass(obj)


def class_dict(cls: type) -> types.MappingProxyType[str, Any]:
    """``vars(cls)``, one object per class (each ``vars`` makes a new view): a member read
    through it many times is one dependency to check at each call of the derivative, not
    one per read."""
    try:
        return _CLASS_DICTS[cls]
    except KeyError:
        made = _CLASS_DICTS[cls] = vars(cls)  # type: ignore[assignment]
        return made
    except TypeError:  # (a class weakref cannot refer to)
        return vars(cls)  # type: ignore[return-value]


_CLASS_DICTS: weakref.WeakKeyDictionary[type, types.MappingProxyType[str, Any]] = (
    weakref.WeakKeyDictionary()
)
