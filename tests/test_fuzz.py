"""Random programs (``tests/fuzz_programs.py``), differentiated and checked numerically.

Each program is written to a module file, imported, run and checked by
``tests/fuzz_check.py`` (its docstring lists the checks: forward mode against finite
differences, reverse against forward, the values, no input modified, specialised against
general code, second order for a share of them), and the outcome classified:

* ``wrong`` (a wrong derivative or value) and ``crash`` (a raw exception, or an
  ``InternalError`` / ``DerivativeError``, on a program that itself runs fine) are
  defects: the test fails, printing the program;
* ``refused`` (a clean ``UnsupportedSyntaxError``, ``NonDifferentiableError``,
  ``NoRuleError``, ``LimitError``) is counted, not failed: the generator means to stay
  inside the subset adgen differentiates, so a refusal is reported as an event
  (``--hypothesis-show-statistics``) and in the session summary, and
  :func:`test_refusal_rate` fails if too many programs are refused;
* ``unsteady`` (finite differences at two steps disagree: the program is not smooth
  enough at its arguments to be checked numerically) is counted, not failed;
* ``invalid`` (the program itself fails) is a bug of the generator: the test fails.

How many programs run: ``ADGEN_FUZZ_EXAMPLES`` (default 40). CI (``CI=true``) runs a
fixed, derandomized sequence, so a red CI reproduces, and reports a failing program as
drawn (shrinking one takes minutes); locally every run draws new programs, which
hypothesis shrinks when one fails. The long mode, thousands of programs::

    ADGEN_FUZZ_EXAMPLES=3000 python -m pytest -o addopts="" -q tests/test_fuzz.py

The long-run driver draws programs from the same generator with a seeded random source
instead of hypothesis (fast, no shrinking, program ``n`` of seed ``k`` written again from
``(k, n)`` alone), checks each in a worker process with a time limit, never stops at a
failure, and writes one JSON line per program and a summary (programs, defects by class,
crashes, refusals by message, refusal rate)::

    python tests/fuzz_run.py --programs 20000 --seed 123 --out /tmp/fuzz.jsonl --jobs 2
    python tests/fuzz_run.py --seed 123 --replay 1234   # program 1234 again, traceback
    python tests/fuzz_run.py --seed 123 --shrink 1234   # ... made smaller, same outcome

(``--timeout`` seconds per program, default 60; ``--without kind,...`` leaves statement
kinds of the generator out, to look past known defects; ``fuzz_run.py --help``.)

Every bug found this way has a regression test in ``tests/test_fuzz_regressions.py``.
"""

from __future__ import annotations

import collections
import os
from pathlib import Path

import numpy as np
import pytest
from fuzz_check import classify
from fuzz_programs import Program, programs
from hypothesis import HealthCheck, Phase, event, given, note, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("ADGEN_FUZZ_EXAMPLES", "40"))
IN_CI = os.environ.get("CI", "").lower() in ("true", "1")
# at most this share of the programs may be refused (the refusals are listed either way)
MAX_REFUSED = 0.25

# outcome kind -> count, and refusal message -> count, over this session's programs
TALLY: collections.Counter[str] = collections.Counter()
REFUSALS: collections.Counter[str] = collections.Counter()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=IN_CI,
    database=None if IN_CI else settings.default.database,
    # CI reports the failing program as drawn: shrinking one takes minutes (run the test
    # locally, or tests/fuzz_run.py --replay, to get it smaller)
    phases=[Phase.explicit, Phase.generate] if IN_CI else list(Phase),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(program=programs(), seed=st.integers(0, 2**16))
def test_random_program(tmp_path: Path, program: Program, seed: int) -> None:
    # programs reach rules' singular points on purpose (sqrt, entr, ... at 0), where NumPy
    # warns about the 0 * inf that adgen computes and then masks (docs/rules.md)
    with np.errstate(divide="ignore", invalid="ignore"):
        outcome = classify(program, tmp_path, seed)
    for e in outcome.events:
        event(e)
    event(f"outcome: {outcome.kind}")
    if outcome.kind == "refused":
        event(f"refused: {outcome.key()}")
        note(f"refused: {outcome.message}")
    if outcome.kind in ("wrong", "crash", "invalid"):
        raise AssertionError(
            f"{outcome.kind}: {outcome.category}: {outcome.message}"
        ) from outcome.error
    TALLY[outcome.kind] += 1  # only the outcomes hypothesis does not go on to shrink
    if outcome.kind == "refused":
        REFUSALS[outcome.key()] += 1


def test_refusal_rate() -> None:
    """Runs after test_random_program (file order): the share of its programs adgen
    refused cleanly stays small."""
    total = sum(TALLY.values())
    if total < 20:
        pytest.skip("test_random_program checked fewer than 20 programs in this session")
    refused = TALLY["refused"]
    listing = "\n".join(f"  {n} x {key}" for key, n in REFUSALS.most_common())
    assert refused <= MAX_REFUSED * total, (
        f"adgen refused {refused} of {total} random programs:\n{listing}"
    )
