"""scikit-learn's pointwise losses, differentiated as installed (issue 34; issue 35's
library breadth).

scikit-learn's generalised linear models (``LogisticRegression``, ``PoissonRegressor``,
``GammaRegressor``, ``TweedieRegressor``, ``Ridge``-like squared error) compute their objective
with ``LinearModelLoss.loss``, whose per-sample losses come from a loss object's compiled
``loss(y_true, raw_prediction, sample_weight)``. adgen refused the call (compiled code, run
as written, "may change the attributes" of the loss). It now lowers it to
``rt.pointwise_loss(loss, ...)``, whose derivative is the loss object's own ``gradient``
and, at second order, ``gradient_hessian``. Each objective below is checked against the
gradient and Hessian scikit-learn's authors wrote (``LinearModelLoss.loss_gradient``,
``gradient_hessian``), in both modes.
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError

loss_module = pytest.importorskip("sklearn._loss.loss")
linear_loss = pytest.importorskip("sklearn.linear_model._linear_loss")

RNG = np.random.default_rng(5)
N = 40
X = RNG.normal(size=(N, 3))
WEIGHTS = RNG.uniform(0.5, 2.0, N)

LOSSES = [
    (loss_module.HalfBinomialLoss(), (RNG.random(N) < 0.4).astype(float)),
    (loss_module.HalfPoissonLoss(), RNG.poisson(1.5, N).astype(float)),
    (loss_module.HalfGammaLoss(), RNG.gamma(2.0, size=N)),
    (loss_module.HalfTweedieLoss(power=1.5), RNG.gamma(2.0, size=N)),
    (loss_module.HalfSquaredError(), RNG.normal(size=N)),
]


@pytest.mark.parametrize("base, y", LOSSES, ids=[type(b).__name__ for b, _ in LOSSES])
@pytest.mark.parametrize("intercept", [True, False])
def test_linear_model_objective_against_scikit_learns_own_derivatives(base, y, intercept):
    model = linear_loss.LinearModelLoss(base, fit_intercept=intercept)
    w = np.linspace(-0.3, 0.4, 3 + intercept)

    def objective(w):
        return model.loss(w, X, y, sample_weight=WEIGHTS, l2_reg_strength=0.7)

    value, gradient = model.loss_gradient(w, X, y, sample_weight=WEIGHTS, l2_reg_strength=0.7)
    _, hessian, _ = model.gradient_hessian(w, X, y, sample_weight=WEIGHTS, l2_reg_strength=0.7)
    ours, g = adgen.value_and_grad(objective)(w)
    assert ours == pytest.approx(value, rel=1e-14)
    np.testing.assert_allclose(g, gradient, rtol=1e-12, atol=1e-15)
    e = np.cos(np.arange(w.size))
    _, t = adgen.jvp(objective, (w,), (e,))
    assert t == pytest.approx(gradient @ e, rel=1e-12, abs=1e-15)
    np.testing.assert_allclose(adgen.hessian(objective)(w), hessian, rtol=1e-12, atol=1e-14)


def poisson_deviance(w):
    # a user's objective: the loss object made inside, its per-sample losses and gradient
    loss = loss_module.HalfPoissonLoss()
    raw = X @ w
    per_sample = loss.loss(y_true=LOSSES[1][1], raw_prediction=raw)
    return np.mean(per_sample) + 0.1 * np.sum(loss.gradient(LOSSES[1][1], raw) ** 2)


def poisson_deviance_ref(w):
    y = LOSSES[1][1]
    raw = X @ w
    return np.mean(np.exp(raw) - y * raw) + 0.1 * np.sum((np.exp(raw) - y) ** 2)


def test_a_loss_made_inside_and_its_gradient_differentiated():
    w = np.array([0.2, -0.1, 0.3])
    # (scikit-learn's half Poisson loss adds a constant of y: equal up to it)
    assert poisson_deviance(w) - poisson_deviance_ref(w) == pytest.approx(
        poisson_deviance(2 * w) - poisson_deviance_ref(2 * w), rel=1e-12
    )
    np.testing.assert_allclose(
        adgen.grad(poisson_deviance)(w), adgen.grad(poisson_deviance_ref)(w), rtol=1e-12
    )
    e = np.array([1.0, -0.5, 0.25])
    _, t = adgen.jvp(poisson_deviance, (w,), (e,))
    assert t == pytest.approx(adgen.grad(poisson_deviance_ref)(w) @ e, rel=1e-12)


def test_what_the_loss_object_cannot_give_is_refused_by_name():
    multinomial = loss_module.HalfMultinomialLoss(n_classes=3)
    y = np.array([0.0, 1.0, 2.0, 1.0])

    def multiclass(raw):
        return np.sum(multinomial.loss(y, raw))

    raw = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    assert multiclass(raw) == pytest.approx(float(np.sum(multinomial.loss(y, raw))))
    with pytest.raises(AdgenError, match="one raw prediction per sample"):
        adgen.grad(multiclass)(raw)

    binomial = loss_module.HalfBinomialLoss()
    yb = np.array([0.0, 1.0, 1.0])

    def logistic(raw):
        return np.sum(binomial.loss(yb, raw))

    r = np.array([0.3, -0.2, 1.1])
    third = adgen.grad(adgen.grad(lambda r: adgen.grad(logistic)(r)[0]))
    with pytest.raises(AdgenError, match="third derivative of a scikit-learn loss"):
        third(r)

    def into_buffer(raw):
        out = np.empty(3)
        return np.sum(binomial.loss(yb, raw, None, out))

    with pytest.raises(AdgenError, match="loss_out"):
        adgen.grad(into_buffer)(r)


@pytest.mark.skipif(
    tuple(int(p) for p in __import__("sklearn").__version__.split(".")[:2]) < (1, 8),
    reason="scikit-learn 1.7's log_loss fits a LabelBinarizer made inside, refused by adgen",
)
def test_log_loss_of_scikit_learns_metrics_as_installed():
    # its label encoder runs as written; a library's function reaches no global array of the
    # program (only what it is given), so the features it never sees are not "changed"
    metrics = pytest.importorskip("sklearn.metrics")
    labels = (np.arange(N) % 3 == 0).astype(int)

    def loss(w):
        return metrics.log_loss(labels, 1.0 / (1.0 + np.exp(-(X @ w))))

    w = np.array([0.3, -0.5, 0.2])
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    np.testing.assert_allclose(adgen.grad(loss)(w), X.T @ (p - labels) / N, rtol=1e-10)
