"""A helper that returns a solver closure, called in a loop over groups (issue 34, parts 2
and 4): statsmodels' ``MixedLM.loglike`` as installed.

statsmodels' mixed models loop over groups; for each, ``solver = _smw_solver(1.0, ex_r,
...)`` returns a nested ``def solver(rhs)`` (chosen by ``sparse.issparse(A)``, where ``A`` is
``self._aex_r[group_ix]``), and ``u = solver(resid)`` calls it. adgen refused the call ("a
computed value") for three reasons, each fixed and tested here:

* a helper's function result bound in a loop body, read only after it in that body, was
  not taken as the function (it was outside loops);
* ``issparse`` of an item of an outside list at an index known only when the code runs
  was not decided (now: by the list's items, all of them, which the cached derivative
  then depends on);
* ``issparse(q)`` of an array written into since it was made (``q[0:m, 0:m] += Qi``) was
  not decided either.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

import adgen
from adgen.errors import AdgenError


def smw_solver(s, A, AtA, di):
    qmat = AtA / s
    qmat[0, 0] += 1.0
    if sparse.issparse(A):
        qmat = qmat + sparse.diags(di)

        def solver(rhs):
            return rhs / s - A.dot(sparse.linalg.spsolve(qmat, A.T.dot(rhs))) / s**2

    else:
        qmat = qmat + np.diag(di)
        qmati = np.linalg.solve(qmat, A.T)

        def solver(rhs):
            return rhs / s - np.dot(A, np.dot(qmati, rhs)) / s**2

    return solver


def logdet(s, A, AtA, di):
    qmat = AtA / s
    qmat[0, 0] += 1.0
    if sparse.issparse(qmat):
        lu = sparse.linalg.splu(qmat)  # (never run on arrays: no view of qmat is kept)
        return float(np.sum(np.log(lu.U.diagonal())))
    qmat = qmat + np.diag(di)
    return A.shape[0] * np.log(s) + np.linalg.slogdet(qmat)[1]


RNG = np.random.default_rng(7)
GROUPS = [RNG.normal(size=(5, 2)) for _ in range(4)]
GRAMS = [a.T @ a for a in GROUPS]
RESIDS = [RNG.normal(size=5) for _ in range(4)]


def grouped_loglike(theta):
    s, di = np.exp(theta[0]), np.exp(theta[1:])
    total = 0.0
    for g in range(len(GROUPS)):
        ex_r, ex2_r = GROUPS[g], GRAMS[g]
        solver = smw_solver(s, ex_r, ex2_r, 1 / di)
        resid = RESIDS[g]
        u = solver(resid)
        total -= 0.5 * logdet(s, ex_r, ex2_r, 1 / di)
        total -= 0.5 * np.dot(resid, u)
    return total


def grouped_loglike_ref(theta):
    # the same likelihood, each group's covariance written out: s I + A diag(di)^-1 ... A'
    s, di = np.exp(theta[0]), np.exp(theta[1:])
    total = 0.0
    for a, r in zip(GROUPS, RESIDS):
        q = a.T @ a / s
        q = q + np.diag(1 / di) + np.outer([1.0, 0.0], [1.0, 0.0])
        solved = r / s - a @ np.linalg.solve(q, a.T @ r) / s**2
        total -= 0.5 * (a.shape[0] * np.log(s) + np.linalg.slogdet(q)[1])
        total -= 0.5 * r @ solved
    return total


THETA = np.array([0.3, -0.2, 0.4])


def test_solver_closure_called_in_a_loop_over_groups_in_both_modes():
    assert grouped_loglike(THETA) == pytest.approx(grouped_loglike_ref(THETA), rel=1e-12)
    expected = adgen.grad(grouped_loglike_ref)(THETA)
    np.testing.assert_allclose(adgen.grad(grouped_loglike)(THETA), expected, rtol=1e-10)
    e = np.array([0.5, -1.0, 2.0])
    _, t = adgen.jvp(grouped_loglike, (THETA,), (e,))
    assert t == pytest.approx(expected @ e, rel=1e-10)
    h = adgen.hessian(grouped_loglike)(THETA)
    np.testing.assert_allclose(h, adgen.hessian(grouped_loglike_ref)(THETA), rtol=1e-8)


def test_replacing_an_item_of_the_list_makes_the_derivative_again():
    g = adgen.grad(grouped_loglike)
    first = g(THETA)
    saved = GROUPS[1]
    try:
        GROUPS[1] = saved * 2.0  # (another array: the same decisions, new values)
        GRAMS[1] = GROUPS[1].T @ GROUPS[1]
        np.testing.assert_allclose(g(THETA), adgen.grad(grouped_loglike_ref)(THETA), rtol=1e-10)
        GROUPS[1] = sparse.csr_matrix(saved)  # (now one group is sparse: decided otherwise)
        GRAMS[1] = (GROUPS[1].T @ GROUPS[1]).toarray()
        with pytest.raises(AdgenError):
            g(THETA)
    finally:
        GROUPS[1] = saved
        GRAMS[1] = saved.T @ saved
    np.testing.assert_allclose(g(THETA), first, rtol=1e-14)


def test_mixed_linear_model_loglike_of_statsmodels_as_installed():
    sm = pytest.importorskip("statsmodels.api")
    from statsmodels.regression.mixed_linear_model import MixedLMParams

    rng = np.random.default_rng(4)
    n = 40
    groups = np.repeat(np.arange(8), 5)
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    y = X @ [1.0, 0.5] + rng.normal(size=8)[groups] + rng.normal(size=n)
    m = sm.MixedLM(y, X, groups=groups)
    m.cov_pen, m.fe_pen, m._cov_sing = None, None, 0  # (what fit() sets before it calls loglike)

    def f(p):
        params = MixedLMParams.from_components(p[:2], np.array([[p[2]]]))
        return m.loglike(params, profile_fe=False)

    p = np.array([0.9, 0.4, 0.8])
    g = adgen.grad(f)(p)
    eps = 1e-6
    fd = np.array([(f(p + eps * e) - f(p - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    _, t = adgen.jvp(f, (p,), (np.ones(3),))
    assert t == pytest.approx(fd.sum(), rel=1e-6)
