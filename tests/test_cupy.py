"""The derivative code on the GPU: CuPy arrays through the same code paths as Dask's.

CuPy receives NumPy's calls through NumPy's dispatch protocols, as Dask does, and refuses
implicit conversion to NumPy (``np.asarray`` of a CuPy array raises): a helper that converts
fails here. Runs where CuPy and a CUDA device are present; skipped, with the reason, where
not (the machines adgen's CI runs on have no GPU).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import adgen

cp = pytest.importorskip("cupy", reason="CuPy is not installed (it needs a CUDA GPU)")
try:
    _DEVICES = cp.cuda.runtime.getDeviceCount()
except Exception as exc:  # noqa: BLE001 - no driver, no device: the same for these tests
    pytest.skip(f"CuPy finds no CUDA device: {exc}", allow_module_level=True)
if _DEVICES == 0:
    pytest.skip("CuPy finds no CUDA device", allow_module_level=True)

import dask_programs as progs  # noqa: E402

N, D, K, H = 2_000, 6, 3, 8


def _gpu(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(cp.asarray(v) if isinstance(v, np.ndarray) else v for v in values)


def _check(f: Any, wrt: Any, args: tuple[Any, ...], gpu_wrt: tuple[int, ...]) -> None:
    want = adgen.grad(f, wrt=wrt)(*args)
    got = adgen.grad(f, wrt=wrt)(*_gpu(args))
    wants = want if isinstance(want, tuple) else (want,)
    gots = got if isinstance(got, tuple) else (got,)
    for k, (g, w) in enumerate(zip(gots, wants, strict=True)):
        if k in gpu_wrt:
            assert isinstance(g, cp.ndarray), type(g)
        np.testing.assert_allclose(cp.asnumpy(g), w, rtol=1e-10, atol=1e-12)


def test_logistic_regression_gradient_on_the_gpu() -> None:
    rng = np.random.default_rng(0)
    X, y, w = rng.normal(size=(N, D)), np.sign(rng.normal(size=N)), rng.normal(size=D)
    _check(progs.logistic_loss, 0, (w, X, y, 0.1), (0,))


def test_mlp_gradient_on_the_gpu() -> None:
    rng = np.random.default_rng(1)
    params = (rng.normal(size=(D, H)), np.zeros(H), rng.normal(size=(H, K)), np.zeros(K))
    X, Y = rng.normal(size=(N, D)), np.eye(K)[rng.integers(0, K, N)]
    _check(progs.mlp_loss, (0, 1, 2, 3), (*params, X, Y), (0, 1, 2, 3))


def test_gather_with_repeated_indices_scatters_on_the_gpu() -> None:
    rng = np.random.default_rng(3)
    table, idx, weights = rng.normal(size=(50, D)), rng.integers(0, 50, 300), rng.normal(size=300)
    _check(progs.embedding_loss, 0, (table, idx, weights), (0,))


def test_time_loop_on_the_gpu() -> None:
    rng = np.random.default_rng(4)
    x0, v0 = rng.normal(size=N), rng.normal(size=N)
    _check(progs.damped_oscillators, (0, 1, 2, 3), (x0, v0, 2.0, 0.1), (0, 1))
