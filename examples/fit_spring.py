"""Fit a spring's stiffness and damping to an observed trajectory, differentiating through the
simulation's time loop (with the trajectory written in place, step by step).

Run: python examples/fit_spring.py
"""

import numpy as np

import adgen

DT = 0.05
STEPS = 80


def simulate(k, c, x0, v0):
    """Explicit Euler for x'' = -k x - c x'; returns the positions."""
    xs = np.zeros(STEPS)
    x, v = x0, v0
    for t in range(STEPS):
        a = -k * x - c * v
        v = v + DT * a
        x = x + DT * v
        xs[t] = x
    return xs


def misfit(k, c, observed):
    return np.mean((simulate(k, c, 1.0, 0.0) - observed) ** 2)


def main() -> None:
    observed = simulate(4.0, 0.3, 1.0, 0.0)
    k, c = 2.0, 0.0
    value_and_grad = adgen.value_and_grad(misfit, wrt=("k", "c"))
    for it in range(301):
        value, (dk, dc) = value_and_grad(k, c, observed)
        k, c = k - 2.0 * dk, c - 2.0 * dc
        if it % 100 == 0:
            print(f"iteration {it:3d}  misfit {value:.2e}  k {k:.3f}  c {c:.3f}")
    print(f"fitted k = {k:.3f} (true 4.0), c = {c:.3f} (true 0.3)")


if __name__ == "__main__":
    main()
