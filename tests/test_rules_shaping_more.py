"""Shaping rules (adgen/rules/shaping.py): conventions with exact values, refusals, and
shaping functions inside loops and branches in both modes."""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError
from adgen.testing import check_grads

W7 = np.arange(1.0, 8.0)


# -- copies accumulate -----------------------------------------------------------------------
def tile_weighted(x):
    return np.sum(np.arange(1.0, 7.0) * np.tile(x, 2))


def repeat_weighted(x):
    return np.sum(np.arange(1.0, 5.0) * np.repeat(x, [2, 0, 2]))


def pad_reflect_weighted(x):
    # [x2, x1, x0, x1, x2, x1, x0]
    return np.sum(W7 * np.pad(x, 2, mode="reflect"))


def pad_edge_weighted(x):
    # [x0, x0, x0, x1, x2, x2, x2]
    return np.sum(W7 * np.pad(x, 2, mode="edge"))


def pad_constant_weighted(x):
    # the constants carry no derivative
    return np.sum(W7 * np.pad(x, 2, constant_values=5.0))


def broadcast_weighted(x):
    return np.sum(np.arange(6.0).reshape(2, 3) * np.broadcast_to(x, (2, 3)))


def tril_vector(x):
    # a 1-d array is broadcast to a square before the triangle is taken
    return np.sum(np.tril(x))


def insert_values_into_ints(v):
    # np.insert casts the values to the integer array's dtype: derivative 0
    return np.sum(np.insert(np.arange(3), 1, v) * 1.0) + 0.0 * v


def insert_broadcast_value(v):
    # one value broadcast to a whole inserted row of 3
    return np.sum(np.arange(9.0).reshape(3, 3) * np.insert(np.zeros((2, 3)), 1, v, axis=0))


EXACT = [
    (tile_weighted, np.zeros(3), [5.0, 7.0, 9.0]),
    (repeat_weighted, np.zeros(3), [3.0, 0.0, 7.0]),
    (pad_reflect_weighted, np.zeros(3), [3.0 + 7.0, 2.0 + 4.0 + 6.0, 1.0 + 5.0]),
    (pad_edge_weighted, np.zeros(3), [1.0 + 2.0 + 3.0, 4.0, 5.0 + 6.0 + 7.0]),
    (pad_constant_weighted, np.zeros(3), [3.0, 4.0, 5.0]),
    (broadcast_weighted, np.zeros(3), [3.0, 5.0, 7.0]),
    (tril_vector, np.zeros(3), [3.0, 2.0, 1.0]),
    (insert_values_into_ints, 2.0, 0.0),
    (insert_broadcast_value, 2.0, 3.0 + 4.0 + 5.0),
]


@pytest.mark.parametrize(("fn", "x", "expected"), EXACT, ids=[e[0].__name__ for e in EXACT])
def test_conventions_exact(fn, x, expected) -> None:
    np.testing.assert_allclose(adgen.grad(fn)(x), expected, rtol=0, atol=1e-12)
    # forward mode, one basis direction at a time
    if np.ndim(x) == 0:
        _, tangent = adgen.jvp(fn, (x,), (1.0,))
        np.testing.assert_allclose(tangent, expected, rtol=0, atol=1e-12)
    else:
        for i in range(np.size(x)):
            e = np.zeros_like(x)
            e[i] = 1.0
            _, tangent = adgen.jvp(fn, (x,), (e,))
            np.testing.assert_allclose(tangent, expected[i], rtol=0, atol=1e-12)


def test_float32_stays_float32() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def f(x):
        return np.sum(np.pad(np.tile(x, (1, 2)), 1, mode="wrap") * np.diag(np.arange(8.0))[:4])

    g = adgen.grad(f)(x)
    assert g.dtype == np.float32


# -- several results -------------------------------------------------------------------------
def split_unpacked(a):
    first, second, third = np.split(a, [1, 3])
    return np.sum(first * 2.0) + np.sum(second * third[0])


def test_split_unpacked_exact() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    # 2 a0 + (a1 + a2) a3
    np.testing.assert_allclose(adgen.grad(split_unpacked)(a), [2.0, 4.0, 4.0, 5.0, 0.0])
    check_grads(split_unpacked, a)


# -- refusals --------------------------------------------------------------------------------
def pad_mean(x):
    return np.sum(np.pad(x, 1, mode="mean"))


def test_pad_unsupported_mode_is_loud() -> None:
    with pytest.raises((NotImplementedError, AdgenError), match="np.pad"):
        adgen.grad(pad_mean)(np.ones(3))
    with pytest.raises((NotImplementedError, AdgenError), match="np.pad"):
        adgen.jvp(pad_mean, (np.ones(3),), (np.ones(3),))


def pad_odd(x):
    return np.sum(np.pad(x, 1, mode="reflect", reflect_type="odd"))


def test_pad_reflect_type_refused() -> None:
    with pytest.raises(AdgenError):
        adgen.grad(pad_odd)(np.ones(3))


def split_at_run_time(a, n):
    return np.sum(np.split(a, n)[0])


def test_split_count_must_be_constant() -> None:
    with pytest.raises(AdgenError, match="number of results"):
        adgen.grad(split_at_run_time)(np.ones(4), 2)


def broadcast_arrays_sum(a, b):
    x, y = np.broadcast_arrays(a, b)
    return np.sum(x * y)


def test_broadcast_arrays_is_read_as_the_calls_it_makes() -> None:
    # (no rule: its number of results is its number of arrays; adgen reads it as
    # np.broadcast_to of each, adgen.rules.python_forms)
    a, b = np.array([1.0, 2.0, 3.0]), np.array([[0.5], [-2.0]])
    grad_a, grad_b = adgen.grad(broadcast_arrays_sum, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(grad_a, np.full(3, b.sum()))
    np.testing.assert_allclose(grad_b, np.full((2, 1), a.sum()))


# -- inside loops and branches ---------------------------------------------------------------
def rolling(x, n):
    acc = 0.0
    y = x
    for k in range(n):
        y = np.roll(y, 1) * np.flip(x)
        if k % 2 == 0:
            y = np.repeat(y, 2)[::2] + np.pad(y, 1, mode="edge")[1:-1]
        else:
            y = np.swapaxes(np.expand_dims(y, 0), 0, 1)[:, 0]
        acc = acc + np.sum(np.tril(np.diag(y), -1) + np.diag(y) ** 2)
    return acc


def rolling_three(x):
    return rolling(x, 3)


def test_in_loop_and_branch_both_modes() -> None:
    x = np.array([0.3, -0.7, 1.1, 0.5])
    check_grads(rolling, x, 3)
    # reverse against central differences too
    g = adgen.grad(rolling)(x, 3)
    eps = 1e-6
    numeric = np.array(
        [(rolling(x + eps * e, 3) - rolling(x - eps * e, 3)) / (2 * eps) for e in np.eye(x.size)]
    )
    np.testing.assert_allclose(g, numeric, rtol=1e-6, atol=1e-8)
    _, tangent = adgen.jvp(rolling_three, (x,), (np.ones(4),))
    np.testing.assert_allclose(tangent, np.sum(numeric), rtol=1e-6)


# -- Python lists as arguments, at second order ------------------------------------------------
def appended_sin(a, b):
    return np.sum(np.sin(np.append(a, b)))


def inserted_sin(a, b):
    return np.sum(np.sin(np.insert(a, 1, b)))


def as_array_sin(a):
    return np.sum(np.sin(np.asarray(a, dtype=np.float64)) * np.arange(1.0, 4.0))


@pytest.mark.parametrize("fn", [appended_sin, inserted_sin])
def test_a_list_argument_differentiates_twice(fn) -> None:
    """The tangent of a Python list is a list: the templates ask its dtype with rt.dtype_of
    (np.result_type reads a list as a structured dtype's fields and raised a TypeError at
    second order). Checked against differences of the first derivative, both modes."""
    a, b, t = [0.1, -0.4, 0.3], 0.5, [1.0, -2.0, 0.5]

    def along(s):
        return adgen.jvp(fn, ([x + s * d for x, d in zip(a, t)], b + s), (t, 1.0))[1]

    second = adgen.jvp(lambda u, v: adgen.jvp(fn, (u, v), (t, 1.0))[1], (a, b), (t, 1.0))[1]
    assert second == pytest.approx((along(1e-5) - along(-1e-5)) / 2e-5, rel=1e-6)
    hessian_row = adgen.grad(lambda u, v: adgen.jvp(fn, (u, v), (t, 1.0))[1])(a, b)
    eps = 1e-6
    fd = [
        (along_arg(fn, a, b, t, i, eps) - along_arg(fn, a, b, t, i, -eps)) / (2 * eps)
        for i in range(3)
    ]
    np.testing.assert_allclose(hessian_row, fd, rtol=1e-6, atol=1e-9)


def along_arg(fn, a, b, t, i, eps):  # type: ignore[no-untyped-def]
    moved = list(a)
    moved[i] += eps
    return adgen.jvp(fn, (moved, b), (t, 1.0))[1]


def test_asarray_of_a_list_differentiates_twice() -> None:
    a = [0.1, -0.4, 0.3]
    check_grads(adgen.grad(as_array_sin), a)


# -- np.array of a number: no items to take apart (autograd's test_array_from_scalar) --------
def array_of_a_number(x):
    return np.array(x) * x


def array_of_a_number_in_a_loop(x):
    total = 0.0
    for k in range(3):
        total = total + np.sum(np.array(x) * k)
    return total


@pytest.mark.parametrize("fn", [array_of_a_number, array_of_a_number_in_a_loop])
@pytest.mark.parametrize(
    "x", [2.5, np.float64(2.5), np.array(2.5)], ids=["float", "float64", "0-d array"]
)
def test_array_of_a_number_differentiates_in_both_modes_and_twice(fn, x):
    want = 5.0 if fn is array_of_a_number else 3.0  # d/dx x**2 at 2.5; 0 + 1 + 2
    assert adgen.grad(fn)(x) == pytest.approx(want, rel=1e-12)
    assert adgen.jvp(fn, (x,), (1.0,))[1] == pytest.approx(want, rel=1e-12)
    check_grads(fn, x)
    second = adgen.grad(adgen.grad(fn))(x)
    assert second == pytest.approx(2.0 if fn is array_of_a_number else 0.0, abs=1e-12)
    assert adgen.hessian(fn)(np.array(x, dtype=float)) == pytest.approx(second, abs=1e-12)


# -- scalar-type casts: np.float64(x) is the identity, np.int64(x) has no derivative ---------
def float64_cast(x):
    return np.float64(x) * x


def glued_and_indexed(W):  # autograd's test_cast_to_int
    inds = np.ones(5)[:, None]
    glued = np.concatenate((W, inds), axis=1)
    new_W = W[:, :-1]
    new_inds = np.int64(W[:, -1])
    return new_W[new_inds].sum() + 0.0 * np.sum(glued)


def test_float64_cast_is_the_identity():
    assert adgen.grad(float64_cast)(1.5) == pytest.approx(3.0)
    check_grads(float64_cast, np.array([0.5, -2.0]))
    assert adgen.hessian(float64_cast)(np.array(1.5)) == pytest.approx(2.0)


def test_integer_cast_has_no_derivative():
    W = np.random.default_rng(0).normal(size=(5, 10))
    W[:, -1] = [0.5, 1.5, 2.5, 3.5, 4.5]  # (away from the integers, where the cast jumps)
    want = np.zeros_like(W)
    want[:, :-1] = 1.0  # each row of new_W is picked once
    np.testing.assert_array_equal(adgen.grad(glued_and_indexed)(W), want)
    check_grads(glued_and_indexed, W)
