"""The two modes of differentiation, written from the rules' templates.

- :mod:`~adgen.modes.forward`: forward mode (JVP): each statement with its tangent;
- :mod:`~adgen.modes.reverse`: reverse mode (VJP): a forward sweep and an adjoint sweep in one
  function;
- :mod:`~adgen.modes.expand`: a rule's templates instantiated for one IR statement (both modes);
- :mod:`~adgen.modes.complexvalues`: complex values refused where they meet a derivative.
"""
