"""adgen's version, in one place: the package, pyproject.toml, the disk cache's keys and the
headers of exported modules read it here."""

__version__ = "0.1.0"
