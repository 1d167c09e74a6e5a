"""Importing adgen's rule modules when first needed, from an index of what each registers.

``import adgen`` imports none of the modules of this package that register rules
(:data:`MODULES`): a module is imported the first time one of its registrations is asked
for. :mod:`adgen.rules.index`, generated from the registry (``python -m adgen.rules.make_index``
rewrites it; ``tests/test_lazy_rules.py`` fails while it is stale), says which module
registers

* each function, by the path generated code spells it with (``np.sin``,
  ``np.linalg.solve``, ``scipy.special.expit``, ``rt.unbroadcast``, ``abs``), or
  ``operator.<name>`` for an operator and ``registry.<name>`` for the registry's own
  primitives (``registry.assign``);
* each array method (``x.sum()``) and each array attribute (``x.T``).

The registry asks :func:`require` (and :func:`require_method`, :func:`require_attribute`)
when a lookup misses and before a user's registration replaces a rule of adgen's, so that
the user's rule is the one kept; everything that enumerates the rules (``registered()``,
``adgen.supported()``) imports them all first (:func:`load_all`). SciPy is imported only
with the modules of its rules (``special``, ``stats``, ``scipy_linalg``...): their paths are
resolved once ``scipy.special`` (``scipy.stats``, ``scipy.linalg``...) is imported. A method
of an object (``scipy.stats.norm.logpdf``) is known by the object and the method's name
(:func:`identity`). A NumPy or SciPy function the index does not know makes a lookup import
every module: rule modules register some functions only where NumPy has them
(``if hasattr(np, "vecdot")``), and the index was made with one version of NumPy.

Which module registers what is decided by who makes the registration: a registration
made by one of :data:`MODULES` (its rule function defined there, or the call made in its
body) is adgen's own (:func:`rule_module`); :func:`rank` orders them as if the modules had
been imported one after the other, in this order, before any other registration.
"""

from __future__ import annotations

import importlib
import sys
import warnings
import weakref
from collections.abc import Hashable
from types import BuiltinMethodType, MethodType, ModuleType
from typing import Any

from adgen.rules import index
from adgen.rules.namespace import spelling, spelling_modules

# The modules that register rules, in the order their rules are listed (``registered()``).
MODULES: tuple[str, ...] = (
    "adjoints",
    "arithmetic",
    "arrays",
    "contractions",
    "elementwise",
    "fft",
    "indexing",
    "interpolate",
    "kernels",
    "linalg",
    "losses",
    "mathmodule",
    "nondiff",
    "optimize",
    "pybuiltins",
    "quadrature",
    "reductions",
    "scipy_linalg",
    "shaping",
    "signal",
    "solvers",
    "spatial",
    "special",
    "stats",
)
_RANKS = {name: i for i, name in enumerate(MODULES)}

# the functions of the index found in this process: identity -> (object, its rule module)
_BY_ID: dict[Hashable, tuple[Any, str]] = {}
# the paths not looked up yet, by the alias of their module (``scipy.special`` before SciPy
# is imported); None until the first lookup
_WAITING: dict[str, list[tuple[str, str]]] | None = None
_DONE: set[str] = set()  # the modules imported through load()
_ALL = False  # every module imported


def rank(module: str | None) -> int:
    """Where the registrations of ``module`` come among all (None: after adgen's own)."""
    return len(MODULES) if module is None else _RANKS[module]


def rule_module(name: str) -> str | None:
    """``linalg`` for the module named ``adgen.rules.linalg``; None for any other module.

    >>> rule_module("adgen.rules.linalg"), rule_module("adgen.custom"), rule_module("mine")
    ('linalg', None, None)
    """
    package, _, short = name.rpartition(".")
    return short if package == __package__ and short in _RANKS else None


def loaded(module: str) -> bool:
    """Has this rule module been imported (or is it being imported)?"""
    return f"{__package__}.{module}" in sys.modules


def load(module: str) -> ModuleType:
    """Import a rule module (its registrations are made once, by its first import; another
    thread asking meanwhile waits for them)."""
    imported = importlib.import_module(f"{__package__}.{module}")
    _DONE.add(module)
    return imported


def load_all() -> None:
    """Import every rule module: for what lists the rules."""
    global _ALL
    if not _ALL:
        for module in MODULES:
            load(module)
        _ALL = True


def identity(fn: Any) -> Hashable:
    """The key the index and the registry know ``fn`` by: its ``id``; for a method of an
    object that is neither a module nor a class (``scipy.stats.norm.logpdf``: Python makes a
    new bound method at every access), the object's ``id`` and the method's name.

    >>> class Law:
    ...     def logpdf(self, x):
    ...         return -x
    >>> law = Law()
    >>> law.logpdf is law.logpdf, identity(law.logpdf) == identity(law.logpdf)
    (False, True)
    """
    owner = getattr(fn, "__self__", None)
    if _bound(fn) and not isinstance(owner, (type, ModuleType)):
        return (id(owner), fn.__name__)
    return id(fn)


def _bound(fn: Any) -> bool:
    """A method bound to its object, written in Python or built in (``np.add.reduce``)."""
    return (
        isinstance(fn, (MethodType, BuiltinMethodType))
        and getattr(fn, "__self__", None) is not None
    )


def same(a: Any, b: Any) -> bool:
    """Are ``a`` and ``b`` one function: the same object, or the same method of one object?"""
    if a is b:
        return True
    if isinstance(a, BuiltinMethodType) and isinstance(b, BuiltinMethodType):
        return a.__self__ is b.__self__ and a.__name__ == b.__name__
    return (
        isinstance(a, MethodType)
        and isinstance(b, MethodType)
        and a.__self__ is b.__self__
        and a.__func__ is b.__func__
    )


def module_of(fn: Any) -> str | None:
    """The rule module the index says registers ``fn`` (None: none, or not one it knows)."""
    if _WAITING is None:
        _start()
    if _WAITING:
        _resolve()
    hit = _BY_ID.get(identity(fn))
    return hit[1] if hit is not None and same(hit[0], fn) else None


def methods_of(obj: Any) -> list[str]:
    """The names of the methods of ``obj`` the index knows a rule module for
    (``scipy.stats.norm``: ``logpdf``, ``pdf``...)."""
    if _WAITING is None:
        _start()
    if _WAITING:
        _resolve()
    return [
        key[1]
        for key, (fn, _) in list(_BY_ID.items())
        if isinstance(key, tuple) and getattr(fn, "__self__", None) is obj
    ]


def require(fn: Any) -> bool:
    """Import the rule module registering ``fn`` if it is not imported yet; True if one was.

    A NumPy or SciPy function the index does not know has every module imported.
    """
    module = module_of(fn)
    if module is not None:
        return _require_named(module)
    if _ALL or not _library_function(fn):
        return False
    load_all()
    return True


def require_method(name: str) -> bool:
    """Import the rule module registering the array method ``name``; True if one was."""
    return _require_named(index.METHODS.get(name))


def require_attribute(name: str) -> bool:
    """Import the rule module registering the array attribute ``name``; True if one was."""
    return _require_named(index.ATTRIBUTES.get(name))


def _require_named(module: str | None) -> bool:
    if module is None or module in _DONE:
        return False
    load(module)
    return True


# function -> (how many modules were imported when asked, the answer): a user's function is
# asked about at every call of a derivative of it
_LIBRARY: weakref.WeakKeyDictionary[Any, tuple[int, bool]] = weakref.WeakKeyDictionary()


def _library_function(fn: Any) -> bool:
    """Is ``fn`` a function of NumPy or SciPy (spelled ``np.`` or ``scipy.`` in generated code)?"""
    try:
        known = _LIBRARY.get(fn)
    except TypeError:  # (no weak reference to it: asked each time)
        known = None
    if known is not None and known[0] == len(sys.modules):
        return known[1]
    try:
        answer = spelling(fn).startswith(("np.", "scipy."))
    except Exception:  # (not one: no name, or one no module spells)
        answer = False
    try:
        _LIBRARY[fn] = (len(sys.modules), answer)
    except TypeError:
        pass
    return answer


def _start() -> None:
    global _WAITING
    waiting: dict[str, list[tuple[str, str]]] = {}
    for path, module in index.FUNCTIONS.items():
        alias, _, name = path.rpartition(".")
        waiting.setdefault(alias, []).append((name, module))
    _WAITING = waiting


# how many modules Python had imported at the last _resolve(): the paths still waiting can
# resolve only once another module is imported (every differentiated call asks)
_SCANNED = -1


def _resolve() -> None:
    """Find the objects of the paths whose module is imported by now."""
    global _SCANNED
    assert _WAITING is not None
    if len(sys.modules) == _SCANNED:
        return
    _SCANNED = len(sys.modules)
    for alias in list(_WAITING):
        home = path_module(alias)
        if home is None:
            continue
        with warnings.catch_warnings():  # (a deprecated alias warns when read)
            warnings.simplefilter("ignore")
            for name, module in _WAITING.pop(alias, ()):
                obj = getattr(home, name, None)
                if obj is not None:  # (None: not in this version of the library)
                    _BY_ID[identity(obj)] = (obj, module)


def path_module(alias: str) -> Any:
    """The module a path of the index starts with (``np.linalg``, ``operator``, none for the
    builtins); None for ``scipy.special`` until SciPy is imported."""
    import builtins
    import operator

    if alias == "":
        return builtins
    if alias == "operator":
        return operator
    if alias == "registry":  # (the registry's own primitives: it imports this module)
        return sys.modules[f"{__package__}.registry"]
    modules = dict(spelling_modules())
    if alias in modules:
        return modules[alias]
    # an object of such a module, whose methods have rules (``scipy.stats.norm``)
    home, _, name = alias.rpartition(".")
    return getattr(modules[home], name, None) if home in modules else None
