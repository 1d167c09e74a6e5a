"""Smoke test of the benchmark suite (``benchmarks/``): tiny sizes, correctness only.

Every problem's hand-written gradient is checked against central differences,
adgen's gradient (where adgen supports the problem) against the hand-written
one, and the runner must produce a table. No timing is asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import adgen  # noqa: E402
from benchmarks import harness  # noqa: E402
from benchmarks.problems import PROBLEMS, Problem  # noqa: E402

FAST_TOOLS = ["primal", "hand-written", "adgen", "adgen-jvp"]


def central_differences(problem: Problem, args: tuple[Any, ...], eps: float = 1e-6) -> list[Any]:
    """The gradient of ``problem.primal`` w.r.t. ``problem.wrt`` by central differences."""
    grads: list[Any] = []
    for i in problem.wrt:
        a = args[i]
        if np.ndim(a) == 0:
            plus, minus = list(args), list(args)
            plus[i], minus[i] = a + eps, a - eps
            grads.append((problem.primal(*plus) - problem.primal(*minus)) / (2 * eps))
            continue
        g = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            plus, minus = list(args), list(args)
            plus[i], minus[i] = a.copy(), a.copy()
            plus[i][j] += eps
            minus[i][j] -= eps
            g[j] = (problem.primal(*plus) - problem.primal(*minus)) / (2 * eps)
        grads.append(g)
    return grads


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_hand_written_gradient_matches_central_differences(name: str) -> None:
    problem = PROBLEMS[name]
    args = problem.inputs("tiny", 0)
    value, grads = problem.hand(*args)
    assert value == pytest.approx(float(problem.primal(*args)), rel=1e-12, abs=1e-12)
    for got, want in zip(grads, central_differences(problem, args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_adgen_gradient_matches_hand_written(name: str) -> None:
    problem = PROBLEMS[name]
    args = problem.inputs("tiny", 0)
    value, grads = problem.hand(*args)
    try:
        got_value, got = adgen.value_and_grad(problem.primal, wrt=problem.wrt)(*args)
    except adgen.AdgenError as exc:
        assert problem.uses_loops, f"adgen should support {name}: {exc}"
        pytest.skip(f"adgen does not support {name} yet: {harness.first_line(exc)}")
    assert got_value == pytest.approx(value, rel=1e-10, abs=1e-12)
    for g, want in zip(got, grads, strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-8, atol=1e-10)


def test_runner_produces_a_table() -> None:
    report = harness.run_suite(
        tools=FAST_TOOLS, size="tiny", repeats=1, min_sample=0.0, extras=False, log=lambda _: None
    )
    assert {r.problem for r in report.rows} == set(PROBLEMS)
    assert len(report.rows) == len(PROBLEMS) * len(FAST_TOOLS)
    for row in report.rows:
        assert not row.status.startswith(("MISMATCH", "error")), row
        if row.status in ("ok", "reference"):
            assert row.seconds is not None and row.x_primal is not None
        else:
            assert row.status.startswith("unsupported: ") and row.seconds is None
    text = harness.table(report.rows)
    assert text.splitlines()[0].startswith("| problem | size | tool | time |")
    assert text.count("\n") == len(report.rows) + 1


def test_run_script_writes_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import run

    assert run.main(["--tiny", "--problems", "helmholtz", "--tools", *FAST_TOOLS,
                     "--out", str(tmp_path)]) == 0  # fmt: skip
    text = (tmp_path / "results.md").read_text(encoding="utf-8")
    assert "| helmholtz | tiny | adgen |" in text
    assert "first call, helmholtz/tiny" in text
    assert "| helmholtz | tiny | adgen |" in capsys.readouterr().out


def test_unsupported_tools_are_recorded_not_raised() -> None:
    def with_loop(x):  # noqa: ANN001, ANN202
        for _ in range(3):
            x = x * 2.0
        while x > 100.0:
            x = x / 2.0
        return x

    problem = Problem(
        name="loop",
        description="control flow",
        primal=with_loop,
        hand=lambda x: (with_loop(x), (8.0,)),
        wrt=(0,),
        inputs=lambda size, seed: (1.5,),
        sizes=("tiny",),
        quick="tiny",
        uses_loops=True,
    )
    rows = harness.run_problem(problem, "tiny", FAST_TOOLS, 1, 0.0, log=lambda _: None)
    adgen_row = next(r for r in rows if r.tool == "adgen")
    assert adgen_row.status == "ok" or adgen_row.status.startswith("unsupported: ")


def test_checkpointing_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import checkpointing

    results, primal = checkpointing.measure(steps=40, size=5, repeat=1)  # checks the gradients
    assert [r.variant for r in results] == list(checkpointing.VARIANTS)
    assert all(r.peak_bytes > 0 and r.seconds > 0 for r in results) and primal > 0
    assert checkpointing.main(["--steps", "30", "--size", "3", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "| plain loop |" in out and "| checkpoint (sqrt n) |" in out
    assert "the function itself:" in out


def test_the_real_code_benchmark_ports_the_programs_and_runs(capsys: Any) -> None:
    # only the import line changes for another tool: here the port to NumPy itself must
    # give the same function; then the runner's quick sizes (with whichever peers exist)
    from benchmarks import real_code

    ported = real_code.ported("fluid", "numpy")
    sys.path.insert(0, str(ROOT / "tests"))
    from real_code import fluid  # type: ignore[import-not-found]

    args = fluid.make_args()
    assert ported.objective(*args) == fluid.objective(*args)
    assert real_code.main(["--quick"]) == 0
    table = capsys.readouterr().out
    assert "| fluid 16x16, 20 steps |" in table and "| lstm hidden 32, 16 steps |" in table


def test_the_nested_derivatives_benchmark_checks_and_runs(capsys: Any) -> None:
    # adgen's fourth derivative of tanh against the closed form, then the runner's quick
    # sizes (each peer's result is checked against adgen's there)
    from benchmarks import higher_order

    x = np.linspace(-1.5, 1.5, 7)
    t = np.tanh(x)
    exact = 8.0 * t * (1 - t**2) * (2 - 3 * t**2)  # the fourth derivative of tanh
    assert np.allclose(higher_order.adgen_tools()["tanh4"](x), exact, rtol=1e-10, atol=1e-12)
    assert higher_order.main(["--quick"]) == 0
    table = capsys.readouterr().out
    assert "| mlp hvp (800 parameters, 64 rows) |" in table
    assert "fourth derivative of tanh costs" in table


def test_dask_gradient_benchmark_runs_and_checks_its_gradients(capsys: Any) -> None:
    pytest.importorskip("dask.array")
    from benchmarks import dask_gradients

    dask_gradients.main(
        ["--rows", "4000", "--chunk", "1000", "--repeat", "1"] + ["--out-of-core", "8000"]
    )
    out = capsys.readouterr().out
    assert "in memory, 4,000 x 20" in out and "ratio" in out
    assert "out of core, 8,000 x 20" in out and "peak RSS" in out


def test_the_jacobians_benchmark_checks_and_runs(capsys: Any) -> None:
    # the hand-written Hessian and Jacobian against adgen's, then the runner's quick sizes
    # (each tool's result is checked against adgen's there)
    from benchmarks import jacobians

    rng = np.random.default_rng(0)
    X, y, beta, x = rng.normal(size=(30, 4)), rng.random(30), rng.normal(size=4), rng.normal(size=6)
    ours, hand = jacobians.adgen_tools(), jacobians.by_hand_tools()
    np.testing.assert_allclose(ours["glm"](beta, X, y), hand["glm"](beta, X, y), rtol=1e-12)
    np.testing.assert_allclose(ours["map"](x), hand["map"](x), rtol=1e-12, atol=1e-14)
    assert jacobians.main(["--quick"]) == 0
    table = capsys.readouterr().out
    assert "| Hessian of a Poisson GLM, n = 100, p = 20 |" in table
    assert "| hessian (20 columns, one batched pass) |" in table
