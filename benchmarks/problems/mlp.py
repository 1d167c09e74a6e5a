"""A two-layer perceptron's loss: 64 x 784 -> 128 (tanh) -> 10, softmax cross-entropy.

Gradient w.r.t. all weights and biases ``(W1, b1, W2, b2)``; the labels are one-hot.
"""

from __future__ import annotations

import numpy as np

from .base import Args, Problem

SIZES: dict[str, tuple[int, int, int, int]] = {  # batch, inputs, hidden, classes
    "tiny": (4, 6, 5, 3),
    "32x256-64-10": (32, 256, 64, 10),  # (small arrays: where per-call costs show)
    "64x784-128-10": (64, 784, 128, 10),
}


def mlp(W1, b1, W2, b2, X, Y):
    """Mean softmax cross-entropy of a tanh MLP, straight-line NumPy."""
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    z_max = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - z_max), axis=1, keepdims=True)) + z_max
    return -np.sum(Y * (z - lse)) / X.shape[0]


def mlp_hand(W1, b1, W2, b2, X, Y):
    """Value and gradient (backpropagation written by hand; rows of ``Y`` sum to one)."""
    n = X.shape[0]
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    value = -float(np.sum(Y * (z - np.log(s)))) / n
    dz = (e / s - Y) / n
    dh = dz @ W2.T
    da = dh * (1.0 - h * h)
    return value, (X.T @ da, da.sum(axis=0), h.T @ dz, dz.sum(axis=0))


def inputs(size: str, seed: int = 0) -> Args:
    """Glorot-scaled weights, standard-normal inputs, one-hot labels."""
    n, d, hdim, c = SIZES[size]
    rng = np.random.default_rng(seed)
    W1 = rng.standard_normal((d, hdim)) / np.sqrt(d)
    b1 = 0.1 * rng.standard_normal(hdim)
    W2 = rng.standard_normal((hdim, c)) / np.sqrt(hdim)
    b2 = 0.1 * rng.standard_normal(c)
    X = rng.standard_normal((n, d))
    Y = np.eye(c)[rng.integers(0, c, n)]
    return W1, b1, W2, b2, X, Y


PROBLEM = Problem(
    name="mlp",
    description="2-layer MLP, tanh, softmax cross-entropy, w.r.t. all parameters",
    primal=mlp,
    hand=mlp_hand,
    wrt=(0, 1, 2, 3),
    inputs=inputs,
    sizes=("64x784-128-10",),
    quick="64x784-128-10",
)
