"""A ``try`` whose ``except`` goes on, as a test and the paths it chooses, before a function is
lowered (issue 34, part 3).

``try: L = np.linalg.cholesky(K) except LinAlgError: return -np.inf``: which path runs is
decided only when the code runs. adgen's IR has no exceptions, so the ``try`` becomes an
``if`` on what a *probe* found: a function adgen compiles from the ``try`` as written, run as
written first, which runs the body and says which ``except`` would catch what it raised (0:
none did, the body ran to its end). Then the path taken is differentiated as any branch::

    tried = probe(K)               # run as written: 0, or the number of the handler
    if tried == 0:
        L = np.linalg.cholesky(K)  # (and the ``else:`` block)
    else:
        return -np.inf

The body runs twice (in the probe and on its path), so it must give the same result both
times and change nothing: only assignments to names, tests and loops of them, with no
in-place write, no call of a method that changes its object (``append``, ``pop``...), no
random draw, no call as a statement (``print``...). A ``try`` with another body, or whose
handler reads the exception (``except AttributeError as e: if "..." in str(e): ...``) reads
the one the probe caught (``e = _adgen_caught_1()``, run as written: an outside value).

>>> import gast
>>> tree = gast.parse('''
... def f(K, n):
...     try:
...         L = np.linalg.cholesky(K * n)
...     except np.linalg.LinAlgError:
...         return -1.0
...     return L[0, 0]
... ''')
>>> fn = tree.body[0]
>>> made = Attempts(fn, {}.__getitem__).rewrite(fn.body[0])
>>> print("\\n".join(gast.unparse(s).strip() for s in made))  # doctest: +NORMALIZE_WHITESPACE
_adgen_tried_1 = _adgen_probe_1(K, n)
if _adgen_tried_1 == 0:
    L = np.linalg.cholesky(K * n)
else:
    return -1.0
>>> print(fn.adgen_probes["_adgen_probe_1"].source)  # doctest: +NORMALIZE_WHITESPACE
def _adgen_probe_1(K, n):
    try:
        L = np.linalg.cholesky(K * n)
    except np.linalg.LinAlgError as _adgen_caught:
        return 1, _adgen_caught
    return 0, None
"""

from __future__ import annotations

import ast
import copy
import threading
from collections.abc import Callable
from typing import Any

import gast

# methods that change the object they are called on (a probe would change it once more)
_MUTATORS = frozenset(
    "append extend insert pop remove clear sort reverse update setdefault popitem add discard "
    "fill put resize itemset setflags partition shuffle".split()
)
# names of random draws (a probe would draw other numbers than the path it chooses)
_RANDOM = frozenset(
    "random rand randn randint random_sample normal uniform integers choice permutation "
    "standard_normal exponential gamma beta binomial poisson multivariate_normal seed".split()
)


class Probe:
    """A ``try`` as written, run to find which of its ``except`` clauses the body's exception
    (if any) reaches: 0 for none, ``k`` for the ``k``-th. An object (not a function), so that
    derivative code read again runs it as written too; it only reads its arguments."""

    adgen_reads_only = True
    # a tuple or list it is given (a container argument) is passed as a tuple: the body,
    # which only binds names and computes, reads either alike
    adgen_any_sequence = True

    def __init__(self, name: str, source: str, namespace: dict[str, Any]) -> None:
        self.__name__ = name
        self.source = source
        code = compile(source, f"<adgen {name}>", "exec")
        exec(code, namespace)  # noqa: S102 -- the program's own statements, as written
        self.run = namespace[name]
        self.state = threading.local()  # (what this thread's last run caught)

    def __call__(self, *args: Any) -> int:
        tried, self.state.caught = self.run(*args)
        return int(tried)


class Caught:
    """The exception the last run of a :class:`Probe` caught in this thread (None if none):
    ``e`` of ``except AttributeError as e:``, read on the path the probe chose."""

    adgen_reads_only = True

    def __init__(self, name: str, probe: Probe) -> None:
        self.__name__ = name
        self.probe = probe

    def __call__(self) -> Any:
        return getattr(self.probe.state, "caught", None)


class _Namespace(dict):  # type: ignore[type-arg]
    """The probe's globals: the function's outside names, looked up when the probe runs."""

    def __init__(self, lookup: Callable[[str], Any]) -> None:
        super().__init__()
        self.lookup = lookup

    def __missing__(self, key: str) -> Any:
        try:
            return self.lookup(key)
        except KeyError:
            raise NameError(f"name {key!r} is not defined") from None


def _pure(stmts: list[Any]) -> bool:
    """Could these statements run twice with the same effect as once (they bind names and
    compute: nothing written in place, no mutating method, no random draw, no call made
    for its effect)?"""
    for node in (n for s in stmts for n in gast.walk(s)):
        if isinstance(node, (gast.FunctionDef, gast.Lambda, gast.ClassDef, gast.Try)):
            return False
        if isinstance(node, (gast.AugAssign, gast.Delete, gast.With, gast.Global)):
            return False
        if isinstance(node, (gast.Nonlocal, gast.Yield, gast.YieldFrom)):
            return False
        if isinstance(node, gast.Expr) and not isinstance(node.value, gast.Constant):
            return False
        if isinstance(node, gast.Assign) and not all(
            isinstance(n, (gast.Name, gast.Tuple, gast.List)) and _names_only(n)
            for n in node.targets
        ):
            return False
        if isinstance(node, gast.Attribute) and (node.attr in _MUTATORS or node.attr in _RANDOM):
            return False
    return True


def _drop_causes(stmts: list[Any], name: str) -> None:
    """``raise ValueError(...) from e`` in a handler, where ``e`` is the exception caught, as
    ``raise ValueError(...)``: the path raises the same error (adgen shows the program's own
    when the derivative raises, :func:`adgen.api._run`); the cause only chains the report."""
    for node in (n for s in stmts for n in gast.walk(s)):
        if (
            isinstance(node, gast.Raise)
            and isinstance(node.cause, gast.Name)
            and node.cause.id == name
        ):
            node.cause = None


def _names_only(target: Any) -> bool:
    if isinstance(target, gast.Name):
        return True
    return isinstance(target, (gast.Tuple, gast.List)) and all(_names_only(e) for e in target.elts)


def _ran() -> ast.Return:
    """``return 0, None``: the probe's body ran to an end (no handler, no exception)."""
    return ast.Return(value=ast.Tuple(elts=[ast.Constant(0), ast.Constant(None)], ctx=ast.Load()))


class _Leave(ast.NodeTransformer):
    """The body as the probe runs it: a ``return`` evaluates its value and ends the body
    (0: it ran, nothing caught), so do a ``break`` and a ``continue`` of the loop around the
    ``try``."""

    def __init__(self) -> None:
        self.loops = 0

    def visit_Return(self, node: ast.Return) -> Any:
        done = _ran()
        if node.value is None:
            return done
        keep = ast.Assign(targets=[ast.Name(id="_adgen_value", ctx=ast.Store())], value=node.value)
        return [keep, done]

    def visit_Break(self, node: ast.Break) -> Any:
        return node if self.loops else _ran()

    def visit_Continue(self, node: ast.Continue) -> Any:
        return node if self.loops else _ran()

    def _loop(self, node: Any) -> Any:
        self.loops += 1
        self.generic_visit(node)
        self.loops -= 1
        return node

    visit_For = visit_While = _loop


class Attempts:
    """The ``try`` statements of one function made tests of probes (:meth:`rewrite`); the
    probes are kept on the function's node (``adgen_probes``), where lowering finds them."""

    def __init__(self, fn: Any, lookup: Callable[[str], Any]) -> None:
        self.fn = fn
        self.lookup = lookup
        self.probes: dict[str, Probe | Caught] = getattr(fn, "adgen_probes", {})
        fn.adgen_probes = self.probes
        args = fn.args
        self.params = [a.id for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
        self.params += [a.id for a in (args.vararg, args.kwarg) if a is not None]

    def _bound_before(self, stmt: Any) -> set[str]:
        """Names the function binds in statements that start before ``stmt``."""
        line = getattr(stmt, "lineno", 0)
        return {
            n.id
            for n in gast.walk(self.fn)
            if isinstance(n, gast.Name)
            and not isinstance(n.ctx, gast.Load)
            and getattr(n, "lineno", line) < line
        }

    def rewrite(self, stmt: Any) -> list[Any] | None:
        """``stmt`` (a ``try`` whose handlers go on) as the probe's test and the ``if`` on it;
        None where it cannot be (see the module's doc)."""
        body = [*stmt.body, *stmt.orelse]
        if not stmt.handlers or not _pure(stmt.body) or stmt.finalbody:
            return None
        reading = []  # the handlers that read the exception they catch
        for handler in stmt.handlers:
            if handler.name is not None:
                _drop_causes(handler.body, handler.name.id)
            reading.append(
                handler.name is not None
                and any(
                    isinstance(n, gast.Name) and n.id == handler.name.id
                    for s in handler.body
                    for n in gast.walk(s)
                )
            )
        known = set(self.params) | self._bound_before(stmt)
        read: list[str] = []
        for n in (n for s in stmt.body for n in gast.walk(s)):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in known:
                if n.id not in read:
                    read.append(n.id)
        number = len(self.probes) + 1
        probe, tried = f"_adgen_probe_{number}", f"_adgen_tried_{number}"
        leave = _Leave()
        lines = []
        for s in stmt.body:
            made = leave.visit(gast.gast_to_ast(copy.deepcopy(s)))
            for part in made if isinstance(made, list) else [made]:
                ast.fix_missing_locations(part)
                lines.append(ast.unparse(part))
        text = "\n".join("        " + line for chunk in lines for line in chunk.splitlines())
        source = f"def {probe}({', '.join(read)}):\n    try:\n{text}\n"
        for k, handler in enumerate(stmt.handlers, 1):
            caught = "Exception"
            if handler.type is not None:
                caught = ast.unparse(gast.gast_to_ast(copy.deepcopy(handler.type)))
            source += f"    except {caught} as _adgen_caught:\n        return {k}, _adgen_caught\n"
        source += "    return 0, None\n"
        made = self.probes[probe] = Probe(probe, source, _Namespace(self.lookup))
        reader = f"_adgen_caught_{number}"
        if any(reading):
            self.probes[reader] = Caught(reader, made)

        def at(node: Any) -> Any:
            return gast.copy_location(node, stmt)

        def load(name: str) -> Any:
            return at(gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None))

        call = at(gast.Call(func=load(probe), args=[load(n) for n in read], keywords=[]))
        target = at(gast.Name(id=tried, ctx=gast.Store(), annotation=None, type_comment=None))
        first = at(gast.Assign(targets=[target], value=call, type_comment=None))

        def test(k: int) -> Any:
            number = at(gast.Constant(value=k, kind=None))
            return at(gast.Compare(left=load(tried), ops=[gast.Eq()], comparators=[number]))

        def handled(k: int) -> list[Any]:  # the k-th handler's path (its exception bound)
            handler = stmt.handlers[k - 1]
            if not reading[k - 1]:
                return list(handler.body)
            name = at(
                gast.Name(id=handler.name.id, ctx=gast.Store(), annotation=None, type_comment=None)
            )
            value = at(gast.Call(func=load(reader), args=[], keywords=[]))
            return [at(gast.Assign(targets=[name], value=value, type_comment=None)), *handler.body]

        paths: list[Any] = handled(len(stmt.handlers))
        for k in range(len(stmt.handlers) - 1, 0, -1):
            paths = [at(gast.If(test=test(k), body=handled(k), orelse=paths))]
        branch = at(gast.If(test=test(0), body=body, orelse=paths))
        for node in gast.walk(branch):  # (the new nodes have the try's place)
            if not hasattr(node, "lineno") and isinstance(node, (gast.expr, gast.stmt)):
                gast.copy_location(node, stmt)
        return [first, branch]
