"""Lower a parsed function (gast) to the three-address IR.

Each expression becomes a sequence of single-primitive statements whose
temporaries are named after the variable being assigned (see
:mod:`adgen.names`); a variable assigned twice gets a new name the second
time, so every IR name is bound once in straight-line code. Every name the
function reads from outside is resolved to a Python object here, so each call
knows exactly which function it calls -- ``onp.sin``, ``from numpy import sin``
and ``np.sin`` all become the same primitive.

>>> import numpy as np
>>> from adgen.frontend.parse import parse_function
>>> def f(x1, x2):
...     return np.log(x1) + x1 * x2 - np.sin(x2)
>>> print(lower(parse_function(f)))  # doctest: +NORMALIZE_WHITESPACE
def f(x1, x2):              # <doctest adgen.frontend.lower[2]>:1
    out_1 = np.log(x1)      # line 2
    out_2 = x1 * x2         # line 2
    out_3 = out_1 + out_2   # line 2
    out_4 = np.sin(x2)      # line 2
    out = out_3 - out_4     # line 2
    return out              # line 2

The work is one class, :class:`Lowerer`, written in parts by what they lower: each part is a
mixin class in a file of its own, a subclass of
:class:`~adgen.frontend.lower.state.LowererState`, and
every method takes the whole ``Lowerer`` as ``self``, since the parts call each other (mypy's
"misc" complaint about such a ``self`` type is turned off in those files):

- :mod:`~adgen.frontend.lower.state`: what a Lowerer holds (the IR block being built, what each
  of the
  user's names means) and what every part uses: ``emit`` a primitive's statement, ``new_name``
  and ``bind`` for a user's name, ``copy``, ``refuse`` what adgen does not support;
- :mod:`~adgen.frontend.lower.statements`: the function body and each kind of statement
  (assignments,
  ``return`` and the single exit, ``if``, ``del``, ``assert``, expression statements);
- :mod:`~adgen.frontend.lower.loops`: ``for`` and ``while`` loops (over ranges, arrays,
  ``enumerate``,
  ``zip``; unrolled over tuples; ``adgen.checkpoint`` marks);
- :mod:`~adgen.frontend.lower.expressions`: expressions, names and what they resolve to, attributes,
  indexing, constants;
- :mod:`~adgen.frontend.lower.builtins`: ``max``/``min``/``tuple``/``isinstance``/``any``/
  ``all``/``sorted`` and the generator expressions given to calls;
- :mod:`~adgen.frontend.lower.calls`: calls of primitives and methods; the user's functions inlined
  (recursive ones kept as calls), local functions and lambdas;
- :mod:`~adgen.frontend.lower.as_written`: calls adgen runs as written (no rule, not inlined)
  and the methods of objects that are not data;
- :mod:`~adgen.frontend.lower.imports`: ``import`` statements inside the function;
- :mod:`~adgen.frontend.lower.callables`: functions as values (a callback passed to your
  function, ``map``, a tuple of functions or objects), the arguments of calls (``*args``,
  ``**kwargs``);
- :mod:`~adgen.frontend.lower.objects`: methods of your classes' objects, instances made inside;
- :mod:`~adgen.frontend.lower.nonlocals`: assignments to a nested function's ``nonlocal`` names;
- :mod:`~adgen.frontend.lower.nested_derivatives`: ``adgen.grad``/``jvp``/``vjp`` called inside;
- :mod:`~adgen.frontend.lower.solvers`: SciPy's solvers and the functions they are given;
- :mod:`~adgen.frontend.lower.containers`: lists the function builds (appends, pops, concatenation,
  comprehensions);
- :mod:`~adgen.frontend.lower.dicts`: dicts the function builds key by key (``d[k] = v``,
  ``d.update(...)``);
- :mod:`~adgen.frontend.lower.tuples`: tuples bound to names that blocks rebind, one IR name
  an item;
- :mod:`~adgen.frontend.lower.verbatim`: code no derivative passes through, copied as written
  (``raise``, f-strings and other string formatting);
- :mod:`~adgen.frontend.lower.deferred`: refusals and checks decided when the code runs (a
  branch holding what adgen refuses, adgen's checks read again);
- :mod:`~adgen.frontend.lower.inplace`: in-place writes (``y[i] = v``, ``y += v``) and the checks
  that
  no other name sees the array written;
- three helpers of no class: :mod:`~adgen.frontend.lower.jumps` rewrites ``break``/``continue``
  as flags before lowering, :mod:`~adgen.frontend.lower.tuple_lists` rewrites a list of tuples
  built by appends as one list per position, :mod:`~adgen.frontend.lower.syntax` answers what
  the parts ask of the syntax tree (which names are lists, written in place, assigned inside
  blocks).

How a statement flows through: the constructor (state.py) rewrites ``break``/``continue`` as
flags and gives each variable assigned inside blocks one IR name; :meth:`Lowerer.lower`
(statements.py) checks that every path returns and moves the code after an early return into
the other branch, then lowers the body statement by statement. :meth:`~Lowerer.statement`
dispatches on the statement's kind to a method of its own (``lower_assign``, ``lower_if``,
``lower_for``, ...), which lowers its expressions with :meth:`~Lowerer.expr` to atoms -- one IR
statement per primitive, through :meth:`~Lowerer.emit` -- and binds the user's names to them.
A new kind of statement is a branch of ``statement`` and a method in statements.py (loops.py
for a loop); a new kind of expression a branch of ``expr``.
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from typing import Any

from adgen import ir, trees
from adgen.errors import AdgenError
from adgen.frontend.lower.as_written import AsWrittenMixin
from adgen.frontend.lower.buffers import BuffersMixin
from adgen.frontend.lower.builtins import BuiltinsMixin
from adgen.frontend.lower.callables import CallablesMixin
from adgen.frontend.lower.calls import CallsMixin
from adgen.frontend.lower.containers import ContainersMixin
from adgen.frontend.lower.decided import DecidedMixin
from adgen.frontend.lower.deferred import DeferredMixin
from adgen.frontend.lower.dicts import DictsMixin
from adgen.frontend.lower.expressions import ExpressionsMixin
from adgen.frontend.lower.fresh import FreshMixin
from adgen.frontend.lower.generators import GeneratorsMixin
from adgen.frontend.lower.identities import IdentitiesMixin
from adgen.frontend.lower.imports import ImportsMixin
from adgen.frontend.lower.inplace import InPlaceMixin
from adgen.frontend.lower.interpolants import InterpolantsMixin
from adgen.frontend.lower.library_wrappers import LibraryWrappersMixin
from adgen.frontend.lower.loops import LoopsMixin
from adgen.frontend.lower.namespaces import NamespacesMixin
from adgen.frontend.lower.nested_derivatives import NestedDerivativesMixin
from adgen.frontend.lower.nonlocals import NonlocalsMixin
from adgen.frontend.lower.objects import ObjectsMixin
from adgen.frontend.lower.outside import OutsideMixin
from adgen.frontend.lower.settled import SettledMixin
from adgen.frontend.lower.solvers import SolversMixin
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.statements import StatementsMixin
from adgen.frontend.lower.static_results import StaticResultsMixin
from adgen.frontend.lower.tuples import TuplesMixin
from adgen.frontend.lower.value_methods import ValueMethodsMixin
from adgen.frontend.lower.verbatim import VerbatimMixin
from adgen.frontend.lower.writers import WritersMixin
from adgen.frontend.parse import ParsedFunction


class Lowerer(
    StatementsMixin,
    LoopsMixin,
    ExpressionsMixin,
    SettledMixin,
    BuiltinsMixin,
    ValueMethodsMixin,
    NamespacesMixin,
    CallsMixin,
    AsWrittenMixin,
    CallablesMixin,
    ObjectsMixin,
    OutsideMixin,
    NestedDerivativesMixin,
    ContainersMixin,
    DictsMixin,
    InPlaceMixin,
    WritersMixin,
    IdentitiesMixin,
    FreshMixin,
    BuffersMixin,
    StaticResultsMixin,
    NonlocalsMixin,
    DecidedMixin,
    ImportsMixin,
    SolversMixin,
    InterpolantsMixin,
    TuplesMixin,
    VerbatimMixin,
    DeferredMixin,
    GeneratorsMixin,
    LibraryWrappersMixin,
    LowererState,
):
    """Lowers one function to IR; a call of the user's function is lowered by a Lowerer of
    its own (``parent``: the caller's), which shares the IR block and the names taken."""


# the most classes whose instances lower() tries making as written
_AS_WRITTEN_MOST = 4


def _installed(cls: type) -> bool:
    """Is ``cls`` a class of an installed library (a package under site-packages), whose
    objects' insides are not the program's?"""
    top = sys.modules.get((cls.__module__ or "").partition(".")[0])
    path = getattr(top, "__file__", None) or ""
    return "site-packages" in path or "dist-packages" in path


def lower(
    parsed: ParsedFunction,
    structure: dict[str, trees.Desc] | None = None,
    differentiated: Collection[str] | None = None,
    signature: Collection[tuple[str, Any]] = (),
) -> ir.Function:
    """Lower a parsed function to IR (raising adgen errors that point at the source).

    ``structure`` gives the shape of tree arguments (dicts, lists, tuples of arrays): their
    leaves become parameters of their own. ``differentiated`` names the parameters (leaves)
    the derivative is taken with respect to, where known: each is a value of its own, no
    other object (``x is y`` is ``False``: see :mod:`~adgen.frontend.lower.identities`).
    ``signature`` pairs parameters (leaves) with the kinds of the arguments the code is made
    for (:func:`adgen.middle.shapes.describe`): tests of their types (``isinstance``,
    ``hasattr``, ``scipy.sparse.issparse``) are then decided when transforming.
    """
    # instances made inside that the code used as values it cannot follow (a `LabelEncoder`
    # whose `fit` passes `self` to a library's function) are made and used as written on a
    # second reading, refused with that error where a derivative reaches them: where the
    # first reading failed, or deferred the refusal to a branch taken when the code runs
    # (for an installed library's classes only); if the second fails, the first stands
    as_written: dict[type, AdgenError] = {}
    lowered: ir.Function | None = None
    first: AdgenError | None = None
    while True:
        lowerer: Lowerer | None = None
        try:
            lowerer = Lowerer(parsed, structure=structure)
            if differentiated is not None:
                lowerer.differentiated = frozenset(differentiated)
            lowerer.kinds = dict(signature)
            lowerer.as_written_classes = dict(as_written)
            function = lowerer.lower()
        except AdgenError as e:
            first = first or e
            if lowered is not None:
                return lowered  # (the first reading, with its deferred refusals)
            refused = dict(lowerer.root.instances_refused) if lowerer is not None else {}
            if not refused.keys() - as_written.keys() or len(as_written) >= _AS_WRITTEN_MOST:
                first.in_function(parsed.name)
                raise first from None
            as_written.update(refused)
            continue
        deferred = {
            c: x
            for c, x in lowerer.root.instances_refused.items()
            if c not in as_written and _installed(c)
        }
        if not deferred or len(as_written) >= _AS_WRITTEN_MOST:
            return function
        lowered = lowered or function
        as_written.update(deferred)
