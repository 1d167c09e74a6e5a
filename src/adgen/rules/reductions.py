"""Reductions, scans and statistics (``axis`` / ``keepdims`` / ``ddof`` where NumPy has them).

Conventions where the derivative is not defined (tested with exact values in
``tests/test_rules_reductions_more.py``):

* ``max``/``min``, ``nanmax``/``nanmin`` and ``ptp`` split the derivative evenly between tied
  extrema (a constant slice has ``ptp`` derivative 0).
* ``median``, ``quantile``, ``percentile`` (and the ``nan`` variants), ``sort`` and
  ``partition``: tied entries share evenly the derivative of the run of order statistics they
  occupy (``median([1, 2, 2])`` gives ``[0, 0.5, 0.5]``; ``sort([2, 1, 2])`` gives each 2.0 the
  average of the two slots, and so does ``partition``, wherever it puts them). Quantiles use
  NumPy's default linear method; ``q`` is not differentiated.
* ``gradient`` is differentiated with respect to ``f`` only: its spacings (numbers or
  coordinates) are refused if a derivative reaches them.
* ``std`` / ``nanstd`` of a slice whose entries are all equal: derivative 0 (the two-entry
  ``std`` is ``abs``, whose derivative at 0 is 0), whatever rounding leaves in the mean.
* ``prod``, ``nanprod``, ``cumprod``, ``nancumprod``, ``cumulative_prod`` are exact when the
  input holds zeros (products and sums only, no division by x).
* ``nan*`` functions: NaN entries get a zero derivative (``nanprod``/``nancumprod`` read them
  as 1, the others leave them out).

Calls using arguments these rules do not model (``out=``, ``dtype=``, ``np.average(...,
returned=True)``, ``quantile(..., method=...)``, ``cov(..., fweights=...)``) do not match the
rule's parameters and are refused.
"""

import math
from typing import Any

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import methods, reductions, rule, sequence_rule
from adgen.rules.samples import DISTINCT, POSITIVE, Arg, example


@rule(
    np.sum,
    complex=True,
    examples=[
        example("np.sum(a, 0, np.float64) * np.arange(3.0)", a=(2, 3), f32=True, complex=False),
    ],
)
def sum_(a, axis=None, dtype=None, *, keepdims=False):
    """NumPy's positional order (``np.sum(a, axis, dtype, out)``); ``out`` is not taken (a
    fourth positional argument is refused). With ``dtype``: the sum of ``a`` cast to it
    (:func:`rt.accumulates_in`)."""

    def jvp(da):
        if dtype is None:
            return np.sum(da, axis=axis, keepdims=keepdims)
        if rt.accumulates_in(dtype, a):
            return np.sum(da, axis=axis, dtype=dtype, keepdims=keepdims)
        return np.zeros(np.shape(np.sum(da, axis=axis, keepdims=keepdims)))

    def bjvp(da):
        if dtype is None:
            return np.sum(da, axis=rt.batch_axis(axis, np.ndim(a)), keepdims=keepdims)
        return None

    def vjp(g):
        if dtype is None:
            return rt.unreduce(g, a, axis=axis, keepdims=keepdims)
        if rt.accumulates_in(dtype, a):
            return rt.cast_like(rt.unreduce(g, a, axis=axis, keepdims=keepdims), a)
        return rt.zeros_like(a)


@rule(
    np.mean,
    complex=True,
    examples=[
        example("np.mean(a, 1, np.float64) * np.arange(2.0)", a=(2, 3), f32=True, complex=False),
    ],
)
def mean(a, axis=None, dtype=None, *, keepdims=False):
    """As :func:`sum_`: ``np.mean(a, axis, dtype, out)``, ``out`` not taken."""

    def jvp(da):
        if dtype is None:
            return np.mean(da, axis=axis, keepdims=keepdims)
        if rt.accumulates_in(dtype, a):
            return np.mean(da, axis=axis, dtype=dtype, keepdims=keepdims)
        return np.zeros(np.shape(np.mean(da, axis=axis, keepdims=keepdims)))

    def bjvp(da):
        if dtype is None:
            return np.mean(da, axis=rt.batch_axis(axis, np.ndim(a)), keepdims=keepdims)
        return None

    def vjp(g):
        if dtype is None:
            return rt.mean_vjp(g, a, axis=axis, keepdims=keepdims)
        if rt.accumulates_in(dtype, a):
            return rt.cast_like(rt.mean_vjp(g, a, axis=axis, keepdims=keepdims), a)
        return rt.zeros_like(a)


@rule(np.prod, complex=True)
def prod(ans, a, axis=None, keepdims=False):
    def jvp(da):
        return np.sum(
            rt.prod_vjp(np.ones_like(ans), a, axis=axis, keepdims=keepdims) * da,
            axis=axis,
            keepdims=keepdims,
        )

    def bjvp(da):
        return np.sum(
            rt.prod_vjp(np.ones_like(ans), a, axis=axis, keepdims=keepdims) * da,
            axis=rt.batch_axis(axis, np.ndim(a)),
            keepdims=keepdims,
        )

    def vjp(g):
        return rt.prod_vjp(g, a, axis=axis, keepdims=keepdims)


@rule(np.max, np.amax, np.min, np.amin, complex=True)
def extremum(ans, a, axis=None, keepdims=False):
    """The cotangent goes to the extremum's entries (split evenly between ties); complex
    values are ordered as NumPy orders them (by real part, then imaginary part)."""

    def jvp(da):
        return np.sum(
            rt.minmax_vjp(np.ones_like(ans), ans, a, axis=axis, keepdims=keepdims) * da,
            axis=axis,
            keepdims=keepdims,
        )

    def bjvp(da):
        return np.sum(
            rt.minmax_vjp(np.ones_like(ans), ans, a, axis=axis, keepdims=keepdims) * da,
            axis=rt.batch_axis(axis, np.ndim(a)),
            keepdims=keepdims,
        )

    def vjp(g):
        return rt.minmax_vjp(g, ans, a, axis=axis, keepdims=keepdims)


methods(sum=np.sum, mean=np.mean, prod=np.prod, max=np.max, min=np.min, ptp=np.ptp)
reductions(np.sum, np.mean, np.prod, np.max, np.amax, np.min, np.amin)


# -- variance and standard deviation -----------------------------------------------------------
# n = math.prod(np.shape(a)) // math.prod(np.shape(ans)) is the number of entries reduced into
# each result (from shapes: np.size is not passed on to other array libraries; Dask warns).


@rule(
    np.var,
    examples=[
        example("np.var(a)", a=(5,), f32=True),
        example("np.var(a, axis=0)", a=(4, 3)),
        example("np.var(a, axis=-1, ddof=1, keepdims=True)", a=(2, 3, 4), f32=True),
        example("np.var(a, axis=(0, 2), ddof=1)", a=(2, 3, 4)),
        example("a.var(axis=1)", a=(3, 4)),
    ],
    complex=True,
)
def var(ans, a, axis=None, *, ddof=0, keepdims=False):
    """d var = 2 Σ (a - mean) da / (n - ddof): the mean's own change drops out. Complex
    ``a`` (var is the mean of ``|a - mean|**2``, real): ``2 Σ Re(conj(a - mean) da)``, and
    the cotangent ``2 g conj(a - mean) / (n - ddof)``."""

    def jvp(da):
        if rt.known_real(a):
            share = (a - np.mean(a, axis=axis, keepdims=True)) * da
        else:
            share = np.real(np.conjugate(a - np.mean(a, axis=axis, keepdims=True)) * da)
        return (
            2.0
            * np.sum(share, axis=axis, keepdims=keepdims)
            / (math.prod(np.shape(a)) // math.prod(np.shape(ans)) - ddof)
        )

    def vjp(g):
        if rt.known_real(a):
            centred = a - np.mean(a, axis=axis, keepdims=True)
        else:
            centred = np.conjugate(a - np.mean(a, axis=axis, keepdims=True))
        return (
            rt.unreduce(g, a, axis=axis, keepdims=keepdims)
            * centred
            * (2.0 / (math.prod(np.shape(a)) // math.prod(np.shape(ans)) - ddof))
        )


@rule(
    np.std,
    examples=[
        example("np.std(a)", a=(5,), f32=True),
        example("np.std(a, axis=0, ddof=1)", a=(4, 3)),
        example("np.std(a, axis=(0, -1), keepdims=True)", a=(2, 3, 4), f32=True),
        example("a.std(axis=-1, ddof=1)", a=(3, 4)),
    ],
    complex=True,
)
def std(ans, a, axis=None, *, ddof=0, keepdims=False):
    """d std = Σ (a - mean) da / ((n - ddof) std); 0 where all entries of a slice are equal
    (zero variance), rounding errors in the mean notwithstanding. Complex ``a``: ``(a - mean)``
    enters conjugated, and the tangent is the real part (std is real)."""

    def jvp(da):
        if rt.known_real(a):
            share = (a - np.mean(a, axis=axis, keepdims=True)) * da
        else:
            share = np.real(np.conjugate(a - np.mean(a, axis=axis, keepdims=True)) * da)
        return np.where(  # (a condition selects: array-API arrays refuse booleans in products)
            np.max(a, axis=axis, keepdims=keepdims) != np.min(a, axis=axis, keepdims=keepdims),
            np.sum(share, axis=axis, keepdims=keepdims)
            / (
                (math.prod(np.shape(a)) // math.prod(np.shape(ans)) - ddof)
                * np.where(ans == 0, 1.0, ans)
            ),
            0.0,
        )

    def vjp(g):
        if rt.known_real(a):
            centred = a - np.mean(a, axis=axis, keepdims=True)
        else:
            centred = np.conjugate(a - np.mean(a, axis=axis, keepdims=True))
        return (
            rt.unreduce(
                np.where(
                    np.max(a, axis=axis, keepdims=keepdims)
                    != np.min(a, axis=axis, keepdims=keepdims),
                    g
                    / (
                        (math.prod(np.shape(a)) // math.prod(np.shape(ans)) - ddof)
                        * np.where(ans == 0, 1.0, ans)
                    ),
                    0.0,
                ),
                a,
                axis=axis,
                keepdims=keepdims,
            )
            * centred
        )


# -- cumulative sums and products --------------------------------------------------------------
@rule(
    np.cumsum,
    examples=[
        example("np.cumsum(a)", a=(5,), f32=True),
        example("np.cumsum(a)", a=(2, 3)),
        example("np.cumsum(a, axis=1)", a=(3, 4)),
        example("np.cumsum(a, axis=-3)", a=(2, 3, 2)),
        example("a.cumsum(axis=0)", a=(3, 2), f32=True),
    ],
    complex=True,
)
def cumsum(a, axis=None):
    def jvp(da):
        return np.cumsum(da, axis=axis)

    def bjvp(da):
        if axis is None:
            return np.cumsum(np.reshape(da, (np.shape(da)[0], -1)), axis=1)
        return np.cumsum(da, axis=rt.batch_axis(axis, np.ndim(a)))

    def vjp(g):
        return rt.cumsum_vjp(g, a, axis=axis)


@rule(
    rt.cumsum_vjp,
    examples=[
        example("rt.cumsum_vjp(g, a)", g=(5,), a=(5,), f32=True),
        example("rt.cumsum_vjp(g, a)", g=(6,), a=(2, 3)),
        example("rt.cumsum_vjp(g, a, axis=1)", g=(3, 4), a=(3, 4)),
        example("rt.cumsum_vjp(g, a, axis=-3)", g=(2, 3, 2), a=(2, 3, 2)),
        example("rt.cumsum_vjp(g, a, axis=1, include_initial=True)", g=(3, 5), a=(3, 4)),
    ],
    complex=True,
)
def cumsum_vjp(ans, g, x, axis=None, include_initial=False):
    """Linear in ``g`` (reversed cumulative sums): the transpose is the cumulative sum
    itself; ``x`` only gives the shape."""

    def jvp_g(dg):
        return rt.cumsum_vjp(dg, x, axis=axis, include_initial=include_initial)

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def vjp_g(c):
        # np.cumulative_sum(c, axis=axis, include_initial=True), with the functions every
        # array library has (zeros shaped like a sum along the axis, then the sums)
        return (
            np.concatenate(
                [np.zeros_like(np.sum(c, axis=axis, keepdims=True)), np.cumsum(c, axis=axis)],
                axis=axis,
            )
            if include_initial
            else np.cumsum(c, axis=axis)
        )

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    np.cumprod,
    examples=[
        example("np.cumprod(a)", a=(5,), f32=True),
        example("np.cumprod(a)", a=(2, 3)),
        example("np.cumprod(a, axis=1)", a=(3, 4)),
        example("np.cumprod(a, axis=-2)", a=(2, 5, 2), f32=True),
        example("a.cumprod(axis=0)", a=(4, 2)),
    ],
    complex=True,
)
def cumprod(a, axis=None):
    """Exact with zeros in ``a``: products and sums only, no division by ``a``."""

    def jvp(da):
        return rt.cumprod_jvp(da, a, axis=axis)

    def vjp(g):
        return rt.cumprod_vjp(g, a, axis=axis)


# The derivatives of the cumulative products' helpers are scans too, written with
# ``rt.linear_recurrence`` (E below: t[i + 1] = x[i] t[i] + b[i] from t[0] = 0, exclusive;
# Er the same from the end, its transpose in b), exact with zeros in x. With
# L = prod(x[:i]) (E from t[0] = 1, b = 0):
#   cumprod_jvp(dx, x) = x * E(dx * L) + dx * L,
#   cumprod_vjp(g, x) = L * r,  r = g + Er(x * g),
# and E's derivative in x along u is E(u * t): the second derivatives below follow.
@rule(
    rt.cumprod_jvp,
    examples=[
        example("rt.cumprod_jvp(d, a)", d=(5,), a=(5,), f32=True),
        example("rt.cumprod_jvp(d, a)", d=(2, 3), a=(2, 3)),
        example("rt.cumprod_jvp(d, a, axis=1)", d=(3, 4), a=(3, 4)),
        example("rt.cumprod_jvp(d, a, axis=-2)", d=(2, 5, 2), a=(2, 5, 2), f32=True),
        example("rt.cumprod_jvp(d, a, axis=0, include_initial=True)", d=(3, 4), a=(3, 4)),
        example("rt.cumprod_jvp(d, a, include_initial=True)", d=(4,), a=(4,)),
        example("rt.cumprod_jvp(d, np.array([2.0, 0.0, -1.5, 0.0, 3.0]))", d=(5,)),
    ],
    complex=True,
)
def cumprod_jvp(dx, x, axis=None, include_initial=False):
    """Linear in ``dx`` (its transpose is ``rt.cumprod_vjp``); in ``x``, the second
    derivative of the cumulative product (symmetric in ``dx`` and the direction)."""

    def jvp_dx(d):
        return rt.cumprod_jvp(d, x, axis=axis, include_initial=include_initial)

    def jvp_x(d):
        low = rt.linear_recurrence(x, 0.0, axis, initial=1.0)
        e = rt.linear_recurrence(x, dx * low, axis)
        dlow = rt.linear_recurrence(x, d * low, axis)
        t = d * e + x * rt.linear_recurrence(x, dx * dlow + d * e, axis) + dx * dlow
        if include_initial:  # a 0 in front along the axis
            m = np.moveaxis(t, 0 if axis is None else axis, 0)
            return np.moveaxis(
                np.concatenate((np.zeros_like(m[:1]), m)), 0, 0 if axis is None else axis
            )
        return np.ravel(t) if axis is None else t

    def vjp_dx(c):
        return rt.rebroadcast(rt.cumprod_vjp(c, x, axis=axis, include_initial=include_initial), dx)

    def vjp_x(c):
        cs = (
            np.moveaxis(
                np.moveaxis(c, 0 if axis is None else axis, 0)[1:], 0, 0 if axis is None else axis
            )
            if include_initial
            else np.reshape(c, np.shape(x))
            if axis is None
            else c
        )
        low = rt.linear_recurrence(x, 0.0, axis, initial=1.0)
        r = cs + rt.linear_recurrence(x, x * cs, axis, reverse=True)
        return rt.linear_recurrence(x, dx * low, axis) * r + low * rt.linear_recurrence(
            x, dx * r, axis, reverse=True
        )


@rule(
    rt.cumprod_vjp,
    examples=[
        example("rt.cumprod_vjp(g, a)", g=(5,), a=(5,), f32=True),
        example("rt.cumprod_vjp(g, a)", g=(6,), a=(2, 3)),
        example("rt.cumprod_vjp(g, a, axis=1)", g=(3, 4), a=(3, 4)),
        example("rt.cumprod_vjp(g, a, axis=-2)", g=(2, 5, 2), a=(2, 5, 2), f32=True),
        example("rt.cumprod_vjp(g, a, axis=0, include_initial=True)", g=(4, 4), a=(3, 4)),
        example("rt.cumprod_vjp(g, a, include_initial=True)", g=(5,), a=(4,)),
        example("rt.cumprod_vjp(g, np.array([2.0, 0.0, -1.5, 0.0, 3.0]))", g=(5,)),
    ],
    complex=True,
)
def cumprod_vjp(g, x, axis=None, include_initial=False):
    """Linear in ``g`` (its transpose is ``rt.cumprod_jvp``); in ``x``, the Hessian of
    ``<g, cumprod(x)>`` times the direction (symmetric: its own transpose)."""

    def jvp_g(dg):
        return rt.cumprod_vjp(dg, x, axis=axis, include_initial=include_initial)

    def jvp_x(d):
        gs = (
            np.moveaxis(
                np.moveaxis(g, 0 if axis is None else axis, 0)[1:], 0, 0 if axis is None else axis
            )
            if include_initial
            else np.reshape(g, np.shape(x))
            if axis is None
            else g
        )
        low = rt.linear_recurrence(x, 0.0, axis, initial=1.0)
        r = gs + rt.linear_recurrence(x, x * gs, axis, reverse=True)
        return rt.linear_recurrence(x, d * low, axis) * r + low * rt.linear_recurrence(
            x, d * r, axis, reverse=True
        )

    def vjp_g(c):
        return rt.rebroadcast(rt.cumprod_jvp(c, x, axis=axis, include_initial=include_initial), g)

    vjp_x = jvp_x  # noqa: F841 - the Hessian is symmetric (read by the registry)


@rule(
    rt.linear_recurrence,
    examples=[
        example("rt.linear_recurrence(a, b)", a=(5,), b=(5,), f32=True),
        example("rt.linear_recurrence(a, b, 1, reverse=True)", a=(3, 4), b=(3, 4)),
        example("rt.linear_recurrence(a, b, (0, 2), initial=1.0)", a=(2, 3, 2), b=(2, 3, 2)),
        example("rt.linear_recurrence(a, 0.0, None, True, 1.0)", a=(2, 3)),
        example("rt.linear_recurrence(a, b, -2, True)", a=(2, 5, 2), b=(2,), f32=True),
        example("rt.linear_recurrence(np.array([2.0, 0.0, -1.5, 0.0]), b, initial=1.0)", b=(4,)),
    ],
    complex=True,
)
def linear_recurrence(ans, a, b, axis=None, reverse=False, initial=0.0):
    """Linear in ``b`` (the transpose runs the other way); in ``a``, ``dt[i + 1] = da[i] t[i]
    + a[i] dt[i]`` is the same recurrence with ``b = da * t``."""

    def jvp_a(d):
        return rt.linear_recurrence(a, d * ans, axis, reverse)

    def jvp_b(d):
        return rt.linear_recurrence(a, d, axis, reverse)

    def vjp_a(c):
        return rt.linear_recurrence(a, c, axis, False if reverse else True) * ans

    def vjp_b(c):
        return rt.unbroadcast(rt.linear_recurrence(a, c, axis, False if reverse else True), b)


if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1

    @rule(
        np.cumulative_sum,
        examples=[
            example("np.cumulative_sum(a)", a=(5,), f32=True),
            example("np.cumulative_sum(a, axis=1, include_initial=True)", a=(3, 4)),
            example("np.cumulative_sum(a, axis=-1)", a=(2, 3, 2)),
        ],
        complex=True,
    )
    def cumulative_sum(x, *, axis=None, include_initial=False):
        def jvp(dx):
            return np.cumulative_sum(dx, axis=axis, include_initial=include_initial)

        def vjp(g):
            return rt.cumsum_vjp(g, x, axis=axis, include_initial=include_initial)

    @rule(
        np.cumulative_prod,
        examples=[
            example("np.cumulative_prod(a)", a=(5,), f32=True),
            example("np.cumulative_prod(a, axis=0, include_initial=True)", a=(3, 4)),
            example("np.cumulative_prod(a, axis=-1)", a=(2, 3, 2)),
        ],
        complex=True,
    )
    def cumulative_prod(x, *, axis=None, include_initial=False):
        def jvp(dx):
            return rt.cumprod_jvp(dx, x, axis=axis, include_initial=include_initial)

        def vjp(g):
            return rt.cumprod_vjp(g, x, axis=axis, include_initial=include_initial)


# -- NaN-ignoring reductions: NaN entries get a zero derivative --------------------------------
@rule(
    np.nansum,
    examples=[
        example("np.nansum(a)", a=(5,), f32=True),
        example("np.nansum(a, axis=0)", a=(3, 4)),
        example("np.nansum(a, axis=(0, 2), keepdims=True)", a=(2, 3, 4)),
    ],
    complex=True,
)
def nansum(a, axis=None, *, keepdims=False):
    def jvp(da):
        return np.sum(np.where(np.isnan(a), 0.0, da), axis=axis, keepdims=keepdims)

    def vjp(g):
        return np.where(np.isnan(a), 0.0, rt.unreduce(g, a, axis=axis, keepdims=keepdims))


@rule(
    np.nanmean,
    examples=[
        example("np.nanmean(a)", a=(5,), f32=True),
        example("np.nanmean(a, axis=-1)", a=(3, 4)),
        example("np.nanmean(a, axis=(0, 1), keepdims=True)", a=(2, 3, 4)),
    ],
    complex=True,
)
def nanmean(a, axis=None, *, keepdims=False):
    """The mean of the tangents over the entries that are not NaN."""

    def jvp(da):
        return np.sum(np.where(np.isnan(a), 0.0, da), axis=axis, keepdims=keepdims) / np.sum(
            np.where(np.isnan(a), 0.0, np.ones_like(a)), axis=axis, keepdims=keepdims
        )

    def vjp(g):
        return np.where(
            np.isnan(a),
            0.0,
            rt.unreduce(
                g
                / np.sum(np.where(np.isnan(a), 0.0, np.ones_like(a)), axis=axis, keepdims=keepdims),
                a,
                axis=axis,
                keepdims=keepdims,
            ),
        )


@rule(
    np.nanvar,
    examples=[
        example("np.nanvar(a)", a=(5,), f32=True),
        example("np.nanvar(a, axis=0, ddof=1)", a=(4, 3)),
        example("np.nanvar(a, axis=-1, keepdims=True)", a=(2, 3, 4)),
    ],
)
def nanvar(a, axis=None, *, ddof=0, keepdims=False):
    def jvp(da):
        return (
            2.0
            * np.sum(
                np.where(np.isnan(a), 0.0, (a - np.nanmean(a, axis=axis, keepdims=True)) * da),
                axis=axis,
                keepdims=keepdims,
            )
            / (
                np.sum(np.where(np.isnan(a), 0.0, np.ones_like(a)), axis=axis, keepdims=keepdims)
                - ddof
            )
        )

    def vjp(g):
        return np.where(
            np.isnan(a),
            0.0,
            rt.unreduce(
                2.0
                * g
                / (
                    np.sum(
                        np.where(np.isnan(a), 0.0, np.ones_like(a)), axis=axis, keepdims=keepdims
                    )
                    - ddof
                ),
                a,
                axis=axis,
                keepdims=keepdims,
            )
            * (a - np.nanmean(a, axis=axis, keepdims=True)),
        )


@rule(
    np.nanstd,
    examples=[
        example("np.nanstd(a)", a=(5,), f32=True),
        example("np.nanstd(a, axis=1, ddof=1)", a=(3, 4)),
        example("np.nanstd(a, axis=(0, 2), keepdims=True)", a=(2, 3, 4)),
    ],
)
def nanstd(ans, a, axis=None, *, ddof=0, keepdims=False):
    """0 where the entries that are not NaN are all equal, like ``np.std``."""

    def jvp(da):
        return (
            (
                np.nanmax(a, axis=axis, keepdims=keepdims)
                != np.nanmin(a, axis=axis, keepdims=keepdims)
            )
            * np.sum(
                np.where(np.isnan(a), 0.0, (a - np.nanmean(a, axis=axis, keepdims=True)) * da),
                axis=axis,
                keepdims=keepdims,
            )
            / (
                (
                    np.sum(
                        np.where(np.isnan(a), 0.0, np.ones_like(a)), axis=axis, keepdims=keepdims
                    )
                    - ddof
                )
                * (ans + (ans == 0))
            )
        )

    def vjp(g):
        return np.where(
            np.isnan(a),
            0.0,
            rt.unreduce(
                (
                    np.nanmax(a, axis=axis, keepdims=keepdims)
                    != np.nanmin(a, axis=axis, keepdims=keepdims)
                )
                * g
                / (
                    (
                        np.sum(
                            np.where(np.isnan(a), 0.0, np.ones_like(a)),
                            axis=axis,
                            keepdims=keepdims,
                        )
                        - ddof
                    )
                    * (ans + (ans == 0))
                ),
                a,
                axis=axis,
                keepdims=keepdims,
            )
            * (a - np.nanmean(a, axis=axis, keepdims=True)),
        )


@rule(
    np.nanprod,
    examples=[
        example("np.nanprod(a)", a=(5,), f32=True),
        example("np.nanprod(a, axis=0)", a=(3, 4)),
        example("np.nanprod(a, axis=-1, keepdims=True)", a=(2, 3, 4)),
    ],
    complex=True,
)
def nanprod(ans, a, axis=None, *, keepdims=False):
    """The product with NaN entries read as 1, exact with zeros like ``np.prod``."""

    def jvp(da):
        return np.sum(
            np.where(
                np.isnan(a),
                0.0,
                rt.prod_vjp(
                    np.ones_like(ans),
                    np.where(np.isnan(a), 1.0, a),
                    axis=axis,
                    keepdims=keepdims,
                )
                * da,
            ),
            axis=axis,
            keepdims=keepdims,
        )

    def vjp(g):
        return np.where(
            np.isnan(a),
            0.0,
            rt.prod_vjp(g, np.where(np.isnan(a), 1.0, a), axis=axis, keepdims=keepdims),
        )


@rule(
    np.nanmax,
    np.nanmin,
    domain=DISTINCT,
    complex=True,
    examples=[
        example("np.nanmax(a)", a=(5,), f32=True),
        example("np.nanmin(a)", a=(5,), f32=True),
        example("np.nanmax(a, axis=0)", a=(3, 4)),
        example("np.nanmin(a, axis=-1, keepdims=True)", a=(2, 3, 4)),
    ],
)
def nanextremum(ans, a, axis=None, *, keepdims=False):
    """Ties split evenly, like ``np.max``; NaN entries get 0."""

    def jvp(da):
        return np.sum(
            np.where(
                np.isnan(a),
                0.0,
                rt.minmax_vjp(np.ones_like(ans), ans, a, axis=axis, keepdims=keepdims) * da,
            ),
            axis=axis,
            keepdims=keepdims,
        )

    def vjp(g):
        return np.where(np.isnan(a), 0.0, rt.minmax_vjp(g, ans, a, axis=axis, keepdims=keepdims))


@rule(
    np.nancumsum,
    examples=[
        example("np.nancumsum(a)", a=(5,), f32=True),
        example("np.nancumsum(a, axis=1)", a=(3, 4)),
    ],
    complex=True,
)
def nancumsum(a, axis=None):
    def jvp(da):
        return np.cumsum(np.where(np.isnan(a), 0.0, da), axis=axis)

    def vjp(g):
        return np.where(np.isnan(a), 0.0, rt.cumsum_vjp(g, a, axis=axis))


@rule(
    np.nancumprod,
    examples=[
        example("np.nancumprod(a)", a=(5,), f32=True),
        example("np.nancumprod(a, axis=0)", a=(3, 4)),
    ],
    complex=True,
)
def nancumprod(a, axis=None):
    def jvp(da):
        return rt.cumprod_jvp(
            np.where(np.isnan(a), 0.0, da), np.where(np.isnan(a), 1.0, a), axis=axis
        )

    def vjp(g):
        return np.where(
            np.isnan(a), 0.0, rt.cumprod_vjp(g, np.where(np.isnan(a), 1.0, a), axis=axis)
        )


# -- range, weighted average -------------------------------------------------------------------
@rule(
    np.ptp,
    domain=DISTINCT,
    examples=[
        example("np.ptp(a)", a=(5,), f32=True),
        example("np.ptp(a, axis=0)", a=(3, 4)),
        example("np.ptp(a, axis=(0, 2), keepdims=True)", a=(2, 3, 4)),
    ],
    complex=True,
)
def ptp(a, axis=None, *, keepdims=False):
    """``max - min``, each with the ties rule of ``np.max`` (a constant slice gets 0)."""

    def jvp(da):
        return np.sum(
            (
                rt.minmax_vjp(
                    1.0, np.max(a, axis=axis, keepdims=keepdims), a, axis=axis, keepdims=keepdims
                )
                - rt.minmax_vjp(
                    1.0, np.min(a, axis=axis, keepdims=keepdims), a, axis=axis, keepdims=keepdims
                )
            )
            * da,
            axis=axis,
            keepdims=keepdims,
        )

    def vjp(g):
        return rt.minmax_vjp(
            g, np.max(a, axis=axis, keepdims=keepdims), a, axis=axis, keepdims=keepdims
        ) - rt.minmax_vjp(
            g, np.min(a, axis=axis, keepdims=keepdims), a, axis=axis, keepdims=keepdims
        )


@rule(
    np.average,
    examples=[
        example("np.average(a)", a=(5,), f32=True),
        example("np.average(a, axis=0)", a=(3, 4)),
        example("np.average(a, weights=w)", a=(5,), w=Arg((5,), POSITIVE), f32=True),
        example("np.average(a, axis=1, weights=w)", a=(3, 4), w=Arg((4,), POSITIVE)),
        example("np.average(a, axis=0, weights=w)", a=(3, 4), w=Arg((3, 4), POSITIVE)),
        example(
            "np.average(a, axis=-1, weights=w, keepdims=True)", a=(2, 3, 4), w=Arg((4,), POSITIVE)
        ),
    ],
    complex=True,
)
def average(ans, a, axis=None, weights=None, *, keepdims=False):
    """Σ w a / Σ w over ``axis``; 1-d weights lie along ``axis``. ``returned=True`` (a tuple)
    is not supported: the call is refused."""

    def jvp_a(da):
        return (
            np.mean(da, axis=axis, keepdims=keepdims)
            if weights is None
            else np.sum(rt.average_weights(weights, a, axis) * da, axis=axis, keepdims=keepdims)
            / np.sum(rt.average_weights(weights, a, axis), axis=axis, keepdims=keepdims)
        )

    def jvp_weights(dw):
        return np.sum(
            rt.average_weights(dw, a, axis)
            * (a - rt.unreduce(ans, a, axis=axis, keepdims=keepdims)),
            axis=axis,
            keepdims=keepdims,
        ) / np.sum(rt.average_weights(weights, a, axis), axis=axis, keepdims=keepdims)

    def vjp_a(g):
        return (
            rt.mean_vjp(g, a, axis=axis, keepdims=keepdims)
            if weights is None
            else rt.unreduce(
                g / np.sum(rt.average_weights(weights, a, axis), axis=axis, keepdims=keepdims),
                a,
                axis=axis,
                keepdims=keepdims,
            )
            * rt.average_weights(weights, a, axis)
        )

    def vjp_weights(g):
        return rt.average_weights_vjp(
            rt.unreduce(
                g / np.sum(rt.average_weights(weights, a, axis), axis=axis, keepdims=keepdims),
                a,
                axis=axis,
                keepdims=keepdims,
            )
            * (a - rt.unreduce(ans, a, axis=axis, keepdims=keepdims)),
            weights,
            a,
            axis,
        )


@rule(
    rt.average_weights,
    examples=[
        example("rt.average_weights(w, a)", w=(5,), a=(5,), f32=True),
        example("rt.average_weights(w, a, 1)", w=(4,), a=(3, 4)),
        example("rt.average_weights(w, a, 0)", w=(3, 4), a=(3, 4)),
        example("rt.average_weights(w, a, -1)", w=(4,), a=(2, 3, 4)),
    ],
    complex=True,
)
def average_weights(ans, w, a, axis=None):
    """Linear in ``w`` (a broadcast): the transpose sums back, ``rt.average_weights_vjp``;
    ``a`` only gives the shape."""

    def jvp_w(d):
        return rt.average_weights(d, a, axis)

    def jvp_a(d):
        return rt.zeros_like(ans)

    def vjp_w(c):
        return rt.average_weights_vjp(c, w, a, axis)

    def vjp_a(c):
        return rt.zeros_like(a)


@rule(
    rt.average_weights_vjp,
    examples=[
        example("rt.average_weights_vjp(g, w, a)", g=(5,), w=(5,), a=(5,), f32=True),
        example("rt.average_weights_vjp(g, w, a, 1)", g=(3, 4), w=(4,), a=(3, 4)),
        example("rt.average_weights_vjp(g, w, a, 0)", g=(3, 4), w=(3, 4), a=(3, 4)),
        example("rt.average_weights_vjp(g, w, a, -1)", g=(2, 3, 4), w=(4,), a=(2, 3, 4)),
    ],
    complex=True,
)
def average_weights_vjp(ans, g, w, a, axis=None):
    """Linear in ``g``: the transpose broadcasts again (``rt.average_weights``); ``w`` and
    ``a`` only give the shapes."""

    def jvp_g(d):
        return rt.average_weights_vjp(d, w, a, axis)

    def jvp_w(d):
        return rt.zeros_like(ans)

    def jvp_a(d):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(rt.average_weights(c, a, axis), g)

    def vjp_w(c):
        return rt.zeros_like(w)

    def vjp_a(c):
        return rt.zeros_like(a)


# -- order statistics: medians, quantiles, sorting ---------------------------------------------
@rule(
    np.median,
    domain=DISTINCT,
    examples=[
        example("np.median(a)", a=(5,), f32=True),
        example("np.median(a)", a=(6,)),
        example("np.median(a, axis=0)", a=(4, 3)),
        example("np.median(a, axis=(0, 2), keepdims=True)", a=(2, 3, 3), f32=True),
    ],
    complex=True,
)
def median(a, axis=None, *, keepdims=False):
    def jvp(da):
        return rt.quantile_jvp(da, a, 0.5, axis=axis, keepdims=keepdims)

    def vjp(g):
        return rt.quantile_vjp(g, a, 0.5, axis=axis, keepdims=keepdims)


@rule(
    np.nanmedian,
    domain=DISTINCT,
    examples=[
        example("np.nanmedian(a)", a=(5,), f32=True),
        example("np.nanmedian(a, axis=-1)", a=(3, 4)),
    ],
    complex=True,
)
def nanmedian(a, axis=None, *, keepdims=False):
    def jvp(da):
        return rt.quantile_jvp(da, a, 0.5, axis=axis, keepdims=keepdims, ignore_nan=True)

    def vjp(g):
        return rt.quantile_vjp(g, a, 0.5, axis=axis, keepdims=keepdims, ignore_nan=True)


@rule(
    np.quantile,
    domain=DISTINCT,
    examples=[
        example("np.quantile(a, 0.3)", a=(6,), f32=True),
        example("np.quantile(a, [0.1, 0.5, 1.0], axis=0)", a=(5, 3)),
        example("np.quantile(a, 0.75, axis=-1, keepdims=True)", a=(2, 3, 4), f32=True),
        example("np.quantile(a, [[0.0, 0.2], [0.6, 0.9]], axis=(0, 1))", a=(3, 3, 2)),
    ],
)
def quantile(a, q, axis=None, *, keepdims=False):
    """Default (linear) method only; ``q`` is not differentiated."""

    def jvp(da):
        return rt.quantile_jvp(da, a, q, axis=axis, keepdims=keepdims)

    def vjp(g):
        return rt.quantile_vjp(g, a, q, axis=axis, keepdims=keepdims)


@rule(
    np.percentile,
    domain=DISTINCT,
    examples=[
        example("np.percentile(a, 30)", a=(6,), f32=True),
        example("np.percentile(a, [10, 90], axis=1)", a=(3, 5)),
    ],
)
def percentile(a, q, axis=None, *, keepdims=False):
    def jvp(da):
        return rt.quantile_jvp(da, a, np.true_divide(q, 100), axis=axis, keepdims=keepdims)

    def vjp(g):
        return rt.quantile_vjp(g, a, np.true_divide(q, 100), axis=axis, keepdims=keepdims)


@rule(
    np.nanquantile,
    domain=DISTINCT,
    examples=[
        example("np.nanquantile(a, 0.3)", a=(6,), f32=True),
        example("np.nanquantile(a, [0.2, 0.7], axis=0)", a=(4, 3)),
    ],
)
def nanquantile(a, q, axis=None, *, keepdims=False):
    def jvp(da):
        return rt.quantile_jvp(da, a, q, axis=axis, keepdims=keepdims, ignore_nan=True)

    def vjp(g):
        return rt.quantile_vjp(g, a, q, axis=axis, keepdims=keepdims, ignore_nan=True)


@rule(
    np.nanpercentile,
    domain=DISTINCT,
    examples=[example("np.nanpercentile(a, [25, 50], axis=-1)", a=(3, 4), f32=True)],
)
def nanpercentile(a, q, axis=None, *, keepdims=False):
    def jvp(da):
        return rt.quantile_jvp(
            da, a, np.true_divide(q, 100), axis=axis, keepdims=keepdims, ignore_nan=True
        )

    def vjp(g):
        return rt.quantile_vjp(
            g, a, np.true_divide(q, 100), axis=axis, keepdims=keepdims, ignore_nan=True
        )


# The helpers of the quantiles: sums of the order statistics with weights (``1 - t`` and
# ``t`` around the virtual index, shared evenly by ties) that are piecewise constant in the
# data, so linear in the tangent / cotangent and of derivative 0 in ``x``, like ``np.sign``
# (``q`` is not differentiated, as in ``np.quantile``).
# (the arguments after the data, the data's shape, the result's shape, float32 too)
_QUANTILE_HELPER_EXAMPLES: list[tuple[str, tuple[int, ...], tuple[int, ...], bool]] = [
    ("0.3", (6,), (), True),
    ("0.5", (6,), (), False),
    ("[0.1, 0.5, 1.0], axis=0", (5, 3), (3, 3), False),
    ("0.75, axis=-1, keepdims=True", (2, 3, 4), (2, 3, 1), False),
    ("[[0.0, 0.2], [0.6, 0.9]], axis=(0, 1)", (3, 3, 2), (2, 2, 2), False),
    ("0.5, axis=(0, 2), keepdims=True", (2, 3, 3), (1, 3, 1), False),
    ("[0.2, 0.7], axis=-1, ignore_nan=True", (3, 4), (2, 3), False),
]


@rule(
    rt.quantile_jvp,
    examples=[
        example(f"rt.quantile_jvp(d, x, {rest})", d=x, x=Arg(x, DISTINCT), f32=f32)
        for rest, x, _, f32 in _QUANTILE_HELPER_EXAMPLES
    ],
    complex=True,
)
def quantile_jvp(ans, dx, x, q, axis=None, keepdims=False, ignore_nan=False):
    """Linear in ``dx``: the transpose is :func:`rt.quantile_vjp`."""

    def jvp_dx(d):
        return rt.quantile_jvp(d, x, q, axis=axis, keepdims=keepdims, ignore_nan=ignore_nan)

    def jvp_x(d):
        return rt.zeros_like(ans)

    def vjp_dx(c):
        return rt.rebroadcast(
            rt.quantile_vjp(c, x, q, axis=axis, keepdims=keepdims, ignore_nan=ignore_nan), dx
        )

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    rt.quantile_vjp,
    examples=[
        example(f"rt.quantile_vjp(g, x, {rest})", g=g, x=Arg(x, DISTINCT), f32=f32)
        for rest, x, g, f32 in _QUANTILE_HELPER_EXAMPLES
    ],
    complex=True,
)
def quantile_vjp(ans, g, x, q, axis=None, keepdims=False, ignore_nan=False):
    """Linear in ``g``: the transpose is :func:`rt.quantile_jvp`."""

    def jvp_g(dg):
        return rt.quantile_vjp(dg, x, q, axis=axis, keepdims=keepdims, ignore_nan=ignore_nan)

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(
            rt.quantile_jvp(c, x, q, axis=axis, keepdims=keepdims, ignore_nan=ignore_nan), g
        )

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    np.sort,
    domain=DISTINCT,
    examples=[
        example("np.sort(a)", a=(5,), f32=True),
        example("np.sort(a, axis=0)", a=(4, 3)),
        example("np.sort(a, axis=None)", a=(3, 2)),
        example("np.sort(a, axis=-2)", a=(2, 3, 4), f32=True),
    ],
    complex=True,
)
def sort(a, axis=-1, kind=None, *, stable=None):
    """A permutation of ``a``; tied entries share the average of their derivatives."""

    def jvp(da):
        return rt.sort_jvp(da, a, axis)

    def vjp(g):
        return rt.sort_vjp(g, a, axis)


# The helpers of the sort: a permutation followed by the average over runs of ties (a
# symmetric projection), so ``rt.sort_vjp`` is the transpose of ``rt.sort_jvp``; the
# permutation and the ties are piecewise constant in ``x`` (derivative 0).
@rule(
    rt.sort_jvp,
    examples=[
        example("rt.sort_jvp(d, x)", d=(5,), x=Arg((5,), DISTINCT), f32=True),
        example("rt.sort_jvp(d, x, 0)", d=(4, 3), x=Arg((4, 3), DISTINCT)),
        example("rt.sort_jvp(d, x, None)", d=(3, 2), x=Arg((3, 2), DISTINCT)),
        example("rt.sort_jvp(d, x, -2)", d=(2, 3, 4), x=Arg((2, 3, 4), DISTINCT)),
    ],
    complex=True,
)
def sort_jvp(ans, dx, x, axis=-1):
    """Linear in ``dx``: the transpose is :func:`rt.sort_vjp`."""

    def jvp_dx(d):
        return rt.sort_jvp(d, x, axis)

    def jvp_x(d):
        return rt.zeros_like(ans)

    def vjp_dx(c):
        return rt.rebroadcast(rt.sort_vjp(c, x, axis), dx)

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    rt.sort_vjp,
    examples=[
        example("rt.sort_vjp(g, x)", g=(5,), x=Arg((5,), DISTINCT), f32=True),
        example("rt.sort_vjp(g, x, 0)", g=(4, 3), x=Arg((4, 3), DISTINCT)),
        example("rt.sort_vjp(g, x, None)", g=(6,), x=Arg((3, 2), DISTINCT)),
        example("rt.sort_vjp(g, x, -2)", g=(2, 3, 4), x=Arg((2, 3, 4), DISTINCT)),
    ],
    complex=True,
)
def sort_vjp(ans, g, x, axis=-1):
    """Linear in ``g``: the transpose is :func:`rt.sort_jvp`."""

    def jvp_g(dg):
        return rt.sort_vjp(dg, x, axis)

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(rt.sort_jvp(c, x, axis), g)

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    np.partition,
    domain=DISTINCT,
    examples=[
        example("np.partition(a, 2)", a=(5,), f32=True),
        example("np.partition(a, (1, 3), axis=0)", a=(5, 3)),
        example("np.partition(a, -1, axis=None)", a=(3, 4)),
        example("np.partition(a, [0, 2], axis=-2)", a=(2, 3, 4), f32=True),
        example("np.partition(a, (1, 4))[1:5].mean()", a=(6,)),
    ],
    complex=True,
)
def partition(a, kth, axis=-1, kind="introselect"):
    """A permutation of ``a`` chosen by its values (``kth``, an int or a sequence, only
    chooses it); tied entries share the average of their derivatives, as for ``np.sort``."""

    def jvp(da):
        return rt.partition_jvp(da, a, kth, axis)

    def vjp(g):
        return rt.partition_vjp(g, a, kth, axis)


# The helpers of the partition: the sort's, with the sorted entries put where the partition
# puts them (a permutation), so ``rt.partition_vjp`` is the transpose of ``rt.partition_jvp``;
# the permutation and the ties are piecewise constant in ``x`` (derivative 0).
@rule(
    rt.partition_jvp,
    examples=[
        example("rt.partition_jvp(d, x, 2)", d=(5,), x=Arg((5,), DISTINCT), f32=True),
        example("rt.partition_jvp(d, x, (1, 3), 0)", d=(5, 3), x=Arg((5, 3), DISTINCT)),
        example("rt.partition_jvp(d, x, -1, None)", d=(3, 4), x=Arg((3, 4), DISTINCT)),
    ],
    complex=True,
)
def partition_jvp(ans, dx, x, kth, axis=-1):
    """Linear in ``dx``: the transpose is :func:`rt.partition_vjp`."""

    def jvp_dx(d):
        return rt.partition_jvp(d, x, kth, axis)

    def jvp_x(d):
        return rt.zeros_like(ans)

    def vjp_dx(c):
        return rt.rebroadcast(rt.partition_vjp(c, x, kth, axis), dx)

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    rt.partition_vjp,
    examples=[
        example("rt.partition_vjp(g, x, 2)", g=(5,), x=Arg((5,), DISTINCT), f32=True),
        example("rt.partition_vjp(g, x, (1, 3), 0)", g=(5, 3), x=Arg((5, 3), DISTINCT)),
        example("rt.partition_vjp(g, x, -1, None)", g=(12,), x=Arg((3, 4), DISTINCT)),
    ],
    complex=True,
)
def partition_vjp(ans, g, x, kth, axis=-1):
    """Linear in ``g``: the transpose is :func:`rt.partition_jvp`."""

    def jvp_g(dg):
        return rt.partition_vjp(dg, x, kth, axis)

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(rt.partition_jvp(c, x, kth, axis), g)

    def vjp_x(c):
        return rt.zeros_like(x)


# -- differences, integration, covariance, convolution -----------------------------------------
@rule(
    np.diff,
    examples=[
        example("np.diff(a)", a=(5,), f32=True),
        example("np.diff(a, n=2, axis=0)", a=(5, 3)),
        example("np.diff(a, 3)", a=(2, 6)),
        example("np.diff(a, axis=1, prepend=0.0, append=1.0)", a=(2, 3, 2), f32=True),
        example("np.diff(a, n=2, prepend=[[1.0], [2.0]])", a=(2, 4)),
    ],
    complex=True,
)
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """Linear; constant ``prepend`` / ``append`` values (not differentiated)."""

    def jvp(da):
        if prepend is None and append is None:
            return np.diff(da, n=n, axis=axis)
        return rt.diff_jvp(da, a, n=n, axis=axis, prepend=prepend, append=append)

    def vjp(g):
        return rt.diff_vjp(g, a, n=n, axis=axis, prepend=prepend, append=append)


@rule(
    rt.diff_jvp,
    examples=[
        example("rt.diff_jvp(d, a, axis=1, prepend=0.0, append=1.0)", d=(2, 3, 2), a=(2, 3, 2)),
        example("rt.diff_jvp(d, a, n=2, prepend=[[1.0], [2.0]])", d=(2, 4), a=(2, 4), f32=True),
        example("rt.diff_jvp(d, a, 2, 0)", d=(5, 3), a=(5, 3)),
    ],
    complex=True,
)
def diff_jvp(ans, dx, x, n=1, axis=-1, prepend=None, append=None):
    """Linear in ``dx`` (constant ``prepend`` / ``append``): the transpose is
    ``rt.diff_vjp``; ``x`` only gives the shape."""

    def jvp_dx(d):
        return rt.diff_jvp(d, x, n=n, axis=axis, prepend=prepend, append=append)

    def jvp_x(d):
        return rt.zeros_like(ans)

    def vjp_dx(c):
        return rt.rebroadcast(rt.diff_vjp(c, x, n=n, axis=axis, prepend=prepend, append=append), dx)

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    rt.diff_vjp,
    examples=[
        example("rt.diff_vjp(g, a)", g=(4,), a=(5,), f32=True),
        example("rt.diff_vjp(g, a, n=2, axis=0)", g=(3, 3), a=(5, 3)),
        example("rt.diff_vjp(g, a, 3)", g=(2, 3), a=(2, 6)),
        example("rt.diff_vjp(g, a, axis=1, prepend=0.0, append=1.0)", g=(2, 4, 2), a=(2, 3, 2)),
        example("rt.diff_vjp(g, a, n=2, prepend=[[1.0], [2.0]])", g=(2, 3), a=(2, 4)),
    ],
    complex=True,
)
def diff_vjp(ans, g, x, n=1, axis=-1, prepend=None, append=None):
    """Linear in ``g``: the transpose is the difference itself (``prepend`` / ``append`` read
    as zeros); ``x`` only gives the shape."""

    def jvp_g(d):
        return rt.diff_vjp(d, x, n=n, axis=axis, prepend=prepend, append=append)

    def jvp_x(d):
        return rt.zeros_like(ans)

    def vjp_g(c):
        if prepend is None and append is None:
            return rt.rebroadcast(np.diff(c, n=n, axis=axis), g)
        return rt.rebroadcast(rt.diff_jvp(c, x, n=n, axis=axis, prepend=prepend, append=append), g)

    def vjp_x(c):
        return rt.zeros_like(x)


# np.gradient: central differences inside, one-sided ones (edge_order 1 or 2) at the ends,
# along each axis it is asked for. Its number of results is counted when the code is written
# (see _gradient_outputs), so the spacings are the rule's parameters spacing0..spacing3, not
# *varargs:
# a spacing passed as a variable is then told from one not passed at all.
def _gradient_outputs(static):
    """How many arrays np.gradient returns: one per axis of ``axis``; without ``axis``, one
    per spacing when several are given, else one -- ``f`` must then be 1-d, which
    ``rt.gradients`` and ``rt.gradient_vjp`` check when the derivative runs (the number of
    axes of ``f`` is not known here)."""
    axis = static["axis"]
    if axis is not None:
        return len(axis) if isinstance(axis, (tuple, list)) else 1
    spacings = ("spacing0", "spacing1", "spacing2", "spacing3")
    given = sum(1 for s in spacings if s not in static or static[s] is not None)
    return max(given, 1)


def _gradient_counted_for(static):
    """Without ``axis`` and with at most one spacing, one result is counted: ``f`` must be
    1-d (its number of axes is not known when the code is written)."""
    if "axis" not in static or static["axis"] is not None or _gradient_outputs(static) != 1:
        return None
    return (
        "f",
        1,
        "np.gradient(f) without axis= of an f with more than one axis: adgen counts its "
        "results when it writes the code, and counts one here",
        "pass axis=(0, 1, ...), one axis per result, or one spacing per axis",
    )


_GRADIENT_EXAMPLES = [
    example("np.gradient(f)", f=(5,), f32=True),
    example("np.gradient(f, 0.5, edge_order=2)", f=(6,)),
    example("np.gradient(f, np.array([0.0, 0.4, 1.1, 1.5, 2.6]))", f=(5,), f32=True),
    example("np.gradient(f, np.array([0.0, 0.4, 1.1, 1.5, 2.6]), edge_order=2)", f=(5,)),
    example("np.gradient(f, axis=0)", f=(4, 3)),
    example("np.gradient(f, 2.0, axis=-1, edge_order=2)", f=(2, 3, 4), f32=True),
    example("np.gradient(f, 0.5, 2.0)[1] * np.gradient(f, 0.5, 2.0)[0]", f=(3, 4)),
    example("np.gradient(f, axis=(1, 0), edge_order=2)[0] ** 2", f=(3, 4)),
    example(
        "np.gradient(f, np.array([0.0, 1.0, 1.5]), np.array([0.0, 0.2, 0.5, 1.3]), "
        "edge_order=2)[1]",
        f=(3, 4),
    ),
    example("np.gradient(f, 1.0, 0.5, np.array([0.0, 0.3, 1.0]))[2]", f=(2, 2, 3)),
    example("np.gradient(f, 0.5, axis=(0, 2))[1]", f=(3, 2, 4), f32=True),
]


@rule(
    np.gradient,
    outputs=_gradient_outputs,
    counted_for=_gradient_counted_for,
    examples=_GRADIENT_EXAMPLES,
)
def gradient(
    f, spacing0=None, spacing1=None, spacing2=None, spacing3=None, *, axis=None, edge_order=1
):
    """Linear in ``f``: its tangent is np.gradient of the tangent; its cotangent sums the
    transposes of the differences along each axis (``rt.gradient_vjp``). The spacings --
    numbers or coordinates, at most four -- are not differentiated (a derivative reaching
    one is refused). Without ``axis`` and with at most one spacing, ``f`` must be 1-d (or
    pass ``axis=``, or a spacing per axis: then the number of results is known)."""

    def jvp(d):
        return rt.gradients(
            d, spacing0, spacing1, spacing2, spacing3, axis=axis, edge_order=edge_order
        )

    def vjp(g):  # (g: the tuple of the results' cotangents)
        return rt.gradient_vjp(
            g, spacing0, spacing1, spacing2, spacing3, axis=axis, edge_order=edge_order
        )


# rt.gradients is np.gradient with its results always a tuple (the tangent of np.gradient):
# the same rule, linear in f
rule(
    rt.gradients,
    outputs=_gradient_outputs,
    counted_for=_gradient_counted_for,
    result_list=True,
    examples=[
        example("rt.gradients(f)[0]", f=(5,), f32=True),
        example("rt.gradients(f, 0.5, axis=-1, edge_order=2)[0]", f=(2, 4)),
        example("rt.gradients(f, np.array([0.0, 1.0, 1.5]), 2.0)[0]", f=(3, 2)),
        example("rt.gradients(f, axis=(0, 1))[1] ** 2", f=(3, 3), f32=True),
    ],
)(gradient)


@sequence_rule(
    rt.gradient_vjp,
    sequence="gs",
    examples=[
        example("rt.gradient_vjp((g,))", g=(5,), f32=True),
        example("rt.gradient_vjp((g,), 0.5, edge_order=2)", g=(6,)),
        example("rt.gradient_vjp((g, h), np.array([0.0, 1.0, 1.5]), 2.0)", g=(3, 2), h=(3, 2)),
        example("rt.gradient_vjp((g, h), axis=(1, 0), edge_order=2)", g=(3, 4), h=(3, 4)),
    ],
)
def gradient_vjp(
    gs, spacing0=None, spacing1=None, spacing2=None, spacing3=None, *, axis=None, edge_order=1
):
    """Linear in the cotangents ``gs``: the transpose is np.gradient (``rt.gradients``)."""

    def jvp(parts):
        return rt.gradient_vjp(
            parts, spacing0, spacing1, spacing2, spacing3, axis=axis, edge_order=edge_order
        )

    def vjp(g, k):
        return rt.gradients(
            g, spacing0, spacing1, spacing2, spacing3, axis=axis, edge_order=edge_order
        )[k]


@rule(
    np.ediff1d,
    examples=[
        example("np.ediff1d(a)", a=(5,), f32=True),
        example("np.ediff1d(a)", a=(2, 3)),
        example("np.ediff1d(a, to_end=[1.0, 2.0], to_begin=-1.0)", a=(4,), f32=True),
    ],
    complex=True,
)
def ediff1d(ary, to_end=None, to_begin=None):
    def jvp(da):
        return np.ediff1d(
            da,
            to_end=None if to_end is None else np.zeros_like(to_end),
            to_begin=None if to_begin is None else np.zeros_like(to_begin),
        )

    def vjp(g):
        start = 0 if to_begin is None else np.size(to_begin)
        return np.reshape(
            rt.diff_vjp(g[start : start + math.prod(np.shape(ary)) - 1], np.ravel(ary)),
            np.shape(ary),
        )


def _trapezoid_rule(y, x=None, dx=1.0, axis=-1):
    """Linear in ``y`` and in the sample points ``x``; ``dx`` is not differentiated."""

    def jvp_y(d):
        return np.trapezoid(d, dx=dx, axis=axis) if x is None else np.trapezoid(d, x, axis=axis)

    def jvp_x(d):
        return np.trapezoid(y, d, axis=axis)

    def vjp_y(g):
        return rt.trapezoid_vjp_y(g, y, x, dx, axis)

    def vjp_x(g):
        return rt.trapezoid_vjp_x(g, y, x, axis=axis)


if hasattr(np, "trapezoid"):  # NumPy >= 2.0
    rule(
        np.trapezoid,
        examples=[
            example("np.trapezoid(y)", y=(5,), f32=True),
            example("np.trapezoid(y, dx=0.5, axis=0)", y=(4, 3)),
            example("np.trapezoid(y, x)", y=(5,), x=Arg((5,), DISTINCT), f32=True),
            example("np.trapezoid(y, x, axis=0)", y=(4, 3), x=Arg((4,), DISTINCT)),
            example("np.trapezoid(y, x, axis=-1)", y=(2, 3, 4), x=(2, 3, 4)),
        ],
    )(_trapezoid_rule)

if hasattr(np, "trapz"):  # NumPy < 2.4 (deprecated since 2.0): the same rule

    def _trapz_rule(y, x=None, dx=1.0, axis=-1):
        def jvp_y(d):
            return np.trapz(d, dx=dx, axis=axis) if x is None else np.trapz(d, x, axis=axis)

        def jvp_x(d):
            return np.trapz(y, d, axis=axis)

        def vjp_y(g):
            return rt.trapezoid_vjp_y(g, y, x, dx, axis)

        def vjp_x(g):
            return rt.trapezoid_vjp_x(g, y, x, axis=axis)

    rule(
        np.trapz,
        examples=[
            example("np.trapz(y)", y=(5,)),
            example("np.trapz(y, x, axis=0)", y=(4, 3), x=Arg((4,), DISTINCT)),
        ],
    )(_trapz_rule)


if hasattr(np, "trapezoid"):  # NumPy >= 2.0 (before, these helpers keep no rule: refused)
    # trapezoid(y, x) = sum(w(x) y) over the axis, w(x) half the spacings around each sample:
    # linear in y and in x. rt.trapezoid_vjp_y(g, y, x) = g w(x) is linear in g and in x;
    # rt.trapezoid_vjp_x(g, y, x) is linear in g and in y, and x only gives its shape.

    @rule(
        rt.trapezoid_vjp_y,
        examples=[
            example("rt.trapezoid_vjp_y(g, y)", g=(), y=(5,), f32=True),
            example("rt.trapezoid_vjp_y(g, y, None, 0.5, 0)", g=(3,), y=(4, 3)),
            example("rt.trapezoid_vjp_y(g, y, x)", g=(), y=(5,), x=(5,), f32=True),
            example("rt.trapezoid_vjp_y(g, y, x, axis=0)", g=(3,), y=(4, 3), x=(4,)),
            example("rt.trapezoid_vjp_y(g, y, x, axis=-1)", g=(2, 3), y=(2, 3, 4), x=(2, 3, 4)),
        ],
        complex=True,
    )
    def trapezoid_vjp_y(ans, g, y, x=None, dx=1.0, axis=-1):
        def jvp_g(d):
            return rt.trapezoid_vjp_y(d, y, x, dx, axis)

        def jvp_y(d):
            return rt.zeros_like(ans)

        def jvp_x(d):
            return rt.trapezoid_vjp_y(g, y, d, dx, axis)

        def vjp_g(c):  # np.trapezoid(c, x, dx, axis), as a sum: Dask has no np.trapezoid
            return rt.rebroadcast(
                np.sum(c * rt.trapezoid_vjp_y(np.ones_like(g), c, x, dx, axis), axis=axis), g
            )

        def vjp_y(c):
            return rt.zeros_like(y)

        def vjp_x(c):
            return rt.trapezoid_vjp_x(g, c, x, axis=axis)

    @rule(
        rt.trapezoid_vjp_x,
        examples=[
            example("rt.trapezoid_vjp_x(g, y, x)", g=(), y=(5,), x=(5,), f32=True),
            example("rt.trapezoid_vjp_x(g, y, x, axis=0)", g=(3,), y=(4, 3), x=(4,)),
            example("rt.trapezoid_vjp_x(g, y, x, axis=-1)", g=(2, 3), y=(2, 3, 4), x=(2, 3, 4)),
        ],
        complex=True,
    )
    def trapezoid_vjp_x(ans, g, y, x, axis=-1):
        def jvp_g(d):
            return rt.trapezoid_vjp_x(d, y, x, axis=axis)

        def jvp_y(d):
            return rt.trapezoid_vjp_x(g, d, x, axis=axis)

        def jvp_x(d):
            return rt.zeros_like(ans)

        def vjp_g(c):  # np.trapezoid(y, c, axis=axis), as a sum: Dask has no np.trapezoid
            return rt.rebroadcast(
                np.sum(y * rt.trapezoid_vjp_y(np.ones_like(g), y, c, 1.0, axis), axis=axis), g
            )

        def vjp_y(c):
            return rt.trapezoid_vjp_y(g, y, c, 1.0, axis)

        def vjp_x(c):
            return rt.zeros_like(x)


@rule(
    np.cov,
    examples=[
        example("np.cov(m)", m=(3, 6), f32=True),
        example("np.cov(m, rowvar=False)", m=(6, 2)),
        example("np.cov(m)", m=(5,)),
        example("np.cov(m, y, bias=True)", m=(5,), y=(5,)),
        example("np.cov(m, y, ddof=2)", m=(2, 5), y=(5,), f32=True),
    ],
)
def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    """Unweighted only (``fweights`` / ``aweights`` / ``dtype`` calls are refused)."""

    def jvp_m(d):
        return rt.cov_jvp(d, 0, m, y, rowvar, bias, ddof)

    def jvp_y(d):
        return rt.cov_jvp(d, 1, m, y, rowvar, bias, ddof)

    def vjp_m(g):
        return rt.cov_vjp(g, 0, m, y, rowvar, bias, ddof)

    def vjp_y(g):
        return rt.cov_vjp(g, 1, m, y, rowvar, bias, ddof)


# The helpers of the covariance. With ``X`` the rows of ``m`` and ``y`` (``Xc`` centred) and
# ``D`` those of the tangent ``d`` (of ``m`` for ``which=0``, of ``y`` for ``which=1``),
# ``rt.cov_jvp`` is ``(D Xcᵀ + Xc Dᵀ) / f`` and ``rt.cov_vjp(g, which, ...)`` the part
# ``which`` of ``(G + Gᵀ) Xc / f``: each is its transpose in its first argument, and both are
# bilinear in that argument and the data (``m``, ``y``), so their derivatives in the data are
# the helpers themselves with the data's tangent in place of the data (the other part's data
# zero), and the transposes swap the roles of the first argument and the data. ``which`` is
# an integer; ``f`` (``N - ddof``) depends on the shapes only.
_COV_HELPER_EXAMPLES: list[tuple[str, dict[str, Any], Any, Any, bool]] = [
    ("0, m", dict(m=(3, 6)), (3, 6), (3, 3), True),
    ("0, m, None, False", dict(m=(6, 2)), (6, 2), (2, 2), False),
    ("0, m", dict(m=(5,)), (5,), (), False),
    ("1, m, y, True, True", dict(m=(5,), y=(5,)), (5,), (2, 2), False),
    ("0, m, y, ddof=2", dict(m=(2, 5), y=(5,)), (2, 5), (3, 3), True),
    ("1, m, y, ddof=2", dict(m=(2, 5), y=(5,)), (5,), (3, 3), False),
    ("1, m, y, False", dict(m=(6, 2), y=(6,)), (6,), (3, 3), False),
]


@rule(
    rt.cov_jvp,
    examples=[
        example(f"rt.cov_jvp(d, {call})", d=d, **data, f32=f32)
        for call, data, d, _, f32 in _COV_HELPER_EXAMPLES
    ],
)
def cov_jvp(ans, d, which, m, y=None, rowvar=True, bias=False, ddof=None):
    """Bilinear in ``d`` and the data; the transpose in ``d`` is :func:`rt.cov_vjp`."""

    def jvp_d(dd):
        return rt.cov_jvp(dd, which, m, y, rowvar, bias, ddof)

    def jvp_m(dm):
        return rt.cov_jvp(d, which, dm, None if y is None else rt.zeros_like(y), rowvar, bias, ddof)

    def jvp_y(dy):
        return rt.cov_jvp(d, which, rt.zeros_like(m), dy, rowvar, bias, ddof)

    def vjp_d(c):
        return rt.cov_vjp(c, which, m, y, rowvar, bias, ddof)

    def vjp_m(c):
        return rt.cov_vjp(
            c,
            0,
            d if which == 0 else rt.zeros_like(m),
            None if y is None else (rt.zeros_like(y) if which == 0 else d),
            rowvar,
            bias,
            ddof,
        )

    def vjp_y(c):
        return rt.cov_vjp(
            c,
            1,
            d if which == 0 else rt.zeros_like(m),
            rt.zeros_like(y) if which == 0 else d,
            rowvar,
            bias,
            ddof,
        )


@rule(
    rt.cov_vjp,
    examples=[
        example(f"rt.cov_vjp(g, {call})", g=g, **data, f32=f32)
        for call, data, _, g, f32 in _COV_HELPER_EXAMPLES
    ],
)
def cov_vjp(ans, g, which, m, y=None, rowvar=True, bias=False, ddof=None):
    """Bilinear in ``g`` and the data; the transpose in ``g`` is :func:`rt.cov_jvp`."""

    def jvp_g(dg):
        return rt.cov_vjp(dg, which, m, y, rowvar, bias, ddof)

    def jvp_m(dm):
        return rt.cov_vjp(g, which, dm, None if y is None else rt.zeros_like(y), rowvar, bias, ddof)

    def jvp_y(dy):
        return rt.cov_vjp(g, which, rt.zeros_like(m), dy, rowvar, bias, ddof)

    def vjp_g(c):
        return rt.rebroadcast(rt.cov_jvp(c, which, m, y, rowvar, bias, ddof), g)

    def vjp_m(c):
        return rt.cov_vjp(
            g,
            0,
            c if which == 0 else rt.zeros_like(m),
            None if y is None else (rt.zeros_like(y) if which == 0 else c),
            rowvar,
            bias,
            ddof,
        )

    def vjp_y(c):
        return rt.cov_vjp(
            g,
            1,
            c if which == 0 else rt.zeros_like(m),
            rt.zeros_like(y) if which == 0 else c,
            rowvar,
            bias,
            ddof,
        )


@rule(
    np.corrcoef,
    examples=[
        example("np.corrcoef(x)", x=(3, 6), f32=True),
        example("np.corrcoef(x, rowvar=False)", x=(6, 2)),
        example("np.corrcoef(x, y)", x=(5,), y=(5,), f32=True),
    ],
)
def corrcoef(x, y=None, rowvar=True):
    def jvp_x(d):
        return rt.corrcoef_jvp(d, 0, x, y, rowvar)

    def jvp_y(d):
        return rt.corrcoef_jvp(d, 1, x, y, rowvar)

    def vjp_x(g):
        return rt.corrcoef_vjp(g, 0, x, y, rowvar)

    def vjp_y(g):
        return rt.corrcoef_vjp(g, 1, x, y, rowvar)


# The helpers of the correlation. With ``C = np.cov(x, y, rowvar)``, ``v`` its diagonal,
# ``S = sqrt(v vᵀ)``, ``R = C / S`` and, for a matrix ``Q``, ``h(Q) = diag(Q) / (2 v)``, the
# tangent of ``R`` for a tangent ``T`` of the data is ``J_T = K(C'[T])`` with
# ``K(Q) = Q / S - R (h(Q)_i + h(Q)_j)`` (``rt.corrcoef_jvp``), and ``rt.corrcoef_vjp`` is
# ``C'ᵀ Kᵀ``, its transpose. Both are linear in their first argument and smooth, nonlinear
# in the data: their derivative in the data is the symmetric second derivative
#     R''[T, E] = K(C''[T, E]) - J_T (h_E,i + h_E,j) - J_E (h_T,i + h_T,j)
#                 + R (h_T,i - h_T,j) (h_E,i - h_E,j)
# with ``C'[E] = rt.cov_jvp(e, ...)``, ``C''[T, E] = rt.cov_jvp(t, ..., E's data)`` and
# ``h_T = h(C'[T])``. The transposes of ``E -> <Γ, R''[T, E]>`` are
#     rt.cov_vjp(Kᵀ(Γ), ..., T's data) + rt.cov_vjp(diag(w / (2 v)), ...)
#     - rt.corrcoef_vjp(Γ (h_T,i + h_T,j), ...)
# with ``Kᵀ(Γ) = Γ / S - diag(σ(Γ R) / (2 v))``, ``σ(A)`` the sums of ``A``'s columns plus
# those of its rows, ``w = rowsums(B) - colsums(B) - σ(Γ J_T)`` and ``B = Γ R (h_T,i - h_T,j)``.
# A single variable (``R`` a scalar: the helpers return 0) goes through the same formulas on
# 1x1 matrices, its variance read as ``v + 1`` (``single`` is 1: no 0 / 0 for constant data)
# and the result (linear in ``Γ``, or times ``1 - single``) exactly 0.
@rule(
    rt.corrcoef_jvp,
    examples=[
        example("rt.corrcoef_jvp(d, 0, x)", d=(3, 6), x=(3, 6), f32=True),
        example("rt.corrcoef_jvp(d, 0, x, None, False)", d=(6, 2), x=(6, 2)),
        example("rt.corrcoef_jvp(d, 0, x, y)", d=(5,), x=(5,), y=(5,), f32=True),
        example("rt.corrcoef_jvp(d, 1, x, y)", d=(5,), x=(2, 5), y=(5,)),
        example("rt.corrcoef_jvp(d, 0, x)", d=(5,), x=(5,)),
    ],
)
def corrcoef_jvp(ans, d, which, x, y=None, rowvar=True):
    """Linear in ``d`` (the transpose is :func:`rt.corrcoef_vjp`); the second derivative of
    the correlation in the data."""

    def jvp_d(dd):
        return rt.corrcoef_jvp(dd, which, x, y, rowvar)

    def jvp_x(e):
        cv = np.cov(x, y, rowvar)
        single = np.ndim(cv) == 0
        cx = np.atleast_2d(cv)
        vv = np.diagonal(cx) + single
        v2 = 2.0 * vv
        s = np.sqrt(np.outer(vv, vv))
        r = cx / s
        cde = np.atleast_2d(
            rt.cov_jvp(d, which, e, None if y is None else rt.zeros_like(y), rowvar)
        )
        hde = np.diagonal(cde) / v2
        hd = np.diagonal(np.atleast_2d(rt.cov_jvp(d, which, x, y, rowvar))) / v2
        he = np.diagonal(np.atleast_2d(rt.cov_jvp(e, 0, x, y, rowvar))) / v2
        jd = np.atleast_2d(rt.corrcoef_jvp(d, which, x, y, rowvar))
        je = np.atleast_2d(rt.corrcoef_jvp(e, 0, x, y, rowvar))
        out = (
            cde / s
            - r * (hde[:, None] + hde[None, :])
            - jd * (he[:, None] + he[None, :])
            - je * (hd[:, None] + hd[None, :])
            + r * (hd[:, None] - hd[None, :]) * (he[:, None] - he[None, :])
        )
        return np.reshape(out * (1.0 - single), np.shape(ans))

    def jvp_y(e):
        cv = np.cov(x, y, rowvar)
        single = np.ndim(cv) == 0
        cx = np.atleast_2d(cv)
        vv = np.diagonal(cx) + single
        v2 = 2.0 * vv
        s = np.sqrt(np.outer(vv, vv))
        r = cx / s
        cde = np.atleast_2d(rt.cov_jvp(d, which, rt.zeros_like(x), e, rowvar))
        hde = np.diagonal(cde) / v2
        hd = np.diagonal(np.atleast_2d(rt.cov_jvp(d, which, x, y, rowvar))) / v2
        he = np.diagonal(np.atleast_2d(rt.cov_jvp(e, 1, x, y, rowvar))) / v2
        jd = np.atleast_2d(rt.corrcoef_jvp(d, which, x, y, rowvar))
        je = np.atleast_2d(rt.corrcoef_jvp(e, 1, x, y, rowvar))
        out = (
            cde / s
            - r * (hde[:, None] + hde[None, :])
            - jd * (he[:, None] + he[None, :])
            - je * (hd[:, None] + hd[None, :])
            + r * (hd[:, None] - hd[None, :]) * (he[:, None] - he[None, :])
        )
        return np.reshape(out * (1.0 - single), np.shape(ans))

    def vjp_d(c):
        return rt.corrcoef_vjp(c, which, x, y, rowvar)

    def vjp_x(c):
        cv = np.cov(x, y, rowvar)
        single = np.ndim(cv) == 0
        cx = np.atleast_2d(cv)
        vv = np.diagonal(cx) + single
        v2 = 2.0 * vv
        s = np.sqrt(np.outer(vv, vv))
        gm = np.atleast_2d(c) * (1.0 - single)
        gr = gm * (cx / s)
        h = np.diagonal(np.atleast_2d(rt.cov_jvp(d, which, x, y, rowvar))) / v2
        gj = gm * np.atleast_2d(rt.corrcoef_jvp(d, which, x, y, rowvar))
        b = gr * (h[:, None] - h[None, :])
        w = np.sum(b, axis=1) - np.sum(b, axis=0) - np.sum(gj, axis=0) - np.sum(gj, axis=1)
        kg = gm / s - np.diag((np.sum(gr, axis=0) + np.sum(gr, axis=1)) / v2)
        return (
            rt.cov_vjp(
                kg,
                0,
                d if which == 0 else rt.zeros_like(x),
                None if y is None else (rt.zeros_like(y) if which == 0 else d),
                rowvar,
            )
            + rt.cov_vjp(np.diag(w / v2), 0, x, y, rowvar)
            - rt.corrcoef_vjp(gm * (h[:, None] + h[None, :]), 0, x, y, rowvar)
        )

    def vjp_y(c):
        cv = np.cov(x, y, rowvar)
        single = np.ndim(cv) == 0
        cx = np.atleast_2d(cv)
        vv = np.diagonal(cx) + single
        v2 = 2.0 * vv
        s = np.sqrt(np.outer(vv, vv))
        gm = np.atleast_2d(c) * (1.0 - single)
        gr = gm * (cx / s)
        h = np.diagonal(np.atleast_2d(rt.cov_jvp(d, which, x, y, rowvar))) / v2
        gj = gm * np.atleast_2d(rt.corrcoef_jvp(d, which, x, y, rowvar))
        b = gr * (h[:, None] - h[None, :])
        w = np.sum(b, axis=1) - np.sum(b, axis=0) - np.sum(gj, axis=0) - np.sum(gj, axis=1)
        kg = gm / s - np.diag((np.sum(gr, axis=0) + np.sum(gr, axis=1)) / v2)
        return (
            rt.cov_vjp(
                kg,
                1,
                d if which == 0 else rt.zeros_like(x),
                rt.zeros_like(y) if which == 0 else d,
                rowvar,
            )
            + rt.cov_vjp(np.diag(w / v2), 1, x, y, rowvar)
            - rt.corrcoef_vjp(gm * (h[:, None] + h[None, :]), 1, x, y, rowvar)
        )


@rule(
    rt.corrcoef_vjp,
    examples=[
        example("rt.corrcoef_vjp(g, 0, x)", g=(3, 3), x=(3, 6), f32=True),
        example("rt.corrcoef_vjp(g, 0, x, None, False)", g=(2, 2), x=(6, 2)),
        example("rt.corrcoef_vjp(g, 0, x, y)", g=(2, 2), x=(5,), y=(5,), f32=True),
        example("rt.corrcoef_vjp(g, 1, x, y)", g=(3, 3), x=(2, 5), y=(5,)),
        example("rt.corrcoef_vjp(g, 0, x)", g=(), x=(5,)),
    ],
)
def corrcoef_vjp(ans, g, which, x, y=None, rowvar=True):
    """Linear in ``g`` (the transpose is :func:`rt.corrcoef_jvp`); in the data, the
    transposes of the second derivative of the correlation (see above)."""

    def jvp_g(dg):
        return rt.corrcoef_vjp(dg, which, x, y, rowvar)

    def jvp_x(e):
        cv = np.cov(x, y, rowvar)
        single = np.ndim(cv) == 0
        cx = np.atleast_2d(cv)
        vv = np.diagonal(cx) + single
        v2 = 2.0 * vv
        s = np.sqrt(np.outer(vv, vv))
        gm = np.atleast_2d(g) * (1.0 - single)
        gr = gm * (cx / s)
        h = np.diagonal(np.atleast_2d(rt.cov_jvp(e, 0, x, y, rowvar))) / v2
        gj = gm * np.atleast_2d(rt.corrcoef_jvp(e, 0, x, y, rowvar))
        b = gr * (h[:, None] - h[None, :])
        w = np.sum(b, axis=1) - np.sum(b, axis=0) - np.sum(gj, axis=0) - np.sum(gj, axis=1)
        kg = gm / s - np.diag((np.sum(gr, axis=0) + np.sum(gr, axis=1)) / v2)
        return (
            rt.cov_vjp(kg, which, e, None if y is None else rt.zeros_like(y), rowvar)
            + rt.cov_vjp(np.diag(w / v2), which, x, y, rowvar)
            - rt.corrcoef_vjp(gm * (h[:, None] + h[None, :]), which, x, y, rowvar)
        )

    def jvp_y(e):
        cv = np.cov(x, y, rowvar)
        single = np.ndim(cv) == 0
        cx = np.atleast_2d(cv)
        vv = np.diagonal(cx) + single
        v2 = 2.0 * vv
        s = np.sqrt(np.outer(vv, vv))
        gm = np.atleast_2d(g) * (1.0 - single)
        gr = gm * (cx / s)
        h = np.diagonal(np.atleast_2d(rt.cov_jvp(e, 1, x, y, rowvar))) / v2
        gj = gm * np.atleast_2d(rt.corrcoef_jvp(e, 1, x, y, rowvar))
        b = gr * (h[:, None] - h[None, :])
        w = np.sum(b, axis=1) - np.sum(b, axis=0) - np.sum(gj, axis=0) - np.sum(gj, axis=1)
        kg = gm / s - np.diag((np.sum(gr, axis=0) + np.sum(gr, axis=1)) / v2)
        return (
            rt.cov_vjp(kg, which, rt.zeros_like(x), e, rowvar)
            + rt.cov_vjp(np.diag(w / v2), which, x, y, rowvar)
            - rt.corrcoef_vjp(gm * (h[:, None] + h[None, :]), which, x, y, rowvar)
        )

    def vjp_g(c):
        return rt.rebroadcast(rt.corrcoef_jvp(c, which, x, y, rowvar), g)

    def vjp_x(c):
        cv = np.cov(x, y, rowvar)
        single = np.ndim(cv) == 0
        cx = np.atleast_2d(cv)
        vv = np.diagonal(cx) + single
        v2 = 2.0 * vv
        s = np.sqrt(np.outer(vv, vv))
        gm = np.atleast_2d(g) * (1.0 - single)
        gr = gm * (cx / s)
        h = np.diagonal(np.atleast_2d(rt.cov_jvp(c, which, x, y, rowvar))) / v2
        gj = gm * np.atleast_2d(rt.corrcoef_jvp(c, which, x, y, rowvar))
        b = gr * (h[:, None] - h[None, :])
        w = np.sum(b, axis=1) - np.sum(b, axis=0) - np.sum(gj, axis=0) - np.sum(gj, axis=1)
        kg = gm / s - np.diag((np.sum(gr, axis=0) + np.sum(gr, axis=1)) / v2)
        return (
            rt.cov_vjp(
                kg,
                0,
                c if which == 0 else rt.zeros_like(x),
                None if y is None else (rt.zeros_like(y) if which == 0 else c),
                rowvar,
            )
            + rt.cov_vjp(np.diag(w / v2), 0, x, y, rowvar)
            - rt.corrcoef_vjp(gm * (h[:, None] + h[None, :]), 0, x, y, rowvar)
        )

    def vjp_y(c):
        cv = np.cov(x, y, rowvar)
        single = np.ndim(cv) == 0
        cx = np.atleast_2d(cv)
        vv = np.diagonal(cx) + single
        v2 = 2.0 * vv
        s = np.sqrt(np.outer(vv, vv))
        gm = np.atleast_2d(g) * (1.0 - single)
        gr = gm * (cx / s)
        h = np.diagonal(np.atleast_2d(rt.cov_jvp(c, which, x, y, rowvar))) / v2
        gj = gm * np.atleast_2d(rt.corrcoef_jvp(c, which, x, y, rowvar))
        b = gr * (h[:, None] - h[None, :])
        w = np.sum(b, axis=1) - np.sum(b, axis=0) - np.sum(gj, axis=0) - np.sum(gj, axis=1)
        kg = gm / s - np.diag((np.sum(gr, axis=0) + np.sum(gr, axis=1)) / v2)
        return (
            rt.cov_vjp(
                kg,
                1,
                c if which == 0 else rt.zeros_like(x),
                rt.zeros_like(y) if which == 0 else c,
                rowvar,
            )
            + rt.cov_vjp(np.diag(w / v2), 1, x, y, rowvar)
            - rt.corrcoef_vjp(gm * (h[:, None] + h[None, :]), 1, x, y, rowvar)
        )


@rule(
    np.convolve,
    examples=[
        example("np.convolve(a, v)", a=(5,), v=(3,), f32=True),
        example("np.convolve(a, v, mode='same')", a=(5,), v=(3,)),
        example("np.convolve(a, v, mode='same')", a=(3,), v=(6,)),
        example("np.convolve(a, v, 'valid')", a=(6,), v=(4,), f32=True),
        example("np.convolve(a, v, mode='valid')", a=(2,), v=(5,)),
    ],
)
def convolve(a, v, mode="full"):
    """1-d, bilinear: each operand's cotangent is the full cotangent correlated with the other."""

    def jvp_a(d):
        return np.convolve(d, v, mode=mode)

    def jvp_v(d):
        return np.convolve(a, d, mode=mode)

    def vjp_a(g):
        return rt.convolve_vjp(g, a, v, mode, 0)

    def vjp_v(g):
        return rt.convolve_vjp(g, a, v, mode, 1)


@rule(
    rt.convolve_vjp,
    examples=[
        example("rt.convolve_vjp(g, a, v, 'full', 0)", g=(7,), a=(5,), v=(3,), f32=True),
        example("rt.convolve_vjp(g, a, v, 'full', 1)", g=(7,), a=(5,), v=(3,)),
        example("rt.convolve_vjp(g, a, v, 'same', 0)", g=(5,), a=(5,), v=(3,)),
        example("rt.convolve_vjp(g, a, v, 'same', 1)", g=(6,), a=(3,), v=(6,)),
        example("rt.convolve_vjp(g, a, v, 'valid', 1)", g=(3,), a=(6,), v=(4,), f32=True),
        example("rt.convolve_vjp(g, a, v, 'valid', 0)", g=(4,), a=(2,), v=(5,)),
    ],
)
def convolve_vjp(ans, g, a, v, mode, which):
    """Bilinear in ``g`` and the other operand (``v`` for ``which=0``, ``a`` for 1); the
    operand whose cotangent it is only gives the shape. With <c, convolve_vjp(g, a, v, mode,
    0)> = <g, np.convolve(c, v, mode)>, the transposes are convolutions and the derivatives
    in the other operand the sibling cotangent."""

    def jvp_g(d):
        return rt.convolve_vjp(d, a, v, mode, which)

    def jvp_a(d):
        return rt.zeros_like(ans) if which == 0 else rt.convolve_vjp(g, d, v, mode, 1)

    def jvp_v(d):
        return rt.convolve_vjp(g, a, d, mode, 0) if which == 0 else rt.zeros_like(ans)

    def vjp_g(c):
        return np.convolve(c, v, mode=mode) if which == 0 else np.convolve(a, c, mode=mode)

    def vjp_a(c):
        return rt.zeros_like(a) if which == 0 else rt.convolve_vjp(g, a, c, mode, 0)

    def vjp_v(c):
        return rt.convolve_vjp(g, c, v, mode, 1) if which == 0 else rt.zeros_like(v)


@rule(
    np.correlate,
    examples=[
        example("np.correlate(a, v)", a=(6,), v=(3,), f32=True),
        example("np.correlate(a, v, mode='full')", a=(4,), v=(3,)),
        example("np.correlate(a, v, mode='same')", a=(3,), v=(6,), f32=True),
        example("np.correlate(a, v, 'same')", a=(6,), v=(4,)),
    ],
)
def correlate(a, v, mode="valid"):
    """1-d, real: ``np.convolve(a, v[::-1], mode)``."""

    def jvp_a(d):
        return np.correlate(d, v, mode=mode)

    def jvp_v(d):
        return np.correlate(a, d, mode=mode)

    def vjp_a(g):
        return rt.correlate_vjp(g, a, v, mode, 0)

    def vjp_v(g):
        return rt.correlate_vjp(g, a, v, mode, 1)


@rule(
    rt.correlate_vjp,
    examples=[
        example("rt.correlate_vjp(g, a, v, 'valid', 0)", g=(4,), a=(6,), v=(3,), f32=True),
        example("rt.correlate_vjp(g, a, v, 'valid', 1)", g=(4,), a=(6,), v=(3,)),
        example("rt.correlate_vjp(g, a, v, 'full', 0)", g=(6,), a=(4,), v=(3,)),
        example("rt.correlate_vjp(g, a, v, 'same', 1)", g=(6,), a=(3,), v=(6,), f32=True),
        example("rt.correlate_vjp(g, a, v, 'same', 0)", g=(6,), a=(6,), v=(4,)),
        example("rt.correlate_vjp(g, a, v, 'same', 1)", g=(6,), a=(6,), v=(4,)),
    ],
)
def correlate_vjp(ans, g, a, v, mode, which):
    """Bilinear in ``g`` and the other operand, like ``rt.convolve_vjp``: <c,
    correlate_vjp(g, a, v, mode, 0)> = <g, np.correlate(c, v, mode)>."""

    def jvp_g(d):
        return rt.correlate_vjp(d, a, v, mode, which)

    def jvp_a(d):
        return rt.zeros_like(ans) if which == 0 else rt.correlate_vjp(g, d, v, mode, 1)

    def jvp_v(d):
        return rt.correlate_vjp(g, a, d, mode, 0) if which == 0 else rt.zeros_like(ans)

    def vjp_g(c):
        return np.correlate(c, v, mode=mode) if which == 0 else np.correlate(a, c, mode=mode)

    def vjp_a(c):
        return rt.zeros_like(a) if which == 0 else rt.correlate_vjp(g, a, c, mode, 0)

    def vjp_v(c):
        return rt.correlate_vjp(g, c, v, mode, 1) if which == 0 else rt.zeros_like(v)


methods(var=np.var, std=np.std, cumsum=np.cumsum, cumprod=np.cumprod)
