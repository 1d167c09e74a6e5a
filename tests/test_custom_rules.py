"""Your own rules: adgen.defrule / @adgen.custom_derivative (plain functions), @adgen.rule
templates naming the module's helpers, @adgen.nondifferentiable and adgen.stop_gradient.

Every registration happens inside ``adgen.rules.registrations()`` (the ``registry`` fixture),
so no rule leaks into other tests. Values are checked against central finite differences,
and deliberately wrong rules prove the registered rule is what adgen uses.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import adgen
from adgen import pipeline
from adgen.testing import check_grads

HERE = __file__


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    with adgen.rules.registrations():
        yield


def fd_grad(f: Callable[..., Any], x: np.ndarray, *rest: Any, eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of a scalar function w.r.t. its first argument."""
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        out[i] = (f(x + e, *rest) - f(x - e, *rest)) / (2 * eps)
    return out


def line_of(fn: Callable[..., Any], text: str) -> int:
    """The absolute line of ``fn``'s source holding ``text``."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


# --------------------------------------------------------------------------- the functions


def softclip(x, lo=0.0, hi=1.0):
    return lo + (hi - lo) * (np.tanh(x) + 1.0) / 2.0


def softclip_jvp(x, lo, hi, dx):
    return (hi - lo) * (1.0 - np.tanh(x) ** 2) / 2.0 * dx


def softclip_vjp(g, x, lo, hi):
    return g * (hi - lo) * (1.0 - np.tanh(x) ** 2) / 2.0


def uses_softclip(x, a):
    s = 0.0
    for i in range(3):
        if a > 0:
            s = s + softclip(x * a, hi=2.0)
        else:
            s = s - softclip(x)
    return np.sum(s * x)


def weird(x):
    return np.sin(x)


def uses_weird(x):
    return np.sum(weird(x) * 3.0)


def wrong_jvp(x, dx):
    return 2.0 * dx


def wrong_vjp(g, x):
    return 2.0 * g


def mul2(x, y):
    return x * y


def mul2_jvp(x, y, dx, dy):
    return dx * y + x * dy


def mul2_vjp(g, x, y):
    return g * y, g * x


def uses_mul2(x, y):
    return np.sum(mul2(np.sin(x), y) ** 2)


def power(x, n=2):
    return x**n


def power_jvp(x, n, dx):
    return n * x ** (n - 1) * dx


def power_vjp(g, x, n):
    return g * n * x ** (n - 1)


def uses_power(x, k):
    return np.sum(power(x, 3) + power(x, n=k))


def expish(x):
    return np.exp(x)


def expish_jvp(x, dx, ans):
    return ans * dx


def expish_vjp(g, x, *, ans):
    return g * ans


def uses_expish(x):
    return np.sum(expish(x) * x)


# --------------------------------------------------------------------------- plain-function form


def test_custom_derivative_decorator_both_modes_in_loops_and_branches() -> None:
    sc = adgen.custom_derivative(softclip)
    sc.defjvp(softclip_jvp)
    sc.defvjp(softclip_vjp)
    global softclip_wrapped
    softclip_wrapped = sc
    x = np.array([0.3, -0.2, 1.1])
    for a in (1.5, -1.0):
        check_grads(uses_wrapped, x, a, wrt=[0])
        np.testing.assert_allclose(
            adgen.grad(uses_wrapped)(x, a), fd_grad(uses_wrapped, x, a), rtol=1e-6
        )
    code = adgen.source(uses_wrapped)
    assert "softclip_vjp(" in code and "softclip(" in code
    assert "softclip_jvp(" in adgen.source(uses_wrapped, "forward")


softclip_wrapped: Any = None


def uses_wrapped(x, a):
    s = 0.0
    for i in range(2):
        if a > 0:
            s = s + softclip_wrapped(x * a, hi=2.0)
        else:
            s = s - softclip_wrapped(x)
    return np.sum(s * x)


def test_custom_derivative_as_decorator_syntax() -> None:
    @adgen.custom_derivative
    def cube(x):
        return x * x * x

    @cube.defjvp
    def cube_jvp(x, dx):
        return 3.0 * x * x * dx

    @cube.defvjp
    def cube_vjp(g, x):
        return 3.0 * x * x * g

    assert isinstance(cube, adgen.CustomDerivative)
    assert cube(2.0) == 8.0
    assert cube_jvp(1.0, 1.0) == 3.0  # the decorators return the function itself

    def f(x):
        return cube(x) + x

    assert adgen.grad(f)(2.0) == 13.0
    assert adgen.jvp(f, (2.0,), (1.0,)) == (10.0, 13.0)


def test_defrule_both_modes_against_finite_differences() -> None:
    assert adgen.defrule(softclip, jvp=softclip_jvp, vjp=softclip_vjp) is softclip
    x = np.array([0.3, -0.2, 1.1])
    for a in (1.5, -1.0):
        check_grads(uses_softclip, x, a, wrt=[0])
        np.testing.assert_allclose(
            adgen.grad(uses_softclip)(x, a), fd_grad(uses_softclip, x, a), rtol=1e-6
        )
    # the call stays a call: not inlined
    assert "np.tanh" not in adgen.source(uses_softclip)


def test_wrong_rule_is_the_one_used() -> None:
    """d weird/dx = 2 (wrong on purpose): adgen must return 2-based values in both modes."""
    x = np.array([0.1, 0.7])
    np.testing.assert_allclose(adgen.grad(uses_weird)(x), 3.0 * np.cos(x))  # inlined: true
    adgen.defrule(weird, jvp=wrong_jvp, vjp=wrong_vjp)
    np.testing.assert_allclose(adgen.grad(uses_weird)(x), [6.0, 6.0])
    t = np.array([1.0, -2.0])
    assert adgen.jvp(uses_weird, (x,), (t,))[1] == pytest.approx(3.0 * 2.0 * (1.0 - 2.0))


def test_registering_again_replaces_and_unregister_restores_inlining() -> None:
    x = np.array([0.1, 0.7])
    adgen.defrule(weird, jvp=wrong_jvp, vjp=wrong_vjp)
    np.testing.assert_allclose(adgen.grad(uses_weird)(x), [6.0, 6.0])
    adgen.defrule(weird, jvp=lambda x, dx: 5.0 * dx, vjp=lambda g, x: 5.0 * g)
    np.testing.assert_allclose(adgen.grad(uses_weird)(x), [15.0, 15.0])  # no stale cache
    assert adgen.jvp(uses_weird, (x,), (np.ones(2),))[1] == pytest.approx(30.0)
    assert adgen.unregister(weird) is True
    assert adgen.unregister(weird) is False
    np.testing.assert_allclose(adgen.grad(uses_weird)(x), 3.0 * np.cos(x))


def test_registrations_context_forgets_rules() -> None:
    with adgen.rules.registrations():
        adgen.defrule(weird, jvp=wrong_jvp, vjp=wrong_vjp)
        assert adgen.rules.lookup(weird) is not None
    assert adgen.rules.lookup(weird) is None
    np.testing.assert_allclose(adgen.grad(uses_weird)(np.array([0.5])), 3.0 * np.cos([0.5]))


def test_several_differentiable_arguments() -> None:
    adgen.defrule(mul2, jvp=mul2_jvp, vjp=mul2_vjp)
    x, y = np.array([0.3, -1.2]), np.array([2.0, 0.5])
    check_grads(uses_mul2, x, y)
    gx, gy = adgen.grad(uses_mul2, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, fd_grad(uses_mul2, x, y), rtol=1e-6)
    np.testing.assert_allclose(gy, fd_grad(lambda b, a: uses_mul2(a, b), y, x), rtol=1e-6)
    # only one argument differentiated: the other's tangent is zero
    assert adgen.grad(uses_mul2)(x, y) == pytest.approx(gx)
    code = adgen.source(uses_mul2, "forward", wrt=(1,))
    assert "mul2_jvp(" in code and "rt.zeros_like" in code
    assert "mul2_vjp(" in adgen.source(uses_mul2, wrt=(0, 1))


def test_static_arguments_are_passed_through() -> None:
    adgen.defrule(power, jvp=power_jvp, vjp=power_vjp)
    x = np.array([0.5, 1.5])
    for k in (1, 4):
        g = adgen.grad(uses_power)(x, k)
        np.testing.assert_allclose(g, 3 * x**2 + k * x ** (k - 1))
        np.testing.assert_allclose(g, fd_grad(uses_power, x, k), rtol=1e-6)
        t = np.array([1.0, -1.0])
        assert adgen.jvp(uses_power, (x, k), (t, None))[1] == pytest.approx(float(g @ t))
    assert "power_vjp(out_bar" in adgen.source(uses_power) or "power_vjp(" in adgen.source(
        uses_power
    )


def uses_power_active_exponent(x):
    return power(x, x)


def test_differentiated_value_into_a_static_argument_is_refused() -> None:
    adgen.defrule(power, jvp=power_jvp, vjp=power_vjp)
    with pytest.raises(adgen.NonDifferentiableError, match="`n`") as err:
        adgen.grad(uses_power_active_exponent)(1.5)
    assert err.value.loc is not None
    assert err.value.loc.lineno == line_of(uses_power_active_exponent, "return power")


def test_primal_result_by_keyword() -> None:
    adgen.defrule(expish, jvp=expish_jvp, vjp=expish_vjp)
    x = np.array([0.2, -0.4])
    check_grads(uses_expish, x)
    np.testing.assert_allclose(adgen.grad(uses_expish)(x), np.exp(x) * (1 + x))
    assert "ans=" in adgen.source(uses_expish)


def cube_rule_target(x):
    return x**3


def cube_rule_jvp(x, dx):
    return 3.0 * x**2 * dx


def cube_rule_vjp(g, x):
    return g * 3.0 * x**2


def uses_cube_rule(x):
    return np.sum(np.sin(cube_rule_target(x)))


def test_second_order_through_a_plain_rule() -> None:
    """The forward code calls cube_rule_jvp by name; differentiating it again inlines it."""
    adgen.defrule(cube_rule_target, jvp=cube_rule_jvp, vjp=cube_rule_vjp)
    x, t = np.array([0.3, -0.7]), np.array([1.0, 0.5])
    first = pipeline.derivative(uses_cube_rule, "forward", ("x",)).compiled
    check_grads(first, x, t)
    # the Hessian-vector product, exactly: d/dx [cos(x^3) 3x^2 t] along u
    u = np.array([-0.4, 2.0])
    _, (_, hvp) = adgen.jvp(first, (x, t), (u, np.zeros(2)))
    hess = -np.sin(x**3) * 9 * x**4 + np.cos(x**3) * 6 * x
    assert hvp == pytest.approx(float(np.sum(hess * t * u)))


def test_second_order_uses_the_wrong_rule_too() -> None:
    """Second order through a deliberately wrong rule: jvp(x, dx) = 2 x dx for x**3."""

    def square_ish_jvp(x, dx):
        return 2.0 * x * dx

    adgen.defrule(cube_rule_target, jvp=square_ish_jvp, vjp=cube_rule_vjp)
    first = pipeline.derivative(uses_cube_rule, "forward", ("x",)).compiled
    x, t, u = np.array([0.3]), np.array([1.0]), np.array([1.0])
    _, (_, hvp) = adgen.jvp(first, (x, t), (u, np.zeros(1)))
    # the primal call is differentiated with the (wrong) rule as well: dc = 2 x u
    expected = -np.sin(x**3) * (2 * x * u) * (2 * x * t) + np.cos(x**3) * 2.0 * t * u
    assert hvp == pytest.approx(float(expected[0]))


# --------------------------------------------------------------------------- one mode only


def test_forward_only_rule_refuses_reverse_mode_at_the_call() -> None:
    adgen.defrule(weird, jvp=wrong_jvp)
    x = np.array([0.1, 0.7])
    assert adgen.jvp(uses_weird, (x,), (np.ones(2),))[1] == pytest.approx(12.0)
    with pytest.raises(adgen.NoRuleError, match="no reverse-mode derivative of `weird`") as err:
        adgen.grad(uses_weird)(x)
    assert "vjp=" in str(err.value)
    assert err.value.loc is not None
    assert err.value.loc.filename == HERE
    assert err.value.loc.lineno == line_of(uses_weird, "return")


def test_reverse_only_rule_refuses_forward_mode() -> None:
    adgen.defrule(weird, vjp=wrong_vjp)
    x = np.array([0.1, 0.7])
    np.testing.assert_allclose(adgen.grad(uses_weird)(x), [6.0, 6.0])
    with pytest.raises(adgen.NoRuleError, match="no forward-mode derivative of `weird`") as err:
        adgen.jvp(uses_weird, (x,), (np.ones(2),))
    assert "jvp=" in str(err.value)
    assert err.value.loc is not None and err.value.loc.lineno == line_of(uses_weird, "return")


def test_custom_derivative_without_rules_says_what_to_add() -> None:
    global pending
    pending = adgen.custom_derivative(weird)
    x = np.array([0.1])
    with pytest.raises(adgen.NoRuleError, match=r"@weird\.defvjp") as err:
        adgen.grad(uses_pending)(x)
    assert err.value.loc is not None and err.value.loc.lineno == line_of(uses_pending, "return")
    with pytest.raises(adgen.NoRuleError, match=r"@weird\.defjvp"):
        adgen.jvp(uses_pending, (x,), (x,))
    pending.defvjp(wrong_vjp)
    np.testing.assert_allclose(adgen.grad(uses_pending)(x), [2.0])
    with pytest.raises(adgen.NoRuleError, match=r"@weird\.defjvp"):
        adgen.jvp(uses_pending, (x,), (x,))


pending: Any = None


def uses_pending(x):
    return np.sum(pending(x))


# --------------------------------------------------------------------------- registration errors


def test_defrule_checks_the_derivative_signatures() -> None:
    with pytest.raises(adgen.RuleError, match=r"jvp of mul2 must take \(x, y, dx, dy\)") as err:
        adgen.defrule(mul2, jvp=wrong_jvp)
    assert err.value.loc is not None and err.value.loc.filename == HERE
    assert err.value.loc.lineno == line_of(wrong_jvp, "def wrong_jvp")
    with pytest.raises(adgen.RuleError, match=r"vjp of mul2 must take \(g, x, y\)"):
        adgen.defrule(mul2, vjp=wrong_vjp)
    with pytest.raises(adgen.RuleError, match="wrt names"):
        adgen.defrule(mul2, jvp=mul2_jvp, wrt=("z",))
    with pytest.raises(adgen.RuleError, match="needs jvp"):
        adgen.defrule(mul2)
    assert adgen.rules.lookup(mul2) is None


def test_defrule_refuses_star_args() -> None:
    def star(*xs):
        return xs[0]

    with pytest.raises(adgen.RuleError, match="plain parameters"):
        adgen.defrule(star, jvp=wrong_jvp)


def test_wrt_restricts_the_differentiable_parameters() -> None:
    adgen.defrule(mul2, jvp=lambda x, y, dx: dx * y, vjp=lambda g, x, y: g * y, wrt=("x",))
    x, y = np.array([0.3, -1.2]), np.array([2.0, 0.5])
    np.testing.assert_allclose(adgen.grad(uses_mul2)(x, y), fd_grad(uses_mul2, x, y), rtol=1e-6)
    with pytest.raises(adgen.NonDifferentiableError, match="`y`"):
        adgen.grad(uses_mul2, wrt=1)(x, y)


# --------------------------------------------------------------------------- template form


def scaled_cos(x):
    return 2.0 * np.cos(x)


def sin_times(x, y):
    return np.sin(x) * y


def uses_sin_times(x, y):
    scaled_cos = x + 1.0  # a local named like the rule's helper: the helper is renamed
    return np.sum(sin_times(scaled_cos, y) * y)


def test_template_rule_with_module_helpers_both_modes() -> None:
    @adgen.rule(sin_times)
    def sin_times_rule(x, y):
        def jvp_x(d):
            return d * scaled_cos(x) / 2.0 * y

        def jvp_y(d):
            return d * np.sin(x)

        def vjp_x(g):
            return g * scaled_cos(x) / 2.0 * y

        def vjp_y(g):
            return g * np.sin(x)

    x, y = np.array([0.3, -1.2]), np.array([2.0, 0.5])
    check_grads(uses_sin_times, x, y)
    gx, gy = adgen.grad(uses_sin_times, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, fd_grad(uses_sin_times, x, y), rtol=1e-6)
    np.testing.assert_allclose(gy, fd_grad(lambda b, a: uses_sin_times(a, b), y, x), rtol=1e-6)
    code = adgen.source(uses_sin_times, wrt=(0, 1))
    assert "sin_times(" in code and "scaled_cos_1(" in code


def test_template_rule_is_used_wrong_on_purpose() -> None:
    @adgen.rule(weird)
    def weird_rule(x):
        def jvp(d):
            return d * 2.0

        def vjp(g):
            return g * 2.0

    x = np.array([0.1, 0.7])
    np.testing.assert_allclose(adgen.grad(uses_weird)(x), [6.0, 6.0])
    assert adgen.jvp(uses_weird, (x,), (np.ones(2),))[1] == pytest.approx(12.0)


def test_template_second_order_inlines_the_helper() -> None:
    @adgen.rule(weird)
    def weird_rule(x):
        def jvp(d):
            return d * scaled_cos(x) / 2.0

        def vjp(g):
            return g * scaled_cos(x) / 2.0

    first = pipeline.derivative(uses_weird, "forward", ("x",)).compiled
    x, t, u = np.array([0.3, -0.2]), np.array([1.0, 2.0]), np.array([0.5, -1.0])
    check_grads(first, x, t)
    _, (_, hvp) = adgen.jvp(first, (x, t), (u, np.zeros(2)))
    assert hvp == pytest.approx(float(np.sum(-3.0 * np.sin(x) * t * u)))


def test_template_rule_with_one_mode_refuses_the_other() -> None:
    @adgen.rule(weird)
    def weird_rule(x):
        def vjp(g):
            return g * 2.0

    x = np.array([0.1])
    np.testing.assert_allclose(adgen.grad(uses_weird)(x), [6.0])
    with pytest.raises(adgen.NoRuleError, match="add `jvp_x`") as err:
        adgen.jvp(uses_weird, (x,), (x,))
    assert err.value.loc is not None and err.value.loc.lineno == line_of(uses_weird, "return")


def test_template_unknown_name_is_refused_at_registration_with_its_line() -> None:
    def weird_rule(x):
        def jvp(d):
            return d * no_such_helper(x)  # noqa: F821

        def vjp(g):
            return g

    with pytest.raises(adgen.RuleError, match="unknown name `no_such_helper`") as err:
        adgen.rule(weird)(weird_rule)
    assert err.value.loc is not None and err.value.loc.filename == HERE
    assert err.value.loc.lineno == line_of(weird_rule, "no_such_helper")
    assert adgen.rules.lookup(weird) is None


def test_template_parameters_must_match_the_function() -> None:
    def bad(a, b):
        def jvp_a(d):
            return d

        def vjp_a(g):
            return g

    with pytest.raises(adgen.RuleError, match=r"differ from the function's \(x, y\)") as err:
        adgen.rule(sin_times)(bad)
    assert err.value.loc is not None and err.value.loc.lineno == line_of(bad, "def bad")


# --------------------------------------------------------------------------- nondifferentiable


def bucket(x):
    return np.floor(4.0 * x) / 4.0 + 0.1 * x  # smooth part ignored on purpose: a promise


def uses_bucket(x):
    return np.sum(x * bucket(x))


def test_nondifferentiable_decorator() -> None:
    assert adgen.nondifferentiable(bucket) is bucket
    x = np.array([0.3, 1.7])
    np.testing.assert_allclose(adgen.grad(uses_bucket)(x), bucket(x))
    t = np.array([1.0, -1.0])
    assert adgen.jvp(uses_bucket, (x,), (t,))[1] == pytest.approx(float(bucket(x) @ t))
    assert "bucket(x)" in adgen.source(uses_bucket)


def test_nondifferentiable_as_decorator_syntax() -> None:
    @adgen.nondifferentiable
    def count_positive(x):
        return np.sum(x > 0) * 1.0

    def f(x):
        return count_positive(x) * np.sum(x)

    x = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(adgen.grad(f)(x), [2.0, 2.0, 2.0])


# --------------------------------------------------------------------------- stop_gradient


def sg_product(x):
    return x * adgen.stop_gradient(x)


def sg_array(x):
    return np.sum(np.sin(x) * adgen.stop_gradient(np.cos(x)))


def sg_control(x, n):
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            s = s + adgen.stop_gradient(x) * x
        else:
            s = adgen.stop_gradient(s) + x
    return np.sum(s)


def test_stop_gradient_scalar_both_modes() -> None:
    assert adgen.grad(sg_product)(3.0) == 3.0
    assert adgen.jvp(sg_product, (3.0,), (1.0,)) == (9.0, 3.0)


def test_stop_gradient_arrays_both_modes() -> None:
    x = np.array([0.2, -1.0, 0.5])
    np.testing.assert_allclose(adgen.grad(sg_array)(x), np.cos(x) * np.cos(x))
    t = np.array([1.0, 2.0, -1.0])
    assert adgen.jvp(sg_array, (x,), (t,))[1] == pytest.approx(float(np.sum(np.cos(x) ** 2 * t)))
    assert "stop_gradient(" in adgen.source(sg_array)


def test_stop_gradient_in_loops_and_branches() -> None:
    x = np.array([0.5, 2.0])
    # even i adds stop(x) * x (derivative x); odd i restarts from stop(s) + x (derivative 1)
    expected = {1: x, 2: np.ones(2), 3: 1.0 + x, 4: np.ones(2)}
    for n, want in expected.items():
        np.testing.assert_allclose(adgen.grad(sg_control)(x, n), want)
        t = np.array([1.0, -3.0])
        assert adgen.jvp(sg_control, (x, n), (t, None))[1] == pytest.approx(float(want @ t))


def test_stop_gradient_survives_second_order() -> None:
    """Generated code keeps the call, so differentiating it again stops there too."""
    first = pipeline.derivative(sg_array, "forward", ("x",)).compiled
    assert "stop_gradient(" in inspect.getsource(first)
    x, t, u = np.array([0.2, -1.0]), np.array([1.0, 2.0]), np.array([0.5, 1.5])
    _, (_, hvp) = adgen.jvp(first, (x, t), (u, np.zeros(2)))
    # d/dx of cos(x) * stop(cos(x)) * t along u: -sin(x) * cos(x) * t * u
    assert hvp == pytest.approx(float(np.sum(-np.sin(x) * np.cos(x) * t * u)))


def test_stop_gradient_is_the_identity() -> None:
    a = np.ones(3)
    assert adgen.stop_gradient(a) is a
    assert adgen.stop_gradient(2.5) == 2.5


# --------------------------------------------------------------------------- the function itself


def test_differentiating_a_function_with_a_rule_uses_the_rule() -> None:
    """adgen.grad(fn) of a function with a rule uses the rule, as calls of it do."""
    adgen.defrule(weird, jvp=wrong_jvp, vjp=wrong_vjp)
    assert adgen.grad(weird)(0.3) == 2.0
    assert adgen.jvp(weird, (0.3,), (1.5,)) == (pytest.approx(np.sin(0.3)), 3.0)
    assert "wrong_vjp(" in adgen.source(weird)
    adgen.unregister(weird)
    assert adgen.grad(weird)(0.3) == pytest.approx(np.cos(0.3))


def test_differentiating_a_custom_derivative_directly() -> None:
    sc = adgen.custom_derivative(softclip)
    sc.defvjp(softclip_vjp)
    x = np.array([0.2, -0.5])
    g = adgen.grad(lambda_free_sum(sc))(x)
    np.testing.assert_allclose(g, 5.0 * (1.0 - np.tanh(x) ** 2) / 2.0)
    assert adgen.grad(sc)(0.2, 0.0, 5.0) == pytest.approx(5.0 * (1.0 - np.tanh(0.2) ** 2) / 2.0)
    with pytest.raises(adgen.NoRuleError, match=r"@softclip\.defjvp"):
        adgen.jvp(sc, (0.2,), (1.0,))


def lambda_free_sum(sc: Any) -> Callable[..., Any]:
    def total(x):
        return np.sum(sc(x, hi=5.0))

    return total


def sg_then_write(x):
    y = adgen.stop_gradient(x)
    y[0] = 0.0
    return np.sum(y * x)


def rule_then_write(x):
    y = weird(x)
    y[0] = 0.0
    return np.sum(y)


def test_no_in_place_writes_into_results_that_may_alias_an_argument() -> None:
    """stop_gradient returns its argument itself; a user's function may too."""
    x = np.array([1.0, 2.0])
    with pytest.raises(adgen.UnsupportedSyntaxError):
        adgen.grad(sg_then_write)(x)
    adgen.defrule(weird, jvp=wrong_jvp, vjp=wrong_vjp)
    with pytest.raises(adgen.UnsupportedSyntaxError):
        adgen.grad(rule_then_write)(x)
    np.testing.assert_array_equal(x, [1.0, 2.0])


def symmetric_scale(x, m):
    return m @ x


def test_a_template_that_is_its_own_transpose_is_written_once() -> None:
    """``vjp_x = jvp_x``: the derivative in x is its own transpose (here m is symmetric),
    so reverse mode uses the forward template; a mismatched alias is refused."""

    @adgen.rule(symmetric_scale)
    def _scale(x, m):
        def jvp_x(d):
            return m @ d

        vjp_x = jvp_x  # noqa: F841

    m = np.array([[2.0, 0.5], [0.5, 1.0]])
    x = np.array([0.3, -0.7])

    def f(x):
        return np.sum(np.sin(symmetric_scale(x, m)))

    np.testing.assert_allclose(adgen.grad(f)(x), m @ np.cos(m @ x), rtol=1e-12)
    check_grads(f, x)
    with pytest.raises(adgen.AdgenError, match="holds only jvp/vjp template functions"):

        @adgen.rule(symmetric_scale)
        def _wrong(x, m):
            def jvp_x(d):
                return m @ d

            vjp_m = jvp_x  # noqa: F841


def test_a_function_refused_in_both_modes_does_not_send_to_the_other():
    from adgen.errors import NoRuleError
    from adgen.rules import registry

    with adgen.rules.registrations():
        registry.refused_derivative(_twice_refused, reason="not written yet")
        for run in (
            lambda: adgen.jvp(_calls_twice_refused, (1.0,), (1.0,)),
            lambda: adgen.grad(_calls_twice_refused)(1.0),
        ):
            with pytest.raises(NoRuleError, match="not written yet") as info:
                run()
            assert "works with the rule" not in str(info.value)


def _twice_refused(x):
    return 2.0 * x


def _calls_twice_refused(x):
    return _twice_refused(x) + x
