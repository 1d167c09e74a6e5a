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

from . import rules
from .api import (
    Differentiable,
    Trace,
    differentiate,
    grad,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    source,
    trace,
    value_and_grad,
    vjp,
)
from .checkpointing import checkpoint
from .display import show
from .errors import (
    AdgenError,
    DerivativeError,
    InternalError,
    NonDifferentiableError,
    NonScalarOutputError,
    NoRuleError,
    ShapeMismatchError,
    SourceUnavailableError,
    UnresolvedNameError,
    UnsupportedSyntaxError,
    WrtError,
)
from .export import export as export
from .rules.listing import supported

__version__ = "0.1.0"

__all__ = [
    "AdgenError",
    "DerivativeError",
    "Differentiable",
    "InternalError",
    "NoRuleError",
    "NonDifferentiableError",
    "NonScalarOutputError",
    "ShapeMismatchError",
    "SourceUnavailableError",
    "Trace",
    "UnresolvedNameError",
    "UnsupportedSyntaxError",
    "WrtError",
    "checkpoint",
    "differentiate",
    "export",
    "grad",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "rules",
    "show",
    "source",
    "supported",
    "trace",
    "value_and_grad",
    "vjp",
]
