"""Derivative rules: the only part of adgen that knows NumPy.

Each module registers rules for one family of functions. Importing this package
registers none of them: a module is imported the first time one of its functions (array
methods, attributes) is looked up, and everything that lists the rules imports them all
(:mod:`adgen.rules.loader`); ``adgen.rules.linalg`` imports that module too. See
:mod:`adgen.rules.registry` for how a rule is written, and ``docs/rules.md`` for how to
add one.
"""

from types import ModuleType as _ModuleType

from adgen.rules import loader
from adgen.rules.registry import (
    Primitive,
    attribute_rule,
    lookup,
    lookup_attribute,
    method_function,
    method_rule,
    nondifferentiable,
    registered,
    registrations,
    rule,
    unary,
    unregister,
)

__all__ = [
    "Primitive",
    "attribute_rule",
    "lookup",
    "lookup_attribute",
    "method_function",
    "method_rule",
    "nondifferentiable",
    "registered",
    "registrations",
    "rule",
    "unary",
    "unregister",
]


def __getattr__(name: str) -> _ModuleType:
    """A rule module, imported when first named (``adgen.rules.linalg``)."""
    if name in loader.MODULES:
        return loader.load(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
