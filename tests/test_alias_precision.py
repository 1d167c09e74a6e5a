"""In-place writes into arrays the function made since, wherever the rest of it goes (issue 34,
part 6).

A write ``y[i] = v`` (or ``y -= v``) is sound when no other name can see ``y``'s array: adgen
used to ask that of every statement of the function, in any order, so a buffer rebound to a
fresh array in a loop (``u_new = u.copy(); u_new[1:-1] = ...; u = u_new``), a helper's fresh
result (``d = sq_dist(x); np.fill_diagonal(d, 0)``) or a buffer made before a loop that
writes its rows were refused as "may be a view". Now a write into a name bound to a new array
earlier in the same block, or in a block around the loop or branch being lowered (with no
statement of that loop letting another name see it), is accepted, and so is a write into
buffers a loop swaps (``u, u_new = u_new, u``, each bound only to new arrays or by the swap);
every other case keeps the whole-function check. The programs below are in the styles of
scikit-learn's t-SNE gradient and Huber loss and of explicit PDE solvers; each is checked
against its exact derivative in both modes. The second half are programs where a write *is*
seen through another name: adgen must refuse them or get them right, never be wrong.
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError


def sq_dist(x):
    return (x[:, None] - x[None, :]) ** 2


def fill_diagonal_of_helper_result(x):
    d = sq_dist(x)
    np.fill_diagonal(d, 1.0)
    return np.sum(d * x)


def fill_diagonal_of_helper_result_ref(x):
    d = sq_dist(x) * (1.0 - np.eye(x.shape[0])) + np.eye(x.shape[0])
    return np.sum(d * x)


def predict(state, a):
    return state * a + np.sin(state)


def states_appended(x):
    states = [x]
    for t in range(3):
        new_state = predict(states[t], 0.9)
        states.append(new_state)
    return np.sum(states[-1] * states[1])


def states_appended_ref(x):
    s1 = predict(x, 0.9)
    s3 = predict(predict(s1, 0.9), 0.9)
    return np.sum(s3 * s1)


def rows_into_uninitialised(x):
    n = x.shape[0]
    grad = np.ndarray((n, 2), dtype=x.dtype)
    for i in range(n):
        grad[i] = np.dot(np.ravel(x[i] - x, order="K"), np.ones(n)) * np.array([1.0, 2.0])
    grad = grad.ravel()
    grad *= 2.0
    return np.sum(grad**2)


def rows_into_uninitialised_ref(x):
    rows = np.sum(x[:, None] - x[None, :], axis=1)
    return np.sum((2.0 * rows[:, None] * np.array([1.0, 2.0])) ** 2)


def heat_copy(u):
    for _ in range(4):
        u_new = u.copy()
        u_new[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u = u_new
    return np.sum(u**2 * np.arange(1.0, 7.0))


def heat_zeros(u):
    n = u.shape[0]
    for _ in range(4):
        u_new = np.zeros(n)
        u_new[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u = u_new
    return np.sum(u**2 * np.arange(1.0, 7.0))


def heat_ref(u, keep_ends):
    for _ in range(4):
        inner = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        left = u[:1] if keep_ends else np.zeros(1)
        right = u[-1:] if keep_ends else np.zeros(1)
        u = np.concatenate([left, inner, right])
    return np.sum(u**2 * np.arange(1.0, 7.0))


def heat_swap(u):
    u = u.copy()
    u_new = np.zeros_like(u)
    for _ in range(4):
        u_new[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u, u_new = u_new, u
    return np.sum(u**2 * np.arange(1.0, 7.0))


def heat_swap_ref(u):
    first = u
    for k in range(4):  # the buffers alternate: zeros at the ends, then the first state's
        inner = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        left = np.zeros(1) if k % 2 == 0 else first[:1]
        right = np.zeros(1) if k % 2 == 0 else first[-1:]
        u = np.concatenate([left, inner, right])
    return np.sum(u**2 * np.arange(1.0, 7.0))


def masked_copy_then_item(v, first=True):
    v = v.copy()
    v[v > 1.5] = 0.0
    if first:
        v = v[1]
    return np.sum(v * 3.0)


def huber_style(w, fit_intercept=True):
    linear_loss = 2.0 - w[:3] * 1.5
    if fit_intercept:
        linear_loss -= w[3]
    non_outliers = linear_loss[np.abs(linear_loss) < 10.0]
    return np.dot(non_outliers, non_outliers)


def huber_style_ref(w):
    r = 2.0 - w[:3] * 1.5 - w[3]
    return np.dot(r, r)


def copy_of_argument_then_write(v):
    v = v.copy()
    v[0] = v[1] ** 2
    return np.sum(v**3)


def copy_of_argument_then_write_ref(v):
    return v[1] ** 6 + np.sum(v[1:] ** 3)


def _set_first(v):
    v = v.copy()  # (a helper's parameter: the caller's array, then a new one)
    v[0] = v[1] ** 2
    return v


def helper_copies_its_parameter(v):
    return np.sum(_set_first(v) ** 3) + np.sum(v)  # (the caller's v unchanged)


def helper_copies_its_parameter_ref(v):
    return v[1] ** 6 + np.sum(v[1:] ** 3) + np.sum(v)


def _softmax(x, copy=True):
    """In the style of scikit-learn's softmax: a copy asked for in an `if` decided when
    transforming, updates in place, `np.exp` with `out=np.asarray(x)`."""
    if copy:
        x = np.asarray(x, copy=True)
    x -= np.max(x)
    np.exp(x, out=np.asarray(x))
    x /= np.sum(x)
    return x


def softmax_written_in_place(v):
    return np.sum(_softmax(v) * np.arange(v.size)) + np.sum(v**2)


def softmax_written_in_place_ref(v):
    e = np.exp(v - np.max(v))
    return np.sum(e / np.sum(e) * np.arange(v.size)) + np.sum(v**2)


def _exp_kernel(d):
    k = d * -0.5
    np.exp(k, k)  # (the output array passed positionally)
    return k


def _exp_returned(d):
    k = d * -0.5
    return np.exp(k, out=k)


def ufunc_outputs_positional_and_returned(v):
    return np.sum(_exp_kernel(v) * v) + np.sum(_exp_returned(v) ** 2)


def ufunc_outputs_positional_and_returned_ref(v):
    return np.sum(np.exp(-0.5 * v) * v) + np.sum(np.exp(-0.5 * v) ** 2)


def floored_where_positive(v):
    """In the style of scikit-learn's NMF divergence: entries picked by a mask (NumPy copies
    them), floored in place, the picked array's name rebound to the copy."""
    data = v * 2.0
    keep = data > -1.0
    data = data[keep]
    data[data < 0.5] = 0.5
    return np.sum(data**2) + np.sum(v)


def floored_where_positive_ref(v):
    data = v[v * 2.0 > -1.0] * 2.0
    return np.sum(np.maximum(data, 0.5) ** 2) + np.sum(v)


def ufunc_output_positional_rebound(v):
    k = v * -0.5
    k = np.exp(k, k)  # (the result written into k's own array, and bound to k)
    return np.sum(k * v)


def shape_list_written_then_read(v):
    # scipy.signal.filtfilt: a list of ints written by index, then a NumPy call's shape --
    # whose result is an array, never the list (refused before as "`z` keeps a view of it")
    z = np.tanh(v)
    shape = [1] * v.ndim
    shape[0] = z.size
    z = np.reshape(z, shape)
    return np.sum(z**2 * v)


def rows_rebound_to_their_transpose(v):
    rows = []
    for k in range(3):
        rows.append(np.sin(v * (k + 1)))
    rows = np.array(rows).T  # a view of a new array: written into below
    rows[0] = rows[0] * 2.0
    return np.sum(rows**2)


def rows_rebound_to_their_transpose_ref(v):
    rows = np.stack([np.sin(v * (k + 1)) for k in range(3)], axis=1)
    return np.sum(rows**2) + 3.0 * np.sum(rows[0] ** 2)


X6 = np.array([0.3, -0.5, 1.2, 0.8, -1.1, 0.4])
SOUND = [
    (shape_list_written_then_read, lambda v: np.sum(np.tanh(v) ** 2 * v), X6),
    (rows_rebound_to_their_transpose, rows_rebound_to_their_transpose_ref, X6[:4]),
    (ufunc_output_positional_rebound, lambda v: np.sum(np.exp(-0.5 * v) * v), X6),
    (floored_where_positive, floored_where_positive_ref, X6),
    (helper_copies_its_parameter, helper_copies_its_parameter_ref, X6[:3]),
    (ufunc_outputs_positional_and_returned, ufunc_outputs_positional_and_returned_ref, X6),
    (copy_of_argument_then_write, copy_of_argument_then_write_ref, X6[:3]),
    (fill_diagonal_of_helper_result, fill_diagonal_of_helper_result_ref, X6[:4]),
    (states_appended, states_appended_ref, X6[:3]),
    (rows_into_uninitialised, rows_into_uninitialised_ref, X6[:4]),
    (heat_copy, lambda u: heat_ref(u, True), X6),
    (heat_zeros, lambda u: heat_ref(u, False), X6),
    (heat_swap, heat_swap_ref, X6),
    (masked_copy_then_item, lambda v: 3.0 * v[1], np.array([0.5, 1.0, 2.0])),
    (huber_style, huber_style_ref, np.array([0.2, -0.4, 0.9, 0.3])),
]


def test_softmax_written_in_place_through_out_asarray():
    """``np.exp(x, out=np.asarray(x))`` writes into ``x`` where ``x`` is an array (the
    arguments' kinds say so), at first and second order (the gradient read again is made
    for the kinds of its arguments)."""
    x = X6[:4]
    expected = adgen.grad(softmax_written_in_place_ref)(x)
    np.testing.assert_allclose(adgen.grad(softmax_written_in_place)(x), expected, rtol=1e-12)
    for e in np.eye(x.size):
        _, t = adgen.jvp(softmax_written_in_place, (x,), (e,))
        np.testing.assert_allclose(t, expected @ e, rtol=1e-12, atol=1e-15)
    want = adgen.hessian(softmax_written_in_place_ref)(x)
    np.testing.assert_allclose(adgen.hessian(softmax_written_in_place)(x), want, rtol=1e-10)


@pytest.mark.parametrize("f, ref, x", SOUND, ids=[f.__name__ for f, _, _ in SOUND])
def test_write_into_array_made_since_is_differentiated_exactly(f, ref, x):
    expected = adgen.grad(ref)(x)  # the same function without writes in place
    assert np.allclose(adgen.grad(f)(x), expected, rtol=1e-12, atol=1e-12)
    for k in range(x.size):
        e = np.eye(x.size)[k]
        _, t = adgen.jvp(f, (x,), (e,))
        assert np.isclose(t, expected[k], rtol=1e-12, atol=1e-12)
    h, h_ref = adgen.hessian(f)(x), adgen.hessian(ref)(x)
    assert np.allclose(h, h_ref, rtol=1e-10, atol=1e-10)


def test_the_exact_values_of_the_heat_solver_gradient():
    # one step of heat_copy by hand: u1 = A u with A tridiagonal inside, identity at the ends
    def one_step(u):
        u_new = u.copy()
        u_new[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        return np.sum(u_new * u_new)

    a = np.eye(6)
    for i in range(1, 5):
        a[i, i - 1 : i + 2] = [0.1, 0.8, 0.1]
    assert np.allclose(adgen.grad(one_step)(X6), 2.0 * a.T @ (a @ X6), rtol=1e-13)


# -- a write seen through another name: refused, or right ------------------------------------
def alias_then_write(x):
    d = x * 1.0
    v = d
    d[0] = x[1] * 3
    return np.sum(v * x)


def alias_made_later_in_loop(x):
    d = np.zeros(3)
    s = 0.0
    v = np.zeros(3)
    for i in range(3):
        d[i] = x[i] * 2
        s = s + np.sum(v * x)
        v = d
    return s


def loop_appends_buffer(x):
    d = np.zeros(3)
    vs = []
    for i in range(3):
        d[i] = x[i] * 2
        vs.append(d)
    return np.sum(vs[0] * x)


def view_kept_in_loop(x):
    d = np.zeros(3)
    w = d[:2]
    for i in range(3):
        d[i] = x[i] * 2
        w = d[:2]
    d[2] = 7 * x[0]
    return np.sum(w * x[:2]) + np.sum(d)


def view_made_before_loop(x):
    d = np.zeros(3)
    v = d[1:]
    for i in range(3):
        d[i] = x[i] * 2
    return np.sum(v * x[1:])


def rebound_to_buffer_in_loop(x):
    d = np.zeros(3)
    e = np.zeros(3)
    for i in range(3):
        d[i] = x[i] * 2 + np.sum(e)
        e = d
    return np.sum(e * x)


def alias_in_branch_before_loop(x, c=True):
    d = np.zeros(3)
    e = d if c else x
    for i in range(3):
        d[i] = x[i] * 2
    return np.sum(e * x)


def rebound_and_aliased_in_loop(x):
    d = np.zeros(3)
    e = x
    for i in range(3):
        if i == 1:
            d = x[::-1] * 1.0
            e = d
        d[i] = x[i] * 2
    return np.sum(e * x)


def row_kept_across_write(x):
    d = np.zeros((3, 3))
    r2 = x
    for i in range(3):
        r = d[i]
        d[i] = x * i
        r2 = r * x
    return np.sum(r2) + np.sum(d)


def buffer_from_a_list(x):
    bufs = [np.zeros(3), np.zeros(3)]
    d = bufs[0]
    for i in range(3):
        d[i] = x[i] * 2
    return np.sum(bufs[0] * x)


def closure_returns_buffer(x):
    d = np.zeros(3)

    def get():
        return d

    for i in range(3):
        d[i] = x[i] * 2
    return np.sum(get() * x)


def swapped_buffers(x):
    u = x * 1.0
    u_new = np.zeros(3)
    for _ in range(2):
        u_new[1:] = u[1:] * u[:-1]
        u, u_new = u_new, u
    return np.sum(u * x)


def swapped_with_a_kept_alias(x):
    u = x * 1.0
    u_new = np.zeros(3)
    kept = u
    for _ in range(2):
        u_new[1:] = u[1:] * u[:-1]
        u, u_new = u_new, u
    return np.sum(u * x) + np.sum(kept * x)


def swapped_with_one_not_new(x):
    u = x * 1.0
    u_new = u[::-1]
    for _ in range(2):
        u_new[1:] = u[1:] * u[:-1]
        u, u_new = u_new, u
    return np.sum(u * x)


def not_a_copy(x):
    u = x * 1.0
    for _ in range(2):
        u_new = u
        u_new[0] = u[1] * u[2]
        u = u_new
    return np.sum(u * x)


def kept_in_while(x):
    d = np.zeros(3)
    e = d
    while d[0] < 5:
        d[0] = d[0] + x[0]
        e = d
    return np.sum(e * x)


def reshaped_alias(x):
    d = x.reshape(3) * 1.0
    e = d.reshape(3)
    for i in range(2):
        d[i] = x[i] ** 2
    return np.sum(e * x)


def _copy_kept_by_caller(v, kept):
    v = v.copy()
    kept.append(v)  # (another name holds the new array)
    v[0] = 5.0
    return v


def helper_copy_held_elsewhere(x):
    kept = []
    w = _copy_kept_by_caller(x * 1.0, kept)
    return np.sum(w * x) + np.sum(kept[0] * x)


def _view_of_new_copy(v):
    v = v.copy()
    tail = v[1:]  # a view of the new array, kept
    v[1] = v[0] ** 2
    return v, tail


def helper_copy_viewed_then_written(x):
    v, tail = _view_of_new_copy(x)
    return np.sum(v * x) + np.sum(tail * x[1:])


def _pair_of_one(x):
    d = x * 2.0
    return d, d


def pair_copy_then_written(x):
    k, l_ = _pair_of_one(x)
    k = np.asarray(k)  # (no copy asked: k is still l_'s array)
    k *= 2.0
    return np.sum(l_ * x)


def _exp_into_other(d, out):
    np.exp(d, out)  # writes into the array the caller also reads
    return d


def ufunc_output_seen_by_caller(x):
    buf = x * 1.0
    view = buf[:2]
    _exp_into_other(x * 0.5, buf)
    return np.sum(view * x[:2]) + np.sum(buf)


def slice_kept_then_written(x):
    data = x * 2.0
    keep = data > -100.0
    data = data[keep]  # (a copy)
    part = data[1:]  # (a view of the copy)
    data[1] = 7.0
    return np.sum(part * x[1:])


def mask_name_rebound_to_a_view(x):
    data = x * 2.0
    data = data[data > -100.0]  # (a copy) ...
    whole = data
    data = whole[:2]  # ... then a view of it, under the same name
    data[0] = 5.0
    return np.sum(whole * x)


def view_then_written_later(x):
    s = np.sort(x * 2.0)
    head = s[:2]
    s[0] = 10.0 * x[0]
    return np.sum(head * x[:2])


def view_then_written_in_a_branch(x):
    s = np.sort(x * 2.0)
    head = s[:2]
    if x[0] > 0:
        s[0] = 10.0 * x[0]
    return np.sum(head**2)


def view_in_loop_written_after_it(x):
    s = np.sort(x * 2.0)
    total = 0.0
    for i in range(3):
        head = s[:2]
        total = total + np.sum(head**2)
        s[0] = s[0] * 0.5 + x[i]
    return total


SEEN = [
    view_then_written_later,
    view_then_written_in_a_branch,
    view_in_loop_written_after_it,
    slice_kept_then_written,
    mask_name_rebound_to_a_view,
    helper_copy_held_elsewhere,
    helper_copy_viewed_then_written,
    pair_copy_then_written,
    ufunc_output_seen_by_caller,
    alias_then_write,
    alias_made_later_in_loop,
    loop_appends_buffer,
    view_kept_in_loop,
    view_made_before_loop,
    rebound_to_buffer_in_loop,
    alias_in_branch_before_loop,
    rebound_and_aliased_in_loop,
    row_kept_across_write,
    buffer_from_a_list,
    closure_returns_buffer,
    swapped_buffers,
    swapped_with_a_kept_alias,
    swapped_with_one_not_new,
    not_a_copy,
    kept_in_while,
    reshaped_alias,
]


@pytest.mark.parametrize("f", SEEN, ids=[f.__name__ for f in SEEN])
def test_a_write_another_name_sees_is_refused_or_right(f):
    x = np.array([1.0, 2.0, 3.0])
    numeric = np.array([(f(x + 1e-6 * e) - f(x - 1e-6 * e)) / 2e-6 for e in np.eye(3)])
    for mode in ("reverse", "forward"):
        try:
            if mode == "reverse":
                got = adgen.grad(f)(x)
            else:
                got = np.array([adgen.jvp(f, (x,), (e,))[1] for e in np.eye(3)])
        except AdgenError as e:
            assert "in-place" in str(e) or "a view" in str(e), str(e)
            continue
        assert np.allclose(got, numeric, rtol=1e-5, atol=1e-6), (mode, got, numeric)


# -- np.ravel's orders ----------------------------------------------------------------------
W24 = np.cos(np.arange(24.0))


def ravel_weighted(a, order):
    r = np.ravel(a, order=order)
    return np.sum(np.sin(r) * W24[: np.size(r)])


VIEWS = {
    "whole": lambda a: a,
    "transposed": lambda a: a.transpose(2, 0, 1),
    "strided": lambda a: a[:, ::2],
    "reversed": lambda a: a[::-1, :, 1:],
}


def ravel_of_view(a, which, order):
    if which == "transposed":
        a = a.transpose(2, 0, 1)
    elif which == "strided":
        a = a[:, ::2]
    elif which == "reversed":
        a = a[::-1, :, 1:]
    return ravel_weighted(a, order)


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("which", sorted(VIEWS))
@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_ravel_in_every_order_has_the_exact_derivative(order, which, layout):
    a = np.asarray(np.arange(24.0).reshape(2, 3, 4) / 7, order=layout)
    view = VIEWS[which](a)
    # the exact gradient: cos of each entry times the weight of the place ravel puts it
    place = np.ravel(np.arange(view.size).reshape(view.shape), order="C")
    read = np.ravel(view, order=order)
    where = {float(v): i for i, v in enumerate(read)}
    weights = np.array([W24[where[float(v)]] for v in np.ravel(view)]).reshape(view.shape)
    expected_view = np.cos(view) * weights
    expected = np.zeros_like(a)
    VIEWS[which](expected)[...] = expected_view
    assert place.size == read.size
    got = adgen.grad(ravel_of_view)(a, which, order)
    assert np.allclose(got, expected, rtol=1e-13, atol=1e-15)
    tangent = np.ascontiguousarray(np.sin(np.arange(24.0)).reshape(2, 3, 4))  # C, whatever a is
    _, t = adgen.jvp(lambda a: ravel_of_view(a, which, order), (a,), (tangent,))
    assert np.isclose(t, np.sum(expected * tangent), rtol=1e-12)


def test_ravel_k_of_a_broadcast_view_is_refused_by_name():
    def f(x):
        return np.sum(np.ravel(np.broadcast_to(x, (3, 4)), order="K") * np.arange(12.0))

    with pytest.raises(AdgenError, match="order='K'"):
        adgen.grad(f)(np.arange(4.0))


# -- a view taken after the function's last write into the array --------------------------------
def trimmed_sum_of_squares(x):
    """Sort, damp the smallest value in place, then read the lowest three through a view (a
    view made after the write sees the written values; nothing writes into it after)."""
    s = np.sort(x)
    s[0] = s[0] * 0.5
    head = s[:3]
    return np.sum(head**2) + s[-1]


def clipped_then_truncated(x, k):
    """Masked writes, then the name rebound to a view of itself in a later branch."""
    v = np.exp(x)
    v[v > 2.0] = 2.0
    total = np.sum(v)
    if k > 0:
        v = v[:k]
    return total + np.sum(v * x[: v.size])


def _trimmed_exact(x):
    order = np.argsort(x)
    g = np.zeros_like(x)
    g[order[0]] = 2 * 0.25 * x[order[0]]
    g[order[1:3]] = 2 * x[order[1:3]]
    g[order[-1]] += 1.0
    return g


def _clipped_exact(x, k):
    e = np.exp(x)
    inside = e <= 2.0
    g = np.where(inside, e, 0.0)
    g[:k] += np.where(inside[:k], e[:k] * x[:k], 0.0) + np.minimum(e[:k], 2.0)
    return g


@pytest.mark.parametrize(
    "f, exact",
    [
        (trimmed_sum_of_squares, _trimmed_exact),
        (lambda x: clipped_then_truncated(x, 3), lambda x: _clipped_exact(x, 3)),
    ],
    ids=["view after the write", "rebound to a view in a later branch"],
)
def test_a_view_taken_after_the_last_write_has_the_exact_derivative(f, exact):
    x = np.array([0.9, 0.1, 0.5, 0.7, 0.3, 0.8])
    np.testing.assert_allclose(adgen.grad(f)(x), exact(x), rtol=1e-12)
    direction = np.linspace(-1.0, 1.0, 6)
    _, t = adgen.jvp(f, (x,), (direction,))
    np.testing.assert_allclose(t, exact(x) @ direction, rtol=1e-12)
