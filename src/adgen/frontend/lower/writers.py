# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower the calls that write into an array the function made, as the writes they make.

``np.fill_diagonal(a, v)``, ``np.put(a, ind, v)`` and ``np.put_along_axis(a, indices, v,
axis)`` (declared by the rules with :func:`adgen.rules.registry.writes_into`) are
``a[positions] = v``, ``np.copyto(a, v)`` is ``a[...] = v``; ``a.fill(v)`` and
``a.sort()`` are ``a[...] = v`` and ``a[...] = np.sort(a)``; ``np.add.at(a, index, b)`` is
``a[...] = rt.added_at(a, index, b)`` (:func:`adgen.rules.registry.accumulates_at`). Each is
then an in-place write as any other (:mod:`adgen.frontend.lower.inplace`: the array must be
one the function made, seen by no other name). Arguments that change what is written in a
way adgen does not read (``where=``, ``mode="wrap"``) are refused by name; a call whose first
argument is not one of the function's own names (an outside object's array) is left to the
calls without a rule (run as written where no derivative reaches it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.frontend.lower.state import LowererState
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class WritersMixin(LowererState):
    """Calls that write into their first argument, lowered as writes."""

    def call_write(self: Lowerer, stmt: Any, call: gast.Call) -> bool:
        """Lower ``call``, a statement, as the write it makes, if it is one of those above on
        one of the function's own names; else False (nothing lowered)."""
        if self.method_write(stmt, call):
            return True
        if not call.args or not self.is_local_name(call.args[0]):
            return False
        if isinstance(call.func, gast.Attribute) and call.func.attr == "at":
            ok, ufunc = self.static_object(call.func.value)
            helper = registry.at_writer(ufunc) if ok else None
            if helper is not None:
                self.at_write(stmt, call, helper)
                return True
            return False
        ok, fn = self.static_object(call.func)
        writer = registry.in_place_writer(fn) if ok else None
        if writer is None:
            return False
        self.write_through(stmt, call, writer)
        return True

    def write_through(self: Lowerer, stmt: Any, call: gast.Call, writer: Any) -> None:
        """``np.fill_diagonal(a, v)``, ``np.copyto(a, v)``, ``np.put(a, ind, v)``... as a
        statement (a function the rules declare writes into its first argument, see
        :class:`adgen.rules.registry.Writer`): the write ``a[positions(a, ...)] = v``, with
        its checks."""
        given = self.writer_arguments(call, writer, self.called_name(call))
        array = given[writer.params[0]]  # (a name of the function's own: see call_write)
        extra = [self.expr(given[p], None, "positions") for p in writer.index]
        if writer.through is not None:  # np.putmask(a, mask, v): a[...] = rt.putmasked(...)
            value = self.expr(given[writer.value], None, array.id)
            new = self.call_prim(writer.through, [self.env[array.id], *extra, value], array.id)
            self.write_in_place(stmt, _target(array, call), None, None, atom=new)
        elif writer.positions is None:  # np.copyto(a, v): a[...] = v
            self.write_in_place(stmt, _target(array, call), given[writer.value], None)
        else:
            index = self.call_prim(writer.positions, [self.env[array.id], *extra], "positions")
            target = _target(array, call, None)  # (the index is `index`)
            self.write_in_place(stmt, target, given[writer.value], None, index=index)

    def writer_arguments(self: Lowerer, call: gast.Call, writer: Any, name: str) -> dict[str, Any]:
        """The arguments of a call of a function writing into its first argument, by
        parameter name; refused where one changes what is written in a way adgen does not
        read (``np.copyto(..., where=m)``, ``np.put(..., mode="wrap")``)."""
        if any(isinstance(a, gast.Starred) for a in call.args) or len(call.args) > len(
            writer.params
        ):
            self.refuse(call, f"this call of `{name}` (its arguments)", "pass them one by one")
        given = dict(zip(writer.params, call.args))
        for kw in call.keywords:
            if kw.arg is None or kw.arg not in writer.params or kw.arg in given:
                self.refuse(call, f"this call of `{name}` (its keyword arguments)", "")
            given[kw.arg] = kw.value
        fixed = dict(writer.fixed)
        for param, node in given.items():
            if param in fixed and not (
                isinstance(node, gast.Constant) and node.value == fixed[param]
            ):
                self.refuse(
                    node,
                    f"`{name}` with `{param}` other than {fixed[param]!r}",
                    "write the assignment it makes (`a[...] = v`) yourself",
                )
        missing = [p for p in (writer.params[0], writer.value, *writer.index) if p not in given]
        if missing:
            self.refuse(call, f"this call of `{name}` without `{missing[0]}`", "")
        return given

    def is_local_name(self: Lowerer, node: Any) -> bool:
        """Is ``node`` a name of the function's own values (not an outside object's)?"""
        return isinstance(node, gast.Name) and node.id in self.env

    def called_name(self: Lowerer, call: gast.Call) -> str:
        func = call.func
        return func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", "?")

    def method_write(self: Lowerer, stmt: Any, call: gast.Call) -> bool:
        """``a.fill(v)`` and ``a.sort()`` (``axis=``, ``kind=``) on an array the function
        made, as statements: the writes ``a[...] = v`` and ``a[...] = np.sort(a, axis)``.
        False where the call is not one of them on a local name (a list's ``.sort()``)."""
        func = call.func
        if not (
            isinstance(func, gast.Attribute)
            and func.attr in registry.IN_PLACE_METHODS
            and isinstance(func.value, gast.Name)
            and func.value.id in self.env
            and not self.is_list(self.env[func.value.id])
        ):
            return False
        name, method = func.value.id, func.attr
        params = ("value",) if method == "fill" else ("axis", "kind")
        given = dict(zip(params, call.args))
        if len(call.args) > len(params) or any(
            kw.arg not in params or kw.arg in given for kw in call.keywords
        ):
            self.refuse(call, f"this call of `{name}.{method}()` (its arguments)", "")
        given.update({kw.arg: kw.value for kw in call.keywords if kw.arg is not None})
        target = _target(func.value, call)
        if method == "fill":
            if "value" not in given:
                self.refuse(call, f"`{name}.fill()` without a value", "")
            self.write_in_place(stmt, target, given["value"], None)
            return True
        axis = [self.expr(given["axis"], None, "axis")] if "axis" in given else []
        ordered = self.call_prim(registry.IN_PLACE_METHODS[method], [self.env[name], *axis], name)
        self.write_in_place(stmt, target, None, None, atom=ordered)
        return True

    def at_write(self: Lowerer, stmt: Any, call: gast.Call, helper: Any) -> None:
        """``np.add.at(a, index, b)`` as a statement: ``a[...] = helper(a, index, b)``
        (repeated positions adding up)."""
        starred = any(isinstance(a, gast.Starred) for a in call.args)
        if len(call.args) != 3 or call.keywords or starred:
            self.refuse(
                call,
                "this call of a ufunc's `.at`: adgen reads `np.add.at(a, index, b)` on a name "
                "`a`, three arguments",
                "",
            )
        array, index_node, b_node = call.args  # (`array`: a name of the function's own)
        # (an index list stays a list: a tuple would index several axes)
        given = self.expr(index_node, None, "at")
        index = self.as_written(index_node, given, "at", "np.add.at")
        if isinstance(index_node, gast.Name) and not isinstance(given, ir.Tup):
            displays = (gast.List, gast.ListComp)
            if any(
                isinstance(n, gast.Assign)
                and isinstance(n.value, displays)
                and any(isinstance(t, gast.Name) and t.id == index_node.id for t in n.targets)
                for n in gast.walk(self.node)
            ):  # (a list rebound in blocks: a tuple in adgen's code)
                self.refuse(
                    index_node,
                    f"passing `{index_node.id}` to `np.add.at`: adgen made this list a tuple, "
                    "which would index several axes",
                    "write the list in the call itself (`np.add.at(a, [0, 2], b)`), or pass an "
                    "array (`np.array(...)`)",
                )
        b = self.expr(b_node, None, "at")
        value = self.call_prim(helper, [self.env[array.id], index, b], array.id)
        self.write_in_place(stmt, _target(array, call), None, None, atom=value)


def _target(array: gast.Name, at: Any, index: Any = Ellipsis) -> gast.Subscript:
    """The target ``a[...]`` (all of ``a``'s entries; ``a[None]`` where the write's index is
    given apart), placed at ``at``."""
    target = gast.Subscript(
        value=array, slice=gast.Constant(value=index, kind=None), ctx=gast.Store()
    )
    return gast.copy_location(target, at)
