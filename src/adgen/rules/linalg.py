"""Products, transposes, reshapes and indexing."""

import operator

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import attribute_as, attribute_rule, methods, nondifferentiable, rule
from adgen.rules.samples import INVERTIBLE, SPD, SYMMETRIC, UNIT, Arg, Domain, example


@rule(np.matmul, operator.matmul, complex=True)
def matmul(x1, x2):
    def jvp_x1(d1):
        return d1 @ x2

    def jvp_x2(d2):
        return x1 @ d2

    def bjvp_x1(d1):
        # d1: (k, *x1.shape); the batch axis must meet no axis of x2's stack
        if rt.known_ndim(x1) < 1 or rt.known_ndim(x2) < 1:  # (-1: not known)
            return None
        if rt.known_ndim(x1) == 1 and rt.known_ndim(x2) <= 2:
            return d1 @ x2
        if rt.known_ndim(x1) == 1:
            return np.squeeze(rt.lifted(d1[:, None, :], rt.known_ndim(x2) - 1) @ x2, -2)
        if rt.known_ndim(x2) <= rt.known_ndim(x1):
            return d1 @ x2
        return rt.lifted(d1, rt.known_ndim(x2)) @ x2

    def bjvp_x2(d2):
        if rt.known_ndim(x1) < 1 or rt.known_ndim(x2) < 1:
            return None
        if rt.known_ndim(x2) == 1 and rt.known_ndim(x1) == 1:
            return d2 @ x1
        if rt.known_ndim(x2) == 1 and rt.known_ndim(x1) == 2:
            return d2 @ np.transpose(x1)
        if rt.known_ndim(x2) == 1:  # the tangents as the columns of one matrix
            return np.moveaxis(x1 @ np.swapaxes(d2, 0, -1), -1, 0)
        if rt.known_ndim(x1) <= rt.known_ndim(x2):
            return x1 @ d2
        return x1 @ rt.lifted(d2, rt.known_ndim(x1))

    def vjp_x1(g):
        # shapes known when the code is made (specialised for a call): plain products
        if rt.known_ndim(x1) == 2 and rt.known_ndim(x2) == 2:
            return g @ np.transpose(x2)
        if rt.known_ndim(x1) == 2 and rt.known_ndim(x2) == 1:
            return np.outer(g, x2)
        if rt.known_ndim(x1) == 1 and rt.known_ndim(x2) == 2:
            return x2 @ g
        if rt.known_ndim(x1) == 1 and rt.known_ndim(x2) == 1:
            return g * x2
        if (
            rt.known_ndim(x1) > 2
            and rt.known_ndim(x2) == rt.known_ndim(x1)
            and rt.known_shape(x1)[:-2] == rt.known_shape(x2)[:-2]
        ):
            return g @ np.swapaxes(x2, -1, -2)  # a batch of products, no broadcasting
        return rt.matmul_vjp_a(g, x1, x2)

    def vjp_x2(g):
        if rt.known_ndim(x1) == 2 and rt.known_ndim(x2) == 2:
            return np.transpose(x1) @ g
        if rt.known_ndim(x1) == 2 and rt.known_ndim(x2) == 1:
            return g @ x1
        if rt.known_ndim(x1) == 1 and rt.known_ndim(x2) == 2:
            return np.outer(x1, g)
        if rt.known_ndim(x1) == 1 and rt.known_ndim(x2) == 1:
            return g * x1
        if (
            rt.known_ndim(x2) > 2
            and rt.known_ndim(x1) == rt.known_ndim(x2)
            and rt.known_shape(x1)[:-2] == rt.known_shape(x2)[:-2]
        ):
            return np.swapaxes(x1, -1, -2) @ g
        return rt.matmul_vjp_b(g, x1, x2)


@rule(np.dot, complex=True)
def dot(a, b):
    def jvp_a(da):
        return np.dot(da, b)

    def jvp_b(db):
        return np.dot(a, db)

    def bjvp_a(da):  # (np.dot is matmul for arrays of one or two axes)
        if rt.known_ndim(a) in (1, 2) and rt.known_ndim(b) in (1, 2):
            return da @ b
        return None

    def bjvp_b(db):
        if rt.known_ndim(a) in (1, 2) and rt.known_ndim(b) == 1:
            return db @ np.transpose(a)
        if rt.known_ndim(a) in (1, 2) and rt.known_ndim(b) == 2:
            return a @ db
        return None

    def vjp_a(g):
        if rt.known_ndim(a) == 1 and rt.known_ndim(b) == 1:  # an inner product
            return g * b
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 1:
            return np.outer(g, b)
        if rt.known_ndim(a) == 1 and rt.known_ndim(b) == 2:
            return b @ g
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 2:
            return g @ np.transpose(b)
        return rt.dot_vjp_a(g, a, b)

    def vjp_b(g):
        if rt.known_ndim(a) == 1 and rt.known_ndim(b) == 1:
            return g * a
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 1:
            return g @ a
        if rt.known_ndim(a) == 1 and rt.known_ndim(b) == 2:
            return np.outer(a, g)
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 2:
            return np.transpose(a) @ g
        return rt.dot_vjp_b(g, a, b)


@rule(np.transpose, view=True, complex=True)
def transpose(a, axes=None):
    def jvp(da):
        if axes is None:
            return np.transpose(da)
        return np.transpose(da, axes)

    def bjvp(da):
        return np.transpose(da, rt.batch_transpose(axes, np.ndim(a)))

    def vjp(g):
        if axes is None:
            return np.transpose(g)
        return np.transpose(g, rt.inverse_axes(axes))


@attribute_rule("T", complex=True)
def attribute_t(a):
    def jvp(da):
        return np.transpose(da)

    def bjvp(da):
        return np.transpose(da, rt.batch_transpose(None, np.ndim(a)))

    def vjp(g):
        return np.transpose(g)


# z.real and z.imag are np.real(z) and np.imag(z)
attribute_as("real", np.real)
attribute_as("imag", np.imag)


@rule(
    np.reshape,
    view=True,
    complex=True,
    examples=[
        example("np.reshape(a, (3, 2), order='F') * np.arange(6.0).reshape(3, 2)", a=(2, 3)),
        example("np.reshape(a, (6,), 'A') * np.arange(6.0)", a=(2, 3)),
    ],
)
def reshape(a, shape, order="C"):
    """``order`` is the index order values are read and written in (``'A'``: ``a``'s
    layout decides, :func:`rt.index_order`); the cotangent goes back in the same order."""

    def jvp(da):
        if order == "C":
            return np.reshape(da, shape)
        if rt.index_order(a, order) == "C":  # ('A' of a C array: libraries without order=)
            return np.reshape(da, shape)
        return np.reshape(da, shape, order="F")

    def bjvp(da):
        if order == "C":
            return np.reshape(da, (np.shape(da)[0], *np.shape(np.reshape(a, shape))))
        return None

    def vjp(g):
        if order == "C":
            return np.reshape(g, np.shape(a))
        if rt.index_order(a, order) == "C":
            return np.reshape(g, np.shape(a))
        return np.reshape(g, np.shape(a), order="F")


@rule(operator.getitem, view=True, complex=True)
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


# -- np.linalg: inverses, solves, determinants and factorizations -----------------------------
# All accept stacks of matrices (..., n, n); matrix transposes are np.swapaxes(., -1, -2).


@rule(
    np.linalg.inv,
    domain=INVERTIBLE,
    examples=[
        example("np.linalg.inv(a)", a=(3, 3), f32=True),
        example("np.linalg.inv(a)", a=(2, 2, 2)),
        example("np.sum(np.linalg.inv(a) ** 2)", a=(4, 4)),
    ],
    complex=True,
)
def inv(ans, a):
    """d(a⁻¹) = -a⁻¹ da a⁻¹."""

    def jvp(da):
        return -(ans @ da @ ans)

    bjvp = jvp  # noqa: F841 - read by the registry (matmul broadcasts over the batch axis)

    def vjp(g):
        return -(np.swapaxes(ans, -1, -2) @ g @ np.swapaxes(ans, -1, -2))


@rule(
    np.linalg.solve,
    examples=[
        example("np.linalg.solve(a, b)", a=Arg((3, 3), INVERTIBLE), b=(3,), f32=True),
        example("np.linalg.solve(a, b)", a=Arg((3, 3), INVERTIBLE), b=(3, 2), f32=True),
        example("np.linalg.solve(a, b)", a=Arg((2, 3, 3), INVERTIBLE), b=(3,)),
        example("np.linalg.solve(a, b)", a=Arg((2, 3, 3), INVERTIBLE), b=(3, 2)),
        example("np.linalg.solve(a, b)", a=Arg((3, 3), INVERTIBLE), b=(2, 3, 1)),
    ],
    complex=True,
)
def solve(ans, a, b):
    """x = a⁻¹ b. NumPy 2: a 1-d ``b`` is one vector (for every matrix of a stack ``a``);
    otherwise ``b`` is a (stack of) matrices. dx = a⁻¹ (db - da x)."""

    def jvp_a(da):
        xm = ans[..., None] if np.ndim(b) == 1 else ans
        dxm = -np.linalg.solve(a, da @ xm)
        return dxm[..., 0] if np.ndim(b) == 1 else dxm

    def jvp_b(db):
        return np.linalg.solve(a, db)

    def bjvp_a(da):  # (a matrix and one right-hand side or a matrix of them)
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 1:
            return -np.linalg.solve(a, da @ ans[:, None])[..., 0]
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 2:
            return -np.linalg.solve(a, da @ ans)
        return None

    def bjvp_b(db):
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 1:
            return np.transpose(np.linalg.solve(a, np.transpose(db)))
        if rt.known_ndim(a) == 2 and rt.known_ndim(b) == 2:
            return np.linalg.solve(a, db)
        return None

    def vjp_a(g):
        xm = ans[..., None] if np.ndim(b) == 1 else ans
        gm = g[..., None] if np.ndim(b) == 1 else g
        return rt.unbroadcast(
            -(np.linalg.solve(np.swapaxes(a, -1, -2), gm) @ np.swapaxes(xm, -1, -2)), a
        )

    def vjp_b(g):
        gm = g[..., None] if np.ndim(b) == 1 else g
        gbm = np.linalg.solve(np.swapaxes(a, -1, -2), gm)
        return rt.unbroadcast(gbm[..., 0] if np.ndim(b) == 1 else gbm, b)


@rule(
    np.linalg.det,
    domain=INVERTIBLE,
    examples=[
        example("np.linalg.det(a)", a=(3, 3), f32=True),
        example("np.linalg.det(a)", a=(2, 3, 3)),
        example("np.linalg.det(a) ** 2", a=(1, 1)),
    ],
    complex=True,
)
def det(ans, a):
    """d det a = det a · tr(a⁻¹ da) (invertible ``a``; not claimed at singular matrices)."""

    def jvp(da):
        return ans * np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1)

    def bjvp(da):
        if rt.known_ndim(a) == 2:
            return ans * np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1)
        return None

    def vjp(g):
        return np.expand_dims(g * ans, (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@rule(
    np.linalg.cholesky,
    domain=SPD,
    examples=[
        example("np.linalg.cholesky(a)", a=(3, 3), f32=True),
        example("np.linalg.cholesky(a)", a=(2, 3, 3)),
        example("np.linalg.cholesky(a, upper=True)", a=(3, 3), f32=True),
        example("np.sum(np.linalg.cholesky(a) ** 2)", a=(4, 4)),
    ],
)
def cholesky(ans, a, upper=False):
    """``a = L Lᵀ``. NumPy reads only the lower triangle of ``a`` (the upper one with
    ``upper=True``), so the derivative w.r.t. the other triangle is 0: the tangent is
    symmetrized from the triangle read, and the cotangent lives on that triangle.
    dL = L Φ(L⁻¹ dA L⁻ᵀ), Φ = lower triangle with the diagonal halved."""

    def jvp(da):
        low = np.swapaxes(ans, -1, -2) if upper else ans
        if upper:
            ds = np.triu(da) + np.swapaxes(np.triu(da, 1), -1, -2)
        else:
            ds = np.tril(da) + np.swapaxes(np.tril(da, -1), -1, -2)
        x = np.linalg.solve(low, np.swapaxes(np.linalg.solve(low, ds), -1, -2))
        dlow = low @ (np.tril(x) - 0.5 * (x * np.eye(np.shape(a)[-1], dtype=x.dtype)))
        return np.swapaxes(dlow, -1, -2) if upper else dlow

    def vjp(g):
        low = np.swapaxes(ans, -1, -2) if upper else ans
        glow = np.swapaxes(g, -1, -2) if upper else g
        eye = np.eye(np.shape(a)[-1], dtype=low.dtype)
        p = np.swapaxes(low, -1, -2) @ glow
        p = np.tril(p) - 0.5 * (p * eye)
        y = np.linalg.solve(np.swapaxes(low, -1, -2), p)
        s = np.swapaxes(np.linalg.solve(np.swapaxes(low, -1, -2), np.swapaxes(y, -1, -2)), -1, -2)
        s = s + np.swapaxes(s, -1, -2)
        if upper:
            return np.triu(s) - 0.5 * (s * eye)
        return np.tril(s) - 0.5 * (s * eye)


@rule(
    np.linalg.eigh,
    outputs=2,
    domain=SYMMETRIC,
    examples=[
        example("np.linalg.eigh(a)[0]", a=(3, 3), f32=True),
        example("np.linalg.eigh(a)[1] ** 2", a=(3, 3), f32=True),
        example("np.linalg.eigh(a, UPLO='U')[1] ** 2", a=(3, 3)),
        example(
            "(np.linalg.eigh(a)[1] * np.linalg.eigh(a)[0][..., None, :] ** 3) "
            "@ np.transpose(np.linalg.eigh(a)[1], (0, 2, 1))",
            a=(2, 3, 3),
        ),
        example("np.linalg.eigh(a)[0] * np.sum(np.linalg.eigh(a)[1] ** 2, axis=0)", a=(4, 4)),
    ],
)
def eigh(ans, a, UPLO="L"):  # noqa: N803 - NumPy's parameter name
    """``w, v = eigh(a)`` (ascending ``w``, distinct eigenvalues). NumPy reads one triangle
    (``UPLO``), so the tangent is symmetrized from it and the cotangent lives on it.
    With M = vᵀ dA v: dw = diag(M), dv = v (F ∘ M), F_ij = 1 / (w_j - w_i) off the diagonal.
    Eigenvectors are defined up to sign: differentiate sign-invariant functions of them."""

    def jvp(da):
        if UPLO in ("U", "u"):
            ds = np.triu(da) + np.swapaxes(np.triu(da, 1), -1, -2)
        else:
            ds = np.tril(da) + np.swapaxes(np.tril(da, -1), -1, -2)
        w = rt.distinct(ans[0], "np.linalg.eigh")
        v = ans[1]
        eye = np.eye(np.shape(a)[-1], dtype=w.dtype)
        f = (1.0 - eye) / (w[..., None, :] - w[..., :, None] + eye)
        m = np.swapaxes(v, -1, -2) @ ds @ v
        return (np.sum(m * eye, axis=-1), v @ (f * m))

    def vjp(g):
        w = rt.distinct(ans[0], "np.linalg.eigh")
        v = ans[1]
        eye = np.eye(np.shape(a)[-1], dtype=w.dtype)
        f = (1.0 - eye) / (w[..., None, :] - w[..., :, None] + eye)
        inner = f * (np.swapaxes(v, -1, -2) @ g[1]) + g[0][..., None] * eye
        s = v @ inner @ np.swapaxes(v, -1, -2)
        if UPLO in ("U", "u"):
            return np.triu(s) + np.triu(np.swapaxes(s, -1, -2), 1)
        return np.tril(s) + np.tril(np.swapaxes(s, -1, -2), -1)


@rule(
    np.linalg.eigvalsh,
    domain=SYMMETRIC,
    examples=[
        example("np.linalg.eigvalsh(a)", a=(3, 3), f32=True),
        example("np.linalg.eigvalsh(a, UPLO='U')", a=(3, 3)),
        example("np.linalg.eigvalsh(a)", a=(2, 4, 4)),
    ],
)
def eigvalsh(a, UPLO="L"):  # noqa: N803 - NumPy's parameter name
    """Eigenvalues of the symmetric matrix read from one triangle: dw_i = v_iᵀ dA v_i."""

    def jvp(da):
        if UPLO in ("U", "u"):
            ds = np.triu(da) + np.swapaxes(np.triu(da, 1), -1, -2)
        else:
            ds = np.tril(da) + np.swapaxes(np.tril(da, -1), -1, -2)
        v = np.linalg.eigh(a, UPLO)[1]
        return np.sum(v * (ds @ v), axis=-2)

    def vjp(g):
        v = np.linalg.eigh(a, UPLO)[1]
        s = (v * g[..., None, :]) @ np.swapaxes(v, -1, -2)
        if UPLO in ("U", "u"):
            return np.triu(s) + np.triu(np.swapaxes(s, -1, -2), 1)
        return np.tril(s) + np.tril(np.swapaxes(s, -1, -2), -1)


# np.linalg.eig / eigvals of general (non-symmetric) matrices. The examples compose their
# inputs so that the eigenvalues stay well apart: a symmetric matrix (eigenvalues near
# 1, 2, 3...) plus a small non-symmetric one (real eigenvalues: NumPy returns real arrays),
# or a small matrix plus the normal matrix ROTATION (eigenvalues ±4.2i, 0 for n = 3;
# ±4.9i, ±1.9i for n = 4: complex arrays from real input). The examples on an argument
# itself draw uniform matrices whose eigenvalues are at least 0.4 apart.
_ROTATION = "3.0 * (np.eye({n}, k=1, dtype=a.dtype) - np.eye({n}, k=-1, dtype=a.dtype))"
_SMALL = Domain(-0.3, 0.3)


@rule(
    np.linalg.eig,
    outputs=2,
    complex=True,
    examples=[
        example(
            "np.linalg.eig(a + 0.1 * b)[0]",
            a=Arg((3, 3), SYMMETRIC),
            b=Arg((3, 3), UNIT),
            f32=True,
        ),
        example(f"np.linalg.eig(a + {_ROTATION.format(n=3)})[1]", a=Arg((3, 3), _SMALL)),
        example(
            f"np.linalg.eig(a + {_ROTATION.format(n=4)})[0]", a=Arg((2, 4, 4), _SMALL), f32=True
        ),
        example(
            "np.linalg.eig(a + 0.1 * b)[1] ** 2",
            a=Arg((2, 3, 3), SYMMETRIC),
            b=Arg((2, 3, 3), UNIT),
        ),
        example(  # v diag(w²) v⁻¹ = A²: the eigenvectors' scale cancels
            "np.linalg.eig(a + r)[1] @ (np.linalg.eig(a + r)[0][..., :, None] ** 2 "
            "* np.linalg.inv(np.linalg.eig(a + r)[1]))",
            a=Arg((2, 3, 3), _SMALL),
            r=Arg((3, 3), SYMMETRIC),
        ),
        example(  # |v|²: the eigenvectors' phase cancels
            f"np.real(np.linalg.eig(a + {_ROTATION.format(n=4)})[1] "
            f"* np.conj(np.linalg.eig(a + {_ROTATION.format(n=4)})[1]))",
            a=Arg((4, 4), _SMALL),
        ),
        example("np.abs(np.linalg.eig(a)[1])", a=(3, 3)),  # a complex pair (see eigvals)
    ],
)
def eig(ans, a):
    """``w, v = eig(a)`` for a general square matrix (stacks too), distinct eigenvalues
    (repeated ones are refused by ``rt.distinct``: no derivative there). The result's dtype
    follows NumPy's: complex for complex input or complex eigenvalues, real for real input
    whose eigenvalues are all real. With M = v⁻¹ dA v: dw = diag(M), and dv = U + v diag(c)
    with U = v (F ∘ M), F_ij = 1 / (w_j - w_i) off the diagonal (0 on it).

    Convention: the eigenvectors are differentiated as NumPy (LAPACK's geev) normalizes them,
    each column of unit 2-norm with its largest-modulus entry real (positive for complex
    input; for real input a real eigenvector's sign is LAPACK's, locally constant), so dv is
    the tangent of ``eig(a)[1]`` itself: c_j = -Re(v_jᴴ U_j) - i Im(U_kj / v_kj), k the
    row of that entry. Other normalizations differ by a rescaling of each column: functions
    invariant under it (|v|², v diag(f(w)) v⁻¹) do not depend on the convention. Complex
    values follow adgen's (JAX's) convention: the cotangent is the transpose of this
    tangent map for the pairing Re(sum(a * b)), its real part for a real ``a``."""

    def jvp(da):
        w = rt.distinct(ans[0], "np.linalg.eig")
        v = ans[1]
        eye = np.eye(np.shape(a)[-1], dtype=w.dtype)
        m = np.linalg.solve(v, da @ v)
        f = (1.0 - eye) / (w[..., None, :] - w[..., :, None] + eye)
        u = v @ (f * m)
        k = np.argmax(np.abs(v), axis=-2)[..., None, :]
        r = np.take_along_axis(u, k, axis=-2) / np.take_along_axis(v, k, axis=-2)
        s = np.sum(np.conj(v) * u, axis=-2, keepdims=True)
        # v diag(c) with c = -Re(s) - i Im(r), written to stay real for real values
        return (np.sum(m * eye, axis=-1), u - v * (r + np.real(s - r)))

    def vjp(g):
        w = rt.distinct(ans[0], "np.linalg.eig")
        v = ans[1]
        eye = np.eye(np.shape(a)[-1], dtype=w.dtype)
        f = (1.0 - eye) / (w[..., None, :] - w[..., :, None] + eye)
        k = np.argmax(np.abs(v), axis=-2)[..., None, :]
        c = np.sum(g[1] * v, axis=-2, keepdims=True)
        # the transpose of U -> U + v diag(c(U)): the cotangent of U (i Im(c_j) / v_kj in row
        # k_j of column j, written to stay real for real values)
        at_k = (c - np.real(c)) / np.take_along_axis(v, k, axis=-2)
        at_k = np.where(np.arange(np.shape(a)[-1])[:, None] == k, at_k, 0.0)
        gu = g[1] - np.conj(v) * np.real(c) - at_k
        gm = f * (np.swapaxes(v, -1, -2) @ gu) + g[0][..., None] * eye
        vt = np.swapaxes(v, -1, -2)
        return rt.real_like(np.linalg.solve(vt, gm @ vt), a)


@rule(
    np.linalg.eigvals,
    complex=True,
    examples=[
        example(
            "np.linalg.eigvals(a + 0.1 * b)",
            a=Arg((3, 3), SYMMETRIC),
            b=Arg((3, 3), UNIT),
            f32=True,
        ),
        example(f"np.linalg.eigvals(a + {_ROTATION.format(n=3)})", a=Arg((3, 3), _SMALL)),
        example(f"np.linalg.eigvals(a + {_ROTATION.format(n=4)})", a=Arg((2, 4, 4), _SMALL)),
        # eigvals of an argument itself (the eigenvalues' dtype follows the values, not the
        # shapes), then a function that is not holomorphic: one complex pair in the stack
        example("np.abs(np.linalg.eigvals(a))", a=(2, 3, 3)),
        example(
            "np.real(np.linalg.eigvals(a + 0.1 * b)) ** 2",
            a=Arg((2, 4, 4), SYMMETRIC),
            b=Arg((4, 4), UNIT),
        ),
    ],
)
def eigvals(ans, a):
    """The eigenvalues of a general square matrix (as ``eig``'s, distinct): dw_i = (v⁻¹ dA
    v)_ii, v the eigenvectors (``np.linalg.eig``: NumPy computes the same eigenvalues in the
    same order). Real for real input whose eigenvalues are all real, as NumPy's."""

    def jvp(da):
        w = rt.distinct(ans, "np.linalg.eigvals")
        v = np.linalg.eig(a)[1]
        eye = np.eye(np.shape(a)[-1], dtype=w.dtype)
        return np.sum(np.linalg.solve(v, da @ v) * eye, axis=-1)

    def vjp(g):
        w = rt.distinct(ans, "np.linalg.eigvals")
        v = np.linalg.eig(a)[1]
        vt = np.swapaxes(v, -1, -2)
        eye = np.eye(np.shape(a)[-1], dtype=w.dtype)
        return rt.real_like(np.linalg.solve(vt, (g[..., None] * eye) @ vt), a)


def _svd_outputs(static):
    return 3 if static["compute_uv"] else 1


@rule(
    np.linalg.svd,
    outputs=_svd_outputs,
    examples=[
        example("np.linalg.svd(a, compute_uv=False)", a=(3, 3), f32=True),
        example("np.linalg.svd(a, compute_uv=False)", a=(2, 4, 3)),
        example("np.linalg.svd(a, full_matrices=False)[1]", a=(2, 3)),
        example("np.linalg.svd(a, full_matrices=False)[0] ** 2", a=(4, 3), f32=True),
        example("np.linalg.svd(a, full_matrices=False)[2] ** 2", a=(2, 4)),
        example(
            "np.linalg.svd(a)[0] * np.linalg.svd(a)[2] * np.linalg.svd(a)[1][..., None] ** 2",
            a=(2, 3, 3),
        ),
        example(
            "np.linalg.svd(a, full_matrices=False)[0] @ np.linalg.svd(a, full_matrices=False)[2]",
            a=(3, 2),
        ),
        example("np.linalg.svd(a, hermitian=True)[2] ** 2", a=Arg((3, 3), SYMMETRIC)),
        example("np.linalg.svd(a, compute_uv=False, hermitian=True)", a=Arg((3, 3), SYMMETRIC)),
    ],
)
def svd(ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """``u, s, vh = svd(a)`` for distinct nonzero singular values (not claimed elsewhere).
    With ``full_matrices=True`` (the default) ``a`` must be square (the extra columns of a
    full ``u`` or ``vh`` are not unique; checked at run time). ``compute_uv=False`` has one
    result, ``s``: ds_i = u_iᵀ da v_i. ``hermitian=True`` reads the lower triangle of ``a``
    (NumPy calls eigh), so the tangent is symmetrized from it and the cotangent lives on it.
    Singular vectors are defined up to sign: differentiate sign-invariant functions."""

    def jvp(da):
        if hermitian:
            dm = np.tril(da) + np.swapaxes(np.tril(da, -1), -1, -2)
        else:
            dm = da
        if not compute_uv:
            u, _, vh = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
            return (np.sum(u * (dm @ np.swapaxes(vh, -1, -2)), axis=-2),)
        if full_matrices:
            rt.require_square(a, "np.linalg.svd with full_matrices=True")
        u = ans[0]
        s = rt.distinct(ans[1], "np.linalg.svd", nonzero=True)
        v = np.swapaxes(ans[2], -1, -2)
        eye = np.eye(np.shape(s)[-1], dtype=s.dtype)
        sq = s * s
        f = (1.0 - eye) / (sq[..., None, :] - sq[..., :, None] + eye)
        dp = np.swapaxes(u, -1, -2) @ dm @ v
        dpt = np.swapaxes(dp, -1, -2)
        du = (
            u @ (f * (dp * s[..., None, :] + s[..., :, None] * dpt))
            + (dm @ v - u @ dp) / s[..., None, :]
        )
        dv = (
            v @ (f * (s[..., :, None] * dp + dpt * s[..., None, :]))
            + (np.swapaxes(dm, -1, -2) @ u - v @ dpt) / s[..., None, :]
        )
        return (du, np.sum(dp * eye, axis=-1), np.swapaxes(dv, -1, -2))

    def vjp(g):
        if not compute_uv:
            u, _, vh = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
            ga = (u * g[0][..., None, :]) @ vh
        else:
            if full_matrices:
                rt.require_square(a, "np.linalg.svd with full_matrices=True")
            u = ans[0]
            s = rt.distinct(ans[1], "np.linalg.svd", nonzero=True)
            vh = ans[2]
            v = np.swapaxes(vh, -1, -2)
            gu = g[0]
            gv = np.swapaxes(g[2], -1, -2)
            ut = np.swapaxes(u, -1, -2)
            gvt = g[2]
            eye = np.eye(np.shape(s)[-1], dtype=s.dtype)
            sq = s * s
            f = (1.0 - eye) / (sq[..., None, :] - sq[..., :, None] + eye)
            inner = (
                g[1][..., None] * eye
                + (f * (ut @ gu - np.swapaxes(gu, -1, -2) @ u)) * s[..., None, :]
                + s[..., :, None] * (f * (vh @ gv - gvt @ v))
            )
            ga = (
                u @ inner @ vh
                + ((gu - u @ (ut @ gu)) / s[..., None, :]) @ vh
                + (u / s[..., None, :]) @ (gvt - (gvt @ v) @ vh)
            )
        if hermitian:
            return np.tril(ga) + np.tril(np.swapaxes(ga, -1, -2), -1)
        return ga


# a check that raises unless its argument is a (stack of) square matrices, and returns None:
# it stays in code adgen differentiates again (a call, run as written) and carries no
# derivative
nondifferentiable(rt.require_square)

# -- norms: np.linalg.norm, vector_norm, matrix_norm -------------------------------------------
# Conventions at kinks (see rt.norm_grad): derivative 0 where the norm is 0 (like JAX's
# 2-norm), sign(0) = 0 for 1-norms, ties of max/min-type norms share evenly, the nuclear norm
# takes u vᵀ over the nonzero singular values only.


@rule(
    np.linalg.norm,
    examples=[
        example("np.linalg.norm(x)", x=(4,), f32=True),
        example("np.linalg.norm(x)", x=(2, 3, 2)),
        example("np.linalg.norm(x, axis=1, keepdims=True)", x=(3, 4), f32=True),
        example("np.linalg.norm(x, ord=1, axis=0)", x=(3, 4)),
        example("np.linalg.norm(x, ord=np.inf, axis=-1)", x=(2, 3, 4)),
        example("np.linalg.norm(x, ord=-np.inf)", x=(5,)),
        example("np.linalg.norm(x, ord=3)", x=(4,), f32=True),
        example("np.linalg.norm(x, ord=0.5, axis=1)", x=Arg((2, 3), Domain(0.3, 1.5))),
        example("np.linalg.norm(x, ord=2)", x=(4,)),
        example("np.linalg.norm(x, ord='fro', axis=(0, 2), keepdims=True)", x=(3, 2, 4)),
        example("np.linalg.norm(x, ord='nuc')", x=(3, 4), f32=True),
        example("np.linalg.norm(x, ord=2)", x=(4, 3)),
        example("np.linalg.norm(x, ord=-2, axis=(1, 2))", x=(2, 3, 3)),
        example("np.linalg.norm(x, ord=1)", x=(3, 3)),
        example("np.linalg.norm(x, ord=-np.inf, axis=(2, 0))", x=(3, 4, 2)),
    ],
)
def norm(ans, x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's parameter name
    """``ord=None``: the 2-norm (Frobenius) over ``axis`` (all axes by default), d‖x‖ =
    xᵀdx / ‖x‖, 0 at x = 0. Other orders, vector or matrix, per ``rt.norm_grad``.

    A vector ``ord`` below 1 is singular: at a zero entry of a nonzero vector the derivative
    is infinite (NaN), and a zero tangent or cotangent entry contributes exactly 0 there
    (``rt.zero_safe``); a constant ``ord`` of 1 or more, or a matrix ``ord``, needs none."""

    def bjvp(dx):
        if ord is None:
            summed = np.sum(x * dx, axis=rt.batch_axis(axis, np.ndim(x)), keepdims=keepdims)
            return summed / np.where(ans == 0, 1, ans)
        return None

    def jvp(dx):
        if ord is None:
            return np.sum(x * dx, axis=axis, keepdims=keepdims) / np.where(ans == 0, 1, ans)
        if rt.known_constant(ord) in ("fro", "nuc") or (
            rt.known_constant(ord) is not None and rt.known_constant(ord) >= 1
        ):
            return np.sum(
                rt.norm_grad(ans, x, ord, axis, keepdims) * dx, axis=axis, keepdims=keepdims
            )
        return np.sum(
            rt.zero_safe(rt.norm_grad(ans, x, ord, axis, keepdims) * dx, dx),
            axis=axis,
            keepdims=keepdims,
        )

    def vjp(g):
        if ord is None:
            return rt.unreduce(g / np.where(ans == 0, 1, ans), x, axis, keepdims) * x
        if rt.known_constant(ord) in ("fro", "nuc") or (
            rt.known_constant(ord) is not None and rt.known_constant(ord) >= 1
        ):
            return rt.unreduce(g, x, axis, keepdims) * rt.norm_grad(ans, x, ord, axis, keepdims)
        spread = rt.unreduce(g, x, axis, keepdims)
        return rt.zero_safe(spread * rt.norm_grad(ans, x, ord, axis, keepdims), spread)


# The derivative of ``rt.norm_grad(r, x, ord, axis, keepdims, kind)``, the gradient G of the
# norms ``r`` of ``x`` (in generated code ``r`` is the norm of ``x``), by ``ord``:
#
# * 0, 1, -1, inf, -inf (vector or matrix): piecewise constant (signs, and the entries or
#   rows that reach the extremum), derivative 0;
# * None, "fro" and a vector 2-norm: G = x / r (r taken as 1 where it is 0, and then G = x);
# * other vector orders p: G = sign(x) (|x| / r)^(p-1), 0 where r is 0: dG/dx =
#   (p-1) (|x| / r)^(p-2) / r, infinite at a zero entry for p < 2 (where a zero seed still
#   contributes 0: rt.zero_safe), and dG/dr = (1-p) G / r;
# * "nuc": G = u vᵀ (reduced SVD, full rank); with P = uᵀ D v, dG = u Ω vᵀ + (D v - u P)
#   s⁻¹ vᵀ + u s⁻¹ (uᵀ D - P vᵀ), Ω_ij = (P_ij - P_ji) / (s_i + s_j): a self-adjoint map (the
#   nuclear norm's Hessian), so the cotangent is the same formula;
# * matrix 2 / -2: G = u_k v_kᵀ for the largest / smallest singular value s_k (distinct from
#   the next one, and nonzero for -2: checked), dG = du_k v_kᵀ + u_k dv_kᵀ with the tangents
#   of the singular vectors (as in the np.linalg.svd rule) of column k only; self-adjoint too.
#
# The matrix norms reduce the last two axes (kind "matrix") or the two of ``axis``. With kind
# "norm", ``axis=None`` and an ``ord`` of 2 or -2 the norm is a matrix norm for 2-d ``x`` and a
# vector norm for 1-d ``x``: x reshaped to (n, -1) serves both for 2 (the 2-norm of a vector
# is that of its column); where the number of axes is not known when the code is written, the
# vector -2-norm is chosen at run time. A static parameter that is not a constant (``ord=-np.inf``
# reaches generated code as a variable) is tested at run time; a variable ``axis`` is refused.
@rule(
    rt.norm_grad,
    examples=[
        example("rt.norm_grad(r, x)", r=Arg((), Domain(0.5, 2.0)), x=(4,)),
        example("rt.norm_grad(r, x, None, 1, True)", r=Arg((3, 1), Domain(0.5, 2.0)), x=(3, 4)),
        example("rt.norm_grad(r, x, 3)", r=Arg((), Domain(0.5, 2.0)), x=(4,), f32=True),
        example("rt.norm_grad(r, x, -2, 0)", r=Arg((2,), Domain(0.5, 2.0)), x=(3, 2)),
        example("rt.norm_grad(np.linalg.norm(x, 1, 0), x, 1, 0)", x=(3, 4)),
        example("rt.norm_grad(np.linalg.norm(x, np.inf, -1), x, np.inf, -1)", x=(2, 3, 4)),
        example("rt.norm_grad(np.linalg.norm(x, -np.inf), x, -np.inf)", x=(5,)),
        example("rt.norm_grad(np.linalg.norm(x, 3), x, 3)", x=(4,)),
        example(
            "rt.norm_grad(np.linalg.norm(x, 0.5, 1), x, 0.5, 1)", x=Arg((2, 3), Domain(0.3, 1.5))
        ),
        example("rt.norm_grad(np.linalg.norm(x, 2), x, 2)", x=(4,)),
        example("rt.norm_grad(np.linalg.norm(x, -2), x, -2)", x=(4,)),
        example(
            "rt.norm_grad(np.linalg.norm(x, 'fro', (0, 2), True), x, 'fro', (0, 2), True)",
            x=(3, 2, 4),
        ),
        example("rt.norm_grad(np.linalg.norm(x, 'nuc'), x, 'nuc')", x=(3, 4)),
        example("rt.norm_grad(np.linalg.norm(x, 'nuc'), x, 'nuc')", x=(4, 3)),
        example("rt.norm_grad(np.linalg.norm(x, 2), x, 2)", x=(4, 3)),
        example("rt.norm_grad(np.linalg.norm(x, 2), x, 2)", x=(2, 3)),
        example("rt.norm_grad(np.linalg.norm(x, -2, (1, 2)), x, -2, (1, 2))", x=(2, 3, 3)),
        example("rt.norm_grad(np.linalg.norm(x, -2, (2, 0)), x, -2, (2, 0))", x=(3, 2, 4)),
        example("rt.norm_grad(np.linalg.norm(x, 1), x, 1)", x=(3, 3)),
        example(
            "rt.norm_grad(np.linalg.norm(x, -np.inf, (2, 0)), x, -np.inf, (2, 0))", x=(3, 4, 2)
        ),
        example("rt.norm_grad(np.linalg.norm(x, 1, -1), x, 1, -1, False, 'vector')", x=(3, 4)),
        example(
            "rt.norm_grad(np.linalg.norm(np.ravel(x), 4), x, 4, None, False, 'vector')",
            x=(3, 2),
        ),
        example(
            "rt.norm_grad(np.linalg.norm(x, 'nuc', (-2, -1)), x, 'nuc', None, False, 'matrix')",
            x=(2, 3, 2),
        ),
        example(
            "rt.norm_grad(np.linalg.norm(x, 2, (-2, -1), True), x, 2, None, True, 'matrix')",
            x=(2, 3, 3),
        ),
        example(
            "rt.norm_grad(np.linalg.norm(x, np.inf, (-2, -1)), x, np.inf, None, False, 'matrix')",
            x=(2, 3, 4),
        ),
    ],
)
def norm_grad(ans, r, x, ord=None, axis=None, keepdims=False, kind="norm"):  # noqa: A002
    """The gradient ``G(r, x)`` of the norms ``r`` of ``x`` (see the comment above)."""

    def jvp_r(dr):
        if axis is not None and axis != axis:  # never true: a variable axis is refused
            return rt.zeros_like(ans)
        if ord == 0 or ord == 1 or ord == -1 or ord == np.inf or ord == -np.inf or ord == "nuc":
            t = rt.zeros_like(ans)
        elif (
            kind == "matrix"
            or (
                kind == "norm"
                and (
                    rt.known_ndim(x) != 1
                    if axis is None
                    else ((axis[1:] != ()) if axis * 0 == () else False)
                )
            )
        ) and (ord == 2 or ord == -2):
            t = rt.zeros_like(ans)
            if kind == "norm" and axis is None and rt.known_ndim(x) == -1 and ord == -2:
                if np.ndim(x) == 1:  # a vector after all
                    rr = rt.unreduce(r, x, None, keepdims)
                    t = 3.0 * rt.unreduce(dr, x, None, keepdims) * ans / np.where(rr == 0, 1.0, rr)
        else:
            rr = rt.unreduce(r, x, (-2, -1) if kind == "matrix" else axis, keepdims)
            if ord is None or ord == "fro" or ord == 2:
                dm = np.where(r == 0, 0.0, dr)
                t = -rt.unreduce(dm, x, (-2, -1) if kind == "matrix" else axis, keepdims) * ans
            else:
                dm = rt.unreduce(dr, x, (-2, -1) if kind == "matrix" else axis, keepdims)
                t = (1 - ord) * dm * ans
            t = t / np.where(rr == 0, 1.0, rr)
        return t

    def vjp_r(c):
        if axis is not None and axis != axis:  # never true: a variable axis is refused
            return rt.zeros_like(r)
        if ord == 0 or ord == 1 or ord == -1 or ord == np.inf or ord == -np.inf or ord == "nuc":
            t = rt.zeros_like(r)
        elif (
            kind == "matrix"
            or (
                kind == "norm"
                and (
                    rt.known_ndim(x) != 1
                    if axis is None
                    else ((axis[1:] != ()) if axis * 0 == () else False)
                )
            )
        ) and (ord == 2 or ord == -2):
            t = rt.zeros_like(r)
            if kind == "norm" and axis is None and rt.known_ndim(x) == -1 and ord == -2:
                if np.ndim(x) == 1:  # a vector after all
                    rr = rt.unreduce(r, x, None, keepdims)
                    t = 3.0 * np.sum(c * ans / np.where(rr == 0, 1.0, rr), keepdims=keepdims)
        else:
            rr = rt.unreduce(r, x, (-2, -1) if kind == "matrix" else axis, keepdims)
            cr = np.sum(
                c * ans / np.where(rr == 0, 1.0, rr),
                axis=(-2, -1) if kind == "matrix" else axis,
                keepdims=keepdims,
            )
            if ord is None or ord == "fro" or ord == 2:
                t = np.where(r == 0, 0.0, -cr)
            else:
                t = (1 - ord) * cr
        return t

    def jvp_x(dx):
        if axis is not None and axis != axis:  # never true: a variable axis is refused
            return rt.zeros_like(ans)
        if ord == 0 or ord == 1 or ord == -1 or ord == np.inf or ord == -np.inf:
            t = rt.zeros_like(ans)
        elif ord == "nuc":
            xm = np.moveaxis(x, (-2, -1) if kind == "matrix" or axis is None else axis, (-2, -1))
            dm = np.moveaxis(dx, (-2, -1) if kind == "matrix" or axis is None else axis, (-2, -1))
            u, s, vh = np.linalg.svd(xm, full_matrices=False)
            s = rt.full_rank(s, "the gradient of a nuclear norm")
            p = np.swapaxes(u, -1, -2) @ dm @ np.swapaxes(vh, -1, -2)
            om = (p - np.swapaxes(p, -1, -2)) / (s[..., :, None] + s[..., None, :])
            t = (
                u @ om @ vh
                + ((dm @ np.swapaxes(vh, -1, -2) - u @ p) / s[..., None, :]) @ vh
                + (u / s[..., None, :]) @ (np.swapaxes(u, -1, -2) @ dm - p @ vh)
            )
            t = np.moveaxis(t, (-2, -1), (-2, -1) if kind == "matrix" or axis is None else axis)
        elif (
            kind == "matrix"
            or (
                kind == "norm"
                and (
                    rt.known_ndim(x) != 1
                    if axis is None
                    else ((axis[1:] != ()) if axis * 0 == () else False)
                )
            )
        ) and (ord == 2 or ord == -2):
            if kind == "norm" and axis is None:
                xm = np.reshape(x, (np.shape(x)[0], -1))
                dm = np.reshape(dx, (np.shape(x)[0], -1))
            else:
                xm = np.moveaxis(x, (-2, -1) if kind == "matrix" else axis, (-2, -1))
                dm = np.moveaxis(dx, (-2, -1) if kind == "matrix" else axis, (-2, -1))
            u, s, vh = np.linalg.svd(xm, full_matrices=False)
            sk = rt.distinct(
                s[..., :2] if ord == 2 else s[..., -2:],
                "the gradient of a matrix 2-norm (its two largest singular values)"
                if ord == 2
                else "the gradient of a matrix -2-norm (its two smallest singular values)",
                nonzero=ord == -2,
            )[..., 0 if ord == 2 else -1, None, None]
            uk = u[..., :, 0 if ord == 2 else -1, None]
            vk = np.swapaxes(vh[..., 0 if ord == 2 else -1, None, :], -1, -2)
            pa = np.swapaxes(u, -1, -2) @ (dm @ vk)
            pb = vh @ (np.swapaxes(dm, -1, -2) @ uk)
            ek = np.eye(np.shape(s)[-1], dtype=s.dtype)[:, 0 if ord == 2 else -1, None]
            sc = s[..., :, None]
            f = (1.0 - ek) / (sk * sk - sc * sc + ek)
            du = u @ (f * (sk * pa + sc * pb)) + (dm @ vk - u @ pa) / sk
            dv = (
                np.swapaxes(vh, -1, -2) @ (f * (sc * pa + sk * pb))
                + (np.swapaxes(dm, -1, -2) @ uk - np.swapaxes(vh, -1, -2) @ pb) / sk
            )
            t = du * np.swapaxes(vk, -1, -2) + uk * np.swapaxes(dv, -1, -2)
            if kind == "norm" and axis is None:
                t = np.reshape(t, np.shape(x))
            else:
                t = np.moveaxis(t, (-2, -1), (-2, -1) if kind == "matrix" else axis)
            if kind == "norm" and axis is None and rt.known_ndim(x) == -1 and ord == -2:
                if np.ndim(x) == 1:  # a vector after all
                    rr = rt.unreduce(r, x, None, keepdims)
                    sr = np.where(rr == 0, 1.0, rr)
                    h = np.where(rr == 0, 0.0, -3.0 * (np.abs(x) / sr) ** -4.0 / sr)
                    t = rt.zero_safe(h * dx, dx)
        else:
            rr = rt.unreduce(r, x, (-2, -1) if kind == "matrix" else axis, keepdims)
            sr = np.where(rr == 0, 1.0, rr)
            if ord is None or ord == "fro" or ord == 2:
                t = dx / sr
            else:
                h = np.where(rr == 0, 0.0, (ord - 1) * (np.abs(x) / sr) ** (ord - 2) / sr)
                if ord < 2:
                    t = rt.zero_safe(h * dx, dx)
                else:
                    t = h * dx
        return t

    # H (the norm's Hessian) is symmetric: the derivative in x is its own transpose
    vjp_x = jvp_x  # noqa: F841 - read by the registry, not run


@rule(
    rt.full_rank,
    examples=[
        example('rt.full_rank(s, "np.linalg.norm") ** 2', s=Arg((3,), Domain(0.5, 2.0))),
        example('rt.full_rank(s, "np.linalg.norm") * s', s=Arg((2, 3), Domain(0.5, 2.0))),
    ],
    complex=True,
)
def full_rank(values, what):
    """The singular values themselves (after a check that raises at a zero one): identity."""

    def jvp_values(d):
        return d

    def vjp_values(g):
        return g


if hasattr(np.linalg, "vector_norm"):

    @rule(
        np.linalg.vector_norm,
        examples=[
            example("np.linalg.vector_norm(x)", x=(3, 4), f32=True),
            example("np.linalg.vector_norm(x, axis=(0, 2), keepdims=True)", x=(2, 3, 2)),
            example("np.linalg.vector_norm(x, ord=1, axis=-1)", x=(3, 4)),
            example("np.linalg.vector_norm(x, ord=np.inf)", x=(3, 4), f32=True),
            example("np.linalg.vector_norm(x, ord=4, axis=0)", x=(3, 2)),
        ],
    )
    def vector_norm(ans, x, *, axis=None, keepdims=False, ord=2):  # noqa: A002
        """Vector norms over ``axis`` (all axes, flattened, by default); an ``ord`` below 1
        is singular, as for ``np.linalg.norm``."""

        def jvp(dx):
            if ord == 2:
                return np.sum(x * dx, axis=axis, keepdims=keepdims) / np.where(ans == 0, 1, ans)
            if rt.known_constant(ord) is not None and rt.known_constant(ord) >= 1:
                return np.sum(
                    rt.norm_grad(ans, x, ord, axis, keepdims, "vector") * dx,
                    axis=axis,
                    keepdims=keepdims,
                )
            return np.sum(
                rt.zero_safe(rt.norm_grad(ans, x, ord, axis, keepdims, "vector") * dx, dx),
                axis=axis,
                keepdims=keepdims,
            )

        def vjp(g):
            if ord == 2:
                return rt.unreduce(g / np.where(ans == 0, 1, ans), x, axis, keepdims) * x
            if rt.known_constant(ord) is not None and rt.known_constant(ord) >= 1:
                return rt.unreduce(g, x, axis, keepdims) * rt.norm_grad(
                    ans, x, ord, axis, keepdims, "vector"
                )
            spread = rt.unreduce(g, x, axis, keepdims)
            return rt.zero_safe(
                spread * rt.norm_grad(ans, x, ord, axis, keepdims, "vector"), spread
            )


if hasattr(np.linalg, "matrix_norm"):

    @rule(
        np.linalg.matrix_norm,
        examples=[
            example("np.linalg.matrix_norm(x)", x=(3, 4), f32=True),
            example("np.linalg.matrix_norm(x, keepdims=True)", x=(2, 3, 3)),
            example("np.linalg.matrix_norm(x, ord='nuc')", x=(2, 3, 2)),
            example("np.linalg.matrix_norm(x, ord=2)", x=(3, 3), f32=True),
            example("np.linalg.matrix_norm(x, ord=np.inf)", x=(2, 3, 4)),
        ],
    )
    def matrix_norm(ans, x, *, keepdims=False, ord="fro"):  # noqa: A002
        """Matrix norms over the last two axes."""

        def jvp(dx):
            if ord == "fro":
                return np.sum(x * dx, axis=(-2, -1), keepdims=keepdims) / np.where(ans == 0, 1, ans)
            return np.sum(
                rt.norm_grad(ans, x, ord, None, keepdims, "matrix") * dx,
                axis=(-2, -1),
                keepdims=keepdims,
            )

        def vjp(g):
            if ord == "fro":
                return rt.unreduce(g / np.where(ans == 0, 1, ans), x, (-2, -1), keepdims) * x
            return rt.unreduce(g, x, (-2, -1), keepdims) * rt.norm_grad(
                ans, x, ord, None, keepdims, "matrix"
            )


# -- QR, pseudo-inverse, powers, least squares -------------------------------------------------


def _qr_outputs(static):
    return {"reduced": 2, "r": 1}[static["mode"]]


@rule(
    np.linalg.qr,
    outputs=_qr_outputs,
    examples=[
        example("np.linalg.qr(a)[0]", a=(3, 3), f32=True),
        example("np.linalg.qr(a)[1]", a=(4, 3), f32=True),
        example("np.linalg.qr(a)[0] * np.linalg.qr(a)[1][..., :1, :]", a=(2, 4, 2)),
        example("np.linalg.qr(a, mode='r')", a=(3, 2)),
    ],
)
def qr(ans, a, mode="reduced"):
    """``q, r = qr(a)`` for ``a`` (m, n) with m >= n and full column rank (m < n is refused
    when the derivative runs); ``mode='r'`` returns ``r`` alone; 'complete' and 'raw' are
    refused. With X = qᵀ da r⁻¹ and Ω = tril(X, -1) - tril(X, -1)ᵀ:
    dr = (X - Ω) r, dq = da r⁻¹ - q (X - Ω)."""

    def jvp(da):
        rt.require_tall(a, "np.linalg.qr")
        if mode == "r":
            q, r = np.linalg.qr(a)
        else:
            q = ans[0]
            r = ans[1]
        dar = np.swapaxes(np.linalg.solve(np.swapaxes(r, -1, -2), np.swapaxes(da, -1, -2)), -1, -2)
        x = np.swapaxes(q, -1, -2) @ dar
        low = np.tril(x, -1)
        x = x - low + np.swapaxes(low, -1, -2)
        if mode == "r":
            return (x @ r,)
        return (dar - q @ x, x @ r)

    def vjp(g):
        rt.require_tall(a, "np.linalg.qr")
        if mode == "r":
            q, r = np.linalg.qr(a)
            gq = np.zeros_like(q)
            gr = g[0]
        else:
            q = ans[0]
            r = ans[1]
            gq = g[0]
            gr = g[1]
        m = r @ np.swapaxes(gr, -1, -2) - np.swapaxes(gq, -1, -2) @ q
        low = np.tril(m, -1)
        b = gq + q @ (np.tril(m) + np.swapaxes(low, -1, -2))
        return np.swapaxes(np.linalg.solve(r, np.swapaxes(b, -1, -2)), -1, -2)


# like rt.require_square: a check (raises unless rows >= columns), no derivative
nondifferentiable(rt.require_tall, rt.require_matrix, rt.require_given)

# an integer (the number of singular values above a tolerance): piecewise constant
nondifferentiable(np.linalg.matrix_rank)


@rule(
    np.linalg.pinv,
    examples=[
        example("np.linalg.pinv(a)", a=(3, 2), f32=True),
        example("np.linalg.pinv(a)", a=(2, 4)),
        example("np.linalg.pinv(a)", a=Arg((2, 3, 3), INVERTIBLE)),
        example("np.linalg.pinv(a, hermitian=True)", a=Arg((3, 3), SYMMETRIC)),
    ],
)
def pinv(ans, a, rcond=None, hermitian=False):
    """Pseudo-inverse of a full-rank ``a`` (not claimed at rank-deficient inputs, where it
    jumps): with P = a⁺, dP = -P da P + P Pᵀ daᵀ (I - a P) + (I - P a) daᵀ Pᵀ P.
    ``hermitian=True`` reads the lower triangle of ``a`` (as NumPy's eigh does)."""

    def jvp(da):
        if hermitian:
            dm = np.tril(da) + np.swapaxes(np.tril(da, -1), -1, -2)
        else:
            dm = da
        p = ans
        pt = np.swapaxes(p, -1, -2)
        dmt = np.swapaxes(dm, -1, -2)
        return (
            -(p @ dm @ p) + p @ (pt @ dmt - (pt @ dmt @ a) @ p) + (dmt - p @ (a @ dmt)) @ (pt @ p)
        )

    def vjp(g):
        p = ans
        pt = np.swapaxes(p, -1, -2)
        gt = np.swapaxes(g, -1, -2)
        ga = -(pt @ g @ pt) + (gt - a @ (p @ gt)) @ (p @ pt) + (pt @ p) @ (gt - (gt @ p) @ a)
        if hermitian:
            return np.tril(ga) + np.tril(np.swapaxes(ga, -1, -2), -1)
        return ga


@rule(
    np.linalg.matrix_power,
    examples=[
        example("np.linalg.matrix_power(a, 3)", a=(3, 3), f32=True),
        example("np.linalg.matrix_power(a, 1)", a=(2, 2)),
        example("np.linalg.matrix_power(a, 0) + a", a=(2, 2)),
        example("np.linalg.matrix_power(a, -2)", a=Arg((2, 3, 3), INVERTIBLE), f32=True),
        example("np.linalg.matrix_power(a, 4)", a=(2, 2, 2)),
    ],
    complex=True,
)
def matrix_power(a, n):
    """a**n for an integer ``n`` (not differentiated): d(aⁿ) = Σ_k aᵏ da aⁿ⁻¹⁻ᵏ; for n < 0
    the same with a⁻¹ and d(a⁻¹) = -a⁻¹ da a⁻¹; n = 0 gives the identity (derivative 0)."""

    def jvp(da):
        return rt.matrix_power_jvp(da, a, n)

    def vjp(g):
        return rt.matrix_power_vjp(g, a, n)


# The helpers of np.linalg.matrix_power are linear in their first argument, each the other's
# transpose: rt.matrix_power_jvp(d, a, n) = Σ_k aᵏ d aⁿ⁻¹⁻ᵏ = Df(a)[d] for f(a) = aⁿ, and
# rt.matrix_power_vjp(g, a, n) = Df(aᵀ)[g]. Their derivative in ``a`` is the second
# derivative of f, read off a block matrix: f([[a, d], [0, a]]) = [[f(a), Df(a)[d]],
# [0, f(a)]] (for n < 0 too), so the tangent of Df(a)[d] along e is the upper right block
# of Df(B)[E], B = [[a, d], [0, a]], E = [[e, 0], [0, e]], and its cotangent for c is the
# sum of the diagonal blocks of Df(B)ᵀ[[[0, c], [0, 0]]].
_MATRIX_POWER_EXAMPLES = [
    ((3, 3), None, 3, True),
    ((2, 2), None, 1, False),
    ((2, 2), None, 0, False),
    ((2, 3, 3), INVERTIBLE, -2, True),
    ((2, 2, 2), None, 4, False),
]


@rule(
    rt.matrix_power_jvp,
    examples=[
        example(f"rt.matrix_power_jvp(d, a, {n})", d=shape, a=Arg(shape, dom), f32=f32)
        for shape, dom, n, f32 in _MATRIX_POWER_EXAMPLES
    ],
    complex=True,
)
def matrix_power_jvp(d, a, n=1):
    """Linear in ``d`` (transpose: ``rt.matrix_power_vjp``); in ``a``, the block matrices
    above."""

    def jvp_d(dd):
        return rt.matrix_power_jvp(dd, a, n)

    def jvp_a(da):
        m = np.shape(a)[-1]
        z = rt.zeros_like(da)
        big = np.concatenate(
            (np.concatenate((a, d), axis=-1), np.concatenate((rt.zeros_like(a), a), axis=-1)),
            axis=-2,
        )
        dbig = np.concatenate(
            (np.concatenate((da, z), axis=-1), np.concatenate((z, da), axis=-1)), axis=-2
        )
        return rt.matrix_power_jvp(dbig, big, n)[..., :m, m:]

    def vjp_d(c):
        return rt.matrix_power_vjp(c, a, n)

    def vjp_a(c):
        m = np.shape(a)[-1]
        z = rt.zeros_like(c)
        big = np.concatenate(
            (np.concatenate((a, d), axis=-1), np.concatenate((rt.zeros_like(a), a), axis=-1)),
            axis=-2,
        )
        cbig = np.concatenate(
            (np.concatenate((z, c), axis=-1), np.concatenate((z, z), axis=-1)), axis=-2
        )
        h = rt.matrix_power_vjp(cbig, big, n)
        return h[..., :m, :m] + h[..., m:, m:]


@rule(
    rt.matrix_power_vjp,
    examples=[
        example(f"rt.matrix_power_vjp(g, a, {n})", g=shape, a=Arg(shape, dom), f32=f32)
        for shape, dom, n, f32 in _MATRIX_POWER_EXAMPLES
    ],
    complex=True,
)
def matrix_power_vjp(g, a, n=1):
    """Linear in ``g`` (transpose: ``rt.matrix_power_jvp``); it is
    ``rt.matrix_power_jvp(g, aᵀ, n)``, so in ``a`` the block matrices above, with aᵀ."""

    def jvp_g(dg):
        return rt.matrix_power_vjp(dg, a, n)

    def jvp_a(da):
        m = np.shape(a)[-1]
        at = np.swapaxes(a, -1, -2)
        dat = np.swapaxes(da, -1, -2)
        z = rt.zeros_like(dat)
        big = np.concatenate(
            (np.concatenate((at, g), axis=-1), np.concatenate((rt.zeros_like(at), at), axis=-1)),
            axis=-2,
        )
        dbig = np.concatenate(
            (np.concatenate((dat, z), axis=-1), np.concatenate((z, dat), axis=-1)), axis=-2
        )
        return rt.matrix_power_jvp(dbig, big, n)[..., :m, m:]

    def vjp_g(c):
        return rt.matrix_power_jvp(c, a, n)

    def vjp_a(c):
        m = np.shape(a)[-1]
        at = np.swapaxes(a, -1, -2)
        z = rt.zeros_like(c)
        big = np.concatenate(
            (np.concatenate((at, g), axis=-1), np.concatenate((rt.zeros_like(at), at), axis=-1)),
            axis=-2,
        )
        cbig = np.concatenate(
            (np.concatenate((z, c), axis=-1), np.concatenate((z, z), axis=-1)), axis=-2
        )
        h = rt.matrix_power_vjp(cbig, big, n)
        return np.swapaxes(h[..., :m, :m] + h[..., m:, m:], -1, -2)


@rule(
    np.linalg.lstsq,
    outputs=4,
    examples=[
        example("np.linalg.lstsq(a, b)[0]", a=(4, 2), b=(4,), f32=True),
        example("np.linalg.lstsq(a, b)[0]", a=(2, 3), b=(2, 2)),
        example("np.linalg.lstsq(a, b, rcond=None)[1]", a=(4, 3), b=(4, 2), f32=True),
        example("np.linalg.lstsq(a, b)[1] * np.linalg.lstsq(a, b)[0][0]", a=(3, 2), b=(3,)),
        example("np.linalg.lstsq(a, b)[3] ** 2", a=(3, 2), b=(3,)),
        example("np.linalg.lstsq(a, b)[0]", a=Arg((3, 3), INVERTIBLE), b=(3, 2)),
    ],
)
def lstsq(ans, a, b, rcond=None):
    """``x, residuals, rank, s = lstsq(a, b)`` for a full-rank ``a`` (not claimed at
    rank-deficient inputs): x = a⁺ b, with the derivative of the pseudo-inverse; the
    residuals (present when m > n) ‖b - a x‖² have d = 2 eᵀ(db - da x), e = b - a x;
    the rank is an integer (no derivative); s are the singular values of ``a``."""

    def jvp_a(da):
        p = np.linalg.pinv(a)
        bm = np.reshape(b, (np.shape(b)[0], -1))
        xm = np.reshape(ans[0], (np.shape(ans[0])[0], -1))
        e = bm - a @ xm
        dat = np.swapaxes(da, -1, -2)
        ptx = np.swapaxes(p, -1, -2) @ xm
        dx = -(p @ (da @ xm)) + p @ (np.swapaxes(p, -1, -2) @ (dat @ e)) + dat @ ptx
        dx = dx - p @ (a @ (dat @ ptx))
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        return (
            np.reshape(dx, np.shape(ans[0])),
            -2.0 * np.sum(e * (da @ xm), axis=0) if np.size(ans[1]) else np.zeros_like(ans[1]),
            np.zeros_like(ans[3], shape=()),
            np.sum(u * (da @ np.swapaxes(vh, -1, -2)), axis=-2),
        )

    def jvp_b(db):
        p = np.linalg.pinv(a)
        bm = np.reshape(b, (np.shape(b)[0], -1))
        xm = np.reshape(ans[0], (np.shape(ans[0])[0], -1))
        dbm = np.reshape(db, np.shape(bm))
        return (
            np.reshape(p @ dbm, np.shape(ans[0])),
            2.0 * np.sum((bm - a @ xm) * dbm, axis=0) if np.size(ans[1]) else np.zeros_like(ans[1]),
            np.zeros_like(ans[3], shape=()),
            np.zeros_like(ans[3]),
        )

    def vjp_a(g):
        p = np.linalg.pinv(a)
        pt = np.swapaxes(p, -1, -2)
        bm = np.reshape(b, (np.shape(b)[0], -1))
        xm = np.reshape(ans[0], (np.shape(ans[0])[0], -1))
        e = bm - a @ xm
        gx = np.reshape(g[0], np.shape(xm))
        gxt = np.swapaxes(gx, -1, -2)
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        ga = (
            -(pt @ gx @ np.swapaxes(xm, -1, -2))
            + e @ (gxt @ p @ pt)
            + (pt @ xm) @ (gxt - (gxt @ p) @ a)
            + (u * g[3][..., None, :]) @ vh
        )
        if np.size(ans[1]):
            ga = ga - 2.0 * (e * g[1]) @ np.swapaxes(xm, -1, -2)
        return ga

    def vjp_b(g):
        p = np.linalg.pinv(a)
        bm = np.reshape(b, (np.shape(b)[0], -1))
        xm = np.reshape(ans[0], (np.shape(ans[0])[0], -1))
        gb = np.swapaxes(p, -1, -2) @ np.reshape(g[0], np.shape(xm))
        if np.size(ans[1]):
            gb = gb + 2.0 * (bm - a @ xm) * g[1]
        return np.reshape(gb, np.shape(b))


# -- NumPy 2's array-API spellings over the last two axes -------------------------------------

if hasattr(np.linalg, "trace"):

    @rule(
        np.linalg.trace,
        examples=[
            example("np.linalg.trace(x)", x=(3, 3), f32=True),
            example("np.linalg.trace(x, offset=1)", x=(2, 3, 4)),
            example("np.linalg.trace(x, offset=-1)", x=(4, 3)),
        ],
        complex=True,
    )
    def linalg_trace(x, *, offset=0, dtype=None):
        """Sum of the ``offset`` diagonal of the last two axes."""

        def jvp(dx):
            return np.linalg.trace(dx, offset=offset, dtype=dtype)

        def vjp(g):
            eye = np.eye(np.shape(x)[-2], np.shape(x)[-1], k=offset, dtype=x.dtype)
            return np.expand_dims(np.asarray(g, dtype=x.dtype), (-2, -1)) * eye


if hasattr(np.linalg, "diagonal"):

    @rule(
        np.linalg.diagonal,
        view=True,
        examples=[
            example("np.linalg.diagonal(x)", x=(3, 3), f32=True),
            example("np.linalg.diagonal(x, offset=1)", x=(2, 3, 4)),
            example("np.linalg.diagonal(x, offset=-2) * 2.0", x=(4, 3)),
        ],
        complex=True,
    )
    def linalg_diagonal(x, *, offset=0):
        """The ``offset`` diagonal of the last two axes; its cotangent is written back there."""

        def jvp(dx):
            return np.linalg.diagonal(dx, offset=offset)

        def vjp(g):
            return rt.diagonal_vjp(g, x, offset)

    @rule(
        rt.diagonal_vjp,
        examples=[
            example("rt.diagonal_vjp(g, x)", g=(3,), x=(3, 3), f32=True),
            example("rt.diagonal_vjp(g, x, 1)", g=(2, 3), x=(2, 3, 4)),
            example("rt.diagonal_vjp(g, x, -2)", g=(2,), x=(4, 3)),
        ],
        complex=True,
    )
    def diagonal_vjp(ans, g, x, offset=0):
        """``g`` written on the ``offset`` diagonal of zeros shaped like ``x``: linear in
        ``g``, whose transpose reads that diagonal again; ``x`` only gives the shape."""

        def jvp_g(dg):
            return rt.diagonal_vjp(dg, x, offset)

        def jvp_x(dx):
            return rt.zeros_like(ans)

        def vjp_g(c):
            return rt.rebroadcast(np.diagonal(c, offset, -2, -1), g)  # (Dask: no np.linalg)

        def vjp_x(c):
            return rt.zeros_like(x)


if hasattr(np.linalg, "matrix_transpose"):

    @rule(
        np.linalg.matrix_transpose,
        view=True,
        examples=[
            example("np.linalg.matrix_transpose(x)", x=(3, 2), f32=True),
            example("np.linalg.matrix_transpose(x) * x[..., :1, :1]", x=(2, 3, 3)),
        ],
        complex=True,
    )
    def matrix_transpose(x):
        """Swaps the last two axes."""

        def jvp(dx):
            return np.swapaxes(dx, -1, -2)

        def vjp(g):
            return np.swapaxes(g, -1, -2)
