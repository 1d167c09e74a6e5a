"""Helpers of the shape and construction rules (:mod:`adgen.rules.shaping`, and the joins
of :mod:`adgen.rules.arrays`).

The part of a join's cotangent that came from one of its arrays (``rt.concatenated_part``,
for ``np.concatenate``, ``np.hstack``, ``np.vstack``, ``np.dstack``, ``np.column_stack``),
and the cotangents of the functions that copy entries, by source indices.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .core import dtype_of, refuse_unless
from .libraries import as_array, cast, eager, foreign, summed_at, zeros_for

# the functions that join arrays along an existing axis, by the name the rules pass
_JOIN_AXES = {"hstack": 0, "vstack": 0, "dstack": 2, "column_stack": 1}


def _join_shape(shape: tuple[int, ...], join: str) -> tuple[int, ...]:
    """A part's shape as ``np.<join>`` takes it: ``np.hstack`` at least 1-d, ``np.vstack``
    at least 2-d (a 1-d array is a row), ``np.dstack`` at least 3-d (``(1, n, 1)``,
    ``(m, n, 1)``), ``np.column_stack`` at least 2-d (a 1-d array is a column)."""
    n = len(shape)
    if join == "hstack" and n == 0:
        return (1,)
    if join == "vstack" and n < 2:
        return (1,) * (2 - n) + shape
    if join == "dstack" and n < 3:
        return {0: (1, 1, 1), 1: (1, *shape, 1)}.get(n, (*shape, 1))
    if join == "column_stack" and n < 2:
        return (*shape, 1) if n else (1, 1)
    return shape


def _joined_block(arrays: Any, k: int, axis: Any, join: str) -> tuple[int, int, int]:
    """``(axis, start, stop)``: where ``arrays[k]`` lies along the axis a join of ``arrays``
    concatenates: ``np.concatenate(arrays, axis)`` (``axis=None``: the flattened parts end to
    end), or ``np.hstack(arrays)``, ``np.vstack``, ``np.dstack``, ``np.column_stack`` when
    ``join`` names one (each part shaped as that function takes it)."""
    if join != "concatenate" and join not in _JOIN_AXES:
        raise ValueError(f"unknown join {join!r}")
    shapes = [np.shape(a) for a in arrays]
    if join == "concatenate" and axis is None:
        widths = [int(np.prod(s)) for s in shapes]
        axis = 0
    else:
        if join != "concatenate":
            shapes = [_join_shape(s, join) for s in shapes]
            # np.hstack joins 1-d arrays end to end, the others side by side
            axis = 1 if join == "hstack" and len(shapes[0]) > 1 else _JOIN_AXES[join]
        widths = [s[axis] for s in shapes]
    start = sum(widths[:k])
    return axis, start, start + widths[k]


def concatenated_part(g: Any, arrays: Any, k: int, axis: Any = 0, join: str = "concatenate") -> Any:
    """The part of ``g`` (the cotangent of ``np.concatenate(arrays, axis)``, or of
    ``np.hstack(arrays)``, ``np.vstack``, ``np.dstack``, ``np.column_stack`` when ``join``
    names one) that came from ``arrays[k]``, in the shape of ``arrays[k]``.

    >>> concatenated_part(np.arange(5.0), (np.ones(2), np.ones(3)), 1).tolist()
    [2.0, 3.0, 4.0]
    >>> concatenated_part(np.arange(3.0), (1.0, np.ones(2)), 0, join="hstack").tolist()
    0.0
    >>> concatenated_part(np.arange(6.0), (np.ones((2, 2)), np.ones(2)), 0, None).tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """
    axis, start, stop = _joined_block(arrays, k, axis, join)
    index = [slice(None)] * np.ndim(g)
    index[axis] = slice(start, stop)
    return np.reshape(as_array(g)[tuple(index)], np.shape(arrays[k]))


def concatenated_part_vjp(
    c: Any, g: Any, arrays: Any, k: int, axis: Any = 0, join: str = "concatenate"
) -> Any:
    """The transpose of :func:`concatenated_part` in ``g``: zeros shaped like ``g`` with ``c``
    where ``arrays[k]``'s part lies.

    >>> concatenated_part_vjp(np.ones(3), np.zeros(5), (np.ones(2), np.ones(3)), 1).tolist()
    [0.0, 0.0, 1.0, 1.0, 1.0]
    >>> concatenated_part_vjp(2.0, np.zeros(3), (1.0, np.ones(2)), 0, join="hstack").tolist()
    [2.0, 0.0, 0.0]
    """
    axis, start, stop = _joined_block(arrays, k, axis, join)
    dtype = np.result_type(g, c, 1.0)
    if not eager(g, c):  # no writes into another library's array: c padded with zeros
        shape = list(np.shape(g))
        widths = [(0, 0)] * len(shape)
        widths[axis] = (start, shape[axis] - stop)
        shape[axis] = stop - start
        part = np.reshape(as_array(c, dtype), shape)
        if not foreign(part):  # c a NumPy array or a number: on g's side
            part = part + zeros_for(tuple(shape), dtype, g)
        return np.pad(part, widths)
    index = [slice(None)] * np.ndim(g)
    index[axis] = slice(start, stop)
    out = np.zeros(np.shape(g), dtype=dtype)
    out[tuple(index)] = np.reshape(c, np.shape(out[tuple(index)]))
    return out


# -- shaping helpers --
# Functions that copy entries of an array into a new shape (np.tile, np.repeat, np.pad,
# np.diag, np.insert...) are differentiated by applying the very same function to an array
# of *source indices*: each entry of the result then names the entry of the input it was
# copied from (0 for entries copied from nowhere), and the cotangent of the input sums the
# result's cotangent over the entries copied from it.


def source_index(x: ArrayLike) -> NDArray[Any]:
    """Integer array of ``x``'s shape numbering its entries from 1 (row-major order).

    >>> source_index(np.zeros((2, 2))).tolist()
    [[1, 2], [3, 4]]
    >>> source_index(2.0).shape
    ()
    """
    shape = np.shape(x)
    size = int(np.prod(shape, dtype=np.int64))
    return np.reshape(np.arange(1, size + 1, dtype=np.int64), shape)


def gathered_vjp(g: ArrayLike, x: ArrayLike, taken: ArrayLike) -> NDArray[Any]:
    """Cotangent of a result that copies entries of ``x``: ``taken`` (of the result's shape)
    holds, for each entry of the result, ``k`` if it is a copy of entry ``k - 1`` of
    ``x.ravel()`` and 0 if it comes from elsewhere. Copies accumulate.

    >>> x = np.zeros(2)
    >>> gathered_vjp(np.array([1.0, 2.0, 4.0]), x, np.repeat(source_index(x), [2, 1])).tolist()
    [3.0, 4.0]
    >>> gathered_vjp(np.array([1.0, 2.0, 4.0]), x, np.array([0, 2, 0])).tolist()
    [0.0, 2.0]
    """
    shape = np.shape(x)
    size = int(np.prod(shape, dtype=np.int64))
    dtype = np.result_type(g, x)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    if not eager(g, taken):
        # no boolean selection (its length is a value): the entries copied from nowhere add
        # 0 at position 0; the positions take g's library (and chunks)
        if size == 0:
            return zeros_for(shape, dtype, g, taken)
        positions: Any = taken
        hit = positions > 0
        sums = summed_at(np.where(hit, positions - 1, 0), np.where(hit, g, 0), size)
        return np.reshape(cast(sums, dtype), shape)
    taken = np.ravel(taken)
    g = np.broadcast_to(g, np.shape(taken) if np.ndim(g) == 0 else np.shape(g))
    g = np.ravel(g)
    hit = taken > 0
    sums = summed_at(taken[hit] - 1, g[hit], size)
    return np.reshape(cast(sums, dtype, copy=False), shape)


def gathered(c: ArrayLike, taken: ArrayLike) -> NDArray[Any]:
    """The transpose of :func:`gathered_vjp` in its cotangent: an array of ``taken``'s shape
    holding entry ``k - 1`` of ``c.ravel()`` where ``taken`` is ``k``, and 0 where it is 0
    (the function that copied the entries, applied to ``c``, with zeros where entries came
    from elsewhere).

    >>> gathered(np.array([1.0, 2.0]), np.array([1, 1, 0, 2])).tolist()
    [1.0, 1.0, 0.0, 2.0]
    >>> gathered(3.0, np.array([[0, 1], [1, 0]])).tolist()
    [[0.0, 3.0], [3.0, 0.0]]
    """
    c = as_array(c)
    if not np.issubdtype(c.dtype, np.inexact):
        c = cast(c, np.float64)
    taken = as_array(taken)
    flat = np.concatenate((zeros_for((1,), c.dtype, c, taken), np.ravel(c)))
    if eager(flat, taken):
        return flat[taken]
    # one index array of several axes: Dask indexes with 1-d ones only
    return np.reshape(flat[np.ravel(taken)], np.shape(taken))


def joined_items(*parts: Any) -> tuple[Any, ...]:
    """The items of ``parts`` (sequences) in one tuple: the arguments a method that packs its
    own (``x.reshape(*y.shape, -1)``) is given, where a spread's length is known only when
    the code runs.

    >>> joined_items((3, 4), (-1,)), joined_items([2], ())
    ((3, 4, -1), (2,))
    """
    return tuple(item for part in parts for item in part)


joined_items.adgen_reads_only = True  # type: ignore[attr-defined]  # (run as written: reads)


def inverse_axes(axes: Any) -> tuple[int, ...]:
    """The axes undoing ``np.transpose(a, axes)`` (``axes`` holds every axis of ``a`` once,
    negative ones counted from the end), as Python integers: a tuple every array library's
    ``transpose`` takes (Dask's tests ``if axes:``).

    >>> inverse_axes((1, 2, 0)), inverse_axes([-1, 0, 1])
    ((2, 0, 1), (1, 2, 0))
    """
    n = len(axes)
    inverse = [0] * n
    for position, axis in enumerate(axes):
        inverse[int(axis) % n] = position
    return tuple(inverse)


def rollaxis_destination(ndim: int, axis: int, start: int = 0) -> int:
    """Where ``np.rollaxis(a, axis, start)`` puts ``axis`` (``a`` has ``ndim`` axes), so
    that the roll equals ``np.moveaxis(a, axis, destination)``.

    >>> rollaxis_destination(3, 2, 0), rollaxis_destination(3, 0, 3), rollaxis_destination(3, 1, 2)
    (0, 2, 1)
    """
    axis = int(axis) % ndim
    start = int(start)
    if start < 0:
        start += ndim
    if axis < start:
        start -= 1
    return start


def index_order(a: Any, order: str = "C") -> str:
    """The index order ``np.reshape(a, shape, order)`` reads and writes in: ``'A'`` is
    ``'F'`` for an array laid out in Fortran order only, else ``'C'`` (``a``'s memory decides,
    not a tangent's).

    >>> index_order(np.zeros((2, 3)), "A"), index_order(np.zeros((2, 3)).T, "A")
    ('C', 'F')
    """
    if order != "A":
        return order
    flags = getattr(a, "flags", None)
    fortran = flags is not None and flags.f_contiguous and not flags.c_contiguous
    return "F" if fortran else "C"


def ravel_axes(a: Any, order: str = "C") -> tuple[int, ...]:
    """The axes of ``a`` in the order ``np.ravel(a, order)`` reads them, slowest first: the
    ravel is ``np.reshape(np.transpose(a, axes), -1)``. ``'A'`` and ``'K'`` follow ``a``'s
    memory (``'K'``: its strides, largest first, never reversing an axis), so a tangent or
    cotangent laid out otherwise is read in ``a``'s order, not its own. Where two axes' strides
    tie (memory read twice, as ``np.broadcast_to`` makes) NumPy's ``'K'`` order is its
    iterator's choice, which adgen does not guess: refused.

    >>> a = np.zeros((2, 3))
    >>> ravel_axes(a), ravel_axes(a, "F"), ravel_axes(a.T, "A"), ravel_axes(a.T, "K")
    ((0, 1), (1, 0), (1, 0), (1, 0))
    >>> ravel_axes(a[:, ::-1], "K"), ravel_axes(np.zeros((4, 2, 3)).transpose(2, 0, 1)[::2], "K")
    ((0, 1), (1, 2, 0))
    """
    n = np.ndim(a)
    flags = getattr(a, "flags", None)
    order = index_order(a, order)
    if order == "K" and n > 1 and flags is not None and (flags.c_contiguous or flags.f_contiguous):
        order = "C" if flags.c_contiguous else "F"
    if order == "K" and n > 1:
        shape, strides = np.shape(a), np.asarray(a).strides
        moving = [(abs(s), i) for i, (s, m) in enumerate(zip(strides, shape, strict=True)) if m > 1]
        sizes = [s for s, _ in moving]
        refuse_unless(
            0 not in sizes and len(set(sizes)) == len(sizes),
            "np.ravel(a, order='K') of an array whose memory holds some entries twice (a "
            "broadcast view): NumPy's order there is its iterator's choice",
            "ravel a copy (`np.ravel(a.copy())`), or pass order='C'",
        )
        # an axis of length 1 is read anywhere: it keeps the place C order gives it
        found = iter(i for _, i in sorted(moving, key=lambda t: -t[0]))
        return tuple(i if shape[i] == 1 else next(found) for i in range(n))
    if order == "F":
        return tuple(range(n))[::-1]
    return tuple(range(n))


def pad_interior(shape: tuple[int, ...], pad_width: Any) -> tuple[slice, ...]:
    """The index of the original array inside ``np.pad(x, pad_width)`` for ``x`` of ``shape``.

    >>> pad_interior((3, 2), ((1, 2), (0, 1)))
    (slice(1, 4, None), slice(0, 2, None))
    >>> pad_interior((3,), 2)
    (slice(2, 5, None),)
    """
    widths = np.broadcast_to(as_array(pad_width, np.int64), (len(shape), 2))
    return tuple(slice(int(b), int(b) + n) for (b, _), n in zip(widths, shape, strict=True))


_COPYING_PAD_MODES = ("edge", "reflect", "symmetric", "wrap")


def copying_pad_mode(mode: Any) -> str:
    """``mode`` itself if ``np.pad`` fills the border with copies of entries (``'edge'``,
    ``'reflect'``, ``'symmetric'``, ``'wrap'``); other modes (statistics, ramps, callables)
    have no derivative rule and raise ``NotImplementedError``.

    >>> copying_pad_mode("wrap")
    'wrap'
    """
    if isinstance(mode, str) and mode in _COPYING_PAD_MODES:
        return mode
    modes = ", ".join(map(repr, _COPYING_PAD_MODES))
    raise NotImplementedError(
        f"adgen differentiates np.pad in modes 'constant', {modes} only, not {mode!r}"
    )


def samples_only(num: Any, retstep: Any) -> Any:
    """``num``, for the derivative of ``np.linspace(start, stop, num)``; with
    ``retstep=True`` (a pair: the samples and the step) it raises ``NotImplementedError``.
    (Generated code calls it only for ``retstep=True``: the template's test is decided
    when the code is written.)

    >>> samples_only(5, False)
    5
    """
    if retstep:
        raise NotImplementedError(
            "adgen differentiates np.linspace w.r.t. start and stop without retstep=True only: "
            "compute the step as (stop - start) / (num - 1)"
        )
    return num


def inserted_tangent(arr: Any, obj: Any, dvalues: Any, axis: Any = None) -> Any:
    """Tangent of ``np.insert(arr, obj, values, axis)`` from the tangent of ``values``: zero
    when ``arr`` is not floating (``np.insert`` casts ``values`` to ``arr``'s dtype).

    >>> inserted_tangent(np.zeros(2), 1, 5.0).tolist()
    [0.0, 5.0, 0.0]
    >>> inserted_tangent(np.arange(2), 1, 5.0).tolist()
    [0.0, 0.0, 0.0]
    """
    if not foreign(dvalues):
        if not np.issubdtype(dtype_of(arr), np.inexact):
            shape = np.shape(np.insert(arr, obj, 0, axis=axis))
            return np.zeros(shape, dtype=dtype_of(dvalues))
        return np.insert(np.zeros(np.shape(arr), dtype=dtype_of(dvalues)), obj, dvalues, axis=axis)
    # another library's tangent: NumPy inserts source indices (Dask's np.insert needs an axis,
    # and takes a scalar obj's values as one slice), through which the entries are copied
    slots = np.insert(
        np.zeros(np.shape(arr), dtype=np.int64), obj, source_index(dvalues), axis=axis
    )
    if not np.issubdtype(dtype_of(arr), np.inexact):
        return np.zeros_like(dvalues, shape=np.shape(slots))
    return gathered(dvalues, slots)


def inserted_values_vjp(g: Any, arr: Any, obj: Any, values: Any, axis: Any = None) -> Any:
    """Cotangent of ``values`` in ``np.insert(arr, obj, values, axis)`` (cotangent ``g``):
    ``g`` summed over the slots each value was broadcast to; zero when ``arr`` is not
    floating.

    >>> inserted_values_vjp(np.arange(4.0), np.zeros(2), 1, np.zeros(2)).tolist()
    [1.0, 2.0]
    >>> float(inserted_values_vjp(np.arange(5.0).reshape(1, 5), np.zeros((1, 3)), [0, 2], 1.0, 1))
    3.0
    """
    if not np.issubdtype(dtype_of(arr), np.inexact):
        return gathered_vjp(np.zeros_like(g), values, np.zeros(np.shape(g), dtype=np.int64))
    slots = np.insert(np.zeros(np.shape(arr), dtype=np.int64), obj, source_index(values), axis=axis)
    return gathered_vjp(g, values, slots)
