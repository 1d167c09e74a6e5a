"""adgen's gradients on Dask arrays: time against NumPy in memory, peak memory out of core.

Run: python benchmarks/dask_gradients.py [--rows 4000000] [--repeat 7] [--out-of-core 10000000]

1. **In memory.** The gradient of a logistic-regression loss over a ``rows x 20`` design
   matrix, by adgen on NumPy arrays and by adgen on the same data as a Dask array (chunks of
   ``--chunk`` rows, Dask's threaded scheduler with two threads, the data persisted), each
   checked against the other. Times are medians of interleaved runs, one BLAS thread per
   worker; the ratio Dask / NumPy is the figure of merit (goal: at most 1.5 at 4e6 rows).
2. **Out of core.** The same gradient over ``--out-of-core`` rows generated chunk by chunk
   by Dask (never whole in memory): the process's peak resident memory is reported next to
   the size of the design matrix it reduced over.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy (and any BLAS) is loaded

import argparse  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import adgen  # noqa: E402

D = 20


def loss(w, X, y, lam):
    """L2-regularised logistic regression, labels in {-1, 1}."""
    z = X @ w
    return np.mean(np.logaddexp(0.0, -y * z)) + 0.5 * lam * np.sum(w * w)


def peak_rss_mib() -> float:
    """The process's peak resident set size so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def in_memory(rows: int, chunk: int, repeat: int) -> dict[str, Any]:
    import dask
    import dask.array as da

    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows, D))
    y = np.sign(X @ np.linspace(-1.0, 1.0, D) + rng.standard_normal(rows))
    w = rng.standard_normal(D) * 0.1
    Xd, yd = dask.persist(da.from_array(X, chunks=(chunk, D)), da.from_array(y, chunks=chunk))
    grad = adgen.grad(loss)

    def on_numpy() -> Any:
        return grad(w, X, y, 1e-3)

    def on_dask() -> Any:
        return grad(w, Xd, yd, 1e-3).compute()

    with dask.config.set(scheduler="threads", num_workers=2):
        want, got = on_numpy(), on_dask()  # warm-up: the derivative is made once
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)
        times: dict[str, list[float]] = {"numpy": [], "dask": []}
        for _ in range(repeat):
            for name, run in (("numpy", on_numpy), ("dask", on_dask)):
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
    numpy_s, dask_s = statistics.median(times["numpy"]), statistics.median(times["dask"])
    return {"rows": rows, "numpy_s": numpy_s, "dask_s": dask_s, "ratio": dask_s / numpy_s}


def out_of_core(rows: int, chunk: int) -> dict[str, Any]:
    import dask
    import dask.array as da

    before = peak_rss_mib()
    X = da.random.default_rng(0).standard_normal((rows, D), chunks=(chunk, D))
    y = da.sign(X @ np.linspace(-1.0, 1.0, D) + da.random.default_rng(1).standard_normal(rows))
    w = np.full(D, 0.05)
    start = time.perf_counter()
    with dask.config.set(scheduler="threads", num_workers=2):
        g = adgen.grad(loss)(w, X, y, 1e-3).compute()
    seconds = time.perf_counter() - start
    assert g.shape == (D,) and np.all(np.isfinite(g))
    return {
        "rows": rows,
        "matrix_mib": rows * D * 8 / 2**20,
        "peak_rss_mib": peak_rss_mib(),
        "rss_before_mib": before,
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--chunk", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--out-of-core", type=int, default=10_000_000)
    args = parser.parse_args(argv)
    if args.out_of_core:  # first: the peak memory is this process's, before 1. allocates
        o = out_of_core(args.out_of_core, args.chunk)
        print(
            f"out of core, {o['rows']:,} x {D} ({o['matrix_mib']:.0f} MiB design matrix): "
            f"{o['seconds']:.1f} s, peak RSS {o['peak_rss_mib']:.0f} MiB "
            f"(before: {o['rss_before_mib']:.0f} MiB)"
        )
    r = in_memory(args.rows, args.chunk, args.repeat)
    print(
        f"in memory, {r['rows']:,} x {D}: NumPy {r['numpy_s'] * 1e3:.1f} ms, "
        f"Dask (2 threads) {r['dask_s'] * 1e3:.1f} ms, ratio {r['ratio']:.2f}"
    )


if __name__ == "__main__":
    main()
