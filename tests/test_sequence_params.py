"""A sequence rule (``np.stack``, ``np.select``...) with another differentiable parameter.

``np.select(condlist, choicelist, default)`` takes its sequence of choices and a ``default``
that is differentiated too. Forward mode used to return the tangent of the choices alone
and reverse mode the cotangents of the choices alone (silently dropping ``default``'s
share); both now add the other parameters' contributions, also when the choices are a list
the function built and when the statement rebinds one of its own arguments in a loop.
"""

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def default_varied(a, d):
    return np.sum(np.select([a > 0.3, a < -0.3], [a * a, np.sin(a)], d) ** 2)


def only_default_varied(a, d):
    c = np.array([0.5, -0.1, 0.2, 0.9])
    return np.sum(np.select([c > 0.3], [c], np.exp(d)) * a)


def choices_from_a_list(a, d):
    xs = []
    for k in range(2):
        xs.append(a * (k + 1.0))
    return np.sum(np.select([a > 0.5, a < -0.5], xs, d * a) ** 2)


def rebinds_itself_in_a_loop(a, d):
    s = a
    for i in range(3):
        s = np.select([s > 0.2], [np.sin(s) + d], s * d)
    return np.sum(s * s)


A = np.array([0.1, -0.6, 0.7, -0.2])
D = np.array([0.4, 1.3, -0.8, 0.6])
CASES = [
    (default_varied, (A, D)),
    (default_varied, (A, 0.7)),
    (only_default_varied, (A, D)),
    (choices_from_a_list, (A, D)),
    (rebinds_itself_in_a_loop, (A, D)),
]


@pytest.mark.parametrize(
    "fn, args", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)]
)
def test_sequence_rule_with_another_differentiable_parameter(fn, args):
    check_grads(fn, *args)  # forward vs finite differences, reverse vs forward


def test_default_share_exact():
    # where no condition holds (entries 0 and 3 of A) the result is d: d/dd sum(r^2) = 2 d
    a, d = A, D
    grads = adgen.grad(default_varied, wrt=(0, 1))(a, d)
    np.testing.assert_allclose(grads[1], [2 * d[0], 0.0, 0.0, 2 * d[3]], rtol=1e-12)
    _, tangent = adgen.jvp(default_varied, (a, d), (np.zeros(4), np.ones(4)))
    assert tangent == pytest.approx(2 * d[0] + 2 * d[3], rel=1e-12)


def test_second_order_through_default():
    # d/dd of sum(select(...)^2) is 2 d where no condition holds: the Hessian in d is diagonal
    h = adgen.hessian(lambda d: default_varied(A, d))(D)
    np.testing.assert_allclose(h, np.diag([2.0, 0.0, 0.0, 2.0]), atol=1e-12)
