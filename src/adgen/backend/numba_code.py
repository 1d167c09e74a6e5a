"""Generated derivative code rewritten into a form Numba's ``njit`` compiles (``backend="numba"``).

The NumPy code adgen generates (:mod:`adgen.backend.emit`) is plain Python that leans on the
interpreter: one ``stack`` list holds every saved value whatever its type, loops run
backwards over ``reversed(...)``, names are freed with ``del`` and ``rt.*`` helpers dispatch on
the types of their arguments when they run. This module rewrites that source, statement by
statement, into code Numba types once:

* one tape per saved name (``tape_x.append(x)`` ... ``x = tape_x.pop()``): each tape holds
  values of one type, and the pushes and pops of one name keep the whole stack's order;
* ``for t in reversed(r)`` (and ``rt.backwards(r)``) as a loop over indices, ``t`` read from
  the range's start and step (or ``r[k]`` for a sequence);
* ``del`` statements dropped (Numba frees values itself);
* ``rt.<helper>(...)`` as ``nbrt.<helper>(...)``, the helper's Numba form, which picks its
  code from its arguments' types when Numba compiles it (:mod:`adgen.backend.numba_runtime`);
* outside numbers inlined as constants (so the text, and a cache keyed on it, changes with
  them).

``None`` placeholders (``a = b = None`` at the top: names first bound in a loop or branch,
saved on a tape before their first value) stay ``None`` until the code runs once: then
:meth:`NumbaSource.typed` gives each one an empty value of the type the name holds (``0.0``,
``np.empty((0, 0), dtype=np.float64)``), so Numba types the name, and the tapes that save it,
as that one type (the placeholder itself is never read). Whatever this module
cannot rewrite raises :class:`NotForNumba` with the line of the generated code, and adgen runs
the NumPy code instead (:mod:`adgen.backend.numba_jit`). The comments quoting the user's lines
are kept, so the rewritten code reads like the original and its lines can be named.

>>> src = '''def f_vjp(x, n, out_bar):
...     stack = []
...     # line 2: for _ in range(n):
...     loop_1 = range(n)
...     for _ in loop_1:
...         stack.append(x)
...         x = x * 2.0
...     x_bar = out_bar
...     for _ in reversed(loop_1):
...         x = stack.pop()
...         x_bar = x_bar * 2.0
...     del stack
...     return (x, (x_bar,))
... '''
>>> print(numba_source(src, {}, frozenset()).text, end="")
def f_vjp(x, n, out_bar):
    tape_x = []
    # line 2: for _ in range(n):
    loop_1 = range(n)
    for _ in loop_1:
        tape_x.append(x)
        x = x * 2.0
    x_bar = out_bar
    for loop_1_k in range(len(loop_1) - 1, -1, -1):
        _ = loop_1.start + loop_1_k * loop_1.step
        x = tape_x.pop()
        x_bar = x_bar * 2.0
    return (x, (x_bar,))
"""

from __future__ import annotations

import ast
import re
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from adgen.backend.numba_tapes import dead_restores
from adgen.names import Namer

# the modules Numba code may name (as generated code spells them)
MODULES = {"np": "numpy", "math": "math"}
# the name the helpers' Numba forms are bound to in Numba code
HELPERS = "nbrt"
_STACK = re.compile(r"^stack(_\d+)?$")
_SAVED = re.compile(r"_saved(_\d+)?$")
_COMMENT = re.compile(r"^\s*# (?:adjoint of )?line (.+?): ")


class NotForNumba(Exception):
    """Why generated code cannot run under Numba, and the line of that code (1-based)."""

    def __init__(self, why: str, line: int | None = None) -> None:
        super().__init__(why)
        self.why = why
        self.line = line


@dataclass
class NumbaSource:
    """The rewritten function: its text (comments kept), and the names its first statement
    binds to ``None`` (``placeholders``, at line ``placeholder_line`` of ``text``, 1-based)."""

    name: str
    text: str
    placeholders: tuple[str, ...] = ()
    placeholder_line: int = 0

    def typed(self, samples: dict[str, Any]) -> NumbaSource:
        """The text with each placeholder bound to an empty value of its sample's type (the
        value the name held when the NumPy code returned); names without one stay ``None``.

        >>> text = "def f(x):|    a = b = c = None|    return x|".replace("|", chr(10))
        >>> src = NumbaSource("f", text, ("a", "b", "c"), 2)
        >>> print(src.typed({"a": np.ones((2, 3)), "b": (1.5, 2), "c": None}).text, end="")
        def f(x):
            a = np.empty((0, 0), dtype=np.float64)
            b = (0.0, 0)
            c = None
            return x
        """
        if not self.placeholders:
            return self
        groups: dict[str, list[str]] = {}
        for name in self.placeholders:
            groups.setdefault(empty_like(samples.get(name)) or "None", []).append(name)
        rows = self.text.split("\n")
        pad = rows[self.placeholder_line - 1][: -len(rows[self.placeholder_line - 1].lstrip())]
        made = [pad + " = ".join([*names, value]) for value, names in groups.items()]
        rows[self.placeholder_line - 1 : self.placeholder_line] = made
        return NumbaSource(self.name, "\n".join(rows))


def empty_like(value: Any) -> str | None:
    """An expression Numba types as ``value``'s type (an empty array of its dtype and rank,
    a zero of its scalar type), or ``None`` where there is none.

    >>> empty_like(np.zeros(3, dtype=np.float32)), empty_like(2), empty_like(np.float32(1))
    ('np.empty((0,), dtype=np.float32)', '0', 'np.float32(0)')
    >>> empty_like((1.0, range(3))), empty_like("text")
    ('(0.0, range(0))', None)
    """
    if isinstance(value, (bool, np.bool_)):
        return "False"
    if isinstance(value, np.ndarray):
        kind = value.dtype
        if kind.kind not in "biufc" or not kind.isnative:
            return None
        dtype = "np.bool_" if kind.kind == "b" else f"np.{kind.name}"
        shape = ", ".join(["0"] * value.ndim) + ("," if value.ndim == 1 else "")
        return f"np.empty(({shape}), dtype={dtype})"
    if isinstance(value, np.generic):
        if value.dtype.kind not in "iufc":
            return None
        return f"np.{value.dtype.name}(0)"
    if type(value) in (int, float, complex):
        return {int: "0", float: "0.0", complex: "0j"}[type(value)]
    if isinstance(value, range):
        return "range(0)"
    if type(value) is tuple:
        items = [empty_like(v) for v in value]
        if any(item is None for item in items):
            return None
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"  # type: ignore[arg-type]
    return None


def numba_source(
    source: str, free: dict[str, Any], helpers: frozenset[str], label: str = ""
) -> NumbaSource:
    """``source`` (one generated function) rewritten for Numba; ``free`` holds the outside
    values the code may read, ``helpers`` the ``rt`` helpers that have a Numba form."""
    tree = ast.parse(source)
    functions = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    if len(functions) != 1 or len(tree.body) != 1:
        raise NotForNumba("the code is more than one function")
    fn = functions[0]
    comments = _comments(source, fn)
    namer = Namer(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    namer.taken.update(a.arg for a in fn.args.args)
    _Checker(fn).visit(fn)
    fn.body = _without_del(fn.body)
    tapes = _tapes(fn, namer)
    _Loops(fn, namer).visit(fn)
    _Outside(fn, free, helpers).visit(fn)
    _Slices(comments).visit(fn)
    dead_restores(fn, tapes, comments)
    fn.body = _added_in_place(fn.body)
    ast.fix_missing_locations(fn)
    lines = _print(fn, comments)
    held = _placeholders(fn)
    names: tuple[str, ...] = ()
    at = 0
    if held is not None:
        row = "    " + ast.unparse(held[1])
        at = next((i + 1 for i, text in enumerate(lines) if text == row), 0)
        names = held[0] if at else ()
    return NumbaSource(fn.name, "\n".join(lines) + "\n", names, at)


def _placeholders(fn: ast.FunctionDef) -> tuple[tuple[str, ...], ast.stmt] | None:
    """The names the function's first ``a = b = None`` statement binds, and that statement."""
    for stmt in fn.body:
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Constant)
            and stmt.value.value is None
            and all(isinstance(t, ast.Name) for t in stmt.targets)
        ):
            return tuple(t.id for t in stmt.targets), stmt  # type: ignore[attr-defined]
    return None


def user_line(text: str, line: int) -> str | None:
    """The label of the user's line (``"12"``) whose code stands at ``line`` of ``text``."""
    rows = text.splitlines()
    for row in reversed(rows[: max(line, 0)]):
        match = _COMMENT.match(row)
        if match is not None:
            return match.group(1)
    return None


# -- comments ------------------------------------------------------------------------------------


# id of a statement -> the statement (held, so no other node takes its id) and the comment
# lines right above it
Comments = dict[int, tuple[ast.stmt, list[str]]]


def _comments(source: str, fn: ast.FunctionDef) -> Comments:
    """id of a statement -> the statement and the comment lines right above it (stripped)."""
    rows = source.split("\n")
    out: Comments = {}
    for node in ast.walk(fn):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for stmt in block:
                above: list[str] = []
                at = stmt.lineno - 2
                while at >= 0 and rows[at].strip().startswith("#"):
                    above.insert(0, rows[at].strip())
                    at -= 1
                if above:
                    out[id(stmt)] = (stmt, above)
    return out


def moved_comments(comments: Comments, old: ast.stmt, new: ast.stmt) -> None:
    """Give ``new`` the comments above ``old`` (which it stands for)."""
    entry = comments.get(id(old))
    if entry is not None and entry[0] is old:
        comments[id(new)] = (new, entry[1])


def _print(fn: ast.FunctionDef, comments: Comments) -> list[str]:
    lines = [f"def {fn.name}({ast.unparse(fn.args)}):"]
    _print_block(fn.body, 1, comments, lines)
    return lines


def _print_block(block: list[ast.stmt], depth: int, comments: Comments, lines: list[str]) -> None:
    pad = "    " * depth
    for stmt in block:
        entry = comments.get(id(stmt))
        if entry is not None and entry[0] is stmt:
            lines.extend(pad + c for c in entry[1])
        if isinstance(stmt, ast.For):
            lines.append(f"{pad}for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)}:")
        elif isinstance(stmt, ast.While):
            lines.append(f"{pad}while {ast.unparse(stmt.test)}:")
        elif isinstance(stmt, ast.If):
            lines.append(f"{pad}if {ast.unparse(stmt.test)}:")
        else:
            lines.extend(pad + row for row in ast.unparse(stmt).split("\n"))
            continue
        _print_block(stmt.body or [ast.Pass()], depth + 1, comments, lines)
        if stmt.orelse:
            lines.append(f"{pad}else:")
            _print_block(stmt.orelse, depth + 1, comments, lines)


# -- the rewrites ----------------------------------------------------------------------------------


class _Checker(ast.NodeVisitor):
    """Forms Numba has no counterpart of at all."""

    def __init__(self, fn: ast.FunctionDef) -> None:
        self.fn = fn

    def generic_visit(self, node: ast.AST) -> None:
        if node is not self.fn and isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
        ):
            raise NotForNumba("a function defined inside the code", getattr(node, "lineno", None))
        if isinstance(node, (ast.Try, ast.With, ast.Raise, ast.Global, ast.Nonlocal)):
            what = type(node).__name__.lower()
            raise NotForNumba(f"a `{what}` statement", getattr(node, "lineno", None))
        if isinstance(node, (ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)):
            raise NotForNumba("a comprehension", getattr(node, "lineno", None))
        if isinstance(node, (ast.Dict, ast.Set, ast.Starred, ast.JoinedStr)):
            raise NotForNumba(
                f"a {type(node).__name__.lower()} expression", getattr(node, "lineno", None)
            )
        super().generic_visit(node)


def _without_del(block: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in block:
        if isinstance(stmt, ast.Delete):
            continue
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                kept = _without_del(inner)
                setattr(stmt, field, kept or ([ast.Pass()] if field == "body" else []))
        out.append(stmt)
    return out


def _key(node: ast.expr, line: int) -> str:
    """What a push saves (``x``, ``y[1:]``, ``(a,b)``): the name or region it restores."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        return ast.unparse(node)
    if isinstance(node, ast.Call) and ast.unparse(node.func) in ("rt.saved_shape", "rt.copy_of"):
        if len(node.args) == 1 and not node.keywords:
            return _key(node.args[0], line)
    if isinstance(node, ast.Tuple):
        return "(" + ",".join(_key(e, line) for e in node.elts) + ")"
    raise NotForNumba(f"a saved value of the form `{ast.unparse(node)}`", line)


def _pop_key(node: ast.expr, line: int) -> str:
    if isinstance(node, ast.Tuple):
        parts = []
        for e in node.elts:
            if not isinstance(e, ast.Name):
                raise NotForNumba(f"values restored into `{ast.unparse(node)}`", line)
            parts.append(_SAVED.sub("", e.id))
        return "(" + ",".join(parts) + ")"
    if isinstance(node, (ast.Name, ast.Subscript)):
        return ast.unparse(node)
    raise NotForNumba(f"values restored into `{ast.unparse(node)}`", line)


def _tapes(fn: ast.FunctionDef, namer: Namer) -> set[str]:
    """The one ``stack`` list as one list per saved name (or region); the lists' names."""
    first = fn.body[0] if fn.body else None
    if not (
        isinstance(first, ast.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0], ast.Name)
        and _STACK.match(first.targets[0].id)
        and isinstance(first.value, ast.List)
        and not first.value.elts
    ):
        return set()
    stack = first.targets[0].id
    tapes: dict[str, str] = {}
    pushed: set[str] = set()
    popped: set[str] = set()

    def tape(key: str) -> str:
        if key not in tapes:
            base = re.sub(r"\W+", "_", key).strip("_")[:24].strip("_") or "saved"
            tapes[key] = namer.claim(f"tape_{base}")
        return tapes[key]

    class Rewrite(ast.NodeTransformer):
        def visit_Expr(self, node: ast.Expr) -> Any:
            call = node.value
            if (
                isinstance(call, ast.Call)
                and ast.unparse(call.func) == f"{stack}.append"
                and len(call.args) == 1
            ):
                key = _key(call.args[0], node.lineno)
                pushed.add(key)
                call.func = ast.Attribute(ast.Name(tape(key), ast.Load()), "append", ast.Load())
                return node
            return self.generic_visit(node)

        def visit_Assign(self, node: ast.Assign) -> Any:
            if ast.unparse(node.value) == f"{stack}.pop()" and len(node.targets) == 1:
                key = _pop_key(node.targets[0], node.lineno)
                popped.add(key)
                node.value = ast.Call(
                    ast.Attribute(ast.Name(tape(key), ast.Load()), "pop", ast.Load()), [], []
                )
                return node
            return self.generic_visit(node)

        def visit_Name(self, node: ast.Name) -> Any:
            if node.id == stack:
                raise NotForNumba(f"the tape `{stack}` read otherwise than by append and pop")
            return node

    body = Rewrite().visit(ast.Module(fn.body[1:], []))
    if pushed != popped:
        odd = sorted(pushed ^ popped)[0]
        raise NotForNumba(f"values saved and restored in different forms (`{odd}`)")
    made: list[ast.stmt] = [
        ast.Assign([ast.Name(t, ast.Store())], ast.List([], ast.Load()), lineno=0)
        for t in tapes.values()
    ]
    fn.body = made + body.body
    return set(tapes.values())


class _Loops(ast.NodeTransformer):
    """``for t in reversed(r)`` / ``rt.backwards(r)`` as a loop over indices."""

    def __init__(self, fn: ast.FunctionDef, namer: Namer) -> None:
        self.namer = namer
        self.ranges = {
            s.targets[0].id
            for s in ast.walk(fn)
            if isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and isinstance(s.value, ast.Call)
            and ast.unparse(s.value.func) == "range"
        }

    def visit_For(self, node: ast.For) -> Any:
        it = node.iter
        backwards = (
            isinstance(it, ast.Call)
            and ast.unparse(it.func) in ("reversed", "rt.backwards")
            and len(it.args) == 1
        )
        node.body = _flat([self.visit(s) for s in node.body])
        node.orelse = _flat([self.visit(s) for s in node.orelse])
        if not backwards:
            node.iter = self.visit(node.iter)
            return node
        assert isinstance(it, ast.Call)
        before: list[ast.stmt] = []
        seq = it.args[0]
        is_range = isinstance(seq, ast.Call) and ast.unparse(seq.func) == "range"
        if not isinstance(seq, ast.Name):
            held = self.namer.claim("loop_seq")
            before.append(ast.Assign([ast.Name(held, ast.Store())], seq, lineno=node.lineno))
            seq = ast.Name(held, ast.Load())
        is_range = is_range or seq.id in self.ranges
        k = self.namer.claim(f"{seq.id}_k")
        item = (
            ast.parse(f"{seq.id}.start + {k} * {seq.id}.step", mode="eval").body
            if is_range
            else ast.Subscript(ast.Name(seq.id, ast.Load()), ast.Name(k, ast.Load()), ast.Load())
        )
        node.iter = ast.parse(f"range(len({seq.id}) - 1, -1, -1)", mode="eval").body
        head = ast.Assign([node.target], item, lineno=node.lineno)
        node.target = ast.Name(k, ast.Store())
        node.body = [head, *node.body]
        return [*before, node] if before else node

    def visit_Call(self, node: ast.Call) -> Any:
        self.generic_visit(node)
        if ast.unparse(node.func) in ("reversed", "rt.backwards"):
            raise NotForNumba(f"`{ast.unparse(node)}` outside a loop's head", node.lineno)
        return node


def _flat(items: list[Any]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for item in items:
        out.extend(item if isinstance(item, list) else [item])
    return out


class _Outside(ast.NodeTransformer):
    """Names from outside the function: modules Numba knows, helpers with a Numba form,
    numbers (inlined); anything else is why the code stays NumPy's."""

    def __init__(self, fn: ast.FunctionDef, free: dict[str, Any], helpers: frozenset[str]) -> None:
        self.free = free
        self.helpers = helpers
        self.local = {a.arg for a in fn.args.args} | {
            n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        self.line = fn.lineno

    def visit(self, node: ast.AST) -> Any:
        self.line = getattr(node, "lineno", self.line) or self.line
        return super().visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        if ast.unparse(node) == "np.random" and "np" not in self.local:
            # (Numba's np.random draws from its own generator, not NumPy's: other numbers)
            raise NotForNumba("a random draw of `np.random`", self.line)
        if isinstance(node.value, ast.Name) and node.value.id == "rt" and "rt" not in self.local:
            if node.attr not in self.helpers:
                raise NotForNumba(f"`rt.{node.attr}` (no Numba form of it yet)", self.line)
            node.value = ast.Name(HELPERS, ast.Load())
            return node
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> Any:
        name = node.id
        if name in self.local or name in MODULES or isinstance(node.ctx, ast.Store):
            return node
        if name in _BUILTINS:
            return node
        if name not in self.free:
            raise NotForNumba(f"the outside name `{name}`", self.line)
        value = self.free[name]
        if isinstance(value, bool):
            return ast.copy_location(ast.Constant(value), node)
        if isinstance(value, (int, float)):  # (NumPy's scalars as Python's: the same value)
            number = int(value) if isinstance(value, int) else float(value)
            return ast.copy_location(ast.Constant(number), node)
        if isinstance(value, types.ModuleType):
            raise NotForNumba(
                f"a call into `{value.__name__}`, which Numba cannot compile", self.line
            )
        raise NotForNumba(
            f"the outside value `{name}` (a {type(value).__name__}), which Numba code cannot read",
            self.line,
        )


class _Slices(ast.NodeTransformer):
    """Writes into a slice (``a[lo:hi] = v``) and cotangents added at a slice (``y +
    nbrt.getitem_vjp(g, x, idx)``) as calls of helpers with loops for one-dimensional float64
    arrays (:mod:`adgen.backend.numba_runtime`: ``setslice``, ``add_at``); other arrays get
    Numba's own setitem and sum there."""

    def __init__(self, comments: Comments) -> None:
        self.comments = comments

    def visit_Assign(self, node: ast.Assign) -> Any:
        self.generic_visit(node)
        target = node.targets[0]
        if (
            len(node.targets) == 1
            and isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and isinstance(target.slice, ast.Slice)
        ):
            s = target.slice
            bounds = [b if b is not None else ast.Constant(None) for b in (s.lower, s.upper)]
            if s.step is not None:
                bounds.append(s.step)
            index = ast.Call(ast.Name("slice", ast.Load()), bounds, [])
            array = ast.Name(target.value.id, ast.Load())
            call = ast.Call(_helper("setslice"), [array, index, node.value], [])
            made = ast.copy_location(ast.Expr(call), node)
            moved_comments(self.comments, node, made)
            return made
        return node

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        self.generic_visit(node)
        right = node.right
        if (
            isinstance(node.op, ast.Add)
            and isinstance(right, ast.Call)
            and ast.unparse(right.func) == f"{HELPERS}.getitem_vjp"
            and len(right.args) == 3
            and not right.keywords
        ):
            return ast.copy_location(
                ast.Call(_helper("add_at"), [node.left, *right.args], []), node
            )
        return node


def _added_in_place(block: list[ast.stmt]) -> list[ast.stmt]:
    """``y = nbrt.add_at(y, g, x, idx)`` as ``nbrt.add_into`` (``g`` added into ``y`` itself)
    where ``y`` holds an array made since in this block (by ``getitem_vjp`` or ``add_at``)
    that nothing has read since: no other name can hold it, so nothing else sees the write."""
    fresh: set[str] = set()
    for stmt in block:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                setattr(stmt, field, _added_in_place(inner))
        if not isinstance(stmt, (ast.Assign, ast.Expr)):
            fresh.clear()
            continue
        value = stmt.value
        made = (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(value, ast.Call)
            and ast.unparse(value.func) in (f"{HELPERS}.add_at", f"{HELPERS}.getitem_vjp")
        )
        if made:
            assert isinstance(stmt, ast.Assign) and isinstance(value, ast.Call)
            target = stmt.targets[0].id  # type: ignore[attr-defined]
            first = value.args[0] if value.args else None
            others = {n.id for a in value.args[1:] for n in ast.walk(a) if isinstance(n, ast.Name)}
            if (
                ast.unparse(value.func) == f"{HELPERS}.add_at"
                and isinstance(first, ast.Name)
                and first.id == target
                and target in fresh
                and target not in others
            ):
                value.func = _helper("add_into")
                continue
        fresh -= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        if made:
            fresh.add(stmt.targets[0].id)  # type: ignore[union-attr]
    return block


def _helper(name: str) -> ast.expr:
    return ast.Attribute(ast.Name(HELPERS, ast.Load()), name, ast.Load())


_BUILTINS = {
    "range", "len", "abs", "min", "max", "float", "int", "bool", "slice", "round", "complex",
    "tuple", "sum", "True", "False", "None", "isinstance", "ZeroDivisionError", "ValueError",
}  # fmt: skip
