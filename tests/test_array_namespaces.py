"""Library code that asks for its arrays' namespace (``xp = array_namespace(x)``; issue 34).

SciPy and scikit-learn functions start with ``xp = array_namespace(x)`` or ``xp, _ =
get_namespace(a, b)`` and call ``xp.sum``, ``xp.exp``... While the library's own array API
support is off (its default), the getter returns the library's NumPy namespace whatever the
arrays, so adgen decides the call when transforming: ``xp`` is NumPy, whose functions have
rules, and a module passed on (``helper(x, xp=xp)``) stays a module. Checked against exact
derivatives in both modes and at second order.
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError

scipy_api = pytest.importorskip("scipy._lib._array_api")
sklearn_api = pytest.importorskip("sklearn.utils._array_api")


def helper(v, xp=None):
    return xp.sum(v * v)


def scipy_style(x):
    xp = scipy_api.array_namespace(x)
    return xp.sum(xp.exp(x) * x) + helper(x, xp=xp)


def sklearn_style(a):
    xp, is_array_api = sklearn_api.get_namespace(a)
    scale = 2.0 if is_array_api else 3.0
    return scale * xp.sum(xp.tanh(a)) + helper(a, xp=xp)


def sklearn_with_device(a):
    xp, _, device = sklearn_api.get_namespace_and_device(a)
    b = xp.asarray(a, device=device)
    xp2, _ = sklearn_api.get_namespace(b, xp=xp)
    return xp2.sum(xp2.sin(b))


X = np.array([0.3, -0.7, 1.1])


@pytest.mark.parametrize(
    "f, grad, hess_diag",
    [
        (scipy_style, lambda x: np.exp(x) * (1 + x) + 2 * x, lambda x: np.exp(x) * (2 + x) + 2),
        (
            sklearn_style,
            lambda a: 3.0 * (1 - np.tanh(a) ** 2) + 2 * a,
            lambda a: -6.0 * np.tanh(a) * (1 - np.tanh(a) ** 2) + 2,
        ),
        (sklearn_with_device, np.cos, lambda a: -np.sin(a)),
    ],
    ids=["scipy", "sklearn", "sklearn_device"],
)
def test_a_library_namespace_is_numpy_while_its_array_api_support_is_off(f, grad, hess_diag):
    np.testing.assert_allclose(adgen.grad(f)(X), grad(X), rtol=1e-13)
    _, t = adgen.jvp(f, (X,), (np.ones(3),))
    assert np.isclose(t, np.sum(grad(X)), rtol=1e-13)
    np.testing.assert_allclose(adgen.hessian(f)(X), np.diag(hess_diag(X)), atol=1e-12)


def test_with_array_api_dispatch_on_the_getter_is_not_decided_early():
    sklearn = pytest.importorskip("sklearn")
    pytest.importorskip("sklearn.externals.array_api_compat")
    try:
        with sklearn.config_context(array_api_dispatch=True):
            got = adgen.grad(sklearn_style)(X)
    except AdgenError:
        return  # refused: adgen does not read the dispatching path
    except (ImportError, RuntimeError):  # scikit-learn wants array-api-compat installed and
        pytest.skip("array API dispatch is not available here")  # SciPy's own support on
    np.testing.assert_allclose(got, 2.0 * (1 - np.tanh(X) ** 2) + 2 * X, rtol=1e-13)
