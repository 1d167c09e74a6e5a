"""Every example script runs and prints what it promises."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize(
    "script, expected",
    [
        ("logistic_regression.py", "training accuracy"),
        ("print_source.py", "def f_vjp(x1, x2, out_bar):"),
        ("mlp_training.py", "epoch 200"),
        ("fit_spring.py", "fitted k = 4.000"),
        ("newton.py", "minimum at [1. 1. 1.]"),
        ("helmholtz.py", "adgen's gradient matches the hand-written gradient"),
        ("distributed_logistic_regression.py", "NumPy and Dask gradients agree: True"),
        ("impedance_spectroscopy.py", "fitted R0 = 12.01 ohm, R1 = 84.87 ohm"),
        ("impedance_spectroscopy.py", "gradient matches finite differences: True"),
        ("pharmacokinetics_fit.py", "gradient matches finite differences: True"),
        ("pharmacokinetics_fit.py", "fitted ka = 1.32 1/h, ke = 0.144 1/h, V = 31.5 L"),
    ],
)
def test_example_runs(script, expected):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout
