"""``backend="numba"``'s fused loops (adgen.backend.numba_fuse) and the loop forms of its slice
helpers (adgen.backend.numba_runtime): the same numbers as the code they stand for.

Fused code computes each element with the operations of the statements it fuses, in their
order, so it is compared with the unfused Numba code bit for bit; where a fused loop cannot run
(arrays of other lengths, other kinds of arguments) the code runs unfused, with the answer of
the NumPy backend.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import adgen
from adgen.backend import numba_jit
from adgen.backend.numba_code import NumbaSource
from adgen.backend.numba_fuse import ARRAY, NUMBER, fuse

numba = pytest.importorskip("numba")
nbrt = pytest.importorskip("adgen.backend.numba_runtime")

RTOL = 1e-12
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _compiled(text: str, name: str):
    namespace = {"np": np, "nbrt": nbrt, "math": math}
    exec(compile(text, f"<{name}>", "exec"), namespace)
    return numba.njit(error_model="python")(namespace[name])


STEP = """def step(u, c, out):
    a = u[2:] - 2.0 * u[1:-1]
    b = a + u[:-2]
    t = u[1:-1] + c * b
    out[1:-1] = t
    s = np.tanh(t) * t - t / (1.0 + c)
    return s, t
"""


def test_a_run_is_one_loop_that_computes_the_same_bits() -> None:
    kinds = {"u": ARRAY, "out": ARRAY, "a": ARRAY, "b": ARRAY, "t": ARRAY, "s": ARRAY}
    kinds["c"] = NUMBER
    fused = fuse(STEP, kinds)
    assert fused.count("nbrt.fusable(") == 2  # (the write into out ends the first run)
    assert "a = np.empty" not in fused and "b = np.empty" not in fused  # (read in the run only)
    assert "t = np.empty(n)" in fused and "s = np.empty" in fused
    u = np.sin(np.linspace(0.0, 3.0, 17))
    plain, ours = _compiled(STEP, "step"), _compiled(fused, "step")
    out0, out1 = np.zeros(17), np.zeros(17)
    s0, t0 = plain(u, 0.3, out0)
    s1, t1 = ours(u, 0.3, out1)
    for x, y in ((s0, s1), (t0, t1), (out0, out1)):
        assert x.tobytes() == y.tobytes()


def test_a_write_into_an_array_is_never_fused_into_the_loop_that_reads_it() -> None:
    """``u[1:-1] = u[:-2] + u[2:]``: a loop writing into ``u`` would read entries it wrote."""
    text = "def f(u):\n    t = u[:-2] + u[2:]\n    u[1:-1] = t\n    return u\n"
    fused = fuse(text, {"u": ARRAY, "t": ARRAY})
    assert "t = np.empty(n)" in fused and "t[i] = t_i" in fused
    assert "u[1:-1] = t" in fused.splitlines()[-2]  # (after the loop, from t)
    u = np.arange(6.0) ** 2
    expected = u.copy()
    expected[1:-1] = u[:-2] + u[2:]
    assert _compiled(fused, "f")(u.copy()).tolist() == expected.tolist()


def test_statements_move_across_a_loop_only_where_the_order_allows() -> None:
    text = (
        "def f(x, tape_x, tape_y):\n"
        "    y = x * 2.0\n"
        "    tape_x.append(x)\n"  # reads x, which the run does not bind: before the loop
        "    tape_y.append(y)\n"  # reads the y the run binds: after the loop
        "    z = y + x\n"
        "    x = z * z\n"  # binds x, which z's statement read: the same run, x's new array
        "    return x\n"
    )
    fused = fuse(text, {"x": ARRAY, "y": ARRAY, "z": ARRAY})
    rows = [r.strip() for r in fused.splitlines()]
    loop = rows.index("for i in range(n):")
    assert rows.index("tape_x.append(x)") < loop < rows.index("tape_y.append(y)")
    x = np.linspace(-1.0, 1.0, 5)
    plain, ours = _compiled(text, "f"), _compiled(fused, "f")

    def tapes():
        return numba.typed.List([x[:0]]), numba.typed.List([x[:0]])

    tapes0, tapes1 = tapes(), tapes()
    got, expected = ours(x, *tapes1), plain(x, *tapes0)
    assert got.tobytes() == expected.tobytes()
    for a, b in zip(tapes0, tapes1):
        assert [v.tolist() for v in a] == [v.tolist() for v in b]


def test_nothing_fuses_without_known_arrays_or_operations() -> None:
    text = "def f(x, y):\n    a = x\n    b = x[1:]\n    c = x @ y\n    return a, b, c\n"
    assert fuse(text, {"x": ARRAY, "y": ARRAY, "a": ARRAY, "b": ARRAY, "c": ARRAY}) == text
    text = "def f(x, k):\n    y = x * k\n    return y\n"
    assert fuse(text, {"x": ARRAY, "k": ARRAY}) == text  # (y's kind unknown)


def _code(text: str, fallback) -> numba_jit.NumbaCode:
    return numba_jit.NumbaCode(NumbaSource(fallback.__name__, text), fallback, None, False)


def scaled(x, w):
    y = x * w
    z = y + 1.0
    return z


SCALED = "def scaled(x, w):\n    y = x * w\n    z = y + 1.0\n    return z\n"


def test_arrays_of_other_lengths_run_the_code_unfused() -> None:
    """A fused loop reads arrays of one length; broadcasting ones (3 and 1) unfuse the code."""
    code = _code(SCALED, scaled)
    before = dict(numba_jit.stats)
    x, w = np.array([1.0, 2.0, 3.0]), np.array([0.5])
    np.testing.assert_array_equal(code(x, w), scaled(x, w))
    assert numba_jit.stats["fused"] == before["fused"] + 1
    assert numba_jit.stats["unfused"] == before["unfused"] + 1
    assert "nbrt.fusable" not in code.text  # (the plain code, from now on)
    np.testing.assert_array_equal(code(x, w), scaled(x, w))


def test_other_kinds_of_arguments_run_the_code_unfused() -> None:
    code = _code(SCALED, scaled)
    x, w = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, 2.0])
    np.testing.assert_array_equal(code(x, w), scaled(x, w))
    assert "nbrt.fusable" in code.text
    before = dict(numba_jit.stats)
    x2 = np.arange(6.0).reshape(2, 3)  # (two dimensions: Numba cannot type the fused loop)
    np.testing.assert_array_equal(code(x2, w), scaled(x2, w))
    assert numba_jit.stats["unfused"] == before["unfused"] + 1
    assert numba_jit.stats["runtime_fallbacks"] == before["runtime_fallbacks"]
    np.testing.assert_array_equal(code(x, w), scaled(x, w))


def stencil(u, c, n):
    for _ in range(n):
        u = u.copy()
        u[1:-1] = u[:-2] + c * u[2:]
    return np.sum(u * u)


def shift(u, n):
    u = u.copy()
    for _ in range(n):
        u[1:] = u[:-1]
    return np.sum(u * np.arange(u.shape[0]))


@pytest.mark.parametrize("fn", [stencil, shift])
def test_writes_into_shifted_slices_of_the_read_array_agree(fn) -> None:
    u = np.cos(np.linspace(0.0, 2.0, 9))
    args = (u, 0.4, 6) if fn is stencil else (u, 3)
    expected = adgen.value_and_grad(fn, wrt=0)(*args)
    before = dict(numba_jit.stats)
    got = adgen.value_and_grad(fn, wrt=0, backend="numba", strict=True)(*args)
    assert numba_jit.stats["compiled"] == before["compiled"] + 1
    assert numba_jit.stats["unfused"] == before["unfused"]
    np.testing.assert_allclose(got[0], expected[0], rtol=RTOL)
    np.testing.assert_allclose(got[1], expected[1], rtol=RTOL, atol=1e-300)


# -- the slice helpers' loops ------------------------------------------------------------------

SLICES = [slice(1, -1), slice(None, -2), slice(2, None), slice(None, None, 2), slice(-3, 1)]


@numba.njit
def _helpers(y, g, x, index, fill):
    a = nbrt.add_at(y, g, x, index)
    b = nbrt.getitem_vjp(g, x, index)
    c = nbrt.written(y, index)
    d = y.copy()
    nbrt.setslice(d, index, g)
    e = y.copy()
    nbrt.setslice(e, index, fill)
    f = y.copy()
    f = nbrt.add_into(f, g, x, index)
    return a, b, c, d, e, f


@pytest.mark.parametrize("index", SLICES, ids=str)
def test_slice_helpers_give_numpys_values(index) -> None:
    rng = np.random.default_rng(3)
    y, x = rng.standard_normal(8), rng.standard_normal(8)
    g = rng.standard_normal(len(y[index]))
    a, b, c, d, e, f = _helpers(y, g, x, index, 2.5)
    zeros = np.zeros(8)
    zeros[index] = g
    d0, e0 = y.copy(), y.copy()
    d0[index] = g
    e0[index] = 2.5
    assert a.tolist() == (y + zeros).tolist() == f.tolist()
    assert b.tolist() == zeros.tolist()
    assert c.tolist() == y[index].tolist() and c.flags.c_contiguous
    assert d.tolist() == d0.tolist() and e.tolist() == e0.tolist()


@numba.njit
def _set_overlapping(u):
    nbrt.setslice(u, slice(1, None), u[:-1])
    return u


def test_a_slice_written_from_an_overlapping_view_reads_it_first() -> None:
    u = np.arange(5.0)
    expected = u.copy()
    expected[1:] = expected[:-1].copy()
    assert _set_overlapping(u).tolist() == expected.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0]


def test_heat_and_spring_run_fused() -> None:
    from benchmarks.problems.loops import heat, spring

    rng = np.random.default_rng(5)
    cases = [
        (heat, (np.sin(np.linspace(0.0, 3.0, 12)), 0.2, 15), (0,)),
        (
            spring,
            (np.arange(5.0), 0.1 * rng.standard_normal(5), np.ones(4), 9, 0.01, 0.1),
            (0, 1, 2),
        ),
    ]
    for fn, args, wrt in cases:
        before = dict(numba_jit.stats)
        with warnings.catch_warnings():
            warnings.simplefilter("error", adgen.BackendWarning)
            got = adgen.grad(fn, wrt=wrt, backend="numba", strict=True)(*args)
        assert numba_jit.stats["fused"] == before["fused"] + 1
        assert numba_jit.stats["unfused"] == before["unfused"]
        expected = adgen.grad(fn, wrt=wrt)(*args)
        for a, b in zip(
            got if isinstance(got, tuple) else (got,),
            expected if isinstance(expected, tuple) else (expected,),
        ):
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-300)


def test_the_disk_cache_keeps_the_fused_text(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new process reads the texts made for the arguments' kinds: no NumPy run to sample."""
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ADGEN_DISK_CACHE", "1")
    runs = []

    def counted(x, w):
        runs.append(1)
        return scaled(x, w)

    x, w = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, 2.0])
    first = _code(SCALED, scaled)
    np.testing.assert_array_equal(first(x, w), scaled(x, w))
    assert "nbrt.fusable" in first.text and list(tmp_path.glob("numba/*.prep.json"))
    again = numba_jit.NumbaCode(NumbaSource("scaled", SCALED), counted, None, False)
    np.testing.assert_array_equal(again(x, w), scaled(x, w))
    assert again.text == first.text and not runs  # (read, not sampled)
    other = numba_jit.NumbaCode(NumbaSource("scaled", SCALED), counted, None, False)
    np.testing.assert_array_equal(other(x, 2.0), scaled(x, 2.0))  # (other kinds: sampled)
    assert runs
