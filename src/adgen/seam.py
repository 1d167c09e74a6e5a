"""The seam: the one place where a stage calls the whole pipeline again.

adgen differentiates a function by running the stages in order (:mod:`adgen.pipeline`).
Three things met while doing so need the pipeline (or the API on top of it) once more:

* a recursive call of one of the user's functions is not inlined: its derivative is
  another generated function, made when the call first runs (:class:`LazyDerivative`;
  forward and reverse mode put one in the generated code's namespace, and the disk cache
  writes it back);
* ``adgen.grad`` / ``jvp`` / ``vjp`` called *inside* a differentiated function: lowering
  recognises these entry points (:func:`entry_points`) and inlines the derivative of the
  inner function (:func:`derivative_code`: lower it, differentiate it, compile it), so the
  outer derivative differentiates that code (see :mod:`adgen.frontend.nested`);
* ``adgen.grad(g)`` of a module-level ``g`` inside ``f``: lowering makes it with the API
  (:func:`derivative_of`).

Those are the only imports in adgen that go up the pipeline, and they are made inside the
functions below, when first needed. Every other module imports only modules below it:
``tests/test_architecture.py`` checks that the import graph has no circle but through here.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adgen.frontend.parse import ParsedFunction


class LazyDerivative:
    """Calls the compiled derivative of ``fn`` (mode, wrt), building it on first use."""

    def __init__(self, fn: types.FunctionType, mode: str, wrt: tuple[str, ...]) -> None:
        self.fn = fn
        self.mode = mode
        self.wrt = wrt

    def __call__(self, *args: Any) -> Any:
        return self.function()(*args)

    def function(self) -> types.FunctionType:
        """The compiled derivative itself: generated code whose source adgen reads, so a
        derivative of code calling it (second order through recursion) inlines it, and its
        own recursive call is kept as a call again."""
        from adgen.pipeline import derivative  # (up the pipeline: see the module docstring)

        compiled = derivative(self.fn, self.mode, self.wrt).compiled
        assert isinstance(compiled, types.FunctionType)
        return compiled

    def __repr__(self) -> str:
        return f"<adgen {self.mode} derivative of {self.fn.__qualname__} w.r.t. {self.wrt}>"


def entry_points() -> dict[Any, str]:
    """The adgen functions recognised when called inside a differentiated function."""
    from adgen import api  # (up the pipeline: see the module docstring)

    return {
        api.grad: "grad",
        api.value_and_grad: "value_and_grad",
        api.jvp: "jvp",
        api.vjp: "vjp",
    }


def operator_kind(obj: Any) -> str | None:
    """Which of adgen's derivative operators ``obj`` is (``"hessian"``, ``"jacfwd"``...): made
    when transforming, called through the function standing for it; None if none."""
    from adgen import api  # (up the pipeline: see the module docstring)

    operators = (api.jacfwd, api.jacrev, api.jacobian, api.hessian, api.hvp, api.laplacian)
    return next((fn.__name__ for fn in operators if fn is obj), None)


def entry_kind(obj: Any) -> str | None:
    """Which adgen function ``obj`` is (``"grad"``, ...), by identity (any object may be asked:
    one of the user's may not be hashable); None if none."""
    return next((kind for fn, kind in entry_points().items() if fn is obj), None)


def derivative_of(kind: str, fn: Any, wrt: Any) -> Any:
    """``adgen.grad(fn, wrt)`` (``kind`` "grad") or ``adgen.value_and_grad(fn, wrt)``."""
    from adgen import api  # (up the pipeline: see the module docstring)

    return (api.grad if kind == "grad" else api.value_and_grad)(fn, wrt)


def derivative_code(
    parsed: ParsedFunction,
    mode: str,
    wrt: list[str],
    args: tuple[Any, ...] | None = None,
    structure: dict[str, Any] | None = None,
) -> Callable[..., Any] | types.FunctionType:
    """Lower the lifted function and compile its derivative (source kept for inlining):
    for any kind of argument, or specialised for the kinds and shapes of ``args`` (one value
    per parameter; see :func:`adgen.pipeline.derivative`). ``structure`` (for any kind of
    argument only) gives the tuples, lists and dicts among the arguments (their leaves are
    parameters of the code, ``wrt`` names leaves; see :mod:`adgen.trees`)."""
    # (up the pipeline: see the module docstring)
    from adgen.backend.compile import load
    from adgen.backend.namespaces import globals_for
    from adgen.frontend.lower import lower
    from adgen.middle.fills import settle_unit_fills
    from adgen.middle.optimize import optimize
    from adgen.middle.shapes import ANY_KIND, describe, settle_broadcasts, settle_checks
    from adgen.modes.complexvalues import settle_kinds
    from adgen.modes.forward import forward
    from adgen.modes.reverse import reverse

    params = [a.id for a in parsed.node.args.args]
    if args is None:
        function = lower(parsed, structure or None, wrt)
        # (right for real and complex arguments alike: their kinds are not known here)
        if mode == "forward":
            gen = forward(function, wrt, frozenset(), (ANY_KIND,))
        else:
            gen = reverse(function, wrt, frozenset(), batch=False, signature=(ANY_KIND,))
        return load(gen, function.free)
    signature = tuple((p, describe(a)) for p, a in zip(params, args, strict=True))
    scalars = frozenset(p for p, d in signature if d in ("float", "int"))
    function = lower(parsed, None, wrt, signature)
    for settle in (settle_checks, settle_kinds, settle_broadcasts, settle_unit_fills):
        function = settle(function, signature)
    function = optimize(function)
    if mode == "forward":
        gen = forward(function, wrt, scalars, signature)
    elif mode == "forward_batched":  # (NotBatched where that mode does not apply)
        from adgen.modes.batched import forward_batched

        gen = forward_batched(function, wrt, scalars, signature)
    else:
        gen = reverse(function, wrt, scalars, batch=False, signature=signature)
    return load(gen, function.free, globals_for(signature))


class Callback:
    """A function the differentiated code passes to a solver (``odeint(rhs, y0, t)``), with
    its derivatives: made when transforming, from the function's lifted form (the outer
    variables it reads are its last parameters, passed on in the solver's ``args``; see
    :mod:`adgen.frontend.nested`).

    Calling it calls the function as the user wrote it; :meth:`jvp` and :meth:`vjp` run the
    forward and reverse code adgen wrote for it, w.r.t. every parameter. The solvers'
    derivative helpers (:mod:`adgen.rules.runtime.solvers`) call these; :meth:`remember`
    keeps the last result a helper computed, so that the cotangents of a solver's several
    inputs come from one adjoint solve.
    """

    def __init__(
        self,
        parsed: ParsedFunction,
        primal: Callable[..., Any],
        wrt: list[str],
        defaults: tuple[Any, ...] = (),
    ) -> None:
        self.name = parsed.name
        self.parsed = parsed
        self.primal = primal
        self.wrt = list(wrt)
        self.defaults = tuple(defaults)  # of the last parameters, as the function has them
        self._code: dict[tuple[Any, ...], Any] = {}  # (mode, the arguments' kinds) -> code
        self._last: tuple[tuple[Any, ...], Any] | None = None

    def __call__(self, *args: Any) -> Any:
        return self.primal(*args)

    def code(self, mode: str, args: tuple[Any, ...]) -> Any:
        """The forward or reverse code of the function for the kinds and shapes of ``args``
        (its arguments, then the cotangent for reverse code: both key the code); made on
        first use, for a few kinds, then for any kind."""
        from adgen.middle.shapes import describe

        key: tuple[str, Any] = (mode, tuple(describe(a) for a in args))
        made = self._code.get(key)
        if made is None:
            kinds: tuple[Any, ...] | None = args[: len(self.wrt)]
            if len(self._code) >= 16:  # called with ever new kinds: code for any kind
                key, kinds = (mode, None), None
                made = self._code.get(key)
            if made is None:
                made = self._code[key] = derivative_code(self.parsed, mode, self.wrt, kinds)
        return made

    def _filled(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """``args`` with the defaults of the parameters it leaves out."""
        missing = len(self.wrt) - len(args)
        if missing <= 0:
            return args
        return (*args, *self.defaults[len(self.defaults) - missing :])

    def jvp(self, args: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        """``(f(*args), its tangent)`` for one tangent per argument."""
        import numpy as np

        full = self._filled(args)
        dots = (*tangents, *(np.zeros_like(a) for a in full[len(args) :]))
        return self.code("forward", full)(*full, *dots)  # type: ignore[no-any-return]

    def pullback(self) -> Callable[..., Any]:
        """:meth:`vjp` for the many calls of one solve: ``run(args, cotangent)`` gives
        ``vjp(args, cotangent)``, the code chosen on its first call, for the kinds of those
        arguments (a solver passes values of the same kinds each time); a later call whose
        arguments have other types takes :meth:`vjp`."""
        chosen: list[Any] = []  # (the types of the first call's arguments, its code, defaults)

        def run(args: tuple[Any, ...], cotangent: Any) -> tuple[Any, tuple[Any, ...]]:
            types = tuple(type(a) for a in args)
            if not chosen:
                full = (*self._filled(args), cotangent)
                chosen.extend((types, self.code("reverse", full), full[len(args) : -1]))
            if types != chosen[0]:
                return self.vjp(args, cotangent)
            value, cotangents = chosen[1](*args, *chosen[2], cotangent)
            return value, tuple(cotangents)[: len(args)]

        return run

    def batched(self, args: tuple[Any, ...], which: tuple[bool, ...]) -> Any:
        """Batched forward code (:mod:`adgen.modes.batched`) w.r.t. the arguments ``which``
        marks, for the kinds and shapes of ``args`` (the defaults of the parameters it leaves
        out are filled in): called ``code(*args, *tangents)`` with the tangents of the marked
        arguments only, each with ``k`` of them along a leading axis, it returns ``(None,
        the result's k tangents)``. None where that mode does not apply (a rule with no
        batched form in a way that cannot loop, lists of derivatives...): the caller then
        takes another way. Made once for these kinds; the caller keeps it for a solve."""
        from adgen.middle.shapes import describe
        from adgen.modes.batched import NotBatched

        full = self._filled(args)
        which = (*which, *(False for _ in full[len(which) :]))  # (no tangent for defaults)
        key = ("forward_batched", which, tuple(describe(a) for a in full))
        if key not in self._code:
            wrt = [p for p, marked in zip(self.wrt, which, strict=True) if marked]
            try:
                self._code[key] = derivative_code(self.parsed, "forward_batched", wrt, full)
            except NotBatched:
                self._code[key] = None
        code, given, defaults = self._code[key], len(args), full[len(args) :]
        if code is None or not defaults:
            return code

        def run(*values: Any) -> Any:  # (the arguments, then the tangents)
            return code(*values[:given], *defaults, *values[given:])

        return run

    def vjp(self, args: tuple[Any, ...], cotangent: Any) -> tuple[Any, tuple[Any, ...]]:
        """``(f(*args), the cotangent of each argument)`` for the result's ``cotangent``."""
        full = (*self._filled(args), cotangent)
        value, cotangents = self.code("reverse", full)(*full)
        return value, tuple(cotangents)[: len(args)]

    def vjp_jvp(
        self, args: tuple[Any, ...], cotangent: Any, tangents: tuple[Any, ...]
    ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """``(the cotangents of vjp(args, cotangent), their tangents)`` for one tangent per
        argument (the cotangent held fixed): forward mode over the reverse code, so
        Hessian-vector products of a scalar function (``cotangent`` 1.0) and mixed second
        derivatives. Made on first use."""
        import numpy as np

        from adgen.middle.shapes import describe

        full = (*self._filled(args), cotangent)
        key = ("forward over reverse", tuple(describe(a) for a in full))
        made = self._code.get(key)
        if made is None:
            from adgen.frontend.parse import parse_function

            parsed = parse_function(self.code("reverse", full))
            params = [a.id for a in parsed.node.args.args]
            made = self._code[key] = derivative_code(parsed, "forward", params, full)
        dots = (*tangents, *(np.zeros_like(a) for a in full[len(args) : -1]))
        (_, cots), (_, dcots) = made(*full, *dots, np.zeros_like(cotangent))
        return tuple(cots)[: len(args)], tuple(dcots)[: len(args)]

    def remember(self, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        """``compute()``, or the value it gave last for the same ``key``: the same objects
        (by identity) holding the same values (an array may be written between calls)."""
        last = self._last
        if (
            last is not None
            and len(last[0]) == len(key)
            and all(_same(held, k) for held, k in zip(last[0], key))
        ):
            return last[1]
        value = compute()
        self._last = (tuple((k, _values(k)) for k in key), value)
        return value

    def __repr__(self) -> str:
        return f"<adgen callback {self.name}>"


def _values(value: Any) -> Any:
    """A copy of what ``value`` holds, if it is an array or a tuple or list (else None)."""
    import numpy as np

    if isinstance(value, (tuple, list)):
        return [(v, _values(v)) for v in value]
    return np.array(value, copy=True) if isinstance(value, np.ndarray) else None


def _same(held: tuple[Any, Any], value: Any) -> bool:
    import numpy as np

    obj, values = held
    if isinstance(value, (tuple, list)):  # (a tuple display is a new tuple each time)
        return (
            isinstance(obj, (tuple, list))
            and len(values) == len(value)
            and all(_same(h, v) for h, v in zip(values, value))
        )
    if obj is not value:
        return False
    if isinstance(value, np.ndarray):
        return values.shape == value.shape and bool(np.array_equal(values, value, equal_nan=True))
    return True
