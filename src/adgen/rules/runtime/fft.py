"""Helpers of the rules for ``np.fft`` (:mod:`adgen.rules.fft`).

* ``rt.fft_resize(a, shape)``: ``a`` cropped or padded with zeros (at the end of each axis)
  to ``shape``, as ``np.fft`` treats its input when ``n=`` or ``s=`` asks for another
  length. It is linear, and its transpose is the same helper back to ``a``'s shape: the
  cotangent of a transform with ``n=`` is the transform's transpose, resized back.
* ``rt.fft_axes(ndim, s, axes)`` and ``rt.fft_sizes(shape, s, axes, inverse_real)``: the
  axes an n-dimensional transform (``np.fft.fftn``...) works along and the lengths it
  transforms there, as NumPy computes them (``s`` and ``axes`` given or not, ``-1`` in
  ``s``); ``fft_axes`` refuses repeated axes, for which the derivative code does not hold.
* ``rt.hermitian_weights(v, axis)``: the weights ``1, 2, ..., 2, (1), 0, ...`` along
  ``axis`` of the transpose of ``np.fft.irfft`` (a half spectrum stands for a full
  Hermitian-symmetric one: each entry but the zero-frequency one and, for an even length,
  the Nyquist one, counts twice).

``fft_resize`` has rules of its own; the other three give shapes and constants (no
derivative). None of them imports anything but NumPy.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np


def fft_resize(a: Any, shape: Any) -> Any:
    """``a`` cropped or padded with zeros to ``shape`` (same number of axes): along each axis
    the first entries are kept, and zeros are added at the end, as ``np.fft.fft(a, n=...)``
    does to its input. Linear in ``a``; its transpose is ``fft_resize(g, np.shape(a))``.

    >>> fft_resize(np.arange(1.0, 5.0), (2,)).tolist(), fft_resize(np.ones(2), (4,)).tolist()
    ([1.0, 2.0], [1.0, 1.0, 0.0, 0.0])
    >>> fft_resize(np.ones((2, 3)), (3, 2)).tolist()
    [[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]
    """
    old = tuple(np.shape(a))
    new = tuple(int(n) for n in shape)
    if old == new:
        return a
    if len(old) != len(new):
        raise ValueError(f"adgen: cannot resize an array of shape {old} to {new}")
    a = a[tuple(slice(0, min(o, n)) for o, n in zip(old, new))]
    width = tuple((0, max(n - o, 0)) for o, n in zip(old, new))
    if any(w for _, w in width):
        a = np.pad(a, width)
    return a


def _axis_list(axes: Any) -> list[int]:
    if isinstance(axes, (int, np.integer)):
        return [operator.index(axes)]
    return [operator.index(a) for a in axes]


def fft_axes(
    ndim: int, s: Any = None, axes: Any = None, what: str = "np.fft.fftn"
) -> tuple[int, ...]:
    """The axes (non-negative) an n-dimensional transform of an array of ``ndim`` axes works
    along, as NumPy reads ``s`` and ``axes``: ``axes`` itself, else the last ``len(s)``
    axes, else every axis. Raises ``ValueError`` for repeated axes (NumPy transforms such an
    axis twice; the derivative code of ``what`` does not follow it there).

    >>> fft_axes(3), fft_axes(3, (4, 4)), fft_axes(3, None, (-1, 0))
    ((0, 1, 2), (1, 2), (2, 0))
    >>> fft_axes(2, None, (0, -2))
    Traceback (most recent call last):
    ...
    ValueError: adgen: the derivative of np.fft.fftn needs distinct axes, not (0, -2)
    """
    if axes is None:
        count = ndim if s is None else len(s)
        return tuple(range(ndim - count, ndim))
    listed = _axis_list(axes)
    found = tuple(a % ndim if -ndim <= a < ndim else a for a in listed)
    if any(not 0 <= a < ndim for a in found):
        raise ValueError(f"axes {tuple(listed)} out of range for an array of {ndim} axes")
    if len(set(found)) != len(found):
        raise ValueError(
            f"adgen: the derivative of {what} needs distinct axes, not {tuple(listed)}"
        )
    return found


def fft_sizes(
    shape: Any, s: Any = None, axes: Any = None, inverse_real: bool = False
) -> tuple[int, ...]:
    """The lengths an n-dimensional transform of an array of ``shape`` transforms along its
    axes (:func:`fft_axes`): ``s`` (``-1``: the input's length there), else the input's
    lengths, except for an inverse real transform (``np.fft.irfftn``) without ``s``, whose
    last length is ``2 * (m - 1)`` for a last axis of ``m`` entries.

    >>> fft_sizes((3, 4)), fft_sizes((3, 4), (5, -1), (0, 1)), fft_sizes((3, 4), None, (0,))
    ((3, 4), (5, 4), (3,))
    >>> fft_sizes((3, 4), inverse_real=True)
    (3, 6)
    """
    shape = tuple(shape)
    if axes is None:
        found = fft_axes(len(shape), s, None)
    else:  # (repeated axes are fft_axes's to refuse)
        found = tuple(a % len(shape) for a in _axis_list(axes))
    if s is None:
        sizes = [shape[a] for a in found]
        if inverse_real:
            sizes[-1] = 2 * (sizes[-1] - 1)
    else:
        last = len(found) - 1
        sizes = [
            shape[a]
            if n == -1 or (n is None and not (inverse_real and k == last))
            else 2 * (shape[a] - 1)
            if n is None
            else operator.index(n)
            for k, (n, a) in enumerate(zip(s, found))
        ]
    return tuple(sizes)


def hermitian_weights(v: Any, axis: int) -> Any:
    """Weights along ``axis`` (``v`` gives its length ``n`` and the floating type; every
    other axis has length 1) of the transpose of ``np.fft.irfft(c, n)``: 1 for the
    zero-frequency entry, 2 for the entries ``1 .. (n - 1) // 2`` (each stands for itself
    and its conjugate), 1 for the Nyquist entry ``n // 2`` of an even ``n``, and 0 beyond
    ``n // 2`` (entries the half spectrum does not hold).

    >>> hermitian_weights(np.zeros(4), 0).tolist(), hermitian_weights(np.zeros(5), 0).tolist()
    ([1.0, 2.0, 1.0, 0.0], [1.0, 2.0, 2.0, 0.0, 0.0])
    >>> hermitian_weights(np.zeros((2, 3), dtype=np.complex64), 1).dtype
    dtype('float32')
    """
    shape = np.shape(v)
    axis = operator.index(axis) % len(shape)
    n = shape[axis]
    dtype = np.finfo(np.result_type(getattr(v, "dtype", np.float64), 1.0)).dtype
    weights = np.zeros(n, dtype=dtype)
    weights[0] = 1.0
    weights[1 : (n - 1) // 2 + 1] = 2.0
    if n % 2 == 0 and n > 1:
        weights[n // 2] = 1.0
    return np.reshape(weights, [n if k == axis else 1 for k in range(len(shape))])
