"""``try`` and ``with`` blocks that only guard the code they hold (issue 34, parts 1 and 3).

Library code translates exceptions (``try: ... except ValueError as e: raise TypeError(...)
from e``) and silences warnings (``with np.errstate(divide="ignore")``,
``warnings.catch_warnings()``) around the computations adgen differentiates. Such a block
changes no value when the function returns, so adgen reads the statements it holds in its
place. Checked: exact derivatives in both modes and at second order, the program's own
exception when the body raises, the caller's warning filters left as they were, and a
refusal by name for the blocks that do decide something (an ``except`` that goes on,
``np.errstate(all="raise")``, ``with open(...) as f``).
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import adgen
from adgen.errors import UnsupportedSyntaxError


def as_count(n):
    try:
        k = int(n)
    except (TypeError, ValueError) as e:
        raise TypeError(f"n must be a whole number, not {n!r}") from e
    return k


def translated_errors(x, n=2):
    k = as_count(n)
    try:
        y = np.sum(x**k)
    except FloatingPointError as e:
        raise ValueError("overflow") from e
    else:
        y = y * 3.0
    finally:
        k = 0
    return y + k


def log_where_positive(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(x > 0, np.log(np.abs(x)), 0.0)
    return np.sum(logs * x)


def quiet_warnings(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        y = np.sqrt(x) * x
    return np.sum(y)


def guarded_return(x):
    try:
        with np.errstate(over="ignore"), warnings.catch_warnings():
            return np.sum(np.exp(x) * x)
    except OverflowError:
        raise


X = np.array([0.5, 1.5, 2.0])


@pytest.mark.parametrize(
    "f, grad, hess_diag",
    [
        (translated_errors, lambda x: 6.0 * x, lambda x: 6.0 + 0 * x),
        (log_where_positive, lambda x: np.log(x) + 1.0, lambda x: 1.0 / x),
        (quiet_warnings, lambda x: 1.5 * np.sqrt(x), lambda x: 0.75 / np.sqrt(x)),
        (guarded_return, lambda x: np.exp(x) * (1 + x), lambda x: np.exp(x) * (2 + x)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_a_guarding_block_is_read_as_the_statements_it_holds(f, grad, hess_diag):
    assert np.allclose(adgen.grad(f)(X), grad(X), rtol=1e-13)
    _, t = adgen.jvp(f, (X,), (np.ones(3),))
    assert np.isclose(t, np.sum(grad(X)), rtol=1e-13)
    assert np.allclose(adgen.hessian(f)(X), np.diag(hess_diag(X)), rtol=1e-12, atol=1e-12)


def test_the_callers_warning_filters_are_left_as_they_were():
    before = list(warnings.filters)
    adgen.grad(quiet_warnings)(X)
    adgen.jvp(quiet_warnings, (X,), (X,))
    assert warnings.filters == before


def test_the_program_s_own_exception_shows_when_the_body_raises():
    with pytest.raises(TypeError, match="n must be a whole number, not 'two'"):
        adgen.grad(translated_errors)(X, "two")


def test_the_generated_code_holds_the_statements_not_the_block():
    src = adgen.source(log_where_positive, mode="reverse")
    assert "errstate" not in src and "np.log" in src


def recovers(x):
    try:
        k = int("3")
    except ValueError as e:  # goes on, reading the exception
        k = len(str(e))
    return np.sum(x**k)


def test_a_try_going_on_that_reads_the_exception_differentiates_the_path_taken():
    # (no exception here: k is 3 on the body's path)
    np.testing.assert_allclose(adgen.grad(recovers)(X), 3 * X**2)


def raises_on_warnings(x):
    with np.errstate(all="raise"):
        y = np.log(x)
    return np.sum(y)


def reads_a_file(x, path="data.txt"):
    with open(path) as f:
        n = len(f.read())
    return np.sum(x * n)


@pytest.mark.parametrize(
    "f, words",
    [
        (raises_on_warnings, "`with` blocks.*np.errstate without 'raise'"),
        (reads_a_file, "`with` blocks"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_a_block_that_decides_something_is_refused_by_name(f, words):
    with pytest.raises(UnsupportedSyntaxError, match=words):
        adgen.grad(f)(X)


def _context_chosen_then_entered(x, quiet=True):
    from contextlib import nullcontext

    context = np.errstate(under="ignore") if quiet else nullcontext()
    with context:
        y = np.exp(-(x**2)) * np.sin(x)
    return np.sum(y)


def test_a_context_bound_to_a_name_then_entered_is_opened():
    """scikit-learn's mixtures: ``cm = np.errstate(under="ignore") if numpy else
    nullcontext()``, then ``with cm:`` -- a context that changes no value either way."""
    x = np.array([0.3, -1.2, 2.0])
    h = 1e-6
    want = [
        (_context_chosen_then_entered(x + h * e) - _context_chosen_then_entered(x - h * e))
        / (2 * h)
        for e in np.eye(3)
    ]
    np.testing.assert_allclose(adgen.grad(_context_chosen_then_entered)(x), want, rtol=1e-7)
    v = np.array([1.0, 0.5, -2.0])
    got = adgen.jvp(_context_chosen_then_entered, (x,), (v,))[1]
    np.testing.assert_allclose(got, np.dot(want, v), rtol=1e-7)


def test_gaussian_mixture_probabilities_as_installed():
    mixture = pytest.importorskip("sklearn.mixture")
    rng = np.random.default_rng(2)
    data = np.concatenate([rng.normal(size=(40, 2)) - 2.0, rng.normal(size=(40, 2)) + 2.0])
    gm = mixture.GaussianMixture(2, random_state=0).fit(data)
    x = np.array([[0.3, -0.2], [1.0, 0.5]])
    weights = np.array([[1.0, -1.0], [0.5, 2.0]])

    def f(z):
        return np.sum(gm.predict_proba(z) * weights)

    h = 1e-6
    want = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        want[i] = (f(x + e) - f(x - e)) / (2 * h)
    np.testing.assert_allclose(adgen.grad(f)(x), want, rtol=1e-6, atol=1e-9)


# -- `with contextlib.suppress(...)`: a `try` whose handler passes --------------------------------


def reciprocal_or_nothing(x, k):
    s = 0.0
    with contextlib.suppress(ZeroDivisionError):
        s = x * (1.0 / k)
    return s + x**2


def pandas_or_numpy_mask(x, value=np.nan):
    with contextlib.suppress(ImportError, AttributeError):
        import adgen_no_such_dataframe_library as pd

        if value is pd.NA:
            return np.sum(x)
    return np.sum(x * ~np.isnan(x))


def mask_energy(x):
    return pandas_or_numpy_mask(x * x)


def suppressed_write(x, k):
    s = np.zeros(2)
    with contextlib.suppress(ZeroDivisionError):
        s[0] = 1.0 / k
    return np.sum(s * x)


def test_suppress_is_a_try_whose_handler_passes():
    for k, want in ((2.0, 0.5 + 2 * 0.3), (0.0, 2 * 0.3)):
        assert adgen.grad(reciprocal_or_nothing)(0.3, k) == pytest.approx(want, rel=1e-12)
        assert adgen.jvp(reciprocal_or_nothing, (0.3, k), (1.0, 0.0))[1] == pytest.approx(want)
    # the import fails when the code runs: the handler's path (no derivative through pandas)
    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(adgen.grad(mask_energy)(x), 2 * x, rtol=1e-12)
    np.testing.assert_allclose(adgen.hessian(mask_energy)(x), 2 * np.eye(3), rtol=1e-12)


def test_suppress_around_a_write_is_refused_by_name():
    with pytest.raises(UnsupportedSyntaxError, match="`with` blocks"):
        adgen.grad(suppressed_write)(np.ones(2), 2.0)
