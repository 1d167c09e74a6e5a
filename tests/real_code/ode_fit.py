"""Fitting the parameters of an ODE with a hand-written RK4 solver that takes the
dynamics as an argument (the way scipy.integrate.odeint is called)."""

import numpy as np


def rk4(f, y0, ts, theta):
    ys = [y0]
    y = y0
    for k in range(len(ts) - 1):
        h = ts[k + 1] - ts[k]
        k1 = f(y, ts[k], theta)
        k2 = f(y + 0.5 * h * k1, ts[k] + 0.5 * h, theta)
        k3 = f(y + 0.5 * h * k2, ts[k] + 0.5 * h, theta)
        k4 = f(y + h * k3, ts[k] + h, theta)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        ys.append(y)
    return np.stack(ys)


def lotka_volterra(y, t, theta):
    prey, pred = y[0], y[1]
    a, b, c, d = theta
    return np.array([a * prey - b * prey * pred, -c * pred + d * prey * pred])


def objective(theta, y0, ts, observed):
    trajectory = rk4(lotka_volterra, y0, ts, theta)
    return np.mean((trajectory - observed) ** 2)


def make_args(seed=0):
    rng = np.random.default_rng(seed)
    ts = np.linspace(0.0, 2.0, 11)
    observed = np.abs(rng.normal(1.0, 0.3, size=(11, 2)))
    return (np.array([1.0, 0.4, 0.8, 0.3]), np.array([1.2, 0.8]), ts, observed)
