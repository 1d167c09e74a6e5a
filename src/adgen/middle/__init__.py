"""The middle end: what is known about an IR function, and its optimizer.

- :mod:`~adgen.middle.optimize`: sound rewrites of a lowered function before it is
  differentiated (constants folded, common subexpressions, copies, dead code);
- :mod:`~adgen.middle.analysis`: dataflow facts both modes need (what varies with an input,
  what reaches the result, what is rebound);
- :mod:`~adgen.middle.shapes`: static broadcast classes and, for specialised code, shapes.
"""
