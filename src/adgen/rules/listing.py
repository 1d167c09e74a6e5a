"""What adgen can differentiate, read from the registry (so the list cannot drift).

:func:`supported` lists the functions by the names users write; :func:`markdown`
renders ``docs/supported.md`` (``python docs/make_supported.py``; a test fails when
the page and the registry disagree).

>>> "np.sin" in supported()
True
>>> "np.floor" in supported("nondifferentiable")
True
>>> "adgen.stop_gradient" in supported("nondifferentiable")
True
"""

from __future__ import annotations

import builtins
import math
import operator
import sys
import types
from typing import Any

import numpy as np

from adgen.rules import loader, registry
from adgen.rules.registry import (
    _ATTRIBUTES,
    _BINOPS,
    _COMPARES,
    _METHODS,
    _UNARYOPS,
    ArrayMethod,
    Primitive,
    registered,
    spelling,
)
from adgen.rules.runtime import interpolate as rt_interpolate


def _modules() -> list[tuple[str, Any]]:
    """Modules searched for the names a function goes by, most specific first."""
    out: list[tuple[str, Any]] = [
        ("np.linalg", np.linalg),
        ("np.fft", np.fft),
        ("np", np),
        ("math", math),
    ]
    loader.load_all()  # SciPy is optional: its rules (and module) exist when it is installed
    for name in (
        "scipy.special",
        "scipy.linalg",
        "scipy.signal",
        "scipy.spatial.distance",
        "scipy.integrate",
        "scipy.optimize",
    ):
        module = sys.modules.get(name)
        if module is not None:
            out.insert(0, (name, module))
    return out


_SYMBOLS = {
    "add": "x + y",
    "sub": "x - y",
    "mul": "x * y",
    "truediv": "x / y",
    "floordiv": "x // y",
    "mod": "x % y",
    "pow": "x ** y",
    "matmul": "x @ y",
    "neg": "-x",
    "pos": "+x",
    "invert": "~x",
    "not_": "not x",
    "getitem": "x[index]",
    "lt": "x < y",
    "le": "x <= y",
    "gt": "x > y",
    "ge": "x >= y",
    "eq": "x == y",
    "ne": "x != y",
    "is_": "x is y",
    "is_not": "x is not y",
    "contained": "x in y",
    "not_contained": "x not in y",
}


def names_of(fn: Any) -> list[str]:
    """Every name under which users reach ``fn`` (``np.abs`` and ``np.absolute``...)."""
    if fn in _BINOPS or fn in _UNARYOPS or fn in _COMPARES or fn is operator.getitem:
        return [_SYMBOLS.get(fn.__name__, fn.__name__)]
    if isinstance(fn, ArrayMethod):
        return [f"x.{fn.__name__}()"]
    if isinstance(fn, types.MethodType):  # a method of a library's object (scipy.stats.norm.pdf)
        try:
            return [spelling(fn)]
        except ValueError:
            return []
    out = []
    modules = _modules()
    own = sys.modules.get("adgen")  # adgen's own functions (adgen.stop_gradient)
    if own is not None:
        modules.append(("adgen", own))
    for alias, module in modules:
        for attr in sorted(vars(module)):
            if not attr.startswith("_") and vars(module)[attr] is fn:
                out.append(f"{alias}.{attr}")
    label = str(getattr(fn, "__name__", ""))
    if label and getattr(builtins, label, None) is fn:
        out.append(label)
    return out


def _entries(kind: str) -> list[tuple[str, Any, Primitive]]:
    want = kind == "differentiable"
    out = []
    for fn, prim in registered():
        if prim.differentiable != want or prim.name == "assign" or isinstance(fn, ArrayMethod):
            continue  # methods such as x.astype() are listed with the array methods
        out += [(name, fn, prim) for name in names_of(fn)]
    if want:  # solvers called through a function of adgen's (solve_ivp, minimize): its rule
        for solver, spec in list(registry._CALLBACKS.values()):
            runs = registry.lookup(spec.runs_as) if spec.runs_as is not None else None
            if runs is not None:
                out += [(name, solver, runs) for name in names_of(solver)]
    return sorted(out, key=lambda e: e[0])


def supported(kind: str = "differentiable") -> list[str]:
    """The names of the functions adgen differentiates (``kind="differentiable"``: forward
    and reverse rules) or knows to have a zero derivative (``"nondifferentiable"``)."""
    if kind not in ("differentiable", "nondifferentiable"):
        raise ValueError("kind is 'differentiable' or 'nondifferentiable'")
    names = [name for name, _, _ in _entries(kind)]
    if kind == "differentiable":  # (and those read as the NumPy calls they make)
        names += registry.read_as_python_names()
    return names


def library_count() -> int:
    """How many distinct NumPy and SciPy functions have forward and reverse rules."""
    fns = {
        loader.identity(fn)
        for name, fn, _ in _entries("differentiable")
        if name.startswith(("np.", "scipy."))
    }
    return len(fns) + len(registry.read_as_python_names())


def _methods() -> list[str]:
    loader.load_all()
    out = []
    for method, (fn, _) in sorted(_METHODS.items()):
        prim = next((p for f, p in registered() if f is fn), None)
        if prim is not None and prim.differentiable:
            target = "" if isinstance(fn, ArrayMethod) else spelling(fn)
            out.append(f"`x.{method}(...)`" + (f" (as `{target}`)" if target else ""))
    out += [f"`x.{a}`" for a, p in sorted(_ATTRIBUTES.items()) if p.differentiable]
    return out


def _refusals() -> list[str]:
    """The reasons adgen's own rules give for the derivatives they refuse, each once."""
    registry.registered()  # (every rule module imported)
    reasons = {
        template.refusal.rstrip(".")
        for key, (_, prim) in list(registry._REGISTRY.items())
        if key in registry._ORDER  # (adgen's rules, not a user's)
        for template in (*prim.jvp.values(), *prim.vjp.values())
        if template.refusal is not None
    }
    return sorted(reasons)


def markdown() -> str:
    """The text of ``docs/supported.md``."""
    diff = _entries("differentiable")
    groups: dict[str, list[str]] = {}
    for name, _, prim in diff:
        if name.startswith("scipy.stats."):  # the methods of its distributions
            group = "scipy.stats"
        elif name.startswith(("np.", "scipy.")):
            group = name.rsplit(".", 1)[0]
        elif name.startswith("math."):
            group = "math"
        elif " " in name or name.startswith(("-", "+", "x")):
            group = "operators"
        else:
            group = "builtins"
        label = (
            f"`{name}`"
            + ("ᶜ" if prim.complex else "")
            + (" (several results)" if prim.outputs is not None else "")
        )
        groups.setdefault(group, []).append(label)
    lines = [
        "# Supported functions",
        "",
        "<!-- generated from the rule registry by `python docs/make_supported.py`; do not edit -->",
        f"<!-- with NumPy {np.__version__} -->",
        "",
        f"adgen differentiates **{library_count()} NumPy and SciPy functions** in forward "
        f"**and** reverse mode (by rules, and {len(registry.read_as_python_names())} by "
        "reading them as the NumPy calls they make), listed below by the names you write "
        "(aliases of one function are listed under each name). Each rule is checked by tests "
        "generated from the registry "
        "(`tests/test_registry_rules.py`, `tests/test_rules.py`) against finite differences "
        "over scalar, vector, matrix, batched and broadcasting shapes and float32.",
        "",
        f"Functions marked ᶜ ({sum(p.complex for _, _, p in diff)}) are differentiated for "
        "complex values too (complex128 and complex64, checked the same way), under JAX's "
        "convention ([rules.md](rules.md#complex-numbers)); where a complex value reaches "
        "another function with a differentiated one, adgen refuses, naming the line.",
        "",
        "A call to a function that is not listed here (and is not your own Python function, "
        "which adgen reads and differentiates) is refused with `adgen.NoRuleError`, naming "
        "the file and line; see [rules.md](rules.md) to register a rule.",
        "",
    ]
    order = sorted(groups, key=lambda g: (not g.startswith("np"), not g.startswith("scipy"), g))
    for group in order:
        title = {
            "operators": "Python operators",
            "builtins": "Python builtins",
            "math": "The `math` module",
        }.get(group, f"`{group}`")
        lines += [f"## {title} ({len(groups[group])})", "", ", ".join(groups[group]), ""]
    methods = _methods()
    lines += [f"## Array methods and attributes ({len(methods)})", "", ", ".join(methods), ""]
    read = [f"`{name}`" for name in registry.read_as_python_names()]
    lines += [
        f"## Read as the Python they are ({len(read)})",
        "",
        "No rule: adgen reads these as the NumPy calls they make, as it reads your own "
        "functions, so their derivatives are those calls' (a function passed to them is "
        "passed as itself; the number of results is the number of arrays given): "
        + ", ".join(read),
        "",
    ]
    made = [f"`scipy.interpolate.{name}`" for name in rt_interpolate.INTERPOLANTS]
    lines += [
        f"## Interpolants called inside ({len(made)})",
        "",
        "An interpolant made outside the differentiated function and called inside it "
        "(`s(x)`, `s(x, nu)`, `s.derivative(n)(x)`), differentiated w.r.t. the points `x` "
        "([solvers.md](solvers.md#interpolation-objects)): "
        + ", ".join(made)
        + " (the result of `make_interp_spline` is a `BSpline`; `interp1d` of the kinds "
        "'linear', 'slinear', 'quadratic', 'cubic'; a `RegularGridInterpolator` of method "
        "'linear', once). Made inside from differentiated data (`CubicSpline(t, y)`, "
        "`RegularGridInterpolator((gx, gy), values)`), those linear in the data are "
        "differentiated w.r.t. it too (`CubicSpline` and `make_interp_spline` without "
        "boundary values, `interp1d` extrapolating, a linear `RegularGridInterpolator` "
        "raising or extrapolating outside its grid), at every order.",
        "",
    ]
    lines += [
        "## Kernels made for hyperparameters (1)",
        "",
        "`k.clone_with_theta(theta)` of a scikit-learn Gaussian-process kernel made outside the "
        "function, then called (`kernel(X)`, `kernel(X, eval_gradient=True)`): differentiated "
        "w.r.t. `theta` by the kernel's own gradient (once; not w.r.t. the points). So "
        "`GaussianProcessRegressor.log_marginal_likelihood(theta)` is differentiated as "
        "installed.",
        "",
        "## Loss objects called inside (2)",
        "",
        "A scikit-learn loss (`sklearn._loss.loss`: `HalfBinomialLoss`, `HalfPoissonLoss`, "
        "`HalfGammaLoss`, `HalfTweedieLoss`, `HalfSquaredError`..., made outside the "
        "function or inside it from constants), its methods `loss(y_true, raw_prediction, "
        "sample_weight)` and `gradient(...)`: differentiated w.r.t. `raw_prediction` by the "
        "object's own per-sample `gradient` and `gradient_hessian` (twice; one raw "
        "prediction per sample). So `LinearModelLoss.loss`, the objective of scikit-learn's "
        "generalised linear models, is differentiated as installed.",
        "",
    ]
    refusals = _refusals()
    lines += [
        f"## Refused by name ({len(refusals)})",
        "",
        "Derivatives the rules above do not give, refused with an adgen error naming "
        "the line wherever a differentiated value asks for one (mostly second order "
        "through a solver or an object that computes its own first derivative):",
        "",
        *(f"- {reason[0].upper()}{reason[1:]}." for reason in refusals),
        "",
        "Some rules hold on part of their domain only and refuse when the derivative code "
        "runs elsewhere, naming the line: `scipy.linalg.sqrtm` and `logm` of a matrix whose "
        "principal root or logarithm is complex (an eigenvalue on the closed negative real "
        "axis), `np.linalg.svd` with `full_matrices=True` of a non-square matrix, and the "
        "others their rule's documentation names.",
        "",
    ]
    nondiff = sorted({f"`{n}`" for n, _, _ in _entries("nondifferentiable")})
    lines += [
        f"## Zero derivative ({len(nondiff)})",
        "",
        "Piecewise-constant or integer-valued: their results carry no derivative and "
        "generate no derivative code.",
        "",
        ", ".join(nondiff),
        "",
    ]
    return "\n".join(lines)
