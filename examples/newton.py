"""Newton's method with the exact Hessian from adgen (the AD survey's section 4.1).

Newton's update is  w <- w - H(w)^-1 grad f(w).  adgen.hessian gives H exactly: forward mode
over the reverse-mode code adgen generated for the gradient. Here it minimises the
Rosenbrock function (minimum at (1, 1)), written with a loop so that the derivative code
goes through control flow, and compares with gradient descent.

Run:  python examples/newton.py
"""

import numpy as np

import adgen


def rosenbrock(w):
    """sum_i 100 (w[i+1] - w[i]^2)^2 + (1 - w[i])^2"""
    total = 0.0
    for i in range(len(w) - 1):
        total = total + 100.0 * (w[i + 1] - w[i] ** 2) ** 2 + (1.0 - w[i]) ** 2
    return total


def newton(f, w, steps=50, tol=1e-10):
    gradient, hessian = adgen.grad(f), adgen.hessian(f)
    for step in range(1, steps + 1):
        g = gradient(w)
        if np.linalg.norm(g) < tol:
            return w, step - 1
        w = w - np.linalg.solve(hessian(w), g)
    return w, steps


def gradient_descent(f, w, rate=1e-3, steps=3_000, tol=1e-6):
    gradient = adgen.grad(f)
    for step in range(1, steps + 1):
        g = gradient(w)
        if np.linalg.norm(g) < tol:
            return w, step - 1
        w = w - rate * g
    return w, steps


def main():
    start = np.array([-1.2, 1.0, -0.5])
    w, n = newton(rosenbrock, start)
    print(f"Newton:           {n:5d} steps, minimum at {np.round(w, 8)}, f = {rosenbrock(w):.2e}")
    w_gd, n_gd = gradient_descent(rosenbrock, start)
    print(f"gradient descent: {n_gd:5d} steps, reached   {np.round(w_gd, 4)}")
    print("Hessian at the minimum (exact: [[802, -400, 0], [-400, 1002, -400], [0, -400, 200]]):")
    print(np.round(adgen.hessian(rosenbrock)(np.ones(3)), 6))
    v = np.array([1.0, 0.0, 0.0])
    print("H v without forming H (adgen.hvp):", np.round(adgen.hvp(rosenbrock)(np.ones(3), v), 6))
    print("The generated Hessian-vector code (forward mode over the gradient's code) starts:")
    print("\n".join(adgen.source(adgen.grad(rosenbrock), "forward").splitlines()[:8]))


if __name__ == "__main__":
    main()
