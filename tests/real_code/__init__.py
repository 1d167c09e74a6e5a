"""Real-code corpus: small programs written the way users write numerical Python.

Each module is a program in its own style (a training loop with a parameter list of
``(W, b)`` tuples, a GP marginal likelihood with scipy.stats, a fluid step with ``np.roll``
and reshape, an LSTM with lists of states, an ODE solver taking the dynamics as an
argument, a model class with methods, a robust regression). None of it is written for
adgen: no annotation, no adgen import except where a user would put ``adgen.grad``.
tests/test_real_code_corpus.py differentiates each ``objective`` as written and checks it
against central differences in both modes (``make_args`` builds its arguments).

The other modules (``F`` and ``ARGS``) are programs in the styles of public examples
(autograd's neural net, RNN, Gaussian process, fluid simulation, ODE net and mixture
examples; a Kalman filter, a spring simulation class, minibatch logistic regression, a VAE,
t-SNE, ridge LOOCV), kept as their style writes them: ruff does not format this folder.
"""
