"""A character-level LSTM's loss over a sequence, states kept in lists the way tutorials do."""

import numpy as np


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def objective(params, inputs, targets):
    Wx, Wh, b, Wy, by = params
    n_hidden = Wh.shape[0]
    hs = [np.zeros(n_hidden)]
    cs = [np.zeros(n_hidden)]
    loss = 0.0
    for t in range(len(inputs)):
        z = inputs[t] @ Wx + hs[-1] @ Wh + b
        i = sigmoid(z[:n_hidden])
        f = sigmoid(z[n_hidden : 2 * n_hidden])
        o = sigmoid(z[2 * n_hidden : 3 * n_hidden])
        g = np.tanh(z[3 * n_hidden :])
        c = f * cs[-1] + i * g
        h = o * np.tanh(c)
        cs.append(c)
        hs = hs + [h]
        logits = h @ Wy + by
        logp = logits - np.log(np.sum(np.exp(logits)))
        loss = loss - np.sum(logp * targets[t])
    return loss / len(inputs)


def make_args(seed=0, steps=5, vocab=4, hidden=3):
    rng = np.random.default_rng(seed)
    params = (
        rng.normal(size=(vocab, 4 * hidden)) * 0.5,
        rng.normal(size=(hidden, 4 * hidden)) * 0.5,
        np.zeros(4 * hidden),
        rng.normal(size=(hidden, vocab)) * 0.5,
        np.zeros(vocab),
    )
    chars = rng.integers(0, vocab, size=steps + 1)
    onehot = np.eye(vocab)[chars]
    return (params, onehot[:-1], onehot[1:])
