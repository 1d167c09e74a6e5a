"""The pass that collects the terms of elementwise arithmetic (``collect_terms``): the values
stay those of the code as written, up to rounding; code it cannot prove the same is left
alone; nested derivatives come out as the polynomials they are."""

from __future__ import annotations

import ast
import math
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import adgen
from adgen.backend.codeopt.collect_terms import collect_terms

_KNOWN = {
    "x": ((2, 3), "float64"),
    "y": ((3,), "float64"),
    "z": ((2, 3), "float32"),
    "s": ((), "float64"),
    "n": ((2, 3), "int64"),
}


def _code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _run(source: str, *args: object) -> object:
    space: dict[str, object] = {"np": np, "math": math}
    exec(compile(source, "<test>", "exec"), space)
    fn = next(v for k, v in space.items() if k.startswith("f"))
    return fn(*args)  # type: ignore[operator]


def _close(got: object, want: object, single: bool = False) -> None:
    """Same types, dtypes and shapes, values equal to rounding: float32's where the result
    is float32, or where ``single``, float32 values reach it (terms the code as written
    rounds to float32 on the way, ``3 * z - z * 0.5``, collected into ``z * 2.5``)."""
    if isinstance(want, (list, tuple)):
        assert isinstance(got, type(want)) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, single)
        return
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    tol = 1e-4 if np.asarray(want).dtype == np.float32 or single else 1e-11
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * (1 + np.max(np.abs(want))))


def _array_ops(text: str) -> int:
    """How many arithmetic operations a function's statements make (binary and unary)."""
    return sum(isinstance(n, (ast.BinOp, ast.UnaryOp)) for n in ast.walk(ast.parse(text)))


# operations: the arithmetic the pass reads, and others it must keep as they are
_OPS = [
    "{a} + {b}", "{a} - {b}", "{a} * {b}", "-{a}", "{a} * 2.0", "1.0 - {a}", "{a} * {a}",
    "3 * {a} - {b} * 0.5", "{a} * s", "np.tanh({a})", "np.sum({a}) * {b}", "{a} / 2.0",
    "np.full((2, 3), s, dtype=np.float64)", "np.full((2, 3), 0.5, dtype=np.float32)",
    "{a} * n", "{a}.reshape(-1)[:3]", "np.exp(-{a} * {a})",
]  # fmt: skip


def _program(pick) -> str:  # type: ignore[no-untyped-def]
    """Random straight-line code over float64, float32, int64 and 0-d arrays, with names
    bound again, loops reading names later, fills and results returned in part; ``pick``
    chooses an item of a list."""
    names = ["x", "y", "z"]
    lines = ["def f(x, y, z, s, n):"]
    for k in range(pick(list(range(2, 19)))):
        op = pick(_OPS)
        a, b = pick(names), pick(names)
        again = pick(names[3:] or names)  # (a temporary bound again)
        target = pick([f"t{k}", f"t{k}", f"t{k}", again])
        lines.append(f"    {target} = " + op.format(a=a, b=b))
        if target not in names:
            names.append(target)
        if pick(list(range(9))) == 0:
            lines.append(f"    for _ in range(2):\n        acc = {pick(names)}")
    kept = [pick(names) for _ in range(pick([1, 2, 3, 4]))]
    lines.append(f"    return ({', '.join(kept)},)")
    return "\n".join(lines) + "\n"


def _check(src: str) -> bool | None:
    """Run ``src`` as written and with its terms collected: same dtypes and shapes, values
    equal up to rounding. Whether the pass rewrote it (None: the program's own error)."""
    try:
        with np.errstate(all="ignore"):
            want = _run(src, *_args())
    except (ValueError, TypeError, AttributeError, IndexError):  # the program's own error
        return None
    written = collect_terms(src, _KNOWN)
    with np.errstate(all="ignore"):
        got = _run(written, *_args())
    _close(got, want, single="z" in src or "float32" in src)
    return written != src


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_property_random_arithmetic_keeps_its_values(data: st.DataObject) -> None:
    """With its terms collected, random code's every result has the same dtype and shape
    and the same values up to rounding."""
    _check(_program(lambda items: data.draw(st.sampled_from(items))))


def test_random_arithmetic_is_rewritten_often() -> None:
    """The property above is not vacuous: of 300 random programs that run, the pass writes
    a sixth or more anew (the others: no run of arithmetic to gain from, values of mixed
    dtypes, or an operation that may write into an array)."""
    import random

    rng = random.Random(20261128)
    outcomes = [_check(_program(rng.choice)) for _ in range(300)]
    ran = [o for o in outcomes if o is not None]
    assert len(ran) > 150
    assert sum(ran) >= len(ran) / 6, (sum(ran), len(ran))


def _tanh_sum(x):
    return np.sum(np.tanh(x))


_d1 = adgen.grad(_tanh_sum)


def _level1(x):
    return np.sum(_d1(x))


_d2 = adgen.grad(_level1)


def _level2(x):
    return np.sum(_d2(x))


_d3 = adgen.grad(_level2)


def _level3(x):
    return np.sum(_d3(x))


def test_a_nested_derivative_is_its_polynomial() -> None:
    """The fourth derivative of tanh by nesting grad: tanh, one square, and Horner's scheme
    for 16 t - 40 t^3 + 24 t^5 (and the value, the third derivative's sum), equal to the
    exact polynomial."""
    x = np.linspace(-3.0, 3.0, 5000)
    t = np.tanh(x)
    np.testing.assert_allclose(
        adgen.grad(_level3)(x), 16 * t - 40 * t**3 + 24 * t**5, rtol=1e-12, atol=1e-12
    )
    code = adgen.source(_level3, args=(x,))
    assert _array_ops(code) <= 15, code  # (of them 6 on numbers: the coefficients)
    assert "adjoint of line 73" not in code  # (the comments of code made no more)


def _nested(x):
    return np.sum(_level(x))


def _inner(x):
    return np.sum(np.tanh(x) * np.sin(x))


_level = adgen.grad(_inner)


def test_nested_derivative_code_is_shorter_and_agrees_with_general_code() -> None:
    """The specialised code of a gradient of a gradient has fewer arithmetic operations than
    the general code (which the pass does not touch: no shapes) and the same values."""
    from adgen.middle.shapes import describe
    from adgen.pipeline import derivative, run

    x = np.random.default_rng(3).normal(size=(50, 40))
    special = derivative(_nested, "reverse", ("x",), signature=(("x", describe(x)),))
    general = derivative(_nested, "reverse", ("x",))
    assert _array_ops(special.generated.source) < _array_ops(general.generated.source)
    np.testing.assert_allclose(
        run(special, x, 1.0)[1][0], run(general, x, 1.0)[1][0], rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize(
    "act",
    [
        "x[0] = 1.0",
        "np.multiply(x, 2.0, out=x)",
        "x.sort()",
        "helper(x)",
        "np.copyto(x, y)",
        "np.add.at(x, 0, 1.0)",
    ],
)
def test_code_that_may_write_into_an_array_is_left_alone(act: str) -> None:
    """An atom read later than as written could then hold other values: no rewrite in a
    function with a statement that may write into an array."""
    src = _code(
        f"""
        def f(x, y, z, s, n):
            a = x * 2.0
            b = a * a
            {act}
            c = b - a * 3.0
            return (c,)
        """
    )
    assert collect_terms(src, _KNOWN) == src
    quiet = src.replace(f"    {act}\n", "")
    assert collect_terms(quiet, _KNOWN) != quiet


def test_integer_arrays_and_unknown_values_are_atoms_of_nothing() -> None:
    """Integer arithmetic (whose order decides overflow) and values of unknown kind are
    left as written."""
    src = _code(
        """
        def f(x, y, z, s, n, q):
            a = n * 2
            b = a * a - n
            c = q * 2.0
            d = c * c - q
            return (b, d)
        """
    )
    assert collect_terms(src, _KNOWN) == src


def test_rewrites_only_what_makes_fewer_passes() -> None:
    """``a * (b + c)`` expanded would be two products: it is kept as written."""
    src = _code(
        """
        def f(x, y, z, s, n):
            a = x + y
            b = a * x
            return (b,)
        """
    )
    assert collect_terms(src, _KNOWN) == src


def test_values_read_elsewhere_are_kept_and_del_is_moved() -> None:
    """A value a loop reads is still computed; a del of an atom read later by the new code
    is dropped (reverse mode frees it after its last read)."""
    src = _code(
        """
        def f(x, y, z, s, n):
            a = x * 2.0
            b = a * 3.0
            c = b * a
            for _ in range(2):
                acc = b
            d = -c * 0.5
            del c
            e = d * 4.0 - a
            return (e, acc)
        """
    )
    written = collect_terms(src, _KNOWN)
    assert written != src
    assert "b = " in written and "for _ in range(2):" in written
    _close(_run(written, *_args()), _run(src, *_args()))


def test_the_cotangent_of_unknown_kind_is_cast_as_the_fill_casts_it() -> None:
    src = _code(
        """
        def f(x, out_bar):
            a = np.full((2, 3), out_bar, dtype=np.float64)
            b = a * x
            c = b * 2.0 - a * 3.0
            return (c,)
        """
    )
    written = collect_terms(src, {"x": ((2, 3), "float64")})
    assert "np.float64(out_bar)" in written and "np.full" not in written
    x = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    for out_bar in (1.0, 2, np.float32(0.5)):
        _close(_run(written, x, out_bar), _run(src, x, out_bar))


def _args() -> tuple[np.ndarray, ...]:
    return (
        np.linspace(-1.0, 1.0, 6).reshape(2, 3),
        np.linspace(0.5, 2.0, 3),
        np.linspace(-2.0, 1.0, 6, dtype=np.float32).reshape(2, 3),
        np.array(0.75),
        np.arange(6).reshape(2, 3),
    )


def test_numbers_stay_numbers() -> None:
    """Arithmetic on 0-d arrays gives NumPy numbers: it is left as written (a rewrite
    through a fill would give 0-d arrays), and arrays made from it are still collected."""
    src = _code(
        """
        def f(x, y, z, s, n):
            c = s * 2.0
            d = c * 3.0 + c
            a = x * d
            b = a * 2.0 - a
            return (d, b)
        """
    )
    written = collect_terms(src, _KNOWN)
    assert "c = s * 2.0" in written and "d = c * 3.0 + c" in written
    assert written != src
    got, want = _run(written, *_args()), _run(src, *_args())
    assert type(got[0]) is type(want[0]) is np.float64  # type: ignore[index]
    _close(got, want)
