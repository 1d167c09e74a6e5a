"""scikit-learn's pointwise losses (``sklearn._loss``), called by adgen's generated code.

A scikit-learn estimator's objective (``LinearModelLoss.loss``: logistic, Poisson, Gamma,
Tweedie and squared-error regression) computes its per-sample losses with a loss object's
``loss(y_true, raw_prediction, sample_weight)``, compiled code. The same object computes the
loss's derivatives w.r.t. the raw prediction, sample by sample (``gradient``,
``gradient_hessian``), and adgen's rules (:mod:`adgen.rules.losses`) use them: the loss's
derivative is :func:`loss_gradient`, whose derivative is :func:`loss_hessian`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import Refusal


def _contiguous_raw(raw_prediction: Any, out: Any, what: str) -> Any:
    if out is not None:
        raise Refusal(
            f"`{what}=` of a scikit-learn loss (adgen computes a new array)",
            f"leave `{what}` out",
        )
    return np.ascontiguousarray(raw_prediction)


def pointwise_loss(
    loss: Any,
    y_true: Any,
    raw_prediction: Any,
    sample_weight: Any = None,
    loss_out: Any = None,
    n_threads: int = 1,
) -> Any:
    """``loss.loss(y_true, raw_prediction, sample_weight)``: the loss of each sample."""
    raw = _contiguous_raw(raw_prediction, loss_out, "loss_out")
    return loss.loss(
        y_true=y_true, raw_prediction=raw, sample_weight=sample_weight, n_threads=n_threads
    )


def _one_per_sample(raw: Any, order: str) -> None:
    if np.ndim(raw) != 1:
        raise Refusal(
            f"the {order} derivative of a scikit-learn loss of raw predictions of shape "
            f"{np.shape(raw)} (adgen differentiates a loss of one raw prediction per sample)",
            "pass a vector of raw predictions",
        )


def loss_gradient(
    loss: Any,
    y_true: Any,
    raw_prediction: Any,
    sample_weight: Any = None,
    gradient_out: Any = None,
    n_threads: int = 1,
) -> Any:
    """``loss.gradient(...)``: each sample's loss differentiated w.r.t. its raw prediction
    (weighted by ``sample_weight``)."""
    raw = _contiguous_raw(raw_prediction, gradient_out, "gradient_out")
    _one_per_sample(raw, "first")
    return loss.gradient(
        y_true=y_true, raw_prediction=raw, sample_weight=sample_weight, n_threads=n_threads
    )


def loss_hessian(
    loss: Any, y_true: Any, raw_prediction: Any, sample_weight: Any = None, n_threads: int = 1
) -> Any:
    """The second derivative of each sample's loss w.r.t. its raw prediction (the second
    array of ``loss.gradient_hessian(...)``, weighted by ``sample_weight``)."""
    raw = np.ascontiguousarray(raw_prediction)
    _one_per_sample(raw, "second")
    return loss.gradient_hessian(
        y_true=y_true, raw_prediction=raw, sample_weight=sample_weight, n_threads=n_threads
    )[1]
