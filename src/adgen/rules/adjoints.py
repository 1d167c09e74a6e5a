"""Derivatives of adgen's own runtime helpers (``rt.*`` in generated code).

Second derivatives differentiate the code adgen generated (a Hessian is forward mode over
the reverse-mode code), and that code calls :mod:`adgen.runtime`. The rules here make those
calls differentiable again instead of having adgen read the helpers' source.

Conventions:

* A ``*_vjp`` helper is linear in its cotangent ``g``: its tangent is the helper applied to
  ``dg``, and its cotangent is the transpose of that linear map (a NumPy function, or one
  of the ``rt`` helpers of :mod:`adgen.rules.runtime.adjoints`).
* Arguments that only give a shape (``x`` in ``rt.unbroadcast(g, x)``) have derivative 0.
* The masks of ``np.max``/``np.min`` (``rt.minmax_vjp``) are piecewise constant in the
  array and its extremum: derivative 0 there, like ``np.sign``.
* ``rt.zeros_like`` is a constant.
* Helpers not registered here are refused by name (``NoRuleError``), never guessed.
"""

import math

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import (
    accumulates_at,
    nondifferentiable,
    refused_derivative,
    rule,
    sequence_rule,
    writes_into,
)
from adgen.rules.samples import DISTINCT, NONZERO, Arg, example

# ``slice(1, None)``: generated code passes indices as values (``rt.getitem_vjp(g, x,
# (slice(None), None))``); a slice object carries no derivative.
nondifferentiable(rt.zeros_like, slice)
# a call run as written, given an object the function stored values into, may give them back
# (``vars(self)["W"]``): no derivative passes through it
refused_derivative(
    rt.read_back,
    reason="reading back, through a call adgen runs as written (`vars(obj)`, a library's "
    "function given the object), a differentiated value the function stored into an object "
    "made outside",
)
# ``rt.Like(x)``: the shape and dtype reverse mode keeps of x
# (adgen.backend.codeopt.keep_shapes_only)
nondifferentiable(rt.Like)
# ... and what reverse mode saves in a loop of a value read back for its shape and kind
# (adgen.backend.codeopt.save_shapes_only)
nondifferentiable(rt.saved_shape)
# the dtype of a value as an array (templates: np.result_type reads a list as fields)
nondifferentiable(rt.dtype_of)
# a mask (np.select's "no condition holds"): piecewise constant
nondifferentiable(rt.select_otherwise)
# is a value complex? (the kind rt.real_like projects for)
nondifferentiable(rt.is_complex, rt.is_inexact)
# does array-api-compat's clip compute np.clip's numbers here? (checked where it runs)
nondifferentiable(rt.bounds_kept)
# a checkpointed loop's segment length (an integer); integers numbering an array's entries
# (they depend on its shape only); an axis number
nondifferentiable(rt.checkpoint_every, rt.source_index, rt.rollaxis_destination, rt.diagonal_index)
nondifferentiable(rt.inverse_axes)  # (the axes undoing a transpose)
nondifferentiable(rt.joined_items)  # (a shape: x.reshape(*y.shape, -1))
nondifferentiable(rt.flat_index)  # (a.flat[k]'s positions: a's shape and k)
nondifferentiable(rt.ravel_axes, rt.index_order, rt.distance_metric, rt.accumulates_in)
# functions writing into their first argument, as statements: writes a[positions] = v
nondifferentiable(rt.put_index, rt.along_axis_index)
writes_into(  # np.fill_diagonal(a, v): a[rt.diagonal_index(a)] = v
    np.fill_diagonal, rt.diagonal_index, ("a", "val", "wrap"), "val", fixed={"wrap": False}
)
writes_into(  # np.copyto(a, v): a[...] = v (`casting` decides only whether NumPy raises)
    np.copyto, None, ("dst", "src", "casting", "where"), "src", ignored=("casting",),
    fixed={"where": True},
)  # fmt: skip
writes_into(  # np.put(a, ind, v): a.flat[ind] = v
    np.put, rt.put_index, ("a", "ind", "v", "mode"), "v", ("ind",), fixed={"mode": "raise"}
)
writes_into(  # np.put_along_axis(a, indices, v, axis)
    np.put_along_axis, rt.along_axis_index, ("arr", "indices", "values", "axis"), "values",
    ("indices", "axis"),
)  # fmt: skip
writes_into(  # np.putmask(a, mask, v): a[...] = rt.putmasked(a, mask, v) (v repeated)
    np.putmask, None, ("a", "mask", "values"), "values", ("mask",), through=rt.putmasked
)
# np.add.at(a, index, b), np.subtract.at: a[...] = rt.added_at(a, index, b)
accumulates_at(np.add, rt.added_at)
accumulates_at(np.subtract, rt.subtracted_at)


@rule(
    rt.real_like,
    complex=True,
    examples=[
        example("rt.real_like(x * y, x)", x=(3,), y=(3,), complex=("y",)),
        example("rt.real_like(x * y, x)", x=(3,), y=(3,)),
    ],
)
def real_like(ans, g, x):
    """The real part of ``g`` if ``x`` is real, else ``g``: linear in ``g``; for a real
    ``x`` its transpose embeds the (real) cotangent in the complex numbers, which is the
    cotangent itself. It only reads ``x``'s dtype (derivative 0)."""

    def jvp_g(d):
        return rt.real_like(d, x)

    bjvp_g = jvp_g  # noqa: F841 - read by the registry

    def jvp_x(d):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return c

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    rt.copy_of,
    examples=[example("rt.copy_of(x) * x", x=(3,)), example("rt.copy_of(x)", x=())],
    complex=True,
)
def copy_of(x):
    """A copy: the identity (as ``np.copy``)."""

    def jvp_x(d):
        return rt.copy_of(d)

    bjvp_x = jvp_x  # noqa: F841 - read by the registry

    def vjp_x(g):
        return g


@rule(
    rt.writable,
    examples=[example("rt.writable(x) * x", x=(3,)), example("rt.writable(x) * 2.0", x=())],
    complex=True,
)
def writable(x):
    """``x``, or a 0-d array of a number: the identity."""

    def jvp_x(d):
        return rt.writable(d)

    bjvp_x = jvp_x  # noqa: F841 - read by the registry

    def vjp_x(g):
        return g


# -- broadcasting and reductions ---------------------------------------------------------------
@rule(
    rt.distinct,
    examples=[
        example('rt.distinct(w, "np.linalg.eigh") ** 2', w=Arg((4,), DISTINCT)),
        example('rt.distinct(w, "np.linalg.svd", nonzero=True) * w', w=Arg((2, 3), DISTINCT)),
    ],
    complex=True,
)
def distinct(values, what, nonzero=False):
    """The values themselves (after a check that raises at repeated values): identity."""

    def jvp_values(d):
        return d

    def vjp_values(g):
        return g


@rule(
    rt.unbroadcast,
    examples=[
        example("rt.unbroadcast(g, x)", g=(3, 4), x=(4,)),
        example("rt.unbroadcast(g, x)", g=(3, 4), x=(3, 1), f32=True),
        example("rt.unbroadcast(g, x)", g=(2, 3), x=()),
        example("rt.unbroadcast(g, x)", g=(4,), x=(2, 4)),
        example("rt.unbroadcast(g, x)", g=(2, 3), x=(2, 3)),
    ],
    complex=True,
)
def unbroadcast(ans, g, x):
    """Linear in ``g`` (a sum to ``x``'s shape); ``x`` only gives the shape."""

    def jvp_g(dg):
        return rt.unbroadcast(dg, x)

    def bjvp_g(dg):
        return rt.batched_unbroadcast(dg, x)

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(c, g)

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    rt.rebroadcast,
    examples=[
        example("rt.rebroadcast(c, g)", c=(4,), g=(3, 4)),
        example("rt.rebroadcast(c, g)", c=(3, 1), g=(3, 4)),
        example("rt.rebroadcast(c, g)", c=(2, 4), g=(4,)),
        example("rt.rebroadcast(c, g)", c=(3, 4), g=(1, 4)),
    ],
    complex=True,
)
def rebroadcast(ans, c, g):
    """Linear in ``c`` (broadcast or summed to ``g``'s shape, its own transpose's mirror)."""

    def jvp_c(dc):
        return rt.rebroadcast(dc, g)

    def bjvp_c(dc):
        return rt.batched_unbroadcast(dc, g)

    def jvp_g(dg):
        return rt.zeros_like(ans)

    def vjp_c(h):
        return rt.rebroadcast(h, c)

    def vjp_g(h):
        return rt.zeros_like(g)


@rule(
    rt.unreduce,
    examples=[
        example("rt.unreduce(g, x)", g=(), x=(3, 4)),
        example("rt.unreduce(g, x, axis=0)", g=(4,), x=(3, 4), f32=True),
        example("rt.unreduce(g, x, axis=(0, 2), keepdims=True)", g=(1, 3, 1), x=(2, 3, 4)),
        example("rt.unreduce(g, x, axis=-1)", g=(2, 3), x=(2, 3, 4)),
    ],
    complex=True,
)
def unreduce(ans, g, x, axis=None, keepdims=False):
    """``g`` broadcast back over the reduced axes: the transpose is ``np.sum``."""

    def jvp_g(dg):
        return rt.unreduce(dg, x, axis=axis, keepdims=keepdims)

    def bjvp_g(dg):
        return rt.batched_unreduce(dg, x, axis=axis, keepdims=keepdims)

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(np.sum(c, axis=axis, keepdims=keepdims), g)

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    rt.mean_vjp,
    examples=[
        example("rt.mean_vjp(g, x)", g=(), x=(3, 4)),
        example("rt.mean_vjp(g, x, axis=1)", g=(3,), x=(3, 4), f32=True),
        example("rt.mean_vjp(g, x, axis=0, keepdims=True)", g=(1, 4), x=(3, 4)),
    ],
    complex=True,
)
def mean_vjp(ans, g, x, axis=None, keepdims=False):
    """``g`` spread evenly over the reduced axes: the transpose is ``np.mean``."""

    def jvp_g(dg):
        return rt.mean_vjp(dg, x, axis=axis, keepdims=keepdims)

    def bjvp_g(dg):
        share = math.prod(np.shape(g)) / math.prod(np.shape(x))
        return rt.batched_unreduce(dg, x, axis=axis, keepdims=keepdims) * share

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(np.mean(c, axis=axis, keepdims=keepdims), g)

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    rt.minmax_vjp,
    examples=[
        example("rt.minmax_vjp(g, np.max(x), x)", g=(), x=Arg((3, 4), DISTINCT)),
        example("rt.minmax_vjp(g, np.min(x, axis=0), x, axis=0)", g=(4,), x=Arg((3, 4), DISTINCT)),
        example(
            "rt.minmax_vjp(g, np.max(x, axis=1, keepdims=True), x, axis=1, keepdims=True)",
            g=(3, 1),
            x=Arg((3, 4), DISTINCT),
        ),
        example("rt.minmax_vjp(g, np.max(x, axis=1), x, axis=1)", g=(3,), x=Arg((3, 4), DISTINCT)),
    ],
    complex=True,
)
def minmax_vjp(g, extremum, x, axis=None, keepdims=False):
    """Linear in ``g``; the mask of the extrema is piecewise constant in ``x`` and the
    extremum (derivative 0 there, as for ``np.sign``)."""

    def jvp_g(dg):
        return rt.minmax_vjp(dg, extremum, x, axis=axis, keepdims=keepdims)

    def jvp_extremum(de):
        return rt.zeros_like(x)

    def jvp_x(dx):
        return rt.zeros_like(x)

    def vjp_g(c):
        return rt.rebroadcast(
            np.sum(
                rt.minmax_vjp(np.ones_like(extremum), extremum, x, axis=axis, keepdims=keepdims)
                * c,
                axis=axis,
                keepdims=keepdims,
            ),
            g,
        )

    def vjp_extremum(c):
        return rt.zeros_like(extremum)

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    rt.prod_vjp,
    examples=[
        example("rt.prod_vjp(g, np.array([2.0, 0.0, 4.0]))", g=()),
        example("rt.prod_vjp(g, np.array([[1.0, 2.0, 0.5], [0.0, 3.0, -1.0]]), axis=1)", g=(2,)),
        example("rt.prod_vjp(g, x)", g=(), x=(4,)),
        example("rt.prod_vjp(g, x, axis=1)", g=(2,), x=(2, 3), f32=True),
        example("rt.prod_vjp(g, x, axis=(0, 2), keepdims=True)", g=(1, 3, 1), x=(2, 3, 2)),
    ],
    complex=True,
)
def prod_vjp(g, x, axis=None, keepdims=False):
    """Linear in ``g``. In ``x`` it is ``g`` times the gradient of the product, whose
    derivative is the product's Hessian (``rt.prod_hvp``: products of all the entries but
    two, symmetric, so it is its own transpose)."""

    def jvp_g(dg):
        return rt.prod_vjp(dg, x, axis=axis, keepdims=keepdims)

    def jvp_x(dx):
        return rt.unreduce(g, x, axis=axis, keepdims=keepdims) * rt.prod_hvp(x, dx, axis=axis)

    def vjp_x(c):
        return rt.prod_hvp(x, c * rt.unreduce(g, x, axis=axis, keepdims=keepdims), axis=axis)

    def vjp_g(c):
        return rt.rebroadcast(
            np.sum(
                rt.prod_vjp(np.ones_like(g), x, axis=axis, keepdims=keepdims) * c,
                axis=axis,
                keepdims=keepdims,
            ),
            g,
        )


@rule(
    rt.prod_hvp,
    examples=[
        example("rt.prod_hvp(np.array([2.0, 0.0, 4.0, 0.5]), w)", w=(4,)),
        example("rt.prod_hvp(np.array([[1.0, 2.0, 0.5], [0.0, 3.0, -1.0]]), w, axis=1)", w=(2, 3)),
        example("rt.prod_hvp(x, w)", x=(4,), w=(4,), f32=True),
        example("rt.prod_hvp(x, w, axis=1)", x=(2, 3), w=(2, 3)),
        example("rt.prod_hvp(x, w, axis=(0, 2))", x=(2, 3, 2), w=(2, 3, 2)),
        example("rt.prod_hvp(x, w)", x=(2, 3), w=(2, 3)),
    ],
    complex=True,
)
def prod_hvp(x, w, axis=None):
    """Linear and self-adjoint in ``w``. In ``x``, the product's third derivative (products
    of all the entries but three), symmetric, so its own transpose: written with the scans of
    ``rt.linear_recurrence`` (E from the first entry of each group, Er from the last, whose
    derivatives are scans again), exact with zeros. With L and R the products of the entries
    before and after each one, ``prod_hvp(x, w) = E(w L) R + L Er(w R)``."""

    def jvp_w(dw):
        return rt.prod_hvp(x, dw, axis=axis)

    def jvp_x(d):
        low = rt.linear_recurrence(x, 0.0, axis, initial=1.0)
        high = rt.linear_recurrence(x, 0.0, axis, True, 1.0)
        low_w = rt.linear_recurrence(x, w * low, axis)
        high_w = rt.linear_recurrence(x, w * high, axis, True)
        low_d = rt.linear_recurrence(x, d * low, axis)
        high_d = rt.linear_recurrence(x, d * high, axis, True)
        return (
            rt.linear_recurrence(x, w * low_d + d * low_w, axis) * high
            + low_w * high_d
            + low_d * high_w
            + low * rt.linear_recurrence(x, w * high_d + d * high_w, axis, True)
        )

    # symmetric in w and in x (a trilinear form's derivatives): each is its own transpose
    vjp_w = jvp_w  # noqa: F841 - read by the registry
    vjp_x = jvp_x  # noqa: F841


# -- singular points ---------------------------------------------------------------------------
@rule(
    rt.zero_safe,
    examples=[
        example("rt.zero_safe(x * y, y)", x=(3, 4), y=(3, 4), f32=True),
        example("rt.zero_safe(x * y, y)", x=(3, 4), y=(4,)),
        example("rt.zero_safe(x / y, x)", x=None, y=Arg(None, NONZERO)),
        example("rt.zero_safe(x * y, y)", x=(), y=()),
    ],
    complex=True,
)
def zero_safe(ans, r, seed):
    """``r`` with NaN set to 0 where ``seed`` is 0 (a singular rule's contribution): the
    identity in ``r`` except on that mask, where the derivative is 0; the mask is piecewise
    constant in ``r`` and ``seed`` (derivative 0 in ``seed``, like ``np.sign``). Where the
    mask is empty (no NaN) the second derivative is that of ``r`` itself."""

    def jvp_r(dr):
        return rt.zero_safe_tangent(dr, r, seed)

    bjvp_r = jvp_r  # noqa: F841 - read by the registry (entry by entry in dr)

    def jvp_seed(ds):
        return rt.zeros_like(ans)

    def vjp_r(c):
        return rt.zero_safe_tangent(c, r, seed)

    def vjp_seed(c):
        return rt.zeros_like(seed)


@rule(
    rt.zero_safe_tangent,
    examples=[
        example("rt.zero_safe_tangent(t, x * y, y)", t=(3, 4), x=(3, 4), y=(4,), f32=True),
        example("rt.zero_safe_tangent(t * x, x, y)", t=None, x=None, y=None),
    ],
    complex=True,
)
def zero_safe_tangent(ans, t, r, seed):
    """Linear in ``t`` with a 0/1 mask, its own transpose; the mask is piecewise constant."""

    def jvp_t(dt):
        return rt.zero_safe_tangent(dt, r, seed)

    bjvp_t = jvp_t  # noqa: F841 - read by the registry (entry by entry in dt)

    def jvp_r(dr):
        return rt.zeros_like(ans)

    def jvp_seed(ds):
        return rt.zeros_like(ans)

    def vjp_t(c):
        return rt.zero_safe_tangent(c, r, seed)

    def vjp_r(c):
        return rt.zeros_like(r)

    def vjp_seed(c):
        return rt.zeros_like(seed)


# -- indexing and writes -----------------------------------------------------------------------
@rule(
    rt.getitem_vjp,
    examples=[
        example("rt.getitem_vjp(g, x, (slice(1, None), slice(None, None, 2)))", g=(2, 2), x=(3, 4)),
        example("rt.getitem_vjp(g, x, np.array([0, 2, 0]))", g=(3, 4), x=(3, 4), f32=True),
        example("rt.getitem_vjp(g, x, 1)", g=(4,), x=(3, 4)),
        example("rt.getitem_vjp(g, x, (slice(None), None))", g=(4, 1), x=(4,)),
    ],
    complex=True,
)
def getitem_vjp(ans, g, x, index):
    """``g`` put at ``index`` (copies accumulating): the transpose reads ``c[index]``."""

    def jvp_g(dg):
        return rt.getitem_vjp(dg, x, index)

    def bjvp_g(dg):
        return rt.batched_getitem_vjp(dg, x, index)

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(c[index], g)

    def vjp_x(c):
        return rt.zeros_like(x)


@rule(
    rt.written,
    examples=[
        example("rt.written(g, np.array([0, 2, 0, 1]))", g=(3, 2), f32=True),
        example("rt.written(g, (slice(1, None), 0))", g=(3, 2)),
    ],
    complex=True,
)
def written(ans, g, index):
    """``g[index]`` with repeated writes masked: the transpose is :func:`rt.written_vjp`."""

    def jvp(dg):
        return rt.written(dg, index)

    def bjvp(dg):
        return rt.batched_written(dg, index)

    def vjp(c):
        return rt.written_vjp(c, g, index)


@rule(
    rt.written_vjp,
    examples=[
        example("rt.written_vjp(c, g, np.array([0, 2, 0, 1]))", c=(4, 2), g=(3, 2)),
        example("rt.written_vjp(c, g, (slice(1, None), 0))", c=(2,), g=(3, 2)),
    ],
    complex=True,
)
def written_vjp(ans, c, g, index):
    """Linear in ``c``, the transpose of :func:`rt.written`; ``g`` only gives the shape."""

    def jvp_c(dc):
        return rt.written_vjp(dc, g, index)

    def jvp_g(dg):
        return rt.zeros_like(ans)

    def vjp_c(h):
        return rt.rebroadcast(rt.written(h, index), c)

    def vjp_g(h):
        return rt.zeros_like(g)


@rule(
    rt.take_vjp,
    examples=[
        example("rt.take_vjp(g, a, np.array([0, 2, 0]))", g=(3,), a=(4,)),
        example("rt.take_vjp(g, a, np.array([1, 1]), 1)", g=(2, 2, 3), a=(2, 3, 3), f32=True),
        example("rt.take_vjp(g, a, np.array([-1, 4]), 0, 'wrap')", g=(2, 2), a=(3, 2)),
        example("rt.take_vjp(g, a, np.array([-1, 4]), None, 'clip')", g=(2,), a=(2, 2)),
        example("rt.take_vjp(g, a, 1, 0)", g=(3,), a=(2, 3)),
    ],
    complex=True,
)
def take_vjp(ans, g, a, indices, axis=None, mode="raise"):
    """``g`` scattered to ``indices`` (copies adding up): the transpose takes them again;
    ``a`` only gives the shape."""

    def jvp_g(dg):
        return rt.take_vjp(dg, a, indices, axis, mode)

    def jvp_a(da):
        return rt.zeros_like(ans)

    def vjp_g(c):
        if mode == "raise":  # as the np.take rule: Dask's np.take has no mode
            return rt.rebroadcast(np.take(c, indices, axis=axis), g)
        return rt.rebroadcast(np.take(c, indices, axis=axis, mode=mode), g)

    def vjp_a(c):
        return rt.zeros_like(a)


# ``rt.concatenated_part(g, arrays, k, axis)`` is the slice of ``g`` that came from
# ``arrays[k]``: linear in ``g``; the arrays only give the sizes.
@sequence_rule(
    rt.concatenated_part,
    sequence="arrays",
    examples=[
        example("rt.concatenated_part(g, (a, b), 1)", g=(5, 3), a=(2, 3), b=(3, 3)),
        example("rt.concatenated_part(g, (a, b, a), 0, 1)", g=(2, 7), a=(2, 2), b=(2, 3)),
        example("rt.concatenated_part(g, (a, b), 1, join='vstack')", g=(2, 4), a=(4,), b=(1, 4)),
        example("rt.concatenated_part(g, (a, b), 0, join='hstack')", g=(3,), a=None, b=(2,)),
        example(
            "rt.concatenated_part(g, (a, b), 1, join='dstack')", g=(1, 2, 3), a=(2,), b=(1, 2, 2)
        ),
        example(
            "rt.concatenated_part(g, (a, b), 0, join='column_stack')", g=(2, 3), a=(2,), b=(2, 2)
        ),
        example("rt.concatenated_part(g, (a, b), 1, None)", g=(10,), a=(2, 2), b=(3, 2)),
    ],
    complex=True,
)
def concatenated_part(ans, g, arrays, k, axis=0, join="concatenate"):
    def jvp_g(dg):
        return rt.concatenated_part(dg, arrays, k, axis, join)

    def jvp_arrays(parts):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.concatenated_part_vjp(c, g, arrays, k, axis, join)

    def vjp_arrays(c, j):
        return rt.zeros_like(arrays[j])


@sequence_rule(
    rt.concatenated_part_vjp,
    sequence="arrays",
    examples=[
        example(
            "rt.concatenated_part_vjp(c, g, (a, b), 1)", c=(3, 3), g=(5, 3), a=(2, 3), b=(3, 3)
        ),
        example(
            "rt.concatenated_part_vjp(c, g, (a, b), 0, 1)", c=(2, 2), g=(2, 5), a=(2, 2), b=(2, 3)
        ),
        example(
            "rt.concatenated_part_vjp(c, g, (a, b), 1, join='hstack')", c=(), g=(3,), a=(2,), b=()
        ),
    ],
    complex=True,
)
def concatenated_part_vjp(ans, c, g, arrays, k, axis=0, join="concatenate"):
    def jvp_c(dc):
        return rt.concatenated_part_vjp(dc, g, arrays, k, axis, join)

    def jvp_g(dg):
        return rt.zeros_like(ans)

    def jvp_arrays(parts):
        return rt.zeros_like(ans)

    def vjp_c(h):
        return rt.concatenated_part(h, arrays, k, axis, join)

    def vjp_g(h):
        return rt.zeros_like(g)

    def vjp_arrays(h, j):
        return rt.zeros_like(arrays[j])


# -- lists of derivatives ----------------------------------------------------------------------
# Reverse-mode code of a loop keeps Python lists: the stack of saved values, and the lists of
# cotangents of lists (``xs_bar``). These helpers are linear; their tangents and cotangents are
# lists too (``lists=True``: several contributions are summed item by item, not concatenated).
@rule(rt.accumulate, lists=True, complex=True)
def accumulate(a, b):
    """``a + b`` item by item: linear, the identity on each argument."""

    def jvp_a(da):
        return da

    def jvp_b(db):
        return db

    def vjp_a(g):
        return g

    def vjp_b(g):
        return g


@rule(rt.accumulate_item, lists=True, complex=True)
def accumulate_item(a, index, g):
    """``a`` with ``g`` added to its item ``index``: linear in ``a`` and in ``g``."""

    def jvp_a(da):
        return da

    def jvp_g(dg):
        return rt.accumulate_item(rt.zeros_like(a), index, dg)

    def vjp_a(c):
        return c

    def vjp_g(c):
        return c[index]


@rule(rt.split_last, outputs=2, lists=True, complex=True)
def split_last(xs):
    """``(xs[:-1], xs[-1])``: linear; the transpose joins the two cotangents again."""

    def jvp(dxs):
        return rt.split_last(dxs)

    def vjp(g):
        return rt.join_last(g[0], g[1])


@rule(rt.join_last, lists=True, complex=True)
def join_last(rest, last):
    """``[*rest, last]``: linear in each part (the other part's items are zero)."""

    def jvp_rest(drest):
        return rt.join_last(drest, rt.zeros_like(last))

    def jvp_last(dlast):
        return rt.join_last(rt.zeros_like(rest), dlast)

    def vjp_rest(g):
        return g[:-1]

    def vjp_last(g):
        return g[-1]


@sequence_rule(rt.items_vjp, sequence="parts", complex=True)
def items_vjp(ans, parts, xs):
    """Linear in the cotangents of the items; ``xs`` only gives the shape."""

    def jvp_parts(dparts):
        return rt.items_vjp(dparts, xs)

    def jvp_xs(d):
        return rt.zeros_like(ans)

    def vjp_parts(g, k):
        return g[k]

    def vjp_xs(g):
        return rt.zeros_like(xs)


@sequence_rule(
    rt.extremum_jvp,
    sequence="parts",
    examples=[
        example("rt.extremum_jvp((a, b, c), (0.0, 0.5, 0.5))", a=None, b=(), c=None),
        example("rt.extremum_jvp([a * a, b], (1.0, 0.0))", a=None, b=None),
    ],
    complex=True,
)
def extremum_jvp(ans, parts, shares):
    """Linear in the items' tangents; the shares are piecewise constant (no derivative)."""

    def jvp(dparts):
        return rt.extremum_jvp(dparts, shares)

    def vjp(g, k):
        return g * shares[k]


@rule(list, tuple, rt.as_list, lists=True, complex=True)
def builtin_list(iterable):
    """A copy of a list (of derivatives), or the list of an array's rows."""

    def jvp(d):
        return rt.as_list(d)

    def vjp(g):
        return rt.list_vjp(g, iterable)


@sequence_rule(rt.list_vjp, sequence="g", complex=True)
def list_vjp(ans, g, iterable):
    """Linear in ``g``; ``iterable`` only gives the structure."""

    def jvp_g(dg):
        return rt.list_vjp(dg, iterable)

    def jvp_iterable(d):
        return rt.zeros_like(ans)

    def vjp_g(c, k):
        return c[k]

    def vjp_iterable(c):
        return rt.zeros_like(iterable)


# -- contractions ------------------------------------------------------------------------------
# ``rt.matmul_vjp_a(g, a, b)`` is the cotangent of ``a @ b`` w.r.t. ``a``: bilinear in
# (g, b), independent of a's values, and <c, matmul_vjp_a(g, a, b)> = <g, c @ b> for any c
# shaped like a. So its transpose in g is ``c @ b`` and its derivative in b, paired with c,
# is ``matmul_vjp_b(g, c, b)``. The same holds for ``np.dot``.
_MATMUL_EXAMPLES = [
    ((2, 4), (2, 3), (3, 4)),
    ((4,), (3,), (3, 4)),
    ((2,), (2, 3), (3,)),
    ((), (3,), (3,)),
    ((2, 2, 4), (2, 2, 3), (3, 4)),
]


@rule(
    rt.matmul_vjp_a,
    examples=[
        example("rt.matmul_vjp_a(g, a, b)", g=gs, a=as_, b=bs, f32=gs == (2, 4))
        for gs, as_, bs in _MATMUL_EXAMPLES
    ],
    complex=True,
)
def matmul_vjp_a(ans, g, a, b):
    """Bilinear in (``g``, ``b``); ``a`` only gives the shape."""

    def jvp_g(dg):
        return rt.matmul_vjp_a(dg, a, b)

    def bjvp_g(dg):  # g @ b.T for matrices; np.outer(g, b) for a matrix and a vector
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 2:
            return dg @ np.transpose(b)
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 1:
            return dg[..., None] * b
        return None

    def jvp_a(da):
        return rt.zeros_like(ans)

    def jvp_b(db):
        return rt.matmul_vjp_a(g, a, db)

    def vjp_g(c):
        return np.matmul(c, b)

    def vjp_a(c):
        return rt.zeros_like(a)

    def vjp_b(c):
        return rt.matmul_vjp_b(g, c, b)


@rule(
    rt.matmul_vjp_b,
    examples=[
        example("rt.matmul_vjp_b(g, a, b)", g=gs, a=as_, b=bs, f32=gs == (2, 4))
        for gs, as_, bs in _MATMUL_EXAMPLES
    ],
    complex=True,
)
def matmul_vjp_b(ans, g, a, b):
    """Bilinear in (``g``, ``a``); ``b`` only gives the shape."""

    def jvp_g(dg):
        return rt.matmul_vjp_b(dg, a, b)

    def bjvp_g(dg):  # a.T @ g for matrices; g @ a for a matrix and a vector
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 2:
            return np.transpose(a) @ dg
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 1:
            return dg @ a
        return None

    def bjvp_a(da):
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 1 and rt.known_ndim(g) == 1:
            return g @ da
        return None

    def jvp_a(da):
        return rt.matmul_vjp_b(g, da, b)

    def jvp_b(db):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return np.matmul(a, c)

    def vjp_a(c):
        return rt.matmul_vjp_a(g, a, c)

    def vjp_b(c):
        return rt.zeros_like(b)


_DOT_EXAMPLES = [
    ((2, 4), (2, 3), (3, 4)),
    ((4,), (3,), (3, 4)),
    ((2,), (2, 3), (3,)),
    ((), (3,), (3,)),
    ((3,), (), (3,)),
    ((2, 2, 4), (2, 3), (2, 3, 4)),
]


@rule(
    rt.dot_vjp_a,
    examples=[
        example("rt.dot_vjp_a(g, a, b)", g=gs, a=as_, b=bs, f32=gs == (2, 4))
        for gs, as_, bs in _DOT_EXAMPLES
    ],
    complex=True,
)
def dot_vjp_a(ans, g, a, b):
    """Bilinear in (``g``, ``b``); ``a`` only gives the shape."""

    def jvp_g(dg):
        return rt.dot_vjp_a(dg, a, b)

    def bjvp_g(dg):  # g @ b.T for matrices, outer(g, b) for a matrix and a vector, b @ g...
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 2:
            return dg @ np.transpose(b)
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 1:
            return dg[..., None] * b
        if rt.known_ndim(a) == 1 and rt.known_ndim(b) == 1:
            return dg[..., None] * b
        if rt.known_ndim(a) == 1 and rt.known_ndim(b) == 2:
            return dg @ np.transpose(b)
        return None

    def jvp_a(da):
        return rt.zeros_like(ans)

    def jvp_b(db):
        return rt.dot_vjp_a(g, a, db)

    def vjp_g(c):  # np.dot(c, b) (c is shaped like a); Dask's np.dot takes no 0-d operand
        if rt.known_ndim(a) == 0 or rt.known_ndim(b) == 0:
            return c * b
        if rt.known_ndim(a) > 0 and rt.known_ndim(b) > 0:
            return np.dot(c, b)
        return c * b if np.ndim(c) == 0 or np.ndim(b) == 0 else np.dot(c, b)

    def vjp_a(c):
        return rt.zeros_like(a)

    def vjp_b(c):
        return rt.dot_vjp_b(g, c, b)


@rule(
    rt.dot_vjp_b,
    examples=[
        example("rt.dot_vjp_b(g, a, b)", g=gs, a=as_, b=bs, f32=gs == (2, 4))
        for gs, as_, bs in _DOT_EXAMPLES
    ],
    complex=True,
)
def dot_vjp_b(ans, g, a, b):
    """Bilinear in (``g``, ``a``); ``b`` only gives the shape."""

    def jvp_g(dg):
        return rt.dot_vjp_b(dg, a, b)

    def bjvp_g(dg):  # a.T @ g for matrices, g @ a for a matrix and a vector, g * a...
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 2:
            return np.transpose(a) @ dg
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 1:
            return dg @ a
        if rt.known_ndim(a) == 1 and rt.known_ndim(b) == 1:
            return dg[..., None] * a
        return None

    def jvp_a(da):
        return rt.dot_vjp_b(g, da, b)

    def bjvp_a(da):  # (da: a batch of matrices)
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 1 and rt.known_ndim(g) == 1:
            return g @ da
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 2:
            return np.swapaxes(da, -1, -2) @ g
        return None

    def jvp_b(db):
        return rt.zeros_like(ans)

    def vjp_g(c):  # np.dot(a, c) (c is shaped like b); Dask's np.dot takes no 0-d operand
        if rt.known_ndim(a) == 0 or rt.known_ndim(b) == 0:
            return a * c
        if rt.known_ndim(a) > 0 and rt.known_ndim(b) > 0:
            return np.dot(a, c)
        return a * c if np.ndim(a) == 0 or np.ndim(c) == 0 else np.dot(a, c)

    def vjp_a(c):
        return rt.dot_vjp_a(g, a, c)

    def vjp_b(c):
        return rt.zeros_like(b)


# -- the derivatives adgen returns -------------------------------------------------------------
@rule(
    rt.cast_like,
    examples=[
        example("rt.cast_like(g, x)", g=(3, 4), x=(3, 4), f32=True),
        example("rt.cast_like(g, x)", g=(), x=(2, 3)),
        example("rt.cast_like(g, x)", g=None, x=None),
    ],
    complex=True,
)
def cast_like(ans, g, x, protected=()):
    """``g`` as the derivative of ``x`` (an exported module returns its gradients through
    it): broadcast to ``x``'s shape and cast to its type -- linear in ``g``, whose cotangent
    is summed back to ``g``'s shape; ``x`` only gives the shape and type."""

    def jvp_g(dg):
        return rt.cast_like(dg, x)

    def jvp_x(dx):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(c, g)

    def vjp_x(c):
        return rt.zeros_like(x)
