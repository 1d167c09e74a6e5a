"""SciPy's linear matrix equations differentiated (issue 36, part 5): Lyapunov, Sylvester and
Riccati solutions inside realistic programs (the H2 norm of a linear system, an LQR cost, a
stationary covariance), in both modes and at second order, against finite differences and
the closed forms of control theory."""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError

scipy = pytest.importorskip("scipy")
sl = pytest.importorskip("scipy.linalg")

from adgen.rules.scipy_linalg import SUPPORTED  # noqa: E402

pytestmark = pytest.mark.skipif(not SUPPORTED, reason="scipy.linalg rules need SciPy 1.16")

RNG = np.random.default_rng(36)
A = RNG.uniform(-1.0, 1.0, (3, 3)) - 3.0 * np.eye(3)  # stable
B = RNG.uniform(-1.0, 1.0, (3, 2))
C = RNG.uniform(-1.0, 1.0, (2, 3))


def central(f, x, h=1e-6):
    """Central differences of a scalar ``f`` at the array ``x``, entry by entry."""
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def h2_norm_squared(a, b, c):
    """||G||²_H2 of x' = a x + b u, y = c x: trace(c P cᵀ), P the controllability Gramian
    (a P + P aᵀ + b bᵀ = 0)."""
    p = sl.solve_continuous_lyapunov(a, -(b @ b.T))
    return np.trace(c @ p @ c.T)


def test_h2_norm_gradient_both_modes_against_differences_and_the_closed_form():
    ga, gc = adgen.grad(h2_norm_squared, wrt=(0, 2))(A, B, C)
    fd_a = central(lambda a: h2_norm_squared(a, B, C), A)
    fd_c = central(lambda c: h2_norm_squared(A, B, c), C)
    np.testing.assert_allclose(ga, fd_a, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gc, fd_c, rtol=1e-6, atol=1e-8)
    # closed form: d/dA = 2 Q P with Q the observability Gramian (aᵀ Q + Q a + cᵀ c = 0)
    p = sl.solve_continuous_lyapunov(A, -B @ B.T)
    q = sl.solve_continuous_lyapunov(A.T, -C.T @ C)
    np.testing.assert_allclose(ga, 2 * q @ p, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(gc, 2 * C @ p, rtol=1e-8, atol=1e-10)
    # forward mode along a direction in (A, B, C)
    da, db, dc = RNG.standard_normal(A.shape), RNG.standard_normal(B.shape), C * 0.5
    value, tangent = adgen.jvp(h2_norm_squared, (A, B, C), (da, db, dc))
    t = 1e-6
    fd = (
        h2_norm_squared(A + t * da, B + t * db, C + t * dc)
        - h2_norm_squared(A - t * da, B - t * db, C - t * dc)
    ) / (2 * t)
    np.testing.assert_allclose(value, h2_norm_squared(A, B, C), rtol=1e-12)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)


def test_h2_norm_hessian_against_differences_of_the_gradient():
    a = A[:2, :2]
    b = B[:2, :1]
    c = C[:1, :2]
    hess = adgen.hessian(h2_norm_squared, wrt=0)(a, b, c)
    grad_a = adgen.grad(h2_norm_squared, wrt=0)
    fd = np.zeros((2, 2, 2, 2))
    h = 1e-5
    for i in np.ndindex(2, 2):
        e = np.zeros((2, 2))
        e[i] = h
        fd[..., i[0], i[1]] = (grad_a(a + e, b, c) - grad_a(a - e, b, c)) / (2 * h)
    np.testing.assert_allclose(hess, fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hess.reshape(4, 4), hess.reshape(4, 4).T, rtol=1e-8, atol=1e-10)


def lqr_cost(a, lq, r, sigma0):
    """The optimal cost E[x0ᵀ X x0] = trace(X Σ0) of the LQR problem with state weight
    Q = Lq Lqᵀ + I, X from the continuous algebraic Riccati equation."""
    q = lq @ lq.T + np.eye(3)
    x = sl.solve_continuous_are(a, B, q, r)
    return np.trace(x @ sigma0)


def test_lqr_cost_gradient_wrt_the_weights_and_the_dynamics_both_modes():
    a = RNG.uniform(-1.0, 1.0, (3, 3))  # not stable: the controller stabilises it
    lq = RNG.uniform(-1.0, 1.0, (3, 3))
    r = np.diag([1.0, 2.0])
    sigma0 = np.diag([1.0, 0.5, 2.0])
    ga, glq = adgen.grad(lqr_cost, wrt=(0, 1))(a, lq, r, sigma0)
    np.testing.assert_allclose(ga, central(lambda v: lqr_cost(v, lq, r, sigma0), a), rtol=1e-6)
    np.testing.assert_allclose(
        glq, central(lambda v: lqr_cost(a, v, r, sigma0), lq), rtol=1e-6, atol=1e-8
    )
    # closed form: dJ/dQ = Y, the closed loop's Gramian of Σ0 (Acl Y + Y Aclᵀ + Σ0 = 0)
    x = sl.solve_continuous_are(a, B, lq @ lq.T + np.eye(3), r)
    acl = a - B @ np.linalg.solve(r, B.T @ x)
    y = sl.solve_continuous_lyapunov(acl, -sigma0)
    np.testing.assert_allclose(glq, (y + y.T) @ lq, rtol=1e-8)
    # forward mode w.r.t. r (a direction that keeps it symmetric)
    dr = np.array([[0.3, 0.1], [0.1, -0.2]])
    _, tangent = adgen.jvp(lambda rr: lqr_cost(a, lq, rr, sigma0), (r,), (dr,))
    t = 1e-6
    fd = (lqr_cost(a, lq, r + t * dr, sigma0) - lqr_cost(a, lq, r - t * dr, sigma0)) / (2 * t)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)


def stationary_variance(phi, noise):
    """The stationary covariance P of x_{k+1} = Φ x_k + w_k (P = Φ P Φᵀ + Σ, Σ = N Nᵀ), and
    the variance of the sum of the state's entries."""
    p = sl.solve_discrete_lyapunov(phi, noise @ noise.T)
    return np.sum(p)


@pytest.mark.parametrize("method", ["direct", "bilinear"])
def test_discrete_lyapunov_stationary_variance_both_modes(method):
    phi = RNG.uniform(-0.2, 0.2, (3, 3))
    noise = RNG.uniform(-1.0, 1.0, (3, 2))

    def f(phi, noise):
        p = sl.solve_discrete_lyapunov(phi, noise @ noise.T, method=method)
        return np.sum(p)

    gphi, gn = adgen.grad(f, wrt=(0, 1))(phi, noise)
    np.testing.assert_allclose(gphi, central(lambda v: f(v, noise), phi), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gn, central(lambda v: f(phi, v), noise), rtol=1e-6, atol=1e-9)
    _, tangent = adgen.jvp(f, (phi, noise), (np.eye(3), np.zeros((3, 2))))
    np.testing.assert_allclose(tangent, np.sum(gphi * np.eye(3)), rtol=1e-8)


def test_sylvester_with_complex_values_in_both_modes():
    a = A + 0.3j * RNG.standard_normal((3, 3))
    b = A[:2, :2].T + 0.2j  # the spectra of a and -b are far apart
    q = RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))

    def f(a, q):
        x = sl.solve_sylvester(a, b, q)
        return np.sum(np.abs(x) ** 2)

    ga, gq = adgen.grad(f, wrt=(0, 1))(a, q)

    def fd(fun, z):  # the gradient of a real function of z: d/dRe + i d/dIm
        return central(lambda v: fun(v + 1j * z.imag), z.real) + 1j * central(
            lambda v: fun(z.real + 1j * v), z.imag
        )

    np.testing.assert_allclose(ga, np.conj(fd(lambda v: f(v, q), a)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gq, np.conj(fd(lambda v: f(a, v), q)), rtol=1e-6, atol=1e-8)


def test_riccati_e_and_s_differentiated():
    a = RNG.uniform(-1.0, 1.0, (3, 3))
    e0 = np.eye(3) + 0.2 * RNG.uniform(-1.0, 1.0, (3, 3))
    s0 = 0.1 * RNG.uniform(-1.0, 1.0, (3, 2))

    def f(e, s):
        x = sl.solve_continuous_are(a, B, np.eye(3), np.eye(2), e=e, s=s)
        return np.sum(x * x)

    ge, gs = adgen.grad(f, wrt=(0, 1))(e0, s0)
    np.testing.assert_allclose(ge, central(lambda v: f(v, s0), e0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gs, central(lambda v: f(e0, v), s0), rtol=1e-6, atol=1e-8)


def test_complex_values_through_lyapunov_and_riccati_are_refused_by_name():
    def f(a, q):
        return np.sum(np.abs(sl.solve_continuous_lyapunov(a, q)) ** 2)

    with pytest.raises(AdgenError, match="solve_continuous_lyapunov` of complex values"):
        adgen.grad(f)(A + 0.1j, np.eye(3) + 0j)
