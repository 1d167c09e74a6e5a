"""np.linalg rules: conventions at kinks with exact values, one-triangle reads, refusals,
and linear algebra inside loops and branches in both modes."""

from __future__ import annotations

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def norm2(x):
    return np.linalg.norm(x)


def norm_inf(x):
    return np.linalg.norm(x, ord=np.inf)


def norm_one(x):
    return np.linalg.norm(x, ord=1)


def norm_rows(x):
    return np.sum(np.linalg.norm(x, axis=1))


def nuclear(x):
    return np.linalg.norm(x, ord="nuc")


def matrix_one(x):
    return np.linalg.norm(x, ord=1)


def chol_sum(a):
    return np.sum(np.linalg.cholesky(a))


def eigvals_sum(a):
    return np.sum(np.linalg.eigvalsh(a) ** 2)


def uses_eig(a):
    # (np.real: NumPy 2.5 returns complex eigenvalues even where they are all real)
    return np.real(np.sum(np.linalg.eig(a)[0]))


def svd_full(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum(u[:, :1] ** 2) + np.sum(s)


def power_loop(a, steps):
    """Repeated solves and a branch on a norm: both modes."""
    x = np.ones(a.shape[0])
    for _ in range(steps):
        x = np.linalg.solve(a, x)
        if np.linalg.norm(x) > 1.0:
            x = x / np.linalg.norm(x)
        else:
            x = 2.0 * x
    return np.sum(x * np.linalg.eigvalsh(a + a.T))


def both(f, x):
    """The gradient by reverse mode, and the same by forward mode along each basis vector."""
    g = adgen.grad(f)(x)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = 1.0
        cols.append(adgen.jvp(f, (x,), (e.reshape(x.shape),))[1])
    return g, np.reshape(cols, x.shape)


def test_two_norm_at_zero_is_zero():
    for f, x in [(norm2, np.zeros(3)), (norm2, np.zeros((2, 2))), (norm_rows, np.zeros((2, 3)))]:
        g, fwd = both(f, x)
        assert np.array_equal(g, np.zeros_like(x)) and np.array_equal(fwd, np.zeros_like(x))


def test_two_norm_one_zero_row():
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    g, fwd = both(norm_rows, x)
    assert np.allclose(g, [[0.6, 0.8], [0.0, 0.0]]) and np.allclose(fwd, g)


def test_inf_norm_ties_share_evenly():
    x = np.array([2.0, -2.0, 1.0])
    g, fwd = both(norm_inf, x)
    assert np.array_equal(g, [0.5, -0.5, 0.0]) and np.array_equal(fwd, g)


def test_one_norm_sign_of_zero_is_zero():
    x = np.array([1.5, 0.0, -2.0])
    g, fwd = both(norm_one, x)
    assert np.array_equal(g, [1.0, 0.0, -1.0]) and np.array_equal(fwd, g)


def test_matrix_one_norm_tied_columns():
    x = np.array([[1.0, -2.0], [2.0, 1.0]])  # both column sums are 3
    g, fwd = both(matrix_one, x)
    assert np.array_equal(g, [[0.5, -0.5], [0.5, 0.5]]) and np.array_equal(fwd, g)


def test_nuclear_norm_rank_deficient_takes_nonzero_singular_values():
    x = np.array([[2.0, 0.0], [0.0, 0.0]])
    g, fwd = both(nuclear, x)
    assert np.allclose(g, [[1.0, 0.0], [0.0, 0.0]]) and np.allclose(fwd, g)
    g, fwd = both(nuclear, np.zeros((2, 2)))
    assert np.array_equal(g, np.zeros((2, 2))) and np.array_equal(fwd, g)


def test_cholesky_reads_the_lower_triangle_only():
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    g = adgen.grad(chol_sum)(a)
    assert g[0, 1] == 0.0 and g[1, 0] != 0.0
    check_grads(chol_sum, a)  # finite differences move the upper triangle too


def test_eigvalsh_reads_the_lower_triangle_only():
    a = np.array([[2.0, 0.5], [0.5, -1.0]])
    g = adgen.grad(eigvals_sum)(a)
    # d/da of sum(w**2) = ||A_eff||_F**2 where A_eff mirrors the lower triangle
    assert np.allclose(g, [[4.0, 0.0], [2.0, -2.0]])
    check_grads(eigvals_sum, a)


def test_eig_refuses_repeated_eigenvalues():
    # the identity's eigenvalues coincide: no derivative, refused by name in both modes
    for op in (adgen.grad(uses_eig), lambda a: adgen.jvp(uses_eig, (a,), (np.ones((2, 2)),))):
        with pytest.raises(adgen.DerivativeError, match="np.linalg.eig needs distinct values"):
            op(np.eye(2))


def svd_flagged(a, flag):
    return np.sum(np.linalg.svd(a, compute_uv=flag))


def qr_complete(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(r)


def test_a_result_count_known_only_at_run_time_is_refused_by_name():
    # regression: the default compute_uv=True was assumed for a variable flag (a NumPy
    # bool is a value the code is not made for; a Python bool is, below)
    with pytest.raises(adgen.UnsupportedSyntaxError, match="`compute_uv` known only at run"):
        adgen.grad(svd_flagged)(np.eye(2) * 2.0, np.False_)


def test_a_python_bool_flag_is_an_option_the_code_is_made_for():
    """``compute_uv=flag`` with ``flag`` a Python bool: the code is made for its value, so
    the number of results is known (the gradient of the sum of singular values is U Vᵀ)."""
    a = np.array([[2.0, 0.5], [-0.3, 1.0]])
    u, _, vt = np.linalg.svd(a)
    np.testing.assert_allclose(adgen.grad(svd_flagged)(a, False), u @ vt, rtol=1e-12)


def test_an_unsupported_form_of_a_several_result_function_is_refused():
    with pytest.raises(adgen.UnsupportedSyntaxError, match="this form has no rule"):
        adgen.grad(qr_complete)(np.eye(2) * 2.0)


def test_full_svd_of_non_square_is_refused_when_it_runs():
    with pytest.raises(adgen.AdgenError, match="square"):
        adgen.grad(svd_full)(np.arange(6.0).reshape(3, 2) + np.eye(3, 2))
    check_grads(svd_full, np.array([[3.0, 1.0], [0.5, 1.0]]))


@pytest.mark.parametrize("steps", [1, 3])
def test_solve_norm_eigvalsh_in_loop_and_branch(steps):
    rng = np.random.default_rng(steps)
    a = rng.uniform(-0.5, 0.5, (3, 3)) + 2.0 * np.eye(3)
    check_grads(power_loop, a, steps)
    grad = adgen.grad(power_loop)(a, steps)
    eps = 1e-6
    e = rng.standard_normal((3, 3))
    numeric = (power_loop(a + eps * e, steps) - power_loop(a - eps * e, steps)) / (2 * eps)
    assert np.isclose(np.sum(grad * e), numeric, rtol=1e-6)
    assert np.isclose(adgen.jvp(power_loop, (a, steps), (e, None))[1], numeric, rtol=1e-6)


def gaussian_terms(x, cov):
    sign, logdet = np.linalg.slogdet(cov)
    w, v = np.linalg.eigh(cov)
    return 0.5 * logdet + x @ np.linalg.solve(cov, x) + np.sum(w) * sign


def qr_iterations(a):
    s = a
    for _ in range(2):
        s, r = np.linalg.qr(s)  # rebinds its own argument inside a loop
        s = s + r
    return np.sum(s * s)


def test_several_results_take_the_users_names_in_generated_code():
    src = adgen.source(gaussian_terms, wrt=(0, 1))
    assert "sign, logdet = np.linalg.slogdet(cov)" in src
    assert "w, v = np.linalg.eigh(cov)" in src
    check_grads(gaussian_terms, np.array([0.3, -0.2]), np.array([[2.0, 0.3], [0.3, 1.5]]))


def test_several_results_rebinding_their_own_argument_in_a_loop():
    check_grads(qr_iterations, np.array([[2.0, 0.3], [0.1, 1.5]]))
