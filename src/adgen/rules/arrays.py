"""Copies, casts, flattening, squeezing and traces, as NumPy functions and as array methods.

``x.ravel()``, ``x.squeeze()``, ``x.clip(lo, hi)`` and ``x.trace()`` are the NumPy
functions of the same name. ``x.copy()``, ``x.flatten()`` and ``x.astype(dtype)`` are
methods with no NumPy function of exactly their meaning (``np.copy`` of a NumPy scalar
is a 0-d array, ``x.copy()`` a scalar), so generated code calls the method.

``astype`` passes the derivative through to a floating dtype (cast to that dtype); a
cast to an integer or bool dtype is piecewise constant, so its derivative is 0 (as for
``np.floor`` and ``int``). The choice is made when the code is generated if the dtype is
a constant (``np.float32``, ``"int64"``), and at run time otherwise (``x.astype(y.dtype)``).
"""

import numpy as np

from .. import runtime as rt
from .registry import method_rule, methods, rule, sequence_rule


@rule(np.ravel, view=True)
def ravel(a):
    def jvp(da):
        return np.ravel(da)

    def vjp(g):
        return np.reshape(g, np.shape(a))


@rule(np.squeeze, view=True)
def squeeze(a, axis=None):
    def jvp(da):
        return np.squeeze(da, axis=axis)

    def vjp(g):
        return np.reshape(g, np.shape(a))


@rule(np.copy)
def copy(a):
    def jvp(da):
        return np.copy(da)

    def vjp(g):
        return g


@rule(np.trace)
def trace(a, offset=0, axis1=0, axis2=1):
    """The cotangent is ``g`` along the traced diagonal: an outer product with an eye."""

    def jvp(da):
        if offset == 0 and axis1 == 0 and axis2 == 1:
            return np.trace(da)
        if axis1 == 0 and axis2 == 1:
            return np.trace(da, offset)
        return np.trace(da, offset, axis1, axis2)

    def vjp(g):
        if offset == 0:
            eye = np.eye(np.shape(a)[axis1], np.shape(a)[axis2], dtype=a.dtype)
        else:
            eye = np.eye(np.shape(a)[axis1], np.shape(a)[axis2], k=offset, dtype=a.dtype)
        if axis1 == 0 and axis2 == 1:
            return np.multiply.outer(eye, g)
        return np.moveaxis(np.multiply.outer(eye, g), (0, 1), (axis1, axis2))


@method_rule("copy")
def method_copy(a):
    def jvp(da):
        return np.copy(da)

    def vjp(g):
        return g


@method_rule("flatten")
def method_flatten(a):
    def jvp(da):
        return np.ravel(da).copy()

    def vjp(g):
        return np.reshape(g, np.shape(a))


@method_rule("astype")
def method_astype(ans, a, dtype):
    def jvp(da):
        return (
            np.asarray(da, dtype=dtype)
            if np.issubdtype(dtype, np.inexact)
            else np.zeros_like(da, shape=np.shape(ans))
        )

    def vjp(g):
        return (
            np.asarray(g, dtype=a.dtype) if np.issubdtype(dtype, np.inexact) else np.zeros_like(a)
        )


methods(ravel=np.ravel, squeeze=np.squeeze, clip=np.clip, trace=np.trace)


# -- functions of a sequence of arrays: np.array((a, b)), np.stack, np.concatenate ------------
@sequence_rule(np.stack, sequence="arrays")
def stack(arrays, axis=0):
    def jvp(parts):
        return np.stack(parts, axis=axis)

    def vjp(g, k):
        return np.take(g, k, axis=axis)


@sequence_rule(np.array, sequence="object")
def array(object):  # noqa: A002 - NumPy's parameter name
    def jvp(parts):
        return np.array(parts)

    def vjp(g, k):
        return g[k]


@sequence_rule(np.concatenate, sequence="arrays")
def concatenate(arrays, axis=0):
    def jvp(parts):
        return np.concatenate(parts, axis=axis)

    def vjp(g, k):
        return rt.concatenated_part(g, arrays, k, axis)


@sequence_rule(np.hstack, sequence="tup")
def hstack(tup):
    def jvp(parts):
        return np.hstack(parts)

    def vjp(g, k):
        return rt.concatenated_part(g, tup, k, 0 if np.ndim(tup[0]) <= 1 else 1)


@sequence_rule(np.vstack, sequence="tup")
def vstack(tup):
    def jvp(parts):
        return np.vstack(parts)

    def vjp(g, k):
        return np.reshape(rt.concatenated_part(g, tup, k, 0, at_least_2d=True), np.shape(tup[k]))
