"""Bugs the random-program fuzzer (tests/test_fuzz.py) found, one test each.

Each test is the minimized program that exposed the bug, checked the way the fuzzer
checks it (forward mode against finite differences, reverse against forward, second
order through the generated code) or, where adgen now refuses, that it refuses clearly.
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def float_of_sum_squared(x):
    t = float(np.sum(x))
    return t * t


def test_second_order_through_float() -> None:
    # float(x)'s cotangent is np.full_like(x, g), which adgen treated as a constant in g:
    # every Hessian through float(...) was silently zero
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(adgen.hessian(float_of_sum_squared)(x), np.full((3, 3), 2.0))
    check_grads(adgen.grad(float_of_sum_squared), x)


def fill(x, s):
    return np.sum(np.full_like(x, s) * x) + np.sum(np.full((2, 3), s) ** 2)


def fill_rows(x, v):
    return np.sum(np.full((2, 3), v) * x)


def test_fill_value_is_differentiated() -> None:
    # np.full(shape, s) / np.full_like(x, s) gave a zero derivative w.r.t. s
    x = np.array([1.0, 2.0, 3.0])
    assert adgen.grad(fill, wrt=1)(x, 2.0) == pytest.approx(6.0 + 24.0)
    check_grads(fill, x, 2.0)
    check_grads(adgen.grad(fill, wrt=(0, 1)), x, 2.0)
    check_grads(fill_rows, np.ones((2, 3)), np.array([0.5, -1.0, 2.0]))


def ramp(x, s):
    return np.sum(np.linspace(0.0, s, 3) * x)


def steps(x, s):
    return np.sum(np.arange(0.0, 3.0, s) * x)


def geometric(x, s):
    return np.sum(np.geomspace(1.0, s, 3) * x) + np.sum(np.logspace(0.0, s, 3) * x)


@pytest.mark.parametrize("fn", [steps, geometric])
def test_ranges_of_differentiated_values_are_refused(fn) -> None:
    # np.arange/np.geomspace/np.logspace were "constructors" with a zero derivative, also
    # w.r.t. a differentiated start/stop/step: now refused
    with pytest.raises(adgen.NonDifferentiableError, match=r"test_fuzz_regressions.py:\d+"):
        adgen.grad(fn, wrt=1)(np.ones(3), 1.5)


def test_a_ramp_of_a_differentiated_stop_has_its_derivative() -> None:
    # np.linspace was among them; it is linear in start and stop, and now differentiated:
    # d/ds sum(linspace(0, s, 3) * x) = sum(x * [0, 1/2, 1])
    assert adgen.grad(ramp, wrt=1)(np.ones(3), 1.5) == pytest.approx(1.5)
    check_grads(ramp, np.array([1.0, -2.0, 0.5]), 1.5)


def ranges_of_constants(x):
    n = x.shape[0]
    return np.sum(np.linspace(0.0, 1.0, n) * x + np.arange(n) * x + np.full(n, 2.0) * x)


def test_ranges_of_constants_still_work() -> None:
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(
        adgen.grad(ranges_of_constants)(x), np.linspace(0.0, 1.0, 3) + np.arange(3) + 2.0
    )


def tanh_helper(u):
    return np.tanh(u)


def write_then_method(x, s):
    w = np.copy(x)
    w[:, 0] = s
    v = tanh_helper(x)
    m = v.mean()
    return m + np.sum(w)


def test_method_call_after_an_in_place_write() -> None:
    # the check that an array written in place has no other name read every statement of
    # the function, and `v.mean()` of a local bound *after* the write raised "`v` is used
    # before it is assigned"
    x = np.array([[0.5, -1.0], [2.0, 0.25]])
    check_grads(write_then_method, x, 0.5)


def rank_one_svd(v):
    a = np.tanh(np.resize(v, (4, 3)))  # four equal rows: two zero singular values
    return np.sum(np.linalg.svd(a, full_matrices=False)[0] ** 2 * np.arange(3.0))


def repeated_eigenvalues(s):
    a = np.eye(3) * s
    return np.sum(np.linalg.eigh(a)[1] ** 4)


@pytest.mark.parametrize(
    ("fn", "arg"), [(rank_one_svd, np.array([0.3, -0.7, 0.9])), (repeated_eigenvalues, 2.0)]
)
def test_vectors_at_repeated_values_are_refused(fn, arg) -> None:
    # the singular/eigenvectors are not unique at repeated (or, for svd, zero) values; the
    # formulas divide by the gaps and returned numbers of size 1e15 without a word
    with pytest.raises(adgen.DerivativeError, match="needs distinct"):
        adgen.grad(fn)(arg)
    with pytest.raises(adgen.DerivativeError, match="needs distinct"):
        adgen.jvp(fn, (arg,), (np.ones_like(arg),))


def tuple_in_branch(x, s):
    if s > 0.0:
        pair = (s, np.cos(s))
        x = x + (pair[1] - pair[0])
    return np.sum(x)


def test_tuple_bound_inside_a_block_is_one_name_an_item() -> None:
    # was refused ("a tuple of differentiated values bound to a name that an if/for/while
    # block (re)assigns"): every binding of `pair` is a pair, so each item has a name
    x, s = np.ones(2), 0.5
    assert adgen.grad(tuple_in_branch, wrt=1)(x, s) == pytest.approx(2 * (-np.sin(s) - 1.0))
    _, dot = adgen.jvp(tuple_in_branch, (x, s), (np.zeros(2), 1.0))
    assert dot == pytest.approx(2 * (-np.sin(s) - 1.0))


def tuple_after_none(x, s):
    pair = None
    if s > 0.0:
        pair = (s, np.cos(s))
        x = x + (pair[1] - pair[0])
    return np.sum(x)


def test_tuple_bound_inside_a_block_is_refused_clearly() -> None:
    # was: "adgen has no derivative of assign with respect to its argument `x`" (the name
    # of a parameter of adgen's internal copy rule, not of the user's function); `pair` is
    # bound to None too, so it is one name holding a tuple
    with pytest.raises(adgen.NonDifferentiableError, match="tuple of differentiated") as info:
        adgen.grad(tuple_after_none, wrt=1)(np.ones(2), 0.5)
    assert info.value.loc is not None and "pair = (s, np.cos(s))" in info.value.loc.text


# seed 20261153, program 1119 (issue 34's stop): a `try` whose `except` goes on reads a tuple
# argument; at second order adgen gave its probe that tuple and refused it as "a list or a
# tuple" -- the probe reads either alike
TRY_READING_A_TUPLE_ARGUMENT = """\
import numpy as np
import scipy.signal


def program(x, y, s, p):
    p1, p2 = p
    k0 = 0
    while k0 < 2 and (np.sum(p[1]) > np.sum(p[1]) + 0.44833 or np.mean(p[1]) < 0.3125):
        k0 = k0 + 1
        if s > 0.28003 - 0.25:
            break
        k1 = 0
        while k1 < 3 and np.mean(p1) < 0.625:
            k1 = k1 + 1
            a7 = 1.35 * np.tanh(p1)
            p1 = p1 - 0.125 * np.tanh(p[0]) + 0.0 * np.sum(a7)
            p1 = np.tanh(p1) + 1.25 * s
        y = y - 0.125 * np.tanh(s)
    try:
        v9 = np.tanh(p[1]) * 0.25
        if np.sum(p[1]) > 0.22903:
            raise ValueError("too large")
    except ValueError:
        v9 = np.sin(p[1]) * 0.3125
    t12 = 0.0
    for part13 in (p[1][:1], p[1][1:]):
        t12 = t12 + np.sum(np.sin(part13))
    return np.sum(p[0]) + np.sum(t12 * t12) + np.sum(v9 * v9) + np.sum(s * y)
"""


def test_a_recovering_try_reading_a_tuple_argument_at_second_order(tmp_path) -> None:
    from fuzz_check import classify
    from fuzz_programs import Program

    program = Program(TRY_READING_A_TUPLE_ARGUMENT, True, True, frozenset(), "tuple")
    outcome = classify(program, tmp_path, 16067)
    assert outcome.kind == "ok", (outcome.category, outcome.message)


def after_an_early_return(y, s):
    if np.mean(y) < -5.0:
        return np.sum(s * s)

    def scale_ends(u, w):
        u[0] = u[0] * w
        u[-1] = u[-1] * w

    buf = np.tanh(y) * 1.25
    scale_ends(buf, 0.3125)
    return np.sum(np.sin(buf)) + np.sum(s * y)


def test_a_helper_writes_into_a_buffer_bound_after_an_early_return() -> None:
    # seed 20261190, program 231 (and one of seed 20261174): the statements after an early
    # return move into a branch; a helper's write into a buffer bound there was refused as
    # "an argument passed by the caller" -- the buffer is the caller's own, bound in the
    # block being lowered
    y, s = np.array([0.3, -0.2, 0.8]), 0.7
    check_grads(after_an_early_return, y, s)
    buf = np.tanh(y) * 1.25
    scale = np.array([0.3125, 1.0, 0.3125])
    expected = np.cos(buf * scale) * scale * 1.25 * (1 - np.tanh(y) ** 2) + s
    np.testing.assert_allclose(adgen.grad(after_an_early_return)(y, s), expected, rtol=1e-13)


def _squares_and_local_w_1(v):
    w_1 = v * 2.0  # the name adgen's namer gave the comprehension's `w` in an inlined helper
    s = np.sum(np.stack([w * w for w in (v, v * 3.0)]), axis=0)
    return s + w_1 * w_1


def _squares_and_local_items_1(v):
    items_1 = v * 2.0  # the name of the list the comprehension builds, likewise
    s = np.sum(np.stack([w * w for w in (v, v * 3.0)]), axis=0)
    return s + items_1 * items_1


def helper_locals_named_like_a_comprehension(x):
    return np.sum(_squares_and_local_w_1(x) * x) + np.sum(_squares_and_local_items_1(x) * x)


def test_a_comprehension_in_a_helper_keeps_the_helpers_own_names() -> None:
    # seed 20261210, program 186 (second order through reverse-mode code, whose `items_1`
    # met a comprehension's list): a comprehension's variables and list got the IR namer's
    # next names, which in an inlined function may be its own locals' -- `w_1` then held
    # the comprehension's item: a wrong gradient in both modes (and a crash for `items_1`)
    x = np.array([0.3, -0.4])
    # each helper returns v**2 + 9 v**2 + 4 v**2 = 14 v**2; the sum is 2 * sum(14 x**3)
    np.testing.assert_allclose(
        adgen.grad(helper_locals_named_like_a_comprehension)(x), 84.0 * x**2, rtol=1e-13
    )
    check_grads(helper_locals_named_like_a_comprehension, x)
    np.testing.assert_allclose(
        adgen.hessian(helper_locals_named_like_a_comprehension)(x), np.diag(168.0 * x), rtol=1e-12
    )


TABLE = {2: 0.5, 0: 1.5, 1: -0.25}


def while_after_a_list_loop(x, y, s, p):
    p1 = p["b"]
    z4 = p["b"] * 0.3125
    xs9 = [s, z4 * 0.75, p1]
    xs9[1] = xs9[1] * xs9[2]
    v10 = s * 0.0
    for k11 in range(len(xs9)):
        v10 = v10 + xs9[k11] * k11
    k0 = 0
    while k0 < 0 and (np.sum(p1) > np.sum(p["a"]) + 0.10793 or np.max(p1) > 0.06333):
        if p["b"] > 0.15573 - 0.25:
            continue
        v14 = sum(s * (i15 + k16) for i15, k16 in enumerate(TABLE))
        y = np.tanh(y) + 1.25 * v14
    return np.sum(s * y)


def test_second_order_through_a_list_loop_and_a_loop_that_never_runs() -> None:
    # the shrunk program 186 of seed 20261210 itself: jvp of grad failed (UnboundLocalError)
    x, y, p = np.array([0.2, 0.4]), np.array([0.3, -0.1]), {"a": np.array([0.1, 0.2]), "b": 0.4}
    g = adgen.grad(while_after_a_list_loop, wrt=2)
    assert g(x, y, 0.7, p) == pytest.approx(np.sum(y))
    value, tangent = adgen.jvp(lambda s: g(x, y, s, p), (0.7,), (1.0,))
    assert value == pytest.approx(np.sum(y)) and tangent == 0.0
