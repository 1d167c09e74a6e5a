"""Functions the tests differentiate, written to real module files: adgen reads a function's
source, so test functions built as text must live in a file that is imported."""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import sys
import tempfile
import types
from pathlib import Path


def import_file(path: Path, name: str | None = None) -> types.ModuleType:
    """Import the module file ``path`` (as ``name``, by default its stem), registered in
    ``sys.modules`` as an imported module is."""
    name = name or path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def write_module(folder: Path, name: str, source: str) -> types.ModuleType:
    """Write ``source`` exactly as given to ``folder/name.py`` and import it."""
    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return import_file(path, name)


def session_folder(prefix: str) -> Path:
    """A temporary folder for this test process, removed when it exits (none is left behind
    in the temp directory)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
