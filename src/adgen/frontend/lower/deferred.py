# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Refusals and checks decided when the code runs.

Where only the running program can tell whether a refused construct is reached, the refusal
is a statement of the generated code, ``rt.refuse_unless(test, what, hint)``, that raises it
(as the same adgen error, naming the line: :func:`adgen.pipeline.run`) only if the code
gets there:

* a branch of an ``if`` the program decides when it runs holding something adgen refuses
  (:meth:`DeferredMixin.branch`): the branch becomes the refusal, with ``test`` ``False``; a
  branch not taken may hold anything, as it may for Python; so does a value of ``a and b``
  or ``a or b`` that Python evaluates only as the program decides (``hasattr(x, "fit") and
  callable(x.fit)``);
* adgen's checks that only the argument kinds decide (``y += v`` of a number or of an array:
  :mod:`adgen.frontend.lower.inplace`), where the kinds are not known when transforming.

Read again for a nested derivative (:meth:`DeferredMixin.lower_check`), such a call becomes
the check it was made from, words and all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.errors import AdgenError, NoRuleError, UnresolvedNameError, UnsupportedSyntaxError
from adgen.frontend.lower.state import LowererState
from adgen.rules import registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer

# the refusals a branch defers to the code that takes it, by the name the check carries
DEFERRED: dict[str, type[AdgenError]] = {
    "UnsupportedSyntaxError": UnsupportedSyntaxError,
    "NoRuleError": NoRuleError,
    "UnresolvedNameError": UnresolvedNameError,
}
_PREFIX = "adgen does not support "


class DeferredMixin(LowererState):
    """Branches whose refusal waits for the code to take them; adgen's checks read again."""

    def branch(self: Lowerer, stmts: list[Any]) -> tuple[list[ir.Stmt], AdgenError | None]:
        """One branch of an ``if`` the program decides when it runs, and the refusal it
        became (None: lowered). Where adgen refuses something in it (an unsupported construct,
        a call without a rule, a name only another path binds), the branch is that refusal,
        raised only if the code takes it. Nothing the refused statements did stays: names,
        local functions and the records of fresh arrays are as they were before the branch."""
        return self.attempted(lambda: self.sub_block(stmts, branch=True))

    def attempted(
        self: Lowerer, lowering: Callable[[], list[ir.Stmt]]
    ) -> tuple[list[ir.Stmt], AdgenError | None]:
        """The block ``lowering`` makes (a branch of an ``if``, the value ``b`` of ``a and
        b``, which Python evaluates only if ``a`` is true), or the refusal it became."""
        kept = self.kept_state()
        self.root.deferring += 1
        try:
            return lowering(), None
        except tuple(DEFERRED.values()) as exc:
            line = self.line
            self.restore_state(kept)
            return [self.deferred_refusal(exc, line)], exc
        finally:
            self.root.deferring -= 1

    def kept_state(self: Lowerer) -> tuple[Any, ...]:
        """What lowering a part changes besides the IR it writes: the block written to and
        the bindings -- for :meth:`restore_state` when that part is given up."""
        return (
            self.block,
            len(self.block),
            self.depth,
            dict(self.local_functions),
            set(self.bound),
            dict(self.imported),
            set(self.deleted),
            dict(self.fresh_binding),
            dict(self.first_values),
            dict(self.splits),
            set(self.ranges),
        )

    def restore_state(self: Lowerer, kept: tuple[Any, ...]) -> None:
        """Back to where :meth:`kept_state` was taken, what was written since dropped."""
        (self.block, mark, self.depth, self.local_functions, self.bound) = kept[:5]
        (self.imported, self.deleted, self.fresh_binding, self.first_values) = kept[5:9]
        (self.splits, self.ranges) = kept[9:]
        del self.block[mark:]

    def deferred_refusal(self: Lowerer, exc: AdgenError, line: int) -> ir.Assign:
        """The check ``rt.refuse_unless(False, what, hint[, kind])`` raising ``exc`` at the
        statement of line key ``line``; where ``exc`` names another place (a helper the
        branch calls), the message says where."""
        plain = type(exc) is UnsupportedSyntaxError and exc.message.startswith(_PREFIX)
        what = exc.message[len(_PREFIX) :] if plain else exc.message
        here = self.root.origins.get(line)
        place = (here.filename, here.lineno) if here else (self.root.parsed.filename, line)
        if exc.loc is not None and (exc.loc.filename, exc.loc.lineno) != place:
            what += f" ({exc.loc})"
        words = [("what", ir.Const(what)), ("hint", ir.Const(exc.hint))]
        if not plain:  # the error's own class and words
            words.append(("kind", ir.Const(type(exc).__name__)))
        return ir.Assign((), registry.ASSERT, (ir.Const(False),), tuple(words), line)

    def lower_check(self: Lowerer, call: gast.Call) -> None:
        """``rt.refuse_unless(test, what, hint[, kind])`` or ``rt.expect(test, message)`` in
        adgen's own code read again (a nested derivative): the check it was made from, with
        its words (its refusal can still be decided when transforming the outer function)."""
        texts = call.args[1:]
        words = ("what", "hint", "kind")[: len(texts)] if len(texts) > 1 else ("error",)
        if (
            call.keywords
            or len(texts) not in (1, 2, 3)
            or not all(isinstance(t, gast.Constant) and isinstance(t.value, str) for t in texts)
        ):
            self.refuse(call, "this check", "write it as an `assert`")
        test = self.expr(call.args[0], None, "check")
        kwargs = tuple((w, ir.Const(t.value)) for w, t in zip(words, texts))
        self.block.append(ir.Assign((), registry.ASSERT, (test,), kwargs, self.line))
