"""Random draws inside a differentiated function are calls with an effect: each gives other
numbers and moves its generator's state. adgen computes each one where and as often as
Python does -- never when transforming, never merged with an identical-looking draw, never
moved out of a loop, never dropped when its result is unused -- so a seeded program gets
Python's numbers, and its derivative is that of the program Python runs.

Each test seeds NumPy's global generator (or makes a generator) the same way for Python and
for adgen, and checks values exactly and gradients against central differences of the same
draws. Before ``Primitive.draws``, the middle end's passes took ``np.random.normal``,
``uniform``, ``choice``, ``permutation`` and a generator's methods for pure functions.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from derivative_checks import differences

import adgen

SEED = 5


def _seeded(fn, *args):
    np.random.seed(SEED)
    return fn(*args)


def _differences(fn, x, *rest):
    """Central differences of ``fn`` at ``x``, each call from the same seed."""
    return differences(lambda v: _seeded(fn, v, *rest), x)


def two_draws(x):
    a = np.random.normal(0.0, 1.0, 3)
    b = np.random.normal(0.0, 1.0, 3)
    return np.sum(x * (a - b))


def shuffles(x):
    a = np.random.permutation(3)
    b = np.random.permutation(3)
    c = np.random.choice(3, 3)
    d = np.random.choice(3, 3)
    return np.sum(x[a] * x[b] + x[c] * x[d])


def draw_in_loop(x, n):
    for _ in range(n):
        r = np.random.uniform(0.5, 1.5, 3)
        x = np.sin(x * r) + x
    return np.sum(x * x)


def scalar_draw_in_loop(x, n):
    for _ in range(n):
        y = x * np.random.normal()
        x = np.sin(y) * 1.5
    return np.sum(x)


def unused_draw(x):
    np.random.normal()
    return np.sum(x * np.random.normal(0.0, 1.0, 3))


def generator_draws(x, rng):
    a = rng.normal(0.0, 1.0, 3)
    b = rng.normal(0.0, 1.0, 3)
    return np.sum(x * x * (a - b))


X = np.array([0.3, -0.2, 0.5])


@pytest.mark.parametrize(
    "fn, rest",
    [
        (two_draws, ()),
        (shuffles, ()),
        (draw_in_loop, (4,)),
        (scalar_draw_in_loop, (3,)),
        (unused_draw, ()),
    ],  # fmt: skip
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_draws_are_python_s_in_both_modes(fn, rest) -> None:
    expected = _seeded(fn, X, *rest)
    value, grad = _seeded(adgen.value_and_grad(fn), X, *rest)
    assert value == expected
    np.testing.assert_allclose(grad, _differences(fn, X, *rest), rtol=1e-6, atol=1e-8)
    tangent = np.array([1.0, -2.0, 0.5])
    value_f, derivative = _seeded(
        lambda: adgen.jvp(fn, (X, *rest), (tangent,) + (None,) * len(rest))
    )
    assert value_f == expected
    np.testing.assert_allclose(derivative, grad @ tangent, rtol=1e-6, atol=1e-8)


def test_a_generator_s_draws_are_not_merged() -> None:
    expected = generator_draws(X, np.random.default_rng(1))
    value, grad = adgen.value_and_grad(generator_draws)(X, np.random.default_rng(1))
    assert value == expected != 0.0
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.0, 1.0, 3), rng.normal(0.0, 1.0, 3)
    np.testing.assert_allclose(grad, 2 * X * (a - b), rtol=1e-12)


def drawn_once(x):
    return np.sum(x * np.random.normal(0.0, 1.0, 3) + np.random.normal())


def test_transforming_draws_nothing() -> None:
    np.random.seed(SEED)
    state = np.random.get_state()[1].copy(), np.random.get_state()[2]
    adgen.source(drawn_once, args=(X,))
    assert np.array_equal(np.random.get_state()[1], state[0])
    assert np.random.get_state()[2] == state[1]


def test_hessian_through_draws_matches_differences_of_the_gradient() -> None:
    hessian = _seeded(adgen.hessian(draw_in_loop), X, 4)
    grad = adgen.grad(draw_in_loop)
    eps = 1e-5
    rows = [
        (_seeded(grad, X + eps * e, 4) - _seeded(grad, X - eps * e, 4)) / (2 * eps)
        for e in np.eye(3)
    ]
    np.testing.assert_allclose(hessian, np.array(rows), rtol=1e-5, atol=1e-7)


def test_numba_backend_leaves_numpy_s_draws_to_numpy() -> None:
    pytest.importorskip("numba")
    expected = _seeded(adgen.grad(scalar_draw_in_loop), X, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", adgen.BackendWarning)
        got = _seeded(adgen.grad(scalar_draw_in_loop, backend="numba"), X, 3)
    np.testing.assert_array_equal(got, expected)
    assert any("random draw of `np.random`" in str(w.message) for w in caught)


def generator_in_loop(x, rng, n):
    for _ in range(n):
        y = x * rng.normal()  # (y first bound in the loop: a placeholder Numba types)
        x = np.sin(y) * 1.5
    return x


def test_numba_s_first_call_moves_no_generator_it_is_given() -> None:
    """The Numba backend types placeholders from one run of the NumPy code; that run works
    on a copy of the arguments, so the caller's generator is where Python leaves it."""
    pytest.importorskip("numba")
    expected = adgen.grad(generator_in_loop)(0.3, np.random.default_rng(4), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adgen.BackendWarning)
        got = adgen.grad(generator_in_loop, backend="numba")(0.3, np.random.default_rng(4), 3)
    assert got == expected
