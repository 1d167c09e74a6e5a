"""A logistic regression loss averaged over minibatches: a helper with a default argument, range with a step, min of ints, `+=` on a float, slices of the data."""

import numpy as np

def sigmoid(z):
    return 1 / (1 + np.exp(-z))

def nll(w, X, y, lam=0.1):
    p = sigmoid(X @ w[:-1] + w[-1])
    eps = 1e-12
    loss = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
    return loss + lam / 2 * np.sum(w[:-1] ** 2)

def minibatch_loss(w, X, y, batch_size=4):
    n = X.shape[0]
    total = 0.0
    for start in range(0, n, batch_size):
        stop = min(start + batch_size, n)
        total += nll(w, X[start:stop], y[start:stop]) * (stop - start)
    return total / n

rs = np.random.RandomState(0)
X = rs.randn(10, 3); y = (rs.rand(10) > 0.5).astype(float)
ARGS = (rs.randn(4) * 0.1, X, y)
F = minibatch_loss
