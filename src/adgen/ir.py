"""The three-address intermediate representation.

Every statement applies one primitive to *atoms* (names or constants) and binds
one new name (or a tuple of names). Control flow stays structured: an
:class:`If`, :class:`For` or :class:`While` holds blocks of statements, never
jumps. Every statement remembers the line of the user's source it came from.

Atoms:

* :class:`Var`   -- a local name of the function (parameters and temporaries);
* :class:`Const` -- a literal Python value (number, string, ``None``, ``...``);
* :class:`Free`  -- a value from outside the function (a module global, a
  closure cell), looked up by name in the namespace of the generated code;
* :class:`Tup`   -- a tuple of atoms, e.g. ``(n, 3)`` or an index ``[i, j]``;
* :class:`Slc`   -- a slice ``a:b:c`` of atoms (only inside an index).

The text form (``str()``) is Python-like, one statement a line, with the
source line it came from:

>>> import numpy as np
>>> from adgen.rules import lookup
>>> stmt = Assign(("y",), lookup(np.sin), (Var("x"),), (), line=2)
>>> print(format_stmt(stmt))
y = np.sin(x)
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from adgen.errors import SourceLocation, place
from adgen.pyast import dotted
from adgen.rules.namespace import TEMPLATE_GLOBALS

if TYPE_CHECKING:
    from adgen.rules.registry import Primitive


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Const:
    value: Any


@dataclass(frozen=True)
class Free:
    name: str


@dataclass(frozen=True)
class Tup:
    items: tuple[Atom, ...]
    # what the program has there, where lowering knows it: "tuple", "list" ("" unknown); not
    # part of the atom's value (equal atoms of either kind are the same items)
    kind: str = field(default="", compare=False, repr=False)


@dataclass(frozen=True)
class Dct:
    """A dict with string keys known when the function is transformed (a tree argument)."""

    keys: tuple[str, ...]
    values: tuple[Atom, ...]


@dataclass(frozen=True)
class Slc:
    lower: Atom
    upper: Atom
    step: Atom


Atom = Var | Const | Free | Tup | Slc | Dct


@dataclass
class Assign:
    """``targets = prim(*args, **kwargs)``; more than one target unpacks a tuple result."""

    targets: tuple[str, ...]
    prim: Primitive
    args: tuple[Atom, ...]
    kwargs: tuple[tuple[str, Atom], ...]
    line: int


@dataclass
class Return:
    value: Atom
    line: int


@dataclass
class If:
    test: Atom
    body: list[Stmt]
    orelse: list[Stmt]
    line: int


@dataclass
class For:
    target: str
    iter: Atom
    body: list[Stmt]
    line: int
    # ``for i in adgen.checkpoint(range(n), every=k):``: reverse mode recomputes the loop
    # segment by segment from snapshots instead of saving every iteration (``every``: k)
    checkpoint: bool = False
    every: Atom | None = None


@dataclass
class While:
    test_body: list[Stmt]
    test: Atom
    body: list[Stmt]
    line: int


Stmt = Assign | Return | If | For | While


@dataclass
class Function:
    """A lowered function: parameters, body, and where it came from."""

    name: str
    params: list[str]
    body: list[Stmt]
    filename: str
    firstlineno: int
    source_lines: Mapping[int, str]
    free: dict[str, Any] = field(default_factory=dict)
    user_names: set[str] = field(default_factory=set)
    # outside values that were Python numbers at transform time (they never broadcast)
    scalars: set[str] = field(default_factory=set)
    # lines of inlined functions have keys of their own: how to show them, where they are
    labels: dict[int, str] = field(default_factory=dict)
    origins: dict[int, SourceLocation] = field(default_factory=dict)

    def statements(self) -> Iterator[Stmt]:
        """All statements, depth first, in source order."""
        yield from _walk(self.body)

    def location(self, label: str) -> SourceLocation | None:
        """The user's line a generated comment's label (``# line 12: ...`` of the function
        itself, ``# line 3 of helper: ...`` of an inlined one) stands for, if known.

        >>> f = Function("f", [], [], "f.py", 1, {1: "    y = 2 * x"})
        >>> f.location("1").col, f.location("2 of g")
        (4, None)
        """
        if label.isdigit():
            line = int(label)
            raw = self.source_lines.get(line, "")
            return SourceLocation(self.filename, line, len(raw) - len(raw.lstrip()), raw)
        for key, known in self.labels.items():
            if known == label:
                return self.origins[key]
        return None

    def outside(self, name: str) -> Any:
        """The value the outside name of a :class:`Free` atom stands for (``KeyError`` if
        none): one the function read (``self.free``), or a module attribute spelled through
        the alias generated code uses (``np.pi``, ``math.inf``, ``np.linalg.X``), which
        lowering names by its dotted path and does not store.

        >>> import numpy as np
        >>> Function("f", [], [], "<f>", 1, {}, free={"C": 2.0}).outside("np.pi") == np.pi
        True
        """
        if name in self.free:
            return self.free[name]
        root, *path = name.split(".")
        if not path or root not in TEMPLATE_GLOBALS:
            raise KeyError(name)
        value = TEMPLATE_GLOBALS[root]
        for attr in path:
            try:
                value = getattr(value, attr)
            except AttributeError:
                raise KeyError(name) from None
        return value

    def namespace(self) -> dict[str, Any]:
        """What the function's atoms name, for evaluating its statements at transform time:
        the module aliases, the outside values, and each dotted outside name (``np.pi``) under
        that name -- the key a compiled ``Name`` node of it looks up."""
        out = {**TEMPLATE_GLOBALS, **self.free}
        for stmt in self.statements():
            for atom in stmt_atoms(stmt):
                for free in free_names(atom):
                    if free not in out:
                        with contextlib.suppress(KeyError):  # (then evaluating it fails)
                            out[free] = self.outside(free)
        return out

    def __str__(self) -> str:
        return format_function(self)


def map_assigns(block: list[Stmt], change: Callable[[Assign], Assign]) -> list[Stmt]:
    """A copy of ``block`` with every assignment, at any depth, replaced by
    ``change(assignment)`` (in the order the statements are written); the branches and
    loops holding them are new statements, the others are shared."""
    out: list[Stmt] = []
    for s in block:
        if isinstance(s, Assign):
            s = change(s)
        elif isinstance(s, If):
            s = replace(s, body=map_assigns(s.body, change), orelse=map_assigns(s.orelse, change))
        elif isinstance(s, For):
            s = replace(s, body=map_assigns(s.body, change))
        elif isinstance(s, While):
            s = replace(
                s, test_body=map_assigns(s.test_body, change), body=map_assigns(s.body, change)
            )
        out.append(s)
    return out


def _walk(block: list[Stmt]) -> Iterator[Stmt]:
    for stmt in block:
        yield stmt
        if isinstance(stmt, If):
            yield from _walk(stmt.body)
            yield from _walk(stmt.orelse)
        elif isinstance(stmt, For):
            yield from _walk(stmt.body)
        elif isinstance(stmt, While):
            yield from _walk(stmt.test_body)
            yield from _walk(stmt.body)


def events(block: list[Stmt]) -> list[tuple[str, str, Stmt]]:
    """``(kind, name, statement)`` in execution order: every name a statement reads
    (``"read"``) or binds (``"bind"``), a loop's target included."""
    out: list[tuple[str, str, Stmt]] = []
    for stmt in block:
        if isinstance(stmt, Assign):
            for atom in stmt_args(stmt):
                out.extend(("read", v, stmt) for v in atom_vars(atom))
            out.extend(("bind", t, stmt) for t in stmt.targets)
        elif isinstance(stmt, Return):
            out.extend(("read", v, stmt) for v in atom_vars(stmt.value))
        elif isinstance(stmt, If):
            out.extend(("read", v, stmt) for v in atom_vars(stmt.test))
            out.extend(events(stmt.body))
            out.extend(events(stmt.orelse))
        elif isinstance(stmt, For):
            out.extend(("read", v, stmt) for v in atom_vars(stmt.iter))
            if stmt.every is not None:
                out.extend(("read", v, stmt) for v in atom_vars(stmt.every))
            out.append(("bind", stmt.target, stmt))
            out.extend(events(stmt.body))
        elif isinstance(stmt, While):
            out.extend(events(stmt.test_body))
            out.extend(("read", v, stmt) for v in atom_vars(stmt.test))
            out.extend(events(stmt.body))
    return out


def binding_counts(fn: Function) -> dict[str, int]:
    """How many statements bind each name (parameters count once, loop targets too)."""
    counts = {p: 1 for p in fn.params}
    for kind, name, _ in events(fn.body):
        if kind == "bind":
            counts[name] = counts.get(name, 0) + 1
    return counts


def atom_vars(atom: Atom) -> Iterator[str]:
    """The local names an atom reads."""
    if isinstance(atom, Var):
        yield atom.name
    elif isinstance(atom, Tup):
        for item in atom.items:
            yield from atom_vars(item)
    elif isinstance(atom, Slc):
        for part in (atom.lower, atom.upper, atom.step):
            yield from atom_vars(part)
    elif isinstance(atom, Dct):
        for value in atom.values:
            yield from atom_vars(value)


def free_names(atom: Atom) -> Iterator[str]:
    """The outside names an atom reads."""
    if isinstance(atom, Free):
        yield atom.name
    elif isinstance(atom, Tup):
        for item in atom.items:
            yield from free_names(item)
    elif isinstance(atom, Slc):
        for part in (atom.lower, atom.upper, atom.step):
            yield from free_names(part)
    elif isinstance(atom, Dct):
        for value in atom.values:
            yield from free_names(value)


def stmt_atoms(stmt: Stmt) -> Iterator[Atom]:
    """The atoms a statement reads itself (not those of the blocks it holds)."""
    if isinstance(stmt, Assign):
        yield from stmt_args(stmt)
    elif isinstance(stmt, (Return, If, While)):
        yield stmt.value if isinstance(stmt, Return) else stmt.test
    elif isinstance(stmt, For):
        yield stmt.iter
        if stmt.every is not None:
            yield stmt.every


def restores(stmt: Assign) -> bool:
    """Is this ``v = xs.pop()`` one of reverse mode's restores (``xs`` holds saved values: the
    pop puts back a value ``v`` had)? Lowering marks them (see
    :func:`adgen.backend.compile.load`)."""
    return stmt.prim.name == "pop" and any(k == "restores" for k, _ in stmt.kwargs)


def restoring_lists(fn: Function) -> tuple[str, ...]:
    """The lists the restoring pops of ``fn`` take from, in order of first use."""
    lists = [s.targets[0] for s in fn.statements() if isinstance(s, Assign) and restores(s)]
    return tuple(dict.fromkeys(lists))


def stmt_args(stmt: Assign) -> Iterator[Atom]:
    yield from stmt.args
    for _, value in stmt.kwargs:
        yield value


def atom_to_ast(atom: Atom) -> ast.expr:
    """The Python expression for an atom."""
    if isinstance(atom, (Var, Free)):
        return ast.Name(id=atom.name, ctx=ast.Load())
    if isinstance(atom, Const):
        return const_to_ast(atom.value)
    if isinstance(atom, Tup):
        items = [atom_to_ast(a) for a in atom.items]
        if atom.kind == "list":  # as the program wrote it (Dask's np.take wants a list)
            return ast.List(elts=items, ctx=ast.Load())
        return ast.Tuple(elts=items, ctx=ast.Load())
    if isinstance(atom, Dct):
        keys: list[ast.expr | None] = [ast.Constant(value=k) for k in atom.keys]
        return ast.Dict(keys=keys, values=[atom_to_ast(a) for a in atom.values])
    if isinstance(atom, Slc):
        parts = [
            None if _is_none(p) else atom_to_ast(p) for p in (atom.lower, atom.upper, atom.step)
        ]
        return ast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
    raise TypeError(f"not an atom: {atom!r}")


def _is_none(atom: Atom) -> bool:
    return isinstance(atom, Const) and atom.value is None


def const_to_ast(value: Any) -> ast.expr:
    if isinstance(value, tuple):
        return ast.Tuple(elts=[const_to_ast(v) for v in value], ctx=ast.Load())
    if isinstance(value, slice):
        return atom_to_ast(Slc(Const(value.start), Const(value.stop), Const(value.step)))
    if isinstance(value, float) and value != value:
        return ast.parse("float('nan')", mode="eval").body
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return ast.parse(f"float('{value}')", mode="eval").body
    if isinstance(value, (int, float, complex, str, bool, bytes)) or value is None or value is ...:
        return ast.Constant(value=value)
    raise TypeError(f"cannot write {value!r} as a constant")


def primal_expr(stmt: Assign) -> ast.expr:
    """The right-hand side of an assignment: the primitive applied to its atoms (and, for a
    function returning a list of one result, ``np.split(x, 1)``, that list's item, which the
    statement's one target stands for)."""
    expr = stmt.prim.emit(
        [atom_to_ast(a) for a in stmt.args], [(k, atom_to_ast(v)) for k, v in stmt.kwargs]
    )
    if stmt.prim.result_list and len(stmt.targets) == 1:
        return ast.Subscript(value=expr, slice=ast.Constant(value=0), ctx=ast.Load())
    return expr


def check_to_ast(stmt: Assign) -> ast.stmt:
    """A check (the primitive ``assert``): the user's ``assert test``, or adgen's, which runs
    under ``python -O`` too -- a refusal decided when the code runs, or an error Python
    would raise running the code as written.

    >>> from adgen.rules import registry
    >>> words = (("what", Const("in-place update of `z`")), ("hint", Const("copy z")))
    >>> print(ast.unparse(check_to_ast(Assign((), registry.ASSERT, (Var("ok"),), words, 3))))
    rt.refuse_unless(ok, 'in-place update of `z`', 'copy z')
    >>> error = (("error", Const("too many values to unpack")),)
    >>> print(ast.unparse(check_to_ast(Assign((), registry.ASSERT, (Var("ok"),), error, 3))))
    rt.expect(ok, 'too many values to unpack')
    >>> print(ast.unparse(check_to_ast(Assign((), registry.ASSERT, (Var("ok"),), (), 3))))
    assert ok
    """
    test = atom_to_ast(stmt.args[0])
    words = dict(stmt.kwargs)
    what, hint, error = words.get("what"), words.get("hint"), words.get("error")
    if isinstance(what, Const):
        hint_text = hint.value if isinstance(hint, Const) else ""
        args = [test, ast.Constant(what.value), ast.Constant(hint_text)]
        kind = words.get("kind")
        if isinstance(kind, Const):
            args.append(ast.Constant(kind.value))
        call = ast.Call(func=dotted("rt.refuse_unless"), args=args, keywords=[])
    elif isinstance(error, Const):
        args = [test, ast.Constant(error.value)]
        call = ast.Call(func=dotted("rt.expect"), args=args, keywords=[])
    else:
        return ast.Assert(test=test, msg=None)
    return ast.Expr(value=call)


def stmt_to_ast(stmt: Stmt) -> ast.stmt:
    """The primal Python statement (control-flow blocks without their bodies)."""
    if isinstance(stmt, Assign):
        if stmt.prim.name == "assert":
            return check_to_ast(stmt)
        if stmt.prim.name == "raise":  # copied as written (a path that raises)
            exc = primal_expr(stmt)
            if stmt.prim.raise_cause and isinstance(exc, ast.Tuple):
                return ast.Raise(exc=exc.elts[0], cause=exc.elts[1])
            return ast.Raise(exc=exc, cause=None)
        if stmt.prim.name == "append":  # xs.append(v), in place
            method = ast.Attribute(value=atom_to_ast(stmt.args[0]), attr="append", ctx=ast.Load())
            return ast.Expr(
                value=ast.Call(func=method, args=[atom_to_ast(stmt.args[1])], keywords=[])
            )
        if stmt.prim.name == "pop":  # v = xs.pop(), in place
            method = ast.Attribute(value=atom_to_ast(stmt.args[0]), attr="pop", ctx=ast.Load())
            return assign(stmt.targets[1], ast.Call(func=method, args=[], keywords=[]))
        if stmt.prim.name == "setitem":  # y[index] = v, written in place
            base, index, value = (atom_to_ast(a) for a in stmt.args)
            target = ast.Subscript(value=base, slice=index, ctx=ast.Store())
            return ast.Assign(targets=[target], value=value, lineno=0)
        return assign(stmt.targets, primal_expr(stmt))
    if isinstance(stmt, Return):
        return ast.Return(value=atom_to_ast(stmt.value))
    raise TypeError(f"no single-line form for {type(stmt).__name__}")


def assign(targets: tuple[str, ...] | str, value: ast.expr) -> ast.Assign:
    if isinstance(targets, str):
        targets = (targets,)
    if len(targets) == 1:
        target: ast.expr = ast.Name(id=targets[0], ctx=ast.Store())
    else:
        target = ast.Tuple(elts=[ast.Name(id=t, ctx=ast.Store()) for t in targets], ctx=ast.Store())
    return ast.Assign(targets=[target], value=value, lineno=0)


def format_stmt(stmt: Stmt) -> str:
    return ast.unparse(ast.fix_missing_locations(stmt_to_ast(stmt)))


def format_block(block: list[Stmt], indent: str, out: list[tuple[str, int]]) -> None:
    for stmt in block:
        if isinstance(stmt, (Assign, Return)):
            out.append((indent + format_stmt(stmt), stmt.line))
        elif isinstance(stmt, If):
            out.append((f"{indent}if {ast.unparse(atom_to_ast(stmt.test))}:", stmt.line))
            format_block(stmt.body or [], indent + "    ", out)
            if stmt.orelse:
                out.append((f"{indent}else:", stmt.line))
                format_block(stmt.orelse, indent + "    ", out)
        elif isinstance(stmt, For):
            it = ast.unparse(atom_to_ast(stmt.iter))
            out.append((f"{indent}for {stmt.target} in {it}:", stmt.line))
            format_block(stmt.body, indent + "    ", out)
        elif isinstance(stmt, While):
            out.append((f"{indent}while True:", stmt.line))
            format_block(stmt.test_body, indent + "    ", out)
            test = ast.unparse(atom_to_ast(stmt.test))
            out.append((f"{indent}    if not {test}: break", stmt.line))
            format_block(stmt.body, indent + "    ", out)


def format_function(fn: Function, values: dict[str, Any] | None = None) -> str:
    """The listing of a function: one statement a line, with its source line number.

    With ``values`` (name -> value), each binding also shows the value computed,
    like the evaluation traces of the AD survey.
    """
    rows: list[tuple[str, int]] = []
    format_block(fn.body, "    ", rows)
    header = f"def {fn.name}({', '.join(fn.params)}):"
    width = max([len(header)] + [len(text) for text, _ in rows]) + 2
    lines = [f"{header:<{width}}# {place(fn.filename, fn.firstlineno)}"]
    if values is not None:
        for p in fn.params:
            if p in values:
                lines.append(f"    {p} = {_show(values[p])}")
    for text, line in rows:
        note = f"# line {fn.labels.get(line, line)}"
        if values is not None:
            name = text.strip().split(" = ")[0]
            if name in values and " = " in text:
                note += f"  ->  {_show(values[name])}"
        lines.append(f"{text:<{width}}{note}")
    return "\n".join(lines)


def _show(value: Any) -> str:
    import numpy as np

    if isinstance(value, np.ndarray) and value.ndim > 0:
        if value.size <= 6:
            return np.array2string(value, precision=4, separator=", ")
        return f"array(shape={value.shape}, dtype={value.dtype})"
    if isinstance(value, (float, np.floating)):
        text = f"{float(value):.6g}"
        # a float reads as one (2.0, not 2)
        return text if any(c in text for c in ".einf") else text + ".0"
    return repr(value)
