"""The names generated code calls modules by: ``np``, ``math``, ``rt`` (adgen's runtime
helpers), ``np.linalg``, ``np.fft``, ``np.random``, ``scipy.special`` and ``scipy.stats``
once imported, and how a function is spelled through them (:func:`spelling`). Every stage
that writes or evaluates generated code reads them here; nothing here knows the rules or the
IR.
"""

from __future__ import annotations

import math
import sys
import threading
import types
from typing import Any

import numpy as np

from adgen.rules import runtime as rt

# The names a template (and every piece of generated code) may use for modules.
TEMPLATE_GLOBALS: dict[str, Any] = {"np": np, "math": math, "rt": rt}

# Modules whose functions can be spelled directly in generated code, by the
# alias used there. More specific first. (Read it with spelling_modules().)
_SPELLINGS: list[tuple[str, Any]] = [
    ("np", np),
    ("np.linalg", np.linalg),
    ("np.fft", np.fft),
    # ("np.random", np.random) comes here once NumPy has imported it (see _add_optional)
    ("math", math),
    ("rt", rt),  # adgen's own helpers: second derivatives differentiate generated code
]
# the modules not in _SPELLINGS yet
_PENDING = {
    "numpy.random",
    "scipy.special",
    "scipy.stats",
    "scipy.linalg",
    "scipy.signal",
    "scipy.spatial.distance",
    "scipy.integrate",
    "scipy.optimize",
}
_SCIPY = (
    "scipy.special",
    "scipy.stats",
    "scipy.linalg",
    "scipy.signal",
    "scipy.spatial.distance",
    "scipy.integrate",
    "scipy.optimize",
)
_PENDING_LOCK = threading.Lock()


def add_optional(import_scipy: bool = False) -> None:
    """Add the modules ``import adgen`` does not import to the spellings once they are
    imported (a function of theirs cannot be met before): ``np.random`` (NumPy imports it
    when first named), ``scipy.special`` and ``scipy.stats``. SciPy is optional: when it is
    installed, generated code may call ``scipy.special.<name>`` and the methods of
    ``scipy.stats``'s distributions (``scipy.stats.norm.logpdf``); it is imported by their
    rules (:mod:`adgen.rules.special`, :mod:`adgen.rules.stats`), by the user, or here with
    ``import_scipy`` (a user's template naming ``scipy``)."""
    if not _PENDING:
        return
    if import_scipy and "scipy.special" not in sys.modules:
        try:
            import scipy.special  # noqa: F401
        except ImportError:  # pragma: no cover - depends on the environment
            pass
    with _PENDING_LOCK:
        if "numpy.random" in _PENDING and "numpy.random" in sys.modules:
            _PENDING.discard("numpy.random")
            _SPELLINGS.insert(2, ("np.random", sys.modules["numpy.random"]))
        for name in _SCIPY:
            if name in _PENDING and name in sys.modules:
                _PENDING.discard(name)
                TEMPLATE_GLOBALS["scipy"] = sys.modules["scipy"]
                _SPELLINGS.append((name, sys.modules[name]))


def spelling_modules() -> list[tuple[str, Any]]:
    """``(alias, module)`` for the modules generated code names functions through: ``np``,
    ``np.linalg``, ``np.fft``, ``np.random``, ``math``, ``rt``, and ``scipy.special``,
    ``scipy.stats``, ``scipy.linalg``, ``scipy.signal`` and ``scipy.spatial.distance`` when
    SciPy is installed (the last ones once imported).

    >>> [alias for alias, _ in spelling_modules()][:2]
    ['np', 'np.linalg']
    """
    add_optional()
    return _SPELLINGS


def module_alias(module: Any) -> str | None:
    """The name generated code gives ``module`` (``np`` for NumPy), or None.

    >>> module_alias(np), module_alias(math), module_alias(sys)
    ('np', 'math', None)
    """
    for alias, known in spelling_modules():
        if module is known:
            return alias
    return None


def spelling(fn: Any) -> str:
    """How generated code names ``fn``: ``np.sin``, ``np.linalg.solve``, ``math.exp``, ``abs``;
    a method of an object of those modules by the object's path (``scipy.stats.norm.logpdf``)."""
    import builtins

    name = getattr(fn, "__name__", None)
    if name is None:
        raise ValueError(f"cannot spell {fn!r}")
    for alias, module in spelling_modules():
        if getattr(module, name, None) is fn:
            return f"{alias}.{name}"
    owner = getattr(fn, "__self__", None)
    if isinstance(fn, types.MethodType) and not isinstance(owner, (type, types.ModuleType)):
        path = _object_path(owner)
        if path is not None and getattr(owner, name, None) == fn:
            return f"{path}.{name}"
    if getattr(builtins, name, None) is fn:
        return name
    raise ValueError(f"cannot spell {fn!r}: register it with an explicit spelling")


def _object_path(obj: Any) -> str | None:
    """``scipy.stats.norm`` for the object that name holds: an object one of the modules
    generated code names holds by a public name (None: none)."""
    for alias, module in spelling_modules():
        for key, value in vars(module).items():
            if value is obj and not key.startswith("_"):
                return f"{alias}.{key}"
    return None
