"""tangent-ad (import name ``tangent``): source-to-source reverse mode of the primal itself."""

from __future__ import annotations

from typing import Any

import tangent

from ..problems import Args, Problem
from . import Prepared, Unsupported, as_numpy


def build(problem: Problem, args: Args) -> Prepared:
    """``tangent.grad(primal, wrt=..., preserve_result=True)``; failures are 'unsupported'."""
    try:
        df = tangent.grad(problem.primal, wrt=problem.wrt, preserve_result=True, verbose=0)
        raw = df(*args)
    except Exception as exc:  # tangent raises many kinds of errors on code it cannot handle
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise Unsupported(f"{type(exc).__name__}: {first}"[:120]) from exc

    def call() -> Any:
        return df(*args)

    def result(out: Any) -> tuple[float, Any]:
        *grads, value = out
        if len(grads) == 1 and isinstance(grads[0], tuple):
            grads = list(grads[0])
        return float(value), tuple(as_numpy(g) for g in grads)

    del raw
    return Prepared(call, result)
