"""An option checked by a helper, returned and tested again (issue 34, part 2).

Library code passes an option (``multioutput="uniform_average"``) through a checking helper
that may rebind it on another path (``option = np.asarray(option)``), returns it, and tests
it again (``isinstance(option, str)``). Where every binding the option took so far copied
the same constant, adgen knows it when transforming -- through the helper's variables, the
tuple it returned and the caller's own rebinding -- and reads only the branch taken. (An
option the differentiated function itself is given is a value of the call, known only
when it runs; an option rebound to an array is no constant: both stay refused.)
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen


def check(y, option):
    if isinstance(option, str):
        if option not in ("mean", "sum"):
            raise ValueError(f"unknown option {option!r}")
    else:
        option = np.asarray(option, dtype=float)
    return y * 1.0, option


def loss(y, option="mean"):
    y, option = check(y, option)
    if isinstance(option, str):
        if option == "mean":
            return np.mean(y**2)
        return np.sum(y**2)
    return np.sum(option * y**2)


def nested(y):
    return loss(y) + loss(y, "sum")


Y = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize(
    "f, grad",
    [
        (lambda y: loss(y), 2.0 * Y / 3.0),
        (nested, 2.0 * Y / 3.0 + 2.0 * Y),
    ],
    ids=["default", "nested"],
)
def test_an_option_a_helper_checked_and_returned_is_known_when_transforming(f, grad):
    np.testing.assert_allclose(adgen.grad(f)(Y), grad, rtol=1e-13)
    v = np.array([0.3, 0.2, -0.1])
    assert np.isclose(adgen.jvp(f, (Y,), (v,))[1], grad @ v, rtol=1e-13)


def promote(*arrays, broadcast=False):
    if not arrays:
        return arrays
    if not broadcast:
        return arrays[0] * 1.0, arrays[1] * 1.0
    shape = np.broadcast_shapes(arrays[0].shape, arrays[1].shape)
    return np.broadcast_to(arrays[0], shape), np.broadcast_to(arrays[1], shape)


def uses_promote(y):
    a, b = promote(y, y * 2.0)
    return np.sum(a * b)


def uses_promote_broadcast(y):
    a, b = promote(y[:, None], y[None, :], broadcast=True)
    return np.sum(a * b)


@pytest.mark.parametrize(
    "f, grad",
    [
        (uses_promote, 4.0 * Y),
        (uses_promote_broadcast, 2.0 * np.sum(Y) * np.ones(3)),
    ],
    ids=["plain", "broadcast"],
)
def test_early_returns_on_options_keep_only_the_path_python_takes(f, grad):
    """``if not arrays: return arrays`` and ``if not broadcast: return ...`` on parameters
    known when inlining: only the side Python runs is read, so the helper's tuple results
    need no shared result name."""
    np.testing.assert_allclose(adgen.grad(f)(Y), grad, rtol=1e-13)
    v = np.array([0.3, 0.2, -0.1])
    assert np.isclose(adgen.jvp(f, (Y,), (v,))[1], grad @ v, rtol=1e-13)
