"""Helpers of the arithmetic rules (:mod:`adgen.rules.arithmetic`).

``rt.power`` is ``x ** y`` as the derivative code of a power needs it: IEEE ``pow`` at a
zero base, where Python raises.
"""

from __future__ import annotations

import math
from typing import Any


def power(x: Any, y: Any) -> Any:
    """``x ** y``, except that a zero Python number raised to a negative power is ``inf`` as
    in IEEE ``pow`` (``-inf`` for ``-0.0`` and an odd integer power) instead of Python's
    ``ZeroDivisionError``. Arrays and NumPy scalars get ``**`` itself. Derivative code of a
    power evaluates ``x ** (y - 1)``, infinite at ``x == 0`` for ``y < 1``.

    >>> import numpy as np
    >>> power(0.0, -0.5), power(-0.0, -1), power(4.0, 0.5), power(np.float64(0.0), 2)
    (inf, -inf, 2.0, np.float64(0.0))
    """
    try:
        return x**y
    except ZeroDivisionError:
        odd = float(y).is_integer() and int(y) % 2 == 1
        return math.copysign(math.inf, x) if odd else math.inf
