"""Open ``try`` and ``with`` blocks that only guard the code they hold, before a function is
lowered.

Library code wraps differentiated computations in blocks that change nothing a derivative
sees: a ``try`` whose every ``except`` raises again (a better message for bad input), a
``with np.errstate(divide="ignore")`` or ``warnings.catch_warnings()`` that only silences
warnings. Such a block's statements run as if it were not there, whenever the function
returns normally, so adgen reads them in its place (``try``: the body, then ``else``, then
``finally``). If the body raises when the derivative runs, the function itself raises there
too: adgen runs it again to show the program's own exception (:meth:`adgen.api` ``_run``).

A ``try`` with an ``except`` that goes on (which path runs is decided only when the code
runs) becomes the test of a probe and the paths it chooses (:mod:`.attempts`), where its
body can run twice; so does ``with contextlib.suppress(E):``, which is ``try: ... except E:
pass`` (``with suppress(ImportError): import pandas ...``, an optional package). Left as
written, and so refused by name when lowering: another ``try``, a ``finally`` that jumps, a
``with`` that binds a name or whose context changes more than warnings
(``np.errstate(all="raise")`` turns warnings into exceptions: adgen does not guess which).

>>> import gast
>>> tree = gast.parse('''
... def f(x):
...     try:
...         y = float(x)
...     except ValueError as e:
...         raise TypeError("not a number") from e
...     else:
...         y = y * 2
...     with np.errstate(divide="ignore"):
...         return np.log(y)
... ''')
>>> fn = tree.body[0]
>>> fn.body = _open_blocks(fn.body, lambda item: True, lambda stmt: False)
>>> print(gast.unparse(fn).strip())  # doctest: +NORMALIZE_WHITESPACE
def f(x):
    y = float(x)
    y = y * 2
    return np.log(y)
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable
from typing import Any

import gast

from adgen.frontend.lower.attempts import Attempts
from adgen.rules import registry


def _always_raises(stmts: list[Any]) -> bool:
    """Does running these statements always end in a ``raise``?"""
    for stmt in stmts:
        if isinstance(stmt, gast.Raise):
            return True
        if isinstance(stmt, gast.If) and _always_raises(stmt.body) and _always_raises(stmt.orelse):
            return True
    return False


def _jumps_out(stmts: list[Any]) -> bool:
    """Do these statements hold a ``return``, ``break`` or ``continue`` (not of a function or
    loop inside them)?"""
    todo = list(stmts)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (gast.Return, gast.Break, gast.Continue)):
            return True
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            todo.extend(getattr(stmt, field, None) or [])
        for handler in getattr(stmt, "handlers", None) or []:
            todo.extend(handler.body)
    return False


def _without_filters(stmts: list[Any], silences: Callable[[Any], bool]) -> list[Any]:
    """``stmts`` (a ``with`` block opened) without the statements that change how warnings
    show, those in the branches of an ``if`` included."""
    out = []
    for stmt in stmts:
        if silences(stmt):
            continue
        if isinstance(stmt, gast.If):
            stmt.body = _without_filters(stmt.body, silences) or [_pass(stmt)]
            stmt.orelse = _without_filters(stmt.orelse, silences)
        out.append(stmt)
    return out or [_pass(stmts[0])] if stmts else out


def _pass(where: Any) -> Any:
    return gast.copy_location(gast.Pass(), where)


def _open_blocks(
    stmts: list[Any],
    guards_only: Callable[[Any], bool],
    silences: Callable[[Any], bool],
    recover: Callable[[Any], list[Any] | None] = lambda stmt: None,
    suppressed: Callable[[Any], Any | None] = lambda stmt: None,
) -> list[Any]:
    """These statements with every ``try`` whose handlers all raise and every ``with`` whose
    items ``guards_only`` accepts (a ``with`` item that binds no name and only changes how
    warnings show) replaced by the statements they hold; ``silences(stmt)``: a statement
    inside such a ``with`` that only changes how warnings show (``warnings.simplefilter``),
    dropped with it (run as written it would change the caller's filters for good);
    ``recover(stmt)``: a ``try`` whose handlers go on, as statements adgen reads (the test of
    a probe and the paths it chooses: :mod:`.attempts`), or None; ``suppressed(stmt)``: a
    ``with`` as the ``try`` it means (``with contextlib.suppress(E): ...`` is ``try: ...
    except E: pass``), or None."""
    out: list[Any] = []
    again = (guards_only, silences, recover, suppressed)
    for stmt in stmts:
        tried = suppressed(stmt) if isinstance(stmt, gast.With) else None
        if tried is not None and not tried.handlers:  # (`suppress()`: catches nothing)
            out.extend(_open_blocks(tried.body, *again))
            continue
        if tried is not None:
            made = recover(tried)
            if made is not None:
                out.extend(_open_blocks(made, *again))
                continue
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt.body = _open_blocks(stmt.body, *again) or [_pass(stmt)]
            stmt.orelse = _open_blocks(stmt.orelse, *again)
        elif (
            isinstance(stmt, gast.Try)
            and all(_always_raises(h.body) for h in stmt.handlers)
            and not _jumps_out(stmt.finalbody)
        ):
            held = [*stmt.body, *stmt.orelse, *stmt.finalbody]
            out.extend(_open_blocks(held, *again))
            continue
        elif isinstance(stmt, gast.Try):
            made = recover(stmt)
            if made is not None:
                out.extend(_open_blocks(made, *again))
                continue
        elif isinstance(stmt, gast.With) and all(
            item.optional_vars is None and guards_only(item.context_expr) for item in stmt.items
        ):
            opened = _open_blocks(stmt.body, *again)
            out.extend(_without_filters(opened, silences))  # (in a `try` it held too)
            continue
        out.append(stmt)
    if stmts and not out:  # (every statement was a warning filter)
        out.append(_pass(stmts[0]))
    return out


def open_guarding_blocks(fn: Any, lookup: Callable[[str], Any]) -> None:
    """Open the guarding ``try`` and ``with`` blocks of the function ``fn`` (a gast
    ``FunctionDef``) in place; ``lookup(name)``: what a global or closure name of ``fn`` is
    (KeyError if none). A context is read only through names ``fn`` does not bind itself."""
    if not any(isinstance(n, (gast.Try, gast.With)) for n in gast.walk(fn)):
        return  # (nothing to open)
    local = {
        n.id for n in gast.walk(fn) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }
    # `from sklearn.callback import context` inside the function (an absolute import of a
    # module loaded already), where no other statement binds the name
    imported: dict[str, tuple[str, str]] = {}
    for n in gast.walk(fn):
        if isinstance(n, gast.ImportFrom) and n.module and not n.level:
            for alias in n.names:
                imported[alias.asname or alias.name] = (n.module, alias.name)
        elif isinstance(n, gast.Import):
            for alias in n.names:
                local.add((alias.asname or alias.name).split(".")[0])

    def resolved(node: Any) -> tuple[bool, Any]:
        if isinstance(node, gast.Name) and node.id in imported and node.id not in local:
            try:  # (the function imports it when it runs: a library's module)
                module = importlib.import_module(imported[node.id][0])
            except Exception:
                return False, None
            found = getattr(module, imported[node.id][1], None) if module is not None else None
            return found is not None, found
        if isinstance(node, gast.Name) and node.id not in local:
            try:
                return True, lookup(node.id)
            except KeyError:
                return False, None
        if isinstance(node, gast.Attribute):
            ok, base = resolved(node.value)
            if ok and isinstance(base, types.ModuleType) and hasattr(base, node.attr):
                return True, getattr(base, node.attr)
        return False, None

    # a context bound to a name first (`cm = np.errstate(...) if numpy else nullcontext()`,
    # then `with cm:`), where that binding is the name's only one and `with` its only read
    held = _held_contexts(fn)

    def guards_only(item: Any) -> bool:
        if isinstance(item, gast.Name) and item.id in held:
            value = held[item.id]
            if isinstance(value, gast.IfExp):
                return guards_only(value.body) and guards_only(value.orelse)
            return guards_only(value)
        if not isinstance(item, gast.Call) or any(kw.arg is None for kw in item.keywords):
            return False
        ok, fn_ = resolved(item.func)
        keywords = {
            kw.arg: kw.value.value if isinstance(kw.value, gast.Constant) else ...
            for kw in item.keywords
        }
        return ok and registry.guards_only(fn_, len(item.args), keywords)

    def silences(stmt: Any) -> bool:
        if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
            return False
        ok, fn_ = resolved(stmt.value.func)
        return ok and registry.silences(fn_)

    def suppressed(stmt: Any) -> Any | None:
        # `with contextlib.suppress(ImportError, AttributeError):` binding no name
        if len(stmt.items) != 1 or stmt.items[0].optional_vars is not None:
            return None
        item = stmt.items[0].context_expr
        if not isinstance(item, gast.Call) or item.keywords:
            return None
        if any(isinstance(a, gast.Starred) for a in item.args):
            return None
        ok, fn_ = resolved(item.func)
        if not (ok and registry.suppresses(fn_)):
            return None
        return _as_try(stmt, item.args)

    attempts = Attempts(fn, lookup).rewrite
    fn.body = _open_blocks(fn.body, guards_only, silences, attempts, suppressed)
    fn.body = [  # (a context no `with` reads any more: its binding goes too)
        s
        for s in fn.body
        if not (
            isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in held
            and not any(
                isinstance(n, gast.Name) and n.id == s.targets[0].id and n is not s.targets[0]
                for n in gast.walk(fn)
            )
        )
    ]


def _as_try(stmt: Any, caught: list[Any]) -> Any:
    """``with suppress(*caught): body`` as ``try: body except caught: pass`` (no handler
    where ``caught`` is empty: nothing is suppressed).

    >>> tree = gast.parse("with suppress(ImportError, KeyError):\\n    import pandas")
    >>> print(gast.unparse(_as_try(tree.body[0], tree.body[0].items[0].context_expr.args)))
    try:
        import pandas
    except (ImportError, KeyError):
        pass
    """
    handlers = []
    if caught:
        kind = caught[0] if len(caught) == 1 else gast.Tuple(elts=list(caught), ctx=gast.Load())
        handler = gast.ExceptHandler(type=kind, name=None, body=[_pass(stmt)])
        handlers.append(gast.copy_location(handler, stmt))
    made = gast.Try(body=stmt.body, handlers=handlers, orelse=[], finalbody=[])
    return gast.copy_location(made, stmt)


def _held_contexts(fn: Any) -> dict[str, Any]:
    """The names bound once, at the function's top level, to a call or a conditional
    expression of calls, read only as the context of ``with`` statements: name -> value."""
    stores: dict[str, int] = {}
    loads: dict[str, list[Any]] = {}
    parents = {id(c): n for n in gast.walk(fn) for c in gast.iter_child_nodes(n)}
    for n in gast.walk(fn):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            loads.setdefault(n.id, []).append(parents.get(id(n)))
    held = {}
    for stmt in fn.body:
        if not (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, (gast.Call, gast.IfExp))
        ):
            continue
        name = stmt.targets[0].id
        reads = loads.get(name, [])
        if stores.get(name) == 1 and reads and all(isinstance(p, gast.withitem) for p in reads):
            held[name] = stmt.value
    return held
