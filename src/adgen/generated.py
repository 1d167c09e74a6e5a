"""The result of forward and reverse mode: a generated function, as source text.

Every later stage takes a :class:`Generated`: compiling it (:mod:`adgen.backend.compile`),
caching it on disk (:mod:`adgen.backend.diskcache`), exporting it (:mod:`adgen.export`) and the
API around them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Generated:
    """A generated function: its name, parameters and source text, and the lists from which
    its ``v = xs.pop()`` puts back a value ``v`` had (reverse mode's saved values): read
    again, such a pop leaves ``v`` as differentiable as it was (``adgen.middle.analysis``)."""

    name: str
    params: list[str]
    source: str
    restoring: tuple[str, ...] = ()
