"""scikit-learn's Gaussian-process kernels (``sklearn.gaussian_process.kernels``), called by
adgen's generated code.

A Gaussian process's log marginal likelihood makes its kernel for the hyperparameters it is
given (``kernel = self.kernel_.clone_with_theta(theta)``, ``K = kernel(X)``). The kernel
computes its own derivative w.r.t. ``theta`` (the log-transformed hyperparameters):
``kernel(X, eval_gradient=True)`` gives ``dK/dtheta`` as an ``(n, n, len(theta))`` array,
which adgen's rule (:mod:`adgen.rules.kernels`) uses.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def kernel_matrix(kernel: Any, theta: Any, X: Any) -> Any:
    """``kernel.clone_with_theta(theta)(X)``: the kernel's matrix of the points ``X`` for the
    hyperparameters ``theta``."""
    return kernel.clone_with_theta(np.asarray(theta))(X)


def kernel_theta_gradient(kernel: Any, theta: Any, X: Any) -> Any:
    """``dK/dtheta`` of :func:`kernel_matrix`, shape ``(n, n, len(theta))``."""
    return kernel.clone_with_theta(np.asarray(theta))(X, eval_gradient=True)[1]
