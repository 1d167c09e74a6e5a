"""Sum an adjoint's contributions before the linear maps that make them.

The adjoint of a small array broadcast against a large one is the large cotangent summed
over the broadcast axes. When that sum is all that is read of an adjoint ``A``, and each
contribution to ``A`` is a linear map that commutes with the sum (``G @ M`` summed over
the rows of ``G``, ``H * c`` with ``c`` the same along the summed axes), this pass sums
each contribution's full-size operand instead, so the full ``A`` is never made.
:func:`sum_before_linear` shows it, source in and source out.

It needs the shapes of code specialised for its arguments: reverse mode runs it on such
code only, after :mod:`adgen.backend.codeopt.batch_saves` and before
:mod:`adgen.backend.codeopt.fuse_temporaries` (it matches each contribution as the sweep writes
it, one operation on names).
"""

from __future__ import annotations

import ast
from typing import Any

from adgen.backend.codeopt.common import _names
from adgen.pyast import unparse


def sum_before_linear(source: str, shapes: dict[str, tuple[int, ...]]) -> str:
    """Sum an adjoint's contributions before the linear maps that make them, when the sum
    is all that is read of it (code specialised for shapes: ``shapes`` holds what is known).

    ``A = G @ M`` and ``A = A + H * c``, with ``A`` read only by its sum over axis ``k``
    (as :func:`adgen.rules.known.sum_to` writes it, keeping ``k`` with size 1): when
    ``c`` does not vary along ``k`` and ``k`` is the rows axis of ``G``, the sum of each
    contribution is the contribution of the sum (``sum_k(G @ M) = sum_k(G) @ M``,
    ``sum_k(H * c) = sum_k(H) * c``), so the full ``A`` is never made -- the adjoint of
    a small array broadcast against a large one (GMM's means against the points) costs
    one reduction of the large cotangent. Sums in another order: derivatives agree up to
    rounding.

    >>> print(sum_before_linear(
    ...     "def f_vjp(g, h, m, c, out_bar):\\n"
    ...     "    a_bar = g @ m\\n"
    ...     "    a_bar = a_bar + h * c\\n"
    ...     "    b_bar = -np.reshape(np.einsum('abc->ac', a_bar), (2, 1, 3))\\n"
    ...     "    return (b_bar,)\\n",
    ...     {"a_bar": (2, 5, 3), "g": (2, 5, 3), "h": (2, 5, 3), "c": (2, 1, 3), "m": (3, 3)},
    ... ), end="")
    def f_vjp(g, h, m, c, out_bar):
        a_bar = np.reshape(np.einsum('abc->ac', g), (2, 1, 3)) @ m
        a_bar = a_bar + np.reshape(np.einsum('abc->ac', h), (2, 1, 3)) * c
        b_bar = -a_bar
        return (b_bar,)
    """
    if "np.einsum(" not in source and ".sum(" not in source:
        return source
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return source
    fn = tree.body[0]
    reads: dict[str, int] = {}
    binds: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            table = reads if isinstance(node.ctx, ast.Load) else binds
            table[node.id] = table.get(node.id, 0) + 1
    changed: list[ast.stmt] = []
    before: dict[int, list[ast.stmt]] = {}  # lines to put before a statement
    body = fn.body
    for k, stmt in enumerate(body):
        found = _reduced_sum(stmt, shapes)
        if found is None:
            continue
        name_, axes, call = found
        shape = shapes.get(name_)
        if shape is None or not axes or reads.get(name_) != binds.get(name_):
            continue  # read only by the contributions `A = A + E` and this sum
        contributions = [s for s in body[:k] if _binds_name(s, name_)]
        if len(contributions) != binds.get(name_) or not contributions:
            continue
        plans = [
            _linear_share(s, name_, i == 0, axes, shape, shapes)
            for i, s in enumerate(contributions)
        ]
        if any(p is None for p in plans):
            continue
        users: dict[str, list[int]] = {}
        for i, plan in enumerate(plans):
            assert plan is not None
            users.setdefault(plan[0], []).append(i)
        for full, indices in users.items():
            call_ = _sum_call(full, axes, shape)
            first, last = contributions[indices[0]], contributions[indices[-1]]
            between = body[body.index(first) : body.index(last)]
            if len(indices) > 1 and not any(_binds_name(s, full) for s in between):
                # one sum for several contributions: computed before the first
                fresh = f"{full}_summed"
                while fresh in reads or fresh in binds:
                    fresh += "_"
                binds[fresh] = 1
                line = ast.Assign(targets=[ast.Name(id=fresh, ctx=ast.Store())], value=call_)
                before.setdefault(id(first), []).append(ast.fix_missing_locations(line))
                for i in indices:
                    plans[i][1](ast.Name(id=fresh, ctx=ast.Load()))  # type: ignore[index]
            else:
                for i in indices:
                    plans[i][1](_sum_call(full, axes, shape))  # type: ignore[index]
        changed.extend(contributions)
        _replace_call(stmt, call, ast.Name(id=name_, ctx=ast.Load()))
        changed.append(stmt)
    if not changed:
        return source
    lines = source.split("\n")
    for stmt in sorted(changed, key=lambda s: s.lineno, reverse=True):
        indent = " " * stmt.col_offset
        new = [indent + text for s in before.get(id(stmt), []) for text in unparse(s).splitlines()]
        new += [indent + text for text in unparse(stmt).splitlines()]
        lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno] = new
    return "\n".join(lines)


def _sum_call(name_: str, axes: tuple[int, ...], shape: tuple[int, ...]) -> ast.expr:
    """``name_`` (of ``shape``) summed over ``axes``, keeping them (with size 1)."""
    from adgen.rules.known import sum_to

    target = tuple(1 if i in axes else n for i, n in enumerate(shape))
    return sum_to(ast.Name(id=name_, ctx=ast.Load()), shape, target)


def _reduced_sum(
    stmt: ast.stmt, shapes: dict[str, tuple[int, ...]]
) -> tuple[str, tuple[int, ...], ast.Call] | None:
    """``b = [-]np.reshape(np.einsum('abc->ac', A), (n, 1, m))`` or ``b = [-]A.sum(axis=(0,
    2), keepdims=True)`` (:func:`adgen.rules.known.sum_to`'s forms), a sum over axes kept
    with size 1: (A, the axes, the call)."""
    if not isinstance(stmt, ast.Assign):
        return None
    value = stmt.value
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        value = value.operand
    own = _own_sum(value, shapes)
    if own is not None:
        return own
    if not (
        isinstance(value, ast.Call)
        and ast.unparse(value.func) == "np.reshape"
        and len(value.args) == 2
        and isinstance(value.args[0], ast.Call)
        and ast.unparse(value.args[0].func) == "np.einsum"
        and len(value.args[0].args) == 2
        and isinstance(value.args[0].args[0], ast.Constant)
        and isinstance(value.args[0].args[1], ast.Name)
    ):
        return None
    spec, operand = value.args[0].args[0].value, value.args[0].args[1].id
    shape = shapes.get(operand)
    if not isinstance(spec, str) or "->" not in spec or shape is None:
        return None
    letters, kept = spec.split("->")
    axes = tuple(i for i, c in enumerate(letters) if c not in kept)
    try:
        target = ast.literal_eval(value.args[1])
    except ValueError:
        return None
    if len(letters) != len(shape) or target != tuple(
        1 if i in axes else n for i, n in enumerate(shape)
    ):
        return None
    return operand, axes, value


def _own_sum(
    value: ast.expr, shapes: dict[str, tuple[int, ...]]
) -> tuple[str, tuple[int, ...], ast.Call] | None:
    """``A.sum(axis=..., keepdims=True)`` of a name of known shape: (A, the axes, the call)."""
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "sum"
        and isinstance(value.func.value, ast.Name)
        and not value.args
        and sorted(k.arg or "" for k in value.keywords) == ["axis", "keepdims"]
    ):
        return None
    shape = shapes.get(value.func.value.id)
    try:
        options = {k.arg: ast.literal_eval(k.value) for k in value.keywords}
    except ValueError:
        return None
    axis = options["axis"]
    axes = axis if isinstance(axis, tuple) else (axis,)
    if shape is None or options["keepdims"] is not True:
        return None
    if not all(type(a) is int and 0 <= a < len(shape) for a in axes):
        return None
    return value.func.value.id, tuple(sorted(axes)), value


def _binds_name(stmt: ast.stmt, name_: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name_ and not isinstance(n.ctx, ast.Load)
        for n in ast.walk(stmt)
    )


def _linear_share(
    stmt: ast.stmt,
    name_: str,
    first: bool,
    axes: tuple[int, ...],
    shape: tuple[int, ...],
    shapes: dict[str, tuple[int, ...]],
) -> Any:
    """For ``A = E`` (first) or ``A = A + E`` (or ``- E``): the name of ``E``'s full-size
    operand and a function putting its sum in its place; None when the sum does not pass
    through ``E``."""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id == name_
    ):
        return None
    holder: Any = stmt
    field = "value"
    expr = stmt.value
    if not first:
        if not (
            isinstance(expr, ast.BinOp)
            and isinstance(expr.op, (ast.Add, ast.Sub))
            and isinstance(expr.left, ast.Name)
            and expr.left.id == name_
        ):
            return None
        holder, field, expr = expr, "right", expr.right
    if not isinstance(expr, ast.BinOp) or not isinstance(expr.op, (ast.Mult, ast.MatMult)):
        return None
    left, right = expr.left, expr.right
    if any(name_ in _names(side) for side in (left, right)):
        return None
    full: ast.expr
    if isinstance(expr.op, ast.MatMult):
        # sum over the rows of the left operand passes through `left @ right`
        if not (
            isinstance(left, ast.Name)
            and shapes.get(left.id) == shape
            and len(shape) >= 2
            and axes == (len(shape) - 2,)
        ):
            return None
        full, side = left, "left"
    else:
        full, other = (
            (left, right)
            if isinstance(left, ast.Name) and shapes.get(left.id) == shape
            else (right, left)
        )
        if not (isinstance(full, ast.Name) and shapes.get(full.id) == shape):
            return None
        if isinstance(other, ast.Constant) and type(other.value) in (int, float):
            small: tuple[int, ...] = ()  # a number: the same along every axis
        elif isinstance(other, ast.Name) and other.id in shapes:
            small = shapes[other.id]
        else:
            return None
        lead = len(shape) - len(small)
        if lead < 0 or any(a >= lead and small[a - lead] != 1 for a in axes):
            return None
        side = "left" if full is left else "right"

    def rewrite(replacement: ast.expr) -> None:
        setattr(expr, side, replacement)
        setattr(holder, field, expr)

    return full.id, rewrite


def _replace_call(stmt: ast.stmt, call: ast.Call, new: ast.expr) -> None:
    assert isinstance(stmt, ast.Assign)
    if stmt.value is call:
        stmt.value = new
    else:
        assert isinstance(stmt.value, ast.UnaryOp)
        stmt.value.operand = new
