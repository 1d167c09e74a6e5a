"""SciPy's distributions (``scipy.stats``), registered only when SciPy is installed.

A rule is registered for a method of a distribution object (``scipy.stats.norm.logpdf``): the
registry knows it by the object and the method's name (:func:`adgen.rules.loader.identity`),
however the program reaches it (``scipy.stats.norm.logpdf``, ``st.norm.logpdf``, ``from
scipy.stats import norm; norm.logpdf``), with positional or keyword arguments and the
defaults ``loc=0``, ``scale=1``. Generated code calls the method itself for the value
(``scipy.stats.norm.logpdf(x, mu, s)``); the derivatives are written with functions that have
rules themselves (``scipy.special.psi``, ``np.linalg.solve``...), so they can be
differentiated again.

* ``norm`` (``logpdf``, ``pdf``, ``logcdf``, ``cdf``, ``logsf``, ``sf``, and the standard
  form's own ``_cdf``...), ``t`` (``df``), ``gamma`` (``a``), ``beta`` (``a``, ``b``),
  ``lognorm`` (``s``), ``expon``, ``cauchy``, ``logistic`` (also ``cdf``, ``sf``),
  ``laplace`` (``logpdf``, ``pdf``), ``gumbel_r`` (``logpdf``, ``pdf``), ``gumbel_l``
  (``logpdf``), ``invgauss`` (``logpdf``, ``mu``), ``skewnorm`` (``logpdf``, ``a``),
  ``truncnorm`` (``logpdf``, ``a``, ``b``): w.r.t. ``x``, ``loc``, ``scale`` and the
  shape parameters; they broadcast as SciPy does. ``laplace`` at its kink ``x == loc`` takes the
  derivative 0 w.r.t. ``x`` and ``loc`` (``np.sign(0)``, as for ``np.abs``).
* ``cdf``, ``sf``, ``logcdf``, ``logsf``, ``ppf`` and ``isf`` of ``norm``, ``t``, ``gamma``,
  ``beta``, ``chi2``, ``expon``, ``lognorm``, ``logistic``, ``laplace``, ``cauchy`` and
  ``uniform`` (also ``logpdf``, ``pdf`` of ``chi2`` (``df``) and ``uniform``), w.r.t. ``x``
  (or the probability ``q``), ``loc`` and ``scale``, by the standardisation ``z = (x - loc) /
  scale``: the derivative of ``F(z)`` w.r.t. ``x`` is the density (``pdf``, a function with
  a rule), that of the inverse ``F^-1(q)`` w.r.t. ``q`` is ``1 / pdf(F^-1(q))``. W.r.t.
  ``lognorm``'s ``s`` too (through ``Phi(log(z) / s)``). The shape parameters of ``t``,
  ``gamma``, ``beta`` and ``chi2`` in these functions (the derivatives of incomplete beta
  and gamma functions in their parameters, no closed form) are refused by name where a
  differentiated value reaches them. Not covered: ``f`` and the other distributions.
* the standard forms' own methods libraries call (``loc`` 0, ``scale`` 1, no argument
  checks): ``_pdf``, ``_logpdf``, ``_cdf``, ``_sf``, ``_logcdf``, ``_logsf``, ``_ppf`` and
  ``_isf`` of each distribution above with those public methods (``vonmises``: ``_pdf``,
  ``_logpdf``), by the public methods' partials with the densities written as the
  standard form's own (``gamma._pdf``: :func:`adgen.rules.registry.standard_form`); and
  ``norm``'s and ``t``'s written out (``t._logpdf``, ``t._pdf`` w.r.t. ``df`` too).
* ``poisson`` (``logpmf``, ``pmf``, ``cdf``, ``sf``, ``logcdf``, ``logsf``, and the standard
  form's ``_logpmf``, ``_pmf``): w.r.t.
  ``mu`` only; ``binom`` and ``bernoulli`` (``logpmf``, ``pmf``) w.r.t. ``p`` only;
  ``nbinom`` (``logpmf``, ``pmf``) w.r.t. ``n`` and ``p``. The counts ``k``, ``binom``'s
  ``n`` and ``loc`` (the mass is 0 off the integers) are data, refused where a
  differentiated value reaches them.
* ``vonmises`` (``logpdf``, ``pdf``): w.r.t. ``x``, ``kappa``, ``loc`` and ``scale``.
* ``multivariate_normal`` (``logpdf``, ``pdf``, ``entropy``): w.r.t. ``x`` (shape ``(d,)``
  or ``(..., d)``), ``mean`` and ``cov`` (a number, the diagonal, or a matrix, of which SciPy
  reads the lower triangle only: the derivative w.r.t. the upper one is 0, as for
  ``np.linalg.cholesky``). With ``allow_singular=True`` and a singular ``cov``, the density
  lives on ``mean`` plus the range of ``cov`` (SciPy's pseudo-inverse, with its cutoff):
  the derivatives w.r.t. ``x`` and ``mean`` are the ones along that support (off it the
  density is 0 and so are its derivatives; the log-density's are nan); the derivative
  w.r.t. a singular ``cov`` is nan (the pseudo-determinant jumps where the rank changes).
* ``dirichlet`` (``logpdf``, ``pdf``): w.r.t. ``x`` (its components along the first axis,
  all ``K`` of them or the first ``K - 1``) and ``alpha``. SciPy refuses an ``x`` off the
  simplex, so the derivative w.r.t. ``x`` is the one along it (e.g. through a softmax).

Outside the support (``gamma`` at ``x < loc``...), where the log-density is -inf, its
derivatives are nan, never finite numbers; the density's are 0 there. Where SciPy's value
is nan (``scale <= 0``), so are the derivatives.
"""

from __future__ import annotations

import ast
import copy
import inspect
import types
from typing import Any

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import (
    METHOD_HELPERS,
    partials,
    refused_derivative,
    rule,
    standard_form,
)
from adgen.rules.samples import ANY, POSITIVE, SPD, Arg, Domain, example

try:
    import scipy.special
    import scipy.stats
except ImportError:  # pragma: no cover - SciPy is optional
    scipy = None  # type: ignore[assignment]

SCALE = Domain(0.5, 2.0)
OPEN_UNIT = Domain(0.1, 0.9)


@rule(
    rt.covariance,
    examples=[
        example("rt.covariance(c, 3) ** 2", c=(3, 3)),
        example("rt.covariance(c, 3) ** 2", c=(3,)),
        example("rt.covariance(c, 2) ** 2", c=None),
    ],
    complex=True,
)
def covariance(cov, dim):
    """Linear in ``cov``: its transpose is ``rt.covariance_vjp``."""

    def jvp_cov(d):
        return rt.covariance(d, dim)

    def vjp_cov(g):
        return rt.covariance_vjp(g, np.ndim(cov))


@rule(
    rt.covariance_vjp,
    examples=[
        example("rt.covariance_vjp(g, 2) ** 2", g=(3, 3)),
        example("rt.covariance_vjp(g, 1) ** 2", g=(3, 3)),
        example("rt.covariance_vjp(g, 0) ** 2", g=(2, 2)),
    ],
    complex=True,
)
def covariance_vjp(g, ndim):
    """Linear in ``g``: its transpose is ``rt.covariance``."""

    def jvp_g(d):
        return rt.covariance_vjp(d, ndim)

    def vjp_g(h):
        return rt.covariance(h, np.shape(g)[-1])


@rule(
    rt.nonsingular_covariance,
    examples=[example("rt.nonsingular_covariance(c, t) ** 2", c=Arg((3, 3), SPD), t=(3,))],
)
def nonsingular_covariance(ans, s, seed):
    """The identity in ``s`` where ``s`` is nonsingular (nan where it is singular and the
    seed is not 0: ``ans`` is then all nan); no derivative in ``seed``."""

    def jvp_s(d):
        return d + 0.0 * ans

    def jvp_seed(d):
        return rt.zeros_like(ans)

    def vjp_s(g):
        return g + 0.0 * ans

    def vjp_seed(g):
        return rt.zeros_like(seed)


@rule(
    rt.whitened,
    examples=[
        example("rt.whitened(x, m, c, 3)", x=(4, 3), m=(3,), c=Arg((3, 3), SPD)),
        example("rt.whitened(x, None, c, 2)", x=(2,), c=Arg((2,), POSITIVE)),
        example("rt.whitened(x, m, c, 3, True)", x=(3,), m=(3,), c=Arg((3, 3), SPD)),
    ],
)
def whitened(ans, x, mean, cov, dim, allow_singular=False):
    """z = (x - mean) S^-1, S = rt.covariance(cov, dim), symmetric: linear in x and mean;
    dz = -z dS S^-1 in cov (nan w.r.t. a singular S given allow_singular=True, where the
    pseudo-inverse jumps)."""

    def jvp_x(dx):
        return rt.whitened(dx, None, cov, dim, allow_singular)

    def jvp_mean(dm):
        return np.broadcast_to(-rt.whitened(dm, None, cov, dim, allow_singular), np.shape(ans))

    def jvp_cov(dc):
        dz = -rt.whitened(ans @ rt.covariance(dc, dim), None, cov, dim, allow_singular)
        if allow_singular:
            return dz + 0.0 * np.sum(rt.nonsingular_covariance(rt.covariance(cov, dim), dc))
        return dz

    def vjp_x(g):
        return np.reshape(rt.whitened(g, None, cov, dim, allow_singular), np.shape(x))

    def vjp_mean(g):
        return rt.unbroadcast(-np.sum(rt.whitened(g, None, cov, dim, allow_singular), 0), mean)

    def vjp_cov(g):
        m = -(np.swapaxes(ans, 0, 1) @ rt.whitened(g, None, cov, dim, allow_singular))
        if allow_singular:
            m = m + 0.0 * np.sum(rt.nonsingular_covariance(rt.covariance(cov, dim), g))
        return rt.covariance_vjp(m, np.ndim(cov))


if scipy is not None:
    norm, t, gamma, beta = scipy.stats.norm, scipy.stats.t, scipy.stats.gamma, scipy.stats.beta
    poisson, mvn, dirichlet = (
        scipy.stats.poisson,
        scipy.stats.multivariate_normal,
        scipy.stats.dirichlet,
    )

    @partials(
        norm.logpdf,
        kind="log",
        domain=ANY,
        examples=[
            example("scipy.stats.norm.logpdf(x, m, s)", x=(4,), m=None, s=Arg(None, SCALE)),
            example(
                "scipy.stats.norm.logpdf(x, loc=m, scale=s)",
                x=(3, 4),
                m=(4,),
                s=Arg((3, 1), SCALE),
            ),
        ],
    )
    @partials(
        norm.pdf,
        kind="density",
        domain=ANY,
        examples=[example("scipy.stats.norm.pdf(x, m, s)", x=(4,), m=(4,), s=Arg(None, SCALE))],
    )
    def norm_logpdf(ans, x, loc=0.0, scale=1.0):
        """log N(x; loc, scale^2) = -z^2 / 2 - log(scale) - log(2 pi) / 2, z = (x - loc) / scale."""
        z = (x - loc) / scale
        return {"x": -z / scale, "loc": z / scale, "scale": (z * z - 1.0) / scale}

    @partials(
        norm.logcdf,
        domain=ANY,
        examples=[example("scipy.stats.norm.logcdf(x, m, s)", x=(4,), m=(), s=Arg(None, SCALE))],
    )
    def norm_logcdf(ans, x, loc=0.0, scale=1.0):
        """d log Phi(z) = pdf(z) / Phi(z) dz, computed as exp(-z^2 / 2 - logcdf) / sqrt(2 pi)."""
        z = (x - loc) / scale
        r = 0.3989422804014327 * np.exp(-0.5 * z * z - ans) / scale
        return {"x": r, "loc": -r, "scale": -z * r}

    @partials(
        norm.cdf,
        domain=ANY,
        examples=[example("scipy.stats.norm.cdf(x, m, s)", x=(4,), m=(4,), s=Arg((), SCALE))],
    )
    def norm_cdf(ans, x, loc=0.0, scale=1.0):
        """d Phi(z) = pdf(z) dz."""
        z = (x - loc) / scale
        p = 0.3989422804014327 * np.exp(-0.5 * z * z) / scale
        return {"x": p, "loc": -p, "scale": -z * p}

    # the standard normal's own methods (loc 0, scale 1, no argument checks), which libraries
    # call directly (statsmodels' Probit: `stats.norm._cdf(X)`)
    @partials(norm._cdf, domain=ANY, examples=[example("scipy.stats.norm._cdf(x)", x=(4,))])
    def norm_std_cdf(ans, x):
        """d Phi(x) = phi(x) dx."""
        return {"x": 0.3989422804014327 * np.exp(-0.5 * x * x)}

    @partials(norm._sf, domain=ANY, examples=[example("scipy.stats.norm._sf(x)", x=(4,))])
    def norm_std_sf(ans, x):
        """d (1 - Phi(x)) = -phi(x) dx."""
        return {"x": -0.3989422804014327 * np.exp(-0.5 * x * x)}

    @partials(norm._pdf, domain=ANY, examples=[example("scipy.stats.norm._pdf(x)", x=(4,))])
    def norm_std_pdf(ans, x):
        """d phi(x) = -x phi(x) dx."""
        return {"x": -x * ans}

    @partials(norm._logpdf, domain=ANY, examples=[example("scipy.stats.norm._logpdf(x)", x=(4,))])
    def norm_std_logpdf(ans, x):
        """d log phi(x) = -x dx."""
        return {"x": -x}

    @partials(norm._logcdf, domain=ANY, examples=[example("scipy.stats.norm._logcdf(x)", x=(4,))])
    def norm_std_logcdf(ans, x):
        """d log Phi(x) = phi(x) / Phi(x) dx = exp(-x^2 / 2 - log Phi(x)) / sqrt(2 pi) dx."""
        return {"x": 0.3989422804014327 * np.exp(-0.5 * x * x - ans)}

    @partials(norm._logsf, domain=ANY, examples=[example("scipy.stats.norm._logsf(x)", x=(4,))])
    def norm_std_logsf(ans, x):
        """d log(1 - Phi(x)) = -exp(-x^2 / 2 - log sf(x)) / sqrt(2 pi) dx."""
        return {"x": -0.3989422804014327 * np.exp(-0.5 * x * x - ans)}

    @partials(
        t.logpdf,
        kind="log",
        domain=(ANY, Domain(1.5, 6.0)),
        examples=[
            example(
                "scipy.stats.t.logpdf(x, nu, m, s)",
                x=(4,),
                nu=Arg(None, Domain(1.5, 6.0)),
                m=Arg(None, ANY),
                s=Arg(None, SCALE),
            )
        ],
    )
    @partials(
        t.pdf,
        kind="density",
        domain=(ANY, Domain(1.5, 6.0)),
        examples=[
            example(
                "scipy.stats.t.pdf(x, df=nu, loc=m, scale=s)",
                x=(4,),
                nu=Arg((4,), Domain(1.5, 6.0)),
                m=Arg((), ANY),
                s=Arg(None, SCALE),
            )
        ],
    )
    def t_logpdf(ans, x, df, loc=0.0, scale=1.0):
        """Student's t: -(df + 1) / 2 log(1 + z^2 / df) - log(scale) + terms of df."""
        z = (x - loc) / scale
        w = df + z * z
        dz = -(df + 1.0) * z / w
        return {
            "x": dz / scale,
            "df": 0.5
            * (
                scipy.special.psi(0.5 * (df + 1.0))
                - scipy.special.psi(0.5 * df)
                - 1.0 / df
                - np.log1p(z * z / df)
                + (df + 1.0) * z * z / (df * w)
            ),
            "loc": -dz / scale,
            "scale": -(1.0 + z * dz) / scale,
        }

    @partials(
        gamma.logpdf,
        kind="log",
        domain=(POSITIVE, POSITIVE),
        examples=[
            example(
                "scipy.stats.gamma.logpdf(x, a, m, s)",
                x=Arg((4,), Domain(1.0, 3.0)),
                a=Arg(None, POSITIVE),
                m=Arg(None, Domain(-0.5, 0.5)),
                s=Arg(None, SCALE),
            )
        ],
    )
    @partials(
        gamma.pdf,
        kind="density",
        domain=(POSITIVE, POSITIVE),
        examples=[
            example(
                "scipy.stats.gamma.pdf(x, a, scale=s)",
                x=Arg((4,), POSITIVE),
                a=Arg((4,), POSITIVE),
                s=Arg(None, SCALE),
            )
        ],
    )
    def gamma_logpdf(ans, x, a, loc=0.0, scale=1.0):
        """(a - 1) log(y) - y - gammaln(a) - log(scale), y = (x - loc) / scale."""
        y = (x - loc) / scale
        dy = (a - 1.0) / y - 1.0
        return {
            "x": dy / scale,
            "a": np.log(y) - scipy.special.psi(a),
            "loc": -dy / scale,
            "scale": (y - a) / scale,
        }

    @partials(
        beta.logpdf,
        kind="log",
        domain=(OPEN_UNIT, POSITIVE, POSITIVE),
        examples=[
            example(
                "scipy.stats.beta.logpdf(x, a, b)",
                x=Arg((4,), OPEN_UNIT),
                a=Arg(None, POSITIVE),
                b=Arg((4,), POSITIVE),
            ),
            example(
                "scipy.stats.beta.logpdf(x, a, b, m, s)",
                x=Arg((4,), Domain(0.6, 1.4)),
                a=Arg(None, POSITIVE),
                b=Arg(None, POSITIVE),
                m=Arg(None, Domain(0.0, 0.5)),
                s=Arg(None, Domain(1.5, 2.0)),
            ),
        ],
    )
    @partials(
        beta.pdf,
        kind="density",
        domain=(OPEN_UNIT, POSITIVE, POSITIVE),
        examples=[
            example(
                "scipy.stats.beta.pdf(x, a, b)",
                x=Arg((4,), OPEN_UNIT),
                a=Arg((4,), POSITIVE),
                b=Arg(None, POSITIVE),
            )
        ],
    )
    def beta_logpdf(ans, x, a, b, loc=0.0, scale=1.0):
        """(a - 1) log(y) + (b - 1) log(1 - y) - betaln(a, b) - log(scale)."""
        y = (x - loc) / scale
        dy = (a - 1.0) / y - (b - 1.0) / (1.0 - y)
        both = scipy.special.psi(a + b)
        return {
            "x": dy / scale,
            "a": np.log(y) - scipy.special.psi(a) + both,
            "b": np.log1p(-y) - scipy.special.psi(b) + both,
            "loc": -dy / scale,
            "scale": -(1.0 + y * dy) / scale,
        }

    @partials(
        poisson.logpmf,
        kind="log",
        examples=[
            example(
                "scipy.stats.poisson.logpmf(np.array([0.0, 1.0, 3.0, 7.0]), mu)",
                mu=Arg((4,), POSITIVE),
            ),
            example("scipy.stats.poisson.logpmf(np.arange(6), mu)", mu=Arg(None, POSITIVE)),
        ],
    )
    @partials(
        poisson.pmf,
        kind="density",
        examples=[
            example("scipy.stats.poisson.pmf(np.arange(4), mu)", mu=Arg((4,), POSITIVE)),
        ],
    )
    # (the standard form's own methods, which statsmodels' count models call directly:
    # `stats.poisson._pmf(y_values, mu)`)
    @partials(
        poisson._logpmf,
        kind="log",
        examples=[
            example("scipy.stats.poisson._logpmf(np.arange(4.0), mu)", mu=Arg((4,), POSITIVE))
        ],
    )
    @partials(
        poisson._pmf,
        kind="density",
        examples=[
            example("scipy.stats.poisson._pmf(np.arange(3.0)[:, None], mu)", mu=Arg((4,), POSITIVE))
        ],
    )
    def poisson_logpmf(ans, k, mu, loc=0):
        """(k - loc) log(mu) - mu - gammaln(k - loc + 1): d/dmu = (k - loc) / mu - 1 (-1 for
        k == loc, at mu == 0 too, where the term (k - loc) log(mu) is 0, as for xlogy)."""
        return {"mu": np.where(k - loc == 0, 0.0, (k - loc) / mu) - 1.0}

    @partials(
        poisson.cdf,
        kind="value",
        examples=[
            example("scipy.stats.poisson.cdf(np.array([0, 1, 3, 6]), mu)", mu=Arg((4,), POSITIVE)),
            example("scipy.stats.poisson.cdf(np.array([2.5, -1.0]), mu)", mu=Arg(None, POSITIVE)),
        ],
    )
    def poisson_cdf(ans, k, mu, loc=0):
        """P(X <= k) = sum of pmf(j) for j <= floor(k - loc): d/dmu = -pmf(floor(k - loc)) (0
        below loc, where the sum is empty)."""
        return {"mu": -scipy.stats.poisson.pmf(np.floor(k - loc), mu)}

    @partials(
        poisson.sf,
        kind="value",
        examples=[
            example("scipy.stats.poisson.sf(np.array([0, 2, 5]), mu)", mu=Arg((3,), POSITIVE))
        ],
    )
    def poisson_sf(ans, k, mu, loc=0):
        """P(X > k) = 1 - cdf: d/dmu = pmf(floor(k - loc))."""
        return {"mu": scipy.stats.poisson.pmf(np.floor(k - loc), mu)}

    @partials(
        poisson.logcdf,
        kind="log",
        examples=[
            example("scipy.stats.poisson.logcdf(np.array([0, 1, 4]), mu)", mu=Arg((3,), POSITIVE))
        ],
    )
    def poisson_logcdf(ans, k, mu, loc=0):
        """d log cdf / dmu = -pmf(floor(k - loc)) / cdf: the ratio of the last term of the sum
        to the sum, taken in logs (no underflow far in the tail; below loc, where the cdf is
        0 and its log -inf, nan as for any log-mass there)."""
        j = np.floor(k - loc)
        last = np.exp(scipy.stats.poisson.logpmf(np.maximum(j, 0.0), mu) - ans)
        return {"mu": -last}

    @partials(
        poisson.logsf,
        kind="log",
        examples=[
            example("scipy.stats.poisson.logsf(np.array([-1, 1, 4]), mu)", mu=Arg((3,), POSITIVE))
        ],
    )
    def poisson_logsf(ans, k, mu, loc=0):
        """d log sf / dmu = pmf(floor(k - loc)) / sf: 0 below loc (sf is 1 there), the log of
        the mass taken at a count in its support (no nan at second order)."""
        j = np.floor(k - loc)
        last = np.exp(scipy.stats.poisson.logpmf(np.maximum(j, 0.0), mu) - ans)
        return {"mu": np.where(j < 0, 0.0, last)}

    @partials(
        scipy.stats.binom.logpmf,
        kind="log",
        examples=[
            example(
                "scipy.stats.binom.logpmf(np.array([0, 2, 5, 3]), 5, p)", p=Arg((4,), OPEN_UNIT)
            ),
            example("scipy.stats.binom.logpmf(3, np.array([4, 6]), p)", p=Arg(None, OPEN_UNIT)),
        ],
    )
    @partials(
        scipy.stats.binom.pmf,
        kind="density",
        examples=[example("scipy.stats.binom.pmf(np.arange(4), 3, p)", p=Arg((4,), OPEN_UNIT))],
    )
    def binom_logpmf(ans, k, n, p, loc=0):
        """log C(n, j) + j log(p) + (n - j) log(1 - p), j = k - loc: d/dp = j / p - (n - j) /
        (1 - p), each term 0 where its count is 0 (at p = 0 or 1 too, as for xlogy)."""
        j = k - loc
        return {"p": np.where(j == 0, 0.0, j / p) - np.where(n - j == 0, 0.0, (n - j) / (1.0 - p))}

    @partials(
        scipy.stats.bernoulli.logpmf,
        kind="log",
        examples=[
            example("scipy.stats.bernoulli.logpmf(np.array([0, 1, 1]), p)", p=Arg((3,), OPEN_UNIT))
        ],
    )
    @partials(
        scipy.stats.bernoulli.pmf,
        kind="density",
        examples=[example("scipy.stats.bernoulli.pmf(1, p)", p=Arg((3,), OPEN_UNIT))],
    )
    def bernoulli_logpmf(ans, k, p, loc=0):
        """j log(p) + (1 - j) log(1 - p), j = k - loc."""
        j = k - loc
        return {"p": np.where(j == 0, 0.0, j / p) - np.where(j == 1, 0.0, (1.0 - j) / (1.0 - p))}

    @partials(
        scipy.stats.nbinom.logpmf,
        kind="log",
        examples=[
            example(
                "scipy.stats.nbinom.logpmf(np.array([0, 2, 5, 3]), n, p)",
                n=Arg((4,), POSITIVE),
                p=Arg((4,), OPEN_UNIT),
            ),
        ],
    )
    @partials(
        scipy.stats.nbinom.pmf,
        kind="density",
        examples=[
            example(
                "scipy.stats.nbinom.pmf(np.arange(3), n, p)",
                n=Arg(None, POSITIVE),
                p=Arg((3,), OPEN_UNIT),
            )
        ],
    )
    def nbinom_logpmf(ans, k, n, p, loc=0):
        """gammaln(j + n) - gammaln(n) - gammaln(j + 1) + n log(p) + j log(1 - p), j = k - loc
        (``n`` a real number, as SciPy takes it): d/dn = psi(j + n) - psi(n) + log(p), d/dp =
        n / p - j / (1 - p) (0 for j = 0)."""
        j = k - loc
        return {
            "n": scipy.special.psi(j + n) - scipy.special.psi(n) + np.log(p),
            "p": n / p - np.where(j == 0, 0.0, j / (1.0 - p)),
        }

    @partials(
        scipy.stats.vonmises.logpdf,
        kind="log",
        domain=(ANY, POSITIVE),
        examples=[
            example(
                "scipy.stats.vonmises.logpdf(x, k, m, s)",
                x=(4,),
                k=Arg(None, POSITIVE),
                m=Arg(None, Domain(-0.5, 0.5)),
                s=Arg(None, SCALE),
            ),
            example("scipy.stats.vonmises.logpdf(x, k)", x=(), k=Arg((3,), POSITIVE)),
        ],
    )
    @partials(
        scipy.stats.vonmises.pdf,
        kind="density",
        domain=(ANY, POSITIVE),
        examples=[example("scipy.stats.vonmises.pdf(x, 2.0, m)", x=(4,), m=(4,))],
    )
    def vonmises_logpdf(ans, x, kappa, loc=0.0, scale=1.0):
        """kappa cos(z) - log(2 pi I0(kappa)) - log(scale), z = (x - loc) / scale: d/dkappa =
        cos(z) - I1(kappa) / I0(kappa) (the scaled Bessel functions' ratio, which does not
        overflow)."""
        z = (x - loc) / scale
        slope = -kappa * np.sin(z) / scale
        return {
            "x": slope,
            "kappa": np.cos(z) - scipy.special.i1e(kappa) / scipy.special.i0e(kappa),
            "loc": -slope,
            "scale": -(slope * z + 1.0 / scale),
        }

    @partials(
        norm.logsf,
        domain=ANY,
        examples=[example("scipy.stats.norm.logsf(x, m, s)", x=(4,), m=(), s=Arg(None, SCALE))],
    )
    def norm_logsf(ans, x, loc=0.0, scale=1.0):
        """log(1 - Phi(z)): d = -pdf(z) / sf(z) dz, as exp(-z^2 / 2 - logsf) / sqrt(2 pi)."""
        z = (x - loc) / scale
        r = 0.3989422804014327 * np.exp(-0.5 * z * z - ans) / scale
        return {"x": -r, "loc": r, "scale": z * r}

    @partials(
        norm.sf,
        domain=ANY,
        examples=[
            example("scipy.stats.norm.sf(x, loc=m, scale=s)", x=(4,), m=(4,), s=Arg((), SCALE))
        ],
    )
    def norm_sf(ans, x, loc=0.0, scale=1.0):
        """1 - Phi(z): d = -pdf(z) dz."""
        z = (x - loc) / scale
        p = 0.3989422804014327 * np.exp(-0.5 * z * z) / scale
        return {"x": -p, "loc": p, "scale": z * p}

    @partials(
        scipy.stats.expon.logpdf,
        kind="log",
        domain=POSITIVE,
        examples=[
            example(
                "scipy.stats.expon.logpdf(x, m, s)",
                x=Arg((4,), Domain(1.0, 3.0)),
                m=Arg(None, Domain(-0.5, 0.5)),
                s=Arg(None, SCALE),
            )
        ],
    )
    @partials(
        scipy.stats.expon.pdf,
        kind="density",
        domain=POSITIVE,
        examples=[
            example("scipy.stats.expon.pdf(x, scale=s)", x=Arg((4,), POSITIVE), s=Arg((4,), SCALE))
        ],
    )
    def expon_logpdf(ans, x, loc=0.0, scale=1.0):
        """-y - log(scale), y = (x - loc) / scale >= 0."""
        y = (x - loc) / scale
        return {"x": -1.0 / scale, "loc": 1.0 / scale, "scale": (y - 1.0) / scale}

    @partials(
        scipy.stats.lognorm.logpdf,
        kind="log",
        domain=(POSITIVE, POSITIVE),
        examples=[
            example(
                "scipy.stats.lognorm.logpdf(x, sig, m, s)",
                x=Arg((4,), Domain(1.0, 3.0)),
                sig=Arg(None, POSITIVE),
                m=Arg(None, Domain(-0.5, 0.5)),
                s=Arg(None, SCALE),
            )
        ],
    )
    @partials(
        scipy.stats.lognorm.pdf,
        kind="density",
        domain=(POSITIVE, POSITIVE),
        examples=[
            example(
                "scipy.stats.lognorm.pdf(x, sig, scale=s)",
                x=Arg((4,), POSITIVE),
                sig=Arg((4,), POSITIVE),
                s=Arg(None, SCALE),
            )
        ],
    )
    def lognorm_logpdf(ans, x, s, loc=0.0, scale=1.0):
        """-log(s y sqrt(2 pi)) - log(y)^2 / (2 s^2) - log(scale), y = (x - loc) / scale."""
        y = (x - loc) / scale
        u = np.log(y)
        dy = -(1.0 + u / (s * s)) / y
        return {
            "x": dy / scale,
            "s": (u * u / (s * s) - 1.0) / s,
            "loc": -dy / scale,
            "scale": u / (s * s * scale),
        }

    @partials(
        scipy.stats.cauchy.logpdf,
        kind="log",
        domain=ANY,
        examples=[
            example("scipy.stats.cauchy.logpdf(x, m, s)", x=(4,), m=(4,), s=Arg(None, SCALE))
        ],
    )
    @partials(
        scipy.stats.cauchy.pdf,
        kind="density",
        domain=ANY,
        examples=[example("scipy.stats.cauchy.pdf(x, m, s)", x=(4,), m=(), s=Arg((4,), SCALE))],
    )
    def cauchy_logpdf(ans, x, loc=0.0, scale=1.0):
        """-log(pi scale (1 + z^2))."""
        z = (x - loc) / scale
        dz = -2.0 * z / (1.0 + z * z)
        return {"x": dz / scale, "loc": -dz / scale, "scale": -(1.0 + z * dz) / scale}

    @partials(
        scipy.stats.logistic.logpdf,
        kind="log",
        domain=ANY,
        examples=[
            example("scipy.stats.logistic.logpdf(x, m, s)", x=(4,), m=(4,), s=Arg(None, SCALE))
        ],
    )
    @partials(
        scipy.stats.logistic.pdf,
        kind="density",
        domain=ANY,
        examples=[example("scipy.stats.logistic.pdf(x, m, s)", x=(4,), m=(), s=Arg((4,), SCALE))],
    )
    def logistic_logpdf(ans, x, loc=0.0, scale=1.0):
        """-z - 2 log(1 + exp(-z)) - log(scale): d/dz = -tanh(z / 2)."""
        z = (x - loc) / scale
        dz = -np.tanh(0.5 * z)
        return {"x": dz / scale, "loc": -dz / scale, "scale": -(1.0 + z * dz) / scale}

    @partials(
        scipy.stats.logistic.cdf,
        domain=ANY,
        examples=[example("scipy.stats.logistic.cdf(x, m, s)", x=(4,), m=(4,), s=Arg(None, SCALE))],
    )
    def logistic_cdf(ans, x, loc=0.0, scale=1.0):
        """expit(z): d/dz = p (1 - p)."""
        z = (x - loc) / scale
        dz = ans * (1.0 - ans)
        return {"x": dz / scale, "loc": -dz / scale, "scale": -z * dz / scale}

    @partials(
        scipy.stats.logistic.sf,
        domain=ANY,
        examples=[example("scipy.stats.logistic.sf(x, m, s)", x=(4,), m=(), s=Arg((4,), SCALE))],
    )
    def logistic_sf(ans, x, loc=0.0, scale=1.0):
        """1 - expit(z): d/dz = -q (1 - q)."""
        z = (x - loc) / scale
        dz = -ans * (1.0 - ans)
        return {"x": dz / scale, "loc": -dz / scale, "scale": -z * dz / scale}

    @partials(
        scipy.stats.weibull_min.logpdf,
        kind="log",
        domain=(POSITIVE, POSITIVE),
        examples=[
            example(
                "scipy.stats.weibull_min.logpdf(x, c, m, s)",
                x=Arg((4,), Domain(0.5, 2.0)),
                c=Arg(None, Domain(0.8, 2.5)),
                m=Arg(None, Domain(-0.3, 0.3)),
                s=Arg(None, SCALE),
            )
        ],
    )
    @partials(
        scipy.stats.weibull_min.pdf,
        kind="density",
        domain=(POSITIVE, POSITIVE),
        examples=[
            example(
                "scipy.stats.weibull_min.pdf(x, c, scale=s)",
                x=Arg((4,), Domain(0.5, 2.0)),
                c=Arg((4,), Domain(0.8, 2.5)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def weibull_min_logpdf(ans, x, c, loc=0.0, scale=1.0):
        """log c + (c - 1) log z - z^c - log(scale), z = (x - loc) / scale > 0."""
        z = (x - loc) / scale
        lz = np.log(z)
        zc = z**c
        dz = (c - 1.0) / z - c * zc / z
        return {
            "x": dz / scale,
            "c": 1.0 / c + lz - zc * lz,
            "loc": -dz / scale,
            "scale": c * (zc - 1.0) / scale,
        }

    @partials(
        scipy.stats.laplace.logpdf,
        kind="log",
        domain=Domain(-1.5, 1.5, avoid=(0.0,), gap=0.1),
        examples=[
            example(
                "scipy.stats.laplace.logpdf(x, m, s)",
                x=Arg((4,), Domain(0.5, 1.5)),
                m=Arg((4,), Domain(-0.3, 0.3)),
                s=Arg(None, SCALE),
            )
        ],
    )
    @partials(
        scipy.stats.laplace.pdf,
        kind="density",
        domain=Domain(-1.5, 1.5, avoid=(0.0,), gap=0.1),
        examples=[
            example(
                "scipy.stats.laplace.pdf(x, m, s)",
                x=Arg((4,), Domain(-1.5, -0.5)),
                m=Arg(None, Domain(-0.3, 0.3)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def laplace_logpdf(ans, x, loc=0.0, scale=1.0):
        """-|z| - log(2 scale): d/dz = -sign(z), 0 at the kink z == 0 (as for np.abs)."""
        z = (x - loc) / scale
        dz = -np.sign(z)
        return {"x": dz / scale, "loc": -dz / scale, "scale": (np.abs(z) - 1.0) / scale}

    @partials(
        scipy.stats.gumbel_r.logpdf,
        kind="log",
        domain=Domain(-1.5, 2.5),
        examples=[
            example(
                "scipy.stats.gumbel_r.logpdf(x, m, s)",
                x=Arg((4,), Domain(-1.0, 2.0)),
                m=Arg((4,), Domain(-0.3, 0.3)),
                s=Arg(None, SCALE),
            )
        ],
    )
    @partials(
        scipy.stats.gumbel_r.pdf,
        kind="density",
        domain=Domain(-1.5, 2.5),
        examples=[
            example("scipy.stats.gumbel_r.pdf(x, m)", x=(4,), m=Arg(None, Domain(-0.3, 0.3)))
        ],
    )
    def gumbel_r_logpdf(ans, x, loc=0.0, scale=1.0):
        """-z - exp(-z) - log(scale), z = (x - loc) / scale: d/dz = exp(-z) - 1."""
        z = (x - loc) / scale
        dz = np.exp(-z) - 1.0
        return {"x": dz / scale, "loc": -dz / scale, "scale": -(z * dz + 1.0) / scale}

    @partials(
        scipy.stats.gumbel_l.logpdf,
        kind="log",
        domain=Domain(-2.5, 1.5),
        examples=[
            example(
                "scipy.stats.gumbel_l.logpdf(x, m, s)",
                x=Arg((4,), Domain(-2.0, 1.0)),
                m=Arg(None, Domain(-0.3, 0.3)),
                s=Arg((4,), SCALE),
            )
        ],
    )
    def gumbel_l_logpdf(ans, x, loc=0.0, scale=1.0):
        """z - exp(z) - log(scale), z = (x - loc) / scale: d/dz = 1 - exp(z)."""
        z = (x - loc) / scale
        dz = 1.0 - np.exp(z)
        return {"x": dz / scale, "loc": -dz / scale, "scale": -(z * dz + 1.0) / scale}

    @partials(
        scipy.stats.invgauss.logpdf,
        kind="log",
        domain=(POSITIVE, POSITIVE),
        examples=[
            example(
                "scipy.stats.invgauss.logpdf(x, mu, m, s)",
                x=Arg((4,), Domain(0.8, 2.0)),
                mu=Arg(None, Domain(0.5, 1.5)),
                m=Arg(None, Domain(-0.3, 0.3)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def invgauss_logpdf(ans, x, mu, loc=0.0, scale=1.0):
        """-log(2 pi z^3) / 2 - (z - mu)^2 / (2 z mu^2) - log(scale), z = (x - loc) / scale >
        0: d/dz = -3 / (2 z) - (z^2 - mu^2) / (2 z^2 mu^2), d/dmu = (z - mu) / mu^3."""
        z = (x - loc) / scale
        dz = -1.5 / z - (z * z - mu * mu) / (2.0 * z * z * mu * mu)
        return {
            "x": dz / scale,
            "mu": (z - mu) / mu**3,
            "loc": -dz / scale,
            "scale": -(z * dz + 1.0) / scale,
        }

    @partials(
        scipy.stats.skewnorm.logpdf,
        kind="log",
        domain=(Domain(-1.5, 1.5), Domain(-2.0, 2.0)),
        examples=[
            example(
                "scipy.stats.skewnorm.logpdf(x, a, m, s)",
                x=Arg((4,), Domain(-1.0, 1.5)),
                a=Arg(None, Domain(-2.0, 2.0)),
                m=Arg(None, Domain(-0.3, 0.3)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def skewnorm_logpdf(ans, x, a, loc=0.0, scale=1.0):
        """log 2 + log phi(z) + log Phi(a z) - log(scale), z = (x - loc) / scale: with the
        ratio r = phi(a z) / Phi(a z) (of their logs), d/dz = a r - z and d/da = z r."""
        z = (x - loc) / scale
        r = np.exp(scipy.stats.norm.logpdf(a * z) - scipy.special.log_ndtr(a * z))
        dz = a * r - z
        return {"x": dz / scale, "a": z * r, "loc": -dz / scale, "scale": -(z * dz + 1.0) / scale}

    @partials(
        scipy.stats.truncnorm.logpdf,
        kind="log",
        domain=(Domain(-0.8, 0.8), Domain(-2.0, -1.0), Domain(1.0, 2.0)),
        examples=[
            example(
                "scipy.stats.truncnorm.logpdf(x, a, b, m, s)",
                x=Arg((4,), Domain(-0.8, 0.8)),
                a=Arg(None, Domain(-2.0, -1.0)),
                b=Arg(None, Domain(1.0, 2.0)),
                m=Arg(None, Domain(-0.1, 0.1)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def truncnorm_logpdf(ans, x, a, b, loc=0.0, scale=1.0):
        """log phi(z) - log(Phi(b) - Phi(a)) - log(scale) on a <= z <= b, z = (x - loc) /
        scale: d/dz = -z, d/da = phi(a) / Z, d/db = -phi(b) / Z with Z = Phi(b) - Phi(a)."""
        z = (x - loc) / scale
        mass = scipy.special.ndtr(b) - scipy.special.ndtr(a)
        return {
            "x": -z / scale,
            "a": scipy.stats.norm.pdf(a) / mass,
            "b": -scipy.stats.norm.pdf(b) / mass,
            "loc": z / scale,
            "scale": (z * z - 1.0) / scale,
        }

    _MVN_EXAMPLES = [
        example(
            "scipy.stats.multivariate_normal.logpdf(x, m, c)", x=(3,), m=(3,), c=Arg((3, 3), SPD)
        ),
        example(
            "scipy.stats.multivariate_normal.logpdf(x, mean=m, cov=c)",
            x=(4, 3),
            m=(3,),
            c=Arg((3, 3), SPD),
        ),
        example(
            "scipy.stats.multivariate_normal.logpdf(x, m, c)",
            x=(4, 2),
            m=(2,),
            c=Arg((2,), POSITIVE),
        ),
        example("scipy.stats.multivariate_normal.logpdf(x)", x=(4, 1)),
        example("scipy.stats.multivariate_normal.logpdf(x, cov=c)", x=(5,), c=Arg(None, SCALE)),
    ]

    @rule(mvn.logpdf, examples=_MVN_EXAMPLES)
    def mvn_logpdf(ans, x, mean=None, cov=1, allow_singular=False):
        """-(r S^-1 r + log det S + d log 2 pi) / 2 for each point r = x - mean (the last axis
        of x), S = rt.covariance(cov, d): with z = S^-1 r, d/dx = -z, d/dmean = z and
        d/dS = (z z^T - S^-1) / 2 (symmetric; rt.covariance_vjp takes it to cov)."""

        def jvp_x(dx):
            dim = np.shape(np.atleast_2d(cov))[0] if mean is None else np.size(mean)
            z = rt.whitened(x, mean, cov, dim, allow_singular)
            if allow_singular:  # (off the support, where the log-density is -inf: nan)
                z = np.where(np.reshape(np.isfinite(ans), (-1, 1)), z, np.nan)
            return np.reshape(-np.sum(z * np.reshape(dx, (-1, dim)), axis=-1), np.shape(ans))

        def jvp_mean(dm):
            dim = np.size(mean)
            z = rt.whitened(x, mean, cov, dim, allow_singular)
            if allow_singular:  # (off the support, where the log-density is -inf: nan)
                z = np.where(np.reshape(np.isfinite(ans), (-1, 1)), z, np.nan)
            return np.reshape(np.sum(z * dm, axis=-1), np.shape(ans))

        def jvp_cov(dc):
            dim = np.shape(np.atleast_2d(cov))[0] if mean is None else np.size(mean)
            s = rt.covariance(cov, dim)
            if allow_singular:
                s = rt.nonsingular_covariance(s, dc)
            ds = rt.covariance(dc, dim)
            z = rt.whitened(x, mean, s, dim)  # (s: symmetric, its own covariance matrix)
            quad = np.sum((z @ ds) * z, axis=-1) - np.trace(np.linalg.solve(s, ds))
            return np.reshape(0.5 * quad, np.shape(ans))

        def vjp_x(g):
            dim = np.shape(np.atleast_2d(cov))[0] if mean is None else np.size(mean)
            z = rt.whitened(x, mean, cov, dim, allow_singular)
            if allow_singular:  # (off the support, where the log-density is -inf: nan)
                z = np.where(np.reshape(np.isfinite(ans), (-1, 1)), z, np.nan)
            return np.reshape(-np.reshape(g, (-1, 1)) * z, np.shape(x))

        def vjp_mean(g):
            dim = np.size(mean)
            z = rt.whitened(x, mean, cov, dim, allow_singular)
            if allow_singular:  # (off the support, where the log-density is -inf: nan)
                z = np.where(np.reshape(np.isfinite(ans), (-1, 1)), z, np.nan)
            return rt.unbroadcast(np.sum(np.reshape(g, (-1, 1)) * z, axis=0), mean)

        def vjp_cov(g):
            dim = np.shape(np.atleast_2d(cov))[0] if mean is None else np.size(mean)
            s = rt.covariance(cov, dim)
            if allow_singular:
                s = rt.nonsingular_covariance(s, g)
            z = rt.whitened(x, mean, s, dim)  # (s: symmetric, its own covariance matrix)
            gz = np.reshape(g, (-1, 1)) * z
            m = 0.5 * (np.swapaxes(z, 0, 1) @ gz - np.sum(g) * np.linalg.inv(s))
            return rt.covariance_vjp(m, np.ndim(cov))

    @rule(
        mvn.pdf,
        examples=[
            example(
                "scipy.stats.multivariate_normal.pdf(x, m, c)",
                x=(4, 2),
                m=(2,),
                c=Arg((2, 2), SPD),
            ),
            example("scipy.stats.multivariate_normal.pdf(x, m)", x=(2,), m=(2,)),
        ],
    )
    def mvn_pdf(ans, x, mean=None, cov=1, allow_singular=False):
        """exp(logpdf): each derivative of the log-density times the density."""

        def jvp_x(dx):
            dim = np.shape(np.atleast_2d(cov))[0] if mean is None else np.size(mean)
            z = rt.whitened(x, mean, cov, dim, allow_singular)
            return -ans * np.reshape(np.sum(z * np.reshape(dx, (-1, dim)), axis=-1), np.shape(ans))

        def jvp_mean(dm):
            dim = np.size(mean)
            z = rt.whitened(x, mean, cov, dim, allow_singular)
            return ans * np.reshape(np.sum(z * dm, axis=-1), np.shape(ans))

        def jvp_cov(dc):
            dim = np.shape(np.atleast_2d(cov))[0] if mean is None else np.size(mean)
            s = rt.covariance(cov, dim)
            if allow_singular:
                s = rt.nonsingular_covariance(s, dc)
            ds = rt.covariance(dc, dim)
            z = rt.whitened(x, mean, s, dim)  # (s: symmetric, its own covariance matrix)
            quad = np.sum((z @ ds) * z, axis=-1) - np.trace(np.linalg.solve(s, ds))
            return ans * np.reshape(0.5 * quad, np.shape(ans))

        def vjp_x(g):
            dim = np.shape(np.atleast_2d(cov))[0] if mean is None else np.size(mean)
            z = rt.whitened(x, mean, cov, dim, allow_singular)
            return np.reshape(-np.reshape(g * ans, (-1, 1)) * z, np.shape(x))

        def vjp_mean(g):
            dim = np.size(mean)
            z = rt.whitened(x, mean, cov, dim, allow_singular)
            return rt.unbroadcast(np.sum(np.reshape(g * ans, (-1, 1)) * z, axis=0), mean)

        def vjp_cov(g):
            dim = np.shape(np.atleast_2d(cov))[0] if mean is None else np.size(mean)
            s = rt.covariance(cov, dim)
            if allow_singular:
                s = rt.nonsingular_covariance(s, g)
            z = rt.whitened(x, mean, s, dim)  # (s: symmetric, its own covariance matrix)
            w = g * ans
            m = 0.5 * (
                np.swapaxes(z, 0, 1) @ (np.reshape(w, (-1, 1)) * z) - np.sum(w) * np.linalg.inv(s)
            )
            return rt.covariance_vjp(m, np.ndim(cov))

    @rule(
        mvn.entropy,
        examples=[
            example("scipy.stats.multivariate_normal.entropy(m, c)", m=(3,), c=Arg((3, 3), SPD)),
            example("scipy.stats.multivariate_normal.entropy(cov=c)", c=Arg((2, 2), SPD)),
            example("scipy.stats.multivariate_normal.entropy(m, c)", m=(3,), c=Arg((3,), POSITIVE)),
            example("scipy.stats.multivariate_normal.entropy(cov=c)", c=Arg(None, SCALE)),
        ],
    )
    def mvn_entropy(ans, mean=None, cov=1, allow_singular=False):
        """(d (1 + log 2 pi) + log det S) / 2, S = rt.covariance(cov, d): d/dS = S^-1 / 2; no
        dependence on ``mean``. With ``allow_singular=True`` the derivative w.r.t. a singular
        ``cov`` is nan (``rt.nonsingular_covariance``), exactly 0 for a zero seed."""

        def jvp_mean(dm):
            return rt.zeros_like(ans)

        def jvp_cov(dc):
            dim = np.shape(np.atleast_2d(cov))[0] if mean is None else np.size(mean)
            s = rt.covariance(cov, dim)
            if allow_singular:
                s = rt.nonsingular_covariance(s, dc)
            return 0.5 * np.trace(np.linalg.solve(s, rt.covariance(dc, dim)))

        def vjp_mean(g):
            return rt.zeros_like(mean)

        def vjp_cov(g):
            dim = np.shape(np.atleast_2d(cov))[0] if mean is None else np.size(mean)
            s = rt.covariance(cov, dim)
            if allow_singular:
                s = rt.nonsingular_covariance(s, g)
            return rt.covariance_vjp(0.5 * g * np.linalg.inv(s), np.ndim(cov))

    _DIRICHLET_EXAMPLES = [
        example(
            "scipy.stats.dirichlet.logpdf(scipy.special.softmax(u), a)",
            u=(3,),
            a=Arg((3,), POSITIVE),
        ),
        example(
            "scipy.stats.dirichlet.logpdf(scipy.special.softmax(u, axis=0), a)",
            u=(3, 4),
            a=Arg((3,), POSITIVE),
        ),
        example(
            "scipy.stats.dirichlet.logpdf(scipy.special.softmax(u)[:2], a)",
            u=(3,),
            a=Arg((3,), POSITIVE),
        ),
    ]

    @rule(dirichlet.logpdf, examples=_DIRICHLET_EXAMPLES)
    def dirichlet_logpdf(ans, x, alpha):
        """sum((alpha - 1) log x) - lnB(alpha) over the components (the first axis of x; a
        last one 1 - sum(x) when x has one fewer than alpha)."""

        def jvp_x(dx):
            k = np.shape(x)[0]
            full = np.concatenate(
                [x, (1.0 - np.sum(x, axis=0, keepdims=True))[: np.size(alpha) - k]]
            )
            p = np.swapaxes(np.swapaxes(full, 0, -1) ** -1.0 * (alpha - 1.0), 0, -1)
            return np.sum((p[:k] - np.sum(p[k:], axis=0, keepdims=True)) * dx, axis=0)

        def jvp_alpha(da):
            k = np.shape(x)[0]
            full = np.concatenate(
                [x, (1.0 - np.sum(x, axis=0, keepdims=True))[: np.size(alpha) - k]]
            )
            q = (
                np.log(np.swapaxes(full, 0, -1))
                - scipy.special.psi(alpha)
                + scipy.special.psi(np.sum(alpha))
            )
            return np.sum(q * da, axis=-1)

        def vjp_x(g):
            k = np.shape(x)[0]
            full = np.concatenate(
                [x, (1.0 - np.sum(x, axis=0, keepdims=True))[: np.size(alpha) - k]]
            )
            p = np.swapaxes(np.swapaxes(full, 0, -1) ** -1.0 * (alpha - 1.0), 0, -1)
            return (p[:k] - np.sum(p[k:], axis=0, keepdims=True)) * g

        def vjp_alpha(g):
            k = np.shape(x)[0]
            full = np.concatenate(
                [x, (1.0 - np.sum(x, axis=0, keepdims=True))[: np.size(alpha) - k]]
            )
            q = (
                np.log(np.swapaxes(full, 0, -1))
                - scipy.special.psi(alpha)
                + scipy.special.psi(np.sum(alpha))
            )
            return np.sum(np.reshape(q * np.expand_dims(g, -1), (-1, np.size(alpha))), axis=0)

    @rule(
        dirichlet.pdf,
        examples=[
            example(
                "scipy.stats.dirichlet.pdf(scipy.special.softmax(u, axis=0), a)",
                u=(3, 2),
                a=Arg((3,), POSITIVE),
            )
        ],
    )
    def dirichlet_pdf(ans, x, alpha):
        """exp(logpdf): each derivative of the log-density times the density."""

        def jvp_x(dx):
            k = np.shape(x)[0]
            full = np.concatenate(
                [x, (1.0 - np.sum(x, axis=0, keepdims=True))[: np.size(alpha) - k]]
            )
            p = np.swapaxes(np.swapaxes(full, 0, -1) ** -1.0 * (alpha - 1.0), 0, -1)
            return ans * np.sum((p[:k] - np.sum(p[k:], axis=0, keepdims=True)) * dx, axis=0)

        def jvp_alpha(da):
            k = np.shape(x)[0]
            full = np.concatenate(
                [x, (1.0 - np.sum(x, axis=0, keepdims=True))[: np.size(alpha) - k]]
            )
            q = (
                np.log(np.swapaxes(full, 0, -1))
                - scipy.special.psi(alpha)
                + scipy.special.psi(np.sum(alpha))
            )
            return ans * np.sum(q * da, axis=-1)

        def vjp_x(g):
            k = np.shape(x)[0]
            full = np.concatenate(
                [x, (1.0 - np.sum(x, axis=0, keepdims=True))[: np.size(alpha) - k]]
            )
            p = np.swapaxes(np.swapaxes(full, 0, -1) ** -1.0 * (alpha - 1.0), 0, -1)
            return (p[:k] - np.sum(p[k:], axis=0, keepdims=True)) * (g * ans)

        def vjp_alpha(g):
            k = np.shape(x)[0]
            full = np.concatenate(
                [x, (1.0 - np.sum(x, axis=0, keepdims=True))[: np.size(alpha) - k]]
            )
            q = (
                np.log(np.swapaxes(full, 0, -1))
                - scipy.special.psi(alpha)
                + scipy.special.psi(np.sum(alpha))
            )
            return np.sum(np.reshape(q * np.expand_dims(g * ans, -1), (-1, np.size(alpha))), axis=0)

    # -- cumulative distributions, survival functions and their inverses, by the
    # standardisation z = (x - loc) / scale. The derivative w.r.t. x is the density (a
    # function with a rule, so the derivatives can be differentiated again), those w.r.t.
    # loc and scale follow from z's. Each template below is written for norm; a
    # distribution's own is the same with its name, and its shapes after the first argument
    # of each call of its methods (STANDARDISED says which). The shape parameters have no
    # closed form here (the derivatives of incomplete beta and gamma functions in their
    # parameters): refused by name where a differentiated value reaches them.

    def standardised_cdf(ans, x, loc=0.0, scale=1.0):
        """F(z), z = (x - loc) / scale: dF = pdf (dx - dloc - z dscale)."""
        z = (x - loc) / scale
        p = scipy.stats.norm.pdf(x, loc, scale)
        return {"x": p, "loc": -p, "scale": -z * p}

    def standardised_sf(ans, x, loc=0.0, scale=1.0):
        """1 - F(z): d = -pdf (dx - dloc - z dscale)."""
        z = (x - loc) / scale
        p = scipy.stats.norm.pdf(x, loc, scale)
        return {"x": -p, "loc": p, "scale": z * p}

    def standardised_logcdf(ans, x, loc=0.0, scale=1.0):
        """log F(z): d = exp(logpdf - logcdf) (dx - dloc - z dscale)."""
        z = (x - loc) / scale
        r = np.exp(scipy.stats.norm.logpdf(x, loc, scale) - ans)
        return {"x": r, "loc": -r, "scale": -z * r}

    def standardised_logsf(ans, x, loc=0.0, scale=1.0):
        """log(1 - F(z)): d = -exp(logpdf - logsf) (dx - dloc - z dscale)."""
        z = (x - loc) / scale
        r = np.exp(scipy.stats.norm.logpdf(x, loc, scale) - ans)
        return {"x": -r, "loc": r, "scale": z * r}

    def standardised_ppf(ans, q, loc=0.0, scale=1.0):
        """x = F^-1(q): dx = dq / pdf(x) + dloc + (x - loc) / scale dscale."""
        p = scipy.stats.norm.pdf(ans, loc, scale)
        return {"q": 1.0 / p, "loc": 1.0, "scale": (ans - loc) / scale}

    def standardised_isf(ans, q, loc=0.0, scale=1.0):
        """x = F^-1(1 - q): dx = -dq / pdf(x) + dloc + (x - loc) / scale dscale."""
        p = scipy.stats.norm.pdf(ans, loc, scale)
        return {"q": -1.0 / p, "loc": 1.0, "scale": (ans - loc) / scale}

    TEMPLATES = {
        "cdf": standardised_cdf,
        "sf": standardised_sf,
        "logcdf": standardised_logcdf,
        "logsf": standardised_logsf,
        "ppf": standardised_ppf,
        "isf": standardised_isf,
    }
    LOG_CDF_PPF = ("logcdf", "logsf", "ppf", "isf")  # (logistic's cdf and sf: expit's rules)
    # distribution -> (its shapes with the values its examples take, where its examples draw
    # x, loc and scale, the domain of the rule (None: its examples only; ppf and isf then
    # take the open unit interval), the methods registered so)
    STANDARDISED: dict[str, tuple[tuple[tuple[str, str], ...], Domain, Domain, Domain, Any]] = {
        "norm": ((), ANY, ANY, SCALE, ANY),
        "t": ((("df", "3.0"),), ANY, ANY, SCALE, None),
        "gamma": ((("a", "2.5"),), Domain(1.0, 3.0), Domain(-0.5, 0.5), SCALE, None),
        "beta": (
            (("a", "2.0"), ("b", "3.0")),
            Domain(0.6, 1.4),
            Domain(0.0, 0.5),
            Domain(1.5, 2.0),
            None,
        ),
        "chi2": ((("df", "3.0"),), Domain(1.0, 3.0), Domain(-0.5, 0.5), SCALE, None),
        "expon": ((), Domain(1.0, 3.0), Domain(-0.5, 0.5), SCALE, POSITIVE),
        "logistic": ((), ANY, ANY, SCALE, ANY),
        "laplace": (
            (),
            Domain(0.5, 1.5),
            Domain(-0.3, 0.3),
            SCALE,
            Domain(-1.5, 1.5, avoid=(0.0,), gap=0.1),
        ),
        "cauchy": ((), ANY, ANY, SCALE, ANY),
        "uniform": ((), Domain(0.2, 0.8), Domain(-0.1, 0.1), Domain(1.0, 1.5), OPEN_UNIT),
        "weibull_min": ((("c", "1.5"),), Domain(0.5, 2.0), Domain(-0.3, 0.3), SCALE, None),
    }
    STANDARDISED_METHODS = {"norm": ("ppf", "isf"), "logistic": LOG_CDF_PPF}

    def for_distribution(name: str, shapes: list[str]) -> Any:
        """The rewrite of a template written for norm into ``name``'s: its methods called
        with its ``shapes`` after their first argument."""

        def rewrite(fdef: ast.FunctionDef) -> ast.FunctionDef:
            for node in ast.walk(fdef):
                if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                    continue
                owner = node.func.value  # scipy.stats.norm.pdf -> scipy.stats.<name>.pdf
                if isinstance(owner, ast.Attribute) and ast.unparse(owner) == "scipy.stats.norm":
                    owner.attr = name
                    node.args[1:1] = [ast.Name(id=s, ctx=ast.Load()) for s in shapes]
            return fdef

        return rewrite

    def register_standardised(name: str) -> None:
        shapes, x, loc, scale, domain = STANDARDISED[name]
        dist = getattr(scipy.stats, name)
        values = "".join(f"{v}, " for _, v in shapes)
        which = inspect.Parameter.POSITIONAL_OR_KEYWORD
        for method in STANDARDISED_METHODS.get(name, tuple(TEMPLATES)):
            template = TEMPLATES[method]
            point = "q" if method in ("ppf", "isf") else "x"
            drawn: dict[str, Any] = {point: Arg((4,), OPEN_UNIT if point == "q" else x)}
            drawn.update(m=Arg(None, loc), s=Arg(None, scale))
            call = f"scipy.stats.{name}.{method}({point}, {values}m, s)"
            # the template's function for this distribution: its parameters, shapes included
            fn = types.FunctionType(template.__code__, template.__globals__, f"{name}_{method}")
            fn.__defaults__ = template.__defaults__
            params = list(inspect.signature(template).parameters.values())
            made = [inspect.Parameter(s, which) for s, _ in shapes]
            fn.__signature__ = inspect.Signature([*params[:2], *made, *params[2:]])  # type: ignore[attr-defined]
            partials(
                getattr(dist, method),
                domain=OPEN_UNIT if point == "q" and domain is not None else domain,
                examples=[example(call, **drawn)],
                rewrite=for_distribution(name, [s for s, _ in shapes]),
            )(fn)

    for distribution in STANDARDISED:
        register_standardised(distribution)

    @partials(
        scipy.stats.lognorm.cdf,
        examples=[
            example(
                "scipy.stats.lognorm.cdf(x, sig, m, s)",
                x=Arg((4,), Domain(1.0, 3.0)),
                sig=Arg(None, Domain(0.5, 1.5)),
                m=Arg(None, Domain(-0.5, 0.5)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def lognorm_cdf(ans, x, s, loc=0.0, scale=1.0):
        """F(z; s), z = (x - loc) / scale: dF = pdf (dx - dloc - z dscale). W.r.t. s: through
        Phi(log(z) / s), 0 off the support."""
        z = (x - loc) / scale
        p = scipy.stats.lognorm.pdf(x, s, loc, scale)
        u = np.log(np.where(z > 0.0, z, 1.0))
        return {"x": p, "s": -scipy.stats.norm.pdf(u / s) * u / (s * s), "loc": -p, "scale": -z * p}

    @partials(
        scipy.stats.lognorm.sf,
        examples=[
            example(
                "scipy.stats.lognorm.sf(x, sig, m, s)",
                x=Arg((4,), Domain(1.0, 3.0)),
                sig=Arg(None, Domain(0.5, 1.5)),
                m=Arg(None, Domain(-0.5, 0.5)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def lognorm_sf(ans, x, s, loc=0.0, scale=1.0):
        """1 - F(z; s): d = -pdf (dx - dloc - z dscale). W.r.t. s: through Phi(log(z) / s), 0 off
        the support."""
        z = (x - loc) / scale
        p = scipy.stats.lognorm.pdf(x, s, loc, scale)
        u = np.log(np.where(z > 0.0, z, 1.0))
        return {"x": -p, "s": scipy.stats.norm.pdf(u / s) * u / (s * s), "loc": p, "scale": z * p}

    @partials(
        scipy.stats.lognorm.logcdf,
        examples=[
            example(
                "scipy.stats.lognorm.logcdf(x, sig, m, s)",
                x=Arg((4,), Domain(1.0, 3.0)),
                sig=Arg(None, Domain(0.5, 1.5)),
                m=Arg(None, Domain(-0.5, 0.5)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def lognorm_logcdf(ans, x, s, loc=0.0, scale=1.0):
        """log F(z; s): d = exp(logpdf - logcdf) (dx - dloc - z dscale). W.r.t. s: through
        Phi(log(z) / s), 0 off the support."""
        z = (x - loc) / scale
        r = np.exp(scipy.stats.lognorm.logpdf(x, s, loc, scale) - ans)
        u = np.log(np.where(z > 0.0, z, 1.0))
        return {
            "x": r,
            "s": -np.exp(scipy.stats.norm.logpdf(u / s) - ans) * u / (s * s),
            "loc": -r,
            "scale": -z * r,
        }

    @partials(
        scipy.stats.lognorm.logsf,
        examples=[
            example(
                "scipy.stats.lognorm.logsf(x, sig, m, s)",
                x=Arg((4,), Domain(1.0, 3.0)),
                sig=Arg(None, Domain(0.5, 1.5)),
                m=Arg(None, Domain(-0.5, 0.5)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def lognorm_logsf(ans, x, s, loc=0.0, scale=1.0):
        """log(1 - F(z; s)): d = -exp(logpdf - logsf) (dx - dloc - z dscale). W.r.t. s: through
        Phi(log(z) / s), 0 off the support."""
        z = (x - loc) / scale
        r = np.exp(scipy.stats.lognorm.logpdf(x, s, loc, scale) - ans)
        u = np.log(np.where(z > 0.0, z, 1.0))
        return {
            "x": -r,
            "s": np.exp(scipy.stats.norm.logpdf(u / s) - ans) * u / (s * s),
            "loc": r,
            "scale": z * r,
        }

    @partials(
        scipy.stats.lognorm.ppf,
        examples=[
            example(
                "scipy.stats.lognorm.ppf(q, sig, m, s)",
                q=Arg((4,), OPEN_UNIT),
                sig=Arg(None, Domain(0.5, 1.5)),
                m=Arg(None, Domain(-0.5, 0.5)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def lognorm_ppf(ans, q, s, loc=0.0, scale=1.0):
        """x = F^-1(q; s): dx = dq / pdf(x) + dloc + (x - loc) / scale dscale. W.r.t. s: scale z
        log(z) / s."""
        p = scipy.stats.lognorm.pdf(ans, s, loc, scale)
        z = (ans - loc) / scale
        u = np.log(np.where(z > 0.0, z, 1.0))
        return {"q": 1.0 / p, "s": scale * z * u / s, "loc": 1.0, "scale": (ans - loc) / scale}

    @partials(
        scipy.stats.lognorm.isf,
        examples=[
            example(
                "scipy.stats.lognorm.isf(q, sig, m, s)",
                q=Arg((4,), OPEN_UNIT),
                sig=Arg(None, Domain(0.5, 1.5)),
                m=Arg(None, Domain(-0.5, 0.5)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def lognorm_isf(ans, q, s, loc=0.0, scale=1.0):
        """x = F^-1(1 - q; s): dx = -dq / pdf(x) + dloc + (x - loc) / scale dscale. W.r.t. s: scale
        z log(z) / s."""
        p = scipy.stats.lognorm.pdf(ans, s, loc, scale)
        z = (ans - loc) / scale
        u = np.log(np.where(z > 0.0, z, 1.0))
        return {"q": -1.0 / p, "s": scale * z * u / s, "loc": 1.0, "scale": (ans - loc) / scale}

    @partials(
        scipy.stats.uniform.logpdf,
        kind="log",
        domain=OPEN_UNIT,
        examples=[
            example(
                "scipy.stats.uniform.logpdf(x, m, s)",
                x=Arg((4,), Domain(0.2, 0.8)),
                m=Arg(None, Domain(-0.1, 0.1)),
                s=Arg(None, Domain(1.0, 1.5)),
            )
        ],
    )
    @partials(
        scipy.stats.uniform.pdf,
        kind="density",
        domain=OPEN_UNIT,
        examples=[
            example(
                "scipy.stats.uniform.pdf(x, m, s)",
                x=Arg((4,), Domain(0.2, 0.8)),
                m=Arg(None, Domain(-0.1, 0.1)),
                s=Arg(None, Domain(1.0, 1.5)),
            )
        ],
    )
    def uniform_logpdf(ans, x, loc=0.0, scale=1.0):
        """-log(scale) on [loc, loc + scale]: constant in x and loc there."""
        return {"x": 0.0 * x, "loc": 0.0 * loc, "scale": -1.0 / scale}

    @partials(
        scipy.stats.chi2.logpdf,
        kind="log",
        domain=(POSITIVE, POSITIVE),
        examples=[
            example(
                "scipy.stats.chi2.logpdf(x, k, m, s)",
                x=Arg((4,), Domain(1.0, 3.0)),
                k=Arg(None, Domain(1.0, 6.0)),
                m=Arg(None, Domain(-0.5, 0.5)),
                s=Arg(None, SCALE),
            )
        ],
    )
    @partials(
        scipy.stats.chi2.pdf,
        kind="density",
        domain=(POSITIVE, POSITIVE),
        examples=[
            example(
                "scipy.stats.chi2.pdf(x, k, scale=s)",
                x=Arg((4,), POSITIVE),
                k=Arg((4,), Domain(1.0, 6.0)),
                s=Arg(None, SCALE),
            )
        ],
    )
    def chi2_logpdf(ans, x, df, loc=0.0, scale=1.0):
        """(df / 2 - 1) log(y) - y / 2 - df / 2 log(2) - gammaln(df / 2) - log(scale),
        y = (x - loc) / scale."""
        y = (x - loc) / scale
        dy = (0.5 * df - 1.0) / y - 0.5
        return {
            "x": dy / scale,
            "df": 0.5 * (np.log(0.5 * y) - scipy.special.psi(0.5 * df)),
            "loc": -dy / scale,
            "scale": -(1.0 + y * dy) / scale,
        }

    # the standard forms' own methods that libraries call directly (no loc, scale, checks)
    @partials(norm._ppf, examples=[example("scipy.stats.norm._ppf(q)", q=Arg((4,), OPEN_UNIT))])
    def norm_std_ppf(ans, q):
        """x = Phi^-1(q): dx = dq / phi(x)."""
        return {"q": 1.0 / scipy.stats.norm._pdf(ans)}

    @partials(norm._isf, examples=[example("scipy.stats.norm._isf(q)", q=Arg((4,), OPEN_UNIT))])
    def norm_std_isf(ans, q):
        """x = Phi^-1(1 - q): dx = -dq / phi(x)."""
        return {"q": -1.0 / scipy.stats.norm._pdf(ans)}

    @partials(
        t._logpdf,
        kind="log",
        examples=[example("scipy.stats.t._logpdf(x, nu)", x=(4,), nu=Arg(None, Domain(1.5, 6.0)))],
    )
    @partials(
        t._pdf,
        kind="density",
        examples=[example("scipy.stats.t._pdf(x, nu)", x=(4,), nu=Arg((4,), Domain(1.5, 6.0)))],
    )
    def t_std_logpdf(ans, x, df):
        """Student's t in standard form: -(df + 1) / 2 log(1 + x^2 / df) + terms of df."""
        w = df + x * x
        return {
            "x": -(df + 1.0) * x / w,
            "df": 0.5
            * (
                scipy.special.psi(0.5 * (df + 1.0))
                - scipy.special.psi(0.5 * df)
                - 1.0 / df
                - np.log1p(x * x / df)
                + (df + 1.0) * x * x / (df * w)
            ),
        }

    @partials(t._cdf, examples=[example("scipy.stats.t._cdf(x, 3.0)", x=(4,))])
    def t_std_cdf(ans, x, df):
        """F(x; df): dF = pdf dx; no closed form w.r.t. df (refused). The density written
        out (1.1447... = log pi): SciPy's own computes with a mask (a Dask array's shape
        then unknown) or checks its arguments (a Dask array computed)."""
        return {
            "x": np.exp(
                scipy.special.gammaln((df + 1.0) / 2.0)
                - scipy.special.gammaln(df / 2.0)
                - 0.5 * (np.log(df) + 1.1447298858494002)
                - (df + 1.0) / 2.0 * np.log1p(x * x / df)
            )
        }

    @partials(t._sf, examples=[example("scipy.stats.t._sf(x, 3.0)", x=(4,))])
    def t_std_sf(ans, x, df):
        """1 - F(x; df): d = -pdf dx (as ``t._cdf``'s); no closed form w.r.t. df (refused)."""
        return {
            "x": -np.exp(
                scipy.special.gammaln((df + 1.0) / 2.0)
                - scipy.special.gammaln(df / 2.0)
                - 0.5 * (np.log(df) + 1.1447298858494002)
                - (df + 1.0) / 2.0 * np.log1p(x * x / df)
            )
        }

    @rule(
        scipy.stats.entropy,
        examples=[
            example("scipy.stats.entropy(pk)", pk=Arg((5,), POSITIVE)),
            example("scipy.stats.entropy(pk, qk)", pk=Arg((5,), POSITIVE), qk=Arg((5,), POSITIVE)),
            example("scipy.stats.entropy(pk, base=2.0)", pk=Arg((4,), POSITIVE)),
            example("scipy.stats.entropy(pk, axis=1)", pk=Arg((3, 4), POSITIVE)),
            example(
                "scipy.stats.entropy(pk, qk, axis=0)",
                pk=Arg((3, 1), POSITIVE),
                qk=Arg((3, 4), POSITIVE),
            ),
            example(
                "scipy.stats.entropy(pk, qk, axis=None)",
                pk=Arg((2, 3), POSITIVE),
                qk=Arg((2, 3), POSITIVE),
            ),
        ],
    )
    def entropy(ans, pk, qk=None, base=None, axis=0):
        """Shannon's entropy -sum(P log P) of P = pk / sum(pk) along ``axis``, or with ``qk``
        the relative entropy sum(P log(P / Q)) (``pk`` normalised, then broadcast with
        ``qk``, which is normalised after), divided by log(base) where a base is given
        (``base`` is data). Derivatives through the normalisations: d/dP of the sum is
        -(log P + 1) (with ``qk``: log(P / Q) + 1), d/dQ is -P / Q; a normalisation v / sum(v)
        takes a cotangent G back to (G - sum(G v / sum(v))) / sum(v). At an entry P = 0 the
        partial is infinite: a zero tangent or cotangent there contributes 0, and the sums
        take P log P as its limit 0."""

        def jvp_pk(d):
            s = np.sum(pk, axis=axis, keepdims=True)
            p = pk / s
            dp = (d - p * np.sum(d, axis=axis, keepdims=True)) / s
            if qk is None:
                slope = -(np.log(p) + 1.0)
            else:
                q = np.broadcast_to(qk, np.broadcast_shapes(np.shape(pk), np.shape(qk)))
                q = q / np.sum(q, axis=axis, keepdims=True)
                slope = np.log(p / q) + 1.0
            out = np.sum(rt.zero_safe(slope * dp, dp), axis=axis)
            return out if base is None else out / np.log(base)

        def jvp_qk(d):
            shape = np.broadcast_shapes(np.shape(pk), np.shape(qk))
            p = np.broadcast_to(pk / np.sum(pk, axis=axis, keepdims=True), shape)
            qb = np.broadcast_to(qk, shape)
            t = np.sum(qb, axis=axis, keepdims=True)
            q = qb / t
            db = np.broadcast_to(d, shape)
            dq = (db - q * np.sum(db, axis=axis, keepdims=True)) / t
            out = np.sum(rt.zero_safe(-(p / q) * dq, dq), axis=axis)
            return out if base is None else out / np.log(base)

        def vjp_pk(g):
            gk = g if axis is None else np.expand_dims(g, axis)
            if base is not None:
                gk = gk / np.log(base)
            s = np.sum(pk, axis=axis, keepdims=True)
            p = pk / s
            if qk is None:
                gp = rt.zero_safe(-gk * (np.log(p) + 1.0), gk)
                weighted = gk * (np.sum(scipy.special.entr(p), axis=axis, keepdims=True) - 1.0)
            else:
                q = np.broadcast_to(qk, np.broadcast_shapes(np.shape(pk), np.shape(qk)))
                q = q / np.sum(q, axis=axis, keepdims=True)
                gp = rt.unbroadcast(rt.zero_safe(gk * (np.log(p / q) + 1.0), gk), p)
                weighted = np.sum(np.where(p > 0.0, gp * p, 0.0), axis=axis, keepdims=True)
            return (gp - weighted) / s

        def vjp_qk(g):
            gk = g if axis is None else np.expand_dims(g, axis)
            if base is not None:
                gk = gk / np.log(base)
            shape = np.broadcast_shapes(np.shape(pk), np.shape(qk))
            p = np.broadcast_to(pk / np.sum(pk, axis=axis, keepdims=True), shape)
            qb = np.broadcast_to(qk, shape)
            t = np.sum(qb, axis=axis, keepdims=True)
            gq = rt.zero_safe(-gk * (p / qb * t), gk)  # (-gk P / Q)
            weighted = -gk * np.sum(p, axis=axis, keepdims=True)  # (sum of gq Q: -gk sum P)
            return rt.unbroadcast((gq - weighted) / t, qk)


# -- gaussian_kde made outside the function: its log-density and density w.r.t. the points --
# (kde.logpdf(x) is rt.kde_logpdf(kde, x), kde.pdf / kde.evaluate rt.kde_pdf: see
# adgen.rules.registry.method_helper; the estimate is a constant of the derivative)
_KDE = "scipy.stats.gaussian_kde(np.array([-1.0, 0.0, 0.5, 2.0]))"
_KDE2 = (
    "scipy.stats.gaussian_kde(np.array([[-1.0, 0.0, 0.5, 2.0, 1.0], [0.3, -0.5, 1.0, 0.0, 2.0]]))"
)

if scipy is not None:

    @rule(
        rt.kde_logpdf,
        examples=[
            example(f"rt.kde_logpdf({_KDE}, x)", x=(3,)),
            example(f"rt.kde_logpdf({_KDE2}, x)", x=(2, 3)),
            example(f"rt.kde_logpdf({_KDE2}, x)", x=(2,)),
        ],
    )
    def kde_logpdf(ans, kde, x):
        """The log-density of a kernel density estimate at the points ``x``: per point, the
        gradient of ``rt.kde_logpdf_gradient`` contracted with the point's tangent."""

        def jvp_x(d):
            grad = rt.kde_logpdf_gradient(kde, x)
            return np.sum(grad * np.reshape(d, np.shape(grad)), axis=0)

        def vjp_x(g):
            return np.reshape(rt.kde_logpdf_gradient(kde, x) * g, np.shape(x))

    @rule(
        rt.kde_pdf,
        examples=[
            example(f"rt.kde_pdf({_KDE}, x)", x=(3,)),
            example(f"rt.kde_pdf({_KDE2}, x)", x=(2, 3)),
        ],
    )
    def kde_pdf(ans, kde, x):
        """The density: ``ans`` times the log-density's derivative."""

        def jvp_x(d):
            grad = rt.kde_logpdf_gradient(kde, x)
            return ans * np.sum(grad * np.reshape(d, np.shape(grad)), axis=0)

        def vjp_x(g):
            return np.reshape(rt.kde_logpdf_gradient(kde, x) * (g * ans), np.shape(x))

    @rule(
        rt.kde_logpdf_gradient,
        examples=[
            example(f"rt.kde_logpdf_gradient({_KDE}, x)", x=(3,), twice=False),
            example(f"rt.kde_logpdf_gradient({_KDE2}, x)", x=(2, 3), twice=False),
        ],
    )
    def kde_logpdf_gradient(kde, x):
        """The log-density's gradient (``(d, m)``): its derivative is the Hessian of each
        point (symmetric: its own transpose)."""

        def jvp_x(d):
            return rt.kde_logpdf_hvp(kde, x, d)

        def vjp_x(g):
            return np.reshape(rt.kde_logpdf_hvp(kde, x, np.reshape(g, np.shape(x))), np.shape(x))

    refused_derivative(
        rt.kde_logpdf_hvp,
        reason="a third derivative of a gaussian_kde's log-density (adgen has two)",
    )
    METHOD_HELPERS[scipy.stats.gaussian_kde.logpdf] = rt.kde_logpdf
    METHOD_HELPERS[scipy.stats.gaussian_kde.evaluate] = rt.kde_pdf
    METHOD_HELPERS[scipy.stats.gaussian_kde.pdf] = rt.kde_pdf

    # -- the standard forms' own methods (``gamma._logpdf(x, a)``: loc 0, scale 1, no
    # argument checks), which libraries call directly, by their public methods' partials.
    # distribution -> (its shapes' values, where the examples draw x)
    STANDARD_FORMS: dict[str, tuple[str, Domain]] = {
        "norm": ("", ANY),
        "t": ("3.0, ", ANY),
        "gamma": ("2.5, ", Domain(0.5, 3.0)),
        "beta": ("2.0, 3.0, ", Domain(0.2, 0.8)),
        "chi2": ("3.0, ", Domain(0.5, 3.0)),
        "expon": ("", Domain(0.5, 3.0)),
        "logistic": ("", ANY),
        "laplace": ("", Domain(-1.5, 1.5, avoid=(0.0,), gap=0.1)),
        "cauchy": ("", ANY),
        "uniform": ("", Domain(0.2, 0.8)),
        "weibull_min": ("1.5, ", Domain(0.5, 2.0)),
        "lognorm": ("0.8, ", Domain(0.5, 3.0)),
        "vonmises": ("1.5, ", Domain(-2.0, 2.0)),
    }

    class StandardDensities(ast.NodeTransformer):
        """A public method's partials made a standard form's: the densities they call,
        ``scipy.stats.gamma.pdf(x, a, loc, scale)``, written with the standard form's own,
        ``scipy.stats.gamma._pdf((x - loc) / scale, a) / scale`` (a standard form's
        ``_cdf`` is the integral of its ``_pdf`` wherever it is defined, also where the
        public ``pdf`` checks the support and says 0; and SciPy's public methods compute
        Dask arrays)."""

        def visit_Call(self, node: ast.Call) -> ast.expr:
            self.generic_visit(node)
            func = node.func
            if not (
                isinstance(func, ast.Attribute)
                and func.attr in ("pdf", "logpdf")
                and ast.unparse(func.value).startswith("scipy.stats.")
                and not node.keywords
            ):
                return node
            dist = getattr(scipy.stats, ast.unparse(func.value)[len("scipy.stats.") :], None)
            shapes = getattr(dist, "numargs", None)
            if shapes is None or len(node.args) not in (1 + shapes, 3 + shapes):
                return node
            point, rest = node.args[0], node.args[1 : 1 + shapes]
            own = ast.Attribute(value=func.value, attr="_" + func.attr, ctx=ast.Load())
            if len(node.args) == 1 + shapes:
                return ast.Call(func=own, args=[point, *rest], keywords=[])
            loc, scale = node.args[1 + shapes :]
            z = ast.BinOp(ast.BinOp(point, ast.Sub(), loc), ast.Div(), scale)
            call = ast.Call(func=own, args=[z, *rest], keywords=[])
            if func.attr == "pdf":
                return ast.BinOp(call, ast.Div(), copy.deepcopy(scale))
            log = ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()), attr="log", ctx=ast.Load())
            scaled = ast.Call(func=log, args=[copy.deepcopy(scale)], keywords=[])
            return ast.BinOp(call, ast.Sub(), scaled)

    class AtUnitScale(ast.NodeTransformer):
        """``loc`` 0 and ``scale`` 1 written in, and what they leave folded: ``x - 0.0``,
        ``e / 1.0``, ``e * 1.0``, ``np.log(1.0)`` (a standard form takes neither)."""

        def visit_Name(self, node: ast.Name) -> ast.expr:
            if isinstance(node.ctx, ast.Load) and node.id in ("loc", "scale"):
                return ast.Constant(0.0 if node.id == "loc" else 1.0)
            return node

        def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
            self.generic_visit(node)
            right = node.right.value if isinstance(node.right, ast.Constant) else None
            if (isinstance(node.op, (ast.Sub, ast.Add)) and right == 0.0) or (
                isinstance(node.op, (ast.Mult, ast.Div)) and right == 1.0
            ):
                return node.left
            if isinstance(node.op, ast.Sub) and _is_log_of_one(node.right):
                return node.left
            return node

    def _is_log_of_one(node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "np.log"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == 1.0
        )

    def standard_densities(fdef: ast.FunctionDef) -> ast.FunctionDef:
        fdef.body = [AtUnitScale().visit(StandardDensities().visit(stmt)) for stmt in fdef.body]
        return ast.fix_missing_locations(fdef)

    for _name, (_shapes, _where) in STANDARD_FORMS.items():
        _dist = getattr(scipy.stats, _name)
        for _method in ("pdf", "logpdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"):
            _own = getattr(_dist, "_" + _method, None)
            if _own is None:
                continue
            _point = "q" if _method in ("ppf", "isf") else "x"
            _drawn: dict[str, Any] = {_point: Arg((4,), OPEN_UNIT if _point == "q" else _where)}
            _call = f"scipy.stats.{_name}._{_method}({_point}, {_shapes})"
            standard_form(
                _own, getattr(_dist, _method), [example(_call, **_drawn)], standard_densities
            )
