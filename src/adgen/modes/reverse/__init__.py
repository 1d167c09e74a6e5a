"""Reverse mode: emit a forward sweep followed by an adjoint sweep.

For ``f(x, y)`` differentiated w.r.t. ``x`` the generated
``f_vjp(x, y, out_bar)`` returns ``(f(x, y), (x_bar,))`` where ``x_bar`` is the
vector-Jacobian product ``out_bar . J_x f``. Adjoints exist only for values
that depend on a differentiated input *and* reach the result; the first
contribution to an adjoint assigns it, later ones add to it (never in place,
so no array the caller passed is ever written). Each original line's adjoint
statements stand under a comment quoting it, in reverse order. The forward
sweep deletes each value the adjoint sweep does not read after its last use
(scalars excepted), so only what the adjoint needs is kept.

Control flow is replayed backwards: a branch is re-taken on its (restored)
condition, a ``for`` loop runs over ``reversed(...)`` of its range, a ``while``
loop runs as many times as the forward sweep counted. A name rebound inside a
block whose old value the adjoint sweep reads is pushed on a stack (a Python
list of references, no copies) before it is overwritten, and popped back when
the adjoint sweep passes that assignment.

>>> import numpy as np
>>> from adgen.frontend.parse import parse_function
>>> from adgen.frontend.lower import lower
>>> def f(x1, x2):
...     return np.log(x1) + x1 * x2 - np.sin(x2)
>>> print(reverse(lower(parse_function(f)), ["x1", "x2"]).source)  # doctest: +ELLIPSIS
# adgen: reverse mode (vector-Jacobian product) of f (<doctest ...>:1) w.r.t. x1, x2
def f_vjp(x1, x2, out_bar):
    # line 2: return np.log(x1) + x1 * x2 - np.sin(x2)
    out_1 = np.log(x1)
    out_1_like = rt.Like(out_1)
    out_4 = np.sin(x2)
    out_4_like = rt.Like(out_4)
    out = out_1 + x1 * x2 - out_4
    del out_1, out_4
    # adjoint of line 2: return np.log(x1) + x1 * x2 - np.sin(x2)
    out_4_bar = -rt.unbroadcast(out_bar, out_4_like)
    x2_bar = out_4_bar * np.cos(x2)
    out_1_bar = rt.unbroadcast(out_bar, out_1_like)
    x1_bar = rt.unbroadcast(out_bar * x2, x1)
    x2_bar = x2_bar + rt.unbroadcast(out_bar * x1, x2)
    x1_bar = x1_bar + out_1_bar / x1
    return (out, (x1_bar, x2_bar))
<BLANKLINE>

Values whose adjoint needs only their shape are kept as ``rt.Like`` (shape and dtype), and
``del`` lines free each array after its last use (:mod:`adgen.backend.codeopt`).
The parts, each building on the ones before:

* :mod:`adgen.modes.reverse.blocks`: what the function's blocks bind and read (which values a
  checkpointed loop's snapshot holds, which are local to one loop iteration);
* :mod:`adgen.modes.reverse.state`: what writing one function keeps track of (saved names,
  the name holding each adjoint so far) and adding a contribution to an adjoint;
* :mod:`adgen.modes.reverse.assignments`: the adjoint of each kind of assignment (a rule's call,
  an in-place write, a list's append and pop, a call kept as a call);
* :mod:`adgen.modes.reverse.sweeps`: the forward and adjoint sweeps over blocks (branches, loops,
  checkpointed loops);
* :mod:`adgen.modes.reverse.vjp`: :func:`reverse`, the whole function: what reverse mode
  refuses, which names are saved, the code around the two sweeps, and the passes over it.
"""

from adgen.modes.reverse.vjp import reverse

__all__ = ["reverse"]
