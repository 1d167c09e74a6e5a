"""Code written for the array API (issue 35, item 6): ``xp = array_namespace(x)`` at the top,
then only ``xp.`` calls, as array-API libraries write it.

The namespace getter -- ``x.__array_namespace__()``, array-api-compat's ``array_namespace``
and ``get_namespace``, a helper returning one of those -- is asked when transforming of
samples of the arguments' kinds (adgen makes code for those kinds): for NumPy arrays the
namespace is NumPy 2's ``numpy`` or array-api-compat's NumPy namespace (its wrappers take the
rules of the NumPy functions they are), for array-api-strict's arrays ``array_api_strict``.
Each program is differentiated in both modes and checked against the same program written
with ``np.`` (adgen's NumPy rules are themselves checked against finite differences), and
against analytic gradients where they are short.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError

compat = pytest.importorskip("array_api_compat")
strict = pytest.importorskip("array_api_strict")


def namespace(x):
    return compat.array_namespace(x)


# -- the programs: (xp-code, the same with np., arguments' shapes) -------------------------------
def softmax_xp(x):
    xp = compat.array_namespace(x)
    z = x - xp.max(x, axis=-1, keepdims=True)
    e = xp.exp(z)
    p = e / xp.sum(e, axis=-1, keepdims=True)
    return xp.sum(p * xp.linspace(0.0, 1.0, x.shape[-1]))


def softmax_np(x):
    z = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(z)
    p = e / np.sum(e, axis=-1, keepdims=True)
    return np.sum(p * np.linspace(0.0, 1.0, x.shape[-1]))


def logsumexp_xp(x):
    xp = x.__array_namespace__()
    m = xp.max(x)
    return m + xp.log(xp.sum(xp.exp(x - m)))


def logsumexp_np(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def standardise_xp(x):
    xp = compat.array_namespace(x)
    mu = xp.mean(x, axis=0, keepdims=True)
    sd = xp.std(x, axis=0, correction=1, keepdims=True)
    return xp.sum(((x - mu) / sd) ** 3)


def standardise_np(x):
    mu = np.mean(x, axis=0, keepdims=True)
    sd = np.std(x, axis=0, ddof=1, keepdims=True)
    return np.sum(((x - mu) / sd) ** 3)


def variance_xp(x):
    xp = compat.get_namespace(x)
    return xp.sum(xp.var(x, axis=-1, correction=1)) * xp.sum(xp.var(x, axis=0))


def variance_np(x):
    return np.sum(np.var(x, axis=-1, ddof=1)) * np.sum(np.var(x, axis=0))


def pairwise_xp(x):
    xp = compat.array_namespace(x)
    d = x[:, None, :] - x[None, :, :]
    sq = xp.sum(d * d, axis=-1)
    return xp.sum(xp.exp(-sq))


def pairwise_np(x):
    d = x[:, None, :] - x[None, :, :]
    return np.sum(np.exp(-np.sum(d * d, axis=-1)))


def vector_norm_xp(x):
    xp = compat.array_namespace(x)
    return xp.sum(xp.linalg.vector_norm(x, axis=-1) ** 1.5)


def vector_norm_np(x):
    return np.sum(np.linalg.norm(x, axis=-1) ** 1.5)


def matrix_norm_xp(x):
    xp = x.__array_namespace__()
    return xp.linalg.matrix_norm(x) + xp.linalg.matrix_norm(x, ord="nuc")


def matrix_norm_np(x):
    return np.linalg.norm(x, "fro") + np.linalg.norm(x, "nuc")


def matmul_xp(x):
    xp = compat.array_namespace(x)
    g = xp.matmul(x, xp.matrix_transpose(x))
    return xp.sum(xp.tanh(g @ x))


def matmul_np(x):
    g = x @ x.T
    return np.sum(np.tanh(g @ x))


def where_xp(x):
    xp = compat.array_namespace(x)
    return xp.sum(xp.where(x > 0.0, x**2, xp.sin(x)))


def where_np(x):
    return np.sum(np.where(x > 0.0, x**2, np.sin(x)))


def concat_xp(x):
    xp = compat.array_namespace(x)
    y = xp.concat([x, 2.0 * x, xp.exp(x)], axis=0)
    return xp.sum(y**2)


def concat_np(x):
    return np.sum(np.concatenate([x, 2.0 * x, np.exp(x)], axis=0) ** 2)


def stack_xp(x):
    xp = x.__array_namespace__()
    y = xp.stack([x, xp.cos(x)], axis=-1)
    return xp.sum(y[..., 0] * y[..., 1])


def stack_np(x):
    y = np.stack([x, np.cos(x)], axis=-1)
    return np.sum(y[..., 0] * y[..., 1])


def clip_xp(x):
    xp = compat.array_namespace(x)
    return xp.sum(xp.clip(x, -0.5, 0.5) ** 2)


def clip_np(x):
    return np.sum(np.clip(x, -0.5, 0.5) ** 2)


def keepdims_xp(x):
    xp = compat.array_namespace(x)
    s = xp.sum(x, axis=1, keepdims=True)
    p = xp.prod(x, axis=0, keepdims=True)
    return xp.sum(x / s + p * x)


def keepdims_np(x):
    return np.sum(x / np.sum(x, axis=1, keepdims=True) + np.prod(x, axis=0, keepdims=True) * x)


def half_xp(x):
    xp = compat.array_namespace(x)
    half = xp.asarray(0.5, dtype=x.dtype)
    return xp.sum(half * x**2)


def half_np(x):
    return np.sum(0.5 * x**2)


def maximum_xp(x):
    xp = compat.array_namespace(x)
    relu = xp.maximum(x, xp.zeros_like(x))
    return xp.sum(relu**2 + xp.minimum(x, 0.1))


def maximum_np(x):
    return np.sum(np.maximum(x, 0.0) ** 2 + np.minimum(x, 0.1))


def logistic_xp(w, X):
    xp = compat.array_namespace(w, X)
    z = X @ w
    return xp.mean(xp.logaddexp(xp.zeros_like(z), -z))


def logistic_np(w, X):
    z = X @ w
    return np.mean(np.logaddexp(0.0, -z))


def vecdot_xp(x):
    xp = compat.array_namespace(x)
    return xp.sum(xp.vecdot(x, xp.sin(x), axis=-1))


def vecdot_np(x):
    return np.sum(np.sum(x * np.sin(x), axis=-1))


def cumulative_xp(x):
    xp = compat.array_namespace(x)
    return xp.sum(xp.cumulative_sum(x, axis=1) ** 2)


def cumulative_np(x):
    return np.sum(np.cumsum(x, axis=1) ** 2)


def permute_xp(x):
    xp = compat.array_namespace(x)
    y = xp.permute_dims(x, (1, 0))
    return xp.sum(xp.reshape(y, (-1,)) * xp.arange(x.shape[0] * x.shape[1], dtype=x.dtype))


def permute_np(x):
    y = np.transpose(x, (1, 0))
    return np.sum(np.reshape(y, (-1,)) * np.arange(x.shape[0] * x.shape[1], dtype=x.dtype))


def trig_xp(x):
    xp = compat.array_namespace(x)
    return xp.sum(xp.asin(x / 2.0) + xp.atan2(x, xp.ones_like(x)) + xp.pow(xp.abs(x), 1.5))


def trig_np(x):
    return np.sum(np.arcsin(x / 2.0) + np.arctan2(x, np.ones_like(x)) + np.abs(x) ** 1.5)


def helper_xp(x):
    xp = namespace(x)  # a helper returning the namespace
    return xp.sum(xp.expm1(x) * xp.log1p(xp.square(x)))


def helper_np(x):
    return np.sum(np.expm1(x) * np.log1p(np.square(x)))


def astype_xp(x):
    xp = compat.array_namespace(x)
    y = xp.astype(x, xp.float64)
    return xp.sum(xp.sqrt(y * y + 1.0)) + xp.linalg.trace(xp.linalg.outer(x[0, :], x[0, :]))


def astype_np(x):
    return np.sum(np.sqrt(x * x + 1.0)) + np.trace(np.outer(x[0, :], x[0, :]))


def full_like_xp(x):
    xp = x.__array_namespace__()
    return xp.sum(xp.full_like(x, 3.0) * x + xp.mean(x, axis=(0, 1), keepdims=True) * x)


def full_like_np(x):
    return np.sum(3.0 * x + np.mean(x) * x)


PROGRAMS = [
    (softmax_xp, softmax_np, [(3, 4)]),
    (logsumexp_xp, logsumexp_np, [(5,)]),
    (standardise_xp, standardise_np, [(5, 3)]),
    (variance_xp, variance_np, [(4, 3)]),
    (pairwise_xp, pairwise_np, [(4, 2)]),
    (vector_norm_xp, vector_norm_np, [(3, 4)]),
    (matrix_norm_xp, matrix_norm_np, [(3, 4)]),
    (matmul_xp, matmul_np, [(3, 4)]),
    (where_xp, where_np, [(3, 4)]),
    (concat_xp, concat_np, [(2, 3)]),
    (stack_xp, stack_np, [(2, 3)]),
    (clip_xp, clip_np, [(3, 4)]),
    (keepdims_xp, keepdims_np, [(3, 4)]),
    (half_xp, half_np, [(5,)]),
    (maximum_xp, maximum_np, [(3, 4)]),
    (logistic_xp, logistic_np, [(3,), (6, 3)]),
    (vecdot_xp, vecdot_np, [(3, 4)]),
    (cumulative_xp, cumulative_np, [(3, 4)]),
    (permute_xp, permute_np, [(3, 4)]),
    (trig_xp, trig_np, [(3, 4)]),
    (helper_xp, helper_np, [(3, 4)]),
    (astype_xp, astype_np, [(3, 4)]),
    (full_like_xp, full_like_np, [(2, 3)]),
]
IDS = [f.__name__[:-3] for f, _, _ in PROGRAMS]


def arguments(shapes, seed=0):
    rng = np.random.default_rng(seed)
    args = []
    for shape in shapes:
        a = rng.uniform(-1.0, 1.0, size=shape)
        args.append(a + 0.1 * np.sign(a))  # (away from 0: clip's and where's kinks)
    return args


def check(f_xp, f_np, args, wrap):
    """Both modes of ``f_xp`` on ``wrap(args)`` against those of ``f_np`` on NumPy arrays."""
    n = len(args)
    wrt = tuple(range(n))
    want = adgen.grad(f_np, wrt=wrt)(*args)
    got = adgen.grad(f_xp, wrt=wrt)(*[wrap(a) for a in args])
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-10, atol=1e-12)
    rng = np.random.default_rng(1)
    tangents = [rng.normal(size=a.shape) for a in args]
    value, tangent = adgen.jvp(f_xp, tuple(wrap(a) for a in args), tuple(map(wrap, tangents)))
    assert np.isclose(float(value), float(f_np(*args)), rtol=1e-12)
    expected = sum(np.sum(g * t) for g, t in zip(want, tangents))
    assert np.isclose(float(tangent), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f_xp, f_np, shapes", PROGRAMS, ids=IDS)
def test_array_api_code_on_numpy_arrays(f_xp, f_np, shapes):
    check(f_xp, f_np, arguments(shapes), lambda a: a)


@pytest.mark.parametrize("f_xp, f_np, shapes", PROGRAMS, ids=IDS)
def test_array_api_code_on_array_api_strict_arrays(f_xp, f_np, shapes):
    check(f_xp, f_np, arguments(shapes), strict.asarray)


# -- what adgen refuses, by name ------------------------------------------------------------------
def argsort_xp(x):
    xp = compat.array_namespace(x)
    return xp.sum(x[xp.argsort(x)] * xp.arange(4.0))


def pinv_xp(x):
    xp = compat.array_namespace(x)
    return xp.sum(xp.linalg.pinv(x[None, :]))


def of_a_float(x):
    xp = x.__array_namespace__()
    return xp.sum(xp.sin(x))


def both_spellings(x):
    xp = compat.array_namespace(x)
    return xp.std(x, correction=1, ddof=1)


@pytest.mark.parametrize(
    "f, arg, said",
    [
        (argsort_xp, np.linspace(0.1, 1.0, 4), "argsort` of its NumPy namespace: it sorts stably"),
        (pinv_xp, np.linspace(0.1, 1.0, 4), "linalg.pinv` of its NumPy namespace"),
        (of_a_float, 0.5, "`.__array_namespace__()` of these arguments (AttributeError"),
        (both_spellings, np.linspace(0.1, 1.0, 4), "np.std given both `correction` and `ddof`"),
    ],
    ids=["argsort", "pinv", "float", "correction_and_ddof"],
)
def test_what_differs_from_numpy_is_refused_by_name(f, arg, said):
    with pytest.raises(AdgenError, match=r"test_array_api_code\.py:\d+") as info:
        adgen.grad(f)(arg)
    assert said in str(info.value)


def test_a_namespace_asked_without_the_arguments_kinds_is_refused():
    with pytest.raises(AdgenError, match="kind adgen does not know when transforming"):
        adgen.source(adgen.grad(softmax_xp))


@pytest.mark.parametrize("f_xp, f_np, shapes", PROGRAMS, ids=IDS)
def test_array_api_code_on_dask_arrays(f_xp, f_np, shapes):
    # NumPy's calls reach Dask's arrays: the namespace is NumPy's when transforming, and the
    # code adgen makes (NumPy's functions) computes on the Dask arrays, lazily. Chunked along
    # every axis: `xp.vecdot`, read as `np.vecdot`, is a sum of products there (Dask's gufuncs
    # refuse a core axis split in chunks, which the array API's vecdot takes).
    da = pytest.importorskip("dask.array")
    args = arguments(shapes)

    def wrap(a):
        return da.from_array(a, chunks=2)

    if "__array_namespace__()" in inspect.getsource(f_xp):  # (Dask's arrays have none)
        with pytest.raises(AdgenError, match="`.__array_namespace__\\(\\)` of dask arrays"):
            adgen.grad(f_xp)(*map(wrap, args))
        return
    check(f_xp, f_np, args, wrap)
    grads = adgen.grad(f_xp, wrt=tuple(range(len(args))))(*map(wrap, args))
    assert all(isinstance(g, da.Array) for g in grads)


def test_the_namespace_method_of_dask_arrays_is_refused_by_name():
    # Dask's arrays have no __array_namespace__: the program itself would raise
    da = pytest.importorskip("dask.array")
    x = da.from_array(np.linspace(0.1, 1.0, 4), chunks=2)
    with pytest.raises(AdgenError, match="`.__array_namespace__\\(\\)` of dask arrays"):
        adgen.grad(of_a_float)(x)


def test_second_order_on_numpy_arrays():
    x = arguments([(5,)])[0]
    np.testing.assert_allclose(
        adgen.hessian(standardise_xp)(x[:, None] * np.ones(2)).reshape(10, 10),
        adgen.hessian(standardise_np)(x[:, None] * np.ones(2)).reshape(10, 10),
        rtol=1e-9,
        atol=1e-10,
    )


def test_the_namespace_is_the_one_of_the_arguments_kinds():
    """One function, two libraries: each gets code made for its arrays' namespace."""
    x = arguments([(3, 4)])[0]
    on_numpy = adgen.grad(softmax_xp)(x)
    on_strict = adgen.grad(softmax_xp)(strict.asarray(x))
    assert type(on_numpy) is np.ndarray and type(on_strict) is type(strict.asarray(x))
    np.testing.assert_allclose(np.asarray(on_strict), on_numpy, rtol=1e-13)


def clip_of_integers(x, n):
    xp = compat.array_namespace(x, n)
    return xp.sum(x * xp.clip(n, 0.5, 2.5))  # (array-api-compat: [0, 1, 2, 2], NumPy's: 0.5...)


def test_array_api_compat_clip_of_integers_is_refused():
    x, n = np.linspace(0.1, 1.0, 4), np.arange(4)
    with pytest.raises(AdgenError, match="casts its bounds to x's dtype"):
        adgen.grad(clip_of_integers)(x, n)
