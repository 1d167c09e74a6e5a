"""Helpers the passes over generated code share.

The function a generated source defines, its blocks of statements and plain assignments,
and the names each statement reads and binds (computed once per statement)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from adgen.pyast import name_nodes, walk

# the operators written as a ufunc with out= (a power is not: NumPy computes x ** 2 as a
# square, whose bits np.power need not give)
_BINARY = {ast.Add: "np.add", ast.Sub: "np.subtract", ast.Mult: "np.multiply", ast.Div: "np.divide"}
_UNARY: dict[type[ast.unaryop], str] = {ast.USub: "np.negative"}

# what is known of a name: (shape, dtype) of a NumPy array, or a weak Python number (its type)
Fact = tuple[tuple[int, ...], np.dtype[Any]] | type


def _function(source: str) -> ast.FunctionDef | None:
    """The function a generated source defines (None if it is something else)."""
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    return tree.body[0]


def _blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    yield body
    for stmt in body:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from _blocks(inner)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for block in _blocks(body):
        yield from block


def _simple_assign(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        return stmt.targets[0].id, stmt.value
    return None


def _names(node: ast.AST, ctx: type | None = None) -> set[str]:
    return {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and (ctx is None or isinstance(n.ctx, ctx))
    }


class _NameCache:
    """The names each statement reads and binds or deletes (computed once per statement;
    renaming a read keeps the sets right by hand)."""

    def __init__(self) -> None:
        self.table: dict[int, tuple[dict[str, int], set[str]]] = {}

    def of(self, stmt: ast.stmt) -> tuple[dict[str, int], set[str]]:
        entry = self.table.get(id(stmt))
        if entry is None:
            loads: dict[str, int] = {}
            others: set[str] = set()
            for node in name_nodes(stmt):
                if isinstance(node.ctx, ast.Load):
                    loads[node.id] = loads.get(node.id, 0) + 1
                else:
                    others.add(node.id)
            entry = self.table[id(stmt)] = (loads, others)
        return entry

    def mentions(self, stmt: ast.stmt, name: str) -> bool:
        loads, others = self.of(stmt)
        return name in loads or name in others


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _bindings(fn: ast.FunctionDef) -> dict[str, int]:
    """How many times each name is bound anywhere in the function (parameters count)."""
    counts: dict[str, int] = {a.arg: 1 for a in fn.args.args}
    for node in walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _known_facts(known: Mapping[str, tuple[tuple[int, ...], str]]) -> dict[str, Fact]:
    """What ``known`` (:func:`adgen.middle.shapes.specialise`'s answers) says of names: their
    arrays' shapes and dtypes."""
    facts: dict[str, Fact] = {}
    for name, (shape, dtype) in known.items():
        if not name.isidentifier():  # (the answers' own keys: <real>...)
            continue
        try:
            facts[name] = (tuple(shape), np.dtype(dtype))
        except TypeError:
            continue
    return facts


def _fact(expr: ast.expr, facts: dict[str, Fact]) -> Fact | None:
    """What is known of ``expr``'s value: its shape and dtype (an array), the type of a weak
    Python number, or None."""
    if isinstance(expr, ast.Name):
        return facts.get(expr.id)
    if isinstance(expr, ast.Constant) and type(expr.value) in (int, float):
        return type(expr.value)
    full = _full(expr)
    if full is not None:
        return full
    if isinstance(expr, ast.BinOp) and type(expr.op) in _BINARY:
        return _combine(_ufunc_of(_BINARY[type(expr.op)]), [expr.left, expr.right], facts)
    if isinstance(expr, ast.UnaryOp) and type(expr.op) in _UNARY:
        return _combine(np.negative, [expr.operand], facts)
    if isinstance(expr, ast.Call) and not expr.keywords:
        ufunc = _ufunc(expr.func)
        if ufunc is not None and len(expr.args) == ufunc.nin:
            return _combine(ufunc, list(expr.args), facts)
    return None


def _combine(ufunc: np.ufunc, operands: list[ast.expr], facts: dict[str, Fact]) -> Fact | None:
    """The result of ``ufunc`` of operands whose facts are known: broadcast shape, and the
    dtype NumPy computes for stand-ins of the operands' kinds."""
    return _result_fact(ufunc, [_fact(operand, facts) for operand in operands])


def _result_fact(ufunc: Any, operands: list[Fact | None], numbers: bool = False) -> Fact | None:
    """What ``ufunc`` gives for operands of these facts (None: unknown): an array's shape
    and dtype; a 0-d result (a NumPy number) and a Python number's type only if ``numbers``
    (without, a result of Python numbers is ``float`` if one of them is)."""
    shapes: list[tuple[int, ...]] = []
    stand_ins: list[Any] = []
    for fact in operands:
        if fact is None:
            return None
        if isinstance(fact, type):
            stand_ins.append(fact(1))
        else:
            shapes.append(fact[0])
            stand_ins.append(np.ones((1,) * len(fact[0]), fact[1]))
    if not shapes and not numbers:
        return float if float in (type(s) for s in stand_ins) else None
    try:
        with np.errstate(all="ignore"):
            result = ufunc(*stand_ins)
        shape = np.broadcast_shapes(*shapes)
    except (TypeError, ValueError):  # (code that fails as written: nothing to tell)
        return None
    if not shapes:
        return type(result) if type(result) in (int, float) else None
    if numbers:
        return (shape, np.asarray(result).dtype)
    if not isinstance(result, np.ndarray) or not shape:
        return None  # (0-d results are NumPy numbers, not arrays)
    return (shape, result.dtype)


def _full(expr: ast.expr) -> Fact | None:
    """``np.full(shape, value, dtype=np.float64)`` as specialised code writes it (a literal
    shape and dtype): a new array of that shape and dtype."""
    if not (
        isinstance(expr, ast.Call)
        and _dotted(expr.func) == "np.full"
        and len(expr.args) == 2
        and [k.arg for k in expr.keywords] == ["dtype"]
    ):
        return None
    try:
        shape = ast.literal_eval(expr.args[0])
    except ValueError:
        return None
    dtype = getattr(np, _dotted(expr.keywords[0].value)[3:], None)
    if not (isinstance(shape, tuple) and all(type(n) is int for n in shape) and shape):
        return None
    if not (isinstance(dtype, type) and issubclass(dtype, np.inexact)):
        return None
    return (shape, np.dtype(dtype))


def _dotted(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return ""


def _ufunc(func: ast.expr) -> np.ufunc | None:
    """The NumPy ufunc a call's function names (``np.exp``), if it is one."""
    name = _dotted(func)
    return _ufunc_of(name) if name.startswith("np.") else None


def _ufunc_of(name: str) -> Any:
    """The elementwise NumPy ufunc ``np.<name>`` (not a generalised one: ``np.matvec``'s
    result is not its operands' broadcast shape)."""
    found = getattr(np, name[3:], None)
    return found if isinstance(found, np.ufunc) and found.signature is None else None


def rewrite_rows(source: str, needles: tuple[str, ...], rewrite: Callable[[ast.stmt], bool]) -> str:
    """``source`` with each line that holds one of ``needles`` and is one simple statement
    (an assignment or a return) given to ``rewrite``, which changes the statement's tree in
    place and says whether it did; a changed line is written again, the others and the
    comments stay as they are."""
    rows = source.split("\n")
    for i, row in enumerate(rows):
        if not any(n in row for n in needles) or row.lstrip().startswith("#"):
            continue
        try:  # (one simple statement per line: headers of blocks do not parse alone)
            tree = ast.parse(row.strip())
        except SyntaxError:
            continue
        if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.Assign, ast.Return)):
            continue
        if rewrite(tree.body[0]):
            rows[i] = row[: len(row) - len(row.lstrip())] + ast.unparse(tree.body[0])
    return "\n".join(rows)
