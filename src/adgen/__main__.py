"""``python -m adgen FILE.py``: see :mod:`adgen.cli`."""

from adgen.cli import main

if __name__ == "__main__":  # not when imported (e.g. by pytest's doctest collection)
    raise SystemExit(main())
