"""Saves and restores of Numba code that nothing reads, removed (``backend="numba"``).

adgen's generated code undoes each write into an array when it runs backwards: the forward
pass saves the region before writing it (``tape.append(nbrt.copy_of(u[1:-1]))``), the
backward pass writes the saved values back (``nbrt.setslice(u, slice(1, -1), tape.pop())``),
so that every later read of ``u`` sees the values it had then. Where no later read exists
(``u`` is a scratch array the derivative never reads again) the copy, the tape and the write
back are work for nothing: on small arrays a fifth of a time step.

:func:`dead_restores` removes a tape's pushes and pops when each pop is a restore nothing reads,
proved from the code's structure alone:

* every push is an expression statement of names, slices, numbers and pure helpers (removing
  it removes no effect but the push);
* every pop is a restore: ``N = tape.pop()``, ``N[index] = tape.pop()`` or
  ``nbrt.setslice(N, index, tape.pop())``;
* after the restore -- every statement later in the text, and the whole body of each loop
  around it (its next iterations) -- no name that may hold the restored array is read for
  its values. A name may hold it if an assignment, a loop or a tape links the two
  (:func:`sharing`: views, the names pushed onto a tape and those its pops bind; a
  function's argument or anything bound from one is never proved unread: the caller holds
  it). Reads of an array's shape only (``len``, ``.shape``, ``nbrt.zeros_like(x)``, the
  ``x`` of ``nbrt.getitem_vjp(g, x, index)``, ``add_at``, ``add_into``, ``unbroadcast``) and
  writes into it (the array of ``nbrt.setslice``) read no value.

>>> import ast
>>> fn = ast.parse('''def f(u0, n):
...     tape_u = []
...     u = u0.copy()
...     for _ in range(n):
...         tape_u.append(nbrt.copy_of(u[1:]))
...         nbrt.setslice(u, slice(1, None), u[:-1] * 2.0)
...     s = np.sum(u)
...     for _ in range(n):
...         nbrt.setslice(u, slice(1, None), tape_u.pop())
...     return s
... ''').body[0]
>>> dead_restores(fn, {"tape_u"})
{'tape_u'}
>>> print(ast.unparse(fn))
def f(u0, n):
    u = u0.copy()
    for _ in range(n):
        nbrt.setslice(u, slice(1, None), u[:-1] * 2.0)
    s = np.sum(u)
    for _ in range(n):
        pass
    return s
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

# id of a statement -> the statement and the comment lines above it (numba_code.Comments)
Comments = dict[int, tuple[ast.stmt, list[str]]]

HELPERS = "nbrt"
# calls whose value is a new array (or a number): it shares memory with none of its arguments
_FRESH = frozenset(
    {
        f"{HELPERS}.copy_of",
        f"{HELPERS}.written",
        f"{HELPERS}.getitem_vjp",
        f"{HELPERS}.add_at",
        f"{HELPERS}.zeros_like",
        f"{HELPERS}.fusable",
        "np.empty",
        "np.zeros",
        "np.ones",
        "np.zeros_like",
        "np.empty_like",
        "np.ones_like",
        "np.sum",
        "len",
        "range",
        "float",
        "int",
    }
)
# the arguments of calls that only read an array's shape (helper -> positions)
_SHAPE_ONLY = {
    f"{HELPERS}.zeros_like": (0,),
    f"{HELPERS}.saved_shape": (0,),
    f"{HELPERS}.unbroadcast": (1,),
    f"{HELPERS}.getitem_vjp": (1,),
    f"{HELPERS}.add_at": (2,),
    f"{HELPERS}.add_into": (2,),
    "len": (0,),
}
# the calls a removable push may make (of names, slices and numbers)
_PURE_PUSH = frozenset({f"{HELPERS}.copy_of", f"{HELPERS}.saved_shape", "slice"})


def dead_restores(
    fn: ast.FunctionDef, tapes: set[str], comments: Comments | None = None
) -> set[str]:
    """Remove from ``fn`` the tapes of ``tapes`` whose every pop is a restore nothing reads
    (with their pushes and the ``tape = []`` that makes them); the tapes removed. The comment
    lines above a statement removed (``comments``) go to the next one of its block."""
    order = list(_statements(fn.body, ()))
    pushes: dict[str, list[ast.stmt]] = {t: [] for t in tapes}
    pops: dict[str, list[tuple[int, ast.stmt, tuple[ast.stmt, ...]]]] = {t: [] for t in tapes}
    odd: set[str] = set()
    for at, (stmt, around) in enumerate(order):
        for node in _own(stmt):
            if isinstance(node, ast.Name) and node.id in tapes:
                tape = node.id
                if _push_of(stmt) == tape:
                    pushes[tape].append(stmt)
                elif _restored(stmt, tape) is not None:
                    pops[tape].append((at, stmt, around))
                elif not _made(stmt, tape):
                    odd.add(tape)
    links = sharing(fn, tapes)
    args = {a.arg for a in fn.args.args}
    removed: set[str] = set()
    for tape in sorted(tapes - odd):
        if not pops[tape] or not all(_pure(_push_value(s)) for s in pushes[tape]):
            continue
        if all(
            _unread(order, at, around, _watched(s, tape, links), args, _shape_counts(s, tape))
            for at, s, around in pops[tape]
        ):
            removed.add(tape)
    if removed:
        _drop(fn, removed, {} if comments is None else comments)
    return removed


def sharing(fn: ast.FunctionDef, tapes: set[str]) -> dict[str, set[str]]:
    """name -> the names that may hold an array it holds (itself among them): linked by an
    assignment whose value may be (a view of) another name's array, by a loop's target and
    what it runs over, by the names pushed onto a tape and those its pops bind."""
    parent: dict[str, str] = {}

    def find(name: str) -> str:
        parent.setdefault(name, name)
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    def union(names: set[str]) -> None:
        if names:
            first = find(next(iter(names)))
            for name in names:
                parent[find(name)] = first

    pushed: dict[str, set[str]] = {t: set() for t in tapes}
    for node in ast.walk(fn):
        if isinstance(node, ast.Expr) and (tape := _push_of(node)) in tapes:
            pushed[tape] |= _shares(_push_value(node), {})
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            bound = {n.id for t in node.targets for n in _bound(t)}
            shared = _shares(node.value, pushed)
            immutable = isinstance(node.value, ast.Constant)  # (None, a number: nothing shared)
            union(bound | shared if not immutable else set())
            for name in bound:
                find(name)
        elif isinstance(node, (ast.For, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
            head = node.iter if isinstance(node, ast.For) else node.value
            union({n.id for n in _bound(node.target)} | _shares(head, pushed))
    classes: dict[str, set[str]] = {}
    for name in list(parent):
        classes.setdefault(find(name), set()).add(name)
    return {name: classes[find(name)] for name in parent}


def _shares(node: ast.expr | None, pushed: dict[str, set[str]]) -> set[str]:
    """The names whose arrays ``node``'s value may be, or be a view of."""
    if node is None or isinstance(node, ast.Constant):
        return set()
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare)):
        return set()  # (a new array, or a number)
    if isinstance(node, (ast.Subscript, ast.Attribute)):
        return _shares(node.value, pushed)
    if isinstance(node, (ast.Tuple, ast.List)):
        return set().union(*(_shares(e, pushed) for e in node.elts))
    if isinstance(node, ast.IfExp):
        return _shares(node.body, pushed) | _shares(node.orelse, pushed)
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if name in _FRESH or (isinstance(node.func, ast.Attribute) and node.func.attr == "copy"):
            return set()
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "pop"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in pushed
        ):
            return set(pushed[node.func.value.id])
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _bound(target: ast.expr) -> list[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _bound(e)]
    return []  # (a write into an array binds no name)


def _statements(
    block: list[ast.stmt], around: tuple[ast.stmt, ...]
) -> Iterator[tuple[ast.stmt, tuple[ast.stmt, ...]]]:
    """Every statement in the order of the text, with the compound statements around it."""
    for stmt in block:
        yield stmt, around
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from _statements(inner, (*around, stmt))


def _own(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of ``stmt`` itself (a compound statement's head, not its body)."""
    if isinstance(stmt, (ast.For, ast.While, ast.If)):
        heads = [stmt.target, stmt.iter] if isinstance(stmt, ast.For) else [stmt.test]
        for head in heads:
            yield from ast.walk(head)
        return
    yield from ast.walk(stmt)


def _push_of(stmt: ast.stmt) -> str | None:
    """The tape ``stmt`` pushes onto (``tape.append(value)``), if that is all it does."""
    if not isinstance(stmt, ast.Expr):
        return None
    call = stmt.value
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
        and isinstance(call.func.value, ast.Name)
        and len(call.args) == 1
        and not call.keywords
    ):
        return call.func.value.id
    return None


def _push_value(stmt: ast.stmt) -> ast.expr:
    return stmt.value.args[0]  # type: ignore[attr-defined, no-any-return]


def _is_pop(node: ast.expr | None, tape: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and ast.unparse(node) == f"{tape}.pop()"
        and isinstance(node.func, ast.Attribute)
    )


def _restored(stmt: ast.stmt, tape: str) -> tuple[str, bool] | None:
    """The name a restore from ``tape`` writes (and whether into its array), or ``None``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _is_pop(stmt.value, tape):
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            return target.id, False
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            if not _mentions(target.slice, tape):
                return target.value.id, True
        return None
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if (
            ast.unparse(call.func) == f"{HELPERS}.setslice"
            and len(call.args) == 3
            and not call.keywords
            and isinstance(call.args[0], ast.Name)
            and _is_pop(call.args[2], tape)
            and not _mentions(call.args[1], tape)
        ):
            return call.args[0].id, True
    return None


def _made(stmt: ast.stmt, tape: str) -> bool:
    """``tape = []``."""
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id == tape
        and isinstance(stmt.value, ast.List)
        and not stmt.value.elts
    )


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _pure(node: ast.expr) -> bool:
    """An expression of names, numbers, slices and :data:`_PURE_PUSH` calls (no effect)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            if ast.unparse(n.func) not in _PURE_PUSH or n.keywords:
                return False
        elif not isinstance(
            n,
            (ast.Name, ast.Constant, ast.Subscript, ast.Slice, ast.Tuple, ast.UnaryOp, ast.USub,
             ast.Load, ast.Attribute),
        ):  # fmt: skip
            return False
    return True


def _watched(stmt: ast.stmt, tape: str, links: dict[str, set[str]]) -> set[str]:
    """The names whose reads would read what the restore ``stmt`` writes."""
    restored = _restored(stmt, tape)
    assert restored is not None
    name, into_array = restored
    return set(links.get(name, {name})) | {name} if into_array else {name}


def _shape_counts(stmt: ast.stmt, tape: str) -> bool:
    """Is a read of the shape of what the restore ``stmt`` binds a read of what it restores
    (a name bound anew: its shape may be another; a write into an array keeps its shape)?"""
    restored = _restored(stmt, tape)
    return restored is not None and not restored[1]


def _unread(
    order: list[tuple[ast.stmt, tuple[ast.stmt, ...]]],
    at: int,
    around: tuple[ast.stmt, ...],
    watched: set[str],
    args: set[str],
    shapes: bool,
) -> bool:
    """Does no statement that may run after ``order[at]`` read a value of ``watched`` (or,
    with ``shapes``, its shape)?"""
    if watched & args:
        return False
    loops = [s for s in around if isinstance(s, (ast.For, ast.While))]
    for k, (stmt, outer) in enumerate(order):
        after = k > at or any(loop is stmt or loop in outer for loop in loops)
        if after and k != at and _reads(stmt, watched, shapes):
            return False
    return True


def _reads(stmt: ast.stmt, watched: set[str], shapes: bool) -> bool:
    """Does ``stmt`` (its head, for a compound statement) read a value of ``watched`` (or,
    with ``shapes``, its shape)?"""
    exempt: set[int] = set()
    for node in [] if shapes else _own(stmt):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            places = _SHAPE_ONLY.get(name, ())
            if name == f"{HELPERS}.setslice":
                places = (0,)
            for k in places:
                if k < len(node.args) and isinstance(node.args[k], ast.Name):
                    exempt.add(id(node.args[k]))
        elif isinstance(node, ast.Attribute) and node.attr == "shape":
            if isinstance(node.value, ast.Name):
                exempt.add(id(node.value))
    return any(
        isinstance(node, ast.Name)
        and isinstance(node.ctx, ast.Load)
        and node.id in watched
        and id(node) not in exempt
        for node in _own(stmt)
    )


def _drop(fn: ast.FunctionDef, tapes: set[str], comments: Comments) -> None:
    """Remove every statement that makes, pushes onto or pops from ``tapes``."""

    def keep(stmt: ast.stmt) -> bool:
        return not (
            _push_of(stmt) in tapes
            or any(_made(stmt, t) or _restored(stmt, t) is not None for t in tapes)
        )

    def block(stmts: list[ast.stmt], body: bool) -> list[ast.stmt]:
        out = []
        held: list[str] = []
        for stmt in stmts:
            entry = comments.get(id(stmt))
            above = entry[1] if entry is not None and entry[0] is stmt else []
            if not keep(stmt):
                held.extend(above)
                continue
            if held:
                comments[id(stmt)] = (stmt, held + above)
                held = []
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner:
                    setattr(stmt, field, block(inner, field == "body"))
            out.append(stmt)
        if out or not body:
            return out
        empty = ast.Pass()
        if held:  # (the comments of a block left empty stay above its pass)
            comments[id(empty)] = (empty, held)
        return [empty]

    fn.body = block(fn.body, True)
