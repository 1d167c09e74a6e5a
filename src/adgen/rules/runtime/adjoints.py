"""Transposes of helpers, for the rules of :mod:`adgen.rules.adjoints` to call.

``rt.rebroadcast`` is the transpose of ``rt.unbroadcast`` in its cotangent, and
``rt.written_vjp`` that of ``rt.written``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .core import _sum_to
from .linalg import _is_basic_index, getitem_vjp

# -- derivatives of the helpers --
# Second derivatives differentiate the code adgen generated, which calls the helpers;
# ``adgen.rules.adjoints`` gives them rules. Most are linear in their cotangent, and the
# transposes of those linear maps that no NumPy function computes live here.


def rebroadcast(c: ArrayLike, g: ArrayLike) -> ArrayLike:
    """The adjoint of ``unbroadcast(g, x)`` with respect to ``g``: ``c`` (shaped like the
    result of ``unbroadcast``) broadcast back to ``np.shape(g)``, or summed to it where
    ``unbroadcast`` had broadcast ``g`` up. ``c`` itself when the shapes agree.

    >>> rebroadcast(np.array([1.0, 2.0]), np.zeros((3, 2))).tolist()
    [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]
    >>> float(rebroadcast(np.ones((2, 3)), 0.0))
    6.0
    >>> c = np.ones(2)
    >>> rebroadcast(c, np.zeros(2)) is c
    True
    """
    shape = np.shape(g)
    if np.shape(c) == shape:
        return c
    out = _sum_to(c, shape)
    return out if shape else out[()]


def _last_writes(shape: tuple[int, ...], index: Any) -> Any:
    """The mask (shaped like ``zeros(shape)[index]``) of the writes of ``y[index] = v`` that
    stay: where an integer index array names an element several times, the last one. ``None``
    when every write stays (basic indexing, boolean masks)."""
    if _is_basic_index(index) or isinstance(index, np.ndarray) and index.dtype == bool:
        return None
    positions = np.reshape(np.arange(int(np.prod(shape, dtype=np.int64))), shape)[index]
    flat = np.ravel(positions)
    _, last_from_end = np.unique(flat[::-1], return_index=True)
    keep = np.zeros(flat.shape, dtype=bool)
    keep[flat.size - 1 - last_from_end] = True
    return np.reshape(keep, np.shape(positions))


def written_vjp(c: ArrayLike, g: ArrayLike, index: Any) -> NDArray[Any]:
    """The adjoint of ``written(g, index)`` with respect to ``g``: zeros of ``g``'s shape
    with ``c`` put at ``index`` (only the writes that stay, as ``written`` reads them).

    >>> written_vjp(np.array([1.0, 2.0, 3.0]), np.zeros(3), np.array([0, 2, 0])).tolist()
    [3.0, 0.0, 2.0]
    >>> written_vjp(5.0, np.zeros(3), 1).tolist()
    [0.0, 5.0, 0.0]

    The cotangent of a list's item (``written`` of a list's cotangent): a list of zeros with
    ``c`` at ``index``.

    >>> written_vjp(np.ones(2), [np.zeros(2), 0.0, np.zeros((2, 2))], 0)[0].tolist()
    [1.0, 1.0]
    """
    if isinstance(g, list):  # (one item: a list's index names one place)
        return getitem_vjp(c, g, index)
    keep = _last_writes(np.shape(g), index)
    if keep is not None:
        c = np.where(keep, c, 0.0)
    return getitem_vjp(c, g, index)
