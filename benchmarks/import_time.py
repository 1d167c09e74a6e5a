"""How long ``import adgen`` takes on top of ``import numpy``, in fresh processes.

Run: python benchmarks/import_time.py [--runs 15] [--no-bytecode]

Starts ``python -c "import numpy"`` and ``python -c "import adgen"`` alternately (so that
the machine's load affects both alike), ``--runs`` times each, with ``OMP_NUM_THREADS=1``,
and prints the medians, the median of the per-pair differences (what adgen adds) and their
ratio. By default the modules' bytecode is cached (in a temporary ``PYTHONPYCACHEPREFIX``,
written by a first untimed run), as for an installed package; ``--no-bytecode``
compiles adgen's source in every run (a copy of it without ``__pycache__``, and
``PYTHONDONTWRITEBYTECODE``; NumPy's bytecode is read as usual). The adgen measured is
the one next to this script (``src/adgen``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def run(statement: str, env: dict[str, str]) -> float:
    """Seconds one fresh ``python -c statement`` takes, start to exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", statement], env=env, check=True)
    return time.perf_counter() - start


def environment(bytecode: bool, tmp: str) -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(SRC))
    env.pop("PYTHONPYCACHEPREFIX", None)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
    else:  # (a copy: the source tree may hold bytecode written by other runs)
        shutil.copytree(
            SRC / "adgen", Path(tmp, "src", "adgen"), ignore=shutil.ignore_patterns("__pycache__")
        )
        env["PYTHONPATH"] = os.path.join(tmp, "src")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--no-bytecode", action="store_true", help="compile adgen's source in every run"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(not args.no_bytecode, tmp)
        where = subprocess.run(  # (also writes the bytecode cache, if any)
            [sys.executable, "-c", "import adgen; print(adgen.__file__)"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        assert where.startswith(env["PYTHONPATH"]), where
        numpy_times, adgen_times = [], []
        for _ in range(args.runs):
            numpy_times.append(run("import numpy", env))
            adgen_times.append(run("import adgen", env))
    added = [a - n for a, n in zip(adgen_times, numpy_times, strict=True)]
    numpy_median = statistics.median(numpy_times)
    adgen_median = statistics.median(adgen_times)
    mode = "compiled every run" if args.no_bytecode else "bytecode cached"
    print(f"adgen: {SRC / 'adgen'} ({mode}, {args.runs} runs each, interleaved)")
    print(f"import numpy  {numpy_median * 1000:7.0f} ms (median)")
    print(f"import adgen  {adgen_median * 1000:7.0f} ms (median)")
    print(
        f"added by adgen {statistics.median(added) * 1000:6.0f} ms (median of the differences), "
        f"x{adgen_median / numpy_median:.2f} numpy's time"
    )


if __name__ == "__main__":
    main()
