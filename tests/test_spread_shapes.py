"""A method that packs its arguments (``x.reshape(*y.shape, -1)``) given a spread whose
length adgen does not know when transforming (the array's kind is not followed through a
solver): the shape is joined when the code runs (``rt.joined_items``), as Python does."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import check

scipy_linalg = pytest.importorskip("scipy.linalg")

RNG = np.random.default_rng(8)
L = np.tril(RNG.normal(size=(4, 4))) + 4 * np.eye(4)


def outer_reshaped(x):
    v = scipy_linalg.solve_triangular(L, x, lower=True)
    w = np.outer(v, x).reshape(*v.shape, -1, 2)
    return np.sum(w[:, :, 0] ** 2) + np.sum(np.sin(w))


def spread_alone(x):
    v = scipy_linalg.solve_triangular(L, x, lower=True)
    return np.sum(np.exp(np.outer(v, v).reshape(*v.shape, 4).T * 0.1))


@pytest.mark.parametrize("f", [outer_reshaped, spread_alone])
def test_a_packed_spread_of_a_shape_known_when_the_code_runs(f):
    check(f, RNG.normal(size=4))
