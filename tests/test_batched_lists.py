"""Lists the function builds, in batched forward mode (``adgen.jacfwd``, ``adgen.hessian``):
a list's tangent is a list of batches, one per item, so an item is read (``xs[k]``) and
written (``xs[k] = v``) by its index alone, never as ``x_dot[:, k]`` of an array. (Each of
these programs crashed in ``jacfwd`` before: "list indices must be integers or slices".)
Checked against one forward pass per column, reverse mode, and differences of the
gradient."""

from __future__ import annotations

import numpy as np
import pytest

import adgen


def appended(y):
    hs = []
    h = y
    for _ in range(3):
        h = np.tanh(h * 0.5 + y)
        hs.append(h)
    total = y * 0.0
    for k in range(len(hs)):
        total = total + hs[k] * (k + 1)
    return total


def written_in_a_loop(y):
    xs = [y, y * 2.0, y * y]
    for k in range(3):
        xs[k] = np.sin(xs[k]) + xs[(k + 1) % 3]
    return xs[0] * xs[1] + xs[2]


def popped(y):
    stack = [y * 1.0]
    for _ in range(2):
        stack.append(np.cos(stack[-1]) * y)
    a = stack.pop()
    b = stack.pop()
    return a * b + stack[0]


def rows_of_several_shapes(y):
    rows = [y[:2], y[2:] * 2.0, y[0]]
    rows[0] = rows[0] * rows[1] + rows[2]
    return np.concatenate([rows[0], rows[1] ** 2])


def read_at_a_run_time_index(y):
    xs = [y, y * 0.5, y]
    xs[1] = xs[1] * xs[2]
    v = y * 0.0
    for k in range(len(xs)):
        v = v + xs[k] * k
    return v


PROGRAMS = [appended, written_in_a_loop, popped, rows_of_several_shapes]
PROGRAMS += [read_at_a_run_time_index]
Y = np.array([0.3, -0.2, 0.5, 0.1])


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_jacfwd_of_a_list_built_in_the_function(f):
    jac = adgen.jacfwd(f)(Y)
    columns = np.stack([adgen.jvp(f, (Y,), (e,))[1] for e in np.eye(Y.size)], axis=-1)
    np.testing.assert_allclose(jac, columns, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jac, adgen.jacrev(f)(Y), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_hessian_through_a_list_built_in_the_function(f):
    def loss(z):
        return np.sum(f(z) ** 2)

    grad = adgen.grad(loss)
    h = 1e-6
    want = np.stack([(grad(Y + h * e) - grad(Y - h * e)) / (2 * h) for e in np.eye(Y.size)])
    np.testing.assert_allclose(adgen.hessian(loss)(Y), want, rtol=1e-6, atol=1e-8)


def test_a_list_item_is_written_by_its_index_in_batched_code():
    code = adgen.source(written_in_a_loop, args=(Y,), mode="forward_batched")
    assert "run once per tangent" not in code
    assert "for k_1 in range(batch)" not in code  # (no loop over the batch for the write)
