"""Read a function's source with :mod:`inspect`, parse it with gast, and know its scope.

:func:`parse_function` finds the ``def`` (or ``lambda``) of a live function
and keeps the absolute line numbers of its file, so every later error can
point at the user's own line. :class:`LiveScope` answers "which Python object
does this name mean?" from the function's closure cells, module globals and
builtins, and records each answer so a cache can later check that none of
them changed.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib.util
import inspect
import keyword
import linecache
import os
import sys
import textwrap
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import gast

from adgen.errors import SourceLocation, SourceUnavailableError, UnsupportedSyntaxError
from adgen.frontend import interactive
from adgen.frontend.interactive import STDIN, history_source
from adgen.frontend.lambdas import find_lambda

#: Top-level packages the command line (a file read without running it) may import to
#: resolve names. Nothing else is ever imported -- in particular never the file being compiled.
KNOWN_PACKAGES = frozenset({"numpy", "math", "scipy", "operator", "builtins", "adgen"})


class Scope(Protocol):
    def lookup(self, name: str) -> Any:
        """The object ``name`` means; ``KeyError`` if it is not defined."""
        ...


class SourceLines(Mapping[int, str]):
    """A file's lines by their number (1-based), read from the list of lines itself: a
    function parsed from a long file does not copy the file's lines into a dict.

    >>> lines = SourceLines(["a = 1\\n", "b = 2\\n"])
    >>> lines.get(2), lines.get(3, ""), len(lines)
    ('b = 2\\n', '', 2)
    """

    __slots__ = ("_lines", "_first")

    def __init__(self, lines: Sequence[str], first: int = 1) -> None:
        self._lines = lines
        self._first = first

    def __getitem__(self, number: int) -> str:
        index = number - self._first
        if not isinstance(number, int) or not 0 <= index < len(self._lines):
            raise KeyError(number)
        return self._lines[index]

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._first, self._first + len(self._lines)))

    def __len__(self) -> int:
        return len(self._lines)


@dataclass
class ParsedFunction:
    """A function's syntax tree with the absolute place of its lines."""

    node: gast.FunctionDef
    name: str
    filename: str
    line_offset: int  # absolute line = node line + line_offset
    col_offset: int  # absolute column = node column + col_offset
    lines: Mapping[int, str]
    scope: Scope

    def loc(self, node: Any) -> SourceLocation:
        lineno = getattr(node, "lineno", None) or self.node.lineno
        line = lineno + self.line_offset
        col = (getattr(node, "col_offset", 0) or 0) + self.col_offset
        return SourceLocation(self.filename, line, col, self.lines.get(line, ""))

    def line(self, node: Any) -> int:
        return (getattr(node, "lineno", None) or self.node.lineno) + self.line_offset


_MISSING = object()
MISSING = _MISSING  # (an attribute absent when it was read: LiveScope records it so)


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
            shape = getattr(value, "shape", None)
            if type(shape) is tuple and type(value).__name__ == "ndarray":
                # code specialised for shapes reads an outside array's shape: an array
                # reshaped in place (`a.shape = ...`) must rebuild it too
                self._record("shape", value, "shape", shape)

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
    """True when every name looked up still means the same object.

    Asked at every call of a cached derivative, so the test is compiled once per list of
    lookups (:func:`_compiled_check`: one expression of ``is`` tests, no loop), and compiled
    again if the list grew since.

    >>> class Model:
    ...     pass
    >>> m = Model()
    >>> m.w = 1.0
    >>> seen = [("attr", m, "w", m.w), ("global", {"np": 1}, "np", 1)]
    >>> dependencies_unchanged(seen)
    True
    >>> m.w = 2.0
    >>> dependencies_unchanged(seen)
    False
    >>> del m.w  # (gone: changed too)
    >>> dependencies_unchanged(seen)
    False
    """
    held = _CHECKS.get(id(seen))
    if held is None or held[0] is not seen or held[1] != len(seen):
        if len(_CHECKS) >= _MAX_CHECKS:
            _CHECKS.clear()
        held = _CHECKS[id(seen)] = (seen, len(seen), _compiled_check(seen))
    return held[2]()


# compiled checks by the id of their list of lookups: (the list, its length, the check); the
# list is held so that its id is not reused while the entry is
_CHECKS: dict[int, tuple[list[Any], int, Callable[[], bool]]] = {}
_MAX_CHECKS = 4096


def _compiled_check(seen: list[tuple[str, Any, str, Any]]) -> Callable[[], bool]:
    """A function telling whether every lookup of ``seen`` still finds its object."""
    namespace: dict[str, Any] = {
        "M": _MISSING,
        "same_adgen": _same_adgen,
        "same_items": _same_items,
    }
    tests = []
    asked: set[tuple[str, int, str, int]] = set()
    for k, (kind, container, name, value) in enumerate(seen):
        if (kind, id(container), name, id(value)) in asked:
            continue  # (the same lookup twice: one test)
        asked.add((kind, id(container), name, id(value)))
        namespace[f"c{k}"], namespace[f"v{k}"] = container, value
        if kind == "cell":
            tests.append(f"c{k}.cell_contents is v{k}")
        elif kind == "shape":
            tests.append(f"c{k}.shape == v{k}")
        elif kind == "items":
            tests.append(f"same_items(c{k}, v{k})")
        elif kind == "data":  # (a list, set or dict of plain data, by its contents)
            tests.append(f"c{k} == v{k}")
        elif kind == "adgen":
            tests.append(f"same_adgen(c{k}, v{k})")
        elif kind in ("attr", "code") and value is not _MISSING and _plain_name(name):
            tests.append(f"c{k}.{name} is v{k}")  # (faster than getattr; gone: it raises)
        elif kind in ("attr", "code"):
            tests.append(f"getattr(c{k}, {name!r}, M) is v{k}")
        else:  # (a mapping: a module's globals, adgen's views of containers)
            tests.append(f"c{k}.get({name!r}, M) is v{k}")
    body = " and ".join(f"({t})" for t in tests) or "True"
    source = (
        "def check():\n"
        "    try:\n"
        f"        return bool({body})\n"
        "    except (ValueError, AttributeError):  # (an empty closure cell; an attribute\n"
        "        return False  # gone)\n"
    )
    exec(compile(source, "<adgen dependencies>", "exec"), namespace)
    return namespace["check"]  # type: ignore[no-any-return]


def _plain_name(name: str) -> bool:
    """Can ``name`` be written after a dot (``c.name``)?"""
    return name.isidentifier() and not keyword.iskeyword(name)


def _same_items(container: Any, value: Any) -> bool:
    """Does the list hold the same objects, in order, as it held then?"""
    return len(container) == len(value) and all(a is b for a, b in zip(container, value))


def _same_adgen(container: Any, value: Any) -> bool:
    """Does a derivative object called stand for the same function as then?"""
    try:
        return container.adgen_function() is value
    except Exception:
        return False


def unwrap(fn: Any) -> types.FunctionType:
    """The plain Python function behind ``fn`` (adgen wrappers, functools.wraps).

    A function with a rule of its own (``adgen.defrule``, ``@adgen.custom_derivative``...)
    is differentiated through that rule: a one-line function calling it stands for it.
    """
    from adgen.custom import stand_in, through_rule

    seen = 0
    while seen < 100:
        caller = through_rule(fn)
        if caller is not None:
            return caller
        make = getattr(fn, "adgen_function", None)
        if make is not None:  # an adgen derivative (grad, jacfwd, hvp...): the function that
            fn = make()  # computes it through generated code, not `f`
            break
        if isinstance(fn, types.FunctionType) and _forwards(fn):
            made = stand_in(fn)  # def wrapper(*args, **kwargs): a function of the wrapped
            if made is not None:  # function's parameters calling it stands for it
                return made
        if isinstance(fn, (types.FunctionType, types.MethodType, functools.partial)):
            break  # (a method's __wrapped__ would be its function, without its object)
        if not hasattr(fn, "__wrapped__"):
            break
        fn = fn.__wrapped__
        seen += 1
    if not isinstance(fn, types.FunctionType):
        made = stand_in(fn)  # a bound method, a partial, a callable object: a function
        if made is not None:  # calling it stands for it
            return made
        what = type(fn).__name__
        raise SourceUnavailableError(
            f"adgen can only differentiate Python functions, not a {what} ({fn!r})",
            hint="pass a function defined with def or lambda",
        )
    return fn


def _forwards(fn: types.FunctionType) -> bool:
    """Is ``fn`` a decorator's wrapper taking ``*args`` only (``functools.wraps``), whose
    parameters are the wrapped function's?"""
    code = fn.__code__
    return (
        getattr(fn, "__wrapped__", None) is not None
        and code.co_argcount == 0
        and bool(code.co_flags & inspect.CO_VARARGS)
    )


def _file_changed_since_import(fn: types.FunctionType) -> bool:
    """Was the function's file edited after its module was imported (without a reload)?

    The module's bytecode cache records the source's modification time and size when it
    was compiled; if the file on disk no longer matches, its text is not the running code.
    """
    filename = fn.__code__.co_filename
    module = sys.modules.get(fn.__module__ or "")
    cached = getattr(module, "__cached__", None)
    if not cached or getattr(module, "__file__", None) != filename or sys.dont_write_bytecode:
        return False
    try:
        with open(cached, "rb") as fh:
            header = fh.read(16)
        stat = os.stat(filename)
    except OSError:
        return False
    if len(header) < 16 or header[:4] != importlib.util.MAGIC_NUMBER:
        return False
    if int.from_bytes(header[4:8], "little") != 0:  # a hash-based cache: not comparable
        return False
    mtime = int.from_bytes(header[8:12], "little")
    size = int.from_bytes(header[12:16], "little")
    return (int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF) != (mtime, size)


#: The source block of each code object read so far, by its file, line and name (the code
#: object kept to tell apart two functions of one place: a reloaded module's, a cell run again)
_SOURCE_BLOCKS: dict[tuple[str, int, str], tuple[types.CodeType, list[str], int]] = {}


def source_block(code: types.CodeType) -> tuple[list[str], int]:
    """``inspect.getsourcelines(code)``: the lines of the ``def`` that compiled ``code`` and
    the number of its first line, read once per code object.

    ``inspect`` looks up the module of the code at every call by scanning ``sys.modules``
    (a millisecond where SciPy, scikit-learn and statsmodels are loaded) and tokenizes the
    file from the ``def`` on; a function differentiated again, or inlined into many
    functions, pays that once here.

    >>> def f(x):
    ...     return x + 1
    >>> lines, start = source_block(f.__code__)
    >>> lines[1].strip(), start == f.__code__.co_firstlineno
    ('return x + 1', True)
    >>> source_block(f.__code__)[0] is lines
    True
    """
    key = (code.co_filename, code.co_firstlineno, code.co_name)
    known = _SOURCE_BLOCKS.get(key)
    if known is not None and known[0] is code:
        return known[1], known[2]
    linecache.checkcache(code.co_filename)
    every = linecache.getlines(code.co_filename)
    number = code.co_firstlineno
    if not every or not 0 < number <= len(every):
        lines, start = inspect.getsourcelines(code)  # a loader's source (zip), or its error
    else:
        lines, start = inspect.getblock(every[number - 1 :]), number
    _SOURCE_BLOCKS[key] = (code, lines, start)
    return lines, start


_PARSED_BLOCKS: dict[tuple[str, int, str], tuple[types.CodeType, ast.Module | None]] = {}


def parsed_block(code: types.CodeType) -> ast.Module | None:
    """:func:`ast.parse` of :func:`source_block` (dedented), made once per code object and
    shared: read it, do not change it. None where the code has no source or it does not
    parse alone.

    >>> def f(x):
    ...     return x + 1
    >>> type(parsed_block(f.__code__).body[0]).__name__
    'FunctionDef'
    """
    key = (code.co_filename, code.co_firstlineno, code.co_name)
    known = _PARSED_BLOCKS.get(key)
    if known is not None and known[0] is code:
        return known[1]
    try:
        tree: ast.Module | None = ast.parse(textwrap.dedent("".join(source_block(code)[0])))
    except (OSError, TypeError, SyntaxError):
        tree = None
    _PARSED_BLOCKS[key] = (code, tree)
    return tree


def parse_function(fn: types.FunctionType, scope: Scope | None = None) -> ParsedFunction:
    """Parse a live function's source into a gast ``FunctionDef``."""
    filename = fn.__code__.co_filename
    if _file_changed_since_import(fn):
        raise SourceUnavailableError(
            f"{filename} changed since {fn.__qualname__} was imported: its text is not the "
            "code that runs",
            SourceLocation(filename, fn.__code__.co_firstlineno),
            "reload the module (importlib.reload) or re-run the cell, then differentiate again",
        )
    if filename == "<string>":
        # compiled from a string: whatever linecache holds under that name (many strings
        # share it: a test runner's, another exec's) is not this function's text
        raise _no_source(fn, OSError("no source"))
    if fn.__name__ == "<lambda>":
        return _parse_lambda(fn, scope)
    typed = None
    try:
        # the code's own source: inspect would follow __wrapped__ (functools.wraps) to the
        # wrapped function's, whose names mean what they mean in its module, not here
        lines, start = source_block(fn.__code__)
    except (OSError, TypeError) as exc:
        typed = history_source(fn)  # typed at the interactive interpreter (3.10-3.12)
        if typed is None:
            raise _no_source(fn, exc) from None
        start = fn.__code__.co_firstlineno
        lines = inspect.getblock(typed[start - 1 :])
    start = max(start, 1)
    all_lines = typed if typed is not None else linecache.getlines(filename)
    absolute = SourceLines(all_lines) if all_lines else SourceLines(lines, start)
    text = "".join(lines)
    indent = _indent_width(lines)
    line_offset = start - 1
    try:
        tree = gast.parse(textwrap.dedent(text))
    except SyntaxError:
        # a method whose string holds a line less indented than its code (a docstring's line
        # continued at column 0): dedent leaves it all indented; parsed inside a block as it
        # stands, every string keeps its text
        try:
            tree = gast.parse("if 1:\n" + text).body[0]
        except SyntaxError:
            raise SourceUnavailableError(
                f"cannot parse the source of {fn.__qualname__}",
                SourceLocation(filename, start, 0, absolute.get(start, "")),
            ) from None
        line_offset, indent = start - 2, 0
    node = _find_def(tree, fn, start)
    _drop_local_annotations(node)
    return ParsedFunction(
        node=node,
        name=fn.__name__ if fn.__name__ != "<lambda>" else "lambda",
        filename=filename,
        line_offset=line_offset,
        col_offset=indent,
        lines=absolute,
        scope=scope if scope is not None else LiveScope(fn),
    )


def _drop_local_annotations(fdef: Any) -> None:
    """``x: T = v`` in the function's body (and in those of functions defined in it) as the
    ``x = v`` it means: Python never evaluates a local variable's annotation. An annotation
    without a value, or of an attribute or an item, stays as written (refused).

    >>> import ast
    >>> fdef = gast.parse("def f(a):\\n    out: list[float] = []\\n    return out").body[0]
    >>> _drop_local_annotations(fdef)
    >>> print(ast.unparse(gast.gast_to_ast(fdef)))
    def f(a):
        out = []
        return out
    """
    for node in gast.walk(fdef):
        if isinstance(node, gast.ClassDef):
            continue  # (a class body's annotations are evaluated, and kept)
        for part in ("body", "orelse", "finalbody"):
            stmts = getattr(node, part, None)
            if not isinstance(stmts, list):
                continue
            for k, stmt in enumerate(stmts):
                if (
                    isinstance(stmt, gast.AnnAssign)
                    and isinstance(stmt.target, gast.Name)
                    and stmt.value is not None
                ):
                    plain = gast.Assign(targets=[stmt.target], value=stmt.value, type_comment=None)
                    stmts[k] = gast.copy_location(plain, stmt)


def plain_arguments(params: list[Any]) -> Any:
    """The ``gast.arguments`` of a function taking ``params`` (parameter nodes, or names)
    positionally, nothing else: no defaults, ``*args``, keyword-only parameters."""
    nodes = [
        gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
        if isinstance(p, str)
        else p
        for p in params
    ]
    return gast.arguments(
        args=nodes,
        posonlyargs=[],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )


def as_def(node: Any, name: str) -> Any:
    """A lambda as the equivalent ``def`` named ``name`` (a ``def`` is returned unchanged)."""
    if isinstance(node, gast.FunctionDef):
        return node
    ret = gast.Return(value=node.body)
    gast.copy_location(ret, node.body)
    fdef = gast.FunctionDef(
        name=name,
        args=node.args,
        body=[ret],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    return gast.copy_location(fdef, node)


def _parse_lambda(fn: types.FunctionType, scope: Scope | None) -> ParsedFunction:
    """A lambda, found in the whole text of its file (:mod:`adgen.frontend.lambdas`), as a
    ``def``."""
    filename = fn.__code__.co_filename
    try:
        lines, _ = inspect.findsource(fn)
    except (OSError, TypeError) as exc:
        typed = history_source(fn)  # typed at the interactive interpreter (3.10-3.12)
        if typed is None:
            raise _no_source(fn, exc) from None
        lines = typed  # the statement, as the interpreter numbered its lines
    fdef = as_def(gast.ast_to_gast(find_lambda(fn, lines)), "lambda")
    return ParsedFunction(
        node=fdef,
        name="lambda",
        filename=filename,
        line_offset=0,  # the whole file was parsed: its places are the file's
        col_offset=0,
        lines=SourceLines(lines),
        scope=scope if scope is not None else LiveScope(fn),
    )


def _no_source(fn: types.FunctionType, exc: Exception) -> SourceUnavailableError:
    """The error for a function whose source cannot be read, saying what to do."""
    filename = fn.__code__.co_filename
    where = SourceLocation(filename, fn.__code__.co_firstlineno)
    name = fn.__qualname__
    if filename == STDIN:  # typed at the interactive interpreter (Python 3.10-3.12)
        if interactive.history():
            why = "its line history (readline) does not hold the definition"
        else:
            why = "it has no line history here (readline) to read it back from"
        return SourceUnavailableError(
            f"cannot read the source of {name}: the interactive interpreter keeps no text of "
            f"what is typed at >>>, and {why}",
            where,
            f"put {name} in a file and import it (python -i FILE.py runs a file, then "
            "starts the interpreter), or type it into Python 3.13+'s interpreter, IPython or "
            "Jupyter, which keep what is typed",
        )
    if filename == "<string>":
        return SourceUnavailableError(
            f"cannot read the source of {name}: it was compiled from a string (exec, eval or "
            "python -c), which keeps no source",
            where,
            f"put {name} in a file and import it",
        )
    return SourceUnavailableError(
        f"cannot read the source of {name} ({exc})",
        where,
        hint="define the function in a file or notebook cell (not with exec or eval)",
    )


def _indent_width(lines: list[str]) -> int:
    for line in lines:
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0


def _find_def(tree: gast.Module, fn: types.FunctionType, start: int) -> gast.FunctionDef:
    name = fn.__code__.co_name  # (functools.wraps renames the function, not its code)
    for node in tree.body:
        if isinstance(node, gast.FunctionDef) and node.name == name:
            return node
        if isinstance(node, gast.AsyncFunctionDef) and node.name == name:
            line = start + node.lineno - 1
            raise UnsupportedSyntaxError(
                "adgen does not support `async def`",
                SourceLocation(
                    fn.__code__.co_filename,
                    line,
                    0,
                    linecache.getline(fn.__code__.co_filename, line),
                ),
                "differentiate an ordinary function",
            )
    for node in gast.walk(tree):
        if isinstance(node, gast.FunctionDef) and node.name == name:
            return node
    raise SourceUnavailableError(f"cannot find the definition of {fn.__qualname__}")
