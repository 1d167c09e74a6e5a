"""Roots found by SciPy (``scipy.optimize``) differentiated by implicit differentiation
(``adgen/rules/optimize.py``): exact answers in both modes, refused options, failures."""

from __future__ import annotations

import math

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError

scipy = pytest.importorskip("scipy")
from scipy import optimize, special  # noqa: E402
from scipy.optimize import brentq, fsolve, newton, toms748  # noqa: E402

C, D = 2.0, 5.0


def cubic_root(c: float, d: float) -> float:
    """The real root of x^3 + c x - d (c > 0: one root), by numpy's polynomial roots."""
    roots = np.roots([1.0, 0.0, c, -d])
    return float(roots[np.argmin(abs(roots.imag))].real)


def cubic_derivatives(c: float, d: float) -> tuple[float, float]:
    """(dx/dc, dx/dd) of that root: x^3 + c x - d = 0 => (3x^2 + c) dx = -x dc + dd."""
    x = cubic_root(c, d)
    fx = 3 * x**2 + c
    return -x / fx, 1 / fx


# -- scalar roots ------------------------------------------------------------------------------


@pytest.mark.parametrize("finder", ["brentq", "brenth", "ridder", "bisect", "toms748"])
def test_bracketing_finders_both_modes(finder):
    solve = getattr(optimize, finder)

    def root(c, d):
        return solve(lambda x, c, d: x**3 + c * x - d, 0.0, 5.0, args=(c, d), xtol=1e-14)

    dc, dd = cubic_derivatives(C, D)
    np.testing.assert_allclose(root(C, D), cubic_root(C, D), rtol=1e-13)
    grads = adgen.grad(root, wrt=(0, 1))(C, D)
    np.testing.assert_allclose(grads, (dc, dd), rtol=1e-10)
    value, tangent = adgen.jvp(root, (C, D), (1.0, 2.0))
    np.testing.assert_allclose(value, cubic_root(C, D), rtol=1e-13)
    np.testing.assert_allclose(tangent, dc + 2 * dd, rtol=1e-10)
    value, pullback = adgen.vjp(root, C, D)
    np.testing.assert_allclose(pullback(3.0), (3 * dc, 3 * dd), rtol=1e-10)


def test_closure_nested_def_and_single_args():
    def root(c, d):
        def f(x, scale):
            return scale * (x**3 + c * x - d)

        return brentq(f, 0.0, 5.0, args=2.0, xtol=1e-14)

    dc, dd = cubic_derivatives(C, D)
    np.testing.assert_allclose(adgen.grad(root, wrt=(0, 1))(C, D), (dc, dd), rtol=1e-10)
    np.testing.assert_allclose(adgen.jvp(root, (C, D), (0.0, 1.0))[1], dd, rtol=1e-10)


def test_the_bracket_does_not_move_the_root():
    def root(c, hi):
        return brentq(lambda x: x**3 + c * x - D, 0.0, hi, xtol=1e-14)

    dc, _ = cubic_derivatives(C, D)
    np.testing.assert_allclose(adgen.grad(root, wrt=(0, 1))(C, 5.0), (dc, 0.0), rtol=1e-10)
    np.testing.assert_allclose(adgen.jvp(root, (C, 5.0), (0.0, 1.0))[1], 0.0)


def black_scholes(s, k, t, r, sigma):
    d1 = (np.log(s / k) + (r + 0.5 * sigma**2) * t) / (sigma * np.sqrt(t))
    d2 = d1 - sigma * np.sqrt(t)
    return s * special.ndtr(d1) - k * np.exp(-r * t) * special.ndtr(d2)


def implied_vol(price, s):
    k, t, r = 100.0, 0.5, 0.01

    def gap(sigma):
        return black_scholes(s, k, t, r, sigma) - price

    return brentq(gap, 1e-3, 3.0, xtol=1e-15, rtol=1e-15)


def test_implied_volatility_is_one_over_vega():
    s, k, t, r, sigma = 105.0, 100.0, 0.5, 0.01, 0.3
    price = black_scholes(s, k, t, r, sigma)
    d1 = (math.log(s / k) + (r + 0.5 * sigma**2) * t) / (sigma * math.sqrt(t))
    vega = s * math.exp(-0.5 * d1**2) / math.sqrt(2 * math.pi) * math.sqrt(t)
    delta = special.ndtr(d1)
    np.testing.assert_allclose(implied_vol(price, s), sigma, rtol=1e-12)
    # d sigma / d price = 1 / vega; d sigma / d s = -delta / vega (the price held)
    grads = adgen.grad(implied_vol, wrt=(0, 1))(price, s)
    np.testing.assert_allclose(grads, (1 / vega, -delta / vega), rtol=1e-8)
    np.testing.assert_allclose(
        adgen.jvp(implied_vol, (price, s), (1.0, 0.0))[1], 1 / vega, rtol=1e-8
    )


def test_newton_scalar_with_and_without_fprime():
    def secant(c, d):
        return newton(lambda x: x**3 + c * x - d, 1.0, tol=1e-14)

    def with_fprime(c, d):
        def f(x):
            return x**3 + c * x - d

        def fp(x):
            return 3 * x**2 + c

        return newton(f, 1.0, fprime=fp, tol=1e-14)

    dc, dd = cubic_derivatives(C, D)
    for root in (secant, with_fprime):
        np.testing.assert_allclose(adgen.grad(root, wrt=(0, 1))(C, D), (dc, dd), rtol=1e-9)
        np.testing.assert_allclose(adgen.jvp(root, (C, D), (1.0, 0.0))[1], dc, rtol=1e-9)


def test_newton_vectorised():
    def roots(c, d):
        return newton(lambda x, c, d: x**3 + c * x - d, np.ones(3), args=(c, d), tol=1e-14)

    c, d = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 2.0])
    expected = [cubic_derivatives(ci, di) for ci, di in zip(c, d)]
    dc = np.array([e[0] for e in expected])
    dd = np.array([e[1] for e in expected])
    np.testing.assert_allclose(adgen.jacfwd(roots, wrt=0)(c, d), np.diag(dc), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(adgen.jacrev(roots, wrt=1)(c, d), np.diag(dd), rtol=1e-9, atol=1e-15)


def test_loss_built_on_roots():
    """Fit c so that the roots of x^3 + c x - d_i are near targets: the gradient of the
    squared error, by the chain rule through each root."""
    ds = np.array([1.0, 3.0, 6.0])
    targets = np.array([0.5, 1.0, 1.5])

    def loss(c):
        total = 0.0
        for i in range(3):
            x = brentq(lambda x, d: x**3 + c * x - d, -10.0, 10.0, args=(ds[i],), xtol=1e-14)
            total = total + (x - targets[i]) ** 2
        return total

    c = 1.5
    expected = sum(
        2 * (cubic_root(c, d) - t) * cubic_derivatives(c, d)[0] for d, t in zip(ds, targets)
    )
    np.testing.assert_allclose(adgen.grad(loss)(c), expected, rtol=1e-9)
    np.testing.assert_allclose(adgen.jvp(loss, (c,), (1.0,))[1], expected, rtol=1e-9)


# -- vector roots ------------------------------------------------------------------------------


def test_fsolve_sum_and_product():
    def solve(p):
        def f(x):
            return np.array([x[0] + x[1] - p[0], x[0] * x[1] - p[1]])

        return fsolve(f, np.array([0.5, 3.5]), xtol=1e-13)

    p = np.array([4.0, 3.0])
    expected = np.array([[-0.5, 0.5], [1.5, -0.5]])  # inverse of [[1, 1], [x1, x0]]
    np.testing.assert_allclose(solve(p), [1.0, 3.0], rtol=1e-12)
    np.testing.assert_allclose(adgen.jacfwd(solve)(p), expected, rtol=1e-10)
    np.testing.assert_allclose(adgen.jacrev(solve)(p), expected, rtol=1e-10)


def excess_demand(p, a, s):
    """Two goods: demand a_i p_i^-1/2 (p_j / p_i)^0.2, supply s_i p_i."""
    cross = (p[::-1] / p) ** 0.2
    return a * p**-0.5 * cross - s * p


def excess_jacobians(p, a, s):
    """(d excess/dp, d excess/da, d excess/ds) written out by hand."""
    cross = (p[::-1] / p) ** 0.2
    demand = a * p**-0.5 * cross
    jp = np.diag(-0.7 * demand / p - s)
    jp[0, 1] = 0.2 * demand[0] / p[1]
    jp[1, 0] = 0.2 * demand[1] / p[0]
    return jp, np.diag(p**-0.5 * cross), np.diag(-p)


def test_fsolve_equilibrium_prices_both_modes():
    def equilibrium(a, s):
        return fsolve(excess_demand, np.ones(2), args=(a, s), xtol=1e-14)

    a, s = np.array([4.0, 9.0]), np.array([1.0, 2.0])
    p = equilibrium(a, s)
    np.testing.assert_allclose(excess_demand(p, a, s), 0.0, atol=1e-12)
    jp, ja, js = excess_jacobians(p, a, s)
    dp_da, dp_ds = -np.linalg.solve(jp, ja), -np.linalg.solve(jp, js)
    np.testing.assert_allclose(adgen.jacfwd(equilibrium, wrt=0)(a, s), dp_da, rtol=1e-9)
    np.testing.assert_allclose(adgen.jacrev(equilibrium, wrt=1)(a, s), dp_ds, rtol=1e-9)
    value, pullback = adgen.vjp(equilibrium, a, s)
    ga, gs = pullback(np.array([1.0, -2.0]))
    np.testing.assert_allclose(ga, np.array([1.0, -2.0]) @ dp_da, rtol=1e-9)
    np.testing.assert_allclose(gs, np.array([1.0, -2.0]) @ dp_ds, rtol=1e-9)
    # revenue at equilibrium: a loss built on the root
    revenue = lambda a, s: np.sum(equilibrium(a, s) ** 2 * s)  # noqa: E731
    expected = (2 * p * s) @ dp_da
    np.testing.assert_allclose(adgen.grad(revenue)(a, s), expected, rtol=1e-9)


def test_fsolve_scalar_start_and_single_args():
    def root(c):
        return fsolve(lambda x, c: x**3 + c * x - D, 1.0, args=c, xtol=1e-14)[0]

    dc, _ = cubic_derivatives(C, D)
    np.testing.assert_allclose(adgen.grad(root)(C), dc, rtol=1e-9)
    np.testing.assert_allclose(adgen.jvp(root, (C,), (1.0,))[1], dc, rtol=1e-9)


# -- refused and failing ----------------------------------------------------------------------


def test_full_output_and_disp_are_refused_by_name():
    def full(c):
        x, report = brentq(lambda x: x**3 + c * x - D, 0.0, 5.0, full_output=True)
        return x

    def quiet(c):
        return brentq(lambda x: x**3 + c * x - D, 0.0, 5.0, disp=False)

    def fs_full(c):
        return fsolve(lambda x: x**3 + c * x - D, 1.0, full_output=1)[0]

    for fn, option in ((full, "full_output"), (quiet, "disp"), (fs_full, "full_output")):
        with pytest.raises(AdgenError, match=option):
            adgen.grad(fn)(C)


def test_fsolve_that_did_not_converge_has_no_derivative():
    def no_root(c):
        return fsolve(lambda x: x**2 + c, 1.0)[0]

    with pytest.warns(RuntimeWarning):
        with pytest.raises(AdgenError, match="did not converge"):
            adgen.grad(no_root)(1.0)
    with pytest.warns(RuntimeWarning):
        with pytest.raises(AdgenError, match="did not converge"):
            adgen.jvp(no_root, (1.0,), (1.0,))


def test_a_root_where_the_function_is_flat_has_no_derivative():
    def root(c):
        return brentq(lambda x: c * (x - 1.0), 0.0, 1.0)

    with pytest.raises(AdgenError, match="singular"):
        adgen.grad(root)(0.0)


# -- minima ------------------------------------------------------------------------------------

A = np.array([[3.0, 1.0], [1.0, 2.0]])


def quartic_fit(b):
    """min over x of 1/2 x'Ax - b'x + 1/4 sum x^4: H = A + 3 diag(x^2), dx*/db = H^-1."""

    def f(x):
        return 0.5 * x @ A @ x - b @ x + 0.25 * np.sum(x**4)

    res = minimize(
        f, np.zeros(2), method="BFGS", jac=lambda x: A @ x - b + x**3, options={"gtol": 1e-9}
    )
    return res.x


from scipy.optimize import minimize  # noqa: E402


def test_minimize_minimizer_both_modes():
    b = np.array([1.0, -2.0])
    x = quartic_fit(b)
    np.testing.assert_allclose(A @ x - b + x**3, 0.0, atol=1e-9)
    expected = np.linalg.inv(A + 3 * np.diag(x**2))
    np.testing.assert_allclose(adgen.jacfwd(quartic_fit)(b), expected, rtol=1e-7)
    np.testing.assert_allclose(adgen.jacrev(quartic_fit)(b), expected, rtol=1e-7)


def test_minimize_value_by_the_envelope_theorem_and_fields():
    def value(b):
        def f(x, b):
            return 0.5 * x @ A @ x - b @ x + 0.25 * np.sum(x**4)

        def jac(x, b):
            return A @ x - b + x**3

        res = minimize(f, np.zeros(2), args=(b,), method="BFGS", jac=jac, options={"gtol": 1e-9})
        assert res.success and res.nit > 0, res.message
        return res.fun

    b = np.array([1.0, -2.0])
    x = quartic_fit(b)
    np.testing.assert_allclose(adgen.grad(value)(b), -x, rtol=1e-6)
    np.testing.assert_allclose(adgen.jvp(value, (b,), (np.array([1.0, 0.0]),))[1], -x[0], rtol=1e-6)


def test_minimize_with_an_active_bound():
    """L-BFGS-B with x[1] held at its lower bound 0: that coordinate does not move."""

    def fit(b):
        res = minimize(
            lambda x: np.sum((x - b) ** 2) + x[0] * x[1],
            np.array([0.5, 0.5]),
            method="L-BFGS-B",
            bounds=[(None, None), (0.0, None)],
            options={"gtol": 1e-12, "ftol": 1e-15},
        )
        return res.x

    b = np.array([1.0, -1.0])  # x = (1, 0): d x0 / d b0 = 1, the rest 0
    np.testing.assert_allclose(fit(b), [1.0, 0.0], atol=1e-8)
    expected = np.array([[1.0, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(adgen.jacfwd(fit)(b), expected, atol=1e-9)
    np.testing.assert_allclose(adgen.jacrev(fit)(b), expected, atol=1e-9)


def test_bilevel_ridge_regularisation():
    """Outer loss: validation error of ridge weights w*(lam) = argmin |Xw - y|^2 + lam |w|^2;
    dw*/dlam = -(X'X + lam I)^-1 w*."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(8, 3)), rng.normal(size=8)
    Xv, yv = rng.normal(size=(5, 3)), rng.normal(size=5)

    def validation(lam):
        def train(w):
            return np.sum((X @ w - y) ** 2) + lam * np.sum(w**2)

        def gradient(w):
            return 2 * X.T @ (X @ w - y) + 2 * lam * w

        res = minimize(train, np.zeros(3), method="BFGS", jac=gradient, options={"gtol": 1e-9})
        return np.sum((Xv @ res.x - yv) ** 2)

    lam = 0.7
    w = np.linalg.solve(X.T @ X + lam * np.eye(3), X.T @ y)
    dw = -np.linalg.solve(X.T @ X + lam * np.eye(3), w)
    expected = 2 * (Xv @ w - yv) @ (Xv @ dw)
    np.testing.assert_allclose(adgen.grad(validation)(lam), expected, rtol=1e-8)
    np.testing.assert_allclose(adgen.jvp(validation, (lam,), (1.0,))[1], expected, rtol=1e-8)


def test_minimize_result_used_other_than_by_its_fields_is_refused():
    def direct(b):  # a field read at once: as through a name
        return minimize(
            lambda x: np.sum((x - b) ** 2 + x**4),
            np.zeros(2),
            jac=lambda x: 2.0 * (x - b) + 4.0 * x**3,
            tol=1e-10,
        ).x

    def whole(b):
        res = minimize(lambda x: np.sum((x - b) ** 2), np.zeros(2))
        return res

    def constrained(b):
        res = minimize(lambda x: np.sum((x - b) ** 2), np.zeros(2), constraints=[])
        return res.x

    b = np.array([0.5, 1.5])
    x = direct(b)
    np.testing.assert_allclose(
        adgen.jacfwd(direct)(b), np.diag(2.0 / (2.0 + 12.0 * x**2)), rtol=1e-5
    )
    with pytest.raises(AdgenError, match="using `res`, the result of minimize, as a value"):
        adgen.grad(lambda b: np.sum(whole(b).x))(np.ones(2))
    with pytest.raises(AdgenError, match="constraints"):
        adgen.jacfwd(constrained)(np.ones(2))


def test_minimize_that_did_not_converge_has_no_derivative():
    def fit(b):
        res = minimize(lambda x: np.sum((x - b) ** 4), np.zeros(2), options={"maxiter": 2})
        return res.x

    with pytest.raises(AdgenError, match="did not converge"):
        adgen.jacrev(fit)(np.ones(2))


def test_reverse_over_reverse_through_a_root_is_refused_naming_forward_mode():
    def root(c):
        return brentq(lambda x: x**3 + c * x - D, 0.0, 5.0, xtol=1e-14)

    with pytest.raises(AdgenError, match="root finder differentiated in reverse mode again"):
        adgen.grad(adgen.grad(root))(C)


@pytest.mark.parametrize("finder", ["brentq", "toms748", "newton"])
def test_hessian_and_hvp_through_a_root(finder):
    def loss(theta):
        c, d = theta[0], theta[1]
        if finder == "brentq":
            x = brentq(lambda x: x**3 + c * x - d, 0.0, 3.0, xtol=1e-15)
        elif finder == "toms748":
            x = toms748(lambda x: x**3 + c * x - d, 0.0, 3.0, xtol=1e-15)
        else:
            x = newton(lambda x: x**3 + c * x - d, 1.0, tol=1e-15)
        return x**2 + c * x * d

    theta = np.array([1.0, 2.0])
    grad = adgen.grad(loss)
    h = 1e-5
    expected = np.array([(grad(theta + h * e) - grad(theta - h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(adgen.hessian(loss)(theta), expected, rtol=1e-7, atol=1e-9)
    v = np.array([1.0, -0.5])
    np.testing.assert_allclose(adgen.hvp(loss)(theta, v), expected @ v, rtol=1e-7, atol=1e-9)
