"""Helpers of the rules for ``scipy.stats`` (:mod:`adgen.rules.stats`).

``rt.covariance`` makes the covariance matrix ``scipy.stats.multivariate_normal`` makes of
its ``cov`` argument, and ``rt.covariance_vjp`` is its transpose. Neither imports SciPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .libraries import as_array, eager, foreign, full_for


def covariance(cov: Any, dim: int) -> Any:
    """The ``(dim, dim)`` covariance matrix SciPy's ``multivariate_normal`` reads ``cov`` as:
    a number times the identity, a vector as the diagonal, a square matrix as the symmetric
    matrix of its lower triangle (SciPy reads no other entry). Linear in ``cov``.

    >>> covariance(2.0, 2).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    >>> covariance(np.array([1.0, 3.0]), 2).tolist()
    [[1.0, 0.0], [0.0, 3.0]]
    >>> covariance(np.array([[1.0, 9.0], [2.0, 3.0]]), 2).tolist()
    [[1.0, 2.0], [2.0, 3.0]]
    """
    cov = as_array(cov)
    if cov.ndim == 0:
        dtype = np.result_type(cov, 1.0)
        if foreign(cov):  # the identity made on cov's side (its library, its device)
            return np.diag(full_for((dim,), cov, dtype))
        return cov * np.eye(dim, dtype=dtype)
    if cov.ndim == 1:
        return np.diag(cov)
    return np.tril(cov) + np.swapaxes(np.tril(cov, -1), -1, -2)


def covariance_vjp(g: Any, ndim: int) -> Any:
    """The transpose of :func:`covariance` for a ``cov`` of ``ndim`` dimensions: the trace of
    the ``(dim, dim)`` cotangent ``g``, its diagonal, or its lower triangle with the upper
    one's entries added (what a cotangent of ``cov`` is, as SciPy reads only that triangle).

    >>> g = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> float(covariance_vjp(g, 0)), covariance_vjp(g, 1).tolist(), covariance_vjp(g, 2).tolist()
    (5.0, [1.0, 4.0], [[1.0, 0.0], [5.0, 4.0]])
    """
    if ndim == 0:
        return np.trace(g)
    if ndim == 1:
        return np.diagonal(g).copy()
    return np.tril(g) + np.tril(np.swapaxes(g, -1, -2), -1)


def whitened(x: Any, mean: Any, cov: Any, dim: int, allow_singular: bool = False) -> Any:
    """The points of ``scipy.stats.multivariate_normal`` (``x``'s last axis, ``dim`` long,
    less ``mean``; ``mean=None``: none) times the inverse of its covariance matrix
    :func:`covariance`: ``z = r S^-1``, one row per point; with ``allow_singular=True``
    SciPy's pseudo-inverse (its cutoff: ``1e6`` machine epsilons of the largest eigenvalue,
    ``1e3`` for float32; the lower triangle). Linear in ``x`` and ``mean``.

    >>> whitened(np.array([1.0, 2.0]), None, np.array([2.0, 4.0]), 2).tolist()
    [[0.5, 0.5]]
    >>> whitened(np.array([1.0, 2.0]), None, np.array([2.0, 0.0]), 2, True).tolist()
    [[0.5, 0.0]]
    """
    r = np.reshape(x, (-1, dim))
    if mean is not None:
        r = r - mean
    s = covariance(cov, dim)
    if allow_singular:
        dtype = np.result_type(s, np.float32)
        factor = 1e3 if dtype == np.float32 else 1e6
        return r @ np.linalg.pinv(s, rcond=factor * np.finfo(dtype).eps, hermitian=True)
    return np.swapaxes(np.linalg.solve(s, np.swapaxes(r, 0, 1)), 0, 1)


def nonsingular_covariance(s: Any, seed: Any) -> Any:
    """``s`` (``multivariate_normal``'s covariance matrix, given ``allow_singular=True``)
    where it is nonsingular. Where SciPy decides it is singular (an eigenvalue at most ``1e6``
    machine epsilons of the largest) the derivative w.r.t. ``cov`` does not hold (the
    pseudo-determinant and pseudo-inverse jump where the rank changes): a matrix of nan
    where the tangent or cotangent ``seed`` is not all 0, so the derivative is nan as where
    SciPy's value is nan; the identity for a zero seed, whose contribution is then exactly 0
    (the derivative code may compute one that nothing reads).

    >>> nonsingular_covariance(np.eye(2) * 2.0, 1.0).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    >>> singular = np.diag([1.0, 0.0])
    >>> nonsingular_covariance(singular, np.ones(2)).tolist()
    [[nan, nan], [nan, nan]]
    >>> nonsingular_covariance(singular, np.zeros(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if not eager(s, seed):
        return s
    s = as_array(s)
    spectrum = np.abs(np.linalg.eigvalsh(s))
    cutoff = 1e6 * np.finfo(spectrum.dtype).eps * np.max(spectrum, initial=0.0)
    if np.all(spectrum > cutoff):
        return s
    if np.any(as_array(seed)):
        return np.full_like(s, np.nan)
    return np.broadcast_to(np.eye(s.shape[-1], dtype=s.dtype), s.shape).copy()


# -- scipy.stats.gaussian_kde: its log-density and density w.r.t. the points -----------------
#
# A kernel density estimate made outside the function is a constant of the derivative; its
# log-density at a point x is log sum_i w_i N(x; x_i, S) (SciPy's kernel covariance S), whose
# gradient is -S^-1 (x - mu(x)), mu(x) the data's mean under the weights r_i(x) of the
# kernels at x, and whose Hessian is -S^-1 + S^-1 C(x) S^-1, C(x) their covariance under
# those weights. The points are laid out as SciPy reads them: ``x`` of ``(d, m)`` (``d`` the
# data's dimension), or one vector (``m`` one-dimensional points, or one point of ``d``).


def kde_logpdf(kde: Any, x: Any) -> Any:
    """``kde.logpdf(x)``: the log-density of the estimate at the points ``x``, SciPy's own."""
    return kde.logpdf(x)


def kde_pdf(kde: Any, x: Any) -> Any:
    """``kde.evaluate(x)`` (``kde.pdf(x)``, ``kde(x)``): the density, SciPy's own."""
    return kde.evaluate(x)


def _kde_weights(kde: Any, x: Any) -> tuple[Any, Any, Any]:
    """The points as ``(d, m)``, the kernels' weights at each (``(n, m)``, columns summing
    to 1) and the data's mean under them (``(d, m)``)."""
    data = np.asarray(kde.dataset, dtype=float)
    points = np.reshape(np.asarray(x, dtype=float), (data.shape[0], -1))
    diff = points[:, None, :] - data[:, :, None]  # (d, n, m)
    maha = np.einsum("inm,ij,jnm->nm", diff, kde.inv_cov, diff)
    logs = np.log(kde.weights)[:, None] - 0.5 * maha
    r = np.exp(logs - np.max(logs, axis=0))
    r /= np.sum(r, axis=0)
    return points, r, data @ r


def kde_logpdf_gradient(kde: Any, x: Any) -> Any:
    """The gradient of ``kde.logpdf`` at each point, laid out ``(d, m)``:
    ``-S^-1 (x_j - mu_j)``.

    >>> import scipy.stats
    >>> kde = scipy.stats.gaussian_kde(np.array([-1.0, 0.0, 2.0]))
    >>> x, h = np.array([0.3, 1.2]), 1e-6
    >>> fd = (kde.logpdf(x + h) - kde.logpdf(x - h)) / (2 * h)
    >>> bool(np.allclose(kde_logpdf_gradient(kde, x)[0], fd, rtol=1e-7))
    True
    """
    points, _, mean = _kde_weights(kde, x)
    return -(kde.inv_cov @ (points - mean))


def kde_logpdf_hvp(kde: Any, x: Any, v: Any) -> Any:
    """The Hessian of ``kde.logpdf`` at each point times ``v`` (``x``'s shape), laid out
    ``(d, m)``: ``(-S^-1 + S^-1 C_j S^-1) v_j``.

    >>> import scipy.stats
    >>> kde = scipy.stats.gaussian_kde(np.array([-1.0, 0.0, 2.0]))
    >>> x, h = np.array([0.3, 1.2]), 1e-6
    >>> fd = (kde_logpdf_gradient(kde, x + h) - kde_logpdf_gradient(kde, x - h)) / (2 * h)
    >>> bool(np.allclose(kde_logpdf_hvp(kde, x, np.ones(2)), fd, rtol=1e-6))
    True
    """
    _, r, mean = _kde_weights(kde, x)
    data = np.asarray(kde.dataset, dtype=float)
    u = kde.inv_cov @ np.reshape(v, mean.shape)  # (d, m)
    centred = data[:, :, None] - mean[:, None, :]  # (d, n, m)
    t = np.einsum("dnm,dm->nm", centred, u) * r
    return -u + kde.inv_cov @ np.einsum("dnm,nm->dm", centred, t)
