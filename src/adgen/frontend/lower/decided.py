# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Early returns on options decided when transforming, before a helper's returns are
structured (issue 34, part 2); ``if`` tests an ``and``/``or`` decides; helpers whose every
``return`` gives None.

``if not broadcast: return args[0]`` or ``if not args: return args`` at the top of a library
helper, where ``broadcast`` and ``args`` are parameters adgen knows when it inlines the call
(a constant, a tuple of known length), or a module's flag the helper never binds (``if
DEBUG: return x, None``): Python runs one side only, so adgen keeps only that
side before it gives the helper's returns a single exit (:meth:`single_exit` would otherwise
bind every ``return``'s value, of every path, to one result name -- refused for a tuple of
differentiated values, or for a function). Only tests that read parameters no statement
before them binds again are tried, each lowered on trial and kept only if it is a constant.
"""

from __future__ import annotations

import functools
import operator
import types
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import gast
import numpy as np

from adgen import ir
from adgen.errors import AdgenError
from adgen.frontend.lower.choices import _reference
from adgen.frontend.lower.expressions import _local_kind
from adgen.frontend.lower.objects import is_user_object
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.statements import _always_returns, _returns
from adgen.frontend.lower.syntax import (
    _assigned_in_blocks,
    _own_nodes,
    _popped_into,
    _written_in_place,
    nonlocal_in_nested,
)
from adgen.frontend.parse import parse_function
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer

# the syntax of expressions that have no effect when evaluated (calls are asked one by one)
_EFFECT_FREE = (
    gast.Name,
    gast.Constant,
    gast.Attribute,
    gast.Compare,
    gast.BoolOp,
    gast.UnaryOp,
    gast.Tuple,
    gast.Call,
    gast.BinOp,  # (of `|` only, below: `int | float | NoneType`)
    gast.BitOr,
    gast.expr_context,
    gast.cmpop,
    gast.boolop,
    gast.unaryop,
)
# expressions a decided test may be made of (no call: a trial must not run anything)
_PLAIN = (
    gast.Name,
    gast.Constant,
    gast.Set,  # (displays: `method in {'lower', 'higher'}`)
    gast.List,
    gast.Tuple,
    gast.Compare,
    gast.BoolOp,
    gast.UnaryOp,
    gast.Attribute,
    gast.Load,
    gast.cmpop,
    gast.boolop,
    gast.unaryop,
)


@functools.lru_cache(maxsize=1024)
def _predicate(fn: Any, depth: int = 2) -> bool:
    """Is ``fn`` a Python function whose body is one ``return`` of an expression without
    effects (names, attributes, comparisons, ``and``/``or``/``not``, and calls of such
    functions or of ``isinstance``/``hasattr``/``callable``/``len``): a library's test of
    what it is given, ``def is_marray(xp): return "marray" in xp.__name__``?"""
    if isinstance(fn, functools._lru_cache_wrapper):
        return True  # (a function cached by its arguments: its effects would not repeat)
    if not isinstance(fn, types.FunctionType) or depth < 0 or fn.__code__.co_flags & 0x20:
        return False  # (0x20: a generator)
    try:
        parsed = parse_function(fn)
    except Exception:  # (no source: not known to be free of effects)
        return False
    body = list(parsed.node.body)
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], gast.Return) or body[0].value is None:
        return False
    for n in gast.walk(body[0].value):
        if isinstance(n, gast.Call):
            if not isinstance(n.func, gast.Name) or n.keywords:
                return False
            try:
                called = parsed.scope.lookup(n.func.id)
            except Exception:
                return False
            tests = (isinstance, hasattr, callable, len)
            if not (any(called is t for t in tests) or _predicate(called, depth - 1)):
                return False
        elif not isinstance(n, (*_EFFECT_FREE, gast.Set, gast.List)):
            return False
    return True


class _NotKnown(Exception):
    """An expression :meth:`DecidedMixin.decided_by_kinds` cannot evaluate."""


# what an array's kind tells of it (its shape, number of axes and elements)
_KIND_ATTRIBUTES = frozenset({"shape", "ndim", "size"})
_COMPARISONS: dict[type, Any] = {
    gast.Eq: operator.eq,
    gast.NotEq: operator.ne,
    gast.Lt: operator.lt,
    gast.LtE: operator.le,
    gast.Gt: operator.gt,
    gast.GtE: operator.ge,
}


class DecidedMixin(LowererState):
    """``if`` statements of an inlined helper decided by its parameters."""

    def prune_decided(self: Lowerer, stmts: list[Any]) -> list[Any]:
        """``stmts`` (a helper's body) with each top-level ``if`` whose test reads only
        parameters not bound again before it, and is a constant when lowered, replaced by
        the side Python runs (a new list: the function's tree is not changed)."""
        out: list[Any] = []
        stored: set[str] = set()
        touched = False  # (an object's attributes may have changed since the function began)
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, (gast.Import, gast.ImportFrom)) and self.depth == 0:
                try:  # the names it binds, for the tests after it (`isinstance(k, Kernel)`)
                    self.lower_import(stmt)
                except Exception:  # (refused where the import itself is lowered)
                    pass
            chosen = (
                self.decided_side(stmt, stored)
                if isinstance(stmt, gast.If) and not (touched and _reads_objects(stmt.test))
                else None
            )
            if chosen is not None:
                self.note_never_run(stmt.orelse if chosen is stmt.body else stmt.body)
                out.extend(self.prune_decided(list(chosen)))
                if out and isinstance(out[-1], gast.Return):
                    self.note_never_run(stmts[i + 1 :])
                    return out  # (what follows never runs)
            else:
                out.append(stmt)
            stored |= {
                n.id
                for n in gast.walk(stmt)
                if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
            }
            touched = touched or self.may_change_objects(stmt)
        return out

    def bind_parameters_again(self: Lowerer, body: list[Any], rebound: dict[str, Any]) -> None:
        """Bind the parameters ``rebound`` (their values) that are still names rebound in
        blocks in ``body`` -- the helper's body as lowered, without the branches decided
        now: a real copy, one name an item of a tuple. A name only those branches bound
        again is no longer one (``args = [...]`` only under ``if is_marray(xp):``, not taken;
        ``weights`` rebound only under ``if nan_policy == 'omit' and ...``): each of its
        bindings is its own, as if the function were written without them."""
        nodes = [n for stmt in body for n in _own_nodes(stmt)]
        stored = {n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        still = (
            _assigned_in_blocks(body)
            | _written_in_place(nodes)
            | _popped_into(nodes, self.restoring)
            | (nonlocal_in_nested(self.node) & stored)
        )
        for p in [p for p in self.multi if p not in still]:
            del self.multi[p]
            self.root.static_params.discard((self, p))
        for p, atom in rebound.items():
            if p in self.multi:
                self.bind(p, self.multi[p], atom)

    def may_change_objects(self: Lowerer, stmt: Any) -> bool:
        """May ``stmt`` change an attribute of an object made outside (``self.W = ...``, a
        method call ``self.unpack(p)``, a function given such an object)? A test of an
        attribute after it is then decided where it stands, once the statements ahead of it
        are lowered."""
        for n in gast.walk(stmt):
            if isinstance(n, gast.Attribute) and not isinstance(n.ctx, gast.Load):
                return True
            if isinstance(n, gast.Call):
                called = [n.func] if isinstance(n.func, gast.Attribute) else []
                if any(self.outside_object_at(a) for a in [*called, *n.args]):
                    return True
        return False

    def outside_object_at(self: Lowerer, node: Any) -> bool:
        """Is ``node`` (or the name an attribute chain starts from: ``self`` of
        ``self.unpack``) an object of the user's made outside the function?"""
        while isinstance(node, gast.Attribute):
            node = node.value
        if not isinstance(node, gast.Name):
            return False
        try:
            ok, value = self.static_object(node)
        except AdgenError:
            return False
        return ok and is_user_object(value)

    def decided_side(self: Lowerer, stmt: gast.If, stored: set[str]) -> list[Any] | None:
        test = stmt.test
        if isinstance(test, gast.BoolOp):  # `if nan_policy == 'omit' and (lazy or c):`
            first = gast.If(test=test.values[0], body=stmt.body, orelse=stmt.orelse)
            side = self.decided_side(gast.copy_location(first, stmt), stored)
            taken = side is not None and (side is stmt.body) == isinstance(test.op, gast.Or)
            if taken:  # (a false first value of an `and`, a true one of an `or`, decides)
                return side
        nodes = list(gast.walk(stmt.test))
        names = {n.id for n in nodes if isinstance(n, gast.Name)}
        if not all(isinstance(n, _PLAIN) for n in nodes) and not (
            all(
                isinstance(n, (*_PLAIN, gast.Call, gast.Tuple, gast.BinOp, gast.BitOr))
                for n in nodes
            )
            and self.without_effects(stmt.test)  # `isinstance(t, (list, tuple))`
        ):
            return None
        spec = self.node.args
        params = {a.id for a in [*spec.posonlyargs, *spec.args, *spec.kwonlyargs]}
        params |= {a.id for a in (spec.vararg, spec.kwarg) if a is not None}
        # ... or names the function never binds (a module's flag: `if NOFUNC: return x, None`)
        local = self.stored_names()
        if not names or not names <= params | (names - local) or names & stored:
            return None
        mark = len(self.block)
        try:
            test = self.expr(stmt.test, None, "cond")
        except Exception:  # (refused here: the `if` is lowered as written, and says why)
            test = None
        del self.block[mark:]  # (a trial: the `if` kept is lowered again where it stands)
        known = self.outside_data(test) if isinstance(test, ir.Free) else None
        if known is not None and type(known[0]) in (bool, int, str, type(None)):
            test = ir.Const(known[0])  # (a module's flag, read when transforming)
        if not isinstance(test, ir.Const):
            return None
        return stmt.body if test.value else stmt.orelse

    def decided_chain(self: Lowerer, test: Any) -> ir.Const | None:
        """The truth of ``a and b and c`` as the test of an ``if``, where one of its values is
        false when transforming (``a.ndim == 2 and sparse.issparse(a) and ...`` of an array),
        and the values before it have no effect (names, attributes, comparisons, type
        tests): Python then never takes the branch. ``a or b`` alike with a true value.
        None: not decided so (the test is lowered as any other)."""
        if not isinstance(test, gast.BoolOp):
            return None
        is_and = isinstance(test.op, gast.And)
        for value in test.values:
            if not self.without_effects(value):  # (a trial lowers only what has no effect)
                return None
            atom = self.tried(value)
            if isinstance(atom, ir.Const) and bool(atom.value) != is_and:
                return ir.Const(not is_and)
        return None

    def tried(self: Lowerer, node: Any) -> ir.Atom | None:
        """The atom ``node`` lowers to, on trial: what it emits is dropped (the test is
        lowered again where it stands if it is not decided); None where adgen refuses it."""
        mark = len(self.block)
        try:
            return self.expr(node, None, "cond")
        except AdgenError:
            return None
        finally:
            del self.block[mark:]

    def decided_by_kinds(self: Lowerer, test: Any) -> ir.Const | None:
        """The truth of an ``if`` test made only of the shapes, ranks, sizes and data types of
        arrays whose kinds are known when transforming, and constants (``if y.shape[1] ==
        1:`` of a column made from the argument, ``if X.shape[0] != len(w):``): the code
        is made for the arguments' shapes, so Python takes the one branch for every call it
        serves. None where the test reads anything else."""
        try:
            value = self.kind_value(test)
        except _NotKnown:
            return None
        return ir.Const(bool(value)) if type(value) in (bool, np.bool_) else None

    def kind_value(self: Lowerer, node: Any) -> Any:
        """The value of an expression of :meth:`decided_by_kinds` (:class:`_NotKnown` if it
        is not one); a part of it without effects that adgen decides as it lowers it
        (``is_numpy(xp)``, ``weights is not None``) is tried too."""
        try:
            return self.kind_value_of(node)
        except _NotKnown:
            if not isinstance(node, (gast.Call, gast.Compare)) or not self.without_effects(node):
                raise
        atom = self.tried(node)
        if isinstance(atom, ir.Const) and type(atom.value) in (bool, int, type(None)):
            return atom.value
        raise _NotKnown

    def kind_value_of(self: Lowerer, node: Any) -> Any:
        if isinstance(node, gast.Constant) and type(node.value) in (int, bool, type(None)):
            return node.value
        if isinstance(node, gast.Attribute) and node.attr in _KIND_ATTRIBUTES:
            return getattr(self.kind_sample(node.value), node.attr)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and not node.keywords:
            try:
                ok, fn = self.static_object(node.func)
            except AdgenError:
                ok = False
            if ok and fn is len and len(node.args) == 1:
                sample = self.kind_sample(node.args[0])
                if np.ndim(sample) == 0:
                    raise _NotKnown  # (Python raises when it runs)
                return len(sample)
            attr = registry.kind_attribute(fn) if ok and len(node.args) == 1 else None
            if attr is not None:  # np.size(x), array-api-compat's size(x)
                return getattr(self.kind_sample(node.args[0]), attr)
            raise _NotKnown
        if isinstance(node, gast.Subscript):
            base, index = self.kind_value(node.value), self.kind_value(node.slice)
            if (
                type(base) is not tuple
                or type(index) is not int
                or not -len(base) <= index < len(base)
            ):
                raise _NotKnown
            return base[index]
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            return not self.kind_value(node.operand)
        if isinstance(node, gast.BoolOp):  # (Python reads the values up to one that decides)
            for v in node.values:
                value = self.kind_value(v)
                if bool(value) != isinstance(node.op, gast.And):
                    return value
            return value
        if isinstance(node, gast.Compare) and len(node.ops) == 1:
            compare = _COMPARISONS.get(type(node.ops[0]))
            left, right = self.kind_value(node.left), self.kind_value(node.comparators[0])
            if compare is None or not {type(left), type(right)} <= {int, tuple}:
                raise _NotKnown
            try:
                return compare(left, right)
            except TypeError:  # (`x.shape < 3`: Python raises when it runs)
                raise _NotKnown from None
        raise _NotKnown

    def kind_sample(self: Lowerer, node: Any) -> Any:
        """A sample of the kind of the array a name holds (:meth:`argument_sample`)."""
        if not (isinstance(node, gast.Name) and node.id in self.env):
            raise _NotKnown
        sample = self.argument_sample(self.env[node.id])
        if not isinstance(sample, np.ndarray):
            raise _NotKnown
        return sample

    def without_effects(self: Lowerer, node: Any) -> bool:
        """Is evaluating ``node`` free of effects: names, constants, attributes, comparisons,
        ``and``/``or``/``not``, and calls of ``isinstance``, ``hasattr``, ``callable``,
        ``len`` and libraries' type tests?"""
        for n in gast.walk(node):
            if isinstance(n, gast.Call):
                try:
                    ok, fn = self.static_object(n.func)
                except AdgenError:
                    return False
                tests = (isinstance, hasattr, callable, len)
                if not ok or not (
                    any(fn is t for t in tests) or registry.type_test(fn) or _predicate(fn)
                ):
                    return False
            elif not isinstance(n, _EFFECT_FREE) or (
                isinstance(n, gast.BinOp) and not isinstance(n.op, gast.BitOr)
            ):
                return False
        return True

    def ending_with_none(self: Lowerer, body: list[Any]) -> list[Any]:
        """``body`` of a helper with the ``None`` Python returns written out: a bare
        ``return`` as ``return None`` (``if assume_finite: return`` in a check that
        otherwise raises), and ``return None`` at the end where the body can fall off it
        (``if feature_names is None: return`` ... ``if all_strings: return names``) -- a
        new list. (The function adgen differentiates must return a value on every path.)"""
        returns = [r for stmt in body for r in _returns(stmt)]
        for r in returns:
            if r.value is None:  # (a bare `return`: its value written out, no other change)
                r.value = gast.copy_location(gast.Constant(value=None, kind=None), r)
        if _always_returns(body):  # (`if ok: return` then `raise ValueError(msg)`)
            return body
        end = body[-1] if body else self.node
        ret = gast.copy_location(gast.Return(value=gast.Constant(value=None, kind=None)), end)
        gast.copy_location(ret.value, ret)
        return [*body, ret]

    def note_never_run(self: Lowerer, stmts: list[Any]) -> None:
        """Remember the nodes of ``stmts``, a branch Python never takes here, that stand
        nowhere else in the function (early returns copy statements into both branches)."""
        inside = Counter(id(n) for s in stmts for n in gast.walk(s))
        if not inside:
            return
        # (once a function lowered: its tree is structured before its body is lowered)
        held = self.root.node_counts.get(id(self))
        if held is None or held[0] is not self:
            held = (self, Counter(id(n) for n in gast.walk(self.node)))
            self.root.node_counts[id(self)] = held
        everywhere = held[1]
        self.root.never_run.update(k for k, n in inside.items() if everywhere[k] == n)
        self.root.kept.extend(stmts)  # (alive while the lowering lasts: their ids stay theirs)

    def decided_choice(self: Lowerer, stmt: Any) -> Any:
        """``name = a if c else b`` where ``c`` is decided when transforming and ``a`` or
        ``b`` names a function or is a lambda: the assignment of the side Python takes (the
        test's statements kept), which binds the name to that function as itself. None for
        any other statement (then lowered as it is)."""
        value = stmt.value
        if not (
            isinstance(value, gast.IfExp)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and any(isinstance(v, gast.Lambda) or _reference(v) for v in (value.body, value.orelse))
        ):
            return None
        test: ir.Atom | None = self.decided_by_kinds(value.test)
        mark = len(self.block)
        if test is None:
            try:
                test = self.settled(self.expr(value.test, None, "cond"))
            except AdgenError:
                test = None
        if not isinstance(test, ir.Const):
            del self.block[mark:]  # (a trial: the statement is lowered as written)
            return None
        side = value.body if test.value else value.orelse
        chosen = gast.Assign(targets=stmt.targets, value=side, type_comment=None)
        return gast.copy_location(chosen, stmt)

    def if_exp(self: Lowerer, node: gast.IfExp, target: str | None, hint: str) -> ir.Atom:
        """``a if c else b``: only the value Python computes (``c`` decided when
        transforming), else an ``if`` binding one name in both branches."""
        by_kinds = self.decided_by_kinds(node.test)  # `a if a.shape[1] == 1 else b`
        if by_kinds is not None:
            return self.expr(node.body if by_kinds.value else node.orelse, target, hint)
        test = self.expr(node.test, None, "cond")
        settled = self.settled(test)
        test = settled if isinstance(settled, ir.Const) else test
        if isinstance(test, ir.Const):  # `0.0 if l2 is None else l2`: only one is evaluated
            return self.expr(node.body if test.value else node.orelse, target, hint)
        name = target if target is not None else self.namer.fresh(hint)
        self.rebound_names.add(name)  # bound in both branches
        body = self.branch_value(node.body, name, hint)
        orelse = self.branch_value(node.orelse, name, hint)
        self.add_if(test, body, orelse, self.line)
        return ir.Var(name)

    def branch_value(self: Lowerer, node: Any, name: str, hint: str) -> list[ir.Stmt]:
        """The block computing ``node`` into ``name`` (one branch of ``a if c else b``)."""
        return self.branch_made(lambda: self.expr(node, name, hint), name)

    def branch_made(self: Lowerer, make: Any, name: str) -> list[ir.Stmt]:
        """The block ``make()`` lowers, its value copied into ``name``: one branch of an
        ``if`` the code decides when it runs (an expression's value: :meth:`branch_value`)."""
        saved, self.block = self.block, []
        self.depth += 1
        self.root.open_branches.append((self.block, saved, None))
        try:
            atom = make()
        finally:
            self.root.open_branches.pop()
        if atom != ir.Var(name):
            self.copy(name, atom)
        self.depth -= 1
        block, self.block = self.block, saved
        return block

    def identity(self: Lowerer, node: gast.Compare, target: str | None, hint: str) -> ir.Atom:
        """``x is None``, ``x is not None`` (and ``is`` between values known when transforming):
        decided statically where adgen knows the values -- a constant, a default argument, an
        array or number a rule computed, a tuple -- so only the branch Python takes is lowered;
        else, against ``None`` only, a test run with the program (``x is y`` of two computed
        values is refused: adgen's optimizer may share or copy values, which changes
        identity but not equality)."""
        negate = isinstance(node.ops[0], gast.IsNot)
        local = self.local_identity(node)  # `xp is None` of a module a helper was given
        if local is not None:
            return ir.Const(local != negate)
        left = self.outside_copy(self.settled(self.identity_operand(node.left, hint)))
        right = self.outside_copy(self.settled(self.identity_operand(node.comparators[0], hint)))
        known = [self.known_value(a) for a in (left, right)]
        if all(ok for ok, _ in known):
            # singletons, or two outside objects (`mode is DEFAULT`): identity is exact
            outside = all(isinstance(a, ir.Free) for a in (left, right))
            if outside or any(_is_singleton(v) for _, v in known):
                return ir.Const((known[0][1] is known[1][1]) != negate)
            if type(known[0][1]) is not type(known[1][1]):
                # (`value_to_mask is pandas.NA` of a float: objects of two types are two)
                return ir.Const(negate)
        for (ok, value), other in ((known[0], right), (known[1], left)):
            if not (ok and _is_singleton(value)):
                continue
            sample = self.argument_sample(other)  # (an argument of a kind the code is for)
            if (
                isinstance(other, (ir.Tup, ir.Dct))
                or self.never_singleton(other)
                or (sample is not None and type(sample) is not bool)
                or (self.one_object(other) or ("",))[0] == "display"
                or not any(_is_singleton(v) for v in self.possible_values(other) or [None])
            ):
                return ir.Const(negate)  # an array, a number, a tuple is not None
            if value is None:  # decided when the program runs
                fn = registry.operator.is_not if negate else registry.operator.is_
                prim = registry.lookup(fn)
                assert prim is not None
                return self.emit(target, hint, prim, [other, ir.Const(None)], [], node)
        decided = self.identity_by_origin(left, right, negate, target, hint)
        if decided is not None:
            return decided
        for (ok, value), side, other in ((known[0], left, right), (known[1], right, left)):
            if ok and isinstance(value, type) and not isinstance(other, (ir.Tup, ir.Dct)):
                # `dtype is bool` of a name bound to a class or to an option: asked when the
                # program runs (a class is one object: no copy or shared value is it)
                if isinstance(other, ir.Const):  # (the very object: decided now)
                    return ir.Const((other.value is value) != negate)
                fn = registry.operator.is_not if negate else registry.operator.is_
                prim = registry.lookup(fn)
                assert prim is not None
                return self.emit(target, hint, prim, [other, side], [], node)
        self.refuse(
            node,
            "`is` between values adgen does not know when transforming (identity is not kept "
            "by adgen's optimizer, which may share equal values)",
            "compare with None (`x is None`), or compare values with `==`",
        )

    def identity_operand(self: Lowerer, node: Any, hint: str) -> ir.Atom:
        """A side of ``a is b``: a class named there (``type(p) is not MixedLMParams``) as the
        outside object it is, any other expression as its value."""
        if isinstance(node, (gast.Name, gast.Attribute)):
            try:
                ok, value = self.static_object(node)
            except AdgenError:
                ok = False
            if ok and isinstance(value, type):
                return self.static_atom(value, "cls", node)
        return self.expr(node, None, hint)

    def local_identity(self: Lowerer, node: gast.Compare) -> bool | None:
        """``a is b`` where one side names a function, module or object this function was
        given or bound (``xp`` passed as ``np``) and the other is known too: whether they are
        one object (None: not so)."""
        sides = [node.left, node.comparators[0]]
        if not any(isinstance(n, gast.Name) and n.id in self.local_functions for n in sides):
            return None
        known = []
        for n in sides:
            if isinstance(n, gast.Constant):
                known.append(n.value)
                continue
            try:
                ok, value = self.static_object(n)
            except AdgenError:
                return None
            if not ok or _local_kind(value):
                return None
            known.append(value)
        return known[0] is known[1]

    def straight_line(self: Lowerer, body: list[Any]) -> Iterator[Any]:
        """The statements of ``body``, those of an ``if`` decided when transforming in its
        place (``if copy: X = X.copy()`` with ``copy`` True: that copy)."""
        for stmt in body:
            taken = self.root.decided_ifs.get((self, id(stmt)))
            if taken is None:
                yield stmt
            else:
                yield from self.straight_line(stmt.body if taken else stmt.orelse)

    def static_test(self: Lowerer, test: Any) -> bool | None:
        """The truth of ``test`` decided when transforming (an option passed as a constant,
        a module's flag, a shape): lowered on trial, with no effect kept; None if not
        decided so."""
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            operand = self.static_test(test.operand)
            return None if operand is None else not operand
        if isinstance(test, gast.Name) and test.id not in self.env:  # a module's flag
            ok, value = self.static_object(test)
            plain = ok and (value is None or type(value) in (bool, int, float, str))
            return bool(value) if plain else None
        decided = self.decided_by_kinds(test)
        if decided is not None:
            return bool(decided.value)
        if not self.without_effects(test):
            return None
        mark = len(self.block)
        try:
            atom = self.settled(self.expr(test, None, "cond"))
        except AdgenError:
            return None
        finally:
            del self.block[mark:]
        if isinstance(atom, ir.Free):  # (a closure's value passed to a helper inlined here)
            value = self.root.free.get(atom.name, self)
            known = value is None or type(value) in (bool, int, float, str)
            return bool(value) if known else None
        return bool(atom.value) if isinstance(atom, ir.Const) else None


def _is_singleton(value: Any) -> bool:
    """None, True, False, ``...``: values whose identity is their meaning."""
    return any(value is s for s in (None, True, False, Ellipsis, NotImplemented))


def _reads_objects(test: Any) -> bool:
    """Does the test read an attribute or ask of one (``self.fitted``, ``hasattr(self,
    "W")``)?"""
    return any(isinstance(n, (gast.Attribute, gast.Call)) for n in gast.walk(test))
