"""The rule registry: each primitive's forward and reverse templates, in one place.

A rule is an ordinary Python function whose parameters are the primitive's
parameters (optionally preceded by ``ans``, the primal result) and whose body
holds nested template functions:

* ``jvp_<param>(d)`` returns the tangent contribution of ``param`` given its
  tangent ``d`` (forward mode);
* ``vjp_<param>(g)`` returns the cotangent contribution to ``param`` given the
  result's cotangent ``g`` (reverse mode).

With one differentiable parameter, ``jvp`` and ``vjp`` are enough. Parameters
with a default value are *static* (``axis``, ``keepdims``...): when the call
passes a constant they are substituted and ``if`` tests on them are decided
at transform time. The template bodies are the code adgen emits, with the
placeholders renamed to the names of the program being differentiated:

>>> import numpy as np
>>> from adgen.rules import lookup
>>> prim = lookup(np.multiply)
>>> prim.diff_params
('x', 'y')
>>> stmts, expr = prim.vjp["y"].expand(
...     {"x": ast.Name("a"), "y": ast.Name("b")}, "out_bar", lambda base: base + "_1")
>>> ast.unparse(expr)
'out_bar * a'

adgen's own templates may only use the names ``np``, ``math`` and ``rt``
(adgen.runtime) besides their parameters and their own locals; this is checked
when the rule is registered, so a typo fails when its module is imported (the
test suite imports them all), not in generated code. A user's rule (one defined
outside adgen, e.g. ``@adgen.rule(my_fn)``) may also name what its module
defines; those names are resolved when it is registered and given collision-free
names in generated code (:meth:`Primitive.localize`). See :mod:`adgen.custom` for
the user-facing forms.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import importlib
import inspect
import itertools
import linecache
import operator
import sys
import textwrap
import types
import warnings
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from adgen.errors import InternalError, RuleError, SourceLocation, entry_point, place
from adgen.pyast import LEAVES, Transformer, dotted, dotted_text, walk
from adgen.rules import loader, python_forms
from adgen.rules.arrayapi import compat_counterpart, numpy_counterpart
from adgen.rules.known import REAL, literal
from adgen.rules.namespace import TEMPLATE_GLOBALS, add_optional, spelling
from adgen.rules.samples import Domain, Example


@dataclass
class Template:
    """One nested template function: its single argument and its body."""

    arg: str
    body: list[ast.stmt]
    free_names: frozenset[str]
    origin: str
    extra: tuple[str, ...] = ()  # more placeholders (a sequence rule's element index)
    # set for a mode a user's rule does not define: expanding it is refused with this text
    refusal: str | None = None

    def __post_init__(self) -> None:
        # names the template assigns: each gets a fresh name when expanded
        self.locals = sorted(_stored_names(self.body))
        self.asks_shapes = any(
            isinstance(node, ast.Call) and dotted_text(node.func) in _KNOWN_QUESTIONS
            for stmt in self.body
            for node in walk(stmt)
        )
        # `(*operands, *parts)`: spliced where the call passes displays (see _Unstarred)
        self.unpacks = any(isinstance(node, ast.Starred) for s in self.body for node in walk(s))

    def renamed(self, names: dict[str, str]) -> Template:
        """A copy whose outside names (a user's helpers) are renamed as ``names`` says."""
        if all(old == new for old, new in names.items()):
            return self
        mapping: dict[str, ast.expr] = {
            old: ast.Name(id=new, ctx=ast.Load()) for old, new in names.items()
        }
        body = [_substitute(stmt, mapping) for stmt in self.body]
        free = frozenset(names.get(n, n) for n in self.free_names)
        return Template(self.arg, body, free, self.origin, self.extra, self.refusal)

    def expand(
        self,
        bindings: dict[str, ast.expr],
        inner: str | ast.expr,
        fresh: Callable[[str], str],
        known: Mapping[str, tuple[tuple[int, ...], str]] | None = None,
        scalars: Collection[str] = (),
    ) -> tuple[list[ast.stmt], ast.expr]:
        """Instantiate: returns the statements to emit and the expression of the result.

        ``bindings`` maps the rule's parameters (and ``ans``) to expressions,
        ``inner`` is the name the template's argument stands for, and ``fresh``
        turns a template-local name into a new name of the generated program.
        ``known`` and ``scalars`` (names provably numbers) answer ``rt.known_*`` questions.
        """
        mapping: dict[str, ast.expr] = dict(bindings)
        mapping[self.arg] = ast.Name(id=inner, ctx=ast.Load()) if isinstance(inner, str) else inner
        for local in self.locals:
            if local not in mapping:
                mapping[local] = ast.Name(id=fresh(local), ctx=ast.Load())
        body = [_substitute(stmt, mapping) for stmt in self.body]
        if self.unpacks:
            body = [_Unstarred().visit(stmt) for stmt in body]
        if self.asks_shapes:  # rt.known_ndim(a)...: answered from what is known, or not
            body = [_Known(known or {}, scalars).visit(stmt) for stmt in body]
        body = _fold_block(body)
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.Return):
                body = body[: i + 1]
                break
        if any(isinstance(n, ast.Return) for s in body[:-1] for n in walk(s)) or not (
            body and isinstance(body[-1], ast.Return)
        ):
            # a return under a test the code must decide when it runs (an option passed as a
            # variable: np.trace(x, offset=k)): each return assigns one result instead
            result = fresh("value")
            body = [
                *_one_result(body, result),
                ast.Return(value=ast.Name(id=result, ctx=ast.Load())),
            ]
        *stmts, last = body
        stmts = [ast.fix_missing_locations(s) for s in stmts]  # unparse reads their lineno
        if not isinstance(last, ast.Return) or last.value is None:
            raise ValueError(f"{self.origin}: needs constant values for its static parameters")
        return stmts, last.value


def _one_result(body: list[ast.stmt], result: str) -> list[ast.stmt]:
    """``body`` (a template's, its ``if`` tests left to run time) with each ``return v`` an
    assignment ``result = v`` ending its path; the statements after an ``if`` that returns
    in one branch are copied into the branches that go on. ValueError if a path can end
    without a value (or returns inside a loop).

    >>> body = ast.parse("if k == 0:\\n    return a\\nb = a * k\\nreturn b").body
    >>> print(ast.unparse(ast.fix_missing_locations(ast.Module(_one_result(body, "r"), []))))
    if k == 0:
        r = a
    else:
        b = a * k
        r = b
    """
    out: list[ast.stmt] = []
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Return):
            if stmt.value is None:
                break
            out.append(ast.Assign(targets=[ast.Name(id=result, ctx=ast.Store())], value=stmt.value))
            return out
        if any(isinstance(n, ast.Return) for n in walk(stmt)):
            if not isinstance(stmt, ast.If):
                break
            rest = body[i + 1 :]
            out.append(
                ast.If(
                    test=stmt.test,
                    body=_one_result([*stmt.body, *copy.deepcopy(rest)], result),
                    orelse=_one_result([*stmt.orelse, *copy.deepcopy(rest)], result),
                )
            )
            return out
        out.append(stmt)
    raise ValueError("a path of the template ends without a value")


def _substitute(node: Any, mapping: dict[str, ast.expr]) -> Any:
    """A copy of ``node`` with the names in ``mapping`` replaced (one pass, no deepcopy)."""
    if isinstance(node, ast.Name):
        new = mapping.get(node.id)
        ctx = getattr(node, "ctx", None) or ast.Load()
        if new is None:
            return ast.Name(id=node.id, ctx=ctx)
        if isinstance(ctx, ast.Store):
            assert isinstance(new, ast.Name), f"cannot assign to parameter {node.id}"
            return ast.Name(id=new.id, ctx=ast.Store())
        return _substitute(new, {})
    if isinstance(node, ast.AST):
        fields = {}
        for field in node._fields:
            try:
                value = getattr(node, field)
            except AttributeError:  # (a field left unset)
                continue
            if isinstance(value, list):
                fields[field] = [_substitute(v, mapping) for v in value]
            elif isinstance(value, ast.AST) and not isinstance(value, LEAVES):
                fields[field] = _substitute(value, mapping)
            else:  # (contexts and operators are shared, as the parser shares them)
                fields[field] = value
        return type(node)(**fields)
    return node


def _dtype_kind(name: str) -> str:
    """The kind letter of a numeric dtype's name, else "" (unknown, or not a number)."""
    try:
        kind = np.dtype(name).kind if name else ""
    except TypeError:
        return ""
    return kind if kind in "fiubc" else ""


class _Known(Transformer):
    """Answer a template's questions about shapes (``rt.known_ndim(a)``...) from ``known``:
    program names -> (shape, dtype name) of the values known before the code runs;
    ``rt.known_scalar(a)`` from ``scalars`` (names provably numbers) too; and
    ``rt.known_constant(a)``: ``a`` itself when the call passes a number or a string there,
    else None."""

    def __init__(
        self, known: Mapping[str, tuple[tuple[int, ...], str]], scalars: Collection[str] = ()
    ) -> None:
        self.known = known
        self.scalars = scalars

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = dotted_text(node.func)
        if func not in _KNOWN_QUESTIONS or len(node.args) != 1:
            return node
        arg = node.args[0]
        if func == "rt.known_scalar":
            if isinstance(arg, ast.Constant):
                return ast.Constant(value=type(arg.value) in (int, float))
            if not isinstance(arg, ast.Name):
                return ast.Constant(value=False)
            shape = self.known.get(arg.id, ((-1,), ""))[0]
            return ast.Constant(value=arg.id in self.scalars or shape == ())
        if func == "rt.known_constant":
            plain = isinstance(arg, ast.Constant) and type(arg.value) in (int, float, str)
            return arg if plain else ast.Constant(value=None)
        if func == "rt.known_real":
            if isinstance(arg, ast.Constant):
                return ast.Constant(value=type(arg.value) in (int, float, bool))
            if not isinstance(arg, ast.Name):
                return ast.Constant(value=False)
            kind = _dtype_kind(self.known.get(arg.id, ((), ""))[1])
            if kind:
                return ast.Constant(value=kind != "c")
            return ast.Constant(value=arg.id in self.known.get(REAL, ((), ""))[1].split())
        entry = self.known.get(arg.id) if isinstance(arg, ast.Name) else None
        if entry is None:
            return ast.Constant(value=-1 if func == "rt.known_ndim" else None)
        shape = entry[0]
        return literal(len(shape) if func == "rt.known_ndim" else shape)


class _Unstarred(Transformer):
    """``(*(a, b), *(a_dot, b_dot))`` -> ``(a, b, a_dot, b_dot)``: a template's
    ``(*arrays, *parts)`` where the call passes tuple displays (a sequence rule's elements
    and their tangents). A name stays unpacked (a list the function built, an array's rows)."""

    @staticmethod
    def splice(items: list[ast.expr]) -> list[ast.expr]:
        out: list[ast.expr] = []
        for item in items:
            if isinstance(item, ast.Starred) and isinstance(item.value, (ast.Tuple, ast.List)):
                out.extend(item.value.elts)
            else:
                out.append(item)
        return out

    def visit_Tuple(self, node: ast.Tuple) -> ast.expr:
        self.generic_visit(node)
        node.elts = self.splice(node.elts)
        return node

    def visit_List(self, node: ast.List) -> ast.expr:
        self.generic_visit(node)
        node.elts = self.splice(node.elts)
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        node.args = self.splice(node.args)
        return node


_KNOWN_QUESTIONS = frozenset(
    {"rt.known_ndim", "rt.known_shape", "rt.known_scalar", "rt.known_constant", "rt.known_real"}
)


def _stored_names(body: list[ast.stmt]) -> set[str]:
    names = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


_STATIC_NODES = (
    ast.Constant,
    ast.Subscript,
    ast.Slice,
    ast.Tuple,
    ast.List,
    ast.BoolOp,
    ast.UnaryOp,
    ast.Compare,
    ast.BinOp,
    ast.IfExp,
    ast.Load,
    ast.boolop,
    ast.unaryop,
    ast.cmpop,
    ast.operator,
)


# NumPy functions a static test may call: pure questions about dtypes.
_STATIC_CALLS = frozenset({"np.dtype", "np.issubdtype"})

# NumPy functions (besides ufuncs) that only compute: generated code may evaluate a call of
# one later than written (adgen.backend.codeopt.fuse_temporaries)
_PURE_NUMPY = frozenset(
    "sum prod mean max min amax amin dot vdot matmul einsum outer inner tensordot reshape "
    "transpose swapaxes moveaxis squeeze expand_dims broadcast_to where zeros_like ones_like "
    "full_like full zeros ones diag diagonal trace cumsum stack concatenate clip tril triu "
    "linalg.norm linalg.inv linalg.solve linalg.det".split()
)
# adgen's own helpers that only compute (the others may be moved too, but need not be)
_PURE_RT = frozenset({"power", "zero_safe", "zero_safe_tangent"})
_ARRAY_ATTRIBUTES = frozenset({"T", "shape", "ndim", "size", "dtype", "real", "imag"})


def pure_call(node: ast.Call) -> bool:
    """Does this call in generated code only compute (no effect, no random draw, no
    ``out=``)? Every ``math`` function; NumPy's ufuncs and the functions above.

    >>> [pure_call(ast.parse(c, mode="eval").body) for c in
    ...  ("math.exp(x)", "np.tanh(x)", "np.sum(x, axis=0)", "np.add(x, y, out=x)",
    ...   "np.random.normal(x)", "f(x)")]
    [True, True, True, False, False, False]
    """
    module, _, attr = dotted_text(node.func).partition(".")
    if module == "math":
        return attr.isidentifier()
    if module == "rt":
        return attr in _PURE_RT and not node.keywords
    if module != "np" or any(k.arg in ("out", "where") for k in node.keywords):
        return False
    return attr in _PURE_NUMPY or isinstance(getattr(np, attr, None), np.ufunc)


def pure_attribute(node: ast.Attribute) -> bool:
    """Is reading this attribute free of effects: an array's own (``x.T``, ``x.shape``) or a
    module's (``np.pi``)? Another object's may be a property that does things."""
    return node.attr in _ARRAY_ATTRIBUTES or dotted_text(node.value).split(".")[0] in (
        "np",
        "math",
    )


def _numpy_attribute(node: ast.AST) -> bool:
    """``np`` or ``np.a.b`` (NumPy's dtypes and constants: ``np.float32``, ``np.inexact``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "np"


def _static_node(node: ast.AST) -> bool:
    if isinstance(node, _STATIC_NODES) or _numpy_attribute(node):
        return True
    return (
        isinstance(node, ast.Call)
        and dotted_text(node.func) in _STATIC_CALLS
        and all(k.arg is not None for k in node.keywords)
    )


class _DottedNames(Transformer):
    """The program's atoms name module attributes with dotted names (``np.float32``)."""

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if "." in node.id:
            return ast.parse(node.id, mode="eval").body
        return node


def static_value(node: ast.expr) -> tuple[bool, Any]:
    """Evaluate an expression made only of constants; ``(False, None)`` if it is not one.

    A variable is taken never to be the constant ``None`` (``v is None`` is False).
    Attributes of ``np`` (dtypes such as ``np.float32``) are constants too, and
    ``np.issubdtype`` / ``np.dtype`` may be called on constants:

    >>> static_value(ast.parse("np.issubdtype(np.int64, np.inexact)", mode="eval").body)
    (True, False)
    >>> static_value(ast.parse("np.issubdtype(dtype, np.inexact)", mode="eval").body)
    (False, None)
    """
    if isinstance(node, ast.Constant):
        return True, node.value
    try:  # most tests are comparisons of constants: no need to compile them
        return True, _evaluate(node)
    except _NotSimple:
        pass
    except Exception:
        return False, None
    node = _NotNone().visit(_DottedNames().visit(copy.deepcopy(node)))
    if not all(_static_node(n) for n in ast.walk(node)):
        return False, None
    try:
        with warnings.catch_warnings():  # `None[:-2]`: an unknown shape, never evaluated
            warnings.simplefilter("ignore", SyntaxWarning)
            expression = ast.fix_missing_locations(ast.Expression(body=node))
            code = compile(expression, "<static>", "eval")
        return True, eval(code, {"__builtins__": {}, "np": np})
    except Exception:
        return False, None


class _NotSimple(Exception):
    pass


_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _evaluate(node: ast.expr) -> Any:
    """The value of an expression of constants, tuples, comparisons, ``and``/``or``/``not``
    and subscripts; :class:`_NotSimple` for anything else (names, calls, arithmetic)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e) for e in node.elts)
    if isinstance(node, ast.List):  # as the program wrote it (ir.Tup of kind "list")
        return [_evaluate(e) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _evaluate(node.operand)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _evaluate(node.operand)
        if type(value) not in (int, float):
            raise _NotSimple
        return -value
    if isinstance(node, ast.BoolOp):
        result: Any = isinstance(node.op, ast.And)
        for value_node in node.values:
            result = _evaluate(value_node)
            if bool(result) != isinstance(node.op, ast.And):
                return result
        return result
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left = _evaluate(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            right = _evaluate(right_node)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Subscript):
        value = _evaluate(node.value)
        index = node.slice
        if isinstance(index, ast.Slice):
            parts = [
                None if p is None else _evaluate(p) for p in (index.lower, index.upper, index.step)
            ]
            return value[slice(*parts)]
        return value[_evaluate(index)]
    raise _NotSimple


class _NotNone(Transformer):
    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        if (
            len(node.ops) == 1
            and isinstance(node.ops[0], (ast.Is, ast.IsNot))
            and isinstance(node.comparators[0], ast.Constant)
            and node.comparators[0].value is None
        ):
            if isinstance(node.left, ast.Name):
                return ast.Constant(value=isinstance(node.ops[0], ast.IsNot))
            if isinstance(node.left, (ast.Constant, ast.Tuple)):
                is_none = isinstance(node.left, ast.Constant) and node.left.value is None
                return ast.Constant(value=is_none != isinstance(node.ops[0], ast.IsNot))
        return node


# Keyword arguments that say "the default" in calls templates make are dropped for
# readability where the function called has that default (np.sum(g, axis=None) is
# np.sum(g), np.linspace(a, b, n, endpoint=True) is np.linspace(a, b, n); but
# np.concatenate(parts, axis=None) is not np.concatenate(parts)).
_MISSING = object()


@functools.cache
def _default_of(func: str, keyword: str) -> Any:
    """The default of ``keyword`` in the function a template spells ``func`` (``np.sum``,
    ``rt.unreduce``); ``keepdims``' NumPy "not given" is False. ``_MISSING`` when it cannot
    be told (a ufunc, a user's helper) or there is none."""
    root, *path = func.split(".")
    value: Any = TEMPLATE_GLOBALS.get(root)
    for attr in path:
        value = getattr(value, attr, None)
    try:
        param = inspect.signature(value).parameters.get(keyword)
    except (TypeError, ValueError):
        return _MISSING
    if param is None or param.default is inspect.Parameter.empty:
        return _MISSING
    if keyword == "keepdims" and param.default is np._NoValue:
        return False
    return param.default


def _says_the_default(func: str, keyword: ast.keyword) -> bool:
    """Is ``keyword`` a constant equal to (and of the type of) ``func``'s own default?"""
    if keyword.arg is None or not isinstance(keyword.value, ast.Constant):
        return False
    default = _default_of(func, keyword.arg)
    value = keyword.value.value
    return default is not _MISSING and type(default) is type(value) and default == value


class _FoldExpr(Transformer):
    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        known, value = static_value(node.test)
        if known:
            return node.body if value else node.orelse
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant):
            known, value = static_value(node)
            if known and isinstance(value, (int, float)) and not isinstance(value, bool):
                return ast.Constant(value=value)
        if (
            isinstance(node.op, ast.Pow)
            and isinstance(node.right, ast.Constant)
            and node.right.value == 1
        ):
            return node.left
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        # `x != 0 or y >= 1` with y a number: `x != 0 or False` is the test `x != 0`
        self.generic_visit(node)
        neutral = isinstance(node.op, ast.And)  # the operand that decides nothing
        values = [
            v for v in node.values if not (isinstance(v, ast.Constant) and bool(v.value) is neutral)
        ]
        if len(values) == len(node.values):
            return node
        if not values:
            return ast.Constant(value=neutral)
        return values[0] if len(values) == 1 else ast.BoolOp(op=node.op, values=values)

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        # `y - (y != 0)` with y a number: a number (then folded by visit_BinOp)
        self.generic_visit(node)
        if all(isinstance(n, ast.Constant) for n in (node.left, *node.comparators)):
            known, value = static_value(node)
            if known and isinstance(value, bool):
                return ast.Constant(value=value)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        # (a, b)[1] -> b: a function with several results passes tuples of names
        self.generic_visit(node)
        if (
            isinstance(node.value, ast.Tuple)
            and isinstance(node.slice, ast.Constant)
            and type(node.slice.value) is int
            and -len(node.value.elts) <= node.slice.value < len(node.value.elts)
        ):
            return node.value.elts[node.slice.value]
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = dotted_text(node.func)
        node.keywords = [k for k in node.keywords if not _says_the_default(func, k)]
        return node


def _fold_block(body: list[ast.stmt]) -> list[ast.stmt]:
    """Decide ``if`` statements and conditional expressions whose tests are constant."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.If):
            known, value = static_value(stmt.test)
            if known:
                out.extend(_fold_block(stmt.body if value else stmt.orelse))
                continue
            stmt.body = _fold_block(stmt.body) or [ast.Pass()]
            stmt.orelse = _fold_block(stmt.orelse)
        out.append(_FoldExpr().visit(stmt))
    return out


class Primitive:
    """A function adgen knows: how to write a call to it, and its derivative templates."""

    def __init__(
        self,
        name: str,
        emitter: Callable[[list[ast.expr], list[tuple[str, ast.expr]]], ast.expr],
        params: list[inspect.Parameter],
        jvp: dict[str, Template],
        vjp: dict[str, Template],
        *,
        elementwise: bool = False,
        differentiable: bool = True,
        view: bool = False,
    ) -> None:
        self.name = name
        self.emitter = emitter
        self.params = params
        self._signature: tuple[list[inspect.Parameter], inspect.Signature] | None = None
        self.jvp = jvp
        self.vjp = vjp
        self.elementwise = elementwise
        self.differentiable = differentiable
        self.view = view  # the result may share memory with an argument
        # the function it is the rule of (the first registered with it): its own signature
        # is what calls are written against (:func:`own_arguments`)
        self.function: Any = None
        # the result (the first, for several) is a list of derivatives -- adgen's own list
        # helpers (rt.accumulate, rt.split_last): tangent contributions are summed item by
        # item (rt.accumulate), never with `+`, which would concatenate
        self.lists = False
        self.sequence: str | None = None  # the parameter taking a sequence of arrays
        self.sequence_number = False  # ... or a number, held as it is (np.array(3.0))
        self.user_fn: Any = None  # for a call to the user's own function (not inlined)
        # a function with several results (np.linalg.slogdet): how many, from its static
        # arguments; its templates take and return tuples, one item per result
        self.outputs: int | Callable[[dict[str, Any]], int] | None = None
        # what that count takes for granted of an argument the code cannot see yet, from the
        # static arguments: (parameter, number of axes, what, hint) or None; lowering checks
        # it (an adgen check the argument shapes decide, else the code runs)
        self.counted_for: Callable[[dict[str, Any]], tuple[str, int, str, str] | None] | None
        self.counted_for = None
        # the function returns its results as a list whatever their number (np.split): with
        # one result the list holds one item, which the statement's one target is bound to
        self.result_list = False
        self.examples: tuple[Example, ...] = ()  # what the registry-driven tests check
        # where its inputs are drawn from in those tests (one per argument for a tuple)
        self.domain: Domain | tuple[Domain, ...] | None = None
        self.diff_params = tuple(p.name for p in params if p.name in jvp)
        # Outside objects generated code must name (rules for the user's own functions): the
        # function called (when no module spells it) and the objects the templates name
        # beyond np, math and rt (name in the templates -> object). Lowering gives them names
        # in the generated function's namespace with :meth:`localize`.
        self.callee: Any = None
        self.helpers: dict[str, Any] = {}
        # a reduction whose result is one number when called without axis and keepdims
        self.full_reduction = False
        # a call adgen runs as written, without a rule (see :func:`opaque_call`): the error
        # to raise if a differentiated value reaches it, and whether it only reads its
        # arguments (never writes into them)
        self.refusal: Exception | None = None
        self.reads_only = False
        # why such a call cannot run as written, whatever reaches it (a list or a tuple?)
        self.ambiguous: Exception | None = None
        self.runs: Any = None  # the function such a call runs
        self.returns_tuple = False  # a call kept as a call: may its function return a tuple?
        # the templates are right for complex values too (see :func:`rule`)
        self.complex = False
        # a `raise` statement (:func:`raising`): whether its template is (exception, cause)
        self.raise_cause = False
        # forward templates for a batch of tangents (``bjvp_<p>``, see _parse_rule)
        self.batched: dict[str, Template] = {}
        # a method of a random generator (``rng.normal``): see :attr:`draws`
        self.generator_method = False
        # a differentiable function whose derivative a call does not take (the maximum that
        # shifts a log-sum-exp: adgen.middle.shifts); its result's kind still follows its
        # arguments' kinds, as the function's does
        self.derivative_cut = False

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"

    @property
    def draws(self) -> bool:
        """Is a call a random draw (``np.random.normal(0.0, 1.0, 3)``, ``rng.choice(4)``)?
        Each call gives other numbers and moves its generator's state, so one is never
        computed when transforming, merged with another, moved out of a loop or dropped.

        >>> [lookup(f).draws for f in (np.random.normal, np.random.permutation, np.sin)]
        [True, True, False]
        """
        owner = getattr(self.function, "__self__", None)
        return self.generator_method or isinstance(
            owner, (np.random.RandomState, np.random.Generator)
        )

    def localize(self, claim: Callable[[str, Any], str]) -> Primitive:
        """This primitive as one generated function writes it.

        ``claim(preferred, obj)`` returns the name the generated code uses for ``obj`` (and
        puts it in that code's namespace); the emitted call and the templates use those
        names, so a helper never collides with a variable of the program. Primitives that
        name no outside object are returned unchanged.
        """
        if self.callee is None and not self.helpers:
            return self
        new = copy.copy(self)
        new.callee, new.helpers = None, {}
        if self.callee is not None:
            new.emitter = call_emitter(claim(_identifier(self.callee), self.callee))
        names = {key: claim(key, obj) for key, obj in self.helpers.items()}
        new.jvp = {p: t.renamed(names) for p, t in self.jvp.items()}
        new.batched = {p: t.renamed(names) for p, t in self.batched.items()}
        new.vjp = {p: t.renamed(names) for p, t in self.vjp.items()}
        return new

    def emit(self, args: list[ast.expr], kwargs: list[tuple[str, ast.expr]]) -> ast.expr:
        return self.emitter(args, kwargs)

    def bind(self, args: tuple[Any, ...], kwargs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
        """Match a call's arguments to the rule's parameters (``TypeError`` if they do not fit)."""
        if self._signature is None or self._signature[0] is not self.params:
            # made once per parameter list (checking the parameters is slow)
            self._signature = (self.params, inspect.Signature(self.params))
        bound = dict(self._signature[1].bind(*args, **dict(kwargs)).arguments)
        for p in self.params:  # `*operands`: one tuple atom (np.einsum("ij,jk", a, b))
            if p.kind is p.VAR_POSITIONAL and p.name in bound and self.differentiable:
                from adgen.ir import Tup

                bound[p.name] = Tup(tuple(bound[p.name]))
        return bound

    @functools.cached_property
    def own(self) -> inspect.Signature | None:
        """The signature of :attr:`function` itself (:func:`own_signature`), read once."""
        return own_signature(self.function) if self.function is not None else None

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params if p.default is not inspect.Parameter.empty}

    @functools.cached_property
    def zero_params(self) -> frozenset[str]:
        """The differentiable parameters whose derivative is zero in both modes (templates
        ``return rt.zeros_like(...)`` and nothing else): an argument that only gives a shape
        (``x`` in ``rt.unbroadcast(g, x)``). A value reaching only such parameters does not
        make the result depend on it: the analyses and both modes skip them (zero
        propagation through the code adgen generated, when it is differentiated again).
        (:meth:`localize` renames names in the templates, which keeps them zero.)"""
        return frozenset(
            p
            for p in self.diff_params
            if p != self.sequence
            and p in self.jvp
            and p in self.vjp
            and _returns_zeros(self.jvp[p])
            and _returns_zeros(self.vjp[p])
        )

    def flowing_args(self, args: tuple[Any, ...], kwargs: Iterable[tuple[str, Any]]) -> list[Any]:
        """The arguments of a call a derivative flows through: all, but those bound to
        :attr:`zero_params`."""
        kwargs = tuple(kwargs)
        if not self.zero_params:
            return [*args, *(v for _, v in kwargs)]
        try:
            bound = self.bind(args, kwargs)
        except TypeError:
            return [*args, *(v for _, v in kwargs)]
        return [a for p, a in bound.items() if p not in self.zero_params]

    def count_outputs(self, static: dict[str, Any]) -> int | None:
        """How many results a call has (None: one, not a tuple); ``static`` maps parameter
        names to the constant values of the call (defaults included)."""
        if self.outputs is None or isinstance(self.outputs, int):
            return self.outputs
        return self.outputs(static)


def _returns_zeros(template: Template) -> bool:
    """Is the template ``return rt.zeros_like(<name>)`` and nothing else?"""
    if template.refusal is not None or len(template.body) != 1:
        return False
    stmt = template.body[0]
    return (
        isinstance(stmt, ast.Return)
        and isinstance(stmt.value, ast.Call)
        and dotted_text(stmt.value.func) == "rt.zeros_like"
        and len(stmt.value.args) == 1
        and isinstance(stmt.value.args[0], ast.Name)
        and not stmt.value.keywords
    )


def _setitem_emitter(a: list[ast.expr], k: list[tuple[str, ast.expr]]) -> ast.expr:
    raise TypeError("y[index] = v is a statement")


def _positional(*names: str) -> list[inspect.Parameter]:
    return [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]


# `y[index] = v`: an in-place write. Its IR form binds y again (y is a "new value" after the
# write); forward and reverse mode give it derivative code of its own (tangent written in
# place; overwritten values saved and restored; the cotangent of v read from the written slots).
SETITEM = Primitive("setitem", _setitem_emitter, _positional("a", "index", "v"), {}, {}, view=True)
SETITEM.diff_params = ("a", "v")
SETITEM.complex = True  # (a complex v written into a real y: NumPy keeps the real part)


# `xs = []` and `xs.append(v)`: a list the function builds (then stacks, sums, indexes).
LIST_NEW = Primitive(
    "list", lambda a, k: ast.List(elts=[], ctx=ast.Load()), [], {}, {}, differentiable=False
)
APPEND = Primitive("append", _setitem_emitter, _positional("a", "v"), {}, {}, view=True)
APPEND.diff_params = ("a", "v")
APPEND.complex = True

# `v = xs.pop()`: the last item of such a list, taken off it. Its IR form binds the list again
# and the item: targets (xs, v). Forward mode pops the tangent list alongside; reverse mode
# appends v's cotangent to the list's cotangent (the adjoint of xs.append(v) takes it off).
POP = Primitive("pop", _setitem_emitter, _positional("a"), {}, {})
POP.diff_params = ("a",)
POP.complex = True

# `assert test`: kept in the generated code (forward sweep / primal), never differentiated.
# adgen's own checks carry a refusal's words (`what`, `hint`): adgen's error when the argument
# shapes decide it beforehand (middle/shapes.settle_checks), else `rt.refuse_unless(test, what,
# hint[, kind])` in the generated code, reported as the same refusal (an error of adgen's class
# `kind`, its words as they are, where given) when the code runs; or an error
# Python raises running the code as written (`error`: `rt.expect(test, error)`, a ValueError).
# Neither is an `assert`, which `python -O` strips; the user's own `assert` stays one.
ASSERT = Primitive(
    "assert",
    _setitem_emitter,
    [
        *_positional("test"),
        *(
            inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
            for n in ("what", "hint", "error", "kind")
        ),
    ],
    {},
    {},
    differentiable=False,
)


# Calls known to only read their arguments (never write into them): besides these, the
# functions of NumPy, SciPy, ``math``, ``logging`` and ``warnings`` but those named in
# _MUTATORS, ufuncs without an ``out`` argument, and a ``logging.Logger``'s messages.
_READ_ONLY_BUILTINS = (
    *(print, repr, str, format, isinstance, issubclass, type, id, hash, callable, len, round),
    *(abs, min, max, sorted, sum, any, all, int, float, bool, list, tuple, getattr, hasattr),
    *(vars, dir, set, frozenset, dict, zip, enumerate, range),
)
_READ_ONLY_MODULES = frozenset({"numpy", "scipy", "math", "logging", "warnings", "_warnings"})
_MUTATORS = frozenset(
    "at shuffle copyto put place putmask fill_diagonal put_along_axis sort partition fill "
    "resize setflags itemset seed permuted".split()
)
_LOGGER_METHODS = frozenset("debug info warning warn error critical exception log".split())
# library functions that only read (their module, their name), known without importing them
_READ_ONLY_LIBRARY = frozenset(
    {
        ("sklearn._config", "get_config"),
        ("sklearn._config", "_get_threadlocal_config"),
        # scikit-learn's input validation: it checks, converts into a new array or returns
        # the one it was given, never writing into it
        *(
            ("sklearn.utils.validation", name)
            for name in (
                "check_array",
                "check_consistent_length",
                "column_or_1d",
                "check_X_y",
                "_num_samples",
                "_check_sample_weight",
                "check_scalar",
                "assert_all_finite",
                "_assert_all_finite",
                "check_non_negative",
            )
        ),
    }
)


# methods of a library's objects that only read the object (a library -> their names):
# scikit-learn's estimator tags and parameters, which make new objects describing it
_READ_ONLY_METHODS = {
    "sklearn": frozenset(
        "__sklearn_tags__ _more_tags _get_tags get_params __sklearn_is_fitted__".split()
    ),
}


# library functions that return a new array no other name holds where asked for a copy:
# (module, name) -> the parameter asking
_COPY_WHEN_ASKED = {("sklearn.utils.validation", "check_array"): "copy"}


def copies_when_asked(fn: Any, bound: dict[str, Any]) -> bool:
    """Is ``fn`` a library's check that returns a new array where its arguments (``bound``:
    parameter -> IR atom) ask for a copy -- scikit-learn's ``check_array(X, copy=True)`` --
    and does this call ask (a constant True)? adgen's own ``np.asarray(..., copy=True)``
    then stands for that contract (NumPy 2: ``np.asarray`` takes ``copy``)."""
    key = (str(getattr(fn, "__module__", "")), str(getattr(fn, "__name__", "")))
    param = _COPY_WHEN_ASKED.get(key)
    asked = bound.get(param) if param is not None else None
    return asked is not None and getattr(asked, "value", None) is True and asarray_takes_copy()


def writes_out(fn: Any) -> int | None:
    """Where ``fn(..., out=y)`` writes what ``f(*args)`` computes into ``y`` and returns
    ``y``: for one of NumPy's ufuncs and ``np.clip`` (its ufunc's function), 0 (``fn``
    itself computes, from all its positional arguments: :func:`out_inputs`); for a
    library's helper that calls the function it is given with ``out=`` (scikit-learn's
    ``_modify_in_place_if_numpy(xp, func, *args, out=y)`` while its array API support is
    off), the position of that function among its arguments. None: neither.

    >>> writes_out(np.exp), writes_out(np.sum)
    (0, None)
    """
    if isinstance(fn, np.ufunc) or fn is np.clip:
        return 0
    module, name = getattr(fn, "__module__", None) or "", getattr(fn, "__name__", "")
    if module == "sklearn.utils._array_api" and name == "_modify_in_place_if_numpy":
        return 1 if _sklearn_array_api_off() else None
    return None


def out_inputs(fn: Any) -> int:
    """How many inputs ``fn`` (:func:`writes_out` 0) takes before ``out``.

    >>> out_inputs(np.exp), out_inputs(np.clip)
    (1, 3)
    """
    return 3 if fn is np.clip else int(fn.nin)


def returns_its_arrays(fn: Any, options: dict[str, Any] | None) -> bool:
    """Does ``fn(*arrays, **options)`` return the arrays it is given (one: itself; several:
    their tuple)? scikit-learn's ``move_to(..., xp=np, device=None)`` while its array API
    support is off: NumPy arrays (and None) stay as they are. ``options``: the keyword
    arguments' values (None: not known when transforming).

    >>> returns_its_arrays(np.asarray, {})
    False
    """
    module, name = getattr(fn, "__module__", None) or "", getattr(fn, "__name__", "")
    if not (module == "sklearn.utils._array_api" and name == "move_to") or options is None:
        return False
    cpu = options.keys() <= {"xp", "device"} and options.get("device") in (None, "cpu")
    return cpu and is_numpy_namespace(options.get("xp", np)) and _sklearn_array_api_off()


def _sklearn_array_api_off() -> bool:
    """Is scikit-learn's array API support off (its default)? Its helpers then take NumPy's
    paths whatever the arrays."""
    sklearn = sys.modules.get("sklearn")
    config = sklearn.get_config() if sklearn is not None else {"array_api_dispatch": True}
    return not config.get("array_api_dispatch", True)


# primitives (by name) whose result has their array argument's shape, and a dtype the other
# arguments decide: the NumPy function each runs (see kind_keeping)
_KIND_KEEPING: dict[str, Callable[..., Any]] = {
    "np.asarray": np.asarray,
    "np.asanyarray": np.asanyarray,
    "np.ascontiguousarray": np.ascontiguousarray,
    "np.asfortranarray": np.asfortranarray,
    ".astype": lambda a, *args, **kwargs: a.astype(*args, **kwargs),
    ".copy": lambda a, *args, **kwargs: a.copy(*args, **kwargs),
    "np.copy": np.copy,
    "np.array": np.array,
    **({"np.astype": np.astype} if hasattr(np, "astype") else {}),
}
# ... and those whose result is a view of it with its dtype
# (a sample's strides are all 0: NumPy reshapes it, as `ravel` too, to a view)
_KIND_VIEWS: dict[str, Callable[..., Any]] = {
    ".T": lambda a: a.T,
    "np.transpose": np.transpose,
    ".transpose": lambda a, *axes: a.transpose(*axes),
    "np.reshape": np.reshape,
    ".reshape": lambda a, *shape, **kwargs: a.reshape(*shape, **kwargs),
    "np.ravel": lambda a, order="C": np.reshape(a, -1),
    ".ravel": lambda a, order="C": np.reshape(a, -1),
    "np.expand_dims": np.expand_dims,
    "np.squeeze": np.squeeze,
    "np.atleast_1d": np.atleast_1d,
    "np.atleast_2d": np.atleast_2d,
    "np.swapaxes": np.swapaxes,
    "np.moveaxis": np.moveaxis,
    "np.broadcast_to": np.broadcast_to,
    "np.shape": np.shape,  # (the shape itself: a sample's is the array's)
    # reductions (what they make from a sample: an array of the result's kind)
    **{f"np.{n}": getattr(np, n) for n in "sum prod mean max min amax amin".split()},
    **{f".{n}": getattr(np.ndarray, n) for n in "sum prod mean max min".split()},
}
# scikit-learn's input validation, which keeps an array's shape and gives it the dtype its
# options decide: run on a sample of the array's kind when transforming
_ARRAY_CHECKS = frozenset({("sklearn.utils.validation", "check_array")})


def ufunc_args_with_out(name: str | None) -> int | None:
    """How many positional arguments a call of NumPy's (or scipy.special's) ufunc called
    ``name`` has when it passes its output array after its inputs (``np.exp(x, out)``: 2,
    ``special.expit(x, out)``), else None (not a ufunc's name).

    >>> ufunc_args_with_out("exp"), ufunc_args_with_out("add"), ufunc_args_with_out("sum")
    (2, 3, None)
    >>> import scipy.special
    >>> ufunc_args_with_out("expit")
    2
    """
    fn = vars(np).get(name) if name else None  # (not np.__getattr__: `np.str` warns)
    special = sys.modules.get("scipy.special")
    if fn is None and name and special is not None:
        fn = vars(special).get(name)
    return fn.nin + 1 if isinstance(fn, np.ufunc) else None


def asarray_takes_copy() -> bool:
    """Does ``np.asarray`` take ``copy=`` (NumPy 2)? Then ``np.array(x, dtype, order=...)``
    of an array is ``np.asarray(x, dtype, order=..., copy=True)``."""
    return np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def returns_arrays_as_they_are(fn: Any) -> bool:
    """Does ``fn(x)`` return ``x`` itself where ``x`` is a NumPy array (``np.asarray``)?"""
    return fn is np.asarray or fn is np.asanyarray


def asked_to_copy(name: str, kwargs: Collection[tuple[str, Any]]) -> bool:
    """Is a call of the primitive ``name`` with these keyword arguments (IR atoms) a
    conversion that may return its argument, asked for a copy (``np.asarray(x, copy=True)``:
    a new array, never a view)?"""
    copy = [a for k, a in kwargs if k == "copy"]
    if name in ("np.astype", ".astype"):  # (copies unless told not to: copy=True by default)
        return not copy or getattr(copy[0], "value", None) is True
    asked = bool(copy) and getattr(copy[0], "value", None) is True
    return asked and name in ("np.asarray", "np.asanyarray", "np.array")


def checks_arrays(fn: Any) -> bool:
    """Is ``fn`` a library's check of an array that keeps its shape and converts it to the
    dtype its options ask (scikit-learn's ``check_array``), which only reads (adgen runs it
    on a sample of its argument's kind to know its result's kind)?"""
    return (getattr(fn, "__module__", None), getattr(fn, "__name__", None)) in _ARRAY_CHECKS


# NumPy's functions without a derivative that always return a new array
_MAKE_NEW_ARRAYS = frozenset(
    "zeros empty ones eye identity zeros_like empty_like ones_like tri indices".split()
)


def makes_new_array(prim: Primitive) -> bool:
    """Does the primitive, one without a derivative that runs a NumPy function as it is,
    always return a new array (``np.zeros(k)``, ``np.isnan(x)``: a ufunc, without ``out=``,
    which adgen passes as a buffer of its own)?

    >>> makes_new_array(lookup(np.zeros)), makes_new_array(lookup(np.isnan))
    (True, True)
    >>> makes_new_array(lookup(np.shape))
    False
    """
    runs = getattr(prim, "runs", None)
    if prim.differentiable or prim.view or runs is None:
        return False
    if isinstance(runs, np.ufunc):
        return True
    name = str(getattr(runs, "__name__", ""))
    return name in _MAKE_NEW_ARRAYS and getattr(np, name, None) is runs


def kind_keeping(name: str) -> Callable[..., Any] | None:
    """For a primitive (by name) whose result has its array argument's shape, and a dtype
    the other arguments decide (``np.asarray(x, dtype=float)``, ``x.astype(t)``), the NumPy
    function it runs (adgen evaluates it on a sample of the argument's kind); else None."""
    return _KIND_KEEPING.get(name)


_ELEMENTWISE_OPERATORS = {
    n: getattr(operator, n)
    for n in (
        "add sub mul truediv floordiv mod pow neg pos lt le gt ge eq ne and_ or_ xor invert"
    ).split()
}


def kind_elementwise(name: str) -> Callable[..., Any] | None:
    """For a primitive (by name) that works element by element -- one of NumPy's ufuncs, or
    Python's arithmetic -- its function: its result's kind follows from its arguments' (the
    shape they broadcast to, the dtype NumPy's promotion gives). Else None.

    >>> kind_elementwise("np.log1p"), kind_elementwise("mul"), kind_elementwise("np.sum")
    (<ufunc 'log1p'>, <built-in function mul>, None)
    """
    if name.startswith("np."):
        fn = vars(np).get(name[3:])  # (not np.__getattr__: `np.str` warns)
        return fn if isinstance(fn, np.ufunc) else None
    return _ELEMENTWISE_OPERATORS.get(name)


def kind_fixed(name: str) -> Any:
    """For a primitive (by name) whose result has one type whatever it is given (Python's
    ``int(v)``, ``float(v)``, ``bool(v)``, ``len(v)``), a value of that type; else None.

    >>> kind_fixed("int"), kind_fixed("float"), kind_fixed("np.sum")
    (0, 0.0, None)
    """
    return _KIND_FIXED.get(name)


_KIND_FIXED: dict[str, Any] = {"int": 0, "float": 0.0, "bool": False, "len": 0, "complex": 0j}


def kind_view(name: str) -> Callable[..., Any] | None:
    """For a primitive (by name) whose result is a view of its array argument (``x.T``,
    ``np.reshape(x, (-1, 1))``) or a reduction of it (``np.max(x, axis=1)``), the NumPy
    function it runs (adgen applies it to a sample of the argument's kind: a view, or a
    small array); else None."""
    return _KIND_VIEWS.get(name)


def namespace_test(fn: Any) -> bool:
    """Is ``fn`` array-api-compat's test of which library a namespace is
    (``is_numpy_namespace(xp)``, SciPy's vendored copy too), which adgen evaluates when
    transforming on a namespace it knows then?"""
    module, name = getattr(fn, "__module__", None) or "", getattr(fn, "__name__", "")
    return (
        module.endswith("array_api_compat.common._helpers")
        and name.startswith("is_")
        and name.endswith("_namespace")
    )


_KIND_FUNCTIONS = tuple(
    getattr(np, n)
    for n in (
        "dtype",
        "isdtype",
        "issubdtype",
        "result_type",
        "promote_types",
        "can_cast",
        "iterable",
        "isscalar",
        "ndim",
        "broadcast_shapes",
        "finfo",
        "iinfo",
    )
    if hasattr(np, n)
)


def decided_by_kinds(fn: Any) -> bool:
    """Is ``fn`` a function of data types and kinds only (``np.dtype(float)``,
    ``np.isdtype(dtype, "integral")``, ``np.result_type(x, 1.0)``, ``np.finfo(x.dtype)``; SciPy's
    ``xp_result_type``, scikit-learn's ``supported_float_dtypes`` and ``device`` while their
    array API support is off), which adgen evaluates when transforming where its arguments are known
    then (arrays by samples of their kinds)?"""
    if any(fn is f for f in _KIND_FUNCTIONS):
        return True
    module, name = getattr(fn, "__module__", None) or "", getattr(fn, "__name__", "")
    if module.endswith("array_api_compat.common._aliases") and name in ("finfo", "iinfo"):
        return True  # (array-api-compat's: NumPy's of the dtype)
    if module == "scipy._lib._array_api" and name == "xp_result_type":
        return not getattr(fn, "__globals__", {}).get("SCIPY_ARRAY_API", True)
    if module == "sklearn.utils._array_api" and name in ("supported_float_dtypes", "device"):
        return _sklearn_array_api_off()
    return False


def type_test(fn: Any) -> bool:
    """Is ``fn`` a library's test of a value's type (``scipy.sparse.issparse``), which the
    kinds of values adgen knows when transforming decide? (Never imports SciPy.)"""
    sparse = sys.modules.get("scipy.sparse")
    tests = (getattr(sparse, n, None) for n in ("issparse", "isspmatrix"))
    if sparse is not None and any(fn is t and t is not None for t in tests):
        return True
    # narwhals' tests of dataframe kinds (is_into_dataframe, is_pandas_series...), which
    # scikit-learn's check_array asks of every array
    name = getattr(fn, "__name__", "")
    module = getattr(fn, "__module__", None) or ""
    if module == "narwhals.plugins":
        prefixes: tuple[str, ...] = ("is_native_",)
    elif module.startswith("narwhals.") and module.endswith(".dependencies"):
        prefixes = ("is_", "_is_")  # (narwhals.dependencies, narwhals.stable.v2.dependencies)
    elif module == "sklearn.utils._dataframe":
        prefixes = ("is_",)  # (is_pandas_df_or_series, is_polars_df, is_df_or_series...)
    elif module.endswith("array_api_compat.common._helpers") and name.endswith("_array"):
        prefixes = ("is_",)  # array-api-compat's is_torch_array, is_numpy_array... (SciPy's too)
    else:
        return False
    return name.startswith(prefixes) and getattr(sys.modules.get(module), name, None) is fn


def kind_attribute(fn: Any) -> str | None:
    """The attribute of an array that ``fn(a)`` gives, where ``fn`` is a function of one
    array that reads only its kind: ``np.shape``/``np.ndim``/``np.size`` ("shape", "ndim",
    "size") and array-api-compat's ``size(x)`` (documented as ``x.size``; SciPy's
    ``xp_size``). None for any other function."""
    for attr in ("shape", "ndim", "size"):
        if fn is getattr(np, attr):
            return attr
    module = getattr(fn, "__module__", None) or ""
    if (
        module.endswith("array_api_compat.common._helpers")
        and getattr(fn, "__name__", "") == "size"
        and getattr(sys.modules.get(module), "size", None) is fn
    ):
        return "size"
    return None


# np.errstate's settings that only change how a floating-point warning shows ("raise" and
# "call" turn it into an exception or a call)
_QUIET_ERRSTATES = ("ignore", "warn", "print", "log")
# sklearn.config_context's settings that change no result of a computation it guards
_QUIET_SKLEARN_CONFIG = ("skip_parameter_validation", "assume_finite", "print_changed_only")


def guards_only(fn: Any, positional: int, keywords: dict[str, Any]) -> bool:
    """Is ``with fn(*args, **keywords):`` (``positional`` arguments, the keywords' values as
    written: constants, else ``...``) a context that changes no value computed inside it --
    only how warnings and printing show, or how many threads a library uses? Then the
    statements it holds are differentiated as if it were not there.

    >>> import warnings
    >>> quiet, loud = {"divide": "ignore"}, {"all": "raise"}
    >>> guards_only(np.errstate, 0, quiet), guards_only(np.errstate, 0, loud)
    (True, False)
    >>> guards_only(warnings.catch_warnings, 0, {}), guards_only(open, 1, {})
    (True, False)
    """
    if fn is np.errstate:
        return positional == 0 and all(v in _QUIET_ERRSTATES for v in keywords.values())
    if fn is warnings.catch_warnings:
        return positional == 0 and not keywords.get("record", False) and "action" not in keywords
    if fn is np.printoptions:
        return True
    if fn is contextlib.nullcontext:  # (`np.errstate(...) if numpy else nullcontext()`)
        return positional == 0 and not keywords
    module, name = getattr(fn, "__module__", None) or "", getattr(fn, "__name__", "")
    if module.split(".")[0] == "threadpoolctl" and name == "threadpool_limits":
        return True
    if module == "sklearn._config" and name == "config_context":
        return positional == 0 and all(k in _QUIET_SKLEARN_CONFIG for k in keywords)
    if module == "sklearn.callback._callback_support" and name == "callback_management_context":
        # scikit-learn's fit wrapper: after the fit, the teardown of the callbacks (observers
        # such as progress bars) the estimator has; the fit itself runs unchanged
        return positional == 1 and not keywords
    return False


def suppresses(fn: Any) -> bool:
    """Is ``with fn(*exceptions):`` a context that ends its block quietly on one of those
    exceptions (``contextlib.suppress``): ``try: ... except exceptions: pass``?"""
    return fn is contextlib.suppress


def silences(fn: Any) -> bool:
    """Does a call of ``fn`` only change which warnings show (``warnings.simplefilter``)?
    Inside a ``with`` that :func:`guards_only`, adgen drops it: run as written, it would
    change the caller's warning filters for good."""
    return any(fn is f for f in (warnings.simplefilter, warnings.filterwarnings))


# keywords NumPy takes as another name of one of its own: ``np.std(x, correction=1)`` (the
# array API standard's spelling) is ``np.std(x, ddof=1)``, the keyword adgen's rule takes
_KEYWORD_ALIASES = {
    "np.std": (("correction", "ddof"),),
    "np.var": (("correction", "ddof"),),
    "np.clip": (("min", "a_min"), ("max", "a_max")),  # (NumPy 2.1's names)
}


# parameters NumPy takes as None where a call leaves them out (``np.clip(x, max=1.0)``: no
# lower bound), which adgen's rule takes by position
_OMITTED_AS_NONE = {"np.clip": ("a_min", "a_max")}


def omitted_as_none(prim: Primitive, positional: int, keywords: list[str]) -> list[str]:
    """The parameters of ``prim`` that a call (``positional`` arguments, ``keywords`` by
    name) leaves out and NumPy takes as None there.

    >>> omitted_as_none(lookup(np.clip), 1, ["a_max"]), omitted_as_none(lookup(np.sum), 1, [])
    (['a_min'], [])
    """
    names = [p.name for p in prim.params]
    return [
        n
        for n in _OMITTED_AS_NONE.get(prim.name, ())
        if n in names and names.index(n) >= positional and n not in keywords
    ]


def keyword_alias(name: str, keywords: list[str]) -> tuple[str, str] | None:
    """``(alias, keyword)`` where a call of the rule ``name`` passes ``alias``, which NumPy
    takes for its ``keyword`` (``np.std``'s ``correction``, its ``ddof``), else None.

    >>> keyword_alias("np.std", ["axis", "correction"]), keyword_alias("np.sum", ["axis"])
    (('correction', 'ddof'), None)
    """
    for alias in _KEYWORD_ALIASES.get(name, ()):
        if alias[0] in keywords:
            return alias
    return None


# options of NumPy's and SciPy's functions that change neither the values nor the derivatives
# of a call: memory layout (``order=`` where its default is one), checks of casts, subclass
# passing, and leave to overwrite an input (a hint: the input's later contents are not
# defined, the result is the same). A call keeps them out of its statement
_INERT = frozenset({"casting", "subok", "overwrite_a", "overwrite_b", "overwrite_input"})
_LAYOUTS = ("K", "A", "C", "F")
# values other than the default that change nothing either (NumPy computes on the CPU; a
# reduction over every item where=True, which NumPy marks as left out)
_INERT_VALUES: dict[str, tuple[Any, ...]] = {"device": ("cpu",), "where": (True,)}
# parameters whose default in the signature is not what leaving them out means (NumPy 2.4's
# ``np.array(..., ndmax=0)`` asks for 0 axes at most): taken at no value
_SIGNATURE_DEFAULT_DIFFERS = frozenset({"ndmax"})
# functions whose dtype= casts their inputs first (a scan or a sum in that type), as ufuncs do
_CAST_FIRST = frozenset(
    {"np.cumsum", "np.cumprod", "np.nancumsum", "np.nancumprod", "np.cumulative_sum",
     "np.cumulative_prod", "np.trace", "np.stack", "np.concatenate", "np.hstack", "np.vstack",
     "np.row_stack", "np.cov", "np.corrcoef", "np.matmul", "np.vecdot", "np.matvec",
     "np.vecmat", "np.prod", "np.nanprod", "np.var", "np.std", "np.nanvar", "np.nanstd",
     "np.nansum", "np.nanmean"}
)  # fmt: skip
# the keywords of every NumPy ufunc (and SciPy's special functions, ufuncs too) besides its
# inputs, with their defaults: what a ufunc whose signature cannot be read takes
UFUNC_KEYWORDS: dict[str, Any] = {
    "out": None, "where": True, "casting": "same_kind", "order": "K", "dtype": None,
    "subok": True, "signature": None,
}  # fmt: skip


class NotTaken(Exception):
    """A call passes ``param``, a parameter of the function its rule does not take, with a
    value other than one that changes nothing: ``args`` = (param, message, hint)."""


class NotValid(Exception):
    """A call the function itself refuses, giving a parameter twice (Python raises
    ``TypeError`` there): ``args`` = (the parameter's name,)."""


def own_signature(fn: Any) -> inspect.Signature | None:
    """The signature of the function itself (not its rule's): a ufunc's inputs, then its
    keywords (:data:`UFUNC_KEYWORDS`) where ``inspect`` cannot read it; None where it cannot
    be read at all.

    >>> params = list(own_signature(np.exp).parameters)
    >>> params[0] in ("x", "x1"), params[1:]  # (NumPy before 2.3 reads the input as x1)
    (True, ['out', 'where', 'casting', 'order', 'dtype', 'subok', 'signature'])
    """
    try:
        found = inspect.signature(fn)
    except (TypeError, ValueError):
        found = None
    if found is not None:
        return _distribution_signature(fn, found) or found
    if not isinstance(fn, np.ufunc):
        return None
    inputs = [
        inspect.Parameter(f"x{i + 1}", inspect.Parameter.POSITIONAL_ONLY) for i in range(fn.nin)
    ]
    words = [
        inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v)
        for k, v in UFUNC_KEYWORDS.items()
    ]
    return inspect.Signature([*inputs, *words])


def _distribution_signature(fn: Any, found: inspect.Signature) -> inspect.Signature | None:
    """A method of one of SciPy's distributions (``scipy.stats.gamma.logpdf(x, *args,
    **kwds)``) as its documentation writes it: its point, the distribution's shapes, ``loc``
    and (continuous) ``scale`` (an underscore method: its point and shapes); None for another
    function."""
    kinds = [c.__name__ for c in type(getattr(fn, "__self__", None)).__mro__]
    if "rv_continuous" not in kinds and "rv_discrete" not in kinds:
        return None
    shapes = getattr(fn.__self__, "shapes", None) or ""
    point = next(iter(found.parameters.values()), None)
    if point is None or point.kind not in (point.POSITIONAL_ONLY, point.POSITIONAL_OR_KEYWORD):
        return None
    which = inspect.Parameter.POSITIONAL_OR_KEYWORD
    names = [s.strip() for s in shapes.split(",") if s.strip()]
    made = [point, *(inspect.Parameter(n, which) for n in names)]
    if not getattr(fn, "__name__", "_").startswith("_"):  # (``_logpdf(x, *shapes)``: no more)
        made.append(inspect.Parameter("loc", which, default=0))
        if "rv_continuous" in kinds:
            made.append(inspect.Parameter("scale", which, default=1))
    return inspect.Signature(made)


def own_option(prim: Primitive, param: inspect.Parameter, value: tuple[bool, Any]) -> str:
    """What a call of ``prim``'s function does with ``param``, one of the function's
    parameters that the rule does not take, given ``value`` (``(known, constant)``: known
    False for a value only the run decides): ``"drop"`` (it changes nothing: left out of
    the call), ``"cast"`` (``dtype=``: the inputs are cast to it first); NotTaken otherwise,
    naming it.

    >>> own_option(lookup(np.exp), own_signature(np.exp).parameters["where"], (True, True))
    'drop'
    >>> try:
    ...     own_option(lookup(np.sum), own_signature(np.sum).parameters["out"], (False, None))
    ... except NotTaken as exc:
    ...     print(exc.args[1][:40])
    np.sum with `out=` other than its defaul
    """
    name, known, constant = param.name, value[0], value[1]
    if name in _INERT or (name == "order" and param.default in _LAYOUTS):
        return "drop"
    default = param.default
    if known and default is not param.empty and name not in _SIGNATURE_DEFAULT_DIFFERS:
        if (constant is None and default is None) or (
            default is not None and _same_default(constant, default)
        ):
            return "drop"
        if any(_same_default(constant, v) for v in _INERT_VALUES.get(name, ())):
            return "drop"
    if name == "dtype" and (prim.elementwise or prim.name in _CAST_FIRST):
        return "cast"
    fill = " (write `y[...] = {0}(...)` for an array to fill)" if name == "out" else ""
    if default is param.empty:
        said = "(a parameter of the function that adgen's rule does not take)"
    elif default is np._NoValue or not _literal(default):  # (a mark of a parameter left out)
        said = "(a parameter of the function that adgen takes only when it is left out)"
    else:
        said = f"other than its default, {default!r} (a parameter of the function that adgen "
        said += "takes only at its default)"
    raise NotTaken(
        name,
        f"{prim.name} with `{name}=` {said}",
        f"leave `{name}=` out{fill.format(prim.name)}, or compute {prim.name} outside the "
        "differentiated function",
    )


def _literal(value: Any) -> bool:
    """Is ``value`` one a program writes as a literal (a default a message can show)?"""
    if isinstance(value, tuple):
        return all(_literal(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def own_arguments(
    prim: Primitive,
    args: list[Any],
    kwargs: list[tuple[str, Any]],
    constant: Callable[[Any], tuple[bool, Any]],
) -> tuple[list[Any], list[tuple[str, Any]], Any]:
    """A call of ``prim``'s function, written against the function's own signature, as the
    rule takes it: arguments past the rule's positional ones passed by the function's names
    (``np.sum(a, 0, None, None)``: its ``out``), parameters the rule does not take left out
    where they change nothing (:func:`own_option`), and the ``dtype=`` the inputs are cast to
    first (or None). NotTaken names a parameter the rule cannot take with its value;
    ``constant`` reads an argument's value (``(known, value)``). Calls of a function whose
    signature cannot be read, or of a rule taking any keyword, are left as they are.

    >>> const = lambda v: (True, v)
    >>> own_arguments(lookup(np.sum), ["a", 0, None, None], [("keepdims", True)], const)
    (['a', 0, None], [('keepdims', True)], None)
    >>> own_arguments(lookup(np.exp), ["a"], [("casting", "no"), ("dtype", "d")], const)
    (['a'], [], 'd')
    """
    params = prim.params
    if any(p.kind is p.VAR_KEYWORD for p in params) or prim.function is None:
        return args, kwargs, None
    own = prim.own
    if own is None:
        return args, kwargs, None
    taken = {p.name for p in params}
    mine = list(own.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    in_order = [p for p in mine if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in [*mine, *params]) or len(args) > len(in_order):
        in_order = []  # (its positions past the variable ones cannot be told; too many)
    for key, _ in kwargs:  # (a parameter given twice: by position and by name)
        if any(p.name == key and p.kind is not p.POSITIONAL_ONLY for p in in_order[: len(args)]):
            raise NotValid(key)
    kept, named = list(args), list(kwargs)
    for i in range(min(len(args), len(in_order))):
        theirs = in_order[i]
        ours = positional[i].name if i < len(positional) else None
        if theirs.kind is theirs.POSITIONAL_ONLY or ours == theirs.name:
            continue
        if ours is not None and theirs.name not in taken:
            continue  # the rule's own name for this position (np.round's `a`, its `x`)
        # the rule orders its parameters otherwise (or has fewer): by the function's names
        kept = list(args[:i])
        named = [(p.name, a) for p, a in zip(in_order[i:], args[i:])] + named
        break
    out: list[tuple[str, Any]] = []
    dtype = None
    by_name = own.parameters
    for key, atom in named:
        if key in taken:
            out.append((key, atom))
            continue
        param = by_name.get(key)
        if param is None or param.kind in (param.POSITIONAL_ONLY, param.VAR_KEYWORD):
            out.append((key, atom))  # (not the function's: binding it says so)
            continue
        if param.kind is param.POSITIONAL_OR_KEYWORD and param in in_order:
            at = in_order.index(param)  # the rule's name of the same position (np.fix(x=a))
            if at < len(positional) and positional[at].name not in by_name:
                out.append((positional[at].name, atom))
                continue
        if own_option(prim, param, constant(atom)) == "cast":
            dtype = atom
    return kept, out, dtype


def array_namespace_result(fn: Any) -> Any:
    """What a library's array-namespace getter (``xp = array_namespace(x)``) returns while the
    library's own array API support is off -- then it returns its NumPy namespace whatever the
    arrays, so adgen decides the call when transforming; the namespace is NumPy itself, whose
    functions adgen has rules for (and dispatch on Dask and CuPy arrays). None: not such a
    getter, or its support is on (the call is then read as any other).

    scikit-learn's ``get_namespace`` gives ``(xp, False)``, ``get_namespace_and_device``
    ``(xp, False, None)`` while ``array_api_dispatch`` is off; SciPy's ``array_namespace``
    gives ``xp`` while ``SCIPY_ARRAY_API`` is unset."""
    module, name = getattr(fn, "__module__", None) or "", getattr(fn, "__name__", "")
    getters = ("get_namespace", "get_namespace_and_device")
    if module == "sklearn.utils._array_api" and name in getters:
        if not _sklearn_array_api_off():
            return None
        found = vendored_numpy_namespace("sklearn")
        if found is None:
            return None
        return (found, False) if name == "get_namespace" else (found, False, None)
    if module.startswith("scipy._lib.") and name == "array_namespace":
        if getattr(fn, "__globals__", {}).get("SCIPY_ARRAY_API", True):
            return None
        return vendored_numpy_namespace("scipy")
    return None


_VENDORED_COMPAT = {
    "sklearn": "sklearn.externals.array_api_compat.numpy",
    "scipy": "scipy._lib.array_api_compat.numpy",
}


def vendored_numpy_namespace(library: str) -> Any:
    """The NumPy namespace of the copy of array-api-compat ``library`` vendors: what its
    namespace getter returns for NumPy arrays. Its wrappers are not all NumPy's functions of
    the same name (``unique_values`` sorts, ``argsort`` is stable), so adgen reads them as
    code written for array-api-compat (:func:`adgen.rules.arrayapi.compat_counterpart`).
    None if there is no such module."""
    try:
        return importlib.import_module(_VENDORED_COMPAT[library])
    except ImportError:
        return None


def is_numpy_namespace(xp: Any) -> bool:
    """Is ``xp`` NumPy, or the NumPy namespace of a copy of array-api-compat a library
    vendors (whose functions compute on NumPy's arrays)?"""
    return xp is np or any(sys.modules.get(m) is xp for m in _VENDORED_COMPAT.values())


def transparent_wrapper(fn: Any) -> tuple[Any, Any, bool] | None:
    """A library's decorator wrapper that computes what the function it wraps computes, after
    checks that only read the arguments -- scikit-learn's ``@validate_params``: ``(wrapped,
    check, skip_nested)``, where ``check(*args, **kwargs)`` runs those checks (it raises what
    the wrapper raises on bad input, and only reads) and ``skip_nested`` says whether the
    wrapper skips the checks of the decorated functions it calls (None: not such a wrapper).
    adgen then reads ``wrapped`` in the wrapper's place, the check run as written before it
    (the wrapper's own code binds a signature, a ``try`` and a config context around the
    call: none of it touches a value)."""
    code = getattr(fn, "__code__", None)
    wrapped = getattr(fn, "__wrapped__", None)
    if code is None or wrapped is None or code.co_name != "wrapper":
        return None
    if not code.co_filename.replace("\\", "/").endswith("sklearn/utils/_param_validation.py"):
        return None
    constraints = getattr(wrapped, "_skl_parameter_constraints", None)
    module = sys.modules.get("sklearn.utils._param_validation")
    if constraints is None or module is None:
        return None
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    skip = cells.get("prefer_skip_nested_validation")
    check = SklearnChecks(module, wrapped, constraints)
    return wrapped, check, bool(skip.cell_contents) if skip is not None else False


class SklearnChecks:
    """The parameter checks scikit-learn's ``@validate_params`` wrapper makes before calling
    ``func`` (none while its config says to skip them), by its own validator: an object
    generated code calls as written (adgen reads neither it nor what it calls)."""

    adgen_reads_only = True

    def __init__(self, module: Any, func: Any, constraints: Any) -> None:
        self.module, self.func, self.constraints = module, func, constraints

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        if sys.modules["sklearn"].get_config().get("skip_parameter_validation"):
            return
        signature = inspect.signature(self.func)
        params = signature.bind(*args, **kwargs)
        params.apply_defaults()
        spread = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ignored = {p.name for p in signature.parameters.values() if p.kind in spread}
        ignored |= {"self", "cls"}
        given = {k: v for k, v in params.arguments.items() if k not in ignored}
        self.module.validate_parameter_constraints(
            self.constraints, given, caller_name=self.func.__qualname__
        )


class _StoreAttribute:
    """``obj.name = value`` on an object made outside the function, run as written (see
    :meth:`adgen.frontend.lower.objects.ObjectsMixin.store_outside`): it writes no array.
    An object, not a function: derivative code read again runs it as written too."""

    __name__ = "store_attribute"
    adgen_reads_only = True

    def __call__(self, obj: Any, name: str, value: Any) -> None:
        setattr(obj, name, value)


class _ReadAttribute:
    """``obj.name`` read when the code runs (the old value of ``obj.name += 1``)."""

    __name__ = "read_attribute"
    adgen_reads_only = True

    def __call__(self, obj: Any, name: str) -> Any:
        return getattr(obj, name)


store_attribute = _StoreAttribute()
read_attribute = _ReadAttribute()


def reads_frame(fn: Any, positional: int = 0) -> bool:
    """Does a call of ``fn`` with ``positional`` arguments read the frame that calls it
    (``eval("x * 2")``, ``locals()``, ``vars()``)? In generated code that frame holds other
    names, and differentiated values adgen cannot see read. (``vars(obj)`` and ``dir(obj)``
    read the object.)"""
    import inspect as _inspect

    if positional and (fn is vars or fn is dir):
        return False
    readers = (eval, exec, locals, globals, vars, dir, breakpoint, sys._getframe)
    return any(fn is r for r in (*readers, _inspect.currentframe, _inspect.stack))


def reads_only(fn: Any, positional: int, keywords: Collection[str]) -> bool:
    """Is a call of ``fn`` with ``positional`` arguments and these keywords known never to
    write into its arguments? (Unknown: False.)

    >>> import logging, math
    >>> [reads_only(f, 1, ()) for f in (print, np.meshgrid, math.exp, np.random.shuffle)]
    [True, True, True, False]
    >>> reads_only(np.add, 3, ()), reads_only(np.sin, 1, ("out",))
    (False, False)
    >>> reads_only(logging.getLogger("x").info, 2, ()), reads_only(dict.update, 2, ())
    (True, False)
    >>> reads_only(np.around, 2, ()), reads_only(np.around, 3, ()), reads_only(np.histogram, 2, ())
    (True, False, True)
    >>> import scipy.ndimage as ndi
    >>> reads_only(ndi.convolve1d, 2, ()), reads_only(ndi.convolve1d, 2, ("output",))
    (True, False)
    >>> from scipy.signal._savitzky_golay import _fit_edge
    >>> reads_only(_fit_edge, 8, ())  # (a private helper: it fills its last argument)
    False

    (``np.around(a, decimals, out)``: the third argument is ``out``. A function whose
    signature cannot be read, as some of NumPy's C functions before NumPy 2.4, is not
    known to only read.)
    """
    if any(_writes_into(k) for k in keywords):
        return False
    if isinstance(fn, np.ufunc):
        return positional <= fn.nin
    if isinstance(fn, ObjectMethod):
        return fn.reads_only(positional - 1, keywords)  # (the first argument: the object)
    if any(fn is b for b in _READ_ONLY_BUILTINS) or fn is warnings.warn or type_test(fn):
        return True  # (warnings.warn: no signature Python 3.13.0 can read)
    if (getattr(fn, "__module__", None), getattr(fn, "__name__", None)) in _READ_ONLY_LIBRARY:
        return True
    if getattr(fn, "adgen_reads_only", False):  # a check adgen made (transparent_wrapper)
        return True
    if getattr(fn, "__name__", None) in _MUTATORS:
        return False
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, type(np)):  # a bound method
        import logging

        if isinstance(owner, logging.Logger):
            return fn.__name__ in _LOGGER_METHODS
        library = (getattr(fn, "__module__", None) or "").split(".")[0]
        return fn.__name__ in _READ_ONLY_METHODS.get(library, ())
    module = getattr(fn, "__module__", None)
    if not (isinstance(module, str) and module.split(".")[0] in _READ_ONLY_MODULES):
        return False
    if str(getattr(fn, "__name__", "_")).startswith("_"):
        return False  # (a library's private helper fills what it is given: `_fit_edge(.., y)`)
    return _writes_nothing_positionally(fn, positional)


def _writes_into(parameter: str) -> bool:
    """Is an argument passed as ``parameter`` one a library function may write into? (``out=``,
    SciPy's ``output=``, ``overwrite_a=``)"""
    return parameter in ("out", "output") or parameter.startswith("overwrite")


def _writes_nothing_positionally(fn: Any, positional: int) -> bool:
    """Does a call of ``fn`` with ``positional`` arguments leave its ``out`` / ``overwrite_*``
    parameters unpassed (``np.dot(a, b, out)``)? False when its signature cannot be read."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    for k, p in enumerate(params):
        if p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY, p.VAR_KEYWORD) or k >= positional:
            return True
        if _writes_into(p.name):
            return False
    return True


def opaque_call(
    fn: Any, refusal: Exception, positional: int, keywords: Collection[str]
) -> Primitive:
    """The primitive of a call adgen has no rule for and does not inline (a library function,
    or one of the user's whose body adgen cannot lower): it runs as written, in the primal
    code of both modes, and its result is a constant of the derivative. ``refusal`` is the
    error adgen raised for it before (:mod:`adgen.middle.analysis` raises it if a
    differentiated value reaches the call where that would matter)."""
    if isinstance(fn, ObjectMethod):  # rng.normal(size=3): written as the program writes it
        emitter, callee = method_emitter(fn.__name__, fn.spread), None
        label = f".{fn.__name__}()"
    else:
        with warnings.catch_warnings():  # looking `str` up in NumPy warns (np.str)
            warnings.simplefilter("ignore", FutureWarning)
            emitter, callee = _emitter(fn)
            label = _label(fn)
    params = [
        inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
        inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
    ]
    prim = Primitive(label, emitter, params, {}, {}, differentiable=False)
    prim.callee = callee
    prim.view = True  # its result may be (or share memory with) an argument
    prim.refusal = refusal
    prim.reads_only = reads_only(fn, positional, keywords)
    prim.runs = fn
    return prim


# methods of strings a copied expression may call (they make new strings)
STRING_METHODS = frozenset(
    "format join upper lower strip lstrip rstrip replace title capitalize casefold split "
    "startswith endswith isdigit isalpha isidentifier".split()
)
# methods of a Python int or float that only read it and give a number or a bool
# (`(n - 1).bit_length()` sizing an FFT): the kinds of number that have each
NUMBER_METHODS = {"bit_length": (int,), "bit_count": (int,), "is_integer": (int, float)}


def as_written(
    template: ast.expr, label: str, refusal: Exception | None, reads_only: bool = True
) -> Primitive:
    """The primitive of an expression no derivative passes through, copied into the generated
    code as the program writes it (an f-string, ``"%d" % n``, ``"{}".format(n)``, the
    exception a ``raise`` makes): ``template`` is the expression with the ``k``-th name it
    reads written ``__adgen_k``; a statement's arguments are the atoms those names mean
    there. Its result is a constant of the derivative; ``refusal`` is raised if a
    differentiated value reaches it where that would matter (as for :func:`opaque_call`);
    ``reads_only``: the calls it makes are known never to write into their arguments.

    >>> template = ast.parse('f"n = {__adgen_0:.2f}"', mode="eval").body
    >>> prim = as_written(template, "an f-string", ValueError("no"))
    >>> ast.unparse(prim.emit([ast.Name(id="n_2", ctx=ast.Load())], []))
    "f'n = {n_2:.2f}'"
    >>> prim.reads_only, prim.differentiable
    (True, False)
    """

    def emit(args: list[ast.expr], kwargs: list[tuple[str, ast.expr]]) -> ast.expr:
        return _Placeholders(args).visit(copy.deepcopy(template))

    params = [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)]
    prim = Primitive(label, emit, params, {}, {}, differentiable=False)
    prim.view = True  # its result may be (or share memory with) a value it reads
    prim.refusal = refusal
    prim.reads_only = reads_only
    return prim


def raising(template: ast.expr, cause: bool) -> Primitive:
    """The primitive of a ``raise`` statement, copied into the generated code as written (a
    path that raises needs no derivative): ``template`` as for :func:`as_written`, the
    exception raised (with ``cause``: a pair, the exception and its cause, ``raise E from C``).
    The statement binds nothing and is never refused; ``ir.stmt_to_ast`` writes it."""
    prim = as_written(template, "raise", None)  # never refused: no value leaves it
    prim.raise_cause = cause
    return prim


class _Placeholders(ast.NodeTransformer):
    """Write the ``k``-th argument's expression where a template reads ``__adgen_k``."""

    def __init__(self, args: list[ast.expr]) -> None:
        self.args = args

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id.startswith("__adgen_") and isinstance(node.ctx, ast.Load):
            return copy.deepcopy(self.args[int(node.id[len("__adgen_") :])])
        return node


class ObjectMethod:
    """The stand-in for a method of a value the program made with a call adgen runs as
    written (``rng = np.random.default_rng(0)``, then ``rng.normal(size=3)``): which object
    it is is known only when the code runs. Calling the stand-in calls the method of its
    first argument; a call of it is run as written too (:func:`opaque_call`), the object
    being one of its arguments. ``maker`` is the function whose call made the object."""

    def __init__(self, name: str, maker: Any, spread: int | None = None) -> None:
        self.__name__ = name
        self.__qualname__ = name
        self.maker = maker
        # the position of an argument passed as one sequence, spread into the call
        # (``rs.randn(*mean.shape)`` of a shape known only when the code runs)
        self.spread = spread

    def __call__(self, obj: Any, *args: Any, **kwargs: Any) -> Any:
        if self.spread is not None:
            k = self.spread
            args = (*args[:k], *args[k], *args[k + 1 :])
        return getattr(obj, self.__name__)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<method .{self.__name__}() of a value made by {_label(self.maker)}>"

    def reads_only(self, positional: int, keywords: Collection[str]) -> bool:
        """Does a call of it write into nothing the program reads? A random generator's
        (``np.random.default_rng(...)``, ``np.random.RandomState(...)``) changes its own state
        only, but for the methods that shuffle an array in place or are given ``out``
        (``rng.standard_normal(3, np.float64, buf)``: read from the method's signature)."""
        kind = _RANDOM_MAKERS.get(getattr(self.maker, "__name__", ""))
        if kind is None or self.maker is not getattr(np.random, self.maker.__name__, None):
            return False
        method = getattr(getattr(np.random, kind), self.__name__, None)
        return (
            method is not None
            and self.__name__ not in _MUTATORS
            and "out" not in keywords
            and _writes_nothing_positionally(method, positional + 1)  # (+1: self)
        )


# the functions of np.random that make a random generator, and the class of what they make
_RANDOM_MAKERS = {
    "default_rng": "Generator",
    "Generator": "Generator",
    "RandomState": "RandomState",
}


def makes_object(prim: Primitive) -> bool:
    """Is the result of a call of ``prim`` an object whose methods adgen may run as written
    (:class:`ObjectMethod`)? The result of a call run as written (adgen does not know what
    it is), or of a function without derivative that makes a random generator or another
    object of a class (not an array, a list or another container of the program's data)."""
    fn = prim.runs
    if fn is None or prim.differentiable:
        return False
    if prim.refusal is not None:
        return True
    if any(fn is getattr(np.random, name, None) for name in _RANDOM_MAKERS):
        return True
    data = (np.ndarray, list, tuple, dict, set, bytearray, int, float, complex, str)
    return isinstance(fn, type) and not issubclass(fn, data)


def user_call(spelled: str, fn: Any, params: list[str], returns_tuple: bool) -> Primitive:
    """The primitive of a call to the user's own function that is not inlined (recursion):
    forward and reverse mode call its generated derivatives."""
    prim = Primitive(spelled, call_emitter(spelled), _positional(*params), {}, {})
    prim.diff_params = tuple(params)
    prim.user_fn = fn
    prim.returns_tuple = returns_tuple
    return prim


# The registry: id of a function -> (the function, its primitive); array attributes; array
# methods. adgen's rule modules fill them when first needed (adgen.rules.loader).
_REGISTRY: dict[Hashable, tuple[Any, Primitive]] = {}
_ATTRIBUTES: dict[str, Primitive] = {}
_METHODS: dict[str, tuple[Any, bool]] = {}
# where each function comes in registered(): (rank of the rule module registering it, count);
# adgen's rules first, as if all their modules had been imported before anything else
_ORDER: dict[Hashable, tuple[int, int]] = {}
_COUNT = itertools.count()
# the writes into these tables made by adgen's rule modules, in order: (module, table, key,
# value). registrations() makes again those made inside its block (the module stays imported)
_BUILTIN: list[tuple[str, dict[Any, Any], Any, Any]] = []


def lookup(fn: Any) -> Primitive | None:
    """The primitive registered for a Python object (by identity; a method of an object such
    as ``scipy.stats.norm.logpdf`` by the object and the method's name), or None."""
    entry = _REGISTRY.get(loader.identity(fn))
    if entry is not None and loader.same(entry[0], fn):
        return entry[1]
    if loader.require(fn):  # its rule module was not imported yet
        return lookup(fn)
    counterpart = numpy_counterpart(fn)  # xp.asin of an array-API namespace: np.arcsin's rule
    if counterpart is None:  # array_api_compat.numpy.std: np.std's rule
        counterpart = compat_counterpart(fn)
    if counterpart is not None:
        return lookup(counterpart)
    return None


# functions that write into their first argument (``np.fill_diagonal(a, v)``): lowered as
# the write ``a[positions(a, ...)] = v``, where ``positions`` is a helper with no derivative.
# Their names are known before any rule module is imported: lowering asks, of the syntax
# alone, which names a function writes into (a call so named counts, whatever it is; ``at``:
# a ufunc's ``np.add.at(a, i, b)``, and the methods ``a.fill(v)``, ``a.sort()``)
IN_PLACE_NAMES = frozenset({"fill_diagonal", "copyto", "put", "put_along_axis", "putmask", "at"})
# the methods, and the function giving the new value (None: the argument, ``a.fill(v)``)
IN_PLACE_METHODS: dict[str, Any] = {"fill": None, "sort": np.sort}


@dataclass(frozen=True)
class Writer:
    """How a call ``fn(a, ...)`` made as a statement writes into ``a``: its parameters in
    order (the first is ``a``); ``value`` names the one written; ``index`` the ones passed
    to ``positions`` after ``a``; ``fixed`` the ones that must be left at (or given as)
    their value; ``ignored`` the ones that do not change what is written. ``positions``
    None: the write is into all of ``a`` (``np.copyto``). ``through``, where
    the write is not an assignment at positions (``np.putmask`` repeats its values): a
    helper with a rule giving ``a``'s new value, ``through(a, *index, value)``, written into
    all of ``a``."""

    fn: Any
    positions: Any
    params: tuple[str, ...]
    value: str
    index: tuple[str, ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()
    ignored: tuple[str, ...] = ()
    through: Any = None


_WRITERS: dict[Hashable, Writer] = {}
# ufunc -> a helper ``helper(a, index, b)`` with a rule: ``a`` with ``ufunc.at(a, index, b)``
# applied, as a new array (``np.add.at``: repeated positions add up)
_AT_WRITERS: dict[Any, Any] = {}


def writes_into(
    fn: Any,
    positions: Any,
    params: tuple[str, ...] = ("a", "v"),
    value: str = "v",
    index: tuple[str, ...] = (),
    fixed: dict[str, Any] | None = None,
    ignored: tuple[str, ...] = (),
    through: Any = None,
) -> None:
    """Declare that ``fn(a, ...)``, called as a statement, writes its argument ``value`` into
    ``a`` at the positions ``positions(a, *index)`` returns (a helper registered without a
    derivative), or as ``through`` says; see :class:`Writer`."""
    if fn.__name__ not in IN_PLACE_NAMES:
        raise RuleError(f"{fn.__name__}: add its name to registry.IN_PLACE_NAMES too")
    fixed_items = tuple((fixed or {}).items())
    _WRITERS[loader.identity(fn)] = Writer(
        fn, positions, params, value, index, fixed_items, ignored, through
    )


def accumulates_at(ufunc: Any, helper: Any) -> None:
    """Declare that ``ufunc.at(a, index, b)`` as a statement is the write
    ``a[...] = helper(a, index, b)``."""
    _AT_WRITERS[ufunc] = helper


def in_place_writer(fn: Any) -> Writer | None:
    """How a function declared with :func:`writes_into` writes, else None."""
    entry = _WRITERS.get(loader.identity(fn))
    if entry is None and loader.require(fn):
        entry = _WRITERS.get(loader.identity(fn))
    return entry if entry is not None and loader.same(entry.fn, fn) else None


# functions joining a sequence of arrays, each item of which NumPy makes an array first (a
# nested list ``[x[-1], 0.0]`` among them is one array; np.block's nesting means more)
_JOINS = tuple(
    getattr(np, name)
    for name in ("concatenate", "stack", "vstack", "hstack", "dstack", "column_stack")
    if hasattr(np, name)
)


def rows_as_arrays(fn: Any) -> bool:
    """Does ``fn`` make each nested list of its first argument an array (``np.array``, and
    NumPy's functions joining a sequence of arrays: ``np.concatenate``, ``np.stack``...)?"""
    return fn is np.array or any(fn is j for j in _JOINS)


def at_writer(ufunc: Any) -> Any | None:
    """The helper of ``ufunc.at`` (``np.add``: ``np.add.at``) declared with
    :func:`accumulates_at`, else None."""
    if not isinstance(ufunc, np.ufunc):
        return None
    if ufunc not in _AT_WRITERS:
        loader.load_all()  # (the rule modules declare them)
    return _AT_WRITERS.get(ufunc)


def method_rules(obj: Any) -> list[str]:
    """How generated code spells the methods of ``obj`` that have rules (``scipy.stats.norm``:
    ``scipy.stats.norm.logpdf``...): for a refusal of a call of ``obj`` itself (a frozen
    distribution, ``norm(mu, s).logpdf(x)``) to say what to write instead. Only the
    registry and the index are read, never another attribute of ``obj``."""
    plain = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, np.ufunc)
    if isinstance(obj, plain) or isinstance(obj, types.MethodType):
        return []
    names = set(loader.methods_of(obj))
    names |= {
        key[1]
        for key, (fn, _) in list(_REGISTRY.items())
        if isinstance(key, tuple) and getattr(fn, "__self__", None) is obj
    }
    out = []
    for name in sorted(names):
        found = spelled(getattr(obj, name, None))
        if found is not None and lookup(getattr(obj, name)) is not None:
            out.append(found)
    return out


def spelled(fn: Any) -> str | None:
    """How generated code names ``fn`` (``scipy.stats.expon.logpdf``), or None if it cannot."""
    try:
        return spelling(fn)
    except (ValueError, TypeError):
        return None


def frozen_refusal(obj: Any, method: str | None = None) -> tuple[str, str] | None:
    """What to say of a call of ``obj`` whose methods have rules (``norm(mu, s)``, a frozen
    distribution) where its result reaches a derivative: (message, hint); None for another.
    ``method``: the one the program calls on the result (``logpdf``), if known."""
    spelled = method_rules(obj)
    if not spelled:
        return None
    owner = spelled[0].rsplit(".", 1)[0]
    names = [s.rsplit(".", 1)[1] for s in spelled]
    chosen = method if method in names else ("logpdf" if "logpdf" in names else names[0])
    return (
        f"adgen does not differentiate `{owner}(...)` (a frozen distribution): it has rules for "
        f"the methods of `{owner}` called with the parameters ({', '.join(spelled)})",
        f"write `{owner}.{chosen}(x, *parameters)` instead of "
        f"`{owner.rsplit('.', 1)[-1]}(*parameters).{chosen}(x)`",
    )


# Methods of library objects whose calls adgen lowers to a helper with a rule, given the
# object first: the class's function -> the helper (``BaseLoss.loss`` of scikit-learn ->
# ``rt.pointwise_loss``); filled by the rule modules of :data:`_HELPER_MODULES`.
METHOD_HELPERS: dict[Any, Any] = {}
# Methods of library objects returning a callable made for parameters the program passes
# (``kernel.clone_with_theta(theta)``): the class's function -> the helpers its calls are
# lowered to, ``(value, gradient)`` (``rt.kernel_matrix(kernel, theta, X)`` and the
# gradient the object gives w.r.t. the parameters); filled by the same rule modules.
PARAMETRISED_CALLABLES: dict[Any, tuple[Any, Any]] = {}
# the modules defining such classes -> the rule module that registers their helpers
_HELPER_MODULES = {
    "sklearn._loss.loss": "losses",
    "sklearn.gaussian_process.kernels": "kernels",
    "scipy.stats._kde": "stats",
}
# ... of those, the ones whose objects made inside of constants are made when transforming
_MADE_NOW = ("sklearn._loss.loss",)


def helper_object(obj: Any) -> bool:
    """Is ``obj`` an object whose methods adgen lowers to helpers taking it first (a
    scikit-learn loss): in generated code, a constant the helpers are given."""
    return not isinstance(obj, type) and any(
        c.__module__ in _HELPER_MODULES for c in type(obj).__mro__
    )


def read_as_python(fn: Any) -> Any:
    """The Python function behind ``fn``, for NumPy's functions adgen reads as the Python
    they are (no rule: their derivative is that of the calls they make) -- those that take a
    function, which a rule cannot (``np.apply_over_axes(np.median, a, 0)``); ``fn`` itself
    for any other.

    >>> type(read_as_python(np.apply_over_axes)).__name__, read_as_python(np.sum) is np.sum
    ('function', True)
    """
    for dispatcher, function in _READ_AS_PYTHON:
        if fn is dispatcher:
            return function
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, np.ufunc):  # np.add.reduce, np.subtract.outer
        return python_forms.UFUNC_METHODS.get((owner, getattr(fn, "__name__", "")), fn)
    return fn


def read_as_python_names() -> list[str]:
    """The names of the functions :func:`read_as_python` reads as Python (for the docs).

    >>> read_as_python_names()[:3]
    ['np.apply_over_axes', 'np.broadcast_arrays', 'np.meshgrid']
    >>> read_as_python_names()[3:5]
    ['np.add.reduce', 'np.multiply.reduce']
    """
    names = [f"np.{dispatcher.__name__}" for dispatcher, _ in _READ_AS_PYTHON]
    return names + [f"np.{u.__name__}.{m}" for u, m in python_forms.UFUNC_METHODS]


def reads_as_python(fn: Any) -> bool:
    """Is ``fn`` the Python function :func:`read_as_python` gives for one of NumPy's (read
    as the user's own, functions passed to it passed as themselves)?"""
    return (
        any(fn is function for _, function in _READ_AS_PYTHON)
        or any(fn is function for function in python_forms.UFUNC_METHODS.values())
        or reads_for_options(fn)
    )


# NumPy's functions that take a function and are written in Python, with that Python
# function (array_function_dispatch keeps it as __wrapped__)
_READ_AS_PYTHON: list[tuple[Any, Any]] = [
    (f, f.__wrapped__) for f in [np.apply_over_axes] if hasattr(f, "__wrapped__")
]
# ... and those whose number of results is the number of arrays given, as adgen writes them
_READ_AS_PYTHON += [
    (np.broadcast_arrays, python_forms.broadcast_arrays),
    (np.meshgrid, python_forms.meshgrid),
]


# library functions read as Python where a call passes an option their rule does not take:
# (module, name) -> (the option, its position, the rule module, the Python form's name)
_OPTION_FORMS = {
    ("scipy.signal._signaltools", "lfilter"): ("zi", 4, "signal", "lfilter_with_state"),
}


def read_for_options(fn: Any, positional: int, keywords: Collection[str | None]) -> Any:
    """The Python adgen reads a call of ``fn`` as, where the call (``positional``
    arguments, ``keywords`` by name) passes an option ``fn``'s rule does not take: its form
    written with calls that have rules (``scipy.signal.lfilter(b, a, x, zi=zi)``, with the
    initial state: the filter without it and the state's own response); ``fn`` otherwise.

    >>> read_for_options(np.sum, 1, ["axis"]) is np.sum
    True
    """
    key = (str(getattr(fn, "__module__", "")), str(getattr(fn, "__name__", "")))
    found = _OPTION_FORMS.get(key)
    if found is None:
        return fn
    option, position, module, name = found
    if option not in keywords and positional <= position:
        return fn
    return getattr(importlib.import_module(f"adgen.rules.{module}"), name)


def reads_for_options(fn: Any) -> bool:
    """Is ``fn`` a form :func:`read_for_options` gives (read as the user's own)?"""
    return getattr(fn, "adgen_option_form", False) is True


def helper_class(cls: type) -> bool:
    """Are ``cls``'s instances objects of :func:`helper_object` that adgen makes when
    transforming where the function makes one of constants (a scikit-learn loss)?"""
    return any(c.__module__ in _MADE_NOW for c in cls.__mro__)


def parametrised_callable(method: Any) -> tuple[Any, Any] | None:
    """For a method of an object made outside that returns a callable made for parameters
    (``k.clone_with_theta(theta)`` of a scikit-learn kernel): the helpers of its calls,
    ``(value, gradient)``; None for any other.

    >>> parametrised_callable(len) is None
    True
    """
    if _helper_module(method) is None:
        return None
    return PARAMETRISED_CALLABLES.get(method.__func__)


def _helper_module(method: Any) -> str | None:
    """The rule module of helpers for ``method``'s object (imported now), or None."""
    obj, func = getattr(method, "__self__", None), getattr(method, "__func__", None)
    if obj is None or func is None or isinstance(obj, (type, types.ModuleType)):
        return None
    for cls in type(obj).__mro__:
        module = _HELPER_MODULES.get(cls.__module__)
        if module is not None:
            loader.load(module)
            return module
    return None


def method_helper(method: Any) -> Any:
    """For a method of an object made outside the function that adgen lowers to a helper
    taking the object first (a scikit-learn loss's ``loss.loss(y_true, raw_prediction)`` is
    ``rt.pointwise_loss(loss, y_true, raw_prediction)``): that helper; None for any other.

    >>> method_helper(len) is None
    True
    """
    if _helper_module(method) is None:
        return None
    return METHOD_HELPERS.get(method.__func__)


def unfrozen(method: Any) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
    """For a method of a frozen distribution made outside the function (``prior =
    scipy.stats.norm(0.0, 2.0)``, then ``prior.logpdf(w)``): the method of the distribution
    itself that has a rule, and the parameters the frozen object holds (constants, passed
    after the program's arguments: ``scipy.stats.norm.logpdf(w, 0.0, 2.0)``); None for any
    other method.

    >>> unfrozen(len) is None
    True
    """
    obj = getattr(method, "__self__", None)
    name = getattr(method, "__name__", None)
    kind = type(obj).__name__
    stats = sys.modules.get("scipy.stats")
    if obj is None or stats is None or not isinstance(name, str) or not kind.endswith("_frozen"):
        return None
    if kind in ("rv_continuous_frozen", "rv_discrete_frozen"):
        dist = getattr(stats, getattr(obj.dist, "name", ""), None)
        if dist is None or type(dist) is not type(obj.dist):
            return None
        args, kwds = tuple(obj.args), dict(obj.kwds)
    elif kind == "multivariate_normal_frozen" and not getattr(obj, "allow_singular", True):
        dist, args, kwds = stats.multivariate_normal, (obj.mean, obj.cov), {}
    elif kind == "dirichlet_frozen":
        dist, args, kwds = stats.dirichlet, (obj.alpha,), {}
    else:
        return None
    target = getattr(dist, name, None)
    if target is None or lookup(target) is None:
        return None
    return target, args, kwds


def lookup_attribute(name: str) -> Primitive | None:
    """The primitive for reading an attribute of an array value (``x.T``, ``x.shape``)."""
    prim = _ATTRIBUTES.get(name)
    if prim is None and loader.require_attribute(name):
        prim = _ATTRIBUTES.get(name)
    return prim


def method_function(name: str) -> tuple[Any, bool] | None:
    """``(function, pack)`` for an array method (``x.sum(...)`` -> ``np.sum(x, ...)``), or None."""
    hit = _METHODS.get(name)
    if hit is None and loader.require_method(name):
        hit = _METHODS.get(name)
    return hit


def registered() -> list[tuple[Any, Primitive]]:
    """Every registered function and its primitive: adgen's (all its rule modules imported
    first), in the order of their modules, then the others in the order registered."""
    loader.load_all()
    last = (loader.rank(None) + 1, 0)
    keys = sorted(_REGISTRY, key=lambda key: _ORDER.get(key, last))
    return [_REGISTRY[key] for key in keys]


def builtin_writes() -> list[tuple[str, dict[Any, Any], Any, Any]]:
    """``(rule module, table, key, value)`` for each write into the registry's tables made
    by adgen's rule modules so far, in order (what :mod:`adgen.rules.index` is made from)."""
    return list(_BUILTIN)


def _put(table: dict[Any, Any], key: Any, value: Any, module: str | None) -> None:
    """Write one entry of the registry; ``module``: the rule module of adgen making it (None:
    the user's, or adgen's outside its rule modules)."""
    writes = [(table, key, value)]
    if table is _REGISTRY and key not in _REGISTRY:
        writes.append((_ORDER, key, (loader.rank(module), next(_COUNT))))
    for into, k, v in writes:
        into[k] = v
        if module is not None:
            _BUILTIN.append((module, into, k, v))


def _caller_module() -> str | None:
    """The rule module of adgen making the registration call being run (None: another)."""
    return loader.rule_module(sys._getframe(2).f_globals.get("__name__", ""))


def _module_of_rule(rule_fn: Any) -> str | None:
    """The rule module of adgen that defines ``rule_fn`` (None: another)."""
    return loader.rule_module(getattr(rule_fn, "__module__", None) or "")


def call_emitter(spelled: str) -> Callable[[list[ast.expr], list[tuple[str, ast.expr]]], ast.expr]:
    ast.parse(spelled, mode="eval")  # a spelling that is no expression fails here

    def emit(args: list[ast.expr], kwargs: list[tuple[str, ast.expr]]) -> ast.expr:
        return ast.Call(
            func=dotted(spelled),
            args=args,
            keywords=[ast.keyword(arg=k, value=v) for k, v in kwargs],
        )

    return emit


_BINOPS: dict[Any, type[ast.operator]] = {
    operator.add: ast.Add,
    operator.sub: ast.Sub,
    operator.mul: ast.Mult,
    operator.truediv: ast.Div,
    operator.floordiv: ast.FloorDiv,
    operator.mod: ast.Mod,
    operator.pow: ast.Pow,
    operator.matmul: ast.MatMult,
    # of masks and integers: no derivative (rules/nondiff.py)
    operator.or_: ast.BitOr,
    operator.and_: ast.BitAnd,
    operator.xor: ast.BitXor,
}
_UNARYOPS: dict[Any, type[ast.unaryop]] = {
    operator.neg: ast.USub,
    operator.pos: ast.UAdd,
    operator.not_: ast.Not,
    operator.invert: ast.Invert,
}
_COMPARES: dict[Any, type[ast.cmpop]] = {
    operator.lt: ast.Lt,
    operator.le: ast.LtE,
    operator.gt: ast.Gt,
    operator.ge: ast.GtE,
    operator.eq: ast.Eq,
    operator.ne: ast.NotEq,
    operator.is_: ast.Is,
    operator.is_not: ast.IsNot,
}


def contained(x: Any, y: Any) -> bool:
    """``x in y`` (the operator module's ``contains`` takes them the other way round)."""
    return x in y


def not_contained(x: Any, y: Any) -> bool:
    """``x not in y``."""
    return x not in y


_COMPARES[contained] = ast.In
_COMPARES[not_contained] = ast.NotIn

# By operator class name (``"Add"``), which gast and ast share.
BINOP_FUNCTIONS = {op.__name__: fn for fn, op in _BINOPS.items()}
UNARYOP_FUNCTIONS = {op.__name__: fn for fn, op in _UNARYOPS.items()}
COMPARE_FUNCTIONS = {op.__name__: fn for fn, op in _COMPARES.items()}


def assign(x: Any) -> Any:
    """The identity: the primitive of ``y = x`` when ``y`` must be a real copy (a name rebound
    inside if/for/while blocks cannot simply alias another)."""
    return x


def square_product(x: Any) -> Any:
    """``x * x``, written so: the primitive the optimizer gives a product of a value with
    itself (same primal, a derivative with one product fewer)."""
    return x * x


def syntax_emitter(
    fn: Any,
) -> Callable[[list[ast.expr], list[tuple[str, ast.expr]]], ast.expr] | None:
    """Emitters for functions that Python writes as operators (``+``, ``-x``, ``<``, ``x[i]``)."""
    if fn in _BINOPS:
        op = _BINOPS[fn]
        return lambda a, k: ast.BinOp(left=a[0], op=op(), right=a[1])
    if fn in _UNARYOPS:
        uop = _UNARYOPS[fn]
        return lambda a, k: ast.UnaryOp(op=uop(), operand=a[0])
    if fn in _COMPARES:
        cop = _COMPARES[fn]
        return lambda a, k: ast.Compare(left=a[0], ops=[cop()], comparators=[a[1]])
    if fn is assign:
        return lambda a, k: a[0]
    if fn is square_product:
        return lambda a, k: ast.BinOp(left=a[0], op=ast.Mult(), right=a[0])
    if fn is operator.getitem:
        return lambda a, k: ast.Subscript(value=a[0], slice=a[1], ctx=ast.Load())
    return None


def _parse_rule(
    fn: Callable[..., Any],
    fdef: ast.FunctionDef | None = None,
    sequence: str | None = None,
    outside: dict[str, Any] | None = None,
    batched: dict[str, Template] | None = None,
) -> tuple[list[inspect.Parameter], bool, dict[str, Template], dict[str, Template]]:
    """Read a rule function's templates.

    ``bjvp_<p>`` templates (optional) are the forward ones for a tangent with a leading batch
    axis (``da.shape == (k, *a.shape)``, the result's tangent ``(k, *ans.shape)``): they go
    into ``batched`` (see :mod:`adgen.modes.batched`).

    For a user's rule, ``outside`` is a dict: names the templates use beyond their
    parameters, locals, ``np``, ``math`` and ``rt`` are then resolved in the rule's module
    (closure cells, globals, builtins) when it is registered and recorded there; and a rule
    may define one mode only (the other is refused when asked for). adgen's own rules may
    use only ``np``, ``math`` and ``rt`` and must define both modes.
    """
    if fdef is None:
        parsed = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
        assert isinstance(parsed, ast.FunctionDef)
        fdef = parsed
    params = list(inspect.signature(fn).parameters.values())
    has_ans = bool(params) and params[0].name == "ans"
    if has_ans:
        params = params[1:]
    names = {p.name for p in params}
    jvp: dict[str, Template] = {}
    vjp: dict[str, Template] = {}
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    first = fn.__code__.co_firstlineno
    where = f"{filename}:{first} ({fn.__name__})"

    def fail(message: str, node: ast.AST | None = None, hint: str = "") -> RuleError:
        line = first + getattr(node, "lineno", 1) - 1
        col = getattr(node, "col_offset", 0)
        text = linecache.getline(filename, line)
        if text:  # the column is relative to the dedented source
            col += len(text) - len(text.lstrip())
        loc = SourceLocation(filename, line, col, text)
        return RuleError(f"rule {fn.__name__}: {message}", loc, hint)

    resolve = _resolver(fn)
    transposes: list[ast.Assign] = []
    for node in fdef.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # docstring
        if _self_adjoint(node):  # vjp_x = jvp_x: the derivative in x is its own transpose
            assert isinstance(node, ast.Assign)
            transposes.append(node)
            continue
        if not isinstance(node, ast.FunctionDef):
            raise fail(
                "a rule's body holds only jvp/vjp template functions (and `vjp_<p> = "
                "jvp_<p>` for a derivative that is its own transpose)",
                node,
            )
        kind, _, param = node.name.partition("_")
        if kind not in ("jvp", "vjp", "bjvp"):
            raise fail(
                f"unexpected template {node.name!r}", node, "name it jvp_<param>/vjp_<param>"
            )
        if not param:
            if not params:
                raise fail(f"template {node.name!r}, but the rule has no parameter", node)
            param = params[0].name
        if param not in names:
            raise fail(f"template {node.name!r} names no parameter", node)
        nargs = 2 if (sequence == param and kind == "vjp") else 1
        if len(node.args.args) != nargs or not isinstance(node.body[-1], ast.Return):
            raise fail(f"template {node.name!r} takes {nargs} argument(s) and ends in return", node)
        arg = node.args.args[0].arg
        extra = tuple(a.arg for a in node.args.args[1:])
        stored = _stored_names(node.body)
        loaded = [
            n for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        ]
        if any(n.id == "scipy" for n in loaded):
            add_optional(import_scipy=True)  # (templates may name it when it is installed)
        allowed = names | stored | {arg, *extra} | set(TEMPLATE_GLOBALS)
        for n in loaded:
            if n.id == "ans" and not has_ans:
                raise fail(
                    f"template {node.name!r} uses `ans`",
                    n,
                    "make `ans` the rule's first parameter to receive the primal result",
                )
            if n.id in allowed or n.id == "ans":
                continue
            found, value = resolve(n.id) if outside is not None else (False, None)
            if not found:
                hint = (
                    "define or import it in the rule's module before the rule"
                    if outside is not None
                    else "adgen's own templates use only np, math and rt"
                )
                raise fail(f"template {node.name!r} uses the unknown name `{n.id}`", n, hint)
            assert outside is not None
            outside[n.id] = value
        free = frozenset(n.id for n in loaded)
        template = Template(arg, node.body, free, f"{where} {node.name}", extra)
        if kind == "bjvp":
            if batched is not None:
                batched[param] = template
            continue
        (jvp if kind == "jvp" else vjp)[param] = template
    for node in transposes:
        source = node.value.id  # type: ignore[attr-defined]
        param = source.partition("_")[2] or (params[0].name if params else "")
        if node.targets[0].id.partition("_")[0] == "bjvp":  # type: ignore[attr-defined]
            if param not in jvp:
                raise fail(f"`{ast.unparse(node)}` needs {source} defined before it", node)
            if batched is not None:
                batched[param] = jvp[param]
            continue
        if param not in jvp or param in vjp:
            raise fail(f"`{ast.unparse(node)}` needs {source} defined before it, alone", node)
        vjp[param] = jvp[param]  # (a template names its argument: it serves either mode)
    if set(jvp) != set(vjp):
        if outside is None:
            raise fail("every differentiable parameter needs both jvp and vjp")
        for have, lack, mode in ((jvp, vjp, "reverse"), (vjp, jvp, "forward")):
            for param in set(have) - set(lack):
                kind = "vjp" if mode == "reverse" else "jvp"
                lack[param] = Template(
                    "g",
                    [ast.Return(value=ast.Constant(value=None))],
                    frozenset(),
                    f"{where} {kind}_{param}",
                    refusal=(
                        f"its rule {fn.__name__} ({place(filename, first)}) has no {mode}-mode "
                        f"template for `{param}`: add `{kind}_{param}` to it"
                    ),
                )
    return params, has_ans, jvp, vjp


def _self_adjoint(node: ast.stmt) -> bool:
    """Is ``node`` ``vjp_<p> = jvp_<p>`` (the same parameter on both sides), or
    ``bjvp_<p> = jvp_<p>`` (a template that serves a batch of tangents as it is)?"""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Name)
    ):
        return False
    kind, _, param = node.targets[0].id.partition("_")
    return kind in ("vjp", "bjvp") and node.value.id == ("jvp_" + param if param else "jvp")


def _resolver(fn: Callable[..., Any]) -> Callable[[str], tuple[bool, Any]]:
    """Look a name up as the rule function's body would: closure cells, globals, builtins."""
    import builtins

    code = getattr(fn, "__code__", None)
    cells = dict(zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or ()))
    module_globals = getattr(fn, "__globals__", {})

    def resolve(name: str) -> tuple[bool, Any]:
        if name in cells:
            try:
                return True, cells[name].cell_contents
            except ValueError:  # an empty cell: assigned after the rule
                return False, None
        if name in module_globals:
            return True, module_globals[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        return False, None

    return resolve


def _is_user_rule(rule_fn: Any) -> bool:
    """A rule written outside adgen (its templates may name the module's helpers)."""
    module = getattr(rule_fn, "__module__", None) or ""
    return not (module == "adgen" or module.startswith("adgen."))


def rule(
    *fns: Any,
    elementwise: bool = False,
    name: str | None = None,
    view: bool = False,
    outputs: int | Callable[[dict[str, Any]], int] | None = None,
    examples: Iterable[Example] = (),
    domain: Domain | tuple[Domain, ...] | None = None,
    lists: bool = False,
    result_list: bool = False,
    singular: bool = False,
    complex: bool = False,
    counted_for: Callable[[dict[str, Any]], tuple[str, int, str, str] | None] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register forward and reverse templates for one or more functions (same semantics).

    ``elementwise=True`` marks a broadcasting elementwise operation: adgen then
    reduces each cotangent to its input's shape and broadcasts each tangent to
    the result's shape where broadcasting can happen. ``view=True`` marks a
    function whose result may share memory with its argument (slicing,
    reshaping), so adgen refuses in-place updates of that result.

    ``outputs`` declares a function with several results (``sign, logdet =
    np.linalg.slogdet(a)``): their number, or a function of the call's constant
    arguments giving it. Its ``jvp`` templates then return a tuple of tangents (one
    per result) and ``ans`` and its ``vjp`` templates' argument are tuples. A count of 1
    means the function returns that result itself (``np.linalg.svd(a,
    compute_uv=False)``), unless ``result_list=True`` says that it returns a list of its
    results whatever their number (``np.split(x, 1)`` is a list of one array).
    ``counted_for`` says what that count takes for granted of an argument whose shape is
    not known when the code is written: given the constant arguments, ``(parameter,
    number of axes, what, hint)`` or None. adgen checks it -- when the call's shapes are
    known, before the code runs; else when it runs -- and refuses with ``what`` and
    ``hint`` (``np.gradient(f)`` without ``axis=`` counts one result: ``f`` must be 1-d).

    ``examples`` (see :mod:`adgen.rules.samples`) are the calls the test suite checks
    the rule on, with inputs drawn from ``domain``; an elementwise rule of one or two
    arguments is also checked over scalar, vector, matrix and broadcasting shapes.

    For a user's own function (``adgen.rule`` is this decorator), the rule's parameters
    must be the function's; generated code calls the function by name, its templates may
    use the helpers of the rule's module, and one mode may be left out (it is then refused
    where the function is called). Registering again replaces the rule.

    ``lists=True`` marks a function whose result (the first, for several) is a Python list
    of derivatives (adgen's own ``rt.accumulate``): several tangent contributions are then
    summed item by item, and adjoints of the result accumulate item by item.

    ``singular=True`` marks a function whose partial derivatives can be infinite or NaN
    where its value is finite (``np.sqrt`` at 0, ``np.arctan2`` at (0, 0)): each template's
    result ``e`` is then emitted as ``rt.zero_safe(e, seed)`` (``seed`` the template's
    argument), so that a zero tangent or cotangent entry contributes exactly zero there
    instead of ``0 * inf = nan`` (see :func:`singular_templates`).

    ``complex=True`` says the templates are right for complex values too, under adgen's
    convention (JAX's: a cotangent is the transpose of the tangent map for the pairing
    ``<a, b> = Re(sum(a * b))``; see docs/rules.md). A holomorphic function's real
    templates are (``g * f'(x)``, no conjugate); a function that is not holomorphic
    (``np.abs``, ``np.conj``) needs templates written for it. Without it, a complex value
    meeting a differentiated one in a call to the function is refused
    (:mod:`adgen.modes.complexvalues`); with it, the registry's tests check the rule on
    complex arguments too.
    """

    @entry_point
    def register(rule_fn: Callable[..., Any]) -> Callable[..., Any]:
        _register_parsed(
            fns,
            rule_fn,
            None,
            elementwise=elementwise,
            name=name,
            view=view,
            outputs=outputs,
            examples=tuple(examples),
            domain=domain,
            lists=lists,
            result_list=result_list,
            singular=singular,
            complex=complex,
            counted_for=counted_for,
        )
        return rule_fn

    return register


def _register_parsed(
    fns: tuple[Any, ...],
    rule_fn: Callable[..., Any],
    fdef: ast.FunctionDef | None,
    *,
    elementwise: bool,
    name: str | None,
    view: bool = False,
    outputs: int | Callable[[dict[str, Any]], int] | None = None,
    examples: tuple[Example, ...] = (),
    domain: Domain | tuple[Domain, ...] | None = None,
    lists: bool = False,
    result_list: bool = False,
    singular: bool = False,
    complex: bool = False,
    counted_for: Callable[[dict[str, Any]], tuple[str, int, str, str] | None] | None = None,
) -> None:
    outside: dict[str, Any] | None = {} if _is_user_rule(rule_fn) else None
    batched: dict[str, Template] = {}
    params, _, jvp, vjp = _parse_rule(rule_fn, fdef, outside=outside, batched=batched)
    if singular:
        jvp, vjp = singular_templates(jvp), singular_templates(vjp)
    for fn in fns:
        emitter, callee = _emitter(fn)
        if callee is not None:
            _check_signature(fn, rule_fn, params)
        label = name or _label(fn)
        # a user's function may return (a view of) its argument: no in-place writes into it
        user_view = view or callee is not None
        prim = Primitive(label, emitter, params, jvp, vjp, elementwise=elementwise, view=user_view)
        prim.outputs = outputs
        prim.counted_for = counted_for
        prim.result_list = result_list
        prim.examples = examples
        prim.domain = domain
        prim.lists = lists
        prim.complex = complex
        prim.batched = batched
        prim.callee = callee
        prim.helpers = dict(outside or {})
        _store(fn, prim, _module_of_rule(rule_fn))


def _check_signature(fn: Any, rule_fn: Any, params: list[inspect.Parameter]) -> None:
    """A rule for the user's own function takes the function's parameters (same names, same
    defaults): calls are matched to the rule's parameters, then run with the function's."""
    try:
        own = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return
    same = [p.name for p in own] == [p.name for p in params] and all(
        a.default is b.default or _same_default(a.default, b.default)
        for a, b in zip(own, params, strict=True)
    )
    if not same:
        code = rule_fn.__code__
        where = SourceLocation(
            code.co_filename,
            code.co_firstlineno,
            0,
            linecache.getline(code.co_filename, code.co_firstlineno),
        )
        wanted = ", ".join(str(p) for p in own)
        raise RuleError(
            f"rule {rule_fn.__name__} for {_label(fn)}: its parameters "
            f"({', '.join(str(p) for p in params)}) differ from the function's ({wanted})",
            where,
            f"write it as def {rule_fn.__name__}({wanted}) (optionally with `ans` first)",
        )


def _same_default(a: Any, b: Any) -> bool:
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:
        return False


def unary(
    *fns: Any,
    domain: Domain | None = None,
    examples: Iterable[Example] = (),
    singular: bool = False,
    complex: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register an elementwise function of one argument by its derivative.

    The rule's body returns the derivative ``f'(x)`` (it may use ``ans``, the
    value ``f(x)``); the tangent is then ``dx * f'(x)`` and the cotangent
    ``g * f'(x)`` (``singular=True``: ``rt.zero_safe(dx * f'(x), dx)``, as for
    :func:`rule`). ``domain`` is where the tests draw its argument from:

    >>> import numpy as np
    >>> ast.unparse(lookup(np.tanh).jvp["x"].expand(
    ...     {"x": ast.Name("u"), "ans": ast.Name("v")}, "u_dot", str)[1])
    'u_dot * (1.0 - v * v)'
    """

    def register(rule_fn: Callable[..., Any]) -> Callable[..., Any]:
        source = textwrap.dedent(inspect.getsource(rule_fn))
        fdef = ast.parse(source).body[0]
        assert isinstance(fdef, ast.FunctionDef)
        body = [
            s
            for s in fdef.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        ]
        *pre, last = body
        assert isinstance(last, ast.Return) and last.value is not None
        params = list(inspect.signature(rule_fn).parameters.values())
        if params and params[0].name == "ans":
            params = params[1:]
        (param,) = params
        templates = {}
        for kind, arg in (("jvp", "d"), ("vjp", "g")):
            seed = ast.Name(id=f"{arg}_seed", ctx=ast.Load())
            product = _times(seed, copy.deepcopy(last.value))
            inner = ast.FunctionDef(
                name=f"{kind}_{param.name}",
                args=ast.arguments(
                    posonlyargs=[],
                    args=[ast.arg(arg=f"{arg}_seed")],
                    kwonlyargs=[],
                    kw_defaults=[],
                    defaults=[],
                ),
                body=[*copy.deepcopy(pre), ast.Return(value=product)],
                decorator_list=[],
            )
            templates[kind] = inner
        fdef.body = [templates["jvp"], templates["vjp"]]
        fdef.decorator_list = []
        ast.fix_missing_locations(fdef)
        _register_parsed(
            fns,
            rule_fn,
            fdef,
            elementwise=True,
            name=None,
            examples=tuple(examples),
            domain=domain,
            singular=singular,
            complex=complex,
        )
        return rule_fn

    return register


# How :func:`partials` turns a partial derivative ``PARTIAL`` (of the function, or of its log)
# into the factor its tangents and cotangents are multiplied by, for each kind of function.
_SUPPORT = {
    # a log-density or log-mass: -inf outside its support (nan for invalid parameters),
    # where the partials are nan, never finite numbers
    "log": "np.where(ans > -np.inf, PARTIAL, np.nan)",
    # the density itself, the partials being those of its log: ans * PARTIAL, 0 outside the
    # support (where the density is 0 on an open set), nan where the value is nan
    "density": "np.where(ans > 0.0, ans * PARTIAL, 0.0 * ans)",
    # any other function: nan where its value is nan
    "value": "np.where(np.isnan(ans), np.nan, PARTIAL)",
}


def partials(
    *fns: Any,
    kind: str = "value",
    domain: Domain | tuple[Domain, ...] | None = None,
    examples: Iterable[Example] = (),
    rewrite: Callable[[ast.FunctionDef], ast.FunctionDef] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register an elementwise (broadcasting) function of several arguments by its partial
    derivatives, as :func:`unary` does for one: the rule's body computes what they share
    and ends in ``return {"x": dx, "loc": dloc, ...}``, one partial for each parameter
    that is differentiated (the others, e.g. a count, are refused where a differentiated
    value reaches them). ``kind`` says what the function is, and so what its derivative is
    where it has none (see ``_SUPPORT``): ``"log"`` for a log-density whose value is -inf
    outside its support (the derivative is nan there), ``"density"`` for a density whose
    partials are given for its log (the derivative is ``ans`` times them, 0 where the
    density is 0), ``"value"`` for any other (nan where the value is nan). The rule takes
    ``ans`` first, the function's value (:mod:`adgen.rules.stats` has examples).

    Such functions have points where they are finite and a partial is not (a density at the
    edge of its support): the rule is registered ``singular=True`` (a zero tangent or
    cotangent contributes exactly 0), and its divisions ``a / b`` are written
    ``np.divide(a, b)``, so that Python numbers give inf or nan there as arrays do, instead
    of raising ``ZeroDivisionError``.

    ``rewrite`` changes the rule's parsed source first: one rule written for several
    functions (a template of :mod:`adgen.rules.stats` written for ``norm``, registered for
    each distribution with its name and shapes; its parameters are then the signature given
    to the rule function, ``__signature__``).
    """
    wrap = ast.parse(_SUPPORT[kind], mode="eval").body

    def register(rule_fn: Callable[..., Any]) -> Callable[..., Any]:
        for fn in fns:  # (how, for :func:`standard_form`)
            _PARTIALS_OF[loader.identity(fn)] = (rule_fn, kind, domain, rewrite)
        fdef = ast.parse(textwrap.dedent(inspect.getsource(rule_fn))).body[0]
        assert isinstance(fdef, ast.FunctionDef)
        if rewrite is not None:
            fdef = rewrite(fdef)
        body = [
            s
            for s in fdef.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        ]
        body = [_NumpyDivision().visit(stmt) for stmt in body]
        *pre, last = body
        assert isinstance(last, ast.Return) and isinstance(last.value, ast.Dict), rule_fn
        templates = []
        for key, value in zip(last.value.keys, last.value.values, strict=True):
            assert isinstance(key, ast.Constant) and isinstance(key.value, str), rule_fn
            factor = _substitute(wrap, {"PARTIAL": value})
            for mode, arg in (("jvp", "d"), ("vjp", "g")):
                seed = ast.Name(id=f"{arg}_seed", ctx=ast.Load())
                product = ast.BinOp(left=seed, op=ast.Mult(), right=factor)
                templates.append(
                    ast.FunctionDef(
                        name=f"{mode}_{key.value}",
                        args=ast.arguments(
                            posonlyargs=[],
                            args=[ast.arg(arg=f"{arg}_seed")],
                            kwonlyargs=[],
                            kw_defaults=[],
                            defaults=[],
                        ),
                        body=[*copy.deepcopy(_needed(pre, factor)), ast.Return(value=product)],
                        decorator_list=[],
                    )
                )
        fdef.body = templates  # type: ignore[assignment]
        fdef.decorator_list = []
        ast.fix_missing_locations(fdef)
        _register_parsed(
            fns,
            rule_fn,
            fdef,
            elementwise=True,
            name=None,
            examples=tuple(examples),
            domain=domain,
            singular=True,
        )
        return rule_fn

    return register


# function -> (rule function, kind, domain, rewrite) of what :func:`partials` registered
_PARTIALS_OF: dict[Hashable, tuple[Any, str, Any, Any]] = {}


def standard_form(
    own: Any,
    public: Any,
    examples: Iterable[Example],
    rewrite: Callable[[ast.FunctionDef], ast.FunctionDef],
) -> bool:
    """Register ``own`` -- a distribution's standard form, ``scipy.stats.gamma._logpdf(x,
    a)``, which libraries call directly (no argument checks, ``loc`` 0 and ``scale`` 1) --
    by the partials :func:`partials` registered for its ``public`` method
    (``scipy.stats.gamma.logpdf``), whose ``loc`` and ``scale`` then keep their defaults;
    ``rewrite`` changes those partials' source after the public method's own rewrite.
    False (nothing registered) where ``public`` was not registered so, or ``own`` is
    registered already."""
    how = _PARTIALS_OF.get(loader.identity(public))
    if how is None or lookup(own) is not None:
        return False
    rule_fn, kind, domain, first = how

    def both(fdef: ast.FunctionDef) -> ast.FunctionDef:
        return rewrite(first(fdef) if first is not None else fdef)

    partials(own, kind=kind, domain=domain, examples=examples, rewrite=both)(rule_fn)
    return True


def _needed(pre: list[ast.stmt], value: ast.expr) -> list[ast.stmt]:
    """The statements of ``pre`` (what a rule's partials share) that computing ``value``
    needs: each partial's template computes only what it reads, not its siblings' work
    (``psi(a + b)`` of a beta density's shapes in the partial w.r.t. ``x``). Statements
    other than plain assignments are all kept.

    >>> pre = ast.parse("y = x / s\\nboth = psi(a + b)\\nd = (a - 1) / y").body
    >>> [ast.unparse(s) for s in _needed(pre, ast.parse("d / s", mode="eval").body)]
    ['y = x / s', 'd = (a - 1) / y']
    """
    read = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    kept: list[ast.stmt] = []
    for stmt in reversed(pre):
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            if not {t.id for t in stmt.targets} & read:  # type: ignore[attr-defined]
                continue
        kept.append(stmt)
        read |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    return kept[::-1]


class _NumpyDivision(Transformer):
    """``a / b`` -> ``np.divide(a, b)`` where ``b`` is not a constant."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Div) or isinstance(node.right, ast.Constant):
            return node
        return ast.Call(func=dotted("np.divide"), args=[node.left, node.right], keywords=[])


def singular_templates(templates: dict[str, Template]) -> dict[str, Template]:
    """The templates of a rule registered ``singular=True``: every ``return e`` becomes
    ``return rt.zero_safe(e, seed)`` (``return -rt.zero_safe(e, seed)`` for ``return -e``,
    so that reverse mode still reduces a broadcast cotangent before negating it), with
    ``seed`` the template's argument (the tangent or the cotangent).

    >>> import numpy as np
    >>> ast.unparse(lookup(np.sqrt).vjp["x"].expand(
    ...     {"x": ast.Name("u"), "ans": ast.Name("v")}, "v_bar", str)[1])
    'rt.zero_safe(v_bar / (2.0 * v), v_bar)'
    """

    def wrap(value: ast.expr, seed: str) -> ast.expr:
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
            return ast.UnaryOp(op=ast.USub(), operand=wrap(value.operand, seed))
        return ast.Call(
            func=dotted("rt.zero_safe"),
            args=[value, ast.Name(id=seed, ctx=ast.Load())],
            keywords=[],
        )

    out = {}
    for param, template in templates.items():
        if template.refusal is not None:
            out[param] = template
            continue
        body = copy.deepcopy(template.body)
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Return) and node.value is not None:
                    node.value = wrap(node.value, template.arg)
        body = [ast.fix_missing_locations(stmt) for stmt in body]
        free = template.free_names | {"rt"}
        out[param] = Template(template.arg, body, free, template.origin, template.extra)
    return out


def _times(seed: ast.expr, derivative: ast.expr) -> ast.expr:
    """``seed * derivative``, written ``seed / e`` when the derivative is ``1.0 / e``."""
    if isinstance(derivative, ast.BinOp) and isinstance(derivative.op, ast.Div):
        num = derivative.left
        if isinstance(num, ast.Constant) and num.value == 1:
            return ast.BinOp(left=seed, op=ast.Div(), right=derivative.right)
        if (
            isinstance(num, ast.UnaryOp)
            and isinstance(num.op, ast.USub)
            and isinstance(num.operand, ast.Constant)
            and num.operand.value == 1
        ):
            return ast.BinOp(
                left=ast.UnaryOp(op=ast.USub(), operand=seed), op=ast.Div(), right=derivative.right
            )
    return ast.BinOp(left=seed, op=ast.Mult(), right=derivative)


def sequence_rule(
    *fns: Any,
    sequence: str,
    examples: Iterable[Example] = (),
    domain: Domain | None = None,
    complex: bool = False,
    number: bool = False,
    outputs: int | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function whose parameter ``sequence`` takes a tuple or list of arrays
    (``np.stack((a, b))``). ``jvp(parts)`` gets the tuple of the elements' tangents (zeros for
    constant elements); ``vjp(g, k)`` returns the cotangent of element ``k`` (a constant).
    ``complex=True`` as for :func:`rule`. ``number=True``: ``sequence`` may also be a single
    number or 0-d array, which the result then holds as it is (``np.array(3.0)``).
    ``outputs`` as for :func:`rule` (a solver's ``args``: ``quad`` returns ``(value,
    abserr)``): the templates then take and return tuples, one item per result, and the
    sequence must be a tuple written in the function (a display), not a list it built."""

    def register(rule_fn: Callable[..., Any]) -> Callable[..., Any]:
        batched: dict[str, Template] = {}
        params, _, jvp, vjp = _parse_rule(rule_fn, None, sequence, batched=batched)
        module = _module_of_rule(rule_fn)
        for fn in fns:
            emitter = syntax_emitter(fn) or call_emitter(spelling(fn))
            prim = Primitive(name=_label(fn), emitter=emitter, params=params, jvp=jvp, vjp=vjp)
            prim.sequence = sequence
            prim.batched = batched
            prim.sequence_number = number
            prim.outputs = outputs
            prim.examples = tuple(examples)
            prim.domain = domain
            prim.complex = complex
            _store(fn, prim, module)  # (a user's: adgen's rule first, which this one replaces)
        return rule_fn

    return register


@dataclass(frozen=True)
class Callbacks:
    """What a solver (``scipy.integrate.odeint``) does with the functions it is given.

    ``functions``: its parameters that take a function (``func``, ``Dfun``); ``extra``: the
    parameter whose tuple it passes on to each after its own arguments (``args``), where
    adgen appends the outer variables a lifted function reads; ``single``: a value there
    that is not a tuple means a tuple of it (``minimize(f, x0, args=k)``); ``refused``:
    options whose value a derivative needs as it is (``(option, value)``; another is
    refused by name). A solver returning an object (``solve_ivp``'s ``OdeResult``) is called
    through ``runs_as``, a function of the same parameters (its ``**options`` spelled out)
    returning the tuple of the attributes ``fields`` (``sol.y``, ``sol.t``...).
    """

    functions: tuple[str, ...]
    leading: int = 1  # the arguments the solver passes before the extra ones (y, t: 2)
    extra: str | None = "args"
    single: bool = False
    refused: tuple[tuple[str, Any], ...] = ()
    runs_as: Any = None  # the function generated code calls instead (its rule is used)
    fields: tuple[str, ...] = ()  # its results, read as these attributes of the solver's result


# solvers (by identity) -> (the function, what it does with functions)
_CALLBACKS: dict[Any, tuple[Any, Callbacks]] = {}


def takes_functions(fn: Any, spec: Callbacks) -> None:
    """Record that the solver ``fn`` (with a rule) calls the functions it is given."""
    _put(_CALLBACKS, loader.identity(fn), (fn, spec), _caller_module())


def callbacks_of(fn: Any) -> Callbacks | None:
    """What the solver ``fn`` does with functions (None: ``fn`` is not a solver)."""
    key = loader.identity(fn)
    entry = _CALLBACKS.get(key)
    if entry is None and loader.require(fn):  # its rule module was not imported yet
        entry = _CALLBACKS.get(key)
    return entry[1] if entry is not None and loader.same(entry[0], fn) else None


def attribute_rule(
    attr: str, *, complex: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register templates for reading an attribute of an array value, e.g. ``x.T``
    (``complex=True``: right for complex values too, as for :func:`rule`)."""

    def register(rule_fn: Callable[..., Any]) -> Callable[..., Any]:
        batched: dict[str, Template] = {}
        params, _, jvp, vjp = _parse_rule(rule_fn, batched=batched)

        def emit(a: list[ast.expr], k: list[tuple[str, ast.expr]]) -> ast.expr:
            return ast.Attribute(value=a[0], attr=attr, ctx=ast.Load())

        module = _module_of_rule(rule_fn)
        if module is None:
            loader.require_attribute(attr)  # (adgen's rule first: this one replaces it)
        prim = Primitive(f".{attr}", emit, params, jvp, vjp, view=True)
        prim.complex = complex
        prim.batched = batched
        _put(_ATTRIBUTES, attr, prim, module)
        return rule_fn

    return register


def attribute_as(attr: str, fn: Any) -> None:
    """Reading ``x.attr`` is ``fn(x)`` (``z.imag`` is ``np.imag(z)``): the attribute gets
    ``fn``'s templates (and its flags for complex values); the code reads the attribute."""
    module = _caller_module()
    if module is None:
        loader.require_attribute(attr)  # (adgen's rule first: this one replaces it)
    base = lookup(fn)
    assert base is not None, fn

    def emit(a: list[ast.expr], k: list[tuple[str, ast.expr]]) -> ast.expr:
        return ast.Attribute(value=a[0], attr=attr, ctx=ast.Load())

    prim = Primitive(f".{attr}", emit, base.params, base.jvp, base.vjp, view=True)
    prim.complex = base.complex
    prim.batched = base.batched
    _put(_ATTRIBUTES, attr, prim, module)


class ArrayMethod:
    """The registry's stand-in for an array method that no NumPy function means exactly
    (``x.astype(dtype)``, ``x.flatten()``, ``x.copy()``): calling it calls the method.

    :func:`method_function` returns it for the method's name and :func:`lookup` finds its
    primitive, so a method call lowers like a function call; generated code calls the method.
    """

    def __init__(self, name: str) -> None:
        self.__name__ = name
        self.__qualname__ = f"ndarray.{name}"

    def __call__(self, obj: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(obj, self.__name__)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<array method .{self.__name__}()>"


def method_emitter(
    method: str, spread: int | None = None
) -> Callable[[list[ast.expr], list[tuple[str, ast.expr]]], ast.expr]:
    """Emit ``a.method(*rest, **kwargs)`` for the arguments ``[a, *rest]`` (``spread``: the
    position in ``rest`` of one written ``*seq``)."""

    def emit(a: list[ast.expr], k: list[tuple[str, ast.expr]]) -> ast.expr:
        rest: list[ast.expr] = list(a[1:])
        if spread is not None:
            rest[spread] = ast.Starred(value=rest[spread], ctx=ast.Load())
        return ast.Call(
            func=ast.Attribute(value=a[0], attr=method, ctx=ast.Load()),
            args=rest,
            keywords=[ast.keyword(arg=key, value=v) for key, v in k],
        )

    return emit


def method_rule(
    method: str, *, view: bool = False, complex: bool = False, draws: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register templates for an array method that is not a NumPy function, e.g. ``x.astype``.

    The rule's first parameter is the array the method is called on; generated code calls
    the method (``y = x.astype(np.float32)``). Methods that *are* a NumPy function are
    declared with :func:`methods` instead.

    >>> prim = lookup(method_function("astype")[0])
    >>> ast.unparse(prim.emit([ast.Name("x"), ast.Name("np.float32")], []))
    'x.astype(np.float32)'
    """

    def register(rule_fn: Callable[..., Any]) -> Callable[..., Any]:
        batched: dict[str, Template] = {}
        params, _, jvp, vjp = _parse_rule(rule_fn, batched=batched)
        stand_in = ArrayMethod(method)
        prim = Primitive(f".{method}", method_emitter(method), params, jvp, vjp, view=view)
        prim.complex = complex
        prim.generator_method = draws
        prim.batched = batched
        module = _module_of_rule(rule_fn)
        if module is None:
            loader.require_method(method)  # (adgen's rule first: this one replaces it)
        _put(_REGISTRY, id(stand_in), (stand_in, prim), module)
        _put(_METHODS, method, (stand_in, False), module)
        return rule_fn

    return register


def nondifferentiable(*fns: Any) -> None:
    """Register functions whose results carry no derivative (comparisons, ``np.floor``...).

    A function of the user's own (no module spells it) is called by name in generated code.
    """
    module = _caller_module()
    for fn in fns:
        emitter, callee = _emitter(fn)
        params = [
            inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
            inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
        ]
        prim = Primitive(_label(fn), emitter, params, {}, {}, differentiable=False)
        prim.callee = callee
        prim.view = callee is not None  # a user's function may return its argument
        prim.runs = fn
        _store(fn, prim, module)


def refused_derivative(*fns: Any, reason: str) -> None:
    """Register functions (adgen's own helpers) whose derivative adgen refuses with
    ``reason`` wherever a differentiated value reaches them (their rules' code differentiated
    again, when no rule of that order exists yet)."""
    module = _caller_module()
    for fn in fns:
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind == p.POSITIONAL_OR_KEYWORD
        ]
        refusal = Template(
            "g", [ast.Return(value=ast.Constant(value=None))], frozenset(), "", refusal=reason
        )
        templates = {p.name: refusal for p in params}
        emitter, callee = _emitter(fn)
        prim = Primitive(_label(fn), emitter, params, dict(templates), dict(templates))
        prim.callee = callee  # (a function of the user's: called by name)
        _store(fn, prim, module)


def refused_mode(fn: Any, mode: str, reason: str) -> None:
    """Make ``fn``'s rule (registered already) refuse ``mode`` (``"forward"`` or
    ``"reverse"``) with ``reason``, wherever a differentiated value asks for it: a helper
    differentiated in one mode only (forward over reverse, not reverse over reverse)."""
    prim = lookup(fn)
    assert prim is not None, fn
    templates = prim.vjp if mode == "reverse" else prim.jvp
    for param, template in list(templates.items()):
        templates[param] = Template(
            template.arg,
            [ast.Return(value=ast.Constant(value=None))],
            frozenset(),
            template.origin,
            template.extra,
            refusal=reason,
        )


def _emitter(
    fn: Any,
) -> tuple[Callable[[list[ast.expr], list[tuple[str, ast.expr]]], ast.expr], Any]:
    """How a call of ``fn`` is written, and the object to name in generated code if no module
    spells it (the user's own function; see :meth:`Primitive.localize`)."""
    syntax = syntax_emitter(fn)
    if syntax is not None:
        return syntax, None
    try:
        return call_emitter(spelling(fn)), None
    except ValueError:
        if not callable(fn):
            raise

    def unnamed(a: list[ast.expr], k: list[tuple[str, ast.expr]]) -> ast.expr:
        raise InternalError(f"a call of {_label(fn)} was emitted before it was given a name")

    return unnamed, fn


def _identifier(obj: Any) -> str:
    """A readable Python name for an object generated code calls (``<lambda>`` -> ``fn``)."""
    import keyword

    name = getattr(obj, "__name__", "")
    if isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name):
        return name
    return "fn"


def _store(fn: Any, prim: Primitive, module: str | None = None) -> None:
    """Register ``prim`` for ``fn``; ``module``: the rule module of adgen doing it (None: the
    user, whose rule replaces adgen's: that is imported first, and derivatives compiled
    before are forgotten)."""
    if module is None:
        loader.require(fn)
    if prim.function is None:
        prim.function = fn
    _put(_REGISTRY, loader.identity(fn), (fn, prim), module)
    if module is None:
        _changed()


def _changed() -> None:
    """The registry changed: derivatives compiled before may use the old rules."""
    cache = sys.modules.get("adgen.backend.cache")
    if cache is not None:
        cache.clear()


def unregister(fn: Any) -> bool:
    """Forget the rule registered for ``fn`` (a user's rule, or ``nondifferentiable``); True if
    there was one. Calls of a plain Python function are then inlined again."""
    loader.require(fn)  # (adgen's rule for it, if not imported yet)
    key = loader.identity(fn)
    entry = _REGISTRY.get(key)
    if entry is None or not loader.same(entry[0], fn):
        return False
    del _REGISTRY[key]
    _ORDER.pop(key, None)
    _changed()
    return True


@contextlib.contextmanager
def registrations() -> Iterator[None]:
    """Rules registered inside the ``with`` block are forgotten when it ends (and rules they
    replaced come back): for tests and experiments.

    >>> def twice(x):
    ...     return 2 * x
    >>> with registrations():
    ...     nondifferentiable(twice)
    ...     lookup(twice) is not None
    True
    >>> lookup(twice) is None
    True
    """
    tables: list[dict[Any, Any]] = [_REGISTRY, _ATTRIBUTES, _METHODS, _ORDER]
    saved = [dict(table) for table in tables]
    start = len(_BUILTIN)
    try:
        yield
    finally:
        for table, old in zip(tables, saved, strict=True):
            table.clear()
            table.update(old)
        for _, table, key, value in _BUILTIN[start:]:  # rule modules imported meanwhile
            table[key] = value
        _changed()


def nondifferentiable_attributes(*attrs: str) -> None:
    module = _caller_module()
    for attr in attrs:

        def emit(a: list[ast.expr], k: list[tuple[str, ast.expr]], attr: str = attr) -> ast.expr:
            return ast.Attribute(value=a[0], attr=attr, ctx=ast.Load())

        params = [inspect.Parameter("x", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        if module is None:
            loader.require_attribute(attr)
        prim = Primitive(f".{attr}", emit, params, {}, {}, differentiable=False)
        _put(_ATTRIBUTES, attr, prim, module)


def reductions(*fns: Any) -> None:
    """Declare reductions: called with ``axis=None`` and no ``keepdims`` they return one
    number, which lets adgen treat the result as a scalar (no broadcasting helpers)."""
    for fn in fns:
        prim = lookup(fn)
        assert prim is not None, fn
        prim.full_reduction = True


def methods(pack: tuple[str, ...] = (), **table: Any) -> None:
    """Declare array methods as the functions they stand for: ``methods(sum=np.sum)``.

    Methods named in ``pack`` take their trailing arguments as one tuple
    (``x.reshape(2, 3)`` is ``np.reshape(x, (2, 3))``).
    """
    module = _caller_module()
    for name, fn in table.items():
        if module is None:
            loader.require_method(name)
        _put(_METHODS, name, (fn, name in pack), module)


def _label(fn: Any) -> str:
    if fn is assign:
        return "assign"
    if fn in _BINOPS or fn in _UNARYOPS or fn in _COMPARES or fn is operator.getitem:
        return fn.__name__
    try:
        return spelling(fn)
    except ValueError:
        return getattr(fn, "__name__", repr(fn))
