"""Contractions: inner, outer and tensor products, ``np.einsum``, ``np.kron``, ``np.cross``,
``np.linalg.multi_dot`` and the NumPy 2 vector/matrix products.

All of them are multilinear, so each tangent is the same product with one operand replaced
by its tangent, and each cotangent contracts the output's cotangent with the other operands
(helpers ``rt.einsum_vjp``, ``rt.tensordot_vjp_a``... in ``adgen.runtime``). They are smooth
everywhere: there is no kink convention to choose. Cotangents are summed back over axes that
broadcasting added (``np.vecdot``, ``np.matvec``, ``np.cross``, einsum's ``...``).

The helpers have rules too, beside the primitive whose templates call them (second
derivatives differentiate generated code). A ``*_vjp`` helper is linear in ``g`` and in
the other operand and does not read its own operand's values (only its shape: derivative
0): its tangents are the helper with ``g`` or the other operand replaced by its tangent,
its transposes the primitive itself (in ``g``) and the sibling helper (in the other
operand). ``np.einsum`` and ``np.linalg.multi_dot`` take any number of arrays: each of
their derivatives, of any order, is one call of ``rt.einsum_terms`` /
``rt.multi_dot_terms`` (a sum of multilinear terms, see there), whose own derivatives add
one step to its history.

``np.einsum`` accepts the string form (implicit output ``"ij,jk"``, explicit ``"->"``,
repeated labels such as ``"ii->i"`` and ``"ii"``, ellipses) and the interleaved form
``np.einsum(a, [0, 1], b, [1, 2], [0, 2])``; ``optimize=`` must be a constant. A label
repeated in one operand (a diagonal) gets its cotangent on that diagonal only.
"""

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import rule, sequence_rule
from adgen.rules.samples import example


@rule(
    np.vdot,
    examples=[
        example("np.vdot(a, b)", a=(4,), b=(4,), f32=True),
        example("np.vdot(a, b)", a=(2, 3), b=(3, 2)),
        example("np.vdot(a, b)", a=(3,), b=(3,), complex=("b",)),
    ],
    complex=True,
)
def vdot(a, b):
    """The sum of the products of the flattened arrays, ``a`` conjugated: ``sum(conj(a) b)``
    is not holomorphic in ``a``, whose cotangent is ``conj(g b)`` (``g conj(a)`` for ``b``)."""

    def jvp_a(da):
        return np.vdot(da, b)

    def jvp_b(db):
        return np.vdot(a, db)

    def vjp_a(g):
        if rt.known_real(a) and rt.known_real(b):
            return np.reshape(g * np.ravel(b), np.shape(a))
        return np.reshape(np.conjugate(g * np.ravel(b)), np.shape(a))

    def vjp_b(g):
        if rt.known_real(a) and rt.known_real(b):
            return np.reshape(g * np.ravel(a), np.shape(b))
        return np.reshape(g * np.conjugate(np.ravel(a)), np.shape(b))


@rule(
    np.inner,
    examples=[
        example("np.inner(a, b)", a=(4,), b=(4,)),
        example("np.inner(a, b)", a=(2, 3), b=(4, 3), f32=True),
        example("np.inner(a, b)", a=(2, 2, 3), b=(3,)),
        example("np.inner(a, b)", a=(), b=(2, 3)),
    ],
    complex=True,
)
def inner(a, b):
    def jvp_a(da):
        return np.inner(da, b)

    def jvp_b(db):
        return np.inner(a, db)

    def vjp_a(g):
        return rt.inner_vjp_a(g, a, b)

    def vjp_b(g):
        return rt.inner_vjp_b(g, a, b)


_INNER_SHAPES = [
    ((), (4,), (4,)),
    ((2, 4), (2, 3), (4, 3)),
    ((2, 2), (2, 2, 3), (3,)),
    ((2, 3), (), (2, 3)),
]


@rule(
    rt.inner_vjp_a,
    examples=[
        example("rt.inner_vjp_a(g, a, b)", g=gs, a=as_, b=bs, f32=gs == (2, 4))
        for gs, as_, bs in _INNER_SHAPES
    ],
    complex=True,
)
def inner_vjp_a(ans, g, a, b):
    """Bilinear in (``g``, ``b``); ``a`` only gives the shape."""

    def jvp_g(dg):
        return rt.inner_vjp_a(dg, a, b)

    def jvp_a(da):
        return rt.zeros_like(ans)

    def jvp_b(db):
        return rt.inner_vjp_a(g, a, db)

    def vjp_g(c):  # np.inner(c, b) (c is shaped like a), which Dask lacks
        if rt.known_ndim(a) > 0 and rt.known_ndim(b) > 0:
            return np.tensordot(c, b, (-1, -1))
        if rt.known_ndim(a) == 0 or rt.known_ndim(b) == 0:
            return c * b
        return c * b if np.ndim(c) == 0 or np.ndim(b) == 0 else np.tensordot(c, b, (-1, -1))

    def vjp_a(c):
        return rt.zeros_like(a)

    def vjp_b(c):
        return rt.inner_vjp_b(g, c, b)


@rule(
    rt.inner_vjp_b,
    examples=[
        example("rt.inner_vjp_b(g, a, b)", g=gs, a=as_, b=bs, f32=gs == (2, 4))
        for gs, as_, bs in _INNER_SHAPES
    ],
    complex=True,
)
def inner_vjp_b(ans, g, a, b):
    """Bilinear in (``g``, ``a``); ``b`` only gives the shape."""

    def jvp_g(dg):
        return rt.inner_vjp_b(dg, a, b)

    def jvp_a(da):
        return rt.inner_vjp_b(g, da, b)

    def jvp_b(db):
        return rt.zeros_like(ans)

    def vjp_g(c):  # np.inner(a, c) (c is shaped like b), which Dask lacks
        if rt.known_ndim(a) > 0 and rt.known_ndim(b) > 0:
            return np.tensordot(a, c, (-1, -1))
        if rt.known_ndim(a) == 0 or rt.known_ndim(b) == 0:
            return a * c
        return a * c if np.ndim(a) == 0 or np.ndim(c) == 0 else np.tensordot(a, c, (-1, -1))

    def vjp_a(c):
        return rt.inner_vjp_a(g, a, c)

    def vjp_b(c):
        return rt.zeros_like(b)


_OUTER_EXAMPLES = [
    example("np.outer(a, b)", a=(3,), b=(4,), f32=True),
    example("np.outer(a, b)", a=(2, 2), b=(3,)),
]


@rule(np.outer, examples=_OUTER_EXAMPLES, complex=True)
def outer(a, b):
    """Inputs are flattened: the result is ``(a.size, b.size)``."""

    def jvp_a(da):
        return np.outer(da, b)

    def jvp_b(db):
        return np.outer(a, db)

    def bjvp_a(da):
        return np.reshape(da, (np.shape(da)[0], -1))[:, :, None] * np.ravel(b)

    def bjvp_b(db):
        return np.ravel(a)[:, None] * np.reshape(db, (np.shape(db)[0], -1))[:, None, :]

    def vjp_a(g):
        return np.reshape(g @ np.ravel(b), np.shape(a))

    def vjp_b(g):
        return np.reshape(np.ravel(a) @ g, np.shape(b))


def _tensordot_examples(name):
    return [
        example(f"{name}(a, b)", a=(2, 3, 4), b=(3, 4, 2), f32=True),
        example(f"{name}(a, b, axes=1)", a=(2, 3), b=(3, 4)),
        example(f"{name}(a, b, axes=0)", a=(2,), b=(3,)),
        example(f"{name}(a, b, axes=(1, 0))", a=(2, 3), b=(3, 4)),
        example(f"{name}(a, b, axes=([2, 0], [0, 1]))", a=(2, 3, 4), b=(4, 2, 3)),
    ]


@rule(np.tensordot, examples=_tensordot_examples("np.tensordot"), complex=True)
def tensordot(a, b, axes=2):
    def jvp_a(da):
        return np.tensordot(da, b, axes)

    def jvp_b(db):
        return np.tensordot(a, db, axes)

    def vjp_a(g):
        return rt.tensordot_vjp_a(g, a, b, axes)

    def vjp_b(g):
        return rt.tensordot_vjp_b(g, a, b, axes)


# (cotangent, a, b, axes) of np.tensordot's examples
_TENSORDOT_CASES = [
    ((2, 2), (2, 3, 4), (3, 4, 2), None),
    ((2, 4), (2, 3), (3, 4), 1),
    ((2, 3), (2,), (3,), 0),
    ((2, 4), (2, 3), (3, 4), (1, 0)),
    ((3, 3), (2, 3, 4), (4, 2, 3), ([2, 0], [0, 1])),
]


def _tensordot_helper_examples(name):
    return [
        example(
            f"{name}(g, a, b)" if axes is None else f"{name}(g, a, b, {axes!r})",
            g=gs,
            a=as_,
            b=bs,
            f32=axes is None,
        )
        for gs, as_, bs, axes in _TENSORDOT_CASES
    ]


@rule(rt.tensordot_vjp_a, examples=_tensordot_helper_examples("rt.tensordot_vjp_a"), complex=True)
def tensordot_vjp_a(ans, g, a, b, axes=2):
    """Bilinear in (``g``, ``b``); ``a`` only gives the shape."""

    def jvp_g(dg):
        return rt.tensordot_vjp_a(dg, a, b, axes)

    def jvp_a(da):
        return rt.zeros_like(ans)

    def jvp_b(db):
        return rt.tensordot_vjp_a(g, a, db, axes)

    def vjp_g(c):
        return np.tensordot(c, b, axes)

    def vjp_a(c):
        return rt.zeros_like(a)

    def vjp_b(c):
        return rt.tensordot_vjp_b(g, c, b, axes)


@rule(rt.tensordot_vjp_b, examples=_tensordot_helper_examples("rt.tensordot_vjp_b"), complex=True)
def tensordot_vjp_b(ans, g, a, b, axes=2):
    """Bilinear in (``g``, ``a``); ``b`` only gives the shape."""

    def jvp_g(dg):
        return rt.tensordot_vjp_b(dg, a, b, axes)

    def jvp_a(da):
        return rt.tensordot_vjp_b(g, da, b, axes)

    def jvp_b(db):
        return rt.zeros_like(ans)

    def vjp_g(c):
        return np.tensordot(a, c, axes)

    def vjp_a(c):
        return rt.tensordot_vjp_a(g, a, c, axes)

    def vjp_b(c):
        return rt.zeros_like(b)


@sequence_rule(
    np.einsum,
    sequence="operands",
    examples=[
        example('np.einsum("ij,jk", a, b)', a=(2, 3), b=(3, 4), f32=True),
        example('np.einsum("ij,jk->ki", a, b)', a=(2, 3), b=(3, 4)),
        example('np.einsum("ij,jk,kl->il", a, b, c)', a=(2, 3), b=(3, 4), c=(4, 2)),
        example('np.einsum("ij,jk,kl->il", a, b, c, optimize=True)', a=(2, 3), b=(3, 4), c=(4, 2)),
        example('np.einsum("ii->i", a)', a=(3, 3)),
        example('np.einsum("ii", a)', a=(3, 3), f32=True),
        example('np.einsum("ij->", a)', a=(3, 2)),
        example('np.einsum("i,j->ij", a, b)', a=(3,), b=(2,)),
        example('np.einsum("...ij,...jk->...ik", a, b)', a=(2, 2, 3), b=(3, 4)),
        example('np.einsum("iij,j", a, b) * 2.0', a=(2, 2, 3), b=(3,)),
        example("np.einsum(a, [0, 1], b, [1, 2], [0, 2])", a=(2, 3), b=(3, 4)),
        example("np.einsum(a, [0, 1], b, [1, 2])", a=(2, 3), b=(3, 2)),
    ],
    complex=True,
)
def einsum(*operands, optimize=False):
    """String form ``einsum(subscripts, *arrays)`` or interleaved form
    ``einsum(a, sublist_a, b, sublist_b, [out])``: the helpers find the arrays."""

    def jvp(parts):
        return rt.einsum_terms((*operands, *parts), ("t",), optimize)

    def vjp(g, k):
        return rt.einsum_vjp(g, operands, k, optimize)


@sequence_rule(
    rt.einsum_vjp,
    sequence="operands",
    examples=[
        example(
            'rt.einsum_vjp(g, ("ij,jk", a, b), 1, False)', g=(2, 4), a=(2, 3), b=(3, 4), f32=True
        ),
        example('rt.einsum_vjp(g, ("ij,jk->ki", a, b), 2, False)', g=(4, 2), a=(2, 3), b=(3, 4)),
        example(
            'rt.einsum_vjp(g, ("ij,jk,kl->il", a, b, c), 2, True)',
            g=(2, 2),
            a=(2, 3),
            b=(3, 4),
            c=(4, 2),
        ),
        example('rt.einsum_vjp(g, ("ii->i", a), 1, False)', g=(3,), a=(3, 3)),
        example('rt.einsum_vjp(g, ("ij->", a), 1, False)', g=(), a=(3, 2)),
        example('rt.einsum_vjp(g, ("i,j->ij", a, b), 2, False)', g=(3, 2), a=(3,), b=(2,)),
        example(
            'rt.einsum_vjp(g, ("...ij,...jk->...ik", a, b), 2, False)',
            g=(2, 2, 4),
            a=(2, 2, 3),
            b=(3, 4),
        ),
        example('rt.einsum_vjp(g, ("iij,j", a, b), 1, False)', g=(), a=(2, 2, 3), b=(3,)),
        example(
            "rt.einsum_vjp(g, (a, [0, 1], b, [1, 2], [0, 2]), 2, False)",
            g=(2, 4),
            a=(2, 3),
            b=(3, 4),
        ),
    ],
    complex=True,
)
def einsum_vjp(g, operands, k=0, optimize=False):
    """Linear in ``g`` and in each array of ``operands`` but ``operands[k]``, which only gives
    the shape; ``rt.einsum_terms((*operands, g), (k,), optimize)``."""

    def jvp_g(dg):
        return rt.einsum_vjp(dg, operands, k, optimize)

    def jvp_operands(parts):
        return rt.einsum_terms((*operands, g, *parts, 0.0), (k, "t"), optimize)

    def vjp_g(c):
        return rt.einsum_terms((*operands, g, c), (k, -1), optimize)

    def vjp_operands(c, j):
        return rt.einsum_terms((*operands, g, c), (k, j), optimize)


@sequence_rule(
    rt.einsum_terms,
    sequence="seq",
    examples=[
        example('rt.einsum_terms(("ij,jk", a, b))', a=(2, 3), b=(3, 4)),
        example(
            'rt.einsum_terms(("ij,jk", a, b, 0.0, da, db), ("t",))',
            a=(2, 3),
            b=(3, 4),
            da=(2, 3),
            db=(3, 4),
            f32=True,
        ),
        example(
            'rt.einsum_terms(("ij,jk,kl->il", a, b, c, 0.0, da, db, dc), ("t",), True)',
            a=(2, 3),
            b=(3, 4),
            c=(4, 2),
            da=(2, 3),
            db=(3, 4),
            dc=(4, 2),
        ),
        example('rt.einsum_terms(("ii->i", a, 0.0, da), ("t",))', a=(3, 3), da=(3, 3)),
        example('rt.einsum_terms(("ii", a, g), (1,))', a=(3, 3), g=()),
        example(
            'rt.einsum_terms(("...ij,...jk->...ik", a, b, g), (1,))',
            a=(2, 2, 3),
            b=(3, 4),
            g=(2, 2, 4),
        ),
        example(
            'rt.einsum_terms(("iij,j", a, b, g, 0.0, da, db, 0.0), (2, "t"))',
            a=(2, 2, 3),
            b=(3,),
            g=(),
            da=(2, 2, 3),
            db=(3,),
        ),
        example(
            'rt.einsum_terms(("ij,jk->ki", a, b, g, c), (1, -1))',
            a=(2, 3),
            b=(3, 4),
            g=(4, 2),
            c=(2, 3),
        ),
        example(
            'rt.einsum_terms(("i,j->ij", a, b, g, c), (1, 2))', a=(3,), b=(2,), g=(3, 2), c=(3,)
        ),
        example(
            'rt.einsum_terms((a, [0, 1], b, [1, 2], 0.0, 0.0, db, 0.0, g), ("t", 0))',
            a=(2, 3),
            b=(3, 4),
            db=(3, 4),
            g=(2, 4),
        ),
        example(
            'rt.einsum_terms(("ij,jk", a, b, 0.0, da, db, 0.0, ea, eb, 0.0, fa, fb), ("t", "t"))',
            a=(2, 3),
            b=(3, 4),
            da=(2, 3),
            db=(3, 4),
            ea=(2, 3),
            eb=(3, 4),
            fa=(2, 3),
            fb=(3, 4),
        ),
    ],
    complex=True,
)
def einsum_terms(seq, history=(), optimize=False):
    """A sum of multilinear terms, each linear in each value of ``seq`` it reads: the
    tangent is the helper with one more step, ``"t"``, whose values are the tangents; the
    cotangent of ``seq[j]`` the helper with the cotangent added, step ``j``."""

    def jvp(parts):
        return rt.einsum_terms((*seq, *parts), (*history, "t"), optimize)

    def vjp(c, j):
        return rt.einsum_terms((*seq, c), (*history, j), optimize)


@rule(
    np.kron,
    examples=[
        example("np.kron(a, b)", a=(2,), b=(3,), f32=True),
        example("np.kron(a, b)", a=(2, 3), b=(2, 2)),
        example("np.kron(a, b)", a=(2,), b=(2, 3)),
    ],
    complex=True,
)
def kron(a, b):
    def jvp_a(da):
        return np.kron(da, b)

    def jvp_b(db):
        return np.kron(a, db)

    def vjp_a(g):
        return rt.kron_vjp(g, a, b, True)

    def vjp_b(g):
        return rt.kron_vjp(g, a, b, False)


_KRON_SHAPES = [((6,), (2,), (3,)), ((4, 6), (2, 3), (2, 2)), ((2, 6), (2,), (2, 3))]


@rule(
    rt.kron_vjp,
    examples=[
        example(f"rt.kron_vjp(g, a, b, {first})", g=gs, a=as_, b=bs, f32=gs == (6,))
        for gs, as_, bs in _KRON_SHAPES
        for first in (True, False)
    ],
    complex=True,
)
def kron_vjp(ans, g, a, b, first=True):
    """Bilinear in ``g`` and the other factor (``b`` if ``first``, else ``a``); the factor
    whose cotangent it is only gives the shape."""

    def jvp_g(dg):
        return rt.kron_vjp(dg, a, b, first)

    def jvp_a(da):
        if first:
            return rt.zeros_like(ans)
        return rt.kron_vjp(g, da, b, False)

    def jvp_b(db):
        if first:
            return rt.kron_vjp(g, a, db, True)
        return rt.zeros_like(ans)

    def vjp_g(c):  # np.kron(c, b) or np.kron(a, c) as np.kron computes it (Dask lacks it)
        if first:
            x = c
            y = b
        else:
            x = a
            y = c
        if rt.known_ndim(g) == 1:
            return np.reshape(np.atleast_1d(x)[:, None] * np.atleast_1d(y)[None, :], np.shape(g))
        if rt.known_ndim(g) == 2:
            return np.reshape(
                np.atleast_2d(x)[:, None, :, None] * np.atleast_2d(y)[None, :, None, :],
                np.shape(g),
            )
        return (
            np.reshape(np.atleast_1d(x)[:, None] * np.atleast_1d(y)[None, :], np.shape(g))
            if np.ndim(g) == 1
            else np.reshape(
                np.atleast_2d(x)[:, None, :, None] * np.atleast_2d(y)[None, :, None, :],
                np.shape(g),
            )
            if np.ndim(g) == 2
            else np.kron(x, y)
        )

    def vjp_a(c):
        if first:
            return rt.zeros_like(a)
        return rt.kron_vjp(g, a, c, True)

    def vjp_b(c):
        if first:
            return rt.kron_vjp(g, c, b, False)
        return rt.zeros_like(b)


def _cross_takes_2_vectors() -> bool:
    """NumPy 2.0 deprecated 2-vectors in np.cross; later versions refuse them."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            np.cross(np.ones(2), np.ones(2))
    except ValueError:
        return False
    return True


_CROSS_2D = (
    [
        example("np.cross(a, b)", a=(2,), b=(2,)),
        example("np.cross(a, b)", a=(4, 2), b=(4, 3)),
    ]
    if _cross_takes_2_vectors()
    else []
)


@rule(
    np.cross,
    examples=[
        example("np.cross(a, b)", a=(3,), b=(3,), f32=True),
        example("np.cross(a, b)", a=(4, 3), b=(3,)),
        *_CROSS_2D,
        example("np.cross(a, b, axis=0)", a=(3, 4), b=(3, 4)),
        example("np.cross(a, b, axisa=0, axisb=1, axisc=0)", a=(3, 2), b=(2, 3)),
    ],
    complex=True,
)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``a x b``; 2-vectors have a zero third component (two 2-vectors give a scalar)."""

    def jvp_a(da):
        if axis is None and axisa == -1 and axisb == -1 and axisc == -1:
            return np.cross(da, b)
        return np.cross(da, b, axisa, axisb, axisc, axis)

    def jvp_b(db):
        if axis is None and axisa == -1 and axisb == -1 and axisc == -1:
            return np.cross(a, db)
        return np.cross(a, db, axisa, axisb, axisc, axis)

    def vjp_a(g):
        return rt.cross_vjp(g, a, b, axisa, axisb, axisc, axis, True)

    def vjp_b(g):
        return rt.cross_vjp(g, a, b, axisa, axisb, axisc, axis, False)


# (cotangent, a, b, axisa, axisb, axisc, axis) of np.cross's and np.linalg.cross's examples
_CROSS_CASES = [
    ((3,), (3,), (3,), -1, -1, -1, None),
    ((4, 3), (4, 3), (3,), -1, -1, -1, None),
    ((3, 4), (3, 4), (3, 4), -1, -1, -1, 0),
    ((3, 2), (3, 2), (2, 3), 0, 1, 0, None),
    ((3, 2), (3, 2), (3, 1), 0, 0, 0, None),
] + (
    [((), (2,), (2,), -1, -1, -1, None), ((4, 3), (4, 2), (4, 3), -1, -1, -1, None)]
    if _cross_takes_2_vectors()
    else []
)


@rule(
    rt.cross_vjp,
    examples=[
        example(
            f"rt.cross_vjp(g, a, b, {axisa}, {axisb}, {axisc}, {axis}, {first})",
            g=gs,
            a=as_,
            b=bs,
            f32=gs == (3,),
        )
        for gs, as_, bs, axisa, axisb, axisc, axis in _CROSS_CASES
        for first in (True, False)
    ],
    complex=True,
)
def cross_vjp(ans, g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None, first=True):
    """Bilinear in ``g`` and the other vector (``b`` if ``first``, else ``a``): its
    transposes are ``np.cross`` itself and the sibling cotangent; the vector whose cotangent
    it is only gives the shape."""

    def jvp_g(dg):
        return rt.cross_vjp(dg, a, b, axisa, axisb, axisc, axis, first)

    def jvp_a(da):
        if first:
            return rt.zeros_like(ans)
        return rt.cross_vjp(g, da, b, axisa, axisb, axisc, axis, False)

    def jvp_b(db):
        if first:
            return rt.cross_vjp(g, a, db, axisa, axisb, axisc, axis, True)
        return rt.zeros_like(ans)

    def vjp_g(c):
        if first:
            if axis is None and axisa == -1 and axisb == -1 and axisc == -1:
                return np.cross(c, b)
            return np.cross(c, b, axisa, axisb, axisc, axis)
        if axis is None and axisa == -1 and axisb == -1 and axisc == -1:
            return np.cross(a, c)
        return np.cross(a, c, axisa, axisb, axisc, axis)

    def vjp_a(c):
        if first:
            return rt.zeros_like(a)
        return rt.cross_vjp(g, a, c, axisa, axisb, axisc, axis, True)

    def vjp_b(c):
        if first:
            return rt.cross_vjp(g, c, b, axisa, axisb, axisc, axis, False)
        return rt.zeros_like(b)


@sequence_rule(
    np.linalg.multi_dot,
    sequence="arrays",
    examples=[
        example("np.linalg.multi_dot([a, b, c])", a=(2, 3), b=(3, 4), c=(4, 2), f32=True),
        example("np.linalg.multi_dot((a, b))", a=(3,), b=(3, 2)),
        example("np.linalg.multi_dot([a, b, c, d])", a=(3,), b=(3, 4), c=(4, 2), d=(2,)),
    ],
    complex=True,
)
def multi_dot(arrays):
    """``(*arrays, *parts)``: a list the function built, or an array's rows, is unpacked
    when the code runs."""

    def jvp(parts):
        return rt.multi_dot_terms((*arrays, *parts), ("t",))

    def vjp(g, k):
        return rt.multi_dot_vjp(g, arrays, k)


@sequence_rule(
    rt.multi_dot_vjp,
    sequence="arrays",
    examples=[
        example(
            "rt.multi_dot_vjp(g, (a, b, c), 1)", g=(2, 2), a=(2, 3), b=(3, 4), c=(4, 2), f32=True
        ),
        example("rt.multi_dot_vjp(g, [a, b], 0)", g=(2,), a=(3,), b=(3, 2)),
        example("rt.multi_dot_vjp(g, [a, b, c, d], 3)", g=(), a=(3,), b=(3, 4), c=(4, 2), d=(2,)),
    ],
    complex=True,
)
def multi_dot_vjp(g, arrays, k=0):
    """Linear in ``g`` and in each factor but ``arrays[k]``, which only gives the shape;
    ``rt.multi_dot_terms((*arrays, g), (k,))``."""

    def jvp_g(dg):
        return rt.multi_dot_vjp(dg, arrays, k)

    def jvp_arrays(parts):
        return rt.multi_dot_terms((*arrays, g, *parts, 0.0), (k, "t"))

    def vjp_g(c):
        return rt.multi_dot_terms((*arrays, g, c), (k, -1))

    def vjp_arrays(c, j):
        return rt.multi_dot_terms((*arrays, g, c), (k, j))


@sequence_rule(
    rt.multi_dot_terms,
    sequence="seq",
    examples=[
        example(
            "rt.multi_dot_terms((a, b, c, da, db, dc), ('t',))",
            a=(2, 3),
            b=(3, 4),
            c=(4, 2),
            da=(2, 3),
            db=(3, 4),
            dc=(4, 2),
            f32=True,
        ),
        example("rt.multi_dot_terms((a, b, g), (1,))", a=(3,), b=(3, 2), g=(2,)),
        example(
            "rt.multi_dot_terms((a, b, c, d, g, 0.0, db, dc, 0.0, 0.0), (0, 't'))",
            a=(3,),
            b=(3, 4),
            c=(4, 2),
            d=(2,),
            g=(),
            db=(3, 4),
            dc=(4, 2),
        ),
        example(
            "rt.multi_dot_terms((a, b, c, g, h), (2, 1))",
            a=(2, 3),
            b=(3, 4),
            c=(4, 2),
            g=(2, 2),
            h=(4, 2),
        ),
    ],
    complex=True,
)
def multi_dot_terms(seq, history=()):
    """As ``rt.einsum_terms``: one more step of history."""

    def jvp(parts):
        return rt.multi_dot_terms((*seq, *parts), (*history, "t"))

    def vjp(c, j):
        return rt.multi_dot_terms((*seq, c), (*history, j))


# -- NumPy 2 names --------------------------------------------------------------------------
if hasattr(np, "vecdot"):

    @rule(
        np.vecdot,
        examples=[
            example("np.vecdot(a, b)", a=(3,), b=(3,)),
            example("np.vecdot(a, b)", a=(2, 3), b=(3,), f32=True),
            example("np.vecdot(a, b, axis=0)", a=(3, 2), b=(3, 1)),
            example("np.vecdot(a, b)", a=(2, 1, 3), b=(4, 3)),
        ],
    )
    def vecdot(x1, x2, axis=-1):
        def jvp_x1(d1):
            return np.vecdot(d1, x2, axis=axis)

        def jvp_x2(d2):
            return np.vecdot(x1, d2, axis=axis)

        def vjp_x1(g):
            return rt.vecdot_vjp(g, x1, x2, axis)

        def vjp_x2(g):
            return rt.vecdot_vjp(g, x2, x1, axis)

    @rule(
        rt.vecdot_vjp,
        examples=[
            example("rt.vecdot_vjp(g, x, y)", g=(), x=(3,), y=(3,)),
            example("rt.vecdot_vjp(g, x, y)", g=(2,), x=(2, 3), y=(3,), f32=True),
            example("rt.vecdot_vjp(g, x, y)", g=(2,), x=(3,), y=(2, 3)),
            example("rt.vecdot_vjp(g, x, y, 0)", g=(2,), x=(3, 2), y=(3, 1)),
            example("rt.vecdot_vjp(g, x, y, 0)", g=(2,), x=(3, 1), y=(3, 2)),
            example("rt.vecdot_vjp(g, x, y)", g=(2, 4), x=(2, 1, 3), y=(4, 3)),
            example("rt.vecdot_vjp(g, x, y)", g=(2, 4), x=(4, 3), y=(2, 1, 3)),
        ],
        complex=True,
    )
    def vecdot_vjp(ans, g, x, y, axis=-1):
        """The cotangent of ``x`` in ``np.vecdot(x, y, axis=axis)`` (also of ``x2``, with
        the arguments swapped): bilinear in (``g``, ``y``); ``x`` only gives the shape."""

        def jvp_g(dg):
            return rt.vecdot_vjp(dg, x, y, axis)

        def jvp_x(dx):
            return rt.zeros_like(ans)

        def jvp_y(dy):
            return rt.vecdot_vjp(g, x, dy, axis)

        def vjp_g(c):  # np.vecdot(c, y, axis=axis) (Dask's needs one chunk along axis)
            if axis == -1:
                return np.einsum("...i,...i->...", c, y)
            return np.einsum("...i,...i->...", np.moveaxis(c, axis, -1), np.moveaxis(y, axis, -1))

        def vjp_x(c):
            return rt.zeros_like(x)

        def vjp_y(c):
            return rt.vecdot_vjp(g, y, c, axis)


if hasattr(np.linalg, "vecdot") and np.linalg.vecdot is not getattr(np, "vecdot", None):

    @rule(
        np.linalg.vecdot,
        examples=[
            example("np.linalg.vecdot(a, b)", a=(2, 3), b=(3,), f32=True),
            example("np.linalg.vecdot(a, b, axis=0)", a=(3, 2), b=(3, 2)),
        ],
    )
    def linalg_vecdot(x1, x2, axis=-1):
        def jvp_x1(d1):
            return np.linalg.vecdot(d1, x2, axis=axis)

        def jvp_x2(d2):
            return np.linalg.vecdot(x1, d2, axis=axis)

        def vjp_x1(g):
            return rt.vecdot_vjp(g, x1, x2, axis)

        def vjp_x2(g):
            return rt.vecdot_vjp(g, x2, x1, axis)


if hasattr(np, "matvec") and hasattr(np, "vecmat"):

    @rule(
        np.matvec,
        examples=[
            example("np.matvec(a, b)", a=(2, 3), b=(3,), f32=True),
            example("np.matvec(a, b)", a=(4, 2, 3), b=(3,)),
            example("np.matvec(a, b)", a=(2, 3), b=(4, 3)),
        ],
    )
    def matvec(x1, x2):
        """``(..., m, n), (..., n) -> (..., m)``."""

        def jvp_x1(d1):
            return np.matvec(d1, x2)

        def jvp_x2(d2):
            return np.matvec(x1, d2)

        def vjp_x1(g):
            return rt.unbroadcast(np.expand_dims(g, -1) * np.expand_dims(x2, -2), x1)

        def vjp_x2(g):
            return rt.unbroadcast(np.vecmat(g, x1), x2)

    @rule(
        np.vecmat,
        examples=[
            example("np.vecmat(a, b)", a=(2,), b=(2, 3), f32=True),
            example("np.vecmat(a, b)", a=(4, 2), b=(2, 3)),
            example("np.vecmat(a, b)", a=(2,), b=(4, 2, 3)),
        ],
    )
    def vecmat(x1, x2):
        """``(..., n), (..., n, m) -> (..., m)``."""

        def jvp_x1(d1):
            return np.vecmat(d1, x2)

        def jvp_x2(d2):
            return np.vecmat(x1, d2)

        def vjp_x1(g):
            return rt.unbroadcast(np.matvec(x2, g), x1)

        def vjp_x2(g):
            return rt.unbroadcast(np.expand_dims(x1, -1) * np.expand_dims(g, -2), x2)


if hasattr(np.linalg, "outer") and np.linalg.outer is not np.outer:

    @rule(
        np.linalg.outer,
        examples=[example("np.linalg.outer(a, b)", a=(3,), b=(2,), f32=True)],
        complex=True,
    )
    def linalg_outer(x1, x2):
        """1-D vectors only."""

        def jvp_x1(d1):
            return np.linalg.outer(d1, x2)

        def jvp_x2(d2):
            return np.linalg.outer(x1, d2)

        def vjp_x1(g):
            return g @ x2

        def vjp_x2(g):
            return x1 @ g


if hasattr(np.linalg, "cross") and np.linalg.cross is not np.cross:

    @rule(
        np.linalg.cross,
        examples=[
            example("np.linalg.cross(a, b)", a=(3,), b=(3,), f32=True),
            example("np.linalg.cross(a, b, axis=0)", a=(3, 2), b=(3, 1)),
        ],
        complex=True,
    )
    def linalg_cross(x1, x2, axis=-1):
        """3-vectors only."""

        def jvp_x1(d1):
            return np.linalg.cross(d1, x2, axis=axis)

        def jvp_x2(d2):
            return np.linalg.cross(x1, d2, axis=axis)

        def vjp_x1(g):
            return rt.cross_vjp(g, x1, x2, axis, axis, axis, None, True)

        def vjp_x2(g):
            return rt.cross_vjp(g, x1, x2, axis, axis, axis, None, False)


if hasattr(np.linalg, "tensordot") and np.linalg.tensordot is not np.tensordot:

    @rule(
        np.linalg.tensordot,
        examples=[
            example("np.linalg.tensordot(a, b)", a=(2, 3, 4), b=(3, 4, 2), f32=True),
            example("np.linalg.tensordot(a, b, axes=([1], [0]))", a=(2, 3), b=(3, 4)),
        ],
        complex=True,
    )
    def linalg_tensordot(x1, x2, axes=2):
        def jvp_x1(d1):
            return np.linalg.tensordot(d1, x2, axes=axes)

        def jvp_x2(d2):
            return np.linalg.tensordot(x1, d2, axes=axes)

        def vjp_x1(g):
            return rt.tensordot_vjp_a(g, x1, x2, axes)

        def vjp_x2(g):
            return rt.tensordot_vjp_b(g, x1, x2, axes)


if hasattr(np.linalg, "matmul") and np.linalg.matmul is not np.matmul:

    @rule(
        np.linalg.matmul,
        examples=[
            example("np.linalg.matmul(a, b)", a=(2, 3), b=(3, 4), f32=True),
            example("np.linalg.matmul(a, b)", a=(2, 2, 3), b=(3,)),
        ],
        complex=True,
    )
    def linalg_matmul(x1, x2):
        def jvp_x1(d1):
            return np.linalg.matmul(d1, x2)

        def jvp_x2(d2):
            return np.linalg.matmul(x1, d2)

        def vjp_x1(g):
            return rt.matmul_vjp_a(g, x1, x2)

        def vjp_x2(g):
            return rt.matmul_vjp_b(g, x1, x2)
