"""The user-facing API: ``grad``, ``value_and_grad``, ``jvp``, ``vjp``, ``differentiate``,
``source`` and ``trace`` (JAX's names and semantics where they exist).

>>> import numpy as np
>>> def f(x1, x2):
...     return np.log(x1) + x1 * x2 - np.sin(x2)
>>> grad(f)(2.0, 5.0)
5.5
>>> grad(f, wrt=("x1", "x2"))(2.0, 5.0)
(5.5, 1.7163378145367738)
>>> value, tangent = jvp(f, (2.0, 5.0), (1.0, None))
>>> float(value), float(tangent)
(11.652071455223084, 5.5)
>>> value, pullback = vjp(f, 2.0, 5.0)
>>> pullback(1.0)
(5.5, 1.7163378145367738)
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import types
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from adgen import composable, display, ir, seam, trees
from adgen.backend import cache
from adgen.backend.compile import load
from adgen.errors import (
    AdgenError,
    ArgumentError,
    InternalError,
    NonDifferentiableError,
    NonScalarOutputError,
    ShapeMismatchError,
    SourceLocation,
    WrtError,
    cut_internal_frames,
    entry_point,
)
from adgen.frontend.parse import unwrap
from adgen.generated import Generated
from adgen.middle import shapes
from adgen.names import Namer
from adgen.rules.runtime import Refusal, cast_like, is_complex
from adgen.rules.runtime.libraries import as_array, dtype_kind, foreign, numpy_dtype

if TYPE_CHECKING:
    from pathlib import Path

    from adgen.pipeline import Derivative

Wrt = int | str | Sequence[int | str]


@functools.cache
def _pipeline() -> types.ModuleType:
    """:mod:`adgen.pipeline`, imported by the first call that differentiates: it imports
    the whole pipeline (lowering, optimization, both modes), which ``import adgen`` does not
    need."""
    from adgen import pipeline

    return pipeline


# -- arguments -----------------------------------------------------------------------------------
def _params(fn: types.FunctionType) -> list[str]:
    code = fn.__code__
    return list(code.co_varnames[: code.co_argcount])


def _def_loc(fn: types.FunctionType) -> SourceLocation:
    import linecache

    line = fn.__code__.co_firstlineno
    return SourceLocation(
        fn.__code__.co_filename, line, 0, linecache.getline(fn.__code__.co_filename, line)
    )


def _wrt_names(fn: types.FunctionType, wrt: Wrt) -> tuple[tuple[str, ...], bool]:
    """The parameter names ``wrt`` selects, and whether one (not a tuple) was asked for."""
    params = _params(fn)
    single = isinstance(wrt, (int, str))
    if not single and not isinstance(wrt, (tuple, list)):
        raise WrtError(
            f"wrt must be a parameter index, a name, or a tuple of those, not {wrt!r}", _def_loc(fn)
        )
    items = [wrt] if single else list(wrt)  # type: ignore[list-item, arg-type]
    names = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise WrtError(
                f"wrt must be a parameter index, a name, or a tuple of those, not {item!r}",
                _def_loc(fn),
            )
        if isinstance(item, int):
            if not -len(params) <= item < len(params):
                raise WrtError(
                    f"wrt={item}: {fn.__name__} has {len(params)} parameter(s) "
                    f"({', '.join(params)})",
                    _def_loc(fn),
                    "use an index below that or a name",
                )
            names.append(params[item])
        else:
            if item not in params:
                raise WrtError(
                    f"wrt={item!r} names no parameter of {fn.__name__} ({', '.join(params)})",
                    _def_loc(fn),
                    "use one of the parameter names",
                )
            names.append(item)
    if not names:
        raise WrtError("wrt names no parameter", _def_loc(fn))
    if len(set(names)) != len(names):
        raise WrtError(f"wrt names a parameter twice: {names}", _def_loc(fn))
    return tuple(names), single


def _with_defaults(fn: types.FunctionType, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """``args`` (positional only) with ``fn``'s defaults of the parameters they leave out, where
    ``fn`` takes plain parameters only (the common call: no ``inspect.signature`` asked);
    None for any other function or call.

    >>> def f(a, b, c=2, d=3):
    ...     pass
    >>> _with_defaults(f, (0, 1)), _with_defaults(f, (0, 1, 5)), _with_defaults(f, (0,))
    ((0, 1, 2, 3), (0, 1, 5, 3), None)
    """
    code = fn.__code__
    if code.co_flags & _STARRED or code.co_kwonlyargcount:
        return None
    missing = code.co_argcount - len(args)
    defaults = fn.__defaults__ or ()
    if missing == 0:
        return args
    if not 0 < missing <= len(defaults):
        return None
    return (*args, *defaults[len(defaults) - missing :])


# a function's code flags for *args and **kwargs
_STARRED = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _bind(fn: types.FunctionType, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The arguments of a call of ``fn``, by position, with its defaults filled in."""
    filled = None if kwargs else _with_defaults(fn, args)
    if filled is not None:
        return list(filled)
    signature = inspect.signature(fn)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise ArgumentError(
            f"{fn.__name__}{signature} cannot take these arguments: {exc}",
            _def_loc(fn),
            f"pass the arguments {fn.__name__} takes, as you would call it",
        ) from None
    bound.apply_defaults()
    return list(bound.args)


def _check_differentiable(fn: types.FunctionType, name: str, value: Any) -> None:
    if isinstance(value, (bool, np.bool_)):
        kind = "a boolean"
    elif isinstance(value, (float, complex, np.inexact)):
        return
    elif foreign(value) and not _reachable(value):
        kind = (
            f"a {type(value).__name__}, whose library adgen's code cannot reach (it implements "
            "neither NumPy's __array_function__ nor the array API's __array_namespace__)"
        )
    elif isinstance(value, np.ndarray) or foreign(value):
        letter = dtype_kind(value)
        if letter in "fc":
            return
        kind = {
            "i": "an integer array",
            "u": "an integer array",
            "b": "a boolean array",
        }.get(letter, f"an array of dtype {value.dtype}")
    elif isinstance(value, (int, np.integer)):
        kind = "an integer"
    else:
        kind = f"a {type(value).__name__}"
    raise NonDifferentiableError(
        f"cannot differentiate {fn.__name__} with respect to `{name}`: it is {kind}",
        _def_loc(fn),
        "pass a float or a floating-point array, real or complex (e.g. 3.0, not 3; "
        "np.asarray(v, float); x.astype(float) for an array of another library)",
    )


def _reachable(value: Any) -> bool:
    """Can derivative code run on this array of another library? Through NumPy's dispatch
    protocols (Dask, CuPy), or through its array-API namespace (``array_api_strict``); not
    an object that only looks like an array (a pandas Series aligns by its index labels)."""
    return hasattr(value, "__array_function__") or hasattr(value, "__array_namespace__")


# ``g`` with the type, dtype and shape of ``x``, as a fresh array the caller may modify
_like = cast_like


def _is_scalar(value: Any) -> bool:
    kind = type(value)
    if kind is float or kind is int:
        return True
    return isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0)


_ALL_SCALAR: dict[tuple[str, ...], frozenset[str]] = {}


def _scalars(params: list[str], values: Sequence[Any]) -> frozenset[str]:
    """The parameters whose arguments are scalars (the code is specialised for them)."""
    if all(type(v) is float for v in values):
        key = tuple(params)
        if key not in _ALL_SCALAR:
            _ALL_SCALAR[key] = frozenset(params)
        return _ALL_SCALAR[key]
    return frozenset([p for p, v in zip(params, values) if _is_scalar(v)])


def _backend(backend: str | None, strict: bool) -> str:
    """The backend a derivative runs on (:func:`adgen.backend.numba_jit.chosen`): ``backend``,
    else ``$ADGEN_BACKEND``, else ``"numpy"``."""
    if backend is None and not strict and not os.environ.get("ADGEN_BACKEND"):
        return "numpy"  # (the common case: nothing to import)
    from adgen.backend.numba_jit import chosen

    try:
        return chosen(backend, strict)
    except ValueError as exc:
        raise ArgumentError(str(exc), hint="backend='numpy' or backend='numba'") from None


def _float_like(value: Any) -> bool:
    """A value adgen differentiates: a real or complex floating-point number or array."""
    return isinstance(value, (float, complex, np.inexact)) or (
        (isinstance(value, np.ndarray) or foreign(value)) and dtype_kind(value) in "fc"
    )


# -- derivative objects --------------------------------------------------------------------------
class _Transformed:
    """A derivative of ``f``: callable, and shows the code adgen generated for it.

    When ``f`` is itself a derivative (``grad(grad(f))``), ``fn`` is the plain Python
    function standing for it (:meth:`_ValueAndGrad.adgen_function`), looked up again on
    every use so that a change to the inner function is never missed.
    """

    mode = "reverse"

    def __init__(self, f: Callable[..., Any], wrt: Wrt) -> None:
        # name and docstring of f, not its attributes (f may be another derivative object)
        functools.update_wrapper(self, f, updated=())  # type: ignore[arg-type]
        self.f = f
        fn = unwrap(f)
        self.wrt, self.single = _wrt_names(fn, wrt)
        self._fixed = None if hasattr(f, "adgen_function") else fn
        # the functions standing for this derivative (adgen_function), by the structure of
        # the dict/list/tuple arguments they take: (the code they call, the function)
        self._made: dict[Any, tuple[Callable[..., Any], types.FunctionType]] = {}

    @property
    def fn(self) -> Any:  # a types.FunctionType (mypy reads a FunctionType property as a method)
        return self._fixed if self._fixed is not None else unwrap(self.f)

    def derivative(self) -> Derivative:
        return _pipeline().derivative(self.fn, self.mode, self.wrt)

    @property
    @entry_point
    def source(self) -> str:
        """The generated Python source of this derivative."""
        return self.derivative().generated.source

    def __repr__(self) -> str:
        kind = type(self).__name__.lstrip("_").lower()
        return f"<adgen {kind} of {self.fn.__qualname__} w.r.t. {', '.join(self.wrt)}>"

    def _repr_html_(self) -> str:
        return display.repr_html(lambda: self.source)

    def _repr_markdown_(self) -> str:
        return display.repr_markdown(lambda: self.source)


def _check_cotangent(fn: types.FunctionType, c: Any, o: Any, where: str = "") -> None:
    """The cotangent ``c`` of the result ``o`` has its shape, item by item in a tuple result
    (``(out, (x_bar, y_bar))`` of adgen's reverse code differentiated again); ``where``
    numbers the item (``1[0]``), empty for the whole result."""
    # (a list inside may also take an array of its shape, when its items have one shape:
    # the caller decides that for the whole result)
    if isinstance(o, tuple) or (
        isinstance(o, list) and (not where or isinstance(c, (tuple, list)))
    ):
        if not isinstance(c, (tuple, list)) or len(c) != len(o):
            kind = type(o).__name__
            what = f"result {where} is" if where else f"{fn.__name__} returns"
            raise ShapeMismatchError(
                f"vjp: {what} a {kind} of {len(o)} values; pass a {kind} of {len(o)} "
                "cotangents" + (" for it" if where else ""),
                _def_loc(fn),
                "one cotangent per result, each of its result's shape",
            )
        for k, (ci, oi) in enumerate(zip(c, o)):
            _check_cotangent(fn, ci, oi, f"{where}[{k}]" if where else str(k))
    else:
        _check_shape(fn, c, o, where)


def _check_shape(fn: types.FunctionType, c: Any, o: Any, where: str = "") -> None:
    """The cotangent ``c`` has the shape of the result ``o`` (item ``where``, if given), and
    is real if ``o`` is (a real result's cotangent is real: docs/rules.md)."""
    if is_complex(c) and _float_like(o) and not is_complex(o):
        res = f"result {where}" if where else "the result"
        raise ShapeMismatchError(
            f"vjp: the cotangent of {res} is complex, but {res} is real",
            _def_loc(fn),
            "pass a real cotangent (np.real(c)) for a real result",
        )
    if np.shape(c) != np.shape(o):
        cot, res = (
            (f"cotangent {where}", f"result {where}") if where else ("the cotangent", "the result")
        )
        raise ShapeMismatchError(
            f"vjp: {cot} has shape {np.shape(c)}, but {res} has shape {np.shape(o)}",
            _def_loc(fn),
            "pass a cotangent of each result's shape"
            if where
            else "pass a cotangent of the result's shape",
        )


def _again_with_structure(f: Any, fn: types.FunctionType, flat: _Flat) -> types.FunctionType:
    """The function to differentiate for ``f`` called with ``flat``'s arguments: for
    ``grad(g)`` / ``value_and_grad(g)`` given dicts, lists or tuples, the function standing
    for it that reads their leaves and calls the code specialised for them; else ``fn``
    (a derivative given such arguments that cannot is refused)."""
    if isinstance(f, _ValueAndGrad):
        # code made for the arguments' kinds (what a library's type tests ask of them, and
        # complex arguments, which generic code refuses)
        return f.adgen_function(flat.key, flat.signature)
    _refuse_structure_again(f, fn, flat)
    return fn


def _refuse_structure_again(f: Any, fn: types.FunctionType, flat: _Flat) -> None:
    """Refuse a dict/list/tuple of floats given to a derivative adgen differentiates again
    where no function standing for it is made for that structure (``grad(grad(f))``, the
    functions ``jacfwd``, ``hvp``... return): their functions call general derivative code,
    which takes arrays (its code for a dict of arrays would crash, or be refused, inside)."""
    if not hasattr(f, "adgen_function"):
        return
    inner = getattr(f, "wrt", None)  # what the derivative object differentiates, if it says
    floats = [
        p
        for p in flat.structure
        if (inner is None or p in inner)
        and any(_float_like(flat.values[flat.names.index(n)]) for n in flat.leaves(p))
    ]
    if not floats:
        return
    p = floats[0]
    raise NonDifferentiableError(
        f"differentiating a derivative adgen made ({fn.__name__}) again, with the "
        f"dict/list/tuple argument `{p}`, is not supported yet",
        _def_loc(getattr(f, "fn", fn)),  # the user's function the derivative is of
        "pass the arrays as separate arguments: differentiate e.g. "
        "`lambda W, b, X: f({'W': W, 'b': b}, X)` instead of f",
    )


class _Flat:
    """A call's arguments with the dict/list/tuple ones flattened into their leaves."""

    def __init__(self, params: list[str], values: Sequence[Any]) -> None:
        self.structure: dict[str, trees.Desc] = {}
        self.names: list[str] = []
        self.values: list[Any] = []
        self.spans: dict[str, tuple[int, int]] = {}
        for p, v in zip(params, values):
            desc = trees.describe(v) if isinstance(v, (dict, list, tuple)) else trees.LEAF
            if trees.is_tree(desc):
                self.structure[p] = desc
                names, leaves = trees.leaf_names(p, desc), trees.flatten(v, desc)
            else:
                names, leaves = [p], [v]
            self.spans[p] = (len(self.names), len(self.names) + len(names))
            self.names += names
            self.values += leaves
        self.key = tuple(sorted(self.structure.items()))

    @functools.cached_property
    def signature(self) -> shapes.Signature:
        """The leaves' shapes and dtypes: the derivative is specialised for them."""
        return tuple(
            (n, d) for n, v in zip(self.names, self.values) if (d := shapes.describe(v)) is not None
        )

    def leaves(self, param: str) -> list[str]:
        start, stop = self.spans[param]
        return self.names[start:stop]

    def leaf_values(self, param: str) -> list[Any]:
        start, stop = self.spans[param]
        return self.values[start:stop]

    def regroup(self, param: str, per_leaf: list[Any]) -> Any:
        """Per-leaf results back in the argument's structure."""
        if param in self.structure:
            return trees.unflatten(self.structure[param], per_leaf)
        return per_leaf[0]


class _ValueAndGrad(_Transformed):
    def __init__(
        self,
        f: Callable[..., Any],
        wrt: Wrt,
        has_aux: bool = False,
        holomorphic: bool = False,
        backend: str = "numpy",
    ) -> None:
        super().__init__(f, wrt)
        self.backend = backend
        self.params = _params(self.fn)
        self.index = [self.params.index(w) for w in self.wrt]
        self.has_aux = has_aux
        self.holomorphic = holomorphic
        if has_aux:
            self.mode = "reverse_aux"
        # what the arguments' kinds (shapes.describe) mean for the derivative: the function
        # it was made for, its cache entry (None: ask the cache each time) and the cache's
        # generation then, and derivative()'s arguments after the function
        self._plans: dict[tuple[Any, ...], tuple[Any, ...]] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        # an entry point (errors.entry_point, written out: this is the hot path)
        try:
            fn = self.fn
            described = None
            if not kwargs:
                args, planned = self._planned(fn, args)
                if planned is not None:
                    return self._finish(fn, args, planned)
                if len(args) == len(self.params):  # (stale or new: made below, held anew)
                    described = tuple(map(shapes.describe, args))
            values = _bind(fn, args, kwargs)
            flat = _Flat(self.params, values)
            _refuse_structure_again(self.f, fn, flat)
            wrt = tuple(leaf for w in self.wrt for leaf in flat.leaves(w))
            for leaf, value in zip(flat.names, flat.values):
                if leaf in wrt and type(value) is not float:
                    _check_differentiable(fn, leaf, value)
                if leaf in wrt and self.holomorphic:
                    _check_complex_input(fn, leaf, value)
            scalars = _scalars(flat.names, flat.values)
            signature = flat.signature
            d = _pipeline().derivative(
                fn, self.mode, wrt, scalars, flat.key, signature=signature, backend=self.backend
            )
            if described is not None and not flat.structure:
                if None not in described:  # the next call with such arguments takes the short way
                    if len(self._plans) >= 64:
                        self._plans.clear()
                    options = (wrt, scalars, (), True, True, signature, self.backend)
                    held = cache.entry(fn, _pipeline().cache_key(self.mode, *options))
                    if held is not None and held[1] is not d:
                        held = None  # served by the general code (too many shapes seen)
                    self._plans[described] = (fn, held, cache.generation, options)
            if not flat.structure:
                return self._finish(fn, flat.values, d)
            out, grads = self._run(fn, flat.values, d, values)
            by_leaf = dict(zip(wrt, grads))
            results = []
            for w in self.wrt:
                # every cotangent derives from the seed 1.0, so none can be an input array: only
                # read-only views need a copy (no aliasing check against the arguments)
                leaves = [_like(by_leaf[n], v) for n, v in zip(flat.leaves(w), flat.leaf_values(w))]
                results.append(flat.regroup(w, leaves))
            gradient = results[0] if self.single else tuple(results)
            return out, gradient
        except AdgenError as exc:
            cut_internal_frames(exc)
            raise

    def _planned(
        self, fn: types.FunctionType, args: tuple[Any, ...]
    ) -> tuple[tuple[Any, ...], Derivative | None]:
        """The common call: plain arguments (their defaults filled in), and the derivative a
        plan made for their kinds holds, if it is still right (None: none, or stale)."""
        if len(args) != len(self.params):  # (defaults left out)
            args = _with_defaults(fn, args) or args
            if len(args) != len(self.params):
                return args, None
        plan = self._plans.get(tuple(map(shapes.describe, args)))
        if plan is None or plan[0] is not fn:
            return args, None
        held, made, options = plan[1:]
        if held is None:  # served by the general code: ask the cache
            return args, _pipeline().derivative(fn, self.mode, *options)
        if made == cache.generation and cache.fresh(fn, held):
            return args, held[1]  # type: ignore[no-any-return]
        return args, None

    def _run(
        self, fn: types.FunctionType, leaves: Sequence[Any], d: Derivative, args: Sequence[Any]
    ) -> tuple[Any, Any]:
        """The value (with aux: the pair) and the cotangents of the leaves ``d`` is for.
        ``args`` are ``fn``'s own arguments (``leaves`` has their dicts, lists and tuples
        flattened)."""
        seed: Any = 1.0
        try:
            out, grads = d.compiled(*leaves, seed)
        except AdgenError:
            raise
        except Exception as exc:
            # an error of the function itself shows as the user's own: run it, on its own
            # arguments (never on the leaves), then the derivative again to name the line
            # (a refusal the code made when it ran is adgen's: named at its line)
            if not isinstance(exc, Refusal):
                out = fn(*args)
                _check_scalar(fn, self._value(fn, out), self.holomorphic)
                seed = _seed(self._value(fn, out))
            out, grads = _pipeline().run(d, *leaves, seed)
        if out is None:  # (grad's code made for a real number: the value not computed)
            return out, grads
        value = self._value(fn, out)
        if self.holomorphic or (type(value) is not float and type(value) is not np.float64):
            _check_scalar(fn, value, self.holomorphic)
            if np.ndim(value) != 0 and np.ndim(seed) == 0:  # an array of one number
                out, grads = _pipeline().run(d, *leaves, _seed(value))
        return out, grads

    def _value(self, fn: types.FunctionType, out: Any) -> Any:
        """The value to differentiate in what ``fn`` returned (with aux: the pair's first)."""
        if not self.has_aux:
            return out
        if not isinstance(out, tuple) or len(out) != 2:
            what = f"a tuple of {len(out)} values" if isinstance(out, tuple) else "one value"
            raise NonScalarOutputError(
                f"has_aux=True needs {fn.__name__} to return a pair (value, aux); it returned "
                + what,
                _def_loc(fn),
                "return value, aux -- or drop has_aux=True",
            )
        return out[0]

    def _finish(
        self, fn: types.FunctionType, values: Sequence[Any], d: Derivative
    ) -> tuple[Any, Any]:
        """Run ``d`` on plain arguments (no dicts, lists or tuples): value and gradient."""
        out, grads = self._run(fn, values, d, values)
        # every cotangent derives from the seed 1.0, so none can be an input array: only
        # read-only views need a copy (no aliasing check against the arguments)
        results = [_like(g, values[i]) for g, i in zip(grads, self.index)]
        gradient = results[0] if self.single else tuple(results)
        return out, gradient

    def adgen_function(
        self, structure: tuple[tuple[str, Any], ...] = (), signature: shapes.Signature = ()
    ) -> types.FunctionType:
        """A plain Python function computing what this object computes, by calling adgen's
        generated reverse-mode code: adgen reads its source like any other function's, so
        ``grad(grad(f))``, ``jvp(grad(f), ...)`` and a function calling ``grad(f)`` are
        differentiated through the generated code (never through ``f`` itself).
        """
        return _as_function(self, isinstance(self, _Grad), structure, signature)


class _Grad(_ValueAndGrad):
    # the gradient only: code made for a call's kinds does not compute the value where it is
    # a real number (the caller discards it)
    def __init__(
        self,
        f: Callable[..., Any],
        wrt: Wrt,
        has_aux: bool = False,
        holomorphic: bool = False,
        backend: str = "numpy",
    ) -> None:
        super().__init__(f, wrt, has_aux, holomorphic, backend)
        if not has_aux and not holomorphic:
            self.mode = "reverse_grad"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if not kwargs and self.mode == "reverse_grad":  # (the hot path: a plan made already)
            fn = self.fn
            args, planned = self._planned(fn, args)
            if planned is not None:
                try:
                    grads = self._run(fn, args, planned, args)[1]
                except AdgenError as exc:
                    cut_internal_frames(exc)
                    raise
                if self.single:
                    return _like(grads[0], args[self.index[0]])
                return tuple(_like(g, args[i]) for g, i in zip(grads, self.index))
        try:
            value, gradient = super().__call__(*args, **kwargs)
        except AdgenError as exc:
            cut_internal_frames(exc)
            raise
        if self.has_aux:
            return gradient, value[1]
        return gradient


def _as_function(
    t: _ValueAndGrad,
    only_grad: bool,
    structure: tuple[tuple[str, trees.Desc], ...] = (),
    signature: shapes.Signature = (),
) -> types.FunctionType:
    """The function behind :meth:`_ValueAndGrad.adgen_function`: its source calls the
    compiled ``<f>_vjp`` (not specialised for scalars: it is called with any values).

    ``structure`` (``_Flat.key``) describes the dict/list/tuple arguments it is called with:
    the code called is then the one specialised for them (one parameter per leaf), the
    function reads the leaves (``params['W']``) and puts each gradient back into its
    argument's structure -- so a function of a dict of arrays is differentiated again.

    ``signature`` (given where an argument is complex) specialises the code for the
    arguments' kinds; without one the code is right for real and complex arguments alike
    (:data:`adgen.middle.shapes.ANY_KIND`)."""
    fn = t.fn
    trees_of = dict(structure)
    wrt = tuple(
        leaf for w in t.wrt for leaf in (trees.leaf_names(w, trees_of[w]) if w in trees_of else [w])
    )
    d = _pipeline().derivative(  # its source is read again
        fn,
        t.mode,
        wrt,
        frozenset(),
        structure,
        batched=False,
        # (the arguments' kinds, or code right for real and complex ones alike)
        signature=signature or (shapes.ANY_KIND,),
    )
    made = t._made.get((structure, signature))
    if made is not None and made[0] is d.compiled:
        return made[1]
    params = _params(fn)
    namer = Namer(params + [d.generated.name])
    bars = [namer.adjoint(w) for w in wrt]
    grads_of: list[str] = []
    at = 0
    for w in t.wrt:
        if w in trees_of:
            n = trees.count(trees_of[w])
            grads_of.append(trees.display(trees_of[w], bars[at : at + n]))
            at += n
        else:
            grads_of.append(bars[at])
            at += 1
    reads = [
        r for p in params for r in (trees.leaf_reads(p, trees_of[p]) if p in trees_of else [p])
    ]
    out, aux = namer.claim("out"), namer.claim("aux")
    value = f"({out}, {aux})" if t.has_aux else out
    grads = grads_of[0] if t.single else f"({', '.join(grads_of)})"
    if only_grad:
        result = f"{grads}, {aux}" if t.has_aux else grads
    else:
        result = f"{value}, {grads}"
    kind = "gradient" if only_grad else "value and gradient"
    base = fn.__name__ if fn.__name__.isidentifier() else "fn"  # a lambda: <lambda>
    name = f"{base}_{'grad' if only_grad else 'value_and_grad'}"
    source = (
        f"# adgen: the {kind} of {fn.__qualname__} w.r.t. {', '.join(t.wrt)}\n"
        f"def {name}({', '.join(params)}):\n"
        f"    {value}, ({', '.join(bars)},) = {d.generated.name}({', '.join(reads)}, 1.0)\n"
        f"    return {result}\n"
    )
    wrapper = load(Generated(name, params, source), {d.generated.name: d.compiled})
    assert isinstance(wrapper, types.FunctionType)
    wrapper.__defaults__ = fn.__defaults__
    t._made[(structure, signature)] = (d.compiled, wrapper)
    return wrapper


def _check_complex_input(fn: types.FunctionType, name: str, value: Any) -> None:
    if is_complex(value):
        return
    raise NonDifferentiableError(
        f"grad with holomorphic=True needs complex arguments; `{name}` of {fn.__name__} is "
        f"a {type(value).__name__}"
        + (f" of dtype {value.dtype}" if hasattr(value, "dtype") else ""),
        _def_loc(fn),
        "pass it as a complex value (x + 0j, x.astype(complex)), or drop holomorphic=True",
    )


def _seed(value: Any) -> Any:
    """The cotangent reverse mode starts from for a function's value: 1.0, or ones of its
    shape for an array of one number (``np.array([v])``, as autograd and PyTorch take it)."""
    return np.ones_like(value) if np.ndim(value) != 0 else 1.0


def _check_scalar(fn: types.FunctionType, out: Any, holomorphic: bool = False) -> None:
    if holomorphic:
        if np.ndim(out) != 0 or not is_complex(out):
            what = f"an array of shape {np.shape(out)}" if np.ndim(out) else type(out).__name__
            raise NonScalarOutputError(
                f"grad with holomorphic=True needs {fn.__name__} to return a complex scalar; "
                f"it returned {what}",
                _def_loc(fn),
                "return one complex number (f(z) of a holomorphic f), or drop holomorphic=True "
                "for a real-valued function",
            )
        return
    if isinstance(out, tuple):
        raise NonScalarOutputError(
            f"grad needs {fn.__name__} to return a real scalar; it returned a tuple of "
            f"{len(out)} values",
            _def_loc(fn),
            "differentiate one result, or use adgen.vjp / adgen.jvp for tuple results",
        )
    numeric = isinstance(out, (int, float, np.number)) or (
        (isinstance(out, np.ndarray) or foreign(out)) and dtype_kind(out) in "biuf"
    )
    if np.ndim(out) == 0 and is_complex(out):
        raise NonScalarOutputError(
            f"grad needs {fn.__name__} to return a real scalar; it returned a complex number",
            _def_loc(fn),
            "for a holomorphic function pass holomorphic=True (the gradient is then f'(z), "
            "as in JAX); else differentiate a real value of it (np.abs(z) ** 2, np.real(z)), "
            "or use adgen.vjp / adgen.jvp",
        )
    if (np.ndim(out) != 0 and not (numeric and np.size(out) == 1)) or not numeric:
        # (an array of one real number is that number, as autograd and PyTorch take it)
        shape = np.shape(out)
        raise NonScalarOutputError(
            f"grad needs {fn.__name__} to return a real scalar; it returned "
            + (f"an array of shape {shape}" if shape else f"a {type(out).__name__}"),
            _def_loc(fn),
            "reduce it to a scalar (e.g. np.sum), or use adgen.vjp / adgen.jvp for array results",
        )


@entry_point
def grad(
    f: Callable[..., Any],
    wrt: Wrt = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    *,
    backend: str | None = None,
    strict: bool = False,
) -> Callable[..., Any]:
    """The gradient of a scalar function ``f`` w.r.t. the argument(s) ``wrt``.

    ``wrt`` is a parameter index or name, or a tuple of those (then the result
    is a tuple of gradients). Each gradient has its argument's type, dtype and
    shape. With ``has_aux=True`` ``f`` returns ``(value, aux)`` and the function returns
    ``(gradient, aux)``.

    Complex arguments follow JAX's convention (docs/rules.md): for a real-valued ``f`` of
    ``z = x + iy`` the gradient is ``df/dx - i df/dy`` (conjugate it for the direction of
    steepest ascent). ``holomorphic=True`` differentiates a holomorphic ``f`` of complex
    arguments with a complex value: the gradient is the complex derivative ``f'(z)``.

    ``backend="numba"`` runs the derivative code compiled by Numba (installed apart:
    ``pip install 'adgen[numba]'``; ``$ADGEN_BACKEND=numba`` makes it the default): the
    NumPy code still runs wherever Numba cannot compile it, with a :class:`BackendWarning`
    saying why -- with ``strict=True`` a :class:`BackendError` instead (docs/performance.md).
    """
    return _Grad(f, wrt, has_aux, holomorphic, _backend(backend, strict))


@entry_point
def value_and_grad(
    f: Callable[..., Any],
    wrt: Wrt = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    *,
    backend: str | None = None,
    strict: bool = False,
) -> Callable[..., tuple[Any, Any]]:
    """Like :func:`grad`, but the function returns ``(f(*args), gradient)`` (with
    ``has_aux=True``: ``((value, aux), gradient)``)."""
    return _ValueAndGrad(f, wrt, has_aux, holomorphic, _backend(backend, strict))


@entry_point
def jvp(
    f: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    backend: str | None = None,
    strict: bool = False,
    _tangent_like: Any = None,
) -> tuple[Any, Any]:
    """``(f(*primals), J . tangents)``; a ``None`` tangent holds that argument constant.

    A dict, list or tuple argument takes a tangent of the same structure. ``backend`` and
    ``strict`` as for :func:`grad`. (``_tangent_like``, adgen's own: ``(None, J . tangents)``
    by code that computes the tangent only, returned like that value: what ``hvp`` asks.)
    """
    chosen = _backend(backend, strict)
    # (a derivative object: its function is made below, for the arguments given)
    fn = f.fn if isinstance(f, _ValueAndGrad) else unwrap(f)
    params = _params(fn)
    for what, given in (("primals", primals), ("tangents", tangents)):
        if not isinstance(given, (tuple, list)):
            raise ArgumentError(
                f"jvp: {what} must be a tuple or list (one item per argument of "
                f"{fn.__name__}), not a {type(given).__name__}",
                _def_loc(fn),
                "call adgen.jvp(f, (x,), (v,)) -- note the commas",
            )
    primals = _bind(fn, tuple(primals), {})
    tangents = list(tangents) + [None] * (len(primals) - len(tangents))
    if len(tangents) != len(primals):
        raise ShapeMismatchError(
            f"jvp: {len(tangents)} tangents for {len(primals)} primals", _def_loc(fn)
        )
    flat = _Flat(params, primals)
    fn = _again_with_structure(f, fn, flat)
    active: list[tuple[str, Any]] = []
    for p, t in zip(params, tangents):
        if t is None:
            continue
        if p in flat.structure:
            if trees.describe(t) != flat.structure[p]:
                raise ShapeMismatchError(
                    f"jvp: the tangent of `{p}` does not have the structure of `{p}`",
                    _def_loc(fn),
                    "pass a tangent with the same keys / lengths as its primal",
                )
            leaf_tangents = trees.flatten(t, flat.structure[p])
        else:
            leaf_tangents = [t]
        for leaf, x, lt in zip(flat.leaves(p), flat.leaf_values(p), leaf_tangents):
            _check_differentiable(fn, leaf, x)
            if np.shape(lt) != np.shape(x):
                raise ShapeMismatchError(
                    f"jvp: the tangent of `{leaf}` has shape {np.shape(lt)}, "
                    f"but `{leaf}` has shape {np.shape(x)}",
                    _def_loc(fn),
                    "pass a tangent of the same shape as its primal",
                )
            active.append((leaf, lt))
    scalars = _scalars(flat.names, flat.values)
    d = _pipeline().derivative(
        fn,
        "forward" if _tangent_like is None else "forward_tangent",
        tuple(n for n, _ in active),
        scalars,
        flat.key,
        signature=flat.signature,
        backend=chosen,
    )
    out, out_dot = _pipeline().run(d, *flat.values, *[t for _, t in active])
    protected = [*flat.values, *(t for _, t in active)]
    if _tangent_like is not None:
        return None, _like(out_dot, _tangent_like, protected)
    if isinstance(out, tuple):
        return out, tuple(_like(t, o, protected) for t, o in zip(out_dot, out))
    return out, _like(out_dot, out, protected)


@entry_point
def vjp(
    f: Callable[..., Any], *primals: Any, backend: str | None = None, strict: bool = False
) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """``(f(*primals), vjp_fn)``; ``vjp_fn(cotangent)`` returns one cotangent per primal.

    Arguments that are not floating point (integers, flags) get ``None``; a dict, list or
    tuple argument gets its cotangents in the same structure. ``vjp_fn`` runs the forward
    sweep again (the generated code is fused). ``backend`` and ``strict`` as for
    :func:`grad`.
    """
    chosen = _backend(backend, strict)
    fn = f.fn if isinstance(f, _ValueAndGrad) else unwrap(f)  # (as in jvp)
    params = _params(fn)
    values = _bind(fn, primals, {})
    flat = _Flat(params, values)
    fn = _again_with_structure(f, fn, flat)
    wrt = tuple(n for n, x in zip(flat.names, flat.values) if _float_like(x))
    out = fn(*values)
    scalars = _scalars(flat.names, flat.values)
    d = (
        _pipeline().derivative(
            fn, "reverse", wrt, scalars, flat.key, signature=flat.signature, backend=chosen
        )
        if wrt
        else None
    )

    @entry_point
    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        # a list result (np.split's arrays) takes a list or tuple of cotangents, one per item,
        # or -- when its items have one shape -- an array of the list's shape
        several = isinstance(out, tuple) or (
            isinstance(out, list) and (isinstance(cotangent, (tuple, list)) or _ragged(out))
        )
        if several:
            _check_cotangent(fn, cotangent, out)
            cotangent = tuple(cotangent) if isinstance(out, tuple) else list(cotangent)
        else:  # (a list whose items have one shape may take an array of the list's shape)
            _check_shape(fn, cotangent, out)
        grads: dict[str, Any] = {}
        if d is not None:
            _, gs = _pipeline().run(d, *flat.values, cotangent)
            grads = dict(zip(wrt, gs))
        protected = [
            *flat.values,
            *(cotangent if isinstance(cotangent, (tuple, list)) else (cotangent,)),
        ]
        results = []
        for p in params:
            leaves = [
                _like(grads[n], x, protected) if n in grads else None
                for n, x in zip(flat.leaves(p), flat.leaf_values(p))
            ]
            results.append(flat.regroup(p, leaves))
        return tuple(results)

    return out, vjp_fn


def _ragged(items: list[Any]) -> bool:
    """Do the items of a list have different shapes (so it has no shape as an array)?"""
    try:
        return len({np.shape(item) for item in items}) > 1
    except ValueError:  # an item is itself ragged
        return True


def _jacobian(
    f: Callable[..., Any],
    wrt: Wrt,
    mode: str,
    chunk_size: int | None = None,
    diagonal: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``f`` (``mode``: "forward", "reverse" or "auto"); ``diagonal=True``
    (forward mode, a result of the argument's shape): only its diagonal, chunk by chunk."""
    # (a derivative object: its function is made below, for the arguments given)
    names, single = _wrt_names(f.fn if isinstance(f, _ValueAndGrad) else unwrap(f), wrt)
    # the arguments' kinds -> a batched Jacobian made for them (see _JacobianPlan)
    plans: dict[tuple[Any, ...], _JacobianPlan] = {}

    @entry_point
    def jac(*args: Any, **kwargs: Any) -> Any:
        if not kwargs and mode == "forward" and len(names) == 1:  # the common call: short
            described = tuple(map(shapes.describe, args))
            plan = plans.get(described)
            if plan is not None:
                done = plan.run(f, args, chunk_size, diagonal)
                if done is not None:
                    return done
        # again: f may be a derivative whose function changed (grad of f)
        fn = f.fn if isinstance(f, _ValueAndGrad) else unwrap(f)
        params = _params(fn)
        values = _bind(fn, args, kwargs)
        flat = _Flat(params, values)
        _refuse_structure_again(f, fn, flat)
        if isinstance(f, _ValueAndGrad):
            fn = f.adgen_function(flat.key, flat.signature)  # made for the arguments' kinds
        for w in names:
            if w in flat.structure:
                raise NonDifferentiableError(
                    f"jacobians w.r.t. the dict/list/tuple argument `{w}` are not supported yet",
                    _def_loc(fn),
                    "pass the arrays as separate arguments",
                )
            _check_differentiable(fn, w, values[params.index(w)])
            if dtype_kind(values[params.index(w)]) == "c":
                raise NonDifferentiableError(
                    f"a Jacobian w.r.t. the complex argument `{w}` of {fn.__name__} is not "
                    "defined by adgen (as in JAX without holomorphic=True): its columns along "
                    "the real axis alone would not be the derivative",
                    _def_loc(fn),
                    "use adgen.jvp / adgen.vjp along complex directions, or pass the real and "
                    "imaginary parts as separate real arguments",
                )
        scalars = _scalars(flat.names, flat.values)
        use = mode
        if use == "auto":
            out = fn(*values)
            out_size = sum(_size(o) for o in out) if isinstance(out, tuple) else _size(out)
            in_size = sum(_size(values[params.index(w)]) for w in names)
            # reverse mode needs one array result
            use = "reverse" if out_size < in_size and not isinstance(out, tuple) else "forward"
        results: list[Any] = []
        if use == "forward":
            for w in names:
                x = values[params.index(w)]
                d = _batched(fn, w, x, scalars, flat, chunk_size)
                if d is not None and not kwargs and len(names) == 1 and not flat.structure:
                    made = _JacobianPlan.make(f, fn, d, params.index(w), x, flat.signature, scalars)
                    kinds = tuple(map(shapes.describe, args))
                    if made is not None and len(args) == len(params) and None not in kinds:
                        if len(plans) >= 64:
                            plans.clear()
                        plans[kinds] = made
                columns = _forward_columns(fn, w, x, flat, chunk_size, d, scalars)
                jacobian = _assembled(columns, x, diagonal)
                if diagonal:
                    return jacobian
                if jacobian is None:  # (an empty argument: the result's shape from the function)
                    jacobian = _stacked_to_jacobian([_no_columns(fn(*values))], x)
                results.append(jacobian)
            if isinstance(results[0], tuple) and not single:
                # a tuple result: one Jacobian per result, each a tuple over `wrt` (as JAX)
                return tuple(tuple(r[k] for r in results) for k in range(len(results[0])))
        else:
            out = fn(*values)
            if isinstance(out, tuple):
                raise NonScalarOutputError(
                    "jacrev needs one array result, not a tuple", _def_loc(fn), "use vjp"
                )
            d = _pipeline().derivative(
                fn, "reverse", tuple(names), scalars, flat.key, signature=flat.signature
            )
            rows: list[list[Any]] = [[] for _ in names]
            basis = np.eye(
                _size(out),
                dtype=np.result_type(numpy_dtype(out.dtype) if foreign(out) else out, 0.0),
            )
            for e in basis:
                seed = e.reshape(np.shape(out)) if np.ndim(out) else e[0]
                _, grads = _pipeline().run(d, *flat.values, seed)
                for k, g in enumerate(grads):
                    rows[k].append(
                        as_array(g, np.result_type(numpy_dtype(g.dtype) if foreign(g) else g, 0.0))
                    )
            for k, w in enumerate(names):
                x = values[params.index(w)]
                stacked = np.stack([np.broadcast_to(r, np.shape(x)) for r in rows[k]])
                results.append(stacked.reshape(np.shape(out) + np.shape(x)))
        return results[0] if single else tuple(results)

    functools.update_wrapper(jac, f, updated=())
    # differentiated again through a plain function adgen reads (adgen.composable)
    jac.adgen_function = lambda: composable.jacobian_function(  # type: ignore[attr-defined]
        unwrap(f), names, "reverse" if mode == "reverse" else "forward"
    )
    return jac


def _batched(
    fn: types.FunctionType,
    w: str,
    x: Any,
    scalars: frozenset[str],
    flat: _Flat,
    chunk_size: int | None,
) -> Derivative | None:
    """The batched forward-mode code of ``fn`` w.r.t. ``w`` for this call's kinds, or None
    where it does not apply (or ``chunk_size=1`` asks for one pass per column)."""
    if chunk_size == 1 or _size(x) <= 1 or foreign(x):
        return None
    d = _pipeline().batched(fn, (w,), scalars, flat.key, flat.signature)
    return None if isinstance(d, str) else d


def _forward_columns(
    fn: types.FunctionType,
    w: str,
    x: Any,
    flat: _Flat,
    chunk_size: int | None,
    d: Derivative | None,
    scalars: frozenset[str],
) -> Any:
    """``(first column, tangents)`` for each chunk of the columns of the Jacobian w.r.t. ``w``
    (the tangents of the basis vectors of ``w``'s argument, stacked along a leading axis, each
    of the result's shape): one pass of the batched code ``d`` per chunk
    (:mod:`adgen.modes.batched`), or without it one forward pass per column."""
    n = _size(x)
    dtype = np.result_type(numpy_dtype(x.dtype) if foreign(x) else x, 0.0)
    if d is None:
        single = _pipeline().derivative(
            fn, "forward", (w,), scalars, flat.key, signature=flat.signature
        )
        for k, e in enumerate(np.eye(n, dtype=dtype)):
            out, t = _pipeline().run(
                single, *flat.values, e.reshape(np.shape(x)) if np.ndim(x) else e[0]
            )
            yield k, _one_column(t, out)
        return
    for start, basis in _bases(x, n, dtype, _chunk(flat.values, n, chunk_size)):
        _, t = _pipeline().run(d, *flat.values, basis)
        yield start, t


def _chunk(values: Sequence[Any], n: int, chunk_size: int | None) -> int:
    """Columns per batched pass: ``chunk_size``, or as many as keep a chunk's tangents
    (about the largest argument's size each) near :data:`_BATCH_NUMBERS` numbers."""
    largest = max([_size(v) for v in values if hasattr(v, "shape")] + [n, 1])
    return chunk_size or max(1, min(n, _BATCH_NUMBERS // largest))


def _bases(x: Any, n: int, dtype: Any, chunk: int) -> Any:
    """``(start, basis vectors start, start + 1, ... of x)`` for each chunk of ``chunk``."""
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        if stop - start == n:
            basis = _identity(n, dtype)
        else:
            basis = np.zeros((stop - start, n), dtype=dtype)
            basis[np.arange(stop - start), np.arange(start, stop)] = 1.0
        yield start, basis.reshape((stop - start, *np.shape(x)))


class _JacobianPlan:
    """What a call's argument kinds decided for a Jacobian by batched passes: the code, the
    cache entries that keep it right (``cache.fresh``: the function, the names it reads,
    and for ``hessian`` the gradient's code, unchanged), and where the argument is. A
    later call with arguments of the same kinds runs the code straight away
    (``_ValueAndGrad``'s plans do the same for gradients)."""

    def __init__(self, fn: Any, checks: list[tuple[Any, Any]], d: Derivative, index: int, x: Any):
        self.fn, self.checks, self.d, self.index = fn, checks, d, index
        self.generation = cache.generation
        self.n = _size(x)
        self.dtype = np.result_type(x, 0.0)
        # the chunks' (start, basis) by chunk_size: the arguments' kinds decide them
        self.bases: dict[int | None, list[tuple[int, Any]]] = {}

    @staticmethod
    def make(
        f: Any,
        fn: types.FunctionType,
        d: Derivative,
        index: int,
        x: Any,
        signature: Any,
        scalars: frozenset[str],
    ) -> _JacobianPlan | None:
        key = _pipeline().cache_key("forward_batched", d.wrt, scalars, (), True, True, signature)
        checks = [(fn, cache.entry(fn, key))]
        user = f.fn if isinstance(f, _ValueAndGrad) else unwrap(f)
        if isinstance(f, _ValueAndGrad):  # fn stands for the gradient's code: keep it too
            reverse = _pipeline().cache_key(
                f.mode, f.wrt, frozenset(), (), True, False, signature or (shapes.ANY_KIND,)
            )
            checks.append((user, cache.entry(user, reverse)))
        first = checks[0][1]
        if first is None or first[1] is not d or any(held is None for _, held in checks):
            return None
        return _JacobianPlan(user, checks, d, index, x)

    def run(self, f: Any, args: tuple[Any, ...], chunk_size: int | None, diagonal: bool) -> Any:
        """The Jacobian (its diagonal), or None where the plan no longer holds or the code
        fails (the full path then runs again and names the line)."""
        user = f.fn if isinstance(f, _ValueAndGrad) else unwrap(f)
        if user is not self.fn or self.generation != cache.generation:
            return None
        if not all(cache.fresh(fn, held) for fn, held in self.checks):
            return None
        x = args[self.index]
        bases = self.bases.get(chunk_size)
        if bases is None:
            chunk = _chunk(args, self.n, chunk_size)
            bases = list(_bases(x, self.n, self.dtype, chunk))
            if self.n * self.n <= _KEPT_BASIS_NUMBERS:  # (kept read-only: never written into)
                for _, basis in bases:
                    basis.flags.writeable = False
                self.bases[chunk_size] = bases
        try:
            columns = [(start, self.d.compiled(*args, basis)[1]) for start, basis in bases]
        except Exception:
            return None
        return _assembled(columns, x, diagonal)


@functools.lru_cache(maxsize=64)
def _identity(n: int, dtype: Any) -> Any:
    """``np.eye(n, dtype)``, read-only (tangents are never written into: one serves every
    call)."""
    eye = np.eye(n, dtype=dtype)
    eye.flags.writeable = False
    return eye


def _diagonal_part(tangents: Any, start: int, x: Any) -> Any:
    """The entries ``start + j`` of the tangents ``j`` of a chunk (``(k, *x.shape)``)."""
    k = len(tangents)
    rows = np.reshape(np.broadcast_to(tangents, (k, *np.shape(x))), (k, -1))
    if foreign(rows):  # (basic indices only: Dask has no such fancy indexing)
        return np.stack([rows[j, start + j] for j in range(k)])
    return rows[np.arange(k), start + np.arange(k)]


# how many numbers a batch of tangents may hold (32 MiB of float64): jacfwd's chunks
_BATCH_NUMBERS = 1 << 22
# a plan keeps its bases for the next call up to this many numbers (512 KiB of float64)
_KEPT_BASIS_NUMBERS = 1 << 16


def _one_column(t: Any, out: Any) -> Any:
    """One pass's tangent of the result ``out`` as a batch of one, of ``out``'s shape (a
    tuple of such for a tuple result)."""
    if isinstance(out, tuple):
        return tuple(_one_column(e, o) for e, o in zip(t, out))
    column = as_array(t, np.result_type(numpy_dtype(t.dtype) if foreign(t) else t, 0.0))
    return np.broadcast_to(column, np.shape(out))[None]


def _assembled(columns: Any, x: Any, diagonal: bool) -> Any:
    """The Jacobian w.r.t. ``x`` from ``(first column, tangents)`` chunk by chunk (with
    ``diagonal``: its diagonal, in ``x``'s shape); None if there are no columns (an empty
    ``x``: its diagonal is empty)."""
    if (
        isinstance(columns, list)
        and len(columns) == 1
        and not diagonal
        and type(columns[0][1]) is np.ndarray
    ):
        t = columns[0][1]  # (the common call, one chunk of one array: its batch axis last)
        if np.ndim(x) == 1:
            return t.transpose(*range(1, t.ndim), 0)
    parts = [_diagonal_part(t, start, x) if diagonal else t for start, t in columns]
    if not parts:
        return np.zeros(np.shape(x)) if diagonal else None
    if diagonal:
        return np.reshape(np.concatenate(parts), np.shape(x))
    return _stacked_to_jacobian(parts, x)


def _no_columns(out: Any) -> Any:
    """No tangents of a result ``out`` (a tuple of such for a tuple result)."""
    if isinstance(out, tuple):
        return tuple(_no_columns(o) for o in out)
    return np.zeros((0, *np.shape(out)))


def _stacked_to_jacobian(parts: list[Any], x: Any) -> Any:
    """The Jacobian of a result w.r.t. ``x`` from batches of its tangents (``(k,
    *result.shape)`` each, of the basis vectors of ``x`` in order; a tuple of Jacobians for a
    tuple result, whose tangents are tuples)."""
    if isinstance(parts[0], tuple):
        return tuple(_stacked_to_jacobian([p[k] for p in parts], x) for k in range(len(parts[0])))
    stacked = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)
    ndim = np.ndim(stacked) - 1
    # the batch axis (the input's entries) last
    stacked = np.transpose(stacked, (*range(1, ndim + 1), 0))
    if np.ndim(x) == 1:
        return stacked
    return np.reshape(stacked, np.shape(stacked)[:-1] + np.shape(x))


def _size(value: Any) -> int:
    """``np.size(value)`` from its shape (Dask has no ``np.size``: it would compute)."""
    return math.prod(np.shape(value))


@entry_point
def jacfwd(
    f: Callable[..., Any], wrt: Wrt = 0, *, chunk_size: int | None = None
) -> Callable[..., Any]:
    """The Jacobian of ``f`` by forward mode; its shape is ``out.shape + in.shape`` (for a
    tuple result, a tuple of those).

    The tangents of the input's basis vectors go through the code together, along a leading
    axis (:mod:`adgen.modes.batched`; ``adgen.source(f, "forward_batched", args=...)``
    shows that code), in chunks of ``chunk_size`` columns (default: as many as keep a chunk's
    tangents near 32 MiB); ``chunk_size=1``, or code batched mode does not apply to, runs one
    forward pass per input element.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sin(x) * x[0]
    >>> jacfwd(f)(np.array([0.0, 1.0])).round(3).tolist()
    [[0.0, 0.0], [0.841, 0.0]]
    """
    _check_chunk(chunk_size)
    return _jacobian(f, wrt, "forward", chunk_size)


@entry_point
def jacrev(f: Callable[..., Any], wrt: Wrt = 0) -> Callable[..., Any]:
    """The Jacobian of ``f`` by reverse mode (one VJP per output element)."""
    return _jacobian(f, wrt, "reverse")


@entry_point
def jacobian(
    f: Callable[..., Any], wrt: Wrt = 0, *, chunk_size: int | None = None
) -> Callable[..., Any]:
    """The Jacobian of ``f``: reverse mode when the result has fewer elements than the inputs,
    forward mode otherwise (batched as :func:`jacfwd`'s, ``chunk_size`` as there)."""
    _check_chunk(chunk_size)
    return _jacobian(f, wrt, "auto", chunk_size)


def _check_chunk(chunk_size: int | None) -> None:
    if chunk_size is not None and (
        not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1
    ):
        raise ValueError(f"chunk_size must be a positive integer or None, not {chunk_size!r}")


@entry_point
def hessian(
    f: Callable[..., Any], wrt: int | str = 0, *, chunk_size: int | None = None
) -> Callable[..., Any]:
    """The Hessian of a scalar function ``f`` w.r.t. one argument: forward mode over the
    reverse-mode code, the Hessian-vector products of all basis vectors in one batched pass
    (``chunk_size`` as for :func:`jacfwd`); its shape is ``x.shape + x.shape``.

    >>> import numpy as np
    >>> def f(x):
    ...     return x[0] ** 2 * x[1] + np.sin(x[1])
    >>> hessian(f)(np.array([1.0, 0.0])).tolist()
    [[0.0, 2.0], [2.0, 0.0]]
    """
    fn = unwrap(f)
    if not isinstance(wrt, (int, str)) or isinstance(wrt, bool):
        raise WrtError(
            f"hessian takes one argument to differentiate by, not {wrt!r}",
            _def_loc(fn),
            "pass a single index or name (gather several arrays into one)",
        )
    return jacfwd(grad(f, wrt), wrt, chunk_size=chunk_size)


@entry_point
def hvp(f: Callable[..., Any], wrt: int | str = 0) -> Callable[..., Any]:
    """``hvp(f, wrt)(*args, v)``: the Hessian of scalar ``f`` w.r.t. argument ``wrt`` times
    ``v`` (of that argument's shape), without forming the Hessian: forward mode over the
    reverse-mode code, at about the cost of two gradients.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(x ** 3)
    >>> hvp(f)(np.array([1.0, 2.0]), np.array([1.0, 1.0])).tolist()
    [6.0, 12.0]
    """
    fn = unwrap(f)
    (name,), single = _wrt_names(fn, wrt)
    if not single:
        raise WrtError(
            f"hvp takes one argument to differentiate by, not {wrt!r}",
            _def_loc(fn),
            "pass a single index or name",
        )
    index = _params(fn).index(name)
    g = grad(f, wrt)

    @entry_point
    def product(*args: Any, **kwargs: Any) -> Any:
        if not args:
            raise ShapeMismatchError(
                f"hvp: pass {fn.__name__}'s arguments and then the vector v",
                _def_loc(fn),
                "call hvp(f)(*args, v)",
            )
        *given, v = args
        primals = _bind(fn, tuple(given), kwargs)
        if np.shape(v) != np.shape(primals[index]):
            raise ShapeMismatchError(
                f"hvp: v has shape {np.shape(v)}, but `{name}` has shape "
                f"{np.shape(primals[index])}",
                _def_loc(fn),
                "pass v of the argument's shape",
            )
        tangents: list[Any] = [None] * len(primals)
        tangents[index] = v
        # (the gradient's tangent only, returned as the gradient is: like the argument)
        return jvp(g, primals, tangents, _tangent_like=primals[index])[1]

    functools.update_wrapper(product, f, updated=())
    product.adgen_function = lambda: composable.hvp_function(  # type: ignore[attr-defined]
        unwrap(g), name
    )
    return product


@entry_point
def laplacian(
    f: Callable[..., Any], wrt: int | str = 0, *, chunk_size: int | None = None
) -> Callable[..., Any]:
    """The Laplacian of scalar ``f`` w.r.t. one argument: the trace of its Hessian, the sum
    of the second derivatives along each input element (the Hessian's columns computed in
    batched passes, ``chunk_size`` as for :func:`jacfwd`; only its diagonal is kept).

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(x ** 2) + x[0] * x[1]
    >>> float(laplacian(f)(np.array([1.0, 2.0, 3.0])))
    6.0
    """
    product = hvp(f, wrt)
    (name,), _ = _wrt_names(unwrap(f), wrt)
    # the Hessian's diagonal, its columns in batched passes (one pass each where code is not
    # batched), as hessian's
    diagonal = _jacobian(grad(f, wrt), wrt, "forward", chunk_size, diagonal=True)

    @entry_point
    def trace(*args: Any, **kwargs: Any) -> Any:
        return np.sum(diagonal(*args, **kwargs))

    functools.update_wrapper(trace, f, updated=())
    trace.adgen_function = lambda: composable.laplacian_function(  # type: ignore[attr-defined]
        unwrap(product), name
    )
    return trace


@entry_point
def source(
    f: Callable[..., Any],
    mode: str = "reverse",
    wrt: Wrt = 0,
    optimize: bool = True,
    args: Sequence[Any] | None = None,
    backend: str = "numpy",
) -> str:
    """The Python source adgen generates for ``f`` in ``mode`` w.r.t. ``wrt``
    (``optimize=False``: without the IR optimizer, :mod:`adgen.middle.optimize`).

    Without ``args`` this is the general code, for arguments of any shape. With ``args``
    (example arguments, not run) it is the code adgen runs for a call with arguments of
    their kinds: specialised for the scalars among them and the arrays' shapes and dtypes,
    where broadcasting is decided before the code runs:

    >>> def f(x, y):
    ...     return np.sum(x * y)
    >>> for line in source(f, args=(np.ones(3), np.ones(3))).splitlines()[2:]:
    ...     print(line)
        # line 2: return np.sum(x * y)
        out = (x * y).sum()
        # adjoint of line 2: return np.sum(x * y)
        x_bar = y * np.float64(out_bar)
        return (out, (x_bar,))
    """
    if not isinstance(mode, str):  # (the arguments passed in mode's place: a common slip)
        raise TypeError(
            f"source's mode must be 'forward' or 'reverse', not {type(mode).__name__}: "
            "pass example arguments as args=(...)"
        )
    fn = unwrap(f)
    names, _ = _wrt_names(fn, wrt)
    if mode == "forward_batched":  # what jacfwd and hessian run, or why one pass per column
        return _batched_source(fn, names, args)
    if args is None:
        d = _pipeline().derivative(fn, mode, names, optimized=optimize)
        return _numba_source(d) if _backend(backend, False) == "numba" else d.generated.source
    flat = _Flat(_params(fn), _bind(fn, tuple(args), {}))
    leaves = tuple(leaf for w in names for leaf in flat.leaves(w))
    if mode == "forward":  # the tangents of the leaves that are floating point
        leaves = tuple(n for n, v in zip(flat.names, flat.values) if n in leaves and _float_like(v))
    scalars = _scalars(flat.names, flat.values)
    d = _pipeline().derivative(
        fn, mode, leaves, scalars, flat.key, optimized=optimize, signature=flat.signature
    )
    if _backend(backend, False) == "numba":  # the code Numba compiles, or why it cannot
        return _numba_source(d)
    return d.generated.source


def _numba_source(d: Derivative) -> str:
    """:func:`source` for ``backend="numba"``."""
    from adgen.backend.numba_code import NotForNumba, user_line
    from adgen.backend.numba_jit import rewrite

    try:
        return rewrite(d.generated, d.function.free).text
    except NotForNumba as exc:
        label = user_line(d.generated.source, exc.line) if exc.line else None
        where = f" (line {label})" if label else ""
        return f"# adgen: backend='numba' runs this NumPy code: it uses {exc.why}{where}\n" + (
            d.generated.source
        )


def _batched_source(
    fn: types.FunctionType, names: tuple[str, ...], args: Sequence[Any] | None
) -> str:
    """:func:`source` of batched forward mode (code made for the kinds of ``args``), or, where
    it does not apply, why, above the one-tangent code ``jacfwd`` then runs per column."""
    why = "batched code is made for the arguments' shapes: pass args="
    flat, scalars = None, frozenset[str]()
    if args is not None:
        flat = _Flat(_params(fn), _bind(fn, tuple(args), {}))
        scalars = _scalars(flat.names, flat.values)
        made = _pipeline().batched(fn, names, scalars, flat.key, flat.signature)
        if not isinstance(made, str):
            return made.generated.source
        why = made
    d = _pipeline().derivative(
        fn,
        "forward",
        names,
        scalars,
        flat.key if flat is not None else (),
        signature=flat.signature if flat is not None else (),
    )
    return (
        f"# adgen: jacfwd runs this forward-mode code once per column (not batched: {why})\n"
        + d.generated.source
    )


class Differentiable:
    """A function decorated with :func:`differentiate`: calling it runs the original."""

    def __init__(
        self,
        f: Callable[..., Any],
        wrt: Wrt,
        mode: str,
        backend: str | None = None,
        strict: bool = False,
    ) -> None:
        self.fn = unwrap(f)
        self.default_wrt = wrt
        self.default_mode = mode
        self.backend = backend
        self.strict = strict
        functools.update_wrapper(self, f)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    @property
    @entry_point
    def grad(self) -> Callable[..., Any]:
        return grad(self.fn, self.default_wrt, backend=self.backend, strict=self.strict)

    @property
    @entry_point
    def value_and_grad(self) -> Callable[..., tuple[Any, Any]]:
        return value_and_grad(self.fn, self.default_wrt, backend=self.backend, strict=self.strict)

    @entry_point
    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
        return jvp(self.fn, primals, tangents, backend=self.backend, strict=self.strict)

    @entry_point
    def vjp(self, *primals: Any) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
        return vjp(self.fn, *primals, backend=self.backend, strict=self.strict)

    @entry_point
    def source(self, mode: str | None = None, wrt: Wrt | None = None) -> str:
        return source(self.fn, mode or self.default_mode, self.default_wrt if wrt is None else wrt)

    def __repr__(self) -> str:
        return f"<adgen.differentiate {self.fn.__qualname__}>"

    def _repr_html_(self) -> str:
        return display.repr_html(self.source)

    def _repr_markdown_(self) -> str:
        return display.repr_markdown(self.source)


@entry_point
def differentiate(
    f: Callable[..., Any] | None = None,
    *,
    wrt: Wrt = 0,
    mode: str = "reverse",
    backend: str | None = None,
    strict: bool = False,
) -> Any:
    """Decorator: ``@differentiate`` or ``@differentiate(wrt=..., mode=..., backend=...)``.

    The decorated function runs unchanged; it gains ``.grad``,
    ``.value_and_grad``, ``.jvp``, ``.vjp`` and ``.source(mode=...)`` (``backend`` and
    ``strict`` as for :func:`grad`).
    """
    if mode not in ("forward", "reverse"):
        raise ValueError(f"mode must be 'forward' or 'reverse', not {mode!r}")
    _backend(backend, strict)  # (an unknown backend is refused here)
    if f is None:
        return lambda g: Differentiable(g, wrt, mode, backend, strict)
    return Differentiable(f, wrt, mode, backend, strict)


# -- traces --------------------------------------------------------------------------------------
class Trace:
    """The three-address IR of a function; ``str()`` lists it like an evaluation trace.

    With arguments, every binding also shows the value it takes.
    """

    def __init__(self, function: ir.Function, values: dict[str, Any] | None = None) -> None:
        self.function = function
        self.values = values

    def __str__(self) -> str:
        return ir.format_function(self.function, self.values)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return display.repr_html(self.__str__)

    def _repr_markdown_(self) -> str:
        return display.repr_markdown(self.__str__)

    def to_dot(self) -> str:
        """The computation graph as Graphviz dot text (render with ``dot -Tsvg``)."""
        return display.to_dot(self.function, self.values)


@entry_point
def trace(f: Callable[..., Any], *args: Any, **kwargs: Any) -> Trace:
    """The IR of ``f``; given arguments, evaluated at them (like the AD survey's Table 2)."""
    fn = unwrap(f)
    function = _pipeline().lowered(fn)
    if not args and not kwargs:
        return Trace(function)
    values = _bind(fn, args, kwargs)
    try:
        return Trace(
            function, _pipeline().guarded(fn, "trace", lambda: _evaluate(function, values))
        )
    except InternalError:
        fn(*values)  # an error of the function itself shows as the user's own
        raise


def _evaluate(function: ir.Function, args: list[Any]) -> dict[str, Any]:
    """Run the IR's primal code and collect every local value."""
    from adgen.backend.emit import CodeWriter, open_block, open_while
    from adgen.generated import Generated

    def block(stmts: list[ir.Stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, ir.Assign):
                w.stmt(ir.stmt_to_ast(stmt))
            elif isinstance(stmt, (ir.If, ir.For)):
                open_block(w, stmt)
                block(stmt.body) if stmt.body else w.line("pass")
                w.close()
                if isinstance(stmt, ir.If) and stmt.orelse:
                    w.open("else:")
                    block(stmt.orelse)
                    w.close()
            elif isinstance(stmt, ir.While):
                open_while(w, stmt, block)
                block(stmt.body) if stmt.body else w.line("pass")
                w.close()

    w = CodeWriter()
    w.open(f"def {function.name}_trace({', '.join(function.params)}):")
    block(function.body)
    w.line("return locals()")
    w.close()
    gen = Generated(f"{function.name}_trace", function.params, w.render())
    result: dict[str, Any] = load(gen, function.free)(*args)
    return result


# -- adgen.show ----------------------------------------------------------------------------------
class SourceView:
    """The generated source of a derivative, for display; made by :func:`show`.

    The code is generated when it is first displayed (or ``.source`` is read):
    errors appear in the display instead of being raised.
    """

    def __init__(self, f: Callable[..., Any], mode: str = "reverse", wrt: Any = 0) -> None:
        if mode not in ("forward", "reverse"):
            raise ValueError(f"mode must be 'forward' or 'reverse', not {mode!r}")
        self.f = f
        self.mode = mode
        self.wrt = wrt

    @property
    @entry_point
    def source(self) -> str:
        """The generated source (raises the :class:`adgen.AdgenError` if there is none)."""
        return source(self.f, self.mode, self.wrt)

    def _produce(self) -> str:
        return self.source

    def _repr_html_(self) -> str:
        return display.repr_html(self._produce)

    def _repr_markdown_(self) -> str:
        return display.repr_markdown(self._produce)

    def __str__(self) -> str:
        return display.render(self._produce)[0]

    def __repr__(self) -> str:
        name = getattr(self.f, "__qualname__", type(self.f).__name__)
        return f"<adgen.show {self.mode} mode of {name}, wrt={self.wrt!r}>"


def show(f: Callable[..., Any], mode: str = "reverse", wrt: Any = 0) -> SourceView:
    """Display the source adgen generates for ``f`` (the notebook companion of ``adgen.source``).

    In a notebook, ``adgen.show(f)`` as the last line of a cell shows the
    highlighted code; ``print(adgen.show(f))`` prints it.

    >>> def f(x):
    ...     return x * x
    >>> view = show(f, mode="forward")
    >>> view
    <adgen.show forward mode of f, wrt=0>
    >>> print(view)  # doctest: +ELLIPSIS
    # adgen: forward mode ...
    def f_jvp(x, x_dot):
    ...
    >>> "f_jvp" in view._repr_html_() and view._repr_markdown_().startswith("```python")
    True
    """
    return SourceView(f, mode, wrt)


# -- Graphviz ------------------------------------------------------------------------------------


# -- adgen.export ---------------------------------------------------------------------------------
@entry_point
def export(
    f: Callable[..., Any],
    path_or_dir: str | os.PathLike[str],
    mode: str = "reverse",
    wrt: int | str | Sequence[int | str] = 0,
) -> Path:
    """Write the derivative of ``f`` as a standalone module; return the module's path.

    ``path_or_dir`` is a ``.py`` file to write, or a directory (created if
    needed) that gets ``<name>_vjp.py`` / ``<name>_jvp.py``. ``adgen_runtime.py``
    is written next to the module. The module needs only NumPy:

        >>> import adgen, numpy as np
        >>> def loss(w, x):                        # doctest: +SKIP
        ...     return np.sum(np.tanh(x * w))
        >>> adgen.export(loss, "build")            # doctest: +SKIP
        PosixPath('build/loss_vjp.py')

    and ``from loss_vjp import loss_vjp`` then gives ``loss_vjp(w, x, out_bar)``.
    Outside values ``f`` reads are written as literals when they are numbers,
    strings, None or tuples of those; a NumPy array (or any other object) is
    refused with an :class:`~adgen.errors.AdgenError`: pass it as an argument.
    """
    from adgen.backend.export import RUNTIME_MODULE, definitions, module_source, write_modules

    if mode not in ("forward", "reverse"):
        raise ValueError(f"mode must be 'forward' or 'reverse', not {mode!r}")
    fn: types.FunctionType = unwrap(f)
    names, _ = _wrt_names(fn, wrt)
    d = _pipeline().derivative(fn, mode, names)
    code = fn.__code__
    where = SourceLocation(code.co_filename, code.co_firstlineno)

    def refuse(name: str, value: Any) -> AdgenError:
        if isinstance(value, seam.Callback):
            return AdgenError(
                f"{fn.__qualname__} gives the function `{value.name}` to a SciPy solver: its "
                "derivative runs adgen's code for that function, made when it runs, which "
                "adgen.export cannot write into a module",
                where,
                "use adgen.grad / adgen.jvp (or the disk cache) for functions calling solvers",
            )
        if isinstance(value, np.ndarray):
            what = f"a NumPy array (shape {value.shape}, {value.dtype})"
        else:
            what = f"a {type(value).__name__}"
        return AdgenError(
            f"{fn.__qualname__} reads the outside value `{name}`, {what}; adgen.export writes "
            "only numbers, strings, None and tuples of those into a module (it never pickles)",
            where,
            f"pass `{name}` to {fn.__name__} as an argument",
        )

    outside = definitions(d.function.free, refuse)
    target = os.fspath(path_or_dir)
    if target.endswith(".py") and not os.path.isdir(target):
        directory, filename = os.path.dirname(target) or ".", os.path.basename(target)
    else:
        directory, filename = target, f"{d.generated.name}.py"
    if filename[:-3] == RUNTIME_MODULE:
        raise AdgenError(f"{target}: {RUNTIME_MODULE}.py is the runtime's file; choose another")
    text = module_source(
        d.generated,
        fn.__name__,
        list(d.function.params),
        mode,
        names,
        f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}",
        outside,
        "regenerate it with adgen.export(...).",
    )
    written = write_modules(directory, [(filename, text)])
    from pathlib import Path

    return Path(written[0])
