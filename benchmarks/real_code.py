"""Real code as written, differentiated by adgen, autograd and JAX: gradient times.

Run: python benchmarks/real_code.py [--repeat 9] [--quick]

Two programs of the real-code corpus (tests/real_code/), each a user's program that
nobody wrote for a particular AD tool: ``fluid`` (2-D advection-diffusion steps with
``np.roll`` stencils on a reshaped flat state) and ``lstm`` (an LSTM whose states are kept
in Python lists, one grown by ``hs = hs + [h]``). autograd and JAX get the same source
with only its import line changed (``import autograd.numpy as np``, ``import jax.numpy as
np``), the way their users port code; JAX's gradient is ``jax.jit(jax.grad(f))`` with the
non-array arguments static. All gradients are checked against adgen's first (relative
error printed). Times are medians of interleaved calls after a warm-up (compilation
excluded for every tool), one BLAS thread, float64. The LSTM is timed at several lengths
to show how each tool's cost grows with the number of steps.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy (and any BLAS) is loaded
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "real_code"
sys.path.insert(0, str(ROOT / "tests"))

import adgen  # noqa: E402


def ported(name: str, numpy_module: str) -> types.ModuleType:
    """The corpus program ``name`` with ``import numpy as np`` changed to ``numpy_module``."""
    source = (CORPUS / f"{name}.py").read_text()
    assert "import numpy as np\n" in source
    module = types.ModuleType(f"{name}_{numpy_module.replace('.', '_')}")
    module.__file__ = str(CORPUS / f"{name}.py")
    code = compile(
        source.replace("import numpy as np\n", f"import {numpy_module} as np\n"),
        module.__file__,
        "exec",
    )
    exec(code, module.__dict__)
    return module


def tools(name: str, static: tuple[int, ...]) -> dict[str, Callable[..., Any]]:
    """The gradient of the program's objective w.r.t. its first argument, per tool."""
    program = __import__(f"real_code.{name}", fromlist=["objective"])
    out: dict[str, Callable[..., Any]] = {"adgen": adgen.grad(program.objective)}
    try:
        import autograd

        out["autograd"] = autograd.grad(ported(name, "autograd.numpy").objective)
    except ImportError:
        pass
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        jitted = jax.jit(jax.grad(ported(name, "jax.numpy").objective), static_argnums=static)
        out["jax.jit"] = jitted
    except ImportError:
        pass
    return out


def _leaves(tree: Any) -> list[np.ndarray]:
    if isinstance(tree, (list, tuple)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [np.asarray(tree)]


def _block(value: Any) -> Any:
    for leaf in _leaves(value):
        getattr(leaf, "block_until_ready", lambda: None)()
    return value


def timed(
    grads: dict[str, Callable[..., Any]], args: tuple[Any, ...], repeat: int
) -> dict[str, float]:
    """Check every tool's gradient against adgen's, then median seconds per tool."""
    reference = _leaves(grads["adgen"](*args))
    for tool, g in grads.items():
        got = _leaves(_block(g(*args)))
        err = max(
            float(np.max(np.abs(a - np.asarray(b))) / (np.max(np.abs(a)) + 1e-300))
            for a, b in zip(reference, got)
        )
        if err > 1e-8:
            raise AssertionError(f"{tool}: gradient differs from adgen's (relative {err:.1e})")
    samples: dict[str, list[float]] = {tool: [] for tool in grads}
    for _ in range(repeat):
        for tool, g in grads.items():
            start = time.perf_counter()
            _block(g(*args))
            samples[tool].append(time.perf_counter() - start)
    return {tool: statistics.median(s) for tool, s in samples.items()}


def row(label: str, times: dict[str, float], tool_names: list[str]) -> str:
    cells = [f"{times[t] * 1e3:.2f} ms" if t in times else "—" for t in tool_names]
    ratios = [f"{times[t] / times['adgen']:.2f}" for t in tool_names[1:] if t in times]
    return f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |"


def main(argv: list[str] | None = None) -> int:
    """Measure and print the tables."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 repeats")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    lstm = __import__("real_code.lstm", fromlist=["make_args"])
    rng = np.random.default_rng(0)
    side = 16 if args.quick else 64
    grid = (side, side)
    fluid_args = (
        rng.normal(size=side * side),
        np.array([0.3, -0.2]),
        0.05,
        grid,
        20,
        0.1 * rng.normal(size=side * side),
    )
    cases: list[tuple[str, str, tuple[int, ...], tuple[Any, ...]]] = [
        (f"fluid {side}x{side}, 20 steps", "fluid", (3, 4), fluid_args)
    ]
    for steps in (8, 16) if args.quick else (32, 64, 128):
        cases.append(
            (
                f"lstm hidden 32, {steps} steps",
                "lstm",
                (),
                lstm.make_args(steps=steps, vocab=20, hidden=32),
            )
        )
    names = ["adgen", "autograd", "jax.jit"]
    print(
        f"gradient of real code as written (NumPy {np.__version__}, one BLAS thread, "
        f"float64, median of {repeat} interleaved calls)\n"
    )
    print("| program | " + " | ".join(names) + " | autograd / adgen | jax.jit / adgen |")
    print("| --- | " + " | ".join("---:" for _ in names) + " | ---: | ---: |")
    for label, name, static, case_args in cases:
        grads = tools(name, static)
        print(row(label, timed(grads, case_args, repeat), names), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
