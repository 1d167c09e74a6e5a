"""Save a loop iteration's values with one push of a tuple, not one push per value.

Reverse mode saves a name a loop rebinds on its stack (``stack.append(a)``) before the
iteration overwrites it, and the adjoint loop pops it back (``a = stack.pop()``). Where a
loop body saves only plain names at its top level, each once, and its adjoint restores
exactly those, this pass pushes one tuple per iteration and pops it once: fewer list
operations, the same values. :func:`batch_saves` shows it, source in and source out.

adgen does not differentiate the popped tuple again, so reverse mode runs this pass only
on code not meant for a higher derivative (``batch=True``), after
:mod:`adgen.backend.codeopt.drop_copies`.
"""

from __future__ import annotations

import ast


def batch_saves(source: str, stack: str = "stack") -> str:
    """In reverse-mode code, save a loop iteration's values with one push of a tuple instead
    of one push per value (and take them back with one pop), where the loop body saves only
    plain names at its top level (each once) and its adjoint restores exactly those.

    The values are the same: a name is saved just before the body first overwrites it, so
    its value there is its value when the iteration starts.

    >>> print(batch_saves(
    ...     "def f_vjp(x, n, out_bar):\\n"
    ...     "    stack = []\\n"
    ...     "    loop_1 = range(n)\\n"
    ...     "    for i in loop_1:\\n"
    ...     "        stack.append(a)\\n"
    ...     "        a = np.sin(x)\\n"
    ...     "        stack.append(x)\\n"
    ...     "        x = a * x\\n"
    ...     "    x_bar = out_bar\\n"
    ...     "    for i in reversed(loop_1):\\n"
    ...     "        x = stack.pop()\\n"
    ...     "        a_bar = x_bar * x\\n"
    ...     "        x_bar = x_bar * a\\n"
    ...     "        a = stack.pop()\\n"
    ...     "        x_bar = x_bar + a_bar * np.cos(x)\\n"
    ...     "    return (x, (x_bar,))\\n"
    ... ), end="")
    def f_vjp(x, n, out_bar):
        stack = []
        loop_1 = range(n)
        for i in loop_1:
            stack.append((a, x))
            a = np.sin(x)
            x = a * x
        x_bar = out_bar
        for i in reversed(loop_1):
            a_saved, x_saved = stack.pop()
            x = x_saved
            a_bar = x_bar * x
            x_bar = x_bar * a
            a = a_saved
            x_bar = x_bar + a_bar * np.cos(x)
        return (x, (x_bar,))
    """
    if f"{stack}.append(" not in source:
        return source
    tree = ast.parse(source)
    forward: dict[str, ast.For] = {}
    backward: dict[str, ast.For] = {}
    seen: dict[str, int] = {}  # loops over the same name: which pairs up is not known
    for node in ast.walk(tree):
        if not isinstance(node, ast.For):
            continue
        it = node.iter
        if isinstance(it, ast.Name):
            forward[it.id] = node
            seen[it.id] = seen.get(it.id, 0) + 1
        elif (
            isinstance(it, ast.Call)
            and ast.unparse(it.func) in ("reversed", "rt.backwards")
            and len(it.args) == 1
            and isinstance(it.args[0], ast.Name)
        ):
            backward[it.args[0].id] = node
            seen[it.args[0].id] = seen.get(it.args[0].id, 0) + 1
    forward = {key: loop for key, loop in forward.items() if seen[key] == 2}
    from adgen.names import Namer

    namer = Namer(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    lines = source.split("\n")
    edits: list[tuple[int, int, list[str]]] = []  # (first line, last line, replacement)
    for key, loop in forward.items():
        back = backward.get(key)
        if back is None:
            continue
        pushes = [(s, _pushed_name(s, stack)) for s in loop.body]
        pushed = [(s, n) for s, n in pushes if n is not None]
        pops = [(s, _popped_name(s, stack)) for s in back.body]
        popped = [(s, n) for s, n in pops if n is not None]
        names = [n for _, n in pushed]
        if (
            len(names) < 2
            or len(set(names)) != len(names)
            or [n for _, n in popped] != names[::-1]
            or sum(_stack_name(s, stack) for s in loop.body) != len(pushed)
            or sum(_stack_name(s, stack) for s in back.body) != len(popped)
            or any(s.lineno != s.end_lineno for s, _ in pushed + popped)
        ):
            continue
        indent = " " * loop.body[0].col_offset
        saved = [namer.claim(f"{n}_saved") for n in names]
        first = loop.body[0].lineno
        while lines[first - 2].startswith(indent + "#"):
            first -= 1  # above the comment quoting the first line
        edits.append((first, first - 1, _wrap(f"{stack}.append((", names, "))", indent)))
        for s, _ in pushed:
            edits.append((s.lineno, s.lineno, []))
        back_indent = " " * back.body[0].col_offset
        start = back.body[0].lineno
        while lines[start - 2].startswith(back_indent + "#"):
            start -= 1
        if len(saved) == 1:  # pragma: no cover - at least two names are batched
            continue
        head = _wrap("", saved, f" = {stack}.pop()", back_indent)
        if len(head) > 1:
            head = _wrap("(", saved, f") = {stack}.pop()", back_indent)
        edits.append((start, start - 1, head))
        for (s, n), keep in zip(popped, saved[::-1]):
            edits.append((s.lineno, s.lineno, [f"{back_indent}{n} = {keep}"]))
    for first, last, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        lines[first - 1 : last] = new
    return "\n".join(lines)


def _stack_name(node: ast.AST, stack: str) -> int:
    return sum(1 for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == stack)


def _pushed_name(stmt: ast.stmt, stack: str) -> str | None:
    """``n`` for ``stack.append(n)``."""
    if (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and ast.unparse(stmt.value.func) == f"{stack}.append"
        and len(stmt.value.args) == 1
        and isinstance(stmt.value.args[0], ast.Name)
    ):
        return stmt.value.args[0].id
    return None


def _popped_name(stmt: ast.stmt, stack: str) -> str | None:
    """``n`` for ``n = stack.pop()``."""
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and ast.unparse(stmt.value) == f"{stack}.pop()"
    ):
        return stmt.targets[0].id
    return None


def _wrap(head: str, items: list[str], tail: str, indent: str) -> list[str]:
    """``head + ", ".join(items) + tail`` in lines of at most 99 characters."""
    one = f"{indent}{head}{', '.join(items)}{tail}"
    if len(one) <= 99:
        return [one]
    rows = [f"{indent}{head}"]
    inner = indent + "    "
    for item in items:
        if len(rows) > 1 and len(rows[-1]) + len(item) + 2 <= 99:
            rows[-1] += f" {item},"
        else:
            rows.append(f"{inner}{item},")
    rows.append(f"{indent}{tail.lstrip(',')}")
    return rows
