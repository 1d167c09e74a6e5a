"""``scipy.signal.lfilter`` in programs (issue 35's library breadth): an IIR filter's output
differentiated w.r.t. its input and both coefficient vectors.

``y = lfilter(b, a, x)`` solves ``a * y = b * x`` (causal convolutions along ``axis``), so
``dy = lfilter(b, a, dx) + lfilter(db, a, x) - lfilter(da, a, y)``; each cotangent runs the
filter backwards in time. The registry's examples check the rule at every order; the
programs here are the ways it is used: fitting an AR(2) model's coefficients by one-step
prediction error, exponential smoothing with a learned smoothing constant, and a filter
applied along the rows of a batch of signals.
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen

signal = pytest.importorskip("scipy.signal")

RNG = np.random.default_rng(3)
SERIES = signal.lfilter([1.0], [1.0, -0.6, 0.2], RNG.normal(size=60))


def ar2_prediction_error(a):
    # residuals of the AR(2) model x_t = a1 x_{t-1} + a2 x_{t-2} + e_t, by the inverse filter
    residual = signal.lfilter(np.concatenate([np.ones(1), -a]), [1.0], SERIES)
    return np.mean(residual[2:] ** 2)


def smoothed_loss(params):
    alpha, level = params[0], params[1]
    # simple exponential smoothing s_t = alpha x_t + (1 - alpha) s_{t-1}, started at `level`
    smooth = signal.lfilter([alpha], [1.0, alpha - 1.0], SERIES - level) + level
    return np.sum((SERIES[1:] - smooth[:-1]) ** 2)


def filtered_rows(coef):
    signals = np.reshape(SERIES[:48], (4, 12))
    out = signal.lfilter(coef[:2], np.concatenate([np.ones(1), coef[2:]]), signals, axis=1)
    return np.sum(np.tanh(out))


PROGRAMS = [
    (ar2_prediction_error, np.array([0.5, -0.1])),
    (smoothed_loss, np.array([0.3, 0.1])),
    (filtered_rows, np.array([0.7, 0.2, -0.3, 0.1])),
]


def differences(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


@pytest.mark.parametrize("f, x", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_filter_programs_in_both_modes_and_second_order(f, x):
    g = adgen.grad(f)(x)
    np.testing.assert_allclose(g, differences(f, x), rtol=1e-6, atol=1e-9)
    e = np.linspace(1.0, -0.5, x.size)
    value, t = adgen.jvp(f, (x,), (e,))
    assert value == pytest.approx(f(x), rel=1e-14)
    assert t == pytest.approx(g @ e, rel=1e-10, abs=1e-12)
    h = adgen.hessian(f)(x)
    fd = differences(lambda z: adgen.grad(f)(z), x)
    np.testing.assert_allclose(h, fd, rtol=1e-5, atol=1e-7)


def test_ar2_least_squares_gradient_is_zero_at_the_normal_equations_solution():
    # the least-squares AR(2) coefficients solve the normal equations: the gradient is 0
    lagged = np.column_stack([SERIES[1:-1], SERIES[:-2]])
    best = np.linalg.lstsq(lagged, SERIES[2:], rcond=None)[0]
    np.testing.assert_allclose(adgen.grad(ar2_prediction_error)(best), 0.0, atol=1e-12)


def stateful_rows(p):
    """Coefficients, signal and initial state all differentiated; both outputs used."""
    b, a = p[:3], np.concatenate([np.ones(1), p[3:5]])
    x = np.reshape(SERIES[:20], (2, 10)) * p[5]
    zi = np.reshape(p[6:10], (2, 2))
    y, zf = signal.lfilter(b, a, x, 1, zi)  # (the state passed by position)
    return np.sum(np.tanh(y)) + np.sum(zf**2)


def short_signal(p):
    """A signal shorter than the state: the final state keeps the state's last entries."""
    y, zf = signal.lfilter(p[:4], [1.0, -0.3, 0.1, 0.05], p[4:6], zi=p[6:9])
    return np.sum(y * y) + np.sum(np.sin(zf))


STATEFUL = [
    (stateful_rows, np.array([0.3, 0.2, 0.1, -0.4, 0.1, 1.2, 0.5, -0.2, 0.1, 0.3])),
    (short_signal, np.array([0.5, 0.2, -0.1, 0.3, 1.0, -2.0, 0.4, -0.3, 0.2])),
]


@pytest.mark.parametrize("f, x", STATEFUL, ids=[f.__name__ for f, _ in STATEFUL])
def test_initial_state_and_final_state_in_both_modes_and_second_order(f, x):
    """``lfilter(..., zi=zi)`` returns ``(y, zf)``: adgen reads it as the filter without a
    state plus the state's own response (``adgen.rules.signal.lfilter_with_state``)."""
    test_filter_programs_in_both_modes_and_second_order(f, x)


def smoothed_energy(x):
    b, a = signal.butter(2, 0.3)
    return 0.5 * np.sum(signal.filtfilt(b, a, x) ** 2)


def test_filtfilt_as_installed_is_its_own_linear_map():
    """``filtfilt`` (odd extension, ``lfilter_zi``, two passes started from a state) is
    linear in the signal: with ``F`` its matrix, the gradient of ``|F x|^2 / 2`` is
    ``F^T F x``."""
    x = np.sin(np.linspace(0.0, 3.0, 24)) + 0.1 * SERIES[:24]
    b, a = signal.butter(2, 0.3)
    matrix = np.column_stack([signal.filtfilt(b, a, e) for e in np.eye(x.size)])
    want = matrix.T @ (matrix @ x)
    np.testing.assert_allclose(adgen.grad(smoothed_energy)(x), want, rtol=1e-9, atol=1e-12)
    v = np.linspace(-1.0, 1.0, x.size)
    t = adgen.jvp(smoothed_energy, (x,), (v,))[1]
    assert t == pytest.approx(want @ v, rel=1e-9)
