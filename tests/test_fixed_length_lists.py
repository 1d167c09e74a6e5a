"""A list whose length never changes, spread into a call: ``args = list(args);
args[k] = v; fun(*args)`` (autograd's ``symmetrize_matrix_arg``, wrappers that transform one
argument of many). The list's length is the one it was made with wherever nothing can change
it; where something can (an append, a call given the list, a nested function), the spread is
refused as before."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal

import adgen


def _product(a, b, c):
    return np.sum(a * np.sin(b) * c)


def transform_argument(fun, argnum):
    def transformed(*args, **kwargs):
        args = list(args)
        args[argnum] = 0.5 * (args[argnum] + np.swapaxes(args[argnum], -1, -2))
        return fun(*args, **kwargs)

    return transformed


def doubled_middle(a, b, c):
    xs = [a, b, c]
    xs[1] = 2.0 * xs[1]
    return _product(*xs) + len(xs)


def through_star_args(a, b, c):
    def inner(*args):
        args = list(args)
        args[0] = args[0] ** 2
        return _product(*args)

    return inner(a, b, c)


RNG = np.random.default_rng(5)
A, B, C = RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=3)


def _differences(f, args, k, h=1e-6):
    x = np.asarray(args[k], dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        up = list(args)
        up[k] = x + e
        down = list(args)
        down[k] = x - e
        out[i] = (f(*up) - f(*down)) / (2 * h)
    return out


@pytest.mark.parametrize("f", [doubled_middle, through_star_args], ids=lambda f: f.__name__)
@pytest.mark.parametrize("k", [0, 1, 2])
def test_spread_of_a_list_written_by_index_in_both_modes(f, k):
    args = (A, B, C)
    want = _differences(f, args, k)
    np.testing.assert_allclose(adgen.grad(f, k)(*args), want, rtol=1e-7, atol=1e-9)
    v = RNG.normal(size=3)
    tangents = [None, None, None]
    tangents[k] = v
    np.testing.assert_allclose(adgen.jvp(f, args, tangents)[1], want @ v, rtol=1e-7)


def test_autograd_style_symmetrised_covariance_of_a_gaussian_log_density():
    logpdf = transform_argument(multivariate_normal.logpdf, 2)

    def f(x, mean, cov):
        return logpdf(x, mean, cov)

    L = np.tril(RNG.normal(size=(3, 3))) + 3 * np.eye(3)
    x, mean, cov = RNG.normal(size=3), RNG.normal(size=3), L @ L.T
    want = _differences(f, (x, mean, cov), 2)
    np.testing.assert_allclose(adgen.grad(f, 2)(x, mean, cov), want, rtol=1e-6, atol=1e-9)
    H = adgen.hessian(f, 0)(x, mean, cov)
    np.testing.assert_allclose(H, -np.linalg.inv(cov), rtol=1e-10)


def appended_then_spread(a, b, c):
    xs = [a, b]
    xs.append(c)
    return _product(*xs)


def given_away_then_spread(a, b, c):
    xs = [a, b, c]
    _touch(xs)
    return _product(*xs)


def _touch(xs):
    return len(xs)


def read_by_a_nested_function(a, b, c):
    xs = [a, b, c]
    xs[0] = a * 2.0

    def spread():
        return _product(*xs)

    return spread()


@pytest.mark.parametrize(
    "f",
    [appended_then_spread, given_away_then_spread, read_by_a_nested_function],
    ids=lambda f: f.__name__,
)
def test_a_list_whose_length_may_change_is_refused_or_right(f):
    try:
        got = adgen.grad(f, 1)(A, B, C)
    except adgen.AdgenError as exc:
        assert "line" in str(exc) or ":" in str(exc)
        return
    np.testing.assert_allclose(got, _differences(f, (A, B, C), 1), rtol=1e-7, atol=1e-9)


def test_reverse_over_reverse_through_a_list_written_by_index():
    """The cotangent of a list's item read again (``rt.written`` of a list's cotangent, in
    reverse-mode code differentiated in reverse mode)."""
    logpdf = transform_argument(multivariate_normal.logpdf, 2)
    L = np.tril(RNG.normal(size=(3, 3))) + 3 * np.eye(3)
    x, mean, cov = RNG.normal(size=3), RNG.normal(size=3), L @ L.T
    w = RNG.normal(size=(3, 3))
    inner = adgen.grad(lambda x, mean, cov: logpdf(x, mean, cov), 2)

    def outer(cov):
        return np.sum(inner(x, mean, cov) * w)

    want = _differences(outer, (cov,), 0, h=1e-5)
    np.testing.assert_allclose(adgen.grad(outer)(cov), want, rtol=1e-6, atol=1e-8)


def test_items_written_at_known_indices_are_known_one_by_one():
    """``args = list(args); args[argnum] = ...`` with every write a statement of the body at
    an index known now: the list is known item by item (no list is built when the code runs),
    so a test of an item's kind is decided when transforming and an item that carries no
    derivative (here ``c``, a constant) is given none."""
    halved = transform_argument(lambda a, b, c: np.sum(a @ b) * np.sum(c), 1)
    c = np.ones(3)

    def f(a, b):
        return halved(a, b, c)

    a, b = RNG.normal(size=3), RNG.normal(size=(3, 3))
    want = _differences(f, (a, b), 1)
    np.testing.assert_allclose(adgen.grad(f, 1)(a, b), want, rtol=1e-7, atol=1e-9)
    code = adgen.source(adgen.grad(f, (0, 1)), args=(a, b))
    assert ".append(" not in code and "c_bar" not in code


def written_at_a_run_time_index(a, b, c, k):
    xs = [a, b, c]
    xs[k] = 3.0 * xs[k]
    return _product(*xs)


def read_at_run_time_indices(a, b, c, k):
    xs = [a, b, c]
    xs[0] = xs[0] * 3.0
    total = np.sum(xs[k] * xs[0])
    for i in range(len(xs)):
        total = total + np.sum(xs[i] ** 2)
    return total


@pytest.mark.parametrize("f", [written_at_a_run_time_index, read_at_run_time_indices])
@pytest.mark.parametrize("k", [0, 2])
def test_an_index_known_only_when_running_reads_or_writes_a_list_made_then(f, k):
    """An item list read or written at an index known only when the code runs (``xs[k]``,
    ``xs[i]`` in a loop): its items are made a list there, and the derivative is right."""
    args = (A, B, C, k)
    for wrt in (0, 2):
        want = _differences(f, args, wrt)
        np.testing.assert_allclose(adgen.grad(f, wrt)(*args), want, rtol=1e-7, atol=1e-9)
        tangents = [None] * 4
        tangents[wrt] = C
        got = adgen.jvp(f, args, tangents)[1]
        np.testing.assert_allclose(got, want @ C, rtol=1e-7, atol=1e-9)


def kept_then_rebound(a, b, c):
    xs = [a, b * 2.0, c]
    old = xs[1]
    xs[1] = np.cos(xs[1]) * 1.5
    return np.sum(old * xs[1] + xs[2] * xs[0])


def test_an_item_kept_before_its_slot_is_written_keeps_its_value():
    """``old = xs[1]; xs[1] = ...`` of a list known item by item: the write binds the slot
    to a new value (no array is written into), so ``old`` is the value it was, and no
    check that it is a number is needed."""
    args = (A, B, C)
    for k in range(3):
        want = _differences(kept_then_rebound, args, k)
        got = adgen.grad(kept_then_rebound, k)(*args)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    assert "isscalar" not in adgen.source(kept_then_rebound, args=args)
