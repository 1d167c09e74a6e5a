"""``return`` inside a loop (issue 34: library code iterates until converged, returns from
inside the loop, and raises after it): the return leaves the loop as a ``break`` and returns
after it, on the values the loop had then -- in both modes, at second order, against finite
differences and against Python running the function."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from derivative_checks import check

import adgen
from adgen.errors import AdgenError


def fixed_point_scale(x):
    # a scale estimate iterated until it settles (statsmodels' Huber scale, in small)
    s = np.std(x)
    for _ in range(200):
        new = np.sqrt(np.mean(np.minimum(x * x, (1.5 * s) ** 2)) / 0.8)
        if abs(new - s) < 1e-13 * new:
            return new
        s = new
    raise ValueError("did not converge")


def first_crossing(x, level):
    # the first partial sum above a level, and where it is
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i] ** 2
        if total > level:
            return total * (i + 1)
    return -total


def nested_search(a):
    # a return from an inner loop leaves the outer one too
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > 1.0:
                return a[i, j] * np.sum(a[i])
    return np.sum(a)


def while_halving(x):
    y = x * 1.0
    k = 0
    while k < 50:
        y = 0.5 * y + np.sin(y)
        k += 1
        if np.max(np.abs(y)) < 0.5:
            return np.sum(y) * k
    return np.sum(y)


def two_exits(x):
    for i in range(5):
        x = np.tanh(x) + 0.1
        if np.sum(x) > 2.0:
            return np.sum(x * x)
        if np.min(x) < -0.5:
            return np.sum(np.exp(x))
    return np.sum(x)


RNG = np.random.default_rng(12)


@pytest.mark.parametrize(
    "f, args",
    [
        (fixed_point_scale, (RNG.normal(size=12),)),
        (partial(first_crossing, level=1.2), (np.array([0.3, -0.5, 0.8, 1.1, 0.2]),)),
        (partial(first_crossing, level=5.0), (np.array([0.1, 0.2, -0.1]),)),  # never inside
        (nested_search, (np.array([[0.2, 0.5, 0.3], [0.4, 1.6, 0.9], [2.0, 0.1, 0.1]]),)),
        (nested_search, (np.array([[0.2, 0.5], [0.4, 0.6]]),)),
        (while_halving, (np.array([0.9, -0.4, 0.7]),)),
        (two_exits, (np.array([0.5, 0.6, 0.7]),)),
        (two_exits, (np.array([-2.0, -1.5, 0.1]),)),
    ],
    ids=[
        "fixed_point",
        "crossing",
        "no_crossing",
        "nested_found",
        "nested_not_found",
        "while",
        "first_exit",
        "second_exit",
    ],
)
def test_a_return_inside_a_loop_differentiates_as_written(f, args):
    check(f, *args)
    assert np.isclose(adgen.value_and_grad(f)(*args)[0], f(*args), rtol=1e-14)


def test_the_second_derivative_of_a_converging_iteration():
    x = RNG.normal(size=6)
    h = adgen.hessian(first_crossing)(x, 1.5)
    eps = 1e-6
    fd = np.stack(
        [
            (
                adgen.grad(first_crossing)(x + eps * e, 1.5)
                - adgen.grad(first_crossing)(x - eps * e, 1.5)
            )
            / (2 * eps)
            for e in np.eye(6)
        ]
    )
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-7)


def test_the_raise_after_the_loop_is_the_programs_own():
    def never(x):
        for _ in range(3):
            x = x * 2.0
            if np.sum(x) < -1e9:
                return np.sum(x)
        raise ValueError("did not converge")

    with pytest.raises(ValueError, match="did not converge"):
        adgen.grad(never)(np.ones(2))


def test_a_return_inside_a_loop_with_an_else_is_refused():
    def with_else(x):
        for i in range(3):
            if np.sum(x) > i:
                return np.sum(x)
        else:
            x = x * 2.0
        return np.sum(x)

    with pytest.raises(AdgenError, match="`else` clauses on loops"):
        adgen.grad(with_else)(np.ones(2))
