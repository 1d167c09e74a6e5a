"""A scalar Kalman filter's log likelihood over a series: a loop over an array's items, tuple unpacking of parameters, `+=` on a float."""

import numpy as np

def kalman_loglik(params, ys):
    a, log_q, log_r = params
    q, r = np.exp(log_q), np.exp(log_r)
    m, P = 0.0, 1.0
    ll = 0.0
    for y in ys:
        m_pred = a * m
        P_pred = a * a * P + q
        S = P_pred + r
        K = P_pred / S
        resid = y - m_pred
        ll += -0.5 * (np.log(2 * np.pi * S) + resid ** 2 / S)
        m = m_pred + K * resid
        P = (1 - K) * P_pred
    return ll

rs = np.random.RandomState(0)
ARGS = (np.array([0.8, -1.0, -0.5]), np.cumsum(rs.randn(15)) * 0.3)
F = kalman_loglik
