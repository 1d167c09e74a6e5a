"""A neural ODE fit in the style of autograd's ode_net example: an odeint written in NumPy taking the dynamics and `args=(params,)`, nn_predict with a nonlinearity default, hstack of the state and the time."""

import numpy as np

def init_nn_params(scale, layer_sizes, rs=np.random.RandomState(0)):
    return [(rs.randn(insize, outsize) * scale, rs.randn(outsize) * scale)
            for insize, outsize in zip(layer_sizes[:-1], layer_sizes[1:])]

def nn_predict(params, inputs, nonlinearity=np.tanh):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = nonlinearity(outputs)
    return outputs

def odeint(func, y0, t, args=()):
    ys = [y0]
    for i in range(len(t) - 1):
        dt = t[i + 1] - t[i]
        ys.append(ys[-1] + dt * func(ys[-1], t[i], *args))
    return np.stack(ys)

def nn_dynamics(state, time, params):
    state = np.reshape(state, (1, -1))
    return nn_predict(params, np.hstack([state, np.array([[time]])])).ravel()

def ode_pred(params, target_ts, true_y0):
    return odeint(nn_dynamics, np.ravel(true_y0), target_ts, args=(params,))

def L1_loss(pred, target):
    return np.mean(np.abs(pred - target))

def train_loss(params, target_ts, true_y0, true_ys):
    pred = ode_pred(params, target_ts, true_y0)
    return L1_loss(pred, true_ys)

params = init_nn_params(0.1, [3, 8, 2])
ts = np.linspace(0, 1, 6)
rs = np.random.RandomState(3)
ARGS = (params, ts, np.array([[2.0, 0.0]]), rs.randn(6, 2))
F = train_loss
