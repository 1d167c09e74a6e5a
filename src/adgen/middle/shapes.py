"""Static broadcast classes: which values provably have the same shape.

Shapes are unknown when adgen transforms a function, but broadcasting has
algebra: the shape of an elementwise result is the broadcast of its operands'
shapes, and broadcasting is associative, commutative and idempotent. So each
value gets the *set* of shape sources broadcast together to make it (a
parameter, a global, or the result of a non-elementwise operation such as a
reduction); two values with the same set have the same shape. A Python scalar
constant contributes nothing. This lets the generated code skip
``rt.unbroadcast`` and ``np.broadcast_to`` wherever they would do nothing.

>>> import numpy as np
>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> def f(x, y):
...     a = np.sin(x) * 2.0
...     return np.sum(a + x * y)
>>> classes = broadcast_classes(lower(parse_function(f)))
>>> sorted(classes["a"]), sorted(classes["out_2"]), sorted(classes["out"])
(['x'], ['x', 'y'], [])

(``np.sum`` without an axis is one number: its class is empty, like a scalar's.)
"""

from __future__ import annotations

import ast
import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from adgen import ir
from adgen.errors import SourceLocation, UnsupportedSyntaxError
from adgen.rules import registry
from adgen.rules.known import ANY_KIND as _ANY_KIND_KEY
from adgen.rules.known import LIBRARY
from adgen.rules.runtime.libraries import foreign, library, numpy_dtype

Classes = dict[str, frozenset[str]]
SCALARS = "<scalars>"  # entry listing the outside names known to be Python numbers


def atom_class(atom: ir.Atom, classes: Classes) -> frozenset[str]:
    """The broadcast class of an atom (empty for a scalar constant)."""
    if isinstance(atom, ir.Var):
        return classes.get(atom.name, frozenset({atom.name}))
    if isinstance(atom, ir.Free) and atom.name in classes.get(SCALARS, frozenset()):
        return frozenset()
    if isinstance(atom, ir.Free):
        return frozenset({"<global>" + atom.name})
    if isinstance(atom, ir.Const) and isinstance(atom.value, (int, float, bool)):
        return frozenset()
    return frozenset({repr(atom)})


def broadcast_classes(
    fn: ir.Function, scalars: frozenset[str] = frozenset(), multi: set[str] | None = None
) -> Classes:
    """Each local name's broadcast class; parameters in ``scalars`` are known to be scalars.

    A name bound more than once (``multi``: rebound, or bound inside a loop or branch) may
    change shape, so it gets a class of its own -- unless every value ever bound to it is a
    scalar (an empty class), which a fixed point over all its bindings proves: then it is a
    scalar too. Loop counters over ``range`` are integers, so scalars.
    """
    multi = multi or set()
    scalar_names = {p for p in fn.params if p in scalars} | {
        s.target for s in fn.statements() if isinstance(s, ir.For)
    }
    scalar_names |= multi - set(fn.params)  # optimistic start for rebound names
    # rebound names whose bindings may give them another shape: a value computed from one
    # has a class of its own (the name's class stands for its shape at any one time, and a
    # value computed from an earlier binding may have another)
    unstable: set[str] = set()
    while True:
        classes = _classes(fn, scalars, multi, scalar_names, unstable)
        widened, shifting = set(), set()
        for stmt in fn.statements():
            if isinstance(stmt, ir.Assign) and multi.intersection(stmt.targets):
                bound = _bound_class(stmt, classes, unstable)
                for t in stmt.targets:
                    if t not in multi:
                        continue
                    if t in scalar_names and bound != frozenset():
                        widened.add(t)
                    elif (
                        t not in scalar_names
                        and t not in unstable
                        and stmt.prim.name != "setitem"
                        and bound != frozenset({t})
                    ):
                        shifting.add(t)
        if not widened and not shifting:
            return classes
        scalar_names -= widened
        unstable |= shifting


def _bound_class(
    stmt: ir.Assign, classes: Classes, unstable: set[str] | frozenset[str] = frozenset()
) -> frozenset[str] | None:
    """The class of the value an assignment binds (None: not known from its operands)."""
    if stmt.prim.name == "setitem":
        return atom_class(stmt.args[0], classes)  # writing into an array keeps its shape
    if not stmt.prim.differentiable and stmt.prim.name in ("len", "int", "range"):
        return frozenset()
    if stmt.prim.full_reduction and len(stmt.targets) == 1:  # np.sum(x): one number
        bound = stmt.prim.bind(stmt.args, stmt.kwargs)
        axis, keepdims = bound.get("axis"), bound.get("keepdims")
        if (axis is None or axis == ir.Const(None)) and (
            keepdims is None or keepdims == ir.Const(False)
        ):
            return frozenset()
    if not stmt.prim.elementwise or len(stmt.targets) != 1:
        return None
    cls: frozenset[str] = frozenset()
    for atom in ir.stmt_args(stmt):
        if unstable.intersection(ir.atom_vars(atom)):
            return None
        cls |= atom_class(atom, classes)
    return cls


def _classes(
    fn: ir.Function,
    scalars: frozenset[str],
    multi: set[str],
    scalar_names: set[str],
    unstable: set[str],
) -> Classes:
    classes: Classes = {
        p: frozenset() if p in scalar_names and (p not in multi or p in scalars) else frozenset({p})
        for p in fn.params
    }
    classes[SCALARS] = frozenset(fn.scalars)
    for name in scalar_names:
        classes.setdefault(name, frozenset())
    for stmt in fn.statements():
        if isinstance(stmt, ir.Assign):
            bound = _bound_class(stmt, classes, unstable)
            for t in stmt.targets:
                if t in multi:
                    classes[t] = frozenset() if t in scalar_names else frozenset({t})
                elif bound is not None:
                    classes[t] = bound
                else:
                    classes[t] = frozenset({t})
        elif isinstance(stmt, ir.For):
            classes[stmt.target] = frozenset()
    return classes


def scalar_names(classes: Classes) -> frozenset[str]:
    """The local names that are provably scalars (their class is empty)."""
    return frozenset(n for n, c in classes.items() if n != SCALARS and c == frozenset())


def is_scalar(name: str, classes: Classes) -> bool:
    """Is this local name provably a scalar (its class is empty)?"""
    return classes.get(name) == frozenset()


# -- concrete shapes: specialising for the shapes of one call's arguments ----------------------
#
# When a derivative is made for a call, the shapes and dtypes of its array arguments are known
# (the cache is keyed on them, like a jit cache). :func:`infer` propagates them through the IR:
# elementwise operations by broadcasting, everything else by calling the operation once on
# stand-in arrays of the right shape and dtype (zero-stride views: no memory). Only what
# cannot depend on the *values* of the arguments is inferred -- a value only the shapes
# determine (``n = x.shape[0]``) is known exactly, a mask's result (``x[x > 0]``) is not.


@dataclass(frozen=True)
class Known:
    """What is known of a value before the function runs: its shape and dtype, whether it is
    an array (``"array"``), a NumPy scalar (``"numpy"``) or a Python number (``"python"``),
    and the value itself when the argument shapes alone determine it (``n = x.shape[0]``)."""

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    kind: str
    value: Any = None
    has_value: bool = False


Shapes = dict[str, Known]
Signature = tuple[tuple[str, Any], ...]


def describe(value: Any) -> Any:
    """What the specialisation keys on for one argument: ``(shape, dtype)`` of an array, the
    type of a number, or None (anything else: not specialised).

    >>> describe(np.zeros((2, 3))), describe(1.5), describe(None), describe([1.0])
    (((2, 3), '<f8'), 'float', 'none', None)
    >>> describe(True), describe(False), describe("lower")
    ('true', 'false', ('str', 'lower'))

    An array of another library (Dask, CuPy) is described with its library's name too:
    the code made for it creates arrays on that library's side (see :data:`LIBRARY`).
    """
    kind = type(value)
    if kind is np.ndarray:
        return (value.shape, value.dtype.str)
    if value is None:  # (an option left out: `if weights is None` decided for it)
        return "none"
    if kind is bool:  # (an option: the code is made for its value, `if keepdims:` decided)
        return "true" if value else "false"
    if kind is str and len(value) <= _OPTION_LENGTH:  # (an option: `method="brent"`)
        return ("str", value)
    if kind is float or kind is int or kind is complex:
        return kind.__name__
    if isinstance(value, np.generic):
        return ("numpy", value.dtype.str)
    if foreign(value):
        try:
            shape = tuple(int(n) for n in value.shape)  # unknown (nan) sizes: not specialised
            dtype = numpy_dtype(value.dtype).str
        except (TypeError, ValueError):
            return None
        return (shape, dtype, library(value))
    return None


# A signature entry (not a parameter) asking for code right for real and complex arguments
# alike, their kinds unknown: nested derivatives (adgen.seam), derivative objects called
# inside differentiated code. See adgen.modes.complexvalues.
ANY_KIND: tuple[str, Any] = (_ANY_KIND_KEY, None)


# the longest string the code is made for by its value (an option's name; longer: a text the
# code only reads, not specialised)
_OPTION_LENGTH = 40


def is_complex(description: Any) -> bool:
    """Does a :func:`describe` description say complex?

    >>> is_complex(describe(np.zeros(2, complex))), is_complex(describe(1j)), is_complex("float")
    (True, True, False)
    """
    if description == "complex":
        return True
    return (
        isinstance(description, tuple)
        and description[0] != "str"
        and np.dtype(description[1]).kind == "c"
    )


def _known_of(description: Any) -> Known | None:
    if description is None or description == "none":
        return None
    if description in ("true", "false"):  # (a bool the code is made for: its value)
        return Known((), np.dtype(bool), "python", description == "true", True)
    if isinstance(description, tuple) and description[0] == "str":
        return None  # (a string the code is made for: its value is a constant of the code)
    if isinstance(description, str):
        python = {"float": float, "int": int, "bool": bool, "complex": complex}[description]
        return Known((), np.dtype(python), "python")
    first, dtype = description[:2]
    if first == "numpy":
        return Known((), np.dtype(dtype), "numpy")
    return Known(tuple(first), np.dtype(dtype), "array")


def _known_result(value: Any, exact: bool) -> Known | None:
    """What is known of a result computed from stand-ins (``exact``: from known values only)."""
    if isinstance(value, np.ndarray):
        return Known(value.shape, value.dtype, "array")
    if isinstance(value, np.generic):
        return Known((), value.dtype, "numpy", value.item() if exact else None, exact)
    if type(value) in (float, int, bool, complex):
        return Known((), np.dtype(type(value)), "python", value if exact else None, exact)
    if exact and _small(value):
        return Known((), np.dtype(object), "python", value, True)
    return None


def _small(value: Any) -> bool:
    """A value worth knowing exactly: None, a number, a dtype, or a tuple of such (a
    shape)."""
    if value is None or type(value) in (int, float, bool) or isinstance(value, np.dtype):
        return True
    return type(value) is tuple and len(value) <= 64 and all(_small(v) for v in value)


# Primitives that are not differentiable but whose result's shape never depends on the
# values of their arguments; the first group's results are known exactly from shapes.
_SHAPE_QUERIES = frozenset(
    {".shape", ".ndim", ".size", ".dtype", "np.shape", "np.ndim", "np.size", "len", "rt.is_complex"}
)
# runtime helpers of derivative code (adgen reads it again for a nested derivative) whose
# results' shapes and dtypes follow from their arguments' shapes and dtypes alone
_SHAPED_HELPERS = frozenset(
    {"rt.zeros_like", "rt.unbroadcast", "rt.rebroadcast", "rt.unreduce", "rt.real_like",
     "rt.is_complex", "rt.Like", "rt.matmul_vjp_a", "rt.matmul_vjp_b", "rt.dot_vjp_a",
     "rt.dot_vjp_b", "rt.getitem_vjp", "rt.cumsum_vjp", "rt.cast_like"}
)  # fmt: skip
_SHAPE_ONLY = frozenset(
    {
        "eq", "ne", "lt", "le", "gt", "ge", "not_", "np.equal", "np.not_equal", "np.greater",
        "np.greater_equal", "np.less", "np.less_equal", "np.logical_not", "np.logical_and",
        "np.logical_or", "np.logical_xor", "np.isnan", "np.isfinite", "np.isinf", "np.floor",
        "np.ceil", "np.sign", "np.signbit", "np.rint", "np.trunc", "np.fix", "np.around",
        "np.round", "np.zeros_like", "np.ones_like", "np.empty_like", "rt.zeros_like",
    }
)  # fmt: skip
# functions whose result's shape or dtype the values of their arguments decide
_VALUE_KINDS = frozenset(
    {
        # the residuals' length depends on the rank of `a` (stand-ins are rank one)
        "np.linalg.lstsq",
        "scipy.linalg.lstsq",
        # the dtype depends on the values: real input gives real arrays when every
        # eigenvalue is real (a stand-in's are), complex ones otherwise
        "np.linalg.eig",
        "np.linalg.eigvals",
        # a complex argument gives a real result when its imaginary part is small
        "np.real_if_close",
        # a real matrix with negative eigenvalues has a complex root and logarithm
        "scipy.linalg.sqrtm",
        "scipy.linalg.logm",
    }
)
_NEVER = (
    "setitem",
    "append",
    "pop",
    "assert",
    "raise",
    *_VALUE_KINDS,
)


def kinds_follow(prim: Any) -> bool:
    """May the kind (shape, dtype) of what a call of ``prim`` returns be computed on stand-ins
    of its arguments' kinds? Not for a call run as written (``print(x)``: only when the
    function runs), the user's function, random draws, adgen's helpers other than those
    that only follow shapes, nor the functions whose values decide (:data:`_NEVER`). The
    frontend asks it too (:meth:`~adgen.frontend.lower.identities.IdentitiesMixin.computed_sample`).
    """
    if prim.name in _NEVER or prim.user_fn is not None or prim.callee is not None:
        return False
    if prim.refusal is not None or prim.draws:
        return False
    return not (prim.name.startswith(("np.random", "rt.")) and prim.name not in _SHAPED_HELPERS)


class _Unknown(Exception):
    """A statement's result cannot be known from shapes alone."""


class _Inference:
    def __init__(self, fn: ir.Function, params: dict[str, Known]) -> None:
        self.fn = fn
        self.env: dict[str, Known | None] = dict(params)  # None: unknown (bound, not knowable)
        for p in fn.params:
            self.env.setdefault(p, None)
        self.namespace = fn.namespace()
        self.memo: dict[tuple[int, tuple[Any, ...]], tuple[Known | None, ...]] = {}
        self.changed = False
        # names bound to range(...): a loop over one binds an integer
        self.ranges = {
            s.targets[0]
            for s in fn.statements()
            if isinstance(s, ir.Assign) and s.prim.name == "range"
        }

    def bind(self, name: str, known: Known | None) -> None:
        if name not in self.env:
            self.env[name] = known
            self.changed = True
            return
        old = self.env[name]
        if old is None or old == known:
            return
        joined: Known | None = None
        if known is not None and (old.shape, old.dtype, old.kind) == (
            known.shape,
            known.dtype,
            known.kind,
        ):
            joined = Known(old.shape, old.dtype, old.kind)  # the same shape, other values
        if joined != old:  # (a join already made is no change: the fixed point is reached)
            self.env[name] = joined
            self.changed = True

    def block(self, stmts: list[ir.Stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, ir.Assign):
                self.assign(stmt)
            elif isinstance(stmt, ir.If):
                self.block(stmt.body)
                self.block(stmt.orelse)
            elif isinstance(stmt, ir.For):
                self.bind(stmt.target, self.loop_item(stmt.iter))
                self.block(stmt.body)
            elif isinstance(stmt, ir.While):
                self.block(stmt.test_body)
                self.block(stmt.body)

    def loop_item(self, atom: ir.Atom) -> Known | None:
        if isinstance(atom, ir.Var) and atom.name in self.ranges:
            return Known((), np.dtype(int), "python")
        known = self.env.get(atom.name) if isinstance(atom, ir.Var) else None
        if known is None or known.kind != "array" or not known.shape:
            return None
        return Known(known.shape[1:], known.dtype, "array" if known.shape[1:] else "numpy")

    def assign(self, stmt: ir.Assign) -> None:
        atoms = list(ir.stmt_args(stmt))
        names = {v for atom in atoms for v in ir.atom_vars(atom)}
        if any(v not in self.env for v in names):
            return  # read before any binding was seen: wait for the next pass
        key = (id(stmt), tuple(self.env[v] for v in sorted(names)))
        if key not in self.memo:
            try:
                results = self.evaluate(stmt)
            except _Unknown:
                results = (None,) * len(stmt.targets)
            self.memo[key] = results
        for target, known in zip(stmt.targets, self.memo[key]):
            self.bind(target, known)

    def evaluate(self, stmt: ir.Assign) -> tuple[Known | None, ...]:
        prim = stmt.prim
        if prim.name == "setitem" and isinstance(stmt.args[0], ir.Var):
            # writing into an array keeps its shape, dtype and kind (not its values)
            old = self.env.get(stmt.args[0].name)
            if old is None or old.kind != "array":
                raise _Unknown
            return (Known(old.shape, old.dtype, old.kind),)
        if not kinds_follow(prim):
            raise _Unknown
        if prim.name == "rt.Like" and len(stmt.args) == 1 and isinstance(stmt.args[0], ir.Var):
            # the shape and dtype of an array, kept for rt.unbroadcast/rt.unreduce: it stands
            # for that array there
            described = self.env.get(stmt.args[0].name)
            if described is None:
                raise _Unknown
            return (Known(described.shape, described.dtype, described.kind),)
        if prim.name == "np.isscalar" and len(stmt.args) == 1 and not stmt.kwargs:
            # a NumPy or Python number, not an array (a 0-d one too): the kind decides
            arg = stmt.args[0]
            known = self.env.get(arg.name) if isinstance(arg, ir.Var) else None
            if known is None:
                raise _Unknown
            return (Known((), np.dtype(bool), "python", known.kind != "array", True),)
        values: dict[str, Any] = {}
        stand_ins = False
        for v in {v for atom in ir.stmt_args(stmt) for v in ir.atom_vars(atom)}:
            known = self.env[v]
            if known is None:
                raise _Unknown
            if known.has_value:
                values[v] = known.value
            else:
                stand_ins = True
                values[v] = known
        if stand_ins and prim.elementwise:
            return (self.elementwise(stmt, values),)
        if (
            stand_ins
            and not prim.differentiable
            and not prim.derivative_cut
            and prim.name not in _SHAPE_QUERIES | _SHAPE_ONLY
        ):
            raise _Unknown  # np.nonzero(x), np.argmax(x): the values decide
        if stand_ins:
            for v, known in values.items():
                if isinstance(known, Known):
                    values[v] = self.stand_in(stmt, v, known)
        result = self.run(stmt, values)
        exact = not stand_ins or prim.name in _SHAPE_QUERIES
        if len(stmt.targets) == 1:
            return (_known_result(result, exact),)
        if not isinstance(result, (tuple, list)) or len(result) != len(stmt.targets):
            raise _Unknown
        return tuple(_known_result(r, exact) for r in result)

    def stand_in(self, stmt: ir.Assign, name: str, known: Known) -> Any:
        """A value of the right shape and dtype for ``name`` (zero-stride: no memory)."""
        if known.dtype.kind not in "fc":
            # an integer or boolean's value can decide a shape (np.zeros(n), x[mask], x[i:j]):
            # only a plain integer index is safe (x[i] drops an axis whatever i is)
            if not (stmt.prim.name == "getitem" and self.direct_index(stmt, name)):
                raise _Unknown
            if not self.uniform_items(stmt.args[0]):
                raise _Unknown  # (`Ws[i]` of a list of matrices of different shapes)
            if known.dtype.kind not in "iu":
                raise _Unknown
        one = np.ones((), known.dtype) if known.dtype.kind in "fc" else np.zeros((), known.dtype)
        if known.kind == "array":
            return np.broadcast_to(one, known.shape)
        return _of_kind(one, known)

    def uniform_items(self, seq: ir.Atom) -> bool:
        """Is every item of ``seq`` of one shape, dtype and kind (an array's rows; a list or
        tuple of the program's whose items are alike), so that any index tells the kind of
        all? Items of a list that differ (``Ws[i]``: layers of several widths) are not."""
        if isinstance(seq, ir.Var):
            known = self.env.get(seq.name)
            return known is not None and known.kind == "array"
        if isinstance(seq, ir.Free):
            value = self.namespace.get(seq.name)
        elif isinstance(seq, ir.Const):
            value = seq.value
        else:
            return False
        if isinstance(value, np.ndarray):
            return True
        if not isinstance(value, (list, tuple)) or not value:
            return False
        try:
            kinds = {(type(v), np.shape(v), getattr(v, "dtype", None)) for v in value}
        except ValueError:  # (an item that is a ragged list: no shape)
            return False
        return len(kinds) == 1

    @staticmethod
    def direct_index(stmt: ir.Assign, name: str) -> bool:
        """Is ``name`` an item of the index itself (``x[i]``, ``x[i, :]``), not a bound?"""
        index = stmt.args[1] if len(stmt.args) > 1 else None
        items = index.items if isinstance(index, ir.Tup) else (index,)
        if stmt.args[0] == ir.Var(name):
            return False
        return any(item == ir.Var(name) for item in items)

    def elementwise(self, stmt: ir.Assign, values: dict[str, Any]) -> Known | None:
        """Broadcast the operands' shapes; the dtype from one-element stand-ins."""
        shapes = []
        for atom in ir.stmt_args(stmt):  # every operand: names, globals and constants
            if isinstance(atom, ir.Var):
                known = values[atom.name]
                shapes.append(known.shape if isinstance(known, Known) else np.shape(known))
            elif isinstance(atom, ir.Free):
                shapes.append(np.shape(self.namespace[atom.name]))
            elif isinstance(atom, ir.Const):
                shapes.append(np.shape(atom.value))
            else:
                raise _Unknown
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise _Unknown from None
        small = {}
        for v, known in values.items():
            if isinstance(known, Known):
                small[v] = _of_kind(np.ones((1,) * len(known.shape), known.dtype), known)
            else:
                small[v] = np.ones((1,) * np.ndim(known)) if np.ndim(known) else known
        result = self.run(stmt, small)
        dtype = getattr(result, "dtype", None)
        if dtype is None:
            dtype = np.dtype(type(result)) if type(result) in (float, int, bool, complex) else None
        if dtype is None:
            raise _Unknown
        if shape:
            return Known(shape, dtype, "array")
        kind = (
            "array"
            if isinstance(result, np.ndarray)
            else ("numpy" if isinstance(result, np.generic) else "python")
        )
        return Known((), dtype, kind)

    def run(self, stmt: ir.Assign, values: dict[str, Any]) -> Any:
        expr = ast.Expression(body=ir.primal_expr(stmt))
        try:
            code = compile(ast.fix_missing_locations(expr), "<shapes>", "eval")
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return eval(code, self.namespace, values)
        except Exception:
            raise _Unknown from None


def _of_kind(one: np.ndarray[Any, Any], known: Known) -> Any:
    """``one`` as the kind of value ``known`` describes: an array, a NumPy or a Python number."""
    if known.kind == "array":
        return one
    return one[()] if known.kind == "numpy" else one.item()


def infer(fn: ir.Function, signature: Signature) -> Shapes:
    """What is known of each local name, given what the call's arguments are.

    ``signature`` pairs parameters with :func:`describe` of their arguments:

    >>> from adgen.frontend.parse import parse_function
    >>> from adgen.frontend.lower import lower
    >>> def f(W, x):
    ...     n = x.shape[0]
    ...     h = np.tanh(W @ x)
    ...     return np.sum(h * h) / n
    >>> known = infer(lower(parse_function(f)), (("W", describe(np.ones((3, 4)))),
    ...                                          ("x", describe(np.ones(4)))))
    >>> known["h"].shape, known["n"].value, known["out_2"].kind
    ((3,), 4, 'numpy')
    """
    params = {p: k for p, d in signature if (k := _known_of(d)) is not None}
    inference = _Inference(fn, params)
    for _ in range(8):
        inference.changed = False
        inference.block(fn.body)
        if not inference.changed:
            return {n: k for n, k in inference.env.items() if k is not None}
    return {}  # no fixed point: know nothing rather than something wrong


def refine(classes: Classes, shapes: Shapes) -> Classes:
    """Broadcast classes made exact by known shapes: values of equal shape share a class.

    A NumPy or Python scalar keeps the empty class (a scalar never broadcasts anything); an
    array of known shape gets a class naming its shape.
    """
    out = dict(classes)
    for name, known in shapes.items():
        if name not in classes or name == SCALARS:
            continue
        if known.kind != "array" and not known.shape:
            out[name] = frozenset()
        else:
            out[name] = frozenset({f"<shape>{known.shape}"})
    return out


def specialised_for(fn: ir.Function, shapes: Shapes) -> str:
    """The header comment's note of the array shapes generated code is specialised for."""
    arrays = [
        f"{p} {shapes[p].shape}" for p in fn.params if p in shapes and shapes[p].kind == "array"
    ]
    return f"; for shapes {', '.join(arrays)}" if arrays else ""


# what rules may ask of a value: name -> (shape, dtype name)
Answers = dict[str, tuple[tuple[int, ...], str]]

# :data:`adgen.rules.known.LIBRARY`, the key of :data:`Answers` (not a Python name) whose
# presence says that arrays of another library than NumPy are among the arguments (its value:
# ``((), library)``): the code made for them must not create NumPy arrays from shapes where
# they meet those arrays (``rt.unreduce`` is then left to the runtime).


def specialise(
    fn: ir.Function, classes: Classes, signature: Signature
) -> tuple[Classes, Shapes, Answers]:
    """What a signature tells the code generators: the broadcast classes made exact by the
    inferred shapes, the shapes, and ``name -> (shape, dtype name)`` for the rules'
    questions (``rt.known_ndim``...). No signature: the general code, nothing known."""
    shapes = infer(fn, signature) if signature else {}
    known = {n: (k.shape, k.dtype.name) for n, k in shapes.items()}
    if signature:  # outside NumPy arrays the code reads (a model's data): their shapes too
        for n, value in fn.free.items():
            if type(value) is np.ndarray and n not in known:
                known[n] = (value.shape, value.dtype.name)
    if ANY_KIND in signature:
        known[_ANY_KIND_KEY] = ((), "")
    libraries = sorted({d[2] for _, d in signature if isinstance(d, tuple) and len(d) == 3})
    if libraries:
        known[LIBRARY] = ((), ",".join(libraries))
    return refine(classes, shapes), shapes, known


def settle_checks(fn: ir.Function, signature: Signature) -> ir.Function:
    """adgen's own checks (an ``assert`` carrying a refusal's words: lowering makes one for
    ``z += v`` where ``z`` may be an array another name sees, which Python would change in
    place) decided by the kinds of the call's arguments: a check known to pass is dropped, one
    known to fail is refused now, with its words; one the shapes do not decide stays in the
    code, to run.

    >>> from adgen.frontend.parse import parse_function
    >>> from adgen.frontend.lower import lower
    >>> def f(w):
    ...     z = w[0]
    ...     z += w[1]
    ...     return z
    >>> lowered = lower(parse_function(f))
    >>> vector = (("w", describe(np.ones(3))),)
    >>> [s.prim.name for s in lowered.body if isinstance(s, ir.Assign)]
    ['getitem', 'np.isscalar', 'assert', 'getitem', 'add']
    >>> [s.prim.name for s in settle_checks(lowered, vector).body if isinstance(s, ir.Assign)]
    ['getitem', 'getitem', 'add']
    >>> settle_checks(lowered, (("w", describe(np.ones((3, 3)))),))
    Traceback (most recent call last):
    ...
    adgen.errors.UnsupportedSyntaxError: ... in-place update of `z` ...
    """
    checks = [
        s
        for s in fn.statements()
        if isinstance(s, ir.Assign) and s.prim.name == "assert" and "what" in dict(s.kwargs)
    ]
    if not checks or not signature:
        return fn
    known = infer(fn, signature)
    passed: set[int] = set()
    tests: set[str] = set()  # the names the passed checks test (lowering made them for that)
    for check in checks:
        test, words = check.args[0], dict(check.kwargs)
        if not isinstance(test, ir.Var):
            continue
        found = known.get(test.name)
        if found is None or not found.has_value:
            continue
        if found.value:
            passed.add(id(check))
            tests.add(test.name)
            continue
        what, hint = words.get("what"), words.get("hint")
        raise UnsupportedSyntaxError(
            f"adgen does not support {getattr(what, 'value', what)}",
            _location(fn, check.line),
            str(getattr(hint, "value", "")),
        )
    passed |= {
        id(s)
        for s in fn.statements()
        if isinstance(s, ir.Assign) and len(s.targets) == 1 and s.targets[0] in tests
    }
    return dataclasses.replace(fn, body=_without(fn.body, passed))


# helpers returning their first argument itself when its shape is the second's
_RESHAPERS = frozenset({"rt.unbroadcast", "rt.rebroadcast"})


def settle_broadcasts(fn: ir.Function, signature: Signature) -> ir.Function:
    """``rt.unbroadcast(g, x)`` and ``rt.rebroadcast(c, g)`` -- derivative code adgen reads
    again for a nested derivative calls them -- made plain copies where the call's arguments
    show the two shapes agree (the helpers then return their first argument itself). The
    optimizer then reads the first argument in the copy's place. So are ``np.asarray(a)`` and
    ``np.asanyarray(a, dtype=...)`` of a NumPy array already of that dtype (library code
    converting its arguments; ``a = np.asarray(a)`` is dropped), and the test
    ``rt.accumulates_in(dtype, x)`` of a sum's ``dtype=`` is decided for a constant dtype:
    the ``if`` on it becomes the branch it takes.

    >>> from adgen.frontend.parse import parse_function
    >>> from adgen.frontend.lower import lower
    >>> from adgen import runtime as rt
    >>> def f(x, y):
    ...     return rt.unbroadcast(x * y, x) + rt.unbroadcast(x * y, y)
    >>> lowered = lower(parse_function(f))
    >>> signature = (("x", describe(np.ones(3))), ("y", describe(np.ones((2, 3)))))
    >>> [s.prim.name for s in settle_broadcasts(lowered, signature).body[:-1]]
    ['mul', 'rt.unbroadcast', 'mul', 'assign', 'add']
    """
    if not signature or not any(
        isinstance(s, ir.Assign) and s.prim.name in _SETTLED for s in fn.statements()
    ):
        return fn
    known = infer(fn, signature)
    copy = registry.lookup(registry.assign)
    assert copy is not None
    numpy_only = not any(isinstance(d, tuple) and len(d) == 3 for _, d in signature) and not any(
        foreign(v) for v in fn.free.values()
    )  # (another library's arrays: np.asarray makes NumPy's of them)

    def shape(atom: ir.Atom) -> tuple[int, ...] | None:
        found = known.get(atom.name) if isinstance(atom, ir.Var) else None
        return None if found is None else found.shape

    def settled(s: ir.Assign) -> ir.Assign:
        if (
            s.prim.name in _RESHAPERS
            and len(s.args) == 2
            and not s.kwargs
            and shape(s.args[0]) is not None
            and shape(s.args[0]) == shape(s.args[1])
        ):
            return dataclasses.replace(s, prim=copy, args=(s.args[0],))
        if s.prim.name in _AS_ARRAY and numpy_only and _as_itself(s, known, fn.free):
            if s.targets == (s.args[0].name,):  # type: ignore[union-attr]
                itself.add(id(s))  # `a = np.asarray(a)`: nothing to do
            return dataclasses.replace(s, prim=copy, args=(s.args[0],), kwargs=())
        if s.prim.name == "rt.accumulates_in" and numpy_only and len(s.targets) == 1:
            answer = _accumulates(s, known, fn.free)
            if answer is not None and counts.get(s.targets[0]) == 1:
                decided[s.targets[0]] = answer
                return dataclasses.replace(s, prim=copy, args=(ir.Const(answer),), kwargs=())
        return s

    itself: set[int] = set()
    decided: dict[str, bool] = {}  # a test of a sum's derivative the kinds decide
    counts = ir.binding_counts(fn)
    mapped = ir.map_assigns(fn.body, settled)
    kept = {id(n): id(o) for o, n in zip(_assigns(fn.body), _assigns(mapped))}
    body = _without(mapped, {n for n, o in kept.items() if o in itself})
    return dataclasses.replace(fn, body=taken(body, decided))


# np.asarray / np.asanyarray: the array itself where it is a NumPy array of the dtype asked
_AS_ARRAY = frozenset({"np.asarray", "np.asanyarray"})
# what settle_broadcasts reads
_SETTLED = _RESHAPERS | _AS_ARRAY | {"rt.accumulates_in"}


def _as_itself(s: ir.Assign, known: Shapes, free: dict[str, Any]) -> bool:
    """Does ``np.asarray(a, dtype, order=...)`` return ``a`` itself: ``a`` a NumPy array of
    known dtype, the dtype asked none or that one, no order or copy that would copy it?
    (Library code converts its arguments so: SciPy's ``_asarray(x, dtype=...)``.)"""
    found = known.get(s.args[0].name) if s.args and isinstance(s.args[0], ir.Var) else None
    if found is None or found.kind != "array" or len(s.args) > 2:
        return False
    options = dict(s.kwargs)
    if len(s.args) == 2:
        options["dtype"] = s.args[1]
    asked = {k: _constant(v, free) for k, v in options.items()}
    if any(v is _NOT_CONSTANT for v in asked.values()) or set(asked) - {"dtype", "order", "copy"}:
        return False
    if asked.get("order") not in (None, "K", "A") or asked.get("copy") not in (None, False):
        return False
    dtype = asked.get("dtype")
    try:
        return dtype is None or np.dtype(dtype) == found.dtype
    except TypeError:
        return False


_NOT_CONSTANT = object()


def _constant(atom: ir.Atom, free: dict[str, Any]) -> Any:
    """The value of a constant or of an outside name; :data:`_NOT_CONSTANT` for others."""
    if isinstance(atom, ir.Const):
        return atom.value
    if isinstance(atom, ir.Free) and atom.name in free:
        return free[atom.name]
    return _NOT_CONSTANT


def _accumulates(s: ir.Assign, known: Shapes, free: dict[str, Any]) -> bool | None:
    """What ``rt.accumulates_in(dtype, x)`` (the test of ``np.sum(x, dtype=dtype)``'s
    derivative) answers, where ``dtype`` is a constant and ``x`` real of a known dtype."""
    x = s.args[1] if len(s.args) == 2 else None
    if s.kwargs or not isinstance(x, ir.Var):
        return None
    dtype, found = _constant(s.args[0], free), known.get(x.name)
    if dtype is _NOT_CONSTANT and isinstance(s.args[0], ir.Var):  # (`dtype=x.dtype`)
        given = known.get(s.args[0].name)
        dtype = given.value if given is not None and given.has_value else _NOT_CONSTANT
    if dtype is _NOT_CONSTANT:
        return None
    try:
        kind = np.dtype(dtype).kind
    except TypeError:
        return None
    if found is None or found.dtype.kind not in "fiub" or kind not in "fiub":
        return None  # (complex: the helper refuses when it runs)
    return kind == "f"


def taken(block: list[ir.Stmt], decided: dict[str, bool]) -> list[ir.Stmt]:
    """``block`` with each ``if`` on a decided test replaced by the branch it takes."""

    def branch(s: ir.Stmt) -> list[ir.Stmt] | None:
        if isinstance(s, ir.If) and isinstance(s.test, ir.Var) and s.test.name in decided:
            return s.body if decided[s.test.name] else s.orelse
        return None

    return _rewrite(block, branch) if decided else block


def _assigns(block: list[ir.Stmt]) -> list[ir.Assign]:
    """The assignments of ``block`` at any depth, in order."""
    inside = ir.Function("", [], block, "", 0, {})
    return [s for s in inside.statements() if isinstance(s, ir.Assign)]


def _without(block: list[ir.Stmt], dropped: set[int]) -> list[ir.Stmt]:
    """``block`` without the statements whose ids are in ``dropped`` (at any depth)."""
    return _rewrite(block, lambda s: [] if id(s) in dropped else None)


def _rewrite(block: list[ir.Stmt], instead: Any) -> list[ir.Stmt]:
    """``block`` with each statement ``s`` for which ``instead(s)`` gives a list of
    statements replaced by them (themselves rewritten), in the blocks of ``if``/``for``/
    ``while`` too."""
    out: list[ir.Stmt] = []
    for s in block:
        new = instead(s)
        if new is not None:
            out.extend(_rewrite(new, instead))
            continue
        if isinstance(s, ir.If):
            s = dataclasses.replace(
                s, body=_rewrite(s.body, instead), orelse=_rewrite(s.orelse, instead)
            )
        elif isinstance(s, ir.For):
            s = dataclasses.replace(s, body=_rewrite(s.body, instead))
        elif isinstance(s, ir.While):
            s = dataclasses.replace(
                s, test_body=_rewrite(s.test_body, instead), body=_rewrite(s.body, instead)
            )
        out.append(s)
    return out


def _location(fn: ir.Function, line: int) -> SourceLocation:
    """Where a statement's line is in the user's source (an inlined function's own file)."""
    if line in fn.origins:
        return fn.origins[line]
    text = fn.source_lines.get(line, "")
    return SourceLocation(fn.filename, line, len(text) - len(text.lstrip()), text)
