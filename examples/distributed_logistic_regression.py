"""Logistic regression on a chunked Dask array, its gradient computed on a local cluster.

The loss is plain NumPy code. adgen differentiates it once; called with Dask arrays, the
gradient it returns is itself a Dask array: nothing is computed until ``dask.compute`` (here on
a ``dask.distributed`` cluster of worker processes on this machine; point ``Client`` at a real
cluster's scheduler to use one). The design matrix is generated chunk by chunk by Dask and is
never held in memory whole.

Run: python -m pip install -e '.[dask]' && python examples/distributed_logistic_regression.py
     (``--rows 10000000`` for ten million rows; the default is 200,000)
"""

import argparse
import logging
import time

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import adgen


def loss(w, b, X, y, lam):
    """Mean logistic loss of a linear classifier, labels y in {-1, 1}, with an L2 penalty."""
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, -y * z)) + 0.5 * lam * np.sum(w * w)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--chunk", type=int, default=50_000)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    d = 20
    true_w = np.linspace(-2.0, 2.0, d)
    X = da.random.default_rng(0).standard_normal((args.rows, d), chunks=(args.chunk, d))
    noise = da.random.default_rng(1).standard_normal(args.rows, chunks=args.chunk)
    y = da.sign(X @ true_w + 0.5 + noise)
    grad = adgen.value_and_grad(loss, wrt=("w", "b"))

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=logging.ERROR
        ) as cluster,
        Client(cluster),
    ):
        X, y = dask.persist(X, y)  # the data stays on the workers
        w, b = np.zeros(d), 0.0
        start = time.perf_counter()
        for step in range(args.steps):
            value, (dw, db) = grad(w, b, X, y, 1e-4)  # lazy: a graph, nothing computed yet
            value, dw, db = dask.compute(value, dw, db)  # computed by the cluster
            w, b = w - 2.0 * dw, b - 2.0 * float(db)
            if step % 10 == 0 or step == args.steps - 1:
                print(f"step {step:3d}  loss {float(value):.4f}")
        elapsed = time.perf_counter() - start
        accuracy = da.mean((X @ w + b > 0) == (y > 0)).compute()
        Xs, ys = dask.compute(X[:1000], y[:1000])
    print(f"{args.rows:,} rows x {d} features, {args.steps} gradient steps in {elapsed:.1f} s")
    print(f"training accuracy {accuracy:.1%}")
    # the same function's gradient on NumPy arrays agrees with the one computed by Dask
    on_numpy = adgen.grad(loss)(w, b, Xs, ys, 1e-4)
    on_dask = dask.compute(adgen.grad(loss)(w, b, da.from_array(Xs, chunks=250), ys, 1e-4))[0]
    print(f"NumPy and Dask gradients agree: {np.allclose(on_numpy, on_dask, rtol=1e-10)}")


if __name__ == "__main__":
    main()
