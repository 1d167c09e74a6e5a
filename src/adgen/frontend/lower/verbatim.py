# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower code no derivative passes through as the program writes it: ``raise`` statements,
string formatting (f-strings, ``"%d" % n``, ``"{}".format(n)``) and sets.

Such code is copied into the generated code, each name it reads written as the IR atom it
means there (an inlined helper's ``n`` may be ``helper_n_2``; a global gets the name the
generated code gives it), and the names bound inside it (a comprehension's, a lambda's)
left alone. A path that raises needs no derivative: ``raise`` ends it as ``return`` does
(:func:`adgen.frontend.lower.statements._always_returns`), and is never refused. A string
made from a differentiated value is a constant of the derivative; it is refused only where
such a value reaches something that needs its derivative (:mod:`adgen.middle.analysis`), as
for a call run as written.
"""

from __future__ import annotations

import ast
import copy
import types
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import gast

from adgen import ir
from adgen.errors import (
    AdgenError,
    NonDifferentiableError,
    NoRuleError,
    UnsupportedSyntaxError,
)
from adgen.frontend.lower.objects import (
    LocalDerivative,
    LocalFunction,
    LocalInstance,
    LocalPartial,
    LocalPullback,
    StaticSeq,
)
from adgen.frontend.lower.state import LowererState
from adgen.rules import namespace, registry

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer

_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)


def is_formatting(node: Any) -> bool:
    """Is ``node`` string formatting: an f-string, ``"..." % v`` or ``"...".format(...)``?"""
    if isinstance(node, gast.JoinedStr):
        return True
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mod):
        return isinstance(node.left, gast.Constant) and isinstance(node.left.value, str)
    return (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, gast.Constant)
        and isinstance(node.func.value.value, str)
    )


def free_loads(node: Any, bound: frozenset[str] = frozenset()) -> Iterator[gast.Name]:
    """The names ``node`` reads from the code around it, each ``Name`` node in order: not
    those a lambda or a comprehension inside it binds (its first ``for``'s iterable is read
    outside, as Python does).

    >>> tree = gast.parse('f"{n}: {[k * s for k in ks]} {(lambda v: v + w)(1)}"')
    >>> [n.id for n in free_loads(tree.body[0].value)]
    ['n', 'ks', 's', 'w']
    """
    if isinstance(node, gast.Name):
        if isinstance(node.ctx, gast.Load) and node.id not in bound:
            yield node
        return
    if isinstance(node, gast.Lambda):
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]:
            yield from free_loads(default, bound)
        params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        params += [a for a in (node.args.vararg, node.args.kwarg) if a is not None]
        yield from free_loads(node.body, bound | {a.id for a in params})
        return
    if isinstance(node, _SCOPES):
        inner = bound
        for k, gen in enumerate(node.generators):
            yield from free_loads(gen.iter, bound if k == 0 else inner)
            inner = inner | {n.id for n in gast.walk(gen.target) if isinstance(n, gast.Name)}
            for cond in gen.ifs:
                yield from free_loads(cond, inner)
        parts = [node.key, node.value] if isinstance(node, gast.DictComp) else [node.elt]
        for part in parts:
            yield from free_loads(part, inner)
        return
    for child in gast.iter_child_nodes(node):
        yield from free_loads(child, bound)


class VerbatimMixin(LowererState):
    """``raise`` and string formatting, copied as written."""

    def template(self: Lowerer, node: Any) -> tuple[ast.expr, list[ir.Atom], bool]:
        """``node`` as a template of :func:`adgen.rules.registry.as_written`: the ``k``-th name
        it reads written ``__adgen_k``, the atoms those names mean here, and whether every
        call it makes is known only to read its arguments."""
        loads = list(free_loads(node))
        order: list[str] = []
        for n in loads:
            if n.id not in order:
                order.append(n.id)
        atoms = [self.name_as_written(n) for n in {n.id: n for n in loads}.values()]
        modules = dict(namespace.spelling_modules())
        values = [
            self.free.get(a.name, modules.get(a.name)) if isinstance(a, ir.Free) else None
            for a in atoms
        ]
        reads_only = all(
            _reads_only(call, dict(zip(order, values)))
            for call in gast.walk(node)
            if isinstance(call, gast.Call)
        )
        saved = [n.id for n in loads]
        try:
            for n in loads:
                n.id = f"__adgen_{order.index(n.id)}"
            tree = gast.gast_to_ast(node)
        finally:
            for n, name in zip(loads, saved):
                n.id = name
        return tree, atoms, reads_only

    def name_as_written(self: Lowerer, node: gast.Name) -> ir.Atom:
        """What the name ``node`` means in code copied as written: a local's atom, or the
        object a global, a function or an object passed to the function is."""
        if node.id in self.env or node.id in self.deleted:
            return self.name(node)
        local = self.local_functions.get(node.id)
        made_here = (LocalFunction, LocalDerivative, LocalPullback, LocalPartial, LocalInstance)
        if isinstance(local, (*made_here, StaticSeq)):
            self.refuse(
                node,
                f"reading `{node.id}` (a function or an object made inside the function) in "
                "code adgen copies as written",
                "read the values you need into names first",
            )
        if local is not None:
            return self.value_atom(local, node.id)
        if self.enclosing is not None and self.enclosing.sees(node.id):
            return self.enclosing.name_as_written(node)
        value = self.imported[node.id] if node.id in self.imported else self.resolve(node)
        alias = namespace.module_alias(value)
        if alias is not None:  # `np`, as the generated code names NumPy
            return self.free_atom(alias, value)
        name = self.free_name(node.id, value)
        self.free[name] = value
        return self.free_atom(name, value)

    def lower_raise(self: Lowerer, stmt: Any) -> None:
        """``raise E`` (``raise E from C``): copied as written; the path ends there."""
        if stmt.exc is None:
            self.refuse(stmt, "a bare `raise`", "raise an exception of your own here")
        node = stmt.exc
        if stmt.cause is not None:
            node = gast.Tuple(elts=[stmt.exc, stmt.cause], ctx=gast.Load())
        template, atoms, _ = self.template(node)
        prim = registry.raising(template, stmt.cause is not None)
        self.block.append(ir.Assign((), prim, tuple(atoms), (), self.line))

    def raise_as_written(self: Lowerer, node: Any, kind: type[Exception], message: str) -> None:
        """``raise kind(message)`` where ``node`` would raise it when it runs (an import
        that fails): the path ends there, as in Python."""
        made = ast.Call(func=ast.Name(id=kind.__name__, ctx=ast.Load()), args=[], keywords=[])
        made.args.append(ast.Constant(message))
        self.line = self.parsed.line(node)
        self.block.append(ir.Assign((), registry.raising(made, False), (), (), self.line))

    def attribute_as_written(
        self: Lowerer,
        node: gast.Attribute,
        value: ir.Var,
        made: registry.Primitive,
        target: str | None,
        hint: str,
    ) -> ir.Atom:
        """``obj.attr`` of an object a call run as written made (``np.finfo(t).eps``,
        ``rng.bit_generator``): read as written, a constant of the derivative."""
        template = ast.Attribute(
            value=ast.Name(id="__adgen_0", ctx=ast.Load()), attr=node.attr, ctx=ast.Load()
        )
        refusal = UnsupportedSyntaxError(
            f"adgen does not support the attribute `.{node.attr}` of a value made by "
            f"`{made.name}` (run as written) where a differentiated value reaches it",
            self.parsed.loc(node),
            "compute it from values you do not differentiate",
        )
        prim = registry.as_written(template, f".{node.attr}", refusal)
        return self.emit(target, hint, prim, [value], [], node)

    def comprehension_or_as_written(
        self: Lowerer, node: gast.ListComp, target: str | None, hint: str
    ) -> ir.Atom:
        """``[v for v in vars(est) if v.endswith("_")]``: lowered as a loop where adgen can
        (:meth:`comprehension`); else copied as written, its result a constant of the
        derivative and what adgen said of it raised only where a differentiated value
        reaches it (as for a call run as written)."""
        original = copy.deepcopy(node)  # (lowering renames the comprehension's variables)
        kept = self.kept_state()
        try:
            return self.comprehension(node, target, hint)
        except (UnsupportedSyntaxError, NoRuleError, NonDifferentiableError) as exc:
            refusal = exc
        self.restore_state(kept)
        try:
            template, atoms, reads_only = self.template(original)
        except AdgenError:
            raise refusal from None
        prim = registry.as_written(template, "a list comprehension", refusal, reads_only)
        return self.emit(target, hint, prim, atoms, [], node)

    def set_as_written(self: Lowerer, node: Any, target: str | None, hint: str) -> ir.Atom:
        """A set display or comprehension (``{arg.shape for arg in arrays}``, ``mode in
        {"lower", "higher"}``): copied as written, a constant of the derivative (a set has
        no order, and no derivative passes through it), refused only where a differentiated
        value reaches something that needs its derivative."""
        label = "a set comprehension" if isinstance(node, gast.SetComp) else "a set display"
        refusal = UnsupportedSyntaxError(
            f"adgen does not support {label} of differentiated values where its result is "
            "differentiated",
            self.parsed.loc(node),
            "build a tuple or list of the values, or an array",
        )
        return self.copied(node, label, refusal, target, hint)

    def call_as_written(
        self: Lowerer, node: gast.Call, refusal: AdgenError, target: str | None, hint: str
    ) -> ir.Atom:
        """A call adgen cannot read (``np.broadcast_shapes(*shapes)`` of a sequence whose
        length is known only when the code runs): copied as written, its result a constant
        of the derivative, ``refusal`` raised where a differentiated value reaches it."""
        try:
            return self.copied(node, "a call", refusal, target, hint)
        except AdgenError:
            raise refusal from None

    def formatted(self: Lowerer, node: Any, target: str | None, hint: str) -> ir.Atom:
        """String formatting, copied as written: its result is a constant of the derivative."""
        label = "an f-string" if isinstance(node, gast.JoinedStr) else "string formatting"
        refusal = UnsupportedSyntaxError(
            f"adgen does not support {label} of a differentiated value where its result is "
            "differentiated",
            self.parsed.loc(node),
            "a string has no derivative: format values only to print or report them",
        )
        return self.copied(node, label, refusal, target, hint)

    def copied(
        self: Lowerer, node: Any, label: str, refusal: AdgenError, target: str | None, hint: str
    ) -> ir.Atom:
        """``node`` copied into the generated code as written (:meth:`template`), its value a
        constant of the derivative; ``refusal`` raised where a differentiated value reaches
        something that needs its derivative."""
        template, atoms, reads_only = self.template(node)
        prim = registry.as_written(template, label, refusal, reads_only)
        return self.emit(target, hint, prim, atoms, [], node)


def _reads_only(call: gast.Call, values: dict[str, Any]) -> bool:
    """Is ``call`` (in code copied as written) known never to write into its arguments: a
    function read only (``len``, ``np.min``) named by a global or a module's attribute, or a
    string's method (``", ".join``, or of a name the copied code binds itself)? ``values``:
    what each name it reads from the code around is (None: a local)."""
    func = call.func
    if (
        isinstance(func, gast.Attribute)
        and isinstance(func.value, gast.Constant)
        and isinstance(func.value.value, str)
    ) or (  # `v.endswith("_")` of `v` a comprehension binds (over `vars(estimator)`)
        isinstance(func, gast.Attribute)
        and isinstance(func.value, gast.Name)
        and func.value.id not in values
    ):
        return func.attr in registry.STRING_METHODS
    fn = None
    if isinstance(func, gast.Name):
        fn = values.get(func.id)
    elif isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name):
        owner = values.get(func.value.id)
        fn = getattr(owner, func.attr, None) if isinstance(owner, types.ModuleType) else None
    keywords = [k.arg or "**" for k in call.keywords]
    return fn is not None and registry.reads_only(fn, len(call.args), keywords)
