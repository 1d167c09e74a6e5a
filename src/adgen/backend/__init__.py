"""The backend: generated functions as Python source, optimized, compiled, cached, exported.

- :mod:`~adgen.backend.emit`: IR and templates printed as source (``ast.unparse``), each
  original line's derivative under a comment quoting it;
- :mod:`~adgen.backend.codeopt`: the optimizer of generated code, one pass a module;
- :mod:`~adgen.backend.compile`: compiled in memory, visible to tracebacks and debuggers;
- :mod:`~adgen.backend.cache` and :mod:`~adgen.backend.diskcache`: derivatives kept per
  function and options, in memory and (optionally) on disk;
- :mod:`~adgen.backend.export`: standalone modules written to files.
"""
