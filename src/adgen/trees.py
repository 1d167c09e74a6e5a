"""Arguments that are dicts, lists or tuples of arrays ("trees").

adgen differentiates functions of trees by flattening them at the boundary: each leaf
becomes a parameter of the generated code (``params["W"]`` is the parameter
``params_W``), and gradients are put back into the same structure.

>>> desc = describe({"W": 1.0, "b": (2.0, 3.0)})
>>> desc
('dict', ('W', 'b'), (('leaf',), ('tuple', (('leaf',), ('leaf',)))))
>>> flatten({"W": 1.0, "b": (2.0, 3.0)}, desc)
[1.0, 2.0, 3.0]
>>> unflatten(desc, [10.0, 20.0, 30.0])
{'W': 10.0, 'b': (20.0, 30.0)}
>>> leaf_names("params", desc)
['params_W', 'params_b_0', 'params_b_1']
"""

from __future__ import annotations

import re
from typing import Any

Desc = tuple[Any, ...]
LEAF: Desc = ("leaf",)


def describe(value: Any) -> Desc:
    """The structure of ``value``: nested dicts (string keys), lists and tuples; else a leaf."""
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        keys = tuple(value)
        return ("dict", keys, tuple(describe(value[k]) for k in keys))
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return (type(value).__name__, tuple(describe(v) for v in value))
    return LEAF


def is_tree(desc: Desc) -> bool:
    return desc != LEAF


def flatten(value: Any, desc: Desc) -> list[Any]:
    if desc == LEAF:
        return [value]
    if desc[0] == "dict":
        return [leaf for k, d in zip(desc[1], desc[2]) for leaf in flatten(value[k], d)]
    return [leaf for v, d in zip(value, desc[1]) for leaf in flatten(v, d)]


def count(desc: Desc) -> int:
    if desc == LEAF:
        return 1
    children = desc[2] if desc[0] == "dict" else desc[1]
    return sum(count(d) for d in children)


def unflatten(desc: Desc, leaves: list[Any]) -> Any:
    if desc == LEAF:
        return leaves[0]
    children = desc[2] if desc[0] == "dict" else desc[1]
    parts, at = [], 0
    for d in children:
        n = count(d)
        parts.append(unflatten(d, leaves[at : at + n]))
        at += n
    if desc[0] == "dict":
        return dict(zip(desc[1], parts))
    return tuple(parts) if desc[0] == "tuple" else list(parts)


def leaf_names(base: str, desc: Desc) -> list[str]:
    """Parameter names for the leaves: ``params_W``, ``params_b_0`` ..."""
    if desc == LEAF:
        return [base]
    if desc[0] == "dict":
        keys = [re.sub(r"\W", "_", k) or "key" for k in desc[1]]
        return [n for k, d in zip(keys, desc[2]) for n in leaf_names(f"{base}_{k}", d)]
    return [n for i, d in enumerate(desc[1]) for n in leaf_names(f"{base}_{i}", d)]


def leaf_reads(base: str, desc: Desc) -> list[str]:
    """Source expressions reading each leaf of the tree named ``base``, in order.

    >>> leaf_reads("params", ("dict", ("W", "b"), (("leaf",), ("tuple", (("leaf",), ("leaf",))))))
    ["params['W']", "params['b'][0]", "params['b'][1]"]
    """
    if desc == LEAF:
        return [base]
    if desc[0] == "dict":
        return [r for k, d in zip(desc[1], desc[2]) for r in leaf_reads(f"{base}[{k!r}]", d)]
    return [r for i, d in enumerate(desc[1]) for r in leaf_reads(f"{base}[{i}]", d)]


def display(desc: Desc, leaves: list[str]) -> str:
    """The source expression of a tree of ``desc``'s structure holding the expressions
    ``leaves``.

    >>> display(("dict", ("W", "b"), (("leaf",), ("list", (("leaf",),)))), ["gW", "gb"])
    "{'W': gW, 'b': [gb]}"
    """
    return _source(unflatten(desc, leaves))


def _source(tree: Any) -> str:
    """Source text of a tree whose leaves are source expressions (strings)."""
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_source(v)}" for k, v in tree.items()) + "}"
    if isinstance(tree, tuple):
        return "(" + ", ".join(_source(v) for v in tree) + ("," if len(tree) == 1 else "") + ")"
    if isinstance(tree, list):
        return "[" + ", ".join(_source(v) for v in tree) + "]"
    return str(tree)
