"""adgen: source-to-source automatic differentiation for Python + NumPy.

adgen reads a function's source, lowers it to a three-address IR, and writes
forward-mode (JVP) and reverse-mode (VJP) derivative code as plain Python you
can read, compiled in memory and cached.

Pipeline, one module a stage: :mod:`adgen.frontend.parse` (source, gast, scopes) ->
:mod:`adgen.frontend.lower` (three-address IR, :mod:`adgen.ir`) -> :mod:`adgen.modes.forward` /
:mod:`adgen.modes.reverse` (derivative code from the templates in :mod:`adgen.rules`,
instantiated by :mod:`adgen.modes.expand`) -> :mod:`adgen.backend.emit` (source text) ->
:mod:`adgen.backend.compile` and :mod:`adgen.backend.cache`; :mod:`adgen.api` is what users call.
"""

from importlib import import_module as _import_module
from types import ModuleType as _ModuleType

from adgen import rules, testing
from adgen.api import (
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
from adgen.checkpointing import checkpoint
from adgen.custom import (
    CustomDerivative,
    custom_derivative,
    defrule,
    nondifferentiable,
    stop_gradient,
    unregister,
)
from adgen.errors import (
    AdgenError,
    ArgumentError,
    BackendError,
    BackendWarning,
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
from adgen.rules.listing import supported
from adgen.rules.registry import rule
from adgen.version import __version__ as __version__

# adgen.pipeline (all the stages) is imported by the first derivative, or when first named:
# ``import adgen`` does not pay for it

_LATER = frozenset({"pipeline"})


def __getattr__(name: str) -> _ModuleType:
    if name in _LATER:
        return _import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AdgenError",
    "ArgumentError",
    "BackendError",
    "BackendWarning",
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
