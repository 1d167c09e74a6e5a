"""A binding the function's own block makes again before reading it is dropped
(adgen.middle.optimize._drop_overwritten): an inlined helper's option left at its default
(``exog=None``) and then set (``exog = self.exog``) holds one value, so the derivative code
is made for its shape."""

from __future__ import annotations

import numpy as np

import adgen


class _Model:
    """A model in statsmodels' style: a method's option defaults to None, then to the data."""

    def __init__(self, exog, endog):
        self.exog, self.endog = exog, endog

    def predict(self, params, exog=None, offset=None):
        if exog is None:
            exog = self.exog
        if offset is None:
            offset = 0.0
        return np.dot(exog, params) + offset

    def loglike(self, params):
        q = 2 * self.endog - 1
        return np.sum(np.log(1 / (1 + np.exp(-q * self.predict(params)))))


def test_an_option_s_default_overwritten_leaves_code_specialised_for_shapes() -> None:
    """The helper's `exog = None` (its default), bound again before any read, is dropped
    (adgen.middle.optimize._drop_overwritten): the name holds one value, so the code is
    made for its shape -- no saved values, no runtime helpers deciding shapes."""
    rng = np.random.default_rng(3)
    exog = rng.standard_normal((40, 3))
    model = _Model(exog, (rng.random(40) < 0.5).astype(float))
    params = np.array([0.3, -0.2, 0.1])
    text = adgen.source(model.loglike, args=(params,))
    assert "stack" not in text and "rt." not in text
    q = 2 * model.endog - 1
    p = 1 / (1 + np.exp(-q * (exog @ params)))
    np.testing.assert_allclose(adgen.grad(model.loglike)(params), exog.T @ (q * (1 - p)))
    hessian = adgen.hessian(model.loglike)(params)
    np.testing.assert_allclose(hessian, -(exog.T * (p * (1 - p))) @ exog, rtol=1e-12)
