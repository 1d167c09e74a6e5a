"""A function chosen in a branch: the statements after the branch copied into each of its
paths, before a function is lowered.

``if np.iscomplexobj(x): g = loggamma else: g = gammaln`` then ``g(x)``: which function runs
is decided only when the code runs, and adgen must know the function it differentiates. In
Python ``if c: A else: B`` followed by ``R`` does what ``if c: A; R else: B; R`` does, so the
statements after the ``if`` (to the end of its block) are copied into both paths; in each,
``g`` is bound once and read only after that binding in the same block, which adgen lowers
as it lowers ``f = np.tanh; f(x)``. ``g = A if c else B`` is first written as that ``if``.

Copied only where a name bound to a function or a module's attribute on every path of the
``if`` is called after it, and at most a few times per function (each copy doubles what
follows).

>>> import gast
>>> tree = gast.parse('''
... def f(x, c):
...     g = sp.loggamma if c else sp.gammaln
...     y = g(x)
...     return y * 2
... ''')
>>> fn = tree.body[0]
>>> split_on_chosen_functions(fn)
>>> print(gast.unparse(fn).strip())  # doctest: +NORMALIZE_WHITESPACE
def f(x, c):
    if c:
        g = sp.loggamma
        y = g(x)
        return y * 2
    else:
        g = sp.gammaln
        y = g(x)
        return y * 2
"""

from __future__ import annotations

import copy
from typing import Any

import gast

_MAX_SPLITS = 6  # per function
_MAX_NODES = 2000  # in the statements copied


def _reference(node: Any) -> bool:
    """A name or a dotted attribute (``gammaln``, ``sp.special.gammaln``, ``self.act``): what
    may name a function (never a call, whose result is a value)."""
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name)


def _chosen(stmts: list[Any]) -> set[str]:
    """Names that every path through these statements leaves bound to a reference by its
    last binding at this level (an ``if`` counts when both its branches do)."""
    found: dict[str, bool] = {}
    for stmt in stmts:
        if isinstance(stmt, gast.Assign):
            for target in stmt.targets:
                for n in gast.walk(target):
                    if isinstance(n, gast.Name):
                        simple = len(stmt.targets) == 1 and target is n
                        found[n.id] = simple and _reference(stmt.value)
        elif isinstance(stmt, gast.If):
            both = _chosen(stmt.body) & _chosen(stmt.orelse)
            for n in gast.walk(stmt):
                if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
                    found[n.id] = n.id in both
        else:
            for n in gast.walk(stmt):
                if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
                    found[n.id] = False
    return {name for name, ok in found.items() if ok}


def _called(stmts: list[Any], names: set[str]) -> bool:
    return any(
        isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in names
        for s in stmts
        for n in gast.walk(s)
    )


def _as_if(stmt: Any) -> Any:
    """``g = A if c else B`` (``A``, ``B`` references) as ``if c: g = A else: g = B``."""
    value = stmt.value
    if not (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
        and isinstance(value, gast.IfExp)
        and _reference(value.body)
        and _reference(value.orelse)
    ):
        return stmt

    def bind(v: Any) -> Any:
        return gast.copy_location(
            gast.Assign(targets=[copy.deepcopy(stmt.targets[0])], value=v, type_comment=None),
            stmt,
        )

    branch = gast.If(test=value.test, body=[bind(value.body)], orelse=[bind(value.orelse)])
    return gast.copy_location(branch, stmt)


def _split(stmts: list[Any], budget: list[int]) -> list[Any]:
    out: list[Any] = []
    for i, stmt in enumerate(stmts):
        rest = stmts[i + 1 :]
        if isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.IfExp):
            shaped = _as_if(stmt)
            if shaped is not stmt and _called(rest, _chosen([shaped])):
                stmt = shaped
        if isinstance(stmt, gast.If):
            chosen = _chosen([stmt])
            size = sum(1 for s in rest for _ in gast.walk(s))
            if chosen and budget[0] > 0 and size <= _MAX_NODES and _called(rest, chosen):
                budget[0] -= 1
                stmt.body = _split([*stmt.body, *copy.deepcopy(rest)], budget)
                stmt.orelse = _split([*stmt.orelse, *copy.deepcopy(rest)], budget)
                out.append(stmt)
                return out  # what followed is inside it now
            stmt.body = _split(stmt.body, budget)
            stmt.orelse = _split(stmt.orelse, budget)
        elif isinstance(stmt, (gast.For, gast.While)):
            stmt.body = _split(stmt.body, budget)
            stmt.orelse = _split(stmt.orelse, budget)
        out.append(stmt)
    return out


def split_on_chosen_functions(fn: Any) -> None:
    """Copy the statements after each ``if`` that chooses a function into its paths, in the
    function ``fn`` (a gast ``FunctionDef``), in place."""
    fn.body = _split(fn.body, [_MAX_SPLITS])
