"""Reverse mode through ODE solvers by forward sensitivities (issue 36's speed): where an
``odeint`` or ``solve_ivp`` call has few differentiated inputs, a cotangent of ``y0`` or of
``args`` is the trajectory's Jacobian (integrated with the state in one solve, the right-hand
side's batched forward code giving every sensitivity in one pass) contracted with the
cotangent; with many it is the adjoint. Each program here is checked three ways: the
gradient adgen gives, the same gradient with the adjoint forced, and central differences at
tight tolerances; and the way taken is checked (the adjoint is not run where the
sensitivities apply, and is run where they do not)."""

from __future__ import annotations

import numpy as np
import pytest

import adgen

scipy = pytest.importorskip("scipy")
from scipy.integrate import odeint, solve_ivp  # noqa: E402

from adgen.rules.runtime import solvers  # noqa: E402

TIGHT = {"rtol": 1e-10, "atol": 1e-12}


def central(f, x, h=1e-3):
    """Five-point central differences, steps relative to each coordinate (error of order
    h**4; smaller steps would meet the solver's own error)."""
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h * max(abs(x.flat[i]), 0.1)
        step = e.flat[i]
        out.flat[i] = (8 * (f(x + e) - f(x - e)) - (f(x + 2 * e) - f(x - 2 * e))) / (12 * step)
    return out


@pytest.fixture
def adjoints(monkeypatch):
    """Counts the adjoint solves run (the sensitivities' way runs none)."""
    calls = []
    original = solvers._ode_adjoint

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(solvers, "_ode_adjoint", counted)
    return calls


def by_the_adjoint(monkeypatch, f, x):
    """``adgen.grad(f)(x)`` with the sensitivities' way turned off."""
    with monkeypatch.context() as m:
        m.setattr(solvers, "SENSITIVITIES_MAX", 0)
        return adgen.grad(f)(x)


# -- programs as users write them --------------------------------------------------------------
OBS_T = np.linspace(0.0, 3.0, 7)


def sir_odeint(params):
    """An epidemic model fitted to case counts: rates and the initial infected fraction."""
    beta, gamma, i0 = params[0], params[1], params[2]

    def rhs(y, t):
        s, i, r = y
        return [-beta * s * i, beta * s * i - gamma * i, gamma * i]

    ys = odeint(rhs, np.array([1.0 - i0, i0, 0.0]), OBS_T, **TIGHT)
    observed = np.array([0.01, 0.03, 0.08, 0.17, 0.25, 0.24, 0.18])
    return np.sum((ys[:, 1] - observed) ** 2)


def oscillator(y, t, a, b):
    return [y[1], -a * y[0] - b * y[1]]


def damped_oscillator_initial_state(y0):
    ys = odeint(oscillator, y0, OBS_T, args=(2.0, 0.3), **TIGHT)
    return np.sum(ys[:, 0] ** 2) + ys[-1, 1]


def pharmacokinetics_solve_ivp(theta):
    """Two-compartment dosing with first-order absorption, ``solve_ivp``'s RK45 (tfirst)."""

    def rhs(t, x, ka, k10, k12, k21):
        gut, central_, peripheral = x
        return np.array(
            [
                -ka * gut,
                ka * gut - (k10 + k12) * central_ + k21 * peripheral,
                k12 * central_ - k21 * peripheral,
            ]
        )

    sol = solve_ivp(
        rhs,
        (0.0, 6.0),
        np.array([100.0, 0.0, 0.0]),
        t_eval=np.linspace(0.5, 6.0, 8),  # (starts after t_span[0])
        args=(theta[0], theta[1], theta[2], theta[3]),
        **TIGHT,
    )
    return np.log(np.sum(sol.y[1] ** 2))


def stiff_chemistry_radau(k):
    """Robertson's stiff kinetics, rate constants scaled, Radau."""

    def rhs(t, y):
        return [
            -k[0] * y[0] + k[2] * y[1] * y[2],
            k[0] * y[0] - k[2] * y[1] * y[2] - k[1] * y[1] ** 2,
            k[1] * y[1] ** 2,
        ]

    sol = solve_ivp(
        rhs, (0.0, 5.0), [1.0, 0.0, 0.0], method="Radau", t_eval=[1.0, 5.0], rtol=1e-9, atol=1e-12
    )
    return sol.y[0, -1] + 1e4 * sol.y[1, -1]


def heat_rod(kappa):
    """A rod of six cells, an integer and an array among ``args`` (only the array is
    differentiated; the integer's cotangent is not asked)."""

    def rhs(u, t, kap, n):
        du = np.zeros(n)
        du[1:-1] = kap[1:-1] * (u[2:] - 2 * u[1:-1] + u[:-2])
        du[0] = kap[0] * (u[1] - u[0])
        du[-1] = kap[-1] * (u[-2] - u[-1])
        return du

    u0 = np.array([1.0, 0.8, 0.5, 0.2, 0.1, 0.0])
    ys = odeint(rhs, u0, OBS_T, args=(kappa, 6), **TIGHT)
    return np.sum(ys[-1] * np.arange(6.0))


PROGRAMS = [
    (sir_odeint, np.array([1.8, 0.6, 0.01])),
    (damped_oscillator_initial_state, np.array([1.0, -0.5])),
    (pharmacokinetics_solve_ivp, np.array([1.1, 0.3, 0.5, 0.2])),
    (stiff_chemistry_radau, np.array([0.04, 3.0, 1.0])),
    (heat_rod, np.array([0.5, 0.6, 0.7, 0.4, 0.5, 0.3])),
]


@pytest.mark.parametrize(("f", "x"), PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_few_inputs_take_the_sensitivities_and_match_the_adjoint_and_differences(
    f, x, adjoints, monkeypatch
):
    gradient = adgen.grad(f)(x)
    assert adjoints == [], "the sensitivities' way should have been taken"
    np.testing.assert_allclose(gradient, central(f, x), rtol=1e-6, atol=1e-9)
    adjoint = by_the_adjoint(monkeypatch, f, x)
    assert adjoints, "the adjoint should have been run with the sensitivities off"
    np.testing.assert_allclose(gradient, adjoint, rtol=1e-6, atol=1e-9)


def test_initial_state_and_parameters_together():
    def f(y0, k):
        ys = odeint(oscillator, y0, OBS_T, args=(k[0], k[1]), **TIGHT)
        return np.sum(ys**2)

    y0, k = np.array([1.0, 0.2]), np.array([2.0, 0.3])
    gy0, gk = adgen.grad(f, wrt=(0, 1))(y0, k)
    np.testing.assert_allclose(gy0, central(lambda v: f(v, k), y0), rtol=1e-6)
    np.testing.assert_allclose(gk, central(lambda v: f(y0, v), k), rtol=1e-6)


def test_many_parameters_take_the_adjoint(adjoints):
    """Forty rates: more inputs than one batched pass takes; the adjoint is run."""
    rng = np.random.default_rng(3)
    coupling = 0.1 * rng.standard_normal((5, 8))

    def f(w):
        def rhs(y, t):
            return -y + np.tanh(w.reshape(5, 8)[:, :5] @ y + coupling[:, 5:] @ np.ones(3))

        return np.sum(odeint(rhs, np.linspace(0.1, 0.5, 5), OBS_T, **TIGHT)[-1])

    w = 0.3 * rng.standard_normal(40)
    gradient = adgen.grad(f)(w)
    assert adjoints, "forty inputs should take the adjoint"
    np.testing.assert_allclose(gradient, central(f, w), rtol=1e-6, atol=1e-9)


def test_the_sensitivities_give_the_same_gradient_at_loose_default_tolerances():
    """solve_ivp's defaults (rtol 1e-3): both ways are LSODA at those tolerances, so they
    agree with each other to about the tolerance, as the derivative of the numerical
    solution does with the exact one."""

    def f(p):
        sol = solve_ivp(lambda t, y: [-p[0] * y[0] + p[1]], (0.0, 2.0), [1.0], t_eval=[2.0])
        return sol.y[0, -1]

    p = np.array([0.8, 0.4])
    exact = np.array(
        [
            -2.0 * np.exp(-1.6) * (1.0 - 0.5) + 0.5 * (-(1 - np.exp(-1.6)) / 0.8),
            (1.0 - np.exp(-1.6)) / 0.8,
        ]
    )
    np.testing.assert_allclose(adgen.grad(f)(p), exact, rtol=5e-3)
