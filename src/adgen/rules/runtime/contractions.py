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
from .libraries import as_array, cast, dtype_kind, eager, foreign, zeros_for


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


def _einsum_slot_grad(
    inputs: list[str], out: str, g: Any, arrays: list[Any], index: int, shape: Any, optimize: Any
) -> NDArray[Any]:
    """The gradient of ``<g, np.einsum(inputs -> out, *arrays)>`` with respect to
    ``arrays[index]`` (of ``shape``; that array's own values are not read).

    The output's cotangent is contracted with the other arrays; labels only that array
    carries are broadcast, broadcast (ellipsis or size-1) axes summed back, and a label
    repeated in its subscripts (a diagonal, ``"ii->i"``) puts the cotangent on that diagonal.
    """
    shape = tuple(shape)
    spec = inputs[index]
    pre, ell, post = spec.partition("...")
    labels = pre + post
    unique = "".join(dict.fromkeys(labels))
    others = [(inputs[i], arrays[i]) for i in range(len(inputs)) if i != index]
    seen = set(out.replace("...", "")).union(*(set(s.replace("...", "")) for s, _ in others))
    kept = "".join(c for c in unique if c in seen)
    lhs = ",".join([out, *(s for s, _ in others)])
    subs = lhs + "->" + ("..." if ell or "..." in lhs else "") + kept
    r = as_array(np.einsum(subs, g, *(a for _, a in others), optimize=optimize))
    n_ell = len(shape) - len(labels)
    ell_shape = shape[len(pre) : len(pre) + n_ell]
    sizes = {c: shape[n_ell * (i >= len(pre)) + i] for i, c in enumerate(labels)}
    if len(kept) != len(unique):  # labels only this operand has: size-1 axes, broadcast
        lead = r.shape[: r.ndim - len(kept)]
        tail = r.shape[r.ndim - len(kept) :]
        r = np.reshape(r, lead + tuple(tail[kept.index(c)] if c in kept else 1 for c in unique))
    r = _sum_to(r, ell_shape + tuple(sizes[c] for c in unique))
    if len(unique) != len(labels):  # a repeated label: the cotangent goes on the diagonal
        r = _einsum_on_diagonal(r, labels, sizes)
    # the ellipsis axes go back between the labels before and after them
    return np.moveaxis(r, list(range(n_ell, n_ell + len(pre))), list(range(len(pre))))


def _einsum_on_diagonal(r: Any, labels: str, sizes: dict[str, int]) -> Any:
    """``r`` (axes: broadcast ones, then each label of ``labels`` once, in order of first
    appearance) put on the diagonal of an array of axes ``labels`` (a label repeated): zero
    where a repeated label's indices differ.

    >>> _einsum_on_diagonal(np.array([1.0, 2.0]), "ii", {"i": 2}).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    unique = "".join(dict.fromkeys(labels))
    n_ell = r.ndim - len(unique)
    shape = tuple(sizes[c] for c in labels)
    if eager(r):  # written in place through einsum's view of the diagonal
        full = np.zeros(r.shape[:n_ell] + shape, dtype=_float_dtype(r))
        np.einsum("..." + labels + "->..." + unique, full)[...] = r
        return full
    # another library: the repeated axes broadcast, and kept only on the diagonal
    first = {c: labels.index(c) for c in unique}
    repeats = [i for i, c in enumerate(labels) if first[c] != i]
    expanded = np.expand_dims(r, [n_ell + i for i in repeats])
    index = np.indices(shape, sparse=True)
    mask = np.ones(shape, dtype=bool)
    for i in repeats:
        mask = mask & (index[i] == index[first[labels[i]]])
    return cast(np.where(np.asarray(mask, like=r), expanded, 0), _float_dtype(r))


def einsum_vjp(g: Any, operands: tuple[Any, ...], k: int, optimize: Any) -> NDArray[Any]:
    """Cotangent of ``np.einsum(*operands)`` with respect to ``operands[k]``: the output's
    cotangent contracted with the other arrays (on the diagonal for a label repeated in
    ``operands[k]``, summed over the axes broadcasting added). It is
    ``einsum_terms((*operands, g), (k,), optimize)``, computed directly.

    >>> einsum_vjp(np.array([1.0, 2.0]), ("ii->i", np.ones((2, 2))), 1, False).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    >>> einsum_vjp(1.0, ("ij->", np.ones((2, 2))), 1, False).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    inputs, out, positions = _einsum_spec(operands)
    x = as_array(operands[k])
    arrays = [operands[p] for p in positions]
    r = _einsum_slot_grad(inputs, out, g, arrays, positions.index(k), x.shape, optimize)
    return as_array(r, x.dtype if dtype_kind(x) in "fc" else np.dtype(np.float64))


# -- every derivative of a contraction, to any order -------------------------------------------
# A contraction z = C(x_1, ..., x_n) (np.einsum, np.linalg.multi_dot) is multilinear, and so
# is the form F(x_0, x_1, ..., x_n) = <x_0, C(x_1, ..., x_n)>, x_0 shaped like z (slot 0).
# C itself is the gradient of F in slot 0, the cotangent of x_k the gradient in slot k. Each
# derivative of these is a sum of such gradients, with each slot taking one value from a
# list of values, each tagged with the set (a bit mask) of the differentiations that made
# it: a term takes values whose masks are disjoint and together make the target set. One
# helper with its history (the differentiations so far) thus stands for all of them, and
# its own derivatives are the same helper with one more step of history.


def _history_start(length: int, history: tuple[Any, ...]) -> int:
    """How many values came before ``history``: a tangent step ("t") doubled them, a
    cotangent step (an element index) added one."""
    for step in reversed(history):
        if isinstance(step, str):
            if length % 2:
                raise ValueError(f"a sequence of {length} values after the step {step!r}")
            length //= 2
        else:
            length -= 1
    if length < 1:
        raise ValueError(f"no values before the history {history!r}")
    return length


def _contraction_terms(
    seq: tuple[Any, ...],
    history: tuple[Any, ...],
    spec_of: Any,
    optimize: Any,
) -> Any:
    """The value of ``einsum_terms`` / ``multi_dot_terms``: ``spec_of(first_values)`` gives
    the subscripts of the contraction, its output's and the positions of the arrays."""
    seq = tuple(seq)
    size = _history_start(len(seq), tuple(history))
    first = seq[:size]
    inputs, out_labels, positions = spec_of(first)
    # each value's slot (None: not an array, an einsum subscript) and mask
    slots: list[int | None] = [
        positions.index(p) + 1 if p in positions else None for p in range(size)
    ]
    masks = [0] * size
    out: int | None = 0  # the slot whose gradient is computed
    target, bit, like, zero = 0, 1, None, False
    for step in history:
        if isinstance(step, str):  # a tangent: each value's, in the same slot, one more bit
            if step != "t":
                raise ValueError(f"unknown step {step!r} in the history {history!r}")
            slots = slots + slots
            masks = masks + [m | bit for m in masks]
            target |= bit
        else:  # the cotangent of value j: it is added in the output's slot
            j = int(step) + (len(slots) if int(step) < 0 else 0)
            slot, mask = slots[j], masks[j]
            slots.append(out)
            masks.append(bit)
            # a value no term reads (outside the target, or in the output's own slot)
            zero = zero or slot is None or slot == out or bool(mask & ~target)
            out, target, like = slot, (target & ~mask) | bit, j
        bit <<= 1
    arrays = [first[p] for p in positions]
    total: Any = None
    if not zero:
        need = [s for s in range(len(inputs) + 1) if s != out]
        options: dict[int, list[tuple[int, Any]]] = {s: [] for s in need}
        for value, slot, mask in zip(seq, slots, masks):
            if slot in options and not mask & ~target and _contraction_nonzero(value):
                options[slot].append((mask, value))
        for chosen in _contraction_assignments(need, options, target):
            if out == 0:
                term = np.einsum(
                    ",".join(inputs) + "->" + out_labels,
                    *(chosen[s] for s in range(1, len(inputs) + 1)),
                    optimize=optimize,
                )
            else:
                assert out is not None
                values = [chosen.get(s) for s in range(1, len(inputs) + 1)]
                shape = np.shape(arrays[out - 1])
                term = _einsum_slot_grad(
                    inputs, out_labels, chosen[0], values, out - 1, shape, optimize
                )
            total = term if total is None else total + term
    if like is None:  # the contraction's value or one of its tangents
        if total is None:
            spec = ",".join(inputs) + "->" + out_labels
            shape = np.shape(np.einsum(spec, *arrays, optimize=optimize))
            return zeros_for(shape, _float_dtype(*arrays), *arrays)
        return total
    x = seq[like]  # a cotangent (or its derivative): shaped like that value
    if total is None:
        return zeros_for(np.shape(x), _float_dtype(x), x, *seq)
    return as_array(total, _float_dtype(x))


def _contraction_nonzero(value: Any) -> bool:
    """May ``value`` be nonzero (a lazy array's values are not looked at: it may)?"""
    return value is not None and (foreign(value) or bool(np.any(value)))


def _contraction_assignments(
    need: list[int], options: dict[int, list[tuple[int, Any]]], target: int
) -> Any:
    """Each choice of one value per slot of ``need`` whose masks are disjoint and make
    ``target``: a dict slot -> value."""

    def walk(i: int, used: int, chosen: dict[int, Any]) -> Any:
        if i == len(need):
            if used == target:
                yield dict(chosen)
            return
        for mask, value in options[need[i]]:
            if not mask & used:
                chosen[need[i]] = value
                yield from walk(i + 1, used | mask, chosen)
                del chosen[need[i]]

    return walk(0, 0, {})


def einsum_terms(seq: tuple[Any, ...], history: tuple[Any, ...] = (), optimize: Any = False) -> Any:
    """``np.einsum`` and all its derivatives, of any order, as one multilinear sum.

    ``seq`` starts with the arguments of ``np.einsum`` (string or interleaved form); each
    step of ``history`` adds values: ``"t"`` (a tangent) as many as ``seq`` had, the tangent
    of each, and an element index ``j`` (negative: from the end) one, the cotangent of the
    result so far, for the cotangent of ``seq[j]``. ``history=()`` is ``np.einsum(*seq)``;
    ``("t",)`` its tangent, the sum over the arrays of the contraction with one of them
    replaced by its tangent; ``(k,)`` ``einsum_vjp(seq[-1], seq[:-1], k)``. All-zero values
    are skipped. Its tangent is ``einsum_terms((*seq, *tangents), (*history, "t"))`` and the
    cotangent of ``seq[j]`` ``einsum_terms((*seq, c), (*history, j))``.

    >>> a, b = np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> einsum_terms(("ij,jk", a, b)).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    >>> einsum_terms(("ij,jk", a, b, 0.0, np.ones((2, 2)), np.zeros((2, 2))), ("t",)).tolist()
    [[4.0, 6.0], [4.0, 6.0]]
    >>> einsum_terms(("ij,jk", a, b, np.ones((2, 2))), (1,)).tolist()
    [[3.0, 7.0], [3.0, 7.0]]
    """
    return _contraction_terms(seq, history, _einsum_spec, optimize)


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
    a, b = as_array(a), as_array(b)
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
    return as_array(r, _float_dtype(a))


def tensordot_vjp_b(g: Any, a: Any, b: Any, axes: Any = 2) -> NDArray[Any]:
    """Cotangent of ``np.tensordot(a, b, axes)`` with respect to ``b``.

    >>> tensordot_vjp_b(np.ones(2), np.ones((2, 3)), np.arange(3.0), 1).tolist()
    [2.0, 2.0, 2.0]
    """
    a, b = as_array(a), as_array(b)
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
    return as_array(r, _float_dtype(b))


def inner_vjp_a(g: Any, a: Any, b: Any) -> NDArray[Any]:
    """Cotangent of ``np.inner(a, b)`` with respect to ``a`` (a product when one is 0-d).

    >>> inner_vjp_a(np.ones(2), np.ones((2, 3)), np.arange(3.0)).tolist()
    [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    """
    a, b = as_array(a), as_array(b)
    if a.ndim == 0:
        return as_array(np.sum(g * b), _float_dtype(a))
    if b.ndim == 0:
        return as_array(g * b, _float_dtype(a))
    return as_array(np.tensordot(g, b, b.ndim - 1), _float_dtype(a))


def inner_vjp_b(g: Any, a: Any, b: Any) -> NDArray[Any]:
    """Cotangent of ``np.inner(a, b)`` with respect to ``b``.

    >>> inner_vjp_b(np.ones(2), np.ones((2, 3)), np.arange(3.0)).tolist()
    [2.0, 2.0, 2.0]
    """
    a, b = as_array(a), as_array(b)
    if a.ndim == 0 or b.ndim == 0:
        return inner_vjp_a(g, b, a)
    lead = list(range(a.ndim - 1))
    r = np.tensordot(a, g, axes=(lead, lead))  # (n, B...)
    return as_array(np.moveaxis(r, 0, -1), _float_dtype(b))


def kron_vjp(g: Any, a: Any, b: Any, first: bool) -> NDArray[Any]:
    """Cotangent of ``np.kron(a, b)`` with respect to ``a`` (``first``) or ``b``.

    >>> kron_vjp(np.ones(4), np.ones(2), np.array([1.0, 2.0]), True).tolist()
    [3.0, 3.0]
    """
    a, b = as_array(a), as_array(b)
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
        return as_array(np.reshape(r, a.shape), _float_dtype(a))
    r = np.sum(
        gr * np.reshape(a, tuple(n for m in sa for n in (m, 1))), axis=tuple(range(0, 2 * nd, 2))
    )
    return as_array(np.reshape(r, b.shape), _float_dtype(b))


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
    a, b, g = as_array(a), as_array(b), as_array(g)
    am, bm = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
    if am.shape[-1] == 2 and bm.shape[-1] == 2:  # a scalar result: the z component
        g3 = np.stack([np.zeros_like(g), np.zeros_like(g), g], axis=-1)
    else:
        g3 = np.moveaxis(g, axisc, -1)

    def three(v: NDArray[Any]) -> NDArray[Any]:
        if v.shape[-1] == 3:
            return v
        return np.concatenate([v, np.zeros_like(v, shape=v.shape[:-1] + (1,))], axis=-1)

    x = am if first else bm
    r = np.cross(three(bm), g3) if first else np.cross(g3, three(am))
    r = _sum_to(r[..., : x.shape[-1]], x.shape)
    return as_array(np.moveaxis(r, -1, axisa if first else axisb), _float_dtype(x))


def multi_dot_vjp(g: Any, arrays: Any, k: int) -> NDArray[Any]:
    """Cotangent of ``np.linalg.multi_dot(arrays)`` with respect to ``arrays[k]``
    (a 1-D first factor is a row, a 1-D last factor a column).

    >>> multi_dot_vjp(np.ones((2, 2)), (np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])), 0).tolist()
    [[3.0, 7.0], [3.0, 7.0]]
    """
    mats = [as_array(m) for m in arrays]
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
    return as_array(np.reshape(g2, x.shape), _float_dtype(x))


def _multi_dot_spec(arrays: tuple[Any, ...]) -> tuple[list[str], str, list[int]]:
    """``np.linalg.multi_dot(arrays)`` as an einsum: subscripts, output and positions (a
    1-D first factor is a row, a 1-D last factor a column).

    >>> _multi_dot_spec((np.ones(3), np.ones((3, 4)), np.ones((4, 2))))
    (['b', 'bc', 'cd'], 'd', [0, 1, 2])
    """
    n = len(arrays)
    letters = [chr(ord("a") + i) for i in range(n + 1)]
    inputs = [letters[i] + letters[i + 1] for i in range(n)]
    out = letters[0] + letters[n]
    if np.ndim(arrays[0]) == 1:
        inputs[0] = inputs[0][1:]
        out = out[1:]
    if np.ndim(arrays[-1]) == 1:
        inputs[-1] = inputs[-1][:-1]
        out = out[:-1]
    return inputs, out, list(range(n))


def multi_dot_terms(seq: tuple[Any, ...], history: tuple[Any, ...] = ()) -> Any:
    """``np.linalg.multi_dot`` and all its derivatives, as :func:`einsum_terms` for the
    einsum of the product: ``seq`` starts with the factors; ``history=()`` is their
    product, ``("t",)`` its tangent (the factors' tangents follow them in ``seq``),
    ``(k,)`` ``multi_dot_vjp(seq[-1], seq[:-1], k)``.

    >>> a, b = np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> multi_dot_terms((a, b, np.ones((2, 2)), 0.0), ("t",)).tolist()
    [[4.0, 6.0], [4.0, 6.0]]
    >>> multi_dot_terms((a, b, np.ones((2, 2))), (0,)).tolist()
    [[3.0, 7.0], [3.0, 7.0]]
    """
    return _contraction_terms(seq, history, _multi_dot_spec, True)


def vecdot_vjp(g: Any, x: Any, y: Any, axis: int = -1) -> NDArray[Any]:
    """Cotangent of ``np.vecdot(x, y, axis=axis)`` with respect to ``x``.

    >>> vecdot_vjp(np.array([1.0, 2.0]), np.ones((2, 3)), np.arange(3.0)).tolist()
    [[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]]
    """
    xm, ym = np.moveaxis(as_array(x), axis, -1), np.moveaxis(as_array(y), axis, -1)
    r = _sum_to(np.expand_dims(g, -1) * ym, xm.shape)
    return as_array(np.moveaxis(r, -1, axis), _float_dtype(x))
