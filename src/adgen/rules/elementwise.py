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
``np.real``, ``np.conj`` and ``np.real_if_close`` of real input are the identity;
``np.imag`` of real input is constantly 0, and ``np.angle`` of real input is 0 or pi
(derivative 0). Of complex input they follow adgen's convention for complex numbers
(docs/rules.md): a cotangent is the transpose of the tangent map for ``Re(a * b)``.
"""

import math

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import methods, nondifferentiable, rule, unary
from adgen.rules.samples import ANY, NONZERO, POSITIVE, UNIT, Arg, Domain, example


@unary(np.sin, domain=ANY, complex=True)
def sin(x):
    return np.cos(x)


@unary(np.cos, domain=ANY, complex=True)
def cos(x):
    return -np.sin(x)


@unary(np.tan, domain=Domain(-1.2, 1.2), complex=True)
def tan(ans, x):
    return 1.0 + ans * ans


@unary(np.arcsin, domain=UNIT, singular=True, complex=True)
def arcsin(x):
    return 1.0 / np.sqrt(1.0 - x * x)


@unary(np.arccos, domain=UNIT, singular=True, complex=True)
def arccos(x):
    return -1.0 / np.sqrt(1.0 - x * x)


@unary(np.arctan, domain=ANY, complex=True)
def arctan(x):
    return 1.0 / (1.0 + x * x)


@unary(np.sinh, domain=ANY, complex=True)
def sinh(x):
    return np.cosh(x)


@unary(np.cosh, domain=ANY, complex=True)
def cosh(x):
    return np.sinh(x)


@unary(np.tanh, domain=ANY, complex=True)
def tanh(ans, x):
    return 1.0 - ans * ans


@unary(np.exp, domain=ANY, complex=True)
def exp(ans, x):
    return ans


@unary(np.exp2, domain=ANY, complex=True)
def exp2(ans, x):
    return ans * math.log(2.0)


@unary(np.expm1, domain=ANY, complex=True)
def expm1(ans, x):
    return ans + 1.0


@unary(np.log1p, domain=Domain(-0.5, 2.0), complex=True)
def log1p(x):
    return 1.0 / (1.0 + x)


@unary(np.square, domain=ANY, complex=True)
def square(x):
    return 2.0 * x


@unary(np.reciprocal, domain=NONZERO, complex=True)
def reciprocal(ans, x):
    return -ans * ans


@rule(np.log, elementwise=True, domain=POSITIVE, complex=True)
def log(x):
    def jvp(dx):
        return dx / x

    def vjp(g):
        return g / x


@rule(np.log2, elementwise=True, domain=POSITIVE, complex=True)
def log2(x):
    def jvp(dx):
        return dx / (x * math.log(2.0))

    def vjp(g):
        return g / (x * math.log(2.0))


@rule(np.log10, elementwise=True, domain=POSITIVE, complex=True)
def log10(x):
    def jvp(dx):
        return dx / (x * math.log(10.0))

    def vjp(g):
        return g / (x * math.log(10.0))


@rule(np.sqrt, elementwise=True, domain=POSITIVE, singular=True, complex=True)
def sqrt(ans, x):
    def jvp(dx):
        return dx / (2.0 * ans)

    def vjp(g):
        return g / (2.0 * ans)


@unary(np.arcsinh, domain=ANY, complex=True)
def arcsinh(x):
    return 1.0 / np.sqrt(x * x + 1.0)


@unary(np.arccosh, domain=Domain(1.1, 3.0), singular=True, complex=True)
def arccosh(x):
    return 1.0 / np.sqrt(x * x - 1.0)


@unary(np.arctanh, domain=UNIT, complex=True)
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
    complex=True,
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
    complex=True,
)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """1 where ``x`` is finite, 0 where a nan or an infinity was replaced by a constant."""

    def jvp(dx):
        return np.where(np.isfinite(x), dx, 0.0)

    def vjp(g):
        return np.where(np.isfinite(x), g, 0.0)


@rule(np.real, elementwise=True, view=True, domain=ANY, complex=True)
def real(val):
    """Real input: the identity (``np.real(x)`` is ``x`` itself). Complex input: the real
    part, whose transpose puts a (real) cotangent back as itself."""

    def jvp(dval):
        return np.real(dval)

    def vjp(g):
        return np.real(g)


@rule(np.conjugate, elementwise=True, domain=ANY, complex=True)
def conjugate(x):
    """Real input: the identity (a copy). Complex input: conjugation is R-linear, its own
    transpose for ``Re(a * b)``."""

    def jvp(dx):
        return np.conjugate(dx)

    def vjp(g):
        return np.conjugate(g)


nondifferentiable(np.isreal, np.iscomplex, np.signbit)
methods(conj=np.conjugate, conjugate=np.conjugate)


@rule(np.imag, elementwise=True, domain=ANY, complex=True)
def imag(ans, val):
    """Real input: constantly 0 (derivative 0). Complex input: the imaginary part; its
    transpose for ``Re(a * b)`` takes a real cotangent ``g`` to ``-1j * g``
    (``Re(-1j g t) = g Im(t)``)."""

    def jvp(dval):
        if rt.known_real(val):
            return rt.zeros_like(ans)
        return np.imag(dval)

    def vjp(g):
        if rt.known_real(val):
            return rt.zeros_like(val)
        return rt.real_like(-1j * g, val)


@rule(
    np.real_if_close,
    elementwise=True,
    view=True,
    domain=ANY,
    complex=True,
    examples=[
        example("np.real_if_close(x, tol=1000)", x=(2, 3)),
        example("np.real_if_close(x * 1e-20 + y, tol=1000)", x=(2, 3), y=(2, 3), complex=("x",)),
    ],
)
def real_if_close(ans, a, tol=100):
    """Real input: the identity (``a`` itself). Complex input: its real part where NumPy
    drops the imaginary part (all of it within ``tol`` machine epsilons of 0), else the
    identity -- ``ans``'s dtype tells which."""

    def jvp(da):
        return rt.real_like(da, ans)

    def vjp(g):
        return g


@rule(
    np.angle,
    elementwise=True,
    domain=NONZERO,
    complex=True,
    examples=[example("np.angle(z, deg=True)", z=Arg((3, 4), NONZERO), f32=True)],
)
def angle(ans, z, deg=False):
    """Real input: 0 where ``z >= 0``, pi (180 with ``deg=True``) where ``z < 0`` -- piecewise
    constant, derivative 0 (0 at the jump too, as for ``np.sign``). Complex input: the
    argument ``atan2(Im z, Re z)``, with tangent ``Im(dz / z)`` and cotangent ``-1j g / z``
    (times 180/pi with ``deg=True``); across the branch cut (the negative reals) it jumps
    and the derivative is the smooth one of either side. At 0 it has none (``inf``/NaN; a
    zero tangent or cotangent entry contributes 0 there, ``rt.zero_safe``)."""

    def jvp(dz):
        if rt.known_real(z):
            return rt.zeros_like(ans)
        return rt.zero_safe(np.imag(np.divide(dz, z)), dz) * (180.0 / np.pi if deg else 1.0)

    def vjp(g):
        if rt.known_real(z):
            return rt.zeros_like(z)
        slope = rt.real_like(-1j * np.divide(g, z), z)
        return rt.zero_safe(slope, g) * (180.0 / np.pi if deg else 1.0)


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
# points far enough from the knots np.linspace(-1.0, 1.0, 5) + 0.1 * e, e in [-1, 1]
_MOVED_KNOTS = Domain(-1.4, 1.4, avoid=(-1.0, -0.5, 0.0, 0.5, 1.0), gap=0.2)
_SHIFT = Domain(-1.0, 1.0)


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
        example(
            "np.interp(x, np.linspace(-1.0, 1.0, 5) + 0.1 * e, fp)",
            x=Arg((7,), _MOVED_KNOTS),
            e=Arg((5,), _SHIFT),
            fp=(5,),
        ),
        example(
            "np.interp(x, np.linspace(-1.0, 1.0, 5) + 0.1 * e, fp, left=-3.0, right=3.0)",
            x=Arg((3, 4), _MOVED_KNOTS),
            e=Arg((5,), _SHIFT),
            fp=(5,),
            f32=True,
        ),
    ],
)
def interp(x, xp, fp, left=None, right=None):
    """Piecewise linear in ``x`` (``xp`` increasing): the slope of the segment holding ``x``
    (at an inner knot the right one, at ``xp[-1]`` the last one; 0 outside the knots);
    linear in ``fp``; in ``xp``, moving the knots of the segment holding ``x`` (outside the
    knots the result does not depend on them). ``period`` is not supported."""

    def jvp_x(dx):
        return dx * rt.interp_slope(x, xp, fp)

    def jvp_xp(dxp):
        return -rt.interp_slope(x, xp, fp) * np.interp(x, xp, dxp)

    def jvp_fp(dfp):
        return np.interp(
            x, xp, dfp, left=None if left is None else 0.0, right=None if right is None else 0.0
        )

    def vjp_x(g):
        return g * rt.interp_slope(x, xp, fp)

    def vjp_xp(g):
        return rt.interp_vjp_fp(-g * rt.interp_slope(x, xp, fp), x, xp, xp)

    def vjp_fp(g):
        return rt.interp_vjp_fp(g, x, xp, fp, left=left, right=right)


# The helpers of np.interp, differentiated again. With s the segment holding x (piecewise
# constant in x and xp: derivative 0), h its width and t = (x - xp[s]) / h:
# * rt.interp_slope(x, xp, fp) = (fp[s + 1] - fp[s]) / h is linear in fp; in xp its
#   derivative is -slope * (dxp[s + 1] - dxp[s]) / h = -slope * rt.interp_slope(x, xp, dxp);
# * its transpose in fp, rt.interp_slope_vjp(c, x, xp, fp), puts c / h on fp[s + 1] and
#   -c / h on fp[s]: linear in c, and in xp the same 1 / h gives
#   rt.interp_slope_vjp(-c * rt.interp_slope(x, xp, dxp), ...);
# * rt.interp_vjp_fp (the transpose of np.interp in fp) puts g * (1 - t) on fp[s] and g * t
#   on fp[s + 1]: dt = dx / h gives rt.interp_slope_vjp(g * dx, ...), and in xp
#   dt = -np.interp(x, xp, dxp) / h.
@rule(
    rt.interp_slope,
    examples=[
        example("rt.interp_slope(x, np.linspace(-1.0, 1.0, 5), fp)", x=Arg((7,), _KNOTS), fp=(5,)),
        example(
            "rt.interp_slope(x, np.linspace(-1.0, 1.0, 5) + 0.1 * e, fp)",
            x=Arg((3, 4), _MOVED_KNOTS),
            e=Arg((5,), _SHIFT),
            fp=(5,),
            f32=True,
        ),
        example("rt.interp_slope(x, [-1.0, 0.0, 1.0], fp)", x=Arg(None, _KNOTS), fp=(3,)),
        example(
            "rt.interp_slope(x, [0.0, 0.5], [1.0, -2.0])",
            x=Arg((4,), Domain(-0.4, 0.9, avoid=(0.0, 0.5))),
        ),
    ],
)
def interp_slope(ans, x, xp, fp):
    """Piecewise constant in ``x``; linear in ``fp``; smooth in ``xp``."""

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def jvp_xp(dxp):
        return -ans * rt.interp_slope(x, xp, dxp)

    def jvp_fp(dfp):
        return rt.interp_slope(x, xp, dfp)

    def vjp_x(c):
        return rt.zeros_like(x)

    def vjp_xp(c):
        return rt.interp_slope_vjp(-c * ans, x, xp, xp)

    def vjp_fp(c):
        return rt.interp_slope_vjp(c, x, xp, fp)


@rule(
    rt.interp_slope_vjp,
    examples=[
        example(
            "rt.interp_slope_vjp(c, x, np.linspace(-1.0, 1.0, 5), fp)",
            c=(7,),
            x=Arg((7,), _KNOTS),
            fp=(5,),
        ),
        example(
            "rt.interp_slope_vjp(c, x, np.linspace(-1.0, 1.0, 5) + 0.1 * e, fp)",
            c=(3, 4),
            x=Arg((3, 4), _MOVED_KNOTS),
            e=Arg((5,), _SHIFT),
            fp=(5,),
            f32=True,
        ),
        example(
            "rt.interp_slope_vjp(c, x, [-1.0, 0.0, 1.0], fp)",
            c=None,
            x=Arg(None, _KNOTS),
            fp=(3,),
        ),
        example(
            "rt.interp_slope_vjp(c, x, [-1.0, 0.0, 1.0], fp)",
            c=(),
            x=Arg((2, 3), _KNOTS),
            fp=(3,),
        ),
    ],
)
def interp_slope_vjp(ans, c, x, xp, fp):
    """Linear in ``c`` (the transpose is ``rt.interp_slope``); piecewise constant in ``x``;
    smooth in ``xp``; ``fp`` only gives the shape and dtype."""

    def jvp_c(dc):
        return rt.interp_slope_vjp(dc, x, xp, fp)

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def jvp_xp(dxp):
        return rt.interp_slope_vjp(-c * rt.interp_slope(x, xp, dxp), x, xp, fp)

    def jvp_fp(dfp):
        return rt.zeros_like(ans)

    def vjp_c(h):
        return rt.rebroadcast(rt.interp_slope(x, xp, h), c)

    def vjp_x(h):
        return rt.zeros_like(x)

    def vjp_xp(h):
        return rt.interp_slope_vjp(-c * rt.interp_slope(x, xp, h), x, xp, xp)

    def vjp_fp(h):
        return rt.zeros_like(fp)


@rule(
    rt.interp_vjp_fp,
    examples=[
        example(
            "rt.interp_vjp_fp(g, x, np.linspace(-1.0, 1.0, 5), fp)",
            g=(7,),
            x=Arg((7,), _KNOTS),
            fp=(5,),
        ),
        example(
            "rt.interp_vjp_fp(g, x, np.linspace(-1.0, 1.0, 5) + 0.1 * e, fp, left=-3.0, right=3.0)",
            g=(3, 4),
            x=Arg((3, 4), _MOVED_KNOTS),
            e=Arg((5,), _SHIFT),
            fp=(5,),
            f32=True,
        ),
        example(
            "rt.interp_vjp_fp(g, x, np.linspace(-1.0, 1.0, 5), fp, right=0.0)",
            g=None,
            x=Arg(None, _KNOTS),
            fp=(5,),
        ),
        example(
            "rt.interp_vjp_fp(g, x, [-1.0, 0.0, 1.0], fp)",
            g=(2, 3),
            x=Arg((2, 3), _KNOTS),
            fp=(3,),
        ),
        example(
            "rt.interp_vjp_fp(g, x, np.linspace(-1.0, 1.0, 5) + 0.1 * e, fp)",
            g=(),
            x=Arg((6,), _MOVED_KNOTS),
            e=Arg((5,), _SHIFT),
            fp=(5,),
        ),
    ],
)
def interp_vjp_fp(ans, g, x, xp, fp, left=None, right=None):
    """Linear in ``g`` (the transpose is ``np.interp`` in ``fp``); smooth in ``x`` and
    ``xp`` through the interpolation weights; ``fp`` only gives the shape and dtype."""

    def jvp_g(dg):
        return rt.interp_vjp_fp(dg, x, xp, fp, left=left, right=right)

    def jvp_x(dx):
        return rt.interp_slope_vjp(g * dx, x, xp, fp)

    def jvp_xp(dxp):
        return rt.interp_slope_vjp(-g * np.interp(x, xp, dxp), x, xp, fp)

    def jvp_fp(dfp):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(
            np.interp(
                x, xp, c, left=None if left is None else 0.0, right=None if right is None else 0.0
            ),
            g,
        )

    def vjp_x(c):
        return g * rt.interp_slope(x, xp, c)

    def vjp_xp(c):
        return rt.interp_vjp_fp(-g * rt.interp_slope(x, xp, c), x, xp, xp)

    def vjp_fp(c):
        return rt.zeros_like(fp)


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
    complex=True,
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


# The helpers of np.polyval, differentiated again: ``rt.polyval_dx(p, x, order)`` (the
# order-th derivative in x) is linear in p, with transpose ``rt.polyval_vjp_p(c, p, x,
# order)``, and its derivative in x is the next order; ``rt.polyval_vjp_p(g, p, x, order)``
# is linear in g and its derivative in x is ``rt.polyval_vjp_p(g * dx, p, x, order + 1)``.
@rule(
    rt.polyval_dx,
    examples=[
        example("rt.polyval_dx(p, x)", p=(4,), x=(5,)),
        example("rt.polyval_dx(p, x)", p=(3,), x=(3, 4), f32=True),
        example("rt.polyval_dx(p, x, 2)", p=(4,), x=None),
        example("rt.polyval_dx(p, x)", p=(1,), x=(3,)),
        example("rt.polyval_dx(p, x, order=2)", p=(3, 2, 1), x=(4,)),
        example("rt.polyval_dx([1.0, -2.0, 0.5], x)", x=(2, 3)),
        example("rt.polyval_dx(p, x, 0)", p=(3,), x=(2,)),
    ],
    complex=True,
)
def polyval_dx(p, x, order=1):
    """Linear in ``p``; smooth in ``x`` (its derivative is the next order)."""

    def jvp_p(dp):
        return rt.polyval_dx(dp, x, order)

    def jvp_x(dx):
        return dx * rt.polyval_dx(p, x, order + 1)

    def vjp_p(c):
        return rt.polyval_vjp_p(c, p, x, order)

    def vjp_x(c):
        return rt.unbroadcast(c * rt.polyval_dx(p, x, order + 1), x)


@rule(
    rt.polyval_vjp_p,
    examples=[
        example("rt.polyval_vjp_p(g, p, x)", g=(5,), p=(4,), x=(5,)),
        example("rt.polyval_vjp_p(g, p, x)", g=(3, 4), p=(3,), x=(3, 4), f32=True),
        example("rt.polyval_vjp_p(g, p, x)", g=None, p=(4,), x=None),
        example("rt.polyval_vjp_p(g, p, x)", g=(3,), p=(1,), x=(3,)),
        example("rt.polyval_vjp_p(g, p, x)", g=(2, 4), p=(3, 2, 1), x=(4,)),
        example("rt.polyval_vjp_p(g, p, x, 1)", g=(2, 3), p=(4,), x=(2, 3)),
        example("rt.polyval_vjp_p(g, p, x, order=2)", g=(2, 4), p=(3, 2, 1), x=(4,)),
        example("rt.polyval_vjp_p(g, np.array([1.0, -2.0, 0.5]), x)", g=(2, 3), x=(2, 3)),
    ],
    complex=True,
)
def polyval_vjp_p(ans, g, p, x, order=0):
    """Linear in ``g`` (the transpose is ``rt.polyval_dx``); smooth in ``x``; ``p`` only
    gives the shape and dtype."""

    def jvp_g(dg):
        return rt.polyval_vjp_p(dg, p, x, order)

    def jvp_p(dp):
        return rt.zeros_like(ans)

    def jvp_x(dx):
        return rt.polyval_vjp_p(g * dx, p, x, order + 1)

    def vjp_g(c):
        return rt.rebroadcast(rt.polyval_dx(c, x, order), g)

    def vjp_p(c):
        return rt.zeros_like(p)

    def vjp_x(c):
        return rt.unbroadcast(g * rt.polyval_dx(c, x, order + 1), x)


# piecewise constant: derivative 0 (where it exists)
nondifferentiable(np.heaviside)
if hasattr(np, "fix"):
    nondifferentiable(np.fix)
