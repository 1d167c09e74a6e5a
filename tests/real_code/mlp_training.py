"""A small classifier trained by gradient descent; parameters are a list of (W, b) pairs."""

import numpy as np


def init_params(sizes, rng):
    params = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        W = rng.normal(size=(m, n)) / np.sqrt(m)
        b = np.zeros(n)
        params.append((W, b))
    return params


def predict(params, X):
    h = X
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W_out, b_out = params[-1]
    logits = h @ W_out + b_out
    return logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))


def objective(params, X, y, l2=1e-3):
    logp = predict(params, X)
    nll = -np.mean(np.sum(logp * y, axis=1))
    penalty = sum(np.sum(W**2) for W, _ in params)
    return nll + l2 * penalty


def sgd(grad, params, X, y, steps=3, lr=0.1):
    for _ in range(steps):
        g = grad(params, X, y)
        params = [(W - lr * gW, b - lr * gb) for (W, b), (gW, gb) in zip(params, g)]
    return params


def make_args(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(16, 4))
    labels = rng.integers(0, 3, size=16)
    y = np.eye(3)[labels]
    return (init_params([4, 8, 3], rng), X, y)
