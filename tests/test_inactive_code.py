"""Code no derivative passes through runs as written (issue 34, first part).

* ``raise`` (also in an inlined helper, with an f-string, ``%`` or ``.format`` message, ``from``):
  copied into the generated code; a path that raises needs no ``return``.
* String formatting of any value (a differentiated one too) is a constant of the derivative,
  refused only where a derivative would have to pass through it.
* ``hasattr(obj, "name")`` and ``callable(obj)`` of an object adgen knows when transforming are
  decided then: only the branch Python takes is lowered (the other may read an attribute the
  object lacks).
* A bound method, a ``functools.partial`` or a callable object is differentiated as it is
  (``adgen.grad(model.loglike)``), in every entry point.

Each derivative is checked against its exact value in both modes and at second order.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import adgen
from adgen.errors import UnsupportedSyntaxError

X0 = np.array([0.5, -0.3, 1.2])


# -- raise -------------------------------------------------------------------------------------
def predict(x, which="mean"):
    lin = x * 2.0
    if which == "mean":
        return np.tanh(lin)
    elif which == "linear":
        return lin
    else:
        raise ValueError(f"`which` must be 'mean' or 'linear', not {which!r}")


def validated(x, n):
    if n < 0:
        raise ValueError("n must be >= 0, got %d" % n)  # noqa: UP031 (as libraries write it)
    if np.any(x < -10.0):
        raise ValueError("x too small: {}".format(np.min(x)))  # noqa: UP032
    s = 0.0
    for i in range(n):
        s = s + np.sum(x**2)
    return s


def _check_k(a, k):
    if k > 3:
        raise ValueError(f"bad k={k} for an array of shape {a.shape}")
    return np.sum(a * k)


def calls_a_validating_helper(a, k):
    return _check_k(a, k) + _check_k(a * a, k + 1)


def raises_from(x):
    try_value = np.sum(x)
    if try_value > 100.0:
        raise RuntimeError("diverged") from ValueError(f"sum {try_value}")
    return np.sum(np.sin(x))


def returns_or_raises(x, c):
    if c > 0:
        return np.sum(x * x)
    raise ValueError("c must be positive")


def test_a_branch_not_taken_may_raise():
    s = float(np.sum(X0))
    want = 2.0 * (1.0 - np.tanh(2.0 * s) ** 2)
    assert adgen.grad(predict)(s) == pytest.approx(want, rel=1e-12)
    assert adgen.jvp(predict, (s,), (1.0,))[1] == pytest.approx(want, rel=1e-12)
    t = np.tanh(2.0 * s)
    assert adgen.grad(adgen.grad(predict))(s) == pytest.approx(-8.0 * t * (1 - t * t), rel=1e-10)
    assert adgen.grad(predict)(s, "linear") == 2.0


def test_raise_is_copied_and_raises_when_the_code_runs():
    np.testing.assert_allclose(adgen.grad(validated)(X0, 3), 6.0 * X0, rtol=1e-12)
    assert adgen.jvp(validated, (X0, 3), (np.ones(3), None))[1] == pytest.approx(6 * X0.sum())
    np.testing.assert_allclose(adgen.hessian(validated)(X0, 3), 6.0 * np.eye(3), rtol=1e-12)
    with pytest.raises(ValueError, match="n must be >= 0, got -1"):
        adgen.grad(validated)(X0, -1)
    with pytest.raises(ValueError, match="x too small: -20.0"):
        adgen.jvp(validated, (X0 * 0 - 20.0, 1), (np.ones(3), None))
    source = adgen.source(validated)
    assert "raise ValueError('n must be >= 0, got %d' % n)" in source
    assert "raise ValueError('x too small: {}'.format(np.min(x)))" in source


def test_raise_in_an_inlined_helper_reads_the_helpers_values():
    want = 2.0 + 3.0 * 2.0 * X0
    np.testing.assert_allclose(adgen.grad(calls_a_validating_helper)(X0, 2), want, rtol=1e-12)
    hess = adgen.hessian(calls_a_validating_helper)(X0, 2)
    np.testing.assert_allclose(hess, 6.0 * np.eye(3), rtol=1e-12)
    source = adgen.source(calls_a_validating_helper)
    assert "raise ValueError(f'bad k={k} for an array of shape {a.shape}')" in source
    assert source.count("raise ValueError(f'bad k=") == 2  # each call with its own names
    with pytest.raises(ValueError, match=r"bad k=4 for an array of shape \(3,\)"):
        adgen.jvp(calls_a_validating_helper, (X0, 3), (np.ones(3), None))


def test_raise_from_and_a_function_ending_in_raise():
    np.testing.assert_allclose(adgen.grad(raises_from)(X0), np.cos(X0), rtol=1e-12)
    with pytest.raises(RuntimeError, match="diverged") as info:
        adgen.grad(raises_from)(X0 + 100.0)
    assert isinstance(info.value.__cause__, ValueError)
    np.testing.assert_allclose(adgen.grad(returns_or_raises)(X0, 1.0), 2 * X0, rtol=1e-12)
    value, tangent = adgen.jvp(returns_or_raises, (X0, 1.0), (np.ones(3), None))
    assert tangent == pytest.approx(2 * X0.sum())
    with pytest.raises(ValueError, match="c must be positive"):
        adgen.grad(returns_or_raises)(X0, -1.0)


def bare_raise(x):
    if np.sum(x) > 0:
        raise
    return np.sum(x)


def test_a_bare_raise_is_refused_by_name():
    with pytest.raises(UnsupportedSyntaxError, match="a bare `raise`"):
        adgen.grad(bare_raise)(X0)


# -- string formatting ---------------------------------------------------------------------------
def reports(x):
    loss = np.sum(x**3)
    print(f"loss={loss:.4f} over {len(x)} values, first {x[0]}")
    print("loss %.2f" % loss)  # noqa: UP031
    message = "loss {:.1f} and {}".format(loss, [round(v, 1) for v in x])  # noqa: UP032
    warnings.warn(message, stacklevel=1)
    return loss


def formats_then_differentiates(x):
    text = f"{np.sum(x)}"
    return np.sum(x) * float(text)


def test_formatting_a_differentiated_value_is_a_constant_of_the_derivative(capsys):
    with warnings.catch_warnings(record=True) as plain:
        warnings.simplefilter("always")
        reports(X0)
    assert len(plain) == 1 and str(plain[0].message).startswith("loss 1.8 and [")
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"loss={np.sum(X0**3):.4f} over 3 values, first 0.5", "loss 1.83"]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        np.testing.assert_allclose(adgen.grad(reports)(X0), 3 * X0**2, rtol=1e-12)
    assert [str(w.message) for w in seen] == [str(plain[0].message)]
    assert capsys.readouterr().out.splitlines() == printed
    with pytest.warns(UserWarning):
        hvp = adgen.hvp(reports)(X0, np.ones(3))
    np.testing.assert_allclose(hvp, 6 * X0, rtol=1e-12)
    with pytest.warns(UserWarning):
        tangent = adgen.jvp(reports, (X0,), (np.ones(3),))[1]
    assert tangent == pytest.approx(np.sum(3 * X0**2))


def test_a_string_a_derivative_would_pass_through_is_refused():
    with pytest.raises(UnsupportedSyntaxError, match="f-string of a differentiated value"):
        adgen.grad(formats_then_differentiates)(X0)


# -- hasattr / callable ----------------------------------------------------------------------------
class Link:
    def __call__(self, z):
        return np.exp(z)


class WithOffset:
    offset = 0.5


class WithoutOffset:
    pass


def linear_predictor(model, link, w):
    eta = w * 2.0
    if hasattr(model, "offset"):
        eta = eta + model.offset  # an attribute WithoutOffset does not have
    if callable(link):
        return np.sum(link(eta))
    return np.sum(eta)


@pytest.mark.parametrize("model", [WithOffset(), WithoutOffset()], ids=lambda m: type(m).__name__)
def test_hasattr_and_callable_of_known_objects_are_decided_when_transforming(model):
    offset = getattr(model, "offset", 0.0)

    def f(w):
        return linear_predictor(model, Link(), w)

    want = 2.0 * np.exp(2.0 * X0 + offset)
    np.testing.assert_allclose(adgen.grad(f)(X0), want, rtol=1e-12)
    np.testing.assert_allclose(adgen.jvp(f, (X0,), (np.ones(3),))[1], want.sum(), rtol=1e-12)
    np.testing.assert_allclose(adgen.hessian(f)(X0), np.diag(2.0 * want), rtol=1e-12)
    assert "hasattr" not in adgen.source(f) and "callable" not in adgen.source(f)


# -- callables that are not plain functions --------------------------------------------------
class Model:
    def __init__(self, X, y):
        self.X, self.y = X, y

    def loss(self, w, l2=0.1):
        r = self.X @ w - self.y
        return np.sum(r * r) + l2 * np.sum(w * w)

    def __call__(self, w):
        return self.loss(w)


RNG = np.random.default_rng(1)
XM, YM = RNG.normal(size=(8, 3)), RNG.normal(size=8)
MODEL = Model(XM, YM)


@pytest.mark.parametrize(
    "f",
    [MODEL.loss, MODEL, functools.partial(Model.loss, MODEL)],
    ids=["bound method", "callable object", "partial"],
)
def test_any_callable_is_differentiated_in_every_entry_point(f):
    w = np.array([0.3, -0.7, 1.1])
    grad = 2 * XM.T @ (XM @ w - YM) + 0.2 * w
    hess = 2 * XM.T @ XM + 0.2 * np.eye(3)
    v = np.array([1.0, 2.0, -0.5])
    np.testing.assert_allclose(adgen.grad(f)(w), grad, rtol=1e-12)
    np.testing.assert_allclose(adgen.value_and_grad(f)(w)[1], grad, rtol=1e-12)
    np.testing.assert_allclose(adgen.jvp(f, (w,), (v,))[1], grad @ v, rtol=1e-12)
    np.testing.assert_allclose(adgen.vjp(f, w)[1](1.0)[0], grad, rtol=1e-12)
    np.testing.assert_allclose(adgen.hessian(f)(w), hess, rtol=1e-12)
    np.testing.assert_allclose(adgen.hvp(f)(w, v), hess @ v, rtol=1e-12)
    np.testing.assert_allclose(adgen.jacrev(f)(w), grad, rtol=1e-12)
    np.testing.assert_allclose(adgen.differentiate(f).grad(w), grad, rtol=1e-12)
    assert "def " in adgen.source(f)


def test_a_bound_methods_own_parameters_by_name():
    w = np.array([0.3, -0.7, 1.1])
    assert adgen.grad(MODEL.loss, wrt="l2")(w, 0.1) == pytest.approx(np.sum(w * w))
    assert adgen.grad(MODEL.loss, wrt=1)(w, 0.5) == pytest.approx(np.sum(w * w))


# -- objects returned by properties ---------------------------------------------------------------
class LogLink:
    def inverse(self, z):
        return np.exp(z)


class Family:
    def __init__(self):
        self._link = LogLink()

    @property
    def link(self):
        return self._link


class GLM:
    def __init__(self, X, y):
        self.X, self.y, self.family = X, y, Family()

    def loglike(self, params):
        mu = self.family.link.inverse(self.X @ params)
        return np.sum(self.y * np.log(mu) - mu)


def test_a_method_of_an_object_a_property_returns():
    """``self.family.link.inverse(z)`` (statsmodels' GLM): the property's object is read
    when transforming, like any attribute of an object made outside, and its method inlined."""
    model = GLM(XM, np.abs(YM))
    w = np.array([0.1, -0.2, 0.05])
    mu = np.exp(XM @ w)
    grad = XM.T @ (np.abs(YM) - mu)
    np.testing.assert_allclose(adgen.grad(model.loglike)(w), grad, rtol=1e-12)
    np.testing.assert_allclose(adgen.jvp(model.loglike, (w,), (w,))[1], grad @ w, rtol=1e-12)
    np.testing.assert_allclose(adgen.hessian(model.loglike)(w), -XM.T @ (mu[:, None] * XM))


# -- a branch the program decides when it runs may hold anything -----------------------------------
def with_options(x, mode):
    if mode == "fast":
        return np.sum(x * x)
    else:
        with np.errstate(all="raise"):  # a `with` adgen does not read: it raises on warnings
            warnings.warn("slow path", stacklevel=2)
        return np.sum(x)


def test_a_refusal_in_a_branch_is_raised_only_where_the_branch_runs():
    np.testing.assert_allclose(adgen.grad(with_options)(X0, "fast"), 2 * X0, rtol=1e-12)
    value, tangent = adgen.jvp(with_options, (X0, "fast"), (np.ones(3), None))
    assert tangent == pytest.approx(2 * X0.sum())
    np.testing.assert_allclose(adgen.hessian(with_options)(X0, "fast"), 2 * np.eye(3))
    for take in (
        lambda: adgen.grad(with_options)(X0, "slow"),
        lambda: adgen.jvp(with_options, (X0, "slow"), (np.ones(3), None)),
    ):
        with pytest.raises(UnsupportedSyntaxError, match="`with` blocks") as info:
            take()
        assert info.value.loc is not None and info.value.loc.filename == __file__
    assert "rt.refuse_unless(False" in adgen.source(with_options)


def _smoothed(x):
    """A function adgen cannot read (it writes into the caller's `output`): run as written."""
    import scipy.ndimage

    return scipy.ndimage.gaussian_filter(x, 1.0)


def rare_smoothing(x):
    if np.sum(x) > 100.0:  # decided when the code runs; rarely taken
        y = _smoothed(x)  # a differentiated value reaches a call run as written
    else:
        y = x * 2.0
    return np.sum(y**2)


def test_a_call_run_as_written_a_derivative_reaches_refuses_only_its_branch():
    # once the whole function was refused; now the branch that needs the derivative is
    # the refusal, raised only where the code takes it (both modes, and at second order)
    pytest.importorskip("scipy.ndimage")
    np.testing.assert_allclose(adgen.grad(rare_smoothing)(X0), 8 * X0, rtol=1e-12)
    _, tangent = adgen.jvp(rare_smoothing, (X0,), (np.ones(3),))
    assert tangent == pytest.approx(8 * X0.sum())
    np.testing.assert_allclose(adgen.hessian(rare_smoothing)(X0), 8 * np.eye(3))
    for take in (
        lambda: adgen.grad(rare_smoothing)(X0 + 100.0),
        lambda: adgen.jvp(rare_smoothing, (X0 + 100.0,), (np.ones(3),)),
    ):
        # (the call, or the statement of SciPy's gaussian_filter adgen reads it stopping at)
        with pytest.raises(UnsupportedSyntaxError, match=r"gaussian_filter|ndimage.+_filters"):
            take()
    assert "rt.refuse_unless(False" in adgen.source(rare_smoothing)


# -- a library's type test of a computed value -----------------------------------------------
def densify_if_sparse(x):
    import scipy.sparse

    h = np.tanh(x) * 2.0
    if scipy.sparse.issparse(h):  # never, for an array a NumPy function made
        g = h.toarray().ravel(order="F")  # (a method adgen has no rule for)
    else:
        g = h
    return np.sum(g * g)


def test_a_sparse_matrix_test_of_a_computed_array_is_decided_when_transforming():
    pytest.importorskip("scipy.sparse")
    t = np.tanh(X0)
    want = 8.0 * t * (1.0 - t * t)
    np.testing.assert_allclose(adgen.grad(densify_if_sparse)(X0), want, rtol=1e-12)
    np.testing.assert_allclose(
        adgen.jvp(densify_if_sparse, (X0,), (np.ones(3),))[1], want.sum(), rtol=1e-12
    )
    code = [line for line in adgen.source(densify_if_sparse).splitlines() if "#" not in line]
    assert not any("issparse" in line or "toarray" in line for line in code)


# -- expression statements that are not calls --------------------------------------------------
def fit_step(w, X, y, verbose):
    """A training step in the styles scripts write their logging: short-circuit calls and a
    conditional expression as statements, a bare name left from a notebook."""
    r = X @ w - y
    loss = 0.5 * np.sum(r * r)
    verbose and print(f"loss {loss:.3f}")
    warnings.warn("large residual", stacklevel=2) if np.max(np.abs(r)) > 1e6 else None
    loss  # noqa: B018 (a notebook's display line, kept)
    return loss + 0.1 * np.sum(w**2)


@pytest.mark.parametrize("verbose", [True, False])
def test_an_expression_statement_is_evaluated_as_python_does(verbose, capsys):
    X = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [1.5, 0.2, -0.7], [0.1, 0.4, 0.9]])
    y = np.array([0.5, -0.2, 1.0, 0.3])
    gradient = adgen.grad(fit_step)(X0, X, y, verbose)
    printed = capsys.readouterr().out  # (the call runs where Python runs it)
    assert printed == (f"loss {fit_step(X0, X, y, False) - 0.1 * X0 @ X0:.3f}\n" if verbose else "")
    exact = X.T @ (X @ X0 - y) + 0.2 * X0
    np.testing.assert_allclose(gradient, exact, rtol=1e-12)
    _, t = adgen.jvp(lambda w: fit_step(w, X, y, verbose), (X0,), (np.ones(3),))
    np.testing.assert_allclose(t, exact.sum(), rtol=1e-12)
    h = adgen.hessian(lambda w: fit_step(w, X, y, verbose))(X0)
    np.testing.assert_allclose(h, X.T @ X + 0.2 * np.eye(3), rtol=1e-12)
