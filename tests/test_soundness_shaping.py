"""Regressions of "Never silently wrong, again": joins of numbers, the np.split family,
module constants in code differentiated twice, and values put back by reverse mode's stack.

Each test states the exact answer (or, for the grids, an exact formula evaluated per entry);
finite differences only where a closed form would be a copy of the code under test.
"""

from __future__ import annotations

import ast
import itertools
import math
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from source_modules import write_module

import adgen
from adgen import pipeline
from adgen.rules import registered
from adgen.rules.namespace import TEMPLATE_GLOBALS
from adgen.testing import check_grads

_NUMBERS = itertools.count()


def _module(tmp_path: Path, name: str, source: str) -> types.ModuleType:
    """Functions written as source (adgen reads source), imported from a file."""
    return write_module(tmp_path, name, "import math\n\nimport numpy as np\n\n" + source)


# -- C1: joins of numbers, 0-d arrays, constants and arrays ----------------------------------
def hstack_of_scalars(x):
    return np.sum(np.hstack([x[0], 2.0 * x[1]]))


def test_hstack_of_scalars_in_reverse_mode() -> None:
    """The fuzzer's case: the cotangent of a number joined by np.hstack is one entry."""
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(adgen.grad(hstack_of_scalars)(x), [1.0, 2.0])
    value, tangent = adgen.jvp(hstack_of_scalars, (x,), (np.array([0.5, -1.0]),))
    assert (value, tangent) == (5.0, -1.5)
    np.testing.assert_array_equal(adgen.hessian(hstack_of_scalars)(x), np.zeros((2, 2)))


JOINS = {
    "hstack": "np.hstack",
    "vstack": "np.vstack",
    "column_stack": "np.column_stack",
    "dstack": "np.dstack",
    "stack": "np.stack",
    "array": "np.array",
}


@pytest.mark.parametrize("join", sorted(JOINS))
def test_joins_of_numbers_and_constants(tmp_path: Path, join: str) -> None:
    """parts (x0, 2, x0 x1): f = x0^2 + 4 + x0^2 x1^2, every join, both modes, Hessian."""
    mod = _module(
        tmp_path,
        f"joins_{join}",
        f"def f(x):\n    return np.sum({JOINS[join]}((x[0], 2.0, x[0] * x[1])) ** 2)\n",
    )
    x = np.array([1.5, -2.0])
    np.testing.assert_allclose(adgen.grad(mod.f)(x), [15.0, -9.0], rtol=1e-15)
    _, tangent = adgen.jvp(mod.f, (x,), (np.array([1.0, 0.0]),))
    assert tangent == pytest.approx(15.0, rel=1e-15)
    np.testing.assert_allclose(adgen.hessian(mod.f)(x), [[10.0, -12.0], [-12.0, 4.5]], rtol=1e-14)
    np.testing.assert_allclose(adgen.hvp(mod.f)(x, np.array([1.0, 1.0])), [-2.0, -7.5], rtol=1e-14)


def hstack_mixed(x):
    return np.sum(np.hstack((x[0], x, 3.0)) * np.arange(1.0, 5.0))


def hstack_of_floats(a, b):
    return np.sum(np.hstack((a, b)) ** 2)


def hstack_of_float_and_array(a, v):
    return np.sum(np.hstack((v, a)) * np.hstack((a, v)))


def hstack_of_an_array(x):
    return np.sum(np.hstack(x) ** 2)


def concatenate_flat(x, y):
    return np.sum(np.concatenate((x, y), axis=None) * np.arange(10.0))


def test_hstack_of_numbers_and_arrays_mixed() -> None:
    # entries x0, x0, x1, 3 weighted 1, 2, 3, 4: f = 3 x0 + 3 x1 + 12
    np.testing.assert_array_equal(adgen.grad(hstack_mixed)(np.array([0.5, 2.0])), [3.0, 3.0])
    out, pullback = adgen.vjp(hstack_mixed, np.array([0.5, 2.0]))
    assert out == 19.5
    np.testing.assert_array_equal(pullback(2.0)[0], [6.0, 6.0])


def test_hstack_of_python_floats() -> None:
    da, db = adgen.grad(hstack_of_floats, wrt=(0, 1))(1.5, -0.5)
    assert (da, db) == (3.0, -1.0)
    assert type(da) is float and type(db) is float


def test_hstack_of_a_float_and_an_array() -> None:
    # (v0, v1, a) . (a, v0, v1) = v0 a + v1 v0 + a v1
    v = np.array([2.0, -1.0])
    da, dv = adgen.grad(hstack_of_float_and_array, wrt=(0, 1))(0.5, v)
    assert da == 1.0
    np.testing.assert_array_equal(dv, [-0.5, 2.5])


def test_hstack_of_a_1d_array_joins_its_numbers() -> None:
    """np.hstack(x) of a 1-d array: its items are numbers (0-d), each one entry."""
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_array_equal(adgen.grad(hstack_of_an_array)(x), 2.0 * x)
    np.testing.assert_array_equal(adgen.hessian(hstack_of_an_array)(x), 2.0 * np.eye(3))


def test_concatenate_with_axis_none_flattens() -> None:
    """axis=None is not np.concatenate's default (0): it must reach the derivative code."""
    x, y = np.ones((2, 3)), np.ones(4)
    gx, gy = adgen.grad(concatenate_flat, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(gy, np.arange(6.0, 10.0))
    _, tangent = adgen.jvp(concatenate_flat, (x, y), (np.ones((2, 3)), np.zeros(4)))
    assert tangent == 15.0


def test_default_keywords_are_only_dropped_where_they_are_the_default() -> None:
    import ast

    from adgen.rules.registry import _says_the_default

    def _default_is(func: str, keyword: str, value: object = None) -> bool:
        if value is None and keyword == "keepdims":
            value = False
        return _says_the_default(func, ast.keyword(arg=keyword, value=ast.Constant(value)))

    assert _default_is("np.sum", "axis") and _default_is("np.sum", "keepdims")
    assert _default_is("rt.unreduce", "keepdims")
    assert not _default_is("np.concatenate", "axis")  # its default is 0
    assert not _default_is("np.stack", "axis")
    # any keyword a template passes as its callee's own default (not another value, nor one
    # equal to it of another type)
    assert _default_is("np.linspace", "endpoint", True)
    assert not _default_is("np.linspace", "endpoint", False)
    assert _default_is("np.linspace", "axis", 0)
    assert not _default_is("np.linspace", "axis", False)


# -- the np.split family ---------------------------------------------------------------------
def split_pair(x):
    a, b = np.split(x, 2)
    return np.sum(a * b)


def split_stacked(x):
    return np.sum(np.stack(np.split(x, 2)) ** 2)


def test_split_unpacked_both_modes_and_hessian() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(adgen.grad(split_pair)(x), [3.0, 4.0, 1.0, 2.0])
    _, tangent = adgen.jvp(split_pair, (x,), (np.array([1.0, 0.0, 0.0, 0.0]),))
    assert tangent == 3.0
    swap = np.array([[0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, 0]], dtype=float)
    np.testing.assert_array_equal(adgen.hessian(split_pair)(x), swap)


def test_split_results_used_together() -> None:
    x = np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_array_equal(adgen.grad(split_stacked)(x), 2.0 * x)
    np.testing.assert_array_equal(adgen.hvp(split_stacked)(x, np.ones(4)), 2.0 * np.ones(4))


ONE_PIECE = {
    "split_1": ("np.split(x, 1)[0]", (4,)),
    "split_empty_list": ("np.split(x, [])[0]", (2, 3)),
    "array_split_1": ("np.array_split(x, 1, axis=1)[0]", (2, 3)),
    "hsplit_1": ("np.hsplit(x, 1)[0]", (5,)),
    "vsplit_1": ("np.vsplit(x, [])[0]", (2, 2)),
    "dsplit_1": ("np.dsplit(x, 1)[0]", (1, 2, 3)),
}


@pytest.mark.parametrize("case", sorted(ONE_PIECE))
def test_split_into_one_piece(tmp_path: Path, case: str) -> None:
    """One section is a list of one array (NumPy's result), not the array: forward mode took
    its first row as the piece's tangent, silently."""
    call, shape = ONE_PIECE[case]
    mod = _module(tmp_path, f"one_piece_{case}", f"def f(x):\n    return np.sum(np.sin({call}))\n")
    x = np.linspace(-1.0, 1.5, math.prod(shape)).reshape(shape)
    v = np.linspace(0.5, 2.0, x.size).reshape(shape)
    _, tangent = adgen.jvp(mod.f, (x,), (v,))
    assert tangent == pytest.approx(float(np.sum(np.cos(x) * v)), rel=1e-14)
    np.testing.assert_allclose(adgen.grad(mod.f)(x), np.cos(x), rtol=1e-15)
    np.testing.assert_allclose(adgen.hvp(mod.f)(x, v), -np.sin(x) * v, rtol=1e-14)


# (function, indices_or_sections, axis, array shape)
SPLITS = [
    ("split", "3", None, (6,)),
    ("split", "[2]", None, (6,)),
    ("split", "[1, 4]", "-1", (2, 6)),
    ("split", "2", "0", (4, 3)),
    ("split", "[0, 2, 2]", "1", (2, 3, 2)),
    ("split", "2", "2", (2, 3, 4)),
    ("array_split", "4", None, (7,)),
    ("array_split", "[3, 5]", "1", (2, 7)),
    ("array_split", "3", "-1", (2, 2, 5)),
    ("hsplit", "[1, 2]", None, (4,)),
    ("hsplit", "2", None, (3, 4)),
    ("hsplit", "[1]", None, (2, 3, 2)),
    ("vsplit", "[1, 3]", None, (4, 2)),
    ("vsplit", "2", None, (4, 2, 3)),
    ("dsplit", "[1, 2]", None, (2, 1, 4)),
    ("dsplit", "2", None, (2, 2, 4)),
]
USES = {
    # every part, weighted by its position: a part mistaken for another changes the answer
    "enumerate": "    total = 0.0\n    for k, p in enumerate(parts):\n"
    "        total = total + (k + 1.0) * np.sum(p ** 3)\n    return total\n",
    "for_each": "    total = 0.0\n    w = 1.0\n    for p in parts:\n"
    "        total = total + w * np.sum(p ** 3)\n        w = w + 1.0\n    return total\n",
    "first_only": "    return np.sum(parts[0] ** 3)\n",
    "last_only": "    return {n} * np.sum(parts[-1] ** 3)\n",
}


def _split_weights(fn: str, sections: str, axis: str | None, shape: tuple[int, ...], use: str):
    """The weight of each entry of x in the sum (0 for parts not used), from NumPy's split of
    an array of entry numbers."""
    numbers = np.arange(math.prod(shape)).reshape(shape)
    args = [ast.literal_eval(sections)] + ([int(axis)] if axis is not None else [])
    parts = getattr(np, fn)(numbers, *args)
    weights = np.zeros(shape)
    n = len(parts)
    for k, p in enumerate(parts):
        if use in ("enumerate", "for_each") or (use == "first_only" and k == 0):
            weights.flat[np.ravel(p)] = k + 1.0 if use != "first_only" else 1.0
        if use == "last_only" and k == n - 1:
            weights.flat[np.ravel(p)] = float(n)
    return weights, n


def _split_cases() -> list[Any]:
    return [
        pytest.param(s, use, id=f"{s[0]}({s[1]}, axis={s[2]}) {s[3]} {use}")
        for s in SPLITS
        for use in USES
    ]


@pytest.mark.parametrize(("split", "use"), _split_cases())
def test_split_family_grid(tmp_path: Path, split: tuple[Any, ...], use: str) -> None:
    """f = sum_k w_k sum(part_k ** 3) over the parts used: gradient 3 w x^2, Hessian-vector
    product 6 w x v, in both modes, against exact values entry by entry."""
    fn, sections, axis, shape = split
    weights, n = _split_weights(fn, sections, axis, shape, use)
    call = f"np.{fn}(x, {sections}" + (f", axis={axis})" if axis is not None else ")")
    body = f"    parts = {call}\n" + USES[use].format(n=n)
    mod = _module(tmp_path, f"grid_{next(_NUMBERS)}", "def f(x):\n" + body)
    x = np.linspace(-1.3, 1.1, math.prod(shape)).reshape(shape)
    v = np.linspace(1.0, -0.5, x.size).reshape(shape)
    np.testing.assert_allclose(adgen.grad(mod.f)(x), 3.0 * weights * x**2, rtol=1e-13, atol=0)
    _, tangent = adgen.jvp(mod.f, (x,), (v,))
    assert tangent == pytest.approx(float(np.sum(3.0 * weights * x**2 * v)), rel=1e-13)
    np.testing.assert_allclose(adgen.hvp(mod.f)(x, v), 6.0 * weights * x * v, rtol=1e-13, atol=0)


def split_list(x):
    return np.split(x, [2])


def test_a_returned_list_of_split_pieces() -> None:
    """autograd's grid returns np.split's list itself: a list of pieces of different shapes
    takes a list (or tuple) of cotangents, one per piece."""
    x = np.arange(5.0)
    out, pullback = adgen.vjp(split_list, x)
    assert isinstance(out, list) and [p.tolist() for p in out] == [[0.0, 1.0], [2.0, 3.0, 4.0]]
    expected = [1.0, 2.0, 3.0, 4.0, 5.0]
    np.testing.assert_array_equal(
        pullback([np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])])[0], expected
    )
    np.testing.assert_array_equal(
        pullback((np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])))[0], expected
    )
    _, tangents = adgen.jvp(split_list, (x,), (np.arange(10.0, 15.0),))
    assert [t.tolist() for t in tangents] == [[10.0, 11.0], [12.0, 13.0, 14.0]]
    with pytest.raises(adgen.ShapeMismatchError, match="returns a list of 2 values"):
        pullback(np.ones(5))
    with pytest.raises(adgen.ShapeMismatchError, match="cotangent 1 has shape"):
        pullback([np.ones(2), np.ones(2)])
    check_grads(split_list, x)


# -- loops over a tuple of arrays: second order through reverse mode's saved values ----------
def loop_over_parts(x):
    total = 0.0
    for p in (x[:2], x[2:]):
        total = total + np.sum(np.sin(p) * p)
    return total


def popped_item(x):
    xs = [x[0], 2.0 * x[1]]
    v = xs.pop()
    return v * v * x[0]


def test_hessian_of_a_loop_over_a_tuple() -> None:
    """Reverse mode puts a loop variable back from its stack (`p = stack.pop()`) under a new
    name; read again, that value's tangent was dropped: a wrong Hessian, silently."""
    x = np.array([-1.0, 0.5, 0.3, 1.2])
    exact = np.diag(2.0 * np.cos(x) - x * np.sin(x))
    np.testing.assert_allclose(adgen.hessian(loop_over_parts)(x), exact, rtol=1e-14, atol=1e-15)


def test_hessian_through_a_pop_of_the_users_own_list() -> None:
    """The user's `v = xs.pop()` moves an item: it is not one of reverse mode's restores."""
    # f = 4 x1^2 x0
    np.testing.assert_array_equal(adgen.grad(popped_item)(np.array([1.0, 2.0])), [16.0, 16.0])
    np.testing.assert_array_equal(
        adgen.hessian(popped_item)(np.array([1.0, 2.0])), [[0.0, 16.0], [16.0, 8.0]]
    )


# -- C5: module constants (np.pi, math.inf...) in code differentiated again ------------------
def sinc_sum(x):
    return np.sum(np.sinc(x))


def user_constants(x):
    return np.sum(np.sin(x * np.pi)) * math.tau + np.sum(x[:, np.newaxis] * x * np.e)


def test_hvp_of_sinc() -> None:
    """The fuzzer's case: sinc's derivative template names np.pi."""
    x = np.array([0.3, -0.7])
    u = np.pi * x
    exact = np.pi**2 * (-np.sin(u) / u - 2.0 * np.cos(u) / u**2 + 2.0 * np.sin(u) / u**3)
    np.testing.assert_allclose(adgen.hvp(sinc_sum)(x, np.ones(2)), exact, rtol=1e-12)


def test_module_constants_in_the_users_code() -> None:
    """np.pi & co. in an elementwise operation: read at first order too."""
    x = np.array([0.3, -0.7])
    # f = tau sum(sin(pi x)) + e (sum x)^2
    grad = 2 * np.pi**2 * np.cos(np.pi * x) + 2.0 * np.e * np.sum(x)
    np.testing.assert_allclose(adgen.grad(user_constants)(x), grad, rtol=1e-14)
    hessian = np.diag(-2 * np.pi**3 * np.sin(np.pi * x)) + 2.0 * np.e
    np.testing.assert_allclose(adgen.hessian(user_constants)(x), hessian, rtol=1e-14)


def _constants_named(prim: Any) -> set[str]:
    """The module constants (np.pi, math.inf...) a rule's templates name."""
    found = set()
    for template in [*prim.jvp.values(), *prim.vjp.values()]:
        for stmt in template.body:
            for node in ast.walk(stmt):
                if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
                    continue
                module = TEMPLATE_GLOBALS.get(node.value.id)
                value = getattr(module, node.attr, None) if module is not None else None
                if isinstance(value, (int, float)) or (value is None and node.attr == "newaxis"):
                    found.add(f"{node.value.id}.{node.attr}")
    return found


# every rule whose templates name a module constant, with a scalar function calling it and a
# point to differentiate at (a new such rule fails test_every_rule_naming_a_constant_is_here)
CONSTANT_RULES = {
    "np.sinc": ("def f(x):\n    return np.sum(np.sinc(x))\n", (np.array([0.3, -0.7, 1e-3]),)),
    "np.angle": (
        "def f(x):\n    return np.sum(np.angle(x * (1.0 + 0.5j), deg=True) * x)\n",
        (np.array([0.3, -0.7]),),
    ),
    "np.deg2rad": ("def f(x):\n    return np.sum(np.sin(np.deg2rad(x)))\n", (np.ones(2),)),
    "np.radians": ("def f(x):\n    return np.sum(np.cos(np.radians(x)) * x)\n", (np.ones(2),)),
    "np.rad2deg": ("def f(x):\n    return np.sum(np.rad2deg(x) ** 3)\n", (np.array([0.2, -0.1]),)),
    "np.degrees": ("def f(x):\n    return np.sum(np.degrees(x) * x)\n", (np.array([0.2, -0.1]),)),
    "math.erf": ("def f(x):\n    return math.erf(x) * x\n", (0.4,)),
    "math.erfc": ("def f(x):\n    return math.erfc(x) * x\n", (-0.3,)),
    "math.sqrt": ("def f(x):\n    return math.sqrt(x) * x\n", (0.7,)),
    "math.pow": ("def f(x, y):\n    return math.pow(x, y) * y\n", (0.7, 1.3)),
    # rules that test their singular points against math.inf / math.nan
    "math.asin": ("def f(x):\n    return math.asin(x) * x\n", (0.3,)),
    "math.acos": ("def f(x):\n    return math.acos(x) * x\n", (-0.4,)),
    "math.acosh": ("def f(x):\n    return math.acosh(x) * x\n", (1.7,)),
    "math.atan2": ("def f(x, y):\n    return math.atan2(x, y) * y\n", (0.7, 1.3)),
    "pow": ("def f(x, y):\n    return pow(x, y) * y\n", (0.7, 1.3)),
    "np.power": (
        "def f(x, y):\n    return np.sum(np.power(x, y) * y)\n",
        (np.array([0.7, 1.2]), 1.3),
    ),
    "rt.power": ("def f(x, y):\n    return x ** y * y\n", (0.7, 2.5)),
    # the gradient of a norm (np.linalg.norm's derivative code) names np.inf in its branches
    "rt.norm_grad": (
        "def f(x):\n    return np.linalg.norm(x, 3.0) * np.sum(x * x)\n",
        (np.array([0.4, -1.5, 0.7]),),
    ),
    # scipy.stats rules name np.pi, np.inf or np.nan (the support's edges, log(2 pi))
    "scipy.special.fresnel": (
        "import scipy.special\n\n\n"
        "def f(x):\n    s, c = scipy.special.fresnel(x)\n    return np.sum(s * c * x)\n",
        (np.array([0.4, 1.1]),),
    ),
    "scipy.special.sici": (
        "import scipy.special\n\n\n"
        "def f(x):\n    si, ci = scipy.special.sici(x)\n    return np.sum(si * ci)\n",
        (np.array([0.7, 1.9]),),
    ),
    "scipy.special.stdtr": (
        "import scipy.special\n\n\ndef f(x):\n    return np.sum(scipy.special.stdtr(3.0, x) * x)\n",
        (np.array([0.3, -1.2]),),
    ),
    "scipy.special.stdtrit": (
        "import scipy.special\n\n\n"
        "def f(x):\n    return np.sum(scipy.special.stdtrit(4.0, x) ** 2)\n",
        (np.array([0.3, 0.8]),),
    ),
    "scipy.stats.norm.logpdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.norm.logpdf(x, 0.3, 1.2) * x)\n",
        (np.array([0.2, -0.5]),),
    ),
    "scipy.stats.norm.cdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.norm.cdf(x, 0.3, 1.2) * x)\n",
        (np.array([0.2, -0.5]),),
    ),
    "scipy.stats.norm.logcdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.norm.logcdf(x, 0.3, 1.2) * x)\n",
        (np.array([0.2, -0.5]),),
    ),
    "scipy.stats.norm.sf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.norm.sf(x, 0.3, 1.2) * x)\n",
        (np.array([0.2, -0.5]),),
    ),
    "scipy.stats.norm.logsf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.norm.logsf(x, 0.3, 1.2) * x)\n",
        (np.array([0.2, -0.5]),),
    ),
    "scipy.stats.t.logpdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.t.logpdf(x, 4.0, 0.1, 1.3) * x)\n",
        (np.array([0.2, -0.5]),),
    ),
    "scipy.stats.laplace.logpdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.laplace.logpdf(x, 0.1, 1.3) * x)\n",
        (np.array([0.4, -0.5]),),
    ),
    "scipy.stats.lognorm.logpdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.lognorm.logpdf(x, 0.7) * x)\n",
        (np.array([0.4, 1.5]),),
    ),
    "scipy.stats.cauchy.logpdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.cauchy.logpdf(x, 0.1, 0.8) * x)\n",
        (np.array([0.4, -0.5]),),
    ),
    "scipy.stats.gamma.logpdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.gamma.logpdf(x, 2.0) * x)\n",
        (np.array([0.4, 1.5]),),
    ),
    "scipy.stats.beta.logpdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.beta.logpdf(x, 2.0, 3.0) * x)\n",
        (np.array([0.3, 0.6]),),
    ),
    "scipy.stats.expon.logpdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.expon.logpdf(x, 0.0, 1.5) * x)\n",
        (np.array([0.4, 1.5]),),
    ),
    "scipy.stats.logistic.logpdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.logistic.logpdf(x, 0.1, 0.8) * x)\n",
        (np.array([0.4, -0.5]),),
    ),
    "scipy.stats.norm._cdf": (
        "import scipy.stats\n\n\ndef f(x):\n    return np.sum(scipy.stats.norm._cdf(x) * x)\n",
        (np.array([0.4, -0.5]),),
    ),
    "scipy.stats.norm._sf": (
        "import scipy.stats\n\n\ndef f(x):\n    return np.sum(scipy.stats.norm._sf(x) * x)\n",
        (np.array([0.4, -0.5]),),
    ),
    "scipy.stats.norm._pdf": (
        "import scipy.stats\n\n\ndef f(x):\n    return np.sum(scipy.stats.norm._pdf(x) * x)\n",
        (np.array([0.4, -0.5]),),
    ),
    "scipy.stats.norm._logpdf": (
        "import scipy.stats\n\n\ndef f(x):\n    return np.sum(scipy.stats.norm._logpdf(x) * x)\n",
        (np.array([0.4, -0.5]),),
    ),
    "scipy.stats.norm._logcdf": (
        "import scipy.stats\n\n\ndef f(x):\n    return np.sum(scipy.stats.norm._logcdf(x) * x)\n",
        (np.array([0.4, -0.5]),),
    ),
    "scipy.stats.norm._logsf": (
        "import scipy.stats\n\n\ndef f(x):\n    return np.sum(scipy.stats.norm._logsf(x) * x)\n",
        (np.array([0.4, -0.5]),),
    ),
    "scipy.stats.logistic.cdf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.logistic.cdf(x, 0.1, 0.8) * x)\n",
        (np.array([0.4, -0.5]),),
    ),
    "scipy.stats.logistic.sf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.logistic.sf(x, 0.1, 0.8) * x)\n",
        (np.array([0.4, -0.5]),),
    ),
    "scipy.stats.poisson.logpmf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.poisson.logpmf(3, x) * x)\n",
        (np.array([0.4, 2.5]),),
    ),
    "scipy.stats.poisson._logpmf": (
        "import scipy.stats\n\n\n"
        "def f(x):\n    return np.sum(scipy.stats.poisson._logpmf(3.0, x) * x)\n",
        (np.array([0.4, 2.5]),),
    ),
}


# the constants registry.partials' wrapper names (np.where(..., np.nan, ...), ans > -np.inf):
# one wrapper, checked at second order through the rules of it listed above; a rule naming
# only these needs no program of its own
_WRAPPER_CONSTANTS = frozenset({"np.nan", "np.inf"})


def test_every_rule_naming_a_constant_is_here() -> None:
    naming = {
        prim.name
        for _, prim in registered()
        if prim.differentiable and _constants_named(prim) - _WRAPPER_CONSTANTS
    }
    assert {"np.sinc", "math.pow", "math.sqrt"} <= naming
    assert naming <= set(CONSTANT_RULES), sorted(naming - set(CONSTANT_RULES))
    wrapped = {
        prim.name for _, prim in registered() if prim.differentiable and _constants_named(prim)
    }
    assert set(CONSTANT_RULES) <= wrapped, sorted(set(CONSTANT_RULES) - wrapped)


@pytest.mark.parametrize("rule", sorted(CONSTANT_RULES))
def test_rules_naming_constants_differentiate_twice(tmp_path: Path, rule: str) -> None:
    """Second derivatives through adgen's own first-order code, both ways: its forward code
    differentiated in both modes, and its reverse code in forward mode (the Hessian-vector
    product), checked against finite differences of that code."""
    source, args = CONSTANT_RULES[rule]
    params = "x, y" if len(args) == 2 else "x"
    # the reverse-mode code as a function of the arguments and the seed: its gradients
    wrapper = f"def rev({params}, seed):\n    res = _rev({params}, seed)\n    return res[1]\n"
    mod = _module(tmp_path, "constants_" + rule.replace(".", "_"), source + "\n\n" + wrapper)
    names = tuple(params.split(", "))
    ones = tuple(np.ones_like(a) if isinstance(a, np.ndarray) else 1.0 for a in args)
    forward = pipeline.derivative(mod.f, "forward", names).compiled
    check_grads(forward, *args, *ones, rtol=1e-6, atol=1e-7)
    mod._rev = pipeline.derivative(mod.f, "reverse", names).compiled
    check_grads(mod.rev, *args, 1.0, rtol=1e-6, atol=1e-7)
    # the Hessian (forward over reverse) against central differences of the gradient
    eps = 1e-6
    x = args[0]
    step = eps * (np.ones_like(x) if isinstance(x, np.ndarray) else 1.0)
    grad = adgen.grad(mod.f)
    numeric = (grad(x + step, *args[1:]) - grad(x - step, *args[1:])) / (2 * eps)
    hvp = adgen.hvp(mod.f)(*args, np.ones_like(x) if isinstance(x, np.ndarray) else 1.0)
    np.testing.assert_allclose(hvp, numeric, rtol=1e-6, atol=1e-7)


def lstsq_residuals(a, b):
    return np.sum(np.linalg.lstsq(a, b)[1])


def test_lstsq_residuals_alone_are_not_given_the_shape_of_a_rank_one_stand_in() -> None:
    """Code specialised for the arguments' shapes ran lstsq on stand-ins (of rank one) to
    learn its results' shapes, and took the residuals to be empty: d/db ||b - a x||^2 is
    2 (b - a x), d/da is -2 (b - a x) x^T."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 2)), rng.standard_normal(3)
    x = np.linalg.lstsq(a, b)[0]
    e = b - a @ x
    ga, gb = adgen.grad(lstsq_residuals, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(gb, 2.0 * e, rtol=1e-10)
    np.testing.assert_allclose(ga, -2.0 * np.outer(e, x), rtol=1e-10, atol=1e-12)
    check_grads(lstsq_residuals, a, b)
