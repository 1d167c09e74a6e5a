"""A spring chain simulated by a class built at module level: methods with self attributes, np.zeros_like with slice `+=`/`-=` writes, `.copy()` then `+=` on the state in a loop."""

import numpy as np

class Simulation:
    def __init__(self, n, dt=0.01, steps=20):
        self.n = n
        self.dt = dt
        self.steps = steps
        self.rest = np.ones(n - 1)

    def forces(self, x, k):
        ext = np.diff(x) - self.rest
        f = np.zeros_like(x)
        f[:-1] += k * ext
        f[1:] -= k * ext
        return f

    def run(self, x0, k):
        x = x0.copy()
        v = np.zeros_like(x0)
        for _ in range(self.steps):
            v += self.dt * self.forces(x, k)
            x += self.dt * v
        return x

sim = Simulation(5)

def loss(k, x0, target):
    return np.sum((sim.run(x0, k) - target) ** 2)

ARGS = (np.array([1.0, 2.0, 1.5, 0.5]), np.arange(5.0) * 1.1, np.arange(5.0))
F = loss
