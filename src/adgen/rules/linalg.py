"""Products, transposes, reshapes and indexing."""

import operator

import numpy as np

from .. import runtime as rt
from .registry import attribute_rule, methods, rule
from .samples import INVERTIBLE, example


@rule(np.matmul, operator.matmul)
def matmul(x1, x2):
    def jvp_x1(d1):
        return d1 @ x2

    def jvp_x2(d2):
        return x1 @ d2

    def vjp_x1(g):
        return rt.matmul_vjp_a(g, x1, x2)

    def vjp_x2(g):
        return rt.matmul_vjp_b(g, x1, x2)


@rule(np.dot)
def dot(a, b):
    def jvp_a(da):
        return np.dot(da, b)

    def jvp_b(db):
        return np.dot(a, db)

    def vjp_a(g):
        return rt.dot_vjp_a(g, a, b)

    def vjp_b(g):
        return rt.dot_vjp_b(g, a, b)


@rule(np.transpose, view=True)
def transpose(a, axes=None):
    def jvp(da):
        if axes is None:
            return np.transpose(da)
        return np.transpose(da, axes)

    def vjp(g):
        if axes is None:
            return np.transpose(g)
        return np.transpose(g, np.argsort(np.mod(axes, np.size(axes))))


@attribute_rule("T")
def attribute_t(a):
    def jvp(da):
        return np.transpose(da)

    def vjp(g):
        return np.transpose(g)


@attribute_rule("real")
def attribute_real(a):
    def jvp(da):
        return np.real(da)

    def vjp(g):
        return np.real(g)


@rule(np.reshape, view=True)
def reshape(a, shape):
    def jvp(da):
        return np.reshape(da, shape)

    def vjp(g):
        return np.reshape(g, np.shape(a))


@rule(operator.getitem, view=True)
def getitem(a, index):
    def jvp(da):
        return da[index]

    def vjp(g):
        return rt.getitem_vjp(g, a, index)


methods(dot=np.dot, transpose=np.transpose, reshape=np.reshape, pack=("transpose", "reshape"))


@rule(
    np.linalg.slogdet,
    outputs=2,
    domain=INVERTIBLE,
    examples=[
        example("np.linalg.slogdet(a)[1]", a=(3, 3), f32=True),
        example("np.linalg.slogdet(a)[1]", a=(2, 3, 3)),
        example("np.linalg.slogdet(a)[0] * np.linalg.slogdet(a)[1]", a=(3, 3)),
    ],
)
def slogdet(ans, a):
    """``(sign, log|det a|)``: the sign is piecewise constant; d log|det a| = tr(a⁻¹ da)."""

    def jvp(da):
        return (
            np.zeros_like(ans[0]),
            np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1),
        )

    def vjp(g):
        return np.expand_dims(g[1], (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)
