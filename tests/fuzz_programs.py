"""Random programs in the subset adgen differentiates, for ``tests/test_fuzz.py``.

:func:`programs` is a hypothesis strategy that writes a module holding ``program(x, y, s)``
(``x`` of shape (3, 4), ``y`` of shape (4,), ``s`` a Python float) and the small helper
functions it calls. A program is a sequence of statements, each drawn from:

* ``prim``: an elementwise primitive taken from adgen's rule registry (NumPy, SciPy),
  its arguments mapped into the rule's declared domain (``adgen.rules.samples``);
* ``arith``: Python operators (``+ - * / **``, unary minus, ``abs``);
* ``reduce``: sums, means, extrema and products over an axis, with ``keepdims``;
* ``index``: slices, integer and repeated-index gathers, ``.T``;
* ``product``: ``@``, ``np.dot``, ``np.einsum``, ``np.outer``;
* ``example``: a non-elementwise rule's registered example call (linear algebra,
  shaping, cumulative and statistical functions...), with arguments of its shapes and
  domains (symmetric positive definite, well separated...) built from program values;
* ``math``: scalar code on Python floats with :mod:`math` functions and ``float(...)``;
* ``tuple``: tuple packing, unpacking and swaps;
* ``helper``: a call to a helper function of the module (some return tuples, some
  branch, some call another helper);
* ``inplace``: an array made inside the program (``np.zeros``, ``.copy()``,
  ``np.copy``) written with ``v[i] = ...``, ``v[1:] += ...``, ``v[mask] = ...``,
  ``v[:, j] = ...``;
* ``if`` / ``for`` / ``while``: branches on differentiated values (comparisons of
  sums, maxima, floats; ``and``/``or``; conditional expressions), ``for`` loops over
  ``range`` carrying state, ``while`` loops with a bounded counter (and a value
  condition), ``break`` and ``continue``.

Every value stays in a bounded range (arguments of functions with a restricted domain
are squashed into it with ``tanh``), so finite differences are meaningful; kinks
(``max``, ``clip``, ``abs``...) are reached with probability zero. Arrays written in
place are never aliased or viewed by another name (adgen refuses such writes, rightly).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

from adgen.rules import registered
from adgen.rules.registry import spelling
from adgen.rules.samples import ANY, Domain, draw

Shape = tuple[int, ...] | None  # None: a Python float

INPUTS: dict[str, Shape] = {"x": (3, 4), "y": (4,), "s": None}
CONSTANTS = (0.25, 0.5, 0.75, 1.25, 0.3125, 0.625)

# elementwise rules whose derivative has a kink or jump where two arguments are equal
KINKED = {"np.maximum", "np.minimum", "np.fmax", "np.fmin", "np.fmod", "np.copysign"}
# math-module functions and the NumPy rule whose domain they share
MATH_DOMAINS = {
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "exp": "exp",
    "expm1": "expm1",
    "log1p": "log1p",
    "sqrt": "sqrt",
    "log": "log",
    "log2": "log2",
    "log10": "log10",
    "erf": "sin",
    "erfc": "sin",
}


def _interval(domain: Domain) -> tuple[float, float]:
    """The widest interval inside ``domain`` that stays ``gap`` away from its poles."""
    points = sorted({domain.lo, domain.hi, *domain.avoid})
    best = (domain.lo, domain.hi)
    if domain.avoid:
        pieces = []
        for a, b in itertools.pairwise(points):
            lo = a + (domain.gap if a in domain.avoid else 0.0)
            hi = b - (domain.gap if b in domain.avoid else 0.0)
            if hi > lo:
                pieces.append((lo, hi))
        best = max(pieces, key=lambda p: p[1] - p[0])
    return best


def squash(expr: str, domain: Domain | None, shape: Shape) -> str:
    """``expr`` mapped smoothly into ``domain`` (10% margin): ``c + r * tanh(expr)``."""
    lo, hi = _interval(domain or ANY)
    c, r = (lo + hi) / 2, 0.45 * (hi - lo)
    tanh = "math.tanh" if shape is None else "np.tanh"
    return f"({c:.6g} + {r:.6g} * {tanh}({expr}))"


def broadcast(*shapes: Shape) -> Shape | bool:
    """The broadcast shape (None for all-Python-floats), or False if they do not fit."""
    arrays = [s for s in shapes if s is not None]
    if not arrays:
        return None
    try:
        return tuple(np.broadcast_shapes(*arrays))
    except ValueError:
        return False


# -- what the registry offers ---------------------------------------------------------------


@dataclass(frozen=True)
class Elementwise:
    spelled: str
    arity: int
    domains: tuple[Domain, ...]


@dataclass(frozen=True)
class RegistryExample:
    rule: str
    call: str  # the example call, arguments renamed to {0}, {1}, ...
    args: tuple[tuple[Shape, Domain], ...]
    result: tuple[int, ...]
    twice: bool


def _elementwise() -> list[Elementwise]:
    out = []
    for fn, prim in registered():
        required = [p.name for p in prim.params if p.default is p.empty]
        if not (prim.differentiable and prim.elementwise and prim.domain is not None):
            continue
        if len(required) not in (1, 2):
            continue
        doms = prim.domain if isinstance(prim.domain, tuple) else (prim.domain,) * len(required)
        out.append(Elementwise(spelling(fn), len(required), tuple(doms)))
    return sorted(out, key=lambda e: e.spelled)


def _examples() -> list[RegistryExample]:
    import ast

    out = []
    rng = np.random.default_rng(0)
    namespace: dict[str, Any] = {"np": np, "math": math}
    try:
        import scipy.special

        namespace["scipy"] = scipy
    except ImportError:  # pragma: no cover - scipy is a test dependency
        pass
    for fn, prim in registered():
        if not prim.differentiable or (prim.elementwise and prim.domain is not None):
            continue
        for ex in prim.examples:
            if "rt." in ex.call or "random" in ex.call or ex.tolerance is not None:
                continue
            if "scipy" in ex.call and "scipy" not in namespace:
                continue
            names = [n for n, _ in ex.args]
            tree = ast.parse(ex.call, mode="eval")
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.id in names:
                    node.id = f"ARG{names.index(node.id)}_"
            call = ast.unparse(tree).replace("{", "{{").replace("}", "}}")
            for k in range(len(names)):
                call = call.replace(f"ARG{k}_", "{" + str(k) + "}")
            args = []
            for k, (_, arg) in enumerate(ex.args):
                dom = arg.domain
                if dom is None:
                    dom = prim.domain[k] if isinstance(prim.domain, tuple) else prim.domain
                args.append((arg.shape, dom or ANY))
            results = []
            for _ in range(3):  # a result whose shape depends on the values (np.extract) is
                values = [draw(d, rng, s) for s, d in args]  # left out: shapes are static here
                env = {**namespace, **{f"_a{k}": v for k, v in enumerate(values)}}
                try:
                    results.append(eval(call.format(*(f"_a{k}" for k in range(len(values)))), env))
                except Exception:  # pragma: no cover - an example that needs more context
                    break
            if len(results) < 3 or len({np.shape(r) for r in results}) > 1:
                continue
            result = results[0]
            if not isinstance(result, (np.ndarray, np.floating, float)):
                continue
            if np.result_type(result).kind != "f" or np.size(result) > 64:
                continue
            out.append(RegistryExample(prim.name, call, tuple(args), np.shape(result), ex.twice))
    return out


ELEMENTWISE = _elementwise()
EXAMPLES = _examples()
MATH_UNARY = sorted(MATH_DOMAINS)


def _domain_of(numpy_name: str) -> Domain:
    for e in ELEMENTWISE:
        if e.spelled == "np." + numpy_name:
            return e.domains[0]
    return ANY


# -- the program being written ---------------------------------------------------------------


@dataclass
class Scope:
    """The values a statement may read: name -> shape."""

    shapes: dict[str, Shape]
    writable: set[str] = field(default_factory=set)  # arrays made here, never aliased

    def child(self) -> Scope:
        return Scope(dict(self.shapes), set(self.writable))


class Writer:
    """Writes one random program; ``draw`` is hypothesis's draw function."""

    def __init__(self, draw: Any, twice: bool) -> None:
        self.draw = draw
        self.twice = twice  # only rules whose second derivative adgen checks
        self.names = itertools.count(1)
        self.helpers: list[str] = []  # source of each helper function
        self.helper_kinds: list[tuple[str, int, bool]] = []  # name, arity, returns a pair
        self.features: set[str] = set()
        self.depth = 0  # nesting of the statement being written

    # small pieces

    def fresh(self, prefix: str = "v") -> str:
        return f"{prefix}{next(self.names)}"

    def pick(self, options: Any) -> Any:
        return self.draw(st.sampled_from(list(options)))

    def const(self) -> str:
        return repr(self.pick(CONSTANTS))

    def offset(self) -> str:
        """A constant no other statement uses: ties between arguments of a kink are avoided."""
        return repr(round(round(self.draw(st.floats(0.05, 0.45)), 4) + 0.00013, 5))

    def source(self, scope: Scope, *, arrays: bool = False, readable: bool = True) -> str:
        names = [
            n
            for n, s in scope.shapes.items()
            if (not arrays or s is not None) and (readable or n not in scope.writable)
        ]
        return self.pick(sorted(names))

    def fits(self, scope: Scope, shape: Shape) -> list[str]:
        """Names whose shape broadcasts to ``shape``."""
        return sorted(n for n, s in scope.shapes.items() if broadcast(s, shape) == shape)

    # statements: each returns (lines, name, shape) or None when the draw does not fit

    def statement(self, scope: Scope, indent: str, depth: int) -> list[str]:
        kinds = ["prim", "prim", "arith", "arith", "reduce", "index", "product", "example"]
        kinds += ["math", "tuple", "helper", "inplace"]
        if depth < 2:
            kinds += ["if", "for", "while"]
        kind = self.pick(kinds)
        self.depth = depth
        if kind in ("if", "for", "while"):
            return getattr(self, "block_" + kind)(scope, indent, depth)
        made = getattr(self, "stmt_" + kind)(scope)
        if made is None:
            return []
        lines, name, shape = made
        self.features.add(kind)
        if name is not None:
            scope.shapes[name] = shape
        return [indent + line for line in lines]

    def stmt_prim(self, scope: Scope) -> Any:
        op = self.pick(ELEMENTWISE)
        srcs = [self.source(scope) for _ in range(op.arity)]
        shape = broadcast(*(scope.shapes[a] for a in srcs))
        if shape is False:
            return None
        args = [squash(a, d, scope.shapes[a]) for a, d in zip(srcs, op.domains)]
        if op.spelled in KINKED and op.arity == 2:
            args[1] = f"({args[1]} + {self.offset()})"
        expr = f"{op.spelled}({', '.join(args)})"
        if shape is None:  # NumPy and SciPy functions of Python floats return NumPy scalars
            shape = ()
        name = self.fresh()
        return [f"{name} = {expr}"], name, shape

    def stmt_arith(self, scope: Scope) -> Any:
        a, b = self.source(scope), self.source(scope)
        shape = broadcast(scope.shapes[a], scope.shapes[b])
        if shape is False:
            return None
        templates = [
            "{a} + {b}",
            "{a} - {c} * {b}",
            "{a} * {b}",
            "{a} / ({c} + {b} * {b})",
            "(1.25 + np.tanh({a})) ** (0.5 + 0.25 * np.tanh({b}))",
            "abs({a} - {b} + {o})",
        ]
        unary = ["-{a}", "{a} ** 2", "{a} ** 3", "{c} * {a}", "({c} + {a} * {a}) ** 0.5"]
        if self.draw(st.booleans()):
            expr = self.pick(unary).format(a=a, c=self.const())
            shape = scope.shapes[a]
        else:
            expr = self.pick(templates).format(a=a, b=b, c=self.const(), o=self.offset())
        if "np." in expr and shape is None:
            shape = ()
        name = self.fresh()
        return [f"{name} = {expr}"], name, shape

    def stmt_reduce(self, scope: Scope) -> Any:
        a = self.source(scope, arrays=True)
        shape = scope.shapes[a]
        if not shape:
            return None
        fn = self.pick(["np.sum", "np.mean", "np.max", "np.min", "np.prod", ".sum", ".mean"])
        axis = self.pick([None, 0, -1])
        keep = self.draw(st.booleans())
        result = np.sum(np.zeros(shape), axis=axis, keepdims=keep).shape
        arg = f"(1.25 + np.tanh({a}))" if fn == "np.prod" else a
        if fn.startswith("."):
            expr = f"{arg}{fn}(axis={axis}, keepdims={keep})"
        else:
            expr = f"{fn}({arg}, axis={axis}, keepdims={keep})"
        name = self.fresh()
        return [f"{name} = {expr}"], name, result

    def stmt_index(self, scope: Scope) -> Any:
        a = self.source(scope, arrays=True, readable=False)
        shape = scope.shapes[a]
        if not shape:
            return None
        index = self.pick(
            ["[1:]", "[::-1]", "[0]", "[-1, ...]", "[None, :]", "[[0, 2, 0]]", "[..., 1:3]"]
            + ["[1:, ::2]", "[[2, 0], [1, 1]]", ".T", "[:, None]", "[[True, False, True]]"]
        )
        try:
            if index == ".T":
                result = np.zeros(shape).T.shape
            else:
                result = eval(f"_z{index}", {"_z": np.zeros(shape)}).shape
        except (IndexError, ValueError):
            return None
        name = self.fresh()
        return [f"{name} = {a}{index}"], name, result

    def stmt_product(self, scope: Scope) -> Any:
        a = self.source(scope, arrays=True)
        b = self.source(scope, arrays=True)
        sa, sb = scope.shapes[a], scope.shapes[b]
        forms = [
            ("{a} @ {b}.T", lambda p, q: p @ q.T),
            ("np.dot({a}, {b})", np.dot),
            ("np.outer({a}, {b})", np.outer),
            ("np.einsum('...j,...j->...', {a}, {b})", None),
            ("np.tensordot({a}, {b}, axes=1)", lambda p, q: np.tensordot(p, q, axes=1)),
        ]
        form, fn = self.pick(forms)
        if not sa or not sb:
            return None
        try:
            if fn is None:
                result = np.einsum("...j,...j->...", np.zeros(sa), np.zeros(sb)).shape
            else:
                result = np.shape(fn(np.zeros(sa), np.zeros(sb)))
        except (ValueError, IndexError):
            return None
        if np.prod(result, dtype=int) > 64:
            return None
        name = self.fresh()
        return [f"{name} = " + form.format(a=a, b=b)], name, result

    def _argument(self, scope: Scope, shape: Shape, domain: Domain) -> list[str] | None:
        """Statements binding a new name to a value of ``shape`` in ``domain``, made from
        program values (the last statement binds the argument)."""
        a = self.source(scope, arrays=True, readable=False)
        name = self.fresh("a")
        if shape is None:
            return [f"{name} = float(np.sum({squash(a, domain, scope.shapes[a])}))"]
        size = int(np.prod(shape, dtype=int))
        expr = a
        if scope.shapes[a] != shape:
            # np.resize repeats values; a fixed generic offset keeps matrices full rank
            seed = self.draw(st.integers(0, 2**16))
            noise = np.round(np.random.default_rng(seed).uniform(-0.5, 0.5, shape), 3)
            expr = f"np.resize({a}, {shape}) + np.array({noise.tolist()})"
        if domain.kind == "uniform":
            return [f"{name} = {squash(expr, domain, shape)}"]
        if domain.kind == "distinct":  # entries far apart: no ties in sorts and extrema
            ranks = np.reshape(np.array(self.draw(st.permutations(range(size))), float), shape)
            return [
                f"{name} = {squash(expr, Domain(-0.4, 0.4), shape)} + np.array({ranks.tolist()})"
            ]
        if len(shape) < 2 or shape[-1] != shape[-2]:
            return None
        n = shape[-1]
        m = self.fresh("m")
        lines = [f"{m} = {squash(expr, Domain(-1.0, 1.0), shape)}"]
        if domain.kind == "spd":
            lines.append(f"{name} = {m} @ np.swapaxes({m}, -1, -2) + {n}.0 * np.eye({n})")
        elif domain.kind == "invertible":  # diagonally dominant
            lines.append(f"{name} = {m} + {n}.0 * np.eye({n})")
        elif domain.kind == "symmetric":  # Gershgorin discs apart: distinct eigenvalues
            spread = f"np.diag(np.arange({n}) * {2.0 * n + 1.0})"
            lines.append(f"{name} = ({m} + np.swapaxes({m}, -1, -2)) / 2.0 + {spread}")
        else:
            return None
        return lines

    def stmt_example(self, scope: Scope) -> Any:
        pool = [e for e in EXAMPLES if e.twice or not self.twice]
        ex = self.pick(pool)
        lines: list[str] = []
        names = []
        for shape, domain in ex.args:
            made = self._argument(scope, shape, domain)
            if made is None:
                return None
            lines += made
            names.append(made[-1].split(" = ")[0])
        self.features.add("rule:" + ex.rule)
        name = self.fresh()
        lines.append(f"{name} = " + ex.call.format(*names))
        return lines, name, ex.result

    def stmt_math(self, scope: Scope) -> Any:
        floats = sorted(n for n, s in scope.shapes.items() if s is None)
        if not floats or self.draw(st.integers(0, 3)) == 0:
            a = self.source(scope, arrays=True)
            name = self.fresh("t")
            return [f"{name} = float(np.sum(np.tanh({a})))"], name, None
        a, b = self.pick(floats), self.pick(floats)
        fn = self.pick(MATH_UNARY + ["atan2", "hypot", "pow", "fabs"])
        if fn == "atan2":
            expr = f"math.atan2({a}, {squash(b, Domain(0.3, 1.5), None)})"
        elif fn == "hypot":
            expr = f"math.hypot({a}, {b} + {self.offset()})"
        elif fn == "pow":
            expr = f"math.pow({squash(a, Domain(0.3, 3.0), None)}, {squash(b, ANY, None)})"
        elif fn == "fabs":
            expr = f"math.fabs({a} - {self.offset()})"
        else:
            expr = f"math.{fn}({squash(a, _domain_of(MATH_DOMAINS[fn]), None)})"
        expr = self.pick([expr, f"{expr} * {b}", f"{b} - {expr}", f"{expr} ** 2"])
        name = self.fresh("t")
        return [f"{name} = {expr}"], name, None

    def stmt_tuple(self, scope: Scope) -> Any:
        a = self.source(scope, readable=False)
        same = sorted(
            n for n, s in scope.shapes.items() if s == scope.shapes[a] and n not in scope.writable
        )
        b = self.pick(same)
        p, q = self.fresh(), self.fresh()
        # a tuple kept under one name (`pair = (a, b)`) inside a block is refused by adgen
        # with a clear error (see test_fuzz_regressions.py): only outside blocks
        form = self.pick(["pack", "swap", "index"] if self.depth == 0 else ["pack", "swap"])
        if form == "pack":
            lines = [f"{p}, {q} = {b} * {self.const()}, np.sin({a}) + {b}"]
        elif form == "swap":
            lines = [f"{p}, {q} = {a}, {b}", f"{p}, {q} = {q} * {self.const()}, {p} + {q}"]
        else:
            pair = self.fresh("pair")
            lines = [f"{pair} = ({a}, np.cos({b}))", f"{p} = {pair}[1] - {pair}[0]", f"{q} = {p}"]
        shape = scope.shapes[a]
        if shape is None and form != "swap":
            shape = ()
        scope.shapes[p] = shape
        return lines, q, shape

    def helper(self) -> tuple[str, int, bool]:
        """A helper of the module: a new one, or one written before."""
        if self.helper_kinds and self.draw(st.booleans()):
            return self.pick(self.helper_kinds)
        name = f"helper_{len(self.helpers) + 1}"
        arity = self.draw(st.integers(1, 2))
        params = ["u", "w"][:arity]
        body = []
        w = params[-1]
        body.append(f"    t = np.tanh(u) * {self.const()} + np.sin({w})")
        if self.draw(st.booleans()):
            body += ["    if np.sum(t) > 0.0:", "        t = t * t", "    else:", "        t = -t"]
        if self.helper_kinds and self.draw(st.booleans()):
            inner, inner_arity, inner_pair = self.pick(self.helper_kinds)
            call = f"{inner}({', '.join(['t', 'u'][:inner_arity])})"
            body.append(f"    t = {call}[0] * {self.const()}" if inner_pair else f"    t = {call}")
        pair = self.draw(st.booleans())
        body.append(f"    return t, u - {self.const()} * t" if pair else "    return t + 0.5 * u")
        self.helpers.append(f"def {name}({', '.join(params)}):\n" + "\n".join(body) + "\n")
        kind = (name, arity, pair)
        self.helper_kinds.append(kind)
        return kind

    def stmt_helper(self, scope: Scope) -> Any:
        fn, arity, pair = self.helper()
        # not an array written in place: adgen cannot see that a helper's result is a new
        # array, so it refuses writes into arrays passed to one (conservatively)
        args = [self.source(scope, readable=False) for _ in range(arity)]
        shape = broadcast(*(scope.shapes[a] for a in args))
        if shape is False:
            return None
        shape = () if shape is None else shape  # np.tanh of a Python float
        name = self.fresh()
        if pair:
            other = self.fresh()
            scope.shapes[other] = shape
            return [f"{name}, {other} = {fn}({', '.join(args)})"], name, shape
        return [f"{name} = {fn}({', '.join(args)})"], name, shape

    def stmt_inplace(self, scope: Scope) -> Any:
        a = self.source(scope, arrays=True)
        shape = scope.shapes[a]
        if not shape:
            return None
        name = self.fresh("w")
        make = self.pick(
            [f"np.zeros({shape})", f"{a}.copy()", f"np.copy({a})", f"np.ones_like({a})"]
        )
        lines = [f"{name} = {make}"]
        inner = Scope({**scope.shapes, name: shape}, scope.writable | {name})
        for _ in range(self.draw(st.integers(1, 3))):
            lines += self.write(inner, name, "")
        scope.writable.add(name)
        return lines, name, shape

    def write(self, scope: Scope, w: str, indent: str, loop_var: str | None = None) -> list[str]:
        """One in-place write into the array ``w`` (made by the program)."""
        shape = scope.shapes[w]
        assert shape
        forms = ["row", "tail", "mask", "scale"]
        if len(shape) == 2:
            forms.append("column")
        form = self.pick(forms)
        others = [n for n in scope.shapes if n != w]
        if form == "row":
            row = loop_var if loop_var else str(self.draw(st.integers(0, shape[0] - 1)))
            src = self.pick(self.fits(scope, shape[1:]) or [w])
            line = f"{w}[{row}] = {w}[{row}] * 0.5 + np.sin({src})"
            if src == w:
                line = f"{w}[{row}] = np.cos({w}[{row}])"
        elif form == "tail":
            tail = (shape[0] - 1, *shape[1:])
            src = self.pick(self.fits(scope, tail) or [w])
            expr = f"np.tanh({src})" if src != w else f"np.tanh({w}[:-1])"
            line = f"{w}[1:] += {self.const()} * {expr}"
        elif form == "mask":
            exact = sorted(n for n, s in scope.shapes.items() if s == shape)
            src = self.pick(exact)
            mask = f"{src} > {self.offset()}"
            m = self.fresh("mask")
            val = self.pick(others) if others else w
            if broadcast(scope.shapes[val], shape) == shape:
                rhs = f"np.broadcast_to(np.sin({val}), {shape})[{m}]"
            else:
                rhs = f"0.5 * {w}[{m}]"
            return [f"{indent}{m} = {mask}", f"{indent}{w}[{m}] = {rhs}"]
        elif form == "scale":
            line = f"{w}[::2] *= {self.const()}"
        else:
            col = self.draw(st.integers(0, shape[1] - 1))
            src = self.pick(self.fits(scope, (shape[0],)) or [w])
            rhs = f"np.tanh({src})" if src != w else f"{w}[:, {col}] ** 2"
            line = f"{w}[:, {col}] = {rhs}"
        return [indent + line]

    # control flow

    def condition(self, scope: Scope) -> str:
        a, b = self.source(scope), self.source(scope)
        forms = [
            f"np.sum({a}) > np.sum({b}) + {self.offset()}",
            f"np.max({a}) > {self.offset()}",
            f"np.mean({a}) < {self.const()}",
        ]
        floats = [n for n, s in scope.shapes.items() if s is None]
        if floats:
            forms.append(f"{self.pick(sorted(floats))} > {self.offset()} - 0.25")
        cond = self.pick(forms)
        join = self.pick(["", "", " and ", " or "])
        if join:
            cond = f"({cond}{join}{self.pick(forms)})"
        return cond

    def body(self, scope: Scope, indent: str, depth: int, loop_var: str | None) -> list[str]:
        """A block: statements on a child scope, then updates of the enclosing state."""
        inner = scope.child()
        out: list[str] = []
        for _ in range(self.draw(st.integers(1, 3))):
            out += self.statement(inner, indent, depth + 1)
        for _ in range(self.draw(st.integers(1, 2))):
            out += self.update(scope, inner, indent, loop_var)
        return out

    def update(self, outer: Scope, inner: Scope, indent: str, loop_var: str | None) -> list[str]:
        """Carry state: rebind (or write into) a name of the enclosing scope."""
        target = self.source(outer)
        shape = outer.shapes[target]
        if target in outer.writable and shape:
            return self.write(inner, target, indent, loop_var if shape[0] > 3 else None)
        fits = self.fits(inner, shape) if shape is not None else []
        fits = fits or [n for n, s in inner.shapes.items() if s is None] or [target]
        u = self.pick(sorted(fits))
        if shape is None and inner.shapes[u] is not None:
            u = f"float(np.sum({u}))"  # Python float state stays a Python float
        tanh = "math.tanh" if shape is None else "np.tanh"
        forms = [
            f"{target} = 0.75 * {target} + 0.25 * {tanh}({u})",
            # not `+=`: adgen refuses it where another name may share the value (it cannot
            # tell a Python float from an array there); in-place writes are `write`'s
            f"{target} = {target} - 0.125 * {tanh}({u})",
            f"{target} = {tanh}({target}) + {self.const()} * {u}",
        ]
        if loop_var:
            forms.append(f"{target} = {target} * 0.875 + 0.0625 * {loop_var} * {tanh}({u})")
        line = self.pick(forms)
        self.features.add("update")
        return [indent + line]

    def block_if(self, scope: Scope, indent: str, depth: int) -> list[str]:
        self.features.add("if")
        if self.draw(st.integers(0, 3)) == 0:  # a conditional expression
            a = self.source(scope)
            same = sorted(
                n
                for n, s in scope.shapes.items()
                if s == scope.shapes[a] and n not in scope.writable  # an alias: no more writes
            )
            if not same:
                return []
            b = self.pick(same)
            expr = f"{a} * {self.const()} if {self.condition(scope)} else {b}"
            name = self.fresh()
            scope.shapes[name] = scope.shapes[a]
            return [f"{indent}{name} = {expr}"]
        out = [f"{indent}if {self.condition(scope)}:"]
        out += self.body(scope, indent + "    ", depth, None)
        if self.draw(st.booleans()):
            out.append(f"{indent}elif {self.condition(scope)}:")
            out += self.body(scope, indent + "    ", depth, None)
        if self.draw(st.booleans()):
            out.append(f"{indent}else:")
            out += self.body(scope, indent + "    ", depth, None)
        return out

    def escape(self, scope: Scope, indent: str) -> list[str]:
        """Maybe a ``break`` or ``continue`` on a value condition."""
        if self.draw(st.integers(0, 2)):
            return []
        word = self.pick(["break", "continue"])
        self.features.add(word)
        return [f"{indent}if {self.condition(scope)}:", f"{indent}    {word}"]

    def block_for(self, scope: Scope, indent: str, depth: int) -> list[str]:
        self.features.add("for")
        var = f"i{depth}"
        out = [f"{indent}for {var} in range({self.draw(st.integers(0, 4))}):"]
        out += self.escape(scope, indent + "    ")
        out += self.body(scope, indent + "    ", depth, var)
        return out

    def block_while(self, scope: Scope, indent: str, depth: int) -> list[str]:
        self.features.add("while")
        k = f"k{depth}"
        bound = self.draw(st.integers(0, 4))
        test = f"{k} < {bound}"
        if self.draw(st.booleans()):
            test += f" and {self.condition(scope)}"
        out = [f"{indent}{k} = 0", f"{indent}while {test}:", f"{indent}    {k} = {k} + 1"]
        out += self.escape(scope, indent + "    ")
        out += self.body(scope, indent + "    ", depth, None)
        return out

    # the whole program

    def program(self) -> tuple[str, bool]:
        scope = Scope(dict(INPUTS))
        lines: list[str] = []
        for _ in range(self.draw(st.integers(1, 8))):
            lines += self.statement(scope, "    ", 0)
        made = [n for n in scope.shapes if n not in INPUTS]
        chosen = sorted(set(made[-2:]) | scope.writable | {self.source(scope)})
        terms = [
            self.pick([f"np.sum({n})", f"np.sum(np.sin({n}))", f"np.sum({n} * {n})"])
            for n in chosen
        ]
        total = " + ".join(terms) + " + np.sum(s * y)"
        scalar = self.draw(st.integers(0, 3)) > 0
        if scalar:
            lines.append(f"    return {total}")
        else:
            self.features.add("tuple result")
            last = made[-1] if made else "x"
            lines.append(f"    return {total}, {last}")
        head = "import math\n\nimport numpy as np\n"
        if any("scipy" in line for line in lines):
            head += "import scipy.special\n"
        helpers = "".join("\n\n" + h for h in self.helpers)
        src = head + helpers + "\n\ndef program(x, y, s):\n" + "\n".join(lines) + "\n"
        return src, scalar


@dataclass(frozen=True)
class Program:
    source: str
    scalar: bool  # returns a scalar (a tuple otherwise)
    twice: bool  # to be checked at second order too
    features: frozenset[str]

    def __repr__(self) -> str:  # hypothesis prints the failing program this way
        return f"Program(scalar={self.scalar}, twice={self.twice}):\n{self.source}"


@st.composite
def programs(draw: Any, twice_share: float = 0.3) -> Program:
    twice = draw(st.floats(0.0, 1.0)) < twice_share
    writer = Writer(draw, twice)
    source, scalar = writer.program()
    return Program(source, scalar, twice and scalar, frozenset(writer.features))
