"""Every derivative rule, in both modes, against central finite differences.

The functions under test live in ``tests/rule_cases.py`` (adgen reads their source).
This file maps each of them to inputs over shape families -- Python float,
0-d array, vector, matrix, broadcasting pairs, float32 -- inside the function's
domain and away from its kinks, and checks them with ``adgen.testing.check_grads``
(forward mode against finite differences, reverse mode against forward mode).

``test_every_rule_has_a_case`` reads the IR of the cases and fails when a
differentiable function or attribute registered in ``adgen.rules`` is used by no
case: registering a rule without a test here fails the suite.
"""

from __future__ import annotations

import functools
import inspect
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import rule_cases as rc  # tests/ is on sys.path (pytest's rootdir-based import)
from registry_cases import (
    case_function,
    refuses_every_mode,
    registry_cases,
    solvers_helper,
    solvers_wrapper,
)

import adgen
from adgen import ir
from adgen.middle.optimize import optimize
from adgen.rules import lookup_attribute, registered
from adgen.rules import registry as _registry
from adgen.testing import check_grads

F32 = np.float32

# --------------------------------------------------------------------------- input generation


@dataclass(frozen=True)
class Dom:
    """Uniform values in [lo, hi], at least ``gap`` away from each point of ``avoid``."""

    lo: float
    hi: float
    avoid: tuple[float, ...] = ()
    gap: float = 0.05

    def draw(self, rng: np.random.Generator, shape: Any, dtype: Any = np.float64) -> Any:
        n = 1 if shape is None or shape == "f32" else int(np.prod(shape))
        vals = rng.uniform(self.lo, self.hi, size=n)
        for _ in range(1000):
            bad = np.zeros(n, bool)
            for p in self.avoid:
                bad |= np.abs(vals - p) < self.gap
            if not bad.any():
                break
            vals[bad] = rng.uniform(self.lo, self.hi, size=int(bad.sum()))
        else:  # pragma: no cover - a domain mistake in this file
            raise ValueError(f"cannot draw from {self}")
        if shape is None:
            return float(vals[0])
        if shape == "f32":
            return F32(vals[0])
        return vals.reshape(shape).astype(dtype)


@dataclass(frozen=True)
class Fixed:
    """An argument passed as is (an integer index, a boolean mask...)."""

    value: Any


def separated(x: Any, y: Any) -> bool:
    """No (near) ties between broadcast operands."""
    return bool(np.all(np.abs(np.subtract(x, y, dtype=np.float64)) > 0.05))


def mod_ok(x: Any, y: Any) -> bool:
    """x / y stays away from the integers, where x % y jumps."""
    q = np.divide(x, y, dtype=np.float64)
    frac = q - np.floor(q)
    return bool(np.all((frac > 0.05) & (frac < 0.95)))


def clip_ok(x: Any, lo: Any, hi: Any) -> bool:
    return separated(x, lo) and separated(x, hi)


@dataclass
class Param:
    id: str
    fn: Callable[..., Any]
    shapes: tuple[Any, ...]
    doms: tuple[Any, ...]
    dtype: Any = np.float64
    ok: Callable[..., bool] | None = None
    xfail: str | None = None
    check: dict[str, Any] | None = None  # extra check_grads options (eps for float32 results)

    def args(self) -> tuple[Any, ...]:
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        for _ in range(2000):
            out = tuple(
                s.value if isinstance(s, Fixed) else d.draw(rng, s, self.dtype)
                for s, d in zip(self.shapes, self.doms, strict=True)
            )
            if self.ok is None or self.ok(*out):
                return out
        raise ValueError(f"{self.id}: no valid input drawn")  # pragma: no cover


PARAMS: list[Param] = []


def _add(
    name: str,
    fn: Callable[..., Any],
    label: str,
    shapes: tuple[Any, ...],
    doms: tuple[Any, ...],
    dtype: Any = np.float64,
    ok: Callable[..., bool] | None = None,
    xfail: dict[str, str] | None = None,
    check: dict[str, Any] | None = None,
) -> None:
    pid = f"{name}-{label}"
    reason = (xfail or {}).get(label)
    PARAMS.append(Param(pid, fn, shapes, doms, dtype, ok, reason, check))


# Shape families. ``None`` is a Python float, ``()`` a 0-d array.
UNARY = {"scalar": (None,), "0d": ((),), "vector": ((4,),), "matrix": ((3, 4),)}
BINARY = {
    "scalar": (None, None),
    "0d": ((), ()),
    "vector": ((4,), (4,)),
    "matrix": ((3, 4), (3, 4)),
    "broadcast-(3,1)x(1,4)": ((3, 1), (1, 4)),
    "broadcast-(3,4)x(4,)": ((3, 4), (4,)),
    "broadcast-(4,)x(3,4)": ((4,), (3, 4)),
    "broadcast-floatx(3,4)": (None, (3, 4)),
    "broadcast-(3,4)xfloat": ((3, 4), None),
    "broadcast-0dx(3,4)": ((), (3, 4)),
}
F32_UNARY = {"float32": ((3, 4),)}
F32_BINARY = {"float32": ((3, 4), (3, 4)), "broadcast-(3,1)x(1,4)-float32": ((3, 1), (1, 4))}


def unary(name: str, fn: Callable[..., Any], dom: Dom, *, f32: bool = True, **kw: Any) -> None:
    for label, shapes in UNARY.items():
        _add(name, fn, label, shapes, (dom,), **kw)
    if f32:
        for label, shapes in F32_UNARY.items():
            _add(name, fn, label, shapes, (dom,), dtype=F32, **kw)


def binary(
    name: str, fn: Callable[..., Any], dx: Dom, dy: Dom, *, f32: bool = True, **kw: Any
) -> None:
    for label, shapes in BINARY.items():
        _add(name, fn, label, shapes, (dx, dy), **kw)
    if f32:
        for label, shapes in F32_BINARY.items():
            _add(name, fn, label, shapes, (dx, dy), dtype=F32, **kw)


def shaped(
    name: str,
    fn: Callable[..., Any],
    table: dict[str, tuple[Any, ...]],
    dom: Dom | tuple[Dom, ...],
    *,
    f32: tuple[str, ...] = (),
    **kw: Any,
) -> None:
    """Explicit shapes: ``{label: (shape_of_arg0, shape_of_arg1, ...)}``."""
    for label, shapes in table.items():
        doms = dom if isinstance(dom, tuple) else (dom,) * len(shapes)
        _add(name, fn, label, shapes, doms, **kw)
        if label in f32:
            _add(name, fn, f"{label}-float32", shapes, doms, dtype=F32, **kw)


ANY = Dom(-1.5, 1.5)
NONZERO = Dom(-1.5, 1.5, avoid=(0.0,), gap=0.3)
POS = Dom(0.3, 3.0)

# --------------------------------------------------------------------------- arithmetic

for _name, _fn in [
    ("add", rc.case_add),
    ("np-add", rc.case_np_add),
    ("sub", rc.case_sub),
    ("np-subtract", rc.case_np_subtract),
    ("mul", rc.case_mul),
    ("multiply", rc.case_np_multiply),
]:
    binary(_name, _fn, ANY, ANY)
for _name, _fn in [
    ("truediv", rc.case_truediv),
    ("divide", rc.case_np_divide),
    ("true-divide", rc.case_np_true_divide),
]:
    binary(_name, _fn, ANY, NONZERO)
for _name, _fn in [
    ("pow", rc.case_pow),
    ("power", rc.case_np_power),
    ("builtin-pow", rc.case_builtin_pow),
]:
    binary(_name, _fn, Dom(0.3, 2.0), Dom(-2.0, 2.0))
unary("pow-const-exponent", rc.case_pow_const_exponent, ANY)
unary("pow-const-base", rc.case_pow_const_base, ANY)
for _name, _fn in [
    ("mod", rc.case_mod),
    ("np-mod", rc.case_np_mod),
    ("remainder", rc.case_np_remainder),
]:
    binary(_name, _fn, Dom(-3.0, 3.0), Dom(0.5, 2.0), ok=mod_ok)
for _name, _fn in [
    ("neg", rc.case_neg),
    ("negative", rc.case_np_negative),
    ("pos", rc.case_pos),
    ("positive", rc.case_np_positive),
]:
    unary(_name, _fn, ANY)
for _name, _fn in [
    ("abs", rc.case_abs),
    ("absolute", rc.case_np_absolute),
    ("np-abs", rc.case_np_abs),
    ("fabs", rc.case_np_fabs),
]:
    unary(_name, _fn, NONZERO)
binary("maximum", rc.case_maximum, ANY, ANY, ok=separated)
binary("minimum", rc.case_minimum, ANY, ANY, ok=separated)
binary("where", rc.case_where, NONZERO, ANY)
unary("where-const-branch", rc.case_where_const_branch, NONZERO)
_MASK = Fixed(np.array([[True], [False], [True]]))
shaped(
    "where-cond",
    rc.case_where_cond,
    {
        "matrix": (Fixed(np.arange(12).reshape(3, 4) % 3 == 0), (3, 4), (3, 4)),
        "broadcast-(3,1)x(1,4)x(3,4)": (_MASK, (1, 4), (3, 4)),
        "broadcast-(3,1)xfloatx(4,)": (_MASK, None, (4,)),
    },
    ANY,
    f32=("broadcast-(3,1)x(1,4)x(3,4)",),
)
unary("clip", rc.case_clip, Dom(-1.5, 1.5, avoid=(-0.5, 0.5)))
unary("clip-no-min", rc.case_clip_no_min, Dom(-1.5, 1.5, avoid=(0.5,)))
unary("clip-no-max", rc.case_clip_no_max, Dom(-1.5, 1.5, avoid=(-0.5,)))
shaped(
    "clip-varying",
    rc.case_clip_varying,
    {
        "scalar": (None, None, None),
        "vector": ((4,), (4,), (4,)),
        "matrix": ((3, 4), (3, 4), (3, 4)),
        "broadcast-(3,4)x(3,1)x(4,)": ((3, 4), (3, 1), (4,)),
        "broadcast-(3,4)xfloatxfloat": ((3, 4), None, None),
        "broadcast-floatx(3,1)x(4,)": (None, (3, 1), (4,)),
    },
    (Dom(-1.5, 1.5), Dom(-1.0, -0.2), Dom(0.2, 1.0)),
    ok=clip_ok,
    f32=("matrix", "broadcast-(3,4)x(3,1)x(4,)"),
)

# --------------------------------------------------------------------------- elementwise (NumPy)

for _name, _fn, _dom in [
    ("sin", rc.case_sin, Dom(-3.0, 3.0)),
    ("cos", rc.case_cos, Dom(-3.0, 3.0)),
    ("tan", rc.case_tan, Dom(-1.2, 1.2)),
    ("arcsin", rc.case_arcsin, Dom(-0.9, 0.9)),
    ("arccos", rc.case_arccos, Dom(-0.9, 0.9)),
    ("arctan", rc.case_arctan, Dom(-3.0, 3.0)),
    ("sinh", rc.case_sinh, ANY),
    ("cosh", rc.case_cosh, ANY),
    ("tanh", rc.case_tanh, ANY),
    ("exp", rc.case_exp, ANY),
    ("exp2", rc.case_exp2, ANY),
    ("expm1", rc.case_expm1, ANY),
    ("log1p", rc.case_log1p, Dom(-0.7, 3.0)),
    ("square", rc.case_square, ANY),
    ("reciprocal", rc.case_reciprocal, NONZERO),
    ("log", rc.case_log, POS),
    ("log2", rc.case_log2, POS),
    ("log10", rc.case_log10, POS),
    ("sqrt", rc.case_sqrt, POS),
]:
    unary(_name, _fn, _dom)

# --------------------------------------------------------------------------- math module

MATH_FAMILIES = {"scalar": (None,), "float32-scalar": ("f32",)}
for _name, _fn, _dom in [
    ("math-sin", rc.case_math_sin, Dom(-3.0, 3.0)),
    ("math-cos", rc.case_math_cos, Dom(-3.0, 3.0)),
    ("math-tan", rc.case_math_tan, Dom(-1.2, 1.2)),
    ("math-asin", rc.case_math_asin, Dom(-0.9, 0.9)),
    ("math-acos", rc.case_math_acos, Dom(-0.9, 0.9)),
    ("math-atan", rc.case_math_atan, Dom(-3.0, 3.0)),
    ("math-sinh", rc.case_math_sinh, ANY),
    ("math-cosh", rc.case_math_cosh, ANY),
    ("math-tanh", rc.case_math_tanh, ANY),
    ("math-asinh", rc.case_math_asinh, Dom(-3.0, 3.0)),
    ("math-acosh", rc.case_math_acosh, Dom(1.1, 4.0)),
    ("math-atanh", rc.case_math_atanh, Dom(-0.9, 0.9)),
    ("math-exp", rc.case_math_exp, ANY),
    ("math-expm1", rc.case_math_expm1, ANY),
    ("math-log1p", rc.case_math_log1p, Dom(-0.7, 3.0)),
    ("math-erf", rc.case_math_erf, ANY),
    ("math-erfc", rc.case_math_erfc, ANY),
    ("math-sqrt", rc.case_math_sqrt, POS),
    ("math-log", rc.case_math_log, POS),
    ("math-log-base3", rc.case_math_log_base, POS),
    ("math-log2", rc.case_math_log2, POS),
    ("math-log10", rc.case_math_log10, POS),
    ("math-fabs", rc.case_math_fabs, NONZERO),
]:
    shaped(_name, _fn, MATH_FAMILIES, _dom)
shaped(
    "math-log-varying-base",
    rc.case_math_log_varying_base,
    {"scalar": (None, None)},
    (POS, Dom(1.5, 3.0)),
)
shaped(
    "math-pow",
    rc.case_math_pow,
    {"scalar": (None, None), "float32-scalar": ("f32", "f32")},
    (Dom(0.3, 2.0), Dom(-2.0, 2.0)),
)
shaped(
    "math-atan2",
    rc.case_math_atan2,
    {"scalar": (None, None), "float32-scalar": ("f32", "f32")},
    (NONZERO, NONZERO),
)
shaped(
    "math-hypot",
    rc.case_math_hypot,
    {"scalar": (None, None), "float32-scalar": ("f32", "f32")},
    (NONZERO, NONZERO),
)
shaped(
    "math-copysign",
    rc.case_math_copysign,
    {"scalar": (None, None), "float32-scalar": ("f32", "f32")},
    (NONZERO, NONZERO),
)

# --------------------------------------------------------------------------- reductions

FULL = {"scalar": (None,), "0d": ((),), "vector": ((4,),), "matrix": ((3, 4),), "3d": ((2, 3, 4),)}
AXIS = {"vector": ((4,),), "matrix": ((3, 4),), "3d": ((2, 3, 4),)}
AXIS1 = {"matrix": ((3, 4),), "3d": ((2, 3, 4),)}
THREE = {"3d": ((2, 3, 4),)}
SIGNED = Dom(-1.5, 1.5, avoid=(0.0,), gap=0.5)  # |values| in [0.5, 1.5]: no zeros for prod

for _name, _fn, _table, _dom in [
    ("sum", rc.case_sum, FULL, ANY),
    ("sum-axis0", rc.case_sum_axis0, AXIS, ANY),
    ("sum-axis1-keepdims", rc.case_sum_axis1_keepdims, AXIS1, ANY),
    ("sum-axis-neg1", rc.case_sum_axis_neg1, AXIS, ANY),
    ("sum-axis-(0,2)", rc.case_sum_axis_tuple, THREE, ANY),
    ("sum-method-axis0", rc.case_sum_method, AXIS, ANY),
    ("mean", rc.case_mean, FULL, ANY),
    ("mean-axis0", rc.case_mean_axis0, AXIS, ANY),
    ("mean-axis1-keepdims", rc.case_mean_axis1_keepdims, AXIS1, ANY),
    ("mean-axis-(0,2)-keepdims", rc.case_mean_axis_tuple_keepdims, THREE, ANY),
    ("mean-method", rc.case_mean_method, AXIS, ANY),
    ("prod", rc.case_prod, FULL, SIGNED),
    ("prod-axis0", rc.case_prod_axis0, AXIS, SIGNED),
    ("prod-axis1-keepdims", rc.case_prod_axis1_keepdims, AXIS1, SIGNED),
    ("prod-axis-(0,2)", rc.case_prod_axis_tuple, THREE, SIGNED),
    ("prod-method-axis-neg1", rc.case_prod_method, AXIS, SIGNED),
    ("max", rc.case_max, FULL, ANY),
    ("max-axis0", rc.case_max_axis0, AXIS, ANY),
    ("max-axis1-keepdims", rc.case_max_axis1_keepdims, AXIS1, ANY),
    ("max-method-axis-neg1", rc.case_max_method, AXIS, ANY),
    ("amax-axis1", rc.case_amax, AXIS1, ANY),
    ("min", rc.case_min, FULL, ANY),
    ("min-axis0", rc.case_min_axis0, AXIS, ANY),
    ("min-axis1-keepdims", rc.case_min_axis1_keepdims, AXIS1, ANY),
    ("min-method-axis-(0,2)", rc.case_min_method, THREE, ANY),
    ("amin-axis0-keepdims", rc.case_amin, AXIS, ANY),
]:
    shaped(_name, _fn, _table, _dom, f32=("matrix", "3d"))

# --------------------------------------------------------------------------- linear algebra

MATMUL = {
    "(3,4)@(4,2)": ((3, 4), (4, 2)),
    "(4,)@(4,)": ((4,), (4,)),
    "(4,)@(4,2)": ((4,), (4, 2)),
    "(3,4)@(4,)": ((3, 4), (4,)),
    "(2,3,4)@(4,5)": ((2, 3, 4), (4, 5)),
    "(3,4)@(2,4,5)": ((3, 4), (2, 4, 5)),
    "(2,3,4)@(2,4,5)": ((2, 3, 4), (2, 4, 5)),
    "(2,3,4)@(4,)": ((2, 3, 4), (4,)),
    "(4,)@(2,4,5)": ((4,), (2, 4, 5)),
    "(1,3,4)@(2,4,5)": ((1, 3, 4), (2, 4, 5)),
    "(2,1,3,4)@(3,4,2)": ((2, 1, 3, 4), (3, 4, 2)),
}
shaped("matmul", rc.case_matmul, MATMUL, ANY, f32=("(3,4)@(4,2)", "(2,3,4)@(2,4,5)"))
shaped("np-matmul", rc.case_np_matmul, MATMUL, ANY, f32=("(3,4)@(4,2)", "(4,)@(4,)"))
DOT = {
    "(3,4).(4,2)": ((3, 4), (4, 2)),
    "(4,).(4,)": ((4,), (4,)),
    "(3,4).(4,)": ((3, 4), (4,)),
    "(4,).(4,2)": ((4,), (4, 2)),
    "float.(3,4)": (None, (3, 4)),
    "(3,4).float": ((3, 4), None),
    "0d.(4,)": ((), (4,)),
    "float.float": (None, None),
    "(2,3,4).(4,)": ((2, 3, 4), (4,)),
    "(2,3,4).(4,5)": ((2, 3, 4), (4, 5)),
    "(2,3,4).(5,4,6)": ((2, 3, 4), (5, 4, 6)),
    "(4,).(5,4,6)": ((4,), (5, 4, 6)),
}
shaped("dot", rc.case_dot, DOT, ANY, f32=("(3,4).(4,2)", "(3,4).(4,)", "(2,3,4).(5,4,6)"))
shaped(
    "dot-method",
    rc.case_dot_method,
    {k: DOT[k] for k in ("(3,4).(4,2)", "(4,).(4,)", "(3,4).(4,)")},
    ANY,
)
shaped(
    "transpose",
    rc.case_transpose,
    {"vector": ((4,),), "matrix": ((3, 4),), "3d": ((2, 3, 4),)},
    ANY,
    f32=("matrix",),
)
shaped("transpose-axes-(1,0,2)", rc.case_transpose_axes, THREE, ANY)
shaped("transpose-axes-(2,0,1)", rc.case_transpose_axes_cycle, THREE, ANY, f32=("3d",))
shaped(
    "transpose-axes-(-1,0,1)",
    rc.case_transpose_negative_axes,
    THREE,
    ANY,
)
shaped("transpose-method", rc.case_transpose_method, {"matrix": ((3, 4),)}, ANY)
shaped("transpose-method-axes-(1,2,0)", rc.case_transpose_method_axes, THREE, ANY)
shaped(
    "T",
    rc.case_attr_T,
    {"vector": ((4,),), "matrix": ((3, 4),), "3d": ((2, 3, 4),)},
    ANY,
    f32=("matrix",),
)
shaped(
    "real",
    rc.case_attr_real,
    {"vector": ((4,),), "matrix": ((3, 4),), "0d": ((),)},
    ANY,
    f32=("matrix",),
)
shaped(
    "imag",
    rc.case_attr_imag,
    {"vector": ((4,),), "matrix": ((3, 4),), "0d": ((),)},
    ANY,
    f32=("matrix",),
)
shaped(
    "reshape-(4,3)",
    rc.case_reshape,
    {"matrix": ((3, 4),), "vector12": ((12,),)},
    ANY,
    f32=("matrix",),
)
shaped(
    "reshape-(-1)",
    rc.case_reshape_flat,
    {"matrix": ((3, 4),), "3d": ((2, 3, 4),), "0d": ((),)},
    ANY,
)
shaped(
    "reshape-(2,-1)",
    rc.case_reshape_infer,
    {"matrix": ((3, 4),), "3d": ((2, 3, 4),)},
    ANY,
    f32=("3d",),
)
shaped("reshape-method-(2,6)", rc.case_reshape_method, {"matrix": ((3, 4),)}, ANY)
shaped("reshape-method-tuple-(6,-1)", rc.case_reshape_method_tuple, {"matrix": ((3, 4),)}, ANY)

# --------------------------------------------------------------------------- copies, casts, shapes

SHAPES = {"vector": ((4,),), "matrix": ((3, 4),), "3d": ((2, 3, 4),)}
for _name, _fn in [
    ("ravel", rc.case_ravel),
    ("ravel-method", rc.case_ravel_method),
    ("flatten-method", rc.case_flatten_method),
    ("copy", rc.case_copy),
    ("copy-method", rc.case_copy_method),
    ("astype-float64", rc.case_astype_float64),
    ("astype-string-float64", rc.case_astype_string),
]:
    shaped(_name, _fn, {"0d": ((),), **SHAPES}, ANY, f32=("matrix", "0d"))
shaped("ravel", rc.case_ravel, {"scalar": (None,)}, ANY)
shaped("copy", rc.case_copy, {"scalar": (None,)}, ANY)
# a float32 result: finite differences need a larger step
shaped(
    "astype-float32",
    rc.case_astype_float32,
    {"vector": ((4,),), "matrix": ((3, 4),)},
    ANY,
    f32=("vector", "matrix"),
    check={"eps": 1e-3, "rtol": 2e-3, "atol": 2e-3},
)
shaped(
    "astype-like",
    rc.case_astype_like,
    {"matrix": ((3, 4), (3, 4)), "broadcast-(3,4)x(4,)": ((3, 4), (4,))},
    ANY,
    f32=("matrix",),
)
# a cast to an integer or bool dtype has derivative 0 (x * trunc(x) has derivative trunc(x))
shaped(
    "astype-int",
    rc.case_astype_int,
    {"0d": ((),), "vector": ((4,),), "matrix": ((3, 4),)},
    Dom(-2.5, 2.5, avoid=(-2.0, -1.0, 0.0, 1.0, 2.0), gap=0.1),
    f32=("matrix",),
)
shaped(
    "astype-bool",
    rc.case_astype_bool,
    {"vector": ((4,),), "matrix": ((3, 4),)},
    NONZERO,
    f32=("matrix",),
)
SQUEEZABLE = {"(1,4)": ((1, 4),), "(3,1)": ((3, 1),), "(1,3,1)": ((1, 3, 1),), "(1,)": ((1,),)}
shaped(
    "squeeze",
    rc.case_squeeze,
    {**SQUEEZABLE, "0d": ((),), "matrix": ((3, 4),)},
    ANY,
    f32=("(1,3,1)",),
)
shaped("squeeze-axis0", rc.case_squeeze_axis0, {"(1,4)": ((1, 4),), "(1,3,1)": ((1, 3, 1),)}, ANY)
shaped("squeeze-method", rc.case_squeeze_method, SQUEEZABLE, ANY, f32=("(1,4)",))
shaped(
    "squeeze-method-axis-neg1",
    rc.case_squeeze_method_axis,
    {"(3,1)": ((3, 1),), "(1,3,1)": ((1, 3, 1),)},
    ANY,
)
TRACE = {"(3,4)": ((3, 4),), "(4,4)": ((4, 4),), "(4,3)": ((4, 3),), "(2,3,4)": ((2, 3, 4),)}
shaped("trace", rc.case_trace, TRACE, ANY, f32=("(4,4)", "(2,3,4)"))
shaped("trace-offset1", rc.case_trace_offset, TRACE, ANY, f32=("(3,4)",))
shaped("trace-offset-neg1", rc.case_trace_negative_offset, TRACE, ANY)
shaped("trace-axes-(1,2)", rc.case_trace_axes, {"(2,3,4)": ((2, 3, 4),)}, ANY, f32=("(2,3,4)",))
shaped("trace-axes-(2,0)-offset-neg1", rc.case_trace_axes_reversed, {"(2,3,4)": ((2, 3, 4),)}, ANY)
shaped("trace-method", rc.case_trace_method, TRACE, ANY, f32=("(4,4)",))
shaped("trace-method-offset1", rc.case_trace_method_offset, {"(3,4)": ((3, 4),)}, ANY)
shaped(
    "clip-method",
    rc.case_clip_method,
    {"0d": ((),), "vector": ((4,),), "matrix": ((3, 4),)},
    Dom(-1.5, 1.5, avoid=(-0.5, 0.5)),
    f32=("matrix",),
)
shaped(
    "clip-method-varying",
    rc.case_clip_method_varying,
    {
        "matrix": ((3, 4), (3, 4), (3, 4)),
        "broadcast-(3,4)x(3,1)x(4,)": ((3, 4), (3, 1), (4,)),
        "broadcast-(3,4)xfloatxfloat": ((3, 4), None, None),
    },
    (Dom(-1.5, 1.5), Dom(-1.0, -0.2), Dom(0.2, 1.0)),
    ok=clip_ok,
    f32=("matrix",),
)

# --------------------------------------------------------------------------- Python builtins

SCALARS = {"scalar": (None,), "0d": ((),), "float32-scalar": ("f32",)}
shaped("builtin-float", rc.case_builtin_float, SCALARS, ANY, f32=("0d",))
shaped(
    "builtin-float-of-sum",
    rc.case_builtin_float_times,
    {"0d": ((),), **SHAPES},
    ANY,
    f32=("matrix",),
)
SCALAR_PAIRS = {
    "scalar": (None, None),
    "0d": ((), ()),
    "float32-scalar": ("f32", "f32"),
    "floatx0d": (None, ()),
    "0dxfloat32-scalar": ((), "f32"),
}
for _name, _fn in [("builtin-max", rc.case_builtin_max), ("builtin-min", rc.case_builtin_min)]:
    shaped(_name, _fn, SCALAR_PAIRS, ANY, ok=separated, f32=("0d",))
shaped("builtin-sum", rc.case_builtin_sum, SHAPES, ANY, f32=("vector", "matrix"))
shaped("builtin-sum-start", rc.case_builtin_sum_start, SHAPES, ANY)
shaped("builtin-nondiff", rc.case_builtin_nondiff, {"vector": ((4,),)}, NONZERO, f32=("vector",))

# --------------------------------------------------------------------------- internal primitives

unary("assign", rc.case_assign_rebound_in_branch, ANY)
unary("self-product", rc.case_self_product, ANY)
shaped("list-helpers", rc.case_list_helpers, {"matrix": ((3, 2),)}, ANY)
shaped("list-vjp", rc.case_list_vjp, {"matrix": ((3, 2),)}, ANY)

# --------------------------------------------------------------------------- sequences

shaped("np-array-of-scalars", rc.case_np_array_of_scalars, {"scalar": ((), ())}, ANY)
for _name, _fn, _table in [
    ("stack-axis0", rc.case_stack_axis0, {"vector": ((4,), (4,)), "matrix": ((2, 3), (2, 3))}),
    ("stack-axis-1", rc.case_stack_axis_last, {"vector": ((4,), (4,)), "matrix": ((2, 3), (2, 3))}),
    ("concatenate", rc.case_concatenate, {"vector": ((2,), (3,)), "matrix": ((2, 3), (1, 3))}),
    ("concatenate-axis1", rc.case_concatenate_axis1, {"matrix": ((2, 3), (2, 1))}),
    ("hstack", rc.case_hstack, {"vector": ((3,), (3,)), "matrix": ((2, 3), (2, 3))}),
    ("vstack", rc.case_vstack, {"vector": ((3,), (3,)), "matrix": ((2, 3), (1, 3))}),
]:
    shaped(_name, _fn, _table, ANY, f32=("vector",))

# --------------------------------------------------------------------------- indexing

VM = {"vector": ((4,),), "matrix": ((3, 4),)}
for _name, _fn, _table in [
    ("getitem-int", rc.case_getitem_int, VM),
    ("getitem-neg-int", rc.case_getitem_neg_int, VM),
    ("getitem-slice-[1:3]", rc.case_getitem_slice, VM),
    ("getitem-step-[::2]", rc.case_getitem_step, VM),
    ("getitem-reverse-[::-1]", rc.case_getitem_reverse, VM),
    ("getitem-newaxis-[:,None]", rc.case_getitem_newaxis, VM),
    (
        "getitem-ellipsis-[...,0]",
        rc.case_getitem_ellipsis,
        {"matrix": ((3, 4),), "3d": ((2, 3, 4),)},
    ),
    ("getitem-pair-[1,2]", rc.case_getitem_pair, {"matrix": ((3, 4),)}),
    ("getitem-[:,1:3]", rc.case_getitem_slice2, {"matrix": ((3, 4),)}),
    ("getitem-[None,1:,::2]", rc.case_getitem_mixed, {"matrix": ((3, 4),), "3d": ((2, 3, 4),)}),
    ("getitem-fancy-free", rc.case_getitem_fancy_free, VM),
    ("getitem-mask", rc.case_getitem_mask, VM),
]:
    shaped(_name, _fn, _table, NONZERO, f32=("matrix",))
shaped(
    "getitem-[i,j]",
    rc.case_getitem_args,
    {
        "matrix-(1,2)": ((3, 4), Fixed(1), Fixed(2)),
        "matrix-(-1,0)": ((3, 4), Fixed(-1), Fixed(0)),
        "matrix-(1,slice)": ((3, 4), Fixed(1), Fixed(slice(1, None))),
    },
    ANY,
)
shaped(
    "getitem-fancy-arg",
    rc.case_getitem_fancy_arg,
    {"matrix": ((3, 4), Fixed(np.array([0, 2, 0])))},
    ANY,
)


# --------------------------------------------------------------------------- SciPy's solvers
# (given a function: the registry's examples cannot write one; docs/solvers.md)
try:
    import scipy.integrate as _integrate
    import scipy.optimize as _optimize
except ImportError:  # pragma: no cover - SciPy is optional
    _integrate = None  # type: ignore[assignment]

if _integrate is not None:
    _T3 = np.linspace(0.0, 1.0, 3)
    _TIGHT = {"rtol": 1e-11, "atol": 1e-12}

    def _odeint(k: Any) -> Any:
        return _integrate.odeint(lambda y, t: -k * y, np.ones(np.size(k)), _T3, **_TIGHT)

    def _solve_ivp(k: Any) -> Any:
        sol = _integrate.solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.ones(np.size(k)), **_TIGHT)
        return sol.y[:, -1]

    def _quad(k: Any) -> Any:
        return _integrate.quad(lambda x: np.exp(-k * x), 0.0, 1.0, epsabs=1e-13)[0]

    def _quad_vec(k: Any) -> Any:
        return _integrate.quad_vec(lambda x: np.exp(-k * x), 0.0, 1.0, epsabs=1e-13)[0]

    def _fixed_quad(k: Any) -> Any:
        return _integrate.fixed_quad(lambda x: np.exp(-k * x), 0.0, 1.0, n=7)[0]

    def _cubic(x: Any, k: Any) -> Any:
        return x**3 + k * x - 1.0

    def _brentq(k: Any) -> Any:
        return _optimize.brentq(_cubic, 0.0, 2.0, args=(k,), xtol=1e-14)

    def _brenth(k: Any) -> Any:
        return _optimize.brenth(_cubic, 0.0, 2.0, args=(k,), xtol=1e-14)

    def _ridder(k: Any) -> Any:
        return _optimize.ridder(_cubic, 0.0, 2.0, args=(k,), xtol=1e-14)

    def _bisect(k: Any) -> Any:
        return _optimize.bisect(_cubic, 0.0, 2.0, args=(k,), xtol=1e-14)

    def _toms748(k: Any) -> Any:
        return _optimize.toms748(_cubic, 0.0, 2.0, args=(k,), xtol=1e-14)

    def _newton(k: Any) -> Any:
        return _optimize.newton(_cubic, 1.0, args=(k,), tol=1e-14)

    def _fsolve(k: Any) -> Any:
        return _optimize.fsolve(lambda x: x * x + k * x - 1.0, np.ones(np.size(k)), xtol=1e-13)

    def _minimize(k: Any) -> Any:
        res = _optimize.minimize(
            lambda x: np.sum((x - k) ** 2 + 0.1 * x**4),
            np.zeros(np.size(k)),
            jac=lambda x: 2.0 * (x - k) + 0.4 * x**3,
            hess=lambda x: np.diag(2.0 + 1.2 * x**2),
            method="trust-exact",
            options={"gtol": 1e-12},
        )
        return res.x

    def _root_scalar(k: Any) -> Any:
        sol = _optimize.root_scalar(_cubic, args=(k,), bracket=(0.0, 2.0), xtol=1e-14)
        return sol.root

    def _root(k: Any) -> Any:
        sol = _optimize.root(lambda x: x * x + k * x - 1.0, np.ones(np.size(k)), tol=1e-13)
        return sol.x

    def _minimize_scalar(k: Any) -> Any:
        res = _optimize.minimize_scalar(lambda x: (x - k) ** 2 + 0.1 * x**4, tol=1e-12)
        return res.x

    def _least_squares(k: Any) -> Any:
        res = _optimize.least_squares(  # (linear: the solver's answer is exact)
            lambda p: np.array([p[0] - k, p[1] + 2.0 * p[0], p[0] + p[1] - k * k]),
            np.array([1.0, 0.5]),
            xtol=1e-15,
            ftol=1e-15,
            gtol=1e-15,
        )
        return res.x

    _XS = np.linspace(0.0, 1.0, 6)

    def _curve_fit(y: Any) -> Any:
        popt, _ = _optimize.curve_fit(lambda x, a, b: a + b * x, _XS, y, p0=(1.0, 1.0))
        return popt

    for _name, _fn, _shapes in [
        ("root_scalar", _root_scalar, {"scalar": (None,)}),
        ("root", _root, {"vector": ((3,),)}),
        ("odeint", _odeint, {"scalar": (None,), "vector": ((3,),)}),
        ("solve_ivp", _solve_ivp, {"scalar": (None,), "vector": ((3,),)}),
        ("quad", _quad, {"scalar": (None,)}),
        ("quad_vec", _quad_vec, {"vector": ((3,),)}),
        ("fixed_quad", _fixed_quad, {"scalar": (None,)}),
        ("brentq", _brentq, {"scalar": (None,)}),
        ("brenth", _brenth, {"scalar": (None,)}),
        ("ridder", _ridder, {"scalar": (None,)}),
        ("bisect", _bisect, {"scalar": (None,)}),
        ("toms748", _toms748, {"scalar": (None,)}),
        ("newton", _newton, {"scalar": (None,)}),
        ("fsolve", _fsolve, {"vector": ((3,),)}),
        ("minimize", _minimize, {"vector": ((3,),)}),
    ]:
        shaped(_name, _fn, _shapes, POS)
    # (optimizers stop within their tolerances: differences judge them at a larger step)
    for _name, _fn, _shapes in [
        ("minimize_scalar", _minimize_scalar, {"scalar": (None,)}),
        ("least_squares", _least_squares, {"scalar": (None,)}),
        ("curve_fit", _curve_fit, {"vector": ((6,),)}),
    ]:
        shaped(_name, _fn, _shapes, POS, check={"eps": 1e-4, "rtol": 1e-3})


# --------------------------------------------------------------------------- the tests


def _pytest_params(params: list[Param]) -> list[Any]:
    out = []
    for p in params:
        marks = [pytest.mark.xfail(strict=True, reason=p.xfail)] if p.xfail else []
        out.append(pytest.param(p, id=p.id, marks=marks))
    return out


def test_ids_are_unique() -> None:
    ids = [p.id for p in PARAMS]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


@pytest.mark.parametrize("param", _pytest_params(PARAMS))
def test_rule(param: Param) -> None:
    args = param.args()
    with np.errstate(
        divide="raise", invalid="raise", over="raise"
    ):  # an inf/nan in the checked region means a bad domain or a bug
        check_grads(param.fn, *args, **(param.check or {}))


def _kind(value: Any) -> tuple[type, Any, tuple[int, ...]]:
    return type(value), getattr(value, "dtype", None), np.shape(value)


@pytest.mark.parametrize("param", _pytest_params([p for p in PARAMS if p.xfail is None]))
def test_cotangents_have_the_type_of_their_argument(param: Param) -> None:
    args = param.args()
    out, pullback = adgen.vjp(param.fn, *args)
    cotangents = pullback(np.ones_like(out) if isinstance(out, np.ndarray) else type(out)(1.0))
    for a, ct in zip(args, cotangents, strict=True):
        if isinstance(a, (float, np.floating)) or (
            isinstance(a, np.ndarray) and a.dtype.kind == "f"
        ):
            assert _kind(ct) == _kind(a)
        else:
            assert ct is None


def _r(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return np.random.default_rng(sum(shape) + 7).standard_normal(shape).astype(dtype)


# (id, scalar-valued function, arguments): every argument is differentiated.
GRAD_CASES = [
    ("sin-sum-float", rc.scalar_sin_sum, lambda: (0.7,)),
    ("sin-sum-float64-scalar", rc.scalar_sin_sum, lambda: (np.float64(0.7),)),
    ("sin-sum-float32-scalar", rc.scalar_sin_sum, lambda: (F32(0.7),)),
    ("sin-sum-0d", rc.scalar_sin_sum, lambda: (np.array(0.7),)),
    ("sin-sum-0d-float32", rc.scalar_sin_sum, lambda: (np.array(0.7, F32),)),
    ("sin-sum-(3,4)", rc.scalar_sin_sum, lambda: (_r(3, 4),)),
    ("sin-sum-(3,4)-float32", rc.scalar_sin_sum, lambda: (_r(3, 4, dtype=F32),)),
    ("math-float", rc.scalar_math, lambda: (0.7,)),
    ("math-float64-scalar", rc.scalar_math, lambda: (np.float64(0.7),)),
    ("math-float32-scalar", rc.scalar_math, lambda: (F32(0.7),)),
    ("math-0d", rc.scalar_math, lambda: (np.array(0.7),)),
    ("broadcast-float", rc.scalar_broadcast, lambda: (0.7, -0.4)),
    ("broadcast-float32-scalar", rc.scalar_broadcast, lambda: (F32(0.7), F32(-0.4))),
    ("broadcast-0d", rc.scalar_broadcast, lambda: (np.array(0.7), np.array(-0.4))),
    ("broadcast-(3,1)x(1,4)", rc.scalar_broadcast, lambda: (_r(3, 1), _r(1, 4))),
    (
        "broadcast-(3,4)x(4,)-float32",
        rc.scalar_broadcast,
        lambda: (_r(3, 4, dtype=F32), _r(4, dtype=F32)),
    ),
    ("broadcast-floatx(3,4)-float32", rc.scalar_broadcast, lambda: (0.3, _r(3, 4, dtype=F32))),
    ("broadcast-float32-scalarx(3,4)", rc.scalar_broadcast, lambda: (F32(0.3), _r(3, 4))),
    (
        "broadcast-0dx(3,4)-float32",
        rc.scalar_broadcast,
        lambda: (np.array(0.3, F32), _r(3, 4, dtype=F32)),
    ),
    ("matmul-(3,4)@(4,2)", rc.scalar_matmul, lambda: (_r(3, 4), _r(4, 2))),
    (
        "matmul-(3,4)@(4,2)-float32",
        rc.scalar_matmul,
        lambda: (_r(3, 4, dtype=F32), _r(4, 2, dtype=F32)),
    ),
    ("matmul-(4,)@(4,)-float32", rc.scalar_matmul, lambda: (_r(4, dtype=F32), _r(4, dtype=F32))),
    ("matmul-(2,3,4)@(4,)", rc.scalar_matmul, lambda: (_r(2, 3, 4), _r(4))),
    ("reductions-(3,4)", rc.scalar_reductions, lambda: (_r(3, 4),)),
    ("reductions-(3,4)-float32", rc.scalar_reductions, lambda: (_r(3, 4, dtype=F32),)),
    ("index-(3,4)", rc.scalar_index, lambda: (_r(3, 4),)),
    ("index-(4,)-float32", rc.scalar_index, lambda: (_r(4, dtype=F32),)),
]


@pytest.mark.parametrize(
    ("fn", "make_args"), [pytest.param(fn, make, id=name) for name, fn, make in GRAD_CASES]
)
def test_grad_has_type_dtype_and_shape_of_argument(
    fn: Callable[..., Any], make_args: Callable[[], tuple[Any, ...]]
) -> None:
    args = make_args()
    wrt = tuple(range(len(args)))
    grads = adgen.grad(fn, wrt=wrt)(*args)
    args64 = [np.asarray(a, np.float64) if isinstance(a, np.ndarray) else float(a) for a in args]
    grads64 = adgen.grad(fn, wrt=wrt)(*args64)
    low = any(getattr(a, "dtype", None) == F32 for a in args)
    for a, g, g64 in zip(args, grads, grads64, strict=True):
        assert type(g) is type(a), (type(g), type(a))
        assert np.shape(g) == np.shape(a)
        if isinstance(a, (np.ndarray, np.generic)):
            assert g.dtype == a.dtype
        tol = 1e-4 if low else 1e-12
        np.testing.assert_allclose(np.asarray(g, np.float64), g64, rtol=tol, atol=tol)


# ------------------------------------------------ adgen's helpers for lists of derivatives

shaped(
    "list-of-derivatives-helpers",
    rc.case_list_of_derivatives_helpers,
    {"vector": ((3,),), "matrix": ((2, 3),)},
    ANY,
)
shaped(
    "tuple-of-a-list-known-when-the-code-runs",
    rc.case_tuple_of_a_list_known_when_the_code_runs,
    {"vector": ((3,),), "matrix": ((2, 3),)},
    ANY,
)

# ------------------------------------------------------------------ coverage of the registry


def _used_primitives(fns: list[Callable[..., Any]]) -> set[int]:
    used = set()
    for fn in fns:
        lowered = adgen.trace(fn).function
        for function in (lowered, optimize(lowered)):  # x * x is a square once optimized
            for stmt in function.statements():
                if isinstance(stmt, ir.Assign):
                    used.add(id(stmt.prim))
    return used


def _attribute_names() -> set[str]:
    names = {n for n in dir(np.ndarray) if not n.startswith("_")}
    names |= set(getattr(_registry, "_ATTRIBUTES", {}))
    return {n for n in names if lookup_attribute(n) is not None}


def _checked_functions() -> list[Callable[..., Any]]:
    """The hand-written cases here and the cases made from the registry's examples."""
    fns = {id(p.fn): p.fn for p in PARAMS if p.xfail is None}
    fns.update({id(f): f for f in map(case_function, registry_cases())})
    return list(fns.values())


@functools.cache
def _used_by_the_cases() -> frozenset[int]:
    """The primitives the cases use (once per process: tracing some four thousand functions
    takes seconds; the registry's objects live as long as the process)."""
    return frozenset(_used_primitives(_checked_functions()))


def _solvers_derivative_helper(fn: Any, p: Any) -> bool:
    """A helper that only a solver's derivative code calls (the wrappers in its place are
    in the primal code of the solver cases above), or one whose every template refuses."""
    return (solvers_helper(fn) and not solvers_wrapper(fn)) or refuses_every_mode(p)


def test_every_registered_function_has_a_case() -> None:
    """Each differentiable object in the registry: np.max *and* np.min, np.divide *and* ``/``..."""
    used = _used_by_the_cases()
    missing = sorted(
        p.name
        for fn, p in registered()
        if p.differentiable and id(p) not in used and not _solvers_derivative_helper(fn, p)
    )
    assert not missing, (
        f"registered functions with no case in tests/test_rules.py and no example: {missing}"
    )


def test_every_rule_has_a_case() -> None:
    """Rule level: a registration (shared templates) is covered if any of its objects is."""
    used = _used_by_the_cases()
    rules: dict[int, list[Any]] = {}
    for fn, p in registered():
        if p.differentiable and not _solvers_derivative_helper(fn, p):
            rules.setdefault(id(p.vjp), []).append(p)
    missing = sorted(ps[0].name for ps in rules.values() if not any(id(p) in used for p in ps))
    assert not missing, f"rules with no case: {missing}"


def test_every_attribute_rule_has_a_case() -> None:
    used = _used_by_the_cases()
    attrs = _attribute_names()
    assert "T" in attrs
    missing = sorted(
        a
        for a in attrs
        if lookup_attribute(a).differentiable and id(lookup_attribute(a)) not in used
    )
    assert not missing, f"attribute rules with no case: {missing}"


def test_every_case_is_checked() -> None:
    """A case function defined in rule_cases.py but mapped to no input would hide a gap."""
    in_table = {id(p.fn) for p in PARAMS}
    defined = [f for n, f in inspect.getmembers(rc, inspect.isfunction) if n.startswith("case_")]
    unchecked = sorted(f.__name__ for f in defined if id(f) not in in_table)
    assert not unchecked, unchecked


def test_coverage_check_sees_a_new_rule() -> None:
    """Registering a rule for a function with no case makes the coverage test fail."""
    from adgen.rules import rule

    _used_by_the_cases()  # (what the cases use, read before the registry changes)
    saved = dict(_registry._REGISTRY)
    try:

        @rule(np.arctan2, elementwise=True)
        def arctan2(x1, x2):
            def jvp_x1(d):
                return d * x2 / (x1 * x1 + x2 * x2)

            def jvp_x2(d):
                return -d * x1 / (x1 * x1 + x2 * x2)

            def vjp_x1(g):
                return g * x2 / (x1 * x1 + x2 * x2)

            def vjp_x2(g):
                return -g * x1 / (x1 * x1 + x2 * x2)

        with pytest.raises(AssertionError, match="np.arctan2"):
            test_every_registered_function_has_a_case()
        with pytest.raises(AssertionError, match="np.arctan2"):
            test_every_rule_has_a_case()
    finally:
        _registry._REGISTRY.clear()
        _registry._REGISTRY.update(saved)


# --------------------------------------------------------------------------- conventions at kinks


def test_abs_at_zero_is_zero() -> None:
    assert adgen.grad(rc.kink_abs)(0.0) == 0.0
    assert adgen.jvp(rc.kink_abs, (0.0,), (1.0,))[1] == 0.0
    assert adgen.grad(rc.kink_math_fabs)(0.0) == 0.0
    assert adgen.jvp(rc.kink_math_fabs, (0.0,), (1.0,))[1] == 0.0
    x = np.array([-2.0, 0.0, 3.0])
    np.testing.assert_array_equal(adgen.grad(rc.kink_np_abs)(x), [-1.0, 0.0, 1.0])
    assert adgen.jvp(rc.kink_np_abs, (x,), (np.ones(3),))[1] == 0.0
    np.testing.assert_array_equal(adgen.vjp(rc.case_abs, x)[1](np.ones(3))[0], [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(adgen.jvp(rc.case_abs, (x,), (np.ones(3),))[1], [-1.0, 0.0, 1.0])


@pytest.mark.parametrize("fn", [rc.kink_maximum, rc.kink_minimum], ids=["maximum", "minimum"])
def test_maximum_minimum_split_ties_evenly(fn: Callable[..., Any]) -> None:
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 5.0, 0.0])
    gx, gy = adgen.grad(fn, wrt=(0, 1))(x, y)
    if fn is rc.kink_maximum:
        np.testing.assert_array_equal(gx, [0.5, 0.0, 1.0])
        np.testing.assert_array_equal(gy, [0.5, 1.0, 0.0])
    else:
        np.testing.assert_array_equal(gx, [0.5, 1.0, 0.0])
        np.testing.assert_array_equal(gy, [0.5, 0.0, 1.0])
    # forward mode, one tangent at a time
    e0 = np.array([1.0, 0.0, 0.0])
    assert adgen.jvp(fn, (x, y), (e0, None))[1] == 0.5
    assert adgen.jvp(fn, (x, y), (None, e0))[1] == 0.5
    assert adgen.jvp(fn, (x, y), (e0, e0))[1] == 1.0
    # scalar Python floats, tied
    assert adgen.grad(fn, wrt=(0, 1))(2.0, 2.0) == (0.5, 0.5)


def test_max_min_split_ties_evenly() -> None:
    x = np.array([1.0, 3.0, 3.0, 2.0])
    np.testing.assert_array_equal(adgen.grad(rc.kink_max)(x), [0.0, 0.5, 0.5, 0.0])
    np.testing.assert_array_equal(adgen.grad(rc.kink_min)(-x), [0.0, 0.5, 0.5, 0.0])
    t = np.array([10.0, 2.0, 4.0, 100.0])
    assert adgen.jvp(rc.kink_max, (x,), (t,))[1] == 3.0
    assert adgen.jvp(rc.kink_min, (-x,), (t,))[1] == 3.0
    # along an axis: row 0 has a three-way tie, row 1 a single maximum
    m = np.array([[2.0, 2.0, 2.0], [0.0, 1.0, -1.0]])
    np.testing.assert_allclose(
        adgen.grad(rc.kink_max_axis)(m), [[1 / 3, 1 / 3, 1 / 3], [0.0, 1.0, 0.0]]
    )
    # reverse mode through vjp with a non-unit cotangent
    _, pullback = adgen.vjp(rc.case_max_axis0, np.array([[1.0, 4.0], [1.0, 3.0]]))
    np.testing.assert_array_equal(pullback(np.array([2.0, 10.0]))[0], [[1.0, 10.0], [1.0, 0.0]])


def test_max_ties_along_an_axis_forward() -> None:
    m = np.array([[2.0, 2.0, 2.0], [0.0, 1.0, -1.0]])
    tm = np.array([[3.0, 6.0, 9.0], [5.0, 7.0, 11.0]])
    assert adgen.jvp(rc.kink_max_axis, (m,), (tm,))[1] == pytest.approx(6.0 + 7.0)


def test_prod_with_zeros_is_exact() -> None:
    x = np.array([2.0, 0.0, 3.0, 4.0])
    np.testing.assert_array_equal(adgen.grad(rc.kink_prod)(x), [0.0, 24.0, 0.0, 0.0])
    assert adgen.jvp(rc.kink_prod, (x,), (np.array([1.0, 1.0, 1.0, 1.0]),))[1] == 24.0
    assert adgen.jvp(rc.kink_prod, (x,), (np.array([1.0, 0.0, 1.0, 1.0]),))[1] == 0.0
    x2 = np.array([2.0, 0.0, 3.0, 0.0])
    np.testing.assert_array_equal(adgen.grad(rc.kink_prod)(x2), [0.0, 0.0, 0.0, 0.0])
    assert adgen.jvp(rc.kink_prod, (x2,), (np.ones(4),))[1] == 0.0
    _, pullback = adgen.vjp(rc.case_prod_axis0, np.array([[2.0, 0.0], [0.0, 0.0], [5.0, 3.0]]))
    np.testing.assert_array_equal(
        pullback(np.array([1.0, 1.0]))[0], [[0.0, 0.0], [10.0, 0.0], [0.0, 0.0]]
    )
    _, out_dot = adgen.jvp(
        rc.case_prod_axis0,
        (np.array([[2.0, 0.0], [0.0, 1.0], [5.0, 3.0]]),),
        (np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]),),
    )
    np.testing.assert_array_equal(out_dot, [10.0, 3.0])


def test_sqrt_at_zero_is_inf() -> None:
    with np.errstate(divide="ignore"):
        assert adgen.grad(rc.kink_sqrt)(0.0) == math.inf
        _, pullback = adgen.vjp(rc.kink_sqrt, np.array([0.0, 4.0]))
        np.testing.assert_array_equal(pullback(np.ones(2))[0], [math.inf, 0.25])
        assert adgen.jvp(rc.kink_sqrt, (np.array([0.0, 4.0]),), (np.ones(2),))[1].tolist() == [
            math.inf,
            0.25,
        ]


def test_math_sqrt_at_zero_is_inf() -> None:
    assert adgen.grad(rc.kink_math_sqrt)(0.0) == math.inf


def test_where_with_broadcasting_condition() -> None:
    c = np.array([[True], [False]])
    x = np.array([[1.0, 2.0, 3.0]])
    y = np.array([10.0, 20.0, 30.0])
    gx, gy = adgen.grad(rc.kink_where, wrt=(1, 2))(c, x, y)
    np.testing.assert_array_equal(gx, [[1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(gy, [1.0, 1.0, 1.0])
    c3 = np.array([[True], [False], [True]])
    gx, gy = adgen.grad(rc.kink_where, wrt=(1, 2))(c3, x, y)
    np.testing.assert_array_equal(gx, [[2.0, 2.0, 2.0]])
    np.testing.assert_array_equal(gy, [1.0, 1.0, 1.0])
    gx, gy = adgen.grad(rc.kink_where, wrt=(1, 2))(c3, 1.5, y)
    assert gx == 6.0 and type(gx) is float
    np.testing.assert_array_equal(gy, [1.0, 1.0, 1.0])
    _, out_dot = adgen.jvp(
        rc.case_where_cond, (c, x, y), (None, np.array([[1.0, 2.0, 3.0]]), np.ones(3))
    )
    np.testing.assert_array_equal(out_dot, [[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])


def test_clip_bounds_are_inclusive() -> None:
    x = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    gx, glo, ghi = adgen.grad(rc.kink_clip, wrt=(0, 1, 2))(x, -0.5, 0.5)
    np.testing.assert_array_equal(gx, [0.0, 1.0, 1.0, 1.0, 0.0])
    assert (glo, ghi) == (1.0, 1.0)


def test_power_at_zero_base() -> None:
    gx, gy = adgen.grad(rc.kink_pow_zero_base, wrt=(0, 1))(0.0, 2.0)
    assert (gx, gy) == (0.0, 0.0)
    gx, gy = adgen.grad(rc.kink_pow_zero_base, wrt=(0, 1))(0.0, 1.0)
    assert (gx, gy) == (1.0, 0.0)
    _, pullback = adgen.vjp(rc.case_np_power, np.array([0.0, 2.0]), np.array([2.0, 3.0]))
    gx, gy = pullback(np.ones(2))
    np.testing.assert_array_equal(gx, [0.0, 12.0])
    np.testing.assert_allclose(gy, [0.0, 8.0 * math.log(2.0)])


def test_nondifferentiable_functions_have_zero_derivative() -> None:
    x = np.array([-1.3, 0.4, 2.7])
    np.testing.assert_array_equal(adgen.grad(rc.kink_nondiff)(x), np.zeros(3))
    assert adgen.jvp(rc.kink_nondiff, (x,), (np.ones(3),))[1] == 0.0


# ------------------------------------------------- array methods and builtins, every form

# (id, function, argument shapes): each method form of issue 3, checked in both modes.
METHOD_FORMS = [
    ("x.T", rc.method_T, ((3, 4),)),
    ("x.shape-x.ndim-x.size", rc.method_shape, ((3, 4),)),
    ("x.astype(x.dtype)", rc.method_dtype, ((3, 4),)),
    ("x.sum()", rc.method_sum, ((3, 4),)),
    ("x.sum(0)", rc.method_sum_axis, ((3, 4),)),
    ("x.sum(axis=1,keepdims=True)", rc.method_sum_axis_keepdims, ((3, 4),)),
    ("x.mean(axis=-1)", rc.method_mean, ((3, 4),)),
    ("x.max(axis=0)", rc.method_max, ((3, 4),)),
    ("x.min()", rc.method_min, ((3, 4),)),
    ("x.prod(1)", rc.method_prod, ((3, 4),)),
    ("x.dot(y)", rc.method_dot, ((3, 4), (4, 2))),
    ("x.reshape(2,6)", rc.method_reshape_args, ((3, 4),)),
    ("x.reshape((2,6))", rc.method_reshape_tuple, ((3, 4),)),
    ("x.reshape(-1)", rc.method_reshape_flat, ((3, 4),)),
    ("x.transpose(1,0)", rc.method_transpose_args, ((3, 4),)),
    ("x.transpose((1,0))", rc.method_transpose_tuple, ((3, 4),)),
    ("x.transpose()", rc.method_transpose, ((3, 4),)),
    ("x.ravel()", rc.method_ravel, ((3, 4),)),
    ("x.flatten()", rc.method_flatten, ((3, 4),)),
    ("x.copy()", rc.method_copy, ((3, 4),)),
    ("x.astype(np.float64)", rc.method_astype, ((3, 4),)),
    ("x.clip(lo,hi)", rc.method_clip, ((3, 4),)),
    ("x.trace()", rc.method_trace, ((4, 4),)),
    ("x.squeeze()", rc.method_squeeze, ((3, 4),)),
    ("x.squeeze(1)", rc.method_squeeze_axis, ((4,),)),
    ("chain", rc.method_chain, ((3, 4),)),
]


@pytest.mark.parametrize("dtype", [np.float64, F32], ids=["float64", "float32"])
@pytest.mark.parametrize(
    ("fn", "shapes"), [pytest.param(fn, shapes, id=name) for name, fn, shapes in METHOD_FORMS]
)
def test_method_form(fn: Callable[..., Any], shapes: tuple[Any, ...], dtype: Any) -> None:
    dom = Dom(-1.5, 1.5, avoid=(-0.5, 0.0, 0.5), gap=0.05)
    rng = np.random.default_rng(zlib.crc32(fn.__name__.encode()))
    args = [dom.draw(rng, s, dtype) for s in shapes]
    check_grads(fn, *args)
    out, pullback = adgen.vjp(fn, *args)
    for a, ct in zip(args, pullback(np.ones_like(out)), strict=True):
        assert _kind(ct) == _kind(a)


def _raw_derivatives(fn: Callable[..., Any], *args: Any) -> tuple[Any, tuple[Any, ...]]:
    """The generated code's own results (not cast by the API): forward tangent, cotangents."""
    from adgen.api import _params, _scalars
    from adgen.pipeline import derivative

    params = _params(fn)
    wrt = tuple(params)
    scalars = _scalars(params, args)
    out, out_dot = derivative(fn, "forward", wrt, scalars).compiled(*args, *args)
    _, cts = derivative(fn, "reverse", wrt, scalars).compiled(*args, np.ones_like(out))
    return out_dot, cts


@pytest.mark.parametrize(
    "fn",
    [
        rc.case_ravel_method,
        rc.case_flatten_method,
        rc.case_copy_method,
        rc.case_copy,
        rc.case_squeeze_method,
        rc.case_trace_method,
        rc.case_trace_axes,
        rc.case_clip_method,
        rc.case_astype_float32,
        rc.case_builtin_sum,
        rc.case_builtin_float_times,
    ],
    ids=lambda f: f.__name__,
)
def test_float32_stays_float32_inside_generated_code(fn: Callable[..., Any]) -> None:
    x = _r(1, 3, 3, dtype=F32) if fn is not rc.case_trace_axes else _r(2, 3, 3, dtype=F32)
    out_dot, (x_bar,) = _raw_derivatives(fn, x)
    assert np.result_type(out_dot) == F32
    assert np.result_type(x_bar) == F32
    assert np.shape(x_bar) == x.shape


def test_method_calls_are_emitted_as_method_calls() -> None:
    src = adgen.source(rc.method_flatten, mode="forward") + adgen.source(rc.method_copy)
    assert "x.flatten()" in src and "x.copy()" in src
    src = adgen.source(rc.case_astype_float32, mode="forward")
    assert "x.astype(np.float32)" in src
    assert "x_dot, dtype=np.float32" in src and "np.issubdtype" not in src
    assert "np.issubdtype" not in adgen.source(rc.case_astype_float32)


def test_astype_to_integer_has_zero_derivative() -> None:
    """Decided when the code is generated for a constant dtype, at run time otherwise."""
    x = np.array([-1.7, 0.4, 2.3])
    trunc = np.trunc(x)
    np.testing.assert_array_equal(adgen.grad(lambda_free_int_sum)(x), trunc)
    _, out_dot = adgen.jvp(rc.case_astype_int, (x,), (np.ones(3),))
    np.testing.assert_array_equal(out_dot, trunc)
    (ct,) = adgen.vjp(rc.case_astype_int, x)[1](np.ones(3))
    np.testing.assert_array_equal(ct, trunc)
    for mode in ("forward", "reverse"):
        src = adgen.source(rc.case_astype_int, mode=mode)
        assert "np.issubdtype" not in src and "np.asarray" not in src  # no cast of a derivative
    # bool: the same
    np.testing.assert_array_equal(adgen.grad(lambda_free_bool_sum)(x), np.ones(3))
    # a dtype known only at run time: an integer array's dtype
    ints = np.array([1, 2, 3])
    (gx, gy) = adgen.vjp(rc.case_astype_like, x, ints)[1](np.ones(3))
    np.testing.assert_array_equal(gx, np.zeros(3))
    assert gy is None
    _, out_dot = adgen.jvp(rc.case_astype_like, (x, ints), (np.ones(3), None))
    np.testing.assert_array_equal(out_dot, np.zeros(3))
    # ... and a float dtype known only at run time passes the derivative through
    y = np.array([1.0, 2.0, 3.0], F32)
    gx, gy = adgen.vjp(rc.case_astype_like, x, y)[1](np.ones(3, F32))
    np.testing.assert_allclose(gx, y)
    assert "np.issubdtype(" in adgen.source(rc.case_astype_like)


def lambda_free_int_sum(x: Any) -> Any:
    return np.sum(x.astype(np.int64) * x)


def lambda_free_bool_sum(x: Any) -> Any:
    return np.sum(x.astype(np.bool_) + x)


def test_builtin_max_min_split_ties_evenly() -> None:
    assert adgen.grad(rc.case_builtin_max, wrt=(0, 1))(2.0, 2.0) == (0.5, 0.5)
    assert adgen.grad(rc.case_builtin_min, wrt=(0, 1))(2.0, 2.0) == (0.5, 0.5)
    assert adgen.grad(rc.case_builtin_max, wrt=(0, 1))(3.0, 2.0) == (1.0, 0.0)
    assert adgen.grad(rc.case_builtin_min, wrt=(0, 1))(3.0, 2.0) == (0.0, 1.0)
    assert adgen.jvp(rc.case_builtin_max, (2.0, 2.0), (1.0, 3.0))[1] == 2.0
    assert adgen.jvp(rc.case_builtin_min, (1.0, 2.0), (1.0, 3.0))[1] == 1.0


def test_builtin_max_of_an_array_is_its_largest_entry() -> None:
    def f(x):
        return max(x)  # Python compares the entries: the largest one's derivative (ties share)

    assert adgen.grad(f)(np.array([1.0, 2.0])).tolist() == [0.0, 1.0]
    assert adgen.grad(f)(np.array([2.0, 1.0, 2.0])).tolist() == [0.5, 0.0, 0.5]
    assert adgen.jvp(f, (np.array([1.0, 2.0]),), (np.array([3.0, 5.0]),))[1] == 5.0


def test_float_cotangent_has_the_shape_and_dtype_of_its_argument() -> None:
    for x in (np.array(0.5, F32), np.array(0.5), F32(0.5), 0.5):
        _, (ct,) = _raw_derivatives(rc.case_builtin_float, x)
        assert np.shape(ct) == np.shape(x) and np.result_type(ct) == np.result_type(x)
        out_dot, _ = _raw_derivatives(rc.case_builtin_float, x)
        assert type(out_dot) is float
        assert adgen.grad(rc.case_builtin_float)(x) == 1.0


def test_builtin_sum_is_a_sum_over_the_first_axis() -> None:
    x = _r(3, 4)
    np.testing.assert_array_equal(
        adgen.vjp(rc.case_builtin_sum, x)[1](np.arange(4.0))[0],
        np.broadcast_to(np.arange(4.0), (3, 4)),
    )
    np.testing.assert_allclose(adgen.jvp(rc.case_builtin_sum, (x,), (x,))[1], np.sum(x, axis=0))


def test_builtin_sum_differentiates_its_start() -> None:
    def f(x, s):
        return np.sum(sum(x, s) * np.array([1.0, 2.0]))

    x, s = np.arange(6.0).reshape(3, 2), 0.5
    gx, gs = adgen.grad(f, wrt=(0, 1))(x, s)
    np.testing.assert_array_equal(gx, np.broadcast_to([1.0, 2.0], (3, 2)))
    assert gs == 3.0  # s broadcasts against the rows: its cotangent is summed back
    _, out_dot = adgen.jvp(f, (x, s), (np.ones((3, 2)), 2.0))
    assert out_dot == pytest.approx(3 * 3.0 + 2.0 * 3.0)
