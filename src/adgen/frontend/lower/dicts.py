# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other)
"""Dicts the function builds key by key (:func:`.syntax._static_dicts`): ``params = {}``, an
option defaulting to None made ``{}``; then ``params[k] = v``,
``params[k] += v`` and ``params.update(...)`` in straight-line code (or a loop over a few
names, unrolled). Such a dict is an :class:`ir.Dct`, known key by key wherever it is read;
each write makes the next one.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.frontend.lower.inplace import _operator
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.syntax import _static_dicts
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class DictsMixin(LowererState):
    """Dicts known key by key."""

    def assign_static_dict(self: Lowerer, target: Any, value: Any, op: Any, stmt: Any) -> bool:
        """``d = {}`` / ``d = dict(a=x)`` and ``d[k] = v`` / ``d[k] += v`` of a dict the
        function builds key by key (:func:`.syntax._static_dicts`): the dict is known key by
        key (an :class:`ir.Dct`, each write a new one); True where lowered here."""
        dicts = _static_dicts(self.node)
        if isinstance(target, gast.Name) and target.id in dicts and op is None:
            if isinstance(value, gast.Dict) and self.static_argument(value) is not None:
                return False  # {"vasicek": _vasicek_entropy, ...}: a table of functions
            if isinstance(value, gast.Call):  # dict(a=x, b=y)
                atom: ir.Atom = ir.Dct(
                    tuple(k.arg for k in value.keywords),
                    tuple(self.dict_item(k.value, target.id) for k in value.keywords),
                )
            else:
                atom = self.expr(value, None, target.id)
            self.env[target.id] = self.kept_items(atom, target.id)
            self.bound.add(target.id)
            self.__dict__.setdefault("_dict_blocks", {})[target.id] = self.block
            return True
        if not (
            isinstance(target, gast.Subscript)
            and isinstance(target.value, gast.Name)
            and target.value.id in dicts
        ):
            return False
        name = target.value.id
        base = self.env.get(name)
        if not isinstance(base, ir.Dct):
            return False
        self.refuse_key_writes_in_blocks(name, stmt)
        key = self.unrolled_value(self.expr(target.slice, None, name))
        if not (isinstance(key, ir.Const) and isinstance(key.value, str)):
            self.refuse(
                target.slice,
                f"a key of the dict `{name}` that adgen does not know when transforming",
                "use string keys known when the function is read",
            )
        entries = dict(zip(base.keys, base.values))
        new = self.kept_items(self.expr(value, None, name), name)
        if op is not None:
            if key.value not in entries:
                self.refuse(stmt, f"updating the key {key.value!r}, which `{name}` lacks")
            fn = registry.BINOP_FUNCTIONS.get(type(op).__name__)
            prim = registry.lookup(fn) if fn is not None else None
            if prim is None:
                self.refuse(stmt, f"the operator `{type(op).__name__}`")
            self.check_slot_update(name, key.value, entries, stmt)
            new = self.emit(None, name, prim, [entries[key.value], new], [], stmt)
        entries[key.value] = new
        self.env[name] = ir.Dct(tuple(entries), tuple(entries.values()))
        return True

    def check_slot_update(
        self: Lowerer, name: str, key: str, entries: dict[str, ir.Atom], stmt: Any
    ) -> None:
        """``d[k] += v`` updates the array in the slot in place (Python calls its
        ``__iadd__``): lowering it as ``d[k] = d[k] + v`` is right only where the slot holds
        a number or an array this function made that no other name, list or slot sees.
        Otherwise the update gets a check that the slot holds a number, which the argument
        kinds decide (as for ``y += v``, :meth:`check_in_place`)."""
        old = entries[key]
        if isinstance(old, ir.Const) and isinstance(old.value, (int, float, complex)):
            return
        if isinstance(old, ir.Var) and self.new_array(old):
            mine = self.shares_with(old.name)
            others = [
                v
                for lowerer in self.lowerers()
                for user, atom in lowerer.env.items()
                for v in ir.atom_vars(
                    ir.Tup(tuple(a for k, a in entries.items() if k != key))
                    if lowerer is self and user == name
                    else atom
                )
            ]
            if not any(mine & self.shares_with(v) for v in others) and not any(
                old.name in self.shares_with(v) for v in self.held
            ):
                return
        what = (
            f"in-place update of `{name}[{key!r}]` (its array may be one another name sees): "
            f"it is an array here, which `{_operator(stmt)}=` would change in place"
        )
        hint = f"write `{name}[{key!r}] = {name}[{key!r}] {_operator(stmt)} ...`"
        self.add_number_check(old, what, hint)

    def dict_item(self: Lowerer, node: Any, name: str) -> Any:
        """An item of ``dict(a=x, xp=xp)``: a module or a function passed as itself (a
        namespace a library's helper gets in ``**kwargs``), else its atom."""
        if isinstance(node, gast.Name) and node.id not in self.env:
            found = self.static_argument(node)
            if found is not None and isinstance(
                found.value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType)
            ):
                return found
        return self.expr(node, None, name)

    def unrolled_value(self: Lowerer, atom: ir.Atom) -> ir.Atom:
        """``atom`` settled, and the constant it stands for where it is the variable of a
        loop unrolled over constants (this pass's item: a key, an attribute's name)."""
        atom = self.settled(atom)
        traced = self.traced(atom) if isinstance(atom, ir.Var) else None
        if traced is not None and traced[0][0] == "constant" and traced[1] is not None:
            return traced[1].args[0]  # type: ignore[no-any-return]
        return atom

    def key_test(self: Lowerer, node: gast.Compare, left: ir.Atom, right: ir.Atom) -> Any:
        """``key in d`` (``not in``) where ``d`` is known key by key (the ``**kwargs`` a
        call gave) and ``key`` known now (a constant, a closure's string): decided, a
        constant; None for any other test."""
        if not (isinstance(node.ops[0], (gast.In, gast.NotIn)) and isinstance(right, ir.Dct)):
            return None
        key = self.settled(left)
        known = self.outside_data(key) if isinstance(key, ir.Free) else None
        key = ir.Const(known[0]) if known is not None else key  # (a closure's name)
        if not isinstance(key, ir.Const):
            return None
        return ir.Const((key.value in right.keys) == isinstance(node.ops[0], gast.In))

    def update_dict(self: Lowerer, stmt: Any, call: gast.Call) -> bool:
        """``d.update(other)`` / ``d.update(k=v, **other)`` of a dict built key by key, from
        dicts known key by key: the next value of ``d`` (True where lowered here)."""
        func = call.func
        if not (
            isinstance(func, gast.Attribute)
            and func.attr == "update"
            and isinstance(func.value, gast.Name)
            and func.value.id in _static_dicts(self.node)
            and isinstance(self.env.get(func.value.id), ir.Dct)
            and len(call.args) <= 1
        ):
            return False
        name = func.value.id
        self.refuse_key_writes_in_blocks(name, stmt)
        base = self.env[name]
        assert isinstance(base, ir.Dct)
        entries = dict(zip(base.keys, base.values))
        for arg in call.args:
            given = self.expr(arg, None, name)
            if not isinstance(given, ir.Dct):
                self.refuse(arg, f"updating the dict `{name}` from a dict adgen does not know "
                            "key by key here", "update it key by key")  # fmt: skip
            entries.update(zip(given.keys, self.kept_items(given, name).values))
        entries.update(
            (k, self.kept_items(a, name)) for k, a in self.call_keywords(call, False, name)
        )
        self.env[name] = ir.Dct(tuple(entries), tuple(entries.values()))
        return True

    def known_items_call(
        self: Lowerer, fn: Any, args: list[Any], kwargs: list[tuple[str, Any]]
    ) -> ir.Atom | None:
        """``zip(...)`` of sequences known now (``zip(*pairs)``, ``strict=`` too): the tuple
        of their items' tuples; ``dict(pairs)`` of such pairs with string keys known now
        (``dict(zip(kwkeys, args[n:]))``): the dict key by key. None for any other call."""
        if fn is zip and args and all(isinstance(a, ir.Tup) for a in args):
            options = {k: self.outside_data(a) for k, a in kwargs}
            if set(options) - {"strict"} or None in options.values():
                return None
            lengths = {len(a.items) for a in args}
            strict = options.get("strict") or (False,)
            if strict[0] and len(lengths) > 1:
                return None  # (Python raises when it runs)
            return ir.Tup(tuple(ir.Tup(items) for items in zip(*(a.items for a in args))))
        if fn is dict and len(args) == 1 and not kwargs and isinstance(args[0], ir.Tup):
            pairs = args[0].items
            if all(
                isinstance(p, ir.Tup)
                and len(p.items) == 2
                and isinstance(p.items[0], ir.Const)
                and isinstance(p.items[0].value, str)
                for p in pairs
            ):
                keys = tuple(p.items[0].value for p in pairs)  # type: ignore[union-attr]
                values = tuple(p.items[1] for p in pairs)  # type: ignore[union-attr]
                if len(set(keys)) == len(keys):
                    return ir.Dct(keys, values)
        return None

    def refuse_key_writes_in_blocks(self: Lowerer, name: str, stmt: Any) -> None:
        """Refuse a write of ``name``'s keys in a loop or branch decided when the code runs
        (which keys it holds after it would be known only then) -- unless the dict was made
        in the block written now (after an early return, `d = {}` then `d[k] = v` in the
        rest of the function: one path's straight-line code)."""
        if self.__dict__.get("_dict_blocks", {}).get(name) is self.block:
            return
        if self.depth != self.__dict__.get("_unrolled_depth", 0):
            self.refuse(
                stmt,
                f"writing a key of the dict `{name}` in a loop or branch decided when the code "
                "runs (which keys it holds after it would be known only then)",
                "write the keys in straight-line code, or in a loop over a tuple or list "
                "written in the function",
            )
