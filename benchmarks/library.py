"""Library functions as installed: adgen's derivative against the one their authors wrote.

Run: python benchmarks/library.py [--repeat 15] [--min-sample 0.02] [--only NAME]

Each case is a function of an installed library (statsmodels, scikit-learn, SciPy) that
ships its own hand-written gradient (a model's ``score``, a loss returning its gradient,
``rosen_der``) or Hessian (``Logit.hessian``): adgen differentiates the function as
installed (nothing edited, the data bound by a closure, as users write it), and both are
timed on the same point -- medians of interleaved calls after a warm-up (adgen's code is
made then), one BLAS thread, float64. Every adgen result is checked against the library's
first. The table gives adgen's time over theirs (issue 38's target: a median of 1.5 or
less).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy (and any BLAS) is loaded

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import adgen  # noqa: E402
from benchmarks.harness import interleaved  # noqa: E402

# name -> (ours, theirs, point): both map the point to the derivative
Case = tuple[Callable[[Any], Any], Callable[[Any], Any], np.ndarray]


def _data(n: int = 500, p: int = 6, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p - 1))])
    beta = rng.normal(scale=0.3, size=p)
    return {
        "X": X,
        "binary": (rng.random(n) < 1 / (1 + np.exp(-X @ beta))).astype(float),
        "count": rng.poisson(np.exp(X @ beta)).astype(float),
        "real": X @ beta + 0.3 * rng.normal(size=n),
        "params": 0.5 * beta,
    }


def statsmodels_cases() -> dict[str, Case]:
    try:
        import statsmodels.api as sm
        from statsmodels.discrete import discrete_model as dm
    except ImportError:
        return {}
    d = _data()
    X, w = d["X"], d["params"]
    models = {
        "Logit": sm.Logit(d["binary"], X),
        "Probit": sm.Probit(d["binary"], X),
        "Poisson": sm.Poisson(d["count"], X),
        "OLS": sm.OLS(d["real"], X),
        "GLM Binomial": sm.GLM(d["binary"], X, family=sm.families.Binomial()),
        "NegativeBinomialP": dm.NegativeBinomialP(d["count"], X),
    }
    cases: dict[str, Case] = {}
    for name, model in models.items():
        point = np.r_[w, 0.5] if name == "NegativeBinomialP" else w
        cases[f"statsmodels {name} score"] = (adgen.grad(model.loglike), model.score, point)
    logit = models["Logit"]
    cases["statsmodels Logit hessian"] = (adgen.hessian(logit.loglike), logit.hessian, w)
    poisson = models["Poisson"]
    cases["statsmodels Poisson hessian"] = (adgen.hessian(poisson.loglike), poisson.hessian, w)
    return cases


def sklearn_cases() -> dict[str, Case]:
    try:
        from sklearn.linear_model._huber import _huber_loss_and_gradient
        from sklearn.manifold import _t_sne
    except ImportError:
        return {}
    d = _data()
    X, y = d["X"], d["real"]
    weights = np.ones(len(y))
    point = np.r_[d["params"], 0.2, 1.3]

    def huber(w: np.ndarray) -> Any:
        return _huber_loss_and_gradient(w, X, y, 1.35, 1e-3, weights)[0]

    def huber_theirs(w: np.ndarray) -> Any:
        return _huber_loss_and_gradient(w, X, y, 1.35, 1e-3, weights)[1]

    rng = np.random.default_rng(1)
    n, dims = 60, 2
    p = np.abs(rng.normal(size=n * (n - 1) // 2))
    p *= 0.5 / p.sum()

    def kl(e: np.ndarray) -> Any:
        return _t_sne._kl_divergence(e, p, 1.0, n, dims)[0]

    def kl_theirs(e: np.ndarray) -> Any:
        return _t_sne._kl_divergence(e, p, 1.0, n, dims)[1]

    return {
        "sklearn huber loss": (adgen.grad(huber), huber_theirs, point),
        "sklearn t-SNE KL divergence": (adgen.grad(kl), kl_theirs, rng.normal(size=n * dims)),
    }


def scipy_cases() -> dict[str, Case]:
    try:
        from scipy import optimize, special
    except ImportError:
        return {}
    x = np.random.default_rng(2).normal(size=200)
    return {
        "scipy rosen": (adgen.grad(optimize.rosen), optimize.rosen_der, x),
        "scipy rosen hessian": (adgen.hessian(optimize.rosen), optimize.rosen_hess, x[:50]),
        "scipy logsumexp": (adgen.grad(special.logsumexp), special.softmax, x),
    }


def cases() -> dict[str, Case]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {**statsmodels_cases(), **sklearn_cases(), **scipy_cases()}


def run(repeat: int, min_sample: float, only: str | None) -> list[tuple[str, float, float]]:
    rows = []
    for name, (ours, theirs, point) in cases().items():
        if only and only not in name:
            continue
        np.testing.assert_allclose(ours(point), theirs(point), rtol=1e-7, atol=1e-9)
        times = interleaved(
            {
                "adgen": lambda f=ours, x=point: f(x),
                "theirs": lambda f=theirs, x=point: f(x),
            },
            repeat,
            min_sample,
        )
        rows.append((name, times["adgen"], times["theirs"]))
        print(f"{name:36s} {times['adgen'] * 1e6:9.1f} us {times['theirs'] * 1e6:9.1f} us "
              f"{times['adgen'] / times['theirs']:6.2f}x", flush=True)  # fmt: skip
    return rows


def markdown(rows: list[tuple[str, float, float]]) -> str:
    lines = ["| function | adgen | theirs | adgen / theirs |", "|---|---:|---:|---:|"]
    for name, ours, theirs in rows:
        lines.append(
            f"| {name} | {ours * 1e6:.1f} µs | {theirs * 1e6:.1f} µs | {ours / theirs:.2f}× |"
        )
    ratios = [ours / theirs for _, ours, theirs in rows]
    if ratios:
        lines.append(f"| **median** | | | **{statistics.median(ratios):.2f}×** |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--min-sample", type=float, default=0.02)
    parser.add_argument("--only", default=None)
    args = parser.parse_args()
    print(markdown(run(args.repeat, args.min_sample, args.only)))


if __name__ == "__main__":
    main()
