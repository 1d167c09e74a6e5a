"""Options of NumPy and SciPy functions passed as variables (``np.trace(x, offset=k)``,
``np.pad(x, 2, mode=m)``, ``eigh(a, UPLO=u)``): a rule whose derivative depends on the
option decides it when the code runs, where the option is not a constant adgen can read.

Each function takes its option as an argument; its derivatives, in both modes and at second
order, are checked against finite differences and equal those of the same function with
the option written as a constant."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

import adgen
from adgen.rules.scipy_linalg import CHOLESKY_PAIR, SUPPORTED
from adgen.testing import check_grads

RNG = np.random.default_rng(7)
A = RNG.normal(size=(3, 3))
SPD = A @ A.T + 3.0 * np.eye(3)
V = RNG.normal(size=3)


def trace(x, k):
    return np.trace(x, offset=k) * np.sum(x)


def trace_1(x):
    return np.trace(x, offset=1) * np.sum(x)


def take(x, m):
    return np.sum(np.take(x, [0, 5, -1], mode=m) ** 2)


def take_wrap(x):
    return np.sum(np.take(x, [0, 5, -1], mode="wrap") ** 2)


def pad(x, m):
    return np.sum(np.pad(x, 2, mode=m) ** 2 * np.arange(7.0))


def pad_reflect(x):
    return np.sum(np.pad(x, 2, mode="reflect") ** 2 * np.arange(7.0))


def eigh(x, u):
    return np.sum(np.linalg.eigh(x, UPLO=u)[0] ** 2)


def eigh_u(x):
    return np.sum(np.linalg.eigh(x, UPLO="U")[0] ** 2)


def eigvalsh(x, u):
    return np.sum(np.linalg.eigvalsh(x, UPLO=u) ** 3)


def eigvalsh_u(x):
    return np.sum(np.linalg.eigvalsh(x, UPLO="U") ** 3)


def cholesky(x, up):
    return np.sum(np.linalg.cholesky(x, upper=up) ** 2 * np.arange(9.0).reshape(3, 3))


def cholesky_upper(x):
    return np.sum(np.linalg.cholesky(x, upper=True) ** 2 * np.arange(9.0).reshape(3, 3))


def pinv(x, h):
    return np.sum(np.linalg.pinv(x, hermitian=h) ** 2)


def pinv_hermitian(x):
    return np.sum(np.linalg.pinv(x, hermitian=True) ** 2)


def solve_triangular(x, lower):
    return np.sum(scipy.linalg.solve_triangular(x, V, lower=lower) ** 2)


def solve_triangular_upper(x):
    return np.sum(scipy.linalg.solve_triangular(x, V, lower=False) ** 2)


def solve(x, assume):
    return np.sum(scipy.linalg.solve(x, V, assume_a=assume) ** 2)


def solve_pos(x):
    return np.sum(scipy.linalg.solve(x, V, assume_a="pos") ** 2)


def cho(x, lower):
    return np.sum(scipy.linalg.cho_solve(scipy.linalg.cho_factor(x, lower=lower), V) ** 2)


def cho_upper(x):
    return np.sum(scipy.linalg.cho_solve(scipy.linalg.cho_factor(x, lower=False), V) ** 2)


def vector_norm(x, o):
    return np.linalg.vector_norm(x, ord=o)


def vector_norm_3(x):
    return np.linalg.vector_norm(x, ord=3)


def matrix_norm(x, o):
    return np.linalg.matrix_norm(x, ord=o) ** 2


def matrix_norm_fro(x):
    return np.linalg.matrix_norm(x, ord="fro") ** 2


def log_base(x, base):
    return math.log(x, base) * x


def log_base_2(x):
    return math.log(x, 2.0) * x


# scipy.linalg's rules need SciPy 1.16 or newer, and cho_factor's a SciPy that leaves the
# other triangle as it is (1.18 zeroes it): adgen.rules.scipy_linalg
OLD_SCIPY = pytest.mark.skipif(not SUPPORTED, reason="no scipy.linalg rules before SciPy 1.16")
ZEROED_TRIANGLE = pytest.mark.skipif(
    not CHOLESKY_PAIR, reason="SciPy 1.18 zeroes cho_factor's other triangle: no rules"
)

CASES = [
    (trace, trace_1, A, 1),
    (take, take_wrap, np.arange(1.0, 5.0), "wrap"),
    (pad, pad_reflect, np.arange(1.0, 4.0), "reflect"),
    (eigh, eigh_u, SPD, "U"),
    (eigvalsh, eigvalsh_u, SPD, "U"),
    (cholesky, cholesky_upper, SPD, True),
    (pinv, pinv_hermitian, SPD, True),
    pytest.param(solve_triangular, solve_triangular_upper, np.triu(SPD), False, marks=OLD_SCIPY),
    pytest.param(solve, solve_pos, SPD, "pos", marks=OLD_SCIPY),
    pytest.param(cho, cho_upper, SPD, False, marks=[OLD_SCIPY, ZEROED_TRIANGLE]),
    (vector_norm, vector_norm_3, V, 3),
    (matrix_norm, matrix_norm_fro, A, "fro"),
    (log_base, log_base_2, 3.0, 2.0),
]


@pytest.mark.parametrize(
    ("fn", "literal", "x", "option"),
    CASES,
    ids=[getattr(c, "values", c)[0].__name__ for c in CASES],
)
def test_an_option_passed_as_a_variable_is_decided_when_the_code_runs(fn, literal, x, option):
    check_grads(fn, x, option, wrt=[0])
    gradient = adgen.grad(fn)(x, option)
    np.testing.assert_allclose(gradient, adgen.grad(literal)(x), rtol=1e-12, atol=1e-12)
    tangent = np.ones_like(x) if isinstance(x, np.ndarray) else 1.0
    _, forward = adgen.jvp(fn, (x, option), (tangent, None))
    np.testing.assert_allclose(forward, np.sum(gradient * tangent), rtol=1e-10, atol=1e-12)
    # second order: the gradient's code (which decides the option when it runs) differentiated
    g = adgen.grad(fn)
    h = 1e-5
    hvp_fd = (g(x + h * tangent, option) - g(x - h * tangent, option)) / (2 * h)
    if isinstance(x, np.ndarray):
        np.testing.assert_allclose(adgen.hvp(fn)(x, option, tangent), hvp_fd, rtol=1e-5, atol=1e-6)
    else:
        assert adgen.grad(g)(x, option) == pytest.approx(hvp_fd, rel=1e-5)


def in_a_tuple(x, mode):
    y = x * x if mode in ("square", "sq") else x
    if mode not in ("plain",):
        y = y * 2.0
    return np.sum(y)


def test_in_and_not_in_compare_options():
    x = np.arange(3.0)
    np.testing.assert_allclose(adgen.grad(in_a_tuple)(x, "sq"), 4.0 * x)
    np.testing.assert_allclose(adgen.grad(in_a_tuple)(x, "plain"), np.ones(3))
    np.testing.assert_allclose(adgen.grad(in_a_tuple)(x, "other"), 2.0 * np.ones(3))
    np.testing.assert_allclose(adgen.hessian(in_a_tuple)(x, "square"), 4.0 * np.eye(3))
    check_grads(in_a_tuple, x, "square", wrt=[0])


def astype_to(x, dtype):
    return np.sum(x.astype(dtype) ** 2)


def test_a_dtype_passed_as_an_argument():
    x = np.arange(3.0)
    np.testing.assert_allclose(adgen.grad(astype_to)(x, np.float64), 2.0 * x)
    check_grads(astype_to, x, np.float64, wrt=[0])  # (the class is no number: not perturbed)


def test_cho_factor_without_rules_is_refused_not_an_internal_error():
    """Where adgen has no rules for cho_factor (SciPy before 1.16, or 1.18, which zeroes the
    other triangle), reading SciPy's own code is refused with a message; on SciPy 1.15 the
    lowering of its `c, lower = _cholesky(...)` raised a KeyError (an internal error)."""
    if CHOLESKY_PAIR:
        check_grads(cho_upper, SPD)
        return
    with pytest.raises(adgen.AdgenError) as caught:
        adgen.grad(cho_upper)(SPD)
    assert not isinstance(caught.value, adgen.errors.InternalError), caught.value
