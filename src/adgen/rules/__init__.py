"""Derivative rules: the only part of adgen that knows NumPy.

Each module registers rules for one family of functions; importing this
package registers them all. See :mod:`adgen.rules.registry` for how a rule is
written, and ``docs/rules.md`` for how to add one.
"""

from . import (  # noqa: F401
    adjoints,
    arithmetic,
    arrays,
    contractions,
    elementwise,
    indexing,
    linalg,
    mathmodule,
    nondiff,
    pybuiltins,
    reductions,
    shaping,
    special,
)
from .registry import (
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
