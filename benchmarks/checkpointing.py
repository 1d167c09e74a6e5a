"""Checkpointed reverse mode against the plain one: peak memory and time of a long loop's gradient.

Run: python benchmarks/checkpointing.py [--steps 10000] [--size 100] [--repeat 7]

The function is an explicit Euler integrator of a small nonlinear ODE on a vector of
``size`` floats, ``steps`` steps long. Its gradient is computed by adgen's reverse mode
three ways: the plain loop (every step's values saved), ``adgen.checkpoint(range(n))``
(segments of ceil(sqrt(n)) steps) and ``adgen.checkpoint(range(n), every=1000)``. All
three must give the same gradient (checked exactly). Peak memory is measured with
``tracemalloc`` in this one process (each variant once, after a warm-up call);
times are medians of interleaved runs, one BLAS thread.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy (and any BLAS) is loaded

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import adgen  # noqa: E402


def euler(x, steps):
    """``steps`` Euler steps of dx/dt = tanh(x) - x^3 + 0.05 cos(3x); the squared norm."""
    for _ in range(steps):
        x = x + 0.001 * (np.tanh(x) - x * x * x + 0.05 * np.cos(3.0 * x))
    return np.sum(x * x)


def euler_checkpointed(x, steps):
    """:func:`euler` with its loop checkpointed (segments of about sqrt(steps) steps)."""
    for _ in adgen.checkpoint(range(steps)):
        x = x + 0.001 * (np.tanh(x) - x * x * x + 0.05 * np.cos(3.0 * x))
    return np.sum(x * x)


def euler_every_1000(x, steps):
    """:func:`euler` checkpointed with segments of 1000 steps."""
    for _ in adgen.checkpoint(range(steps), every=1000):
        x = x + 0.001 * (np.tanh(x) - x * x * x + 0.05 * np.cos(3.0 * x))
    return np.sum(x * x)


VARIANTS: dict[str, Callable[..., Any]] = {
    "plain loop": euler,
    "checkpoint (sqrt n)": euler_checkpointed,
    "checkpoint (every=1000)": euler_every_1000,
}


@dataclass
class Result:
    """One variant's measurements."""

    variant: str
    peak_bytes: int
    seconds: float


def peak_memory(g: Callable[..., Any], *args: Any) -> int:
    """Peak bytes allocated (tracemalloc) while ``g(*args)`` runs."""
    gc.collect()
    tracemalloc.start()
    try:
        g(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(steps: int, size: int, repeat: int) -> tuple[list[Result], float]:
    """Check the three gradients agree, then measure each one's peak memory and time; also
    the time of the function itself (a checkpointed gradient runs the loop once more)."""
    x = np.random.default_rng(0).uniform(-1.0, 1.0, size)
    grads = {name: adgen.grad(fn) for name, fn in VARIANTS.items()}
    reference = None
    for name, g in grads.items():  # warm-up: transform, compile, first run
        value = g(x, steps)
        if reference is None:
            reference = value
        elif not np.array_equal(value, reference):
            raise AssertionError(f"{name}: gradient differs from the plain loop's")
    peaks = {name: peak_memory(g, x, steps) for name, g in grads.items()}
    times: dict[str, list[float]] = {name: [] for name in grads}
    primal: list[float] = []
    for _ in range(repeat):  # interleaved, so drifts of the machine hit all variants alike
        for name, g in grads.items():
            start = time.perf_counter()
            g(x, steps)
            times[name].append(time.perf_counter() - start)
        start = time.perf_counter()
        euler(x, steps)
        primal.append(time.perf_counter() - start)
    results = [Result(name, peaks[name], statistics.median(times[name])) for name in grads]
    return results, statistics.median(primal)


def table(results: list[Result]) -> str:
    """A markdown table with ratios to the plain loop."""
    base = results[0]
    lines = [
        "| variant | peak memory | vs plain | time (median) | vs plain |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        lines.append(
            f"| {r.variant} | {r.peak_bytes / 1e6:.2f} MB | {r.peak_bytes / base.peak_bytes:.3f}"
            f" | {r.seconds * 1e3:.1f} ms | {r.seconds / base.seconds:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=100, help="floats in the state vector")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per variant")
    args = parser.parse_args(argv)
    results, primal = measure(args.steps, args.size, args.repeat)
    print(
        f"gradient of {args.steps} Euler steps on {args.size} floats "
        f"(NumPy {np.__version__}, one BLAS thread, median of {args.repeat}):\n"
    )
    print(table(results))
    plain = results[0].seconds
    print(
        f"\nthe function itself: {primal * 1e3:.1f} ms; a checkpointed gradient runs the loop "
        f"once more than the plain one, so its floor is {(plain + primal) / plain:.2f} x plain"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
