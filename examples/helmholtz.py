"""The gradient of the Helmholtz free energy, the AD survey's benchmark (Baydin et al., Fig. 5).

The free energy of a mixed fluid (Peng-Robinson equation of state), after Griewank::

    f(x) = R T sum_i x_i log(x_i / (1 - b.x))
           - x.A.x / (sqrt(8) b.x) * log((1 + (1 + sqrt 2) b.x) / (1 + (1 - sqrt 2) b.x))

``x`` holds the mole numbers of n species, ``b`` and the symmetric ``A`` are constants. adgen's
reverse-mode gradient is checked against one derived by hand, then the survey's point is
shown: reverse mode gets all n partial derivatives for the price of a few evaluations of f,
forward mode needs one pass per variable (``adgen.jacfwd``).

Run:  python examples/helmholtz.py
"""

import math
import time

import numpy as np

import adgen

R, T = 8.314, 300.0
SQRT2 = math.sqrt(2.0)


def helmholtz(x, b, A):
    bx = np.dot(b, x)
    xax = np.dot(x, A @ x)
    mixing = R * T * np.sum(x * np.log(x / (1.0 - bx)))
    ratio = (1.0 + (1.0 + SQRT2) * bx) / (1.0 + (1.0 - SQRT2) * bx)
    return mixing - xax / (math.sqrt(8.0) * bx) * np.log(ratio)


def helmholtz_gradient_by_hand(x, b, A):
    """d f / d x, written out: the chain rule through b.x and x.A.x (A is symmetric)."""
    bx = b @ x
    ax = A @ x
    xax = x @ ax
    c1, c2 = 1.0 + SQRT2, 1.0 - SQRT2
    p1, p2 = 1.0 + c1 * bx, 1.0 + c2 * bx
    log_ratio = math.log(p1 / p2)
    coef = log_ratio / (math.sqrt(8.0) * bx)  # f = mixing - xax * coef
    dcoef_dbx = ((c1 / p1 - c2 / p2) / bx - log_ratio / bx**2) / math.sqrt(8.0)
    dmixing = R * T * (np.log(x / (1.0 - bx)) + 1.0 + np.sum(x) / (1.0 - bx) * b)
    return dmixing - 2.0 * coef * ax - xax * dcoef_dbx * b


def problem(n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 1.0, n) / n
    b = rng.uniform(0.1, 1.0, n)
    m = rng.uniform(0.0, 1.0, (n, n))
    return x, b, 0.5 * (m + m.T)


def best_time(fn, *args, repeat=5):
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    x, b, A = problem(50)
    gradient = adgen.grad(helmholtz)(x, b, A)
    by_hand = helmholtz_gradient_by_hand(x, b, A)
    error = np.max(np.abs(gradient - by_hand) / np.abs(by_hand))
    assert error < 1e-10, error
    print(f"n = 50: f(x) = {helmholtz(x, b, A):.6f}")
    print("adgen's gradient matches the hand-written gradient", end=" ")
    print(f"(max relative difference {error:.1e})")

    print("\ntime of the gradient / time of f(x):")
    print("    n   reverse (adgen.grad)   forward (adgen.jacfwd, n passes)")
    reverse, forward = adgen.grad(helmholtz), adgen.jacfwd(helmholtz)
    for n in (10, 100, 400):
        x, b, A = problem(n)
        np.testing.assert_allclose(forward(x, b, A), reverse(x, b, A), rtol=1e-9)
        t_f = best_time(helmholtz, x, b, A)
        t_rev = best_time(reverse, x, b, A)
        t_fwd = best_time(forward, x, b, A, repeat=2)
        print(f"{n:5d}   {t_rev / t_f:20.1f}   {t_fwd / t_f:32.1f}")
    print("(reverse mode stays a small multiple of f as n grows; forward mode grows with n)")


if __name__ == "__main__":
    main()
