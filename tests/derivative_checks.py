"""A derivative checked in both modes against a closed form or central differences, for
the tests of functions of one array (``from derivative_checks import check``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import adgen


def differences(f: Callable[[Any], Any], x: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """The gradient of ``f`` at ``x`` by central differences."""
    g = np.zeros(x.shape)
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = step
        e = e.reshape(x.shape)
        g.flat[k] = (f(x + e) - f(x - e)) / (2 * step)
    return g


def both_modes(f: Callable[[Any], Any], x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reverse mode's gradient of f at x, and forward mode's, one basis direction a call."""
    g = adgen.grad(f)(x)
    forward = np.zeros(x.shape)
    for k in range(x.size):
        t = np.zeros(x.size)
        t[k] = 1.0
        forward.flat[k] = adgen.jvp(f, (x,), (t.reshape(x.shape),))[1]
    return np.asarray(g), forward


def check(
    f: Callable[[Any], Any], x: np.ndarray, want: np.ndarray | None = None, rtol: float = 1e-6
) -> None:
    """Both modes' gradients of ``f`` at ``x`` equal ``want`` (central differences if None)."""
    want = differences(f, x) if want is None else want
    for got in both_modes(f, x):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-8)
