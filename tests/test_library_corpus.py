"""Functions of installed libraries, differentiated as they are (issue 34's corpus).

Each is the library's own function or method, imported as installed, with nothing edited:
adgen reads its source (validation that raises, ``hasattr`` tests on options, string
formatting, methods called on ``self``) and differentiates the path the call takes. Each
derivative is checked against the gradient, score or Hessian the library's authors wrote
by hand, in both modes, and at second order where the library has a Hessian.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import pytest

import adgen

sm = pytest.importorskip("statsmodels.api")
try:
    import sklearn
    from sklearn.metrics import pairwise as sk_pairwise
    from sklearn.utils import extmath as sk_extmath
except ImportError:  # (scikit-learn is in the test extra)
    sklearn = sk_pairwise = sk_extmath = None

# scikit-learn before 1.8 (the newest on Python 3.10) validates arrays by other paths, some of
# which adgen refuses by name (a distance matrix's diagonal filled through a reshaped view of
# it: a write through a view another name holds); where it reads them, the derivative is
# checked as on 1.8
SKLEARN_READ = sklearn is not None and tuple(
    int(p) for p in sklearn.__version__.split(".")[:2]
) >= (
    1,
    8,
)


def _refused_on_older_sklearn(f, *args):
    """On an older scikit-learn, a path adgen does not read is refused by name (never a
    wrong number): True, the caller's test is done; else False (read: the caller checks the
    derivative as on the newer one)."""
    if SKLEARN_READ:
        return False
    try:
        adgen.grad(f)(*args)
    except adgen.AdgenError as exc:
        assert "sklearn" in str(exc), str(exc)
        return True
    return False


RNG = np.random.default_rng(20261129)
N, P = 40, 4
X = np.column_stack([np.ones(N), RNG.normal(size=(N, P - 1))])
BETA = np.array([0.2, -0.4, 0.3, 0.1])
Y_BINARY = (RNG.random(N) < 1.0 / (1.0 + np.exp(-X @ BETA))).astype(float)
Y_COUNT = RNG.poisson(np.exp(X @ BETA)).astype(float)
Y_REAL = X @ BETA + 0.3 * RNG.normal(size=N)
PARAMS = np.array([0.1, -0.2, 0.25, 0.05])


def _models():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "Logit": sm.Logit(Y_BINARY, X),
            "Probit": sm.Probit(Y_BINARY, X),
            "Poisson": sm.Poisson(Y_COUNT, X),
            "OLS": sm.OLS(Y_REAL, X),
        }


MODELS = _models()


def _check_both_modes(f, x, gradient):
    np.testing.assert_allclose(adgen.grad(f)(x), gradient, rtol=1e-9, atol=1e-10)
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    want = np.sum(gradient * v)
    np.testing.assert_allclose(adgen.jvp(f, (x,), (v,))[1], want, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", ["Logit", "Probit", "Poisson", "OLS"])
def test_statsmodels_loglike_as_a_bound_method_against_its_score(name):
    model = MODELS[name]
    _check_both_modes(model.loglike, PARAMS, model.score(PARAMS))


@pytest.mark.parametrize("name", ["Logit", "Probit", "Poisson"])
def test_statsmodels_loglike_second_order_against_its_hessian(name):
    model = MODELS[name]
    want = model.hessian(PARAMS)
    np.testing.assert_allclose(adgen.hessian(model.loglike)(PARAMS), want, rtol=1e-9)
    v = np.array([1.0, -2.0, 0.5, 0.25])
    np.testing.assert_allclose(adgen.hvp(model.loglike)(PARAMS, v), want @ v, rtol=1e-9)


@pytest.mark.parametrize("name", ["Logit", "Poisson"])
def test_statsmodels_loglikeobs_jacobian_against_score_obs(name):
    model = MODELS[name]
    want = model.score_obs(PARAMS)
    np.testing.assert_allclose(adgen.jacrev(model.loglikeobs)(PARAMS), want, rtol=1e-9)
    np.testing.assert_allclose(adgen.jacfwd(model.loglikeobs)(PARAMS), want, rtol=1e-9)


def test_scipy_logsumexp_against_softmax():
    special = pytest.importorskip("scipy.special")
    x = np.array([0.5, 1.2, -0.3, 0.8])

    def f(x):
        return special.logsumexp(x)

    _check_both_modes(f, x, special.softmax(x))
    s = special.softmax(x)
    np.testing.assert_allclose(adgen.hessian(f)(x), np.diag(s) - np.outer(s, s), rtol=1e-9)


def test_sklearn_output_losses_against_the_backpropagation_deltas():
    """scikit-learn's MLP starts back-propagation with the output layer's delta
    ``activations[-1] - y`` (divided by the number of samples): the gradient of its
    ``log_loss`` after a softmax, and of ``binary_log_loss`` after a logistic, w.r.t. the
    output layer's pre-activations."""
    nn = pytest.importorskip("sklearn.neural_network._base")
    special = pytest.importorskip("scipy.special")
    y = np.eye(3)[RNG.integers(0, 3, 6)]
    z = RNG.normal(size=(6, 3))

    def multiclass(z):
        return nn.log_loss(y, special.softmax(z, axis=1))

    _check_both_modes(multiclass, z, (special.softmax(z, axis=1) - y) / 6)
    yb, zb = y[:, :1], z[:, :1]

    def binary(z):
        return nn.binary_log_loss(yb, special.expit(z))

    _check_both_modes(binary, zb, (special.expit(zb) - yb) / 6)


def test_statsmodels_negative_binomial_chooses_its_log_gamma_in_a_branch():
    """``_ll_nbin`` picks ``loggamma`` or ``gammaln`` in an ``if`` decided when it runs
    (``np.iscomplex(params)``), then calls the one it picked: adgen reads the statements after
    the ``if`` in each path. Checked against the model's own score, alpha included."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sm.NegativeBinomial(Y_COUNT, X)
    params = np.r_[PARAMS, 0.5]
    _check_both_modes(model.loglike, params, model.score(params))
    # (statsmodels' own `hessian` here disagrees with differences of its `score` in the alpha
    # row by 6.4: the Hessian is checked against those differences)
    steps = np.eye(params.size) * 1e-6
    want = np.array([(model.score(params + e) - model.score(params - e)) / 2e-6 for e in steps])
    np.testing.assert_allclose(adgen.hessian(model.loglike)(params), want, rtol=1e-6, atol=1e-6)


def test_sklearn_tsne_kl_divergence_against_its_own_gradient():
    """scikit-learn's t-SNE objective as installed: ``pdist`` and ``squareform`` of the
    embedding, in-place updates of the distances, its gradient written row by row into an
    ``np.ndarray`` buffer (read with ``np.ravel(..., order="K")``); adgen differentiates the
    divergence it returns and matches the gradient it returns too, and the Hessian matches
    differences of that gradient."""
    tsne = pytest.importorskip("sklearn.manifold._t_sne")
    n, dims = 6, 2
    p = np.abs(RNG.normal(size=n * (n - 1) // 2))
    p *= 0.5 / p.sum()  # condensed joint probabilities: the full matrix sums to 1
    params = RNG.normal(size=n * dims)

    def kl(y):
        return tsne._kl_divergence(y, p, 1.0, n, dims)[0]

    def sklearn_grad(y):
        return tsne._kl_divergence(y, p, 1.0, n, dims)[1]

    _check_both_modes(kl, params, sklearn_grad(params))
    steps = np.eye(params.size) * 1e-6
    want = np.array([(sklearn_grad(params + e) - sklearn_grad(params - e)) / 2e-6 for e in steps])
    np.testing.assert_allclose(adgen.hessian(kl)(params), want, rtol=1e-6, atol=1e-6)


def test_sklearn_huber_loss_against_its_own_gradient():
    """scikit-learn's Huber regression objective as installed (``safe_sparse_dot`` asks for
    the array namespace; an in-place ``-=`` of the intercept in a branch)."""
    huber = pytest.importorskip("sklearn.linear_model._huber")
    y = X @ BETA + RNG.standard_t(3, size=N)
    w = np.r_[PARAMS, 0.2, 1.3]  # coefficients, intercept, scale
    weights = np.ones(N)

    def loss(w):
        return huber._huber_loss_and_gradient(w, X, y, 1.35, 1e-3, weights)[0]

    def sklearn_grad(w):
        return huber._huber_loss_and_gradient(w, X, y, 1.35, 1e-3, weights)[1]

    _check_both_modes(loss, w, sklearn_grad(w))


def test_sklearn_validate_params_wrapper_checks_then_reads_the_function():
    """``@validate_params`` (scikit-learn's own decorator, on a function written here): adgen
    runs its parameter checks as written -- bad input raises scikit-learn's error -- and
    reads the wrapped function for the derivative."""
    validation = pytest.importorskip("sklearn.utils._param_validation")

    positive = validation.Interval(numbers.Integral, 1, None, closed="left")

    @validation.validate_params(
        {"x": ["array-like"], "power": [positive]}, prefer_skip_nested_validation=True
    )
    def powered(x, power=2):
        return np.sum(x**power)

    def f(x, power=3):
        return powered(x, power=power) * 2.0

    x = np.array([0.5, -1.0, 2.0])
    _check_both_modes(f, x, 6.0 * x**2)
    np.testing.assert_allclose(adgen.hessian(f)(x), np.diag(12.0 * x), rtol=1e-12)
    with pytest.raises(validation.InvalidParameterError, match="power"):
        adgen.grad(f)(x, 0)


def _differences(f, x, step=1e-6):
    return np.array([(f(x + e) - f(x - e)) / (2 * step) for e in np.eye(x.size) * step])


def _glm_tweedie():
    families = sm.families
    y = np.exp(X @ BETA) * RNG.gamma(2.0, 0.5, size=N)
    family = families.Tweedie(link=families.links.Log(), var_power=1.5)
    return sm.GLM(y, X, family=family), PARAMS


def _mnlogit():
    y = RNG.integers(0, 3, N).astype(float)
    return sm.MNLogit(y, X), np.r_[PARAMS, 0.5 * PARAMS]


def _ordered_logit():
    ordinal = pytest.importorskip("statsmodels.miscmodels.ordinal_model")
    y = RNG.integers(0, 3, N).astype(float)
    return ordinal.OrderedModel(y, X[:, 1:], distr="logit"), np.r_[PARAMS[1:], -0.5, 0.3]


@pytest.mark.parametrize("make", [_glm_tweedie, _mnlogit, _ordered_logit])
def test_statsmodels_likelihoods_against_differences_and_their_score(make):
    """GLM Tweedie (its log-likelihood sums ``scipy.special.log_wright_bessel`` terms of a
    profiled scale), MNLogit (``np.reshape(..., order="F")``), OrderedModel with a logistic
    link (``scipy.stats.logistic.cdf``): adgen against central differences of the
    log-likelihood, and against the model's own score where it writes one out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, params = make()
    f = model.loglike
    want = _differences(f, params)
    np.testing.assert_allclose(adgen.grad(f)(params), want, rtol=1e-6, atol=1e-6)
    v = np.linspace(-1.0, 1.0, params.size)
    np.testing.assert_allclose(adgen.jvp(f, (params,), (v,))[1], want @ v, rtol=1e-6, atol=1e-6)
    if isinstance(model, sm.MNLogit):
        np.testing.assert_allclose(adgen.grad(f)(params), model.score(params), rtol=1e-9)


def _linear_kernel_energy(x, y):
    return np.sum(sk_pairwise.linear_kernel(x, y) ** 2)


@pytest.mark.skipif(sk_pairwise is None, reason="scikit-learn is not installed")
def test_sklearn_linear_kernel_through_its_array_checks():
    """``linear_kernel`` as installed: ``validate_params``, ``check_pairwise_arrays`` (``Y is
    X``, ``issparse``, narwhals' dataframe tests, ``check_array``'s dtype and finiteness
    checks), ``safe_sparse_dot``; against the derivative of ``sum((X Y^T)^2)``, ``2 X Y^T Y``,
    in both modes, ``Y`` another array and the same one."""
    x = RNG.normal(size=(5, 3))
    if _refused_on_older_sklearn(_linear_kernel_energy, x, x):
        return
    for y in (RNG.normal(size=(4, 3)), x):
        want = 2 * (x @ y.T) @ y
        np.testing.assert_allclose(adgen.grad(_linear_kernel_energy)(x, y), want, rtol=1e-12)
        v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
        tangents = (v, np.zeros_like(y))
        got = adgen.jvp(_linear_kernel_energy, (x, y), tangents)[1]
        np.testing.assert_allclose(got, np.sum(want * v), rtol=1e-12)  # (y's tangent: 0)


def _distance_sum(x, y):
    return np.sum(sk_pairwise.euclidean_distances(x, y))


@pytest.mark.skipif(sk_pairwise is None, reason="scikit-learn is not installed")
def test_sklearn_euclidean_distances_through_its_norms_and_in_place_updates():
    """``euclidean_distances`` as installed: its row norms (``np.einsum`` in ``row_norms``),
    ``distances += XX`` and ``np.maximum(distances, 0, out=distances)`` through
    ``_modify_in_place_if_numpy``, ``Y is X`` deciding the zero diagonal; against the
    derivative of the sum of distances, ``sum_j (x_i - y_j) / d_ij``, in both modes."""
    x, y = RNG.normal(size=(5, 3)), RNG.normal(size=(4, 3))
    if _refused_on_older_sklearn(_distance_sum, x, y):
        return
    diff = x[:, None, :] - y[None, :, :]
    want = np.sum(diff / np.linalg.norm(diff, axis=-1, keepdims=True), axis=1)
    np.testing.assert_allclose(adgen.grad(_distance_sum)(x, y), want, rtol=1e-9)
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    got = adgen.jvp(_distance_sum, (x, y), (v, np.zeros_like(y)))[1]
    np.testing.assert_allclose(got, np.sum(want * v), rtol=1e-9)


def _nan_distance_energy(x, y):
    return np.sum(sk_pairwise.nan_euclidean_distances(x, y) ** 2)


@pytest.mark.skipif(sk_pairwise is None, reason="scikit-learn is not installed")
def test_sklearn_nan_euclidean_distances_with_missing_entries():
    """``nan_euclidean_distances`` as installed: ``check_array(copy=True)`` inside
    ``check_pairwise_arrays`` (a helper's new array, written in place: ``X[missing_X] = 0``),
    its mask through ``with suppress(ImportError, AttributeError): import pandas ...``,
    ``value_to_mask is pandas.NA`` of a float and ``X is Y`` after the writes. Each squared
    distance is ``n / m_ij * sum_k (x_ik - y_jk)^2`` over the m_ij features both rows have:
    its gradient is ``2 n / m_ij (x_ik - y_jk)`` summed over j where both are present."""
    x, y = RNG.normal(size=(5, 3)), RNG.normal(size=(4, 3))
    x[0, 1] = x[3, 2] = y[1, 0] = np.nan
    if _refused_on_older_sklearn(_nan_distance_energy, x, y):
        return
    present = ~np.isnan(x)[:, None, :] & ~np.isnan(y)[None, :, :]
    diff = np.where(present, x[:, None, :] - y[None, :, :], 0.0)
    scale = x.shape[1] / present.sum(axis=-1, keepdims=True)
    want = np.sum(2 * scale * diff, axis=1)
    np.testing.assert_allclose(adgen.grad(_nan_distance_energy)(x, y), want, rtol=1e-10)
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    got = adgen.jvp(_nan_distance_energy, (x, y), (v, np.zeros_like(y)))[1]
    np.testing.assert_allclose(got, np.sum(want * v), rtol=1e-10)


def _row_norm_sum(x):
    return np.sum(sk_extmath.row_norms(x))


def _squared_row_norms_energy(x):
    return np.sum(sk_extmath.row_norms(x, squared=True) ** 2)


@pytest.mark.skipif(sk_extmath is None, reason="scikit-learn is not installed")
def test_sklearn_row_norms_through_its_sparse_test_and_namespace():
    """``row_norms`` as installed (``sparse.issparse`` decided by the argument's kind, its
    namespace bound in the branch taken, ``np.einsum``): ``sum_i ||x_i||`` has gradient
    ``x_i / ||x_i||``, ``sum_i ||x_i||^4`` has ``4 ||x_i||^2 x_i``."""
    x = RNG.normal(size=(5, 3))
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    for f, want in (
        (_row_norm_sum, x / norms),
        (_squared_row_norms_energy, 4 * norms**2 * x),
    ):
        np.testing.assert_allclose(adgen.grad(f)(x), want, rtol=1e-12)
        v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
        np.testing.assert_allclose(adgen.jvp(f, (x,), (v,))[1], np.sum(want * v), rtol=1e-12)


def _rbf_sum(x, y):
    return np.sum(sk_pairwise.rbf_kernel(x, y, gamma=0.5))


@pytest.mark.skipif(sk_pairwise is None, reason="scikit-learn is not installed")
def test_sklearn_rbf_kernel_through_its_in_place_updates():
    """``rbf_kernel`` as installed: ``K = euclidean_distances(X, Y, squared=True)`` (a new
    array the helper made), ``K *= -gamma``, ``np.exp`` with ``out=K`` through
    ``_modify_in_place_if_numpy``; against ``sum_j K_ij * (-2 gamma) (x_i - y_j)``."""
    x, y = RNG.normal(size=(5, 3)), RNG.normal(size=(4, 3))
    if _refused_on_older_sklearn(_rbf_sum, x, y):
        return
    diff = x[:, None, :] - y[None, :, :]
    k = np.exp(-0.5 * np.sum(diff**2, axis=-1))
    want = np.sum(k[:, :, None] * (-1.0) * diff, axis=1)
    np.testing.assert_allclose(adgen.grad(_rbf_sum)(x, y), want, rtol=1e-9)
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    got = adgen.jvp(_rbf_sum, (x, y), (v, np.zeros_like(y)))[1]
    np.testing.assert_allclose(got, np.sum(want * v), rtol=1e-9)


def _polynomial_sum(x, y):
    return np.sum(sk_pairwise.polynomial_kernel(x, y, degree=3, gamma=0.5, coef0=1.0))


def _sigmoid_sum(x, y):
    return np.sum(sk_pairwise.sigmoid_kernel(x, y, gamma=0.5, coef0=0.25))


@pytest.mark.skipif(sk_pairwise is None, reason="scikit-learn is not installed")
@pytest.mark.parametrize("kernel", ["polynomial", "sigmoid"])
def test_sklearn_dot_product_kernels_update_the_product_in_place(kernel):
    """``polynomial_kernel`` and ``sigmoid_kernel`` as installed: ``K = safe_sparse_dot(X,
    Y.T)`` (a new array, whichever branch of the helper binds it), then ``K *= gamma; K +=
    coef0`` and ``K **= degree`` or ``np.tanh`` with ``out=K``; against their derivatives."""
    x, y = RNG.normal(size=(5, 3)), RNG.normal(size=(4, 3))
    f = _polynomial_sum if kernel == "polynomial" else _sigmoid_sum
    if _refused_on_older_sklearn(f, x, y):
        return
    if kernel == "polynomial":
        slope = 3 * (0.5 * x @ y.T + 1.0) ** 2 * 0.5
    else:
        slope = (1 - np.tanh(0.5 * x @ y.T + 0.25) ** 2) * 0.5
    want = slope @ y
    np.testing.assert_allclose(adgen.grad(f)(x, y), want, rtol=1e-9)
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    got = adgen.jvp(f, (x, y), (v, np.zeros_like(y)))[1]
    np.testing.assert_allclose(got, np.sum(want * v), rtol=1e-9)


# -- data bound by a closure or a global, as users write their objectives --------------------

Y_DATA = RNG.normal(size=(4, 3))


def _closure_kernels():
    """scikit-learn's pairwise functions with the second array bound by the closure (the
    way a loss is written around data): each with its derivative w.r.t. the first."""
    y = Y_DATA

    def diffs(x):
        return x[:, None, :] - y[None, :, :]

    def laplacian_grad(x):
        k = np.exp(-0.5 * np.sum(np.abs(diffs(x)), axis=-1))
        return np.sum(k[:, :, None] * (-0.5) * np.sign(diffs(x)), axis=1)

    return {
        "linear_kernel": (
            lambda x: np.sum(sk_pairwise.linear_kernel(x, y)),
            lambda x: np.broadcast_to(np.sum(y, axis=0), x.shape),
        ),
        "manhattan_distances": (
            lambda x: np.sum(sk_pairwise.manhattan_distances(x, y)),
            lambda x: np.sum(np.sign(diffs(x)), axis=1),
        ),
        "laplacian_kernel": (
            lambda x: np.sum(sk_pairwise.laplacian_kernel(x, y, gamma=0.5)),
            laplacian_grad,
        ),
        "euclidean_distances": (
            lambda x: np.sum(sk_pairwise.euclidean_distances(x, y)),
            lambda x: np.sum(diffs(x) / np.linalg.norm(diffs(x), axis=-1, keepdims=True), axis=1),
        ),
    }


@pytest.mark.skipif(sk_pairwise is None, reason="scikit-learn is not installed")
@pytest.mark.parametrize(
    "name", ["linear_kernel", "manhattan_distances", "laplacian_kernel", "euclidean_distances"]
)
def test_sklearn_pairwise_functions_of_data_a_closure_holds(name):
    """The other array is the closure's (its kind known when transforming: adgen reads
    ``check_pairwise_arrays``'s dtype tests of it, and ``cdist(..., "cityblock")``,
    ``np.exp(K, K)`` with the output passed positionally)."""
    f, gradient = _closure_kernels()[name]
    x = RNG.normal(size=(5, 3))
    if _refused_on_older_sklearn(f, x):
        return
    _check_both_modes(f, x, gradient(x))


def _regression_metrics():
    metrics = pytest.importorskip("sklearn.metrics")
    y = np.exp(RNG.normal(size=N))
    n = y.size
    return y, {
        "mean_squared_error": (
            lambda p: metrics.mean_squared_error(y, p),
            lambda p: 2 * (p - y) / n,
        ),
        "r2_score": (
            lambda p: metrics.r2_score(y, p),
            lambda p: -2 * (p - y) / np.sum((y - y.mean()) ** 2),
        ),
        "mean_squared_log_error": (
            lambda p: metrics.mean_squared_log_error(y, p),
            lambda p: 2 * (np.log1p(p) - np.log1p(y)) / (1 + p) / n,
        ),
        "mean_absolute_error": (
            lambda p: metrics.mean_absolute_error(y, p),
            lambda p: np.sign(p - y) / n,
        ),
    }


@pytest.mark.skipif(sklearn is None, reason="scikit-learn is not installed")
@pytest.mark.parametrize(
    "name", ["mean_squared_error", "r2_score", "mean_squared_log_error", "mean_absolute_error"]
)
def test_sklearn_regression_metrics_of_the_predictions(name):
    """Regression metrics as installed, the true values bound by a closure: validation of
    both arrays (``check_consistent_length``, ``check_array`` run as written on the data,
    read on the predictions), ``move_to``, ``_average`` with ``weights=None``."""
    y, cases = _regression_metrics()
    f, gradient = cases[name]
    p = np.exp(RNG.normal(size=N))
    if _refused_on_older_sklearn(f, p):
        return
    _check_both_modes(f, p, gradient(p))


def test_scipy_rosen_against_its_own_derivatives():
    """SciPy's Rosenbrock function as installed (``xp_promote`` over ``*args``: a list grown
    in a loop, ``xp_result_type`` decided from the kinds): against ``rosen_der`` in both
    modes and ``rosen_hess`` at second order."""
    optimize = pytest.importorskip("scipy.optimize")
    x = np.array([0.3, -0.8, 1.2, 0.5, -0.1])
    _check_both_modes(optimize.rosen, x, optimize.rosen_der(x))
    np.testing.assert_allclose(adgen.hessian(optimize.rosen)(x), optimize.rosen_hess(x), rtol=1e-12)


def test_statsmodels_truncated_poisson_calls_predict_again_for_another_statistic():
    """``TruncatedLFPoisson.loglikeobs`` asks ``self.predict(params, which="prob-base")``,
    whose path calls ``self.predict(params)`` for the mean (the same method, another option:
    not a recursion), then ``scipy.stats.poisson._pmf``; against the model's own score."""
    truncated = pytest.importorskip("statsmodels.discrete.truncated_model")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.maximum(Y_COUNT, 1.0)  # (truncated at zero: counts of at least one)
        model = truncated.TruncatedLFPoisson(y, X)
    _check_both_modes(model.loglike, PARAMS, model.score(PARAMS))


def test_sklearn_nmf_beta_divergence_against_differences():
    """scikit-learn's NMF objective as installed (``_beta_divergence``, the generalised
    Kullback-Leibler and Itakura-Saito divergences): the nonzero entries picked by a mask
    (a copy NumPy makes, then floored in place), against central differences in ``W``."""
    nmf = pytest.importorskip("sklearn.decomposition._nmf")
    x = np.abs(RNG.normal(size=(5, 4)))
    h = np.abs(RNG.normal(size=(2, 4))) + 0.1
    w = np.abs(RNG.normal(size=(5, 2))) + 0.1
    for beta in (1, 0, 1.5):

        def f(w, beta=beta):
            return nmf._beta_divergence(x, w, h, beta)

        want = _differences(lambda v: f(v.reshape(w.shape)), w.ravel()).reshape(w.shape)
        np.testing.assert_allclose(adgen.grad(f)(w), want, rtol=1e-6, atol=1e-6)
        v = np.linspace(-1.0, 1.0, w.size).reshape(w.shape)
        got = adgen.jvp(f, (w,), (v,))[1]
        np.testing.assert_allclose(got, np.sum(want * v), rtol=1e-6, atol=1e-6)


def _probability_losses():
    """scikit-learn's losses of binary labels and predicted probabilities, each with its
    gradient w.r.t. the probabilities."""
    return {
        "brier_score_loss": lambda labels, p: 2 * (p - labels) / N,
        "log_loss": lambda labels, p: -(labels / p - (1 - labels) / (1 - p)) / N,
    }


@pytest.mark.skipif(sklearn is None, reason="scikit-learn is not installed")
@pytest.mark.parametrize("name", ["brier_score_loss", "log_loss"])
def test_sklearn_probability_losses_of_the_probabilities(name):
    """The loss as installed, the labels bound by a closure. ``brier_score_loss``:
    ``column_or_1d`` returns on a shape test and raises otherwise, and its result's kind
    decides the dataframe tests ``check_consistent_length`` makes of it. ``log_loss``: the
    one-hot labels come from a helper that builds a ``LabelBinarizer`` (run as written: it
    is given the labels and the namespace module only), the probabilities become two
    columns on shape tests decided for the call's shapes, ``xpx.isclose`` picks NumPy's on
    the namespace its getter gives, and ``np.finfo(dtype).eps`` bounds array-api-compat's
    ``clip``. The gradient in both modes."""
    from sklearn import metrics

    loss, gradient = getattr(metrics, name), _probability_losses()[name]
    labels = (RNG.random(N) < 0.5).astype(int)
    labels[:2] = (0, 1)  # (both classes present)
    p = RNG.uniform(0.1, 0.9, N)

    def f(q):
        return loss(labels, q)

    if _refused_on_older_sklearn(f, p):
        return
    _check_both_modes(f, p, gradient(labels, p))


def test_scipy_entropy_through_its_rule_against_the_closed_form():
    """``scipy.stats.entropy`` as installed (its ``_axis_nan_policy`` decorator reads the
    wrapped function's signature: adgen calls it through its rule): the entropy's gradient
    ``(-log P - H) / sum(p)`` and the relative entropy's in both arguments, both modes."""
    stats = pytest.importorskip("scipy.stats")
    p = np.array([0.5, 1.5, 2.0, 1.0])
    q = np.array([1.0, 0.5, 1.5, 2.0])
    s, t = p.sum(), q.sum()
    big_p, big_q = p / s, q / t
    h = -np.sum(big_p * np.log(big_p))
    _check_both_modes(lambda v: stats.entropy(v), p, (-np.log(big_p) - h) / s)
    d = np.sum(big_p * np.log(big_p / big_q))
    _check_both_modes(lambda v: stats.entropy(v, q), p, (np.log(big_p / big_q) - d) / s)
    _check_both_modes(
        lambda v: stats.entropy(p, v, base=2.0), q, (1 - big_p / big_q) / t / np.log(2)
    )


def _cosine_gradient(x, y):
    """The gradient of the sum of cosine similarities of x's rows with y's."""
    ybar = np.sum(y / np.linalg.norm(y, axis=1, keepdims=True), axis=0)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return ybar / n - x * (x @ ybar)[:, None] / n**3


@pytest.mark.skipif(sk_pairwise is None, reason="scikit-learn is not installed")
@pytest.mark.parametrize("name", ["cosine_similarity", "cosine_distances"])
def test_sklearn_cosine_similarity_and_distances_through_normalize(name):
    """``cosine_similarity`` as installed: ``normalize`` takes the row norms
    (``np.einsum`` then the namespace's ``asarray``, whose kind adgen computes when
    transforming) and ``_handle_zeros_in_scale`` writes into them in place, at its top
    level once ``np.isscalar`` is decided; ``cosine_distances`` then updates the matrix in
    place and clips it with array-api-compat's ``clip``."""
    y = Y_DATA
    fn = getattr(sk_pairwise, name)

    def f(x):
        return np.sum(fn(x, y))

    x = RNG.normal(size=(5, 3))
    if _refused_on_older_sklearn(f, x):
        return
    sign = 1.0 if name == "cosine_similarity" else -1.0
    _check_both_modes(f, x, sign * _cosine_gradient(x, y))


@pytest.mark.skipif(sklearn is None, reason="scikit-learn is not installed")
def test_sklearn_hinge_loss_of_the_decisions():
    """``hinge_loss`` as installed: the number of classes is known only when the code runs,
    so both branches are read; the binary one encodes the labels with a ``LabelBinarizer``
    made inside (its ``fit`` hands ``self`` to validation adgen does not read: the object is
    made and used as written, on the labels only), and clips the losses in place with
    ``np.clip(..., out=losses)``."""
    from sklearn import metrics

    signs = np.where(RNG.random(N) < 0.5, 1, -1)
    signs[:2] = (1, -1)  # (both classes present)
    z = 0.8 * RNG.normal(size=N)

    def f(d):
        return metrics.hinge_loss(signs, d)

    if _refused_on_older_sklearn(f, z):
        return
    _check_both_modes(f, z, -signs * (1 - signs * z > 0) / N)
