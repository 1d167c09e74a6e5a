"""Inverse heat conduction: an explicit finite-difference solver with two buffers it swaps
each step, a diffusivity field to recover, boundary values written into the new buffer, and
the misfit of the final temperatures with observations."""

import numpy as np


def solve_heat(kappa, u0, steps=20, dt=0.1):
    u = u0.copy()
    u_new = np.zeros_like(u)
    for _ in range(steps):
        flux = kappa[1:] * (u[1:] - u[:-1])
        u_new[1:-1] = u[1:-1] + dt * (flux[1:] - flux[:-1])
        u_new[0] = u[0]
        u_new[-1] = u[-1]
        u, u_new = u_new, u
    return u


def misfit(log_kappa, u0, observed):
    kappa = 0.2 * np.exp(log_kappa)
    with np.errstate(over="ignore"):
        final = solve_heat(kappa, u0)
    return 0.5 * np.sum((final - observed) ** 2)


U0 = np.exp(-((np.linspace(-1.0, 1.0, 9)) ** 2) * 4.0)
OBSERVED = solve_heat(0.2 * np.exp(0.3 * np.sin(np.arange(9.0))), U0)
ARGS = (np.zeros(9), U0, OBSERVED)
F = misfit
