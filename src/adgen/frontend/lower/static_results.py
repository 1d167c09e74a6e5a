# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Functions and objects a helper returns (issue 34, part 4).

``k = kernel.clone_with(theta); k(X)``, ``make(s)(x)``, ``g = pick("tanh"); g(x)``: a helper
adgen inlines returns a function, or an instance of the user's class it made, which the
caller then calls or binds. Such a result is not a value of the IR: where the caller can
take one -- bound to a plain name (``k = helper(...)``), called at once (``helper(...)(x)``),
or returned again from a helper so called -- the call is lowered in a mode where the helper's
``return`` of a function, an object, or an ``a if c else b`` of those decided when
transforming gives it as itself (a :class:`~adgen.frontend.lower.objects.StaticArg`).
Anywhere else it stays refused (``using the function ... as a value``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.errors import AdgenError
from adgen.frontend.lower.objects import StaticArg
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.syntax import _block_local, _last_binding_at

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class StaticTuple:
    """A tuple a helper returned that holds functions or objects as themselves
    (:class:`StaticArg`) beside values (atoms): ``return flat, unflatten``."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items


class StaticResultsMixin(LowererState):
    """Calls whose result may be a function or an object."""

    def call_maybe_static(self: Lowerer, node: gast.Call, target: str | None) -> Any:
        """Lower the call ``node`` where its result may be a function or an object the
        callee returns (a ``StaticArg``); else its value's atom, as for any call."""
        looked_up = self.static_getattr(node)
        if looked_up is not None:  # getattr(xp, f"atleast_{ndim}d")(x)
            return looked_up
        saved = self.root.static_result_for
        self.root.static_result_for = id(node)
        try:
            return self.expr(node, target, "result")
        finally:
            self.root.static_result_for = saved

    def static_getattr(self: Lowerer, node: gast.Call) -> StaticArg | None:
        """``getattr(xp, f"atleast_{ndim}d")`` of a module or an object adgen knows and a
        name known when transforming (a string, an f-string of constants): the function or
        object it names (a :class:`StaticArg`); None for any other call."""
        if len(node.args) != 2 or node.keywords or not isinstance(node.func, gast.Name):
            return None
        ok, fn = self.static_object(node.func)
        if not ok or fn is not getattr:
            return None
        name = self.static_string(node.args[1])
        base_ok, base = self.static_object(node.args[0]) if name is not None else (False, None)
        if not base_ok or not callable(getattr(base, str(name), None)):
            return None
        return StaticArg(getattr(base, str(name)))

    def static_string(self: Lowerer, node: Any) -> str | None:
        """The string ``node`` is when transforming: a literal, or an f-string whose values
        are constants (``f"atleast_{ndim}d"`` of ``ndim`` a constant); else None."""
        if isinstance(node, gast.Constant) and isinstance(node.value, str):
            return node.value
        if not isinstance(node, gast.JoinedStr):
            return None
        parts = []
        for value in node.values:
            if isinstance(value, gast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
                continue
            if not (
                isinstance(value, gast.FormattedValue)
                and value.conversion == -1
                and value.format_spec is None
                and isinstance(value.value, gast.Name)
            ):
                return None
            atom = self.settled(self.expr(value.value, None, "name"))
            if not (isinstance(atom, ir.Const) and type(atom.value) in (int, str, bool)):
                return None
            parts.append(str(atom.value))
        return "".join(parts)

    def returned_value(self: Lowerer, value: Any) -> Any:
        """``return value`` in an inlined helper whose caller takes a function or an object:
        the function or object itself, if it is one; else the value's atom."""
        if isinstance(value, gast.IfExp):
            test = self.expr(value.test, None, "cond")
            if isinstance(test, ir.Const):  # decided now: only that branch is read
                return self.returned_value(value.body if test.value else value.orelse)
        if isinstance(value, gast.Call) and self.made_class(value) is None:
            if not self.is_partial(value):  # (K(s), partial(f, k=k): made here, below)
                return self.call_maybe_static(value, self.call_target)
        if isinstance(value, gast.Tuple) and not any(
            isinstance(e, gast.Starred) for e in value.elts
        ):  # `return flat, unflatten`: items of both sorts
            items = [self.static_argument(e) for e in value.elts]
            if any(i is not None for i in items):
                return StaticTuple(
                    [
                        i if i is not None else self.expr(e, None, self.prefix + "out")
                        for i, e in zip(items, value.elts)
                    ]
                )
        found = self.static_argument(value)
        if found is not None:
            return found
        return self.expr(value, self.call_target, self.prefix + "out")

    def assign_call_result(self: Lowerer, stmt: Any) -> bool:
        """``k = helper(...)``: bound to what the helper returned, a function or an object as
        itself (a value is bound as any other); ``flat, unflatten = helper(...)`` item by
        item. False if not such a statement."""
        target, value = stmt.targets[0], stmt.value
        if self.assign_call_items(stmt):
            return True
        if not (
            len(stmt.targets) == 1
            and isinstance(target, gast.Name)
            and isinstance(value, gast.Call)
        ):
            return False
        if (
            target.id in self.multi
            and not (
                self.depth == 0
                and _last_binding_at(self.as_lowered(), stmt, target.id, self.tree_index())
            )
            and not _block_local(self.as_lowered(), value, target.id, self.tree_index())
        ):
            return False  # (bound again where a read could mean either: `lb = lb.fit(y)`,
            # `solver = make_solver(...)` in a loop body, are taken where every read follows
            # its own block's binding)
        name = self.new_name(target.id)
        result = self.call_maybe_static(value, name)
        if isinstance(result, StaticTuple) and target.id in self.multi:
            self.refuse(
                value,
                f"binding `{target.id}` to a tuple that holds a function or an object "
                "in a block, or a name bound again",
                "unpack it where it is returned: `a, f = helper(...)`",
            )
        if isinstance(result, StaticTuple):  # `temp = _quantile_iv(...)`, unpacked after
            self.env.pop(target.id, None)
            self.local_functions[target.id] = result
            self.bound.add(target.id)
            return True
        if isinstance(result, ir.Atom):
            self.bind(target.id, name, result)
            return True
        self.env.pop(target.id, None)
        self.local_functions[target.id] = result.value
        self.bound.add(target.id)
        return True

    def assign_call_items(self: Lowerer, stmt: Any) -> bool:
        """``flat, unflatten = helper(...)`` of a helper returning a tuple that holds a
        function or an object (autograd's ``flatten``): each name bound to its item, the
        function as itself. False (nothing lowered) if not such a statement; a tuple of
        values only is bound as any other."""
        target, value = stmt.targets[0], stmt.value
        held = self.held_tuple(value)  # (`a, f = temp` of `temp = helper(...)`: the same)
        if not (
            len(stmt.targets) == 1
            and isinstance(target, gast.Tuple)
            and (held is not None or isinstance(value, gast.Call))
            and all(isinstance(t, gast.Name) for t in target.elts)
            and (held is not None or self.made_class(value) is None)
        ):
            return False
        # a name blocks bind again takes a value only (a function or an object would have
        # to be known on every path); the held tuple's items are known before any is bound
        rebound = [t.id in self.multi for t in target.elts]
        if held is None and any(rebound):
            return False
        if held is not None and any(
            again and isinstance(item, StaticArg)
            for again, item in zip(rebound, held.items, strict=False)
        ):
            return False
        result = held if held is not None else self.call_maybe_static(value, None)
        if not isinstance(result, StaticTuple):
            self.bind_target(target, result)
            return True
        if len(result.items) != len(target.elts):
            self.refuse(stmt, f"unpacking {len(result.items)} values into {len(target.elts)} names")
        for t, item in zip(target.elts, result.items):
            if isinstance(item, StaticArg):
                self.env.pop(t.id, None)
                self.local_functions[t.id] = item.value
                self.bound.add(t.id)
            else:
                self.bind_target(t, item)
        return True

    def held_tuple(self: Lowerer, node: Any) -> StaticTuple | None:
        """The tuple holding a function or an object that the name ``node`` was bound to
        (:meth:`assign_call_result`), or None."""
        if not isinstance(node, gast.Name):
            return None
        try:
            ok, value = self.static_object(node)
        except AdgenError:
            return None
        return value if ok and isinstance(value, StaticTuple) else None

    def returned_in_branch(self: Lowerer, value: Any) -> bool:
        """``return np.square`` inside a branch of a helper whose caller takes a function or
        an object: noted (:meth:`static_returned` gives it after the body) where ``value`` is
        one -- a name, an attribute, an instance made here, or an ``a if c else b`` of those
        decided now. False (nothing lowered) for anything else."""
        if isinstance(value, gast.IfExp):
            test = self.expr(value.test, None, "cond")
            if not isinstance(test, ir.Const):
                return False
            return self.returned_in_branch(value.body if test.value else value.orelse)
        if isinstance(value, gast.Call) and self.made_class(value) is None:
            return False
        found = self.static_argument(value)
        if found is None:
            return False
        self.static_returns.append(found)
        return True

    def static_returned(self: Lowerer) -> StaticArg:
        """The one function or object the helper's returns gave (each path it took, as
        decided when transforming, returned the same one); else refused."""
        values = {id(found.value) for found in self.static_returns}
        if self.values_returned or len(values) != 1:
            self.refuse(
                self.node,
                "a helper that returns a function or an object on one path and something else "
                "on another, decided only when the code runs",
                "return the same function on every path, or call it inside the helper",
            )
        return self.static_returns[0]
