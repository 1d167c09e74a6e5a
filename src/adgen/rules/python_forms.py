"""NumPy's functions whose number of results is the number of arrays they are given
(``np.broadcast_arrays``, ``np.meshgrid``), written as the calls they make.

A rule's ``outputs`` is a number fixed when it is registered, so these have no rule. adgen
reads them instead as the Python below (:func:`adgen.rules.registry.read_as_python`), the
way it reads a function of the user's: their derivatives are those of ``np.broadcast_to``,
``np.reshape`` and ``np.copy``, and the number of results is that of the call's arrays,
known when adgen reads the call. Each gives NumPy's values and shapes:

>>> x, y = np.arange(3.0), np.arange(2.0)[:, None]
>>> all(np.array_equal(a, b) for a, b in zip(broadcast_arrays(x, y), np.broadcast_arrays(x, y)))
True
>>> all(
...     np.array_equal(a, b)
...     for indexing in ("xy", "ij")
...     for sparse in (False, True)
...     for a, b in zip(
...         meshgrid(x, x[:2], sparse=sparse, indexing=indexing),
...         np.meshgrid(x, x[:2], sparse=sparse, indexing=indexing),
...     )
... )
True

What differs from NumPy: ``broadcast_arrays``' results are read-only views (NumPy's warn
when written and will become read-only), and both return tuples (NumPy before 2.0 returned
lists).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def broadcast_arrays(*args: Any, subok: bool = False) -> tuple[Any, ...]:
    """``np.broadcast_arrays``: each array broadcast to the shape of all."""
    arrays = [np.asanyarray(a) if subok else np.asarray(a) for a in args]
    shape = np.broadcast_shapes(*[np.shape(a) for a in arrays])
    return tuple([np.broadcast_to(a, shape) for a in arrays])


def meshgrid(
    *xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> tuple[Any, ...]:
    """``np.meshgrid``: coordinate arrays from coordinate vectors."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    swap = indexing == "xy" and ndim > 1  # the first two axes swapped
    arrays = tuple(
        [np.reshape(np.asarray(x), _grid_shape(i, ndim, swap)) for i, x in enumerate(xi)]
    )
    if not sparse:
        arrays = broadcast_arrays(*arrays)
    if copy:
        arrays = tuple([np.copy(a) for a in arrays])
    return arrays


def _grid_shape(i: int, ndim: int, swap: bool) -> tuple[int, ...]:
    """The shape ``meshgrid`` gives its ``i``-th vector: its length on one axis of ``ndim``."""
    axis = 1 - i if swap and i < 2 else i
    return (1,) * axis + (-1,) + (1,) * (ndim - axis - 1)


# -- ufuncs' methods: ``np.add.reduce(a)`` is ``np.sum(a, axis=0)``, ``np.subtract.outer(x, y)``
# ``x[..., None] - y``, as NumPy computes them


def _reduce_with(fn: Any, casts: bool) -> Any:
    """``ufunc.reduce`` of the ufunc whose reduction is ``fn`` (``np.sum``, ``np.max``):
    along ``axis``, 0 by default; ``initial=`` and ``where=`` passed on only where given (a
    rule that does not take one refuses it by its name). ``casts``: ``fn`` takes ``dtype=``
    itself."""

    def reduce(
        array: Any,
        axis: Any = 0,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = np._NoValue,
        where: Any = True,
    ) -> Any:
        options = {"axis": axis, "out": out, "keepdims": keepdims}
        if casts:
            options["dtype"] = dtype
        elif dtype is not None:
            array = np.asarray(array, dtype=dtype)
        if initial is not np._NoValue:
            options["initial"] = initial
        if where is not True:
            options["where"] = where
        return fn(array, **options)

    return reduce


def _accumulate_with(fn: Any) -> Any:
    """``ufunc.accumulate`` of the ufunc whose scan is ``fn`` (``np.cumsum``)."""

    def accumulate(array: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        return fn(array, axis=axis, dtype=dtype, out=out)

    return accumulate


def _outer_of(ufunc: Any) -> Any:
    """``ufunc.outer(A, B)``: ``ufunc`` of every item of ``A`` with every item of ``B``, the
    result's axes ``A``'s then ``B``'s."""

    def outer(A: Any, B: Any, /, **kwargs: Any) -> Any:
        return ufunc(np.reshape(A, np.shape(A) + (1,) * np.ndim(B)), B, **kwargs)

    return outer


UFUNC_METHODS: dict[tuple[Any, str], Any] = {
    (np.add, "reduce"): _reduce_with(np.sum, True),
    (np.multiply, "reduce"): _reduce_with(np.prod, True),
    (np.maximum, "reduce"): _reduce_with(np.max, False),
    (np.minimum, "reduce"): _reduce_with(np.min, False),
    (np.add, "accumulate"): _accumulate_with(np.cumsum),
    (np.multiply, "accumulate"): _accumulate_with(np.cumprod),
}
UFUNC_METHODS.update(
    {
        (ufunc, "outer"): _outer_of(ufunc)
        for ufunc in (
            np.add,
            np.subtract,
            np.multiply,
            np.divide,
            np.true_divide,
            np.power,
            np.maximum,
            np.minimum,
            np.arctan2,
            np.hypot,
            np.logaddexp,
        )
    }
)
