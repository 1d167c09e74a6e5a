"""Compute a repeated expression once.

Code differentiated again repeats what two templates both write: forward mode over a
gradient's code writes ``tanh``'s tangent ``h_dot = r_dot * (1.0 - h * h)`` for the
primal's ``h = np.tanh(r)``, and the gradient's own line ``r_bar = h_bar * (1.0 - h * h)``
is read again as it stands, so ``1.0 - h * h`` -- an array -- is computed twice. This pass
finds a pure expression (arithmetic, and calls of NumPy's functions and adgen's that only
compute: :func:`adgen.rules.registry.pure_call`) written more than once in the function's
straight-line statements over the same values of the same names, binds it once to a new
name before its first use, and reads that name at each use. Only the function's top-level
statements take part; a compound statement (a loop, a branch) binds every name it binds,
and a write into an array (``a[i] = v``, ``a += v``) or a call that may do anything ends
what is shared before it (an array written may be another name's view).
"""

from __future__ import annotations

import ast

from adgen.backend.codeopt.direct_reductions import REDUCTION_METHODS
from adgen.backend.codeopt.fuse_temporaries import _pure
from adgen.pyast import dotted_text, walk

# a list's own methods: they change the list, no array
_LIST_METHODS = frozenset({"append", "extend", "insert", "pop"})


def share_repeated(source: str) -> str:
    """The function ``source`` defines, with each pure expression it repeats over the same
    values computed once.

    >>> print(share_repeated(
    ...     "def f_jvp(r, r_dot, h_bar):\\n"
    ...     "    # line 2: h = np.tanh(r)\\n"
    ...     "    h = np.tanh(r)\\n"
    ...     "    h_dot = r_dot * (1.0 - h * h)\\n"
    ...     "    r_bar = h_bar * (1.0 - h * h)\\n"
    ...     "    return (h_dot, r_bar)\\n"
    ... ), end="")
    def f_jvp(r, r_dot, h_bar):
        # line 2: h = np.tanh(r)
        h = np.tanh(r)
        shared_1 = 1.0 - h * h
        h_dot = r_dot * shared_1
        r_bar = h_bar * shared_1
        return (h_dot, r_bar)

    A name bound again between two uses, or a write into an array, keeps them apart:

    >>> print(share_repeated(
    ...     "def f(x, y):\\n"
    ...     "    a = np.exp(x) + 1.0\\n"
    ...     "    x = y\\n"
    ...     "    b = np.exp(x) + 1.0\\n"
    ...     "    y[0] = 2.0\\n"
    ...     "    c = np.exp(x) + 1.0\\n"
    ...     "    return a + b + c\\n"
    ... ), end="")
    def f(x, y):
        a = np.exp(x) + 1.0
        x = y
        b = np.exp(x) + 1.0
        y[0] = 2.0
        c = np.exp(x) + 1.0
        return a + b + c
    """
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return source
    fn = tree.body[0]
    found = _repeated(fn.body)
    if not found:
        return source
    taken = {n.id for n in walk(fn) if isinstance(n, ast.Name)} | {a.arg for a in fn.args.args}
    lines = source.split("\n")
    inserts: dict[int, list[str]] = {}  # statement index -> the lines put before it
    changed: set[int] = set()
    replace: dict[int, str] = {}  # id of an occurrence -> the name it reads
    counter = 0
    for places in found:
        counter += 1
        while f"shared_{counter}" in taken:
            counter += 1
        name = f"shared_{counter}"
        taken.add(name)
        first = min(i for i, _ in places)
        indent = " " * fn.body[first].col_offset
        inserts.setdefault(first, []).append(f"{indent}{name} = {ast.unparse(places[0][1])}")
        for i, node in places:
            replace[id(node)] = name
            changed.add(i)
    rewriter = _Replace(replace)
    for i in sorted(changed | set(inserts), reverse=True):
        stmt = fn.body[i]
        start, end = stmt.lineno - 1, stmt.end_lineno or stmt.lineno
        new = lines[start:end]
        if i in changed:
            new = [" " * stmt.col_offset + ast.unparse(rewriter.visit(stmt))]
        lines[start:end] = inserts.get(i, []) + new
    return "\n".join(lines)


def _repeated(body: list[ast.stmt]) -> list[list[tuple[int, ast.expr]]]:
    """The places (statement index, node) of each pure expression written more than once
    over the same values, the largest first; an expression inside another one shared is
    left to it."""
    version: dict[str, int] = {}
    epoch = 0
    seen: dict[tuple[object, ...], list[tuple[int, ast.expr, bool]]] = {}
    for i, stmt in enumerate(body):
        barrier = _barrier(stmt)
        value = None if barrier else _value(stmt)
        if value is not None:
            whole = {id(node) for node in _bound_as_they_are(value)}
            for node in walk(value):
                if not (isinstance(node, ast.expr) and _candidate(node) and _pure(node)):
                    continue
                names = sorted({n.id for n in walk(node) if isinstance(n, ast.Name)})
                key = (epoch, ast.dump(node), tuple((n, version.get(n, 0)) for n in names))
                seen.setdefault(key, []).append((i, node, id(node) in whole))
        if barrier:
            epoch += 1
        for n in _bound(stmt):
            version[n] = version.get(n, 0) + 1
    # an expression bound as it is (`t = e`, an item of a returned tuple) is shared with at
    # most one such place: two names (or results) would hold one array, and a later write
    # into one would change the other
    groups: list[list[tuple[int, ast.expr]]] = []
    for found in seen.values():
        bound = [(i, node) for i, node, whole in found if whole]
        used = [(i, node) for i, node, whole in found if not whole] + bound[:1]
        if len(used) > 1:
            groups.append(sorted(used, key=lambda place: place[0]))
    groups.sort(key=lambda places: -_size(places[0][1]))
    chosen: list[list[tuple[int, ast.expr]]] = []
    inside: set[int] = set()
    for places in groups:
        if any(id(node) in inside for _, node in places):
            continue
        chosen.append(places)
        for _, node in places:
            inside.update(id(sub) for sub in walk(node))
    return chosen


def _bound_as_they_are(value: ast.expr) -> list[ast.expr]:
    """The parts of a statement's value bound (or returned) as they are: the value, the
    items of a tuple or list display it is, and theirs."""
    if isinstance(value, (ast.Tuple, ast.List)):
        return [value] + [part for e in value.elts for part in _bound_as_they_are(e)]
    if isinstance(value, ast.Starred):
        return _bound_as_they_are(value.value)
    return [value]


def _value(stmt: ast.stmt) -> ast.expr | None:
    """What a plain assignment to names, or a ``return``, computes."""
    if isinstance(stmt, ast.Assign) and all(
        isinstance(t, ast.Name)
        or (isinstance(t, ast.Tuple) and all(isinstance(e, ast.Name) for e in t.elts))
        for t in stmt.targets
    ):
        return stmt.value
    if isinstance(stmt, ast.Return):
        return stmt.value
    return None


def _bound(stmt: ast.stmt) -> set[str]:
    """The names ``stmt`` binds, deletes, or changes (a list's ``append`` and ``pop``)."""
    names = {
        n.id for n in walk(stmt) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    for node in walk(stmt):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _LIST_METHODS
            and isinstance(node.func.value, ast.Name)
        ):
            names.add(node.func.value.id)
    return names


def _barrier(stmt: ast.stmt) -> bool:
    """May ``stmt`` write into an array (another name's view, perhaps): a write into an
    item or attribute, ``+=``, a block, a call that writes or may do anything?"""
    if isinstance(stmt, ast.Delete):
        return False
    if not isinstance(stmt, (ast.Assign, ast.Return, ast.Expr)):
        return True  # (+=, a loop, a branch...)
    if isinstance(stmt, ast.Assign) and _value(stmt) is None:
        return True  # a[i] = v, obj.w = v
    return any(isinstance(n, ast.Call) and _writes(n) for n in walk(stmt))


# calls of the modules generated code uses that write into an array they are given
_WRITERS = frozenset(
    {"np.copyto", "np.put", "np.putmask", "np.place", "np.fill_diagonal", "np.put_along_axis"}
    | {"rt.scatter_add"}
)
_MODULES = ("np.", "rt.", "math.", "scipy.special.", "scipy.stats.")
# builtins and methods that compute only (a list's own methods change the list: _bound)
_READERS = frozenset(
    {"len", "range", "float", "int", "bool", "complex", "tuple", "list", "isinstance", "abs"}
    | {"min", "max", "sum", "zip", "enumerate", "slice", "reversed", "type"}
)
_METHODS = REDUCTION_METHODS | {"copy", "astype", "reshape", "ravel", "transpose", "conj"}


def _writes(call: ast.Call) -> bool:
    """May this call write into an array?"""
    if any(k.arg == "out" for k in call.keywords):
        return True
    func = dotted_text(call.func) or ""
    if func.endswith(".at") or func in _WRITERS:
        return True
    if func.startswith(_MODULES) or func in _READERS:
        return False
    if isinstance(call.func, ast.Attribute):
        return call.func.attr not in _METHODS | _LIST_METHODS
    return True


def _candidate(node: ast.AST) -> bool:
    """An operation worth computing once: arithmetic or a call, over some name."""
    if not isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call)):
        return False
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, (ast.Name, ast.Constant)):
        return False  # (-x: as cheap as reading a name)
    return any(isinstance(n, ast.Name) for n in walk(node))


def _size(node: ast.AST) -> int:
    return sum(1 for _ in walk(node))


class _Replace(ast.NodeTransformer):
    def __init__(self, names: dict[int, str]) -> None:
        self.names = names

    def generic_visit(self, node: ast.AST) -> ast.AST:
        name = self.names.get(id(node))
        if name is not None:
            return ast.Name(id=name, ctx=ast.Load())
        return super().generic_visit(node)
