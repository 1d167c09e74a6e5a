"""NumPy's spelling over an array-API namespace: how adgen's NumPy code runs on array-API arrays.

adgen's derivative code and runtime helpers are NumPy code (``np.sum(g, axis=0)``,
``np.where(mask, g, 0.0)``). Dask and CuPy receive those calls through NumPy's dispatch
protocols. A library that follows only the array API standard (``array_api_strict``, the
standard's reference; ``__array_namespace__`` but no ``__array_function__``) does not: NumPy
would convert its arrays. For such arrays adgen runs the same code with ``np`` bound to a
:class:`NumPyOf` the arrays' namespace, and ``rt`` bound to the runtime helpers compiled
against it (:func:`adgen.backend.namespaces.runtime_for`).

Each NumPy function is computed with the standard's, with NumPy's arguments and defaults:
``np.arcsin`` is ``xp.asin``, ``np.std(x, ddof=1)`` ``xp.std(x, correction=1)``,
``np.trace(a, axis1=0, axis2=2)`` ``xp.linalg.trace`` of ``a`` with those axes moved last,
``np.take(a, [2, 0], mode="wrap")`` ``xp.take`` of the wrapped positions. Python numbers,
NumPy values and NumPy dtypes given to it become the namespace's, and arrays are promoted
as NumPy promotes them. A NumPy function the standard lacks (``np.einsum``, ``np.add.at``,
``np.bincount``...) raises :class:`ArrayAPIMissing`, which names it.

>>> import array_api_strict as xp  # doctest: +SKIP
>>> np_ = NumPyOf(xp)  # doctest: +SKIP
>>> np_.diff(xp.asarray([1.0, 4.0, 9.0]), prepend=0)  # doctest: +SKIP
Array([1., 3., 5.], dtype=array_api_strict.float64)
"""

from __future__ import annotations

import functools
import math
import operator
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy

# NumPy's name -> the name of the standard's function (and of NumPyOf's), where only the name
# differs
RENAMED = {
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "arctan2": "atan2",
    "power": "pow",
    "absolute": "abs",
    "concatenate": "concat",
    "invert": "bitwise_invert",
    "bitwise_not": "bitwise_invert",
    "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift",
    "amax": "max",
    "amin": "min",
    "conjugate": "conj",
    "true_divide": "divide",
    "mod": "remainder",
    "around": "round",
}

# the standard's elementwise functions (and matmul) that are NumPy's under the same name and
# arguments
_ELEMENTWISE = frozenset(
    "abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_invert "
    "bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor ceil conj copysign cos cosh "
    "divide equal exp expm1 floor floor_divide greater greater_equal hypot isfinite isinf isnan "
    "less less_equal log log10 log1p log2 logaddexp logical_and logical_not logical_or "
    "logical_xor matmul maximum minimum multiply negative nextafter not_equal positive pow "
    "reciprocal remainder sign signbit sin sinh sqrt square subtract tan tanh trunc".split()
)

# of those, the ones NumPy computes in float64 for integer and boolean arrays (the standard
# takes floating-point arrays only)
_FLOATING = frozenset(
    "acos acosh asin asinh atan atan2 atanh copysign cos cosh divide exp expm1 hypot log log10 "
    "log1p log2 logaddexp nextafter sin sinh sqrt tan tanh".split()
)

# a ufunc's reduce and accumulate: the standard's reduction and cumulative function
_REDUCING = {"maximum": "max", "minimum": "min", "add": "sum", "multiply": "prod"}
_ACCUMULATING = {"add": "cumulative_sum", "multiply": "cumulative_prod"}

# the standard's dtypes, by NumPy's names
_DTYPES = (
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 "
    "complex128".split()
)

_NO_VALUE: Any = numpy._NoValue  # NumPy's "not given" (np.linalg.pinv's rtol)


class ArrayAPIMissing(AttributeError):
    """A NumPy function adgen's code called has no equivalent in the array API standard."""


def _is_array(x: Any) -> bool:
    """Is ``x`` an array of an array-API namespace other than NumPy (NumPy 2's arrays and
    scalars have ``__array_namespace__`` too: they are values to convert)?"""
    return hasattr(x, "__array_namespace__") and not isinstance(
        x, numpy.ndarray | numpy.generic | type
    )


class SVDResult(NamedTuple):
    """``np.linalg.svd``'s result, where NumPyOf composes it (``hermitian=True``)."""

    U: Any
    S: Any
    Vh: Any


class _Values:
    """The ground of :class:`NumPyOf`: the namespace, its dtypes, values made its arrays."""

    xp: Any  # the array-API namespace

    def _missing(self, what: str) -> ArrayAPIMissing:
        return ArrayAPIMissing(
            f"{what} has no equivalent in the array API standard, so adgen's code cannot run "
            f"it on {self.xp.__name__} arrays"
        )

    def _standard(self, name: str) -> Any:
        """The namespace's function ``name`` (``"linalg.svdvals"``); ArrayAPIMissing if it does
        not have it (an extension it lacks, a function of a later version of the standard)."""
        home = self.xp
        for part in name.split("."):
            home = getattr(home, part, None)
            if home is None:
                raise ArrayAPIMissing(
                    f"{self.xp.__name__} has no {name} (the array API standard's), which adgen's "
                    f"code needs here"
                )
        return home

    # -- values and dtypes ----------------------------------------------------------------------
    def array_like(self, value: Any, partner: Any = None) -> Any:
        """``value`` as an array of the namespace. A Python number takes the dtype NumPy gives
        it next to the array ``partner`` (its dtype when of the same kind or a float array's);
        NumPy values and (nested) sequences keep NumPy's dtype."""
        if _is_array(value):
            return value
        if isinstance(value, bool | int | float | complex):
            dtype = None if partner is None else self.result_type(partner, value)
            return self.xp.asarray(value, dtype=dtype)
        if isinstance(value, list | tuple) and any(_is_array(v) for v in _flat(value)):
            return self.xp.stack(self._arrays(*(self.array_like(v, partner) for v in value)))
        value = numpy.asarray(value)
        return self.xp.asarray(value.tolist(), dtype=self._dtype(value.dtype))

    def _arrays(self, *values: Any) -> list[Any]:
        """``values`` as arrays of the namespace, of the dtype NumPy promotes them to."""
        partner = next((v for v in values if _is_array(v)), None)
        arrays = [self.array_like(v, partner) for v in values]
        if any(a.dtype != arrays[0].dtype for a in arrays):
            dtype = self.result_type(
                *(
                    v if isinstance(v, bool | int | float | complex) else a
                    for v, a in zip(values, arrays)
                )
            )
            arrays = [a if a.dtype == dtype else self.xp.astype(a, dtype) for a in arrays]
        return arrays

    def _floating(self, x: Any) -> Any:
        """``x`` as NumPy computes a floating-point function of it: float64 for integers."""
        return x if _kind(self.xp, x.dtype) in "fc" else self.xp.astype(x, self.xp.float64)

    def _dtype(self, dtype: Any) -> Any:
        """The namespace's dtype for a dtype given as NumPy takes one (the namespace's,
        NumPy's, a scalar type such as ``float``, a name); None stays None."""
        if dtype is None or _is_dtype(self.xp, dtype):
            return dtype
        name = numpy.dtype(dtype).name
        found = getattr(self.xp, name, None) if name in _DTYPES else None
        if found is None:
            raise TypeError(f"{self.xp.__name__} has no dtype {name} (NumPy's {dtype!r})")
        return found

    def _numpy_dtype(self, value: Any) -> Any:
        """NumPy's dtype for the namespace's dtype or array ``value``; anything else as it is."""
        if _is_array(value):
            value = value.dtype
        if _is_dtype(self.xp, value):
            for name in _DTYPES:
                if value == getattr(self.xp, name, None):
                    return numpy.dtype(name)
            raise TypeError(f"{value!r} is not one of the array API standard's dtypes")
        return value

    def dtype(self, dtype: Any) -> Any:
        return self.xp.float64 if dtype is None else self._dtype(dtype)

    def result_type(self, *arrays_and_dtypes: Any) -> Any:
        """NumPy's promotion (Python numbers weak, NEP 50), with the namespace's dtypes."""
        values = [
            v if isinstance(v, bool | int | float | complex) else self._numpy_dtype(v)
            for v in arrays_and_dtypes
        ]
        values = [numpy.asarray(v).dtype if isinstance(v, list | tuple) else v for v in values]
        return self._dtype(numpy.result_type(*values))

    def issubdtype(self, arg1: Any, arg2: Any) -> bool:
        return bool(numpy.issubdtype(self._numpy_dtype(arg1), self._numpy_dtype(arg2)))

    def isdtype(self, dtype: Any, kind: Any) -> bool:
        kinds = kind if isinstance(kind, tuple) else (kind,)
        kinds = tuple(k if isinstance(k, str) else self._dtype(k) for k in kinds)
        return bool(self.xp.isdtype(self._dtype(dtype), kinds))

    def finfo(self, dtype: Any) -> Any:
        return self.xp.finfo(dtype if _is_array(dtype) else self._dtype(dtype))

    def iinfo(self, dtype: Any) -> Any:
        return self.xp.iinfo(dtype if _is_array(dtype) else self._dtype(dtype))

    def shape(self, a: Any) -> tuple[int, ...]:
        return tuple(a.shape) if _is_array(a) else numpy.shape(a)

    def ndim(self, a: Any) -> int:
        return len(self.shape(a))

    def size(self, a: Any, axis: int | None = None) -> int:
        shape = self.shape(a)
        return math.prod(shape) if axis is None else shape[axis]

    def broadcast_shapes(self, *shapes: Any) -> tuple[int, ...]:
        return tuple(numpy.broadcast_shapes(*shapes))

    def may_share_memory(self, a: Any, b: Any) -> bool:
        return True  # the standard cannot tell; NumPy's answer when it cannot rule it out

    def errstate(self, **kwargs: Any) -> Any:
        return numpy.errstate(**kwargs)

    # -- making arrays --------------------------------------------------------------------------
    def asarray(
        self,
        a: Any,
        dtype: Any = None,
        order: Any = None,
        *,
        device: Any = None,
        copy: bool | None = None,
        like: Any = None,
    ) -> Any:
        """(``order`` and ``device``: where NumPy keeps the values, not what they are.)"""
        x = self.array_like(a)
        dtype = self._dtype(dtype)
        if dtype is not None and x.dtype != dtype:
            return self.xp.astype(x, dtype)
        return self.xp.asarray(x, copy=True) if copy and x is a else x

    def array(
        self, a: Any, dtype: Any = None, *, copy: bool = True, ndmin: int = 0, like: Any = None
    ) -> Any:
        x = self.asarray(a, dtype, copy=copy)
        return self.xp.reshape(x, (1,) * (ndmin - x.ndim) + tuple(x.shape)) if x.ndim < ndmin else x

    def copy(self, a: Any) -> Any:
        return self.xp.asarray(self.array_like(a), copy=True)

    def astype(self, x: Any, dtype: Any, *, copy: bool = True) -> Any:
        return self.xp.astype(self.array_like(x), self._dtype(dtype), copy=copy)

    def zeros(self, shape: Any, dtype: Any = float, *, like: Any = None) -> Any:
        return self.xp.zeros(_shape(shape), dtype=self._dtype(dtype), **_device(like))

    def ones(self, shape: Any, dtype: Any = float, *, like: Any = None) -> Any:
        return self.xp.ones(_shape(shape), dtype=self._dtype(dtype), **_device(like))

    def empty(self, shape: Any, dtype: Any = float, *, like: Any = None) -> Any:
        return self.xp.empty(_shape(shape), dtype=self._dtype(dtype), **_device(like))

    def full(self, shape: Any, fill_value: Any, dtype: Any = None, *, like: Any = None) -> Any:
        shape, dtype = _shape(shape), self._dtype(dtype)
        if isinstance(fill_value, bool | int | float | complex):
            return self.xp.full(shape, fill_value, dtype=dtype, **_device(like))
        value = self.asarray(fill_value, dtype)
        return self.xp.broadcast_to(value, shape)

    def zeros_like(self, a: Any, dtype: Any = None, *, shape: Any = None) -> Any:
        x = self.array_like(a)
        if shape is None:
            return self.xp.zeros_like(x, dtype=self._dtype(dtype))
        return self.xp.zeros(_shape(shape), dtype=self._dtype(dtype) or x.dtype, device=x.device)

    def ones_like(self, a: Any, dtype: Any = None, *, shape: Any = None) -> Any:
        x = self.array_like(a)
        if shape is None:
            return self.xp.ones_like(x, dtype=self._dtype(dtype))
        return self.xp.ones(_shape(shape), dtype=self._dtype(dtype) or x.dtype, device=x.device)

    def empty_like(self, a: Any, dtype: Any = None, *, shape: Any = None) -> Any:
        return self.zeros_like(a, dtype, shape=shape)

    def full_like(self, a: Any, fill_value: Any, dtype: Any = None, *, shape: Any = None) -> Any:
        x = self.array_like(a)
        dtype = self._dtype(dtype) or x.dtype
        shape = tuple(x.shape) if shape is None else _shape(shape)
        if isinstance(fill_value, bool | int | float | complex):
            return self.xp.full(shape, fill_value, dtype=dtype, device=x.device)
        return self.xp.broadcast_to(self.asarray(fill_value, dtype), shape)

    def linspace(
        self,
        start: Any,
        stop: Any,
        num: int = 50,
        endpoint: bool = True,
        retstep: bool = False,
        dtype: Any = None,
        axis: int = 0,
    ) -> Any:
        """NumPy's: array ends broadcast against each other, the samples along ``axis``."""
        if retstep:
            raise self._missing("np.linspace(..., retstep=True)")
        a, b = (self._floating(v) for v in self._arrays(start, stop))
        shape = numpy.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        div = num - 1 if endpoint else num
        t = self.xp.arange(num, dtype=a.dtype, device=a.device)
        t = self.xp.reshape(t / div if div > 0 else t * 0, (num,) + (1,) * len(shape))
        y = a + (b - a) * t
        if endpoint and num > 1:  # (the last sample is stop itself, as NumPy makes it)
            y = self.xp.concat([y[:-1, ...], self.xp.broadcast_to(b, (1,) + shape)], axis=0)
        if axis != 0:
            y = self.xp.moveaxis(y, 0, axis)
        return y if dtype is None else self.xp.astype(y, self._dtype(dtype))

    def eye(
        self, N: int, M: int | None = None, k: int = 0, dtype: Any = float, *, like: Any = None
    ) -> Any:
        return self.xp.eye(N, M, k=k, dtype=self._dtype(dtype), **_device(like))

    def identity(self, n: int, dtype: Any = float, *, like: Any = None) -> Any:
        return self.eye(n, dtype=dtype, like=like)

    def arange(self, *args: Any, dtype: Any = None, like: Any = None) -> Any:
        args = tuple(a.item() if isinstance(a, numpy.generic) else a for a in args)
        return self.xp.arange(*args, dtype=self._dtype(dtype), **_device(like))


class _Shaping(_Values):
    """The functions of :class:`NumPyOf` that move values: shaping, indexing, sorting."""

    # -- shaping --------------------------------------------------------------------------------
    def reshape(self, a: Any, shape: Any, order: str = "C") -> Any:
        """``order='F'`` reads and writes the first index fastest: the reversed axes reshaped
        in C order (``'A'``: C, as an array of the standard has no layout to follow)."""
        x = self.array_like(a)
        if order == "A" and a is not x:  # (NumPy's layout, which the copy does not keep)
            raise NotImplementedError("np.reshape(..., order='A') of a NumPy array here")
        if order != "F":
            return self.xp.reshape(x, _shape(shape))
        flipped = self.xp.permute_dims(x, tuple(reversed(range(x.ndim))))
        target = _shape(shape)
        if -1 in target:  # (the missing length, known from the size)
            known = math.prod(n for n in target if n != -1)
            target = tuple(math.prod(x.shape) // known if n == -1 else n for n in target)
        out = self.xp.reshape(flipped, tuple(reversed(target)))
        return self.xp.permute_dims(out, tuple(reversed(range(len(target)))))

    def ravel(self, a: Any) -> Any:
        return self.xp.reshape(self.array_like(a), (-1,))

    def transpose(self, a: Any, axes: Any = None) -> Any:
        x = self.array_like(a)
        axes = tuple(reversed(range(x.ndim))) if axes is None else _axes(axes)
        return self.xp.permute_dims(x, axes)

    def permute_dims(self, a: Any, axes: Any = None) -> Any:
        return self.transpose(a, axes)

    def matrix_transpose(self, x: Any, /) -> Any:
        return self.xp.matrix_transpose(self.array_like(x))

    def swapaxes(self, a: Any, axis1: int, axis2: int) -> Any:
        x = self.array_like(a)
        axes = list(range(x.ndim))
        axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
        return self.xp.permute_dims(x, tuple(axes))

    def moveaxis(self, a: Any, source: Any, destination: Any) -> Any:
        return self.xp.moveaxis(self.array_like(a), _axes(source), _axes(destination))

    def expand_dims(self, a: Any, axis: Any) -> Any:
        x = self.array_like(a)
        axes = _axes(axis) if isinstance(axis, tuple | list) else (axis,)
        ndim = x.ndim + len(axes)
        for ax in sorted(operator.index(ax) % ndim for ax in axes):
            x = self.xp.expand_dims(x, axis=ax)
        return x

    def squeeze(self, a: Any, axis: Any = None) -> Any:
        x = self.array_like(a)
        if axis is None:
            axis = tuple(i for i, n in enumerate(x.shape) if n == 1)
        return self.xp.squeeze(x, axis=_axes(axis))

    def atleast_1d(self, *arys: Any) -> Any:
        out = tuple(
            self.reshape(a, (-1,)) if self.ndim(a) == 0 else self.array_like(a) for a in arys
        )
        return out[0] if len(out) == 1 else out

    def atleast_2d(self, *arys: Any) -> Any:
        out = tuple(self.array(a, copy=False, ndmin=2) for a in arys)
        return out[0] if len(out) == 1 else out

    def atleast_3d(self, *arys: Any) -> Any:
        out = []
        for a in arys:
            x = self.array_like(a)
            shape = tuple(x.shape)
            new = {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}.get(x.ndim, shape)
            out.append(self.xp.reshape(x, new))
        return out[0] if len(out) == 1 else tuple(out)

    def broadcast_to(self, array: Any, shape: Any) -> Any:
        return self.xp.broadcast_to(self.array_like(array), _shape(shape))

    def broadcast_arrays(self, *args: Any) -> tuple[Any, ...]:
        return tuple(self.xp.broadcast_arrays(*(self.array_like(a) for a in args)))

    def concat(self, arrays: Any, axis: int | None = 0, *, dtype: Any = None) -> Any:
        if axis is None:
            arrays, axis = [self.ravel(a) for a in arrays], 0
        out = self.xp.concat(self._arrays(*arrays), axis=axis)
        return out if dtype is None else self.astype(out, dtype)

    def stack(self, arrays: Any, axis: int = 0, *, dtype: Any = None) -> Any:
        out = self.xp.stack(self._arrays(*arrays), axis=axis)
        return out if dtype is None else self.astype(out, dtype)

    def vstack(self, tup: Any, *, dtype: Any = None) -> Any:
        return self.concat([self.atleast_2d(a) for a in tup], axis=0, dtype=dtype)

    def hstack(self, tup: Any, *, dtype: Any = None) -> Any:
        arrays = [self.atleast_1d(a) for a in tup]
        return self.concat(arrays, axis=0 if arrays[0].ndim == 1 else 1, dtype=dtype)

    def dstack(self, tup: Any) -> Any:
        return self.concat([self.atleast_3d(a) for a in tup], axis=2)

    def column_stack(self, tup: Any) -> Any:
        arrays = [self.array_like(a) for a in tup]
        return self.concat([self.reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrays], axis=1)

    def unstack(self, x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
        return tuple(self.xp.unstack(self.array_like(x), axis=axis))

    def array_split(self, ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
        x = self.array_like(ary)
        axis = _axis(axis, x.ndim)
        n = x.shape[axis]
        if isinstance(indices_or_sections, int | numpy.integer):
            sections = operator.index(indices_or_sections)
            each, extra = divmod(n, sections)
            sizes = [each + 1] * extra + [each] * (sections - extra)
            bounds = [sum(sizes[:i]) for i in range(sections + 1)]
        else:
            bounds = [0, *(operator.index(i) for i in indices_or_sections), n]
        before = (slice(None),) * axis
        return [x[before + (slice(lo, hi), ...)] for lo, hi in zip(bounds, bounds[1:])]

    def split(self, ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
        if isinstance(indices_or_sections, int | numpy.integer):
            n = self.shape(ary)[axis]
            if n % indices_or_sections:
                raise ValueError("array split does not result in an equal division")
        return self.array_split(ary, indices_or_sections, axis)

    def hsplit(self, ary: Any, indices_or_sections: Any) -> list[Any]:
        return self.split(ary, indices_or_sections, axis=1 if self.ndim(ary) > 1 else 0)

    def vsplit(self, ary: Any, indices_or_sections: Any) -> list[Any]:
        return self.split(ary, indices_or_sections, axis=0)

    def dsplit(self, ary: Any, indices_or_sections: Any) -> list[Any]:
        return self.split(ary, indices_or_sections, axis=2)

    def flip(self, m: Any, axis: Any = None) -> Any:
        return self.xp.flip(self.array_like(m), axis=_axes(axis))

    def fliplr(self, m: Any) -> Any:
        return self.flip(m, axis=1)

    def flipud(self, m: Any) -> Any:
        return self.flip(m, axis=0)

    def roll(self, a: Any, shift: Any, axis: Any = None) -> Any:
        x = self.array_like(a)
        shift, axis = self._python_ints(shift), _axes(axis)
        if isinstance(shift, tuple) and isinstance(axis, int):  # NumPy broadcasts the two
            axis = (axis,) * len(shift)
        elif isinstance(axis, tuple) and isinstance(shift, int):
            shift = (shift,) * len(axis)
        return self.xp.roll(x, shift, axis=axis)

    def tile(self, A: Any, reps: Any) -> Any:
        x = self.array_like(A)
        reps = self._python_ints(reps)
        reps = reps if isinstance(reps, tuple) else (reps,)
        d = max(len(reps), x.ndim)  # both padded with leading ones, as NumPy does
        x = self.xp.reshape(x, (1,) * (d - x.ndim) + tuple(x.shape))
        return self.xp.tile(x, (1,) * (d - len(reps)) + reps)

    def repeat(self, a: Any, repeats: Any, axis: int | None = None) -> Any:
        x = self.array_like(a)
        if not _is_array(repeats):
            r = numpy.asarray(repeats)
            repeats = int(r.reshape(-1)[0]) if r.size == 1 else self.xp.asarray(r.tolist())
        return self.xp.repeat(x, repeats, axis=axis)

    def tril(self, m: Any, k: int = 0) -> Any:
        return self.xp.tril(self._matrices(m), k=k)

    def triu(self, m: Any, k: int = 0) -> Any:
        return self.xp.triu(self._matrices(m), k=k)

    def _matrices(self, m: Any) -> Any:
        """``m`` as NumPy's tril and triu see it: a vector is the square matrix of its rows."""
        x = self.array_like(m)
        return self.xp.broadcast_to(x, (x.shape[0], x.shape[0])) if x.ndim == 1 else x

    def _python_ints(self, value: Any) -> int | tuple[int, ...]:
        """A shift or a repetition count as the standard takes it: Python ints (from an array
        of the namespace too: the standard requires the values)."""
        if _is_array(value):
            if value.ndim == 0:
                return int(value)
            flat = self.xp.reshape(value, (-1,))
            return tuple(int(flat[i]) for i in range(flat.shape[0]))
        v = numpy.asarray(value)
        return int(v) if v.ndim == 0 else tuple(int(i) for i in v.ravel())

    # -- indexing and sorting -------------------------------------------------------------------
    def take(self, a: Any, indices: Any, axis: int | None = None, *, mode: str = "raise") -> Any:
        x = self.array_like(a)
        if axis is None:
            x, axis = self.xp.reshape(x, (-1,)), 0
        axis = _axis(axis, x.ndim)
        idx = self._positions(indices, x.shape[axis], mode)
        taken = self.xp.take(x, self.xp.reshape(idx, (-1,)), axis=axis)
        return self.xp.reshape(taken, x.shape[:axis] + tuple(idx.shape) + x.shape[axis + 1 :])

    def take_along_axis(self, arr: Any, indices: Any, axis: int | None = -1) -> Any:
        x = self.array_like(arr)
        if axis is None:
            x, axis = self.xp.reshape(x, (-1,)), 0
        axis = _axis(axis, x.ndim)
        idx = self._positions(indices, x.shape[axis])
        return self._standard("take_along_axis")(x, idx, axis=axis)

    def _positions(self, indices: Any, n: int, mode: str = "raise") -> Any:
        """Indices into an axis of length ``n`` as the namespace takes them: an integer array,
        with NumPy's negative indices (and ``mode="wrap"`` or ``"clip"``) made positions."""
        idx = self.array_like(indices)
        if mode == "wrap":
            return idx % n
        if mode == "clip":
            return self.xp.clip(idx, 0, n - 1)
        return self.xp.where(idx < 0, idx + n, idx)

    def sort(self, a: Any, axis: int | None = -1, *, kind: Any = None, stable: Any = None) -> Any:
        x = self.array_like(a)
        if axis is None:
            x, axis = self.xp.reshape(x, (-1,)), 0
        return self.xp.sort(x, axis=axis, stable=True)

    def argsort(
        self, a: Any, axis: int | None = -1, *, kind: Any = None, stable: Any = None
    ) -> Any:
        x = self.array_like(a)
        if axis is None:
            x, axis = self.xp.reshape(x, (-1,)), 0
        return self.xp.argsort(x, axis=axis, stable=True)

    def searchsorted(self, a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
        x = self.array_like(a)
        sorter = None if sorter is None else self.array_like(sorter)
        return self.xp.searchsorted(x, self.array_like(v, x), side=side, sorter=sorter)

    def diagonal(self, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        x = self._last_two(a, axis1, axis2)
        return self._standard("linalg.diagonal")(x, offset=offset)

    def trace(
        self, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None
    ) -> Any:
        x = self._last_two(a, axis1, axis2)
        return self._standard("linalg.trace")(x, offset=offset, dtype=self._dtype(dtype))

    def _last_two(self, a: Any, axis1: int, axis2: int) -> Any:
        x = self.array_like(a)
        return self.xp.moveaxis(x, (_axis(axis1, x.ndim), _axis(axis2, x.ndim)), (-2, -1))

    def diag(self, v: Any, k: int = 0) -> Any:
        x = self.array_like(v)
        if x.ndim == 2:
            return self._standard("linalg.diagonal")(x, offset=k)
        if x.ndim != 1:
            raise ValueError("Input must be 1- or 2-d.")
        m = x.shape[0] + abs(k)  # v on the k-th diagonal of an m x m matrix of zeros
        padded = self.xp.concat([x, self.xp.zeros((abs(k),), dtype=x.dtype, device=x.device)])
        values = self.xp.reshape(padded, (m, 1) if k >= 0 else (1, m))
        on = self.xp.eye(m, k=k, dtype=self.xp.bool, device=x.device)
        return self.xp.where(on, values, self.xp.zeros((), dtype=x.dtype, device=x.device))


class NumPyOf(_Shaping):
    """The NumPy functions adgen's code calls, computed with the array-API namespace ``xp``.

    Each takes NumPy's arguments, with NumPy's defaults, and returns arrays of ``xp``:
    Python numbers, NumPy values and NumPy dtypes given to it are converted, and arrays of
    different dtypes are promoted as NumPy promotes them. The standard's elementwise
    functions NumPy has with the same arguments (``_ELEMENTWISE``, under NumPy's names:
    ``RENAMED``) are made on first use; the others are methods: here those whose arguments
    differ from the standard's, the reductions and the products; in the bases, dtypes and
    making arrays (``_Values``), shaping, indexing and sorting (``_Shaping``).
    """

    def __init__(self, xp: Any) -> None:
        self.xp = xp
        self.linalg = _LinalgOf(self)
        self.newaxis = None
        self.pi, self.e, self.inf, self.nan = math.pi, math.e, math.inf, math.nan
        for name in _DTYPES:
            if hasattr(xp, name):
                setattr(self, name, getattr(xp, name))
        # NumPy's array and scalar types: the namespace's arrays are another library's (the
        # runtime's ``foreign``), for which helpers take the routes that avoid NumPy's own
        self.ndarray, self.generic = numpy.ndarray, numpy.generic
        # NumPy's scalar types, for isinstance and issubdtype (as dtypes: the namespace's)
        self.bool_ = numpy.bool_
        self.number, self.inexact, self.floating = numpy.number, numpy.inexact, numpy.floating
        self.complexfloating, self.integer = numpy.complexfloating, numpy.integer
        self.signedinteger, self.unsignedinteger = numpy.signedinteger, numpy.unsignedinteger

    def __repr__(self) -> str:
        return f"NumPyOf({self.xp.__name__})"

    def __getattr__(self, name: str) -> Any:
        xp = self.__dict__.get("xp")
        if xp is None or name.startswith("__"):  # not made yet (a copy), or Python's protocols
            raise AttributeError(name)
        wanted = RENAMED.get(name, name)
        if wanted != name:
            fn = getattr(self, wanted)
        elif wanted in _ELEMENTWISE and hasattr(xp, wanted):
            fn = _elementwise(self, wanted)
            if name in _REDUCING:  # np.maximum.reduce, np.add.at
                fn = _Ufunc(self, name, fn)
        else:
            raise self._missing(f"np.{name}")
        setattr(self, name, fn)
        return fn

    # -- elementwise functions whose signature differs --------------------------------------------
    def round(self, a: Any, decimals: int = 0) -> Any:
        x = self.array_like(a)
        if decimals == 0:
            return self.xp.round(x)
        if _kind(self.xp, x.dtype) not in "fc":  # integers: only to tens, hundreds...
            return (
                x if decimals > 0 else self.astype(self.round(self._floating(x), decimals), x.dtype)
            )
        scale = 10.0 ** abs(decimals)  # as NumPy rounds: scaled, to the nearest even, unscaled
        if decimals > 0:
            return self.xp.round(x * scale) / scale
        return self.xp.round(x / scale) * scale

    def real(self, val: Any) -> Any:
        x = self.array_like(val)
        return self.xp.real(x) if _kind(self.xp, x.dtype) == "c" else x

    def imag(self, val: Any) -> Any:
        x = self.array_like(val)
        return self.xp.imag(x) if _kind(self.xp, x.dtype) == "c" else self.xp.zeros_like(x)

    def where(self, condition: Any, x: Any = None, y: Any = None) -> Any:
        c = self.array_like(condition)
        if x is None and y is None:
            return self.nonzero(c)
        c = c if _kind(self.xp, c.dtype) == "b" else c != 0
        x, y = self._arrays(x, y)
        return self.xp.where(c, x, y)

    def clip(
        self, a: Any, a_min: Any = None, a_max: Any = None, *, min: Any = None, max: Any = None
    ) -> Any:
        lo = a_min if min is None else min
        hi = a_max if max is None else max
        given = [v for v in (a, lo, hi) if v is not None]
        arrays = iter(self._arrays(*given))
        x = next(arrays)
        lo = None if lo is None else next(arrays)
        hi = None if hi is None else next(arrays)
        return self.xp.clip(x, lo, hi)

    def nonzero(self, a: Any) -> tuple[Any, ...]:
        return tuple(self.xp.nonzero(self.array_like(a)))

    # -- reductions -----------------------------------------------------------------------------
    def einsum(self, subscripts: str, *operands: Any, optimize: Any = False) -> Any:
        """The sums of products adgen's own code writes (``'abc,abc->ac'``: operands with the
        same subscripts, multiplied entrywise, summed over the labels the output drops);
        any other contraction has no equivalent here."""
        inputs, _, output = subscripts.replace(" ", "").partition("->")
        labels = inputs.split(",")
        if (
            not output
            and "->" not in subscripts
            or len(set(labels)) != 1
            or "." in inputs
            or not set(output) <= set(labels[0])
            or len(set(labels[0])) != len(labels[0])
        ):
            raise self._missing(f"np.einsum({subscripts!r}, ...)")
        arrays = self._arrays(*operands)
        product = arrays[0]
        for other in arrays[1:]:
            product = product * other
        summed = tuple(i for i, c in enumerate(labels[0]) if c not in output)
        kept = [c for c in labels[0] if c in output]
        total = self.xp.sum(product, axis=summed) if summed else product
        order = tuple(kept.index(c) for c in output)
        return self.xp.permute_dims(total, order) if order != tuple(range(len(order))) else total

    def bincount(self, x: Any, weights: Any = None, minlength: int = 0) -> Any:
        """Sums into positions as a one-hot product (the standard has no scatter-add): memory
        ``len(x) * minlength`` -- fine for the sizes adgen's rules use it at, slow beyond."""
        x = self.array_like(x)
        if minlength == 0:
            raise self._missing("np.bincount without minlength (a length known only from values)")
        hits = self.xp.reshape(x, (-1, 1)) == self.xp.reshape(self.xp.arange(minlength), (1, -1))
        if weights is None:
            return self.xp.sum(self.xp.astype(hits, self.xp.int64), axis=0)
        w = self.array_like(weights)
        w = self.xp.astype(w, self.xp.float64) if _kind(self.xp, w.dtype) not in "fc" else w
        return self.xp.sum(self.xp.where(hits, self.xp.reshape(w, (-1, 1)), 0.0), axis=0)

    def sum(self, a: Any, axis: Any = None, dtype: Any = None, *, keepdims: bool = False) -> Any:
        x = _numeric(self, self.array_like(a))
        return self.xp.sum(x, axis=_axes(axis), dtype=self._dtype(dtype), keepdims=keepdims)

    def prod(self, a: Any, axis: Any = None, dtype: Any = None, *, keepdims: bool = False) -> Any:
        x = _numeric(self, self.array_like(a))
        return self.xp.prod(x, axis=_axes(axis), dtype=self._dtype(dtype), keepdims=keepdims)

    def mean(self, a: Any, axis: Any = None, dtype: Any = None, *, keepdims: bool = False) -> Any:
        x = self._floating(self.array_like(a)) if dtype is None else self.astype(a, dtype)
        return self.xp.mean(x, axis=_axes(axis), keepdims=keepdims)

    def std(
        self,
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        *,
        ddof: float = 0,
        keepdims: bool = False,
    ) -> Any:
        return self._spread("std", a, axis, dtype, ddof, keepdims)

    def var(
        self,
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        *,
        ddof: float = 0,
        keepdims: bool = False,
    ) -> Any:
        return self._spread("var", a, axis, dtype, ddof, keepdims)

    def _spread(self, name: str, a: Any, axis: Any, dtype: Any, ddof: float, keepdims: bool) -> Any:
        """``np.std`` / ``np.var``: NumPy's ``ddof`` is the standard's ``correction``."""
        x = self._floating(self.array_like(a)) if dtype is None else self.astype(a, dtype)
        return getattr(self.xp, name)(x, axis=_axes(axis), correction=ddof, keepdims=keepdims)

    def max(self, a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
        x = self.array_like(a)
        reduce = self.xp.any if _kind(self.xp, x.dtype) == "b" else self.xp.max
        return reduce(x, axis=_axes(axis), keepdims=keepdims)

    def min(self, a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
        x = self.array_like(a)
        reduce = self.xp.all if _kind(self.xp, x.dtype) == "b" else self.xp.min
        return reduce(x, axis=_axes(axis), keepdims=keepdims)

    def argmax(self, a: Any, axis: int | None = None, *, keepdims: bool = False) -> Any:
        return self.xp.argmax(self.array_like(a), axis=_axes(axis), keepdims=keepdims)

    def argmin(self, a: Any, axis: int | None = None, *, keepdims: bool = False) -> Any:
        return self.xp.argmin(self.array_like(a), axis=_axes(axis), keepdims=keepdims)

    def all(self, a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
        return self.xp.all(self.array_like(a), axis=_axes(axis), keepdims=keepdims)

    def any(self, a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
        return self.xp.any(self.array_like(a), axis=_axes(axis), keepdims=keepdims)

    def count_nonzero(self, a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
        return self.xp.count_nonzero(self.array_like(a), axis=_axes(axis), keepdims=keepdims)

    def cumsum(self, a: Any, axis: int | None = None, dtype: Any = None) -> Any:
        x = self.array_like(a)
        if axis is None:
            x, axis = self.xp.reshape(x, (-1,)), 0
        return self.cumulative_sum(x, axis=axis, dtype=dtype)

    def cumprod(self, a: Any, axis: int | None = None, dtype: Any = None) -> Any:
        x = self.array_like(a)
        if axis is None:
            x, axis = self.xp.reshape(x, (-1,)), 0
        return self.cumulative_prod(x, axis=axis, dtype=dtype)

    def cumulative_sum(
        self,
        x: Any,
        /,
        *,
        axis: int | None = None,
        dtype: Any = None,
        include_initial: bool = False,
    ) -> Any:
        return self._cumulative("cumulative_sum", x, axis, dtype, include_initial)

    def cumulative_prod(
        self,
        x: Any,
        /,
        *,
        axis: int | None = None,
        dtype: Any = None,
        include_initial: bool = False,
    ) -> Any:
        return self._cumulative("cumulative_prod", x, axis, dtype, include_initial)

    def _cumulative(self, name: str, x: Any, axis: Any, dtype: Any, initial: bool) -> Any:
        x = _numeric(self, self.array_like(x))
        return self._standard(name)(x, axis=axis, dtype=self._dtype(dtype), include_initial=initial)

    def diff(
        self, a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None
    ) -> Any:
        x = self.array_like(a)
        if n == 0:
            return x
        if n < 0:
            raise ValueError(f"order must be non-negative but got {n!r}")
        axis = _axis(axis, x.ndim)

        def end(value: Any) -> list[Any]:  # prepend or append: a number is a slice of x's shape
            if value is None:
                return []
            v = self.array_like(value, x)
            return [
                self.xp.broadcast_to(v, x.shape[:axis] + (1,) + x.shape[axis + 1 :])
                if v.ndim == 0
                else v
            ]

        if prepend is not None or append is not None:  # joined to x, as NumPy does
            x = self.concat([*end(prepend), x, *end(append)], axis=axis)
        return self._standard("diff")(x, axis=axis, n=n)

    # -- products -------------------------------------------------------------------------------
    def tensordot(self, a: Any, b: Any, axes: Any = 2) -> Any:
        a, b = self._arrays(a, b)
        if not isinstance(axes, int | numpy.integer):
            xs, ys = ((v,) if isinstance(v, int | numpy.integer) else tuple(v) for v in axes)
            axes = (tuple(_axis(i, a.ndim) for i in xs), tuple(_axis(i, b.ndim) for i in ys))
        return self.xp.tensordot(a, b, axes=axes)

    def vecdot(self, x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
        a, b = self._arrays(x1, x2)
        if axis != -1:  # NumPy's axis is each argument's own (a gufunc's core axis)
            a, b = self.xp.moveaxis(a, axis, -1), self.xp.moveaxis(b, axis, -1)
        return self.xp.vecdot(a, b, axis=-1)

    def dot(self, a: Any, b: Any) -> Any:
        a, b = self._arrays(a, b)
        if a.ndim == 0 or b.ndim == 0:
            return a * b
        return self.xp.tensordot(a, b, axes=((a.ndim - 1,), (max(b.ndim - 2, 0),)))

    def inner(self, a: Any, b: Any) -> Any:
        a, b = self._arrays(a, b)
        if a.ndim == 0 or b.ndim == 0:
            return a * b
        return self.xp.tensordot(a, b, axes=((a.ndim - 1,), (b.ndim - 1,)))

    def outer(self, a: Any, b: Any) -> Any:
        a, b = self._arrays(a, b)
        return self.xp.reshape(a, (-1, 1)) * self.xp.reshape(b, (1, -1))

    def cross(
        self,
        a: Any,
        b: Any,
        axisa: int = -1,
        axisb: int = -1,
        axisc: int = -1,
        axis: int | None = None,
    ) -> Any:
        if axis is not None:
            axisa = axisb = axisc = axis
        a, b = self._arrays(a, b)
        a, b = self.xp.moveaxis(a, axisa, -1), self.xp.moveaxis(b, axisb, -1)
        if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
            raise ValueError("incompatible dimensions for cross product (dimension must be 2 or 3)")
        a0, a1, a2 = self._components(a)
        b0, b1, b2 = self._components(b)
        z = a0 * b1 - a1 * b0
        if a.shape[-1] == b.shape[-1] == 2:  # NumPy's 2-vectors: the z component alone
            return z
        out = self.xp.stack(
            self.xp.broadcast_arrays(a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z), axis=-1
        )
        return self.xp.moveaxis(out, -1, axisc)

    def _components(self, v: Any) -> tuple[Any, Any, Any]:
        parts = self.xp.unstack(v, axis=-1)
        return parts[0], parts[1], parts[2] if len(parts) == 3 else self.xp.zeros_like(parts[0])


class _LinalgOf:
    """``np.linalg`` over the namespace's ``linalg`` extension."""

    LinAlgError = numpy.linalg.LinAlgError

    # the extension's functions that are np.linalg's under the same name and arguments
    SAME = frozenset(
        "cholesky det eig eigvals inv matrix_norm matrix_power matrix_transpose matmul outer "
        "slogdet solve svdvals tensordot vector_norm".split()
    )

    def __init__(self, np_: NumPyOf) -> None:
        self._np = np_

    def __getattr__(self, name: str) -> Any:
        if name in self.SAME:
            fn = _converting(self._np, self._np._standard(f"linalg.{name}"))
            setattr(self, name, fn)
            return fn
        raise self._np._missing(f"np.linalg.{name}")

    def _hermitian(self, a: Any, UPLO: str) -> Any:
        """The Hermitian matrix NumPy reads from the triangle ``UPLO`` of ``a``."""
        np_ = self._np
        x = np_.array_like(a)
        part = np_.xp.tril if UPLO.upper() == "L" else np_.xp.triu
        strict = part(x, k=-1 if UPLO.upper() == "L" else 1)
        return part(x) + np_.xp.conj(np_.xp.matrix_transpose(strict))

    def eigh(self, a: Any, UPLO: str = "L") -> Any:
        return self._np._standard("linalg.eigh")(self._hermitian(a, UPLO))

    def eigvalsh(self, a: Any, UPLO: str = "L") -> Any:
        return self._np._standard("linalg.eigvalsh")(self._hermitian(a, UPLO))

    def svd(
        self, a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
    ) -> Any:
        np_, xp = self._np, self._np.xp
        x = np_.array_like(a)
        if hermitian:  # NumPy's: from the eigendecomposition, the signs moved into Vh
            if not compute_uv:
                return xp.flip(xp.sort(xp.abs(self.eigvalsh(x)), axis=-1), axis=-1)
            w, u = self.eigh(x)
            order = xp.flip(xp.argsort(xp.abs(w), axis=-1), axis=-1)
            w = xp.take_along_axis(w, order, axis=-1)
            u = xp.take_along_axis(u, xp.broadcast_to(order[..., None, :], u.shape), axis=-1)
            vh = xp.conj(xp.matrix_transpose(u * xp.sign(w)[..., None, :]))
            return SVDResult(u, xp.abs(w), vh)
        if not compute_uv:
            return np_._standard("linalg.svdvals")(x)
        return np_._standard("linalg.svd")(x, full_matrices=full_matrices)

    def pinv(
        self, a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NO_VALUE
    ) -> Any:
        if rcond is None:
            rcond = 1e-15 if rtol is _NO_VALUE else rtol  # NumPy's default, or the standard's
        return self._np._standard("linalg.pinv")(self._np.array_like(a), rtol=rcond)

    def matrix_rank(
        self, A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None
    ) -> Any:
        x = self._np.array_like(A)
        if tol is None:
            return self._np._standard("linalg.matrix_rank")(x, rtol=rtol)
        s = self.svd(x, compute_uv=False, hermitian=hermitian)
        return self._np.count_nonzero(s > tol, axis=-1)

    def qr(self, a: Any, mode: str = "reduced") -> Any:
        if mode not in ("reduced", "complete", "r"):
            raise self._np._missing(f"np.linalg.qr(mode={mode!r})")
        result = self._np._standard("linalg.qr")(
            self._np.array_like(a), mode="reduced" if mode == "r" else mode
        )
        return result[1] if mode == "r" else result

    def diagonal(self, x: Any, /, *, offset: int = 0) -> Any:
        return self._np.diagonal(x, offset=offset, axis1=-2, axis2=-1)

    def trace(self, x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
        return self._np.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)

    def cross(self, x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
        return self._np.cross(x1, x2, axis=axis)

    def vecdot(self, x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
        return self._np.vecdot(x1, x2, axis=axis)

    def multi_dot(self, arrays: Any) -> Any:
        return functools.reduce(self._np.matmul, arrays)

    def norm(self, x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
        np_ = self._np
        x = np_._floating(np_.array_like(x))
        if axis is None:
            if ord is None:  # the 2-norm of all the values, whatever the dimensions
                return np_._standard("linalg.vector_norm")(x, axis=None, keepdims=keepdims)
            if x.ndim not in (1, 2):
                raise ValueError("Improper number of dimensions to norm.")
            axis = tuple(range(x.ndim))
        axes = _axes(axis)
        if isinstance(axes, int) or len(axes) == 1:
            ord = 2 if ord is None else ord
            return np_._standard("linalg.vector_norm")(x, axis=axes, keepdims=keepdims, ord=ord)
        if len(axes) != 2:
            raise ValueError("Improper number of dimensions to norm.")
        rows, cols = (_axis(a, x.ndim) for a in axes)
        x = np_.xp.moveaxis(x, (rows, cols), (-2, -1))
        ord = "fro" if ord is None else ord
        out = np_._standard("linalg.matrix_norm")(x, keepdims=keepdims, ord=ord)
        return np_.xp.moveaxis(out, (-2, -1), (rows, cols)) if keepdims else out


class _Ufunc:
    """A NumPy ufunc's methods adgen's code uses: ``reduce``, ``accumulate``, ``outer``;
    ``at`` (adding into repeated positions) is refused."""

    def __init__(self, np_: NumPyOf, name: str, fn: Callable[..., Any]) -> None:
        self._np, self._name, self._fn = np_, name, fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def reduce(
        self, array: Any, axis: Any = 0, dtype: Any = None, *, keepdims: bool = False
    ) -> Any:
        reducer = getattr(self._np, _REDUCING[self._name])
        if dtype is not None:
            array = self._np.astype(array, dtype)
        return reducer(array, axis=axis, keepdims=keepdims)

    def accumulate(self, array: Any, axis: int = 0, dtype: Any = None) -> Any:
        if self._name in ("maximum", "minimum"):  # no cumulative max in the standard
            return self._running(self._np.array_like(array), axis)
        if self._name not in _ACCUMULATING:
            raise self._np._missing(f"np.{self._name}.accumulate")
        return getattr(self._np, _ACCUMULATING[self._name])(array, axis=axis, dtype=dtype)

    def _running(self, x: Any, axis: int) -> Any:
        """The running maximum (minimum) along ``axis`` by doubling: log2(n) steps, each
        combining every entry with the one ``step`` before it (the first ones unchanged)."""
        xp = self._np.xp
        x = xp.moveaxis(x, axis, -1)
        n, step = x.shape[-1], 1
        while step < n:
            shifted = xp.concat([x[..., :step], x[..., :-step]], axis=-1)
            x = self._fn(x, shifted)
            step *= 2
        return xp.moveaxis(x, -1, axis)

    def outer(self, a: Any, b: Any) -> Any:
        a, b = self._np._arrays(a, b)
        a = self._np.xp.reshape(a, tuple(a.shape) + (1,) * b.ndim)
        return self._fn(a, b)

    def at(self, *args: Any) -> Any:
        raise self._np._missing(f"np.{self._name}.at (adding into repeated positions)")


def _elementwise(np_: NumPyOf, name: str) -> Callable[..., Any]:
    """The namespace's function ``name`` with NumPy's arguments: Python numbers and NumPy
    values made arrays, promoted as NumPy does (to float64 where NumPy computes in floats)."""
    fn = getattr(np_.xp, name)
    floating = name in _FLOATING

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        arrays = np_._arrays(*args)
        if floating:
            arrays = [np_._floating(a) for a in arrays]
        return fn(*arrays)

    return call


def _converting(np_: NumPyOf, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its array arguments given as NumPy values or sequences made arrays (its
    Python integers, such as matrix_power's ``n``, stay)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*(a if isinstance(a, int) else np_.array_like(a) for a in args), **kwargs)

    return call


def _numeric(np_: NumPyOf, x: Any) -> Any:
    """``x`` as NumPy sums it: booleans count as the default integer."""
    return np_.xp.astype(x, np_.xp.int64) if _kind(np_.xp, x.dtype) == "b" else x


def _flat(values: Any) -> Any:
    for v in values:
        if isinstance(v, list | tuple):
            yield from _flat(v)
        else:
            yield v


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int | numpy.integer):
        return (operator.index(shape),)
    return tuple(operator.index(n) for n in shape)


def _axes(axis: Any) -> Any:
    """An axis argument as the standard takes it: None, an int or a tuple of ints."""
    if axis is None:
        return None
    if isinstance(axis, tuple | list):
        return tuple(operator.index(a) for a in axis)
    if _is_array(axis) and axis.ndim == 1:  # (np.argsort(axes): a permutation's inverse)
        return tuple(operator.index(axis[i]) for i in range(axis.shape[0]))
    return operator.index(axis)


def _axis(axis: Any, ndim: int) -> int:
    """``axis`` of ``ndim`` dimensions, counted from the start."""
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)


def _device(like: Any) -> dict[str, Any]:
    return {"device": like.device} if _is_array(like) else {}


def _is_dtype(xp: Any, value: Any) -> bool:
    return not _is_array(value) and type(value) is type(xp.float64)


def _kind(xp: Any, dtype: Any) -> str:
    for letter, name in (
        ("b", "bool"),
        ("i", "signed integer"),
        ("u", "unsigned integer"),
        ("f", "real floating"),
        ("c", "complex floating"),
    ):
        if xp.isdtype(dtype, name):
            return letter
    return "O"


def namespace_of(*values: Any) -> Any:
    """The array-API namespace of the first value that is an array of a library NumPy's
    protocols do not reach (no ``__array_function__``), else None."""
    for v in values:
        if (
            _is_array(v)
            and not hasattr(v, "__array_function__")
            and not isinstance(v, numpy.ndarray)
        ):
            return v.__array_namespace__()
    return None


# the standard's names whose NumPy function has another name (the inverse of RENAMED, for
# the names NumPy spells differently)
_NUMPY_NAME = {
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "atan2": "arctan2",
    "pow": "power",
    "concat": "concatenate",
    "bitwise_invert": "invert",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
    "permute_dims": "transpose",
}


def numpy_counterpart(fn: Any) -> Any:
    """The NumPy function an array-API namespace's function ``fn`` is (``xp.asin`` of
    ``array_api_strict``: ``np.arcsin``), so that code written against the standard has
    NumPy's rules; None for anything else. Only the functions whose NumPy counterpart takes
    the same arguments (NumPy 2 accepts the standard's spellings) are matched.
    """
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__name__", None)
    if not isinstance(module, str) or not isinstance(name, str):
        return None
    top = sys.modules.get(module.partition(".")[0])
    if top is None or top is numpy or not hasattr(top, "__array_api_version__"):
        return None
    if (
        getattr(top, name, None) is not fn
        and getattr(getattr(top, "linalg", None), name, None) is not fn
    ):
        return None  # not one of the namespace's public functions
    # (a namespace's own function first: array_api_strict.linalg imports `reshape` too)
    home = numpy if getattr(top, name, None) is fn else numpy.linalg
    counterpart = getattr(home, _NUMPY_NAME.get(name, name), None)
    return counterpart if callable(counterpart) else None


# array-api-compat's wrappers in its NumPy namespace (``array_api_compat.numpy``, what
# ``array_api_compat.array_namespace`` gives for NumPy arrays) that compute what NumPy 2's
# function of the same name computes, with the same arguments (each keyword the wrapper takes
# NumPy's function takes with the same meaning; ``std``/``var``'s ``correction`` is NumPy's
# alias of ``ddof``): they take NumPy's rules. Functions of that namespace that are NumPy's own
# (``xp.sum``, ``xp.exp``) have their rules already.
_COMPAT_SAME = frozenset(
    "asarray astype ceil floor trunc std var matmul permute_dims matrix_transpose tensordot "
    "sign sort cumulative_sum cumulative_prod full ones zeros full_like ones_like zeros_like "
    "empty empty_like arange linspace eye take_along_axis count_nonzero nonzero clip "
    "reshape".split()
)
_COMPAT_LINALG_SAME = frozenset(
    "cholesky cross diagonal eigh matrix_norm outer qr slogdet svd trace matmul "
    "matrix_transpose tensordot".split()
)
# the wrappers that do not compute what NumPy's function of their name computes: why
_COMPAT_DIFFERENT = {
    "argsort": "it sorts stably by default (NumPy's argsort does not: ties come out in "
    "another order) and takes `descending`",
    "linalg.pinv": "its default `rtol` is not NumPy's `rcond` default",
    "linalg.solve": "it reimplements NumPy's solve for stacks of vectors",
    "linalg.eig": "it reimplements NumPy's eig (its result's dtype differs)",
    "linalg.eigvals": "it reimplements NumPy's eigvals (its result's dtype differs)",
    "linalg.matrix_rank": "it computes the rank from singular values of its own tolerance",
    "linalg.svdvals": "it is np.linalg.svd(x, compute_uv=False), which has no rule",
}


def _compat_numpy(fn: Any) -> tuple[Any, str] | None:
    """``(array-api-compat's NumPy namespace, name)`` of one of that namespace's wrappers
    (``"linalg.vector_norm"`` for its linalg's), from any copy of array-api-compat (scikit-
    learn and SciPy vendor one); None for anything else."""
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__name__", None)
    if not isinstance(module, str) or not isinstance(name, str):
        return None
    base, found, _ = module.partition("array_api_compat.")
    if not found or (base and not base.endswith(".")):
        return None
    namespace = sys.modules.get(base + "array_api_compat.numpy")
    if namespace is None:
        return None
    if getattr(namespace, name, None) is fn:
        return namespace, name
    if getattr(getattr(namespace, "linalg", None), name, None) is fn:
        return namespace, "linalg." + name
    return None


def compat_counterpart(fn: Any) -> Any:
    """The NumPy function a wrapper of array-api-compat's NumPy namespace computes
    (``array_api_compat.numpy.std``: ``np.std``, its ``correction`` NumPy's ``ddof``), where
    they are the same function of the same arguments; None for anything else (and for the
    wrappers that differ: :func:`compat_refusal`)."""
    found = _compat_numpy(fn)
    if found is None:
        return None
    _, name = found
    home, _, short = name.rpartition(".")
    same = _COMPAT_LINALG_SAME if home else _COMPAT_SAME
    if short not in same:
        return None
    counterpart = getattr(numpy.linalg if home else numpy, short, None)
    return counterpart if callable(counterpart) else None


def compat_refusal(fn: Any) -> str | None:
    """Why adgen has no rule for a wrapper of array-api-compat's NumPy namespace (it reads no
    library's wrapper source: they dispatch on the arrays' library); None for anything else,
    and for the wrappers :func:`compat_counterpart` maps."""
    found = _compat_numpy(fn)
    if found is None or compat_counterpart(fn) is not None:
        return None
    _, name = found
    reason = _COMPAT_DIFFERENT.get(name, "adgen has no rule of the NumPy function it wraps")
    return f"array-api-compat's `{name}` of its NumPy namespace: {reason}"


def compat_getter(fn: Any) -> bool:
    """Is ``fn`` array-api-compat's ``array_namespace`` (or its alias ``get_namespace``), of
    any copy of it?"""
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", None)
    top = module.partition("array_api_compat.")
    helpers = top[1] and (not top[0] or top[0].endswith(".")) and top[2] == "common._helpers"
    return bool(helpers) and name in ("array_namespace", "get_namespace")


def namespace_with_rules(module: Any) -> bool:
    """Do the functions of the array namespace ``module`` have rules -- NumPy itself, a
    library that follows only the standard (``array_api_strict``: :func:`numpy_counterpart`),
    array-api-compat's NumPy namespace (:func:`compat_counterpart`)?"""
    if module is numpy:
        return True
    name = getattr(module, "__name__", None)
    if not isinstance(name, str) or not hasattr(module, "__array_api_version__"):
        return False
    base, found, rest = name.partition("array_api_compat.")
    if found and (not base or base.endswith(".")):
        return rest == "numpy"
    if sys.modules.get(name.partition(".")[0]) is not module:
        return False
    namespace: Any = module
    try:
        sample = namespace.asarray(0.0)
    except Exception:
        return False
    return not hasattr(sample, "__array_function__")  # (its arrays only follow the standard)


def casts_bounds(fn: Any) -> bool:
    """Is ``fn`` array-api-compat's ``clip`` of its NumPy namespace? It casts its bounds to
    ``x``'s dtype where NumPy's promotes: the same as ``np.clip`` only for a floating ``x``
    and bounds of its dtype or Python numbers (checked where it is called)."""
    found = _compat_numpy(fn)
    return found is not None and found[1] == "clip"
