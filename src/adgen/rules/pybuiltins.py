"""Python's builtins ``float``, ``min``, ``max`` and ``sum`` (``abs`` and ``pow`` are with
the arithmetic, ``int``, ``len`` and ``range`` with the non-differentiable functions).

Conventions: ``min(a, b)`` / ``max(a, b)`` of two scalars split the derivative evenly at
ties (as ``np.minimum`` / ``np.maximum``); ``sum(x)`` of an array adds its rows
(``0 + x[0] + x[1] + ...``, the derivative of ``np.sum(x, axis=0)``), with a ``start``
that is not differentiated; ``float(x)`` passes the derivative through, and its
cotangent gets ``x``'s shape and dtype back.
"""

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import nondifferentiable, rule


@rule(float)
def builtin_float(x):
    def jvp(dx):
        return np.asarray(dx).item()  # a Python float, as float(x) is

    def vjp(g):
        return np.full_like(x, g)


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


@rule(sum)
def builtin_sum(iterable, start=0):
    def jvp(d):
        return np.sum(d, axis=0)

    def vjp(g):
        return rt.unreduce(g, iterable, axis=0)


nondifferentiable(isinstance)
