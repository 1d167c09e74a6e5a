"""Jacobians and Hessians: adgen's batched passes against one pass per column, the
hand-written NumPy, jax.jit and autograd.

Run: python benchmarks/jacobians.py [--repeat 15] [--quick] [--keep-freed-memory]

Two computations, the same mathematics in each tool:

* ``glm hessian``: the Hessian of a Poisson GLM's log-likelihood ``sum(y * eta - exp(eta))``,
  ``eta = X @ beta``, ``n = 1000`` rows and ``p`` = 5, 20, 50 coefficients
  (``adgen.hessian``, ``jax.hessian``, ``autograd.hessian``; by hand ``-X.T diag(mu) X``);
* ``map jacobian``: the Jacobian of an elementwise and cumulative-sum map R^n -> R^n,
  n = 10, 50, 200 (``adgen.jacfwd``, ``jax.jacfwd``, ``autograd.jacobian``).

``adgen, one pass per column`` is adgen with ``chunk_size=1``: the forward-mode code run once
per basis vector, as adgen did before its batched mode (:mod:`adgen.modes.batched`). Every
result is checked against adgen's. Times are medians of interleaved calls after a warm-up
(JAX's compilation excluded), one BLAS thread, float64.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy (and any BLAS) is loaded
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import adgen  # noqa: E402
from benchmarks.higher_order import arguments, peers, timed  # noqa: E402


def programs(np: Any) -> dict[str, Callable[..., Any]]:
    """The programs, written once against the NumPy module ``np`` each tool brings."""

    def poisson_loglik(beta, X, y):
        eta = X @ beta
        return np.sum(y * eta - np.exp(eta))

    def cumulative_map(x):
        return np.cumsum(np.sin(x) * x) + x**2 / (1.0 + x**2)

    return {"glm": poisson_loglik, "map": cumulative_map}


def adgen_tools() -> dict[str, Callable[..., Any]]:
    p = programs(np)
    return {"glm": adgen.hessian(p["glm"]), "map": adgen.jacfwd(p["map"])}


def adgen_column_tools() -> dict[str, Callable[..., Any]]:
    p = programs(np)
    return {
        "glm": adgen.hessian(p["glm"], chunk_size=1),
        "map": adgen.jacfwd(p["map"], chunk_size=1),
    }


def by_hand_tools() -> dict[str, Callable[..., Any]]:
    """The derivatives derived on paper, as a user writes them in NumPy."""

    def glm(beta, X, y):
        return -(X.T * np.exp(X @ beta)) @ X

    def map_jacobian(x):
        d = np.sin(x) + x * np.cos(x)  # the cumulative sum's rows: d in the lower triangle
        return np.tril(np.broadcast_to(d, (x.size, x.size))) + np.diag(2.0 * x / (1.0 + x**2) ** 2)

    return {"glm": glm, "map": map_jacobian}


def autograd_tools() -> dict[str, Callable[..., Any]]:
    import autograd
    import autograd.numpy as anp

    p = programs(anp)
    return {"glm": autograd.hessian(p["glm"]), "map": autograd.jacobian(p["map"])}


def jax_tools() -> dict[str, Callable[..., Any]]:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    p = programs(jnp)
    return {"glm": jax.jit(jax.hessian(p["glm"])), "map": jax.jit(jax.jacfwd(p["map"]))}


def operator_costs(repeat: int) -> list[tuple[str, float]]:
    """Each of adgen's operators on the GLM log-likelihood (n = 1000, p = 20) as a multiple
    of one call of the function, timed interleaved with it."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1000, 20)) / np.sqrt(20)
    y = rng.poisson(1.0, size=1000).astype(float)
    beta, v = 0.1 * rng.normal(size=20), rng.normal(size=20)
    f = programs(np)["glm"]
    jvp_ = lambda b, X, y: adgen.jvp(f, (b, X, y), (v, None, None))  # noqa: E731
    _, pullback = adgen.vjp(f, beta, X, y)
    product = adgen.hvp(f)
    calls: dict[str, Callable[..., Any]] = {
        "primal": f,
        "grad": adgen.grad(f),
        "value_and_grad": adgen.value_and_grad(f),
        "jvp (one direction)": jvp_,
        "vjp (pullback made once, applied)": lambda b, X, y: pullback(1.0),
        "hvp": lambda b, X, y: product(b, X, y, v),
        "hessian (20 columns, one batched pass)": adgen.hessian(f),
        "hessian, one pass per column": adgen.hessian(f, chunk_size=1),
        "laplacian": adgen.laplacian(f),
        "jacrev (one result row)": adgen.jacrev(f),
    }
    for fn in calls.values():
        fn(beta, X, y)
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, fn in calls.items():
            start = time.perf_counter()
            fn(beta, X, y)
            samples[name].append(time.perf_counter() - start)
    primal = statistics.median(samples["primal"])
    return [(name, statistics.median(s) / primal) for name, s in samples.items()]


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv, __doc__, 15)
    repeat = args.repeat
    rng = np.random.default_rng(0)
    tools = {
        "adgen": adgen_tools(),
        "adgen, one pass per column": adgen_column_tools(),
        "NumPy by hand": by_hand_tools(),
    }
    tools.update(peers({"autograd": autograd_tools, "jax.jit": jax_tools}))
    names = list(tools)
    cases: list[tuple[str, str, tuple[Any, ...]]] = []
    rows = 100 if args.quick else 1000
    for p in (5, 20) if args.quick else (5, 20, 50):
        X = rng.normal(size=(rows, p)) / np.sqrt(p)
        y = rng.poisson(1.0, size=rows).astype(float)
        cases.append(
            (
                f"Hessian of a Poisson GLM, n = {rows}, p = {p}",
                "glm",
                (0.1 * rng.normal(size=p), X, y),
            )
        )
    for n in (10, 50) if args.quick else (10, 50, 200):
        cases.append(
            (f"jacfwd of an elementwise/cumsum map R^{n} -> R^{n}", "map", (rng.normal(size=n),))
        )
    print(
        f"Jacobians and Hessians (NumPy {np.__version__}, one BLAS thread, float64, median of "
        f"{repeat} interleaved calls)\n"
    )
    others = [t for t in names if t != "adgen"]
    print(
        "| computation | "
        + " | ".join(names)
        + " | "
        + " | ".join(f"adgen / {t}" for t in others)
        + " |"
    )
    print("| --- |" + " ---: |" * (len(names) + len(others)))
    for label, key, case_args in cases:
        times = timed({t: tools[t][key] for t in names}, case_args, repeat)
        cells = [f"{times[t] * 1e6:,.0f} µs" for t in names]
        ratios = [f"{times['adgen'] / times[t]:.2f}" for t in others]
        print(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |", flush=True)
    print("\nadgen's operators on the GLM log-likelihood (n = 1000, p = 20), in primal calls\n")
    print("| operator | time / primal |\n| --- | ---: |")
    for name, ratio in operator_costs(repeat * 4):
        print(f"| {name} | {ratio:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
