"""``root_scalar``, ``root``, ``minimize_scalar``, ``least_squares`` (``curve_fit``)
differentiated by implicit differentiation (``adgen/rules/optimize.py``): exact answers in
both modes, closures, refused options and fields, failures that raise."""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError

scipy = pytest.importorskip("scipy")
from scipy.optimize import least_squares, minimize_scalar, root, root_scalar  # noqa: E402

C, D = 2.0, 5.0


def cubic_root(c: float, d: float) -> float:
    """The real root of x^3 + c x - d (c > 0: one root)."""
    roots = np.roots([1.0, 0.0, c, -d])
    return float(roots[np.argmin(abs(roots.imag))].real)


def cubic_derivatives(c: float, d: float) -> tuple[float, float]:
    """(dx/dc, dx/dd): (3x^2 + c) dx = -x dc + dd."""
    x = cubic_root(c, d)
    return -x / (3 * x**2 + c), 1 / (3 * x**2 + c)


# -- root_scalar -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"bracket": (0.0, 5.0), "method": "brentq"},
        {"bracket": (0.0, 5.0), "method": "toms748"},
        {"bracket": (0.0, 5.0)},
        {"x0": 1.0, "x1": 2.0, "method": "secant"},
    ],
    ids=["brentq", "toms748", "default", "secant"],
)
def test_root_scalar_both_modes(options):
    def root_of(c, d):
        sol = root_scalar(lambda x, c, d: x**3 + c * x - d, args=(c, d), xtol=1e-14, **options)
        assert sol.converged and sol.iterations > 0 and sol.function_calls > 0, sol.flag
        return sol.root

    dc, dd = cubic_derivatives(C, D)
    np.testing.assert_allclose(root_of(C, D), cubic_root(C, D), rtol=1e-13)
    np.testing.assert_allclose(adgen.grad(root_of, wrt=(0, 1))(C, D), (dc, dd), rtol=1e-10)
    value, tangent = adgen.jvp(root_of, (C, D), (1.0, 2.0))
    np.testing.assert_allclose(value, cubic_root(C, D), rtol=1e-13)
    np.testing.assert_allclose(tangent, dc + 2 * dd, rtol=1e-10)


def test_root_scalar_newton_with_fprime_closure():
    def root_of(c, d):
        def f(x):
            return x**3 + c * x - d

        def fp(x):
            return 3 * x**2 + c

        sol = root_scalar(f, fprime=fp, x0=1.0, method="newton", xtol=1e-14)
        return sol.root

    dc, dd = cubic_derivatives(C, D)
    np.testing.assert_allclose(adgen.grad(root_of, wrt=(0, 1))(C, D), (dc, dd), rtol=1e-10)
    np.testing.assert_allclose(adgen.jvp(root_of, (C, D), (0.0, 1.0))[1], dd, rtol=1e-10)


def test_root_scalar_not_converged_has_no_derivative():
    def no_root(c):
        sol = root_scalar(lambda x: x**2 + c, x0=1.0, x1=2.0, method="secant", maxiter=5)
        return sol.root

    assert not root_scalar(
        lambda x: x**2 + 1.0, x0=1.0, x1=2.0, method="secant", maxiter=5
    ).converged
    with pytest.raises(AdgenError, match="did not converge"):
        adgen.grad(no_root)(1.0)
    with pytest.raises(AdgenError, match="did not converge"):
        adgen.jvp(no_root, (1.0,), (1.0,))


def test_root_scalar_differentiated_bracket_and_unknown_field_are_refused():
    def moving_bracket(c, hi):
        sol = root_scalar(lambda x: x**3 + c * x - D, bracket=(0.0, hi))
        return sol.root

    def method_field(c):
        sol = root_scalar(lambda x: x**3 + c * x - D, bracket=(0.0, 5.0))
        return sol.root if sol.method == "brentq" else 0.0

    def direct(c):  # a field read at once: as through a name
        return root_scalar(lambda x: x**3 + c * x - D, bracket=(0.0, 5.0), xtol=1e-14).root

    def whole(c):
        sol = root_scalar(lambda x: x**3 + c * x - D, bracket=(0.0, 5.0))
        return [sol][0].root

    with pytest.raises(AdgenError, match="bracket"):
        adgen.grad(lambda c, hi: moving_bracket(c, hi), wrt=(0, 1))(C, 5.0)
    with pytest.raises(AdgenError, match="method"):
        adgen.grad(method_field)(C)
    x = direct(C)
    np.testing.assert_allclose(adgen.grad(direct)(C), -x / (3 * x**2 + C), rtol=1e-8)
    with pytest.raises(AdgenError, match="the result of root_scalar, as a value"):
        adgen.grad(whole)(C)


# -- root --------------------------------------------------------------------------------------


def excess_demand(p, a, s):
    cross = (p[::-1] / p) ** 0.2
    return a * p**-0.5 * cross - s * p


def excess_jacobians(p, a, s):
    """(d excess/dp, d excess/da, d excess/ds) by hand."""
    cross = (p[::-1] / p) ** 0.2
    demand = a * p**-0.5 * cross
    jp = np.diag(-0.7 * demand / p - s)
    jp[0, 1] = 0.2 * demand[0] / p[1]
    jp[1, 0] = 0.2 * demand[1] / p[0]
    return jp, np.diag(p**-0.5 * cross), np.diag(-p)


@pytest.mark.parametrize("method", ["hybr", "lm", "krylov"])
def test_root_equilibrium_both_modes(method):
    tol = 1e-14 if method != "krylov" else 1e-12
    # (krylov's `tol` alone can stop short of the root -- SciPy 1.17 here reports success
    # eight steps in, residual 0.13 -- so its residual tolerance is given too)
    options = {"fatol": tol} if method == "krylov" else None

    def equilibrium(a, s):
        sol = root(excess_demand, np.ones(2), args=(a, s), method=method, tol=tol, options=options)
        assert sol.success, sol.message
        return sol.x

    a, s = np.array([4.0, 9.0]), np.array([1.0, 2.0])
    p = equilibrium(a, s)
    np.testing.assert_allclose(excess_demand(p, a, s), 0.0, atol=1e-10)
    jp, ja, js = excess_jacobians(p, a, s)
    dp_da, dp_ds = -np.linalg.solve(jp, ja), -np.linalg.solve(jp, js)
    np.testing.assert_allclose(adgen.jacfwd(equilibrium, wrt=0)(a, s), dp_da, rtol=1e-8)
    np.testing.assert_allclose(adgen.jacrev(equilibrium, wrt=0)(a, s), dp_da, rtol=1e-8)
    np.testing.assert_allclose(adgen.jacfwd(equilibrium, wrt=1)(a, s), dp_ds, rtol=1e-8)
    np.testing.assert_allclose(adgen.jacrev(equilibrium, wrt=1)(a, s), dp_ds, rtol=1e-8)


def test_root_closure_and_residual_field():
    """x0 + x1 = p0, x0 x1 = p1 (a nested def reading p); sol.fun is 0 at the exact root
    for every p, so its derivative is 0; the loss reads both."""

    def solve(p):
        def f(x):
            return np.array([x[0] + x[1] - p[0], x[0] * x[1] - p[1]])

        sol = root(f, np.array([0.5, 3.5]), tol=1e-13)
        return np.sum(sol.x * np.array([1.0, 2.0])) + np.sum(sol.fun)

    p = np.array([4.0, 3.0])
    inverse = np.array([[-0.5, 0.5], [1.5, -0.5]])  # d x / d p
    expected = np.array([1.0, 2.0]) @ inverse
    np.testing.assert_allclose(adgen.grad(solve)(p), expected, rtol=1e-10)
    np.testing.assert_allclose(
        adgen.jvp(solve, (p,), (np.array([1.0, 0.0]),))[1], expected[0], rtol=1e-10
    )


def test_root_not_converged_and_refused():
    def no_root(c):
        sol = root(lambda x: x**2 + c, np.array([1.0]), options={"maxfev": 20})
        return sol.x[0]

    def with_callback(c):
        sol = root(lambda x: x**3 - c, np.array([1.0]), method="krylov", callback=print)
        return sol.x[0]

    def jac_true(c):
        sol = root(lambda x: (x**3 - c, 3 * x**2), np.array([1.0]), jac=True)
        return sol.x[0]

    with pytest.raises(AdgenError, match="did not converge"):
        adgen.grad(no_root)(1.0)
    with pytest.raises(AdgenError, match="did not converge"):
        adgen.jvp(no_root, (1.0,), (1.0,))
    with pytest.raises(AdgenError, match="callback"):
        adgen.grad(with_callback)(8.0)
    with pytest.raises(AdgenError, match="jac"):
        adgen.grad(jac_true)(8.0)


# -- minimize_scalar ---------------------------------------------------------------------------


def quartic_minimizer(a: float, b: float) -> float:
    """The minimizer of (x - a)^2 + b x^4 (b > 0): 2 (x - a) + 4 b x^3 = 0."""
    roots = np.roots([4 * b, 0.0, 2.0, -2 * a])
    return float(roots[np.argmin(abs(roots.imag))].real)


@pytest.mark.parametrize("method", ["brent", "golden", "bounded"])
def test_minimize_scalar_minimizer_and_value_both_modes(method):
    def bounded(a, b):
        def f(x):
            return (x - a) ** 2 + b * x**4

        res = minimize_scalar(f, bounds=(-3.0, 3.0), method="bounded", options={"xatol": 1e-12})
        assert res.success and res.nfev > 0, res.message
        return res.x + 10.0 * res.fun

    def unbounded(a, b):
        def f(x):
            return (x - a) ** 2 + b * x**4

        res = minimize_scalar(f, method=method, tol=1e-12)
        assert res.success and res.nfev > 0, res.message
        return res.x + 10.0 * res.fun

    fit = bounded if method == "bounded" else unbounded
    a, b = 1.0, 0.5
    x = quartic_minimizer(a, b)
    h = 2 + 12 * b * x**2
    dx = np.array([2.0, -4 * x**3]) / h
    dvalue = np.array([-2 * (x - a), x**4])  # the envelope theorem
    expected = dx + 10.0 * dvalue
    rtol = 1e-8 if method == "brent" else 1e-7
    np.testing.assert_allclose(adgen.grad(fit, wrt=(0, 1))(a, b), expected, rtol=rtol)
    np.testing.assert_allclose(adgen.jvp(fit, (a, b), (1.0, 0.0))[1], expected[0], rtol=rtol)
    np.testing.assert_allclose(adgen.jvp(fit, (a, b), (0.0, 1.0))[1], expected[1], rtol=rtol)


def test_minimize_scalar_at_a_bound_does_not_move():
    def fit(a):
        res = minimize_scalar(lambda x: (x - a) ** 2, bounds=(0.0, 1.0), method="bounded")
        return res.x + res.fun

    # a = 2: x* = 1 (the upper bound), fun = (1 - a)^2: d/da = 0 + 2 (a - 1) = 2
    np.testing.assert_allclose(adgen.grad(fit)(2.0), 2.0, rtol=1e-4)
    np.testing.assert_allclose(adgen.jvp(fit, (2.0,), (1.0,))[1], 2.0, rtol=1e-4)
    # a = 0.5, inside: x* = a, fun = 0
    np.testing.assert_allclose(adgen.grad(fit)(0.5), 1.0, rtol=1e-6)


def test_minimize_scalar_refusals_and_failures():
    def moving_bounds(a, hi):
        res = minimize_scalar(lambda x: (x - a) ** 2, bounds=(0.0, hi), method="bounded")
        return res.x

    def not_converged(a):
        res = minimize_scalar(
            lambda x: (x - a) ** 2 + 0.1 * x**4, bounds=(-5.0, 5.0), method="bounded",
            options={"maxiter": 3},
        )  # fmt: skip
        return res.x

    def concave(a):
        res = minimize_scalar(lambda x: np.cos(x) + a * x, bracket=(2.5, 3.1, 3.7), tol=1e-12)
        return res.x

    with pytest.raises(AdgenError, match="bounds"):
        adgen.grad(moving_bounds, wrt=(0, 1))(2.0, 1.0)
    with pytest.raises(AdgenError, match="did not converge"):
        adgen.grad(not_converged)(1.0)
    # cos(x) + a x at a = 0 has its minimum at pi with f'' = 1 > 0: fine; a flat minimum isn't
    np.testing.assert_allclose(adgen.grad(concave)(0.0), -1.0, rtol=1e-6)

    def flat(a):
        res = minimize_scalar(lambda x: (x - a) ** 4, tol=1e-12)
        return res.x

    with pytest.raises(AdgenError, match="not positive"):
        adgen.grad(flat)(1.0)


# -- least_squares -----------------------------------------------------------------------------

T = np.linspace(0.0, 2.0, 7)
Y = 2.0 * np.exp(-0.7 * T) + 0.05 * np.random.default_rng(1).normal(size=7)


def decay_fit(a, y):
    """A nonlinear fit whose residuals are not 0 at the optimum (the second-order term of the
    Hessian matters), with the analytic Jacobian for tight convergence."""

    def resid(p):
        return p[0] * np.exp(-p[1] * T) - y + a * p[1] ** 2

    def jac(p):
        e = np.exp(-p[1] * T)
        return np.stack([e, -p[0] * T * e + 2 * a * p[1] + 0 * T], axis=1)

    return least_squares(resid, np.array([1.0, 0.5]), jac=jac, xtol=1e-15, ftol=1e-15, gtol=1e-15)


def polished(a, y):
    """decay_fit's x refined by Newton's method on J'r = 0 (finite-difference Hessian):
    the reference solution for finite differences of the whole computation."""
    x = decay_fit(a, y).x

    def gradient(p):
        e = np.exp(-p[1] * T)
        r = p[0] * e - y + a * p[1] ** 2
        return np.stack([e, -p[0] * T * e + 2 * a * p[1]], axis=1).T @ r

    for _ in range(4):
        hess = np.stack(
            [(gradient(x + 1e-6 * e) - gradient(x - 1e-6 * e)) / 2e-6 for e in np.eye(2)], 1
        )
        x = x - np.linalg.solve(hess, gradient(x))
    return x


def test_least_squares_solution_both_modes():
    def fit(a, y):
        res = decay_fit(a, y)
        assert res.success and res.nfev > 0, res.message
        return res.x

    a, h = 0.3, 1e-5
    fd_a = (polished(a + h, Y) - polished(a - h, Y)) / (2 * h)
    fd_y = np.stack(
        [(polished(a, Y + h * e) - polished(a, Y - h * e)) / (2 * h) for e in np.eye(7)], 1
    )
    for jac in (adgen.jacfwd, adgen.jacrev):
        da, dy = jac(fit, wrt=(0, 1))(a, Y)
        np.testing.assert_allclose(da, fd_a, rtol=1e-7)
        np.testing.assert_allclose(dy, fd_y, rtol=1e-6, atol=1e-9)


def test_least_squares_cost_and_residuals():
    weights = np.arange(7.0)

    def objective(a, y):
        res = decay_fit(a, y)
        return 3.0 * res.cost + np.sum(res.fun * weights)

    def reference(a, y):
        x = polished(a, y)
        r = x[0] * np.exp(-x[1] * T) - y + a * x[1] ** 2
        return 1.5 * np.sum(r**2) + np.sum(r * weights)

    a, h = 0.3, 1e-5
    fd_a = (reference(a + h, Y) - reference(a - h, Y)) / (2 * h)
    fd_y = np.array(
        [(reference(a, Y + h * e) - reference(a, Y - h * e)) / (2 * h) for e in np.eye(7)]
    )
    ga, gy = adgen.grad(objective, wrt=(0, 1))(a, Y)
    np.testing.assert_allclose(ga, fd_a, rtol=1e-7)
    np.testing.assert_allclose(gy, fd_y, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(adgen.jvp(objective, (a, Y), (1.0, np.zeros(7)))[1], fd_a, rtol=1e-7)
    np.testing.assert_allclose(
        adgen.jvp(objective, (a, Y), (0.0, np.eye(7)[2]))[1], fd_y[2], rtol=1e-6
    )


def test_least_squares_linear_fit_closed_form():
    """Linear residuals X p - y with the default jac ('2-point') and '3-point': p = X⁺ y,
    dp/dy = X⁺; the cost's gradient is y - X p by the envelope theorem."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6, 2))
    y = rng.normal(size=6)

    def fit(y):
        res = least_squares(
            lambda p: X @ p - y, np.zeros(2), jac="3-point", xtol=1e-15, ftol=1e-15, gtol=1e-15
        )
        return res.x

    def cost(y):
        res = least_squares(lambda p: X @ p - y, np.zeros(2))
        return res.cost

    pinv = np.linalg.pinv(X)
    np.testing.assert_allclose(adgen.jacfwd(fit)(y), pinv, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(adgen.jacrev(fit)(y), pinv, rtol=1e-9, atol=1e-12)
    p = pinv @ y
    np.testing.assert_allclose(adgen.grad(cost)(y), y - X @ p, rtol=1e-6, atol=1e-9)


def test_least_squares_active_bound():
    """min (p0 - y0)^2 + (p1 - y1)^2 + (p0 + p1 - y2)^2 over p1 <= 0.1 with the bound active:
    p1 does not move, p0 = (y0 + y2 - 0.1) / 2."""

    def fit(y):
        def r(p):
            return np.array([p[0] - y[0], p[1] - y[1], p[0] + p[1] - y[2]])

        res = least_squares(
            r,
            np.zeros(2),
            bounds=([-np.inf, -np.inf], [np.inf, 0.1]),
            xtol=1e-15,
            ftol=1e-15,
            gtol=1e-15,
        )
        return res.x

    y = np.array([1.0, 2.0, 1.5])
    np.testing.assert_allclose(fit(y), [(1.0 + 1.5 - 0.1) / 2, 0.1], rtol=1e-8)
    expected = np.array([[0.5, 0.0, 0.5], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(adgen.jacfwd(fit)(y), expected, atol=1e-9)
    np.testing.assert_allclose(adgen.jacrev(fit)(y), expected, atol=1e-9)


def test_least_squares_refusals_and_failures():
    def robust(y):
        res = least_squares(lambda p: p - y, np.zeros(2), loss="soft_l1")
        return res.x

    def keyword(y):
        res = least_squares(lambda p, s: s * (p - y), np.zeros(2), kwargs={"s": 2.0})
        return res.x

    def unconverged(y):
        res = least_squares(lambda p: np.exp(p) - y, np.zeros(2), max_nfev=2)
        return res.x

    def undetermined(y):  # p0 + p1 only is determined: a singular Hessian
        res = least_squares(lambda p: np.array([p[0] + p[1] - y[0]]), np.zeros(2))
        return res.x

    y = np.array([2.0, 3.0])
    with pytest.raises(AdgenError, match="loss"):
        adgen.jacrev(robust)(y)
    with pytest.raises(AdgenError, match="kwargs"):
        adgen.jacrev(keyword)(y)
    with pytest.raises(AdgenError, match="did not converge"):
        adgen.jacrev(unconverged)(y)
    with pytest.raises(AdgenError, match="did not converge"):
        adgen.jacfwd(unconverged)(y)
    with pytest.raises(AdgenError, match="not positive definite"):
        adgen.jacrev(undetermined)(y)


# -- curve_fit ---------------------------------------------------------------------------------

from scipy.optimize import curve_fit  # noqa: E402

XD = np.linspace(0.0, 2.0, 8)
YD = 2.0 * np.exp(-0.7 * XD) + 0.05 * np.random.default_rng(2).normal(size=8)
SD = np.linspace(0.5, 1.5, 8)


def decay_curve(xdata, ydata, sigma, c):
    """curve_fit of a exp(-k x) + c (c read from the enclosing function) with the exact
    Jacobian, weighted by sigma."""

    def model(x, a, k):
        return a * np.exp(-k * x) + c

    def gradient(x, a, k):
        e = np.exp(-k * x)
        return np.stack([e, -a * x * e], axis=1)

    popt, pcov = curve_fit(
        model, xdata, ydata, p0=np.array([1.0, 0.5]), sigma=sigma, jac=gradient,
        xtol=1e-15, ftol=1e-15, gtol=1e-15,
    )  # fmt: skip
    return popt


def polished_curve(xdata, ydata, sigma, c):
    """decay_curve's popt refined by Newton's method on the weighted normal equations."""
    p = decay_curve(xdata, ydata, sigma, c)

    def gradient(p):
        e = np.exp(-p[1] * xdata)
        r = (p[0] * e + c - ydata) / sigma
        jac = np.stack([e, -p[0] * xdata * e], axis=1) / sigma[:, None]
        return jac.T @ r

    for _ in range(4):
        hess = np.stack(
            [(gradient(p + 1e-6 * e) - gradient(p - 1e-6 * e)) / 2e-6 for e in np.eye(2)], 1
        )
        p = p - np.linalg.solve(hess, gradient(p))
    return p


def test_curve_fit_popt_both_modes():
    h, c = 1e-6, 0.1
    args = [XD, YD, SD, c]
    for i in range(4):  # xdata, ydata, sigma, the captured c
        if i == 3:
            fd = (polished_curve(XD, YD, SD, c + h) - polished_curve(XD, YD, SD, c - h)) / (2 * h)
        else:
            columns = []
            for e in np.eye(8):
                up, down = list(args), list(args)
                up[i], down[i] = args[i] + h * e, args[i] - h * e
                columns.append((polished_curve(*up) - polished_curve(*down)) / (2 * h))
            fd = np.stack(columns, 1)
        for jac in (adgen.jacfwd, adgen.jacrev):
            np.testing.assert_allclose(jac(decay_curve, wrt=i)(*args), fd, rtol=1e-6, atol=1e-8)


def test_curve_fit_linear_model_closed_form_without_p0():
    """A straight line a x + b fitted without p0 (the parameters counted from the model):
    popt = X⁺ y exactly, so d popt / d y = X⁺ (a module-level model; unweighted)."""
    xdata = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    ydata = np.array([1.0, 2.9, 5.2, 7.1, 8.8])

    def fit(y):
        popt, pcov = curve_fit(line, xdata, y)
        return popt

    X = np.stack([xdata, np.ones(5)], axis=1)
    np.testing.assert_allclose(fit(ydata), np.linalg.pinv(X) @ ydata, rtol=1e-7)
    np.testing.assert_allclose(adgen.jacfwd(fit)(ydata), np.linalg.pinv(X), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(adgen.jacrev(fit)(ydata), np.linalg.pinv(X), rtol=1e-7, atol=1e-10)


def line(x, a, b):
    return a * x + b


def test_curve_fit_refusals():
    xdata = np.array([0.0, 1.0, 2.0, 3.0, 4.0])

    def with_pcov(y):
        popt, pcov = curve_fit(line, xdata, y)
        return popt[0] + pcov[0, 0]

    def robust(y):
        popt, pcov = curve_fit(line, xdata, y, method="trf", loss="soft_l1")
        return popt

    def full(y):
        popt, pcov, info, msg, ier = curve_fit(line, xdata, y, full_output=True)
        return popt

    def covariance(y):
        popt, pcov = curve_fit(line, xdata, y, sigma=np.eye(5) + 0.1)
        return popt

    y = np.array([1.0, 2.9, 5.2, 7.1, 8.8])
    with pytest.raises(AdgenError, match="pcov"):
        adgen.grad(with_pcov)(y)
    with pytest.raises(AdgenError, match="pcov"):
        adgen.jvp(with_pcov, (y,), (np.ones(5),))
    with pytest.raises(AdgenError, match="loss"):
        adgen.jacrev(robust)(y)
    with pytest.raises(AdgenError, match="full_output"):
        adgen.jacrev(full)(y)
    with pytest.raises(AdgenError, match="sigma"):
        adgen.jacrev(covariance)(y)
