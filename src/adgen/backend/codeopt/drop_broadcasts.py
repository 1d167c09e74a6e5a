"""Drop a ``np.broadcast_to`` whose result meets, in elementwise arithmetic, an array of
the very shape it broadcasts to: the operator broadcasts it the same way.

Derivative code specialised for shapes spreads a reduced cotangent back with
``np.broadcast_to(g, S)`` (:mod:`adgen.rules.known`), and
:mod:`~adgen.backend.codeopt.fuse_temporaries` then writes it into the product that reads
it: ``np.broadcast_to(g / s, (32, 10)) * e``. Where ``e`` has shape ``(32, 10)`` (the
shapes ``known`` gives, or those elementwise arithmetic of such names has), ``(g / s) * e``
has the same values, shape and dtype, without the call (about 2.5 us for small arrays).
Code for NumPy arrays of known shapes only (the reverse and forward modes run it with
:mod:`~adgen.backend.codeopt.reuse_buffers`). The same for ``np.full(S, g, dtype=np.float64)``
(the cotangent of ``np.sum`` spread over the array it summed) meeting float64 arrays of shape
``S``: ``g / c`` has the values of the filled array divided by ``c``, without making it
(not for a float32 ``c``, where a Python number ``g`` would keep the result float32).

>>> print(drop_broadcasts(
...     "def f_vjp(e, g, s):\\n"
...     "    # adjoint of line 2\\n"
...     "    a = np.broadcast_to(g / s, (32, 10)) * e\\n"
...     "    b = np.broadcast_to(g, (32, 10)) + np.broadcast_to(s, (32, 10))\\n"
...     "    c = np.full((32, 10), 2.0, dtype=np.float64) / e\\n"
...     "    return a, b, c\\n",
...     {"e": ((32, 10), "float64"), "g": ((32, 1), "float64"), "s": ((32, 1), "float64")},
... ), end="")
def f_vjp(e, g, s):
    # adjoint of line 2
    a = g / s * e
    b = np.broadcast_to(g, (32, 10)) + np.broadcast_to(s, (32, 10))
    c = 2.0 / e
    return a, b, c
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from adgen.backend.codeopt.common import rewrite_rows
from adgen.pyast import dotted_text
from adgen.rules.known import elementwise_shape

_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def drop_broadcasts(source: str, known: Mapping[str, tuple[tuple[int, ...], str]]) -> str:
    """``source`` without the ``np.broadcast_to`` calls an operator's other operand makes
    redundant (see the module's documentation)."""
    if ("np.broadcast_to(" not in source and "np.full(" not in source) or not known:
        return source

    def rewrite(stmt: ast.stmt) -> bool:
        dropper = _Dropper(known)
        dropper.visit(stmt)
        return bool(dropper.dropped)

    return rewrite_rows(source, ("np.broadcast_to(", "np.full("), rewrite)


def _target(node: ast.expr) -> tuple[ast.expr, tuple[int, ...]] | None:
    """``(e, S)`` for ``np.broadcast_to(e, S)`` with ``S`` a literal tuple of integers."""
    if not (
        isinstance(node, ast.Call)
        and dotted_text(node.func) == "np.broadcast_to"
        and len(node.args) == 2
        and not node.keywords
    ):
        return None
    try:
        shape = ast.literal_eval(node.args[1])
    except ValueError:
        return None
    if not (isinstance(shape, tuple) and all(type(n) is int for n in shape)):
        return None
    return node.args[0], shape


def _filled(node: ast.expr) -> tuple[ast.expr, tuple[int, ...]] | None:
    """``(v, S)`` for ``np.full(S, v, dtype=np.float64)`` with ``S`` a literal tuple of
    integers (a cotangent spread over the summed array: the adjoint of ``np.sum``)."""
    if not (
        isinstance(node, ast.Call)
        and dotted_text(node.func) == "np.full"
        and len(node.args) == 2
        and len(node.keywords) == 1
        and node.keywords[0].arg == "dtype"
        and dotted_text(node.keywords[0].value) == "np.float64"
    ):
        return None
    try:
        shape = ast.literal_eval(node.args[0])
    except ValueError:
        return None
    if not (isinstance(shape, tuple) and shape and all(type(n) is int for n in shape)):
        return None  # (shape (): the result would be a number of another type)
    return node.args[1], shape


def _float64(expr: ast.expr, known: Mapping[str, tuple[tuple[int, ...], str]]) -> bool:
    """Is every name ``expr`` reads a float64 array (so that its arithmetic with a number
    is float64 too, as with an array of that number)?"""
    return all(
        known.get(n.id, ((), ""))[1] == "float64"
        for n in ast.walk(expr)
        if isinstance(n, ast.Name) and n.id != "np"
    )


class _Dropper(ast.NodeTransformer):
    def __init__(self, known: Mapping[str, tuple[tuple[int, ...], str]]) -> None:
        self.known = known
        self.dropped = 0

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, _OPERATORS):
            return node
        for side, other in (("left", node.right), ("right", node.left)):
            found = _target(getattr(node, side))
            if found is None or _target(other) is not None:
                continue
            inner, shape = found
            if elementwise_shape(other, self.known) == shape:
                setattr(node, side, inner)
                self.dropped += 1
                break
        else:  # `np.full(S, g, dtype=np.float64) / c` of a float64 `c` of shape S: `g / c`
            for side, other in (("left", node.right), ("right", node.left)):
                filled = _filled(getattr(node, side))
                if filled is None or not _float64(other, self.known):
                    continue
                if elementwise_shape(other, self.known) == filled[1]:
                    setattr(node, side, filled[0])
                    self.dropped += 1
                    break
        return node
