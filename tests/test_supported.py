"""The supported-function list comes from the registry, and the docs page follows it."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import adgen
from adgen.rules import listing, loader

PAGE = Path(__file__).parent.parent / "docs" / "supported.md"


def _resolve(name: str) -> object:
    """The object ``np.linalg.solve`` / ``scipy.special.expit`` names here (None: none)."""
    head, *rest = name.split(".")
    modules = {"np": np}
    try:
        import scipy.special
        import scipy.stats

        modules["scipy"] = __import__("scipy")
        assert scipy.special and scipy.stats
    except ImportError:  # pragma: no cover - depends on the environment
        pass
    obj = modules.get(head)
    for part in rest:
        obj = getattr(obj, part, None)
    return obj


def _documented(section: str) -> set[str]:
    text = PAGE.read_text()
    parts = re.split(r"^## ", text, flags=re.M)
    chosen = [p for p in parts[1:] if (section == "zero") == p.startswith("Zero derivative")]
    bodies = [p.split("\n", 1)[1] for p in chosen]  # not the heading
    return {n for b in bodies for n in re.findall(r"`([^`]+)`", b)}


def test_every_supported_function_is_on_the_docs_page() -> None:
    missing = set(adgen.supported()) - _documented("diff")
    if f"NumPy {np.__version__} " not in PAGE.read_text():
        # the page was written with another NumPy: names only this version has (np.trapz
        # before NumPy 2.4) may be missing from it, nothing else
        missing = {n for n in missing if not n.startswith("np.")}
    assert not missing, f"run `python docs/make_supported.py`: {sorted(missing)}"


def test_every_function_on_the_docs_page_is_supported_where_it_exists() -> None:
    """Names of other NumPy/SciPy versions (np.matvec...) may be listed; nothing else."""
    listed = {n for n in _documented("diff") if re.fullmatch(r"(np|scipy)(\.\w+)+", n)}
    from adgen.rules import scipy_linalg

    if not scipy_linalg.SUPPORTED:  # the page is written with SciPy 1.16+'s scipy.linalg rules
        listed = {n for n in listed if not n.startswith("scipy.linalg.")}
    if not scipy_linalg.CHOLESKY_PAIR:  # SciPy 1.18 zeroes cho_factor's other triangle
        listed -= {"scipy.linalg.cho_factor", "scipy.linalg.cho_solve"}
    # (interpolants are objects, listed with what their calls differentiate, not functions)
    listed = {n for n in listed if not n.startswith("scipy.interpolate.")}
    stale = {n for n in listed - set(adgen.supported()) if _resolve(n) is not None}
    assert not stale, f"run `python docs/make_supported.py`: {sorted(stale)}"


def test_zero_derivative_functions_are_on_the_docs_page() -> None:
    missing = set(adgen.supported("nondifferentiable")) - _documented("zero")
    assert not missing, sorted(missing)


def test_supported_lists_aliases_and_several_results() -> None:
    names = adgen.supported()
    assert "np.abs" in names and "np.absolute" in names
    assert "np.linalg.slogdet" in names
    assert "np.floor" not in names and "np.floor" in adgen.supported("nondifferentiable")


def test_library_count_counts_distinct_functions() -> None:
    names = [n for n in adgen.supported() if n.startswith(("np.", "scipy."))]
    # np.abs and np.absolute count once; scipy.stats.norm.pdf is a new object at each access
    objects = {loader.identity(_resolve(n)) for n in names}
    assert None not in map(_resolve, names)
    assert listing.library_count() == len(objects) < len(names)


def test_at_least_180_numpy_and_scipy_functions_have_both_rules() -> None:
    assert listing.library_count() >= 180
