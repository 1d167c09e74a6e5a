"""np.linalg.eig and eigvals of general matrices: the eigenvectors' tangent is that of NumPy's
own normalization, the results' dtypes are NumPy's (real for real eigenvalues), repeated
eigenvalues are refused by name, and programs that use them (a stability penalty, a Markov
chain's spectral gap and stationary distribution) check at first and second order."""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def eig_both(a):
    return np.linalg.eig(a)


def eigenvalues(a):
    return np.linalg.eigvals(a)


def jacobian(theta):
    """The Jacobian of two coupled damped oscillators at their equilibrium."""
    k, c, g = theta[0], theta[1], theta[2]
    return np.array(
        [
            [0.0, 1.0, 0.0, 0.0],
            [-k, -c, g, 0.0],
            [0.0, 0.0, 0.0, 1.0],
            [g, 0.0, -k - 0.5, -0.5 * c],
        ]
    )


def stability_penalty(theta, margin):
    """The spectral abscissa max Re(lambda), softly penalised above -margin."""
    alpha = np.max(np.real(np.linalg.eigvals(jacobian(theta))))
    return np.logaddexp(0.0, 10.0 * (alpha + margin)) / 10.0


def transition(logits):
    e = np.exp(logits - np.max(logits, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def markov_gap(logits):
    """1 - |lambda_2| of a non-symmetric row-stochastic matrix."""
    mods = np.sort(np.abs(np.linalg.eigvals(transition(logits))))
    return 1.0 - mods[-2]


def stationary_mean(logits):
    """The mean state under the stationary distribution (the left eigenvector of 1)."""
    w, v = np.linalg.eig(transition(logits).T)
    pi = np.real(v[:, np.argmax(np.real(w))])
    pi = pi / np.sum(pi)
    return np.sum(pi * np.arange(pi.shape[0]))


def exp_by_eig(a, t):
    """exp(t a) through the eigendecomposition (its eigenvectors' scale cancels)."""
    w, v = np.linalg.eig(a)
    return np.sum(np.real(v @ (np.exp(t * w)[..., :, None] * np.linalg.inv(v))) ** 2)


def _matrices():
    rng = np.random.default_rng(7)
    sym = rng.standard_normal((3, 3))
    return {
        "real, complex pair": np.array([[0.5, 2.0, 0.1], [-1.5, 0.2, 0.3], [0.4, -0.2, -1.0]]),
        "real, real eigenvalues": sym + sym.T + 0.1 * rng.standard_normal((3, 3)),
        "complex": rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)),
        "stack": rng.standard_normal((2, 4, 4)),
    }


@pytest.mark.parametrize("which", list(_matrices()))
def test_tangents_are_those_of_numpys_own_results(which):
    a = _matrices()[which]
    t = np.random.default_rng(1).standard_normal(a.shape)
    if np.iscomplexobj(a):
        t = t + 1j * np.random.default_rng(2).standard_normal(a.shape)
    (w, v), (dw, dv) = adgen.jvp(eig_both, (a,), (t,))
    h = 1e-6
    plus, minus = np.linalg.eig(a + h * t), np.linalg.eig(a - h * t)
    # the eigenvectors themselves, not only phase-invariant functions of them
    assert np.allclose(dw, (plus[0] - minus[0]) / (2 * h), atol=1e-6)
    assert np.allclose(dv, (plus[1] - minus[1]) / (2 * h), atol=1e-6)
    assert dw.dtype == w.dtype and dv.dtype == v.dtype  # NumPy's: real for real eigenvalues
    # NumPy's choice: real results for real eigenvalues (NumPy 2.5 returns complex ones)
    assert np.iscomplexobj(w) == np.iscomplexobj(np.linalg.eig(a)[0])
    _, dw2 = adgen.jvp(eigenvalues, (a,), (t,))
    assert np.allclose(dw2, dw) and dw2.dtype == w.dtype
    check_grads(eig_both, a)
    check_grads(eigenvalues, a)


def test_cotangent_of_a_real_matrix_is_real():
    a = _matrices()["real, complex pair"]
    w, pullback = adgen.vjp(eigenvalues, a)
    assert np.iscomplexobj(w)
    (g,) = pullback(np.ones_like(w) * (1.0 + 2.0j))
    assert g.dtype == np.float64


@pytest.mark.parametrize("fn", [eig_both, eigenvalues])
def test_repeated_eigenvalues_are_refused(fn):
    a = np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])  # defective: 2 twice
    name = "np.linalg.eig" if fn is eig_both else "np.linalg.eigvals"
    with pytest.raises(adgen.DerivativeError, match=f"{name} needs distinct values"):
        adgen.jvp(fn, (a,), (np.ones((3, 3)),))
    out, pullback = adgen.vjp(fn, a)
    with pytest.raises(adgen.DerivativeError, match=f"{name} needs distinct values"):
        pullback(tuple(np.ones_like(o) for o in out) if fn is eig_both else np.ones_like(out))


@pytest.mark.parametrize(
    "fn, args",
    [
        (stability_penalty, (np.array([1.3, 0.4, 0.3]), 0.1)),
        (markov_gap, (np.random.default_rng(0).standard_normal((5, 5)),)),
        (stationary_mean, (np.random.default_rng(0).standard_normal((5, 5)),)),
        (exp_by_eig, (np.random.default_rng(3).standard_normal((4, 4)), 0.3)),
    ],
)
def test_programs_first_and_second_order(fn, args):
    check_grads(fn, *args, wrt=[0])
    check_grads(adgen.grad(fn, wrt=0), *args, wrt=[0])
