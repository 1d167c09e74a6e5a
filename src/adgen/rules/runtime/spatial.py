"""Helpers of the pairwise-distance rules (:mod:`adgen.rules.spatial`)."""

from __future__ import annotations

import math
import numbers
from typing import Any

from .core import refuse_unless

_METRICS = (
    "sqeuclidean",
    "euclidean",
    "cityblock",
    "minkowski",
    "seuclidean",
    "mahalanobis",
    "chebyshev",
    "cosine",
    "correlation",
    "canberra",
)


def distance_metric(metric: Any, p: Any = 2.0, V: Any = None, VI: Any = None, w: Any = None) -> str:
    """``metric`` itself if adgen differentiates distances in it with these options; any
    other metric (a name, a callable) is refused by name, and so are weights ``w=``, a
    Minkowski ``p`` below 1 or infinite, and a ``'seuclidean'`` without ``V=`` or a
    ``'mahalanobis'`` without ``VI=`` (SciPy then estimates them from the points).

    >>> distance_metric("sqeuclidean"), distance_metric("minkowski", 3.0)
    ('sqeuclidean', 'minkowski')
    """
    refuse_unless(
        isinstance(metric, str) and metric in _METRICS,
        f"the derivative of a distance in the metric {metric!r} (adgen differentiates "
        f"{', '.join(repr(m) for m in _METRICS)} distances)",
        "write the distance with NumPy (e.g. np.abs(x[:, None] - x[None, :]).sum(-1)), or "
        "register a rule for it",
    )
    refuse_unless(
        w is None,
        f"the derivative of a weighted distance (w=) in the metric {metric!r}",
        "write the weighted distance with NumPy, or register a rule for it",
    )
    if metric == "minkowski":
        finite = isinstance(p, numbers.Real) and math.isfinite(float(p)) and float(p) >= 1
        refuse_unless(
            finite,
            f"the derivative of a 'minkowski' distance with p={p!r} (adgen differentiates "
            "finite p >= 1)",
            "use metric='chebyshev' for p=inf",
        )
    refuse_unless(
        not (metric == "seuclidean" and V is None),
        "the derivative of a 'seuclidean' distance without V= (SciPy estimates the "
        "variances from the points)",
        "pass V= (e.g. V=np.var(X, axis=0, ddof=1))",
    )
    refuse_unless(
        not (metric == "mahalanobis" and VI is None),
        "the derivative of a 'mahalanobis' distance without VI= (SciPy estimates the "
        "inverse covariance from the points)",
        "pass VI= (e.g. VI=np.linalg.inv(np.cov(X.T)))",
    )
    return metric
