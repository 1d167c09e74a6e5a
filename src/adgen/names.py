"""Every name adgen generates comes from here, by one convention.

========================  =============================  ==================
what                      name                           example
========================  =============================  ==================
user variable             kept as written                ``y``
rebinding of a variable   ``<name>_<k>``                 ``y_1``
temporary of ``t = ...``  ``<t>_<k>`` (result: ``t``)     ``y_1``, ``y_2``
temporary of ``return``   ``out_<k>`` (result: ``out``)   ``out_1``
tangent (forward mode)    ``<name>_dot``                 ``y_dot``
adjoint (reverse mode)    ``<name>_bar``                 ``y_bar``
shape kept for reverse    ``<name>_like``                ``y_like``
template local            ``<target>_<local>``           ``y_mask``
derivative function       ``<function>_jvp/_vjp``        ``loss_vjp``
========================  =============================  ==================

A name already used by the program (or reserved for a module the generated
code uses, such as ``np``) is never handed out twice: the counter moves on.
Names depend only on the source, so generated code is identical across runs.

>>> n = Namer({"x", "y", "y_1"})
>>> n.fresh("y"), n.fresh("y"), n.tangent("x"), n.adjoint("x"), n.tangent("x")
('y_2', 'y_3', 'x_dot', 'x_bar', 'x_dot')
"""

from __future__ import annotations

from collections.abc import Iterable

# Names the generated code binds to modules; a user's variable never gets them.
RESERVED = frozenset({"np", "math", "rt", "scipy"})  # module names generated code uses


class Namer:
    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken: set[str] = set(taken) | set(RESERVED)
        self._counters: dict[str, int] = {}
        self._derived: dict[tuple[str, str], str] = {}

    def reserve(self, name: str) -> None:
        self.taken.add(name)

    def fresh(self, base: str) -> str:
        """A new name ``base_<k>`` with the smallest k not yet used."""
        base = base.rstrip("_") or "t"
        k = self._counters.get(base, 0)
        while True:
            k += 1
            name = f"{base}_{k}"
            if name not in self.taken:
                break
        self._counters[base] = k
        self.taken.add(name)
        return name

    def claim(self, name: str) -> str:
        """``name`` itself if it is still free, else a fresh variant of it."""
        if name in self.taken:
            return self.fresh(name)
        self.taken.add(name)
        return name

    def _derive(self, name: str, suffix: str) -> str:
        key = (name, suffix)
        if key not in self._derived:
            self._derived[key] = self.claim(f"{name}_{suffix}")
        return self._derived[key]

    def tangent(self, name: str) -> str:
        return self._derive(name, "dot")

    def adjoint(self, name: str) -> str:
        return self._derive(name, "bar")

    def like(self, name: str) -> str:
        """What reverse mode keeps of a value whose adjoint needs only its shape and dtype."""
        return self._derive(name, "like")
