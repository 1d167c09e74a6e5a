"""Forms met in library code as installed and in users' programs (issue 34): each with exact
answers in both modes (a closed form, or central differences where noted)."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import check

import adgen


def rows_and_columns(z):
    w = np.r_[z, 1 - np.sum(z)]  # a simplex point from its free coordinates
    v = np.r_[0.5, z[:1], [2.0, 3.0]]
    m = np.c_[z, z**2, np.ones(2)]
    return np.sum(np.log(w) * np.arange(1.0, 4.0)) + np.sum(v**2) + np.sum(m[:, 1] * m[:, 0])


def test_np_r_and_np_c_of_differentiated_items_join_them():
    z = np.array([0.2, 0.3])
    a, b = z
    want = np.array(
        [1 / a - 3 / (1 - a - b) + 2 * a + 3 * a**2, 2 / b - 3 / (1 - a - b) + 3 * b**2]
    )
    check(rows_and_columns, z, want)
    assert rows_and_columns(z) == adgen.value_and_grad(rows_and_columns)(z)[0]


def ranges_stay_constants(z):
    return np.sum(np.r_[0:3] * z) + np.sum(np.c_[np.r_[1.0, 2.0, 3.0], z][:, 1])


def test_np_r_of_a_slice_is_the_range_it_makes():
    check(ranges_stay_constants, np.array([0.5, 1.5, 2.5]), np.array([1.0, 2.0, 3.0]))


def checked_methods(x):
    if not np.isfinite(x).all() or (x < -10).any():
        raise ValueError("x must be finite and above -10")
    return np.sum(x.take([0, 2]) * x.ptp()) + x.round(1).sum() * 0.0


def test_array_methods_all_any_take_ptp_round_are_numpys_functions():
    x = np.array([1.0, 3.0, 2.0])
    # d/dx (x0 + x2) (max - min) = ptp [1, 0, 1] + (x0 + x2) [-1, 1, 0]
    check(checked_methods, x, np.array([-1.0, 3.0, 2.0]))
    with pytest.raises(ValueError, match="finite"):
        adgen.grad(checked_methods)(np.array([1.0, np.nan, 2.0]))


def test_scipy_spatial_distances_read_as_installed():
    distance = pytest.importorskip("scipy.spatial.distance")
    v = np.array([0.3, -1.0, 2.0])
    x = np.array([1.0, 0.5, -0.5])
    check(lambda u: distance.euclidean(u, v), x, (x - v) / np.linalg.norm(x - v))
    check(lambda u: distance.minkowski(u, v, 1), x, np.sign(x - v))
    check(lambda u: distance.sqeuclidean(u, v), x, 2 * (x - v))
