"""Standalone derivative modules: generated code written to a file that needs only NumPy.

A module written by ``python -m adgen FILE --output DIR`` or by :func:`export`
holds one derivative function (``loss_vjp``, ``loss_jvp``) and starts with a
docstring saying what it is and a header importing ``math``, ``numpy as np``
and ``adgen_runtime as rt``. ``adgen_runtime.py`` -- the modules of
:mod:`adgen.rules.runtime`, which import nothing but NumPy, copied into one file
(:func:`runtime_source`) -- is written next to it, so the directory runs on a
machine where adgen is not installed. Outside values the derivative reads
(module-level constants, closure values) are written into the module as Python
literals; anything that has no literal (an array, an object) is refused rather
than pickled.

>>> print(value_source(0.1), value_source((2, "a", None)), value_source(float("-inf")))
0.1 (2, 'a', None) -math.inf
>>> value_source(object()) is None
True

Files are written atomically: into a temporary file of the same directory,
then moved into place with :func:`os.replace`, so a reader never sees half a
module and a failed write leaves nothing behind.
"""

from __future__ import annotations

import ast
import builtins
import copy
import math
import os
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from adgen.backend.diskcache import write_atomic
from adgen.errors import AdgenError, InternalError
from adgen.generated import Generated
from adgen.rules import runtime
from adgen.version import __version__

__all__ = [
    "RUNTIME_MODULE",
    "definitions",
    "module_source",
    "needed_imports",
    "runtime_source",
    "typed_results",
    "value_source",
]

#: The name the runtime helpers are written under (``DIR/adgen_runtime.py``).
RUNTIME_MODULE = "adgen_runtime"

_MODE_TEXT = {
    "reverse": "reverse-mode derivative (vector-Jacobian product)",
    "forward": "forward-mode derivative (Jacobian-vector product)",
}


# -- values --------------------------------------------------------------------------------------
def value_source(value: Any) -> str | None:
    """Python source that evaluates to ``value`` in a generated module, or None if it has none.

    Numbers (also NumPy scalars), strings, bytes, None, and tuples, lists and
    dicts of those are written as literals; ``inf``/``nan`` as ``math.inf``/
    ``math.nan``; NumPy and ``math`` types and functions by their name
    (``np.float32``). Arrays, sets and other objects give None.
    """
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "math.nan"
        if math.isinf(value):
            return "math.inf" if value > 0 else "-math.inf"
        return repr(value)
    if isinstance(value, complex):
        return f"complex({value_source(value.real)}, {value_source(value.imag)})"
    if isinstance(value, np.generic) and not isinstance(value, np.ndarray):
        kind = type(value).__name__
        item = value.item()
        inner = value_source(item) if isinstance(item, (bool, int, float, complex)) else None
        if inner is None or getattr(np, kind, None) is not type(value):
            return None
        return f"np.{kind}({inner})"
    if isinstance(value, (tuple, list)):
        items = [value_source(v) for v in value]
        if any(item is None for item in items):
            return None
        if isinstance(value, list):
            return "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"  # type: ignore[arg-type]
    if isinstance(value, dict):
        pairs = [(value_source(k), value_source(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    name = getattr(value, "__name__", None)
    if isinstance(name, str) and not isinstance(value, np.ndarray):
        for alias, module in (("np", np), ("math", math)):
            if getattr(module, name, None) is value:
                return f"{alias}.{name}"
    return None


def is_builtin(name: str, value: Any) -> bool:
    """``name`` is the builtin ``value`` (``float`` as in ``x.astype(float)``): no definition."""
    return hasattr(builtins, name) and getattr(builtins, name) is value


# -- the module ----------------------------------------------------------------------------------
_RUNTIME_DOC = (
    "adgen's runtime helpers: what the derivative modules next to this file call ``rt.<name>``.\n\n"
    "Written by adgen.export from the modules of the package ``adgen.rules.runtime``, one\n"
    "after the other (each under its name), so that this file needs only NumPy. Do not edit.\n"
)


def runtime_source() -> str:
    """adgen's runtime helpers as one module (``adgen_runtime.py``): the modules of
    :mod:`adgen.rules.runtime` one after the other (each after those it imports from),
    under one header of their imports (NumPy and the standard library) and the package's
    ``__all__``. The names they take from each other (``from .core import unbroadcast``)
    are then one namespace.

    >>> text = runtime_source()
    >>> "def unbroadcast(" in text, "from .core" in text, "import adgen" in text
    (True, False, False)
    """
    package = Path(runtime.__file__).parent
    init_text = (package / "__init__.py").read_text(encoding="utf-8")
    init = ast.parse(init_text)
    names = [n.module for n in init.body if isinstance(n, ast.ImportFrom) and n.level == 1]
    modules = {name: _RuntimeModule(name, package / f"{name}.py") for name in names if name}
    wanted = {need for m in modules.values() for need in m.needs} - set(modules)
    while wanted:  # a module only other modules import from (.libraries)
        name = wanted.pop()
        modules[name] = _RuntimeModule(name, package / f"{name}.py")
        wanted |= modules[name].needs - set(modules)
    ordered: list[_RuntimeModule] = []
    while len(ordered) < len(modules):  # each module after those it imports from
        ready = [
            m for m in modules.values() if m not in ordered and m.needs <= {o.name for o in ordered}
        ]
        if not ready:
            raise InternalError("the modules of adgen.rules.runtime import each other in a cycle")
        ordered.append(ready[0])
    defined: dict[str, str] = {}
    for module in ordered:
        for name in module.defines:
            if name in defined:
                raise InternalError(
                    f"adgen.rules.runtime.{module.name} and .{defined[name]} both define "
                    f"{name}: one file cannot hold both"
                )
            defined[name] = module.name
    standard = sys.stdlib_module_names
    groups: list[list[str]] = [[], []]  # the standard library's, then NumPy's
    for name in sorted({line for m in ordered for line in m.plain}):
        groups[name.split(".")[0] not in standard].append(f"import {name}")
    froms: dict[str, set[str]] = {}
    for m in ordered:
        for name, imported in m.froms.items():
            froms.setdefault(name, set()).update(imported)
    for name, imported in sorted(froms.items()):
        groups[name.split(".")[0] not in standard].append(
            f"from {name} import {', '.join(sorted(imported))}"
        )
    header = "\n\n".join("\n".join(group) for group in groups if group)
    exported = next(
        ast.get_source_segment(init_text, n)
        for n in init.body
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "__all__"
    )
    head = f'"""{_RUNTIME_DOC}"""\n\nfrom __future__ import annotations\n\n{header}\n\n{exported}\n'
    return "\n\n".join([head, *(m.section() for m in ordered)])


class _RuntimeModule:
    """One module of :mod:`adgen.rules.runtime` as :func:`runtime_source` copies it: its
    imports (at its top: the docstring and those are left out) and the rest of its text."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.text = path.read_text(encoding="utf-8")
        tree = ast.parse(self.text)
        self.doc = (ast.get_docstring(tree) or "").split("\n")[0]
        self.plain: set[str] = set()  # `import x [as y]`
        self.froms: dict[str, set[str]] = {}  # `from x import a, b`
        self.needs: set[str] = set()  # the modules of the package it imports from
        self.start = 0  # the line its code starts after
        for node in tree.body:
            if isinstance(node, ast.Import):
                self.plain.update(
                    f"{a.name} as {a.asname}" if a.asname else a.name for a in node.names
                )
            elif isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                self.needs.add(node.module)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module != "__future__":
                    self.froms.setdefault(node.module, set()).update(a.name for a in node.names)
            elif not (node is tree.body[0] and isinstance(node, ast.Expr)):  # the docstring
                break
            self.start = node.end_lineno or self.start
        for part in ast.walk(tree):  # what one file cannot hold: adgen, relative imports
            if isinstance(part, ast.Import):
                bad = next((a.name for a in part.names if a.name.split(".")[0] == "adgen"), None)
            elif isinstance(part, ast.ImportFrom):
                module = "." * part.level + (part.module or "")
                top = part.level == 1 and part.module is not None and part.lineno <= self.start
                bad = module if module.split(".")[0] == "adgen" or part.level and not top else None
            else:
                continue
            if bad is not None:
                raise InternalError(f"adgen.rules.runtime.{name} imports {bad}: cannot copy it")
        self.defines: list[str] = []  # the names it defines at its top level
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node]
            for target in targets:
                if isinstance(target, ast.Name):
                    self.defines.append(target.id)
                elif isinstance(target, (ast.FunctionDef, ast.ClassDef)):
                    self.defines.append(target.name)

    def section(self) -> str:
        code = "".join(self.text.splitlines(keepends=True)[self.start :]).strip("\n")
        return f"# {'=' * 30} adgen.rules.runtime.{self.name}\n# {self.doc}\n\n\n{code}\n"


# Modules generated code may name beyond math, np and rt, and how a module imports them:
# rules for SciPy are spelled ``scipy.special.gammaln(x)``, ``scipy.stats.norm.logpdf(x)``
# (when SciPy is installed).
_OPTIONAL_IMPORTS = {
    "scipy.special": ("import scipy.special", "SciPy"),
    "scipy.stats": ("import scipy.stats", "SciPy"),
}


def needed_imports(source: str) -> list[tuple[str, str]]:
    """The ``(import statement, package)`` of each optional module ``source`` names.

    >>> needed_imports("out = scipy.special.psi(x)")
    [('import scipy.special', 'SciPy')]
    >>> needed_imports("out = scipy.stats.norm.pdf(x) * scipy.special.psi(x)")
    [('import scipy.special', 'SciPy'), ('import scipy.stats', 'SciPy')]
    >>> needed_imports("out = np.sin(x)")
    []
    """
    paths = {
        f"{n.value.id}.{n.attr}"
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }
    return [_OPTIONAL_IMPORTS[path] for path in sorted(paths) if path in _OPTIONAL_IMPORTS]


def _own_nodes(fdef: ast.FunctionDef) -> list[ast.AST]:
    """The nodes of ``fdef``'s body, not those of functions defined inside it."""
    nodes: list[ast.AST] = []
    todo: list[ast.AST] = list(fdef.body)
    while todo:
        node = todo.pop()
        nodes.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return nodes


def _simple(node: ast.expr) -> bool:
    """A value that may be written twice: a name, a constant, a tuple of those."""
    if isinstance(node, ast.Tuple):
        return all(_simple(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.operand, ast.Constant)
    return isinstance(node, (ast.Name, ast.Constant))


def _cast(g: ast.expr, like: ast.expr) -> ast.expr:
    """``rt.cast_like(g, like)`` (pairwise for tuples written out)."""
    if isinstance(g, ast.Tuple) and isinstance(like, ast.Tuple) and len(g.elts) == len(like.elts):
        return ast.Tuple(elts=[_cast(a, b) for a, b in zip(g.elts, like.elts)], ctx=ast.Load())
    func = ast.Attribute(value=ast.Name(id="rt", ctx=ast.Load()), attr="cast_like", ctx=ast.Load())
    return ast.Call(func=func, args=[g, copy.deepcopy(like)], keywords=[])


def typed_results(gen: Generated, mode: str, wrt: Sequence[str]) -> str:
    """``gen``'s source, its results returned as adgen's API returns them
    (:func:`adgen.runtime.cast_like`): each gradient of reverse mode like its argument (a
    Python float for a Python float, an array of its shape and dtype for an array), the
    tangent of forward mode like the value. The value is the function's own.

    >>> gen = Generated("f_vjp", ["x", "y", "out_bar"],
    ...     "def f_vjp(x, y, out_bar):\\n    out = x * y\\n    return (out, (out_bar * y,))\\n")
    >>> print(typed_results(gen, "reverse", ["x"]), end="")
    def f_vjp(x, y, out_bar):
        out = x * y
        return (out, (rt.cast_like(out_bar * y, x),))
    """
    tree = ast.parse(gen.source)
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == gen.name]
    if len(found) != 1:
        raise InternalError(f"the generated code defines no function {gen.name}")
    fdef = found[0]
    own = _own_nodes(fdef)
    taken = {n.id for n in own if isinstance(n, ast.Name)} | set(gen.params)
    lines = gen.source.splitlines(keepends=True)
    first = fdef.body[0].lineno - 1  # where the body starts (comments above it belong to it)
    while first > fdef.lineno and lines[first - 1].strip().startswith("#"):
        first -= 1
    # arguments the code binds again (a loop's `h = ...`) or deletes are kept under a name
    # of their own at the start, so the results are cast like the arguments as given
    rebound = {
        n.id for n in own if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    }
    given: dict[str, str] = {}
    for name in wrt:
        given[name] = name
        if name in rebound:
            alias, k = f"{name}_arg", 1
            while alias in taken:
                alias, k = f"{name}_arg_{k}", k + 1
            taken.add(alias)
            given[name] = alias
    returns = sorted(
        (n for n in own if isinstance(n, ast.Return)), key=lambda n: n.lineno, reverse=True
    )
    for ret in returns:
        value = ret.value
        if not isinstance(value, ast.Tuple) or len(value.elts) != 2:
            raise InternalError(f"{gen.name} returns something other than a pair")
        result, derivatives = value.elts
        indent = " " * ret.col_offset
        before: list[str] = []
        if mode == "reverse":
            if not isinstance(derivatives, ast.Tuple) or len(derivatives.elts) != len(wrt):
                raise InternalError(f"{gen.name} returns other than one gradient per argument")
            derivatives.elts = [
                _cast(g, ast.Name(id=given[name], ctx=ast.Load()))
                for g, name in zip(derivatives.elts, wrt)
            ]
        else:
            if not _simple(result):  # written once, read twice
                name, k = "value", 1
                while name in taken:
                    name, k = f"value_{k}", k + 1
                taken.add(name)
                before.append(f"{indent}{name} = {ast.unparse(result)}\n")
                result = ast.Name(id=name, ctx=ast.Load())
                value.elts[0] = result
            value.elts[1] = _cast(derivatives, result)
        assert ret.end_lineno is not None
        text = before + [f"{indent}{ast.unparse(ast.Return(value=value))}\n"]
        lines[ret.lineno - 1 : ret.end_lineno] = text
    inner = " " * fdef.body[0].col_offset
    keep = [f"{inner}{alias} = {name}\n" for name, alias in given.items() if alias != name]
    if keep:
        comment = f"{inner}# the arguments as given (the code below binds them again)\n"
        lines[first:first] = [comment, *keep]
    return "".join(lines)


def _docstring_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def module_source(
    gen: Generated,
    primal: str,
    params: Sequence[str],
    mode: str,
    wrt: Sequence[str],
    origin: str,
    definitions: Iterable[tuple[str, str]],
    regenerate: str,
) -> str:
    """The text of a standalone module holding the generated function ``gen``.

    ``primal`` and ``params`` are the differentiated function's name and
    parameters, ``origin`` is where it was defined (``model.py:12``),
    ``definitions`` the ``(name, source)`` of each outside value the code reads,
    and ``regenerate`` says how to write the module again.
    """

    call = f"{gen.name}({', '.join(gen.params)})"
    value = f"{primal}({', '.join(params)})"
    if mode == "reverse":
        returns = (
            f"{call} returns ({value}, grads): the value, and a tuple with out_bar times "
            f"the derivative of {primal} w.r.t. each of {', '.join(wrt)}, of the type, shape "
            "and dtype of that argument (a Python float for a Python float), as adgen returns "
            "it."
        )
    else:
        tangents = ", ".join(gen.params[len(params) :])
        returns = (
            f"{call} returns ({value}, tangent): the value, and its derivative in the "
            f"direction {tangents}, of the type, shape and dtype of the value, as adgen "
            "returns it."
        )
    extra = needed_imports(gen.source)
    needs = " and ".join(["NumPy", *dict.fromkeys(package for _, package in extra)])
    doc = (
        f"{gen.name}: {_MODE_TEXT[mode]} of `{primal}` w.r.t. {', '.join(wrt)}.\n\n"
        f"{textwrap.fill(returns, 88)}\n\n"
        f"Generated by adgen {__version__} from {origin}. Do not edit: {regenerate}\n"
        f"Needs only {needs}, and {RUNTIME_MODULE}.py (adgen's runtime helpers, written next "
        "to this file).\n"
    )
    third_party = "".join(f"{statement}\n" for statement, _ in extra)
    parts = [
        f'"""{_docstring_text(doc)}"""\n',
        f"import math\n\nimport numpy as np\n{third_party}\nimport adgen_runtime as rt\n",
        f'__all__ = ["{gen.name}"]\n',
    ]
    defs = list(definitions)
    if defs:
        lines = [f"# values {primal} reads from outside the function, as adgen found them"]
        lines += [f"{name} = {source}" for name, source in defs]
        parts.append("\n".join(lines) + "\n")
    parts.append("\n" + typed_results(gen, mode, wrt).rstrip("\n") + "\n")
    return "\n".join(parts)


# -- writing -------------------------------------------------------------------------------------
def write_modules(directory: str, modules: Sequence[tuple[str, str]]) -> list[str]:
    """Write ``(file name, text)`` pairs and the runtime into ``directory``; the paths written.

    Raises :class:`~adgen.errors.AdgenError` when the directory cannot be made
    or written.
    """
    runtime_text = runtime_source()
    try:
        os.makedirs(directory, exist_ok=True)
        written = []
        for filename, text in [*modules, (f"{RUNTIME_MODULE}.py", runtime_text)]:
            path = os.path.join(directory, filename)
            write_atomic(path, text)
            written.append(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        where = exc.filename if isinstance(exc.filename, str) else directory
        raise AdgenError(f"{where}: cannot write the module ({reason})") from None
    return written


# -- live functions ------------------------------------------------------------------------------
def definitions(
    free: dict[str, Any], refuse: Callable[[str, Any], AdgenError]
) -> list[tuple[str, str]]:
    out = []
    for name, value in free.items():
        if "." in name or is_builtin(name, value):
            continue
        source = value_source(value)
        if source is None:
            raise refuse(name, value)
        out.append((name, source))
    return out
