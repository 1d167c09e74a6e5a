"""Elementwise array statements of Numba code fused into explicit loops (``backend="numba"``).

Numba compiles each array statement (``t = a + alpha * (b - c)``) to a loop of its own that
allocates ``t``; on small arrays the allocation and Numba's broadcasting machinery cost more
than the arithmetic, and a time step of a few such statements many times what one loop costs.
This pass rewrites a run of consecutive elementwise statements over one-dimensional float64
arrays of one length into one ``for i in range(n)`` loop:

* each statement's value is computed per element, in a scalar (``t_i``), in the same order
  of operations as the statement (the same numbers);
* only the names read after the run get an array (``np.empty(n)``, filled in the loop); a
  temporary read only inside the run stays a scalar, and allocates nothing;
* slices with constant bounds (``u[2:]``, ``u[1:-1]``) are read through views bound before
  the loop;
* statements that only bind names (tape pushes and pops, views, scalars, helper calls) move
  before or after the loop where the order of reads and writes allows it, so a run is not cut
  by them; anything else (a write into an array, a branch, a loop) ends the run.

Which names hold such arrays, and which numbers, comes from a run of the NumPy code
(``kinds``: :func:`kind_of` of every value a name held). Nothing rests on that run alone: each
fused loop begins with ``nbrt.fusable`` (:mod:`adgen.backend.numba_runtime`), which Numba can
type only for one-dimensional float64 arrays and real numbers, and which raises
:data:`MISMATCH` when the arrays' lengths differ (broadcasting); then adgen compiles the code
unfused (:mod:`adgen.backend.numba_jit`). No statement that writes into an array is fused, so
no loop reads an element another iteration wrote.

>>> text = '''def f(x, a):
...     y = x * a
...     z = y + 1.0
...     return z
... '''
>>> print(fuse(text, {"x": ARRAY, "y": ARRAY, "z": ARRAY, "a": NUMBER}), end="")
def f(x, a):
    n = nbrt.fusable((x,), (a,))
    z = np.empty(n)
    for i in range(n):
        y_i = x[i] * a
        z_i = y_i + 1.0
        z[i] = z_i
    return z
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from adgen.backend.numba_code import Comments, _comments, _print, moved_comments
from adgen.names import Namer
from adgen.rules.runtime.core import Like

ARRAY = "array"  # a one-dimensional float64 array
ZERO = "zero"  # the number 0.0 (also what rt.zeros_like gives for a placeholder None)
NUMBER = "number"  # a real number (Python's or NumPy's)
# what nbrt.fusable raises when the arrays of a fused loop differ in length
MISMATCH = "adgen: the arrays of a fused loop differ in length"
# the NumPy functions of one number fused loops may call, per element
UNARY = frozenset({"tanh", "exp", "log", "sqrt", "sin", "cos", "negative", "abs"})
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div)
# calls that only compute a value (no write into an argument)
_PURE_CALLS = frozenset({"len", "range", "slice", "float", "int", "abs", "min", "max"})
_PURE_METHODS = frozenset({"copy", "sum", "reshape", "ravel", "astype", "transpose", "dot"})


def kind_of(value: Any) -> str | None:
    """The kind of ``value`` fused loops read (:data:`ARRAY`, :data:`NUMBER`), or ``None``.

    >>> kind_of(np.zeros(3)), kind_of(np.zeros((2, 2))), kind_of(2), kind_of(np.float32(1))
    ('array', None, 'number', 'number')
    >>> kind_of(np.zeros(3, dtype=np.float32)), kind_of(1j), kind_of(None)
    (None, None, None)
    """
    if isinstance(value, np.ndarray):
        return ARRAY if value.ndim == 1 and value.dtype == np.float64 else None
    if isinstance(value, Like):  # (what the NumPy code saves of an array read for its shape;
        # Numba's code saves the array itself)
        return ARRAY if len(value.shape) == 1 and value.dtype == np.float64 else None
    if isinstance(value, (bool, int, float, np.bool_, np.integer)):
        return NUMBER
    if isinstance(value, (np.float32, np.float64)):
        return NUMBER
    return None


def observed(value: Any) -> str | None:
    """What :func:`kinds` takes of one value a name held: its kind, :data:`ZERO` for ``0.0``."""
    if type(value) is float and value == 0.0:
        return ZERO
    return kind_of(value)


def kinds(seen: dict[str, set[str | None]]) -> dict[str, str]:
    """The kind of each name from the :func:`observed` kinds of its values: one kind; arrays
    and ``0.0`` are arrays (``rt.zeros_like`` of a placeholder ``None`` is ``0.0`` in NumPy's
    code, zeros in Numba's: if Numba's is a number after all, ``nbrt.fusable`` cannot be typed
    and the code runs unfused).

    >>> kinds({"a": {"array", "zero"}, "b": {"number", "zero"}, "c": {"array", "number"}})
    {'a': 'array', 'b': 'number'}
    """
    out: dict[str, str] = {}
    for name, values in seen.items():
        if values in ({ARRAY}, {ARRAY, ZERO}):
            out[name] = ARRAY
        elif values and values <= {NUMBER, ZERO}:
            out[name] = NUMBER
    return out


def fuse(text: str, kinds: dict[str, str]) -> str:
    """``text`` (one function rewritten for Numba) with its runs of elementwise statements over
    the arrays ``kinds`` names fused into loops; ``text`` itself where there are none."""
    tree = ast.parse(text)
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    comments = _comments(text, fn)
    loads = Counter(
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )
    namer = Namer(n.id for n in ast.walk(fn) if isinstance(n, ast.Name))
    namer.taken.update(a.arg for a in fn.args.args)
    fuser = _Fuser(kinds, loads, namer, comments)
    fn.body = fuser.block(fn.body)
    if not fuser.fused:
        return text
    return "\n".join(_print(fn, comments)) + "\n"


def _names(node: ast.AST, ctx: type) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


@dataclass
class _Fused:
    """One elementwise statement ``target = value`` of a run."""

    stmt: ast.Assign
    target: str
    reads: set[str]


@dataclass
class _Moved:
    """A statement that only binds names, moved before or after a run's loop."""

    stmt: ast.stmt
    reads: set[str]
    writes: set[str]


@dataclass
class _Run:
    before: list[_Moved] = field(default_factory=list)
    fused: list[_Fused] = field(default_factory=list)
    after: list[_Moved] = field(default_factory=list)

    def may_go_before(self, m: _Moved) -> bool:
        """Can ``m`` run before every fused statement and later-moved one it follows?"""
        others: list[tuple[set[str], set[str]]] = [({f.target}, f.reads) for f in self.fused]
        others += [(a.writes, a.reads) for a in self.after]
        return not any(w & (m.reads | m.writes) or r & m.writes for w, r in others)

    def takes(self, f: _Fused) -> bool:
        """Can ``f`` run before the statements moved after the loop that it follows?"""
        return not any(f.reads & m.writes or f.target in m.reads | m.writes for m in self.after)


def _element_names(block: list[ast.stmt]) -> set[str]:
    return {t.id for s in block for t in ast.walk(s) if isinstance(t, ast.Name)}


class _Fuser:
    """Finds the runs of each block and writes each as one loop."""

    def __init__(
        self,
        kinds: dict[str, str],
        loads: Counter[str],
        namer: Namer,
        comments: Comments,
    ) -> None:
        self.kinds = kinds
        self.loads = loads
        self.namer = namer
        self.comments = comments
        self.fused = 0

    def block(self, block: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        run = _Run()
        for stmt in block:
            for name in ("body", "orelse"):
                inner = getattr(stmt, name, None)
                if isinstance(inner, list) and inner and isinstance(stmt, ast.stmt):
                    setattr(stmt, name, self.block(inner))
            f = self._fusable(stmt, run)
            if f is not None:
                if not run.takes(f):
                    out += self._close(run)
                    run = _Run()
                    f = self._fusable(stmt, run)
                    assert f is not None
                run.fused.append(f)
                continue
            m = _movable(stmt)
            if m is not None and run.fused:
                (run.before if run.may_go_before(m) else run.after).append(m)
                continue
            out += self._close(run)
            run = _Run()
            out.append(stmt)
        out += self._close(run)
        return out

    # -- which statements ---------------------------------------------------------------------

    def _fusable(self, stmt: ast.stmt, run: _Run) -> _Fused | None:
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and self.kinds.get(stmt.targets[0].id) == ARRAY
        ):
            return None
        if isinstance(stmt.value, (ast.Name, ast.Subscript)):
            return None  # (another name for an array, or a view of one: no new array)
        current = {f.target for f in run.fused}
        if not self._elementwise(stmt.value, current) or not self._reads_array(stmt.value, current):
            return None
        return _Fused(stmt, stmt.targets[0].id, _names(stmt.value, ast.Load))

    def _elementwise(self, node: ast.expr, current: set[str]) -> bool:
        if isinstance(node, ast.Name):
            return node.id in current or self.kinds.get(node.id) in (ARRAY, NUMBER)
        if isinstance(node, ast.Constant):
            return type(node.value) in (int, float)
        if isinstance(node, ast.BinOp):
            return (
                isinstance(node.op, _OPS)
                and self._elementwise(node.left, current)
                and self._elementwise(node.right, current)
            )
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, (ast.USub, ast.UAdd)) and self._elementwise(
                node.operand, current
            )
        if isinstance(node, ast.Subscript):
            return self._view(node) is not None
        if isinstance(node, ast.Call):
            return (
                _unary(node) is not None
                and len(node.args) == 1
                and self._elementwise(node.args[0], current)
            )
        return False

    def _reads_array(self, node: ast.expr, current: set[str]) -> bool:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and (n.id in current or self.kinds.get(n.id) == ARRAY):
                if isinstance(n.ctx, ast.Load):
                    return True
        return False

    def _view(self, node: ast.Subscript) -> str | None:
        """``x[lo:hi]`` with constant bounds of an array ``x``: its text, else ``None``."""
        s = node.slice
        if not (
            isinstance(node.value, ast.Name)
            and self.kinds.get(node.value.id) == ARRAY
            and isinstance(s, ast.Slice)
            and s.step is None
            and all(b is None or _constant_int(b) for b in (s.lower, s.upper))
        ):
            return None
        return ast.unparse(node)

    # -- the loop -----------------------------------------------------------------------------

    def _close(self, run: _Run) -> list[ast.stmt]:
        if not run.fused:
            return [m.stmt for m in run.before]
        self.fused += 1
        return [
            *(m.stmt for m in run.before),
            *_Loop(self, run).statements(),
            *(m.stmt for m in run.after),
        ]


class _Loop:
    """One run written as a loop: views, the length check, the arrays, the loop, the names."""

    def __init__(self, fuser: _Fuser, run: _Run) -> None:
        self.fuser = fuser
        self.run = run
        self.namer = fuser.namer
        self.index = self.namer.claim("i")
        self.views: dict[str, str] = {}  # text of x[lo:hi] -> name of its view
        self.view_stmts: list[ast.stmt] = []
        self.arrays: list[str] = []  # array names read per element (views among them)
        self.numbers: list[str] = []
        self.scalar: dict[str, str] = {}  # fused target -> its element's name in the loop

    def statements(self) -> list[ast.stmt]:
        body: list[ast.stmt] = []
        first_write: dict[str, int] = {}
        old_read: set[str] = set()  # targets whose earlier value the run reads
        inner_reads: Counter[str] = Counter()
        for k, f in enumerate(self.run.fused):
            for n in ast.walk(f.stmt.value):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                    if n.id in first_write:
                        inner_reads[n.id] += 1
                    else:
                        old_read.add(n.id)
            value = self._element(f.stmt.value)
            first_write.setdefault(f.target, k)
            name = self.scalar.get(f.target) or self.namer.claim(f"{f.target}_i")
            self.scalar[f.target] = name
            assign = ast.Assign([ast.Name(name, ast.Store())], value, lineno=0)
            moved_comments(self.fuser.comments, f.stmt, assign)
            body.append(assign)
        live = [
            t
            for t in first_write
            if self.fuser.loads[t] > inner_reads[t] or any(t in m.reads for m in self.run.after)
        ]
        count = self.namer.claim("n")
        arrays = ", ".join(self.arrays) + ("," if len(self.arrays) == 1 else "")
        numbers = ", ".join(self.numbers) + ("," if len(self.numbers) == 1 else "")
        head = [*self.view_stmts, _stmt(f"{count} = nbrt.fusable(({arrays}), ({numbers}))")]
        tail: list[ast.stmt] = []
        for t in live:
            buffer = self.namer.claim(f"{t}_new") if t in old_read else t
            head.append(_stmt(f"{buffer} = np.empty({count})"))
            body.append(_stmt(f"{buffer}[{self.index}] = {self.scalar[t]}"))
            if buffer != t:
                tail.append(_stmt(f"{t} = {buffer}"))
        loop = ast.For(
            ast.Name(self.index, ast.Store()),
            ast.parse(f"range({count})", mode="eval").body,
            body,
            [],
            lineno=0,
        )
        return [*head, loop, *tail]

    def _element(self, node: ast.expr) -> ast.expr:
        """``node``'s value at element ``i``."""
        if isinstance(node, ast.Name):
            if node.id in self.scalar:
                return ast.Name(self.scalar[node.id], ast.Load())
            if self.fuser.kinds.get(node.id) == ARRAY:
                return self._at(node.id)
            if node.id not in self.numbers:
                self.numbers.append(node.id)
            return node
        if isinstance(node, ast.Subscript):
            text = ast.unparse(node)
            if text not in self.views:
                assert isinstance(node.value, ast.Name)
                view = self.namer.claim(f"{node.value.id}_{_slice_name(node.slice)}")
                self.views[text] = view
                self.view_stmts.append(_stmt(f"{view} = {text}"))
            return self._at(self.views[text])
        if isinstance(node, ast.BinOp):
            return ast.BinOp(self._element(node.left), node.op, self._element(node.right))
        if isinstance(node, ast.UnaryOp):
            return ast.UnaryOp(node.op, self._element(node.operand))
        if isinstance(node, ast.Call):
            return ast.Call(node.func, [self._element(node.args[0])], [])
        return node

    def _at(self, array: str) -> ast.expr:
        if array not in self.arrays:
            self.arrays.append(array)
        return ast.Subscript(ast.Name(array, ast.Load()), ast.Name(self.index, ast.Load()))


def _stmt(text: str) -> ast.stmt:
    return ast.parse(text).body[0]


def _constant_int(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _slice_name(s: ast.expr) -> str:
    """``1:-1`` -> ``1_m1`` (a view's name)."""
    assert isinstance(s, ast.Slice)
    parts = ["" if b is None else ast.unparse(b).replace("-", "m") for b in (s.lower, s.upper)]
    return "_".join(p or "e" for p in parts)


def _unary(node: ast.Call) -> str | None:
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "np"
        and func.attr in UNARY
        and not node.keywords
    ):
        return func.attr
    return None


def _pure(node: ast.expr) -> bool:
    """Does evaluating ``node`` only compute a value (no write into anything)?"""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            func = n.func
            if isinstance(func, ast.Name) and func.id in _PURE_CALLS:
                continue
            if isinstance(func, ast.Attribute) and func.attr in _PURE_METHODS:
                continue
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in ("np", "nbrt", "math")
            ):
                continue
            return False
        if isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda)):
            return False
    return True


def _bound_names(target: ast.expr) -> bool:
    """Is ``target`` a name, or a tuple of them (no element or attribute written)?"""
    if isinstance(target, ast.Tuple):
        return all(_bound_names(e) for e in target.elts)
    return isinstance(target, ast.Name)


def _movable(stmt: ast.stmt) -> _Moved | None:
    """``stmt`` as a statement that only binds names (or pushes or pops a tape)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "append"
            and isinstance(func.value, ast.Name)
            and func.value.id.startswith("tape_")
            and len(call.args) == 1
            and _pure(call.args[0])
        ):
            tape = func.value.id
            return _Moved(stmt, _names(call.args[0], ast.Load) | {tape}, {tape})
        return None
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    target = stmt.targets[0]
    if not _bound_names(target):
        return None
    writes = _names(target, ast.Store)
    value = stmt.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "pop"
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id.startswith("tape_")
        and not value.args
    ):
        tape = value.func.value.id
        return _Moved(stmt, {tape}, writes | {tape})
    if not _pure(value):
        return None
    return _Moved(stmt, _names(value, ast.Load), writes)
