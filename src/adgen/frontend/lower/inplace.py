# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower in-place writes, and check that no other name sees the array written.

``y[i] = v`` and ``y[i] += v`` write into an array: allowed only on an array the function made
itself, which no other name (an argument, a global, a view, another variable, a list) can see
-- else the write would change that value too, and the derivative would be wrong; ``hs[t] = v``
on a list the function builds rebinds an item (other names keep the old one).

``y += v``, which Python does in place, is lowered as ``y = y + v`` where no other name sees
``y``'s array: for a name bound once, what the IR says its value shares memory with (views and
their bases, lists and tuples holding it, the callers of an inlined function) at this point;
for a name rebound in blocks, that it was bound to a new array earlier in the same block, or
else that every assignment to it makes a new value. Where that cannot be shown, ``y`` may
still be a number (``w[0]`` of a vector, a float argument), for which ``+=`` makes a new one:
lowering adds ``assert np.isscalar(y)`` carrying the refusal's words, which the argument kinds
of the call decide before the code runs (:func:`adgen.middle.shapes.settle_checks`).
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir
from adgen.errors import AdgenError, UnresolvedNameError
from adgen.frontend.lower.attempts import Probe
from adgen.frontend.lower.identities import _last_binding
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.syntax import (
    _is_pop,
    _loads,
    _nested_results,
    _out_arguments,
    _own_nodes,
    _passed_once,
    _read_after,
    _written_in_place,
)
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


_OPERATOR_TEXT = {
    "Add": "+",
    "Sub": "-",
    "Mult": "*",
    "Div": "/",
    "Pow": "**",
    "MatMult": "@",
    "FloorDiv": "//",
    "Mod": "%",
}


class InPlaceMixin(LowererState):
    """In-place writes and the ownership checks they need."""

    def write_in_place(
        self: Lowerer,
        stmt: Any,
        target: Any,
        value: Any,
        op: Any,
        atom: ir.Atom | None = None,
        index: ir.Atom | None = None,
    ) -> None:
        """``y[index] = v`` and ``y[index] += v``: an in-place write into an array the function
        made itself (``np.zeros(...)``, ``x.copy()``, arithmetic results). ``atom``: the value
        already computed (an item of ``y[0], y[1] = ...``), instead of ``value``'s; ``index``:
        the index already computed, instead of ``target``'s."""
        flat = self.flat_target(target, index)  # a.flat[::4] += v
        if flat is not None:
            target, index = flat
        if not isinstance(target.value, gast.Name):
            self.refuse(
                target, "writing into an expression", "write `y[i, j] = v`, not `y[i][j] = v`"
            )
        name = target.value.id
        if name not in self.env:
            self.refuse(target.value, f"writing into `{name}`, which is not a local array", "")
        base = self.env[name]
        if self.is_list(base) and op is not None:
            # Python updates the item in place (`hs[i].__iadd__(v)`): an array another name
            # (or another item) may hold
            self.refuse(
                stmt,
                f"an in-place update of an item of the list `{name}` (the item's array would "
                "change in place, and other names may hold it)",
                f"write `{name}[...] = {name}[...] {_operator(stmt)} ...` to make a new item",
            )
        # writing an item of a list rebinds it: the list's items are not views of it
        callers = None if self.is_list(base) else self.caller_buffer(name)
        if callers is None:
            self.check_owned(stmt, name, "write into", lists=self.is_list(base))
        index = index if index is not None else self.index(target.slice, name)
        if self.is_list(base) and isinstance(index, (ir.Slc, ir.Tup)):
            self.refuse(
                stmt,
                f"assigning to a slice of the list `{name}`",
                f"write the items one by one (`{name}[1] = a`, `{name}[2] = b`)",
            )
        if atom is not None:
            v = atom
        elif op is None:
            v = self.expr(value, None, name)
        else:
            getitem = registry.lookup(registry.operator.getitem)
            fn = registry.BINOP_FUNCTIONS.get(type(op).__name__)
            prim = registry.lookup(fn) if fn is not None else None
            assert getitem is not None
            if prim is None:
                self.refuse(stmt, f"the operator `{type(op).__name__}`")
            old = self.emit(None, name, getitem, [base, index], [], stmt)
            rhs = self.expr(value, None, name)
            v = self.emit(None, name, prim, [old, rhs], [], stmt)
        if self.is_list(base):
            self.hold(v)
        ir_name = self.multi[name]
        self.block.append(ir.Assign((ir_name,), registry.SETITEM, (base, index, v), (), self.line))
        self.env[name] = ir.Var(ir_name)
        for lowerer, user in callers or ():  # the callers' names of the array see the write
            held = lowerer.multi[user] if user in lowerer.multi else lowerer.new_name(user)
            self.copy(held, ir.Var(ir_name))
            lowerer.env[user] = ir.Var(held)

    def check_owned(self: Lowerer, stmt: Any, name: str, verb: str, lists: bool = False) -> None:
        """Writing into ``name``'s array must not be seen through any other name: it must be
        made inside the function, every binding a new array, and no name kept as a view
        (``lists``: ``name`` is a list, whose items are not views of it)."""
        why = self.ownership_problem(name, verb, lists)
        if why and not lists and self.made_here(name):
            why = ""
        if why:
            self.refuse(
                stmt,
                f"in-place {verb} `{name}` ({why})",
                f"make `{name}` a new array first (`{name} = {name}.copy()`), "
                "or copy the slice you keep",
            )

    def ownership_problem(self: Lowerer, name: str, verb: str, lists: bool = False) -> str:
        """Why writing into ``name``'s array (or list) could be seen through another name
        ("" if it cannot)."""
        why = ""
        if self.parsed.filename.startswith("<adgen ") and (
            name not in self.params or self.copied_param(name)
        ):
            # adgen's own reverse-mode code: its temporaries may be views of arrays it writes
            # later, but every overwritten slot is saved and put back before an adjoint reads
            # such a view again -- the generated code has the meaning of its values
            return ""
        # a list's items are not views of it: only another name for the list itself matters
        lists = lists or verb in ("append to", "pop from", "extend")
        if name in self.params:
            why = "it is an argument passed by the caller"
        elif not lists and self.viewed_by_nested(name):
            why = "a function defined here may return a view of it"
        for node in _own_nodes(self.node):
            if id(node) not in self.root.never_run:  # (a branch decided never to run)
                why = why or self.node_problem(node, name, lists)
        return why

    def copied_param(self: Lowerer, name: str) -> bool:
        """Was the parameter ``name`` last bound, by a statement of the function's body before
        the one holding the statement being lowered, to a new array (``v = v.copy()``)? In
        adgen's own code (the forward sweep keeps the user's copy where it was written) its
        values until the adjoint of that statement puts the caller's array back are then the
        function's own; a buffer a loop swaps (:mod:`.buffers`) starts as a new array."""
        fresh = False
        stacks = _Stacks(name)  # (adgen's own code: `v = stack.pop()` puts back a value saved)
        for stmt in self.straight_line(self.node.body):
            if stmt is self.current or any(n is self.current for n in gast.walk(stmt)):
                return fresh
            restored = stacks.step(stmt, fresh)
            if restored is not None:
                fresh = restored
            elif (
                isinstance(stmt, gast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)
                and stmt.targets[0].id == name
            ):
                fresh = self.fresh_value(stmt.value)
        return False

    def node_problem(self: Lowerer, node: Any, name: str, lists: bool) -> str:
        """Why this statement (or expression) could make ``name``'s array (or list) one that
        another name sees, or ``name`` another array's ("" if it cannot)."""
        if _appends(node) and self.shares(node.args[-1], name, lists):
            return "a list holds it"
        if _into_itself(node):  # `y = np.exp(y, out=y)`: y's own array, written in place
            return ""
        if isinstance(node, (gast.Assign, gast.AugAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            stored = {
                n.id
                for t in targets
                if isinstance(t, (gast.Name, gast.Tuple))
                for n in gast.walk(t)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
            }
            fresh = isinstance(node, gast.AugAssign) or self.fresh_value(node.value)
            if name in stored and not fresh:
                return "it may be a view of another array or another variable's array"
            if not lists and _item_of(node, name):
                return ""  # `yi = y[i]`: checked to be a number where it is bound (kept_item)
            if stored and self.shares(node.value, name, lists):
                kept = sorted(stored) or ["a name"]
                return f"`{kept[0]}` keeps a view of it"
        elif isinstance(node, gast.For) and not lists and _views_of(node.iter, name):
            return "a loop iterates over its rows"
        elif _iterated_into(node, name):
            return "a loop binds it to the items of what it iterates over"
        return ""

    def made_here(self: Lowerer, name: str) -> bool:
        """Is ``name``'s array, at the statement being lowered, one this function made since
        which no other name can see -- whatever the rest of the function does with it?

        Bound to a new array earlier in this block (:meth:`fresh_here`), or in a block around
        the compound statement being lowered (a loop writing rows into a buffer made before
        it): then no statement since may have rebound it, and no statement of that compound
        statement (a loop's body runs again) may rebind it to another array or let another
        name see it. A function defined here that may return a view of it is never safe."""
        if self.parsed.filename.startswith("<adgen ") or self.viewed_by_nested(name):
            return False
        if self.fresh_here(name) or self.swapped_buffer(name) or self.made_by_loop(name):
            return True
        found = self.fresh_binding.get(name)
        atom = self.env.get(name)
        if found is None or not isinstance(atom, ir.Var) or found[2] is None:
            return False
        block, start, binding = found
        around = _compound_after(self.node, binding, self.current)
        if around is None or _rebinds(block[start:], atom.name):
            return False
        if any(self.node_problem(node, name, False) for node in _own_nodes(around)):
            return False
        return not self.seen_by_others(name, atom)

    def check_kept_item(self: Lowerer, target: Any, value: Any) -> None:
        """After ``yi = y[i]`` where ``y`` is written in place somewhere in the function: a
        check that ``yi`` is a number (``y[i]`` of a vector), not a view that a write into
        ``y`` would change -- decided by the argument kinds where they tell."""
        y = value.value.id
        if (
            self.parsed.filename.startswith("<adgen ")
            or y not in (self.list_names(_written_in_place) if self.depth else _written_from(self))
            or self.is_list(self.env.get(y))
            or isinstance(self.env.get(y), (ir.Tup, ir.Dct))  # (known item by item)
            or target.id not in self.env
        ):
            return
        kept = self.env[target.id]
        if isinstance(kept, ir.Var) and self.is_copy(kept.name):
            return  # (y[mask]: a copy)
        what = (
            f"in-place write into `{y}` (`{target.id}` keeps a view of it): `{target.id}` is "
            f"an array here, which writing into `{y}` would change"
        )
        hint = f"copy it (`{target.id} = {y}[...].copy()`), or write into a copy of `{y}`"
        self.add_number_check(self.env[target.id], what, hint)

    def add_number_check(self: Lowerer, atom: ir.Atom, what: str, hint: str) -> None:
        """``assert np.isscalar(atom)`` carrying a refusal's words (see check_in_place)."""
        test = self.call_prim(registry.np.isscalar, [atom], "number")
        self.block.append(
            ir.Assign(
                (),
                registry.ASSERT,
                (test,),
                (("what", ir.Const(what)), ("hint", ir.Const(hint))),
                self.line,
            )
        )

    def check_in_place(self: Lowerer, stmt: Any) -> None:
        """``y += v`` updates an array in place; lowering it as ``y = y + v`` is right only when
        no other name can see that array, or when ``y`` is a number (a NumPy scalar such as
        ``w[0]`` of a vector, a Python float: ``+=`` then makes a new one). Where adgen cannot
        show that no other name sees it, the update is lowered with a check that ``y`` is a
        number, which the argument kinds of the call decide before the code runs
        (:func:`adgen.middle.shapes.settle_checks`): refused there if ``y`` is an array."""
        name = stmt.target.id
        atom = self.env.get(name)
        if isinstance(atom, (ir.Tup, ir.Dct)):
            self.refuse(
                stmt,
                f"in-place update of `{name}` (it is a tuple or list of values)",
                f"write `{name} = {name} {_operator(stmt)} ...`",
            )
        if self.parsed.filename.startswith("<adgen ") and name not in self.params:
            return  # adgen's own code (see ownership_problem)
        if name in self.multi:
            why = "" if self.made_here(name) else self.blocks_sharing_problem(name)
        else:
            why = self.sharing_problem(name)
        if not why:
            return
        old = self.env[name]
        if self.is_list(old):  # `xs += ys` extends the list in place: never a new value
            self.refuse(
                stmt,
                f"in-place update of `{name}` ({why}; Python extends the list in place)",
                f"write `{name} = {name} + ...` to make a new list",
            )
        what = (
            f"in-place update of `{name}` ({why}): `{name}` is an array here, which "
            f"`{_operator(stmt)}=` would change in place"
        )
        bound = _BOUND_TO.search(why)
        copy = f"`{name} = {bound.group(1)}.copy()`" if bound else f"`{name} = ....copy()`"
        hint = f"write `{name} = {name} {_operator(stmt)} ...` to make a new array" + (
            f", or bind `{name}` to a copy ({copy})" if "view" in why or bound else ""
        )
        self.add_number_check(old, what, hint)

    def sharing_problem(self: Lowerer, name: str) -> str:
        """Why another name could see the array of ``name`` (not rebound in blocks), at this
        point of the function ("" if none can)."""
        atom = self.env.get(name)
        if atom is None or isinstance(atom, ir.Const):
            return ""
        if isinstance(atom, ir.Free):
            return "" if atom.name in self.scalars else "it is a global value"
        assert isinstance(atom, ir.Var)
        return self.value_problem(atom, name, live_only=True)

    def value_problem(
        self: Lowerer, atom: ir.Var, name: str | None, live_only: bool = False
    ) -> str:
        """Why a name other than ``name`` could see ``atom``'s array now ("" if none can):
        what the IR says it shares memory with (views, their bases), and which names (here,
        in the callers of an inlined function, in tuples) or lists hold any of that. With
        ``live_only``, a name nothing reads again (:meth:`dead_after`) does not count: it
        cannot tell an update in place from a new value."""
        family = self.shares_with(atom.name)
        holders = [
            (user, a, v, shared)
            for lowerer in self.lowerers()
            for user, a in lowerer.env.items()
            if not (lowerer is self and user == name)
            for v in ir.atom_vars(a)
            for shared in [self.shares_with(v)]
            if shared & family  # (only those are asked whether they are read again)
            and not (live_only and self.dead_after(lowerer, user))
        ]
        for user, a, v, _ in holders:
            if v == atom.name:
                return f"it is also `{user}`" if a == atom else f"`{user}` holds it too"
        fresh = live_only and any(  # `vx_new = advect(...)` in this block, then passed here
            lowerer.fresh_here(user)
            for lowerer in self.lowerers()
            for user, a in lowerer.env.items()
            if a == atom and user in lowerer.multi
        )
        # (or a new array whichever branches its name is bound in: the one lowered made it,
        # and what it is a copy of, back to the operation that made it, are that array)
        new = self.new_array(atom)
        why = self.storage_problem(atom.name, rebound_ok=fresh or new)
        if why:
            return why
        made = self.producers[atom.name]
        for v in sorted(family - {atom.name}):
            why = "" if new else self.storage_problem(v)
            if why:
                return f"it may be a view of {why.removeprefix('it is ')} (made by {made.name})"
        for user, _, _, shared in holders:
            if shared & family:
                return f"`{user}` may see its array (a view or another name of it)"
        if any(self.shares_with(h) & family for h in self.held):
            return "a list holds it (or a view of it)"
        return ""

    def dead_after(self: Lowerer, lowerer: Lowerer, user: str) -> bool:
        """Is ``user`` (a name of ``lowerer``, this function or one it is inlined in) never read
        again? In this function: not read by the statement being lowered nor after it. In a
        caller: passed once, directly, to the call of the statement being lowered there
        (``vx, vy = project(vx_new, vy_new)``), and not read after that statement."""
        stmt = lowerer.current
        if lowerer.parsed.filename.startswith("<adgen ") or user in lowerer.params:
            return False
        if lowerer is self:
            if _loads(stmt, user):
                return False
        elif not _passed_once(stmt, user):
            return False
        return not _read_after(lowerer.node, stmt, user)

    def note_binding(self: Lowerer, user: str, name: str, atom: ir.Atom) -> None:
        """Remember where a name rebound in blocks was last bound to an array no other name
        sees (a number, a new array, another name's array nobody else holds): an update of
        it later in the same block, before anything takes a view of it, is then of a new
        array whatever earlier iterations of a loop left in other names."""
        if user not in self.multi or self.parsed.filename.startswith("<adgen "):
            return
        before = self.fresh_binding.pop(user, None)
        if isinstance(atom, ir.Const):
            fresh, after = True, 1
        elif isinstance(atom, ir.Var) and atom.name == name:  # computed into its own name
            made = self.producers.get(name)
            fresh = made is not None and not self.storage_problem_of(made)
            last = self.block[-1] if self.block else None
            copied = (
                isinstance(last, ir.Assign)
                and made is not None
                and self.copying(made, last.args, last.kwargs)
            )
            if fresh and made is not None and made.view and not copied:  # a view?
                viewed = set(ir.atom_vars(last.args[0])) if isinstance(last, ir.Assign) else set()
                fresh = (
                    (
                        isinstance(last, ir.Assign)
                        and last.targets == (name,)
                        and made.differentiable
                        and bool(last.args)
                        and all(not self.value_problem(ir.Var(v), user) for v in viewed)
                        and name not in viewed
                    )
                    or (  # `grad = grad.ravel()` of its own array, new and seen by no other name
                        viewed == {name}
                        and before is not None
                        and before[0] is self.block
                        and not _rebinds(self.block[before[1] : -1], name)
                        and not self.seen_by_others(user, ir.Var(name))
                    )
                )
            if not fresh and isinstance(last, ir.If):  # a helper returning from branches
                fresh = self.new_array(atom)  # (`ret = a @ b` in each: new whichever ran)
            after = 0
        elif isinstance(atom, ir.Var):  # copied into it next (bind)
            # (or a helper's result, a new array it made: `K = euclidean_distances(X, Y)`)
            fresh = not self.value_problem(atom, user) or self.new_array(atom)
            after = 1
        else:
            return
        if fresh:
            self.fresh_binding[user] = (self.block, len(self.block) + after, self.current)

    def fresh_here(self: Lowerer, name: str) -> bool:
        """Was ``name`` (rebound in blocks) bound to a new array earlier in this very block,
        not rebound since, and is it held by no other name or list now?"""
        found = self.fresh_binding.get(name)
        atom = self.env.get(name)
        if found is None or found[0] is not self.block or not isinstance(atom, ir.Var):
            return False
        if _rebinds(self.block[found[1] :], atom.name):
            return False
        return not self.seen_by_others(name, atom)

    def made_by_loop(self: Lowerer, name: str) -> bool:
        """Was ``name`` last bound in this block by a loop that runs at least once, whose last
        pass left it a new array (``activation = X``, then ``for i in range(n_layers - 1):
        activation = activation @ W[i]``: not ``X`` any more), held by no other name now?"""
        atom = self.env.get(name)
        if not isinstance(atom, ir.Var):
            return False
        k = _last_binding(self.block, atom.name, len(self.block))
        if k is None or not isinstance(self.block[k], ir.For):
            return False
        return self.new_array(atom) and not self.seen_by_others(name, atom)

    def seen_by_others(self: Lowerer, name: str, atom: ir.Var) -> bool:
        """Does a name other than ``name`` (here or in the functions around), or a list, hold
        ``atom``'s array or a view of it now -- or the array ``atom`` is a copy or a view of
        (``K, L = pair()`` of a helper returning ``d, d``: ``K``'s copy and ``L`` are ``d``)?"""
        others = [
            v
            for lowerer in self.lowerers()
            for user, a in lowerer.env.items()
            if not (lowerer is self and user == name)
            for v in ir.atom_vars(a)
        ]
        family = self.made_family(name, atom)
        return any(family & self.shares_with(v) for v in others) or any(
            atom.name in self.shares_with(v) for v in self.held
        )

    def shares_with(self: Lowerer, var: str) -> set[str]:
        """The IR names whose memory ``var``'s array may be (a part of): itself, what it is a
        view of, and so on."""
        found, todo = {var}, [var]
        while todo:
            for base in self.bases.get(todo.pop(), ()):
                if base not in found:
                    found.add(base)
                    todo.append(base)
        return found

    def storage_problem(self: Lowerer, var: str, rebound_ok: bool = False) -> str:
        """Why the IR name ``var`` may be an array other names see, whatever this function
        does ("" if it is one the function made). ``rebound_ok``: a name rebound in blocks
        whose latest binding made a new array (:meth:`fresh_here`) is as good as new."""
        made = self.producers.get(var)
        if made is None:
            return "it is an argument passed by the caller"
        if var in self.rebound and not rebound_ok:
            return "it is a variable rebound in a loop or branch"
        if var in self.held:
            return "it is an item of a list"
        if made.view and not self.bases.get(var) and not self.is_copy(var):
            return "it is a global value"
        return self.storage_problem_of(made)

    def storage_problem_of(self: Lowerer, made: registry.Primitive) -> str:
        """Why what ``made`` returns may be an array other names see ("" if it is new)."""
        if made in (registry.LIST_NEW, registry.POP):
            return "it is an item of a list"
        if made.refusal is not None or made.callee is not None or made.user_fn is not None:
            return f"it is the result of `{made.name}`, which may be another array"
        return ""

    def lowerers(self: Lowerer) -> list[Lowerer]:
        """This Lowerer, and those of the functions an inlined call is lowered inside or a
        nested ``def`` is defined in: every name that can see a value now."""
        found: list[Lowerer] = [self]
        for lowerer in found:
            for other in (lowerer.parent, lowerer.enclosing):
                if other is not None and all(other is not f for f in found):
                    found.append(other)
        return found

    def blocks_sharing_problem(self: Lowerer, name: str) -> str:
        """For a variable rebound inside blocks the order of assignments is not known here, so
        ``y += v`` is taken for a new value only when *every* assignment to ``y`` makes a new
        value and no statement could make another name share ``y``'s array."""
        if name in self.params:
            return "it is an argument passed by the caller"
        if self.viewed_by_nested(name):
            return "a function defined here may return a view of it"
        for node in _own_nodes(self.node):
            if id(node) in self.root.never_run:  # (a branch decided never to run)
                continue
            if isinstance(node, (gast.Assign, gast.AugAssign)):
                targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                stored = {
                    n.id
                    for t in targets
                    for n in gast.walk(t)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
                }
                fresh = isinstance(node, gast.AugAssign) or self.fresh_value(node.value)
                read = {n.id for n in gast.walk(node.value) if isinstance(n, gast.Name)}
                line = self.parsed.line(node)
                if name in stored and not fresh:
                    text = _source_text(node.value)
                    return f"line {line} binds it to `{text}`, another name's array or a view"
                if name in read and (not fresh or self.holds(node.value, name)):
                    return f"line {line} may give another name its array"
            elif _appends(node) and self.shares(node.args[-1], name):
                return "a list may hold it"
            elif _iterated_into(node, name):
                return "a loop binds it to the items of what it iterates over"
        return ""

    def viewed_by_nested(self: Lowerer, name: str) -> bool:
        """May a function defined in this one return ``name``'s array or a view of it?"""
        return any(
            name in free and any(_views_of(r, name) for r in results)
            for free, results in _nested_results(self.node)
        )

    def holds(self: Lowerer, node: Any, name: str, whole_only: bool = False) -> bool:
        """Does this new list (a display or a comprehension) hold ``name``'s array (or a view
        of it) as an item?"""
        if isinstance(node, gast.List):
            return any(self.shares(e, name, whole_only) for e in node.elts)
        if isinstance(node, gast.ListComp):
            return self.shares(node.elt, name, whole_only)
        return False

    def shares(self: Lowerer, node: Any, name: str, whole_only: bool = False) -> bool:
        """Could this value be ``name``'s array, a view of it, or a list holding it?"""
        if isinstance(node, (gast.List, gast.ListComp)):
            return self.holds(node, name, whole_only)
        if isinstance(node, gast.Tuple):  # `A, B = np.stack(xs), np.stack(ys)`: item by item
            return any(self.shares(e, name, whole_only) for e in node.elts)
        if whole_only and isinstance(node, gast.Call) and _numpy_call(self, node):
            return False  # `np.reshape(zi, shape)`: an array, never the list `shape` itself
        return not self.fresh_value(node) and _views_of(node, name, whole_only)

    def fresh_value(self: Lowerer, node: Any) -> bool:
        """Does this expression certainly make a new value (not a view or an alias)?"""
        if isinstance(node, (gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare, gast.List)):
            return True
        if isinstance(node, gast.ListComp):
            return True
        if isinstance(node, gast.IfExp):
            return self.fresh_value(node.body) and self.fresh_value(node.orelse)
        viewed = _viewed(node)
        if viewed is not None:  # `np.array(rows).T`: a view of a new array no name holds
            return self.fresh_value(viewed)
        if isinstance(node, gast.Call) and self.root.fresh_calls.get(id(node)):
            return True  # (a helper inlined here returned a new array, each time)
        if isinstance(node, gast.Call):
            try:
                ok, fn = self.static_object(node.func)
            except UnresolvedNameError:  # `v.mean()` of a local bound later in the function
                ok, fn = False, None  # (check_owned reads every statement, not only past ones)
            if not ok and isinstance(node.func, gast.Attribute):
                method = registry.method_function(node.func.attr)
                ok, fn = method is not None, method[0] if method else None
            prim = registry.lookup(fn) if ok else None
            copied = any(
                k.arg == "copy" and isinstance(k.value, gast.Constant) and k.value.value is True
                for k in node.keywords
            )
            if copied and registry.returns_arrays_as_they_are(fn):
                return True  # np.asarray(x, copy=True)
            if ok and isinstance(fn, Probe):  # `_adgen_tried_1 = _adgen_probe_1(xs)`: a number
                return True
            return prim is not None and not prim.view
        return False


# an array's attributes and methods that give a view of it (of its own memory only)
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})
_VIEW_METHODS = frozenset({"reshape", "ravel", "transpose", "squeeze", "swapaxes", "view"})


def _numpy_call(lowerer: Lowerer, node: gast.Call) -> bool:
    """Is ``node`` a call of a NumPy or SciPy function adgen has a rule for (whose result
    is an array or a number, never a list it was given)?"""
    try:
        ok, fn = lowerer.static_object(node.func)
    except AdgenError:
        return False
    module = getattr(fn, "__module__", None) or ""
    numpy = isinstance(fn, np.ufunc) or module.split(".")[0] in ("numpy", "scipy")
    return ok and numpy and registry.lookup(fn) is not None


def _viewed(node: Any) -> Any:
    """The array ``node`` is a view of, where it is an array's view attribute or method
    (``a.T``, ``a.reshape(n, -1)``) -- only arrays have them, so where that array is new, no
    other name sees the view (it is no list holding other names' arrays); else None."""
    if isinstance(node, gast.Attribute) and node.attr in _VIEW_ATTRIBUTES:
        return node.value
    if (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and node.func.attr in _VIEW_METHODS
    ):
        return node.func.value
    return None


def _into_itself(node: Any) -> bool:
    """Is ``node`` ``y = f(..., out=y)`` or ``y = np.exp(y, y)`` (the result written into
    ``y``'s own array)?"""
    if not (
        isinstance(node, gast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], gast.Name)
        and isinstance(node.value, gast.Call)
    ):
        return False
    outs = _out_arguments(node.value)
    return len(outs) == 1 and isinstance(outs[0], gast.Name) and outs[0].id == node.targets[0].id


def _views_of(node: Any, name: str, whole_only: bool = False) -> bool:
    """Could this expression's value share memory with ``name``'s array? (``whole_only``:
    only the object itself counts, not its items -- for lists.)"""
    if isinstance(node, gast.Name):
        return node.id == name
    if isinstance(node, (gast.Subscript, gast.Attribute)):
        return not whole_only and _views_of(node.value, name)
    if isinstance(node, (gast.Tuple, gast.List)):  # (a tuple of a list's items holds no list)
        return any(_views_of(e, name, whole_only) for e in node.elts)
    if isinstance(node, gast.IfExp):
        return _views_of(node.body, name, whole_only) or _views_of(node.orelse, name, whole_only)
    if isinstance(node, gast.Call):
        if whole_only and _is_pop(node):
            return False  # an item of the list, not the list
        if isinstance(node.func, gast.Attribute) and _views_of(node.func.value, name, whole_only):
            return True
        return any(_views_of(a, name, whole_only) for a in node.args)
    return False


class _Stacks:
    """What the lists adgen's reverse-mode code saves values on (``stack.append(v)``, later
    ``v = stack.pop()``) hold, in straight-line code: for each saved value, whether it was a
    new array of the function's own when ``name`` was saved (None: another value). Python
    pops the last value appended, so a pop into ``name`` gives back what it saved. A list
    appended to or popped from inside a compound statement is no longer followed.

    >>> import gast
    >>> code = "stack.append(v)\\nv = v.copy()\\nstack.append(v)\\nv = v[1]\\nv = stack.pop()\\n"
    >>> body = gast.parse(code + "v = stack.pop()\\n").body
    >>> stacks = _Stacks("v")  # (v: the caller's array, then a copy, a view, put back twice)
    >>> [stacks.step(stmt, fresh) for stmt, fresh in zip(body, [0, 0, 1, 1, 0, 1])]
    [None, None, None, None, True, False]
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.saved: dict[str, list[bool | None] | None] = {}

    def step(self, stmt: Any, fresh: bool) -> bool | None:
        """Follow ``stmt`` (``fresh``: is ``name`` a new array before it); returns what a pop
        into ``name`` there makes it (False where not followed), None for no such pop."""
        simple = isinstance(stmt, (gast.Assign, gast.Expr, gast.AugAssign))
        restored: bool | None = None
        for node in gast.walk(stmt):
            move = _stack_call(node)
            if move is None:
                continue
            verb, stack = move
            if not simple:  # (how many times it runs is not followed here)
                self.saved[stack] = None
                continue
            items = self.saved.setdefault(stack, [])
            if verb == "append":
                value = node.args[0]
                named = isinstance(value, gast.Name) and value.id == self.name
                if items is not None:
                    items.append(fresh if named else None)
            elif (
                isinstance(stmt, gast.Assign)
                and stmt.value is node
                and [getattr(t, "id", None) for t in stmt.targets] == [self.name]
            ):
                restored = bool(items.pop()) if items else False
            elif items:
                items.pop()
        return restored


def _stack_call(node: Any) -> tuple[str, str] | None:
    """``(verb, list)`` of ``xs.append(v)`` or ``xs.pop()`` of a list named ``xs``."""
    if not (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and isinstance(node.func.value, gast.Name)
    ):
        return None
    verb = node.func.attr
    if verb == "append" and len(node.args) == 1 and not node.keywords:
        return verb, node.func.value.id
    if verb == "pop" and not node.args and not node.keywords:
        return verb, node.func.value.id
    return None


_BOUND_TO = re.compile(r"binds it to `(.+)`, another")


def _source_text(node: Any) -> str:
    """The Python text of an expression of the user's (shortened when long)."""
    text = ast.unparse(gast.gast_to_ast(node))
    return text if len(text) <= 40 else text[:37] + "..."


def _operator(stmt: Any) -> str:
    """The text of an augmented assignment's operator (``+`` of ``y += v``)."""
    return _OPERATOR_TEXT.get(type(stmt.op).__name__, "+")


def _appends(node: Any) -> bool:
    """``xs.append(v)`` (or ``insert``): a list then holds ``v``."""
    return (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and node.func.attr in ("append", "insert")
        and bool(node.args)
    )


def _iterated_into(node: Any, name: str) -> bool:
    """Is ``node`` a loop binding ``name`` to the items of an array or list (rows: views of
    it, or items others hold), not to the integers of a ``range``?"""
    if not isinstance(node, gast.For):
        return False
    if not any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(node.target)):
        return False
    it = node.iter
    return not (
        isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range"
    )


def _rebinds(stmts: list[ir.Stmt], var: str) -> bool:
    """Does any of these statements (at any depth) bind ``var`` again, other than by writing
    into it (``var[i] = v`` keeps its array)?"""
    inside = ir.Function("", [], stmts, "", 0, {})
    for s in inside.statements():
        if isinstance(s, ir.Assign) and var in s.targets and s.prim is not registry.SETITEM:
            return True
        if isinstance(s, ir.For) and s.target == var:
            return True
    return False


def _compound_after(fn: Any, binding: Any, current: Any) -> Any:
    """The statement of the block holding ``binding`` (a statement of ``fn``) that comes after
    it and holds ``current`` inside it (None if there is none: ``current`` is not nested in a
    statement after ``binding`` in the same block)."""
    for node in _own_nodes(fn):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list) or not any(s is binding for s in stmts):
                continue
            after = stmts[[id(s) for s in stmts].index(id(binding)) + 1 :]
            for stmt in after:
                if stmt is not current and any(n is current for n in gast.walk(stmt)):
                    return stmt
            return None
    return None


def _item_of(node: Any, name: str) -> bool:
    """``yi = name[index]``: one name bound to a subscript of ``name`` (a number of a vector,
    or a view: :meth:`InPlaceMixin.check_kept_item` checks which where it is bound)."""
    return (
        isinstance(node, gast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], gast.Name)
        and isinstance(node.value, gast.Subscript)
        and isinstance(node.value.value, gast.Name)
        and node.value.value.id == name
    )


def _written_from(lowerer: Any) -> set[str]:
    """The names written in place by the statement being lowered (at the function's top
    level) or one after it: not by the top-level statements before the one holding it,
    which ran before any view it binds existed."""
    body, current = lowerer.node.body, lowerer.current
    for k, stmt in enumerate(body):
        if stmt is current or any(n is current for n in gast.walk(stmt)):
            before = {id(n) for earlier in body[:k] for n in gast.walk(earlier)}
            return _written_in_place([n for n in _own_nodes(lowerer.node) if id(n) not in before])
    return _written_in_place(_own_nodes(lowerer.node))  # (not found: every write counts)
