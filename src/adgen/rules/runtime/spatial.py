"""Helpers of the pairwise-distance rules (:mod:`adgen.rules.spatial`)."""

from __future__ import annotations

from typing import Any

from .core import refuse_unless

_METRICS = ("sqeuclidean", "euclidean", "cityblock")


def distance_metric(metric: Any) -> str:
    """``metric`` itself if adgen differentiates distances in it (``'sqeuclidean'``,
    ``'euclidean'``, ``'cityblock'``); any other (a name, a callable) is refused by name.

    >>> distance_metric("sqeuclidean")
    'sqeuclidean'
    """
    refuse_unless(
        isinstance(metric, str) and metric in _METRICS,
        f"the derivative of a distance in the metric {metric!r} (adgen differentiates "
        "'sqeuclidean', 'euclidean' and 'cityblock' distances)",
        "write the distance with NumPy (e.g. np.abs(x[:, None] - x[None, :]).sum(-1)), or "
        "register a rule for it",
    )
    return metric
