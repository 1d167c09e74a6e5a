"""Second and third derivatives of the programs first-order tests cover: loops with
``break``, ``while`` loops, recursion, in-place writes, checkpointed loops, lists built by
``append``, a custom rule -- by every operator (``hessian``, ``hvp``, ``laplacian``,
``jacfwd(jacrev(f))``, ``jacrev(jacrev(f))``, ``jacfwd(hvp)``), and the operators called
inside a differentiated function. Each is checked against central differences of adgen's
gradient (itself checked against differences of ``f`` elsewhere) and against each other.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import adgen


def softclip(x):
    return np.tanh(x) * 2.0


def softclip_jvp(x, dx):
    return 2.0 * (1.0 - np.tanh(x) ** 2) * dx


def softclip_vjp(g, x):
    return g * 2.0 * (1.0 - np.tanh(x) ** 2)


@pytest.fixture(autouse=True)
def _softclip_rule() -> Any:
    """softclip's own rule, for these tests only (the registry is left as it was)."""
    with adgen.rules.registrations():
        adgen.defrule(softclip, jvp=softclip_jvp, vjp=softclip_vjp)
        yield


def custom_rule(x):
    return np.sum(softclip(x) * x)


def power(x, n):
    if n == 0:
        return np.ones_like(x)
    return x * power(x, n - 1)


def recursion(x):
    return np.sum(np.sin(x) * power(x, 3))


def loop_with_break(x):
    s = 0.0
    for i in range(10):
        s = s + np.sum(np.tanh(x * (i + 1)))
        if i > 3:
            break
    return s * np.sum(x**2)


def while_loop(x):
    y = x
    k = 0
    while k < 4:
        y = np.sin(y) + 0.5 * x
        k += 1
    return np.sum(y * y)


def in_place_writes(x):
    y = np.zeros(x.shape[0] + 1)
    for i in range(x.shape[0]):
        y[i + 1] = y[i] * 0.5 + np.cos(x[i]) * x[i]
    return np.sum(y**2)


def checkpointed(x):
    h = x
    for t in adgen.checkpoint(range(12)):
        h = np.tanh(h * 0.9 + 0.1 * x)
    return np.sum(h * x)


def appended_list(x):
    hs = [x]
    for t in range(4):
        hs.append(np.exp(-(hs[-1] ** 2)) + x)
    return np.sum(hs[-1] * hs[2])


def softmax_loss(x):
    z = x - np.max(x)
    return np.log(np.sum(np.exp(z))) - z[0] + 0.1 * np.linalg.norm(x) ** 2


PROGRAMS = [
    custom_rule,
    recursion,
    loop_with_break,
    while_loop,
    in_place_writes,
    checkpointed,
    appended_list,
    softmax_loss,
]
X = np.array([0.3, -0.5, 0.8])
V = np.array([1.0, 0.2, -0.4])


def _fd_jacobian(g: Any, x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    cols = [(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
    return np.stack(cols, axis=-1)


def _close(a: Any, b: Any, tol: float = 1e-6) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_every_second_order_operator_agrees_with_differences_of_the_gradient(f: Any) -> None:
    reference = _fd_jacobian(adgen.grad(f), X)
    hessian = adgen.hessian(f)(X)
    _close(hessian, reference)
    _close(adgen.hvp(f)(X, V), hessian @ V, 1e-9)
    _close(adgen.laplacian(f)(X), np.trace(hessian), 1e-9)
    _close(adgen.jacfwd(adgen.jacrev(f))(X), hessian, 1e-9)
    _close(adgen.jacfwd(adgen.grad(f))(X), hessian, 1e-9)
    if f is recursion:  # reverse over reverse through a kept recursive call: refused by name
        with pytest.raises(adgen.UnsupportedSyntaxError, match="recursive call"):
            adgen.jacrev(adgen.jacrev(f))(X)
    else:
        _close(adgen.jacrev(adgen.jacrev(f))(X), hessian, 1e-9)
        _close(adgen.jacrev(adgen.grad(f))(X), hessian, 1e-9)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_third_order_through_the_operators(f: Any) -> None:
    """d/dx of H(x) v along V: forward mode over the function standing for hvp, and the
    Jacobian of hvp and the gradient of the Laplacian, against differences of hvp."""
    product = adgen.hvp(f)
    reference = _fd_jacobian(lambda y: product(y, V), X)
    _, third = adgen.jvp(product, (X, V), (V, None))
    _close(third, reference @ V, 1e-5)
    _close(adgen.jacfwd(product)(X, V), reference, 1e-5)
    lap = adgen.laplacian(f)
    _close(adgen.grad(lap)(X), _fd_jacobian(lambda y: np.atleast_1d(lap(y)), X)[0], 1e-5)


def model_energy(x):
    return np.sum(np.cos(x) * x**2) + np.prod(x + 2.0)


def newton_decrement(x):
    """An objective that calls adgen's operators inside: the Newton decrement g' H^-1 g."""
    g = adgen.grad(model_energy)(x)
    h = adgen.hessian(model_energy)(x)
    return g @ np.linalg.solve(h + 5.0 * np.eye(3), g)


def curvature_along(x, v):
    return adgen.hvp(model_energy)(x, v) @ v + adgen.laplacian(model_energy)(x)


def test_operators_called_inside_a_differentiated_function() -> None:
    g = adgen.grad(newton_decrement)(X)
    _close(g, _fd_jacobian(lambda y: np.atleast_1d(newton_decrement(y)), X)[0], 1e-5)
    gv = adgen.grad(curvature_along)(X, V)
    _close(gv, _fd_jacobian(lambda y: np.atleast_1d(curvature_along(y, V)), X)[0], 1e-5)
    _, t = adgen.jvp(curvature_along, (X, V), (V, None))
    _close(t, gv @ V, 1e-9)


def test_a_jacobian_of_several_arguments_is_refused_when_differentiated_again() -> None:
    def two(x, y):
        return np.sin(x) * y

    jac = adgen.jacfwd(two, wrt=(0, 1))
    assert len(jac(X, V)) == 2  # the Jacobians themselves are computed
    with pytest.raises(adgen.NonDifferentiableError, match="several arguments"):
        adgen.jacfwd(jac)(X, V)


def pair(x, n):
    if n == 0:
        return x, x * x
    a, b = pair(x, n - 1)
    return np.sin(a) + b, a * b


def through_pairs(x):
    a, b = pair(x, 3)
    return np.sum(a * 2.0 + b)


def test_a_recursive_function_returning_a_tuple_runs_forward_and_is_refused_in_reverse() -> None:
    """Reverse mode gives a kept recursive call one cotangent; a tuple result needs one per
    item: refused at its line (it crashed in the generated code), forward mode is exact."""
    direction = np.array([1.0, -0.5])
    _, tangent = adgen.jvp(through_pairs, (V[:2],), (direction,))
    expected = _fd_jacobian(lambda y: np.atleast_1d(through_pairs(y)), V[:2])[0] @ direction
    _close(tangent, expected, 1e-6)
    with pytest.raises(adgen.UnsupportedSyntaxError, match="returning a tuple") as info:
        adgen.grad(through_pairs)(V[:2])
    assert "test_higher_order_everywhere.py" in str(info.value)
