"""The benchmark harness: prepare every tool, check its gradient, time round-robin, report.

Import it only after the thread-count variables are set (``run.py`` does);
timings are medians of interleaved repeats, warm-up excluded, reported as
ratios to the NumPy primal and to the hand-written gradient.
"""

from __future__ import annotations

import gc
import importlib
import math
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import adgen

from .peers import Prepared, Unsupported, as_numpy
from .problems import PROBLEMS, Args, Problem

#: Every tool, in report order. ``primal`` and ``hand-written`` are the references.
TOOLS: tuple[str, ...] = (
    "primal",
    "hand-written",
    "adgen",
    "adgen-jvp",
    "autograd",
    "jax",
    "jax-jit",
    "torch",
    "tangent",
)

#: Peer tools: module under ``benchmarks.peers`` and the builder's name in it.
PEERS: dict[str, tuple[str, str]] = {
    "autograd": ("autograd_impl", "build"),
    "jax": ("jax_impl", "build"),
    "jax-jit": ("jax_impl", "build_jit"),
    "torch": ("torch_impl", "build"),
    "tangent": ("tangent_impl", "build"),
}

RTOL = 1e-6


@dataclass
class Row:
    """One line of the results table."""

    problem: str
    size: str
    tool: str
    seconds: float | None = None
    x_primal: float | None = None
    x_hand: float | None = None
    status: str = "ok"


@dataclass
class Report:
    """Everything one run measured: the table rows and the extra adgen measurements."""

    rows: list[Row] = field(default_factory=list)
    extras: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


ROOT = Path(__file__).resolve().parent.parent


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's message (paths relative to the checkout)."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    line = lines[0].strip() if lines else type(exc).__name__
    return line.replace(str(ROOT) + "/", "")


# -- tools ---------------------------------------------------------------------------------------
def _grads_tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, tuple) else (value,)


def _reference(problem: Problem, args: Args) -> Prepared:
    return Prepared(
        lambda: problem.hand(*args),
        lambda raw: (float(raw[0]), tuple(as_numpy(g) for g in raw[1])),
    )


def _adgen(problem: Problem, args: Args) -> Prepared:
    vg = adgen.value_and_grad(problem.primal, wrt=problem.wrt)
    try:
        vg(*args)
    except adgen.AdgenError as exc:
        raise Unsupported(first_line(exc)) from exc
    return Prepared(
        lambda: vg(*args),
        lambda raw: (float(raw[0]), tuple(as_numpy(g) for g in _grads_tuple(raw[1]))),
    )


def jvp_direction(problem: Problem, args: Args, seed: int = 1) -> list[Any]:
    """A random tangent for every differentiated argument, ``None`` for the others."""
    rng = np.random.default_rng(seed)
    tangents: list[Any] = [None] * len(args)
    for i in problem.wrt:
        a = args[i]
        tangents[i] = (
            float(rng.standard_normal()) if np.ndim(a) == 0 else rng.standard_normal(np.shape(a))
        )
    return tangents


def _adgen_jvp(problem: Problem, args: Args) -> Prepared:
    tangents = jvp_direction(problem, args)
    try:
        adgen.jvp(problem.primal, args, tangents)
    except adgen.AdgenError as exc:
        raise Unsupported(first_line(exc)) from exc
    return Prepared(
        lambda: adgen.jvp(problem.primal, args, tangents),
        lambda raw: (float(raw[0]), float(raw[1])),
    )


def prepare(tool: str, problem: Problem, args: Args) -> Prepared:
    """The tool ready to run; raises ``Unsupported`` or ``ImportError``."""
    if tool == "primal":
        return Prepared(lambda: problem.primal(*args), lambda raw: (float(raw), ()))
    if tool == "hand-written":
        return _reference(problem, args)
    if tool == "adgen":
        return _adgen(problem, args)
    if tool == "adgen-jvp":
        return _adgen_jvp(problem, args)
    module_name, builder = PEERS[tool]
    module = importlib.import_module(f"benchmarks.peers.{module_name}")
    build: Callable[[Problem, Args], Prepared] = getattr(module, builder)
    return build(problem, args)


def check(
    tool: str, problem: Problem, args: Args, prepared: Prepared, ref: tuple[float, Any]
) -> str | None:
    """None if the tool's value and gradient match the hand-written ones, else why not."""
    value, got = prepared.result(prepared.call())
    ref_value, ref_grads = ref
    if not math.isclose(value, ref_value, rel_tol=RTOL, abs_tol=1e-10):
        return f"value {value!r} != {ref_value!r}"
    if tool == "adgen-jvp":
        tangents = jvp_direction(problem, args)
        want = sum(
            float(np.sum(np.asarray(g) * np.asarray(tangents[i])))
            for g, i in zip(ref_grads, problem.wrt)
        )
        if not math.isclose(got, want, rel_tol=RTOL, abs_tol=1e-8):
            return f"JVP {got!r} != <grad, v> {want!r}"
        return None
    if len(got) != len(ref_grads):
        return f"{len(got)} gradients, expected {len(ref_grads)}"
    for n, (g, r) in enumerate(zip(got, ref_grads)):
        g, r = np.asarray(g), np.asarray(r)
        scale = float(np.max(np.abs(r))) if r.size else 1.0
        if g.shape != r.shape or not np.allclose(g, r, rtol=RTOL, atol=1e-9 * max(scale, 1.0)):
            err = float(np.max(np.abs(g - r))) if g.shape == r.shape else math.inf
            return f"gradient {n} differs (max abs err {err:.3g}, shape {g.shape} vs {r.shape})"
    return None


# -- timing --------------------------------------------------------------------------------------
def _time_once(fn: Callable[[], Any], number: int) -> float:
    gc_was = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        return (time.perf_counter() - start) / number
    finally:
        if gc_was:
            gc.enable()


def calibrate(fn: Callable[[], Any], min_sample: float) -> int:
    """How many calls make one sample last at least ``min_sample`` seconds (after warm-up)."""
    fn()  # warm-up (jit compilation, caches), excluded
    one = _time_once(fn, 1)
    return max(1, math.ceil(min_sample / max(one, 1e-9)))


def interleaved(
    fns: dict[str, Callable[[], Any]], repeats: int, min_sample: float
) -> dict[str, float]:
    """Median seconds per call of each function, timed round-robin (order rotated each round)."""
    numbers = {name: calibrate(fn, min_sample) for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    names = list(fns)
    for r in range(repeats):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            samples[name].append(_time_once(fns[name], numbers[name]))
    return {name: statistics.median(s) for name, s in samples.items()}


# -- one problem ---------------------------------------------------------------------------------
def run_problem(
    problem: Problem,
    size: str,
    tools: Sequence[str],
    repeats: int,
    min_sample: float,
    log: Callable[[str], None] = print,
) -> list[Row]:
    """Prepare, check and time every tool on one problem size."""
    args = problem.inputs(size, 0)
    ref = _reference(problem, args)
    ref_result = ref.result(ref.call())
    ready: dict[str, Prepared] = {"primal": prepare("primal", problem, args), "hand-written": ref}
    status: dict[str, str] = {"primal": "reference", "hand-written": "reference"}
    for tool in tools:
        if tool in ready:
            continue
        try:
            prepared = prepare(tool, problem, args)
        except ImportError as exc:
            status[tool] = "not installed"
            log(f"  {tool}: not installed ({first_line(exc)})")
            continue
        except Unsupported as exc:
            status[tool] = f"unsupported: {first_line(exc)}"
            log(f"  {tool}: {status[tool]}")
            continue
        except Exception as exc:  # a peer failing on a problem must not stop the suite
            status[tool] = f"error: {type(exc).__name__}: {first_line(exc)}"[:160]
            log(f"  {tool}: {status[tool]}")
            continue
        try:
            mismatch = check(tool, problem, args, prepared, ref_result)
        except Exception as exc:
            mismatch = f"{type(exc).__name__}: {first_line(exc)}"
        if mismatch is not None:
            status[tool] = f"MISMATCH: {mismatch}"[:200]
            log(f"  !!! {tool} on {problem.name}/{size}: {status[tool]} -- time not reported")
            continue
        status[tool] = "ok"
        ready[tool] = prepared
    times = interleaved({t: p.call for t, p in ready.items()}, repeats, min_sample)
    rows = []
    order = ["primal", "hand-written"] + [t for t in tools if t not in ("primal", "hand-written")]
    for tool in order:
        row = Row(problem.name, size, tool, status=status[tool])
        if tool in times:
            row.seconds = times[tool]
            row.x_primal = times[tool] / times["primal"]
            row.x_hand = times[tool] / times["hand-written"]
        rows.append(row)
    return rows


# -- adgen's own costs ---------------------------------------------------------------------------
def first_call(problem: Problem, size: str, repeats: int = 5) -> tuple[float, float] | None:
    """Median (first call with an empty cache, steady call) seconds of adgen's value_and_grad."""
    args = problem.inputs(size, 0)
    firsts = []
    for _ in range(repeats):
        adgen.backend.cache.clear()
        vg = adgen.value_and_grad(problem.primal, wrt=problem.wrt)
        start = time.perf_counter()
        try:
            vg(*args)
        except adgen.AdgenError:
            return None
        firsts.append(time.perf_counter() - start)
    steady = interleaved({"vg": lambda: vg(*args)}, repeats, 0.002)["vg"]
    return statistics.median(firsts), steady


def _tiny_scalar(x, y):  # noqa: ANN001, ANN202 (adgen reads this source)
    return x * y + math.sin(x)


def _tiny_scalar_hand(x: float, y: float) -> tuple[float, tuple[float, float]]:
    return x * y + math.sin(x), (y + math.cos(x), x)


def cache_hit_overhead(repeats: int = 7) -> dict[str, float]:
    """Seconds per call: adgen's value_and_grad, its generated function alone, hand-written."""
    from adgen.pipeline import derivative

    vg = adgen.value_and_grad(_tiny_scalar, wrt=(0, 1))
    vg(0.3, 0.7)
    fns: dict[str, Callable[[], Any]] = {
        "value_and_grad": lambda: vg(0.3, 0.7),
        "hand-written": lambda: _tiny_scalar_hand(0.3, 0.7),
    }
    try:  # the compiled code adgen serves from its cache (internal API, may change)
        generated = derivative(_tiny_scalar, "reverse", ("x", "y"), frozenset({"x", "y"})).compiled
        fns["generated"] = lambda: generated(0.3, 0.7, 1.0)
    except Exception:
        pass
    return interleaved(fns, repeats, 0.02)


def peak_memory(problem: Problem, size: str) -> tuple[int, int] | None:
    """Peak bytes allocated (tracemalloc) during one adgen value_and_grad and one hand-written."""
    args = problem.inputs(size, 0)
    vg = adgen.value_and_grad(problem.primal, wrt=problem.wrt)
    try:
        vg(*args)
    except adgen.AdgenError:
        return None
    peaks = []
    for fn in (lambda: vg(*args), lambda: problem.hand(*args)):
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        peaks.append(tracemalloc.get_traced_memory()[1] - base)
        tracemalloc.stop()
        del out
    return peaks[0], peaks[1]


# -- the whole suite -----------------------------------------------------------------------------
def run_suite(
    problems: Sequence[str] | None = None,
    tools: Sequence[str] | None = None,
    size: str = "full",
    repeats: int = 15,
    min_sample: float = 0.01,
    extras: bool = True,
    log: Callable[[str], None] = print,
) -> Report:
    """Run the suite. ``size`` is ``full`` (every listed size), ``quick`` or ``tiny``."""
    report = Report()
    chosen = [PROBLEMS[p] for p in (problems or list(PROBLEMS))]
    tool_list = list(tools or TOOLS)
    for problem in chosen:
        sizes = {"full": list(problem.sizes), "quick": [problem.quick], "tiny": ["tiny"]}[size]
        for s in sizes:
            log(f"{problem.name} / {s}")
            report.rows.extend(run_problem(problem, s, tool_list, repeats, min_sample, log))
    if extras and "adgen" in tool_list:
        measure_extras(report, chosen, size, log)
    return report


def measure_extras(
    report: Report, problems: Sequence[Problem], size: str, log: Callable[[str], None]
) -> None:
    """adgen's first-call time per problem, cache-hit overhead, and GMM peak memory."""
    log("adgen: first-call time, cache-hit overhead, peak memory")
    for problem in problems:
        s = "tiny" if size == "tiny" else problem.quick
        measured = first_call(problem, s)
        if measured is None:
            report.extras.append((f"first call, {problem.name}/{s}", "unsupported"))
            continue
        first, steady = measured
        report.extras.append(
            (
                f"first call, {problem.name}/{s}",
                f"{fmt_time(first)} (transform + compile ≈ {fmt_time(first - steady)}; "
                f"a cached call takes {fmt_time(steady)})",
            )
        )
    over = cache_hit_overhead()
    if "generated" in over:
        report.extras.append(
            (
                "cache-hit overhead (x*y + sin(x), floats)",
                f"{fmt_time(over['value_and_grad'] - over['generated'])} "
                f"(value_and_grad {fmt_time(over['value_and_grad'])}, generated code alone "
                f"{fmt_time(over['generated'])}, hand-written {fmt_time(over['hand-written'])})",
            )
        )
    else:
        report.extras.append(
            (
                "cache-hit call (x*y + sin(x), floats)",
                f"value_and_grad {fmt_time(over['value_and_grad'])}, "
                f"hand-written {fmt_time(over['hand-written'])}",
            )
        )
    gmm = next((p for p in problems if p.name == "gmm"), None)
    if gmm is not None:
        s = "tiny" if size == "tiny" else gmm.quick
        mem = peak_memory(gmm, s)
        if mem is not None:
            ours, hand = mem
            report.extras.append(
                (
                    f"peak memory, gmm/{s}",
                    f"adgen {ours / 2**20:.2f} MiB, hand-written {hand / 2**20:.2f} MiB "
                    f"(×{ours / max(hand, 1):.2f})",
                )
            )


# -- output --------------------------------------------------------------------------------------
def fmt_time(seconds: float | None) -> str:
    """Seconds in µs, ms or s with three significant digits."""
    if seconds is None:
        return "–"
    if abs(seconds) < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if abs(seconds) < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def _ratio(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def table(rows: Sequence[Row]) -> str:
    """The rows as a markdown table."""
    lines = [
        "| problem | size | tool | time | ×primal | ×hand-written | status |",
        "| --- | --- | --- | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        status = r.status.replace("|", "\\|")
        lines.append(
            f"| {r.problem} | {r.size} | {r.tool} | {fmt_time(r.seconds)} | "
            f"{_ratio(r.x_primal)} | {_ratio(r.x_hand)} | {status} |"
        )
    return "\n".join(lines)


def markdown(report: Report, header: str) -> str:
    """The full results document: header, table, adgen's extra measurements, notes."""
    parts = [header, "", table(report.rows), ""]
    if report.extras:
        parts += ["## adgen: first call, cache hit, memory", ""]
        parts += [f"- {label}: {value}" for label, value in report.extras]
        parts.append("")
    if report.notes:
        parts += ["## Notes", ""] + [f"- {n}" for n in report.notes] + [""]
    return "\n".join(parts)


def chart(rows: Sequence[Row], path: Path) -> str | None:
    """A bar chart of ×hand-written per problem size and tool; returns a note if skipped."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no chart (pip install -e '.[bench]')"
    groups = list(dict.fromkeys((r.problem, r.size) for r in rows))
    tools = [t for t in dict.fromkeys(r.tool for r in rows) if t != "hand-written"]
    value = {(r.problem, r.size, r.tool): r.x_hand for r in rows}
    width = 0.8 / max(len(tools), 1)
    fig, ax = plt.subplots(figsize=(max(8.0, 1.3 * len(groups) + 3), 5))
    for j, tool in enumerate(tools):
        xs, ys = [], []
        for i, (p, s) in enumerate(groups):
            v = value.get((p, s, tool))
            if v is not None:
                xs.append(i + (j - (len(tools) - 1) / 2) * width)
                ys.append(v)
        ax.bar(xs, ys, width=width, label=tool)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{p}\n{s}" for p, s in groups], fontsize=8)
    ax.set_ylabel("time / hand-written NumPy gradient (log)")
    ax.set_title("value and gradient: time relative to the hand-written gradient")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None
