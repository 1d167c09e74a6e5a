"""A VAE's negative ELBO: a dict of encoder and decoder layer lists, `*hidden, last = params`, an activation passed as a keyword argument, np.logaddexp."""

import numpy as np

def relu(x):
    return np.maximum(0, x)

def mlp(params, x, act=relu):
    *hidden, last = params
    for W, b in hidden:
        x = act(x @ W + b)
    W, b = last
    return x @ W + b

def elbo(params, data, eps):
    enc, dec = params["encoder"], params["decoder"]
    out = mlp(enc, data)
    d = out.shape[1] // 2
    mu, log_sigma = out[:, :d], out[:, d:]
    z = mu + np.exp(log_sigma) * eps
    logits = mlp(dec, z, act=np.tanh)
    log_lik = np.sum(data * logits - np.logaddexp(0, logits))
    kl = 0.5 * np.sum(np.exp(2 * log_sigma) + mu ** 2 - 1 - 2 * log_sigma)
    return -(log_lik - kl) / data.shape[0]

rs = np.random.RandomState(0)
def layer(m, n): return (rs.randn(m, n) * 0.1, np.zeros(n))
params = {"encoder": [layer(6, 8), layer(8, 4)], "decoder": [layer(2, 8), layer(8, 6)]}
data = (rs.rand(5, 6) > 0.5).astype(float)
ARGS = (params, data, rs.randn(5, 2))
F = elbo
