"""Python forms real numerical code uses, in both modes with exact answers (issue 18).

Nested unpacking in ``for`` targets (``for W, b in params:``, ``for i, (a, b) in
enumerate(zip(u, v)):``, ``for (a, b), c in zip(pairs, cs):``) and in assignments; Python's
``sum`` of a list or tuple holding differentiated values (a literal, a list built with
appends, a comprehension or a generator expression) and ``np.sum`` / ``np.mean`` of such a
list. Each derivative is checked against its analytic value (reverse mode with
``adgen.grad``, forward mode with ``adgen.jvp``), or against central differences where the
function is a small network.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def _leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def _vdot(a: Any, b: Any) -> float:
    return float(sum(np.sum(np.asarray(x) * np.asarray(y)) for x, y in zip(_leaves(a), _leaves(b))))


def _same_structure(a: Any, b: Any) -> None:
    assert type(a) is type(b) or not isinstance(b, (list, tuple)), (a, b)
    if isinstance(b, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same_structure(x, y)
    else:
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


def both_modes(f: Any, args: tuple[Any, ...], wrt: int, expected: Any) -> None:
    """Reverse mode gives ``expected`` (the gradient w.r.t. argument ``wrt``, with its
    structure); forward mode in a direction ``t`` gives ``<expected, t>``."""
    _same_structure(adgen.grad(f, wrt=wrt)(*args), expected)
    rng = np.random.default_rng(1)
    tangent = _like(args[wrt], rng)
    tangents = [_like(a, rng, zero=True) for a in args]
    tangents[wrt] = tangent
    out, out_dot = adgen.jvp(f, args, tangents)
    assert out == pytest.approx(f(*args), rel=1e-12)
    assert out_dot == pytest.approx(_vdot(expected, tangent), rel=1e-10, abs=1e-12)


def _like(value: Any, rng: np.random.Generator, zero: bool = False) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_like(v, rng, zero) for v in value)
    if isinstance(value, np.ndarray):
        return np.zeros_like(value) if zero else rng.standard_normal(value.shape)
    return 0.0 if zero else float(rng.standard_normal())


# -- nested unpacking in for targets ---------------------------------------------------------


def layers_from_params(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h * h)


def test_mlp_training_step_params_as_a_list_of_tuples():
    """A small MLP written as people write it: per-layer (W, b) tuples, one loop."""
    rng = np.random.default_rng(0)
    params = [
        (rng.standard_normal((3, 5)) * 0.5, rng.standard_normal(5) * 0.1),
        (rng.standard_normal((5, 4)) * 0.5, rng.standard_normal(4) * 0.1),
        (rng.standard_normal((4, 2)) * 0.5, rng.standard_normal(2) * 0.1),
    ]
    x, y = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))

    def loss(params, x, y):
        h = x
        for W, b in params:
            h = np.tanh(h @ W + b)
        return np.mean((h - y) ** 2)

    g = adgen.grad(loss)(params, x, y)
    assert isinstance(g, list) and all(isinstance(layer, tuple) for layer in g)
    assert [tuple(p.shape for p in layer) for layer in g] == [
        tuple(p.shape for p in layer) for layer in params
    ]
    # every entry against central differences
    eps = 1e-6
    for i, layer in enumerate(params):
        for j, p in enumerate(layer):
            for idx in np.ndindex(p.shape):
                moved = []
                for sign in (1.0, -1.0):
                    q = [tuple(a.copy() for a in lay) for lay in params]
                    q[i][j][idx] += sign * eps
                    moved.append(loss(q, x, y))
                assert g[i][j][idx] == pytest.approx((moved[0] - moved[1]) / (2 * eps), abs=1e-8)
    check_grads(loss, params, x, y)
    # one training step lowers the loss
    stepped = [(W - 0.1 * gW, b - 0.1 * gb) for (W, b), (gW, gb) in zip(params, g)]
    assert loss(stepped, x, y) < loss(params, x, y)


def test_for_w_b_in_params_exact():
    """``sum(h)`` of ``h = tanh(h * W + b)`` layer after layer, scalars: the chain rule."""
    params = [(0.7, -0.2), (1.3, 0.4)]
    x = 0.5

    def f(params, x):
        h = x
        for W, b in params:
            h = np.tanh(h * W + b)
        return h

    (W1, b1), (W2, b2) = params
    h1 = np.tanh(x * W1 + b1)
    d1 = 1 - h1**2
    h2 = np.tanh(h1 * W2 + b2)
    d2 = 1 - h2**2
    expected = [(d2 * W2 * d1 * x, d2 * W2 * d1), (d2 * h1, d2)]
    both_modes(f, (params, x), 0, expected)
    both_modes(f, (params, x), 1, d2 * W2 * d1 * W1)


def test_params_list_built_in_the_function():
    def f(a, b):
        params = [(a, b), (b, 2.0), (a * b, a)]
        t = 0.0
        for W, c in params:
            t = t + W * c
        return t

    # t = 2ab + 2b  (a*b*a = a^2 b)
    a, b = 0.8, -1.5
    t_a = 2 * a * b + b
    both_modes(f, (a, b), 0, t_a)
    both_modes(f, (a, b), 1, a + 2.0 + a * a)


def test_enumerate_zip_nested_target_over_arrays():
    def f(u, v):
        t = 0.0
        for i, (a, b) in enumerate(zip(u, v)):
            t = t + i * a * b
        return t

    u, v = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, -6.0, 7.0])
    both_modes(f, (u, v), 0, np.arange(3.0) * v[:3])
    both_modes(f, (u, v), 1, np.r_[np.arange(3.0) * u, 0.0])


def test_enumerate_zip_nested_target_over_lists():
    def f(u, v):
        t = 0.0
        for i, (a, b) in enumerate(zip(u, v)):
            t = t + (i + 1) * a * b
        return t

    u, v = [1.0, 2.0, 3.0], [4.0, 5.0]
    both_modes(f, (u, v), 0, [4.0, 10.0, 0.0])
    both_modes(f, (u, v), 1, [1.0, 4.0])


def test_enumerate_with_start_and_zip_inside_zip():
    def f(x, ws):
        t = 0.0
        for i, (w, (a, b)) in enumerate(zip(ws, zip(x, x * 2.0)), start=1):
            t = t + i * w * a * b
        return t

    x, ws = np.array([1.0, 2.0, 3.0]), [0.5, 0.25]
    # t = sum_i (i+1) w_i 2 x_i^2 over i < 2
    both_modes(f, (x, ws), 0, np.array([1 * 0.5 * 4 * 1.0, 2 * 0.25 * 4 * 2.0, 0.0]))
    both_modes(f, (x, ws), 1, [1 * 2 * 1.0, 2 * 2 * 4.0])


def test_pairs_zipped_with_an_array():
    """A list of tuples (unrolled) zipped with an array (read by index): zip stops at the
    shortest, which only the running code knows."""

    def f(pairs, cs):
        t = 0.0
        for (a, b), c in zip(pairs, cs):
            t = t + a * b * c
        return t

    pairs = [(1.0, 2.0), (3.0, 4.0), (5.0, 6.0)]
    cs = np.array([0.5, -1.5])
    both_modes(f, (pairs, cs), 0, [(2.0 * 0.5, 1.0 * 0.5), (4.0 * -1.5, 3.0 * -1.5), (0.0, 0.0)])
    both_modes(f, (pairs, cs), 1, np.array([2.0, 12.0]))
    longer = np.array([0.5, -1.5, 2.0, 9.0])
    both_modes(f, (pairs, longer), 1, np.array([2.0, 12.0, 30.0, 0.0]))


def test_rows_of_an_array_unpacked_in_the_target():
    def f(P, cs):
        t = 0.0
        for (a, b), c in zip(P, cs):
            t = t + a * b * c
        return t

    P = np.array([[1.0, 2.0], [3.0, 4.0]])
    cs = np.array([0.5, -1.5])
    both_modes(f, (P, cs), 0, np.array([[1.0, 0.5], [-6.0, -4.5]]))
    both_modes(f, (P, cs), 1, np.array([2.0, 12.0]))


def test_unpacking_in_a_comprehension_and_a_break():
    def f(params):
        terms = [W * b for W, b in params]
        return np.sum(np.stack(terms))

    params = [(np.array([1.0, 2.0]), 3.0), (np.array([-1.0, 0.5]), 2.0)]
    both_modes(f, (params,), 0, [(np.array([3.0, 3.0]), 3.0), (np.array([2.0, 2.0]), -0.5)])

    def g(u, v):
        t = 0.0
        for i, (a, b) in enumerate(zip(u, v)):
            if i > 1:
                break
            t = t + a * b
        return t + i

    u, v = np.array([1.0, 2.0, 3.0, 4.0]), np.array([5.0, 6.0, 7.0, 8.0])
    both_modes(g, (u, v), 0, np.array([5.0, 6.0, 0.0, 0.0]))
    assert g(u, v) == adgen.value_and_grad(g)(u, v)[0]


def test_assignment_unpacks_rows_and_nested_tuples():
    def f(X):
        a, b = X[0]
        (c, d), e = X[1:], X[0, 0]
        return a * b + np.sum(c * d) * e

    X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, -1.0]])
    # a*b + (3*5 + 4*-1) * X00 = X00 X01 + (X10 X20 + X11 X21) X00
    expected = np.array([[2.0 + 11.0, 1.0], [5.0 * 1.0, -1.0 * 1.0], [3.0, 4.0]])
    both_modes(f, (X,), 0, expected)


def test_list_target_unpacks_an_array():
    def f(X):
        [a, b] = X
        a, x0 = a, b[0]
        return np.sum(a * b) * x0

    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    # sum(a * b) = 11, x0 = X[1, 0] = 3
    both_modes(f, (X,), 0, np.array([[9.0, 12.0], [3.0 + 11.0, 6.0]]))


def test_unpacking_the_wrong_number_of_items():
    def f(params):
        t = 0.0
        for W, b in params:
            t = t + W * b
        return t

    with pytest.raises(adgen.UnsupportedSyntaxError, match="unpacking 3 values into 2 names"):
        adgen.grad(f)([(1.0, 2.0, 3.0)])

    def g(X):
        a, b = X
        return np.sum(a * b)

    with pytest.raises(ValueError, match="too many values to unpack"):  # as in Python
        adgen.grad(g)(np.ones((3, 2)))


def test_second_order_through_unpacked_params():
    def f(x, params):
        h = x
        for W, b in params:
            h = np.tanh(h * W + b)
        return np.sum(h)

    params = [(np.array([0.7, -0.4]), 0.1), (np.array([1.2, 0.3]), -0.2)]
    x = np.array([0.3, -0.8])
    H = adgen.hessian(f)(x, params)
    # elementwise in x: the Hessian is diagonal, f''(x_i) by differences of the gradient
    eps = 1e-5
    g = adgen.grad(f)
    numeric = np.stack(
        [(g(x + eps * e, params) - g(x - eps * e, params)) / (2 * eps) for e in np.eye(2)]
    )
    np.testing.assert_allclose(H, numeric, rtol=1e-6, atol=1e-8)
    assert abs(H[0, 1]) < 1e-12


def _hessian_by_differences(f: Any, x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    g = adgen.grad(f)
    return np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


def rows_zipped(x):
    P = np.reshape(x, (2, 2))
    t = 0.0
    for i, (a, b) in enumerate(zip(P, P[::-1])):
        t = t + np.sum(np.sin(a) * b) * (i + 1.0)
    return t


def rows_assigned(x):
    a, b = np.reshape(x, (2, 2))
    return np.sum(np.sin(a) * b * b)


def sums_of_lists(x):
    xs = []
    for i in range(3):
        xs.append(np.sin(x * (i + 1.0)))
    return np.sum(sum(xs) ** 2) + np.sum(np.square([x[0] * x[1], x[2]])) + np.mean(xs)


def sum_of_a_generator(x):
    return sum(np.sin(v) * v for v in x) + sum(x)


@pytest.mark.parametrize("f", [rows_zipped, rows_assigned, sums_of_lists, sum_of_a_generator])
def test_second_order_through_unpacking_and_sums(f):
    x = np.array([0.3, -0.5, 0.8, 1.1])
    H = adgen.hessian(f)(x)
    np.testing.assert_allclose(H, _hessian_by_differences(f, x), rtol=1e-6, atol=1e-7)


# -- sum(...) and np.sum([...]) of differentiated values -------------------------------------


def test_builtin_sum_of_a_literal_list_broadcasts():
    def f(a, b):
        return np.sum(sum([a * a, b, 2.0]))

    a, b = 1.5, np.array([1.0, -2.0, 0.5])
    both_modes(f, (a, b), 0, 3 * 2 * a)
    both_modes(f, (a, b), 1, np.ones(3))


def test_builtin_sum_of_an_appended_list_of_arrays():
    """A scalar first, then arrays: each ``+`` broadcasts, as Python's sum does."""

    def f(a, x):
        xs = [a * a]
        for i in range(3):
            xs.append(np.sin(x) * (i + 1.0))
        return np.sum(sum(xs) ** 2)

    a, x = 0.8, np.array([0.3, -0.7])
    total = a * a + 6.0 * np.sin(x)  # sum(xs)
    both_modes(f, (a, x), 0, float(np.sum(2 * total * 2 * a)))
    both_modes(f, (a, x), 1, 2 * total * 6.0 * np.cos(x))


def test_builtin_sum_of_a_generator_and_of_a_comprehension():
    def gen(ws):
        return sum(w * w for w in ws)

    def comp(ws):
        return sum([w * w for w in ws])

    def arrays(ws):
        return np.sum(sum(w * w for w in ws))

    ws = [1.0, -2.0, 3.0]
    both_modes(gen, (ws,), 0, [2.0, -4.0, 6.0])
    both_modes(comp, (ws,), 0, [2.0, -4.0, 6.0])
    mats = (np.array([1.0, 2.0]), np.array([[0.5, -1.0], [2.0, 1.0]]))
    both_modes(arrays, (mats,), 0, (np.array([4.0, 8.0]), 2 * mats[1]))


def test_builtin_sum_with_a_differentiated_start_and_of_array_rows():
    def f(xs, s):
        return np.sum(sum(xs, s) ** 2)

    xs, s = np.array([[1.0, 2.0], [3.0, -1.0]]), np.array([0.5, 0.25])
    total = xs.sum(axis=0) + s
    both_modes(f, (xs, s), 0, np.stack([2 * total, 2 * total]))
    both_modes(f, (xs, s), 1, 2 * total)


def test_np_sum_and_mean_of_lists():
    def literal(a, b):
        return np.sum([a * a, b, 2.0])

    def built(x):
        xs = []
        for i in range(3):
            xs.append(x * (i + 1.0))
        return np.sum(xs) + np.mean(np.array(xs) * x)

    both_modes(literal, (1.5, 2.0), 0, 3.0)
    both_modes(literal, (1.5, 2.0), 1, 1.0)
    x = np.array([0.3, 0.5])
    # np.sum(xs) = 6 sum(x); mean of (i+1) x^2 over 3 rows, 2 entries = sum(x^2)
    both_modes(built, (x,), 0, 6.0 + 2.0 * x)


def test_a_list_of_tuples_built_by_appends_is_refused():
    """Its derivative would be lost (forward mode gave zero before this was refused)."""

    def f(x):
        pairs = []
        for i in range(3):
            pairs.append((x * i, x + i))
        return np.sum(np.array(pairs))

    for action in (lambda: adgen.grad(f)(1.5), lambda: adgen.jvp(f, (1.5,), (1.0,))):
        with pytest.raises(adgen.UnsupportedSyntaxError, match="a tuple of variables"):
            action()


def hidden_layers_then_output(params, X):
    h = X
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W_out, b_out = params[-1]
    return np.sum((h @ W_out + b_out) ** 2)


def test_a_slice_of_a_parameter_list_iterates_its_pairs() -> None:
    # `params[:-1]` of a list of (W, b) tuples was refused ("no derivative of getitem")
    rng = np.random.default_rng(5)
    params = [
        (rng.normal(size=(3, 4)), rng.normal(size=4)),
        (rng.normal(size=(4, 4)), rng.normal(size=4)),
        (rng.normal(size=(4, 2)), rng.normal(size=2)),
    ]
    X = rng.normal(size=(5, 3))
    check_grads(hidden_layers_then_output, params, X, wrt=(0,))


def mlp_with_starred_layers(params, x):
    *hidden, last = params
    for W, b in hidden:
        x = np.tanh(x @ W + b)
    W, b = last
    first, *_ = hidden
    return np.sum((x @ W + b) ** 2) + np.sum(first[0] ** 2)


def test_starred_unpacking_of_a_parameter_list() -> None:
    # `*hidden, last = params` (a VAE's encoder and decoder in this style) was refused
    rng = np.random.default_rng(6)
    params = [
        (rng.normal(size=(3, 4)), rng.normal(size=4)),
        (rng.normal(size=(4, 4)), rng.normal(size=4)),
        (rng.normal(size=(4, 1)), rng.normal(size=1)),
    ]
    check_grads(mlp_with_starred_layers, params, rng.normal(size=(2, 3)), wrt=(0, 1))


def starred_of_an_array(x):
    a, *rest = x
    return a * np.sum(rest)


def test_starred_unpacking_of_an_array_is_refused_with_a_hint() -> None:
    with pytest.raises(adgen.UnsupportedSyntaxError, match="known only when it runs") as info:
        adgen.grad(starred_of_an_array)(np.ones(3))
    assert "rest = xs[1:]" in (info.value.hint or "")


def tsne_kl(Y, P):
    sum_Y = np.sum(np.square(Y), 1)
    num = 1.0 / (1.0 + np.add(np.add(-2 * np.dot(Y, Y.T), sum_Y).T, sum_Y))
    np.fill_diagonal(num, 0.0)
    Q = np.maximum(num / np.sum(num), 1e-12)
    return np.sum(P * np.log(np.maximum(P, 1e-12) / Q))


def kernel_with_learned_diagonal(X, d):
    K = np.exp(-np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=2))
    np.fill_diagonal(K, np.exp(d))
    return np.linalg.slogdet(K)[1] + np.sum(K[0])


def cube_and_wide(a, b):
    c = np.tanh(a) * 1.0
    np.fill_diagonal(c, 2.0)
    w = np.outer(b, np.ones(3)).T * b[0]
    np.fill_diagonal(w, b[1])
    return np.sum(c**2) + np.sum(w * w.sum())


def test_fill_diagonal_writes_into_an_array_the_function_made() -> None:
    # np.fill_diagonal(a, v) as a statement is the write a[i, i] = v (t-SNE's zeroed diagonal,
    # a kernel matrix's learned diagonal); it had no derivative rule
    rng = np.random.default_rng(7)
    P = rng.random((5, 5))
    P = P + P.T
    np.fill_diagonal(P, 0.0)
    P /= P.sum()
    Y = rng.normal(size=(5, 2))
    check_grads(tsne_kl, Y, P, wrt=(0,))
    h = adgen.hessian(lambda y: tsne_kl(y.reshape(5, 2), P))(Y.ravel())
    np.testing.assert_allclose(h, h.T, rtol=1e-7, atol=1e-9)
    X = rng.normal(size=(4, 2))
    check_grads(kernel_with_learned_diagonal, X, rng.normal(size=4) * 0.1)
    check_grads(cube_and_wide, rng.normal(size=(3, 3, 3)), rng.normal(size=2))


def fill_argument(x):
    np.fill_diagonal(x, 0.0)
    return np.sum(x)


def fill_wrapped(x):
    y = x * 2.0
    np.fill_diagonal(y, 0.0, wrap=True)
    return np.sum(y)


def test_fill_diagonal_of_an_argument_or_wrapped_is_refused() -> None:
    with pytest.raises(adgen.UnsupportedSyntaxError, match="argument passed by the caller"):
        adgen.grad(fill_argument)(np.ones((2, 2)))
    with pytest.raises(adgen.UnsupportedSyntaxError, match="with `wrap` other than False"):
        adgen.grad(fill_wrapped)(np.ones((2, 2)))
