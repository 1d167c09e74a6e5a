"""The shape every benchmark problem has: a NumPy primal, a hand-written gradient, inputs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Args = tuple[Any, ...]


@dataclass(frozen=True)
class Problem:
    """One benchmark problem.

    ``primal`` is written in the plain NumPy style adgen reads; ``hand`` returns
    ``(value, (gradient per wrt argument, ...))`` and is the careful hand-written
    reference; ``inputs(size, seed)`` builds the primal's arguments for a named size.
    ``sizes`` lists the sizes of a full run (``tiny`` always exists for smoke tests,
    ``quick`` is the size ``--quick`` uses).
    """

    name: str
    description: str
    primal: Callable[..., Any]
    hand: Callable[..., tuple[Any, tuple[Any, ...]]]
    wrt: tuple[int, ...]
    inputs: Callable[[str, int], Args]
    sizes: Sequence[str]
    quick: str
    uses_loops: bool = False
    notes: dict[str, str] = field(default_factory=dict)
