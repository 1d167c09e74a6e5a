"""Python's builtins ``float``, ``min``, ``max`` and ``sum`` (``abs`` and ``pow`` are with
the arithmetic, ``int``, ``len`` and ``range`` with the non-differentiable functions).

``max(items)`` / ``min(items)`` of one sequence (or of three values or more) is
``rt.max_items`` / ``rt.min_items`` (lowering calls it so: ``max(a, b)`` has the rule
below); the items equal to the result share its derivative evenly, as ``np.max``'s do.

Conventions: ``min(a, b)`` / ``max(a, b)`` of two scalars split the derivative evenly at
ties (as ``np.minimum`` / ``np.maximum``); ``sum(xs, start)`` is Python's
``start + xs[0] + xs[1] + ...`` of a tuple or list (a literal, a list the function built)
or of an array's rows, each ``+`` broadcasting: each item's cotangent is the result's summed
down to the item's shape (``start`` is differentiated too); ``float(x)`` passes the
derivative through, and its cotangent gets ``x``'s shape and dtype back.
"""

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import nondifferentiable, rule, sequence_rule
from adgen.rules.samples import example


@rule(float)
def builtin_float(x):
    def jvp(dx):
        return np.asarray(dx).item()  # a Python float, as float(x) is

    def vjp(g):
        return np.full_like(x, g)


@rule(
    complex,
    complex=True,
    examples=[
        example("complex(x, y) * complex(y, 2.0)", x=None, y=None, complex=False),
        example("complex(x, y)", x=None, y=None, complex=("y",)),
    ],
)
def builtin_complex(real=0, imag=0):
    """``real + 1j * imag``: holomorphic in each argument, so its templates are those of a
    sum (adgen's convention for complex numbers; a real argument's cotangent is then the
    real part of these: ``Re(g)`` and ``-Im(g)``)."""

    def jvp_real(d):
        return d * (1.0 + 0.0j)

    def jvp_imag(d):
        return d * 1j

    def vjp_real(g):
        return g

    def vjp_imag(g):
        return g * 1j


@rule(max)
def builtin_max(x, y):
    def jvp_x(dx):
        return dx if x > y else 0.5 * dx if x == y else 0.0 * dx

    def jvp_y(dy):
        return dy if y > x else 0.5 * dy if x == y else 0.0 * dy

    def vjp_x(g):
        return g if x > y else 0.5 * g if x == y else 0.0 * g

    def vjp_y(g):
        return g if y > x else 0.5 * g if x == y else 0.0 * g


@rule(min)
def builtin_min(x, y):
    def jvp_x(dx):
        return dx if x < y else 0.5 * dx if x == y else 0.0 * dx

    def jvp_y(dy):
        return dy if y < x else 0.5 * dy if x == y else 0.0 * dy

    def vjp_x(g):
        return g if x < y else 0.5 * g if x == y else 0.0 * g

    def vjp_y(g):
        return g if y < x else 0.5 * g if x == y else 0.0 * g


@sequence_rule(
    sum,
    rt.sum_items,
    sequence="iterable",
    examples=[
        example("sum((a, b))", a=(3,), b=(3,), f32=True),
        example("sum([a * a, b, 2.0])", a=None, b=(2, 3)),
        example("sum(a)", a=(4, 3)),
        example("sum((a, b), c)", a=(), b=(3,), c=(2, 1)),
        example("rt.sum_items((a, b), c)", a=(2,), b=(), c=None),
    ],
    complex=True,
)
def builtin_sum(ans, iterable, start=0):
    def jvp(parts):
        return rt.sum_items(parts, rt.zeros_like(ans))

    def vjp(g, k):
        return rt.unbroadcast(g, iterable[k])

    def jvp_start(d):
        return d + rt.zeros_like(ans)

    def vjp_start(g):
        return rt.unbroadcast(g, start)


@sequence_rule(
    rt.max_items,
    rt.min_items,
    sequence="iterable",
    examples=[
        example("rt.max_items((a, b, c))", a=None, b=None, c=None),
        example("rt.min_items([a * a, b, 0.5])", a=None, b=()),
        example("rt.max_items(a)", a=(4,)),
    ],
)
def builtin_extremum_items(ans, iterable):
    def jvp(parts):
        return rt.extremum_jvp(parts, rt.extremum_shares(iterable, ans))

    def vjp(g, k):
        return g * rt.extremum_shares(iterable, ans)[k]


nondifferentiable(isinstance, any, all, rt.extremum_shares)
