"""``adgen.checkpoint``: mark a ``for`` loop for checkpointed reverse mode.

Reverse mode normally saves every value a loop overwrites, so memory grows with the
trip count. Writing the loop as ``for i in adgen.checkpoint(range(n)):`` keeps the
function unchanged when it runs (``checkpoint`` returns its argument), but reverse
mode then saves only a snapshot of the values the loop carries at the start of each
segment of ``every`` iterations (default: about the square root of the trip count)
and recomputes one segment at a time on the way back. Gradients are exactly the
same; peak memory is O(sqrt(n)) snapshots plus one segment's saved values.

>>> list(checkpoint(range(3)))
[0, 1, 2]
"""

from __future__ import annotations

import math
import operator
from typing import TypeVar

T = TypeVar("T")


def checkpoint(iterable: T, every: int | None = None) -> T:
    """Mark ``for i in checkpoint(range(n)):`` (or ``checkpoint(range(n), every=k)``) for
    checkpointed reverse mode; at run time it returns ``iterable`` unchanged.

    Only the iterable of a ``for`` loop differentiated by adgen is recognized; adgen
    refuses the call anywhere else. ``every`` is the number of iterations between two
    snapshots (default ``ceil(sqrt(n))`` for ``n`` iterations).
    """
    if every is not None:
        checkpoint_every(1, every)  # the same check the derivative makes
    return iterable


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
