"""Lists of tuples the function builds, kept as one list per position (before lowering).

``pairs = []`` then ``pairs.append((a, b))`` in a loop, read back as ``for a, b in pairs``,
``pairs[i]``, ``len(pairs)``, ``pairs.pop()``: a list whose items are tuples of variables has no
derivative adgen can follow as one list, but the same program with one list per position
(``pairs_0.append(a)``, ``pairs_1.append(b)``, ``for a, b in zip(pairs_0, pairs_1)``) is one
it differentiates with the lists' own machinery (appends, indexing, pops and their adjoints).
:func:`_split_tuple_lists` rewrites the gast tree so, before the Lowerer reads it, for each
name whose every use allows it:

- every binding is ``xs = []`` (or a list display of tuple displays of one length ``k``, or
  a comprehension of such tuple displays: a loop appending each position's item),
- every append is ``xs.append((v_0, ..., v_k-1))``, a tuple display of that length (no
  starred or nested tuple displays),
- every other use only reads: ``xs[i]`` (the tuple of the ``k`` items), ``len(xs)``,
  ``xs.pop()``, ``for ... in xs`` or ``xs[1:]`` (and ``enumerate(xs)`` / ``zip(xs, ...)``
  iterated: ``zip`` of the lists, or of their slices), ``hs, cs = zip(*xs)`` (each a new
  list of one position's items), ``if xs:`` / ``not xs``, in the function itself (not in a
  function defined in it).

A name appended a tuple display that is used in any other way (passed to a call, returned,
written by index, sliced other than to iterate, appended a non-tuple, tuples of different
lengths, grown inside a ``for`` loop over it, read in a ``def`` or ``lambda``) is left as it
is, with the first such use noted, so the refusal of a tuple as a list's item can name it.
"""

from __future__ import annotations

import copy
from typing import Any

import gast

from adgen.frontend.lower.jumps import _name
from adgen.frontend.lower.syntax import _is_append, _own_nodes

# the calls (of builtins) whose argument a split list may be, when iterated
_ITERATORS = ("enumerate", "zip")


def _split_tuple_lists(fdef: Any) -> dict[str, tuple[Any, str]]:
    """Rewrite, in ``fdef``, each list of tuples that can be split as one list per position
    (see the module's docstring). Returns, for each list appended a tuple display that
    cannot be, the node of a use that prevents it and what that use is."""
    done = getattr(fdef, "adgen_tuple_lists", None)
    if done is not None:
        return dict(done)
    own = _own_nodes(fdef)
    candidates = sorted(
        {
            n.value.func.value.id
            for n in own
            if _is_append(n) and isinstance(n.value.args[0], gast.Tuple)
        }
        | {n.targets[0].id for n in own if _made_by_comprehension(n)}
    )
    if not candidates:
        fdef.adgen_tuple_lists = {}
        return {}
    parents = {id(c): n for n in own for c in gast.iter_child_nodes(n)}
    taken = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)}
    taken |= {a.id for a in fdef.args.args}
    lists: dict[str, list[str]] = {}
    problems: dict[str, tuple[Any, str]] = {}
    for name in candidates:
        length, problem = _check_uses(fdef, own, parents, name)
        if problem is not None:
            problems[name] = problem
            continue
        parts = []
        for j in range(length):
            part, n = f"{name}_{j}", 0
            while part in taken:
                n += 1
                part = f"{name}_{j}_{n}"
            taken.add(part)
            parts.append(part)
        lists[name] = parts
    if lists:
        _Split(lists, taken).visit(fdef)
    fdef.adgen_tuple_lists = problems
    return dict(problems)


def _made_by_comprehension(node: Any) -> bool:
    """``xs = [(a, b) for ...]``: a name bound to a comprehension of tuple displays."""
    return (
        isinstance(node, gast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], gast.Name)
        and isinstance(node.value, gast.ListComp)
        and isinstance(node.value.elt, gast.Tuple)
    )


def _display(node: Any) -> int | None:
    """The length of a tuple display of plain items (no starred or nested displays)."""
    if not isinstance(node, gast.Tuple):
        return None
    nested = (gast.Starred, gast.Tuple, gast.List, gast.Dict, gast.Set)
    return None if any(isinstance(e, nested) for e in node.elts) else len(node.elts)


def _check_uses(
    fdef: Any, own: list[Any], parents: dict[int, Any], name: str
) -> tuple[int, tuple[Any, str] | None]:
    """The length of the tuples appended to ``name``, and the first use of ``name`` that
    prevents splitting it (None if none does)."""
    own_ids = {id(n) for n in own}
    lengths: set[int] = set()
    bound = False
    for n in gast.walk(fdef):
        if isinstance(n, (gast.Global, gast.Nonlocal)) and name in n.names:
            return 0, (n, f"`{name}` is declared {type(n).__name__.lower()}")
        if not (isinstance(n, gast.Name) and n.id == name):
            continue
        if id(n) not in own_ids:
            return 0, (n, f"a function defined in this one uses `{name}`")
        if isinstance(n.ctx, gast.Param):
            return 0, (n, f"`{name}` is an argument")
        use, length = _use(n, parents, name)
        bound = bound or isinstance(n.ctx, gast.Store)
        if length is not None:
            lengths.add(length)
        if use:
            return 0, (n, use)
    if not bound:
        return 0, (None, f"`{name}` is not a list made in this function (`{name} = []`)")
    for n in own:
        if isinstance(n, gast.Name) and n.id in ("zip", "len", "enumerate"):
            if not isinstance(n.ctx, gast.Load):
                return 0, (n, f"`{n.id}` is bound in this function")
        if isinstance(n, gast.For) and _iterates(n.iter, name) and _grows(n.body, name):
            what = f"`{name}` is appended to or popped from in a loop iterating over it"
            return 0, (n, what)
    if len(lengths) != 1:
        return 0, (None, f"tuples of different lengths are appended to `{name}`")
    return lengths.pop(), None


def _reads(node: Any, name: str) -> bool:
    """Does ``node`` read ``name``?"""
    return any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(node))


def _iterates(it: Any, name: str) -> bool:
    """Does a loop over ``it`` iterate over the list ``name`` (itself, or in ``enumerate`` or
    ``zip``)?"""
    if isinstance(it, gast.Name):
        return bool(it.id == name)
    return (
        isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id in _ITERATORS
        and any(isinstance(a, gast.Name) and a.id == name for a in it.args)
    )


def _grows(body: list[Any], name: str) -> bool:
    """Does ``body`` append to (or pop from) the list ``name``?"""
    return any(
        isinstance(n, gast.Attribute)
        and n.attr in ("append", "pop")
        and isinstance(n.value, gast.Name)
        and n.value.id == name
        for stmt in body
        for n in gast.walk(stmt)
    )


def _use(n: Any, parents: dict[int, Any], name: str) -> tuple[str, int | None]:
    """What keeps the occurrence ``n`` of ``name`` from being read as one list per position
    ("" if nothing does), and the length of the tuples it appends or binds (if it does)."""
    parent = parents.get(id(n))
    grand = parents.get(id(parent))
    if isinstance(n.ctx, gast.Store):
        if isinstance(parent, gast.Assign) and parent.targets == [n]:
            value = parent.value
            if isinstance(value, gast.List):
                found = {_display(e) for e in value.elts}
                if None not in found and len(found) <= 1:
                    return "", found.pop() if found else None
            if _made_by_comprehension(parent) and not _reads(value, name):
                length = _display(value.elt)
                if length is not None and len(value.generators) == 1:
                    return "", length
        return f"`{name}` is bound to something other than `[]`", None
    if not isinstance(n.ctx, gast.Load):
        return f"`{name}` is deleted or written", None
    if isinstance(parent, gast.Attribute) and isinstance(grand, gast.Call) and grand.func is parent:
        if parent.attr == "append" and _is_append(parents.get(id(grand))):
            item, length = grand.args[0], _display(grand.args[0])
            if length is None and isinstance(item, gast.Tuple):
                what = "a tuple display holding a starred item or another display"
                return f"{what} is appended to `{name}`", None
            if length is None:
                return f"a value that is not a tuple display is appended to `{name}`", None
            return "", length
        if parent.attr == "pop" and not grand.args and not grand.keywords:
            return "", None
        return f"`{name}.{parent.attr}(...)`", None
    if isinstance(parent, gast.Subscript) and parent.value is n:
        if isinstance(parent.ctx, gast.Load) and _plain_index(parent.slice):
            return "", None
        if (
            isinstance(parent.ctx, gast.Load)
            and isinstance(parent.slice, gast.Slice)
            and all(_plain_index(b) for b in _bounds(parent.slice))
            and _iterated(parent, parents)
        ):
            return "", None  # for a, b in xs[1:]
        return f"`{name}` is sliced, written by index or indexed by a call", None
    if isinstance(parent, gast.Call) and n in parent.args and isinstance(parent.func, gast.Name):
        if parent.func.id == "len" and parent.args == [n]:
            return "", None
    if _iterated(n, parents):
        return "", None
    if isinstance(parent, gast.Starred) and _transposed(parents.get(id(grand)), grand):
        # hs, cs = zip(*xs)
        return "", len(parents[id(grand)].targets[0].elts)
    if _tested(parent) is n:
        return "", None
    return f"`{name}` is used as a whole (not only read by index, iterated, `len` or `pop`)", None


def _transposed(node: Any, call: Any) -> bool:
    """Is ``node`` the assignment ``a, b = call`` of names, where ``call`` is ``zip(*xs)``?"""
    return (
        isinstance(node, gast.Assign)
        and node.value is call
        and len(node.targets) == 1
        and isinstance(node.targets[0], gast.Tuple)
        and all(isinstance(t, gast.Name) for t in node.targets[0].elts)
        and isinstance(call, gast.Call)
        and isinstance(call.func, gast.Name)
        and call.func.id == "zip"
        and len(call.args) == 1
        and isinstance(call.args[0], gast.Starred)
        and not call.keywords
    )


def _iter_of(node: Any) -> Any:
    """What a ``for`` loop or a comprehension iterates over (None for another node)."""
    return node.iter if isinstance(node, (gast.For, gast.comprehension)) else None


def _tested(node: Any) -> Any:
    """What an ``if``, ``while``, conditional expression or ``not`` tests for truth (None
    for another node)."""
    if isinstance(node, (gast.If, gast.While, gast.IfExp)):
        return node.test
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
        return node.operand
    return None


def _iterated(node: Any, parents: dict[int, Any]) -> bool:
    """Is ``node`` what a loop or comprehension iterates over, or an argument of ``zip`` or
    ``enumerate`` that is?"""
    parent = parents.get(id(node))
    if _iter_of(parent) is node:
        return True
    return (
        isinstance(parent, gast.Call)
        and isinstance(parent.func, gast.Name)
        and parent.func.id in _ITERATORS
        and any(a is node for a in parent.args)
        and _iter_of(parents.get(id(parent))) is parent
    )


def _bounds(index: Any) -> list[Any]:
    """The bounds of a slice (those given)."""
    return [b for b in (index.lower, index.upper, index.step) if b is not None]


def _plain_index(index: Any) -> bool:
    """An index read once per position without changing its meaning: no slice, no call but
    ``len``."""
    for n in gast.walk(index):
        if isinstance(n, (gast.Slice, gast.NamedExpr, gast.Yield, gast.Await)):
            return False
        if isinstance(n, gast.Call) and not (isinstance(n.func, gast.Name) and n.func.id == "len"):
            return False
    return True


def _located(node: Any, where: Any) -> Any:
    """``node`` and every node in it without a location placed at ``where``."""
    for n in gast.walk(node):
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if attr in n._attributes and getattr(n, attr, None) is None:
                setattr(n, attr, getattr(where, attr, None))
    return node


def _method(part: str, method: str, args: list[Any]) -> Any:
    attribute = gast.Attribute(value=_name(part), attr=method, ctx=gast.Load())
    return gast.Call(func=attribute, args=args, keywords=[])


class _Split(gast.NodeTransformer):  # type: ignore[misc]
    """Rewrite the uses of each list of tuples as uses of its lists, one per position."""

    def __init__(self, lists: dict[str, list[str]], taken: set[str]) -> None:
        self.lists = lists
        self.taken = taken

    def parts(self, node: Any) -> list[str] | None:
        return self.lists.get(node.id) if isinstance(node, gast.Name) else None

    def zipped(self, parts: list[str], where: Any) -> Any:
        call = gast.Call(func=_name("zip"), args=[_name(p) for p in parts], keywords=[])
        return _located(call, where)

    def visit_Assign(self, node: Any) -> Any:
        if _transposed(node, node.value):
            parts = self.parts(node.value.args[0].value)
            if parts is not None:  # hs, cs = zip(*xs): a new list of each position's items
                names = [t.id for t in node.targets[0].elts]
                return [
                    _located(
                        gast.Assign(
                            targets=[_name(t, True)], value=self.copied(p), type_comment=None
                        ),
                        node,
                    )
                    for t, p in zip(names, parts)
                ]
        parts = self.parts(node.targets[0]) if len(node.targets) == 1 else None
        if parts is None:
            return self.generic_visit(node)
        if isinstance(node.value, gast.ListComp):
            return self.comprehension(node, parts)
        rows = [self.visit(e) for e in node.value.elts]
        return [
            _located(
                gast.Assign(
                    targets=[_name(p, True)],
                    value=gast.List(elts=[r.elts[j] for r in rows], ctx=gast.Load()),
                    type_comment=None,
                ),
                node,
            )
            for j, p in enumerate(parts)
        ]

    def fresh(self, base: str) -> str:
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}{k}"
        self.taken.add(name)
        return name

    def comprehension(self, node: Any, parts: list[str]) -> list[Any]:
        """``xs = [(a, b) for v in seq if c]``: empty lists, then one loop over ``seq`` (its
        variables renamed: a comprehension's are its own) appending each position's item."""
        made = self.visit(node.value)
        gen = made.generators[0]
        renames = {
            n.id: self.fresh(f"{n.id}_item")
            for n in gast.walk(gen.target)
            if isinstance(n, gast.Name)
        }
        inner = [gen.target, made.elt, *gen.ifs]
        for part in inner:
            for n in gast.walk(part):
                if isinstance(n, gast.Name) and n.id in renames:
                    n.id = renames[n.id]
        body: list[Any] = [
            gast.Expr(value=_method(p, "append", [e])) for p, e in zip(parts, made.elt.elts)
        ]
        for cond in reversed(gen.ifs):
            body = [gast.If(test=cond, body=body, orelse=[])]
        loop = gast.For(target=gen.target, iter=gen.iter, body=body, orelse=[], type_comment=None)
        empty = [
            gast.Assign(
                targets=[_name(p, True)],
                value=gast.List(elts=[], ctx=gast.Load()),
                type_comment=None,
            )
            for p in parts
        ]
        return [_located(stmt, node) for stmt in [*empty, loop]]

    def visit_Expr(self, node: Any) -> Any:
        call = node.value
        if not isinstance(call, gast.Call) or not isinstance(call.func, gast.Attribute):
            return self.generic_visit(node)
        parts = self.parts(call.func.value)
        if parts is None:
            return self.generic_visit(node)
        if call.func.attr == "pop":  # a pop whose item is dropped: one pop per list
            return [_located(gast.Expr(value=_method(p, "pop", [])), node) for p in parts]
        items = [self.visit(e) for e in call.args[0].elts]
        out = []
        read = {n.id for e in items for n in gast.walk(e) if isinstance(n, gast.Name)}
        if read & {p for ps in self.lists.values() for p in ps}:
            # an item reads the lists: every item is computed before any is appended
            for j, e in enumerate(items):
                temp, k = f"{parts[j]}_item", 0
                while temp in self.taken:
                    k += 1
                    temp = f"{parts[j]}_item{k}"
                self.taken.add(temp)
                assign = gast.Assign(targets=[_name(temp, True)], value=e, type_comment=None)
                out.append(_located(assign, node))
                items[j] = _name(temp)
        for p, e in zip(parts, items):
            out.append(_located(gast.Expr(value=_method(p, "append", [e])), node))
        return out

    def visit_Call(self, node: Any) -> Any:
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr == "pop":
            parts = self.parts(func.value)
            if parts is not None:  # the tuple of the last items, taken off
                pops = [_method(p, "pop", []) for p in parts]
                return _located(gast.Tuple(elts=pops, ctx=gast.Load()), node)
        node = self.generic_visit(node)
        if isinstance(func, gast.Name) and func.id == "len" and len(node.args) == 1:
            parts = self.parts(node.args[0])
            if parts is not None:
                node.args = [_located(_name(parts[0]), node.args[0])]
                return node
        if isinstance(func, gast.Name) and func.id in _ITERATORS:
            node.args = [
                self.zipped(ps, a) if (ps := self.parts(a)) is not None else a for a in node.args
            ]
        return node

    def copied(self, part: str) -> Any:
        """``[item for item in part]``: a new list of the list's items (``zip(*xs)`` gives
        tuples; a list is read the same way)."""
        item, k = f"{part}_item", 0
        while item in self.taken:
            k += 1
            item = f"{part}_item{k}"
        self.taken.add(item)
        loop = gast.comprehension(target=_name(item, True), iter=_name(part), ifs=[], is_async=0)
        return gast.ListComp(elt=_name(item), generators=[loop])

    def visit_For(self, node: Any) -> Any:
        node = self.generic_visit(node)
        parts = self.parts(node.iter)
        if parts is not None:
            node.iter = self.zipped(parts, node.iter)
        return node

    def visit_comprehension(self, node: Any) -> Any:
        return self.visit_For(node)

    def tested(self, node: Any) -> Any:
        """``if xs:`` (``while``, ``... if xs else ...``, ``not xs``): whether the first list
        is empty."""
        node = self.generic_visit(node)
        test = _tested(node)
        parts = self.parts(test)
        if parts is None:
            return node
        part = _located(_name(parts[0]), test)
        if isinstance(node, gast.UnaryOp):
            node.operand = part
        else:
            node.test = part
        return node

    visit_If = visit_While = visit_IfExp = visit_UnaryOp = tested

    def visit_Subscript(self, node: Any) -> Any:
        node = self.generic_visit(node)
        parts = self.parts(node.value)
        if parts is not None and isinstance(node.slice, gast.Slice):
            # for a, b in xs[1:]: the tuples of the lists' slices
            slices = [
                gast.Subscript(value=_name(p), slice=copy.deepcopy(node.slice), ctx=gast.Load())
                for p in parts
            ]
            zipped = gast.Call(func=_name("zip"), args=slices, keywords=[])
            return _located(zipped, node)
        if parts is not None:  # xs[i]: the tuple of the items at i
            items = [
                gast.Subscript(value=_name(p), slice=copy.deepcopy(node.slice), ctx=gast.Load())
                for p in parts
            ]
            split = _located(gast.Tuple(elts=items, ctx=gast.Load()), node)
            split.adgen_items = True
            return split
        index = node.slice
        if (
            getattr(node.value, "adgen_items", False)
            and isinstance(index, gast.Constant)
            and type(index.value) is int
            and -len(node.value.elts) <= index.value < len(node.value.elts)
        ):
            return node.value.elts[index.value]  # xs[i][j]: the item at i of list j
        return node
