"""adgen's benchmark suite: problems with hand-written gradients, peers, and the runner.

Run it with ``python benchmarks/run.py`` (see ``docs/performance.md``).
"""
