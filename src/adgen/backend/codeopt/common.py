"""Helpers the passes over generated code share.

The function a generated source defines, its blocks of statements and plain assignments,
and the names each statement reads and binds (computed once per statement)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from adgen.pyast import name_nodes


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
