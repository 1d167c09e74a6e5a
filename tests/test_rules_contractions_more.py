"""Contractions and indexing: conventions with exact values, and use inside loops/branches.

Repeated indices accumulate (``np.take``, ``np.take_along_axis``, ``x[idx]``); boolean masks
(``x[x > 0]``, ``np.extract``) pass the derivative to the selected entries only;
``np.select`` follows the first condition that holds (0 where only ``default`` is taken);
a repeated einsum label (``"ii->i"``) puts the cotangent on the diagonal.
"""

from __future__ import annotations

import numpy as np

import adgen
from adgen.testing import check_grads


def take_repeated(x):
    return np.sum(np.take(x, [0, 2, 0, 0]) * np.array([1.0, 2.0, 3.0, 4.0]))


def take_along_repeated(x):
    idx = np.array([[0, 0, 1], [2, 2, 2]])
    return np.sum(np.take_along_axis(x, idx, 1))


def index_repeated(x):
    return np.sum(x[np.array([1, 1, 3, 1])] * np.array([1.0, 10.0, 100.0, 1000.0]))


def index_mask(x):
    return np.sum(x[x > 0] ** 2)


def extract_mask(x):
    return np.sum(np.extract(x > 0, x) * 3.0)


def select_first(x):
    return np.sum(np.select([x > 0, x > -1], [2.0 * x, 3.0 * x], 7.0))


def choose_wrap(x, y):
    return np.sum(np.choose(np.array([0, 3, -1]), [x, y], mode="wrap"))


def einsum_diag(a):
    return np.sum(np.einsum("ii->i", a) * np.array([1.0, 2.0, 3.0]))


def einsum_trace(a):
    return np.einsum("ii", a)


def test_take_repeated_indices_accumulate() -> None:
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(adgen.grad(take_repeated)(x), [8.0, 0.0, 2.0])
    _, t = adgen.jvp(take_repeated, (x,), (np.array([1.0, 0.0, 0.0]),))
    assert t == 8.0


def test_take_along_axis_repeated_indices_accumulate() -> None:
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(
        adgen.grad(take_along_repeated)(x), [[2.0, 1.0, 0.0], [0.0, 0.0, 3.0]]
    )


def test_plain_index_with_repeated_integers_accumulates() -> None:
    x = np.arange(5.0)
    np.testing.assert_array_equal(adgen.grad(index_repeated)(x), [0, 1011.0, 0, 100.0, 0])
    _, t = adgen.jvp(index_repeated, (x,), (np.array([0.0, 1.0, 0.0, 0.0, 0.0]),))
    assert t == 1011.0


def test_boolean_masks_in_both_modes() -> None:
    x = np.array([-1.0, 2.0, 0.0, 3.0])
    np.testing.assert_array_equal(adgen.grad(index_mask)(x), [0.0, 4.0, 0.0, 6.0])
    _, t = adgen.jvp(index_mask, (x,), (np.ones(4),))
    assert t == 10.0
    np.testing.assert_array_equal(adgen.grad(extract_mask)(x), [0.0, 3.0, 0.0, 3.0])
    _, t = adgen.jvp(extract_mask, (x,), (np.ones(4),))
    assert t == 6.0


def test_select_follows_the_first_condition_and_default_is_constant() -> None:
    x = np.array([0.5, -0.5, -2.0])  # first, second, default
    np.testing.assert_array_equal(adgen.grad(select_first)(x), [2.0, 3.0, 0.0])
    _, t = adgen.jvp(select_first, (x,), (np.ones(3),))
    assert t == 5.0


def test_choose_wrap_sends_the_derivative_to_the_wrapped_choice() -> None:
    x, y = np.zeros(3), np.zeros(3)
    gx, gy = adgen.grad(choose_wrap, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0, 1.0])


def test_einsum_repeated_label_puts_the_cotangent_on_the_diagonal() -> None:
    a = np.ones((3, 3))
    np.testing.assert_array_equal(adgen.grad(einsum_diag)(a), np.diag([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(adgen.grad(einsum_trace)(a), np.eye(3))
    _, t = adgen.jvp(einsum_trace, (a,), (np.arange(9.0).reshape(3, 3),))
    assert t == 12.0


def contract_in_loop(a, b, n):
    s = b
    for i in range(n):
        if i % 2 == 0:
            s = np.einsum("ij,j->i", a, s)
        else:
            s = np.tensordot(a, np.take(s, [0, 0, 1], axis=0), axes=1) * 0.5
        s = s + np.cross(s, b)
    return np.vdot(s, np.outer(b, b) @ s)


def einsum_self_update(a, b):
    s = b
    for i in range(3):
        s = np.einsum("ij,j->i", a, s)
    return np.sum(s)


def test_sequence_rule_rebinding_its_own_element_in_reverse_mode() -> None:
    # regression: `s = np.einsum('ij,j->i', a, s)` in a loop read the new s in reverse mode
    rng = np.random.default_rng(3)
    check_grads(einsum_self_update, rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, 3))


def test_contractions_in_a_loop_and_branch() -> None:
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (3, 3))
    b = rng.uniform(-1, 1, 3)
    check_grads(lambda a, b: contract_in_loop(a, b, 3), a, b)


def test_contractions_in_a_loop_exact_modes_agree() -> None:
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, (3, 3))
    b = rng.uniform(-1, 1, 3)
    ga, gb = adgen.grad(contract_in_loop, wrt=(0, 1))(a, b, 4)
    da, db = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, 3)
    _, t = adgen.jvp(contract_in_loop, (a, b, 4), (da, db, None))
    np.testing.assert_allclose(np.sum(ga * da) + np.sum(gb * db), t, rtol=1e-10)
    eps = 1e-6
    fd = (
        contract_in_loop(a + eps * da, b + eps * db, 4)
        - contract_in_loop(a - eps * da, b - eps * db, 4)
    ) / (2 * eps)
    np.testing.assert_allclose(t, fd, rtol=1e-6)
