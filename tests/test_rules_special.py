"""SciPy special functions and non-differentiable functions: conventions, exact zeros, refusals.

The rules themselves are checked over shapes and dtypes by ``test_registry_rules.py`` (from
their registered examples); this file checks what those generic checks cannot: exact values
at kinks and conventions, exact zero contributions of non-differentiable functions, use
inside loops and branches, and the errors adgen raises where it has no (safe) derivative.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads

scipy_special = pytest.importorskip("scipy.special")
import scipy  # noqa: E402  (after the importorskip: SciPy is optional)
import scipy.special  # noqa: E402
from scipy import special  # noqa: E402
from scipy.special import expit  # noqa: E402

EDGES = np.array([-1.0, 0.0, 0.5, 1.0])
IDX = np.array([0, 2, 2, 1])


def grad_and_tangent(f: Any, x: Any) -> tuple[Any, Any]:
    """Reverse-mode gradient and the forward-mode Jacobian (column by column) of scalar ``f``."""
    g = adgen.grad(f)(x)
    if np.ndim(x) == 0:
        return g, adgen.jvp(f, (x,), (1.0,))[1]
    cols = []
    for k in range(np.size(x)):
        e = np.zeros(np.size(x))
        e[k] = 1.0
        cols.append(adgen.jvp(f, (x,), (e.reshape(np.shape(x)),))[1])
    return g, np.reshape(cols, np.shape(x))


# ------------------------------------------------------------------ conventions, exact values


def i0e_sum(x):
    return np.sum(scipy.special.i0e(x))


def test_i0e_kink_at_zero_takes_zero() -> None:
    g, t = grad_and_tangent(i0e_sum, np.array([0.0, 1.0]))
    assert g[0] == 0.0 and t[0] == 0.0
    expected = scipy.special.i1e(1.0) - scipy.special.i0e(1.0)
    assert g[1] == pytest.approx(expected, rel=1e-14) and t[1] == pytest.approx(expected)


def entr_sum(x):
    return np.sum(scipy.special.entr(x))


def test_entr_derivative_is_infinite_at_zero() -> None:
    with np.errstate(divide="ignore"):
        g = adgen.grad(entr_sum)(np.array([0.0, 1.0]))
        t = adgen.jvp(entr_sum, (0.0,), (1.0,))[1]
    assert g[0] == np.inf and t == np.inf
    assert g[1] == -1.0


def xlogy_at_zero(x, y):
    return scipy.special.xlogy(x, y)


def test_xlogy_derivative_in_y_is_zero_where_x_is_zero() -> None:
    gx, gy = adgen.grad(xlogy_at_zero, wrt=(0, 1))(0.0, 2.0)
    assert gx == math.log(2.0) and gy == 0.0


def i1_at_zero(x):
    return scipy.special.i1(x)


def test_i1_derivative_is_finite_at_zero() -> None:
    assert adgen.grad(i1_at_zero)(0.0) == 0.5
    assert adgen.jvp(i1_at_zero, (0.0,), (1.0,))[1] == 0.5


def erf_ndtri(x, p):
    return scipy.special.erf(x) + scipy.special.ndtri(p)


def test_known_derivatives() -> None:
    gx, gp = adgen.grad(erf_ndtri, wrt=(0, 1))(0.0, 0.5)
    assert gx == pytest.approx(2.0 / math.sqrt(math.pi), rel=1e-15)
    assert gp == pytest.approx(math.sqrt(2.0 * math.pi), rel=1e-15)


def log_ndtr_far(x):
    return scipy.special.log_ndtr(x)


def test_log_ndtr_derivative_is_stable_far_in_the_tail() -> None:
    # pdf(x) / cdf(x) ~ -x for x -> -inf: no 0 / 0
    g = adgen.grad(log_ndtr_far)(-30.0)
    assert np.isfinite(g) and g == pytest.approx(30.0, rel=2e-3)


def trigamma_slope(x):
    return scipy.special.polygamma(1, x) + scipy.special.digamma(x)


def test_polygamma_chain() -> None:
    # d/dx polygamma(1, x) = polygamma(2, x) = -2 zeta(3); d/dx digamma = polygamma(1, x)
    expected = scipy.special.polygamma(2, 1.0) + scipy.special.polygamma(1, 1.0)
    assert adgen.grad(trigamma_slope)(1.0) == pytest.approx(expected, rel=1e-13)


def lse_tied(a):
    return scipy.special.logsumexp(a)


def test_logsumexp_with_ties_splits_evenly() -> None:
    g, t = grad_and_tangent(lse_tied, np.full(4, 0.7))
    np.testing.assert_allclose(g, 0.25, rtol=1e-15)
    np.testing.assert_allclose(t, 0.25, rtol=1e-15)


def spellings(x):
    return expit(x) + special.expit(x) + scipy_special.expit(x)


def test_scipy_spellings() -> None:
    s = expit(0.3)
    assert adgen.grad(spellings)(0.3) == pytest.approx(3.0 * s * (1.0 - s), rel=1e-14)


def lse_signed(a):
    return scipy.special.logsumexp(a, return_sign=True)[0]


def polygamma_of_order(n, x):
    return scipy.special.polygamma(n, x)


def test_unsupported_arguments_are_refused() -> None:
    with pytest.raises(adgen.UnsupportedSyntaxError, match="return_sign"):
        adgen.grad(lse_signed)(np.ones(3))
    with pytest.raises(adgen.NonDifferentiableError, match="polygamma .* `n`"):
        adgen.grad(polygamma_of_order, wrt=0)(1.0, 2.0)


# ------------------------------------------------------------------ loops and branches


def special_loop(x, n):
    acc = 0.0
    for i in range(n):
        if i % 2 == 0:
            acc = acc + np.sum(scipy.special.expit(x * (i + 1.0)))
        else:
            acc = acc + scipy.special.logsumexp(x / i) * scipy.special.gammaln(i + x[0] ** 2)
    return acc


def test_special_functions_in_loop_and_branch() -> None:
    x = np.array([0.3, -0.7, 1.1])
    check_grads(special_loop, x, 4, wrt=[0])
    h = 1e-6
    fd = np.array(
        [(special_loop(x + h * e, 4) - special_loop(x - h * e, 4)) / (2 * h) for e in np.eye(3)]
    )
    np.testing.assert_allclose(adgen.grad(special_loop)(x, 4), fd, rtol=1e-7)
    tangent = np.array([1.0, -2.0, 0.5])
    fd_dir = (special_loop(x + h * tangent, 4) - special_loop(x - h * tangent, 4)) / (2 * h)
    assert adgen.jvp(special_loop, (x, 4), (tangent, None))[1] == pytest.approx(fd_dir, rel=1e-7)


# ------------------------------------------------------------------ non-differentiable: exact zeros
# f(x) = sum(x * c(x)) with c piecewise constant: the derivative is exactly c(x).


def nd_floor(x):
    return np.sum(x * np.floor(x))


def nd_ceil(x):
    return np.sum(x * np.ceil(x))


def nd_round(x):
    return np.sum(x * np.round(x, 1))


def nd_around(x):
    return np.sum(x * np.around(x))


def nd_rint(x):
    return np.sum(x * np.rint(x))


def nd_trunc(x):
    return np.sum(x * np.trunc(x))


def nd_sign(x):
    return np.sum(x * np.sign(x))


def nd_floor_divide(x):
    return np.sum(x * np.floor_divide(x, 0.5) + x * (x // 0.25))


def nd_argmax(x):
    return np.sum(x * (np.argmax(x) + np.argmin(x) + np.nanargmax(x) + np.nanargmin(x)))


def nd_argsort(x):
    return np.sum(x * np.argsort(x) + x * np.argpartition(x, 1) + x * np.lexsort((x,)))


def nd_search(x):
    return np.sum(x * np.searchsorted(EDGES, x) + x * np.digitize(x, EDGES))


def nd_nonzero(x):
    return np.sum(x * np.size(np.nonzero(x > 0.0)[0]) + x * np.size(np.flatnonzero(x)))


def nd_argwhere(x):
    return np.sum(x * np.shape(np.argwhere(x > 0.0))[0] + x * np.count_nonzero(x > 0.0))


def nd_predicates(x):
    return np.sum(
        x * np.isnan(x)
        + x * np.isfinite(x)
        + x * np.isinf(x)
        + x * np.isclose(x, 0.5)
        + x * np.signbit(x)
        + x * np.isneginf(x)
        + x * np.isposinf(x)
        + x * np.isin(x, EDGES)
        + x * np.isreal(x)
        + x * np.iscomplex(x)
    )


def nd_all(x):
    return np.sum(
        x * np.allclose(x, 0.0)
        + x * np.array_equal(x, x)
        + x * np.array_equiv(x, x)
        + x * np.all(x > 0.0)
        + x * np.any(x > 0.0)
    )


def nd_compare(x):
    return np.sum(
        x * (x > 0.0)
        + x * (x <= 0.5)
        + x * np.greater(x, 0.1)
        + x * np.less_equal(x, 0.2)
        + x * np.equal(x, 0.5)
        + x * np.not_equal(x, 0.5)
    )


def nd_logical(x):
    pos = x > 0.0
    big = x > 0.5
    return np.sum(
        x * np.logical_and(pos, big)
        + x * np.logical_or(pos, big)
        + x * np.logical_xor(pos, big)
        + x * np.logical_not(pos)
    )


def nd_bitwise(x):
    k = np.floor(x * 4.0).astype(int)
    return np.sum(
        x * np.bitwise_and(k, 3)
        + x * np.bitwise_or(k, 1)
        + x * np.bitwise_xor(k, 2)
        + x * np.invert(k)
        + x * np.left_shift(k, 1)
        + x * np.right_shift(k, 1)
        + x * np.gcd(k, 6)
        + x * np.lcm(k, 2)
    )


def nd_shape(x):
    return np.sum(x * np.shape(x)[0] + x * np.ndim(x) + x * np.size(x) + x * len(x))


def nd_like(x):
    return np.sum(
        x * np.zeros_like(x)
        + x * np.ones_like(x)
        + x * np.full_like(x, 2.0)
        + x * np.zeros_like(np.empty_like(x))  # empty_like's garbage may be NaN
    )


def nd_constructors(x):
    n = np.size(x)
    return np.sum(
        x * np.arange(n)
        + x * np.linspace(0.0, 1.0, n)
        + x * np.logspace(0.0, 1.0, n)
        + x * np.geomspace(1.0, 2.0, n)
        + x * np.sum(np.eye(n) + np.identity(n) + np.tri(n), axis=0)
    )


def nd_indices(x):
    n = np.size(x)
    rows = np.tril_indices(n)[0]
    cols = np.triu_indices(n)[1]
    return np.sum(
        x * np.size(rows)
        + x * np.size(cols)
        + x * np.diag_indices(n)[0]
        + x * np.indices((n,))[0]
        + x * np.unravel_index(np.arange(n), (n,))[0]
        + x * np.ravel_multi_index((np.arange(n),), (n,))
    )


def nd_dtypes(x):
    y = x.astype(np.result_type(x, np.float32))
    z = y * 2.0 if np.iscomplexobj(x) else y * 3.0
    w = z * 5.0 if np.isrealobj(x) and np.isscalar(1.0) else z
    return np.sum(x * w + x * np.can_cast(x, np.float64))


def nd_spacing(x):
    return np.sum(x * np.spacing(x))


def nd_random(x):
    r = np.random.rand(4) + np.random.randn(4) + np.random.random_sample(4)
    s = np.random.random(4) + np.random.standard_normal(4) + np.random.randint(0, 2, size=4)
    return np.sum(x * (r + s) * 0.0 + x * np.random.uniform(2.0, 2.0, size=4))


def nd_generator(x):
    rng = np.random.default_rng(7)
    noise = rng.normal(size=4) + rng.uniform(size=4) + rng.random(4) + rng.standard_normal(4)
    picks = rng.integers(0, 3, size=4) + rng.choice(3, size=4) + rng.permutation(4)
    return np.sum(x * noise * 0.0 + x * picks * 0.0 + x)


X = np.array([-1.3, 0.4, 0.55, 2.2])
NONDIFF: list[tuple[Any, Any]] = [
    (nd_floor, lambda x: np.floor(x)),
    (nd_ceil, lambda x: np.ceil(x)),
    (nd_round, lambda x: np.round(x, 1)),
    (nd_around, lambda x: np.around(x)),
    (nd_rint, lambda x: np.rint(x)),
    (nd_trunc, lambda x: np.trunc(x)),
    (nd_sign, lambda x: np.sign(x)),
    (nd_floor_divide, lambda x: np.floor_divide(x, 0.5) + x // 0.25),
    (nd_argmax, lambda x: np.full_like(x, 3.0 + 0.0 + 3.0 + 0.0)),
    (
        nd_argsort,
        lambda x: np.argsort(x) + np.argpartition(x, 1) + np.lexsort((x,)),
    ),
    (nd_search, lambda x: np.searchsorted(EDGES, x) + np.digitize(x, EDGES)),
    (nd_nonzero, lambda x: np.full_like(x, 3.0 + 4.0)),
    (nd_argwhere, lambda x: np.full_like(x, 3.0 + 3.0)),
    (nd_predicates, lambda x: 1.0 + 1.0 * (x < 0) + 1.0),
    (nd_all, lambda x: np.full_like(x, 0.0 + 1.0 + 1.0 + 0.0 + 1.0)),
    (
        nd_compare,
        lambda x: 1.0 * (x > 0) + 1.0 * (x <= 0.5) + 1.0 * (x > 0.1) + 1.0 * (x <= 0.2) + 1.0,
    ),
    (
        nd_logical,
        lambda x: 1.0 * (x > 0.5) + 1.0 * (x > 0) + 1.0 * ((x > 0) != (x > 0.5)) + 1.0 * (x <= 0),
    ),
    (
        nd_bitwise,
        lambda x: (
            lambda k: (
                (k & 3) + (k | 1) + (k ^ 2) + ~k + (k << 1) + (k >> 1) + np.gcd(k, 6) + np.lcm(k, 2)
            )
        )(np.floor(x * 4.0).astype(int)),
    ),
    (nd_shape, lambda x: np.full_like(x, 4.0 + 1.0 + 4.0 + 4.0)),
    (nd_like, lambda x: np.full_like(x, 3.0)),
    (
        nd_constructors,
        lambda x: (
            np.arange(4)
            + np.linspace(0.0, 1.0, 4)
            + np.logspace(0.0, 1.0, 4)
            + np.geomspace(1.0, 2.0, 4)
            + np.array([4.0 + 2.0, 3.0 + 2.0, 2.0 + 2.0, 1.0 + 2.0])
        ),
    ),
    (nd_indices, lambda x: 10.0 + 10.0 + 4.0 * np.arange(4.0)),
    (nd_dtypes, lambda x: 15.0 * x + 1.0),  # w = 15 x depends on x: d/dx x * w = 30 x, below
    (nd_spacing, lambda x: np.spacing(x)),
    (nd_random, lambda x: np.full_like(x, 2.0)),
    (nd_generator, lambda x: np.ones_like(x)),
]


@pytest.mark.parametrize("f, factor", NONDIFF, ids=[f.__name__ for f, _ in NONDIFF])
def test_nondifferentiable_contributes_exactly_zero(f: Any, factor: Any) -> None:
    expected = np.asarray(factor(X), dtype=float)
    if f is nd_dtypes:  # sum(x * 15 x + x * 1): its derivative is 30 x + 1
        expected = 30.0 * X + 1.0
    g, t = grad_and_tangent(f, X)
    # (exactly the sum of the factors, up to the order their terms are added in)
    np.testing.assert_allclose(g, expected, rtol=1e-15, atol=0)
    np.testing.assert_allclose(t, expected, rtol=1e-15, atol=0)


def bincount_weights(w):
    return np.sum(np.bincount(IDX, weights=w, minlength=5) ** 2)


def test_bincount_is_differentiated_in_its_weights() -> None:
    w = np.array([1.0, 2.0, 3.0, 4.0])
    bins = np.bincount(IDX, weights=w, minlength=5)
    g, t = grad_and_tangent(bincount_weights, w)
    np.testing.assert_array_equal(g, 2.0 * bins[IDX])
    np.testing.assert_array_equal(t, 2.0 * bins[IDX])
    w32 = w.astype(np.float32)
    assert adgen.grad(bincount_weights)(w32).dtype == np.float32


# ------------------------------------------------------------------ refusals


def random_loc(mu):
    return np.sum(np.random.normal(mu, 1.0, size=3))


def random_scale(s):
    rng = np.random.default_rng(0)
    return np.sum(rng.normal(0.0, s, size=3))


def random_pick(x):
    return np.sum(np.random.choice(x, size=2))


def random_shuffle(x):
    return np.sum(np.random.default_rng(0).permutation(x) * x)


@pytest.mark.parametrize("f", [random_loc, random_scale, random_pick, random_shuffle])
def test_samplers_refuse_differentiated_parameters(f: Any) -> None:
    x = np.array([0.5, 1.5, 2.5])
    with pytest.raises(adgen.NonDifferentiableError, match="depends on a differentiated input"):
        adgen.grad(f)(x)
    with pytest.raises(adgen.NonDifferentiableError, match="depends on a differentiated input"):
        adgen.jvp(f, (x,), (np.ones(3),))


def no_rule_numpy(x):
    return np.sum(np.unique(x))


def no_rule_scipy(x):
    return scipy.special.mathieu_a(2.0, x)


@pytest.mark.parametrize(
    "f, name", [(no_rule_numpy, "unique"), (no_rule_scipy, "mathieu_a")], ids=["np", "scipy"]
)
def test_unregistered_function_raises_no_rule_error(f: Any, name: str) -> None:
    line = inspect.getsourcelines(f)[1] + 1
    where = f"test_rules_special.py:{line}:"
    for call in (
        lambda: adgen.grad(f)(np.array([0.5, 1.5])),
        lambda: adgen.jvp(f, (np.array([0.5, 1.5]),), (np.ones(2),)),
    ):
        with pytest.raises(adgen.NoRuleError) as info:
            call()
        assert name in str(info.value) and where in str(info.value), str(info.value)


def int_argument(n):
    return n * 2.0


def complex_argument(z):
    return z * z


def test_integer_argument_is_refused() -> None:
    with pytest.raises(adgen.NonDifferentiableError, match="integer"):
        adgen.grad(int_argument, wrt=0)(3)
    with pytest.raises(adgen.NonDifferentiableError, match="integer"):
        adgen.grad(int_argument, wrt=0)(np.array([1, 2]))


def test_complex_argument_with_a_complex_value() -> None:
    """grad of a complex value needs holomorphic=True (as in JAX); jvp needs nothing."""
    with pytest.raises(adgen.NonScalarOutputError, match="holomorphic=True"):
        adgen.grad(complex_argument)(1.0 + 2.0j)
    assert adgen.grad(complex_argument, holomorphic=True)(1.0 + 2.0j) == 2.0 + 4.0j
    _, dot = adgen.jvp(complex_argument, (np.array([1.0 + 2.0j]),), (np.ones(1),))
    np.testing.assert_allclose(dot, [2.0 + 4.0j])


COMPLEX_UNIT = 1.0 + 2.0j


def complex_inside(x):
    return np.sum(np.abs(x.astype(complex) * (1.0 + 1.0j)))


def complex_literal(x):
    return np.sum(np.abs(x * 1j))


def complex_dtype(x):
    return np.sum(np.abs(np.asarray(x, dtype=np.complex128) * 2.0))


def complex_dtype_name(x):
    return np.sum(np.abs(x.astype("complex128") * np.exp(1j * x)))


def complex_scalar_type(x):
    z = np.complex128(2.0) * x
    return np.sum(np.real(z))


def complex_global(x):
    return np.sum(np.real(x * COMPLEX_UNIT))


def complex_builtin(x):
    return complex(x[0], 1.0).real


def complex_via_variable(x):
    c = 1.0 + 1.0j
    y = x * 2.0
    for _ in range(2):
        y = y * c
    return np.sum(np.abs(y))


@pytest.mark.parametrize(
    ("fn", "line"),
    [
        (complex_inside, "x.astype(complex)"),
        (complex_literal, "x * 1j"),
        (complex_dtype, "dtype=np.complex128"),
        (complex_dtype_name, 'astype("complex128")'),
        (complex_scalar_type, "np.complex128(2.0) * x"),
        (complex_global, "x * COMPLEX_UNIT"),
        (complex_builtin, "complex(x[0], 1.0)"),
        (complex_via_variable, "y = y * c"),
    ],
)
def test_complex_intermediate_is_differentiated(fn, line) -> None:
    """A complex value made from (or meeting) a differentiated one is differentiated under
    adgen's convention (these were refused before complex values were supported; the rules
    once dropped imaginary parts: np.abs(x.astype(complex) * (1 + 1j)) had gradient 0).
    First order in both modes and the Hessian, against finite differences."""
    x = np.array([1.5, -2.0])
    assert line  # (the line that makes the complex value)
    check_grads(fn, x)
    g = adgen.grad(fn)
    h = adgen.hessian(fn)(x)
    eps = 1e-6
    numeric = np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(2)])
    np.testing.assert_allclose(h, numeric, rtol=1e-5, atol=1e-7)


def complex_constant_apart(x):
    c = np.complex128(2.0) + 1.0j
    return np.sum(x) * np.abs(c) + np.real(c)


def test_complex_values_apart_from_derivatives_are_fine() -> None:
    x = np.array([1.5, -2.0])
    np.testing.assert_allclose(adgen.grad(complex_constant_apart)(x), [math.sqrt(5.0)] * 2)
