"""NumPy's index tricks ``np.r_[...]`` and ``np.c_[...]`` written as the calls they make.

``np.r_[a, b, c]`` joins its items along the first axis, each made at least 1-d;
``np.c_[a, b]`` joins them along the last axis, each made at least 2-d with a 1-d item as a
column. Both are subscripts of an object, which adgen would read as an index into it; written
as calls of functions with rules, the items' derivatives pass:

>>> import numpy as np
>>> node = gast.parse("np.r_[z, 1 - s]").body[0].value
>>> print(spelled(concatenator_call(np.r_, node)))
np.concatenate([np.atleast_1d(z), np.atleast_1d(1 - s)])
>>> node = gast.parse("np.c_[x, y]").body[0].value
>>> print(spelled(concatenator_call(np.c_, node)))
np.concatenate([np.column_stack((x,)), np.column_stack((y,))], axis=-1)

Items that are slices (``np.r_[0:5]``, a range) or strings (``np.r_['0,2', a]``, directives)
are left to the subscript as written (None).
"""

from __future__ import annotations

import ast
from typing import Any

import gast
import numpy as np

_ROWS = type(np.r_)
_COLUMNS = type(np.c_)


def _call(fn: Any, args: list[Any], keywords: list[Any] | None = None) -> Any:
    """A call of the function ``fn`` itself (a constant the calls' lowering resolves)."""
    return gast.Call(func=gast.Constant(fn, None), args=args, keywords=keywords or [])


def concatenator_call(obj: Any, node: gast.Subscript) -> Any:
    """The call ``obj[...]`` makes for ``obj`` NumPy's ``np.r_`` or ``np.c_`` and items that
    are values; None otherwise."""
    if type(obj) not in (_ROWS, _COLUMNS):
        return None
    index = node.slice
    items = list(index.elts) if isinstance(index, gast.Tuple) else [index]
    for item in items:
        if isinstance(item, gast.Slice) or (
            isinstance(item, gast.Constant) and isinstance(item.value, str)
        ):
            return None
    if type(obj) is _ROWS:
        parts = [_call(np.atleast_1d, [item]) for item in items]
        call = _call(np.concatenate, [gast.List(elts=parts, ctx=gast.Load())])
    else:
        parts = [
            _call(np.column_stack, [gast.Tuple(elts=[item], ctx=gast.Load())]) for item in items
        ]
        axis = gast.keyword(arg="axis", value=gast.Constant(-1, None))
        call = _call(np.concatenate, [gast.List(elts=parts, ctx=gast.Load())], [axis])
    return gast.copy_location(call, node)


def spelled(node: Any) -> str:
    """The source of a call :func:`concatenator_call` made, its functions named ``np.<name>``."""
    tree = gast.gast_to_ast(node)
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Constant):
            name = getattr(sub.func.value, "__name__", "?")
            sub.func = ast.Name(id="np." + name, ctx=ast.Load())
    return ast.unparse(tree)
