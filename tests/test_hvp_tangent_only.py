"""``hvp`` runs forward-mode code of the gradient that returns the gradient's tangent only
(mode ``forward_tangent``): the work only the gradient needs is not done, and the product
is returned as the gradient would be -- like the argument."""

from __future__ import annotations

import numpy as np
import pytest

import adgen

RNG = np.random.default_rng(7)
X = RNG.normal(size=(64, 6))
Y = RNG.normal(size=(64, 2))


def mlp_loss(w, X, Y):
    W1 = np.reshape(w[:18], (6, 3))
    W2 = np.reshape(w[18:24], (3, 2))
    H = np.tanh(X @ W1)
    return np.sum((H @ W2 - Y) ** 2) / X.shape[0]


def poisson_loglik(beta, X, y):
    eta = X @ beta
    return np.sum(y * eta - np.exp(eta)) - np.sum(np.log(np.arange(1, 5)))


def scalar_loss(t):
    return np.sin(t) ** 3 + t * np.exp(-t)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mlp_hvp_equals_the_hessian_times_v(dtype):
    w = (0.3 * RNG.normal(size=24)).astype(dtype)
    v = RNG.normal(size=24).astype(dtype)
    got = adgen.hvp(mlp_loss)(w, X, Y, v)
    H = adgen.hessian(mlp_loss)(w.astype(np.float64), X, Y)
    assert got.dtype == dtype and got.shape == w.shape
    tol = 1e-12 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(got, H @ v.astype(np.float64), rtol=tol, atol=tol)


def test_poisson_hvp_equals_the_hand_written_hessian_times_v():
    beta, v = 0.1 * RNG.normal(size=6), RNG.normal(size=6)
    y = RNG.poisson(1.0, 64).astype(float)
    got = adgen.hvp(poisson_loglik)(beta, X, y, v)
    np.testing.assert_allclose(got, -(X.T * np.exp(X @ beta)) @ X @ v, rtol=1e-12)


def test_hvp_of_a_function_of_a_float_is_a_float():
    t = 0.7
    got = adgen.hvp(scalar_loss)(t, 2.0)
    h = 1e-4
    second = (scalar_loss(t + h) - 2 * scalar_loss(t) + scalar_loss(t - h)) / h**2
    assert type(got) is float
    assert abs(got - 2.0 * second) < 1e-5


def test_the_code_hvp_runs_returns_no_gradient_and_computes_none_of_its_work():
    w = 0.3 * RNG.normal(size=24)
    grad = adgen.grad(mlp_loss)
    tangent_only = adgen.source(grad, "forward_tangent", args=(w, X, Y))
    both = adgen.source(grad, "forward", args=(w, X, Y))
    assert tangent_only.rstrip().endswith("return (None, w_bar_dot)")

    # the gradient's own statements (w_bar and what only it reads) are gone
    def statements(code):
        return [row.strip() for row in code.splitlines() if not row.strip().startswith("#")]

    assert any(s.startswith("w_bar = ") for s in statements(both))
    assert not any(s.startswith("w_bar = ") for s in statements(tangent_only))
    assert len(statements(tangent_only)) < len(statements(both)) - 5


def test_hvp_leaves_its_arguments_as_they_were():
    w, v = 0.3 * RNG.normal(size=24), RNG.normal(size=24)
    w0, v0 = w.copy(), v.copy()
    out = adgen.hvp(mlp_loss)(w, X, Y, v)
    out[:] = 0.0  # (the result is the caller's: writing into it changes no argument)
    np.testing.assert_array_equal(w, w0)
    np.testing.assert_array_equal(v, v0)
