"""The names generated code runs with, for the arrays it was made for.

Generated code calls ``np.<name>`` and ``rt.<name>``. For NumPy arrays, and for arrays of
libraries that receive NumPy's calls through its dispatch protocols (Dask, CuPy), those are
NumPy and adgen's runtime. For arrays of a library that follows only the array API standard
(``array_api_strict``), the code made for them (its signature names the namespace:
:func:`adgen.middle.shapes.describe`) runs with ``np`` bound to
:class:`adgen.rules.arrayapi.NumPyOf` that namespace, and ``rt`` to the runtime helpers
compiled against it (:func:`runtime_for`). For Dask arrays ``np`` is NumPy with its
generalized ufuncs of a core dimension summed over (``vecdot``, ``matvec``, ``vecmat``)
written as products and sums (:func:`numpy_for_dask`): Dask's ``apply_gufunc`` refuses a
core dimension split in chunks, and the array API's ``xp.vecdot`` that adgen reads as
``np.vecdot`` takes them.
"""

from __future__ import annotations

import importlib
import linecache
import types
from typing import Any

import numpy

from adgen.rules.arrayapi import NumPyOf

# the prefix of a signature's library that is an array-API namespace (not reached by NumPy)
ARRAY_API = "array-api:"

_RUNTIMES: dict[str, types.ModuleType] = {}


def runtime_for(np_: NumPyOf) -> types.ModuleType:
    """adgen's runtime helpers (``rt``) compiled with ``np`` bound to ``np_``: the text
    :func:`adgen.backend.export.runtime_source` writes, run once per namespace."""
    key = np_.xp.__name__
    module = _RUNTIMES.get(key)
    if module is None:
        from adgen.backend.export import runtime_source

        text = runtime_source().replace("\nimport numpy as np\n", "\n")
        module = types.ModuleType(f"adgen_runtime_for_{key.replace('.', '_')}")
        module.__dict__["np"] = np_
        filename = f"<adgen runtime for {key}>"  # tracebacks show its lines
        linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
        exec(compile(text, filename, "exec"), module.__dict__)
        _RUNTIMES[key] = module
    return module


def globals_for(signature: Any) -> dict[str, Any]:
    """The names to bind in generated code made for ``signature`` instead of the usual ones:
    none, unless an argument is an array of an array-API namespace or of Dask.

    >>> globals_for((("x", ((3,), "<f8")),))
    {}
    >>> globals_for((("x", ((4,), "<f8", "dask")),))["np"].__name__
    'adgen_numpy_for_dask'
    """
    for _, description in signature:
        if isinstance(description, tuple) and len(description) == 3:
            library = description[2]
            if library.startswith(ARRAY_API):
                np_ = NumPyOf(importlib.import_module(library[len(ARRAY_API) :]))
                return {"np": np_, "rt": runtime_for(np_)}
            if library == "dask":
                return {"np": numpy_for_dask()}
    return {}


def _vecdot(x1: Any, x2: Any, /, *, axis: int = -1, **options: Any) -> Any:
    if options:  # (out=, dtype=...: as NumPy takes them)
        return numpy.vecdot(x1, x2, axis=axis, **options)  # type: ignore[call-overload]
    a, b = numpy.moveaxis(x1, axis, -1), numpy.moveaxis(x2, axis, -1)
    return numpy.sum(numpy.conj(a) * b, axis=-1)


def _matvec(x1: Any, x2: Any, /, **options: Any) -> Any:
    if options:
        return numpy.matvec(x1, x2, **options)
    return numpy.sum(x1 * numpy.expand_dims(x2, -2), axis=-1)


def _vecmat(x1: Any, x2: Any, /, **options: Any) -> Any:
    if options:
        return numpy.vecmat(x1, x2, **options)
    return numpy.sum(numpy.expand_dims(numpy.conj(x1), -1) * x2, axis=-2)


_FOR_DASK: list[types.ModuleType] = []


def numpy_for_dask() -> types.ModuleType:
    """NumPy, but for ``vecdot``, ``matvec`` and ``vecmat``: those are computed as the
    products and sums they are, so that Dask takes a core dimension split in chunks (its
    ``apply_gufunc`` refuses one). The same values on NumPy's arrays:

    >>> np_ = numpy_for_dask()
    >>> a, b = numpy.arange(6.0).reshape(2, 3), numpy.array([1.0, -1.0, 2.0])
    >>> bool(numpy.allclose(np_.vecdot(a, b), numpy.vecdot(a, b)))
    True
    >>> bool(numpy.allclose(np_.vecdot(a, a, axis=0), numpy.vecdot(a, a, axis=0)))
    True
    >>> np_.sum is numpy.sum
    True
    """
    if not _FOR_DASK:
        module = types.ModuleType("adgen_numpy_for_dask")
        module.__dict__.update(
            {k: v for k, v in numpy.__dict__.items() if k not in ("__name__", "__spec__")}
        )
        module.__dict__["__getattr__"] = lambda name: getattr(numpy, name)  # (lazy modules)
        module.__dict__["vecdot"] = _vecdot
        if hasattr(numpy, "matvec"):
            module.__dict__["matvec"] = _matvec
            module.__dict__["vecmat"] = _vecmat
        _FOR_DASK.append(module)
    return _FOR_DASK[0]
