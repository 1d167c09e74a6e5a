"""A GP's negative log marginal likelihood in the style of autograd's gaussian_process example: a factory returning closures, a kernel passed as a function, scipy.stats.multivariate_normal imported as mvn, a lambda objective."""

import numpy as np
from numpy.linalg import solve
import scipy.stats
from scipy.stats import multivariate_normal as mvn

def make_gp_funs(cov_func, num_cov_params):
    def unpack_kernel_params(params):
        mean = params[0]
        cov_params = params[2:]
        noise_scale = np.exp(params[1]) + 0.0001
        return mean, cov_params, noise_scale

    def log_marginal_likelihood(params, x, y):
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        prior_mean = mean * np.ones(len(y))
        return mvn.logpdf(y, prior_mean, cov_y_y)

    return num_cov_params + 2, log_marginal_likelihood

def rbf_covariance(kernel_params, x, xp):
    output_scale = np.exp(kernel_params[0])
    lengthscales = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs**2, axis=2))

D = 1
num_params, log_marginal_likelihood = make_gp_funs(rbf_covariance, num_cov_params=D + 1)
rs = np.random.RandomState(0)
X = np.linspace(-3, 3, 8).reshape(8, 1); y = np.sin(X[:, 0]) + 0.1 * rs.randn(8)
objective = lambda params: -log_marginal_likelihood(params, X, y)
ARGS = (0.1 * rs.randn(num_params),)
F = objective
