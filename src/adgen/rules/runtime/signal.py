"""Helpers of the rules for ``scipy.signal`` (:mod:`adgen.rules.signal`).

The convolutions of ``scipy.signal`` crop their ``'full'`` result to the ``mode`` asked
for; the derivative code puts a cotangent back where the ``'full'`` result has it
(:func:`full_pad_width`, for ``np.pad``) and correlates it with the other operand. The
boundaries of ``convolve2d`` / ``correlate2d`` are an ``np.pad`` of the first input by the
kernel's size less one on each side (:func:`boundary_pad_width`). Both give shapes only
(no derivative), and neither imports SciPy.
"""

from __future__ import annotations

from typing import Any


def _convolved_axes(axes: Any, ndim: int) -> set[int]:
    """The axes ``scipy.signal.fftconvolve(..., axes=axes)`` convolves along (all for None),
    made non-negative.

    >>> sorted(_convolved_axes(None, 3)), sorted(_convolved_axes(-1, 3))
    ([0, 1, 2], [2])
    >>> sorted(_convolved_axes([0, 2], 3))
    [0, 2]
    """
    if axes is None:
        return set(range(ndim))
    if isinstance(axes, int):
        axes = (axes,)
    return {int(a) % ndim for a in axes}


def full_pad_width(
    shape: tuple[int, ...],
    shape1: tuple[int, ...],
    shape2: tuple[int, ...],
    axes: Any = None,
    round_up: bool = False,
) -> tuple[tuple[int, int], ...]:
    """The ``pad_width`` of ``np.pad`` that puts an array of ``shape`` -- the result, or its
    cotangent, of a convolution of inputs of shapes ``shape1`` and ``shape2`` in mode
    ``'same'`` or ``'valid'`` -- back where the ``'full'`` result holds it, zeros around.

    The ``'full'`` result has ``n + m - 1`` entries along a convolved axis (``axes``; None:
    all) and the broadcast size ``max(n, m)`` along the others. SciPy keeps the centre of
    it: ``start = (full - size) // 2`` entries before the part kept (``(m - 1) // 2`` for
    ``'same'``, ``min(n, m) - 1`` for ``'valid'``), the odd one after it; ``round_up`` puts
    the odd one before it, as ``correlate2d`` does in mode ``'same'`` (``start = m // 2``).

    >>> full_pad_width((5,), (5,), (4,))  # 'same': 5 of the 8 entries of the full result
    ((1, 2),)
    >>> full_pad_width((5,), (5,), (4,), round_up=True)
    ((2, 1),)
    >>> full_pad_width((2, 3), (2, 6), (1, 4), axes=1)  # 'valid' along axis 1, 2 broadcast
    ((0, 0), (3, 3))
    """
    convolved = _convolved_axes(axes, len(shape1))
    width = []
    for i, (size, n, m) in enumerate(zip(shape, shape1, shape2, strict=True)):
        full = n + m - 1 if i in convolved else max(n, m)
        start = (full - size + (1 if round_up else 0)) // 2
        width.append((start, full - size - start))
    return tuple(width)


def boundary_pad_width(kernel_shape: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """The ``pad_width`` of ``np.pad`` that extends the first input of
    ``scipy.signal.convolve2d`` / ``correlate2d`` as their ``boundary`` does: by the kernel's
    size less one on each side (``'fill'``: the ``fillvalue``, ``'wrap'``: ``np.pad``'s
    ``'wrap'``, ``'symm'``: its ``'symmetric'``). The ``'full'`` result is then the
    ``'valid'`` convolution of the padded input with the kernel.

    >>> boundary_pad_width((3, 2))
    ((2, 2), (1, 1))
    """
    return tuple((m - 1, m - 1) for m in kernel_shape)


def lagged_sum(u: Any, x: Any, m: int, axis: int = -1) -> Any:
    """``c[k] = sum_n u[n] x[n - k]`` for ``k = 0 .. m - 1`` along ``axis`` (terms with
    ``n - k < 0`` left out), summed over the other axes of ``u`` and ``x`` (of one shape):
    what the coefficients of ``scipy.signal.lfilter`` receive of a cotangent.

    >>> import numpy as np
    >>> lagged_sum(np.array([1.0, 2.0, 3.0]), np.array([1.0, 10.0, 100.0]), 2)
    array([321.,  32.])
    """
    import numpy as np

    u, x = np.moveaxis(np.asarray(u), axis, -1), np.moveaxis(np.asarray(x), axis, -1)
    n = u.shape[-1]
    u2, x2 = u.reshape(-1, n), x.reshape(-1, n)
    return np.array(
        [np.sum(u2[:, k:] * x2[:, : n - k]) for k in range(int(m))],
        dtype=np.result_type(u2, x2, 1.0),
    )
