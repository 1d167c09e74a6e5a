import sys

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def batched_sources(monkeypatch):
    """The source of each batched forward-mode function adgen makes while the test runs
    (what ``jacfwd`` and ``hessian`` run), in order."""
    from adgen import pipeline

    made: list[str] = []
    original = pipeline.derivative

    def kept(fn, mode, *args, **kwargs):
        d = original(fn, mode, *args, **kwargs)
        if mode == "forward_batched":
            made.append(d.generated.source)
        return d

    monkeypatch.setattr(pipeline, "derivative", kept)
    return made


def pytest_terminal_summary(terminalreporter) -> None:
    """The random programs adgen refused (tests/test_fuzz.py counts them, not fails them)."""
    fuzz = sys.modules.get("test_fuzz")
    tally = getattr(fuzz, "TALLY", None)
    if not tally or not tally["refused"]:
        return
    terminalreporter.section("random programs adgen refused (tests/test_fuzz.py)")
    terminalreporter.write_line(f"{tally['refused']} of {sum(tally.values())} programs:")
    for key, n in fuzz.REFUSALS.most_common():
        terminalreporter.write_line(f"  {n} x {key}")
