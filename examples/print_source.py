"""Print the derivative code adgen generates for a small function, in both modes.

Run: python examples/print_source.py   (or, without running anything:
python -m adgen examples/print_source.py)
"""

import numpy as np

import adgen


@adgen.differentiate(wrt=("x1", "x2"))
def f(x1, x2):
    """The AD survey's running example: f(x1, x2) = ln(x1) + x1 x2 - sin(x2)."""
    return np.log(x1) + x1 * x2 - np.sin(x2)


if __name__ == "__main__":
    print("Evaluation trace at (2, 5):")
    print(adgen.trace(f, 2.0, 5.0))
    print()
    print(f.source(mode="forward"))
    print(f.source(mode="reverse"))
    print("gradient at (2, 5):", f.grad(2.0, 5.0))
