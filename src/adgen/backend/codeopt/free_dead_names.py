"""Free each value a generated function makes after its last use: ``del`` lines.

A value lives until the function returns unless it is deleted. This pass closes each group
of lines (the code under one ``# line ...`` comment) with a ``del`` of the names assigned at
the function's top level that nothing reads afterwards, so a reverse sweep holds only the
arrays it still needs. Parameters, names known to hold scalars and names the code deletes
itself are left alone. :func:`free_dead_names` shows it, source in and source out.

Reverse mode runs it last, together with :mod:`adgen.backend.codeopt.keep_shapes_only`
(:func:`adgen.backend.codeopt.keep_shapes_only.keep_shapes_and_free`), which hands it the
top-level statements of the source it rewrote (:class:`_Statement`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from adgen.backend.codeopt.common import _function
from adgen.pyast import name_nodes


def free_dead_names(source: str, scalars: frozenset[str] = frozenset()) -> str:
    """Add ``del`` lines to a generated function so each value it makes is freed after its last
    use at the function's top level, not only when the function returns: a reverse sweep then
    holds only the arrays it still needs.

    Only names assigned at the top level before that use are deleted (a name assigned in a
    branch might be unbound), never parameters, never names known to hold scalars (freeing
    them saves nothing), and never names the code deletes itself. One
    ``del`` line closes each group of lines (the code under one ``# line ...`` comment),
    joined with a ``del`` the code has there already.

    >>> print(free_dead_names(
    ...     "def f_vjp(x, g):\\n"
    ...     "    # line 2\\n"
    ...     "    a = x * 2.0\\n"
    ...     "    b = a + 1.0\\n"
    ...     "    # line 3\\n"
    ...     "    c = b - 1.0\\n"
    ...     "    # line 4\\n"
    ...     "    d = c * a\\n"
    ...     "    return (d, g * a)\\n"
    ... ), end="")
    def f_vjp(x, g):
        # line 2
        a = x * 2.0
        b = a + 1.0
        # line 3
        c = b - 1.0
        del b
        # line 4
        d = c * a
        return (d, g * a)

    (``c`` is not deleted: nothing comes between its last use and the ``return``.)
    """
    fn = _function(source)
    if fn is None:
        return source
    return _free_dead(source, fn, [_statement(s) for s in fn.body], scalars)


@dataclass
class _Statement:
    """A top-level statement of a generated function as :func:`free_dead_names` sees it: its
    first and last line (from 1) and the names it reads, deletes and assigns."""

    first: int
    last: int
    reads: set[str]
    deletes: set[str]
    assigns: set[str]


def _statement(stmt: ast.stmt, shift: int = 0, names: list[ast.Name] | None = None) -> _Statement:
    """``stmt`` moved ``shift`` lines down (``names``: its :func:`name_nodes`, if known)."""
    names = name_nodes(stmt) if names is None else names
    assigns: set[str] = set()
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            assigns.update(n.id for n in name_nodes(target) if isinstance(n.ctx, ast.Store))
    last = stmt.end_lineno
    assert last is not None
    return _Statement(
        stmt.lineno + shift,
        last + shift,
        {n.id for n in names if isinstance(n.ctx, ast.Load)},
        {n.id for n in names if isinstance(n.ctx, ast.Del)},
        assigns,
    )


def _free_dead(
    source: str, fn: ast.FunctionDef, body: list[_Statement], scalars: frozenset[str]
) -> str:
    """:func:`free_dead_names` of ``source``, whose top-level statements are ``body`` (the
    function's header is ``fn``'s)."""
    params = {a.arg for a in fn.args.args}
    defined: dict[str, int] = {}
    last_read: dict[str, int] = {}
    deleted: set[str] = set()
    for i, stmt in enumerate(body):
        for name in stmt.reads:
            last_read[name] = i
        deleted |= stmt.deletes
        for name in stmt.assigns:
            defined.setdefault(name, i)
    dead: dict[int, list[str]] = {}
    end = len(body) - 1
    for var, i in last_read.items():
        if var in params or var in deleted or var not in defined or i >= end or var in scalars:
            continue
        if defined[var] <= i:
            dead.setdefault(i, []).append(var)
    if not dead:
        return source
    lines = source.split("\n")
    indent = " " * fn.body[0].col_offset
    # one `del` line closing each group of lines (before the next `# line ...` comment)
    last = body[end].first - 1
    at: dict[int, list[str]] = {}
    for i, names in dead.items():
        after = body[i].last
        while after < last and not lines[after].startswith(indent + "#"):
            after += 1
        if after < last:  # (the return frees everything anyway)
            at.setdefault(after, []).extend(names)
    for after in sorted(at, reverse=True):
        names = at[after]
        if lines[after - 1].startswith(indent + "del "):  # one line with the sweep's own del
            names = names + lines[after - 1][len(indent) + 4 :].split(", ")
            after -= 1
            del lines[after]
        rows: list[str] = []
        for var in sorted(names):
            if rows and len(rows[-1]) + len(var) + 2 <= 99:
                rows[-1] += f", {var}"
            else:
                rows.append(f"{indent}del {var}")
        lines[after:after] = rows
    return "\n".join(lines)
