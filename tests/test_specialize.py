"""Derivatives specialised for the shapes and dtypes of a call's arguments.

adgen keys its cache on the arguments' shapes and dtypes (like a jit cache) and writes
code where broadcasting is decided before the code runs: ``rt.unbroadcast`` becomes an
``np.sum`` over known axes or nothing, products of known rank become plain NumPy. The
specialised code must compute exactly what the general code computes, for every shape.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import adgen
from adgen.api import _scalars
from adgen.backend import cache
from adgen.middle.shapes import describe, infer
from adgen.pipeline import MAX_SPECIALISED, derivative, lowered


def broadcasting(x, y, w):
    z = x * y + np.sin(x)
    return np.sum(z * z) + np.sum(w @ x.T)


def elementwise(x, y):
    z = x * y - np.exp(y) / (1.0 + x * x)
    return np.sum(z * np.tanh(z)) + np.sum(np.cos(y))


def matrices(a, b, v):
    return np.sum(np.tanh(a @ b) @ v) + np.dot(v, v) * np.sum(np.dot(a @ v, np.ones(3)))


def sized(x, n):
    z = np.zeros(n)
    return np.sum(x[:n] * (z + 1.0))


def masked(x):
    return np.sum(x[x > 0.0] ** 2)


def growing(x, steps):
    acc = x
    for _ in range(steps):
        acc = np.concatenate((acc, x))
    return np.sum(acc * acc)


def looped(x, w, steps):
    h = x
    for _ in range(steps):
        h = np.tanh(w @ h + x)
    return np.sum(h)


def reductions(x):
    m = np.max(x, axis=1, keepdims=True)
    s = np.sum(np.exp(x - m), axis=1)
    return np.sum(np.log(s)) + np.mean(x, axis=0) @ np.ones(x.shape[1])


def _both(f, args, wrt):
    """The specialised and the general reverse-mode derivative's results at ``args``."""
    params = list(f.__code__.co_varnames[: f.__code__.co_argcount])
    names = tuple(params[i] for i in wrt)
    scalars = _scalars(params, args)
    signature = tuple((p, describe(a)) for p, a in zip(params, args) if describe(a) is not None)
    special = derivative(f, "reverse", names, scalars, signature=signature)
    general = derivative(f, "reverse", names, scalars)
    assert special.generated.source != general.generated.source or "for shapes" not in (
        special.generated.source
    )
    return special, general, special.compiled(*args, 1.0), general.compiled(*args, 1.0)


def _close(a, b):
    if isinstance(a, tuple):
        return all(_close(p, q) for p, q in zip(a, b, strict=True))
    return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-12, atol=1e-12)


SHAPES = [
    ((3, 4), (3, 4), (4, 4)),
    ((3, 4), (4,), (4, 4)),
    ((3, 1), (1, 4), (1, 1)),
    ((1, 4), (3, 4), (4, 4)),
    ((2, 4), (2, 1), (2, 4)),
]


@pytest.mark.parametrize(("xs", "ys", "ws"), SHAPES)
def test_specialised_broadcasting_matches_general_code(xs, ys, ws):
    rng = np.random.default_rng(0)
    args = (rng.normal(size=xs), rng.normal(size=ys), rng.normal(size=ws))
    special, _, got, want = _both(broadcasting, args, (0, 1, 2))
    assert _close(got, want)
    assert "rt.unbroadcast" not in special.generated.source
    assert "rt.Like" not in special.generated.source


def test_equal_shapes_need_no_broadcasting_code():
    args = (np.ones((3, 4)), np.ones((3, 4)), np.ones((4, 4)))
    special, general, _, _ = _both(broadcasting, args, (0, 1))
    assert "rt.unbroadcast" in general.generated.source
    assert "np.sum(" in special.generated.source
    assert "for shapes x (3, 4), y (3, 4), w (4, 4)" in special.generated.source.splitlines()[0]
    # x * y: both operands have the result's shape, so their cotangents are not summed
    assert "y_bar = z_bar * x" in special.generated.source


@pytest.mark.parametrize(("a", "b", "v"), [((3, 3), (3, 3), (3,)), ((2, 3, 3), (2, 3, 3), (3,))])
def test_products_of_known_rank_are_plain_numpy(a, b, v):
    rng = np.random.default_rng(1)
    args = (rng.normal(size=a), rng.normal(size=b), rng.normal(size=v))
    special, _, got, want = _both(matrices, args, (0, 1, 2))
    assert _close(got, want)
    text = special.generated.source
    assert "rt.dot_vjp" not in text
    assert "rt.matmul_vjp_a(out_2_bar, a, b)" not in text.replace("out_1", "out_2")
    if len(a) == 2:
        assert "rt.matmul_vjp" not in text


def test_reductions_with_known_shapes():
    x = np.random.default_rng(2).normal(size=(4, 5))
    special, _, got, want = _both(reductions, (x,), (0,))
    assert _close(got, want)
    assert "rt.unreduce" not in special.generated.source
    assert "rt.mean_vjp" not in special.generated.source


def test_shapes_that_values_decide_are_not_specialised():
    """np.zeros(n), x[:n] and x[mask]: their shapes depend on values, not on shapes."""
    fn = lowered(sized)
    known = infer(fn, (("x", describe(np.ones(5))), ("n", "int")))
    assert "x" in known and "z" not in known and "z_1" not in known
    fn = lowered(masked)
    known = infer(fn, (("x", describe(np.ones(5))),))
    mask = next(s for s in fn.statements() if getattr(s, "prim", None) and s.prim.name == "gt")
    picked = next(
        s for s in fn.statements() if getattr(s, "prim", None) and s.prim.name == "getitem"
    )
    assert known[mask.targets[0]].shape == (5,)  # the mask's shape is known, not its values
    assert picked.targets[0] not in known
    x = np.array([0.5, -1.0, 2.0, 3.0, -0.5])
    assert np.allclose(adgen.grad(sized)(x, 3), [1.0, 1.0, 1.0, 0.0, 0.0])
    assert np.allclose(adgen.grad(masked)(x), [1.0, 0.0, 4.0, 6.0, 0.0])


def test_a_name_whose_shape_changes_in_a_loop_is_not_specialised():
    fn = lowered(growing)
    known = infer(fn, (("x", describe(np.ones(2))), ("steps", "int")))
    assert "acc" not in known
    x = np.array([1.0, 2.0])
    for steps in (0, 1, 3):
        assert np.allclose(adgen.grad(growing)(x, steps), 2 * (steps + 1) * x)


def test_a_loop_keeping_shapes_is_specialised():
    fn = lowered(looped)
    known = infer(
        fn, (("x", describe(np.ones(3))), ("w", describe(np.ones((3, 3)))), ("steps", "int"))
    )
    assert known["h"].shape == (3,)
    rng = np.random.default_rng(3)
    args = (rng.normal(size=3), rng.normal(size=(3, 3)) / 3, 4)
    _, _, got, want = _both(looped, args, (0, 1))
    assert _close(got, want)


def test_each_shape_gets_its_own_code_and_a_correct_gradient():
    cache.clear()
    g = adgen.grad(broadcasting, wrt=(0, 1))
    for xs, ys, ws in SHAPES:
        rng = np.random.default_rng(4)
        args = (rng.normal(size=xs), rng.normal(size=ys), rng.normal(size=ws))
        _, general, _, want = _both(broadcasting, args, (0, 1))
        got = g(*args)
        assert _close(got, want[1])
        assert [np.shape(v) for v in got] == [xs, ys]
    base = ("reverse", ("x", "y"), frozenset(), ())
    assert cache.variants(broadcasting, base) == len(SHAPES)


def test_ever_new_shapes_fall_back_to_the_general_code():
    cache.clear()
    g = adgen.grad(reductions)
    for n in range(1, MAX_SPECIALISED + 4):
        x = np.arange(2.0 * n).reshape(2, n)
        _, _, _, want = _both(reductions, (x,), (0,))
        assert _close(g(x), want[1][0])
    base = ("reverse", ("x",), frozenset(), ())
    assert cache.variants(reductions, base) == MAX_SPECIALISED


def test_dtypes_are_part_of_the_key():
    cache.clear()
    g = adgen.grad(reductions)
    x64 = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    g64, g32 = g(x64), g(x64.astype(np.float32))
    assert g64.dtype == np.float64 and g32.dtype == np.float32
    assert np.allclose(g64, g32, atol=1e-6)


def test_source_with_example_arguments_shows_the_specialised_code():
    args = (np.ones((3, 4)), np.ones(4), np.ones((4, 4)))
    text = adgen.source(broadcasting, wrt=(0, 1), args=args)
    assert "for shapes x (3, 4), y (4,), w (4, 4)" in text
    assert "rt.unbroadcast" not in text
    assert "rt.unbroadcast" in adgen.source(broadcasting, wrt=(0, 1))
    forward = adgen.source(broadcasting, mode="forward", wrt=(0, 1), args=args)
    assert "forward mode" in forward and "for shapes" in forward


def test_jvp_vjp_and_jacobians_use_specialised_code():
    rng = np.random.default_rng(5)
    x, y, w = rng.normal(size=(3, 1)), rng.normal(size=(1, 4)), rng.normal(size=(1, 1))
    tx, ty, tw = rng.normal(size=(3, 1)), rng.normal(size=(1, 4)), rng.normal(size=(1, 1))
    _, t = adgen.jvp(broadcasting, (x, y, w), (tx, ty, tw))
    _, pull = adgen.vjp(broadcasting, x, y, w)
    cx, cy, cw = pull(1.0)
    assert np.isclose(t, np.sum(cx * tx) + np.sum(cy * ty) + np.sum(cw * tw))
    jac = adgen.jacobian(broadcasting, wrt=(0, 1))(x, y, w)
    assert np.allclose(jac[0], cx) and np.allclose(jac[1], cy)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=3),
    st.lists(st.booleans(), min_size=3, max_size=3),
    st.booleans(),
)
def test_property_specialised_equals_general_under_broadcasting(shape, ones, drop):
    """Random broadcast-compatible shapes: specialised and general code agree."""
    xs = tuple(shape)
    ys = tuple(1 if ones[i % 3] else n for i, n in enumerate(shape))
    if drop:
        ys = ys[1:]
    rng = np.random.default_rng(6)
    args = (rng.normal(size=xs), rng.normal(size=ys))
    _, _, got, want = _both(elementwise, args, (0, 1))
    assert _close(got, want)


OFFSET = np.array([0.3, -0.5, 0.8])


def along_a_line(t):
    h = OFFSET + t * OFFSET[::-1]
    return np.sum(h * h)


def test_a_global_array_broadcasts_a_scalar_parameter():
    """A module global's shape counts: t * OFFSET is an array although t is a number."""
    known = infer(lowered(along_a_line), (("t", describe(0.5)),))
    assert all(k.shape == (3,) for n, k in known.items() if n.startswith("h"))
    t = 0.5
    want = np.sum(2 * (OFFSET + t * OFFSET[::-1]) * OFFSET[::-1])
    assert adgen.grad(along_a_line)(t) == pytest.approx(want)


def centred(x, means, L):
    xc = x[None, :, :] - means[:, None, :]
    lxc = 2.0 * xc + xc @ np.transpose(L, (0, 2, 1))
    return np.sum(lxc * lxc)


def test_the_adjoint_of_a_broadcast_operand_is_summed_before_linear_maps():
    """means is broadcast over the points: its adjoint sums the points' cotangents, which
    the specialised code does before the matrix product and the scaling, not after."""
    rng = np.random.default_rng(8)
    args = (rng.normal(size=(30, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 3, 3)))
    special, general, got, want = _both(centred, args, (1, 2))
    assert _close(got, want)
    assert "_summed = np.reshape(np.einsum(" in special.generated.source
    assert "_summed" not in general.generated.source
    assert np.allclose(adgen.grad(centred, wrt=1)(*args), want[1][0])


GRID = np.linspace(0.0, 1.0, 6)


def on_grid(t):
    return np.sum(np.sin(t * GRID) * GRID)


def test_a_global_array_reshaped_in_place_rebuilds_the_code():
    g = adgen.grad(on_grid)
    before = g(0.3)
    assert before == pytest.approx(np.sum(np.cos(0.3 * GRID) * GRID * GRID))
    g(0.3)
    builds = cache.stats["builds"]
    GRID.shape = (2, 3)  # the same array object, another shape
    try:
        assert g(0.3) == pytest.approx(before)
        assert cache.stats["builds"] > builds  # the code was made again, not served stale
        fn = lowered(on_grid)
        known = infer(fn, (("t", describe(0.3)),))
        assert any(k.shape == (2, 3) for k in known.values())
    finally:
        GRID.shape = (6,)


SCALE = 2.0


def scaled(t):
    return np.sum(np.sin(t * GRID)) * SCALE


def test_a_gradient_object_never_serves_code_it_held_once_the_cache_changes():
    """value_and_grad keeps the cache entry of each kind of call it has seen (the short
    way); that entry is checked like a cache lookup: a rebound global or a cleared cache
    makes the code again."""
    global SCALE
    vg = adgen.value_and_grad(scaled)
    vg(0.3)
    vg(0.3)
    builds = cache.stats["builds"]
    assert vg(0.3)[1] == pytest.approx(2.0 * np.sum(np.cos(0.3 * GRID) * GRID))
    assert cache.stats["builds"] == builds  # served without making it again
    SCALE = 3.0
    try:
        assert vg(0.3)[1] == pytest.approx(3.0 * np.sum(np.cos(0.3 * GRID) * GRID))
        assert cache.stats["builds"] == builds + 1
        cache.clear()
        assert vg(0.3)[1] == pytest.approx(3.0 * np.sum(np.cos(0.3 * GRID) * GRID))
        assert cache.stats["builds"] == builds + 2
    finally:
        SCALE = 2.0
