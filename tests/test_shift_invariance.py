"""The maximum that shifts a log-sum-exp carries no derivative (adgen.middle.shifts).

Where every read of ``m = np.max(z, ...)`` is the shift of a log-sum-exp, a log-softmax or a
softmax, the derivatives reaching ``m`` cancel exactly: derivative code leaves them out (no
``rt.minmax_vjp``, no sums feeding it) and gives the closed form up to rounding. Where any
read of ``m`` or of the values built from it is not such a shift (the log-sum-exp used
alone, another axis, the maximum read again), ``m`` keeps its derivative, and every
gradient here matches central differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import differences

import adgen

Z = np.random.default_rng(7).standard_normal((5, 4))


def softmax(z, axis):
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def logsumexp_rows(z):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return np.sum(lse * np.arange(1.0, 6.0)[:, None])


def logsumexp_all(z):
    m = z.max()
    return np.log(np.sum(np.exp(z - m))) + m


def log_softmax_nll(z):
    m = np.max(z, axis=1, keepdims=True)
    shifted = z - m
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(logp[:, 0])


def softmax_weighted(z):
    m = np.amax(z, axis=1, keepdims=True)
    e = np.exp(z - m)
    s = np.sum(e, axis=1, keepdims=True)
    p = e / s
    return np.sum(p * np.arange(4.0)) + np.sum(np.log(s) + m)


CLOSED_FORMS = {
    logsumexp_rows: lambda z: softmax(z, 1) * np.arange(1.0, 6.0)[:, None],
    logsumexp_all: lambda z: softmax(z.ravel(), 0).reshape(z.shape),
    log_softmax_nll: lambda z: softmax(z, 1) - np.eye(4)[[0] * 5],
}


@pytest.mark.parametrize("fn", list(CLOSED_FORMS) + [softmax_weighted], ids=lambda f: f.__name__)
def test_shifted_log_sum_exps_lose_the_maximum_s_derivative_only(fn) -> None:
    text = adgen.source(fn, args=(Z,))
    assert "minmax_vjp" not in text  # (the maximum's adjoint is gone)
    assert any(m in text for m in ("np.max(", "np.amax(", ".max("))  # (it is still computed)
    grad = adgen.grad(fn)(Z)
    np.testing.assert_allclose(grad, differences(fn, Z), rtol=1e-6, atol=1e-8)
    if fn in CLOSED_FORMS:
        np.testing.assert_allclose(grad, CLOSED_FORMS[fn](Z), rtol=1e-12, atol=1e-15)
    tangent = np.cos(np.arange(20.0)).reshape(5, 4)
    _, derivative = adgen.jvp(fn, (Z,), (tangent,))
    np.testing.assert_allclose(derivative, np.sum(grad * tangent), rtol=1e-12)


def test_hessian_through_the_shift() -> None:
    hessian = adgen.hessian(logsumexp_all)(Z)
    p = softmax(Z.ravel(), 0)
    np.testing.assert_allclose(hessian.reshape(20, 20), np.diag(p) - np.outer(p, p), atol=1e-14)


def lse_read_alone(z):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    return np.sum(lse * 2.0 + m)  # (lse read by a product: its m-derivative stays)


def other_axis(z):
    m = np.max(z, axis=0, keepdims=True)  # (not constant over the rows the sum adds)
    return np.sum(np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m)


def sum_without_keepdims(z):
    m = np.max(z, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(z - m), axis=1)) + m)


def maximum_read_again(z):
    m = np.max(z, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m) + np.sum(m * m)


def added_in_one_branch(z, flag):
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    if flag:
        out = lse + m
    else:
        out = lse
    return np.sum(out)


@pytest.mark.parametrize(
    "fn",
    [lse_read_alone, other_axis, sum_without_keepdims, maximum_read_again],
    ids=lambda f: f.__name__,
)
def test_the_maximum_keeps_its_derivative_where_it_does_not_cancel(fn) -> None:
    assert "minmax_vjp" in adgen.source(fn, args=(Z,))
    np.testing.assert_allclose(adgen.grad(fn)(Z), differences(fn, Z), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("flag", [True, False])
def test_a_shift_undone_in_one_branch_only_keeps_the_derivative(flag) -> None:
    got = adgen.grad(added_in_one_branch)(Z, flag)
    expected = differences(lambda z: added_in_one_branch(z, flag), Z)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def shifted_in_an_earlier_iteration(z):
    for i in range(3):
        m = np.max(z * (i + 1.0), axis=1, keepdims=True)
        if i == 0:
            d = z - m
    lse = np.log(np.sum(np.exp(d), axis=1, keepdims=True))
    return np.sum(lse + m)  # (m of the last iteration, d shifted by the first's)


def test_a_shift_by_another_iteration_s_maximum_keeps_the_derivative() -> None:
    fn = shifted_in_an_earlier_iteration
    assert "minmax_vjp" in adgen.source(fn, args=(Z,))
    np.testing.assert_allclose(adgen.grad(fn)(Z), differences(fn, Z), rtol=1e-6, atol=1e-8)
