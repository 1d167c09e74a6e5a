"""The source of a function typed at the interactive interpreter, read back from its history.

Python 3.10-3.12's interpreter compiles what is typed at ``>>>`` under the file name
``<stdin>`` and keeps no text of it, so ``inspect`` cannot read such a function's source
(Python 3.13's interpreter, IPython and Jupyter register what is typed with
:mod:`linecache`, and ``inspect`` reads it there). When the interpreter reads its input
through :mod:`readline`, every line typed is in readline's history, continuation lines
(``...``) included. :func:`history_source` finds the statement that defined a function
there: the lines that compile, as the interpreter compiled them (one statement, line 1
its first line), to a code object with the function's code, instructions and places
(see :mod:`adgen.frontend.lambdas`); the most recent such statement wins. Nothing else could be
taken for the function: a statement from the history that compiles to other code is
never used.
"""

from __future__ import annotations
import __future__

import codeop
import sys
import types
import warnings

from adgen.frontend.lambdas import PLACES, code_key

STDIN = "<stdin>"
# the longest statement looked for, and how far back the history is searched (lines)
MAX_STATEMENT = 400
MAX_HISTORY = 5000


def history() -> list[str]:
    """The lines in readline's history, oldest first (empty without readline: it is not
    imported here, only used if the interpreter imported it)."""
    readline = sys.modules.get("readline")
    if readline is None:
        return []
    try:
        n = readline.get_current_history_length()
        first = max(1, n - MAX_HISTORY + 1)
        items = [readline.get_history_item(i) for i in range(first, n + 1)]
    except Exception:  # an incomplete readline module (some replacements)
        return []
    return [item for item in items if isinstance(item, str)]


def _future_flags(code: types.CodeType) -> int:
    """The ``from __future__`` features the interpreter compiled ``code`` with."""
    flags = 0
    for name in __future__.all_feature_names:
        flag = getattr(__future__, name).compiler_flag
        if code.co_flags & flag:
            flags |= flag
    return flags


def _contains(code: types.CodeType, want: tuple[object, ...], qualname: str) -> bool:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if code_key(const, PLACES, qualname) == want or _contains(const, want, qualname):
                return True
    return False


def _starts_here(line: str, code: types.CodeType) -> bool:
    """Could the line the function's code starts on be this one?"""
    text = line.lstrip()
    if code.co_name == "<lambda>":
        return "lambda" in text
    return text.startswith(("@", "def ", "async def "))


def history_source(fn: types.FunctionType, lines: list[str] | None = None) -> list[str] | None:
    """The lines (each ending in a newline) of the statement typed at the interactive
    interpreter that defined ``fn``, line 1 its first, as the interpreter numbered them;
    None when ``fn`` was not typed there or its history does not hold it."""
    code = fn.__code__
    if code.co_filename != STDIN:
        return None
    typed = history() if lines is None else lines
    first = code.co_firstlineno  # of the function, in the statement
    qualname = getattr(code, "co_qualname", fn.__qualname__)
    want = code_key(code, PLACES, qualname)
    compiler = codeop.CommandCompiler()
    compiler.compiler.flags |= _future_flags(code)  # as the session compiled it
    # the statement starts at a line typed at `>>>` (never indented); newest first
    for start in range(len(typed) - first, -1, -1):
        head = typed[start]
        if not head.strip() or head[:1].isspace():
            continue
        if not _starts_here(typed[start + first - 1], code):
            continue
        for stop in range(start + first, min(len(typed), start + MAX_STATEMENT) + 1):
            # the blank line that ended a block at `...` is not in the history
            text = "".join(line + "\n" for line in typed[start:stop]) + "\n"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # the interpreter warned when it ran
                    compiled = compiler(text, STDIN, "single")
            except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError):
                break  # not a statement (the next one has begun): not this start
            if compiled is None:
                continue  # not complete yet (an open bracket, a block's first line)
            if _contains(compiled, want, qualname):
                return [line + "\n" for line in typed[start:stop]]
    return None
