"""Contractions: inner, outer and tensor products, ``np.einsum``, ``np.kron``, ``np.cross``,
``np.linalg.multi_dot`` and the NumPy 2 vector/matrix products.

All of them are multilinear, so each tangent is the same product with one operand replaced
by its tangent, and each cotangent contracts the output's cotangent with the other operands
(helpers ``rt.einsum_vjp``, ``rt.tensordot_vjp_a``... in ``adgen.runtime``). They are smooth
everywhere: there is no kink convention to choose. Cotangents are summed back over axes that
broadcasting added (``np.vecdot``, ``np.matvec``, ``np.cross``, einsum's ``...``).

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
    ],
)
def vdot(a, b):
    """The sum of the products of the flattened arrays (real inputs)."""

    def jvp_a(da):
        return np.vdot(da, b)

    def jvp_b(db):
        return np.vdot(a, db)

    def vjp_a(g):
        return np.reshape(g * np.ravel(b), np.shape(a))

    def vjp_b(g):
        return np.reshape(g * np.ravel(a), np.shape(b))


@rule(
    np.inner,
    examples=[
        example("np.inner(a, b)", a=(4,), b=(4,)),
        example("np.inner(a, b)", a=(2, 3), b=(4, 3), f32=True),
        example("np.inner(a, b)", a=(2, 2, 3), b=(3,)),
        example("np.inner(a, b)", a=(), b=(2, 3)),
    ],
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


_OUTER_EXAMPLES = [
    example("np.outer(a, b)", a=(3,), b=(4,), f32=True),
    example("np.outer(a, b)", a=(2, 2), b=(3,)),
]


@rule(np.outer, examples=_OUTER_EXAMPLES)
def outer(a, b):
    """Inputs are flattened: the result is ``(a.size, b.size)``."""

    def jvp_a(da):
        return np.outer(da, b)

    def jvp_b(db):
        return np.outer(a, db)

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


@rule(np.tensordot, examples=_tensordot_examples("np.tensordot"))
def tensordot(a, b, axes=2):
    def jvp_a(da):
        return np.tensordot(da, b, axes)

    def jvp_b(db):
        return np.tensordot(a, db, axes)

    def vjp_a(g):
        return rt.tensordot_vjp_a(g, a, b, axes)

    def vjp_b(g):
        return rt.tensordot_vjp_b(g, a, b, axes)


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
)
def einsum(ans, *operands, optimize=False):
    """String form ``einsum(subscripts, *arrays)`` or interleaved form
    ``einsum(a, sublist_a, b, sublist_b, [out])``: the helpers find the arrays."""

    def jvp(parts):
        return rt.einsum_jvp(ans, operands, parts, optimize)

    def vjp(g, k):
        return rt.einsum_vjp(g, operands, k, optimize)


@rule(
    np.kron,
    examples=[
        example("np.kron(a, b)", a=(2,), b=(3,), f32=True),
        example("np.kron(a, b)", a=(2, 3), b=(2, 2)),
        example("np.kron(a, b)", a=(2,), b=(2, 3)),
    ],
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


@sequence_rule(
    np.linalg.multi_dot,
    sequence="arrays",
    examples=[
        example("np.linalg.multi_dot([a, b, c])", a=(2, 3), b=(3, 4), c=(4, 2), f32=True),
        example("np.linalg.multi_dot((a, b))", a=(3,), b=(3, 2)),
        example("np.linalg.multi_dot([a, b, c, d])", a=(3,), b=(3, 4), c=(4, 2), d=(2,)),
    ],
)
def multi_dot(arrays):
    def jvp(parts):
        return rt.multi_dot_jvp(arrays, parts)

    def vjp(g, k):
        return rt.multi_dot_vjp(g, arrays, k)


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

    @rule(np.linalg.outer, examples=[example("np.linalg.outer(a, b)", a=(3,), b=(2,), f32=True)])
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
