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
* Orders, shapes, counts and degrees are data: Bessel, Struve and Kelvin orders ``v``/``n``,
  ``gammainc``'s ``a``, ``betainc``'s ``a`` and ``b``, degrees of freedom (``stdtr``,
  ``chdtr``, ``fdtr``), counts (``pdtr``, ``bdtr``, ``nbdtr``), ``boxcox``'s ``lmbda``,
  ``tklmbda``'s ``lmbda``, ``ellipj``'s and ``ellipkinc``'s ``m``, the hypergeometric
  parameters, the polynomials' degrees and parameters. Those rules have no template for
  them (most have no closed-form derivative), so a differentiated value reaching one is
  refused by name ("no derivative of scipy.special.jv with respect to its argument `v`").
  ``scipy.special.jn`` is ``jv`` itself.
* Real arguments only (no ``complex=True``) for everything added with the Bessel functions:
  ``jve``/``yve`` are ``jv``/``yv`` for real ``x``; ``kve``, ``k0e``, ``k1e`` are
  ``exp(x)`` times ``kv``, ``k0``, ``k1`` (x > 0). Complex-valued functions (``hankel1``,
  ``wofz``, ``kelvin``, ``modfresnelp``...) have no rule.
* ``spherical_jn``, ``spherical_yn``, ``spherical_in``, ``spherical_kn`` (SciPy's Python
  functions, registered themselves): the derivative in ``z`` is SciPy's own
  ``derivative=True``; with ``derivative=True`` it is the second derivative, from the
  differential equation ``z^2 w'' + 2 z w' + (+-z^2 - n (n + 1)) w = 0``, for ``z > 0``
  (``derivative`` may be a variable: the template then branches when it runs).
* Distribution functions: a CDF or survival function is differentiated in its variable (its
  density, written with ``xlogy``, ``xlog1py``, ``gammaln``, ``betaln``: a density at an
  edge of the support is 0 or infinite as the formula says), an inverse (``gammaincinv``,
  ``betaincinv``, ``stdtrit``, ``chdtri``, ``fdtri``, ``gdtrix``, ``pdtri``, ``bdtri``,
  ``nbdtri``) in its probability, as one over the density at the result; ``gdtr``,
  ``gdtrc``, ``gdtrix`` also in the rate ``a``. Functions that solve for a shape or a count
  (``stdtridf``, ``bdtrik``...) have no rule.
* Functions of several results (``sici``, ``shichi``, ``fresnel``, ``airy``, ``ellipj``,
  ``itj0y0``, ``it2j0y0``, ``iti0k0``, ``it2i0k0``, ``itairy``, ``pbdv``, ``pbvv``,
  ``pbwa``) are registered with ``outputs=``; the parabolic cylinder functions' second
  derivatives come from their differential equations, Kelvin functions' (``berp``...)
  from ``x^2 w'' + x w' - i x^2 w = 0``.
* Orthogonal polynomials (``eval_*``, not ``eval_sh_jacobi``) in ``x``: a function of degree
  ``n - 1`` of the same family (valid for non-integer degrees too, by the hypergeometric
  forms); 0 at an integer degree ``n <= 0``, where the degree passed on is 0, so no negative
  degree is evaluated (SciPy's values there differ between its integer and float paths).
* Points where a formula divides 0 by 0 give nan, not the limit: ``ellipk``, ``ellipe`` at
  ``m == 0``, ``ellipkm1`` at ``p == 1``, ``spence`` at ``x == 1``, ``sici``'s ``Ci``,
  ``shichi``, ``expn``, ``exp1``, ``expi`` at ``x == 0`` (where the functions are singular
  or not finite anyway, except the first four).
* ``gammasgn`` and ``round`` are piecewise constant: registered non-differentiable.
"""

from __future__ import annotations

import math

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import nondifferentiable, partials, rule, unary
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

        def bjvp(dx):
            summed = np.sum(ans * dx, axis=rt.batch_axis(axis, np.ndim(x)), keepdims=True)
            return ans * (dx - summed)

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

        def bjvp(dx):
            return dx - np.sum(
                np.exp(ans) * dx, axis=rt.batch_axis(axis, np.ndim(x)), keepdims=True
            )

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

        def bjvp_a(da):
            if b is None:
                return np.sum(
                    scipy.special.softmax(a, axis=axis) * da,
                    axis=rt.batch_axis(axis, np.ndim(a)),
                    keepdims=keepdims,
                )
            return None

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

    # ------------------------------------------------------------------ Bessel functions
    # Orders are data: a differentiated order reaches a parameter without a template and is
    # refused by name. The derivatives in x are the classical recurrences.

    POS_X = Domain(0.3, 4.0)

    @partials(
        scipy.special.jv,
        examples=[
            example("scipy.special.jv(1.5, x)", x=Arg((4,), POS_X)),
            example("scipy.special.jv(0.0, x)", x=Arg((2, 3), Domain(-4.0, 4.0))),
            example("scipy.special.jv(2.0, x)", x=Arg(None, POS_X)),
            example("scipy.special.jn(3, x)", x=Arg((4,), Domain(-4.0, 4.0))),
        ],
    )
    def jv(ans, v, x):
        """J_v' = (J_{v-1} - J_{v+1}) / 2 (``scipy.special.jn`` is ``jv``)."""
        return {"x": 0.5 * (scipy.special.jv(v - 1.0, x) - scipy.special.jv(v + 1.0, x))}

    @partials(
        scipy.special.jve,
        examples=[example("scipy.special.jve(1.5, x)", x=Arg((4,), POS_X))],
    )
    def jve(ans, v, x):
        """jve(v, x) = jv(v, x) for real x: the same recurrence, on jve."""
        return {"x": 0.5 * (scipy.special.jve(v - 1.0, x) - scipy.special.jve(v + 1.0, x))}

    @partials(
        scipy.special.yv,
        examples=[
            example("scipy.special.yv(1.5, x)", x=Arg((4,), POS_X)),
            example("scipy.special.yv(0.0, x)", x=Arg((2, 3), POS_X)),
        ],
    )
    def yv(ans, v, x):
        """Y_v' = (Y_{v-1} - Y_{v+1}) / 2 (x > 0)."""
        return {"x": 0.5 * (scipy.special.yv(v - 1.0, x) - scipy.special.yv(v + 1.0, x))}

    @partials(
        scipy.special.yve,
        examples=[example("scipy.special.yve(0.5, x)", x=Arg((4,), POS_X))],
    )
    def yve(ans, v, x):
        """yve(v, x) = yv(v, x) for real x > 0."""
        return {"x": 0.5 * (scipy.special.yve(v - 1.0, x) - scipy.special.yve(v + 1.0, x))}

    @partials(
        scipy.special.yn,
        examples=[example("scipy.special.yn(2, x)", x=Arg((4,), POS_X))],
    )
    def yn(ans, n, x):
        """Integer order, through ``yv``."""
        return {"x": 0.5 * (scipy.special.yv(n - 1.0, x) - scipy.special.yv(n + 1.0, x))}

    @partials(
        scipy.special.kv,
        examples=[
            example("scipy.special.kv(1.5, x)", x=Arg((4,), POS_X)),
            example("scipy.special.kv(0.0, x)", x=Arg((2, 3), POS_X)),
        ],
    )
    def kv(ans, v, x):
        """K_v' = -(K_{v-1} + K_{v+1}) / 2 (x > 0)."""
        return {"x": -0.5 * (scipy.special.kv(v - 1.0, x) + scipy.special.kv(v + 1.0, x))}

    @partials(
        scipy.special.kve,
        examples=[example("scipy.special.kve(1.5, x)", x=Arg((4,), POS_X))],
    )
    def kve(ans, v, x):
        """kve = exp(x) kv: kve - (kve(v-1) + kve(v+1)) / 2."""
        return {"x": ans - 0.5 * (scipy.special.kve(v - 1.0, x) + scipy.special.kve(v + 1.0, x))}

    @partials(
        scipy.special.kn,
        examples=[example("scipy.special.kn(2, x)", x=Arg((4,), POS_X))],
    )
    def kn(ans, n, x):
        """Integer order, through ``kv``."""
        return {"x": -0.5 * (scipy.special.kv(n - 1.0, x) + scipy.special.kv(n + 1.0, x))}

    @unary(scipy.special.j0, domain=Domain(-4.0, 4.0))
    def j0(x):
        return -scipy.special.j1(x)

    @unary(scipy.special.j1, domain=Domain(-4.0, 4.0))
    def j1(x):
        return 0.5 * (scipy.special.j0(x) - scipy.special.jv(2.0, x))

    @unary(scipy.special.y0, domain=POS_X)
    def y0(x):
        return -scipy.special.y1(x)

    @unary(scipy.special.y1, domain=POS_X)
    def y1(x):
        return 0.5 * (scipy.special.y0(x) - scipy.special.yv(2.0, x))

    @unary(scipy.special.k0, domain=POS_X)
    def k0(x):
        return -scipy.special.k1(x)

    @unary(scipy.special.k1, domain=POS_X)
    def k1(x):
        return -0.5 * (scipy.special.k0(x) + scipy.special.kv(2.0, x))

    @unary(scipy.special.k0e, domain=POS_X)
    def k0e(ans, x):
        """exp(x) k0(x): k0e - k1e."""
        return ans - scipy.special.k1e(x)

    @unary(scipy.special.k1e, domain=POS_X)
    def k1e(ans, x):
        return ans - 0.5 * (scipy.special.k0e(x) + scipy.special.kve(2.0, x))

    # Spherical Bessel functions (SciPy's Python functions, registered themselves): the
    # first derivative is SciPy's own ``derivative=True``; with ``derivative=True`` the
    # derivative is the second one, from the differential equation
    # z^2 y'' + 2 z y' + (+-z^2 - n (n + 1)) y = 0 (+ for j, y; - for i, k), so z > 0.

    @rule(
        scipy.special.spherical_jn,
        elementwise=True,
        singular=True,
        examples=[
            example("scipy.special.spherical_jn(2, z)", z=Arg((4,), POS_X)),
            example("scipy.special.spherical_jn(0, z)", z=Arg(None, POS_X)),
            example("scipy.special.spherical_jn(1, z, derivative=True)", z=Arg((2, 3), POS_X)),
            example("scipy.special.spherical_jn(3, z, True)", z=Arg((4,), POS_X)),
        ],
    )
    def spherical_jn(ans, n, z, derivative=False):
        """d/dz j_n = spherical_jn(n, z, derivative=True); j_n'' = -2 j_n' / z -
        (1 - n (n + 1) / z^2) j_n."""

        def jvp_z(dz):
            if derivative:
                return dz * (
                    -2.0 * np.divide(ans, z)
                    - (1.0 - np.divide(n * (n + 1.0), z * z)) * scipy.special.spherical_jn(n, z)
                )
            return dz * scipy.special.spherical_jn(n, z, derivative=True)

        vjp_z = jvp_z  # noqa: F841 - read by the registry

    @rule(
        scipy.special.spherical_yn,
        elementwise=True,
        singular=True,
        examples=[
            example("scipy.special.spherical_yn(2, z)", z=Arg((4,), POS_X)),
            example("scipy.special.spherical_yn(1, z, derivative=True)", z=Arg((2, 3), POS_X)),
        ],
    )
    def spherical_yn(ans, n, z, derivative=False):
        """As for :func:`spherical_jn` (the same differential equation)."""

        def jvp_z(dz):
            if derivative:
                return dz * (
                    -2.0 * np.divide(ans, z)
                    - (1.0 - np.divide(n * (n + 1.0), z * z)) * scipy.special.spherical_yn(n, z)
                )
            return dz * scipy.special.spherical_yn(n, z, derivative=True)

        vjp_z = jvp_z  # noqa: F841 - read by the registry

    @rule(
        scipy.special.spherical_in,
        elementwise=True,
        singular=True,
        examples=[
            example("scipy.special.spherical_in(2, z)", z=Arg((4,), POS_X)),
            example("scipy.special.spherical_in(1, z, derivative=True)", z=Arg((2, 3), POS_X)),
        ],
    )
    def spherical_in(ans, n, z, derivative=False):
        """i_n'' = -2 i_n' / z + (1 + n (n + 1) / z^2) i_n."""

        def jvp_z(dz):
            if derivative:
                return dz * (
                    -2.0 * np.divide(ans, z)
                    + (1.0 + np.divide(n * (n + 1.0), z * z)) * scipy.special.spherical_in(n, z)
                )
            return dz * scipy.special.spherical_in(n, z, derivative=True)

        vjp_z = jvp_z  # noqa: F841 - read by the registry

    @rule(
        scipy.special.spherical_kn,
        elementwise=True,
        singular=True,
        examples=[
            example("scipy.special.spherical_kn(2, z)", z=Arg((4,), POS_X)),
            example("scipy.special.spherical_kn(0, z, derivative=True)", z=Arg((2, 3), POS_X)),
        ],
    )
    def spherical_kn(ans, n, z, derivative=False):
        """As for :func:`spherical_in` (the same differential equation)."""

        def jvp_z(dz):
            if derivative:
                return dz * (
                    -2.0 * np.divide(ans, z)
                    + (1.0 + np.divide(n * (n + 1.0), z * z)) * scipy.special.spherical_kn(n, z)
                )
            return dz * scipy.special.spherical_kn(n, z, derivative=True)

        vjp_z = jvp_z  # noqa: F841 - read by the registry

    # ------------------------------------------- incomplete gamma and beta, and their inverses
    # Differentiated in x (y for the inverses) only: the shape parameters' derivatives have no
    # closed form, and a differentiated shape is refused by name.

    @partials(
        scipy.special.gammainc,
        examples=[
            example("scipy.special.gammainc(2.5, x)", x=Arg((4,), POSITIVE)),
            example("scipy.special.gammainc(0.7, x)", x=Arg((2, 3), POSITIVE)),
        ],
    )
    def gammainc(ans, a, x):
        """d/dx P(a, x) = x^(a-1) exp(-x) / Gamma(a)."""
        return {"x": np.exp(scipy.special.xlogy(a - 1.0, x) - x - scipy.special.gammaln(a))}

    @partials(
        scipy.special.gammaincc,
        examples=[example("scipy.special.gammaincc(2.5, x)", x=Arg((4,), POSITIVE))],
    )
    def gammaincc(ans, a, x):
        """Q = 1 - P."""
        return {"x": -np.exp(scipy.special.xlogy(a - 1.0, x) - x - scipy.special.gammaln(a))}

    @partials(
        scipy.special.gammaincinv,
        examples=[example("scipy.special.gammaincinv(2.5, y)", y=Arg((4,), OPEN_UNIT))],
    )
    def gammaincinv(ans, a, y):
        """x = P^-1(a, y): dx/dy = 1 / P'(x) = Gamma(a) x^(1-a) exp(x)."""
        return {"y": np.exp(scipy.special.gammaln(a) - scipy.special.xlogy(a - 1.0, ans) + ans)}

    @partials(
        scipy.special.gammainccinv,
        examples=[example("scipy.special.gammainccinv(1.5, y)", y=Arg((4,), OPEN_UNIT))],
    )
    def gammainccinv(ans, a, y):
        """x = Q^-1(a, y): dx/dy = -1 / P'(x)."""
        return {"y": -np.exp(scipy.special.gammaln(a) - scipy.special.xlogy(a - 1.0, ans) + ans)}

    @partials(
        scipy.special.betainc,
        examples=[
            example("scipy.special.betainc(2.5, 1.5, x)", x=Arg((4,), OPEN_UNIT)),
            example("scipy.special.betainc(0.8, 3.0, x)", x=Arg((2, 3), OPEN_UNIT)),
        ],
    )
    def betainc(ans, a, b, x):
        """d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)."""
        return {
            "x": np.exp(
                scipy.special.xlogy(a - 1.0, x)
                + scipy.special.xlog1py(b - 1.0, -x)
                - scipy.special.betaln(a, b)
            )
        }

    @partials(
        scipy.special.betaincc,
        examples=[example("scipy.special.betaincc(2.5, 1.5, x)", x=Arg((4,), OPEN_UNIT))],
    )
    def betaincc(ans, a, b, x):
        """1 - I_x(a, b)."""
        return {
            "x": -np.exp(
                scipy.special.xlogy(a - 1.0, x)
                + scipy.special.xlog1py(b - 1.0, -x)
                - scipy.special.betaln(a, b)
            )
        }

    @partials(
        scipy.special.betaincinv,
        examples=[example("scipy.special.betaincinv(2.5, 1.5, y)", y=Arg((4,), OPEN_UNIT))],
    )
    def betaincinv(ans, a, b, y):
        """x = I^-1(a, b, y): dx/dy = B(a, b) x^(1-a) (1-x)^(1-b)."""
        return {
            "y": np.exp(
                scipy.special.betaln(a, b)
                - scipy.special.xlogy(a - 1.0, ans)
                - scipy.special.xlog1py(b - 1.0, -ans)
            )
        }

    @partials(
        scipy.special.betainccinv,
        examples=[example("scipy.special.betainccinv(2.5, 1.5, y)", y=Arg((4,), OPEN_UNIT))],
    )
    def betainccinv(ans, a, b, y):
        """x with 1 - I_x(a, b) = y: dx/dy = -B(a, b) x^(1-a) (1-x)^(1-b)."""
        return {
            "y": -np.exp(
                scipy.special.betaln(a, b)
                - scipy.special.xlogy(a - 1.0, ans)
                - scipy.special.xlog1py(b - 1.0, -ans)
            )
        }

    # ------------------------------------------------------- gamma and beta function family

    @partials(scipy.special.beta, domain=(POSITIVE, POSITIVE))
    def beta(ans, a, b):
        """B(a, b) (psi(a) - psi(a + b)), and in b likewise (a, b > 0)."""
        return {
            "a": ans * (scipy.special.psi(a) - scipy.special.psi(a + b)),
            "b": ans * (scipy.special.psi(b) - scipy.special.psi(a + b)),
        }

    @partials(scipy.special.binom, domain=(Domain(3.2, 5.0), Domain(0.3, 2.0)))
    def binom(ans, n, k):
        """Gamma(n + 1) / (Gamma(k + 1) Gamma(n - k + 1)), away from the poles of the Gammas."""
        return {
            "n": ans * (scipy.special.psi(n + 1.0) - scipy.special.psi(n - k + 1.0)),
            "k": ans * (scipy.special.psi(n - k + 1.0) - scipy.special.psi(k + 1.0)),
        }

    @partials(scipy.special.poch, domain=(POSITIVE, POSITIVE))
    def poch(ans, z, m):
        """Gamma(z + m) / Gamma(z) (z, z + m away from the poles)."""
        return {
            "z": ans * (scipy.special.psi(z + m) - scipy.special.psi(z)),
            "m": ans * scipy.special.psi(z + m),
        }

    @unary(scipy.special.rgamma, singular=True, domain=POSITIVE)
    def rgamma(ans, x):
        """1 / Gamma(x): -rgamma(x) psi(x) (x > 0; rgamma is 0 at the poles, psi infinite)."""
        return -ans * scipy.special.psi(x)

    # ------------------------------------------------- error functions, exponential integrals

    @unary(scipy.special.erfi, domain=ANY)
    def erfi(x):
        return 1.1283791670955126 * np.exp(x * x)

    @unary(scipy.special.dawsn, domain=Domain(-3.0, 3.0))
    def dawsn(ans, x):
        """D' = 1 - 2 x D."""
        return 1.0 - 2.0 * x * ans

    @unary(scipy.special.exp1, domain=POSITIVE)
    def exp1(x):
        """E1' = -exp(-x) / x (x > 0)."""
        return -np.exp(-x) / x

    @unary(scipy.special.expi, domain=POSITIVE)
    def expi(x):
        """Ei' = exp(x) / x (x != 0)."""
        return np.exp(x) / x

    @partials(
        scipy.special.expn,
        examples=[
            example("scipy.special.expn(0, x)", x=Arg((4,), POSITIVE)),
            example("scipy.special.expn(3, x)", x=Arg((2, 3), POSITIVE)),
        ],
    )
    def expn(ans, n, x):
        """E_n' = -E_{n-1} = ((n - 1) E_n - exp(-x)) / x (from the recurrence; any n, x > 0)."""
        return {"x": ((n - 1.0) * ans - np.exp(-x)) / x}

    @rule(
        scipy.special.sici,
        elementwise=True,
        outputs=2,
        examples=[
            example("scipy.special.sici(x)[0]", x=Arg((4,), Domain(-4.0, 4.0))),
            example("scipy.special.sici(x)[1] * scipy.special.sici(x)[0]", x=Arg((4,), POS_X)),
            example("scipy.special.sici(x)[1]", x=Arg(None, POS_X)),
        ],
    )
    def sici(ans, x):
        """(Si, Ci): Si' = sin(x) / x (sinc: 1 at 0), Ci' = cos(x) / x (x > 0)."""

        def jvp(dx):
            return (dx * np.sinc(x / np.pi), rt.zero_safe(dx * np.cos(x) / x, dx))

        def vjp(g):
            return g[0] * np.sinc(x / np.pi) + rt.zero_safe(g[1] * np.cos(x) / x, g[1])

    @rule(
        scipy.special.shichi,
        elementwise=True,
        outputs=2,
        examples=[
            example("scipy.special.shichi(x)[0]", x=Arg((4,), POS_X)),
            example("scipy.special.shichi(x)[1] * scipy.special.shichi(x)[0]", x=Arg((4,), POS_X)),
        ],
    )
    def shichi(ans, x):
        """(Shi, Chi): Shi' = sinh(x) / x, Chi' = cosh(x) / x (x > 0)."""

        def jvp(dx):
            return (rt.zero_safe(dx * np.sinh(x) / x, dx), rt.zero_safe(dx * np.cosh(x) / x, dx))

        def vjp(g):
            return rt.zero_safe(g[0] * np.sinh(x) / x, g[0]) + rt.zero_safe(
                g[1] * np.cosh(x) / x, g[1]
            )

    @rule(
        scipy.special.fresnel,
        elementwise=True,
        outputs=2,
        examples=[
            example("scipy.special.fresnel(x)[0]", x=Arg((4,), Domain(-2.0, 2.0))),
            example("scipy.special.fresnel(x)[1] * scipy.special.fresnel(x)[0]", x=(2, 3)),
        ],
    )
    def fresnel(ans, x):
        """(S, C): S' = sin(pi x^2 / 2), C' = cos(pi x^2 / 2)."""

        def jvp(dx):
            return (dx * np.sin(0.5 * np.pi * x * x), dx * np.cos(0.5 * np.pi * x * x))

        def vjp(g):
            return g[0] * np.sin(0.5 * np.pi * x * x) + g[1] * np.cos(0.5 * np.pi * x * x)

    @partials(
        scipy.special.struve,
        examples=[
            example("scipy.special.struve(0.0, x)", x=Arg((4,), POS_X)),
            example("scipy.special.struve(1.5, x)", x=Arg((2, 3), POS_X)),
        ],
    )
    def struve(ans, v, x):
        """(x^v H_v)' = x^v H_{v-1}: H_v' = H_{v-1} - v H_v / x (x > 0)."""
        return {"x": scipy.special.struve(v - 1.0, x) - v * ans / x}

    @partials(
        scipy.special.modstruve,
        examples=[
            example("scipy.special.modstruve(0.0, x)", x=Arg((4,), POS_X)),
            example("scipy.special.modstruve(1.5, x)", x=Arg((2, 3), POS_X)),
        ],
    )
    def modstruve(ans, v, x):
        """(x^v L_v)' = x^v L_{v-1}: L_v' = L_{v-1} - v L_v / x (x > 0)."""
        return {"x": scipy.special.modstruve(v - 1.0, x) - v * ans / x}

    @partials(scipy.special.owens_t, domain=(Domain(-2.0, 2.0), Domain(-2.0, 2.0)))
    def owens_t(ans, h, a):
        """T(h, a) = int_0^a exp(-h^2 (1 + t^2) / 2) / (2 pi (1 + t^2)) dt:
        dT/da = exp(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2)),
        dT/dh = -phi(h) erf(a h / sqrt(2)) / 2."""
        return {
            "h": -0.19947114020071635
            * np.exp(-0.5 * h * h)
            * scipy.special.erf(0.7071067811865476 * a * h),
            "a": 0.15915494309189535 * np.exp(-0.5 * h * h * (1.0 + a * a)) / (1.0 + a * a),
        }

    # ----------------------------------------------------------- distribution functions
    # CDFs and survival functions in their variable (their density), inverses in their
    # probability (one over the density at the result). Counts and shapes are refused.

    @partials(
        scipy.special.stdtr,
        examples=[
            example("scipy.special.stdtr(3.5, t)", t=Arg((4,), Domain(-3.0, 3.0))),
            example("scipy.special.stdtr(1.0, t)", t=Arg((2, 3), Domain(-3.0, 3.0))),
        ],
    )
    def stdtr(ans, df, t):
        """Student t CDF: its density Gamma((df+1)/2) / (sqrt(df pi) Gamma(df/2))
        (1 + t^2/df)^(-(df+1)/2)."""
        return {
            "t": np.exp(
                scipy.special.gammaln(0.5 * df + 0.5)
                - scipy.special.gammaln(0.5 * df)
                - 0.5 * np.log(np.pi * df)
                - (0.5 * df + 0.5) * np.log1p(t * t / df)
            )
        }

    @partials(
        scipy.special.stdtrit,
        examples=[example("scipy.special.stdtrit(3.5, p)", p=Arg((4,), OPEN_UNIT))],
    )
    def stdtrit(ans, df, p):
        """t = stdtr^-1(df, p): one over the density at t."""
        return {
            "p": np.exp(
                scipy.special.gammaln(0.5 * df)
                - scipy.special.gammaln(0.5 * df + 0.5)
                + 0.5 * np.log(np.pi * df)
                + (0.5 * df + 0.5) * np.log1p(ans * ans / df)
            )
        }

    @partials(
        scipy.special.chdtr,
        examples=[example("scipy.special.chdtr(3.5, x)", x=Arg((4,), POSITIVE))],
    )
    def chdtr(ans, v, x):
        """Chi-square CDF (P(v/2, x/2)): density (x/2)^(v/2-1) exp(-x/2) / (2 Gamma(v/2))."""
        return {
            "x": 0.5
            * np.exp(
                scipy.special.xlogy(0.5 * v - 1.0, 0.5 * x)
                - 0.5 * x
                - scipy.special.gammaln(0.5 * v)
            )
        }

    @partials(
        scipy.special.chdtrc,
        examples=[example("scipy.special.chdtrc(3.5, x)", x=Arg((4,), POSITIVE))],
    )
    def chdtrc(ans, v, x):
        """1 - chdtr: minus the density."""
        return {
            "x": -0.5
            * np.exp(
                scipy.special.xlogy(0.5 * v - 1.0, 0.5 * x)
                - 0.5 * x
                - scipy.special.gammaln(0.5 * v)
            )
        }

    @partials(
        scipy.special.chdtri,
        examples=[example("scipy.special.chdtri(3.5, p)", p=Arg((4,), OPEN_UNIT))],
    )
    def chdtri(ans, v, p):
        """x with chdtrc(v, x) = p: -1 / density(x)."""
        return {
            "p": -2.0
            * np.exp(
                scipy.special.gammaln(0.5 * v)
                + 0.5 * ans
                - scipy.special.xlogy(0.5 * v - 1.0, 0.5 * ans)
            )
        }

    @partials(
        scipy.special.fdtr,
        examples=[example("scipy.special.fdtr(2.5, 3.5, x)", x=Arg((4,), POSITIVE))],
    )
    def fdtr(ans, dfn, dfd, x):
        """F CDF, I_w(dfn/2, dfd/2) with w = dfn x / (dfd + dfn x): betainc's density in w
        times dw/dx = dfn dfd / (dfd + dfn x)^2."""
        w = dfn * x / (dfd + dfn * x)
        return {
            "x": np.exp(
                scipy.special.xlogy(0.5 * dfn - 1.0, w)
                + scipy.special.xlog1py(0.5 * dfd - 1.0, -w)
                - scipy.special.betaln(0.5 * dfn, 0.5 * dfd)
            )
            * (dfn * dfd / ((dfd + dfn * x) * (dfd + dfn * x)))
        }

    @partials(
        scipy.special.fdtrc,
        examples=[example("scipy.special.fdtrc(2.5, 3.5, x)", x=Arg((4,), POSITIVE))],
    )
    def fdtrc(ans, dfn, dfd, x):
        """1 - fdtr: minus its density."""
        w = dfn * x / (dfd + dfn * x)
        return {
            "x": -np.exp(
                scipy.special.xlogy(0.5 * dfn - 1.0, w)
                + scipy.special.xlog1py(0.5 * dfd - 1.0, -w)
                - scipy.special.betaln(0.5 * dfn, 0.5 * dfd)
            )
            * (dfn * dfd / ((dfd + dfn * x) * (dfd + dfn * x)))
        }

    @partials(
        scipy.special.fdtri,
        examples=[example("scipy.special.fdtri(2.5, 3.5, p)", p=Arg((4,), OPEN_UNIT))],
    )
    def fdtri(ans, dfn, dfd, p):
        """x with fdtr(dfn, dfd, x) = p: one over the density at x."""
        w = dfn * ans / (dfd + dfn * ans)
        return {
            "p": np.exp(
                scipy.special.betaln(0.5 * dfn, 0.5 * dfd)
                - scipy.special.xlogy(0.5 * dfn - 1.0, w)
                - scipy.special.xlog1py(0.5 * dfd - 1.0, -w)
            )
            * ((dfd + dfn * ans) * (dfd + dfn * ans) / (dfn * dfd))
        }

    @partials(
        scipy.special.gdtr,
        examples=[
            example("scipy.special.gdtr(a, 2.5, x)", a=Arg((4,), POSITIVE), x=Arg((4,), POSITIVE)),
            example("scipy.special.gdtr(1.5, 0.8, x)", x=Arg((2, 3), POSITIVE)),
        ],
    )
    def gdtr(ans, a, b, x):
        """Gamma CDF with rate a and shape b, P(b, a x): d/dx = a f(a x), d/da = x f(a x), f
        the density of P(b, .)."""
        f = np.exp(scipy.special.xlogy(b - 1.0, a * x) - a * x - scipy.special.gammaln(b))
        return {"a": x * f, "x": a * f}

    @partials(
        scipy.special.gdtrc,
        examples=[
            example("scipy.special.gdtrc(a, 2.5, x)", a=Arg((4,), POSITIVE), x=Arg((4,), POSITIVE))
        ],
    )
    def gdtrc(ans, a, b, x):
        """1 - gdtr."""
        f = np.exp(scipy.special.xlogy(b - 1.0, a * x) - a * x - scipy.special.gammaln(b))
        return {"a": -x * f, "x": -a * f}

    @partials(
        scipy.special.gdtrix,
        examples=[
            example(
                "scipy.special.gdtrix(a, 2.5, p)", a=Arg((4,), POSITIVE), p=Arg((4,), OPEN_UNIT)
            )
        ],
    )
    def gdtrix(ans, a, b, p):
        """x with gdtr(a, b, x) = p: dx/dp = 1 / (a f(a x)); x = P^-1(b, p) / a, so
        dx/da = -x / a."""
        return {
            "a": -ans / a,
            "p": np.exp(scipy.special.gammaln(b) - scipy.special.xlogy(b - 1.0, a * ans) + a * ans)
            / a,
        }

    @partials(
        scipy.special.pdtr,
        examples=[example("scipy.special.pdtr(3, m)", m=Arg((4,), POSITIVE))],
    )
    def pdtr(ans, k, m):
        """Poisson CDF Q(k + 1, m) in its mean: -m^k exp(-m) / k!."""
        return {"m": -np.exp(scipy.special.xlogy(k, m) - m - scipy.special.gammaln(k + 1.0))}

    @partials(
        scipy.special.pdtrc,
        examples=[example("scipy.special.pdtrc(3, m)", m=Arg((4,), POSITIVE))],
    )
    def pdtrc(ans, k, m):
        """1 - pdtr."""
        return {"m": np.exp(scipy.special.xlogy(k, m) - m - scipy.special.gammaln(k + 1.0))}

    @partials(
        scipy.special.pdtri,
        examples=[example("scipy.special.pdtri(3, y)", y=Arg((4,), OPEN_UNIT))],
    )
    def pdtri(ans, k, y):
        """m with pdtr(k, m) = y: -k! exp(m) / m^k."""
        return {"y": -np.exp(scipy.special.gammaln(k + 1.0) + ans - scipy.special.xlogy(k, ans))}

    @partials(
        scipy.special.bdtr,
        examples=[example("scipy.special.bdtr(3, 7, p)", p=Arg((4,), OPEN_UNIT))],
    )
    def bdtr(ans, k, n, p):
        """Binomial CDF I_{1-p}(n - k, k + 1) in p: minus betainc's density at 1 - p."""
        return {
            "p": -np.exp(
                scipy.special.xlogy(n - k - 1.0, 1.0 - p)
                + scipy.special.xlogy(k, p)
                - scipy.special.betaln(n - k, k + 1.0)
            )
        }

    @partials(
        scipy.special.bdtrc,
        examples=[example("scipy.special.bdtrc(3, 7, p)", p=Arg((4,), OPEN_UNIT))],
    )
    def bdtrc(ans, k, n, p):
        """1 - bdtr."""
        return {
            "p": np.exp(
                scipy.special.xlogy(n - k - 1.0, 1.0 - p)
                + scipy.special.xlogy(k, p)
                - scipy.special.betaln(n - k, k + 1.0)
            )
        }

    @partials(
        scipy.special.bdtri,
        examples=[example("scipy.special.bdtri(3, 7, y)", y=Arg((4,), OPEN_UNIT))],
    )
    def bdtri(ans, k, n, y):
        """p with bdtr(k, n, p) = y: one over bdtr's derivative at p."""
        return {
            "y": -np.exp(
                scipy.special.betaln(n - k, k + 1.0)
                - scipy.special.xlogy(n - k - 1.0, 1.0 - ans)
                - scipy.special.xlogy(k, ans)
            )
        }

    @partials(
        scipy.special.nbdtr,
        examples=[example("scipy.special.nbdtr(3, 7, p)", p=Arg((4,), OPEN_UNIT))],
    )
    def nbdtr(ans, k, n, p):
        """Negative binomial CDF I_p(n, k + 1) in p."""
        return {
            "p": np.exp(
                scipy.special.xlogy(n - 1.0, p)
                + scipy.special.xlogy(k, 1.0 - p)
                - scipy.special.betaln(n, k + 1.0)
            )
        }

    @partials(
        scipy.special.nbdtrc,
        examples=[example("scipy.special.nbdtrc(3, 7, p)", p=Arg((4,), OPEN_UNIT))],
    )
    def nbdtrc(ans, k, n, p):
        """1 - nbdtr."""
        return {
            "p": -np.exp(
                scipy.special.xlogy(n - 1.0, p)
                + scipy.special.xlogy(k, 1.0 - p)
                - scipy.special.betaln(n, k + 1.0)
            )
        }

    @partials(
        scipy.special.nbdtri,
        examples=[example("scipy.special.nbdtri(3, 7, y)", y=Arg((4,), OPEN_UNIT))],
    )
    def nbdtri(ans, k, n, y):
        """p with nbdtr(k, n, p) = y: one over nbdtr's derivative at p."""
        return {
            "y": np.exp(
                scipy.special.betaln(n, k + 1.0)
                - scipy.special.xlogy(n - 1.0, ans)
                - scipy.special.xlogy(k, 1.0 - ans)
            )
        }

    @partials(
        scipy.special.tklmbda,
        examples=[
            example("scipy.special.tklmbda(x, 0.5)", x=Arg((4,), Domain(-1.5, 1.5))),
            example("scipy.special.tklmbda(x, 0.0)", x=Arg((2, 3), Domain(-3.0, 3.0))),
            example("scipy.special.tklmbda(x, -0.3)", x=Arg((4,), Domain(-3.0, 3.0))),
            example("scipy.special.tklmbda(x, 1.5)", x=Arg((4,), Domain(-0.6, 0.6))),
        ],
    )
    def tklmbda(ans, x, lmbda):
        """Tukey-lambda CDF F, inverse of Q(F) = (F^l - (1-F)^l) / l: dF/dx = 1 / Q'(F) =
        1 / (F^(l-1) + (1-F)^(l-1)) inside the support, 0 outside it (|x| > 1 / l for l > 0,
        where F is 0 or 1). lmbda is refused."""
        inside = (ans > 0.0) & (ans < 1.0)
        return {
            "x": np.where(
                inside,
                1.0 / (np.power(ans, lmbda - 1.0) + np.power(1.0 - ans, lmbda - 1.0)),
                0.0,
            )
        }

    @unary(scipy.special.ndtri_exp, domain=Domain(-4.0, -0.1))
    def ndtri_exp(ans, y):
        """ndtri(exp(y)): sqrt(2 pi) exp(y + ans^2 / 2)."""
        return 2.5066282746310002 * np.exp(y + 0.5 * ans * ans)

    # ---------------------------------------------------------------- Box-Cox, Huber

    @partials(
        scipy.special.boxcox,
        examples=[
            example("scipy.special.boxcox(x, 0.4)", x=Arg((4,), POSITIVE)),
            example("scipy.special.boxcox(x, 0.0)", x=Arg((2, 3), POSITIVE)),
        ],
    )
    def boxcox(ans, x, lmbda):
        """(x^l - 1) / l (log x at l = 0): x^(l-1). lmbda is refused."""
        return {"x": np.power(x, lmbda - 1.0)}

    @partials(
        scipy.special.boxcox1p,
        examples=[example("scipy.special.boxcox1p(x, 0.4)", x=Arg((4,), POSITIVE))],
    )
    def boxcox1p(ans, x, lmbda):
        """boxcox(1 + x, l): (1 + x)^(l-1)."""
        return {"x": np.power(1.0 + x, lmbda - 1.0)}

    @partials(
        scipy.special.inv_boxcox,
        examples=[
            example("scipy.special.inv_boxcox(y, 0.4)", y=Arg((4,), POSITIVE)),
            example("scipy.special.inv_boxcox(y, 0.0)", y=Arg((2, 3), ANY)),
        ],
    )
    def inv_boxcox(ans, y, lmbda):
        """x = (1 + l y)^(1/l): dx/dy = x^(1-l)."""
        return {"y": np.power(ans, 1.0 - lmbda)}

    @partials(
        scipy.special.inv_boxcox1p,
        examples=[example("scipy.special.inv_boxcox1p(y, 0.4)", y=Arg((4,), POSITIVE))],
    )
    def inv_boxcox1p(ans, y, lmbda):
        """x = (1 + l y)^(1/l) - 1: dx/dy = (1 + x)^(1-l)."""
        return {"y": np.power(1.0 + ans, 1.0 - lmbda)}

    @partials(scipy.special.pseudo_huber, domain=(POSITIVE, Domain(-3.0, 3.0)))
    def pseudo_huber(ans, delta, r):
        """delta^2 (sqrt(1 + (r/delta)^2) - 1) (delta > 0)."""
        s = np.sqrt(1.0 + (r / delta) * (r / delta))
        return {"delta": 2.0 * ans / delta - r * r / (delta * s), "r": r / s}

    # ------------------------------------------------------------- elementary functions

    @unary(scipy.special.cosm1, domain=ANY)
    def cosm1(x):
        return -np.sin(x)

    @unary(scipy.special.cbrt, domain=Domain(-3.0, 3.0, avoid=(0.0,), gap=0.2), singular=True)
    def cbrt(ans, x):
        """1 / (3 cbrt(x)^2) (infinite at 0)."""
        return np.divide(1.0, 3.0 * ans * ans)

    @unary(scipy.special.exp2, domain=ANY)
    def exp2(ans, x):
        return ans * 0.6931471805599453

    @unary(scipy.special.exp10, domain=ANY)
    def exp10(ans, x):
        return ans * 2.302585092994046

    @unary(scipy.special.expm1, domain=ANY)
    def expm1(ans, x):
        return ans + 1.0

    @unary(scipy.special.log1p, domain=Domain(-0.7, 2.0))
    def log1p(x):
        return 1.0 / (1.0 + x)

    @unary(scipy.special.sindg, domain=Domain(-200.0, 200.0))
    def sindg(x):
        return 0.017453292519943295 * scipy.special.cosdg(x)

    @unary(scipy.special.cosdg, domain=Domain(-200.0, 200.0))
    def cosdg(x):
        return -0.017453292519943295 * scipy.special.sindg(x)

    @unary(scipy.special.tandg, domain=Domain(-80.0, 80.0))
    def tandg(ans, x):
        return 0.017453292519943295 * (1.0 + ans * ans)

    @unary(scipy.special.cotdg, domain=Domain(10.0, 170.0))
    def cotdg(ans, x):
        return -0.017453292519943295 * (1.0 + ans * ans)

    @partials(scipy.special.powm1, domain=(POSITIVE, Domain(-2.0, 2.0)))
    def powm1(ans, x, y):
        """x^y - 1 (x > 0): y x^(y-1) and x^y log(x)."""
        return {"x": y * np.power(x, y - 1.0), "y": (ans + 1.0) * np.log(x)}

    @partials(
        scipy.special.radian,
        examples=[example("scipy.special.radian(d, m, s)", d=(4,), m=(4,), s=())],
    )
    def radian(ans, d, m, s):
        """Degrees, minutes and seconds to radians: linear."""
        return {
            "d": 0.017453292519943295 + 0.0 * ans,
            "m": 0.0002908882086657216 + 0.0 * ans,
            "s": 4.84813681109536e-06 + 0.0 * ans,
        }

    @unary(scipy.special.spence, singular=True, domain=Domain(0.2, 3.0, avoid=(1.0,), gap=0.05))
    def spence(x):
        """Dilogarithm int_1^x log(t) / (1 - t) dt: log(x) / (1 - x) (x > 0, x != 1)."""
        return np.log(x) / (1.0 - x)

    # ------------------------------------------------------- hypergeometric functions

    @partials(
        scipy.special.hyp0f1,
        examples=[example("scipy.special.hyp0f1(1.2, z)", z=Arg((4,), Domain(-2.0, 2.0)))],
    )
    def hyp0f1(ans, v, z):
        """d/dz 0F1(; v; z) = 0F1(; v + 1; z) / v."""
        return {"z": scipy.special.hyp0f1(v + 1.0, z) / v}

    @partials(
        scipy.special.hyp1f1,
        examples=[example("scipy.special.hyp1f1(1.2, 2.3, x)", x=Arg((4,), Domain(-2.0, 2.0)))],
    )
    def hyp1f1(ans, a, b, x):
        """d/dx 1F1(a; b; x) = a / b 1F1(a + 1; b + 1; x)."""
        return {"x": a / b * scipy.special.hyp1f1(a + 1.0, b + 1.0, x)}

    @partials(
        scipy.special.hyp2f1,
        examples=[
            example("scipy.special.hyp2f1(1.2, 0.7, 2.3, z)", z=Arg((4,), Domain(-0.7, 0.7)))
        ],
    )
    def hyp2f1(ans, a, b, c, z):
        """d/dz 2F1(a, b; c; z) = a b / c 2F1(a + 1, b + 1; c + 1; z)."""
        return {"z": a * b / c * scipy.special.hyp2f1(a + 1.0, b + 1.0, c + 1.0, z)}

    @partials(
        scipy.special.hyperu,
        examples=[example("scipy.special.hyperu(1.2, 2.3, x)", x=Arg((4,), POSITIVE))],
    )
    def hyperu(ans, a, b, x):
        """d/dx U(a, b, x) = -a U(a + 1, b + 1, x)."""
        return {"x": -a * scipy.special.hyperu(a + 1.0, b + 1.0, x)}

    # ------------------------------------------------------- orthogonal polynomials
    # In x only (the degree and the parameters are refused). Each derivative is a function
    # of degree n - 1 of the same families (for a non-integer degree too: the hypergeometric
    # forms); at an integer degree n <= 0 it is 0, and the degree passed on is then 0, so no
    # negative degree is ever evaluated (SciPy's values there differ between its integer and
    # float paths). Hermite polynomials take integer degrees only: n H_{max(n - 1, 0)}.

    @partials(
        scipy.special.eval_legendre,
        examples=[
            example("scipy.special.eval_legendre(3, x)", x=Arg((4,), UNIT)),
            example("scipy.special.eval_legendre(0, x)", x=Arg((2, 3), UNIT)),
            example("scipy.special.eval_legendre(2.5, x)", x=Arg((4,), UNIT)),
        ],
    )
    def eval_legendre(ans, n, x):
        """P_n' = C_{n-1}^(3/2)."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {"x": np.where(flat, 0.0, 1.0) * scipy.special.eval_gegenbauer(m, 1.5, x)}

    @partials(
        scipy.special.eval_sh_legendre,
        examples=[example("scipy.special.eval_sh_legendre(3, x)", x=Arg((4,), OPEN_UNIT))],
    )
    def eval_sh_legendre(ans, n, x):
        """P_n(2x - 1)' = 2 C_{n-1}^(3/2)(2x - 1)."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {
            "x": np.where(flat, 0.0, 1.0)
            * 2.0
            * scipy.special.eval_gegenbauer(m, 1.5, 2.0 * x - 1.0)
        }

    @partials(
        scipy.special.eval_chebyt,
        examples=[
            example("scipy.special.eval_chebyt(3, x)", x=Arg((4,), UNIT)),
            example("scipy.special.eval_chebyt(0, x)", x=Arg((4,), UNIT)),
            example("scipy.special.eval_chebyt(2.5, x)", x=Arg((4,), UNIT)),
        ],
    )
    def eval_chebyt(ans, n, x):
        """T_n' = n U_{n-1}."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {"x": np.where(flat, 0.0, 1.0) * n * scipy.special.eval_chebyu(m, x)}

    @partials(
        scipy.special.eval_chebyu,
        examples=[example("scipy.special.eval_chebyu(3, x)", x=Arg((4,), UNIT))],
    )
    def eval_chebyu(ans, n, x):
        """U_n = C_n^(1): U_n' = 2 C_{n-1}^(2)."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {"x": np.where(flat, 0.0, 1.0) * 2.0 * scipy.special.eval_gegenbauer(m, 2.0, x)}

    @partials(
        scipy.special.eval_sh_chebyt,
        examples=[example("scipy.special.eval_sh_chebyt(3, x)", x=Arg((4,), OPEN_UNIT))],
    )
    def eval_sh_chebyt(ans, n, x):
        """T_n(2x - 1)' = 2 n U_{n-1}(2x - 1)."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {
            "x": np.where(flat, 0.0, 1.0) * 2.0 * n * scipy.special.eval_chebyu(m, 2.0 * x - 1.0)
        }

    @partials(
        scipy.special.eval_sh_chebyu,
        examples=[example("scipy.special.eval_sh_chebyu(3, x)", x=Arg((4,), OPEN_UNIT))],
    )
    def eval_sh_chebyu(ans, n, x):
        """U_n(2x - 1)' = 4 C_{n-1}^(2)(2x - 1)."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {
            "x": np.where(flat, 0.0, 1.0)
            * 4.0
            * scipy.special.eval_gegenbauer(m, 2.0, 2.0 * x - 1.0)
        }

    @partials(
        scipy.special.eval_chebyc,
        examples=[example("scipy.special.eval_chebyc(3, x)", x=Arg((4,), Domain(-1.8, 1.8)))],
    )
    def eval_chebyc(ans, n, x):
        """C_n(x) = 2 T_n(x / 2): n U_{n-1}(x / 2)."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {"x": np.where(flat, 0.0, 1.0) * n * scipy.special.eval_chebyu(m, 0.5 * x)}

    @partials(
        scipy.special.eval_chebys,
        examples=[example("scipy.special.eval_chebys(3, x)", x=Arg((4,), Domain(-1.8, 1.8)))],
    )
    def eval_chebys(ans, n, x):
        """S_n(x) = U_n(x / 2): C_{n-1}^(2)(x / 2)."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {"x": np.where(flat, 0.0, 1.0) * scipy.special.eval_gegenbauer(m, 2.0, 0.5 * x)}

    @partials(
        scipy.special.eval_gegenbauer,
        examples=[
            example("scipy.special.eval_gegenbauer(3, 0.7, x)", x=Arg((4,), UNIT)),
            example("scipy.special.eval_gegenbauer(1.5, 0.7, x)", x=Arg((4,), UNIT)),
            example("scipy.special.eval_gegenbauer(0, 0.7, x)", x=Arg((4,), UNIT)),
        ],
    )
    def eval_gegenbauer(ans, n, alpha, x):
        """C_n^(a)' = 2 a C_{n-1}^(a+1)."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {
            "x": np.where(flat, 0.0, 1.0)
            * 2.0
            * alpha
            * scipy.special.eval_gegenbauer(m, alpha + 1.0, x)
        }

    @partials(
        scipy.special.eval_jacobi,
        examples=[
            example("scipy.special.eval_jacobi(3, 0.7, 0.4, x)", x=Arg((4,), UNIT)),
            example("scipy.special.eval_jacobi(1.5, 0.7, 0.4, x)", x=Arg((4,), UNIT)),
        ],
    )
    def eval_jacobi(ans, n, alpha, beta, x):
        """P_n^(a,b)' = (n + a + b + 1) / 2 P_{n-1}^(a+1,b+1)."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {
            "x": 0.5
            * (n + alpha + beta + 1.0)
            * scipy.special.eval_jacobi(m, alpha + 1.0, beta + 1.0, x)
        }

    @partials(
        scipy.special.eval_laguerre,
        examples=[
            example("scipy.special.eval_laguerre(3, x)", x=Arg((4,), POSITIVE)),
            example("scipy.special.eval_laguerre(0, x)", x=Arg((4,), POSITIVE)),
        ],
    )
    def eval_laguerre(ans, n, x):
        """L_n' = -L_{n-1}^(1)."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {"x": np.where(flat, 0.0, 1.0) * -scipy.special.eval_genlaguerre(m, 1.0, x)}

    @partials(
        scipy.special.eval_genlaguerre,
        examples=[example("scipy.special.eval_genlaguerre(3, 0.7, x)", x=Arg((4,), POSITIVE))],
    )
    def eval_genlaguerre(ans, n, alpha, x):
        """L_n^(a)' = -L_{n-1}^(a+1)."""
        flat = (n <= 0) & (n == np.floor(n))
        m = np.where(flat, 0.0, n - 1.0)
        return {"x": np.where(flat, 0.0, 1.0) * -scipy.special.eval_genlaguerre(m, alpha + 1.0, x)}

    @partials(
        scipy.special.eval_hermite,
        examples=[
            example("scipy.special.eval_hermite(3, x)", x=Arg((4,), ANY)),
            example("scipy.special.eval_hermite(0, x)", x=Arg((4,), ANY)),
        ],
    )
    def eval_hermite(ans, n, x):
        """H_n' = 2 n H_{n-1} (integer n)."""
        return {"x": 2.0 * n * scipy.special.eval_hermite(np.maximum(n - 1, 0), x)}

    @partials(
        scipy.special.eval_hermitenorm,
        examples=[example("scipy.special.eval_hermitenorm(3, x)", x=Arg((4,), ANY))],
    )
    def eval_hermitenorm(ans, n, x):
        """He_n' = n He_{n-1} (integer n)."""
        return {"x": n * scipy.special.eval_hermitenorm(np.maximum(n - 1, 0), x)}

    # ------------------------------------------------------ functions of several results

    @rule(
        scipy.special.airy,
        elementwise=True,
        outputs=4,
        examples=[
            example("scipy.special.airy(x)[0]", x=Arg((4,), Domain(-3.0, 3.0))),
            example("scipy.special.airy(x)[1] + scipy.special.airy(x)[2]", x=(2, 3)),
            example("scipy.special.airy(x)[3] * scipy.special.airy(x)[0]", x=Arg(None, ANY)),
        ],
    )
    def airy(ans, x):
        """(Ai, Ai', Bi, Bi'): Ai'' = x Ai, Bi'' = x Bi (real x)."""

        def jvp(dx):
            return (dx * ans[1], dx * x * ans[0], dx * ans[3], dx * x * ans[2])

        def vjp(g):
            return g[0] * ans[1] + g[1] * x * ans[0] + g[2] * ans[3] + g[3] * x * ans[2]

    @rule(
        scipy.special.ellipj,
        elementwise=True,
        outputs=4,
        examples=[
            example("scipy.special.ellipj(u, 0.6)[0]", u=Arg((4,), Domain(-3.0, 3.0))),
            example("scipy.special.ellipj(u, 0.3)[1] * scipy.special.ellipj(u, 0.3)[2]", u=(2, 3)),
            example("scipy.special.ellipj(u, 0.8)[3]", u=Arg(None, ANY)),
        ],
    )
    def ellipj(ans, u, m):
        """(sn, cn, dn, ph) in u (m is refused): sn' = cn dn, cn' = -sn dn,
        dn' = -m sn cn, ph' = dn."""

        def jvp_u(du):
            return (
                du * ans[1] * ans[2],
                -du * ans[0] * ans[2],
                -du * m * ans[0] * ans[1],
                du * ans[2],
            )

        def vjp_u(g):
            return (
                g[0] * ans[1] * ans[2]
                - g[1] * ans[0] * ans[2]
                - g[2] * m * ans[0] * ans[1]
                + g[3] * ans[2]
            )

    # piecewise constant: no derivative (the sign of Gamma, rounding)
    nondifferentiable(scipy.special.gammasgn, scipy.special.round)

    # ---------------------------------------------------------------- Kelvin functions
    # ber + i bei solves x^2 w'' + x w' - i x^2 w = 0 (so do ker + i kei): the derivatives
    # of berp, beip, kerp, keip come from it (x > 0).

    @unary(scipy.special.ber, domain=POS_X)
    def ber(x):
        return scipy.special.berp(x)

    @unary(scipy.special.bei, domain=POS_X)
    def bei(x):
        return scipy.special.beip(x)

    @unary(scipy.special.ker, domain=POS_X)
    def ker(x):
        return scipy.special.kerp(x)

    @unary(scipy.special.kei, domain=POS_X)
    def kei(x):
        return scipy.special.keip(x)

    @unary(scipy.special.berp, singular=True, domain=POS_X)
    def berp(ans, x):
        """ber'' = -ber' / x - bei."""
        return -ans / x - scipy.special.bei(x)

    @unary(scipy.special.beip, singular=True, domain=POS_X)
    def beip(ans, x):
        """bei'' = -bei' / x + ber."""
        return -ans / x + scipy.special.ber(x)

    @unary(scipy.special.kerp, domain=POS_X)
    def kerp(ans, x):
        """ker'' = -ker' / x - kei."""
        return -ans / x - scipy.special.kei(x)

    @unary(scipy.special.keip, singular=True, domain=POS_X)
    def keip(ans, x):
        """kei'' = -kei' / x + ker."""
        return -ans / x + scipy.special.ker(x)

    # ------------------------------------------------------ integrals of Bessel functions

    @rule(
        scipy.special.itj0y0,
        elementwise=True,
        outputs=2,
        examples=[
            example(
                "scipy.special.itj0y0(x)[0] + 2.0 * scipy.special.itj0y0(x)[1]", x=Arg((4,), POS_X)
            )
        ],
    )
    def itj0y0(ans, x):
        """(int_0^x J0, int_0^x Y0): derivatives J0(x), Y0(x) (x > 0)."""

        def jvp(dx):
            return (dx * scipy.special.j0(x), rt.zero_safe(dx * scipy.special.y0(x), dx))

        def vjp(g):
            return g[0] * scipy.special.j0(x) + rt.zero_safe(g[1] * scipy.special.y0(x), g[1])

    @rule(
        scipy.special.it2j0y0,
        elementwise=True,
        outputs=2,
        examples=[
            example(
                "scipy.special.it2j0y0(x)[0] + 2.0 * scipy.special.it2j0y0(x)[1]",
                x=Arg((4,), POS_X),
            )
        ],
    )
    def it2j0y0(ans, x):
        """(int_0^x (1 - J0(t)) / t, int_x^inf Y0(t) / t): (1 - J0(x)) / x, -Y0(x) / x."""

        def jvp(dx):
            return (
                rt.zero_safe(dx * (1.0 - scipy.special.j0(x)) / x, dx),
                rt.zero_safe(-dx * scipy.special.y0(x) / x, dx),
            )

        def vjp(g):
            return rt.zero_safe(g[0] * (1.0 - scipy.special.j0(x)) / x, g[0]) - rt.zero_safe(
                g[1] * scipy.special.y0(x) / x, g[1]
            )

    @rule(
        scipy.special.iti0k0,
        elementwise=True,
        outputs=2,
        examples=[
            example(
                "scipy.special.iti0k0(x)[0] + 2.0 * scipy.special.iti0k0(x)[1]", x=Arg((4,), POS_X)
            )
        ],
    )
    def iti0k0(ans, x):
        """(int_0^x I0, int_0^x K0): derivatives I0(x), K0(x) (x > 0)."""

        def jvp(dx):
            return (dx * scipy.special.i0(x), rt.zero_safe(dx * scipy.special.k0(x), dx))

        def vjp(g):
            return g[0] * scipy.special.i0(x) + rt.zero_safe(g[1] * scipy.special.k0(x), g[1])

    @rule(
        scipy.special.it2i0k0,
        elementwise=True,
        outputs=2,
        examples=[
            example(
                "scipy.special.it2i0k0(x)[0] + 2.0 * scipy.special.it2i0k0(x)[1]",
                x=Arg((4,), POS_X),
            )
        ],
    )
    def it2i0k0(ans, x):
        """(int_0^x (I0(t) - 1) / t, int_x^inf K0(t) / t): (I0(x) - 1) / x, -K0(x) / x."""

        def jvp(dx):
            return (
                rt.zero_safe(dx * (scipy.special.i0(x) - 1.0) / x, dx),
                rt.zero_safe(-dx * scipy.special.k0(x) / x, dx),
            )

        def vjp(g):
            return rt.zero_safe(g[0] * (scipy.special.i0(x) - 1.0) / x, g[0]) - rt.zero_safe(
                g[1] * scipy.special.k0(x) / x, g[1]
            )

    @unary(scipy.special.itstruve0, domain=POS_X)
    def itstruve0(x):
        """int_0^x H0: H0(x)."""
        return scipy.special.struve(0.0, x)

    @unary(scipy.special.it2struve0, singular=True, domain=POS_X)
    def it2struve0(x):
        """int_x^inf H0(t) / t: -H0(x) / x."""
        return -scipy.special.struve(0.0, x) / x

    @unary(scipy.special.itmodstruve0, domain=POS_X)
    def itmodstruve0(x):
        """int_0^x L0: L0(x)."""
        return scipy.special.modstruve(0.0, x)

    @rule(
        scipy.special.itairy,
        elementwise=True,
        outputs=4,
        examples=[
            example(
                "scipy.special.itairy(x)[0] + 2.0 * scipy.special.itairy(x)[1]",
                x=Arg((4,), Domain(0.2, 1.5)),
            ),
            example(
                "scipy.special.itairy(x)[2] - 3.0 * scipy.special.itairy(x)[3]",
                x=Arg((4,), Domain(0.2, 1.5)),
            ),
        ],
    )
    def itairy(ans, x):
        """(int_0^x Ai(t), int_0^x Bi(t), int_0^x Ai(-t), int_0^x Bi(-t)) for x >= 0: the
        derivatives Ai(x), Bi(x), Ai(-x), Bi(-x) (SciPy's values of the integrals themselves
        are accurate to about 1e-6 relative for x of a few units)."""

        def jvp(dx):
            return (
                dx * scipy.special.airy(x)[0],
                dx * scipy.special.airy(x)[2],
                dx * scipy.special.airy(-x)[0],
                dx * scipy.special.airy(-x)[2],
            )

        def vjp(g):
            return (
                g[0] * scipy.special.airy(x)[0]
                + g[1] * scipy.special.airy(x)[2]
                + g[2] * scipy.special.airy(-x)[0]
                + g[3] * scipy.special.airy(-x)[2]
            )

    @partials(
        scipy.special.besselpoly,
        examples=[
            example("scipy.special.besselpoly(a, 1.3, 0.0)", a=Arg((4,), POS_X)),
            example("scipy.special.besselpoly(a, 0.5, 2.5)", a=Arg((4,), POS_X)),
        ],
    )
    def besselpoly(ans, a, lmb, nu):
        """int_0^1 x^lmb J_nu(2 a x) dx: in a, by J_nu' = (J_{nu-1} - J_{nu+1}) / 2 under the
        integral, besselpoly(a, lmb + 1, nu - 1) - besselpoly(a, lmb + 1, nu + 1)."""
        return {
            "a": scipy.special.besselpoly(a, lmb + 1.0, nu - 1.0)
            - scipy.special.besselpoly(a, lmb + 1.0, nu + 1.0)
        }

    # ---------------------------------------------------- elliptic integrals, others

    @partials(
        scipy.special.ellipkinc,
        examples=[example("scipy.special.ellipkinc(phi, 0.6)", phi=Arg((4,), Domain(-2.0, 2.0)))],
    )
    def ellipkinc(ans, phi, m):
        """F(phi | m) in phi: 1 / sqrt(1 - m sin^2 phi); m is refused."""
        return {"phi": 1.0 / np.sqrt(1.0 - m * np.sin(phi) * np.sin(phi))}

    @partials(
        scipy.special.ellipeinc,
        examples=[example("scipy.special.ellipeinc(phi, 0.6)", phi=Arg((4,), Domain(-2.0, 2.0)))],
    )
    def ellipeinc(ans, phi, m):
        """E(phi | m) in phi: sqrt(1 - m sin^2 phi); m is refused."""
        return {"phi": np.sqrt(1.0 - m * np.sin(phi) * np.sin(phi))}

    @unary(scipy.special.ellipk, singular=True, domain=Domain(-1.0, 0.9, avoid=(0.0,), gap=0.1))
    def ellipk(ans, m):
        """K'(m) = (E - (1 - m) K) / (2 m (1 - m)) (m < 1; 0/0 = nan at m == 0, where the
        limit is pi / 8)."""
        return np.divide(scipy.special.ellipe(m) - (1.0 - m) * ans, 2.0 * m * (1.0 - m))

    @unary(scipy.special.ellipe, singular=True, domain=Domain(-1.0, 0.9, avoid=(0.0,), gap=0.1))
    def ellipe(ans, m):
        """E'(m) = (E - K) / (2 m) (m < 1; 0/0 = nan at m == 0, where the limit is -pi / 8)."""
        return np.divide(ans - scipy.special.ellipk(m), 2.0 * m)

    @unary(scipy.special.ellipkm1, singular=True, domain=Domain(0.1, 2.0, avoid=(1.0,), gap=0.1))
    def ellipkm1(ans, p):
        """K(1 - p): -(E(1 - p) - p K(1 - p)) / (2 p (1 - p)) (p > 0; nan at p == 1)."""
        return np.divide(p * ans - scipy.special.ellipe(1.0 - p), 2.0 * p * (1.0 - p))

    @unary(scipy.special.wrightomega, domain=Domain(-3.0, 3.0))
    def wrightomega(ans, x):
        """w + log(w) = x: w' = w / (1 + w) (real x)."""
        return ans / (1.0 + ans)

    @partials(
        scipy.special.nrdtrimn,
        examples=[
            example(
                "scipy.special.nrdtrimn(p, s, x)",
                p=Arg((4,), OPEN_UNIT),
                s=Arg((4,), POSITIVE),
                x=(4,),
            )
        ],
    )
    def nrdtrimn(ans, p, std, x):
        """The normal mean for which ndtr((x - mean) / std) = p: x - std ndtri(p)."""
        z = scipy.special.ndtri(p)
        return {"p": -std * 2.5066282746310002 * np.exp(0.5 * z * z), "std": -z, "x": 1.0 + 0.0 * z}

    @partials(
        scipy.special.nrdtrisd,
        examples=[
            example(
                "scipy.special.nrdtrisd(mn, p, x)",
                mn=Arg((4,), Domain(-1.0, -0.5)),
                p=Arg((4,), Domain(0.6, 0.9)),
                x=Arg((4,), Domain(0.5, 1.0)),
            )
        ],
    )
    def nrdtrisd(ans, mn, p, x):
        """The normal scale for which ndtr((x - mn) / std) = p: (x - mn) / ndtri(p)."""
        z = scipy.special.ndtri(p)
        return {
            "mn": -1.0 / z,
            "p": -(x - mn) / (z * z) * 2.5066282746310002 * np.exp(0.5 * z * z),
            "x": 1.0 / z,
        }

    @partials(
        scipy.special.lpmv,
        examples=[
            example("scipy.special.lpmv(1, 3.0, x)", x=Arg((4,), UNIT)),
            example("scipy.special.lpmv(2, 2.5, x)", x=Arg((4,), UNIT)),
        ],
    )
    def lpmv(ans, m, v, x):
        """Associated Legendre P_v^m in x (|x| < 1): (x^2 - 1) P' = v x P - (v + m) P_{v-1}^m."""
        return {"x": (v * x * ans - (v + m) * scipy.special.lpmv(m, v - 1.0, x)) / (x * x - 1.0)}

    # ------------------------------------------------------ parabolic cylinder functions
    # Each returns (w, w'); w'' comes from the function's differential equation (x real).

    @rule(
        scipy.special.pbdv,
        elementwise=True,
        outputs=2,
        examples=[
            example("scipy.special.pbdv(1.3, x)[0] + 2.0 * scipy.special.pbdv(1.3, x)[1]", x=(4,)),
            example("scipy.special.pbdv(0.0, x)[1]", x=Arg((2, 3), POS_X)),
        ],
    )
    def pbdv(ans, v, x):
        """D_v'' = (x^2 / 4 - v - 1/2) D_v; v is refused."""

        def jvp_x(dx):
            return (dx * ans[1], dx * (0.25 * x * x - v - 0.5) * ans[0])

        def vjp_x(g):
            return g[0] * ans[1] + g[1] * (0.25 * x * x - v - 0.5) * ans[0]

    @rule(
        scipy.special.pbvv,
        elementwise=True,
        outputs=2,
        examples=[
            example(
                "scipy.special.pbvv(1.3, x)[0] + 2.0 * scipy.special.pbvv(1.3, x)[1]",
                x=Arg((4,), POS_X),
            )
        ],
    )
    def pbvv(ans, v, x):
        """V_v'' = (x^2 / 4 - v - 1/2) V_v (V of a = -v - 1/2); v is refused."""

        def jvp_x(dx):
            return (dx * ans[1], dx * (0.25 * x * x - v - 0.5) * ans[0])

        def vjp_x(g):
            return g[0] * ans[1] + g[1] * (0.25 * x * x - v - 0.5) * ans[0]

    @rule(
        scipy.special.pbwa,
        elementwise=True,
        outputs=2,
        examples=[
            example(
                "scipy.special.pbwa(1.3, x)[0] + 2.0 * scipy.special.pbwa(1.3, x)[1]",
                x=Arg((4,), POS_X),
            )
        ],
    )
    def pbwa(ans, a, x):
        """W(a, x)'' = (a - x^2 / 4) W (|a|, |x| < 5, where SciPy computes W); a is refused."""

        def jvp_x(dx):
            return (dx * ans[1], dx * (a - 0.25 * x * x) * ans[0])

        def vjp_x(g):
            return g[0] * ans[1] + g[1] * (a - 0.25 * x * x) * ans[0]
