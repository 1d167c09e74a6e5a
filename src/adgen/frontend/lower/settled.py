# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""What a name holds at the point being lowered, where adgen knows it when transforming: a
constant copied into it on the straight-line path here (``weights`` still the ``None`` it was
given, in the branch after an early return), and the block around a branch.

The path is the IR lowered so far on the way here: the blocks open around this point, each
a branch (which runs at most once, after the statements before it); a loop's body, which
runs again, ends the walk (:meth:`SettledMixin.path_since`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adgen import ir
from adgen.frontend.lower.state import LowererState
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer
    from adgen.frontend.lower.identities import Identity, Place


class SettledMixin(LowererState):
    """The constants names hold here, and the blocks around this point."""

    def settled(self: Lowerer, atom: ir.Atom, seen: frozenset[str] = frozenset()) -> ir.Atom:
        """The atom a name that blocks rebind still holds here, if known: where no block
        encloses this point and the name was bound once so far, outside blocks (a parameter
        of an inlined function, ``scale = None`` before a loop), its value is what was copied
        there; a constant copied there by the function this one is inlined in, or by a helper
        inlined before (``m`` returned by ``check(y, m)``), or by the last binding in
        straight-line code; else ``atom`` itself."""
        if not isinstance(atom, ir.Var) or atom.name in seen:
            return atom
        seen = seen | {atom.name}
        done = self.root.settled_values.get(atom.name)
        if done is not None:  # (a variable of a helper inlined before: a constant)
            return done
        lowerer: Lowerer | None = self  # (or a function this one is inlined in: its variable)
        depth = 0  # (the blocks opened since it was bound: branches only, which run once)
        while lowerer is not None and atom.name not in lowerer.first_values:
            depth += lowerer.depth
            lowerer = lowerer.parent
        if lowerer is None:
            return self.traced_constant(atom)
        path = self.path_since(depth + lowerer.depth)
        if path is None:
            return atom
        inside = ir.Function("", [], path, "", 0, {})
        bindings = [
            s for s in inside.statements() if isinstance(s, ir.Assign) and atom.name in s.targets
        ]
        if len(bindings) != 1:
            return self.last_copied(path, atom, seen)
        first = lowerer.first_values[atom.name]
        # (a copy of another variable, itself still a constant there? a name a function this
        # one is inlined in bound may mean another value here: only a constant is taken)
        value = self.settled(first, seen) if isinstance(first, ir.Var) else first
        if isinstance(value, ir.Const):
            return value
        # (the atom it was bound to, in straight-line code of its own function only)
        return first if lowerer is self and depth + lowerer.depth == 0 else atom

    def traced_constant(self: Lowerer, atom: ir.Var) -> ir.Atom:
        """The constant ``atom`` holds here where the straight-line code that leads here
        copied one into it (:meth:`traced`: an item a helper's loop appended, ``None`` as
        it was given); else ``atom`` itself."""
        traced = self.traced(atom)
        if traced is not None and traced[0][0] == "constant" and traced[1] is not None:
            value = traced[1].args[0]
            if isinstance(value, ir.Const):
                return value
        return atom

    def path_since(self: Lowerer, depth: int) -> list[ir.Stmt] | None:
        """The IR statements lowered so far on the way to this point from the block
        ``depth`` blocks out (this function's or a caller's top level), in order: each open
        block's statements, then those of the block in it. None where a block opened since
        may run more than once (a loop) or is not known as a branch (statements it saw
        before this point could be lowered again)."""
        if depth == 0:
            return self.block
        total, lowerer = 0, self  # (every open block, of every function inlined here)
        while lowerer is not None:
            total += lowerer.depth
            lowerer = lowerer.parent  # type: ignore[assignment]
        branches = self.root.open_branches
        if self.root.looping or total != len(branches) or branches[-1][0] is not self.block:
            return None
        if any(end is not None for _, _, end in branches):
            return None  # (a branch asked about on trial)
        return [s for _, outer, _ in branches[-depth:] for s in outer] + self.block

    def last_copied(
        self: Lowerer, path: list[ir.Stmt], atom: ir.Var, seen: frozenset[str]
    ) -> ir.Atom:
        """A variable blocks rebind, bound again in the straight-line code of ``path`` (the
        statements on the way here: :meth:`path_since`; ``_, y, m = check(y, m)``): the
        constant its last binding there copied, if no block since binds it; else ``atom``
        itself."""
        copy = registry.lookup(registry.assign)
        found = [
            k for k, s in enumerate(path) if isinstance(s, ir.Assign) and atom.name in s.targets
        ]
        if not found:
            return atom
        last = path[found[-1]]
        after = ir.Function("", [], path[found[-1] + 1 :], "", 0, {})
        if any(
            (isinstance(s, ir.Assign) and atom.name in s.targets)
            or (isinstance(s, ir.For) and s.target == atom.name)
            for s in after.statements()
        ):
            return atom
        if not (isinstance(last, ir.Assign) and last.prim is copy and last.targets == (atom.name,)):
            return atom
        value = self.settled(last.args[0], seen)
        return value if isinstance(value, ir.Const) else atom

    def around_end(self: Lowerer, block: list[ir.Stmt]) -> Place | None:
        """The block around ``block`` (a branch, as for :meth:`around`) and where in it the
        statements before ``block`` end."""
        for branch, outer, end in reversed(self.root.open_branches):
            if branch is block:
                return outer, len(outer) if end is None else end
        return None

    def argument(self: Lowerer, name: str) -> Identity | None:
        """What the root function's parameter ``name`` is: a value of its own if it is
        differentiated, else the caller's object (``None`` if ``name`` is no parameter)."""
        if name not in self.root.flat_params:
            return None
        differentiated = self.root.differentiated
        own = differentiated is not None and name in differentiated
        return ("own", name) if own else ("arg", name)
