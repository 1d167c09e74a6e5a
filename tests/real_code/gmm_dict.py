"""A Gaussian mixture's log likelihood in the style of autograd's gmm example: a dict of parameters, zip(*unpack(params)), scipy.stats.multivariate_normal.logpdf per component, a list stacked with np.vstack."""

import numpy as np
from scipy.special import logsumexp
import scipy.stats as st

def init_gmm_params(num_components, D, scale, rs=np.random.RandomState(0)):
    return {'log proportions': rs.randn(num_components) * scale,
            'means':           rs.randn(num_components, D) * scale,
            'lower triangles': np.zeros((num_components, D, D)) + np.eye(D)}

def log_normalize(x):
    return x - np.log(np.sum(np.exp(x)))

def unpack_gmm_params(params):
    normalized_log_proportions = log_normalize(params['log proportions'])
    return normalized_log_proportions, params['means'], params['lower triangles']

def gmm_log_likelihood(params, data):
    cluster_lls = []
    for log_proportion, mean, cov_sqrt in zip(*unpack_gmm_params(params)):
        cov = np.dot(cov_sqrt.T, cov_sqrt)
        cluster_lls.append(log_proportion + st.multivariate_normal.logpdf(data, mean, cov))
    return np.sum(np.log(np.sum(np.exp(np.vstack(cluster_lls)), axis=0)))

rs = np.random.RandomState(1)
ARGS = (init_gmm_params(3, 2, 0.1), rs.randn(20, 2))
F = gmm_log_likelihood
