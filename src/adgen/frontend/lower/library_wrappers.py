# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other)
"""Calls of a library's decorated functions, read as what the decorator wraps:

* scikit-learn's ``@validate_params`` (:meth:`LibraryWrappersMixin.checked_call`): its
  parameter checks run as written, then the function it wraps is read;
* SciPy's statistics behind its ``_axis_nan_policy`` decorator (``scipy.stats.skew``,
  ``gmean``, ``sem``...: :meth:`LibraryWrappersMixin.statistic_call`), lowered as the
  wrapper's plain path (:mod:`adgen.rules.axis_policy`): a check run as written, each sample
  moved so that the reduced axis is last, then the wrapped function read as any other along
  that axis.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import numpy as np

from adgen import ir
from adgen.errors import NonDifferentiableError, NoRuleError, UnsupportedSyntaxError
from adgen.frontend.lower.objects import StaticArg
from adgen.frontend.lower.state import LowererState
from adgen.rules import registry
from adgen.rules.axis_policy import POLICY_PARAMETERS, AxisPolicy, PlainPathTaken

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


class LibraryWrappersMixin(LowererState):
    """Decorated functions of libraries, read as what they wrap."""

    def checked_call(
        self: Lowerer,
        node: Any,
        unwrapped: tuple[Any, Any, bool],
        args: list[Any],
        kwargs: list[tuple[str, Any]],
        target: str | None,
        hint: str,
    ) -> ir.Atom:
        """A call of a library's wrapper that checks the arguments, then calls the function
        it wraps (:func:`registry.transparent_wrapper`): the checks run as written (they only
        read; skipped inside a wrapped call that skips its nested checks, as the library
        does), then the wrapped function is read as any other."""
        wrapped, check, skip_nested = unwrapped
        passed = [*args, *(v for _, v in kwargs)]
        if not self.root.checks_skipped and not any(isinstance(a, StaticArg) for a in passed):
            refusal = NoRuleError(
                f"adgen runs the argument checks of `{wrapped.__qualname__}` as written",
                self.parsed.loc(node),
                "",
            )
            self.opaque(check, refusal, args, kwargs, None, "checked", node)
        skipped = self.root.checks_skipped
        self.root.checks_skipped = skipped or skip_nested
        try:
            return self.inline_or_run(node, wrapped, args, kwargs, target, hint)
        finally:
            self.root.checks_skipped = skipped

    def statistic_call(
        self: Lowerer,
        node: Any,
        fn: Any,
        policy: AxisPolicy,
        args: list[Any],
        kwargs: list[tuple[str, Any]],
        target: str | None,
        hint: str,
    ) -> ir.Atom:
        """``skew(x, axis=1, bias=False)``: see the module's documentation. A call adgen does
        not read so runs as written, refused by why where a differentiated value reaches it."""
        no_deco = [a for k, a in kwargs if k == "_no_deco"]
        if no_deco and self.outside_data(no_deco[0]) == (True,):  # SciPy's own inner calls
            rest = [(k, a) for k, a in kwargs if k != "_no_deco"]
            return self.inline_or_run(node, policy.inner, args, rest, target, hint)
        bound = self.bound_statistic(policy, args, kwargs)
        why = policy.why if isinstance(bound, tuple) else bound
        if why is not None or not isinstance(bound, tuple):
            refusal = NoRuleError(
                f"adgen reads {policy.name} (behind SciPy's axis and NaN policy) for one "
                f"sample array at a time along a known axis, not for {why}",
                self.parsed.loc(node),
                "write the statistic with NumPy, or call it on values adgen does not differentiate",
            )
            return self.opaque(fn, refusal, args, kwargs, target, hint, node)
        axis, keepdims, samples, keyword_samples, others = bound
        mark = len(self.block)  # (where the plain path starts: dropped if it cannot be read)
        every = [*samples, *(a for _, a in keyword_samples)]
        said = NoRuleError(
            f"adgen runs the test of {policy.name}'s plain path as written", self.parsed.loc(node)
        )
        taken = PlainPathTaken(policy)
        test = self.opaque(taken, said, [ir.Const(axis), *every], others, None, "plain", node)
        name = target if target is not None else self.namer.fresh(hint)
        self.rebound_names.add(name)  # (bound in both branches)

        def plain() -> ir.Atom:
            moved = [self.sample_moved(a, axis, node, hint) for a in samples]
            moved_keywords = [
                (k, self.sample_moved(a, axis, node, hint)) for k, a in keyword_samples
            ]
            given = [*moved_keywords, *others, ("axis", ir.Const(-1))]
            parsed, defaults = self.callee(policy.inner, node)
            made = self.inline(node, parsed, policy.inner, defaults, moved, given, None, None)
            if not keepdims:
                return made
            return self.emit(None, hint, _rule(np.expand_dims), [made, ir.Const(axis)], [], node)

        block, depth = self.block, self.depth
        try:
            body = self.branch_made(plain, name)
        except (UnsupportedSyntaxError, NoRuleError, NonDifferentiableError) as exc:
            self.block, self.depth = block, depth
            if self.root.deferring:  # (in a branch the program decides: the branch's refusal)
                raise
            del self.block[mark:]  # the call as the program writes it, run as written (its
            # test too is gone: SciPy then takes whichever path the samples ask for)
            return self.opaque(fn, exc, args, kwargs, target, hint, node)
        other = NoRuleError(
            f"adgen differentiates {policy.name} on the plain path of SciPy's axis and NaN "
            "policy, which SciPy does not take for these samples: a sample holding NaN (SciPy "
            "returns NaN there), an empty or too small one, a masked array, or samples SciPy "
            "broadcasts",
            self.parsed.loc(node),
            "remove the NaN, pass plain arrays of one shape, or call it on values adgen does "
            "not differentiate",
        )
        orelse = self.branch_made(
            lambda: self.opaque(fn, other, args, kwargs, None, hint, node), name
        )
        self.add_if(test, body, orelse, self.line)
        return ir.Var(name)

    def bound_statistic(
        self: Lowerer, policy: AxisPolicy, args: list[Any], kwargs: list[tuple[str, Any]]
    ) -> tuple[Any, bool, list[Any], list[tuple[str, Any]], list[tuple[str, Any]]] | str:
        """``(axis, keepdims, samples, keyword samples, other arguments)`` of a call, bound as the
        wrapper binds it, or why adgen does not read it."""
        names = list(inspect.signature(policy.inner).parameters)
        if len(args) > len(names):
            return "these arguments"
        bound: dict[str, Any] = dict(zip(names, args))
        for k, a in kwargs:
            if k in bound or (k not in names and k not in POLICY_PARAMETERS):
                return "these arguments"
            bound[k] = a
        nan_policy = self.outside_data(bound.pop("nan_policy", ir.Const("propagate")))
        if nan_policy != ("propagate",):
            return "nan_policy other than 'propagate'"
        keepdims = self.outside_data(bound.pop("keepdims", ir.Const(False)))
        if keepdims is None or type(keepdims[0]) not in (bool, np.bool_):
            return "keepdims other than True or False known when adgen reads the function"
        axis_given = self.outside_data(bound.pop("axis", ir.Const(policy.default_axis)))
        if axis_given is None or not (
            axis_given[0] is None or isinstance(axis_given[0], (int, np.integer))
        ):
            return "an axis other than an int or None known when adgen reads the function"
        if axis_given[0] is None and keepdims[0]:
            return "keepdims=True with axis=None"
        if any(name not in bound for name in names[: policy.n_samples]):
            return "a call without its samples"
        samples = [bound.pop(name) for name in names[: policy.n_samples]]
        keyword_samples = [
            (k, bound.pop(k))
            for k in policy.kwd_samples
            if k in bound and self.outside_data(bound[k]) != (None,)
        ]
        axis = None if axis_given[0] is None else int(axis_given[0])
        return axis, bool(keepdims[0]), samples, keyword_samples, list(bound.items())

    def sample_moved(self: Lowerer, atom: Any, axis: int | None, node: Any, hint: str) -> Any:
        """A sample as the wrapper hands it on: raveled (``axis=None``), or at least 1-d with
        ``axis`` moved last."""
        if axis is None:
            return self.emit(None, hint, _rule(np.ravel), [atom], [], node)
        one_d = self.emit(None, hint, _rule(np.atleast_1d), [atom], [], node)
        if axis == -1:
            return one_d
        return self.emit(
            None, hint, _rule(np.moveaxis), [one_d, ir.Const(axis), ir.Const(-1)], [], node
        )


def _rule(fn: Any) -> registry.Primitive:
    prim = registry.lookup(fn)
    assert prim is not None, fn
    return prim
