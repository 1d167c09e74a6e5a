"""Constructs in combination, both modes: a mutation inside a loop inside a branch inside a
helper called from a loop, and many smaller mixes. Each function is named for what it mixes;
each is checked with ``check_grads`` (forward against central differences, reverse against
forward) and its value against the function itself.
"""

import math

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads

# -- helpers used below ---------------------------------------------------------------------------


def fill_cumulative(v):
    out = np.zeros(v.shape[0])
    acc = 0.0
    for i in range(v.shape[0]):
        if v[i] > -10.0:
            acc = acc + v[i] * v[i]
        out[i] = acc
    return out


def damp(x, rate=0.5):
    while np.max(np.abs(x)) > 1.0:
        x = x * rate
    return x


def softclip(z, lo=-1.0, hi=1.0):
    return lo + (hi - lo) / (1.0 + np.exp(-z))


def pairwise(a, b):
    return a * b, a + b


# -- the headline combination --------------------------------------------------------------


def mutation_in_loop_in_branch_in_helper(v, flag):
    if flag > 0:
        buf = np.zeros(v.shape[0])
        for i in range(v.shape[0]):
            buf[i] = v[i] * (i + 1.0)
        return buf
    return v * 2.0


def helper_called_from_a_loop_with_mutation_inside(x):
    total = 0.0
    for k in range(3):
        piece = mutation_in_loop_in_branch_in_helper(x * (k + 1.0), 1.0 - k)
        total = total + np.sum(np.sin(piece))
    return total


# -- smaller mixes ---------------------------------------------------------------------------------


def helper_with_loop_and_branch_from_loop(x):
    s = 0.0
    for k in range(3):
        s = s + np.sum(fill_cumulative(x + k))
    return s


def while_in_helper_with_default(x):
    return np.sum(damp(x * 3.0)) + np.sum(damp(x, rate=0.25))


def tuple_result_in_loop(a, b):
    s = 0.0
    for i in range(3):
        p, q = pairwise(a + i, b)
        s = s + p * q
    return s


def list_of_helper_results_stacked(x):
    parts = [softclip(x * k) for k in range(1, 4)]
    return np.sum(np.stack(parts, axis=0) ** 2)


def conditional_expression_in_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + (x[i] * x[i] if x[i] > 0 else np.exp(x[i]))
    return s


def break_on_convergence_with_mutation(x):
    hist = np.zeros(20)
    y = x
    for i in range(20):
        y = 0.5 * (y + 2.0 / y)
        hist[i] = y
        if abs(y * y - 2.0) < 1e-10:
            break
    return np.sum(hist) * x


def continue_with_inplace_accumulate(v):
    out = np.zeros(2)
    for i in range(v.shape[0]):
        if v[i] < 0:
            continue
        out[i % 2] += v[i] ** 2
    return np.sum(out * np.array([1.0, 3.0]))


def closure_in_loop_reads_loop_variable(x):
    s = 0.0
    for i in range(3):

        def term(z):
            return z * (i + 1.0)

        s = s + np.sum(term(x) ** 2)
    return s


def lambda_applied_in_branch(x):
    f = lambda z: np.tanh(z) * 2.0  # noqa: E731
    if np.sum(x) > 0:
        return np.sum(f(x))
    return np.sum(f(-x))


def nested_loops_with_inplace_matrix(x):
    m = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            m[i, j] = x[i] * x[j] if i <= j else 0.5 * x[i]
    return np.sum(m @ x)


def early_return_inside_helper_inside_loop(x):
    def clamp(v):
        if v > 0.5:
            return 0.5 + 0.1 * v
        return v

    s = 0.0
    for i in range(x.shape[0]):
        s = s + clamp(x[i]) ** 2
    return s


def enumerate_zip_and_math(xs, ys):
    s = 0.0
    for i, a in enumerate(xs):
        s = s + math.sin(a) * ys[i]
    for a, b in zip(xs, ys):
        s = s + math.cos(a * b)
    return s


def dict_params_in_loop(params, x):
    h = x
    for i in range(2):
        h = np.tanh(h @ params["W"] + params["b"])
    return np.sum(h)


def list_params_zip(ws, bs, x):
    for w, b in zip(ws, bs):
        x = np.tanh(x @ w + b)
    return np.sum(x * x)


def while_counting_with_list(x):
    vals = []
    n = 0
    y = x
    while n < 4:
        y = y * 0.8 + 0.1
        vals.append(y * y)
        n = n + 1
    return np.sum(np.array(vals))


def boolean_ops_guarding_division(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0 and y[i] != 0:
            s = s + x[i] / y[i]
        elif x[i] <= 0 or y[i] > 1.0:
            s = s - x[i] * y[i]
    return s


def augmented_assignments_all_operators(x):
    y = x * 1.0
    y += 1.0
    y -= 0.5 * x
    y *= x
    y /= 1.0 + x * x
    y **= 2
    return np.sum(y)


def swap_and_rotate_in_loop(a, b, c):
    for i in range(4):
        a, b, c = b, c, a * 0.5 + c
    return a * b + c


def reassigned_parameter_in_branches(x, w):
    if np.sum(w) > 0:
        w = w * 2.0
    else:
        w = -w
    for i in range(2):
        w = w + x
    return np.sum(w * x)


def methods_in_loop(X):
    s = 0.0
    for i in range(2):
        s = s + X.T.dot(X).trace() + X.sum(axis=0).max() + X.reshape(-1).mean()
        X = X * 0.9
    return s


def trajectory_list_and_final_state(x0, k):
    states = [x0]
    x = x0
    for t in range(4):
        x = x + 0.1 * np.array([x[1], -k * x[0]])
        states.append(x)
    return np.sum(np.stack(states)[:, 0] ** 2) + np.sum(x)


V = np.array([0.3, -0.4, 0.8, 0.6])
RNG = np.random.default_rng(3)
CASES = [
    (helper_called_from_a_loop_with_mutation_inside, (V,)),
    (helper_with_loop_and_branch_from_loop, (V,)),
    (while_in_helper_with_default, (V,)),
    (tuple_result_in_loop, (0.4, 0.9)),
    (list_of_helper_results_stacked, (V,)),
    (conditional_expression_in_loop, (V,)),
    (break_on_convergence_with_mutation, (1.3,)),
    (continue_with_inplace_accumulate, (V,)),
    (closure_in_loop_reads_loop_variable, (V,)),
    (lambda_applied_in_branch, (V,)),
    (lambda_applied_in_branch, (-V,)),
    (nested_loops_with_inplace_matrix, (V[:3],)),
    (early_return_inside_helper_inside_loop, (V,)),
    (enumerate_zip_and_math, (V, V[::-1])),
    (dict_params_in_loop, ({"W": RNG.standard_normal((4, 4)) * 0.5, "b": V}, V)),
    (
        list_params_zip,
        (
            [RNG.standard_normal((4, 4)) * 0.5 for _ in range(2)],
            [V, V * 0.5],
            V,
        ),
    ),
    (while_counting_with_list, (V,)),
    (boolean_ops_guarding_division, (V, V[::-1] + 0.05)),
    (augmented_assignments_all_operators, (V,)),
    (swap_and_rotate_in_loop, (0.3, 0.6, 0.9)),
    (reassigned_parameter_in_branches, (V, V)),
    (reassigned_parameter_in_branches, (V, -V)),
    (methods_in_loop, (RNG.standard_normal((3, 2)),)),
    (trajectory_list_and_final_state, (np.array([1.0, 0.0]), 2.0)),
]


@pytest.mark.parametrize(
    "fn, args", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)]
)
def test_combinations_both_modes_match_finite_differences(fn, args):
    check_grads(fn, *args)
    value, _ = adgen.vjp(fn, *args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
