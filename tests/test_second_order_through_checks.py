"""Second derivatives of library functions whose validation builds a list and asks
``len(set(lengths))`` (scikit-learn's ``check_consistent_length``): adgen's reverse-mode code
keeps that check as written (``lengths = list([n, m])``, ``set(lengths)``), and reading that
code again must know ``lengths`` is a list -- it was refused, so no Hessian of any
scikit-learn metric could be made."""

from __future__ import annotations

import numpy as np
import pytest

import adgen

sklearn_metrics = pytest.importorskip("sklearn.metrics")

Y = np.array([1.0, 2.0, 3.5, 4.0, 6.0])


def checked_lengths(*arrays):
    lengths = [a.shape[0] for a in arrays if a is not None]
    if len(set(lengths)) > 1:
        raise ValueError("inconsistent numbers of samples")


def squared_error(q):
    checked_lengths(Y, q)
    return np.sum((Y - q) ** 2 * np.exp(0.1 * q))


def test_hessian_through_a_length_check_in_every_second_order_form():
    q = np.linspace(0.5, 2.0, 5)
    H = adgen.hessian(squared_error)(q)
    e = np.exp(0.1 * q)
    d2 = (2.0 - 0.4 * (Y - q) + 0.01 * (Y - q) ** 2) * e  # d^2/dq^2 of (y - q)^2 e^(q/10)
    np.testing.assert_allclose(H, np.diag(d2), rtol=1e-12, atol=1e-12)
    v = np.arange(1.0, 6.0)
    np.testing.assert_allclose(adgen.hvp(squared_error)(q, v), d2 * v, rtol=1e-12)
    np.testing.assert_allclose(adgen.jacfwd(adgen.grad(squared_error))(q), H, rtol=1e-12)


def test_r2_score_hessian_as_installed():
    q = np.linspace(0.5, 2.0, 5)
    H = adgen.hessian(lambda p: sklearn_metrics.r2_score(Y, p))(q)
    total = np.sum((Y - Y.mean()) ** 2)
    np.testing.assert_allclose(H, -2.0 / total * np.eye(5), rtol=1e-12, atol=1e-14)


def test_mean_poisson_deviance_hessian_as_installed():
    q = np.linspace(0.5, 2.0, 5)
    H = adgen.hessian(lambda p: sklearn_metrics.mean_poisson_deviance(Y, p))(q)
    # deviance 2 (y log(y/p) - y + p) / n: second derivative 2 y / (n p^2)
    np.testing.assert_allclose(H, np.diag(2.0 * Y / (5 * q**2)), rtol=1e-10)
