"""Gaussian-process hyperparameters, differentiated as installed (issue 34, part 4).

``GaussianProcessRegressor.log_marginal_likelihood(theta)`` makes its kernel for the
hyperparameters (``kernel = self.kernel_.clone_with_theta(theta)``) and calls it (``K =
kernel(self.X_train_)``). adgen refused the call ("a computed value"). It now takes the
clone as a kernel made for ``theta`` and lowers its calls to ``rt.kernel_matrix(k, theta,
X)``, differentiated by the kernel's own gradient w.r.t. ``theta`` (what ``eval_gradient=True``
gives). Each case is checked against the gradient scikit-learn's authors wrote
(``log_marginal_likelihood(theta, eval_gradient=True)``), in both modes.
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError
from adgen.rules.scipy_linalg import SUPPORTED

gp_module = pytest.importorskip("sklearn.gaussian_process")
kernels = pytest.importorskip("sklearn.gaussian_process.kernels")

RNG = np.random.default_rng(9)
X = RNG.normal(size=(12, 2))
Y = np.sin(X[:, 0]) + 0.1 * RNG.normal(size=12)

KERNELS = [
    (kernels.RBF(1.0) + kernels.WhiteKernel(0.1), np.array([0.2, -1.5])),
    (kernels.ConstantKernel(2.0) * kernels.Matern(0.8, nu=2.5), np.array([0.5, -0.1])),
    (kernels.RationalQuadratic(1.0, 0.5) + kernels.WhiteKernel(0.05), np.array([0.1, 0.3, -2.0])),
    (kernels.RBF([1.0, 2.0]), np.array([0.1, 0.6])),
]


# (the likelihood factors the kernel matrix with scipy.linalg.cholesky)
@pytest.mark.skipif(not SUPPORTED, reason="no scipy.linalg rules before SciPy 1.16")
@pytest.mark.parametrize("kernel, theta", KERNELS, ids=[str(k) for k, _ in KERNELS])
def test_log_marginal_likelihood_against_scikit_learns_gradient(kernel, theta):
    gp = gp_module.GaussianProcessRegressor(kernel, optimizer=None, alpha=1e-6).fit(X, Y)

    def lml(theta):
        return gp.log_marginal_likelihood(theta)

    value, gradient = gp.log_marginal_likelihood(theta, eval_gradient=True)
    ours, g = adgen.value_and_grad(lml)(theta)
    assert ours == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(g, gradient, rtol=1e-9, atol=1e-12)
    e = np.linspace(1.0, -1.0, theta.size)
    _, t = adgen.jvp(lml, (theta,), (e,))
    assert t == pytest.approx(gradient @ e, rel=1e-9, abs=1e-12)


def test_a_kernel_made_for_theta_in_a_users_objective():
    kernel = kernels.RBF(1.0) + kernels.WhiteKernel(0.1)

    def penalised(theta):
        K, K_gradient = kernel.clone_with_theta(theta)(X, eval_gradient=True)
        return np.sum(K) + 0.5 * np.sum(theta**2)

    theta = np.array([0.3, -1.0])
    expected = np.sum(kernel.clone_with_theta(theta)(X, eval_gradient=True)[1], axis=(0, 1))
    np.testing.assert_allclose(adgen.grad(penalised)(theta), expected + theta, rtol=1e-12)


def test_what_the_kernel_cannot_give_is_refused_by_name():
    kernel = kernels.RBF(1.0)

    def total(theta):
        return np.sum(kernel.clone_with_theta(theta)(X))

    with pytest.raises(AdgenError, match="second derivative of a scikit-learn kernel"):
        adgen.hessian(total)(np.array([0.2]))

    def of_points(x):
        return np.sum(kernel.clone_with_theta(np.array([0.2]))(x))

    with pytest.raises(AdgenError, match="argument `X`"):
        adgen.grad(of_points)(X)
