"""Forms of a well-known AD library's examples (issue 34): written here in their style.

Black-box variational inference draws ``rs.randn(num_samples, D)`` where ``D`` and
``num_samples`` are a closure's ints (a call run as written cannot change them: it was
refused as "may change `D` in place"); an HMM's log partition function recurses over a list
of sequences through ``map(partial(log_partition_function, natural_params), data)`` (a call
of ``partial(f, a)`` at once was refused as "using `f` as a value").
"""

from __future__ import annotations

from functools import partial

import numpy as np
import numpy.random as npr
from scipy.special import logsumexp
from scipy.stats import norm

import adgen


def black_box_variational_inference(logprob, D, num_samples):
    def unpack_params(params):
        return params[:D], params[D:]

    def gaussian_entropy(log_std):
        return 0.5 * D * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)

    rs = npr.RandomState(0)

    def variational_objective(params, t):
        mean, log_std = unpack_params(params)
        samples = rs.randn(num_samples, D) * np.exp(log_std) + mean
        return -(gaussian_entropy(log_std) + np.mean(logprob(samples, t)))

    return variational_objective


def log_density(x, t):
    mu, log_sigma = x[:, 0], x[:, 1]
    return norm.logpdf(log_sigma, 0, 1.35) + norm.logpdf(mu, 0, np.exp(log_sigma))


def test_black_box_svi_with_a_closures_sizes():
    def fresh():  # (a new generator: each objective draws the same samples)
        return black_box_variational_inference(log_density, 2, num_samples=200)

    p = np.array([-1.0, -1.0, -5.0, -5.0])
    got = adgen.grad(fresh())(p, 0)
    steps = np.eye(4) * 1e-6
    want = np.array([(fresh()(p + e, 0) - fresh()(p - e, 0)) / 2e-6 for e in steps])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def log_partition_function(natural_params, data):
    if isinstance(data, list):
        return sum(map(partial(log_partition_function, natural_params), data))
    log_pi, log_A, log_B = natural_params
    log_alpha = log_pi
    for y in data:
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y]
    return logsumexp(log_alpha)


def test_hmm_log_partition_recursing_through_map_of_a_partial():
    rng = np.random.default_rng(0)
    nat = (
        np.log(np.full(3, 1.0 / 3.0)),
        np.log(rng.dirichlet(np.ones(3), 3)),
        np.log(rng.dirichlet(np.ones(4), 3)),
    )
    data = [np.array([0, 1, 2, 3, 1]), np.array([2, 2, 1])]
    got = adgen.grad(log_partition_function)(nat, data)
    for k in range(3):
        want = np.zeros_like(nat[k])
        for i in np.ndindex(nat[k].shape):
            step = np.zeros_like(nat[k])
            step[i] = 1e-6
            up, down = list(nat), list(nat)
            up[k], down[k] = nat[k] + step, nat[k] - step
            f = partial(log_partition_function, data=data)
            want[i] = (f(tuple(up)) - f(tuple(down))) / 2e-6
        np.testing.assert_allclose(got[k], want, rtol=1e-6, atol=1e-9)
    # the expected counts: the gradient w.r.t. log pi sums to the number of sequences
    assert np.isclose(np.sum(got[0]), 2.0)
