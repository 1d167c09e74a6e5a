"""Small tools over Python syntax trees (:mod:`ast`) that every stage writing code shares:
a quick :func:`walk`, the names in a tree, dotted names as text and as trees, a quick node
transformer, and :func:`unparse` with slices made valid where they stand. Knows nothing of
adgen's IR.
"""

from __future__ import annotations

import ast
import keyword
from typing import Any

# leaves of every tree: contexts (Load, Store, Del) and operators
LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


class Transformer(ast.NodeTransformer):
    """An :class:`ast.NodeTransformer` that does not visit contexts and operators (it must
    have no ``visit_`` method for them) and reads fields directly: several times faster."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in node._fields:
            try:
                old = getattr(node, field)
            except AttributeError:
                continue
            if isinstance(old, ast.AST):
                if isinstance(old, LEAVES):
                    continue
                new = self.visit(old)
                if new is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new)
            elif isinstance(old, list):
                values: list[Any] = []
                for value in old:
                    if isinstance(value, ast.AST) and not isinstance(value, LEAVES):
                        value = self.visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, ast.AST):
                            values.extend(value)
                            continue
                    values.append(value)
                old[:] = values
        return node


class _FixSlices(Transformer):
    """Write slices outside ``x[...]`` as ``slice(a, b, c)`` (e.g. an index passed to a call).

    >>> print(unparse(ast.parse("f(x[1:], y[1:, ::2, :3])")))
    f(x[1:], y[1:, ::2, :3])
    >>> parts = [ast.Slice(ast.Constant(1)), ast.Slice(None, None, ast.Constant(2)),
    ...          ast.Slice(None, ast.Constant(3))]
    >>> call = ast.Call(func=ast.Name("f"), args=[ast.Tuple(parts)], keywords=[])
    >>> print(unparse(call))
    f((slice(1, None), slice(None, None, 2), slice(3)))
    """

    def visit_Subscript(self, node: ast.Subscript) -> ast.Subscript:
        node.value = self.visit(node.value)
        index = node.slice
        if isinstance(index, ast.Slice):
            node.slice = self._slice_parts(index)
        elif isinstance(index, ast.Tuple):
            index.elts = [
                self._slice_parts(e) if isinstance(e, ast.Slice) else self.visit(e)
                for e in index.elts
            ]
        else:
            node.slice = self.visit(index)
        return node

    def _slice_parts(self, node: ast.Slice) -> ast.Slice:
        for field in ("lower", "upper", "step"):
            part = getattr(node, field)
            if part is not None:
                setattr(node, field, self.visit(part))
        return node

    def visit_Slice(self, node: ast.Slice) -> ast.expr:
        parts = [
            self.visit(p) if p is not None else ast.Constant(value=None)
            for p in (node.lower, node.upper, node.step)
        ]
        if _is_none(parts[2]):
            parts.pop()  # slice(a, b)
            if _is_none(parts[0]):
                parts.pop(0)  # slice(b)
        return ast.Call(func=ast.Name(id="slice", ctx=ast.Load()), args=parts, keywords=[])


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def unparse(node: ast.AST, nodes: list[ast.AST] | None = None) -> str:
    """Python source of a statement or expression, with slices made valid where they stand
    (``nodes``: :func:`walk` of ``node``, if known)."""
    if any(isinstance(n, ast.Slice) for n in (walk(node) if nodes is None else nodes)):
        node = _FixSlices().visit(node)
    return ast.unparse(node)


def walk(node: ast.AST) -> list[ast.AST]:
    """The nodes :func:`ast.walk` yields, in its order, but contexts and operators; several
    times faster (no generators).

    >>> [type(n).__name__ for n in walk(ast.parse("a = -f(b)").body[0])]
    ['Assign', 'Name', 'UnaryOp', 'Call', 'Name', 'Name']
    """
    found = [node]
    add = found.append
    for n in found:  # breadth first: the list grows while it is read
        for field in n._fields:
            value = getattr(n, field, None)
            if isinstance(value, ast.AST):
                if not isinstance(value, LEAVES):
                    add(value)
            elif isinstance(value, list):
                for v in value:
                    if isinstance(v, ast.AST) and not isinstance(v, LEAVES):
                        add(v)
    return found


def name_nodes(node: ast.AST) -> list[ast.Name]:
    """Every ``Name`` in ``node`` (itself included), in :func:`ast.walk`'s order."""
    if isinstance(node, ast.Name):  # (most targets)
        return [node]
    return [n for n in walk(node) if isinstance(n, ast.Name)]


def dotted_text(node: ast.expr) -> str:
    """:func:`ast.unparse` of an expression, quicker for a dotted name (``np.linalg.solve``).

    >>> dotted_text(ast.parse("rt.known_ndim", mode="eval").body)
    'rt.known_ndim'
    """
    attrs: list[str] = []
    inner = node
    while isinstance(inner, ast.Attribute):
        attrs.append(inner.attr)
        inner = inner.value
    if not isinstance(inner, ast.Name):
        return ast.unparse(node)
    return ".".join([inner.id, *reversed(attrs)])


def dotted(path: str) -> ast.expr:
    """The expression ``path`` (``np.linalg.solve``: Attributes on a Name), built directly
    (parsing it costs more); anything but a dotted name is parsed.

    >>> ast.dump(dotted("np.sin"))
    "Attribute(value=Name(id='np', ctx=Load()), attr='sin', ctx=Load())"
    """
    head, *attrs = parts = path.split(".")
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return ast.parse(path, mode="eval").body
    node: ast.expr = ast.Name(id=head, ctx=ast.Load())
    for attr in attrs:
        node = ast.Attribute(value=node, attr=attr, ctx=ast.Load())
    return node
