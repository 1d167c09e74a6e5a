"""In-place updates decided by the path the code takes: an array made earlier in a branch,
then divided in place in each of two inner branches (statsmodels' ``acovf``: ``acov /= n``
or ``acov /= n - 1``), is the function's own on each path -- a binding to a view in a part
of the function the call never reaches (after an early return of a branch decided when
transforming) and a binding in the sibling branch do not make it shared. A binding to a
view on a path that does reach the update still refuses it."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import differences

import adgen


def autocovariance(x, flag, nlag=2, fft=False):
    fft = bool(fft)
    n = len(x)
    if not fft and nlag is not None:
        acov = np.empty(nlag + 1)
        acov[0] = x.dot(x)
        for i in range(nlag):
            acov[i + 1] = x[i + 1 :].dot(x[: -(i + 1)])
        if flag[0] > 0:
            acov /= n - np.arange(nlag + 1)
        elif flag[0] < 0:
            acov /= n
        else:
            acov /= n - 1
        return acov
    acov = np.fft.ifft(np.fft.fft(x))[: nlag + 1]
    acov = acov.real  # (a view: never reached with fft=False)
    return acov


X = np.array([0.3, 1.2, -0.5, 0.7, 0.1])


@pytest.mark.parametrize("flag", [1, -1, 0])
def test_in_place_updates_in_sibling_branches_in_both_modes(flag):
    weights = np.array([1.0, -2.0, 0.5])

    def f(x):
        return np.sum(autocovariance(x, np.array([flag])) * weights)

    want = differences(f, X)
    np.testing.assert_allclose(adgen.grad(f)(X), want, rtol=1e-7, atol=1e-10)
    v = np.array([1.0, -2.0, 0.5, 0.25, 3.0])
    np.testing.assert_allclose(adgen.jvp(f, (X,), (v,))[1], want @ v, rtol=1e-7, atol=1e-10)


def view_on_one_path(x, flag):
    y = x * 2.0
    if flag[0] > 0:
        z = np.exp(y)
    else:
        z = y[1:]  # (a view of y)
    z /= 3.0  # (in place: writes into y on the second path)
    return np.sum(y) + np.sum(z)


def test_a_view_on_a_path_that_reaches_the_update_is_refused_or_right():
    for flag in (1, -1):
        f = lambda x, flag=flag: view_on_one_path(x, np.array([flag]))  # noqa: E731
        try:
            got = adgen.grad(f)(X)
        except adgen.AdgenError:
            continue
        np.testing.assert_allclose(got, differences(f, X), rtol=1e-7, atol=1e-10)


def test_statsmodels_autocovariance_as_installed():
    stattools = pytest.importorskip("statsmodels.tsa.stattools")

    def f(x):
        return np.sum(stattools.acovf(x, nlag=2, fft=False) * np.array([1.0, -2.0, 0.5]))

    want = differences(f, X)
    np.testing.assert_allclose(adgen.grad(f)(X), want, rtol=1e-7, atol=1e-10)
