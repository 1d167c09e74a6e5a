"""The registry's rules for the array API standard's functions, run on ``array_api_strict`` arrays.

``array_api_strict`` is the standard's reference library: its arrays have no
``__array_function__``, no ``__array_ufunc__`` and refuse NumPy-only shortcuts (mixed-kind
promotion, methods outside the standard). adgen runs its NumPy derivative code on them
through :class:`adgen.rules.arrayapi.NumPyOf`. Each registry case (float64) whose function the
standard has is run in both modes with its array arguments made strict arrays; the
derivatives must come back as strict arrays and equal those computed on NumPy arrays.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from registry_cases import Case, case_function, registry_cases

import adgen
from adgen.rules.arrayapi import RENAMED

xp = pytest.importorskip("array_api_strict")

# the NumPy functions (as registry cases spell them) the standard has, under its names or
# under NumPy's: elementwise functions, reductions, shaping, products, linear algebra
# (functions: its dtypes, xp.float64..., are not casts as NumPy's scalar types are)
_SAME_NAMES = {n for n in dir(xp) if not n.startswith("_") and callable(getattr(xp, n))}
_NUMPY_SPELLED = {numpy_name for numpy_name, name in RENAMED.items() if name in _SAME_NAMES}
_ALSO = {"cumsum", "cumprod", "transpose", "swapaxes", "linalg.norm", "dot", "outer"}
_LINALG = {
    f"linalg.{n}"
    for n in (
        "inv",
        "det",
        "cholesky",
        "solve",
        "slogdet",
        "eigh",
        "svd",
        "qr",
        "pinv",
        "matrix_power",
    )
}
STANDARD = _SAME_NAMES | _NUMPY_SPELLED | _ALSO | _LINALG
_CALLED = re.compile(r"^np\.((?:linalg\.)?\w+)\(")


def _standard_cases() -> list[Any]:
    out = []
    for case in registry_cases():
        if case.dtype is not None and case.dtype is not np.float64:
            continue
        if case.complex_args:  # real arrays here (complex ones: tests/test_complex.py)
            continue
        match = _CALLED.match(case.call)
        if match is None or match.group(1) not in STANDARD:
            continue
        if not any(arg.shape for _, arg in case.args):  # no array argument
            continue
        out.append(pytest.param(case, id=case.id))
    return out


def _strict(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return xp.asarray(value)
    if isinstance(value, tuple):
        return tuple(_strict(v) for v in value)
    return value


def _numpy(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return type(value)(_numpy(v) for v in value)
    if isinstance(value, xp.Array if hasattr(xp, "Array") else type(xp.asarray(0.0))):
        return np.asarray(value)
    return value


def _assert_close(got: Any, want: Any) -> None:
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _assert_close(g, w)
        return
    kind = complex if np.iscomplexobj(np.asarray(want)) else float
    np.testing.assert_allclose(np.asarray(got, kind), np.asarray(want, kind), rtol=1e-9, atol=1e-10)


STRICT_ARRAY = type(xp.asarray(0.0))


@pytest.mark.parametrize("case", _standard_cases())
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_standard_rule_on_strict_arrays(case: Case, mode: str) -> None:
    fn = case_function(case)
    args = case.draw_args()
    strict = _strict(args)
    if mode == "reverse":  # adgen.vjp calls the function itself for its value
        try:
            fn(*strict)  # NumPy's own code on strict arrays
        except Exception as exc:  # noqa: BLE001 - NumPy indexing them with its own arrays...
            pytest.skip(f"the function as written does not run on strict arrays: {exc}"[:200])
    rng = np.random.default_rng(0)
    tangents = tuple(
        rng.normal(size=np.shape(a)) if isinstance(a, np.ndarray) else float(rng.normal())
        for a in args
    )
    if mode == "forward":
        want = adgen.jvp(fn, args, tangents)
        got = adgen.jvp(fn, strict, _strict(tangents))
        results = got[1] if isinstance(got[1], tuple) else (got[1],)
    else:
        out, pullback = adgen.vjp(fn, *args)
        seed = np.cos(np.arange(np.size(out)).reshape(np.shape(out)) + 0.5)
        want = (out, pullback(seed))
        strict_out, strict_pullback = adgen.vjp(fn, *strict)
        got = (strict_out, strict_pullback(_strict(seed)))
        results = tuple(g for a, g in zip(args, got[1], strict=True) if isinstance(a, np.ndarray))
    assert all(isinstance(r, STRICT_ARRAY) for r in results), [type(r) for r in results]
    _assert_close(_numpy(got), want)
