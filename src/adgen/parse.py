"""Read a function's source with :mod:`inspect`, parse it with gast, and know its scope.

:func:`parse_function` finds the ``def`` (or ``lambda``) of a live function
and keeps the absolute line numbers of its file, so every later error can
point at the user's own line. :class:`LiveScope` answers "which Python object
does this name mean?" from the function's closure cells, module globals and
builtins, and records each answer so a cache can later check that none of
them changed.
"""

from __future__ import annotations

import builtins
import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any, Protocol

import gast

from .errors import SourceLocation, SourceUnavailableError, UnsupportedSyntaxError


class Scope(Protocol):
    def lookup(self, name: str) -> Any:
        """The object ``name`` means; ``KeyError`` if it is not defined."""
        ...


@dataclass
class ParsedFunction:
    """A function's syntax tree with the absolute place of its lines."""

    node: gast.FunctionDef
    name: str
    filename: str
    line_offset: int  # absolute line = node line + line_offset
    col_offset: int  # absolute column = node column + col_offset
    lines: dict[int, str]
    scope: Scope

    def loc(self, node: Any) -> SourceLocation:
        lineno = getattr(node, "lineno", None) or self.node.lineno
        line = lineno + self.line_offset
        col = (getattr(node, "col_offset", 0) or 0) + self.col_offset
        return SourceLocation(self.filename, line, col, self.lines.get(line, ""))

    def line(self, node: Any) -> int:
        return (getattr(node, "lineno", None) or self.node.lineno) + self.line_offset


_MISSING = object()


@dataclass
class LiveScope:
    """Names of a live function: closure cells, then module globals, then builtins."""

    fn: types.FunctionType
    # (kind, container, name, object) for every answer given
    seen: list[tuple[str, Any, str, Any]] = field(default_factory=list)
    _keys: set[tuple[int, str]] = field(default_factory=set)

    def _record(self, kind: str, container: Any, name: str, value: Any) -> None:
        key = (id(container), name)
        if key not in self._keys:
            self._keys.add(key)
            self.seen.append((kind, container, name, value))

    def lookup(self, name: str) -> Any:
        code = self.fn.__code__
        if name in code.co_freevars and self.fn.__closure__:
            cell = self.fn.__closure__[code.co_freevars.index(name)]
            try:
                value = cell.cell_contents
            except ValueError:
                raise KeyError(name) from None
            self._record("cell", cell, name, value)
            return value
        globs = self.fn.__globals__
        if name in globs:
            value = globs[name]
            self._record("global", globs, name, value)
            return value
        b = globs.get("__builtins__", builtins)
        table = b if isinstance(b, dict) else vars(b)
        if name in table:
            return table[name]
        raise KeyError(name)


def dependencies_unchanged(seen: list[tuple[str, Any, str, Any]]) -> bool:
    """True when every name looked up still means the same object."""
    for kind, container, name, value in seen:
        if kind == "cell":
            try:
                current = container.cell_contents
            except ValueError:
                return False
        elif kind == "code":
            current = getattr(container, name)
        else:
            current = container.get(name, _MISSING)
        if current is not value:
            return False
    return True


def unwrap(fn: Any) -> types.FunctionType:
    """The plain Python function behind ``fn`` (adgen wrappers, functools.wraps)."""
    seen = 0
    while not isinstance(fn, types.FunctionType) and hasattr(fn, "__wrapped__") and seen < 100:
        fn = fn.__wrapped__
        seen += 1
    if not isinstance(fn, types.FunctionType):
        what = type(fn).__name__
        raise SourceUnavailableError(
            f"adgen can only differentiate Python functions, not a {what} ({fn!r})",
            hint="pass a function defined with def or lambda",
        )
    return fn


def parse_function(fn: types.FunctionType, scope: Scope | None = None) -> ParsedFunction:
    """Parse a live function's source into a gast ``FunctionDef``."""
    filename = fn.__code__.co_filename
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise SourceUnavailableError(
            f"cannot read the source of {fn.__qualname__} ({exc})",
            SourceLocation(filename, fn.__code__.co_firstlineno),
            hint="define the function in a file or notebook cell (not with exec or eval)",
        ) from None
    start = max(start, 1)
    all_lines = linecache.getlines(filename)
    absolute = (
        {i + 1: text for i, text in enumerate(all_lines)}
        if all_lines
        else {start + i: text for i, text in enumerate(lines)}
    )
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = _indent_width(lines)
    try:
        tree = gast.parse(dedented)
    except SyntaxError:
        # A lambda inside an expression: its lines are not a statement on their own.
        tree = gast.parse("(\n" + dedented + "\n)") if fn.__name__ == "<lambda>" else None
        if tree is None:
            raise SourceUnavailableError(
                f"cannot parse the source of {fn.__qualname__}",
                SourceLocation(filename, start, 0, absolute.get(start, "")),
            ) from None
        start -= 1
    node = _find_def(tree, fn, start)
    return ParsedFunction(
        node=node,
        name=fn.__name__ if fn.__name__ != "<lambda>" else "lambda",
        filename=filename,
        line_offset=start - 1,
        col_offset=indent,
        lines=absolute,
        scope=scope if scope is not None else LiveScope(fn),
    )


def _indent_width(lines: list[str]) -> int:
    for line in lines:
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0


def _find_def(tree: gast.Module, fn: types.FunctionType, start: int) -> gast.FunctionDef:
    if fn.__name__ != "<lambda>":
        for node in tree.body:
            if isinstance(node, gast.FunctionDef) and node.name == fn.__name__:
                return node
        for node in gast.walk(tree):
            if isinstance(node, gast.FunctionDef) and node.name == fn.__name__:
                return node
        raise SourceUnavailableError(f"cannot find the definition of {fn.__qualname__}")
    lambdas = [n for n in gast.walk(tree) if isinstance(n, gast.Lambda)]
    nparams = fn.__code__.co_argcount
    lambdas = [n for n in lambdas if len(n.args.args) == nparams]
    if len(lambdas) != 1:
        line = start + (lambdas[1].lineno - 1 if len(lambdas) > 1 else 0)
        raise UnsupportedSyntaxError(
            "cannot tell which lambda on this line to differentiate",
            SourceLocation(
                fn.__code__.co_filename, line, 0, linecache.getline(fn.__code__.co_filename, line)
            ),
            hint="give the function a name with def",
        )
    lam = lambdas[0]
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam.body)
    fdef = gast.FunctionDef(
        name="lambda",
        args=lam.args,
        body=[ret],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    return gast.copy_location(fdef, lam)
