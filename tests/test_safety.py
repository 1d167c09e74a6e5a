"""Safety (issue 8): user text never becomes code, and the command line never runs the file."""

from __future__ import annotations

import ast
import importlib.util
import io
import linecache
import subprocess
import sys
import textwrap
import tokenize
import uuid
from pathlib import Path

import numpy as np
import pytest

import adgen
from adgen.pipeline import derivative

INJECT = "open({marker!r}, 'w').write('pwned'); import os; os.system('echo pwned')"

HOSTILE = '''
import numpy as np


def helper(v):
    """helper doc \'\'\' \\"\\"\\"
{inject}
    """
    # helper comment {inject}
    return v * 2.0  # trailing {inject}


def f(x, mode):
    """Docstring with both quotes \'\'\' and \\"\\"\\" and an injection:
{inject}
\'\'\' + "{inject}" + \'\'\'
    """
    # a comment \\
{comment_inject}
    label = "\\n    {inject_escaped}\\n"
    note = """
{inject}
"""
    assert x.ndim == 1, "bad input\\n    {inject_escaped}"
    assert x.ndim == 1, f"{{mode!r}}\\n    {inject_escaped}"
    if mode == label:
        y = x * 2.0
    elif mode == """
{inject}
""":
        y = x * 3.0
    else:
        y = helper(x) * 4.0  # {inject}
    z = x.astype("float64")
    return np.sum(y * z)
'''


def _load(tmp_path: Path, source: str, filename: str | None = None):
    name = f"adgen_safety_{uuid.uuid4().hex[:10]}"
    path = tmp_path / (filename or f"{name}.py")
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def hostile(tmp_path):
    marker = tmp_path / "marker.txt"
    inject = INJECT.format(marker=str(marker))
    source = HOSTILE.format(
        inject=inject,
        inject_escaped=inject.replace("'", "\\'"),
        comment_inject="    # " + inject,
    )
    compile(source, "hostile", "exec")  # the test's own file is valid Python
    module = _load(tmp_path, source)
    assert not marker.exists()  # importing it ran nothing
    return module, marker


def _code_tokens(source: str):
    """(type, text) of every token of the generated source except comments."""
    return [
        (tok.type, tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)
    ]


def _check_no_injection(source: str, allowed_strings: set[str]) -> None:
    tree = ast.parse(source)  # the whole generated module compiles
    compile(source, "<generated>", "exec")
    for node in ast.walk(tree):
        assert not isinstance(node, (ast.Import, ast.ImportFrom)), ast.unparse(node)
        if isinstance(node, ast.Name):
            assert node.id not in ("os", "open", "exec", "eval", "__import__"), node.id
        if isinstance(node, ast.Attribute):
            assert node.attr != "system"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            # user strings appear only as the string literals the program itself compares with
            assert node.value in allowed_strings, node.value
    for kind, text in _code_tokens(source):
        if kind != tokenize.STRING:
            assert "pwned" not in text and "system" not in text, text
    # outside comment lines, the injected text shows up only inside string literals
    for line in source.splitlines():
        if line.strip().startswith("#"):
            continue
        if "os.system" in line:
            literals = [
                n.value
                for n in ast.walk(ast.parse(line.strip()))
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
            assert any("os.system" in s for s in literals), line


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_user_strings_docstrings_and_comments_never_become_code(hostile, mode):
    module, marker = hostile
    inject = INJECT.format(marker=str(marker))
    label = "\n    " + inject + "\n"
    compared = "\n" + inject + "\n"
    allowed = {label, compared, "float64"}
    for wrt in ("x", 0):
        source = adgen.source(module.f, mode=mode, wrt=wrt)
        _check_no_injection(source, allowed)
        # docstrings, comments and assert messages are never in the code at all
        code = "\n".join(ln for ln in source.splitlines() if not ln.strip().startswith("#"))
        assert "bad input" not in code and "Docstring" not in code and "helper doc" not in code
        assert "trailing" not in code
    assert "def f_jvp" in adgen.source(module.f, mode="forward") or mode == "reverse"
    source = adgen.source(module.helper, mode=mode)
    _check_no_injection(source, set())
    assert "pwned" not in "\n".join(
        ln for ln in source.splitlines() if not ln.strip().startswith("#")
    )
    assert not marker.exists()


def test_running_the_derivative_does_not_execute_injected_text(hostile, capfd):
    module, marker = hostile
    inject = INJECT.format(marker=str(marker))
    x = np.array([0.5, 1.5])
    for mode_arg, factor in (
        ("zzz", 8.0),
        ("\n    " + inject + "\n", 2.0),
        ("\n" + inject + "\n", 3.0),
    ):
        assert module.f(x, mode_arg) == pytest.approx(np.sum(factor * x * x))
        g = adgen.grad(module.f)(x, mode_arg)
        np.testing.assert_allclose(g, 2.0 * factor * x)
        _, t = adgen.jvp(module.f, (x, mode_arg), (np.ones(2), None))
        assert t == pytest.approx(np.sum(2.0 * factor * x))
        _, pullback = adgen.vjp(module.f, x, mode_arg)
        np.testing.assert_allclose(pullback(1.0)[0], 2.0 * factor * x)
    with pytest.raises(AssertionError):
        adgen.grad(module.f)(np.ones((2, 2)), "zzz")
    assert not marker.exists()
    assert "pwned" not in capfd.readouterr().out


def test_generated_code_in_linecache_has_the_lines_it_was_compiled_from(hostile):
    module, _ = hostile
    for mode in ("reverse", "forward"):
        d = derivative(module.f, mode, ("x",))
        filename = d.compiled.__code__.co_filename
        lines = d.generated.source.split("\n")
        for number, text in enumerate(lines[:-1], start=1):
            assert linecache.getline(filename, number).rstrip("\n") == text


def test_unicode_line_separators_in_comments_do_not_shift_generated_lines(tmp_path):
    source = (
        "import numpy as np\n\n\ndef f(x):\n"
        "    y = x * 2.0  # a\u2028b\x0cc\x85d\n"
        "    return np.sum(np.log(y))\n"
    )
    module = _load(tmp_path, source)
    d = derivative(module.f, "reverse", ("x",))
    text = d.generated.source
    compile(text, "<generated>", "exec")
    filename = d.compiled.__code__.co_filename
    for number, line in enumerate(text.split("\n")[:-1], start=1):
        assert linecache.getline(filename, number).rstrip("\n") == line


def test_a_filename_with_newlines_stays_inside_the_header_comment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the injected open() would write here
    marker = tmp_path / "fn_marker.txt"
    name = 'evil\nopen("fn_marker.txt", "w").write("x")\n#.py'
    module = _load(tmp_path, "import numpy as np\n\n\ndef f(x):\n    return np.sin(x) * x\n", name)
    for mode in ("reverse", "forward"):
        source = adgen.source(module.f, mode=mode)
        _check_no_injection(source, set())
        code = [ln for ln in source.splitlines() if not ln.strip().startswith("#")]
        assert not any("write" in ln for ln in code)
    assert adgen.grad(module.f)(1.0) == pytest.approx(np.cos(1.0) + np.sin(1.0))
    assert not marker.exists()


# -- the command line never executes the file ------------------------------------------------------
CLI_HOSTILE = """
import numpy as np
import adgen

open({marker!r}, "a").write("top level ran\\n")


def side_effect():
    open({marker!r}, "a").write("a function ran\\n")
    return 2.0


SCALE = side_effect()


@adgen.differentiate
def f(x):
    \"\"\"doc {inject}\"\"\"
    return np.sin(x) * x  # {inject}


@adgen.differentiate(wrt=("x", "y"), mode="forward")
def g(x, y):
    return np.sum(np.exp(x) * y)


@adgen.differentiate()
def h(x):
    return f(x) + x * x


if __name__ == "__main__":
    open({marker!r}, "a").write("__main__ ran\\n")
    raise SystemExit(7)
"""


@pytest.mark.parametrize("extra", [[], ["--mode", "forward"], ["--function", "g"], ["--ir"]])
def test_command_line_never_runs_a_file_with_decorators_and_main_block(tmp_path, extra):
    marker = tmp_path / "cli_marker.txt"
    inject = INJECT.format(marker=str(marker))
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(CLI_HOSTILE.format(marker=str(marker), inject=inject)))
    proc = subprocess.run(
        [sys.executable, "-m", "adgen", str(path), *extra],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert not marker.exists(), marker.read_text()
    assert "pwned" not in proc.stdout.replace("# ", "") or all(
        "pwned" not in ln for ln in proc.stdout.splitlines() if not ln.lstrip().startswith("#")
    )
    if "--ir" not in extra:
        compile(proc.stdout, "printed", "exec")
        assert all(
            "os.system" not in ln
            for ln in proc.stdout.splitlines()
            if not ln.lstrip().startswith("#")
        )
        if extra == ["--function", "g"]:
            assert "def g_jvp(" in proc.stdout and "def f_" not in proc.stdout
        elif not extra:
            assert "def f_vjp(" in proc.stdout and "def h_vjp(" in proc.stdout
            assert "def g_jvp(" in proc.stdout  # g's decorator says forward mode
    else:
        assert "def f(" in proc.stdout
