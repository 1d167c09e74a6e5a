"""Kink conventions of the elementwise rules (exact values), and some of them in loops and
branches in both modes.

The registry-generated tests (tests/test_registry_rules.py) check these rules away from their
kinks; here each convention documented in ``adgen.rules.elementwise`` and
``adgen.rules.arithmetic`` is pinned down with exact expected derivatives.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def _both(f: Any, *args: Any) -> list[tuple[Any, ...]]:
    """The derivatives of the elementwise ``f`` w.r.t. each argument (seed 1), by forward
    mode (one argument at a time) and by reverse mode: ``[forward, reverse]``."""
    forward = []
    for k in range(len(args)):
        tangents = [np.ones_like(a) if i == k else np.zeros_like(a) for i, a in enumerate(args)]
        _, dot = adgen.jvp(f, list(args), tangents)
        forward.append(np.broadcast_to(dot, np.broadcast(*args).shape))
    out, pullback = adgen.vjp(f, *args)
    reverse = pullback(np.ones_like(out))
    return [tuple(forward), tuple(reverse)]


def _assert_derivatives(f: Any, args: tuple[Any, ...], expected: tuple[Any, ...]) -> None:
    with np.errstate(all="ignore"):
        for got in _both(f, *args):
            for g, e in zip(got, expected, strict=True):
                np.testing.assert_array_equal(
                    np.asarray(g, dtype=float), np.asarray(e, dtype=float)
                )


# -- fmax / fmin: ties split evenly (like np.maximum), NaN leaves it to the other operand ---------


def fmax_(x, y):
    return np.fmax(x, y)


def fmin_(x, y):
    return np.fmin(x, y)


def maximum_(x, y):
    return np.maximum(x, y)


NAN = np.nan


def test_fmax_fmin_ties_and_nans() -> None:
    x = np.array([1.0, 2.0, 0.0, NAN, 3.0, NAN])
    y = np.array([1.0, 1.0, 2.0, 2.0, NAN, NAN])
    _assert_derivatives(fmax_, (x, y), ([0.5, 1, 0, 0, 1, 1], [0.5, 0, 1, 1, 0, 0]))
    _assert_derivatives(fmin_, (x, y), ([0.5, 0, 1, 0, 1, 1], [0.5, 1, 0, 1, 0, 0]))


def test_fmax_agrees_with_maximum_without_nans() -> None:
    x = np.array([1.0, 2.0, 0.0, -1.0])
    y = np.array([1.0, 1.0, 2.0, -1.0])
    for a, b in zip(_both(fmax_, x, y), _both(maximum_, x, y), strict=True):
        for u, v in zip(a, b, strict=True):
            np.testing.assert_array_equal(u, v)


# -- copysign: derivative sign(x) * copysign(1, y) in x (0 at x == 0, like abs), 0 in y -----------


def copysign_(x, y):
    return np.copysign(x, y)


def test_copysign_at_zero() -> None:
    x = np.array([0.0, -0.0, 2.0, -2.0, 2.0])
    y = np.array([-1.0, 1.0, -1.0, -1.0, 0.0])
    _assert_derivatives(copysign_, (x, y), ([0, 0, -1, 1, 1], [0, 0, 0, 0, 0]))


# -- fmod / divmod at their jumps: the derivative of the piece the result lies on ------------------


def fmod_(x, y):
    return np.fmod(x, y)


def divmod_rem(x, y):
    q, r = np.divmod(x, y)
    return r


def divmod_quot(x, y):
    q, r = np.divmod(x, y)
    return q + 0.0 * r


def test_fmod_at_jumps() -> None:
    # x / y integer: fmod is 0 (or -0), the quotient is exactly x / y
    x = np.array([3.0, -3.0, 1.0, 2.9])
    y = np.array([1.5, 1.5, 0.5, 1.5])
    _assert_derivatives(fmod_, (x, y), ([1, 1, 1, 1], [-2, 2, -2, -1]))


def test_divmod_at_jumps() -> None:
    x = np.array([3.0, -3.0, -2.9, 2.9])
    y = np.array([1.5, 1.5, 1.5, -1.5])
    _assert_derivatives(divmod_rem, (x, y), ([1, 1, 1, 1], [-2, 2, 2, 2]))
    _assert_derivatives(divmod_quot, (x, y), ([0, 0, 0, 0], [0, 0, 0, 0]))


def test_builtin_divmod_of_floats() -> None:
    def f(x, y):
        q, r = divmod(x, y)
        return r * x

    assert adgen.grad(f, wrt=(0, 1))(3.5, 1.5) == pytest.approx((0.5 + 3.5, -2 * 3.5))


# -- hypot at (0, 0): 0 in both (like abs at 0); arctan2 at (0, 0): NaN ---------------------------


def hypot_(x, y):
    return np.hypot(x, y)


def arctan2_(x, y):
    return np.arctan2(x, y)


def test_hypot_at_origin() -> None:
    x = np.array([0.0, 3.0, 0.0, -2.0])
    y = np.array([0.0, 4.0, -5.0, 0.0])
    _assert_derivatives(hypot_, (x, y), ([0, 0.6, 0, -1], [0, 0.8, -1, 0]))


def test_arctan2_at_origin_is_nan() -> None:
    with np.errstate(all="ignore"):
        for d_x1, d_x2 in _both(arctan2_, np.array([0.0, 1.0]), np.array([0.0, 1.0])):
            assert np.isnan(d_x1[0]) and np.isnan(d_x2[0])
            assert (d_x1[1], d_x2[1]) == (0.5, -0.5)


# -- cbrt at 0: inf (like sqrt); float_power at 0 like power --------------------------------------


def cbrt_(x):
    return np.cbrt(x)


def sqrt_(x):
    return np.sqrt(x)


BASES = np.array([0.0, 0.0, 0.0, 2.0])
EXPONENTS = np.array([2.0, 1.0, 0.0, 3.0])


def float_power_base(x):
    return np.float_power(x, EXPONENTS)


def float_power_exponent(y):
    return np.float_power(BASES, y)


def power_base(x):
    return np.power(x, EXPONENTS)


def power_exponent(y):
    return np.power(BASES, y)


def test_cbrt_at_zero_and_elsewhere() -> None:
    _assert_derivatives(cbrt_, (np.array([0.0, 8.0, -8.0]),), ([np.inf, 1 / 12, 1 / 12],))
    _assert_derivatives(sqrt_, (np.array([0.0]),), ([np.inf],))


def test_float_power_at_zero_agrees_with_power() -> None:
    # w.r.t. the base at 0 ** 0: x ** 0 is 1 for every x, so 0 (not y * x ** (y - 1) =
    # 0 * inf); w.r.t. the exponent at a zero base: the log is taken at 1
    for base, exponent in ((float_power_base, float_power_exponent), (power_base, power_exponent)):
        _assert_derivatives(base, (BASES,), ([0, 1, 0, 12],))
        _assert_derivatives(exponent, (EXPONENTS,), ([0, 0, 0, 8 * math.log(2.0)],))


# -- sinc at 0: 0; near 0 a series, continuous with the closed form --------------------------------


def sinc_(x):
    return np.sinc(x)


def test_sinc_derivative() -> None:
    for got in _both(sinc_, np.array([0.0, 0.5, -0.5])):
        np.testing.assert_allclose(got[0], [0, -4 / np.pi, 4 / np.pi], rtol=1e-15, atol=0)
    x = np.array([1e-8, 1e-4, 0.00999999, 0.01, 0.0100001, 0.3])
    exact = (np.pi * x * np.cos(np.pi * x) - np.sin(np.pi * x)) / (np.pi * x * x)
    # the closed form cancels for tiny x; use the series there for the reference
    exact[:2] = -(np.pi**2) * x[:2] / 3
    for got in _both(sinc_, x):
        np.testing.assert_allclose(got[0], exact, rtol=1e-8)


# -- nan_to_num: 1 where finite, 0 where replaced -------------------------------------------------


def nan_to_num_(x):
    return np.nan_to_num(x, nan=1.0, posinf=5.0)


def test_nan_to_num() -> None:
    x = np.array([NAN, np.inf, -np.inf, 1.5])
    _assert_derivatives(nan_to_num_, (x,), ([0, 0, 0, 1],))


# -- modf: 1 and 0, at the integers too -----------------------------------------------------------


def modf_frac(x):
    frac, whole = np.modf(x)
    return frac + whole * whole


def test_modf_at_integers() -> None:
    _assert_derivatives(modf_frac, (np.array([2.0, -1.0, 0.0, 0.5]),), ([1, 1, 1, 1],))


# -- interp: the segment to the right of a knot, the last at xp[-1], 0 outside ---------------------

XP = np.array([0.0, 1.0, 2.0])


def interp_(x, fp):
    return np.interp(x, XP, fp)


def interp_bounded(x, fp):
    return np.interp(x, XP, fp, left=-7.0, right=7.0)


def test_interp_at_knots() -> None:
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0])
    fp = np.array([0.0, 2.0, 3.0])
    slopes = [0, 2, 2, 1, 1, 0]
    _, dot = adgen.jvp(interp_, [x, fp], [np.ones(6), np.zeros(3)])
    np.testing.assert_array_equal(dot, slopes)
    _, pullback = adgen.vjp(interp_, x, fp)
    np.testing.assert_array_equal(pullback(np.ones(6))[0], slopes)
    _, pullback = adgen.vjp(interp_, x, fp)
    np.testing.assert_array_equal(pullback(np.ones(6))[1], [1 + 1 + 0.5, 0.5 + 1, 1 + 1])
    _, pullback = adgen.vjp(interp_bounded, x, fp)
    np.testing.assert_array_equal(pullback(np.ones(6))[1], [1 + 0.5, 0.5 + 1, 1])
    _, dot = adgen.jvp(interp_bounded, [x, fp], [np.zeros(6), np.ones(3)])
    np.testing.assert_array_equal(dot, [0, 1, 1, 1, 1, 0])


def interp_period(x, fp):
    return np.sum(np.interp(x, XP, fp, period=3.0))


def test_interp_period_is_refused() -> None:
    with pytest.raises(adgen.AdgenError, match="period"):
        adgen.grad(interp_period)(np.array([0.5]), np.array([0.0, 1.0, 2.0]))


# -- in loops and branches, both modes ------------------------------------------------------------


def softmax_tail(x, n):
    """A loop of logaddexp with a branch on hypot."""
    acc = x[0]
    for i in range(1, n):
        acc = np.logaddexp(acc, x[i])
        if np.hypot(acc, x[i]) > 1.0:
            acc = acc - np.arctan2(x[i], acc)
        else:
            acc = np.fmax(acc, np.cbrt(x[i]))
    return acc


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_in_loop_and_branch(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.2, 1.2, size=5)
    check_grads(softmax_tail, x, 5)
    grad = adgen.grad(softmax_tail)(x, 5)
    eps = 1e-6
    fd = np.array(
        [
            (softmax_tail(x + eps * e, 5) - softmax_tail(x - eps * e, 5)) / (2 * eps)
            for e in np.eye(5)
        ]
    )
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)
    _, dot = adgen.jvp(softmax_tail, [x, 5], [np.ones(5), None])
    np.testing.assert_allclose(dot, fd.sum(), rtol=1e-5, atol=1e-7)


def interp_in_loop(x, fp):
    total = 0.0
    for k in range(3):
        total = total + np.sum(np.interp(x + 0.3 * k, XP, fp) * np.polyval(fp, x))
    return total


def test_interp_and_polyval_in_loop() -> None:
    x = np.array([0.15, 0.65, 1.45, 1.85])
    fp = np.array([0.5, -1.0, 2.0])
    check_grads(interp_in_loop, x, fp)
