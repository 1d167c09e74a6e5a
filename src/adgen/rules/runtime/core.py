"""The helpers shared by every family of rules and by the code generators.

A template's questions about shapes (``rt.known_ndim``...), answered when adgen writes the
code; ``rt.zero_safe``, through which every rule registered ``singular=True`` passes its
contributions; the cotangents of broadcasting and of sums (``rt.unbroadcast``,
``rt.unreduce``, and ``rt.Like``, the shape and dtype reverse mode keeps of an array);
zero derivatives and derivatives of their primal's type (``rt.zeros_like``,
``rt.cast_like``); and the derivatives of lists that forward and reverse mode build
(``rt.accumulate``, ``rt.split_last``...). ``_normalize_axes``, ``_sum_to`` and
``_float_dtype`` serve the helpers of the other modules.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .libraries import (
    as_array,
    cast,
    dtype_kind,
    eager,
    foreign,
    full_for,
    numpy_dtype,
    zeros_for,
)

Axis = int | tuple[int, ...] | None


# -- what a rule's template may ask of its operands' shapes ----------------------------------------
# When adgen specialises a derivative for the shapes of a call's arguments it knows the shape
# and dtype of most values before the code runs. A template asks with these functions; adgen
# replaces each call by the answer (a constant) and decides the ``if`` tests built on them, so
# none of them is ever called by generated code. Called at run time they answer "not known"
# (-1 or None).


def known_ndim(x: Any) -> int:
    """In a template: the number of axes of ``x`` when it is known at transform time, else -1."""
    return -1


def known_shape(x: Any) -> tuple[int, ...] | None:
    """In a template: the shape of ``x`` when it is known at transform time."""
    return None


def known_scalar(x: Any) -> bool:
    """In a template: is ``x`` provably a number (a Python or NumPy scalar: its broadcast
    class is empty, see :mod:`adgen.middle.shapes`)? Then ``a if x != 0 else b`` may test it."""
    return False


def known_constant(x: Any) -> Any:
    """In a template: the value of ``x`` when the call passes a number or a string there
    (``x ** 2``, ``ord="fro"``), else None (a variable, a name from outside the function)."""
    return None


def known_real(x: Any) -> bool:
    """In a template: is ``x`` known to be real (not complex) before the code runs? Then the
    template may use its formula for real values; else the one for complex values, which
    must be right for real values too."""
    return False


# -- singular points ------------------------------------------------------------------------------
# A rule whose partial derivative can be infinite or NaN where the function itself is finite
# (sqrt at 0, arcsin at 1, arctan2 at (0, 0)) gives ``0 * inf = nan`` where its tangent or
# cotangent entry is exactly zero. Such a rule is registered ``singular=True`` and each of its
# contributions is then written ``rt.zero_safe(contribution, seed)``. adgen differentiates
# that code again (second order), so both helpers have rules (adgen.rules.adjoints).

_max = np.maximum.reduce  # NaN in, NaN out; no overflow (a sum could), no error state


def _has_nan(r: NDArray[Any]) -> bool:
    """Does the (non-empty) array hold a NaN (in either part, for complex values)?"""
    if r.dtype.kind == "c":
        return bool(_max(np.isnan(r), axis=None))
    return math.isnan(_max(r, axis=None))


def zero_safe(r: Any, seed: Any) -> Any:
    """``r``, the contribution of a tangent or cotangent ``seed`` (``seed * partial``), with
    its NaN entries set to 0 where ``seed`` is 0: a zero seed contributes exactly zero, even
    where the partial derivative is infinite or NaN. Entries with a nonzero seed keep their
    value (``inf`` or NaN where the derivative does not exist).

    Costs one reduction over ``r`` when it holds no NaN (the common case); ``r``'s shape
    holds ``seed``'s (``seed`` is one of its factors).

    >>> zero_safe(np.array([np.nan, np.inf, np.nan, 0.5]), np.array([0.0, 1.0, 2.0, 3.0]))
    array([0. , inf, nan, 0.5])
    >>> zero_safe(math.nan, 0.0), zero_safe(math.nan, 1.0)
    (0.0, nan)
    """
    if isinstance(r, np.ndarray):
        if r.size == 0 or not _has_nan(r):
            return r
        return np.where(np.isnan(r) & (as_array(seed) == 0), 0, r)
    if not eager(r, seed):  # lazy values: no test of them in Python
        return np.where(np.isnan(r) & (seed == 0), 0, r)
    if r == r or seed != 0:
        return r
    return type(r)(0)


def zero_safe_tangent(t: Any, r: Any, seed: Any) -> Any:
    """The derivative of ``zero_safe(r, seed)`` in ``r``, applied to ``t`` (a tangent or
    cotangent of ``r``'s shape): ``t``, with 0 where ``zero_safe`` replaced a NaN by 0. It
    is linear in ``t``; the mask is piecewise constant in ``r`` and ``seed``.

    >>> nans = np.array([math.nan, math.nan])
    >>> zero_safe_tangent(np.array([5.0, 6.0]), nans, np.array([0.0, 1.0]))
    array([0., 6.])
    """
    if isinstance(r, np.ndarray):
        if r.size == 0 or not _has_nan(r):
            return t
        return np.where(np.isnan(r) & (as_array(seed) == 0), 0, t)
    if not eager(r, seed):
        return np.where(np.isnan(r) & (seed == 0), 0, t)
    if r == r or seed != 0:
        return t
    return np.zeros_like(t) if isinstance(t, np.ndarray) else type(t)(0)


# -- broadcasting and sums -------------------------------------------------------------------------


def _normalize_axes(axis: Axis, ndim: int) -> tuple[int, ...]:
    """Return ``axis`` as a sorted tuple of non-negative axes of an ``ndim``-d array.

    >>> _normalize_axes(None, 3), _normalize_axes(-1, 3), _normalize_axes((2, 0), 3)
    ((0, 1, 2), (2,), (0, 2))
    """
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError("repeated axis")
    return tuple(sorted(out))


def unbroadcast(g: ArrayLike, x: ArrayLike) -> ArrayLike:
    """Sum the cotangent ``g`` of a broadcast result back down to ``np.shape(x)``.

    Leading axes that broadcasting added are summed away; axes where ``x`` has size 1 are
    summed with ``keepdims``. ``g`` itself is returned when the shapes already agree.

    >>> g = np.ones((2, 3))
    >>> unbroadcast(g, np.zeros(3)).tolist()
    [2.0, 2.0, 2.0]
    >>> unbroadcast(g, np.zeros((2, 1))).tolist()
    [[3.0], [3.0]]
    >>> float(unbroadcast(g, 1.0))
    6.0
    >>> unbroadcast(g, g) is g
    True
    """
    # attribute access first: this runs once per broadcasting operation, often on scalars
    x_shape = getattr(x, "shape", None)
    g_shape = getattr(g, "shape", None)
    if x_shape is None:
        x_shape = np.shape(x)
    if g_shape is None:
        g_shape = np.shape(g)
    if g_shape == x_shape:
        return g
    return _unbroadcast_to(g, g_shape, x_shape)


def _unbroadcast_to(g: ArrayLike, g_shape: tuple[int, ...], x_shape: tuple[int, ...]) -> Any:
    """:func:`unbroadcast` once the shapes are known to differ."""
    if not x_shape:
        return np.sum(g)
    extra = len(g_shape) - len(x_shape)
    if extra < 0:  # ``g`` has fewer axes (e.g. a scalar zero cotangent): broadcast it up
        return np.broadcast_to(g, x_shape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(extra)))
    axes = tuple(
        i for i, (n, m) in enumerate(zip(x_shape, np.shape(g), strict=True)) if n == 1 and m != 1
    )
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    return g


class Like:
    """The shape and dtype of an array, kept instead of the array where reverse mode needs
    only those (``rt.unbroadcast(g, x)``, ``rt.unreduce(g, x)``), so the array can be freed.

    >>> like = Like(np.zeros((2, 3), dtype=np.float32))
    >>> like.shape, like.dtype, unbroadcast(np.ones((4, 2, 3)), like).shape
    ((2, 3), dtype('float32'), (2, 3))
    """

    __slots__ = ("shape", "dtype", "array")

    def __init__(self, x: ArrayLike) -> None:
        self.shape = np.shape(x)
        dtype = getattr(x, "dtype", None)
        self.dtype = np.result_type(x) if dtype is None else dtype
        # another library's array is kept: arrays made for it are made on its side (a Dask
        # array is a graph, not its values; a GPU array stays on its device)
        self.array = x if foreign(x) else None


def dtype_of(x: Any) -> Any:
    """The dtype of ``x`` as NumPy makes an array of it: ``np.result_type`` of an array, a
    number or a dtype, and of the items of a list or tuple (``np.result_type`` reads a list
    as the fields of a structured dtype).

    >>> dtype_of(np.ones(2, dtype=np.float32)), dtype_of([0.5, 1.5]), dtype_of([[1, 2]])
    (dtype('float32'), dtype('float64'), dtype('int64'))
    """
    if isinstance(x, (list, tuple)):
        return np.result_type(*[dtype_of(item) for item in x]) if x else np.dtype(np.float64)
    return np.result_type(x)


class Refusal(Exception):  # noqa: N818 (what adgen says, not a failure of the code)
    """adgen's refusal decided when the derivative code runs: the argument kinds of the call
    decide whether the code is one adgen differentiates (``y += v`` changes an array in
    place where ``y`` is an array, makes a new number where it is one). adgen reports it
    as the same ``UnsupportedSyntaxError`` a refusal decided when transforming is, naming
    the user's line (:func:`adgen.pipeline.run`)."""

    def __init__(self, what: str, hint: str, kind: str = "") -> None:
        self.what, self.hint, self.kind = what, hint, kind
        message = what if kind else f"adgen does not support {what}"
        super().__init__(f"{message} (hint: {hint})")


def refuse_unless(test: Any, what: str, hint: str, kind: str = "") -> None:
    """adgen's check in generated code: refuse (:class:`Refusal`) unless ``test`` holds. A
    call, not an ``assert``: the check runs under ``python -O`` too. ``kind``: the class of
    adgen's error to report (``what`` its whole message), where not the plain refusal.

    >>> refuse_unless(True, "an update of `z`", "copy z")
    >>> refuse_unless(False, "an update of `z`", "copy z")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    Refusal: adgen does not support an update of `z` (hint: copy z)
    """
    if not test:
        raise Refusal(what, hint, kind)


def expect(test: Any, message: str) -> None:
    """Raise ``ValueError(message)`` unless ``test`` holds: an error Python itself raises
    running the function as written (``a, b = v`` of a ``v`` of three rows), checked where
    adgen's code would otherwise go on (under ``python -O`` too).

    >>> expect(True, "too many values to unpack (expected 2)")
    >>> expect(False, "too many values to unpack (expected 2)")
    Traceback (most recent call last):
    ...
    ValueError: too many values to unpack (expected 2)
    """
    if not test:
        raise ValueError(message)


def saved_shape(x: Any) -> Any:
    """What reverse mode saves in a loop of a value it reads back only for its shape and
    kind (:mod:`adgen.backend.codeopt.save_shapes_only`): :class:`Like` of an array or a
    number, the value itself otherwise (a list, a tuple, ``None``, a ``range`` a loop runs
    over, any other object).

    >>> like = saved_shape(np.zeros((2, 3), dtype=np.complex64))
    >>> like.shape, is_complex(like), unbroadcast(np.ones((4, 2, 3)), like).shape
    ((2, 3), True, (2, 3))
    >>> saved_shape([1.0, 2.0]), saved_shape(None), saved_shape(range(2, -1, -1))
    ([1.0, 2.0], None, range(2, -1, -1))
    """
    if isinstance(x, (numbers.Number, np.generic)) or (hasattr(x, "shape") and hasattr(x, "dtype")):
        return Like(x)
    return x


def unreduce(g: ArrayLike, x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> NDArray[Any]:
    """Broadcast ``g`` back to ``np.shape(x)``: the adjoint of ``np.sum(x, axis, keepdims)``.

    Returns a read-only broadcast view.

    >>> x = np.zeros((2, 3))
    >>> unreduce(np.array([1.0, 2.0]), x, axis=-1).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    >>> unreduce(5.0, x).tolist()
    [[5.0, 5.0, 5.0], [5.0, 5.0, 5.0]]
    >>> unreduce(np.array([[1.0, 2.0, 3.0]]), x, axis=0, keepdims=True).tolist()
    [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    """
    shape = getattr(x, "shape", None)
    if shape is None:
        shape = np.shape(x)
    if not shape:  # a scalar: nothing was reduced
        return g  # type: ignore[return-value]
    if axis is None and not keepdims:
        dtype = np.result_type(g, x.dtype if type(x) is Like else x)
        if type(x) is Like:
            return full_for(shape, g, dtype, x.array)
        return full_for(shape, g, dtype, x)
    if keepdims or axis is None:
        return np.broadcast_to(g, shape)
    return np.broadcast_to(np.expand_dims(g, _normalize_axes(axis, len(shape))), shape)


# -- zero derivatives, and derivatives of their primal's type --------------------------------------


def cast_like(g: Any, x: Any, protected: tuple[Any, ...] | list[Any] = ()) -> Any:
    """A derivative ``g`` returned as the derivative of ``x`` is returned by adgen: a Python
    float for a Python float, ``x``'s type for a NumPy scalar, an array of ``x``'s shape and
    dtype for an array (a fresh one if ``g`` is ``x``, read-only, or may share memory with an
    array of ``protected``); pairwise for tuples; anything else as it is. adgen's API returns
    every derivative through it, and so does a standalone module (``adgen.export``).

    A derivative computed from arrays of another library (Dask, CuPy) stays in that library
    with ``x``'s shape and dtype, whatever ``x`` is: a lazy derivative is not computed here.

    >>> cast_like(np.float64(5.5), 2.0)
    5.5
    >>> type(cast_like(5.5, np.float32(2.0))).__name__
    'float32'
    >>> cast_like(np.ones(2), np.zeros((3, 2), dtype=np.float32)).dtype
    dtype('float32')
    >>> [type(v).__name__ for v in cast_like((np.float64(1.0), 2.0), (1.0, np.float64(0.5)))]
    ['float', 'float64']
    """
    if type(g) is np.ndarray and type(x) is np.ndarray and not protected:
        if g.shape == x.shape and (g.dtype is x.dtype or g.dtype == x.dtype):
            # (what it should be already: the common case, no other test needed)
            return g.copy() if g is x or not g.flags.writeable else g
    if foreign(g) and not foreign(x):  # computed from another library's arrays: kept there
        shape = np.shape(x)
        if tuple(g.shape) != shape:
            g = _namespace(g).broadcast_to(g, shape)
        dtype = x.dtype if isinstance(x, (np.ndarray, np.generic)) else np.dtype(np.float64)
        return g if numpy_dtype(g.dtype) == dtype else cast(g, dtype)
    if type(x) is float:
        return g if type(g) is float else float(g)
    if type(x) is complex:
        return g if type(g) is complex else complex(g)
    if isinstance(x, np.ndarray):  # a few attribute reads when g is what it should be
        if type(g) is not np.ndarray:
            g = as_array(g)
        if g.shape != x.shape:
            g = np.broadcast_to(g, x.shape)
        if g.dtype is not x.dtype and g.dtype != x.dtype:
            return cast(g, x.dtype)
        if (
            g is x
            or not g.flags.writeable
            or (
                protected
                and any(isinstance(p, np.ndarray) and np.may_share_memory(g, p) for p in protected)
            )
        ):
            return g.copy()
        return g
    if isinstance(x, np.generic):
        return x.dtype.type(g)
    if foreign(x):  # another library's array: g in its library, with x's shape and dtype
        if type(g) is not type(x):
            g = g + _namespace(x).zeros_like(x)
        if tuple(g.shape) != tuple(x.shape):
            g = _namespace(x).broadcast_to(g, x.shape)
        return g if g.dtype == x.dtype else cast(g, x.dtype)
    if type(x) is tuple and type(g) is tuple and len(g) == len(x):
        return tuple(cast_like(a, b, protected) for a, b in zip(g, x))
    return g


def is_inexact(x: Any) -> bool:
    """Is ``x`` an array (or NumPy number) of a floating or complex dtype?

    >>> is_inexact(np.ones(2)), is_inexact(np.arange(2)), is_inexact(np.float32(1.0))
    (True, False, True)
    """
    return hasattr(x, "dtype") and dtype_kind(x) in "fc"


def bounds_kept(x: Any, *bounds: Any) -> bool:
    """Does array-api-compat's ``clip(x, *bounds)`` compute ``np.clip``'s numbers: ``x`` an
    array of a floating or complex dtype, and every bound None, a Python number, or an array
    (or NumPy number) of ``x``'s dtype? (It casts the bounds to ``x``'s dtype, where
    ``np.clip`` promotes.)

    >>> x = np.ones(2)
    >>> bounds_kept(x, 0.0, x), bounds_kept(x, None, np.float32(1)), bounds_kept(x.astype(int), 0)
    (True, False, False)
    """
    if not is_inexact(x):
        return False
    return all(
        b is None or type(b) in (int, float) or getattr(b, "dtype", None) == x.dtype for b in bounds
    )


def is_complex(x: Any) -> bool:
    """Is ``x`` a complex number or array (or a list or tuple holding one)?

    >>> is_complex(1j), is_complex(np.ones(2)), is_complex((np.ones(1), 2j)), is_complex("s")
    (True, False, True, False)
    """
    if isinstance(x, (list, tuple)):
        return any(is_complex(item) for item in x)
    if isinstance(x, (complex, np.complexfloating)):
        return True
    return hasattr(x, "dtype") and dtype_kind(x) == "c"


def real_like(g: Any, x: Any) -> Any:
    """``g`` as a cotangent of ``x``: its real part (``np.real(g)``) if ``x`` is real, ``g``
    itself if ``x`` is complex (``x`` may be :func:`is_complex` of the value, a bool). Reverse
    mode writes it where a share of a statement touching complex values goes to a value that
    may be either (known only when the code runs). Lists and tuples item by item.

    >>> real_like(np.array([1.0 + 2.0j]), np.ones(1)), real_like(1.0 + 2.0j, True)
    (array([1.]), (1+2j))
    >>> [float(v) for v in real_like([1j, 2.0 + 1j], False)]
    [0.0, 2.0]
    """
    if x is True or (x is not False and is_complex(x)):
        return g
    if isinstance(g, (list, tuple)):
        return type(g)(real_like(item, False) for item in g)
    return np.real(g)


def _namespace(x: Any) -> Any:
    """The functions to apply to ``x``: NumPy's (they reach Dask and CuPy arrays through its
    protocols), or an array-API library's own namespace."""
    if hasattr(x, "__array_function__") or not hasattr(x, "__array_namespace__"):
        return np
    return x.__array_namespace__()


def zeros_like(x: Any) -> Any:
    """A zero derivative for ``x``: ``0.0`` for Python numbers (and for ``None``, a name not
    yet bound), else zeros of ``x``'s shape in its floating dtype.

    >>> zeros_like(3.0), zeros_like(None)
    (0.0, 0.0)
    >>> zeros_like(np.ones(2, dtype=np.float32)).dtype
    dtype('float32')
    >>> zeros_like(np.arange(2)).tolist()
    [0.0, 0.0]
    >>> zeros_like((np.ones(2), 1.0))
    (array([0., 0.]), 0.0)
    """
    if x is None or isinstance(x, (bool, int, float)):
        return 0.0
    if isinstance(x, list):
        return [zeros_like(e) for e in x]
    if isinstance(x, tuple):  # a function's tuple result
        return tuple(zeros_like(e) for e in x)
    if type(x) is Like:
        return zeros_for(x.shape, x.dtype if x.dtype.kind in "fc" else np.float64, x.array)
    a = as_array(x)
    return np.zeros_like(a, dtype=a.dtype if dtype_kind(a) in "fc" else np.float64)


def read_back(value: Any, stored: Any) -> Any:
    """``value``, the result of a call run as written that was given an object the function
    stored ``stored`` (a tuple of values) into: it may hold them, with no derivative through
    the call (``vars(self)["W"]`` after ``self.W = p * 2``). Its rule refuses a
    differentiated value among ``stored`` where the result reaches the derivative.

    >>> read_back(3.0, (1.0, 2.0))
    3.0
    """
    return value


def copy_of(x: Any) -> Any:
    """A copy of ``x`` no later write into ``x`` changes: ``np.copy(x)`` (a NumPy array, 0-d
    for a number), or, for another library's array, its own ``copy()`` (``np.copy`` would
    make a NumPy array of it: Dask would compute). Generated code saves values with it.

    >>> a = np.ones(2); b = copy_of(a); a[0] = 5.0; b.tolist()
    [1.0, 1.0]
    """
    if type(x) is np.ndarray:
        return x.copy()
    if foreign(x):
        return x.copy()
    return np.copy(x)


def writable(x: Any) -> Any:
    """``x`` where it takes item writes (an array); a 0-d array of it for a NumPy scalar or
    a number -- a 0-d cotangent summed with another is a NumPy scalar, and reverse mode
    clears the slots an item write filled (``x_bar[...] = 0.0``).

    >>> type(writable(np.float64(2.0))).__name__, writable(1.5).shape
    ('ndarray', ())
    >>> a = np.ones(2); writable(a) is a
    True
    """
    if isinstance(x, (np.generic, int, float, complex)):
        return np.array(x)
    return x


# -- derivatives of lists --------------------------------------------------------------------------


def accumulate(a: Any, b: Any) -> Any:
    """``a + b`` for derivatives, elementwise when ``a`` is the derivative of a list.

    >>> accumulate([1.0, np.ones(2)], [2.0, np.ones(2)])[1].tolist()
    [2.0, 2.0]
    >>> accumulate(1.0, 2.0)
    3.0
    """
    if isinstance(a, list):
        return [accumulate(x, y) for x, y in zip(a, b)]
    return a + b


def accumulate_item(a: Any, index: Any, g: Any) -> list[Any]:
    """``accumulate(a, getitem_vjp(g, a, index))`` for the derivative ``a`` of a list: a new
    list whose item ``index`` has ``g`` added, the other items shared (one addition, not one
    per item: the adjoint of ``xs[t]`` read in a loop costs the same at every step).

    >>> a = [1.0, 2.0, 3.0]
    >>> accumulate_item(a, -1, 10.0), a
    ([1.0, 2.0, 13.0], [1.0, 2.0, 3.0])
    """
    out = list(a)
    out[index] = accumulate(out[index], g)
    return out


def split_last(xs: Any) -> tuple[Any, Any]:
    """``(xs[:-1], xs[-1])``: the derivative of a list without its last element, and that one.

    >>> split_last([1.0, 2.0, 3.0])
    ([1.0, 2.0], 3.0)
    """
    return xs[:-1], xs[-1]


def items_vjp(parts: Any, xs: Any) -> Any:
    """The cotangent of an array passed where a sequence of arrays goes (``np.stack(y)``
    stacks ``y``'s rows) from the cotangents of its items: stacked back into ``y``'s shape.

    >>> items_vjp([np.ones(2), np.zeros(2)], np.arange(4.0).reshape(2, 2)).tolist()
    [[1.0, 1.0], [0.0, 0.0]]

    A list or tuple passed there (code made before its arguments' kinds were known, called
    with one) gets a list or tuple of the items' cotangents:

    >>> items_vjp([np.ones(1), np.zeros(3)], (np.ones(1), np.ones(3)))
    (array([1.]), array([0., 0., 0.]))
    """
    if isinstance(xs, (list, tuple)):
        return type(xs)(parts)
    a = as_array(xs)
    dtype = a.dtype if dtype_kind(a) in "fc" else np.dtype(np.float64)
    if not len(parts):
        return np.zeros(a.shape, dtype=dtype)
    return np.reshape(cast(np.stack([as_array(p) for p in parts]), dtype, copy=False), a.shape)


def sum_items(iterable: Any, start: Any = 0) -> Any:
    """Python's ``sum(iterable, start)``: ``start + iterable[0] + iterable[1] + ...``, left
    to right, each ``+`` broadcasting (the tangent of ``sum(xs)``; generated code calls
    ``sum`` by this name inside rule templates, which name only ``np``, ``math`` and ``rt``).

    >>> sum_items([1.0, np.ones(2)], np.zeros(2)).tolist()
    [2.0, 2.0]
    >>> sum_items(np.arange(6.0).reshape(3, 2)).tolist()
    [6.0, 9.0]
    """
    total = start
    for item in iterable:
        total = total + item
    return total


def max_items(iterable: Any) -> Any:
    """Python's ``max(iterable)`` (generated code calls ``max`` of one sequence by this name:
    the ``max`` of two values has a rule of its own).

    >>> max_items([1.0, 3.0, 2.0])
    3.0
    """
    return max(iterable)


def min_items(iterable: Any) -> Any:
    """Python's ``min(iterable)`` (see :func:`max_items`).

    >>> min_items((2.0, -1.0, 5.0))
    -1.0
    """
    return min(iterable)


def _selected(item: Any, ans: Any) -> bool:
    """Is ``item`` the extremum ``ans`` (equal, or both NaN)?"""
    if bool(np.all(item == ans)):
        return True
    return bool(np.all(np.isnan(item)) and np.all(np.isnan(ans)))


def extremum_shares(iterable: Any, ans: Any) -> tuple[float, ...]:
    """Each item's share of the derivative of ``max(items)`` / ``min(items)`` (result
    ``ans``): the items equal to it (or NaN where it is NaN) split it evenly, as ``np.max``'s
    entries do; the others get 0.

    >>> extremum_shares([1.0, 3.0, 3.0], 3.0)
    (0.0, 0.5, 0.5)
    """
    hits = [_selected(item, ans) for item in iterable]
    count = max(sum(hits), 1)
    return tuple(1.0 / count if hit else 0.0 for hit in hits)


def extremum_jvp(parts: Any, shares: Any) -> Any:
    """The tangent of ``max(items)`` / ``min(items)`` from the items' tangents ``parts`` and
    their :func:`extremum_shares`.

    >>> extremum_jvp((10.0, 20.0, 30.0), (0.0, 0.5, 0.5))
    25.0
    """
    total: Any = 0.0
    for part, share in zip(parts, shares):
        if share:
            total = total + part * share
    return total


def as_list(d: Any) -> list[Any]:
    """``list(d)``: the tangent of ``list(x)`` (generated code calls ``list`` by this name
    inside rule templates, which name only ``np``, ``math`` and ``rt``)."""
    return list(d)


def list_vjp(g: Any, iterable: Any) -> Any:
    """The cotangent of ``list(iterable)``: a list for a list, the rows stacked back for an
    array (``list(a)`` is the list of ``a``'s rows).

    >>> list_vjp([1.0, 2.0], np.zeros(2)).tolist(), list_vjp([1.0, 2.0], [0.0, 0.0])
    ([1.0, 2.0], [1.0, 2.0])
    """
    if isinstance(iterable, list):
        return list(g)
    return items_vjp(g, iterable)


def join_last(rest: Any, last: Any) -> list[Any]:
    """``[*rest, last]``: the derivative of a list from that of all its items but the last
    and that of the last (the inverse of :func:`split_last`).

    >>> join_last([1.0, 2.0], 3.0)
    [1.0, 2.0, 3.0]
    """
    return [*rest, last]


# -- for the helpers of the other modules ----------------------------------------------------------


def _sum_to(g: Any, shape: tuple[int, ...]) -> NDArray[Any]:
    """Sum (or broadcast) ``g`` to ``shape``, like :func:`unbroadcast`, always an array.

    >>> _sum_to(np.ones((2, 3)), (1, 3)).tolist()
    [[2.0, 2.0, 2.0]]
    >>> _sum_to(np.ones(3), (2, 3)).shape
    (2, 3)
    """
    g = as_array(g)
    if g.shape != shape:
        g = as_array(_unbroadcast_to(g, g.shape, shape))
    return np.broadcast_to(g, shape)


def _float_dtype(*xs: Any) -> Any:
    """The floating dtype derivatives of ``xs`` take (float64 for integer inputs)."""
    dtype = np.result_type(*xs)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)
