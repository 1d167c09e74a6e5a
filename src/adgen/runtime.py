"""adgen's runtime helpers under their public name: ``rt`` in generated code is this namespace.

The helpers live beside the rules whose templates call them, in the package
:mod:`adgen.rules.runtime` (one module per family of rules; its docstring says how they
are organised and the rules they follow). This module only re-exports that namespace, so
derivative code adgen printed runs after ``from adgen import runtime as rt``, and
``from adgen.runtime import unbroadcast`` keeps working. A module written by
:func:`adgen.export` imports ``adgen_runtime`` instead: the same helpers in one file.

>>> from adgen.rules import runtime as package
>>> rt = __import__("adgen.runtime").runtime
>>> rt.unbroadcast is package.unbroadcast and rt.__all__ == package.__all__
True
"""

from __future__ import annotations

from typing import Any

from adgen.rules import runtime as _package
from adgen.rules.runtime import __all__ as __all__


def __getattr__(name: str) -> Any:
    """Every helper of :mod:`adgen.rules.runtime` (not only those ``__all__`` lists)."""
    return getattr(_package, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *dir(_package)})
