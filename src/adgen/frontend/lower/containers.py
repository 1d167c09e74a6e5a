# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower the lists the function builds: appends, pops, concatenation, comprehensions.

A list literal only read is a tuple atom (:mod:`adgen.frontend.lower.expressions`); a list the
function
grows (``xs = []`` then ``xs.append(v)``, ``xs = xs + [v]``, a comprehension) is a real list in
the IR, built by appends, and ``xs.pop()`` takes its last item (adgen's own reverse-mode code
restores saved values this way).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir
from adgen.frontend.lower.jumps import _name
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.syntax import (
    _fixed_length_lists,
    _own_nodes,
    _written_at_top,
    _written_in_place,
)
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class ContainersMixin(LowererState):
    """Lists the function builds."""

    def append(self: Lowerer, stmt: Any, name: str, value: Any) -> None:
        """``xs.append(v)`` onto a list the function made (``xs = []``)."""
        if name not in self.env:
            self.refuse(stmt, f"appending to `{name}`, which is not a local list", "")
        self.check_owned(stmt, name, "append to")
        v = self.expr(value, None, name)
        self.check_item(value, v, name)
        self.hold(v)
        if not self.root.looping and not self.parsed.filename.startswith("<adgen "):
            # (outside a loop the program runs, known_list may read the item: it keeps this
            # value -- `arg` of a loop unrolled over `args`; adgen's own saves are popped)
            v = self.kept_items(v, name)
        ir_name = self.multi[name]
        base = self.env[name]
        if isinstance(base, ir.Tup):  # (a list known item by item, `[a for a in args if a
            # is not None]` read when transforming: made a real list first, as `xs = [a, b]`)
            for a in base.items:
                self.hold(a)
            base = self.real_list(ir_name, list(base.items))
        self.block.append(ir.Assign((ir_name,), registry.APPEND, (base, v), (), self.line))
        self.env[name] = ir.Var(ir_name)

    def real_list(self: Lowerer, ir_name: str, items: list[ir.Atom]) -> ir.Var:
        """``ir_name = []`` then an append of each item: a list the code builds."""
        self.block.append(ir.Assign((ir_name,), registry.LIST_NEW, (), (), self.line))
        self.producers[ir_name] = registry.LIST_NEW
        for a in items:
            self.block.append(
                ir.Assign((ir_name,), registry.APPEND, (ir.Var(ir_name), a), (), self.line)
            )
        return ir.Var(ir_name)

    def known_list(self: Lowerer, atom: ir.Atom | None) -> list[ir.Atom] | None:
        """The items of a list the function made and grew by appends in straight-line code
        so far (``out = []``, then ``out.append(a)`` in a loop over a tuple, unrolled): known
        when transforming, so ``tuple(out)`` and ``len(out)`` are read from them. None where
        it is not such a list. (No other name may hold a list appended to: :meth:`append`
        refuses that.)"""
        if not isinstance(atom, ir.Var):
            return None
        places = [(self.block, len(self.block))]
        while (outer := self.around_end(places[-1][0])) is not None:
            places.append(outer)
        flat = [s for block, end in reversed(places) for s in _straight(block[:end])]
        items: list[ir.Atom] = []
        name = atom.name
        later: set[str] = set()  # the names bound after the statement read (an item's name
        # rebound since its append means another value now: `out.append(arg)` in a loop
        # unrolled over `args`, each pass binding `arg` again)
        for stmt in reversed(flat):
            if not isinstance(stmt, ir.Assign):
                inside = ir.Function("", [], [stmt], "", 0, {}).statements()
                if any(isinstance(s, ir.Assign) and name in s.targets for s in inside):
                    return None  # (bound in a loop or a branch the program decides)
                for s in [stmt, *inside]:
                    if isinstance(s, ir.Assign):
                        later.update(s.targets)
                    elif isinstance(s, ir.For):
                        later.add(s.target)
                continue
            if name not in stmt.targets:
                later.update(stmt.targets)
                continue
            if stmt.prim is registry.LIST_NEW and not stmt.args:
                return items[::-1]
            if stmt.prim is not registry.APPEND or stmt.targets != (name,):
                return None
            if set(ir.atom_vars(stmt.args[1])) & later:
                return None
            later.update(stmt.targets)
            items.append(stmt.args[1])
            if not isinstance(stmt.args[0], ir.Var):
                return None
            name = stmt.args[0].name
        return None

    def hold(self: Lowerer, atom: ir.Atom) -> None:
        """A list now holds ``atom``'s arrays: updating one in place would change the list's
        item too (:meth:`~adgen.frontend.lower.inplace.InPlaceMixin.sharing_problem`)."""
        self.held.update(ir.atom_vars(atom))

    def check_item(self: Lowerer, node: Any, atom: ir.Atom, name: str | None = None) -> None:
        """An item of a list the function builds is one value: a tuple (or dict) of
        variables in such a list has no derivative adgen can follow (its derivative would be
        lost), so it is refused -- unless the list could be kept as one list per position
        (:mod:`adgen.frontend.lower.tuple_lists`, done before lowering); for ``name``, a list
        appended tuple displays, the refusal says which use prevented that."""
        if isinstance(atom, (ir.Tup, ir.Dct)) and any(True for _ in ir.atom_vars(atom)):
            why = ""
            problem = self.tuple_list_problems.get(name) if name is not None else None
            if problem is not None:
                where, what = problem
                line = getattr(where, "lineno", None)
                at = f", at line {self.parsed.line(where)}," if line is not None else ""
                why = (
                    f" (adgen keeps a list of tuples as one list per position when it is "
                    f"made by `{name} = []`, grown by appends of tuple displays of one length "
                    f"and only read by index, iterated, `len` or `pop`; here{at} {what})"
                )
            self.refuse(
                node,
                "a tuple of variables as an item of a list the function builds" + why,
                "append tuples `(a, b)` of one length and only read the list by index, "
                "in a `for` loop, with `len` or `pop`; or keep one list per item "
                "(`As.append(a)`, `Bs.append(b)`), or stack the values into one array: "
                "`xs.append(np.stack((a, b)))`",
            )

    def check_items(self: Lowerer, node: Any, parts: list[ir.Atom]) -> None:
        """The items of list literals joined to a list the function builds (``xs + [v]``)."""
        for p in parts:
            for a in p.items if isinstance(p, ir.Tup) else ():
                self.check_item(node, a)

    def pop(self: Lowerer, node: Any, name: str, target: str | None, hint: str) -> ir.Atom:
        """``xs.pop()`` from a list the function made: the last item, taken off the list (adgen's
        own reverse-mode code restores saved values this way)."""
        self.check_owned(node, name, "pop from")
        ir_name = self.multi[name]
        v = target if target is not None else self.namer.fresh(hint)
        # `v = xs.pop()` binds a name (in adgen's reverse code: puts back v's saved value);
        # `y[i] = xs.pop()` or `f(xs.pop())` goes through a temporary
        named: tuple[tuple[str, ir.Atom], ...] = ()
        if target is not None:
            named = (("named", ir.Const(True)),)
            if name in self.restoring:
                named += (("restores", ir.Const(True)),)
        self.block.append(
            ir.Assign((ir_name, v), registry.POP, (self.env[name],), named, self.line)
        )
        self.env[name] = ir.Var(ir_name)
        self.producers[v] = registry.POP
        return ir.Var(v)

    def list_names(self: Lowerer, finder: Any) -> set[str]:
        """``finder`` of every node of the function, computed once per function."""
        memo = self.__dict__.setdefault("_list_names", {})
        key = (finder, id(self.node))
        if key not in memo:
            memo[key] = finder(_own_nodes(self.node))  # (a nested def's names are its own)
        result: set[str] = memo[key]
        return result

    def note_param_tuples(self: Lowerer, bound: dict[str, Any]) -> None:
        """The tuple arguments' items, for ``args = list(args)`` of a list whose length
        stays (:meth:`assign_fixed_list`)."""
        self.__dict__["_param_tuples"] = {p: a for p, a in bound.items() if isinstance(a, ir.Tup)}

    def assign_fixed_list(self: Lowerer, target: Any, value: Any) -> bool:
        """``name = [a, b]`` or ``name = list(t)`` (``t`` a tuple of known length) of a list
        whose length never changes (:func:`.syntax._fixed_length_lists`): its length noted,
        so that ``f(*name)`` spreads its items. A list later written by index is lowered here
        (True): known item by item where every write is a statement of the body itself (an
        :class:`ir.Tup`, see :meth:`assign_list_item`), else a new list of the items."""
        if not isinstance(target, gast.Name) or target.id not in _fixed_length_lists(self.node):
            return False
        if isinstance(value, gast.List):
            self.__dict__.setdefault("_fixed_lists", {})[target.id] = len(value.elts)
            if not self.written_item_by_item(target.id):
                return False
            made: Any = ir.Tup(tuple(self.expr(e, None, target.id) for e in value.elts))
        else:
            made = self.env.get(value.args[0].id)
            if value.args[0].id == target.id:  # `args = list(args)`: the argument's tuple
                made = self.__dict__.get("_param_tuples", {}).get(target.id, made)
        if not isinstance(made, ir.Tup):
            return False
        self.__dict__.setdefault("_fixed_lists", {})[target.id] = len(made.items)
        if target.id not in self.list_names(_written_in_place):
            return False
        if self.written_item_by_item(target.id):  # known item by item (assign_list_item)
            self.__dict__.setdefault("_item_lists", set()).add(target.id)
            self.env[target.id] = self.kept_items(ir.Tup(made.items, kind="list"), target.id)
            self.bound.add(target.id)
            return True
        ir_name = self.new_name(target.id)
        self.build_list(ir_name, [made])
        self.bound.add(target.id)
        self.env[target.id] = ir.Var(ir_name)
        return True

    def written_item_by_item(self: Lowerer, name: str) -> bool:
        """Is the fixed-length list ``name`` written by index, each write a statement of the
        function's body itself?"""
        return name in self.list_names(_written_in_place) and name in _written_at_top(self.node)

    def assign_container(self: Lowerer, stmt: gast.Assign) -> bool:
        """An assignment lowered here (True): of a dict known key by key
        (:meth:`assign_static_dict`), of a list whose length stays (:meth:`assign_fixed_list`)."""
        if len(stmt.targets) != 1:
            return False
        target = stmt.targets[0]
        return (
            self.assign_static_dict(target, stmt.value, None, stmt)
            or self.assign_fixed_list(target, stmt.value)
            or self.assign_list_item(target, stmt.value)
        )

    def assign_list_item(self: Lowerer, target: Any, value: Any) -> bool:
        """``xs[k] = v`` of a list made of a tuple's items whose every item write is a
        statement of the function's body itself (:func:`.syntax._written_at_top`): at an index
        known now, the list is known item by item (an :class:`ir.Tup`, each write a new one);
        at another, it is made a list here, and written as any (False)."""
        if not (
            isinstance(target, gast.Subscript)
            and isinstance(target.value, gast.Name)
            and target.value.id in self.__dict__.get("_item_lists", ())
        ):
            return False
        name = target.value.id
        base = self.env.get(name)
        if not isinstance(base, ir.Tup):
            return False
        index = self.settled(self.expr(target.slice, None, name))
        here = (self.block, len(self.block))
        k = self.static_int(index, here) if not isinstance(index, ir.Tup) else None
        if k is None or not -len(base.items) <= k < len(base.items):
            ir_name = self.new_name(name)  # (straight-line code: made once, here)
            self.build_list(ir_name, [base])
            self.env[name] = ir.Var(ir_name)
            self.__dict__["_item_lists"].discard(name)
            return False
        items = list(base.items)
        items[k] = self.kept_items(self.expr(value, None, name), name)
        self.env[name] = ir.Tup(tuple(items), kind="list")
        return True

    def fixed_list_items(self: Lowerer, node: Any, seq: ir.Atom, hint: str) -> ir.Atom:
        """``*name`` of a list of a length known now (:meth:`note_fixed_list`): its items,
        each read from it; else ``seq`` as it is."""
        lengths = self.__dict__.get("_fixed_lists", {})
        if not (isinstance(node, gast.Name) and node.id in lengths) or isinstance(seq, ir.Tup):
            return seq
        getitem = registry.lookup(registry.operator.getitem)
        assert getitem is not None
        items = [
            self.emit(None, hint, getitem, [seq, ir.Const(k)], [], node)
            for k in range(lengths[node.id])
        ]
        return ir.Tup(tuple(items))

    def new_list(self: Lowerer, name: str, items: list[Any]) -> None:
        """``xs = [a, b]`` for a list later appended to: a real list."""
        ir_name = self.new_name(name)
        atoms = [self.expr(e, None, name) for e in items]
        for e, a in zip(items, atoms):
            self.check_item(e, a, name)
            self.hold(a)
        self.env[name] = self.real_list(ir_name, atoms)
        self.bound.add(name)

    def repeated_list(self: Lowerer, name: str, value: Any) -> None:
        """``xs = [a, b] * n`` for a list later written by index (``xs[t] = v``): a real list,
        built by appending the items ``n`` times (the same arrays, as Python repeats them)."""
        left = isinstance(value.left, gast.List)
        display, count = (value.left, value.right) if left else (value.right, value.left)
        ir_name = self.new_name(name)
        atoms = [self.expr(e, None, name) for e in display.elts]
        for e, a in zip(display.elts, atoms):
            self.check_item(e, a)
            self.hold(a)
        n = self.expr(count, None, "n")
        loop = self.call_prim(range, [n], "loop")
        self.block.append(ir.Assign((ir_name,), registry.LIST_NEW, (), (), self.line))
        self.producers[ir_name] = registry.LIST_NEW
        body: list[ir.Stmt] = [
            ir.Assign((ir_name,), registry.APPEND, (ir.Var(ir_name), a), (), self.line)
            for a in atoms
        ]
        self.block.append(ir.For(self.namer.fresh("k"), loop, body, self.line))
        self.bound.add(name)
        self.env[name] = ir.Var(ir_name)

    # -- list concatenation ---------------------------------------------------------------
    # `xs + [v]` of lists: a list literal is a tuple atom (its items), a list the function
    # builds (`xs = []`, appends, comprehensions) a variable. A concatenation with at least one
    # such list is a new list built by appends -- the items of a list variable copied by a loop
    # that reads them by index -- so its derivatives are those of appends and indexing.
    # `xs = xs + [v]` (and `xs += [v]`) on a list no other name sees appends in place.

    def is_list(self: Lowerer, atom: ir.Atom | None) -> bool:
        """Is this atom a list the function builds (``xs = []``, appends, a comprehension)?"""
        return isinstance(atom, ir.Var) and self.producers.get(atom.name) is registry.LIST_NEW

    def concatenation(
        self: Lowerer, parts: list[ir.Atom], target: str | None, hint: str, node: Any
    ) -> ir.Atom | None:
        """``a + b`` of sequences: a tuple atom when both are literals (items known), a new list
        when one is a list variable; None when they are not both sequences (numbers, arrays)."""
        if not all(isinstance(p, ir.Tup) or self.is_list(p) for p in parts):
            return None
        if all(isinstance(p, ir.Tup) for p in parts):
            return ir.Tup(tuple(a for p in parts if isinstance(p, ir.Tup) for a in p.items))
        self.check_items(node, parts)
        result = target if target is not None else self.namer.fresh(hint)
        self.build_list(result, parts)
        return ir.Var(result)

    def build_list(self: Lowerer, result: str, parts: list[ir.Atom]) -> None:
        """``result = [*parts[0], *parts[1], ...]`` as a new list, appended item by item."""
        # a part that is the list being rebound is read through a copy made first
        parts = [self.copied_list(p) if p == ir.Var(result) else p for p in parts]
        self.block.append(ir.Assign((result,), registry.LIST_NEW, (), (), self.line))
        self.producers[result] = registry.LIST_NEW
        for p in parts:
            self.extend_list(result, p)

    def copied_list(self: Lowerer, part: ir.Atom) -> ir.Var:
        copy = self.namer.fresh("items")
        self.build_list(copy, [part])
        return ir.Var(copy)

    def extend_list(self: Lowerer, result: str, part: ir.Atom) -> None:
        """Append the items of ``part`` (a tuple atom, or a list variable read by index in a
        loop) to the list ``result``."""
        if isinstance(part, ir.Tup):
            for a in part.items:
                self.hold(a)
                self.block.append(
                    ir.Assign((result,), registry.APPEND, (ir.Var(result), a), (), self.line)
                )
            return
        if part == ir.Var(result):  # xs += xs: read the items through a copy
            part = self.copied_list(part)
        n = self.call_prim(len, [part], "n")
        loop = self.call_prim(range, [n], "loop")
        k, item = self.namer.fresh("k"), self.namer.fresh("item")
        getitem = registry.lookup(registry.operator.getitem)
        assert getitem is not None
        self.producers[item] = getitem
        self.bases[item] = {part.name} if isinstance(part, ir.Var) else set()
        self.hold(ir.Var(item))
        body: list[ir.Stmt] = [
            ir.Assign((item,), getitem, (part, ir.Var(k)), (), self.line),
            ir.Assign((result,), registry.APPEND, (ir.Var(result), ir.Var(item)), (), self.line),
        ]
        self.block.append(ir.For(k, loop, body, self.line))

    def assign_concatenation(self: Lowerer, name: str, value: Any, augmented: bool) -> None:
        """``xs = a + b`` where a or b is a list literal: ``xs`` is a real list (it may be
        appended to later). ``xs = xs + [v]`` and ``xs += [v]`` append in place when no other
        name sees the list; ``xs += [v]`` on a list another name sees is refused (Python
        extends that list)."""
        ir_name = self.multi[name]
        left = self.expr(value.left, None, name)
        right = self.expr(value.right, None, name)
        sequences = all(isinstance(p, ir.Tup) or self.is_list(p) for p in (left, right))
        if sequences:
            self.check_items(value, [left, right])
        else:
            add = registry.lookup(registry.operator.add)
            assert add is not None
            self.bind(name, ir_name, self.emit(ir_name, name, add, [left, right], [], value))
            return
        old = self.env.get(name)
        if (
            isinstance(value.left, gast.Name)
            and value.left.id == name
            and self.is_list(old)
            and old == ir.Var(ir_name)
        ):
            why = self.ownership_problem(name, "append to")
            if augmented and why:
                self.check_owned(value, name, "extend")
            if not why:
                self.extend_list(ir_name, right)
                self.bound.add(name)
                return
        self.build_list(ir_name, [left, right])
        self.env[name] = ir.Var(ir_name)
        self.bound.add(name)

    def arrays_of_lists(
        self: Lowerer,
        fn: Any,
        prim: registry.Primitive,
        args: list[ir.Atom],
        kwargs: list[tuple[str, ir.Atom]],
        node: Any,
        hint: str,
    ) -> tuple[list[ir.Atom], list[tuple[str, ir.Atom]]]:
        """A NumPy function given a list (a literal holding variables, a list the function
        built) where it takes an array (``np.sum([a * a, b])``, ``np.mean(xs)``) converts it
        with ``np.asarray`` first: so does adgen, with ``np.array``, whose rule differentiates
        the items. Functions of a sequence of arrays (``np.stack``) take the list as it is."""
        if prim.sequence is not None or prim.lists or not _numpy_function(fn):
            return args, kwargs

        def converted(atom: ir.Atom) -> ir.Atom:
            if not (
                (isinstance(atom, ir.Tup) and any(True for _ in ir.atom_vars(atom)))
                or self.is_list(atom)
            ):
                return atom
            array = registry.lookup(registry.np.array)
            assert array is not None
            rows = self.array_rows(atom, node, hint) if isinstance(atom, ir.Tup) else atom
            return self.emit(None, hint, array, [rows], [], node)

        params = prim.params
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        args = [
            converted(a)
            if k < len(params)
            and params[k].kind in positional
            and params[k].name in prim.diff_params
            else a
            for k, a in enumerate(args)
        ]
        kwargs = [(k, converted(a) if k in prim.diff_params else a) for k, a in kwargs]
        return args, kwargs

    def dict_comprehension(self: Lowerer, node: gast.DictComp, hint: str) -> ir.Atom:
        """``{k: kwds[k] for k in kwds if k in PARAMS[metric]}``, ``{k: f(v) for k, v in
        d.items()}`` over a dict whose keys are known (or a tuple of constants), with
        conditions and keys known now: the dict it makes, item by item. Anything else is
        refused."""
        gen = node.generators[0] if len(node.generators) == 1 else None
        why = "dict comprehensions over a dict whose keys adgen does not know when transforming"
        if gen is None or getattr(gen, "is_async", False):
            self.refuse(node, why, "build a tuple or list of the values, or an array")
        pairs = isinstance(gen.iter, gast.Call) and not gen.iter.args and not gen.iter.keywords
        pairs = pairs and isinstance(gen.iter.func, gast.Attribute)
        source = self.expr(gen.iter.func.value if pairs else gen.iter, None, hint)
        if pairs and not (isinstance(source, ir.Dct) and gen.iter.func.attr == "items"):
            self.refuse(node, why, "write the dict out, key by key")
        items: list[Any]
        if isinstance(source, ir.Dct):
            items = [
                (ir.Const(k), v) if pairs else ir.Const(k)
                for k, v in zip(source.keys, source.values)
            ]
        elif isinstance(source, ir.Tup) and all(isinstance(a, ir.Const) for a in source.items):
            items = list(source.items)
        else:
            self.refuse(node, why, "write the dict out, key by key")
        names = [n.id for n in gast.walk(gen.target) if isinstance(n, gast.Name)]
        saved = {n: self.env.get(n) for n in names}
        keys: list[Any] = []
        values: list[ir.Atom] = []
        try:
            for item in items:
                parts = item if isinstance(item, tuple) else (item,)
                targets = gen.target.elts if isinstance(gen.target, gast.Tuple) else [gen.target]
                if len(targets) != len(parts) or not all(isinstance(t, gast.Name) for t in targets):
                    self.refuse(gen.target, why, "write the dict out, key by key")
                for t, part in zip(targets, parts):
                    self.env[t.id] = part  # (the comprehension's own names)
                if not all(self.kept_item(cond, hint) for cond in gen.ifs):
                    continue
                key = self.settled(self.expr(node.key, None, hint))
                if not isinstance(key, ir.Const) or key.value in keys:
                    self.refuse(node.key, why, "write the dict out, key by key")
                keys.append(key.value)
                values.append(self.expr(node.value, None, hint))
        finally:
            for n, atom in saved.items():
                if atom is None:
                    self.env.pop(n, None)
                else:
                    self.env[n] = atom
        return ir.Dct(tuple(keys), tuple(values))

    def kept_item(self: Lowerer, cond: Any, hint: str) -> bool:
        """The condition of a dict comprehension's item, known now (else refused)."""
        test = self.settled(self.expr(cond, None, hint))
        if not isinstance(test, ir.Const):
            self.refuse(
                cond,
                "a condition of a dict comprehension that adgen does not know when transforming",
                "write the dict out, key by key",
            )
        return bool(test.value)

    def comprehension(self: Lowerer, node: Any, target: str | None, hint: str) -> ir.Atom:
        """``[f(x) for x in seq if c]`` is a loop appending to a new list; over a tuple of
        known length (``[g(a) for a in args]`` of ``*args``), with conditions decided when
        transforming, the list of its items, as a list display is."""
        gen = node.generators[0] if len(node.generators) == 1 else None
        if (
            isinstance(node, gast.ListComp)
            and gen is not None
            and isinstance(gen.iter, gast.Name)
            and isinstance(self.env.get(gen.iter.id), ir.Tup)
        ):
            items = self.unrolled(node)
            if items is not None:
                return ir.Tup(tuple(items), kind="list")
        if len(node.generators) != 1:
            self.refuse(node, "comprehensions with several `for`", "write the loops out")
        gen = node.generators[0]
        if getattr(gen, "is_async", 0):
            self.refuse(node, "async comprehensions")
        # the comprehension's variables are its own: fresh names (never a name of the
        # function's own: in an inlined function, the IR namer's `k_1` may be a local's)
        renames = {
            n.id: self.user_namer.fresh(n.id)
            for n in gast.walk(gen.target)
            if isinstance(n, gast.Name)
        }
        for fresh_name in renames.values():
            self.multi[fresh_name] = fresh_name
            self.rebound_names.add(fresh_name)
        parts = [node.elt, *gen.ifs]
        for part in [gen.target, *parts]:
            for n in gast.walk(part):
                if isinstance(n, gast.Name) and n.id in renames:
                    n.id = renames[n.id]
        result = target if target is not None else self.namer.fresh(hint)
        user = self.user_namer.fresh("items") if target is None else target
        self.multi[user] = result  # (a list, bound by its appends only)
        append = gast.Expr(
            value=gast.Call(
                func=gast.Attribute(value=_name(user), attr="append", ctx=gast.Load()),
                args=[node.elt],
                keywords=[],
            )
        )
        gast.copy_location(append, node)
        gast.copy_location(append.value, node)
        body: list[Any] = [append]
        for cond in reversed(gen.ifs):
            body = [gast.copy_location(gast.If(test=cond, body=body, orelse=[]), node)]
        loop = gast.copy_location(
            gast.For(target=gen.target, iter=gen.iter, body=body, orelse=[], type_comment=None),
            node,
        )
        self.block.append(ir.Assign((result,), registry.LIST_NEW, (), (), self.line))
        self.producers[result] = registry.LIST_NEW
        self.env[user] = ir.Var(result)
        self.bound.add(user)
        self.lower_for(loop)
        return ir.Var(result)


def _numpy_function(fn: Any) -> bool:
    """A function of NumPy's (``np.sum``, ``np.linalg.norm``, a ufunc), or of SciPy's that
    reads its arrays alike (``scipy.signal.lfilter([alpha], [1.0, alpha - 1.0], x)``,
    ``scipy.linalg``): its array parameters take anything ``np.asarray`` takes."""
    if isinstance(fn, np.ufunc):
        return True
    module = getattr(fn, "__module__", None) or ""
    return module == "numpy" or module.startswith(_ARRAY_READERS)


# the modules of functions whose array parameters take lists (NumPy's, and SciPy's own)
_ARRAY_READERS = ("numpy.", "scipy.signal.", "scipy.linalg.")


def _straight(block: list[ir.Stmt]) -> list[ir.Stmt]:
    """The statements of ``block`` with those of the ``if True:`` blocks a loop unrolled
    when transforming in their place."""
    out: list[ir.Stmt] = []
    for stmt in block:
        if isinstance(stmt, ir.If) and stmt.test == ir.Const(True) and not stmt.orelse:
            out.extend(_straight(stmt.body))
        else:
            out.append(stmt)
    return out
