"""Fit an equivalent circuit to impedance spectroscopy data: complex arithmetic, real
parameters, gradients from adgen.

The cell is a resistor R0 in series with a resistor R1 parallel to a capacitor C1
(a Randles-like circuit without diffusion): Z(w) = R0 + R1 / (1 + 1j * w * R1 * C1).
The measured spectrum is noisy; the loss is the mean squared distance in the complex
plane, weighted by 1/|Z| as electrochemists do. Parameters are fitted on a log scale
(they span orders of magnitude) by gradient descent with momentum.

Run: python examples/impedance_spectroscopy.py
"""

import numpy as np

import adgen


def impedance(log_params, omega):
    R0, R1, C1 = np.exp(log_params)
    return R0 + R1 / (1.0 + 1j * omega * R1 * C1)


def loss(log_params, omega, measured):
    residual = impedance(log_params, omega) - measured
    weight = 1.0 / np.abs(measured)
    return np.mean(weight * np.abs(residual) ** 2)


def main():
    rng = np.random.default_rng(0)
    omega = np.logspace(-1, 4, 40)
    true = np.log(np.array([12.0, 85.0, 2.5e-3]))
    clean = impedance(true, omega)
    noise = 0.01 * np.abs(clean) * (rng.standard_normal(40) + 1j * rng.standard_normal(40))
    measured = clean + noise

    value_and_grad = adgen.value_and_grad(loss)
    params = np.log(np.array([5.0, 30.0, 1e-2]))
    velocity = np.zeros(3)
    for step in range(3000):
        value, g = value_and_grad(params, omega, measured)
        velocity = 0.9 * velocity - 0.02 * g
        params = params + velocity
        if step % 1000 == 0:
            print(f"step {step:4d}  loss {value:.5f}")
    R0, R1, C1 = np.exp(params)
    print(f"fitted R0 = {R0:.2f} ohm, R1 = {R1:.2f} ohm, C1 = {C1 * 1e3:.3f} mF")
    print("true   R0 = 12.00 ohm, R1 = 85.00 ohm, C1 = 2.500 mF")
    # the gradient adgen computes through the complex intermediates, against differences
    eps = 1e-6
    numeric = [
        (loss(params + eps * e, omega, measured) - loss(params - eps * e, omega, measured))
        / (2 * eps)
        for e in np.eye(3)
    ]
    agree = np.allclose(value_and_grad(params, omega, measured)[1], numeric, atol=1e-6)
    print(f"gradient matches finite differences: {agree}")


if __name__ == "__main__":
    main()
