"""Control flow in both modes: if/elif/else, early returns, for over ranges, arrays, enumerate
and zip, while loops, nested loops, loop-carried state, augmented assignment in loops.

Every function is checked with ``check_grads``: forward mode against central differences and
reverse mode against forward mode. The cases are named for what they cover.
"""

import math

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads

# -- branches ------------------------------------------------------------------------------------


def branch_if_else(x):
    if x > 0:
        y = x * x
    else:
        y = -3.0 * x
    return y


def branch_if_without_else(x):
    y = 2.0 * x
    if x > 1.0:
        y = y * x
    return y


def branch_elif_chain(x):
    if x < -1.0:
        y = x * x
    elif x < 0.5:
        y = np.sin(x)
    elif x < 2.0:
        y = np.exp(x)
    else:
        y = x**3
    return y


def branch_on_array_reduction(x):
    if np.sum(x) > 0:
        z = np.tanh(x) * 2.0
    else:
        z = x * x
    return np.sum(z)


def branch_early_return(x):
    if x > 0:
        return x * x
    return -x


def branch_nested_early_returns(x, y):
    if x > 0:
        if y > 0:
            return x * y
        return x - y
    elif y > 0:
        return np.sin(x) * y
    return x + y * y


def branch_conditional_expression(x):
    y = x * 2.0 if x > 0 else x * x
    return y * x


def branch_boolean_and_condition(x, y):
    if x > 0 and y > 0:
        return x * y
    return x + y


def branch_variable_defined_in_one_branch_only(x):
    y = x
    if x > 0.5:
        y = np.exp(x)
        z = y * 3.0
        y = y + z
    return y * x


def branch_on_parameter_flag(x, flag):
    if flag:
        return np.sum(x * x)
    return np.sum(np.sin(x))


# -- for loops -----------------------------------------------------------------------------------


def loop_sum_range(x, n):
    total = 0.0
    for i in range(n):
        total += x * i
    return total


def loop_range_from_shape(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i] * (i + 1)
    return s


def loop_range_with_start_stop_step(x):
    s = x * 0.0
    for i in range(1, 7, 2):
        s = s + np.sin(x * i)
    return np.sum(s)


def loop_carried_product(x):
    p = 1.0
    for i in range(4):
        p = p * (x + i)
    return p


def loop_recurrence_tanh(h, W, steps):
    for t in range(steps):
        h = np.tanh(W @ h)
    return np.sum(h * h)


def loop_over_array_rows(X, w):
    s = 0.0
    for row in X:
        s = s + np.tanh(np.dot(row, w))
    return s


def loop_enumerate_rows(X):
    s = 0.0
    for i, row in enumerate(X):
        s = s + np.sum(row * row) * (i + 1.0)
    return s


def loop_zip_two_arrays(A, B):
    s = 0.0
    for a, b in zip(A, B):
        s = s + np.sum(a * b)
    return s


def loop_nested(X):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            s = s + X[i, j] * X[i, j] * (i - j)
    return s


def loop_nested_triangular(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            s = s + x[i] * x[j]
    return s


def loop_temporaries_each_iteration(x):
    acc = x * 0.0
    for k in range(3):
        a = np.sin(acc + x)
        b = a * a
        acc = acc + b
    return np.sum(acc)


def loop_with_branch_inside(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s = s + x[i] * x[i]
        else:
            s = s - np.sin(x[i])
    return s


def loop_swap_variables(a, b):
    for i in range(3):
        a, b = b, a * b
    return a + b


def loop_shape_changing_state(x):
    y = x
    for i in range(2):
        y = y[1:] * y[:-1]
    return np.sum(y)


def loop_euler_integration(x0, v0, k):
    x, v = x0, v0
    dt = 0.05
    for step in range(20):
        a = -k * x - 0.1 * v
        v = v + dt * a
        x = x + dt * v
    return x * x + v


def loop_math_module_scalars(x, y):
    s = 0.0
    for i in range(5):
        s = s + math.sin(x * i) * math.exp(-y * i)
    return s


def loop_index_read_after_loop(x):
    for i in range(3):
        x = x * 1.5
    return x * i


# -- while loops ---------------------------------------------------------------------------------


def while_halving(x):
    y = x
    while y > 1.0:
        y = y / 2.0
    return y * y


def while_counter(x, n):
    i = 0
    s = 0.0
    while i < n:
        s = s + x**i
        i = i + 1
    return s


def while_array_condition(x):
    y = x
    while np.sum(y * y) > 0.5:
        y = y * 0.5
    return np.sum(np.sin(y))


def while_inside_for(x):
    s = 0.0
    for i in range(3):
        y = x + i
        while y > 1.0:
            y = y * 0.5
        s = s + y * y
    return s


def for_inside_while(x):
    y = x
    n = 0
    while n < 2:
        for i in range(3):
            y = y * 0.9 + np.sin(y)
        n = n + 1
    return np.sum(y)


# -- break and continue ----------------------------------------------------------------------


def break_newton_sqrt(a):
    x = a
    for i in range(50):
        x_new = 0.5 * (x + a / x)
        if abs(x_new - x) < 1e-12:
            break
        x = x_new
    return x


def continue_skips_negative_entries(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            continue
        s = s + x[i] * x[i]
    return s


def while_true_with_break(x):
    y = x
    n = 0
    while True:
        y = y * 0.5 + np.sin(y)
        n = n + 1
        if n >= 3:
            break
    return y


def break_and_continue_in_nested_loops(x):
    s = 0.0
    for i in range(4):
        for j in range(4):
            if j > i:
                break
            if (i + j) % 2 == 1:
                continue
            s = s + np.sin(x * (i + 1)) * (j + 1)
        if s > 10.0:
            break
    return s


def while_with_break_on_data(x):
    y = x
    while y < 100.0:
        y = y * 1.7 + 0.3
        if y * y > 50.0:
            break
    return y


rng = np.random.default_rng(7)
V = rng.uniform(-1, 1, 4)
M = rng.uniform(-1, 1, (3, 4))
SQ = rng.uniform(-1, 1, (3, 3)) * 0.6

CASES = [
    (branch_if_else, (0.7,)),
    (branch_if_else, (-0.7,)),
    (branch_if_without_else, (1.4,)),
    (branch_if_without_else, (0.4,)),
    (branch_elif_chain, (-1.5,)),
    (branch_elif_chain, (0.2,)),
    (branch_elif_chain, (1.2,)),
    (branch_elif_chain, (2.5,)),
    (branch_on_array_reduction, (V,)),
    (branch_on_array_reduction, (-np.abs(V),)),
    (branch_early_return, (0.8,)),
    (branch_early_return, (-0.8,)),
    (branch_nested_early_returns, (0.5, 0.6)),
    (branch_nested_early_returns, (0.5, -0.6)),
    (branch_nested_early_returns, (-0.5, 0.6)),
    (branch_nested_early_returns, (-0.5, -0.6)),
    (branch_conditional_expression, (0.9,)),
    (branch_conditional_expression, (-0.9,)),
    (branch_boolean_and_condition, (0.3, 0.4)),
    (branch_boolean_and_condition, (0.3, -0.4)),
    (branch_variable_defined_in_one_branch_only, (0.9,)),
    (branch_variable_defined_in_one_branch_only, (0.1,)),
    (branch_on_parameter_flag, (V, True)),
    (branch_on_parameter_flag, (V, False)),
    (loop_sum_range, (V, 5)),
    (loop_sum_range, (V, 0)),
    (loop_range_from_shape, (V,)),
    (loop_range_with_start_stop_step, (V,)),
    (loop_carried_product, (0.3,)),
    (loop_recurrence_tanh, (V[:3], SQ, 4)),
    (loop_over_array_rows, (M, V)),
    (loop_enumerate_rows, (M,)),
    (loop_zip_two_arrays, (M, M[::-1])),
    (loop_nested, (M,)),
    (loop_nested_triangular, (V,)),
    (loop_temporaries_each_iteration, (V,)),
    (loop_with_branch_inside, (V,)),
    (loop_swap_variables, (0.9, 1.1)),
    (loop_shape_changing_state, (V,)),
    (loop_euler_integration, (1.0, 0.0, 2.0)),
    (loop_math_module_scalars, (0.4, 0.3)),
    (loop_index_read_after_loop, (0.7,)),
    (while_halving, (5.0,)),
    (while_halving, (0.5,)),
    (while_counter, (0.7, 4)),
    (while_array_condition, (V,)),
    (while_inside_for, (2.3,)),
    (for_inside_while, (V,)),
    (break_newton_sqrt, (2.0,)),
    (continue_skips_negative_entries, (V,)),
    (while_true_with_break, (0.7,)),
    (break_and_continue_in_nested_loops, (0.3,)),
    (while_with_break_on_data, (0.9,)),
]


def _id(case):
    fn, args = case
    kinds = "-".join("neg" if isinstance(a, float) and a < 0 else type(a).__name__ for a in args)
    return f"{fn.__name__}[{kinds}]"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_control_flow_both_modes_match_finite_differences(case):
    fn, args = case
    check_grads(fn, *args, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_control_flow_value_matches_the_function(case):
    fn, args = case
    value, _ = adgen.vjp(fn, *args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    value, _ = adgen.jvp(fn, args, [None] * len(args))
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)


def test_loop_recurrence_gradient_matches_hand_written(rng):
    h0 = rng.standard_normal(3)
    W = rng.standard_normal((3, 3)) * 0.5
    hs = [h0]
    for _ in range(4):
        hs.append(np.tanh(W @ hs[-1]))
    g = 2 * hs[-1]
    gW = np.zeros_like(W)
    for t in range(4, 0, -1):
        a = g * (1 - hs[t] ** 2)
        gW += np.outer(a, hs[t - 1])
        g = W.T @ a
    dh, dW = adgen.grad(loop_recurrence_tanh, wrt=(0, 1))(h0, W, 4)
    np.testing.assert_allclose(dW, gW, rtol=1e-12)
    np.testing.assert_allclose(dh, g, rtol=1e-12)


def test_reverse_replays_branches_without_recomputing_conditions():
    src = adgen.source(loop_with_branch_inside)
    assert "for i in reversed(" in src
    assert src.count("stack.pop()") >= 1


def test_loop_invariant_values_are_not_saved():
    src = adgen.source(loop_recurrence_tanh, wrt=1)
    # W never changes: it is read directly, never pushed
    assert "stack.append(W)" not in src


def test_values_no_adjoint_reads_are_not_saved():
    def scale(x, n):
        s = x
        for i in range(n):
            s = s * 2.0
        return s

    src = adgen.source(scale)
    assert "stack.append(s)" not in src  # the adjoint of s * 2.0 does not read s
    assert adgen.grad(scale)(3.0, 5) == 32.0


def test_forward_mode_keeps_the_control_structure():
    src = adgen.source(loop_with_branch_inside, mode="forward")
    assert "for i in loop_3:" in src and "if cond_2:" in src and "s_dot" in src
    assert "cond_2_dot" not in src  # the condition gets no tangent
    # (x[i] is read again by the branch: the optimizer reuses it, tangent and all)
    assert "cond_1_dot" not in adgen.source(loop_with_branch_inside, "forward", optimize=False)


def test_caller_arrays_are_not_modified_by_loops(rng):
    x = rng.standard_normal(4)
    before = x.copy()
    adgen.grad(loop_temporaries_each_iteration)(x)
    adgen.jvp(loop_temporaries_each_iteration, (x,), (np.ones(4),))
    np.testing.assert_array_equal(x, before)


def test_for_loop_with_break_gives_newton_iteration_derivative():
    # d/da sqrt(a) = 1 / (2 sqrt(a)): the converged iteration's derivative
    assert adgen.grad(break_newton_sqrt)(2.0) == pytest.approx(0.5 / np.sqrt(2.0), rel=1e-10)


def test_loop_else_clause_is_refused_with_location():
    def f(x):
        for i in range(3):
            x = x * 2.0
        else:
            x = x + 1.0
        return x

    with pytest.raises(adgen.UnsupportedSyntaxError, match="`else` clauses on loops") as info:
        adgen.grad(f)(1.0)
    assert info.value.loc.lineno == f.__code__.co_firstlineno + 1


def test_return_inside_a_try_inside_a_loop_is_refused():
    def f(x):
        for i in range(3):
            try:
                return x * i
            finally:
                x = x + 1.0
        return x

    with pytest.raises(adgen.UnsupportedSyntaxError, match="`return` inside a loop"):
        adgen.grad(f)(1.0)


def test_return_inside_loop_returns_after_it():
    def f(x):
        for i in range(3):
            return x * x
        return x

    assert adgen.grad(f)(3.0) == 6.0


def test_path_without_return_is_refused():
    def f(x):
        if x > 0:
            return x

    with pytest.raises(adgen.UnsupportedSyntaxError, match="without a `return`"):
        adgen.grad(f)(1.0)


def scalar_becomes_array_in_loop(a, v):
    y = a
    for i in range(3):
        y = y * v + a
    return np.sum(y)


def test_scalar_argument_rebound_to_an_array_keeps_shapes_right():
    # a is a Python float (the code is specialised for a scalar a); y starts as that scalar
    # and becomes an array: its adjoint must be reduced back to a scalar for a
    v = np.array([0.5, -1.0, 2.0])
    check_grads(scalar_becomes_array_in_loop, 0.7, v)
    g = adgen.grad(scalar_becomes_array_in_loop)(0.7, v)
    assert type(g) is float
    assert g == pytest.approx(np.sum(v**3 + v**2 + v + 1.0))


def test_scalar_loop_code_uses_no_array_helpers():
    src = adgen.pipeline.derivative(
        adgen.frontend.parse.unwrap(loop_euler_integration),
        "reverse",
        ("x0", "v0", "k"),
        frozenset({"x0", "v0", "k"}),
    ).generated.source
    assert "rt." not in src and "np." not in src  # plain float arithmetic only


def stack_rebinds_its_element(b):
    s = b
    for _ in range(2):
        s = np.stack((s, 3.0 * s))
    return np.sum(s)


def concatenate_rebinds_its_element_with_a_branch(b, c):
    s = b
    for i in range(3):
        if i % 2 == 0:
            s = np.concatenate((s * c, np.sin(s)))
        else:
            s = s * 2.0
    return np.sum(s * s)


def test_sequence_call_that_rebinds_its_own_element_in_a_loop():
    # regression: the adjoint of `s = np.stack((s, 3 * s))` went to the new s, not the old one
    b = np.array([1.0, 2.0])
    assert np.allclose(adgen.grad(stack_rebinds_its_element)(b), [16.0, 16.0])
    assert adgen.jvp(stack_rebinds_its_element, (b,), (np.ones(2),))[1] == pytest.approx(32.0)
    check_grads(concatenate_rebinds_its_element_with_a_branch, np.array([0.3, -0.4]), 0.8)
