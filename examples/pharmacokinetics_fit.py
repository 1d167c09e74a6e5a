"""Fit a pharmacokinetic model -- an ODE solved by SciPy -- to measured concentrations.

A drug given orally moves from the gut into the blood (rate ``ka``) and is eliminated from
the blood (rate ``ke``); the measured concentration is the amount in the blood over the
volume ``V``. The loss integrates the model with ``scipy.integrate.solve_ivp`` exactly as
one would write it without adgen; ``adgen.grad(loss)`` differentiates through the solver
(the adjoint method, with adgen's own derivative code of ``rhs``) and SciPy's optimiser uses
it as ``jac=``.

Run: python examples/pharmacokinetics_fit.py
"""

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import minimize

import adgen

DOSE = 100.0  # mg
hours = np.array([0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 24.0])


def concentrations(log_params):
    ka, ke, volume = np.exp(log_params)  # rates in 1/h, volume in L (fitted on a log scale)

    def rhs(t, amounts):
        gut, blood = amounts[0], amounts[1]
        return np.array([-ka * gut, ka * gut - ke * blood])

    sol = solve_ivp(rhs, (0.0, 24.0), np.array([DOSE, 0.0]), t_eval=hours, rtol=1e-8, atol=1e-8)
    return sol.y[1] / volume


true = np.log([1.2, 0.15, 30.0])
rng = np.random.default_rng(3)
measured = concentrations(true) * (1.0 + 0.03 * rng.standard_normal(hours.size))


def loss(log_params):
    return np.sum((np.log(concentrations(log_params)) - np.log(measured)) ** 2)


start = np.log([0.5, 0.3, 20.0])
gradient = adgen.grad(loss)

# the gradient against central finite differences
h = 1e-6
fd = np.array([(loss(start + h * e) - loss(start - h * e)) / (2 * h) for e in np.eye(3)])
print("gradient matches finite differences:", bool(np.allclose(gradient(start), fd, rtol=1e-4)))

fit = minimize(loss, start, jac=gradient, method="BFGS")
ka, ke, volume = np.exp(fit.x)
print(f"fitted ka = {ka:.2f} 1/h, ke = {ke:.3f} 1/h, V = {volume:.1f} L ({fit.nit} iterations)")
