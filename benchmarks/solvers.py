"""Gradients through SciPy's solvers: adgen against the primal solve and finite differences.

Run: python benchmarks/solvers.py [--repeat 7]

Each program calls a SciPy solver with a function of its own, as users write it (an ODE
model fitted to data, an integral with parameters, an implied volatility, a bilevel
problem). For each: the primal's time, adgen's gradient (reverse mode) as a multiple of it,
and central finite differences (2 solves per parameter, the cheapest way to get a gradient
of that accuracy without AD) as a multiple of adgen's gradient. Medians of interleaved
calls after a warm-up, one BLAS thread; adgen's gradient is checked against the finite
differences first.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy (and any BLAS) is loaded

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from scipy.integrate import odeint, quad, solve_ivp  # noqa: E402
from scipy.optimize import brentq, minimize  # noqa: E402
from scipy.special import ndtr  # noqa: E402

import adgen  # noqa: E402

T_OBS = np.linspace(0.0, 4.0, 9)


def lotka_volterra(p: Any) -> Any:
    def rhs(z, t):
        prey, pred = z[0], z[1]
        return [p[0] * prey - p[1] * prey * pred, p[3] * prey * pred - p[2] * pred]

    return odeint(rhs, np.array([10.0, 5.0]), T_OBS, rtol=1e-8, atol=1e-8)


LV_DATA = lotka_volterra(np.array([1.1, 0.4, 0.4, 0.1]))


def lv_odeint(p: Any) -> Any:
    return np.mean((lotka_volterra(p) - LV_DATA) ** 2)


def lv_solve_ivp(p: Any) -> Any:
    def rhs(t, z):
        prey, pred = z[0], z[1]
        return [p[0] * prey - p[1] * prey * pred, p[3] * prey * pred - p[2] * pred]

    sol = solve_ivp(rhs, (0.0, 4.0), np.array([10.0, 5.0]), t_eval=T_OBS, rtol=1e-8, atol=1e-8)
    return np.mean((sol.y.T - LV_DATA) ** 2)


CHAIN_T = np.linspace(0.5, 10.0, 12)


def chain(rates: Any) -> Any:
    """Ten first-order transfers along a chain of six compartments with back-flows."""

    def rhs(t, x):
        forward = rates[:5] * x[:5]
        back = rates[5:] * x[1:]
        dx = np.zeros(6)
        dx[:5] = back - forward
        dx[1:] = dx[1:] + forward - back
        return dx

    sol = solve_ivp(rhs, (0.0, 10.0), np.eye(6)[0], t_eval=CHAIN_T, rtol=1e-8, atol=1e-10)
    return sol.y


CHAIN_DATA = chain(np.linspace(0.5, 1.4, 10))


def chain_fit(rates: Any) -> Any:
    return np.sum((chain(rates) - CHAIN_DATA) ** 2)


def gaussian_moments(theta: Any) -> Any:
    total = 0.0
    for k in range(3):
        value, _ = quad(
            lambda x, k=k: x**k * np.exp(-theta[0] * x**2 + theta[1] * x), -np.inf, np.inf
        )
        total = total + theta[2] ** k * value
    return total


def implied_vols(prices: Any) -> Any:
    def call(sigma, price, strike):
        d1 = (np.log(100.0 / strike) + 0.5 * sigma**2) / sigma
        return 100.0 * ndtr(d1) - strike * ndtr(d1 - sigma) - price

    vols = [brentq(call, 1e-4, 5.0, args=(prices[i], 90.0 + 5.0 * i), xtol=1e-14) for i in range(5)]
    return np.sum(np.array(vols) ** 2)


RIDGE_X = np.random.default_rng(0).standard_normal((40, 6))
RIDGE_Y = RIDGE_X @ np.linspace(-1.0, 1.0, 6) + 0.1 * np.random.default_rng(1).standard_normal(40)


def ridge_validation(log_lambda: Any) -> Any:
    def training(w):
        return np.sum((RIDGE_X[:30] @ w - RIDGE_Y[:30]) ** 2) + np.exp(log_lambda[0]) * np.sum(
            w * w
        )

    def gradient(w):
        return (
            2.0 * RIDGE_X[:30].T @ (RIDGE_X[:30] @ w - RIDGE_Y[:30])
            + 2.0 * np.exp(log_lambda[0]) * w
        )

    res = minimize(training, np.zeros(6), jac=gradient, method="BFGS", options={"gtol": 1e-10})
    return np.sum((RIDGE_X[30:] @ res.x - RIDGE_Y[30:]) ** 2)


PROGRAMS: list[tuple[str, Callable[..., Any], Any]] = [
    ("Lotka-Volterra fit, odeint (4 parameters)", lv_odeint, np.array([1.2, 0.38, 0.42, 0.09])),
    ("Lotka-Volterra fit, solve_ivp RK45 (4)", lv_solve_ivp, np.array([1.2, 0.38, 0.42, 0.09])),
    ("compartment chain fit, solve_ivp (10)", chain_fit, np.linspace(0.6, 1.3, 10)),
    ("Gaussian moments by quad (3)", gaussian_moments, np.array([1.0, 0.3, 0.5])),
    ("implied volatilities by brentq (5)", implied_vols, np.array([14.0, 10.5, 7.5, 5.0, 3.2])),
    ("ridge penalty through minimize (1)", ridge_validation, np.array([0.0])),
]


def central_differences(f: Callable[..., Any], x: Any, h: float = 1e-6) -> Any:
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    print("| program | primal | adgen grad / primal | finite differences / adgen grad |")
    print("| --- | ---: | ---: | ---: |")
    ratios, speedups = [], []
    for label, f, x in PROGRAMS:
        grad = adgen.grad(f)
        fd = central_differences(f, x)
        np.testing.assert_allclose(grad(x), fd, rtol=1e-2, atol=1e-6)  # (fd: noisy)
        calls = {
            "primal": lambda f=f, x=x: f(x),
            "adgen": lambda grad=grad, x=x: grad(x),
            "fd": lambda f=f, x=x: central_differences(f, x),
        }
        times: dict[str, list[float]] = {k: [] for k in calls}
        for _ in range(options.repeat):
            for key, call in calls.items():
                start = time.perf_counter()
                call()
                times[key].append(time.perf_counter() - start)
        primal, adg, fdt = (statistics.median(times[k]) for k in ("primal", "adgen", "fd"))
        ratios.append(adg / primal)
        speedups.append(fdt / adg)
        print(f"| {label} | {primal * 1e3:.2f} ms | {adg / primal:.1f} | {fdt / adg:.1f} |")
    print(f"| median | | {statistics.median(ratios):.1f} | {statistics.median(speedups):.1f} |")


if __name__ == "__main__":
    main()
