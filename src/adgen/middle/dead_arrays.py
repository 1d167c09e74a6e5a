"""Arrays the function makes, writes into and never reads for its result: dropped whole.

Library functions often compute more than the caller keeps. scikit-learn's
``_huber_loss_and_gradient`` returns ``(loss, grad)``, and a user differentiating the loss
(``lambda w: _huber_loss_and_gradient(w, X, y, ...)[0]``) has no use for ``grad``: an array
made by ``np.zeros``, filled slice by slice (``grad[:n] = ...``, ``grad[-1] -= ...``), read
only to be written back. Dead-code elimination drops pure statements nothing reads, but a
write into an array is not pure -- it changes an object other names may see -- so the array,
its writes and everything computed only to be written there stayed, in the primal sweep of
every gradient.

An array is dropped with its writes when nothing else can see it: every binding of its
name makes a fresh array (``np.zeros``, ``np.full``, ``.copy()``, elementwise arithmetic),
writes into such an array, or takes a view of one (``grad[:n]``, ``.reshape``, ``.T``), and
every read of it is by such a statement or by a pure one whose result is as dead. A name
returned, tested by an ``if`` or a loop, passed to a call that is not pure (run as written,
an ``append``, adgen's own checks) or written into another array keeps the array, and so
does a view of an array the function did not make.

>>> import numpy as np
>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> def f(x, n):
...     grad = np.zeros(n + 1)
...     grad[:n] = 2.0 * x
...     grad[-1] = grad[-1] - np.sum(x)
...     return np.sum(x * x)
>>> fn = lower(parse_function(f))
>>> from adgen.middle.optimize import pure
>>> drop_dead_arrays(fn, pure)
True
>>> print(fn)  # doctest: +NORMALIZE_WHITESPACE
def f(x, n):  # <doctest adgen.middle.dead_arrays[3]>:1
    out_1 = x * x  # line 5
    out = np.sum(out_1)  # line 5
    return out  # line 5

The values computed only to be written there (``2.0 * x``, ``np.sum(x)``, ``n + 1``) go
with it.
"""

from __future__ import annotations

from collections.abc import Callable

from adgen import ir
from adgen.rules.registry import Primitive

# calls that make a new array of a shape and a fill (no derivative passes them)
MAKERS = frozenset(
    {
        "np.zeros", "np.ones", "np.empty", "np.full", "np.zeros_like", "np.ones_like",
        "np.empty_like", "np.full_like",
    }
)  # fmt: skip
# calls that return a new array no other name sees
_FRESH = MAKERS | {".copy", "np.copy"}
# calls whose result may be (a view of) their first argument
_VIEWS = frozenset(
    {
        "getitem", "assign", ".T", "np.reshape", "np.ravel", "np.transpose", "np.squeeze",
        "np.expand_dims", "np.swapaxes", "np.moveaxis",
    }
)  # fmt: skip


def drop_dead_arrays(fn: ir.Function, pure: Callable[[Primitive], bool]) -> bool:
    """Drop the arrays nothing that matters reads, with their writes (see the module's
    documentation); ``pure`` tells the operations that only compute their result (the
    optimizer's). True if anything was dropped."""

    assigns = [s for s in fn.statements() if isinstance(s, ir.Assign)]
    written = {s.targets[0] for s in assigns if s.prim.name == "setitem" and s.targets}
    if not written:
        return False
    bindings: dict[str, list[ir.Assign]] = {}
    for s in assigns:
        for t in s.targets:
            bindings.setdefault(t, []).append(s)
    readers: dict[str, list[ir.Stmt]] = {}
    for kind, name, at in ir.events(fn.body):
        if kind == "read":
            readers.setdefault(name, []).append(at)
    # names bound only by assignments: not parameters or loop targets
    others = set(fn.params) | {s.target for s in fn.statements() if isinstance(s, ir.For)}
    dead = set(bindings) - others

    def first(s: ir.Assign) -> str | None:
        return s.args[0].name if s.args and isinstance(s.args[0], ir.Var) else None

    def fresh_binding(s: ir.Assign) -> bool:  # (an array of the function's own)
        name = s.prim.name
        if name in _FRESH:
            return s.prim.refusal is None
        if name == "setitem" or name in _VIEWS:
            return first(s) in fresh
        return s.prim.elementwise and pure(s.prim)

    changed = True
    while changed:
        changed = False
        # the dead names whose every binding makes an array of the function's own
        fresh = set(dead)
        grew = True
        while grew:
            grew = False
            for name in list(fresh):
                if not all(fresh_binding(s) for s in bindings[name]):
                    fresh.discard(name)
                    grew = True
        for name in list(dead):
            own = bindings[name]
            ok = all(
                all(t in dead for t in s.targets)
                and (pure(s.prim) or s.prim.name in _FRESH or s.prim.name == "setitem")
                for s in own
            )
            if name in written and name not in fresh:
                ok = False  # (a write into an array another name may see)
            if ok:
                ok = all(
                    isinstance(r, ir.Assign) and r.targets and all(t in dead for t in r.targets)
                    for r in readers.get(name, [])
                )
            if not ok:
                dead.discard(name)
                changed = True
    if not dead:
        return False
    drop = {id(s) for s in assigns if s.targets and all(t in dead for t in s.targets)}
    fn.body = _without(fn.body, drop)
    return bool(drop)


def _without(block: list[ir.Stmt], drop: set[int]) -> list[ir.Stmt]:
    kept: list[ir.Stmt] = []
    for s in block:
        if id(s) in drop:
            continue
        if isinstance(s, ir.If):
            s.body, s.orelse = _without(s.body, drop), _without(s.orelse, drop)
        elif isinstance(s, ir.For):
            s.body = _without(s.body, drop)
        elif isinstance(s, ir.While):
            s.test_body, s.body = _without(s.test_body, drop), _without(s.body, drop)
        kept.append(s)
    return kept
