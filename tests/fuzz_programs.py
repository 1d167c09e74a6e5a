"""Random programs in the subset adgen differentiates, for ``tests/test_fuzz.py``.

:func:`programs` is a hypothesis strategy that writes a module holding ``program(x, y, s)``
(``x`` of shape (3, 4), ``y`` of shape (4,), ``s`` a Python float; for some programs a
fourth argument ``p``, a dict or tuple of arrays and floats, :data:`CONTAINERS`) and the
small helper functions it calls. :func:`write_program` writes one from any source of
random choices (:class:`Choices`): hypothesis's, or a seeded ``random.Random`` for
``tests/fuzz_run.py``. A program is a sequence of statements, each drawn from:

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
* ``augment``: ``z += v`` (``-=``, ``*=``) where ``z`` is another name of a Python float,
  an item of a vector, a view of a temporary or a new array;
* ``inplace``: an array made inside the program (``np.zeros``, ``.copy()``,
  ``np.copy``) written with ``v[i] = ...``, ``v[1:] += ...``, ``v[mask] = ...``,
  ``v[:, j] = ...``;
* ``if`` / ``for`` / ``while``: branches on differentiated values (comparisons of
  sums, maxima, floats; ``and``/``or``; conditional expressions), ``for`` loops over
  ``range`` carrying state, ``while`` loops with a bounded counter (and a value
  condition), ``break`` and ``continue``;
* ``early``: an early ``return`` in an ``if`` (never in a loop), of a scalar or of a
  tuple (the same shapes as the last ``return``; some of constants, ``np.ones(...)``),
  maybe in an ``if`` nested in another whose body then binds names again;

and the classes of constructs an independent fuzzer found adgen silently wrong or
crashing on:

* ``loopvar``: a loop variable read after its loop: after a ``break``, after a loop
  that ran zero times when the name was bound before it, rows of ``for r in a``,
  ``enumerate``;
* ``rebind``: the name a ``for`` loop iterates over bound again inside the loop (with
  a new shape too; its items unpacked, or one name for the pair ``zip`` gives);
* ``closure`` / ``call``: a ``lambda`` or nested ``def`` reading a name of the program
  that is bound again after the function is made (late binding), called before and after;
* ``overlap`` (a form of the in-place writes): a write through an overlapping view of
  the same array (``b[::-1] = b``, ``b[1:] = b[:-1]``, ``b[:2] = b[1:3]``,
  ``b[1:] += b[:-1]``, ``w[:, ::-1] = w``...);
* ``singular``: ``np.sqrt``, ``** 0.5``, ``np.cbrt``, ``np.abs``, ``np.arctan2``,
  ``np.hypot``, ``np.linalg.norm``, ``np.arccos``, ``scipy.special.entr``... of an
  ``np.zeros`` / ``np.ones`` array with some entries written from the inputs: the other
  entries sit where the rule's derivative is infinite or undefined, but they are
  constants (their derivative is 0);
* ``nested``: ``adgen.grad`` / ``value_and_grad`` / ``jvp`` / ``vjp`` of a lambda or a
  nested ``def`` (parameters maybe shadowing the program's names) inside the program:
  alone, in ``if`` / ``while`` conditions, in comprehensions, on lines with operators
  and ``@``;
* ``stack``: lists and tuples of scalars (and arrays) passed to ``np.hstack``,
  ``np.stack``, ``np.vstack``, ``np.column_stack``, ``np.concatenate``, ``np.array``,
  ``np.append``;
* ``split``: ``np.split``, ``np.array_split``, ``np.hsplit``, ``np.vsplit``, their parts
  unpacked, indexed, iterated, stacked, summed or concatenated again;
* container arguments: ``p["a"]``, ``p[0]``, ``p["bs"][1]`` read in place, or unpacked.

Each construct a program uses is listed in ``Program.features`` (hypothesis events).

Every value stays in a bounded range (arguments of functions with a restricted domain
are squashed into it with ``tanh``), so finite differences are meaningful; kinks
(``max``, ``clip``, ``abs``...) are reached with probability zero. Arrays written in
place are never aliased or viewed by another name (adgen refuses such writes, rightly).
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

from adgen.rules import registered
from adgen.rules.namespace import spelling
from adgen.rules.samples import ANY, Domain, draw

Shape = tuple[int, ...] | None  # None: a Python float

INPUTS: dict[str, Shape] = {"x": (3, 4), "y": (4,), "s": None}
# the layouts of a fourth argument `p`, a container (a list stands for a tuple of values)
Layout = Any  # a Shape, a dict of layouts, or a list of layouts
CONTAINERS: dict[str, Layout] = {
    "dict": {"a": (2,), "b": None, "c": (2, 3)},
    "tuple": [(3,), (2, 2)],
    "nested": {"w": (2, 3), "bs": [(3,), None]},
}
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


def build(layout: Layout, leaf: Any) -> Any:
    """A value of ``layout``, each leaf ``leaf(shape)``."""
    if isinstance(layout, dict):
        return {k: build(v, leaf) for k, v in layout.items()}
    if isinstance(layout, list):
        return tuple(build(v, leaf) for v in layout)
    return leaf(layout)


def leaves(layout: Layout, base: str) -> list[tuple[str, Shape]]:
    """The leaves of ``layout`` as expressions reading them from ``base``, with shapes."""
    if isinstance(layout, dict):
        return [leaf for k, v in layout.items() for leaf in leaves(v, f'{base}["{k}"]')]
    if isinstance(layout, list):
        return [leaf for i, v in enumerate(layout) for leaf in leaves(v, f"{base}[{i}]")]
    return [(base, layout)]


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


# -- where the random choices come from -------------------------------------------------------


class Choices:
    """The random choices a :class:`Writer` makes: from hypothesis (which shrinks a failing
    program) or from a seeded generator (``tests/fuzz_run.py``: fast, and program ``n`` of
    seed ``k`` is written again from ``(k, n)`` alone)."""

    def integer(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def boolean(self) -> bool:
        raise NotImplementedError

    def pick(self, options: Any) -> Any:
        raise NotImplementedError

    def uniform(self, lo: float, hi: float) -> float:
        raise NotImplementedError

    def permutation(self, values: Any) -> list[Any]:
        raise NotImplementedError


class HypothesisChoices(Choices):
    def __init__(self, draw: Any) -> None:
        self.draw = draw  # hypothesis's draw function

    def integer(self, lo: int, hi: int) -> int:
        return int(self.draw(st.integers(lo, hi)))

    def boolean(self) -> bool:
        return bool(self.draw(st.booleans()))

    def pick(self, options: Any) -> Any:
        return self.draw(st.sampled_from(list(options)))

    def uniform(self, lo: float, hi: float) -> float:
        return float(self.draw(st.floats(lo, hi)))

    def permutation(self, values: Any) -> list[Any]:
        return list(self.draw(st.permutations(list(values))))


class SeededChoices(Choices):
    def __init__(self, seed: Any) -> None:
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def pick(self, options: Any) -> Any:
        options = list(options)
        return options[self.rng.randrange(len(options))]

    def uniform(self, lo: float, hi: float) -> float:
        return self.rng.uniform(lo, hi)

    def permutation(self, values: Any) -> list[Any]:
        values = list(values)
        self.rng.shuffle(values)
        return values


# statement kinds for the classes of constructs an independent fuzzer found adgen wrong on
NEW_KINDS = frozenset(
    ["loopvar", "rebind", "closure", "call", "singular", "nested", "stack", "split"]
    # issue 33: names shared between globals, parameters and adgen's own names; boolean
    # operators reading the name they bind; nested loops with break over reversed ranges,
    # zip and enumerate; in-place updates the argument kinds decide
    + ["shadow", "boolself", "loopnest", "augself"]
    # issue 34: code no derivative passes through, around active code; try/with blocks
    # that only guard, functions chosen in branches, buffers written or swapped in loops
    + ["inactive", "guarded"]
    # issue 34's public programs: generators iterated where they are called, or taken whole
    + ["generator"]
    # random draws: computed where and as often as Python does (never merged, moved or dropped)
    + ["draw"]
    # a container's items keep their values when a block binds their names again
    + ["kept"]
    # a list rebound to the array made of it; a helper passing `out=` on into the caller's
    # buffer (or None); comprehensions in helpers whose locals are named like adgen's names
    + ["rebuilt", "outbuffer", "comprehended"]
)

# module-level globals named like the program's parameters (`y`, `s`) and like names adgen
# makes up (`out`, `out_1`, `t`), read by the helpers `stmt_shadow` calls
SHADOWED_GLOBALS = (
    "y = np.array([0.3, -0.2, 0.5, 0.1])\n"
    "s = 0.375\n"
    "out = 0.625\n"
    "out_1 = np.array([0.25, -0.5, 0.75, 1.0])\n"
    "t = 1.5\n"
)
SHADOW_HELPERS = {
    # name: (source, returns a scalar)
    "shadow_a": ("def shadow_a(u):\n    return np.tanh(u) * s + np.sum(y) * u * 0.5\n", False),
    "shadow_b": ("def shadow_b(u):\n    return u * out + np.sin(u) * np.sum(out_1) * t\n", False),
    "shadow_c": (
        "def shadow_c(u):\n    return np.sum(np.sin(u) * s) + np.sum(u * u) * np.sum(y * out_1)\n",
        True,
    ),
}


# -- the program being written ---------------------------------------------------------------


@dataclass
class Scope:
    """The values a statement may read: name -> shape."""

    shapes: dict[str, Shape]
    writable: set[str] = field(default_factory=set)  # arrays made here, never aliased
    fixed: set[str] = field(default_factory=set)  # read, never rebound (`p["a"]`)
    local: set[str] = field(default_factory=set)  # bound in this block (not outside it)
    closures: dict[str, str] = field(default_factory=dict)  # function -> the name it reads
    # names the enclosing blocks bound (their statements after this block assume their shapes)
    inherited: set[str] = field(default_factory=set)

    def child(self) -> Scope:
        return Scope(
            dict(self.shapes),
            set(self.writable),
            set(self.fixed),
            set(),
            {**self.closures},
            set(self.shapes),
        )


class Writer:
    """Writes one random program, making its random choices with ``choices``."""

    def __init__(
        self,
        choices: Choices,
        twice: bool,
        container: str | None = None,
        without: frozenset[str] = frozenset(),
    ) -> None:
        self.choices = choices
        self.without = without  # statement kinds not to write
        self.twice = twice  # only rules whose second derivative adgen checks
        self.container = container  # the layout of the argument `p` (CONTAINERS), if any
        self.loops = 0  # loops around the statement being written (no `return` inside one)
        self.result: Shape | str = "scalar"  # or the shape of a tuple result's second item
        self.names = itertools.count(1)
        self.helpers: list[str] = []  # source of each helper function
        self.helper_kinds: list[tuple[str, int, bool]] = []  # name, arity, returns a pair
        self.imports: set[str] = set()  # standard modules the program imports
        self.features: set[str] = set()
        self.depth = 0  # nesting of the statement being written
        self.exposed: set[str] = set()  # values the result must read

    # small pieces

    def write_once(self, text: str) -> None:
        """Add ``text`` (a helper, a class, globals) to the module, unless written already."""
        if text not in self.helpers:
            self.helpers.append(text)

    def fresh(self, prefix: str = "v") -> str:
        return f"{prefix}{next(self.names)}"

    def pick(self, options: Any) -> Any:
        return self.choices.pick(options)

    def const(self) -> str:
        return repr(self.pick(CONSTANTS))

    def offset(self) -> str:
        """A constant no other statement uses: ties between arguments of a kink are avoided."""
        return repr(round(round(self.choices.uniform(0.05, 0.45), 4) + 0.00013, 5))

    def source(
        self, scope: Scope, *, arrays: bool = False, readable: bool = True, rebind: bool = False
    ) -> str:
        """A name to read (``readable=False``: not an array written in place; ``rebind``: one
        the program may bind again, not a piece of a container argument)."""
        names = [
            n
            for n, s in scope.shapes.items()
            if (not arrays or s is not None)
            and (readable or n not in scope.writable)
            and (not rebind or n not in scope.fixed)
        ]
        return self.pick(sorted(names))

    def bind(self, scope: Scope, name: str, shape: Shape) -> None:
        if shape and 0 in shape:
            return  # an empty array: not read again
        scope.shapes[name] = shape
        scope.local.add(name)

    def fits(self, scope: Scope, shape: Shape) -> list[str]:
        """Names whose shape broadcasts to ``shape``."""
        return sorted(n for n, s in scope.shapes.items() if broadcast(s, shape) == shape)

    # statements: each returns (lines, name, shape) or None when the draw does not fit

    def statement(self, scope: Scope, indent: str, depth: int) -> list[str]:
        kinds = ["prim", "prim", "arith", "arith", "reduce", "index", "product", "example"]
        kinds += ["math", "tuple", "helper", "inplace", "opaque", "augment", "callback", "method"]
        kinds += ["outside_iter", "item_list"]
        # the constructs an independent fuzzer found adgen wrong or crashing on
        kinds += sorted(NEW_KINDS - {"call"})
        if scope.closures:
            kinds.append("call")
        if depth < 2:
            kinds += ["if", "for", "while"]
        if depth < 3:  # (inside a loop too: it leaves the loop, returning after it)
            kinds.append("early")
        kind = self.pick([k for k in kinds if k not in self.without] or ["arith"])
        self.depth = depth
        if kind in ("if", "for", "while", "early"):
            return getattr(self, "block_" + kind)(scope, indent, depth)
        made = getattr(self, "stmt_" + kind)(scope)
        if made is None:
            return []
        lines, name, shape = made
        self.features.add(kind)
        if name is not None:
            self.bind(scope, name, shape)
            if kind in NEW_KINDS:
                self.exposed.add(name)
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
        if self.choices.boolean():
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
        keep = self.choices.boolean()
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
        inner = index[1:-1]
        if index.startswith("[[") and index.count("[") == 2 and self.pick([False, True]):
            # the index list bound to a name first (a tuple atom for adgen, a list for Python)
            held = self.fresh()
            self.features.add("index: a list bound to a name")
            return [f"{held} = {inner}", f"{name} = {a}[{held}]"], name, result
        if len(shape) >= 2 and shape[1] >= 2 and index == "[0]" and self.pick([False, True]):
            held = self.fresh()
            self.features.add("index: a tuple bound to a name")
            return [f"{held} = (0, 1)", f"{name} = {a}[{held}]"], name, np.zeros(shape)[0, 1].shape
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
            seed = self.choices.integer(0, 2**16)
            noise = np.round(np.random.default_rng(seed).uniform(-0.5, 0.5, shape), 3)
            expr = f"np.resize({a}, {shape}) + np.array({noise.tolist()})"
        if domain.kind == "uniform":
            return [f"{name} = {squash(expr, domain, shape)}"]
        if domain.kind == "distinct":  # entries far apart: no ties in sorts and extrema
            ranks = np.reshape(np.array(self.choices.permutation(range(size)), float), shape)
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
        if not floats or self.choices.integer(0, 3) == 0:
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

    def stmt_opaque(self, scope: Scope) -> Any:
        """A call adgen has no rule for, run as written: on constants (its result a constant
        of the derivative), or reading any value, as a statement whose value is unused."""
        if self.choices.boolean():
            return [f"str({self.source(scope)})"], None, None
        name = self.fresh("t")
        k = self.choices.integer(0, 2)
        return [f"{name} = float(np.histogram(np.arange(6.0), bins=3)[0][{k}])"], name, None

    def stmt_draw(self, scope: Scope) -> Any:
        """Random draws the program makes reproducible at each call: from a generator it
        seeds, or from NumPy's global one after ``np.random.seed``; two draws with the same
        arguments (other numbers), maybe a draw whose value is unused before them, scaling
        a differentiated value."""
        a = self.source(scope)
        shape = scope.shapes[a]
        size = "" if shape in (None, ()) else f", size={shape}"
        seed = self.choices.integer(0, 99)
        lines = []
        if self.choices.boolean():
            owner = self.fresh("rng")
            lines.append(f"{owner} = np.random.default_rng({seed})")
            self.features.add("draw: generator")
        else:
            owner = "np.random"
            lines.append(f"np.random.seed({seed})")
            self.features.add("draw: global")

        def draw() -> str:
            law = self.pick(["normal(0.0, 1.0", "uniform(0.5, 1.5"])
            return f"{owner}.{law}{size})"

        if self.choices.boolean():
            lines.append(draw())
            self.features.add("draw: unused")
        first, second, name = self.fresh("r"), self.fresh("r"), self.fresh()
        lines += [f"{first} = {draw()}", f"{second} = {draw()}"]
        lines.append(f"{name} = {a} * ({first} - 0.5 * {second})")
        return lines, name, shape

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
        self.bind(scope, p, shape)
        return lines, q, shape

    def helper(self) -> tuple[str, int, bool]:
        """A helper of the module: a new one, or one written before."""
        if self.helper_kinds and self.choices.boolean():
            return self.pick(self.helper_kinds)
        name = f"helper_{len(self.helpers) + 1}"
        arity = self.choices.integer(1, 2)
        params = ["u", "w"][:arity]
        body = []
        w = params[-1]
        body.append(f"    t = np.tanh(u) * {self.const()} + np.sin({w})")
        if self.choices.boolean():
            body += ["    if np.sum(t) > 0.0:", "        t = t * t", "    else:", "        t = -t"]
        if self.helper_kinds and self.choices.boolean():
            inner, inner_arity, inner_pair = self.pick(self.helper_kinds)
            call = f"{inner}({', '.join(['t', 'u'][:inner_arity])})"
            body.append(f"    t = {call}[0] * {self.const()}" if inner_pair else f"    t = {call}")
        pair = self.choices.boolean()
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
            self.bind(scope, other, shape)
            return [f"{name}, {other} = {fn}({', '.join(args)})"], name, shape
        return [f"{name} = {fn}({', '.join(args)})"], name, shape

    def stmt_callback(self, scope: Scope) -> Any:
        """A function passed as a value to a helper of the module that calls it in a loop (an
        Euler integrator): a NumPy function, a helper of the module, a lambda written in the
        call (reading a value of the program), or a closure of the program."""
        self.write_once(
            "def integrate(f, u, n):\n"
            "    for _ in range(n):\n"
            "        u = u + 0.25 * f(u)\n"
            "    return u\n"
        )
        a = self.source(scope, readable=False)
        shape = scope.shapes[a]
        shape = () if shape is None else shape  # np.tanh of a Python float
        options = ["np.tanh", "np.sin", f"lambda v: np.tanh(v) * {self.const()}"]
        options += [h for h, arity, pair in self.helper_kinds if arity == 1 and not pair]
        reads = [n for n, s in scope.shapes.items() if s is None or s == ()]
        if reads:
            options.append(f"lambda v: np.sin(v) * {self.pick(sorted(reads))}")
        f = self.pick(options)
        self.features.add("callback: " + f.split("(")[0].split(":")[0].split(" ")[0])
        name = self.fresh()
        return [f"{name} = integrate({f}, {a}, {self.choices.integer(1, 3)})"], name, shape

    def stmt_generator(self, scope: Scope) -> Any:
        """A generator of the module (it yields a step's index and state, as autograd's
        ``unpack_layers`` yields a layer's weights) iterated by a ``for`` where it is called,
        the loop's body reading what it yields; or taken whole by ``sum``."""
        self.write_once(
            "def steps(u, n, c):\n"
            "    for k in range(n):\n"
            "        if k % 2 == 0:\n"
            "            u = np.tanh(u) * c + 0.1 * k\n"
            "        else:\n"
            "            u = np.sin(u) - c\n"
            "        yield k, u\n"
            "    yield n, u * c\n"
        )
        a = self.source(scope, readable=False)
        shape = scope.shapes[a]
        shape = () if shape is None else shape  # np.tanh of a Python float
        n, c = self.choices.integer(0, 3), self.const()
        name = self.fresh()
        if self.choices.boolean():
            return [f"{name} = sum(v * {c} for _, v in steps({a}, {n}, {c}))"], name, shape
        k, item = self.fresh(), self.fresh()
        return (
            [
                f"{name} = {a} * 0.5",
                f"for {k}, {item} in steps({a}, {n}, {c}):",
                f"    {name} = {name} * np.cos({item}) + {k} * {item}",
            ],
            name,
            shape,
        )

    def affine_helper(self) -> None:
        """The module's class ``Affine`` and its instance ``OUTSIDE``, written once."""
        self.write_once(
            "class Affine:\n"
            "    def __init__(self, w, c=0.5):\n"
            "        self.w = w\n"
            "        self.c = c\n"
            "\n"
            "    def __call__(self, u):\n"
            "        return np.tanh(self.w * u) + self.c\n"
            "\n"
            "    def shift(self, d):\n"
            "        self.c = self.c + d\n"
            "        return self(d)\n"
            "\n"
            "\n"
            "OUTSIDE = Affine(0.75, c=-0.25)\n"
        )

    def stmt_method(self, scope: Scope) -> Any:
        """A method of an object of a module-level class: one made outside the program (its
        attributes are constants), or one made inside from the program's values (its
        attributes carry derivatives), its state written again by a method."""
        self.affine_helper()
        u = self.source(scope, readable=False)
        name = self.fresh()
        if self.choices.boolean():
            shape = scope.shapes[u]
            self.features.add("method: of an object made outside")
            return [f"{name} = OUTSIDE({u}) * OUTSIDE.w"], name, () if shape is None else shape
        w = self.source(scope, readable=False)
        shape = broadcast(scope.shapes[w], scope.shapes[u])
        if shape is False:
            return None
        shape = () if shape is None else shape
        if self.choices.boolean():
            self.features.add("method: instance called where it is made")
            return [f"{name} = Affine({w})({u}) * 0.5"], name, shape
        m = self.fresh("m")
        lines = [f"{m} = Affine({w})"]
        if self.choices.boolean():
            lines.append(f"{name} = {m}({u}) + {m}.shift({u})")
            self.features.add("method: state written again")
        else:
            lines.append(f"{name} = {m}({u}) * {m}.c")
            self.features.add("method: of an instance made inside")
        return lines, name, shape

    def stmt_outside_iter(self, scope: Scope) -> Any:
        """A loop (or generator, comprehension, enumerate) over a dict or a set of the module:
        Python iterates a dict's keys -- with integer keys, reading it by position gives its
        values instead -- and a set's items in its own order."""
        self.write_once(
            'TABLE = {2: 0.5, 0: 1.5, 1: -0.25}\nTAGS = frozenset(["ab", "c", "def"])\n'
        )
        u = self.source(scope, readable=False)
        shape = scope.shapes[u]
        shape = () if shape is None else shape
        name = self.fresh()
        form = self.pick(["loop", "generator", "enumerate", "set", "items", "values"])
        self.features.add(f"outside iteration: {form}")
        if form == "items":  # (the weighted sum of named parts a training script writes)
            k, w = self.fresh("k"), self.fresh("w")
            return (
                [
                    f"{name} = {u} * 0.0",
                    f"for {k}, {w} in TABLE.items():",
                    f"    {name} = {name} + np.tanh({u} * {w}) * {k}",
                ],
                name,
                shape,
            )
        if form == "values":
            w = self.fresh("w")
            return [f"{name} = sum({u} * {w} for {w} in TABLE.values())"], name, shape
        if form == "loop":
            k = self.fresh("k")
            return (
                [f"{name} = {u} * 0.0", f"for {k} in TABLE:", f"    {name} = {name} + {u} * {k}"],
                name,
                shape,
            )
        if form == "generator":
            k = self.fresh("k")
            return [f"{name} = sum(np.sin({u}) * {k} for {k} in TABLE)"], name, shape
        if form == "enumerate":
            i, k = self.fresh("i"), self.fresh("k")
            return (
                [f"{name} = sum({u} * ({i} + {k}) for {i}, {k} in enumerate(TABLE))"],
                name,
                shape,
            )
        t = self.fresh("t")
        return [f"{name} = {u} * len([{t} for {t} in TAGS if len({t}) > 1])"], name, shape

    def stmt_item_list(self, scope: Scope) -> Any:
        """A list of a fixed length written by index and read by index, by a loop or by a
        ``*`` spread (``args = list(args); args[k] = f(args[k]); g(*args)``): at the function's
        top level adgen knows it item by item, in a block it is a list made when the code
        runs; an item read before a write keeps the value it had."""
        self.write_once(
            "def item_wrap(*args):\n"
            "    args = list(args)\n"
            "    args[1] = np.sin(args[1]) * 0.75\n"
            "    return args[0] * args[1] - args[2]\n"
        )
        a = self.source(scope, readable=False)
        shape = scope.shapes[a]
        shape = () if shape is None else shape
        same = [n for n in self.fits(scope, shape) if n not in scope.writable] or [a]
        b, c = self.pick(same), self.pick(same)
        xs, name = self.fresh("xs"), self.fresh()
        form = self.pick(["write", "kept", "loop", "spread", "wrap"])
        if form == "spread" and self.depth > 0:  # (a list made in a block: its length is
            form = "wrap"  # not known when transforming, and `*xs` is refused by name)
        self.features.add(f"item list: {form}")
        lines = [f"{xs} = [{a}, {b} * {self.const()}, {c}]"]
        if form == "write":
            lines += [
                f"{xs}[2] = {xs}[2] * {xs}[0] + {self.const()}",
                f"{xs}[0] = np.tanh({xs}[1])",
            ]
            lines += [f"{name} = {xs}[0] * {xs}[2] - {xs}[1]"]
        elif form == "kept":  # (an item read, then its slot written: the old value read)
            old = self.fresh("old")
            lines += [f"{old} = {xs}[1]", f"{xs}[1] = np.cos({xs}[1]) * {self.const()}"]
            lines += [f"{name} = {old} * {xs}[1] + {xs}[2] + {xs}[0]"]
        elif form == "loop":  # (an index known only when the code runs)
            k = self.fresh("k")
            lines += [f"{xs}[1] = {xs}[1] * {xs}[2]", f"{name} = {a} * 0.0"]
            lines += [f"for {k} in range(len({xs})):", f"    {name} = {name} + {xs}[{k}] * {k}"]
        elif form == "spread":
            lines += [f"{xs}[0] = np.sin({xs}[0]) + {xs}[2]", f"{name} = item_wrap(*{xs})"]
        else:
            lines += [f"{name} = item_wrap({a}, {b}, {c}) + {xs}[1]"]
        return lines, name, shape

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
        for _ in range(self.choices.integer(1, 3)):
            lines += self.write(inner, name, "")
        scope.writable.add(name)
        return lines, name, shape

    def stmt_augment(self, scope: Scope) -> Any:
        """``z op= v`` where Python makes a new value or updates an array nobody else sees:
        ``z`` another name of a Python float, an item of a vector (a NumPy number), a view
        of a temporary (``np.reshape(a * c, (-1,))``) or a new array."""
        a = self.source(scope)
        shape = scope.shapes[a]
        forms: list[tuple[str, Shape]] = [(f"{a} * {self.const()}", shape)]
        if shape is None:
            forms.append((a, None))
        elif len(shape) == 1 and shape[0] > 0:
            forms.append((f"{a}[{self.choices.integer(0, shape[0] - 1)}]", ()))
        if shape:
            size = int(np.prod(shape))
            forms.append((f"np.reshape({a} * {self.const()}, (-1,))", (size,)))
        init, zshape = self.pick(forms)
        name = self.fresh()
        lines = [f"{name} = {init}"]
        for _ in range(self.choices.integer(1, 2)):
            fits = [
                n
                for n in self.fits(scope, zshape or ())
                if n != name and (zshape is not None or scope.shapes[n] is None)
            ]
            if self.choices.integer(0, 2) == 0 or not fits:
                lines.append(f"{name} *= {self.const()}")
            else:
                op = self.pick(["+=", "-="])
                lines.append(f"{name} {op} np.tanh({self.pick(fits)})")
        self.features.add("augment " + ("number" if not zshape else "array"))
        return lines, name, zshape

    def write(self, scope: Scope, w: str, indent: str, loop_var: str | None = None) -> list[str]:
        """One in-place write into the array ``w`` (made by the program)."""
        shape = scope.shapes[w]
        assert shape
        forms = ["row", "tail", "mask", "scale", "overlap", "writecall"]
        if len(shape) == 2:
            forms.append("column")
        form = self.pick([f for f in forms if f not in self.without])
        if form == "overlap":
            return [indent + self.overlap(w, shape)]
        if form == "writecall":
            self.features.add("writecall")
            return [indent + self.write_call(scope, w, shape)]
        others = [n for n in scope.shapes if n != w]
        if form == "row":
            row = loop_var if loop_var else str(self.choices.integer(0, shape[0] - 1))
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
            col = self.choices.integer(0, shape[1] - 1)
            src = self.pick(self.fits(scope, (shape[0],)) or [w])
            rhs = f"np.tanh({src})" if src != w else f"{w}[:, {col}] ** 2"
            line = f"{w}[:, {col}] = {rhs}"
        return [indent + line]

    def write_call(self, scope: Scope, w: str, shape: tuple[int, ...]) -> str:
        """A call that writes into ``w``: ``np.add.at`` (repeated rows adding up),
        ``np.subtract.at``, ``w.fill``, ``w.sort``, ``np.copyto``, ``np.put``, ``np.putmask``,
        ``np.put_along_axis``."""
        rows = self.fits(scope, shape[1:]) or [w + "[0]"]
        row = self.pick(rows)
        whole = self.pick(self.fits(scope, shape) or [w])
        last = int(np.prod(shape)) - 1
        k = self.choices.integer(0, shape[0] - 1)
        forms = [
            f"np.add.at({w}, np.array([0, {k}, 0]), np.tanh({row}))",
            f"np.subtract.at({w}, np.array([{k}, {k}]), {self.const()} * np.sin({row}))",
            f"{w}.fill({self.const()} * np.mean({whole}))",
            f"{w}.sort(axis=0)" if len(shape) > 1 else f"{w}.sort()",
            f"np.copyto({w}, np.sin({whole}) + {w})",
            f"np.put({w}, [0, {last}, -1], np.tanh(np.sum({whole})))",
            f"np.putmask({w}, {w} > {self.offset()}, np.sin({whole}))",
        ]
        if len(shape) == 2:
            cols = ", ".join(f"[{self.choices.integer(0, shape[1] - 1)}]" for _ in range(shape[0]))
            value = f"np.reshape(np.cos({row}), -1)[:1]"
            forms.append(f"np.put_along_axis({w}, np.array([{cols}]), {value}, axis=1)")
        return self.pick(forms)

    def overlap(self, w: str, shape: tuple[int, ...]) -> str:
        """A write of ``w`` into itself through an overlapping view: NumPy copies the
        right-hand side first (``b[::-1] = b`` reverses ``b``)."""
        forms = ["{w}[::-1] = {w}", "{w}[1:] = {w}[:-1]", "{w}[:-1] = {w}[1:]"]
        forms += ["{w}[1:] += {c} * {w}[:-1]", "{w}[::-1] = {w} * {c}", "{w}[::-1] += {w}"]
        if shape[0] >= 3:
            forms += ["{w}[:2] = {w}[1:3]", "{w}[1:3] = {w}[:2]"]
        if len(shape) == 2:
            forms += ["{w}[:, ::-1] = {w}", "{w}[:, 1:] = {w}[:, :-1]", "{w}[1:, ::-1] = {w}[:-1]"]
            if shape[0] == shape[1]:
                forms.append("{w}[:] = {w}.T")
        form = self.pick(forms)
        self.features.add("overlapping write " + form.format(w="w", c="c"))
        return form.format(w=w, c=self.const())

    # the constructs an independent fuzzer found adgen wrong on (issue "Never silently
    # wrong, again"): each a statement kind of its own

    def shape_of(self, scope: Scope, expr: str) -> Shape | bool:
        """The shape of ``expr`` (None: a Python float), evaluated on zeros of the scope's
        shapes; False if it does not evaluate."""
        env: dict[str, Any] = {"np": np, "math": math}
        for n, s in scope.shapes.items():
            if n.isidentifier():
                env[n] = 0.0 if s is None else np.zeros(s)
        if self.container:
            env["p"] = build(
                CONTAINERS[self.container], lambda s: 0.0 if s is None else np.zeros(s)
            )
        try:
            with np.errstate(all="ignore"):
                value = eval(expr, env)
        except Exception:
            return False
        return None if isinstance(value, float) else tuple(np.shape(value))

    def stmt_loopvar(self, scope: Scope) -> Any:
        """A loop variable read after its loop: after a ``break``, or after a loop that ran
        zero times when the name was bound before it."""
        arr = self.source(scope, arrays=True, readable=False)
        shape = scope.shapes[arr]
        if not shape:
            return None
        n, row = shape[0], shape[1:]
        form = self.pick(["index break", "index zero", "row break", "row zero", "enumerate"])
        j, r, t, v = self.fresh("j"), self.fresh("r"), self.fresh("t"), self.fresh()
        c, off = self.const(), self.offset()
        lines = [f"{t} = 0.0"]
        if form.startswith("index"):
            if form == "index zero":
                lines.append(f"{j} = {self.choices.integer(0, n - 1)}")
                lines.append(f"for {j} in range({self.choices.integer(0, min(2, n))}):")
            else:
                lines.append(f"for {j} in range({self.choices.integer(1, n)}):")
                lines += [f"    if np.sum({arr}[{j}]) > {off}:", "        break"]
            lines.append(f"    {t} = {t} * 0.5 + np.sum(np.sin({arr}[{j}]))")
            lines.append(f"{v} = {arr}[{j}] * {c} + {t}")
        elif form.startswith("row"):
            if form == "row zero":
                lines.append(f"{r} = {arr}[{self.choices.integer(0, n - 1)}] * 0.5")
                lines.append(f"for {r} in {arr}[:{self.choices.integer(0, min(2, n))}]:")
            else:
                lines.append(f"for {r} in {arr}:")
                lines += [f"    if np.sum({r}) > {off}:", "        break"]
            lines.append(f"    {t} = {t} + np.sum(np.cos({r}))")
            lines.append(f"{v} = np.sin({r}) * {c} + {t}")
        else:
            lines.append(f"for {j}, {r} in enumerate({arr}):")
            lines += [f"    if np.sum({r}) > {off}:", "        break"]
            lines.append(f"    {t} = {t} + np.sum({r}) * {j}")
            lines.append(f"{v} = {r} * ({j} + {c}) + {t}")
        self.features.add("loop variable after the loop: " + form)
        return lines, v, row or ()

    def stmt_kept(self, scope: Scope) -> Any:
        """A tuple, list or dict holding a name, or a list grown by appends in a loop over a
        tuple, then that name bound again in a loop or a branch: the container's item keeps
        the value it was given (adgen once read the name's later value there)."""
        a = self.source(scope, readable=False)
        shape = scope.shapes[a]
        v, box, q, i = self.fresh(), self.fresh("box"), self.fresh(), self.fresh("i")
        c, c2, off = self.const(), self.const(), self.offset()
        # (a dict built key by key is known key by key only at the function's top level)
        forms = ["tuple", "list", "dict", "appended"] + (["dict key"] if self.depth == 0 else [])
        form = self.pick(forms)
        lines = [f"{v} = np.sin({a}) * {c}"]
        read = f"{box}[0]"
        if form == "tuple":
            lines.append(f"{box} = ({v}, {a})")
        elif form == "list":
            lines.append(f"{box} = [{v}, {a}]")
        elif form == "dict":
            lines.append(f'{box} = {{"first": {v}}}')
            read = f'{box}["first"]'
        elif form == "dict key":
            lines += [f"{box} = {{}}", f'{box}["first"] = {v}']
            read = f'{box}["first"]'
        else:
            lines += [f"{box} = []", f"for {i} in ({v}, {a}):", f"    {i} = {i} * {c2}"]
            lines += [f"    {box}.append({i})"]
            read = f"tuple({box})[0]"
        if self.choices.boolean():
            lines += [f"for {i} in range(2):", f"    {v} = np.tanh({v}) + {c2}"]
        else:
            lines += [f"if np.sum({v}) > {off}:", f"    {v} = {v} * {c2}"]
        lines.append(f"{q} = {read} * {c} + {v}")
        self.features.add(f"container item kept: {form}")
        return lines, q, shape

    def stmt_rebind(self, scope: Scope) -> Any:
        """The name a ``for`` loop iterates over, bound again inside the loop (the loop goes
        on over the value the name had when it started)."""
        names = sorted(
            n
            for n, s in scope.shapes.items()
            if s and n not in scope.writable and n not in scope.fixed
        )
        if not names:
            return None
        v = self.pick(names)
        shape = scope.shapes[v]
        assert shape
        r, j, t, c = self.fresh("r"), self.fresh("j"), self.fresh("t"), self.const()
        form = self.pick(["plain", "enumerate", "zip", "enumerate zip", "zip pair"])
        c2 = self.fresh("q") if form == "enumerate zip" else ""
        pair = self.fresh("pair")
        head = {
            "plain": f"for {r} in {v}:",
            "enumerate": f"for {j}, {r} in enumerate({v}):",
            "zip": f"for {r}, {j} in zip({v}, {v}[::-1]):",  # j: a row, from the end
            # nested unpacking: j the count, the row from the end bound to a name of its own
            "enumerate zip": f"for {j}, ({r}, {c2}) in enumerate(zip({v}, {v}[::-1])):",
            # one name for the pair (a tuple bound in the loop), its items read by index
            "zip pair": f"for {pair} in zip({v}, {v}[::-1]):",
        }[form]
        # a new shape only where no enclosing block's statements assume the old one
        # (a name of an enclosing block rebound here is in `local` too: not enough)
        change = (self.depth == 0 or v not in scope.inherited) and self.choices.boolean()
        if change:
            rebind, after = f"{v} = {r} * {c}", shape[1:] or ()
        else:
            rebind, after = f"{v} = np.tanh({v}) + {c} * {r}", shape
        use = f"{t} = {t} + np.sum(np.sin({r}) * {v})"
        if form != "plain":
            use = f"{t} = {t} + np.sum(np.sin({r}) * {v} * ({j} + 1.0))"
        if form == "enumerate zip":
            use = f"{t} = {t} + np.sum(np.sin({r}) * {v} * ({j} + 1.0) + np.cos({c2}))"
        body = [use, rebind] if self.choices.boolean() else [rebind, use]
        if form == "zip pair":
            body = [f"{r} = {pair}[0]", f"{j} = {pair}[1]", *body]
        scope.shapes[v] = after
        self.features.add(f"iterated name rebound in the loop: {form}" + (", new shape" * change))
        return [f"{t} = 0.0", head] + ["    " + line for line in body], t, ()

    def closure_body(self, u: str, cap: str) -> str:
        return self.pick(
            [f"np.sin({u}) * {cap}", f"np.tanh({u}) + {cap} * {u}", f"{u} * {cap} - np.cos({cap})"]
        )

    def stmt_closure(self, scope: Scope) -> Any:
        """A nested function (``lambda`` or ``def``) reading a name of the program that is
        bound again after the function is made: Python reads it when the function runs."""
        lines = []
        if self.choices.boolean():
            cap = self.source(scope, readable=False, rebind=True)
            cshape = scope.shapes[cap]
        else:
            cap, src = self.fresh("c"), self.source(scope, readable=False)
            lines.append(f"{cap} = {src} * {self.const()}")
            cshape = scope.shapes[src]
        a = self.source(scope, readable=False)
        shape = broadcast(scope.shapes[a], cshape)
        if shape is False:
            return None
        shape = () if shape is None else shape  # np.sin of a Python float
        self.bind(scope, cap, cshape)
        f, u = self.fresh("f"), self.pick(["u", "u", "s", "x"])
        if u == cap:
            u = "u"  # the parameter would hide the name the function reads
        body = self.closure_body(u, cap)
        if self.choices.boolean():
            lines.append(f"{f} = lambda {u}: {body}")
            self.features.add("closure: lambda")
        else:
            lines += [f"def {f}({u}):", f"    return {body}"]
            self.features.add("closure: def")
        first, second = self.fresh(), self.fresh()
        lines.append(f"{first} = {f}({a})")
        tanh = "math.tanh" if cshape is None else "np.tanh"
        if self.choices.boolean():
            lines.append(f"{cap} = {cap} * 0.5 + {self.const()}")
        else:
            k = self.fresh("i")
            lines.append(f"for {k} in range({self.choices.integer(1, 3)}):")
            inner = f"float(np.sum({f}({cap})))" if cshape is None else f"{f}({cap})"
            lines.append(f"    {cap} = {cap} * 0.75 + 0.25 * {tanh}({inner})")
        lines.append(f"{second} = {f}({a}) + {first}")
        self.bind(scope, first, shape)
        scope.closures[f] = cap
        self.features.add("closure: its name bound again")
        return lines, second, shape

    def stmt_call(self, scope: Scope) -> Any:
        """A later call of a closure (the name it reads may have been bound again since)."""
        f = self.pick(sorted(scope.closures))
        cap = scope.closures[f]
        a = self.source(scope, readable=False)
        shape = broadcast(scope.shapes[a], scope.shapes[cap])
        if shape is False:
            return None
        name = self.fresh()
        return [f"{name} = {f}({a})"], name, () if shape is None else shape

    def shadow_helper(self, name: str) -> str:
        self.write_once(SHADOWED_GLOBALS)
        source, _ = SHADOW_HELPERS[name]
        self.write_once(source)
        return name

    def stmt_shadow(self, scope: Scope) -> Any:
        """A helper reading module globals named like the program's parameters (``y``,
        ``s``) and like names adgen makes up (``out``, ``out_1``, ``t``): called, differentiated
        inside the program (``adgen.grad`` / ``jvp``), or called from a nested ``def`` whose
        parameter has such a name, or on a local of the program bound to such a name."""
        a = self.source(scope, readable=False)
        ashape = scope.shapes[a]
        shape = () if ashape is None else ashape
        name = self.fresh()
        form = self.pick(["call", "grad", "jvp", "def", "local"])
        self.features.add("shadow: " + form)
        if form == "grad":
            f = self.shadow_helper("shadow_c")
            return [f"{name} = adgen.grad({f})({a}) * {self.const()}"], name, shape
        f = self.shadow_helper(self.pick(["shadow_a", "shadow_b"]))
        if form == "jvp":
            tangent = "1.0" if ashape is None else f"np.ones_like({a})"
            return [f"{name} = adgen.jvp({f}, ({a},), ({tangent},))[1]"], name, shape
        if form == "def":
            inner, p = self.fresh("inner"), self.pick(["y", "s", "out", "t"])
            lines = [f"def {inner}({p}):", f"    return {f}({p}) * {self.const()}"]
            return lines + [f"{name} = {inner}({a})"], name, shape
        if form == "local":
            local = self.pick(["out", "out_1", "t", "y"])
            if local == "y" or local in scope.fixed:
                local = "out"  # the parameter y stays the program's argument
            lines = [f"{local} = {a} * {self.const()}", f"{name} = {f}({local}) + {local}"]
            self.bind(scope, local, shape)
            return lines, name, shape
        return [f"{name} = {f}({a})"], name, shape

    def scalar_source(self, scope: Scope) -> str:
        """A scalar expression of the program's values: a Python float or a NumPy number."""
        floats = sorted(n for n, s in scope.shapes.items() if s is None or s == ())
        a = self.source(scope, readable=False)
        forms = [f"np.sum({a}) * {self.const()}", f"float(np.mean({a}))"]
        if floats:
            forms.append(f"{self.pick(floats)} * {self.const()}")
        return self.pick(forms)

    def stmt_boolself(self, scope: Scope) -> Any:
        """``z = (a and z)`` and its kin in a loop: an operand (maybe nested in another
        boolean operator or a conditional expression) reads the name the line binds."""
        z = self.fresh("z")
        c, k = self.const(), self.offset()
        forms = [
            f"np.cosh({z}) and {z}",  # z: cosh is never 0
            f"0.0 * {z} or {z} * {c}",  # z * c
            f"({z} * 0.0 and {z}) + {z}",
            f"{z} * {c} if {z} > {k} else (np.cosh({z}) and {z})",
            f"({z} > {k} and ({z} * {c} or {z})) or {z} - {c}",
            f"{z} * (not ({z} > {k} + 5.0)) + {z} * {c}",
            f"(np.exp({z}) or {z}) * {c} + {z} * {c}",
            f"{z} * {c} or {z}",
        ]
        form = self.pick(forms)
        lines = [f"{z} = {self.scalar_source(scope)}"]
        k_loop = self.fresh("i")
        lines.append(f"for {k_loop} in range({self.choices.integer(1, 3)}):")
        lines.append(f"    {z} = {form}")
        if self.choices.boolean():
            lines.append(f"    {z} *= {self.const()}")
        if self.choices.boolean():  # a pair swapped through `and`
            w = self.fresh("z")
            lines = [lines[0], f"{w} = {z} * {c}", *lines[1:]]
            lines.append(f"    {z}, {w} = {w}, ({z} and {w} * {c})")
            self.bind(scope, w, ())
            self.exposed.add(w)
        self.features.add("boolean operator reading its target")
        return lines, z, ()

    def stmt_loopnest(self, scope: Scope) -> Any:
        """Nested loops with ``break``: the middle one over ``reversed(range(n))``,
        ``zip(range(n), reversed(range(n)))`` or ``enumerate(reversed(range(n)))``, an inner
        one maybe, state carried through all of them."""
        a = self.source(scope, readable=False)
        ashape = scope.shapes[a]
        shape = () if ashape is None else ashape
        fits = [n for n in self.fits(scope, shape) if n not in scope.writable] or [a]
        b = self.pick(fits)
        z = self.fresh("z")
        i, j, m = self.fresh("i"), self.fresh("j"), self.fresh("m")
        n = self.choices.integer(1, 3)
        middle = self.pick(
            [
                (f"for {j} in reversed(range({n})):", j),
                (f"for {j}, {m} in zip(range({n}), reversed(range({n}))):", f"({j} + {m})"),
                (f"for {j}, {m} in enumerate(reversed(range({n}))):", f"({j} * {m})"),
            ]
        )
        lines = [f"{z} = {a} * {self.const()}"]
        lines.append(f"for {i} in range({self.choices.integer(1, 3)}):")
        lines.append(f"    {middle[0]}")
        lines.append(f"        {z} = {z} * {self.const()} + np.tanh({b}) * 0.125 * {middle[1]}")
        if self.choices.boolean():
            k = self.fresh("k")
            lines.append(f"        for {k} in range({self.choices.integer(1, 3)}):")
            lines.append(f"            {z} = {z} * 0.875 + 0.0625 * np.sin({z})")
            lines.append(f"            if np.sum({z}) > {self.offset()}:")
            lines.append("                break")
        lines.append(f"        if {self.pick([f'np.sum({z}) < -{self.offset()}', f'{j} == 1'])}:")
        lines.append("            break")
        lines.append(f"    if {self.condition(scope)}:")
        lines.append("        break")
        self.features.add("nested loops with break: " + middle[0].split(" in ")[1].split("(")[0])
        return lines, z, shape

    def stmt_augself(self, scope: Scope) -> Any:
        """``z op= ...`` of a name bound to another name's value, read on the right too
        (``z = a; z += z``): a new value where ``a`` is a number, a write into ``a`` (refused)
        where it is an array -- the argument kinds decide, maybe only when the code runs."""
        # (Python floats only: a name of shape () may hold a 0-d array, which `+=` changes
        # in place, and adgen rightly refuses that)
        numbers = sorted(n for n, s in scope.shapes.items() if s is None)
        vectors = sorted(n for n, s in scope.shapes.items() if s and len(s) == 1)
        forms = [f"np.sum({self.source(scope, readable=False)})"]
        forms += numbers
        forms += [f"{v}[{self.choices.integer(0, scope.shapes[v][0] - 1)}]" for v in vectors]
        init = self.pick(forms)
        z = self.fresh("z")
        lines = [f"{z} = {init}"]
        for _ in range(self.choices.integer(1, 2)):
            op = self.pick(["+=", "*=", "-="])
            rhs = self.pick([z, f"np.tanh({z})", f"{z} * {self.const()}"])
            lines.append(f"{z} {op} {rhs}")
        self.features.add("augmented assignment reading its target")
        return lines, z, ()

    def stmt_inactive(self, scope: Scope) -> Any:
        """Code no derivative passes through around active code, as library code has it:
        validation that raises (never, at the values the program sees) with an f-string,
        ``%`` or ``.format`` message of differentiated values, ``raise ... from``, a string
        made and tested, ``hasattr`` / ``callable`` tests of an object made outside."""
        a = self.source(scope, readable=False)
        shape = scope.shapes[a]
        name = self.fresh()
        big = f"{self.choices.integer(2, 9)}e6"
        form = self.pick(
            ["raise", "raise from", "message", "hasattr", "callable"]
            + ["short-circuit", "conditional statement", "where", "spread", "option"]
        )
        self.features.add("inactive: " + form)
        message = self.pick(
            [
                # (single quotes outside: `p["a"]` inside an f-string is Python 3.12's)
                f"f'diverged: {{np.sum({a}):.3f}} > {big}'",
                f'"diverged: %.2f" % np.sum({a})',
                f'"diverged at {{}} of {{}}".format(np.max({a}), {big})',
            ]
        )
        lines = []
        if form in ("raise", "raise from"):
            lines.append(f"if np.sum(np.abs({a})) > {big}:")
            cause = ' from ValueError("not finite")' if form == "raise from" else ""
            lines.append(f"    raise FloatingPointError({message}){cause}")
            lines.append(f"{name} = {a} * {self.const()}")
        elif form == "short-circuit":  # `verbose and log(...)` as a statement
            lines.append(f"np.sum(np.abs({a})) > {big} and print({message})")
            lines.append(f"{name} = {a} * {self.const()}")
        elif form == "conditional statement":  # `warn(...) if c else None`
            self.imports.add("warnings")
            lines.append(f"warnings.warn({message}) if np.sum(np.abs({a})) > {big} else None")
            lines.append(f"{name} = np.tanh({a}) * {self.const()}")
        elif form == "where":  # a form the rule does not take, of data no derivative reads
            weight = self.fresh("wsum")
            lines.append(f"{weight} = np.sum(np.arange(1.0, 5.0), where=np.arange(4) != 2)")
            lines.append(f"{name} = {a} * ({weight} / 7.0) * {self.const()}")
        elif form == "spread":  # a shape spread into a tuple display
            lines.append(f"{name} = np.reshape({a} * {self.const()}, (*np.shape({a}),))")
        elif form == "option":  # a function chosen by an option known when transforming
            flag = self.fresh("opt")
            lines.append(f"{flag} = {self.pick(['True', 'False'])}")
            lines.append(f"{name} = (np.tanh if {flag} else np.sin)({a}) * {self.const()}")
        elif form == "message":
            text = self.fresh("msg")
            lines.append(f"{text} = {message}")
            lines.append(f"if len({text}) > 10000:")
            lines.append(f"    raise RuntimeError({text})")
            lines.append(f"{name} = np.tanh({a}) * {self.const()}")
        else:
            self.affine_helper()
            test = 'hasattr(OUTSIDE, "w")' if form == "hasattr" else "callable(OUTSIDE)"
            lines.append(f"if {test}:")
            lines.append(f"    {name} = {a} * OUTSIDE.w")
            lines.append("else:")
            lines.append(f"    {name} = {a} * OUTSIDE.missing_attribute")
        return lines, name, () if shape is None else shape

    def stmt_guarded(self, scope: Scope) -> Any:
        """The constructs adgen reads since issue 34, around active code: a ``try`` whose
        ``except`` raises again or goes on (the data deciding which path runs), ``with
        np.errstate(...)`` / ``warnings.catch_warnings()``, a function chosen in a branch the
        data decide (``f = np.tanh if ... else np.sin``), a
        buffer made before a loop that writes its entries, two buffers a loop swaps, and
        ``np.stack(tuple(... for k in range(n)))``."""
        a = self.source(scope, readable=False)
        ashape = scope.shapes[a]
        shape = () if ashape is None else ashape
        name, c = self.fresh(), self.const()
        form = self.pick(
            ["try", "recover", "errstate", "warnings", "choice", "rows", "swap", "stack"]
            + ["identity", "typetest", "chained", "check", "writer", "suppress"]
        )
        vector = ashape is not None and len(ashape) == 1 and ashape[0] >= 3
        if form in ("rows", "swap", "writer") and not vector:
            form = "choice"
        self.features.add("guarded: " + form)
        if form == "try":
            e = self.fresh("e")
            return (
                [
                    "try:",
                    f"    {name} = np.tanh({a}) * {c}",
                    f"except (ValueError, FloatingPointError) as {e}:",
                    f"    raise RuntimeError('failed: %s' % {e}) from {e}",
                    "else:",
                    f"    {name} = {name} + {a} * {self.const()}",
                ],
                name,
                shape,
            )
        if form == "recover":  # an except that goes on; the data decide which path runs
            return (
                [
                    "try:",
                    f"    {name} = np.tanh({a}) * {c}",
                    f"    if np.sum({a}) > {self.offset()}:",
                    '        raise ValueError("too large")',
                    "except ValueError:",
                    f"    {name} = np.sin({a}) * {self.const()}",
                ],
                name,
                shape,
            )
        if form == "suppress":  # `with contextlib.suppress(...)`: a try whose handler passes
            self.imports.add("contextlib")
            if self.choices.boolean():  # the data decide whether the body raises
                raising = f"(1.0 / float(int(np.sum({a}) > {self.offset()})))"
                body = [f"    {name} = {name} * {raising}"]
                caught = "ZeroDivisionError"
            else:  # an optional package that is not there
                pkg = self.fresh("pkg")
                body = [
                    f"    import adgen_fuzz_no_such_package as {pkg}",
                    f"    {name} = {pkg}.f({name})",
                ]
                caught = "ImportError, AttributeError"
            return (
                [
                    f"{name} = np.tanh({a}) * {c}",
                    f"with contextlib.suppress({caught}):",
                    *body,
                ],
                name,
                shape,
            )
        if form == "errstate":
            return (
                [
                    'with np.errstate(divide="ignore", invalid="ignore"):',
                    f"    {name} = np.log(np.abs({a}) + 1.0) * {c}",
                ],
                name,
                shape,
            )
        if form == "warnings":
            self.imports.add("warnings")
            return (
                [
                    "with warnings.catch_warnings():",
                    '    warnings.simplefilter("ignore")',
                    f"    {name} = np.sqrt({a} * {a} + 1.0) * {c}",
                ],
                name,
                shape,
            )
        if form == "choice":
            f = self.fresh("f")
            test = f"np.sum({a}) > {self.offset()}"
            if self.choices.boolean():
                lines = [f"{f} = np.tanh if {test} else np.sin"]
            else:
                lines = [f"if {test}:", f"    {f} = np.tanh", "else:", f"    {f} = np.cos"]
            return lines + [f"{name} = {f}({a}) * {c}"], name, shape
        if form in ("identity", "typetest", "chained", "check"):
            return self.checks_as_libraries_write(form, a, name, c), name, shape
        if form == "writer":  # a helper of the program's writing into the array it is given
            h, buf = self.fresh("scale_ends"), self.fresh("buf")
            return (
                [
                    f"def {h}(u, w):",
                    "    u[0] = u[0] * w",
                    "    u[-1] = u[-1] * w",
                    f"{buf} = np.tanh({a}) * {c}",
                    f"{h}({buf}, {self.const()})",
                    f"{name} = {buf} * 1.0",
                ],
                name,
                shape,
            )
        if form == "stack":
            k = self.fresh("k")
            n = self.choices.integer(1, 3)
            lines = [
                f"{name} = np.sum(np.stack(tuple({a} * ({k} + {c}) for {k} in range({n}))), axis=0)"
            ]
            return lines, name, shape
        assert ashape is not None
        size = ashape[0]
        i = self.fresh("i")
        if form == "rows":
            buf = self.fresh("buf")
            lines = [f"{buf} = np.zeros({size})", f"for {i} in range({size}):"]
            lines.append(f"    {buf}[{i}] = np.tanh({a}[{i}]) * {c} + {buf}[0] * 0.5")
            lines.append(f"{name} = {buf} * {self.const()}")
            return lines, name, shape
        u, un = self.fresh("u"), self.fresh("un")
        lines = [f"{u} = {a} * 1.0", f"{un} = np.zeros_like({u})"]
        lines.append(f"for {i} in range({self.choices.integer(1, 3)}):")
        lines.append(f"    {un}[1:-1] = {u}[1:-1] + 0.25 * ({u}[2:] - 2 * {u}[1:-1] + {u}[:-2])")
        lines.append(f"    {u}, {un} = {un}, {u}")
        lines.append(f"{name} = {u} * {c}")
        return lines, name, shape

    def checks_as_libraries_write(self, form: str, a: str, name: str, c: str) -> list[str]:
        """Validation as libraries write it around active code: identity of copies and new
        arrays (``b = a; b is a``), type tests of a value (``isinstance``, ``getattr(..,
        None)``, ``.ndim``), chained comparisons, a nested check that returns None or
        raises."""
        if form == "identity":
            b, z = self.fresh("b"), self.fresh("z")
            return [
                f"{b} = {a}",
                f"{z} = np.tanh({a})",
                f"if {b} is {a} and {z} is not {a}:",
                f"    {name} = {z} * {c}",
                "else:",
                f"    {name} = {a} * 0.0",
            ]
        if form == "typetest":  # (of a value a NumPy function made: an array or a NumPy scalar)
            t = self.fresh("t")
            test = self.pick(
                [
                    f"isinstance({t}, (np.ndarray, np.generic)) and {t}.ndim >= 0",
                    f'getattr({t}, "dtype", None) is not None',
                    f'hasattr({t}, "shape") and not hasattr({t}, "fit")',
                    f"isinstance({t}, (list, tuple))",
                ]
            )
            return [
                f"{t} = np.tanh({a})",
                f"if {test}:",
                f"    {name} = np.sin({t}) * {c}",
                "else:",
                f"    {name} = np.cos({t}) * {c}",
            ]
        if form == "chained":
            t = self.fresh("t")
            return [
                f"{t} = np.sum({a})",
                f"if {self.offset()} - 1.0 < {t} <= {self.offset()} + 1.0:",
                f"    {name} = {a} * {c}",
                "else:",
                f"    {name} = np.sin({a}) * {c}",
            ]
        h = self.fresh("check")
        return [
            f"def {h}(v, quiet):",
            "    if quiet:",
            "        return",
            "    if not np.all(np.isfinite(v)):",
            '        raise ValueError("not finite")',
            f"{h}({a}, {self.pick(['True', 'False'])})",
            f"{name} = np.exp(-{a} * {a}) * {c}",
        ]

    def stmt_singular(self, scope: Scope) -> Any:
        """A function at a point where its derivative is infinite or undefined (``sqrt`` at
        0, ``arctan2`` at (0, 0), ``arccos`` at 1...) on entries of an ``np.zeros`` /
        ``np.ones`` array that no input reaches: those entries are constants, their
        derivative is 0. The entries written from inputs stay away from the point."""
        pos, both = ((0.3, 1.5),), ((0.3, 1.5), (-1.5, -0.3))
        forms: list[tuple[str, str, Any]] = [
            ("np.sqrt({z})", "zeros", pos),
            ("{z} ** 0.5", "zeros", pos),
            ("np.power({z}, 0.5)", "zeros", pos),
            ("np.cbrt({z})", "zeros", both),
            ("np.abs({z})", "zeros", both),
            ("np.arctan2({z}, {c} * {z})", "zeros", both),
            ("np.arctan2({z} * {z}, {z})", "zeros", both),
            ("np.hypot({z}, {c} * {z})", "zeros", both),
            ("np.sqrt({z} * {z})", "zeros", both),
            ("np.linalg.norm({z}, axis=-1)", "zeros", both),
            ("np.arccos({z})", "ones", ((-0.8, 0.8),)),
            ("np.arcsin({z})", "ones", ((-0.8, 0.8),)),
            ("np.arccosh({z})", "ones", ((1.3, 3.0),)),
            ("scipy.special.entr({z})", "zeros", pos),
            ("scipy.special.xlogy({z}, {z})", "zeros", pos),
        ]
        template, base, domains = self.pick(forms)
        shape = self.pick([(4,), (3,), (3, 4), (2, 3)])
        if "norm" in template and len(shape) == 1:
            shape = (3, 4)
        lo, hi = self.pick(domains)
        z = self.fresh("z")
        lines = [f"{z} = np.{base}({shape})"]
        # entries written from the inputs; at least one row (or entry) is left as it is
        rows = self.choices.permutation(range(shape[0]))[: self.choices.integer(1, shape[0] - 1)]
        for k in sorted(rows):
            if len(shape) == 2 and self.choices.boolean() and "norm" not in template:
                col = self.choices.integer(0, shape[1] - 1)
                a = self.source(scope)
                lines.append(f"{z}[{k}, {col}] = {squash(f'np.sum({a})', Domain(lo, hi), ())}")
            else:
                fits = self.fits(scope, shape[1:]) if len(shape) == 2 else []
                a = self.pick(fits) if fits else f"np.sum({self.source(scope)})"
                lines.append(f"{z}[{k}] = {squash(a, Domain(lo, hi), shape[1:] or ())}")
        name = self.fresh()
        lines.append(f"{name} = " + template.format(z=z, c=self.const()))
        self.bind(scope, z, shape)
        scope.writable.add(z)
        self.features.add("singular point on constant entries: " + template.format(z="z", c="c"))
        return lines, name, shape[:-1] if "norm" in template else shape

    def nested_call(self, scope: Scope, a: str, row: str = "") -> tuple[str, Shape]:
        """An expression calling ``adgen.grad`` / ``value_and_grad`` / ``jvp`` of a lambda at
        ``a`` (``a[row]``: ``row`` is a comprehension's variable, which the lambda reads too),
        and its shape."""
        ashape = scope.shapes[a]
        at = a
        if row:
            at, ashape = f"{a}[{row}]", ashape[1:] if ashape else ()
        fits = [n for n in self.fits(scope, () if ashape is None else ashape)]
        fits = [n for n in fits if n not in scope.writable] or ["1.25"]
        cap = self.pick(fits)
        if row:
            cap = f"({cap} + {row})"
        u = self.pick(["u", "u", "v", "s", "x"])  # maybe shadowing a name of the program
        values = [f"np.sin({u}) * {cap}", f"np.tanh({u} * {cap}) + {u} * {u}", f"{u} * {u} * {cap}"]
        value = self.pick(values)
        kind = self.pick(["grad", "grad", "value_and_grad", "jvp"])
        self.features.add(f"nested {kind}")
        if kind == "jvp":
            tangent = "1.0" if ashape is None else f"np.ones_like({at})"
            call = f"adgen.jvp(lambda {u}: {value}, ({at},), ({tangent},))[1]"
            return call, () if ashape is None else ashape
        scalar = f"np.sum({value})"
        if kind == "grad":
            return f"adgen.grad(lambda {u}: {scalar})({at})", ashape
        k = self.choices.integer(0, 1)
        call = f"adgen.value_and_grad(lambda {u}: {scalar})({at})[{k}]"
        return call, (ashape if k else ())

    def stmt_nested(self, scope: Scope) -> Any:
        """``adgen.grad`` / ``jvp`` / ``vjp`` / ``value_and_grad`` of a nested function,
        called inside the program: alone, on a line with operators (``@``), or in a list
        comprehension."""
        a = self.source(scope, readable=False)
        ashape = scope.shapes[a]
        name = self.fresh()
        form = self.pick(["plain", "operator", "matmul", "comprehension", "def", "vjp"])
        if form == "comprehension" and ashape:
            q = self.fresh("q")
            call, shape = self.nested_call(scope, a, q)
            if self.choices.boolean():
                stacked = (ashape[0], *(shape or ()))  # one result a row of `a`
                expr, shape = f"np.stack([{call} for {q} in range({ashape[0]})])", stacked
            else:
                expr, shape = f"sum([{call} for {q} in range({ashape[0]})])", shape
            self.features.add("nested derivative in a comprehension")
            return [f"{name} = {expr}"], name, shape or ()
        if form == "def":
            inner, u = self.fresh("inner"), self.pick(["u", "s"])
            fits = [n for n in self.fits(scope, ashape or ()) if n not in scope.writable]
            value = f"np.sum(np.sin({u}) * {self.pick(fits or ['1.25'])})"
            self.features.add("nested grad of a def")
            lines = [f"def {inner}({u}):", f"    return {value}"]
            return lines + [f"{name} = adgen.grad({inner})({a}) * {self.const()}"], name, ashape
        if form == "vjp":
            out, pull = self.fresh("out"), self.fresh("pull")
            fits = [n for n in self.fits(scope, ashape or ()) if n not in scope.writable]
            value = self.closure_body("u", self.pick(fits or ["1.25"]))
            self.features.add("nested vjp")
            lines = [
                f"{out}, {pull} = adgen.vjp(lambda u: {value}, {a})",
                f"{name} = {pull}(np.cos({out}))[0] + {out}",
            ]
            return lines, name, () if ashape is None else ashape
        call, shape = self.nested_call(scope, a)
        if form == "matmul" and shape and len(shape) <= 2 and shape == ashape:
            expr = f"{call} @ {a}.T" if len(shape) == 2 else f"{call} @ {a}"
            shape = (shape[0], shape[0]) if len(shape) == 2 else ()
            self.features.add("nested derivative on a line with @")
        elif form in ("operator", "matmul"):
            expr = f"{self.const()} * {call} - np.sin({a})"
            shape = broadcast(shape, ashape)
            self.features.add("nested derivative on a line with operators")
        else:
            expr = call
        if shape is False:
            return None
        return [f"{name} = {expr}"], name, shape

    def element(self, scope: Scope) -> str:
        """A scalar: a Python float, an entry of an array, or a sum."""
        floats = sorted(n for n, s in scope.shapes.items() if s in (None, ()))
        a = self.source(scope, arrays=True, readable=False)
        shape = scope.shapes[a]
        forms = [f"np.sum({a})"]
        if shape:
            at = ", ".join(str(self.choices.integer(0, d - 1)) for d in shape)
            forms += [f"{a}[{at}]", f"{self.const()} * {a}[{at}]"]
        if floats:
            f = self.pick(floats)
            forms += [f, f"{f} * {self.const()}"]
        return self.pick(forms)

    def stmt_rebuilt(self, scope: Scope) -> Any:
        """``rows = []``, appends in a loop, then ``rows = np.array(rows)`` (transposed,
        stacked) under the same name, read by index after (scikit-learn's GaussianNB)."""
        a = self.source(scope, arrays=True, readable=False)
        shape = scope.shapes[a]
        if not shape or len(shape) != 1:
            return None
        n = self.choices.integer(2, 3)
        rows, name, k = self.fresh("rows"), self.fresh(), self.fresh("k")
        form = self.pick(["np.array({r}).T", "np.stack({r}, axis=1)", "np.column_stack({r})"])
        if self.depth:  # (in a block: a name of its own, never the list's)
            rebound, lines = name, []
        else:
            rebound, lines = rows, []
        lines += [
            f"{rows} = []",
            f"for {k} in range({n}):",
            f"    {rows}.append(np.tanh({a}) * ({k} + {self.const()}))",
            f"{rebound} = {form.format(r=rows)}",
        ]
        read = self.pick([f"{rebound}[:, 1] * {rebound}[:, 0]", f"np.sum({rebound}, axis=1)"])
        lines.append(f"{name} = {read}")
        self.features.add("list rebound: " + form.split("(")[0])
        return lines, name, shape

    def stmt_outbuffer(self, scope: Scope) -> Any:
        """A helper passing its ``out=None`` on to a ufunc: called without it, or given the
        caller's buffer, which the caller read before (the values the write overwrites)."""
        self.write_once(
            "import scipy.special\n"
            "\n"
            "def exp_into(u, out=None):\n"
            "    return np.exp(u * 0.5, out=out)\n"
            "\n"
            "def expit_into(u, out=None):\n"
            "    return scipy.special.expit(u, out)\n"
        )
        a = self.source(scope, arrays=True, readable=False)
        shape = scope.shapes[a]
        if not shape:
            return None
        helper = self.pick(["exp_into", "expit_into"])
        name, buf, read = self.fresh(), self.fresh("buf"), self.fresh()
        if self.pick([True, False]):
            self.features.add("out=: None")
            return [f"{name} = {helper}({a}) * {self.const()}"], name, shape
        self.features.add("out=: the caller's buffer")
        lines = [
            f"{buf} = np.tanh({a}) * {self.const()}",
            f"{read} = np.sum({buf} ** 2)",
            f"{helper}({a}, out={buf})" if helper == "exp_into" else f"{helper}({a}, {buf})",
            f"{name} = {buf} * {read}",
        ]
        return lines, name, shape

    def stmt_comprehended(self, scope: Scope) -> Any:
        """A helper whose locals are named as adgen names what it makes up (``w_1``,
        ``items_1``, ``k_1``), holding a comprehension whose variable is ``w`` or ``k``."""
        self.write_once(
            "def comprehended(v, c):\n"
            "    w_1 = v * c\n"
            "    items_1 = v + c\n"
            "    k_1 = np.tanh(v)\n"
            "    s = np.sum(np.stack([w * w + items_1 for w in (v, v * c)]), axis=0)\n"
            "    t = sum([k_1 * k for k in range(3)])\n"
            "    return s + w_1 * items_1 + t * k_1\n"
        )
        a = self.source(scope, readable=False)
        name = self.fresh()
        shape = scope.shapes[a]
        shape = () if shape is None else shape
        return [f"{name} = comprehended({a}, {self.const()})"], name, shape

    def stmt_stack(self, scope: Scope) -> Any:
        """A list or tuple of scalars (with arrays, sometimes) passed to ``np.hstack``,
        ``np.stack``, ``np.concatenate``, ``np.vstack``, ``np.array``..."""
        items = [self.element(scope) for _ in range(self.choices.integer(2, 4))]
        vectors = sorted(
            n for n, s in scope.shapes.items() if s and len(s) == 1 and n not in scope.writable
        )
        forms = ["np.hstack([{e}])", "np.hstack(({e}))", "np.stack([{e}])", "np.array([{e}])"]
        forms += ["np.vstack([{e}])", "np.column_stack([{e}])", "np.stack(({e}), axis=-1)"]
        forms += ["np.concatenate([{a}])", "np.hstack([{m}])"]
        if vectors:
            forms += [
                "np.append({v}, {e0})",
                "np.hstack([{e0}, {v}])",
                "np.concatenate([{v}, {a}])",
            ]
        form = self.pick(forms)
        m = list(items)
        if vectors:
            m.insert(self.choices.integer(0, len(m)), self.pick(vectors))
        expr = form.format(
            e=", ".join(items),
            e0=items[0],
            a=", ".join(f"np.atleast_1d({e})" for e in items),
            m=", ".join(m),
            v=self.pick(vectors) if vectors else "",
        )
        shape = self.shape_of(scope, expr)
        if shape is False or shape is None:
            return None
        self.features.add("container of scalars: " + form.split("(")[0])
        name = self.fresh()
        return [f"{name} = {expr}"], name, shape

    def stmt_split(self, scope: Scope) -> Any:
        """``np.split`` / ``array_split`` / ``hsplit`` / ``vsplit`` / ``dsplit``, its parts
        used one by one (unpacked, indexed, in a loop) or together (stacked, summed)."""
        a = self.source(scope, arrays=True, readable=False)
        shape = scope.shapes[a]
        if not shape:
            return None
        calls = []
        for ax, d in enumerate(shape):
            if d % 2 == 0:
                calls.append(f"np.split({{a}}, 2, axis={ax})")
            if d >= 2:
                k = self.choices.integer(2, min(3, d))
                calls.append(f"np.array_split({{a}}, {k}, axis={ax})")
            if d >= 3:
                calls.append(f"np.split({{a}}, [1, {d - 1}], axis={ax})")
        if len(shape) >= 2:
            calls += [f"np.hsplit({{a}}, {k})" for k in (2, 3) if shape[1] % k == 0]
            calls += [f"np.vsplit({{a}}, {k})" for k in (2, 3) if shape[0] % k == 0]
        elif shape[0] % 2 == 0:
            calls.append("np.hsplit({a}, 2)")
        if len(shape) >= 3 and shape[2] % 2 == 0:
            calls.append("np.dsplit({a}, 2)")
        if shape[0] >= 2:  # a tuple or list of pieces, written out (in blocks too: a name
            # bound to a tuple there has one name an item)
            k = self.choices.integer(1, shape[0] - 1)
            calls.append(f"[{{a}}[:{k}], {{a}}[{k}:]]")
            calls.append(f"({{a}}[:{k}], {{a}}[{k}:])")
        if not calls:
            return None
        call = self.pick(calls)
        with np.errstate(all="ignore"):
            parts = [p.shape for p in eval(call.format(a="_a"), {"np": np, "_a": np.zeros(shape)})]
        call = call.format(a=a)
        fn = {"(": "a tuple of slices", "[": "a list of slices"}.get(call[0], call.split("(")[0])
        uses = ["unpack", "index", "loop", "list", "concatenate"]
        if len(set(parts)) == 1:
            uses += ["stack", "sum"]
        use = self.pick(uses)
        self.features.add(f"split: {fn}, parts {use}")
        name, t = self.fresh(), self.fresh("t")
        if use == "unpack":
            names = [self.fresh("part") for _ in parts]
            for n, s in zip(names[:-1], parts[:-1], strict=True):
                self.bind(scope, n, s)
            return [f"{', '.join(names)} = {call}"], names[-1], parts[-1]
        if use == "index":
            k = self.choices.integer(0, len(parts) - 1)
            return [f"{name} = {call}[{k}] * {self.const()}"], name, parts[k]
        if use == "loop":
            part = self.fresh("part")
            lines = [f"{t} = 0.0", f"for {part} in {call}:"]
            lines.append(f"    {t} = {t} + np.sum(np.sin({part}))")
            return lines, t, ()
        if use == "list":
            ps = self.fresh("parts")
            shape = broadcast(parts[0], parts[-1])
            if shape is False:
                return [f"{ps} = {call}", f"{name} = np.sum({ps}[0]) * {ps}[-1]"], name, parts[-1]
            return [f"{ps} = {call}", f"{name} = {ps}[0] * {ps}[-1]"], name, shape
        if use == "concatenate":
            ps = self.fresh("parts")
            axis = {"np.hsplit": 1 if len(shape) > 1 else 0, "np.vsplit": 0, "np.dsplit": 2}
            axis.update({"a tuple of slices": 0, "a list of slices": 0})
            ax = axis.get(fn, call.rsplit("axis=", 1)[-1].rstrip(")"))
            order = ", ".join(f"{ps}[{k}]" for k in reversed(range(len(parts))))
            lines = [f"{ps} = {call}", f"{name} = np.concatenate([{order}], axis={ax})"]
            return lines, name, shape
        if use == "stack":
            return [f"{name} = np.stack({call})"], name, (len(parts), *parts[0])
        return [f"{name} = sum({call})"], name, parts[0]

    def returned(self, scope: Scope, early: bool) -> str:
        """What a ``return`` returns: a scalar, or a pair (scalar, value of the shape
        ``self.result``); an early return's may be constants."""
        names = sorted(scope.shapes)
        if early and self.choices.integer(0, 3) == 0:
            total = self.const()  # a constant on this path
        else:
            total = " + ".join(
                self.pick([f"np.sum({n})", f"np.sum(np.sin({n}))", f"np.sum({n} * {n})"])
                for n in [self.pick(names) for _ in range(self.choices.integer(1, 2))]
            )
        if self.result == "scalar":
            return total
        shape = self.result
        same = sorted(n for n, s in scope.shapes.items() if s == shape)
        options = [f"{n} * {self.const()}" for n in same] + same
        if early or not same:
            options.append("1.0" if shape is None else f"np.ones({shape})")
            options.append(
                f"{self.const()} * ({total})" if shape is None else f"np.ones({shape}) * ({total})"
            )
        return f"{total}, {self.pick(options)}"

    def block_early(self, scope: Scope, indent: str, depth: int) -> list[str]:
        """An early ``return`` in an ``if`` (inside a loop too); maybe in an ``if`` nested
        in another, the outer one then binding names the rest of the program reads."""
        self.features.add("early return" + ("" if self.result == "scalar" else " of a tuple"))
        if self.loops:
            self.features.add("early return inside a loop")
        inner = scope.child()
        out = [f"{indent}if {self.condition(scope)}:"]
        if self.choices.boolean():
            out += [f"{indent}    if {self.condition(scope)}:"]
            out += [f"{indent}        return {self.returned(inner, True)}"]
            if self.choices.boolean():
                out += [f"{indent}    else:"]
                out += self.update(scope, inner, indent + "        ", None)
            for _ in range(self.choices.integer(1, 2)):
                out += self.update(scope, inner, indent + "    ", None)
            self.features.add("early return in a nested if, then rebinding")
            return out
        for _ in range(self.choices.integer(0, 2)):
            out += self.statement(inner, indent + "    ", depth + 1)
        out += [f"{indent}    return {self.returned(inner, True)}"]
        if self.choices.boolean():
            out += [f"{indent}else:"]
            out += self.body(scope, indent + "    ", depth, None)
        return out

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
        if self.choices.integer(0, 7) == 0 and "nested" not in self.without:
            # one lambda a line: adgen refuses two (it could not tell which to differentiate)
            call, _ = self.nested_call(scope, self.source(scope, readable=False))
            self.features.add("nested derivative in a condition")
            cond = f"np.sum({call}) > {self.offset()}"
        join = self.pick(["", "", " and ", " or "])
        if join:
            cond = f"({cond}{join}{self.pick(forms)})"
        return cond

    def body(self, scope: Scope, indent: str, depth: int, loop_var: str | None) -> list[str]:
        """A block: statements on a child scope, then updates of the enclosing state."""
        inner = scope.child()
        out: list[str] = []
        for _ in range(self.choices.integer(1, 3)):
            out += self.statement(inner, indent, depth + 1)
        for _ in range(self.choices.integer(1, 2)):
            out += self.update(scope, inner, indent, loop_var)
        return out

    def update(self, outer: Scope, inner: Scope, indent: str, loop_var: str | None) -> list[str]:
        """Carry state: rebind (or write into) a name of the enclosing scope."""
        target = self.source(outer, rebind=True)
        shape = outer.shapes[target]
        if target in outer.writable and shape:
            return self.write(inner, target, indent, loop_var if shape[0] > 3 else None)
        fits = self.fits(inner, shape) if shape is not None else []
        fits = fits or [n for n, s in inner.shapes.items() if s is None] or [target]
        made = [n for n in fits if n in inner.local]
        if made and self.choices.boolean():
            fits = made  # what the block computed reaches the rest of the program
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
        if self.choices.integer(0, 3) == 0:  # a conditional expression
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
            self.bind(scope, name, scope.shapes[a])
            return [f"{indent}{name} = {expr}"]
        out = [f"{indent}if {self.condition(scope)}:"]
        out += self.body(scope, indent + "    ", depth, None)
        if self.choices.boolean():
            out.append(f"{indent}elif {self.condition(scope)}:")
            out += self.body(scope, indent + "    ", depth, None)
        if self.choices.boolean():
            out.append(f"{indent}else:")
            out += self.body(scope, indent + "    ", depth, None)
        return out

    def escape(self, scope: Scope, indent: str) -> list[str]:
        """Maybe a ``break`` or ``continue`` on a value condition."""
        if self.choices.integer(0, 2):
            return []
        word = self.pick(["break", "continue"])
        self.features.add(word)
        return [f"{indent}if {self.condition(scope)}:", f"{indent}    {word}"]

    def block_for(self, scope: Scope, indent: str, depth: int) -> list[str]:
        self.features.add("for")
        var = f"i{depth}"
        out = [f"{indent}for {var} in range({self.choices.integer(0, 4)}):"]
        out += self.escape(scope, indent + "    ")
        self.loops += 1
        out += self.body(scope, indent + "    ", depth, var)
        self.loops -= 1
        return out

    def block_while(self, scope: Scope, indent: str, depth: int) -> list[str]:
        self.features.add("while")
        k = f"k{depth}"
        bound = self.choices.integer(0, 4)
        test = f"{k} < {bound}"
        if self.choices.boolean():
            test += f" and {self.condition(scope)}"
        out = [f"{indent}{k} = 0", f"{indent}while {test}:", f"{indent}    {k} = {k} + 1"]
        out += self.escape(scope, indent + "    ")
        self.loops += 1
        out += self.body(scope, indent + "    ", depth, None)
        self.loops -= 1
        return out

    # the whole program

    def unpack(self, scope: Scope) -> list[str]:
        """Maybe names for parts of the container argument ``p`` (its leaves stay readable
        as ``p["a"]``, ``p[0]``... too)."""
        layout = CONTAINERS[self.container or ""]
        out = []
        if isinstance(layout, list) and self.choices.boolean():
            names = [self.fresh("p") for _ in layout]
            out.append(f"    {', '.join(names)} = p")
            for n, part in zip(names, layout, strict=True):
                if not isinstance(part, (dict, list)):
                    self.bind(scope, n, part)
            return out
        keys = list(layout) if isinstance(layout, dict) else list(range(len(layout)))
        for key in keys:
            part = layout[key]
            at = f'p["{key}"]' if isinstance(key, str) else f"p[{key}]"
            if isinstance(part, list):
                names = [self.fresh("p") for _ in part]
                out.append(f"    {', '.join(names)} = {at}")
                for n, leaf in zip(names, part, strict=True):
                    self.bind(scope, n, leaf)
            elif not isinstance(part, dict) and self.choices.boolean():
                n = self.fresh("p")
                out.append(f"    {n} = {at}")
                self.bind(scope, n, part)
        return out

    def program(self) -> tuple[str, bool]:
        scope = Scope(dict(INPUTS))
        params = list(INPUTS)
        lines: list[str] = []
        if self.container:
            params.append("p")
            for expr, shape in leaves(CONTAINERS[self.container], "p"):
                scope.shapes[expr] = shape
                scope.fixed.add(expr)
            lines += self.unpack(scope)
            self.features.add("container argument: " + self.container)
        scalar = self.choices.integer(0, 3) > 0
        if not scalar:
            self.result = self.pick([(3, 4), (4,), None])
            self.features.add("tuple result")
        for _ in range(self.choices.integer(1, 8)):
            lines += self.statement(scope, "    ", 0)
        made = [n for n in scope.shapes if n not in INPUTS and n not in scope.fixed]
        # the last values, the arrays written in place, and every value of the constructs
        # of NEW_KINDS made at the top level reach the result (not dead code)
        exposed = [n for n in made if n in self.exposed]
        chosen = set(made[-2:] + exposed) | scope.writable | {self.source(scope)}
        if self.container:
            chosen.add(self.pick(sorted(scope.fixed)))
        terms = [
            self.pick([f"np.sum({n})", f"np.sum(np.sin({n}))", f"np.sum({n} * {n})"])
            for n in sorted(chosen)
        ]
        total = " + ".join(terms) + " + np.sum(s * y)"
        if scalar:
            lines.append(f"    return {total}")
        else:
            same = [n for n in made if scope.shapes[n] == self.result]
            same = same or sorted(n for n, s in scope.shapes.items() if s == self.result)
            if same:
                second = same[-1]
            elif self.result is None:
                second = f"{self.const()} * ({total})"
            else:
                second = f"np.ones({self.result}) * ({total})"
            lines.append(f"    return {total}, {second}")
        head = "import math\n" + "".join(f"import {m}\n" for m in sorted(self.imports))
        head += "\nimport numpy as np\n"
        if any("scipy" in line for line in lines):
            head += "import scipy.special\n"
        if any("adgen." in line for line in lines):
            head += "\nimport adgen\n"
        helpers = "".join("\n\n" + h for h in self.helpers)
        signature = f"def program({', '.join(params)}):\n"
        src = head + helpers + "\n\n" + signature + "\n".join(lines) + "\n"
        return src, scalar


@dataclass(frozen=True)
class Program:
    source: str
    scalar: bool  # returns a scalar (a tuple otherwise)
    twice: bool  # to be checked at second order too
    features: frozenset[str]
    container: str | None = None  # the layout (CONTAINERS) of a fourth argument `p`

    def __repr__(self) -> str:  # hypothesis prints the failing program this way
        return f"Program(scalar={self.scalar}, twice={self.twice}):\n{self.source}"


def write_program(
    choices: Choices, twice_share: float = 0.3, without: frozenset[str] = frozenset()
) -> Program:
    """One program, its random choices made by ``choices``; ``without``: statement kinds
    (``Writer.statement``) not to write, and ``container`` for no container argument."""
    twice = choices.uniform(0.0, 1.0) < twice_share
    # shrinks towards no container argument (hypothesis shrinks integers towards 0)
    container = choices.pick(sorted(CONTAINERS)) if choices.integer(0, 19) >= 17 else None
    if "container" in without:
        container = None
    writer = Writer(choices, twice, container, without)
    source, scalar = writer.program()
    return Program(source, scalar, twice and scalar, frozenset(writer.features), container)


@st.composite
def programs(draw: Any, twice_share: float = 0.3) -> Program:
    """The hypothesis strategy: programs that shrink to smaller ones."""
    return write_program(HypothesisChoices(draw), twice_share)
