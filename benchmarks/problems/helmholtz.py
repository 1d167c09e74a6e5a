"""The Helmholtz free energy of a mixed fluid (Peng-Robinson), the AD survey's benchmark.

Baydin et al. (2018), Figure 5 and Table 4, after Griewank and Walther (2008)::

    f(x) = R T sum_i x_i log(x_i / (1 - b.x))
           - x.A.x / (sqrt(8) b.x) * log((1 + (1 + sqrt 2) b.x) / (1 + (1 - sqrt 2) b.x))

(the survey's caption drops the factor ``x_i`` in the sum; Griewank's
original and DiffSharp's benchmark code have it). Gradient w.r.t. ``x``.
"""

from __future__ import annotations

import math

import numpy as np

from .base import Args, Problem

SIZES: dict[str, int] = {"tiny": 4, "n50": 50, "n1000": 1000}
SQRT2 = math.sqrt(2.0)
SQRT8 = math.sqrt(8.0)


def helmholtz(x, b, A, R, T):
    """The Helmholtz free energy, straight-line NumPy."""
    bx = np.dot(b, x)
    xax = np.dot(x, A @ x)
    first = R * T * np.sum(x * np.log(x / (1.0 - bx)))
    ratio = (1.0 + (1.0 + SQRT2) * bx) / (1.0 + (1.0 - SQRT2) * bx)
    return first - xax / (SQRT8 * bx) * np.log(ratio)


def helmholtz_hand(x, b, A, R, T):
    """Value and gradient w.r.t. ``x``, written by hand."""
    bx = float(b @ x)
    ax = A @ x
    xax = float(x @ ax)
    rt = R * T
    log_x = np.log(x)
    log_1mbx = math.log(1.0 - bx)
    c1, c2 = 1.0 + SQRT2, 1.0 - SQRT2
    p1, p2 = 1.0 + c1 * bx, 1.0 + c2 * bx
    log_ratio = math.log(p1 / p2)
    coef = log_ratio / (SQRT8 * bx)
    value = rt * float(x @ (log_x - log_1mbx)) - xax * coef
    # d coef / d bx, then the chain through b.x and x.A.x (A is symmetric)
    dcoef = ((c1 / p1 - c2 / p2) / bx - log_ratio / (bx * bx)) / SQRT8
    scalar = rt * x.sum() / (1.0 - bx) - xax * dcoef
    grad = rt * (log_x + (1.0 - log_1mbx)) + scalar * b - (2.0 * coef) * ax
    return value, (grad,)


def inputs(size: str, seed: int = 0) -> Args:
    """Mole fractions ``x`` and constants with ``b.x < 1`` and a symmetric ``A``."""
    n = SIZES[size]
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 1.0, n) / n
    b = rng.uniform(0.1, 1.0, n)
    m = rng.uniform(0.0, 1.0, (n, n))
    return x, b, 0.5 * (m + m.T), 1.285, 273.0


PROBLEM = Problem(
    name="helmholtz",
    description="Helmholtz free energy (AD survey) w.r.t. x",
    primal=helmholtz,
    hand=helmholtz_hand,
    wrt=(0,),
    inputs=inputs,
    sizes=("n50", "n1000"),
    quick="n50",
)
