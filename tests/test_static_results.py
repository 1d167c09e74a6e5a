"""Functions and objects a helper returns, then called (issue 34, part 4).

``k = kernel.clone(theta); k(X)``, ``make(s)(x)``, ``g = pick("tanh"); g(x)``: the helper's
result is the function or the instance it returns, read where it is called. Each checked
against its exact derivative in both modes; a function chosen by the data inside the helper
(``return np.sin if x[0] > 0 else np.cos``) stays refused.
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError

X = np.arange(3.0)


class Kernel:
    def __init__(self, scale):
        self.scale = scale

    def clone(self, scale):
        return Kernel(scale)

    def __call__(self, x):
        return np.exp(-x * self.scale)


KERNEL = Kernel(1.0)


def make(s):
    return Kernel(s)


def make_twice_removed(s):
    return make(s * 2.0)


def pick(name):
    return np.tanh if name == "tanh" else np.sin


def penalty_for(kind):
    if kind == "l2":
        return np.square
    return np.abs


def penalised(s):
    pen = penalty_for("l2")
    return np.sum(pen(X * s))


def cloned(s):
    k = KERNEL.clone(s)
    return np.sum(k(X))


def called_at_once(s):
    return np.sum(make(s)(X))


def through_two_helpers(s):
    k = make_twice_removed(s)
    return np.sum(k(X))


def picked(s):
    g = pick("tanh")
    return np.sum(g(X * s))


@pytest.mark.parametrize(
    "f, grad",
    [
        (cloned, lambda s: np.sum(-X * np.exp(-X * s))),
        (called_at_once, lambda s: np.sum(-X * np.exp(-X * s))),
        (through_two_helpers, lambda s: np.sum(-2.0 * X * np.exp(-2.0 * X * s))),
        (picked, lambda s: np.sum(X * (1 - np.tanh(X * s) ** 2))),
        (penalised, lambda s: np.sum(2 * X * X * s)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_a_function_or_object_a_helper_returns_is_read_where_called(f, grad):
    assert adgen.grad(f)(0.5) == pytest.approx(grad(0.5), rel=1e-13)
    assert adgen.jvp(f, (0.5,), (1.0,))[1] == pytest.approx(grad(0.5), rel=1e-13)
    eps = 1e-5
    second = (grad(0.5 + eps) - grad(0.5 - eps)) / (2 * eps)
    assert adgen.hessian(f)(0.5) == pytest.approx(second, rel=1e-6)


def chooses_by_the_data(x):
    if x[0] > 0:
        return np.sin
    return np.cos


def by_the_data(x):
    g = chooses_by_the_data(x)
    return np.sum(g(x))


def test_a_function_the_helper_chooses_by_the_data_is_refused():
    with pytest.raises(AdgenError, match="as a value|computed value"):
        adgen.grad(by_the_data)(np.array([0.5, 1.0]))
