"""Notebook displays: ``_repr_html_`` / ``_repr_markdown_`` of adgen objects, ``adgen.show``,
and the Graphviz export of traces."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import adgen
from adgen import display

W = 2.0


def f(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


def compare(x):
    c = x < 1.0  # keeps a & b <c> in the quoted line
    return np.sum(np.where(c, x, W * x))


def square(x):
    return x * x


def refused(x):
    with open("log.txt") as fh:
        fh.write("called")
    return x


@pytest.fixture(params=["pygments", "plain"])
def highlighting(request, monkeypatch):
    """Run a test with Pygments, and again as if it were not installed."""
    if request.param == "pygments":
        pytest.importorskip("pygments")
    else:
        for name in [m for m in sys.modules if m == "pygments" or m.startswith("pygments.")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setitem(sys.modules, "pygments", None)  # `import pygments` now fails
    return request.param


def strip_tags(html: str) -> str:
    import html as htmllib

    return htmllib.unescape(re.sub(r"<[^>]+>", "", html))


# -- HTML ----------------------------------------------------------------------------------------
def test_html_highlighting_or_plain(highlighting):
    html = adgen.show(f, wrt=(0, 1))._repr_html_()
    assert strip_tags(html).strip() == adgen.source(f, wrt=(0, 1)).strip()
    if highlighting == "pygments":
        assert re.search(r"<span style=\"[^\"]*\">f_vjp</span>", html)  # inline styles
        assert "class=" not in html.replace('class="highlight"', "")  # no stylesheet needed
    else:
        assert html.startswith("<pre style=") and "<span" not in html
        assert "def f_vjp(x1, x2, out_bar):" in html


def test_html_escapes_source(highlighting):
    html = adgen.show(compare)._repr_html_()
    assert "<c>" not in html and "a & b" not in html
    assert "&lt;c&gt;" in html and "&amp;" in html
    assert "< 1.0" not in html and "c = x < 1.0" in strip_tags(html)  # the code, escaped


def test_html_fixes_colours_for_dark_themes():
    assert "color: #000000" in display.html_code("x = 1")
    assert "color: #000000" in display.plain_html("x = 1")


def test_html_never_raises_and_shows_adgen_errors(highlighting):
    for obj in [adgen.show(refused), adgen.grad(refused), adgen.differentiate(refused)]:
        html = obj._repr_html_()
        assert "adgen could not generate this code (UnsupportedSyntaxError)" in html
        assert "with" in html and "test_display.py" in html
        assert "hint:" in obj._repr_markdown_()
    wrong_wrt = adgen.show(f, wrt="nope")._repr_html_()
    assert "WrtError" in wrong_wrt and "names no parameter" in wrong_wrt


def test_other_exceptions_are_shown_not_raised():
    html = display.repr_html(lambda: str(1 / 0))
    assert "ZeroDivisionError: division by zero" in html
    assert "ZeroDivisionError" in display.repr_markdown(lambda: str(1 / 0))


# -- Markdown ------------------------------------------------------------------------------------
def test_markdown_is_a_python_fence():
    md = adgen.show(f, mode="forward")._repr_markdown_()
    assert md.startswith("```python\n") and md.endswith("\n```")
    assert md[len("```python\n") : -len("\n```")] == adgen.source(f, mode="forward").rstrip()


def test_markdown_fence_outgrows_backticks_in_the_code():
    md = display.markdown_code('s = "```"\n')
    assert md == '````python\ns = "```"\n````'


def test_markdown_error_is_a_text_fence():
    md = adgen.show(refused)._repr_markdown_()
    assert md.startswith("**adgen could not generate this code (UnsupportedSyntaxError):**")
    assert "\n```text\n" in md and md.endswith("\n```")


# -- the objects ---------------------------------------------------------------------------------
def test_show_object():
    view = adgen.show(f, mode="reverse", wrt="x2")
    assert repr(view) == "<adgen.show reverse mode of f, wrt='x2'>"
    assert str(view) == view.source == adgen.source(f, wrt="x2")
    assert "show" in adgen.__all__
    with pytest.raises(ValueError, match="mode must be"):
        adgen.show(f, mode="sideways")
    with pytest.raises(adgen.UnsupportedSyntaxError):
        adgen.show(refused).source  # noqa: B018 - the property raises where asked for
    assert "UnsupportedSyntaxError" not in repr(adgen.show(refused))


def test_grad_and_value_and_grad_objects_display_their_source():
    for make in (adgen.grad, adgen.value_and_grad):
        obj = make(f, wrt=("x1", "x2"))
        assert "\n" not in repr(obj) and len(repr(obj)) < 80
        assert obj._repr_markdown_() == display.markdown_code(obj.source)
        assert "f_vjp" in obj._repr_html_()
        assert obj(2.0, 5.0) is not None  # still callable


def test_differentiate_displays_its_default_mode_and_wrt():
    fwd = adgen.differentiate(f, mode="forward", wrt="x2")
    assert fwd._repr_markdown_() == display.markdown_code(fwd.source())
    assert "def f_jvp(x1, x2, x2_dot):" in fwd._repr_markdown_()
    assert repr(fwd) == "<adgen.differentiate f>"
    assert fwd(2.0, 5.0) == f(2.0, 5.0)


def test_trace_displays_ir():
    t = adgen.trace(f, 2.0, 5.0)
    md = t._repr_markdown_()
    assert md == display.markdown_code(str(t))
    assert "out = out_3 - out_4" in md and "11.6521" in md
    assert "out_3" in strip_tags(t._repr_html_())
    assert repr(t) == str(t)  # unchanged: the plain listing


def test_ipython_formatter_picks_up_the_displays():
    formatters = pytest.importorskip("IPython.core.formatters")
    data, _ = formatters.DisplayFormatter().format(adgen.grad(f))
    assert {"text/plain", "text/html", "text/markdown"} <= set(data)
    assert data["text/plain"] == "<adgen grad of f w.r.t. x1>"


# -- Graphviz ------------------------------------------------------------------------------------
def dot_parts(dot: str) -> tuple[list[str], list[tuple[str, str]]]:
    nodes = re.findall(r'^  "([^"]+)" \[label=', dot, re.M)
    edges = re.findall(r'^  "([^"]+)" -> "([^"]+)";$', dot, re.M)
    return nodes, edges


def test_dot_structure():
    dot = adgen.trace(f).to_dot()
    assert dot.startswith('digraph "f" {\n') and dot.endswith("\n}")
    nodes, edges = dot_parts(dot)
    # 2 inputs, 5 statements (log, mul, add, sin, sub), 1 output
    assert nodes == ["x1", "x2", "out_1", "out_2", "out_3", "out_4", "out", "return"]
    assert edges == [
        ("x1", "out_1"),
        ("x1", "out_2"),
        ("x2", "out_2"),
        ("out_1", "out_3"),
        ("out_2", "out_3"),
        ("x2", "out_4"),
        ("out_3", "out"),
        ("out_4", "out"),
        ("out", "return"),
    ]
    assert '"out_1" [label="out_1\\nnp.log", shape=ellipse];' in dot
    assert '"x1" [label="x1\\ninput", shape=box' in dot
    assert '"return" [label="return out", shape=box, peripheries=2' in dot


def test_dot_repeated_operand_is_one_edge_and_values_label_nodes():
    dot = adgen.trace(square, 3.0).to_dot()
    nodes, edges = dot_parts(dot)
    assert nodes == ["x", "out", "return"]
    assert edges == [("x", "out"), ("out", "return")]
    assert '"out" [label="out\\nmul\\n= 9.0", shape=ellipse];' in dot
    assert '"x" [label="x\\ninput\\n= 3.0", shape=box' in dot


def test_dot_outside_values_are_dashed_nodes_and_constants_are_not_nodes():
    dot = adgen.trace(compare).to_dot()
    nodes, edges = dot_parts(dot)
    assert "W" in nodes and '"W" [label="W", shape=box, style=dashed];' in dot
    assert ("W", nodes[nodes.index("W") + 1]) in edges
    assert "1.0" not in nodes and len(nodes) == 1 + 4 + 1 + 1  # x, c/mul/where/sum, W, return


def test_dot_is_deterministic():
    assert adgen.trace(f).to_dot() == adgen.trace(f).to_dot()
    assert adgen.trace(f, 2.0, 5.0).to_dot() == adgen.trace(f, 2.0, 5.0).to_dot()


def test_dot_quotes_labels():
    assert display._quote('a "b" \\ c\nd') == '"a \\"b\\" \\\\ c\\nd"'
