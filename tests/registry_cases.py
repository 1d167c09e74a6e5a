"""Test cases made from the rule registry itself: no list to edit when a rule is added.

Each differentiable primitive contributes

* one case per ``example(...)`` it was registered with (``adgen.rules.samples``), and
* for an elementwise rule of one or two arguments registered with a ``domain``, one
  case per shape family: Python float, 0-d, vector, matrix, broadcasting pairs, float32.

adgen differentiates functions by reading their source, so the cases are written as
plain ``def``s into a module file (under pytest's temporary directory) and imported.
"""

from __future__ import annotations

import dataclasses
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from source_modules import session_folder, write_module

from adgen.middle.shapes import describe
from adgen.rules import registered
from adgen.rules.namespace import spelling
from adgen.rules.samples import ANY, Arg, Domain, Example, draw

F32 = np.float32

UNARY_FAMILIES: dict[str, tuple[Any, ...]] = {
    "float": (None,),
    "0d": ((),),
    "vector": ((4,),),
    "matrix": ((3, 4),),
}
BINARY_FAMILIES: dict[str, tuple[Any, ...]] = {
    "float": (None, None),
    "0d": ((), ()),
    "vector": ((4,), (4,)),
    "matrix": ((3, 4), (3, 4)),
    "(3,1)x(1,4)": ((3, 1), (1, 4)),
    "(3,4)x(4,)": ((3, 4), (4,)),
    "(4,)x(3,4)": ((4,), (3, 4)),
    "floatx(3,4)": (None, (3, 4)),
    "(3,4)xfloat": ((3, 4), None),
    "0dx(3,4)": ((), (3, 4)),
}
F32_FAMILIES = {"matrix", "(3,1)x(1,4)"}
# complex rules of two arguments: also one complex argument and one real one
MIXED_FAMILIES = {"vector", "(3,4)x(4,)", "floatx(3,4)"}


@dataclass(frozen=True)
class Case:
    id: str
    rule: str  # the primitive's name
    call: str
    args: tuple[tuple[str, Arg], ...]
    domain: Domain | tuple[Domain, ...] | None
    dtype: Any
    twice: bool
    tolerance: float | None
    complex_args: tuple[str, ...] = ()  # drawn complex (complex128; complex64 for float32)

    def draw_args(self) -> tuple[Any, ...]:
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        out = []
        for k, (name, arg) in enumerate(self.args):
            dom = arg.domain
            if dom is None:
                dom = self.domain[k] if isinstance(self.domain, tuple) else self.domain
            dtype = self.dtype
            if name in self.complex_args:
                dtype = np.complex64 if dtype is F32 else np.complex128
            out.append(draw(dom or ANY, rng, arg.shape, dtype))
        return tuple(out)

    @property
    def low_precision(self) -> bool:
        return self.dtype is F32

    def signature(self, args: tuple[Any, ...]) -> Any:
        """The arguments' kinds (shapes, dtypes), as adgen's API specialises code for them."""
        return tuple((n, d) for (n, _), a in zip(self.args, args) if (d := describe(a)) is not None)

    def function_name(self) -> str:
        return "case_" + re.sub(r"\W", "_", self.id)[:60] + f"_{zlib.crc32(self.id.encode()):x}"


def _shape_label(args: tuple[tuple[str, Arg], ...]) -> str:
    def one(s: Any) -> str:
        return "float" if s is None else str(tuple(s)).replace(" ", "")

    return "x".join(one(a.shape) for _, a in args)


def _complex_variant(case: Case, names: tuple[str, ...], every: bool) -> Case:
    """``case`` with the arguments ``names`` complex (complex64 for a float32 case); its id
    names them unless ``every`` argument is complex."""
    kind = " complex64" if case.dtype is F32 else " complex"
    which = "" if every else f" {','.join(names)}"
    return dataclasses.replace(
        case, id=case.id.replace(" float32", "") + kind + which, complex_args=names
    )


def _from_example(prim: Any, ex: Example) -> list[Case]:
    label = f"{ex.call} [{_shape_label(ex.args)}]"
    cases = [
        Case(label, prim.name, ex.call, ex.args, prim.domain, np.float64, ex.twice, ex.tolerance)
    ]
    if ex.f32:
        cases.append(dataclasses.replace(cases[0], id=label + " float32", dtype=F32))
    if prim.complex and ex.complex:
        names = tuple(n for n, _ in ex.args) if ex.complex is True else tuple(ex.complex)
        cases += [_complex_variant(c, names, ex.complex is True) for c in cases]
    return cases


def _families(fn: Any, prim: Any) -> list[Case]:
    """An elementwise rule's cases over the shape families; for a rule registered
    ``complex=True`` also every argument complex (complex64 where float32 is checked) and,
    for two arguments, one complex and one real (those first)."""
    params = [p.name for p in prim.params if p.default is p.empty]
    if not prim.elementwise or prim.domain is None or len(params) not in (1, 2):
        return []
    table = UNARY_FAMILIES if len(params) == 1 else BINARY_FAMILIES
    names = ("x", "y")[: len(params)]
    call = f"{spelling(fn)}({', '.join(names)})"
    real: list[Case] = []
    complex_cases: list[Case] = []
    for label, shapes in table.items():
        args = tuple((n, Arg(s)) for n, s in zip(names, shapes, strict=True))
        for dtype in (np.float64, F32) if label in F32_FAMILIES else (np.float64,):
            suffix = " float32" if dtype is F32 else ""
            case = Case(
                f"{call} [{label}]{suffix}", prim.name, call, args, prim.domain, dtype, True, None
            )
            real.append(case)
            if prim.complex:
                mixed = len(names) == 2 and label in MIXED_FAMILIES
                splits = [names, names[:1], names[1:]] if mixed else [names]
                complex_cases += [_complex_variant(case, w, w == names) for w in splits]
    return complex_cases + real


def registry_cases() -> list[Case]:
    """Every case the registry asks for, in a stable order."""
    cases: list[Case] = []
    seen: set[str] = set()
    for fn, prim in registered():
        if not prim.differentiable:
            continue
        for case in [
            *_families(fn, prim),
            *(c for ex in prim.examples for c in _from_example(prim, ex)),
        ]:
            if case.id not in seen:
                seen.add(case.id)
                cases.append(case)
    return cases


_MODULE: Any = None


def case_module() -> Any:
    """The module holding one function per case (written once per process)."""
    global _MODULE
    if _MODULE is not None:
        return _MODULE
    lines = ["import math", "", "import numpy as np", ""]
    if any("scipy" in c.call for c in registry_cases()):
        lines += [
            "import scipy.linalg",
            "import scipy.signal",
            "import scipy.special",
            "import scipy.stats",
            "",
        ]
    if any("sklearn" in c.call for c in registry_cases()):  # (scikit-learn's losses)
        lines += ["import sklearn._loss.loss", "import sklearn.gaussian_process.kernels", ""]
    if any("rt." in c.call for c in registry_cases()):  # rules of adgen's own helpers
        lines += ["from adgen import runtime as rt", ""]
    for case in registry_cases():
        params = ", ".join(n for n, _ in case.args)
        lines += ["", f"def {case.function_name()}({params}):", f"    return {case.call}", ""]
    folder = session_folder("adgen_registry_cases_")
    module = write_module(folder, "adgen_registry_cases", "\n".join(lines))
    _MODULE = module
    return module


def case_function(case: Case) -> Any:
    return getattr(case_module(), case.function_name())


def reverse_wrapper(case: Case) -> Any:
    """``(*args, out_bar) -> (out, grad_1, ..., grad_n)``: a function of the case module that
    calls the reverse-mode code adgen generated for the case (``(*args, out_bar) -> (out,
    (grad_1, ...))``), flattening its result, so that code can be differentiated again.

    Every argument of a registry case is a float or a float array, so each has a gradient.
    """
    from adgen import pipeline

    module = case_module()
    name = case.function_name() + "_rev"
    if hasattr(module, name):
        return getattr(module, name)
    fn = case_function(case)
    params = [n for n, _ in case.args]
    signature = case.signature(case.draw_args()) if case.complex_args else ()
    compiled = pipeline.derivative(fn, "reverse", tuple(params), signature=signature).compiled
    setattr(module, "_compiled_" + name, compiled)
    grads = ", ".join(f"res[1][{k}]" for k in range(len(params)))
    source = "\n".join(
        [
            "",
            f"def {name}({', '.join([*params, 'out_bar'])}):",
            f"    res = _compiled_{name}({', '.join([*params, 'out_bar'])})",
            f"    return (res[0], {grads})",
            "",
        ]
    )
    path = Path(module.__file__).with_name(f"adgen_registry_rev_{name}.py")
    path.write_text(source)
    namespace = module.__dict__
    exec(compile(source, str(path), "exec"), namespace)
    return namespace[name]


# -- what the registry's examples cannot exercise ----------------------------------------------
def solvers_helper(fn: Any) -> bool:
    """A runtime helper of SciPy's solvers: it is given the function the solver was given,
    which an example cannot write (tests/test_solvers_*.py and tests/test_rules.py's solver
    cases check them)."""
    module = getattr(fn, "__module__", None) or ""
    return module in ("adgen.rules.runtime.solvers", "adgen.rules.runtime.optimize")


def solvers_wrapper(fn: Any) -> bool:
    """A function generated code calls in place of a solver returning an object
    (``rt.ode_solution`` for ``solve_ivp``): its calls are in the primal code."""
    from adgen.rules import loader, registry

    loader.load_all()
    return any(fn is spec.runs_as for _, spec in registry._CALLBACKS.values())


def refuses_every_mode(prim: Any) -> bool:
    """Does every template of ``prim`` refuse (a solver's derivative differentiated again)?"""
    return all(t.refusal for t in [*prim.jvp.values(), *prim.vjp.values()])
