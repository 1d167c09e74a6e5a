"""The shape of the code (docs/design.md): the package reads as the pipeline, modules import
each other without circles (one documented seam excepted), no class or function grows past
what a reader can hold, every module says what it is for.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import adgen

PACKAGE = Path(adgen.__file__).resolve().parent
# the one module whose imports may go up the pipeline (function-level): the pipeline calling
# itself, for a recursive call of the user's function and for adgen.grad inside f
SEAM = "adgen.seam"
MAX_CLASS_LINES = 600
MAX_FUNCTION_LINES = 150


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The adgen modules ``name`` imports, at its top or inside its functions."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    tree = ast.parse(path.read_text())
    typing_only = {  # imports under `if TYPE_CHECKING:` are for annotations, never run
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # `from package import submodule` reads the submodule; any other name is read
            # from the package (or module) itself
            targets = [
                f"{module}.{a.name}" if f"{module}.{a.name}" in known else module
                for a in node.names
            ]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles_apart_from_the_seam() -> None:
    edges = graph()
    assert SEAM in edges, "the seam module moved: update SEAM and docs/design.md"
    # the package's __init__ gathers the public names: it imports everything, nothing imports it
    edges["adgen"] = set()
    edges = {m: (set() if m == SEAM else out) for m, out in edges.items()}
    assert cycles(edges) == []


def test_the_seam_is_the_only_way_up() -> None:
    """Without the seam's own imports the graph has no circle (test above); with them it has
    exactly the recursion it exists for, and nothing else imports the package root."""
    edges = graph()
    importers_of_root = sorted(m for m, out in edges.items() if "adgen" in out)
    assert importers_of_root == []


def test_rules_know_nothing_of_the_stages() -> None:
    """rules/ sits below every stage: a rule module imports only rules/, the shared modules
    and NumPy (a stage that changes never breaks a rule)."""
    stages = ("adgen.frontend", "adgen.middle", "adgen.modes", "adgen.backend", "adgen.pipeline")
    bad = {
        m: sorted(t for t in out if t.startswith(stages))
        for m, out in graph().items()
        if m.startswith("adgen.rules")
    }
    assert {m: ts for m, ts in bad.items() if ts} == {}


def _templates_only(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A derivative rule: a docstring and nested template functions only, or `vjp_x = jvp_x`
    (each template is read on its own, and measured on its own)."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return bool(body) and all(
        isinstance(stmt, ast.FunctionDef)
        or (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name))
        for stmt in body
    )


def _sizes() -> tuple[list[str], list[str]]:
    classes, functions = [], []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            where = f"{name}.{getattr(node, 'name', '')} ({length} lines)"
            if isinstance(node, ast.ClassDef) and length > MAX_CLASS_LINES:
                classes.append(where)
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and length > MAX_FUNCTION_LINES
                and not _templates_only(node)
            ):
                functions.append(where)
    return classes, functions


def test_no_class_or_function_too_long_to_read() -> None:
    classes, functions = _sizes()
    assert classes == [], f"classes over {MAX_CLASS_LINES} lines"
    assert functions == [], f"functions over {MAX_FUNCTION_LINES} lines"


def test_every_module_says_what_it_is_for() -> None:
    missing = [n for n, p in modules().items() if not ast.get_docstring(ast.parse(p.read_text()))]
    assert missing == []


@pytest.mark.parametrize("folder", ["frontend", "middle", "modes", "backend", "rules"])
def test_pipeline_folders_exist_and_are_documented(folder: str) -> None:
    init = PACKAGE / folder / "__init__.py"
    assert init.exists()
    assert ast.get_docstring(ast.parse(init.read_text()))
    assert f"`{folder}/`" in (PACKAGE.parents[1] / "docs" / "design.md").read_text()
