"""Realistic programs through SciPy's solvers, written as users write them (issue 36): model
fits by ODEs, integrals with parameters, roots and optima, matrix equations. Each is
differentiated in both modes and checked against central differences of the whole
program at tight solver tolerances (a reference independent of adgen's rules)."""

from __future__ import annotations

import numpy as np
import pytest

import adgen

pytest.importorskip("scipy")
import scipy.linalg  # noqa: E402
from scipy import integrate, optimize  # noqa: E402
from scipy.special import ndtr  # noqa: E402

TIGHT = {"rtol": 1e-10, "atol": 1e-12}
DAYS = np.linspace(0.0, 20.0, 6)
CASES = []


def case(x0, step=1e-5, rtol=1e-5):
    def register(fn):
        CASES.append(pytest.param(fn, np.asarray(x0, dtype=float), step, rtol, id=fn.__name__))
        return fn

    return register


# -- ODEs ------------------------------------------------------------------------------------
def sir(y, t, beta, gamma):
    s, i, r = y
    return [-beta * s * i, beta * s * i - gamma * i, gamma * i]


@case([0.5, 0.1])
def sir_odeint_fit(params):
    beta, gamma = params
    ys = integrate.odeint(sir, [0.99, 0.01, 0.0], DAYS, args=(beta, gamma), **TIGHT)
    return np.sum((ys[:, 1] - 0.05) ** 2)


def _ivp_method(method):
    def sir_ivp(params):
        beta, gamma = params[0], params[1]

        def rhs(t, y):
            return np.array(sir(y, t, beta, gamma))

        sol = integrate.solve_ivp(
            rhs, (0.0, 20.0), np.array([0.99, 0.01, 0.0]), method=method, t_eval=DAYS, **TIGHT
        )
        return np.sum(sol.y[1] ** 2)

    sir_ivp.__name__ = f"sir_solve_ivp_{method}"
    return sir_ivp


for _method in ("RK45", "DOP853", "LSODA", "Radau", "BDF"):
    case([0.5, 0.1], rtol=1e-4)(_ivp_method(_method))


@case([0.04, 1e4, 3e7], step=1e-3, rtol=1e-4)
def robertson_stiff_chemistry(rates):
    k1, k2, k3 = rates[0], rates[1] * 1e-4, rates[2] * 1e-7  # (scaled to order one)

    def rhs(t, y):
        a, b, c = y[0], y[1], y[2]
        return np.array(
            [
                -k1 * a + k2 * 1e4 * b * c,
                k1 * a - k2 * 1e4 * b * c - k3 * 1e7 * b * b,
                k3 * 1e7 * b * b,
            ]
        )

    sol = integrate.solve_ivp(
        rhs, (0.0, 10.0), np.array([1.0, 0.0, 0.0]), method="Radau", t_eval=[1.0, 10.0], **TIGHT
    )
    return sol.y[0, -1] + 1e3 * sol.y[1, -1]


@case([1.2, 0.15, 30.0], rtol=1e-4)
def pharmacokinetics_fit(params):
    ka, ke, volume = params[0], params[1], params[2]

    def rhs(t, a):
        return np.array([-ka * a[0], ka * a[0] - ke * a[1]])

    sol = integrate.solve_ivp(
        rhs, (0.0, 24.0), np.array([100.0, 0.0]), t_eval=[1.0, 4.0, 12.0], **TIGHT
    )
    return np.sum(np.log(sol.y[1] / volume))


# -- quadrature --------------------------------------------------------------------------------
@case([1.3, 0.4])
def quad_parameters_in_the_integrand(theta):
    value, _ = integrate.quad(lambda x: np.exp(-theta[0] * x) * np.cos(theta[1] * x), 0.0, 3.0)
    return value


@case([2.0, 0.5])
def quad_parameter_in_a_limit(p):
    value, _ = integrate.quad(lambda x, c: np.sqrt(1.0 + c * x * x), 0.0, p[0], args=(p[1],))
    return value


@case([0.7])
def quad_infinite_interval(a):
    value, _ = integrate.quad(lambda x: np.exp(-a[0] * x * x) * x * x, -np.inf, np.inf)
    return value


@case([0.5, 2.0])
def quad_vec_spectrum(p):
    freqs = np.array([0.5, 1.0, 2.0])
    value, _ = integrate.quad_vec(lambda t: np.exp(-p[0] * t) * np.sin(freqs * p[1] * t), 0.0, 5.0)
    return np.sum(value**2)


@case([1.0, 2.0, 0.5])
def trapezoid_and_simpson_of_samples(p):
    x = np.linspace(0.0, 2.0, 21)
    y = p[0] * np.exp(-p[1] * x) + p[2] * x
    return integrate.trapezoid(y, x) + integrate.simpson(y, x=x)


# -- roots and optima --------------------------------------------------------------------------
@case([10.45, 100.0])
def implied_volatility_brentq(inputs):
    price, spot = inputs[0], inputs[1]

    def call_price(sigma):
        d1 = (np.log(spot / 100.0) + 0.5 * sigma**2) / sigma
        return spot * ndtr(d1) - 100.0 * ndtr(d1 - sigma) - price

    return optimize.brentq(call_price, 1e-4, 5.0, xtol=1e-15)


@case([0.3])
def kepler_equation_newton(e):
    return optimize.newton(lambda E: E - e[0] * np.sin(E) - 1.2, 1.2, tol=1e-15)


@case([1.5])
def root_scalar_secant(c):
    sol = optimize.root_scalar(lambda x: x**3 - c[0], x0=1.0, x1=2.0, xtol=1e-15)
    return sol.root


@case([1.0, 2.0])
def equilibrium_prices_fsolve(demand):
    def excess(p):
        return demand * p**-0.5 - np.array([1.0, 1.5]) * p + 0.1 * p[::-1]

    return np.sum(optimize.fsolve(excess, np.ones(2), xtol=1e-14))


@case([1.0, 2.0])
def equilibrium_prices_root(demand):
    def excess(p):
        return demand * p**-0.5 - np.array([1.0, 1.5]) * p + 0.1 * p[::-1]

    sol = optimize.root(excess, np.ones(2), tol=1e-14)
    return np.sum(sol.x)


@case([1.0, 3.0])
def minimize_bfgs(target):
    def objective(x):
        return np.sum((x - target) ** 2) + 0.5 * np.sum(x**4)

    res = optimize.minimize(
        objective, np.zeros(2), jac=lambda x: 2 * (x - target) + 2 * x**3, method="BFGS",
        options={"gtol": 1e-11},
    )  # fmt: skip
    return np.sum(res.x**2)


@case([0.2, 3.0])
def minimize_lbfgsb_with_an_active_bound(target):
    def objective(x):
        return np.sum((x - target) ** 2)

    res = optimize.minimize(
        objective, np.full(2, 1.0), jac=lambda x: 2 * (x - target), method="L-BFGS-B",
        bounds=[(0.5, 2.0), (0.5, 2.0)], options={"gtol": 1e-12},
    )  # fmt: skip
    return res.x[0] + 2.0 * res.x[1] + res.fun


@case([1.0, 0.5])
def least_squares_exponential_fit(truth):
    t = np.linspace(0.0, 3.0, 8)
    data = truth[0] * np.exp(-truth[1] * t) + 0.01 * np.sin(7.0 * t)

    def residuals(p):
        return p[0] * np.exp(-p[1] * t) - data

    res = optimize.least_squares(residuals, np.array([0.8, 0.4]), xtol=1e-15, ftol=1e-15)
    return res.x[0] + res.x[1]


# -- matrix equations --------------------------------------------------------------------------
@case([-1.0, 0.5, -2.0, 1.0])
def controllability_gramian_lyapunov(a):
    A = np.array([[a[0], a[1]], [0.0, a[2]]])
    B = np.array([[0.0], [a[3]]])
    gram = scipy.linalg.solve_continuous_lyapunov(A, -(B @ B.T))
    return np.trace(gram)


@case([1.0, 2.0, 0.5])
def sylvester_equation(p):
    A = np.array([[3.0, p[0]], [0.0, 4.0]])
    B = np.array([[p[1], 0.0], [1.0, 2.0]])
    Q = np.array([[1.0, p[2]], [0.0, 1.0]])
    return np.sum(scipy.linalg.solve_sylvester(A, B, Q) ** 2)


@case([-0.5, 0.2, 0.3])
def discrete_lyapunov_stationary_variance(a):
    A = np.array([[a[0], a[1]], [0.0, a[2]]])
    return np.trace(scipy.linalg.solve_discrete_lyapunov(A, np.eye(2)))


@case([1.0, 0.3, 2.0])
def lqr_cost_riccati(p):
    A = np.array([[0.0, 1.0], [p[0], -p[1]]])
    B = np.array([[0.0], [1.0]])
    X = scipy.linalg.solve_continuous_are(A, B, np.diag([p[2], 1.0]), np.array([[1.0]]))
    return np.trace(X)


# -- more of each kind -------------------------------------------------------------------------
@case([10.0, 5.0])
def lotka_volterra_initial_state(z0):
    def rhs(z, t):
        return [1.1 * z[0] - 0.4 * z[0] * z[1], 0.1 * z[0] * z[1] - 0.4 * z[1]]

    ys = integrate.odeint(rhs, z0, np.linspace(0.0, 3.0, 4), **TIGHT)
    return np.sum(ys[-1])


@case([0.6])
def minimize_scalar_bounded(c):
    res = optimize.minimize_scalar(
        lambda x: (x - c[0]) ** 2 + 0.2 * np.cos(3.0 * x), bounds=(0.0, 2.0), method="bounded",
        options={"xatol": 1e-12},
    )  # fmt: skip
    return res.x


@case([2.0, 0.7, 0.3], step=1e-3, rtol=1e-4)
def curve_fit_decay(truth):
    t = np.linspace(0.0, 4.0, 9)
    data = truth[0] * np.exp(-truth[1] * t) + truth[2]

    def model(x, a, k, c):
        return a * np.exp(-k * x) + c

    popt, _ = optimize.curve_fit(
        model, t, data + 0.01 * np.cos(5.0 * t), p0=(1.5, 0.5, 0.1), xtol=1e-15, ftol=1e-15
    )
    return popt[1]


@case([1.5, 0.8])
def fixed_quad_gauss_legendre(p):
    value, _ = integrate.fixed_quad(lambda x: np.exp(-p[0] * x) * x**2, 0.0, p[1], n=8)
    return value


@case([1.0, 0.5])
def cumulative_trapezoid_running_integral(p):
    x = np.linspace(0.0, 1.0, 11)
    running = integrate.cumulative_trapezoid(p[0] * np.sin(p[1] * x + x * x), x, initial=0.0)
    return np.sum(running**2)


def _needs_linalg_rules(fn):  # (adgen's scipy.linalg rules follow SciPy >= 1.16)
    from adgen.rules import scipy_linalg

    return not scipy_linalg.SUPPORTED and fn.__name__ in (
        "controllability_gramian_lyapunov",
        "sylvester_equation",
        "discrete_lyapunov_stationary_variance",
        "lqr_cost_riccati",
    )


def central(f, x, h):
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h * max(1.0, abs(x[i]))
        out[i] = (f(x + e) - f(x - e)) / (2 * e[i])
    return out


@pytest.mark.parametrize("fn, x0, step, rtol", CASES)
def test_solver_program_in_both_modes(fn, x0, step, rtol):
    if _needs_linalg_rules(fn):
        pytest.skip("adgen's scipy.linalg rules need SciPy 1.16 or newer")
    expected = central(fn, x0, step)
    scale = np.max(np.abs(expected))
    np.testing.assert_allclose(adgen.grad(fn)(x0), expected, rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(adgen.jacfwd(fn)(x0), expected, rtol=rtol, atol=rtol * scale)


def test_there_are_enough_programs():
    assert len(CASES) >= 28
