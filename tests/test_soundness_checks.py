"""Issue 33, parts 1-3: what an expression reads before its target is bound; a loop's saved
``range``; refusals decided when the derivative code runs.

* ``z = (a and z)``: the second operand is the old ``z``. adgen bound ``a`` to ``z`` before
  the test, so ``and`` returned ``a`` (a silently wrong value and derivative in a loop).
* Reverse mode saved a ``reversed(range(...))`` a loop ran over as a shape record and
  crashed on it ("Cannot interpret 'range(2, -1, -1)' as a data type").
* A refusal that only the argument kinds decide (``z += z`` where ``z`` is a number or an
  array) was an ``assert`` in the generated code: a ``DerivativeError`` wrapping an
  ``AssertionError`` when it fired, and gone under ``python -O`` (a silently wrong
  derivative). It is now a call, ``rt.refuse_unless``, reported as the same
  ``UnsupportedSyntaxError`` a refusal decided when transforming is.

Every test states the exact answer, in both modes and at second order.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adgen
from adgen.errors import UnsupportedSyntaxError

HERE = __file__


def line_of(text: str) -> int:
    with open(HERE, encoding="utf-8") as fh:
        for k, line in enumerate(fh, start=1):
            if text in line:
                return k
    raise AssertionError(text)


# -- 1. operands that read the name the expression binds -------------------------------------
def and_reads_target(u):
    z = u * 1.0
    for i in range(2):
        z = np.sqrt(z * z + 1.0) and z  # always z: the square root is never 0
        z *= 2.0
    return z


def or_reads_target(u):
    z = u * 1.0
    for i in range(2):
        z = 0.0 * z or z * 3.0  # always 3z (0.0 is false)
        z *= 2.0
    return z


def or_chain_reads_target(u):
    z = u * 1.0
    for i in range(2):
        z = z * 0.0 or z + 1.0 or z  # z + 1 (never 0 at the points tested)
    return z


def ifexp_around_and(u):
    z = u * 1.0
    for i in range(2):
        z = z * 2.0 if z > 0 else (z * z and z)  # 2z or z
    return z


def nested_bool_ops(u):
    z = u * 1.0
    for i in range(2):
        z = (z > 0.0 and (z * 2.0 or z)) or z - 1.0  # 2z where z > 0, else z - 1
    return z * 1.0


def and_in_a_sum(u):
    z = u
    z = (z and z * 2.0) + (z or 1.0)  # 3z for z != 0
    return z


def tuple_swap_with_and(u):
    a, b = u, u * 2.0
    for i in range(2):
        a, b = b, (a and b)
    return a * b


def _by_hand(name: str, u: float) -> tuple[float, float, float]:
    """value, first and second derivative at ``u`` (away from the branches' edges)."""
    if name == "and_reads_target":
        return 4.0 * u, 4.0, 0.0
    if name == "or_reads_target":
        return 36.0 * u, 36.0, 0.0
    if name == "or_chain_reads_target":
        return u + 2.0, 1.0, 0.0
    if name == "ifexp_around_and":
        return (4.0 * u, 4.0, 0.0) if u > 0 else (u, 1.0, 0.0)
    if name == "nested_bool_ops":
        if u > 0:
            return 4.0 * u, 4.0, 0.0
        return u - 2.0, 1.0, 0.0
    if name == "and_in_a_sum":
        return 3.0 * u, 3.0, 0.0
    if name == "tuple_swap_with_and":  # (a, b) -> (b, b): a = b = 2u after the loop
        return 4.0 * u * u, 8.0 * u, 8.0
    raise AssertionError(name)


BOOL_CASES = [
    and_reads_target,
    or_reads_target,
    or_chain_reads_target,
    ifexp_around_and,
    nested_bool_ops,
    and_in_a_sum,
    tuple_swap_with_and,
]


@pytest.mark.parametrize("u", [-0.3, 0.7, -1.6])
@pytest.mark.parametrize("fn", BOOL_CASES, ids=lambda f: f.__name__)
def test_an_operand_reads_the_old_value_of_the_target(fn, u):
    value, first, second = _by_hand(fn.__name__, u)
    assert fn(u) == pytest.approx(value, rel=1e-12)  # the formula is Python's
    got_value, got_grad = adgen.value_and_grad(fn)(u)
    assert (got_value, got_grad) == pytest.approx((value, first), rel=1e-12)
    assert adgen.jvp(fn, (u,), (1.0,)) == pytest.approx((value, first), rel=1e-12)
    assert adgen.grad(adgen.grad(fn))(u) == pytest.approx(second, abs=1e-12)
    assert adgen.jvp(adgen.grad(fn), (u,), (1.0,))[1] == pytest.approx(second, abs=1e-12)


# -- 2. nested loops with break, over reversed(range(...)), zip and enumerate -----------------
def break_in_reversed_middle_loop(x, w):
    for i in range(3):
        for j in reversed(range(3)):
            for k in range(3):
                if np.sum(w) > 0.0:
                    break
            if x > 0.0:
                break
    return np.sum(w * x)


def reversed_loops_with_work(x, w):
    s = x * 1.0
    for j in reversed(range(len(w))):
        for k in reversed(range(j)):
            s = s * w[k] + w[j]
            if k == 0:
                break
        if s < -5.0:
            break
    return s


def zip_enumerate_reversed(x, w):
    s = x * 1.0
    for i, (a, b) in enumerate(zip(w, w[::-1])):
        for j in reversed(range(i + 1)):
            s = s + a * b * x
            if j < 1:
                break
    return s


def zip_with_reversed_range(s):
    z = s * 0.25
    for i in range(2):
        for j, m in zip(range(3), reversed(range(3))):  # j + m == 2; j = 0, 1, then break
            z = z * 0.5 + np.tanh(s) * 0.125 * (j + m)
            if j == 1:
                break
    return z


@pytest.mark.parametrize("s", [0.3, -1.2])
def test_zip_over_a_reversed_range(s):
    """``reversed(range(3))`` in a ``zip``: adgen asked the ``reversed`` object its length
    (a crash in reverse mode); it is a range read backwards, as in a plain ``for``."""
    # four steps of z = z / 2 + tanh(s) / 4
    value = s / 64.0 + np.tanh(s) * 0.25 * 1.875
    first = 1.0 / 64.0 + 0.46875 * (1.0 - np.tanh(s) ** 2)
    second = 0.46875 * -2.0 * np.tanh(s) * (1.0 - np.tanh(s) ** 2)
    assert adgen.value_and_grad(zip_with_reversed_range)(s) == pytest.approx((value, first))
    assert adgen.jvp(zip_with_reversed_range, (s,), (1.0,)) == pytest.approx((value, first))
    assert adgen.grad(adgen.grad(zip_with_reversed_range))(s) == pytest.approx(second)
    assert adgen.hvp(zip_with_reversed_range)(s, 1.0) == pytest.approx(second)


W0 = np.array([0.2, 1.0, -0.3])


def _loops_by_hand(name: str, x: float) -> tuple[float, np.ndarray, float]:
    """d/dx, d/dw and d2/dx2 at (x, W0), derived by hand."""
    w0, w1, w2 = W0
    if name == "break_in_reversed_middle_loop":
        return float(np.sum(W0)), np.full(3, x), 0.0
    if name == "reversed_loops_with_work":
        # j = 2: k = 1, then k = 0 (break after it): s = (x*w1 + w2)*w0 + w2; j = 1: k = 0
        # s = s*w0 + w1; j = 0: no k
        s2 = (x * w1 + w2) * w0 + w2
        dx = w1 * w0 * w0
        dw0 = (x * w1 + w2) * w0 + s2  # from both products by w0
        dw1 = x * w0 * w0 + 1.0
        dw2 = w0 * w0 + w0
        return dx, np.array([dw0, dw1, dw2]), 0.0
    if name == "zip_enumerate_reversed":
        # i = 0: j = 0; i = 1: j = 1 then j = 0 (break); i = 2: j = 2, 1, 0 (break at 0)
        pairs = [(w0 * w2, 1), (w1 * w1, 2), (w2 * w0, 3)]
        dx = 1.0 + sum(p * n for p, n in pairs)
        dw = np.array([(w2 * 1 + w2 * 3) * x, 2 * w1 * 2 * x, (w0 * 1 + w0 * 3) * x])
        return dx, dw, 0.0
    raise AssertionError(name)


@pytest.mark.parametrize("x", [0.5, -0.5])
@pytest.mark.parametrize(
    "fn",
    [break_in_reversed_middle_loop, reversed_loops_with_work, zip_enumerate_reversed],
    ids=lambda f: f.__name__,
)
def test_nested_loops_with_break_over_reversed_ranges(fn, x):
    dx, dw, dxx = _loops_by_hand(fn.__name__, x)
    gx, gw = adgen.grad(fn, wrt=(0, 1))(x, W0)
    assert gx == pytest.approx(dx, rel=1e-12)
    np.testing.assert_allclose(gw, dw, rtol=1e-12, atol=1e-15)
    assert adgen.jvp(fn, (x, W0), (1.0, None))[1] == pytest.approx(dx, rel=1e-12)
    e = np.array([0.3, -0.1, 0.7])
    assert adgen.jvp(fn, (x, W0), (None, e))[1] == pytest.approx(dw @ e, rel=1e-12)
    assert adgen.grad(adgen.grad(fn))(x, W0) == pytest.approx(dxx, abs=1e-12)
    # d/dx of d/dw, by forward mode over reverse mode, against differences of d/dw
    mixed = adgen.jvp(adgen.grad(fn, wrt=1), (x, W0), (1.0, None))[1]
    h = 1e-6
    _, dw_plus, _ = _loops_by_hand(fn.__name__, x + h)
    _, dw_minus, _ = _loops_by_hand(fn.__name__, x - h)
    np.testing.assert_allclose(mixed, (dw_plus - dw_minus) / (2 * h), rtol=1e-6, atol=1e-9)


# -- 3. refusals the argument kinds decide, when the code runs --------------------------------
def doubles_in_place(x, w):
    z = x
    z += z  # adgen: a number gets a new value; an array x would be changed in place
    return np.sum(z * w)


def test_a_refusal_decided_when_the_code_runs_is_a_refusal():
    """Nine shapes of ``w`` make adgen serve the next call with its general code, which
    decides the check when it runs: a 0-d array ``x`` is refused there, naming the line."""
    for n in range(1, 10):
        w = np.linspace(0.5, 1.5, n)
        assert adgen.grad(doubles_in_place)(0.7, w) == pytest.approx(2.0 * np.sum(w))
    with pytest.raises(UnsupportedSyntaxError) as info:
        adgen.grad(doubles_in_place)(np.array(0.7), np.ones(10))
    err = info.value
    assert "in-place update of `z`" in err.message
    assert err.loc is not None and err.loc.filename == HERE
    assert err.loc.lineno == line_of("    z += z  # adgen:")
    assert "z = z + ..." in err.hint
    with pytest.raises(UnsupportedSyntaxError):  # forward mode, the same
        adgen.jvp(doubles_in_place, (np.array(0.7), np.ones(3)), (np.array(1.0), None))


def test_the_general_code_checks_with_a_call_not_an_assert():
    source = adgen.source(doubles_in_place)
    assert "assert" not in source
    assert "rt.refuse_unless(" in source


def test_a_refusal_decided_by_reading_derivative_code_again():
    """At second order adgen reads its own code again, with the check in it: the argument
    kinds decide it then."""
    with pytest.raises(UnsupportedSyntaxError, match="in-place update of `z`"):
        adgen.hvp(doubles_in_place)(np.array(0.7), np.ones(2), np.array(1.0))
    assert adgen.hvp(doubles_in_place)(0.7, np.ones(2), 1.0) == pytest.approx(0.0)


def unpacks(w):
    a, b = w
    return a * b


def test_unpacking_the_wrong_number_of_values_raises_as_python_does():
    """The function's own error, as Python raises it running the function (the derivative
    code checks it too, and stops instead of going on with two of three rows)."""
    assert adgen.grad(unpacks)(np.array([2.0, 3.0])).tolist() == [3.0, 2.0]
    for n in range(3, 12):  # through the general code too
        with pytest.raises(ValueError, match="too many values to unpack"):
            adgen.grad(unpacks)(np.ones(n))
    source = adgen.source(unpacks)
    assert "rt.expect(" in source and "assert" not in source


SCRIPT = """
import numpy as np
import adgen
from adgen.errors import UnsupportedSyntaxError


def f(x, w):
    z = x
    z += z
    return np.sum(z * w)


def g(w):
    a, b = w
    return a * b


for n in range(1, 10):
    adgen.grad(f)(0.7, np.ones(n))
try:
    adgen.grad(f)(np.array(0.7), np.ones(10))
    print("no refusal")
except UnsupportedSyntaxError as exc:
    print("refused at line", exc.loc.lineno)
for n in range(3, 13):
    try:
        adgen.grad(g)(np.ones(n))
        print("no error")
    except ValueError as exc:
        print(type(exc).__name__)
"""


def test_the_checks_run_under_python_dash_o(tmp_path):
    path = tmp_path / "checked_under_o.py"
    path.write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-O", str(path)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "refused at line 9"
    assert lines[1:] == ["ValueError"] * 10


def test_exported_code_refuses_too(tmp_path):
    """A module written by adgen.export raises the runtime's refusal (it needs no adgen)."""
    path = adgen.export(doubles_in_place, tmp_path / "exported_checks")
    sys.path.insert(0, str(path.parent))
    try:
        code = path.read_text(encoding="utf-8")
        assert "rt.refuse_unless(" in code and "assert" not in code
        import importlib

        mod = importlib.import_module(path.stem)
        fn = next(v for k, v in vars(mod).items() if k.endswith("_vjp"))
        assert fn(0.7, np.ones(3), 1.0)[1][0] == pytest.approx(6.0)
        with pytest.raises(Exception, match="in-place update of `z`"):
            fn(np.array(0.7), np.ones(3), 1.0)
    finally:
        sys.path.remove(str(path.parent))
