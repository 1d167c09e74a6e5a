"""Batched forward mode (``adgen.modes.batched``) checked rule by rule from the registry:
for every registered rule's cases, ``k`` tangents pushed through one pass equal the ``k``
tangents of ``k`` one-tangent passes (each rule's batched template, an elementwise rule's own
template with its operands' tangents lifted, or the per-tangent loop for a rule without
either). Adding a rule adds its checks -- there is no list here to edit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from registry_cases import (
    BINARY_FAMILIES,
    UNARY_FAMILIES,
    Case,
    case_function,
    registry_cases,
)

from adgen import pipeline
from adgen.api import _scalars

# (a number of tangents no axis of the registry's examples has: a batch axis broadcast
# against the wrong axis fails instead of passing by chance)
K = 7
# elementwise rules: the shape families that make each operand's tangent meet a broadcast
FAMILIES = ("[float]", "[matrix]", "[(3,4)x(4,)]", "[(4,)x(3,4)]", "[floatx(3,4)]", "[0dx(3,4)]")


def _chosen(cases: list[Case]) -> list[Case]:
    """Every real float64 case (complex values and float32 take the same code paths), of an
    elementwise rule only the shape families that make its operands' tangents broadcast."""
    out = []
    for c in cases:
        if c.complex_args or c.dtype is not np.float64:
            continue
        label = c.id[c.id.rindex(" [") + 1 :]
        family = label[1:-1] in {**UNARY_FAMILIES, **BINARY_FAMILIES} and c.call.endswith(
            ("(x)", "(x, y)")
        )
        if not family or label in FAMILIES:
            out.append(c)
    return out


CASES = _chosen(registry_cases())


def _float(value: Any) -> bool:
    return isinstance(value, float) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_batched_tangents_equal_separate_ones(case: Case) -> None:
    fn = case_function(case)
    args = case.draw_args()
    names = [n for n, _ in case.args]
    signature = case.signature(args)
    scalars = _scalars(names, list(args))
    rng = np.random.default_rng(len(case.id))
    for k, (name, value) in enumerate(zip(names, args)):
        if not _float(value):
            continue
        made = pipeline.batched(fn, (name,), scalars, (), signature)
        if isinstance(made, str):
            pytest.fail(f"not batched: {made}")
        single = pipeline.derivative(fn, "forward", (name,), scalars, (), signature=signature)
        seeds = rng.standard_normal((K, *np.shape(value)))
        with np.errstate(all="ignore"):
            none, batch = pipeline.run(made, *args, seeds)
            expected = [
                pipeline.run(single, *args, seeds[i] if np.ndim(value) else float(seeds[i]))
                for i in range(K)
            ]
        assert none is None  # (the result itself is not computed: jacfwd reads tangents only)
        _same_tangents(batch, [e[1] for e in expected], expected[0][0])


def _same_tangents(batch: Any, separate: list[Any], out: Any) -> None:
    if isinstance(out, tuple):
        for j, o in enumerate(out):
            _same_tangents(batch[j], [s[j] for s in separate], o)
        return
    assert np.shape(batch) == (K, *np.shape(out)), (np.shape(batch), np.shape(out))
    for i, s in enumerate(separate):
        np.testing.assert_allclose(
            batch[i], np.broadcast_to(s, np.shape(out)), rtol=1e-10, atol=1e-12
        )
