"""Metric MDS fitted by gradient descent, the way a user writes it with scikit-learn's pairwise
tools: the stress of a 2-d embedding against target dissimilarities (``euclidean_distances``
of the embedding with itself, whose diagonal scikit-learn sets to zero), and a repulsion term
from an RBF kernel (``rbf_kernel``, which updates its distance matrix in place and takes
``np.exp`` with ``out=``). Both are scikit-learn's functions as installed."""

import numpy as np
from sklearn.metrics.pairwise import euclidean_distances, rbf_kernel


def stress(Z, D, weight=0.1):
    d = euclidean_distances(Z)
    raw = 0.5 * np.sum((d - D) ** 2)
    repulsion = np.sum(rbf_kernel(Z, gamma=2.0)) / Z.shape[0]
    return raw + weight * repulsion


def fit(D, steps=200, rate=0.01, seed=0):
    Z = np.random.default_rng(seed).normal(size=(D.shape[0], 2))
    from adgen import grad

    g = grad(stress)
    for _ in range(steps):
        Z = Z - rate * g(Z, D)
    return Z


rs = np.random.RandomState(7)
POINTS = rs.normal(size=(8, 3))
D_TARGET = np.sqrt(np.sum((POINTS[:, None, :] - POINTS[None, :, :]) ** 2, axis=-1))
Z0 = rs.normal(size=(8, 2))

F = stress
ARGS = (Z0, D_TARGET)
