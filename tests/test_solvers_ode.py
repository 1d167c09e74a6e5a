"""ODE solvers differentiated as users call them (issue 36): ``odeint`` and ``solve_ivp``
given a lambda, a nested ``def`` reading the function's variables, or a module-level
function; forward mode (tangent system) and reverse mode (adjoint) checked against analytic
derivatives and finite differences taken at tight tolerances."""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError

scipy = pytest.importorskip("scipy")
from scipy.integrate import odeint, solve_ivp  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

T = np.linspace(0.0, 1.0, 5)
TIGHT = {"rtol": 1e-11, "atol": 1e-12}


def decay(y, t, k):
    return -k * y


def decay_tfirst(t, y, k, c=0.0):
    return -k * y + c


def oscillator(y, t, a, b):
    return [y[1], -a * y[0] - b * y[1]]


def central(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        out.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


# -- odeint ------------------------------------------------------------------------------------
def sum_of_decay(k, y0):
    ys = odeint(decay, y0, T, args=(k,), **TIGHT)
    return np.sum(ys)


def test_odeint_module_level_function_with_args_matches_the_analytic_gradient():
    k, y0 = 0.7, np.array([1.0, 2.0])
    gk, gy0 = adgen.grad(sum_of_decay, wrt=(0, 1))(k, y0)
    np.testing.assert_allclose(gk, -3.0 * np.sum(T * np.exp(-k * T)), rtol=1e-7)
    np.testing.assert_allclose(gy0, np.sum(np.exp(-k * T)) * np.ones(2), rtol=1e-7)


def test_odeint_forward_mode_matches_the_analytic_tangent():
    k, y0 = 0.7, np.array([1.0, 2.0])
    _, tangent = adgen.jvp(sum_of_decay, (k, y0), (1.0, np.array([0.5, -1.0])))
    expected = -3.0 * np.sum(T * np.exp(-k * T)) + np.sum(np.exp(-k * T)) * (0.5 - 1.0)
    np.testing.assert_allclose(tangent, expected, rtol=1e-7)


def damped(theta, y0):
    a, b = theta[0], theta[1]

    def rhs(y, t):  # reads a and b of the function
        return np.array([y[1], -a * y[0] - b * y[1]])

    ys = odeint(rhs, y0, np.linspace(0.0, 3.0, 7), **TIGHT)
    return np.sum(ys[:, 0] ** 2) + ys[-1, 1]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_odeint_nested_def_reading_the_functions_variables(mode):
    theta, y0 = np.array([2.0, 0.3]), np.array([1.0, 0.0])
    if mode == "reverse":
        g_theta, g_y0 = adgen.grad(damped, wrt=(0, 1))(theta, y0)
    else:
        g_theta = adgen.jacfwd(damped, wrt=0)(theta, y0)
        g_y0 = adgen.jacfwd(damped, wrt=1)(theta, y0)
    np.testing.assert_allclose(g_theta, central(lambda p: damped(p, y0), theta), rtol=1e-6)
    np.testing.assert_allclose(g_y0, central(lambda v: damped(theta, v), y0), rtol=1e-6)


def test_odeint_lambda_a_list_result_and_a_scalar_initial_state():
    def f(k):
        ys = odeint(lambda y, t: [-k * y[0]], 1.5, T, **TIGHT)
        return ys[-1, 0]

    np.testing.assert_allclose(adgen.grad(f)(0.4), -1.5 * np.exp(-0.4), rtol=1e-7)
    np.testing.assert_allclose(adgen.jvp(f, (0.4,), (1.0,))[1], -1.5 * np.exp(-0.4), rtol=1e-7)


def test_odeint_derivative_wrt_the_time_points():
    def f(t):
        return np.sum(odeint(decay, 2.0, t, args=(0.5,), **TIGHT)[:, 0])

    t = np.array([0.0, 0.5, 2.0])
    expected = central(f, t)
    np.testing.assert_allclose(adgen.grad(f)(t), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(adgen.jacfwd(f)(t), expected, rtol=1e-6, atol=1e-9)


def test_odeint_tfirst_and_a_default_of_the_right_hand_side():
    def f(k):
        return odeint(decay_tfirst, 1.0, T, args=(k,), tfirst=True, **TIGHT)[-1, 0]

    np.testing.assert_allclose(adgen.grad(f)(0.3), -np.exp(-0.3), rtol=1e-7)


def test_odeint_full_output_is_refused_by_name():
    def f(k):
        ys, info = odeint(decay, 1.0, T, args=(k,), full_output=1)
        return ys[-1, 0]

    with pytest.raises(AdgenError, match="full_output"):
        adgen.grad(f)(0.3)


def damped_loss(theta, solver):
    a, b = theta[0], theta[1]
    y0 = np.array([1.0, theta[2]])
    t = np.linspace(0.0, 2.0, 5)
    if solver == "odeint":
        ys = odeint(lambda y, s: np.array([y[1], -a * y[0] - b * y[1]]), y0, t, **TIGHT)
        return np.sum(ys[:, 0] ** 2)
    sol = solve_ivp(
        lambda s, y: np.array([y[1], -a * y[0] - b * y[1]]), (0.0, 2.0), y0, t_eval=t[1:], **TIGHT
    )
    return np.sum(sol.y[0] ** 2)


@pytest.mark.parametrize("solver", ["odeint", "solve_ivp"])
def test_hessian_and_hvp_through_an_ode_solver(solver):
    theta = np.array([2.0, 0.3, 0.5])
    grad = adgen.grad(damped_loss)
    h = 1e-5
    expected = np.array(
        [(grad(theta + h * e, solver) - grad(theta - h * e, solver)) / (2 * h) for e in np.eye(3)]
    )
    np.testing.assert_allclose(adgen.hessian(damped_loss)(theta, solver), expected, atol=2e-6)
    v = np.array([1.0, -1.0, 0.5])
    np.testing.assert_allclose(
        adgen.hvp(damped_loss)(theta, solver, v), expected @ v, rtol=1e-5, atol=2e-6
    )


def test_second_order_through_odeint_in_reverse_mode_again_is_refused_by_name():
    with pytest.raises(AdgenError, match="differentiated in reverse mode again"):
        adgen.grad(adgen.grad(lambda k: sum_of_decay(k, np.ones(2))))(0.5)


def test_second_order_through_a_system_unstable_backwards_is_refused_when_it_runs():
    def f(lam):
        ys = odeint(lambda y, s: -lam * (y - np.cos(s)), 2.0, np.linspace(0.0, 2.0, 3), **TIGHT)
        return np.sum(ys)

    with pytest.raises(AdgenError, match="unstable backwards"):
        adgen.hessian(f)(200.0)


def test_a_value_the_solver_is_given_that_is_not_a_function_is_refused():
    def f(k):
        return odeint(T, 1.0, T)[-1, 0] * k

    with pytest.raises(AdgenError, match="odeint"):
        adgen.grad(f)(0.3)


# -- solve_ivp ---------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["RK45", "DOP853", "LSODA", "Radau", "BDF"])
def test_solve_ivp_every_method_in_both_modes(method):
    def f(k, y0):
        sol = solve_ivp(
            lambda t, y, c: -k * y + c,
            (0.0, 1.0),
            y0,
            method=method,
            args=(0.25,),
            rtol=1e-10,
            atol=1e-12,
        )
        return sol.y[0, -1] + 2.0 * sol.y[1, -1]

    k, y0 = 0.7, np.array([1.0, 2.0])
    # y(1) = c/k + (y0 - c/k) e^{-k}
    c = 0.25
    dk = -c / k**2 + c / k**2 * np.exp(-k) - (y0 - c / k) * np.exp(-k)
    expected_k = dk[0] + 2.0 * dk[1]
    expected_y0 = np.exp(-k) * np.array([1.0, 2.0])
    gk, gy0 = adgen.grad(f, wrt=(0, 1))(k, y0)
    np.testing.assert_allclose(gk, expected_k, rtol=1e-6)
    np.testing.assert_allclose(gy0, expected_y0, rtol=1e-6)
    _, tangent = adgen.jvp(f, (k, y0), (1.0, np.zeros(2)))
    np.testing.assert_allclose(tangent, expected_k, rtol=1e-6)


def oscillator_fit(theta, y0):
    def rhs(t, y):
        return np.array([y[1], -theta[0] * y[0] - theta[1] * y[1]])

    sol = solve_ivp(rhs, (0.0, 2.0), y0, t_eval=np.linspace(0.5, 2.0, 4), rtol=1e-10, atol=1e-12)
    if not sol.success:
        raise RuntimeError(sol.message)
    return np.sum(sol.y[0] ** 2) + 0.0 * np.sum(sol.t)


def test_solve_ivp_t_eval_after_the_start_success_and_t_read():
    theta, y0 = np.array([2.0, 0.3]), np.array([1.0, 0.5])
    g_theta, g_y0 = adgen.grad(oscillator_fit, wrt=(0, 1))(theta, y0)
    np.testing.assert_allclose(g_theta, central(lambda p: oscillator_fit(p, y0), theta), rtol=1e-6)
    np.testing.assert_allclose(g_y0, central(lambda v: oscillator_fit(theta, v), y0), rtol=1e-6)
    j = adgen.jacfwd(oscillator_fit)(theta, y0)
    np.testing.assert_allclose(j, g_theta, rtol=1e-6)


def test_solve_ivp_at_its_own_steps():
    def f(k):
        sol = solve_ivp(
            decay_tfirst, (0.0, 2.0), np.array([3.0]), args=(k,), rtol=1e-10, atol=1e-12
        )
        return sol.y[0, -1]

    np.testing.assert_allclose(adgen.grad(f)(0.5), -2.0 * 3.0 * np.exp(-1.0), rtol=1e-6)


def test_solve_ivp_result_used_as_a_value_or_an_unknown_attribute_is_refused():
    def returned(k):
        sol = solve_ivp(decay_tfirst, (0.0, 1.0), np.array([1.0]), args=(k,))
        return sol

    def unknown(k):
        sol = solve_ivp(decay_tfirst, (0.0, 1.0), np.array([1.0]), args=(k,))
        return np.sum(sol.sol(0.5))

    def events(k):  # (None: no events; dense output is made and not read)
        sol = solve_ivp(
            decay_tfirst, (0.0, 1.0), np.array([1.0]), args=(k,), events=None, dense_output=True
        )
        return sol.y[0, -1]

    with pytest.raises(AdgenError, match="sol.y"):
        adgen.grad(returned)(0.5)
    with pytest.raises(AdgenError, match=r"`\.sol\(\)`"):
        adgen.grad(unknown)(0.5)
    np.testing.assert_allclose(adgen.grad(events)(0.5), -np.exp(-0.5), rtol=1e-3)


def test_a_lotka_volterra_model_fitted_with_adgens_gradient():
    t_obs = np.linspace(0.0, 4.0, 9)
    true = np.array([1.1, 0.4, 0.4, 0.1])

    def simulate(p):
        def rhs(z, t):
            prey, pred = z[0], z[1]
            return [p[0] * prey - p[1] * prey * pred, p[3] * prey * pred - p[2] * pred]

        return odeint(rhs, np.array([10.0, 5.0]), t_obs, rtol=1e-9, atol=1e-9)

    data = simulate(true)

    def loss(p):
        return np.mean((simulate(p) - data) ** 2)

    start = true * np.array([1.1, 0.9, 1.1, 0.9])
    g = adgen.grad(loss)(start)
    np.testing.assert_allclose(g, central(loss, start, 1e-7), rtol=1e-4)
    fit = minimize(loss, start, jac=adgen.grad(loss), method="BFGS", options={"gtol": 1e-9})
    assert fit.fun < 1e-3 * loss(start)
    np.testing.assert_allclose(fit.x, true, rtol=1e-2)


@pytest.mark.parametrize("solver", ["odeint", "Radau"])
def test_a_stiff_system_unstable_backwards_keeps_its_adjoint_right(solver):
    # y' = -lam (y - cos t): integrating the state backwards multiplies errors by e^{lam dt},
    # so the adjoint recomputes it forwards on each interval
    t = np.linspace(0.0, 2.0, 5)

    def f(lam, y0):
        if solver == "odeint":
            ys = odeint(lambda y, s: -lam * (y - np.cos(s)), y0, t, **TIGHT)
            return np.sum(ys)
        sol = solve_ivp(
            lambda s, y: -lam * (y - np.cos(s)), (0.0, 2.0), y0, method="Radau", t_eval=t, **TIGHT
        )
        return np.sum(sol.y)

    lam, y0 = 200.0, np.array([2.0])
    g_lam, g_y0 = adgen.grad(f, wrt=(0, 1))(lam, y0)
    np.testing.assert_allclose(g_lam, central(lambda v: f(v[0], y0), [lam], 1e-4), rtol=1e-5)
    np.testing.assert_allclose(g_y0, [1.0], rtol=1e-6)


# -- functions made outside the differentiated function ---------------------------------------
class Decay:
    def __init__(self, extra):
        self.extra = extra

    def rhs(self, y, t, k):
        return -(k + self.extra) * y

    def __call__(self, y, t, k):
        return -k * y


def test_a_bound_method_a_callable_object_and_a_partial_as_the_right_hand_side():
    import functools

    model = Decay(0.1)
    partial = functools.partial(decay_tfirst, c=0.0)

    def with_method(k):
        return odeint(model.rhs, 1.0, T, args=(k,), **TIGHT)[-1, 0]

    def with_object(k):
        return odeint(model, 1.0, T, args=(k,), **TIGHT)[-1, 0]

    def with_partial(k):
        return odeint(partial, 1.0, T, args=(k,), tfirst=True, **TIGHT)[-1, 0]

    for f, rate in ((with_method, 0.6), (with_object, 0.5), (with_partial, 0.5)):
        np.testing.assert_allclose(adgen.grad(f)(0.5), -np.exp(-rate), rtol=1e-7)
        np.testing.assert_allclose(adgen.jvp(f, (0.5,), (1.0,))[1], -np.exp(-rate), rtol=1e-7)


def test_a_numpy_function_as_the_integrand():
    from scipy.integrate import quad

    def area(b):
        return quad(np.exp, 0.0, b)[0] * b

    np.testing.assert_allclose(adgen.grad(area)(1.0), 2 * np.e - 1.0, rtol=1e-10)
    np.testing.assert_allclose(adgen.jvp(area, (1.0,), (1.0,))[1], 2 * np.e - 1.0, rtol=1e-10)


def test_a_lambda_with_a_default_made_in_a_loop():
    from scipy.integrate import quad

    def moments(a):
        total = 0.0
        for k in range(3):
            value, _ = quad(lambda x, k=k: x**k * np.exp(-a * x), 0.0, np.inf)
            total = total + value  # k! / a^(k+1)
        return total

    expected = -(1.0 / 2.0**2 + 2.0 * 1.0 / 2.0**3 + 3.0 * 2.0 / 2.0**4)
    np.testing.assert_allclose(adgen.grad(moments)(2.0), expected, rtol=1e-8)
    np.testing.assert_allclose(adgen.jvp(moments, (2.0,), (1.0,))[1], expected, rtol=1e-8)


def test_solve_ivp_derivative_wrt_its_output_times():
    def f(times):
        sol = solve_ivp(
            lambda t, y: np.array([y[1], -y[0]]),
            (0.0, 3.0),
            np.array([1.0, 0.0]),
            t_eval=times,
            rtol=1e-11,
            atol=1e-12,
        )
        return np.sum(sol.y[0] ** 2) + np.sum(sol.t)  # cos(t)^2 + t

    times = np.array([0.5, 1.0, 2.5])
    expected = 1.0 - 2.0 * np.cos(times) * np.sin(times)
    np.testing.assert_allclose(adgen.grad(f)(times), expected, rtol=1e-8)
    np.testing.assert_allclose(adgen.jacfwd(f)(times), expected, rtol=1e-8)


def test_export_of_a_function_calling_a_solver_is_refused_naming_the_function(tmp_path):
    def loss(k):
        return np.sum(odeint(lambda y, t: -k * y, 1.0, T))

    with pytest.raises(AdgenError, match="gives the function `lam` to a SciPy solver"):
        adgen.export(loss, str(tmp_path / "exported.py"))


def test_the_command_line_prints_the_derivative_of_a_function_calling_solvers(tmp_path):
    import subprocess
    import sys

    program = tmp_path / "model.py"
    program.write_text(
        "import numpy as np\n"
        "from scipy.integrate import odeint, quad\n\n"
        "def decay(y, t, k):\n"
        "    return -k * y\n\n"
        "def loss(k):\n"
        "    a = quad(lambda x: np.exp(-k * x), 0.0, 1.0)[0]\n"
        "    return np.sum(odeint(decay, 1.0, np.linspace(0.0, 1.0, 3), args=(k,))) + a\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "adgen", str(program), "--function", "loss"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "scipy.integrate.odeint(decay_1, 1.0, t_1, args=(k,))" in out.stdout
    assert "rt.odeint_args_cotangent(" in out.stdout
    assert "rt.quad_vjp(" in out.stdout


# -- a neural ODE whose parameters are a list of (W, b) pairs (autograd's ode_net example) --
def network(inputs, t, params):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def neural_ode_loss(params, y0):
    ys = odeint(network, y0, T, tuple((params,)), **TIGHT)
    return np.mean((ys - np.sin(T)[:, None]) ** 2)


def _layers(seed):
    rs = np.random.RandomState(seed)
    return [(0.5 * rs.randn(m, n), 0.5 * rs.randn(n)) for m, n in ((2, 6), (6, 2))]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_odeint_args_holding_a_list_of_weight_pairs(mode):
    """``args=(params,)`` where ``params`` is a list of ``(W, b)`` tuples: the leaves reach
    the right-hand side through a lambda that rebuilds the list, so the gradient has the
    list's structure. Checked along a direction against central differences."""
    params, y0 = _layers(0), np.array([1.0, -0.5])
    direction = _layers(1)
    step = 1e-6

    def moved(s):
        return [(W + s * dW, b + s * db) for (W, b), (dW, db) in zip(params, direction)]

    want = (neural_ode_loss(moved(step), y0) - neural_ode_loss(moved(-step), y0)) / (2 * step)
    if mode == "reverse":
        grads = adgen.grad(neural_ode_loss)(params, y0)
        assert [tuple(np.shape(a) for a in pair) for pair in grads] == [
            (W.shape, b.shape) for W, b in params
        ]
        got = sum(np.sum(g * d) for gs, ds in zip(grads, direction) for g, d in zip(gs, ds))
    else:
        got = adgen.jvp(lambda p: neural_ode_loss(p, y0), (params,), (direction,))[1]
    assert got == pytest.approx(want, rel=1e-6)
