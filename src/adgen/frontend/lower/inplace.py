# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower in-place writes, and check that no other name sees the array written.

``y[i] = v`` and ``y[i] += v`` write into an array: allowed only on an array the function made
itself, which no other name (an argument, a global, a view, another variable) can see -- else
the write would change that value too, and the derivative would be wrong. ``y += v``, which
Python does in place, is lowered as ``y = y + v`` only where no other name sees ``y``'s array.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.errors import UnresolvedNameError
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.syntax import _is_pop
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
        self: Lowerer, stmt: Any, target: Any, value: Any, op: Any, atom: ir.Atom | None = None
    ) -> None:
        """``y[index] = v`` and ``y[index] += v``: an in-place write into an array the function
        made itself (``np.zeros(...)``, ``x.copy()``, arithmetic results). ``atom``: the value
        already computed (an item of ``y[0], y[1] = ...``), instead of ``value``'s."""
        if not isinstance(target.value, gast.Name):
            self.refuse(
                target, "writing into an expression", "write `y[i, j] = v`, not `y[i][j] = v`"
            )
        name = target.value.id
        if name not in self.env:
            self.refuse(target.value, f"writing into `{name}`, which is not a local array", "")
        self.check_owned(stmt, name, "write into")
        base = self.env[name]
        index = self.index(target.slice, name)
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
        ir_name = self.multi[name]
        self.block.append(ir.Assign((ir_name,), registry.SETITEM, (base, index, v), (), self.line))
        self.env[name] = ir.Var(ir_name)

    def check_owned(self: Lowerer, stmt: Any, name: str, verb: str) -> None:
        """Writing into ``name``'s array must not be seen through any other name: it must be
        made inside the function, every binding a new array, and no name kept as a view."""
        why = self.ownership_problem(name, verb)
        if why:
            self.refuse(
                stmt,
                f"in-place {verb} `{name}` ({why})",
                f"make `{name}` a new array first (`{name} = {name}.copy()`), "
                "or copy the slice you keep",
            )

    def ownership_problem(self: Lowerer, name: str, verb: str) -> str:
        """Why writing into ``name``'s array (or list) could be seen through another name
        ("" if it cannot)."""
        why = ""
        if self.parsed.filename.startswith("<adgen ") and name not in self.params:
            # adgen's own reverse-mode code: its temporaries may be views of arrays it writes
            # later, but every overwritten slot is saved and put back before an adjoint reads
            # such a view again -- the generated code has the meaning of its values
            return ""
        # a list's items are not views of it: only another name for the list itself matters
        lists = verb in ("append to", "pop from", "extend")
        if name in self.params:
            why = "it is an argument passed by the caller"
        for node in gast.walk(self.node):
            if why:
                break
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
                    why = "it may be a view of another array or another variable's array"
                elif stored and not fresh and _views_of(node.value, name, lists):
                    kept = sorted(stored) or ["a name"]
                    why = f"`{kept[0]}` keeps a view of it"
            elif isinstance(node, gast.For) and not lists and _views_of(node.iter, name):
                why = "a loop iterates over its rows"
        return why

    def check_in_place(self: Lowerer, stmt: Any) -> None:
        """``y += v`` updates an array in place; lowering it as ``y = y + v`` is right only when
        no other name can see that array: refuse when ``y`` is a parameter, a global, a view
        (slice, reshape, transpose) or another variable's value too."""
        name = stmt.target.id
        atom = self.env.get(name)
        if name in self.multi:
            self.check_in_place_in_blocks(stmt, name)
            return
        if atom is None or isinstance(atom, ir.Const):
            return
        if isinstance(atom, ir.Var):
            prim = self.producers.get(atom.name)
            shared = [u for u, a in self.env.items() if u != name and a == atom]
            if prim is not None and not prim.view and not shared:
                return
            if shared:
                why = f"it is also `{shared[0]}`"
            elif prim is None:
                why = "it is an argument passed by the caller"
            else:
                why = f"it is a view of another array (made by {prim.name})"
        else:
            why = "it is a global value"
        self.refuse(
            stmt,
            f"in-place update of `{name}` ({why}; arrays would change in place)",
            f"write `{name} = {name} {_OPERATOR_TEXT.get(type(stmt.op).__name__, '+')} ...` "
            "to make a new value",
        )

    def check_in_place_in_blocks(self: Lowerer, stmt: Any, name: str) -> None:
        """For a variable rebound inside blocks the order of assignments is not known here, so
        ``y += v`` is allowed only when *every* assignment to ``y`` makes a new value and no
        statement could make another name share ``y``'s array."""
        why = ""
        if name in self.params:
            why = "it is an argument passed by the caller"
        for node in gast.walk(self.node):
            if isinstance(node, (gast.Assign, gast.AugAssign)) and not why:
                targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                stored = {
                    n.id
                    for t in targets
                    for n in gast.walk(t)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
                }
                fresh = isinstance(node, gast.AugAssign) or self.fresh_value(node.value)
                read = {n.id for n in gast.walk(node.value) if isinstance(n, gast.Name)}
                if name in stored and not fresh:
                    why = "it may be a view or another variable's array"
                elif name in read and not fresh:
                    why = "another variable may share its array"
        if why:
            self.refuse(
                stmt,
                f"in-place update of `{name}` ({why}; arrays would change in place)",
                f"write `{name} = {name} {_OPERATOR_TEXT.get(type(stmt.op).__name__, '+')} ...` "
                "to make a new value",
            )

    def fresh_value(self: Lowerer, node: Any) -> bool:
        """Does this expression certainly make a new value (not a view or an alias)?"""
        if isinstance(node, (gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare, gast.List)):
            return True
        if isinstance(node, gast.ListComp):
            return True
        if isinstance(node, gast.IfExp):
            return self.fresh_value(node.body) and self.fresh_value(node.orelse)
        if isinstance(node, gast.Call):
            try:
                ok, fn = self.static_object(node.func)
            except UnresolvedNameError:  # `v.mean()` of a local bound later in the function
                ok, fn = False, None  # (check_owned reads every statement, not only past ones)
            if not ok and isinstance(node.func, gast.Attribute):
                method = registry.method_function(node.func.attr)
                ok, fn = method is not None, method[0] if method else None
            prim = registry.lookup(fn) if ok else None
            return prim is not None and not prim.view
        return False


def _views_of(node: Any, name: str, whole_only: bool = False) -> bool:
    """Could this expression's value share memory with ``name``'s array? (``whole_only``:
    only the object itself counts, not its items -- for lists.)"""
    if isinstance(node, gast.Name):
        return node.id == name
    if isinstance(node, (gast.Subscript, gast.Attribute)):
        return not whole_only and _views_of(node.value, name)
    if isinstance(node, gast.Tuple):
        return any(_views_of(e, name) for e in node.elts)
    if isinstance(node, gast.IfExp):
        return _views_of(node.body, name) or _views_of(node.orelse, name)
    if isinstance(node, gast.Call):
        if whole_only and _is_pop(node):
            return False  # an item of the list, not the list
        if isinstance(node.func, gast.Attribute) and _views_of(node.func.value, name):
            return True
        return any(_views_of(a, name) for a in node.args)
    return False
