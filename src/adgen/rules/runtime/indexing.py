"""Helpers of the indexing functions' rules (:mod:`adgen.rules.indexing`).

The cotangents of ``np.take``, ``np.take_along_axis``, ``np.select`` and ``np.choose``:
the output's cotangent scattered back, repeated indices adding up.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .core import _float_dtype, _sum_to


def take_vjp(g: Any, a: Any, indices: Any, axis: Any = None, mode: str = "raise") -> NDArray[Any]:
    """Cotangent of ``np.take(a, indices, axis, mode=mode)`` with respect to ``a``: ``g``
    scattered back, repeated indices adding up (as ``np.add.at``).

    >>> take_vjp(np.array([1.0, 2.0, 4.0]), np.zeros(3), [0, 2, 0]).tolist()
    [5.0, 0.0, 2.0]
    """
    shape = np.shape(a)
    out = np.zeros(shape, dtype=_float_dtype(a))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    idx = np.asarray(indices)
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    if axis is None:
        flat = out.reshape(-1)
        np.add.at(flat, idx, g)
        return flat.reshape(shape)
    where = (slice(None),) * (axis % len(shape)) + (idx,)
    np.add.at(out, where, g)
    return out


def take_along_axis_vjp(g: Any, arr: Any, indices: Any, axis: Any = -1) -> NDArray[Any]:
    """Cotangent of ``np.take_along_axis(arr, indices, axis)`` with respect to ``arr``
    (repeated indices add up).

    >>> take_along_axis_vjp(np.ones((1, 3)), np.zeros((1, 2)), np.array([[0, 1, 0]]), 1).tolist()
    [[2.0, 1.0]]
    """
    shape = np.shape(arr)
    out = np.zeros(shape, dtype=_float_dtype(arr))
    idx = np.asarray(indices)
    if axis is None:
        flat = out.reshape(-1)
        np.add.at(flat, idx, g)
        return flat.reshape(shape)
    axis = axis % len(shape)
    g = np.asarray(g)
    where = []
    for i, n in enumerate(shape):
        if i == axis:
            where.append(idx)
        else:
            view = [1] * len(shape)
            view[i] = n
            where.append(np.arange(n).reshape(view))
    full = np.broadcast_shapes(*(w.shape for w in where))
    np.add.at(out, tuple(np.broadcast_to(w, full) for w in where), np.broadcast_to(g, full))
    return out


def select_vjp(g: Any, condlist: Any, choicelist: Any, k: int) -> Any:
    """Cotangent of ``np.select(condlist, choicelist, default)`` with respect to
    ``choicelist[k]``: ``g`` where condition ``k`` is the first that holds.

    >>> conds = [np.array([1, 0, 1]), np.array([1, 1, 0])]
    >>> select_vjp(np.ones(3), conds, [np.zeros(3)] * 2, 1).tolist()
    [0.0, 1.0, 0.0]
    """
    x = choicelist[k]
    taken = select_mask(condlist, k)
    r = _sum_to(np.where(taken, g, 0.0).astype(_float_dtype(x)), np.shape(x))
    if isinstance(x, (float, int)):
        return float(r)
    return np.asarray(r)


def select_mask(condlist: Any, k: int) -> Any:
    """Where condition ``k`` is the first of ``np.select(condlist, ...)`` that holds (where the
    result is ``choicelist[k]``).

    >>> select_mask([np.array([1, 0, 1]), np.array([1, 1, 0])], 1).tolist()
    [False, True, False]
    """
    taken = np.asarray(condlist[k], dtype=bool)
    for c in condlist[:k]:
        taken = taken & ~np.asarray(c, dtype=bool)
    return taken


def select_otherwise(condlist: Any) -> Any:
    """Where no condition of ``np.select(condlist, ...)`` holds (where it takes ``default``).

    >>> select_otherwise([np.array([1, 0, 0]), np.array([0, 0, 1])]).tolist()
    [False, True, False]
    """
    none = ~np.asarray(condlist[0], dtype=bool)
    for c in condlist[1:]:
        none = none & ~np.asarray(c, dtype=bool)
    return none


def choose_vjp(g: Any, a: Any, choices: Any, k: int, mode: str = "raise") -> Any:
    """Cotangent of ``np.choose(a, choices, mode=mode)`` with respect to ``choices[k]``.

    >>> choose_vjp(np.ones(3), np.array([0, 1, 0]), [np.zeros(3), np.zeros(3)], 0).tolist()
    [1.0, 0.0, 1.0]
    """
    x = choices[k]
    taken = choose_mask(a, choices, k, mode)
    r = _sum_to(np.where(taken, g, 0.0).astype(_float_dtype(x)), np.shape(x))
    if isinstance(x, (float, int)):
        return float(r)
    return np.asarray(r)


def choose_mask(a: Any, choices: Any, k: int, mode: str = "raise") -> Any:
    """Where ``np.choose(a, choices, mode=mode)`` picks ``choices[k]`` (the index ``a`` wrapped
    or clipped first, as ``mode`` says).

    >>> choose_mask(np.array([0, 3, -1]), [0.0, 0.0], 1, "wrap").tolist()
    [False, True, True]
    """
    idx = np.asarray(a)
    n = len(choices)
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    return idx == k


def diagonal_index(a: Any) -> tuple[Any, ...]:
    """The positions ``np.fill_diagonal(a, v)`` writes (``wrap=False``): ``(i, i, ...)`` for
    ``i`` below the shortest side; NumPy's errors for fewer than 2 axes or, beyond 2, unequal
    ones.

    >>> a = np.zeros((3, 2))
    >>> a[diagonal_index(a)] = 1.0
    >>> a.tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    """
    shape = np.shape(a)
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return (np.arange(min(shape)),) * len(shape)
