# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower expressions: operators, constants, names, attributes and indexing.

:meth:`~ExpressionsMixin.expr` lowers an expression to an atom, emitting one IR statement per
primitive; names are resolved here -- to the IR atom a local means, or to the Python object a
global or module attribute is (:meth:`~ExpressionsMixin.static_object`), so each call knows which
function it calls. Calls are lowered in :mod:`adgen.frontend.lower.calls`, lists the function grows
in :mod:`adgen.frontend.lower.containers`.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir, seam
from adgen.errors import UnresolvedNameError
from adgen.frontend.lower.index_tricks import concatenator_call
from adgen.frontend.lower.objects import (
    LocalDerivative,
    LocalFunction,
    LocalInstance,
    LocalPartial,
    LocalPullback,
    LocalRecord,
    StaticSeq,
)
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.static_results import StaticTuple
from adgen.frontend.lower.verbatim import is_formatting
from adgen.frontend.parse import LiveScope
from adgen.names import RESERVED
from adgen.rules import namespace, registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer
    from adgen.frontend.lower.identities import Place


class ExpressionsMixin(LowererState):
    """Expressions, names and their resolution."""

    def expr(self: Lowerer, node: Any, target: str | None, hint: str | None = None) -> ir.Atom:
        """Lower an expression; its final operation binds ``target`` if given."""
        hint = hint or target or "t"
        if isinstance(node, gast.Constant):
            return ir.Const(node.value)
        if isinstance(node, gast.Name):
            return self.name(node)
        if isinstance(node, gast.Dict) and all(
            k is None or (isinstance(k, gast.Constant) and isinstance(k.value, str))
            for k in node.keys
        ):
            return self.dict_display(node, hint)
        if isinstance(node, (gast.Tuple, gast.List)):
            # a list literal is a tuple here: it is only read (np.array([a, b]), np.zeros([2, 3]))
            kind = "tuple" if isinstance(node, gast.Tuple) else "list"
            items: list[ir.Atom] = []
            parts: list[ir.Atom] = []  # (runs of items, and sequences of a length not known)
            for e in node.elts:  # (`[*args_, *kwargs_.values()]` of sequences known now)
                if not isinstance(e, gast.Starred):
                    items.append(self.expr(e, None, hint))
                    continue
                seq = self.spread(e.value, hint)
                if isinstance(seq, ir.Tup):
                    items.extend(seq.items)
                    continue
                if kind == "list":
                    self.refuse_node(e)
                parts += [ir.Tup(tuple(items)), seq]
                items = []
            if parts:  # `(n, *x.shape[1:])`: joined when the code runs
                return self.joined_display(node, [*parts, ir.Tup(tuple(items))], target, hint)
            return ir.Tup(tuple(items), kind=kind)
        if is_formatting(node):  # f"...", "..." % v, "...".format(v): copied as written
            return self.formatted(node, target, hint)
        if isinstance(node, gast.BinOp):
            fn = registry.BINOP_FUNCTIONS.get(type(node.op).__name__)
            prim = registry.lookup(fn) if fn is not None else None
            if prim is None:
                self.refuse(node, f"the operator `{type(node.op).__name__}`")
            left = self.expr(node.left, None, hint)
            right = self.expr(node.right, None, hint)
            folded = _folded(fn, left, right, (int,))
            if folded is not None:  # `i + 1`, `k % 2` of integers known when transforming
                return folded
            if isinstance(node.op, gast.Add):
                joined = self.concatenation([left, right], target, hint, node)
                if joined is not None:
                    return joined
            return self.emit(target, hint, prim, [left, right], [], node)
        if isinstance(node, gast.UnaryOp):
            fn = registry.UNARYOP_FUNCTIONS.get(type(node.op).__name__)
            prim = registry.lookup(fn) if fn is not None else None
            if prim is None:
                self.refuse(node, f"the operator `{type(node.op).__name__}`")
            operand = self.expr(node.operand, None, hint)
            if isinstance(node.op, gast.Not) and isinstance(operand, ir.Var):
                flag = self.outside_copy(operand)  # (a flag set in straight-line code)
                operand = flag if isinstance(flag, ir.Const) else operand
            if isinstance(operand, ir.Const) and isinstance(node.op, gast.USub):
                return ir.Const(-operand.value)
            if isinstance(operand, ir.Const) and isinstance(node.op, gast.Not):
                return ir.Const(not operand.value)  # `not (b is None)`, decided statically
            if isinstance(operand, (ir.Tup, ir.Dct)) and isinstance(node.op, gast.Not):
                # `not args` of a tuple of known length (`*args`), a dict of known keys
                size = len(operand.items) if isinstance(operand, ir.Tup) else len(operand.keys)
                return ir.Const(size == 0)
            return self.emit(target, hint, prim, [operand], [], node)
        if isinstance(node, gast.Compare):
            if len(node.ops) != 1:
                return self.expr(_unchained(node, self), target, hint)
            if isinstance(node.ops[0], (gast.Is, gast.IsNot)):
                return self.identity(node, target, hint)
            fn = registry.COMPARE_FUNCTIONS.get(type(node.ops[0]).__name__)
            prim = registry.lookup(fn) if fn is not None else None
            if prim is None:
                self.refuse(node, f"the comparison `{type(node.ops[0]).__name__}`")
            left = self.expr(node.left, None, hint)
            if isinstance(node.ops[0], (gast.In, gast.NotIn)) and isinstance(
                node.comparators[0], (gast.Set, gast.List, gast.Tuple)
            ):  # `method in {'lower', 'higher'}` of an option's value
                member = _constant_member(node, self.settled(left))
                if member is not None:
                    return member
            right = self.expr(node.comparators[0], None, hint)
            if (member := self.key_test(node, left, right)) is not None:
                return member  # `old in kwargs` of a dict known key by key
            folded = _folded(fn, left, right, (int, float, bool, str))
            if folded is not None:  # `i != 1` in a loop unrolled when transforming
                return folded
            # `np.__name__ in _NUMPY_NAMESPACE_NAMES`: plain data adgen reads when transforming
            data = [self.outside_data(self.settled(a)) for a in (left, right)]
            if data[0] is not None and data[1] is not None:
                consts = (ir.Const(data[0][0]), ir.Const(data[1][0]))
                folded = _folded(fn, *consts, _DATA)
                if folded is None:  # X.dtype == float, dtype_orig in (np.float64, np.float32)
                    folded = _types_folded(fn, data[0][0], data[1][0])
                if folded is not None:
                    return folded
            return self.emit(target, hint, prim, [left, right], [], node)
        if isinstance(node, gast.Call):
            done = self.builtin_call(node, target, hint)  # max(items), tuple(...), isinstance
            if done is not None:
                return done  # type: ignore[no-any-return]
            return self.call(self.consumed_generators(node), target, hint)
        if isinstance(node, gast.GeneratorExp):
            self.refuse(
                node,
                "generator expressions here",
                "pass it straight to sum, max, min, tuple, list, any or all (or to a function "
                "of yours that iterates it once), or write a list comprehension `[...]`",
            )
        if isinstance(node, gast.ListComp):
            return self.comprehension_or_as_written(node, target, hint)
        if isinstance(node, gast.DictComp):
            return self.dict_comprehension(node, hint)
        if isinstance(node, (gast.Set, gast.SetComp)):
            return self.set_as_written(node, target, hint)
        if isinstance(node, gast.IfExp):
            return self.if_exp(node, target, hint)
        if isinstance(node, gast.BoolOp):
            # `a and b`: a if a is false, else b (`or` the other way round); b is evaluated only
            # when needed, as in Python. The values go to a name of their own, never the
            # target: in `z = (a and z)` the second value is the old z, which binding a to z
            # first would lose
            name = self.namer.fresh(hint)
            is_and = isinstance(node.op, gast.And)
            values = list(node.values)
            first = self.expr(values[0], name, hint)
            # a value known when transforming (`b is not None and ...`) decides statically
            # whether the next one is evaluated
            while isinstance(first, ir.Const) and len(values) > 1:
                if bool(first.value) != is_and:
                    return first
                values = values[1:]
                first = self.expr(values[0], name, hint)
            if len(values) == 1:
                return first
            self.rebound_names.add(name)  # bound by each value evaluated
            if first != ir.Var(name):
                self.copy(name, first)
            for value in values[1:]:
                rest, _ = self.attempted(lambda v=value: self.branch_value(v, name, hint))
                self.add_if(ir.Var(name), rest if is_and else [], [] if is_and else rest, self.line)
            return ir.Var(name)
        if isinstance(node, gast.Attribute):
            return self.attribute(node, target, hint)
        if isinstance(node, gast.Subscript):
            return self.subscript(node, target, hint)
        self.refuse_node(node)

    def known_value(self: Lowerer, atom: ir.Atom) -> tuple[bool, Any]:
        """The Python value of a constant or an outside value (a global), if the atom is one."""
        if isinstance(atom, ir.Const):
            return True, atom.value
        if isinstance(atom, ir.Free) and atom.name in self.free:
            return True, self.free[atom.name]
        if isinstance(atom, ir.Free):  # a module's attribute spelled by its path (np.ndarray)
            try:
                return True, ir.Function("", [], [], "", 0, {}, free=self.free).outside(atom.name)
            except (KeyError, AttributeError):
                return False, None
        return False, None

    def outside_data(self: Lowerer, atom: ir.Atom) -> tuple[Any] | None:
        """``(value,)`` of a constant, or of an outside value (a global, a module's attribute)
        that is plain data: a number, a string, None, or a tuple, list, set or dict of those;
        else None."""
        atom = self.outside_copy(atom)  # (a copy of one)
        if isinstance(atom, ir.Tup):  # a display of constants (nested: ((1.0, 2.0), ...))
            value = self.known_display(atom)
            if value is None:
                return None
        else:
            known, value = self.known_value(atom)
            if not known:
                return None
        scalar = (int, float, bool, str, type(None))
        if (
            type(value) in scalar
            or isinstance(value, (*_DATA_TYPES, np.number, np.bool_))  # (np.finfo(t).eps)
            or (
                type(value) in (tuple, list, set, frozenset, dict)
                and all(type(v) in scalar or isinstance(v, _DATA_TYPES) for v in value)
            )
            or (type(value) is tuple and isinstance(atom, ir.Tup))  # (nested displays)
        ):
            if type(value) in (list, set, dict) and isinstance(atom, ir.Free):
                # read now, and changeable in place: the derivative is made again if its
                # contents change (`OPTIONS["scale"] = 3.0` between two calls)
                self.record("data", value, "data", type(value)(value))
            return (value,)
        return None

    def known_display(self: Lowerer, atom: ir.Tup) -> tuple[Any, ...] | None:
        """The tuple a display is when its items are known when transforming: constants,
        data types and classes made outside (``[np.float64, np.float32]``), displays of
        those; None for anything else."""
        items: list[Any] = []
        for item in atom.items:
            if isinstance(item, ir.Tup):
                inner = self.known_display(item)
                if inner is None:
                    return None
                items.append(inner)
                continue
            known, value = self.known_value(item)
            if not known or not (
                type(value) in (int, float, bool, str, type(None))
                or isinstance(value, (*_DATA_TYPES, np.number, np.bool_))
            ):
                return None
            items.append(value)
        return tuple(items)

    def never_singleton(self: Lowerer, atom: ir.Atom, at: Place | None = None) -> bool:
        """Is this atom's value an array or a number for certain (made by a derivative rule,
        such as NumPy's functions and arithmetic: never None, True or False) -- before the
        statement at ``at``, or here?"""
        traced = self.traced(atom, at)
        while traced is not None and traced[0][0] == "made":
            made, place = traced[1], traced[2]
            assert made is not None and place is not None
            if not (made.prim is registry.SETITEM and isinstance(made.args[0], ir.Var)):
                return _makes_numbers(made.prim)  # (followed back through copies)
            traced = self.traced(made.args[0], place)  # (written into: the same array)
        if traced is not None:
            return False
        found = self.per_branch(atom, at, self.never_singleton)  # (`if c: zi /= c`)
        if found is not None:
            return bool(found) and all(found)
        if at is not None:
            return False
        if not isinstance(atom, ir.Var) or atom.name in self.rebound_names:
            return False  # (a name bound on several paths: its last statement says nothing)
        prim = self.producers.get(atom.name)
        return prim is not None and _makes_numbers(prim)

    def index(self: Lowerer, node: Any, hint: str) -> ir.Atom:
        if isinstance(node, gast.Slice):
            parts = [
                ir.Const(None) if p is None else self.expr(p, None, hint)
                for p in (node.lower, node.upper, node.step)
            ]
            return ir.Slc(parts[0], parts[1], parts[2])
        if isinstance(node, gast.Tuple):
            return ir.Tup(tuple(self.index(e, hint) for e in node.elts))
        if isinstance(node, gast.List):
            # x[[0, 2, 0]] picks rows 0, 2, 0 (an integer array), it is not x[0, 2, 0]
            rows = ir.Tup(tuple(self.expr(e, None, hint) for e in node.elts))
            return self.call_prim(registry.np.array, [rows], hint)
        atom = self.expr(node, None, hint)
        # a list display is a tuple atom (a tuple value, once bound to a name a block rebinds),
        # but a list and a tuple index differently: `idx = [0, 2]` then x[idx] picks rows 0
        # and 2, `idx = (0, 2)` then x[idx] is x[0, 2]
        if self.list_displays is None:  # (one walk of the function, not one per index)
            self.list_displays = _list_display_names(self.node)
        listed = isinstance(node, gast.Name) and node.id in self.list_displays
        if isinstance(atom, ir.Tup) or listed:
            written = self.only_display(node.id) if isinstance(node, gast.Name) else None
            if isinstance(written, gast.List):  # its only binding: rows, as an array
                return self.call_prim(registry.np.array, [atom], hint)
            if not isinstance(written, gast.Tuple):
                self.refuse(
                    node,
                    "indexing with this list or tuple: adgen does not know here which of the "
                    "two it is (a list picks rows, a tuple indexes several axes)",
                    "write the index in the subscript (`x[[0, 2]]` or `x[0, 2]`), or make it "
                    "an array (`idx = np.array([0, 2])`)",
                )
        return atom

    def name(self: Lowerer, node: gast.Name) -> ir.Atom:
        if node.id in self.deleted:
            self.refuse(node, f"reading `{node.id}` after `del {node.id}`", "remove the `del`")
        if node.id in self.env:
            return self.env[node.id]
        value: Any
        local = self.local_functions.get(node.id)
        if isinstance(local, LocalInstance):
            with self.noting_refusal(local.cls):
                self.refuse(
                    node,
                    f"using `{node.id}` (a `{local.cls.__name__}` made inside the function) as "
                    "a value here (in a list, returned, or passed to a function that is not "
                    "yours)",
                    "read its attributes or call its methods; pass it only to your own functions",
                )
        if isinstance(local, StaticSeq):
            self.refuse_sequence(node.id, node)
        if self.interpolant_family(local) is not None and not callable(local):
            return self.interpolant_value(node, local)  # s of s = CubicSpline(t, y), passed
        if isinstance(local, LocalRecord):
            self.refuse(
                node,
                f"using `{node.id}`, the result of {local.solver}, as a value",
                f"read its attributes ({', '.join(f'{node.id}.{f}' for f in local.fields)})",
            )
        if isinstance(local, StaticTuple):  # (`r = flatten(ws)`, then read otherwise)
            self.refuse(
                node,
                f"binding `{node.id}` to a tuple that holds a function or an object, and "
                "reading it other than by unpacking it",
                "unpack it where it is returned: `a, f = helper(...)`",
            )
        if local is not None and not _local_kind(local):
            value = local  # a name bound to a function or an object (a parameter, f = np.sin)
        elif local is not None:
            self.refuse(
                node,
                f"using the local function `{node.id}` as a value",
                "call it, or pass it to a function of your own (adgen reads those; it cannot "
                "follow it into a library's function)",
            )
        elif self.enclosing is not None and self.enclosing.sees(node.id):
            return self.enclosing.name(node)
        else:
            value = self.resolve(node)
        builtin_type = any(value is t for t in (float, int, bool, complex, object, str))
        if (
            (builtin_type and node.id == value.__name__)
            or _data_class(value)
            or isinstance(value, seam.Callback)  # (a solver's function, in generated code)
            or rt.interp_support(value) is not None  # (a SciPy interpolant, in generated code)
            or registry.helper_object(value)  # (a scikit-learn loss, in generated code)
        ):
            name = self.free_name(node.id, value)  # a builtin type as a value: x.astype(float)
            self.free[name] = value
            return ir.Free(name)
        if isinstance(
            value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
        ) or callable(value):
            self.refuse(
                node,
                f"using the function or module `{node.id}` as a value",
                "call it, or pass its result",
            )
        if local is not None:  # an object passed as itself: a name of its own
            return self.value_atom(value, node.id)
        name = self.free_name(node.id, value)
        self.free[name] = value
        return self.free_atom(name, value)

    def free_name(self: Lowerer, name: str, value: Any) -> str:
        """The name generated code gives the global ``name`` (bound to ``value``) that this
        function reads: ``name`` itself where nothing else in the generated code is called so
        -- no other global of that name, no variable of the function being differentiated,
        no name adgen made up -- else a fresh one. An inlined helper (a nested derivative's
        code included) reading the global ``y`` inside a function with a parameter ``y``
        reads the global, as Python would."""
        if self.free.get(name, self) is value:
            return name
        if name in RESERVED or name in self.free:
            return self.namer.fresh(name)  # another global of that name (a helper's own `K`)
        if name in self.namer.taken and name not in self.root.global_names:
            return self.namer.fresh(name)  # a variable's name, or one adgen made up
        self.namer.reserve(name)  # never a name adgen makes up later
        return name

    def free_atom(self: Lowerer, name: str, value: Any) -> ir.Free:
        if isinstance(value, (int, float)):
            self.scalars.add(name)
        return ir.Free(name)

    def stored_names(self: Lowerer) -> frozenset[str]:
        """The names the function's own code binds (stores, parameters, ``del``; found
        once: reshaping its statements moves and copies them, but binds no other name)."""
        if self.stores_found is None:
            self.stores_found = frozenset(
                n.id
                for n in gast.walk(self.node)
                if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
            )
        return self.stores_found

    def resolve(self: Lowerer, node: gast.Name) -> Any:
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.imported:  # `import numpy as np` inside the function
            return self.imported[node.id]
        if node.id in self.bound:  # bound on another path (the other branch of an `if`)
            raise UnresolvedNameError(
                f"`{node.id}` is used where it may not be assigned",
                self.parsed.loc(node),
                "assign it on every path before reading it",
            )
        try:
            return self.parsed.scope.lookup(node.id)
        except KeyError:
            if node.id in self.stored_names():
                raise UnresolvedNameError(
                    f"`{node.id}` is used before it is assigned",
                    self.parsed.loc(node),
                    "assign it first",
                ) from None
            raise UnresolvedNameError(
                f"name `{node.id}` is not defined",
                self.parsed.loc(node),
                "define it (or import it) before transforming the function",
            ) from None

    def sees(self: Lowerer, name: str) -> bool:
        """Is ``name`` a local of this function (or of one it is nested in)?"""
        return (
            name in self.env
            or name in self.local_functions
            or name in self.imported
            or (self.enclosing is not None and self.enclosing.sees(name))
        )

    def subscript(self: Lowerer, node: gast.Subscript, target: str | None, hint: str) -> ir.Atom:
        """``a[k]``: an item of a tuple or dict known now, an index into an array (through
        ``a.flat`` too), or ``np.r_[...]``/``np.c_[...]`` (the concatenation they make)."""
        flat = self.flat_target(node, None)  # a.flat[k]: a's entries k, in C order
        if flat is not None:
            prim = registry.lookup(registry.operator.getitem)
            assert prim is not None
            base = self.expr(flat[0].value, None, hint)
            return self.emit(target, hint, prim, [base, flat[1]], [], node)
        ok, obj = self.static_object(node.value)
        call = concatenator_call(obj, node) if ok else None  # np.r_[z, 1 - s]
        if call is not None:
            return self.expr(call, target, hint)
        value = self.expr(node.value, None, hint)
        index = self.index(node.slice, hint)
        data = self.outside_data(value) if isinstance(value, ir.Free) else None
        if data is not None and isinstance(index, ir.Const):  # KERNEL_PARAMS[metric]
            try:
                item = data[0][index.value]
            except (KeyError, IndexError, TypeError):
                item = None
            if item is not None and self.outside_data(ir.Const(item)) is not None:
                return self.static_atom(item, hint, node)
        if isinstance(value, ir.Tup) and not isinstance(index, (ir.Const, ir.Tup)):
            here = (self.block, len(self.block))  # (xs[argnum], argnum known now)
            k = self.static_int(self.settled(index), here)
            index = ir.Const(k) if k is not None else index
            named = node.value.id if isinstance(node.value, gast.Name) else None
            if k is None and named in self.__dict__.get("_item_lists", ()):
                value = self.copied_list(value)  # (a list known item by item, read at an
                # index known only when the code runs: its items made a list here)
        if isinstance(value, ir.Dct):
            if not (isinstance(index, ir.Const) and index.value in value.keys):
                known = ", ".join(repr(k) for k in value.keys)
                self.refuse(
                    node.slice,
                    f"this key of a dict argument (its keys: {known})",
                    "index it with one of its keys, written as a string literal",
                )
            return value.values[value.keys.index(index.value)]
        if (
            isinstance(value, ir.Tup)
            and isinstance(index, ir.Const)
            and type(index.value) is int
            and -len(value.items) <= index.value < len(value.items)
        ):
            return value.items[index.value]
        bounds = _static_slice(index)
        if isinstance(value, ir.Tup) and bounds is not None:  # params[:-1] of a tuple
            return ir.Tup(value.items[bounds])
        prim = registry.lookup(registry.operator.getitem)
        assert prim is not None
        return self.emit(target, hint, prim, [value, index], [], node)

    def static_object(self: Lowerer, node: Any) -> tuple[bool, Any]:
        """Resolve ``name`` or ``module.attr.attr`` to an object when it is not a local value
        (or a function adgen's own rewrites put in a call: ``np.r_[...]``'s)."""
        if isinstance(node, gast.Constant) and callable(node.value):
            return True, node.value
        if isinstance(node, gast.Name):
            if node.id in self.local_functions:
                return True, self.local_functions[node.id]
            if node.id in self.env:
                return False, None
            if self.enclosing is not None and self.enclosing.sees(node.id):
                return self.enclosing.static_object(node)
            return True, self.resolve(node)
        if isinstance(node, gast.Attribute):
            if (
                isinstance(node.value, gast.Call)
                and isinstance(node.value.func, gast.Name)
                and node.value.func.id == "super"
                and not node.value.args
                and self.is_call_to(node.value, super)
            ):
                return self.super_member(node)  # super().__init__(W)
            frozen = self.frozen_distribution(node.value)
            if frozen is not None:  # scipy.stats.norm(mu, s).logpdf
                return True, self.frozen_method(frozen, node)
            ok, base = self.static_object(node.value)
            if ok and isinstance(base, types.ModuleType):
                try:
                    value = getattr(base, node.attr)
                    scope = self.root.parsed.scope
                    if isinstance(scope, LiveScope):  # `hm.SCALE`: rebinding it is noticed
                        scope._record("attr", base, node.attr, value)
                    return True, value
                except AttributeError:
                    raise UnresolvedNameError(
                        f"module `{base.__name__}` has no attribute `{node.attr}`",
                        self.parsed.loc(node),
                        "check the spelling",
                    ) from None
            if ok and not isinstance(base, types.ModuleType):  # model.loss, Cls.create, m.W
                return self.member(base, node)
            # an attribute of a value (W.T, W.shape) is computed by the program, not snapshot
        if isinstance(node, gast.Subscript):  # ACTIVATIONS["tanh"]: a function picked now
            return self.static_item(node)
        if isinstance(node, gast.IfExp):  # `(np.mean if normalize else np.sum)(a)`
            test = self.static_test(node.test)
            if test is not None:
                return self.static_object(node.body if test else node.orelse)
        return False, None

    def attribute(self: Lowerer, node: gast.Attribute, target: str | None, hint: str) -> ir.Atom:
        field = self.solver_field(node)  # minimize(...).x
        if field is not None:
            return field
        found = self.instance_attribute(node, hint)
        if found is not None:
            return found
        ok, obj = self.static_object(node)
        if ok:
            base_ok, base = self.static_object(node.value)
            if base_ok and not isinstance(base, types.ModuleType):  # an object's: a constant
                if callable(obj) and not isinstance(obj, type):
                    self.refuse(node, f"using `{node.attr}` as a value", "call it")
                return self.static_atom(obj, node.attr, node)
            if isinstance(obj, types.ModuleType) or (callable(obj) and not isinstance(obj, type)):
                self.refuse(node, f"using `{node.attr}` as a value", "call it, or pass its result")
            alias = namespace.module_alias(base) if base_ok else None
            if alias is not None:
                return self.free_atom(f"{alias}.{node.attr}", obj)
            name = self.namer.fresh(node.attr)
            self.free[name] = obj
            return self.free_atom(name, obj)
        value = self.expr(node.value, None, hint)
        field = self.named_field(value, node.attr)  # r.stat of r = R(stat, p)
        if field is not None:
            return field
        known = self.outside_data(value)
        if known is not None and isinstance(known[0], np.dtype) and hasattr(known[0], node.attr):
            # `X.dtype.kind`: a data type's attributes (it cannot change)
            return self.static_atom(getattr(known[0], node.attr), node.attr, node)
        constant = self.constant_attribute(value, node) if isinstance(value, ir.Free) else None
        if constant is not None:  # `np.finfo(X.dtype).eps`, `type(X).__module__`
            return constant
        if node.attr in ("dtype", "ndim"):
            # of an argument of a kind the code is made for: `if X.ndim == 1`, `X.dtype ==
            # np.float32` decided when transforming
            sample = self.argument_sample(value)
            if sample is not None and hasattr(sample, node.attr):
                return self.static_atom(getattr(sample, node.attr), node.attr, node)
        prim = registry.lookup_attribute(node.attr)
        if prim is None:
            made = self.producers.get(value.name) if isinstance(value, ir.Var) else None
            if isinstance(value, ir.Var) and made is not None and made.refusal is not None:
                # of an object a call run as written made (np.finfo(t).eps): read as written
                return self.attribute_as_written(node, value, made, target, hint)
            self.refuse(node, f"the attribute `.{node.attr}`", "use the NumPy function instead")
        return self.emit(target, hint, prim, [value], [], node)


def _folded(fn: Any, left: ir.Atom, right: ir.Atom, types: tuple[type, ...]) -> ir.Const | None:
    """``fn(left, right)`` as a constant, when both are constants of ``types`` (None where
    they are not, or Python raises: the program then raises when it runs)."""
    if not (isinstance(left, ir.Const) and isinstance(right, ir.Const)):
        return None
    if not (type(left.value) in types and type(right.value) in types):
        return None
    try:
        return ir.Const(fn(left.value, right.value))
    except Exception:
        return None


def _constant_member(node: gast.Compare, left: ir.Atom) -> ir.Const | None:
    """``c in {...}`` (``not in``; a set, list or tuple display of constants) of a constant
    ``c``, decided; else None.

    >>> test = gast.parse("m in {'lower', 'higher'}").body[0].value
    >>> _constant_member(test, ir.Const("linear")), _constant_member(test, ir.Var("m"))
    (Const(value=False), None)
    """
    display = node.comparators[0]
    if not (
        isinstance(node.ops[0], (gast.In, gast.NotIn))
        and isinstance(left, ir.Const)
        and isinstance(left.value, (str, int, float, bool, type(None)))
        and isinstance(display, (gast.Set, gast.List, gast.Tuple))
        and all(isinstance(e, gast.Constant) for e in display.elts)
    ):
        return None
    found = left.value in [e.value for e in display.elts]  # (Python's own test: `1 in {1.0}`)
    return ir.Const(found if isinstance(node.ops[0], gast.In) else not found)


def _unchained(node: gast.Compare, lowerer: Lowerer) -> gast.BoolOp:
    """``a == b == c`` as ``a == b and b == c``: the middle values are read twice, so each must
    be a name, a constant or an attribute of a name -- or, the first, a value computed once
    before (Python computes it whatever the comparisons give: ``2 <= 2 * w < n``); else
    refused."""
    middle = list(node.comparators[:-1])
    for k, value in enumerate(middle):
        plain = isinstance(value, (gast.Name, gast.Constant)) or (
            isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name)
        )
        if not plain and k == 0:  # (computed first, once, into a name of its own)
            held = lowerer.user_namer.fresh("middle")
            lowerer.bind(held, lowerer.new_name(held), lowerer.expr(value, None, "middle"))
            middle[0] = gast.copy_location(
                gast.Name(id=held, ctx=gast.Load(), annotation=None, type_comment=None), value
            )
        elif not plain:
            lowerer.refuse(
                value,
                "chained comparisons whose middle value is computed",
                "compute the value first, then compare two values at a time",
            )
    lefts = [node.left, *middle]
    pairs = [
        gast.copy_location(gast.Compare(left=a, ops=[op], comparators=[b]), node)
        for a, op, b in zip(lefts, node.ops, node.comparators)
    ]
    return gast.copy_location(gast.BoolOp(op=gast.And(), values=pairs), node)


def _makes_numbers(prim: Any) -> bool:
    """Does ``prim`` (a rule's, with a derivative, or one of NumPy's making a new array
    without one: ``np.zeros(k)``) always return an array or a number?"""
    return registry.makes_new_array(prim) or (
        bool(prim.jvp or prim.vjp)
        and prim.name not in ("assign", "getitem", "pop")
        and not prim.name.startswith("rt.")  # (helpers of generated code: lists too)
        and not prim.lists
    )


def _data_class(value: Any) -> bool:
    """Is ``value`` a class passed around as data: an exception or warning class
    (``warnings.simplefilter("error", ComplexWarning)``), a NumPy scalar type?"""
    return isinstance(value, type) and issubclass(value, (BaseException, np.generic))


# the types of plain data a comparison of values known when transforming is folded for
_DATA = (int, float, bool, str, type(None), tuple, list, set, frozenset, dict)


# ... and of data types (``X.dtype == np.float32``, ``dtype == float``): equality only
_DATA_TYPES = (np.dtype, type)


def _types_folded(fn: Any, left: Any, right: Any) -> ir.Const | None:
    """``left == right`` (or ``!=``) of two data types or classes, ``left in right`` (or
    ``not in``) of one and a tuple or list of them, as a constant."""
    if fn in (registry.contained, registry.not_contained):
        if not (
            isinstance(left, _DATA_TYPES)
            and type(right) in (tuple, list)
            and all(isinstance(r, _DATA_TYPES) for r in right)
        ):
            return None
    elif fn not in (registry.operator.eq, registry.operator.ne):
        return None
    elif not (isinstance(left, _DATA_TYPES) and isinstance(right, _DATA_TYPES)):
        return None
    try:
        return ir.Const(bool(fn(left, right)))
    except Exception:
        return None


def _local_kind(local: Any) -> bool:
    """Is this a local function or derivative of adgen's (not a Python object)?"""
    return isinstance(local, (LocalFunction, LocalDerivative, LocalPullback, LocalPartial))


def _list_display_names(function: Any) -> frozenset[str]:
    """The names ``function`` binds to a list display (``name = [a, b]``) anywhere."""
    return frozenset(
        t.id
        for n in gast.walk(function)
        if isinstance(n, gast.Assign) and isinstance(n.value, gast.List)
        for t in n.targets
        if isinstance(t, gast.Name)
    )


def _static_slice(index: ir.Atom) -> slice | None:
    """The slice ``index`` is, if all its bounds are integer (or missing) constants.

    >>> _static_slice(ir.Slc(ir.Const(None), ir.Const(-1), ir.Const(None)))
    slice(None, -1, None)
    """
    if not isinstance(index, ir.Slc):
        return None
    parts = (index.lower, index.upper, index.step)
    if not all(
        isinstance(p, ir.Const) and (p.value is None or type(p.value) is int) for p in parts
    ):
        return None
    return slice(*(p.value for p in parts))  # type: ignore[union-attr]
