"""The command line: ``python -m adgen FILE.py`` (or ``adgen FILE.py``) is a compiler.

It reads FILE without running it (see :mod:`adgen.frontend.static`) and prints the
derivative source of every function decorated with ``@differentiate``, or of
the functions named with ``--function``; ``--ir`` prints the three-address IR
instead, and ``--output DIR`` writes one standalone module per function (see
:mod:`adgen.export`). On a terminal the printed code is coloured (``--color``,
``NO_COLOR``). Every problem is reported on one line of stderr, starting with
``file:line`` when it has a place in the file.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from collections.abc import Sequence
from typing import Any

import gast

from adgen import ir
from adgen.api import Wrt, _wrt_names
from adgen.backend.export import is_builtin, module_source, value_source, write_modules
from adgen.errors import AdgenError, InternalError, SourceLocation
from adgen.frontend.lower import lower
from adgen.frontend.static import (
    MODES,
    DecoratorSettings,
    Opaque,
    StaticScope,
    differentiate_settings,
    parse_file_function,
    stand_in,
)
from adgen.generated import Generated
from adgen.middle.optimize import optimize
from adgen.modes.forward import forward
from adgen.modes.reverse import reverse
from adgen.pipeline import guarded

EPILOG = """\
examples:
  python -m adgen model.py
      reverse-mode code of every @differentiate function of model.py
  python -m adgen model.py --function loss --mode forward --wrt w,1
      forward-mode code of loss w.r.t. its parameter w and its second parameter
  python -m adgen model.py --function loss --ir
      the three-address IR of loss (as optimized; add --no-optimize for the IR as lowered)
  python -m adgen model.py --output build/
      write build/loss_vjp.py (one module per function) and build/adgen_runtime.py;
      they need only NumPy (and SciPy for scipy.special): `from loss_vjp import loss_vjp`

The file is only read, never run: imports of numpy, math, scipy, operator and
adgen are resolved, module-level literals are known by value, and any other
global is referred to by name in the printed code. With --output, the literals
a function reads are copied into its module; a function reading any other
module-level value is refused (pass that value as an argument instead).

Printed code is coloured when stdout is a terminal, unless the NO_COLOR
environment variable is set (non-empty) or TERM is dumb; --color always/never
overrides that. Paths printed by --output are never coloured.

exit status:
  0  the code was printed, or the modules were written (their paths printed)
  1  an error in the file (unsupported code, unknown name...), a missing or
     unreadable file, an unknown --function, a function --output cannot make
     standalone, or a DIR that cannot be written; one line on stderr says where
     (one line for each function that failed; the code of the others is still
     printed, but --output writes nothing)
  2  bad command-line usage
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``adgen``."""
    parser = argparse.ArgumentParser(
        prog="adgen",
        description="Print the derivative code adgen generates for the functions of a Python\n"
        "file, without running the file.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="the Python file to read")
    parser.add_argument(
        "--function",
        metavar="NAME",
        action="append",
        default=[],
        help="differentiate this module-level function, decorated or not (repeatable); "
        "default: every function decorated with @differentiate",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        help="reverse (vector-Jacobian product) or forward (Jacobian-vector product); "
        "default: the decorator's mode, else reverse",
    )
    parser.add_argument(
        "--wrt",
        metavar="PARAMS",
        type=_parse_wrt,
        help="comma-separated parameter names or indices to differentiate with respect to; "
        "default: the decorator's wrt, else 0 (the first parameter)",
    )
    parser.add_argument(
        "--ir",
        action="store_true",
        help="print the three-address IR that is differentiated instead of derivative code",
    )
    parser.add_argument(
        "--no-optimize",
        dest="optimize",
        action="store_false",
        help="skip the IR optimizer (constant folding, common subexpressions, dead code); "
        "the derivative then follows the source statement by statement",
    )
    parser.add_argument(
        "--output",
        metavar="DIR",
        help="write one importable module per function into DIR (created if needed), "
        "plus adgen_runtime.py; print the paths written",
    )
    parser.add_argument(
        "--color",
        "--colour",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the printed code: auto (on a terminal without NO_COLOR; the default), "
        "always, or never",
    )
    return parser


def _parse_wrt(text: str) -> Wrt:
    items: list[int | str] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise argparse.ArgumentTypeError(f"{text!r} has an empty item; write e.g. x,1")
        try:
            items.append(int(part))
        except ValueError:
            if not part.isidentifier():
                raise argparse.ArgumentTypeError(
                    f"{part!r} is neither a parameter name nor an index"
                ) from None
            items.append(part)
    return items[0] if len(items) == 1 else tuple(items)


Target = tuple[gast.FunctionDef, DecoratorSettings | None]


def _targets(scope: StaticScope, path: str, functions: Sequence[str]) -> list[Target]:
    """The functions to differentiate, in file order, with their decorator settings."""
    available = ", ".join(scope.functions) or "none"
    for name in functions:
        if name not in scope.functions:
            raise AdgenError(f"{path}:1: no function named {name} (functions here: {available})")
    if functions:
        return [
            (node, differentiate_settings(scope, node))
            for node in scope.functions.values()
            if node.name in functions
        ]
    targets: list[Target] = [
        (node, settings)
        for node in scope.functions.values()
        if (settings := differentiate_settings(scope, node)) is not None
    ]
    if not targets:
        raise AdgenError(
            f"{path}: no function is decorated with @differentiate (functions here: {available})",
            hint="name one with --function NAME",
        )
    return targets


def compile_file(
    path: str,
    functions: Sequence[str] = (),
    mode: str | None = None,
    wrt: Wrt | None = None,
    show_ir: bool = False,
    optimized: bool = True,
) -> list[str]:
    """The texts the command line prints for ``path``, in file order.

    Raises :class:`~adgen.errors.AdgenError` for every problem the user can fix.
    """
    scope = StaticScope.from_path(path)
    texts = []
    errors = []
    for node, settings in _targets(scope, path, functions):
        try:
            function = _lowered(scope, node, optimized, _differentiated(scope, node, settings, wrt))
            if show_ir:
                texts.append(ir.format_function(function) + "\n")
            else:
                derived = _derive(scope, node, function, settings, mode, wrt, optimized)
                texts.append(derived[0].source)
        except AdgenError as exc:
            errors.append(exc)
    if errors:
        raise FunctionErrors(errors, texts)
    return texts


class FunctionErrors(AdgenError):
    """Several functions of a file could not be differentiated: each error, and the texts of
    the functions that could."""

    def __init__(self, errors: list[AdgenError], texts: list[str]) -> None:
        super().__init__("\n".join(_line(e) for e in errors))
        self.errors, self.texts = errors, texts

    def one_line(self) -> str:
        return self.message


def export_file(
    path: str,
    directory: str,
    functions: Sequence[str] = (),
    mode: str | None = None,
    wrt: Wrt | None = None,
    optimized: bool = True,
) -> list[str]:
    """Write one standalone module per selected function of ``path`` into ``directory``.

    Every module is generated before anything is written, so an error leaves
    ``directory`` untouched. Returns the paths written (the runtime last).
    """
    scope = StaticScope.from_path(path)
    modules = []
    errors = []
    for node, settings in _targets(scope, path, functions):
        try:
            function = _lowered(scope, node, optimized, _differentiated(scope, node, settings, wrt))
            generated, chosen_mode, names = _derive(
                scope, node, function, settings, mode, wrt, optimized
            )
            definitions = _static_definitions(scope, node, function)
        except AdgenError as exc:
            errors.append(exc)
            continue
        # the command as run from where this one was (the file's and the folder's paths as
        # they were given)
        argv = ["python -m adgen", shlex.quote(path), "--function", node.name]
        argv += ["--mode", chosen_mode, "--wrt", ",".join(names)]
        argv += ["--output", shlex.quote(directory)]
        text = module_source(
            generated,
            node.name,
            list(function.params),
            chosen_mode,
            names,
            f"{path}:{node.lineno}",
            definitions,
            "regenerate it with\n    " + " ".join(argv),
        )
        modules.append((f"{generated.name}.py", text))
    if errors:
        raise FunctionErrors(errors, [])
    return write_modules(directory, modules)


def _lowered(
    scope: StaticScope,
    node: gast.FunctionDef,
    optimized: bool = True,
    differentiated: tuple[str, ...] | None = None,
) -> ir.Function:
    stub = stand_in(scope.filename, node)

    def lowered() -> ir.Function:
        parsed = parse_file_function(scope.filename, node, scope)
        function = lower(parsed, differentiated=differentiated)
        return optimize(function) if optimized else function

    function: ir.Function = guarded(stub, "read", lowered)
    return function


def _differentiated(
    scope: StaticScope, node: gast.FunctionDef, settings: DecoratorSettings | None, wrt: Wrt | None
) -> tuple[str, ...]:
    """The parameters of one function of the file its derivative is taken with respect to."""
    chosen_wrt = wrt if wrt is not None else (settings.wrt if settings else None)
    names, _ = _wrt_names(stand_in(scope.filename, node), 0 if chosen_wrt is None else chosen_wrt)
    return names


def _derive(
    scope: StaticScope,
    node: gast.FunctionDef,
    function: ir.Function,
    settings: DecoratorSettings | None,
    mode: str | None,
    wrt: Wrt | None,
    optimized: bool = True,
) -> tuple[Generated, str, tuple[str, ...]]:
    """The derivative of one function of the file, the mode chosen, and the wrt names."""
    stub = stand_in(scope.filename, node)
    chosen_mode = mode or (settings.mode if settings else None) or "reverse"
    names = _differentiated(scope, node, settings, wrt)
    transform = forward if chosen_mode == "forward" else reverse

    def derived() -> Generated:
        return transform(function, list(names), fuse=optimized)

    generated: Generated = guarded(stub, "differentiate", derived)
    return generated, chosen_mode, names


def _static_definitions(
    scope: StaticScope, node: gast.FunctionDef, function: ir.Function
) -> list[tuple[str, str]]:
    """``(name, literal)`` for each module-level value the derivative reads.

    A value the file computes at run time (an :class:`~adgen.frontend.static.Opaque`) has
    no literal: the function is refused, naming where it uses the value.
    """
    out = []
    for name, value in function.free.items():
        if "." in name or is_builtin(name, value):
            continue
        source = None if isinstance(value, Opaque) else value_source(value)
        if source is None:
            raise _not_standalone(scope, node, name, value)
        out.append((name, source))
    return out


def _not_standalone(
    scope: StaticScope, node: gast.FunctionDef, name: str, value: Any
) -> AdgenError:
    written = value.__qualname__ if isinstance(value, Opaque) else name
    root = written.split(".", 1)[0]
    loc = None
    for where in [node, *(n for n in scope.functions.values() if n is not node)]:
        uses = [
            sub
            for sub in gast.walk(where)
            if isinstance(sub, gast.Name) and sub.id == root and isinstance(sub.ctx, gast.Load)
        ]
        if uses:
            loc = scope.loc(min(uses, key=lambda n: (n.lineno, n.col_offset)))
            break
    defined = getattr(value, "lineno", 0)
    if loc is None:
        loc = SourceLocation(scope.filename, defined or node.lineno)
    origin = f" (set at line {defined})" if defined else ""
    return AdgenError(
        f"{node.name} reads the module-level value `{written}`{origin}, which is not a literal: "
        "--output cannot write it into a standalone module",
        loc,
        f"pass it to {node.name} as an argument, or make it a literal constant",
    )


# -- colour --------------------------------------------------------------------------------------
_ANSI = {"comment": "\x1b[2m", "keyword": "\x1b[1m", "string": "\x1b[32m", "number": "\x1b[36m"}
_RESET = "\x1b[0m"
_KEYWORDS = (
    "False None True and as assert break continue def del elif else for if import in is "
    "lambda not or pass return while"
)
_TOKEN = re.compile(
    r"(?P<comment>#[^\n]*)"
    r"|(?P<string>'[^'\n]*'|\"[^\"\n]*\")"
    r"|(?P<keyword>\b(?:" + "|".join(_KEYWORDS.split()) + r")\b)"
    r"|(?P<number>\b\d+(?:\.\d*)?(?:[eE][-+]?\d+)?\b)"
)


def use_color(choice: str, stream: Any) -> bool:
    """Whether to colour what goes to ``stream`` (a file object): ``always``, ``never``, ``auto``.

    ``auto`` colours a terminal only, and never when ``NO_COLOR`` is set to a
    non-empty value (https://no-color.org) or ``TERM`` is ``dumb``.
    """
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed or detached stream
        return False


def highlight(code: str) -> str:
    """``code`` with ANSI colours: comments dim, keywords bold (Pygments when importable)."""
    try:
        from pygments import highlight as pygments_highlight
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import PythonLexer
        from pygments.token import Comment, Keyword, Name, Number, String, Token
    except ImportError:
        return _TOKEN.sub(_paint, code)
    scheme: dict[Any, tuple[str, str]] = {
        Token: ("", ""),
        Comment: ("faint", "faint"),
        Keyword: ("bold", "bold"),
        Name.Builtin.Pseudo: ("bold", "bold"),
        String: ("green", "green"),
        Number: ("cyan", "cyan"),
    }
    lexer = PythonLexer(stripnl=False, ensurenl=False)
    colored: str = pygments_highlight(code, lexer, TerminalFormatter(colorscheme=scheme))
    return colored


def _paint(match: re.Match[str]) -> str:
    kind = match.lastgroup or "comment"
    return f"{_ANSI[kind]}{match.group()}{_RESET}"


# -- main ----------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 error, 2 usage)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.output is not None and args.ir:
            parser.error("--ir prints the IR; it cannot be combined with --output")
    except SystemExit as exc:  # --help, or a usage error (already printed by argparse)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        if args.output is not None:
            paths = export_file(
                args.file, args.output, args.function, args.mode, args.wrt, args.optimize
            )
        else:
            texts = compile_file(
                args.file, args.function, args.mode, args.wrt, args.ir, args.optimize
            )
    except FunctionErrors as exc:
        # what could be made is printed; each function that could not, on a line of its own
        if exc.texts:
            text = "\n".join(exc.texts)
            sys.stdout.write(highlight(text) if use_color(args.color, sys.stdout) else text)
        for error in exc.errors:
            _error(_line(error))
        return 1
    except AdgenError as exc:
        _error(_line(exc))
        return 1
    except Exception as exc:  # a bug in adgen: still one line, no traceback
        _error(f"adgen: internal error: {type(exc).__name__}: {exc}")
        return 1
    if args.output is not None:
        sys.stdout.write("".join(f"{path}\n" for path in paths))
        return 0
    text = "\n".join(texts)
    sys.stdout.write(highlight(text) if use_color(args.color, sys.stdout) else text)
    return 0


def _line(exc: AdgenError) -> str:
    """An error on one line, internal errors marked as such."""
    if isinstance(exc, InternalError):
        return f"adgen: internal error: {exc.one_line()}"
    return exc.one_line()


def _error(message: str) -> None:
    """Print ``message`` to stderr on exactly one line."""
    print(" ".join(part.strip() for part in message.splitlines()), file=sys.stderr)
