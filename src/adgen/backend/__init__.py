"""The backend: write generated code as Python source, optimize it, compile, cache and export it."""
