"""The two modes of differentiation: forward (JVP) and reverse (VJP) code from the rules."""
