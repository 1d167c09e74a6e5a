"""Gradients of whole programs over Dask arrays: lazy until the user computes, equal to NumPy's.

The programs (``dask_programs.py``) are plain NumPy code. Each is differentiated once on NumPy
arrays and once on chunked Dask arrays; the Dask gradient is built under a scheduler that
refuses to compute anything (``dask_support.lazily``), comes back as Dask arrays, and once
computed matches the NumPy gradient to 1e-10. The last test computes them on a
``dask.distributed`` cluster of worker processes on localhost, started and stopped here.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

import numpy as np
import pytest

import adgen

da = pytest.importorskip("dask.array")

import dask_programs as progs  # noqa: E402
from dask_support import assert_close, computed, lazily, to_dask  # noqa: E402
from test_real_code_corpus import AS_WRITTEN  # noqa: E402

N, D, K, H = 2_000, 6, 3, 8


def _data() -> dict[str, Any]:
    rng = np.random.default_rng(20261127)
    X = rng.normal(size=(N, D))
    return {
        "X": X,
        "Xd": da.from_array(X, chunks=(500, D)),
        "y": np.sign(rng.normal(size=N)),
        "w": rng.normal(size=D),
        "Y": np.eye(K)[rng.integers(0, K, size=N)],
        "rng": rng,
    }


def _lazy_gradient(f: Any, wrt: Any, numpy_args: tuple[Any, ...], dask_args: tuple[Any, ...]):
    want = adgen.grad(f, wrt=wrt)(*numpy_args)
    with lazily():
        got = adgen.grad(f, wrt=wrt)(*dask_args)
    parts = got if isinstance(got, tuple) else (got,)
    assert all(isinstance(p, da.Array) for p in parts), [type(p) for p in parts]
    assert_close(computed(got), want)
    return got


def test_logistic_regression_gradient_over_chunked_rows_is_lazy_and_exact() -> None:
    d = _data()
    yd = da.from_array(d["y"], chunks=500)
    _lazy_gradient(
        progs.logistic_loss, 0, (d["w"], d["X"], d["y"], 0.1), (d["w"], d["Xd"], yd, 0.1)
    )


def test_logistic_regression_with_every_argument_a_dask_array() -> None:
    d = _data()
    dask_args = (da.from_array(d["w"]), d["Xd"], da.from_array(d["y"], chunks=500), 0.1)
    g = _lazy_gradient(progs.logistic_loss, 0, (d["w"], d["X"], d["y"], 0.1), dask_args)
    assert g.shape == (D,) and g.dtype == np.float64


def test_mlp_gradient_with_max_subtracted_softmax_is_lazy_and_exact() -> None:
    d, rng = _data(), np.random.default_rng(1)
    params = (rng.normal(size=(D, H)), np.zeros(H), rng.normal(size=(H, K)), np.zeros(K))
    Yd = da.from_array(d["Y"], chunks=(500, K))
    _lazy_gradient(progs.mlp_loss, (0, 1, 2, 3), (*params, d["X"], d["Y"]), (*params, d["Xd"], Yd))


def test_gaussian_mixture_logsumexp_gradient_is_lazy_and_exact() -> None:
    d, rng = _data(), np.random.default_rng(2)
    means, log_weights = rng.normal(size=(K, D)), rng.normal(size=K)
    _lazy_gradient(
        progs.gmm_nll,
        (0, 1, 2),
        (means, log_weights, 0.3, d["X"]),
        (da.from_array(means), log_weights, 0.3, d["Xd"]),
    )


def test_gather_with_repeated_indices_adds_up_lazily() -> None:
    rng = np.random.default_rng(3)
    table, idx, weights = rng.normal(size=(50, D)), rng.integers(0, 50, 300), rng.normal(size=300)
    assert len(np.unique(idx)) < len(idx)  # repeated rows: their cotangents add up
    _lazy_gradient(
        progs.embedding_loss,
        0,
        (table, idx, weights),
        (da.from_array(table, chunks=(25, D)), idx, da.from_array(weights, chunks=100)),
    )


def test_fifty_step_time_loop_stays_lazy() -> None:
    rng = np.random.default_rng(4)
    x0, v0 = rng.normal(size=N), rng.normal(size=N)
    dask_args = (da.from_array(x0, chunks=500), da.from_array(v0, chunks=500), 2.0, 0.1)
    got = _lazy_gradient(progs.damped_oscillators, (0, 1, 2, 3), (x0, v0, 2.0, 0.1), dask_args)
    # a number's derivative computed from Dask arrays is a 0-d Dask array, not computed
    assert got[2].shape == () and isinstance(got[2], da.Array)


def test_jvp_and_vjp_of_a_program_on_dask_arrays() -> None:
    d = _data()
    yd = da.from_array(d["y"], chunks=500)
    t = np.ones(D)
    with lazily():
        out, tangent = adgen.jvp(
            progs.logistic_loss, (d["w"], d["Xd"], yd, 0.1), (t, None, None, 0.0)
        )
        value, pullback = adgen.vjp(progs.logistic_loss, d["w"], d["Xd"], yd, 0.1)
        cotangents = pullback(1.0)
    want_out, want_tangent = adgen.jvp(
        progs.logistic_loss, (d["w"], d["X"], d["y"], 0.1), (t, None, None, 0.0)
    )
    assert_close(computed((out, tangent, value)), (want_out, want_tangent, want_out))
    want = adgen.grad(progs.logistic_loss)(d["w"], d["X"], d["y"], 0.1)
    assert_close(computed(cotangents[0]), want)


def contracted_in_chunks(A: Any, v: Any) -> Any:
    h = np.tanh(np.matvec(A, v))
    return np.sum(h) + np.sum(np.vecmat(v, A) ** 2) + np.sum(np.vecdot(A, A, axis=0))


@pytest.mark.skipif(not hasattr(np, "matvec"), reason="np.matvec is NumPy >= 2.2's")
def test_vecdot_matvec_vecmat_over_a_core_axis_split_in_chunks() -> None:
    # Dask's gufuncs refuse a core axis split in chunks; the code adgen makes for Dask
    # arrays computes these contractions as products and sums (as the array API's
    # `xp.vecdot` on Dask does), in both modes
    rng = np.random.default_rng(7)
    A, v = rng.normal(size=(6, 6)), rng.normal(size=6)
    Ad, vd = da.from_array(A, chunks=2), da.from_array(v, chunks=2)
    _lazy_gradient(contracted_in_chunks, (0, 1), (A, v), (Ad, vd))
    want = adgen.jvp(contracted_in_chunks, (A, v), (v[:, None] * A, np.cos(v)))
    with lazily():
        got = adgen.jvp(contracted_in_chunks, (Ad, vd), (v[:, None] * Ad, np.cos(vd)))
    assert_close(computed(got), want)


def test_gradient_computed_on_a_local_distributed_cluster() -> None:
    distributed = pytest.importorskip("distributed")
    d = _data()
    yd = da.from_array(d["y"], chunks=500)
    with lazily():
        g = adgen.grad(progs.logistic_loss)(d["w"], d["Xd"], yd, 0.1)
    want = adgen.grad(progs.logistic_loss)(d["w"], d["X"], d["y"], 0.1)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster, timeout="60s") as client,
    ):
        result = client.compute(g).result(timeout=120)
        assert len(client.scheduler_info()["workers"]) == 2
    assert isinstance(result, np.ndarray)
    assert_close(result, want)


# the real-code corpus (tests/real_code/, written in the styles of public examples, not for
# Dask): each program whose own function Dask runs lazily must have a lazy, exact gradient
CORPUS = AS_WRITTEN


def _on_dask(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return to_dask(value)
    if isinstance(value, dict):
        return {k: _on_dask(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_on_dask(v) for v in value)
    return value


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_program_gradient_on_dask_arrays(name: str) -> None:
    program = importlib.import_module(f"real_code.{name}")
    dask_args = tuple(_on_dask(a) for a in program.ARGS)
    try:
        with lazily():
            value = program.F(*dask_args)
    except Exception as exc:  # noqa: BLE001 - Dask cannot run the program itself lazily
        pytest.skip(f"Dask does not run {name} itself lazily: {type(exc).__name__}: {exc}"[:200])
    try:
        assert_close(computed(value), program.F(*program.ARGS))
    except AssertionError:  # np.linalg.cholesky of a Dask array is Dask's, the upper factor
        pytest.skip(f"Dask computes {name} differently from NumPy")
    want = adgen.grad(program.F)(*program.ARGS)
    with lazily():
        got = adgen.grad(program.F)(*dask_args)
    assert_close(_leaves(computed(got)), _leaves(want))


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in _leaves(value[k])]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _squared_activations(w, X):
    return np.sum(np.tanh(X @ w) ** 2)


def _activations(w, X):
    return np.tanh(X @ w)


@pytest.mark.parametrize(
    "operator",
    ["hvp", "hessian", "jacobian", "jacrev", "laplacian", "jacfwd of grad"],
)
def test_second_order_operators_on_dask_arrays_are_lazy_and_exact(operator: str) -> None:
    rng = np.random.default_rng(5)
    X, w = rng.normal(size=(40, 3)), rng.normal(size=3)
    Xd = da.from_array(X, chunks=(10, 3))
    f, extra = _squared_activations, ()
    if operator == "hvp":
        op, extra = adgen.hvp(f), (np.ones(3),)
    elif operator == "hessian":
        op = adgen.hessian(f)
    elif operator == "jacobian":
        op = adgen.jacobian(_activations)
    elif operator == "jacrev":
        op = adgen.jacrev(_activations)
    elif operator == "laplacian":
        op = adgen.laplacian(f)
    else:
        op = adgen.jacfwd(adgen.grad(f))
    want = op(w, X, *extra)
    with lazily():
        got = op(w, Xd, *extra)
    assert isinstance(got, da.Array)
    assert_close(computed(got), want)
