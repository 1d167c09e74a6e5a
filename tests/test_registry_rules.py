"""Every rule registered with examples or a domain, checked straight from the registry.

A rule module declares what its rule is checked on (``examples=``, ``domain=``; see
``adgen.rules.samples``); ``registry_cases.py`` turns that into functions and this file
checks each one: forward mode against central finite differences, reverse mode against
forward mode, and cotangents with the type, shape and dtype of their argument. Adding a
rule adds its tests -- there is no list here to edit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from registry_cases import Case, case_function, registry_cases, reverse_wrapper

import adgen
from adgen import pipeline
from adgen.testing import _cotangent_like, _random_like, check_grads

CASES = registry_cases()


def _params(cases: list[Case]) -> list[Any]:
    return [pytest.param(c, id=c.id) for c in cases]


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", _params(CASES))
def test_registered_rule(case: Case) -> None:
    """Both modes against finite differences, and cotangents with the type, shape and dtype
    of their argument (one test: the same reverse-mode code serves both checks)."""
    args = case.draw_args()
    tol = {} if case.tolerance is None else {"rtol": case.tolerance, "atol": case.tolerance}
    if case.low_precision:
        tol.setdefault("rtol", 2e-3)
        tol.setdefault("atol", 2e-3)
    # an inf or nan in the checked region means a bad domain or a bug
    with np.errstate(divide="raise", invalid="raise", over="raise"):
        check_grads(case_function(case), *args, **tol)
    _check_cotangent_types(case, args)


def _kind(value: Any) -> tuple[type, Any, tuple[int, ...]]:
    return type(value), getattr(value, "dtype", None), np.shape(value)


def _check_cotangent_types(case: Case, args: tuple[Any, ...]) -> None:
    out, pullback = adgen.vjp(case_function(case), *args)
    seed = np.ones_like(out) if isinstance(out, np.ndarray) else type(out)(1.0)
    cotangents = pullback(seed)
    for a, ct in zip(args, cotangents, strict=True):
        if isinstance(a, (float, complex, np.inexact)) or (
            isinstance(a, np.ndarray) and a.dtype.kind in "fc"
        ):
            assert _kind(ct) == _kind(a), (_kind(ct), _kind(a))
        else:
            assert ct is None


def _twice(cases: list[Case]) -> list[Case]:
    """The cases checked at second order: every real float64 case, and for complex values
    (a thousand more cases) the first two of each rule -- every complex rule is closed under
    differentiation on complex values, within the suite's time."""
    per_rule: dict[str, int] = {}
    out = []
    for c in cases:
        if not c.twice or c.dtype is not np.float64:
            continue
        if c.complex_args:
            per_rule[c.rule] = per_rule.get(c.rule, 0) + 1
            if per_rule[c.rule] > 2:
                continue
        out.append(c)
    return out


TWICE = _twice(CASES)


def _float_params(fn: Any, args: tuple[Any, ...]) -> tuple[str, ...]:
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    return tuple(
        n
        for n, a in zip(names, args, strict=True)
        if isinstance(a, (float, complex, np.inexact))
        or (isinstance(a, np.ndarray) and a.dtype.kind in "fc")
    )


@pytest.mark.parametrize("case", _params(TWICE))
def test_registered_rule_second_order(case: Case) -> None:
    """The forward-mode code adgen writes for the rule is itself differentiated (in both
    modes) and checked the same way: second derivatives, through adgen's own output. A
    refusal fails like a wrong second derivative: adgen is closed under differentiation."""
    fn = case_function(case)
    args = case.draw_args()
    wrt = _float_params(fn, args)
    signature = case.signature(args) if case.complex_args else ()
    first = pipeline.derivative(fn, "forward", wrt, signature=signature).compiled
    rng = np.random.default_rng(1)
    tangents = tuple(
        _random_like(rng, a)
        for a, n in zip(args, fn.__code__.co_varnames, strict=False)
        if n in wrt
    )
    tol = 1e-4 if case.tolerance is None else case.tolerance
    # a refusal fails: every helper the forward code calls has rules (tests/test_closure.py)
    adgen.jvp(first, (*args, *tangents), (*args, *tangents))
    with np.errstate(divide="raise", invalid="raise", over="raise"):
        check_grads(first, *args, *tangents, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", _params(TWICE))
def test_registered_rule_forward_over_reverse(case: Case) -> None:
    """The Hessian path: the reverse-mode code adgen writes for the rule (``(*args, out_bar)
    -> (out, (grad_1, ...))``) is differentiated again in forward mode (against central
    finite differences of that code) and in reverse mode (against forward mode), with
    respect to the arguments and the cotangent ``out_bar``. A refusal fails like a wrong
    second derivative."""
    fn = case_function(case)
    args = case.draw_args()
    out_bar = _cotangent_like(np.random.default_rng(2), fn(*args))
    tol = 1e-4 if case.tolerance is None else case.tolerance
    rev = reverse_wrapper(case)  # a refusal fails, as above
    adgen.jvp(rev, (*args, out_bar), (*args, out_bar))
    out, pullback = adgen.vjp(rev, *args, out_bar)
    pullback(out)
    with np.errstate(divide="raise", invalid="raise", over="raise"):
        check_grads(rev, *args, out_bar, rtol=tol, atol=tol)
