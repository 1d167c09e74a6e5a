"""GP regression's negative log marginal likelihood the way GP libraries guard it: a
Cholesky factor retried with growing jitter (`try` / `except LinAlgError` in a loop, `break`
on success), a flag for giving up, warnings silenced around the kernel, a validation
`raise` with an f-string."""

import warnings

import numpy as np


def sq_dists(X):
    sq = np.sum(X**2, axis=1)
    return np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)


def neg_log_marginal(log_params, X, y):
    if log_params.shape[0] != 3:
        raise ValueError(f"expected 3 hyperparameters, got {log_params.shape[0]}")
    ell, sf2, sn2 = np.exp(log_params)
    n = X.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        K = sf2 * np.exp(-0.5 * sq_dists(X) / ell**2) + sn2 * np.eye(n)
    jitter = 0.0
    failed = True
    for _ in range(4):
        try:
            L = np.linalg.cholesky(K + jitter * np.eye(n))
            failed = False
            break
        except np.linalg.LinAlgError:
            jitter = 1e-8 if jitter == 0.0 else jitter * 10.0
    if failed:
        return np.inf
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * n * np.log(2 * np.pi)


rs = np.random.RandomState(3)
X_TRAIN = rs.uniform(-2.0, 2.0, size=(10, 2))
Y_TRAIN = np.sin(X_TRAIN[:, 0]) + 0.1 * rs.randn(10)
ARGS = (np.array([0.2, -0.1, -2.5]), X_TRAIN, Y_TRAIN)
F = neg_log_marginal
