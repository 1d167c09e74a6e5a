"""Checkpointed loops (``for i in adgen.checkpoint(range(n)):``).

Every case is written once with the marker; the same function without it is built from
the source (the marker call replaced by its iterable) and reverse mode of both must give
the same value and the same gradient (the arithmetic is the same, so equality is exact).
Each case is also checked against central differences once with ``check_grads``.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads

# -- cases ---------------------------------------------------------------------------------------


def scalar_state(x, n):
    for i in adgen.checkpoint(range(n)):
        x = np.sin(x) * 1.01 + 0.1 * x
    return x


def array_state(x, n):
    for i in adgen.checkpoint(range(n)):
        x = np.sin(x) * 1.01 + 0.1 * x
    return np.sum(x * x)


def two_carried(x, v, n):
    for i in adgen.checkpoint(range(n)):
        a = -np.sin(x)
        v = v + 0.1 * a
        x = x + 0.1 * v
    return np.sum(x) + 2.0 * np.sum(v)


def uses_the_index(x, n):
    s = 0.0
    for i in adgen.checkpoint(range(n)):
        s = s + np.sum(np.cos(x * i))
        x = x * 0.9
    return s


def branch_in_body(x, n):
    for i in adgen.checkpoint(range(n)):
        if np.sum(x) > 0.0:
            x = np.tanh(x) * 1.5
        else:
            x = x * x - 0.5
    return np.sum(x)


def nested_inner_loop(x, n):
    for i in adgen.checkpoint(range(n)):
        y = x
        for j in range(3):
            y = np.sin(y) + 0.5 * x
        x = 0.5 * y
    return np.sum(x)


def while_in_body(x, n):
    for i in adgen.checkpoint(range(n)):
        k = 0
        while k < i % 3 + 1:
            x = np.cos(x) + 0.2 * x
            k = k + 1
    return np.sum(x)


def written_in_place(x, n):
    y = np.zeros(3)
    for i in adgen.checkpoint(range(n)):
        y[i % 3] = np.sin(x[i % 3]) + y[(i + 1) % 3]
        x = x * 1.1
    return np.sum(y * y)


def array_made_in_body(x, n):
    s = 0.0
    for i in adgen.checkpoint(range(n)):
        z = np.zeros(2)
        z[0] = x[0] * x[1]
        z[1] = np.sin(z[0])
        s = s + np.sum(z)
        x = x * 1.05
    return s


def bound_from_data(x):
    for i in adgen.checkpoint(range(len(x))):
        x = x + 0.1 * np.roll(x, 1) * x[i]
    return np.sum(x)


def over_rows(x, W):
    h = x
    for w in adgen.checkpoint(W):
        h = np.tanh(w * h + 0.1)
    return np.sum(h)


def every_given(x, n):
    for i in adgen.checkpoint(range(n), every=3):
        x = np.sin(x) + 0.5 * x
    return np.sum(x)


def every_positional(x, n, k):
    for i in adgen.checkpoint(range(n), k):
        x = np.sin(x) + 0.5 * x
    return np.sum(x)


def carried_list(x, n):
    xs = [x]
    for i in adgen.checkpoint(range(n)):
        x = np.sin(x) + 0.1
        xs.append(x)
    return np.sum(np.stack(xs)) + np.sum(x)


def inside_outer_loop(x, m, n):
    for j in range(m):
        for i in adgen.checkpoint(range(n + j)):
            x = np.sin(x) * 1.01 + 0.1 * x
        x = x * 0.5
    return np.sum(x)


def nested_checkpoints(x, m, n):
    for j in adgen.checkpoint(range(m)):
        for i in adgen.checkpoint(range(n)):
            x = np.sin(x) * 1.01 + 0.1 * x
        x = x * 0.9 + j
    return np.sum(x)


def rnn(h, W, steps):
    for t in adgen.checkpoint(range(steps)):
        h = np.tanh(W @ h)
    return np.sum(h * h)


def read_after_loop(x, n):
    y = x
    for i in adgen.checkpoint(range(n)):
        y = np.sin(x) * i
        x = x + y
    return np.sum(x * y)


def over_enumerate(x, W):
    for i, w in adgen.checkpoint(enumerate(W)):
        x = np.tanh(w * x) + 0.1 * i
    return np.sum(x)


def in_comprehension(x, n):
    ys = [np.sin(x * i) for i in adgen.checkpoint(range(n))]
    return np.sum(np.stack(ys)) + np.sum(x)


def _steps(x, n, k):
    for i in adgen.checkpoint(range(n), every=k):
        x = np.sin(x) + 0.5 * x
    return x


def via_helper(x, n, k):
    return np.sum(_steps(x, n, k))


# -- the same functions without the marker -------------------------------------------------------


class _Unmark(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "checkpoint":
            return node.args[0]
        return node


@pytest.fixture(scope="module")
def unmarked(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Any], Any]:
    folder = tmp_path_factory.mktemp("unmarked")
    made: dict[str, Any] = {}

    def plain(fn: Any) -> Any:
        if fn.__name__ not in made:
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
            code = ast.unparse(_Unmark().visit(tree))
            assert "adgen.checkpoint" not in code
            path = folder / f"plain_{fn.__name__}.py"
            path.write_text("import numpy as np\nimport adgen\n\n" + code + "\n")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            made[fn.__name__] = getattr(module, fn.__name__)
        return made[fn.__name__]

    return plain


def _x(k: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, k)


W3 = np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.6], [-0.2, 0.3, 0.5]])

# (function, arguments, wrt)
CASES: list[tuple[Callable[..., Any], tuple[Any, ...], tuple[int, ...]]] = []
for n in (0, 1, 2, 3, 7, 10, 17):
    CASES += [
        (scalar_state, (0.3, n), (0,)),
        (array_state, (_x(), n), (0,)),
        (two_carried, (_x(), _x(seed=1), n), (0, 1)),
        (uses_the_index, (_x(), n), (0,)),
        (branch_in_body, (_x(seed=2), n), (0,)),
        (nested_inner_loop, (_x(), n), (0,)),
        (while_in_body, (_x(), n), (0,)),
        (written_in_place, (_x(3), n), (0,)),
        (array_made_in_body, (_x(2), n), (0,)),
        (every_given, (_x(), n), (0,)),
        (carried_list, (_x(), n), (0,)),
        (rnn, (_x(3), W3, n), (0, 1)),
        (read_after_loop, (_x(), n), (0,)),
    ]
for k in (1, 2, 3, 5, 20):
    CASES.append((every_positional, (_x(), 10, k), (0,)))
for size in (0, 1, 5, 11):
    CASES.append((bound_from_data, (_x(size),), (0,)))
    CASES.append((over_rows, (_x(), _x(size * 4).reshape(size, 4)), (0, 1)))
for size in (0, 1, 6):
    CASES.append((over_enumerate, (_x(), _x(size * 4).reshape(size, 4)), (0, 1)))
for n in (1, 2, 5):
    CASES.append((in_comprehension, (_x(), n), (0,)))
for m, n in ((0, 3), (1, 0), (2, 3), (3, 5)):
    CASES.append((inside_outer_loop, (_x(), m, n), (0,)))
    CASES.append((nested_checkpoints, (_x(), m, n), (0,)))


def _id(case: tuple[Callable[..., Any], tuple[Any, ...], tuple[int, ...]]) -> str:
    fn, args, _ = case
    sizes = [str(a) if isinstance(a, int) else str(np.shape(a)) for a in args]
    return f"{fn.__name__}-{'-'.join(sizes)}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_same_gradient_as_without_checkpointing(
    case: tuple[Callable[..., Any], tuple[Any, ...], tuple[int, ...]],
    unmarked: Callable[[Any], Any],
) -> None:
    fn, args, wrt = case
    value, grads = adgen.value_and_grad(fn, wrt=wrt)(*args)
    plain_value, plain_grads = adgen.value_and_grad(unmarked(fn), wrt=wrt)(*args)
    assert np.array_equal(value, plain_value)
    if len(wrt) == 1:
        grads, plain_grads = (grads,), (plain_grads,)
    for g, p in zip(grads, plain_grads, strict=True):
        assert np.shape(g) == np.shape(p)
        np.testing.assert_allclose(g, p, rtol=1e-12, atol=1e-15)
    assert fn(*args) == pytest.approx(value, rel=1e-15)


def _moderate(args: tuple[Any, ...]) -> bool:
    """Some iterations but not many (few enough for central differences in every input)."""
    counts = [a for a in args if isinstance(a, int)] + [
        len(a) for a in args if isinstance(a, np.ndarray) and a.ndim == 2
    ]
    return all(2 <= c <= 7 for c in counts) and all(np.size(a) for a in args)


CHECKED = list({c[0].__name__: c for c in CASES if _moderate(c[1])}.values())


@pytest.mark.parametrize("case", CHECKED, ids=[_id(c) for c in CHECKED])
def test_against_finite_differences(
    case: tuple[Callable[..., Any], tuple[Any, ...], tuple[int, ...]],
) -> None:
    fn, args, wrt = case
    check_grads(fn, *args, wrt=wrt)


@pytest.mark.parametrize("k", [1, 2, 3, 8])
def test_inside_an_inlined_helper(k: int, unmarked: Callable[[Any], Any]) -> None:
    x = _x()
    got = adgen.grad(via_helper)(x, 8, k)
    assert np.array_equal(got, adgen.grad(unmarked(every_positional))(x, 8, k))


def test_exported_module_runs_without_adgen(tmp_path: Path) -> None:
    path = adgen.export(array_state, tmp_path)
    spec = importlib.util.spec_from_file_location("exported_array_state", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(tmp_path))
    x = _x()
    value, (g,) = module.array_state_vjp(x, 9, 1.0)
    assert np.array_equal(g, adgen.grad(array_state)(x, 9))
    assert value == array_state(x, 9)


def test_the_marker_returns_its_iterable() -> None:
    r = range(5)
    assert adgen.checkpoint(r) is r
    assert adgen.checkpoint(r, every=2) is r
    with pytest.raises(ValueError, match="positive integer"):
        adgen.checkpoint(r, every=0)


def test_generated_code_saves_snapshots_not_iterations() -> None:
    text = adgen.source(array_state)
    forward, adjoint = text.split("# adjoint of line", 1)
    assert "snapshots.append(" in forward and "stack.append" not in forward
    assert "rt.checkpoint_every(len(loop_1))" in forward
    # the recomputed segment saves each iteration's values: only what the adjoint reads (x);
    # the temporaries of one iteration are neither saved nor reset to zeros
    assert "snapshots.pop()" in adjoint and "stack.append(x)" in adjoint
    assert "zeros_like(x_1)" not in adjoint
    assert "checkpointed loop" in forward and "checkpointed loop" in adjoint


def test_snapshots_hold_the_loop_carried_names_only() -> None:
    # two_carried's body makes a temporary (a) and temporaries of each line; a segment's
    # start needs only the names one iteration hands to the next
    forward = adgen.source(two_carried).split("# adjoint of line", 1)[0]
    snapped = sorted(line.strip() for line in forward.splitlines() if "snapshots.append" in line)
    assert snapped == ["snapshots.append(v)", "snapshots.append(x)"]
    x, v = _x(), _x() * 0.5
    check_grads(two_carried, x, v, 12, wrt=(0, 1), modes=("reverse",))


def test_arrays_written_in_place_are_copied_into_the_snapshot() -> None:
    assert "rt.copy_of(y)" in adgen.source(written_in_place)


def test_peak_memory_grows_like_the_square_root() -> None:
    """Saved values of a plain loop grow with n; those of a checkpointed one with sqrt(n)."""
    import tracemalloc

    x = _x(200)
    g = adgen.grad(array_state)
    g(x, 2)  # compiled outside the measurement

    def peak(n: int) -> int:
        tracemalloc.start()
        g(x, n)
        used = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return used

    assert peak(1600) / peak(100) < 6.0  # sqrt: about 4; without checkpointing: about 16


def test_segment_length() -> None:
    from adgen.rules.runtime import checkpoint_every

    assert [checkpoint_every(n) for n in (0, 1, 2, 4, 5, 9, 10, 10000)] == [
        1,
        1,
        2,
        2,
        3,
        3,
        4,
        100,
    ]
    assert checkpoint_every(10, 3) == 3
    with pytest.raises(TypeError, match="positive integer"):
        checkpoint_every(10, 2.5)


def test_every_is_checked_at_run_time() -> None:
    with pytest.raises((ValueError, adgen.DerivativeError)):
        adgen.grad(every_positional)(_x(), 5, 0)


def test_forward_mode_ignores_the_marker(unmarked: Callable[[Any], Any]) -> None:
    text = adgen.source(array_state, "forward")
    assert "snapshot" not in text and "segment" not in text and "stack" not in text
    x, t = _x(), _x(seed=5)
    value, tangent = adgen.jvp(array_state, (x, 6), (t, None))
    value2, tangent2 = adgen.jvp(unmarked(array_state), (x, 6), (t, None))
    assert np.array_equal(value, value2) and np.array_equal(tangent, tangent2)


# -- refusals ------------------------------------------------------------------------------------


def on_a_while(x):
    while adgen.checkpoint(x < 3.0):
        x = x * 2.0
    return x


def not_the_iterable(x, n):
    r = adgen.checkpoint(range(n))
    for i in r:
        x = x * 2.0
    return x


def inside_the_iterable(x, n):
    for i in list(adgen.checkpoint(range(n))):
        x = x * 2.0
    return x


def over_a_tuple(x):
    for v in adgen.checkpoint((1.0, 2.0)):
        x = x * v
    return x


def bad_keyword(x, n):
    for i in adgen.checkpoint(range(n), step=2):
        x = x * 2.0
    return x


REFUSED = [
    (on_a_while, (1.0,), "while adgen.checkpoint", "adgen.checkpoint here"),
    (not_the_iterable, (1.0, 3), "r = adgen.checkpoint", "adgen.checkpoint here"),
    (inside_the_iterable, (1.0, 3), "list(adgen.checkpoint", "adgen.checkpoint here"),
    (over_a_tuple, (1.0,), "(1.0, 2.0)", "loop over a tuple or list"),
    (bad_keyword, (1.0, 3), "step=2", "this form of adgen.checkpoint"),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c[0].__name__ for c in REFUSED])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_refused_with_location(case: tuple[Any, ...], mode: str) -> None:
    fn, args, line_text, what = case
    with pytest.raises(adgen.UnsupportedSyntaxError) as info:
        adgen.source(fn, mode)
    message = str(info.value)
    _, first = inspect.getsourcelines(fn)
    body = inspect.getsource(fn).splitlines()
    line = first + next(k for k, t in enumerate(body) if line_text in t)
    assert f"{Path(__file__).name}:{line}:" in message
    assert what in message
    assert "for i in adgen.checkpoint(range(n))" in message or "range(...)" in message
