"""Lists and tuples in both modes: literals, append, comprehensions, then np.stack / np.array /
np.concatenate / builtin sum / indexing; tuples of values as results.

A list grown with ``append`` has a list of tangents (forward mode) and a list of cotangents
(reverse mode); the adjoint of ``xs.append(v)`` hands the last cotangent to ``v``.
"""

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def trajectory_stacked(x0, k):
    xs = []
    x = x0
    for t in range(5):
        x = x * 0.9 + k * np.sin(x)
        xs.append(x)
    return np.sum(np.stack(xs) ** 2)


def comprehension_then_array(x):
    ys = [np.sin(x * i) for i in range(4)]
    return np.sum(np.array(ys) * np.arange(4.0)[:, None])


def comprehension_with_condition_concatenated(x):
    parts = [x[i:] * i for i in range(4) if i % 2 == 1]
    return np.sum(np.concatenate(parts) ** 2)


def literal_then_append(a, b):
    zs = [a, b]
    zs.append(a * b)
    return np.sum(np.stack(zs, axis=1) * np.array([1.0, -2.0, 3.0]))


def index_last_and_first_and_builtin_sum(x):
    hs = []
    h = x
    for t in range(3):
        h = np.tanh(h * 1.5 + 0.1)
        hs.append(h)
    return np.sum(hs[-1] * hs[0]) + np.sum(sum(hs)) + len(hs)


def scalar_list_summed(a):
    vals = []
    for i in range(4):
        vals.append(a * i + a * a)
    return sum(vals)


def appended_inside_branch(x):
    kept = []
    for i in range(x.shape[0]):
        if x[i] > 0:
            kept.append(x[i] * x[i])
        else:
            kept.append(np.sin(x[i]))
    return sum(kept)


def helper_returns_a_list(x):
    def features(v):
        return [v, v * v, np.sin(v)]

    f = features(x)
    return np.sum(np.stack(f) * 2.0)


def tuple_literals_stacked(x, y):
    return np.sum(np.array((x * y, x + y, 1.0)) ** 2)


V = np.array([0.3, -0.4, 0.8, -1.1])
CASES = [
    (trajectory_stacked, (np.array([0.3, -0.4]), 0.7)),
    (comprehension_then_array, (V,)),
    (comprehension_with_condition_concatenated, (V,)),
    (literal_then_append, (V[:2], V[2:])),
    (index_last_and_first_and_builtin_sum, (V,)),
    (scalar_list_summed, (0.7,)),
    (appended_inside_branch, (V,)),
    (helper_returns_a_list, (V,)),
    (tuple_literals_stacked, (0.4, 1.3)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_containers_both_modes_match_finite_differences(fn, args):
    check_grads(fn, *args)
    value, _ = adgen.vjp(fn, *args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)


def test_scalar_list_gradient_exact():
    # sum over i of (a*i + a*a) = 6a + 4a^2 -> 6 + 8a
    assert adgen.grad(scalar_list_summed)(0.7) == pytest.approx(6.0 + 8.0 * 0.7)


def test_append_adjoint_hands_the_last_cotangent_back():
    src = adgen.source(trajectory_stacked)
    assert "rt.split_last(xs_bar)" in src and "xs.pop()" in src
    fsrc = adgen.source(trajectory_stacked, mode="forward")
    assert "xs_dot.append(x_dot)" in fsrc


def test_comprehension_variables_do_not_leak():
    def f(x):
        i = 10.0
        ys = [x * i for i in range(3)]
        return np.sum(np.array(ys)) * i

    # i is still 10.0 after the comprehension, as in Python 3
    assert adgen.grad(f)(np.ones(1))[0] == pytest.approx(3.0 * 10.0)
    check_grads(f, np.ones(2))


def test_appending_to_an_argument_is_refused():
    def f(x, acc):
        acc.append(x)
        return x

    with pytest.raises(adgen.UnsupportedSyntaxError, match="append to `acc`"):
        adgen.grad(f)(1.0, [])
