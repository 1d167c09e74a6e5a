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

from adgen.rules import runtime as rt
from adgen.rules.registry import method_rule, methods, rule, sequence_rule
from adgen.rules.samples import example


@rule(
    np.ravel,
    view=True,
    complex=True,
    examples=[
        example("np.ravel(a, order='F')", a=(2, 3)),
        example("np.ravel(a.T, order='K') * np.arange(6.0)", a=(2, 3)),
        example("np.ravel(a[:, ::2], 'A') * np.arange(8.0)", a=(2, 3, 2)),
    ],
)
def ravel(a, order="C"):
    """``order='C'`` reads the last axis fastest; the other orders read ``a``'s axes in the
    order :func:`rt.ravel_axes` finds (``'A'`` and ``'K'`` follow ``a``'s memory, so the
    tangent is read in ``a``'s order, not in its own)."""

    def jvp(da):
        if order == "C":
            return np.ravel(da)
        return np.reshape(np.transpose(da, rt.ravel_axes(a, order)), -1)

    def vjp(g):
        if order == "C":
            return np.reshape(g, np.shape(a))
        axes = rt.ravel_axes(a, order)
        return np.transpose(np.reshape(g, np.shape(np.transpose(a, axes))), np.argsort(axes))


@rule(np.squeeze, view=True, complex=True)
def squeeze(a, axis=None):
    def jvp(da):
        return np.squeeze(da, axis=axis)

    def vjp(g):
        return np.reshape(g, np.shape(a))


@rule(np.copy, complex=True)
def copy(a):
    def jvp(da):
        return np.copy(da)

    def vjp(g):
        return g


@rule(np.trace, complex=True)
def trace(a, offset=0, axis1=0, axis2=1):
    """The cotangent is ``g`` along the traced diagonal: an outer product with an eye
    (``np.einsum``, which adgen differentiates again; ``np.multiply.outer`` it does not)."""

    def jvp(da):
        return np.trace(da, offset=offset, axis1=axis1, axis2=axis2)

    def vjp(g):
        if offset == 0:
            eye = np.eye(np.shape(a)[axis1], np.shape(a)[axis2], dtype=a.dtype)
        else:
            eye = np.eye(np.shape(a)[axis1], np.shape(a)[axis2], k=offset, dtype=a.dtype)
        if axis1 == 0 and axis2 == 1:
            return np.einsum("ij,...->ij...", eye, g)
        return np.moveaxis(np.einsum("ij,...->ij...", eye, g), (0, 1), (axis1, axis2))


@method_rule("copy", complex=True)
def method_copy(a):
    def jvp(da):
        return np.copy(da)

    def vjp(g):
        return g


@method_rule("flatten", complex=True)
def method_flatten(a):
    def jvp(da):
        return np.ravel(da).copy()

    def vjp(g):
        return np.reshape(g, np.shape(a))


@rule(
    np.float64,
    examples=[
        example("np.float64(a)", a=None),
        example("np.float64(a) * a", a=()),
        example("np.float64(a) ** 2", a=(2, 3)),
    ],
)
def float64(x):
    """A cast to float64 (``np.double``): its derivative is the identity."""

    def jvp(d):
        return np.asarray(d, dtype=np.float64)

    def vjp(g):
        return np.asarray(g, dtype=rt.dtype_of(x))


@method_rule("astype", complex=True)
def method_astype(ans, a, dtype):
    """A cast: the identity between floating dtypes; complex to real keeps the real part
    (as NumPy does), real to complex embeds (its cotangent is the real part, by the
    convention for complex values); an integer or boolean result has derivative 0."""

    def jvp(da):
        if rt.known_real(a):
            return (
                np.asarray(da, dtype=dtype)
                if np.issubdtype(dtype, np.inexact)
                else np.zeros_like(da, shape=np.shape(ans))
            )
        return (
            np.asarray(rt.real_like(da, ans), dtype=dtype)
            if np.issubdtype(dtype, np.inexact)
            else np.zeros_like(da, shape=np.shape(ans), dtype=np.float64)
        )

    def vjp(g):
        if rt.known_real(ans):
            return (
                np.asarray(g, dtype=a.dtype)
                if np.issubdtype(dtype, np.inexact)
                else np.zeros_like(a)
            )
        return (
            np.asarray(rt.real_like(g, a), dtype=a.dtype)
            if np.issubdtype(dtype, np.inexact)
            else rt.zeros_like(a)
        )


methods(ravel=np.ravel, squeeze=np.squeeze, clip=np.clip, trace=np.trace)


# -- functions of a sequence of arrays: np.array((a, b)), np.stack, np.concatenate ------------
# Parts may be numbers and 0-d arrays, constants among them (np.hstack((x[0], 2.0))).
@sequence_rule(
    np.stack,
    sequence="arrays",
    examples=[
        example("np.stack((a, b))", a=(3,), b=(3,), f32=True),
        example("np.stack([a, b, a], axis=-1)", a=(2, 3), b=(2, 3)),
        example("np.stack((a, 2.0, b))", a=None, b=()),
    ],
    complex=True,
)
def stack(arrays, axis=0):
    def jvp(parts):
        return np.stack(parts, axis=axis)

    def bjvp(parts):  # (each part (k, *shape): the new axis goes after the batch axis)
        return np.stack(parts, axis=rt.batch_axis(axis, np.ndim(parts[0])))

    def vjp(g, k):
        return np.take(g, k, axis=axis)


@sequence_rule(
    np.array,
    sequence="object",
    examples=[
        example("np.array([a, b])", a=(3,), b=(3,), f32=True),
        example("np.array((a, 1.0, b))", a=None, b=()),
        example("np.array(a)", a=None),
        example("np.array(a)", a=()),
    ],
    complex=True,
    number=True,
)
def array(object):  # noqa: A002 - NumPy's parameter name
    def jvp(parts):
        return np.array(parts)

    def bjvp(parts):
        return np.stack(parts, axis=1)

    def vjp(g, k):
        return g[k]


@sequence_rule(
    np.concatenate,
    sequence="arrays",
    examples=[
        example("np.concatenate((a, b))", a=(2,), b=(3,), f32=True),
        example("np.concatenate([a, b], axis=1)", a=(2, 2), b=(2, 3)),
        example("np.concatenate((a, np.ones(2), b), axis=-1)", a=(2,), b=(3,)),
        example("np.concatenate((a, b), axis=None)", a=(2, 3), b=(4,)),
    ],
    complex=True,
)
def concatenate(arrays, axis=0):
    def jvp(parts):
        return np.concatenate(parts, axis=axis)

    def bjvp(parts):
        if axis is None:
            return np.concatenate([np.reshape(p, (np.shape(p)[0], -1)) for p in parts], axis=1)
        return np.concatenate(parts, axis=rt.batch_axis(axis, np.ndim(parts[0]) - 1))

    def vjp(g, k):
        return rt.concatenated_part(g, arrays, k, axis)


@sequence_rule(
    np.hstack,
    sequence="tup",
    examples=[
        example("np.hstack((a, b))", a=None, b=None),
        example("np.hstack([a, 2.0 * b, a])", a=(), b=(2,)),
        example("np.hstack((1.0, a))", a=(3,)),
        example("np.hstack((a, b))", a=(2, 3), b=(2, 1), f32=True),
        example("np.hstack(a)", a=(3,)),
    ],
    complex=True,
)
def hstack(tup):
    def jvp(parts):
        return np.hstack(parts)

    def vjp(g, k):
        return rt.concatenated_part(g, tup, k, join="hstack")


@sequence_rule(
    np.vstack,
    sequence="tup",
    examples=[
        example("np.vstack((a, b))", a=(3,), b=(2, 3), f32=True),
        example("np.vstack([a, b, 2.0])", a=None, b=()),
        example("np.vstack(a)", a=(3,)),
    ],
    complex=True,
)
def vstack(tup):
    def jvp(parts):
        return np.vstack(parts)

    def vjp(g, k):
        return rt.concatenated_part(g, tup, k, join="vstack")


if hasattr(np, "row_stack"):  # NumPy's alias of np.vstack (deprecated in 2.0): vstack's rule

    @sequence_rule(
        np.row_stack,
        sequence="tup",
        examples=[
            example("np.row_stack((a, b))", a=(3,), b=(2, 3), f32=True),
            example("np.row_stack([a, 2.0 * a])", a=()),
        ],
        complex=True,
    )
    def row_stack(tup):
        def jvp(parts):
            return np.vstack(parts)

        def vjp(g, k):
            return rt.concatenated_part(g, tup, k, join="vstack")
