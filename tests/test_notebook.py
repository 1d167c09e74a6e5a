"""Run examples/reading_generated_code.ipynb in a real Jupyter kernel and check its rich output
(the kernel: tests/notebooks.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from notebooks import execute

nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed")

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "reading_generated_code.ipynb"


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    return execute(nb, tmp_path_factory.mktemp("jupyter"))  # any cell failing fails it


def outputs(nb: Any, tag: str) -> list[Any]:
    cells = [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged {tag!r}"
    return list(cells[0].outputs)


def rich(nb: Any, tag: str, mime: str) -> str:
    found = [o.data[mime] for o in outputs(nb, tag) if mime in o.get("data", {})]
    assert found, f"cell {tag!r} produced no {mime} output"
    return str(found[0])


def stdout(nb: Any, tag: str) -> str:
    return "".join(
        o.text for o in outputs(nb, tag) if o.output_type == "stream" and o.name == "stdout"
    )


def test_notebook_is_stored_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def test_show_displays_highlighted_reverse_code(executed: Any) -> None:
    html = rich(executed, "show", "text/html")
    assert "f_vjp" in html and "<span" in html  # highlighted (Pygments comes with IPython)
    assert "x1_bar" in html
    markdown = rich(executed, "show", "text/markdown")
    assert markdown.startswith("```python\n") and "def f_vjp(x1, x2, out_bar):" in markdown
    assert rich(executed, "show", "text/plain").startswith("<adgen.show reverse mode of f")


def test_show_forward(executed: Any) -> None:
    assert "def f_jvp(x1, x2, x1_dot):" in rich(executed, "show-forward", "text/markdown")


def test_grad_object_displays_its_code(executed: Any) -> None:
    assert "f_vjp" in rich(executed, "grad", "text/html")
    assert rich(executed, "grad", "text/plain") == "<adgen grad of f w.r.t. x1, x2>"
    assert rich(executed, "grad-call", "text/plain") == "(5.5, 1.7163378145367738)"


def test_trace_displays_the_ir_with_values(executed: Any) -> None:
    markdown = rich(executed, "trace", "text/markdown")
    assert markdown.startswith("```python\n") and "def f(x1, x2):" in markdown
    assert "out = out_3 - out_4" in markdown and "11.6521" in markdown
    assert "out_1" in rich(executed, "trace", "text/html")


def test_dot_graph_printed(executed: Any) -> None:
    dot = stdout(executed, "dot")
    assert dot.startswith('digraph "f" {') and dot.rstrip().endswith("}")
    assert dot.count("->") == 9 and '"x1" -> "out_1";' in dot


def test_refused_function_shows_the_error(executed: Any) -> None:
    html = rich(executed, "error", "text/html")
    assert "adgen could not generate this code" in html and "with" in html
    assert "Cell In[" in html and "ipykernel_" not in html  # the cell, as IPython names it
    assert not [o for o in outputs(executed, "error") if o.output_type == "error"]
