"""Programs in the styles users write, differentiated on Dask arrays by test_dask_programs.py.

Plain NumPy code, as it would be written for NumPy arrays: nothing here knows about Dask.
"""

import numpy as np


def logistic_loss(w, X, y, lam):
    """L2-regularised logistic regression, labels in {-1, 1}."""
    z = X @ w
    data = np.mean(np.logaddexp(0.0, -y * z))
    return data + 0.5 * lam * np.sum(w * w)


def mlp_loss(W1, b1, W2, b2, X, Y):
    """A one-hidden-layer classifier's cross-entropy (stable log-softmax), Y one-hot."""
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    shifted = logits - m
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * logp, axis=1))


def gmm_nll(means, log_weights, log_scale, X):
    """Negative log-likelihood of an isotropic Gaussian mixture (logsumexp over components)."""
    diff = X[:, None, :] - means[None, :, :]
    dist = np.sum(diff**2, axis=2) * np.exp(-2.0 * log_scale)
    logw = log_weights - np.log(np.sum(np.exp(log_weights)))
    logp = logw - 0.5 * dist - X.shape[1] * log_scale
    m = np.max(logp, axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.sum(np.exp(logp - m), axis=1))
    return -np.mean(lse)


def embedding_loss(table, idx, weights):
    """Rows of an embedding table gathered by index (repeated indices add up)."""
    rows = table[idx]
    return np.sum(weights[:, None] * rows**2) + np.sum(np.take(table, idx, axis=0) * 0.5)


def damped_oscillators(x0, v0, k, damping, steps=50, dt=0.02):
    """A 50-step explicit time loop of many nonlinear damped oscillators."""
    x = x0
    v = v0
    energy = 0.0
    for _ in range(steps):
        a = -k * x - damping * v + 0.1 * np.sin(x)
        v = v + dt * a
        x = x + dt * v
        energy = energy + dt * np.mean(x * x)
    return energy + np.mean(v * v)
