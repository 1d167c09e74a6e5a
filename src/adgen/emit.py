"""Write generated functions as Python source text (with :func:`ast.unparse`).

:class:`CodeWriter` collects statements and comments with their indentation;
the derivative of each original line is grouped under a comment quoting it.
:func:`open_block` and :func:`open_while` write the headers of the IR's ``if``, ``for``
and ``while`` statements (forward mode, both sweeps of reverse mode, and traces).
The passes that rewrite the written code afterwards are :mod:`adgen.codeopt`'s.

>>> w = CodeWriter()
>>> w.open("def f_jvp(x, x_dot):")
>>> w.source_comment(3, "    y = np.sin(x)  # first")
>>> w.stmt(ast.parse("y = np.sin(x)").body[0])
>>> w.close()
>>> print(w.render(), end="")
def f_jvp(x, x_dot):
    # line 3: y = np.sin(x)  # first
    y = np.sin(x)
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from . import ir

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


class CodeWriter:
    def __init__(self, depth: int = 0, text: bool = True) -> None:
        self.lines: list[str] = []
        self.depth = depth
        # text=False: a dry run that only learns which names are read (no source is written)
        self.text = text
        self._last_comment: tuple[str, int] | None = None
        self.reads: set[str] = set()  # every name the written statements read
        self._pending: tuple[Any, ...] | None = None

    def line(self, text: str) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.source_comment(*pending)
        self.lines.append("    " * self.depth + text if text else "")

    def defer_comment(self, *args: Any) -> None:
        """A :meth:`source_comment` written only if a line follows before :meth:`drop_comment`."""
        self._pending = args

    def drop_comment(self) -> None:
        self._pending = None

    def open(self, header: str) -> None:
        self.line(header)
        self.depth += 1
        self._last_comment = None

    def close(self) -> None:
        self.depth -= 1
        self._last_comment = None

    def comment(self, text: str) -> None:
        self.line("# " + _one_line(text))

    def source_comment(
        self, lineno: int, text: str, prefix: str = "line", label: str | None = None
    ) -> None:
        """``# line N: <source>``, once for a run of statements from the same line."""
        key = (prefix, lineno)
        if self._last_comment == key:
            return
        self._last_comment = key
        quoted = _one_line(text.strip())
        shown = label if label is not None else str(lineno)
        self.line(f"# {prefix} {shown}: {quoted}" if quoted else f"# {prefix} {shown}")

    def stmt(self, node: ast.stmt) -> None:
        nodes = walk(node)
        self.reads.update(
            n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)
        )
        if not self.text:
            self.line("...")
            return
        for text in unparse(node, nodes).splitlines():
            self.line(text)

    def extend(self, other: CodeWriter) -> None:
        """Append another writer's lines (written at this writer's depth)."""
        self.lines.extend(other.lines)
        self.reads |= other.reads

    def render(self) -> str:
        return "\n".join(self.lines) + "\n"


def while_header(stmt: ir.While) -> tuple[str | None, list[ir.Stmt]]:
    """``while <expr>:`` when the test is one comparison; else None (``while True`` + break)."""
    tb = stmt.test_body
    if (
        len(tb) == 1
        and isinstance(tb[0], ir.Assign)
        and not tb[0].prim.differentiable
        and isinstance(stmt.test, ir.Var)
        and tb[0].targets == (stmt.test.name,)
    ):
        return ast.unparse(ir.primal_expr(tb[0])), []
    if not tb:
        return ast.unparse(ir.atom_to_ast(stmt.test)), []
    return None, tb


def open_while(w: CodeWriter, stmt: ir.While, test_block: Callable[[list[ir.Stmt]], None]) -> None:
    """Write the header of a ``while`` loop: ``while <test>:``, or ``while True:`` followed by
    the statements computing the test (written by ``test_block``) and ``if not test: break``.
    The body follows at the next depth."""
    header, test_body = while_header(stmt)
    if header is not None:
        w.open(f"while {header}:")
        return
    w.open("while True:")
    test_block(test_body)
    w.open(f"if not {ast.unparse(ir.atom_to_ast(stmt.test))}:")
    w.line("break")
    w.close()


def open_block(w: CodeWriter, stmt: ir.Stmt) -> None:
    """Write the header of a block statement (its body follows at the next depth)."""
    if isinstance(stmt, ir.If):
        w.open(f"if {ast.unparse(ir.atom_to_ast(stmt.test))}:")
        w.reads.update(ir.atom_vars(stmt.test))
    elif isinstance(stmt, ir.For):
        w.open(f"for {stmt.target} in {ast.unparse(ir.atom_to_ast(stmt.iter))}:")
        w.reads.update(ir.atom_vars(stmt.iter))


_LINE_BREAKS = str.maketrans({c: " " for c in "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


def _one_line(text: str) -> str:
    """Text safe inside a ``#`` comment: no character that Python or an editor treats as a
    line break."""
    return text.translate(_LINE_BREAKS)
