"""scipy.linalg's eigh, eigvalsh, pinv and lstsq, called as library code calls them (through
SciPy's batching wrapper), against closed forms: the registry's examples check each rule
against finite differences; these check what users compute with them."""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError

scipy_linalg = pytest.importorskip("scipy.linalg")
from adgen.rules import scipy_linalg as rules  # noqa: E402

pytestmark = pytest.mark.skipif(not rules.SUPPORTED, reason="SciPy older than 1.16")

RNG = np.random.default_rng(5)
A = RNG.normal(size=(6, 3))
B = RNG.normal(size=6)
S = RNG.normal(size=(4, 4))


def trace_by_eigenvalues(s):
    return np.sum(scipy_linalg.eigvalsh(s))


def top_eigenvector_energy(s, w):
    vals, vecs = scipy_linalg.eigh(s)
    return np.sum((vecs[:, -1] @ w) ** 2) + vals[-1]


def regression_coefficients(a, b):
    x = scipy_linalg.lstsq(a, b)[0]
    return np.sum(x)


def residual_sum_of_squares(a, b):
    return scipy_linalg.lstsq(a, b)[1]


def pseudo_inverse_sum(a):
    return np.sum(scipy_linalg.pinv(a))


def test_eigenvalues_sum_to_the_trace_of_the_lower_triangle():
    g = adgen.grad(trace_by_eigenvalues)(S)
    np.testing.assert_allclose(g, np.eye(4), atol=1e-12)
    _, t = adgen.jvp(trace_by_eigenvalues, (S,), (S.T,))
    np.testing.assert_allclose(t, np.trace(S), rtol=1e-12)


def test_eigenvector_of_the_largest_eigenvalue_against_differences():
    s = S + S.T
    w = RNG.normal(size=4)
    g = adgen.grad(top_eigenvector_energy)(s, w)
    d = RNG.normal(size=(4, 4))
    h = 1e-6
    fd = (top_eigenvector_energy(s + h * d, w) - top_eigenvector_energy(s - h * d, w)) / (2 * h)
    np.testing.assert_allclose(np.sum(g * d), fd, rtol=1e-6)


def test_least_squares_coefficients_are_linear_in_the_data():
    g = adgen.grad(regression_coefficients, wrt=1)(A, B)
    np.testing.assert_allclose(g, A @ np.linalg.solve(A.T @ A, np.ones(3)), rtol=1e-10)


def test_residual_sum_of_squares_gradient_is_twice_the_residual():
    x = np.linalg.solve(A.T @ A, A.T @ B)
    e = B - A @ x
    np.testing.assert_allclose(adgen.grad(residual_sum_of_squares, wrt=1)(A, B), 2 * e, rtol=1e-10)
    np.testing.assert_allclose(
        adgen.grad(residual_sum_of_squares)(A, B), -2 * np.outer(e, x), rtol=1e-10, atol=1e-12
    )


def test_pseudo_inverse_of_a_square_matrix_is_its_inverse():
    a = S + 4 * np.eye(4)
    inv = np.linalg.inv(a)
    ones = np.ones((4, 4))
    np.testing.assert_allclose(
        adgen.grad(pseudo_inverse_sum)(a), -(inv.T @ ones @ inv.T), rtol=1e-10
    )


def test_a_stack_of_least_squares_problems_is_refused_when_the_derivative_runs():
    stack = np.stack([A, 2 * A])
    with pytest.raises(AdgenError, match="needs one matrix"):
        adgen.grad(regression_coefficients)(stack, np.stack([B, B])[..., None])


def test_the_generalized_eigenproblem_is_refused_by_name():
    def generalized(s):
        return np.sum(scipy_linalg.eigh(s, np.eye(4))[0])

    with pytest.raises(AdgenError, match="b"):
        adgen.grad(generalized)(S + S.T)
