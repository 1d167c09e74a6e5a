"""What each rule is checked on: example calls and input domains, kept with the rule.

A rule registered with ``examples=`` (and, for elementwise rules, a ``domain=``) is
checked by ``tests/test_registry_rules.py`` without any test list to edit: every
example call is differentiated in forward mode (against central finite differences),
in reverse mode (against forward mode) and, unless ``twice=False``, at second order.

>>> ex = example("np.cumsum(a, axis=1)", a=(3, 4))
>>> ex.call, ex.args
('np.cumsum(a, axis=1)', (('a', Arg(shape=(3, 4), domain=None)),))
>>> draw(Domain(0.5, 2.0), np.random.default_rng(0), (2,)).shape
(2,)

Shapes: ``None`` is a Python float, ``()`` a 0-d array, a tuple an array of that shape.
Values come from the argument's own domain, else the rule's, else :data:`ANY`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

Shape = tuple[int, ...] | None


@dataclass(frozen=True)
class Domain:
    """Uniform values in [lo, hi], at least ``gap`` away from each point of ``avoid``.

    ``kind`` draws structured matrices over the last two axes instead: ``"spd"``
    (symmetric positive definite), ``"invertible"`` (well conditioned),
    ``"symmetric"`` (well-separated eigenvalues), ``"distinct"`` (entries far apart,
    for sorting, medians and extrema), ``"stable"`` (every eigenvalue's real part at most
    -1, by Gershgorin's discs: continuous Lyapunov equations), ``"contractive"`` (infinity
    norm at most 0.6, so every eigenvalue inside the unit disc: discrete ones).
    """

    lo: float = -1.5
    hi: float = 1.5
    avoid: tuple[float, ...] = ()
    gap: float = 0.05
    kind: str = "uniform"


@dataclass(frozen=True)
class Arg:
    shape: Shape
    domain: Domain | None = None


@dataclass(frozen=True)
class Example:
    """One call to check: ``call`` is an expression over the argument names."""

    call: str
    args: tuple[tuple[str, Arg], ...]
    f32: bool = False  # also check with float32 inputs
    twice: bool = True  # also check the second derivative
    tolerance: float | None = None  # relative and absolute tolerance, if not the default
    # for a rule registered ``complex=True``: which arguments a complex variant of the call
    # makes complex (True: every one; False: no complex variant; or their names)
    complex: bool | tuple[str, ...] = True


def example(
    call: str,
    /,
    *,
    f32: bool = False,
    twice: bool = True,
    tolerance: float | None = None,
    complex: bool | tuple[str, ...] = True,
    **args: Shape | Arg,
) -> Example:
    """An example call of a rule's function; each keyword names an argument and its shape
    (or an :class:`Arg` with a domain of its own). For a rule registered ``complex=True``
    the call is also checked with complex arguments: all of them, those ``complex`` names
    (the others stay real), or none (``complex=False``: the function takes real values
    only, like ``np.fft.rfft``, or a complex variant would say nothing new)."""
    spec = tuple((k, v if isinstance(v, Arg) else Arg(v)) for k, v in args.items())
    return Example(call, spec, f32, twice, tolerance, complex)


ANY = Domain()
POSITIVE = Domain(0.3, 3.0)
NONZERO = Domain(-1.5, 1.5, avoid=(0.0,), gap=0.3)
UNIT = Domain(-0.9, 0.9)  # inside (-1, 1)
SPD = Domain(kind="spd")
INVERTIBLE = Domain(kind="invertible")
SYMMETRIC = Domain(kind="symmetric")
DISTINCT = Domain(kind="distinct")
STABLE = Domain(kind="stable")  # Re(eigenvalues) <= -1
CONTRACTIVE = Domain(kind="contractive")  # |eigenvalues| <= 0.6


def draw(domain: Domain, rng: np.random.Generator, shape: Shape, dtype: Any = np.float64) -> Any:
    """Values from ``domain`` with ``shape`` (a Python float for ``None``). A complex
    ``dtype`` adds an imaginary part: uniform in [-0.5, 0.5] (a tenth of that for the
    structured matrices, which stay well conditioned); a Python complex for ``None``.

    >>> draw(POSITIVE, np.random.default_rng(0), (2,), np.complex128).dtype
    dtype('complex128')
    """
    if np.dtype(dtype).kind == "c":
        real_dtype = np.finfo(dtype).dtype
        re = draw(domain, rng, shape, real_dtype)
        scale = 0.5 if domain.kind in ("uniform", "distinct") else 0.05
        im = rng.uniform(-scale, scale, size=np.shape(re))
        if shape is None:
            return complex(re, float(im))
        return np.asarray(re + 1j * im, dtype=dtype)
    size = 1 if shape is None else int(np.prod(shape, dtype=np.int64))
    vals: Any
    if domain.kind == "uniform":
        vals = rng.uniform(domain.lo, domain.hi, size=size)
        for _ in range(1000):
            bad = np.zeros(size, bool)
            for p in domain.avoid:
                bad |= np.abs(vals - p) < domain.gap
            if not bad.any():
                break
            vals[bad] = rng.uniform(domain.lo, domain.hi, size=int(bad.sum()))
        else:  # pragma: no cover - a domain mistake in a rule module
            raise ValueError(f"cannot draw from {domain}")
    elif domain.kind == "distinct":
        # a random permutation of well-separated values: no ties anywhere
        vals = (rng.permutation(size) - size / 2) * (2.0 / max(size, 1)) + rng.uniform(
            -0.1, 0.1
        ) / max(size, 1)
    else:
        if shape is None or len(shape) < 2 or shape[-1] != shape[-2]:
            raise ValueError(f"{domain.kind} matrices need a square shape, not {shape}")
        n = shape[-1]
        a = rng.uniform(-1.0, 1.0, size=shape)
        eye = np.eye(n)
        if domain.kind == "spd":
            m = a @ np.swapaxes(a, -1, -2) + n * eye
        elif domain.kind == "invertible":
            m = a + 2.0 * n**0.5 * eye
        elif domain.kind == "symmetric":
            q, _ = np.linalg.qr(a)
            w = np.arange(1, n + 1) * 1.0 + rng.uniform(-0.2, 0.2, size=n)
            m = (q * w) @ np.swapaxes(q, -1, -2)
            m = (m + np.swapaxes(m, -1, -2)) / 2
        elif domain.kind == "stable":  # each disc: centre <= -n, radius <= n - 1
            m = a - (n + 1.0) * eye
        elif domain.kind == "contractive":  # each row's absolute sum <= 0.6
            m = a * (0.6 / n)
        else:
            raise ValueError(f"unknown domain kind {domain.kind!r}")
        return np.asarray(m, dtype=dtype)
    if shape is None:
        return float(vals[0])
    return vals.reshape(shape).astype(dtype)
