"""Forms library code is written in, each met differentiating a library function as
installed (issue 34), reduced here to code of our own and checked in both modes against a
closed form.

- a helper that returns on a shape test and raises otherwise (scikit-learn's
  ``column_or_1d``): its result keeps the argument's kind, so later type tests of it
  (``_num_samples``, narwhals' dataframe checks) are decided;
- a method returning ``self`` rebound to its name (``lb = lb.fit(y)``, after an ``if`` on an
  option decided when transforming);
- a decorator's wrapper testing the wrapped function's ``__name__``, and importing inside
  itself the context manager it opens (scikit-learn's ``_fit_context``);
- the validation a fitted estimator's ``predict`` runs (``validate_data``): merged option
  dicts and ``.get`` of their keys, checks returning None on some paths, a ``try`` that
  raises ``from`` the error it caught, ``type(X).__module__``.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import adgen

try:
    from sklearn.utils._array_api import get_namespace
except ImportError:  # (scikit-learn is in the test extra)
    get_namespace = None

DATA = np.array([0.5, 1.5, -2.0, 3.0])
Z = np.array([0.3, -0.7, 1.1, 0.2])


def both_modes(f, z, expected):
    np.testing.assert_allclose(adgen.grad(f)(z), expected, rtol=1e-12, atol=1e-14)
    _, tangent = adgen.jvp(f, (z,), (np.ones_like(z),))
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-12)


def as_vector(y):
    shape = y.shape
    if len(shape) == 1:
        return np.reshape(y, (-1,))
    if len(shape) == 2 and shape[1] == 1:
        return np.reshape(y, (-1,))
    raise ValueError(f"y should be a 1d array, got an array of shape {shape} instead.")


def count(x):
    if isinstance(x, np.ndarray) and isinstance(x.shape[0], int):
        return x.shape[0]
    return len(x.rows)  # (another kind of value: never an array's)


def test_a_result_returned_before_a_raise_keeps_its_kind_for_type_tests():
    def f(z):
        y = as_vector(z)
        return np.sum(y * y) / count(y)

    both_modes(f, Z, 2 * Z / Z.size)


class Centre:
    def __init__(self, scale=None):
        self.scale = scale

    def fit(self, y):
        self.mean_ = np.mean(y)
        return self

    def transform(self, x):
        return x - self.mean_


def centred(x, y, scale):
    c = Centre()
    if scale is not None:
        c = c.fit(y * scale)
    else:
        c = c.fit(y)
    if c.mean_ > 1e6:
        raise ValueError("too large")
    return c.transform(x), c.mean_


def test_a_method_returning_self_rebinds_its_name_after_a_decided_option():
    def f(z):
        t, m = centred(z, DATA, None)
        return np.sum(t * t) + m

    both_modes(f, Z, 2 * (Z - np.mean(DATA)))


def fit_context(method):
    @functools.wraps(method)
    def wrapper(estimator, *args):
        from warnings import catch_warnings

        partial = method.__name__ == "partial_fit"
        if partial:
            raise NotImplementedError
        with catch_warnings():
            return method(estimator, *args)

    return wrapper


class Scaled:
    def __init__(self, k):
        self.k = k

    @fit_context
    def fit(self, x):
        self.total_ = self.k * np.sum(x * x)
        return self


def test_a_fit_wrapper_reading_the_methods_name_and_importing_its_context():
    def f(z):
        s = Scaled(3.0)
        s = s.fit(z)
        return s.total_

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the wrapper's catch_warnings leaves this filter)
        both_modes(f, Z, 6.0 * Z)


def test_a_rebound_instance_read_where_either_binding_could_reach_is_refused():
    def f(z):
        c = Centre()
        if z[0] > 0:
            c = c.fit(z)
        return np.sum(c.transform(z))

    with pytest.raises(adgen.AdgenError):
        adgen.grad(f)(Z)


def test_a_librarys_array_namespace_is_the_one_its_getter_returns():
    """scikit-learn's ``get_namespace`` returns its vendored array-api-compat NumPy namespace,
    whose ``unique_values`` sorts (NumPy 2.3's does not: ``np.unique_values([5, 3, 9, 1])``
    may be ``[1, 9, 3, 5]``). adgen reads ``xp.unique_values`` as that namespace's function,
    run as written on the labels: the classes come out in the order scikit-learn sees."""
    utils = pytest.importorskip("sklearn.utils._array_api")
    labels = np.array([5, 3, 9, 1, 3])
    weights = np.array([1.0, 2.0, 3.0, 4.0])

    def f(w):
        xp, _ = utils.get_namespace(w)
        classes = xp.unique_values(labels)  # [1, 3, 5, 9]
        return xp.sum(w[classes] * weights)

    w = np.linspace(0.5, 1.4, 10)
    expected = np.zeros(10)
    expected[[1, 3, 5, 9]] = weights
    np.testing.assert_allclose(f(w), np.sum(w[[1, 3, 5, 9]] * weights))
    np.testing.assert_allclose(adgen.grad(f)(w), expected, rtol=0)
    _, tangent = adgen.jvp(f, (w,), (np.arange(10.0),))
    np.testing.assert_allclose(tangent, expected @ np.arange(10.0), rtol=1e-14)


def test_array_api_compat_wrappers_unlike_numpy_run_as_written_on_data():
    """array-api-compat's stable ``argsort`` of data no derivative reaches runs as written
    (where a differentiated value reaches it, it stays refused by name)."""
    compat = pytest.importorskip("array_api_compat")
    data = np.array([2.0, 1.0, 2.0, 0.5])

    def f(x):
        xp = compat.array_namespace(x)
        order = xp.argsort(data)  # stable: [3, 1, 0, 2]
        return xp.sum(x[order] * xp.arange(4.0))

    x = np.array([0.3, -0.2, 0.7, 1.1])
    expected = np.zeros(4)
    expected[[3, 1, 0, 2]] = np.arange(4.0)
    np.testing.assert_allclose(adgen.grad(f)(x), expected, rtol=0)


# --- forms of autograd's examples (VAE, GAN, mixture VI; neural_net's l2 norm) -------------


def noisy(mean, rs):
    return rs.randn(*mean.shape) + mean  # (a generator passed in, its draws constants)


def test_a_random_generator_passed_as_an_argument_draws_as_written():
    def f(mean, rs):
        return np.sum(rs.randn(*mean.shape) * mean)

    mean = np.array([0.5, -1.0, 2.0])
    expected = np.random.RandomState(0).randn(3)
    np.testing.assert_allclose(adgen.grad(f)(mean, np.random.RandomState(0)), expected, rtol=0)
    _, tangent = adgen.jvp(f, (mean, np.random.RandomState(0)), (np.ones(3), None))
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-14)


def test_a_global_generator_passed_to_a_helper_draws_as_written():
    seed = np.random.RandomState(1)

    def f(mean):
        return np.sum(noisy(mean, seed) ** 2)

    mean = np.array([0.5, -1.0, 2.0])
    noise = np.random.RandomState(1).randn(3)
    np.testing.assert_allclose(adgen.grad(f)(mean), 2 * (noise + mean), rtol=1e-14)


def test_a_generator_argument_given_a_differentiated_value_is_refused():
    def f(scale, rs):
        return np.sum(rs.normal(0.0, scale, size=3))

    with pytest.raises(
        adgen.AdgenError, match="no derivative of .normal with respect to its argument `scale`"
    ):
        adgen.grad(f)(1.5, np.random.RandomState(0))


def flatten(ws):
    flat = np.concatenate([np.ravel(w) for w in ws])

    def unflatten(v):
        return [np.reshape(v[: ws[0].size], ws[0].shape), np.reshape(v[ws[0].size :], ws[1].shape)]

    return flat, unflatten


def test_a_helper_returning_a_value_and_a_function_binds_both():
    def l2(ws):
        flat, _ = flatten(ws)  # (autograd's neural_net: the function discarded)
        return np.dot(flat, flat)

    def through(ws):
        flat, unflatten = flatten(ws)
        a, b = unflatten(3.0 * flat)
        return np.sum(a * a) + np.sum(b)

    ws = [np.array([[1.0, -2.0]]), np.array([0.5, 1.5, -1.0])]
    got = adgen.grad(l2)(ws)
    for g, w in zip(got, ws):
        np.testing.assert_allclose(g, 2 * w, rtol=0)
    got = adgen.grad(through)(ws)
    np.testing.assert_allclose(got[0], 18 * ws[0], rtol=1e-14)
    np.testing.assert_allclose(got[1], 3 * np.ones(3), rtol=0)
    with pytest.raises(adgen.AdgenError, match="the local function `unflatten` as a value"):
        adgen.grad(lambda ws: np.sum(flatten(ws)[0]))(ws)


def test_a_tuple_holding_a_function_bound_to_one_name_is_refused():
    def g(ws):
        r = flatten(ws)
        return np.sum(r[0])

    with pytest.raises(adgen.AdgenError, match="binding `r` to a tuple that holds a function"):
        adgen.grad(g)([np.ones((1, 2)), np.ones(3)])


def test_a_tuple_holding_a_function_bound_to_one_name_then_unpacked_binds_both():
    # (SciPy's quantile: `temp = _quantile_iv(...)`, then `(y, p, method, ...) = temp`)
    def g(ws):
        r = flatten(ws)
        flat, unflatten = r
        first, second = unflatten(flat * 2.0)
        return np.sum(first**2) + np.sum(np.sin(second))

    ws = [np.array([[0.5, -1.0]]), np.array([0.2, 0.3, -0.4])]
    grads = adgen.grad(g)(ws)
    np.testing.assert_allclose(grads[0], 8.0 * ws[0], rtol=1e-12)
    np.testing.assert_allclose(grads[1], 2.0 * np.cos(2.0 * ws[1]), rtol=1e-12)


def test_a_held_tuple_unpacked_into_names_bound_again_in_a_branch():
    # (SciPy's quantile: `(y, p, method, ..., xp) = temp`, then `if ...: y = ...` -- a value
    # unpacked into a name a later branch binds again; the function still binds one name)
    def g(ws, shift):
        r = flatten(ws)
        flat, unflatten = r
        if shift > 0:  # (decided when the code runs)
            flat = flat + shift
        first, second = unflatten(flat * 2.0)
        return np.sum(first**2) + np.sum(np.sin(second))

    ws = [np.array([[0.5, -1.0]]), np.array([0.2, 0.3, -0.4])]
    for shift in (0.0, 0.25):
        grads = adgen.grad(g)(ws, shift)
        np.testing.assert_allclose(grads[0], 4.0 * (2.0 * ws[0] + 2.0 * shift), rtol=1e-12)
        np.testing.assert_allclose(grads[1], 2.0 * np.cos(2.0 * (ws[1] + shift)), rtol=1e-12)
        adgen.testing.check_grads(lambda ws: g(ws, shift), ws, modes=("forward", "reverse"))


ONLY_VALUES = False  # a module's flag a helper tests before it returns


def leaves(t):
    if isinstance(t, dict):
        out = []
        for k in sorted(t):
            out = out + leaves(t[k])
        return out
    if isinstance(t, (list, tuple)):
        out = []
        for v in t:
            out = out + leaves(v)
        return out
    return [t]


def flattened(params):
    flat = np.concatenate([np.ravel(v) for v in leaves(params)])
    if ONLY_VALUES:
        return flat, None

    def unflatten(v):
        return v

    return flat, unflatten


def test_a_recursion_over_a_structure_is_read_level_by_level():
    """``leaves`` calls itself on each item of a tuple, list or dict of known structure: each
    call is read with its own part (the recursion ends with the structure), the lists it
    builds joined as lists; a module's flag decides the helper's early return."""

    def l2(params):
        flat, _ = flattened(params)
        return np.dot(flat, flat)

    layers = [(np.ones((2, 2)), np.array([1.0, -2.0])), (np.array([[3.0], [0.5]]), np.ones(1))]
    got = adgen.grad(l2)(layers)
    for (gw, gb), (w, b) in zip(got, layers):
        np.testing.assert_allclose(gw, 2 * w, rtol=0)
        np.testing.assert_allclose(gb, 2 * b, rtol=0)
    ones = [(np.ones((2, 2)), np.zeros(2)), (np.ones((2, 1)), np.ones(1))]
    _, tangent = adgen.jvp(l2, (layers,), (ones,))
    assert tangent == pytest.approx(2 * (4.0 + 3.5 + 1.0), rel=1e-14)


def sample(mean, log_std, rs):
    return rs.randn(*mean.shape) * np.exp(log_std) + mean


def test_a_generator_draws_the_shape_of_a_computed_array():
    """``rs.randn(*mean.shape)`` of a mean the code computes (its length known only when
    the code runs): the call spreads the shape as it runs (autograd's VAE)."""

    def f(params, rs):
        mean, log_std = params[:, :2], params[:, 2:]
        return np.sum(sample(mean, log_std, rs) ** 2)

    params = np.array([[0.5, -1.0, 0.1, 0.2], [1.5, 0.3, -0.4, 0.0]])
    eps = np.random.RandomState(3).randn(2, 2)
    z = eps * np.exp(params[:, 2:]) + params[:, :2]
    expected = np.concatenate([2 * z, 2 * z * eps * np.exp(params[:, 2:])], axis=1)
    np.testing.assert_allclose(
        adgen.grad(f)(params, np.random.RandomState(3)), expected, rtol=1e-13
    )


def checked(a, copy):
    a = np.asarray(a)
    if copy:
        if np.sum(np.abs(a)) < 1e12:  # (decided when the code runs)
            a = a.copy()
    return a


def pair_checked(X, Y, copy=False):
    if Y is X or Y is None:
        X = Y = checked(X, copy)
    else:
        X = checked(X, copy)
        Y = checked(Y, copy)
    return X, Y


def test_is_of_values_a_runtime_if_binds_is_decided_from_both_branches():
    """``Y is X`` of two values each checked by a helper that copies in a branch decided when
    the code runs (scikit-learn's ``check_pairwise_arrays`` with ``copy=True``): each side
    is its own argument or a new array, whichever branch ran, so they are not one object."""
    Y0 = np.array([[1.0, 2.0], [0.5, -1.0]])

    def f(z):
        X, Y = pair_checked(z, Y0, copy=True)
        return np.sum(X * Y) if Y is X else 2.0 * np.sum(X * Y)

    z = np.array([[0.3, 0.1], [-0.2, 0.4]])
    np.testing.assert_allclose(adgen.grad(f)(z), 2.0 * Y0, rtol=0)


@pytest.mark.skipif(
    np.lib.NumpyVersion(np.__version__) < "2.3.0",
    reason="check_array tests np.may_share_memory, whose signature NumPy < 2.3 does not show "
    "(adgen cannot tell it only reads: a differentiated value reaching it is refused)",
)
def test_check_array_asked_for_a_copy_gives_an_array_the_caller_may_write():
    """scikit-learn's ``check_array(X, copy=True)`` returns a new array (its contract; adgen
    cannot see it through the branches that copy only where memory is shared): writing into
    it is the caller's own business, the argument untouched."""
    validation = pytest.importorskip("sklearn.utils.validation")

    def f(z):
        X = validation.check_array(z, copy=True)
        X[X < 0] = 0.0
        return np.sum(X * X)

    z = np.array([[0.5, -1.0], [2.0, 0.25]])
    before = z.copy()
    np.testing.assert_allclose(adgen.grad(f)(z), 2 * np.maximum(z, 0.0), rtol=0)
    np.testing.assert_array_equal(z, before)

    def g(z):
        X = validation.check_array(z, copy=False)
        X[X < 0] = 0.0
        return np.sum(X * X)

    with pytest.raises(adgen.AdgenError, match="in-place write into `X`"):
        adgen.grad(g)(z)


def zeros_to_one(scale, copy=True):
    if np.isscalar(scale):
        return 1.0 if scale == 0.0 else scale
    else:
        xp, _ = get_namespace(scale)
        small = scale < 10 * xp.finfo(scale.dtype).eps
        if copy:
            scale = xp.asarray(scale, copy=True)
        scale[small] = 1.0
        return scale


def test_a_namespace_bound_in_a_branch_the_code_decides_is_known_there():
    """``xp, _ = get_namespace(scale)`` in the branch of an ``if`` decided when the code
    runs, read only after it in that branch (scikit-learn's ``_handle_zeros_in_scale``)."""
    pytest.importorskip("sklearn")

    def f(z):
        norms = np.sqrt(np.sum(z * z, axis=1))
        return np.sum(z / zeros_to_one(norms)[:, None])

    z = np.array([[3.0, 4.0], [1.0, 0.0]])
    n = np.linalg.norm(z, axis=1)
    expected = 1 / n[:, None] - z * (np.sum(z, axis=1) / n**3)[:, None]
    np.testing.assert_allclose(adgen.grad(f)(z), expected, rtol=1e-13)


def pairs(w):
    for i in range(2):
        yield w[2 * i], w[2 * i + 1]


def test_a_generator_iterated_where_it_is_called_and_one_kept_for_later():
    """A generator a loop (here a generator expression's) iterates over where it is called
    is read with the loop's body where it yields; one bound to a name, to be consumed
    later, is refused by name."""

    def f(w):
        return sum(a * b for a, b in pairs(w))

    w = np.arange(4.0)
    np.testing.assert_allclose(adgen.grad(f)(w), [1.0, 0.0, 3.0, 2.0])

    def kept(w):
        items = pairs(w)
        return sum(a * b for a, b in items)

    with pytest.raises(adgen.AdgenError, match=r"in pairs: adgen does not support `yield`"):
        adgen.grad(kept)(w)


def test_a_value_of_one_number_in_an_array_is_differentiated_as_that_number():
    """``grad`` of a function returning ``np.array([v])`` (autograd's Bayesian optimisation
    example, as autograd and PyTorch take it): the gradient of ``v``; two numbers stay
    refused."""

    def f(x):
        return -np.sin(x)  # (x of one number: a result of shape (1,))

    def g(x):
        return (x @ x) * np.ones((1, 1))

    x = np.array([0.5])
    np.testing.assert_allclose(adgen.grad(f)(x), -np.cos(x), rtol=1e-15)
    value, gradient = adgen.value_and_grad(f)(x)
    np.testing.assert_allclose(value, -np.sin(x), rtol=0)
    np.testing.assert_allclose(gradient, -np.cos(x), rtol=1e-15)
    y = np.array([0.5, -2.0])
    np.testing.assert_allclose(adgen.grad(g)(y), 2 * y, rtol=0)
    with pytest.raises(adgen.NonScalarOutputError, match=r"an array of shape \(2,\)"):
        adgen.grad(f)(y)


def lower_triangle(d, params):
    """ADBench's GMM objective builds its factor column by column, counting its place in
    the parameter vector in an attribute of the function itself."""
    lower_triangle.idx = 0

    def column(i):
        n = d - i - 1
        col = np.concatenate((np.zeros(i + 1), params[lower_triangle.idx : lower_triangle.idx + n]))
        lower_triangle.idx += n
        return col

    return np.column_stack([column(i) for i in range(d)])


def test_a_function_counting_in_an_attribute_of_itself_and_a_nonlocal_counter():
    """State kept while the function runs: an attribute of the function itself (assigned
    first, then read and ``+=`` in a nested def) is a variable of the call; ``nonlocal`` in
    a nested def binds the enclosing function's variable -- in both modes."""
    theta = np.array([1.0, -2.0, 0.5])

    def f(t):
        return np.sum(lower_triangle(3, t) ** 2 * np.arange(1.0, 10.0).reshape(3, 3))

    L = lower_triangle(3, theta)
    np.testing.assert_allclose(L, [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [-2.0, 0.5, 0.0]])
    weights = np.arange(1.0, 10.0).reshape(3, 3)
    expected = 2 * theta * np.array([weights[1, 0], weights[2, 0], weights[2, 1]])
    np.testing.assert_allclose(adgen.grad(f)(theta), expected, rtol=1e-14)
    _, tangent = adgen.jvp(f, (theta,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(expected), rel=1e-14)

    def g(t):
        idx = 0
        total = 0.0

        def take(n):
            nonlocal idx, total
            part = t[idx : idx + n]
            total = total + np.sum(part)
            idx += n
            return part

        parts = [take(k + 1) for k in range(2)]
        return np.sum(parts[1] ** 2) + total

    np.testing.assert_allclose(adgen.grad(g)(theta), [1.0, 1.0 - 4.0, 1.0 + 1.0], rtol=1e-14)


def test_a_nonlocal_array_updated_in_place_is_refused_when_the_code_runs():
    def f(t):
        acc = np.zeros(2)

        def add(v):
            nonlocal acc
            acc += v

        add(t)
        return np.sum(acc**2)

    with pytest.raises(adgen.AdgenError, match="nonlocal array `acc`"):
        adgen.grad(f)(np.array([1.0, 2.0]))


# -- validation helpers of fitted estimators (scikit-learn's validate_data and its kin) ----


def check_options(X, **check_params):
    defaults = {"ensure_2d": True, "copy": False}
    options = {**defaults, **check_params}
    if options.get("ensure_2d", True) and X.ndim != 2:
        raise ValueError("expected a matrix")
    scale = options.get("scale", 1.0)
    return X * scale


def merged_options_energy(x):
    return np.sum(check_options(x[None, :], scale=3.0) ** 2) + np.sum(check_options(x[None, :]))


def test_merged_dict_displays_and_get_of_their_known_keys():
    """``{**defaults, **check_params}`` of dicts whose keys are known (a display, a
    helper's ``**kwargs``) and ``options.get(key, default)`` of them, read when transforming."""
    both_modes(merged_options_energy, Z, 18 * Z + 1)


def same_namespace(X, flag):
    if not flag:
        return
    if X.ndim == 2:
        return
    raise ValueError("namespaces differ")


def feature_names(X):
    names = None
    if isinstance(X, dict):
        names = np.asarray(list(X), dtype=object)
    if names is None or len(names) == 0:
        return
    if len(names) == 1:
        return names


def type_label(X):
    kind = type(X)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def n_features(X):
    try:
        count = X.shape[1]
    except IndexError as e:
        raise ValueError(f"{type_label(X)} has no feature axis") from e
    return count


def validated_energy(x):
    X = x.reshape(2, 2)
    same_namespace(X, True)
    if feature_names(X) is not None:
        raise ValueError("unexpected names")
    k = n_features(X)
    return np.sum(X**2) * k


def test_helpers_returning_none_on_some_paths_and_a_try_raising_from_its_cause():
    """A check whose bare ``return``s stand before a ``raise`` at its end, a helper that
    falls off its end (Python's ``return None`` written out), ``type(X).__module__``, and a
    ``try`` whose handler raises another error ``from`` the one it caught: the path taken is
    read, the validation runs as written."""
    both_modes(validated_energy, Z, 4 * Z)
    with pytest.raises(ValueError, match="no feature axis"):
        n_features(Z)  # (what the try guards: Python's own run)


# -- objects made inside that the code hands to functions adgen does not read ---------------

LABELS = np.array([2, 0, 1, 2])


class Encoder:
    """Labels to positions, as scikit-learn's ``LabelEncoder`` (whose ``fit`` passes ``self``
    on to validation functions)."""

    def fit(self, labels):
        self.classes_ = np.unique(labels)
        self.summary_ = repr(self)  # (the object given to a function that is not ours)
        return self

    def transform(self, labels):
        return np.searchsorted(self.classes_, labels)


def encoded_energy(x):
    enc = Encoder()
    enc.fit(LABELS)
    idx = enc.transform(LABELS)
    return np.sum(x[idx] ** 2)


def encoded_from_x(x):
    enc = Encoder()
    enc.fit(x)
    return np.sum(x * enc.classes_)


def test_an_object_made_inside_and_given_only_data_is_made_and_used_as_written():
    """``enc = Encoder(); enc.fit(labels)``, whose method hands ``self`` to a function adgen
    does not read: the object is made and its methods run as written (they see only the
    labels), and the positions they give index the differentiated array."""
    z = np.array([0.3, -0.7, 1.1])
    want = np.zeros(3)
    np.add.at(want, np.searchsorted(np.unique(LABELS), LABELS), 2 * z[[2, 0, 1, 2]])
    both_modes(encoded_energy, z, want)


def test_such_an_object_given_a_differentiated_value_is_refused():
    with pytest.raises(adgen.AdgenError, match="fit"):
        adgen.grad(encoded_from_x)(np.array([0.3, -0.7, 1.1]))


def clipped_margins(z):
    losses = 1 - z * np.array([1.0, -1.0, 1.0, -1.0])
    np.clip(losses, 0, None, out=losses)
    return np.mean(losses)


def test_np_clip_into_its_own_argument_is_the_write_it_makes():
    signs = np.array([1.0, -1.0, 1.0, -1.0])
    both_modes(clipped_margins, Z, -signs / 4 * (1 - Z * signs > 0))
