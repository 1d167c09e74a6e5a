"""Calls adgen has no rule for, on values that do not depend on a differentiated input.

Such a call (``np.meshgrid`` of ranges, a SciPy function of constants, ``print``, a
logger, a library function that ``raise``s inside) is run as written in the primal code of
both modes, its result a constant of the derivative. A differentiated value reaching it
is refused with the error adgen gave before; a call that may write into a value a
differentiated operation read before it is refused too.
"""

import logging

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def both_modes(f, x, *rest):
    """The gradient of f at x from reverse mode, and forward mode's, one direction a call."""
    g = adgen.grad(f)(x, *rest)
    x = np.asarray(x, dtype=float)
    forward = np.zeros(x.shape)
    for k in range(x.size):
        t = np.zeros(x.size)
        t[k] = 1.0
        _, d = adgen.jvp(f, (x, *rest), (t.reshape(x.shape), *(None for _ in rest)))
        forward.flat[k] = d
    return np.asarray(g), forward


def test_meshgrid_of_aranges_runs():
    def f(x):
        xx, yy = np.meshgrid(np.arange(3), np.arange(2))
        return np.sum(x * xx + x**2 * yy)

    xx, yy = np.meshgrid(np.arange(3), np.arange(2))
    for g in both_modes(f, X):
        np.testing.assert_allclose(g, xx + 2 * X * yy, rtol=1e-14)
    check_grads(f, X)


def test_scipy_function_of_constants_runs():
    special = pytest.importorskip("scipy.special")

    def f(x, n):
        c = special.multigammaln(0.5 * n, 2)  # a Python function that raises on bad input
        return c * x**2

    c = special.multigammaln(2.5, 2)
    for g in both_modes(f, 1.5, 5):
        assert g == pytest.approx(2 * c * 1.5, rel=1e-14)


def test_scipy_function_of_a_differentiated_value_is_read_through_its_validation():
    """SciPy's multigammaln checks its arguments (raising with an f-string message) before
    computing: adgen copies the checks and differentiates the computation (it refused the
    whole function for its `raise` before). d/da = digamma(a) + digamma(a - 1/2)."""
    special = pytest.importorskip("scipy.special")

    def f(x):
        return special.multigammaln(x, 2)

    want = special.digamma(3.0) + special.digamma(2.5)
    for g in both_modes(f, 3.0):
        assert g == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="condition a"):
        adgen.jvp(f, (0.2,), (1.0,))


def test_print_runs_once_per_call_in_both_modes(capsys):
    def f(x, n):
        print("start")
        s = 0.0
        for i in range(n):
            y = x * i
            print("step", i, y)  # reads a differentiated value: printed, not differentiated
            if i % 2 == 0:
                print("even")
            s = s + np.sin(y)
        return s

    f(0.5, 3)
    expected = capsys.readouterr().out
    assert expected.count("\n") == 6
    d = sum(i * np.cos(0.5 * i) for i in range(3))
    assert adgen.grad(f)(0.5, 3) == pytest.approx(d, rel=1e-14)
    assert capsys.readouterr().out == expected
    assert adgen.jvp(f, (0.5, 3), (1.0, None))[1] == pytest.approx(d, rel=1e-14)
    assert capsys.readouterr().out == expected
    assert adgen.value_and_grad(f)(0.5, 3)[1] == pytest.approx(d, rel=1e-14)
    assert capsys.readouterr().out == expected


def test_the_same_call_twice_runs_twice():
    calls = []

    def note(*items):  # `*items`: not inlined, run as written
        calls.append(items)
        return len(calls)

    def f(x):
        a = note(1)
        b = note(1)  # never taken for the first one's result
        return x * a * b

    assert adgen.grad(f)(2.0) == 2.0
    assert calls == [(1,), (1,)]
    calls.clear()
    assert adgen.jvp(f, (2.0,), (1.0,)) == (4.0, 2.0)
    assert calls == [(1,), (1,)]


def test_a_logger_reads_a_differentiated_value(caplog):
    log = logging.getLogger("adgen.test.inactive")

    def f(x):
        y = np.tanh(x)
        log.warning("y = %s", y)
        return np.sum(y * y)

    with caplog.at_level(logging.WARNING, logger="adgen.test.inactive"):
        g = adgen.grad(f)(X)
    np.testing.assert_allclose(g, 2 * np.tanh(X) / np.cosh(X) ** 2, rtol=1e-14)
    assert len(caplog.records) == 1
    check_grads(f, X)


def test_library_function_without_rule_on_constants_runs():
    # np.histogram is left without a rule on purpose (its bin edges follow the data)
    def f(x):
        counts, edges = np.histogram(np.arange(10.0), bins=5)
        return np.sum(x[0] * counts[:3]) + edges[1] * np.sum(x)

    counts, edges = np.histogram(np.arange(10.0), bins=5)
    expected = np.full(X.shape, edges[1])
    expected[0] += counts[:3]
    for g in both_modes(f, X):
        np.testing.assert_allclose(g, expected, rtol=1e-14)


def test_library_function_on_a_differentiated_value_is_refused_as_before():
    def f(x):
        counts, edges = np.histogram(x, bins=5)
        return np.sum(edges)

    message = "adgen has no derivative rule for `numpy.histogram`"
    with pytest.raises(adgen.NoRuleError, match=message):
        adgen.grad(f)(X)
    with pytest.raises(adgen.NoRuleError, match=message):
        adgen.jvp(f, (X,), (np.ones_like(X),))


def test_a_result_of_such_a_call_on_a_differentiated_value_is_refused():
    def f(x):
        return np.sum(np.unique(x)[0])

    with pytest.raises(adgen.NoRuleError, match="no derivative rule for `numpy.unique`"):
        adgen.grad(f)(np.ones(2))


def test_a_call_that_may_write_into_a_differentiated_array_is_refused():
    def f(x):
        y = x * 2.0
        np.random.shuffle(y)
        return np.sum(y * y)

    for take in (lambda: adgen.grad(f)(np.ones(3)), lambda: adgen.jvp(f, (X,), (X,))):
        with pytest.raises(adgen.NoRuleError, match="no derivative rule for `numpy.random"):
            take()


def test_a_call_that_may_write_into_what_a_derivative_read_before_is_refused():
    def f(x):
        a = np.arange(3.0)
        y = x * a
        np.random.shuffle(a)  # the adjoint of x * a would read the shuffled a
        return np.sum(y)

    with pytest.raises(adgen.NonDifferentiableError, match="may change `a` in place"):
        adgen.grad(f)(np.ones(3))
    assert adgen.jvp(f, (np.ones(3),), (np.ones(3),))[1] == 3.0  # forward mode reads it in time


def test_a_call_writing_into_a_constant_before_it_is_read():
    def f(x):
        counts = np.zeros(3)
        np.add.at(counts, [0, 2, 2], 1.0)  # a list stays a list (an index, not a tuple)
        return np.sum(x * counts)

    for g in both_modes(f, np.ones(3)):
        np.testing.assert_array_equal(g, [1.0, 0.0, 2.0])


def helper_that_checks(n):
    if n < 0:
        raise ValueError("n must be positive")
    return 2.0 * n


def test_a_helper_that_validates_is_inlined_with_its_check():
    def f(x, n):
        return helper_that_checks(n) * x + helper_that_checks(3)

    for g in both_modes(f, 2.0, 4):
        assert g == 8.0

    def g(x):
        return helper_that_checks(x)

    for d in both_modes(g, 1.0):
        assert d == 2.0
    with pytest.raises(ValueError, match="n must be positive"):
        adgen.grad(g)(-1.0)


def test_eval_and_locals_stay_refused():
    def f(x):
        return eval("x * 2")

    with pytest.raises(adgen.NoRuleError, match="`eval`"):
        adgen.grad(f)(1.0)


def test_a_call_inside_a_checkpointed_loop_is_refused():
    def f(x):
        for i in adgen.checkpoint(range(3)):
            print(i)
            x = np.sin(x)
        return x

    with pytest.raises(adgen.UnsupportedSyntaxError, match="inside a checkpointed loop"):
        adgen.grad(f)(1.0)


def test_second_derivative_through_a_print(capsys):
    def f(x):
        print("x")
        return x**3

    assert adgen.hessian(f)(2.0) == 12.0
    assert capsys.readouterr().out == "x\n"


BUFFER = np.array([1.0, 2.0, 3.0])


def refill():  # adgen refuses its write into a global: run as written
    BUFFER[:] = 0.0
    return 1.0


def test_a_helper_that_may_change_a_global_read_before_is_refused():
    def f(x):
        y = np.sum(x * BUFFER)
        return y * refill()

    def g(x):
        scale = refill()  # before any differentiated operation reads BUFFER: fine
        return scale * np.sum(x * BUFFER)

    BUFFER[:] = [1.0, 2.0, 3.0]
    with pytest.raises(adgen.NonDifferentiableError, match="may change `BUFFER` in place"):
        adgen.grad(f)(np.ones(3))
    for d in both_modes(g, np.ones(3)):
        np.testing.assert_array_equal(d, np.zeros(3))


def test_a_method_of_an_outside_object_on_a_differentiated_value_is_refused_as_before():
    def f(x):  # (np.add.reduce is read as np.sum now: tests/test_ufunc_methods.py)
        return np.sum(np.maximum.accumulate(x))

    with pytest.raises(adgen.UnsupportedSyntaxError, match=r"the method `\.accumulate\(\)`"):
        adgen.grad(f)(np.ones(3))

    def g(x):
        return np.sum(x) * np.sum(np.maximum.accumulate(np.arange(4.0)))  # on constants: runs

    for d in both_modes(g, np.ones(3)):
        np.testing.assert_array_equal(d, np.full(3, 6.0))


def test_a_message_made_from_a_differentiated_value_is_printed(capsys):
    def f(x):
        y = x * x
        print("loss " + str(y))
        return y

    assert adgen.grad(f)(3.0) == 6.0
    assert adgen.jvp(f, (3.0,), (1.0,)) == (9.0, 6.0)
    assert capsys.readouterr().out == "loss 9.0\nloss 9.0\n"

    def g(x):
        return float(str(x * x))  # a value through str: its derivative would be lost

    with pytest.raises(adgen.NoRuleError, match="no derivative rule for `str`"):
        adgen.grad(g)(3.0)

    def h(x):
        return x * parse(str(x))  # through another call run as written: refused the same

    with pytest.raises(adgen.NoRuleError, match="no derivative rule for `str`"):
        adgen.grad(h)(3.0)


def parse(*text):  # `*text`: not inlined, run as written
    return float(text[0])


def test_a_list_passed_to_such_a_call_stays_a_list():
    def f(x):
        counts = np.zeros(3)
        idx = [0, 2, 2]  # bound once to a list: passed as a list
        np.add.at(counts, idx, 1.0)
        return np.sum(x * counts)

    for d in both_modes(f, np.ones(3)):
        np.testing.assert_array_equal(d, [1.0, 0.0, 2.0])


def test_a_list_or_tuple_adgen_cannot_tell_apart_is_refused():
    def f(x, idx):  # idx: a list argument, which adgen takes apart
        counts = np.zeros(3)
        np.add.at(counts, idx, 1.0)
        return np.sum(x * counts)

    with pytest.raises(adgen.UnsupportedSyntaxError, match="which of the two it is"):
        adgen.grad(f)(np.ones(3), [0, 2, 2])

    def g(x):
        counts = np.zeros(3)
        for k in range(2):
            idx = [0, 2, 2]  # bound inside a loop: one name an item, the display written once
        np.add.at(counts, idx, 1.0)
        return np.sum(x * counts)

    assert adgen.grad(g)(np.ones(3)).tolist() == [1.0, 0.0, 2.0]

    def h(x):
        counts = np.zeros(3)
        idx = None
        for k in range(2):
            idx = [0, 2, 2]  # bound to None too: a copy of a tuple in adgen's code
        np.add.at(counts, idx, 1.0)
        return np.sum(x * counts)

    with pytest.raises(adgen.UnsupportedSyntaxError, match="adgen made (it|this list) a tuple"):
        adgen.grad(h)(np.ones(3))


def _no_rule_helper(z):
    return np.frompyfunc(lambda v: v * 2.0, 1, 1)(z)


def test_a_refusal_says_the_path_the_differentiated_value_took():
    """A differentiated value reaching a call without a rule (inside a helper): the refusal
    names the parameter it came from and the lines it went through (issue 34, part 8)."""

    def loss(params, data):
        lin = data @ params
        mu = np.exp(lin)
        scaled = mu * 2.0
        return np.sum(_no_rule_helper(scaled))

    with pytest.raises(adgen.AdgenError) as info:
        adgen.grad(loss)(np.ones(3), X)
    message = info.value.message
    assert "reaches it from `params`" in message
    path = message[message.index("reaches it from") :]
    assert path.index("lin = data @ params") < path.index("mu = np.exp(lin)")
    assert path.index("mu = np.exp(lin)") < path.index("scaled = mu * 2.0")
