"""The loop problems of ``benchmarks/loops.py`` (issue 37) written for ``jax.jit`` as a JAX
user would: each time loop a ``jax.lax.scan`` over a carried state (unrolled, the 1,000-step
RK4 and the 300-step spring chain compile for minutes), the heat equation's in-place slice
write as ``u.at[1:-1].set(...)``, float64 on the CPU. The leapfrog orbit is also given as
written (a Python loop, unrolled by tracing: ``orbit_unrolled``).

:func:`value_and_grad` returns the jitted value and gradient w.r.t. the same arguments as
adgen's, loop counts static; :data:`FUNCTIONS` names each form as its problem's function.
The arithmetic is the same as ``benchmarks/problems/loops.py`` (and ``lstm.py``'s);
``benchmarks/loops.py`` checks every gradient against adgen's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402

from .jax_impl import lstm_scan  # noqa: E402


def _half_kick(x, y, vx, vy, dt):  # noqa: ANN001, ANN202
    r = jnp.sqrt(x * x + y * y)
    return vx - 0.5 * dt * x / (r * r * r), vy - 0.5 * dt * y / (r * r * r)


def _orbit_step(dt):  # noqa: ANN001, ANN202
    def step(state, _):  # noqa: ANN001, ANN202
        x, y, vx, vy = state
        vx, vy = _half_kick(x, y, vx, vy, dt)
        x, y = x + dt * vx, y + dt * vy
        vx, vy = _half_kick(x, y, vx, vy, dt)
        return (x, y, vx, vy), None

    return step


def _orbit_energy(x, y, vx, vy):  # noqa: ANN001, ANN202
    return 0.5 * (vx * vx + vy * vy) - 1.0 / jnp.sqrt(x * x + y * y)


def orbit(x, y, vx, vy, dt, steps):  # noqa: ANN001, ANN201
    (x, y, vx, vy), _ = jax.lax.scan(_orbit_step(dt), (x, y, vx, vy), None, length=steps)
    return _orbit_energy(x, y, vx, vy)


def orbit_unrolled(x, y, vx, vy, dt, steps):  # noqa: ANN001, ANN201
    step = _orbit_step(dt)
    state = (x, y, vx, vy)
    for _ in range(steps):
        state, _ = step(state, None)
    return _orbit_energy(*state)


def lorenz(sigma, rho, beta, x, y, z, dt, steps):  # noqa: ANN001, ANN201
    def field(x, y, z):  # noqa: ANN001, ANN202
        return sigma * (y - x), x * (rho - z) - y, x * y - beta * z

    def step(state, _):  # noqa: ANN001, ANN202
        x, y, z = state
        k1 = field(x, y, z)
        k2 = field(x + 0.5 * dt * k1[0], y + 0.5 * dt * k1[1], z + 0.5 * dt * k1[2])
        k3 = field(x + 0.5 * dt * k2[0], y + 0.5 * dt * k2[1], z + 0.5 * dt * k2[2])
        k4 = field(x + dt * k3[0], y + dt * k3[1], z + dt * k3[2])
        new = tuple(
            v + dt / 6.0 * (a + 2.0 * b + 2.0 * c + d)
            for v, a, b, c, d in zip((x, y, z), k1, k2, k3, k4)
        )
        return new, None

    (x, y, z), _ = jax.lax.scan(step, (x, y, z), None, length=steps)
    return x * x + y + z


def spring(x0, v0, k, steps, dt, damping):  # noqa: ANN001, ANN201
    def step(state, _):  # noqa: ANN001, ANN202
        x, v = state
        ext = x[1:] - x[:-1] - 1.0
        tension = k * ext + 0.1 * ext * ext * ext
        force = jnp.zeros_like(x)
        force = force.at[1:].add(-tension)
        force = force.at[:-1].add(tension)
        force = force - damping * v
        return (x + dt * v, v + dt * force), None

    (x, v), _ = jax.lax.scan(step, (x0, v0), None, length=steps)
    return jnp.sum(x * x) + 0.5 * jnp.sum(v * v)


def rnn(W, U, b, xs, h0):  # noqa: ANN001, ANN201, N803
    def step(h, x):  # noqa: ANN001, ANN202
        h = jnp.tanh(W @ h + U @ x + b)
        return h, jnp.sum(h * h)

    _, terms = jax.lax.scan(step, h0, xs)
    return jnp.sum(terms)


def heat(u0, alpha, steps):  # noqa: ANN001, ANN201
    def step(u, _):  # noqa: ANN001, ANN202
        return u.at[1:-1].set(u[1:-1] + alpha * (u[2:] - 2.0 * u[1:-1] + u[:-2])), None

    u, _ = jax.lax.scan(step, u0, None, length=steps)
    return jnp.sum(u * u)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "orbit": orbit,
    "orbit_unrolled": orbit_unrolled,
    "lorenz": lorenz,
    "spring": spring,
    "rnn": rnn,
    "heat": heat,
    "lstm": lstm_scan,
}


def value_and_grad(name: str, args: tuple[Any, ...], wrt: tuple[int, ...]) -> Callable[[], Any]:
    """A call of the jitted value and gradient of problem ``name`` at ``args`` (a thunk: the
    arguments are JAX's arrays already), compiled by a first call."""
    fn = FUNCTIONS[name]
    static = tuple(i for i, a in enumerate(args) if isinstance(a, int) and i not in wrt)
    jitted = jax.jit(jax.value_and_grad(fn, argnums=wrt), static_argnums=static)
    inputs = tuple(
        a if i in static else jnp.asarray(a, dtype=jnp.float64) for i, a in enumerate(args)
    )

    def call() -> Any:
        out = jitted(*inputs)
        jax.block_until_ready(out)
        return out

    call()  # compile
    return call
