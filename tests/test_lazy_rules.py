"""adgen's rule modules are imported when first needed (``adgen.rules.loader``).

``import adgen`` imports no rule module and not SciPy; a lookup imports the module its
index names; what lists the rules imports them all, in an order that does not depend on
what was imported first; a user's rule replaces adgen's even when adgen's module was not
imported yet. The index (``src/adgen/rules/index.py``) must say what the modules register:
regenerate it with ``python -m adgen.rules.make_index``. (How long the import takes is
measured by ``benchmarks/import_time.py``, not here.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

import adgen
from adgen.rules import index, loader, make_index, registry

SRC = Path(adgen.__file__).resolve().parent.parent
RULES = SRC / "adgen" / "rules"


def run(code: str) -> str:
    """The output of ``code`` run by a fresh Python that imports this adgen."""
    env = dict(os.environ, PYTHONPATH=str(SRC), OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_index_is_what_the_rule_modules_register() -> None:
    """For this environment's NumPy and SciPy (the index keeps the functions of other
    versions: np.trapz is registered before NumPy 2.4 only)."""
    from adgen.rules import scipy_linalg

    registered_here = make_index.tables()
    for table, entries in registered_here.items():
        indexed = make_index.indexed(table)
        if not scipy_linalg.CHOLESKY_PAIR:  # rules gated on the SciPy version
            indexed = {
                k: v
                for k, v in indexed.items()
                if k in entries or not str(k).startswith(("scipy.linalg.", "rt."))
            }
        assert indexed == entries, (
            "src/adgen/rules/index.py is stale: run python -m adgen.rules.make_index"
        )
    assert "np.trapz" in index.FUNCTIONS  # (kept whichever NumPy wrote the index last)


def test_every_module_that_registers_rules_is_listed() -> None:
    registering = re.compile(
        r"^\s*(@(rule|unary|sequence_rule|method_rule|attribute_rule)\(|"
        r"(nondifferentiable|nondifferentiable_attributes|methods)\()",
        re.M,
    )
    found = {
        path.stem
        for path in RULES.glob("*.py")
        if path.stem != "registry" and registering.search(path.read_text())
    }
    assert found == set(loader.MODULES)


def test_import_adgen_imports_no_rule_module_and_not_scipy() -> None:
    out = run(
        "import sys, adgen\n"
        "from adgen.rules.loader import MODULES\n"
        "print('scipy' in sys.modules, [m for m in MODULES if 'adgen.rules.' + m in sys.modules])"
    )
    assert out == "False []"


def test_a_lookup_imports_the_module_registering_the_function() -> None:
    out = run(
        "import sys, numpy as np\n"
        "from adgen.rules import loader, lookup, lookup_attribute, method_function\n"
        "def imported():\n"
        "    return [m for m in loader.MODULES if loader.loaded(m)]\n"
        "print(lookup(np.tanh).name, imported())\n"
        "print(method_function('cumsum')[0] is np.cumsum, imported())\n"
        "print(lookup_attribute('T').name, imported())\n"
        "import adgen.rules\n"
        "print(adgen.rules.shaping.__name__, imported(), 'scipy' in sys.modules)\n"
    )
    assert out.splitlines() == [
        "np.tanh ['elementwise']",
        "True ['elementwise', 'reductions']",
        ".T ['elementwise', 'linalg', 'reductions']",
        "adgen.rules.shaping ['elementwise', 'linalg', 'reductions', 'shaping'] False",
    ]


def test_scipy_is_imported_with_its_rules() -> None:
    out = run(
        "import sys\n"
        "from adgen.rules import loader, lookup\n"
        "from adgen.rules.namespace import TEMPLATE_GLOBALS, spelling\n"
        "print('scipy' in sys.modules, 'scipy' in TEMPLATE_GLOBALS)\n"
        "from scipy.special import expit\n"
        "print(lookup(expit).name, loader.loaded('special'), 'scipy' in TEMPLATE_GLOBALS)\n"
    )
    assert out.splitlines() == ["False False", "scipy.special.expit True True"]


# registered() lists adgen's rules as when every module was imported first, in order
LISTED = "print([(p.name, p.differentiable) for _, p in registered()])"


def test_registered_does_not_depend_on_what_was_imported_first() -> None:
    eager = run(
        "import importlib\n"
        "from adgen.rules import loader, registered\n"
        "for m in loader.MODULES:\n"
        "    importlib.import_module('adgen.rules.' + m)\n" + LISTED
    )
    lazy = run(
        "import math, numpy as np, scipy.special\n"
        "import adgen\n"
        "from adgen.rules import lookup, lookup_attribute, registered\n"
        "for fn in (scipy.special.gammaln, np.linalg.solve, math.exp, np.floor, len, np.sum):\n"
        "    assert lookup(fn) is not None\n"
        "assert lookup_attribute('T') is not None\n"
        "adgen.nondifferentiable(np.unique)\n"  # a user's registration: after adgen's
        "def mine(x):\n"
        "    return x\n"
        "adgen.nondifferentiable(mine)\n" + LISTED
    )
    names = eval(eager)
    assert eval(lazy) == [*names, ("np.unique", False), ("mine", False)]
    assert names[-1] == ("stop_gradient", False)  # (adgen.custom's, after the modules')


def test_a_users_rule_replaces_one_whose_module_is_not_imported_yet(tmp_path: Path) -> None:
    script = tmp_path / "override.py"  # (a file: the rule's source is read)
    script.write_text(
        "import numpy as np, adgen\n"
        "from adgen.rules import lookup, loader, registrations, unregister\n"
        "with registrations():\n"
        "    @adgen.rule(np.tanh)\n"
        "    def tanh(x):\n"
        "        def jvp(d):\n"
        "            return d\n"
        "    print(loader.loaded('elementwise'), lookup(np.tanh).vjp['x'].refusal is not None)\n"
        "print(lookup(np.tanh).vjp['x'].refusal is None)\n"  # adgen's again
        "with registrations():\n"
        "    print(unregister(np.arcsinh), lookup(np.arcsinh))\n"
        "print(lookup(np.arcsinh).name)\n"
        "print(unregister(np.linalg.det), lookup(np.linalg.det))\n"
    )
    out = run(f"import runpy; runpy.run_path({str(script)!r})")
    assert out.splitlines() == ["True True", "True", "True None", "np.arcsinh", "True None"]


def test_rules_imported_inside_registrations_stay() -> None:
    with registry.registrations():
        assert registry.lookup(np.cos) is not None
    assert registry.lookup(np.cos) is not None
    assert registry.lookup_attribute("T") is not None
