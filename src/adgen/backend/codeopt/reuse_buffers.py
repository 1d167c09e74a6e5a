"""Write an operation's result into an array nothing needs any more: ``out=``.

Every NumPy operation makes a new array, and for large arrays making one is not free: the
memory comes from the operating system a page at a time, each page faulted in and zeroed
when it is first written, and handed back when freed (glibc trims the top of its heap).
Derivative code makes many temporaries, each read once or twice; in code specialised for
NumPy arrays of known shapes this pass writes an elementwise operation that reads the last
use of such a temporary into that temporary's memory: ``u = t * c`` becomes
``u = np.multiply(t, c, out=t)`` -- the same loop over the same values, so the same bits,
without a new array. :func:`reuse_buffers` shows it, source in and source out.

A temporary is reused only when all of this is known from the code and the arguments'
shapes and dtypes:

* it is bound once, at the function's top level, to an arithmetic result (``a * b``,
  ``-a``, ``np.exp(a)``, ``a @ b``...): a new array of its own, never a view nor an argument;
* every read of it is an operand of arithmetic, of a NumPy ufunc or of ``np.sum``, or
  ``rt.Like`` of it (which keep no reference to it), so no other name, list or view holds
  its memory;
* the statement is its last read (at the top level: nothing later, in no loop);
* the result has its shape and dtype exactly (no broadcasting up, no casting);
* it is large (:data:`MIN_BYTES`): a small array costs next to nothing to make (NumPy keeps
  small blocks for reuse), and ``a * b`` costs less than ``np.multiply(a, b, out=a)``.

Code adgen reads again (a nested derivative's) is not given this pass: ``out=`` is outside
the subset adgen differentiates.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping

import numpy as np

from adgen.backend.codeopt.common import (
    _BINARY,
    _UNARY,
    Fact,
    _bindings,
    _dotted,
    _fact,
    _full,
    _function,
    _known_facts,
    _ufunc,
)
from adgen.pyast import walk
from adgen.rules.known import ANY_KIND, LIBRARY

_COMMUTATIVE = (ast.Add, ast.Mult)
_SCOPES = (ast.Lambda, ast.FunctionDef, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
# calls that read an array without keeping it (their results are new arrays or numbers)
_READERS = frozenset({"np.sum", "rt.Like"})

# the size from which a temporary's array is reused (smaller ones are cheap to make)
MIN_BYTES = 16384


def applies(known: Mapping[str, tuple[tuple[int, ...], str]]) -> bool:
    """Is code made with these answers (:func:`adgen.middle.shapes.specialise`) code this pass
    is for: specialised for shapes, of NumPy arrays only (another library's arrays may
    keep references: a Dask array is a graph of them), not code adgen reads again?"""
    return bool(known) and LIBRARY not in known and ANY_KIND not in known


def reuse_buffers(
    source: str, known: Mapping[str, tuple[tuple[int, ...], str]], min_bytes: int = MIN_BYTES
) -> str:
    """Write elementwise operations reading the last use of a temporary array of at least
    ``min_bytes`` into it.

    ``known`` gives the shape and dtype name of values (the IR's names, from the call's
    arguments); the values of other names follow from them through arithmetic.

    >>> print(reuse_buffers(
    ...     "def f_vjp(x, y):\\n"
    ...     "    # line 2\\n"
    ...     "    a = x * y\\n"
    ...     "    b = np.tanh(a)\\n"
    ...     "    c = 1.0 - b * b\\n"
    ...     "    d = c * 2.0\\n"
    ...     "    e = x - d\\n"
    ...     "    return (e, b)\\n",
    ...     {"x": ((4096,), "float64"), "y": ((4096,), "float64")},
    ... ), end="")
    def f_vjp(x, y):
        # line 2
        a = x * y
        b = np.tanh(a, out=a)
        c = 1.0 - b * b
        d = np.multiply(c, 2.0, out=c)
        e = np.subtract(x, d, out=d)
        return (e, b)

    (``b`` is returned: its array is kept; ``c = 1.0 - b * b`` is two operations, left to
    NumPy, which reuses the product's memory for the difference itself.)
    """
    fn = _function(source)
    if fn is None or not known or any(isinstance(n, _SCOPES) for n in walk(fn) if n is not fn):
        return source  # (a nested scope reads names later: a closure, a generator)
    facts = _known_facts(known)
    bound = _bindings(fn)
    tracked = _tracked(fn, bound)
    # (what `known` says of a name holds for every value it has: one binding only)
    facts = {n: f for n, f in facts.items() if bound.get(n, 0) <= 1}
    # what reads what: looked at once a result is large enough (most code has none)
    owned: set[str] | None = None
    last_read: dict[str, int] = {}
    edits: dict[int, ast.expr] = {}
    for i, stmt in enumerate(fn.body):
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            for node in walk(stmt):  # (names bound in blocks: nothing known)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    facts.pop(node.id, None)
            continue
        target = stmt.targets[0].id
        fact = _value_fact(stmt.value, facts)
        if (
            fact is not None
            and not isinstance(fact, type)
            and fact[1].kind in "fc"
            and math.prod(fact[0]) * fact[1].itemsize >= min_bytes
        ):
            if owned is None:
                owned, last_read = _owned(fn, tracked), _last_reads(fn)
            written = _into(stmt.value, target, fact, facts, owned, last_read, i)
            if written is not None:
                edits[i] = written
        if fact is None or (bound.get(target) != 1 and target not in tracked):
            facts.pop(target, None)
        else:
            facts[target] = fact
    if not edits:
        return source
    lines = source.split("\n")
    for i in sorted(edits, reverse=True):
        stmt = fn.body[i]
        assert stmt.end_lineno is not None
        indent = " " * stmt.col_offset
        assert isinstance(stmt, ast.Assign)
        text = ast.unparse(ast.Assign(targets=stmt.targets, value=edits[i], lineno=0))
        lines[stmt.lineno - 1 : stmt.end_lineno] = [indent + text]
    return "\n".join(lines)


def _value_fact(expr: ast.expr, facts: dict[str, Fact]) -> Fact | None:
    """:func:`~adgen.backend.codeopt.common._fact`, knowing products of matrices too (``a @ b``
    of arrays of known shapes: a new array, not a view) and transposes (``np.transpose(a)``,
    ``a.T``: views, whose facts tell what they are read into)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.MatMult):
        a, b = _value_fact(expr.left, facts), _value_fact(expr.right, facts)
        if not (isinstance(a, tuple) and isinstance(b, tuple)):
            return None
        shape = _matmul_shape(a[0], b[0])
        if not shape:  # (a 0-d result is a NumPy number)
            return None
        return (shape, np.result_type(a[1], b[1]))
    transposed = None
    if isinstance(expr, ast.Call) and _dotted(expr.func) == "np.transpose" and not expr.keywords:
        transposed = expr.args[0] if len(expr.args) == 1 else None
    elif isinstance(expr, ast.Attribute) and expr.attr == "T":
        transposed = expr.value
    if transposed is not None:
        fact = _value_fact(transposed, facts)
        return (fact[0][::-1], fact[1]) if isinstance(fact, tuple) else None
    return _fact(expr, facts)


def _matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape of ``x @ y`` for arrays of shapes ``a`` and ``b`` (None: NumPy refuses it).

    >>> _matmul_shape((7, 50), (50, 1000)), _matmul_shape((3,), (2, 3, 4))
    ((7, 1000), (2, 4))
    >>> _matmul_shape((3,), (3,))
    ()
    >>> _matmul_shape((2, 3), (4, 5)) is None
    True
    """
    if not a or not b:
        return None
    left = (1, *a) if len(a) == 1 else a
    right = (*b, 1) if len(b) == 1 else b
    if left[-1] != right[-2]:
        return None
    try:
        batch = np.broadcast_shapes(left[:-2], right[:-2])
    except ValueError:
        return None
    shape = (*batch, left[-2], right[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    return shape


def _tracked(fn: ast.FunctionDef, bound: dict[str, int]) -> set[str]:
    """The names every binding of which is a plain assignment at the top level (not a
    parameter): what they hold is known statement by statement."""
    top: dict[str, int] = {}
    for s in fn.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            if isinstance(target, ast.Name):
                top[target.id] = top.get(target.id, 0) + 1
    params = {a.arg for a in fn.args.args}
    return {n for n, k in top.items() if bound.get(n) == k and n not in params}


def _owned(fn: ast.FunctionDef, tracked: set[str]) -> set[str]:
    """The tracked names every binding of which is a new array of arithmetic, every read of
    which keeps no reference to it."""
    fresh = set(tracked)
    for s in fn.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            if isinstance(target, ast.Name) and not _makes_new_array(s.value):
                fresh.discard(target.id)
    parents: dict[int, ast.AST] = {}
    for node in walk(fn):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in walk(fn):
        if not (isinstance(node, ast.Name) and node.id in fresh):
            continue
        if isinstance(node.ctx, ast.Del):
            continue
        if isinstance(node.ctx, ast.Load) and not _harmless(node, parents.get(id(node))):
            fresh.discard(node.id)
    return fresh


def _harmless(node: ast.Name, parent: ast.AST | None) -> bool:
    """Does this read keep no reference to the array (an operand, not a value kept)?"""
    if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
        return True
    if isinstance(parent, ast.Call) and node in parent.args:
        return _ufunc(parent.func) is not None or _dotted(parent.func) in _READERS
    return False


def _makes_new_array(expr: ast.expr) -> bool:
    if _full(expr) is not None:
        return True
    if isinstance(expr, ast.BinOp):  # (a product of matrices too: never a view)
        return type(expr.op) in _BINARY or isinstance(expr.op, (ast.Pow, ast.MatMult))
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, ast.USub)
    return isinstance(expr, ast.Call) and _ufunc(expr.func) is not None and not expr.keywords


def _last_reads(fn: ast.FunctionDef) -> dict[str, int]:
    """The index of the last top-level statement reading each name."""
    last: dict[str, int] = {}
    for i, stmt in enumerate(fn.body):
        for node in walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                last[node.id] = i
    return last


def _into(
    expr: ast.expr,
    target: str,
    fact: Fact,
    facts: dict[str, Fact],
    owned: set[str],
    last_read: dict[str, int],
    i: int,
) -> ast.expr | None:
    """``expr`` written into the array of an operand it reads for the last time, if one
    has the result's shape and dtype; else None."""

    def reusable(operand: ast.expr) -> str | None:
        if not isinstance(operand, ast.Name) or operand.id not in owned:
            return None
        if facts.get(operand.id) != fact:
            return None
        # its last read, or its value is replaced here (`v = v + e`)
        if last_read.get(operand.id) != i and operand.id != target:
            return None
        return operand.id

    def call(func: str, args: list[ast.expr], out: str) -> ast.Call:
        return ast.Call(
            func=ast.parse(func, mode="eval").body,
            args=args,
            keywords=[ast.keyword(arg="out", value=ast.Name(id=out, ctx=ast.Load()))],
        )

    if isinstance(expr, ast.BinOp) and type(expr.op) in _BINARY:
        func = _BINARY[type(expr.op)]
        for operand in (expr.left, expr.right):
            out = reusable(operand)
            if out is not None:
                return call(func, [expr.left, expr.right], out)
        return None
    if isinstance(expr, ast.UnaryOp) and type(expr.op) in _UNARY:
        out = reusable(expr.operand)
        return None if out is None else call(_UNARY[type(expr.op)], [expr.operand], out)
    if isinstance(expr, ast.Call) and _ufunc(expr.func) is not None and not expr.keywords:
        for operand in expr.args:
            out = reusable(operand)
            if out is not None:
                return ast.Call(
                    func=expr.func,
                    args=expr.args,
                    keywords=[ast.keyword(arg="out", value=ast.Name(id=out, ctx=ast.Load()))],
                )
    return None
