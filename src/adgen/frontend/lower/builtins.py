# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower Python's builtins that take a sequence, and the generator expressions given to them.

``max(items)`` / ``min(items)`` of one sequence (or of three values or more) is the primitive
``rt.max_items`` / ``rt.min_items`` (``max(a, b)`` keeps its rule); ``tuple(...)`` of a
sequence known when transforming is a tuple atom; ``isinstance(x, T)`` is decided from what
adgen knows of ``x`` (a tuple or list display, a tree argument's structure, an array or number
a rule computes); ``any``, ``all`` and ``sorted`` of values known when transforming are
computed then.

A generator expression given to a consumer that takes all of its items at once, in order
(``sum``, ``max``, ``min``, ``tuple``, ``list``, ``any``, ``all``, ``sorted``, or a function of
the user's that iterates its parameter once) computes the same values as the list
comprehension: it is lowered as one. Where the loops run over sequences known when
transforming (a tuple, ``range`` of constants, ``zip``/``enumerate`` of those) and the
conditions are decided then, the items are unrolled into a tuple atom. Elsewhere (NumPy's
functions, which refuse generators or make object arrays of them) a generator is refused.
"""

from __future__ import annotations

import builtins
import inspect
import types
from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir
from adgen.errors import AdgenError, UnsupportedSyntaxError
from adgen.frontend.lower.calls import LocalFunction
from adgen.frontend.lower.containers import _numpy_function
from adgen.frontend.lower.objects import LocalInstance, StaticSeq, is_user_object
from adgen.frontend.lower.state import LowererState
from adgen.pyast import walk
from adgen.rules import registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


# how many items a loop known when transforming is unrolled into (a longer one is a real loop)
MAX_UNROLLED = 256

# what a class's name and module are (they cannot change)
_CLASS_NAMES = frozenset({"__module__", "__qualname__", "__name__"})
# builtins that take every item of an iterable at once, in order
_CONSUMERS = (sum, list, tuple, max, min, any, all, sorted)


class _NotStatic(Exception):
    """A comprehension whose items are not all known when transforming."""


# what NumPy's functions and arithmetic return: arrays, NumPy and Python numbers
_NUMBERS = [
    np.zeros(2),
    np.float64(0.0),
    np.float32(0.0),
    np.int64(0),
    np.complex128(0.0),
    0.0,
    0,
    0j,
]


class BuiltinsMixin(LowererState):
    """``max``/``min``/``tuple``/``isinstance``/``any``/``all``/``sorted``; generators."""

    def builtin_call(self: Lowerer, node: gast.Call, target: str | None, hint: str) -> Any:
        """Lower a call of one of these builtins, or return None (not one of them: the call is
        lowered as any other)."""
        try:
            ok, fn = self.static_object(node.func)
        except AdgenError:
            return None
        if not ok:
            return None
        if registry.decided_by_kinds(fn):
            return self.kinds_call(node, fn)  # (`np.result_type(*dtypes)` too)
        if any(isinstance(a, gast.Starred) for a in node.args):
            return None
        if fn is isinstance:
            return self.lower_isinstance(node)
        if (fn is hasattr or fn is callable or registry.type_test(fn)) and not node.keywords:
            decided = self.lower_static_test(node, fn)
            if decided is None and registry.type_test(fn) and len(node.args) == 1:
                # a library's type test the kinds known do not decide: run as written
                atom = self.expr(node.args[0], None, "x")
                refusal = UnsupportedSyntaxError(
                    f"`{fn.__name__}` of a value adgen does not know the type of",
                    self.parsed.loc(node),
                    "pass arrays of one kind",
                )
                return self.opaque(fn, refusal, [atom], [], target, hint, node)
            return decided
        if registry.namespace_test(fn) and len(node.args) == 1 and not node.keywords:
            try:  # is_numpy_namespace(xp) of a namespace known now
                known, namespace = self.static_object(node.args[0])
            except AdgenError:
                known = False
            if known and isinstance(namespace, types.ModuleType):
                return ir.Const(bool(fn(namespace)))
        if fn is type and len(node.args) == 1 and not node.keywords:
            # `type(X) is np.ndarray`: the class, where every value X may hold has that one
            # (or of an instance made inside: `type(params) is not MixedLMParams`)
            local = self.static_argument(node.args[0])
            if local is not None and isinstance(local.value, LocalInstance):
                return self.static_atom(local.value.cls, "kind", node)
            mark = len(self.block)
            kinds = {
                type(v) for v in self.possible_values(self.expr(node.args[0], None, "x")) or []
            }
            if len(kinds) == 1:
                return self.static_atom(kinds.pop(), "kind", node)
            del self.block[mark:]
            return None
        if fn in (bool, int, float) and len(node.args) == 1 and not node.keywords:
            # `bool(value)` of an option known now (`qstat = bool_like(qstat, "qstat")`): a
            # constant, so that the tests of it decide their branch when transforming
            mark = len(self.block)
            value = self.settled(self.expr(node.args[0], None, "x"))
            if isinstance(value, ir.Const) and type(value.value) in (bool, int, float):
                try:
                    return ir.Const(fn(value.value))
                except (ValueError, OverflowError):  # (int(nan): Python raises where it runs)
                    pass
            del self.block[mark:]
            return None
        if (fn is getattr or fn is inspect.getattr_static) and len(node.args) == 3:
            return self.attribute_test(node, fn)
        if fn is getattr and len(node.args) == 2 and not node.keywords:
            return self.getattr_of_object(node, target, hint)  # getattr(self, "W"): self.W
        if fn is max or fn is min:
            return self.extremum(node, fn, target, hint)
        if fn is tuple:
            return self.tuple_call(node)
        if (fn is any or fn is all or fn is sorted) and len(node.args) == 1 and not node.keywords:
            arg = node.args[0]
            if isinstance(arg, (gast.GeneratorExp, gast.ListComp)):
                mark = len(self.block)
                items = self.unrolled(arg)
                if items is not None and all(isinstance(a, ir.Const) for a in items):
                    values = [a.value for a in items]  # type: ignore[union-attr]
                    if fn is sorted:
                        return ir.Tup(tuple(ir.Const(v) for v in sorted(values)), kind="list")
                    return ir.Const(fn(values))
                if items is not None and fn is not sorted:
                    prim = registry.lookup(fn)
                    assert prim is not None
                    return self.emit(target, hint, prim, [ir.Tup(tuple(items))], [], node)
                del self.block[mark:]  # sorted(...) of values known when running: run as written
            if (
                isinstance(arg, (gast.List, gast.Tuple))
                and fn is not sorted
                and not any(isinstance(e, gast.Starred) for e in arg.elts)
            ):
                # `any([issparse(X), issparse(Y)])`: decided when every item is
                shown = [self.expr(e, None, "item") for e in arg.elts]
                if all(isinstance(a, ir.Const) for a in shown):
                    return ir.Const(fn(a.value for a in shown))  # type: ignore[union-attr]
                prim = registry.lookup(fn)
                assert prim is not None
                return self.emit(target, hint, prim, [ir.Tup(tuple(shown))], [], node)
        return None

    def extremum(self: Lowerer, node: gast.Call, fn: Any, target: str | None, hint: str) -> Any:
        """``max(items)``, ``max(a, b, c)`` (``min`` alike): ``rt.max_items`` of the items;
        ``max(a, b)`` is left to its own rule (None)."""
        name = fn.__name__
        if node.keywords:
            self.refuse(
                node,
                f"`{name}` with `{node.keywords[0].arg}=`",
                f"compute the values to compare first, then `{name}(values)`; or use np.arg{name}",
            )
        if len(node.args) == 2 or not node.args:
            return None
        if len(node.args) == 1:
            arg = node.args[0]
            items: ir.Atom | None = None
            if isinstance(arg, (gast.GeneratorExp, gast.ListComp)):
                unrolled = self.unrolled(arg)
                if unrolled is not None:
                    items = ir.Tup(tuple(unrolled))
                else:
                    items = self.expr(_listed(arg), None, hint)
            else:
                items = self.expr(arg, None, hint)
        else:
            items = ir.Tup(tuple(self.expr(a, None, hint) for a in node.args))
        helper = registry.lookup(rt.max_items if fn is max else rt.min_items)
        assert helper is not None
        return self.emit(target, hint, helper, [items], [], node)

    def dict_display(self: Lowerer, node: gast.Dict, hint: str) -> ir.Dct:
        """A dict display with string keys, read by key (``params["W"]``) or returned (aux
        values); ``{**defaults, **options}`` of such dicts merges them, the later keys
        winning."""
        merged: dict[str, ir.Atom] = {}
        for k, v in zip(node.keys, node.values):
            value = self.expr(v, None, hint)
            if k is not None:
                merged[k.value] = value
            elif isinstance(value, ir.Dct):
                merged.update(zip(value.keys, value.values))
            else:
                self.refuse(
                    v,
                    "`**` of a dict whose keys adgen does not know when transforming",
                    "write the keys out",
                )
        return ir.Dct(tuple(merged), tuple(merged.values()))

    def constant_attribute(self: Lowerer, value: ir.Free, node: gast.Attribute) -> ir.Atom | None:
        """An attribute that cannot change of an outside value known when transforming: a
        data type's limits (``np.finfo(X.dtype).eps``), a class's name and module
        (``type(X).__module__``), an object's class (``estimator.__class__.__name__``, as
        ``type(estimator)``); None for any other."""
        ok, known = self.known_value(value)
        if ok and node.attr == "__class__":
            return self.static_atom(type(known), node.attr, node)
        readable = isinstance(known, (np.finfo, np.iinfo)) or (
            isinstance(known, type) and node.attr in _CLASS_NAMES
        )
        if not (ok and readable and hasattr(known, node.attr)):
            return None
        return self.static_atom(getattr(known, node.attr), node.attr, node)

    def dict_get(self: Lowerer, node: gast.Call, func: gast.Attribute) -> ir.Atom | None:
        """``options.get("ensure_2d", True)`` of a dict whose keys adgen knows (a display, or
        the ``**kwargs`` a helper was given): the value under the key, else the default.
        None for any other call. (``d.keys()``, ``d.values()``, ``d.items()`` of such a dict:
        its keys, values or pairs, in order.)"""
        known = self.env.get(func.value.id) if isinstance(func.value, gast.Name) else None
        if func.attr in ("keys", "values", "items") and known is None:
            if node.args or node.keywords:
                return None
            return self.outside_dict_view(func.value, func.attr)  # WEIGHTS.items()
        if func.attr in ("keys", "values", "items") and isinstance(known, ir.Dct):
            if node.args or node.keywords:
                return None
            keys = tuple(ir.Const(k) for k in known.keys)
            parts = {
                "keys": keys,
                "values": known.values,
                "items": tuple(ir.Tup(kv, kind="tuple") for kv in zip(keys, known.values)),
            }
            return ir.Tup(parts[func.attr], kind="list")
        if not (
            func.attr == "get"
            and isinstance(func.value, gast.Name)
            and isinstance(self.env.get(func.value.id), ir.Dct)
            and 1 <= len(node.args) <= 2
            and not node.keywords
            and isinstance(node.args[0], gast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            return None
        options = self.env[func.value.id]
        assert isinstance(options, ir.Dct)
        # (the default is evaluated whether the key is there or not, as Python does)
        default = self.expr(node.args[1], None, "default") if len(node.args) == 2 else None
        if node.args[0].value in options.keys:
            return options.values[options.keys.index(node.args[0].value)]
        return default if default is not None else ir.Const(None)

    def listed_arguments(self: Lowerer, node: gast.Call, fn: Any) -> gast.Call:
        """``np.stack(tuple(x[i] - m for i in range(n)))``: a NumPy function reads a tuple and
        a list of arrays alike where it takes arrays or a sequence of them, so ``tuple(...)``
        of a comprehension there is read as the list comprehension (whose length need not be
        known when transforming). Other arguments (``axis=tuple(...)``) are left as they are."""
        try:
            prim = registry.lookup(fn)
        except TypeError:
            return node
        if prim is None or not _numpy_function(fn):
            return node
        arrays = {prim.sequence, *prim.diff_params} - {None}
        names = [p.name for p in prim.params]

        def listed(k: int | str, arg: Any) -> Any:
            name = names[k] if isinstance(k, int) and k < len(names) else k
            if not (
                name in arrays
                and isinstance(arg, gast.Call)
                and len(arg.args) == 1
                and not arg.keywords
                and isinstance(arg.args[0], (gast.GeneratorExp, gast.ListComp))
                and self.is_call_to(arg, tuple)
            ):
                return arg
            mark = len(self.block)
            known = self.unrolled(arg.args[0]) is not None  # (a tuple of known length: kept)
            del self.block[mark:]  # (what finding that out wrote: the call is lowered later)
            return arg if known else _listed(arg.args[0])

        args = [listed(k, a) for k, a in enumerate(node.args)]
        keywords = [
            gast.keyword(arg=kw.arg, value=listed(kw.arg, kw.value)) if kw.arg else kw
            for kw in node.keywords
        ]
        if all(a is b for a, b in zip(args, node.args)) and all(
            a.value is b.value for a, b in zip(keywords, node.keywords)
        ):
            return node
        return gast.copy_location(gast.Call(func=node.func, args=args, keywords=keywords), node)

    def tuple_call(self: Lowerer, node: gast.Call) -> ir.Atom | None:
        """``tuple(...)`` of a sequence known when transforming (a display, a name bound to a
        tuple or list, a comprehension over such sequences): a tuple atom. Else None (run as
        written where it holds no derivative), but a generator expression is refused: its
        items would make a tuple of a length known only when the program runs."""
        if node.keywords or len(node.args) > 1:
            return None
        if not node.args:
            return ir.Tup((), kind="tuple")
        arg = node.args[0]
        if isinstance(arg, (gast.GeneratorExp, gast.ListComp)):
            items = self.unrolled(arg)
            if items is None:
                self.refuse(
                    arg,
                    "`tuple(...)` of a comprehension over a sequence whose length adgen does "
                    "not know when transforming (or with a condition decided only then)",
                    "write a list comprehension `[... for ...]`, or np.stack / np.array of one",
                )
            return ir.Tup(tuple(items), kind="tuple")
        known = isinstance(arg, (gast.Tuple, gast.List)) or (
            isinstance(arg, gast.Name) and isinstance(self.env.get(arg.id), ir.Tup)
        )
        if not known:
            return None
        atom = self.expr(arg, None, "items")
        assert isinstance(atom, ir.Tup)
        return ir.Tup(atom.items, kind="tuple")

    # -- isinstance --------------------------------------------------------------------------
    def lower_isinstance(self: Lowerer, node: gast.Call) -> ir.Atom | None:
        """``isinstance(x, T)`` with ``T`` a class (or a tuple of classes) named in the call:
        decided when transforming wherever every value adgen knows ``x`` may have gives the
        same answer (a display is a tuple or a list, a tuple or list argument has its
        structure, a rule's result is an array or a number); a parameter of the function
        differentiated, passed to the generated code as it is, is tested when it runs;
        anything else is refused (adgen's code may hold another type there: a list as a
        tuple, a NumPy scalar for a float). None: not a call of this form."""
        if len(node.args) != 2 or node.keywords:
            return None
        classes = self.static_classes(node.args[1])
        if classes is None:
            return None
        atom = self.expr(node.args[0], None, "x")
        samples = self.possible_values(atom)
        if samples is not None:
            answers = {isinstance(v, classes) for v in samples}
            if len(answers) == 1:
                return ir.Const(answers.pop())
        if isinstance(atom, ir.Var) and atom.name in self.root.flat_params:
            if atom.name not in self.producers:  # never rebound: the caller's value
                prim = registry.lookup(isinstance)
                assert prim is not None
                spelled = self.classes_atom(classes)
                return self.emit(None, "kind", prim, [atom, spelled], [], node)
        self.refuse(
            node,
            "`isinstance` of a value whose type adgen does not know when transforming",
            "test the argument the function was called with, or pass a flag",
        )

    def lower_static_test(self: Lowerer, node: gast.Call, fn: Any) -> ir.Atom | None:
        """``hasattr(obj, "name")``, ``callable(obj)`` and a library's type tests
        (``scipy.sparse.issparse(X)``) decided when transforming: of an object adgen knows then
        (a global, an object passed to the function, ``self``), or of a value every type of
        which gives the same answer (an array or number a NumPy function computed is never
        sparse). Only the branch Python takes is lowered then (the other may read an
        attribute the object lacks). None: not decided."""
        arity = 2 if fn is hasattr else 1
        if len(node.args) != arity:
            return None
        rest: list[Any] = []
        if fn is hasattr:
            name = node.args[1]
            if not (isinstance(name, gast.Constant) and isinstance(name.value, str)):
                return None
            rest = [name.value]
        try:
            ok, obj = self.static_object(node.args[0])
        except AdgenError:
            ok, obj = False, None
        if ok and fn is hasattr and is_user_object(obj):
            if (id(obj), rest[0]) in self.root.attrs_shadowed:
                return ir.Const(True)  # (the function stored it before)
            self.note_presence(obj, rest[0])
        if ok and not isinstance(obj, (LocalFunction, LocalInstance, StaticSeq)):
            return ir.Const(bool(fn(obj, *rest)))
        if isinstance(obj, LocalInstance):  # made inside: its class and the attributes set
            if fn is callable:
                return ir.Const(callable(obj.cls))
            if fn is hasattr:
                return ir.Const(rest[0] in obj.attrs or hasattr(obj.cls, rest[0]))
            return None
        if ok:
            return None
        samples = self.possible_values(self.expr(node.args[0], None, "x"))
        if samples is not None:
            answers = {bool(fn(v, *rest)) for v in samples}
            if len(answers) == 1:
                return ir.Const(answers.pop())
        return None

    def static_classes(self: Lowerer, node: Any) -> Any:
        """The class or (nested) tuple of classes written at ``node``, or None."""
        if isinstance(node, gast.Tuple):
            parts = [self.static_classes(e) for e in node.elts]
            return None if any(p is None for p in parts) else tuple(parts)
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.BitOr):
            # `int | float | NoneType`: to isinstance, the union is the tuple of its classes
            parts = [self.static_classes(node.left), self.static_classes(node.right)]
            return None if any(p is None for p in parts) else tuple(parts)
        if not isinstance(node, (gast.Name, gast.Attribute)):
            return None
        try:
            ok, obj = self.static_object(node)
        except AdgenError:
            return None
        return obj if ok and isinstance(obj, type) else None

    def classes_atom(self: Lowerer, classes: Any) -> ir.Atom:
        """An atom naming the class(es) in generated code."""
        if isinstance(classes, tuple):
            return ir.Tup(tuple(self.classes_atom(c) for c in classes), kind="tuple")
        return ir.Free(self.outside_name(classes.__name__, classes))

    def possible_values(self: Lowerer, atom: ir.Atom) -> list[Any] | None:
        """A value of each type the atom may hold (None: adgen does not know them)."""
        atom = self.settled(atom)
        if isinstance(atom, ir.Const):
            return [atom.value]
        if isinstance(atom, ir.Free) and atom.name in self.free:
            return [self.free[atom.name]]
        if isinstance(atom, ir.Tup):
            kinds: dict[str, list[Any]] = {"list": [[]], "tuple": [()]}
            return kinds.get(atom.kind, [[], ()])
        if isinstance(atom, ir.Dct):
            return [{}]
        sample = self.argument_sample(atom)
        if sample is not None:
            return [sample]
        items = self.outside_items(atom)
        if items is not None:
            return items
        one = self.one_object(atom) if isinstance(atom, ir.Var) else None
        if one is not None and one[0] == "outside" and one[1] in self.free:
            return [self.free[one[1]]]  # (a copy of an outside value)
        shown = self.made_by(atom, "display")
        if shown is not None:  # (a copy of a list, tuple, dict display)
            return self.possible_values(shown.args[0])
        if self.never_singleton(atom):  # (a rule's result, followed back through copies)
            return _NUMBERS[:5] if self.made_by_numpy(atom) else _NUMBERS
        if isinstance(atom, ir.Var) and atom.name not in self.rebound_names:
            prim = self.producers.get(atom.name)
            if prim is not None and (prim is registry.LIST_NEW or prim.lists):
                return [[]]
            if prim is not None and prim.name in (".ndim", ".size", "len"):
                return [0]  # (an array's sizes are Python ints)
            if prim is not None and prim.name == ".shape":
                return [()]
            if prim is not None and prim.name == "getitem" and self.of_shape(atom.name):
                return [0]  # x.shape[0]
        return None

    def made_by_numpy(self: Lowerer, atom: ir.Atom) -> bool:
        """Was ``atom``'s value made by one of NumPy's functions (an array or a NumPy scalar,
        never a Python number), followed back through copies?"""
        made = self.made_by(atom)
        return (
            made is not None
            and made.prim.name.startswith("np.")
            # (a view-making one may return its argument: np.real(1.5) is the float 1.5)
            and (not made.prim.view or registry.kind_keeping(made.prim.name) is not None)
        )

    def of_shape(self: Lowerer, name: str) -> bool:
        """Is ``name`` (bound once) an item of an array's ``.shape`` (``x.shape[0]``)?"""
        made = next(
            (s for s in reversed(self.block) if isinstance(s, ir.Assign) and s.targets == (name,)),
            None,
        )
        if made is None or not isinstance(made.args[0], ir.Var):
            return False
        base = made.args[0].name
        shape = self.producers.get(base)
        index = made.args[1] if len(made.args) > 1 else None
        return (
            shape is not None
            and shape.name == ".shape"
            and base not in self.rebound_names
            and isinstance(index, ir.Const)
            and type(index.value) is int
        )

    # -- comprehensions known when transforming --------------------------------------------------
    def unrolled(self: Lowerer, comp: Any) -> list[ir.Atom] | None:
        """The items of a comprehension (or generator expression) whose loops run over
        sequences known when transforming and whose conditions are decided then, in Python's
        order; None (and nothing emitted) for any other."""
        mark, saved = len(self.block), dict(self.env)
        try:
            return self.unroll_generators(list(comp.generators), comp.elt)
        except _NotStatic:
            del self.block[mark:]
            return None
        finally:
            self.env = saved  # the comprehension's variables are its own

    def unroll_generators(self: Lowerer, generators: list[Any], elt: Any) -> list[ir.Atom]:
        if not generators:
            return [self.expr(elt, None, "item")]
        gen = generators[0]
        if getattr(gen, "is_async", 0):
            raise _NotStatic
        out: list[ir.Atom] = []
        for step in self.static_steps(gen.iter):
            self.bind_static(gen.target, step)
            taken = True
            for cond in gen.ifs:
                test = self.expr(cond, None, "cond")
                if not isinstance(test, ir.Const):
                    raise _NotStatic
                if not test.value:
                    taken = False
                    break
            if taken:
                out += self.unroll_generators(generators[1:], elt)
            if len(out) > MAX_UNROLLED:
                raise _NotStatic
        return out

    def static_steps(self: Lowerer, it: Any) -> list[ir.Atom]:
        """What each step of a loop over ``it`` binds, if ``it`` is known when transforming
        (a tuple or list, ``range`` of constants, ``zip``/``enumerate`` of those)."""
        if isinstance(it, gast.Call) and not any(isinstance(a, gast.Starred) for a in it.args):
            if self.is_call_to(it, range) and not it.keywords:
                bounds = [self.expr(a, None, "n") for a in it.args]
                if not all(isinstance(b, ir.Const) and type(b.value) is int for b in bounds):
                    raise _NotStatic
                steps = range(*(b.value for b in bounds))  # type: ignore[union-attr]
                if len(steps) > MAX_UNROLLED:
                    raise _NotStatic
                return [ir.Const(k) for k in steps]
            if self.is_call_to(it, zip) and not it.keywords:
                parts = [self.static_steps(a) for a in it.args]
                return [ir.Tup(tuple(p), kind="tuple") for p in zip(*parts)]
            if self.is_call_to(it, enumerate) and len(it.args) == 1 and not it.keywords:
                inner = self.static_steps(it.args[0])
                return [ir.Tup((ir.Const(k), a), kind="tuple") for k, a in enumerate(inner)]
            raise _NotStatic
        if not isinstance(it, (gast.Name, gast.Attribute, gast.Tuple, gast.List)):
            raise _NotStatic
        if isinstance(it, gast.Name) and it.id in self.env:
            if not isinstance(self.env[it.id], (ir.Tup, ir.Free)):
                raise _NotStatic
        atom = self.expr(it, None, "items")
        if isinstance(atom, ir.Free):  # a constant tuple of the module, a default argument
            ok, value = self.known_value(atom)
            simple = (int, float, bool, str, type(None))
            if not (ok and type(value) in (tuple, list) and all(type(v) in simple for v in value)):
                raise _NotStatic
            return [ir.Const(v) for v in value]
        if not isinstance(atom, ir.Tup):
            raise _NotStatic
        return list(atom.items)

    def bind_static(self: Lowerer, target: Any, atom: ir.Atom) -> None:
        """Bind a comprehension's target to ``atom`` (names only: no IR statement)."""
        if isinstance(target, gast.Name):
            self.env[target.id] = atom
            return
        if (
            isinstance(target, (gast.Tuple, gast.List))
            and isinstance(atom, ir.Tup)
            and len(atom.items) == len(target.elts)
        ):
            for t, a in zip(target.elts, atom.items):
                self.bind_static(t, a)
            return
        raise _NotStatic

    # -- generator expressions given to a call ---------------------------------------------------
    def consumed_generators(self: Lowerer, node: gast.Call) -> gast.Call:
        """A call with generator expressions among its arguments, each turned into a list
        comprehension where the callee takes all its items at once, in order; refused where
        it does not (or adgen cannot tell)."""
        if not any(isinstance(a, gast.GeneratorExp) for a in node.args):
            return node
        try:
            ok, fn = self.static_object(node.func)
        except AdgenError:
            ok, fn = False, None
        args = []
        for k, a in enumerate(node.args):
            if isinstance(a, gast.GeneratorExp):
                if not (ok and self.takes_all_items(fn, node, k)):
                    self.refuse_generator(a, fn if ok else None)
                a = _listed(a)
            args.append(a)
        call = gast.Call(func=node.func, args=args, keywords=node.keywords)
        return gast.copy_location(call, node)

    def takes_all_items(self: Lowerer, fn: Any, node: gast.Call, k: int) -> bool:
        """Does ``fn``, called by ``node``, take every item of its ``k``-th argument once, in
        order (and nothing else of it)?"""
        if any(fn is c for c in _CONSUMERS):
            return len(node.args) == 1 or fn is sum
        if registry.lookup(fn) is not None:
            return False
        if isinstance(fn, LocalFunction):
            definition = fn.node
        elif isinstance(fn, types.FunctionType):
            try:
                definition = self.callee(fn, node)[0].node
            except AdgenError:
                return False
        else:
            return False
        params = [a.id for a in definition.args.args]
        return k < len(params) and _iterated_once(definition, params[k])

    def refuse_generator(self: Lowerer, node: Any, fn: Any) -> None:
        """The refusal of a generator expression given to ``fn`` (None: not known)."""
        module = getattr(fn, "__module__", None) or ""
        if module.startswith("numpy"):
            why = (
                "NumPy's functions take sequences, not generators (np.array makes an object "
                "array of one, np.stack refuses it)"
            )
        else:
            why = "adgen cannot tell that the function takes each item once, in order"
        self.refuse(
            node,
            f"a generator expression passed to this call ({why})",
            "write a list comprehension `[... for ...]` instead",
        )


def _listed(gen: Any) -> Any:
    """The list comprehension computing a generator expression's items."""
    if isinstance(gen, gast.ListComp):
        return gen
    return gast.copy_location(gast.ListComp(elt=gen.elt, generators=gen.generators), gen)


def _iterated_once(definition: Any, param: str) -> bool:
    """Does the function ``definition`` use its parameter ``param`` exactly once, as the
    iterable of a ``for`` loop (with no ``break``) or the argument of a builtin that takes
    every item (``sum(xs)``), outside any loop, comprehension or nested function?"""
    parents: dict[int, Any] = {}
    for n in walk(definition):
        for child in gast.iter_child_nodes(n):
            parents[id(child)] = n
    uses = [
        n
        for n in walk(definition)
        if isinstance(n, gast.Name) and n.id == param and n is not _param_node(definition, param)
    ]
    if len(uses) != 1 or not isinstance(uses[0].ctx, gast.Load):
        return False
    use = uses[0]
    holder = parents.get(id(use))
    if isinstance(holder, gast.For) and holder.iter is use:
        if any(isinstance(n, gast.Break) for s in holder.body for n in walk(s)):
            return False
        start = holder
    elif (
        isinstance(holder, gast.Call)
        and isinstance(holder.func, gast.Name)
        and getattr(builtins, holder.func.id, None) in _CONSUMERS
        and holder.args == [use]
        and not holder.keywords
    ):
        start = holder
    else:
        return False
    node = parents.get(id(start))
    while node is not None and node is not definition:
        if isinstance(
            node, (gast.For, gast.While, gast.comprehension, gast.FunctionDef, gast.Lambda)
        ):
            return False
        node = parents.get(id(node))
    return True


def _param_node(definition: Any, param: str) -> Any:
    return next((a for a in definition.args.args if a.id == param), None)
