"""Complex numbers: adgen's convention (JAX's) checked against an independent reference, and
realistic programs with complex intermediates, in both modes and at second order.

The reference does not use adgen or its pairing: it treats a function of complex arrays as
a real function of their real and imaginary parts, takes its real Jacobian ``J`` by central
differences, and reads the convention off it -- a tangent ``v`` gives ``J [Re v, Im v]``
read back as a complex number, a cotangent ``c`` gives ``J^T [Re c, -Im c] = [wr, wi]``
read back as ``wr - i wi`` (``wr`` for a real argument). For a real-valued ``f`` this is
``df/dx - i df/dy``: JAX's gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import adgen
from adgen.errors import NonDifferentiableError, NonScalarOutputError
from adgen.testing import check_grads


def _flat(a: Any) -> tuple[np.ndarray, bool]:
    arr = np.asarray(a)
    return arr.ravel(), arr.dtype.kind == "c"


def _realified(f: Any, args: list[Any]) -> tuple[np.ndarray, list[tuple[int, int, bool]]]:
    """The real Jacobian of ``(Re f, Im f)`` in the real coordinates of the arguments."""
    coords, layout = [], []
    for a in args:
        flat, cplx = _flat(a)
        start = sum(c.size for c in coords)
        coords.append(np.concatenate([flat.real, flat.imag]) if cplx else flat.real.copy())
        layout.append((start, flat.size, cplx))
    x0 = np.concatenate(coords)

    def rebuild(x: np.ndarray) -> list[Any]:
        out = []
        for a, (start, n, cplx) in zip(args, layout, strict=True):
            part = x[start : start + n] + (1j * x[start + n : start + 2 * n] if cplx else 0)
            value = part.reshape(np.shape(a))
            out.append(value if np.ndim(a) else value.item())
        return out

    def real_f(x: np.ndarray) -> np.ndarray:
        y = np.asarray(f(*rebuild(x)), dtype=complex).ravel()
        return np.concatenate([y.real, y.imag])

    eps = 1e-6
    cols = []
    for k in range(x0.size):
        e = np.zeros_like(x0)
        e[k] = eps
        cols.append((real_f(x0 + e) - real_f(x0 - e)) / (2 * eps))
    return np.stack(cols, axis=1), layout


def reference_vjp(f: Any, args: list[Any], cotangent: Any) -> list[Any]:
    jac, layout = _realified(f, args)
    c = np.asarray(cotangent, dtype=complex).ravel()
    w = jac.T @ np.concatenate([c.real, -c.imag])
    out = []
    for a, (start, n, cplx) in zip(args, layout, strict=True):
        part = w[start : start + n] - (1j * w[start + n : start + 2 * n] if cplx else 0)
        out.append(part.reshape(np.shape(a)))
    return out


def reference_jvp(f: Any, args: list[Any], tangents: list[Any]) -> np.ndarray:
    jac, layout = _realified(f, args)
    v = []
    for t, (_, _, cplx) in zip(tangents, layout, strict=True):
        flat = np.asarray(t).ravel()
        v.append(np.concatenate([flat.real, flat.imag]) if cplx else flat.real)
    y = jac @ np.concatenate(v)
    half = y.size // 2
    return y[:half] + 1j * y[half:]


rng = np.random.default_rng(20261127)


def _c(*shape: int) -> Any:
    if not shape:
        return complex(rng.standard_normal(), rng.standard_normal())
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def f_modulus(z):
    return np.sum(np.abs(z) ** 2)


def f_mixed(x, z):
    w = x * np.exp(1j * x) + z * np.conj(z) * 0.5
    return np.sum(np.real(w) * np.imag(z) + np.angle(z) * x)


def f_holomorphic(z, w):
    return np.sin(z) * w**2 / (1.0 + z * z) + np.log(w) * np.exp(z)


def f_matrix(a, b):
    return a @ b.T + 2j * np.sum(a, axis=1, keepdims=True)


def f_complex_builtin(x, y):
    return abs(complex(x, y) ** 2 + 1j * x)


CASES = [
    ("modulus", f_modulus, lambda: [_c(4)]),
    ("mixed", f_mixed, lambda: [rng.standard_normal(3), _c(3)]),
    ("holomorphic", f_holomorphic, lambda: [_c(3), _c(3) + 2.0]),
    ("matrix", f_matrix, lambda: [_c(2, 3), _c(4, 3)]),
    ("builtin", f_complex_builtin, lambda: [0.7, -0.4]),
]


@pytest.mark.parametrize("name, f, make", CASES, ids=[c[0] for c in CASES])
def test_reverse_mode_is_the_reference_convention(name: str, f: Any, make: Any) -> None:
    args = make()
    out, pullback = adgen.vjp(f, *args)
    ct = _c(*np.shape(out)) if np.iscomplexobj(out) else rng.standard_normal(np.shape(out))
    if not np.ndim(out):
        ct = complex(ct) if np.iscomplexobj(out) else float(ct)
    got = pullback(ct)
    want = reference_vjp(f, args, ct)
    for g, w, a in zip(got, want, args, strict=True):
        assert np.iscomplexobj(g) == np.iscomplexobj(a)  # a real argument's cotangent is real
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, f, make", CASES, ids=[c[0] for c in CASES])
def test_forward_mode_is_the_reference_convention(name: str, f: Any, make: Any) -> None:
    args = make()
    tangents = [
        _c(*np.shape(a)) if np.iscomplexobj(a) else rng.standard_normal(np.shape(a)) for a in args
    ]
    tangents = [t if np.ndim(a) else t.item() for t, a in zip(tangents, args, strict=True)]
    _, dot = adgen.jvp(f, tuple(args), tuple(tangents))
    np.testing.assert_allclose(
        np.ravel(dot), reference_jvp(f, args, tangents), rtol=1e-6, atol=1e-7
    )


def test_grad_of_a_real_function_is_jaxs() -> None:
    """JAX's documented values: grad(|z|^2)(3+4j) = 6-8j; grad of a holomorphic function
    with holomorphic=True is f'(z)."""
    assert adgen.grad(lambda z: np.real(z) ** 2 + np.imag(z) ** 2)(3 + 4j) == 6 - 8j
    assert adgen.grad(lambda z: np.abs(z) ** 2)(3 + 4j) == pytest.approx(6 - 8j)
    z = np.array([1 + 2j, -0.3 + 0.1j])
    np.testing.assert_allclose(
        adgen.grad(lambda z: np.sum(np.abs(z) ** 2))(z), 2 * np.conj(z), rtol=1e-12
    )
    d = adgen.grad(lambda z: np.exp(z) * z**2, holomorphic=True)(0.5 + 0.5j)
    w = 0.5 + 0.5j
    assert d == pytest.approx(np.exp(w) * (w**2 + 2 * w))


def test_grad_refuses_a_complex_value_without_holomorphic() -> None:
    with pytest.raises(NonScalarOutputError, match="holomorphic=True"):
        adgen.grad(lambda z: z * z)(1.0 + 1j)


def test_holomorphic_needs_complex_arguments_and_values() -> None:
    with pytest.raises(NonDifferentiableError, match="complex arguments"):
        adgen.grad(lambda z: z * z, holomorphic=True)(1.0)
    with pytest.raises(NonScalarOutputError, match="complex scalar"):
        adgen.grad(lambda z: np.abs(z), holomorphic=True)(1.0 + 1j)


def _not_for_complex(x):
    z = x * np.exp(1j * x)
    return np.sum(np.maximum(z, 0.0))


def test_a_rule_for_real_values_only_is_refused_by_line() -> None:
    with pytest.raises(NonDifferentiableError) as info:
        adgen.grad(_not_for_complex)(np.ones(3))
    message = str(info.value)
    assert "np.maximum" in message and "test_complex.py" in message
    assert "return np.sum(np.maximum(z, 0.0))" in message


# -- programs written the way users write them -------------------------------------------------


def _rotation(theta: float, axis: str) -> np.ndarray:
    c, s = np.cos(theta / 2), np.sin(theta / 2)
    if axis == "x":
        return np.array([[c, -1j * s], [-1j * s, c]])
    return np.array([[c - 1j * s, 0.0], [0.0, c + 1j * s]])


def circuit_infidelity(params, target):
    """A one-qubit variational circuit: RZ RX RZ applied to |0>, 1 - |<target|psi>|^2."""
    psi = np.array([1.0 + 0.0j, 0.0 + 0.0j])
    for k in range(params.shape[0]):
        c = np.cos(params[k] / 2)
        s = np.sin(params[k] / 2)
        if k % 2 == 0:
            gate = np.array([[c - 1j * s, 0.0], [0.0, c + 1j * s]])
        else:
            gate = np.array([[c, -1j * s], [-1j * s, c]])
        psi = gate @ psi
    overlap = np.sum(np.conj(target) * psi)
    return 1.0 - np.abs(overlap) ** 2


def test_variational_circuit_trains() -> None:
    target = np.array([np.cos(0.4), np.exp(0.9j) * np.sin(0.4)])
    params = np.array([0.1, 0.3, -0.2, 0.5])
    check_grads(circuit_infidelity, params, target, wrt=[0])
    g = adgen.grad(circuit_infidelity)
    loss0 = circuit_infidelity(params, target)
    for _ in range(200):
        params = params - 0.5 * g(params, target)
    assert circuit_infidelity(params, target) < 1e-6 < loss0


def test_variational_circuit_hessian() -> None:
    target = np.array([np.cos(0.4), np.exp(0.9j) * np.sin(0.4)])
    params = np.array([0.1, 0.3, -0.2, 0.5])
    h = adgen.hessian(circuit_infidelity)(params, target)
    g = adgen.grad(circuit_infidelity)
    eps = 1e-5
    numeric = np.stack(
        [(g(params + eps * e, target) - g(params - eps * e, target)) / (2 * eps) for e in np.eye(4)]
    )
    np.testing.assert_allclose(h, numeric, rtol=1e-6, atol=1e-8)


def impedance_misfit(R, L, C, omega, measured):
    """A series RLC circuit fitted to measured impedances."""
    Z = R + 1j * omega * L + 1.0 / (1j * omega * C)
    residual = Z - measured
    return np.mean(np.real(residual * np.conj(residual)))


def test_impedance_fit_gradients() -> None:
    omega = np.linspace(0.5, 5.0, 12)
    measured = 2.0 + 1j * omega * 0.3 + 1.0 / (1j * omega * 0.8)
    args = (1.5, 0.2, 1.1, omega, measured)
    check_grads(impedance_misfit, *args, wrt=[0, 1, 2])
    check_grads(adgen.grad(impedance_misfit, wrt=(0, 1, 2)), *args, wrt=[0, 1, 2], rtol=1e-4)


def complex_least_squares(w, A, b):
    r = A @ w - b
    return np.sum(np.real(r) ** 2 + np.imag(r) ** 2)


def test_complex_least_squares_gradient_and_descent() -> None:
    """JAX's gradient of ||A w - b||^2 in complex w is 2 A^T conj(r); descending along its
    conjugate solves the problem."""
    A = _c(8, 3)
    b = _c(8)
    w = np.zeros(3, dtype=complex)
    g = adgen.grad(complex_least_squares)(w, A, b)
    np.testing.assert_allclose(g, 2 * A.T @ np.conj(A @ w - b), rtol=1e-12)
    step = 0.5 / np.linalg.norm(A, 2) ** 2
    for _ in range(500):
        w = w - step * np.conj(adgen.grad(complex_least_squares)(w, A, b))
    np.testing.assert_allclose(w, np.linalg.lstsq(A, b, rcond=None)[0], rtol=1e-6)


def dft_power(x):
    """A hand-written DFT (complex exponentials, loop, in-place writes) and its power."""
    n = x.shape[0]
    spectrum = np.zeros(n, dtype=complex)
    for k in range(n):
        phases = np.exp(-2j * np.pi * k * np.arange(n) / n)
        spectrum[k] = np.sum(x * phases)
    return np.sum(np.abs(spectrum[1:4]) ** 2)


def test_hand_written_dft_in_a_loop() -> None:
    x = rng.standard_normal(8)
    check_grads(dft_power, x)
    direct = adgen.grad(dft_power)(x)
    f = np.fft.fft(x)
    k = np.arange(8)
    want = np.zeros(8)
    for j in range(1, 4):  # d|F_j|^2/dx = 2 Re(conj(F_j) e^{-2 pi i j k / n})
        want += 2 * np.real(np.conj(f[j]) * np.exp(-2j * np.pi * j * k / 8))
    np.testing.assert_allclose(direct, want, rtol=1e-10, atol=1e-12)


def horner(coefficients, z):
    total = 0.0 + 0.0j
    for c in coefficients:
        total = total * z + c
    return total


def test_holomorphic_polynomial() -> None:
    coefficients = np.array([1.0 - 1j, 0.5, 2j, -1.0])
    z = 0.3 + 0.7j
    d = adgen.grad(horner, wrt=1, holomorphic=True)(coefficients, z)
    assert d == pytest.approx(np.polyval(np.polyder(coefficients), z))
    # forward mode agrees, and both against the reference
    _, dot = adgen.jvp(horner, (coefficients, z), (None, 1.0 + 0j))
    assert dot == pytest.approx(d)


def test_complex_second_order_in_both_modes() -> None:
    def energy(z):
        return np.sum(np.abs(np.sin(z) * z) ** 2)

    z = _c(3)
    g = adgen.grad(energy)
    # the gradient is a (non-holomorphic) function of z: its JVP along a complex direction
    v = _c(3)
    _, dg = adgen.jvp(g, (z,), (v,))
    eps = 1e-6
    np.testing.assert_allclose(dg, (g(z + eps * v) - g(z - eps * v)) / (2 * eps), rtol=1e-6)
    # and reverse over reverse against the reference
    u = _c(3)
    _, pullback = adgen.vjp(g, z)
    (got,) = pullback(u)
    want = reference_vjp(g, [z], u)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def _inner(w):
    return np.sum(np.abs(w * (1 + 1j)) ** 2)


def _outer(z):
    return np.sum(np.real(adgen.grad(_inner)(z) * np.conj(z)))


def _jvp_inside(x, t):
    _, tangent = adgen.jvp(_abs_angle, (x,), (t,))
    return tangent


def _vjp_inside(x, c):
    _, pullback = adgen.vjp(_abs_angle, x)
    return pullback(c)[0]


def _abs_angle(z):
    return np.abs(z) * np.angle(z + 0.5) + np.imag(z * z)


def test_derivatives_called_inside_differentiated_code_take_complex_values() -> None:
    """adgen.grad / jvp / vjp called inside a function adgen differentiates are made before
    the arguments' kinds are known: their code is right for real and complex ones alike."""
    z = _c(2)
    np.testing.assert_allclose(adgen.grad(_inner)(z), 4 * np.conj(z), rtol=1e-12)
    # Re(sum(4 conj(z)^2)) = 4 Re(z^2): JAX's gradient is 8 z
    np.testing.assert_allclose(adgen.grad(_outer)(z), 8 * z, rtol=1e-10)
    check_grads(_outer, np.array([0.5, -1.5]))  # and real arguments
    for level2 in (_jvp_inside, _vjp_inside):
        # (a real-valued function: its cotangents are real; jvp's tangents are complex)
        second = _c(3) if level2 is _jvp_inside else rng.standard_normal(3)
        args = [_c(3), second]
        out, pullback = adgen.vjp(level2, *args)
        ct = _c(3) if np.iscomplexobj(out) else rng.standard_normal(3)
        for got, want in zip(pullback(ct), reference_vjp(level2, args, ct), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
        tangents = [_c(3), _c(3) if level2 is _jvp_inside else rng.standard_normal(3)]
        _, dot = adgen.jvp(level2, tuple(args), tuple(tangents))
        np.testing.assert_allclose(dot, reference_jvp(level2, args, tangents), rtol=1e-5, atol=1e-7)


def test_against_jax_where_installed() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def ours(z):
        return np.sum(np.abs(np.exp(1j * z) * z + np.conj(z)) ** 2 + np.angle(z + 2.0))

    def theirs(z):
        return jnp.sum(jnp.abs(jnp.exp(1j * z) * z + jnp.conj(z)) ** 2 + jnp.angle(z + 2.0))

    z = _c(4)
    np.testing.assert_allclose(adgen.grad(ours)(z), jax.grad(theirs)(z), rtol=1e-10)


def test_a_real_results_cotangent_must_be_real() -> None:
    _, pullback = adgen.vjp(lambda z: np.abs(z), _c(2))
    with pytest.raises(adgen.ShapeMismatchError, match="cotangent of the result is complex"):
        pullback(_c(2))
    (g,) = pullback(np.ones(2))
    assert np.iscomplexobj(g)


def test_a_rule_for_real_values_with_a_real_result_among_complex_ones_is_refused() -> None:
    """np.linalg.svd of a complex matrix: its singular values are real, its vectors complex
    (the analysis of where complex values are reaches its fixed point); no complex rule."""

    def singular_values(x):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        return s

    x = _c(2, 2)
    with pytest.raises(NonDifferentiableError, match="np.linalg.svd"):
        adgen.jvp(singular_values, (x,), (x,))


def _imag_of(z):
    return np.imag(z)


def _imag_tangent(z, t):
    _, tangent = adgen.jvp(_imag_of, (z,), (t,))
    return tangent


def test_jvp_inside_a_differentiated_function_of_complex_values() -> None:
    """Once a silently wrong 0: the inner derivative was made as if z were real."""
    _, dot = adgen.jvp(_imag_tangent, (0.3 + 0.4j, 0.5 - 0.2j), (0j, 1j))
    assert dot == pytest.approx(1.0)
