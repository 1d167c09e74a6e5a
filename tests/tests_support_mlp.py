"""A two-layer network's loss, in its own module so that adgen reads its source (used by
``tests/test_codeopt.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np


def mlp_loss(w: Any, X: Any, Y: Any) -> Any:
    W1 = np.reshape(w[:6], (3, 2))
    W2 = np.reshape(w[6:], (2, 3))
    H = np.tanh(X @ W1)
    return np.sum((H @ W2 - Y) ** 2) / X.shape[0]
