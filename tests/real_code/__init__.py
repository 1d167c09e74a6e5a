"""Real-code corpus: small programs written the way users write numerical Python.

Each module is a program in its own style (a training loop with a parameter list of
``(W, b)`` tuples, a GP marginal likelihood with scipy.stats, a fluid step with ``np.roll``
and reshape, an LSTM with lists of states, an ODE solver taking the dynamics as an
argument, a model class with methods, a robust regression). None of it is written for
adgen: no annotation, no adgen import except where a user would put ``adgen.grad``.
tests/test_real_code_corpus.py differentiates each ``objective`` as written and checks it
against central differences in both modes; ``ARGS`` builds its arguments.
"""
