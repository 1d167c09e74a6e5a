"""Keep only the shape and dtype of a forward value whose adjoint reads nothing else of it.

Many adjoints read a forward value only for its shape: ``rt.unbroadcast(g, x)`` and
``rt.unreduce(g, x)`` bring the cotangent ``g`` to ``x``'s shape. In a straight-line
reverse-mode function this pass follows such an ``x`` with ``x_like = rt.Like(x)`` and the
adjoint reads ``x_like`` instead, so the array itself can be freed after the forward sweep
(:mod:`adgen.backend.codeopt.free_dead_names` writes the ``del``). :func:`keep_shapes_only` shows
it, source in and source out.

Reverse mode runs it last, followed by :mod:`adgen.backend.codeopt.free_dead_names`: both at once,
parsing the source once, are :func:`keep_shapes_and_free`.
"""

from __future__ import annotations

import ast

from adgen.backend.codeopt.common import _function
from adgen.backend.codeopt.free_dead_names import _free_dead, _Statement, _statement
from adgen.pyast import name_nodes, unparse, walk

# helpers whose second argument gives only a shape (and dtype)
_SHAPE_ONLY = ("rt.unbroadcast", "rt.unreduce")


def keep_shapes_only(source: str, scalars: frozenset[str] = frozenset()) -> str:
    """In a straight-line reverse-mode function, keep only the shape and dtype (``rt.Like``)
    of a forward value whose adjoint code reads nothing else of it, so the array itself can
    be freed after the forward sweep (see :func:`free_dead_names`).

    >>> print(keep_shapes_only(
    ...     "def f_vjp(x, out_bar):\\n"
    ...     "    y = x * 2.0\\n"
    ...     "    s = y * 3.0\\n"
    ...     "    out = np.sum(s)\\n"
    ...     "    # adjoint of line 4: return np.sum(s)\\n"
    ...     "    s_bar = rt.unreduce(out_bar, s)\\n"
    ...     "    return (out, (s_bar * 6.0,))\\n"
    ... ), end="")
    def f_vjp(x, out_bar):
        y = x * 2.0
        s = y * 3.0
        s_like = rt.Like(s)
        out = np.sum(s)
        # adjoint of line 4: return np.sum(s)
        s_bar = rt.unreduce(out_bar, s_like)
        return (out, (s_bar * 6.0,))
    """
    if not any(f"{helper}(" in source for helper in _SHAPE_ONLY):
        return source
    fn = _function(source)
    return source if fn is None else _keep_shapes_only(source, fn, scalars)[0]


def keep_shapes_and_free(source: str, scalars: frozenset[str] = frozenset()) -> str:
    """``free_dead_names(keep_shapes_only(source, scalars), scalars)``, parsing the source
    once: :func:`keep_shapes_only` tells where the statements of its result stand.

    >>> print(keep_shapes_and_free(
    ...     "def f_vjp(x, out_bar):\\n"
    ...     "    # line 2: y = x * 2.0\\n"
    ...     "    y = x * 2.0\\n"
    ...     "    # line 3: s = y * 3.0\\n"
    ...     "    s = y * 3.0\\n"
    ...     "    # line 4: return np.sum(s)\\n"
    ...     "    out = np.sum(s)\\n"
    ...     "    # adjoint of line 4: return np.sum(s)\\n"
    ...     "    s_bar = rt.unreduce(out_bar, s)\\n"
    ...     "    return (out, (s_bar * 6.0,))\\n"
    ... ), end="")
    def f_vjp(x, out_bar):
        # line 2: y = x * 2.0
        y = x * 2.0
        # line 3: s = y * 3.0
        s = y * 3.0
        s_like = rt.Like(s)
        del y
        # line 4: return np.sum(s)
        out = np.sum(s)
        del s
        # adjoint of line 4: return np.sum(s)
        s_bar = rt.unreduce(out_bar, s_like)
        return (out, (s_bar * 6.0,))
    """
    fn = _function(source)
    if fn is None:
        return source
    text, body = _keep_shapes_only(source, fn, scalars)
    return _free_dead(text, fn, body or [_statement(s) for s in fn.body], scalars)


def _keep_shapes_only(
    source: str, fn: ast.FunctionDef, scalars: frozenset[str]
) -> tuple[str, list[_Statement] | None]:
    """:func:`keep_shapes_only` of ``source``, which defines ``fn``; when it changes the
    source, the top-level statements of the result too."""
    if not any(f"{helper}(" in source for helper in _SHAPE_ONLY):
        return source, None
    if not all(isinstance(s, (ast.Assign, ast.Return, ast.Delete, ast.Expr)) for s in fn.body):
        return source, None
    lines = source.split("\n")
    indent = " " * fn.body[0].col_offset
    marker = indent + "# adjoint of "
    start = next((i + 1 for i, text in enumerate(lines) if text.startswith(marker)), None)
    if start is None:
        return source, None
    params = {a.arg for a in fn.args.args}
    made: dict[str, ast.Assign] = {}
    other_reads: set[str] = set()
    shape_reads: dict[str, list[ast.Call]] = {}
    statement_of: dict[int, ast.stmt] = {}
    bindings: dict[str, int] = {}
    # every name the function uses (a new name must differ from them)
    outside: list[ast.AST] = [fn.args, *fn.decorator_list, *([fn.returns] if fn.returns else [])]
    used = {n.id for part in outside for n in name_nodes(part)}
    names_of: dict[int, list[ast.Name]] = {}
    for stmt in fn.body:
        nodes = walk(stmt)
        names = names_of[id(stmt)] = [n for n in nodes if isinstance(n, ast.Name)]
        used.update(n.id for n in names)
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for n in name_nodes(target):
                    bindings[n.id] = bindings.get(n.id, 0) + 1
        if stmt.lineno < start:  # the forward sweep: what it reads is freed after it anyway
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                if isinstance(stmt.targets[0], ast.Name):
                    made.setdefault(stmt.targets[0].id, stmt)
            continue
        shape_args: set[int] = set()
        if not isinstance(stmt, ast.Return):
            for node in nodes:
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and f"{node.func.value.id}.{node.func.attr}" in _SHAPE_ONLY
                    and len(node.args) >= 2
                    and isinstance(node.args[1], ast.Name)
                ):
                    shape_reads.setdefault(node.args[1].id, []).append(node)
                    shape_args.add(id(node.args[1]))
                    statement_of[id(node)] = stmt
        other_reads.update(n.id for n in names if id(n) not in shape_args)
    chosen = [
        v
        for v in shape_reads
        if v in made
        and v not in params
        and v not in other_reads
        and bindings.get(v) == 1
        and v not in scalars
    ]
    if not chosen:
        return source, None
    from adgen.names import Namer

    namer = Namer(used)
    edits: dict[int, tuple[int, list[str]]] = {}  # first line -> (last line, new lines)
    liked: dict[int, tuple[str, str]] = {}  # first line of v's binding -> (v, v_like)
    for v in chosen:
        like = namer.like(v)
        for call in shape_reads[v]:
            call.args[1] = ast.Name(id=like, ctx=ast.Load())
        binding = made[v]
        end = binding.end_lineno
        assert end is not None
        keep = lines[binding.lineno - 1 : end]
        edits[binding.lineno] = (end, keep + [f"{indent}{like} = rt.Like({v})"])
        liked[binding.lineno] = (v, like)
    rewritten = {
        id(statement_of[id(c)]): statement_of[id(c)] for v in chosen for c in shape_reads[v]
    }
    for stmt in rewritten.values():  # the adjoint lines reading a shape: they read `x_like`
        end = stmt.end_lineno
        assert end is not None
        text = unparse(stmt)
        edits[stmt.lineno] = (end, [indent + t for t in text.splitlines()])
    for first in sorted(edits, reverse=True):
        last, new = edits[first]
        lines[first - 1 : last] = new
    # where the statements stand now, and what they read
    statements: list[_Statement] = []
    shift = 0
    for stmt in fn.body:
        if stmt.lineno not in edits:
            statements.append(_statement(stmt, shift, names_of[id(stmt)]))
            continue
        last, new = edits[stmt.lineno]
        if id(stmt) in rewritten:  # its lines are new: so are the names it reads
            moved = _statement(stmt, shift)
            moved.last = moved.first + len(new) - 1
            statements.append(moved)
        else:  # a value whose shape is kept: `v_like = rt.Like(v)` follows
            moved = _statement(stmt, shift, names_of[id(stmt)])
            v, like = liked[stmt.lineno]
            statements.append(moved)
            statements.append(_Statement(moved.last + 1, moved.last + 1, {"rt", v}, set(), {like}))
        shift += len(new) - (last - stmt.lineno + 1)
    return "\n".join(lines), statements
