"""Gaussian-process regression: negative log marginal likelihood of RBF hyperparameters,
with log-normal priors on them from scipy.stats."""

import numpy as np
from scipy import stats


def rbf(X, lengthscale, variance):
    sq = np.sum(X**2, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * X @ X.T
    return variance * np.exp(-0.5 * d2 / lengthscale**2)


def objective(log_params, X, y):
    lengthscale, variance, noise = np.exp(log_params)
    n = X.shape[0]
    K = rbf(X, lengthscale, variance) + (noise + 1e-6) * np.eye(n)
    loglik = stats.multivariate_normal.logpdf(y, np.zeros(n), K)
    logprior = np.sum(stats.norm.logpdf(log_params, loc=0.0, scale=1.5))
    return -(loglik + logprior)


def make_args(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, size=(12, 2))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.05 * rng.normal(size=12)
    return (np.array([0.1, -0.2, -2.0]), X, y)
