"""The IR optimizer (adgen.middle.optimize): each pass, where it must not apply, and agreement of
optimized and unoptimized code on random programs (values bit for bit, derivatives up to
rounding)."""

import importlib.util
import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_random_programs import EXAMPLES, programs

import adgen
from adgen.pipeline import derivative

SCALE = 3.0


def both(f, mode, wrt, *args):
    """Results of the optimized and the unoptimized derivative code on the same arguments."""
    names = tuple(wrt)
    seed = 1.0
    extra = (
        [np.ones_like(a) for a in args if isinstance(a, np.ndarray)] if mode == "forward" else []
    )
    out = []
    for optimized in (True, False):
        d = derivative(f, mode, names, optimized=optimized)
        tail = extra[: len(names)] if mode == "forward" else [seed]
        out.append(d.compiled(*args, *tail))
    return out


def code(src):
    """The generated code without its comments (which quote the user's lines)."""
    return "\n".join(line for line in src.splitlines() if not line.lstrip().startswith("#"))


def same_bits(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True) and (
        np.asarray(a).dtype == np.asarray(b).dtype
    )


def test_constants_from_literals_and_number_globals_are_folded():
    def f(x):
        c = (1.0 + SCALE) * 0.5
        return np.sum(np.sin(x) * c)

    src = code(adgen.source(f))
    assert "* 2.0" in src and "SCALE" not in src
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(adgen.grad(f)(x), 2.0 * np.cos(x))


def test_a_changed_folded_global_gives_a_new_derivative():
    global SCALE

    def f(x):
        return x * (SCALE + 1.0)

    assert adgen.grad(f)(1.0) == 4.0
    old = SCALE
    try:
        SCALE = 5.0
        assert adgen.grad(f)(1.0) == 6.0
    finally:
        SCALE = old


def test_numpy_scalars_are_not_folded():
    def f(x):
        c = np.sqrt(2.0)  # a NumPy float64, not a Python float: kept as written
        d = math.sqrt(4.0)  # a Python float: folded
        return x * c * d

    src = code(adgen.source(f))
    assert "np.sqrt(2.0)" in src and "math.sqrt" not in src
    assert adgen.grad(f)(1.0) == pytest.approx(2.0 * math.sqrt(2.0))


def test_a_repeated_operation_is_computed_once_in_both_modes():
    def f(x, y):
        a = np.exp(x) * y
        b = np.exp(x) * y
        return np.sum(a * b)

    for mode in ("reverse", "forward"):
        src = code(adgen.source(f, mode=mode))
        assert src.count("np.exp(x)") == 1, src
        assert code(adgen.source(f, mode=mode, optimize=False)).count("np.exp(x)") == 2
    x, y = np.array([0.3, -0.2]), np.array([1.5, 0.5])
    np.testing.assert_allclose(adgen.grad(f)(x, y), 2 * np.exp(2 * x) * y * y)


def test_dead_code_is_dropped_and_its_derivative_never_written():
    def f(x):
        unused = np.cosh(x) * 3.0  # noqa: F841 (dead code is the point)
        return np.sum(np.sin(x))

    for mode in ("reverse", "forward"):
        assert "cosh" not in code(adgen.source(f, mode=mode))


def test_x_times_x_keeps_its_primal_and_gets_one_derivative_product():
    def f(x):
        return np.sum(x * x)

    src = adgen.source(f)
    assert "x * x" in src and "x_bar = x_bar +" not in src
    x = np.array([0.1, -3.0, 7.5])
    a, b = both(f, "reverse", ("x",), x)
    assert same_bits(a, b)
    a, b = both(f, "forward", ("x",), x)
    assert same_bits(a, b)


def test_no_reuse_across_a_loop_that_rebinds_an_operand():
    def f(x, n):
        a = np.sin(x)
        for i in range(n):
            x = x * 0.5
            b = np.sin(x)
            a = a + b
        c = np.sin(x)
        return np.sum(a + c)

    x = np.array([0.4, 1.1])
    for n in (0, 1, 3):
        g = adgen.grad(f)(x, n)
        expected = np.cos(x) + sum(0.5 ** (i + 1) * np.cos(x * 0.5 ** (i + 1)) for i in range(n))
        expected = expected + 0.5**n * np.cos(x * 0.5**n)
        np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_no_reuse_from_one_branch_in_the_other_or_after():
    def f(x, flag):
        if flag > 0:
            a = np.tanh(x)
        else:
            a = x * 2.0
        b = np.tanh(x)
        return np.sum(a * b)

    x = np.array([0.3, -0.7])
    for flag in (1.0, -1.0):
        g = adgen.grad(f)(x, flag)
        t, dt = np.tanh(x), 1 - np.tanh(x) ** 2
        expected = 2 * t * dt if flag > 0 else 2 * t + 2 * x * dt
        np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_functions_writing_in_place_keep_their_repeats():
    def f(x):
        y = np.zeros(3)
        z = np.zeros(3)
        y[0] = x
        z[1] = x * 2.0
        return np.sum(y * z + y)

    # two np.zeros(3) must stay two arrays: merging them would make y and z one array
    assert adgen.grad(f)(1.5) == 1.0
    assert code(adgen.source(f)).count("= np.zeros(3)") == 2


def test_rebound_names_are_not_merged_with_later_repeats():
    def f(x):
        a = np.sin(x)
        a = a * 2.0
        b = np.sin(x)
        return a + b

    assert adgen.grad(f)(0.5) == pytest.approx(3 * math.cos(0.5))


_counter = itertools.count()


def _load(tmp_path, source):
    path = tmp_path / f"opt_prog_{next(_counter)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.program


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(source=programs())
def test_optimized_derivatives_equal_unoptimized_ones(tmp_path, source):
    program = _load(tmp_path, source)
    rng = np.random.default_rng(7)
    x, y, s = rng.normal(size=(3, 4)), rng.normal(size=4), float(rng.normal())
    for mode in ("reverse", "forward"):
        results = []
        for optimized in (True, False):
            d = derivative(program, mode, ("x", "y"), optimized=optimized)
            if mode == "forward":
                results.append(d.compiled(x, y, s, np.ones_like(x), np.full_like(y, 0.5)))
            else:
                results.append(d.compiled(x, y, s, 1.0))
        assert same_bits(results[0][0], results[1][0]), source  # the value: exact
        # derivatives: a value computed once for several uses sums their contributions
        # first ((a + b) c, not a c + b c), so they agree up to rounding
        parts = [r[1] if isinstance(r[1], tuple) else (r[1],) for r in results]
        for a, b in zip(*parts):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13, err_msg=source)


def test_loop_invariant_work_moves_before_the_loop_under_a_guard():
    def f(w, x, n):
        s = 0.0
        for t in range(n):
            a = w[:3] * 2.0  # reads nothing the loop changes
            s = s + np.sum(a * x) * t
        return s

    src = code(adgen.source(f))
    loop = src.index("for t in ")
    assert src.index("w[:3]") < loop and "if loop_" in src[:loop]
    w, x = np.arange(5.0), np.array([1.0, -2.0, 0.5])
    for n in (0, 1, 4):
        expected = np.zeros(5)
        expected[:3] = 2.0 * x * sum(range(n))
        np.testing.assert_array_equal(adgen.grad(f)(w, x, n), expected)
        check = adgen.jvp(f, (w, x, n), (np.ones(5), None, None))[1]
        assert check == pytest.approx(expected.sum())


def test_a_loop_that_runs_zero_times_computes_none_of_its_invariants():
    def f(x, xs):
        s = 0.0
        for i in range(len(xs)):
            first = xs[0]  # would raise IndexError outside the loop when xs is empty
            s = s + x * first
        return s

    assert adgen.grad(f)(2.0, []) == 0.0
    assert adgen.grad(f)(2.0, [3.0, 3.0]) == 6.0


def test_values_local_to_an_iteration_get_no_zero_reset_in_the_reverse_loop():
    def f(x, n):
        for i in range(n):
            a = np.sin(x)
            b = a * 1.5
            x = b + 0.25 * x
        return np.sum(x)

    src = code(adgen.source(f))
    sweep = src[src.index("reversed(") :]
    assert "zeros_like(a)" not in sweep and "zeros_like(b)" not in sweep
    x = np.array([0.2, -0.4])
    for n in (0, 1, 5):
        g = adgen.grad(f)(x, n)
        expected = np.ones(2)
        for k in range(n):  # chain rule backwards through the iterations
            xk = x.copy()
            for _ in range(n - 1 - k):
                xk = np.sin(xk) * 1.5 + 0.25 * xk
            expected = expected * (1.5 * np.cos(xk) + 0.25)
        np.testing.assert_allclose(g, expected, rtol=1e-12)


def _half_tanh(u):
    return np.tanh(u) * 0.5


def test_names_made_by_the_optimizer_never_collide_with_derivative_names():
    # found by the random control-flow programs: the loop guard's names and reverse mode's
    # while-loop counter were both called loop_2
    def f(x, y):
        a = x * 1.0
        n0 = 0
        while n0 < 1:
            for i1 in range(2):
                a = a * 0.9 + _half_tanh(y)
            n0 = n0 + 1
        return np.sum(a * a)

    x, y = np.full(3, 0.3), np.array([0.1, 0.2, -0.4])
    a = x.copy()
    for _ in range(2):
        a = a * 0.9 + np.tanh(y) * 0.5
    np.testing.assert_allclose(adgen.grad(f)(x, y), 2 * a * 0.81, rtol=1e-12)
    np.testing.assert_allclose(
        adgen.grad(f, wrt=1)(x, y), 2 * a * (0.9 + 1.0) * 0.5 * (1 - np.tanh(y) ** 2), rtol=1e-12
    )
