"""Helpers of the loops reverse mode writes: run backwards, and checkpointed.

``rt.backwards(r)`` is ``reversed(r)`` as a range, and ``rt.checkpoint_every(n, every)`` the
segment length of a checkpointed loop (:func:`adgen.checkpoint`).
"""

from __future__ import annotations

import math
import operator

# -- loops of generated code --


def backwards(r: range) -> range:
    """``reversed(r)`` as a range again (``r[::-1]``): reverse-mode code runs its loops
    backwards with it, and code differentiated again can reverse them once more.

    >>> list(backwards(range(1, 4)))
    [3, 2, 1]
    """
    if not isinstance(r, range):
        raise TypeError(f"rt.backwards takes a range, not {type(r).__name__}")
    return r[::-1]


# --------------------------------------------------------------------------- checkpointing


def checkpoint_every(n: int, every: int | None = None) -> int:
    """Segment length of a checkpointed loop of ``n`` iterations: ``every`` if given (a
    positive integer), else ``ceil(sqrt(n))`` (at least 1).

    >>> checkpoint_every(10), checkpoint_every(16), checkpoint_every(0), checkpoint_every(10, 4)
    (4, 4, 1, 4)
    """
    if every is None:
        return math.isqrt(n - 1) + 1 if n > 1 else 1
    try:
        k = operator.index(every)
    except TypeError:
        raise TypeError(
            f"adgen.checkpoint: every= must be a positive integer, got {every!r}"
        ) from None
    if k < 1:
        raise ValueError(f"adgen.checkpoint: every= must be a positive integer, got {k}")
    return k
