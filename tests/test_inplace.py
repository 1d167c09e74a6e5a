"""In-place array writes in both modes: y[i] = v, slices, y[i, j] += v, masks, integer-array
indices, overwriting the same slot again and again, inside loops, branches and helpers.

Reverse mode saves exactly the values a write overwrites (when an adjoint reads them) and
puts them back; forward mode writes the tangent alongside. Writes are allowed only into
arrays the function made itself; everything else is refused.
"""

import re

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def recurrence_fill(x):
    y = np.zeros(x.shape[0])
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * x[i]
    return np.sum(y)


def overwrite_same_slot_repeatedly(x):
    y = np.zeros(2)
    for k in range(4):
        y[0] = y[0] * x[k] + x[k]
        y[1] = np.sin(y[0]) + y[1]
    return y[0] * y[1]


def write_slice_of_copy(x):
    y = x.copy()
    y[1:3] = np.tanh(x[1:3]) * 2.0
    return np.sum(y * y)


def augmented_write_2d(X):
    S = np.zeros((2, 3))
    for i in range(X.shape[0]):
        S[i % 2, :] += X[i] * X[i]
    S[0, 1] += 1.5 * S[1, 2]
    return np.sum(S * np.arange(6.0).reshape(2, 3))


def write_with_boolean_mask(x):
    y = x * 1.0
    y[x > 0] = np.sqrt(x[x > 0])
    return np.sum(y * y * y)


def write_scalar_into_mask(x):
    y = x * 2.0
    y[x < 0] = 0.0
    return np.sum(y * x)


IDX = np.array([0, 0, 2])
SCALES = np.array([1.0, 2.0, 3.0])
WEIGHTS = np.array([1.0, 10.0, 100.0])


def repeated_integer_index_last_write_wins(x):
    y = np.zeros(3)
    y[IDX] = x[:3] * SCALES
    return np.sum(y * WEIGHTS)


def trajectory_storage(x0, k):
    traj = np.zeros((6, 2))
    state = x0
    for t in range(6):
        traj[t] = state
        state = state * 0.95 + 0.1 * k * np.sin(state)
    return np.sum(traj * traj)


def write_in_branch(x):
    y = np.ones(x.shape[0])
    for i in range(x.shape[0]):
        if x[i] > 0:
            y[i] = x[i] * x[i]
        else:
            y[i] = np.exp(x[i])
    return np.sum(y)


def helper_fills_an_array(n, x):
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.sin(x * (i + 1))
    return out


def calls_filling_helper(x):
    v = helper_fills_an_array(4, x)
    return np.sum(v * v)


def returned_array_written_in_place(x):
    y = np.zeros(3)
    y[0] = x[0] * x[1]
    y[2] = np.sin(x[2])
    return y


def float32_fill(x):
    y = np.zeros(x.shape[0], dtype=np.float32)
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i]
    return np.sum(y)


V = np.array([0.6, -0.4, 0.9, 1.3, -0.2])
M = np.array([[0.2, -0.5, 0.7], [1.1, 0.3, -0.8], [0.4, 0.9, -0.1]])
CASES = [
    (recurrence_fill, (V,)),
    (overwrite_same_slot_repeatedly, (V,)),
    (write_slice_of_copy, (V,)),
    (augmented_write_2d, (M,)),
    (write_with_boolean_mask, (V,)),
    (write_scalar_into_mask, (V,)),
    (repeated_integer_index_last_write_wins, (V,)),
    (trajectory_storage, (np.array([1.0, 0.5]), 0.7)),
    (write_in_branch, (V,)),
    (calls_filling_helper, (0.3,)),
    (returned_array_written_in_place, (V,)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_in_place_writes_both_modes_match_finite_differences(fn, args):
    check_grads(fn, *args)
    value, _ = adgen.vjp(fn, *args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)


def test_last_write_wins_for_repeated_indices():
    g = adgen.grad(repeated_integer_index_last_write_wins)(V)
    # y[0] = 2 * x[1] (the second write to slot 0), y[2] = 3 * x[2]
    np.testing.assert_allclose(g, [0.0, 2.0, 300.0, 0.0, 0.0])


def test_float32_array_filled_in_place_stays_float32():
    x = V.astype(np.float32)
    g = adgen.grad(float32_fill)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2 * x, rtol=1e-6)


def test_caller_arrays_and_cotangents_are_never_written():
    x = V.copy()
    ct = np.array([1.0, 2.0, 3.0])
    tx = np.ones(5)
    out, pullback = adgen.vjp(returned_array_written_in_place, x)
    (gx,) = pullback(ct)
    adgen.jvp(returned_array_written_in_place, (x,), (tx,))
    np.testing.assert_array_equal(x, V)
    np.testing.assert_array_equal(ct, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(tx, np.ones(5))
    np.testing.assert_allclose(gx, [V[1], V[0], 3.0 * np.cos(V[2]), 0.0, 0.0])


def test_writes_save_only_the_overwritten_slots():
    src = adgen.source(recurrence_fill)
    assert "stack.append(rt.copy_of(y[i]))" in src  # y[i - 1] is read by the next step
    assert "stack.append(y)" not in src  # never the whole array


def test_forward_mode_writes_the_tangent_in_place():
    src = adgen.source(recurrence_fill, mode="forward")
    written = re.search(r"\n\s*y\[i\] = (y_\d+)\n\s*y_dot\[i\] = (y_\d+)_dot\n", src)
    assert written is not None and written.group(1) == written.group(2), src


@pytest.mark.parametrize(
    "body, words",
    [
        ("    x[0] = 1.0\n    return x", "argument passed by the caller"),
        ("    y = x\n    y[0] = 1.0\n    return y", "view of another array"),
        ("    y = x[1:]\n    y[0] = 1.0\n    return y", "view of another array"),
        ("    y = x.copy()\n    row = y[1:]\n    y[0] = 1.0\n    return row", "`row` keeps a view"),
        ("    y = x.copy()\n    y[0][0] = 1.0\n    return y", "writing into an expression"),
    ],
    ids=["argument", "alias", "view", "kept-view", "chained-subscript"],
)
def test_unsafe_in_place_writes_are_refused_with_location(tmp_path, body, words):
    import importlib.util

    path = tmp_path / "inpl.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n" + body + "\n")
    spec = importlib.util.spec_from_file_location("inpl", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(adgen.UnsupportedSyntaxError, match=words) as info:
        adgen.vjp(mod.f, np.ones((3, 3)))
    assert info.value.loc.filename == str(path) and info.value.loc.lineno >= 5
