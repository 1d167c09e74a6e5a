"""SciPy's pairwise distances (``scipy.spatial.distance``), registered only when SciPy is
installed.

``pdist(X, metric)`` (the condensed distances of the rows of ``X``, pairs ``i < j`` in row
order), ``cdist(XA, XB, metric)`` (every row of ``XA`` against every row of ``XB``) and
``squareform`` (condensed vector <-> symmetric matrix with a zero diagonal), for the metrics
``'sqeuclidean'``, ``'euclidean'``, ``'cityblock'`` and those listed below; any other metric
is refused by name when the code runs (:func:`adgen.runtime.distance_metric`).
With ``s_ij = |x_i - y_j|^2``:

    ds_ij = 2 (x_i . dx_i + y_j . dy_j - x_i . dy_j - dx_i . y_j)
    x_bar = 2 (rowsum(G) x - G y)        y_bar = 2 (colsum(G) y - G^T x)

(``G`` the cotangent as a matrix: ``squareform(g)`` for ``pdist``, where ``y`` is ``x``, so
the two terms add up). A Euclidean distance ``d = sqrt(s)`` has ``dd = ds / (2 d)``: where
two rows coincide (``d = 0``, a kink) its derivative is taken as 0 in both modes, as
``np.linalg.norm``'s is at a zero norm (0 is a subgradient there). A city-block distance
``c_ij = sum_k |x_ik - y_jk|`` has ``dc_ij = sum_k sign(x_ik - y_jk) (dx_ik - dy_jk)`` (0
where the coordinates are equal, as ``np.abs``'s derivative at 0). ``squareform`` is
linear: a matrix's cotangent sits on its upper triangle, the one SciPy reads.

Also (``pdist`` and ``cdist``, w.r.t. the points), with ``u = x_i - y_j``:

* ``'minkowski'`` (``p=``, finite, ``>= 1``): ``dd = sum_k |u_k|^(p-1) sign(u_k) du_k /
  d^(p-1)``; ``'seuclidean'`` (``V=``): ``dd = sum_k u_k du_k / (V_k d)``;
  ``'mahalanobis'`` (``VI=``): ``dd = u^T (VI + VI^T) du / (2 d)``. Where two points
  coincide (``d = 0``) the derivative is 0, as for ``'euclidean'`` (the numerators hold
  ``u = 0``; the denominators are made 1 there). ``V`` and ``VI`` are data: differentiating them
  is refused by name, and so is a ``'seuclidean'`` without ``V=`` or a ``'mahalanobis'``
  without ``VI=`` (SciPy estimates them from the points).
* ``'chebyshev'``: ``d = max_k |u_k|``; the derivative is ``sign(u_k) du_k`` at the
  maximising coordinate, split evenly between ties, as ``np.max``'s (``rt.minmax_vjp``).
* ``'cosine'``: ``d = 1 - c``, ``c = x.y / (|x| |y|)``: ``dd = -(y / (|x| |y|) - c x /
  |x|^2) . dx`` (and symmetrically for ``y``); ``'correlation'`` is the cosine distance of
  the centred rows, its derivative the centred one. A zero (or constant, for
  ``'correlation'``) row has none (nan).
* ``'canberra'``: ``d = sum_k |u_k| / (|x_k| + |y_k|)``: ``dd/dx_k = sign(u_k) / s_k -
  |u_k| sign(x_k) / s_k^2`` with ``s_k = |x_k| + |y_k|``; a coordinate with ``s_k = 0``
  (SciPy's term 0) contributes 0.

Weights (``w=``) and any other metric are refused by name. Every derivative is written with
these functions and NumPy's (and ``rt.minmax_vjp``, which has rules), so
it can be differentiated again.
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
            example(
                "scipy.spatial.distance.pdist(x, 'minkowski', p=3.0) * np.arange(6.0)", x=(4, 3)
            ),
            example("scipy.spatial.distance.pdist(x, 'cosine') * np.arange(6.0)", x=(4, 3)),
            example("scipy.spatial.distance.pdist(x, 'correlation') * np.arange(6.0)", x=(4, 3)),
            example(
                "scipy.spatial.distance.pdist(x, 'seuclidean', V=np.array([0.5, 1.0, 2.0]))",
                x=(4, 3),
            ),
            example(
                "scipy.spatial.distance.pdist(x, 'mahalanobis', VI=np.eye(3) + 0.25 * np.tri(3))",
                x=(4, 3),
            ),
            example("scipy.spatial.distance.pdist(x, 'chebyshev') * np.arange(6.0)", x=(4, 3)),
            example("scipy.spatial.distance.pdist(x, 'canberra') * np.arange(6.0)", x=(4, 3)),
        ],
    )
    def pdist(ans, X, metric="euclidean", p=2.0, V=None, VI=None, w=None):
        """Condensed distances of the rows of ``X``."""

        def jvp(dX):
            if rt.distance_metric(metric, p, V, VI, w) in (
                "minkowski",
                "seuclidean",
                "mahalanobis",
                "chebyshev",
            ):
                U = X[:, None, :] - X[None, :, :]
                full = scipy.spatial.distance.squareform(ans)
                # the diagonal's distance 0 divides nothing (its partials P are 0)
                if metric == "minkowski":
                    P = np.abs(U) ** (p - 1.0) * np.sign(U)
                    Q = (full + np.eye(np.shape(X)[0])) ** (p - 1.0)
                elif metric == "seuclidean":
                    P = U / V
                    Q = full + np.eye(np.shape(X)[0])
                elif metric == "mahalanobis":
                    P = U @ (0.5 * (VI + np.swapaxes(VI, 0, 1)))
                    Q = full + np.eye(np.shape(X)[0])
                else:
                    P = rt.minmax_vjp(np.ones_like(full), full, np.abs(U), axis=2) * np.sign(U)
                    Q = np.ones_like(full)
                n = np.sum(P * (dX[:, None, :] - dX[None, :, :]), axis=2)
                return scipy.spatial.distance.squareform(
                    n / np.where(Q == 0.0, 1.0, Q), checks=False
                )
            if metric in ("cosine", "correlation"):
                if metric == "correlation":
                    A = X - np.mean(X, axis=1, keepdims=True)
                else:
                    A = X
                na = np.sqrt(np.sum(A * A, axis=1))
                c = 1.0 - scipy.spatial.distance.squareform(ans)
                if metric == "correlation":
                    t = dX - np.mean(dX, axis=1, keepdims=True)
                else:
                    t = dX
                half = (c * (np.sum(A * t, axis=1) / (na * na))[:, None]) - (
                    t @ np.swapaxes(A, 0, 1)
                ) / (na[:, None] * na[None, :])
                return scipy.spatial.distance.squareform(
                    half + np.swapaxes(half, 0, 1), checks=False
                )
            if metric == "canberra":
                U = X[:, None, :] - X[None, :, :]
                s = np.abs(X)[:, None, :] + np.abs(X)[None, :, :]
                s = np.where(s > 0.0, s, 1.0)
                P = np.sign(U) / s - np.abs(U) * np.sign(X[:, None, :]) / (s * s)
                half = np.sum(P * dX[:, None, :], axis=2)
                return scipy.spatial.distance.squareform(
                    half + np.swapaxes(half, 0, 1), checks=False
                )
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
            return ds / (2.0 * np.where(ans == 0.0, 1.0, ans))

        def vjp(g):
            if rt.distance_metric(metric, p, V, VI, w) in (
                "minkowski",
                "seuclidean",
                "mahalanobis",
                "chebyshev",
            ):
                U = X[:, None, :] - X[None, :, :]
                full = scipy.spatial.distance.squareform(ans)
                # the diagonal's distance 0 divides nothing (its partials P are 0)
                if metric == "minkowski":
                    P = np.abs(U) ** (p - 1.0) * np.sign(U)
                    Q = (full + np.eye(np.shape(X)[0])) ** (p - 1.0)
                elif metric == "seuclidean":
                    P = U / V
                    Q = full + np.eye(np.shape(X)[0])
                elif metric == "mahalanobis":
                    P = U @ (0.5 * (VI + np.swapaxes(VI, 0, 1)))
                    Q = full + np.eye(np.shape(X)[0])
                else:
                    P = rt.minmax_vjp(np.ones_like(full), full, np.abs(U), axis=2) * np.sign(U)
                    Q = np.ones_like(full)
                G = scipy.spatial.distance.squareform(g)
                m = G / np.where(Q == 0.0, 1.0, Q)
                return np.sum(m[:, :, None] * P, axis=1)
            if metric in ("cosine", "correlation"):
                if metric == "correlation":
                    A = X - np.mean(X, axis=1, keepdims=True)
                else:
                    A = X
                na = np.sqrt(np.sum(A * A, axis=1))
                c = 1.0 - scipy.spatial.distance.squareform(ans)
                G = scipy.spatial.distance.squareform(g)
                h = G / (na[:, None] * na[None, :])
                r = (np.sum(G * c, axis=1) / (na * na))[:, None] * A - h @ A
                if metric == "correlation":
                    return r - np.mean(r, axis=1, keepdims=True)
                return r
            if metric == "canberra":
                U = X[:, None, :] - X[None, :, :]
                s = np.abs(X)[:, None, :] + np.abs(X)[None, :, :]
                s = np.where(s > 0.0, s, 1.0)
                P = np.sign(U) / s - np.abs(U) * np.sign(X[:, None, :]) / (s * s)
                G = scipy.spatial.distance.squareform(g)
                return np.sum(G[:, :, None] * P, axis=1)
            if rt.distance_metric(metric) == "cityblock":
                m = scipy.spatial.distance.squareform(g)

                return np.sum(m[:, :, None] * np.sign(X[:, None, :] - X[None, :, :]), axis=1)
            if rt.distance_metric(metric) == "sqeuclidean":
                m = scipy.spatial.distance.squareform(g)
            else:
                m = scipy.spatial.distance.squareform(g / (2.0 * np.where(ans == 0.0, 1.0, ans)))
            return 2.0 * (np.sum(m, axis=1)[:, None] * X - m @ X)

    @rule(
        distance.cdist,
        examples=[
            example("scipy.spatial.distance.cdist(a, b, 'sqeuclidean')", a=(3, 2), b=(4, 2)),
            example("scipy.spatial.distance.cdist(a, b) * np.arange(2.0)", a=(3, 2), b=(2, 2)),
            example("scipy.spatial.distance.cdist(a, b, 'cityblock')", a=(3, 2), b=(4, 2)),
            example("scipy.spatial.distance.cdist(a, b, 'minkowski', p=3.0)", a=(3, 2), b=(4, 2)),
            example(
                "scipy.spatial.distance.cdist(a, b, metric='minkowski', p=1.5)",
                a=(3, 3),
                b=(2, 3),
            ),
            example("scipy.spatial.distance.cdist(a, b, 'cosine')", a=(3, 3), b=(4, 3)),
            example("scipy.spatial.distance.cdist(a, b, 'correlation')", a=(3, 3), b=(4, 3)),
            example(
                "scipy.spatial.distance.cdist(a, b, 'seuclidean', V=np.array([0.5, 1.0, 2.0]))",
                a=(3, 3),
                b=(4, 3),
            ),
            example(
                "scipy.spatial.distance.cdist(a, b, 'mahalanobis', VI=np.eye(3) + np.tri(3) / 4)",
                a=(3, 3),
                b=(2, 3),
            ),
            example("scipy.spatial.distance.cdist(a, b, 'chebyshev')", a=(3, 3), b=(4, 3)),
            example("scipy.spatial.distance.cdist(a, b, 'canberra')", a=(3, 3), b=(4, 3)),
        ],
    )
    def cdist(ans, XA, XB, metric="euclidean", p=2.0, V=None, VI=None, w=None):
        """Distances of every row of ``XA`` to every row of ``XB``."""

        def jvp_XA(dA):
            if rt.distance_metric(metric, p, V, VI, w) in (
                "minkowski",
                "seuclidean",
                "mahalanobis",
                "chebyshev",
            ):
                U = XA[:, None, :] - XB[None, :, :]
                if metric == "minkowski":
                    P = np.abs(U) ** (p - 1.0) * np.sign(U)
                    Q = ans ** (p - 1.0)
                elif metric == "seuclidean":
                    P = U / V
                    Q = ans
                elif metric == "mahalanobis":
                    P = U @ (0.5 * (VI + np.swapaxes(VI, 0, 1)))
                    Q = ans
                else:
                    P = rt.minmax_vjp(np.ones_like(ans), ans, np.abs(U), axis=2) * np.sign(U)
                    Q = np.ones_like(ans)
                n = np.sum(P * dA[:, None, :], axis=2)
                return n / np.where(Q == 0.0, 1.0, Q)
            if metric in ("cosine", "correlation"):
                if metric == "correlation":
                    A = XA - np.mean(XA, axis=1, keepdims=True)
                    B = XB - np.mean(XB, axis=1, keepdims=True)
                else:
                    A = XA
                    B = XB
                na = np.sqrt(np.sum(A * A, axis=1))
                nb = np.sqrt(np.sum(B * B, axis=1))
                c = 1.0 - ans
                if metric == "correlation":
                    t = dA - np.mean(dA, axis=1, keepdims=True)
                else:
                    t = dA
                return -(
                    (t @ np.swapaxes(B, 0, 1)) / (na[:, None] * nb[None, :])
                    - c * (np.sum(A * t, axis=1) / (na * na))[:, None]
                )
            if metric == "canberra":
                U = XA[:, None, :] - XB[None, :, :]
                s = np.abs(XA)[:, None, :] + np.abs(XB)[None, :, :]
                s = np.where(s > 0.0, s, 1.0)
                P = np.sign(U) / s - np.abs(U) * np.sign(XA[:, None, :]) / (s * s)
                return np.sum(P * dA[:, None, :], axis=2)
            if rt.distance_metric(metric) == "cityblock":
                return np.sum(np.sign(XA[:, None, :] - XB[None, :, :]) * dA[:, None, :], axis=2)
            ds = 2.0 * (np.sum(XA * dA, axis=1)[:, None] - dA @ np.swapaxes(XB, 0, 1))
            if rt.distance_metric(metric) == "sqeuclidean":
                return ds
            return ds / (2.0 * np.where(ans == 0.0, 1.0, ans))

        def jvp_XB(dB):
            if rt.distance_metric(metric, p, V, VI, w) in (
                "minkowski",
                "seuclidean",
                "mahalanobis",
                "chebyshev",
            ):
                U = XA[:, None, :] - XB[None, :, :]
                if metric == "minkowski":
                    P = np.abs(U) ** (p - 1.0) * np.sign(U)
                    Q = ans ** (p - 1.0)
                elif metric == "seuclidean":
                    P = U / V
                    Q = ans
                elif metric == "mahalanobis":
                    P = U @ (0.5 * (VI + np.swapaxes(VI, 0, 1)))
                    Q = ans
                else:
                    P = rt.minmax_vjp(np.ones_like(ans), ans, np.abs(U), axis=2) * np.sign(U)
                    Q = np.ones_like(ans)
                n = -np.sum(P * dB[None, :, :], axis=2)
                return n / np.where(Q == 0.0, 1.0, Q)
            if metric in ("cosine", "correlation"):
                if metric == "correlation":
                    A = XA - np.mean(XA, axis=1, keepdims=True)
                    B = XB - np.mean(XB, axis=1, keepdims=True)
                else:
                    A = XA
                    B = XB
                na = np.sqrt(np.sum(A * A, axis=1))
                nb = np.sqrt(np.sum(B * B, axis=1))
                c = 1.0 - ans
                if metric == "correlation":
                    t = dB - np.mean(dB, axis=1, keepdims=True)
                else:
                    t = dB
                return -(
                    (A @ np.swapaxes(t, 0, 1)) / (na[:, None] * nb[None, :])
                    - c * (np.sum(B * t, axis=1) / (nb * nb))[None, :]
                )
            if metric == "canberra":
                U = XA[:, None, :] - XB[None, :, :]
                s = np.abs(XA)[:, None, :] + np.abs(XB)[None, :, :]
                s = np.where(s > 0.0, s, 1.0)
                P = -np.sign(U) / s - np.abs(U) * np.sign(XB[None, :, :]) / (s * s)
                return np.sum(P * dB[None, :, :], axis=2)
            if rt.distance_metric(metric) == "cityblock":
                return -np.sum(np.sign(XA[:, None, :] - XB[None, :, :]) * dB[None, :, :], axis=2)
            ds = 2.0 * (np.sum(XB * dB, axis=1)[None, :] - XA @ np.swapaxes(dB, 0, 1))
            if rt.distance_metric(metric) == "sqeuclidean":
                return ds
            return ds / (2.0 * np.where(ans == 0.0, 1.0, ans))

        def vjp_XA(g):
            if rt.distance_metric(metric, p, V, VI, w) in (
                "minkowski",
                "seuclidean",
                "mahalanobis",
                "chebyshev",
            ):
                U = XA[:, None, :] - XB[None, :, :]
                if metric == "minkowski":
                    P = np.abs(U) ** (p - 1.0) * np.sign(U)
                    Q = ans ** (p - 1.0)
                elif metric == "seuclidean":
                    P = U / V
                    Q = ans
                elif metric == "mahalanobis":
                    P = U @ (0.5 * (VI + np.swapaxes(VI, 0, 1)))
                    Q = ans
                else:
                    P = rt.minmax_vjp(np.ones_like(ans), ans, np.abs(U), axis=2) * np.sign(U)
                    Q = np.ones_like(ans)
                m = g / np.where(Q == 0.0, 1.0, Q)
                return np.sum(m[:, :, None] * P, axis=1)
            if metric in ("cosine", "correlation"):
                if metric == "correlation":
                    A = XA - np.mean(XA, axis=1, keepdims=True)
                    B = XB - np.mean(XB, axis=1, keepdims=True)
                else:
                    A = XA
                    B = XB
                na = np.sqrt(np.sum(A * A, axis=1))
                nb = np.sqrt(np.sum(B * B, axis=1))
                c = 1.0 - ans
                h = g / (na[:, None] * nb[None, :])
                r = (np.sum(g * c, axis=1) / (na * na))[:, None] * A - h @ B
                if metric == "correlation":
                    return r - np.mean(r, axis=1, keepdims=True)
                return r
            if metric == "canberra":
                U = XA[:, None, :] - XB[None, :, :]
                s = np.abs(XA)[:, None, :] + np.abs(XB)[None, :, :]
                s = np.where(s > 0.0, s, 1.0)
                P = np.sign(U) / s - np.abs(U) * np.sign(XA[:, None, :]) / (s * s)
                return np.sum(g[:, :, None] * P, axis=1)
            if rt.distance_metric(metric) == "cityblock":
                return np.sum(g[:, :, None] * np.sign(XA[:, None, :] - XB[None, :, :]), axis=1)
            if rt.distance_metric(metric) == "sqeuclidean":
                m = g
            else:
                m = g / (2.0 * np.where(ans == 0.0, 1.0, ans))
            return 2.0 * (np.sum(m, axis=1)[:, None] * XA - m @ XB)

        def vjp_XB(g):
            if rt.distance_metric(metric, p, V, VI, w) in (
                "minkowski",
                "seuclidean",
                "mahalanobis",
                "chebyshev",
            ):
                U = XA[:, None, :] - XB[None, :, :]
                if metric == "minkowski":
                    P = np.abs(U) ** (p - 1.0) * np.sign(U)
                    Q = ans ** (p - 1.0)
                elif metric == "seuclidean":
                    P = U / V
                    Q = ans
                elif metric == "mahalanobis":
                    P = U @ (0.5 * (VI + np.swapaxes(VI, 0, 1)))
                    Q = ans
                else:
                    P = rt.minmax_vjp(np.ones_like(ans), ans, np.abs(U), axis=2) * np.sign(U)
                    Q = np.ones_like(ans)
                m = g / np.where(Q == 0.0, 1.0, Q)
                return -np.sum(m[:, :, None] * P, axis=0)
            if metric in ("cosine", "correlation"):
                if metric == "correlation":
                    A = XA - np.mean(XA, axis=1, keepdims=True)
                    B = XB - np.mean(XB, axis=1, keepdims=True)
                else:
                    A = XA
                    B = XB
                na = np.sqrt(np.sum(A * A, axis=1))
                nb = np.sqrt(np.sum(B * B, axis=1))
                c = 1.0 - ans
                h = g / (na[:, None] * nb[None, :])
                r = (np.sum(g * c, axis=0) / (nb * nb))[:, None] * B - np.swapaxes(h, 0, 1) @ A
                if metric == "correlation":
                    return r - np.mean(r, axis=1, keepdims=True)
                return r
            if metric == "canberra":
                U = XA[:, None, :] - XB[None, :, :]
                s = np.abs(XA)[:, None, :] + np.abs(XB)[None, :, :]
                s = np.where(s > 0.0, s, 1.0)
                P = -np.sign(U) / s - np.abs(U) * np.sign(XB[None, :, :]) / (s * s)
                return np.sum(g[:, :, None] * P, axis=0)
            if rt.distance_metric(metric) == "cityblock":
                return -np.sum(g[:, :, None] * np.sign(XA[:, None, :] - XB[None, :, :]), axis=0)
            if rt.distance_metric(metric) == "sqeuclidean":
                m = g
            else:
                m = g / (2.0 * np.where(ans == 0.0, 1.0, ans))
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
