"""Every registry example that passes an option as a constant (``np.trace(a, offset=1)``,
``np.pad(a, 2, mode="reflect")``), checked again with the option passed as a variable of
the function: the derivative code then decides the option when it runs, and must give the
derivatives of the constant's version, in both modes. One example per rule; an option that
decides how many results there are may be refused (with a message naming it), nothing else.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pytest
from registry_cases import Case, case_function, registry_cases
from source_modules import session_folder, write_module

import adgen
from adgen.errors import AdgenError, InternalError


def _variants() -> list[tuple[Case, str, str, tuple[Any, ...]]]:
    """(case, the call with constants, the call with options as names, the options)."""
    out, rules = [], set()
    for case in registry_cases():
        if case.dtype is not np.float64 or case.complex_args or case.rule in rules:
            continue
        tree = ast.parse(case.call, mode="eval").body
        values = []
        for call in [n for n in ast.walk(tree) if isinstance(n, ast.Call)]:
            for kw in call.keywords:
                try:
                    value = ast.literal_eval(kw.value) if kw.arg is not None else None
                except ValueError:
                    continue
                if kw.arg is None or isinstance(value, float):  # (a float would be differentiated)
                    continue
                kw.value = ast.Name(id=f"opt_{len(values)}", ctx=ast.Load())
                values.append(value)
        if values:
            rules.add(case.rule)
            out.append((case, case.call, ast.unparse(tree), tuple(values)))
    return out


VARIANTS = _variants()
_MODULE: Any = None


def _module() -> Any:
    global _MODULE
    if _MODULE is None:
        lines = ["import math", "import numpy as np", "import scipy.linalg", "import scipy.signal"]
        lines += ["import scipy.special", "import scipy.stats", "from adgen import runtime as rt"]
        for i, (case, literal, named, values) in enumerate(VARIANTS):
            params = [n for n, _ in case.args]
            options = [f"opt_{k}" for k in range(len(values))]
            lines += ["", "", f"def literal_{i}({', '.join([*params, 'w_'])}):"]
            lines += [f"    return np.real(np.sum(w_ * {literal}))"]
            lines += ["", "", f"def named_{i}({', '.join([*params, *options, 'w_'])}):"]
            lines += [f"    return np.real(np.sum(w_ * {named}))"]
        _MODULE = write_module(
            session_folder("adgen_registry_options_"), "options_cases", "\n".join(lines)
        )
    return _MODULE


@pytest.mark.parametrize("i", range(len(VARIANTS)), ids=[v[2] for v in VARIANTS])
def test_an_option_given_as_a_variable_gives_the_same_derivatives(i: int) -> None:
    case, _, named, values = VARIANTS[i]
    literal, variable = getattr(_module(), f"literal_{i}"), getattr(_module(), f"named_{i}")
    args = case.draw_args()
    primal = _call_shape(case, args)
    if primal is None:
        pytest.skip("several results")
    w = np.cos(np.arange(np.prod(primal)).reshape(primal) + 0.5)
    names = tuple(n for n, _ in case.args)
    try:
        got = adgen.grad(variable, wrt=names)(*args, *values, w)
    except AdgenError as exc:  # only for an option that decides the number of results
        assert not isinstance(exc, InternalError), exc
        assert "number of results" in str(exc), exc
        return
    want = adgen.grad(literal, wrt=names)(*args, w)
    for g, e in zip(got if len(names) > 1 else (got,), want if len(names) > 1 else (want,)):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    rng = np.random.default_rng(0)
    tangents = tuple(rng.normal(size=np.shape(a)) for a in args)
    _, dgot = adgen.jvp(variable, (*args, *values, w), (*tangents, *(None for _ in values), None))
    _, dwant = adgen.jvp(literal, (*args, w), (*tangents, None))
    np.testing.assert_allclose(dgot, dwant, rtol=1e-10, atol=1e-12)


def _call_shape(case: Case, args: tuple[Any, ...]) -> tuple[int, ...] | None:
    out = case_function(case)(*args)
    return None if isinstance(out, tuple) else np.shape(out)
