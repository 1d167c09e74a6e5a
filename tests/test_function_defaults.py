"""A parameter of the differentiated function whose default is a function (issue 34, part 5).

``def loss(w, act=np.tanh)`` and ``lambda x, f=f: f(x)`` (the idiom that captures a loop's
function): the parameter means its default, read where it is called. The generated code
checks, when it runs, that the caller passed that default; another function is refused by
name, with the ``functools.partial`` that differentiates it.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import adgen


def loss(w, act=np.tanh, scale=2.0):
    return scale * np.sum(act(w) * w)


def helper_default(w, f=lambda v: v**3):
    return np.sum(f(w))


W = np.array([0.3, -0.5, 1.2])


def test_a_function_default_is_read_where_it_is_called():
    t = np.tanh(W)
    want = 2.0 * (t + W * (1 - t**2))
    np.testing.assert_allclose(adgen.grad(loss)(W), want, rtol=1e-13)
    np.testing.assert_allclose(adgen.grad(loss)(W, np.tanh, 3.0), 1.5 * want, rtol=1e-13)
    assert adgen.jvp(loss, (W,), (np.ones(3),))[1] == pytest.approx(want.sum(), rel=1e-13)
    second = 2.0 * (2 * (1 - t**2) - 2 * W * t * (1 - t**2))
    np.testing.assert_allclose(np.diag(adgen.hessian(loss)(W)), second, rtol=1e-12)
    np.testing.assert_allclose(adgen.grad(helper_default)(W), 3 * W**2, rtol=1e-13)


def test_lambda_capturing_functions_in_a_loop():
    grads = [adgen.grad(lambda x, f=f: np.sum(f(x)))(W) for f in (np.sin, np.exp)]
    np.testing.assert_allclose(grads[0], np.cos(W), rtol=1e-13)
    np.testing.assert_allclose(grads[1], np.exp(W), rtol=1e-13)


def test_another_function_is_refused_with_the_partial_that_works():
    with pytest.raises(adgen.AdgenError, match="another function as `act`") as info:
        adgen.grad(loss)(W, np.sin)
    assert "functools.partial(loss, act=" in info.value.hint
    bound = functools.partial(loss, act=np.sin)
    want = 2.0 * (np.sin(W) + W * np.cos(W))
    np.testing.assert_allclose(adgen.grad(bound)(W), want, rtol=1e-13)
