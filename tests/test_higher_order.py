"""Higher-order derivatives: adgen differentiates the code it generated.

``grad(grad(f))``, third derivatives, forward-over-reverse (``jvp`` of ``grad``, ``hessian``,
``hvp``), reverse-over-reverse, ``grad`` of functions that call ``adgen.jvp`` / ``adgen.vjp``,
and nested differentiation without perturbation confusion -- on straight-line code and on
code with loops, branches, while loops and in-place writes. Checked against exact values or
central differences of the first derivative.
"""

import math

import numpy as np
import pytest

import adgen

H = 1e-6


def central(f, x, h=H):
    """Central difference of ``f`` at ``x`` (any shape), one column per input element."""
    x = np.asarray(x, dtype=float)
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        e = e.reshape(x.shape)
        columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    out = np.stack(columns, axis=-1)
    return out.reshape(np.shape(columns[0]) + x.shape)


# -- scalar functions with known derivatives --------------------------------------------------
def sin_cube(x):
    return np.sin(x) * x**3


def test_second_and_third_derivative_exact():
    x = 1.0
    second = -(x**3) * math.sin(x) + 6 * x**2 * math.cos(x) + 6 * x * math.sin(x)
    third = -(x**3) * math.cos(x) - 9 * x**2 * math.sin(x) + 18 * x * math.cos(x) + 6 * math.sin(x)
    assert adgen.grad(adgen.grad(sin_cube))(x) == pytest.approx(second, rel=1e-12)
    assert adgen.grad(adgen.grad(adgen.grad(sin_cube)))(x) == pytest.approx(third, rel=1e-12)


def test_second_derivative_is_not_the_first():
    """grad(grad(f)) once returned grad(f): the derivative object was unwrapped to f."""
    g, gg = adgen.grad(sin_cube), adgen.grad(adgen.grad(sin_cube))
    assert gg(0.5) != pytest.approx(g(0.5))
    assert adgen.jvp(g, (0.5,), (1.0,))[1] == pytest.approx(gg(0.5), rel=1e-12)


def test_fourth_derivative_of_exp_polynomial():
    def f(x):
        return np.exp(2.0 * x) + x**5

    d4 = adgen.grad(adgen.grad(adgen.grad(adgen.grad(f))))
    x = 0.3
    assert d4(x) == pytest.approx(16 * math.exp(2 * x) + 120 * x, rel=1e-10)


# -- control flow ---------------------------------------------------------------------------
def loop_branch(x):
    s = 0.0
    for i in range(4):
        s = s + np.sin(x) * s + x
        if s > 1.5:
            s = s * 0.5
    return s


def while_loop(x):
    y = x
    k = 0
    while y < 5.0:
        y = y * 1.3 + np.sin(y)
        k = k + 1
    return y * x


def in_place(x):
    y = np.zeros(3)
    y[0] = x
    for i in range(1, 3):
        y[i] = y[i - 1] * np.cos(x) + x
    return np.sum(y * y)


def array_loop(x):
    s = 0.0
    h = x
    for i in range(3):
        h = np.tanh(h * x[::-1] + 0.1)
        s = s + np.sum(h**2)
    return s


@pytest.mark.parametrize("fn", [loop_branch, while_loop, in_place], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [0.3, 0.7, 1.2])
def test_second_derivative_with_control_flow_both_ways(fn, x):
    g = adgen.grad(fn)
    expected = central(g, x)
    assert adgen.grad(g)(x) == pytest.approx(expected, rel=1e-5, abs=1e-7)  # reverse over reverse
    assert adgen.jvp(g, (x,), (1.0,))[1] == pytest.approx(expected, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("fn", [loop_branch, while_loop, in_place], ids=lambda f: f.__name__)
def test_third_derivative_through_control_flow_both_ways(fn):
    """The second-order code of a loop keeps lists of cotangents (rt.split_last,
    rt.accumulate); those helpers have rules, so a third pass works in either mode (more in
    tests/test_third_order.py, against exact Taylor coefficients)."""
    g2 = adgen.grad(adgen.grad(fn))
    x = 0.7
    expected = central(g2, x)
    assert adgen.grad(g2)(x) == pytest.approx(expected, rel=1e-5, abs=1e-6)
    assert adgen.jvp(g2, (x,), (1.0,))[1] == pytest.approx(expected, rel=1e-5, abs=1e-6)


# -- hessians and hessian-vector products ---------------------------------------------------
def quadratic_form(x, a):
    return x @ a @ x + np.sum(np.sin(x))


def test_hessian_of_quadratic_form_exact():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4))
    x = rng.standard_normal(4)
    expected = a + a.T - np.diag(np.sin(x))
    assert np.allclose(adgen.hessian(quadratic_form)(x, a), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x", [np.array([0.3, 0.7, 1.1]), np.array([[0.2, -0.5], [1.0, 0.4]])])
def test_hessian_matches_differences_of_the_gradient(x):
    def f(x):
        return np.sum(x * x[::-1]) * np.exp(np.mean(np.cos(x))) + np.sum(x**3)

    hess = adgen.hessian(f)(x)
    assert hess.shape == x.shape + x.shape
    assert np.allclose(hess, central(adgen.grad(f), x), rtol=1e-6, atol=1e-7)
    flat = hess.reshape(x.size, x.size)
    assert np.allclose(flat, flat.T, atol=1e-12)


def test_hessian_with_loops_and_branches():
    x = np.array([0.5, -0.2, 0.9])
    hess = adgen.hessian(array_loop)(x)
    assert np.allclose(hess, central(adgen.grad(array_loop), x), rtol=1e-5, atol=1e-7)


def test_hvp_forward_over_reverse_equals_hessian_times_v():
    rng = np.random.default_rng(1)
    x, v = rng.standard_normal(3), rng.standard_normal(3)
    expected = adgen.hessian(array_loop)(x) @ v
    assert np.allclose(adgen.hvp(array_loop)(x, v), expected, rtol=1e-12, atol=1e-12)
    # the same product spelled by hand: jvp of the gradient
    by_hand = adgen.jvp(adgen.grad(array_loop), (x,), (v,))[1]
    assert np.allclose(by_hand, expected, rtol=1e-12, atol=1e-12)


def test_hvp_of_second_argument():
    def f(a, x):
        return np.sum(np.exp(a * x))

    a, x, v = np.array([1.0, 2.0]), np.array([0.1, 0.2]), np.array([1.0, -1.0])
    expected = np.diag(a**2 * np.exp(a * x)) @ v
    assert np.allclose(adgen.hvp(f, wrt=1)(a, x, v), expected, rtol=1e-12)


def test_laplacian_is_the_trace_of_the_hessian():
    def f(x):
        return np.sum(x**3) + x[0] * x[1] * x[2]

    x = np.array([1.0, 2.0, 3.0])
    assert adgen.laplacian(f)(x) == pytest.approx(6 * np.sum(x), rel=1e-12)
    assert adgen.laplacian(f)(x) == pytest.approx(np.trace(adgen.hessian(f)(x)), rel=1e-12)


def test_jacobians_of_the_gradient():
    def f(x):
        return np.sum(np.sin(x) * x[::-1])

    x = np.array([0.1, 0.4, 0.8])
    hess = adgen.hessian(f)(x)
    assert np.allclose(adgen.jacrev(adgen.grad(f))(x), hess, atol=1e-12)
    assert np.allclose(adgen.jacobian(adgen.grad(f))(x), hess, atol=1e-12)


def test_hvp_and_hessian_refusals():
    def f(a, b):
        return np.sum(a * b)

    with pytest.raises(adgen.WrtError):
        adgen.hessian(f, wrt=(0, 1))
    with pytest.raises(adgen.ShapeMismatchError, match="v has shape"):
        adgen.hvp(f)(np.ones(2), np.ones(2), np.ones(3))
    with pytest.raises(adgen.NonScalarOutputError):  # the Jacobian is an array, not a scalar
        adgen.grad(adgen.jacfwd(f))(np.ones(2), np.ones(2))
    # ... and differentiable again, like every derivative adgen makes
    assert np.array_equal(adgen.jacfwd(adgen.jacfwd(f))(np.ones(2), np.ones(2)), np.zeros((2, 2)))


# -- functions that call adgen themselves ---------------------------------------------------
def calls_jvp(x):
    return adgen.jvp(sin_cube, (x,), (1.0,))[1] * x


def calls_vjp(x):
    out, pullback = adgen.vjp(lambda y: np.sin(y) * y**2 * x, x)
    return pullback(1.0)[0] + out


def calls_grad_object(x):
    return DSIN(x) * 2.0


DSIN = adgen.grad(sin_cube)


@pytest.mark.parametrize("fn", [calls_jvp, calls_vjp, calls_grad_object], ids=lambda f: f.__name__)
def test_grad_of_functions_calling_adgen(fn):
    x = 0.7
    assert adgen.grad(fn)(x) == pytest.approx(central(fn, x), rel=1e-6)
    assert adgen.jvp(fn, (x,), (1.0,))[1] == pytest.approx(central(fn, x), rel=1e-6)


def test_grad_of_vjp_on_arrays():
    def loss(w):
        out, pullback = adgen.vjp(lambda z: np.tanh(z * w), w)
        return np.sum(pullback(np.ones(3))[0] ** 2) + np.sum(out)

    w = np.array([0.3, -1.0, 2.0])
    assert np.allclose(adgen.grad(loss)(w), central(loss, w), rtol=1e-6, atol=1e-8)


# -- nested derivatives of functions given tuples, lists and dicts -------------------------
def _spread_sum(x, parts):  # a call given the tuple's items one by one (`*parts`)
    return np.sum(np.sin(x) * _weights(*parts))


def _weights(a, b):
    return a * b + np.cos(a)


def tangent_through_tuple(x, parts, dx, dparts):
    return adgen.jvp(_spread_sum, (x, parts), (dx, dparts))[1]


def pullback_through_tuple(x, a, b):
    out, pullback = adgen.vjp(_spread_sum, x, (a, b))
    dx, (da, db) = pullback(1.0)
    return out + np.sum(dx * da) + np.sum(db**2)


def gradient_of_a_dict(x, a, b):
    g = adgen.grad(lambda x, p: np.sum(np.tanh(x * p["a"]) * p["b"]), 1)(x, {"a": a, "b": b})
    return np.sum(g["a"] * x) + np.sum(g["b"] ** 2)


_X3 = np.array([0.3, -0.7, 1.1])
_A3, _B3 = np.array([0.5, 0.2, -0.4]), np.array([1.3, -0.6, 0.8])


def test_nested_jvp_of_a_function_given_a_tuple():
    """``adgen.jvp(f, (x, parts), (dx, dparts))`` inside a differentiated function, ``parts``
    a tuple the inner function spreads: its items are arguments of the nested code (a tuple
    known item by item), differentiated again in both modes."""
    dx, dparts = np.array([1.0, 0.5, -0.2]), (np.array([0.1, 0.2, 0.3]), np.ones(3))

    def of_a(a):
        return tangent_through_tuple(_X3, (a, _B3), dx, dparts)

    want = central(of_a, _A3)
    np.testing.assert_allclose(adgen.grad(of_a)(_A3), want, rtol=1e-6, atol=1e-9)
    _, t = adgen.jvp(of_a, (_A3,), (np.ones(3),))
    np.testing.assert_allclose(t, np.sum(want), rtol=1e-6)


@pytest.mark.parametrize("fn", [pullback_through_tuple, gradient_of_a_dict])
def test_nested_reverse_mode_given_a_tuple_or_a_dict(fn):
    """``adgen.vjp`` / ``adgen.grad`` inside, of a function given a tuple or a dict: the
    cotangents come back in the argument's structure, and the whole differentiates again."""
    for k, v in enumerate((_X3, _A3, _B3)):
        args = [_X3, _A3, _B3]

        def along(u, k=k):
            args[k] = u
            return fn(*args)

        want = central(along, v)
        args = [_X3, _A3, _B3]
        np.testing.assert_allclose(adgen.grad(fn, k)(*args), want, rtol=1e-6, atol=1e-8)


# -- nested differentiation: perturbation confusion ------------------------------------------
def classic(x):  # d/dx [x * d/dy (x + y)] = 1, not 2
    return x * adgen.grad(lambda y: x + y)(2.0)


def classic_product(x):  # d/dx [x * d/dy (x * y) at y = 2] = 2x
    return x * adgen.grad(lambda y: x * y)(2.0)


def inner_at_outer(x):  # d/dy (x * y**2) at y = x is 2x**2: derivative 4x
    return adgen.grad(lambda y: x * y**2)(x)


def local_def(x):  # d/dy sin(x*y) * y at y = x
    def h(y):
        return np.sin(x * y) * y

    return adgen.grad(h)(x) * x


def named_grad(x):
    dh = adgen.grad(lambda y: np.exp(x * y))
    return dh(1.0) + dh(x)


def value_and_grad_inside(x):
    value, slope = adgen.value_and_grad(lambda y: x * y**3)(x)
    return value * slope


def two_levels(x):  # d/dy [y * d/dz (x*y*z)] = d/dy [x*y**2] = 2xy, at y = x: 2x**2
    return adgen.grad(lambda y: y * adgen.grad(lambda z: x * y * z)(1.0))(x)


def jvp_inside(x):  # d/dy (x*y**2) in direction 1 at y = 3: 6x
    return adgen.jvp(lambda y: x * y**2, (3.0,), (1.0,))[1]


NESTED = [
    (classic, lambda x: 1.0),
    (classic_product, lambda x: 2 * x),
    (inner_at_outer, lambda x: 4 * x),
    (two_levels, lambda x: 4 * x),
    (jvp_inside, lambda x: 6.0),
    (local_def, None),
    (named_grad, None),
    (value_and_grad_inside, None),
]


@pytest.mark.parametrize("fn, exact", NESTED, ids=[f.__name__ for f, _ in NESTED])
@pytest.mark.parametrize("x", [1.0, 0.6, -1.3])
def test_nested_derivatives_have_no_perturbation_confusion(fn, exact, x):
    expected = exact(x) if exact is not None else central(fn, x)
    assert adgen.grad(fn)(x) == pytest.approx(expected, rel=1e-6, abs=1e-9)
    assert adgen.jvp(fn, (x,), (1.0,))[1] == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_classic_case_exact_values():
    assert adgen.grad(classic)(1.0) == 1.0
    assert adgen.grad(classic_product)(1.0) == 2.0


def test_nested_on_arrays_inside_a_loop():
    def f(w):
        total = 0.0
        for i in range(3):
            g = adgen.grad(lambda v: np.sum(np.sin(v * w) ** 2))(w * i)
            total = total + np.sum(g * w)
        return total

    w = np.array([0.2, -0.4, 0.9])
    assert np.allclose(adgen.grad(f)(w), central(f, w), rtol=1e-6, atol=1e-8)


def test_nested_refusals_name_the_line():
    def passes_jacobian(x):
        return adgen.jacfwd(sin_cube)(x)

    def stores_grad_for_later(x):
        fs = [adgen.grad(sin_cube)]
        return fs[0](x)

    # an operator applied inside is differentiated through its generated code
    h = 1e-6
    expected = (adgen.grad(sin_cube)(1.0 + h) - adgen.grad(sin_cube)(1.0 - h)) / (2 * h)
    assert np.isclose(adgen.grad(passes_jacobian)(1.0), expected, rtol=1e-6)
    with pytest.raises(adgen.AdgenError) as info:
        adgen.grad(stores_grad_for_later)(1.0)
    assert info.value.loc.filename == __file__


# -- never stale ----------------------------------------------------------------------------
SCALE = 2.0


def scaled(x):
    return SCALE * x**3


def test_second_derivative_follows_a_changed_global():
    global SCALE
    gg = adgen.grad(adgen.grad(scaled))
    assert gg(1.0) == pytest.approx(12.0)
    SCALE = 3.0
    try:
        assert gg(1.0) == pytest.approx(18.0)
    finally:
        SCALE = 2.0


def test_reversed_is_only_accepted_on_ranges():
    def f(x):
        s = 0.0
        for v in reversed(x):
            s = s * 0.5 + v
        return s

    with pytest.raises(adgen.AdgenError, match="reversed"):
        adgen.grad(f)(np.ones(3))


# -- in-place writes, including rows that are views and slots written twice -------------------
def rows_written_twice(x):
    y = np.zeros((2, 3))
    y[0] = x
    for i in range(3):
        y[0] = y[0] * np.cos(x) + 0.1 * y[1]
        y[1] = y[0] * x + y[1]
    return np.sum(y * y)


def slices_and_masks(x):
    y = np.ones(4)
    y[1:3] = x[:2] * 2.0
    y[y > 1.5] = y[y > 1.5] ** 2
    y[::2] += np.sin(x[1:3])
    return np.sum(y * x)


@pytest.mark.parametrize("fn", [rows_written_twice, slices_and_masks], ids=lambda f: f.__name__)
def test_hessian_of_in_place_code(fn):
    x = np.array([0.3, 0.8, -0.5, 1.1])[: 3 if fn is rows_written_twice else 4]
    g = adgen.grad(fn)
    expected = central(g, x)
    assert np.allclose(adgen.hessian(fn)(x), expected, rtol=1e-5, atol=1e-7)
    assert np.allclose(adgen.jacrev(g)(x), expected, rtol=1e-5, atol=1e-7)  # reverse over reverse


# -- first-order bugs found while writing this (regressions) ---------------------------------
def test_list_index_picks_rows_not_one_element():
    def f(x):
        return np.sum(x[[0, 2, 0]])

    x = np.arange(27.0).reshape(3, 3, 3)
    value, gradient = adgen.value_and_grad(f)(x)
    assert value == f(x) == 270.0
    expected = np.zeros_like(x)
    expected[0] = 2.0
    expected[2] = 1.0
    assert np.array_equal(gradient, expected)


def test_forward_mode_of_nested_tuple_results():
    def f(x):
        y = x * 2.0
        return (x, (y,))

    value, tangent = adgen.jvp(f, (1.5,), (1.0,))
    assert value == (1.5, (3.0,))
    assert tangent == (1.0, (2.0,))


def test_hessian_and_grad_of_grad_of_a_lambda():
    # the wrapper adgen writes around a lambda's gradient needs a valid Python name
    f = lambda v: np.sum(np.sin(v) * v)  # noqa: E731
    x = np.array([0.3, -0.8])
    expected = np.diag(2 * np.cos(x) - x * np.sin(x))
    assert np.allclose(adgen.hessian(f)(x), expected, rtol=1e-12, atol=1e-12)
    assert np.allclose(adgen.jacfwd(adgen.grad(f))(x), expected, rtol=1e-12, atol=1e-12)


# -- code made for values of any kind, differentiated again for real ones -------------------
def test_nested_code_for_real_arguments_asks_no_kind_questions():
    """grad(f)'s code is made for real and complex arguments alike (it asks rt.is_complex and
    projects with rt.real_like when it runs); differentiated again for real arguments, and
    when read inside a function of real values, those questions are settled: none is left in
    the code, and the values are unchanged."""
    from adgen.middle.shapes import describe
    from adgen.pipeline import derivative

    def f(x, a):
        h = np.zeros_like(x)
        for _ in range(3):
            h = np.tanh(a * h + x)
        return np.sum(h * h)

    g = adgen.grad(f)
    inner = g.adgen_function()
    # (the code grad(f) calls: made for any kind)
    made = derivative(f, "reverse", ("x",), batched=False, signature=_any())
    assert "rt.real_like" in _code(made.generated.source)
    x, v = np.linspace(-1.0, 1.0, 5), np.cos(np.arange(5.0))
    for signature in ((("x", describe(x)), ("a", describe(0.7))), ()):
        d = derivative(inner, "forward", ("x",), signature=signature)
        assert "rt.real_like" not in _code(d.generated.source)
        assert "rt.is_complex" not in _code(d.generated.source)
        got = d.compiled(x, 0.7, v)[1]
        expected = (g(x + 1e-6 * v, 0.7) - g(x - 1e-6 * v, 0.7)) / 2e-6
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)

    def outer(x):  # grad(f) called inside differentiated code of real values
        return np.sum(g(x, 0.7) * np.cos(x))

    assert "rt.real_like" not in _code(adgen.source(outer))
    expected = central(lambda y: outer(y), x)
    np.testing.assert_allclose(adgen.grad(outer)(x), expected, rtol=1e-6, atol=1e-8)


def _any():
    from adgen.middle.shapes import ANY_KIND

    return (ANY_KIND,)


def _code(source):
    """The source without its comments (which quote the lines the code came from)."""
    return "\n".join(line.split("#")[0] for line in source.splitlines())


# -- derivative code read again, simplified for the call's shapes ---------------------------
@pytest.mark.parametrize(
    "shape_x, shape_y, dtype",
    [((4,), (4,), np.float64), ((4,), (3, 4), np.float64), ((2, 3), (), np.float32)],
    ids=["same shapes", "broadcast", "float32 with a scalar"],
)
def test_hvp_of_code_read_again_matches_differences(shape_x, shape_y, dtype):
    """grad(f)'s code holds arrays of ones (the seed of np.sum's adjoint), rt.unbroadcast
    calls and kind questions; read again for hvp they are settled where the shapes show it
    (products with ones become copies, unbroadcasts of equal shapes copies) and left where
    they do not (a broadcast operand, float32 values) -- the values are the same."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=shape_x).astype(dtype)
    y = np.asarray(rng.normal(size=shape_y)).astype(dtype)
    v = rng.normal(size=shape_x).astype(dtype)

    def f(x, y):
        h = np.tanh(x * y) - np.sin(x)
        return np.sum(h * h) + np.sum(-np.cos(y * x))

    g = adgen.grad(f)
    got = adgen.hvp(f)(x, y, v)
    assert got.dtype == dtype and got.shape == x.shape
    x64, v64, y64 = x.astype(np.float64), v.astype(np.float64), y.astype(np.float64)
    expected = (g(x64 + 1e-6 * v64, y64) - g(x64 - 1e-6 * v64, y64)) / 2e-6
    tolerance = 1e-6 if dtype == np.float64 else 1e-3
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


def test_ones_of_a_sums_adjoint_are_multiplied_away_in_code_read_again():
    from adgen.middle.shapes import describe
    from adgen.pipeline import derivative

    def f(x):
        return np.sum(np.tanh(x) ** 2)

    inner = adgen.grad(f).adgen_function()
    x = np.linspace(-1.0, 1.0, 6)
    d = derivative(inner, "forward", ("x",), signature=(("x", describe(x)),))
    code = _code(d.generated.source)
    assert "rt.unreduce" not in code and "rt.unbroadcast" not in code
    second = d.compiled(x, np.ones_like(x))[1]  # d/dx of 2 tanh(x) (1 - tanh(x)^2)
    t = np.tanh(x)
    np.testing.assert_allclose(second, 2 * (1 - t**2) ** 2 - 4 * t**2 * (1 - t**2), rtol=1e-12)


def _loss_broadcast(x, y):
    h = np.tanh(x * y) - np.sin(x)
    return np.sum(h * h) + np.sum(-np.cos(y * x)) + np.mean(x**3)


def _loss_quotient(x, y):
    return np.sum(np.exp(-x) / (1.0 + y)) - 2.0 * np.sum(x * x * y)


@pytest.mark.parametrize("loss", [_loss_broadcast, _loss_quotient])
@pytest.mark.parametrize(
    "shape_x, shape_y, dtype",
    [((5,), (5,), np.float64), ((5,), (2, 5), np.float64), ((2, 3), (), np.float32)],
    ids=["same shapes", "broadcast", "float32 with a scalar"],
)
def test_settled_code_read_again_gives_the_same_bits(loss, shape_x, shape_y, dtype):
    """Forward over grad(f)'s code, specialised for the call (ones multiplied away,
    unbroadcasts of equal shapes dropped, kind questions answered), gives the same bits as
    the general code read as lowered (nothing settled, nothing optimized)."""
    from adgen.middle.shapes import describe
    from adgen.pipeline import derivative

    rng = np.random.default_rng(3)
    x = rng.normal(size=shape_x).astype(dtype)
    y = np.asarray(rng.normal(size=shape_y)).astype(dtype)
    v = rng.normal(size=shape_x).astype(dtype)
    inner = adgen.grad(loss).adgen_function()
    signature = (("x", describe(x)), ("y", describe(y)))
    settled = derivative(inner, "forward", ("x",), signature=signature)
    plain = derivative(inner, "forward", ("x",), optimized=False)
    if shape_x == shape_y:  # (the sums' seeds: arrays of ones, multiplied away)
        assert "rt.unreduce" not in _code(settled.generated.source)
        assert "rt.unreduce" in _code(plain.generated.source)
    for got, expected in zip(settled.compiled(x, y, v), plain.compiled(x, y, v), strict=True):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
