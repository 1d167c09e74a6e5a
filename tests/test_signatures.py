"""NumPy's own signatures where library code uses more of them (issue 34's corpus).

``np.sum(a, axis, dtype)`` and ``np.mean`` with ``dtype`` (positionally, as NumPy orders
them: SciPy's ``rosen`` sums with ``dtype=x.dtype``), ``np.reshape(..., order=)`` (statsmodels'
MNLogit), ``np.ravel(..., order="K")`` (scikit-learn's t-SNE) and ``np.asarray(..., order=,
copy=)``: each against its exact derivative, in both modes.
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen

A = np.arange(6.0).reshape(2, 3) / 7.0
W = np.cos(np.arange(6.0)).reshape(2, 3)


def sum_in_float64(a):
    return np.sum(np.sum(a, 0, np.float64) * np.arange(3.0)) + np.mean(a, 1, np.float64)[1]


def sum_in_integers(a):
    return np.sum(np.sum(a * 10.0, axis=1, dtype=int)) * 1.0 + np.sum(a)


def reshaped_in_fortran_order(a):
    return np.sum(np.reshape(a, (3, 2), order="F") * W.reshape(3, 2))


def reshaped_in_the_layout(a):
    return np.sum(np.reshape(a.T, (6,), "A") * W.ravel())


def asarray_with_its_options(a):
    return np.sum(np.asarray(a, order="F", copy=True) * W)


@pytest.mark.parametrize(
    "f, grad",
    [
        (sum_in_float64, np.arange(3.0)[None, :] + np.array([[0.0], [1.0 / 3.0]])),
        (sum_in_integers, np.ones((2, 3))),  # the integer sum is piecewise constant
        (reshaped_in_fortran_order, np.reshape(np.ravel(W.reshape(3, 2), "F"), (2, 3), "F")),
        (reshaped_in_the_layout, np.reshape(W.ravel(), (3, 2), "F").T),
        (asarray_with_its_options, W),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_more_of_numpys_signature_has_the_exact_derivative(f, grad):
    np.testing.assert_allclose(adgen.grad(f)(A), grad, rtol=1e-13, atol=1e-15)
    v = np.sin(np.arange(6.0)).reshape(2, 3)
    assert np.isclose(adgen.jvp(f, (A,), (v,))[1], np.sum(grad * v), rtol=1e-13)


def test_a_fourth_positional_argument_of_np_sum_is_refused_not_read_as_keepdims():
    def f(a):
        return np.sum(np.sum(a, 0, None, None))

    with pytest.raises(adgen.AdgenError, match="np.sum"):
        adgen.grad(f)(A)


def ufunc_options(a):
    b = np.exp(a, dtype=np.float64, casting="same_kind") + np.add(a, W, order="C", subok=True)
    return np.sum(b * np.cumsum(a, axis=1, dtype=np.float64)) + np.sum(np.copy(a, order="F"))


def clipped_with_numpy_21_names(a):
    return np.sum(np.clip(a, min=0.2, max=0.5) * W)


@pytest.mark.parametrize("fn", [ufunc_options, clipped_with_numpy_21_names])
def test_options_that_do_not_change_the_derivative(fn):
    h = 1e-6
    expected = np.zeros_like(A)
    for i in np.ndindex(A.shape):
        e = np.zeros_like(A)
        e[i] = h
        expected[i] = (fn(A + e) - fn(A - e)) / (2 * h)
    np.testing.assert_allclose(adgen.grad(fn)(A), expected, rtol=1e-6, atol=1e-9)
    direction = np.cos(np.arange(6.0)).reshape(2, 3)
    np.testing.assert_allclose(
        adgen.jvp(fn, (A,), (direction,))[1], np.sum(expected * direction), rtol=1e-6
    )


def test_a_parameter_the_rule_does_not_take_is_refused_by_name():
    def masked(a):
        return np.sum(np.exp(a, where=a > 0.3))

    def started(a):
        return np.amax(a, initial=0.0)

    with pytest.raises(adgen.AdgenError, match=r"np\.exp with `where=`"):
        adgen.grad(masked)(A)
    with pytest.raises(adgen.AdgenError, match=r"np\.amax with `initial=`"):
        adgen.grad(started)(A)
