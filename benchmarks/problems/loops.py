"""The loop problems of issue 37, written as users write them (plain Python and NumPy):
benchmarks/loops.py times their gradients on both backends, tests/test_numba_backend.py
checks the Numba backend against the NumPy one on them."""

import math

import numpy as np


def orbit(x, y, vx, vy, dt, steps):
    for _ in range(steps):
        r = math.sqrt(x * x + y * y)
        vx = vx - 0.5 * dt * x / (r * r * r)
        vy = vy - 0.5 * dt * y / (r * r * r)
        x = x + dt * vx
        y = y + dt * vy
        r = math.sqrt(x * x + y * y)
        vx = vx - 0.5 * dt * x / (r * r * r)
        vy = vy - 0.5 * dt * y / (r * r * r)
    return 0.5 * (vx * vx + vy * vy) - 1.0 / math.sqrt(x * x + y * y)


def lorenz(sigma, rho, beta, x, y, z, dt, steps):
    for _ in range(steps):
        k1x = sigma * (y - x)
        k1y = x * (rho - z) - y
        k1z = x * y - beta * z
        x2, y2, z2 = x + 0.5 * dt * k1x, y + 0.5 * dt * k1y, z + 0.5 * dt * k1z
        k2x = sigma * (y2 - x2)
        k2y = x2 * (rho - z2) - y2
        k2z = x2 * y2 - beta * z2
        x3, y3, z3 = x + 0.5 * dt * k2x, y + 0.5 * dt * k2y, z + 0.5 * dt * k2z
        k3x = sigma * (y3 - x3)
        k3y = x3 * (rho - z3) - y3
        k3z = x3 * y3 - beta * z3
        x4, y4, z4 = x + dt * k3x, y + dt * k3y, z + dt * k3z
        k4x = sigma * (y4 - x4)
        k4y = x4 * (rho - z4) - y4
        k4z = x4 * y4 - beta * z4
        x = x + dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
        y = y + dt / 6.0 * (k1y + 2.0 * k2y + 2.0 * k3y + k4y)
        z = z + dt / 6.0 * (k1z + 2.0 * k2z + 2.0 * k3z + k4z)
    return x * x + y + z


def spring(x0, v0, k, steps, dt, damping):
    x = x0
    v = v0
    for _ in range(steps):
        ext = x[1:] - x[:-1] - 1.0
        tension = k * ext + 0.1 * ext * ext * ext
        force = np.zeros_like(x)
        force[1:] = force[1:] - tension
        force[:-1] = force[:-1] + tension
        force = force - damping * v
        x = x + dt * v
        v = v + dt * force
    return np.sum(x * x) + 0.5 * np.sum(v * v)


def rnn(W, U, b, xs, h0):
    h = h0
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
        total = total + np.sum(h * h)
    return total


def heat(u0, alpha, steps):
    u = u0.copy()
    for _ in range(steps):
        un = u.copy()
        u[1:-1] = un[1:-1] + alpha * (un[2:] - 2.0 * un[1:-1] + un[:-2])
    return np.sum(u * u)
