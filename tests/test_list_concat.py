"""List concatenation (``xs = xs + [v]``, ``[v] + xs``, ``xs + ys``, ``xs += [v]``) in both
modes and at second order.

A list literal is a tuple of its items; a list the function builds is a real list. A
concatenation with such a list is a new list built by appends (the items of a list variable
copied by a loop reading them by index), so its derivatives are those of appends and indexing.
``xs = xs + [v]`` on a list no other name sees appends in place. Before this, ``xs + [v]`` was
refused (``add`` of a tuple of differentiated values) or failed while running (list + tuple).
"""

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def grown_in_a_loop(x):
    xs = []
    for i in range(3):
        xs = xs + [x * i]
    return sum(xs)


def grown_then_stacked(x):
    xs = [x]
    for i in range(3):
        xs = xs + [np.sin(xs[-1]) * i, x * x]
    return np.sum(np.stack(xs) ** 2)


def appended_then_concatenated(x):
    xs = []
    for i in range(3):
        xs.append(x * i)
    ys = xs + [np.cos(x)]
    return np.sum(np.stack(ys) * np.arange(1.0, 5.0)[:, None])


def prepended(x):
    xs = [x]
    for i in range(3):
        xs = [np.tanh(xs[0]) * 1.5] + xs
    return np.sum(np.stack(xs) * np.arange(1.0, 5.0)[:, None])


def two_lists_joined(x):
    xs = []
    ys = []
    for i in range(2):
        xs.append(np.sin(x) * i)
        ys.append(x * x + i)
    zs = xs + ys
    return np.sum(np.stack(zs) * np.arange(1.0, 5.0)[:, None])


def extended_in_place(x):
    xs = []
    for i in range(3):
        xs += [x * i, np.exp(-x)]
    return np.sum(np.stack(xs) ** 2)


def concatenation_inside_a_call(x):
    hs = []
    h = x
    for i in range(3):
        h = np.tanh(h * 1.2)
        hs.append(h)
    return np.sum(np.stack(hs + [x * 2.0]) ** 2)


def under_a_branch_and_a_while_loop(x):
    xs = []
    k = 0
    while k < 4:
        if k % 2 == 0:
            xs = xs + [np.sin(x) * k]
        else:
            xs = xs + [x * x]
        k = k + 1
    return np.sum(np.stack(xs) ** 2)


def old_list_kept(x):
    xs = [x]
    ys = xs
    xs = xs + [x * 3.0]  # a new list: ys still holds only x
    return np.sum(np.stack(xs)) * 10.0 + np.sum(np.stack(ys))


def both_literals(x, y):
    zs = [x] + [y * y, x * y]
    return np.sum(np.stack(zs) ** 2)


V = np.array([0.3, -0.4, 0.8])
CASES = [
    (grown_in_a_loop, (0.7,)),
    (grown_in_a_loop, (V,)),
    (grown_then_stacked, (V,)),
    (appended_then_concatenated, (V,)),
    (prepended, (V,)),
    (two_lists_joined, (V,)),
    (extended_in_place, (V,)),
    (concatenation_inside_a_call, (V,)),
    (under_a_branch_and_a_while_loop, (V,)),
    (old_list_kept, (V,)),
    (both_literals, (V, V[::-1].copy())),
]


@pytest.mark.parametrize(
    "fn, args", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)]
)
def test_list_concatenation_both_modes(fn, args):
    check_grads(fn, *args)  # forward mode against finite differences, reverse against forward
    value, _ = adgen.vjp(fn, *args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    value, _ = adgen.jvp(fn, args, tuple(np.ones_like(a) for a in args))
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)


def test_the_reported_case_exact_in_both_modes():
    # sum(x * i for i in 0..2) = 3x
    assert adgen.grad(grown_in_a_loop)(0.7) == pytest.approx(3.0)
    value, tangent = adgen.jvp(grown_in_a_loop, (0.7,), (1.0,))
    assert value == pytest.approx(2.1) and tangent == pytest.approx(3.0)


def test_the_old_list_keeps_its_items():
    # value: 10 * sum(x + 3x) + sum(x) -> gradient 41 everywhere
    np.testing.assert_allclose(adgen.grad(old_list_kept)(V), np.full(3, 41.0))


def test_growing_in_place_appends_and_copies_only_when_needed():
    src = adgen.source(grown_in_a_loop)
    assert "xs.append(" in src and "rt.split_last(xs_bar)" in src
    assert "item" not in src  # no copy loop: nothing else sees the list
    kept = adgen.source(old_list_kept)
    # ys sees the old list: xs + [...] is a new list -- its items copied into it, or (the
    # rebound list renamed) the old one known item by item, never grown in place
    assert "item" in kept or "np.stack((x,))" in kept


@pytest.mark.parametrize("fn", [grown_then_stacked, prepended, extended_in_place])
def test_list_concatenation_second_order(fn):
    # forward over reverse against central differences of the exact gradient
    x = V
    hess = adgen.hessian(lambda v: fn(v))(x)
    g = adgen.grad(fn)
    eps = 1e-6
    numeric = np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(hess, numeric, rtol=1e-5, atol=1e-7)


def test_extending_a_list_another_name_sees_is_refused():
    def f(x):
        xs = [x]
        ys = xs
        xs += [x * 2.0]  # Python extends the list ys sees too
        return np.sum(np.stack(ys))

    with pytest.raises(adgen.UnsupportedSyntaxError, match="in-place update of `xs`"):
        adgen.grad(f)(V)


def test_numbers_and_arrays_plus_a_list_still_add():
    def f(x):
        return np.sum((x + [1.0, 2.0, 3.0]) ** 2)

    check_grads(f, V)


def rnn_states(w, x0):
    states = [x0]
    for t in range(6):
        s = np.tanh(w @ states[-1] + 0.1 * states[0])
        states = states + [s]
    return np.sum(states[-1] ** 2) + np.sum(states[2])


def test_reading_an_item_of_a_built_list_adds_to_that_item_only() -> None:
    # reverse mode once built a whole list of zeros for each `states[-1]` read and added it
    # item by item: a time loop's gradient grew quadratically with its steps. The adjoint of
    # one item's read now adds to that item (rt.accumulate_item), in both directions a rule.
    text = adgen.source(rnn_states, mode="reverse")
    assert "rt.accumulate_item(" in text
    assert "rt.getitem_vjp(" not in text
    rng = np.random.default_rng(3)
    w, x0 = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3)
    check_grads(rnn_states, w, x0, wrt=(0, 1))
    # second order through the helper: Hessian-vector product both ways round
    v = rng.normal(size=(3, 3))
    hv = adgen.jvp(adgen.grad(rnn_states), (w, x0), (v, np.zeros(3)))[1]
    eps = 1e-5
    fd = (adgen.grad(rnn_states)(w + eps * v, x0) - adgen.grad(rnn_states)(w - eps * v, x0)) / (
        2 * eps
    )
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-8)
    h = adgen.hessian(lambda a: rnn_states(a.reshape(3, 3), x0))(w.ravel())
    np.testing.assert_allclose(h @ v.ravel(), fd.ravel(), rtol=1e-6, atol=1e-8)


def test_a_nested_list_among_joined_arrays_is_an_array_of_its_items():
    """``np.concatenate([x, [x[-1], 2 * x[0]]])``, ``np.stack`` and ``np.vstack`` of a row
    written as a list: NumPy makes each nested list an array first, and so does adgen (it
    refused "nested sequences of differentiated values")."""

    def joined(x):
        padded = np.concatenate([x, [x[-1], 2.0 * x[0]]])
        rows = np.stack([x[:2], [x[-1], 1.0]])
        table = np.vstack([x[:2], (x[0], x[1] * 2.0)])
        return np.sum(padded**2) + np.sum(rows**3) + np.sum(np.sin(table))

    x = np.array([0.5, 1.5, 2.0])
    eps = 1e-6
    expected = [(joined(x + eps * e) - joined(x - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(adgen.grad(joined)(x), expected, rtol=1e-7)
    _, tangent = adgen.jvp(joined, (x,), (np.ones(3),))
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-7)


def test_an_array_of_constants_with_a_dtype_is_a_constant():
    """``np.array([1, 0, 1], dtype=bool)`` and ``np.array([x[0], 2.0], float)`` in a
    differentiated function (the first was refused: "np.array with `dtype=`")."""

    def f(x):
        keep = np.array([1, 0, 1], dtype=bool)
        pair = np.array([x[0], 2.0 * x[1]], float)
        return np.sum(np.where(keep, x, 0.0) * pair[0]) + pair[1] ** 2

    x = np.array([0.5, 1.5, 2.0])
    expected = np.array([2 * x[0] + x[2], 8 * x[1], x[0]])
    np.testing.assert_allclose(adgen.grad(f)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(adgen.jvp(f, (x,), (np.ones(3),))[1], expected.sum(), rtol=1e-12)
