"""adgen on autograd's systematic NumPy test grid, real and complex cases, per mode.

Run: OMP_NUM_THREADS=1 python benchmarks/autograd_grid.py \
         [--autograd-git-dir DIR] [--out benchmarks/results/autograd_grid.json] \
         [--adgen-src snapshot|live|REV|DIR] [--files test_fft ...] [--only SUBSTRING] \
         [--timeout 20]

(``--autograd-git-dir`` defaults to the HIPS+autograd snapshot under /work/.mirror; the
adgen measured is by default a copy of src/adgen taken when the run starts, so that one run
measures one state of it while others edit the checkout; see ``benchmarks/autograd_grid.md``.)

autograd's own tests (tests/test_systematic.py, test_numpy.py, test_linalg.py, test_fft.py,
test_scipy.py and their helper tests/numpy_utils.py) are read out of a git snapshot of
HIPS/autograd at run time (nothing of autograd is copied into this repository), written to
a temporary directory as real files (adgen reads functions' source with ``inspect``), and
run as they are, against a stand-in ``autograd`` package written next to them:

* ``autograd.numpy`` is NumPy itself (``autograd.numpy.random`` is ``numpy.random``...),
  ``autograd.scipy.*`` are SciPy's modules, ``autograd.grad`` is ``adgen.grad``;
* ``autograd.test_util.check_grads`` / ``combo_check`` are this file's: instead of
  asserting, each records one *check* per mode.

A check is one function x one combination of arguments x one mode:

* the function differentiated is a small generated one, written to a file, of the
  arguments autograd differentiates (``argnum``) only, the others spelled in it as
  constants -- what a user would write: ``def f(x0): return np.sum(x0, axis=0)``;
  a function of the test file (a lambda, a ``def``) is called from it;
* **forward**: ``adgen.jvp`` against central finite differences along random directions
  (complex directions for complex arguments), then -- as autograd's ``order`` asks
  (default 2) -- the same for ``(x, t) -> adgen.jvp(f, x, t)``, a function calling adgen;
* **reverse**: ``adgen.vjp`` against the same finite differences through the pairing
  ``Re(sum(u * J v)) == Re(sum(J^T u * v))`` (adgen's convention for complex values,
  JAX's), then the same for ``(x, u) -> pullback(u)``. Reverse mode is checked against
  finite differences, not against adgen's forward mode, so each mode is counted on its own.

Both modes are run for every check, also where autograd's test asks only one
(``modes=["rev"]``: autograd has no forward mode for linalg, FFT and SciPy).

Each check is pass / fail (a wrong derivative: the numbers disagree, or a derivative of the
wrong shape or type) / refused (adgen raised an ``AdgenError`` refusing the function) /
error (another exception, adgen's ``InternalError`` and ``DerivativeError`` included, but a
``DerivativeError`` carrying a refusal adgen raises when the code runs counts as refused) /
timeout (``--timeout`` seconds a check and mode, by ``signal.setitimer``); a check whose
primal itself fails in plain NumPy/SciPy (an autograd-only function
such as ``np.make_diagonal``, or SciPy's signature differing from autograd's) is *n/a* and
not counted. A check is "complex" when a complex value is among its arguments or results.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy (and any BLAS) is loaded

import argparse  # noqa: E402
import atexit  # noqa: E402
import glob  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import operator  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import types  # noqa: E402
import warnings  # noqa: E402
import zlib  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _select_adgen(argv: list[str]) -> dict[str, Any]:
    """Put the adgen to measure first on sys.path, before it is imported.

    ``--adgen-src snapshot`` (the default) copies the working tree's src/adgen to a temporary
    directory first, so that one run measures one state of adgen even while others edit it;
    ``live`` imports the installed (editable) adgen as it is; a git revision (``HEAD``) is
    exported with ``git archive``; any other value is a directory holding an ``adgen``
    package."""
    choice = "snapshot"
    for i, a in enumerate(argv):
        if a == "--adgen-src" and i + 1 < len(argv):
            choice = argv[i + 1]
        elif a.startswith("--adgen-src="):
            choice = a.split("=", 1)[1]

    def run(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True
        ).stdout.strip()

    state: dict[str, Any] = {  # (when the copy is taken: others may commit while this runs)
        "adgen_commit": ""
        if Path(choice).is_dir()
        else run("rev-parse", "--short", "HEAD" if choice in ("live", "snapshot") else choice),
        "adgen_worktree_dirty": bool(run("status", "--porcelain", "src")),
    }
    if choice == "live":
        return {"adgen_src": "live", **state}
    if Path(choice).is_dir():
        where = Path(choice)
    else:
        where = Path(tempfile.mkdtemp(prefix="autograd_grid_adgen_"))
        atexit.register(shutil.rmtree, where, True)
        if choice == "snapshot":
            shutil.copytree(
                ROOT / "src" / "adgen",
                where / "adgen",
                ignore=shutil.ignore_patterns("__pycache__"),
            )
        else:
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", choice, "src/adgen"],
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(
                ["tar", "-x", "-C", str(where), "--strip-components=1"], input=archive, check=True
            )
    sys.path.insert(0, str(where))
    return {"adgen_src": choice, "adgen_path": str(where), **state}


os.environ.setdefault("ADGEN_DISK_CACHE", "0")  # (adgen's disk cache: off)
ADGEN_SOURCE = _select_adgen(sys.argv[1:]) if __name__ == "__main__" else {"adgen_src": "imported"}

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.linalg  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402

import adgen  # noqa: E402

TEST_FILES = ("test_systematic", "test_numpy", "test_linalg", "test_fft", "test_scipy")
HELPERS = ("numpy_utils",)
MODES = ("forward", "reverse")

EPS = 1e-6  # finite-difference step (autograd's)
RTOL = 1e-5
ATOL = 1e-6


# ---------------------------------------------------------------------------------------------
# values: leaves of (nested) tuples / lists, random directions, finite differences


def leaves(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


def rebuild(like: Any, items: list[Any]) -> Any:
    """``items`` (one per leaf of ``like``) in the tuple / list structure of ``like``."""
    it = iter(items)

    def build(v: Any) -> Any:
        if isinstance(v, (tuple, list)):
            return type(v)(build(x) for x in v)
        return next(it)

    out = build(like)
    return out


def is_complex(value: Any) -> bool:
    return any(np.iscomplexobj(leaf) for leaf in leaves(value) if is_number(leaf))


def is_number(leaf: Any) -> bool:
    return isinstance(leaf, (int, float, complex, np.number, np.ndarray)) and not isinstance(
        leaf, bool
    )


def is_float_leaf(leaf: Any) -> bool:
    return (isinstance(leaf, (float, complex, np.floating, np.complexfloating))) or (
        isinstance(leaf, np.ndarray) and leaf.dtype.kind in "fc"
    )


def random_like(rng: np.random.Generator, value: Any) -> Any:
    """A random direction of ``value``'s structure, shapes and types (complex where complex)."""

    def one(leaf: Any) -> Any:
        shape = np.shape(leaf)
        r = rng.standard_normal(shape)
        if np.iscomplexobj(leaf):
            r = r + 1j * rng.standard_normal(shape)
        if isinstance(leaf, np.ndarray):
            return np.asarray(r, dtype=leaf.dtype if leaf.dtype.kind in "fc" else r.dtype)
        if isinstance(leaf, np.generic):
            return leaf.dtype.type(r) if leaf.dtype.kind in "fc" else type(r)(r)
        return complex(r) if np.iscomplexobj(leaf) else float(r)

    return rebuild(value, [one(leaf) for leaf in leaves(value)])


def wide(leaf: Any) -> np.ndarray:
    if leaf is None:
        return np.zeros(())
    a = np.asarray(leaf)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def shifted(args: list[Any], tangents: list[Any], step: float) -> list[Any]:
    out = []
    for a, t in zip(args, tangents):
        items = []
        for x, dx in zip(leaves(a), leaves(t)):
            if isinstance(x, np.ndarray):
                items.append(x + step * dx)
            elif np.iscomplexobj(x) or np.iscomplexobj(dx):
                items.append(complex(x) + step * complex(dx))
            else:
                items.append(float(x) + step * float(dx))
        out.append(rebuild(a, items))
    return out


def differentiable_leaves(out: Any) -> list[int]:
    """Indices of the result's leaves that carry derivatives (floating point)."""
    return [i for i, leaf in enumerate(leaves(out)) if is_float_leaf(leaf)]


def central(fn: Callable[..., Any], args: list[Any], tangents: list[Any], step: float) -> list:
    plus = leaves(fn(*shifted(args, tangents, step)))
    minus = leaves(fn(*shifted(args, tangents, -step)))
    return [(wide(p) - wide(m)) / (2 * step) for p, m in zip(plus, minus)]


def agree(got: list[np.ndarray], numeric: list[np.ndarray], rtol: float, atol: float) -> bool:
    scale = max((float(np.max(np.abs(n), initial=1.0)) for n in numeric), default=1.0)
    return all(
        np.shape(g) == np.shape(n) and np.allclose(g, n, rtol=rtol, atol=atol * scale)
        for g, n in zip(got, numeric)
    )


def pairing(a: Any, b: Any) -> float:
    """adgen's pairing of cotangents with tangents: Re(sum(a * b)), leaf by leaf."""
    return float(sum(np.real(np.sum(wide(p) * wide(q))) for p, q in zip(a, b)))


def magnitude(a: Any, b: Any) -> float:
    return float(sum(np.sum(np.abs(wide(p)) * np.abs(wide(q))) for p, q in zip(a, b)))


class CheckFailure(Exception):
    """A wrong derivative: numbers, shapes or types that do not agree."""


class CheckTimeout(BaseException):
    """Raised by the alarm: a BaseException, so that adgen's own handlers (which wrap an
    unexpected Exception into an InternalError) let it through."""


def _alarm(signum: int, frame: Any) -> None:
    raise CheckTimeout()


# ---------------------------------------------------------------------------------------------
# one check of one function (all of its arguments differentiated)


def describe_numbers(values: list[Any]) -> str:
    return repr(
        [np.round(wide(v), 6).tolist() if np.size(v) <= 6 else f"<{np.shape(v)}>" for v in values]
    )[:300]


def check_forward(fn: Callable[..., Any], args: list[Any], rng: np.random.Generator) -> None:
    tangents = [random_like(rng, a) for a in args]
    out, out_dot = adgen.jvp(fn, tuple(args), tuple(tangents))
    outs, dots = leaves(out), leaves(out_dot) if out_dot is not None else [None]
    if len(dots) != len(outs):
        raise CheckFailure(
            f"tangent has {len(dots)} leaves, the result {len(outs)} ({type(out).__name__})"
        )
    keep = differentiable_leaves(out)
    for i in keep:
        d, o = dots[i], outs[i]
        if d is not None and np.shape(d) != np.shape(o):
            raise CheckFailure(
                f"tangent of shape {np.shape(d)} for a result of shape {np.shape(o)}"
            )
        if (
            d is not None
            and not np.iscomplexobj(o)
            and np.iscomplexobj(d)
            and np.any(np.abs(np.imag(d)) > 1e-12)
        ):
            raise CheckFailure("complex tangent (nonzero imaginary part) for a real result")
    got = [wide(dots[i]) if dots[i] is not None else np.zeros(np.shape(outs[i])) for i in keep]
    numeric = central(fn, args, tangents, EPS)
    numeric = [numeric[i] for i in keep]
    got = [np.real(g) if not np.iscomplexobj(n) else g for g, n in zip(got, numeric)]
    if agree(got, numeric, RTOL, ATOL):
        return
    small = [central(fn, args, tangents, EPS / 100)[i] for i in keep]
    if agree(got, small, RTOL, ATOL):
        return
    wider = [central(fn, args, tangents, EPS * 100)[i] for i in keep]
    if not agree(wider, numeric, 100 * RTOL, 100 * ATOL):
        raise CheckFailure(
            "finite differences cannot judge here (steps 1e-6 and 1e-4 disagree): "
            f"adgen {describe_numbers(got)} numeric {describe_numbers(numeric)}"
        )
    raise CheckFailure(
        f"forward mode disagrees with finite differences: adgen {describe_numbers(got)} "
        f"numeric {describe_numbers(numeric)}"
    )


def check_reverse(fn: Callable[..., Any], args: list[Any], rng: np.random.Generator) -> None:
    out, pullback = adgen.vjp(fn, *args)
    outs = leaves(out)
    keep = differentiable_leaves(out)
    us = [random_like(rng, o) if i in keep else None for i, o in enumerate(outs)]
    u_tree = rebuild(out, us) if isinstance(out, (tuple, list)) else us[0]
    if not keep:  # nothing differentiable comes out
        return
    if isinstance(out, np.ndarray) and out.ndim == 0:
        u_tree = np.asarray(u_tree, dtype=out.dtype)
    cts = pullback(u_tree)
    if not isinstance(cts, tuple) or len(cts) != len(args):
        raise CheckFailure(f"pullback returned {type(cts).__name__}, not a tuple of {len(args)}")
    tangents = [random_like(rng, a) for a in args]
    ct_leaves, t_leaves = [], []
    for a, c, t in zip(args, cts, tangents):
        al, tl = leaves(a), leaves(t)
        cl = leaves(c) if c is not None else [None] * len(al)
        if len(cl) != len(al):
            raise CheckFailure(f"cotangent has {len(cl)} leaves, its argument {len(al)}")
        for x, cx in zip(al, cl):
            if cx is not None and np.shape(cx) != np.shape(x):
                raise CheckFailure(
                    f"cotangent of shape {np.shape(cx)} for an argument of shape {np.shape(x)}"
                )
            if (
                cx is not None
                and not np.iscomplexobj(x)
                and np.iscomplexobj(cx)
                and np.any(np.abs(np.imag(cx)) > 1e-12)
            ):
                raise CheckFailure("complex cotangent (nonzero imaginary part) for a real argument")
        ct_leaves += [
            wide(cx) if cx is not None else np.zeros(np.shape(x)) for x, cx in zip(al, cl)
        ]
        t_leaves += tl
    rhs = pairing(ct_leaves, t_leaves)
    u_keep = [us[i] for i in keep]

    def lhs_at(step: float) -> tuple[float, float]:
        jv = central(fn, args, tangents, step)
        jv = [jv[i] for i in keep]
        return pairing(u_keep, jv), magnitude(u_keep, jv)

    lhs, scale = lhs_at(EPS)
    tol = RTOL * max(scale, abs(lhs), abs(rhs), 1.0) + ATOL
    if abs(lhs - rhs) <= tol:
        return
    lhs_small, _ = lhs_at(EPS / 100)
    if abs(lhs_small - rhs) <= tol:
        return
    lhs_wide, _ = lhs_at(EPS * 100)
    if abs(lhs_wide - lhs) > 100 * tol:
        raise CheckFailure(
            "finite differences cannot judge here (steps 1e-6 and 1e-4 disagree): "
            f"<u, J v> = {lhs!r} (numeric), <J^T u, v> = {rhs!r} (adgen)"
        )
    raise CheckFailure(
        f"reverse mode disagrees with finite differences: <u, J v> = {lhs!r} (numeric) "
        f"but <J^T u, v> = {rhs!r} (adgen)"
    )


# ---------------------------------------------------------------------------------------------
# the functions checked: generated source files


_NAMESPACES: list[tuple[str, Any]] = [
    ("np", np),
    ("np.linalg", np.linalg),
    ("np.fft", np.fft),
    ("scipy.special", scipy.special),
    ("scipy.stats", scipy.stats),
    ("scipy.signal", scipy.signal),
    ("scipy.linalg", scipy.linalg),
    ("scipy.integrate", scipy.integrate),
]
_INFIX = {
    operator.mul: "*",
    operator.add: "+",
    operator.sub: "-",
    operator.mod: "%",
    operator.truediv: "/",
}


def infix(f: Any) -> bool:
    try:
        return f in _INFIX
    except TypeError:  # unhashable
        return False


def spelled(f: Any) -> str | None:
    """How a user writes ``f`` (``np.sum``, ``scipy.stats.norm.pdf``), or None."""
    for prefix, ns in _NAMESPACES:
        name = getattr(f, "__name__", None)
        if name and getattr(ns, name, None) is f:
            return f"{prefix}.{name}"
    owner = getattr(f, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        for prefix, ns in _NAMESPACES:
            for attr in dir(ns):
                if not attr.startswith("_") and getattr(ns, attr, None) is owner:
                    return f"{prefix}.{attr}.{f.__name__}"
    for prefix, ns in _NAMESPACES:
        for attr in dir(ns):
            if not attr.startswith("_") and getattr(ns, attr, None) is f:
                return f"{prefix}.{attr}"
    return None


def literal(value: Any) -> str | None:
    """Python source for a constant argument, if it has a literal spelling."""
    if value is None or isinstance(value, (bool, str)) or value is Ellipsis:
        return "..." if value is Ellipsis else repr(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return repr(int(value))
    if isinstance(value, float) and np.isfinite(value):
        return repr(value)
    if isinstance(value, (tuple, list)):
        spelled_items = [literal(v) for v in value]
        items = [i for i in spelled_items if i is not None]
        if len(items) != len(spelled_items):
            return None
        if isinstance(value, tuple):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    return None


class Builder:
    """Writes the functions of the checks to files and imports them."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        sys.path.insert(0, str(directory))
        self.count = 0

    def build(
        self, f: Any, args: tuple, kwargs: dict, argnums: tuple[int, ...], order: int
    ) -> tuple[dict[str, list[Callable[..., Any]]], str]:
        """Level-k functions per mode: [f1, f2, ...] (f1 the function of the differentiated
        arguments; f(k+1) the jvp / pullback of f(k)), and the source of f1's module."""
        self.count += 1
        name = f"agcheck_{self.count:05d}"
        consts: dict[str, Any] = {}
        lines = [
            "import operator",
            "import numpy as np",
            "import scipy.special",
            "import scipy.stats",
            "import scipy.signal",
            "import scipy.linalg",
            "import scipy.integrate",
            "import adgen",
            "",
        ]

        def const(v: Any) -> str:
            lit = literal(v)
            if lit is not None:
                return lit
            key = f"C{len(consts)}"
            consts[key] = v
            return key

        params = [f"x{i}" for i in range(len(argnums))]
        call_args = []
        for i, a in enumerate(args):
            call_args.append(params[argnums.index(i)] if i in argnums else const(a))
        call_kwargs = [f"{k}={const(v)}" for k, v in kwargs.items()]
        fname = spelled(f)
        if infix(f) and len(args) == 2 and not kwargs:
            body = f"{call_args[0]} {_INFIX[f]} {call_args[1]}"
        else:
            if fname is None:
                consts["F"] = f
                fname = "F"
            body = f"{fname}({', '.join(call_args + call_kwargs)})"
        base = getattr(f, "__name__", "f")
        base = base if base.isidentifier() else "f"
        f1 = f"{base}_1"
        lines += [f"def {f1}({', '.join(params)}):", f"    return {body}", ""]
        names = {"forward": [f1], "reverse": [f1]}
        n = {"forward": len(params), "reverse": len(params)}
        for level in range(2, order + 1):
            prev = names["forward"][-1]
            k = n["forward"]
            xs = [f"x{i}" for i in range(k)]
            ts = [f"x{i}" for i in range(k, 2 * k)]
            fw = f"{base}_jvp{level}"
            lines += [
                f"def {fw}({', '.join(xs + ts)}):",
                f"    out, tangent = adgen.jvp({prev}, ({', '.join(xs)},), ({', '.join(ts)},))",
                "    return tangent",
                "",
            ]
            names["forward"].append(fw)
            n["forward"] = 2 * k
            prev = names["reverse"][-1]
            k = n["reverse"]
            xs = [f"x{i}" for i in range(k)]
            rv = f"{base}_vjp{level}"
            lines += [
                f"def {rv}({', '.join(xs + ['u'])}):",
                f"    out, pullback = adgen.vjp({prev}, {', '.join(xs)})",
                f"    return pullback(u){'[0]' if k == 1 else ''}",
                "",
            ]
            names["reverse"].append(rv)
            n["reverse"] = k + 1
        source = "\n".join(lines)
        path = self.directory / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        module.__dict__.update(consts)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return {m: [getattr(module, x) for x in names[m]] for m in MODES}, source


# ---------------------------------------------------------------------------------------------
# the recorder behind autograd.test_util


class Recorder:
    def __init__(self, builder: Builder, timeout: float, modes: tuple[str, ...]) -> None:
        self.builder = builder
        self.timeout = timeout
        self.modes = modes
        self.checks: list[dict[str, Any]] = []
        self.context: dict[str, Any] = {}
        self.seen: Counter[str] = Counter()

    def record_call(
        self, f: Any, argnum: Any, modes: Any, order: int, args: tuple, kwargs: dict
    ) -> None:
        argnums = tuple(argnum) if isinstance(argnum, (tuple, list)) else (argnum,)
        ag_modes = list(modes) if modes is not None else ["fwd", "rev"]
        base = {
            "file": self.context.get("file"),
            "test": self.context.get("test"),
            "function": describe_function(f),
            "args": describe_args(args, argnums),
            "kwargs": {k: short(v) for k, v in kwargs.items()},
            "argnums": list(argnums),
            "order": order,
            "autograd_modes": ag_modes,
        }
        key = (
            f"{base['file']}::{base['test']}::{base['function']}::{base['args']}::{base['kwargs']}"
        )
        self.seen[key] += 1
        base["id"] = key + (f"#{self.seen[key]}" if self.seen[key] > 1 else "")
        warnings.simplefilter("ignore")
        # the primal in plain NumPy / SciPy: if it fails, the check does not apply
        try:
            with np.errstate(all="ignore"):
                out = f(*args, **kwargs)
            complex_ = (
                is_complex(list(args)) or is_complex(list(kwargs.values())) or (is_complex(out))
            )
        except Exception as exc:  # noqa: BLE001
            # (a refusal by adgen inside the primal -- the test's function calls autograd.grad,
            # which is adgen.grad here -- counts; anything else means the check does not apply)
            status = "refused" if isinstance(exc, adgen.AdgenError) else "n/a"
            for mode in self.modes:
                self.checks.append(
                    {
                        **base,
                        "mode": mode,
                        "complex": is_complex(list(args)),
                        "status": status,
                        "kind": type(exc).__name__,
                        "message": first_line(exc),
                        "level": 0,
                        "seconds": 0.0,
                    }
                )
            return
        base["complex"] = bool(complex_)
        try:
            fns, _ = self.builder.build(f, args, kwargs, argnums, max(order, 1))
        except Exception as exc:  # noqa: BLE001 (a harness problem)
            for mode in self.modes:
                self.checks.append(
                    {
                        **base,
                        "mode": mode,
                        "status": "error",
                        "kind": "harness:" + type(exc).__name__,
                        "message": first_line(exc),
                        "level": 0,
                        "seconds": 0.0,
                    }
                )
            return
        xs = [args[i] for i in argnums]
        for mode in self.modes:
            self.checks.append(
                {**base, "mode": mode, **self.run(fns[mode], xs, mode, str(base["id"]))}
            )

    def run(
        self, fns: list[Callable[..., Any]], xs: list[Any], mode: str, key: str
    ) -> dict[str, Any]:
        rng = np.random.default_rng(zlib.crc32(f"{key}::{mode}".encode()))
        check = check_forward if mode == "forward" else check_reverse
        start = time.perf_counter()
        level = 0
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        status, kind, message = "pass", "", ""
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                args = list(xs)
                for level, fn in enumerate(fns, start=1):
                    if level > 1:  # (x, t) for forward, (x, u) for reverse
                        with np.errstate(all="ignore"):
                            out = fns[level - 2](*args)
                        if mode == "forward":
                            args = args + [random_like(rng, a) for a in args]
                        else:
                            u = random_like(rng, out)
                            if isinstance(out, np.ndarray) and out.ndim == 0:
                                u = np.asarray(u, dtype=out.dtype)
                            args = args + [u]
                    check(fn, args, rng)
            level = 0
        except CheckTimeout:
            status, kind, message = "timeout", "CheckTimeout", f"over {self.timeout:g} s"
        except CheckFailure as exc:
            status, kind, message = "fail", "CheckFailure", first_line(exc)
        except adgen.AdgenError as exc:
            refusal = not isinstance(exc, (adgen.InternalError, adgen.DerivativeError))
            status = "refused" if refusal else "error"
            kind, message = type(exc).__name__, first_line(exc)
            if isinstance(exc, adgen.DerivativeError) and "this line: adgen: " in message:
                status = "refused"  # (adgen's own refusal, raised when the code runs)
            if "CheckTimeout" in message:  # (the alarm, wrapped by adgen)
                status, kind, message = "timeout", "CheckTimeout", f"over {self.timeout:g} s"
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            status, kind, message = "error", type(exc).__name__, first_line(exc)
            tb = traceback.extract_tb(exc.__traceback__)
            if tb:
                message += f" [at {Path(tb[-1].filename).name}:{tb[-1].lineno}]"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        return {
            "status": status,
            "kind": kind,
            "message": message[:400],
            "level": level,
            "seconds": round(time.perf_counter() - start, 3),
        }


RECORDER: Recorder | None = None


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        kind = {"c": "C", "f": "R"}.get(v.dtype.kind, v.dtype.str)
        return f"{kind}{v.shape}"
    if isinstance(v, (tuple, list)):
        inner = ", ".join(short(x) for x in v)
        return f"({inner})" if isinstance(v, tuple) else f"[{inner}]"
    if isinstance(v, (complex, np.complexfloating)):
        return "c"
    if isinstance(v, (float, np.floating)):
        return "f"
    if callable(v):
        return describe_function(v)
    return repr(v)[:40]


def describe_args(args: tuple, argnums: tuple[int, ...]) -> str:
    return ", ".join(("*" if i in argnums else "") + short(a) for i, a in enumerate(args))


def describe_function(f: Any) -> str:
    s = spelled(f)
    if s:
        return s
    if infix(f):
        return f"operator.{f.__name__}"
    if hasattr(f, "func") and hasattr(f, "args"):  # functools.partial
        return f"partial({describe_function(f.func)})"
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)[:40]


def check_grads(
    fun: Any, argnum: Any = 0, modes: Any = None, order: int = 2, **unused: Any
) -> Callable[..., None]:
    """autograd.test_util.check_grads: ``check_grads(f, argnum, modes, order)(*args, **kw)``."""

    def nary(*args: Any, **kwargs: Any) -> None:
        assert RECORDER is not None
        RECORDER.record_call(fun, argnum, modes, order, args, kwargs)

    return nary


def combo_check(fun: Any, *args: Any, **kwargs: Any) -> Callable[..., None]:
    """autograd.test_util.combo_check: every combination of the alternatives given."""

    def _combo_check(*alternatives: Any, **kw_alternatives: Any) -> None:
        kwarg_key_vals = [[(k, x) for x in xs] for k, xs in kw_alternatives.items()]
        for _args in itertools.product(*alternatives):
            for _kwargs in itertools.product(*kwarg_key_vals):
                check_grads(fun, *args, **kwargs)(*_args, **dict(_kwargs))

    return _combo_check


def scalar_close(a: Any, b: Any) -> bool:
    return abs(a - b) < 1e-6 or abs(a - b) / abs(a + b) < 1e-6


# ---------------------------------------------------------------------------------------------
# the stand-in autograd package and autograd's test files


_AUTOGRAD_INIT = '''"""A stand-in for autograd, for running autograd's tests on adgen (see
benchmarks/autograd_grid.py): autograd.numpy is NumPy, autograd.scipy is SciPy."""
import builtins, sys
import numpy, numpy.random, numpy.linalg, numpy.fft
import scipy, scipy.special, scipy.stats, scipy.signal, scipy.linalg, scipy.integrate
import adgen

grad = adgen.grad
tuple = builtins.tuple

for _name, _mod in {
    "numpy": numpy, "numpy.random": numpy.random, "numpy.linalg": numpy.linalg,
    "numpy.fft": numpy.fft, "scipy": scipy, "scipy.special": scipy.special,
    "scipy.stats": scipy.stats, "scipy.signal": scipy.signal, "scipy.linalg": scipy.linalg,
    "scipy.integrate": scipy.integrate,
    "scipy.stats.multivariate_normal": scipy.stats.multivariate_normal,
    "scipy.stats.norm": scipy.stats.norm,
}.items():
    sys.modules[__name__ + "." + _name] = _mod
numpy = numpy
scipy = scipy
from . import test_util  # noqa: E402
'''

_TEST_UTIL = '''"""autograd.test_util for the stand-in package: check_grads and combo_check record
adgen's checks (benchmarks/autograd_grid.py) instead of asserting."""
from _autograd_grid_shim import check_grads, combo_check, scalar_close  # noqa: F401
'''


def find_git_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    for pattern in (
        "/work/.mirror/HIPS+autograd*/repo",
        "/work/.mirror/HIPS+autograd*",
        "/work/.mirror/*autograd*/repo",
    ):
        for hit in sorted(glob.glob(pattern)):
            if (Path(hit) / "HEAD").exists() or (Path(hit) / "objects").exists():
                return Path(hit)
    raise SystemExit(
        "no snapshot of HIPS/autograd found under /work/.mirror; pass --autograd-git-dir"
    )


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True
    ).stdout


def extract(git_dir: Path, where: Path, files: tuple[str, ...]) -> Path:
    tests = where / "tests"
    tests.mkdir(parents=True)
    for name in (*files, *HELPERS):
        (tests / f"{name}.py").write_text(git(git_dir, "show", f"HEAD:tests/{name}.py"))
    package = where / "autograd"
    package.mkdir()
    (package / "__init__.py").write_text(_AUTOGRAD_INIT)
    (package / "test_util.py").write_text(_TEST_UTIL)
    return tests


def expand_parametrize(fn: Any) -> list[dict[str, Any]]:
    combos: list[dict[str, Any]] = [{}]
    for mark in getattr(fn, "pytestmark", []):
        if getattr(mark, "name", "") != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        new = []
        for combo in combos:
            for v in values:
                vals = v if len(names) > 1 else (v,)
                new.append({**combo, **dict(zip(names, vals))})
        combos = new
    return combos


def run_tests(tests_dir: Path, files: tuple[str, ...], only: str | None) -> list[dict[str, Any]]:
    """Import each test file and call its test functions; checks are recorded as they run."""
    assert RECORDER is not None
    outcomes = []
    sys.path.insert(0, str(tests_dir))
    for name in files:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = importlib.import_module(name)
        tests = [
            (k, v)
            for k, v in vars(module).items()
            if k.startswith("test_") and inspect.isfunction(v) and v.__module__ == module.__name__
        ]
        for tname, fn in tests:
            if only and only not in f"{name}::{tname}":
                continue
            for params in expand_parametrize(fn):
                label = tname + (
                    f"[{','.join(f'{k}={v}' for k, v in params.items())}]" if params else ""
                )
                RECORDER.context = {"file": name, "test": label}
                before = len(RECORDER.checks)
                outcome = "ok"
                message = ""
                try:
                    with warnings.catch_warnings(), np.errstate(all="ignore"):
                        warnings.simplefilter("ignore")
                        fn(**params)
                except BaseException as exc:  # noqa: BLE001
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    outcome = "raised"
                    message = f"{type(exc).__name__}: {first_line(exc)}"[:300]
                outcomes.append(
                    {
                        "file": name,
                        "test": label,
                        "outcome": outcome,
                        "message": message,
                        "checks": len(RECORDER.checks) - before,
                    }
                )
        print(
            f"  {name}: {sum(1 for c in RECORDER.checks if c['file'] == name)} records, "
            f"{time.perf_counter() - t0:.0f} s",
            file=sys.stderr,
            flush=True,
        )
    return outcomes


# ---------------------------------------------------------------------------------------------
# summary


def percent(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f} %" if b else "-"


def tally(rows: list[dict[str, Any]]) -> dict[str, int]:
    statuses = Counter(c["status"] for c in rows)
    return {
        "total": len(rows),
        **{s: statuses.get(s, 0) for s in ("pass", "fail", "refused", "error", "timeout")},
    }


GRID = "test_systematic"  # autograd's systematic grid proper (1,366 checks a mode)


def summarise(checks: list[dict[str, Any]], files: tuple[str, ...]) -> dict[str, Any]:
    counted = [c for c in checks if c["status"] != "n/a"]
    scopes = {"grid": [c for c in counted if c["file"] == GRID], "all": counted}
    tables: dict[str, Any] = {}
    for scope, rows in scopes.items():
        for mode in MODES:
            for kind in ("real", "complex", "all"):
                tables[f"{scope}/{mode}/{kind}"] = tally(
                    [
                        c
                        for c in rows
                        if c["mode"] == mode
                        and (kind == "all" or c["complex"] == (kind == "complex"))
                    ]
                )
    per_file: dict[str, Any] = {}
    for name in files:
        for mode in MODES:
            for kind in ("real", "complex"):
                per_file[f"{name}/{mode}/{kind}"] = tally(
                    [
                        c
                        for c in counted
                        if c["file"] == name
                        and c["mode"] == mode
                        and c["complex"] == (kind == "complex")
                    ]
                )
    order1: dict[str, Any] = {}
    for scope, rows in scopes.items():
        for mode in MODES:
            mine = [c for c in rows if c["mode"] == mode]
            order1[f"{scope}/{mode}"] = {
                "total": len(mine),
                "pass": sum(c["status"] == "pass" or c["level"] > 1 for c in mine),
            }
    return {
        "tables": tables,
        "per_file": per_file,
        "order1": order1,
        "n/a": sum(c["status"] == "n/a" for c in checks),
    }


def print_summary(result: dict[str, Any], out: Any = sys.stdout) -> None:
    s = result["summary"]
    w = out.write
    w(
        "\nadgen on autograd's tests: one check = one function x one combination of arguments x "
        "one mode,\nall the orders autograd asks (default 2: the derivative of the derivative)\n"
    )
    head = (
        f"{'mode':8} {'values':8} {'checks':>7} {'pass':>6} {'%':>8} {'fail':>5} "
        f"{'refused':>8} {'error':>6} {'timeout':>8}\n"
    )
    for scope, title in (("grid", f"the systematic grid ({GRID}.py)"), ("all", "all five files")):
        w(f"\n{title}:\n" + head)
        for mode in MODES:
            for kind in ("real", "complex", "all"):
                r = s["tables"][f"{scope}/{mode}/{kind}"]
                w(
                    f"{mode:8} {kind:8} {r['total']:7d} {r['pass']:6d} "
                    f"{percent(r['pass'], r['total']):>8} {r['fail']:5d} {r['refused']:8d} "
                    f"{r['error']:6d} {r['timeout']:8d}\n"
                )
    w(
        "\nfirst order only (the check's first level): "
        + ", ".join(
            f"{k} {v['pass']}/{v['total']} ({percent(v['pass'], v['total'])})"
            for k, v in s["order1"].items()
        )
        + "\n"
    )
    w(f"not applicable (the primal fails in plain NumPy/SciPy): {s['n/a']} records\n")
    w("\nper file and mode (pass/checks), real | complex:\n")
    for name in result["meta"]["files"]:
        for mode in MODES:
            r, c = (s["per_file"][f"{name}/{mode}/{k}"] for k in ("real", "complex"))
            w(
                f"  {name:16} {mode:8} {r['pass']:5d}/{r['total']:<5d} | "
                f"{c['pass']:4d}/{c['total']:<4d}\n"
            )
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in result["checks"]:
        if c["status"] not in ("pass", "n/a"):
            groups[f"{c['file']}::{c['test'].split('[')[0]}"].append(c)
    w(f"\nnot passing, by test ({len(groups)} tests; mode status count; first messages):\n")
    for key, rows in groups.items():
        counts = Counter((c["mode"], c["status"], c["complex"]) for c in rows)
        cs = ", ".join(
            f"{m[:3]} {st}{' complex' if cx else ''} {n}"
            for (m, st, cx), n in sorted(counts.items())
        )
        w(f"- {key} [{rows[0]['function']}] {cs}\n")
        shown: set[tuple[str, ...]] = set()
        for c in rows:
            text = c["message"]
            if text.startswith(("/", "<adgen")) and ": " in text:  # (the place: in the JSON)
                text = text.split(": ", 1)[1]
            msg = (c["mode"][:3], c["status"], c["kind"], text[:160])
            if msg in shown or len(shown) >= 2:
                continue
            shown.add(msg)
            w(
                f"    {msg[0]} {msg[1]} ({c['args']}{' ' + str(c['kwargs']) if c['kwargs'] else ''}"
                f"{', at order ' + str(c['level']) if c['level'] > 1 else ''}): "
                f"{msg[2]}: {msg[3]}\n"
            )
    na = Counter(
        (c["file"], c["test"].split("[")[0], c["message"][:120])
        for c in result["checks"]
        if c["status"] == "n/a" and c["mode"] == MODES[0]
    )
    if na:
        w("\nnot applicable (the primal fails outside adgen; not counted):\n")
        for (f, t, m), n in na.items():
            w(f"- {f}::{t}: {n} checks: {m}\n")
    raised = [t for t in result["tests"] if t["outcome"] != "ok"]
    if raised:
        w("\ntest functions that raised outside the checks (their later checks did not run):\n")
        for t in raised:
            w(f"- {t['file']}::{t['test']} ({t['checks']} records before): {t['message'][:160]}\n")


def adgen_digest() -> str:
    """A digest of the source files of the adgen measured."""
    import hashlib

    h = hashlib.sha256()
    for path in sorted(Path(adgen.__file__).parent.rglob("*.py")):
        h.update(str(path.relative_to(Path(adgen.__file__).parent)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--autograd-git-dir", default=None)
    parser.add_argument(
        "--out", default=str(ROOT / "benchmarks" / "results" / "autograd_grid.json")
    )
    parser.add_argument("--files", nargs="*", default=list(TEST_FILES))
    parser.add_argument("--only", default=None, help="substring of file::test to run")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per check and mode")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--adgen-src",
        default="snapshot",
        help="snapshot (a copy of src/adgen taken at start: the default), live "
        "(the installed adgen, as others edit it), a git revision, or a "
        "directory holding an adgen package",
    )
    opts = parser.parse_args()

    git_dir = find_git_dir(opts.autograd_git_dir)
    files = tuple(opts.files)
    where = Path(tempfile.mkdtemp(prefix="autograd_grid_"))
    started = time.perf_counter()
    global RECORDER
    try:
        tests_dir = extract(git_dir, where, files)
        sys.modules["_autograd_grid_shim"] = sys.modules[__name__]
        sys.path.insert(0, str(where))
        for stale in [m for m in sys.modules if m == "autograd" or m.startswith("autograd.")]:
            del sys.modules[stale]
        RECORDER = Recorder(Builder(where / "checks"), opts.timeout, MODES)
        tests = run_tests(tests_dir, files, opts.only)
    finally:
        if not opts.keep:
            shutil.rmtree(where, ignore_errors=True)
        else:
            print(f"kept {where}", file=sys.stderr)
    checks = RECORDER.checks
    result: dict[str, Any] = {
        "meta": {
            "autograd_commit": git(git_dir, "rev-parse", "HEAD").strip(),
            **ADGEN_SOURCE,
            "adgen_file": adgen.__file__,
            "adgen_digest": adgen_digest(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "python": platform.python_version(),
            "files": list(files),
            "timeout": opts.timeout,
            "seconds": round(time.perf_counter() - started, 1),
            "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        },
        "summary": summarise(checks, files),
        "checks": checks,
        "tests": tests,
    }
    out = Path(opts.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str))
    print_summary(result)
    print(f"\n{len(checks)} records in {result['meta']['seconds']} s; written to {out}")


if __name__ == "__main__":
    main()
