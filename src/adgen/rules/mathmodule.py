"""The scalar functions of Python's :mod:`math` module.

Their derivatives use :mod:`math` too, so derivative code of scalar Python
stays on Python floats (no NumPy call per operation).
"""

import math

from .registry import rule, unary


@unary(math.sin)
def sin(x):
    return math.cos(x)


@unary(math.cos)
def cos(x):
    return -math.sin(x)


@unary(math.tan)
def tan(ans, x):
    return 1.0 + ans * ans


@unary(math.asin)
def asin(x):
    return 1.0 / math.sqrt(1.0 - x * x)


@unary(math.acos)
def acos(x):
    return -1.0 / math.sqrt(1.0 - x * x)


@unary(math.atan)
def atan(x):
    return 1.0 / (1.0 + x * x)


@unary(math.sinh)
def sinh(x):
    return math.cosh(x)


@unary(math.cosh)
def cosh(x):
    return math.sinh(x)


@unary(math.tanh)
def tanh(ans, x):
    return 1.0 - ans * ans


@unary(math.asinh)
def asinh(x):
    return 1.0 / math.sqrt(x * x + 1.0)


@unary(math.acosh)
def acosh(x):
    return 1.0 / math.sqrt(x * x - 1.0)


@unary(math.atanh)
def atanh(x):
    return 1.0 / (1.0 - x * x)


@unary(math.exp)
def exp(ans, x):
    return ans


@unary(math.expm1)
def expm1(ans, x):
    return ans + 1.0


@unary(math.log1p)
def log1p(x):
    return 1.0 / (1.0 + x)


@unary(math.erf)
def erf(x):
    return 2.0 / math.sqrt(math.pi) * math.exp(-x * x)


@unary(math.erfc)
def erfc(x):
    return -2.0 / math.sqrt(math.pi) * math.exp(-x * x)


@rule(math.sqrt, elementwise=True)
def sqrt(ans, x):
    """At 0 the derivative is infinite: ``inf * dx`` (nan when dx is 0, as NumPy gives)."""

    def jvp(dx):
        return dx / (2.0 * ans) if ans != 0.0 else dx * math.inf

    def vjp(g):
        return g / (2.0 * ans) if ans != 0.0 else g * math.inf


@rule(math.log, elementwise=True)
def log(ans, x, base=None):
    def jvp_x(dx):
        if base is None:
            return dx / x
        return dx / (x * math.log(base))

    def jvp_base(db):
        return -db * ans / (base * math.log(base))

    def vjp_x(g):
        if base is None:
            return g / x
        return g / (x * math.log(base))

    def vjp_base(g):
        return -g * ans / (base * math.log(base))


@rule(math.log2, elementwise=True)
def log2(x):
    def jvp(dx):
        return dx / (x * math.log(2.0))

    def vjp(g):
        return g / (x * math.log(2.0))


@rule(math.log10, elementwise=True)
def log10(x):
    def jvp(dx):
        return dx / (x * math.log(10.0))

    def vjp(g):
        return g / (x * math.log(10.0))


@rule(math.pow, elementwise=True)
def pow_(ans, x, y):
    def jvp_x(dx):
        return dx * y * math.pow(x, y - 1.0)

    def jvp_y(dy):
        return dy * ans * math.log(x) if x > 0 else (0.0 if x == 0 else math.nan) * dy

    def vjp_x(g):
        return g * y * math.pow(x, y - 1.0)

    def vjp_y(g):
        return g * ans * math.log(x) if x > 0 else (0.0 if x == 0 else math.nan) * g


@rule(math.fabs, elementwise=True)
def fabs(x):
    def jvp(dx):
        return dx * math.copysign(1.0, x) if x != 0 else 0.0 * dx

    def vjp(g):
        return g * math.copysign(1.0, x) if x != 0 else 0.0 * g


@rule(math.atan2, elementwise=True)
def atan2(y, x):
    def jvp_y(dy):
        return dy * x / (x * x + y * y)

    def jvp_x(dx):
        return -dx * y / (x * x + y * y)

    def vjp_y(g):
        return g * x / (x * x + y * y)

    def vjp_x(g):
        return -g * y / (x * x + y * y)


@rule(math.hypot, elementwise=True)
def hypot(ans, x, y):
    def jvp_x(dx):
        return dx * x / ans

    def jvp_y(dy):
        return dy * y / ans

    def vjp_x(g):
        return g * x / ans

    def vjp_y(g):
        return g * y / ans
