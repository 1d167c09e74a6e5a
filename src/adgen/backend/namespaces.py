"""The names generated code runs with, for the arrays it was made for.

Generated code calls ``np.<name>`` and ``rt.<name>``. For NumPy arrays, and for arrays of
libraries that receive NumPy's calls through its dispatch protocols (Dask, CuPy), those are
NumPy and adgen's runtime. For arrays of a library that follows only the array API standard
(``array_api_strict``), the code made for them (its signature names the namespace:
:func:`adgen.middle.shapes.describe`) runs with ``np`` bound to
:class:`adgen.rules.arrayapi.NumPyOf` that namespace, and ``rt`` to the runtime helpers
compiled against it (:func:`runtime_for`).
"""

from __future__ import annotations

import importlib
import linecache
import types
from typing import Any

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
    none, unless an argument is an array of an array-API namespace.

    >>> globals_for((("x", ((3,), "<f8")),))
    {}
    """
    for _, description in signature:
        if isinstance(description, tuple) and len(description) == 3:
            library = description[2]
            if library.startswith(ARRAY_API):
                np_ = NumPyOf(importlib.import_module(library[len(ARRAY_API) :]))
                return {"np": np_, "rt": runtime_for(np_)}
    return {}
