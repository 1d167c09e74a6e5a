"""Helpers of the contractions' rules (:mod:`adgen.rules.contractions`).

Tangents and cotangents of ``np.einsum``, ``np.tensordot``, ``np.inner``, ``np.kron``,
``np.cross``, ``np.linalg.multi_dot`` and ``np.vecdot``: the output's cotangent contracted
with the other operands, summed back over the axes broadcasting added.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .core import _float_dtype, _sum_to


def _einsum_letter(label: Any) -> str:
    if label is Ellipsis:
        return "..."
    label = int(label)
    return chr(ord("A") + label) if label < 26 else chr(ord("a") + label - 26)


def _einsum_spec(operands: tuple[Any, ...]) -> tuple[list[str], str, list[int]]:
    """The input subscripts, the output subscripts and the positions of the arrays among
    ``operands`` (the arguments of ``np.einsum``, string or interleaved form).

    >>> _einsum_spec(("ij,jk", 1, 2))
    (['ij', 'jk'], 'ik', [1, 2])
    >>> _einsum_spec((1, [0, 1], 2, [1, 2], [0, 2]))
    (['AB', 'BC'], 'AC', [0, 2])
    """
    if isinstance(operands[0], str):
        spec = operands[0].replace(" ", "")
        positions = list(range(1, len(operands)))
        lhs, arrow, out = spec.partition("->")
        inputs = lhs.split(",")
    else:
        positions = list(range(0, 2 * (len(operands) // 2), 2))
        inputs = ["".join(_einsum_letter(x) for x in operands[p + 1]) for p in positions]
        arrow = "->" if len(operands) % 2 else ""
        out = "".join(_einsum_letter(x) for x in operands[-1]) if arrow else ""
    if not arrow:  # implicit output: labels seen once, sorted; broadcast axes first
        letters = "".join(s.replace("...", "") for s in inputs)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        if any("..." in s for s in inputs):
            out = "..." + out
    return inputs, out, positions


def einsum_jvp(ans: Any, operands: tuple[Any, ...], parts: tuple[Any, ...], optimize: Any) -> Any:
    """Tangent of ``np.einsum(*operands)``: the sum over the arrays of the same contraction
    with that array replaced by its tangent (all-zero tangents are skipped).

    >>> a, b = np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> einsum_jvp(a @ b, ("ij,jk", a, b), (0.0, np.ones((2, 2)), np.zeros((2, 2))), False).tolist()
    [[4.0, 6.0], [4.0, 6.0]]
    """
    _, _, positions = _einsum_spec(operands)
    total: Any = None
    for p in positions:
        if not np.any(parts[p]):
            continue
        args = list(operands)
        args[p] = parts[p]
        term = np.einsum(*args, optimize=optimize)
        total = term if total is None else total + term
    if total is None:
        return np.zeros_like(ans)
    return total


def einsum_vjp(g: Any, operands: tuple[Any, ...], k: int, optimize: Any) -> NDArray[Any]:
    """Cotangent of ``np.einsum(*operands)`` with respect to ``operands[k]``.

    The output's cotangent is contracted with the other arrays; labels only ``operands[k]``
    carries are broadcast, broadcast (ellipsis or size-1) axes summed back, and a label
    repeated in ``operands[k]`` (a diagonal, ``"ii->i"``) puts the cotangent on that diagonal.

    >>> einsum_vjp(np.array([1.0, 2.0]), ("ii->i", np.ones((2, 2))), 1, False).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    >>> einsum_vjp(1.0, ("ij->", np.ones((2, 2))), 1, False).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    inputs, out, positions = _einsum_spec(operands)
    x = np.asarray(operands[k])
    index = positions.index(k)
    spec = inputs[index]
    pre, ell, post = spec.partition("...")
    labels = pre + post
    unique = "".join(dict.fromkeys(labels))
    others = [(inputs[i], operands[p]) for i, p in enumerate(positions) if i != index]
    seen = set(out.replace("...", "")).union(*(set(s.replace("...", "")) for s, _ in others))
    kept = "".join(c for c in unique if c in seen)
    lhs = ",".join([out, *(s for s, _ in others)])
    subs = lhs + "->" + ("..." if ell or "..." in lhs else "") + kept
    r = np.asarray(np.einsum(subs, g, *(a for _, a in others), optimize=optimize))
    n_ell = x.ndim - len(labels)
    ell_shape = x.shape[len(pre) : len(pre) + n_ell]
    sizes = {c: x.shape[n_ell * (i >= len(pre)) + i] for i, c in enumerate(labels)}
    if len(kept) != len(unique):  # labels only this operand has: size-1 axes, broadcast
        lead = r.shape[: r.ndim - len(kept)]
        tail = r.shape[r.ndim - len(kept) :]
        r = r.reshape(lead + tuple(tail[kept.index(c)] if c in kept else 1 for c in unique))
    r = _sum_to(r, ell_shape + tuple(sizes[c] for c in unique))
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    if len(unique) != len(labels):  # a repeated label: the cotangent goes on the diagonal
        full = np.zeros(ell_shape + tuple(sizes[c] for c in labels), dtype=dtype)
        np.einsum("..." + labels + "->..." + unique, full)[...] = r
        r = full
    else:
        r = np.array(r, dtype=dtype)
    # the ellipsis axes go back between the labels before and after them
    return np.moveaxis(r, list(range(n_ell, n_ell + len(pre))), list(range(len(pre))))


def _tensordot_axes(axes: Any, na: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        return list(range(na - int(axes), na)), list(range(int(axes)))
    xs, ys = axes
    xs = [xs] if isinstance(xs, (int, np.integer)) else list(xs)
    ys = [ys] if isinstance(ys, (int, np.integer)) else list(ys)
    return xs, ys


def tensordot_vjp_a(g: Any, a: Any, b: Any, axes: Any = 2) -> NDArray[Any]:
    """Cotangent of ``np.tensordot(a, b, axes)`` with respect to ``a``.

    >>> tensordot_vjp_a(np.ones(2), np.ones((2, 3)), np.arange(3.0), 1).tolist()
    [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    """
    a, b = np.asarray(a), np.asarray(b)
    xs, ys = _tensordot_axes(axes, a.ndim)
    xs = [x % a.ndim for x in xs] if a.ndim else xs
    ys = [y % b.ndim for y in ys] if b.ndim else ys
    a_free = [i for i in range(a.ndim) if i not in xs]
    b_free = [i for i in range(b.ndim) if i not in ys]
    n = len(a_free)
    r = np.tensordot(g, b, axes=(list(range(n, n + len(b_free))), b_free))
    # r's axes: a's free axes, then b's contracted axes in b's order
    ys_sorted = sorted(ys)
    source = {ax: j for j, ax in enumerate(a_free)}
    for x, y in zip(xs, ys):
        source[x] = n + ys_sorted.index(y)
    r = np.transpose(r, [source[i] for i in range(a.ndim)])
    return np.asarray(r, dtype=_float_dtype(a))


def tensordot_vjp_b(g: Any, a: Any, b: Any, axes: Any = 2) -> NDArray[Any]:
    """Cotangent of ``np.tensordot(a, b, axes)`` with respect to ``b``.

    >>> tensordot_vjp_b(np.ones(2), np.ones((2, 3)), np.arange(3.0), 1).tolist()
    [2.0, 2.0, 2.0]
    """
    a, b = np.asarray(a), np.asarray(b)
    xs, ys = _tensordot_axes(axes, a.ndim)
    xs = [x % a.ndim for x in xs] if a.ndim else xs
    ys = [y % b.ndim for y in ys] if b.ndim else ys
    a_free = [i for i in range(a.ndim) if i not in xs]
    b_free = [i for i in range(b.ndim) if i not in ys]
    n = len(a_free)
    r = np.tensordot(a, g, axes=(a_free, list(range(n))))
    # r's axes: a's contracted axes in a's order, then b's free axes
    xs_sorted = sorted(xs)
    source = {ax: len(xs) + j for j, ax in enumerate(b_free)}
    for x, y in zip(xs, ys):
        source[y] = xs_sorted.index(x)
    r = np.transpose(r, [source[i] for i in range(b.ndim)])
    return np.asarray(r, dtype=_float_dtype(b))


def inner_vjp_a(g: Any, a: Any, b: Any) -> NDArray[Any]:
    """Cotangent of ``np.inner(a, b)`` with respect to ``a`` (a product when one is 0-d).

    >>> inner_vjp_a(np.ones(2), np.ones((2, 3)), np.arange(3.0)).tolist()
    [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0:
        return np.asarray(np.sum(g * b), dtype=_float_dtype(a))
    if b.ndim == 0:
        return np.asarray(g * b, dtype=_float_dtype(a))
    return np.asarray(np.tensordot(g, b, b.ndim - 1), dtype=_float_dtype(a))


def inner_vjp_b(g: Any, a: Any, b: Any) -> NDArray[Any]:
    """Cotangent of ``np.inner(a, b)`` with respect to ``b``.

    >>> inner_vjp_b(np.ones(2), np.ones((2, 3)), np.arange(3.0)).tolist()
    [2.0, 2.0, 2.0]
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return inner_vjp_a(g, b, a)
    lead = list(range(a.ndim - 1))
    r = np.tensordot(a, g, axes=(lead, lead))  # (n, B...)
    return np.asarray(np.moveaxis(r, 0, -1), dtype=_float_dtype(b))


def kron_vjp(g: Any, a: Any, b: Any, first: bool) -> NDArray[Any]:
    """Cotangent of ``np.kron(a, b)`` with respect to ``a`` (``first``) or ``b``.

    >>> kron_vjp(np.ones(4), np.ones(2), np.array([1.0, 2.0]), True).tolist()
    [3.0, 3.0]
    """
    a, b = np.asarray(a), np.asarray(b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    pairs = tuple(n for ab in zip(sa, sb) for n in ab)
    gr = np.reshape(g, pairs)  # axes a0, b0, a1, b1, ...
    if first:
        r = np.sum(
            gr * np.reshape(b, tuple(n for m in sb for n in (1, m))),
            axis=tuple(range(1, 2 * nd, 2)),
        )
        return np.asarray(np.reshape(r, a.shape), dtype=_float_dtype(a))
    r = np.sum(
        gr * np.reshape(a, tuple(n for m in sa for n in (m, 1))), axis=tuple(range(0, 2 * nd, 2))
    )
    return np.asarray(np.reshape(r, b.shape), dtype=_float_dtype(b))


def cross_vjp(
    g: Any, a: Any, b: Any, axisa: int, axisb: int, axisc: int, axis: Any, first: bool
) -> NDArray[Any]:
    """Cotangent of ``np.cross(a, b, axisa, axisb, axisc, axis)`` with respect to ``a``
    (``first``) or ``b``: ``b x g`` and ``g x a``, with 2-vectors taken as 3-vectors of
    zero third component.

    >>> cross_vjp(np.array([0.0, 0.0, 1.0]), np.array([1.0, 0, 0]), np.array([0, 1.0, 0]),
    ...           -1, -1, -1, None, True).tolist()
    [1.0, 0.0, 0.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b, g = np.asarray(a), np.asarray(b), np.asarray(g)
    am, bm = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
    if am.shape[-1] == 2 and bm.shape[-1] == 2:  # a scalar result: the z component
        g3 = np.stack([np.zeros_like(g), np.zeros_like(g), g], axis=-1)
    else:
        g3 = np.moveaxis(g, axisc, -1)

    def three(v: NDArray[Any]) -> NDArray[Any]:
        if v.shape[-1] == 3:
            return v
        return np.concatenate([v, np.zeros(v.shape[:-1] + (1,), dtype=v.dtype)], axis=-1)

    x = am if first else bm
    r = np.cross(three(bm), g3) if first else np.cross(g3, three(am))
    r = _sum_to(r[..., : x.shape[-1]], x.shape)
    return np.asarray(np.moveaxis(r, -1, axisa if first else axisb), dtype=_float_dtype(x))


def multi_dot_jvp(arrays: Any, parts: Any) -> Any:
    """Tangent of ``np.linalg.multi_dot(arrays)``: the sum over the factors of the product
    with that factor replaced by its tangent (all-zero tangents are skipped).

    >>> multi_dot_jvp((np.eye(2), np.ones((2, 2))), (np.ones((2, 2)), 0.0)).tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    total: Any = None
    for k, part in enumerate(parts):
        if not np.any(part):
            continue
        factors = list(arrays)
        factors[k] = np.broadcast_to(part, np.shape(arrays[k]))
        term = np.linalg.multi_dot(factors)
        total = term if total is None else total + term
    if total is None:
        return np.zeros_like(np.linalg.multi_dot(list(arrays)))
    return total


def multi_dot_vjp(g: Any, arrays: Any, k: int) -> NDArray[Any]:
    """Cotangent of ``np.linalg.multi_dot(arrays)`` with respect to ``arrays[k]``
    (a 1-D first factor is a row, a 1-D last factor a column).

    >>> multi_dot_vjp(np.ones((2, 2)), (np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])), 0).tolist()
    [[3.0, 7.0], [3.0, 7.0]]
    """
    mats = [np.asarray(m) for m in arrays]
    x = mats[k]
    if mats[0].ndim == 1:
        mats[0] = mats[0][None, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, None]
    g2 = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    before, after = mats[:k], mats[k + 1 :]
    if before:
        left = before[0] if len(before) == 1 else np.linalg.multi_dot(before)
        g2 = left.T @ g2
    if after:
        right = after[0] if len(after) == 1 else np.linalg.multi_dot(after)
        g2 = g2 @ right.T
    return np.asarray(np.reshape(g2, x.shape), dtype=_float_dtype(x))


def vecdot_vjp(g: Any, x: Any, y: Any, axis: int = -1) -> NDArray[Any]:
    """Cotangent of ``np.vecdot(x, y, axis=axis)`` with respect to ``x``.

    >>> vecdot_vjp(np.array([1.0, 2.0]), np.ones((2, 3)), np.arange(3.0)).tolist()
    [[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]]
    """
    xm, ym = np.moveaxis(np.asarray(x), axis, -1), np.moveaxis(np.asarray(y), axis, -1)
    r = _sum_to(np.expand_dims(g, -1) * ym, xm.shape)
    return np.asarray(np.moveaxis(r, -1, axis), dtype=_float_dtype(x))
