"""Regressions of silently wrong derivatives (and crashes) in lowering, optimizing and reverse
mode, found by random programs: each test states the exact answer in both modes.

* a loop variable read after ``break`` (the no-op iterations after a ``break`` moved it on);
* a copy made in a nested block of a loop, read after the loop (the optimizer replaced it
  by the name it copied, which later iterations bind again);
* rebinding the name a ``for`` loop iterates, inside the loop (Python iterates the object
  named when the loop started);
* overlapping self-assignment ``b[::-1] = b`` (reverse mode cleared the written slots'
  cotangent before reading the value's share from them);
* a tuple result returned from several branches (forward mode could not make its zero
  tangent, nor give each item a tangent of its own);
* a nested ``if`` with an early return followed by a rebinding (the statements moved into
  both branches shared one binding).
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def both_modes(f, args, value, gradient):
    """``f(*args) == value`` and its gradient w.r.t. every argument is ``gradient`` (a tuple),
    in reverse mode and column by column in forward mode; also the plain call's value."""
    wrt = tuple(range(len(args)))
    np.testing.assert_allclose(f(*args), value, rtol=1e-13)
    got_value, got = adgen.value_and_grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(got_value, value, rtol=1e-13)
    for g, want in zip(got, gradient, strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-13, atol=1e-15)
    for k, a in enumerate(args):
        for j in range(np.size(a)):
            tangents = [np.zeros_like(b) if np.ndim(b) else 0.0 for b in args]
            if np.ndim(a):
                tangents[k] = np.zeros_like(a)
                tangents[k].flat[j] = 1.0
            else:
                tangents[k] = 1.0
            out, tangent = adgen.jvp(f, tuple(args), tuple(tangents))
            np.testing.assert_allclose(out, value, rtol=1e-13)
            np.testing.assert_allclose(tangent, np.ravel(gradient[k])[j], rtol=1e-13, atol=1e-15)


# -- loop variables after break --------------------------------------------------------------


def first_positive(x):
    for i in range(3):
        if x[i] > 0.0:
            break
    return x[i] * 2.0


def test_range_loop_variable_after_break_is_the_one_it_broke_at():
    both_modes(first_positive, (np.array([0.5, -1.0, 3.0]),), 1.0, ([2.0, 0.0, 0.0],))
    both_modes(first_positive, (np.array([-0.5, 1.0, -3.0]),), 2.0, ([0.0, 2.0, 0.0],))
    # no break: the last one
    both_modes(first_positive, (np.array([-0.5, -1.0, -3.0]),), -6.0, ([0.0, 0.0, 2.0],))


def sum_until_large(x):
    tot = 0.0
    for r in x:
        if r > 0.5:
            break
        tot = tot + r
    return tot + r * 3.0


def test_item_loop_variable_after_break():
    both_modes(sum_until_large, (np.array([0.1, 0.2, 0.7, 0.9]),), 2.4, ([1.0, 1.0, 3.0, 0.0],))


def nested_breaks(x):
    for i in range(3):
        for j in range(3):
            if x[j] > 0.0:
                break
        if x[i] < 0.0:
            break
    return x[i] * x[j]


def test_loop_variables_of_nested_loops_with_breaks():
    both_modes(nested_breaks, (np.array([0.5, -1.0, 3.0]),), -0.5, ([-1.0, 0.5, 0.0],))
    both_modes(nested_breaks, (np.array([-0.5, -1.0, 3.0]),), -1.5, ([3.0, 0.0, -0.5],))


def enumerate_break(x):
    for i, r in enumerate(x):
        if r > 0.0:
            break
    return r * i


def test_enumerate_targets_after_break():
    both_modes(enumerate_break, (np.array([-0.5, 1.5, 3.0]),), 1.5, ([0.0, 1.0, 0.0],))


def loop_that_does_not_run(x):
    i = 1
    for i in range(0):
        pass
    return x[i] * 2.0


def test_loop_variable_of_a_loop_that_ran_zero_times_keeps_its_value():
    both_modes(loop_that_does_not_run, (np.array([0.5, -1.0, 3.0]),), -2.0, ([0.0, 2.0, 0.0],))


def while_break(x):
    k = 0
    while k < 3:
        r = x[k]
        k = k + 1
        if r > 0.0:
            break
    return r * k


def test_while_loop_variables_after_break():
    both_modes(while_break, (np.array([-0.5, -1.0, 3.0]),), 9.0, ([0.0, 0.0, 3.0],))


# -- copies in nested blocks of loops ----------------------------------------------------------


def last_positive_double(x):
    for k in range(3):
        t = x[k] * 2.0
        if x[k] > 0.0:
            z = t
    return z


def test_copy_in_a_branch_of_a_loop_is_not_replaced_by_what_later_iterations_bind():
    both_modes(last_positive_double, (np.array([0.5, -1.0, -3.0]),), 1.0, ([2.0, 0.0, 0.0],))


def repeated_expression_in_branch(x):
    for k in range(3):
        a = x[k]
        t = a * 2.0
        if a > 0.0:
            z = a * 2.0
    return z + t


def test_repeat_in_a_branch_of_a_loop_is_not_replaced_by_a_later_iteration():
    both_modes(
        repeated_expression_in_branch, (np.array([0.5, -1.0, -3.0]),), -5.0, ([2.0, 0.0, 2.0],)
    )


# -- rebinding the iterated name -------------------------------------------------------------


def rebinds_iterated(x):
    for r in x:
        x = r * 2.0
    return np.sum(x)


def rebinds_iterated_enumerate(xs):
    tot = 0.0
    for i, r in enumerate(xs):
        xs = r * 2.0
        tot = tot + np.sum(r) * i
    return tot + np.sum(xs)


def rebinds_iterated_zip(xs, ys):
    tot = 0.0
    for a, b in zip(xs, ys):
        ys = a * 2.0
        tot = tot + np.sum(b)
    return tot + np.sum(ys)


def test_rebinding_the_iterated_name_iterates_the_original():
    X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    both_modes(rebinds_iterated, (X,), 30.0, ([[0, 0, 0], [2, 2, 2]],))
    both_modes(rebinds_iterated_enumerate, (X,), 45.0, ([[0, 0, 0], [3, 3, 3]],))
    Y = X - 0.5
    both_modes(rebinds_iterated_zip, (X, Y), 30.0 + 18.0, ([[0, 0, 0], [2, 2, 2]], np.ones((2, 3))))


def closure_late_binding(x):
    a = x * 1.0
    g = lambda t: t * a  # noqa: E731
    a = x * 2.0
    return g(x)


def test_a_closure_reads_the_name_as_bound_when_it_is_called():
    both_modes(closure_late_binding, (1.5,), 4.5, (6.0,))


def test_iterating_a_name_the_body_rebinds_and_writes_into_is_refused_clearly():
    def f(x):
        y = x * 1.0
        for r in y:
            y += 1.0
            y = y * r
        return np.sum(y)

    with pytest.raises(adgen.UnsupportedSyntaxError, match="binds `y` again and writes into it"):
        adgen.grad(f)(np.ones(2))


# -- overlapping self-assignment ---------------------------------------------------------------


def reversed_self_assignment(u):
    b = np.array([u, 0.5])
    b[::-1] = b
    return b[1] * 3.0 + b[0]


def shifted_self_assignment(u):
    b = np.array([u, 0.5, u * u])
    b[1:] = b[:-1]
    return b[1] * 3.0 + b[0] + b[2] * 5.0


def transposed_self_assignment(u):
    b = np.array([[u, 0.5], [u * u, 2.0]])
    b[:] = b.T
    return b[0, 1] * 3.0 + b[1, 0]


def reversed_self_increment(u):
    b = np.array([u, 0.5, u * u])
    b[::-1] += b
    return b[0] * 3.0 + b[1] + b[2] * 2.0


def test_overlapping_self_assignment():
    u = 0.7
    both_modes(reversed_self_assignment, (u,), 3.0 * u + 0.5, (3.0,))
    both_modes(shifted_self_assignment, (u,), 3.0 * u + u + 2.5, (4.0,))
    both_modes(transposed_self_assignment, (u,), 3.0 * u * u + 0.5, (6.0 * u,))
    # b = [u + u*u, 1.0, u*u + u]
    both_modes(reversed_self_increment, (u,), 5.0 * (u + u * u) + 1.0, (5.0 * (1 + 2 * u),))


# -- tuple results from branches -----------------------------------------------------------------


def constant_tuples(x):
    if x[0] > 0:
        return np.ones(2), 1.0
    return np.ones(2), 2.0


def mixed_tuples(x):
    if x[0] > 0:
        return x * 2.0, 1.0
    return np.ones(2), x[1]


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_tuple_results_returned_from_branches(sign):
    x = sign * np.array([1.0, 0.25])
    (v, c), (dv, dc) = adgen.jvp(constant_tuples, (x,), (np.ones(2),))
    np.testing.assert_array_equal(v, np.ones(2))
    assert c == (1.0 if sign > 0 else 2.0)
    np.testing.assert_array_equal(dv, np.zeros(2))
    assert dc == 0.0
    (v, c), (dv, dc) = adgen.jvp(mixed_tuples, (x,), (np.array([1.0, 10.0]),))
    np.testing.assert_array_equal(v, 2.0 * x if sign > 0 else np.ones(2))
    np.testing.assert_array_equal(dv, [2.0, 20.0] if sign > 0 else [0.0, 0.0])
    assert dc == (0.0 if sign > 0 else 10.0)
    (v, c), pullback = adgen.vjp(mixed_tuples, x)
    (g,) = pullback((np.array([1.0, 3.0]), 5.0))
    np.testing.assert_array_equal(g, [2.0, 6.0] if sign > 0 else [0.0, 5.0])
    check_grads(mixed_tuples, x)


# -- early returns in nested ifs, then a rebinding ------------------------------------------------


def nested_early_return(x, y):
    if x < 0.5:
        if y > 0.0:
            return 2.0 * y
    y = y * 3.0
    return y * x


def test_nested_early_return_then_rebinding():
    both_modes(nested_early_return, (0.7, -0.18), 0.7 * -0.54, (-0.54, 2.1))
    both_modes(nested_early_return, (0.3, -0.18), 0.3 * -0.54, (-0.54, 0.9))
    both_modes(nested_early_return, (0.3, 0.18), 0.36, (0.0, 2.0))


# -- a rebound name whose shape changes --------------------------------------------------------


def scalar_after_loop_times_array_before(y):
    v = y * 1.0
    for r in y:
        y = r * 0.5
    return np.sum(y * v)


def test_values_from_a_name_before_and_after_it_changes_shape_are_not_taken_alike():
    # f(y) = y[-1] / 2 * sum(y)
    y = np.array([0.1, 0.2, 0.3, 0.4])
    both_modes(scalar_after_loop_times_array_before, (y,), 0.2, ([0.2, 0.2, 0.2, 0.7],))
    check_grads(scalar_after_loop_times_array_before, y)


# -- names adgen makes up inside an inlined function ----------------------------------------------


def item_loop_in_a_loop(x):
    for _ in range(2):
        xi = x
        for r in xi:
            x = np.tanh(x) + 0.625 * r
    return np.sum(x)


def test_second_order_through_an_item_loop_nested_in_a_loop():
    """Reverse-mode code (the function adgen.grad inlines when it is differentiated again)
    has a variable k_1 of its own; the index adgen made up for a loop over items in it was
    given that name too, and the Hessian came out wrong."""
    x = np.random.default_rng(1).uniform(-1.0, 1.0, (3, 4))
    gradient = adgen.grad(item_loop_in_a_loop)
    check_grads(gradient, x, rtol=1e-5, atol=1e-7)
    hessian = adgen.hessian(item_loop_in_a_loop)(x).reshape(12, 12)
    eps = 1e-6
    for j in (0, 5, 11):
        step = np.zeros(12)
        step[j] = eps
        numeric = (gradient(x + step.reshape(3, 4)) - gradient(x - step.reshape(3, 4))) / (2 * eps)
        np.testing.assert_allclose(hessian[:, j], numeric.ravel(), rtol=1e-5, atol=1e-7)


def _halves(u):
    t = np.tanh(u) * 0.5
    return (t, u - 0.625 * t)


def copy_in_one_branch_write_in_the_other(x, y, s):
    w1 = np.copy(x)
    if s > 0.0:
        v3, v4 = _halves(y)
        w5 = v4.copy()  # noqa: F841  (user code as written)
    else:
        w1[1] = w1[1] * 0.5
    return np.sum(s * y) + np.sum(w1)


def test_an_else_branch_does_not_see_the_names_its_if_branch_bound():
    """Checking that the else branch's write owns its array reads every assignment of the
    function; a name only the if branch binds is not known there (it was an InternalError)."""
    x, y = np.ones((2, 3)), np.full(3, 0.3)
    for s, dx in ((0.3, np.ones((2, 3))), (-0.3, np.array([[1.0] * 3, [0.5] * 3]))):
        gx, gy, gs = adgen.grad(copy_in_one_branch_write_in_the_other, wrt=(0, 1, 2))(x, y, s)
        np.testing.assert_array_equal(gx, dx)
        np.testing.assert_allclose(gy, np.full(3, s), rtol=1e-15)
        np.testing.assert_allclose(gs, 0.9, rtol=1e-15)


def grown_while_iterated(w):
    xs = [w[0]]
    n = 0
    for x in xs:
        n += 1
        if n < 3:
            xs.append(x * w[1])
    return sum(xs)


def popped_while_iterated(w):
    xs = [w[0], w[1], w[0] * w[1]]
    s = 0.0
    for i, x in enumerate(xs):
        s = s + x * i
        xs.pop()
    return s


def grown_over_a_copy(w):
    xs = [w[0]]
    for x in list(xs):
        xs.append(x * w[1])
    return sum(xs)


def test_a_list_changed_while_a_loop_iterates_over_it_is_refused():
    # Python iterates over the items the list gains (or stops early when it loses some);
    # adgen's loop took the length at the start: the value and derivative were silently
    # wrong (0.09 instead of 0.237 for the first)
    w = np.array([0.3, 0.7])
    for f in (grown_while_iterated, popped_while_iterated):
        for run in (lambda: adgen.grad(f)(w), lambda: adgen.jvp(f, (w,), (np.ones(2),))):
            with pytest.raises(adgen.UnsupportedSyntaxError, match="inside a loop over it"):
                run()
    value, g = adgen.value_and_grad(grown_over_a_copy)(w)
    assert value == pytest.approx(grown_over_a_copy(w))
    check_grads(grown_over_a_copy, w)


def extended_while_iterated(w):
    xs = [w[0], w[1]]
    xs.append(w[0] * w[1])
    s = 0.0
    for x in xs:
        s = s + x
        if s < 1.0:
            xs += [x * 0.5]
    return s


def test_a_list_extended_with_plus_equals_while_iterated_is_refused():
    with pytest.raises(adgen.UnsupportedSyntaxError, match="inside a loop over it"):
        adgen.grad(extended_while_iterated)(np.array([0.2, 0.3]))
