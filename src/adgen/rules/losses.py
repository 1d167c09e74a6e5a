"""scikit-learn's pointwise losses (``sklearn._loss``), registered only when scikit-learn is
installed.

A scikit-learn estimator's objective (``LinearModelLoss.loss`` of ``LogisticRegression``,
``PoissonRegressor``, ``GammaRegressor``, ``TweedieRegressor``...) computes its per-sample
losses by a loss object's ``loss(y_true, raw_prediction, sample_weight)``, compiled code adgen
cannot read. adgen lowers that call (and ``gradient``) on a loss object made outside the
function to ``rt.pointwise_loss(loss, ...)`` (``rt.loss_gradient``: see
:func:`adgen.rules.registry.method_helper`), the object a constant of the derivative. Its
derivative w.r.t. the raw prediction is the one the object computes itself, sample by sample:

    d loss_i = gradient_i d raw_i        d gradient_i = hessian_i d raw_i

(``loss.gradient``, ``loss.gradient_hessian``; both weighted by ``sample_weight`` as the
loss is). So ``grad``, ``jvp`` and ``hessian`` of such an objective use scikit-learn's own
per-sample derivatives. A third derivative, and any derivative of a loss of several raw
predictions per sample (``HalfMultinomialLoss``), are refused by name; ``y_true`` and
``sample_weight`` are data (refused where a differentiated value reaches them).
"""

from __future__ import annotations

from adgen.rules import runtime as rt
from adgen.rules.registry import METHOD_HELPERS, refused_derivative, rule
from adgen.rules.samples import Arg, Domain, example

try:
    from sklearn._loss import loss as _losses
except ImportError:  # pragma: no cover - scikit-learn is optional
    _losses = None

_RAW = Arg((4,), Domain(-1.5, 1.5))
_BINOMIAL = "sklearn._loss.loss.HalfBinomialLoss(), np.array([0.0, 1.0, 1.0, 0.0])"
_POISSON = "sklearn._loss.loss.HalfPoissonLoss(), np.array([0.0, 2.0, 1.0, 3.0])"
_WEIGHTS = "np.array([1.0, 0.5, 2.0, 1.5])"

if _losses is not None:

    @rule(
        rt.pointwise_loss,
        examples=[
            example(f"rt.pointwise_loss({_BINOMIAL}, r)", r=_RAW),
            example(f"rt.pointwise_loss({_POISSON}, r, {_WEIGHTS})", r=_RAW),
            example(
                "rt.pointwise_loss(sklearn._loss.loss.HalfTweedieLoss(power=1.5), "
                "np.array([0.5, 2.0, 1.0, 3.0]), r)",
                r=_RAW,
            ),
        ],
    )
    def pointwise_loss(loss, y_true, raw_prediction, sample_weight=None, loss_out=None,
                       n_threads=1):  # fmt: skip
        def jvp_raw_prediction(d):
            return rt.loss_gradient(loss, y_true, raw_prediction, sample_weight) * d

        def vjp_raw_prediction(g):
            return g * rt.loss_gradient(loss, y_true, raw_prediction, sample_weight)

    @rule(
        rt.loss_gradient,
        examples=[
            example(f"rt.loss_gradient({_BINOMIAL}, r)", r=_RAW, twice=False),
            example(f"rt.loss_gradient({_POISSON}, r, {_WEIGHTS})", r=_RAW, twice=False),
        ],
    )
    def loss_gradient(loss, y_true, raw_prediction, sample_weight=None, gradient_out=None,
                      n_threads=1):  # fmt: skip
        def jvp_raw_prediction(d):
            return rt.loss_hessian(loss, y_true, raw_prediction, sample_weight) * d

        def vjp_raw_prediction(g):
            return g * rt.loss_hessian(loss, y_true, raw_prediction, sample_weight)

    refused_derivative(
        rt.loss_hessian,
        reason="a third derivative of a scikit-learn loss (the loss object computes two)",
    )

    METHOD_HELPERS[_losses.BaseLoss.loss] = rt.pointwise_loss
    METHOD_HELPERS[_losses.BaseLoss.gradient] = rt.loss_gradient
