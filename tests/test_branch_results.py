"""A helper's result bound in the branches of an ``if``, then updated in place (issue 34,
part 6).

scikit-learn's ``safe_sparse_dot`` binds ``ret = a @ b`` in one branch and ``ret =
np.tensordot(...)`` in another (a third raises for sparse input), then returns it; its
callers write ``activation = safe_sparse_dot(activation, W); activation += b`` (the forward
pass of ``MLPRegressor.predict``). Each branch makes a new array, so the update in place is
of an array no other name sees. adgen used to refuse it ("may be a view of a variable
rebound in a loop or branch"). Now a value bound in every branch to a new array (a branch
that raises leaves none) counts as new. The second half are helpers where one branch
returns the argument itself, or binds nothing: the update must then be refused or right.
"""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import differences

import adgen
from adgen.errors import AdgenError

W = [np.linspace(-1.0, 1.0, 12).reshape(3, 4), np.linspace(0.5, -0.5, 8).reshape(4, 2)]
B = [np.linspace(0.1, 0.4, 4), np.array([0.3, -0.2])]


def dot_by_rank(a, b):
    if a.ndim > 2 or b.ndim > 2:
        if isinstance(a, list):
            raise TypeError("no lists")
        ret = np.tensordot(a, b, axes=[-1, -2])
    else:
        ret = a @ b
    return ret


def forward_in_place(x):
    activation = x
    for i in range(2):
        activation = dot_by_rank(activation, W[i])
        activation += B[i]
        if i == 0:
            activation = np.tanh(activation)
    return np.sum(activation**2)


def forward_in_place_ref(x):
    h = np.tanh(x @ W[0] + B[0])
    return np.sum((h @ W[1] + B[1]) ** 2)


def straight_line_in_place(x):
    h = dot_by_rank(x, W[0])
    h *= 2.0
    h += B[0]
    return np.sum(np.sin(h))


def straight_line_in_place_ref(x):
    return np.sum(np.sin(2.0 * (x @ W[0]) + B[0]))


def scaled(a, c):
    if c > 0:
        out = a * c
    else:
        out = a / -c
    return out


def nested_branches_in_place(x, c):
    y = scaled(x, c)
    y[0] = 0.0
    y -= 1.0
    return np.sum(y**3)


def nested_branches_in_place_ref(x, c):
    y = x * c if c > 0 else x / -c
    return np.sum(np.concatenate([[-1.0], y[1:] - 1.0]) ** 3)


SOUND = [
    (forward_in_place, forward_in_place_ref, np.linspace(-0.5, 0.7, 6).reshape(2, 3)),
    (straight_line_in_place, straight_line_in_place_ref, np.linspace(0.2, 0.9, 6).reshape(2, 3)),
]


@pytest.mark.parametrize("f, ref, x", SOUND, ids=[f.__name__ for f, _, _ in SOUND])
def test_update_of_a_helper_result_bound_in_branches_is_exact(f, ref, x):
    before = x.copy()
    expected = adgen.grad(ref)(x)
    np.testing.assert_allclose(adgen.grad(f)(x), expected, rtol=1e-12, atol=1e-14)
    assert np.array_equal(x, before)  # (the caller's array is never written)
    e = np.cos(np.arange(x.size)).reshape(x.shape)
    value, t = adgen.jvp(f, (x,), (e,))
    assert value == pytest.approx(ref(x), rel=1e-13)
    assert t == pytest.approx(np.sum(expected * e), rel=1e-11)
    np.testing.assert_allclose(adgen.hessian(f)(x), adgen.hessian(ref)(x), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("c", [2.0, -4.0])
def test_item_write_into_a_result_of_either_branch(c):
    x = np.array([0.5, 1.5, -0.7])
    g = adgen.grad(nested_branches_in_place)(x, c)
    np.testing.assert_allclose(g, adgen.grad(nested_branches_in_place_ref)(x, c), rtol=1e-12)


def same_or_scaled(a, c):
    if c > 0:
        out = a  # the caller's own array in this branch
    else:
        out = a * 2.0
    return out


def update_of_same_or_scaled(x, c):
    y = same_or_scaled(x, c)
    y += 1.0
    return np.sum(y * x)


def maybe_scaled(a, c):
    out = a
    if c < 0:
        out = a * 2.0
    return out


def update_of_maybe_scaled(x, c):
    y = maybe_scaled(x, c)
    y *= 3.0
    return np.sum(y * x)


@pytest.mark.parametrize("f", [update_of_same_or_scaled, update_of_maybe_scaled])
@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_branch_that_keeps_the_argument_is_never_taken_for_new(f, c):
    # where the branch run gives back the caller's array, `+=` would change it: adgen must
    # refuse (at transform or when the code runs), never return a gradient of other code
    if not _refused_or_right(f, np.array([0.3, -1.2, 2.0]), c):
        assert c < 0  # (with c > 0 the update writes into x: never run without a refusal)


def test_mlp_forward_pass_of_scikit_learn_as_installed():
    neural = pytest.importorskip("sklearn.neural_network")
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(12, 3)), rng.normal(size=12)
    m = neural.MLPRegressor(hidden_layer_sizes=(4,), max_iter=30, random_state=0)
    with pytest.warns(Warning):  # (not converged in 30 iterations)
        m.fit(X, y)
    z = rng.normal(size=(2, 3))

    def f(z):
        return np.sum(m.predict(z))

    def ref(z):  # the same network written out (ReLU hidden layer, identity output)
        h = np.maximum(z @ m.coefs_[0] + m.intercepts_[0], 0.0)
        return np.sum(h @ m.coefs_[1] + m.intercepts_[1])

    assert f(z) == pytest.approx(ref(z), rel=1e-13)
    np.testing.assert_allclose(adgen.grad(f)(z), adgen.grad(ref)(z), rtol=1e-12, atol=1e-14)


def both_names(a, c):
    if c > 0:
        ret = a * 2.0
        other = ret
    else:
        ret = a + 1.0
        other = ret
    return ret, other


def update_seen_by_a_second_name(x, c):
    r, o = both_names(x, c)
    r += 1.0
    return np.sum(r * o)


def update_seen_by_a_view(x, c):
    r = scaled(x, c)
    o = r[1:]
    r += 1.0
    return np.sum(o * o)


@pytest.mark.parametrize("f", [update_seen_by_a_second_name, update_seen_by_a_view])
@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_new_array_another_name_sees_is_never_updated_unseen(f, c):
    # the branches make new arrays, but a second name or a view sees the one updated: the
    # update changes what it reads too, which adgen must refuse or follow, never miss
    _refused_or_right(f, np.array([0.5, 1.0, 2.0]), c)


def _refused_or_right(f, x, c):
    """Refused by adgen (True), or differentiated to what Python computes, checked against
    central differences (False)."""
    try:
        g = adgen.grad(f)(x, c)
    except AdgenError:
        return True
    np.testing.assert_allclose(g, differences(lambda z: f(z, c), x), rtol=1e-6)
    return False
