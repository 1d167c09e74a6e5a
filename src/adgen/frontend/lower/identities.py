# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Which object a value is: ``a is b`` of values adgen can follow, and the kinds of the
caller's arguments (issue 34, part 2).

Library code tests identity to take a shortcut: ``if Y is X`` after ``X = Y = check(X)``
(scikit-learn's pairwise kernels: one set of norms, a zero diagonal), ``if out is x``.
Lowering follows each side back through the copies straight-line code made (passing an
argument, ``X = Y = v``, returning a parameter) to what the object is: one of the function's
arguments, an outside object, or the result of a statement -- a NumPy rule makes a new array,
one that may return its argument (``np.asarray(x)``: ``x`` itself, or a new array) may be
that argument or a new array. Two sides that are one object are ``True``; two that can be
no common object are ``False``; two arguments, or an argument and an outside object, are
tested when the code runs, on the caller's own objects (which no optimisation touches).

A differentiated argument is a value of its own, as in JAX and autograd, and as finite
differences see it (``x + h`` is a new array): ``x is Y`` is ``False`` for any other object
``Y``, even when the caller passed the same array twice (lowering is told which arguments
are differentiated: :func:`adgen.frontend.lower.lower`). Anything else is refused as before.

Where the code is made for the kinds of the arguments (their shapes and dtypes, as the API's
calls make it), an argument followed back through copies has a sample value of its kind
(:meth:`IdentitiesMixin.argument_sample`): ``isinstance``, ``hasattr``, ``getattr(x, name,
default)``, ``scipy.sparse.issparse``, ``x.dtype``, ``x.ndim`` of it are decided then, and
only the branch Python takes is lowered.

>>> import numpy as np
>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> def kernel(X, Y):
...     Z = Y
...     if Z is X:
...         return np.sum(X * X)
...     return np.sum(X * Z)
>>> print(lower(parse_function(kernel), differentiated=["X"]))  # doctest: +NORMALIZE_WHITESPACE
def kernel(X, Y):        # <doctest adgen.frontend.lower.identities[3]>:1
    out_1 = X * Y        # line 5
    out = np.sum(out_1)  # line 5
    return out           # line 5
>>> print(lower(parse_function(kernel)))  # doctest: +NORMALIZE_WHITESPACE
def kernel(X, Y):            # <doctest adgen.frontend.lower.identities[3]>:1
    cond_2 = Y is X          # line 3
    if cond_2:               # line 3
        out_1 = X * X        # line 4
        out = np.sum(out_1)  # line 4
    else:                    # line 3
        out_2 = X * Y        # line 5
        out = np.sum(out_2)  # line 5
    return out               # line 5
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir
from adgen.errors import AdgenError
from adgen.frontend.lower.objects import StaticArg
from adgen.frontend.lower.state import LowererState
from adgen.middle import shapes
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer

# what a side of `is` may be: ("arg", name), ("own", name) of a differentiated argument,
# ("outside", name), ("made", id(statement)), ("display", id(statement)), ("constant",
# id(statement)) of a copy of a constant
Identity = tuple[str, str | int]


# where a statement stands: its block and its position there
Place = tuple[list[ir.Stmt], int]


class IdentitiesMixin(LowererState):
    """``a is b`` decided by what each side's object is, or tested on the caller's objects."""

    def none_if_known(self: Lowerer, atom: Any) -> Any:
        """``None`` (the constant) where ``atom``'s value is None when transforming (a
        parameter's default passed on, a copy of it), else ``atom``."""
        if not isinstance(atom, ir.Var):
            return atom
        known = self.outside_copy(self.settled(atom))
        return known if isinstance(known, ir.Const) and known.value is None else atom

    def known_options(self: Lowerer, kwargs: list[tuple[str, Any]]) -> dict[str, Any] | None:
        """The values of keyword arguments known when transforming (a module or function
        passed, plain data), or None where one is not."""
        known: dict[str, Any] = {}
        for key, value in kwargs:
            data = (value.value,) if isinstance(value, StaticArg) else self.outside_data(value)
            if data is None:
                return None
            known[key] = data[0]
        return known

    def identity_by_origin(
        self: Lowerer, left: ir.Atom, right: ir.Atom, negate: bool, target: str | None, hint: str
    ) -> ir.Atom | None:
        """``left is right`` (``is not`` if ``negate``) when the objects each side may be are
        known: a constant where they tell, a test run with the program on two of the caller's
        objects; ``None`` where adgen cannot tell."""
        same = self.one_object(left)
        if left == right or (same is not None and same == self.one_object(right)):
            return ir.Const(not negate)
        if self.copy_of(left, right) or self.copy_of(right, left):  # `b = y` then `b is y`
            return ir.Const(not negate)
        if self.apart(left, right) or self.apart(right, left):
            return ir.Const(negate)
        found = [self.possible_objects(a) for a in (left, right)]
        if found[0] is None or found[1] is None or found[0] & found[1]:
            return None
        sides = [found[0], found[1]]
        if any(o[0] == "display" for s in sides for o in s):
            return None  # (two empty tuples may be one object)
        # no object in common: unless both may be objects of the caller's, which the call
        # decides (two arguments, or an argument and an outside object)
        callers = [{o for o in s if o[0] in ("arg", "outside")} for s in sides]
        if not (callers[0] and callers[1]):
            return ir.Const(negate)
        if not all(len(s) == 1 for s in sides):
            return None
        # (an argument read by its own name: not bound again on the way here)
        atoms = [self.object_atom(next(iter(s))) for s in sides]
        if any(isinstance(a, ir.Var) and self.one_object(a) != ("arg", a.name) for a in atoms):
            return None
        fn = registry.operator.is_not if negate else registry.operator.is_
        prim = registry.lookup(fn)
        assert prim is not None
        return self.emit(target, hint, prim, atoms, [], None)

    def apart(self: Lowerer, new: ir.Atom, other: ir.Atom) -> bool:
        """Is ``new`` a new array (or NumPy scalar) a NumPy rule made, and ``other`` an object
        that cannot be it: an argument, an outside object, a display, or the result of another
        statement that never returns its argument (``v3 * 2.0``: whatever numbers it holds)?"""
        made_at = self.traced(new)
        made = made_at[1] if made_at is not None and made_at[0][0] == "made" else None
        if made is None or made.prim.view or not _makes_array(made.prim):
            return False
        assert made_at is not None and made_at[2] is not None
        if isinstance(other, ir.Var) and self.bound_before(other.name, made_at[2]):
            return True  # (its object was there before the new array was made)
        traced = self.traced(other)
        if traced is None:
            return False
        (kind, _), stmt, _ = traced
        if kind in ("arg", "own", "outside", "display"):
            return True
        return (
            stmt is not None
            and stmt is not made
            and not stmt.prim.view
            and stmt.prim.refusal is None
            and stmt.prim.callee is None
            and stmt.prim.user_fn is None
            and not stmt.prim.lists
        )

    def copy_of(self: Lowerer, atom: ir.Atom, other: ir.Atom) -> bool:
        """Does ``atom`` hold, through copies, the value the name ``other`` holds here (``b =
        y`` and ``y`` not bound again since), whatever that is?"""
        if not (isinstance(atom, ir.Var) and isinstance(other, ir.Var)):
            return False
        name = atom.name
        block, end = self.block, len(self.block)
        while True:
            k = _last_binding(block, name, end)
            if k is None:
                outer = self.around(block)
                if outer is None:
                    return False
                block, end = outer, len(outer)
                continue
            stmt = block[k]
            if not (
                isinstance(stmt, ir.Assign)
                and stmt.targets == (name,)
                and stmt.prim is registry.lookup(registry.assign)
                and isinstance(stmt.args[0], ir.Var)
            ):
                return False
            name, end = stmt.args[0].name, k
            if name == other.name:
                return self.bound_before(name, (block, k))

    def bound_before(self: Lowerer, name: str, place: Place) -> bool:
        """Does ``name`` still hold the value it held at the statement at ``place`` -- bound
        by no statement since (in that block after it, or in the blocks being built inside
        it), so that it cannot be what a later statement made?"""
        block = self.block
        while block is not place[0]:
            if _last_binding(block, name, len(block)) is not None:
                return False
            outer = self.around(block)
            if outer is None:
                return False
            block = outer
        k = _last_binding(block, name, len(block))
        return k is None or k < place[1]

    def made_by(self: Lowerer, atom: ir.Atom, kind: str = "made") -> ir.Assign | None:
        """The statement that made ``atom``'s value (``kind`` "display": the copy of a list,
        tuple or dict display), followed back through copies."""
        traced = self.traced(atom)
        if traced is None or traced[0][0] != kind:
            return None
        return traced[1]

    def outside_copy(self: Lowerer, atom: ir.Atom) -> ir.Atom:
        """The outside object or the constant ``atom`` is a copy of (``dtype`` bound to
        ``float``, ``Y`` to None by a helper, then passed on), else ``atom`` itself."""
        traced = self.traced(atom) if isinstance(atom, ir.Var) else None
        if traced is None:
            return atom
        (kind, _), stmt, _ = traced
        if kind == "outside":
            return self.object_atom(traced[0])
        if kind == "constant" and stmt is not None:
            return stmt.args[0]
        return atom

    def object_atom(self: Lowerer, identity: Identity) -> ir.Atom:
        """The atom that reads an argument or an outside object."""
        kind, name = identity
        assert isinstance(name, str)
        return ir.Var(name) if kind == "arg" else ir.Free(name)

    def one_object(self: Lowerer, atom: ir.Atom) -> Identity | None:
        """The one object ``atom``'s value is here, followed back through copies to the
        statement that made it, the argument or the outside object (``None`` if adgen cannot
        tell)."""
        traced = self.traced(atom)
        return None if traced is None else traced[0]

    def traced(
        self: Lowerer, atom: ir.Atom, at: Place | None = None, through: list[str] | None = None
    ) -> tuple[Identity, ir.Assign | None, Place | None] | None:
        """What ``atom``'s value is before the statement at ``at`` (or here), the statement
        that made it and where that stands. The walk goes back through the block being built,
        then the blocks around it where it is a branch of an ``if`` (never out of a loop's
        body, which runs again), following copies: straight-line code, as Python runs it.
        ``through`` gets the names walked (the value's, then those it was copied from)."""
        if isinstance(atom, ir.Free):
            return ("outside", atom.name), None, None
        if not isinstance(atom, ir.Var):
            return None
        name = atom.name
        if through is not None:
            through.append(name)
        block, end = at if at is not None else (self.block, len(self.block))
        entered: list[Place] = []  # (the passes of unrolled loops walked into, and where)
        while True:
            k = _last_binding(block, name, end)
            if k is None and entered:  # (before that pass's statements: the block around it)
                block, end = entered.pop()
                continue
            if k is None:
                outer = self.around_end(block)
                if outer is not None:
                    block, end = outer
                    continue
                found = self.argument(name) if block is self.root.top_block else None
                return None if found is None else (found, None, None)
            stmt = block[k]
            if not isinstance(stmt, ir.Assign) and _writes_only_into(stmt, name):
                end = k  # (a loop or branch that only writes into it: still that object)
                continue
            if isinstance(stmt, ir.For) and self.certainly_runs(stmt, (block, k)):
                # a loop that runs at least once: the value its last pass left (bound at the
                # top level of its body; one bound in a branch there, or after a `break`'s
                # flag, stops the walk)
                block, end = stmt.body, len(stmt.body)
                continue
            if isinstance(stmt, ir.If) and stmt.test == ir.Const(True) and not stmt.orelse:
                entered.append((block, k))
                block, end = stmt.body, len(stmt.body)  # (a pass of an unrolled loop)
                continue
            if not (isinstance(stmt, ir.Assign) and stmt.targets == (name,)):
                return None  # (bound inside a block, or one item of a tuple)
            if stmt.prim is not registry.lookup(registry.assign):
                return ("made", id(stmt)), stmt, (block, k)
            first = stmt.args[0]
            if isinstance(first, ir.Free):
                return ("outside", first.name), None, None
            if isinstance(first, (ir.Tup, ir.Dct)):  # (never None, True or False)
                return ("display", id(stmt)), stmt, (block, k)
            if isinstance(first, ir.Const):  # (`Y = None` passed on through helpers)
                return ("constant", id(stmt)), stmt, (block, k)
            if not isinstance(first, ir.Var):
                return None
            name, end = first.name, k
            if through is not None:
                through.append(name)

    def certainly_runs(self: Lowerer, loop: ir.For, at: Place) -> bool:
        """Does ``loop`` (at ``at``) run its body at least once: a loop over ``range`` of
        numbers known when transforming, or over a tuple of known items (unrolled)?"""
        r = loop.iter
        if isinstance(r, ir.Const):
            return isinstance(r.value, range) and len(r.value) > 0
        traced = self.traced(r, at)
        made = traced[1] if traced is not None else None
        if made is None or made.prim is not registry.lookup(range) or made.kwargs:
            return False
        bounds = [self.static_int(a, at) for a in made.args]
        if any(b is None for b in bounds):
            return False
        return len(range(*bounds)) > 0  # type: ignore[arg-type]

    def static_int(self: Lowerer, atom: ir.Atom, at: Place, depth: int = 0) -> int | None:
        """The integer ``atom`` is whatever the arguments: a constant, ``len`` of a value
        known now, or a sum or difference of such (``range(len(layers) - 1)``); else None."""
        known, value = self.known_value(atom)
        if known:
            return value if type(value) is int else None
        traced = self.traced(atom, at) if depth < 8 else None
        made = traced[1] if traced is not None else None
        if made is None or made.kwargs or traced is None or traced[2] is None:
            return None
        if made.prim is registry.lookup(len) and len(made.args) == 1:
            known, value = self.known_value(made.args[0])
            if isinstance(made.args[0], ir.Tup):
                return len(made.args[0].items)
            return len(value) if known and hasattr(value, "__len__") else None
        op = {"add": int.__add__, "sub": int.__sub__}.get(made.prim.name)
        if op is None or len(made.args) != 2:
            return None
        a, b = (self.static_int(x, traced[2], depth + 1) for x in made.args)
        return None if a is None or b is None else op(a, b)

    def around(self: Lowerer, block: list[ir.Stmt]) -> list[ir.Stmt] | None:
        """The block around ``block``, where ``block`` is a branch of an ``if`` being built
        (or the value of ``a and b``), else None."""
        found = self.around_end(block)
        return None if found is None else found[0]

    def argument_sample(self: Lowerer, atom: ir.Atom, at: Place | None = None) -> Any:
        """A value of the kind of the caller's argument ``atom`` is (followed back through
        copies, and casts that keep its shape: ``np.asarray(x, dtype=float)``), where the
        code is made for the kinds of the arguments (``None`` if not): a read-only array of
        its shape and dtype (all one element, nothing allocated), a number of its type. Type
        tests of it are then decided when transforming."""
        traced = self.traced(atom, at)
        if traced is None:
            return self.joined_sample(atom, at)
        (kind, name), made, place = traced
        if kind == "outside":  # (a global's or a closure's array: remade if rebound)
            known, value = self.known_value(ir.Free(str(name)))
            return _sample(shapes.describe(value)) if known else None
        if not self.root.kinds:
            return None
        if kind in ("arg", "own"):
            return _sample(self.root.kinds.get(str(name)))
        if made is None:
            return None
        fixed = registry.kind_fixed(made.prim.name)
        if fixed is not None:  # int(v): a Python int, whatever v is
            return fixed
        elementwise = registry.kind_elementwise(made.prim.name)
        if elementwise is not None and not made.kwargs:
            return self.elementwise_sample(elementwise, made.args, place)
        view = registry.kind_view(made.prim.name)  # (x.T, np.reshape(x, (-1, 1)): views)
        checks = made.prim.refusal is not None and registry.checks_arrays(made.prim.runs)
        cast = registry.kind_keeping(made.prim.name) or (made.prim.runs if checks else None)
        fn = view or cast
        if fn is None:
            memo = self.root.computed_samples.get(id(made))
            if memo is None or memo[0] is not made:  # (once per statement: it may cost)
                memo = (made, self.computed_sample(made, place))
                self.root.computed_samples[id(made)] = memo
            return memo[1]
        if not made.args:
            return None
        first = made.args[0]
        given = self.outside_data(first) if not isinstance(first, ir.Var) else None
        base = given[0] if given is not None else self.argument_sample(first, place)
        extra = [self.outside_data(a) for a in made.args[1:]]
        options = {k: self.outside_data(a) for k, a in made.kwargs}
        if base is None or None in extra or None in options.values():
            return None
        try:
            if view is None:  # (what decides a cast's kind: the kinds, not the shape)
                base = base if isinstance(base, (np.ndarray, np.generic)) else np.asarray(base)
                base_shape, base = np.shape(base), np.zeros((1,) * np.ndim(base), base.dtype)
            value = fn(
                base,
                *(v[0] for v in extra),  # type: ignore[index]
                **{k: v[0] for k, v in options.items()},  # type: ignore[index]
            )
        except Exception:
            return None  # (the program raises when it runs)
        return value if view is not None else np.broadcast_to(value, base_shape)

    def computed_sample(self: Lowerer, made: ir.Assign, place: Place | None) -> Any:
        """A value of the kind a NumPy function with a derivative rule gives
        (``np.einsum("ij,ij->i", X, X)``, ``X @ w``), computed when transforming on samples
        of its arguments' kinds: such a result's shape and dtype follow from theirs. None
        where an argument's kind is not known, or is an integer or boolean whose value may
        decide a shape, for the calls whose kinds do not follow their arguments'
        (:func:`shapes.kinds_follow`, the middle end's test), and past :data:`_SAMPLE_LIMIT`
        elements."""
        prim = made.prim
        if prim is registry.SETITEM and made.args:  # (a write keeps the array's kind)
            return self.argument_sample(made.args[0], place)
        if prim.name == "getitem" and len(made.args) == 2:  # (x[:, None], x[1:], x[0])
            index = self.constant_index(made.args[1])
            base = self.argument_sample(made.args[0], place)
            if index is None or not isinstance(base, np.ndarray):
                return None
            try:
                return base[index[0]]
            except Exception:
                return None  # (the program raises when it runs)
        exact = (  # np.ones(3), np.linspace(1, 2, 3): of constants only, computed as is
            prim.refusal is None
            and not prim.draws
            and all(isinstance(a, ir.Const) for a in ir.stmt_args(made))
        )
        if (
            prim.function is None
            or len(made.targets) != 1
            or prim.outputs is not None
            or not (exact or (prim.differentiable and shapes.kinds_follow(prim)))
        ):
            return None
        size = 0

        def sample_of(atom: ir.Atom) -> tuple[Any] | None:
            nonlocal size
            if isinstance(atom, ir.Tup) and atom.items:  # (np.concatenate([a, 1 - a]))
                items = [sample_of(item) for item in atom.items]
                return None if None in items else ([i[0] for i in items],)  # type: ignore[index]
            known = self.outside_data(atom) if not isinstance(atom, ir.Var) else None
            if known is not None:
                return known
            sample = self.argument_sample(atom, place)
            if not isinstance(sample, (np.ndarray, np.generic, float, complex)):
                return None  # (an int or a bool may decide a shape)
            if np.result_type(sample).kind not in "fc":
                return None
            size += np.size(sample)
            return (sample,)

        args = [sample_of(a) for a in made.args]
        options = {k: sample_of(a) for k, a in made.kwargs}
        if None in args or None in options.values() or size > _SAMPLE_LIMIT:
            return None
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = prim.function(
                    *(a[0] for a in args),  # type: ignore[index]
                    **{k: v[0] for k, v in options.items()},  # type: ignore[index]
                )
        except Exception:
            return None  # (the program raises when it runs, or the samples' values decide)
        if isinstance(value, np.ndarray):
            return np.broadcast_to(np.zeros((), value.dtype), value.shape)
        return value if isinstance(value, (np.generic, float, complex)) else None

    def constant_index(self: Lowerer, atom: ir.Atom) -> tuple[Any] | None:
        """``(index,)`` of an index known when transforming (``x[:, None]``, ``x[1:-1]``,
        ``x[0, ...]``, ``x[:, xp.newaxis]``); None for any other."""
        if isinstance(atom, ir.Slc):
            bounds = [self.constant_index(b) for b in (atom.lower, atom.upper, atom.step)]
            if any(b is None or type(b[0]) not in (int, type(None)) for b in bounds):
                return None
            return (slice(*(b[0] for b in bounds)),)  # type: ignore[index]
        if isinstance(atom, ir.Tup):
            items = [self.constant_index(i) for i in atom.items]
            if None in items:
                return None
            return (tuple(i[0] for i in items),)  # type: ignore[index]
        known = self.outside_data(atom) if not isinstance(atom, ir.Var) else None
        if known is None or not (known[0] in (None, Ellipsis) or type(known[0]) in (int, bool)):
            return None
        return known

    def joined_sample(self: Lowerer, atom: ir.Atom, at: Place | None) -> Any:
        """A value of the kind ``atom``'s name holds after an ``if`` the program decides when
        it runs, where both branches leave it of one kind (``if np.may_share_memory(a, b): a
        = a.copy()``: an array of the same shape and dtype either way), or where one branch
        ends in a ``raise`` (``if len(shape) == 1: return y.ravel()`` / ``raise
        ValueError(...)``: only the other goes on); else None."""
        samples = self.per_branch(atom, at, self.argument_sample)
        if samples is None:
            return None
        if len(samples) == 1:  # (the other branch raises)
            return samples[0]
        if not samples:
            return None
        first, second = samples
        if first is None or second is None or type(first) is not type(second):
            return None
        same = np.shape(first) == np.shape(second) and np.result_type(first) == np.result_type(
            second
        )
        return first if same else None

    def elementwise_sample(
        self: Lowerer, fn: Any, args: tuple[ir.Atom, ...], place: Place | None
    ) -> Any:
        """A value of the kind ``fn(*args)`` gives (``np.log1p(y)``, ``x * 2.0``), from its
        arguments' kinds: NumPy computes on arrays of one element of theirs (``None``
        where an argument's kind is not known)."""
        samples = []
        for a in args:
            known = self.outside_data(a) if not isinstance(a, ir.Var) else None
            sample = known[0] if known is not None else self.argument_sample(a, place)
            if sample is None or isinstance(sample, (str, bytes)):
                return None
            samples.append(sample)
        small = [
            np.ones((1,) * np.ndim(v), np.result_type(v)) if isinstance(v, np.ndarray) else v
            for v in samples
        ]
        try:
            with np.errstate(all="ignore"):
                value = fn(*small)
            shape = np.broadcast_shapes(*(np.shape(v) for v in samples))
        except Exception:
            return None  # (the program raises when it runs)
        return np.broadcast_to(value, shape) if isinstance(value, np.ndarray) else value

    def kinds_call(self: Lowerer, node: gast.Call, fn: Any) -> ir.Atom | None:
        """``np.dtype(float)``, ``np.isdtype(dtype, "integral")``, ``np.result_type(x, 1.0)``,
        SciPy's ``xp_result_type(*args, xp=xp)`` of data types, classes, strings, numbers,
        modules and arrays of kinds known when transforming: evaluated then (on samples of
        the arrays' kinds; None: not decided)."""
        mark = len(self.block)
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, gast.Starred):  # (`*dtypes` of a known length)
                items = self.expr(arg.value, None, "kind")
                if not isinstance(items, ir.Tup):
                    args.append(None)
                args.extend(self.known_kind(a) for a in getattr(items, "items", ()))
            else:
                args.append(self.known_kind(arg))
        options = {k.arg: self.known_kind(k.value) for k in node.keywords}
        if None not in args and None not in options.values() and None not in options:
            try:
                value = fn(
                    *(a[0] for a in args),
                    **{k: v[0] for k, v in options.items()},  # type: ignore[index]
                )
            except Exception:
                pass  # (the program raises when it runs)
            else:
                return self.static_atom(value, "kind", node)  # (None too: device(x) of NumPy's)
        del self.block[mark:]
        return None

    def known_kind(self: Lowerer, node: Any) -> tuple[Any] | None:
        """``(value,)`` of an argument known when transforming: a module, plain data, or a
        sample of an array's (or a number's) kind; else None. (``node``: an expression, or
        an atom lowered already.)"""
        if not isinstance(node, ir.Atom):
            module = self.bound_module(node)
            if module is not None:
                return (module.value,)
            try:
                ok, obj = self.static_object(node)
            except AdgenError:
                ok = False
            if ok and isinstance(obj, types.ModuleType):
                return (obj,)
            node = self.expr(node, None, "kind")
        known = self.outside_data(node)
        if known is not None:
            return known
        sample = self.argument_sample(node)
        return None if sample is None else (sample,)

    def known_none(self: Lowerer, node: Any) -> bool:
        """Is ``node`` None when transforming: the constant, or a name bound to it (a
        helper's parameter ``xp=None`` passed on: :meth:`none_if_known`)?"""
        if isinstance(node, gast.Constant):
            return node.value is None
        if not (isinstance(node, gast.Name) and node.id in self.env):
            return False
        return self.none_if_known(self.env[node.id]) == ir.Const(None)

    def is_array(self: Lowerer, atom: ir.Atom) -> bool:
        """Is ``atom``'s value a NumPy array for certain: made by a NumPy function (never a
        scalar where the arguments' kinds say so), or an argument of an array kind?"""
        return isinstance(self.argument_sample(atom), np.ndarray)

    def possible_objects(self: Lowerer, atom: ir.Atom) -> set[Identity] | None:
        return self.possible_objects_at(atom, None)

    def possible_objects_at(self: Lowerer, atom: ir.Atom, at: Place | None) -> set[Identity] | None:
        """The objects ``atom``'s value may be here: a new array a NumPy rule made (written
        into or not), one that rule's array argument may be (``np.asarray(x)``: ``x`` itself,
        or a new array), an argument, an outside object (``None`` if adgen cannot tell: a
        value a loop or branch bound, one a call run as written returned, a list's item...)."""
        found: set[Identity] = set()
        todo: list[tuple[ir.Atom, Place | None]] = [(atom, at)]
        while todo:
            item, at = todo.pop()
            traced = self.traced(item, at)
            if traced is None:
                joined = self.joined_objects(item, at)
                if joined is None:
                    return None
                found |= joined
                continue
            one, stmt, place = traced
            if one[0] == "made" and stmt is not None and stmt.prim is registry.SETITEM:
                todo.append((stmt.args[0], place))  # (`x[i] = v`: the object `x` was)
                continue
            found.add(one)
            if one[0] != "made":
                continue
            assert stmt is not None and place is not None
            if not _makes_array(stmt.prim):
                return None
            # (np.asarray(x): x itself, or a new array; with copy=True, a new array)
            if stmt.prim.view and not self.copying(stmt.prim, stmt.args, stmt.kwargs):
                first = stmt.args[0] if stmt.args else None
                if not isinstance(first, ir.Var):
                    return None
                todo.append((first, place))
        return found

    def joined_objects(self: Lowerer, atom: ir.Atom, at: Place | None) -> set[Identity] | None:
        """The objects ``atom``'s name may be after an ``if`` the program decides when it
        runs: those either branch leaves it (a branch that raises leaves none); None if
        adgen cannot tell."""
        found = self.per_branch(atom, at, self.possible_objects_at)
        if found is None or any(objects is None for objects in found):
            return None
        return set().union(*found)

    def per_branch(
        self: Lowerer, atom: ir.Atom, at: Place | None, ask: Callable[[ir.Atom, Place], Any]
    ) -> list[Any] | None:
        """Where ``atom``'s name (followed back through copies) was last bound by an ``if``
        the program decides when it runs: ``ask(name, end of the branch)`` for each branch
        that does not end in a ``raise``; None where it was not."""
        if not isinstance(atom, ir.Var):
            return None
        block, end = at if at is not None else (self.block, len(self.block))
        assign = registry.lookup(registry.assign)
        while True:  # (back through copies, as traced goes, to the `if` it stopped at)
            while (k := _last_binding(block, atom.name, end)) is None:
                outer = self.around_end(block)
                if outer is None:
                    return None
                block, end = outer
            stmt = block[k]
            if isinstance(stmt, ir.For) and self.certainly_runs(stmt, (block, k)):
                block, end = stmt.body, len(stmt.body)  # (its last pass: as traced goes)
                continue
            if not (
                isinstance(stmt, ir.Assign)
                and stmt.targets == (atom.name,)
                and stmt.prim is assign
                and isinstance(stmt.args[0], ir.Var)
            ):
                break
            atom, end = stmt.args[0], k
        if not isinstance(stmt, ir.If):
            return None
        answers = []
        for branch in (stmt.body, stmt.orelse):
            if _raises(branch):
                continue
            self.root.open_branches.append((branch, block, k))
            try:
                answers.append(ask(atom, (branch, len(branch))))
            finally:
                self.root.open_branches.pop()
        return answers


# the most elements of the samples :meth:`computed_sample` computes on (their results' kinds
# are worth knowing; a large product is not worth computing when transforming)
_SAMPLE_LIMIT = 1 << 16


def _raises(block: list[ir.Stmt]) -> bool:
    """Does this block end in a ``raise`` (its statements after it never run), or in a check
    that always fails (a path adgen refuses when it runs)?"""
    last = block[-1] if block else None
    return isinstance(last, ir.Assign) and (
        last.prim.name == "raise"
        or (
            last.prim is registry.ASSERT
            and isinstance(last.args[0], ir.Const)
            and last.args[0].value is False
        )
    )


def _writes_only_into(stmt: ir.Stmt, name: str) -> bool:
    """Does this compound statement bind ``name`` only by writing into its object
    (``zi[m] = v`` in a loop: ``zi = setitem(zi, m, v)``), never to another object?"""
    inside = list(ir.Function("", [], [stmt], "", 0, {}).statements())
    return not any(isinstance(s, ir.For) and s.target == name for s in inside) and all(
        s.prim is registry.SETITEM and s.targets == (name,) and s.args[0] == ir.Var(name)
        for s in inside
        if isinstance(s, ir.Assign) and name in s.targets
    )


def _last_binding(block: list[ir.Stmt], name: str, end: int) -> int | None:
    """The position of the last statement before ``end`` that binds ``name`` (a compound
    statement binding it anywhere inside counts), if any."""
    for k in range(end - 1, -1, -1):
        stmt = block[k]
        if isinstance(stmt, ir.Assign):  # (most statements: no walk)
            if name in stmt.targets:
                return k
            continue
        inside = ir.Function("", [], [stmt], "", 0, {}).statements()
        if any(
            (isinstance(s, ir.Assign) and name in s.targets)
            or (isinstance(s, ir.For) and s.target == name)
            for s in inside
        ):
            return k
    return None


def _sample(kind: Any) -> Any:
    """A value described by ``kind`` (:func:`adgen.middle.shapes.describe`), or ``None``.

    >>> a = _sample(((1000, 1000), "<f4"))
    >>> type(a).__name__, a.shape, a.dtype.name, a.nbytes > a.base.nbytes
    ('ndarray', (1000, 1000), 'float32', True)
    >>> _sample("float"), _sample(("numpy", "<i8")).dtype.name, _sample(None)
    (0.0, 'int64', None)
    """
    if isinstance(kind, tuple) and len(kind) == 2 and isinstance(kind[0], tuple):
        return np.broadcast_to(np.zeros((), np.dtype(kind[1])), kind[0])
    if isinstance(kind, tuple) and len(kind) == 2 and kind[0] == "numpy":
        return np.dtype(kind[1]).type(0)
    numbers = {"float": 0.0, "int": 0, "bool": False, "true": True, "false": False, "complex": 0j}
    return numbers.get(kind) if isinstance(kind, str) else None


def _makes_array(prim: registry.Primitive) -> bool:
    """Is ``prim`` one of NumPy's functions or array methods adgen has a rule for (its result a
    new array, or for a view-making one, possibly its array argument itself)? Not Python's
    arithmetic (small ints are shared objects), nor a call adgen runs as written, nor an
    inlined function of the user's."""
    return (
        prim.differentiable
        and prim.refusal is None
        and prim.callee is None
        and prim.user_fn is None
        and not prim.lists
        and (prim.name.startswith(("np.", ".")) or prim.name == "getitem")
    )


def _view_of_first(made: ir.Assign) -> bool:
    """Is ``made`` a call of a rule that may return a view of its first argument, an array
    name, every other argument a constant (``np.reshape(a, (-1,))``, ``a[1:]``, ``a.T``) or,
    for a rule whose other arguments are a shape or axes, anything (``np.reshape(a,
    rt.joined_items(...))``: integers, no array it could return a view of)?"""

    def constant(atom: Any) -> bool:
        if isinstance(atom, ir.Tup):
            return all(constant(a) for a in atom.items)
        return isinstance(atom, ir.Const)

    prim = made.prim
    return (
        prim.view
        and prim.differentiable
        and prim.refusal is None
        and prim.callee is None
        and prim.user_fn is None
        and bool(made.args)
        and isinstance(made.args[0], ir.Var)
        and (
            prim.name in _SHAPE_ARGUMENTS
            or all(constant(a) for a in made.args[1:])
            and all(constant(v) for _, v in made.kwargs)
        )
    )


# view-making rules whose arguments after the array are a shape, axes or an order: never an
# array the result could be a view of
_SHAPE_ARGUMENTS = frozenset(
    {"np.reshape", "np.transpose", "np.swapaxes", "np.moveaxis", "np.squeeze", "np.expand_dims"}
)
