"""Write a temporary read once back into the expression that reads it.

The three-address IR names the result of every operation, and so does the code written
from it. This pass puts a pure temporary that is read once back into the statement that
reads it, within the code of one original line and a line width, so the code reads the
way the user wrote the line. Values stay the same; Python stores and loads fewer names.
:func:`fuse_temporaries` shows it, source in and source out.

Forward mode runs it as its only pass; reverse mode after the passes that match
statements as the sweeps wrote them (see :mod:`adgen.backend.codeopt`). ``fuse=False`` skips it.
"""

from __future__ import annotations

import ast

from adgen.backend.codeopt.common import (
    _blocks,
    _is_name,
    _NameCache,
    _simple_assign,
    _statements,
)
from adgen.pyast import Transformer, walk


def fuse_temporaries(source: str, width: int = 100) -> str:
    """Write a temporary read once back into the expression that reads it, the way the
    original line was written: ``s_2 = s_1 * y`` then ``s = s_2 + s_4`` is ``s = s_1 * y +
    s_4``. Only pure code moves (arithmetic, ``math`` and NumPy functions that compute, no
    ``out=``), only past plain assignments of pure values to other names, only within the
    code of one original line (no comment in between), and only while the line stays
    within ``width`` characters. Values are the same; Python just stores and loads fewer
    names.

    >>> print(fuse_temporaries(
    ...     "def f_vjp(x, y, z, out_bar):\\n"
    ...     "    # line 2: s = math.sin(x) * y + 0.5 * math.cos(z)\\n"
    ...     "    s_1 = math.sin(x)\\n"
    ...     "    s_2 = s_1 * y\\n"
    ...     "    s_3 = math.cos(z)\\n"
    ...     "    s_4 = 0.5 * s_3\\n"
    ...     "    s = s_2 + s_4\\n"
    ...     "    # line 3: return s * s_1\\n"
    ...     "    return (s * s_1, ())\\n"
    ... ), end="")
    def f_vjp(x, y, z, out_bar):
        # line 2: s = math.sin(x) * y + 0.5 * math.cos(z)
        s_1 = math.sin(x)
        s = s_1 * y + 0.5 * math.cos(z)
        # line 3: return s * s_1
        return (s * s_1, ())

    A temporary bound in several places (a checkpointed loop's body is written twice: the
    primal run and its recomputation) is fused only if every binding is fused into the one
    statement reading it next, and nothing else reads it.
    """
    excluded: set[str] = set()
    while True:
        fused, partial = _fuse(source, width, excluded)
        if not partial:
            return fused
        excluded |= partial


def _fuse(source: str, width: int, excluded: set[str]) -> tuple[str, set[str]]:
    """One attempt of :func:`fuse_temporaries`, leaving the names ``excluded`` alone; also
    the names bound several times that it fused in some places but not in all (the attempt
    is then made again without them)."""
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return source, set()
    fn = tree.body[0]
    lines = source.split("\n")
    loads: dict[str, int] = {}
    stores: dict[str, int] = {a.arg: 1 for a in fn.args.args}
    deletes: dict[str, list[ast.Delete]] = {}  # `del t` after its use frees it early
    for node in walk(fn):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Del):
                continue
            table = loads if isinstance(node.ctx, ast.Load) else stores
            table[node.id] = table.get(node.id, 0) + 1
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    deletes.setdefault(target.id, []).append(node)
    names = _NameCache()
    purity: dict[int, bool] = {}  # by statement (fusing pure into pure stays pure)
    # each line's length, at most: a fused value may gain a pair of parentheses
    length: dict[int, int] = {}

    def pure(stmt: ast.stmt, value: ast.expr) -> bool:
        known = purity.get(id(stmt))
        if known is None:
            known = purity[id(stmt)] = _pure(value)
        return known

    def size(stmt: ast.stmt) -> int:
        if stmt.lineno != stmt.end_lineno:
            return width + 1  # written over several lines: left alone
        return length.get(id(stmt), len(lines[stmt.lineno - 1]))

    dropped: set[int] = set()
    changed: dict[int, ast.stmt] = {}
    fused: dict[str, int] = {}  # how many of a temporary's bindings were fused
    for block in _blocks(fn.body):
        for i, stmt in enumerate(block):
            assign = _simple_assign(stmt)
            if assign is None or id(stmt) in dropped:
                continue
            temp, value = assign
            count = stores.get(temp, 0)
            if temp in excluded or loads.get(temp) != count or not pure(stmt, value):
                continue
            reads = set(names.of(stmt)[0])
            for j in range(i + 1, len(block)):
                later = block[j]
                if id(later) in dropped:
                    continue
                if any(
                    line.lstrip().startswith("#")
                    for line in lines[(block[j - 1].end_lineno or 0) : later.lineno - 1]
                ):
                    break  # the code of another original line
                later_loads, later_binds = names.of(later)
                if isinstance(later, ast.Delete):
                    if later_binds & reads:
                        break
                    continue
                use = _simple_assign(later)
                if use is None or not pure(later, use[1]) or temp in later_binds - {use[0]}:
                    break
                if temp in later_loads:
                    value_size = size(stmt) - stmt.col_offset - len(temp) - len(" = ")
                    fused_size = size(later) - len(temp) + value_size + 2
                    if fused_size <= width and _loads(later, temp) == 1:
                        fused[temp] = fused.get(temp, 0) + 1
                        _Inline(temp, value).visit(later)
                        length[id(later)] = fused_size
                        dropped.add(id(stmt))
                        changed[id(later)] = later
                        names.table.pop(id(later), None)
                        for gone in deletes.get(temp, []):  # nothing left to free
                            rest = [t for t in gone.targets if not _is_name(t, temp)]
                            if rest:
                                gone.targets = rest
                                changed[id(gone)] = gone
                                names.table.pop(id(gone), None)
                            else:
                                dropped.add(id(gone))
                    break
                if later_binds & reads or temp in later_binds:
                    break  # what the value reads, or the temporary itself, bound again
    partial = {t for t, n in fused.items() if n != stores.get(t)}
    if partial or not dropped:
        return source, partial
    edits = [s for s in _statements(fn.body) if id(s) in dropped or id(s) in changed]
    for stmt in sorted(edits, key=lambda s: s.lineno, reverse=True):
        new = [] if id(stmt) in dropped else [" " * stmt.col_offset + ast.unparse(stmt)]
        lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno] = new
    return "\n".join(lines), set()


def _loads(stmt: ast.stmt, name: str) -> int:
    """How many times ``stmt`` reads ``name``."""
    return sum(
        1
        for node in walk(stmt)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
    )


_PURE_NODES = (
    ast.Name,
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.IfExp,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.Tuple,
    ast.keyword,
)


def _pure(node: ast.expr) -> bool:
    """Is evaluating ``node`` free of effects (and only reads names), so that it may be
    evaluated later, past other pure assignments, with the same result? Which calls and
    attributes compute only is the rules' knowledge (:func:`adgen.rules.registry.pure_call`)."""
    from adgen.rules.registry import pure_attribute, pure_call

    for sub in walk(node):
        if isinstance(sub, ast.Call):
            if not pure_call(sub):
                return False
        elif not isinstance(sub, _PURE_NODES):
            return False
        elif isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            return False
        elif isinstance(sub, ast.Attribute) and not pure_attribute(sub):
            return False  # another object's attribute may be a property that does things
    return True


class _Inline(Transformer):
    def __init__(self, name_: str, value: ast.expr) -> None:
        self.name, self.value = name_, value

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.value if node.id == self.name and isinstance(node.ctx, ast.Load) else node
