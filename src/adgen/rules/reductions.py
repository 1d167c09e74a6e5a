"""Reductions, scans and statistics (``axis`` / ``keepdims`` / ``ddof`` where NumPy has them).

Conventions where the derivative is not defined (tested with exact values in
``tests/test_rules_reductions_more.py``):

* ``max``/``min``, ``nanmax``/``nanmin`` and ``ptp`` split the derivative evenly between tied
  extrema (a constant slice has ``ptp`` derivative 0).
* ``median``, ``quantile``, ``percentile`` (and the ``nan`` variants) and ``sort``: tied entries
  share evenly the derivative of the run of order statistics they occupy (``median([1, 2, 2])``
  gives ``[0, 0.5, 0.5]``; ``sort([2, 1, 2])`` gives each 2.0 the average of the two slots).
  Quantiles use NumPy's default linear method; ``q`` is not differentiated.
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

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import methods, reductions, rule
from adgen.rules.samples import DISTINCT, POSITIVE, Arg, example


@rule(np.sum)
def sum_(a, axis=None, keepdims=False):
    def jvp(da):
        return np.sum(da, axis=axis, keepdims=keepdims)

    def vjp(g):
        return rt.unreduce(g, a, axis=axis, keepdims=keepdims)


@rule(np.mean)
def mean(a, axis=None, keepdims=False):
    def jvp(da):
        return np.mean(da, axis=axis, keepdims=keepdims)

    def vjp(g):
        return rt.mean_vjp(g, a, axis=axis, keepdims=keepdims)


@rule(np.prod)
def prod(ans, a, axis=None, keepdims=False):
    def jvp(da):
        return np.sum(
            rt.prod_vjp(np.ones_like(ans), a, axis=axis, keepdims=keepdims) * da,
            axis=axis,
            keepdims=keepdims,
        )

    def vjp(g):
        return rt.prod_vjp(g, a, axis=axis, keepdims=keepdims)


@rule(np.max, np.amax, np.min, np.amin)
def extremum(ans, a, axis=None, keepdims=False):
    def jvp(da):
        return np.sum(
            rt.minmax_vjp(np.ones_like(ans), ans, a, axis=axis, keepdims=keepdims) * da,
            axis=axis,
            keepdims=keepdims,
        )

    def vjp(g):
        return rt.minmax_vjp(g, ans, a, axis=axis, keepdims=keepdims)


methods(sum=np.sum, mean=np.mean, prod=np.prod, max=np.max, min=np.min)
reductions(np.sum, np.mean, np.prod, np.max, np.amax, np.min, np.amin)


# -- variance and standard deviation -----------------------------------------------------------
# n = np.size(a) // np.size(ans) is the number of entries reduced into each result.


@rule(
    np.var,
    examples=[
        example("np.var(a)", a=(5,), f32=True),
        example("np.var(a, axis=0)", a=(4, 3)),
        example("np.var(a, axis=-1, ddof=1, keepdims=True)", a=(2, 3, 4), f32=True),
        example("np.var(a, axis=(0, 2), ddof=1)", a=(2, 3, 4)),
        example("a.var(axis=1)", a=(3, 4)),
    ],
)
def var(ans, a, axis=None, *, ddof=0, keepdims=False):
    """d var = 2 Σ (a - mean) da / (n - ddof): the mean's own change drops out."""

    def jvp(da):
        return (
            2.0
            * np.sum((a - np.mean(a, axis=axis, keepdims=True)) * da, axis=axis, keepdims=keepdims)
            / (np.size(a) // np.size(ans) - ddof)
        )

    def vjp(g):
        return (
            rt.unreduce(g, a, axis=axis, keepdims=keepdims)
            * (a - np.mean(a, axis=axis, keepdims=True))
            * (2.0 / (np.size(a) // np.size(ans) - ddof))
        )


@rule(
    np.std,
    examples=[
        example("np.std(a)", a=(5,), f32=True),
        example("np.std(a, axis=0, ddof=1)", a=(4, 3)),
        example("np.std(a, axis=(0, -1), keepdims=True)", a=(2, 3, 4), f32=True),
        example("a.std(axis=-1, ddof=1)", a=(3, 4)),
    ],
)
def std(ans, a, axis=None, *, ddof=0, keepdims=False):
    """d std = Σ (a - mean) da / ((n - ddof) std); 0 where all entries of a slice are equal
    (zero variance), rounding errors in the mean notwithstanding."""

    def jvp(da):
        return (
            (np.ptp(a, axis=axis, keepdims=keepdims) != 0)
            * np.sum((a - np.mean(a, axis=axis, keepdims=True)) * da, axis=axis, keepdims=keepdims)
            / ((np.size(a) // np.size(ans) - ddof) * (ans + (ans == 0)))
        )

    def vjp(g):
        return rt.unreduce(
            (np.ptp(a, axis=axis, keepdims=keepdims) != 0)
            * g
            / ((np.size(a) // np.size(ans) - ddof) * (ans + (ans == 0))),
            a,
            axis=axis,
            keepdims=keepdims,
        ) * (a - np.mean(a, axis=axis, keepdims=True))


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
)
def cumsum(a, axis=None):
    def jvp(da):
        return np.cumsum(da, axis=axis)

    def vjp(g):
        return rt.cumsum_vjp(g, a, axis=axis)


@rule(
    np.cumprod,
    examples=[
        example("np.cumprod(a)", a=(5,), f32=True),
        example("np.cumprod(a)", a=(2, 3)),
        example("np.cumprod(a, axis=1)", a=(3, 4)),
        example("np.cumprod(a, axis=-2)", a=(2, 5, 2), f32=True),
        example("a.cumprod(axis=0)", a=(4, 2)),
    ],
)
def cumprod(a, axis=None):
    """Exact with zeros in ``a``: products and sums only, no division by ``a``."""

    def jvp(da):
        return rt.cumprod_jvp(da, a, axis=axis)

    def vjp(g):
        return rt.cumprod_vjp(g, a, axis=axis)


if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1

    @rule(
        np.cumulative_sum,
        examples=[
            example("np.cumulative_sum(a)", a=(5,), f32=True),
            example("np.cumulative_sum(a, axis=1, include_initial=True)", a=(3, 4)),
            example("np.cumulative_sum(a, axis=-1)", a=(2, 3, 2)),
        ],
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


@rule(
    np.sort,
    domain=DISTINCT,
    examples=[
        example("np.sort(a)", a=(5,), f32=True),
        example("np.sort(a, axis=0)", a=(4, 3)),
        example("np.sort(a, axis=None)", a=(3, 2)),
        example("np.sort(a, axis=-2)", a=(2, 3, 4), f32=True),
    ],
)
def sort(a, axis=-1, kind=None, *, stable=None):
    """A permutation of ``a``; tied entries share the average of their derivatives."""

    def jvp(da):
        return rt.sort_jvp(da, a, axis)

    def vjp(g):
        return rt.sort_vjp(g, a, axis)


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
    np.ediff1d,
    examples=[
        example("np.ediff1d(a)", a=(5,), f32=True),
        example("np.ediff1d(a)", a=(2, 3)),
        example("np.ediff1d(a, to_end=[1.0, 2.0], to_begin=-1.0)", a=(4,), f32=True),
    ],
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
            rt.diff_vjp(g[start : start + np.size(ary) - 1], np.ravel(ary)), np.shape(ary)
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


methods(var=np.var, std=np.std, cumsum=np.cumsum, cumprod=np.cumprod)
