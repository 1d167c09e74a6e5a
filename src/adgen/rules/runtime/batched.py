"""Helpers of batched forward mode: tangents with a leading batch axis.

Code made by :mod:`adgen.modes.batched` pushes ``k`` tangents through one pass: the tangent
of a value of shape ``s`` has shape ``(k, *s)``. These helpers are what the rules' batched
templates (``bjvp_<p>``) and that mode's bookkeeping call where the batch axis changes how
NumPy must be asked: axes shifted past it, indices that must leave it alone, sums down to a
broadcast operand's shape. adgen never differentiates batched code again (``jacfwd`` of
``jacfwd`` reads the one-tangent code), so these helpers have no rules of their own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import Like
from .linalg import getitem_vjp, written


def batch_axis(axis: Any, ndim: int) -> Any:
    """``axis`` of an array of ``ndim`` axes, for the same array with a batch axis in front
    (``None``, all axes, is every axis but the batch axis).

    >>> batch_axis(0, 2), batch_axis(-1, 2), batch_axis(None, 2), batch_axis((0, -1), 3)
    (1, -1, (1, 2), (1, -1))
    """
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, tuple):
        return tuple(batch_axis(a, ndim) for a in axis)
    axis = int(axis)
    return axis + 1 if axis >= 0 else axis


def batch_zeros(x: Any, k: int) -> Any:
    """``k`` zero tangents of ``x``: shape ``(k, *x.shape)``, ``x``'s floating dtype.

    >>> batch_zeros(np.ones((2, 3), dtype=np.float32), 4).shape
    (4, 2, 3)
    >>> batch_zeros(1.0, 2).tolist()
    [0.0, 0.0]
    >>> batch_zeros([], 2), [z.shape for z in batch_zeros([np.ones(3)], 2)]
    ([], [(2, 3)])
    """
    if isinstance(x, list):  # a list's tangents: one batch per item
        return [batch_zeros(e, k) for e in x]
    if isinstance(x, tuple):
        return tuple(batch_zeros(e, k) for e in x)
    if x is None or isinstance(x, (bool, int, float)):
        return np.zeros(k)
    if type(x) is Like:  # the shape and dtype reverse mode keeps of an array
        return np.zeros((k, *x.shape), dtype=x.dtype if x.dtype.kind in "fc" else np.float64)
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):  # (a value without numbers: a range, a shape record)
        return np.zeros(k)
    if a.dtype.kind not in "biufc":
        return np.zeros(k)
    return np.zeros((k, *a.shape), dtype=a.dtype if a.dtype.kind in "fc" else np.float64)


def _basic(index: Any) -> bool:
    """Does ``index`` hold at most one array (so that a slice in front leaves its axes where
    the same index puts them without it)?"""
    items = index if isinstance(index, tuple) else (index,)
    arrays = [i for i in items if not isinstance(i, (int, np.integer, slice, type(None)))]
    if any(i is Ellipsis for i in items):
        arrays = [i for i in arrays if i is not Ellipsis]
    return len(arrays) <= 1 and not any(isinstance(i, (list, tuple)) for i in arrays)


def lifted(d: Any, ndim: int) -> Any:
    """Tangents ``d`` (``(k, *s)``) with axes of length 1 inserted after the batch axis up to
    ``ndim`` axes besides it: they broadcast against values of ``ndim`` axes.

    >>> lifted(np.ones((4, 3)), 2).shape
    (4, 1, 3)
    """
    missing = ndim - (np.ndim(d) - 1)
    if missing <= 0:
        return d
    return np.reshape(d, (np.shape(d)[0],) + (1,) * missing + np.shape(d)[1:])


def batched_unbroadcast(d: Any, x: Any) -> Any:
    """Tangents ``d`` (``(k, *s)``) summed down to ``(k, *x.shape)`` over the axes
    broadcasting added or stretched.

    >>> batched_unbroadcast(np.ones((2, 3, 4)), np.ones(4)).tolist()
    [[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]
    >>> batched_unbroadcast(np.ones((2, 3, 4)), np.ones((3, 1))).shape
    (2, 3, 1)
    >>> batched_unbroadcast(np.ones((2, 4)), np.ones((3, 4))).shape
    (2, 3, 4)
    """
    shape = np.shape(x)
    k, have = np.shape(d)[0], np.shape(d)[1:]
    if have == shape:
        return d
    lead = len(have) - len(shape)
    if lead < 0:  # fewer axes than x (a zero, a scalar): broadcast up, as rt.unbroadcast
        return np.broadcast_to(lifted(d, len(shape)), (k, *shape))
    axes = tuple(range(1, lead + 1)) + tuple(
        lead + 1 + i for i, n in enumerate(shape) if n == 1 and have[lead + i] != 1
    )
    if axes:
        d = np.sum(d, axis=axes, keepdims=True)
    d = np.reshape(d, (k, *np.shape(d)[lead + 1 :]))
    return np.broadcast_to(d, (k, *shape))


def batched_unreduce(d: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Tangents ``d`` of a reduction's result broadcast back over the reduced axes of ``x``:
    ``(k, *x.shape)`` (``rt.unreduce`` of each tangent).

    >>> batched_unreduce(np.array([1.0, 2.0]), np.ones((2, 3))).tolist()
    [[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]]
    >>> batched_unreduce(np.ones((2, 3)), np.ones((4, 3)), axis=0).shape
    (2, 4, 3)
    """
    shape = np.shape(x)
    if not keepdims:
        axes = batch_axis(axis, len(shape))
        axes = axes if isinstance(axes, tuple) else (axes,)
        count = len(shape) + 1
        d = np.expand_dims(d, tuple(a if a >= 0 else a + count for a in axes))
    return np.broadcast_to(d, (np.shape(d)[0], *shape))


def batch_transpose(axes: Any, ndim: int) -> tuple[int, ...]:
    """The axes of ``np.transpose(x, axes)`` for ``x`` with a batch axis in front, which
    stays in front (``axes=None``: the others reversed).

    >>> batch_transpose(None, 3), batch_transpose((1, 0, -1), 3)
    ((0, 3, 2, 1), (0, 2, 1, 3))
    """
    if axes is None:
        return (0, *range(ndim, 0, -1))
    return (0, *(int(a) % ndim + 1 for a in axes))


def batched_getitem_vjp(d: Any, x: Any, index: Any) -> Any:
    """``rt.getitem_vjp`` of each of the tangents ``d``: zeros of ``(k, *x.shape)`` holding
    each tangent at ``index`` (repeated entries of an index array add up).

    >>> batched_getitem_vjp(np.array([[1.0], [2.0]]), np.zeros(3), slice(1, 2)).tolist()
    [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]]
    >>> batched_getitem_vjp(np.ones((2, 2)), np.zeros(3), np.array([0, 0])).tolist()
    [[2.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
    """
    k = np.shape(d)[0]
    dtype = np.result_type(x, d)
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    out = np.zeros((k, *np.shape(x)), dtype=dtype)
    if isinstance(x, np.ndarray) and _basic(index):
        items = index if isinstance(index, tuple) else (index,)
        np.add.at(out, (slice(None),) + tuple(items), d)
        return out
    return np.stack([getitem_vjp(e, x, index) for e in d])


def batched_written(d: Any, index: Any) -> Any:
    """``rt.written`` of each of the tangents ``d`` (those of ``v`` in ``y[index] = v``).

    >>> batched_written(np.arange(6.0).reshape(2, 3), np.array([0, 2, 0])).tolist()
    [[0.0, 2.0, 0.0], [0.0, 5.0, 3.0]]
    """
    if isinstance(d, np.ndarray) and type(index) in (int, slice):
        return np.copy(d[:, index])
    return np.stack([written(e, index) for e in d])
