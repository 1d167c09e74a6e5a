"""Instantiate a rule's templates for one IR statement (shared by forward and reverse mode).

Also decides where broadcasting needs care: a cotangent is reduced to its
input's shape (``rt.unbroadcast``) and a tangent broadcast to the result's
shape (``np.broadcast_to``) only where another operand could broadcast it.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

from adgen import ir
from adgen.errors import AdgenError, NonDifferentiableError, NoRuleError, SourceLocation
from adgen.middle.shapes import Classes, atom_class
from adgen.names import Namer
from adgen.pyast import dotted_text
from adgen.rules import known
from adgen.rules.registry import Primitive, dotted


class StatementRule:
    """A statement's rule with the statement's atoms bound to the rule's parameters."""

    def __init__(
        self,
        stmt: ir.Assign,
        namer: Namer,
        loc: SourceLocation,
        known: dict[str, tuple[tuple[int, ...], str]] | None = None,
        scalars: Collection[str] = (),
    ) -> None:
        self.stmt = stmt
        # shapes and dtypes known before the code runs (a derivative specialised for a call)
        self.known = known or {}
        # names provably numbers (empty broadcast class): for rt.known_scalar in templates
        self.scalars = scalars
        self.prim: Primitive = stmt.prim
        self.namer = namer
        self.loc = loc
        bound = self.prim.bind(stmt.args, stmt.kwargs)
        self.atoms: dict[str, ir.Atom] = {
            **{k: ir.Const(v) for k, v in self.prim.defaults().items()},
            **bound,
        }
        self.bindings: dict[str, ast.expr] = {k: ir.atom_to_ast(a) for k, a in self.atoms.items()}
        if len(stmt.targets) == 1:
            self.bindings["ans"] = ast.Name(id=stmt.targets[0], ctx=ast.Load())
        elif self.prim.outputs is not None:  # several results: ans is their tuple
            self.bindings["ans"] = ast.Tuple(
                elts=[ast.Name(id=t, ctx=ast.Load()) for t in stmt.targets], ctx=ast.Load()
            )
        self.target = stmt.targets[0]

    @staticmethod
    def varied_inputs(stmt: ir.Assign, varied: set[str]) -> list[str]:
        """The variables in ``varied`` this statement reads (through any argument)."""
        return [v for atom in ir.stmt_args(stmt) for v in ir.atom_vars(atom) if v in varied]

    def active_params(self, active: set[str]) -> list[tuple[str, str]]:
        """(parameter, variable) for each differentiable parameter bound to an active variable."""
        out = []
        for p in self.prim.diff_params:
            if p in self.prim.zero_params:  # only a shape: no derivative flows through it
                continue
            atom = self.atoms.get(p)
            if isinstance(atom, ir.Var) and atom.name in active:
                out.append((p, atom.name))
        return out

    def sequence_elements(self, active: set[str]) -> list[tuple[int, str]]:
        """For a sequence rule: (position, variable) of each element that is differentiated."""
        seq = self.atoms.get(self.prim.sequence or "")
        if not isinstance(seq, ir.Tup):
            return []
        items = enumerate(seq.items)
        return [(k, a.name) for k, a in items if isinstance(a, ir.Var) and a.name in active]

    def sequence_tangents(self, tangent: dict[str, str], active: set[str]) -> ast.expr:
        """The tuple of the elements' tangents (zeros for the others)."""
        seq = self.atoms[self.prim.sequence or ""]
        assert isinstance(seq, ir.Tup)
        parts: list[ast.expr] = [
            name(tangent[a.name])
            if isinstance(a, ir.Var) and a.name in active
            else call("rt.zeros_like", ir.atom_to_ast(a))
            for a in seq.items
        ]
        return ast.Tuple(elts=parts, ctx=ast.Load())

    def refuse_nondifferentiable_inputs(self, active: set[str]) -> None:
        """A differentiated value reaching a parameter the rule cannot differentiate is an error."""
        for p in self.prim.params:
            atom = self.atoms.get(p.name)
            if p.name == self.prim.sequence and isinstance(atom, ir.Tup):
                nested = [a for a in atom.items if not isinstance(a, (ir.Var, ir.Const, ir.Free))]
                if any(v in active for a in nested for v in ir.atom_vars(a)):
                    raise NonDifferentiableError(
                        f"{self.prim.name} of nested sequences of differentiated values",
                        self.loc,
                        "build the rows first, then stack them: np.stack((row1, row2))",
                    )
                continue
            if p.name == self.prim.sequence and isinstance(atom, ir.Var):
                continue  # a list the function built: its derivative is a list too
            if atom is None or (p.name in self.prim.diff_params and not isinstance(atom, ir.Tup)):
                continue
            if p.name in self.prim.zero_params:
                continue  # its derivative is 0 (it gives a shape): any value may reach it
            if any(v in active for v in ir.atom_vars(atom)) and self.prim.name == "assign":
                # `pair = (a, b)` where `pair` keeps one name across an if/for/while block
                raise NonDifferentiableError(
                    "adgen does not differentiate a tuple of differentiated values bound to a "
                    "name that an if/for/while block (re)assigns",
                    self.loc,
                    "unpack it into separate names (`a, b = ...`), or build the tuple after "
                    "the block",
                )
            refused = self.prim.vjp.get(p.name)
            if (
                refused is not None
                and refused.refusal
                and any(v in active for v in ir.atom_vars(atom))
            ):  # (a helper whose derivative adgen refuses: registry.refused_derivative)
                what = refused.refusal
                if self.prim.name.startswith("rt."):  # (adgen's own helper: its reason says it)
                    raise NonDifferentiableError(f"adgen does not support {what}", self.loc)
                raise NonDifferentiableError(f"{self.prim.name}: {what}", self.loc)
            if any(v in active for v in ir.atom_vars(atom)):
                raise NonDifferentiableError(
                    f"adgen has no derivative of {self.prim.name} with respect to its argument "
                    f"`{p.name}`, which depends on a differentiated input",
                    self.loc,
                    "compute that argument from values you do not differentiate, or register "
                    "a rule that differentiates it (docs/rules.md)",
                )

    def _fresh(self, local: str) -> str:
        return self.namer.fresh(f"{self.target}_{local}")

    def expand(
        self, kind: str, param: str, seed: str | ast.expr
    ) -> tuple[list[ast.stmt], ast.expr]:
        template = (self.prim.jvp if kind == "jvp" else self.prim.vjp)[param]
        if template.refusal is not None:  # a user's rule defines the other mode only
            mode, other = ("forward", "reverse") if kind == "jvp" else ("reverse", "forward")
            opposite = (self.prim.vjp if kind == "jvp" else self.prim.jvp).get(param)
            works = opposite is not None and opposite.refusal is None
            raise NoRuleError(
                f"no {mode}-mode derivative of `{self.prim.name}`: {template.refusal}",
                self.loc,
                f"{other} mode works with the rule as it is" if works else "",
            )
        try:
            stmts, expr = template.expand(
                self.bindings, seed, self._fresh, self.known, self.scalars
            )
        except ValueError:
            raise AdgenError(
                f"{self.prim.name}: the derivative needs constant values for its arguments "
                f"({', '.join(p.name for p in self.prim.params if p.default is not p.empty)})",
                self.loc,
                "pass literal constants for these arguments",
            ) from None
        if self.known:
            stmts = [known.specialize(st, self.known) for st in stmts]  # type: ignore[misc]
            expr = known.specialize(expr, self.known)  # type: ignore[assignment]
        return stmts, expr

    def unbroadcast(self, expr: ast.expr, var: str, seed: str | ast.expr = "") -> ast.expr:
        """``expr`` (shaped like this statement's result) summed down to ``var``'s shape;
        ``seed`` names the result's cotangent (of the result's shape too)."""
        result, operand = self.known.get(self.target), self.known.get(var)
        if result is not None and operand is not None and len(self.stmt.targets) == 1:
            shapes = {**self.known, seed: result} if isinstance(seed, str) and seed else self.known
            # only where the contribution provably has the result's shape (a rule may give a
            # zero of the operand's shape, rt.zeros_like(x2), which needs no sum at all)
            if known.elementwise_shape(expr, shapes) == result[0]:
                written = known.unbroadcast(expr, result[0], operand[0], shapes)
                if written is not None:
                    return written
        return call("rt.unbroadcast", expr, name(var))

    def _operands(self) -> int:
        """How many arguments could carry a shape (not Python scalar constants)."""
        return sum(
            1
            for p in self.prim.params
            if (a := self.atoms.get(p.name)) is not None
            and not (
                isinstance(a, ir.Const) and isinstance(a.value, (int, float, bool, type(None)))
            )
        )

    def result_class(self, classes: Classes) -> frozenset[str]:
        """The broadcast class of this statement's result: its operands' classes together.

        Computed from the statement itself, so it holds even when the result's name is
        rebound elsewhere (a name read back from a loop has a class of its own).
        """
        cls: frozenset[str] = frozenset()
        for p in self.prim.params:
            atom = self.atoms.get(p.name)
            if atom is not None:
                cls |= atom_class(atom, classes)
        return cls

    def tangent_needs_broadcast(self, params: list[str], classes: Classes) -> bool:
        """Could the sum of these parameters' tangent contributions miss the result's shape?"""
        if not self.prim.elementwise or self._operands() <= 1:
            return False
        total: frozenset[str] = frozenset()
        for p in params:
            names = self.prim.jvp[p].free_names
            if "ans" in names:
                return False
            for q in {p} | (names & set(self.atoms)):
                total |= atom_class(self.atoms[q], classes)
        return total != self.result_class(classes)

    def cotangent_needs_unbroadcast(self, param: str, classes: Classes) -> bool:
        """Could the result (and so its cotangent) be larger than this operand?"""
        if not self.prim.elementwise or self._operands() <= 1:
            return False
        return atom_class(self.atoms[param], classes) != self.result_class(classes)


def call(func: str, *args: ast.expr, **kwargs: ast.expr) -> ast.Call:
    """``func(*args, **kwargs)`` as an AST node; ``func`` may be dotted (``np.broadcast_to``)."""
    return ast.Call(
        func=dotted(func),
        args=list(args),
        keywords=[ast.keyword(arg=k, value=v) for k, v in kwargs.items()],
    )


def name(n: str) -> ast.Name:
    return ast.Name(id=n, ctx=ast.Load())


def add(a: ast.expr, b: ast.expr) -> ast.expr:
    if isinstance(b, ast.UnaryOp) and isinstance(b.op, ast.USub):
        return ast.BinOp(left=a, op=ast.Sub(), right=b.operand)
    return ast.BinOp(left=a, op=ast.Add(), right=b)


def source_text(fn: ir.Function, line: int) -> str:
    """The text of a source line (of the function, or of a function inlined into it)."""
    if line in fn.origins:
        return fn.origins[line].text.strip()
    return fn.source_lines.get(line, "").strip()


def line_label(fn: ir.Function, line: int) -> str:
    """How comments name a line: ``12``, or ``3 of helper`` for an inlined function's line."""
    return fn.labels.get(line, str(line))


def loc_of(fn: ir.Function, line: int) -> SourceLocation:
    if line in fn.origins:
        return fn.origins[line]
    text = fn.source_lines.get(line, "")
    return SourceLocation(fn.filename, line, len(text) - len(text.lstrip()), text)


def owned(expr: ast.expr, is_list: bool = False) -> ast.expr:
    """``expr`` as an array nobody else holds (arithmetic makes one; anything else is copied),
    for derivatives that are later written in place; a list of derivatives (appended to
    later) is copied as a list."""
    if is_list:
        return call("list", expr)
    if isinstance(expr, (ast.BinOp, ast.UnaryOp)):
        return expr
    if isinstance(expr, ast.Call) and dotted_text(expr.func) in ("rt.zeros_like", "rt.copy_of"):
        return expr
    return call("rt.copy_of", expr)


def subscript_store(base: str, index: ast.expr) -> ast.Subscript:
    return ast.Subscript(value=name(base), slice=index, ctx=ast.Store())


def zero_like(var: str, classes: Classes) -> ast.expr:
    """A zero derivative for ``var``: ``0.0`` when it is provably a scalar, else
    ``rt.zeros_like(var)`` (zeros of its shape)."""
    if classes.get(var) == frozenset():
        return ast.Constant(0.0)
    return call("rt.zeros_like", name(var))
