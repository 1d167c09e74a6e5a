"""autograd: the problem's own NumPy source with ``autograd.numpy`` as ``np``."""

from __future__ import annotations

from typing import Any

import autograd
import autograd.numpy as anp

from ..problems import Args, Problem
from . import Prepared, as_numpy, math_namespace, merged, rebind


def build(problem: Problem, args: Args) -> Prepared:
    """``autograd.value_and_grad`` of the primal w.r.t. a tuple of the differentiated args."""
    f = rebind(problem.primal, np=anp, math=math_namespace(anp))
    wrt = problem.wrt

    def packed(params: Any) -> Any:
        return f(*merged(args, wrt, params))

    vg = autograd.value_and_grad(packed)
    params = tuple(args[i] for i in wrt)

    def call() -> Any:
        return vg(params)

    def result(raw: Any) -> tuple[float, Any]:
        value, grads = raw
        return float(value), tuple(as_numpy(g) for g in grads)

    return Prepared(call, result)
