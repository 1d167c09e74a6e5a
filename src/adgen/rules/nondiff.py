"""Functions whose results carry no derivative: comparisons, rounding, shapes, constructors."""

import operator

import numpy as np

from .registry import methods, nondifferentiable, nondifferentiable_attributes

nondifferentiable(
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
    operator.not_,
    operator.invert,
    operator.floordiv,
    np.floor_divide,
    np.floor,
    np.ceil,
    np.round,
    np.rint,
    np.trunc,
    np.sign,
    np.shape,
    np.ndim,
    np.size,
    len,
    int,
    range,
    np.argmax,
    np.argmin,
    np.argsort,
    np.isnan,
    np.isfinite,
    np.isinf,
    np.zeros,
    np.ones,
    np.empty,
    np.full,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.full_like,
    np.arange,
    np.linspace,
    np.eye,
    np.identity,
    np.greater,
    np.greater_equal,
    np.less,
    np.less_equal,
    np.equal,
    np.not_equal,
    np.logical_and,
    np.logical_or,
    np.logical_not,
)
nondifferentiable_attributes("shape", "ndim", "size", "dtype")
methods(argmax=np.argmax, argmin=np.argmin)
