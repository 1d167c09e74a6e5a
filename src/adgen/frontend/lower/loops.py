# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower ``for`` and ``while`` loops.

``for`` over ``range(...)`` (or ``reversed(range(...))``), over an array or a sequence (its
rows, read by index), ``enumerate`` and ``zip``; a loop over a tuple or list known when
transforming is unrolled; ``adgen.checkpoint(...)`` around the iterable marks the loop for
checkpointing. ``break`` and ``continue`` are already flags here
(:mod:`adgen.frontend.lower.jumps`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeAlias

import gast
import numpy as np

from adgen import ir
from adgen.checkpointing import checkpoint
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.syntax import _is_pop, _static_dicts, _written_in_place
from adgen.pyast import walk
from adgen.rules import registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


# what a loop reads by position, as Python iterates it (anything else is made a list first)
_BY_POSITION = (list, tuple, np.ndarray, str, bytes, range)


def _few_constants(value: Any, ordered: bool) -> bool:
    """A few constants (strings, numbers) in a tuple, a list or a dict's keys -- or, where
    their order changes nothing (``ordered`` False), a set: what a loop writing a dict's
    keys may be unrolled over."""
    kinds = (tuple, list, dict) if ordered else (tuple, list, dict, set, frozenset)
    return (
        isinstance(value, kinds)
        and len(value) <= 64
        and all(type(v) in (str, int, float, bool) for v in value)
    )


def _writes_keys_only(body: list[Any], dicts: frozenset[str]) -> bool:
    """Does ``body`` only write keys of the dicts ``dicts`` (``d[k] = v``), those under an
    ``if`` too whose test calls nothing that could do more than read (``if getattr(self, k)
    is not None:``), nothing reading them? Then the order of its passes changes nothing but
    the keys' order (a set's order may differ from one process to the next)."""
    targets = {
        id(s.targets[0].value)
        for s in (n for stmt in body for n in gast.walk(stmt))
        if isinstance(s, gast.Assign) and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Subscript)
    }  # fmt: skip
    if any(
        isinstance(n, gast.Name) and n.id in dicts and id(n) not in targets
        for stmt in body
        for n in gast.walk(stmt)
    ):
        return False  # (a dict read in the loop: `if len(params) < 2:` may see the order)
    for stmt in body:
        if isinstance(stmt, gast.If):
            calls = [n for n in gast.walk(stmt.test) if isinstance(n, gast.Call)]
            if stmt.orelse or not all(
                isinstance(c.func, gast.Name) and c.func.id in _READING_BUILTINS for c in calls
            ):
                return False
            if not _writes_keys_only(stmt.body, dicts):
                return False
            continue
        if not (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Subscript)
            and isinstance(stmt.targets[0].value, gast.Name)
            and stmt.targets[0].value.id in dicts
        ):
            return False
    return True


# builtins a test of a loop writing a dict's keys may call: they read, nothing else
_READING_BUILTINS = frozenset({"getattr", "hasattr", "isinstance", "callable", "len"})


@dataclass(frozen=True)
class _Counter:
    """enumerate's count in a loop's pattern (``start`` added to the step's number)."""

    start: ir.Atom | None


# What one step of a loop binds: the position of a sequence read by index, enumerate's count,
# or a tuple of those (enumerate and zip, nested in any way).
_Pattern: TypeAlias = "int | _Counter | tuple[_Pattern, ...]"


class LoopsMixin(LowererState):
    """``for`` and ``while`` loops."""

    def lower_while(self: Lowerer, stmt: Any) -> None:
        """``while``: the statements computing its test are a block of their own, run before
        each iteration."""
        if stmt.orelse:
            self.refuse(stmt, "`else` clauses on loops", "move that code after the loop")
        line = self.key(stmt)
        saved, self.block = self.block, []
        self.depth += 1  # (the test runs before each iteration: it is in a block)
        test = self.expr(stmt.test, None, "cond")
        self.depth -= 1
        test_body, self.block = self.block, saved
        self.root.looping += 1
        try:
            body = self.sub_block(stmt.body)
        finally:
            self.root.looping -= 1
        self.block.append(ir.While(test_body, test, body, line))

    def reversed_range(self: Lowerer, it: Any) -> ir.Atom | None:
        """The range of ``reversed(range(...))`` or ``reversed(r)`` with ``r = range(...)``."""
        if not (self.is_call_to(it, reversed) and len(it.args) == 1 and not it.keywords):
            return None
        arg = it.args[0]
        if self.is_call_to(arg, range):
            return self.expr(arg, None, "loop")
        if isinstance(arg, gast.Name) and arg.id in self.env:
            atom = self.env[arg.id]
            if self.is_range(atom):
                return atom
        return None

    def backwards(self: Lowerer, it: Any, hint: str) -> ir.Atom | None:
        """``reversed(range(...))`` as ``rt.backwards(range(...))``: a range (it has a length
        and items, which Python's ``reversed`` object has not), or None for another ``it``."""
        backwards = self.reversed_range(it)
        if backwards is None:
            return None
        prim = registry.lookup(rt.backwards)
        assert prim is not None
        return self.emit(None, hint, prim, [backwards], [], it)

    def lower_for(self: Lowerer, stmt: Any) -> None:
        """``for`` over ``range(...)``; over arrays and sequences (rows), ``enumerate`` and
        ``zip`` nested in any way, a loop over ``range(len(...))`` (the shortest) that reads the
        items by index; the target unpacks them, nested in any way (``for i, (a, b) in
        enumerate(zip(u, v)):``)."""
        if self.generator_loop(stmt):  # for W, b in unpack_layers(w): a generator's items
            return
        if self.lower_static_loop(stmt):  # for layer in self.layers: functions or objects
            return
        if stmt.orelse:
            self.refuse(stmt, "`else` clauses on loops", "move that code after the loop")
        body_nodes = [n for s in stmt.body for n in gast.walk(s)]
        called, updated = _changed_in_place(body_nodes)
        lists = {n for n in updated if self.is_list(self.env.get(n))}  # (arrays: inplace.py)
        grown = _iterated_names(stmt.iter) & (called | lists)
        if grown:
            name = sorted(grown)[0]
            self.refuse(
                stmt,
                f"changing the list `{name}` (append, pop, +=) inside a loop over it (Python "
                "then iterates over the items it gains or loses)",
                f"iterate over a copy (`for x in list({name}):`), or over `range(n)`",
            )
        line = self.key(stmt)
        it, target = stmt.iter, stmt.target
        checkpointed, every_node, it = self.checkpoint_marker(it)
        backwards = self.backwards(it, "loop")  # for i in reversed(range(n))
        pattern: _Pattern | None = None
        seqs: list[ir.Atom] = []
        counter: Any = None  # enumerate's count when it is the loop's own variable
        if self.is_call_to(it, range) or backwards is not None:
            r = backwards if backwards is not None else self.expr(it, None, "loop")
            if not isinstance(target, gast.Name):
                self.refuse(target, "unpacking a range", "use one loop variable")
            index = self.loop_variable(target.id)
        else:
            # (a loop writing keys of a dict built key by key, over a few constants known
            # now: unrolled, so that each key is known)
            self.__dict__["_keys_loop"] = self.writes_static_dict(stmt)
            try:
                pattern = self.iteration(it, seqs)
            finally:
                self.__dict__["_keys_loop"] = None
            if (
                isinstance(pattern, tuple)
                and isinstance(pattern[0], _Counter)
                and pattern[0].start is None
                and isinstance(target, (gast.Tuple, gast.List))
                and target.elts
                and isinstance(target.elts[0], gast.Name)
            ):
                counter = target.elts[0]  # for i, v in enumerate(x): i is the loop's variable
            index = self.loop_variable(counter.id if counter else self.user_namer.fresh("k"))
            seqs = self.held_sequences(stmt, seqs)
            if any(isinstance(seq, ir.Tup) for seq in seqs):
                if checkpointed:
                    self.refuse(
                        stmt.iter,
                        "adgen.checkpoint on a loop over a tuple or list (it is unrolled)",
                        "checkpoint a loop over range(...) or an array",
                    )
                self.unroll(stmt, index, seqs, pattern, counter)
                return
            length = self.call_prim(len, [seqs[0]], "n")
            for seq in seqs[1:]:
                length = self.call_prim(
                    registry.np.minimum, [length, self.call_prim(len, [seq], "n")], "n"
                )
            r = self.call_prim(range, [length], "loop")
        every = self.expr(every_node, None, "every") if every_node is not None else None
        if isinstance(every, ir.Const) and every.value is None:
            every = None
        saved, self.block = self.block, []
        self.depth += 1
        if pattern is not None:

            def read(j: int, user: str | None) -> ir.Atom:
                return self.read_item(seqs[j], ir.Var(index), user, line)

            self.current = stmt
            self.bind_items(target, pattern, read, ir.Var(index), counter)
        self.root.looping += 1
        try:
            self.lower_block(stmt.body)
        finally:
            self.root.looping -= 1
        self.depth -= 1
        body, self.block = self.block, saved
        self.block.append(ir.For(index, r, body, line, checkpointed, every))

    def iteration(self: Lowerer, it: Any, seqs: list[ir.Atom]) -> _Pattern:
        """What a loop over ``it`` binds at each step, as a pattern: the position in ``seqs``
        of a sequence read by index (its atom appended there), enumerate's count, or a tuple
        of patterns (``enumerate`` and ``zip``, nested in any way). The sequences are
        lowered in the order Python evaluates them."""
        if self.is_call_to(it, enumerate):
            starts = it.args[1:] + [kw.value for kw in it.keywords if kw.arg == "start"]
            if len(it.args) < 1 or len(starts) > 1 or any(kw.arg != "start" for kw in it.keywords):
                self.refuse(it, "this form of enumerate", "write `for i, v in enumerate(x):`")
            inner = self.iteration(it.args[0], seqs)
            start = self.expr(starts[0], None, "start") if starts else None
            if isinstance(start, ir.Const) and type(start.value) is not int:
                self.refuse(starts[0], "enumerate with a start that is not an integer")
            if isinstance(start, ir.Const) and start.value == 0:
                start = None
            return (_Counter(start), inner)
        if self.is_call_to(it, zip):
            if it.keywords or not it.args:
                self.refuse(it, "this form of zip", "write `for a, b in zip(x, y):`")
            parts: list[_Pattern] = []
            for a in it.args:
                if not isinstance(a, gast.Starred):
                    parts.append(self.iteration(a, seqs))
                    continue
                spread = self.expr(a.value, None, "seq")  # zip(*pairs): pairs of known length
                if not isinstance(spread, ir.Tup):
                    self.refuse(
                        a,
                        "`zip(*seqs)` where the number of sequences is not known when adgen "
                        "reads the function",
                        "zip sequences named one by one, or a tuple or list written in the "
                        "function",
                    )
                for item in spread.items:
                    seqs.append(item)
                    parts.append(len(seqs) - 1)
            return tuple(parts)
        if isinstance(it, gast.Starred):
            self.refuse(it, "`*args` in calls", "pass the arguments one by one")
        backwards = self.backwards(it, "seq")  # zip(a, reversed(range(n))): a range too
        seq = backwards if backwards is not None else self.expr(it, None, "seq")
        made = self.producers.get(seq.name) if isinstance(seq, ir.Var) else None
        known, value = self.known_value(seq)
        keys_loop = self.__dict__.get("_keys_loop")
        if known and keys_loop is not None and _few_constants(value, ordered=keys_loop == "any"):
            return self.sequence(ir.Tup(tuple(ir.Const(v) for v in value)), seqs)
        if known and not isinstance(value, _BY_POSITION):
            # a dict, a set, a view, a generator the function reads: what iterating it gives
            # (a dict's keys, a set's items in its order when the code runs), as a list
            listed = registry.lookup(list)
            assert listed is not None
            return self.sequence(self.emit(None, "seq", listed, [seq], [], it), seqs)
        if made is not None and made.refusal is not None:
            # what a call run as written returned (`params.items()`): any iterable, read
            # item by item by the loop -- made a list first, as the loop would see it
            listed = registry.lookup(list)
            assert listed is not None
            seq = self.emit(None, "seq", listed, [seq], [], it)
        return self.sequence(seq, seqs)

    def writes_static_dict(self: Lowerer, loop: Any) -> str | None:
        """Does the loop's body write keys of a dict built key by key
        (:func:`.syntax._static_dicts`): "only" where that is all it does (the order of the
        keys then changes nothing), "any" where it does more; None where it does not."""
        dicts = _static_dicts(self.node)
        writes = [
            n
            for n in walk(loop)
            if isinstance(n, gast.Subscript)
            and isinstance(n.ctx, gast.Store)
            and isinstance(n.value, gast.Name)
            and n.value.id in dicts
        ]
        if not writes:
            return None
        return "only" if _writes_keys_only(loop.body, dicts) else "any"

    @staticmethod
    def sequence(seq: ir.Atom, seqs: list[ir.Atom]) -> int:
        seqs.append(seq)
        return len(seqs) - 1

    def bind_items(
        self: Lowerer,
        target: Any,
        pattern: _Pattern,
        item: Callable[[int, str | None], ir.Atom],
        count: ir.Atom,
        counter: Any,
    ) -> None:
        """Bind a loop's ``target`` to one step of its ``pattern``: ``item(j, user)`` reads
        the item of sequence ``j`` (bound to the name ``user`` if given), ``count`` is the
        step's number; ``counter``, the target node that is the loop's own variable."""
        if target is counter:
            return
        if isinstance(target, gast.Starred) or (
            isinstance(target, (gast.Tuple, gast.List))
            and any(isinstance(t, gast.Starred) for t in target.elts)
        ):
            self.refuse(target, "starred unpacking (`a, *rest`)", "unpack each item by name")
        if not isinstance(target, (gast.Name, gast.Tuple, gast.List)):
            self.refuse(target, "this loop target", "bind names (`for a, (b, c) in ...:`)")
        if isinstance(pattern, int):
            if isinstance(target, gast.Name):
                item(pattern, target.id)
            else:
                self.bind_target(target, item(pattern, None))
            return
        if isinstance(pattern, _Counter):
            if not isinstance(target, gast.Name):
                self.refuse(target, "unpacking the enumerate counter", "use a name")
            self.bind(target.id, self.new_name(target.id), self.counted(count, pattern.start))
            return
        if isinstance(target, gast.Name):  # for pair in zip(u, v): a tuple
            self.bind(target.id, self.new_name(target.id), self.items_tuple(pattern, item, count))
            return
        if len(target.elts) != len(pattern):
            self.refuse(
                target,
                f"unpacking {len(pattern)} values into {len(target.elts)} names",
                f"unpack {len(pattern)} names",
            )
        for t, p in zip(target.elts, pattern):
            self.bind_items(t, p, item, count, counter)

    def items_tuple(
        self: Lowerer, pattern: _Pattern, item: Callable[[int, str | None], ir.Atom], count: ir.Atom
    ) -> ir.Atom:
        """The value of one step of ``pattern`` (a tuple atom for enumerate and zip)."""
        if isinstance(pattern, int):
            return item(pattern, None)
        if isinstance(pattern, _Counter):
            return self.counted(count, pattern.start)
        return ir.Tup(tuple(self.items_tuple(p, item, count) for p in pattern))

    def counted(self: Lowerer, count: ir.Atom, start: ir.Atom | None) -> ir.Atom:
        """enumerate's count: the step's number plus the ``start`` given."""
        if start is None:
            return count
        if isinstance(count, ir.Const) and isinstance(start, ir.Const) and type(start.value) is int:
            return ir.Const(count.value + start.value)
        return self.call_prim(registry.operator.add, [count, start], "count")

    def held_sequences(self: Lowerer, loop: Any, seqs: list[ir.Atom]) -> list[ir.Atom]:
        """Python iterates the object a loop's iterable named when the loop started: a
        sequence whose name the body binds again (``for r in x: x = r * 2.0``) is read
        through a name of its own, bound before the loop."""
        nodes = [n for stmt in loop.body for n in walk(stmt)]
        rebound, mutated = _rebound(nodes), _written_in_place(nodes)
        mutated |= {
            n.target.id
            for n in nodes
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)
        }
        held = []
        for seq in seqs:
            users = [u for u, a in self.env.items() if a == seq and u in rebound]
            if isinstance(seq, ir.Var) and users:
                if any(u in mutated for u in users):
                    self.refuse(
                        loop.iter,
                        f"a loop over `{users[0]}` whose body both binds `{users[0]}` again "
                        "and writes into it",
                        "iterate over a copy (`for r in x.copy():`) or use another name",
                    )
                name = self.namer.fresh(f"{users[0]}_iterated")
                self.copy(name, seq)
                seq = ir.Var(name)
            held.append(seq)
        return held

    def checkpoint_marker(self: Lowerer, it: Any) -> tuple[bool, Any, Any]:
        """``adgen.checkpoint(iterable, every=k)`` as a loop's iterable: (marked, the node of
        k or None, the iterable)."""
        if not self.is_call_to(it, checkpoint):
            return False, None, it
        every = it.args[1:] + [kw.value for kw in it.keywords if kw.arg == "every"]
        if len(it.args) < 1 or len(every) > 1 or any(kw.arg != "every" for kw in it.keywords):
            self.refuse(
                it,
                "this form of adgen.checkpoint",
                "write `for i in adgen.checkpoint(range(n)):` or "
                "`adgen.checkpoint(range(n), every=k)`",
            )
        inner = it.args[0]
        if self.is_call_to(inner, checkpoint):
            self.refuse(inner, "adgen.checkpoint of adgen.checkpoint", "mark the loop once")
        return True, (every[0] if every else None), inner

    def unroll(
        self: Lowerer,
        stmt: Any,
        index: str,
        seqs: list[ir.Atom],
        pattern: _Pattern,
        counter: Any,
    ) -> None:
        """A loop over sequences known when transforming (a tuple or list argument, a
        literal): one copy of the body per item, each binding the items directly. Zipped with
        sequences known only when running (arrays), whose items are read by index, a copy runs
        only while those are long enough (zip stops at the shortest)."""
        line = self.key(stmt)
        length = min(len(seq.items) for seq in seqs if isinstance(seq, ir.Tup))
        bound: ir.Atom | None = None
        for seq in seqs:
            if not isinstance(seq, ir.Tup):
                n = self.call_prim(len, [seq], "n")
                bound = n if bound is None else self.call_prim(registry.np.minimum, [bound, n], "n")

        def take(k: int, j: int, user: str | None) -> ir.Atom:
            seq = seqs[j]
            if not isinstance(seq, ir.Tup):
                return self.read_item(seq, ir.Const(k), user, line)
            if user:
                self.bind(user, self.new_name(user), seq.items[k])
            return seq.items[k]

        for k in range(length):
            self.line = line
            test: ir.Atom = ir.Const(True)
            if bound is not None:
                test = self.call_prim(registry.operator.lt, [ir.Const(k), bound], "more")
            block, self.block = self.block, []
            self.depth += 1
            once = test == ir.Const(True)  # (runs once, after what the block around holds)
            if once:
                self.root.open_branches.append((self.block, block, None))
            unrolled = self.__dict__.get("_unrolled_depth", 0)
            if once and unrolled == self.depth - 1:  # (straight-line code, as written out)
                self.__dict__["_unrolled_depth"] = self.depth
            self.root.unrolling += 1
            try:
                self.copy(index, ir.Const(k))
                self.current = stmt  # (what a refusal of the target points at)
                self.bind_items(stmt.target, pattern, partial(take, k), ir.Const(k), counter)
                self.lower_block(stmt.body)
            finally:
                self.root.unrolling -= 1
                if once:
                    self.root.open_branches.pop()
                self.__dict__["_unrolled_depth"] = unrolled
            self.depth -= 1
            body, self.block = self.block, block
            # the body stands in a block, as the loop's body would (its names are rebound)
            self.block.append(ir.If(test, body, [], line))

    def read_item(self: Lowerer, seq: ir.Atom, at: ir.Atom, user: str | None, line: int) -> ir.Var:
        """``seq[at]``, bound to the user's name ``user`` if given."""
        getitem = registry.lookup(registry.operator.getitem)
        assert getitem is not None
        name = self.new_name(user) if user else self.namer.fresh("item")
        self.block.append(ir.Assign((name,), getitem, (seq, at), (), line))
        self.producers[name] = getitem
        if user:
            self.bind(user, name, ir.Var(name))
        return ir.Var(name)

    def loop_variable(self: Lowerer, user: str) -> str:
        name = self.multi.get(user, user)
        self.namer.reserve(name)
        self.env[user] = ir.Var(name)
        self.bound.add(user)
        return name

    def is_call_to(self: Lowerer, node: Any, fn: Any) -> bool:
        if not isinstance(node, gast.Call):
            return False
        ok, obj = self.static_object(node.func)
        return ok and obj is fn


def _rebound(nodes: list[Any]) -> set[str]:
    """Names ``nodes`` bind to a new object (assignment, loop or ``with`` targets); ``+=`` and
    its kin are left out, as they change an array in place (:func:`_written_in_place`)."""
    names: set[str] = set()
    for n in nodes:
        if isinstance(n, gast.AugAssign):
            continue
        targets = (
            n.targets
            if isinstance(n, gast.Assign)
            else [n.target]
            if isinstance(n, (gast.For, gast.AnnAssign, gast.NamedExpr))
            else []
        )
        for t in targets:
            names.update(
                m.id for m in walk(t) if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Store)
            )
    return names


def _iterated_names(it: Any) -> set[str]:
    """The names a ``for`` loop iterates over: ``xs``, and the arguments of ``enumerate``,
    ``zip`` and ``reversed`` (nested in any way)."""
    if isinstance(it, gast.Name):
        return {it.id}
    if (
        isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id in ("enumerate", "zip", "reversed")
    ):
        return {n for a in it.args for n in _iterated_names(a)}
    return set()


def _changed_in_place(nodes: list[Any]) -> tuple[set[str], set[str]]:
    """Names of lists changed in place by a method (``xs.append(v)``, ``xs.pop()``), and
    names updated with ``+=`` & co. (in place if they are lists: ``xs += [...]``; not
    ``xs = xs + [v]``, which makes a new list)."""
    called = {n.func.value.id for n in nodes if _is_pop(n)}
    updated = set()
    for n in nodes:
        if (
            isinstance(n, gast.Call)
            and isinstance(n.func, gast.Attribute)
            and n.func.attr in ("append", "extend", "insert", "remove", "clear")
            and isinstance(n.func.value, gast.Name)
        ):
            called.add(n.func.value.id)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            updated.add(n.target.id)
    return called, updated
