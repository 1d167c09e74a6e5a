"""SciPy's descriptive statistics as installed (issue 34, issue 35 item 5): ``skew``,
``kurtosis``, ``sem``, ``kstat``, ``kstatvar``, ``circmean``... are functions behind SciPy's
``_axis_nan_policy`` decorator, which adgen reads as the decorator's plain path
(:mod:`adgen.rules.axis_policy`). Programs in the style of a statistics user: moment
matching, per-row statistics, statistics of a transformed sample. Checked against central
differences in both modes and at second order, against SciPy's own values, and the paths
the decorator takes otherwise (NaN, ``nan_policy='omit'``) refused."""

from __future__ import annotations

import numpy as np
import pytest
import scipy
import scipy.stats as ss
from derivative_checks import differences

import adgen
from adgen.errors import AdgenError

RNG = np.random.default_rng(34)
# SciPy before 1.16 writes these statistics' helpers differently (see the marks below)
OLD_SCIPY = tuple(int(p) for p in scipy.__version__.split(".")[:2]) < (1, 16)
NEW_SCIPY = tuple(int(p) for p in scipy.__version__.split(".")[:2]) >= (1, 18)
DATA = RNG.gamma(2.0, 1.5, size=40)
TABLE = RNG.normal(size=(5, 12))


def yeo_johnson_shape(lam):
    """A power transform's skewness and excess kurtosis driven to zero (moment matching)."""
    y = ((DATA + 1.0) ** lam - 1.0) / lam
    return ss.skew(y) ** 2 + 0.5 * ss.kurtosis(y, fisher=True) ** 2


def per_row_statistics(w):
    """Statistics of each row of a weighted table, along axis 1, SciPy's options given."""
    z = TABLE * w
    return np.sum(ss.skew(z, axis=1, bias=False)) + np.sum(ss.sem(z, axis=1, ddof=2) ** 2)


def kept_dimensions(w):
    z = TABLE * w
    k = ss.kurtosis(z, axis=0, keepdims=True)
    return np.sum(k * (z - z.mean(axis=0, keepdims=True)) ** 2)


def pooled(w):
    return ss.sem(TABLE * w, axis=None) + ss.skew(TABLE * w, None)


def cumulants(w):
    x = TABLE[0] * w
    return ss.kstat(x, 3) + ss.kstatvar(x) + ss.circmean(x)


def standardized_cubes(w):
    """The third moment of each row's z-scores (``zscore``: SciPy's array-API helpers)."""
    z = ss.zscore(TABLE * w, axis=1, ddof=1)
    return np.sum(z**3 * w)


def geometric_means(w):
    """Geometric means per column and a weighted one (``gmean``)."""
    columns = ss.gmean(np.exp(TABLE * w), axis=0)
    return np.sum(np.log(columns)) + ss.gmean(DATA[:12] * w, weights=np.arange(1.0, 13.0))


def relative_spreads(w):
    """Coefficients of variation: of a sample, and of each row with a degree of freedom."""
    rows = ss.variation(TABLE + 4.0 * w, axis=1, ddof=1)
    return ss.variation(DATA[:12] * w) + np.sum(rows**2)


def robust_spread(w):
    """The median absolute deviation per column, scaled like a standard deviation."""
    return np.sum(ss.median_abs_deviation(TABLE * w, axis=0, scale="normal") ** 2)


def interquartile_ranges(w):
    """Interdecile ranges per row, scaled like a standard deviation, and the sample's IQR
    (SciPy's ``quantile`` read on its path: linear interpolation between order statistics)."""
    z = TABLE * w
    return np.sum(ss.iqr(z, axis=1, rng=(10, 90), scale="normal") ** 2) + ss.iqr(z)


PROGRAMS = [
    (yeo_johnson_shape, lambda: np.array(0.7)),
    (per_row_statistics, lambda: 1.0 + 0.1 * RNG.normal(size=12)),
    (kept_dimensions, lambda: 1.0 + 0.1 * RNG.normal(size=12)),
    (pooled, lambda: 1.0 + 0.1 * RNG.normal(size=12)),
    (cumulants, lambda: 1.0 + 0.1 * RNG.normal(size=12)),
    (standardized_cubes, lambda: 1.0 + 0.1 * RNG.normal(size=12)),
    (geometric_means, lambda: 1.0 + 0.1 * RNG.normal(size=12)),
    (robust_spread, lambda: 1.0 + 0.1 * RNG.normal(size=12)),
    (relative_spreads, lambda: 1.0 + 0.1 * RNG.normal(size=12)),
    (interquartile_ranges, lambda: 1.0 + 0.1 * RNG.normal(size=12)),
]


def _params(programs, second_order=False):
    old_zscore = pytest.mark.skipif(
        OLD_SCIPY,
        reason="SciPy 1.15's _xp_var scales its variance in place (`var *= factor`), an array "
        "adgen cannot tell apart from the mean's there",
    )
    # (the gradient's code calls SciPy's `_broadcast_shapes` as written; read again for the
    # Hessian, its loop writing into rows of an array it iterates over is refused)
    shapes_loop = pytest.mark.xfail(
        strict=True, raises=AdgenError, reason="in-place write into `row` (_broadcast_shapes)"
    )
    old_iqr = pytest.mark.skipif(
        OLD_SCIPY or NEW_SCIPY,
        reason="SciPy 1.15's iqr passes its `rng` tuple to `sorted`, run as written: refused "
        "by name (adgen made that tuple); SciPy 1.18's quantile writes NaN into its result in "
        "a helper it passes the result to (`_post_quantile`), refused as a write into an "
        "argument",
    )
    marks = {standardized_cubes: [old_zscore], interquartile_ranges: [old_iqr]}
    if second_order:
        marks[interquartile_ranges].append(shapes_loop)
    return [
        pytest.param(fn, make, id=fn.__name__, marks=marks.get(fn, [])) for fn, make in programs
    ]


@pytest.mark.parametrize("fn, make", _params(PROGRAMS))
def test_the_gradient_of_a_program_with_scipy_statistics(fn, make):
    w = make()
    value, grad = adgen.value_and_grad(fn)(w)
    assert value == pytest.approx(fn(w), rel=1e-12)
    np.testing.assert_allclose(grad, differences(fn, w), rtol=1e-6, atol=1e-8)


SECOND_ORDER = _params(PROGRAMS[1:], second_order=True)


@pytest.mark.parametrize("fn, make", SECOND_ORDER)
def test_forward_mode_and_the_hessian_agree_with_the_gradient(fn, make):
    w = make()
    v = RNG.normal(size=np.shape(w))
    _, tangent = adgen.jvp(fn, (w,), (v,))
    assert tangent == pytest.approx(float(np.dot(adgen.grad(fn)(w), v)), rel=1e-10)
    hessian = adgen.hessian(fn)(w)
    grad = adgen.grad(fn)
    step = 1e-5
    columns = [(grad(w + step * e) - grad(w - step * e)) / (2 * step) for e in np.eye(w.size)]
    np.testing.assert_allclose(hessian, np.stack(columns, axis=1), rtol=1e-5, atol=1e-6)


def test_the_statistic_keeps_scipys_value_and_shape():
    w = 1.0 + 0.1 * RNG.normal(size=12)

    def stats(w):
        z = TABLE * w
        return ss.kurtosis(z, axis=0, keepdims=True), ss.skew(z, axis=-1)

    got, _ = adgen.vjp(stats, w)
    want = stats(w)
    for g, s in zip(got, want):
        assert np.shape(g) == np.shape(s)
        np.testing.assert_allclose(g, s, rtol=1e-13)


def test_a_sample_holding_nan_is_refused_where_scipy_returns_nan():
    x = DATA.copy()
    x[3] = np.nan
    with pytest.raises(AdgenError, match="NaN"):
        adgen.grad(lambda s: ss.skew(x * s))(1.0)


def test_nan_policy_omit_is_refused_by_name_where_a_derivative_passes():
    with pytest.raises(AdgenError, match="nan_policy other than 'propagate'"):
        adgen.grad(lambda s: ss.skew(DATA * s, nan_policy="omit"))(1.0)


def test_a_statistic_of_data_alone_runs_as_written_with_any_option():
    x = DATA.copy()
    x[0] = np.nan

    def f(s):
        centre = ss.skew(x, nan_policy="omit")  # no derivative passes: run as SciPy runs it
        return s * centre

    assert adgen.grad(f)(2.0) == pytest.approx(ss.skew(x, nan_policy="omit"), rel=1e-12)


def test_a_statistic_of_data_off_its_plain_path_runs_as_scipy_runs_it():
    # where the samples leave the plain path (NaN here) and no derivative passes, SciPy's
    # call runs as written and gives SciPy's value; where a derivative passes, it is refused
    x = DATA.copy()
    assert adgen.grad(lambda s: s * ss.variation(x))(2.0) == pytest.approx(ss.variation(x))
    x[0] = np.nan
    assert np.isnan(adgen.grad(lambda s: s * ss.variation(x))(2.0))
    with pytest.raises(AdgenError, match="NaN"):
        adgen.grad(lambda s: ss.variation(x * s))(2.0)


def test_power_means_and_the_trimmed_deviation_against_their_closed_forms():
    """``hmean``, ``pmean`` and ``tstd`` as installed (their result type through SciPy's
    ``xp_result_type``: a filtered list appended to, read by a ``try``): ``n / sum(1/x)``
    has gradient ``h^2 / (n x^2)``; ``mean(x^p)^(1/p)`` has ``x^(p-1) m^(1/p-1) / n``; the
    sample deviation has ``(x - mean) / ((n - 1) s)``."""
    x = DATA[:9] + 0.5
    n = x.size
    h = n / np.sum(1.0 / x)
    m = np.mean(x**2.5)
    s = np.std(x, ddof=1)
    for f, want in (
        (lambda z: ss.hmean(z), h**2 / (n * x**2)),
        (lambda z: ss.pmean(z, 2.5), x**1.5 * m ** (1 / 2.5 - 1) / n),
        (lambda z: ss.tstd(z), (x - x.mean()) / ((n - 1) * s)),
    ):
        np.testing.assert_allclose(adgen.grad(f)(x), want, rtol=1e-10)
        v = np.linspace(-1.0, 1.0, n)
        assert adgen.jvp(f, (x,), (v,))[1] == pytest.approx(want @ v, rel=1e-9, abs=1e-12)
