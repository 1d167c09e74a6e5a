"""The code in the docs runs: every ``>>>`` example in README.md and docs/*.md is a doctest.

Examples define their functions inline (doctest serves their source to adgen), and the
generated code and IR the pages show are compared with what adgen produces now, so a
page cannot drift from the code. ``...`` in an expected output stands for text that
differs between machines (file names, line numbers), as in doctest's ELLIPSIS mode.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import numpy as np
import pytest

import adgen
from adgen.backend import cache

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Pages whose ```python blocks are fragments of adgen's own rule modules (they need the
# registry's internals and would replace adgen's rules if run): every other page's Python
# blocks must be doctests, so no untested code slips in.
FRAGMENT_PAGES = {"rules.md"}

# Pages that are examples the user is meant to follow (checked to exist and be linked).
USER_PAGES = [
    "getting-started.md",
    "subset.md",
    "how-it-works.md",
    "custom-rules.md",
    "comparison.md",
    "supported.md",
    "performance.md",
    "arrays.md",
    "rules.md",
    "design.md",
]


class _Checker(doctest.OutputChecker):
    """The pages show NumPy 2's reprs (``np.float64(5.5)``); NumPy 1 prints ``5.5``."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        if np.lib.NumpyVersion(np.__version__) < "2.0.0":
            want = re.sub(r"np\.(?:float|int)\d+\(([^()]*)\)", r"\1", want)
        return super().check_output(want, got, optionflags)


def _run(page: Path) -> doctest.TestResults:
    text = page.read_text()
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {"__name__": f"docs_{page.stem}"}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(checker=_Checker(), optionflags=doctest.ELLIPSIS)
    from adgen.rules import scipy_linalg

    if page.name == "solvers.md" and not scipy_linalg.SUPPORTED:
        # its section on matrix equations needs adgen's scipy.linalg rules (SciPy >= 1.16)
        start = text.index("## Linear matrix equations")
        first, last = text.count("\n", 0, start), text.count("\n", 0, text.index("\n## ", start))
        for example in test.examples:
            if first <= example.lineno < last:
                example.options[doctest.SKIP] = True
    cache.clear()  # each page starts cold, as a reader's session does
    out: list[str] = []
    with adgen.rules.registrations():  # rules a page registers do not outlive it
        results = runner.run(test, out=out.append)
    assert results.failed == 0, "".join(out)
    return results


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_examples_on_the_page_run(page: Path) -> None:
    _run(page)


@pytest.mark.parametrize("name", ["getting-started.md", "how-it-works.md", "custom-rules.md"])
def test_tutorial_pages_have_examples(name: str) -> None:
    results = _run(ROOT / "docs" / name)
    assert results.attempted >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_python_blocks_are_doctests(page: Path) -> None:
    if page.name in FRAGMENT_PAGES:
        pytest.skip("fragments of adgen's rule modules")
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    untested = [b for b in blocks if ">>>" not in b]
    assert not untested, f"{page.name}: Python blocks without >>> examples: {untested}"


def test_every_page_is_linked_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in USER_PAGES:
        assert (ROOT / "docs" / name).exists(), name
        assert f"(docs/{name})" in readme, f"README.md does not link docs/{name}"


def test_links_between_pages_resolve() -> None:
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"
