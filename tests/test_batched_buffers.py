"""Batched tangents written into the tangents' own arrays (``out=``, :mod:`adgen.backend.
codeopt.reuse_buffers` on :mod:`adgen.modes.batched`'s code): the Hessians and Jacobians of
programs with large temporaries equal the ones made a column at a time by the one-tangent
code, the arguments are left as they were, and the code does write in place."""

from __future__ import annotations

import numpy as np
import pytest

import adgen

RNG = np.random.default_rng(3)
N, P = 400, 30
X = RNG.normal(size=(N, P)) / np.sqrt(P)
Y_COUNTS = RNG.poisson(1.0, N).astype(float)
Y_SIGNS = np.sign(RNG.normal(size=N))


def poisson_loglik(beta, X, y):
    eta = X @ beta
    return np.sum(y * eta - np.exp(eta))


def logistic_objective(w, X, y):
    margins = y * (X @ w)
    return np.sum(np.log1p(np.exp(-margins))) + 0.5 * 1e-2 * np.sum(w * w)


def tanh_layer_loss(w, X, y):
    hidden = np.tanh(X @ w)
    resid = hidden * 2.0 - y
    return np.sum(resid * resid) + np.sum(np.sin(hidden) * hidden)  # (hidden read twice)


def transposed_features(w, X, y):
    scores = (X.T @ np.exp(X @ w * 0.1)) * w  # (a product with a transpose, then elementwise)
    return np.sum(scores) - np.sum(np.cosh(X @ w - y))


@pytest.mark.parametrize(
    "f, y",
    [
        (poisson_loglik, Y_COUNTS),
        (logistic_objective, Y_SIGNS),
        (tanh_layer_loss, Y_SIGNS),
        (transposed_features, Y_SIGNS * 0.1),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_hessian_in_one_pass_equals_hessian_vector_products_column_by_column(f, y):
    w = RNG.normal(size=P) * 0.1
    X0, y0, w0 = X.copy(), y.copy(), w.copy()
    H = adgen.hessian(f)(w, X, y)
    columns = np.stack([adgen.hvp(f)(w, X, y, e) for e in np.eye(P)], axis=1)
    np.testing.assert_allclose(H, columns, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(X, X0)  # (nothing written into the arguments)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(w, w0)
    # again: the same numbers (no buffer of one call kept into the next)
    np.testing.assert_array_equal(adgen.hessian(f)(w, X, y), H)


def test_poisson_hessian_equals_the_hand_written_one_and_its_code_writes_in_place():
    beta = RNG.normal(size=P) * 0.1
    H = adgen.hessian(poisson_loglik)(beta, X, Y_COUNTS)
    np.testing.assert_allclose(H, -(X.T * np.exp(X @ beta)) @ X, rtol=1e-12, atol=1e-12)
    grad = adgen.grad(poisson_loglik)
    code = adgen.source(grad, "forward_batched", args=(beta, X, Y_COUNTS))
    assert "out=" in code


def test_small_batches_are_left_to_numpy():
    """A batch of a few small tangents costs less made anew than written with ``out=``."""
    beta = RNG.normal(size=3) * 0.1
    grad = adgen.grad(poisson_loglik)
    code = adgen.source(grad, "forward_batched", args=(beta, X[:20, :3], Y_COUNTS[:20]))
    assert "out=" not in code


def test_jacobian_of_a_map_on_many_numbers_equals_the_one_made_column_by_column():
    def cumulative_map(x):
        return np.cumsum(np.sin(x) * x) + x**2 / (1.0 + x**2)

    x = RNG.normal(size=300)
    J = adgen.jacfwd(cumulative_map)(x)
    np.testing.assert_allclose(J, adgen.jacfwd(cumulative_map, chunk_size=1)(x), rtol=1e-13)
    d = np.sin(x) + x * np.cos(x)
    by_hand = np.tril(np.broadcast_to(d, (300, 300))) + np.diag(2.0 * x / (1.0 + x**2) ** 2)
    np.testing.assert_allclose(J, by_hand, rtol=1e-12, atol=1e-12)
