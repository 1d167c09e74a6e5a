"""Know what the names of a Python file mean without running it (for the command line).

:class:`StaticScope` implements the :class:`~adgen.frontend.parse.Scope` protocol from a
module's syntax tree alone. The file is never imported and none of its code
runs; a module-level name resolves to:

* an **import** of a package adgen knows (:data:`KNOWN_PACKAGES`: NumPy, math,
  SciPy, operator, builtins, adgen) -- the real module or object, imported by
  adgen itself;
* a **literal** (``N = 3``, ``EPS = 1e-8``, ``SHAPE = (2, 3)``) -- its value;
* a **function defined in the file** -- a :class:`UserFunction` placeholder
  that carries its ``def`` and this scope (lowering reports calls to it);
* **anything else** (computed values, classes, imports of other packages) --
  an :class:`Opaque` placeholder: a global value the generated code refers to
  by name;
* otherwise a builtin, and ``KeyError`` if the name is not defined at all.

>>> import numpy as np
>>> scope = StaticScope.from_source(
...     "import numpy as onp\\n"
...     "from numpy import sin\\n"
...     "import torch\\n"
...     "SCALE = 2.5\\n"
...     "W = onp.ones(3)\\n"
...     "def helper(x):\\n"
...     "    return x\\n",
...     "model.py",
... )
>>> scope.lookup("onp") is np, scope.lookup("sin") is np.sin, scope.lookup("SCALE")
(True, True, 2.5)
>>> scope.lookup("W"), scope.lookup("torch").tensor
(<static value W (model.py:5)>, <static value torch.tensor (model.py:3)>)
>>> helper = scope.lookup("helper")
>>> helper.adgen_user_function, helper.node.name, helper.scope is scope
(True, 'helper', True)
>>> scope.lookup("abs") is abs
True
>>> scope.lookup("undefined_name")
Traceback (most recent call last):
    ...
KeyError: 'undefined_name'
"""

from __future__ import annotations

import ast
import builtins
import importlib
import tokenize
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import gast

from adgen.errors import (
    AdgenError,
    SourceLocation,
    SourceUnavailableError,
    UnresolvedNameError,
    WrtError,
)
from adgen.frontend.parse import KNOWN_PACKAGES, ParsedFunction

MODES = ("reverse", "forward")


# -- placeholders --------------------------------------------------------------------------------
class Opaque:
    """A module-level value whose content is unknown without running the file.

    It is not callable, so lowering treats it as a global value, referred to by
    name in the generated code. Its public attributes are opaque too
    (``torch.tensor``), so messages name what the user wrote.
    """

    adgen_user_function = False  # an explicit answer, not an Opaque from __getattr__

    def __init__(self, name: str, filename: str, lineno: int) -> None:
        self.__name__ = name.rsplit(".", 1)[-1]
        self.__qualname__ = name
        self.__module__ = ""  # so messages show the name as written
        self.filename = filename
        self.lineno = lineno

    def __getattr__(self, attr: str) -> Opaque:
        if attr.startswith(("_", "adgen_")):  # (adgen's own marks: not this value's)
            raise AttributeError(attr)
        return Opaque(f"{self.__qualname__}.{attr}", self.filename, self.lineno)

    def __repr__(self) -> str:
        return f"<static value {self.__qualname__} ({self.filename}:{self.lineno})>"


class UserFunction:
    """A function defined in the file being compiled, standing in for the live function.

    ``adgen_user_function`` tells lowering that it is the user's own Python
    code; :attr:`node` is its ``def`` and :attr:`scope` the file's scope, so
    :func:`parse_file_function` can parse it (``parse_file_function(f.scope.filename,
    f.node, f.scope)``). Calling it is an error: nothing of the file ever runs.
    """

    adgen_user_function = True

    def __init__(self, node: gast.FunctionDef, scope: StaticScope) -> None:
        self.node = node
        self.scope = scope
        self.__name__ = node.name
        self.__qualname__ = node.name
        self.__module__ = ""  # so messages show the name as written

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{self.__name__} is read from {self.scope.filename}, not run")

    def __repr__(self) -> str:
        return f"<static function {self.__name__} ({self.scope.filename}:{self.node.lineno})>"


# -- bindings ------------------------------------------------------------------------------------
@dataclass
class _Import:
    """``import module`` / ``from module import attr``, resolved on first use."""

    module: str
    attr: str | None
    name: str  # the name bound, for placeholders
    lineno: int
    col: int


_Binding = Any  # a resolved value, or an _Import still to resolve


def _known(module: str) -> bool:
    return module.split(".", 1)[0] in KNOWN_PACKAGES


def _is_main_guard(test: Any) -> bool:
    """``__name__ == "__main__"``: the block does not run when the file is imported."""
    return (
        isinstance(test, gast.Compare)
        and isinstance(test.left, gast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], gast.Eq)
        and isinstance(test.comparators[0], gast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _stored_names(node: Any) -> Iterator[str]:
    for sub in gast.walk(node):
        if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store):
            yield sub.id


def _literal(node: Any) -> tuple[bool, Any]:
    """``(True, value)`` when ``node`` is a Python literal, else ``(False, None)``."""
    try:
        return True, ast.literal_eval(gast.gast_to_ast(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


# -- the scope -----------------------------------------------------------------------------------
class StaticScope:
    """The module-level names of a file, resolved from its syntax tree (see the module doc).

    Later bindings of a name win, as when the module runs, except that a binding
    in an ``except`` handler never replaces one made before it (the
    ``try: import x / except ImportError: x = None`` idiom), and the body of
    ``if __name__ == "__main__":`` is ignored.
    """

    def __init__(self, tree: gast.Module, filename: str, lines: Mapping[int, str]) -> None:
        self.tree = tree
        self.filename = filename
        self.lines = lines
        #: module-level functions, by name, in the order of the file
        self.functions: dict[str, gast.FunctionDef] = {}
        self._bindings: dict[str, _Binding] = {}
        self._star: list[_Import] = []
        for stmt in tree.body:
            self._statement(stmt, fallback=False)

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_source(cls, source: str, filename: str) -> StaticScope:
        """The scope of a module given as text (``filename`` is used in messages)."""
        try:
            tree = ast.parse(source, filename)
        except SyntaxError as exc:
            lineno = exc.lineno or 1
            text = source.split("\n")[lineno - 1] if source else ""
            raise SourceUnavailableError(
                f"cannot parse the file: {exc.msg}",
                SourceLocation(filename, lineno, max((exc.offset or 1) - 1, 0), text),
                "fix the syntax error",
            ) from None
        except ValueError as exc:  # e.g. null bytes
            raise SourceUnavailableError(f"{filename}: cannot parse the file ({exc})") from None
        lines = {i + 1: text for i, text in enumerate(source.splitlines(keepends=True))}
        if any("\f" in t or "\v" in t or "\x1c" in t for t in source.split("\n")):
            # str.splitlines also splits on these; Python's line numbers do not
            lines = {i + 1: text + "\n" for i, text in enumerate(source.split("\n"))}
        return cls(gast.ast_to_gast(tree), filename, lines)

    @classmethod
    def from_path(cls, path: str) -> StaticScope:
        """Read and parse ``path`` (honouring its encoding declaration); nothing is run."""
        try:
            with tokenize.open(path) as fh:
                source = fh.read()
        except FileNotFoundError:
            raise SourceUnavailableError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise SourceUnavailableError(f"{path}: is a directory, not a Python file") from None
        except (OSError, SyntaxError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise SourceUnavailableError(f"{path}: cannot read the file ({reason})") from None
        return cls.from_source(source, path)

    def _statement(self, stmt: Any, fallback: bool) -> None:
        if isinstance(stmt, gast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self._bind(
                        alias.asname, self._import(alias.name, None, alias.asname, stmt), fallback
                    )
                else:
                    top = alias.name.split(".", 1)[0]
                    self._bind(top, self._import(top, None, top, stmt), fallback)
        elif isinstance(stmt, gast.ImportFrom):
            module = "." * (stmt.level or 0) + (stmt.module or "")
            for alias in stmt.names:
                if alias.name == "*":
                    if stmt.level == 0 and _known(module):
                        self._star.append(_Import(module, None, "*", stmt.lineno, stmt.col_offset))
                    continue
                bound = alias.asname or alias.name
                self._bind(
                    bound, self._import(module, alias.name, bound, stmt, stmt.level == 0), fallback
                )
        elif isinstance(stmt, gast.FunctionDef):
            self.functions.pop(stmt.name, None)  # a redefinition moves it to its new place
            self.functions[stmt.name] = stmt
            self._bind(stmt.name, UserFunction(stmt, self), fallback)
        elif isinstance(stmt, gast.Assign):
            ok, value = _literal(stmt.value)
            for target in stmt.targets:
                self._assign(target, ok, value, stmt, fallback)
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is not None:
                ok, value = _literal(stmt.value)
                self._assign(stmt.target, ok, value, stmt, fallback)
        elif isinstance(stmt, gast.If):
            if _is_main_guard(stmt.test):
                for sub in stmt.orelse:
                    self._statement(sub, fallback)
                return
            for sub in [*stmt.body, *stmt.orelse]:
                self._statement(sub, fallback)
        elif isinstance(stmt, gast.Try):
            for sub in [*stmt.body, *stmt.orelse]:
                self._statement(sub, fallback)
            for handler in stmt.handlers:
                if handler.name:  # (`except E as e`: a Name in gast's tree)
                    bound = getattr(handler.name, "id", handler.name)
                    self._bind(bound, self._opaque(bound, handler), True)
                for sub in handler.body:
                    self._statement(sub, True)
            for sub in stmt.finalbody:
                self._statement(sub, fallback)
        elif isinstance(stmt, (gast.With, gast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    for name in _stored_names(item.optional_vars):
                        self._bind(name, self._opaque(name, stmt), fallback)
            for sub in stmt.body:
                self._statement(sub, fallback)
        elif isinstance(stmt, (gast.Global, gast.Nonlocal, gast.Expr, gast.Pass)):
            pass
        else:
            # classes, loops, augmented assignments, async defs, ...: values known only at run time
            names = [stmt.name] if hasattr(stmt, "name") and isinstance(stmt.name, str) else []
            if not isinstance(stmt, (gast.ClassDef, gast.AsyncFunctionDef)):
                names += list(_stored_names(stmt))
            for name in names:
                self._bind(name, self._opaque(name, stmt), fallback)

    def _assign(self, target: Any, ok: bool, value: Any, stmt: Any, fallback: bool) -> None:
        if isinstance(target, gast.Name):
            self._bind(target.id, value if ok else self._opaque(target.id, stmt), fallback)
        elif (
            isinstance(target, gast.Tuple | gast.List)
            and ok
            and isinstance(value, tuple | list)
            and len(value) == len(target.elts)
        ):
            for sub, item in zip(target.elts, value):
                self._assign(sub, True, item, stmt, fallback)
        else:
            for name in _stored_names(target):
                self._bind(name, self._opaque(name, stmt), fallback)

    def _bind(self, name: str, value: _Binding, fallback: bool) -> None:
        if fallback and name in self._bindings:
            return
        self._bindings[name] = value

    def _opaque(self, name: str, stmt: Any) -> Opaque:
        return Opaque(name, self.filename, getattr(stmt, "lineno", 0) or 0)

    def _import(
        self, module: str, attr: str | None, name: str, stmt: Any, absolute: bool = True
    ) -> _Binding:
        if absolute and _known(module):
            return _Import(module, attr, name, stmt.lineno, stmt.col_offset)
        return self._opaque(module if attr is None else f"{module}.{attr}", stmt)

    # -- lookup ---------------------------------------------------------------------------------
    def lookup(self, name: str) -> Any:
        """The object ``name`` means at module level; ``KeyError`` if it is not defined."""
        if name in self._bindings:
            value = self._bindings[name]
            if isinstance(value, _Import):
                value = self._bindings[name] = self._resolve(value)
            return value
        for star in reversed(self._star):
            module = self._resolve(star)
            public = getattr(module, "__all__", None)
            if (name in public) if public is not None else not name.startswith("_"):
                if hasattr(module, name):
                    return getattr(module, name)
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise KeyError(name)

    def _resolve(self, imp: _Import) -> Any:
        loc = SourceLocation(self.filename, imp.lineno, imp.col, self.lines.get(imp.lineno, ""))
        try:
            module = importlib.import_module(imp.module)
        except ImportError as exc:
            raise UnresolvedNameError(
                f"cannot import `{imp.module}` ({exc})", loc, f"install {imp.module.split('.')[0]}"
            ) from None
        if imp.attr is None:
            return module
        try:
            return getattr(module, imp.attr)
        except AttributeError:
            pass
        try:  # from scipy import special: a submodule
            return importlib.import_module(f"{imp.module}.{imp.attr}")
        except ImportError:
            raise UnresolvedNameError(
                f"cannot import `{imp.attr}` from `{imp.module}`", loc, "check the spelling"
            ) from None

    # -- expressions ----------------------------------------------------------------------------
    def resolve_expr(self, node: Any) -> tuple[bool, Any]:
        """Resolve ``name`` or ``name.attr.attr``: ``(True, object)``, or ``(False, None)``.

        Attributes are only looked up on real modules and on objects adgen
        imported (never on anything from the file itself).
        """
        if isinstance(node, gast.Name):
            try:
                return True, self.lookup(node.id)
            except KeyError:
                return False, None
        if isinstance(node, gast.Attribute):
            ok, base = self.resolve_expr(node.value)
            if ok and isinstance(base, types.ModuleType) and hasattr(base, node.attr):
                return True, getattr(base, node.attr)
        return False, None

    def loc(self, node: Any) -> SourceLocation:
        lineno = getattr(node, "lineno", 1) or 1
        col = getattr(node, "col_offset", 0) or 0
        return SourceLocation(self.filename, lineno, col, self.lines.get(lineno, ""))


# -- functions of the file -----------------------------------------------------------------------
def parse_file_function(
    path: str, node: gast.FunctionDef, scope: StaticScope | None = None
) -> ParsedFunction:
    """The :class:`~adgen.frontend.parse.ParsedFunction` of a module-level ``def`` of ``path``.

    ``scope`` is the file's :class:`StaticScope` (read from ``path`` if not given).
    """
    if scope is None:
        scope = StaticScope.from_path(path)
    return ParsedFunction(
        node=node,
        name=node.name,
        filename=path,
        line_offset=0,
        col_offset=0,
        lines=scope.lines,
        scope=scope,
    )


def stand_in(path: str, node: gast.FunctionDef) -> types.FunctionType:
    """A function with the name, positional parameters, file and line of ``node``.

    Its body is empty: it exists so the helpers of :mod:`adgen.api` and
    :mod:`adgen.pipeline` that take a live function (``wrt`` resolution, error
    locations) can be used on a function that was only read. Only this
    generated stub is compiled, never the user's code.
    """
    params = [a.id for a in [*node.args.posonlyargs, *node.args.args]]
    module = compile(f"def {node.name}({', '.join(params)}):\n    pass\n", path, "exec")
    code = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    return types.FunctionType(code.replace(co_firstlineno=node.lineno), {}, node.name)


# -- @differentiate ------------------------------------------------------------------------------
@dataclass(frozen=True)
class DecoratorSettings:
    """The literal ``wrt`` and ``mode`` of an ``@differentiate`` decorator (None: not given)."""

    wrt: int | str | tuple[int | str, ...] | None
    mode: str | None


def _is_differentiate(obj: Any) -> bool:
    from adgen.api import differentiate

    return obj is differentiate


def differentiate_settings(scope: StaticScope, node: gast.FunctionDef) -> DecoratorSettings | None:
    """The settings of ``node``'s ``@differentiate`` decorator, or None if it has none.

    The decorator is recognised by what it resolves to (``@differentiate``,
    ``@adgen.differentiate``, ``@ad.differentiate(...)`` after ``import adgen as
    ad``...). Its arguments must be literals (or names of module-level literals).
    """
    for dec in node.decorator_list:
        call = dec if isinstance(dec, gast.Call) else None
        ok, obj = scope.resolve_expr(call.func if call is not None else dec)
        if not ok or not _is_differentiate(obj):
            continue
        if call is None:
            return DecoratorSettings(None, None)
        if call.args:
            _refuse(
                scope,
                call.args[0],
                "@differentiate(...) takes keyword arguments only",
                "write @differentiate(wrt=..., mode=...)",
            )
        values: dict[str, Any] = {}
        for kw in call.keywords:
            if kw.arg not in ("wrt", "mode"):
                what = f"`{kw.arg}`" if kw.arg else "`**`"
                _refuse(
                    scope,
                    kw.value,
                    f"@differentiate has no argument {what}",
                    "use wrt=... and mode=...",
                )
            values[kw.arg] = _decorator_literal(scope, kw.arg, kw.value)
        return DecoratorSettings(
            _check_wrt(scope, values.get("wrt"), call), _check_mode(scope, values.get("mode"), call)
        )
    return None


def _decorator_literal(scope: StaticScope, arg: str, node: Any) -> Any:
    ok, value = _literal(node)
    if ok:
        return value
    if isinstance(node, gast.Name):
        try:
            value = scope.lookup(node.id)
        except KeyError:
            value = None
        if isinstance(value, int | str | tuple):
            return value
    _refuse(
        scope,
        node,
        f"the command line needs a literal `{arg}` in @differentiate(...)",
        f"write it as a constant, or pass --{arg}",
    )


def _check_wrt(scope: StaticScope, wrt: Any, node: Any) -> Any:
    items = wrt if isinstance(wrt, tuple | list) else (wrt,)
    if wrt is not None and (
        not items or any(isinstance(i, bool) or not isinstance(i, int | str) for i in items)
    ):
        raise WrtError(
            f"wrt must be a parameter index, a name, or a tuple of those, not {wrt!r}",
            scope.loc(node),
        )
    return tuple(wrt) if isinstance(wrt, list) else wrt


def _check_mode(scope: StaticScope, mode: Any, node: Any) -> str | None:
    if mode is not None and mode not in MODES:
        raise AdgenError(f"mode must be 'forward' or 'reverse', not {mode!r}", scope.loc(node))
    return None if mode is None else str(mode)


def _refuse(scope: StaticScope, node: Any, message: str, hint: str) -> NoReturn:
    raise AdgenError(message, scope.loc(node), hint)
