"""Never silently wrong: inputs untouched, no stale derivatives, threads, scale (issue 8)."""

from __future__ import annotations

import concurrent.futures
import importlib
import linecache
import os
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

import adgen
import adgen.testing


# -- helpers ---------------------------------------------------------------------------------------
def write_module(tmp_path: Path, source: str, name: str | None = None):
    """Write ``source`` as a fresh module under tmp_path and import it (in sys.modules)."""
    name = name or f"adgen_rb_{uuid.uuid4().hex[:10]}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    if str(tmp_path) not in sys.path:
        sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    return importlib.import_module(name)


def edit_module_file(module, old: str, new: str) -> None:
    """Edit a module's file on disk so that a reload is sure to see the change (no stale .pyc)."""
    path = Path(module.__file__)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    later = time.time() + 5
    os.utime(path, (later, later))
    importlib.invalidate_caches()


def numeric_grad(f, x: float, eps: float = 1e-6) -> float:
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.fixture
def sys_path_guard():
    saved = list(sys.path)
    yield
    sys.path[:] = saved


# -- inputs are never modified ---------------------------------------------------------------------
INPUT_FUNCTIONS = """
import numpy as np


def helper(v, s):
    w = v * s
    w[0] = w[0] + 1.0
    return w


def loop_inplace(x, w):
    y = x * 1.0
    for i in range(3):
        y[i] = y[i] * w[i] + np.sin(x[i])
    y += x
    return np.sum(y * y)


def copies_then_writes(x, w):
    y = np.copy(x)
    z = np.zeros_like(x)
    z[1:] = y[:-1] * w[1:]
    y[0] = 2.0 * z[1]
    mask = x > 0.0
    z[mask] = x[mask] * 3.0
    return np.sum(y * z) + np.sum(helper(w, 2.0) * x)


def while_break(x, w):
    total = 0.0
    k = 0
    y = x * w
    while k < 10:
        k = k + 1
        if k == 2:
            continue
        y = np.tanh(y) + w
        if k > 5:
            break
    return np.sum(y) + total


def passthrough(x, w):
    return x


def vector_out(x, w):
    y = x * w
    y[1] = y[1] * y[2]
    return helper(y, 3.0) + 0.0


def tuple_out(x, w):
    return x * 2.0, np.sum(w * x)


def dict_and_list(p, xs):
    acc = []
    for v in xs:
        acc.append(v * p["w"])
    return np.sum(np.stack(acc)) + np.sum(p["b"] * p["w"])
"""


def _copies(value):
    if isinstance(value, dict):
        return {k: _copies(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copies(v) for v in value)
    return np.copy(value) if isinstance(value, np.ndarray) else value


def _assert_same(value, copy):
    if isinstance(value, dict):
        assert value.keys() == copy.keys()
        for k in value:
            _assert_same(value[k], copy[k])
    elif isinstance(value, (list, tuple)):
        assert len(value) == len(copy)
        for v, c in zip(value, copy):
            _assert_same(v, c)
    else:
        np.testing.assert_array_equal(value, copy)


def _arrays(value):
    if isinstance(value, dict):
        return [a for v in value.values() for a in _arrays(v)]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays(v)]
    return [value] if isinstance(value, np.ndarray) else []


def _assert_fresh(results, inputs):
    """No result array shares memory with anything the caller passed."""
    for r in _arrays(results):
        for a in _arrays(inputs):
            assert not np.shares_memory(r, a)


@pytest.fixture(scope="module")
def inputs_mod(tmp_path_factory):
    saved = list(sys.path)
    mod = write_module(tmp_path_factory.mktemp("inputs"), INPUT_FUNCTIONS)
    yield mod
    sys.path[:] = saved


@pytest.mark.parametrize(
    "name", ["loop_inplace", "copies_then_writes", "while_break", "passthrough", "vector_out"]
)
def test_arguments_tangents_and_cotangents_are_never_modified(inputs_mod, name):
    f = getattr(inputs_mod, name)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(3)
    w = rng.uniform(0.5, 1.5, 3)
    tx, tw = rng.standard_normal(3), rng.standard_normal(3)
    everything = [x, w, tx, tw]
    saved = _copies(everything)

    out = f(x, w)
    cot = np.asarray(rng.standard_normal(np.shape(out))) if np.ndim(out) else np.array(1.5)
    saved_cot = np.copy(cot)

    if np.ndim(out) == 0:
        g = adgen.grad(f, wrt=(0, 1))(x, w)
        _assert_same(everything, saved)
        _assert_fresh(g, everything)
        for a in _arrays(g):
            a += 100.0  # the caller may write into what it got back
        _assert_same(everything, saved)
        v, g2 = adgen.value_and_grad(f, wrt="x")(x, w)
        _assert_same(everything, saved)
        _assert_fresh(g2, everything)

    value, tangent = adgen.jvp(f, (x, w), (tx, tw))
    _assert_same(everything, saved)
    _assert_fresh(tangent, everything)  # the value may be an argument itself, as in f
    np.testing.assert_allclose(value, out)
    tangent += 1.0
    _assert_same(everything, saved)

    value, pullback = adgen.vjp(f, x, w)
    cotangents = pullback(cot)
    _assert_same(everything, saved)
    _assert_same(cot, saved_cot)
    _assert_fresh(cotangents, [*everything, cot])
    for c in cotangents:
        c += 1.0
    _assert_same(everything, saved)
    _assert_same(cot, saved_cot)
    # calling the pullback twice gives the same (so nothing it depends on was mutated)
    again = pullback(cot)
    fresh = adgen.vjp(f, x, w)[1](cot)
    for a, b, c in zip(again, fresh, cotangents):
        np.testing.assert_allclose(a + 1.0, c)
        np.testing.assert_allclose(a, b)
    adgen.testing.check_grads(f, x, w)
    _assert_same(everything, saved)


def test_tuple_results_cotangents_are_never_modified(inputs_mod):
    f = inputs_mod.tuple_out
    x, w = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    cots = (np.array([1.0, 2.0, 3.0]), np.array(0.5))
    saved = _copies([x, w, cots])
    _, pullback = adgen.vjp(f, x, w)
    gx, gw = pullback(cots)
    _assert_same([x, w, cots], saved)
    _assert_fresh([gx, gw], [x, w, *cots])
    np.testing.assert_allclose(gx, 2.0 * cots[0] + 0.5 * w)
    np.testing.assert_allclose(gw, 0.5 * x)
    t = (np.ones(3), np.full(3, 2.0))
    saved_t = _copies(t)
    _, (t0, t1) = adgen.jvp(f, (x, w), t)
    _assert_same(t, saved_t)
    _assert_fresh([t0, t1], [x, w, *t])
    np.testing.assert_allclose(t0, 2.0 * np.ones(3))
    np.testing.assert_allclose(t1, np.sum(w * 1.0 + 2.0 * x))


def test_containers_passed_are_never_modified(inputs_mod):
    f = inputs_mod.dict_and_list
    p = {"w": np.array([1.0, 2.0]), "b": np.array([0.5, -0.5])}
    xs = [np.array([1.0, 3.0]), np.array([2.0, -1.0])]
    saved = _copies([p, xs])
    gp, gxs = adgen.grad(f, wrt=(0, 1))(p, xs)
    _assert_same([p, xs], saved)
    _assert_fresh([gp, gxs], [p, xs])
    np.testing.assert_allclose(gp["w"], xs[0] + xs[1] + p["b"])
    np.testing.assert_allclose(gp["b"], p["w"])
    np.testing.assert_allclose(gxs[0], p["w"])
    tp = {"w": np.ones(2), "b": np.ones(2)}
    txs = [np.ones(2), np.zeros(2)]
    saved_t = _copies([tp, txs])
    adgen.jvp(f, (p, xs), (tp, txs))
    _assert_same([p, xs, tp, txs], [*saved, *saved_t])
    _, pullback = adgen.vjp(f, p, xs)
    cot = np.array(2.0)
    pullback(cot)
    _assert_same([p, xs, cot], [*saved, np.array(2.0)])


def test_float32_inputs_untouched_and_results_fresh(inputs_mod):
    f = inputs_mod.loop_inplace
    x = np.array([0.1, 0.2, 0.3], dtype=np.float32)
    w = np.array([1.0, -1.0, 2.0], dtype=np.float32)
    saved = _copies([x, w])
    gx, gw = adgen.grad(f, wrt=(0, 1))(x, w)
    assert gx.dtype == np.float32 and gw.dtype == np.float32
    _assert_same([x, w], saved)
    _assert_fresh([gx, gw], [x, w])


# -- no stale code ---------------------------------------------------------------------------------
STALE = """
import numpy as np

C = 2.0


def helper(x):
    return x * x


def f(x):
    return np.sin(x) * C + helper(x)


def reads_c_in_loop(x):
    total = 0.0
    for i in range(3):
        total = total + C * x
    return total
"""


def test_redefining_the_function_gives_the_new_derivative(tmp_path, sys_path_guard):
    mod = write_module(tmp_path, STALE)
    g = adgen.grad(mod.f)
    assert g(0.3) == pytest.approx(np.cos(0.3) * 2.0 + 0.6)
    old = mod.f
    edit_module_file(mod, "return np.sin(x) * C + helper(x)", "return np.cos(x) * C + helper(x)")
    importlib.reload(mod)
    assert mod.f is not old
    new = adgen.grad(mod.f)(0.3)
    assert new == pytest.approx(-np.sin(0.3) * 2.0 + 0.6)
    assert new == pytest.approx(numeric_grad(mod.f, 0.3), rel=1e-6)

    # the same function object given another body (f.__code__ = ..., same name)
    def make():
        def f(x):
            return np.exp(x) * C + helper(x)  # noqa: F821

        return f

    mod.f.__code__ = make().__code__
    got = adgen.grad(mod.f)(0.3)
    assert got == pytest.approx(np.exp(0.3) * 2.0 + 0.6)


def test_rebinding_a_helper_global_gives_the_new_derivative(tmp_path, sys_path_guard):
    mod = write_module(tmp_path, STALE)
    g = adgen.grad(mod.f)
    assert g(0.5) == pytest.approx(np.cos(0.5) * 2.0 + 1.0)

    def cubic(x):
        return x * x * x

    mod.helper = cubic
    assert g(0.5) == pytest.approx(np.cos(0.5) * 2.0 + 3 * 0.25)
    assert adgen.jvp(mod.f, (0.5,), (1.0,))[1] == pytest.approx(numeric_grad(mod.f, 0.5))
    mod.helper = lambda x: 4.0 * x  # noqa: E731
    assert g(0.5) == pytest.approx(np.cos(0.5) * 2.0 + 4.0)
    assert g(0.5) == pytest.approx(numeric_grad(mod.f, 0.5), rel=1e-6)


@pytest.mark.parametrize("fname", ["f", "reads_c_in_loop"])
def test_changing_a_module_float_constant_gives_the_new_derivative(tmp_path, sys_path_guard, fname):
    mod = write_module(tmp_path, STALE)
    f = getattr(mod, fname)
    g = adgen.grad(f)
    for c in (2.0, 3.5, -1.25, 2.0, 0.0):
        mod.C = c
        assert g(0.7) == pytest.approx(numeric_grad(f, 0.7), rel=1e-6, abs=1e-8)
        assert adgen.jvp(f, (0.7,), (1.0,))[1] == pytest.approx(numeric_grad(f, 0.7), rel=1e-6)
        assert adgen.vjp(f, 0.7)[1](1.0)[0] == pytest.approx(numeric_grad(f, 0.7), rel=1e-6)


def test_editing_the_file_and_reloading_gives_the_new_derivative(tmp_path, sys_path_guard):
    mod = write_module(tmp_path, STALE)
    assert adgen.grad(mod.f)(1.0) == pytest.approx(np.cos(1.0) * 2.0 + 2.0)
    assert adgen.grad(mod.reads_c_in_loop)(1.0) == pytest.approx(6.0)
    for k, (old, new) in enumerate(
        [
            ("return x * x\n", "return x * x * x\n"),
            ("C = 2.0", "C = 5.0"),
            ("total = total + C * x", "total = total + C * x * x"),
        ]
    ):
        edit_module_file(mod, old, new)
        importlib.reload(mod)
        for fn in (mod.f, mod.reads_c_in_loop):
            for x in (0.4, 1.3):
                assert adgen.grad(fn)(x) == pytest.approx(numeric_grad(fn, x), rel=1e-6), (k, fn)
                value, tangent = adgen.jvp(fn, (x,), (1.0,))
                assert value == pytest.approx(fn(x))
                assert tangent == pytest.approx(numeric_grad(fn, x), rel=1e-6)
    assert adgen.grad(mod.f)(1.0) == pytest.approx(np.cos(1.0) * 5.0 + 3.0)
    assert adgen.grad(mod.reads_c_in_loop)(1.0) == pytest.approx(30.0)


def test_editing_a_helper_module_and_reloading_it(tmp_path, sys_path_guard):
    helpers = write_module(tmp_path, "def h(x):\n    return x * 2.0\n")
    user = write_module(
        tmp_path,
        f"""
        from {helpers.__name__} import h


        def f(x):
            return h(x) + x
        """,
    )
    assert adgen.grad(user.f)(1.0) == 3.0
    edit_module_file(helpers, "x * 2.0", "x * 7.0")
    importlib.reload(helpers)
    # `from ... import h` keeps the old h in user's namespace: Python and adgen agree
    assert user.f(1.0) == 3.0 and adgen.grad(user.f)(1.0) == 3.0
    importlib.reload(user)
    assert user.f(1.0) == 8.0 and adgen.grad(user.f)(1.0) == 8.0


@pytest.mark.parametrize("what", ["reload", "constant"])
def test_module_attribute_dependencies_are_checked(tmp_path, sys_path_guard, what):
    helpers = write_module(tmp_path, "SCALE = 2.0\n\n\ndef h(x):\n    return x * 2.0\n")
    user = write_module(
        tmp_path,
        f"""
        import {helpers.__name__} as hm


        def f(x):
            return hm.h(x) + hm.SCALE * x
        """,
    )
    g = adgen.grad(user.f)
    assert g(1.0) == 4.0
    if what == "reload":
        edit_module_file(helpers, "x * 2.0", "x * 7.0")
        importlib.reload(helpers)
    else:
        helpers.SCALE = 10.0
    assert g(1.0) == pytest.approx(numeric_grad(user.f, 1.0), rel=1e-6)


def test_changing_a_helper_default_gives_the_new_derivative(tmp_path, sys_path_guard):
    mod = write_module(
        tmp_path,
        """
        def h(x, a=2.0):
            return x * a


        def f(x):
            return h(x)
        """,
    )
    g = adgen.grad(mod.f)
    assert g(1.0) == 2.0
    mod.h.__defaults__ = (4.0,)
    assert mod.f(1.0) == 4.0
    assert g(1.0) == 4.0


def test_changing_the_functions_own_defaults_gives_the_new_derivative(tmp_path, sys_path_guard):
    mod = write_module(tmp_path, "def f(x, a=2.0):\n    return x * x * a\n")
    g = adgen.grad(mod.f)
    assert g(1.0) == 4.0
    mod.f.__defaults__ = (5.0,)
    assert g(1.0) == 10.0


def test_file_edited_but_not_reloaded_is_not_silently_differentiated(tmp_path, sys_path_guard):
    if sys.dont_write_bytecode:
        pytest.xfail(
            "known limitation: adgen tells an edited-but-not-reloaded file from the module's "
            "bytecode cache, and this interpreter writes none (PYTHONDONTWRITEBYTECODE)"
        )
    mod = write_module(tmp_path, "def f(x):\n    return x * x\n")
    edit_module_file(mod, "return x * x", "return x * x * x")
    # mod.f still computes x * x; its derivative must be 2x (or adgen must refuse)
    try:
        value, g = adgen.value_and_grad(mod.f)(2.0)
    except adgen.AdgenError:
        return
    assert (value, g) == (4.0, 4.0)


def test_closure_cell_change_gives_the_new_derivative():
    def make():
        k = 2.0

        def f(x):
            return np.sin(x) * k + x * k

        def set_k(v):
            nonlocal k
            k = v

        return f, set_k

    f, set_k = make()
    g = adgen.grad(f)
    for k in (2.0, 3.0, -0.5, 3.0):
        set_k(k)
        assert g(0.4) == pytest.approx(np.cos(0.4) * k + k)
        assert g(0.4) == pytest.approx(numeric_grad(f, 0.4), rel=1e-6)
        assert adgen.jvp(f, (0.4,), (1.0,))[1] == pytest.approx(np.cos(0.4) * k + k)


def test_closure_over_a_helper_function_that_changes():
    def make():
        def inner(x):
            return x * x

        def f(x):
            return inner(x) + 1.0

        def swap(new):
            nonlocal inner
            inner = new

        return f, swap

    f, swap = make()
    g = adgen.grad(f)
    assert g(3.0) == 6.0

    def linear(x):
        return 5.0 * x

    swap(linear)
    assert g(3.0) == 5.0


# -- concurrency -----------------------------------------------------------------------------------
THREADED = """
import numpy as np


def helper(v, a):
    return np.tanh(v * a)


def straight(x, w):
    return np.sum(np.sin(x) * w + helper(x, 0.5))


def loop(x, w):
    h = x * 1.0
    for i in range(4):
        h = helper(h, w[0]) + 0.1 * x
    return np.sum(h * h)


def inplace(x, w):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[i] = x[i] * w[i] + y[i - 1]
    return np.sum(y * y)


def branchy(x, w):
    total = 0.0
    k = 0
    while k < 6:
        k = k + 1
        if k % 2 == 0:
            continue
        total = total + np.sum(np.cos(x * k) * w)
    return total
"""


def _task(mod, name, kind, x, w):
    f = getattr(mod, name)
    if kind == "grad":
        return adgen.grad(f, wrt=(0, 1))(x, w)
    if kind == "jvp":
        return adgen.jvp(f, (x, w), (np.ones_like(x), w * 0.5))
    if kind == "vjp":
        return adgen.vjp(f, x, w)[1](2.0)
    if kind == "source":
        return adgen.source(f, mode="forward", wrt=(0, 1)) + adgen.source(f, wrt="w")
    raise AssertionError(kind)


def _flat(result):
    if isinstance(result, str):
        return [result]
    if isinstance(result, tuple):
        return [leaf for r in result for leaf in _flat(r)]
    return [np.asarray(result)]


@pytest.mark.parametrize("clear_while_running", [False, True])
def test_many_threads_transforming_and_calling(tmp_path, sys_path_guard, clear_while_running):
    mod = write_module(tmp_path, THREADED)
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal(5), rng.uniform(0.5, 1.5, 5)
    names = ["straight", "loop", "inplace", "branchy"]
    kinds = ["grad", "jvp", "vjp", "source"]
    jobs = [(names[(t + k) % 4], kinds[(t * 3 + k) % 4]) for t in range(8) for k in range(20)]

    adgen.backend.cache.clear()
    reference = {job: _flat(_task(mod, *job, x, w)) for job in set(jobs)}
    adgen.backend.cache.clear()

    barrier = threading.Barrier(8)
    stop = threading.Event()

    def worker(t):
        barrier.wait()
        results = []
        for k in range(20):
            job = jobs[t * 20 + k]
            results.append((job, _flat(_task(mod, *job, x, w))))
        return results

    def clearer():
        while not stop.is_set():
            adgen.backend.cache.clear()
            time.sleep(0.001)

    clearing = threading.Thread(target=clearer) if clear_while_running else None
    if clearing:
        clearing.start()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            outcomes = [f.result(timeout=120) for f in [pool.submit(worker, t) for t in range(8)]]
    finally:
        stop.set()
        if clearing:
            clearing.join()
    count = 0
    for results in outcomes:
        for job, got in results:
            want = reference[job]
            assert len(got) == len(want)
            for a, b in zip(got, want):
                if isinstance(a, str):
                    assert a == b
                else:
                    np.testing.assert_array_equal(a, b)
            count += 1
    assert count == 160


def test_threads_with_different_functions_of_the_same_shape(tmp_path, sys_path_guard):
    """Many distinct functions with identical variable names, transformed at once."""
    source = "import numpy as np\n\n" + "\n".join(
        f"def f{i}(x):\n    y = np.sin(x) * {i + 1}.0\n    return np.sum(y * x)\n"
        for i in range(16)
    )
    mod = write_module(tmp_path, source)
    x = np.linspace(-1.0, 1.0, 4)
    adgen.backend.cache.clear()
    barrier = threading.Barrier(8)

    def worker(t):
        barrier.wait()
        out = []
        for k in range(20):
            i = (t * 5 + k) % 16
            out.append((i, adgen.grad(getattr(mod, f"f{i}"))(x)))
        return out

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(worker, range(8)))
    for out in outcomes:
        for i, g in out:
            np.testing.assert_allclose(g, (i + 1) * (np.cos(x) * x + np.sin(x)), rtol=1e-12)


# -- scale -----------------------------------------------------------------------------------------
def _straight_line_source(n: int) -> str:
    lines = ["import numpy as np", "", "", "def big(x, y):", "    a0 = x * y"]
    for i in range(1, n):
        op = i % 4
        if op == 0:
            lines.append(f"    a{i} = a{i - 1} * 0.999 + x")
        elif op == 1:
            lines.append(f"    a{i} = np.sin(a{i - 1}) + y")
        elif op == 2:
            lines.append(f"    a{i} = a{i - 1} - 0.5 * x")
        else:
            lines.append(f"    a{i} = a{i - 1} * y")
    lines.append(f"    return np.sum(a{n - 1})")
    return "\n".join(lines) + "\n"


def _fd_elementwise(f, x, y, eps=1e-6):
    """Finite differences of a sum of elementwise-independent terms (one pass per argument)."""
    gx = (f(x + eps, y) - f(x - eps, y)) / (2 * eps)
    gy = (f(x, y + eps) - f(x, y - eps)) / (2 * eps)
    return gx, gy


@pytest.fixture(scope="module")
def big_mod(tmp_path_factory):
    saved = list(sys.path)
    mod = write_module(tmp_path_factory.mktemp("big"), _straight_line_source(2000))
    yield mod
    sys.path[:] = saved


def _elementwise_fd(mod, x, y):
    def per_element(i):
        def fi(xi, yi):
            xx, yy = x.copy(), y.copy()
            xx[i], yy[i] = xi, yi
            return mod.big(xx, yy)

        return fi

    gx, gy = np.zeros_like(x), np.zeros_like(y)
    for i in range(x.size):
        fi = per_element(i)
        gx[i], gy[i] = _fd_elementwise(fi, x[i], y[i])
    return gx, gy


def test_2000_statement_function_reverse_mode(big_mod):
    adgen.backend.cache.clear()
    x, y = np.array([0.3, -0.2]), np.array([1.0001, 0.9])
    start = time.perf_counter()
    gx, gy = adgen.grad(big_mod.big, wrt=(0, 1))(x, y)
    elapsed = time.perf_counter() - start
    print(f"\n2,000-statement function, reverse mode (transform + call): {elapsed:.2f} s")
    assert elapsed < 60.0
    fx, fy = _elementwise_fd(big_mod, x, y)
    np.testing.assert_allclose(gx, fx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gy, fy, rtol=1e-5, atol=1e-6)
    start = time.perf_counter()
    adgen.grad(big_mod.big, wrt=(0, 1))(x, y)
    assert time.perf_counter() - start < 1.0  # cached


def test_2000_statement_function_forward_mode(big_mod):
    x, y = np.array([0.3, -0.2]), np.array([1.0001, 0.9])
    start = time.perf_counter()
    source = adgen.source(big_mod.big, mode="forward", wrt=(0, 1))
    elapsed = time.perf_counter() - start
    print(f"\n2,000-statement function, forward mode (transform): {elapsed:.2f} s")
    assert elapsed < 60.0
    assert source.count("\n") > 4000
    _, tangent = adgen.jvp(big_mod.big, (x, y), (np.array([1.0, 0.0]), np.zeros(2)))
    fx, _ = _elementwise_fd(big_mod, x, y)
    assert tangent == pytest.approx(fx[0], rel=1e-5)


def _chain_source(n: int) -> str:
    parts = ["import numpy as np", ""]
    for i in range(n - 1):
        parts.append(f"def f{i}(x):\n    return np.sin(f{i + 1}(x)) * 0.5 + x\n")
    parts.append(f"def f{n - 1}(x):\n    return x * x\n")
    return "\n".join(parts)


def _chain_grad(n: int, x: float) -> float:
    # f_{n-1} = x^2, f_i = 0.5 sin(f_{i+1}) + x
    values = [0.0] * n
    values[n - 1] = x * x
    derivs = [0.0] * n
    derivs[n - 1] = 2 * x
    for i in range(n - 2, -1, -1):
        values[i] = 0.5 * np.sin(values[i + 1]) + x
        derivs[i] = 0.5 * np.cos(values[i + 1]) * derivs[i + 1] + 1.0
    return derivs[0]


def _timed_call_tree(mod, root, x, expected, rel=1e-9):
    adgen.backend.cache.clear()
    start = time.perf_counter()
    g = adgen.grad(root)(x)
    reverse = time.perf_counter() - start
    start = time.perf_counter()
    _, t = adgen.jvp(root, (x,), (1.0,))
    forward = time.perf_counter() - start
    print(f"\ncall tree of 200 functions: reverse {reverse:.2f} s, forward {forward:.2f} s")
    assert reverse < 60.0 and forward < 60.0
    assert g == pytest.approx(expected, rel=rel)
    assert t == pytest.approx(expected, rel=rel)


def test_call_chain_of_200_functions(tmp_path, sys_path_guard):
    mod = write_module(tmp_path, _chain_source(200))
    _timed_call_tree(mod, mod.f0, 0.3, _chain_grad(200, 0.3))


def test_call_chain_at_the_depth_limit_and_beyond(tmp_path, sys_path_guard):
    from adgen.frontend.lower.calls import MAX_INLINE_DEPTH

    depth = MAX_INLINE_DEPTH
    ok = write_module(tmp_path, _chain_source(depth + 1))  # f0 .. f<depth>: depth nested calls
    assert adgen.grad(ok.f0)(0.3) == pytest.approx(_chain_grad(depth + 1, 0.3), rel=1e-9)
    deep = write_module(tmp_path, _chain_source(depth + 2))
    with pytest.raises(
        adgen.UnsupportedSyntaxError, match=f"nested more than {depth} deep"
    ) as info:
        adgen.grad(deep.f0)(0.3)
    assert str(info.value).startswith(f"{deep.__file__}:")
    assert "hint:" in str(info.value)


def test_call_tree_of_200_functions(tmp_path, sys_path_guard):
    """200 functions, f_i calls f_{2i+1} and f_{2i+2}: every one inlined exactly once."""
    n = 200
    parts = ["import numpy as np", ""]
    for i in range(n):
        kids = [k for k in (2 * i + 1, 2 * i + 2) if k < n]
        inner = " + ".join(f"f{k}(x * 0.9)" for k in kids) or "x * x"
        parts.append(f"def f{i}(x):\n    return np.sin({inner}) * 0.5 + x\n")
    mod = write_module(tmp_path, "\n".join(parts))
    x = 0.3
    _timed_call_tree(mod, mod.f0, x, numeric_grad(mod.f0, x, eps=1e-5), rel=1e-6)
    adgen.testing.check_grads(mod.f0, np.array([0.3, -0.2]))


# -- found on the way ------------------------------------------------------------------------------
def test_trace_with_values_through_a_branch(tmp_path, sys_path_guard):
    mod = write_module(
        tmp_path,
        """
        def f(x):
            if x > 0.0:
                y = x * 2.0
            else:
                y = x
            z = y * 3.0
            return z
        """,
    )
    text = str(adgen.trace(mod.f, 1.0))
    assert "6" in text


# -- errors people can act on (what tests/test_errors.py does not cover) ---------------------------
ERRORS = """
import numpy as np


async def uses_async(x):
    return x * 2.0


def uses_async_inside(x):
    async def inner():
        return 1.0

    return x


def uses_match(x, k):
    match k:
        case 1:
            y = x
        case _:
            y = x * 2.0
    return y


def uses_try_finally(x):
    try:
        y = x * 2.0
    except ValueError:  # goes on: adgen does not read this `try`
        y = x
    finally:
        pass
    return y


def uses_with_two(x):
    with open("a") as a, open("b") as b:
        pass
    return x


def uses_linalg(x):
    return np.sum(np.linalg.tensorinv(x))


def uses_nextafter(x):
    return np.sum(np.nextafter(x, 2.0))


def two(x, n, s, flag):
    return x * n


def returns_tuple(x):
    return x, x * 2.0


def returns_str(x):
    return "a"


def vector(x):
    return np.sin(x)
"""


@pytest.fixture(scope="module")
def errs(tmp_path_factory):
    saved = list(sys.path)
    mod = write_module(tmp_path_factory.mktemp("errs"), ERRORS)
    yield mod
    sys.path[:] = saved


def _line(text):
    return ERRORS.splitlines().index(text) + 1


def _assert_located(err, mod, line):
    assert isinstance(err, adgen.AdgenError) and not isinstance(err, adgen.InternalError)
    assert str(err).startswith(f"{mod.__file__}:{line}:"), str(err)
    assert "hint:" in str(err)


@pytest.mark.parametrize(
    "name, line, kind",
    [
        ("uses_async_inside", "    async def inner():", adgen.UnsupportedSyntaxError),
        ("uses_match", "    match k:", adgen.UnsupportedSyntaxError),
        ("uses_try_finally", "    try:", adgen.UnsupportedSyntaxError),
        ("uses_with_two", '    with open("a") as a, open("b") as b:', adgen.UnsupportedSyntaxError),
        ("uses_linalg", "    return np.sum(np.linalg.tensorinv(x))", adgen.NoRuleError),
        ("uses_nextafter", "    return np.sum(np.nextafter(x, 2.0))", adgen.NoRuleError),
    ],
)
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_more_refusals_name_file_and_line(errs, name, line, kind, mode):
    with pytest.raises(kind) as info:
        adgen.source(getattr(errs, name), mode=mode)
    _assert_located(info.value, errs, _line(line))


def test_async_function_is_refused_at_its_def(errs):
    with pytest.raises(adgen.UnsupportedSyntaxError) as info:
        adgen.source(errs.uses_async)
    _assert_located(info.value, errs, _line("async def uses_async(x):"))


@pytest.mark.parametrize(
    "args, bad",
    [
        ((1.0, 2, "s", True), None),
        ((3, 2, "s", True), "x"),
        ((True, 2, "s", True), "x"),
        (("s", 2, "s", True), "x"),
        ((np.arange(3), 2, "s", True), "x"),
    ],
)
def test_non_float_wrt_arguments_are_refused_with_location(errs, args, bad):
    def_line = _line("def two(x, n, s, flag):")
    if bad is None:
        assert adgen.grad(errs.two)(*args) == 2.0
        for wrt in ("n", "s", "flag"):
            with pytest.raises(adgen.NonDifferentiableError, match=f"`{wrt}`") as info:
                adgen.grad(errs.two, wrt=wrt)(*args)
            _assert_located(info.value, errs, def_line)
        for i in (1, 2, 3):
            tangents = [None] * 4
            tangents[i] = 1.0
            with pytest.raises(adgen.NonDifferentiableError) as info:
                adgen.jvp(errs.two, args, tangents)
            _assert_located(info.value, errs, def_line)
        return
    for call in (
        lambda: adgen.grad(errs.two)(*args),
        lambda: adgen.value_and_grad(errs.two, wrt=(0,))(*args),
        lambda: adgen.jvp(errs.two, args, (np.ones(np.shape(args[0])), None, None, None)),
    ):
        with pytest.raises(adgen.NonDifferentiableError, match=f"`{bad}`") as info:
            call()
        _assert_located(info.value, errs, def_line)


@pytest.mark.parametrize("wrt", ["nope", 4, ("x", "nope"), -5])
def test_wrt_naming_no_parameter_message_starts_with_file_line(errs, wrt):
    def_line = _line("def two(x, n, s, flag):")
    for make in (
        lambda: adgen.grad(errs.two, wrt=wrt),
        lambda: adgen.value_and_grad(errs.two, wrt=wrt),
        lambda: adgen.source(errs.two, wrt=wrt),
        lambda: adgen.differentiate(wrt=wrt)(errs.two).grad,
    ):
        with pytest.raises(adgen.WrtError) as info:
            make()
        _assert_located(info.value, errs, def_line)


def test_non_scalar_results_passed_to_grad(errs):
    with pytest.raises(adgen.NonScalarOutputError, match="tuple of 2") as info:
        adgen.grad(errs.returns_tuple)(1.0)
    _assert_located(info.value, errs, _line("def returns_tuple(x):"))
    with pytest.raises(adgen.NonScalarOutputError, match=r"\(2, 2\)") as info:
        adgen.differentiate(errs.vector).grad(np.ones((2, 2)))
    _assert_located(info.value, errs, _line("def vector(x):"))
    with pytest.raises(adgen.NonScalarOutputError):  # (an array of one number is that number)
        adgen.value_and_grad(errs.vector)(np.ones(3))


def test_grad_of_a_string_result_is_refused(errs):
    with pytest.raises(adgen.NonScalarOutputError):
        adgen.grad(errs.returns_str)(1.0)


def test_helper_whose_source_cannot_be_read(tmp_path, sys_path_guard):
    namespace: dict = {}
    exec("def secret(x):\n    return x * 3.0\n", namespace)
    mod = write_module(tmp_path, "def f(x):\n    return secret(x) + x\n")
    mod.secret = namespace["secret"]
    with pytest.raises(adgen.AdgenError, match="cannot read the source") as info:
        adgen.grad(mod.f)(1.0)
    _assert_located(info.value, mod, 2)
    # and a function whose file was deleted after import
    gone = write_module(tmp_path, "def g(x):\n    return x * x\n")
    Path(gone.__file__).unlink()
    linecache.checkcache(gone.__file__)
    with pytest.raises(adgen.SourceUnavailableError) as info:
        adgen.grad(gone.g)(1.0)
    assert str(info.value).startswith(f"{gone.__file__}:1:")
    assert "hint:" in str(info.value)
