"""Jacobians (forward, reverse, automatic) and has_aux, checked against finite differences."""

import numpy as np
import pytest

import adgen


def numeric_jacobian(f, args, k, eps=1e-6):
    args = [np.array(a, dtype=float) if isinstance(a, np.ndarray) else a for a in args]
    x = args[k]
    out = np.asarray(f(*args))
    jac = np.zeros(out.shape + np.shape(x))
    for idx in np.ndindex(np.shape(x)) if np.ndim(x) else [()]:
        plus, minus = list(args), list(args)
        if np.ndim(x):
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps
            xm[idx] -= eps
        else:
            xp, xm = x + eps, x - eps
        plus[k], minus[k] = xp, xm
        jac[(..., *idx)] = (np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps)
    return jac


def vector_field(x, y):
    return np.sin(x) * y[0] + x[::-1] * y


def with_a_loop(x, W):
    h = x
    for t in range(3):
        h = np.tanh(W @ h) + h
    return h


def scalar_to_vector(s):
    return np.array([s, s * s, np.sin(s)])


X = np.array([0.3, -0.5, 0.7])
W = np.array([[0.2, -0.4, 0.1], [0.5, 0.3, -0.2], [-0.1, 0.2, 0.4]])


@pytest.mark.parametrize(
    "make", [adgen.jacfwd, adgen.jacrev, adgen.jacobian], ids=["fwd", "rev", "auto"]
)
@pytest.mark.parametrize(
    "fn, args, k",
    [
        (vector_field, (X, X[::-1] + 1.0), 0),
        (vector_field, (X, X[::-1] + 1.0), 1),
        (with_a_loop, (X, W), 0),
        (with_a_loop, (X, W), 1),
        (scalar_to_vector, (0.4,), 0),
    ],
    ids=["field-x", "field-y", "loop-x", "loop-W", "scalar-in"],
)
def test_jacobians_match_finite_differences(make, fn, args, k):
    J = make(fn, wrt=k)(*args)
    expected = numeric_jacobian(fn, args, k)
    assert J.shape == expected.shape
    np.testing.assert_allclose(J, expected, rtol=1e-5, atol=1e-7)


def test_jacobian_of_several_arguments_is_a_tuple():
    Jx, Jy = adgen.jacrev(vector_field, wrt=(0, 1))(X, X + 1.0)
    assert Jx.shape == (3, 3) and Jy.shape == (3, 3)
    np.testing.assert_allclose(Jy, numeric_jacobian(vector_field, (X, X + 1.0), 1), atol=1e-7)


def loss_with_aux(w, X, y):
    pred = X @ w
    r = pred - y
    return np.sum(r * r), {"pred": pred, "count": len(y)}


def test_grad_and_value_and_grad_with_aux():
    Xm = np.arange(6.0).reshape(3, 2)
    y = np.ones(3)
    w = np.array([0.1, -0.2])
    g, aux = adgen.grad(loss_with_aux, has_aux=True)(w, Xm, y)
    np.testing.assert_allclose(g, 2 * Xm.T @ (Xm @ w - y))
    np.testing.assert_allclose(aux["pred"], Xm @ w)
    assert aux["count"] == 3
    (value, aux), g2 = adgen.value_and_grad(loss_with_aux, has_aux=True)(w, Xm, y)
    assert value == pytest.approx(np.sum((Xm @ w - y) ** 2))
    np.testing.assert_allclose(g2, g)


def test_has_aux_needs_a_pair():
    def not_a_pair(x):
        return x * x

    with pytest.raises(adgen.UnsupportedSyntaxError, match="has_aux=True"):
        adgen.grad(not_a_pair, has_aux=True)(1.0)
