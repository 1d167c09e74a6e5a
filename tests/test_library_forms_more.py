"""Forms met in library code as installed and in users' programs (issue 34): each with exact
answers in both modes (a closed form, or central differences where noted)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from derivative_checks import check

import adgen


def rows_and_columns(z):
    w = np.r_[z, 1 - np.sum(z)]  # a simplex point from its free coordinates
    v = np.r_[0.5, z[:1], [2.0, 3.0]]
    m = np.c_[z, z**2, np.ones(2)]
    return np.sum(np.log(w) * np.arange(1.0, 4.0)) + np.sum(v**2) + np.sum(m[:, 1] * m[:, 0])


def test_np_r_and_np_c_of_differentiated_items_join_them():
    z = np.array([0.2, 0.3])
    a, b = z
    want = np.array(
        [1 / a - 3 / (1 - a - b) + 2 * a + 3 * a**2, 2 / b - 3 / (1 - a - b) + 3 * b**2]
    )
    check(rows_and_columns, z, want)
    assert rows_and_columns(z) == adgen.value_and_grad(rows_and_columns)(z)[0]


def ranges_stay_constants(z):
    return np.sum(np.r_[0:3] * z) + np.sum(np.c_[np.r_[1.0, 2.0, 3.0], z][:, 1])


def test_np_r_of_a_slice_is_the_range_it_makes():
    check(ranges_stay_constants, np.array([0.5, 1.5, 2.5]), np.array([1.0, 2.0, 3.0]))


def checked_methods(x):
    if not np.isfinite(x).all() or (x < -10).any():
        raise ValueError("x must be finite and above -10")
    return np.sum(x.take([0, 2]) * x.ptp()) + x.round(1).sum() * 0.0


def test_array_methods_all_any_take_ptp_round_are_numpys_functions():
    x = np.array([1.0, 3.0, 2.0])
    # d/dx (x0 + x2) (max - min) = ptp [1, 0, 1] + (x0 + x2) [-1, 1, 0]
    check(checked_methods, x, np.array([-1.0, 3.0, 2.0]))
    with pytest.raises(ValueError, match="finite"):
        adgen.grad(checked_methods)(np.array([1.0, np.nan, 2.0]))


def test_scipy_spatial_distances_read_as_installed():
    distance = pytest.importorskip("scipy.spatial.distance")
    v = np.array([0.3, -1.0, 2.0])
    x = np.array([1.0, 0.5, -0.5])
    check(lambda u: distance.euclidean(u, v), x, (x - v) / np.linalg.norm(x - v))
    check(lambda u: distance.minkowski(u, v, 1), x, np.sign(x - v))
    check(lambda u: distance.sqeuclidean(u, v), x, 2 * (x - v))


# -- a helper choosing a function in an `elif` chain whose tests read a class it imports itself
# (scikit-learn's pairwise_kernels: `isinstance(metric, Kernel)` of a local import)
def _gaussian(x, y, gamma=1.0):
    return np.exp(-gamma * (x - y) ** 2)


def _product(x, y, gamma=1.0):
    return x * y


KERNELS = {"gaussian": _gaussian, "product": _product}


def pairwise(x, y, metric="gaussian", **options):
    from fractions import Fraction as Special

    if metric == "precomputed":
        return x
    elif isinstance(metric, Special):
        func = metric.__call__
    elif metric in KERNELS:
        func = KERNELS[metric]
    elif callable(metric):
        func = _product
    return func(x, y, **options)


def test_a_function_chosen_in_branches_decided_by_a_locally_imported_class():
    x = np.array([1.0, 2.0])
    f = lambda v: np.sum(pairwise(v, 2.0, metric="gaussian", gamma=0.5))  # noqa: E731
    check(f, x, -2 * 0.5 * (x - 2.0) * np.exp(-0.5 * (x - 2.0) ** 2))


# -- a fitted model: a check that reads the object's attributes runs as written -------------
class Scaler:
    def fit(self, X):
        self.mean_ = X.mean(0)
        self.scale_ = X.std(0)
        return self

    def transform(self, X):
        ensure_fitted(self)
        return (X - self.mean_) / self.scale_


def ensure_fitted(estimator):
    fitted = [v for v in vars(estimator) if v.endswith("_") and not v.startswith("__")]
    if not len(fitted) > 0:
        raise ValueError(f"this {estimator.__class__.__name__} is not fitted yet")


def test_a_fitted_objects_method_behind_a_check_reading_vars_of_it():
    s = Scaler().fit(np.arange(12.0).reshape(4, 3) ** 1.5)
    x = np.ones((2, 3))
    check(lambda z: np.sum(s.transform(z) ** 2), x, 2 * (x - s.mean_) / s.scale_**2)
    unfitted = Scaler()  # (its attributes are read when transforming: refused by name)
    with pytest.raises(adgen.AdgenError, match="has no attribute `mean_`"):
        adgen.grad(lambda z: np.sum(unfitted.transform(z) ** 2))(x)


def test_a_comprehension_run_as_written_refuses_a_derivative_reaching_through_it():
    def f(x):
        parts = [v for v in sorted(x.tolist())]  # a list no rule reads: run as written
        return np.sum(x) * len(parts) + parts[0]

    with pytest.raises(adgen.AdgenError):
        adgen.grad(f)(np.array([2.0, 1.0]))


def _scikit_learn_1_8(module: str):
    """scikit-learn's module, where it is 1.8 or newer: 1.7 (the last for Python 3.10) reads
    pandas from `sys.modules` inside a `try` in its input checks, which adgen refuses."""
    sklearn = pytest.importorskip("sklearn")
    if tuple(int(p) for p in sklearn.__version__.split(".")[:2]) < (1, 8):
        pytest.skip("scikit-learn 1.7's input checks read pandas from sys.modules in a try")
    return pytest.importorskip(module)


def test_scikit_learn_predictions_of_fitted_estimators():
    linear_model = _scikit_learn_1_8("sklearn.linear_model")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    ridge = linear_model.Ridge().fit(X, X @ [1.0, -2.0, 0.5])
    x = rng.normal(size=(4, 3))
    check(lambda z: np.sum(ridge.predict(z) ** 2), x, 2 * np.outer(ridge.predict(x), ridge.coef_))
    logistic = linear_model.LogisticRegression().fit(X, (X[:, 0] > 0).astype(int))
    check(lambda z: np.sum(logistic.predict_proba(z)[:, 1]), x, rtol=1e-5)


def test_scikit_learn_transforms_of_fitted_estimators_leave_the_input_alone():
    preprocessing = _scikit_learn_1_8("sklearn.preprocessing")
    decomposition = _scikit_learn_1_8("sklearn.decomposition")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3))
    scaler = preprocessing.StandardScaler().fit(X)  # transform: X -= mean_ of a copy
    x = rng.normal(size=(4, 3))
    kept = x.copy()
    want = 2 * (x - scaler.mean_) / scaler.scale_**2
    check(lambda z: np.sum(scaler.transform(z) ** 2), x, want)
    np.testing.assert_array_equal(x, kept)
    pca = decomposition.PCA(2).fit(X)
    t = pca.transform(x)
    check(lambda z: np.sum(pca.transform(z) ** 2), x, 2 * t @ pca.components_)
    np.testing.assert_array_equal(x, kept)


# -- a helper writing into its `out` parameter, which is also its input ----------------------
def expit_into(x, out=None):
    if x.ndim >= 1:
        return np.tanh(x, out=out)
    return np.tanh(x)


def softmax_in_place(X, copy=True):
    if copy:
        X = np.asarray(X, copy=True)
    max_prob = np.reshape(np.max(X, axis=1), (-1, 1))
    X -= max_prob
    np.exp(X, out=np.asarray(X))
    X /= np.reshape(np.sum(X, axis=1), (-1, 1))
    return X


def test_a_helper_writing_its_input_through_out_into_the_callers_new_array():
    W = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])

    def f(z):
        d = z @ W
        d = expit_into(d, out=d)
        return np.sum(softmax_in_place(d, copy=False)[:, 1] * np.sum(d, axis=1))

    check(f, np.array([[0.1, 0.2], [0.3, -0.4]]), rtol=1e-5)


def centre(X):
    X -= X.mean(0)
    return X.sum()


def test_updating_a_callers_array_another_name_sees_is_refused():
    def seen_by_another_name(z):
        d = z * 2.0
        e = d
        return centre(d) + np.sum(e**3)

    def the_callers_argument(z):
        return centre(z) + np.sum(z**2)

    for f in (seen_by_another_name, the_callers_argument):
        with pytest.raises(adgen.AdgenError, match="in-place update of `X`"):
            adgen.grad(f)(np.ones((3, 2)))


def test_a_function_looked_up_by_a_name_made_when_transforming():
    def atleast(x, ndim=2):
        return getattr(np, f"atleast_{ndim}d")(x)

    check(lambda v: np.sum(atleast(v) @ np.array([1.0, 2.0])), np.array([3.0, 4.0]), [1.0, 2.0])


def maybe_copied(X, copy):
    return np.asarray(X, copy=True) if copy else X


def test_updating_a_name_rebound_to_a_helpers_result_that_may_be_the_argument():
    def copied(z):
        X = z
        X = maybe_copied(X, copy=True)
        X -= 1.0
        return np.sum(X**2) + np.sum(z)

    def same(z):
        X = z
        X = maybe_copied(X, copy=False)
        X -= 1.0
        return np.sum(X**2) + np.sum(z)

    x = np.array([1.0, 3.0])
    check(copied, x, 2 * (x - 1.0) + 1.0)
    with pytest.raises(adgen.AdgenError, match="in-place update of `X`"):
        adgen.grad(same)(x)


class Bandwidth:
    """A kernel whose `log_width` property sets the width it reads (scikit-learn's `theta`)."""

    def __init__(self):
        self.width = 1.0

    @property
    def log_width(self):
        return np.log(self.width)

    @log_width.setter
    def log_width(self, value):
        self.width = np.exp(value)

    def __call__(self, x):
        return np.exp(-(x**2) / self.width)


def test_a_property_setter_of_an_outside_object_given_a_derivative_is_refused():
    kernel = Bandwidth()

    def f(t):
        kernel.log_width = t[0]  # the setter changes `width`, which the call reads
        return np.sum(kernel(t))

    # before: run as written, the write was invisible to the derivative (a wrong gradient)
    with pytest.raises(adgen.AdgenError, match="runs code of its own on that write"):
        adgen.grad(f)(np.array([0.3, 0.7]))


class Refitted:
    """A model whose `refit` adgen cannot read (a `for ... else`): run as written, it changes
    `scale`, which its `__call__` reads."""

    def __init__(self):
        self.scale = 1.0

    def refit(self, value):
        for _ in range(2):
            pass
        else:
            self.scale = value

    def __call__(self, x):
        return self.scale * x


def test_reading_attributes_a_method_run_as_written_may_change_is_refused():
    model = Refitted()

    def refit_then_read(t):
        model.refit(3.0)
        return np.sum(model(t))

    def read_then_refit(t):
        total = np.sum(model(t))
        model.refit(3.0)
        return total

    # before: the attribute was read when transforming, so value and gradient were those of
    # scale 1.0 where Python computes 3.0 (silently wrong)
    for f, match in (
        (refit_then_read, "which a call adgen runs as written may change"),
        (read_then_refit, "runs as written and which may change the attributes"),
    ):
        model.scale = 1.0
        with pytest.raises(adgen.AdgenError, match=match):
            adgen.value_and_grad(f)(np.ones(2))


ACTIVATIONS = {"tanh": np.tanh, "relu": lambda v: np.maximum(v, 0.0)}


class Layer:
    def __init__(self, activation):
        self.activation = activation
        self.weight = np.array([[1.0, -2.0], [0.5, 1.5]])

    def __call__(self, x):
        act = ACTIVATIONS[self.activation]  # a function chosen by an option of the object
        return act(x @ self.weight)


def test_a_function_picked_from_a_dict_by_an_attribute_of_an_outside_object():
    layer = Layer("tanh")
    x = np.array([0.2, -0.1])
    want = layer.weight @ (1 - np.tanh(x @ layer.weight) ** 2)
    check(lambda v: np.sum(layer(v)), x, want)


def test_writes_and_reads_through_flat_are_the_entries_in_c_order():
    def f(t):
        q = np.outer(t, t) + np.eye(3)
        d = q.shape[0]
        q.flat[:: d + 1] += t**2  # the diagonal (statsmodels' _smw_logdet)
        return np.sum(q) + np.sum(q.flat[1:4] * 2.0)

    # sum(q) = (sum t)^2 + 3 + sum t^2; q.flat[1:4] = t0 t1, t0 t2, t1 t0
    def want(t):
        a, b, c = t
        total = 2 * np.sum(t) + 2 * t
        return total + 2.0 * np.array([2 * b + c, 2 * a, a])

    x = np.array([0.5, -0.3, 0.8])
    check(f, x, want(x))


class Components:
    def __init__(self, size):
        self.size = size

    @staticmethod
    def from_parts(a, b):
        parts = Components(len(a))
        parts.a = a
        parts.b = b
        return parts


def objective(params):
    if type(params) is not Components:  # statsmodels' MixedLM.loglike
        params = Components.from_parts(params[:2], params[2:])
    return np.sum(params.a**2) * np.sum(params.b)


def test_an_object_a_helper_makes_passed_straight_to_another_helper():
    x = np.array([1.0, 2.0, 3.0])
    a, b = x[:2], x[2:]
    want = np.concatenate([2 * a * np.sum(b), np.full(1, np.sum(a**2))])
    check(lambda v: objective(Components.from_parts(v[:2], v[2:])), x, want)
    check(objective, x, want)


class Penalty:
    def __init__(self, weight):
        self.weight = weight

    def func(self, v, alpha=None):
        return self.weight * np.sum(v**2)


class MultiplePenalties:
    """statsmodels' MultivariateGamPenalty: penalties picked by index in a range loop, and a
    `loglike`-style method taking `**kwds`."""

    def __init__(self):
        self.gp = [Penalty(1.0), Penalty(2.0)]
        self.k_variables = 2
        self.mask = [np.array([True, False, True]), np.array([False, True, False])]

    def func(self, params, alpha=None, **kwds):
        if alpha is None:
            alpha = [None] * self.k_variables
        cost = 0
        for i in range(self.k_variables):
            params_i = params[self.mask[i]]
            cost += self.gp[i].func(params_i, alpha=alpha[i])
        return cost


def test_objects_picked_by_the_counter_of_a_range_loop_and_a_method_taking_kwds():
    penalties = MultiplePenalties()
    x = np.array([1.0, 2.0, 3.0])
    check(penalties.func, x, np.array([2.0, 8.0, 6.0]))


KERNEL_PARAMS = {"rbf": ("gamma",), "poly": ("gamma", "degree", "coef0")}


def rbf(X, Y, gamma=1.0):
    return np.exp(-gamma * (X - Y) ** 2)


class KernelModel:
    """scikit-learn's KernelRidge._get_kernel and pairwise_kernels(filter_params=True)."""

    def __init__(self):
        self.kernel, self.gamma, self.kernel_params = "rbf", 0.5, None

    def kernel_of(self, X, Y):
        if callable(self.kernel):
            params = self.kernel_params or {}
        else:
            params = {"gamma": self.gamma, "degree": 3, "coef0": 1}
        kwds = {k: params[k] for k in params if k in KERNEL_PARAMS[self.kernel]}
        scaled = {name: value * 1.0 for name, value in kwds.items()}
        return rbf(X, Y, **scaled)


def test_dict_comprehensions_over_known_keys_and_a_dict_bound_in_a_decided_branch():
    model = KernelModel()
    x = np.array([1.0, 2.0])
    check(lambda v: np.sum(model.kernel_of(v, 2.0)), x, -(x - 2.0) * np.exp(-0.5 * (x - 2) ** 2))


def test_scikit_learn_kernel_ridge_predictions():
    kernel_ridge = _scikit_learn_1_8("sklearn.kernel_ridge")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(10, 2))
    model = kernel_ridge.KernelRidge(kernel="rbf", gamma=0.5).fit(X, np.sin(X[:, 0]))
    x = rng.normal(size=(3, 2))
    # d/dz sum_i sum_j a_j exp(-g |z_i - X_j|^2) = sum_j a_j k_ij (-2 g (z_i - X_j))
    k = np.exp(-0.5 * np.sum((x[:, None] - X[None]) ** 2, axis=-1))
    a = model.dual_coef_
    want = np.einsum("j,ij,ijd->id", a, k, -1.0 * (x[:, None] - X[None]))
    check(lambda z: np.sum(model.predict(z)), x, want)


class Weighted:
    def __init__(self, data, weights):
        self.data, self.weights = data, weights

    @functools.cached_property
    def sum_weights(self):
        return np.sum(self.weights)

    @functools.cached_property
    def mean(self):
        return np.sum(self.data * self.weights) / self.sum_weights


def test_cached_properties_of_an_object_made_inside():
    data = np.array([1.0, 2.0, 4.0])

    w = np.array([0.5, 1.0, 1.5])
    want = (data * np.sum(w) - np.sum(data * w)) / np.sum(w) ** 2
    check(lambda v: _weighted_mean(data, v), w, want)


def _weighted_mean(data, w):
    stats = Weighted(data, w)
    return stats.mean


def test_statsmodels_weighted_statistics_as_installed():
    weightstats = pytest.importorskip("statsmodels.stats.weightstats")
    data = np.array([1.0, 2.0, 4.0, -1.0])

    def f(w):
        d = weightstats.DescrStatsW(data, weights=w)
        return d.mean + d.var

    check(f, np.array([0.5, 1.0, 1.5, 0.7]), rtol=1e-5)


class Tagged:
    def tags(self):
        return {"scale": 3.0}


class Untagged:
    pass


def tags_of(estimator):
    """scikit-learn 1.7's get_tags: a try whose handler reads the exception it caught."""
    try:
        tags = estimator.tags()
    except AttributeError as exc:
        if "has no attribute 'tags'" in str(exc):
            tags = {"scale": 1.0}
        else:
            raise
    return tags


def test_a_try_whose_handler_reads_the_exception_it_caught():
    tagged, untagged = Tagged(), Untagged()

    def f(x):
        return tags_of(tagged)["scale"] * np.sum(x**2) + tags_of(untagged)["scale"] * np.sum(x)

    check(f, np.array([1.0, 2.0]), np.array([7.0, 13.0]))


def test_a_relative_import_inside_a_helper_is_its_packages_module():
    relative = pytest.importorskip("real_code.relative_import")
    x = np.array([[0.0, 1.0], [0.5, -0.5], [1.0, 0.2]])
    check(relative.kernel_sum, x)


def fft_sized_energy(x, pad=True):
    n = x.shape[0]
    if bool(pad):  # (an option known now: one branch lowered)
        size = 2 ** (2 * n - 1).bit_length()  # (n known only when the code runs)
        half = (size // 2).bit_count() + float(4).is_integer()
    else:
        size, half = n, 0
    spectrum = np.fft.fft(x - x.mean(), n=size)
    return np.sum(np.abs(spectrum) ** 2) / size + half * np.sum(x)


def test_number_methods_of_lengths_and_bool_of_an_option():
    """``(2 * n - 1).bit_length()`` of a length the argument's shape decides runs with the
    program; ``bool(pad)`` of a constant is a constant, deciding its branch. Parseval: the
    padded spectrum's energy over its size is the centred energy, whose gradient is
    ``2 (x - mean)``; ``half`` is 2."""
    x = np.array([0.5, -1.0, 2.0, 0.25, 1.5])
    check(fft_sized_energy, x, 2 * (x - x.mean()) + 2.0, rtol=1e-9)
    check(lambda z: fft_sized_energy(z, pad=False), x, 2 * (x - x.mean()), rtol=1e-9)
    # (an int carries no derivative: int(z) is piecewise constant)
    assert adgen.grad(lambda z: z * float(int(z).bit_length()))(3.0) == 2.0


def test_statsmodels_autocorrelations_as_installed():
    """``acovf`` (its FFT length from ``.bit_length()``, its options through ``bool_like``)
    and ``acf``, as installed, against the autocovariances' closed form: the gradient of
    ``sum_k c_k^2`` with ``c_k = sum_t d_t d_{t+k} / n`` (``d`` the centred series) is
    ``2 sum_k c_k (shift_k(d) + shift_-k(d)) / n``, centred."""
    stattools = pytest.importorskip("statsmodels.tsa.stattools")
    rng = np.random.default_rng(3)
    x = rng.normal(size=12)
    d, n = x - x.mean(), x.size
    c = np.array([d[: n - k] @ d[k:] for k in range(n)]) / n
    want = np.zeros(n)
    for k in range(n):
        want[: n - k] += 2 * c[k] * d[k:] / n
        want[k:] += 2 * c[k] * d[: n - k] / n
    want -= want.mean()
    for fft in (True, False):
        energy = functools.partial(lambda z, f: np.sum(stattools.acovf(z, fft=f) ** 2), f=fft)
        check(energy, x, want, rtol=1e-9)
    check(lambda z: np.sum(stattools.acf(z, nlags=4) ** 2), x, rtol=1e-5)


def test_statsmodels_arma_autocovariances_through_lfiltic_and_a_filter_state():
    """``arma_acovf`` as installed: ``lfiltic`` (a new array written item by item in loops,
    divided in place in a branch) gives ``lfilter`` its initial state, whose output is
    written into the array ``lfiltic`` read a view of. ARMA(1, 1) with ``phi``, ``theta``:
    ``g0 = (1 + 2 phi theta + theta^2) / (1 - phi^2)``, ``g1 = (1 + phi theta)(phi + theta)
    / (1 - phi^2)``, ``g_k = phi^(k - 1) g1``."""
    process = pytest.importorskip("statsmodels.tsa.arima_process")

    def total(p):
        return np.sum(process.arma_acovf(np.r_[1.0, -p[0]], np.r_[1.0, p[1]], nobs=5))

    def closed_form(p):
        phi, theta = p
        g0 = (1 + 2 * phi * theta + theta**2) / (1 - phi**2)
        g1 = (1 + phi * theta) * (phi + theta) / (1 - phi**2)
        return g0 + g1 * sum(phi**k for k in range(4))

    p = np.array([0.5, 0.2])
    assert total(p) == pytest.approx(closed_form(p), rel=1e-12)
    check(total, p, adgen.grad(closed_form)(p), rtol=1e-9)
    check(lambda q: np.sum(process.arma_acf(np.r_[1.0, -q[0]], np.r_[1.0, q[1]], lags=6) ** 2), p)


def _past_state(y):
    """In the style of scipy's lfiltic: a new array written in loops, scaled in a branch."""
    zi = np.zeros(3)
    for m in range(3):
        zi[m] = np.sum(y[m:] * 0.5)
    for m in range(2):
        zi[m] -= y[m] * 0.25
    if y[0] > 0.01:  # (decided when the program runs)
        zi /= 2.0
    return zi


def _scaled(z, zi=None):
    if zi is None:  # (decided: the state is an array whichever branch ran)
        return z
    return z * zi[0]


def history_energy(p):
    h = np.zeros(6)
    h[:3] = p * p
    if np.sum(p) < 10.0:  # (decided when the program runs)
        zi = _past_state(h[:3][::-1])  # (a view of h, read into a new array)
        h[3:] = _scaled(p, zi)  # (so h may be written)
    return np.sum(h**2)


def test_an_array_written_in_loops_and_branches_stays_the_one_a_helper_made():
    p = np.array([0.3, -0.2, 0.5])
    check(history_energy, p)


def clipped_energy(x):
    return np.sum(np.clip(x, max=1.0) ** 2) + np.sum(x.clip(min=-0.5) ** 3)


def test_clip_given_one_bound_by_numpys_newer_keywords():
    """``np.clip(x, max=1.0)`` (NumPy 2.1's names, one bound left out: None) and
    ``x.clip(min=...)``; SciPy's ``circvar`` clips so, ``1 - R`` with ``R`` the mean
    resultant length, whose gradient is ``(C sin x - S cos x) / (n R)``."""
    x = np.array([0.5, 2.0, -1.0, 0.75])
    want = 2 * np.minimum(x, 1.0) * (x < 1.0) + 3 * np.maximum(x, -0.5) ** 2 * (x > -0.5)
    check(clipped_energy, x, want, rtol=1e-12)
    stats = pytest.importorskip("scipy.stats")
    angles = np.array([0.3, 1.2, 2.0, 0.7, -0.4])
    c, s = np.mean(np.cos(angles)), np.mean(np.sin(angles))
    r = np.hypot(c, s)
    want = (c * np.sin(angles) - s * np.cos(angles)) / (angles.size * r)
    check(lambda z: stats.circvar(z), angles, want, rtol=1e-9)


def _renamed(old, new):
    """A decorator in the style of SciPy's _rename_parameter: an old keyword still taken."""

    def decorate(fun):
        @functools.wraps(fun)
        def wrapper(*args, **kwargs):
            if old in kwargs:
                kwargs[new] = kwargs.pop(old)
            return fun(*args, **kwargs)

        return wrapper

    return decorate


@_renamed("moment", "order")
def central_moment(a, order=1, center=None):
    c = np.mean(a) if center is None else center
    return np.mean((a - c) ** order)


def test_a_decorator_renaming_a_keyword_is_read_for_the_keywords_given():
    """``old in kwargs`` of the ``**kwargs`` a call gave is decided when transforming: the
    branch renaming the keyword is not lowered where the call does not pass it."""
    x = np.array([0.5, 2.0, -1.0, 0.75])
    d = x - x.mean()
    want = 3 * (d**2 - np.mean(d**2)) / x.size
    check(lambda z: central_moment(z, order=3), x, want, rtol=1e-12)
    check(lambda z: central_moment(z, 3, center=0.5), x, 3 * (x - 0.5) ** 2 / x.size)
