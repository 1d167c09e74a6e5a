"""NumPy's differentiable elementwise functions of one argument.

Each rule returns the derivative f'(x) (``ans`` is f(x)); adgen emits
``x_dot * f'(x)`` in forward mode and ``g * f'(x)`` in reverse mode.
Conventions: ``sqrt`` at 0 gives ``inf`` (as 1/(2*sqrt(0)) does), and so does ``cbrt``
at 0 (1/(3*cbrt(0)**2)); ``sinc`` has derivative 0 at 0 (exact: sinc is even and smooth
there; near 0 a series is used instead of the cancelling closed form); ``nan_to_num``
has derivative 1 where ``x`` is finite and 0 where a nan or an infinity was replaced;
``modf``'s fractional part has derivative 1 everywhere (at the integers, where it
jumps, that of the piece the result lies on) and its integral part derivative 0.
``np.real`` and ``np.conj`` of real input are the identity; ``np.imag`` of real input
is constantly 0 (declared non-differentiable: its derivative is exactly 0).
"""

import math

import numpy as np

from .registry import nondifferentiable, rule, unary
from .samples import ANY, NONZERO, UNIT, Arg, Domain, example


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


@unary(np.arcsinh, domain=ANY)
def arcsinh(x):
    return 1.0 / np.sqrt(x * x + 1.0)


@unary(np.arccosh, domain=Domain(1.1, 3.0))
def arccosh(x):
    return 1.0 / np.sqrt(x * x - 1.0)


@unary(np.arctanh, domain=UNIT)
def arctanh(x):
    return 1.0 / (1.0 - x * x)


@unary(np.cbrt, domain=NONZERO)
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
