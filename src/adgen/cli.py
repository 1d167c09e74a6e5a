"""The command line: ``python -m adgen FILE.py`` (or ``adgen FILE.py``) is a compiler.

It reads FILE without running it (see :mod:`adgen.static`) and prints the
derivative source of every function decorated with ``@differentiate``, or of
the functions named with ``--function``; ``--ir`` prints the three-address IR
instead. Every problem is reported on one line of stderr, starting with
``file:line`` when it has a place in the file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import gast

from . import ir
from .api import Wrt, _wrt_names
from .errors import AdgenError, InternalError
from .forward import Generated, forward
from .lower import lower
from .reverse import reverse
from .static import (
    MODES,
    DecoratorSettings,
    StaticScope,
    differentiate_settings,
    parse_file_function,
    stand_in,
)
from .transform import guarded

EPILOG = """\
examples:
  python -m adgen model.py
      reverse-mode code of every @differentiate function of model.py
  python -m adgen model.py --function loss --mode forward --wrt w,1
      forward-mode code of loss w.r.t. its parameter w and its second parameter
  python -m adgen model.py --function loss --ir
      the three-address IR of loss

The file is only read, never run: imports of numpy, math, scipy, operator and
adgen are resolved, module-level literals are known by value, and any other
global is referred to by name in the printed code.

exit status:
  0  the code was printed
  1  an error in the file (unsupported code, unknown name...), a missing or
     unreadable file, or an unknown --function; one line on stderr says where
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
        "--ir", action="store_true", help="print the three-address IR instead of derivative code"
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


def compile_file(
    path: str,
    functions: Sequence[str] = (),
    mode: str | None = None,
    wrt: Wrt | None = None,
    show_ir: bool = False,
) -> list[str]:
    """The texts the command line prints for ``path``, in file order.

    Raises :class:`~adgen.errors.AdgenError` for every problem the user can fix.
    """
    scope = StaticScope.from_path(path)
    available = ", ".join(scope.functions) or "none"
    for name in functions:
        if name not in scope.functions:
            raise AdgenError(f"{path}:1: no function named {name} (functions here: {available})")
    if functions:
        targets = [
            (node, differentiate_settings(scope, node))
            for node in scope.functions.values()
            if node.name in functions
        ]
    else:
        targets = [
            (node, settings)
            for node in scope.functions.values()
            if (settings := differentiate_settings(scope, node)) is not None
        ]
        if not targets:
            raise AdgenError(
                f"{path}: no function is decorated with @differentiate "
                f"(functions here: {available})",
                hint="name one with --function NAME",
            )
    return [_render(scope, node, settings, mode, wrt, show_ir) for node, settings in targets]


def _render(
    scope: StaticScope,
    node: gast.FunctionDef,
    settings: DecoratorSettings | None,
    mode: str | None,
    wrt: Wrt | None,
    show_ir: bool,
) -> str:
    """The IR listing or derivative source of one function of the file."""
    stub = stand_in(scope.filename, node)

    def lowered() -> ir.Function:
        return lower(parse_file_function(scope.filename, node, scope))

    function: ir.Function = guarded(stub, "read", lowered)
    if show_ir:
        return ir.format_function(function) + "\n"
    chosen_mode = mode or (settings.mode if settings else None) or "reverse"
    chosen_wrt = wrt if wrt is not None else (settings.wrt if settings else None)
    names, _ = _wrt_names(stub, 0 if chosen_wrt is None else chosen_wrt)
    transform = forward if chosen_mode == "forward" else reverse

    def derived() -> Generated:
        return transform(function, list(names))

    generated: Generated = guarded(stub, "differentiate", derived)
    return generated.source


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 error, 2 usage)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error (already printed by argparse)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        texts = compile_file(args.file, args.function, args.mode, args.wrt, args.ir)
    except InternalError as exc:
        _error(f"adgen: internal error: {exc.one_line()}")
        return 1
    except AdgenError as exc:
        _error(exc.one_line())
        return 1
    except Exception as exc:  # a bug in adgen: still one line, no traceback
        _error(f"adgen: internal error: {type(exc).__name__}: {exc}")
        return 1
    sys.stdout.write("\n".join(texts))
    return 0


def _error(message: str) -> None:
    """Print ``message`` to stderr on exactly one line."""
    print(" ".join(part.strip() for part in message.splitlines()), file=sys.stderr)
