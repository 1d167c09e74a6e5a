"""A cached derivative checks, at every call, that each outside name it read still means the
same object; reading one member of a class many times is one such check, not one per read
(scikit-learn's and statsmodels' models call their own methods many times), and the check
still notices a member redefined."""

from __future__ import annotations

import numpy as np

import adgen
from adgen.backend import cache
from adgen.frontend.lower.objects import class_dict
from adgen.frontend.parse import _compiled_check, dependencies_unchanged


class Logistic:
    def __init__(self, X, y):
        self.X, self.y = X, y

    def predict(self, w, rows):
        return 1.0 / (1.0 + np.exp(-self.X[rows] @ w))

    def loglike(self, w):
        total = 0.0
        for k in range(10):  # (unrolled: the method read ten times)
            p = self.predict(w, slice(k, k + 3))
            total = total + np.sum(self.y[k : k + 3] * np.log(p))
        return total


RNG = np.random.default_rng(5)
MODEL = Logistic(RNG.normal(size=(13, 3)), (RNG.uniform(size=13) > 0.5) * 1.0)


def objective(w):
    return MODEL.loglike(w)


def _held_lookups():
    per_key = cache._entries.get(objective) or {}
    return [held[2] for held in per_key.values()]


def test_a_member_read_many_times_is_one_dependency_to_check():
    w = np.array([0.1, -0.2, 0.3])
    g = adgen.grad(objective)(w)
    (seen,) = _held_lookups()
    members = [entry for entry in seen if entry[0] == "item" and entry[2] in ("predict", "loglike")]
    assert len({(id(c), n) for _, c, n, _ in members}) == len(members) == 2
    assert all(c is class_dict(Logistic) for _, c, _, _ in members)
    assert dependencies_unchanged(seen)
    # the gradient is right, and a redefined member is noticed (the derivative rebuilt)
    eps = 1e-6
    fd = [(objective(w + eps * e) - objective(w - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    original = Logistic.predict
    try:
        Logistic.predict = lambda self, w, rows: 0.5 + 0.0 * (self.X[rows] @ w)  # type: ignore
        assert not dependencies_unchanged(seen)
    finally:
        Logistic.predict = original  # type: ignore[method-assign]
    assert dependencies_unchanged(seen)


def test_the_same_lookup_listed_twice_is_tested_once_and_still_tested():
    class Box:
        pass

    box = Box()
    box.w = 1.0
    seen = [("attr", box, "w", box.w)] * 3
    check = _compiled_check(seen)
    tested = sorted(k for k in check.__globals__ if k[:1] in "cv" and k[1:].isdigit())
    assert check() and tested == ["c0", "v0"]
    box.w = 2.0
    assert not check()
