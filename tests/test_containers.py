"""Lists and tuples in both modes: literals, append, comprehensions, then np.stack / np.array /
np.concatenate / builtin sum / indexing; tuples of values as results.

A list grown with ``append`` has a list of tangents (forward mode) and a list of cotangents
(reverse mode); the adjoint of ``xs.append(v)`` hands the last cotangent to ``v``.
"""

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def trajectory_stacked(x0, k):
    xs = []
    x = x0
    for t in range(5):
        x = x * 0.9 + k * np.sin(x)
        xs.append(x)
    return np.sum(np.stack(xs) ** 2)


def comprehension_then_array(x):
    ys = [np.sin(x * i) for i in range(4)]
    return np.sum(np.array(ys) * np.arange(4.0)[:, None])


def comprehension_with_condition_concatenated(x):
    parts = [x[i:] * i for i in range(4) if i % 2 == 1]
    return np.sum(np.concatenate(parts) ** 2)


def literal_then_append(a, b):
    zs = [a, b]
    zs.append(a * b)
    return np.sum(np.stack(zs, axis=1) * np.array([1.0, -2.0, 3.0]))


def index_last_and_first_and_builtin_sum(x):
    hs = []
    h = x
    for t in range(3):
        h = np.tanh(h * 1.5 + 0.1)
        hs.append(h)
    return np.sum(hs[-1] * hs[0]) + np.sum(sum(hs)) + len(hs)


def scalar_list_summed(a):
    vals = []
    for i in range(4):
        vals.append(a * i + a * a)
    return sum(vals)


def appended_inside_branch(x):
    kept = []
    for i in range(x.shape[0]):
        if x[i] > 0:
            kept.append(x[i] * x[i])
        else:
            kept.append(np.sin(x[i]))
    return sum(kept)


def helper_returns_a_list(x):
    def features(v):
        return [v, v * v, np.sin(v)]

    f = features(x)
    return np.sum(np.stack(f) * 2.0)


def tuple_literals_stacked(x, y):
    return np.sum(np.array((x * y, x + y, 1.0)) ** 2)


V = np.array([0.3, -0.4, 0.8, -1.1])
CASES = [
    (trajectory_stacked, (np.array([0.3, -0.4]), 0.7)),
    (comprehension_then_array, (V,)),
    (comprehension_with_condition_concatenated, (V,)),
    (literal_then_append, (V[:2], V[2:])),
    (index_last_and_first_and_builtin_sum, (V,)),
    (scalar_list_summed, (0.7,)),
    (appended_inside_branch, (V,)),
    (helper_returns_a_list, (V,)),
    (tuple_literals_stacked, (0.4, 1.3)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_containers_both_modes_match_finite_differences(fn, args):
    check_grads(fn, *args)
    value, _ = adgen.vjp(fn, *args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)


def test_scalar_list_gradient_exact():
    # sum over i of (a*i + a*a) = 6a + 4a^2 -> 6 + 8a
    assert adgen.grad(scalar_list_summed)(0.7) == pytest.approx(6.0 + 8.0 * 0.7)


def test_append_adjoint_hands_the_last_cotangent_back():
    src = adgen.source(trajectory_stacked)
    assert "rt.split_last(xs_bar)" in src and "xs.pop()" in src
    fsrc = adgen.source(trajectory_stacked, mode="forward")
    assert "xs_dot.append(x_dot)" in fsrc


def test_comprehension_variables_do_not_leak():
    def f(x):
        i = 10.0
        ys = [x * i for i in range(3)]
        return np.sum(np.array(ys)) * i

    # i is still 10.0 after the comprehension, as in Python 3
    assert adgen.grad(f)(np.ones(1))[0] == pytest.approx(3.0 * 10.0)
    check_grads(f, np.ones(2))


def test_appending_to_an_argument_is_refused():
    def f(x, acc):
        acc.append(x)
        return x

    with pytest.raises(adgen.UnsupportedSyntaxError, match="append to `acc`"):
        adgen.grad(f)(1.0, [])


# -- dicts, lists and tuples as arguments --------------------------------------------------------


def mlp_with_params_dict(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"]
    return np.mean((out - y) ** 2)


def layers_in_a_list(ws, x):
    for w in ws:
        x = np.tanh(x @ w)
    return np.sum(x * x)


def nested_tree(p, x):
    a, (b, c) = p["pair"][0], p["pair"][1]
    return np.sum(a * x + b * c) + p["scale"] * np.sum(x)


def test_gradient_of_a_params_dict_is_a_dict(rng):
    params = {
        "W1": rng.standard_normal((3, 4)),
        "b1": np.zeros(4),
        "W2": rng.standard_normal((4, 1)),
    }
    x, y = rng.standard_normal((5, 3)), rng.standard_normal((5, 1))
    g = adgen.grad(mlp_with_params_dict)(params, x, y)
    assert isinstance(g, dict) and list(g) == ["W1", "b1", "W2"]
    assert all(g[k].shape == params[k].shape for k in params)
    # against central differences, key by key
    eps = 1e-6
    for k in params:
        for idx in np.ndindex(params[k].shape):
            plus = {kk: vv.copy() for kk, vv in params.items()}
            minus = {kk: vv.copy() for kk, vv in params.items()}
            plus[k][idx] += eps
            minus[k][idx] -= eps
            numeric = (mlp_with_params_dict(plus, x, y) - mlp_with_params_dict(minus, x, y)) / (
                2 * eps
            )
            assert g[k][idx] == pytest.approx(numeric, abs=1e-7)


def test_gradient_of_a_list_of_arrays_is_a_list(rng):
    ws = [rng.standard_normal((3, 3)) * 0.5 for _ in range(3)]
    x = rng.standard_normal(3)
    g = adgen.grad(layers_in_a_list)(ws, x)
    assert isinstance(g, list) and len(g) == 3
    v = [rng.standard_normal((3, 3)) for _ in range(3)]
    eps = 1e-6
    numeric = (
        layers_in_a_list([w + eps * d for w, d in zip(ws, v)], x)
        - layers_in_a_list([w - eps * d for w, d in zip(ws, v)], x)
    ) / (2 * eps)
    assert sum(np.sum(gi * vi) for gi, vi in zip(g, v)) == pytest.approx(numeric, rel=1e-6)


def test_nested_tree_jvp_and_vjp_keep_the_structure():
    p = {"pair": (np.array([1.0, 2.0]), (0.5, np.array([3.0, -1.0]))), "scale": 2.0}
    x = np.array([0.3, 0.7])
    out, pullback = adgen.vjp(nested_tree, p, x)
    gp, gx = pullback(1.0)
    assert isinstance(gp, dict) and isinstance(gp["pair"], tuple)
    np.testing.assert_allclose(gp["pair"][0], x)
    assert gp["pair"][1][0] == pytest.approx(2.0)  # d/db sum(b * c) = sum(c)
    np.testing.assert_allclose(gp["pair"][1][1], [0.5, 0.5])
    assert gp["scale"] == pytest.approx(1.0)
    np.testing.assert_allclose(gx, p["pair"][0] + 2.0)
    tangent = {"pair": (np.ones(2), (1.0, np.zeros(2))), "scale": 0.0}
    _, t = adgen.jvp(nested_tree, (p, x), (tangent, None))
    assert t == pytest.approx(np.sum(x) + np.sum(p["pair"][1][1]))


def test_tree_tangent_of_the_wrong_structure_is_refused():
    p = {"pair": (np.ones(2), (1.0, np.ones(2))), "scale": 1.0}
    with pytest.raises(adgen.ShapeMismatchError, match="structure of `p`"):
        adgen.jvp(nested_tree, (p, np.ones(2)), ({"scale": 1.0}, None))


def test_unknown_key_of_a_dict_argument_is_refused():
    def f(params):
        return params["missing"] * 2.0

    with pytest.raises(adgen.UnsupportedSyntaxError, match="its keys: 'a'"):
        adgen.grad(f)({"a": 1.0})


def dict_result(p, x):
    return {"W": p["W"] * x, "b": np.sin(p["b"])}


def test_forward_mode_of_a_dict_result_gives_a_dict_of_tangents() -> None:
    """The tangent of a dict result is the dict of its values' tangents (it was a silent
    zero, rt.zeros_like of the dict); reverse mode refuses a dict result by name."""
    p = {"W": np.array([1.0, -2.0, 0.5]), "b": np.array([0.3, 1.1])}
    x = np.arange(3.0)
    t = {"W": np.array([0.5, 1.0, -1.0]), "b": np.array([2.0, -0.5])}
    out, tangent = adgen.jvp(dict_result, (p, x), (t, None))
    assert set(tangent) == {"W", "b"}
    np.testing.assert_allclose(tangent["W"], t["W"] * x)
    np.testing.assert_allclose(tangent["b"], np.cos(p["b"]) * t["b"])
    np.testing.assert_allclose(out["b"], np.sin(p["b"]))
    with pytest.raises(adgen.UnsupportedSyntaxError, match="returning a dict"):
        adgen.vjp(dict_result, p, x)


def test_tuple_of_a_list_grown_in_nested_loops():
    # `tuple(box)` of a list appended in a loop inside a loop (fuzzer seed 20261202, program
    # 279): the list's rule -- "no derivative rule for `tuple`" before
    def f(x):
        out = 0.0
        for i in range(3):
            box = []
            for v in (x, x * 2.0, np.sin(x)):
                box.append(v * (0.5 + i))
            items = tuple(box)
            first, _, last = items
            out = out + np.sum(np.stack(items) ** 2) + np.sum(first * last) + len(items)
        return out

    x = np.array([0.3, -0.5, 0.8])
    h = 1e-6
    want = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(adgen.grad(f)(x), want, rtol=1e-6, atol=1e-8)
    t = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(adgen.jvp(f, (x,), (t,))[1], want @ t, rtol=1e-6)
    g = adgen.grad(f)
    H = np.stack([(g(x + 1e-5 * e) - g(x - 1e-5 * e)) / 2e-5 for e in np.eye(3)])
    np.testing.assert_allclose(adgen.hessian(f)(x), H, rtol=1e-5, atol=1e-6)


def _joined(*args, doubled=False):
    """In the style of SciPy's xp_result_type: a list filtered by a comprehension, then
    appended to, then read by a `try` whose `except` goes on."""
    kept = [arg for arg in args if arg is not None]
    if doubled:
        kept.append(kept[0] * 2.0)
    try:
        return np.concatenate(kept)
    except ValueError:
        return kept[0]


def joined_energy(x, w=None):
    return np.sum(_joined(x, w, doubled=True) ** 2)


def test_appending_to_a_list_a_comprehension_made_known_item_by_item():
    """The comprehension's filter decided when transforming (an array is not None) leaves
    a list known item by item; an append makes it a real list first (the derivative code
    once appended to a display and left the name unbound). |[x, 2x]|^2 = 5 |x|^2."""
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(adgen.grad(joined_energy)(x), 10 * x)
    v = np.array([0.5, 1.0, -1.0])
    assert adgen.jvp(joined_energy, (x,), (v,))[1] == pytest.approx(10 * x @ v)


def extended_energy(x, n=3):
    out = [x[0]]
    out.extend((x[1] * 2.0, x[2]))
    out.extend([x[k] * k for k in range(1, n) if k != 2])
    return np.sum(np.stack(out) ** 2)


def test_extend_by_a_display_and_by_a_comprehension_is_the_appends_it_makes():
    # out = [x0, 2 x1, x2, x1]: sum of squares x0^2 + 5 x1^2 + x2^2
    x = np.array([0.5, 1.5, -2.0])
    want = np.array([2 * x[0], 10 * x[1], 2 * x[2]])
    np.testing.assert_allclose(adgen.grad(extended_energy)(x), want)
    v = np.array([1.0, -1.0, 0.5])
    assert adgen.jvp(extended_energy, (x,), (v,))[1] == pytest.approx(want @ v)
