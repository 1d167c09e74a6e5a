"""np.fft through the public API: spectral programs, complex inputs, and what is refused.

The registry's tests check each rule on its examples (first and second order, real and
complex arguments); these check whole programs and an independent reference: the real
Jacobian of the real and imaginary parts (JAX's convention: the cotangent of ``x + iy`` is
``df/dx - i df/dy`` for a real ``f``).
"""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads

N = 16
K = 2 * np.pi * np.fft.rfftfreq(N, d=1.0 / N)  # wave numbers on [0, 1)
rng = np.random.default_rng(0)


def heat(u0, nu):
    """Two exact spectral steps of u_t = nu u_xx (periodic), then a misfit."""
    uh = np.fft.rfft(u0) * np.exp(-nu * K**2 * 0.01)
    u = np.fft.irfft(uh, n=N)
    uh = np.fft.rfft(u, norm="ortho")
    u = np.fft.irfft(uh * np.exp(-nu * K**2 * 0.01), n=N, norm="ortho")
    target = np.sin(2 * np.pi * np.arange(N) / N)
    return np.sum((u - target) ** 2)


def power_loss(x, w):
    """A log power spectrum of a windowed 2-d field, centred with fftshift."""
    spectrum = np.fft.fftshift(np.fft.fft2(x * w, norm="ortho"))
    return np.sum(np.log1p(np.real(spectrum * np.conj(spectrum))))


def cropped(z):
    """A complex signal, padded, filtered and cropped again."""
    y = np.fft.ifft(np.fft.fft(z, n=12) * np.hanning(12), n=8)
    return np.sum(np.abs(y) ** 2)


def half_spectra(z):
    """hfft and irfftn of complex half spectra (their imaginary DC parts are ignored)."""
    return np.sum(np.fft.hfft(z, n=9) ** 2) + np.sum(
        np.fft.irfftn(z[None, :] * 2.0, s=(3, 6), axes=(0, 1)) ** 3
    )


def _reference_grad(fn, x, *rest):
    """Central differences of ``fn`` along each real (and imaginary) direction of ``x``."""
    h = 1e-6
    out = np.zeros(np.shape(x), dtype=np.result_type(x, 1.0))
    for i in range(np.size(x)):
        e = np.zeros(np.shape(x))
        e.flat[i] = h
        d = (fn(x + e, *rest) - fn(x - e, *rest)) / (2 * h)
        if np.iscomplexobj(x):
            d = d - 1j * (fn(x + 1j * e, *rest) - fn(x - 1j * e, *rest)) / (2 * h)
        out.flat[i] = d
    return out


CASES = [
    ("heat", heat, (rng.standard_normal(N), 0.3)),
    ("power", power_loss, (rng.standard_normal((4, 6)), rng.standard_normal((4, 6)))),
    ("cropped", cropped, (rng.standard_normal(7) + 1j * rng.standard_normal(7),)),
    ("half_spectra", half_spectra, (rng.standard_normal(5) + 1j * rng.standard_normal(5),)),
]


@pytest.mark.parametrize("fn, args", [pytest.param(f, a, id=n) for n, f, a in CASES])
def test_spectral_programs(fn, args) -> None:
    check_grads(fn, *args)
    grad = adgen.grad(fn)(*args)
    np.testing.assert_allclose(grad, _reference_grad(fn, *args), rtol=1e-6, atol=1e-6)


def test_heat_second_order() -> None:
    u0, nu = rng.standard_normal(N), 0.3
    assert adgen.grad(heat, 1)(u0, nu) == pytest.approx(
        (heat(u0, nu + 1e-6) - heat(u0, nu - 1e-6)) / 2e-6, rel=1e-6
    )
    v = rng.standard_normal(N)
    hv = adgen.jvp(adgen.grad(heat), (u0, nu), (v, 0.0))[1]
    grad = adgen.grad(heat)
    want = (grad(u0 + 1e-5 * v, nu) - grad(u0 - 1e-5 * v, nu)) / 2e-5
    np.testing.assert_allclose(hv, want, rtol=1e-6, atol=1e-8)


def test_repeated_axes_are_refused_in_reverse_mode() -> None:
    def f(x):
        return np.sum(np.real(np.fft.fftn(x, axes=(0, 0))) ** 2)

    x = rng.standard_normal((3, 4))
    with pytest.raises(adgen.DerivativeError, match="needs distinct axes"):
        adgen.grad(f)(x)


def test_out_is_refused() -> None:
    def f(x):
        out = np.empty(4, dtype=complex)
        np.fft.fft(x, out=out)
        return np.sum(np.real(out))

    with pytest.raises(adgen.UnsupportedSyntaxError, match="out"):
        adgen.grad(f)(np.ones(4))


def clipped_signals(x, s):
    """The real outputs of np.fft (half spectra's signals, frequencies) and a real signal
    reordered by fftshift meet real-only rules (np.minimum, np.maximum, np.sort)."""
    a = np.fft.rfft(x)
    u = np.fft.irfft(a * np.exp(-np.fft.rfftfreq(8) * s), n=8)
    v = np.fft.irfftn(np.fft.rfftn(np.reshape(x, (2, 4))), s=(2, 4), axes=(0, 1))
    w = np.fft.hfft(a[:3], n=4)
    shifted = np.fft.fftshift(x * s)
    return (
        np.sum(np.minimum(u, 0.1) ** 2)
        + np.sum(np.maximum(v, -0.2) * x[:4])
        + np.sum(np.sort(w) * np.arange(4.0))
        + np.sum(np.minimum(shifted, x))
    )


def test_real_outputs_of_fft_meet_real_only_rules() -> None:
    """irfft, irfftn, hfft and rfftfreq give real arrays, fftshift keeps a real array real:
    the rules for real values only apply (they were refused as if the values were complex)."""
    x = rng.standard_normal(8)
    check_grads(clipped_signals, x, 0.7)
    check_grads(adgen.grad(clipped_signals), x, 0.7, modes=("forward",))
