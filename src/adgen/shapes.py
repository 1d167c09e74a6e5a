"""Static broadcast classes: which values provably have the same shape.

Shapes are unknown when adgen transforms a function, but broadcasting has
algebra: the shape of an elementwise result is the broadcast of its operands'
shapes, and broadcasting is associative, commutative and idempotent. So each
value gets the *set* of shape sources broadcast together to make it (a
parameter, a global, or the result of a non-elementwise operation such as a
reduction); two values with the same set have the same shape. A Python scalar
constant contributes nothing. This lets the generated code skip
``rt.unbroadcast`` and ``np.broadcast_to`` wherever they would do nothing.

>>> import numpy as np
>>> from adgen.parse import parse_function
>>> from adgen.lower import lower
>>> def f(x, y):
...     a = np.sin(x) * 2.0
...     return np.sum(a + x * y)
>>> classes = broadcast_classes(lower(parse_function(f)))
>>> sorted(classes["a"]), sorted(classes["out_2"]), sorted(classes["out"])
(['x'], ['x', 'y'], [])

(``np.sum`` without an axis is one number: its class is empty, like a scalar's.)
"""

from __future__ import annotations

from . import ir

Classes = dict[str, frozenset[str]]
SCALARS = "<scalars>"  # entry listing the outside names known to be Python numbers


def atom_class(atom: ir.Atom, classes: Classes) -> frozenset[str]:
    """The broadcast class of an atom (empty for a scalar constant)."""
    if isinstance(atom, ir.Var):
        return classes.get(atom.name, frozenset({atom.name}))
    if isinstance(atom, ir.Free) and atom.name in classes.get(SCALARS, frozenset()):
        return frozenset()
    if isinstance(atom, ir.Free):
        return frozenset({"<global>" + atom.name})
    if isinstance(atom, ir.Const) and isinstance(atom.value, (int, float, bool)):
        return frozenset()
    return frozenset({repr(atom)})


def broadcast_classes(
    fn: ir.Function, scalars: frozenset[str] = frozenset(), multi: set[str] | None = None
) -> Classes:
    """Each local name's broadcast class; parameters in ``scalars`` are known to be scalars.

    A name bound more than once (``multi``: rebound, or bound inside a loop or branch) may
    change shape, so it gets a class of its own -- unless every value ever bound to it is a
    scalar (an empty class), which a fixed point over all its bindings proves: then it is a
    scalar too. Loop counters over ``range`` are integers, so scalars.
    """
    multi = multi or set()
    scalar_names = {p for p in fn.params if p in scalars} | {
        s.target for s in fn.statements() if isinstance(s, ir.For)
    }
    scalar_names |= multi - set(fn.params)  # optimistic start for rebound names
    while True:
        classes = _classes(fn, scalars, multi, scalar_names)
        widened = set()
        for stmt in fn.statements():
            if isinstance(stmt, ir.Assign) and multi.intersection(stmt.targets):
                for t in stmt.targets:
                    if (
                        t in scalar_names
                        and t in multi
                        and _bound_class(stmt, classes) != frozenset()
                    ):
                        widened.add(t)
        if not widened:
            return classes
        scalar_names -= widened


def _bound_class(stmt: ir.Assign, classes: Classes) -> frozenset[str] | None:
    """The class of the value an assignment binds (None: not known from its operands)."""
    if stmt.prim.name == "setitem":
        return atom_class(stmt.args[0], classes)  # writing into an array keeps its shape
    if not stmt.prim.differentiable and stmt.prim.name in ("len", "int", "range"):
        return frozenset()
    if stmt.prim.full_reduction and len(stmt.targets) == 1:  # np.sum(x): one number
        bound = stmt.prim.bind(stmt.args, stmt.kwargs)
        axis, keepdims = bound.get("axis"), bound.get("keepdims")
        if (axis is None or axis == ir.Const(None)) and (
            keepdims is None or keepdims == ir.Const(False)
        ):
            return frozenset()
    if not stmt.prim.elementwise or len(stmt.targets) != 1:
        return None
    cls: frozenset[str] = frozenset()
    for atom in ir.stmt_args(stmt):
        cls |= atom_class(atom, classes)
    return cls


def _classes(
    fn: ir.Function, scalars: frozenset[str], multi: set[str], scalar_names: set[str]
) -> Classes:
    classes: Classes = {
        p: frozenset() if p in scalar_names and (p not in multi or p in scalars) else frozenset({p})
        for p in fn.params
    }
    classes[SCALARS] = frozenset(fn.scalars)
    for name in scalar_names:
        classes.setdefault(name, frozenset())
    for stmt in fn.statements():
        if isinstance(stmt, ir.Assign):
            bound = _bound_class(stmt, classes)
            for t in stmt.targets:
                if t in multi:
                    classes[t] = frozenset() if t in scalar_names else frozenset({t})
                elif bound is not None:
                    classes[t] = bound
                else:
                    classes[t] = frozenset({t})
        elif isinstance(stmt, ir.For):
            classes[stmt.target] = frozenset()
    return classes


def is_scalar(name: str, classes: Classes) -> bool:
    """Is this local name provably a scalar (its class is empty)?"""
    return classes.get(name) == frozenset()
