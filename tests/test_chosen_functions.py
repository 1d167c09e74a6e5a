"""A function chosen in a branch decided when the code runs, then called (issue 34, part 4).

``g = loggamma if complex_params else gammaln; g(x)`` (statsmodels' negative binomial),
``act = np.tanh if x[0] > 0 else np.sin``: adgen copies the statements after the ``if`` into
each of its paths (:mod:`adgen.frontend.lower.choices`) and differentiates both. Checked
against exact derivatives in both modes, on both paths, and at second order; a choice adgen
cannot pin down (a name rebound on one path only) stays refused, never guessed.
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError


def expression_choice(x):
    act = np.tanh if x[0] > 0 else np.sin
    return np.sum(act(x) * x)


def statement_choice_in_a_helper(x, scale=2.0):
    if np.sum(x) > 1.0:
        f = np.exp
    elif np.sum(x) > 0.0:
        f = np.log1p
    else:
        f = np.cos
    y = f(x) * scale
    return np.sum(y)


def choice_in_a_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            f = np.exp
        else:
            f = np.tanh
        s = s + f(x[i]) * (i + 1)
    return s


def uses_helper(x):
    return statement_choice_in_a_helper(x * 0.5) + 1.0


def d_expression_choice(x):
    if x[0] > 0:
        return np.tanh(x) + x * (1 - np.tanh(x) ** 2), -2 * np.tanh(x) * (
            1 - np.tanh(x) ** 2
        ) * x + 2 * (1 - np.tanh(x) ** 2)
    return np.sin(x) + x * np.cos(x), 2 * np.cos(x) - x * np.sin(x)


def d_statement_choice(x):
    if np.sum(x) > 1.0:
        return 2 * np.exp(x), 2 * np.exp(x)
    if np.sum(x) > 0.0:
        return 2 / (1 + x), -2 / (1 + x) ** 2
    return -2 * np.sin(x), -2 * np.cos(x)


def d_choice_in_a_loop(x):
    k = np.arange(1.0, x.size + 1)
    t = np.tanh(x)
    grad = np.where(x > 0, np.exp(x), 1 - t**2) * k
    second = np.where(x > 0, np.exp(x), -2 * t * (1 - t**2)) * k
    return grad, second


POINTS = [
    np.array([0.3, -0.2, 0.4]),  # first path
    np.array([-0.3, 0.2, -0.4]),  # second (and third) paths
    np.array([0.1, 0.2, 0.1]),
]


@pytest.mark.parametrize("x", POINTS, ids=["a", "b", "c"])
@pytest.mark.parametrize(
    "f, exact",
    [
        (expression_choice, d_expression_choice),
        (statement_choice_in_a_helper, d_statement_choice),
        (choice_in_a_loop, d_choice_in_a_loop),
    ],
    ids=["expression", "elif_chain", "loop"],
)
def test_a_chosen_function_is_differentiated_on_the_path_taken(f, exact, x):
    grad, second = exact(x)
    np.testing.assert_allclose(adgen.grad(f)(x), grad, rtol=1e-12, atol=1e-14)
    _, t = adgen.jvp(f, (x,), (np.ones(3),))
    assert np.isclose(t, np.sum(grad), rtol=1e-12)
    np.testing.assert_allclose(np.diag(adgen.hessian(f)(x)), second, rtol=1e-10, atol=1e-12)


def test_a_helper_choosing_a_function_is_inlined_with_its_choice():
    x = np.array([0.9, 0.8, 0.7])
    grad, _ = d_statement_choice(x * 0.5)
    np.testing.assert_allclose(adgen.grad(uses_helper)(x), 0.5 * grad, rtol=1e-12)


def chosen_on_one_path_only(x):
    f = np.sin
    if x[0] > 0:
        f = np.cos
    return np.sum(f(x))


def test_a_choice_rebound_on_one_path_only_is_refused_not_guessed():
    with pytest.raises(AdgenError, match="`f`"):
        adgen.grad(chosen_on_one_path_only)(np.array([0.5, 1.0]))


def _relu_in_place(z):
    np.maximum(z, 0.0, out=z)


def _tanh_in_place(z):
    np.tanh(z, out=z)


PICKED = {"relu": _relu_in_place, "tanh": _tanh_in_place}
PICKED_NAME = "tanh"


def _picked_by_a_global_key(x):
    z = x * 2.0
    PICKED[PICKED_NAME](z)
    return np.sum(z**2)


def test_a_function_picked_from_a_dict_by_a_global_key_follows_the_key():
    """scikit-learn's ``ACTIVATIONS[self.activation](z)`` with the key held in a global:
    picked when transforming, and picked again when the global is bound to another key."""
    global PICKED_NAME
    x = np.array([0.3, -0.8, 1.1])
    t = np.tanh(2.0 * x)
    np.testing.assert_allclose(
        adgen.grad(_picked_by_a_global_key)(x), 2.0 * t * (1 - t**2) * 2.0, rtol=1e-12
    )
    PICKED_NAME = "relu"
    try:
        r = np.maximum(2.0 * x, 0.0)
        np.testing.assert_allclose(
            adgen.grad(_picked_by_a_global_key)(x), 2.0 * r * (x > 0) * 2.0, rtol=1e-12
        )
    finally:
        PICKED_NAME = "tanh"


def _spread_product(*args):
    args = list(args)
    args[1] = np.sin(args[1])
    return args[0] * args[1] + args[2]


def choice_then_a_list_written_by_index(x):
    # (fuzzer seed 20261801, program 107: the statements after the choice are copied into
    # each path, and the list of three made there is still one spread with three items)
    act = np.tanh if np.sum(x) > 0.2 else np.cos
    v = act(x) * 0.5
    xs = [x, x * 0.75, v]
    xs[0] = np.sin(xs[0]) + xs[2]
    return np.sum(_spread_product(*xs))


@pytest.mark.parametrize("x", POINTS, ids=["a", "b", "c"])
def test_a_list_of_fixed_length_after_a_chosen_function_is_spread_on_each_path(x):
    def value(x):
        act = np.tanh if np.sum(x) > 0.2 else np.cos
        v = act(x) * 0.5
        first = np.sin(x) + v
        return np.sum(first * np.sin(x * 0.75) + v)

    h = 1e-6
    columns = [(value(x + h * e) - value(x - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(
        adgen.grad(choice_then_a_list_written_by_index)(x), columns, rtol=1e-7
    )
    _, t = adgen.jvp(choice_then_a_list_written_by_index, (x,), (np.ones(3),))
    assert t == pytest.approx(sum(columns), rel=1e-7)


# -- a function chosen in an expression called at once, its test known when transforming --------
def log_loss_score(p, y, normalize=True):
    """In the style of scikit-learn's scores: ``(np.mean if normalize else np.sum)(...)``."""
    losses = -(y * np.log(p) + (1 - y) * np.log1p(-p))
    return (np.average if normalize else np.sum)(losses)


USE_MAX = False


def pooled(x):
    return (np.max if USE_MAX else np.sum)(x**2) + (np.sin if not USE_MAX else np.cos)(x[0])


Y01 = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
P = np.array([0.8, 0.3, 0.6, 0.9, 0.2])


@pytest.mark.parametrize("normalize", [True, False])
def test_a_function_chosen_by_an_option_is_called_as_python_picks_it(normalize):
    exact = -(Y01 / P - (1 - Y01) / (1 - P)) / (5 if normalize else 1)
    f = adgen.grad(log_loss_score)
    np.testing.assert_allclose(f(P, Y01, normalize), exact, rtol=1e-12)
    _, t = adgen.jvp(lambda p: log_loss_score(p, Y01, normalize), (P,), (np.ones(5),))
    np.testing.assert_allclose(t, exact.sum(), rtol=1e-12)
    h = adgen.hessian(lambda p: log_loss_score(p, Y01, normalize))(P)
    d2 = (Y01 / P**2 + (1 - Y01) / (1 - P) ** 2) / (5 if normalize else 1)
    np.testing.assert_allclose(h, np.diag(d2), rtol=1e-12, atol=1e-14)


def test_a_function_chosen_by_a_module_flag_and_its_negation():
    x = np.linspace(0.2, 1.1, 4)
    expected = 2 * x + np.eye(4)[0] * np.cos(x[0])
    np.testing.assert_allclose(adgen.grad(pooled)(x), expected, rtol=1e-12)
    _, t = adgen.jvp(pooled, (x,), (np.ones(4),))
    np.testing.assert_allclose(t, expected.sum(), rtol=1e-12)


def test_a_function_chosen_by_a_value_of_the_data_in_an_expression_is_refused():
    def picked_by_data(x):
        return (np.max if x[0] > 0 else np.sum)(x)

    with pytest.raises(AdgenError, match="computed value"):
        adgen.grad(picked_by_data)(np.ones(3))


def _square(v):
    return v * v


def _cube(v):
    return v**3


def table_of_methods(x, method="square"):
    # scipy.stats.differential_entropy: `methods = {"vasicek": _vasicek_entropy, ...}`, then
    # `methods[method](...)`; scikit-learn's PowerTransformer: `{...}[self.method]`
    methods = {"square": _square, "cube": _cube, "tanh": np.tanh}
    return np.sum(methods[method](x) * x) + np.sum({"one": _square, "two": _cube}["two"](x))


TABLE_EXACT = {
    "square": lambda x: 3 * x**2 + 3 * x**2,
    "cube": lambda x: 4 * x**3 + 3 * x**2,
    "tanh": lambda x: np.tanh(x) + x * (1 - np.tanh(x) ** 2) + 3 * x**2,
}


@pytest.mark.parametrize("method", sorted(TABLE_EXACT))
def test_a_function_picked_from_a_table_by_a_string_option(method):
    # a string argument is an option the code is made for, by its value (as a bool is)
    x = np.array([0.3, -0.7, 1.1])
    want = TABLE_EXACT[method](x)
    np.testing.assert_allclose(adgen.grad(table_of_methods)(x, method), want, rtol=1e-12)
    value, grads = adgen.value_and_grad(table_of_methods)(x, method)
    assert value == pytest.approx(table_of_methods(x, method), rel=1e-12)

    def with_option(v):
        return table_of_methods(v, method)

    for e in np.eye(3):
        _, t = adgen.jvp(with_option, (x,), (e,))
        assert t == pytest.approx(want @ e, rel=1e-12)


def test_a_table_key_the_code_does_not_hold_raises_as_python_does():
    with pytest.raises(KeyError):
        table_of_methods(np.ones(2), "quartic")
    with pytest.raises((KeyError, AdgenError)):
        adgen.grad(table_of_methods)(np.ones(2), "quartic")


class _Scorer:
    def __init__(self, w):
        self.w = w

    def smooth(self, x):
        return np.sum(np.tanh(x * self.w))

    def rough(self, x):
        return np.sum(np.abs(x) * self.w)

    def run(self, x, how="smooth"):
        return getattr(self, how)(x)  # (the method an option names, as libraries pick one)


SCORER = _Scorer(np.array([0.5, -1.0, 2.0]))


def scored(x, how):
    return SCORER.run(x, how) + getattr(np, "sum")(x**2)  # noqa: B009 (as library code)


@pytest.mark.parametrize("how", ["smooth", "rough"])
def test_a_method_named_by_an_option_through_getattr(how):
    x = np.array([0.3, -0.7, 1.1])
    w = SCORER.w
    if how == "smooth":
        want = w * (1 - np.tanh(x * w) ** 2) + 2 * x
    else:
        want = np.sign(x) * w + 2 * x
    np.testing.assert_allclose(adgen.grad(scored)(x, how), want, rtol=1e-12)

    def with_option(v):
        return scored(v, how)

    _, t = adgen.jvp(with_option, (x,), (np.ones(3),))
    assert t == pytest.approx(np.sum(want), rel=1e-12)
