"""``backend="numba"`` (adgen.backend.numba_jit): the same answers as the NumPy backend, on
loop programs Numba compiles (``strict=True``: a fallback would fail the test) and on a
sample of the registry's rule cases; the NumPy code, with one warning, wherever Numba cannot
compile the code (``strict=True`` raises instead).

Numba's ``exp``/``tanh``/``sqrt`` are LLVM's and libm's, NumPy's its own SIMD loops, and its
``np.sum`` adds in order where NumPy adds pairwise: results may differ in the last bits, so
values are compared at ``rtol=1e-12``.
"""

from __future__ import annotations

import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

import adgen
from adgen.backend import numba_jit

numba = pytest.importorskip("numba")

RTOL = 1e-12

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.problems.loops import heat, lorenz, orbit, rnn, spring  # noqa: E402


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def gated(w, u, xs, h):
    """A one-layer gated recurrence as an LSTM writes it: slices of the parameters (hoisted out
    of the loop, saved once) and names first bound inside the loop (``None`` before it: typed
    placeholders, or Numba cannot type the tapes that save them)."""
    b = h.shape[0]
    total = 0.0
    for t in range(xs.shape[0]):
        gate = 1.0 / (1.0 + np.exp(-(xs[t] * w[:b] + u[:b])))
        h = gate * np.tanh(h * w[b:] + u[b:])
        total = total + np.sum(h * h)
    return total


PROGRAMS = {
    "orbit": (orbit, lambda r: (1.0, 0.0, 0.0, 1.0, 0.01, 100), (0, 1, 2, 3)),
    "lorenz": (lorenz, lambda r: (10.0, 28.0, 8.0 / 3.0, 1.0, 1.0, 1.0, 0.01, 300), (0, 1, 2)),
    "spring": (
        spring,
        lambda r: (np.arange(6.0) + 0.1 * r.standard_normal(6), np.zeros(6), r.uniform(1, 2, 5)),
        (0, 1, 2),
    ),
    "rnn": (
        rnn,
        lambda r: (
            0.5 * r.standard_normal((4, 4)),
            0.5 * r.standard_normal((4, 3)),
            0.1 * r.standard_normal(4),
            r.standard_normal((7, 3)),
            np.zeros(4),
        ),
        (0, 1, 2),
    ),
    "heat": (heat, lambda r: (np.sin(np.linspace(0.0, 3.0, 16)), 0.2, 25), (0,)),
    "gated": (
        gated,
        lambda r: (
            r.standard_normal(8),
            r.standard_normal(8),
            r.standard_normal((5, 4)),
            np.zeros(4),
        ),
        (0, 1),
    ),
}
EXTRA = {"spring": (20, 0.01, 0.1)}


def _args(name: str) -> tuple:
    fn, make, _ = PROGRAMS[name]
    return tuple(make(_rng(name))) + EXTRA.get(name, ())


def _close(a, b) -> None:
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
        return
    assert np.shape(a) == np.shape(b)
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-300)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_loop_programs_compile_and_agree(name: str) -> None:
    fn, _, wrt = PROGRAMS[name]
    args = _args(name)
    before = dict(numba_jit.stats)
    expected = adgen.value_and_grad(fn, wrt=wrt)(*args)
    got = adgen.value_and_grad(fn, wrt=wrt, backend="numba", strict=True)(*args)
    _close(got, expected)
    again = adgen.value_and_grad(fn, wrt=wrt, backend="numba", strict=True)(*args)
    _close(again, expected)
    # compiled by Numba (strict: no fallback at compile time), and no call fell back
    assert numba_jit.stats["compiled"] == before["compiled"] + 1
    assert numba_jit.stats["runtime_fallbacks"] == before["runtime_fallbacks"]


def test_grad_jvp_vjp_and_differentiate_take_the_backend() -> None:
    args = _args("lorenz")
    tangents = (1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, None)
    _close(
        adgen.jvp(lorenz, args, tangents, backend="numba", strict=True),
        adgen.jvp(lorenz, args, tangents),
    )
    out, pullback = adgen.vjp(orbit, *_args("orbit"), backend="numba", strict=True)
    out0, pullback0 = adgen.vjp(orbit, *_args("orbit"))
    assert out == out0
    _close(pullback(2.0)[:4], pullback0(2.0)[:4])
    g = adgen.grad(spring, wrt=(0, 2), backend="numba", strict=True)(*_args("spring"))
    _close(g, adgen.grad(spring, wrt=(0, 2))(*_args("spring")))
    decorated = adgen.differentiate(orbit, wrt=(0, 1), backend="numba", strict=True)
    _close(decorated.grad(*_args("orbit")), adgen.grad(orbit, wrt=(0, 1))(*_args("orbit")))


def test_the_environment_variable_chooses_numba(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADGEN_BACKEND", "numba")
    g = adgen.grad(rnn, wrt=(0, 1, 2))
    assert g.backend == "numba"
    _close(g(*_args("rnn")), adgen.grad(rnn, wrt=(0, 1, 2), backend="numpy")(*_args("rnn")))
    monkeypatch.setenv("ADGEN_BACKEND", "fortran")
    with pytest.raises(adgen.ArgumentError, match="backend must be one of"):
        adgen.grad(rnn)


def test_source_shows_the_numba_form() -> None:
    text = adgen.source(spring, args=_args("spring"), wrt=(0, 1, 2), backend="numba")
    assert "stack" not in text and "reversed(" not in text and "del " not in text
    assert "tape_" in text and "nbrt.add_at(" in text  # (y + getitem_vjp(g, x, i), one helper)
    assert "# adjoint of line" in text  # the user's lines quoted, as in the NumPy code


def _scipy_loop(x, n):
    import scipy.special

    for _ in range(n):
        x = scipy.special.expit(x) * 1.5
    return np.sum(x)


def test_fallback_warns_once_and_gives_the_numpy_answer() -> None:
    pytest.importorskip("scipy")
    x = np.linspace(-1.0, 1.0, 5)
    expected = adgen.grad(_scipy_loop)(x, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = adgen.grad(_scipy_loop, backend="numba")(x, 3)
        second = adgen.grad(_scipy_loop, backend="numba")(x, 3)
    ours = [w for w in caught if issubclass(w.category, adgen.BackendWarning)]
    assert len(ours) == 1
    message = str(ours[0].message)
    assert "scipy" in message and "_scipy_loop" in message
    assert f":{_scipy_loop.__code__.co_firstlineno + 4}:" in message  # the user's line
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, expected)
    with pytest.raises(adgen.BackendError, match="scipy"):
        adgen.grad(_scipy_loop, backend="numba", strict=True)(x, 3)


def _einsum_loop(a, b):
    total = 0.0
    for _ in range(3):
        total = total + np.einsum("ij,jk->", a, b)
    return total


def test_a_helper_without_numba_form_falls_back_when_rewritten() -> None:
    a, b = np.ones((2, 3)), np.full((3, 2), 0.5)
    with pytest.warns(adgen.BackendWarning, match="rt.einsum_vjp"):
        got = adgen.grad(_einsum_loop, backend="numba")(a, b)
    np.testing.assert_array_equal(got, adgen.grad(_einsum_loop)(a, b))


def _keepdims_loop(a):
    total = 0.0
    for _ in range(3):
        a = a - np.sum(a * a, axis=1, keepdims=True) * 0.1
        total = total + np.sum(a)
    return total


def test_a_numpy_form_numba_lacks_falls_back_at_compile_time() -> None:
    a, da = np.linspace(0.0, 1.0, 6).reshape(2, 3), np.full((2, 3), 0.25)
    with pytest.warns(adgen.BackendWarning, match="Numba cannot compile it"):
        got = adgen.jvp(_keepdims_loop, (a,), (da,), backend="numba")
    _close(got, adgen.jvp(_keepdims_loop, (a,), (da,)))
    with pytest.raises(adgen.BackendError, match="Numba cannot compile it"):
        adgen.jvp(_keepdims_loop, (a,), (2 * da,), backend="numba", strict=True)


def _divides(x, n):
    for _ in range(n):
        x = 1.0 / (x - 1.0)
    return x


def test_errors_at_run_time_are_the_numpy_codes() -> None:
    """Numba's code raises (Python's error model) where NumPy's may not: the call runs the
    NumPy code, whose answer -- or error, naming the user's line -- is the one returned."""
    g = adgen.grad(_divides, backend="numba", strict=True)
    assert g(3.0, 3) == adgen.grad(_divides)(3.0, 3)
    before = numba_jit.stats["runtime_fallbacks"]
    with pytest.raises(ZeroDivisionError) as numpy_error:
        adgen.grad(_divides)(2.0, 3)
    with pytest.raises(ZeroDivisionError) as numba_error:
        g(2.0, 3)
    assert numba_jit.stats["runtime_fallbacks"] > before
    assert str(numba_error.value) == str(numpy_error.value)


def test_without_numba_the_numpy_code_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numba_jit, "available", lambda: False)

    def cube(x):
        return x * x * x

    with pytest.warns(adgen.BackendWarning, match="Numba is not installed"):
        assert adgen.grad(cube, backend="numba")(2.0) == 12.0
    with pytest.raises(adgen.BackendError, match="Numba is not installed"):
        adgen.grad(cube, backend="numba", strict=True)(2.0)


def test_compiled_code_is_cached_on_disk(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ADGEN_DISK_CACHE", "1")

    def decay(x, rate, n):
        for _ in range(n):
            x = x - rate * x * x
        return x

    got = adgen.grad(decay, wrt=(0, 1), backend="numba", strict=True)(0.5, 0.1, 20)
    _close(got, adgen.grad(decay, wrt=(0, 1))(0.5, 0.1, 20))
    sources = list((tmp_path / "numba").glob("*.py"))
    assert len(sources) == 1
    assert "tape_" in sources[0].read_text()
    assert list((tmp_path / "numba" / "__pycache__").glob("*.nbi"))  # Numba's index


# -- a sample of the registry's rule cases -----------------------------------------------------


def _sample() -> list:
    from registry_cases import registry_cases

    cases = [c for c in registry_cases() if c.dtype is not np.float32 and not c.complex_args]
    return cases[::40]


def test_registry_sample_agrees_under_both_backends() -> None:
    from registry_cases import case_function

    compiled = 0
    for case in _sample():
        fn = case_function(case)
        args = case.draw_args()
        try:
            out, pullback = adgen.vjp(fn, *args)
        except adgen.AdgenError:
            continue  # (a case vjp refuses is not for this comparison)
        cotangent = np.ones_like(out) if np.ndim(out) else 1.0
        if isinstance(out, (tuple, list)):
            continue
        expected = pullback(cotangent)
        before = numba_jit.stats["compiled"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", adgen.BackendWarning)
            out_n, pullback_n = adgen.vjp(fn, *args, backend="numba")
            got = pullback_n(cotangent)
        compiled += numba_jit.stats["compiled"] - before
        for g, e in zip(got, expected):
            assert (g is None) == (e is None), case.id
            if e is not None:
                np.testing.assert_allclose(g, e, rtol=RTOL, atol=1e-300, err_msg=case.id)
    assert compiled >= 5  # the sample is not all fallbacks
