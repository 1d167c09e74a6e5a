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
