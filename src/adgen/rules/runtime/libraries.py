"""Where an array lives: what the helpers do differently for arrays of other libraries.

adgen's derivative code is NumPy code, and so are its helpers: ``np.exp(x)``,
``np.sum(g, axis=0)``, ``np.where(mask, g, 0)``. An array library that implements NumPy's
dispatch protocols (``__array_ufunc__`` and ``__array_function__``, NEP 13 and NEP 18) --
Dask, CuPy -- receives those calls for its own arrays, so the same code runs where the
arrays live: lazily and chunked for Dask, on the GPU for CuPy (see docs/design.md, "Arrays
beyond NumPy"). A helper keeps that working by following four rules, which this module
gives the functions for:

* never convert an argument to NumPy (``np.asarray`` of a Dask array computes it, of a
  CuPy array copies it to the host): :func:`as_array` leaves arrays of every library alone;
* never create an array from a shape alone (``np.zeros(shape)`` is a NumPy array): create
  it "like" an argument, on its side (:func:`zeros_for`: its library, device and chunks);
* never branch in Python on an array's values (``if np.any(...)`` computes a Dask array);
  :func:`eager` tells when the values are at hand (NumPy) and a shortcut may look at them;
* add into repeated positions through :func:`scatter_add`, which takes each library's
  route (``np.add.at``, ``cupyx.scatter_add``, a ``bincount`` for the others).

Every function here is cheap for NumPy arrays: one ``type`` test.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

_KINDS = (
    ("b", "bool"),
    ("i", "signed integer"),
    ("u", "unsigned integer"),
    ("f", "real floating"),
    ("c", "complex floating"),
)


def foreign(x: Any) -> bool:
    """Is ``x`` an array of another library than NumPy (it has a ``shape`` and a ``dtype``)?

    >>> foreign(np.ones(2)), foreign(np.float64(1.0)), foreign(1.0), foreign([1.0])
    (False, False, False, False)
    """
    kind = type(x)
    if kind is np.ndarray or kind is float or kind is int:
        return False
    return (
        hasattr(x, "shape")
        and hasattr(x, "dtype")
        and not isinstance(x, (np.ndarray, np.generic))
        and not isinstance(x, type)
    )


def eager(*xs: Any) -> bool:
    """Are the values of all ``xs`` at hand (none is another library's array)? Only then may
    a helper look at values in Python (``if np.any(...)``, ``int(...)``) or use NumPy's
    in-place routines.

    >>> eager(np.ones(2), 1.0, [np.ones(2)])
    True
    """
    for x in xs:  # (a loop, not any() of a generator: this runs in every helper)
        if foreign(x):
            return False
    return True


def dtype_kind(x: Any) -> str:
    """The kind letter of ``x``'s dtype (``"f"``, ``"c"``, ``"i"``, ``"u"``, ``"b"``...), for
    arrays of any library (an array-API library's dtypes are not NumPy's).

    >>> dtype_kind(np.ones(2)), dtype_kind(1), dtype_kind(np.float32(1.0))
    ('f', 'i', 'f')

    A class (``np.float32`` itself, passed as a dtype) is an object, not a number:

    >>> dtype_kind(np.float32)
    'O'
    """
    if isinstance(x, type):
        return "O"
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return np.result_type(x).kind
    try:
        return np.dtype(dtype).kind
    except (TypeError, AttributeError):  # an array-API library's own dtype objects
        namespace = x.__array_namespace__()
        for letter, name in _KINDS:
            if namespace.isdtype(dtype, name):
                return letter
        return "O"


def library(x: Any) -> str:
    """What adgen calls the library of another library's array ``x``: its top-level module
    (``"dask"``, ``"cupy"``) when NumPy's calls reach it (``__array_function__``), else
    ``"array-api:"`` and the name of its array-API namespace.
    """
    if hasattr(x, "__array_function__") or not hasattr(x, "__array_namespace__"):
        return type(x).__module__.partition(".")[0]
    return "array-api:" + x.__array_namespace__().__name__


def numpy_dtype(dtype: Any) -> Any:
    """NumPy's dtype for a dtype of any library (an array-API library's ``float64`` too).

    >>> numpy_dtype(np.float32), numpy_dtype("float64")
    (dtype('float32'), dtype('float64'))
    """
    try:
        return np.dtype(dtype)
    except TypeError:
        return np.dtype(str(dtype).rpartition(".")[2])


def as_array(x: Any, dtype: Any = None) -> NDArray[Any]:  # (or another library's array)
    """``x`` as an array (of ``dtype``, if given): ``np.asarray(x, dtype)``, except that
    another library's array stays in its library (cast with ``astype`` when needed).

    >>> as_array(2.0).shape, as_array([1.0, 2.0]).tolist(), as_array([1, 2], float).dtype
    ((), [1.0, 2.0], dtype('float64'))
    """
    if foreign(x):
        return x if dtype is None or x.dtype == dtype else cast(x, dtype)
    if dtype is not None and np.iscomplexobj(x) and not _complex_dtype(dtype):
        x = np.real(x)  # a complex cotangent of a real value: its real part (docs/rules.md)
    return np.asarray(x, dtype=dtype)


def cast(x: Any, dtype: Any, copy: bool = True) -> NDArray[Any]:  # (or another library's)
    """``x.astype(dtype, copy=copy)``, also for an array-API library's arrays (which have no
    such method: their namespace's ``astype``, with ``dtype`` made the namespace's own).

    A complex ``x`` cast to a real dtype keeps its real part (the helpers cast derivatives:
    a complex cotangent of a real value is projected onto the reals, docs/rules.md).

    >>> cast(np.ones(2), np.float32).dtype
    dtype('float32')
    >>> cast(np.array([1.0 + 2.0j]), np.float64)
    array([1.])
    """
    if dtype_kind(x) == "c" and not _complex_dtype(dtype):
        x = np.real(x)
    if type(x) is np.ndarray:
        return x.astype(dtype, copy=copy)
    if hasattr(x, "astype"):
        return x.astype(dtype) if copy or x.dtype != dtype else x
    namespace = x.__array_namespace__()
    return namespace.astype(x, getattr(namespace, _dtype_name(dtype)))


def _complex_dtype(dtype: Any) -> bool:
    """Is ``dtype`` (NumPy's, Python's ``complex``, or an array-API library's) complex?"""
    try:
        return np.dtype(dtype).kind == "c"
    except TypeError:
        return "complex" in _dtype_name(dtype)


def _dtype_name(dtype: Any) -> str:
    """``"float64"`` for NumPy's ``float64`` (the type or the dtype), an array-API library's
    ``float64``, or Python's ``float``."""
    if isinstance(dtype, type):
        return {"float": "float64", "int": "int64", "complex": "complex128"}.get(
            dtype.__name__, dtype.__name__
        )
    name = getattr(dtype, "name", None)
    return name if isinstance(name, str) else str(dtype).rpartition(".")[2]


def zeros_for(shape: tuple[int, ...], dtype: Any, *like: Any) -> Any:
    """Zeros of ``shape`` and ``dtype``, in the library of the first of ``like`` that is
    another library's array (its device, and for Dask chunks like its own where the
    shapes agree); a NumPy array when none is.

    >>> zeros_for((2,), np.float32, 1.0, np.ones(3)).dtype
    dtype('float32')
    """
    for x in like:
        if foreign(x):
            if tuple(x.shape) == tuple(shape):
                return np.zeros_like(x, dtype=dtype)
            return np.zeros_like(x, shape=shape, dtype=dtype)
    return np.zeros(shape, dtype=dtype)


def full_for(shape: tuple[int, ...], value: Any, dtype: Any, *like: Any) -> Any:
    """``np.full(shape, value, dtype)`` in the library of ``value`` or of the first of
    ``like`` that is another library's array, without computing a lazy ``value``.

    >>> full_for((2,), 3.0, np.float64).tolist()
    [3.0, 3.0]
    """
    if foreign(value):
        return cast(np.broadcast_to(value, shape), dtype)
    for x in like:
        if foreign(x):
            if tuple(x.shape) == tuple(shape):
                return np.full_like(x, value, dtype=dtype)
            return np.full_like(x, value, shape=shape, dtype=dtype)
    return np.full(shape, value, dtype=dtype)


def scatter_add(out: Any, index: Any, values: Any) -> Any:
    """``out`` with ``values`` added at ``index`` (``out[index] += values``, repeated
    positions adding up), as ``np.add.at`` does: the array to use from then on. A NumPy or
    CuPy ``out`` is written in place (``np.add.at``, ``cupyx.scatter_add``); for other
    libraries (Dask) the sum is built as a ``bincount`` of the positions, which every
    library following NumPy's API computes in parallel without item assignment.

    >>> scatter_add(np.zeros(3), np.array([0, 2, 0]), np.array([1.0, 2.0, 4.0])).tolist()
    [5.0, 0.0, 2.0]
    """
    if eager(out, values) and not any(foreign(i) for i in _parts(index)):
        np.add.at(out, index, values)
        return out
    module = type(out).__module__.partition(".")[0]
    if module == "cupy":
        import cupyx  # a GPU array: CuPy is installed

        cupyx.scatter_add(out, index, values)
        return out
    shape = tuple(out.shape)
    size = int(np.prod(shape))
    positions = np.reshape(np.arange(size, like=out), shape)[index]
    weights = values if foreign(values) else np.asarray(values, like=out)
    return out + cast(np.reshape(summed_at(positions, weights, size), shape), out.dtype)


def _parts(index: Any) -> tuple[Any, ...]:
    return index if isinstance(index, tuple) else (index,)


def summed_at(positions: Any, weights: Any, size: int) -> Any:
    """``np.bincount(positions, weights, minlength=size)`` for ``positions`` and ``weights`` of
    any shapes that broadcast together (raveled after broadcasting), in the library of
    either: broadcast together, a lazy array's chunks line up with the other's (Dask's
    ``bincount`` needs that), and a NumPy one joins its library.

    >>> summed_at(np.array([[0, 2], [0, 1]]), np.array([1.0, 2.0]), 3).tolist()
    [2.0, 2.0, 2.0]
    >>> summed_at(np.array([1, 1]), np.array([1.0j, 2.0]), 2).tolist()
    [0j, (2+1j)]
    """
    positions, weights = np.broadcast_arrays(positions, weights)
    positions, weights = np.ravel(positions), np.ravel(weights)
    if dtype_kind(weights) == "c":  # bincount weighs with real numbers
        real = np.bincount(positions, weights=np.real(weights), minlength=size)
        return real + 1j * np.bincount(positions, weights=np.imag(weights), minlength=size)
    return np.bincount(positions, weights=weights, minlength=size)
