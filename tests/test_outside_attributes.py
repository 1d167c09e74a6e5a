"""Attributes of objects made outside the function, written as the code runs (issue 34,
part 1): a counter of the objective's calls (``objective.calls += 1``), an estimator's
bookkeeping in a method adgen inlines (``self.n_evals_ += 1``, ``self.last_loss_ =
float(value)``). They run as written, once per call of the derivative, in both modes; the
derivative is the function's. A function that reads such an attribute too is refused (adgen
reads an outside object's attributes when transforming, so it would see a stale value).
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import UnsupportedSyntaxError


def objective(x):
    objective.calls += 1
    return np.sum(x**2)


class Model:
    def __init__(self):
        self.w = np.array([1.0, 2.0])
        self.n_evals_ = 0
        self.last_loss_ = None

    def loss(self, x):
        value = np.sum(self.w * x**2)
        self.n_evals_ += 1
        self.last_loss_ = float(value)
        return value


X = np.array([0.5, -1.0])


def test_a_counter_on_the_objective_counts_each_call_of_the_derivative():
    objective.calls = 0
    np.testing.assert_allclose(adgen.grad(objective)(X), 2 * X)
    assert objective.calls == 1
    _, t = adgen.jvp(objective, (X,), (np.ones(2),))
    assert t == pytest.approx(2 * X.sum()) and objective.calls == 2
    value, g = adgen.value_and_grad(objective)(X)
    assert value == pytest.approx(1.25) and objective.calls == 3


def test_an_estimators_bookkeeping_runs_as_written():
    model = Model()
    np.testing.assert_allclose(adgen.grad(model.loss)(X), 2 * model.w * X)
    assert model.n_evals_ == 1 and model.last_loss_ == pytest.approx(2.25)
    np.testing.assert_allclose(adgen.hessian(model.loss)(X), np.diag(2 * model.w))
    assert model.n_evals_ > 1


def test_reading_an_attribute_the_function_writes_is_refused():
    model = Model()

    other = Model()

    def writes_then_reads(x):  # (a read after a write in straight-line code: the value
        other.n_evals_ = 5  # stored, tests/test_unpacked_parameters.py)
        return np.sum(x * other.n_evals_)

    np.testing.assert_allclose(adgen.grad(writes_then_reads)(X), [5.0, 5.0])
    assert other.n_evals_ == 5

    def rescales(x):
        model.w = model.w * 2.0
        return np.sum(model.w * x)

    def counts_in_a_loop(x):
        s = 0.0
        for i in range(2):
            s = s + np.sum(x * model.n_evals_)
            model.n_evals_ = i
        return s

    with pytest.raises(UnsupportedSyntaxError, match="which the function also reads"):
        adgen.grad(rescales)(X)
    with pytest.raises(UnsupportedSyntaxError, match="which the function also reads"):
        adgen.grad(counts_in_a_loop)(X)
    assert model.n_evals_ == 0 and np.array_equal(model.w, [1.0, 2.0])  # nothing ran
