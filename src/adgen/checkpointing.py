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

from typing import TypeVar

from adgen.rules.runtime import checkpoint_every

__all__ = ["checkpoint", "checkpoint_every"]

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
