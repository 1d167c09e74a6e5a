"""A loop over a dict, a set or a frozenset the function reads from outside iterates what
Python iterates: a dict's keys (not its values by position), a set's items in the order
the code meets them when it runs. Before, a loop over an outside dict read ``D[0], D[1],
...`` -- a dict with integer keys gave a wrong derivative with no error -- and a loop over
a set failed when the code ran (scikit-learn's ``for param in KERNEL_PARAMS[kernel]``)."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import differences

import adgen

WEIGHTS = {1: 3.0, 0: 5.0}  # (integer keys: D[0], D[1] are values, not keys)
NAMES = {"a", "bb", "cccc"}
FROZEN = {"rbf": frozenset(["gamma", "coef0"])}
SETTINGS = {"gamma": 0.5, "coef0": 2.0}


def keys_in_a_loop(x):
    s = 0.0
    for k in WEIGHTS:
        s = s + x * k + WEIGHTS[k] * np.sin(x)
    return np.sum(s)


def keys_in_a_generator(x):
    return np.sum(sum(np.tanh(x) * k for k in WEIGHTS))


def keys_in_a_list_comprehension(x):
    return np.sum(np.stack([x**2 * k for k in WEIGHTS]))


def keys_enumerated(x):
    return np.sum(sum(x * (i + 1) * k for i, k in enumerate(WEIGHTS)))


def keys_zipped(x):
    s = 0.0
    for k, v in zip(WEIGHTS, [1.0, 2.0]):
        s = s + np.exp(x * 0.1) * k * v
    return np.sum(s)


def items_of_a_set(x):
    s = 0.0
    for name in NAMES:
        s = s + x * len(name)
    return np.sum(s * s)


def items_of_a_frozenset_in_a_dict(x):
    total = 0.0
    for param in FROZEN["rbf"]:
        total = total + SETTINGS[param] * np.cos(x)
    return np.sum(total)


def _squared_error(x):
    return np.sum(x**2)


def _smooth_abs(x):
    return np.sum(np.sqrt(x**2 + 1e-3))


LOSSES = {"mse": _squared_error, "mae": _smooth_abs}
LOSS_WEIGHTS = {"mse": 1.0, "mae": 0.5}


def items_of_a_dict_in_a_loop(x):
    # a weighted sum of named losses, as training scripts write it (refused before as
    # "the method `.items()`")
    total = 0.0
    for name, w in LOSS_WEIGHTS.items():
        total = total + w * LOSSES[name](x)
    return total


def items_keys_and_values_in_generators(x):
    weighted = sum(w * LOSSES[k](x) for k, w in LOSS_WEIGHTS.items())
    return weighted + sum(v * np.sum(x) for v in SETTINGS.values()) + len(list(SETTINGS.keys()))


CASES = [
    items_of_a_dict_in_a_loop,
    items_keys_and_values_in_generators,
    keys_in_a_loop,
    keys_in_a_generator,
    keys_in_a_list_comprehension,
    keys_enumerated,
    keys_zipped,
    items_of_a_set,
    items_of_a_frozenset_in_a_dict,
]
X = np.array([0.3, -1.2, 0.7])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_iterating_an_outside_container_in_both_modes(f):
    want = differences(f, X)
    np.testing.assert_allclose(adgen.grad(f)(X), want, rtol=1e-7, atol=1e-9)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(adgen.jvp(f, (X,), (v,))[1], want @ v, rtol=1e-7, atol=1e-9)
    assert adgen.value_and_grad(f)(X)[0] == pytest.approx(f(X))


@pytest.mark.parametrize("f", [keys_in_a_loop, items_of_a_set], ids=lambda f: f.__name__)
def test_iterating_an_outside_container_at_second_order(f):
    H = adgen.hessian(f)(X)
    g = adgen.grad(f)
    want = np.stack([(g(X + 1e-5 * e) - g(X - 1e-5 * e)) / 2e-5 for e in np.eye(3)])
    np.testing.assert_allclose(H, want, rtol=1e-6, atol=1e-8)


def test_the_items_of_an_outside_dict_are_what_the_derivative_was_made_for():
    g = adgen.grad(items_of_a_dict_in_a_loop)
    before = g(X)
    LOSS_WEIGHTS["mse"] = 3.0
    try:
        np.testing.assert_allclose(g(X), before + 2.0 * 2 * X, rtol=1e-12)
        LOSS_WEIGHTS["extra"] = 1.0
        LOSSES["extra"] = _squared_error
        np.testing.assert_allclose(g(X), before + 3.0 * 2 * X, rtol=1e-12)
    finally:
        LOSS_WEIGHTS["mse"] = 1.0
        del LOSS_WEIGHTS["extra"], LOSSES["extra"]
    np.testing.assert_allclose(g(X), before, rtol=1e-12)
