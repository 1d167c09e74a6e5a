"""Rewrite ``adgen/rules/index.py`` from the registry: ``python -m adgen.rules.make_index``.

Run it after adding, removing or moving a registration (``tests/test_lazy_rules.py`` fails
while the index is stale); see :mod:`adgen.rules.loader`.
"""

from adgen.rules.loader import write_index

if __name__ == "__main__":
    print(f"wrote {write_index()}")
