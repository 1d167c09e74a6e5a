"""The Numba forms of adgen's runtime helpers (``nbrt`` in code rewritten for Numba).

Each ``rt.<helper>`` of :mod:`adgen.rules.runtime` that code rewritten by
:mod:`adgen.backend.numba_code` may call has here a stand-in of the same name and an
``@overload`` that picks the helper's code from its arguments' Numba types when the code is
compiled -- the dispatch the NumPy helper does on Python types each time it runs happens once.
An overload that has no code for the types it is given returns nothing: Numba then fails to
type the function and adgen runs the NumPy code instead (never a different answer). A case
only the values decide (a ``None`` placeholder read) raises, and the call runs the NumPy
code too.

This module imports Numba; only ``backend="numba"`` imports it.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import types
from numba.extending import overload

# the helpers with a Numba form (the names numba_code rewrites ``rt.<name>`` calls of)
HELPERS = frozenset(
    {"zeros_like", "copy_of", "saved_shape", "unbroadcast", "written", "getitem_vjp", "writable"}
)

_SCALARS = (types.Float, types.Integer, types.Boolean)


def _never(*args: Any) -> Any:  # pragma: no cover - Numba calls the overloads instead
    raise NotImplementedError("a Numba form of an adgen helper, called outside Numba code")


def _stand_in(name: str) -> Any:
    def stand_in(*args: Any) -> Any:  # pragma: no cover - only Numba code calls it
        return _never(*args)

    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in


zeros_like = _stand_in("zeros_like")
copy_of = _stand_in("copy_of")
writable = _stand_in("writable")
saved_shape = _stand_in("saved_shape")
unbroadcast = _stand_in("unbroadcast")
written = _stand_in("written")
getitem_vjp = _stand_in("getitem_vjp")
fusable = _stand_in("fusable")
add_at = _stand_in("add_at")
add_into = _stand_in("add_into")
setslice = _stand_in("setslice")
_copy_any = _stand_in("_copy_any")


def _inner(t: Any) -> Any:
    return t.type if isinstance(t, types.Optional) else t


def _float_array(t: Any) -> bool:
    return isinstance(t, types.Array) and isinstance(t.dtype, types.Float)


@overload(zeros_like)
def _zeros_like(x):
    """0.0 for numbers, zeros of an array's shape. (No form for ``None`` itself: Numba types a
    placeholder ``None`` before the values bound to it later, and a float there would not
    unify with an array's zeros.)"""
    if isinstance(x, _SCALARS):
        return lambda x: 0.0
    if isinstance(x, types.Array):
        dtype = x.dtype if isinstance(x.dtype, (types.Float, types.Complex)) else types.float64
        return lambda x: np.zeros(x.shape, dtype)
    if isinstance(x, types.Optional) and isinstance(x.type, types.Array):
        inner = x.type
        dtype = inner.dtype if isinstance(inner.dtype, types.Float) else types.float64

        ones = (1,) * inner.ndim

        def impl(x):
            if x is None:  # (NumPy's 0.0: zeros that broadcast as it does, to any such array)
                return np.zeros(ones, dtype)
            return np.zeros(x.shape, dtype)

        return impl
    if isinstance(x, types.Optional) and isinstance(x.type, _SCALARS):
        return lambda x: 0.0
    return None


@overload(copy_of)
def _copy_of(x):
    """A copy no later write changes: an array's copy; a number is its own."""
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    if isinstance(x, _SCALARS):
        return lambda x: x
    return None


@overload(writable)
def _writable(x):
    """An array, as it is (Numba's arrays take item writes; a number there does not compile,
    and the NumPy code runs instead)."""
    if isinstance(x, types.Array):
        return lambda x: x
    return None


@overload(_copy_any)
def _copy_any_impl(x):
    return _copy_of(x)


@overload(saved_shape)
def _saved_shape(x):
    """What a loop saves of a value read back only for its shape: the value itself (Numba
    keeps a reference; its shape is what the code reads)."""
    if isinstance(_inner(x), (types.Array, *_SCALARS)) or isinstance(x, types.NoneType):
        return lambda x: x
    return None


@overload(unbroadcast)
def _unbroadcast(g, x):
    """``g`` summed down to ``x``'s shape (broadcasting's added and size-1 axes)."""
    x = _inner(x)
    if isinstance(x, _SCALARS):
        if isinstance(g, _SCALARS):
            return lambda g, x: g
        if isinstance(g, types.Array):
            return lambda g, x: np.sum(g)
        return None
    if not (isinstance(x, types.Array) and _float_array(g)):
        return None
    extra = g.ndim - x.ndim
    if extra < 0:
        return None
    n = x.ndim

    def impl(g, x):
        if x is None:
            raise ValueError("adgen: unbroadcast to a name not bound yet")
        if extra == 0 and g.shape == x.shape:
            return g
        shape = x.shape
        out = np.zeros(x.size, g.dtype)
        for index in np.ndindex(g.shape):
            flat = 0
            for axis in range(n):
                size = shape[axis]
                at = index[axis + extra] if size != 1 else 0
                flat = flat * size + at
            out[flat] += g[index]
        return out.reshape(shape)

    return impl


def _basic(index: Any) -> bool:
    """An index of integers and slices (each element named once)."""
    if isinstance(index, types.BaseTuple):
        items = tuple(getattr(index, "types", ()))
        return all(isinstance(i, (types.Integer, types.SliceType)) for i in items)
    return isinstance(index, (types.Integer, types.SliceType))


def _vector(t: Any) -> bool:
    """A one-dimensional float64 array (the fast paths' arrays: loops over elements)."""
    return isinstance(t, types.Array) and t.ndim == 1 and t.dtype == types.float64


def _ints(index: Any) -> int:
    """How many axes a basic index takes away (its integers)."""
    items = tuple(getattr(index, "types", ())) if isinstance(index, types.BaseTuple) else (index,)
    return sum(isinstance(i, types.Integer) for i in items)


# Numba's own setitem of an array into a slice compiles, once per kind of call, a function
# that formats the shapes into its error message: about a second each. The helpers below
# write arrays into views with loops instead (an error raises, and the NumPy code runs).
_put = _stand_in("_put")
_added = _stand_in("_added")


@overload(_put)
def _put_impl(view, g):
    """``view[...] = g``: ``g`` of ``view``'s shape, or a number."""
    if not isinstance(view, types.Array):
        return None
    if isinstance(g, _SCALARS):
        if view.ndim == 1:

            def fill_one(view, g):
                for k in range(len(view)):
                    view[k] = g

            return fill_one

        def fill(view, g):
            for index in np.ndindex(view.shape):
                view[index] = g

        return fill
    if not (isinstance(g, types.Array) and g.ndim == view.ndim):
        return None
    if view.ndim == 1:

        def one(view, g):
            if len(view) != len(g):
                raise ValueError("adgen: arrays of other shapes")
            for k in range(len(view)):
                view[k] = g[k]

        return one

    def many(view, g):
        if view.shape != g.shape:
            raise ValueError("adgen: arrays of other shapes")
        for index in np.ndindex(view.shape):
            view[index] = g[index]

    return many


@overload(_added)
def _added_impl(view, g):
    """``view += g``, ``g`` of ``view``'s shape."""
    if not (isinstance(view, types.Array) and isinstance(g, types.Array)):
        return None
    if g.ndim != view.ndim:
        return None
    if view.ndim == 1:

        def one(view, g):
            if len(view) != len(g):
                raise ValueError("adgen: arrays of other shapes")
            for k in range(len(view)):
                view[k] += g[k]

        return one

    def many(view, g):
        if view.shape != g.shape:
            raise ValueError("adgen: arrays of other shapes")
        for index in np.ndindex(view.shape):
            view[index] += g[index]

    return many


@numba.njit
def _overlap(a, b):  # pragma: no cover - compiled by Numba
    """Do the memory spans of arrays ``a`` and ``b`` meet?"""
    if a.size == 0 or b.size == 0:
        return False
    a_lo = a_hi = a.ctypes.data
    for k in range(a.ndim):
        step = (a.shape[k] - 1) * a.strides[k]
        a_lo, a_hi = (a_lo + step, a_hi) if step < 0 else (a_lo, a_hi + step)
    b_lo = b_hi = b.ctypes.data
    for k in range(b.ndim):
        step = (b.shape[k] - 1) * b.strides[k]
        b_lo, b_hi = (b_lo + step, b_hi) if step < 0 else (b_lo, b_hi + step)
    return a_lo < b_hi + b.itemsize and b_lo < a_hi + a.itemsize


@overload(written)
def _written(g, index):
    """The cotangent of ``v`` in ``y[index] = v``: a copy of ``g[index]``."""
    if _vector(g) and isinstance(index, types.SliceType):

        def copied(g, index):
            view = g[index]
            out = np.empty(len(view), np.float64)
            for k in range(len(view)):
                out[k] = view[k]
            return out

        return copied
    if _float_array(g) and _basic(index):
        return lambda g, index: _copy_any(g[index])
    return None


def _cotangent_at(g: Any, x: Any, index: Any) -> bool:
    """Is ``g`` what ``x[index]`` is (a number for an element, else an array of its rank)?"""
    if not (_float_array(x) and _basic(index)):
        return False
    rank = x.ndim - _ints(index)
    if rank == 0:
        return isinstance(g, types.Float)
    return _float_array(g) and g.ndim == rank


@overload(getitem_vjp)
def _getitem_vjp(g, x, index):
    """The cotangent of ``x[index]`` w.r.t. ``x``: zeros of ``x``'s shape, ``g`` at ``index``."""
    x = _inner(x)
    if not (_float_array(x) and _basic(index)):
        return None
    if not (isinstance(g, types.Float) or _float_array(g)):
        return None
    dtype = x.dtype
    if not _cotangent_at(g, x, index) or x.ndim == _ints(index):

        def impl(g, x, index):
            if x is None:
                raise ValueError("adgen: a cotangent of a name not bound yet")
            out = np.zeros(x.shape, dtype)
            out[index] = g
            return out

        return impl

    def put(g, x, index):
        if x is None:
            raise ValueError("adgen: a cotangent of a name not bound yet")
        out = np.zeros(x.shape, dtype)
        _put(out[index], g)
        return out

    return put


def _adds_at(y: Any, g: Any, x: Any, index: Any) -> bool:
    """Can ``g`` be added into (a copy of) ``y`` at ``index`` for ``y + getitem_vjp(g, x,
    index)``: arrays of one rank and dtype, ``g`` what ``x[index]`` is?"""
    x = _inner(x)
    return (
        isinstance(y, types.Array)
        and isinstance(x, types.Array)
        and y.ndim == x.ndim
        and y.dtype == x.dtype
        and isinstance(y.dtype, types.Float)
        and _cotangent_at(g, x, index)
        and (not isinstance(g, types.Array) or g.dtype == y.dtype)
    )


@overload(add_at)
def _add_at(y, g, x, index):
    """``y + getitem_vjp(g, x, index)`` (a cotangent added where ``x[index]`` was read):
    ``y``'s copy with ``g`` added at ``index`` (the same sums), without the array of zeros."""
    if not _adds_at(y, g, x, index) or _inner(x).ndim == _ints(index):
        return lambda y, g, x, index: y + getitem_vjp(g, x, index)

    def added(y, g, x, index):
        if x is None or y.shape != x.shape:
            return y + getitem_vjp(g, x, index)
        out = y.copy()
        _added(out[index], g)
        return out

    return added


@overload(add_into)
def _add_into(y, g, x, index):
    """``add_at`` adding into ``y`` itself (an array no other name holds: adgen's rewrite
    makes sure) where the arrays allow, a new array otherwise."""
    if not _adds_at(y, g, x, index) or _inner(x).ndim == _ints(index):
        return lambda y, g, x, index: y + getitem_vjp(g, x, index)

    def added(y, g, x, index):
        if x is None or y.shape != x.shape:
            return y + getitem_vjp(g, x, index)
        _added(y[index], g)
        return y

    return added


@overload(setslice)
def _setslice(a, index, v):
    """``a[index] = v`` for a slice ``index``: with loops (``v`` read first where it shares
    memory with ``a``, broadcast where its shape is another)."""
    if not (isinstance(a, types.Array) and isinstance(index, types.SliceType)):
        return None
    if isinstance(v, _SCALARS):

        def filled(a, index, v):
            _put(a[index], v)

        return filled
    if not (isinstance(v, types.Array) and v.ndim <= a.ndim):
        return None
    if v.ndim == a.ndim:

        def copied(a, index, v):
            view = a[index]
            if view.shape != v.shape:
                _put(view, np.broadcast_to(v, view.shape).copy())
            elif _overlap(view, v):
                _put(view, v.copy())
            else:
                _put(view, v)

        return copied

    def broadcast(a, index, v):
        view = a[index]
        _put(view, np.broadcast_to(v, view.shape).copy())

    return broadcast


@overload(fusable)
def _fusable(arrays, numbers):
    """The length of the arrays a fused loop reads (:mod:`adgen.backend.numba_fuse`): Numba
    types it only for one-dimensional float64 arrays and real numbers (else adgen compiles the
    code unfused); it raises when the lengths differ (broadcasting: the unfused code's)."""
    from adgen.backend.numba_fuse import MISMATCH

    items = tuple(getattr(arrays, "types", ()))
    if not items or not all(
        isinstance(a, types.Array) and a.ndim == 1 and a.dtype == types.float64 for a in items
    ):
        return None
    if not all(isinstance(x, _SCALARS) for x in getattr(numbers, "types", ())):
        return None
    checks = " or ".join(f"len(arrays[{k}]) != n" for k in range(1, len(items))) or "False"
    text = (
        "def impl(arrays, numbers):\n"
        "    n = len(arrays[0])\n"
        f"    if {checks}:\n"
        "        raise ValueError(MISMATCH)\n"
        "    return n\n"
    )
    scope: dict[str, Any] = {"MISMATCH": MISMATCH}
    exec(text, scope)  # (one test per array: the tuple's items have different types)
    return scope["impl"]


def versions() -> str:
    """What compiled Numba code depends on besides its own text (for cache keys)."""
    return f"numba {numba.__version__} numpy {np.__version__}"
