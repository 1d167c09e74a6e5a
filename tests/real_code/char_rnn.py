"""A character RNN's log likelihood in the style of autograd's rnn example: a dict of parameters, nested helper functions closing over it, `*args` helpers with np.hstack, a list of outputs appended per step, `+=` on a float."""

import numpy as np

def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)

def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)

def create_rnn_params(input_size, state_size, output_size, param_scale=0.01, rs=np.random.RandomState(0)):
    return {'init hiddens': rs.randn(1, state_size) * param_scale,
            'change': rs.randn(input_size + state_size + 1, state_size) * param_scale,
            'predict': rs.randn(state_size + 1, output_size) * param_scale}

def rnn_predict(params, inputs):
    def update_rnn(input, hiddens):
        return np.tanh(concat_and_multiply(params['change'], input, hiddens))

    def hiddens_to_output_probs(hiddens):
        output = concat_and_multiply(params['predict'], hiddens)
        return output - np.log(np.sum(np.exp(output), axis=1, keepdims=True))

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params['init hiddens'], num_sequences, axis=0)
    output = [hiddens_to_output_probs(hiddens)]
    for input in inputs:
        hiddens = update_rnn(input, hiddens)
        output.append(hiddens_to_output_probs(hiddens))
    return output

def rnn_log_likelihood(params, inputs, targets):
    logprobs = rnn_predict(params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik += np.sum(logprobs[t] * targets[t])
    return loglik / (num_time_steps * num_examples)

rs = np.random.RandomState(2)
params = create_rnn_params(4, 6, 4)
inputs = np.eye(4)[rs.randint(0, 4, (5, 3))]
ARGS = (params, inputs, inputs)
F = rnn_log_likelihood
