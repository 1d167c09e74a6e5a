"""The benchmark problems, in the order the runner reports them."""

from __future__ import annotations

from . import gmm, helmholtz, lstm, mlp, scalar_loop, spring
from .base import Args, Problem

PROBLEMS: dict[str, Problem] = {
    m.PROBLEM.name: m.PROBLEM for m in (gmm, helmholtz, mlp, lstm, scalar_loop, spring)
}

__all__ = ["PROBLEMS", "Args", "Problem"]
