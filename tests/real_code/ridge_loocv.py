"""Ridge regression's leave-one-out cross-validation error w.r.t. the log penalty: np.linalg.solve, the hat matrix's diagonal."""

import numpy as np

def loocv(log_lam, X, y):
    lam = np.exp(log_lam)
    n, d = X.shape
    A = X.T @ X + lam * np.eye(d)
    H = X @ np.linalg.solve(A, X.T)
    resid = y - H @ y
    return np.mean((resid / (1 - np.diag(H))) ** 2)

rs = np.random.RandomState(0)
X = rs.randn(12, 3); y = X @ np.array([1., -2., 0.5]) + rs.randn(12) * 0.3
ARGS = (np.array(0.3), X, y)
F = loocv
