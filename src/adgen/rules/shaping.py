"""Shapes and construction: axes moved, flipped, rolled, tiled, repeated, padded, split,
stacked, triangles and diagonals.

All of these are linear. Their tangent is the same function applied to the tangent.
Their cotangent is the inverse permutation (``np.swapaxes``, ``np.moveaxis``, ``np.flip``,
``np.roll``, ``np.rot90``), a slice or reshape (``np.expand_dims``, ``np.append``,
``np.pad`` in constant mode), a concatenation (the ``np.split`` family) or, for functions
that copy entries (``np.tile``, ``np.repeat``, ``np.resize``, ``np.diag``,
``np.diagonal``, ``np.delete``, ``np.insert``, ``np.pad`` in the copying modes), the
function applied to an array of source indices (``rt.source_index``), through which
``rt.gathered_vjp`` sums the cotangent back.

Conventions (there are no kinks here):

* an entry copied several times (``np.tile``, ``np.repeat``, ``np.broadcast_to``,
  ``np.resize``, the border of ``np.pad(..., mode='edge'|'reflect'|'symmetric'|'wrap')``,
  a value ``np.insert`` broadcasts to several slots) gets the sum of its copies'
  cotangents;
* ``np.pad``'s ``constant_values`` are constants (no derivative); its other modes
  (statistics, ramps, callables) and ``reflect_type='odd'`` are refused;
* ``np.insert`` into an integer array casts the values to integers: their derivative is 0;
* ``np.tril``/``np.triu`` of a 1-d array (broadcast to a square) sums the cotangent over
  the broadcast rows;
* ``np.asarray``/``np.asanyarray``/``np.ascontiguousarray`` are the identity (a cast to an
  integer dtype has derivative 0, like ``x.astype(int)``).

Not registered: ``np.broadcast_arrays`` and ``np.meshgrid`` (their number of results is
the number of ``*args`` arrays, which a rule's ``outputs`` cannot see: adgen reads them as
the calls they make, :mod:`adgen.rules.python_forms`) and ``np.unstack`` (its number of
results is a length of the array). ``np.permute_dims`` and ``np.concat`` are
``np.transpose`` and ``np.concatenate`` themselves.
"""

import math
import operator

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import methods, nondifferentiable, rule, sequence_rule
from adgen.rules.samples import example


# -- axes -------------------------------------------------------------------------------------
@rule(
    np.swapaxes,
    view=True,
    examples=[
        example("np.swapaxes(a, 0, 1)", a=(3, 4), f32=True),
        example("np.swapaxes(a, -1, 0)", a=(2, 3, 4)),
        example("a.swapaxes(1, 2)", a=(2, 3, 4)),
    ],
    complex=True,
)
def swapaxes(a, axis1, axis2):
    def jvp(da):
        return np.swapaxes(da, axis1, axis2)

    def vjp(g):
        return np.swapaxes(g, axis1, axis2)


@rule(
    np.moveaxis,
    view=True,
    examples=[
        example("np.moveaxis(a, 0, -1)", a=(2, 3, 4), f32=True),
        example("np.moveaxis(a, (0, 1), (2, 0))", a=(2, 3, 4)),
        example("np.moveaxis(a, 1, 0)", a=(3, 4)),
    ],
    complex=True,
)
def moveaxis(a, source, destination):
    def jvp(da):
        return np.moveaxis(da, source, destination)

    def vjp(g):
        return np.moveaxis(g, destination, source)


@rule(
    np.rollaxis,
    view=True,
    examples=[
        example("np.rollaxis(a, 2)", a=(2, 3, 4), f32=True),
        example("np.rollaxis(a, 0, 3)", a=(2, 3, 4)),
        example("np.rollaxis(a, -1, 1)", a=(2, 3, 4)),
        example("np.rollaxis(a, 1, -1)", a=(2, 3, 4, 2)),
    ],
    complex=True,
)
def rollaxis(a, axis, start=0):
    def jvp(da):
        return np.rollaxis(da, axis, start)

    def vjp(g):
        return np.moveaxis(g, rt.rollaxis_destination(np.ndim(a), axis, start), axis)


if hasattr(np, "matrix_transpose"):

    @rule(
        np.matrix_transpose,
        view=True,
        examples=[
            example("np.matrix_transpose(a)", a=(3, 4), f32=True),
            example("np.matrix_transpose(a)", a=(2, 3, 4)),
        ],
        complex=True,
    )
    def matrix_transpose(x):
        def jvp(dx):
            return np.matrix_transpose(dx)

        def vjp(g):
            return np.matrix_transpose(g)


# -- flips and rolls --------------------------------------------------------------------------
@rule(
    np.flip,
    view=True,
    examples=[
        example("np.flip(a)", a=(3, 4), f32=True),
        example("np.flip(a, 1)", a=(2, 3, 4)),
        example("np.flip(a, axis=(0, -1))", a=(2, 3, 4)),
        example("np.flip(a)", a=(5,)),
    ],
    complex=True,
)
def flip(m, axis=None):
    def jvp(dm):
        return np.flip(dm, axis)

    def vjp(g):
        return np.flip(g, axis)


@rule(
    np.fliplr,
    view=True,
    examples=[example("np.fliplr(a)", a=(3, 4), f32=True), example("np.fliplr(a)", a=(2, 3, 4))],
    complex=True,
)
def fliplr(m):
    def jvp(dm):
        return np.fliplr(dm)

    def vjp(g):
        return np.fliplr(g)


@rule(
    np.flipud,
    view=True,
    examples=[example("np.flipud(a)", a=(3, 4), f32=True), example("np.flipud(a)", a=(5,))],
    complex=True,
)
def flipud(m):
    def jvp(dm):
        return np.flipud(dm)

    def vjp(g):
        return np.flipud(g)


@rule(
    np.roll,
    examples=[
        example("np.roll(a, 2)", a=(3, 4), f32=True),
        example("np.roll(a, -1, axis=1)", a=(3, 4)),
        example("np.roll(a, (1, 2), axis=(0, 2))", a=(2, 3, 4)),
        example("np.roll(a, 7)", a=(5,)),
    ],
    complex=True,
)
def roll(a, shift, axis=None):
    def jvp(da):
        return np.roll(da, shift, axis=axis)

    def vjp(g):
        return np.roll(g, np.negative(shift), axis=axis)


@rule(
    np.rot90,
    view=True,
    examples=[
        example("np.rot90(a)", a=(3, 4), f32=True),
        example("np.rot90(a, 2)", a=(3, 4)),
        example("np.rot90(a, -1, axes=(1, 2))", a=(2, 3, 4)),
        example("np.rot90(a, 3, (2, 0))", a=(2, 3, 4)),
    ],
    complex=True,
)
def rot90(m, k=1, axes=(0, 1)):
    def jvp(dm):
        return np.rot90(dm, k, axes)

    def vjp(g):
        return np.rot90(g, -k, axes)


# -- copies: tile, repeat, resize, broadcast_to -----------------------------------------------
@rule(
    np.tile,
    examples=[
        example("np.tile(a, 2)", a=(3,), f32=True),
        example("np.tile(a, (2, 1, 3))", a=(3, 2)),
        example("np.tile(a, (2,))", a=(2, 3)),
        example("np.tile(a, 3)", a=None),
    ],
    complex=True,
)
def tile(A, reps):  # noqa: N803 - NumPy's parameter name
    def jvp(dA):  # noqa: N803
        return np.tile(dA, reps)

    def vjp(g):
        return rt.gathered_vjp(g, A, np.tile(rt.source_index(A), reps))


# The cotangent of every function that copies entries (np.tile, np.repeat, np.resize,
# np.pad, np.delete, np.insert, np.diag, np.diagonal, np.diagflat), differentiated again:
# ``rt.gathered_vjp(g, x, taken)`` adds ``g`` up by the source indices ``taken`` (integers:
# no derivative), linear in ``g``; its transpose ``rt.gathered(c, taken)`` copies the
# entries of ``c`` back where ``taken`` names them. ``x`` only gives the shape.
@rule(
    rt.gathered_vjp,
    examples=[
        example("rt.gathered_vjp(g, x, np.tile(rt.source_index(x), 2))", g=(6,), x=(3,), f32=True),
        example("rt.gathered_vjp(g, x, np.tile(rt.source_index(x), 3))", g=(3,), x=None),
        example(
            "rt.gathered_vjp(g, x, np.repeat(rt.source_index(x), [1, 0, 2], axis=0))",
            g=(3, 2),
            x=(3, 2),
        ),
        example(
            "rt.gathered_vjp(g, x, np.pad(rt.source_index(x), ((2, 1), (0, 3)), mode='reflect'))",
            g=(6, 7),
            x=(3, 4),
        ),
        example(
            "rt.gathered_vjp(g, x, np.delete(rt.source_index(x), [0, 2], axis=1))",
            g=(2, 2),
            x=(2, 4),
        ),
        example("rt.gathered_vjp(g, x, np.diagonal(rt.source_index(x), 1))", g=(3,), x=(3, 4)),
        example("rt.gathered_vjp(g, x, np.array([[0, 2], [0, 1]]))", g=(2, 2), x=(2,)),
        example("rt.gathered_vjp(g, x, np.array([1, 1, 2]))", g=(), x=(2,)),
    ],
    complex=True,
)
def gathered_vjp(ans, g, x, taken):
    def jvp_g(dg):
        return rt.gathered_vjp(dg, x, taken)

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(rt.gathered(c, taken), g)

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    rt.gathered,
    examples=[
        example("rt.gathered(c, np.tile(rt.source_index(c), 2))", c=(3,), f32=True),
        example("rt.gathered(c, np.array([[0, 1], [3, 0]]))", c=(3,)),
        example("rt.gathered(c, np.pad(rt.source_index(c), 1, mode='edge'))", c=(2, 2)),
        example("rt.gathered(c, np.array([1, 0, 1]))", c=None),
    ],
    complex=True,
)
def gathered(ans, c, taken):
    """Linear in ``c``: the transpose adds up by ``taken`` again (``rt.gathered_vjp``)."""

    def jvp_c(dc):
        return rt.gathered(dc, taken)

    def vjp_c(h):
        return rt.gathered_vjp(h, c, taken)


@rule(
    np.repeat,
    examples=[
        example("np.repeat(a, 2)", a=(2, 3), f32=True),
        example("np.repeat(a, 3, axis=1)", a=(2, 3)),
        example("np.repeat(a, [1, 0, 2], axis=0)", a=(3, 2)),
        example("np.repeat(a, [2, 1, 1, 3], axis=-1)", a=(2, 4)),
        example("a.repeat(2, axis=0)", a=(2, 2, 2)),
    ],
    complex=True,
)
def repeat(a, repeats, axis=None):
    def jvp(da):
        return np.repeat(da, repeats, axis=axis)

    def vjp(g):
        return rt.gathered_vjp(g, a, np.repeat(rt.source_index(a), repeats, axis=axis))


@rule(
    np.resize,
    examples=[
        example("np.resize(a, (3, 5))", a=(2, 3), f32=True),
        example("np.resize(a, 4)", a=(2, 3)),
        example("np.resize(a, (2, 2, 2))", a=(3,)),
    ],
    complex=True,
)
def resize(a, new_shape):
    def jvp(da):
        return np.resize(da, new_shape)

    def vjp(g):
        return rt.gathered_vjp(g, a, np.resize(rt.source_index(a), new_shape))


@rule(
    np.broadcast_to,
    view=True,
    examples=[
        example("np.broadcast_to(a, (2, 3, 4))", a=(3, 1), f32=True),
        example("np.broadcast_to(a, (3, 4))", a=(4,)),
        example("np.broadcast_to(a, (3,))", a=None),
        example("np.broadcast_to(a, (2, 3))", a=(2, 3)),
    ],
    complex=True,
)
def broadcast_to(array, shape):
    def jvp(d):
        return np.broadcast_to(d, shape)

    def vjp(g):
        return rt.unbroadcast(g, array)


# -- new axes ---------------------------------------------------------------------------------
@rule(
    np.expand_dims,
    view=True,
    examples=[
        example("np.expand_dims(a, 0)", a=(3, 4), f32=True),
        example("np.expand_dims(a, (0, -1))", a=(3,)),
        example("np.expand_dims(a, 0)", a=None),
    ],
    complex=True,
)
def expand_dims(a, axis):
    def jvp(da):
        return np.expand_dims(da, axis)

    def bjvp(da):  # (the result's axes: as many as a's and axis's together)
        return np.expand_dims(da, rt.batch_axis(axis, np.ndim(a) + np.size(axis)))

    def vjp(g):
        return np.reshape(g, np.shape(a))


@rule(
    np.atleast_1d,
    view=True,
    examples=[
        example("np.atleast_1d(a)", a=None),
        example("np.atleast_1d(a)", a=(), f32=True),
        example("np.atleast_1d(a)", a=(3, 2)),
    ],
    complex=True,
)
def atleast_1d(arys):
    """One array only (``np.atleast_1d(a, b)`` returns a list: refused)."""

    def jvp(d):
        return np.atleast_1d(d)

    def vjp(g):
        return np.reshape(g, np.shape(arys))


@rule(
    np.atleast_2d,
    view=True,
    examples=[
        example("np.atleast_2d(a)", a=(3,), f32=True),
        example("np.atleast_2d(a)", a=None),
        example("np.atleast_2d(a)", a=(2, 3, 2)),
    ],
    complex=True,
)
def atleast_2d(arys):
    def jvp(d):
        return np.atleast_2d(d)

    def vjp(g):
        return np.reshape(g, np.shape(arys))


@rule(
    np.atleast_3d,
    view=True,
    examples=[
        example("np.atleast_3d(a)", a=(3,), f32=True),
        example("np.atleast_3d(a)", a=(2, 3)),
        example("np.atleast_3d(a)", a=()),
    ],
    complex=True,
)
def atleast_3d(arys):
    def jvp(d):
        return np.atleast_3d(d)

    def vjp(g):
        return np.reshape(g, np.shape(arys))


# -- identities -------------------------------------------------------------------------------
@rule(
    np.asarray,
    np.asanyarray,
    # the array API's cast, x.astype(dtype) as a function (NumPy 2.1 and later): its dtype
    # is asarray's second argument, copy=False may return x itself
    *([np.astype] if hasattr(np, "astype") else []),
    view=True,
    examples=[
        example("np.asarray(a) * 2.0", a=(3, 4), f32=True),
        *(
            [
                example("np.astype(a, np.float64) * 2.0", a=(3, 2), f32=True, complex=False),
                example("np.astype(a, float, copy=False) * a", a=(4,), complex=False),
                example("np.astype(a, np.complex128) * 1j", a=(3,), complex=False),
            ]
            if hasattr(np, "astype")
            else []
        ),
        # (a complex array cast to float64: NumPy warns that it drops the imaginary part)
        example("np.asarray(a, dtype=np.float64)", a=(3,), f32=True, complex=False),
        example("np.asarray(a, dtype=np.complex128) * 1j", a=(3,)),
        example("np.asarray(a)", a=None),
        example("np.asanyarray(a) * 2.0", a=(3, 4), f32=True),
        example("np.asanyarray(a, np.float64)", a=(3,), complex=False),
        example("np.asarray(a, order='F', copy=True) * 2.0", a=(3, 2)),
    ],
    complex=True,
)
def asarray(ans, a, dtype=None, order=None, device=None, copy=None):
    """The identity (a cast to an integer dtype has derivative 0); for the ndarrays adgen
    handles, np.asanyarray is np.asarray. A complex value cast to a real dtype keeps its
    real part, a real one cast to a complex dtype is embedded (its cotangent: the real
    part, ``rt.real_like``). ``order``, ``device`` and ``copy`` change where the values
    are, not what they are (a copy is still taken for a view: in-place writes into the
    result are checked as for ``a`` itself)."""

    def jvp(da):
        if dtype is None:
            return np.asarray(da)
        if rt.known_real(a):
            return (
                np.asarray(da, dtype=dtype)
                if np.issubdtype(dtype, np.inexact)
                else np.zeros(np.shape(ans))
            )
        return (
            np.asarray(rt.real_like(da, ans), dtype=dtype)
            if np.issubdtype(dtype, np.inexact)
            else np.zeros(np.shape(ans))
        )

    def bjvp(da):  # (a batch of tangents as it is, or cast to a floating dtype)
        if dtype is None:
            return np.asarray(da)
        if rt.known_real(a) and np.issubdtype(dtype, np.inexact):
            return np.asarray(da, dtype=dtype)
        return None

    def vjp(g):
        if dtype is None:
            return g
        if rt.known_real(ans):
            return (
                np.asarray(g, dtype=rt.dtype_of(a))
                if np.issubdtype(dtype, np.inexact)
                else np.zeros(np.shape(a), dtype=rt.dtype_of(a))
            )
        return (
            np.asarray(rt.real_like(g, a), dtype=rt.dtype_of(a))
            if np.issubdtype(dtype, np.inexact)
            else np.zeros(np.shape(a), dtype=rt.dtype_of(a))
        )


@rule(
    np.ascontiguousarray,
    view=True,
    examples=[
        example("np.ascontiguousarray(a.T) * 2.0", a=(3, 4), f32=True),
        example("np.ascontiguousarray(a)", a=None),
    ],
    complex=True,
)
def ascontiguousarray(ans, a, dtype=None):
    """At least 1-d: a Python float becomes an array of one entry."""

    def jvp(da):
        if dtype is None:
            return np.ascontiguousarray(da)
        return (
            np.ascontiguousarray(da, dtype=dtype)
            if np.issubdtype(dtype, np.inexact)
            else np.zeros(np.shape(ans))
        )

    def vjp(g):
        if dtype is None:
            return np.reshape(g, np.shape(a))
        return (
            np.reshape(np.asarray(g, dtype=rt.dtype_of(a)), np.shape(a))
            if np.issubdtype(dtype, np.inexact)
            else np.zeros(np.shape(a), dtype=rt.dtype_of(a))
        )


@rule(
    np.require,
    view=True,
    examples=[
        example("np.require(a, requirements=['C']) * 2.0", a=(3, 4), f32=True),
        example("np.require(a.T, None, 'F')", a=(3, 4)),
        example("np.require(a, requirements=('A', 'O'))", a=(3,)),
        example("np.require(a)", a=None),
    ],
    complex=True,
)
def require(ans, a, dtype=None, requirements=None):
    """``a`` as an array with the memory layout asked for (a copy where it is not so): the
    identity, cast to ``dtype`` where one is given (statsmodels' ``mad``)."""

    def jvp(da):
        if dtype is None:
            return np.require(da, None, requirements)
        return (
            np.require(da, dtype, requirements)
            if np.issubdtype(dtype, np.inexact)
            else np.zeros(np.shape(ans))
        )

    def vjp(g):
        if dtype is None:
            return np.reshape(g, np.shape(a))
        return (
            np.reshape(np.asarray(g, dtype=rt.dtype_of(a)), np.shape(a))
            if np.issubdtype(dtype, np.inexact)
            else np.zeros(np.shape(a), dtype=rt.dtype_of(a))
        )


# -- stacking ---------------------------------------------------------------------------------
@sequence_rule(
    np.dstack,
    sequence="tup",
    examples=[
        example("np.dstack((a, b))", a=(3, 4), b=(3, 4), f32=True),
        example("np.dstack([a, b, a])", a=(4,), b=(4,)),
        example("np.dstack((a, b))", a=(2, 3, 2), b=(2, 3)),
        example("np.dstack((a, b, 1.0))", a=None, b=()),
    ],
    complex=True,
)
def dstack(tup):
    def jvp(parts):
        return np.dstack(parts)

    def vjp(g, k):
        return rt.concatenated_part(g, tup, k, join="dstack")


@sequence_rule(
    np.column_stack,
    sequence="tup",
    examples=[
        example("np.column_stack((a, b))", a=(4,), b=(4,), f32=True),
        example("np.column_stack((a, b, a))", a=(3,), b=(3, 2)),
        example("np.column_stack([a, b])", a=(3, 2), b=(3, 4)),
        example("np.column_stack((a, 1.0, b))", a=None, b=()),
        example("np.column_stack(a)", a=(2, 3)),
    ],
    complex=True,
)
def column_stack(tup):
    def jvp(parts):
        return np.column_stack(parts)

    def vjp(g, k):
        return rt.concatenated_part(g, tup, k, join="column_stack")


# -- splits: one result per piece -------------------------------------------------------------
def _pieces(static):
    """How many arrays np.split & co. return: the number of sections, or one more than the
    number of split points."""
    sections = static["indices_or_sections"]
    if isinstance(sections, (tuple, list)):
        return len(sections) + 1
    return operator.index(sections)


@rule(
    np.split,
    view=True,
    outputs=_pieces,
    result_list=True,
    examples=[
        example("np.split(a, 3)[1]", a=(6,), f32=True),
        example("np.split(a, [1, 3], axis=1)[2]", a=(2, 5)),
        example("np.split(a, 2, axis=-1)[0] * np.split(a, 2, axis=-1)[1]", a=(2, 3, 4)),
        example("np.split(a, 1)[0]", a=(3,)),
        example("np.split(a, [])[0]", a=(2, 3)),
        example("np.stack(np.split(a, 2, axis=1))", a=(2, 4, 3)),
        example("np.hstack(np.split(a, [2, 3]))", a=(5,)),
    ],
    complex=True,
)
def split(ary, indices_or_sections, axis=0):
    def jvp(d):
        return np.split(d, indices_or_sections, axis=axis)

    def vjp(g):
        return np.concatenate(g, axis=axis)


@rule(
    np.array_split,
    view=True,
    outputs=_pieces,
    result_list=True,
    examples=[
        example("np.array_split(a, 3)[0]", a=(7,), f32=True),
        example("np.array_split(a, 2, axis=1)[1]", a=(2, 5)),
        example("np.array_split(a, [2])[0] + 2.0 * np.array_split(a, [2])[1]", a=(4, 3)),
        example("np.array_split(a, 1)[0]", a=(4,)),
        example("np.array_split(a, 4)[3]", a=(7,)),
        example("np.concatenate(np.array_split(a, [1, 3], axis=2), axis=2)", a=(2, 2, 5)),
    ],
    complex=True,
)
def array_split(ary, indices_or_sections, axis=0):
    def jvp(d):
        return np.array_split(d, indices_or_sections, axis=axis)

    def vjp(g):
        return np.concatenate(g, axis=axis)


@rule(
    np.vsplit,
    view=True,
    outputs=_pieces,
    result_list=True,
    examples=[
        example("np.vsplit(a, 2)[1]", a=(4, 3), f32=True),
        example("np.vsplit(a, [1])[0] * np.vsplit(a, [1])[1][0]", a=(2, 3, 2)),
        example("np.vsplit(a, [1, 3])[1]", a=(4, 2, 2)),
        example("np.vsplit(a, 1)[0]", a=(2, 3)),
    ],
    complex=True,
)
def vsplit(ary, indices_or_sections):
    def jvp(d):
        return np.vsplit(d, indices_or_sections)

    def vjp(g):
        return np.vstack(g)


@rule(
    np.hsplit,
    view=True,
    outputs=_pieces,
    result_list=True,
    examples=[
        example("np.hsplit(a, 2)[1]", a=(3, 4), f32=True),
        example("np.hsplit(a, [1, 4])[1]", a=(6,)),
        example("np.hsplit(a, 3)[2]", a=(2, 3, 2)),
        example("np.hsplit(a, 1)[0]", a=(2, 2)),
        example("np.hstack(np.hsplit(a, [1, 3]))", a=(2, 4)),
    ],
    complex=True,
)
def hsplit(ary, indices_or_sections):
    def jvp(d):
        return np.hsplit(d, indices_or_sections)

    def vjp(g):
        return np.hstack(g)


@rule(
    np.dsplit,
    view=True,
    outputs=_pieces,
    result_list=True,
    examples=[
        example("np.dsplit(a, 2)[0]", a=(2, 3, 4), f32=True),
        example("np.dsplit(a, [1, 2])[2]", a=(2, 2, 4)),
        example("np.dsplit(a, 1)[0]", a=(1, 2, 3)),
        example("np.dstack(np.dsplit(a, [1]))", a=(2, 2, 3)),
    ],
    complex=True,
)
def dsplit(ary, indices_or_sections):
    def jvp(d):
        return np.dsplit(d, indices_or_sections)

    def vjp(g):
        return np.dstack(g)


# -- padding, appending, inserting, deleting --------------------------------------------------
@rule(
    np.pad,
    examples=[
        example("np.pad(a, 1)", a=(3, 4), f32=True),
        example("np.pad(a, ((1, 0), (2, 3)), constant_values=2.5)", a=(3, 4)),
        example("np.pad(a, (2, 1), 'edge')", a=(4,), f32=True),
        example("np.pad(a, ((2, 1), (0, 3)), mode='reflect')", a=(3, 4)),
        example("np.pad(a, 5, mode='reflect')", a=(3,)),
        example("np.pad(a, ((1, 1), (3, 2)), mode='symmetric')", a=(2, 3)),
        example("np.pad(a, (1, 4), mode='wrap')", a=(2, 3)),
    ],
    complex=True,
)
def pad(array, pad_width, mode="constant", constant_values=0):
    """Modes ``constant`` (the constants carry no derivative), ``edge``, ``reflect``,
    ``symmetric`` and ``wrap``; other modes raise ``NotImplementedError``."""

    def jvp(d):
        if mode == "constant":
            return np.pad(d, pad_width)
        if mode == "edge" or mode == "reflect" or mode == "symmetric" or mode == "wrap":
            return np.pad(d, pad_width, mode=mode)
        return np.pad(d, pad_width, mode=rt.copying_pad_mode(mode))  # raises

    def vjp(g):
        if mode == "constant":
            return g[rt.pad_interior(np.shape(array), pad_width)]
        if mode == "edge" or mode == "reflect" or mode == "symmetric" or mode == "wrap":
            return rt.gathered_vjp(g, array, np.pad(rt.source_index(array), pad_width, mode=mode))
        return rt.gathered_vjp(
            g, array, np.pad(rt.source_index(array), pad_width, mode=rt.copying_pad_mode(mode))
        )


# the index of the interior and the name of a copying mode: no derivative
nondifferentiable(rt.pad_interior, rt.copying_pad_mode)


@rule(
    np.append,
    examples=[
        example("np.append(a, b)", a=(2, 3), b=(3,), f32=True),
        example("np.append(a, b, axis=0)", a=(2, 3), b=(1, 3)),
        example("np.append(a, b, axis=-1)", a=(2, 3), b=(2, 2)),
        example("np.append(a, b)", a=(3,), b=None),
    ],
    complex=True,
)
def append(arr, values, axis=None):
    def jvp_arr(da):
        return np.append(da, np.zeros_like(values, dtype=rt.dtype_of(da)), axis=axis)

    def jvp_values(dv):
        return np.append(np.zeros_like(arr, dtype=rt.dtype_of(dv)), dv, axis=axis)

    def vjp_arr(g):
        if axis is None:
            return np.reshape(g[: math.prod(np.shape(arr))], np.shape(arr))
        return rt.concatenated_part(g, (arr, values), 0, axis)

    def vjp_values(g):
        if axis is None:
            return np.reshape(g[math.prod(np.shape(arr)) :], np.shape(values))
        return rt.concatenated_part(g, (arr, values), 1, axis)


@rule(
    np.delete,
    examples=[
        example("np.delete(a, 1)", a=(2, 3), f32=True),
        example("np.delete(a, [0, 2], axis=1)", a=(2, 4)),
        example("np.delete(a, (0, 3), axis=0)", a=(4, 2)),
        example("np.delete(a, -1, axis=-1)", a=(2, 2, 3)),
    ],
    complex=True,
)
def delete(arr, obj, axis=None):
    def jvp(da):
        return np.delete(da, obj, axis=axis)

    def vjp(g):
        return rt.gathered_vjp(g, arr, np.delete(rt.source_index(arr), obj, axis=axis))


@rule(
    np.insert,
    examples=[
        example("np.insert(a, 1, b)", a=(4,), b=None, f32=True),
        example("np.insert(a, [0, 2], b)", a=(2, 3), b=(2,)),
        example("np.insert(a, 1, b, axis=1)", a=(2, 3), b=(2,)),
        example("np.insert(a, [1, 1, 3], b, axis=0)", a=(3, 2), b=(3, 2)),
        example("np.insert(a, 2, b, axis=0)", a=(3, 2), b=(2, 2), f32=True),
    ],
    complex=True,
)
def insert(arr, obj, values, axis=None):
    def jvp_arr(da):
        return np.insert(da, obj, np.zeros_like(values, dtype=rt.dtype_of(da)), axis=axis)

    def jvp_values(dv):
        return rt.inserted_tangent(arr, obj, dv, axis)

    def vjp_arr(g):
        return rt.gathered_vjp(
            g,
            arr,
            np.insert(
                rt.source_index(arr), obj, np.zeros(np.shape(values), dtype=np.int64), axis=axis
            ),
        )

    def vjp_values(g):
        return rt.inserted_values_vjp(g, arr, obj, values, axis)


@rule(
    rt.inserted_tangent,
    examples=[
        example("rt.inserted_tangent(a, 1, d)", a=(4,), d=None, f32=True),
        example("rt.inserted_tangent(a, [0, 2], d)", a=(2, 3), d=(2,)),
        example("rt.inserted_tangent(a, 1, d, axis=1)", a=(2, 3), d=(2,)),
        example("rt.inserted_tangent(a, [1, 1, 3], d, 0)", a=(3, 2), d=(3, 2)),
        example("rt.inserted_tangent(a, 2, d, 0)", a=(3, 2), d=(2, 2)),
        example("rt.inserted_tangent(np.arange(4), 1, d)", d=()),
    ],
    complex=True,
)
def inserted_tangent(ans, arr, obj, dvalues, axis=None):
    """Linear in ``dvalues`` (zero into an integer ``arr``); the transpose is
    ``rt.inserted_values_vjp``. ``arr`` only gives the shape and dtype."""

    def jvp_arr(da):
        return rt.zeros_like(ans)

    def jvp_dvalues(dv):
        return rt.inserted_tangent(arr, obj, dv, axis)

    def vjp_arr(c):
        return rt.zeros_like(arr)

    def vjp_dvalues(c):
        return rt.inserted_values_vjp(c, arr, obj, dvalues, axis)


@rule(
    rt.inserted_values_vjp,
    examples=[
        example("rt.inserted_values_vjp(g, a, 1, v)", g=(5,), a=(4,), v=None, f32=True),
        example("rt.inserted_values_vjp(g, a, [0, 2], v)", g=(8,), a=(2, 3), v=(2,)),
        example("rt.inserted_values_vjp(g, a, 1, v, 1)", g=(2, 4), a=(2, 3), v=(2,)),
        example("rt.inserted_values_vjp(g, a, [1, 1, 3], v, 0)", g=(6, 2), a=(3, 2), v=(3, 2)),
        example("rt.inserted_values_vjp(g, a, 2, v, axis=0)", g=(5, 2), a=(3, 2), v=(2, 2)),
        example("rt.inserted_values_vjp(g, np.arange(4), 1, v)", g=(5,), v=()),
    ],
    complex=True,
)
def inserted_values_vjp(ans, g, arr, obj, values, axis=None):
    """Linear in ``g`` (zero for an integer ``arr``): the transpose puts the values' cotangent
    into the slots again (``rt.inserted_tangent``). ``arr`` and ``values`` only give shapes
    and dtypes."""

    def jvp_g(dg):
        return rt.inserted_values_vjp(dg, arr, obj, values, axis)

    def jvp_arr(da):
        return rt.zeros_like(ans)

    def jvp_values(dv):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(rt.inserted_tangent(arr, obj, c, axis), g)

    def vjp_arr(c):
        return rt.zeros_like(arr)

    def vjp_values(c):
        return rt.zeros_like(values)


# -- diagonals and triangles ------------------------------------------------------------------
@rule(
    np.diag,
    view=True,
    examples=[
        example("np.diag(a)", a=(3,), f32=True),
        example("np.diag(a, 1)", a=(3,)),
        example("np.diag(a, k=-1)", a=(3, 4), f32=True),
        example("np.diag(a)", a=(4, 3)),
    ],
    complex=True,
)
def diag(v, k=0):
    def jvp(dv):
        return np.diag(dv, k)

    def vjp(g):
        return rt.gathered_vjp(g, v, np.diag(rt.source_index(v), k))


@rule(
    np.diagonal,
    view=True,
    examples=[
        example("np.diagonal(a)", a=(3, 4), f32=True),
        example("np.diagonal(a, 1)", a=(3, 4)),
        example("np.diagonal(a, -1, 1, 2)", a=(2, 3, 3)),
        example("np.diagonal(a, offset=1, axis1=2, axis2=0)", a=(3, 2, 4)),
        example("a.diagonal(0, -2, -1)", a=(2, 3, 3)),
    ],
    complex=True,
)
def diagonal(a, offset=0, axis1=0, axis2=1):
    def jvp(da):
        return np.diagonal(da, offset, axis1, axis2)

    def vjp(g):
        return rt.gathered_vjp(g, a, np.diagonal(rt.source_index(a), offset, axis1, axis2))


@rule(
    np.diagflat,
    examples=[
        example("np.diagflat(a)", a=(3,), f32=True),
        example("np.diagflat(a, -2)", a=(2, 2)),
        example("np.diagflat(a, k=1)", a=None),
    ],
    complex=True,
)
def diagflat(v, k=0):
    def jvp(dv):
        return np.diagflat(dv, k)

    def vjp(g):
        return rt.gathered_vjp(g, v, np.diagflat(rt.source_index(v), k))


@rule(
    np.tril,
    examples=[
        example("np.tril(a)", a=(3, 4), f32=True),
        example("np.tril(a, -1)", a=(2, 3, 3)),
        example("np.tril(a, k=2)", a=(4,)),
    ],
    complex=True,
)
def tril(m, k=0):
    def jvp(dm):
        return np.tril(dm, k)

    def vjp(g):
        return rt.unbroadcast(np.tril(g, k), m)


@rule(
    np.triu,
    examples=[
        example("np.triu(a)", a=(3, 4), f32=True),
        example("np.triu(a, 1)", a=(2, 3, 3)),
        example("np.triu(a, k=-1)", a=(4,)),
    ],
    complex=True,
)
def triu(m, k=0):
    def jvp(dm):
        return np.triu(dm, k)

    def vjp(g):
        return rt.unbroadcast(np.triu(g, k), m)


methods(swapaxes=np.swapaxes, repeat=np.repeat, diagonal=np.diagonal)
