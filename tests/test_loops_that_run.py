"""A loop known to run at least once (``range`` of numbers known when transforming) leaves
its last pass's values: after ``activation = X; for i in range(n_layers - 1): activation =
activation @ W[i] + b[i]``, ``activation`` is a new array, not the caller's ``X``, so an
in-place output activation (scikit-learn's ``logistic_sigmoid(X, out=X)``) writes into an
array only the function sees. And the items of a list of layers of several widths have
several shapes: ``Ws[i]`` read in a loop is not taken to have ``Ws[0]``'s."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import differences
from scipy.special import expit

import adgen

RNG = np.random.default_rng(11)
LAYERS = [RNG.normal(size=(3, 5)) * 0.5, RNG.normal(size=(5, 4)) * 0.5, RNG.normal(size=(4, 2))]
BIASES = [RNG.normal(size=5) * 0.1, RNG.normal(size=4) * 0.1, RNG.normal(size=2) * 0.1]
X = RNG.normal(size=(6, 3))


def _inplace_logistic(Z):
    expit(Z, out=Z)


def _inplace_tanh(Z):
    np.tanh(Z, out=Z)


def forward(X):
    activation = X
    for i in range(len(LAYERS)):
        activation = activation @ LAYERS[i]
        activation += BIASES[i]
        if i != len(LAYERS) - 1:
            _inplace_tanh(activation)
    _inplace_logistic(activation)
    return activation


def loss(X):
    return np.sum(forward(X)[:, 1] ** 2)


def widths_only(x):
    a = x
    for i in range(3):
        a = np.sin(a @ LAYERS[i])
    return np.sum(a**2)


@pytest.mark.parametrize("f", [loss, widths_only], ids=lambda f: f.__name__)
def test_layers_of_several_widths_in_both_modes(f):
    x0 = X.copy()
    want = differences(f, X)
    np.testing.assert_allclose(adgen.grad(f)(X), want, rtol=1e-6, atol=1e-9)
    v = RNG.normal(size=X.shape)
    np.testing.assert_allclose(adgen.jvp(f, (X,), (v,))[1], np.sum(want * v), rtol=1e-6)
    np.testing.assert_array_equal(X, x0)  # (the in-place activations wrote into no argument)


def test_layers_of_several_widths_at_second_order():
    x = X[:2]
    H = adgen.hessian(widths_only)(x)
    g = adgen.grad(widths_only)
    want = np.stack(
        [(g(x + 1e-5 * e) - g(x - 1e-5 * e)) / 2e-5 for e in np.eye(x.size).reshape(-1, *x.shape)]
    )
    np.testing.assert_allclose(
        H.reshape(x.size, x.size), want.reshape(x.size, x.size), rtol=1e-5, atol=1e-7
    )


def skipped_loop(X, n):
    activation = X
    for i in range(n):
        activation = activation @ LAYERS[0][:, :3]
    _inplace_logistic(activation)  # (with n = 0: the caller's X)
    return np.sum(activation)


def test_a_loop_that_may_not_run_leaves_the_argument_refused():
    with pytest.raises(adgen.AdgenError, match="in-place"):
        adgen.grad(skipped_loop)(X, 0)


def test_mlp_classifier_probabilities_as_installed():
    neural = pytest.importorskip("sklearn.neural_network")
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    Xt = RNG.normal(size=(40, 3))
    yt = (Xt[:, 0] * Xt[:, 1] > 0).astype(int)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = neural.MLPClassifier((5, 4), activation="tanh", max_iter=200, random_state=0)
        mlp.fit(Xt, yt)

    def f(x):
        return np.sum(mlp.predict_proba(x)[:, 1] * np.arange(1.0, 7.0))

    del y
    want = differences(f, X)
    np.testing.assert_allclose(adgen.grad(f)(X), want, rtol=1e-6, atol=1e-9)
    v = RNG.normal(size=X.shape)
    np.testing.assert_allclose(adgen.jvp(f, (X,), (v,))[1], np.sum(want * v), rtol=1e-6)


GROUPS = [[[0, 1, 2], [3]], [[4], [0, 1]]]  # (items ragged: np.shape of one fails)


def sums_over_ragged_groups(x):
    total = 0.0
    for i in range(len(GROUPS)):
        first, second = GROUPS[i]
        total = total + np.sum(np.sin(x[first])) * (i + 1) + np.sum(x[second] ** 2)
    return total


def test_items_of_a_ragged_list_read_in_a_loop():
    """statsmodels' PHReg reads strata of several sizes by index in a loop: the list has
    no one shape, and that is no error of adgen's."""
    x = np.array([0.3, -1.2, 0.7, 2.0, 0.1])
    want = np.cos(x) * np.array([1.0, 1.0, 1.0, 0.0, 2.0])
    want += 2.0 * x * np.array([1.0, 1.0, 0.0, 1.0, 0.0])
    np.testing.assert_allclose(adgen.grad(sums_over_ragged_groups)(x), want, rtol=1e-12)
