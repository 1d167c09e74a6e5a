"""Every registered rule, run on Dask arrays: lazy, and equal to its NumPy derivative.

The registry's cases (``registry_cases.py``) are run with each array argument turned into a
chunked Dask array (two chunks per axis, so chunk boundaries are crossed). Where the
function itself runs lazily on Dask arrays, its derivative must too: both modes are run
under a scheduler that refuses to compute, so a helper that converts to NumPy, or tests an
array's values in Python, fails here by name. The lazy results are then computed and
compared with the derivatives of the same case on NumPy arrays.

Cases whose function Dask does not run lazily (NumPy functions Dask does not implement,
which it computes with a warning) are skipped, with that reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from registry_cases import Case, case_function, registry_cases

import adgen

pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

from dask_support import assert_close, computed, lazily, to_dask  # noqa: E402


def _lazy_cases() -> list[Any]:
    out = []
    for case in registry_cases():
        if case.dtype is not None and case.dtype is not np.float64:
            continue
        if case.complex_args:  # real arrays here (complex Dask arrays: tests/test_complex.py)
            continue
        if not any(arg.shape for _, arg in case.args):  # no array argument
            continue
        out.append(pytest.param(case, id=case.id))
    return out


def _seed(out: Any) -> Any:
    if isinstance(out, tuple):
        return tuple(_seed(o) for o in out)
    return np.cos(np.arange(np.size(out)).reshape(np.shape(out)) + 0.5)


def _primal_on_dask(case: Case, dargs: tuple[Any, ...]) -> None:
    try:
        with lazily():
            out = case_function(case)(*dargs)
    except Exception as exc:  # noqa: BLE001 - any failure: Dask cannot run the function lazily
        pytest.skip(f"Dask does not run the function lazily: {type(exc).__name__}: {exc}"[:200])
    parts = out if isinstance(out, tuple) else (out,)
    if not all(isinstance(p, da.Array) for p in parts):
        pytest.skip("the function does not return a Dask array on Dask arrays")
    if any(np.isnan(s) for p in parts for s in p.shape):
        pytest.skip("the result's shape depends on the values (unknown chunk sizes)")
    want = case_function(case)(*case.draw_args())
    try:
        assert_close(computed(out), want)
    except Exception as exc:  # noqa: BLE001 - da.percentile merges per-chunk estimates...
        pytest.skip(f"Dask computes this function differently from NumPy: {exc}"[:200])


# Helpers whose derivative calls a NumPy function Dask does not implement. They serve functions
# Dask does not run lazily either (np.interp; np.take with mode=), so no lazy program reaches
# them; their cases run, and must fail only for that reason.
DASK_LACKS = {"rt.interp_vjp_fp(": "np.interp", "rt.take_vjp(": "np.take(..., mode=...)"}


# Standard forms whose derivative calls a standard form SciPy computes on Dask arrays (their
# own `_pdf`: t's and lognorm's convert their arguments); the function itself stays lazy.
SCIPY_COMPUTES = {
    "scipy.stats.t._ppf(": "scipy.stats.t._pdf",
    "scipy.stats.t._isf(": "scipy.stats.t._pdf",
    "scipy.stats.lognorm._": "scipy.stats.lognorm._pdf",
}


def _lacking(case: Case, exc: Exception) -> str | None:
    for start, missing in DASK_LACKS.items():
        if case.call.startswith(start) and (
            "is not implemented by Dask" in str(exc)
            or "unexpected keyword argument 'mode'" in str(exc)
        ):
            return missing
    return None


@pytest.mark.parametrize("case", _lazy_cases())
def test_rule_on_dask_arrays_is_lazy_and_exact(case: Case) -> None:
    """Forward and reverse mode (one test: the primal is checked on Dask once)."""
    fn = case_function(case)
    args = case.draw_args()
    dargs = to_dask(args)
    _primal_on_dask(case, dargs)
    computes = next((c for s, c in SCIPY_COMPUTES.items() if case.call.startswith(s)), None)
    if computes is not None:
        pytest.skip(f"the derivative calls {computes}, which SciPy computes on Dask arrays")
    lacking = [m for m in ("forward", "reverse") if _mode_on_dask(case, fn, args, dargs, m)]
    if lacking:
        missing = DASK_LACKS[next(s for s in DASK_LACKS if case.call.startswith(s))]
        pytest.xfail(f"the derivative calls {missing}, which Dask does not implement")


def _mode_on_dask(
    case: Case, fn: Any, args: tuple[Any, ...], dargs: tuple[Any, ...], mode: str
) -> bool:
    """Check ``mode`` on Dask arrays against NumPy; True if it calls what Dask lacks."""
    rng = np.random.default_rng(0)
    tangents = tuple(
        rng.normal(size=np.shape(a)) if isinstance(a, np.ndarray) else float(rng.normal())
        for a in args
    )
    try:
        if mode == "forward":
            want = adgen.jvp(fn, args, tangents)
            with lazily():
                got = adgen.jvp(fn, dargs, to_dask(tangents))
        else:
            out, pullback = adgen.vjp(fn, *args)
            seed = _seed(out)
            want = (out, pullback(seed))
            with lazily():
                out_d, pullback_d = adgen.vjp(fn, *dargs)
                got = (out_d, pullback_d(to_dask(seed)))
            for a, g in zip(args, got[1], strict=True):  # the cotangents are lazy too
                if isinstance(a, np.ndarray):
                    assert isinstance(g, da.Array), type(g)
    except adgen.AdgenError as exc:
        if _lacking(case, exc) is None:
            raise
        return True
    assert_close(computed(got), want)
    return False
