"""Call a reduction as the array's method: ``np.sum(a, axis)`` is ``a.sum(axis)``.

``np.sum`` of a NumPy array checks its arguments in Python (``_wrapreduction``: about 1.2 us)
before it calls ``np.add.reduce``; ``a.sum(axis)`` goes there at once, and the result is
that call's, bit for bit. Derivative code of small functions pays the check at every call
(a log-likelihood's ``np.sum(resid ** 2)``), so in code specialised for NumPy arrays of known
shapes this pass calls the method, where the summed expression is arithmetic (and NumPy's
elementwise functions) of such arrays and numbers: ``np.sum``, ``np.prod``, ``np.max``/
``np.amax`` and ``np.min``/``np.amin`` with at most an axis and ``keepdims``. Code adgen
reads again is not given this pass (it is written as the user wrote it).

>>> print(direct_reductions(
...     "def f_vjp(r, g):\\n"
...     "    s = np.sum(r ** 2)\\n"
...     "    t = np.max(r * g, axis=0, keepdims=True)\\n"
...     "    u = np.sum(g, dtype=np.float32)\\n"
...     "    v = np.sum(np.exp(g), 1) + np.sum(h) + np.sum(2.0)\\n"
...     "    return s, t, u, v\\n",
...     {"r": ((5, 3), "float64"), "g": ((5, 3), "float64")},
... ), end="")
def f_vjp(r, g):
    s = (r ** 2).sum()
    t = (r * g).max(axis=0, keepdims=True)
    u = np.sum(g, dtype=np.float32)
    v = np.exp(g).sum(1) + np.sum(h) + np.sum(2.0)
    return s, t, u, v
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from adgen.backend.codeopt.common import _dotted, _ufunc, rewrite_rows

_REDUCERS = {
    "np.sum": "sum",
    "np.prod": "prod",
    "np.max": "max",
    "np.amax": "max",
    "np.min": "min",
    "np.amin": "min",
}
# the array methods it calls (each computes, writing into nothing: codeopt.drop_dead drops one
# nothing reads)
REDUCTION_METHODS = frozenset(_REDUCERS.values())
_ARITHMETIC = (ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop, ast.Load)


def direct_reductions(source: str, known: Mapping[str, tuple[tuple[int, ...], str]]) -> str:
    """``source`` with its reductions of NumPy arrays called as ufunc methods (see the
    module's documentation); the statements it does not change, and the comments, as they
    are."""
    if not known or not any(f"{name}(" in source for name in _REDUCERS):
        return source
    # (arrays of one axis or more: a value of shape () may be a Python number, which has no
    # method; arithmetic of such arrays with numbers is an array of one axis or more too)
    arrays = {name for name, (shape, _) in known.items() if isinstance(shape, tuple) and shape}

    def rewrite(stmt: ast.stmt) -> bool:
        rewriter = _Rewriter(arrays)
        rewriter.visit(stmt)
        return rewriter.changed

    return rewrite_rows(source, tuple(f"{name}(" for name in _REDUCERS), rewrite)


class _Rewriter(ast.NodeTransformer):
    def __init__(self, arrays: set[str]) -> None:
        self.arrays = arrays
        self.changed = False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        method = _REDUCERS.get(_dotted(node.func))
        options = {k.arg for k in node.keywords}
        if (
            method is None
            or not 1 <= len(node.args) <= 2
            or not options <= {"axis", "keepdims"}
            or (len(node.args) == 2 and "axis" in options)
            or not self.of_arrays(node.args[0])
        ):
            return node
        self.changed = True
        called = ast.Attribute(value=node.args[0], attr=method, ctx=ast.Load())
        return ast.Call(func=called, args=node.args[1:], keywords=node.keywords)

    def of_arrays(self, expr: ast.expr) -> bool:
        """Is ``expr`` arithmetic (and elementwise ufuncs) of known NumPy arrays and numbers
        only, so that its value is a NumPy array or scalar?"""
        modules = {id(n.value) for n in ast.walk(expr) if isinstance(n, ast.Attribute)}
        if not any(isinstance(n, ast.Name) and id(n) not in modules for n in ast.walk(expr)):
            return False  # (numbers only: `np.sum(2.0)` of a Python float has no method)
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
