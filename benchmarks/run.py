"""Run adgen's benchmark suite: ``python benchmarks/run.py [--quick] [--problems/--tools ...]``.

Writes ``benchmarks/results/results.md`` and ``results.png`` and prints the table.
Method and the latest numbers: ``docs/performance.md``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy (and any BLAS) is loaded
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks.harness import TOOLS, chart, markdown, run_suite  # noqa: E402
from benchmarks.problems import PROBLEMS  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small size, few repeats")
    parser.add_argument("--tiny", action="store_true", help="the smoke-test sizes (no timing use)")
    parser.add_argument("--problems", nargs="+", choices=list(PROBLEMS), help="default: all")
    parser.add_argument("--tools", nargs="+", choices=list(TOOLS), help="default: all")
    parser.add_argument("--repeats", type=int, help="timed samples per tool (default 15; quick 3)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="output directory")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run, write results.md and results.png, print the table."""
    args = parse(argv)
    size = "tiny" if args.tiny else "quick" if args.quick else "full"
    repeats = args.repeats or (3 if size != "full" else 15)
    min_sample = 0.001 if size != "full" else 0.01
    start = time.perf_counter()
    report = run_suite(args.problems, args.tools, size, repeats, min_sample)
    elapsed = time.perf_counter() - start
    flags = " --quick" if args.quick else " --tiny" if args.tiny else ""
    header = (
        "# adgen benchmark results\n\n"
        f"`python benchmarks/run.py{flags}`"
        f" — {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}, "
        f"NumPy {np.__version__}, {platform.machine()}, one BLAS thread, float64, "
        f"median of {repeats} interleaved repeats (warm-up excluded), {elapsed:.0f} s in all.\n\n"
        "time = one value-and-gradient call (adgen-jvp: one JVP along a random direction; "
        "primal: the NumPy function alone). A tool whose gradient does not match the "
        "hand-written one is marked MISMATCH and not timed."
    )
    args.out.mkdir(parents=True, exist_ok=True)
    note = chart(report.rows, args.out / "results.png")
    if note:
        report.notes.append(note)
    text = markdown(report, header)
    (args.out / "results.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    written = "results.md" if note else "results.md and results.png"
    print(f"\nwrote {written} in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
