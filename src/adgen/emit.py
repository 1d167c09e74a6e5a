"""Write generated functions as Python source text (with :func:`ast.unparse`).

:class:`CodeWriter` collects statements and comments with their indentation;
the derivative of each original line is grouped under a comment quoting it.
:func:`open_block` and :func:`open_while` write the headers of the IR's ``if``, ``for``
and ``while`` statements (forward mode, both sweeps of reverse mode, and traces).

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
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


def free_dead_names(source: str, scalars: frozenset[str] = frozenset()) -> str:
    """Add ``del`` lines to a generated function so each value it makes is freed after its last
    use at the function's top level, not only when the function returns: a reverse sweep then
    holds only the arrays it still needs.

    Only names assigned at the top level before that use are deleted (a name assigned in a
    branch might be unbound), never parameters, never names known to hold scalars (freeing
    them saves nothing), and never names the code deletes itself. One
    ``del`` line closes each group of lines (the code under one ``# line ...`` comment),
    joined with a ``del`` the code has there already.

    >>> print(free_dead_names(
    ...     "def f_vjp(x, g):\\n"
    ...     "    # line 2\\n"
    ...     "    a = x * 2.0\\n"
    ...     "    b = a + 1.0\\n"
    ...     "    # line 3\\n"
    ...     "    c = b - 1.0\\n"
    ...     "    # line 4\\n"
    ...     "    d = c * a\\n"
    ...     "    return (d, g * a)\\n"
    ... ), end="")
    def f_vjp(x, g):
        # line 2
        a = x * 2.0
        b = a + 1.0
        # line 3
        c = b - 1.0
        del b
        # line 4
        d = c * a
        return (d, g * a)

    (``c`` is not deleted: nothing comes between its last use and the ``return``.)
    """
    fn = _function(source)
    if fn is None:
        return source
    return _free_dead(source, fn, [_statement(s) for s in fn.body], scalars)


def keep_shapes_and_free(source: str, scalars: frozenset[str] = frozenset()) -> str:
    """``free_dead_names(keep_shapes_only(source, scalars), scalars)``, parsing the source
    once: :func:`keep_shapes_only` tells where the statements of its result stand."""
    fn = _function(source)
    if fn is None:
        return source
    text, body = _keep_shapes_only(source, fn, scalars)
    return _free_dead(text, fn, body or [_statement(s) for s in fn.body], scalars)


def _function(source: str) -> ast.FunctionDef | None:
    """The function a generated source defines (None if it is something else)."""
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    return tree.body[0]


@dataclass
class _Statement:
    """A top-level statement of a generated function as :func:`free_dead_names` sees it: its
    first and last line (from 1) and the names it reads, deletes and assigns."""

    first: int
    last: int
    reads: set[str]
    deletes: set[str]
    assigns: set[str]


def _statement(stmt: ast.stmt, shift: int = 0, names: list[ast.Name] | None = None) -> _Statement:
    """``stmt`` moved ``shift`` lines down (``names``: its :func:`name_nodes`, if known)."""
    names = name_nodes(stmt) if names is None else names
    assigns: set[str] = set()
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            assigns.update(n.id for n in name_nodes(target) if isinstance(n.ctx, ast.Store))
    last = stmt.end_lineno
    assert last is not None
    return _Statement(
        stmt.lineno + shift,
        last + shift,
        {n.id for n in names if isinstance(n.ctx, ast.Load)},
        {n.id for n in names if isinstance(n.ctx, ast.Del)},
        assigns,
    )


def _free_dead(
    source: str, fn: ast.FunctionDef, body: list[_Statement], scalars: frozenset[str]
) -> str:
    """:func:`free_dead_names` of ``source``, whose top-level statements are ``body`` (the
    function's header is ``fn``'s)."""
    params = {a.arg for a in fn.args.args}
    defined: dict[str, int] = {}
    last_read: dict[str, int] = {}
    deleted: set[str] = set()
    for i, stmt in enumerate(body):
        for name in stmt.reads:
            last_read[name] = i
        deleted |= stmt.deletes
        for name in stmt.assigns:
            defined.setdefault(name, i)
    dead: dict[int, list[str]] = {}
    end = len(body) - 1
    for var, i in last_read.items():
        if var in params or var in deleted or var not in defined or i >= end or var in scalars:
            continue
        if defined[var] <= i:
            dead.setdefault(i, []).append(var)
    if not dead:
        return source
    lines = source.split("\n")
    indent = " " * fn.body[0].col_offset
    # one `del` line closing each group of lines (before the next `# line ...` comment)
    last = body[end].first - 1
    at: dict[int, list[str]] = {}
    for i, names in dead.items():
        after = body[i].last
        while after < last and not lines[after].startswith(indent + "#"):
            after += 1
        if after < last:  # (the return frees everything anyway)
            at.setdefault(after, []).extend(names)
    for after in sorted(at, reverse=True):
        names = at[after]
        if lines[after - 1].startswith(indent + "del "):  # one line with the sweep's own del
            names = names + lines[after - 1][len(indent) + 4 :].split(", ")
            after -= 1
            del lines[after]
        rows: list[str] = []
        for var in sorted(names):
            if rows and len(rows[-1]) + len(var) + 2 <= 99:
                rows[-1] += f", {var}"
            else:
                rows.append(f"{indent}del {var}")
        lines[after:after] = rows
    return "\n".join(lines)


# helpers whose second argument gives only a shape (and dtype)
_SHAPE_ONLY = ("rt.unbroadcast", "rt.unreduce")


def keep_shapes_only(source: str, scalars: frozenset[str] = frozenset()) -> str:
    """In a straight-line reverse-mode function, keep only the shape and dtype (``rt.Like``)
    of a forward value whose adjoint code reads nothing else of it, so the array itself can
    be freed after the forward sweep (see :func:`free_dead_names`).

    >>> print(keep_shapes_only(
    ...     "def f_vjp(x, out_bar):\\n"
    ...     "    y = x * 2.0\\n"
    ...     "    s = y * 3.0\\n"
    ...     "    out = np.sum(s)\\n"
    ...     "    # adjoint of line 4: return np.sum(s)\\n"
    ...     "    s_bar = rt.unreduce(out_bar, s)\\n"
    ...     "    return (out, (s_bar * 6.0,))\\n"
    ... ), end="")
    def f_vjp(x, out_bar):
        y = x * 2.0
        s = y * 3.0
        s_like = rt.Like(s)
        out = np.sum(s)
        # adjoint of line 4: return np.sum(s)
        s_bar = rt.unreduce(out_bar, s_like)
        return (out, (s_bar * 6.0,))
    """
    if not any(f"{helper}(" in source for helper in _SHAPE_ONLY):
        return source
    fn = _function(source)
    return source if fn is None else _keep_shapes_only(source, fn, scalars)[0]


def _keep_shapes_only(
    source: str, fn: ast.FunctionDef, scalars: frozenset[str]
) -> tuple[str, list[_Statement] | None]:
    """:func:`keep_shapes_only` of ``source``, which defines ``fn``; when it changes the
    source, the top-level statements of the result too."""
    if not any(f"{helper}(" in source for helper in _SHAPE_ONLY):
        return source, None
    if not all(isinstance(s, (ast.Assign, ast.Return, ast.Delete, ast.Expr)) for s in fn.body):
        return source, None
    lines = source.split("\n")
    indent = " " * fn.body[0].col_offset
    marker = indent + "# adjoint of "
    start = next((i + 1 for i, text in enumerate(lines) if text.startswith(marker)), None)
    if start is None:
        return source, None
    params = {a.arg for a in fn.args.args}
    made: dict[str, ast.Assign] = {}
    other_reads: set[str] = set()
    shape_reads: dict[str, list[ast.Call]] = {}
    statement_of: dict[int, ast.stmt] = {}
    bindings: dict[str, int] = {}
    # every name the function uses (a new name must differ from them)
    outside: list[ast.AST] = [fn.args, *fn.decorator_list, *([fn.returns] if fn.returns else [])]
    used = {n.id for part in outside for n in name_nodes(part)}
    names_of: dict[int, list[ast.Name]] = {}
    for stmt in fn.body:
        nodes = walk(stmt)
        names = names_of[id(stmt)] = [n for n in nodes if isinstance(n, ast.Name)]
        used.update(n.id for n in names)
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for n in name_nodes(target):
                    bindings[n.id] = bindings.get(n.id, 0) + 1
        if stmt.lineno < start:  # the forward sweep: what it reads is freed after it anyway
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                if isinstance(stmt.targets[0], ast.Name):
                    made.setdefault(stmt.targets[0].id, stmt)
            continue
        shape_args: set[int] = set()
        if not isinstance(stmt, ast.Return):
            for node in nodes:
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and f"{node.func.value.id}.{node.func.attr}" in _SHAPE_ONLY
                    and len(node.args) >= 2
                    and isinstance(node.args[1], ast.Name)
                ):
                    shape_reads.setdefault(node.args[1].id, []).append(node)
                    shape_args.add(id(node.args[1]))
                    statement_of[id(node)] = stmt
        other_reads.update(n.id for n in names if id(n) not in shape_args)
    chosen = [
        v
        for v in shape_reads
        if v in made
        and v not in params
        and v not in other_reads
        and bindings.get(v) == 1
        and v not in scalars
    ]
    if not chosen:
        return source, None
    from .names import Namer

    namer = Namer(used)
    edits: dict[int, tuple[int, list[str]]] = {}  # first line -> (last line, new lines)
    liked: dict[int, tuple[str, str]] = {}  # first line of v's binding -> (v, v_like)
    for v in chosen:
        like = namer.like(v)
        for call in shape_reads[v]:
            call.args[1] = ast.Name(id=like, ctx=ast.Load())
        binding = made[v]
        end = binding.end_lineno
        assert end is not None
        keep = lines[binding.lineno - 1 : end]
        edits[binding.lineno] = (end, keep + [f"{indent}{like} = rt.Like({v})"])
        liked[binding.lineno] = (v, like)
    rewritten = {
        id(statement_of[id(c)]): statement_of[id(c)] for v in chosen for c in shape_reads[v]
    }
    for stmt in rewritten.values():  # the adjoint lines reading a shape: they read `x_like`
        end = stmt.end_lineno
        assert end is not None
        text = unparse(stmt)
        edits[stmt.lineno] = (end, [indent + t for t in text.splitlines()])
    for first in sorted(edits, reverse=True):
        last, new = edits[first]
        lines[first - 1 : last] = new
    # where the statements stand now, and what they read
    statements: list[_Statement] = []
    shift = 0
    for stmt in fn.body:
        if stmt.lineno not in edits:
            statements.append(_statement(stmt, shift, names_of[id(stmt)]))
            continue
        last, new = edits[stmt.lineno]
        if id(stmt) in rewritten:  # its lines are new: so are the names it reads
            moved = _statement(stmt, shift)
            moved.last = moved.first + len(new) - 1
            statements.append(moved)
        else:  # a value whose shape is kept: `v_like = rt.Like(v)` follows
            moved = _statement(stmt, shift, names_of[id(stmt)])
            v, like = liked[stmt.lineno]
            statements.append(moved)
            statements.append(_Statement(moved.last + 1, moved.last + 1, {"rt", v}, set(), {like}))
        shift += len(new) - (last - stmt.lineno + 1)
    return "\n".join(lines), statements


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
    from .names import Namer

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


_LINE_BREAKS = str.maketrans({c: " " for c in "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


def _one_line(text: str) -> str:
    """Text safe inside a ``#`` comment: no character that Python or an editor treats as a
    line break."""
    return text.translate(_LINE_BREAKS)


def drop_copies(source: str) -> str:
    """Two peepholes on a generated function (mostly its reverse sweep, where the chain rule
    through ``+`` and plain assignments writes adjoints that are copies of others):

    * ``a = b``, where ``a`` is bound nowhere else and read only in the lines that follow,
      before ``b`` is bound again: those lines read ``b`` and the copy goes;
    * ``v = 0.0`` followed, before any other use of ``v``, by ``v = v + e``: ``v = e``;
    * in the first kind, ``b = a`` among those lines binds ``b`` to its own value and goes;
    * ``a = b``, where ``a`` is bound again in the lines that follow, all its uses are
      there, ``b`` is untouched there and the last of them binds ``b`` from ``a``: one name.

    >>> print(drop_copies(
    ...     "def f_vjp(x, out_bar):\\n"
    ...     "    # adjoint of line 2\\n"
    ...     "    a_bar = out_bar\\n"
    ...     "    b_bar = a_bar * 2.0\\n"
    ...     "    x_bar = 0.0\\n"
    ...     "    x_bar = x_bar + b_bar * x\\n"
    ...     "    return (x_bar,)\\n"
    ... ), end="")
    def f_vjp(x, out_bar):
        # adjoint of line 2
        b_bar = out_bar * 2.0
        x_bar = b_bar * x
        return (x_bar,)

    A loop body's adjoint (the chain rule through ``acc = acc_2 - z`` and
    ``x = x_new``), before and after:

    >>> print(drop_copies(
    ...     "def f_vjp(x, acc_bar):\\n"
    ...     "    for i in range(3):\\n"
    ...     "        acc_2_bar = acc_bar\\n"
    ...     "        z_bar = z_bar - acc_bar\\n"
    ...     "        acc_bar = 0.0\\n"
    ...     "        acc_bar = acc_bar + acc_2_bar\\n"
    ...     "        x_new_bar = x_bar\\n"
    ...     "        x_new_bar = x_new_bar + acc_2_bar * z\\n"
    ...     "        x_bar = x_new_bar * 0.9\\n"
    ...     "    return (x_bar, z_bar)\\n"
    ... ), end="")
    def f_vjp(x, acc_bar):
        for i in range(3):
            z_bar = z_bar - acc_bar
            x_bar = x_bar + acc_bar * z
            x_bar = x_bar * 0.9
        return (x_bar, z_bar)
    """
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return source
    fn = tree.body[0]
    stores: dict[str, int] = {a.arg: 1 for a in fn.args.args}
    reads: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            table = reads if isinstance(node.ctx, ast.Load) else stores
            table[node.id] = table.get(node.id, 0) + 1
    names = _NameCache()
    changed: dict[int, ast.stmt] = {}
    dropped: set[int] = set()
    blocks = list(_blocks(fn.body))
    state = _CopyState(changed, reads, names, dropped)
    for block in blocks:  # zero resets first: the copies they hid become visible
        for i, stmt in enumerate(block):
            pair = _simple_assign(stmt)
            if (
                pair is not None
                and isinstance(pair[1], ast.Constant)
                and type(pair[1].value) is float
                and pair[1].value == 0.0
                and _first_add(block, i, pair[0], changed, names)
            ):
                dropped.add(id(stmt))
                stores[pair[0]] -= 1
    for block in blocks:
        for i, stmt in enumerate(block):
            if id(stmt) in dropped:
                continue
            pair = _simple_assign(stmt)
            if pair is None:
                continue
            target, value = pair
            if isinstance(value, ast.Name) and value.id != target and stores.get(target) == 1:
                undone = _substitute_copy(block, i, target, value.id, state)
                if undone is not None:
                    dropped.add(id(stmt))
                    dropped.update(id(s) for s in undone)
                    stores[value.id] -= len(undone)
    for block in blocks:  # then copies into names bound again
        for i, stmt in enumerate(block):
            pair = _simple_assign(stmt)
            if id(stmt) in dropped or pair is None:
                continue
            target, value = pair
            if isinstance(value, ast.Name) and value.id != target:
                if _coalesce_copy(block, i, target, value.id, state):
                    dropped.add(id(stmt))
    if not changed and not dropped:
        return source
    lines = source.split("\n")
    edits = [s for s in _statements(fn.body) if id(s) in dropped or id(s) in changed]
    for stmt in sorted(edits, key=lambda s: s.lineno, reverse=True):
        new = [] if id(stmt) in dropped else [" " * stmt.col_offset + ast.unparse(stmt)]
        lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno] = new
    return "\n".join(lines)


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


_JUMPS = (ast.Return, ast.Break, ast.Continue, ast.Raise)
_SIMPLE = (ast.Assign, ast.AugAssign, ast.Expr, ast.Delete, ast.Return)


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


@dataclass
class _CopyState:
    """What drop_copies has done so far: statements rewritten and dropped, reads left of
    each name, and each statement's names."""

    changed: dict[int, ast.stmt]
    reads: dict[str, int]
    names: _NameCache
    dropped: set[int]


def _substitute_copy(
    block: list[ast.stmt], i: int, target: str, source: str, state: _CopyState
) -> list[ast.stmt] | None:
    """Replace reads of ``target`` by ``source`` after ``block[i]`` (``target = source``), if
    every read of ``target`` is in simple statements before ``source`` is bound again. A
    ``source = target`` among them binds ``source`` to its own value: it goes too (returned
    with the others to drop; None if nothing can be replaced)."""
    changed, reads, names, dropped = state.changed, state.reads, state.names, state.dropped
    span: list[ast.stmt] = []
    undone: list[ast.stmt] = []
    found = 0
    for stmt in block[i + 1 :]:
        if found == reads.get(target, 0):
            break
        if id(stmt) in dropped:
            continue
        loads, others = names.of(stmt)
        if not isinstance(stmt, _SIMPLE):  # a loop or branch: never rewritten inside
            if names.mentions(stmt, target) or names.mentions(stmt, source):
                return None
            continue
        if target in others:
            return None
        copy = _simple_assign(stmt)
        if copy is not None and copy[0] == source and _is_name(copy[1], target):
            undone.append(stmt)  # source = target: source keeps its value
            found += 1
            continue
        span.append(stmt)
        found += loads.get(target, 0)
        if source in others or isinstance(stmt, _JUMPS):
            break
    if found != reads.get(target, 0):
        return None
    for stmt in span:
        loads, _ = names.of(stmt)
        if target in loads:
            _Rename(target, source).visit(stmt)
            loads[source] = loads.get(source, 0) + loads.pop(target)
            changed[id(stmt)] = stmt
    # the copy's own read of source goes, and so do the reads of target it undoes
    reads[source] = reads.get(source, 0) + reads.pop(target, 0) - len(undone) - 1
    return undone


def _coalesce_copy(
    block: list[ast.stmt], i: int, target: str, source: str, state: _CopyState
) -> bool:
    """``block[i]`` is ``target = source`` and ``target`` is bound again later: if every use
    of ``target`` is in the simple statements that follow, ``source`` is untouched there, and
    the last of them binds ``source`` from ``target`` (``x_bar = x_new_bar * 0.9``), the two
    are one name: ``target`` becomes ``source`` throughout and the copy goes."""
    changed, reads, names, dropped = state.changed, state.reads, state.names, state.dropped
    span: list[ast.stmt] = []
    found = 0
    for stmt in block[i + 1 :]:
        if id(stmt) in dropped:
            continue
        if not isinstance(stmt, _SIMPLE) or isinstance(stmt, ast.AugAssign):
            return False
        loads, others = names.of(stmt)
        if target in others and _simple_assign(stmt) is None:
            return False
        span.append(stmt)
        found += loads.get(target, 0)
        if source in others:
            assign = _simple_assign(stmt)
            if assign is None or source in loads or found != reads.get(target, 0):
                return False
            break
        if source in loads or isinstance(stmt, _JUMPS):
            return False
    else:
        return False
    for stmt in span:
        loads, others = names.of(stmt)
        if target in loads or target in others:
            _Rename(target, source, stores=True).visit(stmt)
            if target in loads:
                loads[source] = loads.get(source, 0) + loads.pop(target)
            if target in others:
                others.discard(target)
                others.add(source)
            changed[id(stmt)] = stmt
    reads[source] = reads.get(source, 0) + reads.pop(target, 0) - 1  # less the copy's
    return True


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str, stores: bool = False) -> None:
        self.old, self.new, self.stores = old, new, stores

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id == self.old and (self.stores or isinstance(node.ctx, ast.Load)):
            node.id = self.new
        return node


def _first_add(
    block: list[ast.stmt], i: int, var: str, changed: dict[int, ast.stmt], names: _NameCache
) -> bool:
    """``block[i]`` is ``var = 0.0``: is the next use of ``var`` a ``var = var + e``? Then it
    becomes ``var = e``."""
    for stmt in block[i + 1 :]:
        if isinstance(stmt, _JUMPS):
            return False
        if not names.mentions(stmt, var):
            continue
        assign = _simple_assign(stmt)
        if assign is None or assign[0] != var:
            return False
        value = assign[1]
        if (
            isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Add)
            and isinstance(value.left, ast.Name)
            and value.left.id == var
            and var not in _names(value.right)
        ):
            assert isinstance(stmt, ast.Assign)
            loads, _ = names.of(stmt)
            stmt.value = value.right
            loads[var] -= 1
            if not loads[var]:
                del loads[var]
            changed[id(stmt)] = stmt
            return True
        return False
    return False


def sum_before_linear(source: str, shapes: dict[str, tuple[int, ...]]) -> str:
    """Sum an adjoint's contributions before the linear maps that make them, when the sum
    is all that is read of it (code specialised for shapes: ``shapes`` holds what is known).

    ``A = G @ M`` and ``A = A + H * c``, with ``A`` read only by its sum over axis ``k``
    (as :func:`adgen.rules.known.sum_to` writes it, keeping ``k`` with size 1): when
    ``c`` does not vary along ``k`` and ``k`` is the rows axis of ``G``, the sum of each
    contribution is the contribution of the sum (``sum_k(G @ M) = sum_k(G) @ M``,
    ``sum_k(H * c) = sum_k(H) * c``), so the full ``A`` is never made -- the adjoint of
    a small array broadcast against a large one (GMM's means against the points) costs
    one reduction of the large cotangent. Sums in another order: derivatives agree up to
    rounding.

    >>> print(sum_before_linear(
    ...     "def f_vjp(g, h, m, c, out_bar):\\n"
    ...     "    a_bar = g @ m\\n"
    ...     "    a_bar = a_bar + h * c\\n"
    ...     "    b_bar = -np.reshape(np.einsum('abc->ac', a_bar), (2, 1, 3))\\n"
    ...     "    return (b_bar,)\\n",
    ...     {"a_bar": (2, 5, 3), "g": (2, 5, 3), "h": (2, 5, 3), "c": (2, 1, 3), "m": (3, 3)},
    ... ), end="")
    def f_vjp(g, h, m, c, out_bar):
        a_bar = np.reshape(np.einsum('abc->ac', g), (2, 1, 3)) @ m
        a_bar = a_bar + np.reshape(np.einsum('abc->ac', h), (2, 1, 3)) * c
        b_bar = -a_bar
        return (b_bar,)
    """
    if "np.einsum(" not in source:
        return source
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return source
    fn = tree.body[0]
    reads: dict[str, int] = {}
    binds: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            table = reads if isinstance(node.ctx, ast.Load) else binds
            table[node.id] = table.get(node.id, 0) + 1
    changed: list[ast.stmt] = []
    before: dict[int, list[ast.stmt]] = {}  # lines to put before a statement
    body = fn.body
    for k, stmt in enumerate(body):
        found = _reduced_sum(stmt, shapes)
        if found is None:
            continue
        name_, axes, call = found
        shape = shapes.get(name_)
        if shape is None or not axes or reads.get(name_) != binds.get(name_):
            continue  # read only by the contributions `A = A + E` and this sum
        contributions = [s for s in body[:k] if _binds_name(s, name_)]
        if len(contributions) != binds.get(name_) or not contributions:
            continue
        plans = [
            _linear_share(s, name_, i == 0, axes, shape, shapes)
            for i, s in enumerate(contributions)
        ]
        if any(p is None for p in plans):
            continue
        users: dict[str, list[int]] = {}
        for i, plan in enumerate(plans):
            assert plan is not None
            users.setdefault(plan[0], []).append(i)
        for full, indices in users.items():
            call_ = _sum_call(full, axes, shape)
            first, last = contributions[indices[0]], contributions[indices[-1]]
            between = body[body.index(first) : body.index(last)]
            if len(indices) > 1 and not any(_binds_name(s, full) for s in between):
                # one sum for several contributions: computed before the first
                fresh = f"{full}_summed"
                while fresh in reads or fresh in binds:
                    fresh += "_"
                binds[fresh] = 1
                line = ast.Assign(targets=[ast.Name(id=fresh, ctx=ast.Store())], value=call_)
                before.setdefault(id(first), []).append(ast.fix_missing_locations(line))
                for i in indices:
                    plans[i][1](ast.Name(id=fresh, ctx=ast.Load()))  # type: ignore[index]
            else:
                for i in indices:
                    plans[i][1](_sum_call(full, axes, shape))  # type: ignore[index]
        changed.extend(contributions)
        _replace_call(stmt, call, ast.Name(id=name_, ctx=ast.Load()))
        changed.append(stmt)
    if not changed:
        return source
    lines = source.split("\n")
    for stmt in sorted(changed, key=lambda s: s.lineno, reverse=True):
        indent = " " * stmt.col_offset
        new = [indent + text for s in before.get(id(stmt), []) for text in unparse(s).splitlines()]
        new += [indent + text for text in unparse(stmt).splitlines()]
        lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno] = new
    return "\n".join(lines)


def _sum_call(name_: str, axes: tuple[int, ...], shape: tuple[int, ...]) -> ast.expr:
    """``name_`` (of ``shape``) summed over ``axes``, keeping them (with size 1)."""
    from .rules.known import sum_to

    target = tuple(1 if i in axes else n for i, n in enumerate(shape))
    return sum_to(ast.Name(id=name_, ctx=ast.Load()), shape, target)


def _reduced_sum(
    stmt: ast.stmt, shapes: dict[str, tuple[int, ...]]
) -> tuple[str, tuple[int, ...], ast.Call] | None:
    """``b = [-]np.reshape(np.einsum('abc->ac', A), (n, 1, m))``, a sum over axes kept with
    size 1: (A, the axes, the reshape call)."""
    if not isinstance(stmt, ast.Assign):
        return None
    value = stmt.value
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        value = value.operand
    if not (
        isinstance(value, ast.Call)
        and ast.unparse(value.func) == "np.reshape"
        and len(value.args) == 2
        and isinstance(value.args[0], ast.Call)
        and ast.unparse(value.args[0].func) == "np.einsum"
        and len(value.args[0].args) == 2
        and isinstance(value.args[0].args[0], ast.Constant)
        and isinstance(value.args[0].args[1], ast.Name)
    ):
        return None
    spec, operand = value.args[0].args[0].value, value.args[0].args[1].id
    shape = shapes.get(operand)
    if not isinstance(spec, str) or "->" not in spec or shape is None:
        return None
    letters, kept = spec.split("->")
    axes = tuple(i for i, c in enumerate(letters) if c not in kept)
    try:
        target = ast.literal_eval(value.args[1])
    except ValueError:
        return None
    if len(letters) != len(shape) or target != tuple(
        1 if i in axes else n for i, n in enumerate(shape)
    ):
        return None
    return operand, axes, value


def _binds_name(stmt: ast.stmt, name_: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name_ and not isinstance(n.ctx, ast.Load)
        for n in ast.walk(stmt)
    )


def _linear_share(
    stmt: ast.stmt,
    name_: str,
    first: bool,
    axes: tuple[int, ...],
    shape: tuple[int, ...],
    shapes: dict[str, tuple[int, ...]],
) -> Any:
    """For ``A = E`` (first) or ``A = A + E`` (or ``- E``): the name of ``E``'s full-size
    operand and a function putting its sum in its place; None when the sum does not pass
    through ``E``."""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id == name_
    ):
        return None
    holder: Any = stmt
    field = "value"
    expr = stmt.value
    if not first:
        if not (
            isinstance(expr, ast.BinOp)
            and isinstance(expr.op, (ast.Add, ast.Sub))
            and isinstance(expr.left, ast.Name)
            and expr.left.id == name_
        ):
            return None
        holder, field, expr = expr, "right", expr.right
    if not isinstance(expr, ast.BinOp) or not isinstance(expr.op, (ast.Mult, ast.MatMult)):
        return None
    left, right = expr.left, expr.right
    if any(name_ in _names(side) for side in (left, right)):
        return None
    full: ast.expr
    if isinstance(expr.op, ast.MatMult):
        # sum over the rows of the left operand passes through `left @ right`
        if not (
            isinstance(left, ast.Name)
            and shapes.get(left.id) == shape
            and len(shape) >= 2
            and axes == (len(shape) - 2,)
        ):
            return None
        full, side = left, "left"
    else:
        full, other = (
            (left, right)
            if isinstance(left, ast.Name) and shapes.get(left.id) == shape
            else (right, left)
        )
        if not (isinstance(full, ast.Name) and shapes.get(full.id) == shape):
            return None
        if isinstance(other, ast.Constant) and type(other.value) in (int, float):
            small: tuple[int, ...] = ()  # a number: the same along every axis
        elif isinstance(other, ast.Name) and other.id in shapes:
            small = shapes[other.id]
        else:
            return None
        lead = len(shape) - len(small)
        if lead < 0 or any(a >= lead and small[a - lead] != 1 for a in axes):
            return None
        side = "left" if full is left else "right"

    def rewrite(replacement: ast.expr) -> None:
        setattr(expr, side, replacement)
        setattr(holder, field, expr)

    return full.id, rewrite


def _replace_call(stmt: ast.stmt, call: ast.Call, new: ast.expr) -> None:
    assert isinstance(stmt, ast.Assign)
    if stmt.value is call:
        stmt.value = new
    else:
        assert isinstance(stmt.value, ast.UnaryOp)
        stmt.value.operand = new


_PURE_NODES = (
    ast.Name,
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.IfExp,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.Tuple,
    ast.keyword,
)


def _pure(node: ast.expr) -> bool:
    """Is evaluating ``node`` free of effects (and only reads names), so that it may be
    evaluated later, past other pure assignments, with the same result? Which calls and
    attributes compute only is the rules' knowledge (:func:`adgen.rules.registry.pure_call`)."""
    from .rules.registry import pure_attribute, pure_call

    for sub in walk(node):
        if isinstance(sub, ast.Call):
            if not pure_call(sub):
                return False
        elif not isinstance(sub, _PURE_NODES):
            return False
        elif isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            return False
        elif isinstance(sub, ast.Attribute) and not pure_attribute(sub):
            return False  # another object's attribute may be a property that does things
    return True


class _Inline(Transformer):
    def __init__(self, name_: str, value: ast.expr) -> None:
        self.name, self.value = name_, value

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.value if node.id == self.name and isinstance(node.ctx, ast.Load) else node


def fuse_temporaries(source: str, width: int = 100) -> str:
    """Write a temporary read once back into the expression that reads it, the way the
    original line was written: ``s_2 = s_1 * y`` then ``s = s_2 + s_4`` is ``s = s_1 * y +
    s_4``. Only pure code moves (arithmetic, ``math`` and NumPy functions that compute, no
    ``out=``), only past plain assignments of pure values to other names, only within the
    code of one original line (no comment in between), and only while the line stays
    within ``width`` characters. Values are the same; Python just stores and loads fewer
    names.

    >>> print(fuse_temporaries(
    ...     "def f_vjp(x, y, z, out_bar):\\n"
    ...     "    # line 2: s = math.sin(x) * y + 0.5 * math.cos(z)\\n"
    ...     "    s_1 = math.sin(x)\\n"
    ...     "    s_2 = s_1 * y\\n"
    ...     "    s_3 = math.cos(z)\\n"
    ...     "    s_4 = 0.5 * s_3\\n"
    ...     "    s = s_2 + s_4\\n"
    ...     "    # line 3: return s * s_1\\n"
    ...     "    return (s * s_1, ())\\n"
    ... ), end="")
    def f_vjp(x, y, z, out_bar):
        # line 2: s = math.sin(x) * y + 0.5 * math.cos(z)
        s_1 = math.sin(x)
        s = s_1 * y + 0.5 * math.cos(z)
        # line 3: return s * s_1
        return (s * s_1, ())
    """
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return source
    fn = tree.body[0]
    lines = source.split("\n")
    loads: dict[str, int] = {}
    stores: dict[str, int] = {a.arg: 1 for a in fn.args.args}
    deletes: dict[str, list[ast.Delete]] = {}  # `del t` after its use frees it early
    for node in walk(fn):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Del):
                continue
            table = loads if isinstance(node.ctx, ast.Load) else stores
            table[node.id] = table.get(node.id, 0) + 1
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    deletes.setdefault(target.id, []).append(node)
    names = _NameCache()
    purity: dict[int, bool] = {}  # by statement (fusing pure into pure stays pure)
    # each line's length, at most: a fused value may gain a pair of parentheses
    length: dict[int, int] = {}

    def pure(stmt: ast.stmt, value: ast.expr) -> bool:
        known = purity.get(id(stmt))
        if known is None:
            known = purity[id(stmt)] = _pure(value)
        return known

    def size(stmt: ast.stmt) -> int:
        if stmt.lineno != stmt.end_lineno:
            return width + 1  # written over several lines: left alone
        return length.get(id(stmt), len(lines[stmt.lineno - 1]))

    dropped: set[int] = set()
    changed: dict[int, ast.stmt] = {}
    for block in _blocks(fn.body):
        for i, stmt in enumerate(block):
            assign = _simple_assign(stmt)
            if assign is None or id(stmt) in dropped:
                continue
            temp, value = assign
            if stores.get(temp) != 1 or loads.get(temp) != 1 or not pure(stmt, value):
                continue
            reads = set(names.of(stmt)[0])
            for j in range(i + 1, len(block)):
                later = block[j]
                if id(later) in dropped:
                    continue
                if any(
                    line.lstrip().startswith("#")
                    for line in lines[(block[j - 1].end_lineno or 0) : later.lineno - 1]
                ):
                    break  # the code of another original line
                later_loads, later_binds = names.of(later)
                if isinstance(later, ast.Delete):
                    if later_binds & reads:
                        break
                    continue
                use = _simple_assign(later)
                if use is None or not pure(later, use[1]):
                    break
                if temp in later_loads:
                    value_size = size(stmt) - stmt.col_offset - len(temp) - len(" = ")
                    fused_size = size(later) - len(temp) + value_size + 2
                    if fused_size <= width:
                        _Inline(temp, value).visit(later)
                        length[id(later)] = fused_size
                        dropped.add(id(stmt))
                        changed[id(later)] = later
                        names.table.pop(id(later), None)
                        for gone in deletes.get(temp, []):  # nothing left to free
                            rest = [t for t in gone.targets if not _is_name(t, temp)]
                            if rest:
                                gone.targets = rest
                                changed[id(gone)] = gone
                                names.table.pop(id(gone), None)
                            else:
                                dropped.add(id(gone))
                    break
                if later_binds & reads:
                    break
    if not dropped:
        return source
    edits = [s for s in _statements(fn.body) if id(s) in dropped or id(s) in changed]
    for stmt in sorted(edits, key=lambda s: s.lineno, reverse=True):
        new = [] if id(stmt) in dropped else [" " * stmt.col_offset + ast.unparse(stmt)]
        lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno] = new
    return "\n".join(lines)
