"""Where complex values are, and which rules may meet them.

adgen differentiates complex code under JAX's convention (docs/rules.md, "Complex
numbers"): a tangent is the derivative along a complex (or real) direction, and a
cotangent is the transpose of the tangent map for the pairing ``<a, b> = Re(sum(a * b))``.
A rule registered ``complex=True`` has templates that are right for complex values under
that convention; every other rule was written for real values only. So before derivative
code is written, :class:`ComplexValues` finds the values that may be complex (a complex
argument, literal, outside value or dtype, or a value computed from one), and
:meth:`ComplexValues.refuse` raises :class:`~adgen.errors.NonDifferentiableError`, naming
the line, where such a value meets a differentiated one in a call whose rule is not for
complex values.

Reverse mode asks :meth:`ComplexValues.kind` of each value a cotangent goes to: the
cotangent of a real value is real, so the share of a statement that touches complex
values is projected onto the reals (``np.real``) on its way to a real value.

>>> import numpy as np
>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> def f(x):
...     return np.sum(np.maximum(x, 1j))
>>> try:
...     ComplexValues(lower(parse_function(f))).refuse({"x"})
... except NonDifferentiableError as e:
...     print(e.message)
adgen does not differentiate `np.maximum` of complex values: its derivative rule is for real ...
>>> def g(x):
...     z = x * np.exp(1j * x)
...     return np.sum(np.abs(z) ** 2)
>>> cv = ComplexValues(lower(parse_function(g)))
>>> cv.refuse({"x"})  # every rule met is one for complex values
>>> cv.kind("x"), cv.kind("z")  # (z: a product with a complex exponential)
('real', 'complex')
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from adgen import ir
from adgen.errors import NonDifferentiableError
from adgen.middle import shapes
from adgen.modes.expand import loc_of
from adgen.rules import registry
from adgen.rules.known import ANY_KIND, REAL

# functions whose result is real even for a complex argument: complexness stops there
_REAL_RESULT = {
    "np.real",
    "np.imag",
    "np.absolute",
    "abs",
    "np.abs",
    "np.angle",
    "np.isreal",
    "np.iscomplex",
    "np.iscomplexobj",
    "np.isrealobj",
    "np.shape",
    "np.ndim",
    "np.size",
    "len",
    ".real",
    ".imag",
    "np.var",
    "np.std",
    # the real signal of a half spectrum (a Hermitian spectrum's), and sample frequencies
    "np.fft.irfft",
    "np.fft.irfftn",
    "np.fft.irfft2",
    "np.fft.hfft",
    "np.fft.fftfreq",
    "np.fft.rfftfreq",
}
# constructors of complex numbers (registered as constants in rules/nondiff.py, so that
# `np.complex128(2.0)` is allowed; this module refuses them on differentiated values)
_COMPLEX_RESULT = {"complex", "np.complex128", "np.complex64", "np.clongdouble"}


def _outside(fn: ir.Function, name: str) -> Any:
    """The value an outside name (``C``, ``np.complex128``) stands for, or None if unknown."""
    try:
        return fn.outside(name)
    except KeyError:
        return None


def _complex_value(value: Any, dtype_position: bool) -> bool:
    """Is ``value`` complex, a complex type or dtype (or, as a dtype argument, its name)?"""
    if isinstance(value, (complex, np.complexfloating)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "c"
    if isinstance(value, type):
        return issubclass(value, (complex, np.complexfloating))
    if isinstance(value, np.dtype):
        return value.kind == "c"
    if dtype_position and isinstance(value, str):
        try:
            return np.dtype(value).kind == "c"
        except TypeError:
            return False
    return False


def _complex_atom(fn: ir.Function, atom: ir.Atom, dtype_position: bool) -> bool:
    if isinstance(atom, ir.Const):
        return _complex_value(atom.value, dtype_position)
    if isinstance(atom, ir.Free):
        return _complex_value(_outside(fn, atom.name), dtype_position)
    if isinstance(atom, ir.Tup):
        return any(_complex_atom(fn, a, dtype_position) for a in atom.items)
    return False


def _reads_complex_constant(fn: ir.Function, stmt: ir.Assign) -> bool:
    """Does the statement make a complex value from a complex constant (or constructor)?"""
    if stmt.prim.name in _COMPLEX_RESULT:
        return True
    try:
        bound = list(stmt.prim.bind(stmt.args, stmt.kwargs).items())
    except TypeError:  # not our business here: the rules report calls that do not fit
        bound = [("", a) for a in stmt.args] + list(stmt.kwargs)
    return any(
        _complex_atom(fn, atom, p == "dtype" or stmt.prim.name in (".astype", "astype"))
        for p, atom in bound
    )


# functions without a derivative for real arguments (piecewise constant) that are smooth for
# complex ones: refused there (np.sign(z) is z / |z|)
_SMOOTH_FOR_COMPLEX = {"np.sign"}
# functions that may make a complex result from real arguments
_MAKES_COMPLEX_PREFIXES = ("np.fft.",)
_MAKES_COMPLEX = {"np.linalg.eig", "np.linalg.eigvals", "np.emath.sqrt", "np.emath.log"}

Kind = str  # "real", "complex" or "unknown" (complex or real: decided when the code runs)


class ComplexValues:
    """Which values of ``fn`` may be complex. ``known`` maps names to ``(shape, dtype
    name)`` where the call's arguments decide them (:func:`adgen.middle.shapes.specialise`):
    those are exact; the others are complex if something complex flows into them."""

    def __init__(
        self, fn: ir.Function, known: dict[str, tuple[tuple[int, ...], str]] | None = None
    ) -> None:
        self.fn = fn
        self.known = known or {}
        # code right for real and complex arguments alike (their kinds unknown): no value is
        # known real, every share is projected when the code runs (rt.real_like), and rules
        # are not refused here -- the function this code is inlined into refuses them
        self.agnostic = ANY_KIND in self.known
        self.assigns = [s for s in fn.statements() if isinstance(s, ir.Assign)]
        self.constant = {id(s) for s in self.assigns if _reads_complex_constant(fn, s)}
        tainted = {n for n in fn.params if self._known_kind(n) == "complex"}
        changed = True
        while changed:  # loops: iterate to a fixed point (the set only grows)
            changed = False
            for s in self.assigns:
                if s.prim.name in _REAL_RESULT or set(s.targets) <= tainted:
                    continue
                if all(self._known_kind(t) == "real" for t in s.targets):
                    continue
                if (
                    id(s) in self.constant
                    or _makes_complex(s.prim.name)
                    or self._reads(s) & tainted
                ):
                    new = {t for t in s.targets if self._known_kind(t) != "real"} - tainted
                    if new:  # (a fixed point: only new names mean another pass)
                        tainted |= new
                        changed = True
        self.tainted = tainted
        self.certain = self._certainly_complex() if tainted else set()
        # does the function hold a complex value at all? (most do not: nothing to do)
        self.any = bool(tainted) or bool(self.constant) or self.agnostic

    def _certainly_complex(self) -> set[str]:
        """The names every binding of which is made complex: an elementwise function for
        complex values (arithmetic, ``np.exp``...: NumPy's result is complex when an operand
        is) of a complex literal or outside value, or of a name certainly complex."""
        bindings: dict[str, list[ir.Assign]] = {}
        for s in self.assigns:
            for t in s.targets:
                bindings.setdefault(t, []).append(s)

        def makes_complex(s: ir.Assign, certain: set[str]) -> bool:
            prim = s.prim
            if not (prim.elementwise and prim.complex) or prim.name in _REAL_RESULT:
                return False
            if prim.name == "np.real_if_close":  # (real when the imaginary part is small)
                return False
            return id(s) in self.constant or bool(self._reads(s) & certain)

        certain: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, stmts in bindings.items():
                if name not in certain and all(makes_complex(s, certain) for s in stmts):
                    certain.add(name)
                    changed = True
        return certain

    def _known_kind(self, name: str) -> Kind | None:
        entry = self.known.get(name)
        if entry is None or not entry[1]:
            return None
        try:
            return "complex" if np.dtype(entry[1]).kind == "c" else "real"
        except TypeError:  # "object": a tuple or None known exactly
            return None

    @staticmethod
    def _reads(stmt: ir.Assign) -> set[str]:
        return {v for a in ir.stmt_args(stmt) for v in ir.atom_vars(a)}

    def kind(self, name: str) -> Kind:
        """``"real"``, ``"complex"``, or ``"unknown"`` (the code runs to know)."""
        known = self._known_kind(name)
        if known is not None:
            return known
        if name in self.certain:
            return "complex"
        return "unknown" if name in self.tainted or self.agnostic else "real"

    def real(self) -> list[str]:
        """The names known to be real that ``known`` gives no dtype for (parameters and
        values computed from real ones only, when no call's arguments are known)."""
        if self.agnostic:
            return []
        names = set(self.fn.params) | {t for s in self.assigns for t in s.targets}
        return sorted(n for n in names if self._known_kind(n) is None and n not in self.tainted)

    def publish(self, known: dict[str, tuple[tuple[int, ...], str]]) -> None:
        """Tell the templates' ``rt.known_real`` questions which names are real
        (:data:`adgen.rules.known.REAL`)."""
        known[REAL] = ((), " ".join(self.real()))

    def touches(self, stmt: ir.Assign) -> bool:
        """Does the statement read or make a value that may be complex?"""
        if not self.any:
            return False
        if self.agnostic or id(stmt) in self.constant or _makes_complex(stmt.prim.name):
            return True
        return any(self.kind(v) != "real" for v in self._reads(stmt) | set(stmt.targets))

    def refuse(self, varied: set[str]) -> None:
        """Raise where a statement reads a differentiated value and a complex one, and its
        rule is not one for complex values."""
        if not self.any or self.agnostic:
            return
        for s in self.assigns:
            prim = s.prim
            if prim.complex or not self._reads(s) & varied:
                continue
            if not prim.differentiable and prim.name not in _SMOOTH_FOR_COMPLEX:
                continue
            if self.touches(s):
                raise NonDifferentiableError(
                    f"adgen does not differentiate `{prim.name}` of complex values: its "
                    "derivative rule is for real values only",
                    loc_of(self.fn, s.line),
                    "write this step with real arrays (np.real / np.imag parts, np.abs), or "
                    "register a rule for complex values (adgen.rule(..., complex=True)); "
                    "docs/supported.md lists the functions differentiated for complex values",
                )


# of np.fft's: a reordering, complex where its argument is
_KEEPS_KIND = {"np.fft.fftshift", "np.fft.ifftshift"}


def _makes_complex(name: str) -> bool:
    if name in _REAL_RESULT or name in _KEEPS_KIND:
        return False
    return name in _MAKES_COMPLEX or name.startswith(_MAKES_COMPLEX_PREFIXES)


def refuse_complex(
    fn: ir.Function, varied: set[str], known: dict[str, tuple[tuple[int, ...], str]] | None = None
) -> ComplexValues:
    """:class:`ComplexValues` of ``fn``, after refusing what it cannot differentiate."""
    values = ComplexValues(fn, known)
    values.refuse(varied)
    if known is not None:
        values.publish(known)
    return values


# the run-time questions of code made for values of any kind (nested derivatives' code,
# :data:`adgen.middle.shapes.ANY_KIND`), which the kinds known here may answer
_KIND_QUESTIONS = frozenset({"rt.is_complex", "rt.real_like"})


def settle_kinds(fn: ir.Function, signature: shapes.Signature = ()) -> ir.Function:
    """``fn`` with the run-time kind questions its kinds answer settled: code made for any
    kind of value (a derivative adgen differentiates again, inlined here) asks
    ``rt.is_complex(v)`` and projects shares with ``rt.real_like(g, ...)``; where this
    function knows ``v`` (or ``g``) is real -- from the call's arguments, or because nothing
    complex flows into it -- the question becomes ``False`` and the projection a copy (the
    optimizer then drops what only fed it). Code made for any kind is left as it is.

    >>> from adgen.frontend.parse import parse_function
    >>> from adgen.frontend.lower import lower
    >>> from adgen import runtime as rt
    >>> def f(x, g):
    ...     return rt.real_like(g * x, rt.is_complex(x))
    >>> print(settle_kinds(lower(parse_function(f))))  # doctest: +NORMALIZE_WHITESPACE
    def f(x, g):  # <doctest adgen.modes.complexvalues.settle_kinds[3]>:1
        out_1 = g * x  # line 2
        out_2 = False  # line 2
        out = out_1    # line 2
        return out     # line 2
    >>> z = (("x", shapes.describe(np.ones(2))), ("g", shapes.describe(np.ones(2) * 1j)))
    >>> print(settle_kinds(lower(parse_function(f)), z))  # doctest: +NORMALIZE_WHITESPACE
    def f(x, g):  # <doctest adgen.modes.complexvalues.settle_kinds[3]>:1
        out_1 = g * x  # line 2
        out_2 = False  # line 2
        out = rt.real_like(out_1, out_2)  # line 2
        return out     # line 2
    """
    if shapes.ANY_KIND in signature or not any(
        isinstance(s, ir.Assign) and s.prim.name in _KIND_QUESTIONS for s in fn.statements()
    ):
        return fn
    inferred = shapes.infer(fn, signature) if signature else {}
    values = ComplexValues(fn, {n: (k.shape, k.dtype.name) for n, k in inferred.items()})
    copy = registry.lookup(registry.assign)
    assert copy is not None

    def real(atom: ir.Atom) -> bool:
        if isinstance(atom, ir.Var):
            return values.kind(atom.name) == "real"
        if isinstance(atom, ir.Tup):
            return all(real(a) for a in atom.items)
        return isinstance(atom, (ir.Const, ir.Free)) and not _complex_atom(fn, atom, False)

    def settled(s: ir.Assign) -> ir.Assign:
        if s.prim.name not in _KIND_QUESTIONS or s.kwargs or len(s.targets) != 1 or not s.args:
            return s
        if s.prim.name == "rt.is_complex" and len(s.args) == 1 and real(s.args[0]):
            return dataclasses.replace(s, prim=copy, args=(ir.Const(False),))
        if s.prim.name == "rt.real_like" and len(s.args) == 2 and real(s.args[0]):
            return dataclasses.replace(s, prim=copy, args=(s.args[0],))  # np.real(g) is g
        return s

    return dataclasses.replace(fn, body=ir.map_assigns(fn.body, settled))
