"""A model object made outside the differentiated function, as statistics libraries write
them (data in attributes, options read with ``getattr(self, "offset", 0)``): its arrays are
read when transforming and the derivative code is made for their shapes (a Hessian's batched
pass takes the rules' matrix forms), an option it lacks is its default; and the derivative
is made again when the object changes -- an attribute rebound, set, deleted, or an array
reshaped in place -- so it never answers for the old data."""

from __future__ import annotations

import numpy as np
import pytest

import adgen


class PoissonRegression:
    """A Poisson GLM in statsmodels' style: an offset only some models have."""

    def __init__(self, endog, exog):
        self.endog = endog
        self.exog = exog

    def loglike(self, params):
        offset = getattr(self, "offset", 0)
        exposure = getattr(self, "exposure", 0)
        eta = np.dot(self.exog, params) + offset + exposure
        return np.sum(self.endog * eta - np.exp(eta))

    def score(self, params):
        eta = self.exog @ params + getattr(self, "offset", 0) + getattr(self, "exposure", 0)
        return self.exog.T @ (self.endog - np.exp(eta))

    def hessian(self, params):
        eta = self.exog @ params + getattr(self, "offset", 0) + getattr(self, "exposure", 0)
        return -(self.exog.T * np.exp(eta)) @ self.exog


def data(n=40, p=4, seed=0):
    rng = np.random.default_rng(seed)
    exog = np.column_stack([np.ones(n), rng.normal(size=(n, p - 1))])
    endog = rng.poisson(np.exp(exog @ np.linspace(0.2, -0.2, p))).astype(float)
    return endog, exog


def check(model, params):
    np.testing.assert_allclose(adgen.grad(model.loglike)(params), model.score(params), rtol=1e-10)
    np.testing.assert_allclose(
        adgen.hessian(model.loglike)(params), model.hessian(params), rtol=1e-10
    )


def test_the_gradient_and_hessian_of_a_model_made_outside_are_its_authors():
    model = PoissonRegression(*data())
    check(model, np.array([0.1, 0.2, -0.1, 0.05]))


def test_an_option_set_after_the_first_call_is_read():
    model = PoissonRegression(*data())
    params = np.array([0.1, 0.2, -0.1, 0.05])
    grad, hessian = adgen.grad(model.loglike), adgen.hessian(model.loglike)
    grad(params), hessian(params)  # made without an offset
    model.offset = np.linspace(-0.3, 0.3, 40)
    np.testing.assert_allclose(grad(params), model.score(params), rtol=1e-10)
    np.testing.assert_allclose(hessian(params), model.hessian(params), rtol=1e-10)
    del model.offset
    np.testing.assert_allclose(grad(params), model.score(params), rtol=1e-10)


@pytest.mark.parametrize("change", ["rows", "columns", "reshaped in place"])
def test_new_data_of_another_shape_gets_new_code(change):
    endog, exog = data(n=60, p=4)
    model = PoissonRegression(endog[:40].copy(), np.ascontiguousarray(exog[:40]))
    params = np.array([0.1, 0.2, -0.1, 0.05])
    hessian = adgen.hessian(model.loglike)
    np.testing.assert_allclose(hessian(params), model.hessian(params), rtol=1e-10)
    if change == "rows":
        model.exog, model.endog = np.ascontiguousarray(exog[:25]), endog[:25].copy()
    elif change == "columns":
        model.exog, params = np.ascontiguousarray(exog[:40, :2]), params[:2]
    else:  # the same array object, another shape
        model.exog.shape = (20, 8)
        model.endog = endog[:20].copy()
        params = np.linspace(-0.1, 0.1, 8)
    np.testing.assert_allclose(hessian(params), model.hessian(params), rtol=1e-10)
    np.testing.assert_allclose(adgen.grad(model.loglike)(params), model.score(params), rtol=1e-10)


def test_the_hessians_batched_pass_takes_every_tangent_at_once(batched_sources):
    """The model's matrix and its options are known when the code is made, so no rule of
    the Hessian's batched pass runs once per tangent (``np.dot`` with the model's matrix
    took its per-tangent form while the matrix's shape was not known, and everything after
    ``getattr(self, "offset", 0)`` broadcast at run time)."""
    model = PoissonRegression(*data(n=30, p=5, seed=3))
    params = np.linspace(-0.2, 0.2, 5)
    np.testing.assert_allclose(
        adgen.hessian(model.loglike)(params), model.hessian(params), rtol=1e-10
    )
    assert batched_sources, "the Hessian should run batched code"
    assert not any("once per tangent" in source for source in batched_sources)
    assert not any("getattr" in source for source in batched_sources)
