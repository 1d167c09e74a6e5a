"""Reductions with ``axis`` and ``keepdims``.

``max``/``min`` split the derivative evenly between tied extrema;
``prod`` is exact when the input holds zeros (no division by x).
"""

import numpy as np

from .. import runtime as rt
from .registry import methods, rule


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
