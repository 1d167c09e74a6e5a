"""Collect the terms of elementwise arithmetic: polynomials in the values it starts from.

Derivative code is the chain rule written out mechanically, and a nested derivative writes
it out again over the first: the fourth derivative of ``np.tanh`` by nesting ``grad`` four
times is some thirty products, sums and negations of ``t = np.tanh(x)``, ``1 - t * t``,
constants and the cotangent, where ``16 t - 40 t^3 + 24 t^5`` is what they compute. Each
NumPy operation is one pass over memory, so in code specialised for arrays of known shapes
and floating dtypes this pass reads every run of such arithmetic as a polynomial in the
values it starts from (its *atoms*: arguments, results of other operations, and scalars,
which go into the coefficients), adds like terms, and writes each value something else
reads back by Horner's scheme, sharing powers and products across the values it writes:

>>> print(collect_terms(
...     "def f_vjp(x, b):\\n"
...     "    t = np.tanh(x)\\n"
...     "    s = t * t\\n"
...     "    d = 1.0 - s\\n"
...     "    e = -t * 2.0\\n"
...     "    g = e * d\\n"
...     "    h = g * b + d * b * 3.0\\n"
...     "    return (h, d)\\n",
...     {"x": ((4096,), "float64"), "b": ((), "float64")},
... ), end="")
def f_vjp(x, b):
    t = np.tanh(x)
    t_pow2 = t * t
    d = 1.0 - t_pow2
    h = d * (t * (-2.0 * b) + 3.0 * b)
    return (h, d)

(``b`` is a 0-d array, a scalar: it stays in the coefficients; ``d`` is returned, so it
is computed anyway: ``h`` reads it as an atom.) The values are those of the
code as written up to rounding: products are reassociated and like terms added, as any
algebra system does, never divided. Terms that cancel exactly are dropped (where an
operand is infinite, the code as written would give ``inf - inf``, a NaN; the polynomial
gives 0).

The pass rewrites only what it can prove the same and cheaper:

* the arithmetic is ``+``, ``-`` (binary and unary), ``*`` and ``np.full`` of a number,
  at the function's top level, every value an array of a real floating dtype (or a Python
  number) whose shape the call's arguments decide, the atoms of a value arrays of its dtype
  (a float32 array added to a float64 one is computed in float64 from there on: its terms
  would not be);
* no statement of the function writes into an array, passes ``out=`` or calls a function
  that could (anything but NumPy's and adgen's own helpers, and methods such as a list's
  ``append`` and an array's ``reshape``): an atom read later than the code as written read
  it holds the same values;
* a polynomial has at most :data:`MAX_TERMS` terms and degree :data:`MAX_DEGREE` (else its
  value is kept as written and is an atom of the code after it);
* each value written has the shape and dtype of the value it replaces, and the rewritten
  code makes fewer passes over arrays than the code as written (else nothing changes).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from adgen.backend.codeopt.common import (
    Fact,
    _bindings,
    _fact,
    _full,
    _function,
    _known_facts,
    _result_fact,
    _simple_assign,
)
from adgen.names import Namer
from adgen.pyast import dotted_text, walk

# a polynomial larger than this is not expanded further: its value is kept as written
MAX_TERMS = 24
MAX_DEGREE = 8

# a monomial: its atoms (names) with their powers, sorted; a polynomial: monomial -> coefficient
Mono = tuple[tuple[str, int], ...]
Poly = dict[Mono, float]

# calls that do not write into their arguments (besides NumPy's ufuncs)
_MUTATING_NP = frozenset(
    {"np.copyto", "np.put", "np.place", "np.putmask", "np.fill_diagonal", "np.put_along_axis"}
)
# methods that write into nothing they are given (a list's append keeps a reference only)
_METHODS = frozenset(
    {"append", "pop", "reshape", "copy", "astype", "conj", "conjugate", "transpose", "ravel"}
    | {"flatten", "item", "tolist", "sum", "mean", "get", "keys", "values", "items"}
)


def collect_terms(source: str, known: Mapping[str, tuple[tuple[int, ...], str]]) -> str:
    """``source`` with its runs of top-level elementwise arithmetic written as polynomials in
    their atoms (see the module's documentation); ``known``: shapes and dtypes of names, as
    for :func:`adgen.backend.codeopt.reuse_buffers.reuse_buffers`."""
    if not known:
        return source
    fn = _function(source)
    if fn is None or not _chained(fn) or not _quiet(fn):
        return source
    versioned = _versioned(source, fn)
    if versioned != source:
        fn = _function(versioned)
        assert fn is not None
    written = _collect(versioned, fn, known)
    return source if written == versioned else written


def _chained(fn: ast.FunctionDef) -> bool:
    """Does an arithmetic statement at the top level read the result of another (the least
    there must be for terms to collect)?"""
    made: set[str] = set()
    for stmt in fn.body:
        target = _target(stmt)
        if target is None:
            continue
        assert isinstance(stmt, ast.Assign)
        value = stmt.value
        if isinstance(value, (ast.BinOp, ast.UnaryOp, ast.Call)) and _arithmetic(value):
            if any(isinstance(n, ast.Name) and n.id in made for n in walk(value)):
                return True
            made.add(target)
    return False


def _collect(
    source: str, fn: ast.FunctionDef, known: Mapping[str, tuple[tuple[int, ...], str]]
) -> str:
    bound = _bindings(fn)
    facts: dict[str, Fact] = {n: f for n, f in _known_facts(known).items() if bound.get(n, 0) <= 1}
    top: dict[str, int] = {}  # candidate name -> index of its statement
    exprs: dict[str, ast.expr] = {}
    for i, stmt in enumerate(fn.body):
        target = _target(stmt)
        if isinstance(stmt, ast.Delete):
            continue  # (the pass moves the dels it must: see _Plan._apply)
        if target is None:
            for node in walk(stmt):  # (names bound in blocks: nothing known)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    facts.pop(node.id, None)
            continue
        assert isinstance(stmt, ast.Assign)
        fact = _fact_of(stmt.value, facts)
        if bound.get(target) != 1:
            facts.pop(target, None)
            continue
        if fact is not None:
            facts[target] = fact
        # (an n-d array: a 0-d result is a NumPy number, which np.full would not give back)
        if _is_float_array(fact) and fact[0] and _arithmetic(stmt.value):  # type: ignore[index]
            top[target] = i
            exprs[target] = stmt.value
    if len(top) < 2:
        return source
    plan = _Plan(fn, top, exprs, facts, bound)
    return plan.rewrite(source)


def _versioned(source: str, fn: ast.FunctionDef) -> str:
    """``source`` with a name of its own for each value of a name bound more than once, all
    its bindings plain assignments at the top level (``v = v + w``, an adjoint summed): the
    last keeps the name.

    >>> print(_versioned(*(lambda s: (s, _function(s)))(
    ...     "def f(x):\\n    a = x * 2\\n    a = a + x\\n    a = a * a\\n    return a\\n"
    ... )), end="")
    def f(x):
        a_1 = x * 2
        a_2 = a_1 + x
        a = a_2 * a_2
        return a
    """
    top: dict[str, int] = {}
    for stmt in fn.body:
        target = _target(stmt)
        if target is not None:
            top[target] = top.get(target, 0) + 1
    bound = _bindings(fn)
    params = {a.arg for a in fn.args.args}
    renamed = {n for n, k in top.items() if k > 1 and bound[n] == k and n not in params}
    if not renamed:
        return source
    names = Namer(n.id for n in walk(fn) if isinstance(n, ast.Name))
    names.taken.update(params)
    left = dict(top)
    current: dict[str, str] = {}
    edits: list[tuple[int, int, int, str]] = []  # (line, start, end, name)
    for stmt in fn.body:
        target = _target(stmt)
        for node in walk(stmt):
            if isinstance(node, ast.Name) and node.id in current and node.id != target:
                edits.append(
                    (node.lineno, node.col_offset, node.end_col_offset or 0, current[node.id])
                )
        if target in renamed:
            assert isinstance(stmt, ast.Assign)
            for node in walk(stmt.value):
                if isinstance(node, ast.Name) and node.id == target and target in current:
                    edits.append(
                        (node.lineno, node.col_offset, node.end_col_offset or 0, current[target])
                    )
            left[target] -= 1
            current[target] = names.fresh(target) if left[target] else target
            if left[target]:
                where = stmt.targets[0]
                edits.append(
                    (where.lineno, where.col_offset, where.end_col_offset or 0, current[target])
                )
            else:
                del current[target]
    lines = source.split("\n")
    for line, start, end, name in sorted(edits, reverse=True):
        text = lines[line - 1]
        lines[line - 1] = text[:start] + name + text[end:]
    return "\n".join(lines)


class _Unknown(Exception):
    """A value whose shape or dtype the pass cannot tell."""


class _Plan:
    """The candidates of one function (top-level arithmetic on floating arrays) and what
    is known of its names."""

    def __init__(
        self,
        fn: ast.FunctionDef,
        top: dict[str, int],
        exprs: dict[str, ast.expr],
        facts: dict[str, Fact],
        bound: dict[str, int],
    ) -> None:
        self.fn, self.top, self.exprs, self.facts, self.bound = fn, top, exprs, facts, bound
        self.casts: dict[str, str] = {}  # numbers of unknown kind, as np.full casts them
        self.dtype = np.dtype(np.float64)  # the dtype of the value being expanded

    def rewrite(self, source: str) -> str:
        kept: set[str] = set()  # candidates written as they are
        for _ in range(len(self.top)):  # (each round keeps one more candidate at least)
            result = self._attempt(kept)
            if isinstance(result, set):
                kept |= result
                continue
            if result is None:
                return source
            return self._apply(source, *result)
        return source

    def _attempt(
        self, kept: set[str]
    ) -> set[str] | tuple[set[str], dict[str, ast.expr], list[tuple[int, str, ast.expr]]] | None:
        """The region (the candidates not kept), the new values of its roots and the shared
        products to compute before them; or more candidates to keep as written (one that is
        no polynomial in atoms, or a root whose new value is not the old one's kind); or
        None (nothing to gain)."""
        region = {n for n in self.top if n not in kept}
        self.casts.clear()
        if len(region) < 2:
            return None
        roots = self._roots(region)
        # a root made of atoms alone has nothing to collect: as written (its sums' order)
        alone = {r for r in roots if not _loads(self.exprs[r]) & (region - roots)}
        if alone:
            return alone
        polys: dict[str, Poly] = {}
        for name in sorted(region, key=self.top.__getitem__):
            fact = self.facts[name]
            assert not isinstance(fact, type)
            self.dtype = fact[1]  # (every array atom of the value: its dtype, see _expand)
            poly = self._expand(self.exprs[name], region, roots, polys)
            if poly is None or len(poly) > MAX_TERMS or _degree(poly) > MAX_DEGREE:
                # kept as written from here on: an atom of what reads it, and what it
                # reads of the region is computed (an atom of what reads that later)
                kept.add(name)
                region.discard(name)
                roots.discard(name)
                roots |= _loads(self.exprs[name]) & region
                continue
            polys[name] = poly
        if len(region) < 2:
            return None
        names = Namer(n.id for n in walk(self.fn) if isinstance(n, ast.Name))
        names.taken.update(a.arg for a in self.fn.args.args)
        emitter = _Emitter(self.facts, names, self.casts)
        values: dict[str, ast.expr] = {}
        wrong: set[str] = set()
        for root in sorted(roots, key=self.top.__getitem__):
            emitter.position = self.top[root]
            try:
                value = emitter.emit(polys[root], self.facts[root])
            except _Unknown:
                wrong.add(root)
                continue
            if _fact_of(value, emitter.facts) != self.facts[root]:
                wrong.add(root)
            values[root] = value
        if wrong:
            return wrong
        before = sum(_passes(self.exprs[n], self.facts) for n in region)
        after = sum(_passes(v, emitter.facts) for v in values.values())
        after += sum(_passes(v, emitter.facts) for _, _, v in emitter.products)
        if after >= before:
            return None
        return region, values, emitter.inline_single_casts(values)

    def _roots(self, region: set[str]) -> set[str]:
        """The names of the region that other statements read, or that nothing reads (both
        keep their statements)."""
        read_inside: set[str] = set()
        roots: set[str] = set()
        for i, stmt in enumerate(self.fn.body):
            if isinstance(stmt, ast.Delete):
                continue
            target = _target(stmt)
            inside = target in region and self.top.get(target) == i
            for node in walk(stmt):
                if not (isinstance(node, ast.Name) and node.id in region):
                    continue
                if inside and isinstance(node.ctx, ast.Load):
                    read_inside.add(node.id)
                elif not (inside and node.id == target):
                    roots.add(node.id)
        return roots | (region - read_inside)

    def _expand(
        self, expr: ast.expr, region: set[str], roots: set[str], polys: dict[str, Poly]
    ) -> Poly | None:
        """``expr`` as a polynomial in atoms, or None. Every array atom (and 0-d array) has
        the dtype of the value (``self.dtype``): the code as written may compute a float32
        array's terms in float64 after adding a float64 array, a product of terms would
        not."""
        if isinstance(expr, ast.Name):
            name = expr.id
            fact = self.facts.get(name)
            if not isinstance(fact, type) and fact is not None and fact[1] != self.dtype:
                return None
            if name in polys:
                # a root is computed anyway: an atom of what reads it
                return {((name, 1),): 1.0} if name in roots else polys[name]
            if name in region or self.bound.get(name, 0) > 1 or not _atom_fact(fact):
                return None
            return {((name, 1),): 1.0}
        if isinstance(expr, ast.Constant):
            number = expr.value
            if not isinstance(number, (int, float)) or isinstance(number, bool):
                return None
            return _tidy({(): float(number)}) if abs(number) < 1e100 else None
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            inner = self._expand(expr.operand, region, roots, polys)
            if inner is None or isinstance(expr.op, ast.UAdd):
                return inner
            return {m: -c for m, c in inner.items()}
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult)):
            left = self._expand(expr.left, region, roots, polys)
            right = self._expand(expr.right, region, roots, polys)
            if left is None or right is None:
                return None
            if isinstance(expr.op, ast.Mult):
                return _mul(left, right)
            return _add(left, right, 1.0 if isinstance(expr.op, ast.Add) else -1.0)
        fill = _full(expr)
        if fill is not None:  # np.full(shape, value, dtype=...): its value, broadcast
            assert isinstance(expr, ast.Call) and not isinstance(fill, type)
            value = expr.args[1]
            if isinstance(value, ast.Name) and self.facts.get(value.id) is None:
                # a number of a kind not known (the cotangent): cast as np.full casts it
                if self.bound.get(value.id, 0) > 1 or value.id in region:
                    return None
                if fill[1] != self.dtype:
                    return None
                if self.casts.setdefault(value.id, fill[1].name) != fill[1].name:
                    return None
                return {((value.id, 1),): 1.0}
            return self._expand(value, region, roots, polys)
        return None

    def _apply(
        self,
        source: str,
        region: set[str],
        values: dict[str, ast.expr],
        products: list[tuple[int, str, ast.expr]],
    ) -> str:
        edits: dict[int, list[str]] = {self.top[n]: [] for n in region}
        for position, name, value in products:
            edits[position].append(_line(name, value))
        for name, value in values.items():
            edits[self.top[name]].append(_line(name, value))
        # a del of a value no longer made, or read later than before: the name is left out
        # (reverse mode frees values after their last reads afterwards)
        read_after: set[str] = set()
        reads: dict[int, set[str]] = {}
        for position, _, value in products:
            reads.setdefault(position, set()).update(_loads(value))
        for name, value in values.items():
            reads.setdefault(self.top[name], set()).update(_loads(value))
        for i in range(len(self.fn.body) - 1, -1, -1):
            stmt = self.fn.body[i]
            read_after |= reads.get(i, set())
            if isinstance(stmt, ast.Delete):
                names = [t for t in stmt.targets if isinstance(t, ast.Name)]
                keep = [t.id for t in names if t.id not in region and t.id not in read_after]
                if len(keep) < len(stmt.targets):
                    edits[i] = [f"del {', '.join(keep)}"] if keep else []
        lines = source.split("\n")
        for i in sorted(edits, reverse=True):
            stmt = self.fn.body[i]
            assert stmt.end_lineno is not None
            indent = " " * stmt.col_offset
            lines[stmt.lineno - 1 : stmt.end_lineno] = [indent + text for text in edits[i]]
        return "\n".join(_without_orphan_comments(lines, self.fn.lineno))


class _Emitter:
    """Writes polynomials by Horner's scheme in their array atoms, scalars in the
    coefficients; each product of atoms is computed once, by a statement of its own."""

    def __init__(self, facts: dict[str, Fact], names: Namer, casts: dict[str, str]) -> None:
        self.facts = dict(facts)
        self.casts = casts
        for name, dtype in casts.items():
            self.facts[name] = ((), np.dtype(dtype))
        self.names = names
        self.memo: dict[Mono, str] = {}
        self.products: list[tuple[int, str, ast.expr]] = []  # (before statement i, name, value)
        self.position = 0
        self.cast: dict[str, str] = {}  # a number cast -> the name of its cast, made once

    def _number(self, name: str) -> ast.expr:
        """A scalar atom in a coefficient: its name, or that of its cast (one statement)."""
        if name not in self.casts:
            return _name(name)
        if name not in self.cast:
            dtype = self.casts[name]
            self.cast[name] = self.names.claim(f"{name}_{dtype}")
            self.products.append(
                (self.position, self.cast[name], _call(f"np.{dtype}", [_name(name)]))
            )
            self.facts[self.cast[name]] = ((), np.dtype(dtype))
        return _name(self.cast[name])

    def inline_single_casts(self, values: dict[str, ast.expr]) -> list[tuple[int, str, ast.expr]]:
        """The products to compute, but for the casts read once: those are written where they
        are read (in ``values``, changed in place)."""
        made = {name: value for _, name, value in self.products if name in self.cast.values()}
        exprs = [*values.values(), *(v for _, name, v in self.products if name not in made)]
        reads = Counter(n.id for e in exprs for n in walk(e) if isinstance(n, ast.Name))
        once = {name: made[name] for name in made if reads[name] == 1}
        if not once:
            return self.products

        class _Inline(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.expr:
                return once.get(node.id, node)

        for name, value in values.items():
            values[name] = _Inline().visit(value)
        return [p for p in self.products if p[1] not in once]

    def _scalar(self, name: str) -> bool:
        fact = self.facts.get(name)
        return isinstance(fact, type) or (fact is not None and fact[0] == ())

    def emit(self, poly: Poly, fact: Fact) -> ast.expr:
        grouped: dict[Mono, Poly] = {}
        for mono, c in poly.items():
            array = tuple((n, k) for n, k in mono if not self._scalar(n))
            scalar = tuple((n, k) for n, k in mono if self._scalar(n))
            coefficient = grouped.setdefault(array, {})
            coefficient[scalar] = coefficient.get(scalar, 0.0) + c
        grouped = {m: c for m, c in grouped.items() if any(v != 0.0 for v in c.values())}
        if not grouped or list(grouped) == [()]:  # no array left: a filled array
            assert not isinstance(fact, type)
            value = _scalar_expr(grouped.get((), {(): 0.0}), self._number)
            return _call("np.full", [_literal(fact[0]), value], dtype=f"np.{fact[1].name}")
        return self._horner(grouped)

    def _horner(self, poly: dict[Mono, Poly]) -> ast.expr:
        if len(poly) == 1:
            ((mono, c),) = poly.items()
            return self._term(mono, c)
        counts: dict[str, int] = {}
        for mono in poly:
            for n, _ in mono:
                counts[n] = counts.get(n, 0) + 1
        best = min(counts, key=lambda n: (-counts[n], n)) if counts else None
        if best is None or counts[best] < 2:
            return _sum([self._signed(m, c) for m, c in sorted(poly.items())])
        k = min(p for mono in poly for n, p in mono if n == best)
        inner: dict[Mono, Poly] = {}
        rest: dict[Mono, Poly] = {}
        for mono, c in poly.items():
            if any(n == best for n, _ in mono):
                inner[_divide(mono, best, k)] = c
            else:
                rest[mono] = c
        product = ast.BinOp(self._mono(((best, k),)), ast.Mult(), self._horner(inner))
        parts: list[tuple[ast.expr, bool, bool]] = [(product, False, False)]
        if len(rest) == 1:
            parts.append(self._signed(*next(iter(rest.items()))))
        elif rest:
            parts.append((self._horner(rest), False, False))
        return _sum(parts)

    def _signed(self, mono: Mono, c: Poly) -> tuple[ast.expr, bool, bool]:
        """A term, True if it is to be subtracted (a name or a number only: ``c - t`` of a
        temporary ``t`` makes a new array, where ``t * -2.0 + c`` writes into ``t``), and
        True if it is a number."""
        if len(c) == 1 and next(iter(c.values())) < 0 and (c.get(()) == -1.0 or not mono):
            return self._term(mono, {m: -v for m, v in c.items()}), True, not mono
        return self._term(mono, c), False, not mono

    def _term(self, mono: Mono, c: Poly) -> ast.expr:
        if not mono:
            return _scalar_expr(c, self._number)
        base = self._mono(mono)
        if c == {(): 1.0}:
            return base
        if c == {(): -1.0}:
            return ast.UnaryOp(ast.USub(), base)
        return ast.BinOp(base, ast.Mult(), _scalar_expr(c, self._number))

    def _mono(self, mono: Mono) -> ast.expr:
        """The product of array atoms ``mono``: a name (an atom's, or a shared product's)."""
        if len(mono) == 1 and mono[0][1] == 1:
            return _name(mono[0][0])
        if mono in self.memo:
            return _name(self.memo[mono])
        if len(mono) == 1:
            (atom, k), half = mono[0], mono[0][1] // 2
            left, right = self._mono(((atom, k - half),)), self._mono(((atom, half),))
            name = self.names.claim(f"{atom}_pow{k}")
        else:
            *init, (atom, k) = mono
            head = tuple(init) + (((atom, k - 1),) if k > 1 else ())
            left, right = self._mono(head), _name(atom)
            name = self.names.claim("prod")
        value = ast.BinOp(left, ast.Mult(), right)
        fact = _fact_of(value, self.facts)
        if fact is None:
            raise _Unknown(name)
        self.facts[name] = fact
        self.memo[mono] = name
        self.products.append((self.position, name, value))
        return _name(name)


def _target(stmt: ast.stmt) -> str | None:
    found = _simple_assign(stmt)
    return None if found is None else found[0]


_FLOAT_TYPES = frozenset({"float16", "float32", "float64", "longdouble"})
_OPS: dict[type[ast.AST], Any] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.USub: np.negative,
    ast.UAdd: np.positive,
}


def _fact_of(
    expr: ast.expr, facts: dict[str, Fact], memo: dict[int, Fact | None] | None = None
) -> Fact | None:
    """:func:`~adgen.backend.codeopt.common._fact`, knowing 0-d results too (a NumPy
    number, shape ``()``): what a coefficient computes. ``memo``: the facts of the
    expression's parts found so far (by ``id``)."""
    if memo is not None:
        if id(expr) not in memo:
            memo[id(expr)] = _fact_part(expr, facts, memo)
        return memo[id(expr)]
    return _fact_part(expr, facts, None)


def _fact_part(
    expr: ast.expr, facts: dict[str, Fact], memo: dict[int, Fact | None] | None
) -> Fact | None:
    if isinstance(expr, ast.BinOp) and type(expr.op) in _OPS:
        operands = [expr.left, expr.right]
    elif isinstance(expr, ast.UnaryOp) and type(expr.op) in _OPS:
        operands = [expr.operand]
    elif (
        isinstance(expr, ast.Call)
        and len(expr.args) == 1
        and not expr.keywords
        and isinstance(expr.func, ast.Attribute)
        and isinstance(expr.func.value, ast.Name)
        and expr.func.value.id == "np"
        and expr.func.attr in _FLOAT_TYPES
    ):  # a number cast (np.float64(v))
        return ((), np.dtype(expr.func.attr))
    else:
        return _fact(expr, facts)
    op = _OPS[type(expr.op)]  # type: ignore[attr-defined]
    return _result_fact(op, [_fact_of(operand, facts, memo) for operand in operands], numbers=True)


def _is_float_array(fact: Fact | None) -> bool:
    return fact is not None and not isinstance(fact, type) and fact[1].kind == "f"


def _atom_fact(fact: Fact | None) -> bool:
    """Can a value of this kind be an atom: a Python number, or a real floating array (or
    0-d array)?"""
    if isinstance(fact, type):
        return fact in (int, float)
    return _is_float_array(fact)


def _arithmetic(expr: ast.expr) -> bool:
    """Is ``expr`` made of ``+``, ``-``, ``*``, names, numbers and fills only?"""
    if isinstance(expr, (ast.Name, ast.Constant)):
        return True
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, (ast.USub, ast.UAdd)) and _arithmetic(expr.operand)
    if isinstance(expr, ast.BinOp):
        return (
            isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult))
            and _arithmetic(expr.left)
            and _arithmetic(expr.right)
        )
    return _full(expr) is not None and isinstance(expr.args[1], (ast.Name, ast.Constant))  # type: ignore[attr-defined]


_SAFE_BUILTINS = frozenset(
    {"len", "range", "tuple", "list", "float", "int", "complex", "bool", "abs", "min", "max"}
    | {"zip", "enumerate", "reversed", "isinstance", "sorted", "iter", "next", "slice"}
)


def _quiet(fn: ast.FunctionDef) -> bool:
    """Does no statement write into an array (item or attribute assignment, ``out=``, a call
    of a function that could)? Then an array holds the same values wherever it is read."""
    for node in walk(fn):
        if node is fn:
            continue
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.comprehension, ast.Global)):
            return False
        if isinstance(node, ast.Delete) and node not in fn.body:
            return False  # (a del in a block: which names a later read finds is not plain)
        if isinstance(node, (ast.Subscript, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
            return False
        if isinstance(node, ast.Call):
            if any(k.arg == "out" or k.arg is None for k in node.keywords):
                return False
            if not _harmless_call(node.func):
                return False
    return True


def _harmless_call(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in _SAFE_BUILTINS
    dotted = dotted_text(func)
    owner, _, rest = dotted.partition(".")
    if not owner.isidentifier() or not rest:  # (a call's result, a subscript...)
        return False
    if owner in ("rt", "math"):  # (adgen's helpers write into no argument)
        return True
    if owner == "np":
        return dotted not in _MUTATING_NP and not dotted.endswith(".at")
    return rest in _METHODS


def _sum(parts: list[tuple[ast.expr, bool, bool]]) -> ast.expr:
    """The sum of terms (each with True if it is subtracted, and True if it is a number):
    arrays first, numbers last, so that NumPy writes each sum into the temporary array on
    its left."""
    ordered = [p for p in parts if not p[2]] + [p for p in parts if p[2]]
    first = next((p for p in ordered if not p[1]), ordered[0])
    value = first[0] if not first[1] else ast.UnaryOp(ast.USub(), first[0])
    for part in ordered:
        if part is not first:
            value = ast.BinOp(value, ast.Sub() if part[1] else ast.Add(), part[0])
    return value


def _degree(poly: Poly) -> int:
    return max((sum(k for _, k in mono) for mono in poly), default=0)


def _mono_mul(a: Mono, b: Mono) -> Mono:
    powers = dict(a)
    for n, k in b:
        powers[n] = powers.get(n, 0) + k
    return tuple(sorted(powers.items()))


def _divide(mono: Mono, atom: str, k: int) -> Mono:
    return tuple((n, p - k if n == atom else p) for n, p in mono if n != atom or p > k)


def _add(p: Poly, q: Poly, sign: float) -> Poly | None:
    out = dict(p)
    for m, c in q.items():
        out[m] = out.get(m, 0.0) + sign * c
    return _tidy(out)


def _mul(p: Poly, q: Poly) -> Poly | None:
    out: Poly = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = _mono_mul(m1, m2)
            out[m] = out.get(m, 0.0) + c1 * c2
    return _tidy(out)


def _tidy(poly: Poly) -> Poly | None:
    """``poly`` without the terms that cancelled; None if a coefficient is so large or so
    small that multiplying the numbers first could overflow or underflow where the code as
    written does not."""
    out = {m: c for m, c in poly.items() if c != 0.0}
    if any(not 1e-100 < abs(c) < 1e100 for c in out.values()):
        return None
    return out


def _scalar_expr(c: Poly, number: Callable[[str], ast.expr]) -> ast.expr:
    """A coefficient: a polynomial in scalars (each written by ``number``), as an expression
    of Python numbers."""
    terms = sorted(c.items())
    value: ast.expr | None = None
    for mono, v in terms:
        factors: list[ast.expr] = [number(n) for n, k in mono for _ in range(k)]
        if v != 1.0 or not factors:
            factors.insert(0, ast.Constant(abs(v) if value is not None else v))
        term = factors[0]
        for f in factors[1:]:
            term = ast.BinOp(term, ast.Mult(), f)
        if value is None:
            value = term
        elif v < 0:
            value = ast.BinOp(value, ast.Sub(), term)
        else:
            value = ast.BinOp(value, ast.Add(), term)
    assert value is not None
    return value


def _passes(expr: ast.expr, facts: dict[str, Fact]) -> int:
    """How many operations of ``expr`` make an array (a pass over memory each)."""
    count = 0
    memo: dict[int, Fact | None] = {}
    for node in walk(expr):
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call)):
            fact = _fact_of(node, facts, memo)  # type: ignore[arg-type]
            if fact is not None and not isinstance(fact, type) and fact[0]:
                count += 1
    return count


def _without_orphan_comments(lines: list[str], def_line: int) -> list[str]:
    """The lines without the comments in the function's body that precede no statement any
    more (the next line is another comment of the same depth, or the block's end)."""
    kept = lines[:def_line]
    body = lines[def_line:]
    for k, line in enumerate(body):
        text = line.lstrip()
        if text.startswith("#"):
            depth = len(line) - len(text)
            after = next((b for b in body[k + 1 :] if b.strip()), "")
            after_depth = len(after) - len(after.lstrip())
            if (
                not after
                or after_depth < depth
                or (after.lstrip().startswith("#") and after_depth == depth)
            ):
                continue
        kept.append(line)
    return kept


def _loads(expr: ast.expr) -> set[str]:
    return {n.id for n in walk(expr) if isinstance(n, ast.Name)}


def _name(name: str) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Load())


def _literal(value: tuple[int, ...]) -> ast.expr:
    return ast.parse(repr(tuple(value)), mode="eval").body


def _call(func: str, args: list[ast.expr], **keywords: str) -> ast.Call:
    return ast.Call(
        func=ast.parse(func, mode="eval").body,
        args=args,
        keywords=[
            ast.keyword(arg=k, value=ast.parse(v, mode="eval").body) for k, v in keywords.items()
        ],
    )


def _line(name: str, value: ast.expr) -> str:
    return ast.unparse(
        ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value, lineno=0)
    )
