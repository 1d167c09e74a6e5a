"""Functions whose results carry no derivative: comparisons, rounding, shapes, constructors.

Their derivative is exactly zero wherever it exists (piecewise-constant functions, index
and boolean results, constructors from constants). Some functions whose results are
constant in *some* arguments only are registered with rules that refuse a differentiated
value where it would matter, never a silent zero:

* ``np.bincount(x, weights)`` is differentiated w.r.t. ``weights`` (a scatter-add);
* ``np.full(shape, fill_value)`` and ``np.full_like(a, fill_value)`` w.r.t. ``fill_value``;
* ``np.arange``, ``np.logspace`` and ``np.geomspace`` make their values from their
  arguments, so a differentiated ``start``, ``stop`` or ``step`` is refused
  (``np.linspace`` is linear in ``start`` and ``stop``: it has their derivatives);
* ``np.random.normal(loc, scale)``, ``uniform(low, high)``, ``choice(a)``,
  ``permutation(x)`` draw constants, but a sample depends on those arguments (a
  reparameterisation adgen does not guess), so a differentiated argument is refused:
  write ``loc + scale * np.random.standard_normal(shape)`` instead.

Not registered on purpose: ``np.unique`` (its values are a differentiable function of
its input), ``np.histogram`` (its bin edges follow the data range).
"""

import operator
from typing import Any

import numpy as np

from adgen.rules import registry
from adgen.rules import runtime as rt
from adgen.rules.registry import (
    lookup,
    method_function,
    method_rule,
    methods,
    nondifferentiable,
    nondifferentiable_attributes,
    rule,
)
from adgen.rules.samples import example

nondifferentiable(
    registry.contained,
    registry.not_contained,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
    operator.is_,
    operator.is_not,
    operator.not_,
    operator.invert,
    operator.or_,
    operator.and_,
    operator.xor,
    operator.floordiv,
    np.floor_divide,
    np.floor,
    np.ceil,
    np.round,
    np.rint,
    np.trunc,
    np.sign,
    np.shape,
    np.ndim,
    np.size,
    np.broadcast_shapes,
    len,
    int,
    range,
    np.argmax,
    np.argmin,
    np.argsort,
    np.isnan,
    np.isfinite,
    np.isinf,
    np.zeros,
    np.ones,
    np.empty,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.eye,
    np.identity,
    np.greater,
    np.greater_equal,
    np.less,
    np.less_equal,
    np.equal,
    np.not_equal,
    np.logical_and,
    np.logical_or,
    np.logical_not,
    np.all,
    np.any,
    np.isclose,
    np.allclose,
    np.array_equal,
    np.count_nonzero,
    np.may_share_memory,  # (a test of memory: scikit-learn's check_array(copy=True))
    np.shares_memory,
    # rounding, signs and classification
    # (np.signbit, np.iscomplex, np.isreal: with np.imag, adgen.rules.elementwise)
    np.around,
    np.spacing,
    np.isneginf,
    np.isposinf,
    np.iscomplexobj,
    np.isrealobj,
    np.isscalar,
    np.array_equiv,
    np.isin,
    # indices and searching
    np.nanargmax,
    np.nanargmin,
    np.argpartition,
    np.lexsort,
    np.searchsorted,
    np.digitize,
    np.nonzero,
    np.flatnonzero,
    np.argwhere,
    np.indices,
    np.unravel_index,
    np.ravel_multi_index,
    np.tril_indices,
    np.triu_indices,
    np.tril_indices_from,
    np.triu_indices_from,
    np.diag_indices,
    np.diag_indices_from,
    # constructors from constants
    np.tri,
    # logical and bitwise operations, integer arithmetic
    np.logical_xor,
    np.bitwise_and,
    np.bitwise_or,
    np.bitwise_xor,
    np.invert,
    np.left_shift,
    np.right_shift,
    np.gcd,
    np.lcm,
    # integer and boolean casts (np.int64(x) of a float: piecewise constant)
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.bool_,
    # complex scalar types: constants only (``complex(x, y)`` has a rule, in pybuiltins)
    np.complex128,
    np.complex64,
    np.clongdouble,
    # dtypes
    np.result_type,
    np.promote_types,
    np.can_cast,
    np.issubdtype,
    *([np.isdtype] if hasattr(np, "isdtype") else []),
    np.iterable,
    # random numbers that take only shapes (and a seed)
    np.random.seed,
    np.random.rand,
    np.random.randn,
    np.random.randint,
    np.random.random,
    np.random.random_sample,
    np.random.standard_normal,
    np.random.default_rng,
)
nondifferentiable_attributes("shape", "ndim", "size", "dtype")
# a data type's (`X.dtype.kind == "c"`, `X.dtype.itemsize`, `X.dtype.char`): read as the code runs
nondifferentiable_attributes("kind", "itemsize", "char")
# an array's memory flags (`if not w.flags.contiguous: w = w.copy()`): read as the code runs
nondifferentiable_attributes("flags", "contiguous", "c_contiguous", "f_contiguous", "writeable")
methods(
    argmax=np.argmax,
    argmin=np.argmin,
    argsort=np.argsort,
    argpartition=np.argpartition,
    nonzero=np.nonzero,
    searchsorted=np.searchsorted,
    all=np.all,
    any=np.any,
    round=np.round,
)


@rule(
    np.bincount,
    examples=[
        example("np.bincount(np.array([0, 2, 2, 1]), weights=w)", w=(4,), f32=True),
        example("np.bincount(np.array([3, 0, 3]), w, minlength=6) * 2.0", w=(3,)),
    ],
)
def bincount(ans, x, weights=None, minlength=0):
    """Counts of ``x`` (no derivative) or sums of ``weights`` per bin: linear in ``weights``.

    NumPy returns float64 sums whatever the weights' dtype; the cotangent keeps theirs."""

    def jvp_weights(dw):
        return np.bincount(x, weights=dw, minlength=np.size(ans))

    def vjp_weights(g):
        return g[x].astype(np.result_type(weights))


@rule(np.ndarray, examples=[example("np.ndarray((2, 3)).shape[0] * a", a=(3,))])
def ndarray(ans, shape, dtype=None, order="C"):
    """An array of ``shape`` whose values are whatever the memory held (as ``np.empty``): no
    derivative. ``buffer=`` (a view of another array's memory) is not in the signature, so
    adgen refuses it by name rather than taking the result for a new array."""


@rule(
    np.full,
    examples=[
        example("np.full((2, 3), s) * a", s=None, a=(3,)),
        example("np.full((2, 3), v)", v=(3,)),
    ],
)
def full(ans, shape, fill_value, dtype=None, order="C"):
    """An array of ``shape`` filled with ``fill_value`` (broadcast): linear in it."""

    def jvp_fill_value(d):
        return (
            rt.zeros_like(ans) + d if np.issubdtype(ans.dtype, np.floating) else rt.zeros_like(ans)
        )

    def vjp_fill_value(g):
        return (
            rt.unbroadcast(g, fill_value)
            if np.issubdtype(ans.dtype, np.floating)
            else rt.zeros_like(fill_value)
        )


@rule(
    np.full_like,
    examples=[
        example("np.full_like(a, s) * a", a=(3,), s=None),
        example("np.full_like(a, v)", a=(2, 3), v=(3,)),
    ],
)
def full_like(ans, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``a``'s shape (or ``shape``) filled with ``fill_value``: linear in it, constant in
    ``a``."""

    def jvp_a(da):
        return rt.zeros_like(ans)

    def vjp_a(g):
        return rt.zeros_like(a)

    def jvp_fill_value(d):
        return (
            rt.zeros_like(ans) + d if np.issubdtype(ans.dtype, np.floating) else rt.zeros_like(ans)
        )

    def vjp_fill_value(g):
        return (
            rt.unbroadcast(g, fill_value)
            if np.issubdtype(ans.dtype, np.floating)
            else rt.zeros_like(fill_value)
        )


# Ranges made from their arguments: the values depend on start/stop/step (the length
# only on the integer count), so a differentiated argument is refused (no templates).
@rule(np.arange, examples=[example("x * np.arange(1.0, 2.5, 0.5)", x=(3,))], complex=True)
def arange(start, stop=None, step=None, dtype=None):
    """``np.arange(...)``: refused when start, stop or step is differentiated."""


def _linspace_outputs(static):
    return 2 if static["retstep"] else 1


@rule(
    np.linspace,
    outputs=_linspace_outputs,
    examples=[
        example("x * np.linspace(0.0, 1.0, 3)", x=(3,)),
        example("np.linspace(a, b, 5)", a=None, b=None),
        example("np.linspace(a, b, 4, endpoint=False)", a=None, b=None),
        example("np.linspace(a, b, 1)", a=None, b=None),
        example("np.linspace(a, b, 3)", a=(2,), b=(2,), f32=True),
        example("np.linspace(a, b, 4, axis=-1)", a=(2, 1), b=(3,)),
        example("np.linspace(a, 2.0, 3, axis=1)", a=(2,)),
    ],
    complex=True,
)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``start + (stop - start) * t`` on the grid ``t``: linear in ``start`` and ``stop``,
    so a tangent is a linspace of its own (from ``d`` to 0 for ``start``, from 0 to ``d``
    for ``stop``) and a cotangent weighs ``g`` along the new axis by ``1 - t`` and ``t``.
    ``retstep=True`` (a pair) raises for a differentiated ``start`` or ``stop``; an integer
    ``dtype`` rounds the samples (piecewise constant: derivative zero)."""

    def jvp_start(d):  # (one result, a tuple of one: retstep=True would make two)
        n = rt.samples_only(num, retstep) if retstep else num
        if dtype is not None and np.dtype(dtype).kind in "iub":  # rounded: no derivative
            return (0.0 * np.linspace(d, 0.0 * stop, n, axis=axis),)
        return (np.linspace(d, 0.0 * stop, n, endpoint=endpoint, dtype=dtype, axis=axis),)

    def jvp_stop(d):
        n = rt.samples_only(num, retstep) if retstep else num
        if dtype is not None and np.dtype(dtype).kind in "iub":
            return (0.0 * np.linspace(0.0 * start, d, n, axis=axis),)
        return (np.linspace(0.0 * start, d, n, endpoint=endpoint, dtype=dtype, axis=axis),)

    def vjp_start(g):  # g[0] along the new axis, weighed by 1 - t
        if dtype is not None and np.dtype(dtype).kind in "iub":
            return rt.zeros_like(start)
        n = rt.samples_only(num, retstep) if retstep else num
        along = g[0] if axis == 0 else np.moveaxis(g[0], axis, 0)
        weights = np.linspace(1.0, 0.0, n, endpoint=endpoint)
        return rt.unbroadcast(np.tensordot(weights, along, axes=1), start)

    def vjp_stop(g):  # weighed by t
        if dtype is not None and np.dtype(dtype).kind in "iub":
            return rt.zeros_like(stop)
        n = rt.samples_only(num, retstep) if retstep else num
        along = g[0] if axis == 0 else np.moveaxis(g[0], axis, 0)
        weights = np.linspace(0.0, 1.0, n, endpoint=endpoint)
        return rt.unbroadcast(np.tensordot(weights, along, axes=1), stop)


nondifferentiable(rt.samples_only)


@rule(np.logspace, examples=[example("x * np.logspace(0.0, 1.0, 3)", x=(3,))], complex=True)
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``np.logspace(start, stop, num)``: refused when start, stop or base is differentiated."""


@rule(np.geomspace, examples=[example("x * np.geomspace(1.0, 8.0, 3)", x=(3,))], complex=True)
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``np.geomspace(start, stop, num)``: refused when start or stop is differentiated."""


# Samplers whose result depends on an argument: a differentiated argument is refused
# (no templates), constant arguments are fine.
@rule(np.random.normal, examples=[example("x + 0.0 * np.random.normal(1.0, 2.0, 3)", x=(3,))])
def random_normal(loc=0.0, scale=1.0, size=None):
    """A sample from N(loc, scale^2): refused when loc or scale is differentiated."""


@rule(np.random.uniform, examples=[example("x * np.random.uniform(1.0, 1.0, size=(2, 3))", x=(3,))])
def random_uniform(low=0.0, high=1.0, size=None):
    """A sample from U(low, high): refused when low or high is differentiated."""


@rule(np.random.choice, examples=[example("x + 0.0 * np.random.choice(4, size=3)", x=(3,))])
def random_choice(a, size=None, replace=True, p=None):
    """Samples of ``a``'s elements: refused when ``a`` or ``p`` is differentiated."""


@rule(
    np.random.permutation,
    examples=[example("x + 0.0 * np.random.permutation(3)", x=(3,))],
)
def random_permutation(x):
    """A shuffled copy of ``x`` (or of ``arange(x)``): refused when ``x`` is differentiated."""


# Methods of a random generator (``rng = np.random.default_rng(0)``; ``rng.normal(size=3)``):
# generated code calls the method; no derivative, and a differentiated argument is refused.
@method_rule("normal", draws=True)
def generator_normal(rng, loc=0.0, scale=1.0, size=None):
    """``rng.normal(loc, scale, size)``."""


@method_rule("uniform", draws=True)
def generator_uniform(rng, low=0.0, high=1.0, size=None):
    """``rng.uniform(low, high, size)``."""


@method_rule("standard_normal", draws=True)
def generator_standard_normal(rng, size=None, dtype=None):
    """``rng.standard_normal(size)``. (Not ``out=``: a write into an array the program
    reads, which a call without an effect would hide from the generated code.)"""


@method_rule("random", draws=True)
def generator_random(rng, size=None, dtype=None):
    """``rng.random(size)`` (not ``out=``, as for ``standard_normal``)."""


@method_rule("integers", draws=True)
def generator_integers(rng, low, high=None, size=None, dtype=None, endpoint=False):
    """``rng.integers(low, high, size)``."""


@method_rule("choice", draws=True)
def generator_choice(rng, a, size=None, replace=True, p=None, axis=0, shuffle=True):
    """``rng.choice(a, size)``: refused when ``a`` or ``p`` is differentiated."""


@method_rule("permutation", draws=True)
def generator_permutation(rng, x, axis=0):
    """``rng.permutation(x)``: refused when ``x`` is differentiated."""


def _method_examples(method: str, *examples: Any) -> None:
    stand_in = method_function(method)
    assert stand_in is not None
    prim = lookup(stand_in[0])
    assert prim is not None
    prim.examples = examples


_method_examples(
    "normal", example("x + 0.0 * np.random.default_rng(0).normal(1.0, 2.0, size=3)", x=(3,))
)
_method_examples(
    "uniform", example("x * np.random.default_rng(1).uniform(2.0, 2.0, size=3)", x=(3,))
)
_method_examples(
    "standard_normal", example("x + 0.0 * np.random.default_rng(2).standard_normal(3)", x=(3,))
)
_method_examples("random", example("x + 0.0 * np.random.default_rng(3).random((2, 3))", x=(3,)))
_method_examples("integers", example("x * np.random.default_rng(4).integers(1, 2, size=3)", x=(3,)))
_method_examples("choice", example("x + 0.0 * np.random.default_rng(5).choice(4, size=3)", x=(3,)))
_method_examples(
    "permutation", example("x + 0.0 * np.random.default_rng(6).permutation(3)", x=(3,))
)

# reverse-mode loops run over rt.backwards(range): integers, no derivative (a non-range
# argument fails when it runs)
nondifferentiable(rt.backwards)
