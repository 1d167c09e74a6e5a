"""The frontend: read a Python function (its source, its names) and lower it to the IR.

- :mod:`~adgen.frontend.parse`: the source of a live function (``inspect``; a lambda found
  in its file by :mod:`~adgen.frontend.lambdas`, a function typed at ``>>>`` read back by
  :mod:`~adgen.frontend.interactive`), parsed with gast, and the scope that resolves its names;
- :mod:`~adgen.frontend.lower`: the parsed function lowered to the three-address IR
  (:mod:`adgen.ir`), one file per kind of construct;
- :mod:`~adgen.frontend.nested`: a lambda or nested ``def`` that ``adgen.grad`` is called on
  inside the function, lifted to a function of its own;
- :mod:`~adgen.frontend.static`: a file's names known without running it (the command line).
"""
