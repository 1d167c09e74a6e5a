"""SciPy's pairwise distances (``scipy.spatial.distance``), registered only when SciPy is
installed.

``pdist(X, metric)`` (the condensed distances of the rows of ``X``, pairs ``i < j`` in row
order), ``cdist(XA, XB, metric)`` (every row of ``XA`` against every row of ``XB``) and
``squareform`` (condensed vector <-> symmetric matrix with a zero diagonal), for the metrics
``'sqeuclidean'``, ``'euclidean'`` and ``'cityblock'``; any other metric is refused by name
when the code runs (:func:`adgen.runtime.distance_metric`). With ``s_ij = |x_i - y_j|^2``:

    ds_ij = 2 (x_i . dx_i + y_j . dy_j - x_i . dy_j - dx_i . y_j)
    x_bar = 2 (rowsum(G) x - G y)        y_bar = 2 (colsum(G) y - G^T x)

(``G`` the cotangent as a matrix: ``squareform(g)`` for ``pdist``, where ``y`` is ``x``, so
the two terms add up). A Euclidean distance ``d = sqrt(s)`` has ``dd = ds / (2 d)``: where
two rows coincide it has no derivative (nan, as ``np.sqrt``'s at 0; a zero tangent or
cotangent there contributes 0, :func:`adgen.runtime.zero_safe`). A city-block distance
``c_ij = sum_k |x_ik - y_jk|`` has ``dc_ij = sum_k sign(x_ik - y_jk) (dx_ik - dy_jk)`` (0
where the coordinates are equal, as ``np.abs``'s derivative at 0). ``squareform`` is
linear: a matrix's cotangent sits on its upper triangle, the one SciPy reads. Every
derivative is written with these functions and NumPy's, so it can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import rule
from adgen.rules.samples import example

try:
    import scipy.spatial.distance
except ImportError:  # pragma: no cover - SciPy is optional
    scipy = None  # type: ignore[assignment]


if scipy is not None:
    distance = scipy.spatial.distance

    @rule(
        distance.pdist,
        examples=[
            example("scipy.spatial.distance.pdist(x, 'sqeuclidean') * np.arange(6.0)", x=(4, 2)),
            example("scipy.spatial.distance.pdist(x) * np.arange(3.0)", x=(3, 2)),
            example("scipy.spatial.distance.pdist(x, metric='euclidean')", x=(4, 3)),
            example("scipy.spatial.distance.pdist(x, 'cityblock') * np.arange(6.0)", x=(4, 3)),
        ],
    )
    def pdist(ans, X, metric="euclidean"):
        """Condensed distances of the rows of ``X``."""

        def jvp(dX):
            if rt.distance_metric(metric) == "cityblock":
                steps = np.sign(X[:, None, :] - X[None, :, :])
                dd = np.sum(steps * (dX[:, None, :] - dX[None, :, :]), axis=2)
                return scipy.spatial.distance.squareform(dd, checks=False)
            a = np.sum(X * dX, axis=1)
            b = X @ np.swapaxes(dX, 0, 1)
            ds = scipy.spatial.distance.squareform(
                2.0 * (a[:, None] + a[None, :] - b - np.swapaxes(b, 0, 1)), checks=False
            )
            if rt.distance_metric(metric) == "sqeuclidean":
                return ds
            return rt.zero_safe(ds / (2.0 * ans), ds)

        def vjp(g):
            if rt.distance_metric(metric) == "cityblock":
                m = scipy.spatial.distance.squareform(g)
                return np.sum(m[:, :, None] * np.sign(X[:, None, :] - X[None, :, :]), axis=1)
            if rt.distance_metric(metric) == "sqeuclidean":
                m = scipy.spatial.distance.squareform(g)
            else:
                m = scipy.spatial.distance.squareform(rt.zero_safe(g / (2.0 * ans), g))
            return 2.0 * (np.sum(m, axis=1)[:, None] * X - m @ X)

    @rule(
        distance.cdist,
        examples=[
            example("scipy.spatial.distance.cdist(a, b, 'sqeuclidean')", a=(3, 2), b=(4, 2)),
            example("scipy.spatial.distance.cdist(a, b) * np.arange(2.0)", a=(3, 2), b=(2, 2)),
            example("scipy.spatial.distance.cdist(a, b, 'cityblock')", a=(3, 2), b=(4, 2)),
        ],
    )
    def cdist(ans, XA, XB, metric="euclidean"):
        """Distances of every row of ``XA`` to every row of ``XB``."""

        def jvp_XA(dA):
            if rt.distance_metric(metric) == "cityblock":
                return np.sum(np.sign(XA[:, None, :] - XB[None, :, :]) * dA[:, None, :], axis=2)
            ds = 2.0 * (np.sum(XA * dA, axis=1)[:, None] - dA @ np.swapaxes(XB, 0, 1))
            if rt.distance_metric(metric) == "sqeuclidean":
                return ds
            return rt.zero_safe(ds / (2.0 * ans), ds)

        def jvp_XB(dB):
            if rt.distance_metric(metric) == "cityblock":
                return -np.sum(np.sign(XA[:, None, :] - XB[None, :, :]) * dB[None, :, :], axis=2)
            ds = 2.0 * (np.sum(XB * dB, axis=1)[None, :] - XA @ np.swapaxes(dB, 0, 1))
            if rt.distance_metric(metric) == "sqeuclidean":
                return ds
            return rt.zero_safe(ds / (2.0 * ans), ds)

        def vjp_XA(g):
            if rt.distance_metric(metric) == "cityblock":
                return np.sum(g[:, :, None] * np.sign(XA[:, None, :] - XB[None, :, :]), axis=1)
            if rt.distance_metric(metric) == "sqeuclidean":
                m = g
            else:
                m = rt.zero_safe(g / (2.0 * ans), g)
            return 2.0 * (np.sum(m, axis=1)[:, None] * XA - m @ XB)

        def vjp_XB(g):
            if rt.distance_metric(metric) == "cityblock":
                return -np.sum(g[:, :, None] * np.sign(XA[:, None, :] - XB[None, :, :]), axis=0)
            if rt.distance_metric(metric) == "sqeuclidean":
                m = g
            else:
                m = rt.zero_safe(g / (2.0 * ans), g)
            return 2.0 * (np.sum(m, axis=0)[:, None] * XB - np.swapaxes(m, 0, 1) @ XA)

    @rule(
        distance.squareform,
        examples=[
            example("scipy.spatial.distance.squareform(v) * np.arange(16.0).reshape(4, 4)", v=(6,)),
            example(
                "scipy.spatial.distance.squareform(m + m.T - 2 * np.diag(np.diag(m)))",
                m=(3, 3),
            ),
        ],
    )
    def squareform(X, force="no", checks=True):
        """Linear: a vector's entries go to both triangles, a matrix's upper triangle (the
        one SciPy reads) to the vector."""

        def jvp(dX):
            return scipy.spatial.distance.squareform(dX, force=force, checks=False)

        def vjp(g):
            if np.ndim(X) == 1:
                return scipy.spatial.distance.squareform(g + np.swapaxes(g, 0, 1), checks=False)
            return np.triu(scipy.spatial.distance.squareform(g, checks=False), 1)
