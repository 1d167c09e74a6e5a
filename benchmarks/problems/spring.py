"""A physics simulation loop: a chain of hardening springs, explicit Euler, loss at the end.

``n`` unit masses on a line, neighbours joined by springs with stiffness ``k``
(one per spring) and a cubic hardening term, linear damping. ``steps`` explicit
Euler steps of size ``dt``; the loss is the squared distance of the final
positions to a target plus the final kinetic energy. Gradient w.r.t. the
initial positions, the initial velocities and the stiffnesses.
"""

from __future__ import annotations

import numpy as np

from .base import Args, Problem

SIZES: dict[str, tuple[int, int]] = {  # (particles n, steps)
    "tiny": (4, 5),
    "n64_steps300": (64, 300),
}


def spring(x0, v0, k, diff, rest, target, steps, dt, damping):
    """Simulate the spring chain and return the final-state loss."""
    x = x0
    v = v0
    for _ in range(steps):
        ext = diff @ x - rest
        tension = k * ext + 0.1 * ext * ext * ext
        force = -(tension @ diff) - damping * v
        x = x + dt * v
        v = v + dt * force
    return np.sum((x - target) ** 2) + 0.5 * np.sum(v * v)


def spring_hand(x0, v0, k, diff, rest, target, steps, dt, damping):
    """Value and gradient w.r.t. (x0, v0, k): the adjoint of the Euler steps."""
    x, v = x0, v0
    exts = []
    for _ in range(steps):
        ext = diff @ x - rest
        exts.append(ext)
        force = -((k * ext + 0.1 * ext * ext * ext) @ diff) - damping * v
        x = x + dt * v
        v = v + dt * force
    r = x - target
    value = float(r @ r) + 0.5 * float(v @ v)
    xb = 2.0 * r
    vb = v
    kb = np.zeros_like(k)
    for ext in reversed(exts):
        fb = dt * vb
        tb = -(diff @ fb)
        kb += tb * ext
        vb = vb - damping * fb + dt * xb
        xb = xb + (tb * (k + 0.3 * ext * ext)) @ diff
    return value, (xb, vb, kb)


def inputs(size: str, seed: int = 0) -> Args:
    """A slightly perturbed chain at rest spacing 1, random stiffnesses and target."""
    n, steps = SIZES[size]
    rng = np.random.default_rng(seed)
    x0 = np.arange(n, dtype=float) + 0.1 * rng.standard_normal(n)
    v0 = 0.1 * rng.standard_normal(n)
    k = rng.uniform(0.5, 2.0, n - 1)
    diff = np.eye(n)[1:] - np.eye(n)[:-1]
    rest = np.ones(n - 1)
    target = np.arange(n, dtype=float) * 1.05
    return x0, v0, k, diff, rest, target, steps, 0.01, 0.1


PROBLEM = Problem(
    name="spring",
    description="damped hardening spring chain, explicit Euler, w.r.t. (x0, v0, k)",
    primal=spring,
    hand=spring_hand,
    wrt=(0, 1, 2),
    inputs=inputs,
    sizes=("n64_steps300",),
    quick="n64_steps300",
    uses_loops=True,
)
