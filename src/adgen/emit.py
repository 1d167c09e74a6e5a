"""Write generated functions as Python source text (with :func:`ast.unparse`).

:class:`CodeWriter` collects statements and comments with their indentation;
the derivative of each original line is grouped under a comment quoting it.

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
from typing import Any


class _FixSlices(ast.NodeTransformer):
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


def unparse(node: ast.AST) -> str:
    """Python source of a statement or expression, with slices made valid where they stand."""
    fixed = _FixSlices().visit(node)
    return ast.unparse(fixed)


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
        self.reads.update(
            n.id
            for n in ast.walk(node)
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)
        )
        if not self.text:
            self.line("...")
            return
        for text in unparse(node).splitlines():
            self.line(text)

    def extend(self, other: CodeWriter) -> None:
        """Append another writer's lines (written at this writer's depth)."""
        self.lines.extend(other.lines)
        self.reads |= other.reads

    def render(self) -> str:
        return "\n".join(self.lines) + "\n"


_LINE_BREAKS = str.maketrans({c: " " for c in "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


def _one_line(text: str) -> str:
    """Text safe inside a ``#`` comment: no character that Python or an editor treats as a
    line break."""
    return text.translate(_LINE_BREAKS)
