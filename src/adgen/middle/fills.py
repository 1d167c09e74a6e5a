"""Filled arrays: the arrays of ones that seed a sum's adjoint, multiplied away.

Reverse mode seeds the adjoint of ``np.sum(y)`` with ``rt.unreduce(out_bar, y)``: an array
of ``y``'s shape filled with the cotangent. In ``grad(f)``'s code the cotangent is ``1.0``,
so where adgen reads that code again (``hvp``, ``hessian``, ``grad(grad(f))``, a gradient
called inside a function) the function holds arrays of ones -- and products with them, one
pass over memory each, in the code and in its derivative. Given the call's shapes and
dtypes, :func:`settle_unit_fills` follows the names every element of which holds one number
(made by ``rt.unreduce`` of a literal, then negated, copied, or multiplied by a literal or
another such array; the number computed as NumPy computes each element) and writes a
product of such an array with an array of the product's shape and dtype as a copy of the
other factor (a fill of one), its negation (minus one) or its product with the number, so
the values are the same, bit for bit. The optimizer then drops the filled arrays nothing
reads any more.

>>> import numpy as np
>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> from adgen.middle.shapes import describe
>>> from adgen import runtime as rt
>>> def f(t):
...     ones = rt.unreduce(1.0, t)
...     return -ones * (1.0 - t * t)
>>> lowered = lower(parse_function(f))
>>> print(settle_unit_fills(lowered, (("t", describe(np.ones(3))),)))
... # doctest: +NORMALIZE_WHITESPACE
def f(t):  # <doctest adgen.middle.fills[5]>:1
    ones = rt.unreduce(1.0, t)  # line 2
    out_1 = -ones  # line 3
    out_2 = t * t  # line 3
    out_3 = 1.0 - out_2  # line 3
    out = -out_3  # line 3
    return out  # line 3
>>> def g(t):
...     return np.sum(rt.unreduce(1.0, t) * 2 * np.sin(t))
>>> print(settle_unit_fills(lower(parse_function(g)), (("t", describe(np.ones(3))),)))
... # doctest: +NORMALIZE_WHITESPACE
def g(t):  # <doctest adgen.middle.fills[8]>:1
    out_1 = rt.unreduce(1.0, t)  # line 2
    out_2 = out_1 * 2  # line 2
    out_3 = np.sin(t)  # line 2
    out_4 = out_3 * 2.0  # line 2
    out = np.sum(out_4)  # line 2
    return out  # line 2

Names bound more than once (in a loop), complex and integer values, and functions that
write into arrays (``y[i] = v``: a copy would then share the array the product made
afresh) are left alone.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from typing import Any

import numpy as np

from adgen import ir
from adgen.middle.shapes import Known, Signature, infer
from adgen.rules import registry

# what a product with a fill of one becomes: a copy of the other factor, or its negation
_PRODUCTS = frozenset({"mul", "np.multiply"})
_QUOTIENTS = frozenset({"truediv", "np.divide", "np.true_divide"})
_NEGATIONS = frozenset({"neg", "np.negative"})
_COPIES = frozenset({"assign", "pos", "np.positive"})


def settle_unit_fills(fn: ir.Function, signature: Signature) -> ir.Function:
    """``fn`` with its products by filled arrays written as copies (a fill of one), negations
    (minus one) or products with the number (any other), where the call's shapes show the
    values stay the same."""
    if not signature or not any(
        isinstance(s, ir.Assign) and s.prim.name == "rt.unreduce" for s in fn.statements()
    ):
        return fn
    if any(isinstance(s, ir.Assign) and _writes(s.prim) for s in fn.statements()):
        return fn
    known = infer(fn, signature)
    counts = ir.binding_counts(fn)
    fills: dict[str, float] = {}  # name -> the number every element holds
    numbers: dict[str, int | float] = {}  # name -> the Python number it is bound to
    copy, negate = registry.lookup(registry.assign), registry.lookup(operator.neg)
    multiply, divide = registry.lookup(operator.mul), registry.lookup(operator.truediv)
    assert copy is not None and negate is not None and multiply is not None
    assert divide is not None

    def fill(atom: ir.Atom) -> float | None:
        return fills.get(atom.name) if isinstance(atom, ir.Var) else None

    def literal(atom: ir.Atom) -> int | float | None:
        """The Python number ``atom`` is (a literal, or a name bound once to one)."""
        if isinstance(atom, ir.Const) and type(atom.value) in (int, float):
            return atom.value  # type: ignore[no-any-return]
        return numbers.get(atom.name) if isinstance(atom, ir.Var) else None

    def number(atom: ir.Atom) -> float | None:
        """A fill's number, or a literal's (as the operand it is: weak, of the array's type)."""
        found = literal(atom)
        return fill(atom) if found is None else found

    def track(name: str, value: Any) -> None:
        """Record that every element of ``name`` holds ``value`` (a NumPy computation of the
        element in the result's dtype), if it is a finite real float."""
        k = known.get(name)
        if _is_array(k) and k.dtype.kind == "f":  # type: ignore[union-attr]
            element = np.asarray(value, dtype=k.dtype)  # type: ignore[union-attr]
            if np.isfinite(element) and element == value:
                fills[name] = float(element)

    def settled(s: ir.Assign) -> ir.Assign:
        if len(s.targets) != 1 or counts.get(s.targets[0]) != 1 or s.kwargs:
            return s  # (a name bound again, in a loop: its value may change)
        name, args, prim = s.targets[0], s.args, s.prim.name
        values = [literal(a) for a in args]
        if args and None not in values and prim in _COPIES | _NEGATIONS | _PRODUCTS:
            # Python numbers (the seed 1.0 bound to a name, then scaled): computed as Python
            # computes them
            result: Any = values[0]
            if prim in _NEGATIONS:
                result = -result
            elif prim in _PRODUCTS:
                result = result * values[1]
            if type(result) in (int, float) and math.isfinite(result):
                numbers[name] = result
            return s
        if prim == "rt.unreduce" and len(args) == 2 and values[0] is not None:
            track(name, values[0])
            return s
        if prim in _COPIES and len(args) == 1 and fill(args[0]) is not None:
            track(name, fill(args[0]))
            return s
        if prim in _NEGATIONS and len(args) == 1 and fill(args[0]) is not None:
            track(name, -fill(args[0]))  # type: ignore[operator]
            return s
        if prim not in _PRODUCTS | _QUOTIENTS or len(args) != 2:
            return s
        a, b = number(args[0]), number(args[1])
        if a is not None and b is not None:  # (a fill and a number or two fills)
            dtype = known[name].dtype if name in known else None
            if dtype is not None:
                x, y = np.asarray(a, dtype), np.asarray(b, dtype)
                with np.errstate(all="ignore"):
                    track(name, x * y if prim in _PRODUCTS else x / y)
            return s
        # a fill times an array of the product's shape and dtype: the array times the number
        if fill(args[1]) is not None:
            factor, unit = args[0], fill(args[1])
        elif fill(args[0]) is not None:
            factor, unit = args[1], fill(args[0])
            if prim in _QUOTIENTS:  # the number over the array
                if not same(name, factor):
                    return s
                return dataclasses.replace(s, prim=divide, args=(ir.Const(unit), factor))
        else:
            return s
        if not same(name, factor) or (prim in _QUOTIENTS and unit not in (1.0, -1.0)):
            return s
        if unit == 1.0:
            return dataclasses.replace(s, prim=copy, args=(factor,))
        if unit == -1.0:
            return dataclasses.replace(s, prim=negate, args=(factor,))
        return dataclasses.replace(s, prim=multiply, args=(factor, ir.Const(unit)))

    def same(target: str, atom: ir.Atom) -> bool:
        """Does ``atom`` have the shape, dtype and kind of value ``target`` gets?"""
        a, b = known.get(target), known.get(atom.name) if isinstance(atom, ir.Var) else None
        return _alike(a, b)

    return dataclasses.replace(fn, body=ir.map_assigns(fn.body, settled))


def _writes(prim: registry.Primitive) -> bool:
    """May a call of ``prim`` write into an array some name holds?"""
    return prim.name == "setitem" or (prim.refusal is not None and not prim.reads_only)


def _is_array(k: Known | None) -> bool:
    return k is not None and k.kind == "array"


def _alike(a: Known | None, b: Known | None) -> bool:
    return (
        a is not None
        and b is not None
        and (a.shape, a.dtype, a.kind) == (b.shape, b.dtype, b.kind)
        and a.dtype.kind == "f"
    )
