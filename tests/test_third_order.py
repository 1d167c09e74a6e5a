"""Third (and fourth) derivatives through loops, branches, while loops, in-place writes, lists
and checkpointed loops, in both orders: reverse over reverse over reverse
(``grad(grad(grad(f)))``) and forward over reverse over reverse (``jvp`` of
``grad(grad(f))``).

The second-order code of a loop keeps Python lists (the stack of saved values, the
cotangents of lists) and calls adgen's list helpers (``rt.split_last``, ``rt.accumulate``);
differentiating it again needs their rules and a tangent sum that adds lists item by item.
The references are exact: Taylor coefficients propagated through the same computation by a
small truncated-power-series class (no finite differences).
"""

import math

import numpy as np
import pytest

import adgen


class Jet:
    """A truncated Taylor series c[0] + c[1] t + ... + c[n-1] t^(n-1) in one variable t."""

    def __init__(self, c):
        self.c = [float(v) for v in c]

    def lift(self, v):
        return v if isinstance(v, Jet) else Jet([v] + [0.0] * (len(self.c) - 1))

    def __add__(self, o):
        return Jet([a + b for a, b in zip(self.c, self.lift(o).c, strict=True)])

    __radd__ = __add__

    def __neg__(self):
        return Jet([-a for a in self.c])

    def __sub__(self, o):
        return self + -self.lift(o)

    def __mul__(self, o):
        o = self.lift(o)
        return Jet([sum(self.c[i] * o.c[k - i] for i in range(k + 1)) for k in range(len(self.c))])

    __rmul__ = __mul__

    def __gt__(self, o):
        return self.c[0] > (o.c[0] if isinstance(o, Jet) else o)

    def derivative(self, k):
        return math.factorial(k) * self.c[k]


def _series(x, first, step):
    """Coefficients of g(x(t)) from g(x0) and the rule g' = step(g-coefficients) x'."""
    n = len(x.c)
    out = [first] + [0.0] * (n - 1)
    for k in range(1, n):
        out[k] = step(out, k)
    return out


def jsin_cos(x):
    n = len(x.c)
    s, c = [math.sin(x.c[0])] + [0.0] * (n - 1), [math.cos(x.c[0])] + [0.0] * (n - 1)
    for k in range(1, n):
        s[k] = sum(j * x.c[j] * c[k - j] for j in range(1, k + 1)) / k
        c[k] = -sum(j * x.c[j] * s[k - j] for j in range(1, k + 1)) / k
    return Jet(s), Jet(c)


def jexp(x):
    e = _series(
        x, math.exp(x.c[0]), lambda e, k: sum(j * x.c[j] * e[k - j] for j in range(1, k + 1)) / k
    )
    return Jet(e)


# -- the functions, and the same computation on jets ---------------------------------------
def loop(x):
    s = x
    for i in range(3):
        s = np.sin(s) * x
    return s


def loop_jet(x):
    s = x
    for i in range(3):
        s = jsin_cos(s)[0] * x
    return s


def branch_in_loop(x):
    s = x
    for i in range(4):
        if s > 0.3:
            s = np.sin(s) * x
        else:
            s = np.cos(s) + x * s
    return s


def branch_in_loop_jet(x):
    s = x
    for i in range(4):
        if s > 0.3:
            s = jsin_cos(s)[0] * x
        else:
            s = jsin_cos(s)[1] + x * s
    return s


def while_loop(x):
    s = x
    k = 0
    while k < 3:
        s = np.exp(-s * s) * x + s
        k = k + 1
    return s


def while_loop_jet(x):
    s = x
    for k in range(3):
        s = jexp(-(s * s)) * x + s
    return s


def in_place(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = np.sin(x * (i + 1))
        if i > 0:
            y[i] = y[i] * y[i - 1]
    return np.sum(y * y)


def in_place_jet(x):
    y = [0.0] * 3
    for i in range(3):
        y[i] = jsin_cos(x * (i + 1))[0]
        if i > 0:
            y[i] = y[i] * y[i - 1]
    return y[0] * y[0] + y[1] * y[1] + y[2] * y[2]


def list_concatenated(x):
    xs = []
    s = x
    for i in range(3):
        s = np.sin(s) * x
        xs = xs + [s * s]
    return sum(xs)


def list_stacked(x):
    xs = []
    s = x
    for i in range(3):
        s = np.sin(s) * x
        xs.append(s)
    return np.sum(np.stack(xs) ** 2)


def squares_jet(x):
    s, total = x, 0.0
    for i in range(3):
        s = jsin_cos(s)[0] * x
        total = total + s * s
    return total


def checkpointed(x):
    s = x
    for i in adgen.checkpoint(range(6)):
        s = np.sin(s) * x
    return s


def checkpointed_jet(x):
    s = x
    for i in range(6):
        s = jsin_cos(s)[0] * x
    return s


CASES = [
    (loop, loop_jet),
    (branch_in_loop, branch_in_loop_jet),
    (while_loop, while_loop_jet),
    (in_place, in_place_jet),
    (list_concatenated, squares_jet),
    (list_stacked, squares_jet),
    (checkpointed, checkpointed_jet),
]


def exact(jet_fn, x, k):
    return jet_fn(Jet([x, 1.0] + [0.0] * (k - 1))).derivative(k)


@pytest.mark.parametrize("fn, jet_fn", CASES, ids=[c[0].__name__ for c in CASES])
def test_third_derivative_both_orders(fn, jet_fn):
    x = 0.4  # branch_in_loop takes both branches from here
    g2 = adgen.grad(adgen.grad(fn))
    expected = exact(jet_fn, x, 3)
    assert adgen.grad(g2)(x) == pytest.approx(expected, rel=1e-10, abs=1e-12)
    assert adgen.jvp(g2, (x,), (1.0,))[1] == pytest.approx(expected, rel=1e-10, abs=1e-12)
    # and the orders below stay right
    assert g2(x) == pytest.approx(exact(jet_fn, x, 2), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("fn, jet_fn", [(loop, loop_jet), (list_stacked, squares_jet)])
def test_fourth_derivative_forward_over_or_refused(fn, jet_fn):
    """The third-order code binds lists it changes in place to second names; reverse mode
    over it is refused by name (it would treat one list as two: list_stacked came out wrong
    before the refusal), forward mode over it is exact."""
    g3 = adgen.grad(adgen.grad(adgen.grad(fn)))
    x = 0.4
    assert adgen.jvp(g3, (x,), (1.0,))[1] == pytest.approx(exact(jet_fn, x, 4), rel=1e-9)
    with pytest.raises(adgen.UnsupportedSyntaxError, match="list bound to a second name"):
        adgen.grad(g3)(x)


def test_third_derivative_of_an_array_function_along_a_direction():
    # d^3/dt^3 f(x0 + t v): a loop over arrays, differentiated in t
    x0 = np.array([0.3, -0.5, 0.8])
    v = np.array([1.0, 0.5, -0.25])

    def along(t):
        h = x0 + t * v
        for i in range(3):
            h = np.tanh(h * h[::-1] + 0.1)
        return np.sum(h * h)

    g2 = adgen.grad(adgen.grad(along))
    h = 1e-4
    numeric = (g2(h) - g2(-h)) / (2 * h)
    assert adgen.grad(g2)(0.0) == pytest.approx(numeric, rel=1e-6)
    assert adgen.jvp(g2, (0.0,), (1.0,))[1] == pytest.approx(numeric, rel=1e-6)
