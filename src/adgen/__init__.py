"""adgen: source-to-source automatic differentiation for Python + NumPy.

adgen reads a function's source, lowers it to a three-address IR, and writes
forward-mode (JVP) and reverse-mode (VJP) derivative code as plain Python you
can read, compiled in memory and cached.

Pipeline, one module a stage: :mod:`adgen.parse` (source, gast, scopes) ->
:mod:`adgen.lower` (three-address IR, :mod:`adgen.ir`) -> :mod:`adgen.forward` /
:mod:`adgen.reverse` (derivative code from the templates in :mod:`adgen.rules`,
instantiated by :mod:`adgen.expand`) -> :mod:`adgen.emit` (source text) ->
:mod:`adgen.compile` and :mod:`adgen.cache`; :mod:`adgen.api` is what users call.
"""

from importlib import import_module as _import_module
from types import ModuleType as _ModuleType

from . import rules, testing
from .api import (
    Differentiable,
    Trace,
    differentiate,
    export,
    grad,
    hessian,
    hvp,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    laplacian,
    show,
    source,
    trace,
    value_and_grad,
    vjp,
)
from .checkpointing import checkpoint
from .custom import (
    CustomDerivative,
    custom_derivative,
    defrule,
    nondifferentiable,
    stop_gradient,
    unregister,
)
from .errors import (
    AdgenError,
    ArgumentError,
    DerivativeError,
    InternalError,
    LimitError,
    NonDifferentiableError,
    NonScalarOutputError,
    NoRuleError,
    RuleError,
    ShapeMismatchError,
    SourceUnavailableError,
    UnresolvedNameError,
    UnsupportedSyntaxError,
    WrtError,
)
from .rules.listing import supported
from .rules.registry import rule
from .version import __version__ as __version__

# The pipeline's modules that only differentiating needs: imported by the first derivative
# (``import adgen`` does not pay for them), or when first named (``adgen.diskcache.stats``).
_LATER = frozenset({"diskcache", "lower", "nested", "optimize", "reverse", "transform"})


def __getattr__(name: str) -> _ModuleType:
    if name in _LATER:
        return _import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AdgenError",
    "ArgumentError",
    "CustomDerivative",
    "DerivativeError",
    "Differentiable",
    "InternalError",
    "LimitError",
    "NoRuleError",
    "RuleError",
    "NonDifferentiableError",
    "NonScalarOutputError",
    "ShapeMismatchError",
    "SourceUnavailableError",
    "Trace",
    "UnresolvedNameError",
    "UnsupportedSyntaxError",
    "WrtError",
    "checkpoint",
    "custom_derivative",
    "defrule",
    "differentiate",
    "export",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "laplacian",
    "nondifferentiable",
    "rule",
    "rules",
    "show",
    "source",
    "stop_gradient",
    "supported",
    "testing",
    "trace",
    "unregister",
    "value_and_grad",
    "vjp",
]
