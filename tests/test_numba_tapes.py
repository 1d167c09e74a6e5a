"""``backend="numba"``: saves and restores nothing reads, removed (adgen.backend.numba_tapes).

Each removal is proved from the code's structure; these tests hold the proof to the cases
that break it (a later read of the array, through the name or another that shares it, of a
name's shape, of an argument's array the caller holds) and compare the derivatives of loop
programs with a slice write against the NumPy backend's.
"""

from __future__ import annotations

import ast
import warnings

import numpy as np
import pytest

import adgen
from adgen.backend import numba_jit
from adgen.backend.numba_tapes import dead_restores

pytest.importorskip("numba")

RTOL = 1e-12


def _removed(text: str) -> set[str]:
    fn = ast.parse(text).body[0]
    assert isinstance(fn, ast.FunctionDef)
    tapes = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id.startswith("tape")}
    return dead_restores(fn, tapes)


SCRATCH = """def f(u0, n):
    tape_u = []
    u = u0.copy()
    for _ in range(n):
        tape_u.append(nbrt.copy_of(u[1:]))
        nbrt.setslice(u, slice(1, None), u[:-1] * 2.0)
    s = np.sum(u)
    for _ in range(n):
        READ
        nbrt.setslice(u, slice(1, None), tape_u.pop())
        AFTER
    return s
"""


def _scratch(read: str = "pass", after: str = "pass") -> str:
    return SCRATCH.replace("READ", read).replace("AFTER", after)


def test_a_restore_nothing_reads_goes_with_its_save() -> None:
    assert _removed(_scratch()) == {"tape_u"}
    # reads of the shape only, and writes, read no value
    assert _removed(_scratch("g = nbrt.zeros_like(u)", "nbrt.setslice(u, slice(0, 1), 0.0)"))


@pytest.mark.parametrize(
    "read, after",
    [
        ("s = s + u[0]", "pass"),  # the next iteration reads it
        ("pass", "s = s * np.sum(u)"),  # later in the same iteration
        ("w = u[1:]", "s = s + w[0]"),  # through a view
        ("pass", "g = nbrt.add_into(u, u, u, slice(0, 1))"),  # added into: read
    ],
)
def test_a_restore_read_later_stays(read: str, after: str) -> None:
    assert _removed(_scratch(read, after)) == set()


def test_a_restore_read_after_the_loop_or_returned_stays() -> None:
    assert _removed(_scratch().replace("return s", "return s + u[0]")) == set()
    assert _removed(_scratch().replace("return s", "return (s, u)")) == set()


def test_a_restore_read_through_a_name_sharing_the_array_stays() -> None:
    """``w`` holds ``u``'s array (bound before the loops): its read after the restore reads
    what the restore wrote; so does a name a tape's pop binds to an array pushed onto it."""
    shared = _scratch().replace("    u = u0.copy()\n", "    u = u0.copy()\n    w = u\n")
    assert _removed(shared.replace("return s", "return s + w[0]")) == set()
    pushed = _scratch("tape_w.append(u)", "v = tape_w.pop()\n        s = s + v[0]")
    assert "tape_w" not in _removed(pushed) and "tape_u" not in _removed(pushed)


def test_a_restore_into_an_argument_stays() -> None:
    """The caller holds an argument's array: it sees the values the restore writes back."""
    text = _scratch().replace("    u = u0.copy()\n", "    u = u0\n")
    assert _removed(text) == set()


def test_a_name_restored_whose_shape_is_read_later_stays() -> None:
    """A name bound anew by a pop may take another shape: ``zeros_like`` reads it."""
    text = """def f(x, n):
    tape_y = []
    y = x
    for k in range(n):
        tape_y.append(y)
        y = y[1:] * 2.0
    for k in range(n):
        g = nbrt.zeros_like(y)
        y = tape_y.pop()
    return g
"""
    assert _removed(text) == set()
    assert _removed(text.replace("g = nbrt.zeros_like(y)", "g = 1.0")) == {"tape_y"}


def test_a_push_with_an_effect_or_a_pop_read_otherwise_keeps_the_tape() -> None:
    effect = _scratch().replace("nbrt.copy_of(u[1:])", "nbrt.copy_of(bump(u))")
    assert _removed(effect) == set()
    kept = _scratch("pass", "s = s + tape_u.pop()[0]")  # (a pop read, not restored)
    assert _removed(kept.replace("nbrt.setslice(u, slice(1, None), tape_u.pop())", "")) == set()


# -- derivatives: the NumPy backend's -------------------------------------------------------


def scratch_heat(u0, alpha, steps):
    u = u0.copy()
    for _ in range(steps):
        un = u.copy()
        u[1:-1] = un[1:-1] + alpha * (un[2:] - 2.0 * un[1:-1] + un[:-2])
    return np.sum(u * u)


def read_heat(u0, alpha, steps):
    """The restored array read backwards: ``u * u`` (its values) at each step."""
    u = u0.copy()
    total = 0.0
    for _ in range(steps):
        total = total + np.sum(u * u)
        u[1:-1] = u[1:-1] * (1.0 + alpha * u[:-2])
    return total + np.sum(u)


def broken_heat(u0, alpha, steps, stop):
    u = u0.copy()
    acc = u0 * 0.0
    for k in range(steps):
        if k == stop:
            break
        un = u.copy()
        u[1:-1] = un[1:-1] * (1.0 + alpha * un[2:])
        acc = acc + un * un
    return acc[2] * u[3] + acc[5]


def nested_heat(u0, alpha, steps):
    u = u0.copy()
    total = 0.0
    for _ in range(steps):
        for j in range(2):
            u[1:-1] = u[1:-1] + alpha * u[2:] * u[:-2]
        total = total + np.sum(u)
    return total


def written_after(u0, alpha, steps):
    """A value saved by name, then written into: its restore matters."""
    u = u0.copy()
    total = 0.0
    for _ in range(steps):
        v = u * alpha
        u[1:] = u[:-1] * v[1:]
        v[:2] = 0.0
        total = total + np.sum(v * u)
    return total


CASES = {
    "scratch": (scratch_heat, (0.1, 20), (0,)),
    "read": (read_heat, (0.1, 15), (0,)),
    "break": (broken_heat, (0.1, 15, 9), (0,)),
    "nested": (nested_heat, (0.1, 6), (0,)),
    "written after": (written_after, (0.3, 7), (0,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_derivatives_match_the_numpy_backend(name: str) -> None:
    fn, rest, wrt = CASES[name]
    u0 = np.sin(np.linspace(0.0, 3.0, 9)) + 1.5
    args = (u0, *rest)
    expected = adgen.grad(fn, wrt=wrt)(*args)
    before = numba_jit.stats["runtime_fallbacks"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = adgen.grad(fn, wrt=wrt, backend="numba", strict=True)(*args)
    assert numba_jit.stats["runtime_fallbacks"] == before  # (Numba's code gave the answer)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-300)
    assert np.array_equal(u0, np.sin(np.linspace(0.0, 3.0, 9)) + 1.5)
