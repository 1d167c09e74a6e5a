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

from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.checkpointing import checkpoint
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.syntax import _written_in_place
from adgen.pyast import walk
from adgen.rules import registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class LoopsMixin(LowererState):
    """``for`` and ``while`` loops."""

    def lower_while(self: Lowerer, stmt: Any) -> None:
        """``while``: the statements computing its test are a block of their own, run before
        each iteration."""
        if stmt.orelse:
            self.refuse(stmt, "`else` clauses on loops", "move that code after the loop")
        line = self.key(stmt)
        saved, self.block = self.block, []
        test = self.expr(stmt.test, None, "cond")
        test_body, self.block = self.block, saved
        body = self.sub_block(stmt.body)
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

    def lower_for(self: Lowerer, stmt: Any) -> None:
        """``for`` over ``range(...)``; over an array or sequence (rows), ``enumerate`` and ``zip``
        become a loop over ``range(len(...))`` that reads the items by index."""
        if stmt.orelse:
            self.refuse(stmt, "`else` clauses on loops", "move that code after the loop")
        line = self.key(stmt)
        it, target = stmt.iter, stmt.target
        checkpointed, every_node, it = self.checkpoint_marker(it)
        items: list[tuple[Any, ir.Atom]] = []  # (user target, sequence) read by index
        backwards = self.reversed_range(it)
        if self.is_call_to(it, range) or backwards is not None:
            if backwards is not None:  # for i in reversed(range(n)): rt.backwards, a range
                prim = registry.lookup(rt.backwards)
                assert prim is not None
                r = self.emit(None, "loop", prim, [backwards], [], it)
            else:
                r = self.expr(it, None, "loop")
            if not isinstance(target, gast.Name):
                self.refuse(target, "unpacking a range", "use one loop variable")
            index = self.loop_variable(target.id)
        else:
            if self.is_call_to(it, enumerate):
                if (
                    not (isinstance(target, gast.Tuple) and len(target.elts) == 2)
                    or len(it.args) != 1
                ):
                    self.refuse(
                        target, "this form of enumerate", "write `for i, v in enumerate(x):`"
                    )
                counter, target = target.elts
                if not isinstance(counter, gast.Name):
                    self.refuse(counter, "unpacking the enumerate counter", "use a name")
                index = self.loop_variable(counter.id)
                seqs, targets = [self.expr(it.args[0], None, "seq")], [target]
            elif self.is_call_to(it, zip):
                if not (isinstance(target, gast.Tuple) and len(target.elts) == len(it.args)):
                    self.refuse(target, "this form of zip", "unpack one name per sequence")
                index = self.loop_variable(self.user_namer.fresh("k"))
                seqs, targets = [self.expr(a, None, "seq") for a in it.args], list(target.elts)
            else:
                index = self.loop_variable(self.user_namer.fresh("k"))
                seqs, targets = [self.expr(it, None, "seq")], [target]
            seqs = self.held_sequences(stmt, seqs)
            if all(isinstance(seq, ir.Tup) for seq in seqs):
                if checkpointed:
                    self.refuse(
                        stmt.iter,
                        "adgen.checkpoint on a loop over a tuple or list (it is unrolled)",
                        "checkpoint a loop over range(...) or an array",
                    )
                self.unroll(stmt, index, seqs, targets)
                return
            length = self.call_prim(len, [seqs[0]], "n")
            for seq in seqs[1:]:
                length = self.call_prim(
                    registry.np.minimum, [length, self.call_prim(len, [seq], "n")], "n"
                )
            r = self.call_prim(range, [length], "loop")
            for t, seq in zip(targets, seqs):
                if not isinstance(t, gast.Name):
                    self.refuse(t, "nested unpacking in a for target", "unpack inside the loop")
                items.append((t, seq))
        every = self.expr(every_node, None, "every") if every_node is not None else None
        if isinstance(every, ir.Const) and every.value is None:
            every = None
        saved, self.block = self.block, []
        self.depth += 1
        getitem = registry.lookup(registry.operator.getitem)
        assert getitem is not None
        for t, seq in items:
            name = self.new_name(t.id)
            self.block.append(ir.Assign((name,), getitem, (seq, ir.Var(index)), (), line))
            self.producers[name] = getitem
            self.bind(t.id, name, ir.Var(name))
        self.lower_block(stmt.body)
        self.depth -= 1
        body, self.block = self.block, saved
        self.block.append(ir.For(index, r, body, line, checkpointed, every))

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
        self: Lowerer, stmt: Any, index: str, seqs: list[ir.Atom], targets: list[Any]
    ) -> None:
        """A loop over sequences known when transforming (a tuple or list argument, a
        literal): one copy of the body per item, each binding the items directly."""
        line = self.key(stmt)
        length = min(len(seq.items) for seq in seqs if isinstance(seq, ir.Tup))
        for k in range(length):
            self.copy(index, ir.Const(k))
            for t, seq in zip(targets, seqs):
                assert isinstance(seq, ir.Tup)
                if not isinstance(t, gast.Name):
                    self.refuse(t, "nested unpacking in a for target", "unpack inside the loop")
                self.bind(t.id, self.new_name(t.id), seq.items[k])
            block, self.block = self.block, []
            self.depth += 1
            self.lower_block(stmt.body)
            self.depth -= 1
            body, self.block = self.block, block
            # the body stands in a block, as the loop's body would (its names are rebound)
            self.block.append(ir.If(ir.Const(True), body, [], line))

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
