"""A few steps of 2-D advection-diffusion on a periodic grid (semi-Lagrangian-free, upwind
by np.roll), the state kept flat the way optimisers hand it over."""

import numpy as np


def laplacian(u, h):
    return (
        np.roll(u, 1, axis=0)
        + np.roll(u, -1, axis=0)
        + np.roll(u, 1, axis=1)
        + np.roll(u, -1, axis=1)
        - 4.0 * u
    ) / h**2


def step(u, vx, vy, nu, dt, h):
    dudx = (u - np.roll(u, 1, axis=1)) / h
    dudy = (u - np.roll(u, 1, axis=0)) / h
    return u + dt * (nu * laplacian(u, h) - vx * dudx - vy * dudy)


def objective(u0_flat, velocity, nu, shape, steps, target):
    u = u0_flat.reshape(shape)
    vx, vy = velocity[0], velocity[1]
    h = 1.0 / shape[0]
    dt = 0.2 * h * h / nu
    for _ in range(steps):
        u = step(u, vx, vy, nu, dt, h)
    err = u.ravel() - target
    return 0.5 * np.dot(err, err)


def make_args(seed=0):
    rng = np.random.default_rng(seed)
    shape = (8, 8)
    n = shape[0] * shape[1]
    return (rng.normal(size=n), np.array([0.3, -0.2]), 0.05, shape, 6, rng.normal(size=n) * 0.1)
