"""np.linspace is linear in start and stop: derivatives w.r.t. both (autograd's
test_linspace; a time grid over a fitted horizon), and a clear error for retstep=True."""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def decay_fit_loss(horizon, rate, observed):
    """Squared error of an exponential decay sampled on a grid over a fitted horizon."""
    t = np.linspace(0.0, horizon, observed.shape[0])
    model = np.exp(-rate * t)
    return np.mean((model - observed) ** 2)


def test_a_fitted_time_horizon_has_a_gradient():
    observed = np.exp(-0.8 * np.linspace(0.0, 3.0, 25)) + 0.01 * np.cos(np.arange(25.0))
    check_grads(decay_fit_loss, 2.5, 0.7, observed, wrt=[0, 1])
    d_horizon, d_rate = adgen.grad(decay_fit_loss, wrt=(0, 1))(2.5, 0.7, observed)
    h = 1e-6
    fd = (decay_fit_loss(2.5 + h, 0.7, observed) - decay_fit_loss(2.5 - h, 0.7, observed)) / (2 * h)
    assert d_horizon == pytest.approx(fd, rel=1e-6)
    hess = adgen.hessian(decay_fit_loss)(np.array(2.5), 0.7, observed)
    g = adgen.grad(decay_fit_loss)
    assert hess == pytest.approx(
        (g(2.5 + h, 0.7, observed) - g(2.5 - h, 0.7, observed)) / (2 * h), rel=1e-5
    )


@pytest.mark.parametrize("num", [0, 1, 5])
@pytest.mark.parametrize("endpoint", [True, False])
def test_start_and_stop_of_any_count(num, endpoint):
    def grid(x, y):
        return np.sum(np.linspace(x, y, num, endpoint=endpoint) * np.arange(1.0, num + 1.0))

    for x, y in ((1.2, 3.4), (1.2, -3.4), (1.2, 1.2)):
        check_grads(grid, x, y)
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    w = np.arange(1.0, num + 1.0)
    assert adgen.grad(grid, wrt=(0, 1))(1.2, 3.4) == pytest.approx(
        (np.sum(w * (1 - t)), np.sum(w * t))
    )


def along_the_last_axis(a, b):
    return np.sum(np.linspace(a, b, 4, axis=-1) ** 2)


def test_array_ends_along_another_axis():
    a, b = np.array([[0.5], [1.5]]), np.array([2.0, -1.0, 3.0])
    check_grads(along_the_last_axis, a, b)
    check_grads(adgen.grad(along_the_last_axis), a, b)


def with_its_step(a, b):
    samples, step = np.linspace(a, b, 5, retstep=True)
    return np.sum(samples) * step


def test_retstep_is_refused_by_name():
    with pytest.raises(adgen.AdgenError, match="retstep=True"):
        adgen.grad(with_its_step)(1.0, 2.0)


def rounded_grid(a, b, dtype):
    return np.sum(np.linspace(a, b, 5, dtype=dtype) * 1.0)


def test_an_integer_dtype_rounds_the_samples_away_from_any_derivative():
    # (the tangent was a linspace of the tangent, rounded: 1.0 where the truth is 0)
    assert adgen.grad(rounded_grid, wrt=(0, 1))(0.3, 4.7, int) == (0.0, 0.0)
    assert adgen.jvp(rounded_grid, (0.3, 4.7, np.int32), (1.0, 1.0, None))[1] == 0.0
    assert adgen.grad(rounded_grid)(0.3, 4.7, np.float64) == pytest.approx(2.5)
