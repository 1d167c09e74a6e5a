"""The command line: ``python -m adgen FILE.py`` reads FILE without running it.

Most tests call :func:`adgen.cli.main` in-process; a few run ``python -m adgen``
as a subprocess to check the real entry point, exit codes and streams.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import adgen
from adgen.cli import highlight, main, use_color
from adgen.errors import UnresolvedNameError
from adgen.frontend.static import Opaque, StaticScope, UserFunction
from adgen.rules import runtime

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "print_source.py"


def write(tmp_path: Path, source: str, name: str = "model.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def load(source: str, **free: Any) -> dict[str, Any]:
    """Execute printed derivative code (the test runs it, never the CLI)."""
    namespace: dict[str, Any] = {"np": np, "rt": runtime, "math": __import__("math"), **free}
    exec(compile(source, "<printed>", "exec"), namespace)
    return namespace


def assert_one_error_line(err: str, where: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(where), err
    assert "Traceback" not in err


# -- printing derivative code ----------------------------------------------------------------------
def test_example_reverse_matches_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(EXAMPLE))
    assert (code, err) == (0, "")
    assert out.startswith("# adgen: reverse mode (vector-Jacobian product) of f (print_source.py:")
    assert "def f_vjp(x1, x2, out_bar):" in out
    assert "return (out, (x1_bar, x2_bar))" in out  # the decorator's wrt=("x1", "x2")
    compile(out, "printed", "exec")

    def f(x1: float, x2: float) -> Any:
        return np.log(x1) + x1 * x2 - np.sin(x2)

    value, grads = load(out)["f_vjp"](2.0, 5.0, 1.0)
    assert value == pytest.approx(f(2.0, 5.0))
    assert grads == pytest.approx(adgen.grad(f, wrt=(0, 1))(2.0, 5.0))


def test_example_same_text_as_the_live_api(capsys: pytest.CaptureFixture[str]) -> None:
    # Same derivative code whether adgen reads the live function or only the file.
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import print_source  # the *test* imports it; its main block does not run
    finally:
        sys.path.remove(str(EXAMPLE.parent))
    for flags, live in (
        ((), print_source.f.source()),
        (("--mode", "forward", "--wrt", "x2"), print_source.f.source(mode="forward", wrt="x2")),
    ):
        code, out, _ = run(capsys, str(EXAMPLE), *flags)
        assert code == 0
        assert out == live


def test_mode_forward(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(EXAMPLE), "--mode", "forward")
    assert (code, err) == (0, "")
    assert "forward mode (Jacobian-vector product) of f" in out
    assert "def f_jvp(x1, x2, x1_dot, x2_dot):" in out
    compile(out, "printed", "exec")
    value, tangent = load(out)["f_jvp"](2.0, 5.0, 1.0, 0.0)
    assert tangent == pytest.approx(5.5)  # df/dx1 = 1/x1 + x2


def test_function_flag_on_an_undecorated_function(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        import numpy as np

        def loss(w, x):
            return np.sum(np.tanh(x * w))

        def other(z):
            return z * z
        """,
    )
    code, out, err = run(capsys, path, "--function", "loss")
    assert (code, err) == (0, "")
    assert "def loss_vjp(w, x, out_bar):" in out
    assert "other" not in out
    w, x = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    _, (w_bar,) = load(out)["loss_vjp"](w, x, 1.0)
    np.testing.assert_allclose(w_bar, x * (1 - np.tanh(x * w) ** 2))


def test_several_functions_print_in_file_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        def first(x):
            return x * x

        def second(y):
            return y + y
        """,
    )
    code, out, _ = run(capsys, path, "--function", "second", "--function", "first")
    assert code == 0
    assert out.index("def first_vjp") < out.index("def second_vjp")
    # the sources are separated by one blank line
    assert "\n\n# adgen: reverse mode (vector-Jacobian product) of second" in out
    compile(out, "printed", "exec")


def test_wrt_flag_overrides_the_decorator(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(EXAMPLE), "--wrt", "1")
    assert code == 0
    assert "w.r.t. x2\n" in out
    assert "return (out, (x2_bar,))" in out
    code, out, _ = run(capsys, str(EXAMPLE), "--wrt", "x2,x1", "--mode", "forward")
    assert code == 0
    assert "def f_jvp(x1, x2, x2_dot, x1_dot):" in out


def test_ir_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(EXAMPLE), "--ir")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("def f(x1, x2):")
    assert lines[0].rstrip().endswith("print_source.py:13")
    assert [line.split("#")[0].strip() for line in lines[1:]] == [
        "out_1 = np.log(x1)",
        "out_2 = x1 * x2",
        "out_3 = out_1 + out_2",
        "out_4 = np.sin(x2)",
        "out = out_3 - out_4",
        "return out",
    ]
    assert all(line.rstrip().endswith("# line 15") for line in lines[1:])


def test_decorator_literal_wrt_and_mode_and_aliases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        import adgen as ad
        import numpy as onp
        from adgen import differentiate
        from numpy import sin, cos as c

        @ad.differentiate(wrt="y", mode="forward")
        def g(x, y):
            return onp.exp(x) * sin(y)

        @differentiate
        def h(x, y):
            return c(x) * y

        @adgen_not_imported.differentiate
        def not_ours(x):
            return x

        def plain(x):
            return x
        """,
    )
    code, out, err = run(capsys, path)
    assert (code, err) == (0, "")
    assert "def g_jvp(x, y, y_dot):" in out  # mode and wrt from the decorator
    assert "def h_vjp(x, y, out_bar):" in out  # defaults: reverse, wrt=0
    assert "return (out, (x_bar,))" in out
    assert "not_ours" not in out and "plain" not in out
    assert "np.exp(x)" in out and "np.sin(y)" in out and "np.cos(x)" in out  # aliases resolved
    assert out.index("def g_jvp") < out.index("def h_vjp")
    ns = load(out)
    _, dot = ns["g_jvp"](0.3, 0.7, 1.0)
    assert dot == pytest.approx(np.exp(0.3) * np.cos(0.7))
    _, (x_bar,) = ns["h_vjp"](0.3, 2.0, 1.0)
    assert x_bar == pytest.approx(-np.sin(0.3) * 2.0)
    # flags override what the decorator says
    code, out, _ = run(capsys, path, "--function", "g", "--mode", "reverse", "--wrt", "0")
    assert code == 0
    assert "def g_vjp(x, y, out_bar):" in out and "return (out, (x_bar,))" in out


def test_module_literals_and_other_globals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        import math
        import numpy as np
        from adgen import differentiate

        SCALE = 2.5
        OFFSET, _UNUSED = (1.0, 0.0)
        WEIGHTS = np.linspace(0.0, 1.0, 3)

        @differentiate
        def f(x):
            return np.sum(WEIGHTS * x) * SCALE + OFFSET + math.pi
        """,
    )
    code, out, err = run(capsys, path)
    assert (code, err) == (0, "")
    assert "WEIGHTS * x" in out and "* SCALE" in out and "OFFSET" in out
    compile(out, "printed", "exec")
    weights = np.linspace(0.0, 1.0, 3)
    ns = load(out, WEIGHTS=weights, SCALE=2.5, OFFSET=1.0)
    value, (x_bar,) = ns["f_vjp"](np.ones(3), 1.0)
    assert value == pytest.approx(np.sum(weights) * 2.5 + 1.0 + np.pi)
    np.testing.assert_allclose(x_bar, weights * 2.5)


def test_static_scope_resolution() -> None:
    scope = StaticScope.from_source(
        textwrap.dedent(
            """
            import numpy as onp, numpy.linalg as la
            from numpy import sin
            from scipy import special
            import adgen as ad
            import some_unknown_package
            try:
                import math as m
            except ImportError:
                m = None
            N = 3
            N2 = N * 2
            def helper(x):
                return x
            class Model:
                pass
            if __name__ == "__main__":
                N = 99
            """
        ),
        "model.py",
    )
    import math

    assert scope.lookup("onp") is np and scope.lookup("la") is np.linalg
    assert scope.lookup("sin") is np.sin
    try:
        import scipy.special
    except ImportError:  # scipy is optional: its import fails at the import's line
        with pytest.raises(UnresolvedNameError, match=r"model.py:4:1: cannot import `scipy`"):
            scope.lookup("special")
    else:
        assert scope.lookup("special") is scipy.special
    assert scope.lookup("ad") is adgen
    assert scope.lookup("m") is math  # an except handler does not override the import
    assert scope.lookup("N") == 3  # the __main__ block is not run
    assert isinstance(scope.lookup("N2"), Opaque) and not callable(scope.lookup("N2"))
    assert isinstance(scope.lookup("Model"), Opaque)
    unknown = scope.lookup("some_unknown_package")
    assert isinstance(unknown, Opaque) and unknown.attr.__qualname__ == "some_unknown_package.attr"
    helper = scope.lookup("helper")
    assert isinstance(helper, UserFunction) and helper.adgen_user_function
    assert helper.node.name == "helper" and helper.scope is scope
    assert scope.lookup("len") is len
    with pytest.raises(KeyError):
        scope.lookup("nowhere")
    assert "some_unknown_package" not in sys.modules


# -- the file is never run -------------------------------------------------------------------------
HOSTILE = """
    import numpy as np
    import adgen
    import module_that_does_not_exist_anywhere
    from another_missing_module import thing

    open({marker!r}, "w").write("the file was executed")
    raise SystemExit(3)

    @adgen.differentiate
    def f(x):
        return np.sin(x) * x
    """


def test_the_file_is_never_executed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "marker.txt"
    path = write(tmp_path, HOSTILE.format(marker=str(marker)))
    code, out, err = run(capsys, path)
    assert (code, err) == (0, "")
    assert "def f_vjp(x, out_bar):" in out
    assert not marker.exists()
    assert "module_that_does_not_exist_anywhere" not in sys.modules


def test_the_file_is_never_executed_subprocess(tmp_path: Path) -> None:
    marker = tmp_path / "marker.txt"
    path = write(tmp_path, HOSTILE.format(marker=str(marker)))
    proc = subprocess.run(
        [sys.executable, "-m", "adgen", path, "--mode", "forward"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "def f_jvp(x, x_dot):" in proc.stdout
    compile(proc.stdout, "printed", "exec")
    assert not marker.exists()


# -- errors ----------------------------------------------------------------------------------------
def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "absent.py")
    code, out, err = run(capsys, path)
    assert (code, out) == (1, "")
    assert_one_error_line(err, f"{path}: no such file")


def test_unknown_function(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(EXAMPLE), "--function", "nope")
    assert (code, out) == (1, "")
    assert_one_error_line(err, f"{EXAMPLE}:1: no function named nope (functions here: f)")


def test_no_decorated_function_asks_for_function_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "def a(x):\n    return x\n\ndef b(x):\n    return x\n")
    code, out, err = run(capsys, path)
    assert (code, out) == (1, "")
    assert_one_error_line(err, path)
    assert "--function" in err and "a, b" in err


def test_unsupported_syntax_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        import adgen

        @adgen.differentiate
        def f(x):
            with open("data") as fh:
                pass
            return x
        """,
    )
    code, out, err = run(capsys, path)
    assert (code, out) == (1, "")
    assert_one_error_line(err, f"{path}:6:5: in f: adgen does not support `with` blocks")


def test_a_call_of_a_value_the_module_computes_is_an_adgen_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``f = make(...)`` at module level is a value only running the file makes: calling it
    is refused by adgen, naming the line (it was an internal error: the placeholder standing
    for ``f`` answered adgen's own ``adgen_function`` attribute)."""
    path = write(
        tmp_path,
        """
        import numpy as np

        def make(scale):
            def g(x):
                return scale * x
            return g

        f = make(2.0)

        def loss(x):
            return np.tanh(f(x))
        """,
    )
    code, out, err = run(capsys, path, "--function", "loss")
    assert (code, out) == (1, "")
    assert_one_error_line(err, f"{path}:12:20: in loss: adgen has no derivative rule for `f`")


def test_call_to_a_function_of_the_same_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        def helper(x):
            return x * x

        def f(x):
            return helper(x) + 1.0
        """,
    )
    code, out, err = run(capsys, path, "--function", "f")
    assert (code, err) == (0, "")
    # the helper is inlined, under comments naming its lines
    assert "# line 3 of helper: return x * x" in out
    assert "# adjoint of line 3 of helper: return x * x" in out
    compile(out, "cli-output", "exec")


def test_syntax_error_in_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "def f(x):\n    return (x\n")
    code, _, err = run(capsys, path)
    assert code == 1
    assert_one_error_line(err, f"{path}:2:")


def test_bad_wrt_in_decorator_and_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(
        tmp_path,
        """
        import adgen

        @adgen.differentiate(wrt=2)
        def f(x, y):
            return x * y
        """,
    )
    code, _, err = run(capsys, path)
    assert code == 1
    assert_one_error_line(err, f"{path}:5:1: wrt=2: f has 2 parameter(s) (x, y)")
    code, out, err = run(capsys, path, "--wrt", "y")  # the flag wins over the bad literal
    assert (code, err) == (0, "")
    assert "w.r.t. y" in out


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(EXAMPLE), "--mode", "sideways")
    assert (code, out) == (2, "")
    assert "invalid choice: 'sideways'" in err
    code, _, err = run(capsys, str(EXAMPLE), "--no-such-flag")
    assert code == 2 and "unrecognized arguments: --no-such-flag" in err
    code, _, err = run(capsys)
    assert code == 2 and "FILE" in err


def test_bad_usage_exits_2_subprocess() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "adgen", str(EXAMPLE), "--wrt", "x1,,x2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "empty item" in proc.stderr


def test_help_shows_examples_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert out.count("python -m adgen model.py") == 4
    assert "--output build/" in out and "adgen_runtime.py" in out
    assert "--color {auto,always,never}" in out and "NO_COLOR" in out
    for status in ("0  ", "1  ", "2  "):
        assert status in out.split("exit status:")[1]
    assert "--output cannot make" in out.split("exit status:")[1].replace("\n    ", "")


def test_internal_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import adgen.cli

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(adgen.cli, "lower", broken)
    code, out, err = run(capsys, str(EXAMPLE))
    assert (code, out) == (1, "")
    assert_one_error_line(err, "adgen: internal error:")
    assert "RuntimeError: boom" in err
    monkeypatch.setattr(adgen.cli.StaticScope, "from_path", broken)
    code, _, err = run(capsys, str(EXAMPLE))
    assert code == 1
    assert_one_error_line(err, "adgen: internal error: RuntimeError: boom second line")


# -- colour ----------------------------------------------------------------------------------------
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_color_always_and_never(capsys: pytest.CaptureFixture[str]) -> None:
    code, plain, _ = run(capsys, str(EXAMPLE), "--color", "never")
    assert code == 0 and "\x1b" not in plain
    code, colored, _ = run(capsys, str(EXAMPLE), "--color", "always")
    assert code == 0
    assert "\x1b[" in colored
    assert ANSI.sub("", colored) == plain  # colour only adds escapes
    comment = next(line for line in colored.splitlines() if "# line 15" in line)
    assert comment.strip().startswith("\x1b[02m") or comment.strip().startswith("\x1b[2m")  # dim
    assert re.search(r"\x1b\[0?1mdef\b", colored)  # keywords bold
    code, ir_colored, _ = run(capsys, str(EXAMPLE), "--ir", "--colour", "always")
    assert code == 0 and "\x1b[" in ir_colored


def test_color_auto_needs_a_terminal_without_no_color(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    code, out, _ = run(capsys, str(EXAMPLE))  # captured: not a terminal
    assert code == 0 and "\x1b" not in out
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run(capsys, str(EXAMPLE))
    assert code == 0 and "\x1b[" in out
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, _ = run(capsys, str(EXAMPLE))
    assert code == 0 and "\x1b" not in out
    code, out, _ = run(capsys, str(EXAMPLE), "--color", "always")  # the flag wins
    assert "\x1b[" in out

    class Stream:
        def __init__(self, tty: bool) -> None:
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    monkeypatch.delenv("NO_COLOR")
    assert use_color("auto", Stream(True)) and not use_color("auto", Stream(False))
    assert not use_color("never", Stream(True))
    monkeypatch.setenv("NO_COLOR", "")  # empty: unset, as no-color.org says
    assert use_color("auto", Stream(True))
    monkeypatch.setenv("TERM", "dumb")
    assert not use_color("auto", Stream(True))


def test_color_without_pygments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pygments", None)  # import pygments raises ImportError
    code = "# line 2: if x > 1:\ndef f(x):\n    return np.sum(x, axis=None) * 2.5  # 'end'\n"
    colored = highlight(code)
    assert ANSI.sub("", colored) == code
    assert "\x1b[2m# line 2: if x > 1:\x1b[0m" in colored  # a comment is dim, keywords in it too
    assert "\x1b[1mdef\x1b[0m" in colored and "\x1b[1mreturn\x1b[0m" in colored
    assert "\x1b[1mNone\x1b[0m" in colored and "\x1b[36m2.5\x1b[0m" in colored


def test_color_never_when_piped_or_no_color_subprocess(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    piped = subprocess.run(
        [sys.executable, "-m", "adgen", str(EXAMPLE)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert piped.returncode == 0 and "def f_vjp" in piped.stdout
    assert "\x1b" not in piped.stdout
    if not hasattr(os, "openpty"):
        return
    for extra, colored in (({}, True), ({"NO_COLOR": "1"}, False)):
        leader, follower = os.openpty()
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "adgen", str(EXAMPLE)],
                stdout=follower,
                stderr=subprocess.PIPE,
                env={**env, **extra},
                timeout=120,
            )
            os.close(follower)
            follower = -1
            chunks = []
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: the terminal was closed and drained
                    break
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(leader)
            if follower != -1:
                os.close(follower)
        out = b"".join(chunks).decode()
        assert proc.returncode == 0 and "def" in out and "f_vjp" in out
        assert ("\x1b[" in out) is colored, extra


def test_no_optimize_flag_shows_the_code_as_lowered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        import numpy as np

        def loss(x):
            unused = np.cosh(x)
            return np.sum(np.sin(x) * np.sin(x))
        """,
    )
    for flags, sins, cosh in (((), 1, 0), (("--no-optimize",), 2, 1)):
        code, ir_text, err = run(capsys, path, "--function", "loss", "--ir", *flags)
        assert (code, err) == (0, "")
        assert ir_text.count("= np.sin(x)") == sins and ir_text.count("np.cosh") == cosh
        code, out, err = run(capsys, path, "--function", "loss", *flags)
        assert (code, err) == (0, "")
        x = np.array([0.3, -1.2])
        _, (x_bar,) = load(out)["loss_vjp"](x, 1.0)
        np.testing.assert_allclose(x_bar, 2 * np.sin(x) * np.cos(x), rtol=1e-12)
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "--no-optimize" in out


def test_a_loop_over_a_generator_of_the_file_read_without_running_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m adgen`` reads a file without running it: a ``for`` over a generator the
    file defines is read there too, the loop's body where it yields."""
    path = write(
        tmp_path,
        """
        import numpy as np


        def rows(x):
            for i in range(x.shape[0]):
                yield x[i] * 2.0


        def energy(x):
            total = 0.0
            for r in rows(x):
                total = total + np.sum(np.tanh(r))
            return total
        """,
    )
    code, out, err = run(capsys, path, "--function", "energy")
    assert (code, err) == (0, "")
    x = np.array([[0.3, -0.2], [0.5, 0.1], [-1.0, 0.4]])
    _, (x_bar,) = load(out)["energy_vjp"](x, 1.0)
    np.testing.assert_allclose(x_bar, 2.0 * (1.0 - np.tanh(2.0 * x) ** 2), rtol=1e-12)


def test_a_file_with_a_named_exception_handler_is_read_without_running_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``except ValueError as e`` at the top of a file (a script's own error handling)
    binds a name adgen cannot know; the functions beside it are read as usual."""
    path = write(
        tmp_path,
        """
        import numpy as np

        try:
            SCALE = float("2.0")
        except ValueError as e:
            print(e)


        def energy(x):
            return np.sum(np.tanh(x) * 2.0)
        """,
    )
    code, out, err = run(capsys, path, "--function", "energy")
    assert (code, err) == (0, "")
    x = np.array([0.3, -0.2, 0.5])
    _, (x_bar,) = load(out)["energy_vjp"](x, 1.0)
    np.testing.assert_allclose(x_bar, 2.0 * (1.0 - np.tanh(x) ** 2), rtol=1e-12)
