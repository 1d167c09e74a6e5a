"""Branches the call's shapes decide, replaced by the branch they take.

Library code tests its arguments' shapes and layouts before it computes: scikit-learn's
``safe_sparse_dot`` asks ``a.ndim > 2``, its Huber loss ``X.shape[1] + 2 == w.shape[0]``
(is there an intercept?), SciPy asks ``x.ndim == 1``. Code specialised for the shapes and
dtypes of a call (a ``signature``) knows those answers before it runs: shape inference
(:func:`adgen.middle.shapes.infer`) computes every value the shapes alone determine. An
``if`` whose test is such a value, bound once, becomes the branch it takes -- the other
branch's statements, the saves of the names they bind and the flags reverse mode records
to replay the choice all leave the derivative code, and the optimizer drops what only
fed the test.

>>> import numpy as np
>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> from adgen.middle.shapes import describe
>>> def f(x):
...     if x.ndim == 1:
...         y = np.sin(x)
...     else:
...         y = np.cos(x)
...     return np.sum(y)
>>> print(settle_branches(lower(parse_function(f)), (("x", describe(np.ones(3))),)))
... # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
def f(x):  # <doctest adgen.middle.branches[4]>:1
    cond_... = x.ndim  # line 2
    cond_... = cond_... == 1  # line 2
    y = np.sin(x)  # line 3
    out = np.sum(y)  # line 6
    return out  # line 6

A test the values decide (``if x[0] > 0``), a name bound more than once (a flag of a
loop), and the general code (no signature) are left as they are.
"""

from __future__ import annotations

import dataclasses

from adgen import ir
from adgen.middle.shapes import Signature, infer, taken

# the kinds of value whose truth an ``if`` may be decided by (a shape's number, a flag)
_DECIDABLE = (bool, int, float, type(None), tuple)


def settle_branches(fn: ir.Function, signature: Signature) -> ir.Function:
    """``fn`` with each ``if`` on a test the call's shapes decide replaced by the branch it
    takes (see the module's documentation)."""
    ifs = [s for s in fn.statements() if isinstance(s, ir.If) and isinstance(s.test, ir.Var)]
    if not signature or not ifs:
        return fn
    known = infer(fn, signature)
    counts = ir.binding_counts(fn)
    decided: dict[str, bool] = {}
    for s in ifs:
        name = s.test.name  # type: ignore[union-attr]
        found = known.get(name)
        if found is None or not found.has_value or counts.get(name) != 1:
            continue
        if type(found.value) in _DECIDABLE:
            decided[name] = bool(found.value)
    if not decided:
        return fn
    return dataclasses.replace(fn, body=taken(fn.body, decided))
