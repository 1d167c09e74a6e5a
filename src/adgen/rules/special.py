"""SciPy's special functions (``scipy.special``), registered only when SciPy is installed.

Generated code calls them as ``scipy.special.<name>``; each derivative is written with
functions that have rules themselves (``digamma``'s derivative is ``zeta(2, x)``, whose
derivative is ``-2 zeta(3, x)``...), so derivatives can be differentiated again.

Conventions (where the derivative is not classical):

* ``xlogy(x, y)``, ``xlog1py(x, y)``: derivatives ``log(y)`` / ``log1p(y)`` and ``x / y`` /
  ``x / (1 + y)``; at ``y == 0`` (``y == -1``) they are not finite, like ``np.log``'s.
* Rules whose derivatives can be infinite or NaN where the function is finite (``xlogy``
  and ``xlog1py`` at ``x == 0``, ``entr``, ``rel_entr`` and ``kl_div`` at ``x == 0``,
  ``betaln`` at its poles, ``iv``/``ive`` at ``x == 0`` for ``0 < v < 1``) are registered
  ``singular=True``: a zero tangent or cotangent entry contributes exactly 0 there.
* ``entr(x)``: ``-(log(x) + 1)``, ``+inf`` at ``x == 0``, ``nan`` for ``x < 0`` (where
  ``entr`` is ``-inf``). ``rel_entr(x, y)``, ``kl_div(x, y)``: the formulas for
  ``x, y > 0`` (``-inf`` w.r.t. ``x`` at ``x == 0``).
* ``i0e(x) = exp(-|x|) i0(x)`` has a kink at 0: its derivative there is 0 (``np.sign(0)``).
* ``logsumexp(a, axis, b=..., keepdims)``: only ``return_sign=False`` (the default); with
  weights ``b`` the derivative holds where ``sum(b * exp(a)) > 0``.
* ``polygamma(n, x)``, ``zeta(x, q)``, ``iv(v, x)``, ``ive(v, x)``: differentiated w.r.t.
  their last argument only; ``n`` must be a constant integer ``>= 0`` (a differentiated
  order is refused). ``ive(v, x)`` at ``x == 0`` takes ``np.sign(0) = 0``.
* ``huber(delta, r)``: ``r`` or ``delta * sign(r)`` w.r.t. ``r``, ``0`` or ``|r| - delta``
  w.r.t. ``delta`` (continuous at ``|r| == delta``; for ``delta > 0``, where it is finite).
* ``gamma``, ``gammaln``, ``digamma``, ``polygamma`` are checked for ``x > 0``; the same
  formulas hold for negative ``x`` away from the poles (``gammaln`` is ``log|gamma|``).
"""

from __future__ import annotations

import math

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import rule, unary
from adgen.rules.samples import ANY, POSITIVE, UNIT, Arg, Domain, example

try:
    import scipy.special
except ImportError:  # pragma: no cover - SciPy is optional
    scipy = None  # type: ignore[assignment]

OPEN_UNIT = Domain(0.05, 0.95)  # inside (0, 1)
SQRT_PI = math.sqrt(math.pi)
SQRT_2PI = math.sqrt(2.0 * math.pi)

if scipy is not None:

    @unary(scipy.special.expit, domain=Domain(-4.0, 4.0))
    def expit(ans, x):
        return ans * (1.0 - ans)

    @unary(scipy.special.logit, domain=OPEN_UNIT)
    def logit(x):
        return 1.0 / (x * (1.0 - x))

    @unary(scipy.special.log_expit, domain=Domain(-4.0, 4.0))
    def log_expit(x):
        return scipy.special.expit(-x)

    @unary(scipy.special.erf, domain=ANY, complex=True)
    def erf(x):
        return 1.1283791670955126 * np.exp(-x * x)  # 2 / sqrt(pi)

    @unary(scipy.special.erfc, domain=ANY, complex=True)
    def erfc(x):
        return -1.1283791670955126 * np.exp(-x * x)

    @unary(scipy.special.erfcx, domain=ANY, complex=True)
    def erfcx(ans, x):
        """erfcx(x) = exp(x^2) erfc(x)."""
        return 2.0 * x * ans - 1.1283791670955126

    @unary(scipy.special.erfinv, domain=UNIT)
    def erfinv(ans, x):
        return 0.886226925452758 * np.exp(ans * ans)  # sqrt(pi) / 2

    @unary(scipy.special.erfcinv, domain=Domain(0.1, 1.9))
    def erfcinv(ans, x):
        return -0.886226925452758 * np.exp(ans * ans)

    @unary(scipy.special.ndtr, domain=ANY, complex=True)
    def ndtr(x):
        return 0.3989422804014327 * np.exp(-0.5 * x * x)  # 1 / sqrt(2 pi)

    @unary(scipy.special.ndtri, domain=OPEN_UNIT)
    def ndtri(ans, x):
        return 2.5066282746310002 * np.exp(0.5 * ans * ans)  # sqrt(2 pi)

    @unary(scipy.special.log_ndtr, domain=Domain(-4.0, 4.0), complex=True)
    def log_ndtr(ans, x):
        """pdf(x) / ndtr(x), computed as exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi) (no underflow)."""
        return 0.3989422804014327 * np.exp(-0.5 * x * x - ans)

    @unary(scipy.special.gammaln, domain=POSITIVE)
    def gammaln(x):
        return scipy.special.psi(x)

    @unary(scipy.special.loggamma, domain=POSITIVE)
    def loggamma(x):
        """log(gamma(x)) (``gammaln`` for ``x > 0``): its derivative is digamma. Complex
        values are refused: digamma's own derivative (for second order) is real-only."""
        return scipy.special.psi(x)

    @rule(
        scipy.special.wright_bessel,
        elementwise=True,
        examples=[
            example("scipy.special.wright_bessel(0.5, 1.0, x)", x=Arg((4,), POSITIVE)),
            example("scipy.special.wright_bessel(1.5, 0.0, x)", x=Arg((), POSITIVE)),
        ],
    )
    def wright_bessel(a, b, x):
        """Wright's generalized Bessel function sum_k x^k / (k! Gamma(a k + b)): its
        derivative in ``x`` is ``wright_bessel(a, a + b, x)`` (``a`` and ``b`` are data)."""

        def jvp_x(dx):
            return dx * scipy.special.wright_bessel(a, a + b, x)

        def vjp_x(g):
            return g * scipy.special.wright_bessel(a, a + b, x)

    if hasattr(scipy.special, "log_wright_bessel"):  # SciPy 1.14

        @rule(
            scipy.special.log_wright_bessel,
            elementwise=True,
            examples=[
                example("scipy.special.log_wright_bessel(0.5, 1.0, x)", x=Arg((4,), POSITIVE))
            ],
        )
        def log_wright_bessel(ans, a, b, x):
            """log of :func:`wright_bessel`: its derivative in ``x`` is the ratio
            ``wright_bessel(a, a + b, x) / wright_bessel(a, b, x)``, from the logs."""

            def jvp_x(dx):
                return dx * np.exp(scipy.special.log_wright_bessel(a, a + b, x) - ans)

            def vjp_x(g):
                return g * np.exp(scipy.special.log_wright_bessel(a, a + b, x) - ans)

    @unary(scipy.special.gamma, domain=POSITIVE)
    def gamma(ans, x):
        return ans * scipy.special.psi(x)

    @unary(scipy.special.psi, domain=POSITIVE)
    def digamma(x):
        """scipy.special.digamma is scipy.special.psi; its derivative is zeta(2, x)."""
        return scipy.special.zeta(2.0, x)

    @rule(
        scipy.special.zeta,
        elementwise=True,
        examples=[
            example("scipy.special.zeta(2.0, q)", q=Arg((4,), POSITIVE), f32=True),
            example("scipy.special.zeta(3.5, q)", q=Arg((2, 3), POSITIVE)),
        ],
    )
    def zeta(x, q=None):
        """Hurwitz zeta: d/dq zeta(x, q) = -x zeta(x + 1, q); the order x is not differentiated."""

        def jvp_q(dq):
            return -x * scipy.special.zeta(x + 1.0, q) * dq

        def vjp_q(g):
            return -x * scipy.special.zeta(x + 1.0, q) * g

    @rule(
        scipy.special.polygamma,
        elementwise=True,
        examples=[
            example("scipy.special.polygamma(0, x)", x=Arg((4,), POSITIVE), f32=True),
            example("scipy.special.polygamma(1, x)", x=Arg((2, 3), POSITIVE), f32=True),
            example("scipy.special.polygamma(3, x)", x=Arg(None, POSITIVE)),
        ],
    )
    def polygamma(n, x):
        """d/dx polygamma(n, x) = polygamma(n + 1, x) = (-1)^n (n + 1)! zeta(n + 2, x)."""

        def jvp_x(dx):
            return (-1.0) ** n * math.gamma(n + 2.0) * scipy.special.zeta(n + 2.0, x) * dx

        def vjp_x(g):
            return (-1.0) ** n * math.gamma(n + 2.0) * scipy.special.zeta(n + 2.0, x) * g

    @rule(
        scipy.special.huber,
        elementwise=True,
        domain=(POSITIVE, Domain(-3.0, 3.0)),
        examples=[
            example("scipy.special.huber(d, r)", d=Arg((), POSITIVE), r=(5,), f32=True),
            example("scipy.special.huber(1.0, r)", r=(2, 3)),
        ],
    )
    def huber(delta, r):
        """r^2 / 2 where |r| <= delta, else delta (|r| - delta / 2): d/dr = r or delta
        sign(r), d/ddelta = 0 or |r| - delta (both continuous where |r| == delta)."""

        def jvp_delta(dd):
            return np.where(np.abs(r) <= delta, 0.0, np.abs(r) - delta) * dd

        def jvp_r(dr):
            return np.where(np.abs(r) <= delta, r, delta * np.sign(r)) * dr

        def vjp_delta(g):
            return np.where(np.abs(r) <= delta, 0.0, np.abs(r) - delta) * g

        def vjp_r(g):
            return np.where(np.abs(r) <= delta, r, delta * np.sign(r)) * g

    @rule(scipy.special.xlogy, elementwise=True, domain=(ANY, POSITIVE), singular=True)
    def xlogy(x, y):
        def jvp_x(dx):
            return dx * np.log(y)

        def jvp_y(dy):
            return np.divide(dy * x, y)

        def vjp_x(g):
            return g * np.log(y)

        def vjp_y(g):
            return np.divide(g * x, y)

    @rule(scipy.special.xlog1py, elementwise=True, domain=(ANY, Domain(-0.7, 2.0)), singular=True)
    def xlog1py(x, y):
        def jvp_x(dx):
            return dx * np.log1p(y)

        def jvp_y(dy):
            return np.divide(dy * x, 1.0 + y)

        def vjp_x(g):
            return g * np.log1p(y)

        def vjp_y(g):
            return np.divide(g * x, 1.0 + y)

    @unary(scipy.special.entr, domain=POSITIVE, singular=True)
    def entr(x):
        return -(np.log(x) + 1.0)

    @rule(scipy.special.rel_entr, elementwise=True, domain=(POSITIVE, POSITIVE), singular=True)
    def rel_entr(x, y):
        """x log(x / y) for x, y > 0."""

        def jvp_x(dx):
            return dx * (np.log(np.divide(x, y)) + 1.0)

        def jvp_y(dy):
            return -np.divide(dy * x, y)

        def vjp_x(g):
            return g * (np.log(np.divide(x, y)) + 1.0)

        def vjp_y(g):
            return -np.divide(g * x, y)

    @rule(scipy.special.kl_div, elementwise=True, domain=(POSITIVE, POSITIVE), singular=True)
    def kl_div(x, y):
        """x log(x / y) - x + y for x, y > 0."""

        def jvp_x(dx):
            return dx * np.log(np.divide(x, y))

        def jvp_y(dy):
            return dy * (1.0 - np.divide(x, y))

        def vjp_x(g):
            return g * np.log(np.divide(x, y))

        def vjp_y(g):
            return g * (1.0 - np.divide(x, y))

    @rule(scipy.special.betaln, elementwise=True, domain=(POSITIVE, POSITIVE), singular=True)
    def betaln(a, b):
        """gammaln(a) + gammaln(b) - gammaln(a + b)."""

        def jvp_a(da):
            return da * (scipy.special.psi(a) - scipy.special.psi(a + b))

        def jvp_b(db):
            return db * (scipy.special.psi(b) - scipy.special.psi(a + b))

        def vjp_a(g):
            return g * (scipy.special.psi(a) - scipy.special.psi(a + b))

        def vjp_b(g):
            return g * (scipy.special.psi(b) - scipy.special.psi(a + b))

    @unary(scipy.special.i0, domain=Domain(-3.0, 3.0))
    def i0(x):
        return scipy.special.i1(x)

    @unary(scipy.special.i0e, domain=Domain(-3.0, 3.0, avoid=(0.0,), gap=0.1))
    def i0e(ans, x):
        """exp(-|x|) i0(x): i1e(x) - sign(x) i0e(x) (0 at the kink x == 0)."""
        return scipy.special.i1e(x) - np.sign(x) * ans

    @unary(scipy.special.i1, domain=Domain(-3.0, 3.0))
    def i1(x):
        """I1' = (I0 + I2) / 2 (finite at 0, unlike I0 - I1 / x)."""
        return 0.5 * (scipy.special.i0(x) + scipy.special.iv(2.0, x))

    @unary(scipy.special.i1e, domain=Domain(-3.0, 3.0, avoid=(0.0,), gap=0.1))
    def i1e(ans, x):
        return 0.5 * (scipy.special.i0e(x) + scipy.special.ive(2.0, x)) - np.sign(x) * ans

    @rule(
        scipy.special.iv,
        elementwise=True,
        singular=True,
        examples=[
            example("scipy.special.iv(2.0, x)", x=Arg((4,), Domain(0.2, 3.0)), f32=True),
            example("scipy.special.iv(0.5, x)", x=Arg((2, 3), Domain(0.2, 3.0))),
            example("scipy.special.iv(1.0, x)", x=Arg(None, Domain(-3.0, 3.0))),
        ],
    )
    def iv(v, x):
        """Modified Bessel function of the first kind: I_v' = (I_{v-1} + I_{v+1}) / 2."""

        def jvp_x(dx):
            return 0.5 * (scipy.special.iv(v - 1.0, x) + scipy.special.iv(v + 1.0, x)) * dx

        def vjp_x(g):
            return 0.5 * (scipy.special.iv(v - 1.0, x) + scipy.special.iv(v + 1.0, x)) * g

    @rule(
        scipy.special.ive,
        elementwise=True,
        singular=True,
        examples=[
            example("scipy.special.ive(2.0, x)", x=Arg((4,), Domain(0.2, 3.0)), f32=True),
            example("scipy.special.ive(1.5, x)", x=Arg((2, 3), Domain(0.2, 3.0))),
        ],
    )
    def ive(ans, v, x):
        """exp(-|x|) iv(v, x): (ive(v-1, x) + ive(v+1, x)) / 2 - sign(x) ive(v, x)."""

        def jvp_x(dx):
            return (
                0.5 * (scipy.special.ive(v - 1.0, x) + scipy.special.ive(v + 1.0, x))
                - np.sign(x) * ans
            ) * dx

        def vjp_x(g):
            return (
                0.5 * (scipy.special.ive(v - 1.0, x) + scipy.special.ive(v + 1.0, x))
                - np.sign(x) * ans
            ) * g

    @rule(
        scipy.special.softmax,
        examples=[
            example("scipy.special.softmax(x)", x=(5,), f32=True),
            example("scipy.special.softmax(x, axis=1)", x=(3, 4), f32=True),
            example("scipy.special.softmax(x, axis=0)[1]", x=(3, 4)),
            example("scipy.special.softmax(x, axis=-1)", x=(2, 3, 4)),
            example("scipy.special.softmax(x, axis=(0, 2))", x=(2, 3, 4)),
            example("scipy.special.softmax(x)", x=(2, 3)),
        ],
        complex=True,
    )
    def softmax(ans, x, axis=None):
        """s = softmax(x): ds = s * (dx - sum(s * dx)) along ``axis`` (all axes for None)."""

        def jvp(dx):
            return ans * (dx - np.sum(ans * dx, axis=axis, keepdims=True))

        def vjp(g):
            return ans * (g - np.sum(ans * g, axis=axis, keepdims=True))

    @rule(
        scipy.special.log_softmax,
        examples=[
            example("scipy.special.log_softmax(x)", x=(5,), f32=True),
            example("scipy.special.log_softmax(x, axis=1)", x=(3, 4), f32=True),
            example("scipy.special.log_softmax(x, axis=0)[2]", x=(3, 4)),
            example("scipy.special.log_softmax(x, axis=(1, 2))", x=(2, 3, 4)),
            example("scipy.special.log_softmax(x)", x=(2, 3)),
        ],
        complex=True,
    )
    def log_softmax(ans, x, axis=None):
        """d log_softmax = dx - sum(softmax(x) * dx) along ``axis``."""

        def jvp(dx):
            return dx - np.sum(np.exp(ans) * dx, axis=axis, keepdims=True)

        def vjp(g):
            return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)

    @rule(
        scipy.special.logsumexp,
        examples=[
            example("scipy.special.logsumexp(a)", a=(5,), f32=True),
            example("scipy.special.logsumexp(a, axis=1)", a=(3, 4), f32=True),
            example("scipy.special.logsumexp(a, axis=0, keepdims=True)", a=(3, 4)),
            example("scipy.special.logsumexp(a, axis=(0, 2))", a=(2, 3, 4)),
            example("scipy.special.logsumexp(a, axis=-1, b=b)", a=(3, 4), b=Arg((4,), POSITIVE)),
            example(
                "scipy.special.logsumexp(a, b=b, keepdims=True)",
                a=(3, 1),
                b=Arg((3, 4), POSITIVE),
                f32=True,
            ),
        ],
        complex=True,
    )
    def logsumexp(ans, a, axis=None, b=None, keepdims=False):
        """log(sum(b * exp(a))) (``return_sign`` is not accepted): the derivative w.r.t. ``a``
        is ``b * exp(a - logsumexp)`` (``softmax(a)`` without weights), w.r.t. ``b``
        ``exp(a - logsumexp)``."""

        def jvp_a(da):
            if b is None:
                return np.sum(
                    scipy.special.softmax(a, axis=axis) * da, axis=axis, keepdims=keepdims
                )
            return np.sum(
                b * np.exp(a - scipy.special.logsumexp(a, axis=axis, b=b, keepdims=True)) * da,
                axis=axis,
                keepdims=keepdims,
            )

        def jvp_b(db):
            return np.sum(
                np.exp(a - scipy.special.logsumexp(a, axis=axis, b=b, keepdims=True)) * db,
                axis=axis,
                keepdims=keepdims,
            )

        def vjp_a(g):
            if keepdims or axis is None:
                g_full = g
            else:
                g_full = np.expand_dims(g, axis)
            if b is None:
                return g_full * scipy.special.softmax(a, axis=axis)
            return rt.unbroadcast(
                g_full * b * np.exp(a - scipy.special.logsumexp(a, axis=axis, b=b, keepdims=True)),
                a,
            )

        def vjp_b(g):
            if keepdims or axis is None:
                g_full = g
            else:
                g_full = np.expand_dims(g, axis)
            return rt.unbroadcast(
                g_full * np.exp(a - scipy.special.logsumexp(a, axis=axis, b=b, keepdims=True)),
                b,
            )
