"""Batched tangents of elementwise chains as one coefficient times a root batch
(:meth:`adgen.modes.batched._Batched.linear_coefficient`): the Jacobians and Hessians equal
the ones made a column at a time, the coefficients are primal-sized, and templates that are
not linear entry by entry in their tangent (zero-safe products, complex values) keep the
batched tangents as they were."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import adgen

RNG = np.random.default_rng(11)
N, P = 60, 5
X = RNG.normal(size=(N, P)) / np.sqrt(P)
Y01 = (RNG.random(N) < 0.5).astype(float)
COUNTS = RNG.poisson(1.0, N).astype(float)


def logit_loglike(params, X, y):
    # statsmodels' Logit, as written there: q * XB through a logistic cdf
    q = 2 * y - 1
    linpred = np.dot(X, params) + 0.0
    return np.sum(np.log(1 / (1 + np.exp(-(q * linpred)))))


def clipped_poisson(params, X, y):
    xb = X @ params
    return np.sum(-np.exp(np.clip(xb, None, 700.0)) + y * xb)


def two_roots(params, X, y):
    a = X @ params
    b = X[:, ::-1] @ params  # (another batch of tangents: not one coefficient of the first)
    return np.sum(np.tanh(a) * b + np.sin(a - b) * y)


def power_with_zero_base(x, a):
    return a**x + np.cos(x) * x


def complex_inside(x, X, y):
    z = np.exp(1j * (X @ x))
    return np.sum(np.real(z * z) * y)


def _columns(f, args, wrt=0):
    return adgen.jacfwd(f, wrt, chunk_size=1)(*args)


@pytest.mark.parametrize(
    "f, y",
    [(logit_loglike, Y01), (clipped_poisson, COUNTS), (two_roots, COUNTS)],
    ids=["logit", "clipped_poisson", "two_roots"],
)
def test_hessians_of_elementwise_chains_equal_column_by_column_ones(f, y):
    beta = 0.3 * RNG.normal(size=P)
    batched = adgen.hessian(f)(beta, X, y)
    columns = adgen.hessian(f, chunk_size=1)(beta, X, y)
    np.testing.assert_allclose(batched, columns, rtol=1e-12, atol=1e-12)


def test_logit_hessian_equals_the_one_written_by_hand():
    beta = 0.3 * RNG.normal(size=P)
    p = 1 / (1 + np.exp(-(X @ beta)))
    by_hand = -(X.T * (p * (1 - p))) @ X
    np.testing.assert_allclose(adgen.hessian(logit_loglike)(beta, X, Y01), by_hand, rtol=1e-10)


def _batch_sized_statements(f, args):
    """The statements of the batched Hessian code that bind a tangent (``*_dot``) and those
    that bind a coefficient (``*_coef*``)."""
    grad_fn = adgen.grad(f).adgen_function()
    source = adgen.source(grad_fn, "forward_batched", args=args)
    tree = ast.parse(source)
    targets = [
        t.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    ]
    return [t for t in targets if t.endswith("_dot")], [t for t in targets if "_coef" in t]


def test_a_chain_of_elementwise_steps_meets_the_batch_once():
    # the logistic chain of the gradient (about ten elementwise steps) is computed on
    # primal-sized coefficients; the batch is touched by X's product, one product with the
    # coefficient, and the product with X that sums it back
    beta = 0.3 * RNG.normal(size=P)
    dots, coefs = _batch_sized_statements(logit_loglike, (beta, X, Y01))
    assert len(coefs) >= 5
    assert len(dots) <= 3, dots


def test_two_batches_of_tangents_are_not_one_coefficient_of_either():
    beta = 0.3 * RNG.normal(size=P)
    dots, _ = _batch_sized_statements(two_roots, (beta, X, COUNTS))
    assert len(dots) >= 5  # (the products of the two batches stay batches)


def test_a_zero_safe_template_keeps_its_batched_tangent():
    # d(a**x)/dx = a**x log(a) overflows at a = 1e200, x = 2 only in the direction of that
    # entry: the zero-safe template gives 0 in the other directions, where a coefficient
    # (inf) times the batch's zeros would give nan
    a = np.array([1e200, 2.0, 3.0, 0.5])
    x = np.array([2.0, 0.5, 2.0, 1.0])
    with np.errstate(over="ignore", invalid="ignore"):
        batched = adgen.jacfwd(power_with_zero_base)(x, a)
        columns = _columns(power_with_zero_base, (x, a))
    np.testing.assert_array_equal(batched, columns)
    assert np.isinf(batched[0, 0]) and (batched[0, 1:] == 0).all()
    assert (batched[1:, 0] == 0).all()


def test_complex_values_inside_keep_their_batched_tangents():
    beta = 0.3 * RNG.normal(size=P)
    batched = adgen.hessian(complex_inside)(beta, X, COUNTS)
    columns = adgen.hessian(complex_inside, chunk_size=1)(beta, X, COUNTS)
    np.testing.assert_allclose(batched, columns, rtol=1e-12, atol=1e-12)


def test_jacfwd_of_an_elementwise_map_after_a_cumulative_sum():
    def f(x):
        return np.cumsum(np.sin(x) * x) + x**2 / (1.0 + x**2)

    x = RNG.normal(size=30)
    d = np.sin(x) + x * np.cos(x)
    by_hand = np.tril(np.broadcast_to(d, (30, 30))) + np.diag(2.0 * x / (1.0 + x**2) ** 2)
    np.testing.assert_allclose(adgen.jacfwd(f)(x), by_hand, rtol=1e-12, atol=1e-14)
