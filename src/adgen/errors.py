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
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A place in the user's source: file, 1-based line, 0-based column, and the line's text."""

    filename: str
    lineno: int
    col: int = 0
    text: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.col + 1}"


class AdgenError(Exception):
    """Base class of every error adgen raises on purpose."""

    def __init__(self, message: str, loc: SourceLocation | None = None, hint: str = "") -> None:
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [f"{self.loc}: {self.message}" if self.loc else self.message]
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
        head = f"{self.loc}: {self.message}" if self.loc else self.message
        return head + (f" (hint: {self.hint})" if self.hint else "")


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
    compiles (20 levels), or derivative code longer than ``adgen.compile.MAX_LINES``."""


class ArgumentError(AdgenError, TypeError):
    """A derivative was called with arguments that do not fit the function's parameters
    (too many, too few, an unknown keyword), or an API function with arguments of the wrong
    kind. It is also a ``TypeError``, as Python's own error for such a call is."""


class InternalError(AdgenError):
    """A bug in adgen itself: the message says which function and line was being transformed."""
