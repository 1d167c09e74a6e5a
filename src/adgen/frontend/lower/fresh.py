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

    def new_array(self: Lowerer, atom: ir.Atom, at: Place | None = None) -> bool:
        """Is ``atom``'s value an array (or number) a rule's operation made, followed back
        through copies and writes into it (a helper's result: ``distances = -2 * (X @ Y.T)``,
        ``distances += XX``, ``np.maximum(distances, 0, out=distances)``, returned; a
        conversion asked to copy, ``np.asarray(X, copy=True)``; a view of such an array by
        constant arguments, ``np.reshape(scores, (-1,))``), so that no name but those the IR
        shows holding it (or the array it is a view of) can see it?"""
        traced = self.traced(atom, at)
        if traced is None and isinstance(atom, ir.Var):
            # bound in the branches of an `if` (a helper's `ret = a @ b` or `ret =
            # np.tensordot(a, b, ...)`, then `return ret`): new whichever branch ran
            return self.new_in_branches(atom, at)
        while traced is not None and traced[0][0] == "made":
            made, place = traced[1], traced[2]
            assert made is not None and place is not None
            prim = made.prim
            if prim is registry.SETITEM and isinstance(made.args[0], ir.Var):
                traced = self.traced(made.args[0], place)  # (written into: the same array)
                continue
            copied = prim.view and self.copying(prim, made.args, made.kwargs)
            if _view_of_first(made) and not copied:  # np.reshape(scores, (-1,)): a view
                traced = self.traced(made.args[0], place)
                continue
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
