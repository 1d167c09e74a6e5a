"""A tuple, list or dict adgen knows item by item keeps the values its items had when it was
made, as in Python, even where a loop or a branch binds one of those names again.

These were silently wrong before (the item read the name's later value): a tuple or a dict
display holding a name a loop rebinds afterwards, a dict written key by key in a loop
unrolled over its keys, and a list grown by appends in a loop unrolled over a tuple
(SciPy's ``xp_promote`` returns ``tuple(out)`` of such a list). Each program is checked
for its value and against central differences."""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import differences

import adgen


def tuple_then_loop(x):
    v = x * 2
    t = (v, x)
    for _ in range(2):
        v = v * 3
    return np.sum(t[0] * 10 + v)


def list_then_branch(x):
    v = x * 2
    t = [v, x]
    if np.sum(x) > 0:
        v = v * 3
    return np.sum(t[0] * 10 + v)


def dict_display_then_loop(x):
    v = x * 2
    d = {"a": v}
    for _ in range(2):
        v = v * 3
    return np.sum(d["a"] * 10 + v)


def dict_written_in_an_unrolled_loop(x):
    d = {}
    for k in ("a", "b"):
        v = x * (2.0 if k == "a" else 3.0)
        d[k] = v
    return np.sum(d["a"] * 10 + d["b"])


def dict_updated_then_loop(x):
    v = x * 2
    d = {}
    d.update(a=v)
    for _ in range(2):
        v = v * 3
    return np.sum(d["a"] * 10 + v)


def _promoted(*args):
    out = []
    for arg in args:
        arg = arg * 2.0
        out.append(arg)
    return tuple(out)


def appended_in_an_unrolled_loop(x):
    y, w = _promoted(x, 3 * x)
    return np.sum(y**2 + w)


def _promoted_or_none(*args):
    out = []
    for arg in args:
        if arg is None:
            out.append(arg)
            continue
        if arg.shape != (3,):
            arg = np.broadcast_to(arg, (3,))
        out.append(arg)
    return out[0] if len(out) == 1 else tuple(out)


def appended_with_none_in_an_unrolled_loop(x):
    y, w = _promoted_or_none(x, None)
    return np.sum(y**2)


def appended_after_an_early_return(x):
    if np.sum(x) > 100.0:  # (the rest of the function is then this branch's `else`)
        return np.sum(x)
    out = []
    for a in (x, 2 * x):
        a = a * 0.5
        out.append(a)
    return np.sum(tuple(out)[0] * 10 + tuple(out)[1])


def fixed_list_item_then_loop(*args):
    args = list(args)
    v = args[0] * 2.0
    args[1] = v
    for _ in range(2):
        v = v + 1.0
    return np.sum(args[1] * 10 + v)


def fixed_list_caller(x):
    return fixed_list_item_then_loop(x, x)


PROGRAMS = [
    tuple_then_loop,
    list_then_branch,
    dict_display_then_loop,
    dict_written_in_an_unrolled_loop,
    dict_updated_then_loop,
    appended_in_an_unrolled_loop,
    appended_with_none_in_an_unrolled_loop,
    appended_after_an_early_return,
    fixed_list_caller,
]


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_an_item_keeps_the_value_it_was_given(fn):
    x = np.array([0.5, -1.0, 2.0])
    value, grad = adgen.value_and_grad(fn)(x)
    assert value == pytest.approx(fn(x), rel=1e-13)
    np.testing.assert_allclose(grad, differences(fn, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_forward_mode_agrees(fn):
    x = np.array([0.5, -1.0, 2.0])
    t = np.array([1.0, 0.3, -0.2])
    value, tangent = adgen.jvp(fn, (x,), (t,))
    assert value == pytest.approx(fn(x), rel=1e-13)
    assert tangent == pytest.approx(float(differences(fn, x) @ t), rel=1e-6)


def _options(x, scale, dtype):
    opts = {"scale": scale, "dtype": dtype}  # (the caller's names: not bound again meanwhile)
    return _scaled(x, **opts)


def _scaled(x, scale=None, dtype=None):
    if isinstance(dtype, (list, tuple)):  # decided when transforming: dtype is None here
        dtype = dtype[0]
    return np.asarray(x, dtype=dtype) * scale


def options_through_a_dict(x, big):
    dtype = None
    if big:
        dtype = np.float64
    return np.sum(_options(x, 2.0, dtype))


def test_an_item_no_block_binds_again_keeps_what_adgen_knows_of_it():
    # a helper's dict of its caller's values holds those values themselves (the caller does
    # not run while the helper does): a library's type test of an option is still decided
    # (scikit-learn's validate_data -> check_array of `GaussianProcessRegressor.predict`)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(adgen.grad(options_through_a_dict)(x, False), 2.0 * np.ones(3))
