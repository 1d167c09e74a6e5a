"""A list built by appends, then rebound to the array made of it (``rows = np.array(rows).T``,
scikit-learn's GaussianNB): one Python name, two kinds of value. The rebinding and every use
after it get a name of their own; where that cannot be done (a nested function reads the
name, the rebinding is in a loop, an array name later made a list) the derivative is refused
by name -- before, both modes failed while computing it (list indices given a tuple)."""

import numpy as np
import pytest
from derivative_checks import check, differences

import adgen

X = np.array([0.3, -0.7, 1.1, 0.4])


def transposed(x):
    rows = []
    for i in range(3):
        rows.append(np.sin(x * (i + 1)))
    rows = np.array(rows).T
    return np.sum(rows[:, 1] * rows[:, 2]) + np.sum(rows[0] ** 2)


def stacked(x):
    parts = []
    for k in range(1, 4):
        parts.append(x**k)
    parts = np.stack(parts)
    return np.sum(parts[1, :] * parts[2]) + parts[0, 1]


def written_after(x):
    rows = []
    for i in range(3):
        rows.append(np.cos(x * i))
    rows = np.array(rows).T  # a view of a new array: no other name sees it
    rows[0] = 0.0
    return np.sum(rows**2 * x[:, None])


@pytest.mark.parametrize("f", [transposed, stacked, written_after], ids=lambda f: f.__name__)
def test_a_list_rebound_to_its_array_in_both_modes_and_at_second_order(f):
    check(f, X)
    hessian = adgen.hessian(f)(X)
    columns = np.stack([differences(lambda v: adgen.grad(f)(v)[k], X) for k in range(X.size)])
    np.testing.assert_allclose(hessian, columns, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-10, atol=1e-12)


def read_by_a_nested_function(x):
    rows = []
    for i in range(3):
        rows.append(np.sin(x * i))
    rows = np.array(rows)

    def pick(k):
        return rows[k, :]

    return np.sum(pick(1) * pick(2))


def rebound_in_a_loop(x):
    rows = []
    for i in range(3):
        rows.append(np.sin(x * i))
    for _ in range(2):
        rows = np.array(rows) * 2.0
    return np.sum(rows[1, :] * rows[2])


def array_then_list(x):
    acc = x * 2.0
    s = np.sum(acc[1:] * acc[0])
    acc = []
    for i in range(3):
        acc.append(x[i] * s)
    return acc[0] * acc[2]


@pytest.mark.parametrize(
    "f",
    [read_by_a_nested_function, rebound_in_a_loop, array_then_list],
    ids=lambda f: f.__name__,
)
def test_one_name_for_a_list_and_an_array_is_refused_by_name_in_both_modes(f):
    for derivative in (
        lambda: adgen.grad(f)(X),
        lambda: adgen.jvp(f, (X,), (np.ones(4),)),
    ):
        with pytest.raises(adgen.UnsupportedSyntaxError, match="holds a list") as caught:
            derivative()
        assert "give the new value a name of its own" in str(caught.value)
    f(X)  # (the program itself runs)


def test_scikit_learns_gaussian_naive_bayes_as_installed():
    naive_bayes = pytest.importorskip("sklearn.naive_bayes")
    rng = np.random.default_rng(0)
    data = rng.normal(size=(40, 3))
    labels = (data[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(int)
    model = naive_bayes.GaussianNB().fit(data, labels)

    def log_likelihood(z):
        return np.sum(model._joint_log_likelihood(z.reshape(5, 3))[:, 1])

    check(log_likelihood, data[:5].ravel())


def _promoted(*args):  # scipy's xp_promote: one item, or a tuple of them, as the data decide
    out = []
    for a in args:
        if np.sum(a) > 100.0:
            continue
        out.append(a * 1.0)
    return out[0] if len(out) == 1 else tuple(out)


def item_or_tuple_of_a_list(x):
    r = _promoted(x)
    return np.sum(r[1:] ** 2) + r[0]


def test_an_item_or_a_tuple_of_a_list_is_not_refused():
    # one name for `out[0]` and `tuple(out)` (a branch each): its derivative is the kind the
    # branch taken gives -- not the mixture the check refuses
    check(item_or_tuple_of_a_list, X)
