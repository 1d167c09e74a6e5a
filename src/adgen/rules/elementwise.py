"""NumPy's differentiable elementwise functions of one argument.

Each rule returns the derivative f'(x) (``ans`` is f(x)); adgen emits
``x_dot * f'(x)`` in forward mode and ``g * f'(x)`` in reverse mode.
Conventions: ``sqrt`` at 0 gives ``inf`` (as 1/(2*sqrt(0)) does), and so does ``cbrt``
at 0 (1/(3*cbrt(0)**2)); ``arcsin``/``arccos`` at +-1 and ``arccosh`` at 1 give +-``inf``.
At those points a zero tangent or cotangent entry contributes exactly 0 (these rules are
registered ``singular=True``, see ``rt.zero_safe``). ``sinc`` has derivative 0 at 0 (exact:
sinc is even and smooth there; near 0 a series is used instead of the cancelling closed
form); ``nan_to_num`` has derivative 1 where ``x`` is finite and 0 where a nan or an
infinity was replaced; ``modf``'s fractional part has derivative 1 everywhere (at the
integers, where it jumps, that of the piece the result lies on) and its integral part
derivative 0.
``np.real`` and ``np.conj`` of real input are the identity; ``np.imag`` of real input
is constantly 0 (declared non-differentiable: its derivative is exactly 0).
"""

import math

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import nondifferentiable, rule, unary
from adgen.rules.samples import ANY, NONZERO, POSITIVE, UNIT, Arg, Domain, example


@unary(np.sin, domain=ANY)
def sin(x):
    return np.cos(x)


@unary(np.cos, domain=ANY)
def cos(x):
    return -np.sin(x)


@unary(np.tan, domain=Domain(-1.2, 1.2))
def tan(ans, x):
    return 1.0 + ans * ans


@unary(np.arcsin, domain=UNIT, singular=True)
def arcsin(x):
    return 1.0 / np.sqrt(1.0 - x * x)


@unary(np.arccos, domain=UNIT, singular=True)
def arccos(x):
    return -1.0 / np.sqrt(1.0 - x * x)


@unary(np.arctan, domain=ANY)
def arctan(x):
    return 1.0 / (1.0 + x * x)


@unary(np.sinh, domain=ANY)
def sinh(x):
    return np.cosh(x)


@unary(np.cosh, domain=ANY)
def cosh(x):
    return np.sinh(x)


@unary(np.tanh, domain=ANY)
def tanh(ans, x):
    return 1.0 - ans * ans


@unary(np.exp, domain=ANY)
def exp(ans, x):
    return ans


@unary(np.exp2, domain=ANY)
def exp2(ans, x):
    return ans * math.log(2.0)


@unary(np.expm1, domain=ANY)
def expm1(ans, x):
    return ans + 1.0


@unary(np.log1p, domain=Domain(-0.5, 2.0))
def log1p(x):
    return 1.0 / (1.0 + x)


@unary(np.square, domain=ANY)
def square(x):
    return 2.0 * x


@unary(np.reciprocal, domain=NONZERO)
def reciprocal(ans, x):
    return -ans * ans


@rule(np.log, elementwise=True, domain=POSITIVE)
def log(x):
    def jvp(dx):
        return dx / x

    def vjp(g):
        return g / x


@rule(np.log2, elementwise=True, domain=POSITIVE)
def log2(x):
    def jvp(dx):
        return dx / (x * math.log(2.0))

    def vjp(g):
        return g / (x * math.log(2.0))


@rule(np.log10, elementwise=True, domain=POSITIVE)
def log10(x):
    def jvp(dx):
        return dx / (x * math.log(10.0))

    def vjp(g):
        return g / (x * math.log(10.0))


@rule(np.sqrt, elementwise=True, domain=POSITIVE, singular=True)
def sqrt(ans, x):
    def jvp(dx):
        return dx / (2.0 * ans)

    def vjp(g):
        return g / (2.0 * ans)


@unary(np.arcsinh, domain=ANY)
def arcsinh(x):
    return 1.0 / np.sqrt(x * x + 1.0)


@unary(np.arccosh, domain=Domain(1.1, 3.0), singular=True)
def arccosh(x):
    return 1.0 / np.sqrt(x * x - 1.0)


@unary(np.arctanh, domain=UNIT)
def arctanh(x):
    return 1.0 / (1.0 - x * x)


@unary(np.cbrt, domain=NONZERO, singular=True)
def cbrt(ans, x):
    """1 / (3 cbrt(x)**2): ``inf`` at 0, like ``sqrt``."""
    return 1.0 / (3.0 * (ans * ans))


@unary(np.deg2rad, np.radians, domain=Domain(-200.0, 200.0))
def deg2rad(x):
    return np.pi / 180.0


@unary(np.rad2deg, np.degrees, domain=ANY)
def rad2deg(x):
    return 180.0 / np.pi


@unary(
    np.sinc,
    domain=Domain(-2.5, 2.5),
    examples=[example("np.sinc(x)", x=Arg((5,), Domain(-0.02, 0.02)), f32=True)],
)
def sinc(ans, x):
    """(cos(pi x) - sinc(x)) / x; for |x| < 0.01 its series -pi^2 x/3 + pi^4 x^3/30 - ...
    (the closed form cancels there), which gives 0 at 0."""
    small = np.abs(x) < 0.01
    x2 = x * x
    series = x * (-(np.pi**2) / 3.0 + x2 * (np.pi**4 / 30.0 - x2 * (np.pi**6 / 840.0)))
    closed = (np.cos(np.pi * x) - ans) / np.where(small, 1.0, x)
    return np.where(small, series, closed)


@rule(
    np.nan_to_num,
    elementwise=True,
    domain=ANY,
    examples=[example("np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0)", x=(3, 4), f32=True)],
)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """1 where ``x`` is finite, 0 where a nan or an infinity was replaced by a constant."""

    def jvp(dx):
        return np.where(np.isfinite(x), dx, 0.0)

    def vjp(g):
        return np.where(np.isfinite(x), g, 0.0)


@rule(np.real, elementwise=True, view=True, domain=ANY)
def real(val):
    """Real input: the identity (``np.real(x)`` is ``x`` itself)."""

    def jvp(dval):
        return np.real(dval)

    def vjp(g):
        return np.real(g)


@rule(np.conjugate, elementwise=True, domain=ANY)
def conjugate(x):
    """Real input: the identity (a copy)."""

    def jvp(dx):
        return np.conjugate(dx)

    def vjp(g):
        return np.conjugate(g)


# real input: the imaginary part is constantly 0, its derivative exactly 0
nondifferentiable(np.imag, np.isreal, np.iscomplex, np.signbit)


@rule(
    np.modf,
    elementwise=True,
    outputs=2,
    examples=[
        example(
            "np.modf(x)[0]",
            x=Arg((3, 4), Domain(-2.5, 2.5, avoid=(-2.0, -1.0, 1.0, 2.0))),
            f32=True,
        ),
        example(
            "np.modf(x)[0] * np.modf(x)[1] + np.modf(x)[0]",
            x=Arg((5,), Domain(-2.5, 2.5, avoid=(-2.0, -1.0, 1.0, 2.0))),
        ),
        example("np.modf(x)[0]", x=Arg(None, Domain(0.1, 0.9))),
    ],
)
def modf(ans, x):
    """(fractional part, integral part): derivatives 1 and 0."""

    def jvp(dx):
        return (dx, rt.zeros_like(ans[1]))

    def vjp(g):
        return g[0]


_KNOTS = Domain(-1.4, 1.4, avoid=(-1.0, -0.5, 0.0, 0.5, 1.0))


@rule(
    np.interp,
    examples=[
        example("np.interp(x, np.linspace(-1.0, 1.0, 5), fp)", x=Arg((7,), _KNOTS), fp=(5,)),
        example(
            "np.interp(x, np.linspace(-1.0, 1.0, 5), fp, left=-3.0, right=3.0)",
            x=Arg((3, 4), _KNOTS),
            fp=(5,),
            f32=True,
        ),
        example(
            "np.interp(x, np.linspace(-1.0, 1.0, 5), fp, right=0.0)", x=Arg(None, _KNOTS), fp=(5,)
        ),
        example("np.interp(x, [-1.0, 0.0, 1.0], fp)", x=Arg((2, 3), _KNOTS), fp=(3,)),
        example(
            "np.interp(x, [0.0, 0.5], [1.0, -2.0])",
            x=Arg((4,), Domain(-0.4, 0.9, avoid=(0.0, 0.5))),
        ),
    ],
)
def interp(x, xp, fp, left=None, right=None):
    """Piecewise linear in ``x`` (``xp`` increasing, not differentiated): the slope of the
    segment holding ``x`` (at an inner knot the right one, at ``xp[-1]`` the last one; 0
    outside the knots); linear in ``fp``. ``period`` is not supported."""

    def jvp_x(dx):
        return dx * rt.interp_slope(x, xp, fp)

    def jvp_fp(dfp):
        return np.interp(
            x, xp, dfp, left=None if left is None else 0.0, right=None if right is None else 0.0
        )

    def vjp_x(g):
        return g * rt.interp_slope(x, xp, fp)

    def vjp_fp(g):
        return rt.interp_vjp_fp(g, x, xp, fp, left=left, right=right)


@rule(
    np.polyval,
    examples=[
        example("np.polyval(p, x)", p=(4,), x=(5,)),
        example("np.polyval(p, x)", p=(3,), x=(3, 4), f32=True),
        example("np.polyval(p, x)", p=(4,), x=None),
        example("np.polyval(p, x)", p=(1,), x=(3,)),
        example("np.polyval(p, x)", p=(3, 2, 1), x=(4,)),
        example("np.polyval([1.0, -2.0, 0.5], x)", x=(2, 3)),
    ],
)
def polyval(p, x):
    """Linear in the coefficients ``p`` (highest power first); in ``x`` the derivative
    polynomial. Coefficients of more than one axis broadcast with ``x`` as in NumPy."""

    def jvp_p(dp):
        return np.polyval(dp, x)

    def jvp_x(dx):
        return dx * rt.polyval_dx(p, x)

    def vjp_p(g):
        return rt.polyval_vjp_p(g, p, x)

    def vjp_x(g):
        return rt.unbroadcast(g * rt.polyval_dx(p, x), x)


# piecewise constant: derivative 0 (where it exists)
nondifferentiable(np.heaviside)
if hasattr(np, "fix"):
    nondifferentiable(np.fix)
