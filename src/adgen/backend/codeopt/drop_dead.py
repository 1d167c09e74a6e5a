"""Drop the statements whose results nothing reads: work for a result the caller discards.

Code made for one use computes more than that use needs: batched forward mode's code for
``jacfwd`` returns the tangents only (the Jacobian's), so the primal statements that feed
only the primal result -- for ``hessian``, the gradient itself -- are dead. This pass removes
each plain assignment none of whose names is read anywhere in the function, if its value is
computed without side effects (arithmetic, subscripts, and calls of NumPy, ``math``,
``scipy.special``, ``scipy.stats`` and adgen's runtime helpers that write into nothing, and an
array's reduction methods), and repeats until nothing more goes; a ``del`` of a dropped name
goes too. Random draws (``np.random``, a distribution's ``rvs``) are kept: dropping one
would change the draws after it. ``grad``'s code, which returns no value, loses the work
only the value needed (a log-likelihood's ``gammaln(y + 1)``).
"""

from __future__ import annotations

import ast

from adgen.backend.codeopt.common import _blocks, _function, _names
from adgen.backend.codeopt.direct_reductions import REDUCTION_METHODS
from adgen.pyast import dotted_text


def drop_dead(source: str) -> str:
    """The function ``source`` defines without its dead pure assignments.

    >>> print(drop_dead(
    ...     "def f_jvps(x, x_dot):\\n"
    ...     "    # line 2: return np.sum(np.exp(x))\\n"
    ...     "    e = np.exp(x)\\n"
    ...     "    e_dot = x_dot * e\\n"
    ...     "    out = np.sum(e)\\n"
    ...     "    out_dot = np.sum(e_dot, axis=1)\\n"
    ...     "    del e\\n"
    ...     "    return (None, out_dot)\\n"
    ... ), end="")
    def f_jvps(x, x_dot):
        # line 2: return np.sum(np.exp(x))
        e = np.exp(x)
        e_dot = x_dot * e
        out_dot = np.sum(e_dot, axis=1)
        del e
        return (None, out_dot)

    A name only ``+=`` reads stays:

    >>> print(drop_dead("def f(x):\\n    a = x * 2\\n    a += 1\\n    return x\\n"), end="")
    def f(x):
        a = x * 2
        a += 1
        return x

    A loop whose body only fed the dropped result keeps a ``pass``:

    >>> print(drop_dead(
    ...     "def f(x):\\n    for i in range(3):\\n        t = x * i\\n        del t\\n"
    ...     "    return x\\n"
    ... ), end="")
    def f(x):
        for i in range(3):
            pass
        return x

    A random draw stays, read or not:

    >>> print(drop_dead("def f(x):\\n    r = np.random.normal()\\n    return x\\n"), end="")
    def f(x):
        r = np.random.normal()
        return x
    """
    fn = _function(source)
    if fn is None:
        return source
    dropped: list[ast.stmt] = []
    gone: set[str] = set()
    while True:
        read = _read(fn.body)
        more = [stmt for block in _blocks(fn.body) for stmt in block if _dead(stmt, read)]
        if not more:
            break
        dropped += more
        for stmt in more:
            gone |= _names(stmt, ast.Store)
        fn.body = _without(fn.body, {id(stmt) for stmt in more})
    if not dropped:
        return source
    # the lines of each statement dropped go; a `del` of a name that went loses it too
    edits: dict[int, tuple[ast.stmt, list[str]]] = {stmt.lineno: (stmt, []) for stmt in dropped}
    for block in _blocks(fn.body):
        for stmt in block:
            if isinstance(stmt, ast.Delete) and _names(stmt, ast.Del) & gone:
                kept = [t for t in stmt.targets if not (_names(t, ast.Del) & gone)]
                text = [ast.unparse(ast.Delete(targets=kept))] if kept else []
                edits[stmt.lineno] = (stmt, text)
    # a block left without a statement keeps a `pass` where its first one stood
    for block in _blocks(fn.body):
        if all(stmt.lineno in edits and not edits[stmt.lineno][1] for stmt in block):
            edits[block[0].lineno] = (block[0], ["pass"])
    lines = source.split("\n")
    for _, (stmt, text) in sorted(edits.items(), reverse=True):
        indent = " " * stmt.col_offset
        lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno] = [indent + t for t in text]
    return "\n".join(lines)


def _read(body: list[ast.stmt]) -> set[str]:
    """The names ``body`` reads (``x += v`` reads ``x``)."""
    read = set()
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                read.add(n.id)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                read.add(n.target.id)
    return read


def _dead(stmt: ast.stmt, read: set[str]) -> bool:
    """A plain assignment of names nobody reads, its value computed without side effects."""
    if not isinstance(stmt, ast.Assign):
        return False
    targets = set()
    for target in stmt.targets:
        if isinstance(target, ast.Name):
            targets.add(target.id)
        elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            targets |= {e.id for e in target.elts}  # type: ignore[attr-defined]
        else:
            return False  # (a subscript or attribute written: a side effect)
    return not (targets & read) and _pure(stmt.value)


def _pure(expr: ast.expr) -> bool:
    for node in ast.walk(expr):
        if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda)):
            return False
        if isinstance(node, ast.Call):
            func = dotted_text(node.func) or ""
            if _reduction_method(node.func):
                continue  # `(r ** 2).sum()` (codeopt.direct_reductions)
            if not func.startswith(_PURE) or func.startswith("np.random") or "rvs" in func:
                return False  # (a random draw: dropping one changes the draws after it)
            if any(k.arg == "out" for k in node.keywords):  # (a write into an array)
                return False
    return True


# calls that compute without side effects: NumPy's, the math module's, adgen's helpers, SciPy's
# special functions and distributions' densities (not `np.random`, nor a distribution's `rvs`)
_PURE = ("np.", "rt.", "math.", "scipy.special.", "scipy.stats.")


def _reduction_method(func: ast.expr) -> bool:
    """Is ``func`` an array's reduction method (``a.sum``, ``(r ** 2).max``)?"""
    return isinstance(func, ast.Attribute) and func.attr in REDUCTION_METHODS


def _without(body: list[ast.stmt], dropped: set[int]) -> list[ast.stmt]:
    """``body`` with the dropped statements removed, in nested blocks too; a nested block
    left empty holds a ``pass`` at its first statement's place."""
    kept = []
    for stmt in body:
        if id(stmt) in dropped:
            continue
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                left = _without(inner, dropped)
                setattr(stmt, field, left or [ast.copy_location(ast.Pass(), inner[0])])
        kept.append(stmt)
    return kept
