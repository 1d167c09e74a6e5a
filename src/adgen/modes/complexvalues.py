"""Complex values are refused where they meet a differentiated value.

adgen's rules are written for real floating-point code. A complex intermediate made from a
differentiated real value (``x.astype(complex)``, ``x * 1j``, ``np.asarray(x,
dtype=np.complex128)``, ``x * C`` with a complex global ``C``) would flow through rules that
drop imaginary parts, and the derivative would be silently wrong. So before any derivative
code is written, every statement that reads a differentiated value is checked: if it also
reads something complex (a complex literal, a complex outside value, a complex dtype, or a
value computed from one), adgen raises :class:`~adgen.errors.NonDifferentiableError` naming
the line. Complex values that never meet a differentiated one are left alone, and so are
their real parts (``np.real``, ``np.abs``...).

>>> import numpy as np
>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> def f(x):
...     return np.sum(np.abs(x * 1j))
>>> refuse_complex(lower(parse_function(f)), {"x"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
adgen.errors.NonDifferentiableError: <doctest ...>:2:5: adgen does not differentiate complex ...
        return np.sum(np.abs(x * 1j))
        ^
    hint: write the computation with real arrays (real and imaginary parts separately); ...
"""

from __future__ import annotations

from typing import Any

import numpy as np

from adgen import ir
from adgen.errors import NonDifferentiableError
from adgen.modes.expand import loc_of

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


def refuse_complex(fn: ir.Function, varied: set[str]) -> None:
    """Raise where a statement reads a differentiated value and a complex one."""
    assigns = [s for s in fn.statements() if isinstance(s, ir.Assign)]
    constant = {id(s) for s in assigns if _reads_complex_constant(fn, s)}
    tainted: set[str] = set()  # names that may hold a complex value
    changed = True
    while changed:  # loops: iterate to a fixed point (the set only grows)
        changed = False
        for s in assigns:
            if s.prim.name in _REAL_RESULT or set(s.targets) <= tainted:
                continue
            reads = {v for a in ir.stmt_args(s) for v in ir.atom_vars(a)}
            if id(s) in constant or reads & tainted:
                tainted.update(s.targets)
                changed = True
    for s in assigns:
        reads = {v for a in ir.stmt_args(s) for v in ir.atom_vars(a)}
        if not reads & varied:
            continue
        if id(s) in constant or reads & tainted:
            raise NonDifferentiableError(
                "adgen does not differentiate complex values: "
                f"`{s.prim.name}` here mixes a differentiated value with complex numbers",
                loc_of(fn, s.line),
                "write the computation with real arrays (real and imaginary parts "
                "separately); adgen's derivative rules are for real floating-point values",
            )
