"""NumPy's differentiable elementwise functions of one argument.

Each rule returns the derivative f'(x) (``ans`` is f(x)); adgen emits
``x_dot * f'(x)`` in forward mode and ``g * f'(x)`` in reverse mode.
Conventions: ``sqrt`` at 0 gives ``inf`` (as 1/(2*sqrt(0)) does).
"""

import math

import numpy as np

from .registry import rule, unary


@unary(np.sin)
def sin(x):
    return np.cos(x)


@unary(np.cos)
def cos(x):
    return -np.sin(x)


@unary(np.tan)
def tan(ans, x):
    return 1.0 + ans * ans


@unary(np.arcsin)
def arcsin(x):
    return 1.0 / np.sqrt(1.0 - x * x)


@unary(np.arccos)
def arccos(x):
    return -1.0 / np.sqrt(1.0 - x * x)


@unary(np.arctan)
def arctan(x):
    return 1.0 / (1.0 + x * x)


@unary(np.sinh)
def sinh(x):
    return np.cosh(x)


@unary(np.cosh)
def cosh(x):
    return np.sinh(x)


@unary(np.tanh)
def tanh(ans, x):
    return 1.0 - ans * ans


@unary(np.exp)
def exp(ans, x):
    return ans


@unary(np.exp2)
def exp2(ans, x):
    return ans * math.log(2.0)


@unary(np.expm1)
def expm1(ans, x):
    return ans + 1.0


@unary(np.log1p)
def log1p(x):
    return 1.0 / (1.0 + x)


@unary(np.square)
def square(x):
    return 2.0 * x


@unary(np.reciprocal)
def reciprocal(ans, x):
    return -ans * ans


@rule(np.log, elementwise=True)
def log(x):
    def jvp(dx):
        return dx / x

    def vjp(g):
        return g / x


@rule(np.log2, elementwise=True)
def log2(x):
    def jvp(dx):
        return dx / (x * math.log(2.0))

    def vjp(g):
        return g / (x * math.log(2.0))


@rule(np.log10, elementwise=True)
def log10(x):
    def jvp(dx):
        return dx / (x * math.log(10.0))

    def vjp(g):
        return g / (x * math.log(10.0))


@rule(np.sqrt, elementwise=True)
def sqrt(ans, x):
    def jvp(dx):
        return dx / (2.0 * ans)

    def vjp(g):
        return g / (2.0 * ans)
