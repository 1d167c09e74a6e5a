"""ADBench's LSTM objective (Srajer et al. 2018) with two layers, w.r.t. the parameters.

``main_params`` is ``(2 l, 4 b)``: per layer a weight row and a bias row, each
the four gates (forget, input, output, change) side by side; ``extra_params``
is ``(3, b)``: input scale, output scale, output bias; ``state`` is ``(2 l, b)``
(hidden, cell per layer); ``sequence`` is ``(c, b)``. As in ADBench the gates
are elementwise (``concat(x, h, x, h) * w + bias``) and the log-normaliser is
``log(sum(exp(y)) + 2)``. The primal is written naturally, with a ``for`` loop
over time (the two layers are written out, since calling helpers is not in
adgen's subset yet).
"""

from __future__ import annotations

import numpy as np

from .base import Args, Problem

SIZES: dict[str, tuple[int, int]] = {  # (sequence length c, width b)
    "tiny": (4, 3),
    "c32_b64": (32, 64),
    "c1024_b64": (1024, 64),
}


def lstm(main_params, extra_params, state, sequence):
    """The ADBench LSTM objective for two layers."""
    b = sequence.shape[1]
    w0 = main_params[0]
    u0 = main_params[1]
    w1 = main_params[2]
    u1 = main_params[3]
    h0 = state[0]
    c0 = state[1]
    h1 = state[2]
    c1 = state[3]
    x = sequence[0]
    total = 0.0
    for t in range(sequence.shape[0] - 1):
        inp = x * extra_params[0]
        forget0 = 1.0 / (1.0 + np.exp(-(inp * w0[:b] + u0[:b])))
        ingate0 = 1.0 / (1.0 + np.exp(-(h0 * w0[b : 2 * b] + u0[b : 2 * b])))
        outgate0 = 1.0 / (1.0 + np.exp(-(inp * w0[2 * b : 3 * b] + u0[2 * b : 3 * b])))
        change0 = np.tanh(h0 * w0[3 * b :] + u0[3 * b :])
        c0 = c0 * forget0 + ingate0 * change0
        h0 = outgate0 * np.tanh(c0)
        forget1 = 1.0 / (1.0 + np.exp(-(h0 * w1[:b] + u1[:b])))
        ingate1 = 1.0 / (1.0 + np.exp(-(h1 * w1[b : 2 * b] + u1[b : 2 * b])))
        outgate1 = 1.0 / (1.0 + np.exp(-(h0 * w1[2 * b : 3 * b] + u1[2 * b : 3 * b])))
        change1 = np.tanh(h1 * w1[3 * b :] + u1[3 * b :])
        c1 = c1 * forget1 + ingate1 * change1
        h1 = outgate1 * np.tanh(c1)
        ypred = h1 * extra_params[1] + extra_params[2]
        ynorm = ypred - np.log(np.sum(np.exp(ypred)) + 2.0)
        ygold = sequence[t + 1]
        total = total + np.sum(ygold * ynorm)
        x = ygold
    return -total / ((sequence.shape[0] - 1) * b)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def lstm_hand(main_params, extra_params, state, sequence):
    """Value and gradient w.r.t. (main_params, extra_params): backpropagation through time."""
    c, b = sequence.shape
    count = (c - 1) * b
    layers = main_params.shape[0] // 2
    e0, e1, e2 = extra_params
    h = [state[2 * i] for i in range(layers)]
    cell = [state[2 * i + 1] for i in range(layers)]
    tape = []  # per step: input, per layer (inp, h_prev, c_prev, f, i, o, g, tanh c), probs
    total = 0.0
    x = sequence[0]
    for t in range(c - 1):
        inp = x * e0
        x_in = x
        steps = []
        for i in range(layers):
            w, u = main_params[2 * i], main_params[2 * i + 1]
            hp, cp = h[i], cell[i]
            gates = np.concatenate((inp, hp, inp, hp)) * w + u
            f = _sigmoid(gates[:b])
            ig = _sigmoid(gates[b : 2 * b])
            o = _sigmoid(gates[2 * b : 3 * b])
            g = np.tanh(gates[3 * b :])
            cell[i] = cp * f + ig * g
            tc = np.tanh(cell[i])
            h[i] = o * tc
            steps.append((inp, hp, cp, f, ig, o, g, tc))
            inp = h[i]
        ypred = inp * e1 + e2
        ey = np.exp(ypred)
        sy = ey.sum() + 2.0
        ygold = sequence[t + 1]
        total += float(ygold @ (ypred - np.log(sy)))
        tape.append((x_in, steps, ey / sy, ygold, inp))
        x = ygold
    value = -total / count

    g_main = np.zeros_like(main_params)
    g_e0 = np.zeros(b)
    g_e1 = np.zeros(b)
    g_e2 = np.zeros(b)
    dh = [np.zeros(b) for _ in range(layers)]
    dc = [np.zeros(b) for _ in range(layers)]
    scale = -1.0 / count
    for x_in, steps, probs, ygold, hout in reversed(tape):
        dynorm = scale * ygold
        dypred = dynorm - dynorm.sum() * probs
        g_e1 += dypred * hout
        g_e2 += dypred
        dinp = dypred * e1
        for i in reversed(range(layers)):
            inp, hp, cp, f, ig, o, g, tc = steps[i]
            dhi = dh[i] + dinp
            dci = dc[i] + dhi * o * (1.0 - tc * tc)
            dgates = np.concatenate(
                (
                    dci * cp * f * (1.0 - f),
                    dci * g * ig * (1.0 - ig),
                    dhi * tc * o * (1.0 - o),
                    dci * ig * (1.0 - g * g),
                )
            )
            w = main_params[2 * i]
            g_main[2 * i] += dgates * np.concatenate((inp, hp, inp, hp))
            g_main[2 * i + 1] += dgates
            dw = dgates * w
            dinp = dw[:b] + dw[2 * b : 3 * b]
            dh[i] = dw[b : 2 * b] + dw[3 * b :]
            dc[i] = dci * f
        g_e0 += dinp * x_in
    return value, (g_main, np.stack((g_e0, g_e1, g_e2)))


def inputs(size: str, seed: int = 0) -> Args:
    """Random parameters, state and sequence (ADBench draws them uniformly too)."""
    c, b = SIZES[size]
    rng = np.random.default_rng(seed)
    main_params = rng.uniform(-0.5, 0.5, (4, 4 * b))
    extra_params = rng.uniform(-0.5, 0.5, (3, b))
    state = rng.uniform(-0.5, 0.5, (4, b))
    sequence = rng.uniform(0.0, 1.0, (c, b))
    return main_params, extra_params, state, sequence


PROBLEM = Problem(
    name="lstm",
    description="ADBench LSTM objective (2 layers) w.r.t. main and extra parameters",
    primal=lstm,
    hand=lstm_hand,
    wrt=(0, 1),
    inputs=inputs,
    sizes=("c32_b64", "c1024_b64"),
    quick="c32_b64",
    uses_loops=True,
)
