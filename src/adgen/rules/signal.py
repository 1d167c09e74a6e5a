"""SciPy's convolutions (``scipy.signal``), registered only when SciPy is installed.

``convolve``, ``correlate``, ``fftconvolve``, ``convolve2d`` and ``correlate2d`` are bilinear
in their two inputs, both differentiated. With ``F = in1 * in2`` the ``'full'`` convolution
(``F[k] = sum_i in1[i] in2[k - i]``) and ``y`` the part of it ``mode`` keeps, the tangents
are the function itself with one input replaced by its tangent, and the cotangents are
correlations of the cotangent ``G`` of ``F`` -- ``g`` put back where ``F`` holds it, zeros
around (``np.pad`` by :func:`adgen.runtime.full_pad_width`) -- with the other input:

    in1_bar[i] = sum_j G[i + j] in2[j]        in2_bar[j] = sum_i G[i + j] in1[i]

each a ``'valid'`` correlation of ``G`` (larger than either input), so SciPy never swaps its
inputs there. A correlation is a convolution with the kernel reversed (``in2[::-1]`` along
every axis; SciPy's ``correlate(in1, in2, mode)`` is ``convolve(in1, np.flip(in2), mode)``
in every mode), so its cotangents are a convolution and a reversed correlation.

Where SciPy keeps the part ``mode`` asks for: ``'full'`` all of it; ``'same'`` the shape of
``in1`` at the centre, ``(m - 1) // 2`` entries after the start along an axis where ``in2``
has ``m`` (``correlate2d``: ``m // 2``, which differs for even ``m``); ``'valid'`` the entries
that do not depend on the zeros around the inputs, ``min(n, m) - 1`` after the start (the
larger input taken as the signal: ``in2`` may be the larger one in every dimension).

* ``convolve``, ``correlate``: ``mode`` and ``method`` (``'auto'``, ``'direct'``, ``'fft'``);
  n-dimensional inputs. The derivative does not depend on the method; the derivative code
  computes with the one the call chose.
* ``fftconvolve``: ``mode`` and ``axes`` (the other axes broadcast, and the cotangent of an
  input of size 1 there is summed over them; in mode ``'same'`` SciPy keeps the centre of a
  broadcast axis too).
* ``convolve2d``, ``correlate2d``: ``mode``, ``boundary`` (``'fill'``, ``'wrap'``,
  ``'symm'`` and their aliases ``'pad'``, ``'circular'``, ``'symmetric'``) and
  ``fillvalue``, a constant (a differentiated fill value is refused). A boundary is an
  ``np.pad`` of ``in1`` by the kernel's size less one on each side (``'constant'`` with the
  fill value, ``'wrap'``, ``'symmetric'``) followed by a ``'valid'`` convolution: the
  cotangent of ``in1`` adds up the copies ``'wrap'`` and ``'symm'`` make of its entries,
  and ``in2``'s is the correlation of ``G`` with the padded ``in1``. Mode ``'valid'``
  never meets the boundary.

Every derivative is written with these functions, ``np.pad``, ``np.flip`` and the helpers of
``np.pad``'s own rule, so it can be differentiated again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import nondifferentiable, rule
from adgen.rules.samples import Arg, Domain, example

try:
    import scipy.signal
except ImportError:  # pragma: no cover - SciPy is optional
    scipy = None  # type: ignore[assignment]

# shapes only: where a cotangent lies in the full result, how far a boundary extends in1
nondifferentiable(rt.full_pad_width, rt.boundary_pad_width)

if scipy is not None:

    @rule(
        scipy.signal.convolve,
        examples=[
            example("scipy.signal.convolve(a, v)", a=(5,), v=(3,), f32=True),
            example("scipy.signal.convolve(a, v, mode='same')", a=(6,), v=(4,)),
            example("scipy.signal.convolve(a, v, 'same', method='fft')", a=(3,), v=(6,)),
            example("scipy.signal.convolve(a, v, mode='valid')", a=(7,), v=(4,), f32=True),
            example("scipy.signal.convolve(a, v, 'valid', 'direct')", a=(2,), v=(5,)),
            example("scipy.signal.convolve(a, v, mode='same')", a=(4, 5), v=(2, 3), f32=True),
            example("scipy.signal.convolve(a, v, 'valid', method='fft')", a=(3, 4), v=(5, 4)),
            example("scipy.signal.convolve(a, v, method='direct')", a=(2, 3, 2), v=(2, 2, 3)),
            example("scipy.signal.convolve(a, v, mode='same')", a=(3, 4, 2), v=(2, 2, 2)),
        ],
    )
    def convolve(in1, in2, mode="full", method="auto"):
        """Bilinear: ``in1_bar`` is the ``'valid'`` correlation of the full cotangent with
        ``in2``, ``in2_bar`` its correlation with ``in1``."""

        def jvp_in1(d):
            return scipy.signal.convolve(d, in2, mode=mode, method=method)

        def jvp_in2(d):
            return scipy.signal.convolve(in1, d, mode=mode, method=method)

        def vjp_in1(g):
            if mode == "full":
                full = g
            else:
                full = np.pad(g, rt.full_pad_width(np.shape(g), np.shape(in1), np.shape(in2)))
            return scipy.signal.correlate(full, in2, mode="valid", method=method)

        def vjp_in2(g):
            if mode == "full":
                full = g
            else:
                full = np.pad(g, rt.full_pad_width(np.shape(g), np.shape(in1), np.shape(in2)))
            return scipy.signal.correlate(full, in1, mode="valid", method=method)

    @rule(
        scipy.signal.correlate,
        examples=[
            example("scipy.signal.correlate(a, v)", a=(5,), v=(3,), f32=True),
            example("scipy.signal.correlate(a, v, mode='same')", a=(6,), v=(4,)),
            example("scipy.signal.correlate(a, v, 'same', method='direct')", a=(3,), v=(6,)),
            example("scipy.signal.correlate(a, v, mode='valid')", a=(7,), v=(4,), f32=True),
            example("scipy.signal.correlate(a, v, 'valid', 'fft')", a=(2,), v=(5,)),
            example("scipy.signal.correlate(a, v, mode='same')", a=(4, 5), v=(2, 3), f32=True),
            example("scipy.signal.correlate(a, v, 'valid', method='direct')", a=(3, 4), v=(5, 4)),
            example("scipy.signal.correlate(a, v, method='fft')", a=(2, 3, 2), v=(2, 2, 3)),
            example("scipy.signal.correlate(a, v, mode='same')", a=(3, 4, 2), v=(2, 2, 2)),
        ],
    )
    def correlate(in1, in2, mode="full", method="auto"):
        """``convolve(in1, np.flip(in2), mode)``: ``in1_bar`` is the ``'valid'`` convolution
        of the full cotangent with ``in2``, ``in2_bar`` its correlation with ``in1``,
        reversed."""

        def jvp_in1(d):
            return scipy.signal.correlate(d, in2, mode=mode, method=method)

        def jvp_in2(d):
            return scipy.signal.correlate(in1, d, mode=mode, method=method)

        def vjp_in1(g):
            if mode == "full":
                full = g
            else:
                full = np.pad(g, rt.full_pad_width(np.shape(g), np.shape(in1), np.shape(in2)))
            return scipy.signal.convolve(full, in2, mode="valid", method=method)

        def vjp_in2(g):
            if mode == "full":
                full = g
            else:
                full = np.pad(g, rt.full_pad_width(np.shape(g), np.shape(in1), np.shape(in2)))
            return np.flip(scipy.signal.correlate(full, in1, mode="valid", method=method))

    @rule(
        scipy.signal.fftconvolve,
        examples=[
            example("scipy.signal.fftconvolve(a, v)", a=(5,), v=(3,), f32=True),
            example("scipy.signal.fftconvolve(a, v, mode='same')", a=(4, 5), v=(2, 3)),
            example("scipy.signal.fftconvolve(a, v, 'same')", a=(3,), v=(6,)),
            example("scipy.signal.fftconvolve(a, v, mode='valid')", a=(3, 4), v=(5, 4), f32=True),
            example("scipy.signal.fftconvolve(a, v, 'valid', axes=1)", a=(3, 6), v=(3, 4)),
            example("scipy.signal.fftconvolve(a, v, axes=-1)", a=(3, 5), v=(1, 2)),
            example(
                "scipy.signal.fftconvolve(a, v, mode='same', axes=(2, 3))",
                a=(2, 1, 5, 4),
                v=(1, 3, 3, 2),
            ),
            example(
                "scipy.signal.fftconvolve(a, v, mode='valid', axes=[0, 2])",
                a=(4, 2, 5),
                v=(2, 2, 1),
                f32=True,
            ),
        ],
    )
    def fftconvolve(in1, in2, mode="full", axes=None):
        """``convolve``'s derivatives along ``axes``; along the other axes the inputs
        broadcast, and each cotangent is summed back to its input's shape."""

        def jvp_in1(d):
            return scipy.signal.fftconvolve(d, in2, mode=mode, axes=axes)

        def jvp_in2(d):
            return scipy.signal.fftconvolve(in1, d, mode=mode, axes=axes)

        def vjp_in1(g):
            if mode == "full":
                full = g
            else:
                full = np.pad(g, rt.full_pad_width(np.shape(g), np.shape(in1), np.shape(in2), axes))
            bar = scipy.signal.fftconvolve(full, np.flip(in2, axis=axes), mode="valid", axes=axes)
            return bar if axes is None else rt.unbroadcast(bar, in1)

        def vjp_in2(g):
            if mode == "full":
                full = g
            else:
                full = np.pad(g, rt.full_pad_width(np.shape(g), np.shape(in1), np.shape(in2), axes))
            bar = scipy.signal.fftconvolve(full, np.flip(in1, axis=axes), mode="valid", axes=axes)
            return bar if axes is None else rt.unbroadcast(bar, in2)

    @rule(
        scipy.signal.convolve2d,
        examples=[
            example("scipy.signal.convolve2d(a, v)", a=(4, 5), v=(2, 3), f32=True),
            example("scipy.signal.convolve2d(a, v, mode='same')", a=(5, 4), v=(4, 3)),
            example("scipy.signal.convolve2d(a, v, 'same')", a=(2, 3), v=(4, 5)),
            example("scipy.signal.convolve2d(a, v, mode='valid')", a=(5, 6), v=(2, 3), f32=True),
            example("scipy.signal.convolve2d(a, v, 'valid')", a=(2, 3), v=(4, 3)),
            example("scipy.signal.convolve2d(a, v, 'same', fillvalue=1.5)", a=(4, 4), v=(2, 3)),
            example("scipy.signal.convolve2d(a, v, boundary='wrap')", a=(3, 4), v=(2, 3)),
            example("scipy.signal.convolve2d(a, v, 'same', 'wrap')", a=(3, 4), v=(4, 2), f32=True),
            example("scipy.signal.convolve2d(a, v, 'full', 'symm')", a=(2, 3), v=(4, 5)),
            example("scipy.signal.convolve2d(a, v, 'same', boundary='symm')", a=(4, 5), v=(2, 2)),
            example("scipy.signal.convolve2d(a, v, 'valid', boundary='wrap')", a=(4, 5), v=(2, 2)),
        ],
    )
    def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
        """Bilinear in ``in1`` and ``in2`` (affine in ``in1`` for a nonzero ``fillvalue``,
        which ``in1``'s tangent does not get): the full result is the ``'valid'``
        convolution of ``in1`` padded as ``boundary`` says with ``in2``. ``in1_bar`` is the
        correlation of the full cotangent with ``in2`` (``'full'``, folded back through the
        padding; ``'valid'`` for zeros), ``in2_bar`` the reversed correlation of the padded
        ``in1`` with it."""

        def jvp_in1(d):
            return scipy.signal.convolve2d(d, in2, mode=mode, boundary=boundary)

        def jvp_in2(d):
            return scipy.signal.convolve2d(
                in1, d, mode=mode, boundary=boundary, fillvalue=fillvalue
            )

        def vjp_in1(g):
            if mode == "full":
                full = g
            else:
                full = np.pad(g, rt.full_pad_width(np.shape(g), np.shape(in1), np.shape(in2)))
            if mode == "valid" or boundary == "fill" or boundary == "pad":
                bar = scipy.signal.correlate2d(full, in2, mode="valid")
            else:  # the copies the boundary makes of in1's entries add up
                width = rt.boundary_pad_width(np.shape(in2))
                if boundary == "wrap" or boundary == "circular":
                    copies = np.pad(rt.source_index(in1), width, mode="wrap")
                else:
                    copies = np.pad(rt.source_index(in1), width, mode="symmetric")
                bar = rt.gathered_vjp(scipy.signal.correlate2d(full, in2, mode="full"), in1, copies)
            return bar

        def vjp_in2(g):
            if mode == "full":
                full = g
            else:
                full = np.pad(g, rt.full_pad_width(np.shape(g), np.shape(in1), np.shape(in2)))
            if mode == "valid" or ((boundary == "fill" or boundary == "pad") and fillvalue == 0):
                bar = scipy.signal.correlate2d(full, in1, mode="valid")
            else:  # in1 as the boundary extends it
                width = rt.boundary_pad_width(np.shape(in2))
                if boundary == "fill" or boundary == "pad":
                    padded = np.pad(in1, width, constant_values=fillvalue)
                elif boundary == "wrap" or boundary == "circular":
                    padded = np.pad(in1, width, mode="wrap")
                else:
                    padded = np.pad(in1, width, mode="symmetric")
                bar = np.flip(scipy.signal.correlate2d(padded, full, mode="valid"))
            return bar

    @rule(
        scipy.signal.correlate2d,
        examples=[
            example("scipy.signal.correlate2d(a, v)", a=(4, 5), v=(2, 3), f32=True),
            example("scipy.signal.correlate2d(a, v, mode='same')", a=(5, 4), v=(4, 3)),
            example("scipy.signal.correlate2d(a, v, 'same')", a=(2, 3), v=(4, 5)),
            example("scipy.signal.correlate2d(a, v, mode='valid')", a=(5, 6), v=(2, 3), f32=True),
            example("scipy.signal.correlate2d(a, v, 'valid')", a=(2, 3), v=(4, 3)),
            example("scipy.signal.correlate2d(a, v, 'same', fillvalue=1.5)", a=(4, 4), v=(2, 3)),
            example("scipy.signal.correlate2d(a, v, boundary='circular')", a=(3, 4), v=(2, 3)),
            example("scipy.signal.correlate2d(a, v, 'same', 'wrap')", a=(3, 4), v=(4, 2), f32=True),
            example("scipy.signal.correlate2d(a, v, 'full', 'symmetric')", a=(2, 3), v=(4, 5)),
            example("scipy.signal.correlate2d(a, v, 'same', boundary='symm')", a=(4, 5), v=(2, 2)),
            example("scipy.signal.correlate2d(a, v, 'valid', boundary='symm')", a=(4, 5), v=(2, 2)),
        ],
    )
    def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
        """``convolve2d`` with the kernel reversed, except that mode ``'same'`` keeps
        ``m // 2`` (not ``(m - 1) // 2``) entries before its part: ``in1_bar`` is the
        convolution of the full cotangent with ``in2``, ``in2_bar`` the correlation of the
        padded ``in1`` with it."""

        def jvp_in1(d):
            return scipy.signal.correlate2d(d, in2, mode=mode, boundary=boundary)

        def jvp_in2(d):
            return scipy.signal.correlate2d(
                in1, d, mode=mode, boundary=boundary, fillvalue=fillvalue
            )

        def vjp_in1(g):
            if mode == "full":
                full = g
            else:
                full = np.pad(
                    g, rt.full_pad_width(np.shape(g), np.shape(in1), np.shape(in2), round_up=True)
                )
            if mode == "valid" or boundary == "fill" or boundary == "pad":
                bar = scipy.signal.convolve2d(full, in2, mode="valid")
            else:  # the copies the boundary makes of in1's entries add up
                width = rt.boundary_pad_width(np.shape(in2))
                if boundary == "wrap" or boundary == "circular":
                    copies = np.pad(rt.source_index(in1), width, mode="wrap")
                else:
                    copies = np.pad(rt.source_index(in1), width, mode="symmetric")
                bar = rt.gathered_vjp(scipy.signal.convolve2d(full, in2, mode="full"), in1, copies)
            return bar

        def vjp_in2(g):
            if mode == "full":
                full = g
            else:
                full = np.pad(
                    g, rt.full_pad_width(np.shape(g), np.shape(in1), np.shape(in2), round_up=True)
                )
            if mode == "valid" or ((boundary == "fill" or boundary == "pad") and fillvalue == 0):
                bar = np.flip(scipy.signal.correlate2d(full, in1, mode="valid"))
            else:  # in1 as the boundary extends it
                width = rt.boundary_pad_width(np.shape(in2))
                if boundary == "fill" or boundary == "pad":
                    padded = np.pad(in1, width, constant_values=fillvalue)
                elif boundary == "wrap" or boundary == "circular":
                    padded = np.pad(in1, width, mode="wrap")
                else:
                    padded = np.pad(in1, width, mode="symmetric")
                bar = scipy.signal.correlate2d(padded, full, mode="valid")
            return bar

    # -- IIR filters: y = lfilter(b, a, x) solves a * y = b * x (causal convolutions) ------
    _STABLE = Arg((2,), Domain(-0.4, 0.4))  # a = [1, a1, a2]: poles inside the unit circle

    @rule(
        scipy.signal.lfilter,
        examples=[
            example(
                "scipy.signal.lfilter(b, np.concatenate([np.ones(1), a]), x)",
                b=(3,),
                a=_STABLE,
                x=(6,),
            ),  # fmt: skip
            example(
                "scipy.signal.lfilter(b, a, x, axis=0)",
                b=(2,),
                a=Arg((2,), Domain(0.6, 1.2)),
                x=(5, 2),
            ),  # fmt: skip
            example(
                "scipy.signal.lfilter(b, np.concatenate([np.ones(1), a]), x, -1)",
                b=(1,),
                a=_STABLE,
                x=(2, 5),
            ),  # fmt: skip
        ],
    )
    def lfilter(ans, b, a, x, axis=-1):
        """Linear in ``x`` and in ``b``; w.r.t. ``a``, ``a * dy = -(da * y)``. Each
        cotangent goes through the transposed filter, the same filter run backwards in time
        (``u = flip(lfilter([1], a, flip(g)))``), then :func:`adgen.runtime.lagged_sum`
        gives the coefficients theirs."""

        def jvp_x(dx):
            return scipy.signal.lfilter(b, a, dx, axis)

        def bjvp_x(dx):
            return scipy.signal.lfilter(b, a, dx, axis if axis < 0 else axis + 1)

        def vjp_x(g):
            return np.flip(scipy.signal.lfilter(b, a, np.flip(g, axis), axis), axis)

        def jvp_b(db):
            return scipy.signal.lfilter(db, a, x, axis)

        def vjp_b(g):
            u = np.flip(scipy.signal.lfilter(np.ones(1), a, np.flip(g, axis), axis), axis)
            return rt.lagged_sum(u, x, np.size(b), axis)

        def jvp_a(da):
            return -scipy.signal.lfilter(da, a, ans, axis)

        def vjp_a(g):
            u = np.flip(scipy.signal.lfilter(np.ones(1), a, np.flip(g, axis), axis), axis)
            return -rt.lagged_sum(u, ans, np.size(a), axis)

    @rule(
        rt.lagged_sum,
        examples=[
            example("rt.lagged_sum(u, x, 3)", u=(6,), x=(6,)),
            example("rt.lagged_sum(u, x, 2, 0)", u=(4, 3), x=(4, 3)),
        ],
    )
    def lagged_sum(u, x, m, axis=-1):
        """Bilinear: ``u``'s cotangent is ``x`` through the FIR filter of the cotangent,
        ``x``'s is ``u`` through it run backwards in time."""

        def jvp_u(du):
            return rt.lagged_sum(du, x, m, axis)

        def jvp_x(dx):
            return rt.lagged_sum(u, dx, m, axis)

        def vjp_u(c):
            return scipy.signal.lfilter(c, np.ones(1), x, axis)

        def vjp_x(c):
            return np.flip(scipy.signal.lfilter(c, np.ones(1), np.flip(u, axis), axis), axis)


def lfilter_with_state(b: Any, a: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    """``scipy.signal.lfilter(b, a, x, axis, zi)`` with an initial state ``zi``: ``(y, zf)``,
    written with the filter without a state (which has a rule above). adgen reads this Python
    in place of such a call (:func:`adgen.rules.registry.read_for_options`), so ``b``, ``a``,
    ``x`` and ``zi`` are all differentiated.

    The output is linear in the state: ``zi`` adds its own response, the input ``v`` (``zi``
    padded with zeros to the signal's length) of the recursion ``a * y = a[0] * v``. The final
    state is that of SciPy's direct form II transposed, ``zf[i] = sum_k (b[i+1+k] x[n-1-k] -
    a[i+1+k] y[n-1-k]) / a[0]`` over the ``min(m - 1 - i, n)`` last steps, plus ``zi[i + n]``
    where the signal is shorter than the state (``m`` the longer of ``a`` and ``b``).

    >>> b, a = np.array([0.2, 0.3, 0.1]), np.array([2.0, -0.5, 0.25])
    >>> x, zi = np.array([1.0, -2.0, 0.5, 3.0]), np.array([0.4, -0.1])
    >>> ours, theirs = lfilter_with_state(b, a, x, zi=zi), scipy.signal.lfilter(b, a, x, zi=zi)
    >>> all(np.allclose(u, v) for u, v in zip(ours, theirs))
    True
    >>> short = lfilter_with_state(b, a, x[:1], zi=zi), scipy.signal.lfilter(b, a, x[:1], zi=zi)
    >>> all(np.allclose(u, v) for u, v in zip(*short))
    True
    """
    if zi is None:
        return scipy.signal.lfilter(b, a, x, axis)
    b = np.atleast_1d(b)
    a = np.atleast_1d(a)
    x = np.moveaxis(np.asarray(x), axis, -1)
    zi = np.moveaxis(np.asarray(zi), axis, -1)
    n = x.shape[-1]
    m = max(np.size(a), np.size(b))
    if n >= m - 1:
        v = np.concatenate([zi, np.zeros_like(x[..., : n - (m - 1)])], axis=-1)
    else:
        v = zi[..., :n]
    y = scipy.signal.lfilter(b, a, x, -1) + scipy.signal.lfilter(a[:1], a, v, -1)
    bn = np.concatenate([b, np.zeros(m - np.size(b))]) / a[0]
    an = np.concatenate([a, np.zeros(m - np.size(a))]) / a[0]
    zf = np.zeros_like(zi * y[..., :1])  # (the state's shape, the output's type)
    for i in range(m - 1):
        k = min(m - 1 - i, n)
        xs = np.flip(x[..., n - k :], -1)
        ys = np.flip(y[..., n - k :], -1)
        s = np.sum(bn[i + 1 : i + 1 + k] * xs - an[i + 1 : i + 1 + k] * ys, axis=-1)
        if i + n <= m - 2:
            s = s + zi[..., i + n]
        zf[..., i] = s
    return np.moveaxis(y, -1, axis), np.moveaxis(zf, -1, axis)


lfilter_with_state.adgen_option_form = True  # type: ignore[attr-defined]
