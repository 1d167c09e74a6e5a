"""What reverse mode asks of the IR it differentiates: the names blocks bind and read.

Which values a checkpointed loop's snapshot holds (:func:`_carried`, :func:`_bound`), what
its recomputation reads (:func:`_reads`), which values are local to one iteration of a
loop (:func:`_iteration_local`), and where each name is last used at the top level
(:func:`_names`).
"""

from __future__ import annotations

from adgen import ir
from adgen.middle.analysis import Facts


def _walk(block: list[ir.Stmt]) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for stmt in block:
        out.append(stmt)
        if isinstance(stmt, ir.If):
            out += _walk(stmt.body) + _walk(stmt.orelse)
        elif isinstance(stmt, ir.For):
            out += _walk(stmt.body)
        elif isinstance(stmt, ir.While):
            out += _walk(stmt.test_body) + _walk(stmt.body)
    return out


def _iteration_local(fn: ir.Function, facts: Facts) -> dict[int, set[str]]:
    """For each ``for`` loop (by id), the values local to one iteration: bound once,
    directly in the loop's body, and read only by later statements directly in that body.
    Each iteration's adjoint sweep then meets every contribution to such a value's adjoint
    unconditionally, after none from another iteration."""
    counts = ir.binding_counts(fn)
    where: dict[int, tuple[int, int]] = {}  # statement -> (its loop, its place in the body)
    loops = [  # a checkpointed loop's segments run its body as a plain loop does
        s
        for s in fn.statements()
        if isinstance(s, ir.For)
        and not any(isinstance(c, ir.For) and c.checkpoint for c in _walk(s.body))
    ]
    inside_checkpoint = {
        id(c)
        for s in fn.statements()
        if isinstance(s, ir.For) and s.checkpoint
        for c in _walk(s.body)
    }
    candidates: dict[str, tuple[int, int]] = {}
    for loop in loops:
        if id(loop) in inside_checkpoint:
            continue
        for k, s in enumerate(loop.body):
            where[id(s)] = (id(loop), k)
            if isinstance(s, ir.Assign) and len(s.targets) == 1:
                t = s.targets[0]
                if (
                    counts.get(t) == 1
                    and t in facts.managed
                    and t not in facts.lists
                    and t not in facts.mutated
                ):
                    candidates[t] = (id(loop), k)
    for kind, v, s in ir.events(fn.body):
        if kind != "read" or v not in candidates:
            continue
        loop_id, k = candidates[v]
        at = where.get(id(s))
        if not isinstance(s, ir.Assign) or at is None or at[0] != loop_id or at[1] <= k:
            del candidates[v]
    local: dict[int, set[str]] = {}
    for v, (loop_id, _) in candidates.items():
        local.setdefault(loop_id, set()).add(v)
    return local


def _args_of(stmt: ir.Assign) -> set[str]:
    """The names a statement reads."""
    return {v for a in ir.stmt_args(stmt) for v in ir.atom_vars(a)}


def _bound(block: list[ir.Stmt]) -> set[str]:
    """Every name a block binds (assignments and loop variables, nested blocks included)."""
    names: set[str] = set()
    for s in _walk(block):
        if isinstance(s, ir.Assign):
            names.update(s.targets)
        elif isinstance(s, ir.For):
            names.add(s.target)
    return names


def _reads(block: list[ir.Stmt]) -> set[str]:
    """Every name a block reads (nested blocks included)."""
    names: set[str] = set()
    for s in _walk(block):
        if isinstance(s, ir.Assign):
            for a in ir.stmt_args(s):
                names.update(ir.atom_vars(a))
        elif isinstance(s, ir.If):
            names.update(ir.atom_vars(s.test))
        elif isinstance(s, ir.For):
            names.update(ir.atom_vars(s.iter))
            if s.every is not None:
                names.update(ir.atom_vars(s.every))
        elif isinstance(s, ir.While):
            names.update(ir.atom_vars(s.test))
    return names


def _carried(loop: ir.For) -> set[str]:
    """Names the loop body binds that an iteration may read before binding them: their
    values flow from one iteration to the next (an in-place write ``y[i] = v`` reads y)."""
    bound = _bound(loop.body)
    carried: set[str] = set()

    def read(names: set[str], defined: set[str]) -> None:
        carried.update((names & bound) - defined)

    def visit(block: list[ir.Stmt], defined: set[str]) -> set[str]:
        defined = set(defined)
        for s in block:
            if isinstance(s, ir.Assign):
                read({v for a in ir.stmt_args(s) for v in ir.atom_vars(a)}, defined)
                defined.update(s.targets)
            elif isinstance(s, ir.If):
                read(set(ir.atom_vars(s.test)), defined)
                defined = visit(s.body, defined) & visit(s.orelse, defined)
            elif isinstance(s, ir.For):  # the body may not run: what it binds is not defined
                read(set(ir.atom_vars(s.iter)), defined)
                if s.every is not None:
                    read(set(ir.atom_vars(s.every)), defined)
                visit(s.body, defined | {s.target})
            elif isinstance(s, ir.While):  # the test runs at least once, the body maybe not
                defined = visit(s.test_body, defined)
                read(set(ir.atom_vars(s.test)), defined)
                visit(s.body, defined)
        return defined

    visit(loop.body, {loop.target})
    return carried


def _names(stmt: ir.Stmt) -> set[str]:
    """Every name a (compound) statement reads or binds."""
    names: set[str] = set()
    for s in _walk([stmt]):
        if isinstance(s, ir.Assign):
            names.update(s.targets)
            for a in ir.stmt_args(s):
                names.update(ir.atom_vars(a))
        elif isinstance(s, ir.If):
            names.update(ir.atom_vars(s.test))
        elif isinstance(s, ir.For):
            names.add(s.target)
            names.update(ir.atom_vars(s.iter))
        elif isinstance(s, ir.While):
            names.update(ir.atom_vars(s.test))
        elif isinstance(s, ir.Return):
            names.update(ir.atom_vars(s.value))
    return names
