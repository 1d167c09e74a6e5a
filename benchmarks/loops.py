"""Loops over floats and small arrays: the primal, adgen's NumPy backend, its Numba backend.

Run: python benchmarks/loops.py [--repeat 7] [--quick] [--no-load]

The loop problems of issue 37: a leapfrog orbit over Python floats, RK4 of the Lorenz system
(floats), a spring chain of 64 masses (300 Euler steps), a small tanh RNN, an explicit heat
equation written with an in-place slice write, the ADBench LSTM (2 layers, 14 wide, 40
steps). Each column is a median of interleaved calls after a warm-up (compilation excluded),
one process, one BLAS thread, float64; every gradient is checked against the NumPy
backend's (rtol 1e-12).

``compile`` is the first call of ``backend="numba"`` in this process (reading, deriving,
rewriting and compiling); ``cached load`` the first call in a new process when adgen's disk
cache holds the code compiled (``ADGEN_DISK_CACHE=1``; ``--no-load`` skips it). ``ran`` says
whether Numba's code ran or adgen fell back to the NumPy code (and why). ``jax.jit`` is the
same problem written for JAX as its users would (``benchmarks/peers/jax_loops.py``: time loops
as ``lax.scan``), timed after compilation and checked against adgen's gradient (rtol 1e-9:
other summation orders); it needs the bench extra (``--no-jax`` skips it).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy (and any BLAS) is loaded

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import adgen  # noqa: E402
from benchmarks.harness import interleaved  # noqa: E402
from benchmarks.problems import lstm as lstm_problem  # noqa: E402
from benchmarks.problems.loops import heat, lorenz, orbit, rnn, spring  # noqa: E402


def problems() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...], tuple[int, ...]]]:
    """name -> (function, arguments, wrt)."""
    rng = np.random.default_rng(0)
    n = 64
    c, b = 41, 14  # 40 steps, 14 wide
    lstm_args = (
        rng.uniform(-0.5, 0.5, (4, 4 * b)),
        rng.uniform(-0.5, 0.5, (3, b)),
        rng.uniform(-0.5, 0.5, (4, b)),
        rng.uniform(0.0, 1.0, (c, b)),
    )
    return {
        "orbit, floats, 200 steps": (orbit, (1.0, 0.0, 0.0, 1.2, 0.01, 200), (0, 1, 2, 3)),
        "RK4 Lorenz, floats, 1000 steps": (
            lorenz,
            (10.0, 28.0, 8.0 / 3.0, 1.0, 1.0, 1.0, 0.001, 1000),
            (0, 1, 2),
        ),
        "spring chain, 64 masses, 300 steps": (
            spring,
            (
                np.arange(n, dtype=float) + 0.1 * rng.standard_normal(n),
                0.1 * rng.standard_normal(n),
                rng.uniform(0.5, 2.0, n - 1),
                300,
                0.01,
                0.1,
            ),
            (0, 1, 2),
        ),
        "tanh RNN, 16 wide, 50 steps": (
            rnn,
            (
                0.3 * rng.standard_normal((16, 16)),
                0.3 * rng.standard_normal((16, 8)),
                0.1 * rng.standard_normal(16),
                rng.standard_normal((50, 8)),
                np.zeros(16),
            ),
            (0, 1, 2),
        ),
        "heat equation, 200 points, 500 steps": (
            heat,
            (np.sin(np.linspace(0.0, np.pi, 200)), 0.2, 500),
            (0,),
        ),
        "LSTM, 2 layers, 14 wide, 40 steps": (lstm_problem.lstm, lstm_args, (0, 1)),
    }


def first_call(name: str) -> float:
    """Seconds of the first ``backend="numba"`` gradient call of ``name`` in this process."""
    fn, args, wrt = problems()[name]
    start = time.perf_counter()
    adgen.grad(fn, wrt=wrt, backend="numba")(*args)
    return time.perf_counter() - start


def cached_load(name: str) -> float:
    """The first call in a fresh process whose disk cache holds the compiled code."""
    with tempfile.TemporaryDirectory() as where:
        env = dict(os.environ, ADGEN_DISK_CACHE="1", ADGEN_CACHE_DIR=where)
        command = [sys.executable, __file__, "--first-call", name]
        times = []
        for _ in range(2):  # the first fills the cache, the second loads it
            out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            times.append(float(out.stdout.strip().splitlines()[-1]))
        return times[1]


def jax_call(
    fn: Callable[..., Any], args: tuple[Any, ...], wrt: tuple[int, ...], expected: Any
) -> Any:
    """The jitted JAX gradient of the problem ``fn`` (its JAX form has ``fn``'s name in
    ``benchmarks/peers/jax_loops.py``) as a thunk, checked; None without JAX."""
    try:
        from benchmarks.peers import jax_loops
    except ImportError:
        return None
    call = jax_loops.value_and_grad(fn.__name__, args, wrt)
    _, grads = call()
    for g, e in zip(grads, expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-9, atol=1e-12)
    return call


def measure(name: str, repeat: int, min_sample: float, load: bool, jax: bool) -> dict[str, Any]:
    from adgen.backend import numba_jit

    fn, args, wrt = problems()[name]
    fallbacks = numba_jit.stats["fallbacks"] + numba_jit.stats["runtime_fallbacks"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", adgen.BackendWarning)
        start = time.perf_counter()
        numba_grad = adgen.grad(fn, wrt=wrt, backend="numba")
        got = numba_grad(*args)
        compile_s = time.perf_counter() - start
    numpy_grad = adgen.grad(fn, wrt=wrt)
    expected = numpy_grad(*args)
    pairs = zip(*(v if isinstance(v, tuple) else (v,) for v in (got, expected)))
    for g, e in pairs:
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-300)
    fell = numba_jit.stats["fallbacks"] + numba_jit.stats["runtime_fallbacks"] > fallbacks
    why = str(caught[0].message).split(": ", 1)[-1] if caught else ""
    calls = {
        "primal": lambda: fn(*args),
        "numpy": lambda: numpy_grad(*args),
        "numba": lambda: numba_grad(*args),
    }
    jitted = jax_call(fn, args, wrt, expected) if jax else None
    if jitted is not None:
        calls["jax"] = jitted
    times = interleaved(calls, repeat, min_sample)
    return {
        "name": name,
        **times,
        "compile": compile_s,
        "load": cached_load(name) if load and not fell else None,
        "ran": ("NumPy code: " + why) if fell else "Numba",
    }


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="fewer, shorter samples")
    parser.add_argument("--no-load", action="store_true", help="skip the cached-load runs")
    parser.add_argument("--no-jax", action="store_true", help="skip jax.jit")
    parser.add_argument("--only", default="", help="the problems whose name has this text")
    parser.add_argument("--first-call", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.first_call:
        print(first_call(opts.first_call))
        return
    repeat, min_sample = (3, 0.02) if opts.quick else (opts.repeat, 0.1)
    print(
        "| gradient of | primal | numpy backend | numba backend | jax.jit | numpy / numba | "
        "numba / primal | numba / jax.jit | compile | cached load | ran |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name in problems():
        if opts.only not in name:
            continue
        r = measure(name, repeat, min_sample, not opts.no_load, not opts.no_jax)
        jax_time = r.get("jax")
        ratio = f"{r['numba'] / jax_time:.2f}x" if jax_time else "-"
        print(
            f"| {r['name']} | {fmt(r['primal'])} | {fmt(r['numpy'])} | {fmt(r['numba'])} | "
            f"{fmt(jax_time)} | {r['numpy'] / r['numba']:.1f}x | "
            f"{r['numba'] / r['primal']:.2f}x | {ratio} | "
            f"{fmt(r['compile'])} | {fmt(r['load'])} | {r['ran']} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
