"""Standalone derivative modules: ``python -m adgen FILE --output DIR`` and ``adgen.export``.

Each written module is imported in a subprocess that cannot import adgen
(``python -I -S`` with ``sys.path`` holding only DIR, numpy's parent directory
and the standard library; the subprocess asserts that ``import adgen`` fails
first), and its derivative is compared with ``adgen.grad``/``adgen.jvp`` here.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import adgen
from adgen.api import export
from adgen.backend.export import runtime_source, value_source
from adgen.cli import main
from adgen.rules import runtime

NUMPY_PARENT = str(Path(np.__file__).resolve().parents[1])

RUNNER = """\
import json, sys
sys.path[:0] = json.loads(sys.argv[1])
try:
    import adgen
except ImportError:
    pass
else:
    raise SystemExit("adgen is importable here: " + str(adgen.__file__))
import numpy as np

def plain(value):
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return np.asarray(value, dtype=float).tolist()

"""


def run_standalone(directory: Path, code: str) -> Any:
    """Run ``code`` (which sets ``result``) where only ``directory`` and NumPy are importable."""
    script = RUNNER + textwrap.dedent(code) + "\nprint(json.dumps(plain(result)))\n"
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script, json.dumps([str(directory), NUMPY_PARENT])],
        capture_output=True,
        text=True,
        cwd=directory,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return json.loads(proc.stdout)


def close(got: Any, want: Any) -> None:
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w)
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-14)


def load_file(path: Path) -> Any:
    """Import a sample file as a module (the test runs it; the command line never does)."""
    spec = importlib.util.spec_from_file_location(f"sample_{path.stem}_{id(path)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


SAMPLE = """\
import math

import numpy as np

import adgen
from adgen import differentiate

DT = 0.05
STEPS = 6
COEFS = (1.0, -0.5, 0.25)
BIG = 1e400  # a literal too: infinity


def spring(x, v, k=2.0):
    return v - k * x * DT


@differentiate(wrt=("x0", "v0"))
def simulate(x0, v0):
    x = x0
    v = v0
    for _ in range(STEPS):
        v = spring(x, v)
        x = x + v * DT
        if x > 1.0:
            x = 2.0 - x
    return x * x + 0.5 * v * v


@adgen.differentiate
def features(w, t):
    feats = np.zeros(len(COEFS))
    for i, c in enumerate(COEFS):
        feats[i] = c * np.sum(np.tanh(w * t**i))
    total = 0.0
    k = 0
    while k < len(COEFS):
        total = total + feats[k] * feats[k]
        k += 1
    return total if total < BIG else -1.0


@differentiate(mode="forward", wrt="W")
def layer(W, x):
    h = np.tanh(W @ x)
    h[h < 0.0] = 0.0
    return np.sum(h**2) + math.exp(-DT)


def undecorated(a):
    return a
"""

W = [[0.3, -0.5], [0.8, 0.1], [-0.4, 0.2]]


# -- the command line ------------------------------------------------------------------------------
def test_cli_output_writes_standalone_modules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "model.py"
    source.write_text(SAMPLE)
    out = tmp_path / "build" / "derivs"  # created, parents too
    code = main([str(source), "--output", str(out), "--color", "always"])
    stdout, err = capsys.readouterr()
    assert (code, err) == (0, "")
    names = ["simulate_vjp.py", "features_vjp.py", "layer_jvp.py", "adgen_runtime.py"]
    assert stdout.splitlines() == [str(out / name) for name in names]  # uncoloured paths
    assert listing(out) == sorted(names)  # nothing else: no temporary files left

    runtime_text = (out / "adgen_runtime.py").read_text()
    assert runtime_text == runtime_source()
    assert "import adgen" not in runtime_text and "from adgen" not in runtime_text

    module = (out / "simulate_vjp.py").read_text()
    doc = module.split('"""')[1]
    assert doc.startswith("simulate_vjp: reverse-mode derivative (vector-Jacobian product) of")
    assert f"adgen {adgen.__version__}" in doc and "Do not edit" in doc
    assert "w.r.t. x0, v0" in doc and "model.py:19" in doc
    # the command runs from where this one ran: the file's and the folder's paths as given
    assert (
        f"python -m adgen {source} --function simulate --mode reverse --wrt x0,v0 "
        f"--output {out}\n" in doc
    )
    assert f"from {source}:19" in doc
    assert "\nimport math\n\nimport numpy as np\n\nimport adgen_runtime as rt\n" in module
    for definition in ("DT = 0.05", "STEPS = 6"):
        assert f"\n{definition}\n" in module
    assert "\nBIG = math.inf\n" in (out / "features_vjp.py").read_text()
    assert "layer_jvp: forward-mode derivative" in (out / "layer_jvp.py").read_text()
    assert "undecorated" not in " ".join(listing(out))

    got = run_standalone(
        out,
        f"""
        from simulate_vjp import simulate_vjp
        from features_vjp import features_vjp
        from layer_jvp import layer_jvp
        w, t = np.array([0.5, -0.2]), np.array([1.5, 0.7])
        W, x = np.array({W}), np.array([1.0, 2.0])
        result = [
            simulate_vjp(0.3, 0.8, 1.0),
            simulate_vjp(0.9, 2.5, 1.0),  # the reflecting branch is taken
            features_vjp(w, t, 1.0),
            layer_jvp(W, x, np.ones_like(W)),
        ]
        """,
    )
    model = load_file(source)
    w, t = np.array([0.5, -0.2]), np.array([1.5, 0.7])
    Wa, x = np.array(W), np.array([1.0, 2.0])
    grad_sim = adgen.value_and_grad(model.simulate, wrt=(0, 1))
    close(got[0], grad_sim(0.3, 0.8))
    close(got[1], grad_sim(0.9, 2.5))
    assert got[0][1] != got[1][1]
    value, (w_bar,) = got[2]
    close(value, model.features(w, t))
    close(w_bar, adgen.grad(model.features)(w, t))
    close(got[3], adgen.jvp(model.layer, (Wa, x), (np.ones_like(Wa), None)))


def test_cli_output_function_mode_and_wrt_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "model.py"
    source.write_text(SAMPLE)
    out = tmp_path / "out"
    argv = [str(source), "--function", "undecorated", "--function", "simulate"]
    code = main([*argv, "--mode", "forward", "--output", str(out)])
    stdout, _ = capsys.readouterr()
    assert code == 0
    assert [Path(p).name for p in stdout.split()] == [
        "simulate_jvp.py",
        "undecorated_jvp.py",
        "adgen_runtime.py",
    ]
    code = main([str(source), "--function", "features", "--wrt", "t", "--output", str(out)])
    assert code == 0 and capsys.readouterr().out.split()[0].endswith("features_vjp.py")
    assert (
        "--function features --mode reverse --wrt t --output"
        in (out / "features_vjp.py").read_text()
    )
    got = run_standalone(
        out,
        """
        from simulate_jvp import simulate_jvp
        from undecorated_jvp import undecorated_jvp
        from features_vjp import features_vjp
        result = [
            simulate_jvp(0.3, 0.8, 0.0, 1.0),  # the decorator's wrt: x0, v0
            undecorated_jvp(2.0, 3.0),
            features_vjp(np.array([0.5, -0.2]), np.array([1.5, 0.7]), 1.0),
        ]
        """,
    )
    model = load_file(source)
    close(got[0], adgen.jvp(model.simulate, (0.3, 0.8), (None, 1.0)))
    assert got[1] == [2.0, 3.0]
    w, t = np.array([0.5, -0.2]), np.array([1.5, 0.7])
    value, t_bar = adgen.value_and_grad(model.features, wrt="t")(w, t)
    close(got[2], (value, (t_bar,)))


def test_cli_output_refuses_an_opaque_global(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "model.py"
    source.write_text(
        textwrap.dedent(
            """\
            import numpy as np
            import adgen

            SCALE = 2.0
            WEIGHTS = np.linspace(0.0, 1.0, 3)

            @adgen.differentiate
            def ok(x):
                return np.sum(x) * SCALE

            @adgen.differentiate
            def loss(x):
                return np.sum(WEIGHTS * x) * SCALE
            """
        )
    )
    out = tmp_path / "out"
    code = main([str(source), "--output", str(out)])
    stdout, err = capsys.readouterr()
    assert (code, stdout) == (1, "")
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{source}:13:19: loss reads the module-level value `WEIGHTS`")
    assert "(set at line 5)" in lines[0] and "argument" in lines[0]
    assert not out.exists()  # nothing is written when one function is refused
    # printing the code still works: the generated code refers to WEIGHTS by name
    assert main([str(source)]) == 0
    assert "WEIGHTS * x" in capsys.readouterr().out
    # and the other function alone can be written
    assert main([str(source), "--function", "ok", "--output", str(out)]) == 0
    assert listing(out) == ["adgen_runtime.py", "ok_vjp.py"]


def test_cli_output_usage_and_unwritable_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "model.py"
    source.write_text(SAMPLE)
    code = main([str(source), "--ir", "--output", str(tmp_path / "o")])
    _, err = capsys.readouterr()
    assert code == 2 and "--ir" in err and not (tmp_path / "o").exists()
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    code = main([str(source), "--output", str(blocker)])
    stdout, err = capsys.readouterr()
    assert (code, stdout) == (1, "")
    assert len(err.splitlines()) == 1 and err.startswith(str(blocker))
    assert "cannot write" in err


def test_atomic_write_leaves_no_temporary_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "model.py"
    source.write_text(SAMPLE)
    out = tmp_path / "out"
    assert main([str(source), "--function", "simulate", "--output", str(out)]) == 0
    before = {name: (out / name).read_text() for name in listing(out)}
    assert sorted(before) == ["adgen_runtime.py", "simulate_vjp.py"]
    mode = (out / "simulate_vjp.py").stat().st_mode & 0o777
    assert mode & 0o644 == 0o644 or os.name != "posix"  # an ordinary file, not mkstemp's 0600

    def failing_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device", dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    capsys.readouterr()
    code = main([str(source), "--function", "simulate", "--mode", "forward", "--output", str(out)])
    _, err = capsys.readouterr()
    assert code == 1 and "No space left on device" in err
    assert listing(out) == sorted(before)  # the temporary file is gone, old files untouched
    assert {name: (out / name).read_text() for name in before} == before


def test_console_script(tmp_path: Path) -> None:
    import shutil

    script = shutil.which("adgen")
    if script is None:
        pytest.skip("the adgen console script is not on PATH")
    source = tmp_path / "model.py"
    source.write_text(SAMPLE)
    proc = subprocess.run(
        [script, str(source), "--function", "layer", "--output", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.splitlines()[0].endswith("layer_jvp.py")
    assert "\x1b[" not in proc.stdout


# -- adgen.export ----------------------------------------------------------------------------------
RATE = 0.5
SHIFT = (1.0, -2.0)
NAME = "tanh-model"
AXIS = None
TABLE = np.array([1.0, 2.0])


def live_loss(w, x):
    y = np.zeros(2)
    for i in range(2):
        y[i] = np.tanh(w[i] * x + SHIFT[i])
    if NAME == "tanh-model":
        y = y * RATE
    return np.sum(y * y, axis=AXIS)


def make_scaled(scale: float) -> Any:
    def scaled(x, y):
        return math.sin(x * scale) * y + scale

    return scaled


def test_export_live_function(tmp_path: Path) -> None:
    path = export(live_loss, tmp_path / "gen")
    assert path == tmp_path / "gen" / "live_loss_vjp.py"
    assert listing(tmp_path / "gen") == ["adgen_runtime.py", "live_loss_vjp.py"]
    text = path.read_text()
    for definition in ("SHIFT = (1.0, -2.0)", "NAME = 'tanh-model'", "AXIS = None"):
        assert f"\n{definition}\n" in text
    assert "RATE = 0.5" in text and "test_export.py:" in text
    assert "adgen.export" in text.split('"""')[1]

    # a .py path names the file; the closure's value is written as a literal
    scaled = make_scaled(1.5)
    other = adgen.export(scaled, tmp_path / "gen" / "scaled_fwd.py", mode="forward", wrt=(0, "y"))
    assert other.name == "scaled_fwd.py" and "\nscale = 1.5\n" in other.read_text()

    w = np.array([0.3, -0.7])
    got = run_standalone(
        tmp_path / "gen",
        """
        from live_loss_vjp import live_loss_vjp
        from scaled_fwd import scaled_jvp
        result = [live_loss_vjp(np.array([0.3, -0.7]), 1.25, 1.0), scaled_jvp(0.4, 2.0, 1.0, 0.5)]
        """,
    )
    value, w_bar = adgen.value_and_grad(live_loss)(w, 1.25)
    close(got[0], (value, (w_bar,)))
    close(got[1], adgen.jvp(scaled, (0.4, 2.0), (1.0, 0.5)))


def test_export_refuses_arrays(tmp_path: Path) -> None:
    def uses_table(x):
        return np.sum(TABLE * x)

    with pytest.raises(adgen.AdgenError, match=r"(?s)`TABLE`, a NumPy array .*pass `TABLE`"):
        export(uses_table, tmp_path / "gen")
    assert not (tmp_path / "gen").exists()
    with pytest.raises(ValueError, match="mode"):
        export(live_loss, tmp_path / "gen", mode="sideways")
    with pytest.raises(adgen.WrtError):
        export(live_loss, tmp_path / "gen", wrt=5)


def test_value_source_round_trips() -> None:
    values = [
        0.1,
        -3,
        True,
        None,
        "it's",
        b"\x00",
        (1.0,),
        (),
        [1, (2.5, "a")],
        {"k": 1e-300},
        1 + 2j,
        np.float32(0.1),
        np.int64(7),
        np.bool_(True),
    ]
    namespace = {"np": np, "math": math}
    for value in values:
        source = value_source(value)
        assert source is not None, value
        again = eval(source, namespace)
        assert again == value and type(again) is type(value), (value, source)
    assert value_source(float("inf")) == "math.inf"
    assert value_source(float("-inf")) == "-math.inf"
    assert math.isnan(eval(value_source(float("nan")) or "", namespace))
    assert value_source(np.float32) == "np.float32" and value_source(math.pi) == repr(math.pi)
    for refused in (np.ones(2), np.array(1.0), {1, 2}, object(), (1, np.ones(1)), print):
        assert value_source(refused) is None


def test_runtime_file_holds_every_helper(tmp_path: Path) -> None:
    """adgen_runtime.py is the modules of adgen.rules.runtime in one file: where adgen cannot
    be imported it has every helper ``rt`` has, the same ``__all__``, and its doctests pass."""
    (tmp_path / "adgen_runtime.py").write_text(runtime_source())
    helpers = sorted(n for n, v in vars(runtime).items() if callable(v) and not n.startswith("_"))
    assert len(helpers) > 80
    got = run_standalone(
        tmp_path,
        f"""
        import doctest
        import adgen_runtime
        helpers = {helpers!r}
        exported = {runtime.__all__!r}
        missing = [n for n in helpers if not callable(getattr(adgen_runtime, n, None))]
        tests = doctest.testmod(adgen_runtime)
        same_all = adgen_runtime.__all__ == exported
        result = [len(missing), tests.failed, tests.attempted > 100, same_all]
        """,
    )
    assert got == [0, 0, 1, 1]


# -- modules that call scipy.special --------------------------------------------------------------
SCIPY_SAMPLE = """\
import numpy as np
import scipy.special
from scipy.special import expit

import adgen


@adgen.differentiate
def log_gamma_mix(x):
    return np.sum(scipy.special.gammaln(x) * x + expit(x))


@adgen.differentiate(mode="forward")
def erf_sum(x):
    return np.sum(scipy.special.erf(x))
"""


try:
    import scipy.special as special
except ImportError:  # pragma: no cover - SciPy is a test extra
    special = None


def _log_gamma_mix(x):
    return np.sum(special.gammaln(x) * x + special.expit(x))


def test_exported_modules_import_scipy_special(tmp_path: Path) -> None:
    """Generated code spells `scipy.special.gammaln(...)` (and its derivative `psi`): the module
    imports scipy.special, and says it needs SciPy."""
    pytest.importorskip("scipy.special")
    source = tmp_path / "special_model.py"
    source.write_text(SCIPY_SAMPLE)
    out = tmp_path / "cli"
    assert main([str(source), "--output", str(out)]) == 0
    path = export(_log_gamma_mix, tmp_path / "api")
    for module in (out / "log_gamma_mix_vjp.py", out / "erf_sum_jvp.py", path):
        text = module.read_text()
        assert "\nimport numpy as np\nimport scipy.special\n\nimport adgen_runtime as rt\n" in text
        assert "Needs only NumPy and SciPy, and adgen_runtime.py" in text
    # the runtime imports SciPy only inside the helpers that need it (scipy.linalg's)
    runtime_tree = ast.parse((out / "adgen_runtime.py").read_text())
    top_imports = [n for n in runtime_tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not any("scipy" in ast.unparse(n) for n in top_imports)

    x = np.array([0.7, 1.5, 3.0])
    got = run_standalone(
        out,
        """
        from log_gamma_mix_vjp import log_gamma_mix_vjp
        from erf_sum_jvp import erf_sum_jvp
        x = np.array([0.7, 1.5, 3.0])
        result = [log_gamma_mix_vjp(x, 1.0), erf_sum_jvp(x, np.ones(3))]
        """,
    )
    model = load_file(source)
    value, x_bar = adgen.value_and_grad(model.log_gamma_mix)(x)
    close(got[0], (value, (x_bar,)))
    close(got[1], adgen.jvp(model.erf_sum, (x,), (np.ones(3),)))
    got_api = run_standalone(
        tmp_path / "api",
        """
        from _log_gamma_mix_vjp import _log_gamma_mix_vjp
        result = _log_gamma_mix_vjp(np.array([0.7, 1.5, 3.0]), 1.0)
        """,
    )
    value, x_bar = adgen.value_and_grad(_log_gamma_mix)(x)
    close(got_api, (value, (x_bar,)))


def test_modules_without_scipy_do_not_import_it(tmp_path: Path) -> None:
    path = export(live_loss, tmp_path / "gen")
    text = path.read_text()
    assert "scipy" not in text
    assert "Needs only NumPy, and adgen_runtime.py" in text
