"""Python's arithmetic operators and NumPy's arithmetic ufuncs.

Conventions at kinks: ``abs`` has derivative 0 at 0 (``np.sign``);
``maximum``/``minimum`` split the derivative evenly between tied operands.
"""

import operator

import numpy as np

from .registry import assign, rule


@rule(assign, elementwise=True, view=True)
def assign_(x):
    """``y = x`` (a copy of a name rebound inside control flow)."""

    def jvp(dx):
        return dx

    def vjp(g):
        return g


@rule(operator.add, np.add, elementwise=True)
def add(x, y):
    def jvp_x(dx):
        return dx

    def jvp_y(dy):
        return dy

    def vjp_x(g):
        return g

    def vjp_y(g):
        return g


@rule(operator.sub, np.subtract, elementwise=True)
def subtract(x, y):
    def jvp_x(dx):
        return dx

    def jvp_y(dy):
        return -dy

    def vjp_x(g):
        return g

    def vjp_y(g):
        return -g


@rule(operator.mul, np.multiply, elementwise=True)
def multiply(x, y):
    def jvp_x(dx):
        return dx * y

    def jvp_y(dy):
        return x * dy

    def vjp_x(g):
        return g * y

    def vjp_y(g):
        return g * x


@rule(operator.truediv, np.divide, np.true_divide, elementwise=True)
def divide(ans, x, y):
    def jvp_x(dx):
        return dx / y

    def jvp_y(dy):
        return -(dy * ans / y)

    def vjp_x(g):
        return g / y

    def vjp_y(g):
        return -(g * ans / y)


@rule(operator.pow, np.power, pow, elementwise=True)
def power(ans, x, y):
    """d/dy x**y = log(x) x**y; where x == 0 the log is taken as 0 (x**y is 0 or 1 there)."""

    def jvp_x(dx):
        return dx * y * x ** (y - 1)

    def jvp_y(dy):
        return dy * ans * np.log(np.where(x == 0, 1.0, x))

    def vjp_x(g):
        return g * y * x ** (y - 1)

    def vjp_y(g):
        return g * ans * np.log(np.where(x == 0, 1.0, x))


@rule(operator.mod, np.mod, np.remainder, elementwise=True)
def mod(x, y):
    """x % y = x - floor(x / y) * y, with floor piecewise constant."""

    def jvp_x(dx):
        return dx

    def jvp_y(dy):
        return -dy * np.floor(x / y)

    def vjp_x(g):
        return g

    def vjp_y(g):
        return -g * np.floor(x / y)


@rule(operator.neg, np.negative, elementwise=True)
def negative(x):
    def jvp(dx):
        return -dx

    def vjp(g):
        return -g


@rule(operator.pos, np.positive, elementwise=True)
def positive(x):
    def jvp(dx):
        return dx

    def vjp(g):
        return g


@rule(abs, np.absolute, np.fabs, elementwise=True)
def absolute(x):
    def jvp(dx):
        return dx * np.sign(x)

    def vjp(g):
        return g * np.sign(x)


@rule(np.maximum, elementwise=True)
def maximum(x, y):
    def jvp_x(dx):
        return np.where(x > y, dx, np.where(x == y, 0.5 * dx, 0.0))

    def jvp_y(dy):
        return np.where(y > x, dy, np.where(x == y, 0.5 * dy, 0.0))

    def vjp_x(g):
        return np.where(x > y, g, np.where(x == y, 0.5 * g, 0.0))

    def vjp_y(g):
        return np.where(y > x, g, np.where(x == y, 0.5 * g, 0.0))


@rule(np.minimum, elementwise=True)
def minimum(x, y):
    def jvp_x(dx):
        return np.where(x < y, dx, np.where(x == y, 0.5 * dx, 0.0))

    def jvp_y(dy):
        return np.where(y < x, dy, np.where(x == y, 0.5 * dy, 0.0))

    def vjp_x(g):
        return np.where(x < y, g, np.where(x == y, 0.5 * g, 0.0))

    def vjp_y(g):
        return np.where(y < x, g, np.where(x == y, 0.5 * g, 0.0))


@rule(np.where, elementwise=True)
def where(condition, x, y):
    def jvp_x(dx):
        return np.where(condition, dx, 0.0)

    def jvp_y(dy):
        return np.where(condition, 0.0, dy)

    def vjp_x(g):
        return np.where(condition, g, 0.0)

    def vjp_y(g):
        return np.where(condition, 0.0, g)


@rule(np.clip, elementwise=True)
def clip(a, a_min, a_max):
    """Inside [a_min, a_max] (bounds included) the derivative goes to ``a``, else to the bound."""

    def jvp_a(da):
        if a_min is None:
            return np.where(a <= a_max, da, 0.0)
        if a_max is None:
            return np.where(a >= a_min, da, 0.0)
        return np.where((a >= a_min) & (a <= a_max), da, 0.0)

    def jvp_a_min(dlo):
        return np.where(a < a_min, dlo, 0.0)

    def jvp_a_max(dhi):
        return np.where(a > a_max, dhi, 0.0)

    def vjp_a(g):
        if a_min is None:
            return np.where(a <= a_max, g, 0.0)
        if a_max is None:
            return np.where(a >= a_min, g, 0.0)
        return np.where((a >= a_min) & (a <= a_max), g, 0.0)

    def vjp_a_min(g):
        return np.where(a < a_min, g, 0.0)

    def vjp_a_max(g):
        return np.where(a > a_max, g, 0.0)
