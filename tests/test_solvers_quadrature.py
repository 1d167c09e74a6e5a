"""SciPy's quadratures differentiated (issue 36, part 3): ``quad``, ``quad_vec`` and
``fixed_quad`` given a function, and the quadratures of samples, in both modes against
analytic derivatives."""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError

scipy = pytest.importorskip("scipy")
si = pytest.importorskip("scipy.integrate")
quad = si.quad

TIGHT = {"rtol": 1e-7, "atol": 1e-10}


def exp_integral(a):
    """∫_0^1 exp(-a x) dx = (1 - e^{-a}) / a."""
    value, _ = quad(lambda x: np.exp(-a * x), 0, 1)
    return value


def d_exp_integral(a):
    return (a * np.exp(-a) - (1 - np.exp(-a))) / a**2


def gaussian(a):
    """∫_0^∞ exp(-a x²) dx = ½ √(π / a)."""
    val, err = quad(lambda x: np.exp(-a * x**2), 0, np.inf)
    return val


def module_integrand(x, c, p):
    return c * x**p


def with_module_integrand(b, c):
    return quad(module_integrand, 0, b, args=(c, 2.0))[0]


@pytest.mark.parametrize("a", [0.3, 1.3, 4.0])
def test_quad_of_a_lambda_reading_the_variable_both_modes(a):
    np.testing.assert_allclose(exp_integral(a), (1 - np.exp(-a)) / a, **TIGHT)
    np.testing.assert_allclose(adgen.grad(exp_integral)(a), d_exp_integral(a), **TIGHT)
    value, tangent = adgen.jvp(exp_integral, (a,), (1.0,))
    np.testing.assert_allclose(value, (1 - np.exp(-a)) / a, **TIGHT)
    np.testing.assert_allclose(tangent, d_exp_integral(a), **TIGHT)
    value, pullback = adgen.vjp(exp_integral, a)
    np.testing.assert_allclose(pullback(2.0)[0], 2.0 * d_exp_integral(a), **TIGHT)


def test_quad_over_an_infinite_interval():
    a = 1.7
    exact = -0.25 * np.sqrt(np.pi) * a**-1.5
    np.testing.assert_allclose(adgen.grad(gaussian)(a), exact, rtol=1e-6)
    np.testing.assert_allclose(adgen.jvp(gaussian, (a,), (1.0,))[1], exact, rtol=1e-6)

    def both_infinite(s):
        return quad(lambda x: np.exp(-(x**2) / (2 * s**2)), -np.inf, np.inf)[0]

    # √(2π) s
    np.testing.assert_allclose(adgen.grad(both_infinite)(0.8), np.sqrt(2 * np.pi), rtol=1e-6)


def test_limits_that_depend_on_the_differentiated_variables():
    def area(a, b):
        return quad(lambda x: x**3, a, b)[0]

    a, b = 0.4, 1.9
    np.testing.assert_allclose(adgen.grad(area, wrt=(0, 1))(a, b), (-(a**3), b**3), **TIGHT)
    _, tangent = adgen.jvp(area, (a, b), (0.5, 2.0))
    np.testing.assert_allclose(tangent, -0.5 * a**3 + 2.0 * b**3, **TIGHT)

    def both(t):  # ∫_t^{t²} t x dx = t (t⁴ - t²) / 2
        return quad(lambda x: t * x, t, t**2)[0]

    t = 1.3
    exact = (5 * t**4 - 3 * t**2) / 2
    np.testing.assert_allclose(adgen.grad(both)(t), exact, **TIGHT)
    np.testing.assert_allclose(adgen.jvp(both, (t,), (1.0,))[1], exact, **TIGHT)

    def semi_infinite(a, k):  # ∫_a^∞ e^{-k x} dx = e^{-k a} / k
        return quad(lambda x: np.exp(-k * x), a, np.inf)[0]

    a, k = 0.5, 2.0
    grads = adgen.grad(semi_infinite, wrt=(0, 1))(a, k)
    exact_k = -np.exp(-k * a) * (a / k + 1 / k**2)
    np.testing.assert_allclose(grads, (-np.exp(-k * a), exact_k), rtol=1e-6)


def test_args_as_a_tuple_and_as_a_single_value():
    def tupled(b, c):
        return quad(lambda x, c, p: c * x**p, 0, b, args=(c, 2.0))[0]

    b, c = 2.0, 3.0
    np.testing.assert_allclose(adgen.grad(tupled, wrt=(0, 1))(b, c), (c * b**2, b**3 / 3), **TIGHT)
    _, tangent = adgen.jvp(tupled, (b, c), (1.0, 1.0))
    np.testing.assert_allclose(tangent, c * b**2 + b**3 / 3, **TIGHT)

    def single(k):  # ∫_0^1 cos(k x) dx = sin(k) / k
        return quad(lambda x, k: np.cos(k * x), 0, 1, args=k)[0]

    k = 0.7
    exact = np.cos(k) / k - np.sin(k) / k**2
    np.testing.assert_allclose(adgen.grad(single)(k), exact, **TIGHT)
    np.testing.assert_allclose(adgen.jvp(single, (k,), (1.0,))[1], exact, **TIGHT)


def test_a_nested_def_and_a_module_level_integrand():
    def nested(c, d):
        def integrand(x):
            return d * np.exp(-c * x)

        return quad(integrand, 0, 2)[0]

    c, d = 0.7, 2.0
    value = (1 - np.exp(-2 * c)) / c
    dvalue = (2 * c * np.exp(-2 * c) - (1 - np.exp(-2 * c))) / c**2
    np.testing.assert_allclose(adgen.grad(nested, wrt=(0, 1))(c, d), (d * dvalue, value), **TIGHT)
    jac = adgen.jacfwd(nested, wrt=(0, 1))(c, d)
    np.testing.assert_allclose(jac, (d * dvalue, value), **TIGHT)

    b, c = 1.5, 2.5
    exact = (c * b**2, b**3 / 3)
    np.testing.assert_allclose(adgen.grad(with_module_integrand, wrt=(0, 1))(b, c), exact, **TIGHT)
    _, tangent = adgen.jvp(with_module_integrand, (b, c), (0.0, 1.0))
    np.testing.assert_allclose(tangent, b**3 / 3, **TIGHT)


def test_an_array_parameter_read_by_the_integrand():
    def moments(theta):  # ∫_0^1 (θ0 + θ1 x + θ2 x²) dx
        return quad(lambda x: theta[0] + theta[1] * x + theta[2] * x**2, 0, 1)[0] ** 2

    theta = np.array([0.5, -1.0, 2.0])
    m = theta @ np.array([1.0, 1 / 2, 1 / 3])
    exact = 2 * m * np.array([1.0, 1 / 2, 1 / 3])
    np.testing.assert_allclose(adgen.grad(moments)(theta), exact, **TIGHT)
    np.testing.assert_allclose(adgen.jacfwd(moments)(theta), exact, **TIGHT)


def test_fit_a_decay_rate_to_integrated_data():
    """A realistic loss: observed areas under e^{-k x} on [0, t_i], fit k."""
    ts = np.array([0.5, 1.0, 2.0, 3.0])
    observed = (1 - np.exp(-0.8 * ts)) / 0.8

    def loss(k):
        total = 0.0
        for i in range(len(ts)):
            area, _ = quad(lambda x: np.exp(-k * x), 0.0, ts[i])
            total = total + (area - observed[i]) ** 2
        return total

    k = 1.1
    model = (1 - np.exp(-k * ts)) / k
    dmodel = (k * ts * np.exp(-k * ts) - (1 - np.exp(-k * ts))) / k**2
    exact = np.sum(2 * (model - observed) * dmodel)
    np.testing.assert_allclose(loss(k), np.sum((model - observed) ** 2), **TIGHT)
    np.testing.assert_allclose(adgen.grad(loss)(k), exact, rtol=1e-6)
    np.testing.assert_allclose(adgen.jvp(loss, (k,), (1.0,))[1], exact, rtol=1e-6)


def test_a_cdf_computed_by_quad():
    """The normal CDF by quad: its derivative in x is the density, in mu and sigma known."""

    def cdf(x, mu, sigma):
        def density(t):
            return np.exp(-((t - mu) ** 2) / (2 * sigma**2)) / (sigma * np.sqrt(2 * np.pi))

        return quad(density, -np.inf, x)[0]

    x, mu, sigma = 0.7, 0.2, 1.3
    z = (x - mu) / sigma
    pdf = np.exp(-(z**2) / 2) / np.sqrt(2 * np.pi)
    exact = (pdf / sigma, -pdf / sigma, -pdf * z / sigma)
    np.testing.assert_allclose(adgen.grad(cdf, wrt=(0, 1, 2))(x, mu, sigma), exact, rtol=1e-6)
    np.testing.assert_allclose(
        adgen.jacfwd(cdf, wrt=(0, 1, 2))(x, mu, sigma), exact, rtol=1e-6, atol=1e-12
    )


def test_the_error_estimate_carries_no_derivative():
    def with_error(a):
        value, err = quad(lambda x: np.exp(-a * x), 0, 1)
        return value + err

    a = 1.3
    np.testing.assert_allclose(adgen.grad(with_error)(a), d_exp_integral(a), **TIGHT)
    np.testing.assert_allclose(adgen.jvp(with_error, (a,), (1.0,))[1], d_exp_integral(a), **TIGHT)


def test_quad_vec_both_modes():
    def vec(a, b, c):  # ∫_a^b (e^{-c x}, c x²) dx, weighted
        res, err = si.quad_vec(lambda x: np.array([np.exp(-c * x), c * x**2]), a, b)
        return res[0] + 2 * res[1]

    a, b, c = 0.3, 1.7, 1.1
    exact = (
        -(np.exp(-c * a) + 2 * c * a**2),
        np.exp(-c * b) + 2 * c * b**2,
        (b * np.exp(-c * b) - a * np.exp(-c * a)) / c
        + (np.exp(-c * b) - np.exp(-c * a)) / c**2
        + 2 * (b**3 - a**3) / 3,
    )
    np.testing.assert_allclose(adgen.grad(vec, wrt=(0, 1, 2))(a, b, c), exact, rtol=1e-7)
    np.testing.assert_allclose(adgen.jacfwd(vec, wrt=(0, 1, 2))(a, b, c), exact, rtol=1e-7)

    def with_args(w):  # ∫_0^1 w x^k dx = w / (k + 1), k = 0, 1, 2
        res, _ = si.quad_vec(lambda x, w: w * x ** np.arange(3.0), 0, 1, args=(w,))
        return np.sum(res**2)

    w = np.array([1.0, 2.0, 3.0])
    exact_w = 2 * w / np.array([1.0, 4.0, 9.0])
    np.testing.assert_allclose(adgen.grad(with_args)(w), exact_w, rtol=1e-7)
    np.testing.assert_allclose(adgen.jacfwd(with_args)(w), exact_w, rtol=1e-7)


def test_fixed_quad_is_differentiated_exactly():
    def gauss(a, b, c):
        return si.fixed_quad(lambda x, c: np.sin(c * x) * x, a, b, args=(c,), n=7)[0]

    def central(f, xs, h=1e-5):
        out = []
        for i in range(len(xs)):
            up, down = list(xs), list(xs)
            up[i] += h
            down[i] -= h
            out.append((f(*up) - f(*down)) / (2 * h))
        return np.array(out)

    xs = (0.3, 1.7, 1.1)
    reference = central(gauss, xs)
    np.testing.assert_allclose(adgen.grad(gauss, wrt=(0, 1, 2))(*xs), reference, rtol=1e-8)
    np.testing.assert_allclose(adgen.jacfwd(gauss, wrt=(0, 1, 2))(*xs), reference, rtol=1e-8)

    def polynomial(a, b):  # order 5 is exact for x⁴: d/db = b⁴, d/da = -a⁴
        return si.fixed_quad(lambda x: x**4, a, b, n=5)[0]

    np.testing.assert_allclose(adgen.grad(polynomial, wrt=(0, 1))(0.5, 2.0), (-(0.5**4), 16.0))
    np.testing.assert_allclose(adgen.jvp(polynomial, (0.5, 2.0), (1.0, 1.0))[1], 16.0 - 0.5**4)


SAMPLES_X = np.linspace(0.0, 2.0, 9) ** 1.2


def _central(f, y, h=1e-6):
    return np.array([(f(y + h * e) - f(y - h * e)) / (2 * h) for e in np.eye(y.size)])


@pytest.mark.parametrize(
    "quadrature",
    [
        lambda y: si.trapezoid(y**2, SAMPLES_X),
        lambda y: si.simpson(y**3, x=SAMPLES_X),
        lambda y: si.simpson(np.sin(y), dx=0.25),
        lambda y: si.romb(y**2, dx=0.3),
        lambda y: np.sum(si.cumulative_trapezoid(y**2, SAMPLES_X, initial=0) ** 2),
        lambda y: np.sum(si.cumulative_trapezoid(y**2, dx=0.5) ** 2),
    ],
    ids=["trapezoid", "simpson-x", "simpson-dx", "romb", "cumtrapz-initial", "cumtrapz"],
)
def test_quadratures_of_samples_in_y(quadrature):
    y = np.linspace(0.1, 1.0, 9) ** 1.5
    reference = _central(quadrature, y)
    np.testing.assert_allclose(adgen.grad(quadrature)(y), reference, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(adgen.jacfwd(quadrature)(y), reference, rtol=1e-6, atol=1e-9)


def test_simpson_weights_are_exact_for_a_cubic():
    """Simpson's rule integrates cubics exactly: d/dc ∫_0^2 c x³ dx = 4."""

    def cubic(c):
        x = np.linspace(0.0, 2.0, 5)
        return si.simpson(c * x**3, x=x)

    np.testing.assert_allclose(adgen.grad(cubic)(1.5), 4.0, rtol=1e-12)
    np.testing.assert_allclose(adgen.jvp(cubic, (1.5,), (1.0,))[1], 4.0, rtol=1e-12)


def test_trapezoid_rules_in_the_sample_points():
    def in_x(x):
        y = np.linspace(0.1, 1.0, 9) ** 1.5
        return si.trapezoid(y**2, x) + np.sum(si.cumulative_trapezoid(y**2, x, initial=0) ** 2)

    reference = _central(in_x, SAMPLES_X)
    np.testing.assert_allclose(adgen.grad(in_x)(SAMPLES_X), reference, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(adgen.jacfwd(in_x)(SAMPLES_X), reference, rtol=1e-6, atol=1e-9)


def _refused(f, *args, match):
    with pytest.raises(AdgenError, match=match):
        adgen.grad(f)(*args)


def test_options_whose_derivative_is_not_written_are_refused_by_name():
    def full(a):
        return quad(lambda x: np.exp(-a * x), 0, 1, full_output=1)[0]

    def weighted(a):
        return quad(lambda x: np.exp(-a * x), 0, 1, weight="cos", wvar=2.0)[0]

    def complex_valued(a):
        return quad(lambda x: np.exp(-a * x), 0, 1, complex_func=True)[0]

    def vec_full(a):
        return si.quad_vec(lambda x: np.exp(-a * x), 0, 1, full_output=True)[0]

    _refused(full, 1.0, match="full_output")
    _refused(weighted, 1.0, match="weight")
    _refused(complex_valued, 1.0, match="complex_func")
    _refused(vec_full, 1.0, match="full_output")


def test_simpson_in_its_sample_points_is_refused_by_name():
    def in_x(x):
        return si.simpson(x**2, x=x)

    _refused(in_x, np.linspace(0.0, 1.0, 5), match="simpson(.|\n)*`x`")


def test_second_order_through_quad_is_refused_by_name():
    with pytest.raises(AdgenError, match="second order"):
        adgen.grad(adgen.grad(exp_integral))(1.0)
    with pytest.raises(AdgenError, match="second order"):
        adgen.hessian(gaussian)(1.0)


def test_quad_with_breakpoints_and_a_lambda_bound_to_a_name():
    def kinked(k):  # ∫_0^1 k² |x - ½| dx = k² / 4
        return quad(lambda x: np.abs(x - 0.5) * k**2, 0, 1, points=[0.5])[0]

    np.testing.assert_allclose(adgen.grad(kinked)(0.7), 0.35, **TIGHT)
    np.testing.assert_allclose(adgen.jvp(kinked, (0.7,), (1.0,))[1], 0.35, **TIGHT)

    def named(k):
        integrand = lambda x: np.exp(-k * x)  # noqa: E731 - as users write it
        return quad(integrand, 0, 1)[0]

    np.testing.assert_allclose(adgen.grad(named)(1.3), d_exp_integral(1.3), **TIGHT)


def test_quad_vec_with_a_single_argument_and_a_moving_limit():
    def vec(b, c):  # ∫_0^b c (1, x) dx = c (b, b²/2)
        res, _ = si.quad_vec(lambda x, c: c * np.array([1.0, x]), 0, b, args=c)
        return res[0] + res[1]

    b, c = 1.5, 2.0
    exact = (c * (1 + b), b + b**2 / 2)
    np.testing.assert_allclose(adgen.grad(vec, wrt=(0, 1))(b, c), exact, **TIGHT)
    np.testing.assert_allclose(adgen.jacfwd(vec, wrt=(0, 1))(b, c), exact, **TIGHT)


def test_an_infinite_limit_that_is_a_differentiated_value():
    """A limit passed in as inf: its term is 0 (the integrand is not evaluated there), the
    tangent keeps the integral's shape."""

    def vec(b, c):  # ∫_0^∞ (e^{-c x}, e^{-2 c x}) dx = (1/c, 1/(2c))
        res, _ = si.quad_vec(lambda x: np.array([np.exp(-c * x), np.exp(-2 * c * x)]), 0.0, b)
        return res[0] + res[1]

    _, tangent = adgen.jvp(vec, (np.inf, 1.0), (1.0, 0.0))
    np.testing.assert_allclose(tangent, 0.0)
    np.testing.assert_allclose(adgen.grad(vec, wrt=(0, 1))(np.inf, 1.0), (0.0, -1.5), rtol=1e-7)

    def euler_gamma(b, c):  # ∫_0^∞ log(x) e^{-c x} dx; at c = 1: -γ, d/dc = γ - 1
        return quad(lambda x: np.log(x) * np.exp(-c * x), 0.0, b)[0]

    grads = adgen.grad(euler_gamma, wrt=(0, 1))(np.inf, 1.0)
    np.testing.assert_allclose(grads, (0.0, np.euler_gamma - 1), rtol=1e-7)
