# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Objects made outside the differentiated function, as the function changes or asks of them
(issue 34, parts 2 and 4).

adgen reads an outside object's attributes when transforming (constants of the derivative,
the cached code made again when they change). The function may also store into them:
``self.n_iter_ = k`` runs as written, and a value a model's method stores in straight-line
code (``self.W = p[:3]`` in ``unpack``) is what a later read of it means
(:meth:`OutsideMixin.store_outside`). ``hasattr``/``getattr(obj, name, default)`` of one are
decided when transforming, their answers recorded; a type test of an item of an outside list
(``issparse(self._aex_r[g])``) is decided by all its items. A library object whose methods
have helpers (a scikit-learn loss) made of constants inside the function is made then.
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.errors import AdgenError, NoRuleError
from adgen.frontend.lower.objects import (
    _ABSENT,
    StaticArg,
    _runs_code_on_store,
    is_user_object,
)
from adgen.frontend.lower.state import LowererState
from adgen.frontend.parse import MISSING
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer

# the most items of an outside list whose types decide a test of one of them (each one is
# checked at every call, to know the derivative is still right for the list)
_ITEMS_DECIDED = 256


@dataclass(frozen=True)
class LocalParametrised:
    """``kernel = k.clone_with_theta(theta)`` of an object ``k`` made outside: a callable made
    for parameters the program computes, whose calls are lowered to helpers given ``k`` and
    ``params`` (:func:`adgen.rules.registry.parametrised_callable`)."""

    obj: Any
    params: ir.Atom
    value: Any
    gradient: Any


# protocol methods whose result may hold what the object holds (the others answer about it:
# its tags, length, hash, text)
_GIVING_BACK = frozenset(
    "__call__ __getattr__ __getattribute__ __getitem__ __iter__ __next__ __array__ "
    "__getstate__ __reduce__ __reduce_ex__ __copy__ __deepcopy__ __dict__ __get__".split()
)


class OutsideMixin(LowererState):
    """What the function stores into objects made outside, and asks of them."""

    def absent_attribute(self: Lowerer, node: gast.Call, fn: Any) -> ir.Atom | None:
        """``getattr(model, "offset", 0)`` of an object made outside (read when transforming,
        as its other attributes are) that has no such attribute: the default, the absence
        noted so that setting the attribute later makes the derivative again. None
        otherwise (an attribute it has is read at run time, as written)."""
        name = node.args[1]
        if not (isinstance(name, gast.Constant) and isinstance(name.value, str)):
            return None
        try:
            known, obj = self.static_object(node.args[0])
        except AdgenError:
            return None
        stored = self.root.attrs_shadowed.get((id(obj), name.value)) if known else None
        if stored is not None:  # (stored by the function before: it has it now)
            return stored
        cls = type(obj)
        if (
            not known
            or not is_user_object(obj)
            or cls.__getattribute__ is not object.__getattribute__
            or inspect.getattr_static(cls, "__getattr__", None) is not None
            or inspect.getattr_static(obj, name.value, _ABSENT) is not _ABSENT
        ):
            return None
        self.record("attr", obj, name.value, MISSING)  # (made again once it is set)
        return self.expr(node.args[2], None, "default")

    def note_changed(self: Lowerer, obj: Any, label: str, node: Any) -> None:
        """``obj``, an object made outside, is given to ``label``, a call run as written that
        may change it: the function must read none of its attributes (adgen reads them when
        transforming, so they would be the values from before the call)."""
        if not is_user_object(obj):
            return
        if any(key == id(obj) for key, _ in self.root.attrs_read):
            self.refuse(
                node,
                f"calling `{label}`, which adgen runs as written and which may change the "
                f"attributes of a `{type(obj).__name__}` made outside the function that the "
                "function reads (adgen reads them when transforming)",
                "call it before differentiating, or keep the values it sets in variables",
            )
        self.root.objects_changed.add(id(obj))

    def store_outside(
        self: Lowerer, target: gast.Attribute, base: Any, value: ir.Atom, obj: Any = None
    ) -> None:
        """``obj.name = value`` on an object made outside the function (``self.n_iter_ = k``
        in a method adgen inlines, ``objective.calls = n``): run as written, in order. adgen
        reads an outside object's attributes when transforming, so the function may not read
        this one anywhere (before or after: a loop runs again); a differentiated value stored
        there carries no derivative out (nothing adgen differentiates reads it back)."""
        if _runs_code_on_store(base, target.attr):
            self.refuse(
                target,
                f"writing the attribute `{target.attr}` of an object made outside the function, "
                f"whose class runs code of its own on that write (a property setter, a "
                "descriptor or `__setattr__`), which may change what the function reads",
                "pass the values that code would set as arguments, or make the object inside "
                "the function",
            )
        key = (id(base), target.attr)
        if key in self.root.attrs_read:
            self.refuse(
                target,
                f"writing the attribute `{target.attr}` of an object made outside the function, "
                "which the function also reads (adgen reads such attributes when transforming)",
                "keep the changing value in a variable, and store it at the end",
            )
        self.root.attrs_written.add(key)
        self.root.stored_into.setdefault(id(base), []).append(value)
        obj = obj if obj is not None else self.value_atom(base, "obj")
        self.outside_attribute(registry.store_attribute, "stores", target, [obj, value])
        if self.straight_line_here():  # a read after it, in the function, means `value`
            self.root.attrs_shadowed[key] = self.copied_apart(value, target.attr)
        elif key in self.root.attrs_shadowed:  # (a read before it in the loop or branch took
            self.refuse(  # the value stored before, which a loop's next pass does not read)
                target,
                f"writing the attribute `{target.attr}` of an object made outside the function "
                "inside a loop or a branch, after the function stored it (adgen follows an "
                "attribute stored in straight-line code only)",
                "keep the changing value in a variable, and store it at the end",
            )

    def straight_line_here(self: Lowerer) -> bool:
        """Is the statement being lowered in the straight-line code of the function
        differentiated (in no loop or branch, nor is any call it is inlined into)?"""
        lowerer: Lowerer | None = self
        while lowerer is not None:
            if lowerer.depth:
                return False
            lowerer = lowerer.parent
        return True

    def outside_attribute(
        self: Lowerer, fn: Any, verb: str, target: gast.Attribute, args: list[ir.Atom]
    ) -> ir.Atom:
        """``fn(obj, name, *rest)`` (reading or storing ``obj.name``), run as written: a call
        that only reads (a differentiated value stored carries nothing out)."""
        never = NoRuleError(
            f"adgen {verb} `.{target.attr}` of an object made outside as written",
            self.parsed.loc(target),
            "",
        )
        args = [args[0], ir.Const(target.attr), *args[1:]]
        return self.opaque(fn, never, args, [], None, target.attr, target)

    def made_helper_object(self: Lowerer, value: Any) -> Any:
        """``HalfPoissonLoss()`` (``HalfTweedieLoss(power=1.5)``) inside the function: an
        object whose methods adgen lowers to helpers (:func:`adgen.rules.registry.
        helper_class`), made of constants -- made now, a constant of the derivative. None
        for any other call."""
        cls = self.called_class(value)
        if not (isinstance(cls, type) and registry.helper_class(cls)):
            return None
        parts = [*value.args, *(k.value for k in value.keywords)]
        if any(k.arg is None for k in value.keywords) or not all(
            isinstance(p, gast.Constant) for p in parts
        ):
            return None
        try:
            return cls(
                *(a.value for a in value.args), **{k.arg: k.value.value for k in value.keywords}
            )
        except Exception:  # (made as written: the error is Python's, where it runs)
            return None

    def note_presence(self: Lowerer, obj: Any, name: str) -> None:
        """``hasattr(obj, name)`` of an object made outside, decided when transforming: the
        attribute its instance holds, or its absence, is what the derivative was made for
        (made again when it is set or deleted; a write of it by the function is refused, as
        for any attribute it reads)."""
        if type(obj).__getattribute__ is not object.__getattribute__:
            return
        if name in vars(obj):
            self.record("attr", obj, name, vars(obj)[name])
        elif inspect.getattr_static(obj, name, MISSING) is MISSING and (
            inspect.getattr_static(type(obj), "__getattr__", None) is None
        ):
            self.record("attr", obj, name, MISSING)

    def outside_items(self: Lowerer, atom: ir.Atom) -> list[Any] | None:
        """Every item of the list or tuple made outside that ``atom`` is an item of, at an
        index known only when the code runs (``ex_r = self._aex_r[group_ix]`` in a loop over
        groups): a type test of it is decided when all of them give one answer. A list's
        items are then part of what the derivative was made for (made again if one is
        replaced, or the list grows). None: not such an item."""
        made = self.made_by(atom) if isinstance(atom, ir.Var) else None
        if made is None or made.prim.name != "getitem" or not isinstance(made.args[0], ir.Free):
            return None
        seq = self.free.get(made.args[0].name)
        if not isinstance(seq, (list, tuple)) or type(seq) not in (list, tuple):
            return None
        if not 0 < len(seq) <= _ITEMS_DECIDED:
            return None
        if type(seq) is list:
            self.record("items", seq, "items", tuple(seq))
        return list(seq)

    def outside_dict_view(self: Lowerer, node: Any, attr: str) -> ir.Atom | None:
        """``WEIGHTS.items()`` (``.keys()``, ``.values()``) of a dict of plain data made
        outside the function, keyed by strings or ints: its pairs (keys, values), in order,
        a list known now -- a loop over it unrolled, each value read as ``WEIGHTS[k]`` (the
        keys noted: the derivative is made again if they change). None for any other."""
        if isinstance(node, gast.Name) and node.id in self.env:
            return None
        if not isinstance(node, (gast.Name, gast.Attribute)):
            return None
        try:
            ok, value = self.static_object(node)
        except AdgenError:
            return None
        if not (
            ok
            and type(value) is dict
            and 0 < len(value) <= _ITEMS_DECIDED
            and all(type(k) in (str, int) for k in value)
            and not any(callable(v) or isinstance(v, types.ModuleType) for v in value.values())
        ):
            return None
        keys = list(value)
        self.record("items", value, "items", tuple(keys))
        names = tuple(ir.Const(k) for k in keys)
        if attr == "keys":
            return ir.Tup(names, kind="list")
        values = self.items_read(node, keys, "item")
        if attr == "values":
            return ir.Tup(values, kind="list")
        return ir.Tup(tuple(ir.Tup(kv, kind="tuple") for kv in zip(names, values)), kind="list")

    def spread_outside(self: Lowerer, node: Any, atom: ir.Atom, hint: str) -> ir.Atom:
        """The items of a tuple, or of a dict with string keys, made outside the function
        (a module's constant, a closure's options), spread into a call: each read as
        ``node[k]``, their number (and the dict's keys, noted: the derivative is made again
        if they change) known now; else ``atom`` as it is."""
        try:
            ok, value = self.static_object(node)
        except AdgenError:
            return atom
        if not ok or not (
            type(value) is tuple or (type(value) is dict and all(type(k) is str for k in value))
        ):
            return atom
        keys: list[Any] = list(value) if type(value) is dict else list(range(len(value)))
        if type(value) is dict:
            self.record("items", value, "items", tuple(keys))
        items = self.items_read(node, keys, hint)
        return ir.Dct(tuple(keys), items) if type(value) is dict else ir.Tup(items)

    def items_read(self: Lowerer, node: Any, keys: list[Any], hint: str) -> tuple[ir.Atom, ...]:
        """``node[k]`` for each of ``keys``, read as the program reads them (a container made
        outside: each item noted where it is plain data)."""
        return tuple(
            self.expr(
                gast.copy_location(gast.Subscript(node, gast.Constant(k, None), gast.Load()), node),
                None,
                hint,
            )
            for k in keys
        )

    def outside_method_rule(
        self: Lowerer, fn: Any, args: list[Any], kwargs: list[tuple[str, Any]]
    ) -> tuple[Any, list[Any], list[tuple[str, Any]]]:
        """A method of an object made outside whose call has a rule of another function:
        ``prior.logpdf(w)`` of ``prior = scipy.stats.norm(0.0, 2.0)``, the distribution's
        own method given the parameters ``prior`` holds (constants); a scikit-learn loss's
        ``base_loss.loss(y_true=y, raw_prediction=z)``, a helper given the loss first. Else
        the call as it is."""
        frozen = registry.unfrozen(fn)
        if frozen is not None and len(args) == 1 and not kwargs:
            fn, extra, named = frozen
            args = [*args, *(self.value_atom(v, "parameter") for v in extra)]
            kwargs = [*kwargs, *((k, self.value_atom(v, k)) for k, v in named.items())]
        helper = registry.method_helper(fn)
        if helper is not None:
            args = [self.value_atom(fn.__self__, "loss"), *args]
            fn = helper
        return fn, args, kwargs

    def parametrised(
        self: Lowerer,
        node: gast.Call,
        fn: Any,
        args: list[Any],
        kwargs: list[tuple[str, Any]],
        target: str | None,
        hint: str,
    ) -> Any:
        """``k.clone_with_theta(theta)`` (a :class:`LocalParametrised`, as itself), and its
        calls: ``kernel(X)`` is ``rt.kernel_matrix(k, theta, X)``, ``kernel(X,
        eval_gradient=True)`` the pair with ``rt.kernel_theta_gradient(k, theta, X)``. None
        for any other call."""
        if isinstance(fn, LocalParametrised):
            options = dict(kwargs)
            gradient = options.pop("eval_gradient", ir.Const(False))
            if len(args) != 1 or options or not isinstance(gradient, ir.Const):
                self.refuse(node, "this call of a kernel made for parameters", "call it as k(X)")
            atoms = [self.value_atom(fn.obj, "kernel"), fn.params, args[0]]
            value = self.call_prim(fn.value, atoms, hint)
            if not gradient.value:
                return value
            return ir.Tup((value, self.call_prim(fn.gradient, atoms, "gradient")))
        helpers = registry.parametrised_callable(fn)
        if helpers is None:
            return None
        if len(args) != 1 or kwargs:
            self.refuse(node, "this call (one argument: the parameters)", "pass theta alone")
        return StaticArg(
            LocalParametrised(fn.__self__, self.copied_apart(args[0], "theta"), *helpers)
        )

    def getattr_of_object(
        self: Lowerer, node: gast.Call, target: str | None, hint: str
    ) -> ir.Atom | None:
        """``getattr(obj, "name")`` of an object adgen knows when transforming, a name
        written as a string: ``obj.name``, read as such (a value the function stored there
        in straight-line code, else a constant of the derivative). None for any other."""
        obj, name = node.args
        attr = self.constant_name(name)
        if attr is None:
            return None
        try:
            known, value = self.static_object(obj)
        except AdgenError:
            return None
        if not (known and is_user_object(value) and attr.isidentifier()):
            return None
        read = gast.copy_location(gast.Attribute(value=obj, attr=attr, ctx=gast.Load()), node)
        return self.expr(read, target, hint)

    def named_method(self: Lowerer, func: Any) -> Any:
        """``getattr(obj, "name")`` called, of an object written as a name (or its
        attribute) and a name known when transforming: ``obj.name``, the attribute Python
        reads (None for any other callee)."""
        if not (
            isinstance(func, gast.Call)
            and isinstance(func.func, gast.Name)
            and func.func.id == "getattr"
            and len(func.args) == 2
            and not func.keywords
            and isinstance(func.args[0], (gast.Name, gast.Attribute))
        ):
            return None
        try:
            ok, fn = self.static_object(func.func)
        except AdgenError:
            return None
        attr = self.constant_name(func.args[1]) if ok and fn is getattr else None
        if attr is None or not attr.isidentifier():
            return None
        read = gast.Attribute(value=func.args[0], attr=attr, ctx=gast.Load())
        return gast.copy_location(read, func)

    def constant_name(self: Lowerer, node: Any) -> str | None:
        """The string ``node`` is when transforming: a string written there, or a name bound
        to one (the item of a loop over names unrolled: ``for p in ("gamma", "coef0"):
        getattr(self, p)``); else None."""
        if isinstance(node, gast.Constant):
            return node.value if isinstance(node.value, str) else None
        if not (isinstance(node, gast.Name) and node.id in self.env):
            return None
        key = self.unrolled_value(self.env[node.id])
        known, value = self.known_value(key)  # (a constant; a closure's string)
        return value if known and isinstance(value, str) else None

    def read_back(self: Lowerer, fn: Any, args: list[Any], kwargs: list[Any]) -> list[ir.Atom]:
        """The values the function stored into the objects made outside that a call run as
        written is given (``vars(self)``, ``copy.deepcopy(model)``), which it may read back."""
        name = getattr(fn, "__name__", "")
        if name.startswith("__") and name.endswith("__") and name not in _GIVING_BACK:
            return []  # (a protocol's answer about the object: `__sklearn_tags__`, `__len__`)
        objects = [getattr(fn, "__self__", None), *map(self.free_object, args)]
        objects += [self.free_object(v) for _, v in kwargs]
        return [
            v for obj in objects if obj is not None for v in self.root.stored_into.get(id(obj), ())
        ]
