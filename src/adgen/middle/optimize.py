"""The IR optimizer: sound rewrites of a lowered function before it is differentiated.

Every pass keeps the function's values bit for bit (IEEE floats, NaNs, array shapes and
dtypes). Derivatives are the same up to rounding: where one value now feeds several uses
(common subexpressions, self-products), its adjoint sums their contributions before the
chain rule applies, ``(a + b) * c`` rather than ``a * c + b * c``:

* **constant folding** -- an operation on Python numbers only (literals and globals that
  were numbers when the function was read) is computed once, when the function is
  transformed; only results that are Python numbers are folded (never a NumPy scalar,
  whose arithmetic differs from a float's);
* **common-subexpression elimination** -- an operation repeated on the same values reuses
  the first result (only where that result dominates the repeat and neither it nor its
  operands can have changed in between);
* **copy propagation** -- a name bound once to a copy of another is replaced by it;
* **loop-invariant code motion** -- an operation in a ``for`` loop's body that reads
  nothing the loop changes is computed once before the loop, under ``if len(r) > 0:`` (so a
  loop that runs zero times still computes nothing); reverse mode then neither recomputes
  nor saves it per iteration, and adds its derivative up once;
* **self-products** -- ``x * x`` is marked as a square: the primal stays ``x * x``, but its
  derivative is ``dx * x * 2.0`` (one product fewer; bit for bit ``dx * x + x * dx``);
* **dead-code elimination** -- an operation whose result nothing reads is dropped, and so
  is one of the function's own block whose names that block binds again before reading
  them (an inlined helper's ``exog = None`` default, then ``exog = self.exog``);
* **shifts without derivative** -- the maximum that only shifts a log-sum-exp, a
  log-softmax or a softmax carries no derivative (:mod:`adgen.middle.shifts`: the terms
  reaching it cancel exactly).

Functions that write into arrays or lists (``y[i] = ...``, ``xs.append``, or a call adgen
runs as written without knowing it only reads its arguments) are left as they are apart
from constant folding, self-products and dead-code elimination: names there may alias one
another.

Only operations known to be pure are touched: a differentiable NumPy/Python primitive
registered by adgen (not the user's own rules, calls or random samplers, nor calls adgen
runs as written: ``print(x)`` prints once per run, in order).

>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> import numpy as np
>>> def f(x, y):
...     a = np.sin(x) * y
...     b = np.sin(x) * y
...     unused = np.cos(x)
...     scale = (1.0 + 2.0) * 0.5
...     return a * b * scale + x * x
>>> function = lower(parse_function(f))
>>> print(function)  # doctest: +NORMALIZE_WHITESPACE
def f(x, y):             # <doctest adgen.middle.optimize[3]>:1
    a_1 = np.sin(x)      # line 2
    a = a_1 * y          # line 2
    b_1 = np.sin(x)      # line 3
    b = b_1 * y          # line 3
    unused = np.cos(x)   # line 4
    scale_1 = 1.0 + 2.0  # line 5
    scale = scale_1 * 0.5  # line 5
    out_1 = a * b        # line 6
    out_2 = out_1 * scale  # line 6
    out_3 = x * x        # line 6
    out = out_2 + out_3  # line 6
    return out           # line 6
>>> print(optimize(function))  # doctest: +NORMALIZE_WHITESPACE
def f(x, y):           # <doctest adgen.middle.optimize[3]>:1
    a_1 = np.sin(x)    # line 2
    a = a_1 * y        # line 2
    out_1 = a * a      # line 6
    out_2 = out_1 * 1.5  # line 6
    out_3 = x * x      # line 6
    out = out_2 + out_3  # line 6
    return out         # line 6
"""

from __future__ import annotations

import ast
import copy
import math
import operator
import warnings
from typing import Any

from adgen import ir
from adgen.middle.dead_arrays import MAKERS, drop_dead_arrays
from adgen.middle.shifts import cut_shifts
from adgen.rules import registry
from adgen.rules.registry import Primitive

# writes into arrays or lists: with them, two names may hold one object
_MUTATING = frozenset({"setitem", "append", "pop"})


def optimize(fn: ir.Function) -> ir.Function:
    """A copy of ``fn`` with the passes above applied (``fn`` itself is not changed)."""
    out = copy.copy(fn)
    out.body = _copy_block(fn.body)
    out.user_names = set(fn.user_names)  # names made here are added (derivative code avoids them)
    mutating = any(isinstance(s, ir.Assign) and _may_write(s.prim) for s in out.statements())
    _fold_constants(out)
    if not mutating:
        _hoist_invariants(out)
        renames = _common_subexpressions(out)
        _rename(out, renames)
    _self_products(out)  # (one statement's operands: the same object, whatever aliases it)
    _dead_code(out)
    cut_shifts(out)
    return out


def _copy_block(block: list[ir.Stmt]) -> list[ir.Stmt]:
    """A copy of a block the passes may change: new statements and blocks; atoms (immutable)
    and primitives are shared."""
    out: list[ir.Stmt] = []
    for stmt in block:
        new = copy.copy(stmt)
        if isinstance(new, ir.If):
            new.body, new.orelse = _copy_block(new.body), _copy_block(new.orelse)
        elif isinstance(new, ir.For):
            new.body = _copy_block(new.body)
        elif isinstance(new, ir.While):
            new.test_body, new.body = _copy_block(new.test_body), _copy_block(new.body)
        out.append(new)
    return out


def _may_write(prim: Primitive) -> bool:
    """May a call of this primitive write into an object some name holds? (``y[i] = v``; a
    call adgen runs as written that is not known to only read its arguments.)"""
    return prim.name in _MUTATING or (prim.refusal is not None and not prim.reads_only)


def pure(prim: Primitive) -> bool:
    """Can a call of this primitive be computed once, moved or dropped? (Not a random
    draw's: each call gives other numbers.)"""
    return (
        prim.differentiable
        and not prim.draws
        and prim.name not in _MUTATING
        and prim.user_fn is None
        and prim.callee is None
        and not prim.helpers
        and prim.sequence is None
    )


# --- where names are bound and read --------------------------------------------------


def _reads(fn: ir.Function) -> set[str]:
    events = ir.events(fn.body)
    return {name for kind, name, _ in events if kind == "read"}


def _bound_anywhere(block: list[ir.Stmt]) -> set[str]:
    names: set[str] = set()
    for stmt in ir._walk(block):
        if isinstance(stmt, ir.Assign):
            names.update(stmt.targets)
        elif isinstance(stmt, ir.For):
            names.add(stmt.target)
    return names


# --- constant folding ----------------------------------------------------------------


def _number(atom: ir.Atom, fn: ir.Function) -> tuple[bool, Any]:
    if isinstance(atom, ir.Const) and type(atom.value) in (int, float, bool):
        return True, atom.value
    if isinstance(atom, ir.Free) and atom.name in fn.scalars:
        try:
            value = fn.outside(atom.name)
        except KeyError:
            return False, None
        if type(value) in (int, float, bool):
            return True, value
    return False, None


def _fold_constants(fn: ir.Function) -> None:
    """Replace operations on Python numbers by their value (names bound once only)."""
    counts = ir.binding_counts(fn)
    known: dict[str, Any] = {}
    namespace = fn.namespace()

    def atom(a: ir.Atom) -> ir.Atom:
        if isinstance(a, ir.Var) and a.name in known:
            return ir.Const(known[a.name])
        if isinstance(a, ir.Tup):
            return ir.Tup(tuple(atom(i) for i in a.items), kind=a.kind)
        if isinstance(a, ir.Slc):
            return ir.Slc(atom(a.lower), atom(a.upper), atom(a.step))
        if isinstance(a, ir.Dct):
            return ir.Dct(a.keys, tuple(atom(v) for v in a.values))
        return a

    def block(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        kept: list[ir.Stmt] = []
        for stmt in stmts:
            if isinstance(stmt, ir.Assign):
                stmt.args = tuple(atom(a) for a in stmt.args)
                stmt.kwargs = tuple((k, atom(v)) for k, v in stmt.kwargs)
                value = _fold(stmt, fn, namespace)
                if value is not None and counts.get(stmt.targets[0]) == 1:
                    known[stmt.targets[0]] = value[0]
                    continue
            elif isinstance(stmt, ir.Return):
                stmt.value = atom(stmt.value)
            elif isinstance(stmt, ir.If):
                stmt.test = atom(stmt.test)
                stmt.body = block(stmt.body)
                stmt.orelse = block(stmt.orelse)
            elif isinstance(stmt, ir.For):
                stmt.iter = atom(stmt.iter)
                stmt.body = block(stmt.body)
            elif isinstance(stmt, ir.While):
                stmt.test_body = block(stmt.test_body)
                stmt.test = atom(stmt.test)
                stmt.body = block(stmt.body)
            kept.append(stmt)
        return kept

    fn.body = block(fn.body)


def _fold(stmt: ir.Assign, fn: ir.Function, namespace: dict[str, Any]) -> tuple[Any] | None:
    """``(value,)`` when the statement computes a Python number from Python numbers."""
    if len(stmt.targets) != 1 or not pure(stmt.prim) or stmt.prim.name == "assign":
        return None
    for a in ir.stmt_args(stmt):
        known, _ = _number(a, fn)
        if not known:
            return None
    expr = ast.Expression(body=ir.primal_expr(stmt))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            value = eval(compile(ast.fix_missing_locations(expr), "<fold>", "eval"), namespace)
    except Exception:  # the program's own error: left for it to raise when it runs
        return None
    if type(value) not in (int, float, bool):
        return None
    if type(value) is float and not math.isfinite(value):
        return None  # keep inf/nan where the user can see them made
    if type(value) is int and abs(value) > 2**62:
        return None
    return (value,)


# --- loop-invariant code motion -----------------------------------------------------


def _hoist_invariants(fn: ir.Function) -> None:
    """Move loop-invariant operations of ``for`` bodies before the loop, under a guard."""
    from adgen.names import Namer

    counts = ir.binding_counts(fn)
    events = ir.events(fn.body)
    bind_at: dict[str, int] = {}
    read_at: dict[str, int] = {}
    for pos, (kind, var, _) in enumerate(events):
        (bind_at if kind == "bind" else read_at).setdefault(var, pos)
    taken = set(fn.params) | set(counts) | set(fn.free) | _reads(fn) | fn.user_names
    namer = Namer(taken)

    def block(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for stmt in stmts:
            if isinstance(stmt, ir.If):
                stmt.body = block(stmt.body)
                stmt.orelse = block(stmt.orelse)
            elif isinstance(stmt, ir.While):
                stmt.test_body = block(stmt.test_body)
                stmt.body = block(stmt.body)
            elif isinstance(stmt, ir.For):
                stmt.body = block(stmt.body)
                if not stmt.checkpoint:
                    out.extend(_hoisted(stmt, counts, bind_at, read_at, namer))
            out.append(stmt)
        return out

    fn.body = block(fn.body)
    fn.user_names |= namer.taken


def _hoisted(
    loop: ir.For,
    counts: dict[str, int],
    bind_at: dict[str, int],
    read_at: dict[str, int],
    namer: Any,
) -> list[ir.Stmt]:
    """Take the invariant statements out of ``loop``'s body; return the guarded block."""
    varying = _bound_anywhere(loop.body) | {loop.target}
    moved: list[ir.Stmt] = []
    kept: list[ir.Stmt] = []
    for stmt in loop.body:
        if (
            isinstance(stmt, ir.Assign)
            and len(stmt.targets) == 1
            and pure(stmt.prim)
            and stmt.prim.name != "assign"
            and counts.get(stmt.targets[0]) == 1
            and read_at.get(stmt.targets[0], 1 << 60) > bind_at.get(stmt.targets[0], -1)
            and not any(v in varying for a in ir.stmt_args(stmt) for v in ir.atom_vars(a))
        ):
            moved.append(stmt)
            varying.discard(stmt.targets[0])
            continue
        kept.append(stmt)
    if not moved:
        return []
    loop.body = kept
    count, nonempty = namer.fresh("loop"), namer.fresh("loop")
    length = registry.lookup(len)
    greater = registry.lookup(operator.gt)
    assert length is not None and greater is not None
    return [
        ir.Assign((count,), length, (loop.iter,), (), loop.line),
        ir.Assign((nonempty,), greater, (ir.Var(count), ir.Const(0)), (), loop.line),
        ir.If(ir.Var(nonempty), moved, [], loop.line),
    ]


# --- common subexpressions and copies ------------------------------------------------


def _key(stmt: ir.Assign) -> str:
    return stmt.prim.name + "|" + ast.unparse(ir.primal_expr(stmt))  # (no lines needed)


def _common_subexpressions(fn: ir.Function) -> dict[str, str]:
    """Names whose statement repeats (or copies) an earlier one: name -> the earlier name.

    The statements are removed; the caller renames the uses. A repeat counts only where the
    earlier result is available: bound in the same block or one enclosing it, and neither it
    nor anything it was computed from bound again since (or anywhere in a block in between).
    """
    counts = ir.binding_counts(fn)
    homes = _homes(fn.body)
    events = ir.events(fn.body)
    first_bind: dict[str, int] = {}
    first_read: dict[str, int] = {}
    for pos, (kind, name, _) in enumerate(events):
        table = first_bind if kind == "bind" else first_read
        table.setdefault(name, pos)
    renames: dict[str, str] = {}

    def replace(name: str) -> str:
        while name in renames:
            name = renames[name]
        return name

    def removable(target: str, earlier: str) -> bool:
        # bound once, never read before that binding (not even by an earlier loop iteration),
        # and ``earlier`` still holds the same value wherever ``target`` is read: it is bound
        # outside every loop, or in the same block as ``target`` (a loop binding ``earlier``
        # again then binds ``target`` again too; in a nested block it might not)
        home = homes.get(earlier)
        return (
            counts.get(target) == 1
            and target not in fn.params
            and first_read.get(target, len(events)) > first_bind.get(target, -1)
            and (home is None or home[1] is None or home[0] is homes[target][0])
        )

    def block(stmts: list[ir.Stmt], table: Table) -> list[ir.Stmt]:
        kept: list[ir.Stmt] = []
        for stmt in stmts:
            if isinstance(stmt, ir.Assign):
                stmt.args = tuple(_renamed(a, replace) for a in stmt.args)
                stmt.kwargs = tuple((k, _renamed(v, replace)) for k, v in stmt.kwargs)
                if len(stmt.targets) == 1 and pure(stmt.prim):
                    target = stmt.targets[0]
                    source = _copied(stmt)
                    if source is not None and counts.get(source) == 1 and removable(target, source):
                        renames[target] = source
                        continue
                    key = _key(stmt)
                    earlier = table.get(key)
                    if (
                        earlier is not None
                        and counts.get(earlier) == 1
                        and removable(target, earlier)
                    ):
                        renames[target] = earlier
                        continue
                    _forget(table, stmt.targets)
                    if counts.get(target) == 1:
                        reads = frozenset(v for a in ir.stmt_args(stmt) for v in ir.atom_vars(a))
                        table.add(key, target, reads)
                    kept.append(stmt)
                    continue
                _forget(table, stmt.targets)
                kept.append(stmt)
                continue
            if isinstance(stmt, ir.Return):
                stmt.value = _renamed(stmt.value, replace)
            elif isinstance(stmt, ir.If):
                stmt.test = _renamed(stmt.test, replace)
                inner = _without(table, _bound_anywhere(stmt.body) | _bound_anywhere(stmt.orelse))
                stmt.body = block(stmt.body, inner.copy())
                stmt.orelse = block(stmt.orelse, inner.copy())
                _forget(table, _bound_anywhere(stmt.body) | _bound_anywhere(stmt.orelse))
            elif isinstance(stmt, ir.For):
                stmt.iter = _renamed(stmt.iter, replace)
                if stmt.every is not None:
                    stmt.every = _renamed(stmt.every, replace)
                changed = _bound_anywhere(stmt.body) | {stmt.target}
                stmt.body = block(stmt.body, _without(table, changed))
                _forget(table, changed)
            elif isinstance(stmt, ir.While):
                changed = _bound_anywhere(stmt.test_body) | _bound_anywhere(stmt.body)
                stmt.test_body = block(stmt.test_body, _without(table, changed))
                stmt.test = _renamed(stmt.test, replace)
                stmt.body = block(stmt.body, _without(table, changed))
                _forget(table, changed)
            kept.append(stmt)
        return kept

    fn.body = block(fn.body, Table())
    return {name: replace(name) for name in renames}


def _homes(
    block: list[ir.Stmt], loop: ir.Stmt | None = None, out: dict | None = None
) -> dict[str, tuple[list[ir.Stmt], ir.Stmt | None]]:
    """Where each name is bound: (the block holding the binding, the innermost loop around
    it or None). A loop's target is bound in the loop's body; parameters are absent."""
    out = {} if out is None else out
    for stmt in block:
        if isinstance(stmt, ir.Assign):
            for t in stmt.targets:
                out[t] = (block, loop)
        elif isinstance(stmt, ir.If):
            _homes(stmt.body, loop, out)
            _homes(stmt.orelse, loop, out)
        elif isinstance(stmt, ir.For):
            out[stmt.target] = (stmt.body, stmt)
            _homes(stmt.body, stmt, out)
        elif isinstance(stmt, ir.While):
            _homes(stmt.test_body, stmt, out)
            _homes(stmt.body, stmt, out)
    return out


def _copied(stmt: ir.Assign) -> str | None:
    """The name a statement copies (``y = x``), if it is such a copy."""
    if stmt.prim.name == "assign" and len(stmt.args) == 1 and isinstance(stmt.args[0], ir.Var):
        return stmt.args[0].name
    return None


class Table:
    """Available operations: key -> the name holding the result, indexed by every name the
    entry depends on (its holder and its operands) so forgetting a name is cheap."""

    def __init__(self) -> None:
        self.entries: dict[str, str] = {}
        self.index: dict[str, set[str]] = {}

    def get(self, key: str) -> str | None:
        return self.entries.get(key)

    def add(self, key: str, holder: str, reads: frozenset[str]) -> None:
        self.entries[key] = holder
        for name in reads | {holder}:
            self.index.setdefault(name, set()).add(key)

    def copy(self) -> Table:
        new = Table()
        new.entries = dict(self.entries)
        new.index = {name: set(keys) for name, keys in self.index.items()}
        return new


def _forget(table: Table, names: set[str] | tuple[str, ...]) -> None:
    """Drop the entries computed from, or held by, any of these names."""
    for name in names:
        for key in table.index.pop(name, ()):
            table.entries.pop(key, None)


def _without(table: Table, names: set[str]) -> Table:
    inner = table.copy()
    _forget(inner, names)
    return inner


def _renamed(atom: ir.Atom, replace: Any) -> ir.Atom:
    if isinstance(atom, ir.Var):
        return ir.Var(replace(atom.name))
    if isinstance(atom, ir.Tup):
        return ir.Tup(tuple(_renamed(a, replace) for a in atom.items), kind=atom.kind)
    if isinstance(atom, ir.Slc):
        return ir.Slc(
            _renamed(atom.lower, replace),
            _renamed(atom.upper, replace),
            _renamed(atom.step, replace),
        )
    if isinstance(atom, ir.Dct):
        return ir.Dct(atom.keys, tuple(_renamed(v, replace) for v in atom.values))
    return atom


def _rename(fn: ir.Function, renames: dict[str, str]) -> None:
    """Apply ``renames`` to every read (CSE renamed reads in order; this catches the rest)."""
    if not renames:
        return

    def replace(name: str) -> str:
        return renames.get(name, name)

    for stmt in fn.statements():
        if isinstance(stmt, ir.Assign):
            stmt.args = tuple(_renamed(a, replace) for a in stmt.args)
            stmt.kwargs = tuple((k, _renamed(v, replace)) for k, v in stmt.kwargs)
        elif isinstance(stmt, ir.Return):
            stmt.value = _renamed(stmt.value, replace)
        elif isinstance(stmt, ir.If):
            stmt.test = _renamed(stmt.test, replace)
        elif isinstance(stmt, ir.For):
            stmt.iter = _renamed(stmt.iter, replace)
        elif isinstance(stmt, ir.While):
            stmt.test = _renamed(stmt.test, replace)


# --- self-products ---------------------------------------------------------------------


def _self_products(fn: ir.Function) -> None:
    """``y = x * x`` -> the SQUARE primitive: same primal text, cheaper derivative."""
    for stmt in fn.statements():
        if (
            isinstance(stmt, ir.Assign)
            and stmt.prim.name == "mul"
            and stmt.prim.callee is None
            and len(stmt.args) == 2
            and not stmt.kwargs
            and isinstance(stmt.args[0], ir.Var)
            and stmt.args[0] == stmt.args[1]
        ):
            stmt.prim, stmt.args = _square(), stmt.args[:1]


def _square() -> Primitive:
    prim = registry.lookup(registry.square_product)
    assert prim is not None
    return prim


# --- dead code -------------------------------------------------------------------------


def _dead_code(fn: ir.Function) -> None:
    """Drop pure operations whose results nothing reads, until none is left, and those of
    the function's own block whose names it binds again there before reading them, and the
    arrays it makes and writes into that nothing else reads (:mod:`adgen.middle.dead_arrays`)."""
    while _drop_unread(fn, _reads(fn)) | _drop_overwritten(fn) | drop_dead_arrays(fn, pure):
        pass


def _drop_overwritten(fn: ir.Function) -> bool:
    """Drop a pure statement of the function's own block (not in a branch or loop) whose
    every target that block binds again, unconditionally, before anything reads it: an
    inlined helper's ``exog = None`` (its default) before ``exog = self.exog``. The name
    then holds one value, whose kind the specialisation for shapes can know.

    >>> from adgen.frontend.parse import parse_function
    >>> from adgen.frontend.lower import lower
    >>> import numpy as np
    >>> def scaled(x, w=None):
    ...     w = np.sin(x)
    ...     while np.sum(w) > 1.0:  # (`w` rebound in a block: one name for all its values)
    ...         w = w * 0.5
    ...     return x * w
    >>> def f(x):
    ...     return np.sum(scaled(x))
    >>> function = lower(parse_function(f))
    >>> [ast.unparse(ir.primal_expr(s)) for s in function.body[:2]]
    ['None', 'np.sin(x)']
    >>> _drop_overwritten(function), [ast.unparse(ir.primal_expr(s)) for s in function.body[:1]]
    (True, ['np.sin(x)'])
    """
    top = {id(s) for s in fn.body}
    first: dict[str, str] = {}  # name -> its first event after the statement looked at
    kept: list[ir.Stmt] = []
    for stmt in reversed(fn.body):
        if (
            isinstance(stmt, ir.Assign)
            and pure(stmt.prim)
            and all(first.get(t) == "rebound" for t in stmt.targets)
        ):
            continue
        kept.append(stmt)
        for kind, name, at in reversed(ir.events([stmt])):
            if kind == "bind" and isinstance(at, ir.Assign) and id(at) in top:
                first[name] = "rebound"
            else:  # a read, or a binding in a branch or a loop (which may not run)
                first[name] = "read"
    dropped = len(kept) != len(fn.body)
    fn.body = kept[::-1]
    return dropped


# calls without a derivative that only compute their result (questions of shapes and
# dtypes, comparisons, new arrays): dropped where nothing reads it, as pure calls are (never
# merged or moved as they are: two arrays np.zeros makes are two objects)
_UNREAD_DROPPED = MAKERS | {
    ".shape", ".ndim", ".size", ".dtype", "np.shape", "np.ndim", "np.size", "len",
    "eq", "ne", "lt", "le", "gt", "ge", "not_", "np.isnan", "np.isfinite", "np.isinf",
    "np.issubdtype",
}  # fmt: skip


def _drop_unread(fn: ir.Function, reads: set[str]) -> bool:
    removed = False

    def block(stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        nonlocal removed
        kept: list[ir.Stmt] = []
        for stmt in stmts:
            if (
                isinstance(stmt, ir.Assign)
                and (pure(stmt.prim) or stmt.prim.name in _UNREAD_DROPPED)
                and not any(t in reads for t in stmt.targets)
            ):
                removed = True
                continue
            if isinstance(stmt, ir.If):
                stmt.body = block(stmt.body)
                stmt.orelse = block(stmt.orelse)
            elif isinstance(stmt, ir.For):
                stmt.body = block(stmt.body)
            elif isinstance(stmt, ir.While):
                stmt.test_body = block(stmt.test_body)
                stmt.body = block(stmt.body)
            kept.append(stmt)
        return kept

    fn.body = block(fn.body)
    return removed
