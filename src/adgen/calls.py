"""Calls that are not inlined: a recursive call to one of the user's functions.

Its derivative is another generated function, looked up when the call runs (so a function
that calls itself does not need its own derivative while that derivative is being made):
``h_jvp(*args, *tangents)`` in forward mode, and in reverse mode ``h_vjp(*args, g)``, which
recomputes ``h``'s forward sweep (joint mode).
"""

from __future__ import annotations

import types
from typing import Any


class LazyDerivative:
    """Calls the compiled derivative of ``fn`` (mode, wrt), building it on first use."""

    def __init__(self, fn: types.FunctionType, mode: str, wrt: tuple[str, ...]) -> None:
        self.fn = fn
        self.mode = mode
        self.wrt = wrt

    def __call__(self, *args: Any) -> Any:
        from .transform import derivative

        return derivative(self.fn, self.mode, self.wrt).compiled(*args)

    def __repr__(self) -> str:
        return f"<adgen {self.mode} derivative of {self.fn.__qualname__} w.r.t. {self.wrt}>"
