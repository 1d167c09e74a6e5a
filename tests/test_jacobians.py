"""jacfwd, hessian, jacobian and laplacian by batched passes (adgen.modes.batched): the same
numbers as one pass per column and as the closed forms, in chunks, for code batched mode
runs per tangent or not at all, and never stale when the function or what it reads changes."""

from __future__ import annotations

import numpy as np
import pytest

import adgen


def poisson_loglik(beta, X, y):
    eta = X @ beta
    return np.sum(y * eta - np.exp(eta))


def cumulative_map(x):
    return np.cumsum(np.sin(x) * x) + x**2 / (1.0 + x**2)


def _glm(p: int = 6, n: int = 40) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(p)
    X = rng.normal(size=(n, p)) / np.sqrt(p)
    return 0.1 * rng.normal(size=p), X, rng.poisson(1.0, size=n).astype(float)


@pytest.mark.parametrize("chunk_size", [None, 1, 2, 4, 6, 50])
def test_glm_hessian_is_the_hand_written_one_in_any_chunks(chunk_size):
    beta, X, y = _glm()
    H = adgen.hessian(poisson_loglik, chunk_size=chunk_size)(beta, X, y)
    np.testing.assert_allclose(H, -(X.T * np.exp(X @ beta)) @ X, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("chunk_size", [None, 1, 3])
def test_jacfwd_of_a_map_is_its_closed_form(chunk_size):
    x = np.linspace(-1.0, 2.0, 7)
    J = adgen.jacfwd(cumulative_map, chunk_size=chunk_size)(x)
    d = np.sin(x) + x * np.cos(x)
    expected = np.tril(np.broadcast_to(d, (7, 7))) + np.diag(2.0 * x / (1.0 + x**2) ** 2)
    np.testing.assert_allclose(J, expected, rtol=1e-13, atol=1e-13)


def test_batched_code_reads_tangents_along_a_leading_axis():
    beta, X, y = _glm()
    code = adgen.source(adgen.grad(poisson_loglik), "forward_batched", args=(beta, X, y))
    assert "beta_dot @ np.transpose(X)" in code  # (k, p) tangents through X at once
    assert "return (None," in code  # the gradient itself is not computed: tangents only
    assert "run once per tangent" not in code


def recursive_power(x, k):
    if k == 0:
        return np.ones_like(x)
    return x * recursive_power(x, k - 1)


def test_code_batched_mode_does_not_apply_to_runs_once_per_column_and_says_why():
    x = np.array([0.5, 1.5, 2.0])
    code = adgen.source(recursive_power, "forward_batched", args=(x, 3))
    assert code.startswith("# adgen: jacfwd runs this forward-mode code once per column")
    np.testing.assert_allclose(adgen.jacfwd(recursive_power)(x, 3), np.diag(3 * x**2))


def a_sorted_product(x):
    return np.sort(x) * np.linalg.norm(x)


def test_a_rule_without_a_batched_template_runs_once_per_tangent_in_the_batched_pass():
    x = np.array([0.3, -1.2, 2.5, 0.7])
    code = adgen.source(a_sorted_product, "forward_batched", args=(x,))
    (note,) = [line for line in code.splitlines() if "run once per tangent" in line]
    assert "np.sort" in note
    np.testing.assert_allclose(
        adgen.jacfwd(a_sorted_product)(x),
        adgen.jacfwd(a_sorted_product, chunk_size=1)(x),
        rtol=1e-14,
        atol=1e-14,
    )


def two_results(x, a):
    return np.tanh(a * x), np.sum(x**3)


def test_a_tuple_result_gets_one_jacobian_per_result():
    x, a = np.array([0.1, -0.4, 0.9]), 1.7
    J1, J2 = adgen.jacfwd(two_results)(x, a)
    np.testing.assert_allclose(J1, np.diag(a * (1 - np.tanh(a * x) ** 2)), rtol=1e-13)
    np.testing.assert_allclose(J2, 3 * x**2, rtol=1e-13)


def test_float32_stays_float32_and_a_matrix_argument_keeps_its_shape():
    W = np.arange(6, dtype=np.float32).reshape(2, 3) / 10

    def f(W):
        return np.tanh(W) * 2.0

    J = adgen.jacfwd(f)(W)
    assert J.shape == (2, 3, 2, 3) and J.dtype == np.float32
    expected = np.zeros((2, 3, 2, 3), dtype=np.float32)
    for i in range(2):
        for j in range(3):
            expected[i, j, i, j] = 2.0 * (1 - np.tanh(W[i, j]) ** 2)
    np.testing.assert_allclose(J, expected, rtol=1e-6)


def test_laplacian_is_the_hessians_trace_in_any_chunks():
    beta, X, y = _glm(5)
    trace = np.trace(-(X.T * np.exp(X @ beta)) @ X)
    for chunk_size in (None, 1, 2):
        value = adgen.laplacian(poisson_loglik, chunk_size=chunk_size)(beta, X, y)
        np.testing.assert_allclose(value, trace, rtol=1e-12)


SCALE = 2.0


def scaled(x):
    return SCALE * np.sin(x)


def test_a_global_rebound_between_calls_is_read_again():
    global SCALE
    x = np.array([0.2, 0.4, 0.6])
    jac, hess = adgen.jacfwd(scaled), adgen.hessian(lambda x: np.sum(scaled(x)))
    try:
        for _ in range(2):  # (the second call takes the short way)
            np.testing.assert_allclose(jac(x), np.diag(2.0 * np.cos(x)))
            np.testing.assert_allclose(hess(x), np.diag(-2.0 * np.sin(x)))
        SCALE = 5.0
        np.testing.assert_allclose(jac(x), np.diag(5.0 * np.cos(x)))
        np.testing.assert_allclose(hess(x), np.diag(-5.0 * np.sin(x)))
    finally:
        SCALE = 2.0


def test_new_shapes_after_many_are_still_batched():
    for n in range(2, 14):  # more kinds of arguments than adgen specialises code for at most
        x = np.linspace(0.1, 1.0, n)
        np.testing.assert_allclose(adgen.jacfwd(scaled)(x), np.diag(2.0 * np.cos(x)))
    code = adgen.source(scaled, "forward_batched", args=(np.ones(13),))
    assert "batch" in code and "once per column" not in code


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_chunk_size_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="chunk_size"):
        adgen.jacfwd(cumulative_map, chunk_size=bad)


def states_stacked(x, a):
    states = []
    h = x
    for _ in range(4):
        h = np.tanh(a * h + x)
        states.append(h)
    return np.sum(np.stack(states) ** 2, axis=0) + np.concatenate(states)[:3]


def test_a_list_the_function_builds_is_stacked_in_the_batched_pass():
    x, a = np.array([0.1, -0.3, 0.5]), 0.7
    code = adgen.source(states_stacked, "forward_batched", args=(x, a))
    assert "once per column" not in code and "run once per tangent" not in code
    np.testing.assert_allclose(
        adgen.jacfwd(states_stacked)(x, a),
        adgen.jacfwd(states_stacked, chunk_size=1)(x, a),
        rtol=1e-14,
        atol=1e-14,
    )


def indexed_by_a_tuple(x, i):
    index = (slice(1, 3), i)
    return np.outer(x, x)[index] * 2.0


def test_an_index_held_by_a_name_is_read_per_tangent_or_as_a_slice_in_front():
    x = np.array([0.3, 0.1, -0.2, 0.4])
    expected = np.zeros((2, 4))  # d(2 x[r] x[i]) / dx for r = 1, 2 and i = 0
    for row, r in enumerate((1, 2)):
        expected[row, r] += 2.0 * x[0]
        expected[row, 0] += 2.0 * x[r]
    np.testing.assert_allclose(adgen.jacfwd(indexed_by_a_tuple)(x, 0), expected, rtol=1e-14)


def halved(x):
    return 0.5 * x


def halved_rule(x):  # (reverse mode and a batched template only: forward mode is refused)
    def vjp_x(g):
        return 0.5 * g

    def bjvp_x(d):
        return 0.5 * d


def sine_of_half(x):
    return np.sin(halved(x))


@pytest.mark.parametrize("chunk_size", [None, 1])
def test_a_rule_refusing_forward_mode_refuses_jacfwd_batched_or_not(chunk_size):
    with adgen.rules.registrations():  # (the registry as it was, afterwards)
        adgen.rule(halved)(halved_rule)
        with pytest.raises(adgen.NoRuleError, match="no forward-mode derivative of `halved`"):
            adgen.jacfwd(sine_of_half, chunk_size=chunk_size)(np.array([0.1, 0.2, 0.3]))
