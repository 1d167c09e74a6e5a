"""The plain functions standing for adgen's derivative operators, so that they compose.

``adgen.grad(f)`` stands for a small generated function calling ``f``'s reverse-mode code
(``api._as_function``); adgen reads that function like any other, so ``grad(grad(f))``
differentiates generated code. This module does the same for the other operators:

* ``jacfwd(f)`` / ``jacobian(f)``: one forward-mode call per basis vector of the argument,
  the tangents stacked along the last axes;
* ``jacrev(f)``: one reverse-mode call per basis vector of the result;
* ``hvp(f)``: forward mode over the function standing for ``grad(f)``;
* ``laplacian(f)``: the diagonal of the Hessian, one ``hvp`` per basis vector;
* ``hessian(f)`` is ``jacfwd(grad(f))`` and needs nothing of its own.

Each is written in the subset adgen differentiates (a loop over the basis, ``append``,
``np.stack``, ``np.reshape``), so ``jacfwd(jacrev(f))``, ``grad(laplacian(f))``,
``jvp(hvp(f), ...)`` and a function calling ``adgen.hessian(g)(x)`` are differentiated
through the generated code, to any order. A Jacobian of several arguments or of a tuple
result is refused with a hint (use one argument and one array).
"""

from __future__ import annotations

import types
from typing import Any

from adgen.backend.compile import load
from adgen.errors import NonDifferentiableError
from adgen.generated import Generated
from adgen.names import Namer

# (kind, function, parameter) -> (the code the function made calls, the function made): the
# same function while that code is the same (adgen's caches compare it by identity)
_MADE: dict[tuple[str, Any, str], tuple[Any, types.FunctionType]] = {}


def _pipeline() -> Any:
    from adgen import pipeline

    return pipeline


def _build(
    key: tuple[str, Any, str],
    calls: Any,
    fn: types.FunctionType,
    name: str,
    params: list[str],
    comment: str,
    body: list[str],
    namespace: dict[str, Any],
) -> types.FunctionType:
    known = _MADE.get(key)
    if known is not None and known[0] is calls:
        return known[1]
    source = "\n".join(
        [f"# adgen: {comment}", f"def {name}({', '.join(params)}):", *("    " + b for b in body)]
    )
    made = load(Generated(name, params, source + "\n"), namespace)
    assert isinstance(made, types.FunctionType)
    if len(params) == len(fn.__code__.co_varnames[: fn.__code__.co_argcount]):
        made.__defaults__ = fn.__defaults__
    _MADE[key] = (calls, made)
    return made


def _single(fn: types.FunctionType, wrt: tuple[str, ...], what: str) -> str:
    if len(wrt) != 1:
        raise NonDifferentiableError(
            f"differentiating the function adgen.{what} returns w.r.t. several arguments "
            f"({', '.join(wrt)})",
            hint=f"take adgen.{what} w.r.t. one argument (gather several arrays into one)",
        )
    return wrt[0]


def _base(fn: types.FunctionType) -> str:
    return fn.__name__ if fn.__name__.isidentifier() else "fn"


def jacobian_function(
    fn: types.FunctionType, wrt: tuple[str, ...], mode: str
) -> types.FunctionType:
    """A plain function computing the Jacobian of ``fn`` (a plain function) w.r.t. the one
    parameter in ``wrt``, by forward (``mode`` "forward") or reverse mode.

    >>> import numpy as np
    >>> from adgen.frontend.parse import unwrap
    >>> def f(x):
    ...     return np.sin(x) * x[0]
    >>> j = jacobian_function(f, ("x",), "forward")
    >>> j(np.array([0.0, 1.0])).round(3).tolist()
    [[0.0, 0.0], [0.841, 0.0]]
    >>> jacobian_function(f, ("x",), "reverse")(np.array([0.0, 1.0])).round(3).tolist()
    [[0.0, 0.0], [0.841, 0.0]]
    """
    x = _single(fn, wrt, "jacfwd" if mode == "forward" else "jacrev")
    params = list(fn.__code__.co_varnames[: fn.__code__.co_argcount])
    d = _pipeline().derivative(fn, mode, (x,), batched=False)
    namer = Namer([*params, d.generated.name, fn.__name__, "np"])
    code, f = d.generated.name, namer.claim(_base(fn))
    n, basis, k, out, first, parts = (
        namer.claim(s) for s in ("n", "basis", "k", "out", "first", "parts")
    )
    args = ", ".join(params)
    if mode == "forward":
        body = [
            f"{n} = np.size({x})",
            f"{basis} = np.reshape(np.eye({n}), ({n},) + np.shape({x}))",
            f"{out}, {first} = {code}({args}, {basis}[0])",
            f"{parts} = [np.broadcast_to({first}, np.shape({out}))]",
            f"for {k} in range(1, {n}):",
            f"    {parts}.append(np.broadcast_to({code}({args}, {basis}[{k}])[1], "
            f"np.shape({out})))",
            f"return np.reshape(np.stack({parts}, axis=-1), np.shape({out}) + np.shape({x}))",
        ]
    else:
        body = [
            f"{out} = {f}({args})",
            f"{n} = np.size({out})",
            f"{basis} = np.reshape(np.eye({n}), ({n},) + np.shape({out}))",
            f"{parts} = []",
            f"for {k} in range({n}):",
            f"    {parts}.append(np.broadcast_to({code}({args}, {basis}[{k}])[1][0], "
            f"np.shape({x})))",
            f"return np.reshape(np.stack({parts}), np.shape({out}) + np.shape({x}))",
        ]
    kind = "forward" if mode == "forward" else "reverse"
    name = f"{_base(fn)}_jac{'fwd' if mode == 'forward' else 'rev'}"
    comment = f"the Jacobian of {fn.__qualname__} w.r.t. {x}, by {kind} mode"
    key = (mode, fn, x)
    return _build(key, d.compiled, fn, name, params, comment, body, {code: d.compiled, f: fn})


def hvp_function(gradient: types.FunctionType, x: str) -> types.FunctionType:
    """A plain function ``(*params, v) -> H v``: forward mode over ``gradient``, the plain
    function standing for the gradient of a scalar function w.r.t. its parameter ``x``.

    >>> import numpy as np
    >>> def g(x):  # the gradient of sum(x ** 3)
    ...     return 3.0 * x**2
    >>> hvp_function(g, "x")(np.array([1.0, 2.0]), np.array([1.0, 1.0])).tolist()
    [6.0, 12.0]
    """
    params = list(gradient.__code__.co_varnames[: gradient.__code__.co_argcount])
    d = _pipeline().derivative(gradient, "forward", (x,), batched=False)
    namer = Namer([*params, d.generated.name, "np"])
    v, product = namer.claim("v"), namer.claim("product")
    body = [
        f"_, {product} = {d.generated.name}({', '.join(params)}, {v})",
        f"return {product}",
    ]
    comment = f"the Hessian of the function {gradient.__qualname__} is the gradient of, times {v}"
    name = f"{_base(gradient)}_hvp"
    namespace = {d.generated.name: d.compiled}
    return _build(
        ("hvp", gradient, x), d.compiled, gradient, name, [*params, v], comment, body, namespace
    )


def laplacian_function(product: types.FunctionType, x: str) -> types.FunctionType:
    """A plain function summing ``product(*params, e_k)[k]`` over the basis vectors ``e_k``
    of the parameter ``x``: the trace of the Hessian whose products ``product`` computes.

    >>> import numpy as np
    >>> def hv(x, v):  # the Hessian of sum(x ** 3), times v
    ...     return 6.0 * x * v
    >>> float(laplacian_function(hv, "x")(np.array([1.0, 2.0])))
    18.0
    """
    params = list(product.__code__.co_varnames[: product.__code__.co_argcount - 1])
    namer = Namer([*params, product.__name__, "np"])
    p, n, basis, k, total = (namer.claim(s) for s in ("hvp", "n", "basis", "k", "total"))
    args = ", ".join(params)
    body = [
        f"{n} = np.size({x})",
        f"{basis} = np.reshape(np.eye({n}), ({n},) + np.shape({x}))",
        f"{total} = 0.0",
        f"for {k} in range({n}):",
        f"    {total} = {total} + np.ravel({p}({args}, {basis}[{k}]))[{k}]",
        f"return {total}",
    ]
    comment = f"the trace of the Hessian {product.__qualname__} multiplies by"
    name = f"{_base(product)}_laplacian"
    return _build(
        ("laplacian", product, x), product, product, name, params, comment, body, {p: product}
    )
