"""adgen is closed under differentiation: the code it generates calls only functions that
have derivative rules, so that code can be differentiated again, to any order.

Generated code calls NumPy (each call through a rule's template) and adgen's runtime
helpers (``rt.<name>``, from the templates and from the modes' own bookkeeping). This file
checks the property on the registry as a whole, without running anything: every helper a
template names, and every public helper of :mod:`adgen.runtime`, is registered -- with
derivative templates, or as a function whose results carry no derivative. Whether those
rules are *right* at every order is what ``test_registry_rules.py`` checks, case by case
(the helpers' own rules have examples too, so their derivative code is differentiated
again there).
"""

from __future__ import annotations

import ast
import inspect
from collections import defaultdict

import numpy as np
import pytest
from registry_cases import refuses_every_mode, solvers_helper

from adgen.pyast import dotted_text
from adgen.rules import registry
from adgen.rules import runtime as rt

# questions templates ask when code is generated (answered then: never in generated code)
QUESTIONS = {"known_constant", "known_scalar", "known_ndim", "known_shape", "known_real"}
# helpers only other helpers call (generated code never names them)
INTERNAL = {
    "quantile_weights": "the interpolation weights rt.quantile_jvp / quantile_vjp compute",
    "trapezoid_y_weights": "the weights rt.trapezoid_vjp_y computes",
}


# helpers of batched forward mode (adgen.modes.batched): jacfwd runs that code and never reads
# it again (a Jacobian differentiated again reads the one-tangent code), so they need no rule
BATCHED = {
    name: "batched forward mode's bookkeeping"
    for name in vars(rt)
    if getattr(getattr(rt, name), "__module__", "") == "adgen.rules.runtime.batched"
}


# adgen's checks in generated code: lowered back into the check they were written from when
# adgen reads its code again (frontend/lower/statements.lower_check), never called with a rule
CHECKS = {"refuse_unless": "a refusal the arguments decide", "expect": "an error Python raises"}
# exceptions the helpers raise (generated code never calls them)
RAISED = {"Refusal": "what rt.refuse_unless raises"}


def _template_helpers() -> dict[str, set[str]]:
    """``rt`` helper name -> the primitives whose templates call it."""
    users: dict[str, set[str]] = defaultdict(set)
    for _, prim in registry.registered():
        for templates in (prim.jvp, prim.vjp):
            for template in templates.values():
                for stmt in template.body:
                    for node in ast.walk(stmt):
                        if isinstance(node, ast.Call) and isinstance(
                            node.func, (ast.Attribute, ast.Name)
                        ):
                            spelled = dotted_text(node.func)
                            if spelled and spelled.startswith("rt."):
                                users[spelled[3:]].add(prim.name)
    return users


def _public_helpers() -> list[str]:
    return sorted(
        name
        for name, obj in vars(rt).items()
        if not name.startswith("_")
        and callable(obj)
        and (getattr(obj, "__module__", "") or "").startswith(rt.__name__)
    )


def test_every_helper_a_template_calls_has_a_rule() -> None:
    missing = {
        name: sorted(users)
        for name, users in _template_helpers().items()
        if name not in QUESTIONS
        and name not in BATCHED
        and registry.lookup(getattr(rt, name)) is None
    }
    assert missing == {}, f"helpers called by templates without a rule (caller): {missing}"


def _gated(name: str) -> bool:
    """A helper of scipy.linalg's rules where SciPy is older than they follow (no rules then:
    nothing generated calls the helper)."""
    from adgen.rules import scipy_linalg

    module = getattr(getattr(rt, name), "__module__", "")
    if name == "require_copied_triangle":  # the cho_factor / cho_solve pair's check
        return not scipy_linalg.CHOLESKY_PAIR
    return module.endswith(".scipy_linalg") and not scipy_linalg.SUPPORTED


def test_every_public_runtime_helper_has_a_rule() -> None:
    missing = [
        name
        for name in _public_helpers()
        if name not in QUESTIONS
        and name not in INTERNAL
        and name not in BATCHED
        and name not in CHECKS
        and not (name in RAISED and issubclass(getattr(rt, name), Exception))
        and not _gated(name)
        and registry.lookup(getattr(rt, name)) is None
    ]
    assert missing == [], f"public helpers of adgen.runtime without a rule: {missing}"


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_checks_are_read_again_as_checks(name: str) -> None:
    """Code calling a check, read again, has the check (the primitive ``assert``) with its
    words: no template calls it, and lowering keeps it (it is never dropped as unused)."""
    from adgen.frontend.lower import lower
    from adgen.frontend.parse import parse_function

    assert name not in _template_helpers()
    call = (
        "rt.refuse_unless(ok, 'an update of `z`', 'copy z')"
        if name == "refuse_unless"
        else "rt.expect(ok, 'wrong number of values to unpack (expected 2)')"
    )
    source = "def f_vjp(x, out_bar):\n    ok = np.isscalar(x)\n"
    source += f"    {call}\n    return (x, (out_bar,))\n"
    namespace = {"np": np, "rt": rt}
    exec(compile(source, "<adgen f_vjp checks>", "exec"), namespace)
    import linecache

    linecache.cache["<adgen f_vjp checks>"] = (len(source), None, source.splitlines(True), "")
    lowered = lower(parse_function(namespace["f_vjp"]))
    checks = [s for s in lowered.statements() if getattr(s, "prim", None) is registry.ASSERT]
    assert len(checks) == 1
    words = {k: v.value for k, v in checks[0].kwargs}
    if name == "refuse_unless":
        assert words == {"what": "an update of `z`", "hint": "copy z"}
    else:
        assert words == {"error": "wrong number of values to unpack (expected 2)"}


@pytest.mark.parametrize("name", sorted(INTERNAL))
def test_internal_helpers_are_really_internal(name: str) -> None:
    """A helper listed as internal is named by no template (else it needs a rule)."""
    assert name not in _template_helpers()
    assert inspect.isfunction(getattr(rt, name))


# helpers of lists of derivatives (a registry example is an expression of arrays): reverse
# mode of a list built by appends calls them, and test_higher_order_everywhere.py
# differentiates such code to the third order (``appended_list``), test_rules.py the rest
LIST_HELPERS = {"accumulate", "accumulate_item", "as_list", "items_vjp", "join_last"}
LIST_HELPERS |= {"list_vjp", "split_last"}


def test_differentiable_helper_rules_come_with_examples() -> None:
    """Each differentiable helper's rule is exercised by the registry tests at first and
    second order: it carries examples."""
    # (a solver's helpers are given a function, which examples cannot write: the solvers'
    # tests check them; a helper whose every template is a refusal has no derivative to test)
    bare = [
        name
        for name in _public_helpers()
        if (prim := registry.lookup(getattr(rt, name))) is not None
        and prim.differentiable
        and prim.diff_params
        and not prim.examples
        and name not in LIST_HELPERS
        and not solvers_helper(getattr(rt, name))
        and not refuses_every_mode(prim)
    ]
    assert bare == [], f"helpers with derivative templates but no examples: {bare}"
