"""Helpers of the rules for ``scipy.linalg`` (:mod:`adgen.rules.scipy_linalg`).

* ``rt.frechet(a, e, function)``: the Fréchet derivative ``L_f(a, e)`` of the matrix
  exponential or logarithm (``function`` is ``"expm"`` or ``"logm"``), the derivative of
  ``f`` at ``a`` in the direction ``e``;
* ``rt.sqrtm_frechet(s, e)``: that of the principal square root at ``a = s @ s``, the
  solution ``x`` of the Sylvester equation ``s x + x s = e``;
* ``rt.assumed_matrix(a, assume_a, lower)``: the matrix ``scipy.linalg.solve`` and
  ``scipy.linalg.inv`` read from ``a`` for a structure ``assume_a`` (the symmetric matrix of
  one triangle, or a triangle), and ``rt.assumed_matrix_vjp`` its transpose;
* ``rt.require_copied_triangle``: the check that ``scipy.linalg.cho_factor`` left the
  entries of ``a`` in the triangle of its result that holds no factor.

The first two call SciPy, imported when they are called (importing the runtime never imports
SciPy); the others use NumPy only.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .libraries import as_array, cast, dtype_kind, eager

# scipy.linalg.solve / inv: the spellings of each structure derivatives are written for
_ASSUME_GENERAL = (None, "gen", "general")
_ASSUME_SYMMETRIC = ("sym", "symmetric", "her", "hermitian", "pos", "positive definite")
_ASSUME_TRIANGULAR = ("upper triangular", "lower triangular")


def _matrix_dtype(*xs: Any) -> Any:
    """The floating dtype of a result made from ``xs`` (float64 for integers)."""
    dtype = np.result_type(*(as_array(x) for x in xs))
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _real_principal(out: Any, what: str) -> Any:
    """``out``, unless it is complex (the principal function of a real matrix with
    eigenvalues on the closed negative real axis): its derivative is not real then."""
    if dtype_kind(out) == "c":
        raise ValueError(
            f"adgen: the derivative of {what} needs a real matrix with no eigenvalue on the "
            "closed negative real axis (a real principal value)"
        )
    return out


def _power_of_two_scale(ratio: Any) -> Any:
    """The power of 2 nearest ``ratio`` (> 0), 1 where it is 0 or not finite: a scale that
    multiplies a matrix without rounding."""
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.round(np.log2(ratio))
    return np.where(np.isfinite(exponent), np.exp2(np.where(np.isfinite(exponent), exponent, 0)), 1)


def frechet(a: Any, e: Any, function: str = "expm") -> Any:
    """The Fréchet derivative of ``scipy.linalg.<function>`` (``"expm"`` or ``"logm"``) at
    ``a`` in the direction ``e`` (stacks of matrices over the last two axes): the tangent of
    ``f(a)`` for the tangent ``e`` of ``a``. Linear in ``e``; its transpose is the same
    derivative at ``aᵀ``. ``expm`` uses ``scipy.linalg.expm_frechet``; otherwise it is the
    upper right block of ``f([[a, e], [0, a]])``, with ``e`` scaled by a power of 2 to the
    size of ``a`` (the block's error is relative to the whole matrix).

    >>> a = np.array([[1.0, 2.0], [0.0, 3.0]])
    >>> e = np.array([[0.0, 1.0], [0.0, 0.0]])
    >>> import scipy.linalg
    >>> t = 1e-6
    >>> fd = (scipy.linalg.expm(a + t * e) - scipy.linalg.expm(a - t * e)) / (2 * t)
    >>> bool(np.allclose(frechet(a, e, "expm"), fd))
    True
    >>> fd = (scipy.linalg.logm(a + t * e) - scipy.linalg.logm(a - t * e)) / (2 * t)
    >>> bool(np.allclose(frechet(a, e, "logm"), fd))
    True
    """
    import scipy.linalg

    if function not in ("expm", "logm"):
        raise ValueError(f"adgen: no Fréchet derivative for scipy.linalg.{function}")
    dtype = _matrix_dtype(a, e)
    a, e = np.broadcast_arrays(as_array(a, dtype), as_array(e, dtype))
    if function == "expm":
        out = np.empty(a.shape, dtype=np.result_type(dtype, np.float64))
        for index in np.ndindex(a.shape[:-2]):
            out[index] = scipy.linalg.expm_frechet(a[index], e[index], compute_expm=False)
        return cast(out, dtype, copy=False)
    n = a.shape[-1]
    if n == 0:
        return np.zeros_like(a)
    wide = np.result_type(dtype, np.float64)  # (SciPy's logm of a float32 matrix is complex)
    a, e = as_array(a, wide), as_array(e, wide)
    size_a = np.max(np.abs(a), axis=(-2, -1), keepdims=True)
    size_e = np.max(np.abs(e), axis=(-2, -1), keepdims=True)
    scale = _power_of_two_scale(size_a / np.where(size_e > 0, size_e, 1))
    block = np.concatenate(
        (np.concatenate((a, e * scale), axis=-1), np.concatenate((np.zeros_like(a), a), axis=-1)),
        axis=-2,
    )
    with warnings.catch_warnings():  # (its check of the whole block: not of this derivative)
        warnings.filterwarnings("ignore", "logm result may be inaccurate", RuntimeWarning)
        big = scipy.linalg.logm(block)
    out = _real_principal(big, "scipy.linalg.logm")[..., :n, n:] / scale
    return cast(out, dtype, copy=False)


def sqrtm_frechet(s: Any, e: Any) -> Any:
    """The Fréchet derivative of the principal square root at ``a = s @ s`` (``s`` is
    ``scipy.linalg.sqrtm(a)``) in the direction ``e``: the solution ``x`` of the Sylvester
    equation ``s x + x s = e`` (stacks over the last two axes). Linear in ``e``; its
    transpose is ``sqrtm_frechet(sᵀ, ·)``. It is solved with one real Schur decomposition
    of ``s`` and LAPACK's ``trsyl``; the equation is singular where ``a`` is, and there the
    square root has no derivative (``ValueError``).

    >>> s = np.array([[2.0, 1.0], [0.0, 3.0]])
    >>> e = np.array([[1.0, 0.0], [2.0, 1.0]])
    >>> x = sqrtm_frechet(s, e)
    >>> bool(np.allclose(s @ x + x @ s, e))
    True
    """
    import scipy.linalg

    dtype = _matrix_dtype(s, e)
    s, e = np.broadcast_arrays(as_array(s, dtype), as_array(e, dtype))
    _real_principal(s, "scipy.linalg.sqrtm")
    out = np.empty(s.shape, dtype=dtype)
    for index in np.ndindex(s.shape[:-2]):
        r, u = scipy.linalg.schur(s[index], output="real")
        f = u.T @ e[index] @ u
        (trsyl,) = scipy.linalg.get_lapack_funcs(("trsyl",), (r, f))
        y, scale, info = trsyl(r, r, f)
        if info != 0:  # 1: s and -s have (nearly) common eigenvalues: a is singular
            raise ValueError(
                "adgen: the derivative of scipy.linalg.sqrtm needs a matrix whose square "
                f"root is nonsingular (LAPACK trsyl info={info})"
            )
        out[index] = u @ (y / scale) @ u.T
    return out


def _assumed_structure(assume_a: Any) -> str:
    """``"general"``, ``"symmetric"`` or the triangle that ``assume_a`` reads."""
    if assume_a in _ASSUME_GENERAL:
        return "general"
    if assume_a in _ASSUME_SYMMETRIC:
        return "symmetric"
    if assume_a in _ASSUME_TRIANGULAR:
        return str(assume_a)
    raise ValueError(
        f"adgen: no derivative of scipy.linalg.solve or inv with assume_a={assume_a!r} "
        "(supported: None, 'gen', 'sym', 'her', 'pos' and their long names, "
        "'upper triangular', 'lower triangular')"
    )


def assumed_matrix(a: Any, assume_a: Any = None, lower: bool = False) -> Any:
    """The matrix ``scipy.linalg.solve`` and ``scipy.linalg.inv`` work with when told
    ``assume_a``: ``a`` itself (general), the symmetric matrix of its upper triangle (its
    lower one with ``lower=True``) for ``'sym'``, ``'her'``, ``'pos'``, or one triangle for
    ``'upper triangular'`` / ``'lower triangular'``. Linear in ``a``; its transpose is
    :func:`assumed_matrix_vjp`. Other structures are refused (``ValueError``).

    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> assumed_matrix(a, "pos").tolist(), assumed_matrix(a, "sym", lower=True).tolist()
    ([[1.0, 2.0], [2.0, 4.0]], [[1.0, 3.0], [3.0, 4.0]])
    >>> assumed_matrix(a, "lower triangular").tolist()
    [[1.0, 0.0], [3.0, 4.0]]
    """
    kind = _assumed_structure(assume_a)
    if kind == "general":
        return a
    if kind == "symmetric":
        if lower:
            return np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
        return np.triu(a) + np.swapaxes(np.triu(a, 1), -1, -2)
    return np.triu(a) if kind == "upper triangular" else np.tril(a)


def assumed_matrix_vjp(g: Any, assume_a: Any = None, lower: bool = False) -> Any:
    """The transpose of :func:`assumed_matrix`: the cotangent of ``a`` for the cotangent
    ``g`` of the matrix read from it. For a symmetric structure it lives on the triangle
    read, an entry off the diagonal getting ``g[i, j] + g[j, i]``.

    >>> g = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> assumed_matrix_vjp(g, "pos").tolist(), assumed_matrix_vjp(g, "sym", True).tolist()
    ([[1.0, 5.0], [0.0, 4.0]], [[1.0, 0.0], [5.0, 4.0]])
    """
    kind = _assumed_structure(assume_a)
    if kind == "general":
        return g
    if kind == "symmetric":
        if lower:
            return np.tril(g) + np.tril(np.swapaxes(g, -1, -2), -1)
        return np.triu(g) + np.triu(np.swapaxes(g, -1, -2), 1)
    return np.triu(g) if kind == "upper triangular" else np.tril(g)


def require_copied_triangle(c: Any, a: Any, lower: bool) -> None:
    """Raise ``ValueError`` unless the triangle of ``c = scipy.linalg.cho_factor(a,
    lower)[0]`` that holds no factor (the strict upper one for ``lower=True``) holds the
    entries of ``a``, as SciPy leaves them (LAPACK's ``potrf`` does not touch them; SciPy
    calls them "random data"). The derivative of ``cho_factor`` gives them ``a``'s
    derivative: checked when that code runs. Another library's arrays are not looked at.

    >>> a = np.array([[4.0, 2.0], [2.0, 5.0]])
    >>> require_copied_triangle(np.array([[2.0, 2.0], [1.0, 2.0]]), a, True)
    >>> require_copied_triangle(np.array([[2.0, 0.0], [1.0, 2.0]]), a, True)
    Traceback (most recent call last):
    ...
    ValueError: adgen: scipy.linalg.cho_factor left other values than `a`'s in its other triangle
    """
    if not eager(c, a):
        return
    c, a = as_array(c), as_array(a)
    if lower:
        same = np.array_equal(np.triu(c, 1), np.triu(np.broadcast_to(a, c.shape), 1))
    else:
        same = np.array_equal(np.tril(c, -1), np.tril(np.broadcast_to(a, c.shape), -1))
    if not same:
        raise ValueError(
            "adgen: scipy.linalg.cho_factor left other values than `a`'s in its other triangle"
        )


# -- band storage (scipy.linalg.solve_banded): ab[u + i - j, j] = a[i, j] -------------------------


def _band_rows(l_and_u: Any, n: int) -> Any:
    """For each row ``r`` of the band storage: the columns ``j`` it holds and their rows
    ``i`` in the matrix (``i - j = r - u``)."""
    lower, upper = (int(k) for k in l_and_u)
    for r in range(lower + upper + 1):
        offset = upper - r  # j - i
        j = np.arange(max(0, offset), min(n, n + offset))
        yield r, j, j - offset


def banded_matvec(l_and_u: Any, ab: Any, x: Any) -> Any:
    """``a @ x`` for the matrix ``a`` whose bands ``ab`` holds (``scipy.linalg.solve_banded``'s
    storage, ``l_and_u = (l, u)`` its numbers of sub- and superdiagonals); ``x`` a vector or
    a matrix of columns.

    >>> ab = np.array([[0.0, 2.0, 3.0], [1.0, 1.0, 1.0], [4.0, 5.0, 0.0]])  # a tridiagonal
    >>> banded_matvec((1, 1), ab, np.array([1.0, 1.0, 1.0])).tolist()
    [3.0, 8.0, 6.0]
    """
    ab, x = np.asarray(ab), np.asarray(x)
    n = ab.shape[-1]
    out = np.zeros((n, *x.shape[1:]), dtype=np.result_type(ab, x))
    for r, j, i in _band_rows(l_and_u, n):
        out[i] += ab[r, j].reshape((-1,) + (1,) * (x.ndim - 1)) * x[j]
    return out


def banded_outer(l_and_u: Any, y: Any, x: Any, like: Any) -> Any:
    """The band of ``y xᵀ`` (summed over the columns of matrices ``y``, ``x``) in the storage
    of ``like``: the cotangent of a banded matrix in a product ``a @ x`` with the product's
    cotangent ``y``.

    >>> banded_outer((1, 0), np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.zeros((2, 2))).tolist()
    [[3.0, 8.0], [6.0, 0.0]]
    """
    y, x = np.asarray(y), np.asarray(x)
    like = np.asarray(like)
    out = np.zeros(like.shape, dtype=np.result_type(like, y, x))
    for r, j, i in _band_rows(l_and_u, like.shape[-1]):
        products = y[i] * x[j]
        columns = int(np.prod(products.shape[1:]))  # (1 for vectors)
        out[r, j] = products.reshape(products.shape[0], columns).sum(axis=1)
    return out


def banded_transpose(l_and_u: Any, ab: Any) -> Any:
    """The band storage of ``aᵀ`` (``(u, l)`` bands) for the bands ``ab`` of ``a``.

    >>> ab = np.array([[0.0, 2.0, 3.0], [1.0, 1.0, 1.0], [4.0, 5.0, 0.0]])
    >>> banded_transpose((1, 1), ab).tolist()
    [[0.0, 4.0, 5.0], [1.0, 1.0, 1.0], [2.0, 3.0, 0.0]]
    """
    ab = np.asarray(ab)
    lower, upper = (int(k) for k in l_and_u)
    out = np.zeros_like(ab)
    n = ab.shape[-1]
    for r, j, i in _band_rows((upper, lower), n):  # a row of aᵀ's storage: aᵀ[i, j] = a[j, i]
        out[r, j] = ab[upper + j - i, i]
    return out
