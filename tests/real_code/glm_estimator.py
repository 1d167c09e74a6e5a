"""A small GLM estimator class in a library's style: a link chosen by an option (a function
picked in a branch), bookkeeping on the estimator (`self.n_evals_ += 1`), an activation given
as a default argument, validation that raises with %-formatting, and a penalty helper
returning a function."""

import numpy as np


def logistic(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def penalty_for(kind):
    if kind == "l2":
        return np.square
    return np.abs


class GLM:
    def __init__(self, X, y, link="logit", alpha=0.1):
        if link not in ("logit", "probit-ish"):
            raise ValueError("unknown link %r" % link)
        self.X, self.y, self.link, self.alpha = X, y, link, alpha
        self.n_evals_ = 0

    def mean(self, w, squash=logistic):
        if self.link == "logit":
            inverse = squash
        else:
            inverse = np.tanh
        return inverse(self.X @ w)

    def loss(self, w):
        self.n_evals_ += 1
        p = np.clip(self.mean(w), 1e-9, 1.0 - 1e-9)
        nll = -np.mean(self.y * np.log(p) + (1.0 - self.y) * np.log(1.0 - p))
        pen = penalty_for("l2")
        return nll + self.alpha * np.sum(pen(w))


rs = np.random.RandomState(5)
DESIGN = rs.randn(30, 3)
LABELS = (rs.rand(30) < logistic(DESIGN @ np.array([1.0, -0.5, 0.25]))).astype(float)
MODEL = GLM(DESIGN, LABELS)
ARGS = (np.array([0.1, 0.2, -0.1]),)
F = MODEL.loss
