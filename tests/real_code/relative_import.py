"""A helper importing a sibling module relatively inside its body, as library code does
(scikit-learn's pairwise_kernels: `from ..gaussian_process.kernels import Kernel`)."""

import numpy as np


def kernel_sum(X):
    from .gp_marginal import rbf

    return np.sum(rbf(X, 1.0, 2.0))
