"""Save only the shape and dtype of a loop's value whose restored value is read for nothing
else: ``stack.append(rt.saved_shape(v))``.

Reverse mode saves, in each iteration of a loop, the values the loop overwrites and the
adjoint sweep reads, and restores them as it goes back. Many are read there only for their
shape: ``rt.unbroadcast(g, h_1)`` brings a cotangent to the shape of the operand ``h_1`` of
``h_2 = h_1 + x``, and code made for real and complex values asks ``rt.is_complex(h_1)``.
This pass saves ``rt.saved_shape(h_1)`` for such a name instead of the array (an
``rt.Like``: its shape and dtype; a list is saved as it is), so
the forward sweep keeps one array less per iteration (for a recurrence over 10,000 values
and 50 steps, 4 MB less, and in a Hessian-vector product twice that, with the tangent):

>>> print(save_shapes_only(
...     "def f_vjp(x, a, out_bar):\\n"
...     "    stack = []\\n"
...     "    h_1 = None\\n"
...     "    h = x\\n"
...     "    for _ in range(3):\\n"
...     "        stack.append(h_1)\\n"
...     "        h_1 = a * h\\n"
...     "        stack.append(h)\\n"
...     "        h = np.tanh(h_1 + x)\\n"
...     "    h_bar = out_bar * 1.0\\n"
...     "    for _ in range(3):\\n"
...     "        h_2_bar = h_bar * (1.0 - h * h)\\n"
...     "        h = stack.pop()\\n"
...     "        h_bar = rt.unbroadcast(rt.unbroadcast(h_2_bar, h_1) * a, h)\\n"
...     "        h_1 = stack.pop()\\n"
...     "    return (h, (h_bar,))\\n"
... ), end="")
def f_vjp(x, a, out_bar):
    stack = []
    h_1 = None
    h = x
    for _ in range(3):
        stack.append(rt.saved_shape(h_1))
        h_1 = a * h
        stack.append(h)
        h = np.tanh(h_1 + x)
    h_bar = out_bar * 1.0
    for _ in range(3):
        h_2_bar = h_bar * (1.0 - h * h)
        h = stack.pop()
        h_bar = rt.unbroadcast(rt.unbroadcast(h_2_bar, h_1) * a, h)
        h_1 = stack.pop()
    return (h, (h_bar,))

(``h`` is read by ``1.0 - h * h``: its values are saved.) Only reverse mode's own list is
read (``stack``, by the name the function gives it): a list of the program's may hold
anything. A name is saved as its shape
when every read of it outside the loops that save it gives a shape or kind only, or there is
none (a shape: the second argument of ``rt.unbroadcast`` or ``rt.unreduce``; a kind: the
argument of ``rt.is_complex``). The reads in those loops run in the forward sweep, before
any value is restored. Code that runs loops again from snapshots
(checkpointing) is left alone.
"""

from __future__ import annotations

import ast

from adgen.backend.codeopt.common import _dotted, _function
from adgen.backend.codeopt.keep_shapes_only import _SHAPE_ONLY
from adgen.pyast import walk


def save_shapes_only(source: str, stack: str = "stack") -> str:
    """``source`` with each loop's save on the list ``stack`` (reverse mode's own, whose
    every value popped is a restore) of a value read back only for its shape written as a
    save of ``rt.Like`` of it."""
    if f"{stack}.append(" not in source or "snapshots" in source:
        return source
    fn = _function(source)
    if fn is None:
        return source
    params = {a.arg for a in fn.args.args}
    # the saves: `stack.append(v)` or `stack.append((v, w))` in a loop, by name
    saves: dict[str, list[tuple[ast.Name, ast.For | ast.While]]] = {}
    for loop in walk(fn):
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        for stmt in loop.body:
            for item in _saved(stmt, stack):
                saves.setdefault(item.id, []).append((item, loop))
    if not saves:
        return source
    shape_args = {
        id(node.args[1])
        for node in walk(fn)
        if isinstance(node, ast.Call)
        and _dotted(node.func) in _SHAPE_ONLY
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Name)
    } | {
        id(node.args[0])
        for node in walk(fn)
        if isinstance(node, ast.Call)
        and _dotted(node.func) == "rt.is_complex"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
    }
    saved_items = {id(item) for items in saves.values() for item, _ in items}
    inside: dict[str, set[int]] = {}  # name -> ids of its reads inside the loops saving it
    for v, items in saves.items():
        inside[v] = {
            id(n)
            for _, loop in items
            for n in walk(loop)
            if isinstance(n, ast.Name) and n.id == v and isinstance(n.ctx, ast.Load)
        }
    chosen = []
    for v in saves:
        if v in params:
            continue
        reads = [
            n
            for n in walk(fn)
            if isinstance(n, ast.Name) and n.id == v and isinstance(n.ctx, ast.Load)
        ]
        if all(id(n) in saved_items or id(n) in inside[v] or id(n) in shape_args for n in reads):
            chosen.append(v)
    if not chosen:
        return source
    lines = source.split("\n")
    edits = sorted(
        (
            (item.lineno, item.col_offset, item.end_col_offset or 0, v)
            for v in chosen
            for item, _ in saves[v]
        ),
        reverse=True,
    )
    for line, start, end, v in edits:
        text = lines[line - 1]
        lines[line - 1] = f"{text[:start]}rt.saved_shape({v}){text[end:]}"
    return "\n".join(lines)


def _saved(stmt: ast.stmt, stack: str) -> list[ast.Name]:
    """The names ``stmt`` saves, if it is ``stack.append(v)`` or ``.append((v, w, ...))``."""
    if not (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == "append"
        and isinstance(stmt.value.func.value, ast.Name)
        and stmt.value.func.value.id == stack
        and len(stmt.value.args) == 1
        and not stmt.value.keywords
    ):
        return []
    arg = stmt.value.args[0]
    if isinstance(arg, ast.Name):
        return [arg]
    if isinstance(arg, ast.Tuple) and all(isinstance(e, ast.Name) for e in arg.elts):
        return list(arg.elts)  # type: ignore[arg-type]
    return []
