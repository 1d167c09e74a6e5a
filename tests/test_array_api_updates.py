"""Array-API library code's index updates and clips (issue 34/35): array-api-extra's
``at(x, idx).set(v)`` (``add``...) read as the write into ``x`` it makes on NumPy arrays, and
array-api-compat's ``clip`` of an array whose kind adgen does not follow when transforming,
checked to be floating when the code runs."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import check

import adgen
from adgen.errors import AdgenError

compat = pytest.importorskip("array_api_compat")
xpx = pytest.importorskip("scipy._lib.array_api_extra")
scipy_linalg = pytest.importorskip("scipy.linalg")
from adgen.rules import scipy_linalg as rules  # noqa: E402

# an older SciPy's vendored array-api-extra has no `at`, and its solve_triangular no rule
# (the clip tests need an array whose kind adgen does not follow)
needs_at = pytest.mark.skipif(not hasattr(xpx, "at"), reason="no array_api_extra.at")
needs_rules = pytest.mark.skipif(not rules.SUPPORTED, reason="SciPy older than 1.16")

RNG = np.random.default_rng(4)
L = np.tril(RNG.normal(size=(5, 5))) + 5 * np.eye(5)


def zscore_like(x):
    # scipy.stats.zmap's shape: standardise, then NaN where the spread is zero
    xp = compat.array_namespace(x)
    mn = xp.mean(x, axis=0, keepdims=True)
    std = xp.std(x, axis=0, keepdims=True)
    z = (x - mn) / std
    zero = xp.broadcast_to(std <= xp.abs(1e-15 * mn), z.shape)
    z = xpx.at(z, zero).set(xp.nan)
    return xp.sum(z**3)


def shifted_tail(x):
    y = x * 2.0
    y = xpx.at(y)[1:].add(x[:-1])
    w = xpx.at(y, 0).multiply(3.0)  # (w is y: Python's update writes into y too)
    return np.sum(w**2) + np.sum(y)


def clipped_solution(x):
    xp = compat.array_namespace(x)
    r = scipy_linalg.solve_triangular(L, x, lower=True)  # (its kind not followed)
    return xp.sum(xp.clip(r, -0.1, 0.1) ** 2) + xp.sum(r)


@pytest.mark.parametrize(
    "f, shape",
    [
        pytest.param(zscore_like, (6, 3), marks=needs_at),
        pytest.param(shifted_tail, (5,), marks=needs_at),
        pytest.param(clipped_solution, (5,), marks=needs_rules),
    ],
    ids=["zscore", "at_add_multiply", "clip"],
)
def test_array_api_updates_and_clips_differentiate(f, shape):
    x = RNG.normal(size=shape)
    check(f, x)
    assert np.isclose(adgen.value_and_grad(f)(x)[0], f(x), rtol=1e-13)


@needs_at
def test_at_set_writes_into_an_argument_is_refused():
    def into_argument(x):
        y = xpx.at(x, 0).set(0.0)
        return np.sum(y)

    with pytest.raises(AdgenError, match="argument"):
        adgen.grad(into_argument)(np.ones(3))


@needs_rules
def test_clip_of_integers_is_refused_when_the_code_runs():
    def integer_clip(x):
        xp = compat.array_namespace(x)
        k = scipy_linalg.solve_triangular(L, x, lower=True).astype(np.int64)
        return xp.sum(xp.clip(k, 0, 1) * x)

    with pytest.raises(AdgenError, match="not floating"):
        adgen.grad(integer_clip)(RNG.normal(size=5) * 10)
