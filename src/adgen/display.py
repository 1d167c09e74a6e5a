"""Rich display of generated code and IR in notebooks (Jupyter, VS Code, Colab, ...).

Every object adgen hands out that has code behind it -- the functions returned
by :func:`adgen.grad` and :func:`adgen.value_and_grad`, ``@adgen.differentiate``
functions, :func:`adgen.show` and :func:`adgen.trace` -- implements
``_repr_html_`` (syntax-highlighted with Pygments when it is installed, with
inline styles so that no stylesheet is needed; an escaped ``<pre>`` otherwise)
and ``_repr_markdown_`` (a fenced ``python`` block). Display code never raises:
when adgen cannot generate the code, the display shows adgen's error message.

>>> print(markdown_code("y = x < 1"))
```python
y = x < 1
```
>>> plain_html("y = x < 1 & z")  # doctest: +ELLIPSIS
'<pre style="...">y = x &lt; 1 &amp; z</pre>'

:func:`to_dot` writes a function's IR as a Graphviz graph (see
:meth:`adgen.Trace.to_dot`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from adgen import ir
from adgen.errors import AdgenError

__all__ = ["html_code", "markdown_code", "plain_html", "repr_html", "repr_markdown", "to_dot"]

_PRE_STYLE = (
    "margin: 0; padding: 0.5em; line-height: 125%; overflow-x: auto; "
    "background: #f8f8f8; color: #000000"
)
_ERROR_STYLE = (
    "margin: 0; padding: 0.5em; line-height: 125%; overflow-x: auto; "
    "background: #fdf0f0; color: #a00000; border-left: 3px solid #d00000"
)


# -- rendering -----------------------------------------------------------------------------------
def _escape(text: str) -> str:
    import html  # (only notebooks need it: not imported with adgen)

    return html.escape(text, quote=False)


def plain_html(code: str) -> str:
    """``code`` as an escaped ``<pre>`` block (the display without Pygments)."""
    return f'<pre style="{_PRE_STYLE}">{_escape(code)}</pre>'


def html_code(code: str) -> str:
    """``code`` as HTML: highlighted by Pygments with inline styles if it is importable.

    >>> "&lt;" in html_code("a < b") and "<script>" not in html_code("'<script>'")
    True
    """
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return plain_html(code)
    formatter = HtmlFormatter(noclasses=True, style="default")
    # the container fixes the text colour too: on a dark theme, unstyled tokens would
    # otherwise inherit a light colour and vanish on Pygments' light background
    return f'<div style="{_PRE_STYLE}">{highlight(code, PythonLexer(), formatter)}</div>'


def markdown_code(code: str, language: str = "python") -> str:
    """``code`` in a fenced Markdown block (the fence outgrows any backtick run in ``code``)."""
    longest = max([len(run) for run in re.findall("`+", code)], default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{code.rstrip()}\n{fence}"


def _error_text(exc: Exception) -> str:
    if isinstance(exc, AdgenError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def render(produce: Callable[[], str]) -> tuple[str, str | None]:
    """``(text, None)`` from ``produce()``, or ``(error message, error kind)`` if it fails."""
    try:
        return produce(), None
    except Exception as exc:  # display must never raise inside a notebook
        return _error_text(exc), type(exc).__name__


def repr_html(produce: Callable[[], str]) -> str:
    """The ``_repr_html_`` of code that ``produce()`` returns (or of the error it raises)."""
    text, error = render(produce)
    if error is None:
        return html_code(text)
    head = f"adgen could not generate this code ({error}):"
    return f'<pre style="{_ERROR_STYLE}">{_escape(head + chr(10) + text)}</pre>'


def repr_markdown(produce: Callable[[], str]) -> str:
    """The ``_repr_markdown_`` of code that ``produce()`` returns (or of the error it raises)."""
    text, error = render(produce)
    if error is None:
        return markdown_code(text)
    return f"**adgen could not generate this code ({error}):**\n\n" + markdown_code(text, "text")


def _quote(text: str) -> str:
    """A Graphviz double-quoted string (escape sequences like ``\\n`` pass through)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _atom_text(atom: ir.Atom) -> str:
    import ast

    return ast.unparse(ir.atom_to_ast(atom))


def to_dot(function: ir.Function, values: dict[str, Any] | None = None) -> str:
    """The computation graph of ``function``'s IR in Graphviz's dot language.

    Nodes: the inputs (filled boxes), one node per IR statement labelled with
    its result name and primitive (ellipses), values from outside the function
    (dashed boxes, where first used), and the output (a double box). One edge
    runs from each value to each statement that uses it; constants are not
    nodes. With ``values`` (a traced evaluation) labels also show each value.
    The text depends only on the IR, so it is identical across runs.

    >>> import numpy as np
    >>> from adgen.rules import lookup
    >>> fn = ir.Function("f", ["x"], [
    ...     ir.Assign(("y",), lookup(np.sin), (ir.Var("x"),), (), 2),
    ...     ir.Return(ir.Var("y"), 2)], "f.py", 1, {})
    >>> print(to_dot(fn))
    digraph "f" {
      rankdir=TB;
      node [fontname="monospace", fontsize=10];
      "x" [label="x\\ninput", shape=box, style=filled, fillcolor="#dbeafe"];
      "y" [label="y\\nnp.sin", shape=ellipse];
      "return" [label="return y", shape=box, peripheries=2, style=filled, fillcolor="#dcfce7"];
      "x" -> "y";
      "y" -> "return";
    }
    """
    nodes: list[str] = []
    edges: list[str] = []
    defined: dict[str, str] = {}  # IR name -> id of the node that computes it
    outside: dict[str, str] = {}  # name of an outside value -> its node id
    used_ids: set[str] = set()

    def new_id(wanted: str) -> str:
        node_id, k = wanted, 1
        while node_id in used_ids:
            k += 1
            node_id = f"{wanted}#{k}"
        used_ids.add(node_id)
        return node_id

    def value_note(name: str) -> str:
        if values is not None and name in values:
            return f"\n= {ir._show(values[name])}"
        return ""

    def free_node(name: str) -> str:
        if name not in outside:
            outside[name] = new_id(name)
            nodes.append(
                f"{_quote(outside[name])} [label={_quote(name)}, shape=box, style=dashed];"
            )
        return outside[name]

    def operands(atoms: list[ir.Atom]) -> list[str]:
        sources: list[str] = []
        for atom in atoms:
            for sub in _flatten(atom):
                if isinstance(sub, ir.Var) and sub.name in defined:
                    sources.append(defined[sub.name])
                elif isinstance(sub, ir.Free):
                    sources.append(free_node(sub.name))
        return list(dict.fromkeys(sources))

    def connect(target: str, atoms: list[ir.Atom]) -> None:
        for src in operands(atoms):
            edges.append(f"{_quote(src)} -> {_quote(target)};")

    def stmt_node(names: tuple[str, ...], label: str, atoms: list[ir.Atom]) -> None:
        node_id = new_id(", ".join(names) if names else label)
        connect(node_id, atoms)
        text = ", ".join(names) + "\n" + label if names else label
        if len(names) == 1:
            text += value_note(names[0])
        nodes.append(f"{_quote(node_id)} [label={_quote(text)}, shape=ellipse];")
        for name in names:
            defined[name] = node_id

    for param in function.params:
        node_id = new_id(param)
        defined[param] = node_id
        label = f"{param}\ninput{value_note(param)}"
        nodes.append(
            f"{_quote(node_id)} [label={_quote(label)}, shape=box, style=filled, "
            'fillcolor="#dbeafe"];'
        )

    def walk(block: list[ir.Stmt]) -> None:
        for stmt in block:
            if isinstance(stmt, ir.Assign):
                stmt_node(stmt.targets, stmt.prim.name, list(ir.stmt_args(stmt)))
            elif isinstance(stmt, ir.Return):
                node_id = new_id("return")  # never an IR name: `return` is a keyword
                connect(node_id, [stmt.value])
                label = f"return {_atom_text(stmt.value)}"
                nodes.append(
                    f"{_quote(node_id)} [label={_quote(label)}, shape=box, peripheries=2, "
                    'style=filled, fillcolor="#dcfce7"];'
                )
            elif isinstance(stmt, ir.If):
                stmt_node((), f"if (line {stmt.line})", [stmt.test])
                walk(stmt.body)
                walk(stmt.orelse)
            elif isinstance(stmt, ir.For):
                stmt_node((stmt.target,), "for", [stmt.iter])
                walk(stmt.body)
            elif isinstance(stmt, ir.While):
                walk(stmt.test_body)
                stmt_node((), f"while (line {stmt.line})", [stmt.test])
                walk(stmt.body)

    walk(function.body)
    lines = [
        f"digraph {_quote(function.name)} {{",
        "  rankdir=TB;",
        '  node [fontname="monospace", fontsize=10];',
    ]
    lines += ["  " + n for n in nodes] + ["  " + e for e in edges] + ["}"]
    return "\n".join(lines)


def _flatten(atom: ir.Atom) -> list[ir.Atom]:
    if isinstance(atom, ir.Tup):
        return [sub for item in atom.items for sub in _flatten(item)]
    if isinstance(atom, ir.Slc):
        return [sub for part in (atom.lower, atom.upper, atom.step) for sub in _flatten(part)]
    return [atom]
