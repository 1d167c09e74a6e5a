"""Issue 8's "errors people can act on", one by one: each is an adgen exception of its own
class whose message starts with the user's ``file:line``, shows the line, and ends with a
hint saying what to do (tests/test_errors.py has many more refusals)."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import adgen

HERE = __file__


def uses_with(x):
    with open("data.txt") as fh:
        y = x * float(fh.read())
    return y


def uses_unwrap(x):
    return np.sum(np.unwrap(x))


def scaled(x, n):
    return x * n


def vector_result(x):
    return np.sin(x)


def matmul_helper(a, b):
    return a @ b


def calls_helper(x, w):
    y = np.tanh(x)
    return np.sum(matmul_helper(y, w))


def complex_inside(x):
    return np.sum(np.maximum(x.astype(complex) * (1.0 + 1.0j), 0.0))


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return first + k
    raise AssertionError(text)


CASES = [
    (
        "unsupported syntax",
        lambda: adgen.grad(uses_with)(1.0),
        adgen.UnsupportedSyntaxError,
        (uses_with, "with open("),
    ),
    (
        "no rule",
        lambda: adgen.grad(uses_unwrap)(np.ones(4)),
        adgen.NoRuleError,
        (uses_unwrap, "np.unwrap"),
    ),
    (
        "integer argument",
        lambda: adgen.grad(scaled, wrt=1)(2.0, 3),
        adgen.NonDifferentiableError,
        (scaled, "def scaled"),
    ),
    (
        "boolean argument",
        lambda: adgen.grad(scaled, wrt=1)(2.0, True),
        adgen.NonDifferentiableError,
        (scaled, "def scaled"),
    ),
    (
        "string argument",
        lambda: adgen.grad(scaled, wrt=0)("ab", 2),
        adgen.NonDifferentiableError,
        (scaled, "def scaled"),
    ),
    (
        "wrt names no parameter",
        lambda: adgen.grad(scaled, wrt="m"),
        adgen.WrtError,
        (scaled, "def scaled"),
    ),
    (
        "non-scalar result to grad",
        lambda: adgen.grad(vector_result)(np.ones(3)),
        adgen.NonScalarOutputError,
        (vector_result, "def vector_result"),
    ),
    (
        "shape error while derivative code runs",
        # (grad runs the function itself first and lets its own error through; jvp reports
        # the failure of the derivative code at the line being differentiated)
        lambda: adgen.jvp(calls_helper, (np.ones(3), np.ones((2, 2))), (np.ones(3), None)),
        adgen.DerivativeError,
        (matmul_helper, "return a @ b"),
    ),
    (
        "arguments that do not fit the parameters",
        lambda: adgen.grad(scaled)(2.0, 3.0, 4.0),
        adgen.ArgumentError,
        (scaled, "def scaled"),
    ),
    (
        "complex value reaching a rule for real values",
        lambda: adgen.grad(complex_inside)(np.ones(2)),
        adgen.NonDifferentiableError,
        (complex_inside, "astype(complex)"),
    ),
]


@pytest.mark.parametrize(("what", "run", "kind", "where"), CASES, ids=[c[0] for c in CASES])
def test_error_names_the_users_line_and_says_what_to_do(what, run, kind, where) -> None:
    fn, text = where
    with pytest.raises(kind) as info:
        run()
    err = info.value
    line = line_of(fn, text)
    assert err.loc is not None and (err.loc.filename, err.loc.lineno) == (HERE, line), str(err)
    assert str(err).startswith(f"{HERE}:{line}:"), str(err)
    assert err.hint and str(err).rstrip().endswith(err.hint)
    if kind is adgen.DerivativeError:
        assert isinstance(err.__cause__, ValueError)  # the original error is chained


def test_source_that_cannot_be_read() -> None:
    namespace: dict = {}
    exec("def f(x):\n    return x * x\n", namespace)
    with pytest.raises(adgen.SourceUnavailableError, match="cannot read the source") as info:
        adgen.grad(namespace["f"])(1.0)
    assert info.value.hint
    with pytest.raises(adgen.SourceUnavailableError):
        adgen.grad(math.gcd)(4, 6)  # (a builtin without a rule: np.sin has its rule)


def test_every_error_class_is_an_adgen_error() -> None:
    classes = [
        adgen.UnsupportedSyntaxError,
        adgen.NoRuleError,
        adgen.UnresolvedNameError,
        adgen.NonDifferentiableError,
        adgen.NonScalarOutputError,
        adgen.WrtError,
        adgen.ArgumentError,
        adgen.ShapeMismatchError,
        adgen.SourceUnavailableError,
        adgen.DerivativeError,
        adgen.LimitError,
        adgen.errors.RuleError,
        adgen.InternalError,
        adgen.BackendError,
    ]
    for cls in classes:
        assert issubclass(cls, adgen.AdgenError) and cls.__doc__
    defined = {
        c
        for c in vars(adgen.errors).values()
        if isinstance(c, type) and issubclass(c, adgen.AdgenError) and c is not adgen.AdgenError
    }
    assert defined == set(classes)
