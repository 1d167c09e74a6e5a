"""Dataflow facts about an IR function, shared by forward and reverse mode.

* ``multi``: names bound by more than one statement or inside a block (if/for/while bodies,
  loop variables). Their value depends on the path taken, so derivative code never aliases
  them and reverse mode saves their overwritten values.
* ``varied``: names that depend on a differentiated input through differentiable primitives.
* ``useful``: varied names through which a derivative reaches the result.
* ``managed``: useful names whose adjoint is touched inside a block: their adjoints are
  initialised to zero before the adjoint sweep and always accumulated explicitly.

Loops are handled by iterating to a fixed point (the sets only grow).

>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> def f(x, n):
...     s = 0.0
...     for i in range(n):
...         s = s + x * i
...     return s
>>> facts = Facts(lower(parse_function(f)), ["x"])
>>> sorted(facts.multi), sorted(facts.varied), sorted(facts.managed)
(['i', 's', 's_1'], ['s', 's_1', 'x'], ['s', 's_1', 'x'])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np

from adgen import ir
from adgen.errors import (
    AdgenError,
    NonDifferentiableError,
    SourceLocation,
    UnsupportedSyntaxError,
)
from adgen.rules import registry


def _args(stmt: ir.Assign) -> Iterator[str]:
    for atom in ir.stmt_args(stmt):
        yield from ir.atom_vars(atom)


def _flowing(stmt: ir.Assign) -> Iterator[str]:
    """The names a derivative flows from into the statement's results: its arguments but
    those only giving a shape (the primitive's ``zero_params``)."""
    for atom in stmt.prim.flowing_args(stmt.args, stmt.kwargs):
        yield from ir.atom_vars(atom)


def _block_statements(block: list[ir.Stmt], inside: bool) -> Iterator[tuple[ir.Stmt, bool]]:
    """Every statement with whether it stands inside an if/for/while block."""
    for stmt in block:
        yield stmt, inside
        if isinstance(stmt, ir.If):
            yield from _block_statements(stmt.body, True)
            yield from _block_statements(stmt.orelse, True)
        elif isinstance(stmt, ir.For):
            yield from _block_statements(stmt.body, True)
        elif isinstance(stmt, ir.While):
            yield from _block_statements(stmt.test_body, True)
            yield from _block_statements(stmt.body, True)


class Facts:
    def __init__(self, fn: ir.Function, wrt: list[str], reverse: bool = True) -> None:
        """What the modes need to know of ``fn`` differentiated w.r.t. ``wrt``. Where a
        differentiated value reaches a call run as written inside a branch of an ``if`` the
        program decides when it runs, that branch becomes the refusal, raised only if the
        code takes it (:func:`check_opaque_calls`): ``self.fn`` is then ``fn`` with that
        branch replaced, the function the modes differentiate."""
        while True:
            try:
                self.analyse(fn, wrt, reverse)
                return
            except _BranchRefused as refused:
                fn = refused.applied(fn)

    def analyse(self, fn: ir.Function, wrt: list[str], reverse: bool) -> None:
        self.fn = fn
        placed = list(_block_statements(fn.body, False))
        self.has_blocks = any(isinstance(s, (ir.If, ir.For, ir.While)) for s, _ in placed)
        counts: dict[str, int] = {}
        self.multi: set[str] = set()
        self.test_names: set[str] = set()  # computed by while-loop tests only
        for stmt, inside in placed:
            if isinstance(stmt, ir.Assign):
                for t in stmt.targets:
                    counts[t] = counts.get(t, 0) + 1
                    if inside:
                        self.multi.add(t)
            elif isinstance(stmt, ir.For):
                self.multi.add(stmt.target)
            if isinstance(stmt, ir.While):
                for s, _ in _block_statements(stmt.test_body, True):
                    if isinstance(s, ir.Assign):
                        self.test_names.update(s.targets)
        # bound by several statements (or a loop header, or a parameter rebound): shape unknown
        self.rebound = {n for n, c in counts.items() if c > 1} | {
            p for p in fn.params if p in counts
        }
        self.rebound |= {s.target for s, _ in placed if isinstance(s, ir.For)}
        self.multi |= self.rebound
        assigns = [s for s, _ in placed if isinstance(s, ir.Assign)]
        # arrays written in place (y[i] = v): their tangents and adjoints must be owned arrays
        self.mutated = {
            s.targets[0] for s in assigns if s.prim.name in ("setitem", "append", "pop")
        }
        # lists built with xs = [] and xs.append(v): their derivatives are lists too
        # (and so are the results of adgen's own list helpers, rt.accumulate, rt.split_last)
        self.lists = {
            s.targets[0]
            for s in assigns
            if s.targets and (s.prim.name in ("list", "append", "pop") or s.prim.lists)
        }
        grown = True
        while grown:  # ys = xs, rt.zeros_like(xs) and a slice xs[1:] of a list are lists too
            copies = {
                s.targets[0]
                for s in assigns
                if (
                    s.prim.name in ("assign", "rt.zeros_like")
                    or (s.prim.name == "getitem" and _slice(s.args[1:2]))
                )
                and s.args
                and isinstance(s.args[0], ir.Var)
                and s.args[0].name in self.lists
            }
            grown = not copies <= self.lists
            self.lists |= copies
        self.varied = set(wrt)
        # reverse mode's `v = stack.pop()` puts back a value v had (v keeps one name: lowering
        # makes it so), so v stays as differentiable as it was; any other pop may move any
        # value, so there the item varies with the list
        changed = True
        while changed:
            changed = False
            for s in assigns:
                if not s.prim.differentiable or any(t in self.test_names for t in s.targets):
                    continue
                if ir.restores(s):
                    continue  # v = stack.pop() puts back v's own saved value: v stays as it was
                if any(v in self.varied for v in _flowing(s)) and not set(s.targets) <= self.varied:
                    self.varied.update(s.targets)
                    changed = True
        self.useful = {v for v in _returned(fn) if v in self.varied}
        changed = True
        while changed:  # information flows backwards: walk the statements in reverse
            changed = False
            for s in reversed(assigns):
                if s.prim.differentiable and self.useful.intersection(s.targets):
                    new = {v for v in _flowing(s) if v in self.varied} - self.useful
                    if new:
                        self.useful |= new
                        changed = True
        in_blocks: set[str] = set()
        for stmt, inside in placed:
            if inside and isinstance(stmt, ir.Assign):
                in_blocks.update(stmt.targets)
                in_blocks.update(_args(stmt))
        self.managed = (in_blocks | self.multi) & self.useful
        for mixed in _list_and_other(assigns, self.lists, self.varied):
            where = _loc(fn, mixed.line)
            if where.filename.startswith("<adgen "):  # (adgen's own code, read again)
                continue
            raise UnsupportedSyntaxError(
                "adgen does not support a differentiated variable that holds a list and, "
                "bound here, a value of another kind (one name for both, rebound in a loop "
                "or a branch, appended to or read by a nested function)",
                where,
                "give the new value a name of its own",
            )
        check_opaque_calls(fn, self.varied, reverse)


def _list_and_other(
    assigns: list[ir.Assign], lists: set[str], varied: set[str]
) -> Iterator[ir.Assign]:
    """The statements binding a differentiated name that is a list elsewhere
    (``Facts.lists``) and read by index (``rows[1, :]``) to a value no list is (an array
    made of it, a number): that index's derivative would be taken as a list's (the derivative
    of one of its items) of an array."""
    indexed = {
        s.args[0].name
        for s in assigns
        if s.prim.name == "getitem" and s.args and isinstance(s.args[0], ir.Var)
    }
    built = {  # (lists the function builds: `tuple(xs)` in one branch, `xs[0]` in the
        # other is a value of either kind whose derivative works as the one it holds)
        s.targets[0]
        for s in assigns
        if s.targets and s.prim.name in ("list", "append", "pop")
    }
    mixed = lists & varied & indexed & built
    for s in assigns:
        if not s.targets or s.targets[0] not in mixed:
            continue
        if s.prim.name in ("list", "append", "pop") or s.prim.lists:
            continue
        copied = s.prim.name in ("assign", "rt.zeros_like", "setitem") or (
            s.prim.name == "getitem" and _slice(s.args[1:2])
        )
        if copied and s.args and isinstance(s.args[0], ir.Var) and s.args[0].name in lists:
            continue  # (a copy, zeros, a slice of a list, or an item written: a list still)
        if s.prim.name == "assign" and s.args and isinstance(s.args[0], ir.Const):
            continue  # (`None` before the loop: no derivative of its own)
        yield s


def _returned(fn: ir.Function) -> set[str]:
    names: set[str] = set()
    for stmt in fn.statements():
        if isinstance(stmt, ir.Return):
            names.update(ir.atom_vars(stmt.value))
    return names


def _placed_in_order(
    block: list[ir.Stmt], loops: tuple[int, ...], checkpointed: bool
) -> Iterator[tuple[ir.Stmt, tuple[int, ...], bool]]:
    """Every statement in execution order, with the loops around it (ids) and whether one
    of them is a checkpointed ``for`` (reverse mode runs its body again)."""
    for stmt in block:
        yield stmt, loops, checkpointed
        if isinstance(stmt, ir.If):
            yield from _placed_in_order(stmt.body, loops, checkpointed)
            yield from _placed_in_order(stmt.orelse, loops, checkpointed)
        elif isinstance(stmt, ir.For):
            inner = checkpointed or stmt.checkpoint
            yield from _placed_in_order(stmt.body, (*loops, id(stmt)), inner)
        elif isinstance(stmt, ir.While):
            yield from _placed_in_order(stmt.test_body, (*loops, id(stmt)), checkpointed)
            yield from _placed_in_order(stmt.body, (*loops, id(stmt)), checkpointed)


def _sharing(names: set[str], assigns: list[ir.Assign]) -> set[str]:
    """``names`` and every name that may hold (part of) the same object: copies, views and
    the results of calls that may return their argument, both ways, to a fixed point.

    A result reached only from one of a call's arguments is not followed back to the
    call's other arguments: ``r = f(a, b)`` may be ``a`` or ``b``, which says nothing of ``a``
    and ``b`` sharing (``check_consistent_length(y_true, y_pred)`` links neither to the
    other).

    >>> from adgen.rules import registry
    >>> def copy(target, *args):
    ...     args = tuple(ir.Var(a) for a in args)
    ...     return ir.Assign((target,), registry.lookup(registry.assign), args, (), 1)
    >>> calls = [copy("r", "a", "b"), copy("c", "r")]
    >>> sorted(_sharing({"a"}, calls)), sorted(_sharing({"c"}, calls))
    (['a', 'c', 'r'], ['a', 'b', 'c', 'r'])
    """
    links = [
        # (`a[i] = v` makes the new value of `a`: of its index and of `v` it keeps no memory)
        (
            set(ir.atom_vars(s.args[0])) if s.prim.name == "setitem" else set(_args(s)),
            set(s.targets),
        )
        for s in assigns
        if s.prim.view or s.prim.name == "assign"
    ]
    # for each name reached: how ("": a name given, or an argument of a call reached back
    # from its result; k: the result of links[k] reached from one of its arguments)
    how: dict[str, set[int | str]] = {n: {""} for n in names}
    grown = True
    while grown:
        grown = False
        for k, (args, targets) in enumerate(links):
            if args & how.keys():
                for t in targets:
                    if k not in how.setdefault(t, set()):
                        how[t].add(k)
                        grown = True
            if any(t in how and how[t] - {k} for t in targets):
                for a in args:
                    if "" not in how.setdefault(a, set()):
                        how[a].add("")
                        grown = True
    return set(how)


# primitives whose results are Python numbers (or ranges): never changed in place
_NUMBERS = frozenset({"len", "range", "int", "float", "bool", "rt.backwards"})


def _constants_only(assigns: list[ir.Assign]) -> set[str]:
    """The names every binding of which is a Python number, string or None: a constant
    copied there, a primitive of :data:`_NUMBERS`, or a copy of another such name
    (``axis = int(axis)`` settled to ``-1`` when transforming, passed on through helpers).
    Nothing can change such a value in place.

    >>> from adgen.rules import registry
    >>> def copy(target, arg):
    ...     return ir.Assign((target,), registry.lookup(registry.assign), (arg,), (), 1)
    >>> calls = [copy("a", ir.Const(-1)), copy("b", ir.Var("a")), copy("a", ir.Var("b"))]
    >>> sorted(_constants_only(calls)), sorted(_constants_only([*calls, copy("b", ir.Var("x"))]))
    (['a', 'b'], [])
    """
    plain = (bool, int, float, complex, str, type(None))
    found = {t for s in assigns for t in s.targets}
    changed = True
    while changed:  # (the largest set: copies of one another, each a constant at first)
        changed = False
        for s in assigns:
            first = s.args[0] if s.args else None
            constant = s.prim.name in _NUMBERS or (
                s.prim.name == "assign"
                and (
                    (isinstance(first, ir.Const) and type(first.value) in plain)
                    or (isinstance(first, ir.Var) and first.name in found)
                )
            )
            if not constant and found & set(s.targets):
                found -= set(s.targets)
                changed = True
    return found


def check_opaque_calls(fn: ir.Function, varied: set[str], reverse: bool = True) -> None:
    """Refuse the calls adgen runs as written (no rule, not inlined: ``registry.opaque_call``)
    where that could make a derivative wrong.

    * A differentiated value passed to one is refused with the error adgen gave for the call
      before (no rule for it...), unless the call is known only to read its arguments and
      its result reaches the function's result through no differentiable operation
      (``print(y)``, ``print("loss " + str(y))``: the value is printed, not differentiated).
    * In reverse mode, a call that may write into its arguments (not known to only read
      them), given a value a differentiated operation read before it (or in the same loop),
      or that could reach an outside array (a global) such an operation read, is refused:
      the adjoint sweep reads that value again, after the call changed it (loop counters and
      other Python numbers cannot change). Forward mode reads each value as the program
      does.
    * Such calls inside a checkpointed loop are refused: reverse mode runs the loop's body
      again, and would run the call twice.
    """
    placed = list(_placed_in_order(fn.body, (), False))
    assigns = [s for s, _, _ in placed if isinstance(s, ir.Assign)]
    if not any(s.prim.refusal is not None for s in assigns):
        return
    carry = _may_carry(fn, assigns)
    tuples = _tuple_copies(assigns)
    numbers = {s.target for s, _, _ in placed if isinstance(s, ir.For)}  # range's ints
    mutable = {name for name, value in fn.free.items() if _mutable(value)}
    numbers |= {t for s in assigns if s.prim.name in _NUMBERS for t in s.targets}
    numbers |= _constants_only(assigns)
    for k, (stmt, loops, checkpointed) in enumerate(placed):
        if not isinstance(stmt, ir.Assign) or stmt.prim.refusal is None:
            continue
        loc = _loc(fn, stmt.line)
        if checkpointed:
            raise UnsupportedSyntaxError(
                f"a call of `{stmt.prim.name}` (run as written, adgen has no rule for it) "
                "inside a checkpointed loop: reverse mode runs the loop's body again",
                loc,
                "move the call out of the loop, or do not checkpoint it",
            )
        args = set(_args(stmt))
        # (an outside number, string or function it is given cannot change: `rs.randn(n, D)`
        # of a closure's int D)
        outside = {n for n in _outside(stmt) if _may_change(fn, n)}
        if args & varied:
            if not stmt.prim.reads_only or _carried(set(stmt.targets), assigns, carry):
                error = _reached(_again(stmt.prim.refusal), fn, stmt, varied, assigns)
                raise _where_taken(fn, stmt, error)
            continue
        if stmt.prim.ambiguous is not None:
            raise _again(stmt.prim.ambiguous)
        held = sorted(args & tuples)
        if held:
            error = UnsupportedSyntaxError(
                f"adgen does not support passing `{held[0]}` to `{stmt.prim.name}`, which it "
                "runs as written (it has no rule for it): adgen made it a tuple, which the "
                "program may have written as a list",
                loc,
                "write the list or tuple in the call itself (`f(a, [0, 2])`), or pass an array",
            )
            raise _where_taken(fn, stmt, error)  # (in a branch: an `except`, where taken)
        if stmt.prim.reads_only or not reverse:
            continue
        # what it is given, and the outside arrays (globals) it could reach and change (a
        # library's function reaches no global of the program's: only what it is given)
        reach = set() if _library_function(stmt.prim.runs) else mutable
        shared = (_sharing(args - numbers, assigns) | outside | reach) - numbers
        for j, (other, other_loops, _) in enumerate(placed):
            if not (
                isinstance(other, ir.Assign)
                and other.prim.differentiable
                and (j < k or set(loops) & set(other_loops))
            ):
                continue
            reads = set(_args(other))
            if reads & varied and (reads | _outside(other)) & shared:
                reads |= _outside(other)
                value = sorted(reads & shared)[0]
                changed = NonDifferentiableError(
                    f"`{stmt.prim.name}` (run as written, adgen has no rule for it) may change "
                    f"`{value}` in place, which a differentiated operation read before it",
                    loc,
                    "pass it a copy (np.copy(...)), or register a rule for the function "
                    "with @adgen.rules.rule",
                )
                raise _where_taken(fn, stmt, changed)


class _BranchRefused(Exception):
    """A branch of an ``if`` the program decides when it runs that must become ``error``,
    raised by the generated code only if it takes that branch (a differentiated value
    reaches a call run as written there: the branch needs a derivative adgen cannot give)."""

    def __init__(self, node: ir.If, field: str, error: AdgenError, line: int) -> None:
        super().__init__(error.message)
        self.node, self.field, self.error, self.line = node, field, error, line

    def applied(self, fn: ir.Function) -> ir.Function:
        """A copy of ``fn`` whose branch is the refusal (``fn`` and its blocks unchanged)."""
        words = [
            ("what", ir.Const(self.error.message)),
            ("hint", ir.Const(self.error.hint)),
            ("kind", ir.Const(type(self.error).__name__)),
        ]
        refusal = ir.Assign((), registry.ASSERT, (ir.Const(False),), tuple(words), self.line)
        body = _with_branch(fn.body, self.node, self.field, [refusal])
        return dataclasses.replace(fn, body=body)


def _where_taken(fn: ir.Function, stmt: ir.Stmt, error: Exception) -> Exception:
    """The exception refusing ``stmt``: ``error`` itself, or, inside a branch the program
    decides when it runs, :class:`_BranchRefused` (raised by the code where it takes it)."""
    branch = _enclosing_branch(fn.body, stmt)
    if branch is None or not isinstance(error, AdgenError):
        return error
    return _BranchRefused(branch[0], branch[1], error, stmt.line)


def _enclosing_branch(block: list[ir.Stmt], stmt: ir.Stmt) -> tuple[ir.If, str] | None:
    """The innermost ``if`` branch (the ``If`` and ``"body"`` or ``"orelse"``) around
    ``stmt`` in ``block``, None where no ``if`` encloses it."""
    for s in block:
        if isinstance(s, ir.If):
            for field in ("body", "orelse"):
                inner = getattr(s, field)
                if any(t is stmt for t in inner):
                    return s, field
                found = _enclosing_branch(inner, stmt)
                if found is not None:
                    return found
        elif isinstance(s, ir.For):
            found = _enclosing_branch(s.body, stmt)
            if found is not None:
                return found
        elif isinstance(s, ir.While):
            found = _enclosing_branch([*s.test_body, *s.body], stmt)
            if found is not None:
                return found
    return None


def _with_branch(
    block: list[ir.Stmt], node: ir.If, field: str, new: list[ir.Stmt]
) -> list[ir.Stmt]:
    """``block`` with the branch ``field`` of ``node`` (somewhere in it) replaced by ``new``:
    the statements on the way to it copied, every other one shared."""
    out: list[ir.Stmt] = []
    for s in block:
        if s is node and field == "body":
            s = dataclasses.replace(node, body=new)
        elif s is node:
            s = dataclasses.replace(node, orelse=new)
        elif isinstance(s, ir.If):
            s = dataclasses.replace(
                s,
                body=_with_branch(s.body, node, field, new),
                orelse=_with_branch(s.orelse, node, field, new),
            )
        elif isinstance(s, ir.For):
            s = dataclasses.replace(s, body=_with_branch(s.body, node, field, new))
        elif isinstance(s, ir.While):
            s = dataclasses.replace(
                s,
                test_body=_with_branch(s.test_body, node, field, new),
                body=_with_branch(s.body, node, field, new),
            )
        out.append(s)
    return out


def _loc(fn: ir.Function, line: int) -> SourceLocation:
    """Where a statement of ``fn`` came from."""
    if line in fn.origins:
        return fn.origins[line]
    text = fn.source_lines.get(line, "")
    return SourceLocation(fn.filename, line, len(text) - len(text.lstrip()), text)


def _again(error: Exception) -> Exception:
    """A fresh copy of an error kept to be raised later (each raise its own traceback)."""
    if isinstance(error, AdgenError):
        return type(error)(error.message, error.loc, error.hint)
    return error


def _reached(
    error: Exception, fn: ir.Function, stmt: ir.Assign, varied: set[str], assigns: list[ir.Assign]
) -> Exception:
    """``error`` (a refusal of ``stmt``, which a differentiated value reaches) saying the
    path that value took from a parameter: the lines it went through, the last few."""
    if not isinstance(error, AdgenError) or error.loc is None:
        return error
    made = {t: s for s in assigns for t in s.targets}
    start = next((v for v in _args(stmt) if v in varied), None)
    lines: list[int] = []
    seen: set[str] = set()
    name = start
    while name is not None and name not in seen and name not in fn.params:
        seen.add(name)
        producer = made.get(name)
        if producer is None:
            break
        if producer.line != stmt.line and (not lines or lines[-1] != producer.line):
            lines.append(producer.line)
        name = next((v for v in _flowing(producer) if v in varied and v not in seen), None)
    if name not in fn.params or not lines:  # (a parameter passed as it is: plain to see)
        return error
    steps = []
    for line in reversed(lines[:4]):
        where = _loc(fn, line)
        text = where.text.strip()
        text = text if len(text) <= 50 else text[:47] + "..."
        steps.append(f"line {where.lineno} `{text}`")
    path = " -> ".join([f"`{name}`", *steps])
    error.message = f"{error.message} (the differentiated value reaches it from {path})"
    error.args = (error._render(),)
    return error


# the packages whose functions change no global array of the program they are called from
# (only what they are given): NumPy, SciPy, scikit-learn, statsmodels, pandas
_LIBRARIES = ("numpy", "scipy", "sklearn", "statsmodels", "pandas")


def _library_function(fn: object) -> bool:
    """Is ``fn`` a function of one of :data:`_LIBRARIES` (not the program's own)?

    >>> _library_function(np.sum), _library_function(_library_function)
    (True, False)
    """
    while isinstance(fn, registry.ObjectMethod):  # a method of an object a library's class made
        fn = fn.maker
    module = getattr(fn, "__module__", None) or ""
    return module.partition(".")[0] in _LIBRARIES


def _outside(stmt: ir.Assign) -> set[str]:
    """The outside values (globals, closures) a statement reads."""
    return {n for a in ir.stmt_args(stmt) for n in ir.free_names(a)}


def _may_change(fn: ir.Function, name: str) -> bool:
    """Could a call change the outside value ``name`` stands for in place (not known: yes)?"""
    try:
        return _mutable(fn.outside(name))
    except KeyError:
        return True


def _mutable(value: object) -> bool:
    """Could a function change this outside value in place (an array, a list, a dict, an
    object with attributes...)? Numbers, strings, functions, types and modules cannot."""
    if isinstance(value, (tuple, frozenset)):
        return any(_mutable(v) for v in value)
    fixed = (int, float, complex, str, bytes, type(None), np.generic, np.dtype, range, slice)
    return not (isinstance(value, fixed) or callable(value) or isinstance(value, type(np)))


def _may_carry(fn: ir.Function, assigns: list[ir.Assign]) -> set[str]:
    """The names a derivative could flow from to the result: the returned names and, to a
    fixed point, the arguments of differentiable operations binding such a name."""
    carry = set(_returned(fn))
    grown = True
    while grown:
        grown = False
        for s in assigns:
            if s.prim.differentiable and carry.intersection(s.targets):
                new = set(_carrying(s)) - carry
                if new:
                    carry |= new
                    grown = True
    return carry


def _carrying(stmt: ir.Assign) -> Iterator[str]:
    """The names a derivative flows from into a differentiable statement's results
    (:func:`_flowing`), but those it is given as its ``dtype``."""
    try:
        bound = stmt.prim.bind(stmt.args, stmt.kwargs)
    except TypeError:
        yield from _flowing(stmt)
        return
    typed = {id(a) for p, a in bound.items() if p == "dtype"}
    for atom in stmt.prim.flowing_args(stmt.args, stmt.kwargs):
        if id(atom) not in typed:
            yield from ir.atom_vars(atom)


def _carried(names: set[str], assigns: list[ir.Assign], carry: set[str]) -> bool:
    """Do ``names``, or values differentiable operations (or calls run as written) compute
    from them, reach ``carry``?"""
    reached = set(names)
    grown = True
    while grown:
        grown = False
        for s in assigns:
            flows = s.prim.differentiable or s.prim.refusal is not None  # not np.floor's zero
            # (of a differentiable call, the arguments a derivative flows through: not a
            # shape, nor `dtype=` of `np.asarray(a, dtype=...)`: a type carries none)
            read = _carrying(s) if s.prim.differentiable else _args(s)
            if flows and reached & set(read) and not reached >= set(s.targets):
                reached |= set(s.targets)
                grown = True
    return bool(reached & carry)


def _tuple_copies(assigns: list[ir.Assign]) -> set[str]:
    """Names bound to a tuple atom by a copy (a list or tuple display bound to a name that a
    block rebinds: the program's list is a tuple in the code adgen writes), and copies of them."""
    names: set[str] = set()
    grown = True
    while grown:
        grown = False
        for s in assigns:
            if s.prim.name != "assign" or not s.args or set(s.targets) <= names:
                continue
            a = s.args[0]
            if isinstance(a, ir.Tup) or (isinstance(a, ir.Var) and a.name in names):
                names |= set(s.targets)
                grown = True
    return names


def _slice(index: tuple[ir.Atom, ...]) -> bool:
    """Is this (the index of a getitem) a slice, ``xs[1:]`` or ``xs[::-1]``?"""
    return bool(index) and (
        isinstance(index[0], ir.Slc)
        or (isinstance(index[0], ir.Const) and isinstance(index[0].value, slice))
    )
