"""``tuple(...)`` of a comprehension whose length only the arrays' shapes decide, passed where
NumPy takes arrays (issue 34, part 7).

``np.stack(tuple(x[i] - m for i in range(n)))`` with ``n = x.shape[0]``: NumPy reads a tuple
and a list of arrays alike there, so adgen reads the list comprehension (its length need
not be known when transforming). Where a tuple is meant (``axis=tuple(...)``) it stays one.
"""

from __future__ import annotations

import numpy as np

import adgen


def centred(x):
    n = x.shape[0]
    m = np.mean(x, axis=0)
    rows = np.stack(tuple(x[i] - m for i in range(n)))
    sums = np.array(tuple(np.sum(x[i] ** 2) for i in range(n)))
    return np.sum(rows**2) + np.sum(sums) + np.sum(np.sum(x, axis=tuple(k for k in range(1))))


def test_a_tuple_of_a_comprehension_of_unknown_length_is_read_as_a_list():
    x = np.arange(6.0).reshape(3, 2) / 5.0
    expected = 2.0 * (x - x.mean(axis=0)) + 2.0 * x + 1.0
    np.testing.assert_allclose(adgen.grad(centred)(x), expected, rtol=1e-13)
    v = np.cos(np.arange(6.0)).reshape(3, 2)
    assert np.isclose(adgen.jvp(centred, (x,), (v,))[1], np.sum(expected * v), rtol=1e-13)
    # the Hessian: 2 (I - 1/n) on each column, plus 2 I
    h = adgen.hessian(centred)(x).reshape(6, 6)
    centring = np.kron(np.eye(3) - 1.0 / 3.0, np.eye(2))
    np.testing.assert_allclose(h, 2.0 * centring + 2.0 * np.eye(6), atol=1e-12)
