"""The exceptions adgen raises, each naming the user's file:line:column.

Every error a user can trigger is an :class:`AdgenError`. When adgen knows
where in the user's source the problem is, the message starts with
``file:line:col``, shows the source line with a caret under the column, and
ends with a hint saying what to do:

>>> loc = SourceLocation("model.py", 3, 4, "    with open(p) as fh:")
>>> print(UnsupportedSyntaxError("`with` statements are not supported", loc,
...       hint="move the I/O out of the function you differentiate"))
model.py:3:5: `with` statements are not supported
        with open(p) as fh:
        ^
    hint: move the I/O out of the function you differentiate

An error reaches the user with adgen's own frames cut from its traceback: the functions
users call (:func:`entry_point`) re-raise it so that the traceback ends at the user's call,
as Python's own errors from C functions do. The exceptions it is chained to (a
:class:`DerivativeError`'s original error) lose adgen's frames too, but keep the frames of
the generated code and of the user's own functions. Set the environment variable
``ADGEN_DEBUG=1`` to keep every frame (to debug adgen itself); an :class:`InternalError`,
a bug of adgen's, always keeps them.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar


@dataclass(frozen=True)
class SourceLocation:
    """A place in the user's source: file, 1-based line, 0-based column, and the line's text."""

    filename: str
    lineno: int
    col: int = 0
    text: str = ""
    function: str = ""  # the function it is in (``helper, called from loss``), if known

    def __str__(self) -> str:
        return place(self.filename, self.lineno, self.col)


def cell_name(filename: str) -> str | None:
    """``Cell In[3]`` when ``filename`` is the file IPython (a Jupyter kernel, the IPython
    shell) compiled its third cell under, as IPython names it in tracebacks; else None."""
    ipython = sys.modules.get("IPython")  # never imported here: only if the user runs it
    if ipython is None:
        return None
    try:
        shell = ipython.get_ipython()
        named = shell.compile.format_code_name(filename) if shell is not None else None
        if not named:
            return None
        label, name = named
        return f"{label} {name}"
    except Exception:  # another IPython version, or not its compiler: the file name it is
        return None


def source_name(filename: str) -> str:
    """How a message names the file: a notebook cell as IPython does (``Cell In[3]``)."""
    return cell_name(filename) or filename


def place(filename: str, line: int, col: int | None = None) -> str:
    """``file:line:col`` (1-based column), or for a notebook cell ``Cell In[3], line 2``
    as IPython shows it (the caret under the line shows the column).

    >>> place("model.py", 3, 4), place("model.py", 3)
    ('model.py:3:5', 'model.py:3')
    """
    cell = cell_name(filename)
    if cell is not None:
        return f"{cell}, line {line}"
    return f"{filename}:{line}" if col is None else f"{filename}:{line}:{col + 1}"


class AdgenError(Exception):
    """Base class of every error adgen raises on purpose."""

    def __init__(self, message: str, loc: SourceLocation | None = None, hint: str = "") -> None:
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self._render())

    def _head(self) -> str:
        if self.loc is None:
            return self.message
        where = f"in {self.loc.function}: " if self.loc.function else ""
        return f"{self.loc}: {where}{self.message}"

    def in_function(self, name: str) -> None:
        """Say which function the error is in (raised while reading ``name``'s code, or code
        inlined into it): the innermost such function, and the callers it was inlined in.

        >>> e = UnsupportedSyntaxError("adgen does not support `global`", SourceLocation("m.py", 3))
        >>> e.in_function("helper"); e.in_function("loss"); e.one_line()
        'm.py:3:1: in helper (called from loss): adgen does not support `global`'
        """
        if self.loc is None:
            return
        function = self.loc.function
        if not function:
            function = name
        elif function.endswith(")"):
            function = f"{function[:-1]}, from {name})"
        else:
            function = f"{function} (called from {name})"
        self.loc = dataclasses.replace(self.loc, function=function)
        self.args = (self._render(),)

    def _render(self) -> str:
        parts = [self._head()]
        if self.loc and self.loc.text:
            raw = self.loc.text.rstrip("\n")
            parts.append("    " + raw.expandtabs())
            # the column counts UTF-8 bytes (as Python's syntax trees do); the caret goes
            # under that character as shown, tabs expanded
            before = raw.encode("utf-8")[: self.loc.col].decode("utf-8", "ignore")
            parts.append("    " + " " * len(before.expandtabs()) + "^")
        if self.hint:
            parts.append("    hint: " + self.hint)
        return "\n".join(parts)

    def one_line(self) -> str:
        """The message on one line (for the command line)."""
        return self._head() + (f" (hint: {self.hint})" if self.hint else "")


class SourceUnavailableError(AdgenError):
    """The function's source code cannot be read (a builtin, a C function, an exec'd string)."""


class UnsupportedSyntaxError(AdgenError):
    """The function uses Python syntax adgen does not differentiate (yet)."""


class UnresolvedNameError(AdgenError):
    """A name used by the function is not defined anywhere adgen can see at transform time."""


class NoRuleError(AdgenError):
    """A called function has no derivative rule registered."""


class RuleError(AdgenError):
    """A derivative rule cannot be registered as written (a template names an unknown
    helper, a jvp/vjp function does not fit the function's parameters...)."""


class NonDifferentiableError(AdgenError):
    """A derivative was requested through an argument that has none (integer, boolean, string)."""


class WrtError(AdgenError):
    """``wrt`` names no parameter of the function."""


class NonScalarOutputError(AdgenError):
    """``grad`` was asked for a function whose result is not a scalar."""


class ShapeMismatchError(AdgenError):
    """A tangent or cotangent does not have the shape of the value it belongs to."""


class DerivativeError(AdgenError):
    """Running derivative code failed (a shape mismatch, a domain error...): the message
    names the user's line whose derivative was being computed; the original exception is
    chained (``__cause__``)."""


class LimitError(AdgenError):
    """The function (with the helpers inlined into it) is beyond a limit of adgen or of
    Python: expressions nested too deeply, loops and branches nested more than Python
    compiles (20 levels), or derivative code longer than ``adgen.backend.compile.MAX_LINES``."""


class ArgumentError(AdgenError, TypeError):
    """A derivative was called with arguments that do not fit the function's parameters
    (too many, too few, an unknown keyword), or an API function with arguments of the wrong
    kind. It is also a ``TypeError``, as Python's own error for such a call is."""


class InternalError(AdgenError):
    """A bug in adgen itself: the message says which function and line was being transformed."""


class BackendError(AdgenError):
    """``backend="numba", strict=True``: the backend cannot run the derivative code (Numba is
    not installed, or cannot compile a form the code uses); the message names the line."""


class BackendWarning(UserWarning):
    """``backend="numba"`` ran the NumPy code instead of Numba's, for the reason given (once
    per function and reason); the answer is the NumPy backend's."""


# -- tracebacks ----------------------------------------------------------------------------------
#: Set (to anything but ``0``) to keep adgen's own frames in tracebacks.
DEBUG_ENV = "ADGEN_DEBUG"

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_P = ParamSpec("_P")
_R = TypeVar("_R")


def debugging() -> bool:
    """Is ``ADGEN_DEBUG`` set: are tracebacks kept whole?"""
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _internal(tb: types.TracebackType) -> bool:
    filename = tb.tb_frame.f_code.co_filename
    return os.path.abspath(filename).startswith(_PACKAGE) if filename[:1] != "<" else False


def user_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback ``tb`` without adgen's own frames (those of the generated code, of
    the user's functions and of other libraries stay)."""
    kept: list[types.TracebackType] = []
    while tb is not None:
        if not _internal(tb):
            kept.append(tb)
        tb = tb.tb_next
    result = None
    for entry in reversed(kept):
        result = types.TracebackType(result, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return result


def _trim_chain(exc: BaseException, seen: set[int]) -> None:
    """Cut adgen's frames from the exceptions ``exc`` is chained to."""
    while id(exc) not in seen:
        seen.add(id(exc))
        if exc.__cause__ is not None:
            nxt: BaseException | None = exc.__cause__
        elif exc.__context__ is not None and not exc.__suppress_context__:
            nxt = exc.__context__
        else:
            return
        assert nxt is not None
        if isinstance(nxt, InternalError):
            return
        tb = user_frames(nxt.__traceback__)
        if tb is None and nxt is exc.__context__ and exc.__cause__ is None:
            # an exception adgen handled on its way to this one, all inside adgen: not the
            # user's business ("During handling of the above exception...")
            exc.__suppress_context__ = True
            return
        nxt.__traceback__ = tb
        exc = nxt


def cut_internal_frames(exc: AdgenError) -> None:
    """Make ``exc``, caught at an entry point, ready to be re-raised there (with a bare
    ``raise``) with adgen's frames cut from its traceback and from its chained exceptions."""
    if isinstance(exc, InternalError) or debugging():
        return
    tb = exc.__traceback__
    if sys.version_info >= (3, 11):
        exc.__traceback__ = user_frames(tb)
    elif tb is not None:
        # Python 3.10 re-raises the traceback it caught, whose first entry is the entry
        # point's own frame: that one stays (:func:`_excepthook` leaves it out when printing)
        tb.tb_next = user_frames(tb.tb_next)
        _install_excepthook()
    _trim_chain(exc, set())


def entry_point(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorate a function users call: an :class:`AdgenError` it raises shows the user's
    frames and adgen's message, not adgen's internals."""

    @functools.wraps(fn)
    def entry(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return fn(*args, **kwargs)
        except AdgenError as exc:
            cut_internal_frames(exc)
            raise

    return entry


def _excepthook(
    kind: type[BaseException], value: BaseException, tb: types.TracebackType | None
) -> None:
    """Python 3.10's default hook, leaving adgen's frames out of an AdgenError's traceback."""
    if isinstance(value, AdgenError) and not isinstance(value, InternalError) and not debugging():
        tb = user_frames(tb)
        value.__traceback__ = tb
    sys.__excepthook__(kind, value, tb)


def _install_excepthook() -> None:
    """On Python 3.10 (only), for an uncaught error: if no one else replaced the default
    ``sys.excepthook``, print AdgenErrors without the frame of the entry point."""
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = _excepthook
