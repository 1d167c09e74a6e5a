"""Indexing functions: ``np.take``, ``np.take_along_axis``, ``np.compress``, ``np.extract``,
``np.select`` and ``np.choose``.

Conventions:

* Index arrays, masks and conditions are not differentiated (they are piecewise constant).
* An element picked several times (``np.take(a, [0, 0])``, ``np.take_along_axis`` with
  repeated indices) receives the *sum* of the cotangents of its copies (``np.add.at``), as
  plain indexing ``x[[0, 0]]`` does.
* ``np.select``: the derivative follows the first condition that holds, like the value; where
  none holds the result is ``default`` and so is the derivative (``default`` may be a
  differentiated value, broadcast like the choices).
* ``np.choose``: the derivative goes to the chosen array, with ``mode="wrap"``/``"clip"``
  applied to the index first.
* Writes into an array made as statements (``np.put_along_axis``, ``np.put``, ``np.copyto``)
  are declared in :mod:`adgen.rules.adjoints` and lowered as ``a[positions] = v``;
  ``np.add.at(a, index, b)`` as ``a[...] = rt.added_at(a, index, b)``, whose rule is here.
"""

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import methods, nondifferentiable, rule, sequence_rule
from adgen.rules.samples import example


@rule(
    np.take,
    examples=[
        example("np.take(a, [0, 2, 0, 3])", a=(4,), f32=True),
        example("np.take(a, [[1, 1], [0, 5]])", a=(2, 3)),
        example("np.take(a, [2, 0, 2], axis=1)", a=(2, 3, 2), f32=True),
        example("np.take(a, 1, axis=0)", a=(3, 2)),
        example("np.take(a, [-1, 4, 5], axis=-1, mode='wrap')", a=(2, 3)),
        example("np.take(a, [-1, 4, 1], mode='clip')", a=(3,)),
    ],
    complex=True,
)
def take(a, indices, axis=None, mode="raise"):
    def jvp(da):
        if mode == "raise":
            return np.take(da, indices, axis=axis)
        return np.take(da, indices, axis=axis, mode=mode)

    def vjp(g):
        return rt.take_vjp(g, a, indices, axis, mode)


methods(take=np.take)


@rule(
    np.take_along_axis,
    examples=[
        example("np.take_along_axis(a, np.array([[0, 0, 2], [1, 2, 2]]), 1)", a=(2, 3), f32=True),
        example("np.take_along_axis(a, np.array([[1], [0], [1]]), axis=-1)", a=(3, 2)),
        example("np.take_along_axis(a, np.array([[[0, 0]], [[1, 0]]]), 1)", a=(2, 3, 2)),
        example("np.take_along_axis(a, np.array([3, 0, 3]), None)", a=(2, 2)),
    ],
    complex=True,
)
def take_along_axis(arr, indices, axis=-1):
    def jvp(da):
        return np.take_along_axis(da, indices, axis)

    def vjp(g):
        return rt.take_along_axis_vjp(g, arr, indices, axis)


@rule(
    rt.take_along_axis_vjp,
    examples=[
        example(
            "rt.take_along_axis_vjp(g, a, np.array([[0, 0, 2], [1, 2, 2]]), 1)",
            g=(2, 3),
            a=(2, 3),
            f32=True,
        ),
        example("rt.take_along_axis_vjp(g, a, np.array([[1], [0], [1]]), -1)", g=(3, 1), a=(3, 2)),
        example(
            "rt.take_along_axis_vjp(g, a, np.array([[[0, 0]], [[1, 0]]]), 1)",
            g=(2, 1, 2),
            a=(2, 3, 2),
        ),
        example("rt.take_along_axis_vjp(g, a, np.array([3, 0, 3]), None)", g=(3,), a=(2, 2)),
    ],
    complex=True,
)
def take_along_axis_vjp(ans, g, arr, indices, axis=-1):
    """``g`` scattered back along ``axis`` (copies adding up): linear in ``g``, whose
    transpose takes the same entries again; ``arr`` only gives the shape."""

    def jvp_g(dg):
        return rt.take_along_axis_vjp(dg, arr, indices, axis)

    def jvp_arr(da):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(np.take_along_axis(c, indices, axis), g)

    def vjp_arr(c):
        return rt.zeros_like(arr)


@rule(
    rt.added_at,
    examples=[
        example("rt.added_at(a, np.array([0, 2, 0]), b)", a=(3,), b=(3,), f32=True),
        example("rt.added_at(a, (np.array([0, 1, 0]), np.array([1, 1, 1])), b)", a=(2, 3), b=(3,)),
        example("rt.added_at(a, np.array([1, 1]), b)", a=(3, 2), b=(2,)),
        example("rt.added_at(a, [0, 0], b)", a=(2,), b=()),
    ],
    complex=True,
)
def added_at(a, index, b):
    """``np.add.at(a, index, b)`` as a statement: ``a[...] = rt.added_at(a, index, b)``."""

    def jvp_a(da):
        return da

    def jvp_b(db):
        return rt.added_at(np.zeros_like(a), index, db)

    def vjp_a(g):
        return g

    def vjp_b(g):
        return rt.unbroadcast(g[index], b)


@rule(
    rt.subtracted_at,
    examples=[
        example("rt.subtracted_at(a, np.array([0, 2, 0]), b)", a=(3,), b=(3,)),
        example("rt.subtracted_at(a, np.array([1, 1]), b)", a=(3, 2), b=()),
    ],
    complex=True,
)
def subtracted_at(a, index, b):
    """``np.subtract.at(a, index, b)`` as a statement."""

    def jvp_a(da):
        return da

    def jvp_b(db):
        return rt.subtracted_at(np.zeros_like(a), index, db)

    def vjp_a(g):
        return g

    def vjp_b(g):
        return -rt.unbroadcast(g[index], b)


@rule(
    rt.putmasked,
    examples=[
        example(
            "rt.putmasked(a, np.array([True, False, True, True]), v)", a=(4,), v=(2,), f32=True
        ),
        example("rt.putmasked(a, np.array([[True, False], [False, True]]), v)", a=(2, 2), v=()),
        example("rt.putmasked(a, a > 0.0, v)", a=(3, 2), v=(3, 2)),
    ],
)
def putmasked(a, mask, values):
    """``np.putmask(a, mask, values)`` as a statement: ``a[...] = rt.putmasked(a, mask,
    values)`` (``values`` repeated over the masked positions by their flat number)."""

    def jvp_a(da):
        return rt.putmasked(da, mask, rt.zeros_like(values))

    def jvp_values(dv):
        return rt.putmasked(rt.zeros_like(a), mask, dv)

    def vjp_a(g):
        return rt.putmasked(g, mask, rt.zeros_like(values))

    def vjp_values(g):
        return rt.putmask_gather(g, mask, values)


@rule(
    rt.putmask_gather,
    examples=[
        example("rt.putmask_gather(g, np.array([True, False, True, True]), v)", g=(4,), v=(2,)),
        example(
            "rt.putmask_gather(g, np.array([[True, False], [False, True]]), v)", g=(2, 2), v=()
        ),
    ],
)
def putmask_gather(ans, g, mask, values):
    """Linear in ``g`` (its transpose puts back); ``values`` gives only the shape."""

    def jvp_g(dg):
        return rt.putmask_gather(dg, mask, values)

    def vjp_g(c):
        return rt.putmasked(rt.zeros_like(g), mask, c)

    def jvp_values(dv):
        return rt.zeros_like(ans)

    def vjp_values(c):
        return rt.zeros_like(values)


@rule(
    np.compress,
    examples=[
        example("np.compress([True, False, True], a, axis=1)", a=(2, 3), f32=True),
        example("np.compress([False, True], a, axis=0)", a=(3, 2)),
        example("np.compress([1, 0, 1, 1], a)", a=(2, 3)),
    ],
    complex=True,
)
def compress(condition, a, axis=None):
    def jvp_a(da):
        return np.compress(condition, da, axis=axis)

    def vjp_a(g):
        return rt.take_vjp(g, a, np.flatnonzero(condition), axis)


@rule(
    np.extract,
    examples=[
        example("np.extract(a > 0.2, a)", a=(3, 4), f32=True),
        example("np.extract([1, 0, 0, 1], a)", a=(2, 2)),
    ],
    complex=True,
)
def extract(condition, arr):
    def jvp_arr(da):
        return np.extract(condition, da)

    def vjp_arr(g):
        return rt.take_vjp(g, arr, np.flatnonzero(condition))


@sequence_rule(
    np.select,
    sequence="choicelist",
    examples=[
        example("np.select([a > 0.5, a < -0.5], [a, a * a], 1.0)", a=(3, 4), f32=True),
        example("np.select([a > 0.0, a < 0.5], [a * b, b])", a=(3, 4), b=(4,)),
        example("np.select([np.array([True, False, True])], [a])", a=(2, 3)),
        example("np.select([a > 0.3, a < -0.3], [a * a, np.sin(a)], b)", a=(3, 4), b=(4,)),
        example("np.select([a > 0.0], [a], b * b)", a=(2, 3), b=(), f32=True),
        example("np.select([a > 0.0, a < -0.5], [b, 2.0], a)", a=(3, 4), b=(3, 1)),
    ],
    complex=True,
)
def select(ans, condlist, choicelist, default=0):
    def jvp_choicelist(parts):
        return rt.selected(condlist, parts)

    def jvp_default(dd):
        return np.broadcast_to(np.where(rt.select_otherwise(condlist), dd, 0.0), np.shape(ans))

    def vjp_choicelist(g, k):
        return rt.select_vjp(g, condlist, choicelist, k)

    def vjp_default(g):
        return rt.unbroadcast(np.where(rt.select_otherwise(condlist), g, 0.0), default)


@sequence_rule(
    rt.selected,
    sequence="choicelist",
    examples=[
        example("rt.selected([a > 0.5, a < -0.5], [a, a * a])", a=(3, 4), f32=True),
        example("rt.selected([a > 0.0, a < -0.5], [b, 2.0])", a=(3, 4), b=(3, 1)),
    ],
    complex=True,
)
def selected(ans, condlist, choicelist):
    """``np.select(condlist, choicelist, 0.0)``: linear in the choices."""

    def jvp_choicelist(parts):
        return rt.selected(condlist, parts)

    def vjp_choicelist(g, k):
        return rt.select_vjp(g, condlist, choicelist, k)


# where condition k is the first that holds: a mask, piecewise constant
nondifferentiable(rt.select_mask)


@sequence_rule(
    rt.select_vjp,
    sequence="choicelist",
    examples=[
        example(
            "rt.select_vjp(g, [a > 0.5, a < -0.5], [a, a * a], 1)", g=(3, 4), a=(3, 4), f32=True
        ),
        example("rt.select_vjp(g, [a > 0.0, a < 0.5], [a * b, b], 1)", g=(3, 4), a=(3, 4), b=(4,)),
        example("rt.select_vjp(g, [np.array([True, False, True])], [a], 0)", g=(2, 3), a=(2, 3)),
        example("rt.select_vjp(g, [a > 0.0, a < -0.5], [b, 2.0], 0)", g=(3, 4), a=(3, 4), b=(3, 1)),
        example("rt.select_vjp(g, [a > 0.0, a < -0.5], [b, 2.0], 1)", g=(3, 4), a=(3, 4), b=(3, 1)),
    ],
    complex=True,
)
def select_vjp(ans, g, condlist, choicelist, k=0):
    """``g`` where condition ``k`` is the first that holds, summed to ``choicelist[k]``'s
    shape: linear in ``g`` (the transpose puts the cotangent back on that mask); the choices
    only give the shape, the conditions are piecewise constant."""

    def jvp_g(dg):
        return rt.select_vjp(dg, condlist, choicelist, k)

    def jvp_choicelist(parts):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(np.where(rt.select_mask(condlist, k), c, 0.0), g)

    def vjp_choicelist(c, j):
        return rt.zeros_like(choicelist[j])


@sequence_rule(
    np.choose,
    sequence="choices",
    examples=[
        example("np.choose(np.array([0, 1, 1, 0]), [a, b])", a=(4,), b=(4,), f32=True),
        example(
            "np.choose(np.array([[0, 2, 1], [2, 1, 0]]), (a, b, c))", a=(3,), b=(2, 3), c=(2, 3)
        ),
        example("np.choose(np.array([0, 3, -1]), [a, b], mode='wrap')", a=(3,), b=(3,)),
        example("np.choose(np.array([0, 3, -1]), [a, b], mode='clip')", a=(3,), b=(3,)),
    ],
    complex=True,
)
def choose(a, choices, mode="raise"):
    def jvp_choices(parts):
        if mode == "raise":
            return np.choose(a, parts)
        return np.choose(a, parts, mode=mode)

    def vjp_choices(g, k):
        return rt.choose_vjp(g, a, choices, k, mode)


# where np.choose picks choices[k]: a mask, piecewise constant (the index array is an integer)
nondifferentiable(rt.choose_mask)


@sequence_rule(
    rt.choose_vjp,
    sequence="choices",
    examples=[
        example(
            "rt.choose_vjp(g, np.array([0, 1, 1, 0]), [a, b], 1)", g=(4,), a=(4,), b=(4,), f32=True
        ),
        example(
            "rt.choose_vjp(g, np.array([[0, 2, 1], [2, 1, 0]]), (a, b, c), 0)",
            g=(2, 3),
            a=(3,),
            b=(2, 3),
            c=(2, 3),
        ),
        example(
            "rt.choose_vjp(g, np.array([0, 3, -1]), [a, b], 1, 'wrap')", g=(3,), a=(3,), b=(3,)
        ),
        example(
            "rt.choose_vjp(g, np.array([0, 3, -1]), [a, b], 1, 'clip')", g=(3,), a=(3,), b=(3,)
        ),
    ],
    complex=True,
)
def choose_vjp(ans, g, a, choices, k=0, mode="raise"):
    """``g`` where ``np.choose`` picks ``choices[k]``, summed to its shape: linear in ``g``
    (the transpose puts the cotangent back on that mask); the choices only give the shape."""

    def jvp_g(dg):
        return rt.choose_vjp(dg, a, choices, k, mode)

    def jvp_choices(parts):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return rt.rebroadcast(np.where(rt.choose_mask(a, choices, k, mode), c, 0.0), g)

    def vjp_choices(c, j):
        return rt.zeros_like(choices[j])
