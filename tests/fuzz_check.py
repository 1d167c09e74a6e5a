"""Checking one random program of ``tests/fuzz_programs.py``, and what the outcome was.

:func:`classify` writes the program to a module file, imports it, runs it, and checks
adgen's derivatives of it:

* forward mode against central finite differences, reverse mode against forward mode
  (``<u, J v> = <J^T u, v>``), by :func:`adgen.testing.check_grads` (dict and tuple
  arguments leaf by leaf);
* the code specialised for the arguments' shapes computes what the general code does;
* the value the derivative code computes is the function's own value;
* no input is modified: arguments, tangents and cotangents are passed read-only (a
  write raises) and compared with copies afterwards;
* for a share of the programs (scalar results only), second order: the gradient
  ``adgen.grad(program, wrt=(0, 1, 2))`` is itself differentiated and checked the same way.

The :class:`Outcome` is one of

* ``ok``;
* ``wrong``: a defect, a derivative or value that is wrong (the category says which
  check: forward mode vs finite differences, reverse vs forward, the value, an input
  modified, specialised vs general code, second order);
* ``crash``: a defect, adgen failed on a program that runs fine: an exception that is not
  an :class:`adgen.AdgenError` (a raw ``IndexError``...), or an ``InternalError`` /
  ``DerivativeError`` (or another adgen error that says something is broken, not that
  the program is outside what adgen differentiates);
* ``refused``: adgen declined cleanly (``UnsupportedSyntaxError``,
  ``NonDifferentiableError``, ``NoRuleError``, ``LimitError``). Not a failure, but every
  program the generator writes is meant to be inside the subset adgen differentiates, so
  each refusal is counted and reported: it is a construct adgen does not support (yet) or
  a generator that strays;
* ``unsteady``: the program is not smooth enough at its arguments for finite differences
  to judge: forward mode disagreed with central differences (at the step and at one 100
  times smaller), and central differences at a step 100 times larger disagree with those
  too (chaotic programs, derivatives of 1e10, a kink within a step, a value that moves
  below float resolution). Not a defect, but each is worth a look: counted, like refusals;
* ``invalid``: the program itself fails or has a value that is not finite: a bug of the
  generator.

A program runs its nested ``adgen.grad(...)`` calls when it runs: an adgen error there is
classified like one from the derivative code.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from fuzz_programs import CONTAINERS, INPUTS, Program, build
from source_modules import write_module

import adgen
from adgen import trees
from adgen.api import _Flat, _float_like, _scalars
from adgen.pipeline import derivative
from adgen.testing import check_grads

RTOL, ATOL = 1e-4, 1e-6

# clean refusals: the program is outside what adgen differentiates (so adgen says)
REFUSALS: tuple[type[adgen.AdgenError], ...] = (
    adgen.UnsupportedSyntaxError,
    adgen.NonDifferentiableError,
    adgen.NoRuleError,
    adgen.LimitError,
)

_counter = itertools.count()


@dataclass
class Outcome:
    kind: str  # "ok", "wrong", "crash", "refused", "unsteady", "invalid"
    category: str = ""  # which check failed, or which exception
    message: str = ""
    events: list[str] = field(default_factory=list)  # the program's features, and more
    error: BaseException | None = None  # the exception (not kept by the driver)

    @property
    def defect(self) -> bool:
        return self.kind in ("wrong", "crash")

    def key(self) -> str:
        """What outcomes of one kind have in common: the category, and the message with
        the program's own names and numbers blanked (``v12`` -> ``vN``)."""
        return f"{self.category}: {normalized(self.message)}"


class Wrong(AssertionError):
    """A check found a wrong derivative or value."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(f"{category}: {message}")
        self.category = category
        self.detail = message


class Unsteady(Wrong):
    """Finite differences cannot judge the program at its arguments (two steps disagree)."""


def normalized(message: str) -> str:
    """The first line of ``message`` without the program's names, numbers and paths."""
    line = message.strip().splitlines()[0] if message.strip() else ""
    line = re.sub(r"\S*adgen_fuzz_\d+_\d+\.py:\d+:\d+: ", "", line)
    line = re.sub(r"\b([A-Za-z_]+?)\d+\b", r"\1N", line)
    line = re.sub(r"-?\d+\.\d+(e-?\d+)?", "F", line)
    return line[:200]


# -- the program and its arguments -------------------------------------------------------------


def load(folder: Path, source: str) -> Any:
    """``program`` of a new module file holding ``source`` (adgen reads its source)."""
    name = f"adgen_fuzz_{os.getpid()}_{next(_counter)}"
    return write_module(folder, name, source).program


def inputs(program: Program, seed: int) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)

    def value(shape: Any) -> Any:
        return float(rng.uniform(-1.0, 1.0)) if shape is None else rng.uniform(-1.0, 1.0, shape)

    args = [value(shape) for shape in INPUTS.values()]
    if program.container:
        args.append(build(CONTAINERS[program.container], value))
    return tuple(args)


def tree_map(f: Any, value: Any) -> Any:
    """``f`` of each leaf of ``value`` (dicts, lists and tuples of leaves)."""
    desc = trees.describe(value)
    return trees.unflatten(desc, [f(leaf) for leaf in trees.flatten(value, desc)])


def frozen(value: Any) -> Any:
    """A read-only copy of ``value`` (containers item by item): writing into it raises."""

    def freeze(leaf: Any) -> Any:
        if isinstance(leaf, np.ndarray):
            out = leaf.copy()
            out.setflags(write=False)
            return out
        return leaf

    return tree_map(freeze, value)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, (tuple, list, dict)):
        if trees.describe(a) != trees.describe(b):
            return False
        return all(
            same(p, q)
            for p, q in zip(
                trees.flatten(a, trees.describe(a)), trees.flatten(b, trees.describe(b))
            )
        )
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


def close(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and all(close(p, q) for p, q in zip(a, b, strict=True))
    return bool(np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True))


def finite(value: Any) -> bool:
    """A number, an array or a tuple of those, every entry finite."""
    try:
        parts = value if isinstance(value, tuple) else (value,)
        return all(bool(np.all(np.isfinite(np.asarray(v, dtype=float)))) for v in parts)
    except (TypeError, ValueError):
        return False


# -- the checks ----------------------------------------------------------------------------------


def grads_agree(fn: Any, args: tuple[Any, ...], what: str = "") -> None:
    """check_grads, its failures as :class:`Wrong` (an ``AssertionError`` with another
    message comes from inside adgen: a crash)."""
    try:
        check_grads(fn, *args, rtol=RTOL, atol=ATOL)
    except AssertionError as exc:
        text = str(exc)
        if text.startswith("forward mode of") and "cannot be checked here" in text:
            raise Unsteady(what + "finite differences at two steps disagree", text) from exc
        if text.startswith("forward mode of") and "finite differences" in text:
            raise Wrong(what + "forward mode vs finite differences", text) from exc
        if text.startswith("reverse mode of") and "disagrees with forward" in text:
            raise Wrong(what + "reverse mode vs forward mode", text) from exc
        raise


def specialised_matches_general(fn: Any, args: tuple[Any, ...]) -> None:
    """The code specialised for the arguments' shapes (what adgen's API runs) computes what
    the general code (for any shapes) computes, in both modes."""
    params = list(fn.__code__.co_varnames[: fn.__code__.co_argcount])
    flat = _Flat(params, args)
    wrt = tuple(n for n, v in zip(flat.names, flat.values) if _float_like(v))
    scalars = _scalars(flat.names, flat.values)
    rng = np.random.default_rng(7)
    for mode in ("reverse", "forward"):
        extra: tuple[Any, ...]
        if mode == "reverse":
            value = fn(*args)
            extra = (
                tuple(rng.standard_normal(np.shape(v)) for v in value)
                if isinstance(value, tuple)
                else float(rng.standard_normal()),
            )
        else:
            extra = tuple(
                rng.standard_normal(np.shape(v))
                for n, v in zip(flat.names, flat.values)
                if n in wrt
            )
        special = derivative(fn, mode, wrt, scalars, flat.key, signature=flat.signature).compiled
        general = derivative(fn, mode, wrt, scalars, flat.key).compiled
        with np.errstate(all="ignore"):
            got, want = special(*flat.values, *extra), general(*flat.values, *extra)
        if not close(got, want):
            raise Wrong(
                "specialised vs general code", f"{mode} mode: specialised {got}, general {want}"
            )


def batched_matches_separate(fn: Any, args: tuple[Any, ...]) -> None:
    """Three tangents pushed through one pass of batched forward-mode code (what jacfwd and
    hessian run, :mod:`adgen.modes.batched`) equal three passes of the one-tangent code."""
    from adgen import pipeline

    params = list(fn.__code__.co_varnames[: fn.__code__.co_argcount])
    flat = _Flat(params, args)
    scalars = _scalars(flat.names, flat.values)
    rng = np.random.default_rng(11)
    for name, value in zip(flat.names, flat.values):
        if not _float_like(value):
            continue
        made = pipeline.batched(fn, (name,), scalars, flat.key, flat.signature)
        if isinstance(made, str):
            continue  # (jacfwd runs one pass per column there)
        single = derivative(fn, "forward", (name,), scalars, flat.key, signature=flat.signature)
        seeds = rng.standard_normal((3, *np.shape(value)))
        with np.errstate(all="ignore"):
            _, batch = pipeline.run(made, *flat.values, seeds)  # (refusals: adgen's errors)
            for i in range(3):
                seed = seeds[i] if np.ndim(value) else float(seeds[i])
                _, want = pipeline.run(single, *flat.values, seed)
                got = trees.flatten(tree_map(lambda t, i=i: t[i], batch), trees.describe(batch))
                wanted = trees.flatten(want, trees.describe(want))
                if len(got) != len(wanted) or not all(
                    np.allclose(g, w, rtol=1e-10, atol=1e-10, equal_nan=True)
                    for g, w in zip(got, wanted)
                ):
                    raise Wrong(
                        "batched vs one-tangent forward mode",
                        f"w.r.t. {name}, tangent {i}: batched {got}, one at a time {want}",
                    )


def check(
    program: Program, fn: Any, args: tuple[Any, ...], value: Any, seed: int, events: list[str]
) -> None:
    """Every check of the module docstring; raises :class:`Wrong` or adgen's exception.
    Adds to ``events`` what to record (second order, refused...); the last one is
    "second order" while the second-order checks run."""
    grads_agree(fn, args)
    specialised_matches_general(fn, args)
    batched_matches_separate(fn, args)

    rng = np.random.default_rng(seed + 1)
    tangents = tuple(
        tree_map(
            lambda a: (
                float(rng.standard_normal())
                if np.ndim(a) == 0
                else rng.standard_normal(np.shape(a))
            ),
            arg,
        )
        for arg in args
    )
    cotangent = (
        tuple(rng.standard_normal(np.shape(v)) for v in value)
        if isinstance(value, tuple)
        else float(rng.standard_normal())
    )
    kept = (args, tangents, cotangent)
    passed = frozen(kept)
    out, _ = adgen.jvp(fn, passed[0], passed[1])
    if not close(out, value):
        raise Wrong(
            "value of forward mode", f"forward-mode code computes {out}, the function {value}"
        )
    out, pullback = adgen.vjp(fn, *passed[0])
    if not close(out, value):
        raise Wrong(
            "value of reverse mode", f"reverse-mode code computes {out}, the function {value}"
        )
    pullback(passed[2])
    if not same(passed, kept):
        raise Wrong("input modified", "derivative code modified an input, tangent or cotangent")

    if program.twice:
        events.append("second order")
        gradient = adgen.grad(fn, wrt=(0, 1, 2))
        try:
            adgen.jvp(gradient, args, tangents)
        except REFUSALS as exc:
            # not re-differentiable yet: adgen's reverse-mode code for the program uses a
            # helper or construct adgen refuses to differentiate (an event, not hidden);
            # such a refusal points into adgen's own generated code
            if exc.loc is None or not exc.loc.filename.startswith("<adgen "):
                raise
            events.append(f"second order refused: {exc.message}")
            return
        grads_agree(gradient, args, "second order: ")
        batched_matches_separate(gradient.adgen_function(), args)
        events.append("second order checked")


def adgen_error(exc: adgen.AdgenError, where: str, events: list[str]) -> Outcome:
    name = type(exc).__name__
    kind = "refused" if isinstance(exc, REFUSALS) else "crash"
    return Outcome(kind, where + name, exc.one_line(), events, exc)


def classify(program: Program, folder: Path, seed: int) -> Outcome:
    """Run and check ``program`` on arguments drawn from ``seed``: what happened."""
    events = sorted(program.features)
    try:
        fn = load(folder, program.source)
        args = inputs(program, seed)
        with np.errstate(all="ignore"):
            value = fn(*args)
    except adgen.AdgenError as exc:  # from adgen calls inside the program
        return adgen_error(exc, "running the program: ", events)
    except Exception as exc:
        return Outcome("invalid", "the program fails", f"{type(exc).__name__}: {exc}", events, exc)
    if not finite(value):
        return Outcome("invalid", "the program's value is not finite", repr(value), events)
    try:
        check(program, fn, args, value, seed, events)
    except Unsteady as exc:
        return Outcome("unsteady", exc.category, exc.detail, events, exc)
    except Wrong as exc:
        return Outcome("wrong", exc.category, exc.detail, events, exc)
    except adgen.AdgenError as exc:
        where = "second order: " if events[-1:] == ["second order"] else ""
        return adgen_error(exc, where, events)
    except Exception as exc:
        where = "second order: " if events[-1:] == ["second order"] else ""
        name = f"{where}{type(exc).__name__} (not an adgen error)"
        return Outcome("crash", name, f"{type(exc).__name__}: {exc}", events, exc)
    return Outcome("ok", "", "", events)
