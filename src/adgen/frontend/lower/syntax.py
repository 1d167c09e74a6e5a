"""What the user's syntax tree says about a name: questions the parts of the Lowerer share.

Which names are assigned inside blocks, written in place, grown as lists (appends, pops,
concatenations with a list literal): pure functions of gast nodes, asked before and while a
function is lowered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gast

from adgen.rules import registry


def _assigned_in_blocks(body: list[Any]) -> set[str]:
    """User names assigned (or used as loop variables) inside if/for/while blocks."""
    names: set[str] = set()

    def stored(node: Any) -> set[str]:
        return {
            n.id
            for n in gast.walk(node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
        }

    for stmt in body:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            names |= stored(stmt)
    return names


def _written_in_place(nodes: list[Any]) -> set[str]:
    """Names written through a subscript (``y[i] = v``, ``y[i] += v``) or appended to
    (``nodes``: every node of a tree, as :func:`gast.walk` finds them)."""
    names = set(_appended(nodes))
    for n in nodes:
        if (  # np.fill_diagonal(y, v): the rules' functions that write into an argument
            isinstance(n, gast.Expr)
            and isinstance(n.value, gast.Call)
            and n.value.args
            and isinstance(n.value.args[0], gast.Name)
            and _called_name(n.value.func) in registry.IN_PLACE_NAMES
        ):
            names.add(n.value.args[0].id)
        if (  # y.fill(v), y.sort()
            isinstance(n, gast.Call)
            and isinstance(n.func, gast.Attribute)
            and n.func.attr in registry.IN_PLACE_METHODS
            and isinstance(n.func.value, gast.Name)
        ):
            names.add(n.func.value.id)
        if isinstance(n, gast.Call):  # np.exp(y, out=y), np.exp(y, y): written into
            for out in _out_arguments(n):
                if isinstance(out, gast.Call) and len(out.args) == 1:
                    out = out.args[0]  # (out=np.asarray(y))
                if isinstance(out, gast.Name):
                    names.add(out.id)
        targets = (
            n.targets
            if isinstance(n, gast.Assign)
            else [n.target]
            if isinstance(n, gast.AugAssign)
            else []
        )
        for t in targets:
            # `y[i] = v`, and `y[0], y[1] = ...` (a subscript inside an unpacking)
            parts = gast.walk(t) if isinstance(t, (gast.Tuple, gast.List)) else [t]
            for part in parts:
                if isinstance(part, gast.Subscript) and isinstance(part.value, gast.Name):
                    names.add(part.value.id)
                if (  # `y.flat[k] = v`: y's entries
                    isinstance(part, gast.Subscript)
                    and isinstance(part.value, gast.Attribute)
                    and part.value.attr == "flat"
                    and isinstance(part.value.value, gast.Name)
                ):
                    names.add(part.value.value.id)
    return names


def _appended(nodes: list[Any]) -> set[str]:
    """Names of lists grown with ``xs.append(v)`` or shrunk with ``xs.pop()`` (``nodes``: every
    node of a tree)."""
    grown = {
        n.value.func.value.id
        for n in nodes
        if isinstance(n, gast.Expr)
        and isinstance(n.value, gast.Call)
        and isinstance(n.value.func, gast.Attribute)
        and n.value.func.attr == "append"
        and isinstance(n.value.func.value, gast.Name)
    }
    return grown | {n.func.value.id for n in nodes if _is_pop(n)} | _concatenated(nodes)


def _concatenated(nodes: list[Any]) -> set[str]:
    """Names bound to a list concatenation with a list literal (``xs = xs + [v]``,
    ``ys = [v] + xs``, ``xs += [v]``), or of a name bound to a list display with itself (``out
    = []`` ... ``out = out + leaves(v)``): real lists, grown by appends (``nodes``: every node
    of a tree)."""
    names = set()
    displays = {  # names bound to a list display somewhere (`out = []`)
        n.targets[0].id
        for n in nodes
        if isinstance(n, gast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], gast.Name)
        and isinstance(n.value, gast.List)
    }
    for n in nodes:
        if (
            isinstance(n, gast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], gast.Name)
            and isinstance(n.value, gast.BinOp)
            and isinstance(n.value.op, gast.Add)
        ):
            target, sides = n.targets[0].id, (n.value.left, n.value.right)
            if any(isinstance(e, gast.List) for e in sides) or (
                # `out = out + leaves(v)` of a list made by a display: joined with what
                # lowering shows to be a list (else refused as `+` of a list)
                target in displays
                and any(isinstance(e, gast.Name) and e.id == target for e in sides)
            ):
                names.add(target)
        elif (
            isinstance(n, gast.AugAssign)
            and isinstance(n.target, gast.Name)
            and isinstance(n.op, gast.Add)
            and isinstance(n.value, gast.List)
        ):
            names.add(n.target.id)
    return names


def _popped_into(nodes: list[Any], lists: set[str]) -> set[str]:
    """Names ``v`` of the statements ``v = xs.pop()`` that pop from one of ``lists``."""
    return {
        n.targets[0].id
        for n in nodes
        if isinstance(n, gast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], gast.Name)
        and _is_pop(n.value)
        and n.value.func.value.id in lists
    }


def _is_pop(node: Any) -> bool:
    """``xs.pop()`` (the last item, taken off the list)."""
    return (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and node.func.attr == "pop"
        and isinstance(node.func.value, gast.Name)
        and not node.args
        and not node.keywords
    )


def _tuple_shaped(function: Any, call_length: Any) -> dict[str, int | None]:
    """Names that every binding in ``function`` may bind to a tuple of one length: the length
    where a binding shows it (a tuple or list display, ``for pair in zip(u, v)``), else None
    (a name, an item: known only when lowering; ``call_length(call)`` says it of a call: a
    length, None, or -1 where the call certainly gives no tuple). A name bound anywhere to a
    value that is certainly not a tuple (a number, an operation's result, an attribute,
    ``np.stack(...)``), grown as a list,
    updated with ``+=`` or bound by another statement (``del``, ``with``, ``:=``) is left out,
    as is one bound to displays of different lengths: those are -1."""
    lengths: dict[str, set[int | None]] = {}
    sited: set[int] = set()  # the Name nodes of the bindings read here

    def site(target: Any, length: int | None) -> None:
        if isinstance(target, gast.Name):
            lengths.setdefault(target.id, set()).add(length)
            sited.add(id(target))
            return
        for n in gast.walk(target):  # an item of an unpacking: its structure is not shown
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                lengths.setdefault(n.id, set()).add(None)
                sited.add(id(n))

    nodes = list(gast.walk(function))
    for n in nodes:
        if isinstance(n, gast.Assign):
            for t in n.targets:
                if not isinstance(t, gast.Name):
                    site(t, None)
                elif isinstance(n.value, gast.Call):
                    site(t, call_length(n.value))
                else:
                    site(t, _display_length(n.value))
        elif isinstance(n, (gast.For, gast.comprehension)):
            site(n.target, _iterated_length(n.iter) if isinstance(n.target, gast.Name) else None)
    out: dict[str, int | None] = {}
    unsited = {
        n.id
        for n in nodes
        if isinstance(n, gast.Name)
        and isinstance(n.ctx, (gast.Store, gast.Del))
        and id(n) not in sited
    }
    grown = _appended(nodes)
    for name, seen in lengths.items():
        known = seen - {None}
        if name in unsited or name in grown or -1 in known or len(known) > 1:
            out[name] = -1  # bound, not always to a tuple of one length
            continue
        out[name] = known.pop() if known else None
    return out


def _display_length(value: Any) -> int | None:
    """The length of the tuple ``value`` makes, where it shows (a display); -1 where it is
    certainly not a tuple; None where lowering will tell."""
    if isinstance(value, (gast.Tuple, gast.List)):
        starred = any(isinstance(e, gast.Starred) for e in value.elts)
        return None if starred else len(value.elts)
    if isinstance(value, gast.Dict):  # a dict of string keys: its structure shows when lowering
        keys = value.keys
        strings = all(isinstance(k, gast.Constant) and isinstance(k.value, str) for k in keys)
        return None if strings else -1
    if isinstance(
        value,
        (
            gast.Constant,
            gast.UnaryOp,
            gast.Compare,
            gast.BoolOp,
            gast.IfExp,
            gast.Attribute,
            gast.ListComp,
            gast.Lambda,
            gast.BinOp,
        ),
    ):
        return -1
    return None


def _iterated_length(it: Any) -> int | None:
    """The length of the tuples a loop over ``it`` binds, where it shows (``zip`` and
    ``enumerate`` called by name)."""
    if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and not it.keywords:
        if it.func.id == "zip" and not any(isinstance(a, gast.Starred) for a in it.args):
            return len(it.args)
        if it.func.id == "enumerate":
            return 2
    return None


def _own_nodes(fn: Any) -> list[Any]:
    """Every node of the function ``fn``, but those inside the functions (``def``, ``lambda``)
    defined in it, whose names are their own (a nested ``def``'s ``xs`` is not ``fn``'s)."""
    found = [fn]
    for n in found:
        for child in gast.iter_child_nodes(n):
            if isinstance(child, (gast.FunctionDef, gast.Lambda)):
                found.extend(child.args.defaults)  # defaults are evaluated where it is defined
                continue
            found.append(child)
    return found


def _nested_results(fn: Any) -> list[tuple[set[str], list[Any]]]:
    """For each function defined inside ``fn`` (``def``, ``lambda``): the names it reads from
    ``fn`` (free in it) and the expressions it returns -- a call of it may return a view of
    one of those arrays, which the caller keeps under a name adgen sees only as a call."""
    found: list[tuple[set[str], list[Any]]] = []
    for n in _own_nodes(fn):
        for child in gast.iter_child_nodes(n):
            if not isinstance(child, (gast.FunctionDef, gast.Lambda)):
                continue
            inner = list(gast.walk(child))
            local = {
                a.id
                for a in inner
                if isinstance(a, gast.Name) and isinstance(a.ctx, (gast.Store, gast.Param))
            }
            free = {
                a.id
                for a in inner
                if isinstance(a, gast.Name) and isinstance(a.ctx, gast.Load) and a.id not in local
            }
            if isinstance(child, gast.Lambda):
                results = [child.body]
            else:
                results = [r.value for r in inner if isinstance(r, gast.Return) and r.value]
            found.append((free, results))
    return found


def _read_after(function: Any, stmt: Any, name: str) -> bool:
    """May ``name`` be read after the statement ``stmt`` of ``function`` has run (in the
    statements after it, or, inside a loop, in the next iterations)? True when unsure: a
    statement not found in the tree (lowering rewrote it), a jump, a nested function reading
    the name, a read anywhere inside a later compound statement.

    >>> fn = gast.parse(
    ...     "def f(x):\\n"
    ...     "    for i in range(3):\\n"
    ...     "        a = g(x)\\n"
    ...     "        x = h(a)\\n"
    ...     "        y = x + 1\\n"
    ...     "    return y\\n"
    ... ).body[0]
    >>> loop = fn.body[0]
    >>> _read_after(fn, loop.body[1], "a"), _read_after(fn, loop.body[0], "a")
    (False, True)
    >>> _read_after(fn, loop.body[1], "x")  # the next iteration reads it, then the return
    True
    """
    for n in gast.walk(function):
        if n is not function and isinstance(n, (gast.FunctionDef, gast.Lambda)):
            if any(isinstance(m, gast.Name) and m.id == name for m in gast.walk(n)):
                return True
    path = _path_to(function, stmt)
    if path is None:
        return True
    for block, index, owner in reversed(path):
        state = _scan(block[index + 1 :], name)
        if state != "through":
            return state == "read"
        if isinstance(owner, (gast.For, gast.While)):
            if isinstance(owner, gast.While) and _loads(owner.test, name):
                return True
            state = _scan(owner.body, name)  # the next iteration, from the top
            if state != "through":
                return state == "read"
    return False


def _path_to(function: Any, stmt: Any) -> list[tuple[list[Any], int, Any]] | None:
    """The blocks from the function's body down to ``stmt``: (block, index of the statement
    holding ``stmt`` in it, the node whose block it is); None if ``stmt`` is not there (or
    sits in a loop's ``else``, a ``try``, a ``with``)."""
    for field in ("body", "orelse"):
        block = getattr(function, field, None)
        if not isinstance(block, list) or (field == "orelse" and not isinstance(function, gast.If)):
            continue
        for i, s in enumerate(block):
            if s is stmt:
                return [(block, i, function)]
            if isinstance(s, (gast.If, gast.For, gast.While)):
                inner = _path_to(s, stmt)
                if inner is not None:
                    return [(block, i, function), *inner]
    return None


def _scan(stmts: list[Any], name: str) -> str:
    """What the statements do to ``name``, in order: "read" (may read it before binding it
    again, or unsure), "killed" (bind it again, or leave the function, before any read), or
    "through" (neither)."""
    for s in stmts:
        if isinstance(s, (gast.Break, gast.Continue)):
            return "read"  # where it jumps to: unsure
        if isinstance(s, gast.Return):
            return "read" if s.value is not None and _loads(s.value, name) else "killed"
        if isinstance(s, gast.Assign) and not _loads(s, name):
            if any(isinstance(t, gast.Name) and t.id == name for t in s.targets):
                return "killed"
            continue
        if isinstance(s, gast.Delete) and any(
            isinstance(t, gast.Name) and t.id == name for t in s.targets
        ):
            return "killed"
        jumps = any(isinstance(n, (gast.Break, gast.Continue)) for n in gast.walk(s))
        updated = any(  # `name += v` reads it too
            isinstance(n, gast.AugAssign) and getattr(n.target, "id", None) == name
            for n in gast.walk(s)
        )
        if _loads(s, name) or jumps or updated:
            return "read"
    return "through"


def _loads(node: Any, name: str) -> int:
    """How many times ``node`` reads ``name``."""
    return sum(
        1
        for n in gast.walk(node)
        if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
    )


def _out_arguments(call: gast.Call) -> list[Any]:
    """The arguments a call writes its result into, as written: ``out=`` (``np.exp(y,
    out=y)``), or the one after a NumPy ufunc's inputs (``np.exp(y, y)``)."""
    outs = [k.value for k in call.keywords if k.arg == "out"]
    if not outs and len(call.args) == registry.ufunc_args_with_out(_called_name(call.func)):
        outs = call.args[-1:]
    return outs


def _called_name(func: Any) -> str | None:
    """The last name of a called expression (``np.fill_diagonal`` -> ``fill_diagonal``)."""
    if isinstance(func, gast.Attribute):
        return func.attr
    return func.id if isinstance(func, gast.Name) else None


def _is_append(node: Any, method: str = "append") -> bool:
    """``xs.append(v)`` as a statement (or ``xs.<method>(v)``: ``extend``)."""
    call = node.value if isinstance(node, gast.Expr) else None
    return (
        isinstance(call, gast.Call)
        and isinstance(call.func, gast.Attribute)
        and call.func.attr == method
        and isinstance(call.func.value, gast.Name)
        and len(call.args) == 1
        and not call.keywords
    )


def declared_nonlocal(fn: Any) -> set[str]:
    """The names the function ``fn`` (a gast ``FunctionDef``) declares ``nonlocal`` in its own
    body (not in the functions defined in it)."""
    found: set[str] = set()
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Nonlocal):
            found.update(node.names)
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            continue
        todo.extend(gast.iter_child_nodes(node))
    return found


def nonlocal_in_nested(fn: Any) -> set[str]:
    """The names functions defined in ``fn`` declare ``nonlocal`` (any depth)."""
    return {
        name
        for node in gast.walk(fn)
        if isinstance(node, gast.FunctionDef) and node is not fn
        for name in declared_nonlocal(node)
    }


def own_attributes_as_variables(fn: Any, is_itself: Any) -> None:
    """Rewrite in place a function ``fn`` (a gast ``FunctionDef``) that keeps state in
    attributes of itself while it runs (``constructL.idx = d`` first, then ``constructL.idx``
    read and ``+=`` in a nested ``def``, as ADBench's GMM objective counts): each such
    attribute becomes a variable of ``fn`` (``constructL__idx``), ``nonlocal`` in the nested
    functions that bind it. Only where every use of ``fn``'s name in it is such an attribute
    (the function passes itself nowhere), each attribute is assigned in ``fn``'s body before
    any read, and ``is_itself(name)`` says the name means this function. The attribute is
    not left set on the function object after the call.

    >>> import gast
    >>> tree = gast.parse('''
    ... def count(d, t):
    ...     count.i = d
    ...     def take(n):
    ...         part = t[count.i:count.i + n]
    ...         count.i += n
    ...         return part
    ...     return take(1), take(2)
    ... ''')
    >>> own_attributes_as_variables(tree.body[0], lambda name: True)
    >>> print(gast.unparse(tree).strip())  # doctest: +NORMALIZE_WHITESPACE
    def count(d, t):
        count__i = d
        def take(n):
            nonlocal count__i
            part = t[count__i:count__i + n]
            count__i += n
            return part
        return (take(1), take(2))
    """
    name = fn.name
    uses = [n for n in gast.walk(fn) if isinstance(n, gast.Name) and n.id == name]
    if not uses or any(not isinstance(n.ctx, gast.Load) for n in uses):
        return
    attributes = [
        n
        for n in gast.walk(fn)
        if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name) and n.value.id == name
    ]
    if len(attributes) != len(uses) or not is_itself(name):
        return
    first: dict[str, Any] = {}  # attribute -> the top-level statement assigning it first
    for stmt in fn.body:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        if any(target is a for a in attributes) and target.attr not in first:
            first[target.attr] = stmt
    if not first or any(a.attr not in first for a in attributes):
        return
    order = {id(n): k for k, n in enumerate(gast.walk(fn))}
    for attr, stmt in first.items():  # no read before the first assignment
        reads = [a for a in attributes if a.attr == attr and isinstance(a.ctx, gast.Load)]
        bound_at = order[id(stmt.targets[0])]
        if any(
            order[id(a)] < bound_at or any(a is v for v in gast.walk(stmt.value)) for a in reads
        ):
            return
    names = {attr: f"{name}__{attr}" for attr in first}
    taken = {n.id for n in gast.walk(fn) if isinstance(n, gast.Name)}
    if taken & set(names.values()):
        return
    for node in gast.walk(fn):
        for field, value in gast.iter_fields(node):
            if isinstance(value, list):
                value[:] = [_as_variable(v, attributes, names) for v in value]
            elif any(value is a for a in attributes):
                setattr(node, field, _as_variable(value, attributes, names))
    for node in gast.walk(fn):  # nested functions binding them: nonlocal there
        if isinstance(node, gast.FunctionDef) and node is not fn:
            bound = {
                n.id
                for n in gast.walk(node)
                if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
            } & set(names.values())
            if bound:
                node.body.insert(0, gast.copy_location(gast.Nonlocal(names=sorted(bound)), node))


def _as_variable(node: Any, attributes: list[Any], names: dict[str, str]) -> Any:
    if not any(node is a for a in attributes):
        return node
    variable = gast.Name(id=names[node.attr], ctx=node.ctx, annotation=None, type_comment=None)
    return gast.copy_location(variable, node)


class TreeIndex:
    """One walk of a function's tree, for the questions lowering asks of it at many of its
    statements: which ``Name`` nodes of a name there are and which statements hold them,
    which statements stand in a loop, which places are inside a nested function. (A library
    function of thousands of nodes is asked at every binding of a name its blocks rebind.)

    >>> fn = gast.parse("def f(x):\\n    for i in x:\\n        y = i\\n    return y").body[0]
    >>> index = TreeIndex(fn)
    >>> [n.lineno for n in index.names["y"]]
    [3, 4]
    >>> [(type(s).__name__, len(held)) for s in index.statements
    ...  for held in [index.under("y").get(id(s), [])]]
    [('FunctionDef', 2), ('For', 1), ('Assign', 1), ('Return', 1)]
    >>> inner = fn.body[0].body[0]
    >>> id(inner) in index.in_loop, id(fn.body[1]) in index.in_loop
    (True, False)
    """

    def __init__(self, function: Any) -> None:
        self.function = function
        self.names: dict[str, list[Any]] = {}
        self.statements: list[Any] = []  # every statement, the function's own first
        self.blocks: list[list[Any]] = []  # every list of statements (bodies, orelse...)
        self.in_loop: set[int] = set()  # ids of the loops and the statements inside them
        self.nested: set[tuple[int, int]] = set()  # places inside a nested function
        self._enclosing: dict[int, tuple[int, ...]] = {}  # id(Name) -> its statements' ids
        self._under: dict[str, dict[int, list[Any]]] = {}
        stack: list[tuple[Any, tuple[int, ...], bool, bool]] = [(function, (), False, False)]
        while stack:
            node, chain, looped, inside = stack.pop()
            inside = inside or (
                isinstance(node, (gast.FunctionDef, gast.Lambda)) and node is not function
            )
            if inside:
                self.nested.add((getattr(node, "lineno", -1), getattr(node, "col_offset", -1)))
            if isinstance(node, gast.Name):
                self.names.setdefault(node.id, []).append(node)
                self._enclosing[id(node)] = chain
            if isinstance(node, gast.stmt):
                looped = looped or isinstance(node, (gast.For, gast.While))
                if looped:
                    self.in_loop.add(id(node))
                self.statements.append(node)
                chain = (*chain, id(node))
            for field in ("body", "orelse", "finalbody"):
                stmts = getattr(node, field, None)
                if isinstance(stmts, list) and stmts and isinstance(stmts[0], gast.stmt):
                    self.blocks.append(stmts)
            children = list(gast.iter_child_nodes(node))
            stack.extend((child, chain, looped, inside) for child in reversed(children))

    def under(self, name: str) -> dict[int, list[Any]]:
        """The ``Name`` nodes of ``name`` each statement holds (nested statements'
        included), by the statement's id."""
        found = self._under.get(name)
        if found is None:
            found = self._under[name] = {}
            for n in self.names.get(name, ()):
                for sid in self._enclosing[id(n)]:
                    found.setdefault(sid, []).append(n)
        return found


def _last_binding_at(function: Any, stmt: Any, name: str, index: TreeIndex | None = None) -> bool:
    """Is ``stmt`` (in straight-line code of ``function``) its last binding of ``name``: every
    other binding before it in the source (``params = Params.from_packed(params)`` of a
    parameter, in a branch decided when transforming)? Every read after it then means it.
    (``index``: :class:`TreeIndex` of ``function``, if known.)"""
    index = index if index is not None else TreeIndex(function)
    here = (stmt.lineno, stmt.col_offset)
    stores = [n for n in index.names.get(name, ()) if not isinstance(n.ctx, gast.Load)]
    return all((n.lineno, n.col_offset) <= here for n in stores) and id(stmt) not in index.in_loop


def _passed_once(stmt: Any, name: str) -> bool:
    """Is the statement ``stmt`` a call (assigned, returned or on its own) that reads ``name``
    once, as one of the arguments written in it (``project(vx_new, vy_new)``)?"""
    call = stmt.value if isinstance(stmt, (gast.Assign, gast.Expr, gast.Return)) else None
    if not isinstance(call, gast.Call) or _loads(stmt, name) != 1:
        return False
    direct = [*call.args, *(kw.value for kw in call.keywords)]
    return any(isinstance(a, gast.Name) and a.id == name for a in direct)


def _fixed_length_lists(fdef: Any) -> frozenset[str]:
    """The names of lists whose length at every ``*name`` spread is the length they were made
    with: bound once, by a statement at the top level of the function's body, to a list
    display without ``*`` items or to ``list(name)``, and otherwise only indexed (read or
    written: ``xs[i] = v``), spread into a call (``f(*xs)``) or measured (``len(xs)``) in
    the function itself, never in a function defined in it. (autograd's
    ``args = list(args); args[argnum] = symmetrize(args[argnum]); fun(*args)``.)

    >>> import gast
    >>> tree = gast.parse(
    ...     "def f(*args):\\n"
    ...     "    args = list(args)\\n"
    ...     "    args[1] = 2 * args[1]\\n"
    ...     "    ys = [1, 2]\\n"
    ...     "    ys.append(3)\\n"
    ...     "    return g(*args), g(*ys)\\n"
    ... )
    >>> sorted(_fixed_length_lists(tree.body[0]))
    ['args']
    """
    done = getattr(fdef, "adgen_fixed_lists", None)
    if done is not None:
        return frozenset(done)
    made: dict[str, int] = {}
    for stmt in fdef.body:
        if (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and _fixed_list_value(stmt.value)
        ):
            made[stmt.targets[0].id] = made.get(stmt.targets[0].id, 0) + 1
    names = {n for n, count in made.items() if count == 1}

    def bound(node: Any, parent: Any) -> bool:
        if isinstance(node.ctx, gast.Param):  # (`*args` itself, made a list next)
            return True
        return isinstance(parent, gast.Assign) and _fixed_list_value(parent.value)

    names = _used_only(fdef, names, bound, _fixed_list_read)
    fdef.adgen_fixed_lists = frozenset(names)
    return frozenset(names)


def _written_at_top(fdef: Any) -> frozenset[str]:
    """The names whose every item write (``xs[k] = v``, its only target) is a statement of
    the function's body itself: not in a loop, a branch, a ``with`` or a ``try``.

    >>> import gast
    >>> tree = gast.parse(
    ...     "def f(*args):\\n"
    ...     "    args = list(args)\\n"
    ...     "    args[1] = 2 * args[1]\\n"
    ...     "    ys = list(args)\\n"
    ...     "    for i in range(2):\\n"
    ...     "        ys[i] = 0.0\\n"
    ...     "    return g(*args), g(*ys)\\n"
    ... )
    >>> sorted(_written_at_top(tree.body[0]))
    ['args']
    """
    done = getattr(fdef, "adgen_written_at_top", None)
    if done is not None:
        return frozenset(done)
    top = {
        id(stmt.targets[0])
        for stmt in fdef.body
        if isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Subscript)
    }
    names: set[str] = set()
    elsewhere: set[str] = set()
    for node in _own_nodes(fdef):
        if (
            isinstance(node, gast.Subscript)
            and isinstance(node.ctx, (gast.Store, gast.Del))
            and isinstance(node.value, gast.Name)
        ):
            (names if id(node) in top else elsewhere).add(node.value.id)
    fdef.adgen_written_at_top = frozenset(names - elsewhere)
    return frozenset(fdef.adgen_written_at_top)


def _fixed_list_value(value: Any) -> bool:
    if isinstance(value, gast.List):
        return not any(isinstance(e, gast.Starred) for e in value.elts)
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id == "list"
        and len(value.args) == 1
        and isinstance(value.args[0], gast.Name)
        and not value.keywords
    )


def _fixed_list_read(node: Any, parent: Any, parents: dict[int, Any]) -> bool:
    """Does this read of a fixed-length list keep its length: an index (not a slice
    written), a ``*`` spread into a call, ``len``, or the ``list(name)`` that makes it?"""
    if isinstance(parent, gast.Subscript) and parent.value is node:
        if isinstance(parent.ctx, gast.Del):
            return False
        if isinstance(parent.ctx, gast.Store):
            holder = parents.get(id(parent))
            return isinstance(holder, gast.Assign) and not isinstance(parent.slice, gast.Slice)
        return True
    if isinstance(parent, gast.Starred):
        return isinstance(parents.get(id(parent)), gast.Call)
    return (
        isinstance(parent, gast.Call)
        and isinstance(parent.func, gast.Name)
        and parent.func.id in ("len", "list")
        and node in parent.args
    )


def _block_local(function: Any, value: Any, name: str, index: TreeIndex | None = None) -> bool:
    """Is every read of ``name`` in ``function`` in a statement after a binding ``name = ...``
    in the same block, with no statement between them (nor the one reading, before the read)
    binding it again, none inside a nested function -- and is ``name = value`` one of those
    bindings, every binding of ``name`` such a plain assignment? Then each pass through a
    block binds ``name`` before reading it, and every read means the binding before it in
    its own block (``for W, b in params: layer = Dense(W, b); h = layer(h)``; ``if c: g =
    loggamma; ...; g(x)`` and ``else: g = gammaln; ...; g(x)``). (Places, not nodes, are
    compared: lowering may have copied the statements after an early return into two
    branches, and each copy is lowered on its own; a place is covered only where every
    copy of it is. ``index``: :class:`TreeIndex` of ``function``, if known.)"""

    def place(n: Any) -> tuple[int, int]:
        return (getattr(n, "lineno", -1), getattr(n, "col_offset", -1))

    index = index if index is not None else TreeIndex(function)
    uses = index.names.get(name, [])
    under = index.under(name)
    bindings = {
        id(stmt): stmt
        for stmt in index.statements
        if isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
        and stmt.targets[0].id == name
    }
    stores = {place(n) for n in uses if not isinstance(n.ctx, gast.Load)}
    if stores != {place(b.targets[0]) for b in bindings.values()}:
        return False  # bound otherwise too (a loop target, `del`, a tuple)
    if not any(b.value is value or place(b.value) == place(value) for b in bindings.values()):
        return False
    covered: set[int] = set()
    for stmts in index.blocks:
        bound = False
        for stmt in stmts:
            held = under.get(id(stmt), [])
            if id(stmt) in bindings:
                if bound:  # its value is read before it binds
                    covered.update(id(n) for n in held if n is not stmt.targets[0])
                bound = True
            elif any(not isinstance(n.ctx, gast.Load) for n in held):
                bound = False  # rebound inside: the reads after it are ambiguous
            elif bound:
                covered.update(id(n) for n in held)
    loads = [n for n in uses if isinstance(n.ctx, gast.Load)]
    if any(place(n) in index.nested for n in loads):
        return False
    missed = {place(n) for n in loads if id(n) not in covered}
    return not missed


def _static_dicts(fdef: Any) -> frozenset[str]:
    """The names of dicts the function builds key by key in its own straight-line code:
    bound (only at the top level of its body) to a dict display or ``dict()`` (or to an
    option, then ``{}`` where it is None), otherwise only indexed
    (``d[k]``, ``d[k] = v``, ``d[k] += v``), spread into a call (``f(**d)``), updated
    (``d.update(...)``), asked ``k in d``, ``d.get(k)``, ``len(d)`` or ``d is None``, or
    returned -- never passed on, iterated, kept by another name or read by a function
    defined in it. What such a dict holds is known key
    by key where it is read (scikit-learn's ``params = {}``, then ``params[p] = ...`` for
    each parameter name, then ``kernel(X, **params)``).

    >>> import gast
    >>> tree = gast.parse(
    ...     "def f(x):\\n"
    ...     "    params = {}\\n"
    ...     "    params['a'] = x\\n"
    ...     "    kept = {}\\n"
    ...     "    g(kept)\\n"
    ...     "    return h(**params)\\n"
    ... )
    >>> sorted(_static_dicts(tree.body[0]))
    ['params']
    """
    done = getattr(fdef, "adgen_static_dicts", None)
    if done is not None:
        return frozenset(done)
    top = {id(stmt) for stmt in fdef.body}
    plain = [
        stmt
        for stmt in fdef.body
        if isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
    ]
    names = {stmt.targets[0].id for stmt in plain if _dict_value(stmt.value)}
    # the function's `**kwds`: a new dict at each call, of the keys the call passes
    # (scikit-learn's `kwds.update(**params)` before `cdist(X, Y, **kwds)`)
    kwarg = fdef.args.kwarg.id if getattr(fdef.args, "kwarg", None) is not None else None
    if kwarg is not None:
        names.add(kwarg)
    # `params = self.kernel_params` then `if params is None: params = {}`, both at the top
    # level: a dict built key by key where the test is decided (an option left at None)
    defaults = _none_defaults(fdef)
    guarded = {n for n in defaults.values() if any(s.targets[0].id == n for s in plain)}
    names |= guarded
    local = _block_local_dicts(fdef, top)
    names |= local

    def bound(node: Any, parent: Any) -> bool:
        if id(parent) in defaults or (isinstance(node.ctx, gast.Param) and node.id == kwarg):
            return True
        return (
            isinstance(parent, gast.Assign)
            and (id(parent) in top or node.id in local)
            and (_dict_value(parent.value) or node.id in guarded)
            and parent.targets == [node]
        )

    names = _used_only(fdef, names, bound, _static_dict_read)
    fdef.adgen_static_dicts = frozenset(names)
    return frozenset(names)


def _block_local_dicts(fdef: Any, top: set[int]) -> set[str]:
    """The names bound to a dict display in a loop's or a branch's block (or in a copy of
    the statements after an early return), only ever to dict displays, whose every read
    follows a binding in its own block (:func:`_block_local`): within that block the dict
    is built in straight-line code, as one at the function's top level is.

    >>> import gast
    >>> tree = gast.parse(
    ...     "def f(x):\\n"
    ...     "    for i in range(3):\\n"
    ...     "        box = {}\\n"
    ...     "        box['a'] = x\\n"
    ...     "        y = box['a']\\n"
    ...     "    if x:\\n"
    ...     "        late = {}\\n"
    ...     "    late['b'] = x\\n"
    ...     "    return y\\n"
    ... )
    >>> sorted(_block_local_dicts(tree.body[0], {id(s) for s in tree.body[0].body}))
    ['box']
    """
    bindings: dict[str, list[Any]] = {}
    for stmt in gast.walk(fdef):
        if (
            isinstance(stmt, gast.Assign)
            and id(stmt) not in top
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
        ):
            bindings.setdefault(stmt.targets[0].id, []).append(stmt)
    candidates = {
        name: stmts for name, stmts in bindings.items() if all(_dict_value(s.value) for s in stmts)
    }
    if not candidates:
        return set()
    index = TreeIndex(fdef)
    return {
        name
        for name, stmts in candidates.items()
        if _block_local(fdef, stmts[0].value, name, index)
    }


def _none_defaults(fdef: Any) -> dict[int, str]:
    """The ``name = {...}`` assignments that are the whole of a top-level ``if name is None:``
    (no ``else``), by id, with their names."""
    found: dict[int, str] = {}
    for stmt in fdef.body:
        if not (isinstance(stmt, gast.If) and not stmt.orelse and len(stmt.body) == 1):
            continue
        test, inner = stmt.test, stmt.body[0]
        if (
            isinstance(test, gast.Compare)
            and isinstance(test.left, gast.Name)
            and [type(op) for op in test.ops] == [gast.Is]
            and isinstance(test.comparators[0], gast.Constant)
            and test.comparators[0].value is None
            and isinstance(inner, gast.Assign)
            and [getattr(t, "id", None) for t in inner.targets] == [test.left.id]
            and _dict_value(inner.value)
        ):
            found[id(inner)] = test.left.id
    return found


def _dict_value(value: Any) -> bool:
    if isinstance(value, gast.Dict):
        return all(
            k is not None and isinstance(k, gast.Constant) and isinstance(k.value, str)
            for k in value.keys
        )
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id == "dict"
        and not value.args
        and all(k.arg is not None for k in value.keywords)
    )


def _static_dict_read(node: Any, parent: Any, parents: dict[int, Any]) -> bool:
    """Does this use of a dict built key by key keep it the function's own: an index (read
    or written, not deleted), ``**`` in a call, ``k in d``, ``d.get(...)``, ``len(d)``?"""
    if isinstance(parent, gast.Subscript) and parent.value is node:
        if isinstance(parent.ctx, gast.Del):
            return False
        if isinstance(parent.ctx, gast.Store):
            return isinstance(parents.get(id(parent)), (gast.Assign, gast.AugAssign))
        return True
    if isinstance(parent, gast.keyword):
        return parent.arg is None
    if isinstance(parent, gast.Return):  # (a helper's new dict: its caller's, key by key)
        return True
    if isinstance(parent, gast.Compare):
        if parent.left is node and len(parent.ops) == 1:  # (`d is None`: no use of the dict)
            other = parent.comparators[0]
            none = isinstance(other, gast.Constant) and other.value is None
            return none and isinstance(parent.ops[0], (gast.Is, gast.IsNot))
        return node in parent.comparators and all(
            isinstance(op, (gast.In, gast.NotIn)) for op in parent.ops
        )
    if isinstance(parent, gast.Attribute) and parent.attr == "get":
        return isinstance(parents.get(id(parent)), gast.Call)
    if isinstance(parent, gast.Attribute) and parent.attr == "update":  # (a statement)
        call = parents.get(id(parent))
        return isinstance(call, gast.Call) and isinstance(parents.get(id(call)), gast.Expr)
    return (
        isinstance(parent, gast.Call)
        and isinstance(parent.func, gast.Name)
        and parent.func.id == "len"
        and node in parent.args
    )


def _used_only(
    fdef: Any,
    names: set[str],
    bound: Callable[[Any, Any], bool],
    read: Callable[[Any, Any, dict[int, Any]], bool],
) -> set[str]:
    """The ``names`` that ``fdef`` binds only where ``bound(name node, parent)`` allows and
    reads only where ``read(name node, parent, parents)`` allows -- never deletes, declares
    ``global`` or ``nonlocal``, or uses in a function defined in it."""
    if not names:
        return names
    own = _own_nodes(fdef)
    parents = {id(c): n for n in own for c in gast.iter_child_nodes(n)}
    for inner in (n for n in gast.walk(fdef) if n is not fdef):
        if isinstance(inner, (gast.FunctionDef, gast.Lambda)):
            names -= {n.id for n in gast.walk(inner) if isinstance(n, gast.Name)}
    for node in own:
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            names -= set(node.names)
        if not (isinstance(node, gast.Name) and node.id in names):
            continue
        parent = parents.get(id(node))
        if isinstance(node.ctx, (gast.Store, gast.Param)):
            if not bound(node, parent):
                names.discard(node.id)
        elif isinstance(node.ctx, gast.Del) or not read(node, parent, parents):
            names.discard(node.id)
    return names
