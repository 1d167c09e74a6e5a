"""Write generated functions as Python source text (with :func:`ast.unparse`).

:class:`CodeWriter` collects statements and comments with their indentation;
the derivative of each original line is grouped under a comment quoting it.
:func:`open_block` and :func:`open_while` write the headers of the IR's ``if``, ``for``
and ``while`` statements (forward mode, both sweeps of reverse mode, and traces).
The passes that rewrite the written code afterwards are :mod:`adgen.backend.codeopt`'s.

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

from adgen import ir
from adgen.pyast import unparse, walk


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

    def stmt(self, node: ast.stmt, restored: str | None = None) -> None:
        """Write a statement; ``restored``: the name whose items it puts back (``y[i] =
        stack.pop()``), not counted as read by it (a name only its restores read needs none)."""
        nodes = walk(node)
        self.reads.update(
            n.id
            for n in nodes
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store) and n.id != restored
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
