"""Dicts the function builds key by key in straight-line code -- ``params = {}``, then
``params["gamma"] = ...`` (for each name of a tuple written in the function, or of a set
of names known when transforming), then ``kernel(X, **params)`` -- are known key by key:
each write makes the next value of the dict. Before, every such write was refused as "an
in-place write into a possible view". A key written in a loop or branch decided when the
code runs is refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import differences

import adgen


class Settings:
    gamma = 0.5
    coef0 = 1.5


SETTINGS = Settings()
NAMES = ("gamma", "coef0")
NAME_SET = frozenset(NAMES)


def kernel(x, gamma=1.0, coef0=0.0, scale=1.0):
    return scale * np.exp(-gamma * x**2) + coef0 * x


def written_then_read(x):
    params = {}
    params["gamma"] = 0.5 * np.sum(x)
    params["scale"] = 2.0
    return np.sum(kernel(x, gamma=params["gamma"], scale=params["scale"]))


def spread_into_a_call(x):
    params = dict(scale=3.0)
    for name in NAMES:
        params[name] = getattr(SETTINGS, name)
    return np.sum(kernel(x, **params))


def from_a_set_of_names(x):
    params = {}
    for name in NAME_SET:
        params[name] = getattr(SETTINGS, name)
    return np.sum(kernel(x, **params))


def updated_and_asked(x):
    totals = {"sq": 0.0, "sin": 0.0}
    totals["sq"] += np.sum(x**2)
    totals["sin"] += np.sum(np.sin(x))
    totals["sq"] *= 2.0
    extra = totals.get("missing", 1.0) + ("sin" in totals) + len(totals)
    return totals["sq"] * totals["sin"] + extra


class KernelModel:
    """scikit-learn's ``Nystroem._get_kernel_params``: an option that defaults to None made
    a dict, the attributes a kernel takes that are set written into it, then returned."""

    kernel = "poly"
    kernel_params = None
    gamma = 0.5
    degree = None
    coef0 = 1.5

    def params(self):
        params = self.kernel_params
        if params is None:
            params = {}
        if not callable(self.kernel) and self.kernel != "precomputed":
            for name in KERNEL_NAMES:
                if getattr(self, name) is not None:
                    params[name] = getattr(self, name)
        return params


KERNEL_NAMES = frozenset(["gamma", "degree", "coef0"])
MODEL = KernelModel()


def option_defaulting_to_a_dict(x):
    params = MODEL.params()
    assert len(params) == 2  # (gamma and coef0: degree is None)
    return np.sum(kernel(x, **params)) * len(params)


CASES = [written_then_read, spread_into_a_call, from_a_set_of_names, updated_and_asked]
CASES += [option_defaulting_to_a_dict]
X = np.array([0.3, -1.2, 0.7])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_dict_built_key_by_key_in_both_modes(f):
    want = differences(f, X)
    np.testing.assert_allclose(adgen.grad(f)(X), want, rtol=1e-7, atol=1e-9)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(adgen.jvp(f, (X,), (v,))[1], want @ v, rtol=1e-7, atol=1e-9)
    assert adgen.value_and_grad(f)(X)[0] == pytest.approx(f(X))


def test_dict_built_key_by_key_at_second_order():
    H = adgen.hessian(updated_and_asked)(X)
    g = adgen.grad(updated_and_asked)
    want = np.stack([(g(X + 1e-5 * e) - g(X - 1e-5 * e)) / 2e-5 for e in np.eye(3)])
    np.testing.assert_allclose(H, want, rtol=1e-6, atol=1e-8)


def keys_in_a_runtime_loop(x):
    d = {}
    for i in range(x.shape[0]):
        d["last"] = x[i]
    return d["last"] ** 2


def keys_in_a_runtime_branch(x):
    d = {"a": 1.0}
    if np.sum(x) > 0:
        d["a"] = np.sum(x)
    return d["a"] ** 2


@pytest.mark.parametrize(
    "f", [keys_in_a_runtime_loop, keys_in_a_runtime_branch], ids=lambda f: f.__name__
)
def test_a_key_written_where_the_code_decides_is_refused_by_name(f):
    # (the branch taken: a refusal in a branch not taken is made only if it runs)
    with pytest.raises(adgen.AdgenError, match="writing a key of the dict"):
        adgen.grad(f)(np.abs(X))


def passed_on(x):
    d = {}
    d["a"] = x
    _fill(d)
    return np.sum(d["a"] * d["b"])


def _fill(d):
    d["b"] = 2.0


def test_a_dict_passed_on_is_refused_or_right():
    try:
        got = adgen.grad(passed_on)(X)
    except adgen.AdgenError:
        return
    np.testing.assert_allclose(got, differences(passed_on, X), rtol=1e-7)


BOOLEAN_METRICS = ["dice", "jaccard"]


def _distances(X, metric="euclidean"):
    dtype = bool if metric in BOOLEAN_METRICS else "infer_float"
    if dtype is bool:  # (scikit-learn's pairwise_distances: an option, then a class test)
        X = X.astype(bool).astype(float)
    return np.sum(X**2)


def option_then_class_test(x, metric="euclidean"):
    return _distances(x * 3.0, metric)


def option_then_class_test_passed_on(x):
    return _distances(x * 3.0, metric="mahalanobis")


@pytest.mark.parametrize(
    "f", [option_then_class_test, option_then_class_test_passed_on], ids=lambda f: f.__name__
)
def test_is_of_a_class_or_an_option_in_both_modes(f):
    np.testing.assert_allclose(adgen.grad(f)(X), 18.0 * X, rtol=1e-12)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(adgen.jvp(f, (X,), (v,))[1], 18.0 * X @ v, rtol=1e-12)


def test_a_dict_option_given_is_not_written_into():
    """With the option given (a dict of the caller's), the writes would change the caller's
    dict: refused by name, never taken for a new dict."""
    given = KernelModel()
    given.kernel_params = {"scale": 2.0}

    def f(x):
        return np.sum(kernel(x, **given.params()))

    with pytest.raises(adgen.AdgenError, match="params"):
        adgen.grad(f)(X)
    assert given.kernel_params == {"scale": 2.0}


def _with_options(x, gamma):
    kw = {"gamma": gamma}
    kw.update(scale=2.0)
    extra = {"coef0": 0.5}
    kw.update(extra)
    kw["gamma"] = kw["gamma"] * 2.0
    return np.sum(kernel(x, **kw))


def updated_keyword_arguments(x):
    return _with_options(x, 0.25 * np.sum(x))


def test_a_dict_updated_key_by_key():
    """A dict built key by key, updated from keywords and from another such dict, then
    written and spread: known key by key, in both modes."""
    want = differences(updated_keyword_arguments, X)
    np.testing.assert_allclose(adgen.grad(updated_keyword_arguments)(X), want, rtol=1e-7)
    v = np.array([1.0, -2.0, 0.5])
    got = adgen.jvp(updated_keyword_arguments, (X,), (v,))[1]
    np.testing.assert_allclose(got, want @ v, rtol=1e-7)


OUTSIDE_OPTIONS = {"coef0": 1.0}


def _with_outside_options(x, gamma):
    kw = {"gamma": gamma}
    kw.update(OUTSIDE_OPTIONS)  # (a dict of the module's: its keys may change)
    return np.sum(kernel(x, **kw))


def test_an_update_from_a_dict_not_known_key_by_key_is_refused_by_name():
    with pytest.raises(adgen.AdgenError, match="updating the dict `kw`"):
        adgen.grad(lambda x: _with_outside_options(x, 0.5 * np.sum(x)))(X)


NAME_SET_3 = frozenset(["gamma", "coef0", "scale"])


def keys_written_while_reading_the_dict(x):
    d = {}
    for k in NAME_SET_3:
        if len(d) < 2:  # (which keys are written depends on the set's order)
            d[k] = 1.0
    return np.sum(x) * len(d)


def values_reading_the_dict(x):
    d = {}
    for k in NAME_SET_3:
        d[k] = len(d) * 1.0  # (each value depends on the set's order)
    return np.sum(x) * d["gamma"]


@pytest.mark.parametrize(
    "f", [keys_written_while_reading_the_dict, values_reading_the_dict], ids=lambda f: f.__name__
)
def test_a_loop_over_a_set_reading_the_dict_it_writes_is_refused_by_name(f):
    """A set's order may differ from one process to the next (string hashing), and code made
    in one may be read from the disk cache in another: a loop whose result depends on that
    order is not unrolled, and its writes are refused by name."""
    with pytest.raises(adgen.AdgenError, match="writing a key of the dict"):
        adgen.grad(f)(X)


def keys_after_an_early_return(x):
    # (fuzzer seed 20261901, program 79: the rest of the function after an early return is
    # one path's straight-line code, where the dict is made and written)
    if np.sum(x) > 100.0:
        return np.sum(x)
    box = {}
    box["first"] = np.sin(x)
    box["second"] = box["first"] * x
    for _ in range(2):  # (a loop after the writes: the items keep their values)
        x = np.tanh(x)
    return np.sum(box["second"] + x)


def test_a_dict_made_and_written_after_an_early_return_is_known_key_by_key():
    for point in (X, X + 50.0):
        np.testing.assert_allclose(
            adgen.grad(keys_after_an_early_return)(point),
            differences(keys_after_an_early_return, point),
            rtol=1e-6,
            atol=1e-8,
        )


# A dict made in a block -- a loop's body, a branch, the statements after a function chosen
# in a branch (copied into both paths) -- and read only after it is made in that block is
# built in that block's straight-line code, as one at the top level is (fuzzer seed
# 20261201, program 939: refused before as "an in-place write into a possible view").


def made_in_each_pass(x):
    out = 0.0
    for i in range(3):
        box = {}
        box["scaled"] = x * (i + 1.0)
        box["shifted"] = box["scaled"] + 0.5
        out = out + np.sum(np.sin(box["shifted"]) * box["scaled"])
    return out


def made_in_a_branch(x):
    if np.sum(x) > 0:
        parts = {"base": x**2}
        parts["extra"] = np.tanh(parts["base"])
        y = parts["base"] + parts["extra"]
    else:
        y = np.cos(x)
    return np.sum(y * x)


def made_after_a_function_chosen_in_a_branch(x):
    act = np.tanh if np.sum(x) > 0 else np.sin
    h = act(x)
    box = {}
    box["first"] = h * 1.25
    return np.sum(box["first"] * h)


def made_in_a_while_loop_and_spread(x):
    out, k = 0.0, 0
    while k < 3:
        kw = {}
        kw["gamma"] = 0.5 + k
        kw["scale"] = np.sum(x)
        out = out + np.sum(kernel(x, **kw))
        k = k + 1
    return out


MADE_IN_BLOCKS = [
    made_in_each_pass,
    made_in_a_branch,
    made_after_a_function_chosen_in_a_branch,
    made_in_a_while_loop_and_spread,
]


@pytest.mark.parametrize("f", MADE_IN_BLOCKS, ids=lambda f: f.__name__)
def test_a_dict_made_in_a_block_in_both_modes_and_at_second_order(f):
    for point in (X, -X):  # (both branches)
        want = differences(f, point)
        np.testing.assert_allclose(adgen.grad(f)(point), want, rtol=1e-6, atol=1e-8)
        v = np.array([1.0, -2.0, 0.5])
        np.testing.assert_allclose(adgen.jvp(f, (point,), (v,))[1], want @ v, rtol=1e-6, atol=1e-8)
        g = adgen.grad(f)
        H = np.stack([(g(point + 1e-5 * e) - g(point - 1e-5 * e)) / 2e-5 for e in np.eye(3)])
        np.testing.assert_allclose(adgen.hessian(f)(point), H, rtol=1e-5, atol=1e-6)


def made_in_a_pass_read_after_the_loop(x):
    for i in range(3):
        box = {}
        box["a"] = x * i
    return np.sum(box["a"] ** 2)


def made_in_a_pass_written_in_a_branch(x):
    out = 0.0
    for i in range(3):
        box = {"a": x}
        if i > 0:
            box["a"] = x * i
        out = out + np.sum(box["a"] ** 2)
    return out


@pytest.mark.parametrize(
    "f",
    [made_in_a_pass_read_after_the_loop, made_in_a_pass_written_in_a_branch],
    ids=lambda f: f.__name__,
)
def test_a_dict_made_in_a_block_and_used_beyond_it_is_refused(f):
    with pytest.raises(adgen.UnsupportedSyntaxError, match="`box`"):
        adgen.grad(f)(X)


# ``d[k] += v`` of a slot holding an array calls the array's ``__iadd__``: Python changes
# that array in place, for every name that sees it. adgen lowered it as ``d[k] = d[k] + v``
# whatever the slot held: a wrong value and gradient where the array was an argument or
# another name's (the caller's `x` below is doubled in place). Now such an update is refused
# by name; one of an array the function made and no one else sees is still lowered.


def slot_holding_the_argument(x):
    box = {"a": x}
    box["a"] += x
    return np.sum(box["a"] * x)


def slot_seen_by_another_name(x):
    y = x * 1.0
    box = {"a": y}
    box["a"] *= 3.0
    return np.sum(box["a"] * y)


def slot_seen_by_a_view(x):
    box = {"a": x * 1.0}
    head = box["a"][:2]
    box["a"] += 1.0
    return np.sum(head) + np.sum(box["a"])


def slot_seen_by_another_slot(x):
    box = {"a": x * 1.0}
    box["b"] = box["a"]
    box["a"] += 1.0
    return np.sum(box["b"] ** 2)


@pytest.mark.parametrize(
    "f",
    [
        slot_holding_the_argument,
        slot_seen_by_another_name,
        slot_seen_by_a_view,
        slot_seen_by_another_slot,
    ],
    ids=lambda f: f.__name__,
)
def test_an_update_in_place_of_a_slot_others_see_is_refused_by_name(f):
    with pytest.raises(adgen.UnsupportedSyntaxError, match=r"in-place update of `box\['a'\]`"):
        adgen.grad(f)(X.copy())


def slot_made_here(x):
    box = {"a": x * 1.0}
    total = np.sum(box["a"])
    box["a"] += 1.0
    box["a"] *= np.cos(x)
    return total + np.sum(box["a"] ** 2)


def test_an_update_in_place_of_a_slot_made_here_is_lowered():
    want = differences(slot_made_here, X)
    np.testing.assert_allclose(adgen.grad(slot_made_here)(X), want, rtol=1e-6, atol=1e-8)
    assert adgen.value_and_grad(slot_made_here)(X)[0] == pytest.approx(slot_made_here(X))
