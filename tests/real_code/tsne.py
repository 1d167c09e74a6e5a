"""A t-SNE Kullback-Leibler objective: pairwise squared distances with np.add(...).T, np.fill_diagonal on a matrix the function made, np.maximum floors."""

import numpy as np

def pairwise_sq_dists(Y):
    sum_Y = np.sum(np.square(Y), 1)
    return np.add(np.add(-2 * np.dot(Y, Y.T), sum_Y).T, sum_Y)

def kl_objective(Y, P):
    num = 1.0 / (1.0 + pairwise_sq_dists(Y))
    np.fill_diagonal(num, 0.0)
    Q = num / np.sum(num)
    Q = np.maximum(Q, 1e-12)
    return np.sum(P * np.log(np.maximum(P, 1e-12) / Q))

rs = np.random.RandomState(0)
P = rs.rand(6, 6); P = P + P.T; np.fill_diagonal(P, 0); P /= P.sum()
ARGS = (rs.randn(6, 2), P)
F = kl_objective
