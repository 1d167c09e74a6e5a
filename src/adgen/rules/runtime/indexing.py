"""Helpers of the indexing functions' rules (:mod:`adgen.rules.indexing`).

The cotangents of ``np.take``, ``np.take_along_axis``, ``np.select`` and ``np.choose``:
the output's cotangent scattered back, repeated indices adding up.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .core import _float_dtype, _sum_to
from .libraries import as_array, cast, eager, foreign, summed_at


def take_vjp(g: Any, a: Any, indices: Any, axis: Any = None, mode: str = "raise") -> NDArray[Any]:
    """Cotangent of ``np.take(a, indices, axis, mode=mode)`` with respect to ``a``: ``g``
    scattered back, repeated indices adding up (as ``np.add.at``).

    >>> take_vjp(np.array([1.0, 2.0, 4.0]), np.zeros(3), [0, 2, 0]).tolist()
    [5.0, 0.0, 2.0]
    """
    shape = np.shape(a)
    dtype = _float_dtype(a)
    n = int(np.prod(shape)) if axis is None else shape[axis]
    idx = as_array(indices)
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    if not eager(g, a, idx):  # no np.add.at: sum g by the flat positions it was taken from
        return _summed_back(g, a, idx, axis, dtype)
    out = np.zeros(shape, dtype=dtype)
    if axis is None:
        flat = np.reshape(out, (-1,))
        np.add.at(flat, idx, g)
        return np.reshape(flat, shape)
    where = (slice(None),) * (axis % len(shape)) + (idx,)
    np.add.at(out, where, g)
    return out


def _summed_back(g: Any, a: Any, idx: Any, axis: Any, dtype: Any) -> Any:
    """The cotangent of ``np.take(a, idx, axis)`` for arrays of another library: ``g`` summed
    by the flat positions in ``a`` of the entries taken (``np.take`` of the positions).

    >>> _summed_back(np.ones((2, 2)), np.zeros((2, 3)), np.array([2, 2]), 1, float).tolist()
    [[0.0, 0.0, 2.0], [0.0, 0.0, 2.0]]
    """
    shape = np.shape(a)
    size = math.prod(shape)
    positions = np.arange(size, like=next((x for x in (g, idx, a) if foreign(x)), None))
    # one index array of several axes is taken raveled (Dask takes 1-d ones only)
    if axis is None:
        taken = np.reshape(positions[np.ravel(idx)], np.shape(idx))
    else:
        axis = axis % len(shape)
        taken = np.take(np.reshape(positions, shape), np.ravel(idx), axis=axis)
        taken = np.reshape(taken, shape[:axis] + np.shape(idx) + shape[axis + 1 :])
    return np.reshape(cast(summed_at(taken, g, size), dtype), shape)


def take_along_axis_vjp(g: Any, arr: Any, indices: Any, axis: Any = -1) -> NDArray[Any]:
    """Cotangent of ``np.take_along_axis(arr, indices, axis)`` with respect to ``arr``
    (repeated indices add up).

    >>> take_along_axis_vjp(np.ones((1, 3)), np.zeros((1, 2)), np.array([[0, 1, 0]]), 1).tolist()
    [[2.0, 1.0]]
    """
    shape = np.shape(arr)
    out = np.zeros(shape, dtype=_float_dtype(arr))
    idx = as_array(indices)
    if axis is None:
        flat = np.reshape(out, (-1,))
        np.add.at(flat, idx, g)
        return np.reshape(flat, shape)
    where = along_axis_index(out, idx, axis)
    np.add.at(out, where, np.broadcast_to(as_array(g), where[0].shape))
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
    r = _sum_to(cast(np.where(taken, g, 0.0), _float_dtype(x)), np.shape(x))
    if isinstance(x, (float, int)) and eager(r):
        return float(r)
    return as_array(r)


def selected(condlist: Any, choicelist: Any) -> Any:
    """``np.select(condlist, choicelist, 0.0)`` (the tangent of ``np.select``), written as a
    chain of ``np.where`` for arrays of other libraries: Dask names every ``np.select`` alike,
    so two in one graph (the value's and its tangent's) would be taken for one.

    >>> selected([np.array([True, False]), np.array([True, True])], [1.0, np.ones(2) * 2]).tolist()
    [1.0, 2.0]
    """
    if eager(*condlist, *choicelist):
        return np.select(condlist, choicelist, 0.0)
    out: Any = 0.0
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = np.where(cond, choice, out)
    return np.broadcast_to(out, np.broadcast_shapes(*map(np.shape, [*condlist, *choicelist])))


def select_mask(condlist: Any, k: int) -> Any:
    """Where condition ``k`` is the first of ``np.select(condlist, ...)`` that holds (where the
    result is ``choicelist[k]``).

    >>> select_mask([np.array([1, 0, 1]), np.array([1, 1, 0])], 1).tolist()
    [False, True, False]
    """
    taken = as_array(condlist[k], bool)
    for c in condlist[:k]:
        taken = taken & ~as_array(c, bool)
    return taken


def select_otherwise(condlist: Any) -> Any:
    """Where no condition of ``np.select(condlist, ...)`` holds (where it takes ``default``).

    >>> select_otherwise([np.array([1, 0, 0]), np.array([0, 0, 1])]).tolist()
    [False, True, False]
    """
    none = ~as_array(condlist[0], bool)
    for c in condlist[1:]:
        none = none & ~as_array(c, bool)
    return none


def choose_vjp(g: Any, a: Any, choices: Any, k: int, mode: str = "raise") -> Any:
    """Cotangent of ``np.choose(a, choices, mode=mode)`` with respect to ``choices[k]``.

    >>> choose_vjp(np.ones(3), np.array([0, 1, 0]), [np.zeros(3), np.zeros(3)], 0).tolist()
    [1.0, 0.0, 1.0]
    """
    x = choices[k]
    taken = choose_mask(a, choices, k, mode)
    r = _sum_to(cast(np.where(taken, g, 0.0), _float_dtype(x)), np.shape(x))
    if isinstance(x, (float, int)) and eager(r):
        return float(r)
    return as_array(r)


def choose_mask(a: Any, choices: Any, k: int, mode: str = "raise") -> Any:
    """Where ``np.choose(a, choices, mode=mode)`` picks ``choices[k]`` (the index ``a`` wrapped
    or clipped first, as ``mode`` says).

    >>> choose_mask(np.array([0, 3, -1]), [0.0, 0.0], 1, "wrap").tolist()
    [False, True, True]
    """
    idx = as_array(a)
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


def put_index(a: Any, ind: Any) -> tuple[Any, ...]:
    """The positions ``np.put(a, ind, v)`` writes (``mode='raise'``): the flat positions
    ``ind`` (negative ones counted from the end, as NumPy does) as an index of ``a``.

    >>> a = np.zeros((2, 2))
    >>> a[put_index(a, [0, -1])] = [1.0, 4.0]
    >>> a.tolist()
    [[1.0, 0.0], [0.0, 4.0]]
    """
    flat = np.asarray(ind, dtype=np.intp)
    size = int(np.size(a))
    if np.any((flat < -size) | (flat >= size)):
        raise IndexError(f"index out of range for an array of size {size} (np.put's mode='raise')")
    return np.unravel_index(np.where(flat < 0, flat + size, flat), np.shape(a))


def along_axis_index(a: Any, indices: Any, axis: Any) -> tuple[Any, ...]:
    """The positions ``np.put_along_axis(a, indices, v, axis)`` writes (and
    ``np.take_along_axis`` reads), as an index of ``a``: ``indices`` along ``axis``, the
    other axes' positions broadcast against it (``axis=None``: ``a`` read flat).

    >>> a = np.zeros((2, 3))
    >>> a[along_axis_index(a, np.array([[0], [2]]), 1)] = 1.0
    >>> a.tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    indices = as_array(indices)
    if axis is None:
        return put_index(a, np.ravel(indices))
    shape = np.shape(a)
    if np.ndim(indices) != len(shape):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = axis % len(shape)
    index: list[Any] = []
    for k, n in enumerate(shape):
        if k == axis:
            index.append(indices)
        else:
            grid = [1] * len(shape)
            grid[k] = n
            index.append(np.reshape(np.arange(n), grid))
    full = np.broadcast_shapes(*(np.shape(i) for i in index))
    return tuple(np.broadcast_to(i, full) for i in index)


def added_at(a: Any, index: Any, b: Any) -> Any:
    """``a`` with ``b`` added at ``index``, repeated positions adding up, as a new array of
    ``a``'s dtype: what ``np.add.at(a, index, b)`` leaves in ``a``.

    >>> added_at(np.zeros(3), np.array([0, 2, 0]), np.array([1.0, 2.0, 4.0])).tolist()
    [5.0, 0.0, 2.0]
    """
    out = np.array(a, copy=True)
    np.add.at(out, index, b)
    return out


def subtracted_at(a: Any, index: Any, b: Any) -> Any:
    """What ``np.subtract.at(a, index, b)`` leaves in ``a``, as a new array.

    >>> subtracted_at(np.ones(2), [1, 1], 0.25).tolist()
    [1.0, 0.5]
    """
    out = np.array(a, copy=True)
    np.subtract.at(out, index, b)
    return out


def putmasked(a: Any, mask: Any, values: Any) -> Any:
    """What ``np.putmask(a, mask, values)`` leaves in ``a``, as a new array: where ``mask``
    holds, ``a``'s ``n``-th entry (flat) becomes ``values``' ``n % values.size``-th.

    >>> putmasked(np.zeros(5), np.array([1, 0, 1, 1, 0], bool), np.array([7.0, 8.0])).tolist()
    [7.0, 0.0, 7.0, 8.0, 0.0]
    """
    out = np.array(a, copy=True)
    np.putmask(out, mask, values)
    return out


def putmask_gather(g: Any, mask: Any, values: Any) -> Any:
    """The cotangent of ``values`` in :func:`putmasked`: ``g`` at the positions ``mask``
    holds, each added to the entry of ``values`` it was taken from (``n % values.size``).

    >>> putmask_gather(np.arange(5.0), np.array([1, 0, 1, 1, 0], bool), np.zeros(2)).tolist()
    [2.0, 3.0]
    """
    g, values = np.asarray(g), np.asarray(values)
    positions = np.flatnonzero(np.broadcast_to(mask, g.shape))
    summed = np.bincount(
        positions % max(values.size, 1), weights=g.ravel()[positions], minlength=values.size
    )
    return summed.astype(np.result_type(g.dtype, values.dtype)).reshape(values.shape)


def flat_index(a: Any, key: Any) -> tuple[Any, ...]:
    """The positions ``a.flat[key]`` reads or writes, as an index of ``a`` itself: ``a.flat``
    numbers the entries in C order whatever the memory layout, so the ``key``-th of
    ``np.arange(a.size)`` (a number, a slice, an array of numbers) unravelled into ``a``'s
    shape.

    >>> a = np.zeros((3, 3))
    >>> a[flat_index(a, slice(0, None, 4))] += 1.0  # a.flat[::4] += 1: the diagonal
    >>> a.tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    return np.unravel_index(np.arange(np.size(a))[key], np.shape(a))
