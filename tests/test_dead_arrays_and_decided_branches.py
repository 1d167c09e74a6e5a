"""Code specialised for a call's shapes leaves out what the call cannot need: branches the
shapes decide (``if a.ndim > 2``: :mod:`adgen.middle.branches`) and arrays the function
fills but never reads for its result (a library's hand-written gradient next to the loss
the user differentiates: :mod:`adgen.middle.dead_arrays`). The derivatives stay those of the
function as written; writes other names or the caller can see stay in the code."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import differences

import adgen
from adgen.frontend.lower import lower
from adgen.frontend.parse import parse_function
from adgen.middle.shapes import describe, infer

RNG = np.random.default_rng(3)


def project(a, w):
    """A library-style helper: its layout decided by the operands' dimensions."""
    if a.ndim > 2 or w.ndim > 2:
        return np.tensordot(a, w, axes=[-1, -2 if w.ndim > 1 else -1])
    axis = -1 if w.ndim == 1 else -2  # (a name bound to two values: the shapes pick one)
    return np.tensordot(a, w, axes=[-1, axis])


def loss_and_grad(w, X, y):
    """A loss with its gradient written by hand, as libraries ship them."""
    n_features = X.shape[1]
    intercept = w.shape[0] == n_features + 1
    coef = w[:n_features]
    r = project(X, coef) - y
    if intercept:
        r = r - w[-1]
    loss = 0.5 * np.dot(r, r) + 0.1 * np.dot(coef, coef)
    grad = np.zeros(n_features + 1 if intercept else n_features)
    grad[:n_features] = X.T @ r
    grad[:n_features] = grad[:n_features] + 0.2 * coef
    if intercept:
        grad[-1] = -np.sum(r)
    return loss, grad


X = RNG.normal(size=(40, 4))
Y = RNG.normal(size=40)


def loss_only(w):
    return loss_and_grad(w, X, Y)[0]


@pytest.mark.parametrize("size", [4, 5], ids=["no intercept", "intercept"])
def test_the_loss_of_a_loss_and_gradient_pair_has_the_hand_written_gradient(size):
    w = RNG.normal(size=size)
    np.testing.assert_allclose(adgen.grad(loss_only)(w), loss_and_grad(w, X, Y)[1], rtol=1e-12)
    _, t = adgen.jvp(loss_only, (w,), (np.ones(size),))
    np.testing.assert_allclose(t, loss_and_grad(w, X, Y)[1].sum(), rtol=1e-12)
    h = adgen.hessian(loss_only)(w)
    rows = [differences(lambda v, i=i: loss_and_grad(v, X, Y)[1][i], w) for i in range(size)]
    fd = np.array(rows)
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-6)


def test_the_unused_gradient_array_and_the_branches_not_taken_leave_the_code():
    w = RNG.normal(size=5)
    lines = adgen.source(loss_only, args=(w,)).splitlines()
    code = "\n".join(line for line in lines if not line.lstrip().startswith("#"))
    assert "np.zeros(" not in code  # the hand-written gradient: made, filled, never read
    assert "ndim" not in code and "if " not in code  # every test decided by the shapes


def test_shape_inference_reaches_its_fixed_point_when_a_name_holds_two_known_values():
    # `axis` is -1 or -2: inference joins the two (shape known, value not) and stops there,
    # instead of knowing nothing about the whole function
    def f(a, w):
        if w.ndim == 1:
            axis = -1
        else:
            axis = -2
        n = a.shape[0]
        return np.sum(np.tensordot(a, w, axes=[-1, axis])) / n

    known = infer(lower(parse_function(f)), (("a", describe(X)), ("w", describe(np.ones(4)))))
    assert known["n"].value == 40
    assert known["axis"].shape == () and not known["axis"].has_value


def test_a_branch_the_values_decide_stays():
    def f(x):
        if x[0] > 0:
            return np.sum(np.sin(x))
        return np.sum(np.cos(x))

    for x in (np.array([0.5, 1.0]), np.array([-0.5, 1.0])):
        np.testing.assert_allclose(adgen.grad(f)(x), differences(f, x), rtol=1e-7)
    assert "if " in adgen.source(f, args=(np.ones(2),))


def test_each_kind_of_argument_gets_its_own_branch():
    def f(x):
        if x.ndim == 1:
            return np.sum(np.sin(x))
        return np.sum(np.cos(x) * np.arange(x.shape[1]))

    v, m = RNG.normal(size=3), RNG.normal(size=(2, 3))
    np.testing.assert_allclose(adgen.grad(f)(v), np.cos(v), rtol=1e-12)
    np.testing.assert_allclose(adgen.grad(f)(m), -np.sin(m) * np.arange(3), rtol=1e-12)
    assert "cos" in adgen.source(f, args=(v,)) and "arange" not in adgen.source(f, args=(v,))
    assert "arange" in adgen.source(f, args=(m,))


BUF = np.zeros(3)


def test_a_write_into_an_array_the_caller_sees_stays():
    def f(x):
        view = BUF[:]
        view[1] = 7.0
        return np.sum(x * x)

    BUF[:] = 0.0
    x = np.arange(3.0)
    np.testing.assert_allclose(adgen.grad(f)(x), 2 * x)
    assert BUF[1] == 7.0


def test_an_array_printed_after_its_writes_stays(capsys):
    def f(x):
        shown = np.zeros(2)
        shown[0] = 3.0
        print("shown", shown)
        return np.sum(x * x)

    adgen.grad(f)(np.arange(3.0))
    assert "shown [3. 0.]" in capsys.readouterr().out


def test_an_array_written_and_then_read_for_the_result_stays():
    def f(x):
        buf = np.zeros(x.shape[0] + 1)
        buf[1:] = x * x
        buf[0] = buf[1] + 1.0
        return np.sum(buf * buf)

    x = RNG.normal(size=4)
    np.testing.assert_allclose(adgen.grad(f)(x), differences(f, x), rtol=1e-7)
    _, t = adgen.jvp(f, (x,), (np.ones(4),))
    np.testing.assert_allclose(t, differences(f, x).sum(), rtol=1e-7)
