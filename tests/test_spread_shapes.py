"""A method that packs its arguments (``x.reshape(*y.shape, -1)``) given a spread whose
length adgen does not know when transforming (the array's kind is not followed through a
solver): the shape is joined when the code runs (``rt.joined_items``), as Python does."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import check

scipy_linalg = pytest.importorskip("scipy.linalg")
from adgen.rules import scipy_linalg as rules  # noqa: E402

# (SciPy 1.16's solve_triangular has a rule; an older one's is read and refused)
needs_rules = pytest.mark.skipif(not rules.SUPPORTED, reason="SciPy older than 1.16")

RNG = np.random.default_rng(8)
L = np.tril(RNG.normal(size=(4, 4))) + 4 * np.eye(4)


def outer_reshaped(x):
    v = scipy_linalg.solve_triangular(L, x, lower=True)
    w = np.outer(v, x).reshape(*v.shape, -1, 2)
    return np.sum(w[:, :, 0] ** 2) + np.sum(np.sin(w))


def spread_alone(x):
    v = scipy_linalg.solve_triangular(L, x, lower=True)
    return np.sum(np.exp(np.outer(v, v).reshape(*v.shape, 4).T * 0.1))


@needs_rules
@pytest.mark.parametrize("f", [outer_reshaped, spread_alone])
def test_a_packed_spread_of_a_shape_known_when_the_code_runs(f):
    check(f, RNG.normal(size=4))


def test_a_helper_returning_a_reshaped_view_of_its_new_array_stays_new():
    # scikit-learn's MLP forward pass: `activation = X`, then per layer `activation =
    # safe_sparse_dot(activation, W)` and `activation += b` in place. safe_sparse_dot has a
    # branch returning `ret.reshape(*a.shape[:-1], k)` (a view of its own new array, the
    # shape joined when the code runs): the in-place update writes no array of the caller's
    sklearn = pytest.importorskip("sklearn")
    if tuple(int(p) for p in sklearn.__version__.split(".")[:2]) < (1, 8):
        pytest.skip("older scikit-learn validates by other paths")
    import warnings

    from sklearn.neural_network import MLPRegressor

    X = RNG.normal(size=(12, 3))
    y = RNG.normal(size=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MLPRegressor(hidden_layer_sizes=(4,), max_iter=50, random_state=0).fit(X, y)

    def f(z):
        return np.sum(model.predict(z))

    check(f, RNG.normal(size=(2, 3)))
