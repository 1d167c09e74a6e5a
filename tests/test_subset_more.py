"""More of the supported subset, both modes: arrays made inside the function, loops over lists
and tuples, integer and boolean bookkeeping, builtins, globals, methods, and mixes of them.
"""

import math

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads

OFFSETS = np.array([0.5, -0.25, 1.0, 0.0])
GAIN = 1.5


def ones_written_then_scaled(x):
    y = np.ones(x.shape[0])
    for i in range(0, x.shape[0], 2):
        y[i] = x[i] * 3.0
    return np.sum(y * x)


def empty_filled_completely(x):
    y = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = np.sin(x[i]) + i
    return np.sum(y * y)


def zeros_like_accumulates(x):
    acc = np.zeros_like(x)
    for k in range(3):
        acc[k:] += x[: x.shape[0] - k] * (k + 1.0)
    return np.sum(acc**2)


def array_literal_of_expressions(x, y):
    m = np.array([[x * y, x], [y, x + y]])
    return np.sum(m @ np.array([1.0, 2.0]))


def copy_then_mask_write(x):
    y = x.copy()
    y[y < 0] = 0.0
    return np.sum(y * np.exp(x))


def loop_over_a_list_literal(x):
    s = 0.0
    for scale in [0.5, 1.0, 2.0]:
        s = s + np.sum(np.tanh(x * scale))
    return s


def loop_over_a_tuple_of_arrays(x):
    s = 0.0
    for part in (x, x * x, np.sin(x)):
        s = s + np.sum(part) * 0.5
    return s


def loop_over_a_list_built_with_append(x):
    parts = []
    for k in range(3):
        parts.append(x * (k + 1.0))
    s = 0.0
    for p in parts:
        s = s + np.sum(np.cos(p))
    return s


def integer_bookkeeping_carries_no_derivative(x):
    count = 0
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            count = count + 1
            total = total + x[i]
    return total * count + len(x)


def boolean_flags(x):
    seen_big = False
    s = 0.0
    for i in range(x.shape[0]):
        big = x[i] > 0.5
        if big and not seen_big:
            s = s + x[i] * 10.0
            seen_big = True
        else:
            s = s + x[i]
    return s


def isinstance_and_float_builtins(x, k):
    if isinstance(k, int):
        k = float(k)
    return float(np.sum(x)) * k + max(np.max(x), 0.2) + min(x[0], x[1])


def abs_pow_and_sum_builtins(x):
    return sum(abs(x) ** 1.5) + pow(np.sum(x * x), 0.5)


def module_globals_read_only(x):
    return np.sum((x + OFFSETS) ** 2) * GAIN


def shapes_and_dims_as_integers(X):
    n, m = X.shape
    s = 0.0
    for i in range(n):
        s = s + np.sum(X[i]) * (m - i) / X.ndim + X.size
    return s


def methods_galore(X):
    Y = X.copy().astype(float)
    return (
        Y.T.dot(Y).trace()
        + Y.reshape(-1).mean()
        + Y.ravel().max()
        + Y.flatten().min()
        + Y.squeeze().prod() * 0.1
        + Y.clip(-0.5, 0.5).sum()
        + Y.transpose().sum(axis=0).mean()
    )


def reductions_with_axis_keepdims_in_loop(X):
    s = 0.0
    for k in range(2):
        s = s + np.sum(np.mean(X * (k + 1.0), axis=1, keepdims=True) * X)
    return s


def nested_helpers_with_defaults_and_keywords(x):
    def scale(v, by=2.0):
        return v * by

    def shift(v, amount=0.5, times=1):
        out = v
        for i in range(times):
            out = out + amount
        return out

    return np.sum(scale(shift(x, times=3), by=0.5) ** 2) + np.sum(shift(scale(x)))


def closure_over_an_array(x):
    weights = np.linspace(0.0, 1.0, x.shape[0])

    def weighted(v):
        return v * weights

    return np.sum(weighted(np.sin(x)))


def lambda_in_a_comprehension_target(x):
    square = lambda v: v * v  # noqa: E731
    return np.sum(np.array([square(x[i]) for i in range(x.shape[0])]))


def early_return_from_a_nested_branch(x):
    if x > 0:
        if x > 1:
            return math.log(x)
        return x * x
    return math.exp(x)


def while_loop_with_two_conditions(x):
    y = x
    n = 0
    while n < 10 and y < 5.0:
        y = y * 1.3 + 0.1
        n = n + 1
    return y


def rebinding_many_times(x):
    y = x
    y = y * 2.0
    y = np.sin(y)
    y = y + x
    y = y * y
    return np.sum(y)


def tuple_unpack_from_helper_in_branch(x):
    def stats(v):
        return np.mean(v), np.sqrt(np.mean((v - np.mean(v)) ** 2))

    if np.sum(x) > -100:
        mu, sd = stats(x)
    else:
        mu, sd = 0.0, 1.0
    return mu * sd


def two_dim_write_in_nested_loops(x):
    grid = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            grid[i, j] = x[i] - x[j] if i != j else x[i] * 2.0
    return np.sum(grid * grid)


def slice_write_grows_result(x):
    out = np.zeros(6)
    out[:3] = x[:3] * 2.0
    out[3:] = x[:3] + x[1:4]
    return np.sum(out * np.arange(6.0))


def dict_of_params_with_nested_tuple(p, x):
    w, (b, c) = p["w"], p["bc"]
    return np.sum(np.tanh(x * w + b) * c)


V = np.array([0.3, -0.4, 0.8, 0.6])
CASES = [
    (ones_written_then_scaled, (V,)),
    (empty_filled_completely, (V,)),
    (zeros_like_accumulates, (V,)),
    (array_literal_of_expressions, (0.4, 0.9)),
    (copy_then_mask_write, (V,)),
    (loop_over_a_list_literal, (V,)),
    (loop_over_a_tuple_of_arrays, (V,)),
    (loop_over_a_list_built_with_append, (V,)),
    (integer_bookkeeping_carries_no_derivative, (V,)),
    (boolean_flags, (V,)),
    (isinstance_and_float_builtins, (V, 3)),
    (abs_pow_and_sum_builtins, (V,)),
    (module_globals_read_only, (V,)),
    (shapes_and_dims_as_integers, (np.arange(6.0).reshape(2, 3) * 0.1,)),
    (methods_galore, (np.array([[0.3, -0.2], [0.7, 0.1]]),)),
    (reductions_with_axis_keepdims_in_loop, (np.array([[0.3, -0.2, 0.5], [0.7, 0.1, -0.6]]),)),
    (nested_helpers_with_defaults_and_keywords, (V,)),
    (closure_over_an_array, (V,)),
    (lambda_in_a_comprehension_target, (V,)),
    (early_return_from_a_nested_branch, (2.5,)),
    (early_return_from_a_nested_branch, (0.5,)),
    (early_return_from_a_nested_branch, (-0.5,)),
    (while_loop_with_two_conditions, (0.7,)),
    (rebinding_many_times, (V,)),
    (tuple_unpack_from_helper_in_branch, (V,)),
    (two_dim_write_in_nested_loops, (V[:3],)),
    (slice_write_grows_result, (V,)),
    (dict_of_params_with_nested_tuple, ({"w": 0.7, "bc": (V * 0.1, V)}, V)),
]


@pytest.mark.parametrize(
    "fn, args", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)]
)
def test_subset_both_modes_match_finite_differences(fn, args):
    check_grads(fn, *args)
    value, _ = adgen.vjp(fn, *args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)


def test_integer_and_boolean_values_get_no_derivative_code():
    src = adgen.source(integer_bookkeeping_carries_no_derivative)
    assert "count_bar" not in src and "count_dot" not in src
    fsrc = adgen.source(boolean_flags, mode="forward")
    assert "seen_big_dot" not in fsrc and "big_dot" not in fsrc
