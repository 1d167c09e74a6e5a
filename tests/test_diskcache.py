"""The persistent disk cache (``ADGEN_CACHE_DIR`` / ``ADGEN_DISK_CACHE``): generated source
kept between processes, keyed by everything it depends on, never stale, never half-written.

Most tests run adgen in fresh subprocesses (``python -c``), since a second process is what
the disk cache is for: the in-memory cache cannot answer there.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import adgen
from adgen.backend import cache, diskcache

SRC = str(Path(adgen.__file__).resolve().parents[1])

DRIVER = """\
import json, sys
import numpy as np
import adgen
from adgen.backend import diskcache
import {module} as m
x = np.array([0.5, 1.0, 2.0])
g = adgen.grad(m.f)(x, 3.0)
stats = dict(diskcache.stats)  # of this one derivative
print(json.dumps({{
    "grad": np.asarray(g).tolist(),
    "stats": stats,
    "source": adgen.source(m.f),  # (a second entry: not specialised to a scalar c)
}}))
"""


def run(workdir: Path, cache_dir: Path | None, module: str = "model", **env: str) -> dict[str, Any]:
    """Differentiate ``module.f`` in a new process; its gradient, disk-cache stats, source."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ADGEN_")}
    environ.update(
        PYTHONPATH=os.pathsep.join([SRC, str(workdir)]),
        PYTHONDONTWRITEBYTECODE="1",  # an edit within the same second still reads the new text
        OMP_NUM_THREADS="1",
        **env,
    )
    if cache_dir is not None:
        environ["ADGEN_CACHE_DIR"] = str(cache_dir)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER.format(module=module)],
        capture_output=True,
        text=True,
        cwd=workdir,
        env=environ,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


MODEL = """\
import numpy as np
from helpers import bump


def f(x, c):
    y = bump(x) * c
    return np.sum(y)
"""

HELPERS = """\
import numpy as np


def bump(x):
    return np.sin(x) * x
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "project"
    work.mkdir()
    (work / "model.py").write_text(MODEL)
    (work / "helpers.py").write_text(HELPERS)
    return work


def entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("??/*.py"))


def test_off_by_default(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    out = run(project, None, HOME=str(home), XDG_CACHE_HOME=str(home / "xdg"))
    assert out["stats"]["writes"] == 0 and out["stats"]["misses"] == 0
    assert not (home / "xdg").exists() and not (home / ".cache").exists()


def test_second_process_reads_the_entry(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    # Sets in the key (scalar parameters, code constants) are written in a fixed order: the
    # same derivative has the same key whatever PYTHONHASHSEED is.
    first = run(project, cache_dir, PYTHONHASHSEED="1")
    assert first["stats"]["misses"] == 1 and first["stats"]["writes"] == 1
    texts = [p.read_text() for p in entries(cache_dir)]
    assert len(texts) == 2  # adgen.source(m.f) made the second
    assert all(t.startswith("# adgen-cache {") for t in texts)
    assert any(first["source"] in t for t in texts)  # the generated source itself, readable
    second = run(project, cache_dir, PYTHONHASHSEED="2")
    assert second["stats"]["hits"] == 1 and second["stats"]["writes"] == 0
    assert second["grad"] == first["grad"]
    assert second["source"] == first["source"]
    x = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(first["grad"], (np.cos(x) * x + np.sin(x)) * 3.0)
    # The same files in another directory (a notebook kernel's cells live in a directory
    # named after its process id): generated code names only the file, so it is a hit.
    moved = tmp_path / "elsewhere"
    shutil.copytree(project, moved)
    third = run(moved, cache_dir)
    assert third["stats"]["hits"] == 1 and third["grad"] == first["grad"]
    # no temporary file is left behind by the atomic write
    assert not [p for p in cache_dir.rglob("*") if p.is_file() and p.name.startswith(".")]


def test_user_cache_directory(project: Path, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    out = run(project, None, ADGEN_DISK_CACHE="1", XDG_CACHE_HOME=str(xdg))
    assert out["stats"]["writes"] == 1
    assert len(entries(xdg / "adgen")) == 2


def test_edited_callee_in_another_module_is_a_new_entry(project: Path, tmp_path: Path) -> None:
    """f's own text does not change; the helper it inlines does: never the stale derivative."""
    cache_dir = tmp_path / "cache"
    before = run(project, cache_dir)
    (project / "helpers.py").write_text(HELPERS.replace("np.sin(x) * x", "np.cos(x) * x * x"))
    after = run(project, cache_dir)
    assert after["stats"]["hits"] == 0 and after["stats"]["misses"] == 1
    x = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(after["grad"], (-np.sin(x) * x * x + 2 * x * np.cos(x)) * 3.0)
    assert after["grad"] != before["grad"]
    assert len(entries(cache_dir)) == 4  # two a version, see above
    # Generated code quotes the user's lines: an edit the bytecode cannot see still counts.
    (project / "model.py").write_text(MODEL.replace("* c\n", "* c  # scaled\n"))
    commented = run(project, cache_dir)
    assert commented["stats"]["misses"] == 1
    assert "# scaled" in commented["source"]
    assert commented["grad"] == after["grad"]


def test_options_are_part_of_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path))

    def f(x, y):
        return np.sum(x * np.sin(y))

    cache.clear()
    adgen.grad(f, wrt=0)(1.0, 2.0)
    adgen.grad(f, wrt=1)(1.0, 2.0)
    adgen.jvp(f, (1.0, 2.0), (1.0, 0.0))
    adgen.grad(f, wrt=0)(np.ones(2), 2.0)  # not a scalar: other code
    assert len(entries(tmp_path)) == 4


def test_reload_after_edit_same_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Import, differentiate, edit the file, reload, clear the memory cache: the new derivative."""
    cache_dir = tmp_path / "cache"
    work = tmp_path / "mod"
    work.mkdir()
    source = "import numpy as np\n\n\ndef f(x):\n    return np.sum(x * x)\n"
    (work / "h7_disk_model.py").write_text(source)
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(cache_dir))
    monkeypatch.syspath_prepend(str(work))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    import h7_disk_model as m  # type: ignore[import-not-found]

    try:
        x = np.array([1.0, 2.0])
        np.testing.assert_allclose(adgen.grad(m.f)(x), 2 * x)
        (work / "h7_disk_model.py").write_text(source.replace("x * x", "x * x * x"))
        importlib.reload(m)
        cache.clear()
        hits = diskcache.stats["hits"]
        np.testing.assert_allclose(adgen.grad(m.f)(x), 3 * x * x)
        assert diskcache.stats["hits"] == hits
        # and the first version, restored, is served from disk
        (work / "h7_disk_model.py").write_text(source)
        importlib.reload(m)
        cache.clear()
        np.testing.assert_allclose(adgen.grad(m.f)(x), 2 * x)
        assert diskcache.stats["hits"] == hits + 1
    finally:
        sys.modules.pop("h7_disk_model", None)


@pytest.mark.parametrize(
    "damage",
    ["truncate", "garbage", "edit source", "empty", "other key"],
)
def test_damaged_entry_is_ignored_and_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """(In one process: clearing the memory cache makes the next call read the disk.)"""
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path))

    def f(x, c):
        return np.sum(np.sin(x) * x) * c

    x = np.array([0.5, 1.0, 2.0])
    cache.clear()
    first = adgen.grad(f)(x, 3.0)
    (entry,) = entries(tmp_path)
    whole = entry.read_text()
    if damage == "truncate":
        entry.write_text(whole[: len(whole) // 2])
    elif damage == "garbage":
        entry.write_bytes(b"\x00\xff\xfe garbage")
    elif damage == "edit source":  # the header is intact, the code is not what was stored
        entry.write_text(whole.replace("return", "return 2 *", 1))
    elif damage == "empty":
        entry.write_text("")
    else:  # a whole entry, but of another key, under this name
        head, _, body = whole.partition("\n")
        meta = json.loads(head[len("# adgen-cache ") :])
        meta["key"] = "0" * 64
        entry.write_text("# adgen-cache " + json.dumps(meta) + "\n" + body)
    before = dict(diskcache.stats)
    cache.clear()
    np.testing.assert_array_equal(adgen.grad(f)(x, 3.0), first)
    assert diskcache.stats["corrupt"] == before["corrupt"] + 1
    assert diskcache.stats["hits"] == before["hits"]
    assert diskcache.stats["writes"] == before["writes"] + 1
    assert entry.read_text() == whole  # rewritten whole
    cache.clear()
    np.testing.assert_array_equal(adgen.grad(f)(x, 3.0), first)
    assert diskcache.stats["hits"] == before["hits"] + 1


def test_recursive_function_from_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The derivative of a recursive call is an outside value the derivation adds: a hit
    puts it back."""
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path))
    x = np.array([0.5, 1.0, 2.0])
    cache.clear()
    first = adgen.grad(_sum_cubes)(x, 3.0)
    cache.clear()
    hits = diskcache.stats["hits"]
    second = adgen.grad(_sum_cubes)(x, 3.0)
    assert diskcache.stats["hits"] > hits
    np.testing.assert_allclose(second, 3 * x**2 * 3.0)
    np.testing.assert_array_equal(second, first)


def _power(x, n):
    if n <= 0:
        return np.ones_like(x)
    return x * _power(x, n - 1)


def _sum_cubes(x, c):
    return np.sum(_power(x, 3)) * c


def test_registered_rule_changes_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path))

    def soft(x):
        return np.log1p(np.exp(x))

    def f(x):
        return np.sum(soft(x))

    x = np.array([0.0, 1.0])
    cache.clear()
    plain = adgen.grad(f)(x)
    with adgen.rules.registrations():
        adgen.defrule(soft, vjp=lambda g, x: 2.0 * g / (1.0 + np.exp(-x)))  # deliberately 2x
        doubled = adgen.grad(f)(x)
    np.testing.assert_allclose(doubled, 2 * plain)
    assert len(entries(tmp_path)) == 2
    cache.clear()
    np.testing.assert_allclose(adgen.grad(f)(x), plain)  # the rule is gone: the first entry


def test_global_values_are_part_of_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path))
    namespace: dict[str, Any] = {"np": np, "SCALE": 2.0}
    exec_source = "def f(x):\n    return np.sum(x * SCALE)\n"
    path = tmp_path / "scaled.py"
    path.write_text(exec_source)
    code = compile(exec_source, str(path), "exec")
    exec(code, namespace)
    f = namespace["f"]
    x = np.array([1.0, 2.0])
    cache.clear()
    np.testing.assert_allclose(adgen.grad(f)(x), [2.0, 2.0])
    namespace["SCALE"] = np.array([1.0, 3.0])  # a scalar became an array: other code
    np.testing.assert_allclose(adgen.grad(f)(x), [1.0, 3.0])
    # a number's value is part of the key too (more than the code needs: never less)
    namespace["SCALE"] = 5.0
    np.testing.assert_allclose(adgen.grad(f)(x), [5.0, 5.0])
    assert len(entries(tmp_path)) == 3
    namespace["SCALE"] = 2.0  # back to the first: its entry
    cache.clear()
    hits = diskcache.stats["hits"]
    np.testing.assert_allclose(adgen.grad(f)(x), [2.0, 2.0])
    assert diskcache.stats["hits"] == hits + 1


def test_switches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ADGEN_CACHE_DIR", "ADGEN_DISK_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert diskcache.directory() is None
    monkeypatch.setenv("ADGEN_DISK_CACHE", "1")
    assert diskcache.directory() == tmp_path / "xdg" / "adgen"
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path / "mine"))
    assert diskcache.directory() == tmp_path / "mine"
    monkeypatch.setenv("ADGEN_DISK_CACHE", "0")
    assert diskcache.directory() is None
    monkeypatch.delenv("ADGEN_DISK_CACHE")
    assert diskcache.directory() == tmp_path / "mine"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # ignored, as the XDG spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ADGEN_CACHE_DIR")
    monkeypatch.setenv("ADGEN_DISK_CACHE", "yes")
    assert diskcache.directory() == tmp_path / "home" / ".cache" / "adgen"
    monkeypatch.setenv("ADGEN_DISK_CACHE", "maybe")
    monkeypatch.setattr(diskcache, "_warned", set())
    with pytest.warns(RuntimeWarning, match="ADGEN_DISK_CACHE='maybe'"):
        assert diskcache.directory() is None


def test_failed_write_leaves_no_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails midway leaves neither a partial entry nor a temporary file."""
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(diskcache, "_warned", set())

    def refuse(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(diskcache.os, "replace", refuse)

    def f(x):
        return x * x

    cache.clear()
    with pytest.warns(RuntimeWarning, match="cannot write the disk cache"):
        assert adgen.grad(f)(3.0) == 6.0
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_unwritable_directory_still_differentiates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(diskcache, "_warned", set())

    def f(x):
        return x * x * x

    cache.clear()
    with pytest.warns(RuntimeWarning, match="cannot write the disk cache"):
        assert adgen.grad(f)(2.0) == 12.0


def test_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path))

    def f(x):
        return np.tanh(x)

    cache.clear()
    adgen.grad(f)(1.0)
    assert len(entries(tmp_path)) == 1
    assert diskcache.clear() == 1
    assert entries(tmp_path) == []
