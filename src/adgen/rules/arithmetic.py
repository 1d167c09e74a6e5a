"""Python's arithmetic operators and NumPy's arithmetic ufuncs.

Conventions at kinks: ``abs`` has derivative 0 at 0 (``np.sign``);
``maximum``/``minimum`` split the derivative evenly between tied operands.

``fmax``/``fmin`` do the same at ties; where one operand is NaN the other (the one
returned) gets the whole derivative, and where both are NaN the first one does.
``copysign(x, y)`` = ``|x| sign(y)`` has derivative ``sign(x) * copysign(1, y)`` in
``x`` -- 0 at ``x == 0``, like ``abs`` -- and 0 in ``y`` (piecewise constant).
``fmod(x, y)`` = ``x - q y`` with ``q`` the truncated quotient the result was computed
with (``rint((x - fmod(x, y)) / y)``, so at a jump the derivative is that of the piece
the result lies on); likewise ``divmod`` uses its own quotient. ``hypot`` at ``(0, 0)``
has derivative 0 in both arguments (as ``abs`` at 0); ``arctan2`` at ``(0, 0)`` gives
NaN (no derivative there); across its branch cut (``x1 == 0``, ``x2 < 0``) it jumps and
the derivative is the smooth one of either side. ``float_power`` follows ``power``:
w.r.t. the exponent, the log is taken at 1 where the base is 0.

Singular points -- ``arctan2`` at (0, 0), ``power``/``float_power`` at a zero base with an
exponent below 1 and w.r.t. the exponent at a negative base -- are registered so that a
zero tangent or cotangent entry contributes exactly 0 there (``rt.zero_safe``).
"""

import math
import operator

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import assign, rule, square_product
from adgen.rules.samples import ANY, NONZERO, POSITIVE, Arg, Domain, example


@rule(assign, elementwise=True, view=True, complex=True)
def assign_(x):
    """``y = x`` (a copy of a name rebound inside control flow)."""

    def jvp(dx):
        return dx

    def vjp(g):
        return g


@rule(operator.add, np.add, elementwise=True, complex=True)
def add(x, y):
    def jvp_x(dx):
        return dx

    def jvp_y(dy):
        return dy

    def vjp_x(g):
        return g

    def vjp_y(g):
        return g


@rule(operator.sub, np.subtract, elementwise=True, complex=True)
def subtract(x, y):
    def jvp_x(dx):
        return dx

    def jvp_y(dy):
        return -dy

    def vjp_x(g):
        return g

    def vjp_y(g):
        return -g


@rule(operator.mul, np.multiply, elementwise=True, complex=True)
def multiply(x, y):
    def jvp_x(dx):
        return dx * y

    def jvp_y(dy):
        return x * dy

    def vjp_x(g):
        return g * y

    def vjp_y(g):
        return g * x


@rule(square_product, elementwise=True, name="self_mul", complex=True)
def self_multiply(x):
    """``x * x`` (the optimizer's form of a product of a value with itself): the two
    contributions ``dx * x + x * dx`` are one product doubled, bit for bit."""

    def jvp(dx):
        return dx * x * 2.0

    def vjp(g):
        return g * x * 2.0


@rule(operator.truediv, np.divide, np.true_divide, elementwise=True, complex=True)
def divide(ans, x, y):
    def jvp_x(dx):
        return dx / y

    def jvp_y(dy):
        return -(dy * ans / y)

    def vjp_x(g):
        return g / y

    def vjp_y(g):
        return -(g * ans / y)


@rule(
    operator.pow,
    np.power,
    pow,
    rt.power,
    elementwise=True,
    examples=[
        example("x ** y", x=Arg((3, 4), POSITIVE), y=(3, 4), f32=True),
        example("rt.power(x, y)", x=Arg((3, 4), POSITIVE), y=(4,)),
        example("rt.power(x, y)", x=Arg(None, POSITIVE), y=None),
        example("rt.power(x, 0.5)", x=Arg((2, 3), POSITIVE)),
        example("rt.power(x, 3)", x=(2, 3)),
    ],
    complex=True,
)
def power(ans, x, y):
    """d/dx x**y = y x**(y-1), which is 0 where y == 0 (``y - (y != 0)`` keeps 0**-1 out of
    it); d/dy x**y = log(x) x**y, where x == 0 the log is taken as 0 (x**y is 0 or 1 there).

    Singular points (x == 0 with y < 1 in x, x < 0 in y): a zero tangent or cotangent entry
    contributes exactly 0 there (``rt.zero_safe``; ``rt.power``, unlike Python's ``**``,
    gives ``inf`` for ``0.0 ** -0.5``). A constant exponent >= 1 (``x ** 2``) or a positive
    constant base (``2.0 ** y``) rules them out: then the plain product is emitted. Numbers
    (a result known to have no axes) test the singular point in Python instead (no call)."""

    def jvp_x(dx):
        if rt.known_constant(y) is not None and rt.known_constant(y) >= 1:
            return dx * y * x ** (y - 1)
        if rt.known_scalar(ans) and rt.known_real(x) and rt.known_real(y):
            return (
                dx * y * x ** (y - 1)
                if x != 0 or y >= 1
                else (0.0 if dx == 0 or y == 0 else dx * y * math.inf)
            )
        return rt.zero_safe(dx * y * rt.power(x, y - (y != 0)), dx)

    def jvp_y(dy):
        if rt.known_constant(x) is not None and rt.known_constant(x) > 0:
            return dy * ans * np.log(x)
        if rt.known_scalar(ans) and rt.known_real(x) and rt.known_real(y):
            return dy * ans * math.log(x) if x > 0 else (0.0 if x == 0 or dy == 0 else math.nan)
        return rt.zero_safe(dy * ans * np.log(np.where(x == 0, 1.0, x)), dy)

    def vjp_x(g):
        if rt.known_constant(y) is not None and rt.known_constant(y) >= 1:
            return g * y * x ** (y - 1)
        if rt.known_scalar(ans) and rt.known_real(x) and rt.known_real(y):
            return (
                g * y * x ** (y - 1)
                if x != 0 or y >= 1
                else (0.0 if g == 0 or y == 0 else g * y * math.inf)
            )
        return rt.zero_safe(g * y * rt.power(x, y - (y != 0)), g)

    def vjp_y(g):
        if rt.known_constant(x) is not None and rt.known_constant(x) > 0:
            return g * ans * np.log(x)
        if rt.known_scalar(ans) and rt.known_real(x) and rt.known_real(y):
            return g * ans * math.log(x) if x > 0 else (0.0 if x == 0 or g == 0 else math.nan)
        return rt.zero_safe(g * ans * np.log(np.where(x == 0, 1.0, x)), g)


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


@rule(operator.neg, np.negative, elementwise=True, complex=True)
def negative(x):
    def jvp(dx):
        return -dx

    def vjp(g):
        return -g


@rule(operator.pos, np.positive, elementwise=True, complex=True)
def positive(x):
    def jvp(dx):
        return dx

    def vjp(g):
        return g


@rule(np.fabs, elementwise=True, domain=NONZERO)
def fabs(x):
    def jvp(dx):
        return dx * np.sign(x)

    def vjp(g):
        return g * np.sign(x)


@rule(abs, np.absolute, elementwise=True, complex=True, domain=NONZERO)
def absolute(ans, x):
    """Real ``x``: ``sign(x)``. Complex ``x``: ``|x|`` is not holomorphic; its tangent is
    ``Re(conj(x) dx) / |x|``, its cotangent ``g conj(x) / |x|`` (the transpose for
    ``Re(a b)``; JAX's). Both give 0 at 0. (``x / |x|``, not ``np.sign(x)``: the complex
    sign is smooth, and a second derivative must see that.)"""

    def jvp(dx):
        if rt.known_real(x):
            return dx * np.sign(x)
        return np.real(np.conjugate(x) * dx) / np.where(ans == 0, 1.0, ans)

    def vjp(g):
        if rt.known_real(x):
            return g * np.sign(x)
        return g * np.conjugate(x) / np.where(ans == 0, 1.0, ans)


@rule(np.maximum, elementwise=True, domain=ANY)
def maximum(x, y):
    def jvp_x(dx):
        return np.where(x > y, dx, np.where(x == y, 0.5 * dx, 0.0))

    def jvp_y(dy):
        return np.where(y > x, dy, np.where(x == y, 0.5 * dy, 0.0))

    def vjp_x(g):
        return np.where(x > y, g, np.where(x == y, 0.5 * g, 0.0))

    def vjp_y(g):
        return np.where(y > x, g, np.where(x == y, 0.5 * g, 0.0))


@rule(np.minimum, elementwise=True, domain=ANY)
def minimum(x, y):
    def jvp_x(dx):
        return np.where(x < y, dx, np.where(x == y, 0.5 * dx, 0.0))

    def jvp_y(dy):
        return np.where(y < x, dy, np.where(x == y, 0.5 * dy, 0.0))

    def vjp_x(g):
        return np.where(x < y, g, np.where(x == y, 0.5 * g, 0.0))

    def vjp_y(g):
        return np.where(y < x, g, np.where(x == y, 0.5 * g, 0.0))


@rule(np.where, elementwise=True, complex=True)
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


@rule(np.logaddexp, elementwise=True, domain=Domain(-3.0, 3.0))
def logaddexp(ans, x1, x2):
    def jvp_x1(dx1):
        return dx1 * np.exp(x1 - ans)

    def jvp_x2(dx2):
        return dx2 * np.exp(x2 - ans)

    def vjp_x1(g):
        return g * np.exp(x1 - ans)

    def vjp_x2(g):
        return g * np.exp(x2 - ans)


@rule(np.logaddexp2, elementwise=True, domain=Domain(-3.0, 3.0))
def logaddexp2(ans, x1, x2):
    def jvp_x1(dx1):
        return dx1 * np.exp2(x1 - ans)

    def jvp_x2(dx2):
        return dx2 * np.exp2(x2 - ans)

    def vjp_x1(g):
        return g * np.exp2(x1 - ans)

    def vjp_x2(g):
        return g * np.exp2(x2 - ans)


@rule(np.arctan2, elementwise=True, domain=NONZERO, singular=True)
def arctan2(x1, x2):
    """d atan2(y, x) = (x dy - y dx) / (x^2 + y^2): NaN at (0, 0), where a zero tangent or
    cotangent entry contributes 0 (``singular``). ``np.divide``: Python floats at (0, 0)
    give NaN too, not ZeroDivisionError."""

    def jvp_x1(dx1):
        return np.divide(dx1 * x2, x1 * x1 + x2 * x2)

    def jvp_x2(dx2):
        return -np.divide(dx2 * x1, x1 * x1 + x2 * x2)

    def vjp_x1(g):
        return np.divide(g * x2, x1 * x1 + x2 * x2)

    def vjp_x2(g):
        return -np.divide(g * x1, x1 * x1 + x2 * x2)


@rule(np.hypot, elementwise=True, domain=ANY)
def hypot(ans, x1, x2):
    """x1 / hypot(x1, x2); 0 at (0, 0), where ``ans == 0`` (and so ``x1 == 0``)."""

    def jvp_x1(dx1):
        return dx1 * x1 / np.where(ans == 0, 1.0, ans)

    def jvp_x2(dx2):
        return dx2 * x2 / np.where(ans == 0, 1.0, ans)

    def vjp_x1(g):
        return g * x1 / np.where(ans == 0, 1.0, ans)

    def vjp_x2(g):
        return g * x2 / np.where(ans == 0, 1.0, ans)


@rule(np.fmax, elementwise=True, domain=ANY)
def fmax(x1, x2):
    """Like ``maximum`` (ties split evenly); a NaN operand leaves the derivative to the other."""

    def jvp_x1(dx1):
        return np.where((x1 > x2) | np.isnan(x2), dx1, np.where(x1 == x2, 0.5 * dx1, 0.0))

    def jvp_x2(dx2):
        return np.where(
            (x2 > x1) | (np.isnan(x1) & ~np.isnan(x2)), dx2, np.where(x1 == x2, 0.5 * dx2, 0.0)
        )

    def vjp_x1(g):
        return np.where((x1 > x2) | np.isnan(x2), g, np.where(x1 == x2, 0.5 * g, 0.0))

    def vjp_x2(g):
        return np.where(
            (x2 > x1) | (np.isnan(x1) & ~np.isnan(x2)), g, np.where(x1 == x2, 0.5 * g, 0.0)
        )


@rule(np.fmin, elementwise=True, domain=ANY)
def fmin(x1, x2):
    """Like ``minimum`` (ties split evenly); a NaN operand leaves the derivative to the other."""

    def jvp_x1(dx1):
        return np.where((x1 < x2) | np.isnan(x2), dx1, np.where(x1 == x2, 0.5 * dx1, 0.0))

    def jvp_x2(dx2):
        return np.where(
            (x2 < x1) | (np.isnan(x1) & ~np.isnan(x2)), dx2, np.where(x1 == x2, 0.5 * dx2, 0.0)
        )

    def vjp_x1(g):
        return np.where((x1 < x2) | np.isnan(x2), g, np.where(x1 == x2, 0.5 * g, 0.0))

    def vjp_x2(g):
        return np.where(
            (x2 < x1) | (np.isnan(x1) & ~np.isnan(x2)), g, np.where(x1 == x2, 0.5 * g, 0.0)
        )


@rule(np.fmod, elementwise=True, domain=NONZERO)
def fmod(ans, x1, x2):
    """x1 - q x2 with q the (truncated) quotient the result was computed with."""

    def jvp_x1(dx1):
        return dx1

    def jvp_x2(dx2):
        return -dx2 * np.rint((x1 - ans) / x2)

    def vjp_x1(g):
        return g

    def vjp_x2(g):
        return -g * np.rint((x1 - ans) / x2)


@rule(
    np.float_power,
    elementwise=True,
    domain=POSITIVE,
    examples=[example("np.float_power(x, 3.0)", x=(3, 4), f32=True)],
    complex=True,
)
def float_power(ans, x1, x2):
    """``power`` computed in float64, with the same conventions and singular points: w.r.t.
    the exponent the log is taken at 1 where x1 == 0; 0 w.r.t. x1 where x2 == 0."""

    def jvp_x1(dx1):
        if rt.known_constant(x2) is not None and rt.known_constant(x2) >= 1:
            return dx1 * x2 * np.float_power(x1, x2 - 1)
        return rt.zero_safe(dx1 * x2 * np.float_power(x1, x2 - (x2 != 0)), dx1)

    def jvp_x2(dx2):
        if rt.known_constant(x1) is not None and rt.known_constant(x1) > 0:
            return dx2 * ans * np.log(x1)
        return rt.zero_safe(dx2 * ans * np.log(np.where(x1 == 0, 1.0, x1)), dx2)

    def vjp_x1(g):
        if rt.known_constant(x2) is not None and rt.known_constant(x2) >= 1:
            return g * x2 * np.float_power(x1, x2 - 1)
        return rt.zero_safe(g * x2 * np.float_power(x1, x2 - (x2 != 0)), g)

    def vjp_x2(g):
        if rt.known_constant(x1) is not None and rt.known_constant(x1) > 0:
            return g * ans * np.log(x1)
        return rt.zero_safe(g * ans * np.log(np.where(x1 == 0, 1.0, x1)), g)


@rule(np.copysign, elementwise=True, domain=NONZERO)
def copysign(ans, x1, x2):
    """|x1| with the sign of x2: ``sign(x1) * copysign(1, x2)`` in x1 (0 at x1 == 0), 0 in x2."""

    def jvp_x1(dx1):
        return dx1 * np.sign(x1) * np.copysign(1.0, x2)

    def jvp_x2(dx2):
        return rt.zeros_like(ans)

    def vjp_x1(g):
        return g * np.sign(x1) * np.copysign(1.0, x2)

    def vjp_x2(g):
        return rt.zeros_like(x2)


@rule(
    divmod,
    np.divmod,
    elementwise=True,
    outputs=2,
    examples=[
        example("np.divmod(x, y)[1]", x=(3, 4), y=Arg((4,), NONZERO), f32=True),
        example("np.divmod(x, y)[1]", x=(3, 1), y=Arg((1, 4), NONZERO)),
        example("np.divmod(x, y)[0] + np.divmod(x, y)[1]", x=(3, 4), y=Arg(None, NONZERO)),
        example("divmod(x, y)[1]", x=None, y=Arg(None, NONZERO)),
        example("divmod(x, y)[1] * x", x=(4,), y=Arg((), NONZERO)),
        example("np.divmod(x, np.full((3, 4), 0.7))[1]", x=(4,)),
    ],
)
def divmod_(ans, x1, x2):
    """(q, r) = (x1 // x2, x1 % x2): q is piecewise constant, r = x1 - q x2 with ``ans[0]`` as q."""

    def jvp_x1(dx1):
        return (rt.zeros_like(ans[0]), dx1 + rt.zeros_like(ans[1]))

    def jvp_x2(dx2):
        return (rt.zeros_like(ans[0]), -dx2 * ans[0])

    def vjp_x1(g):
        return g[1]

    def vjp_x2(g):
        return -g[1] * ans[0]


@rule(
    np.ldexp,
    elementwise=True,
    examples=[
        example("np.ldexp(x, 3)", x=(3, 4), f32=True),
        example("np.ldexp(x, np.arange(4) - 2)", x=(3, 4)),
        example("np.ldexp(x, np.arange(12).reshape(3, 4) - 5)", x=(4,)),
        example("np.ldexp(x, -1)", x=None),
    ],
)
def ldexp(x1, x2):
    """x1 * 2**x2 with integer exponents ``x2`` (not differentiated)."""

    def jvp_x1(dx1):
        return np.ldexp(dx1, x2)

    def vjp_x1(g):
        return np.ldexp(g, x2)
