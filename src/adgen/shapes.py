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
(['x'], ['x', 'y'], ['out'])
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
    change shape, so it gets a class of its own.
    """
    multi = multi or set()
    classes: Classes = {
        p: frozenset() if p in scalars and p not in multi else frozenset({p}) for p in fn.params
    }
    classes[SCALARS] = frozenset(fn.scalars)
    for stmt in fn.statements():
        if isinstance(stmt, ir.Assign):
            if stmt.prim.elementwise and len(stmt.targets) == 1 and stmt.targets[0] not in multi:
                cls: frozenset[str] = frozenset()
                for atom in ir.stmt_args(stmt):
                    cls |= atom_class(atom, classes)
                classes[stmt.targets[0]] = cls
            else:
                for t in stmt.targets:
                    classes[t] = frozenset({t})
        elif isinstance(stmt, ir.For):
            classes[stmt.target] = frozenset({stmt.target})
    return classes
