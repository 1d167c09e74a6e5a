# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Generators the program consumes where it makes them (issue 34's public programs).

A helper that ``yield``s (autograd's Bayesian neural network: ``for W, b in
unpack_layers(weights):``) is read in one of two ways, each in the order Python runs it:

* **the iterable of a ``for``** (a comprehension's too): the generator is inlined, and the
  loop's body is lowered where it yields, its target bound to the value yielded -- the
  generator's statements and the body's interleave as Python runs them
  (:meth:`GeneratorsMixin.generator_loop`). The loop may not ``break`` (the generator would
  run on) nor have an ``else``; ``continue`` skips the rest of the body, as in Python;
* **the argument of ``list``, ``tuple``, ``sum``, ``sorted``, ``min``, ``max``, ``any`` or
  ``all``**, which take every item at once: the generator is read as the function that
  appends what it yields to a list and returns it (:func:`as_list_function`), run to its
  end at once as those builtins run it.

In both, the generator yields only values, as statements (``yield v``; no ``yield from``, no
value sent back, no ``return`` of a value). Any other generator stays refused by name.

>>> import ast
>>> tree = gast.parse('''
... def pairs(w, sizes):
...     for n in sizes:
...         yield w[:n], w[n]
...         w = w[n + 1:]
... ''')
>>> print(ast.unparse(gast.gast_to_ast(as_list_function(tree.body[0]))))
def pairs(w, sizes):
    _adgen_yielded = []
    for n in sizes:
        _adgen_yielded.append((w[:n], w[n]))
        w = w[n + 1:]
    return _adgen_yielded
"""

from __future__ import annotations

import copy
import inspect
import types
from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.errors import AdgenError
from adgen.frontend.lower.state import LowererState

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer

# the list a generator read as a list function appends to (a name no program writes)
YIELDED = "_adgen_yielded"
# builtins that take every item of an iterable at once
_CONSUMERS = frozenset({"list", "tuple", "sum", "sorted", "min", "max", "any", "all"})
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def is_generator(fdef: Any) -> bool:
    """Does the function ``fdef`` (not a function defined inside it) ``yield``?"""
    return any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in _own_nodes(fdef))


def as_list_function(fdef: Any) -> Any:
    """``fdef`` (a generator's ``FunctionDef``) as the function returning the list of what
    it yields (run to its end at once, as a builtin taking every item runs it), or None where
    it does not only yield values (see :func:`yields_only`). A new node."""
    if yields_only(fdef) is not None:
        return None
    made = copy.deepcopy(fdef)

    def load() -> Any:
        return gast.Name(id=YIELDED, ctx=gast.Load(), annotation=None, type_comment=None)

    for node in _own_nodes(made):
        for part in ("body", "orelse", "finalbody"):
            stmts = getattr(node, part, None)
            if not isinstance(stmts, list):
                continue
            for k, stmt in enumerate(stmts):
                if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Yield):
                    item = stmt.value.value or gast.Constant(value=None, kind=None)
                    append = gast.Attribute(value=load(), attr="append", ctx=gast.Load())
                    call = gast.Call(func=append, args=[item], keywords=[])
                    stmts[k] = _located(gast.Expr(value=call), stmt)
                elif isinstance(stmt, gast.Return):
                    stmts[k] = _located(gast.Return(value=load()), stmt)
    store = gast.Name(id=YIELDED, ctx=gast.Store(), annotation=None, type_comment=None)
    start = gast.Assign(targets=[store], value=gast.List(elts=[], ctx=gast.Load()))
    start.type_comment = None
    first = made.body[0]
    done = _located(gast.Return(value=load()), made.body[-1])
    made.body = [_located(start, first), *made.body, done]
    return made


def yields_only(fdef: Any) -> Any:
    """The first node of the generator ``fdef`` that does more than yield values (``yield
    from``, ``x = yield v``, ``return v``), or None."""
    statements = {
        id(s.value)
        for s in _own_nodes(fdef)
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Yield)
    }
    for n in _own_nodes(fdef):
        if isinstance(n, gast.YieldFrom) or (isinstance(n, gast.Yield) and id(n) not in statements):
            return n
        if isinstance(n, gast.Return) and n.value is not None:
            return n
    return None


def consumed_whole(fdef: Any) -> set[tuple[int, int]]:
    """The calls in ``fdef``'s body (their places: line, column) whose result a builtin
    that takes every item at once consumes where it is made (``list(rows(x))``)."""
    found: set[tuple[int, int]] = set()
    for node in _own_nodes(fdef):
        if (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and node.func.id in _CONSUMERS
            and len(node.args) == 1
            and isinstance(node.args[0], gast.Call)
        ):
            found.add(place(node.args[0]))
    return found


def place(node: Any) -> tuple[int, int]:
    """Where ``node`` stands in its source (copies lowering makes of it stand there too)."""
    return (getattr(node, "lineno", -1), getattr(node, "col_offset", -1))


def _own_nodes(fdef: Any) -> list[Any]:
    """The nodes of ``fdef``'s body, not those of functions or classes defined in it."""
    return [n for s in fdef.body for n in _walk_own(s)]


def _walk_own(node: Any) -> list[Any]:
    """``node`` and the nodes inside it, not inside a function or class defined there."""
    found, todo = [], [node]
    while todo:
        n = todo.pop()
        found.append(n)
        if not isinstance(n, _SCOPES):
            todo.extend(gast.iter_child_nodes(n))
    return found


def _located(node: Any, where: Any) -> Any:
    for n in gast.walk(node):
        gast.copy_location(n, where)
    return node


class GeneratorsMixin(LowererState):
    """``for`` loops over a generator the program calls there."""

    def generator_loop(self: Lowerer, stmt: gast.For) -> bool:
        """``for W, b in unpack_layers(weights): body``, where ``unpack_layers`` is a
        generator: inlined, ``body`` lowered where it yields with the target bound to the
        value (False: not such a loop; nothing lowered)."""
        it = stmt.iter
        if not isinstance(it, gast.Call) or any(isinstance(a, gast.Starred) for a in it.args):
            return False
        try:
            ok, fn = self.static_object(it.func)
        except AdgenError:
            return False
        live = isinstance(fn, types.FunctionType)
        if not ok or not (
            (live and fn.__code__.co_flags & inspect.CO_GENERATOR)
            or (getattr(fn, "adgen_user_function", False) and is_generator(fn.node))
        ):  # (a function of a file adgen reads without running it: python -m adgen)
            return False
        name = fn.node.name if not live else fn.__name__
        if stmt.orelse:
            self.refuse(stmt, "`else` clauses on loops", "move that code after the loop")
        if getattr(stmt, "adgen_broken", None) is not None:  # (jumps.py: a flag now)
            self.refuse(
                stmt,
                f"`break` in a loop over the generator `{name}` (adgen runs the loop's body "
                "where the generator yields, and the generator would run on after it)",
                "collect the items first (`for v in list(gen(...)):`), or stop the generator "
                "itself",
            )
        args = self.call_arguments(it, True)
        kwargs = self.call_keywords(it, True)
        parsed, defaults = self.callee(fn, it)
        sent = yields_only(parsed.node)
        if sent is not None:
            self.refuse(it, f"the generator `{name}` here: it does more than yield values "
                        "(`yield from`, a value sent back, a `return` of a value)")  # fmt: skip

        def body(generator: Lowerer, value: ir.Atom) -> None:
            hidden = self.user_namer.fresh("item")
            saved = self.block, self.depth, self.current
            self.block = generator.block  # (where it yields: inside its own loops)
            self.depth = saved[1] + generator.depth + 1
            self.env[hidden] = value
            try:
                self.current = stmt
                load = gast.Name(id=hidden, ctx=gast.Load(), annotation=None, type_comment=None)
                bind = gast.Assign(targets=[stmt.target], value=load, type_comment=None)
                self.lower_assign(_located(bind, stmt.target))
                self.lower_block(stmt.body)
            finally:
                self.env.pop(hidden, None)
                self.block, self.depth, self.current = saved

        self.inline(it, parsed, fn, defaults, args, kwargs, None, None, on_yield=body)
        return True

    def lower_yield(self: Lowerer, node: gast.Yield) -> None:
        """``yield v`` in a generator a ``for`` loop of its caller is lowered in: the loop's
        body, there (:meth:`generator_loop`)."""
        assert self.on_yield is not None
        value = ir.Const(None) if node.value is None else self.expr(node.value, None, "item")
        self.on_yield(self, value)
