"""In-place updates in real code (issue 18): what is sound is differentiated, what is not is
refused with the line and what to write instead.

``z = w[0]; z += w[1]`` of a vector is a NumPy scalar made anew (the argument kinds the
derivative is specialised for decide it); ``z = x; z += y`` of Python numbers too; a view of a
temporary nobody else holds is as good as a new array; rebinding an item of a list
(``hs[t] = v``) is not an array write. Each accepted program is checked in both modes (forward
mode against central differences, reverse mode against forward mode: ``check_grads``), its
value against Python's own, and where it matters against its analytic derivative.

True aliases stay refused -- and several that adgen used to accept, computing the derivative
of another function than Python's (an array updated in place while a list, a tuple, a view, a
helper's caller or a loop's rows still held it), are now refused too.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import numpy as np
import pytest

import adgen
from adgen import pipeline
from adgen.errors import UnsupportedSyntaxError
from adgen.middle.shapes import describe
from adgen.testing import check_grads


def same_value_and_grads(f: Any, *args: Any) -> None:
    """adgen's value is Python's, and its derivatives pass ``check_grads`` in both modes."""
    expected = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    floats = [k for k, a in enumerate(args) if np.result_type(a).kind == "f"]
    value, _ = adgen.value_and_grad(f, wrt=floats)(*args)
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    check_grads(f, *args)


# -- numbers updated in place ----------------------------------------------------------------


def horner(c, x):
    """A polynomial by Horner's rule, its accumulator started from the first coefficient."""
    acc = c[0]
    for k in range(1, c.shape[0]):
        acc *= x
        acc += c[k]
    return acc


def spring_energy(x, k, n):
    """Python numbers: the parameter ``x`` aliased, ``+=`` on floats and an int counter."""
    e = x
    e *= k
    total = e
    i = n
    while i < n + 3:
        total += e / (i + 1)
        i += 1
    return total * x


def test_accumulator_started_from_an_item_of_a_vector():
    c, x = np.array([0.5, -1.0, 2.0, 0.3]), 0.7
    same_value_and_grads(horner, c, x)
    # d/dx of 0.5 x^3 - x^2 + 2 x + 0.3, in both modes
    np.testing.assert_allclose(adgen.grad(horner, wrt=1)(c, x), 1.5 * x**2 - 2 * x + 2.0)
    _, dot = adgen.jvp(horner, (c, x), (np.zeros(4), 1.0))
    assert dot == pytest.approx(1.5 * x**2 - 2 * x + 2.0, rel=1e-12)
    np.testing.assert_allclose(adgen.grad(horner)(c, x), [x**3, x**2, x, 1.0])
    # second order: d2/dx2
    assert adgen.grad(adgen.grad(horner, wrt=1), wrt=1)(c, x) == pytest.approx(3 * x - 2.0)


def test_python_numbers_aliased_then_updated():
    same_value_and_grads(spring_energy, 1.3, 0.8, 2)
    # total = x k (1 + 1/3 + 1/4 + 1/5), times x
    s = 1 + 1 / 3 + 1 / 4 + 1 / 5
    assert adgen.grad(spring_energy)(1.3, 0.8, 2) == pytest.approx(2 * 1.3 * 0.8 * s)
    _, dot = adgen.jvp(spring_energy, (1.3, 0.8, 2), (0.0, 1.0, None))
    assert dot == pytest.approx(1.3**2 * s)


def first_item_updated(w):
    z = w[0]
    z += w[1] * w[2]
    return z * w[2]


def test_full_indexing_gives_a_number_second_order_too():
    w = np.array([1.0, 2.0, 3.0])
    same_value_and_grads(first_item_updated, w)
    # f = w0 w2 + w1 w2^2
    np.testing.assert_allclose(adgen.grad(first_item_updated)(w), [3.0, 9.0, 13.0])
    np.testing.assert_allclose(
        adgen.hessian(first_item_updated)(w), [[0, 0, 1], [0, 0, 6], [1, 6, 4]]
    )


def test_general_code_checks_the_kind_when_it_runs():
    """The code made for no particular argument kinds (after too many shapes, for higher
    orders) keeps the check: a vector's item passes, a matrix's row stops with the line."""
    d = pipeline.derivative(first_item_updated, "reverse", ("w",))
    out, (g,) = pipeline.run(d, np.array([1.0, 2.0, 3.0]), 1.0)
    assert out == 21.0 and g.tolist() == [3.0, 9.0, 13.0]
    with pytest.raises(UnsupportedSyntaxError, match="in-place update of `z`") as info:
        pipeline.run(d, np.ones((3, 2)), 1.0)
    assert info.value.loc.lineno == first_item_updated.__code__.co_firstlineno + 2


def test_code_specialised_for_a_vector_has_no_check_left():
    w = np.array([1.0, 2.0, 3.0])
    signature = (("w", describe(w)),)
    for mode in ("forward", "reverse"):
        d = pipeline.derivative(first_item_updated, mode, ("w",), signature=signature)
        assert "isscalar" not in d.generated.source and "assert" not in d.generated.source


# -- arrays nobody else holds ----------------------------------------------------------------


def reshaped_temporary(w):
    v = np.reshape(w * 2, (2, -1))
    v -= w[0]
    v = v.T
    v *= np.tanh(w[:2])
    return np.sum(v**2)


def rotation(p):
    return np.array([[np.cos(p), -np.sin(p)], [np.sin(p), np.cos(p)]])


def rotated_and_scaled(p, s, x):
    R = rotation(p)
    R *= s
    y = R @ x
    y += x
    trace = R[0, 0]
    trace += R[1, 1]
    return np.sum(y * y) + trace


def test_view_of_a_temporary_updated_in_place():
    w = np.array([0.3, -0.5, 0.8, 1.1])
    same_value_and_grads(reshaped_temporary, w)


def test_fresh_array_from_a_helper_updated_in_place():
    x = np.array([0.4, -1.2])
    same_value_and_grads(rotated_and_scaled, 0.3, 1.7, x)
    # |(sR + I) x|^2: d/ds = 2 <(sR + I) x, R x>
    p, s = 0.3, 1.7
    R = rotation(p)
    y = (s * R + np.eye(2)) @ x
    # ... plus the trace 2 s cos(p)
    expected = 2 * y @ (R @ x) + 2 * np.cos(p)
    assert adgen.grad(rotated_and_scaled, wrt=1)(p, s, x) == pytest.approx(expected)


# -- simulations -----------------------------------------------------------------------------


def heat_equation(u0, kappa):
    """Explicit heat steps with slice updates; snapshots kept in a list written by index;
    the energy accumulated from a number."""
    dt = 0.1
    u = u0.copy()
    frames = [u0] * 4
    energy = u[0]  # a number: the writes into u below do not change it
    for k in range(3):
        lap = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u[1:-1] += dt * kappa * lap
        frames[k + 1] = u.copy()
        middle = u[2]
        energy += np.sum(u * u) + middle
    return energy + np.sum(frames[2] * frames[3])


def kept_row(X):
    Y = X.copy()
    r = Y[0]
    Y[1] = 2.0 * Y[0]
    return np.sum(r * Y)


def test_an_item_kept_while_the_array_is_written():
    """``r = Y[0]`` of a vector is a number; of a matrix, a row the write would change."""
    same_value_and_grads(kept_row, np.array([0.5, -1.5, 2.0]))
    with pytest.raises(adgen.UnsupportedSyntaxError, match="`r` keeps a view of it") as info:
        adgen.grad(kept_row)(np.ones((2, 2)))
    assert info.value.loc.lineno == kept_row.__code__.co_firstlineno + 2
    assert "copy it" in info.value.hint


def particles(pos0, vel0, k, t0):
    """A spring system: ``pos += dt * vel`` on arrays the function made; the clock a
    Python number from the caller, updated with ``+=``."""
    pos = pos0 * 1.0
    vel = vel0.copy()
    t = t0
    dt = 0.05
    while t < t0 + 0.18:  # four steps (not at a step's end: differences shift t0)
        acc = -k * pos
        vel += dt * acc
        pos += dt * vel
        t += dt
    return np.sum(pos**2) + 0.5 * np.sum(vel**2)


def test_heat_equation_with_snapshots():
    u0 = np.sin(np.linspace(0.0, np.pi, 6)) + 0.1
    same_value_and_grads(heat_equation, u0, 0.7)


def test_particle_simulation():
    pos0 = np.array([[1.0, 0.0], [0.0, 2.0], [0.5, 0.5]])
    vel0 = np.array([[0.0, 1.0], [-1.0, 0.0], [0.2, 0.1]])
    same_value_and_grads(particles, pos0, vel0, 1.5, 0.0)


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def lstm(xs, W, U):
    """States kept in lists written by index, as LSTM code does."""
    T = xs.shape[0]
    hs = [np.zeros(2)] * (T + 1)
    cs = [np.zeros(2) for _ in range(T + 1)]
    for t in range(T):
        z = W @ xs[t] + U @ hs[t]
        i, f, o = sigmoid(z[0]), sigmoid(z[1]), sigmoid(z[2])
        cs[t + 1] = f * cs[t] + i * np.tanh(z[3])
        hs[t + 1] = o * np.tanh(cs[t + 1])
    h = hs[0]
    hs[0] = np.tanh(h + 1.0)  # rebinding an item: h keeps the old array
    return np.sum(hs[T] ** 2) + np.sum(h * hs[0])


def test_lstm_with_lists_of_states_written_by_index():
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((3, 2))
    W = rng.standard_normal((4, 2, 2)) * 0.5
    U = rng.standard_normal((4, 2, 2)) * 0.5
    same_value_and_grads(lstm, xs, W, U)


def step(x, h):
    h_new = np.tanh(x + 0.5 * h)
    return 2.0 * h_new, h_new


def rollout(xs):
    h = xs[0] * 0.0
    states = []
    out = np.zeros(2)
    for t in range(xs.shape[0]):
        y, new_state = step(xs[t], h)
        states.append(new_state.copy())
        new_state *= 0.9  # the list holds a copy
        h = new_state
        out += y
    return np.sum(out * states[-1]) + np.sum(h)


def test_state_appended_as_a_copy_then_updated():
    xs = np.array([[0.1, -0.3], [0.5, 0.2], [-0.4, 0.9]])
    same_value_and_grads(rollout, xs)


def fresh_each_iteration(w):
    """Names a loop binds to a new array each time, updated in place before anything else
    holds them: what earlier iterations left in other names is another array."""
    prev = w * 1.0
    out = w * 0.0
    for t in range(3):
        y = w * (t + 2.0)
        y += prev  # prev holds the last iteration's y, not this one
        prev = y
        v = np.reshape(w * t, (2, 1))
        v += 1.0
        s = w[0]
        s += w[1]
        out = out + v[:, 0] * s
    return np.sum(prev * w) + np.sum(out * w)


def test_names_bound_anew_in_each_iteration():
    same_value_and_grads(fresh_each_iteration, np.array([1.0, 2.0]))
    assert adgen.hessian(fresh_each_iteration)(np.array([1.0, 2.0])).shape == (2, 2)


def nested_def_shadows_a_list(w):
    xs = [w, w * 2.0]

    def inner(a):
        xs = [a, a * a]
        xs[0] = a * 3.0
        return xs[0] + xs[1]

    return np.sum(inner(w) * xs[1])


def test_nested_def_with_the_name_of_an_enclosing_list():
    w = np.array([0.5, -1.0])
    same_value_and_grads(nested_def_shadows_a_list, w)
    # (3 w + w^2) 2 w = 6 w^2 + 2 w^3
    np.testing.assert_allclose(adgen.grad(nested_def_shadows_a_list)(w), 12 * w + 6 * w**2)


# -- what stays refused, and what adgen used to get wrong ------------------------------------


def _module(tmp_path: Any, source: str) -> Any:
    path = tmp_path / "aliasing_case.py"
    path.write_text("import numpy as np\n\n\n" + source)
    spec = importlib.util.spec_from_file_location("aliasing_case", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.pop("aliasing_case", None)
    spec.loader.exec_module(mod)
    return mod


REFUSED = {
    "matrix-row": (
        "def f(w):\n    z = w[0]\n    z += w[1]\n    return np.sum(z * w[2])\n",
        (np.ones((3, 2)),),
        "in-place update of `z` (it may be a view of an argument",
        "write `z = z + ...`",
    ),
    "helper-updates-callers-array": (
        "def helper(z):\n    z += 1.0\n    return z\n\n\n"
        "def f(w):\n    a = w * 2\n    b = helper(a)\n    return np.sum(a * b)\n",
        (np.ones(2),),
        "it is also `a`",
        "write `z = z + ...`",
    ),
    "appended-then-updated": (
        "def f(w):\n    hs = []\n    y = w * 2\n    hs.append(y)\n    y += 1.0\n"
        "    return np.sum(hs[0] * w)\n",
        (np.ones(2),),
        "item of a list",
        "",
    ),
    "in-a-list-display": (
        "def f(w):\n    y = w * 2\n    hs = [y, w]\n    y += 1.0\n    return np.sum(hs[0] * w)\n",
        (np.ones(2),),
        "`hs` holds it too",
        "",
    ),
    "in-a-tuple": (
        "def f(w):\n    y = w * 2\n    t = (y, w)\n    y += 1.0\n    return np.sum(t[0] * w)\n",
        (np.ones(2),),
        "`t` holds it too",
        "",
    ),
    "view-kept": (
        "def f(w):\n    y = w * 2\n    r = y[1:]\n    y += 1.0\n    return np.sum(r)\n",
        (np.ones(3),),
        "`r` may see its array",
        "",
    ),
    "view-by-a-nested-def": (
        "def f(w):\n    y = w * 2\n\n    def g():\n        return y[0:]\n\n"
        "    r = g()\n    y += 1.0\n    return np.sum(r * w)\n",
        (np.ones(2),),
        "`r` may see its array",
        "",
    ),
    "either-branch": (
        "def f(w, c):\n    y = w * 2\n    z = y if c > 0 else w\n    y += 1.0\n"
        "    return np.sum(z * w)\n",
        (np.ones(2), 1.0),
        "`z` may see its array",
        "",
    ),
    "appended-in-a-loop": (
        "def f(w):\n    y = w * 2\n    hs = []\n    for i in range(2):\n        hs.append(y)\n"
        "        y += 1.0\n    return np.sum(hs[0] * w)\n",
        (np.ones(2),),
        "a list may hold it",
        "",
    ),
    "appended-before-the-update-in-a-loop": (
        "def f(w):\n    hs = []\n    for t in range(3):\n        y = w * t\n"
        "        hs.append(y)\n        y += 1.0\n    return np.sum(hs[0] * w)\n",
        (np.ones(2),),
        "a list may hold it",
        "",
    ),
    "view-appended-in-a-loop": (
        "def f(w):\n    keep = []\n    for t in range(3):\n        y = w * t\n"
        "        keep.append(y[0:1])\n        y *= 2.0\n    return np.sum(keep[2] * w)\n",
        (np.ones(2),),
        "a list may hold it",
        "",
    ),
    "view-by-a-nested-def-in-a-loop": (
        "def f(w):\n    r = w\n    for t in range(2):\n        y = w * 2\n\n"
        "        def g():\n            return y[0:]\n\n        r = g()\n        y += 1.0\n"
        "    return np.sum(r * w)\n",
        (np.ones(2),),
        "a function defined here may return a view of it",
        "",
    ),
    "descent-from-the-callers-array": (
        "def f(x0, A):\n    x = x0\n    for k in range(3):\n        x -= 0.1 * (A @ x)\n"
        "    return np.sum(x ** 2)\n",
        (np.ones(2), np.eye(2)),
        "line 5 binds it to `x0`",
        "`x = x0.copy()`",
    ),
    "slice-of-a-list": (
        "def f(w):\n    hs = [w, w * 2, w * 3]\n    hs[1:3] = [w * 4, w * 5]\n"
        "    return np.sum(hs[1] * hs[2])\n",
        (np.ones(2),),
        "assigning to a slice of the list `hs`",
        "write the items one by one",
    ),
    "item-of-a-list": (
        "def f(w):\n    hs = [w * 1.0, w * 2.0]\n    x = hs[0]\n    x += 1.0\n"
        "    return np.sum(hs[0] * w)\n",
        (np.ones(2),),
        "`hs` holds it too",
        "",
    ),
    "rows-of-a-loop": (
        "def f(X):\n    Y = X * 1.0\n    for row in Y:\n        row += 1.0\n    return np.sum(Y)\n",
        (np.ones((2, 2)),),
        "a loop binds it to the items",
        "",
    ),
    "rows-of-a-loop-written": (
        "def f(X):\n    Y = X * 1.0\n    for row in Y:\n        row[0] = 5.0\n"
        "    return np.sum(Y * X)\n",
        (np.ones((2, 2)),),
        "a loop binds it to the items",
        "",
    ),
    "helper-updates-an-array-the-caller-reads-in-the-next-iteration": (
        "def helper(z):\n    z += 1.0\n    return z\n\n\n"
        "def f(w):\n    a = w * 2\n    s = 0.0\n    for i in range(3):\n"
        "        b = helper(a)\n        s = s + np.sum(b)\n    return s\n",
        (np.ones(2),),
        "in-place update of `z`",
        "write `z = z + ...`",
    ),
    "helper-updates-a-new-array-another-name-keeps": (
        "def helper(z):\n    z += 1.0\n    return z\n\n\n"
        "def f(w):\n    s = 0.0\n    keep = w\n    for i in range(3):\n"
        "        a = w * i\n        keep = a\n        b = helper(a)\n"
        "        s = s + np.sum(b * keep)\n    return s\n",
        (np.ones(2),),
        "in-place update of `z`",
        "write `z = z + ...`",
    ),
    "update-of-an-array-another-name-reads-later": (
        "def f(w):\n    y = w * 2\n    z = y\n    y += 1.0\n    return np.sum(z * w)\n",
        (np.ones(2),),
        "in-place update of `y`",
        "write `y = y + ...`",
    ),
    "list-item-updated-in-place": (
        "def f(w):\n    hs = [w for k in range(2)]\n    hs[1] += 1.0\n"
        "    return np.sum(hs[0] * w)\n",
        (np.ones(2),),
        "in-place update of an item of the list `hs`",
        "write `hs[...] = hs[...] + ...`",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_true_aliases_are_refused_in_both_modes(tmp_path, case):
    source, args, words, hint = REFUSED[case]
    mod = _module(tmp_path, source)
    written = ("+=", "-=", "*=", "] =")
    lines = enumerate(source.splitlines(), 4)
    line = next(k for k, text in lines if any(w in text for w in written))
    for run in (
        lambda: adgen.grad(mod.f)(*args),
        lambda: adgen.jvp(mod.f, args, tuple(np.zeros_like(a) for a in args)),
    ):
        with pytest.raises(adgen.UnsupportedSyntaxError) as info:
            run()
        assert words in info.value.message
        assert hint in (info.value.hint or "")
        assert info.value.loc.filename == mod.__file__ and info.value.loc.lineno == line


def project(vx, vy):
    p = vx * 0.0
    for _ in range(3):
        p = 0.25 * (np.roll(p, 1) + np.roll(p, -1) + vx - vy)
    vx -= 0.5 * (np.roll(p, -1) - np.roll(p, 1))
    vy -= 0.5 * (np.roll(p, 1) - np.roll(p, -1))
    return vx, vy


def fluid_steps(v0):
    vx, vy = v0, v0[::-1] * 0.5
    for _ in range(3):
        vx_updated = np.tanh(vx) + 0.1 * vy
        vy_updated = np.sin(vy) - 0.1 * vx
        vx, vy = project(vx_updated, vy_updated)
    return np.sum(vx**2 + vx * vy)


def update_then_forget(w):
    y = w * 2
    z = y  # noqa: F841 (another name of y's array, never read again)
    y += 1.0
    return np.sum(y * w)


def test_updates_of_arrays_no_other_name_reads_again():
    # autograd's fluid simulation writes `vx -= ...` on its helper's arguments, which the
    # caller made in the same loop iteration and never reads again; `z = y` then `y += 1`
    # with `z` never read again: an update in place and a new value cannot be told apart
    v0 = np.linspace(-1.0, 1.0, 6)
    check_grads(fluid_steps, v0)
    g = adgen.grad(fluid_steps)(v0)
    eps = 1e-6
    fd = [(fluid_steps(v0 + eps * e) - fluid_steps(v0 - eps * e)) / (2 * eps) for e in np.eye(6)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    w = np.array([0.5, -1.0])
    assert adgen.value_and_grad(update_then_forget)(w)[0] == update_then_forget(w)
    check_grads(update_then_forget, w)
