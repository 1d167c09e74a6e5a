"""Train a small MLP on synthetic data with a dict of parameters and adgen.value_and_grad.

Run: python examples/mlp_training.py
"""

import numpy as np

import adgen


def loss(params, X, y):
    """Softmax cross-entropy of a 2-layer tanh network; also returns the accuracy as aux."""
    h = np.tanh(X @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    nll = -np.mean(np.sum(log_probs * y, axis=1))
    accuracy = np.mean(np.argmax(logits, axis=1) == np.argmax(y, axis=1))
    return nll, accuracy


def main() -> None:
    rng = np.random.default_rng(0)
    n, d, hidden, classes = 300, 2, 16, 3
    centers = rng.standard_normal((classes, d)) * 2.0
    labels = rng.integers(0, classes, n)
    X = centers[labels] + 0.6 * rng.standard_normal((n, d))
    y = np.eye(classes)[labels]
    params = {
        "W1": rng.standard_normal((d, hidden)) * 0.5,
        "b1": np.zeros(hidden),
        "W2": rng.standard_normal((hidden, classes)) * 0.5,
        "b2": np.zeros(classes),
    }
    step = adgen.value_and_grad(loss, has_aux=True)
    for epoch in range(201):
        (value, accuracy), grads = step(params, X, y)
        params = {k: params[k] - 0.5 * grads[k] for k in params}
        if epoch % 50 == 0:
            print(f"epoch {epoch:3d}  loss {value:.4f}  accuracy {accuracy:.1%}")


if __name__ == "__main__":
    main()
