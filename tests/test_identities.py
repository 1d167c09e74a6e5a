"""Identity tests and type tests of the caller's arguments decided when transforming (issue 34).

Library validation code tests ``Y is X``, ``isinstance(X, np.ndarray)``, ``getattr(X, "dtype",
None)``, ``X.dtype == np.float32``, chained comparisons and helpers that only ``return`` or
raise; adgen follows the arguments through copies, knows their kinds when the code is made
for them, and lowers only the path Python takes.
"""

from __future__ import annotations

import logging
import numbers
import random

import numpy as np
import pytest

import adgen
from adgen.backend.codeopt.drop_copies import drop_copies
from adgen.errors import UnsupportedSyntaxError

LOG = logging.getLogger("adgen.tests")
X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
Y = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 0.25], [2.0, 1.0, 0.0]])


def _check(x, y):
    """A validation helper in the style of scikit-learn's check_pairwise_arrays."""
    if y is x or y is None:
        x = y = np.asarray(x, dtype=float)
    else:
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
    return x, y


def kernel(x, y=None):
    x, y = _check(x, y)
    if y is x:
        return np.sum((x @ x.T) ** 2) * 0.5  # (the same value by a shortcut)
    return np.sum((x @ y.T) ** 2)


def both_modes(f, x, *rest):
    """The gradient of ``f`` w.r.t. its first argument, checked against forward mode."""
    g = adgen.grad(f)(x, *rest)
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    zeros = tuple(np.zeros_like(r) for r in rest)  # (every argument given a tangent)
    np.testing.assert_allclose(adgen.jvp(f, (x, *rest), (v, *zeros))[1], np.sum(g * v))
    return g


def test_a_differentiated_argument_is_no_other_object():
    g = both_modes(kernel, X, Y)
    np.testing.assert_allclose(g, 2 * (X @ Y.T) @ Y)


def test_the_same_argument_twice_is_still_a_value_of_its_own():
    """grad(f)(A, A): the derivative w.r.t. the first argument holds the second fixed, as
    finite differences (which perturb a copy) and tracers see it."""
    g = both_modes(kernel, X, X)
    np.testing.assert_allclose(g, 2 * (X @ X.T) @ X)


def kernel_of_one(x):
    return kernel(x)


def test_one_object_through_copies_is_itself():
    """``x = y = v`` then ``y is x``: one object (``y`` defaults to None in the helper)."""
    g = both_modes(kernel_of_one, X)
    np.testing.assert_allclose(g, 2 * (X @ X.T) @ X)


def test_two_arguments_neither_differentiated_are_tested_when_the_code_runs():
    def f(w, a, b):
        return w * (1.0 if a is b else 2.0)

    grad_w = adgen.grad(f)
    assert grad_w(3.0, X, X) == 1.0
    assert grad_w(3.0, X, Y) == 2.0


def test_identity_of_a_new_array_and_an_argument_is_decided():
    def f(x):
        z = np.sin(x)
        if z is x:
            raise AssertionError("never")
        return np.sum(z)

    np.testing.assert_allclose(adgen.grad(f)(X), np.cos(X))


def test_identity_adgen_cannot_follow_is_still_refused():
    def f(x, n):
        z = x
        for _ in range(n):
            z = z * 2.0
        if z is x:
            return np.sum(x)
        return np.sum(z)

    with pytest.raises(UnsupportedSyntaxError, match="`is` between values"):
        adgen.grad(f)(X, 2)


def _validated(x):
    """Type tests of the caller's argument, as libraries write them."""
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)  # (never reached for an array)
    if getattr(x, "__dataframe__", None) is not None:
        raise TypeError("a dataframe")
    if hasattr(x, "fit") and callable(x.fit):
        raise TypeError("an estimator")
    if x.dtype == np.float32 or x.dtype.kind == "c":
        kind = np.float32
    else:
        kind = float
    if not isinstance(x.shape[0], numbers.Integral):
        raise TypeError("no length")
    if x.ndim == 1:
        x = x.reshape(-1, 1)
    return x, kind


def test_type_tests_of_arguments_are_decided_by_their_kinds():
    def f(x):
        x, kind = _validated(x)
        return np.sum(np.tanh(x.astype(kind)))

    for x in (X, X[0]):
        g = both_modes(f, x)
        np.testing.assert_allclose(g, 1.0 - np.tanh(x) ** 2)


def test_chained_comparisons():
    def f(x, lo, hi):
        if lo < 0.0 <= hi:
            return np.sum(x**2)
        return np.sum(x)

    np.testing.assert_allclose(adgen.grad(f)(X, -1.0, 1.0), 2 * X)
    np.testing.assert_allclose(adgen.grad(f)(X, 1.0, 2.0), np.ones_like(X))


def test_chained_comparison_with_a_computed_middle_value():
    # scipy.stats.differential_entropy: `if not 2 <= 2 * window_length < n` -- the middle
    # is computed once, before both comparisons, as Python computes it
    def f(x, hi):
        if 0.0 < np.sum(x) * 2.0 < hi:
            return np.sum(x**2)
        return np.sum(x)

    assert 0.0 < np.sum(X) * 2.0 < 100.0
    np.testing.assert_allclose(both_modes(f, X, 100.0), 2 * X)
    np.testing.assert_allclose(both_modes(f, X, -1.0), np.ones_like(X))


def test_chained_comparison_with_a_later_computed_middle_value_is_refused():
    def f(x):  # (Python computes the second middle only where the first comparison holds)
        if 0.0 < np.sum(x) < np.max(x) * 10.0 < 100.0:
            return np.sum(x**2)
        return np.sum(x)

    with pytest.raises(UnsupportedSyntaxError, match="middle value is computed"):
        adgen.grad(f)(X)


def _assert_finite(x, assume_finite):
    """A check that only returns or raises (no value)."""
    if assume_finite:
        return
    if not np.all(np.isfinite(x)):
        raise ValueError("not finite")


def test_a_helper_that_only_returns_none_or_raises():
    def f(x, assume):
        _assert_finite(x, assume)
        return np.sum(np.exp(x))

    for assume in (True, False):
        np.testing.assert_allclose(adgen.grad(f)(X, assume), np.exp(X))
    with pytest.raises(ValueError, match="not finite"):
        adgen.grad(f)(np.array([np.inf, 1.0]), False)


def test_and_whose_second_value_adgen_refuses_is_refused_only_if_evaluated():
    class Model:
        def fit(self):
            return self

    model = Model()

    def f(x, flag):
        checked = flag and model.fit() is model
        return np.sum(x) * (2.0 if checked else 1.0)

    np.testing.assert_allclose(adgen.grad(f)(X, False), np.ones_like(X))


def test_an_if_an_and_decides_false_lowers_no_branch():
    def f(x):
        if x.ndim == 2 and isinstance(x, list) and x.format == "csr":
            return x.unsupported_method()
        return np.sum(x * x)

    np.testing.assert_allclose(adgen.grad(f)(X), 2 * X)


def test_drop_copies_drops_the_del_of_a_name_it_merged():
    source = (
        "def f_vjp(x, out_bar):\n"
        "    a = x\n"
        "    b = a\n"
        "    a = b\n"
        "    del b\n"
        "    c = a * 2.0\n"
        "    return c\n"
    )
    done = drop_copies(source)
    namespace: dict = {}
    exec(compile(done, "<test>", "exec"), namespace)
    assert namespace["f_vjp"](3.0, 1.0) == 6.0
    assert "del b" not in done


def test_type_of_an_argument_is_its_kind():
    def f(x, s):
        if type(x) is np.ndarray and type(s) is float:
            return np.sum(x * s)
        return np.sum(x) * 0.0

    np.testing.assert_allclose(adgen.grad(f)(X, 2.0), np.full_like(X, 2.0))
    np.testing.assert_allclose(adgen.grad(f)(X, np.float64(2.0)), np.zeros_like(X))


def test_out_writes_into_an_array_the_function_made():
    def f(x):
        k = x * 2.0
        np.exp(k, out=k)
        r = np.multiply(k, x, out=k)
        return np.sum(r) + np.sum(k)

    want = 2 * (np.exp(2 * X) * (2 * X + 1))
    np.testing.assert_allclose(both_modes(f, X), want)


def test_out_into_an_argument_is_refused():
    def f(x):
        np.exp(x, out=x)
        return np.sum(x)

    with pytest.raises(UnsupportedSyntaxError, match="in-place write into `x`"):
        adgen.grad(f)(X.copy())


def test_a_copy_of_a_value_a_loop_bound_is_that_value():
    def f(w, n):
        y = w
        for _ in range(n):
            y = y * 0.5
        b = y
        z = np.tanh(y)
        return np.sum(z) if b is y and z is not y else np.sum(y) * 0.0

    w = np.array([0.5, -1.0])
    np.testing.assert_allclose(adgen.grad(f)(w, 2), 0.25 * (1 - np.tanh(0.25 * w) ** 2))


def _as_array(a, xp=None):
    """A helper given its namespace, or finding one (scipy's ``_asarray`` does so)."""
    if xp is None:
        xp = np
    return xp.asarray(a) * 2.0


def _promoted(*args):
    args = [np.asarray(a) for a in args]  # (of *args: one item an argument)
    return np.multiply(*args)


def test_a_helper_given_a_module_it_would_bind_itself_otherwise():
    def f(x):
        return np.sum(_as_array(x, xp=np))

    np.testing.assert_allclose(adgen.grad(f)(X), np.full_like(X, 2.0))


def test_a_comprehension_over_star_args_is_a_list_of_known_length():
    def f(x):
        return np.sum(_promoted(x, x + 1.0))

    np.testing.assert_allclose(both_modes(f, X), 2 * X + 1.0)


def test_which_library_a_known_namespace_is():
    helpers = pytest.importorskip("array_api_compat.common._helpers")

    def f(x):
        xp = np
        if helpers.is_numpy_namespace(xp):
            return np.sum(x * x)
        return x.unsupported()

    np.testing.assert_allclose(adgen.grad(f)(X), 2 * X)


def test_a_numpy_function_that_may_return_its_python_float_decides_by_what_it_returns():
    """``np.real(s)`` of a Python float is that float, of a 0-d array an array: the kind of
    its result is computed when transforming on a sample of the argument's kind, not
    guessed from NumPy making it, so ``isinstance(r, float)`` takes Python's branch."""

    def f(s):
        r = np.real(s)
        return r * 2.0 if isinstance(r, float) else r * 3.0

    assert adgen.grad(f)(1.5) == 2.0
    assert adgen.grad(f)(np.float64(1.5)) == 2.0  # (a subclass of float)
    assert adgen.grad(f)(np.array(1.5)) == 3.0


def _scaled_all(*args):
    items = [a * 2.0 for a in args]
    return sorted(len(np.atleast_1d(i)) for i in items), items


def test_a_comprehension_over_star_args_passed_to_a_call_run_as_written_is_a_list():
    def f(x):
        sizes, items = _scaled_all(x, x[0])
        return np.sum(items[0]) * sizes[0] + items[1]

    np.testing.assert_allclose(adgen.grad(f)(X[0]), [4.0, 2.0, 2.0])


def _with_default(x, y=None):
    if y is None:
        kind = float
    else:
        kind = np.float32
    return x, y, kind


def test_a_constant_passed_on_through_helpers_is_that_constant():
    def f(x):
        a, b, kind = _with_default(x)
        c = b
        if c is a or c is None:
            return np.sum(np.asarray(a, dtype=kind) ** 2)
        return a.unsupported()

    np.testing.assert_allclose(both_modes(f, X), 2 * X)


# -- a helper writing into the array its caller passed ----------------------------------------
def _zero_ends(u):
    u[0] = 0.0
    u[-1] = 0.0


def test_a_helper_writes_into_an_array_its_caller_made():
    def f(x):
        y = np.sin(x) * 1.0
        _zero_ends(y)
        return np.sum(y * y)

    x = np.array([0.1, 0.2, 0.3, 0.4])
    want = 2 * np.sin(x) * np.cos(x) * np.array([0.0, 1.0, 1.0, 0.0])
    np.testing.assert_allclose(both_modes(f, x), want)


def test_a_helper_writes_into_a_buffer_a_loop_rebinds():
    def f(x):
        y = np.sin(x) * 1.0
        for _ in range(2):
            _zero_ends(y)
            y = y * 2.0
        return np.sum(y * x)

    x = np.array([0.1, 0.2, 0.3, 0.4])
    inner = np.array([0.0, 1.0, 1.0, 0.0])
    want = 4.0 * inner * (np.sin(x) + x * np.cos(x))
    np.testing.assert_allclose(both_modes(f, x), want)


@pytest.mark.parametrize("shared", ["another_name", "argument"])
def test_a_helper_write_another_name_would_see_is_refused(shared):
    def another_name(x):
        y = np.sin(x) * 1.0
        z = y
        _zero_ends(y)
        return np.sum(z * x)

    def argument(x):
        _zero_ends(x)
        return np.sum(x)

    f = another_name if shared == "another_name" else argument
    with pytest.raises(UnsupportedSyntaxError, match="in-place write into `u`"):
        adgen.grad(f)(np.array([0.1, 0.2, 0.3]))


def _twice(x):
    d = np.sin(x)
    return d, d


def test_an_update_in_place_of_an_array_a_helper_also_returned_under_another_name_is_refused():
    """``K, L = _twice(x)``: K and L are one array; ``K *= 2.0`` (in a loop) changes L too.
    adgen differentiated it as if L kept the old values (a wrong derivative) before it asked
    whether the array a copy was made from is held by another name."""

    def f(x):
        k, other = _twice(x)
        for _ in range(1):
            k *= 2.0
        return np.sum(other) + np.sum(k)

    with pytest.raises(UnsupportedSyntaxError, match="in-place update of `k`"):
        adgen.grad(f)(np.array([0.1, 0.2, 0.3]))


def test_an_update_in_place_of_one_item_of_a_helper_result_is_differentiated():
    def f(x):
        k = _twice(x)[0]
        for _ in range(1):
            k *= 2.0
        return np.sum(k)

    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(both_modes(f, x), 2 * np.cos(x))


def _sklearn_style_distances(x):
    d = -2.0 * (x @ x.T)
    d += np.sum(x * x, axis=1)[:, None]
    d += np.sum(x * x, axis=1)[None, :]
    np.maximum(d, 0.0, out=d)
    return d


def test_a_helper_result_made_by_operations_and_writes_is_a_new_array():
    """A helper's result built by arithmetic, ``+=`` and ``out=`` writes is an array no other
    name sees: the caller may update it in place (scikit-learn's ``K = euclidean_distances(X,
    Y, squared=True); K *= -gamma``)."""

    def f(x, gamma):
        k = _sklearn_style_distances(x)
        k *= -gamma
        np.exp(k, out=k)
        return np.sum(k)

    x = np.array([[0.1, 0.2], [0.3, -0.1], [0.0, 0.5]])
    g = both_modes(f, x, 0.7)
    h = 1e-6
    fd = np.array(
        [
            (f(x + h * e.reshape(x.shape), 0.7) - f(x - h * e.reshape(x.shape), 0.7)) / (2 * h)
            for e in np.eye(x.size)
        ]
    ).reshape(x.shape)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def _pair_and_view(x):
    d = np.sin(x)
    return d, d[1:]


@pytest.mark.parametrize("form", ["copies", "pair", "view", "pair_view"])
def test_an_update_in_place_another_name_would_see_is_refused(form):
    def copies(x):
        d = np.sin(x)
        e = d
        k = e
        k *= 2.0
        return np.sum(d * x)

    def pair(x):
        a, b = _twice(x)
        a *= 2.0
        return np.sum(b * x)

    def view(x):
        t = np.sin(x)
        u = t[1:]
        t *= 2.0
        return np.sum(u * x[1:])

    def pair_view(x):
        a, v = _pair_and_view(x)
        a *= 2.0
        return np.sum(v * x[1:])

    f = {"copies": copies, "pair": pair, "view": view, "pair_view": pair_view}[form]
    with pytest.raises(UnsupportedSyntaxError, match="in-place update of"):
        adgen.grad(f)(np.array([0.1, 0.2, 0.3]))


def _rebind_then_write(u, flag):
    if flag > 0.0:
        u = np.zeros(3)
    u[0] = 1.0


def _write_rebind_write(u, flag):
    u[0] = 1.0
    if flag > 0.0:
        u = np.zeros(3)
    u[1] = 2.0


@pytest.mark.parametrize("helper", [_rebind_then_write, _write_rebind_write])
def test_a_helper_writing_into_a_parameter_a_branch_may_have_rebound_is_refused(helper):
    """Where an `if` the program decides when it runs may have bound the parameter to another
    array, the write is not the caller's array's (on that path): refused, not guessed."""

    def f(x, s):
        y = np.sin(x) * 1.0
        helper(y, s)
        return np.sum(y * x)

    with pytest.raises(UnsupportedSyntaxError, match="in-place write into `u`"):
        adgen.grad(f)(np.array([0.1, 0.2, 0.3]), 1.0)


# -- data a closure or a global holds (the way users bind it) --------------------------------

DATA = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 0.25]])
DATA32 = DATA.astype(np.float32)


def _float_kind(x, y):
    """In the style of scikit-learn's _return_float_dtype: the dtypes of both arrays."""
    if x.dtype == y.dtype == np.float32:
        dtype = np.float32
    else:
        dtype = float
    return dtype


def kernel_on_data(x):
    dtype = _float_kind(x, DATA)
    if isinstance(dtype, str):  # (decided: a class, never a string)
        raise TypeError("dtype names are not accepted")
    return np.sum((np.asarray(x, dtype=dtype) @ DATA.T) ** 2)


def test_a_globals_array_has_its_kind_when_transforming():
    g = both_modes(kernel_on_data, X)
    np.testing.assert_allclose(g, 2 * (X @ DATA.T) @ DATA)


def test_a_closures_array_has_its_kind_and_rebinding_it_makes_the_code_again():
    def make(data):
        def f(x):
            if data.dtype == np.float32:
                return np.sum(x * 2.0)
            return np.sum(x**2)

        return f

    f = make(DATA)
    np.testing.assert_allclose(adgen.grad(f)(X), 2 * X)
    g = make(DATA32)  # (another closure, another kind: the other branch)
    np.testing.assert_allclose(adgen.grad(g)(X), np.full(X.shape, 2.0))


def _result_kind(*arrays):
    """scikit-learn's _find_matching_floating_dtype: a comprehension over *arrays, a test of
    the list it makes, np.result_type(*dtypes)."""
    dtyped = [np.asarray(a) for a in arrays if hasattr(a, "dtype")]
    floating = [a.dtype for a in dtyped if np.isdtype(a.dtype, "real floating")]
    if floating:
        return np.result_type(*floating)
    return np.asarray(0.0).dtype


def loss_of_kinds(x):
    dtype = _result_kind(DATA, x, None)
    if dtype == object:  # noqa: E721 (`object` as a data type, as scikit-learn tests it)
        raise TypeError("object arrays are not accepted")
    if not isinstance(dtype, np.dtype):
        return np.sum(x)
    return np.sum(np.asarray(x, dtype=dtype) ** 3)


def test_result_type_of_the_dtypes_a_comprehension_listed_is_decided():
    g = both_modes(loss_of_kinds, X)
    np.testing.assert_allclose(g, 3 * X**2)
    source = adgen.source(loss_of_kinds, args=(X,))
    code = [line for line in source.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in code if "result_type" in line or "isinstance" in line]


def _weighted(a, weights=None):
    return np.average(a, axis=0, weights=weights)


def _mean_of_squares(x, sample_weight=None):
    checked = sample_weight  # (a copy of a default passed on through a helper)
    return np.sum(_weighted(x**2, weights=checked))


def weighted_mean(x):
    return _mean_of_squares(x)


def test_none_passed_on_through_helpers_is_the_constant_a_rule_decides_on():
    np.testing.assert_allclose(both_modes(weighted_mean, X), 2 * X / X.shape[0])


def loss_after_calls_given_two_arrays(x):
    y = x * 2.0
    d = np.ones(3)
    LOG.debug("%s %s", d, y)  # (run as written: its result may be either array)
    s = np.sum(y**2)
    random.shuffle(d)  # (may change d, which shares nothing with y)
    return s


def test_a_call_given_two_arrays_does_not_make_them_share():
    np.testing.assert_allclose(adgen.grad(loss_after_calls_given_two_arrays)(X), 8 * X)


# -- None passed by the caller; kinds needed at every shape; lists known when transforming ----


def weighted_loss(w, sample_weight=None):
    r = (X @ w) ** 2
    if sample_weight is not None and np.ndim(sample_weight) != 1:
        raise ValueError("sample_weight must be 1-d")
    return np.average(r, weights=sample_weight)


def test_an_argument_the_caller_passes_as_none_is_that_constant():
    """``np.average(..., weights=None)``: adgen's rule decides ``weights is None`` when it
    expands; the code is made for the caller's None (and other code for an array)."""
    w = np.array([0.5, -1.0, 0.25])
    want = 2 * X.T @ (X @ w) / X.shape[0]
    np.testing.assert_allclose(adgen.grad(weighted_loss)(w, None), want, rtol=1e-12)
    np.testing.assert_allclose(adgen.grad(weighted_loss)(w), want, rtol=1e-12)
    s = np.array([1.0, 3.0])
    want = 2 * X.T @ (s * (X @ w)) / np.sum(s)
    np.testing.assert_allclose(adgen.grad(weighted_loss)(w, s), want, rtol=1e-12)
    v = np.array([1.0, 0.0, -1.0])
    np.testing.assert_allclose(adgen.jvp(weighted_loss, (w, s), (v, 0 * s))[1], want @ v)


def typed_energy(x):
    if x.dtype == np.float32:
        raise TypeError("float32 is not accepted")
    if isinstance(x.dtype, str):  # (decided only by the argument's kind)
        return 0.0
    return np.sum(x**2)


def test_code_made_for_kinds_serves_every_shape_where_the_kinds_decide_the_path():
    """After many shapes adgen makes one general derivative for the others; a function it
    reads only for its arguments' kinds keeps getting code made for each call's kinds."""
    g = adgen.grad(typed_energy)
    for n in range(1, 14):
        x = np.linspace(0.0, 1.0, n)
        np.testing.assert_allclose(g(x), 2 * x)
    with pytest.raises(UnsupportedSyntaxError, match="isinstance"):
        adgen.source(typed_energy)  # (the general code, for any kind: refused)


def _promote(*arrays):
    """In the style of SciPy's xp_promote: a list grown in a loop over *args, then
    returned as one array or a tuple of them."""
    out = []
    for a in arrays:
        if a is None:
            out.append(a)
            continue
        out.append(np.asarray(a, dtype=np.result_type(a, 1.0)))
    return out[0] if len(out) == 1 else tuple(out)


def promoted_product(x, y=None):
    a, b = _promote(x, y)
    one = _promote(x)
    return np.sum(a * one) if b is None else np.sum(a * b * one)


def test_a_list_grown_in_a_loop_over_a_tuple_is_known_when_transforming():
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(both_modes(promoted_product, x), 2 * x)
    y = np.array([1.0, 2.0, 3.0])
    g = adgen.grad(promoted_product)(x, y)
    np.testing.assert_allclose(g, 2 * x * y)


def _as_float_array(x, dtype=None, order="C"):
    kinds = (np.float64, np.float32)  # (a tuple of data types, as scikit-learn's lists)
    if x.dtype in kinds and dtype is None:
        dtype = x.dtype
    return np.array(x, dtype=dtype, order=order)  # (np.asarray's copy of an array)


def copied_with_options(x):
    y = _as_float_array(x)
    y *= 2.0  # (a new array: written in place)
    return np.sum(y**2)


def test_np_array_of_an_array_with_options_is_a_copy_of_it():
    np.testing.assert_allclose(both_modes(copied_with_options, X), 8 * X)


def _stat(w, which="mean"):
    """In the style of statsmodels' predict: one method, called again for another option."""
    if which == "mean":
        return np.exp(w)
    if which == "var":
        return _stat(w) * 2.0
    raise ValueError(which)


def variance_of_mean(w):
    return np.sum(_stat(w, which="var"))


def test_a_function_calling_itself_with_another_option_is_read_as_two_calls():
    w = np.array([0.1, -0.3])
    np.testing.assert_allclose(both_modes(variance_of_mean, w), 2 * np.exp(w))


def _own_copy(x, limit=100.0):
    """In the style of scikit-learn's check_array: a copy made only where the data ask for
    one (decided when the program runs)."""
    y = np.asarray(x, dtype=float)
    if np.max(np.abs(y)) < limit:
        y = y.copy()
    return y


def typed_after_a_branch(x):
    y = _own_copy(x)
    if not isinstance(y, np.ndarray) or y.dtype != np.float64:  # (one kind either way)
        raise TypeError("expected an array of floats")
    return np.sum(y**2)


def kinds_differ_after_a_branch(x):
    y = x * 1.0
    if np.sum(x) > 0:
        y = y.astype(np.float32)
    if y.dtype == np.float32:
        return np.sum(y)
    return np.sum(y**2)


def test_the_kind_a_name_holds_after_a_branch_the_program_decides():
    np.testing.assert_allclose(both_modes(typed_after_a_branch, X), 2 * X)
    source = adgen.source(typed_after_a_branch, args=(X,))
    assert "isinstance" not in "".join(
        line for line in source.splitlines() if not line.lstrip().startswith("#")
    )
    # branches that leave it of two kinds: the test runs when the program does
    g = adgen.grad(kinds_differ_after_a_branch)
    np.testing.assert_allclose(g(-X), -2 * X)
    np.testing.assert_allclose(g(np.abs(X)), np.ones_like(X))


# -- identity after writes; a helper's copy; objects of two types --------------------------------

MISSING = object()


def _validated_pair(x, y, copy=True):
    """Both arrays converted, copied where asked (in the style of check_pairwise_arrays)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    x = np.array(x, copy=copy)
    y = np.array(y, copy=copy)
    return x, y


def _zeroed_energy(x, y, fill=0.0):
    x, y = _validated_pair(x, y)
    if fill is MISSING:  # (a float default is never this object)
        fill = 1.0
    x[x > 1.0] = fill  # (its own copy: the caller's array is not written)
    y[y < 0.0] = fill
    if x is y:
        return np.sum(x * x)
    return np.sum((x @ y.T) ** 2)


def test_writes_into_a_helpers_copies_inlined_twice_and_identity_after_them():
    # inlined under a lambda: the parameter `x` of `_zeroed_energy` is the lambda's array
    # too, but `x` was rebound to the helper's copy before the write
    f = lambda a: _zeroed_energy(a, Y)  # noqa: E731
    x = X.copy()
    g = both_modes(f, x)
    np.testing.assert_array_equal(x, X)  # (the caller's array as it was)
    kept = np.where(X > 1.0, 0.0, 1.0)
    y = np.where(Y < 0.0, 0.0, Y)
    want = 2 * ((np.where(X > 1.0, 0.0, X) @ y.T) @ y) * kept
    np.testing.assert_allclose(g, want, rtol=1e-12)
