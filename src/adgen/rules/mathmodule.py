"""The scalar functions of Python's :mod:`math` module.

Their derivatives use :mod:`math` too, so derivative code of scalar Python
stays on Python floats (no NumPy call per operation).

Singular points (``sqrt`` at 0, ``asin``/``acos`` at +-1, ``acosh`` at 1, ``pow`` at 0
with an exponent below 1 and w.r.t. the exponent at a negative base, ``atan2`` and
``hypot`` at (0, 0)), where Python's division would raise: the test is on the primal (the
regular path pays one comparison), and there a zero tangent or cotangent contributes 0.0;
a nonzero one gives what NumPy gives (``inf`` with its sign, NaN for ``atan2``), except
``hypot``, whose derivative at (0, 0) is 0 (as ``np.hypot``'s).
"""

import math

from adgen.rules.registry import rule, unary


@unary(math.sin)
def sin(x):
    return math.cos(x)


@unary(math.cos)
def cos(x):
    return -math.sin(x)


@unary(math.tan)
def tan(ans, x):
    return 1.0 + ans * ans


@rule(math.asin, elementwise=True)
def asin(x):
    def jvp(dx):
        s = math.sqrt(1.0 - x * x)
        return dx / s if s != 0.0 else (dx * math.inf if dx != 0.0 else 0.0)

    def vjp(g):
        s = math.sqrt(1.0 - x * x)
        return g / s if s != 0.0 else (g * math.inf if g != 0.0 else 0.0)


@rule(math.acos, elementwise=True)
def acos(x):
    def jvp(dx):
        s = math.sqrt(1.0 - x * x)
        return -dx / s if s != 0.0 else (-dx * math.inf if dx != 0.0 else 0.0)

    def vjp(g):
        s = math.sqrt(1.0 - x * x)
        return -g / s if s != 0.0 else (-g * math.inf if g != 0.0 else 0.0)


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


@rule(math.acosh, elementwise=True)
def acosh(x):
    def jvp(dx):
        s = math.sqrt(x * x - 1.0)
        return dx / s if s != 0.0 else (dx * math.inf if dx != 0.0 else 0.0)

    def vjp(g):
        s = math.sqrt(x * x - 1.0)
        return g / s if s != 0.0 else (g * math.inf if g != 0.0 else 0.0)


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
    """At 0 the derivative is infinite: ``inf * dx``, and 0.0 where ``dx`` is 0."""

    def jvp(dx):
        return dx / (2.0 * ans) if ans != 0.0 else (dx * math.inf if dx != 0.0 else 0.0)

    def vjp(g):
        return g / (2.0 * ans) if ans != 0.0 else (g * math.inf if g != 0.0 else 0.0)


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
    """In x: y x**(y-1); at x == 0 with y < 1 (where math.pow(0, y - 1) raises) 0 for
    y == 0 and +inf (times the seed) for 0 < y < 1. In y: log(x) x**y, taken as 0 at x == 0
    and NaN at x < 0 (no derivative), 0.0 for a zero seed."""

    def jvp_x(dx):
        return (
            dx * y * math.pow(x, y - 1.0)
            if x != 0.0 or y >= 1.0
            else (dx * math.inf if dx != 0.0 and y != 0.0 else 0.0)
        )

    def jvp_y(dy):
        return dy * ans * math.log(x) if x > 0 else (0.0 if x == 0 or dy == 0.0 else math.nan)

    def vjp_x(g):
        return (
            g * y * math.pow(x, y - 1.0)
            if x != 0.0 or y >= 1.0
            else (g * math.inf if g != 0.0 and y != 0.0 else 0.0)
        )

    def vjp_y(g):
        return g * ans * math.log(x) if x > 0 else (0.0 if x == 0 or g == 0.0 else math.nan)


@rule(math.fabs, elementwise=True)
def fabs(x):
    def jvp(dx):
        return dx * math.copysign(1.0, x) if x != 0 else 0.0 * dx

    def vjp(g):
        return g * math.copysign(1.0, x) if x != 0 else 0.0 * g


@rule(math.copysign, elementwise=True)
def copysign(x, y):
    """|x| with the sign of y: ``copysign(1, x) * copysign(1, y)`` in x (0 at x == 0, as
    ``fabs``'s), 0 in y (piecewise constant). ``fabs``'s own derivative calls it, so the
    derivative of that code needs it too."""

    def jvp_x(dx):
        return dx * math.copysign(1.0, x) * math.copysign(1.0, y) if x != 0 else 0.0 * dx

    def jvp_y(dy):
        return 0.0 * dy

    def vjp_x(g):
        return g * math.copysign(1.0, x) * math.copysign(1.0, y) if x != 0 else 0.0 * g

    def vjp_y(g):
        return 0.0 * g


@rule(math.atan2, elementwise=True)
def atan2(y, x):
    """At (0, 0) (where x * x + y * y is 0) NaN, and 0.0 for a zero seed."""

    def jvp_y(dy):
        r2 = x * x + y * y
        return dy * x / r2 if r2 != 0.0 else (0.0 if dy == 0.0 else math.nan)

    def jvp_x(dx):
        r2 = x * x + y * y
        return -dx * y / r2 if r2 != 0.0 else (0.0 if dx == 0.0 else math.nan)

    def vjp_y(g):
        r2 = x * x + y * y
        return g * x / r2 if r2 != 0.0 else (0.0 if g == 0.0 else math.nan)

    def vjp_x(g):
        r2 = x * x + y * y
        return -g * y / r2 if r2 != 0.0 else (0.0 if g == 0.0 else math.nan)


@rule(math.hypot, elementwise=True)
def hypot(ans, x, y):
    """x / hypot(x, y); 0 at (0, 0), as ``np.hypot``'s."""

    def jvp_x(dx):
        return dx * x / ans if ans != 0.0 else 0.0

    def jvp_y(dy):
        return dy * y / ans if ans != 0.0 else 0.0

    def vjp_x(g):
        return g * x / ans if ans != 0.0 else 0.0

    def vjp_y(g):
        return g * y / ans if ans != 0.0 else 0.0
