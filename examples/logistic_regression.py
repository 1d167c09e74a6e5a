"""Logistic regression trained by gradient descent with adgen.grad.

Run: python examples/logistic_regression.py
"""

import numpy as np

import adgen


def loss(w, b, X, y):
    """Mean binary cross-entropy of a linear classifier (numerically stable form)."""
    z = X @ w + b
    # log(1 + exp(-|z|)) + max(z, 0) - y z  ==  log(1 + exp(z)) - y z
    return np.mean(np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0.0) - y * z)


def main() -> None:
    rng = np.random.default_rng(0)
    n, d = 500, 3
    true_w = np.array([2.0, -3.0, 0.5])
    X = rng.standard_normal((n, d))
    y = (X @ true_w + 0.3 + 0.5 * rng.standard_normal(n) > 0).astype(float)

    value_and_grad = adgen.value_and_grad(loss, wrt=("w", "b"))
    w, b = np.zeros(d), 0.0
    for step in range(301):
        value, (dw, db) = value_and_grad(w, b, X, y)
        w -= 0.5 * dw
        b -= 0.5 * db
        if step % 100 == 0:
            print(f"step {step:3d}  loss {value:.4f}")

    accuracy = np.mean((X @ w + b > 0) == (y > 0.5))
    print(f"learned w = {np.round(w, 2)}, b = {b:.2f}; training accuracy {accuracy:.1%}")
    print()
    print("The gradient adgen generated and ran (specialised for these arguments' shapes):")
    print(adgen.source(loss, wrt=("w", "b"), args=(w, b, X, y)))


if __name__ == "__main__":
    main()
