"""Run a notebook in a real Jupyter kernel (for tests/test_notebook.py and test_first_hour.py).

The kernel is this interpreter (``sys.executable``), described by a kernelspec
written to a temporary directory put first on ``JUPYTER_PATH``: nothing is
installed into the user's Jupyter directories, and no ``python3`` kernelspec of
another interpreter can be picked up by mistake. The kernel imports the adgen these
tests import (its directory first on ``PYTHONPATH``: a relative ``PYTHONPATH=src`` would
not reach it from the kernel's working directory).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import adgen

KERNEL = "adgen-test-python"


def execute(nb: Any, root: Path) -> Any:
    """Execute ``nb`` (an nbformat notebook) in place, in a kernel described under ``root``;
    skips the test when nbclient or ipykernel is missing. A cell tagged ``raises-exception``
    may fail (its error is an output); any other failing cell raises CellExecutionError."""
    nbclient = pytest.importorskip(
        "nbclient", reason="nbclient is not installed (pip install -e '.[test]')"
    )
    pytest.importorskip("ipykernel", reason="ipykernel is not installed")
    spec_dir = root / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "adgen test kernel",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    work = root / "work"
    work.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(root))
        mp.setenv("JUPYTER_PLATFORM_DIRS", "1")  # silences jupyter_core's migration warning
        mp.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
        here = str(Path(adgen.__file__).resolve().parents[1])
        mp.setenv("PYTHONPATH", os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
        client = nbclient.NotebookClient(
            nb,
            kernel_name=KERNEL,
            timeout=60,
            startup_timeout=60,
            resources={"metadata": {"path": str(work)}},
        )
        client.execute()
    return nb
