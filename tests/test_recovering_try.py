"""A ``try`` whose ``except`` goes on (issue 34, part 3).

``try: L = np.linalg.cholesky(K) except LinAlgError: return -np.inf``: which path runs is
decided when the code runs. adgen runs the ``try`` as written first (a probe it compiles
from the statements), then differentiates the path the probe found, as any branch
(:mod:`adgen.frontend.lower.attempts`). Checked: exact derivatives on both paths in both
modes and at second order, in a loop with ``continue``, with ``raise`` inside the body and
an ``else`` block; a body that could not run twice unchanged, or a handler reading the
exception, stays refused by name.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import adgen
from adgen.errors import UnsupportedSyntaxError
from adgen.testing import check_grads


def log_det_or_floor(x):
    k = np.outer(x, x) + np.diag(x)
    try:
        chol = np.linalg.cholesky(k)
    except np.linalg.LinAlgError:
        return -np.inf
    return 2.0 * np.sum(np.log(np.diag(chol)))


def log_det(x):
    return np.linalg.slogdet(np.outer(x, x) + np.diag(x))[1]


def fallback(x):
    try:
        v = np.log(x[0] - 2.0) if x[0] > 2.0 else float("nan")
        if np.isnan(v):
            raise ValueError("no log")
    except (ValueError, FloatingPointError):
        v = np.sin(x[1]) * 3.0
    else:
        v = v * 2.0
    return v + np.sum(x**2)


def skip_singular(x):
    s = 0.0
    for i in range(3):
        try:
            r = np.linalg.inv(np.outer(x, x) * i + np.eye(2) * (i > 0))
        except np.linalg.LinAlgError:
            continue
        s = s + np.sum(r) * x[0]
    return s


def test_the_path_without_an_exception_is_the_bodys():
    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(adgen.grad(log_det_or_floor)(x), adgen.grad(log_det)(x))
    check_grads(log_det_or_floor, x)
    np.testing.assert_allclose(
        adgen.hessian(log_det_or_floor)(x), adgen.hessian(log_det)(x), rtol=1e-10
    )


def test_the_handlers_path_is_differentiated_when_the_body_raises():
    x = np.array([-2.0, -0.5])  # k is not positive definite: the value is the constant -inf
    value, g = adgen.value_and_grad(log_det_or_floor)(x)
    assert value == -np.inf and np.array_equal(g, [0.0, 0.0])
    _, t = adgen.jvp(log_det_or_floor, (x,), (np.ones(2),))
    assert t == 0.0


@pytest.mark.parametrize("x", [np.array([3.0, 0.5]), np.array([1.0, 0.5])], ids=["else", "raise"])
def test_raise_in_the_body_and_an_else_block(x):
    if x[0] > 2.0:
        want = np.array([2.0 / (x[0] - 2.0), 0.0]) + 2 * x
    else:
        want = np.array([0.0, 3.0 * np.cos(x[1])]) + 2 * x
    np.testing.assert_allclose(adgen.grad(fallback)(x), want, rtol=1e-13)
    check_grads(fallback, x)


def test_a_try_in_a_loop_skipping_with_continue():
    x = np.array([0.3, 0.7])
    check_grads(skip_singular, x)
    assert adgen.hessian(skip_singular)(x).shape == (2, 2)


def writes_in_the_body(x):
    y = np.zeros(2)
    try:
        y[0] = np.sqrt(x[0])
    except ValueError:
        y[0] = 0.0
    return np.sum(y * x)


def reads_the_exception(x):
    try:
        v = math.sqrt(x[0])
    except ValueError as e:  # (math domain error)
        v = len(str(e)) * 1.0
    return v * x[1]


def appends_in_the_body(x):
    out = []
    try:
        out.append(x[0] * 2.0)
    except ValueError:
        return 0.0
    return out[0]


def test_a_handler_reading_the_exception_it_caught_reads_the_one_the_body_raised():
    for x, want in (
        (np.array([0.25, 3.0]), np.array([3.0 / (2 * 0.5), 0.5])),
        (np.array([-0.25, 3.0]), np.array([0.0, len("math domain error")])),
    ):
        for got in (adgen.grad(reads_the_exception)(x), adgen.jacfwd(reads_the_exception)(x)):
            np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("f", [writes_in_the_body, appends_in_the_body])
def test_a_try_that_could_not_run_twice_unchanged_is_refused(f):
    with pytest.raises(UnsupportedSyntaxError, match="`try` blocks"):
        adgen.grad(f)(np.array([0.5, 1.0]))


def reads_a_container(p):
    try:
        v = np.tanh(p[1]) * p[0]
        if np.sum(p[1]) > 10.0:
            raise ValueError("too large")
    except ValueError:
        v = p[0] * 2.0
    return np.sum(v * v)


def test_a_try_reading_a_tuple_argument_at_second_order():
    """A tuple argument read in the body: the probe is given it as it is (see also
    tests/test_fuzz_regressions.py, the fuzzer's program that found the refusal)."""
    p = (np.array([0.5, -1.0]), np.array([0.3, 0.2]))
    ga, gb = adgen.grad(reads_a_container)(p)
    t = np.tanh(p[1])
    np.testing.assert_allclose(ga, 2 * t * t * p[0], rtol=1e-13)
    np.testing.assert_allclose(gb, 2 * t * (1 - t**2) * p[0] ** 2, rtol=1e-13)
    tangents = (np.ones(2), np.zeros(2))
    _, (da, db) = adgen.jvp(adgen.grad(reads_a_container), (p,), (tangents,))
    np.testing.assert_allclose(da, 2 * t * t, rtol=1e-12)
    np.testing.assert_allclose(db, 4 * t * (1 - t**2) * p[0], rtol=1e-12)


def appended_then_tried(x):
    xs = [x[0] * x[0], x[1] + 2.0]
    xs.append(1.0)
    try:
        low = np.linalg.cholesky(np.diag(np.array(xs)))
    except np.linalg.LinAlgError:
        return 0.0
    return np.sum(low)


def test_a_list_the_probe_reads_is_still_the_functions_own():
    # the probe's result (which handler would run: a number) was taken for a view of the
    # list it is given, so the append before the `try` was refused
    x = np.array([0.7, 0.4])
    want = np.array([1.0, 0.5 / np.sqrt(x[1] + 2.0)])
    np.testing.assert_allclose(adgen.grad(appended_then_tried)(x), want, rtol=1e-13)
    _, t = adgen.jvp(appended_then_tried, (x,), (np.array([1.0, -1.0]),))
    assert t == pytest.approx(want[0] - want[1], rel=1e-13)
