"""Your own derivatives: custom rules, functions without derivative, ``stop_gradient``.

Three ways to tell adgen how to differentiate a function of yours instead of letting it
inline the function's body (see ``docs/rules.md``, "Your own rules"):

* plain Python functions for the derivatives, in one place:
  :func:`custom_derivative` (a decorator with ``.defjvp`` / ``.defvjp``) or
  :func:`defrule` (``adgen.defrule(fn, jvp=..., vjp=...)``);
* templates, exactly like adgen's own rules: ``@adgen.rule(fn)`` (which is
  :func:`adgen.rules.rule`); a user's templates may also call the helpers of the module
  that defines them;
* :func:`nondifferentiable` for functions whose results carry no derivative, and
  :func:`stop_gradient` for a value whose derivative should not flow.

Generated code calls your function and your derivative functions by name, so
differentiating generated code again (second order) inlines the derivative functions
when they are in the subset adgen reads, or uses their own rules:

>>> import numpy as np, adgen
>>> def cube(x):
...     return x * x * x
>>> def cube_jvp(x, dx):
...     return 3.0 * x * x * dx
>>> def cube_vjp(g, x):
...     return 3.0 * x * x * g
>>> with adgen.rules.registrations():
...     _ = adgen.defrule(cube, jvp=cube_jvp, vjp=cube_vjp)
...     print(adgen.grad(lambda x: cube(x) + x)(2.0))
13.0
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import types
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, overload

from adgen.errors import RuleError, SourceLocation, SourceUnavailableError, entry_point
from adgen.rules import registry
from adgen.rules.registry import Primitive, Template

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "CustomDerivative",
    "custom_derivative",
    "defrule",
    "nondifferentiable",
    "stop_gradient",
    "unregister",
]


def stop_gradient(x: T) -> T:
    """``x`` itself, through which no derivative flows (in forward and reverse mode).

    adgen treats its result as a constant: ``grad`` of ``x * stop_gradient(x)`` is ``x``.
    Generated code keeps the call, so differentiating that code again stops there too.
    Outside adgen it is the identity:

    >>> stop_gradient(3.0)
    3.0
    """
    return x


registry.nondifferentiable(stop_gradient)


def nondifferentiable(fn: F) -> F:
    """Declare that ``fn``'s results carry no derivative (like ``np.floor``); returns ``fn``.

    Usable as a decorator. This is a promise you make: adgen then calls ``fn`` as it is and
    takes its results as constants, whatever its arguments depend on; if the results do
    depend smoothly on the arguments, derivatives through them are silently missing.

    >>> import numpy as np
    >>> with registry.registrations():
    ...     @nondifferentiable
    ...     def bucket(x):
    ...         return np.floor(4.0 * x) / 4.0
    ...     registry.lookup(bucket).differentiable
    False
    """
    registry.nondifferentiable(fn)
    return fn


def unregister(fn: Any) -> bool:
    """Forget the rule registered for ``fn`` (by any of the forms here); True if there was one.

    Calls of ``fn`` are inlined again. Tests can instead register inside
    ``with adgen.rules.registrations():``, which restores the registry on exit.
    """
    return registry.unregister(fn)


# function with a rule -> (that function, the one-line function calling it)
_CALLERS: dict[int, tuple[Any, types.FunctionType]] = {}


def through_rule(fn: Any) -> types.FunctionType | None:
    """For a function with a rule, a plain function of the same parameters that calls it, so
    that ``adgen.grad(fn)`` uses the rule rather than the body (``adgen.grad(np.linalg.norm)``,
    ``adgen.grad(scipy.special.logsumexp)``, a function with a rule of the user's); None for
    any other object. Made once per function (its derivatives are cached).

    A NumPy or SciPy function takes the parameters of adgen's rule, those with defaults passed
    on by keyword (the rule's names are the library's):

    >>> import numpy as np
    >>> f = through_rule(np.linalg.norm)
    >>> list(inspect.signature(f).parameters)[:2], float(f(np.array([3.0, 4.0])))
    (['x', 'ord'], 5.0)
    """
    prim = registry.lookup(fn)
    if prim is None or prim.refusal is not None or prim.user_fn is not None:
        return None
    hit = _CALLERS.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    from adgen.backend.compile import load
    from adgen.generated import Generated

    library = prim.callee is None  # NumPy's, SciPy's: the rule's parameters
    params = list(prim.params) if library else _plain_parameters(fn)
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    name = registry._identifier(fn)
    callee = f"{name}_fn"
    free: dict[str, Any] = {callee: fn}
    signature, passed = [], []
    for i, p in enumerate(params):
        if p.default is inspect.Parameter.empty:
            signature.append(p.name)
            passed.append(p.name)
        else:
            free[f"_adgen_default_{i}"] = p.default
            signature.append(f"{p.name}=_adgen_default_{i}")
            passed.append(f"{p.name}={p.name}" if library else p.name)
    names = ", ".join(passed)
    text = f"def {name}({', '.join(signature)}):\n    return {callee}({names})\n"
    caller = load(Generated(name, [p.name for p in params], text), free)
    assert isinstance(caller, types.FunctionType)
    caller.__doc__ = getattr(fn, "__doc__", None)  # (no __wrapped__: inspect would follow it)
    _CALLERS[id(fn)] = (fn, caller)
    return caller


# the stand-ins of callables that are not plain functions, by what they call (bounded)
_STAND_INS: dict[Any, tuple[Any, types.FunctionType]] = {}


def stand_in(fn: Any) -> types.FunctionType | None:
    """For a bound method (``model.loglike``), a ``functools.partial``, an object with a
    ``__call__`` of Python's, or a decorator's ``(*args, **kwargs)`` wrapper
    (``functools.wraps``: the wrapped function's parameters), a plain function of the same
    positional parameters that calls it, which adgen reads and differentiates (inlining the
    method, function or wrapper it calls);
    None for any other object. Keyword-only parameters with defaults (those a ``partial``
    binds) keep their values; ``*args`` and ``**kwargs`` are left out (the function is
    differentiated called without them); keyword-only ones without a default are refused by
    name.

    >>> import numpy as np
    >>> class Model:
    ...     def loss(self, w, scale=2.0):
    ...         return scale * np.sum(w * w)
    >>> f = stand_in(Model().loss)
    >>> f.__name__, list(inspect.signature(f).parameters), f(np.ones(3))
    ('loss', ['w', 'scale'], np.float64(6.0))
    """
    key: Any
    if isinstance(fn, types.FunctionType):  # a decorator's (*args, **kwargs) wrapper
        if getattr(fn, "__wrapped__", None) is None:
            return None
        key, name = fn, fn.__name__
    elif isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        key = (fn.__func__, id(fn.__self__))
        name = fn.__func__.__name__
    elif isinstance(fn, functools.partial):
        key, name = id(fn), getattr(fn.func, "__name__", "partial")
    elif isinstance(vars(type(fn)).get("__call__"), types.FunctionType) or any(
        isinstance(vars(c).get("__call__"), types.FunctionType) for c in type(fn).__mro__[1:-1]
    ):  # an object whose class (or a base) defines __call__ in Python
        key, name = (type(fn), id(fn)), type(fn).__name__.lower()
    else:
        return None
    hit = _STAND_INS.get(key)
    if hit is not None and (hit[0] is fn or hit[0] == fn):
        return hit[1]
    from adgen.backend.compile import load
    from adgen.generated import Generated

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    name = name if name.isidentifier() and not name.startswith("<") else "function"
    callee = f"{name}_fn"
    free: dict[str, Any] = {callee: fn}
    signature, passed = [], []
    for i, p in enumerate(params):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue  # (`loglike(self, params, **kwds)`: differentiated without any)
        if p.kind == p.KEYWORD_ONLY and p.default is p.empty:
            raise SourceUnavailableError(
                f"adgen differentiates {fn!r} through a function of its positional "
                f"parameters: `{p}` is not one",
                _where(fn),
                "wrap it in a function of the arguments you differentiate",
            )
        if p.kind == p.KEYWORD_ONLY:
            continue  # bound by the partial (or its own default): the callable applies it
        if p.default is p.empty:
            signature.append(p.name)
        else:
            free[f"_adgen_default_{i}"] = p.default
            signature.append(f"{p.name}=_adgen_default_{i}")
        passed.append(p.name)
    text = f"def {name}({', '.join(signature)}):\n    return {callee}({', '.join(passed)})\n"
    made = load(Generated(name, passed, text), free)
    assert isinstance(made, types.FunctionType)
    made.__doc__ = getattr(fn, "__doc__", None)
    if len(_STAND_INS) >= 64:
        _STAND_INS.pop(next(iter(_STAND_INS)))
    _STAND_INS[key] = (fn, made)
    return made


def _where(obj: Any) -> SourceLocation | None:
    code = getattr(inspect.unwrap(obj), "__code__", None)
    if code is None:
        return None
    text = linecache.getline(code.co_filename, code.co_firstlineno)
    return SourceLocation(code.co_filename, code.co_firstlineno, 0, text)


def _label(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _plain_parameters(fn: Any) -> list[inspect.Parameter]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        raise RuleError(f"cannot read the parameters of {fn!r}", _where(fn)) from None
    params = list(sig.parameters.values())
    for p in params:
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY):
            raise RuleError(
                f"{_label(fn)}: a custom rule needs plain parameters; `{p}` is not one",
                _where(fn),
                "wrap the function in one with positional parameters and register that",
            )
    return [p.replace(kind=p.POSITIONAL_OR_KEYWORD) for p in params]


def _check_callable(
    what: str, derivative: Callable[..., Any], n: int, expected: str, fn: Any
) -> bool:
    """Check ``derivative`` accepts ``n`` positional arguments; True if it also takes ``ans``."""
    try:
        sig = inspect.signature(derivative)
    except (TypeError, ValueError):
        raise RuleError(f"cannot read the parameters of the {what} of {_label(fn)}") from None
    takes_ans = "ans" in sig.parameters
    try:
        sig.bind(*range(n), **({"ans": None} if takes_ans else {}))
    except TypeError as exc:
        raise RuleError(
            f"the {what} of {_label(fn)} must take {expected} ({exc})",
            _where(derivative) or _where(fn),
            "see docs/rules.md, 'Your own rules'",
        ) from None
    return takes_ans


def _call(func: str, args: list[ast.expr], ans: bool) -> ast.Call:
    keywords = [ast.keyword(arg="ans", value=ast.Name(id="ans", ctx=ast.Load()))] if ans else []
    return ast.Call(func=ast.Name(id=func, ctx=ast.Load()), args=args, keywords=keywords)


def _template(arg: str, value: ast.expr, origin: str) -> Template:
    body: list[ast.stmt] = [ast.fix_missing_locations(ast.Return(value=value))]
    loaded = frozenset(
        n.id for n in ast.walk(value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )
    return Template(arg, body, loaded, origin)


def _free_name(preferred: str, taken: set[str]) -> str:
    name, k = preferred, 0
    while name in taken:
        k += 1
        name = f"{preferred}_{k}"
    taken.add(name)
    return name


@entry_point
def defrule(
    fn: F,
    *,
    jvp: Callable[..., Any] | None = None,
    vjp: Callable[..., Any] | None = None,
    wrt: Sequence[str] | None = None,
) -> F:
    """Register plain Python functions as ``fn``'s derivatives; returns ``fn``.

    ``wrt`` names the differentiable parameters; by default every parameter without a
    default value. The others are *static*: passed through unchanged (ints, flags...);
    a differentiated value reaching one is refused.

    * ``jvp(*args, *tangents)`` gets all of ``fn``'s arguments, then one tangent per
      differentiable parameter (in order), and returns the tangent of the result. It must
      be linear in the tangents: when only some arguments are differentiated, the others'
      tangents are zeros.
    * ``vjp(g, *args)`` gets the result's cotangent ``g`` and all of ``fn``'s arguments and
      returns the cotangent of the differentiable parameter, or a tuple of them (one per
      differentiable parameter, in order) when there are several.

    A ``jvp`` or ``vjp`` with a parameter named ``ans`` also receives ``fn``'s result (by
    keyword). Give one mode only and the other is refused, naming the call, when asked for.
    Registering again replaces the rule; :func:`unregister` removes it.
    """
    if jvp is None and vjp is None:
        raise RuleError(
            f"defrule({_label(fn)}) needs jvp=..., vjp=... or both",
            _where(fn),
            "for a function without derivative use adgen.nondifferentiable",
        )
    params = _plain_parameters(fn)
    names = [p.name for p in params]
    if wrt is None:
        diff = [p.name for p in params if p.default is inspect.Parameter.empty]
    else:
        diff = [wrt] if isinstance(wrt, str) else list(wrt)
        unknown = [w for w in diff if w not in names]
        if unknown:
            raise RuleError(
                f"defrule({_label(fn)}): wrt names {unknown}, not parameters of it ({names})",
                _where(fn),
            )
        diff = [n for n in names if n in diff]
    taken = {*names, "ans", "rt", "np", "math"}
    seed = _free_name("seed", taken)
    helpers: dict[str, Any] = {}
    origin = f"defrule({_label(fn)})"
    where = _where(fn)
    jvps: dict[str, Template] = {}
    vjps: dict[str, Template] = {}
    primals: list[ast.expr] = [ast.Name(id=n, ctx=ast.Load()) for n in names]
    if jvp is not None:
        shown = ", ".join([*names, *(f"d{n}" for n in diff)])
        ans = _check_callable("jvp", jvp, len(names) + len(diff), f"({shown})", fn)
        preferred = registry._identifier(jvp)
        key = _free_name(preferred if preferred != "fn" else f"{fn.__name__}_jvp", taken)
        helpers[key] = jvp
        for p in diff:
            tangents: list[ast.expr] = [
                ast.Name(id=seed, ctx=ast.Load())
                if q == p
                else ast.parse(f"rt.zeros_like({q})", mode="eval").body
                for q in diff
            ]
            jvps[p] = _template(seed, _call(key, [*primals, *tangents], ans), origin)
    if vjp is not None:
        shown = ", ".join(["g", *names])
        ans = _check_callable("vjp", vjp, 1 + len(names), f"({shown})", fn)
        preferred = registry._identifier(vjp)
        key = _free_name(preferred if preferred != "fn" else f"{fn.__name__}_vjp", taken)
        helpers[key] = vjp
        for k, p in enumerate(diff):
            value: ast.expr = _call(key, [ast.Name(id=seed, ctx=ast.Load()), *primals], ans)
            if len(diff) > 1:
                value = ast.Subscript(value=value, slice=ast.Constant(value=k), ctx=ast.Load())
            vjps[p] = _template(seed, value, origin)
    place = f" ({where})" if where else ""
    for have, lack, kind, mode in ((jvps, vjps, "vjp", "reverse"), (vjps, jvps, "jvp", "forward")):
        for p in diff:
            if p not in lack and p in have:
                lack[p] = Template(
                    seed,
                    [ast.Return(value=ast.Constant(value=None))],
                    frozenset(),
                    origin,
                    refusal=(
                        f"its custom rule{place} gives no {mode}-mode derivative: pass "
                        f"{kind}=... to adgen.defrule (or decorate one with "
                        f"@{fn.__name__}.def{kind})"
                    ),
                )
    emitter, callee = registry._emitter(fn)
    # view: the function may return (a view of) its argument, so no in-place writes into it
    prim = Primitive(_label(fn), emitter, params, jvps, vjps, view=True)
    prim.callee = callee
    prim.helpers = helpers
    registry._store(fn, prim)
    return fn


class CustomDerivative(Generic[F]):
    """A function with derivatives you give (see :func:`custom_derivative`).

    Calling it calls the function. ``.defjvp`` and ``.defvjp`` are decorators registering the
    derivative functions (signatures as in :func:`defrule`); each returns its argument.
    """

    # (The state lives in underscored attributes: functools.update_wrapper, which adgen's
    # own wrappers apply to the function they differentiate, copies instance attributes.)
    def __init__(self, fn: F, wrt: Sequence[str] | None = None) -> None:
        functools.update_wrapper(self, fn)
        self._custom_fn = fn
        self._custom_wrt = wrt
        self._custom_jvp: Callable[..., Any] | None = None
        self._custom_vjp: Callable[..., Any] | None = None
        params = _plain_parameters(fn)
        # declared, no derivative yet: both modes refused, naming what to add
        refusals = {
            kind: Template(
                "seed",
                [ast.Return(value=ast.Constant(value=None))],
                frozenset(),
                f"custom_derivative({_label(fn)})",
                refusal=(
                    f"{_label(fn)} is declared with @adgen.custom_derivative ({_where(fn)}) but "
                    f"has no {kind}: add one with @{fn.__name__}.def{kind}"
                ),
            )
            for kind in ("jvp", "vjp")
        }
        diff = (
            [p.name for p in params if p.default is inspect.Parameter.empty]
            if wrt is None
            else [p.name for p in params if p.name in wrt]
        )
        emitter, callee = registry._emitter(self)
        prim = Primitive(
            _label(fn),
            emitter,
            params,
            {p: refusals["jvp"] for p in diff},
            {p: refusals["vjp"] for p in diff},
            view=True,
        )
        prim.callee = callee
        registry._store(self, prim)

    @property
    def fn(self) -> F:
        """The function itself."""
        return self._custom_fn

    @property
    def jvp(self) -> Callable[..., Any] | None:
        """The forward-mode derivative given with :meth:`defjvp`, if any."""
        return self._custom_jvp

    @property
    def vjp(self) -> Callable[..., Any] | None:
        """The reverse-mode derivative given with :meth:`defvjp`, if any."""
        return self._custom_vjp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._custom_fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<custom_derivative {_label(self._custom_fn)}>"

    @entry_point
    def defjvp(self, jvp: Callable[..., T]) -> Callable[..., T]:
        """Register ``jvp(*args, *tangents) -> tangent`` (decorator; returns ``jvp``)."""
        defrule(self, jvp=jvp, vjp=self._custom_vjp, wrt=self._custom_wrt)
        self._custom_jvp = jvp
        return jvp

    @entry_point
    def defvjp(self, vjp: Callable[..., T]) -> Callable[..., T]:
        """Register ``vjp(g, *args) -> cotangent(s)`` (decorator; returns ``vjp``)."""
        defrule(self, jvp=self._custom_jvp, vjp=vjp, wrt=self._custom_wrt)
        self._custom_vjp = vjp
        return vjp


@overload
def custom_derivative(fn: F, *, wrt: Sequence[str] | None = None) -> CustomDerivative[F]: ...


@overload
def custom_derivative(
    fn: None = None, *, wrt: Sequence[str] | None = None
) -> Callable[[F], CustomDerivative[F]]: ...


@entry_point
def custom_derivative(
    fn: F | None = None, *, wrt: Sequence[str] | None = None
) -> CustomDerivative[F] | Callable[[F], CustomDerivative[F]]:
    """Decorator: a function whose derivatives you give with ``.defjvp`` / ``.defvjp``.

    ::

        @adgen.custom_derivative
        def softclip(x, lo=0.0, hi=1.0):
            return lo + (hi - lo) * (np.tanh(x) + 1.0) / 2.0

        @softclip.defjvp
        def softclip_jvp(x, lo, hi, dx):
            return (hi - lo) * (1.0 - np.tanh(x) ** 2) / 2.0 * dx

        @softclip.defvjp
        def softclip_vjp(g, x, lo, hi):
            return g * (hi - lo) * (1.0 - np.tanh(x) ** 2) / 2.0

    ``wrt`` names the differentiable parameters (default: those without a default value).
    Until ``.defjvp`` (``.defvjp``) is given, forward (reverse) mode through the function is
    refused with an error saying what to add.
    """
    if fn is None:

        @entry_point
        def declare(f: F) -> CustomDerivative[F]:
            return CustomDerivative(f, wrt)

        return declare
    return CustomDerivative(fn, wrt)
