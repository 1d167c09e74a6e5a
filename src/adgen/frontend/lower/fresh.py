# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Which values are new arrays: made by a rule's operation, copied, or bound in every branch
of an ``if`` to one (issue 34, part 6). A write in place into such an array is seen by no
other name than those the IR shows holding it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from adgen import ir
from adgen.frontend.lower.identities import Place, _view_of_first
from adgen.frontend.lower.state import LowererState
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class FreshMixin(LowererState):
    """New arrays, and copies, followed back through the IR."""

    def new_array(
        self: Lowerer, atom: ir.Atom, at: Place | None = None, through: list[str] | None = None
    ) -> bool:
        """Is ``atom``'s value an array (or number) a rule's operation made, followed back
        through copies and writes into it (a helper's result: ``distances = -2 * (X @ Y.T)``,
        ``distances += XX``, ``np.maximum(distances, 0, out=distances)``, returned; a
        conversion asked to copy, ``np.asarray(X, copy=True)``; a view of such an array by
        constant arguments, ``np.reshape(scores, (-1,))``), so that no name but those the IR
        shows holding it (or the array it is a view of) can see it? ``through``: gets the
        names the array was held by on its way to ``atom`` (then only straight-line code
        answers True: not a name bound in branches)."""
        traced = self.traced(atom, at, through)
        if traced is None and isinstance(atom, ir.Var) and through is None:
            # bound in the branches of an `if` (a helper's `ret = a @ b` or `ret =
            # np.tensordot(a, b, ...)`, then `return ret`): new whichever branch ran
            return self.new_in_branches(atom, at)
        while traced is not None and traced[0][0] == "made":
            made, place = traced[1], traced[2]
            assert made is not None and place is not None
            prim = made.prim
            if prim is registry.SETITEM and isinstance(made.args[0], ir.Var):
                # (written into: the same array)
                traced = self.traced(made.args[0], place, through)
                continue
            copied = prim.view and self.copying(prim, made.args, made.kwargs)
            if _view_of_first(made) and not copied:  # np.reshape(scores, (-1,)): a view
                traced = self.traced(made.args[0], place, through)
                continue
            if registry.makes_new_array(prim):  # np.zeros(k), np.isnan(x)
                return True
            return (
                prim.differentiable
                and (not prim.view or copied)
                and prim.refusal is None
                and prim.callee is None
                and prim.user_fn is None
                and not prim.lists
            )
        return False

    def new_in_branches(self: Lowerer, atom: ir.Var, at: Place | None) -> bool:
        """Is ``atom``'s value a new array (:meth:`new_array`) where its name was last bound
        by an ``if``: whichever branch ran (a branch that raises leaves none)?"""
        found = self.per_branch(atom, at, self.new_array)
        return found is not None and all(found)

    def copying(self: Lowerer, prim: registry.Primitive, args: Any, kwargs: Any) -> bool:
        """Is a call of ``prim`` -- one that may return a view -- certain to make a new
        array here: a conversion asked for a copy (``np.asarray(x, copy=True)``), or an
        index by an array of integers or booleans (``x[mask]``: NumPy copies)?"""
        if registry.asked_to_copy(prim.name, kwargs):
            return True
        if prim.name != "getitem" or len(args) != 2:
            return False
        index = args[1]
        items = index.items if isinstance(index, ir.Tup) else (index,)
        for item in items:
            sample = self.argument_sample(item) if isinstance(item, ir.Var) else None
            if isinstance(sample, np.ndarray) and sample.ndim >= 1 and sample.dtype.kind in "biu":
                return True
        return False

    def is_copy(self: Lowerer, name: str) -> bool:
        """Is the IR name ``name``, here, bound by the statement that copied (:meth:`copying`)
        into it -- no later binding in straight-line code, none in a block?"""
        made = self.root.copies.get(name)
        traced = self.traced(ir.Var(name)) if made is not None else None
        return traced is not None and traced[1] is made

    def made_family(self: Lowerer, name: str, atom: ir.Var) -> set[str]:
        """The IR names whose memory ``atom``'s array (the value of ``name``, bound to a new
        array it holds alone: :meth:`note_binding`) may be: only its own where the statement
        binding it made a new array (``X = X.copy()`` of a helper's parameter: not the
        caller's array the name held before), else as :meth:`shares_with` says."""
        found = self.fresh_binding.get(name)
        made = found[0][found[1] - 1] if found is not None and found[1] >= 1 else None
        if (
            isinstance(made, ir.Assign)
            and made.targets == (atom.name,)
            and made.prim.name != "assign"
            and (not made.prim.view or self.copying(made.prim, made.args, made.kwargs))
        ):
            return {atom.name}
        if (  # `X = validate_data(X, copy=True)`: bound to a helper's new array
            isinstance(made, ir.Assign)
            and made.targets == (atom.name,)
            and made.prim.name == "assign"
            and isinstance(made.args[0], ir.Var)
        ):
            # the names the new array went through on its way here, straight-line (not
            # what those names held at other times: a helper's `X` rebound from its
            # caller's array to `check_array(X, copy=True)`), else every array they held
            through: list[str] = []
            if self.new_array(made.args[0], through=through):
                return {atom.name, *through}
            if self.new_array(made.args[0]):
                return {atom.name} | self.shares_with(made.args[0].name)
        if (
            found is not None
            and isinstance(made, ir.If)
            and self.new_array(atom, (found[0], found[1]))
        ):
            # bound in each branch to a new array (a helper returning from branches): those
            # arrays, not what the name held before
            inside = ir.Function("", [], [made], "", 0, {}).statements()
            copied = [
                s.args[0].name
                for s in inside
                if isinstance(s, ir.Assign)
                and s.targets == (atom.name,)
                and s.prim is registry.lookup(registry.assign)
                and isinstance(s.args[0], ir.Var)
            ]
            return {atom.name}.union(*(self.shares_with(v) for v in copied))
        return self.shares_with(atom.name)
