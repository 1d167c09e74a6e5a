"""Plain data made outside the function -- a module's options dict, a list of weights, a
tuple of shape parameters, a closure's settings -- read by the function.

adgen reads such data when transforming: an item of a dict or list becomes a constant of
the derivative code, and a tuple or dict spread into a call (``f(x, *SHAPES, **OPTIONS)``)
is read item by item. A list, set or dict can be changed in place between two calls: the
derivative is made again when its contents change (before, the first call's values stayed
in the code: a wrong gradient after ``OPTIONS["scale"] = 3.0``). ``*`` and ``**`` of such
data were refused before ("the number of items is not known")."""

from __future__ import annotations

from typing import Any

import numpy as np

import adgen

OPTIONS = {"scale": 2.0}
WEIGHTS = [0.5, 1.5]
SHAPES = (2.5,)
SETTINGS = {"scale": 2.0}
PAIR = (np.array([1.0, 2.0]), 3.0)
X = np.array([0.3, 0.5])


def scaled(x: Any) -> Any:
    return np.sum(np.sin(x) * OPTIONS["scale"]) + WEIGHTS[1] * np.sum(x * x)


def test_a_dict_or_list_changed_between_calls_makes_the_derivative_again() -> None:
    gradient = adgen.grad(scaled)
    np.testing.assert_allclose(gradient(X), 2.0 * np.cos(X) + 3.0 * X)
    OPTIONS["scale"] = 3.0
    WEIGHTS[1] = -1.0
    try:
        np.testing.assert_allclose(gradient(X), 3.0 * np.cos(X) - 2.0 * X)
        np.testing.assert_allclose(
            adgen.jvp(scaled, (X,), (np.ones(2),))[1], np.sum(3.0 * np.cos(X) - 2.0 * X)
        )
    finally:
        OPTIONS["scale"] = 2.0
        WEIGHTS[1] = 1.5
    np.testing.assert_allclose(gradient(X), 2.0 * np.cos(X) + 3.0 * X)


def shaped(x: Any, a: Any, scale: float = 1.0, shift: float = 0.0) -> Any:
    return np.sum(np.sin(x) * a * scale + shift * x)


def spread_from_the_module(x: Any) -> Any:
    return shaped(x, *SHAPES, **SETTINGS)


def weighted(x: Any, w: Any, c: Any) -> Any:
    return np.sum(x * w) * c


def spread_arrays(x: Any) -> Any:
    return weighted(x, *PAIR)


def closure_over(shapes: tuple[float, ...], settings: dict[str, float]) -> Any:
    def loss(x: Any) -> Any:
        return shaped(x, *shapes, **settings)

    return loss


def test_a_tuple_or_dict_made_outside_spread_into_a_call() -> None:
    np.testing.assert_allclose(adgen.grad(spread_from_the_module)(X), 5.0 * np.cos(X))
    np.testing.assert_allclose(adgen.grad(spread_arrays)(X), 3.0 * PAIR[0])
    loss = closure_over((1.5,), {"shift": 1.0})
    np.testing.assert_allclose(adgen.grad(loss)(X), 1.5 * np.cos(X) + 1.0)
    np.testing.assert_allclose(adgen.hessian(loss)(X), np.diag(-1.5 * np.sin(X)), atol=1e-12)


def test_a_spread_dict_given_a_key_or_a_value_makes_the_derivative_again() -> None:
    gradient = adgen.grad(spread_from_the_module)
    SETTINGS["scale"] = 3.0
    SETTINGS["shift"] = 1.0
    try:
        np.testing.assert_allclose(gradient(X), 7.5 * np.cos(X) + 1.0)
    finally:
        SETTINGS.clear()
        SETTINGS["scale"] = 2.0
    np.testing.assert_allclose(gradient(X), 5.0 * np.cos(X))


TAGS = {"a", "b"}
CONFIG = {"layers": [1.0, 2.0]}


def tagged(x: Any) -> Any:
    return np.sum(x) * (2.0 if "c" in TAGS else 1.0) + np.sum(x) * CONFIG["layers"][1]


def test_a_set_asked_for_a_member_and_a_nested_list_changed_between_calls() -> None:
    gradient = adgen.grad(tagged)
    np.testing.assert_allclose(gradient(X), [3.0, 3.0])
    TAGS.add("c")
    CONFIG["layers"][1] = 7.0
    try:
        np.testing.assert_allclose(gradient(X), [9.0, 9.0])
    finally:
        TAGS.discard("c")
        CONFIG["layers"][1] = 2.0
    np.testing.assert_allclose(gradient(X), [3.0, 3.0])
