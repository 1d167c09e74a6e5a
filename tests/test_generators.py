"""Generators a program consumes where it calls them (issue 34: real programs as written).

A ``for`` loop over a generator call runs its body where the generator yields, as Python
interleaves them; ``list``/``tuple``/``sum``... of a generator call take every item at once.
Each derivative is checked in both modes against a closed form or central differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from derivative_checks import check

import adgen

SHAPES = [(3, 4), (4, 2)]
SIZE = sum((m + 1) * n for m, n in SHAPES)
X = np.random.default_rng(0).normal(size=(5, 3))


def unpack_layers(weights):
    # (autograd's Bayesian neural network example, as written there)
    num_weight_sets = len(weights)
    for m, n in SHAPES:
        yield (
            weights[:, : m * n].reshape((num_weight_sets, m, n)),
            weights[:, m * n : m * n + n].reshape((num_weight_sets, 1, n)),
        )
        weights = weights[:, (m + 1) * n :]


def predictions(weights, inputs):
    inputs = np.expand_dims(inputs, 0)
    for W, b in unpack_layers(weights):
        outputs = np.einsum("mnd,mdo->mno", inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def network_energy(weights):
    return np.sum(predictions(weights, X) ** 2)


def test_a_loop_over_a_generator_of_layer_weights():
    check(network_energy, np.random.default_rng(1).normal(size=(2, SIZE)))


def traced_rows(x):
    for i in range(x.shape[0]):
        print("yield", i, end="; ")
        if i % 2 == 0:
            yield 2.0 * x[i]
        else:
            yield x[i] / 2.0


def interleaved(x):
    total = 0.0
    for row in traced_rows(x):
        print("body", end="; ")
        total = total + np.sum(row**2)
    return total


def test_the_loop_body_runs_where_the_generator_yields_as_python_interleaves_them(capsys):
    x = np.random.default_rng(2).normal(size=(4, 3))
    factors = np.array([2.0, 0.5, 2.0, 0.5])[:, None]
    capsys.readouterr()
    adgen.grad(interleaved)(x)
    assert capsys.readouterr().out == "".join(f"yield {i}; body; " for i in range(4))
    check(interleaved, x, 2 * factors**2 * x)


def rows_of(y):
    for i in range(y.shape[0]):
        yield y[i]


def written_while_iterated(x):
    y = x * 1.0
    total = 0.0
    i = 0
    for row in rows_of(y):
        total = total + np.sum(row)
        if i + 1 < y.shape[0]:
            y[i + 1] = y[i + 1] + row
        i = i + 1
    return total


def test_writing_into_the_array_a_generator_reads_is_refused():
    with pytest.raises(adgen.AdgenError, match="in-place write into `y`"):
        adgen.grad(written_while_iterated)(np.ones((3, 2)))


def squares(x):
    for v in x:
        yield v * v


def consumed_at_once(x):
    return np.sum(np.stack(list(squares(x)))) + sum(squares(x[:2])) + max(squares(x))


def test_a_generator_taken_whole_by_list_sum_and_max():
    x = np.array([0.5, -1.5, 2.0])
    want = 2 * x + 2 * x * (np.arange(3) < 2) + 2 * x * (x**2 == np.max(x**2))
    check(consumed_at_once, x, want)


def stops_early(x):
    total = 0.0
    for v in squares(x):
        if v > 1.0:
            break
        total = total + v
    return total


def kept_for_later(x):
    items = squares(x)
    return sum(items)


def yields_from(x):
    yield from squares(x)


def delegated(x):
    return sum(v for v in yields_from(x))


@pytest.mark.parametrize(
    "f, words",
    [
        (stops_early, "`break` in a loop over the generator `squares`"),
        (kept_for_later, "`yield`"),
        (delegated, "does more than yield values"),
    ],
)
def test_other_uses_of_generators_are_refused_by_name(f, words):
    with pytest.raises(adgen.AdgenError, match=words):
        adgen.grad(f)(np.array([0.5, -1.5, 2.0]))
