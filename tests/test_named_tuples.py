"""Named tuples made in the function (``typing.NamedTuple``, ``collections.namedtuple``):
a tuple whose items are read by field name too (``res.statistic``), by index, unpacked or
returned by a helper -- statsmodels' ``QStatResult(ret, chi2)``, SciPy's result tuples.
A class that makes its instances in a ``__new__`` of its own is not taken for one."""

from __future__ import annotations

import collections
from typing import NamedTuple

import numpy as np
import pytest
from derivative_checks import differences

import adgen


class Moments(NamedTuple):
    mean: object
    spread: object
    label: str = "moments"


Pair = collections.namedtuple("Pair", ["first", "second"])


def _moments(x):
    m = np.mean(x)
    return Moments(m, np.mean((x - m) ** 2))


def by_field(x):
    res = _moments(np.sin(x))
    return res.mean * res.spread + (res.label == "moments")


def by_index_and_unpacking(x):
    mean, spread, _ = _moments(x**2)
    res = _moments(x)
    return mean + spread * res[1] + res[0]


def made_with_keywords(x):
    p = Pair(second=np.sum(x**3), first=np.prod(x))
    return p.first - 2.0 * p.second


def in_a_branch_not_taken(x, report=False):
    out = np.sum(x**2)
    if report:
        out = out + _moments(x).spread
    return out


CASES = [by_field, by_index_and_unpacking, made_with_keywords, in_a_branch_not_taken]
X = np.array([0.3, -1.2, 0.7, 2.0])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_named_tuples_in_both_modes(f):
    want = differences(f, X)
    np.testing.assert_allclose(adgen.grad(f)(X), want, rtol=1e-7, atol=1e-9)
    v = np.array([1.0, -2.0, 0.5, 0.25])
    np.testing.assert_allclose(adgen.jvp(f, (X,), (v,))[1], want @ v, rtol=1e-7, atol=1e-9)


def test_named_tuple_at_second_order():
    H = adgen.hessian(by_field)(X)
    g = adgen.grad(by_field)
    want = np.stack([(g(X + 1e-5 * e) - g(X - 1e-5 * e)) / 2e-5 for e in np.eye(4)])
    np.testing.assert_allclose(H, want, rtol=1e-6, atol=1e-8)


class Scaled(Pair):
    def __new__(cls, first, second):
        return super().__new__(cls, first * 10.0, second)


def own_new(x):
    return Scaled(np.sum(x), 1.0).first


def test_a_named_tuple_with_its_own_new_is_not_read_as_one():
    try:
        got = adgen.grad(own_new)(X)
    except adgen.AdgenError:
        return
    np.testing.assert_allclose(got, np.full(4, 10.0), rtol=1e-12)
