"""Random programs (``tests/fuzz_programs.py``), differentiated and checked numerically.

Each program is written to a module file, imported, and checked:

* forward mode against central finite differences, reverse mode against forward mode
  (``<u, J v> = <J^T u, v>``), by :func:`adgen.testing.check_grads`;
* the value the derivative code computes is the function's own value;
* no input is modified: arguments, tangents and cotangents are passed read-only (a
  write raises) and compared with copies afterwards;
* for a share of the programs (scalar results only), second order: the gradient
  ``adgen.grad(program, wrt=(0, 1, 2))`` is itself differentiated in both modes and
  checked the same way (a Hessian-vector product against finite differences of the
  gradient).

How many programs run: ``ADGEN_FUZZ_EXAMPLES`` (default 60). CI (``CI=true``) runs a
fixed, derandomized sequence, so a red CI reproduces; locally every run draws new
programs. The long mode, thousands of programs::

    ADGEN_FUZZ_EXAMPLES=3000 python -m pytest -o addopts="" -q tests/test_fuzz.py

A failure prints the program's source. Every bug found this way has a regression test in
``tests/test_fuzz_regressions.py``.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
from fuzz_programs import INPUTS, Program, programs
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import adgen
from adgen.api import _scalars
from adgen.shapes import describe
from adgen.testing import check_grads
from adgen.transform import derivative

EXAMPLES = int(os.environ.get("ADGEN_FUZZ_EXAMPLES", "60"))
IN_CI = os.environ.get("CI", "").lower() in ("true", "1")
RTOL, ATOL = 1e-4, 1e-6

_counter = itertools.count()


def load(folder: Path, source: str) -> Any:
    """``program`` of a new module file holding ``source`` (adgen reads its source)."""
    name = f"adgen_fuzz_{os.getpid()}_{next(_counter)}"
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.program


def inputs(seed: int) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    return tuple(
        float(rng.uniform(-1.0, 1.0)) if shape is None else rng.uniform(-1.0, 1.0, shape)
        for shape in INPUTS.values()
    )


def frozen(value: Any) -> Any:
    """A read-only copy of ``value`` (tuples item by item): writing into it raises."""
    if isinstance(value, tuple):
        return tuple(frozen(v) for v in value)
    if isinstance(value, np.ndarray):
        out = value.copy()
        out.setflags(write=False)
        return out
    return value


def same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and all(same(p, q) for p, q in zip(a, b, strict=True))
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


def close(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and all(close(p, q) for p, q in zip(a, b, strict=True))
    return bool(np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True))


def specialised_matches_general(fn: Any, args: tuple[Any, ...]) -> None:
    """The code specialised for the arguments' shapes (what adgen's API runs) computes what
    the general code (for any shapes) computes, in both modes."""
    params = list(fn.__code__.co_varnames[: fn.__code__.co_argcount])
    wrt = tuple(p for p, a in zip(params, args) if np.ndim(a) or isinstance(a, float))
    scalars = _scalars(params, args)
    signature = tuple((p, d) for p, a in zip(params, args) if (d := describe(a)) is not None)
    rng = np.random.default_rng(7)
    for mode in ("reverse", "forward"):
        extra: tuple[Any, ...]
        if mode == "reverse":
            value = fn(*args)
            extra = (
                tuple(rng.standard_normal(np.shape(v)) for v in value)
                if isinstance(value, tuple)
                else float(rng.standard_normal()),
            )
        else:
            extra = tuple(
                rng.standard_normal(np.shape(a)) for p, a in zip(params, args) if p in wrt
            )
        special = derivative(fn, mode, wrt, scalars, signature=signature).compiled
        general = derivative(fn, mode, wrt, scalars).compiled
        with np.errstate(all="ignore"):
            got, want = special(*args, *extra), general(*args, *extra)
        assert close(got, want), f"{mode} mode: specialised code gives {got}, general {want}"


def check_program(program: Program, folder: Path, seed: int) -> None:
    fn = load(folder, program.source)
    args = inputs(seed)
    with np.errstate(all="ignore"):
        value = fn(*args)
    for f in program.features:
        event(f)
    if not all(np.all(np.isfinite(v)) for v in (value if isinstance(value, tuple) else (value,))):
        raise AssertionError(f"the generator wrote a program without a finite value: {value}")

    # derivatives in both modes agree with finite differences and with each other
    check_grads(fn, *args, rtol=RTOL, atol=ATOL)
    specialised_matches_general(fn, args)

    # the derivative code computes the function's value, and modifies no input
    rng = np.random.default_rng(seed + 1)
    tangents = tuple(
        float(rng.standard_normal()) if np.ndim(a) == 0 else rng.standard_normal(np.shape(a))
        for a in args
    )
    cotangent = (
        tuple(rng.standard_normal(np.shape(v)) for v in value)
        if isinstance(value, tuple)
        else float(rng.standard_normal())
    )
    kept = (args, tangents, cotangent)
    passed = frozen(kept)
    out, _ = adgen.jvp(fn, passed[0], passed[1])
    assert close(out, value), f"forward-mode code computes {out}, the function {value}"
    out, pullback = adgen.vjp(fn, *passed[0])
    assert close(out, value), f"reverse-mode code computes {out}, the function {value}"
    pullback(passed[2])
    assert same(passed, kept), "derivative code modified an input, tangent or cotangent"

    if program.twice:
        event("second order")
        gradient = adgen.grad(fn, wrt=(0, 1, 2))
        try:
            adgen.jvp(gradient, args, tangents)
        except adgen.AdgenError as exc:
            # never wrong, but not re-differentiable yet: adgen's reverse-mode code for the
            # program uses a helper or construct adgen refuses to differentiate (counted as
            # an event, not hidden); a refusal must point into adgen's own generated code
            assert exc.loc is not None and exc.loc.filename.startswith("<adgen "), exc
            event(f"second order refused: {exc.message}")
            return
        check_grads(gradient, *args, rtol=RTOL, atol=ATOL)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=IN_CI,
    database=None if IN_CI else settings.default.database,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(program=programs(), seed=st.integers(0, 2**16))
def test_random_program(tmp_path: Path, program: Program, seed: int) -> None:
    check_program(program, tmp_path, seed)
