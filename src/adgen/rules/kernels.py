"""scikit-learn's Gaussian-process kernels (``sklearn.gaussian_process.kernels``), registered
only when scikit-learn is installed.

``kernel = k.clone_with_theta(theta)`` of a kernel ``k`` made outside the function, then
``kernel(X)`` (or ``K, K_gradient = kernel(X, eval_gradient=True)``), is lowered to
``rt.kernel_matrix(k, theta, X)`` (and ``rt.kernel_theta_gradient``): the kernel a constant of
the derivative, ``theta`` (its log-transformed hyperparameters) differentiated by the
kernel's own gradient,

    dK = dK/dtheta . dtheta        theta_bar = sum_ij G_ij dK_ij/dtheta

so ``GaussianProcessRegressor.log_marginal_likelihood(theta)`` is differentiated as
installed, with scikit-learn's kernel gradients (RBF, Matern, RationalQuadratic,
DotProduct, WhiteKernel, ConstantKernel, their sums, products and exponents). A second
derivative w.r.t. ``theta`` (the kernels give none) and any derivative w.r.t. the points
``X`` are refused by name.
"""

from __future__ import annotations

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import PARAMETRISED_CALLABLES, refused_derivative, rule
from adgen.rules.samples import Arg, Domain, example

try:
    from sklearn.gaussian_process import kernels as _kernels
except ImportError:  # pragma: no cover - scikit-learn is optional
    _kernels = None

_POINTS = "np.linspace(-1.0, 1.0, 10).reshape(5, 2)"

if _kernels is not None:

    @rule(
        rt.kernel_matrix,
        examples=[
            example(
                f"rt.kernel_matrix(sklearn.gaussian_process.kernels.RBF(1.0), t, {_POINTS})",
                t=Arg((1,), Domain(-0.5, 0.5)),
                twice=False,
            ),
            example(
                "rt.kernel_matrix(sklearn.gaussian_process.kernels.RBF(1.0) + "
                f"sklearn.gaussian_process.kernels.WhiteKernel(0.1), t, {_POINTS})",
                t=Arg((2,), Domain(-1.0, 0.5)),
                twice=False,
            ),
        ],
    )
    def kernel_matrix(kernel, theta, X):
        def jvp_theta(dt):
            return np.tensordot(rt.kernel_theta_gradient(kernel, theta, X), dt, axes=1)

        def bjvp_theta(dt):
            gradient = rt.kernel_theta_gradient(kernel, theta, X)
            return np.moveaxis(np.tensordot(gradient, dt, axes=([-1], [-1])), -1, 0)

        def vjp_theta(g):
            return np.tensordot(g, rt.kernel_theta_gradient(kernel, theta, X), axes=2)

    refused_derivative(
        rt.kernel_theta_gradient,
        reason="a second derivative of a scikit-learn kernel w.r.t. its hyperparameters "
        "(the kernel computes the first only)",
    )

    PARAMETRISED_CALLABLES[_kernels.Kernel.clone_with_theta] = (
        rt.kernel_matrix,
        rt.kernel_theta_gradient,
    )
