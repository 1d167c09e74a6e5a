"""Third and fourth derivatives of the registry's rules, from the registry itself.

For one example of every differentiable rule of the elementwise, reduction, contraction and
linear-algebra families, the scalar ``phi(t) = sum(w * f(a + t da, b + t db, ...))`` (a
random direction through the example's inputs, random weights on the result) is
differentiated three times in reverse mode (``grad(grad(grad(phi)))``: reverse over reverse
over reverse, through every rule's derivative code and its helpers' rules) and a fourth
time in forward mode over that. The references are nested central differences of adgen's
second derivative of ``phi``, which ``test_registry_rules.py`` checks against differences
of the first (so no order is checked against itself).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from registry_cases import Case, case_function, case_module, registry_cases
from source_modules import session_folder, write_module

import adgen
from adgen.rules import index

FAMILIES = ("elementwise", "reductions", "contractions", "linalg")


def _selected() -> list[Case]:
    """The first float64 example of each rule of the families (twice-differentiable)."""
    seen: set[str] = set()
    out = []
    for case in registry_cases():
        module = index.FUNCTIONS.get(case.rule)
        if (
            module in FAMILIES
            and case.dtype is np.float64
            and not case.complex_args  # (real cases: third and fourth order along real lines)
            and case.twice
            and case.rule not in seen
        ):
            seen.add(case.rule)
            out.append(case)
    return out


CASES = _selected()


_ALONG: Any = None


def _along(case: Case) -> Any:
    """``phi(t, a, da, ..., w)`` of the case, from a module written once (adgen reads it)."""
    global _ALONG
    if _ALONG is None:
        module = case_module()
        lines = ["import numpy as np", ""]
        for c in CASES:
            params = [n for n, _ in c.args]
            inner = ", ".join(f"{p} + t_ * d_{p}" for p in params)
            signature = ", ".join(["t_", *(f"{p}, d_{p}" for p in params), "weights_"])
            lines += [
                "",
                f"def {c.function_name()}_along({signature}):",
                f"    return np.sum(weights_ * {c.function_name()}({inner}))",
                "",
            ]
        folder = session_folder("adgen_registry_along_")
        _ALONG = write_module(folder, "adgen_registry_along", "\n".join(lines))
        for c in CASES:  # the case functions, as globals of the module (read when called)
            name = c.function_name()
            setattr(_ALONG, name, getattr(module, name))
    return getattr(_ALONG, case.function_name() + "_along")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_third_and_fourth_derivative_of_each_rule(case: Case) -> None:
    rng = np.random.default_rng(3)
    args = case.draw_args()
    out = case_function(case)(*args)
    if isinstance(out, tuple):
        pytest.skip("several results: differentiated through one of them elsewhere")
    dirs = [0.1 * rng.standard_normal(np.shape(a)) for a in args]
    w = rng.standard_normal(np.shape(out))
    rest = tuple(v for pair in zip(args, dirs) for v in pair) + (w,)
    phi = _along(case)
    g2 = adgen.grad(adgen.grad(phi))
    g3 = adgen.grad(g2)
    h3, h4 = 1e-3, 1e-2
    third_fd = (g2(h3, *rest) - g2(-h3, *rest)) / (2 * h3)
    fourth_fd = (g2(h4, *rest) - 2 * g2(0.0, *rest) + g2(-h4, *rest)) / h4**2
    third = g3(0.0, *rest)
    scale = max(1.0, abs(third_fd))
    assert abs(third - third_fd) <= 1e-5 * scale, (third, third_fd)
    _, fourth = adgen.jvp(g3, (0.0, *rest), (1.0, *(None for _ in rest)))
    scale = max(1.0, abs(fourth_fd))
    assert abs(fourth - fourth_fd) <= 2e-3 * scale, (fourth, fourth_fd)
