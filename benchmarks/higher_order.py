"""Nested derivatives: adgen against autograd and jax.jit.

Run: python benchmarks/higher_order.py [--repeat 9] [--quick]

Three higher-order computations, the same mathematics in each tool:

* ``tanh''''``: the fourth derivative of ``np.tanh`` elementwise, by nesting the gradient
  four times (each level the gradient of the sum of the level below), as a time per call
  and as a multiple of the primal ``np.tanh(x)``;
* ``mlp hvp``: a Hessian-vector product of a two-layer MLP's loss w.r.t. its flat parameter
  vector (forward over reverse: ``adgen.hvp``, ``jax.jvp(jax.grad(f))``, autograd's
  ``grad`` of the gradient's dot product with ``v``);
* ``loop hvp``: the same for a 50-step recurrence ``h = tanh(a * h + x)``.

``NumPy by hand`` is the same derivatives derived on paper and written as plain NumPy, the
speed adgen aims for. Every result is checked against adgen's. Times are medians of
interleaved calls after a warm-up (JAX's compilation excluded), one BLAS thread, float64.

``--keep-freed-memory`` (Linux with glibc) first tells the C allocator to keep memory it is
given back instead of returning it to the system (``mallopt``: trim threshold 256 MiB, mmap
threshold 32 MiB, as the environment variables ``MALLOC_TRIM_THRESHOLD_`` and
``MALLOC_MMAP_THRESHOLD_`` would). NumPy code making many temporaries of tens of KiB to
tens of MiB otherwise spends much of its time having pages mapped and zeroed again; JAX
has its own allocator. Every tool in the process runs under the same setting.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy (and any BLAS) is loaded
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import adgen  # noqa: E402

N_IN, N_HIDDEN, N_OUT = 20, 32, 5


def programs(np: Any) -> dict[str, Callable[..., Any]]:
    """The programs, written once against the NumPy module ``np`` each tool brings."""

    def tanh_sum(x):
        return np.sum(np.tanh(x))

    def mlp_loss(w, X, Y):
        k = N_IN * N_HIDDEN
        W1 = np.reshape(w[:k], (N_IN, N_HIDDEN))
        W2 = np.reshape(w[k : k + N_HIDDEN * N_OUT], (N_HIDDEN, N_OUT))
        H = np.tanh(X @ W1)
        return np.sum((H @ W2 - Y) ** 2) / X.shape[0]

    def loop_loss(x, a):
        h = np.zeros_like(x)
        for _ in range(50):
            h = np.tanh(a * h + x)
        return np.sum(h * h)

    return {"tanh_sum": tanh_sum, "mlp_loss": mlp_loss, "loop_loss": loop_loss}


def adgen_tools() -> dict[str, Callable[..., Any]]:
    p = programs(np)
    d1 = adgen.grad(p["tanh_sum"])

    def level1(x):  # each level: the gradient of the sum of the level below
        return np.sum(d1(x))

    d2 = adgen.grad(level1)

    def level2(x):
        return np.sum(d2(x))

    d3 = adgen.grad(level2)

    def level3(x):
        return np.sum(d3(x))

    return {
        "tanh4": adgen.grad(level3),
        "mlp": adgen.hvp(p["mlp_loss"]),
        "loop": adgen.hvp(p["loop_loss"]),
    }


def autograd_tools() -> dict[str, Callable[..., Any]]:
    import autograd
    import autograd.numpy as anp

    p = programs(anp)
    d = autograd.grad(p["tanh_sum"])
    for _ in range(3):
        d = autograd.grad(lambda x, inner=d: anp.sum(inner(x)))

    def hvp(f: Callable[..., Any]) -> Callable[..., Any]:
        g = autograd.grad(f)
        return autograd.grad(lambda w, *rest_v: anp.sum(g(w, *rest_v[:-1]) * rest_v[-1]))

    mlp, loop = hvp(p["mlp_loss"]), hvp(p["loop_loss"])
    return {"tanh4": d, "mlp": mlp, "loop": loop}


def by_hand_tools() -> dict[str, Callable[..., Any]]:
    """The same derivatives derived on paper and written in plain NumPy, one operation per
    array as a user writes it: the speed adgen's generated code aims for."""

    def tanh4(x):  # d^4/dx^4 tanh = 16 t - 40 t^3 + 24 t^5 with t = tanh x
        t = np.tanh(x)
        t2 = t * t
        return t * (16.0 + t2 * (24.0 * t2 - 40.0))

    def mlp(w, X, Y, v):
        k = N_IN * N_HIDDEN
        W1, W2 = w[:k].reshape(N_IN, N_HIDDEN), w[k:].reshape(N_HIDDEN, N_OUT)
        V1, V2 = v[:k].reshape(N_IN, N_HIDDEN), v[k:].reshape(N_HIDDEN, N_OUT)
        H = np.tanh(X @ W1)
        S = 1.0 - H * H
        dR = (H @ W2 - Y) * (2.0 / X.shape[0])  # the loss's gradient w.r.t. H @ W2
        dH = dR @ W2.T
        Hd = (X @ V1) * S  # tangents along v
        dRd = (Hd @ W2 + H @ V2) * (2.0 / X.shape[0])
        dHd = dRd @ W2.T + dR @ V2.T
        dAd = dHd * S - 2.0 * dH * H * Hd
        return np.concatenate([(X.T @ dAd).ravel(), (Hd.T @ dR + H.T @ dRd).ravel()])

    def loop(x, a, v):
        h, hd = np.zeros_like(x), np.zeros_like(x)
        hs, hds = [], []
        for _ in range(50):  # the recurrence and its tangent along v, states kept
            hs.append(h)
            hds.append(hd)
            zd = a * hd + v
            h = np.tanh(a * h + x)
            hd = zd * (1.0 - h * h)
        hb, hbd = 2.0 * h, 2.0 * hd  # the gradient's sweep and its tangent
        xbd = np.zeros_like(x)
        for _ in range(50):
            s = 1.0 - h * h
            zbd = hbd * s - 2.0 * hb * h * hd
            xbd += zbd
            hb, hbd = a * (hb * s), a * zbd
            h, hd = hs.pop(), hds.pop()
        return xbd

    return {"tanh4": tanh4, "mlp": mlp, "loop": loop}


def jax_tools() -> dict[str, Callable[..., Any]]:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    p = programs(jnp)
    d = jax.grad(p["tanh_sum"])
    for _ in range(3):
        d = jax.grad(lambda x, inner=d: jnp.sum(inner(x)))

    def hvp(f: Callable[..., Any]) -> Callable[..., Any]:
        def product(w, *rest_v):
            *rest, v = rest_v
            return jax.jvp(lambda u: jax.grad(f)(u, *rest), (w,), (v,))[1]

        return jax.jit(product)

    return {"tanh4": jax.jit(d), "mlp": hvp(p["mlp_loss"]), "loop": hvp(p["loop_loss"])}


def _block(value: Any) -> Any:
    getattr(value, "block_until_ready", lambda: None)()
    return value


def timed(
    fns: dict[str, Callable[..., Any]], args: tuple[Any, ...], repeat: int
) -> dict[str, float]:
    reference = np.asarray(fns["adgen"](*args))
    for tool, fn in fns.items():
        if tool == "primal":  # (the function differentiated: no derivative to compare)
            continue
        got = np.asarray(_block(fn(*args)))
        err = float(np.max(np.abs(got - reference)) / (np.max(np.abs(reference)) + 1e-300))
        if err > 1e-8:
            raise AssertionError(f"{tool} differs from adgen (relative {err:.1e})")
    samples: dict[str, list[float]] = {tool: [] for tool in fns}
    for _ in range(repeat):
        for tool, fn in fns.items():
            start = time.perf_counter()
            _block(fn(*args))
            samples[tool].append(time.perf_counter() - start)
    return {tool: statistics.median(s) for tool, s in samples.items()}


def keep_freed_memory() -> None:
    """glibc's ``mallopt``: keep up to 256 MiB of freed memory at the top of the heap, and
    serve blocks up to 32 MiB from the heap (not from fresh mappings)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    libc = ctypes.CDLL(name) if name else None
    mallopt = getattr(libc, "mallopt", None)
    m_trim_threshold, m_mmap_threshold = -1, -3
    if mallopt is None or not (
        mallopt(m_trim_threshold, 256 << 20) and mallopt(m_mmap_threshold, 32 << 20)
    ):
        raise SystemExit("--keep-freed-memory needs glibc's mallopt")


def peers(makers: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """The tools of each peer installed (``makers``: name -> what makes its tools); a line
    says which are not."""
    made = {}
    for name, make in makers.items():
        try:
            made[name] = make()
        except ImportError:
            print(f"({name} is not installed: pip install -e '.[bench]')")
    return made


def arguments(argv: list[str] | None, doc: str | None, repeat: int) -> argparse.Namespace:
    """The options of a timing script (``--repeat``, ``--quick``, ``--keep-freed-memory``,
    applied); ``repeat`` the default number of timed calls."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 repeats")
    parser.add_argument(
        "--keep-freed-memory",
        action="store_true",
        help="glibc: keep freed memory in the process (mallopt) before timing",
    )
    args = parser.parse_args(argv)
    if args.keep_freed_memory:
        keep_freed_memory()
    if args.quick:
        args.repeat = 3
    return args


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv, __doc__, 9)
    repeat = args.repeat
    rng = np.random.default_rng(0)
    n = 1000 if args.quick else 100_000
    rows = 64 if args.quick else 1024
    x = rng.normal(size=n)
    size = N_IN * N_HIDDEN + N_HIDDEN * N_OUT
    w, v = 0.3 * rng.normal(size=size), rng.normal(size=size)
    X, Y = rng.normal(size=(rows, N_IN)), rng.normal(size=(rows, N_OUT))
    xs, vs = rng.normal(size=n // 10), rng.normal(size=n // 10)
    tools = {"adgen": adgen_tools(), "NumPy by hand": by_hand_tools()}
    tools.update(peers({"autograd": autograd_tools, "jax.jit": jax_tools}))
    names = list(tools)
    cases = [
        (f"4th derivative of tanh, {n} values", "tanh4", (x,)),
        (f"mlp hvp ({size} parameters, {rows} rows)", "mlp", (w, X, Y, v)),
        (f"loop hvp (50 steps, {n // 10} values)", "loop", (xs, 0.7, vs)),
    ]
    kept = ", freed memory kept (mallopt)" if args.keep_freed_memory else ""
    print(
        f"nested derivatives (NumPy {np.__version__}, one BLAS thread, float64, median of "
        f"{repeat} interleaved calls{kept})\n"
    )
    print(
        "| computation | "
        + " | ".join(names)
        + " | "
        + " | ".join(f"{t} / adgen" for t in names[1:])
        + " |"
    )
    print("| --- | " + " | ".join("---:" for _ in names) * 1 + " |" + " ---: |" * (len(names) - 1))
    fourth = ""
    for label, key, case_args in cases:
        times = timed({t: tools[t][key] for t in names}, case_args, repeat)
        cells = [f"{times[t] * 1e3:.2f} ms" for t in names]
        ratios = [f"{times[t] / times['adgen']:.2f}" for t in names[1:]]
        print(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |", flush=True)
        if key == "tanh4":  # as a multiple of the primal, timed in the same loop
            with_primal = timed(
                {**{t: tools[t][key] for t in names}, "primal": np.tanh}, case_args, repeat
            )
            primal = with_primal["primal"]
            multiples = ", ".join(f"{t} {with_primal[t] / primal:.1f}x" for t in names)
            fourth = (
                f"the fourth derivative of tanh costs {multiples} the primal "
                f"({primal * 1e3:.2f} ms)"
            )
    print(f"\n{fourth}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
