"""Singular points: a zero tangent or cotangent entry contributes exactly zero.

Where a partial derivative is infinite or NaN although the function is finite (``sqrt``
at 0, ``arcsin`` at 1, ``arctan2`` at (0, 0), ``x ** 0.5`` at 0...), the contribution of a
zero tangent (forward mode) or a zero cotangent (reverse mode) must be exactly 0, not
``0 * inf = nan``: entries of an array that are constant (a structurally constant slot)
have a zero tangent, and entries the result does not depend on get a zero cotangent.

The first two tests are made from the registry, like tests/test_registry_rules.py: every
elementwise rule at a grid of special points, and every rule's examples with special
inputs, so a rule added later with the same property fails here (the fix: register it
``singular=True``, see docs/rules.md). The others pin each singular rule's answer with
structurally constant entries, exactly.
"""

from __future__ import annotations

import ast
import itertools
import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from registry_cases import Case, case_function, registry_cases
from source_modules import session_folder, write_module

import adgen
from adgen.errors import DerivativeError
from adgen.rules import registered
from adgen.rules import runtime as rt
from adgen.rules.namespace import spelling

# the singular points of the rules there are (0, +-1) and a few regular ones
SPECIAL = (0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0)
# values for a rule's required parameters that are not differentiated (an order, a degree)
CONSTANT_ARGS = (0, 1, 2, 0.5, 1.5, -0.5)


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    # 0 * inf and 0 / 0 are computed (then discarded) at singular points: NumPy warns;
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # and np.cross of 2-vectors (deprecated) in examples
        yield


# -- a module of functions adgen can read ----------------------------------------------------------


_FOLDER = session_folder("adgen_singular_")


def _module(name: str, body: list[str]) -> Any:
    """Write ``body`` (function definitions) to a module file and import it."""
    head = [
        "import math",
        "import numpy as np",
        "import scipy.special",
        "from adgen import runtime as rt",
        "",
    ]
    return write_module(_FOLDER, name, "\n".join(head + body) + "\n")


def _zero(a: Any) -> Any:
    return np.zeros_like(a) if isinstance(a, np.ndarray) else type(a)(0.0)


def zero_seed_problems(
    fn: Callable[..., Any], args: tuple[Any, ...], elementwise: bool
) -> list[str]:
    """What goes wrong when ``fn``'s derivatives get zero tangents and a zero cotangent at
    ``args``: every tangent entry and every cotangent must be exactly 0 where ``fn``'s value
    is finite (entry by entry for an elementwise ``fn``, else the whole value must be)."""
    try:
        value = fn(*args)
    except Exception:  # outside the function's domain
        return []
    if isinstance(value, tuple) or np.iscomplexobj(value):
        return []
    finite = np.isfinite(np.asarray(value, dtype=float))
    if not finite.any() or (not elementwise and not finite.all()):
        return []
    problems = []
    try:
        _, tangent = adgen.jvp(fn, args, [_zero(a) for a in args])
        bad = (np.asarray(tangent) != 0) & finite
        if bad.any():
            problems.append(f"forward mode gives {np.asarray(tangent)[bad][:3]}")
    except Exception as e:
        if not _refusal(e):
            problems.append(f"forward mode raises {e!r:.200}")
    try:
        _, pullback = adgen.vjp(fn, *args)
        for a, ct in zip(args, pullback(_zero(value)), strict=True):
            ct = np.asarray(ct)
            # an elementwise function: entries where the value is not finite do not count
            bad = (ct != 0) & finite if ct.shape == finite.shape else ct != 0
            if bad.any():
                problems.append(f"reverse mode gives {ct[bad][:3]} for shape {np.shape(a)}")
    except Exception as e:
        if not _refusal(e):
            problems.append(f"reverse mode raises {e!r:.200}")
    return problems


def _refusal(e: Exception) -> bool:
    """A documented refusal at a degenerate input (a singular matrix for ``np.linalg.det``,
    repeated eigenvalues for ``eigh``): loud, never a wrong number."""
    cause = e.__cause__
    return isinstance(e, DerivativeError) and (
        isinstance(cause, np.linalg.LinAlgError)
        or (isinstance(cause, ValueError) and str(cause).startswith("adgen:"))
    )


# -- every elementwise rule at special points ------------------------------------------------------


def _elementwise() -> list[tuple[str, str, int, bool]]:
    """(id, function name, number of differentiated arguments, Python numbers only) for each
    differentiable elementwise rule of one or two required arguments (one function per
    constant value of a required argument that is not differentiated, per result)."""
    cases: list[tuple[str, str, int, bool]] = []
    body: list[str] = []
    for fn, prim in registered():
        if not prim.differentiable or not prim.elementwise or prim.sequence or prim.callee:
            continue
        # the required arguments, and those with a default that are differentiated (q in
        # scipy.special.zeta(x, q=None))
        required = [
            p.name
            for p in prim.params
            if p.kind == p.POSITIONAL_OR_KEYWORD
            and (p.default is p.empty or p.name in prim.diff_params)
        ]
        diff = [p for p in required if p in prim.diff_params]
        if len(required) not in (1, 2) or not diff or prim.name == "assign":
            continue
        others = [p for p in required if p not in diff]
        results = [None] if not isinstance(prim.outputs, int) else list(range(prim.outputs))
        for constants in itertools.product(CONSTANT_ARGS, repeat=len(others)):
            given = dict(zip(others, constants, strict=True))
            args = [ast.Name(id=p) if p in diff else ast.Constant(value=given[p]) for p in required]
            call = ast.unparse(prim.emit(args, []))
            for k in results:
                expr = call if k is None else f"{call}[{k}]"
                name = f"f{len(cases)}"
                body += [f"def {name}({', '.join(diff)}):", f"    return {expr}", ""]
                try:
                    scalar_only = spelling(fn).startswith("math.")
                except ValueError:
                    scalar_only = False
                cases.append((f"{prim.name}: {expr}", name, len(diff), scalar_only))
    _ELEMENTWISE_MODULE.append(_module("adgen_singular_elementwise", body))
    return cases


_ELEMENTWISE_MODULE: list[Any] = []
ELEMENTWISE = _elementwise()


@pytest.mark.parametrize(
    ("name", "n", "scalar_only"), [pytest.param(n, k, s, id=i) for i, n, k, s in ELEMENTWISE]
)
def test_registered_elementwise_rule_at_special_points(
    name: str, n: int, scalar_only: bool
) -> None:
    """At every point of the grid where the function is finite, zero tangents and a zero
    cotangent give exactly 0: as Python floats, one point at a time, and as arrays."""
    fn = getattr(_ELEMENTWISE_MODULE[0], name)
    points = list(itertools.product(SPECIAL, repeat=n))
    problems = []
    for point in points:
        problems += [f"at {point}: {p}" for p in zero_seed_problems(fn, point, True)]
    if not scalar_only:
        columns = tuple(np.array(c) for c in zip(*points, strict=True))
        problems += [f"on the grid: {p}" for p in zero_seed_problems(fn, columns, True)]
    assert not problems, "\n".join(problems[:6])


def test_the_grid_reaches_the_singular_points() -> None:
    """The grid test is not empty: it checks the rules that are singular on it."""
    ids = " ".join(i for i, *_ in ELEMENTWISE)
    for rule in ("np.sqrt", "np.arctan2", "pow", "math.asin", "scipy.special.xlogy", "rt.power"):
        assert rule + ":" in ids


# -- every rule's examples with special inputs -----------------------------------------------------


def _patterns(case: Case) -> dict[str, tuple[Any, ...]]:
    drawn = case.draw_args()
    out = {
        "zeros": tuple(_zero(a) for a in drawn),
        "ones": tuple(
            np.ones_like(a) if isinstance(a, np.ndarray) else type(a)(1.0) for a in drawn
        ),
    }
    mixed = []
    for a in drawn:
        if isinstance(a, np.ndarray) and a.size > 1:
            a = a.copy()
            a.flat[::2] = 0.0
            mixed.append(a)
        else:
            mixed.append(_zero(a))
    out["every other entry 0"] = tuple(mixed)
    for k in range(len(drawn)):
        out[f"argument {k} zero"] = tuple(_zero(a) if i == k else a for i, a in enumerate(drawn))
    return out


_BY_RULE: dict[str, list[Case]] = {}
for _case in registry_cases():
    if _case.dtype is np.float64:
        _BY_RULE.setdefault(_case.rule, []).append(_case)


@pytest.mark.parametrize("rule", sorted(_BY_RULE))
def test_registered_rule_examples_with_special_inputs(rule: str) -> None:
    """Each example of the rule (tests/registry_cases.py) with zeros, ones, every other entry
    0, or one argument 0: where the value is finite, zero seeds give exactly 0."""
    problems = []
    for case in _BY_RULE[rule]:
        for label, args in _patterns(case).items():
            problems += [
                f"{case.call} with {label}: {p}"
                for p in zero_seed_problems(case_function(case), args, False)
            ]
    assert not problems, "\n".join(problems[:6])


# -- the examples --------------------------------------------------------------------------


def arctan2_of_constant_entries(y):
    z = np.zeros(2)
    z[0] = y[0]
    return np.sum(np.arctan2(z, z)) + y[1]


def sqrt_first(y):
    return np.sqrt(y)[0]


def test_arctan2_at_the_origin_on_constant_entries() -> None:
    y = np.array([0.4, 0.2])
    value, tangent = adgen.jvp(arctan2_of_constant_entries, (y,), (np.ones(2),))
    assert value == np.arctan2(0.4, 0.4) + 0.2
    # d/dy0 arctan2(y0, y0) = 0 exactly (y0 / (2 y0^2) - y0 / (2 y0^2)), d/dy1 = 1
    assert tangent == 1.0
    assert adgen.grad(arctan2_of_constant_entries)(y).tolist() == [0.0, 1.0]


def test_sqrt_with_a_zero_cotangent() -> None:
    grad = adgen.grad(sqrt_first)(np.array([0.4, 0.0]))
    assert grad[1] == 0.0
    assert grad[0] == 0.5 / np.sqrt(0.4)
    _, tangent = adgen.jvp(sqrt_first, (np.array([0.4, 0.0]),), (np.array([1.0, 0.0]),))
    assert tangent == 0.5 / np.sqrt(0.4)


# -- each singular rule with structurally constant entries -----------------------------------------
# (expression of z (and w), singular point, a regular point): the forward test makes entry 0
# of z (and w) the constant singular point and entry 1 the argument; the reverse test
# differentiates at the singular point with a zero cotangent there.

SINGULAR: list[tuple[str, tuple[float, ...], tuple[float, ...]]] = [
    ("np.sqrt(z)", (0.0,), (0.3,)),
    ("np.cbrt(z)", (0.0,), (0.3,)),
    ("np.arcsin(z)", (1.0,), (0.3,)),
    ("np.arcsin(z)", (-1.0,), (0.3,)),
    ("np.arccos(z)", (1.0,), (0.3,)),
    ("np.arccos(z)", (-1.0,), (-0.3,)),
    ("np.arccosh(z)", (1.0,), (1.7,)),
    ("z ** 0.5", (0.0,), (0.3,)),
    ("z ** 0.0", (0.0,), (0.3,)),
    ("np.power(z, 0.25)", (0.0,), (0.3,)),
    ("np.float_power(z, 0.5)", (0.0,), (0.3,)),
    ("z ** w", (0.0, 0.5), (0.3, 1.5)),
    ("z ** w", (-2.0, 2.0), (0.3, 1.5)),
    ("np.power(z, w)", (0.0, 0.0), (0.3, 0.5)),
    ("np.float_power(z, w)", (-1.0, 3.0), (0.3, 0.5)),
    ("np.arctan2(z, w)", (0.0, 0.0), (0.3, -0.7)),
    ("scipy.special.xlogy(z, w)", (0.0, 0.0), (0.3, 0.7)),
    ("scipy.special.xlog1py(z, w)", (0.0, -1.0), (0.3, 0.7)),
    ("scipy.special.entr(z)", (0.0,), (0.3,)),
    ("scipy.special.rel_entr(z, w)", (0.0, 0.0), (0.3, 0.7)),
    ("scipy.special.kl_div(z, w)", (0.0, 0.5), (0.3, 0.7)),
    ("scipy.special.betaln(z, w)", (1.0, -1.0), (0.3, 0.7)),
    ("scipy.special.iv(0.5, z)", (0.0,), (0.3,)),
    ("scipy.special.ive(0.5, z)", (0.0,), (0.3,)),
]


def _singular_module() -> Any:
    body = []
    for k, (expr, point, _) in enumerate(SINGULAR):
        args = ("z", "w")[: len(point)]
        # forward: entry 0 of each argument is the constant singular point, entry 1 varies
        body += [f"def forward_{k}(y):"]
        for j, a in enumerate(args):
            body += [f"    {a} = np.zeros(2)", f"    {a}[0] = {point[j]!r}", f"    {a}[1] = y[{j}]"]
        body += [f"    return np.sum({expr})", ""]
        # the same without the constant entries
        body += [f"def regular_{k}(y):"]
        body += [f"    {a} = y[{j}:{j + 1}]" for j, a in enumerate(args)]
        body += [f"    return np.sum({expr})", ""]
        # reverse: entry 0 at the singular point gets a zero cotangent (the mask)
        body += [
            f"def reverse_{k}({', '.join(args)}):",
            f"    return np.sum(np.array([0.0, 1.0]) * {expr})",
            "",
        ]
    return _module("adgen_singular_cases", body)


SINGULAR_MODULE = _singular_module()


@pytest.mark.parametrize(
    "k", [pytest.param(k, id=f"{e} at {p}") for k, (e, p, _) in enumerate(SINGULAR)]
)
def test_singular_rule_on_constant_entries(k: int) -> None:
    expr, point, regular = SINGULAR[k]
    forward = getattr(SINGULAR_MODULE, f"forward_{k}")
    reference = getattr(SINGULAR_MODULE, f"regular_{k}")
    y = np.array(regular)
    with np.errstate(all="ignore"):
        assert np.all(np.isfinite(forward(y)))  # the function is finite at the point
    for direction in np.eye(len(y)):
        _, tangent = adgen.jvp(forward, (y,), (direction,))
        _, expected = adgen.jvp(reference, (y,), (direction,))
        assert np.isfinite(expected)
        np.testing.assert_allclose(tangent, expected, rtol=1e-14, atol=0)
    # reverse mode drops the constant entries' cotangents (they reach no argument)
    np.testing.assert_allclose(adgen.grad(forward)(y), adgen.grad(reference)(y), rtol=1e-14, atol=0)


@pytest.mark.parametrize(
    "k", [pytest.param(k, id=f"{e} at {p}") for k, (e, p, _) in enumerate(SINGULAR)]
)
def test_singular_rule_with_a_zero_cotangent(k: int) -> None:
    expr, point, regular = SINGULAR[k]
    fn = getattr(SINGULAR_MODULE, f"reverse_{k}")
    reference = getattr(SINGULAR_MODULE, f"regular_{k}")
    args = tuple(np.array([p, r]) for p, r in zip(point, regular, strict=True))
    grads = adgen.grad(fn, wrt=tuple(range(len(args))))(*args)
    expected = adgen.grad(reference)(np.array(regular))
    for j, g in enumerate(grads):
        assert g[0] == 0.0  # the zero cotangent, at the singular point
        np.testing.assert_allclose(g[1], expected[j], rtol=1e-14, atol=0)
    # and in forward mode, a zero tangent at the singular point (the others: 1)
    tangents = [np.array([0.0, 1.0]) for _ in args]
    _, tangent = adgen.jvp(fn, args, tangents)
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-14, atol=0)


def test_a_nonzero_seed_keeps_the_infinite_derivative() -> None:
    """Only zero seeds change: sqrt at 0 has derivative inf (docs/rules.md), arctan2 at
    (0, 0) none (NaN)."""

    def both(x):
        return np.sum(np.sqrt(x))

    _, tangent = adgen.jvp(both, (np.array([0.0, 1.0]),), (np.array([1.0, 0.0]),))
    assert tangent == np.inf
    assert adgen.grad(both)(np.array([0.0, 4.0])).tolist() == [np.inf, 0.25]
    _, tangent = adgen.jvp(arctan2_of_constant_entries, (np.array([0.0, 0.2]),), (np.ones(2),))
    assert np.isnan(tangent)


def test_integer_powers_of_zero() -> None:
    """x ** 0 is 1 everywhere: its derivative is 0 at x == 0 too (not 0 * 0 ** -1), so a
    polynomial in x has its exact gradient at 0."""

    def poly(x):
        return np.sum(x[:, None] ** np.arange(4) * np.array([1.0, 2.0, 3.0, 4.0]))

    x = np.array([0.0, 1.0])
    assert adgen.grad(poly)(x).tolist() == [2.0, 2.0 + 6.0 + 12.0]
    _, tangent = adgen.jvp(poly, (x,), (np.array([1.0, 0.0]),))
    assert tangent == 2.0

    def zeroth(x):
        return x**0.0

    assert adgen.grad(zeroth)(0.0) == 0.0


def test_python_floats_at_singular_points() -> None:
    """Scalar code: a zero seed gives 0.0 where Python's division or ``**`` would raise;
    a nonzero one gives NumPy's answer (inf), not ZeroDivisionError."""

    def root(a, b):
        return a**0.5 + math.sqrt(a) + math.asin(a - 1.0) + math.acosh(a + 1.0) + b

    _, tangent = adgen.jvp(root, (0.0, 1.0), (0.0, 1.0))
    assert tangent == 1.0
    _, tangent = adgen.jvp(root, (0.0, 1.0), (1.0, 0.0))
    assert tangent == np.inf

    def scaled(a, b):
        return (math.sqrt(a) + math.asin(a) + math.acos(a - 1.0) + a**0.5 + math.pow(a, 0.5)) * b

    grads = adgen.grad(scaled, wrt=(0, 1))(0.0, 0.0)
    assert grads == (0.0, 0.0 + 0.0 + math.pi + 0.0 + 0.0)
    assert type(grads[0]) is float

    def angle(a, b):
        return math.atan2(a, b) + math.hypot(a, b) + np.arctan2(a, b) + b * 0.0

    _, tangent = adgen.jvp(angle, (0.0, 0.0), (0.0, 0.0))
    assert tangent == 0.0
    # hypot at (0, 0): derivative 0, as np.hypot's
    assert adgen.grad(lambda_free_hypot, wrt=(0, 1))(0.0, 0.0) == (0.0, 0.0)

    def negative_base(a, b):
        return math.pow(a, b) + a * 0.0

    # w.r.t. the exponent at a negative base there is no derivative; a zero seed gives 0
    _, tangent = adgen.jvp(negative_base, (-2.0, 2.0), (1.0, 0.0))
    assert tangent == -4.0
    _, tangent = adgen.jvp(negative_base, (-2.0, 2.0), (0.0, 1.0))
    assert np.isnan(tangent)


def lambda_free_hypot(a, b):
    return math.hypot(a, b)


def roots_in_a_loop(a, b):
    s = 0.0
    for i in range(3):
        s = s + (a + i - 1.0) ** 0.5 * b
    return s


def test_python_floats_in_a_loop() -> None:
    """Scalar loops test the singular point of ``**`` in Python (no helper call): at a = 1
    the first term is 0.0 ** 0.5, whose derivative reaches a with the cotangent b = 0."""
    assert "rt.zero_safe" not in adgen.source(roots_in_a_loop, wrt=(0, 1), args=(1.0, 0.0))
    assert adgen.grad(roots_in_a_loop, wrt=(0, 1))(1.0, 0.0) == (0.0, 1.0 + math.sqrt(2.0))
    _, tangent = adgen.jvp(roots_in_a_loop, (1.0, 0.0), (0.0, 1.0))
    assert tangent == 1.0 + math.sqrt(2.0)
    _, tangent = adgen.jvp(roots_in_a_loop, (1.0, 1.0), (1.0, 0.0))
    assert tangent == math.inf


def test_where_picks_a_finite_branch() -> None:
    """``np.where`` gives the branch it does not pick a zero cotangent: sqrt's contribution
    is then 0 even where sqrt's value is NaN."""

    def safe_root(x):
        return np.sum(np.where(x > 0, np.sqrt(x), 0.0))

    assert adgen.grad(safe_root)(np.array([-1.0, 0.0, 4.0])).tolist() == [0.0, 0.0, 0.25]


def test_norm_below_one() -> None:
    """``ord`` < 1: the derivative at a zero entry is infinite (NaN with a nonzero seed), 0
    with a zero one; at the zero vector it is 0 (every ord, docs/rules.md)."""

    def norm_half(y):
        x = np.zeros(3)
        x[1:] = y
        return np.linalg.norm(x, ord=0.5)

    y = np.array([0.25, 1.0])
    r = (0.5 + 1.0) ** 2
    expected = r**0.5 * np.array([0.25, 1.0]) ** -0.5  # (sum |x|^p)^(1/p - 1) |x_i|^(p - 1)
    np.testing.assert_allclose(adgen.grad(norm_half)(y), expected, rtol=1e-14)
    _, tangent = adgen.jvp(norm_half, (y,), (np.ones(2),))
    np.testing.assert_allclose(tangent, expected.sum(), rtol=1e-14)

    def norm_of(x):
        return np.linalg.norm(x, ord=0.5) * 0.0 + np.linalg.norm(x, ord=-1)

    assert adgen.grad(norm_of)(np.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    assert adgen.grad(norm_of)(np.array([0.0, 2.0, 1.0])).tolist() == [0.0, 0.0, 0.0]


# -- second order ----------------------------------------------------------------------------------


def sum_of_roots(y):
    return np.sum(np.sqrt(np.concatenate([np.zeros(1), y])))


def distance_to_one(x):
    return np.sum((np.sqrt(x) - 1.0) ** 2)


def test_second_order_through_the_guard() -> None:
    """Hessians differentiate the guarded code again: exact at the regular entries, with the
    constant entry dropped, and exact where a cotangent happens to be 0 but its derivative
    is not (the guard only acts on NaN)."""
    y = np.array([0.25, 4.0])
    np.testing.assert_allclose(adgen.hessian(sum_of_roots)(y), np.diag(-0.25 * y**-1.5), rtol=1e-14)
    # d2/dx2 (sqrt(x) - 1)^2 = 0.5 x^-1.5: at x = 1 the cotangent of sqrt(x) is 2 (1 - 1) = 0
    x = np.array([1.0, 4.0])
    np.testing.assert_allclose(
        adgen.hessian(distance_to_one)(x), np.diag(0.5 * x**-1.5), rtol=1e-14
    )
    np.testing.assert_allclose(adgen.hvp(distance_to_one)(x, np.ones(2)), 0.5 * x**-1.5, rtol=1e-14)
    # the test in Python of ``**`` on numbers is differentiated again too
    expected = -0.25 * 4.0**-1.5 + 2.5 * 1.5 * 4.0**0.5
    assert math.isclose(adgen.hessian(scalar_powers)(4.0), expected, rel_tol=1e-14)
    assert math.isclose(adgen.hessian(scalar_powers)(np.array(4.0)), expected, rel_tol=1e-14)


def scalar_powers(x):
    return x**0.5 + x**2.5


def test_helpers_directly() -> None:
    nan, inf = math.nan, math.inf
    r = np.array([nan, nan, inf, 1.0])
    seed = np.array([0.0, 1.0, 0.0, 0.0])
    out = rt.zero_safe(r, seed)
    assert out[0] == 0.0 and np.isnan(out[1]) and out[2] == inf and out[3] == 1.0
    assert rt.zero_safe(np.zeros((2, 0)), np.zeros(0)).shape == (2, 0)
    # broadcasting: a seed of fewer axes (a tangent broadcast in forward mode)
    out = rt.zero_safe(np.array([[nan, 2.0], [nan, nan]]), np.array([0.0, 1.0]))
    assert out[0, 0] == 0.0 and out[1, 0] == 0.0 and np.isnan(out[1, 1]) and out[0, 1] == 2.0
    assert rt.zero_safe(np.array([nan], dtype=np.float32), np.zeros(1)).dtype == np.float32
    assert type(rt.zero_safe(np.float64(nan), 0.0)) is np.float64
    t = np.array([5.0, 6.0, 7.0, 8.0])
    assert rt.zero_safe_tangent(t, r, seed).tolist() == [0.0, 6.0, 7.0, 8.0]
    assert rt.zero_safe_tangent(3.0, nan, 0.0) == 0.0 and rt.zero_safe_tangent(3.0, nan, 1.0) == 3.0
    assert rt.power(0.0, -0.5) == inf and rt.power(-0.0, -3) == -inf and rt.power(-0.0, -2) == inf
    # the fast path: no NaN, no copy
    regular = np.array([1.0, inf])
    assert rt.zero_safe(regular, np.zeros(2)) is regular


def test_a_users_rule_declared_singular() -> None:
    """``adgen.rule(fn, singular=True)``: the user's templates get the same guard."""

    def root(x):
        return np.sqrt(x)

    def total(x):
        return np.sum(root(x) * np.array([1.0, 0.0]))

    with adgen.rules.registrations():

        @adgen.rule(root, elementwise=True, singular=True)
        def _root(ans, x):
            def jvp(d):
                return d / (2.0 * ans)

            def vjp(g):
                return g / (2.0 * ans)

        assert adgen.grad(total)(np.array([4.0, 0.0])).tolist() == [0.25, 0.0]
        assert "rt.zero_safe" in adgen.source(total)
