"""Call a reduction as its ufunc's own method: ``np.sum(a, axis)`` is ``np.add.reduce(a,
axis)``.

``np.sum`` of a NumPy array checks its arguments in Python (``_wrapreduction``: about 1.3 us)
before it calls ``np.add.reduce``; the result is that call's, bit for bit. Derivative code of
small functions pays that check at every call (a log-likelihood's ``np.sum(resid ** 2)``),
so in code specialised for NumPy arrays of known shapes this pass calls the ufunc's method
directly, where every name the summed expression reads is such an array (or a number):
``np.sum``, ``np.prod``, ``np.max``/``np.amax`` and ``np.min``/``np.amin`` with at most an axis
and ``keepdims``. Code adgen reads again is not given this pass (``np.add.reduce`` has no
rule of its own).

>>> print(direct_reductions(
...     "def f_vjp(r, g):\\n"
...     "    s = np.sum(r ** 2)\\n"
...     "    t = np.max(r * g, axis=0, keepdims=True)\\n"
...     "    u = np.sum(g, dtype=np.float32)\\n"
...     "    v = np.sum(np.exp(g), 1) + np.sum(h)\\n"
...     "    return s, t, u, v\\n",
...     {"r": ((5, 3), "float64"), "g": ((5, 3), "float64")},
... ), end="")
def f_vjp(r, g):
    s = np.add.reduce(r ** 2, None)
    t = np.maximum.reduce(r * g, 0, keepdims=True)
    u = np.sum(g, dtype=np.float32)
    v = np.add.reduce(np.exp(g), 1) + np.sum(h)
    return s, t, u, v
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from adgen.backend.codeopt.common import _dotted, _ufunc

_REDUCERS = {
    "np.sum": "add",
    "np.prod": "multiply",
    "np.max": "maximum",
    "np.amax": "maximum",
    "np.min": "minimum",
    "np.amin": "minimum",
}
_ARITHMETIC = (ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop, ast.Load)


def direct_reductions(source: str, known: Mapping[str, tuple[tuple[int, ...], str]]) -> str:
    """``source`` with its reductions of NumPy arrays called as ufunc methods (see the
    module's documentation); the statements it does not change, and the comments, as they
    are."""
    if not known or not any(f"{name}(" in source for name in _REDUCERS):
        return source
    arrays = {name for name, (shape, _) in known.items() if isinstance(shape, tuple)}
    rows = source.split("\n")
    for i, row in enumerate(rows):
        if not any(f"{name}(" in row for name in _REDUCERS) or row.lstrip().startswith("#"):
            continue
        try:  # (one simple statement per line: headers of blocks do not parse alone)
            tree = ast.parse(row.strip())
        except SyntaxError:
            continue
        if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.Assign, ast.Return)):
            continue
        rewriter = _Rewriter(arrays)
        rewriter.visit(tree)
        if rewriter.changed:
            rows[i] = row[: len(row) - len(row.lstrip())] + ast.unparse(tree.body[0])
    return "\n".join(rows)


class _Rewriter(ast.NodeTransformer):
    def __init__(self, arrays: set[str]) -> None:
        self.arrays = arrays
        self.changed = False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        ufunc = _REDUCERS.get(_dotted(node.func))
        options = {k.arg for k in node.keywords}
        if (
            ufunc is None
            or not 1 <= len(node.args) <= 2
            or not options <= {"axis", "keepdims"}
            or (len(node.args) == 2 and "axis" in options)
            or not self.of_arrays(node.args[0])
        ):
            return node
        axis = node.args[1] if len(node.args) == 2 else None
        for k in node.keywords:
            if k.arg == "axis":
                axis = k.value
        keepdims = [k for k in node.keywords if k.arg == "keepdims"]
        self.changed = True
        method = ast.Attribute(
            value=ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()), attr=ufunc),
            attr="reduce",
            ctx=ast.Load(),
        )
        first = node.args[0]
        return ast.Call(
            func=method, args=[first, axis or ast.Constant(value=None)], keywords=keepdims
        )

    def of_arrays(self, expr: ast.expr) -> bool:
        """Is ``expr`` arithmetic (and elementwise ufuncs) of known NumPy arrays and numbers
        only, so that its value is a NumPy array or scalar?"""
        modules = {id(n.value) for n in ast.walk(expr) if isinstance(n, ast.Attribute)}
        for n in ast.walk(expr):
            if isinstance(n, ast.Name):
                if n.id not in self.arrays and id(n) not in modules:
                    return False
            elif isinstance(n, ast.Call):
                if _ufunc(n.func) is None or n.keywords:
                    return False
            elif isinstance(n, ast.Attribute):
                if not (isinstance(n.value, ast.Name) and n.value.id == "np"):
                    return False
            elif not isinstance(n, _ARITHMETIC):
                return False
        return True
