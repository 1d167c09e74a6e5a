"""JAX (float64, CPU): the problem's own source with ``jax.numpy`` as ``np``, with and without jit.

Python ``for`` loops are unrolled by tracing, as JAX does with plain Python code;
integer arguments (loop counts) are static under ``jit``. The LSTM's time loop
and the spring simulation's step loop are written with ``jax.lax.scan`` /
``jax.lax.fori_loop`` instead, as a JAX user would: unrolled, the 1023-step
LSTM compiles for minutes and the 300-step spring exhausts memory in XLA.
"""

from __future__ import annotations

from typing import Any

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402

from ..problems import Args, Problem  # noqa: E402
from . import Prepared, as_numpy, math_namespace, rebind  # noqa: E402


def _to_jax(value: Any) -> Any:
    if isinstance(value, bool | int):
        return value
    return jnp.asarray(value, dtype=jnp.float64)


def lstm_scan(main_params, extra_params, state, sequence):  # noqa: ANN001, ANN201
    """The ADBench LSTM objective (two layers) with the time loop as ``lax.scan``."""
    b = sequence.shape[1]
    w0, u0, w1, u1 = main_params[0], main_params[1], main_params[2], main_params[3]

    def cell(w, u, inp, h, c):  # noqa: ANN001, ANN202
        f = jax.nn.sigmoid(inp * w[:b] + u[:b])
        i = jax.nn.sigmoid(h * w[b : 2 * b] + u[b : 2 * b])
        o = jax.nn.sigmoid(inp * w[2 * b : 3 * b] + u[2 * b : 3 * b])
        g = jnp.tanh(h * w[3 * b :] + u[3 * b :])
        c = c * f + i * g
        return o * jnp.tanh(c), c

    def step(carry, xs):  # noqa: ANN001, ANN202
        h0, c0, h1, c1 = carry
        x, ygold = xs
        h0, c0 = cell(w0, u0, x * extra_params[0], h0, c0)
        h1, c1 = cell(w1, u1, h0, h1, c1)
        ypred = h1 * extra_params[1] + extra_params[2]
        ynorm = ypred - jnp.log(jnp.sum(jnp.exp(ypred)) + 2.0)
        return (h0, c0, h1, c1), jnp.sum(ygold * ynorm)

    init = (state[0], state[1], state[2], state[3])
    _, totals = jax.lax.scan(step, init, (sequence[:-1], sequence[1:]))
    return -jnp.sum(totals) / ((sequence.shape[0] - 1) * b)


def spring_loop(x0, v0, k, diff, rest, target, steps, dt, damping):  # noqa: ANN001, ANN201
    """The spring chain with the Euler steps as ``lax.fori_loop``."""

    def step(_, state):  # noqa: ANN001, ANN202
        x, v = state
        ext = diff @ x - rest
        force = -((k * ext + 0.1 * ext * ext * ext) @ diff) - damping * v
        return x + dt * v, v + dt * force

    x, v = jax.lax.fori_loop(0, steps, step, (x0, v0))
    return jnp.sum((x - target) ** 2) + 0.5 * jnp.sum(v * v)


LOOPS = {"lstm": lstm_scan, "spring": spring_loop}


def build(problem: Problem, args: Args, jit: bool = False) -> Prepared:
    """``jax.value_and_grad`` of the primal w.r.t. ``problem.wrt``, optionally jitted."""
    if problem.name in LOOPS:
        f = LOOPS[problem.name]
    else:
        f = rebind(problem.primal, np=jnp, math=math_namespace(jnp))
    vg = jax.value_and_grad(f, argnums=problem.wrt)
    if jit:
        static = tuple(i for i, a in enumerate(args) if isinstance(a, int))
        vg = jax.jit(vg, static_argnums=static)
    jargs = tuple(_to_jax(a) for a in args)

    def call() -> Any:
        return jax.block_until_ready(vg(*jargs))

    def result(raw: Any) -> tuple[float, Any]:
        value, grads = raw
        return float(value), tuple(as_numpy(g) for g in grads)

    return Prepared(call, result)


def build_jit(problem: Problem, args: Args) -> Prepared:
    """:func:`build` with ``jax.jit``."""
    return build(problem, args, jit=True)
