"""Reverse mode saves, in a loop, only the shape and dtype of a value its adjoint reads back
for nothing else (``save_shapes_only``): less memory, the same derivatives."""

from __future__ import annotations

import tracemalloc

import numpy as np

import adgen
from adgen.backend.codeopt.save_shapes_only import save_shapes_only


def recurrence(x, a):
    h = np.zeros_like(x)
    for _ in range(50):
        h = np.tanh(a * h + x)
    return np.sum(h * h)


def _fd_hvp(f, x, a, v, eps=1e-6):
    g = adgen.grad(f)
    return (g(x + eps * v, a) - g(x - eps * v, a)) / (2 * eps)


def test_a_recurrence_saves_fewer_arrays_per_step() -> None:
    """In code for any shapes (here: the gradient's code, read again by ``hvp``), ``h_1 =
    a * h`` and ``h_2 = h_1 + x`` are read back only for their shapes and kinds: the
    Hessian-vector product's peak memory holds about two arrays per step (``h`` and its
    tangent; it held six), and it agrees with finite differences."""
    rng = np.random.default_rng(0)
    x, v = rng.normal(size=10_000), rng.normal(size=10_000)
    source = adgen.source(recurrence)  # (the general code)
    assert "rt.saved_shape(h_1)" in source, source
    hvp = adgen.hvp(recurrence)
    hvp(x, 0.5, v)  # (made and compiled before measuring)
    tracemalloc.start()
    try:
        got = hvp(x, 0.5, v)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2.6 * x.nbytes, peak / x.nbytes  # (313 arrays before)
    np.testing.assert_allclose(got, _fd_hvp(recurrence, x, 0.5, v), rtol=1e-5, atol=1e-7)


def collected(x):
    hs = []
    h = x
    for _ in range(3):
        hs.append(h)
        h = np.sin(h) * 2.0
    return np.sum(np.stack(hs) ** 2) + np.sum(h)


def test_a_list_of_the_program_keeps_its_values() -> None:
    """Only reverse mode's own stack is read: the program's list, appended to in a loop,
    keeps its arrays, and the derivative agrees with finite differences."""
    x = np.linspace(-1.0, 1.0, 7)
    g = adgen.grad(collected)(x)
    eps = 1e-6
    fd = np.array(
        [(collected(x + eps * e) - collected(x - eps * e)) / (2 * eps) for e in np.eye(7)]
    )
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_values_read_as_numbers_after_the_loop_are_saved_whole() -> None:
    src = (
        "def f_vjp(x, out_bar):\n"
        "    stack = []\n"
        "    u = None\n"
        "    for _ in range(2):\n"
        "        stack.append(u)\n"
        "        u = x * 2.0\n"
        "    for _ in range(2):\n"
        "        g = rt.unbroadcast(out_bar, u) * u\n"
        "        u = stack.pop()\n"
        "    return (g,)\n"
    )
    assert save_shapes_only(src) == src  # (u is read as a number by `* u`)
    assert save_shapes_only(src.replace(" * u\n", "\n")) != src
    other = src.replace(" * u\n", "\n").replace("stack", "mine")
    assert save_shapes_only(other) == other  # (not reverse mode's list)
