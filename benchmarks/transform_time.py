"""How long adgen takes to transform a function: parse + lower + derive + emit + compile.

Run: python benchmarks/transform_time.py [--lines 50] [--repeat 15]

Writes a 50-line straight-line NumPy function to a temporary module, then
times (median of interleaved runs, cache cleared before each) the first
transformation in reverse and in forward mode, a cache hit, and the first
transformation in a new process when the persistent disk cache
(``ADGEN_CACHE_DIR``) already holds the generated source: the function is still
read and lowered (that yields the cache key), derivation and emission are skipped.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import adgen  # noqa: E402
from adgen.backend import cache  # noqa: E402

OPS = [
    "np.sin({a}) * {b}",
    "{a} + {b} * 2.0",
    "np.exp(np.tanh({a})) - {b}",
    "np.sum({a} * {b}, axis=0, keepdims=True) + {a}",
    "np.maximum({a}, {b}) / (1.0 + {b} * {b})",
    "np.sqrt(1.0 + {a} * {a}) * np.cos({b})",
    "{a} @ W + {b}",
]


def make_source(lines: int) -> str:
    body = ["    v0 = x"]
    for i in range(1, lines - 1):
        a, b = f"v{i - 1}", f"v{max(0, i - 3)}"
        body.append(f"    v{i} = " + OPS[i % len(OPS)].format(a=a, b=b))
    body.append(f"    return np.sum(v{lines - 2} * v{lines - 2})")
    return "import numpy as np\n\nW = np.eye(4)\n\n\ndef big(x):\n" + "\n".join(body) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bigmod.py")
        with open(path, "w") as fh:
            fh.write(make_source(args.lines))
        spec = importlib.util.spec_from_file_location("bigmod", path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        fn = mod.big
        n_ir = sum(1 for _ in adgen.trace(fn).function.statements())
        times: dict[str, list[float]] = {"reverse": [], "forward": [], "cache hit": []}
        for _ in range(args.repeat):
            for mode in ("reverse", "forward"):
                cache.clear()
                t0 = time.perf_counter()
                adgen.source(fn, mode=mode)
                times[mode].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            adgen.source(fn, mode="forward")
            times["cache hit"].append(time.perf_counter() - t0)
        disk = os.path.join(tmp, "cache")
        previous = os.environ.get("ADGEN_CACHE_DIR")
        os.environ["ADGEN_CACHE_DIR"] = disk
        try:
            for mode in ("reverse", "forward"):
                cache.clear()
                adgen.source(fn, mode=mode)  # written to disk
                times[f"disk hit, {mode}"] = []
            for _ in range(args.repeat):
                for mode in ("reverse", "forward"):
                    cache.clear()
                    t0 = time.perf_counter()
                    adgen.source(fn, mode=mode)
                    times[f"disk hit, {mode}"].append(time.perf_counter() - t0)
        finally:
            if previous is None:
                del os.environ["ADGEN_CACHE_DIR"]
            else:
                os.environ["ADGEN_CACHE_DIR"] = previous
    print(f"{args.lines}-line function ({n_ir} IR statements), Python {sys.version.split()[0]}:")
    for label, values in times.items():
        print(f"  {label:18s} median {statistics.median(values) * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
