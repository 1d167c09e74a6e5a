"""Peer AD tools, one module each, written in that tool's idiom.

Every module has ``build(problem, args) -> Prepared`` and raises
:class:`Unsupported` for a problem it cannot run, ``ImportError`` when the tool
is not installed.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


class Unsupported(Exception):
    """The tool cannot differentiate this problem (the message says why)."""


@dataclass
class Prepared:
    """A tool ready to run one problem: ``call()`` is timed, ``result(call())`` is checked.

    ``result`` turns the tool's raw output into ``(value, (gradient, ...))`` of
    NumPy float64 values (or, for a JVP, ``(value, tangent)``).
    """

    call: Callable[[], Any]
    result: Callable[[Any], tuple[float, Any]]


def rebind(fn: Callable[..., Any], **names: Any) -> Callable[..., Any]:
    """``fn`` with some of its globals replaced, e.g. ``np`` by ``autograd.numpy``.

    This is how autograd and JAX are meant to be used: the same NumPy-style
    source, with the tool's NumPy module in place of NumPy.
    """
    code = fn.__code__  # type: ignore[attr-defined]
    glob = {**fn.__globals__, **names}  # type: ignore[attr-defined]
    return types.FunctionType(code, glob, code.co_name, fn.__defaults__)  # type: ignore[attr-defined]


def math_namespace(module: Any) -> types.SimpleNamespace:
    """A stand-in for the ``math`` module made of a NumPy-like module's functions."""
    names = ("sin", "cos", "tan", "tanh", "exp", "log", "sqrt", "sinh", "cosh")
    return types.SimpleNamespace(**{n: getattr(module, n) for n in names}, pi=np.pi)


def merged(args: tuple[Any, ...], wrt: tuple[int, ...], params: Any) -> list[Any]:
    """``args`` with the differentiated positions replaced by ``params`` (in ``wrt`` order)."""
    full = list(args)
    for i, p in zip(wrt, params):
        full[i] = p
    return full


def as_numpy(value: Any) -> Any:
    """A float64 NumPy array (or float) from any tool's array or scalar."""
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    out = np.asarray(value, dtype=np.float64)
    return float(out) if out.ndim == 0 else out
