"""Lists of tuples the differentiated function builds by ``append`` (issue 18).

``states.append((h, c))`` in an RNN's loop, ``pairs.append((x[i], y[i]))``, ``(W, b)`` layers
cut from a flat vector: adgen keeps such a list as one list per position
(:mod:`adgen.frontend.lower.tuple_lists`), so it is read back by index, in ``for`` loops (a
tuple target or one name), with ``len``, ``pop``, ``enumerate``, ``zip`` and generators. Each
program is checked in both modes against central differences (``check_grads``) and at second
order (``adgen.hessian`` against differences of the gradient); the uses that cannot be split
stay refused, naming the use.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def _hessian_matches(f: Any, x: np.ndarray, *rest: Any) -> None:
    """adgen.hessian against central differences of adgen's gradient."""
    H = adgen.hessian(f)(x, *rest)
    g = adgen.grad(f)
    eps = 1e-6
    numeric = np.empty((x.size, x.size))
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        numeric[:, i] = (np.asarray(g(x + e, *rest)) - np.asarray(g(x - e, *rest))) / (2 * eps)
    np.testing.assert_allclose(H, numeric, rtol=1e-5, atol=1e-6)


# -- an RNN collecting its (h, c) states ------------------------------------------------------


def lstm_like_loss(params, xs):
    """A small gated recurrent cell that keeps every step's (h, c), then a loss over them."""
    Wh, Wx, Wc = params[0:4].reshape(2, 2), params[4:6], params[6:8]
    h = np.zeros(2)
    c = np.zeros(2)
    states = []
    for t in range(len(xs)):
        gate = 1.0 / (1.0 + np.exp(-(Wh @ h + Wx * xs[t])))
        c = gate * c + (1.0 - gate) * np.tanh(Wc * xs[t] + h)
        h = np.tanh(c) * gate
        states.append((h, c))
    loss = 0.0
    for h_t, c_t in states:
        loss = loss + np.sum(h_t**2) + 0.1 * np.sum(c_t * h_t)
    h_last, c_last = states[-1]
    return loss + np.sum(h_last * c_last) / len(states)


def test_rnn_collects_h_c_states_then_sums_a_loss():
    rng = np.random.default_rng(0)
    params = rng.standard_normal(8) * 0.5
    xs = rng.standard_normal(4)
    check_grads(lstm_like_loss, params, xs)
    _hessian_matches(lstm_like_loss, params, xs)


def test_states_read_back_from_the_list_as_they_grow():
    """Each step reads the previous step's pair from the list itself (``states[-1]``),
    including inside the tuple being appended (computed before any position is appended)."""

    def f(w):
        states = [(w[0], w[1])]
        for k in range(3):
            h, c = states[-1]
            states.append((np.tanh(h * w[2] + c), c * w[3] + states[-1][0]))
        return sum(h * c for h, c in states)

    w = np.array([0.3, -0.7, 1.1, 0.5])
    check_grads(f, w)
    _hessian_matches(f, w)


def test_states_transposed_with_zip_star_then_stacked():
    """``hs, cs = zip(*states)``: one sequence per position, stacked into arrays."""

    def f(w, xs):
        states = []
        h, c = w[0], w[1]
        for x in xs:
            c = c * w[2] + np.tanh(x * w[3] + h)
            h = np.tanh(c) * w[4]
            states.append((h, c))
        hs, cs = zip(*states)
        H, C = np.stack(hs), np.stack(cs)
        return np.sum(H * C) + sum(hs) * cs[-1] + len(hs)

    w = np.array([0.3, -0.7, 0.9, 0.5, 1.2])
    xs = np.array([0.4, -1.0, 0.7])
    check_grads(f, w, xs)
    _hessian_matches(f, w, xs)

    def mismatched(w):
        pairs = []
        pairs.append((w[0], w[1]))
        a, b, c = zip(*pairs)
        return a[0]

    _refused(mismatched, (w,), "a tuple of variables", "different lengths")


def _last_of_history(w, k, s):
    hist = []
    for j in range(2):
        hist.append((w[j] * k + s[0], w[j + 1] * s[1]))
    return hist[-1]


def test_a_helper_returning_the_last_pair_carries_a_state_through_a_loop():
    """``state = step(...)`` in a loop, where ``step`` returns ``hist[-1]`` of its own list of
    pairs: the state is a pair at every binding (as the helper's lowered code shows)."""

    def f(w):
        state = (w[0], w[1])
        for k in range(3):
            state = _last_of_history(w, k, state)
        return state[0] * state[1]

    w = np.array([0.3, -0.7, 1.1])
    check_grads(f, w)
    _hessian_matches(f, w)


# -- pairs collected then iterated -------------------------------------------------------------


def weighted_squared_error(x, y, weights):
    pairs = []
    for i in range(len(x)):
        if weights[i] > 0:
            pairs.append((x[i] - y[i], weights[i]))
    total = 0.0
    for diff, weight in pairs:
        total = total + weight * diff**2
    return total / len(pairs)


def test_pairs_collected_in_a_branch_then_iterated():
    x = np.array([0.5, -1.0, 2.0, 0.3])
    y = np.array([0.1, 0.4, -0.2, 0.9])
    weights = np.array([1.0, -1.0, 0.5, 2.0])
    check_grads(weighted_squared_error, x, y, weights, wrt=[0, 1])
    # analytic: d/dx_i = 2 w_i (x_i - y_i) / n over the kept pairs
    kept = weights > 0
    expected = np.where(kept, 2 * weights * (x - y) / kept.sum(), 0.0)
    np.testing.assert_allclose(adgen.grad(weighted_squared_error)(x, y, weights), expected)
    _hessian_matches(weighted_squared_error, x, y, weights)


def test_every_way_of_reading_the_pairs():
    """Index (also ``[i][j]`` and an index using ``len``), a one-name loop target unpacked in
    the body, ``enumerate``, ``zip`` with another list, a generator, ``pop``."""

    def f(w):
        pairs = []
        for k in range(4):
            pairs.append((w[k] * 2.0, np.sin(w[k + 1])))
        a, b = pairs.pop()
        pairs.pop()
        s = a * b + pairs[0][1] * pairs[len(pairs) - 1][0]
        for pair in pairs:
            u, v = pair
            s = s + u / (1.0 + v**2)
        for i, (u, v) in enumerate(pairs):
            s = s + i * u * v
        for (u, v), z in zip(pairs, [w[0], w[4]]):
            s = s + z * u - v
        return s + sum(u * v for u, v in pairs) + len(pairs)

    w = np.array([0.3, -0.7, 1.1, 0.5, 0.8])
    check_grads(f, w)
    _hessian_matches(f, w)


def test_a_triple_per_step_and_a_list_made_with_pairs():
    def f(w):
        rows = [(w[0], w[1], 1.0)]
        for k in range(1, 3):
            rows.append((w[k], w[k] * w[k - 1], float(k)))
        return sum(a * b + c * a for a, b, c in rows)

    w = np.array([0.3, -0.7, 1.1])
    check_grads(f, w)
    _hessian_matches(f, w)


def test_index_pairs_of_a_graph_and_a_truth_test():
    """``edges.append((i, j))`` of integers, iterated to index the differentiated vector;
    ``if pairs:`` / ``not pairs`` / ``while pairs:`` test the list for items."""

    def smoothness(x):
        edges = []
        for i in range(len(x)):
            for j in range(i + 1, len(x)):
                if j - i <= 2:
                    edges.append((i, j))
        s = 0.0
        for i, j in edges:
            s = s + (x[i] - x[j]) ** 2 / (j - i)
        return s

    def drained(x):
        stack = []
        for k in range(3):
            stack.append((x[k], x[k + 1] * 2.0))
        s = 0.0 if not stack else 1.0
        while stack:
            a, b = stack.pop()
            s = s * a + b
        if stack:
            s = s * 100.0
        return s

    x = np.array([0.3, -0.7, 1.1, 0.4])
    check_grads(smoothness, x)
    # analytic: d/dx_k = sum over edges (k, j) and (i, k) of +-2 (x_i - x_j) / (j - i)
    expected = np.zeros(4)
    for i in range(4):
        for j in range(i + 1, min(i + 3, 4)):
            expected[i] += 2 * (x[i] - x[j]) / (j - i)
            expected[j] -= 2 * (x[i] - x[j]) / (j - i)
    np.testing.assert_allclose(adgen.grad(smoothness)(x), expected)
    _hessian_matches(smoothness, x)
    check_grads(drained, x)
    _hessian_matches(drained, x)


def test_pairs_made_by_a_comprehension():
    """``pairs = [(a, b) for ...]`` (with a condition, over ``zip``), then read as above; the
    comprehension's variables stay its own (``i`` and ``W`` below are not rebound)."""

    def f(x, y):
        i = 10
        pairs = [(x[i] * 2.0, y[i]) for i in range(len(x)) if i != 1]
        s = 0.0
        for a, b in pairs:
            s = s + a * np.sin(b)
        return s + pairs[-1][0] * len(pairs) + i

    def layers(Ws, bs, X):
        W = 0.5
        params = [(W * 1.5, b * 2.0) for W, b in zip(Ws, bs)]
        h = X
        for M, b in params:
            h = np.tanh(h @ M + b)
        return np.sum(h**2) * W

    x = np.array([0.3, -0.7, 1.1, 0.4])
    y = np.array([0.5, 0.2, -0.3, 0.9])
    check_grads(f, x, y)
    np.testing.assert_allclose(
        adgen.grad(f)(x, y), [2 * np.sin(0.5), 0.0, 2 * np.sin(-0.3), 2 * np.sin(0.9) + 6.0]
    )
    _hessian_matches(f, x, y)
    rng = np.random.default_rng(4)
    Ws = rng.standard_normal((2, 3, 3)) * 0.5
    bs = rng.standard_normal((2, 3)) * 0.1
    X = rng.standard_normal((4, 3))
    check_grads(layers, Ws, bs, X, wrt=[0, 1])


# -- (W, b) layers cut from a flat vector --------------------------------------------------


def mlp_from_flat(theta, X, sizes):
    layers = []
    start = 0
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        W = theta[start : start + n_in * n_out].reshape(n_in, n_out)
        start = start + n_in * n_out
        b = theta[start : start + n_out]
        start = start + n_out
        layers.append((W, b))
    h = X
    for W, b in layers:
        h = np.tanh(h @ W + b)
    return np.mean(h**2)


def mlp_from_flat_plain(theta, X, sizes):
    layers = []
    start = 0
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        W = theta[start : start + n_in * n_out].reshape(n_in, n_out)
        start = start + n_in * n_out
        b = theta[start : start + n_out]
        start = start + n_out
        layers.append((W, b))
    h = X
    for k in range(len(layers) - 1):
        W, b = layers[k]
        h = np.tanh(h @ W + b)
    W_out, b_out = layers[-1]
    return np.mean((h @ W_out + b_out) ** 2)


def mlp_hidden_then_output(theta, X, sizes):
    layers = []
    start = 0
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        W = theta[start : start + n_in * n_out].reshape(n_in, n_out)
        start = start + n_in * n_out
        layers.append((W, theta[start : start + n_out]))
        start = start + n_out
    h = X
    for W, b in layers[:-1]:
        h = np.tanh(h @ W + b)
    for k, (W, b) in enumerate(layers[len(layers) - 1 :]):
        h = (h @ W + b) * (k + 1.0)
    return np.mean(h**2)


def test_mlp_hidden_layers_iterated_as_a_slice():
    """``for W, b in layers[:-1]`` then the output layer: slices are iterated too."""
    rng = np.random.default_rng(5)
    sizes = (3, 4, 4, 2)
    theta = rng.standard_normal(12 + 4 + 16 + 4 + 8 + 2) * 0.5
    X = rng.standard_normal((5, 3))
    check_grads(mlp_hidden_then_output, theta, X, sizes, wrt=[0])
    small = (1, 2, 1)
    theta_small = rng.standard_normal(2 + 2 + 2 + 1) * 0.5
    _hessian_matches(mlp_hidden_then_output, theta_small, X[:, :1], small)


def test_mlp_layers_built_from_a_flat_vector():
    rng = np.random.default_rng(2)
    sizes = (3, 4, 2)
    n = 3 * 4 + 4 + 4 * 2 + 2
    theta = rng.standard_normal(n) * 0.5
    X = rng.standard_normal((5, 3))
    check_grads(mlp_from_flat_plain, theta, X, sizes, wrt=[0])
    small = (2, 2, 1)
    theta_small = rng.standard_normal(2 * 2 + 2 + 2 + 1) * 0.5
    _hessian_matches(mlp_from_flat_plain, theta_small, X[:, :2], small)


def test_mlp_layers_iterated_with_a_tuple_target():
    rng = np.random.default_rng(3)
    sizes = (2, 3, 1)
    theta = rng.standard_normal(2 * 3 + 3 + 3 + 1) * 0.5
    X = rng.standard_normal((4, 2))
    check_grads(mlp_from_flat, theta, X, sizes, wrt=[0])


# -- what stays refused ------------------------------------------------------------------------


def _refused(f: Any, args: tuple[Any, ...], *words: str) -> None:
    for action in (
        lambda: adgen.grad(f)(*args),
        lambda: adgen.jvp(f, args, tuple(np.ones_like(a) for a in args)),
    ):
        with pytest.raises(adgen.UnsupportedSyntaxError) as info:
            action()
        for word in words:
            assert word in str(info.value), str(info.value)


def test_tuples_of_different_lengths_are_refused():
    def f(w):
        rows = []
        rows.append((w[0], w[1]))
        rows.append((w[0], w[1], w[2]))
        return sum(r[0] for r in rows)

    _refused(f, (np.ones(3),), "a tuple of variables", "tuples of different lengths")


def test_a_non_tuple_appended_too_is_refused():
    def f(w):
        rows = []
        rows.append((w[0], w[1]))
        rows.append(w[2])
        return rows[0][0] * rows[1]

    _refused(f, (np.ones(3),), "a tuple of variables", "not a tuple display is appended")


def test_the_whole_list_passed_to_a_function_is_refused():
    def f(x):
        pairs = []
        for i in range(3):
            pairs.append((x * i, x + i))
        return np.sum(np.array(pairs))

    _refused(f, (1.5,), "a tuple of variables", "used as a whole", "line")


def test_writing_slicing_and_returning_are_refused():
    def written(w):
        pairs = []
        for i in range(2):
            pairs.append((w[i], w[i + 1]))
        pairs[0] = (w[0], w[0])
        return pairs[0][0] * pairs[1][1]

    def sliced(w):
        pairs = []
        for i in range(2):
            pairs.append((w[i], w[i + 1]))
        rest = pairs[1:]
        return sum(a * b for a, b in rest)

    def nested(w):
        pairs = []
        for i in range(2):
            pairs.append(((w[i], w[i]), w[i + 1]))
        return pairs[0][1]

    def collect(w):
        pairs = []
        for i in range(2):
            pairs.append((w[i], w[i + 1]))
        return pairs

    def returned(w):
        pairs = collect(w)
        return pairs[0][0] * pairs[1][1]

    w = np.array([0.3, 0.5, 0.7])
    _refused(returned, (w,), "a tuple of variables", "used as a whole")
    _refused(written, (w,), "a tuple of variables", "written by index")
    _refused(sliced, (w,), "a tuple of variables", "sliced")
    _refused(nested, (w,), "a tuple of variables", "a tuple display holding")


def test_a_list_of_tuples_in_a_closure_is_refused():
    def f(w):
        pairs = []
        for i in range(2):
            pairs.append((w[i], w[i + 1]))

        def total():
            return sum(a * b for a, b in pairs)

        return total()

    _refused(f, (np.array([0.3, 0.5, 0.7]),), "a tuple of variables", "a function defined")


def test_a_list_of_tuples_grown_while_a_loop_iterates_over_it_is_refused():
    """Python's loop sees the items appended during it; adgen's loops over lists take their
    length first, so this stays refused."""

    def f(w):
        pairs = [(w[0], w[1])]
        for a, b in pairs:
            if len(pairs) < 3:
                pairs.append((a * b, b))
        return sum(a + b for a, b in pairs)

    _refused(f, (np.array([0.3, 0.5]),), "a tuple of variables", "in a loop iterating over it")


def test_a_shadowed_builtin_or_an_argument_list_stays_refused():
    def shadowed(w):
        zip = 2.0
        pairs = []
        pairs.append((w[0], w[1]))
        s = 0.0
        for a, b in pairs:
            s = s + a * b * zip
        return s

    def argument(w, pairs):
        pairs.append((w[0], w[1]))
        return pairs[0][0]

    _refused(shadowed, (np.array([0.3, 0.5]),), "a tuple of variables", "`zip` is bound")
    with pytest.raises(adgen.UnsupportedSyntaxError, match="argument passed by the caller"):
        adgen.grad(argument)(np.array([0.3, 0.5]), [])


# -- false alarms on lists of single values, fixed along the way -----------------------------


def test_a_tuple_of_a_lists_items_or_of_new_arrays_is_no_view_of_the_list():
    """``a, b = xs[-1], xs[0]`` (items, not the list) and ``A, B = np.stack(xs), ...`` (new
    arrays) before or after more appends were refused as if they kept the list."""

    def f(w):
        xs = []
        ys = []
        for k in range(3):
            xs.append(w[k] * 2.0)
            ys.append(np.sin(w[k]))
        a, b = xs[-1], xs[0]
        A, B = np.stack(xs), np.stack(ys)
        xs.append(a * b)
        return np.sum(A * B) + xs[-1] + len(xs)

    w = np.array([0.3, -0.7, 1.1])
    check_grads(f, w)
    expected = 2.0 * np.sin(w) + 2.0 * w * np.cos(w)
    expected[0] += 4.0 * w[2]
    expected[2] += 4.0 * w[0]
    np.testing.assert_allclose(adgen.grad(f)(w), expected)
    _hessian_matches(f, w)


def test_a_slice_of_a_list_built_by_appends_has_the_lists_derivative():
    """``xs[1:]``, ``xs[-2:]``, ``xs[::2]`` of a list the function builds: reverse mode added
    the slice's adjoint pieces with ``+`` (joining lists), a silently wrong gradient."""

    def f(w):
        xs = []
        for k in range(4):
            xs.append(w[k] * w[k])
        s = 0.0
        for x in xs[1:]:
            s = s * w[0] + x
        t = xs[-2:]
        u = xs[:2]
        return s + t[0] * t[1] + sum(u) * u[1] + sum(xs[::2])

    def reversed_sum(w):
        xs = []
        for k in range(3):
            xs.append(w[k] * 2.0)
        s = 0.0
        for x in xs[::-1]:
            s = s * 0.5 + x
        return s

    w = np.array([0.3, -0.7, 1.1, 0.5])
    check_grads(f, w)
    _hessian_matches(f, w)
    np.testing.assert_allclose(adgen.grad(reversed_sum)(w[:3]), [2.0, 1.0, 0.5])
    check_grads(reversed_sum, w[:3])
