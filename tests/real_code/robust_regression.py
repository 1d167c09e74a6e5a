"""Robust linear regression: Student-t likelihood, a Gamma prior on the scale, a
normal prior on the weights, Poisson counts for a second outcome."""

import numpy as np
import scipy.stats as st


def objective(theta, X, y, counts):
    w = theta[:-1]
    log_scale = theta[-1]
    scale = np.exp(log_scale)
    resid = y - X @ w
    loglik = np.sum(st.t.logpdf(resid, df=4.0, scale=scale))
    rate = np.exp(X @ w * 0.3)
    loglik = loglik + np.sum(st.poisson.logpmf(counts, rate))
    logprior = np.sum(st.norm.logpdf(w, 0.0, 2.0)) + st.gamma.logpdf(scale, 2.0, scale=1.0)
    return -(loglik + logprior)


def make_args(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(25, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.standard_t(4.0, size=25) * 0.3
    counts = rng.poisson(np.exp(X @ np.array([0.3, -0.6, 0.15])))
    return (np.array([0.8, -1.5, 0.4, -0.5]), X, y, counts)
