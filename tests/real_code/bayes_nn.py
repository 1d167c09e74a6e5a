"""A classifier's log posterior in the style of autograd's neural-net example: a list of (W, b) made by a comprehension, np.dot, a logsumexp helper with keepdims, an L2 norm of concatenated ravelled parameters."""

import numpy as np
from scipy.special import logsumexp as sp_lse

def init_random_params(scale, layer_sizes, rs=np.random.RandomState(0)):
    return [(scale * rs.randn(m, n), scale * rs.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]

def neural_net_predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)

def logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    return m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=keepdims))

def l2_norm(params):
    flattened = np.concatenate([np.ravel(W) for W, b in params] + [np.ravel(b) for W, b in params])
    return np.dot(flattened, flattened)

def log_posterior(params, inputs, targets, L2_reg):
    log_prior = -L2_reg * l2_norm(params)
    log_lik = np.sum(neural_net_predict(params, inputs) * targets)
    return log_prior + log_lik

rs = np.random.RandomState(1)
params = init_random_params(0.1, [5, 7, 3])
X = rs.randn(10, 5); T = np.eye(3)[rs.randint(0, 3, 10)]
ARGS = (params, X, T, 0.1)
F = log_posterior
