"""The shift of a log-sum-exp carries no derivative.

Code that computes a log-sum-exp, a log-softmax or a softmax stably subtracts the maximum
first::

    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m      # log-sum-exp
    logp = (z - m) - np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))  # log-softmax
    p = np.exp(z - m) / np.sum(np.exp(z - m), axis=1, keepdims=True)    # softmax

Each result is the same for any ``m`` that is constant over the summed axes, so the
derivatives reaching ``m`` along its reads cancel exactly: their sum is zero. Differentiated
as written, derivative code computes those terms anyway (the maximum's adjoint: its ties
found and the cotangent split among them, and the sums feeding it), and adds noise of the
order of rounding where the exact answer is zero. JAX's ``logsumexp`` cuts it with
``stop_gradient``; this pass does the same for code written by hand: where every read of
``m`` is in such a pattern, the maximum is computed as written but carries no derivative
(its statement gets a copy of the primitive without one).

Recognised, for ``m = np.max(x, ...)`` (``np.amax``, ``x.max(...)``) read nowhere else:

* ``d = z - m`` (one or more), each read only by ``e = np.exp(d)`` and by ``d - L``;
* ``e`` read only by ``S = np.sum(e, ...)`` and by ``e / S``;
* ``S`` read only by ``L = np.log(S)`` and by ``e / S``;
* ``L`` read only by ``L + m`` (or ``m + L``) and by ``d - L``;

with the maximum over all axes, or over the sum's axes with both ``keepdims=True`` (``m``
constant over each group the sum adds up). Every name involved is bound once, and all
these statements stand in one block, each after the values it reads: every read sees the
values of one pass through the block (a shift by the maximum of another loop iteration, or
of another branch, does not cancel).

>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> import numpy as np
>>> def f(z):
...     m = np.max(z, axis=1, keepdims=True)
...     return np.sum(np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m)
>>> fn = lower(parse_function(f))
>>> [s.prim.differentiable for s in fn.statements() if hasattr(s, "prim")][:2]
[True, True]
>>> cut_shifts(fn)
['m']
>>> [s.prim.differentiable for s in fn.statements() if hasattr(s, "prim")][:2]
[False, True]
"""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import TYPE_CHECKING, TypeGuard

from adgen import ir

if TYPE_CHECKING:
    from adgen.rules.registry import Primitive

_MAX = frozenset({"np.max", "np.amax", ".max"})
_SUM = frozenset({"np.sum", ".sum"})


def cut_shifts(fn: ir.Function) -> list[str]:
    """Mark (in place) the maxima of ``fn`` that only shift log-sum-exps as carrying no
    derivative; the names they bind, in order."""
    binds: dict[str, int] = defaultdict(int)
    reads: dict[str, list[ir.Assign | ir.Stmt]] = defaultdict(list)
    defs: dict[str, ir.Assign] = {}
    for kind, name, stmt in ir.events(fn.body):
        if kind == "bind":
            binds[name] += 1
            if isinstance(stmt, ir.Assign) and len(stmt.targets) == 1:
                defs[name] = stmt
        else:
            reads[name].append(stmt)
    where = _positions(fn.body)
    cut = []
    for name, stmt in list(defs.items()):
        if stmt.prim.name not in _MAX or binds[name] != 1:
            continue
        names: set[str] = set()
        if _only_shifts(name, stmt, binds, reads, names) and _in_order(names, defs, reads, where):
            stmt.prim = _without_derivative(stmt.prim)
            cut.append(name)
    return cut


def _positions(
    block: list[ir.Stmt], out: dict[int, tuple[int, int]] | None = None
) -> dict[int, tuple[int, int]]:
    """id of each statement -> (id of its block, its index there)."""
    out = {} if out is None else out
    for i, stmt in enumerate(block):
        out[id(stmt)] = (id(block), i)
        for inner in ("body", "orelse", "test_body"):
            nested = getattr(stmt, inner, None)
            if isinstance(nested, list):
                _positions(nested, out)
    return out


def _in_order(
    names: set[str],
    defs: dict[str, ir.Assign],
    reads: dict[str, list[ir.Stmt]],
    where: dict[int, tuple[int, int]],
) -> bool:
    """Are the pattern's statements in one block, each read after the value it reads is
    made? Then every read sees the values of one pass through the block (a shift made in a
    loop's earlier iteration, or in another branch, is another value of ``m``)."""
    blocks = {where[id(defs[n])][0] for n in names if n in defs}
    if len(blocks) != 1 or any(n not in defs for n in names):
        return False
    for n in names:
        made = where[id(defs[n])]
        for stmt in reads[n]:
            at = where.get(id(stmt))
            if at is None or at[0] != made[0] or at[1] <= made[1]:
                return False
    return True


def _arguments(stmt: ir.Assign) -> dict[str, ir.Atom]:
    """The call's arguments by parameter name (positional ones by the rule's order)."""
    names = [p.name for p in stmt.prim.params]
    out = dict(zip(names, stmt.args))
    out.update(stmt.kwargs)
    return out


def _static(stmt: ir.Assign, key: str, default: object) -> tuple[bool, object]:
    atom = _arguments(stmt).get(key)
    if atom is None:
        return True, default
    if isinstance(atom, ir.Const):
        return True, atom.value
    return False, None


def _var(atom: ir.Atom) -> str | None:
    return atom.name if isinstance(atom, ir.Var) else None


def _is(stmt: ir.Stmt, prim: str | frozenset[str], *args: str | None) -> TypeGuard[ir.Assign]:
    """Is ``stmt`` a call of ``prim`` whose first arguments are the names ``args`` (None:
    any atom) and no others?"""
    if not isinstance(stmt, ir.Assign) or len(stmt.targets) != 1:
        return False
    names = prim if isinstance(prim, frozenset) else frozenset({prim})
    if stmt.prim.name not in names or len(stmt.args) < len(args):
        return False
    return all(a is None or _var(atom) == a for a, atom in zip(args, stmt.args))


def _reads_once(stmt: ir.Assign, name: str) -> bool:
    return [_var(a) for a in stmt.args].count(name) == 1


def _only_shifts(
    m: str,
    top: ir.Assign,
    binds: dict[str, int],
    reads: dict[str, list[ir.Stmt]],
    names: set[str],
) -> bool:
    """Are all reads of ``m`` shifts of log-sum-exps (the module's list)? ``names`` gets
    the names of the pattern: ``m``, the shifted values, exponentials, sums and logs."""
    ok_axis, axis = _static(top, "axis", None)
    ok_keep, keepdims = _static(top, "keepdims", False)
    if not (ok_axis and ok_keep) or (axis is not None and keepdims is not True):
        return False
    # the reads of m: shifts `d = z - m`, and `L + m`
    shifts, adds = [], []
    for stmt in reads[m]:
        if _is(stmt, "sub", None, m) and _var(stmt.args[0]) != m and len(stmt.args) == 2:
            shifts.append(stmt)
        elif _is(stmt, "add") and len(stmt.args) == 2 and _reads_once(stmt, m):
            adds.append(stmt)
        else:
            return False
    if not shifts:
        return False
    logs: set[str] = set()  # the L each shifted value meets
    names.add(m)
    ds = {s.targets[0] for s in shifts}
    for d in ds:
        if binds[d] != 1:
            return False
        exps = [s for s in reads[d] if _is(s, "np.exp", d)]
        others = [s for s in reads[d] if not _is(s, "np.exp", d)]
        if len(exps) != 1 or not all(_is(s, "sub", d) and len(s.args) == 2 for s in others):
            return False
        e = exps[0].targets[0]
        names.add(e)
        sums = [s for s in reads[e] if _is(s, _SUM, e)]
        if binds[e] != 1 or len(sums) != 1:
            return False
        total = sums[0].targets[0]
        names.add(total)
        ok_a, sum_axis = _static(sums[0], "axis", None)
        ok_k, sum_keep = _static(sums[0], "keepdims", False)
        extra = set(_arguments(sums[0])) - {"a", "axis", "keepdims"}
        if not (ok_a and ok_k) or extra or binds[total] != 1:
            return False
        if axis is not None and (sum_axis != axis or sum_keep is not True):
            return False
        if sum_axis is not None and sum_keep is not True and others:
            return False  # (d - L would meet L along the wrong axes)
        for s in reads[e]:  # the sum, and softmax divisions e / S
            if s is not sums[0] and not (_is(s, "truediv", e, total) and len(s.args) == 2):
                return False
        log = [s for s in reads[total] if _is(s, "np.log", total)]
        for s in reads[total]:
            if s not in log and not (_is(s, "truediv", e, total) and len(s.args) == 2):
                return False
        if len(log) > 1 or (not log and (others or adds)):
            return False
        if log:
            big_l = log[0].targets[0]
            if binds[big_l] != 1:
                return False
            logs.add(big_l)
            for s in reads[big_l]:
                minus = _is(s, "sub", None, big_l) and _var(s.args[0]) in ds
                if not (minus or s in adds):
                    return False
        for s in others:  # d - L: the L of this d
            if not (log and _is(s, "sub", d, log[0].targets[0])):
                return False
    for s in adds:  # L + m: an L of these shifts
        if not any(_var(a) in logs for a in s.args):
            return False
    names.update(ds | logs)
    return True


def _without_derivative(prim: Primitive) -> Primitive:
    """``prim`` as a primitive whose result carries no derivative (written the same)."""
    new = copy.copy(prim)
    new.differentiable = False
    new.jvp, new.vjp, new.batched = {}, {}, {}
    new.diff_params = ()
    new.derivative_cut = True
    return new
