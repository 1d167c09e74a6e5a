"""Branches of helpers that Python's own tests decide, read as Python runs them (issue 34).

Library helpers test what they are given before they compute: a one-line predicate of a
namespace (``is_marray(xp)``), an option compared with a constant in front of a value known
only when the code runs (``nan_policy == 'omit' and contains_nan``), an early return on an
empty sample before the rest of the function, ``isinstance`` of a union of types, a function
chosen by an option (``xp.median if is_numpy(xp) else lambda ...``). adgen decides each when
it transforms, so the branch Python never takes neither makes a parameter "rebound in a block"
nor hides what a name holds on the path that runs. The helpers below are written the way
SciPy's array-API helpers are (none is copied from it); each program is checked against
central differences in both modes. The last tests check that a name some branch did rebind
is never read as its first value.
"""

from __future__ import annotations

from types import NoneType

import numpy as np
import pytest
from derivative_checks import differences

import adgen

RNG = np.random.default_rng(3434)
X = 0.5 + RNG.random(7)


def _is_masked(kind):
    return kind == "masked"  # a predicate: one `return` of a test without effects


def _share(*args, kind="plain"):
    if _is_masked(kind):  # decided: `args` is bound again only on the path not taken
        args = [a * 1.0 for a in args]
    return args[0] if len(args) == 1 else args


def shared_masks(x):
    a, b = _share(np.sin(x), x**2)
    return np.sum(a * b)


def _promote(*arrays, policy="propagate"):
    bad = np.isnan(arrays[0]).any()
    if policy == "omit" and bad:  # the option decides the `and`
        arrays = [np.nan_to_num(a) for a in arrays]
    return arrays


def promoted(x):
    a, b = _promote(np.exp(x), x)
    return np.sum(a / (1.0 + b))


def _present(*values):
    return [v for v in values if v is not None]


def _weighted_mean(x, weights=None):
    if np.all(x == 0.0):  # an early return decided when the code runs
        return np.sum(x)
    parts = _present(x, weights)  # `weights` is still None on this path: one item
    if len(parts) == 1:
        return np.mean(np.broadcast_arrays(*parts)[0])
    x, weights = np.broadcast_arrays(*parts)
    return np.sum(x * weights) / np.sum(weights)


def early_return(x):
    return _weighted_mean(np.tanh(x)) ** 2


def _as_arrays(*args):
    out = []
    for a in args:  # unrolled: the `None` given is appended as it is
        if a is None:
            out.append(a)
        else:
            out.append(np.asarray(a, dtype=float))
    return out


def _scaled(x, scale=None):
    if np.any(x > 100.0):  # decided when the code runs
        return np.sum(x)
    x, scale = _as_arrays(x, scale)
    parts = _present(x, scale)
    return np.sum(np.broadcast_arrays(*parts)[0] ** 2)


def appended_none(x):
    return _scaled(x * 2.0)


def _filled(v, fill):
    if isinstance(fill, int | float | NoneType):  # a union of types, as Python 3.10 writes it
        return np.where(v > 1.0, v, 0.0 if fill is None else fill)
    return np.where(v > 1.0, v, fill)


def union_of_types(x):
    return np.sum(_filled(x * 2.0, 0.5) ** 2) + np.sum(_filled(x, None))


def _spread(x, center=None, robust=False):
    pick = np.median if robust else (lambda v, axis: np.mean(v, axis=axis))
    center = pick if center is None else center  # a function, as itself
    return np.mean(np.abs(x - center(x, axis=0)))


def chosen_function(x):
    return _spread(x**2, robust=True) + _spread(np.exp(x))


def _ordered(v, method="linear"):
    if method in {"lower", "higher"}:  # an option in a set display of constants: decided
        method = "_" + method
    if method == "linear":
        return v * 1.0  # a new array
    return v[::-1]  # a view, on the path not taken


def option_in_a_set(x):
    y = _ordered(np.sin(x))
    y[0] = 0.0  # written in place: on the path taken, the helper made a new array
    return np.sum(y**2) + np.sum(_ordered(x, method="higher") * x)


PROGRAMS = [
    shared_masks,
    promoted,
    early_return,
    appended_none,
    union_of_types,
    chosen_function,
    option_in_a_set,
]


@pytest.mark.parametrize("fn", PROGRAMS)
def test_a_helper_is_read_on_the_path_python_takes(fn):
    value, grad = adgen.value_and_grad(fn)(X)
    assert value == pytest.approx(fn(X), rel=1e-12)
    np.testing.assert_allclose(grad, differences(fn, X), rtol=1e-6, atol=1e-8)
    v = RNG.normal(size=X.shape)
    _, tangent = adgen.jvp(fn, (X,), (v,))
    assert tangent == pytest.approx(float(grad @ v), rel=1e-9)


def test_the_early_return_still_runs_where_the_code_takes_it():
    zeros = np.zeros(4)
    assert adgen.grad(early_return)(zeros) == pytest.approx(np.zeros(4))
    big = np.full(3, 200.0)
    np.testing.assert_allclose(adgen.grad(appended_none)(big / 2.0), np.full(3, 2.0))


# -- a name a branch did rebind keeps every value it may hold ------------------------------------
def _rebound_in_branch(x, w=None):
    if np.sum(x) > 0.0:  # decided when the code runs: `w` may be bound here
        w = x * 2.0
    if np.max(x) > 0.5:  # another branch, reading `w` after the first
        return np.sum(x * 3.0) if w is None else np.sum(w * x)
    return np.sum(x)


def rebound_in_branch(x):
    return _rebound_in_branch(x)


def _rebound_before_return(x, w=None):
    w = None if np.sum(x) > 10.0 else x
    if np.all(x == 0.0):
        return np.sum(x)
    return np.sum(x * x) if w is None else np.sum(w * x * 2.0)


def rebound_before_return(x):
    return _rebound_before_return(x)


@pytest.mark.parametrize("fn", [rebound_in_branch, rebound_before_return])
@pytest.mark.parametrize("shift", [0.0, -1.2, 3.0])
def test_a_name_rebound_in_an_earlier_branch_is_not_read_as_its_first_value(fn, shift):
    x = X + shift
    value, grad = adgen.value_and_grad(fn)(x)
    assert value == pytest.approx(fn(x), rel=1e-12)
    np.testing.assert_allclose(grad, differences(fn, x), rtol=1e-6, atol=1e-8)


# -- NumPy's functions of as many results as arrays given, read as the calls they make --------
GRID = np.linspace(-1.0, 1.0, 5)


def surface_fit(p):
    """A least-squares fit of a surface on a grid (meshgrid), with a broadcast weight."""
    xx, yy = np.meshgrid(GRID, GRID[:4])
    model = p[0] * np.exp(-((xx - p[1]) ** 2) - (yy * p[2]) ** 2)
    weight, data = np.broadcast_arrays(p[3], np.sin(xx + yy))
    return np.sum(weight * (model - data) ** 2)


def sparse_grid(p):
    """A separable potential on a sparse grid (meshgrid(..., sparse=True, indexing="ij"))."""
    u, v = np.meshgrid(GRID * p[0], GRID[:3] + p[1], sparse=True, indexing="ij")
    a, b = np.broadcast_arrays(u, v * p[2])
    return np.sum(np.tanh(a) * b) + np.sum(u**2) * p[3]


@pytest.mark.parametrize("fn", [surface_fit, sparse_grid])
def test_broadcast_arrays_and_meshgrid_in_both_modes_and_at_second_order(fn):
    p = np.array([0.8, 0.3, 1.2, 0.7])
    value, grad = adgen.value_and_grad(fn)(p)
    assert value == pytest.approx(fn(p), rel=1e-12)
    np.testing.assert_allclose(grad, differences(fn, p), rtol=1e-6, atol=1e-8)
    v = RNG.normal(size=4)
    _, tangent = adgen.jvp(fn, (p,), (v,))
    assert tangent == pytest.approx(float(grad @ v), rel=1e-9)
    hessian = adgen.hessian(fn)(p)
    gradient = adgen.grad(fn)
    columns = [(gradient(p + 1e-5 * e) - gradient(p - 1e-5 * e)) / 2e-5 for e in np.eye(4)]
    np.testing.assert_allclose(hessian, np.stack(columns, axis=1), rtol=1e-5, atol=1e-6)
