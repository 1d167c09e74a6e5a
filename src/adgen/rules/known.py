"""Runtime helpers written out as plain NumPy when shapes are known before the code runs.

A derivative specialised for the shapes of a call (:func:`adgen.middle.shapes.infer`) knows the
shape and dtype of most values. ``rt.unbroadcast(g, x)`` and ``rt.unreduce(g, x, axis)``
then need not look at shapes at run time: the sums and broadcasts they would do are
decided here, once, and written as NumPy calls -- or nothing, when the shapes agree.

>>> import ast
>>> g = ast.Name("g")
>>> ast.unparse(unbroadcast(g, (4, 2, 3), (2, 1)))
"np.reshape(np.einsum('abc->b', g), (2, 1))"
>>> ast.unparse(unbroadcast(g, (2, 3), (2, 3)))
'g'
>>> call = ast.parse("rt.unreduce(g, x, axis=1)", mode="eval").body
>>> ast.unparse(specialize(call, {"x": ((2, 3), "float64")}))
'np.broadcast_to(np.expand_dims(g, 1), (2, 3))'
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import numpy as np

from adgen.pyast import Transformer, dotted_text

# The key of ``known`` (not a Python name) present when arguments are arrays of another
# library than NumPy (``adgen.middle.shapes.specialise``): no NumPy array is then made from a
# shape alone, where it would meet theirs.
LIBRARY = "<library>"
# The key of ``known`` whose value's second item lists (space-separated) the names known to be
# real whose dtype is not known otherwise (:meth:`adgen.modes.complexvalues.ComplexValues.real`):
# ``rt.known_real`` answers from it.
REAL = "<real>"
# The key of ``known`` present when the code must be right for real and complex arguments
# alike, their kinds unknown (code inlined into, or called from, a function adgen
# differentiates: :data:`adgen.middle.shapes.ANY_KIND`).
ANY_KIND = "<any kind>"

Known = Mapping[str, tuple[tuple[int, ...], str]]


def _np(func: str, *args: ast.expr, **kwargs: ast.expr) -> ast.Call:
    return ast.Call(
        func=ast.Attribute(value=ast.Name("np", ast.Load()), attr=func, ctx=ast.Load()),
        args=list(args),
        keywords=[ast.keyword(arg=k, value=v) for k, v in kwargs.items()],
    )


def literal(value: object) -> ast.expr:
    """A number, string, None or (nested) tuple of them as an expression."""
    if isinstance(value, tuple):
        return ast.Tuple(elts=[literal(v) for v in value], ctx=ast.Load())
    return ast.Constant(value)  # type: ignore[arg-type]


def _axes(axes: tuple[int, ...]) -> ast.expr:
    return literal(axes[0] if len(axes) == 1 else axes)


def unbroadcast(
    g: ast.expr, g_shape: tuple[int, ...], x_shape: tuple[int, ...], known: Known | None = None
) -> ast.expr | None:
    """``rt.unbroadcast(g, x)`` for ``g`` of shape ``g_shape`` and ``x`` of ``x_shape``
    (None: these shapes do not broadcast to each other; leave it to the runtime).

    A product of two arrays of ``g``'s shape is summed without making it
    (``np.einsum``, about three times faster than the product and the sum):

    >>> a, b = ast.Name("a"), ast.Name("b")
    >>> product = ast.BinOp(a, ast.Mult(), b)
    >>> shapes = {"a": ((4, 2, 3), "float64"), "b": ((4, 2, 3), "float64")}
    >>> ast.unparse(unbroadcast(product, (4, 2, 3), (2, 1), shapes))
    "np.reshape(np.einsum('abc,abc->b', a, b), (2, 1))"
    """
    if g_shape == x_shape:
        return g
    extra = len(g_shape) - len(x_shape)
    if extra < 0 or len(g_shape) > 26:  # (einsum names each axis with a letter)
        return None
    rest = g_shape[extra:]
    if any(n != m and n != 1 for n, m in zip(x_shape, rest)):
        return None
    fused = _summed_product(g, g_shape, x_shape, known or {})
    if fused is not None:
        return fused
    if not x_shape:
        return _np("sum", g)
    return sum_to(g, g_shape, x_shape, method=LIBRARY not in (known or {}))


def sum_to(
    g: ast.expr, g_shape: tuple[int, ...], x_shape: tuple[int, ...], method: bool = False
) -> ast.expr:
    """``g`` summed over the axes where ``x_shape`` (aligned right) is 1 or missing, as one
    ``np.einsum`` (several times faster than ``np.sum`` over a middle or leading axis; it
    adds in another order, so the last bits may differ), reshaped to ``x_shape``.

    >>> ast.unparse(sum_to(ast.Name("g"), (4, 2, 3), (2, 1)))
    "np.reshape(np.einsum('abc->b', g), (2, 1))"
    >>> ast.unparse(sum_to(ast.Name("g"), (4, 3), (3,)))
    "np.einsum('ab->b', g)"

    With ``method`` (NumPy's arrays), below :data:`SMALL_SUM` values, where einsum's fixed
    cost shows (about 0.8 us more than the method's at 32 x 10), an array's own ``sum``
    (no leading axes added by broadcasting, or only those):

    >>> ast.unparse(sum_to(ast.Name("g"), (32, 10), (32, 1), method=True))
    'g.sum(axis=1, keepdims=True)'
    >>> ast.unparse(sum_to(ast.Name("g"), (32, 10), (10,), method=True))
    'g.sum(axis=0)'
    """
    if not method:
        return _einsum_to([g], g_shape, x_shape)
    size = int(np.prod(g_shape)) if g_shape else 1
    extra = len(g_shape) - len(x_shape)
    summed = [extra + i for i, (n, m) in enumerate(zip(x_shape, g_shape[extra:])) if n != m]
    if size <= SMALL_SUM and (not summed or extra == 0):
        keep = bool(summed)  # (size-1 axes of x summed over: kept, as x has them)
        axes = tuple(range(extra)) + tuple(summed)
        if axes:
            own_sum = ast.Attribute(value=g, attr="sum", ctx=ast.Load())
            keywords = [ast.keyword(arg="axis", value=_axes(axes))]
            if keep:
                keywords.append(ast.keyword(arg="keepdims", value=ast.Constant(True)))
            return ast.Call(func=own_sum, args=[], keywords=keywords)
    return _einsum_to([g], g_shape, x_shape)


# the number of values up to which a sum is an array's own `sum` rather than np.einsum
SMALL_SUM = 4096


def _einsum_to(
    operands: list[ast.expr], g_shape: tuple[int, ...], x_shape: tuple[int, ...]
) -> ast.expr:
    """``np.einsum`` of ``operands`` (each of ``g_shape``; several: their product) keeping
    the axes ``x_shape`` has, reshaped to ``x_shape`` when it has axes of size 1 that were
    summed over."""
    extra = len(g_shape) - len(x_shape)
    letters = "abcdefghijklmnopqrstuvwxyz"[: len(g_shape)]
    kept = "".join(
        letters[extra + i] for i, (n, m) in enumerate(zip(x_shape, g_shape[extra:])) if n == m
    )
    spec = ast.Constant(f"{','.join([letters] * len(operands))}->{kept}")
    out = _np("einsum", spec, *operands)
    if len(kept) != len(x_shape):  # axes of size 1 in x: put them back
        out = _np("reshape", out, literal(x_shape))
    return out


def elementwise_shape(expr: ast.expr, known: Known) -> tuple[int, ...] | None:
    """The shape of ``expr`` when it is built only from names of known shape, numbers,
    arithmetic and NumPy ufuncs (which broadcast their operands); None otherwise.

    >>> shapes = {"g": ((4, 3), "float64"), "y": ((3,), "float64")}
    >>> elementwise_shape(ast.parse("g * np.cos(y) + 1.0", mode="eval").body, shapes)
    (4, 3)
    >>> elementwise_shape(ast.parse("rt.zeros_like(y)", mode="eval").body, shapes) is None
    True
    """
    shapes: list[tuple[int, ...]] = []
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name):
            if node.id not in known:
                return None
            shapes.append(known[node.id][0])
        elif isinstance(node, ast.Constant):
            if type(node.value) not in (int, float, bool):
                return None
        elif isinstance(node, ast.BinOp) and not isinstance(node.op, ast.MatMult):
            todo += [node.left, node.right]
        elif isinstance(node, ast.UnaryOp):
            todo.append(node.operand)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and (
                (
                    node.func.value.id == "np"
                    and isinstance(getattr(np, node.func.attr, None), np.ufunc)
                )
                # a singular rule's contribution: its operands broadcast, like a ufunc's
                or (node.func.value.id == "rt" and node.func.attr == "zero_safe")
            )
            and not node.keywords
        ):
            todo += node.args
        else:
            return None
    try:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        return None


def _summed_product(
    g: ast.expr, g_shape: tuple[int, ...], x_shape: tuple[int, ...], known: Known
) -> ast.expr | None:
    """``a * b`` of two arrays of shape ``g_shape`` summed down to ``x_shape``, as einsum."""
    if not (
        isinstance(g, ast.BinOp)
        and isinstance(g.op, ast.Mult)
        and all(
            isinstance(side, ast.Name) and known.get(side.id, ((), ""))[0] == g_shape
            for side in (g.left, g.right)
        )
    ):
        return None
    return _einsum_to([g.left, g.right], g_shape, x_shape)


def _static(node: ast.expr | None, default: object) -> tuple[bool, object]:
    if node is None:
        return True, default
    try:
        return True, ast.literal_eval(node)
    except ValueError:
        return False, None


def _unreduce(call: ast.Call, known: Known) -> ast.expr | None:
    """``rt.unreduce(g, x, axis=..., keepdims=...)`` with ``x``'s shape known."""
    if len(call.args) < 2 or not isinstance(call.args[1], ast.Name):
        return None
    entry = known.get(call.args[1].id)
    if entry is None:
        return None
    shape, dtype = entry
    keywords = {k.arg: k.value for k in call.keywords}
    positional = dict(zip(("axis", "keepdims"), call.args[2:]))
    ok_axis, axis = _static(positional.get("axis", keywords.get("axis")), None)
    ok_keep, keepdims = _static(positional.get("keepdims", keywords.get("keepdims")), False)
    if not (ok_axis and ok_keep) or set(keywords) - {"axis", "keepdims"}:
        return None
    g, target = call.args[0], literal(shape)
    if not shape:
        return g
    if axis is None and not keepdims:
        if dtype != "float64" or LIBRARY in known:  # the runtime's dtype rule, and its arrays
            return None
        dtype_node = ast.Attribute(value=ast.Name("np", ast.Load()), attr="float64", ctx=ast.Load())
        return _np("full", target, g, dtype=dtype_node)
    if keepdims or axis is None:
        return _np("broadcast_to", g, target)
    axes = axis if isinstance(axis, tuple) else (axis,)
    if not all(type(a) is int and -len(shape) <= a < len(shape) for a in axes):
        return None
    normal = tuple(sorted(a % len(shape) for a in axes))
    return _np("broadcast_to", _np("expand_dims", g, _axes(normal)), target)


def _mean_vjp(call: ast.Call, known: Known) -> ast.expr | None:
    """``rt.mean_vjp(g, x, axis=..., keepdims=...)``: ``g`` divided by the number of values
    averaged, then spread like ``rt.unreduce`` (the same numbers: each is ``g / n``)."""
    if len(call.args) < 2 or not isinstance(call.args[1], ast.Name):
        return None
    entry = known.get(call.args[1].id)
    if entry is None:
        return None
    shape = entry[0]
    keywords = {k.arg: k.value for k in call.keywords}
    ok, axis = _static(dict(zip(("axis",), call.args[2:])).get("axis", keywords.get("axis")), None)
    if not ok:
        return None
    axes = range(len(shape)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    if not all(type(a) is int and -len(shape) <= a < len(shape) for a in axes):
        return None
    count = 1
    for a in axes:
        count *= shape[a]
    if count == 0:
        return None
    share = ast.BinOp(left=call.args[0], op=ast.Div(), right=ast.Constant(count))
    spread = ast.Call(func=call.func, args=[share, *call.args[1:]], keywords=call.keywords)
    return _unreduce(spread, known)


class _Specialize(Transformer):
    def __init__(self, known: Known) -> None:
        self.known = known

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = dotted_text(node.func)
        if func == "rt.unreduce":
            return _unreduce(node, self.known) or node
        if func == "rt.mean_vjp":
            return _mean_vjp(node, self.known) or node
        if (
            func == "rt.unbroadcast"
            and len(node.args) == 2
            and all(isinstance(a, ast.Name) and a.id in self.known for a in node.args)
        ):
            g, x = node.args
            assert isinstance(g, ast.Name) and isinstance(x, ast.Name)
            return unbroadcast(g, self.known[g.id][0], self.known[x.id][0], self.known) or node
        return node


def specialize(node: ast.AST, known: Known) -> ast.AST:
    """``node`` with the runtime helpers whose shapes ``known`` decides written out."""
    if not known:
        return node
    return _Specialize(known).visit(node)  # type: ignore[no-any-return]
