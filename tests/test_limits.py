"""Limits of adgen, each with a clear error naming the user's file and line.

* helpers inlined up to ``adgen.frontend.lower.calls.MAX_INLINE_DEPTH`` calls deep
  (tests/test_robustness.py);
* loops and branches nested more than Python compiles (20 levels, a helper's counting inside
  its caller's loop) -> :class:`adgen.LimitError`;
* derivative code longer than ``adgen.backend.compile.MAX_LINES`` -> :class:`adgen.LimitError`;
* expressions nested too deeply for adgen's recursion -> :class:`adgen.LimitError`;
* recursion deeper at run time than the stack allows -> :class:`adgen.DerivativeError` at the
  recursive call, with a hint.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import adgen
from adgen.backend import cache

_count = itertools.count()


def module(tmp_path: Path, source: str):
    name = f"adgen_limits_{next(_count)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _nested_loops(name: str, depth: int, inner: str) -> str:
    lines = [f"def {name}(x):", "    y = x"]
    indent = "    "
    for d in range(depth):
        lines.append(f"{indent}for i{d} in range(1):")
        indent += "    "
    lines += [f"{indent}y = {inner}", "    return y", ""]
    return "\n".join(lines)


def test_blocks_nested_deeper_than_python_compiles(tmp_path) -> None:
    # each function alone compiles (12 nested loops); inlined, g's loops sit inside f's: 24
    mod = module(
        tmp_path,
        _nested_loops("g", 12, "y * 1.5") + "\n\n" + _nested_loops("f", 12, "g(y)"),
    )
    assert mod.f(1.0) == 1.5
    for run in (lambda: adgen.grad(mod.f)(1.0), lambda: adgen.jvp(mod.f, (1.0,), (1.0,))):
        with pytest.raises(adgen.LimitError, match="too many statically nested blocks") as info:
            run()
        assert info.value.loc is not None and info.value.loc.filename == mod.__file__
        assert "nest fewer loops" in info.value.hint


def test_nineteen_nested_loops_are_fine(tmp_path) -> None:
    mod = module(tmp_path, _nested_loops("f", 19, "y * 1.5"))
    assert adgen.grad(mod.f)(1.0) == pytest.approx(1.5)
    assert adgen.jvp(mod.f, (1.0,), (1.0,))[1] == pytest.approx(1.5)


def test_derivative_code_longer_than_the_limit(tmp_path, monkeypatch) -> None:
    import adgen.backend.compile

    body = "".join("    y = y * 1.001 + x\n" for _ in range(40))
    mod = module(tmp_path, f"def f(x):\n    y = x\n{body}    return y\n")
    monkeypatch.setattr(adgen.backend.compile, "MAX_LINES", 60)
    cache.clear()
    with pytest.raises(adgen.LimitError, match=r"lines, more than adgen compiles \(60\)") as info:
        adgen.grad(mod.f)(1.0)
    assert info.value.loc is not None and info.value.loc.filename == mod.__file__
    monkeypatch.setattr(adgen.backend.compile, "MAX_LINES", 400_000)
    cache.clear()
    assert adgen.grad(mod.f)(1.0) == pytest.approx(sum(1.001**k for k in range(41)))


def test_expression_too_deep_for_adgen(tmp_path, monkeypatch) -> None:
    # adgen lowers with a recursion limit of at least 20,000; a RecursionError anyway (here:
    # forced with a tiny limit inside the pipeline) is a LimitError, not an internal error
    import adgen.pipeline

    terms = " + ".join(["x * 1.0"] * 300)
    mod = module(tmp_path, f"def f(x):\n    return {terms}\n")
    real = adgen.pipeline.lower

    def tiny_stack(*args, **kwargs):
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(100)
        try:
            return real(*args, **kwargs)
        finally:
            sys.setrecursionlimit(limit)

    monkeypatch.setattr(adgen.pipeline, "lower", tiny_stack)
    cache.clear()
    with pytest.raises(adgen.LimitError, match="too deeply nested") as info:
        adgen.grad(mod.f)(1.0)
    assert info.value.loc is not None and info.value.loc.filename == mod.__file__
    monkeypatch.undo()
    cache.clear()
    assert adgen.grad(mod.f)(1.0) == pytest.approx(300.0)


def test_long_expression_is_fine(tmp_path) -> None:
    terms = " + ".join(["x * 1.0"] * 2000)
    mod = module(tmp_path, f"import numpy as np\n\ndef f(x):\n    return np.sum({terms})\n")
    np.testing.assert_allclose(adgen.grad(mod.f)(np.array([0.5, 2.0])), [2000.0, 2000.0])


def test_recursion_deeper_than_the_stack_at_run_time(tmp_path) -> None:
    mod = module(
        tmp_path,
        """
        def f(x, n):
            if n == 0:
                return x
            return f(x * 1.0001, n - 1)
        """,
    )
    assert adgen.grad(mod.f)(0.3, 50) == pytest.approx(1.0001**50)
    # deeper than the stack: jvp runs only derivative code (grad would run f first and let
    # f's own RecursionError through); how deep the derivative may go depends on the Python
    # version (3.12 changed the stack accounting), so the depth is beyond any of them
    depth = sys.getrecursionlimit() + 100
    with pytest.raises(adgen.DerivativeError, match="RecursionError") as info:
        adgen.jvp(mod.f, (0.3, depth), (1.0, None))
    assert info.value.loc is not None and "return f(x * 1.0001, n - 1)" in info.value.loc.text
    assert "write the recursion as a loop" in info.value.hint
