"""A regression model written as a class, used the way scikit-style code uses it: built
once, its loss method differentiated with respect to a flat parameter vector."""

import numpy as np


class WeightsParser:
    """Names slices of one flat parameter vector (as in autograd's examples)."""

    def __init__(self):
        self.idxs_and_shapes = {}
        self.num_weights = 0

    def add_shape(self, name, shape):
        start = self.num_weights
        self.num_weights += int(np.prod(shape))
        self.idxs_and_shapes[name] = (slice(start, self.num_weights), shape)

    def get(self, vect, name):
        idxs, shape = self.idxs_and_shapes[name]
        return np.reshape(vect[idxs], shape)


class TwoLayerRegressor:
    def __init__(self, n_in, n_hidden):
        self.parser = WeightsParser()
        self.parser.add_shape("W1", (n_in, n_hidden))
        self.parser.add_shape("b1", (n_hidden,))
        self.parser.add_shape("w2", (n_hidden,))
        self.l2 = 0.01

    def predict(self, weights, X):
        W1 = self.parser.get(weights, "W1")
        b1 = self.parser.get(weights, "b1")
        w2 = self.parser.get(weights, "w2")
        return np.tanh(X @ W1 + b1) @ w2

    def loss(self, weights, X, y):
        residual = self.predict(weights, X) - y
        return np.mean(residual**2) + self.l2 * np.sum(weights**2)


MODEL = TwoLayerRegressor(3, 5)


def objective(weights, X, y):
    return MODEL.loss(weights, X, y)


def make_args(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(20, 3))
    y = X[:, 0] - 0.5 * X[:, 1] ** 2
    return (0.3 * rng.normal(size=MODEL.parser.num_weights), X, y)
