# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Buffers: those a loop swaps, ``u, u_new = u_new, u`` (issue 34, part 6), and results
written into a buffer with ``out=``.

A time-stepping loop that writes the next state into a second buffer and swaps the two
(``u_new[1:-1] = u[1:-1] + c * (...); u, u_new = u_new, u``) writes in place into an array
that another name held the step before. It is sound when the names swapped form a group
whose members always hold distinct arrays the function made and no other name sees: each
member is bound only to a new array (``np.zeros_like(u)``, ``u.copy()``) or by a swap of the
group (a permutation of the members), no statement lets another name share one (a view, a
list, a loop over its rows), and a parameter among them is first bound to a new array at
the top of the function. Then a write into one member changes no value any other name
holds, as for a buffer bound to a new array just before (:mod:`.inplace`).

``np.exp(K, out=K)`` (one of NumPy's ufuncs), or a library's helper that calls the function it
is given so (scikit-learn's ``K = _modify_in_place_if_numpy(xp, xp.exp, K, out=K)``), is the
write ``K[...] = np.exp(K)``, with the checks of any write in place, and its value is ``K``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir
from adgen.errors import AdgenError, UnsupportedSyntaxError
from adgen.frontend.lower.identities import _last_binding
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.syntax import _own_nodes, _passed_once, _read_after
from adgen.rules import registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


def _swap(node: Any) -> list[str] | None:
    """The names ``a, b = b, a`` (any permutation of plain names) swaps; else None."""
    if not (
        isinstance(node, gast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], gast.Tuple)
        and isinstance(node.value, gast.Tuple)
    ):
        return None
    targets, values = node.targets[0].elts, node.value.elts
    if not all(isinstance(n, gast.Name) for n in [*targets, *values]):
        return None
    names = [n.id for n in targets]
    read = [n.id for n in values]
    if len(set(names)) != len(names) or sorted(names) != sorted(read) or names == read:
        return None
    return names


class BuffersMixin(LowererState):
    """In-place writes into buffers a loop swaps, or named by ``out=``."""

    def caller_buffer(self: Lowerer, name: str) -> list[tuple[Lowerer, str]] | None:
        """Where ``name`` is a parameter of an inlined helper holding an array its callers made
        and own (``_fill_diagonal(distances, 0)`` writing into the array a caller passed):
        the callers' names of that array, which a write into it at the helper's top level
        updates as Python's would; None where it is not so (the write is checked as any)."""
        if (
            self.parent is None
            or name not in self.params
            or self.depth != 0
            or self.parsed.filename.startswith("<adgen ")
        ):
            return None
        base = self.env.get(name)
        if not isinstance(base, ir.Var):
            return None
        # (its last binding: a statement of this block itself, not one inside an `if` or a
        # loop, which may have bound it to another array)
        k = _last_binding(self.block, base.name, len(self.block))
        last = self.block[k] if k is not None else None
        if last is not None and not (
            isinstance(last, ir.Assign) and last.targets == (base.name,) and last.args
        ):
            return None
        known = self.root.written_through.get((self, name))
        if known is not None:  # written before: still that write's array, seen by no other name
            alone = all(
                user == name or not any(base.name in self.shares_with(v) for v in ir.atom_vars(a))
                for user, a in self.env.items()
            )
            return known if alone and last is not None and last.prim is registry.SETITEM else None
        held = base  # (a parameter the helper binds again in blocks: a copy of the caller's)
        if last is not None:
            if not (
                last.prim is registry.lookup(registry.assign) and isinstance(last.args[0], ir.Var)
            ):
                return None
            held = last.args[0]
        if held != base and self.bases[base.name] != {held.name}:
            return None  # (a view of another array)
        # (held may be a view of arrays the callers made -- `np.asarray(norms)` of a new
        # array: each caller's name is asked below whether another name may see them)
        family = self.shares_with(held.name) | {base.name}
        for user, atom in self.env.items():  # another name of the helper's
            if (
                user != name
                and any(family & self.shares_with(v) for v in ir.atom_vars(atom))
                and not self.input_only_here(user)
            ):
                return None
        callers = [
            (lowerer, user)
            for lowerer in self.lowerers()[1:]
            for user, atom in lowerer.env.items()
            if atom == held
        ]
        for lowerer, user in callers:
            if (
                lowerer.depth != 0
                and user not in lowerer.multi
                # (bound in the caller's block being lowered: a name no other path binds,
                # read only after it there -- the rest of a function after an early return)
                and _last_binding(lowerer.block, held.name, len(lowerer.block)) is None
            ):
                return None
            if user in lowerer.multi:
                why = lowerer.ownership_problem(user, "write into")
                owned = not why or lowerer.made_here(user)
            else:
                owned = not lowerer.sharing_problem(user)
            if not owned:
                return None
        if callers:
            self.root.written_through[(self, name)] = callers
        return callers or None

    def input_only_here(self: Lowerer, user: str) -> bool:
        """Is ``user`` read once, as an argument written directly in the call the statement
        being lowered is (``return special.expit(x, out=out)`` of ``x`` the array ``out``
        is too: it reads ``x`` before writing), and never after? A name read after a write
        through another name would see the new values."""
        stmt = self.current
        if not _passed_once(stmt, user):
            return False
        return isinstance(stmt, gast.Return) or not _read_after(self.node, stmt, user)

    def flat_target(self: Lowerer, target: Any, index: ir.Atom | None) -> Any:
        """``a.flat[k]`` written (``qmat.flat[m * (d + 1) :: d + 1] += di``): ``(a[...],
        a[rt.flat_index(a, k)]'s index)``, the same entries named in ``a``'s own shape; None
        for any other target."""
        flat = target.value
        if not (
            isinstance(flat, gast.Attribute)
            and flat.attr == "flat"
            and isinstance(flat.value, gast.Name)
            and flat.value.id in self.env
            and index is None
        ):
            return None
        key = self.index(target.slice, flat.value.id)
        positions = registry.lookup(rt.flat_index)
        assert positions is not None
        atom = self.emit(None, "flat", positions, [self.env[flat.value.id], key], [], target)
        plain = gast.Subscript(value=flat.value, slice=target.slice, ctx=target.ctx)
        return gast.copy_location(plain, target), atom

    def updated_through(self: Lowerer, stmt: gast.AugAssign) -> bool:
        """``X -= m`` of a helper's parameter ``X``, an array: Python updates the array the
        caller passed. Lowered as the write ``X[...] -= m`` where that array is one the
        callers made and own (:meth:`caller_buffer`: their names see the new values, as in
        Python); False (nothing lowered) where it is not so."""
        name = stmt.target.id
        atom = self.env.get(name)
        sample = self.argument_sample(atom) if name in self.params and atom is not None else None
        if not (isinstance(sample, np.ndarray) and sample.dtype.kind in "fc"):
            return False  # (an integer array: `-=` of a float raises, a write would cast)
        target = gast.Subscript(
            value=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
            slice=gast.Constant(value=Ellipsis, kind=None),
            ctx=gast.Store(),
        )
        for node in (target, target.value, target.slice):
            gast.copy_location(node, stmt)
        kept = self.kept_state()
        try:
            self.write_in_place(stmt, target, stmt.value, stmt.op)
        except UnsupportedSyntaxError:
            self.restore_state(kept)
            return False
        return True

    def written_out(self: Lowerer, stmt: Any, call: Any, result: str | None) -> str | None:
        """Lower ``call`` (the value of ``stmt``) as the write ``y[...] = f(*args)`` if it is
        ``f(*args, out=y)`` of a ufunc (``np.exp(K, K)``, ``out=np.asarray(y)`` of an array
        ``y``) or of a helper that passes ``out=`` on (then bind ``result``, if given, to
        ``y``): the name ``y``; None: it is not (nothing lowered)."""
        if not isinstance(call, gast.Call) or any(isinstance(a, gast.Starred) for a in call.args):
            return None
        outs = [k.value for k in call.keywords if k.arg == "out"]
        if len(outs) > 1 or (not outs and len(call.args) < 2):
            return None  # (most calls: nothing resolved)
        try:
            ok, fn = self.static_object(call.func)
        except AdgenError:
            return None
        at = registry.writes_out(fn) if ok else None
        if at is None:
            return None
        args = call.args
        if at == 0 and not outs and len(args) == registry.out_inputs(fn) + 1:  # np.exp(K, K)
            args, outs = args[:-1], args[-1:]
        out = self.out_array(outs[0]) if outs else None
        if out is None:
            return None
        rest = [k for k in call.keywords if k.arg != "out"]
        if at == 0:  # a ufunc: all its inputs positional, no other option
            if rest or len(args) != registry.out_inputs(fn):
                return None
            computed = gast.Call(func=call.func, args=args, keywords=[])
        elif len(args) > at:
            computed = gast.Call(func=args[at], args=args[at + 1 :], keywords=rest)
        else:
            return None
        target = gast.Subscript(
            value=gast.Name(id=out, ctx=gast.Load(), annotation=None, type_comment=None),
            slice=gast.Constant(value=Ellipsis, kind=None),
            ctx=gast.Store(),
        )
        for node in (computed, target, target.value, target.slice):
            gast.copy_location(node, call)
        self.write_in_place(stmt, target, computed, None)
        if result is not None:
            self.bind(result, self.new_name(result), self.env[out])
        return out

    def out_array(self: Lowerer, node: Any) -> str | None:
        """The name an ``out=`` argument writes into: ``y``, or ``np.asarray(y)`` of a ``y``
        that is an array (NumPy's functions made it, or the caller's argument of that kind),
        which ``np.asarray`` returns as it is; None where it is none (a constant: ``None``)."""
        if isinstance(node, gast.Name):  # (`out=out` of a helper's `out=None`: no write)
            held = self.env.get(node.id)
            known = self.settled(held) if held is not None else None
            return None if isinstance(known, ir.Const) else node.id
        if not (
            isinstance(node, gast.Call)
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], gast.Name)
            and node.args[0].id in self.env
        ):
            return None
        try:
            ok, fn = self.static_object(node.func)
        except AdgenError:
            return None
        name = node.args[0].id
        if not (ok and registry.returns_arrays_as_they_are(fn)):
            return None
        return name if self.is_array(self.env[name]) else None

    def swapped_buffer(self: Lowerer, name: str) -> bool:
        """Is ``name`` one of a group of names the function swaps, which always hold distinct
        arrays it made and no other name sees (see the module's doc)?"""
        nodes = _own_nodes(self.node)
        swaps = [s for s in nodes if _swap(s) is not None]
        group = {name}
        changed = True
        while changed:  # the names swapped with name, with those, ...
            changed = False
            for s in swaps:
                names = set(_swap(s) or ())
                if names & group and not names <= group:
                    group |= names
                    changed = True
        if len(group) < 2 or any(self.viewed_by_nested(m) for m in group):
            return False
        for member in group:
            if member in self.params and not self.copied_param(member):
                return False
            for node in nodes:
                if any(node is s for s in swaps) or isinstance(node, gast.FunctionDef):
                    continue
                if self.node_problem(node, member, False):
                    return False
        atom = self.env.get(name)
        if not isinstance(atom, ir.Var):
            return False
        others = [
            v
            for lowerer in self.lowerers()
            for user, a in lowerer.env.items()
            if not (lowerer is self and user in group)
            for v in ir.atom_vars(a)
        ]
        return not any(atom.name in self.shares_with(v) for v in [*others, *self.held])
