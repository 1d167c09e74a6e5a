"""Find the ``lambda`` a live function came from in the text of its file.

A lambda has no statement of its own: it sits inside an expression, often with others on
the same line (``if adgen.grad(lambda s: s * s)(x) > 0:``, ``(lambda x: x * x, lambda x: x
+ x)``), in a comprehension, a keyword argument or a decorator, and may span several
lines. So adgen parses the whole file (once per file text) and takes the lambdas that start
on the code object's first line with the function's parameters. Each is compiled alone
(inside a function binding the names the lambda reads from enclosing functions, in a module
importing what the file imports, so the compiler makes the same choices) and its code
object compared with the function's:

1. bytecode, constants, names and the places of its instructions (lines and columns on
   Python 3.11+, lines before): this tells apart lambdas that differ in any way;
2. the same without the places;
3. the instructions and what they name, less the few choices the compiler makes from
   outside the lambda.

Lambdas that compile alike compute the same thing, so any of them will do. When the text
matches none of them -- the file changed since it ran -- adgen refuses rather than
differentiate other code.
"""

from __future__ import annotations

import ast
import copy
import dis
import sys
import threading
import types
from dataclasses import dataclass
from typing import Any

from adgen.errors import (
    SourceLocation,
    SourceUnavailableError,
    UnsupportedSyntaxError,
    source_name,
)

_HINT = "bind it to a name with def (def square(s): return s * s) and differentiate that"
_ENCLOSING = "_adgen_enclosing"


@dataclass(frozen=True)
class _File:
    text: str
    lambdas: dict[int, list[ast.Lambda]]  # by the line they start on
    imported: tuple[str, ...]  # names the module imports (the compiler treats them apart)


# file name -> what its text holds; a few files only
_FILES: dict[str, _File] = {}
_MAX_FILES = 16
_lock = threading.Lock()


def _module_imports(tree: ast.Module) -> tuple[str, ...]:
    """Names bound by an import in the module's own scope (not inside a def or class)."""
    names: list[str] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    names.append(alias.asname or alias.name.split(".")[0])
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
            for handler in getattr(node, "handlers", []):  # try: ... except: import ...
                todo.extend(handler.body)
            for case in getattr(node, "cases", []):  # match: case ...: import ...
                todo.extend(case.body)
    return tuple(sorted(set(names)))


def _read(filename: str, text: str) -> _File:
    """The lambdas and imports of a file's text (``SyntaxError`` if it does not parse)."""
    with _lock:
        held = _FILES.get(filename)
        if held is not None and held.text == text:
            return held
    # a notebook cell may use `await` at the top level
    flags = ast.PyCF_ONLY_AST | getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
    tree = compile(text, filename, "exec", flags, dont_inherit=True)
    table: dict[int, list[ast.Lambda]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            table.setdefault(node.lineno, []).append(node)
    for nodes in table.values():
        nodes.sort(key=lambda n: n.col_offset)
    read = _File(text, table, _module_imports(tree))
    with _lock:
        if len(_FILES) >= _MAX_FILES:
            _FILES.pop(next(iter(_FILES)))
        _FILES[filename] = read
    return read


def _same_parameters(node: ast.Lambda, code: types.CodeType) -> bool:
    args = node.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    n = code.co_argcount
    kwonly = [a.arg for a in args.kwonlyargs]
    return (
        positional == list(code.co_varnames[:n])
        and len(args.posonlyargs) == code.co_posonlyargcount
        and kwonly == list(code.co_varnames[n : n + code.co_kwonlyargcount])
        and (args.vararg is not None) == bool(code.co_flags & 0x04)  # CO_VARARGS
        and (args.kwarg is not None) == bool(code.co_flags & 0x08)  # CO_VARKEYWORDS
    )


def _alone(node: ast.Lambda, code: types.CodeType, read: _File) -> types.CodeType | None:
    """The code object of ``node`` compiled alone, as the compiler saw it in its file: inside
    a function binding the names ``code`` reads from enclosing functions (so they compile as
    closure reads), in a module importing what the file imports. None if it does not compile.
    """
    lam = copy.deepcopy(node)
    # default values are evaluated outside the lambda: they are not part of its code
    lam.args.defaults = [ast.Constant(None) for _ in lam.args.defaults]
    lam.args.kw_defaults = [None if d is None else ast.Constant(None) for d in lam.args.kw_defaults]
    body: list[ast.stmt] = [
        ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=ast.Constant(None))
        for name in code.co_freevars
    ]
    body.append(ast.Return(value=lam))
    enclosing = ast.FunctionDef(
        name=_ENCLOSING,
        args=ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], defaults=[]
        ),
        body=body,
        decorator_list=[],
        returns=None,
        type_comment=None,
    )
    if sys.version_info >= (3, 12):
        enclosing.type_params = []
    imports: list[ast.stmt] = [
        ast.Import(names=[ast.alias(name=name, asname=None)]) for name in read.imported
    ]
    module = ast.Module(body=[*imports, enclosing], type_ignores=[])
    for part in [*imports, enclosing]:
        ast.copy_location(part, node)  # the lambda keeps its own places
    ast.fix_missing_locations(module)
    try:
        compiled = compile(module, code.co_filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return None
    for const in compiled.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == _ENCLOSING:
            for inner in const.co_consts:
                if isinstance(inner, types.CodeType) and inner.co_name == "<lambda>":
                    return inner
    return None


# what a comparison looks at: the code and the places of its instructions, the code, or
# the instructions with what they name, less what the compiler decides from outside the
# lambda (`np.sin(x)` loads a method, or an attribute when the enclosing module's symbol
# table says `np` was imported -- not so for a notebook cell's last line, compiled alone)
PLACES, CODE, OPERATIONS = 3, 2, 1

_SAME_OP = {"LOAD_METHOD": "LOAD_ATTR", "CALL_METHOD": "CALL_FUNCTION"}
_NO_OP = {"NOP", "CACHE", "PUSH_NULL", "PRECALL", "EXTENDED_ARG", "RESUME"}
_JUMPS = set(dis.hasjrel) | set(dis.hasjabs)


def code_key(code: types.CodeType, level: int, qualname: str) -> tuple[Any, ...]:
    """What two compilations of one lambda share, at ``level``. ``qualname`` is the lambda's
    qualified name: Python 3.10 keeps the names of functions made inside it as constants,
    which start with it."""

    def const(c: Any) -> Any:
        if isinstance(c, types.CodeType):
            return ("code", code_key(c, level, qualname))
        if isinstance(c, tuple):
            return ("tuple", tuple(const(x) for x in c))
        if isinstance(c, frozenset):
            return ("frozenset", tuple(sorted(repr(const(x)) for x in c)))
        if isinstance(c, str) and c.startswith(qualname + ".<locals>."):
            return ("str", "@" + c[len(qualname) :])
        return (type(c).__name__, repr(c))

    key: tuple[Any, ...] = (
        code.co_name,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
    )
    if level == OPERATIONS:
        # a jump names the instruction it goes to by its place among those compared
        at: dict[int, int] = {}
        kept: list[dis.Instruction] = []
        for op in dis.get_instructions(code):
            at[op.offset] = len(kept)
            if op.opname not in _NO_OP:
                kept.append(op)
        ops = tuple(
            (
                _SAME_OP.get(op.opname, op.opname),
                at.get(op.argval, -1) if op.opcode in _JUMPS else const(op.argval),
            )
            for op in kept
        )
        return key + (ops,)
    key += (
        code.co_names,
        tuple(const(c) for c in code.co_consts),
        # the kind of code, not CO_NESTED (what encloses the lambda) nor the __future__
        # imports of its file (0x20000 and up)
        code.co_flags & 0x3EF,
        code.co_code,
        getattr(code, "co_exceptiontable", b""),
    )
    if level == PLACES:
        if hasattr(code, "co_positions"):  # Python 3.11+: lines and columns
            key += (code.co_firstlineno, tuple(code.co_positions()))
        else:
            key += (code.co_firstlineno, tuple(code.co_lines()))
    return key


def _location(filename: str, line: int, lines: list[str], col: int = -1) -> SourceLocation:
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if col < 0:
        col = len(text) - len(text.lstrip())
    return SourceLocation(filename, line, col, text)


def find_lambda(fn: types.FunctionType, lines: list[str]) -> ast.Lambda:
    """The ``lambda`` node of ``fn`` in its file's ``lines`` (positions as in the file)."""
    code = fn.__code__
    filename = code.co_filename
    line = code.co_firstlineno
    try:
        read = _read(filename, "".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise SourceUnavailableError(
            f"cannot find this lambda: the text of {source_name(filename)} does not parse as "
            "Python (was it changed since it ran?)",
            _location(filename, line, lines),
            _HINT,
        ) from None
    candidates = [n for n in read.lambdas.get(line, []) if _same_parameters(n, code)]
    if not candidates:
        params = ", ".join(code.co_varnames[: code.co_argcount])
        raise SourceUnavailableError(
            f"cannot find this lambda: no lambda with the parameters ({params}) starts on "
            f"line {line} of {source_name(filename)} (was the file changed since it ran?)",
            _location(filename, line, lines),
            _HINT,
        )
    compiled = [_alone(n, code, read) for n in candidates]
    if len(candidates) == 1 and compiled[0] is None:
        return candidates[0]  # cannot be checked, and nothing else it could be
    own = getattr(code, "co_qualname", fn.__qualname__)
    for level in (PLACES, CODE, OPERATIONS):
        want = code_key(code, level, own)
        for n, c in zip(candidates, compiled):
            if c is not None and code_key(c, level, f"{_ENCLOSING}.<locals>.<lambda>") == want:
                # the first of several that compile alike: each computes what fn computes
                return n
    where = _location(filename, line, lines, candidates[0].col_offset)
    if len(candidates) == 1:
        raise SourceUnavailableError(
            f"the lambda on line {line} of {source_name(filename)} is not the code that runs "
            "(was the file changed since it ran?)",
            where,
            "re-run the code that defines the lambda, or " + _HINT,
        )
    raise UnsupportedSyntaxError(
        f"cannot tell which of the {len(candidates)} lambdas on this line is the one to "
        "differentiate: none of them compiles to the code that runs (was the file changed "
        "since it ran?)",
        where,
        _HINT,
    )
