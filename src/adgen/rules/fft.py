"""NumPy's discrete Fourier transforms (``np.fft``), real and complex.

Every transform is linear over the reals, so its tangent is the transform of the tangent
(with the same ``n``/``s``, ``axis``/``axes`` and ``norm``), and its cotangent is the
transpose of that map under adgen's pairing ``<a, b> = Re(sum(a * b))`` (no conjugation;
JAX's convention, see docs/rules.md). The DFT matrix is symmetric, so:

* ``fft``, ``ifft``, ``fftn``, ``ifftn``, ``fft2``, ``ifft2``: the cotangent is the same
  transform of ``g`` (same ``norm``); with ``n=``/``s=`` the input was cropped or padded
  with zeros first, whose transpose pads or crops ``g``'s transform back to the input's
  shape (``rt.fft_resize``).
* ``rfft``, ``rfftn``, ``rfft2`` (real input): ``g`` stands for the first ``n // 2 + 1``
  entries of the full transform, so its transpose is the real part of the full ``fft`` of
  ``g`` padded with zeros to ``n`` (``np.fft.fft(g, n=n)``), resized back.
* ``ihfft`` (real input, ``conj(rfft(a)) / n``): the real part of ``np.fft.ifft(g, n=n)``.
* ``irfft``, ``irfftn``, ``irfft2`` (the real signal of a half spectrum; the imaginary parts
  of the zero-frequency entry and, for an even ``n``, of the Nyquist entry are ignored, as
  NumPy does): each other entry stands for itself and its conjugate, so the cotangent is
  ``np.fft.ifft(g)`` (the same ``norm``) weighted ``1, 2, ..., 2, (1)`` along the last
  transformed axis and cut to the half spectrum (``rt.hermitian_weights``), resized back to
  the input's length (its real part for a real input: ``rt.real_like``). ``hfft``
  (``irfft`` of the conjugate) likewise with ``np.fft.fft``.
* ``fftshift`` / ``ifftshift``: permutations, each the other's transpose.

``n``, ``s``, ``axis``, ``axes`` and ``norm`` (``None``, ``"backward"``, ``"ortho"``,
``"forward"``) are accepted as NumPy reads them (negative axes, ``-1`` in ``s``); ``out=`` is
not (a call passing it is refused). Repeated ``axes`` (NumPy transforms such an axis twice)
are refused when the cotangent code runs (``ValueError``), as JAX does. A complex argument of
``rfft``/``ihfft``/``rfftn``/``rfft2`` is NumPy's ``TypeError``.

Every derivative is written with these transforms, ``np.real`` and the helpers of
``adgen.rules.runtime.fft`` (``rt.fft_resize`` has rules below; the others give shapes and
constant weights), so it can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import nondifferentiable, rule
from adgen.rules.samples import example

# the axes and lengths a transform works along, and irfft's weights: no derivative
nondifferentiable(rt.fft_axes, rt.fft_sizes, rt.hermitian_weights)


@rule(
    rt.fft_resize,
    complex=True,
    examples=[
        example("rt.fft_resize(a, (2,))", a=(4,)),
        example("rt.fft_resize(a, (6,))", a=(4,), f32=True),
        example("rt.fft_resize(a, (3, 2))", a=(2, 3)),
        example("rt.fft_resize(a, (2, 3, 4))", a=(2, 3, 4)),
    ],
)
def fft_resize(a, shape):
    """Cropping and padding with zeros: linear; its transpose resizes back."""

    def jvp(da):
        return rt.fft_resize(da, shape)

    def vjp(g):
        return rt.fft_resize(g, np.shape(a))


# -- one-dimensional transforms -------------------------------------------------------------


@rule(
    np.fft.fft,
    complex=True,
    examples=[
        example("np.fft.fft(a)", a=(5,), f32=True),
        example("np.fft.fft(a, n=6, norm='ortho')", a=(4,)),
        example("np.fft.fft(a, 3, axis=0, norm='forward')", a=(5, 2)),
        example("np.fft.fft(a, n=4, axis=-2, norm='backward')", a=(2, 4, 3)),
        example("np.fft.fft(a, axis=1)", a=(2, 3, 4), f32=True),
    ],
)
def fft(a, n=None, axis=-1, norm=None):
    """The DFT is symmetric: ``a_bar = fft(g)``, resized back for ``n=``."""

    def jvp(da):
        return np.fft.fft(da, n=n, axis=axis, norm=norm)

    def vjp(g):
        bar = np.fft.fft(g, axis=axis, norm=norm)
        return bar if n is None else rt.fft_resize(bar, np.shape(a))


@rule(
    np.fft.ifft,
    complex=True,
    examples=[
        example("np.fft.ifft(a)", a=(5,), f32=True),
        example("np.fft.ifft(a, n=3, norm='ortho')", a=(4,)),
        example("np.fft.ifft(a, 7, axis=0, norm='forward')", a=(5, 2)),
        example("np.fft.ifft(a, axis=-2)", a=(2, 4, 3)),
    ],
)
def ifft(a, n=None, axis=-1, norm=None):
    """Symmetric: ``a_bar = ifft(g)``, resized back for ``n=``."""

    def jvp(da):
        return np.fft.ifft(da, n=n, axis=axis, norm=norm)

    def vjp(g):
        bar = np.fft.ifft(g, axis=axis, norm=norm)
        return bar if n is None else rt.fft_resize(bar, np.shape(a))


@rule(
    np.fft.rfft,
    complex=True,
    examples=[
        example("np.fft.rfft(a)", a=(6,), f32=True, complex=False),
        example("np.fft.rfft(a)", a=(5,), complex=False),
        example("np.fft.rfft(a, n=8, norm='ortho')", a=(5,), complex=False),
        example("np.fft.rfft(a, 3, axis=0, norm='forward')", a=(6, 2), complex=False),
        example("np.fft.rfft(a, n=5, axis=-2)", a=(2, 4, 3), complex=False),
    ],
)
def rfft(a, n=None, axis=-1, norm=None):
    """Real input: ``g`` holds the first ``n // 2 + 1`` entries of the full transform, so
    ``a_bar`` is the real part of ``fft`` of ``g`` padded with zeros to ``n``."""

    def jvp(da):
        return np.fft.rfft(da, n=n, axis=axis, norm=norm)

    def vjp(g):
        length = np.shape(a)[axis] if n is None else n
        bar = np.real(np.fft.fft(g, n=length, axis=axis, norm=norm))
        return bar if n is None else rt.fft_resize(bar, np.shape(a))


@rule(
    np.fft.irfft,
    complex=True,
    examples=[
        example("np.fft.irfft(a)", a=(5,), f32=True),
        example("np.fft.irfft(a, n=7)", a=(4,)),
        example("np.fft.irfft(a, n=4, norm='ortho')", a=(5,)),
        example("np.fft.irfft(a, 9, axis=0, norm='forward')", a=(3, 2)),
        example("np.fft.irfft(a, n=6, axis=-2)", a=(2, 4, 3)),
        example("np.fft.irfft(a, axis=1, norm='backward')", a=(2, 3, 2), f32=True),
    ],
)
def irfft(a, n=None, axis=-1, norm=None):
    """The transpose of the Hermitian extension: ``ifft(g)`` weighted by
    ``rt.hermitian_weights`` (2 for the entries that stand for their conjugates too) and cut
    to the half spectrum, resized back to ``a``'s length."""

    def jvp(da):
        return np.fft.irfft(da, n=n, axis=axis, norm=norm)

    def vjp(g):
        full = np.fft.ifft(g, axis=axis, norm=norm)
        bar = rt.fft_resize(full * rt.hermitian_weights(full, axis), np.shape(a))
        return rt.real_like(bar, a)


@rule(
    np.fft.hfft,
    complex=True,
    examples=[
        example("np.fft.hfft(a)", a=(5,), f32=True),
        example("np.fft.hfft(a, n=5, norm='ortho')", a=(4,)),
        example("np.fft.hfft(a, 3, axis=0, norm='forward')", a=(4, 2)),
        example("np.fft.hfft(a, n=8, axis=-2)", a=(2, 3, 3)),
    ],
)
def hfft(a, n=None, axis=-1, norm=None):
    """``irfft`` of the conjugate (with the opposite ``norm``): ``fft(g)`` weighted by
    ``rt.hermitian_weights``, cut and resized back."""

    def jvp(da):
        return np.fft.hfft(da, n=n, axis=axis, norm=norm)

    def vjp(g):
        full = np.fft.fft(g, axis=axis, norm=norm)
        bar = rt.fft_resize(full * rt.hermitian_weights(full, axis), np.shape(a))
        return rt.real_like(bar, a)


@rule(
    np.fft.ihfft,
    complex=True,
    examples=[
        example("np.fft.ihfft(a)", a=(6,), f32=True, complex=False),
        example("np.fft.ihfft(a, n=4, norm='ortho')", a=(5,), complex=False),
        example("np.fft.ihfft(a, 7, axis=0, norm='forward')", a=(5, 2), complex=False),
        example("np.fft.ihfft(a, axis=-2)", a=(2, 5, 3), complex=False),
    ],
)
def ihfft(a, n=None, axis=-1, norm=None):
    """Real input, ``conj(rfft(a))`` (opposite ``norm``): ``a_bar`` is the real part of
    ``ifft`` of ``g`` padded with zeros to ``n``."""

    def jvp(da):
        return np.fft.ihfft(da, n=n, axis=axis, norm=norm)

    def vjp(g):
        length = np.shape(a)[axis] if n is None else n
        bar = np.real(np.fft.ifft(g, n=length, axis=axis, norm=norm))
        return bar if n is None else rt.fft_resize(bar, np.shape(a))


# -- n-dimensional transforms ---------------------------------------------------------------


@rule(
    np.fft.fftn,
    complex=True,
    examples=[
        example("np.fft.fftn(a)", a=(3, 4), f32=True),
        example("np.fft.fftn(a, norm='ortho')", a=(2, 3, 2)),
        example("np.fft.fftn(a, axes=(0, 2))", a=(3, 2, 4)),
        example("np.fft.fftn(a, s=(4, 2), axes=(-1, 0), norm='forward')", a=(3, 2, 3)),
        example("np.fft.fftn(a, (2, -1), (1, 2))", a=(2, 3, 4)),
        example("np.fft.fftn(a, axes=[1])", a=(2, 3, 2), f32=True),
    ],
)
def fftn(a, s=None, axes=None, norm=None):
    """Symmetric: ``a_bar = fftn(g)`` along the same axes, resized back for ``s=``."""

    def jvp(da):
        return np.fft.fftn(da, s=s, axes=axes, norm=norm)

    def vjp(g):
        if s is None and axes is None:
            bar = np.fft.fftn(g, norm=norm)
        else:
            bar = np.fft.fftn(g, axes=rt.fft_axes(np.ndim(a), s, axes, "np.fft.fftn"), norm=norm)
        return bar if s is None else rt.fft_resize(bar, np.shape(a))


@rule(
    np.fft.ifftn,
    complex=True,
    examples=[
        example("np.fft.ifftn(a)", a=(3, 4), f32=True),
        example("np.fft.ifftn(a, norm='forward')", a=(2, 3, 2)),
        example("np.fft.ifftn(a, axes=(-1, 0), norm='ortho')", a=(3, 2, 4)),
        example("np.fft.ifftn(a, s=(2, 5), axes=(0, 1))", a=(3, 2, 2)),
    ],
)
def ifftn(a, s=None, axes=None, norm=None):
    """Symmetric: ``a_bar = ifftn(g)`` along the same axes, resized back for ``s=``."""

    def jvp(da):
        return np.fft.ifftn(da, s=s, axes=axes, norm=norm)

    def vjp(g):
        if s is None and axes is None:
            bar = np.fft.ifftn(g, norm=norm)
        else:
            bar = np.fft.ifftn(g, axes=rt.fft_axes(np.ndim(a), s, axes, "np.fft.ifftn"), norm=norm)
        return bar if s is None else rt.fft_resize(bar, np.shape(a))


@rule(
    np.fft.fft2,
    complex=True,
    examples=[
        example("np.fft.fft2(a)", a=(3, 4), f32=True),
        example("np.fft.fft2(a, norm='ortho')", a=(2, 3, 2)),
        example("np.fft.fft2(a, s=(4, 2), norm='forward')", a=(3, 3)),
        example("np.fft.fft2(a, (2, 3), axes=(0, 2))", a=(3, 2, 4)),
    ],
)
def fft2(a, s=None, axes=(-2, -1), norm=None):
    """``fftn`` over two axes (the last two by default)."""

    def jvp(da):
        return np.fft.fft2(da, s=s, axes=axes, norm=norm)

    def vjp(g):
        bar = np.fft.fftn(g, axes=rt.fft_axes(np.ndim(a), s, axes, "np.fft.fft2"), norm=norm)
        return bar if s is None else rt.fft_resize(bar, np.shape(a))


@rule(
    np.fft.ifft2,
    complex=True,
    examples=[
        example("np.fft.ifft2(a)", a=(3, 4), f32=True),
        example("np.fft.ifft2(a, norm='forward')", a=(2, 3, 2)),
        example("np.fft.ifft2(a, s=(2, 5), axes=(1, 0), norm='ortho')", a=(3, 3)),
    ],
)
def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """``ifftn`` over two axes (the last two by default)."""

    def jvp(da):
        return np.fft.ifft2(da, s=s, axes=axes, norm=norm)

    def vjp(g):
        bar = np.fft.ifftn(g, axes=rt.fft_axes(np.ndim(a), s, axes, "np.fft.ifft2"), norm=norm)
        return bar if s is None else rt.fft_resize(bar, np.shape(a))


@rule(
    np.fft.rfftn,
    complex=True,
    examples=[
        example("np.fft.rfftn(a)", a=(3, 4), f32=True, complex=False),
        example("np.fft.rfftn(a, norm='ortho')", a=(2, 3, 5), complex=False),
        example("np.fft.rfftn(a, axes=(2, 0))", a=(3, 2, 4), complex=False),
        example("np.fft.rfftn(a, s=(4, 3), axes=(0, 1), norm='forward')", a=(3, 4), complex=False),
        example("np.fft.rfftn(a, (-1, 6), (1, 2))", a=(2, 3, 4), complex=False),
    ],
)
def rfftn(a, s=None, axes=None, norm=None):
    """Real input: the real part of the full ``fftn`` of ``g`` padded with zeros along the
    last transformed axis, resized back for ``s=``."""

    def jvp(da):
        return np.fft.rfftn(da, s=s, axes=axes, norm=norm)

    def vjp(g):
        along = rt.fft_axes(np.ndim(a), s, axes, "np.fft.rfftn")
        sizes = rt.fft_sizes(np.shape(a), s, axes)
        bar = np.real(np.fft.fftn(g, s=sizes, axes=along, norm=norm))
        return bar if s is None else rt.fft_resize(bar, np.shape(a))


@rule(
    np.fft.rfft2,
    complex=True,
    examples=[
        example("np.fft.rfft2(a)", a=(3, 5), f32=True, complex=False),
        example("np.fft.rfft2(a, s=(2, 6), norm='ortho')", a=(2, 3, 4), complex=False),
        example("np.fft.rfft2(a, axes=(1, 0), norm='forward')", a=(4, 3), complex=False),
    ],
)
def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """``rfftn`` over two axes (the last two by default)."""

    def jvp(da):
        return np.fft.rfft2(da, s=s, axes=axes, norm=norm)

    def vjp(g):
        along = rt.fft_axes(np.ndim(a), s, axes, "np.fft.rfft2")
        sizes = rt.fft_sizes(np.shape(a), s, axes)
        bar = np.real(np.fft.fftn(g, s=sizes, axes=along, norm=norm))
        return bar if s is None else rt.fft_resize(bar, np.shape(a))


@rule(
    np.fft.irfftn,
    complex=True,
    examples=[
        example("np.fft.irfftn(a)", a=(3, 4), f32=True),
        example("np.fft.irfftn(a, norm='ortho')", a=(2, 3, 3)),
        example("np.fft.irfftn(a, axes=(2, 0))", a=(3, 2, 4)),
        example("np.fft.irfftn(a, s=(4, 5), axes=(0, 1), norm='forward')", a=(3, 4)),
        example("np.fft.irfftn(a, (-1, 4), (1, 2))", a=(2, 3, 4)),
    ],
)
def irfftn(a, s=None, axes=None, norm=None):
    """``ifftn`` of ``g``, weighted by ``rt.hermitian_weights`` along the last transformed
    axis (the transpose of the Hermitian extension there), resized back to ``a``'s shape."""

    def jvp(da):
        return np.fft.irfftn(da, s=s, axes=axes, norm=norm)

    def vjp(g):
        along = rt.fft_axes(np.ndim(a), s, axes, "np.fft.irfftn")
        full = np.fft.ifftn(g, axes=along, norm=norm)
        bar = rt.fft_resize(full * rt.hermitian_weights(full, along[-1]), np.shape(a))
        return rt.real_like(bar, a)


@rule(
    np.fft.irfft2,
    complex=True,
    examples=[
        example("np.fft.irfft2(a)", a=(3, 4), f32=True),
        example("np.fft.irfft2(a, s=(2, 5), norm='ortho')", a=(2, 3, 4)),
        example("np.fft.irfft2(a, axes=(1, 0), norm='forward')", a=(4, 3)),
    ],
)
def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """``irfftn`` over two axes (the last two by default)."""

    def jvp(da):
        return np.fft.irfft2(da, s=s, axes=axes, norm=norm)

    def vjp(g):
        along = rt.fft_axes(np.ndim(a), s, axes, "np.fft.irfft2")
        full = np.fft.ifftn(g, axes=along, norm=norm)
        bar = rt.fft_resize(full * rt.hermitian_weights(full, along[-1]), np.shape(a))
        return rt.real_like(bar, a)


# -- shifts ---------------------------------------------------------------------------------


@rule(
    np.fft.fftshift,
    complex=True,
    examples=[
        example("np.fft.fftshift(x)", x=(5,), f32=True),
        example("np.fft.fftshift(x)", x=(3, 4)),
        example("np.fft.fftshift(x, axes=1)", x=(3, 4)),
        example("np.fft.fftshift(x, axes=(0, -1))", x=(3, 2, 5)),
    ],
)
def fftshift(x, axes=None):
    """A permutation: its transpose is ``ifftshift``."""

    def jvp(dx):
        return np.fft.fftshift(dx, axes=axes)

    def vjp(g):
        return np.fft.ifftshift(g, axes=axes)


@rule(
    np.fft.ifftshift,
    complex=True,
    examples=[
        example("np.fft.ifftshift(x)", x=(5,), f32=True),
        example("np.fft.ifftshift(x, axes=0)", x=(3, 4)),
        example("np.fft.ifftshift(x, axes=(-1, 0))", x=(3, 2, 5)),
    ],
)
def ifftshift(x, axes=None):
    """A permutation: its transpose is ``fftshift``."""

    def jvp(dx):
        return np.fft.ifftshift(dx, axes=axes)

    def vjp(g):
        return np.fft.fftshift(g, axes=axes)
