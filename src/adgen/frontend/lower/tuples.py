# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Tuples bound to names that if/for/while blocks rebind: one IR name an item.

A name rebound inside blocks keeps one IR name, so that every path leaves its value there;
a tuple bound to it would be a tuple value in the generated code, whose items' derivatives
adgen does not follow. Where every binding of the name gives a tuple of one structure
(``for pair in zip(u, v)``, ``state = (y, v)`` then ``state = step(state)`` in a loop,
``parts = np.hsplit(a, 2)`` in a loop), each item gets an IR name of its own instead, and the
name means the tuple of those names: ``pair[0]`` is read statically, and the derivatives are
those of plain names. (Which names may be split is read from the syntax tree:
:func:`adgen.frontend.lower.syntax._tuple_shaped`.)
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.errors import AdgenError, UnsupportedSyntaxError
from adgen.frontend.lower.calls import LocalFunction
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.statements import _returns
from adgen.frontend.lower.syntax import _tuple_shaped
from adgen.frontend.lower.tuple_lists import _split_tuple_lists
from adgen.rules import registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class TuplesMixin(LowererState):
    """Tuples bound to names that blocks rebind."""

    def tuple_result(self: Lowerer, body: list[Any], base: str) -> list[str]:
        """Where every ``return`` in ``body`` gives a tuple display of one length, a result
        name for each item (so each item keeps a derivative of its own across the branches);
        else none."""
        returns = [r for stmt in body for r in _returns(stmt)]
        lengths = {len(r.value.elts) if isinstance(r.value, gast.Tuple) else -1 for r in returns}
        if (
            len(lengths) != 1
            or -1 in lengths
            or any(isinstance(e, gast.Starred) for r in returns for e in r.value.elts)
        ):
            return []
        return [self.namer.fresh(base) for _ in range(lengths.pop())]

    def bind_split(self: Lowerer, user: str, atom: ir.Atom) -> bool:
        """Bind ``user``, a name rebound inside blocks, to a tuple (or dict) atom as one IR
        name per item, if every binding of it gives a tuple of one structure (the first
        binding lowered fixes it): ``for pair in zip(u, v)``, ``state = (y, v)`` before a loop
        and ``state = step(state)`` in it. Items are read statically (``pair[0]``), so their
        derivatives are those of plain names. False (nothing done) where ``user`` is not such
        a name."""
        template = self.splits.get(user)
        if template is None:
            if self.tuple_shaped is None or user not in self.tuple_shaped:
                # (again for a name not found: a comprehension's variable renamed since)
                self.tuple_shaped = _tuple_shaped(self.node, self.call_length)
            length = self.tuple_shaped.get(user, -1)
            fits = isinstance(atom, ir.Dct) or (
                isinstance(atom, ir.Tup) and length in (None, len(atom.items))
            )
            if length == -1 or not fits:
                self.splits[user] = False
                return False
            template = self.splits[user] = self.split_template(self.multi[user], atom)
        if template is False or template is True:
            return False
        assert not isinstance(template, bool)
        if not _same_structure(template, atom):
            self.refuse(
                self.current,
                f"binding `{user}` to values of another structure than its first binding "
                "(adgen gives a tuple bound to a name that an if/for/while block rebinds one "
                "name an item, so every binding must be a tuple of the same length)",
                "use a name of its own for each kind of value",
            )
        leaves = {v for v in ir.atom_vars(template)}
        if leaves & set(ir.atom_vars(atom)):
            atom = self.kept_apart(atom)  # `pair = (pair[1], pair[0])`: read both items first
        self.copy_items(template, atom)
        self.env[user] = template
        return True

    def call_length(self: Lowerer, call: Any) -> int | None:
        """The length of the tuple a call gives, where its function shows it: a function with
        several results (``np.hsplit``: None, counted when lowering), one of the user's whose
        every ``return`` is a tuple display; -1 where it certainly gives no tuple (a NumPy
        function of one result, a method of a value); None where adgen cannot tell."""
        try:
            ok, fn = self.static_object(call.func)
        except AdgenError:
            return -1
        if not ok:
            return -1
        if fn is tuple:  # (its rule is a list's: for a list known only when the code runs)
            return None
        prim = registry.lookup(fn)
        if prim is not None:
            return None if prim.outputs is not None else -1
        if isinstance(fn, LocalFunction):
            definition = fn.node
        elif isinstance(fn, types.FunctionType):
            try:
                definition = self.callee(fn, call)[0].node
            except AdgenError:
                return -1
        else:
            return -1
        _split_tuple_lists(definition)  # (its returns as they are lowered: `return xs[-1]`)
        returns = [r.value for r in _returns_of(definition)]
        lengths = {
            len(r.elts) if isinstance(r, gast.Tuple) else None if isinstance(r, gast.Dict) else -1
            for r in returns
        }
        if -1 in lengths:
            return -1
        return lengths.pop() if len(lengths) == 1 else -1

    def split_template(self: Lowerer, base: str, atom: ir.Atom) -> ir.Atom:
        """One new IR name per item of the tuple (or dict) atom, nested as it is."""
        if isinstance(atom, ir.Tup):
            items = [self.split_template(f"{base}_{k}", a) for k, a in enumerate(atom.items)]
            return ir.Tup(tuple(items), kind=atom.kind)
        if isinstance(atom, ir.Dct):
            parts = [self.split_template(f"{base}_{k}", a) for k, a in zip(atom.keys, atom.values)]
            return ir.Dct(atom.keys, tuple(parts))
        name = self.namer.fresh(base)
        self.split_leaves.add(name)
        self.rebound_names.add(name)
        return ir.Var(name)

    def copy_items(self: Lowerer, template: ir.Atom, atom: ir.Atom) -> None:
        """Copy each item of ``atom`` into its name of ``template``."""
        if isinstance(template, ir.Tup) and isinstance(atom, ir.Tup):
            for t, a in zip(template.items, atom.items):
                self.copy_items(t, a)
        elif isinstance(template, ir.Dct) and isinstance(atom, ir.Dct):
            for t, a in zip(template.values, atom.values):
                self.copy_items(t, a)
        else:
            assert isinstance(template, ir.Var)
            self.copy(template.name, atom)

    def named_tuple(self: Lowerer, node: gast.Call, cls: type, hint: str) -> ir.Atom:
        """``R(stat, p)`` of a named tuple's class: a tuple of its items (read by index,
        unpacked, or by field name: ``r.stat``, :meth:`named_field`)."""
        fields: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
        args = self.call_arguments(node, False, hint)
        given = dict(zip(fields, args))
        for k, v in self.call_keywords(node, False, hint):
            if k not in fields or k in given or len(args) > len(fields):
                self.refuse(node, f"these arguments of {cls.__name__}", "check the call")
            given[k] = v
        defaults = getattr(cls, "_field_defaults", {})
        items: list[ir.Atom] = []
        for f in fields:
            if f in given:
                items.append(given[f])
            elif f in defaults and isinstance(defaults[f], (type(None), bool, int, float, str)):
                items.append(ir.Const(defaults[f]))
            else:
                self.refuse(node, f"{cls.__name__} without `{f}`", "pass every field")
        key = f"namedtuple {cls.__module__}.{cls.__qualname__} {id(cls)}"
        self.root.__dict__.setdefault("_named_tuples", {})[key] = cls
        return ir.Tup(tuple(items), kind=key)

    @staticmethod
    def named_tuple_class(cls: Any) -> bool:
        """Is ``cls`` a named tuple's class (``collections.namedtuple``,
        ``typing.NamedTuple``) whose instances are made by the ``__new__`` Python writes for
        it (not one of its own)?"""
        if not (isinstance(cls, type) and issubclass(cls, tuple)):
            return False
        made = getattr(cls.__new__, "__globals__", {}).get("_tuple_new")
        return isinstance(getattr(cls, "_fields", None), tuple) and made is tuple.__new__

    def named_field(self: Lowerer, value: ir.Atom, field: str) -> ir.Atom | None:
        """``r.stat`` of a named tuple made here (:meth:`named_tuple`): that item."""
        if not (isinstance(value, ir.Tup) and value.kind.startswith("namedtuple ")):
            return None
        cls = self.root.__dict__.get("_named_tuples", {}).get(value.kind)
        fields = getattr(cls, "_fields", ())
        return value.items[fields.index(field)] if field in fields else None

    def unpack(self: Lowerer, target: Any, atom: ir.Var | ir.Free) -> None:
        """``a, b = v`` of a name: of a list grown by appends whose items adgen knows
        (``out`` a helper returned), those items, one a name (``x, scale = promote(x,
        scale)``: ``scale`` is still the ``None`` appended); else read by index."""
        known = self.known_list(atom) if isinstance(atom, ir.Var) else None
        if known is not None and len(known) == len(target.elts):
            self.bind_target(target, ir.Tup(tuple(self.kept_apart(a) for a in known)))
            return
        self.unpack_by_index(target, atom)

    def kept_apart(self: Lowerer, atom: ir.Atom) -> ir.Atom:
        """``atom``, through a copy if it is a name that blocks rebind (so that binding that
        name again does not change it)."""
        if isinstance(atom, ir.Tup):
            return ir.Tup(tuple(self.kept_apart(a) for a in atom.items))
        if isinstance(atom, ir.Var) and (
            atom.name in self.multi.values() or atom.name in self.split_leaves
        ):
            temp = self.namer.fresh(atom.name)
            self.copy(temp, atom)
            return ir.Var(temp)
        return atom

    def unpack_by_index(self: Lowerer, target: Any, atom: ir.Var | ir.Free) -> None:
        """``a, (b, c) = v`` of an array (its rows) or a list: Python iterates ``v``, so its
        length must be the number of names; the items are read by index, all before any name
        is bound (``a, b = b`` reads both items of the old ``b``)."""
        size = self.call_prim(len, [atom], "n")
        fits = self.call_prim(registry.operator.eq, [size, ir.Const(len(target.elts))], "fits")
        message = f"wrong number of values to unpack (expected {len(target.elts)})"
        error = (("error", ir.Const(message)),)
        self.block.append(ir.Assign((), registry.ASSERT, (fits,), error, self.line))
        getitem = registry.lookup(registry.operator.getitem)
        assert getitem is not None
        read: list[tuple[Any, str, bool]] = []
        for k, t in enumerate(target.elts):
            # a name whose IR name is not the value's own takes the item directly
            direct = isinstance(t, gast.Name) and self.multi.get(t.id) != getattr(
                atom, "name", None
            )
            name = self.new_name(t.id) if direct else self.namer.fresh("item")
            self.block.append(ir.Assign((name,), getitem, (atom, ir.Const(k)), (), self.line))
            self.producers[name] = getitem
            read.append((t, name, direct))
        for t, name, direct in read:
            if direct:
                self.bind(t.id, name, ir.Var(name))
            else:
                self.bind_target(t, ir.Var(name))

    def joined_display(
        self: Lowerer, node: Any, parts: list[ir.Atom], target: str | None, hint: str
    ) -> ir.Atom:
        """A tuple display spreading a sequence whose length is known only when the code runs
        (``(n, *x.shape[1:])``): ``rt.joined_items`` of its parts, run as written -- a shape,
        which no derivative passes; a differentiated value put in it is refused
        (:func:`adgen.middle.analysis.check_opaque_calls`)."""
        starred = next(e for e in node.elts if isinstance(e, gast.Starred))
        refusal = UnsupportedSyntaxError(
            "adgen does not support `*` of a sequence whose length is not known when adgen "
            "reads the function, in a tuple a differentiated value is put in",
            self.parsed.loc(starred),
            "spread a tuple or list written in the function, or a shape",
        )
        prim = registry.opaque_call(rt.joined_items, self.named(refusal), len(parts), ())
        return self.emit(target, hint, prim, parts, [], node)


def _same_structure(template: ir.Atom, atom: ir.Atom) -> bool:
    """Does ``atom`` have the tuples (and dicts) of ``template`` (anything at its leaves)?"""
    if isinstance(template, ir.Tup):
        return (
            isinstance(atom, ir.Tup)
            and len(atom.items) == len(template.items)
            and all(_same_structure(t, a) for t, a in zip(template.items, atom.items))
        )
    if isinstance(template, ir.Dct):
        return (
            isinstance(atom, ir.Dct)
            and atom.keys == template.keys
            and all(_same_structure(t, a) for t, a in zip(template.values, atom.values))
        )
    return True


def _returns_of(definition: Any) -> list[Any]:
    """The ``return`` statements (with a value) of a function, not of functions inside it."""
    out: list[Any] = []

    def visit(node: Any) -> None:
        for child in gast.iter_child_nodes(node):
            if isinstance(child, (gast.FunctionDef, gast.Lambda)):
                continue
            if isinstance(child, gast.Return) and child.value is not None:
                out.append(child)
            visit(child)

    visit(definition)
    return out
