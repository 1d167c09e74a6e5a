# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower ``import`` statements inside the function: the names are bound to the modules (or
their attributes) when transforming, as Python binds them when it runs. Inside a block, an
import whose names only the rest of that block reads (an optional package's path, ``try:
import pandas ...``) is bound the same way, and one that fails ends its path with Python's
``ImportError`` where it runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import TYPE_CHECKING, Any

import gast

from adgen.errors import UnresolvedNameError
from adgen.frontend.lower.state import LowererState
from adgen.frontend.parse import KNOWN_PACKAGES, LiveScope
from adgen.pyast import walk

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class ImportsMixin(LowererState):
    """``import numpy as np``, ``from scipy import special`` inside the function."""

    def lower_import(self: Lowerer, stmt: Any) -> None:
        """``import numpy as np``, ``import math``, ``from scipy import special`` inside the
        function: the names are bound to the modules (or their attributes) when transforming,
        for the rest of the function, as Python binds them when it runs."""
        module = stmt.module if isinstance(stmt, gast.ImportFrom) else None
        if isinstance(stmt, gast.ImportFrom) and stmt.level:
            # `from ..kernels import Kernel`: relative to the package of the function's module
            scope = self.parsed.scope
            package = scope.fn.__globals__.get("__name__") if isinstance(scope, LiveScope) else None
            if isinstance(package, str) and not hasattr(sys.modules.get(package), "__path__"):
                package = package.rpartition(".")[0]  # (a module: its package)
            try:
                assert isinstance(package, str) and package
                module = importlib.util.resolve_name("." * stmt.level + (module or ""), package)
            except (AssertionError, ImportError, ValueError):
                self.refuse(
                    stmt,
                    "relative imports inside the function",
                    "import it by its full name, or at the top of the module",
                )
        if self.depth > 0 and not self.read_after_only(stmt):
            self.refuse(
                stmt,
                "imports inside if/for/while blocks whose names are read outside the block",
                "import at the top of the function (or of the module)",
            )
        stored = {
            n.id
            for n in walk(self.node)
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
        }
        for alias in stmt.names:
            if isinstance(stmt, gast.ImportFrom) and alias.name == "*":
                self.refuse(stmt, "`from ... import *`", "import the names you use")
            try:
                if isinstance(stmt, gast.Import):
                    bound = alias.asname or alias.name.split(".", 1)[0]
                    module = self.import_module(stmt, alias.name)
                    value = module if alias.asname else self.import_module(stmt, bound)
                else:
                    bound = alias.asname or alias.name
                    value = self.import_name(stmt, module or "", alias.name)
            except UnresolvedNameError as exc:
                if self.depth == 0:
                    raise
                # a block that imports an optional package (`try: import pandas ... except
                # ImportError: ...`, the path a probe chooses when the code runs): where it
                # fails here, running that path raises as Python would
                self.raise_as_written(stmt, ImportError, exc.message)
                return
            if bound in stored or bound in self.params:
                self.refuse(
                    stmt,
                    f"importing `{bound}`, a name the function also assigns",
                    "give the module or the variable another name",
                )
            self.imported[bound] = value

    def read_after_only(self: Lowerer, stmt: Any) -> bool:
        """Are the names an ``import`` inside a block binds read only by the statements that
        follow it in that block (``if pandas_wanted: import pandas; return pandas.isna(X)``)?
        Then binding them when transforming is binding them where Python does."""
        names = {(a.asname or a.name.split(".", 1)[0]) for a in stmt.names}
        after: set[int] = set()
        for node in walk(self.node):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if not isinstance(block, list):  # (a lambda's or `a if c else b`'s body)
                    continue
                k = next((i for i, s in enumerate(block) if s is stmt), None)
                if k is not None:
                    after = {id(n) for s in block[k + 1 :] for n in walk(s)}
        reads = [
            n
            for n in walk(self.node)
            if isinstance(n, gast.Name) and n.id in names and isinstance(n.ctx, gast.Load)
        ]
        return all(id(n) in after for n in reads)

    def import_module(self: Lowerer, stmt: Any, module: str) -> Any:
        """The module ``module``, imported (a file read without running it imports only the
        packages adgen knows, as it does for the module's own imports)."""
        known = module.split(".", 1)[0] in KNOWN_PACKAGES
        if not isinstance(self.parsed.scope, LiveScope) and not known:
            self.refuse(
                stmt,
                f"importing `{module}` in a file adgen reads without running it",
                "import it at the top of the module",
            )
        try:
            return importlib.import_module(module)
        except ImportError as exc:
            raise UnresolvedNameError(
                f"cannot import `{module}` ({exc})",
                self.parsed.loc(stmt),
                f"install {module.split('.')[0]}, or check the spelling",
            ) from None

    def import_name(self: Lowerer, stmt: Any, module: str, name: str) -> Any:
        """``from module import name``: an attribute of the module, or its submodule."""
        base = self.import_module(stmt, module)
        if hasattr(base, name):
            return getattr(base, name)
        try:
            return importlib.import_module(f"{module}.{name}")
        except ImportError:
            raise UnresolvedNameError(
                f"cannot import `{name}` from `{module}`",
                self.parsed.loc(stmt),
                "check the spelling",
            ) from None
