"""Scalar Python code with a loop: 50 iterations of ~36 ``math``-module float operations.

A made-up but typical recurrence on three floats; gradient w.r.t. ``(a, b, c)``.
"""

from __future__ import annotations

import math

from .base import Args, Problem

SIZES: dict[str, int] = {"tiny": 3, "iters50": 50}


def scalar_loop(a, b, c, iterations):
    """A 3-variable recurrence accumulating ``x*y - z``, in plain Python floats."""
    x = a
    y = b
    z = c
    acc = 0.0
    for _ in range(iterations):
        s = math.sin(x) * y + 0.5 * math.cos(z)
        t = math.tanh(s) - 0.3 * x * z
        u = math.exp(-0.1 * t * t) + math.sqrt(1.0 + y * y)
        x_new = 0.9 * x + 0.1 * math.sin(u) * t
        y = 0.8 * y + 0.2 * math.cos(t + x_new)
        z = 0.5 * math.log(1.0 + u * u) + 0.1 * z
        x = x_new
        acc = acc + x * y - z
    return acc


def scalar_loop_hand(a, b, c, iterations):
    """Value and gradient w.r.t. (a, b, c): a hand-written reverse sweep over saved floats."""
    sin, cos, tanh, exp, sqrt, log = math.sin, math.cos, math.tanh, math.exp, math.sqrt, math.log
    x, y, z = a, b, c
    acc = 0.0
    tape = []
    for _ in range(iterations):
        sx = sin(x)
        s = sx * y + 0.5 * cos(z)
        th = tanh(s)
        t = th - 0.3 * x * z
        e = exp(-0.1 * t * t)
        r = sqrt(1.0 + y * y)
        u = e + r
        su = sin(u)
        xn = 0.9 * x + 0.1 * su * t
        tx = t + xn
        yn = 0.8 * y + 0.2 * cos(tx)
        zn = 0.5 * log(1.0 + u * u) + 0.1 * z
        tape.append((x, y, z, sx, th, t, e, r, u, su, tx, xn, yn))
        x, y, z = xn, yn, zn
        acc = acc + x * y - z
    xb = yb = zb = 0.0
    for x, y, z, sx, th, t, e, r, u, su, tx, xn, yn in reversed(tape):
        xnb = xb + yn
        ynb = yb + xn
        znb = zb - 1.0
        # z_new = 0.5 log(1 + u^2) + 0.1 z
        zb = 0.1 * znb
        ub = znb * u / (1.0 + u * u)
        # y_new = 0.8 y + 0.2 cos(t + x_new)
        yb = 0.8 * ynb
        txb = -0.2 * sin(tx) * ynb
        tb = txb
        xnb += txb
        # x_new = 0.9 x + 0.1 sin(u) t
        xb = 0.9 * xnb
        tb += 0.1 * su * xnb
        ub += 0.1 * t * cos(u) * xnb
        # u = exp(-0.1 t^2) + sqrt(1 + y^2)
        tb += -0.2 * t * e * ub
        yb += y / r * ub
        # t = tanh(s) - 0.3 x z;  s = sin(x) y + 0.5 cos(z)
        xb -= 0.3 * z * tb
        zb -= 0.3 * x * tb
        sb = tb * (1.0 - th * th)
        xb += cos(x) * y * sb
        yb += sx * sb
        zb -= 0.5 * sin(z) * sb
    return acc, (xb, yb, zb)


def inputs(size: str, seed: int = 0) -> Args:
    """Three starting values and the iteration count."""
    import random

    rng = random.Random(seed)
    return rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), SIZES[size]


PROBLEM = Problem(
    name="scalar_loop",
    description="scalar math-module recurrence, ~36 float ops x 50 iterations",
    primal=scalar_loop,
    hand=scalar_loop_hand,
    wrt=(0, 1, 2),
    inputs=inputs,
    sizes=("iters50",),
    quick="iters50",
    uses_loops=True,
)
