"""What a new user meets in the first hour: refusals that name the construct written and say
what to do about it, the command line reporting every function that fails, regenerate
commands that run from where the first one ran, and traces that print floats as floats."""

from __future__ import annotations

import ast
import doctest
import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from source_modules import import_file

import adgen
from adgen.cli import main


def module(tmp_path: Path, source: str, name: str = "user_code") -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def refusal(tmp_path: Path, body: str) -> adgen.AdgenError:
    """The error adgen.grad gives for ``f(x)`` with this body (read from a real file)."""
    path = module(tmp_path, "import numpy as np\n\ndef f(x):\n" + textwrap.indent(body, "    "))
    mod = import_file(path, f"first_hour_{abs(hash(body))}")
    with pytest.raises(adgen.AdgenError) as info:
        adgen.grad(mod.f)(1.0)
    return info.value


@pytest.mark.parametrize(
    ("body", "construct", "line", "hint"),
    [
        (
            "try:\n    print(x)\n    return x * 2.0\nexcept ValueError:\n    return x\n",
            "`try` blocks",
            4,
            "every `except` raises",
        ),
        (
            "with open('log.txt') as fh:\n    return x * 2.0\n",
            "`with` blocks",
            4,
            "outside the function",
        ),
        ("match x:\n    case _:\n        return x\n", "`match` statements", 4, "`if`/`elif`"),
        (
            "from . import helpers\nreturn x\n",
            "relative imports inside the function",
            4,
            "top of the module",
        ),
        (
            "if x > 0:\n    raise\nreturn x\n",
            "a bare `raise`",
            5,
            "raise an exception of your own",
        ),
        ("global G\nreturn x\n", "`global` statements", 4, "pass the value in"),
        ("class A:\n    pass\nreturn x\n", "class definitions", 4, "module level"),
    ],
)
def test_a_refusal_names_the_construct_written_and_what_to_do(
    tmp_path: Path, body: str, construct: str, line: int, hint: str
) -> None:
    error = refusal(tmp_path, body)
    assert isinstance(error, adgen.UnsupportedSyntaxError)
    assert error.message == f"adgen does not support {construct}"
    assert error.loc is not None and error.loc.lineno == line
    assert hint in error.hint
    assert "rewrite this part" not in error.hint


def test_a_function_without_return_on_every_path_is_still_told_so(tmp_path: Path) -> None:
    error = refusal(tmp_path, "if x > 0:\n    return x\n")
    assert "can end without a `return`" in error.message


MANY = """\
import numpy as np
from adgen import differentiate

@differentiate
def good(x):
    return np.sin(x) * 2.0

@differentiate
def tries(x):
    try:
        print(x)
        return x
    except ValueError:
        return x

@differentiate
def prints(x):
    x.tolist()
    return x
"""


def test_cli_reports_every_function_that_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = module(tmp_path, MANY)
    assert main([str(path)]) == 1
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 2
    # each names the function it is in
    assert lines[0].startswith(f"{path}:10:5: in tries: adgen does not support `try` blocks")
    assert lines[1].startswith(
        f"{path}:18:5: in prints: adgen does not support the method `.tolist()`"
    )
    assert "def good_vjp(x, out_bar):" in out  # what could be made is still printed


def test_cli_output_writes_nothing_when_a_function_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = module(tmp_path, MANY)
    build = tmp_path / "build"
    assert main([str(path), "--output", str(build)]) == 1
    assert len(capsys.readouterr().err.splitlines()) == 2
    assert not build.exists()


def test_regenerate_command_runs_from_where_the_first_one_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "project").mkdir()
    module(tmp_path / "project", MANY, "model")
    monkeypatch.chdir(tmp_path)
    assert main(["project/model.py", "--function", "good", "--output", "out dir"]) == 0
    capsys.readouterr()
    doc = (tmp_path / "out dir" / "good_vjp.py").read_text().split('"""')[1]
    command = (
        "python -m adgen project/model.py --function good --mode reverse --wrt x --output 'out dir'"
    )
    assert f"regenerate it with\n    {command}\n" in doc
    assert "from project/model.py:5." in doc
    # run as written (from the same folder), the command writes the same module again
    first = (tmp_path / "out dir" / "good_vjp.py").read_text()
    import shlex

    args = shlex.split(command)[3:]
    assert main(args) == 0
    assert (tmp_path / "out dir" / "good_vjp.py").read_text() == first


def test_trace_prints_floats_as_floats(tmp_path: Path) -> None:
    path = module(tmp_path, "import numpy as np\n\ndef f(x1, x2):\n    return x1 * x2\n", "tr")
    mod = import_file(path, "first_hour_trace")
    text = str(adgen.trace(mod.f, 2.0, 5.0))
    assert "    x1 = 2.0\n" in text and "    x2 = 5.0\n" in text
    assert text.rstrip().splitlines()[-2].endswith("->  10.0")


# -- 3. a refusal shows the user's frames and adgen's message, not adgen's internals -----------
PACKAGE = Path(adgen.__file__).resolve().parent


def run_script(tmp_path: Path, source: str, **env: str) -> subprocess.CompletedProcess[str]:
    path = module(tmp_path, source, "script")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ADGEN_")}
    environ["PYTHONPATH"] = os.pathsep.join([str(PACKAGE.parent), environ.get("PYTHONPATH", "")])
    environ.update(env)
    return subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, env=environ, timeout=120
    )


def frames(stderr: str) -> list[str]:
    """The files of the frames a printed traceback shows."""
    return re.findall(r'^  File "([^"]*)", line \d+', stderr, flags=re.M)


def adgen_frames(stderr: str) -> list[str]:
    return [f for f in frames(stderr) if Path(f).resolve().is_relative_to(PACKAGE)]


REFUSED = """\
import numpy as np
import adgen

def f(x):
    x.tolist()
    return np.sum(x * x)

def main():
    {call}

main()
"""


@pytest.mark.parametrize(
    "call",
    [
        "adgen.grad(f)(np.ones(2))",
        "adgen.value_and_grad(f)(np.ones(2))",
        "adgen.jvp(f, (np.ones(2),), (np.ones(2),))",
        "adgen.source(f)",
        "adgen.hessian(f)(np.ones(2))",  # entry points calling entry points
        "adgen.differentiate(f).grad(np.ones(2))",
    ],
)
def test_a_refusal_shows_the_users_frames_and_the_message(tmp_path: Path, call: str) -> None:
    result = run_script(tmp_path, REFUSED.format(call=call))
    assert result.returncode == 1
    err = result.stderr
    script = str(tmp_path / "script.py")
    assert frames(err) == [script, script], err  # <module>, then main: nothing of adgen's
    assert f'File "{script}", line 9, in main\n    {call}\n' in err
    last = err.rstrip().splitlines()
    assert "adgen.errors.UnsupportedSyntaxError: " in err and f"{script}:5:5: " in err
    assert last[-1] == "    hint: call the NumPy function instead, e.g. np.sum(x) for x.sum()"
    assert "During handling" not in err and "direct cause" not in err


def test_adgen_debug_keeps_adgens_frames(tmp_path: Path) -> None:
    call = "adgen.grad(f)(np.ones(2))"
    result = run_script(tmp_path, REFUSED.format(call=call), ADGEN_DEBUG="1")
    assert result.returncode == 1
    inner = adgen_frames(result.stderr)
    assert any(f.endswith("api.py") for f in inner)
    assert any(Path(f).parent.name == "lower" for f in inner)  # adgen/lower/: the lowering
    assert "adgen does not support the method `.tolist()`" in result.stderr


def test_a_derivative_error_shows_the_generated_line_it_came_from(tmp_path: Path) -> None:
    source = """\
import numpy as np
import adgen

def f(x, W):
    y = np.tanh(x)
    z = y @ W
    return np.sum(z)

def main():
    adgen.jvp(f, (np.ones(3), np.ones((2, 2))), (np.ones(3), None))

main()
"""
    result = run_script(tmp_path, source)
    err = result.stderr
    assert result.returncode == 1
    assert not adgen_frames(err), err
    cause, _, error = err.partition("The above exception was the direct cause")
    assert frames(cause) and all(f.startswith("<adgen f_jvp ") for f in frames(cause))
    assert "ValueError: matmul" in cause
    script = str(tmp_path / "script.py")
    assert frames(error) == [script, script]
    assert f"adgen.errors.DerivativeError: {script}:6:5: ValueError while computing" in error


def test_a_caught_refusal_keeps_only_the_callers_frames() -> None:
    def f(x):
        x.tolist()
        return x

    try:
        adgen.grad(f)(1.0)
    except adgen.UnsupportedSyntaxError as exc:
        error = exc
    entries = traceback.extract_tb(error.__traceback__)
    assert entries[0].name == "test_a_caught_refusal_keeps_only_the_callers_frames"
    inner = [e for e in entries if Path(e.filename).resolve().is_relative_to(PACKAGE)]
    if sys.version_info >= (3, 11):
        assert len(entries) == 1 and not inner
    else:  # Python 3.10 re-raises with the entry point's own frame (its excepthook hides it)
        assert len(entries) == 2 and inner == entries[1:] and entries[1].name == "__call__"


# -- 6. a standalone module returns what adgen's API returns ----------------------------------
EXPORTED = """\
import numpy as np
import adgen

@adgen.differentiate(wrt=(0, 1))
def f(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)

@adgen.differentiate(wrt=(0, 1), mode="forward")
def g(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)

@adgen.differentiate(wrt=(0, 1))
def rnn(h, W, steps):
    for t in range(steps):
        h = np.tanh(W @ h)
    return np.sum(h * h)

@adgen.differentiate(wrt=(0, 1))
def first(x, y):
    return x

@adgen.differentiate(wrt=(0, 1))
def h(w, b):
    return np.sum(np.tanh(w * b))
"""

# each call: the exported function, its arguments (as Python source), and the API's call
CALLS = [
    ("f_vjp", "2.0, 5.0, 1.0", lambda m: adgen.value_and_grad(m.f, wrt=(0, 1))(2.0, 5.0)),
    (
        "h_vjp",
        "np.full(3, 0.1, np.float32), np.float64(0.5), 1.0",
        lambda m: adgen.value_and_grad(m.h, wrt=(0, 1))(
            np.full(3, 0.1, np.float32), np.float64(0.5)
        ),
    ),
    ("g_jvp", "2.0, 5.0, 1.0, 0.5", lambda m: adgen.jvp(m.g, (2.0, 5.0), (1.0, 0.5))),
    (
        "g_jvp",
        "np.full((2, 2), 2.0), 5.0, np.ones((2, 2)), 0.5",
        lambda m: adgen.jvp(m.g, (np.full((2, 2), 2.0), 5.0), (np.ones((2, 2)), 0.5)),
    ),
    (
        "rnn_vjp",
        "np.array([0.5, -0.2]), np.eye(2, dtype=np.float32) * 0.5, 3, 1.0",
        lambda m: adgen.value_and_grad(m.rnn, wrt=(0, 1))(
            np.array([0.5, -0.2]), np.eye(2, dtype=np.float32) * 0.5, 3
        ),
    ),
    ("first_vjp", "2.0, 3.0, 1.0", lambda m: adgen.vjp(m.first, 2.0, 3.0)[1](1.0)),
]


def describe(value: Any) -> Any:
    """Type, dtype and shape of every part of a result."""
    if isinstance(value, tuple):
        return [describe(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return [type(value).__name__, str(value.dtype), list(value.shape)]
    return type(value).__name__


def numbers(value: Any) -> list[float]:
    """Every number of a result (nested tuples, lists, arrays), in order."""
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in numbers(v)]
    return [float(x) for x in np.ravel(np.asarray(value, dtype=float))]


def test_an_exported_module_returns_what_the_api_returns(tmp_path: Path) -> None:
    path = module(tmp_path, EXPORTED, "exported")
    assert main([str(path), "--output", str(tmp_path / "build")]) == 0
    calls = "".join(
        f"from {name} import {name}\nresults.append({name}({args}))\n" for name, args, _ in CALLS
    )
    script = "\n".join(
        [
            "from __future__ import annotations",
            "import json, sys",
            "from typing import Any",
            "import numpy as np",
            f"sys.path[:0] = [{str(tmp_path / 'build')!r}]",
            textwrap.dedent(inspect.getsource(describe)),
            textwrap.dedent(inspect.getsource(numbers)),
            "results = []",
            calls,
            "print(json.dumps([[describe(r), numbers(r)] for r in results]))",
        ]
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    exported = json.loads(proc.stdout)
    mod = import_file(path, "first_hour_exported")
    for (name, args, api_call), (kinds, values) in zip(CALLS, exported):
        want = api_call(mod)
        if name == "first_vjp":  # the API's pullback gives the cotangents only
            kinds, values = kinds[1], values[1:]
        assert kinds == describe(want), f"{name}({args})"
        np.testing.assert_allclose(values, numbers(want), rtol=1e-6, err_msg=f"{name}({args})")
    # Python floats in, Python floats out (it was (5.5, np.float64(1.716...)))
    assert exported[0][0][1] == ["float", "float"]


# -- 7. in a notebook, a location names the cell as IPython does ------------------------------
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_in_a_notebook_an_error_names_the_cell(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed")
    from notebooks import execute

    v4 = nbformat.v4
    nb = v4.new_notebook()
    nb.cells = [
        v4.new_code_cell("import numpy as np\nimport adgen"),
        v4.new_code_cell("def f(x):\n    x.tolist()\n    return x * 2.0"),
        v4.new_code_cell("adgen.grad(f)(1.0)", metadata={"tags": ["raises-exception"]}),
        v4.new_code_cell("adgen.show(f)"),
        v4.new_code_cell("print(adgen.trace(f))", metadata={"tags": ["raises-exception"]}),
        v4.new_code_cell("def g(x):\n    return np.sin(x)\n\nprint(adgen.trace(g))"),
    ]
    execute(nb, tmp_path)
    (error,) = nb.cells[2].outputs
    assert error.output_type == "error" and error.ename == "UnsupportedSyntaxError"
    assert error.evalue.startswith(
        "Cell In[2], line 2: in f: adgen does not support the method `.tolist()`"
    )
    assert "\n        x.tolist()\n        ^\n" in error.evalue
    shown = ANSI.sub("", "\n".join(error.traceback))
    assert "ipykernel_" not in shown and "Cell In[3], line 1" in shown
    if sys.version_info >= (3, 11):  # 3.10 keeps the entry point's frame (see item 3)
        assert str(PACKAGE) not in shown, shown
    (display,) = nb.cells[3].outputs
    assert "Cell In[2], line 2: in f: adgen does not support" in display.data["text/markdown"]
    assert "ipykernel_" not in display.data["text/html"]
    assert nb.cells[4].outputs[0].evalue.startswith("Cell In[2], line 2: ")
    listing = nb.cells[5].outputs[0].text
    assert listing.splitlines()[0].endswith("# Cell In[6], line 1")


# -- 8. the getting-started page, typed into the interactive interpreter -----------------------
GETTING_STARTED = Path(__file__).resolve().parents[1] / "docs" / "getting-started.md"
ESCAPES = re.compile(r"\x1b(?:\[[0-9;?]*[A-Za-z@]|[=>])")
PS1, PS2 = "[ps1]>>> ", "[ps2]... "


def repl_environment(tmp_path: Path, term: str, **extra: str) -> dict[str, str]:
    """The interpreter's environment: this adgen, no startup file, and a home of its own
    (so no ~/.python_history is read or written)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("ADGEN_", "PYTHON"))}
    environ.update(
        PYTHONPATH=str(PACKAGE.parent),
        HOME=str(tmp_path),
        PYTHON_HISTORY=str(tmp_path / "history"),
        INPUTRC=os.devnull,
        TERM=term,
        NO_COLOR="1",
        PYTHON_COLORS="0",
        **extra,
    )
    return environ


class Session:
    """An interactive interpreter under a pseudo-terminal, fed one doctest example at a time:
    typed line by line at the basic interpreter (readline), pasted into Python 3.13's."""

    def __init__(self, pexpect: Any, tmp_path: Path, basic: bool) -> None:
        self.basic = basic
        environ = repl_environment(
            tmp_path,
            "dumb" if basic else "xterm",  # a dumb terminal: readline echoes plain text
            **({"PYTHON_BASIC_REPL": "1"} if basic else {}),
        )
        self.child = pexpect.spawn(
            sys.executable,
            ["-q"],
            env=environ,
            cwd=str(tmp_path),
            encoding="utf-8",
            dimensions=(40, 1000),
            timeout=120,
        )
        self.child.expect_exact(">>> ")
        if not basic and "can't use pyrepl" in self.child.before:  # no terminal support
            self.child.close(force=True)
            pytest.skip(f"Python's interactive interpreter falls back: {self.child.before}")
        # prompts no output can be taken for (written split, so that the echo is not either)
        self.run(
            f"import sys; sys.ps1, sys.ps2 = {PS1[:3]!r} + {PS1[3:]!r}, {PS2[:3]!r} + {PS2[3:]!r}"
        )

    def run(self, source: str) -> str:
        """Type ``source`` (one statement) and return what the interpreter printed."""
        statement = ast.parse(source).body[0]
        compound = hasattr(statement, "body")  # ended by an empty line
        lines = source.rstrip("\n").split("\n")
        child = self.child
        if self.basic:
            for line in lines + ([""] if compound else []):
                child.sendline(line)
                child.expect_exact([PS1, PS2])
            echo, _, out = child.before.replace("\r\n", "\n").partition("\n")
            return out
        # pasted (bracketed paste: no automatic indentation), then run; the output is what
        # comes between leaving the input mode and entering it again
        child.send("\x1b[200~" + "\n".join(lines) + "\x1b[201~\r" + ("\r" if compound else ""))
        child.expect_exact("\x1b[?2004l")
        child.expect_exact("\x1b[?2004h")
        return ESCAPES.sub("", child.before).replace("\r\n", "\n").replace("\r", "")

    def close(self) -> None:
        self.child.sendline("raise SystemExit")
        self.child.close(force=True)


def repls() -> list[str]:
    kinds = ["default"]
    if sys.version_info >= (3, 13):
        kinds.append("basic")  # PYTHON_BASIC_REPL=1: the interpreter of 3.10-3.12, readline
    return kinds


@pytest.mark.skipif(sys.platform == "win32", reason="pexpect.spawn needs a POSIX pseudo-terminal")
@pytest.mark.parametrize("kind", repls())
def test_getting_started_in_the_interactive_interpreter(tmp_path: Path, kind: str) -> None:
    pexpect = pytest.importorskip(
        "pexpect", reason="pexpect is not installed (pip install -e '.[test]')"
    )
    basic = kind == "basic" or sys.version_info < (3, 13)
    examples = doctest.DocTestParser().get_examples(GETTING_STARTED.read_text())
    assert len(examples) >= 20
    checker = doctest.OutputChecker()
    session = Session(pexpect, tmp_path, basic)
    try:
        for example in examples:
            got = session.run(example.source)
            where = f"getting-started.md line {example.lineno + 1}: {example.source}"
            if example.exc_msg is None:
                want = numpy_1_reprs(example.want)
                assert checker.check_output(want, got, doctest.ELLIPSIS), (where, got)
                continue
            header, _, rest = got.partition("Traceback (most recent call last):\n")
            assert not header, (where, got)
            frames = re.findall(r'^  File "([^"]*)", line \d+', rest, flags=re.M)
            assert len(frames) == 1 and frames[0].startswith("<"), (where, got)  # <stdin>
            message = re.sub(r"^(?:  .*\n)+", "", rest)  # what follows the frames
            assert checker.check_output(example.exc_msg, message, doctest.ELLIPSIS), (where, got)
    finally:
        session.close()


def numpy_1_reprs(want: str) -> str:
    """The page shows NumPy 2's reprs (``np.float64(5.5)``); NumPy 1 prints ``5.5``."""
    if np.lib.NumpyVersion(np.__version__) < "2.0.0":
        return re.sub(r"np\.(?:float|int)\d+\(([^()]*)\)", r"\1", want)
    return want


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell's pipes")
def test_without_the_typed_source_the_refusal_says_what_to_do(tmp_path: Path) -> None:
    """Input from a pipe: no line history. Python 3.13's interpreter keeps what it reads;
    3.10-3.12's do not, and adgen says what to do."""
    typed = "import numpy as np, adgen\ndef loss(w):\n    return np.sum(w * w)\n\n"
    typed += "print(adgen.grad(loss)(np.ones(2)))\n"
    result = subprocess.run(
        [sys.executable, "-i", "-q"],
        input=typed,
        capture_output=True,
        text=True,
        env=repl_environment(tmp_path, "dumb"),
        cwd=tmp_path,
        timeout=120,
    )
    if sys.version_info >= (3, 13):
        assert "[2. 2.]" in result.stdout, result.stderr
        return
    assert "[2. 2.]" not in result.stdout
    err = result.stderr
    assert (
        "adgen.errors.SourceUnavailableError: <stdin>:1:1: cannot read the source of loss: " in err
    )
    assert "the interactive interpreter keeps no text of what is typed at >>>" in err
    assert "hint: put loss in a file and import it (python -i FILE.py runs a file" in err
    assert not adgen_frames(err)


def typed(statement: str) -> dict[str, Any]:
    """Run one statement as the interactive interpreter does (file name ``<stdin>``, line 1
    its first line, no text kept); its namespace."""
    namespace: dict[str, Any] = {"np": np, "adgen": adgen}
    exec(compile(statement + "\n", "<stdin>", "single"), namespace)
    return namespace


def test_the_history_gives_back_the_definition_that_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    """Redefinitions, definitions across lines, nested functions and lambdas, each found as
    the statement that compiles to its code."""
    from adgen.frontend import interactive

    first = "def loss(w):\n    return np.sum(w * w)"
    second = "def loss(w,\n         k):\n    v = w * k\n    return np.sum(v * v)"
    outer = "def outer(c):\n    def inner(x):\n        return np.sin(x) * c\n    return inner"
    lam = "sq = lambda x: x * x * 3.0"
    history = ["import numpy as np", first, "x = 1", second, outer, "f = outer(2.0)", lam]
    monkeypatch.setattr(interactive, "history", lambda: "\n".join(history).split("\n"))
    old, new = typed(first)["loss"], typed(second)["loss"]
    assert adgen.grad(old)(np.ones(2)).tolist() == [2.0, 2.0]
    assert adgen.grad(new)(np.ones(2), 3.0).tolist() == [18.0, 18.0]
    inner = typed(outer)["outer"](2.0)
    assert adgen.grad(inner)(0.0) == 2.0
    assert adgen.grad(typed(lam)["sq"])(1.0) == 6.0
    # a definition the history does not hold (typed otherwise) is not taken for another
    other = typed("def loss(w):\n    return np.sum(w * w * w)")["loss"]
    with pytest.raises(adgen.SourceUnavailableError, match="does not hold the definition"):
        adgen.grad(other)(np.ones(2))
    # the location of a refusal is the line of the statement, as the interpreter numbers it
    history.append("def noisy(x):\n    y = x * 2.0\n    y.tolist()\n    return y")
    with pytest.raises(adgen.UnsupportedSyntaxError) as info:
        adgen.grad(typed(history[-1])["noisy"])(1.0)
    assert str(info.value).startswith("<stdin>:3:5: in noisy: adgen does not support the method")
    assert "\n        y.tolist()\n        ^\n" in str(info.value)
