"""Lower a parsed function (gast) to the three-address IR.

Each expression becomes a sequence of single-primitive statements whose
temporaries are named after the variable being assigned (see
:mod:`adgen.names`); a variable assigned twice gets a new name the second
time, so every IR name is bound once in straight-line code. Every name the
function reads from outside is resolved to a Python object here, so each call
knows exactly which function it calls -- ``onp.sin``, ``from numpy import sin``
and ``np.sin`` all become the same primitive.

>>> import numpy as np
>>> from adgen.parse import parse_function
>>> def f(x1, x2):
...     return np.log(x1) + x1 * x2 - np.sin(x2)
>>> print(lower(parse_function(f)))  # doctest: +NORMALIZE_WHITESPACE
def f(x1, x2):              # <doctest adgen.lower[2]>:1
    out_1 = np.log(x1)      # line 2
    out_2 = x1 * x2         # line 2
    out_3 = out_1 + out_2   # line 2
    out_4 = np.sin(x2)      # line 2
    out = out_3 - out_4     # line 2
    return out              # line 2
"""

from __future__ import annotations

import ast
import types
from typing import Any, NoReturn

import gast

from . import ir, nested, trees
from .checkpointing import checkpoint
from .compile import restoring_lists
from .emit import walk
from .errors import (
    AdgenError,
    InternalError,
    NoRuleError,
    SourceLocation,
    UnresolvedNameError,
    UnsupportedSyntaxError,
)
from .names import RESERVED, Namer
from .parse import LiveScope, ParsedFunction, parse_function
from .rules import registry
from .rules import runtime as rt

_SYNTAX_NAMES = {
    gast.If: "`if` statements",
    gast.For: "`for` loops",
    gast.While: "`while` loops",
    gast.With: "`with` blocks",
    gast.Try: "`try` blocks",
    gast.FunctionDef: "nested `def`",
    gast.ClassDef: "class definitions",
    gast.Global: "`global` statements",
    gast.Nonlocal: "`nonlocal` statements",
    gast.Delete: "`del` statements (other than `del name` at a function's top level)",
    gast.Raise: "`raise` statements",
    gast.Import: "imports inside the function",
    gast.ImportFrom: "imports inside the function",
    gast.Assert: "`assert` statements",
    gast.Match: "`match` statements",
    gast.AsyncFunctionDef: "`async def`",
    gast.AsyncFor: "`async for`",
    gast.AsyncWith: "`async with`",
    gast.AnnAssign: "annotated assignments",
    gast.IfExp: "conditional expressions (`a if c else b`)",
    gast.BoolOp: "`and` / `or`",
    gast.Lambda: "`lambda` inside the function",
    gast.ListComp: "list comprehensions",
    gast.GeneratorExp: "generator expressions",
    gast.DictComp: "dict comprehensions",
    gast.SetComp: "set comprehensions",
    gast.Dict: "dict literals",
    gast.Set: "set literals",
    gast.List: "list literals",
    gast.Starred: "`*args` unpacking",
    gast.Yield: "`yield`",
    gast.Await: "`await`",
    gast.JoinedStr: "f-strings",
    gast.NamedExpr: "`:=`",
}

_OPERATOR_TEXT = {
    "Add": "+",
    "Sub": "-",
    "Mult": "*",
    "Div": "/",
    "Pow": "**",
    "MatMult": "@",
    "FloorDiv": "//",
    "Mod": "%",
}

_HINTS = {
    gast.With: "move file and resource handling (`with open(...)`) outside the function you "
    "differentiate, and pass the data in as an argument",
    gast.Try: "remove the `try`: check the inputs before calling the function, outside it",
    gast.ClassDef: "define the class at module level",
    gast.Global: "pass the value in as an argument and return the new value",
    gast.Nonlocal: "pass the value in as an argument and return the new value",
    gast.Delete: "remove the `del` (names go away when the function returns)",
    gast.Raise: "move the check outside the function you differentiate (check the inputs "
    "before calling it), or return a value on every path",
    gast.Import: "move the import to the top of the module",
    gast.ImportFrom: "move the import to the top of the module",
    gast.Match: "write the cases as `if`/`elif` on the values",
    gast.AsyncFunctionDef: "differentiate plain (synchronous) functions",
    gast.AsyncFor: "differentiate plain (synchronous) functions",
    gast.AsyncWith: "differentiate plain (synchronous) functions",
    gast.AnnAssign: "drop the annotation (`y = ...`)",
    gast.DictComp: "build a tuple or list of the values, or an array",
    gast.SetComp: "build a tuple or list of the values, or an array",
    gast.Set: "use a tuple",
    gast.Starred: "pass the arguments one by one",
    gast.Yield: "return a value; build a list or array",
    gast.Await: "differentiate plain (synchronous) functions",
    gast.JoinedStr: "compute numbers only; move printing and logging outside the function",
    gast.NamedExpr: "assign the value on a line of its own",
}

# statements that can hold a `return` the single-exit rewriting does not see through
_OPAQUE_BLOCKS = tuple(
    t for t in (gast.Try, getattr(gast, "TryStar", None), gast.With, gast.Match) if t
) + (gast.AsyncWith, gast.AsyncFor)


# how deep calls to the user's functions may nest (each is inlined)
MAX_INLINE_DEPTH = 256


class _UserNamer:
    """Fresh names for variables adgen adds to a function: ``namer``'s, never in ``avoid``."""

    def __init__(self, namer: Namer, avoid: set[str]) -> None:
        self.namer, self.avoid = namer, avoid

    def fresh(self, base: str) -> str:
        while True:
            name = self.namer.fresh(base)
            if name not in self.avoid:
                return name


class LocalFunction:
    """A nested ``def`` (or a lambda bound to a name) of the function being lowered."""

    def __init__(self, node: Any, enclosing: Lowerer, defaults: dict[str, ir.Atom]) -> None:
        self.node = node
        self.enclosing = enclosing
        self.defaults = defaults

    def parsed(self, caller: Lowerer) -> ParsedFunction:
        outer = self.enclosing.parsed
        return ParsedFunction(
            node=self.node,
            name=self.node.name,
            filename=outer.filename,
            line_offset=outer.line_offset,
            col_offset=outer.col_offset,
            lines=outer.lines,
            scope=outer.scope,
        )


class LocalDerivative:
    """``g = adgen.grad(F, wrt)`` inside the function: ``g(args)`` is a nested derivative."""

    def __init__(self, kind: str, maker: Any) -> None:
        self.kind = kind
        self.maker = maker


class LocalPullback:
    """``out, pullback = adgen.vjp(F, *primals)`` inside the function: ``pullback(ct)``."""

    def __init__(
        self, lifted: ParsedFunction, params: list[str], captured: list[str], args: list[ir.Atom]
    ) -> None:
        self.lifted = lifted
        self.params = params
        self.captured = captured
        self.args = args


class Lowerer:
    def __init__(
        self,
        parsed: ParsedFunction,
        parent: Lowerer | None = None,
        fn: types.FunctionType | None = None,
        structure: dict[str, trees.Desc] | None = None,
    ) -> None:
        self.parsed = parsed
        self.node = parsed.node
        self.parent = parent
        self.fn = fn
        self.root: Lowerer = parent.root if parent is not None else self
        self.params = [a.id for a in self.node.args.args]
        local_names = {n.id for n in walk(self.node) if isinstance(n, gast.Name)}
        if parent is None:
            self.namer = Namer(local_names)
            self.free: dict[str, Any] = {}
            # IR name -> primitive that made it
            self.producers: dict[str, registry.Primitive] = {}
            self.scalars: set[str] = set()
            self.block: list[ir.Stmt] = []
            # inlined functions' lines get keys of their own: key -> (label, location)
            self.labels: dict[int, str] = {}
            self.origins: dict[int, SourceLocation] = {}
            self.inlining: list[Any] = []  # code objects being inlined (recursion check)
            self.callee_names: dict[Any, str] = {}  # functions called, not inlined: their names
            self.prefix = ""
        else:
            self.namer = parent.namer
            self.free = parent.free
            self.producers = parent.producers
            self.scalars = parent.scalars
            self.block = parent.block
            self.prefix = f"{parsed.name}_"
        # names adgen makes up for variables of this function (loop indices, break flags):
        # never one of its own local names (an inlined function's are not reserved in the
        # shared namer, only their prefixed IR names)
        self.user_namer = _UserNamer(self.namer, local_names)
        self.env: dict[str, ir.Atom] = {p: ir.Var(p) for p in self.params}
        self.bound: set[str] = set(self.params)
        # the IR function's parameters: tree arguments are flattened into their leaves
        self.flat_params = list(self.params)
        if structure:
            self.flat_params = []
            for p in self.params:
                desc = structure.get(p, trees.LEAF)
                if not trees.is_tree(desc):
                    self.flat_params.append(p)
                    continue
                leaves = trees.leaf_names(p, desc)
                for leaf in leaves:
                    if leaf in local_names or leaf in self.params or leaves.count(leaf) > 1:
                        self.refuse(
                            self.node,
                            f"a dict/list/tuple argument `{p}` whose leaf `{leaf}` clashes "
                            "with another name",
                            f"rename `{leaf}` in the function, or the keys of `{p}`",
                        )
                    self.namer.reserve(leaf)
                self.flat_params.extend(leaves)
                self.env[p] = _tree_atom(desc, iter(leaves))
        self.line = self.key(self.node)
        # user variables assigned inside if/for/while: one IR name each (no renaming), so every
        # path through the blocks leaves its value under the same name
        if not getattr(self.node, "adgen_structured", False):
            self.node.body = _structure_jumps(self.node.body, self.user_namer)
            self.node.adgen_structured = True
        self.multi: dict[str, str] = {}
        nodes = walk(self.node)
        # adgen's reverse-mode code read again: its `v = stack.pop()` puts back a value v had;
        # v keeps one name, so that "v as differentiable as it was" means all of v's values
        self.restoring = set(restoring_lists(parsed.filename))
        restored = _popped_into(nodes, self.restoring)
        for user in sorted(
            _assigned_in_blocks(self.node.body) | _written_in_place(nodes) | restored
        ):
            if parent is None:
                self.multi[user] = user if user not in RESERVED else self.namer.fresh(user)
                self.namer.reserve(self.multi[user])
            else:
                self.multi[user] = self.namer.claim(self.prefix + user)
        self.depth = 0  # nesting depth of blocks being lowered
        self.deleted: set[str] = set()  # names unbound by `del` (reading them again is refused)
        self.ranges: set[str] = set()  # slices of ranges (r[a:b]): ranges too
        self.result: str | None = None  # the name `return` binds inside blocks
        # ... or, where every `return` gives a tuple of the same length, one name an item
        self.result_items: list[str] = []
        self.call_target: str | None = None  # for an inlined call: the caller's name
        self.returned: ir.Atom | None = None
        self.local_functions: dict[str, LocalFunction | LocalDerivative | LocalPullback] = {}
        self.enclosing: Lowerer | None = None  # the function a nested def is defined in

    def key(self, node: Any) -> int:
        """The line key of a node: its line number, or a key of its own in an inlined function."""
        line = self.parsed.line(node)
        if self.parent is None:
            return line
        root = self.root
        label = f"{line} of {self.parsed.name}"
        for k, existing in root.labels.items():
            if existing == label and root.origins[k].filename == self.parsed.filename:
                return k
        k = 10_000_000 + len(root.labels)
        root.labels[k] = label
        root.origins[k] = self.parsed.loc(node)
        return k

    # -- errors ---------------------------------------------------------------------------------
    def refuse(self, node: Any, what: str, hint: str = "") -> NoReturn:
        raise UnsupportedSyntaxError(f"adgen does not support {what}", self.parsed.loc(node), hint)

    def refuse_node(self, node: Any) -> NoReturn:
        kind = type(node)
        what = _SYNTAX_NAMES.get(kind, f"`{kind.__name__}`")
        self.refuse(
            node, what, _HINTS.get(kind, "rewrite this part with NumPy calls and arithmetic")
        )

    # -- entry ----------------------------------------------------------------------------------
    def lower(self) -> ir.Function:
        args = self.node.args
        for part, label in ((args.vararg, "*args"), (args.kwarg, "**kwargs")):
            if part is not None:
                self.refuse(self.node, f"`{label}` parameters", "list the parameters one by one")
        if args.kwonlyargs or args.posonlyargs:
            self.refuse(
                self.node, "keyword-only and positional-only parameters", "use plain parameters"
            )
        for a in args.args:
            if a.id in RESERVED:
                self.refuse(
                    a,
                    f"a parameter named `{a.id}` (generated code uses that name for a module)",
                    f"rename the parameter `{a.id}`",
                )
        for n in walk(self.node):
            if isinstance(n, (gast.Yield, gast.YieldFrom)):
                self.refuse(n, "`yield` (generators)", "return a value; build a list or array")
        body = list(self.node.body)
        if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
            body = body[1:]  # docstring
        self.check_returns(body)
        body = self.single_exit(body)
        if any(isinstance(s, gast.If) for s in body) and not isinstance(body[-1], gast.Return):
            # returns inside branches bind one result name; the function returns it at the end
            self.result = self.namer.claim("out")
            self.result_items = self.tuple_result(body, "out")
        self.lower_block(body)
        if self.result_items:
            result = ir.Tup(tuple(ir.Var(n) for n in self.result_items))
            self.block.append(ir.Return(result, self.line))
        elif self.result is not None:
            self.block.append(ir.Return(ir.Var(self.result), self.line))
        used = {name for name in self.namer.taken}
        return ir.Function(
            name=self.parsed.name,
            params=self.flat_params,
            body=self.block,
            filename=self.parsed.filename,
            firstlineno=self.parsed.line(self.node),
            source_lines=self.parsed.lines,
            free=self.free,
            user_names=used,
            scalars=self.scalars,
            labels=self.labels,
            origins=self.origins,
        )

    # -- statements -----------------------------------------------------------------------------
    def statement(self, stmt: Any) -> bool:
        """Lower one statement; True if it was a ``return``."""
        if (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Subscript)
        ):
            self.write_in_place(stmt, stmt.targets[0], stmt.value, None)
            return False
        if (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Call)
        ):
            ok, maker = self.static_object(stmt.value.func)
            kind = nested.entry_points().get(maker) if ok else None
            if kind in ("grad", "value_and_grad"):  # g = adgen.grad(lambda y: ...)
                self.local_functions[stmt.targets[0].id] = LocalDerivative(kind, stmt.value)
                self.bound.add(stmt.targets[0].id)
                return False
        if (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Tuple)
            and len(stmt.targets[0].elts) == 2
            and all(isinstance(t, gast.Name) for t in stmt.targets[0].elts)
            and isinstance(stmt.value, gast.Call)
        ):
            ok, maker = self.static_object(stmt.value.func)
            if ok and nested.entry_points().get(maker) == "vjp":  # out, pb = adgen.vjp(F, x)
                self.nested_vjp(stmt.value, *stmt.targets[0].elts)
                return False
        if (
            isinstance(stmt, gast.Assign)
            and isinstance(stmt.value, gast.Lambda)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
        ):
            self.define_local_function(stmt.value, stmt, stmt.targets[0].id)
            return False
        if isinstance(stmt, gast.Assign):
            if len(stmt.targets) != 1:
                # a = b = expr: evaluate once, bind every target
                atom = self.expr(stmt.value, None)
                for target in stmt.targets:
                    self.bind_target(target, atom)
                return False
            self.assign(stmt.targets[0], stmt.value)
            return False
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript):
            self.write_in_place(stmt, stmt.target, stmt.value, stmt.op)
            return False
        if isinstance(stmt, gast.AugAssign):
            if not isinstance(stmt.target, gast.Name):
                self.refuse(
                    stmt, "augmented assignment to subscripts or attributes", "write y = y + v"
                )
            self.check_in_place(stmt)
            binop = gast.BinOp(
                left=gast.Name(
                    id=stmt.target.id, ctx=gast.Load(), annotation=None, type_comment=None
                ),
                op=stmt.op,
                right=stmt.value,
            )
            gast.copy_location(binop, stmt)
            self.assign(stmt.target, binop, augmented=True)
            return False
        if isinstance(stmt, gast.Return):
            if stmt.value is None:
                self.refuse(stmt, "`return` without a value", "return the value to differentiate")
            if self.result_items:
                assert isinstance(stmt.value, gast.Tuple)
                for item, elt in zip(self.result_items, stmt.value.elts):
                    atom = self.expr(elt, item)
                    if atom != ir.Var(item):
                        self.copy(item, atom)
                return True
            if self.result is not None:
                atom = self.expr(stmt.value, self.result)
                if atom != ir.Var(self.result):
                    self.copy(self.result, atom)
                return True
            if self.parent is not None:  # an inlined call: the value goes to the caller
                self.returned = self.expr(stmt.value, self.call_target, self.prefix + "out")
                return True
            atom = self.expr(stmt.value, self.namer.claim("out") if "out" in self.bound else "out")
            self.block.append(ir.Return(atom, self.line))
            return True
        if isinstance(stmt, gast.Pass):
            return False
        if (
            isinstance(stmt, gast.Delete)
            and self.depth == 0
            and all(isinstance(t, gast.Name) and t.id in self.env for t in stmt.targets)
        ):
            # `del x` of a local at the function's top level (adgen's own reverse-mode code
            # frees memory that way): nothing to differentiate; reading x afterwards is refused
            self.deleted.update(t.id for t in stmt.targets)
            return False
        if isinstance(stmt, gast.Assert):
            # kept (the check still runs), never differentiated; the message is not copied
            test = self.expr(stmt.test, None, "check")
            self.block.append(ir.Assign((), registry.ASSERT, (test,), (), self.line))
            return False
        if isinstance(stmt, gast.FunctionDef):
            self.define_local_function(stmt, stmt)
            return False
        if isinstance(stmt, gast.If):
            test = self.expr(stmt.test, None, "cond")
            # each branch starts from what the names meant before the `if` (a name bound in
            # a branch is rebound in blocks, so it has one IR name after it; only statements
            # after an early return, which end the function, bind names of their own there)
            before = dict(self.env)
            body = self.sub_block(stmt.body)
            self.env, after_body = before, self.env
            orelse = self.sub_block(stmt.orelse)
            self.env = {**after_body, **self.env}
            self.add_if(test, body, orelse, self.key(stmt))
            return False
        if isinstance(stmt, gast.For):
            self.lower_for(stmt)
            return False
        if isinstance(stmt, gast.While):
            if stmt.orelse:
                self.refuse(stmt, "`else` clauses on loops", "move that code after the loop")
            line = self.key(stmt)
            saved, self.block = self.block, []
            test = self.expr(stmt.test, None, "cond")
            test_body, self.block = self.block, saved
            body = self.sub_block(stmt.body)
            self.block.append(ir.While(test_body, test, body, line))
            return False
        if isinstance(stmt, (gast.Break, gast.Continue)):
            word = "break" if isinstance(stmt, gast.Break) else "continue"
            self.refuse(
                stmt,
                f"`{word}`",
                "use a while loop whose condition says when to stop"
                if word == "break"
                else "put the rest of the loop body under an if",
            )
        if isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Constant):
                return False
            if _is_pop(stmt.value) and stmt.value.func.value.id in self.multi:
                self.pop(stmt.value, stmt.value.func.value.id, None, "dropped")  # xs.pop()
                return False
            call = stmt.value
            if (
                isinstance(call, gast.Call)
                and isinstance(call.func, gast.Attribute)
                and call.func.attr == "append"
                and isinstance(call.func.value, gast.Name)
                and len(call.args) == 1
                and not call.keywords
            ):
                self.append(stmt, call.func.value.id, call.args[0])
                return False
            if (
                isinstance(call, gast.Call)
                and isinstance(call.func, gast.Attribute)
                and call.func.attr in ("append", "extend", "insert")
            ):
                self.refuse(
                    stmt,
                    f"growing a list with `.{call.func.attr}()` (not yet)",
                    "preallocate an array (y = np.zeros(n)) and write y[i] = v, "
                    "or stack the values you have: np.stack((a, b))",
                )
            self.refuse(
                stmt,
                "expression statements (calls made for their side effects)",
                "remove it, or move printing and I/O outside the differentiated function",
            )
        self.refuse_node(stmt)

    def add_if(self, test: ir.Atom, body: list[ir.Stmt], orelse: list[ir.Stmt], line: int) -> None:
        """Append an ``If``; a test the branches rebind is first copied, so the branch taken
        can be told again when reverse mode replays the ``if``."""
        if isinstance(test, ir.Var):
            inside = ir.Function("", [], body + orelse, "", 0, {})
            bound = {t for s in inside.statements() if isinstance(s, ir.Assign) for t in s.targets}
            if test.name in bound:
                taken = self.namer.fresh("taken")
                self.copy(taken, test)
                test = ir.Var(taken)
        self.block.append(ir.If(test, body, orelse, line))

    def branch_value(self, node: Any, name: str, hint: str) -> list[ir.Stmt]:
        """The block computing ``node`` into ``name`` (one branch of ``a if c else b``)."""
        saved, self.block = self.block, []
        self.depth += 1
        atom = self.expr(node, name, hint)
        if atom != ir.Var(name):
            self.copy(name, atom)
        self.depth -= 1
        block, self.block = self.block, saved
        return block

    def lower_block(self, stmts: list[Any]) -> None:
        for stmt in stmts:
            self.line = self.key(stmt)
            self.statement(stmt)

    def sub_block(self, stmts: list[Any]) -> list[ir.Stmt]:
        """Lower the statements of a nested block into their own IR block."""
        saved, self.block = self.block, []
        self.depth += 1
        self.lower_block(stmts)
        self.depth -= 1
        block, self.block = self.block, saved
        return block

    def single_exit(self, stmts: list[Any]) -> list[Any]:
        """Move the statements after an ``if`` that returns into its other branch, so every
        ``return`` ends a path (early returns become structured branches)."""
        out: list[Any] = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, gast.Return):
                if i + 1 < len(stmts):
                    self.refuse(stmts[i + 1], "statements after `return`", "remove them")
                out.append(stmt)
                return out
            if isinstance(stmt, gast.If) and _contains_return(stmt):
                rest = stmts[i + 1 :]
                stmt.body = self.single_exit(
                    stmt.body + ([] if _always_returns(stmt.body) else rest)
                )
                orelse = stmt.orelse + ([] if _always_returns(stmt.orelse) else rest)
                stmt.orelse = self.single_exit(orelse)
                out.append(stmt)
                return out
            if isinstance(stmt, (gast.For, gast.While)) and _contains_return(stmt):
                node = _find_return(stmt)
                self.refuse(
                    node, "`return` inside a loop", "set a variable and return after the loop"
                )
            out.append(stmt)
        return out

    def tuple_result(self, body: list[Any], base: str) -> list[str]:
        """Where every ``return`` in ``body`` gives a tuple display of one length, a result
        name for each item (so each item keeps a derivative of its own across the branches);
        else none."""
        returns = [r for stmt in body for r in _returns(stmt)]
        lengths = {len(r.value.elts) if isinstance(r.value, gast.Tuple) else -1 for r in returns}
        if (
            len(lengths) != 1
            or -1 in lengths
            or any(isinstance(e, gast.Starred) for r in returns for e in r.value.elts)
        ):
            return []
        return [self.namer.fresh(base) for _ in range(lengths.pop())]

    def check_returns(self, body: list[Any]) -> None:
        """Every path through ``body`` must end in a ``return``; where one stands inside a
        construct adgen does not read (``try``, ``with``, ``match``), that is refused by name."""
        if _always_returns(body):
            return
        for stmt in body:
            for node in walk(stmt):
                if isinstance(node, _OPAQUE_BLOCKS) and _contains_return(node):
                    self.refuse_node(node)
        self.refuse(
            self.node,
            "functions that can end without a `return`",
            "return the value to differentiate on every path",
        )

    def reversed_range(self, it: Any) -> ir.Atom | None:
        """The range of ``reversed(range(...))`` or ``reversed(r)`` with ``r = range(...)``."""
        if not (self.is_call_to(it, reversed) and len(it.args) == 1 and not it.keywords):
            return None
        arg = it.args[0]
        if self.is_call_to(arg, range):
            return self.expr(arg, None, "loop")
        if isinstance(arg, gast.Name) and arg.id in self.env:
            atom = self.env[arg.id]
            if self.is_range(atom):
                return atom
        return None

    def lower_for(self, stmt: Any) -> None:
        """``for`` over ``range(...)``; over an array or sequence (rows), ``enumerate`` and ``zip``
        become a loop over ``range(len(...))`` that reads the items by index."""
        if stmt.orelse:
            self.refuse(stmt, "`else` clauses on loops", "move that code after the loop")
        line = self.key(stmt)
        it, target = stmt.iter, stmt.target
        checkpointed, every_node, it = self.checkpoint_marker(it)
        items: list[tuple[Any, ir.Atom]] = []  # (user target, sequence) read by index
        backwards = self.reversed_range(it)
        if self.is_call_to(it, range) or backwards is not None:
            if backwards is not None:  # for i in reversed(range(n)): rt.backwards, a range
                prim = registry.lookup(rt.backwards)
                assert prim is not None
                r = self.emit(None, "loop", prim, [backwards], [], it)
            else:
                r = self.expr(it, None, "loop")
            if not isinstance(target, gast.Name):
                self.refuse(target, "unpacking a range", "use one loop variable")
            index = self.loop_variable(target.id)
        else:
            if self.is_call_to(it, enumerate):
                if (
                    not (isinstance(target, gast.Tuple) and len(target.elts) == 2)
                    or len(it.args) != 1
                ):
                    self.refuse(
                        target, "this form of enumerate", "write `for i, v in enumerate(x):`"
                    )
                counter, target = target.elts
                if not isinstance(counter, gast.Name):
                    self.refuse(counter, "unpacking the enumerate counter", "use a name")
                index = self.loop_variable(counter.id)
                seqs, targets = [self.expr(it.args[0], None, "seq")], [target]
            elif self.is_call_to(it, zip):
                if not (isinstance(target, gast.Tuple) and len(target.elts) == len(it.args)):
                    self.refuse(target, "this form of zip", "unpack one name per sequence")
                index = self.loop_variable(self.user_namer.fresh("k"))
                seqs, targets = [self.expr(a, None, "seq") for a in it.args], list(target.elts)
            else:
                index = self.loop_variable(self.user_namer.fresh("k"))
                seqs, targets = [self.expr(it, None, "seq")], [target]
            seqs = self.held_sequences(stmt, seqs)
            if all(isinstance(seq, ir.Tup) for seq in seqs):
                if checkpointed:
                    self.refuse(
                        stmt.iter,
                        "adgen.checkpoint on a loop over a tuple or list (it is unrolled)",
                        "checkpoint a loop over range(...) or an array",
                    )
                self.unroll(stmt, index, seqs, targets)
                return
            length = self.call_prim(len, [seqs[0]], "n")
            for seq in seqs[1:]:
                length = self.call_prim(
                    registry.np.minimum, [length, self.call_prim(len, [seq], "n")], "n"
                )
            r = self.call_prim(range, [length], "loop")
            for t, seq in zip(targets, seqs):
                if not isinstance(t, gast.Name):
                    self.refuse(t, "nested unpacking in a for target", "unpack inside the loop")
                items.append((t, seq))
        every = self.expr(every_node, None, "every") if every_node is not None else None
        if isinstance(every, ir.Const) and every.value is None:
            every = None
        saved, self.block = self.block, []
        self.depth += 1
        getitem = registry.lookup(registry.operator.getitem)
        assert getitem is not None
        for t, seq in items:
            name = self.new_name(t.id)
            self.block.append(ir.Assign((name,), getitem, (seq, ir.Var(index)), (), line))
            self.producers[name] = getitem
            self.bind(t.id, name, ir.Var(name))
        self.lower_block(stmt.body)
        self.depth -= 1
        body, self.block = self.block, saved
        self.block.append(ir.For(index, r, body, line, checkpointed, every))

    def held_sequences(self, loop: Any, seqs: list[ir.Atom]) -> list[ir.Atom]:
        """Python iterates the object a loop's iterable named when the loop started: a
        sequence whose name the body binds again (``for r in x: x = r * 2.0``) is read
        through a name of its own, bound before the loop."""
        nodes = [n for stmt in loop.body for n in walk(stmt)]
        rebound, mutated = _rebound(nodes), _written_in_place(nodes)
        mutated |= {
            n.target.id
            for n in nodes
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)
        }
        held = []
        for seq in seqs:
            users = [u for u, a in self.env.items() if a == seq and u in rebound]
            if isinstance(seq, ir.Var) and users:
                if any(u in mutated for u in users):
                    self.refuse(
                        loop.iter,
                        f"a loop over `{users[0]}` whose body both binds `{users[0]}` again "
                        "and writes into it",
                        "iterate over a copy (`for r in x.copy():`) or use another name",
                    )
                name = self.namer.fresh(f"{users[0]}_iterated")
                self.copy(name, seq)
                seq = ir.Var(name)
            held.append(seq)
        return held

    def checkpoint_marker(self, it: Any) -> tuple[bool, Any, Any]:
        """``adgen.checkpoint(iterable, every=k)`` as a loop's iterable: (marked, the node of
        k or None, the iterable)."""
        if not self.is_call_to(it, checkpoint):
            return False, None, it
        every = it.args[1:] + [kw.value for kw in it.keywords if kw.arg == "every"]
        if len(it.args) < 1 or len(every) > 1 or any(kw.arg != "every" for kw in it.keywords):
            self.refuse(
                it,
                "this form of adgen.checkpoint",
                "write `for i in adgen.checkpoint(range(n)):` or "
                "`adgen.checkpoint(range(n), every=k)`",
            )
        inner = it.args[0]
        if self.is_call_to(inner, checkpoint):
            self.refuse(inner, "adgen.checkpoint of adgen.checkpoint", "mark the loop once")
        return True, (every[0] if every else None), inner

    def unroll(self, stmt: Any, index: str, seqs: list[ir.Atom], targets: list[Any]) -> None:
        """A loop over sequences known when transforming (a tuple or list argument, a
        literal): one copy of the body per item, each binding the items directly."""
        line = self.key(stmt)
        length = min(len(seq.items) for seq in seqs if isinstance(seq, ir.Tup))
        for k in range(length):
            self.copy(index, ir.Const(k))
            for t, seq in zip(targets, seqs):
                assert isinstance(seq, ir.Tup)
                if not isinstance(t, gast.Name):
                    self.refuse(t, "nested unpacking in a for target", "unpack inside the loop")
                self.bind(t.id, self.new_name(t.id), seq.items[k])
            block, self.block = self.block, []
            self.depth += 1
            self.lower_block(stmt.body)
            self.depth -= 1
            body, self.block = self.block, block
            # the body stands in a block, as the loop's body would (its names are rebound)
            self.block.append(ir.If(ir.Const(True), body, [], line))

    def loop_variable(self, user: str) -> str:
        name = self.multi.get(user, user)
        self.namer.reserve(name)
        self.env[user] = ir.Var(name)
        self.bound.add(user)
        return name

    def is_call_to(self, node: Any, fn: Any) -> bool:
        if not isinstance(node, gast.Call):
            return False
        ok, obj = self.static_object(node.func)
        return ok and obj is fn

    def call_prim(self, fn: Any, args: list[ir.Atom], hint: str) -> ir.Var:
        prim = registry.lookup(fn)
        assert prim is not None and prim.outputs is None, fn
        out = self.emit(None, hint, prim, args, [], None)
        assert isinstance(out, ir.Var)
        return out

    def copy(self, name: str, atom: ir.Atom) -> None:
        """``name = atom`` as a real statement (a name rebound inside blocks cannot alias)."""
        prim = registry.lookup(registry.assign)
        assert prim is not None
        self.block.append(ir.Assign((name,), prim, (atom,), (), self.line))
        self.producers[name] = prim

    def append(self, stmt: Any, name: str, value: Any) -> None:
        """``xs.append(v)`` onto a list the function made (``xs = []``)."""
        if name not in self.env:
            self.refuse(stmt, f"appending to `{name}`, which is not a local list", "")
        self.check_owned(stmt, name, "append to")
        v = self.expr(value, None, name)
        ir_name = self.multi[name]
        self.block.append(
            ir.Assign((ir_name,), registry.APPEND, (self.env[name], v), (), self.line)
        )
        self.env[name] = ir.Var(ir_name)

    def pop(self, node: Any, name: str, target: str | None, hint: str) -> ir.Atom:
        """``xs.pop()`` from a list the function made: the last item, taken off the list (adgen's
        own reverse-mode code restores saved values this way)."""
        self.check_owned(node, name, "pop from")
        ir_name = self.multi[name]
        v = target if target is not None else self.namer.fresh(hint)
        # `v = xs.pop()` binds a name (in adgen's reverse code: puts back v's saved value);
        # `y[i] = xs.pop()` or `f(xs.pop())` goes through a temporary
        named: tuple[tuple[str, ir.Atom], ...] = ()
        if target is not None:
            named = (("named", ir.Const(True)),)
            if name in self.restoring:
                named += (("restores", ir.Const(True)),)
        self.block.append(
            ir.Assign((ir_name, v), registry.POP, (self.env[name],), named, self.line)
        )
        self.env[name] = ir.Var(ir_name)
        self.producers[v] = registry.POP
        return ir.Var(v)

    def list_names(self, finder: Any) -> set[str]:
        """``finder`` of every node of the function, computed once per function."""
        memo = self.__dict__.setdefault("_list_names", {})
        key = (finder, id(self.node))
        if key not in memo:
            memo[key] = finder(walk(self.node))
        result: set[str] = memo[key]
        return result

    def new_list(self, name: str, items: list[Any]) -> None:
        """``xs = [a, b]`` for a list later appended to: a real list."""
        ir_name = self.new_name(name)
        atoms = [self.expr(e, None, name) for e in items]
        self.block.append(ir.Assign((ir_name,), registry.LIST_NEW, (), (), self.line))
        self.producers[ir_name] = registry.LIST_NEW
        for a in atoms:
            self.block.append(
                ir.Assign((ir_name,), registry.APPEND, (ir.Var(ir_name), a), (), self.line)
            )
        self.bound.add(name)
        self.env[name] = ir.Var(ir_name)

    # -- list concatenation ---------------------------------------------------------------
    # `xs + [v]` of lists: a list literal is a tuple atom (its items), a list the function
    # builds (`xs = []`, appends, comprehensions) a variable. A concatenation with at least one
    # such list is a new list built by appends -- the items of a list variable copied by a loop
    # that reads them by index -- so its derivatives are those of appends and indexing.
    # `xs = xs + [v]` (and `xs += [v]`) on a list no other name sees appends in place.

    def is_list(self, atom: ir.Atom | None) -> bool:
        """Is this atom a list the function builds (``xs = []``, appends, a comprehension)?"""
        return isinstance(atom, ir.Var) and self.producers.get(atom.name) is registry.LIST_NEW

    def concatenation(self, parts: list[ir.Atom], target: str | None, hint: str) -> ir.Atom | None:
        """``a + b`` of sequences: a tuple atom when both are literals (items known), a new list
        when one is a list variable; None when they are not both sequences (numbers, arrays)."""
        if not all(isinstance(p, ir.Tup) or self.is_list(p) for p in parts):
            return None
        if all(isinstance(p, ir.Tup) for p in parts):
            return ir.Tup(tuple(a for p in parts if isinstance(p, ir.Tup) for a in p.items))
        result = target if target is not None else self.namer.fresh(hint)
        self.build_list(result, parts)
        return ir.Var(result)

    def build_list(self, result: str, parts: list[ir.Atom]) -> None:
        """``result = [*parts[0], *parts[1], ...]`` as a new list, appended item by item."""
        # a part that is the list being rebound is read through a copy made first
        parts = [self.copied_list(p) if p == ir.Var(result) else p for p in parts]
        self.block.append(ir.Assign((result,), registry.LIST_NEW, (), (), self.line))
        self.producers[result] = registry.LIST_NEW
        for p in parts:
            self.extend_list(result, p)

    def copied_list(self, part: ir.Atom) -> ir.Var:
        copy = self.namer.fresh("items")
        self.build_list(copy, [part])
        return ir.Var(copy)

    def extend_list(self, result: str, part: ir.Atom) -> None:
        """Append the items of ``part`` (a tuple atom, or a list variable read by index in a
        loop) to the list ``result``."""
        if isinstance(part, ir.Tup):
            for a in part.items:
                self.block.append(
                    ir.Assign((result,), registry.APPEND, (ir.Var(result), a), (), self.line)
                )
            return
        if part == ir.Var(result):  # xs += xs: read the items through a copy
            part = self.copied_list(part)
        n = self.call_prim(len, [part], "n")
        loop = self.call_prim(range, [n], "loop")
        k, item = self.namer.fresh("k"), self.namer.fresh("item")
        getitem = registry.lookup(registry.operator.getitem)
        assert getitem is not None
        self.producers[item] = getitem
        body: list[ir.Stmt] = [
            ir.Assign((item,), getitem, (part, ir.Var(k)), (), self.line),
            ir.Assign((result,), registry.APPEND, (ir.Var(result), ir.Var(item)), (), self.line),
        ]
        self.block.append(ir.For(k, loop, body, self.line))

    def assign_concatenation(self, name: str, value: Any, augmented: bool) -> None:
        """``xs = a + b`` where a or b is a list literal: ``xs`` is a real list (it may be
        appended to later). ``xs = xs + [v]`` and ``xs += [v]`` append in place when no other
        name sees the list; ``xs += [v]`` on a list another name sees is refused (Python
        extends that list)."""
        ir_name = self.multi[name]
        left = self.expr(value.left, None, name)
        right = self.expr(value.right, None, name)
        sequences = all(isinstance(p, ir.Tup) or self.is_list(p) for p in (left, right))
        if not sequences:
            add = registry.lookup(registry.operator.add)
            assert add is not None
            self.bind(name, ir_name, self.emit(ir_name, name, add, [left, right], [], value))
            return
        old = self.env.get(name)
        if (
            isinstance(value.left, gast.Name)
            and value.left.id == name
            and self.is_list(old)
            and old == ir.Var(ir_name)
        ):
            why = self.ownership_problem(name, "append to")
            if augmented and why:
                self.check_owned(value, name, "extend")
            if not why:
                self.extend_list(ir_name, right)
                self.bound.add(name)
                return
        self.build_list(ir_name, [left, right])
        self.env[name] = ir.Var(ir_name)
        self.bound.add(name)

    def comprehension(self, node: Any, target: str | None, hint: str) -> ir.Atom:
        """``[f(x) for x in seq if c]`` is a loop appending to a new list."""
        if len(node.generators) != 1:
            self.refuse(node, "comprehensions with several `for`", "write the loops out")
        gen = node.generators[0]
        if getattr(gen, "is_async", 0):
            self.refuse(node, "async comprehensions")
        # the comprehension's variables are its own: fresh names
        renames = {
            n.id: self.namer.fresh(n.id) for n in gast.walk(gen.target) if isinstance(n, gast.Name)
        }
        for fresh_name in renames.values():
            self.multi[fresh_name] = fresh_name
        parts = [node.elt, *gen.ifs]
        for part in [gen.target, *parts]:
            for n in gast.walk(part):
                if isinstance(n, gast.Name) and n.id in renames:
                    n.id = renames[n.id]
        result = target if target is not None else self.namer.fresh(hint)
        user = self.namer.fresh("items") if target is None else target
        self.multi[user] = result
        append = gast.Expr(
            value=gast.Call(
                func=gast.Attribute(value=_name(user), attr="append", ctx=gast.Load()),
                args=[node.elt],
                keywords=[],
            )
        )
        gast.copy_location(append, node)
        gast.copy_location(append.value, node)
        body: list[Any] = [append]
        for cond in reversed(gen.ifs):
            body = [gast.copy_location(gast.If(test=cond, body=body, orelse=[]), node)]
        loop = gast.copy_location(
            gast.For(target=gen.target, iter=gen.iter, body=body, orelse=[], type_comment=None),
            node,
        )
        self.block.append(ir.Assign((result,), registry.LIST_NEW, (), (), self.line))
        self.producers[result] = registry.LIST_NEW
        self.env[user] = ir.Var(result)
        self.bound.add(user)
        self.lower_for(loop)
        return ir.Var(result)

    def write_in_place(self, stmt: Any, target: Any, value: Any, op: Any) -> None:
        """``y[index] = v`` and ``y[index] += v``: an in-place write into an array the function
        made itself (``np.zeros(...)``, ``x.copy()``, arithmetic results)."""
        if not isinstance(target.value, gast.Name):
            self.refuse(
                target, "writing into an expression", "write `y[i, j] = v`, not `y[i][j] = v`"
            )
        name = target.value.id
        if name not in self.env:
            self.refuse(target.value, f"writing into `{name}`, which is not a local array", "")
        self.check_owned(stmt, name, "write into")
        base = self.env[name]
        index = self.index(target.slice, name)
        if op is None:
            v = self.expr(value, None, name)
        else:
            getitem = registry.lookup(registry.operator.getitem)
            fn = registry.BINOP_FUNCTIONS.get(type(op).__name__)
            prim = registry.lookup(fn) if fn is not None else None
            assert getitem is not None
            if prim is None:
                self.refuse(stmt, f"the operator `{type(op).__name__}`")
            old = self.emit(None, name, getitem, [base, index], [], stmt)
            rhs = self.expr(value, None, name)
            v = self.emit(None, name, prim, [old, rhs], [], stmt)
        ir_name = self.multi[name]
        self.block.append(ir.Assign((ir_name,), registry.SETITEM, (base, index, v), (), self.line))
        self.env[name] = ir.Var(ir_name)

    def check_owned(self, stmt: Any, name: str, verb: str) -> None:
        """Writing into ``name``'s array must not be seen through any other name: it must be
        made inside the function, every binding a new array, and no name kept as a view."""
        why = self.ownership_problem(name, verb)
        if why:
            self.refuse(
                stmt,
                f"in-place {verb} `{name}` ({why})",
                f"make `{name}` a new array first (`{name} = {name}.copy()`), "
                "or copy the slice you keep",
            )

    def ownership_problem(self, name: str, verb: str) -> str:
        """Why writing into ``name``'s array (or list) could be seen through another name
        ("" if it cannot)."""
        why = ""
        if self.parsed.filename.startswith("<adgen ") and name not in self.params:
            # adgen's own reverse-mode code: its temporaries may be views of arrays it writes
            # later, but every overwritten slot is saved and put back before an adjoint reads
            # such a view again -- the generated code has the meaning of its values
            return ""
        # a list's items are not views of it: only another name for the list itself matters
        lists = verb in ("append to", "pop from", "extend")
        if name in self.params:
            why = "it is an argument passed by the caller"
        for node in gast.walk(self.node):
            if why:
                break
            if isinstance(node, (gast.Assign, gast.AugAssign)):
                targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                stored = {
                    n.id
                    for t in targets
                    if isinstance(t, (gast.Name, gast.Tuple))
                    for n in gast.walk(t)
                    if isinstance(n, gast.Name)
                }
                fresh = isinstance(node, gast.AugAssign) or self.fresh_value(node.value)
                if name in stored and not fresh:
                    why = "it may be a view of another array or another variable's array"
                elif stored and not fresh and _views_of(node.value, name, lists):
                    kept = sorted(stored) or ["a name"]
                    why = f"`{kept[0]}` keeps a view of it"
            elif isinstance(node, gast.For) and not lists and _views_of(node.iter, name):
                why = "a loop iterates over its rows"
        return why

    def check_in_place(self, stmt: Any) -> None:
        """``y += v`` updates an array in place; lowering it as ``y = y + v`` is right only when
        no other name can see that array: refuse when ``y`` is a parameter, a global, a view
        (slice, reshape, transpose) or another variable's value too."""
        name = stmt.target.id
        atom = self.env.get(name)
        if name in self.multi:
            self.check_in_place_in_blocks(stmt, name)
            return
        if atom is None or isinstance(atom, ir.Const):
            return
        if isinstance(atom, ir.Var):
            prim = self.producers.get(atom.name)
            shared = [u for u, a in self.env.items() if u != name and a == atom]
            if prim is not None and not prim.view and not shared:
                return
            if shared:
                why = f"it is also `{shared[0]}`"
            elif prim is None:
                why = "it is an argument passed by the caller"
            else:
                why = f"it is a view of another array (made by {prim.name})"
        else:
            why = "it is a global value"
        self.refuse(
            stmt,
            f"in-place update of `{name}` ({why}; arrays would change in place)",
            f"write `{name} = {name} {_OPERATOR_TEXT.get(type(stmt.op).__name__, '+')} ...` "
            "to make a new value",
        )

    def check_in_place_in_blocks(self, stmt: Any, name: str) -> None:
        """For a variable rebound inside blocks the order of assignments is not known here, so
        ``y += v`` is allowed only when *every* assignment to ``y`` makes a new value and no
        statement could make another name share ``y``'s array."""
        why = ""
        if name in self.params:
            why = "it is an argument passed by the caller"
        for node in gast.walk(self.node):
            if isinstance(node, (gast.Assign, gast.AugAssign)) and not why:
                targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                stored = {n.id for t in targets for n in gast.walk(t) if isinstance(n, gast.Name)}
                fresh = isinstance(node, gast.AugAssign) or self.fresh_value(node.value)
                read = {n.id for n in gast.walk(node.value) if isinstance(n, gast.Name)}
                if name in stored and not fresh:
                    why = "it may be a view or another variable's array"
                elif name in read and not fresh:
                    why = "another variable may share its array"
        if why:
            self.refuse(
                stmt,
                f"in-place update of `{name}` ({why}; arrays would change in place)",
                f"write `{name} = {name} {_OPERATOR_TEXT.get(type(stmt.op).__name__, '+')} ...` "
                "to make a new value",
            )

    def fresh_value(self, node: Any) -> bool:
        """Does this expression certainly make a new value (not a view or an alias)?"""
        if isinstance(node, (gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare, gast.List)):
            return True
        if isinstance(node, gast.ListComp):
            return True
        if isinstance(node, gast.IfExp):
            return self.fresh_value(node.body) and self.fresh_value(node.orelse)
        if isinstance(node, gast.Call):
            try:
                ok, fn = self.static_object(node.func)
            except UnresolvedNameError:  # `v.mean()` of a local bound later in the function
                ok, fn = False, None  # (check_owned reads every statement, not only past ones)
            if not ok and isinstance(node.func, gast.Attribute):
                method = registry.method_function(node.func.attr)
                ok, fn = method is not None, method[0] if method else None
            prim = registry.lookup(fn) if ok else None
            return prim is not None and not prim.view
        return False

    def assign(self, target: Any, value: Any, augmented: bool = False) -> None:
        if (
            isinstance(target, gast.Name)
            and isinstance(value, gast.List)
            and target.id in self.list_names(_appended)
        ):
            self.new_list(target.id, value.elts)
            return
        if (
            isinstance(target, gast.Name)
            and isinstance(value, gast.BinOp)
            and isinstance(value.op, gast.Add)
            and target.id in self.list_names(_concatenated)
        ):
            self.assign_concatenation(target.id, value, augmented)
            return
        if isinstance(target, gast.Name):
            name = self.new_name(target.id)
            atom = self.expr(value, name)
            self.bind(target.id, name, atom)
        elif isinstance(target, gast.Tuple) and all(isinstance(t, gast.Name) for t in target.elts):
            if isinstance(value, gast.Tuple) and len(value.elts) == len(target.elts):
                # every value is computed before any name is rebound (a, b = b, a); values for
                # names not rebound in blocks are computed straight into their new names
                atoms = [
                    self.expr(v, None if t.id in self.multi else self.new_name(t.id), t.id)
                    for t, v in zip(target.elts, value.elts)
                ]
                if any(t.id in self.multi for t in target.elts):
                    # evaluate every value before rebinding any name (a, b = b, a)
                    held = []
                    for a in atoms:
                        if isinstance(a, ir.Var) and a.name in self.multi.values():
                            temp = self.namer.fresh(a.name)
                            self.copy(temp, a)
                            a = ir.Var(temp)
                        held.append(a)
                    atoms = held
                for t, a in zip(target.elts, atoms):
                    self.bind(t.id, self.new_name(t.id), a)
                return
            atom = self.expr(value, None)
            self.bind_target(target, atom)
        elif isinstance(target, gast.Tuple):
            # nested unpacking: a, (b, c) = ...
            self.bind_target(target, self.expr(value, None))
        else:
            self.refuse(
                target,
                "assignments to subscripts and attributes",
                "build the array with np.where, np.concatenate or arithmetic instead",
            )

    def bind_target(self, target: Any, atom: ir.Atom) -> None:
        if isinstance(target, gast.Name):
            self.bind(target.id, self.new_name(target.id), atom)
            return
        if (
            isinstance(target, gast.Tuple)
            and isinstance(atom, ir.Tup)
            and all(isinstance(t, gast.Name) for t in target.elts)
            and self.block
            and isinstance(self.block[-1], ir.Assign)
            and self.block[-1].targets == tuple(getattr(a, "name", None) for a in atom.items)
            and not {self.multi.get(t.id) for t in target.elts}.intersection(
                v for a in ir.stmt_args(self.block[-1]) for v in ir.atom_vars(a)
            )
        ):
            # `sign, logdet = np.linalg.slogdet(a)`: the results take the user's names
            names = tuple(self.new_name(t.id) for t in target.elts)
            for old, new in zip(self.block[-1].targets, names):
                self.producers[new] = self.producers.pop(old)
            self.block[-1].targets = names
            for t, n in zip(target.elts, names):
                self.bind(t.id, n, ir.Var(n))
            return
        if isinstance(target, gast.Tuple) and isinstance(atom, ir.Tup):
            if len(atom.items) == len(target.elts):
                for t, a in zip(target.elts, atom.items):
                    self.bind_target(t, a)
                return
        if isinstance(target, gast.Tuple) and all(isinstance(t, gast.Name) for t in target.elts):
            if (
                isinstance(atom, ir.Var)
                and self.block
                and isinstance(self.block[-1], ir.Assign)
                and self.block[-1].targets == (atom.name,)
            ):
                names = tuple(self.new_name(t.id) for t in target.elts)
                self.block[-1].targets = names
                for t, n in zip(target.elts, names):
                    self.env[t.id] = ir.Var(n)
                    self.bound.add(t.id)
                return
        self.refuse(target, "this kind of unpacking", "unpack a tuple of the same length")

    def new_name(self, user: str) -> str:
        """The IR name for a new binding of the user's variable ``user``."""
        if user in self.multi:
            return self.multi[user]
        if self.parent is not None:
            return self.namer.claim(self.prefix + user)
        if user not in self.bound and user not in RESERVED:
            self.namer.reserve(user)
            return user
        return self.namer.fresh(user)

    def bind(self, user: str, name: str, atom: ir.Atom) -> None:
        self.bound.add(user)
        if isinstance(atom, ir.Var) and atom.name == name:
            self.env[user] = atom
            return
        if user in self.multi or (isinstance(atom, ir.Var) and atom.name in self.multi.values()):
            # rebound inside blocks, or a copy of such a variable: a real copy, not an alias
            self.copy(name, atom)
            self.env[user] = ir.Var(name)
            return
        # a plain copy (y = x, y = 2.0): the user's name now means that atom
        self.env[user] = atom

    # -- expressions ----------------------------------------------------------------------------
    def emit(
        self,
        target: str | None,
        hint: str,
        prim: registry.Primitive,
        args: list[ir.Atom],
        kwargs: list[tuple[str, ir.Atom]],
        node: Any,
    ) -> ir.Atom:
        try:
            prim.bind(tuple(args), kwargs)
        except TypeError as exc:
            names = ", ".join(p.name for p in prim.params)
            raise UnsupportedSyntaxError(
                f"{prim.name}: these arguments do not fit adgen's rule ({exc})",
                self.parsed.loc(node),
                f"adgen's rule for {prim.name} takes ({names})",
            ) from None
        if prim.outputs is not None:
            return self.emit_several(hint, prim, args, kwargs, node)
        name = target if target is not None else self.namer.fresh(hint)
        self.block.append(ir.Assign((name,), prim, tuple(args), tuple(kwargs), self.line))
        self.producers[name] = prim
        if prim is registry.lookup(registry.operator.getitem) and self.is_range(args[0]):
            if isinstance(args[1], ir.Slc):  # r[a:b] of a range is a range
                self.ranges.add(name)
        return ir.Var(name)

    def is_range(self, atom: ir.Atom) -> bool:
        """Is this atom a range (``range(...)``, ``rt.backwards(...)``, a slice of one)?"""
        if not isinstance(atom, ir.Var):
            return False
        made = self.producers.get(atom.name)
        ranges = (registry.lookup(range), registry.lookup(rt.backwards))
        return (made is not None and made in ranges) or atom.name in self.ranges

    def emit_several(
        self,
        hint: str,
        prim: registry.Primitive,
        args: list[ir.Atom],
        kwargs: list[tuple[str, ir.Atom]],
        node: Any,
    ) -> ir.Tup | ir.Var:
        """A function with several results binds one name each; the call's value is their
        tuple (unpacked, indexed with constants or returned like any tuple). A count of 1
        (from ``outputs`` and the call's constants) is a single result, not a tuple, unless
        the function returns a list of its results (``np.split(x, 1)``: a list of one)."""
        bound = prim.bind(tuple(args), kwargs)
        # the constants of the call, and defaults of what it does not pass: an argument
        # passed as a variable is missing, so a count that needs it fails (never the default)
        static = {k: v for k, v in prim.defaults().items() if k not in bound}
        varying: list[str] = []
        for key, atom in bound.items():
            known, value = _constant(atom)
            if known:
                static[key] = value
            else:
                varying.append(key)
        try:
            count = prim.count_outputs(static)
        except KeyError as exc:
            if exc.args and exc.args[0] in varying:
                self.refuse(
                    node,
                    f"{prim.name} with `{exc.args[0]}` known only at run time (it decides "
                    "the number of results)",
                    f"pass `{exc.args[0]}` as a constant",
                )
            count = None
        except (TypeError, ValueError):
            count = None
        if count is None:
            self.refuse(node, f"{prim.name} with these arguments (this form has no rule)")
        names = tuple(self.namer.fresh(hint) for _ in range(count))
        self.block.append(ir.Assign(names, prim, tuple(args), tuple(kwargs), self.line))
        for n in names:
            self.producers[n] = prim
        if count == 1 and not prim.result_list:  # np.linalg.svd(a, compute_uv=False)
            return ir.Var(names[0])
        return ir.Tup(tuple(ir.Var(n) for n in names))

    def expr(self, node: Any, target: str | None, hint: str | None = None) -> ir.Atom:
        """Lower an expression; its final operation binds ``target`` if given."""
        hint = hint or target or "t"
        if isinstance(node, gast.Constant):
            return ir.Const(node.value)
        if isinstance(node, gast.Name):
            return self.name(node)
        if isinstance(node, gast.Dict) and all(
            isinstance(k, gast.Constant) and isinstance(k.value, str) for k in node.keys
        ):
            # a dict with string keys is read by key (params["W"]) or returned (aux values)
            keys = tuple(k.value for k in node.keys)
            return ir.Dct(keys, tuple(self.expr(v, None, hint) for v in node.values))
        if isinstance(node, (gast.Tuple, gast.List)):
            # a list literal is a tuple here: it is only read (np.array([a, b]), np.zeros([2, 3]))
            return ir.Tup(tuple(self.expr(e, None, hint) for e in node.elts))
        if isinstance(node, gast.BinOp):
            fn = registry.BINOP_FUNCTIONS.get(type(node.op).__name__)
            prim = registry.lookup(fn) if fn is not None else None
            if prim is None:
                self.refuse(node, f"the operator `{type(node.op).__name__}`")
            left = self.expr(node.left, None, hint)
            right = self.expr(node.right, None, hint)
            if isinstance(node.op, gast.Add):
                joined = self.concatenation([left, right], target, hint)
                if joined is not None:
                    return joined
            return self.emit(target, hint, prim, [left, right], [], node)
        if isinstance(node, gast.UnaryOp):
            fn = registry.UNARYOP_FUNCTIONS.get(type(node.op).__name__)
            prim = registry.lookup(fn) if fn is not None else None
            if prim is None:
                self.refuse(node, f"the operator `{type(node.op).__name__}`")
            operand = self.expr(node.operand, None, hint)
            if isinstance(operand, ir.Const) and isinstance(node.op, gast.USub):
                return ir.Const(-operand.value)
            return self.emit(target, hint, prim, [operand], [], node)
        if isinstance(node, gast.Compare):
            if len(node.ops) != 1:
                self.refuse(node, "chained comparisons", "compare two values at a time")
            fn = registry.COMPARE_FUNCTIONS.get(type(node.ops[0]).__name__)
            prim = registry.lookup(fn) if fn is not None else None
            if prim is None:
                self.refuse(node, f"the comparison `{type(node.ops[0]).__name__}`")
            left = self.expr(node.left, None, hint)
            right = self.expr(node.comparators[0], None, hint)
            return self.emit(target, hint, prim, [left, right], [], node)
        if isinstance(node, gast.Call):
            return self.call(node, target, hint)
        if isinstance(node, gast.ListComp):
            return self.comprehension(node, target, hint)
        if isinstance(node, gast.IfExp):
            test = self.expr(node.test, None, "cond")
            name = target if target is not None else self.namer.fresh(hint)
            body = self.branch_value(node.body, name, hint)
            orelse = self.branch_value(node.orelse, name, hint)
            self.add_if(test, body, orelse, self.line)
            return ir.Var(name)
        if isinstance(node, gast.BoolOp):
            # `a and b`: a if a is false, else b (`or` the other way round); b is evaluated only
            # when needed, as in Python
            name = target if target is not None else self.namer.fresh(hint)
            first = self.expr(node.values[0], name, hint)
            if first != ir.Var(name):
                self.copy(name, first)
            for value in node.values[1:]:
                rest = self.branch_value(value, name, hint)
                is_and = isinstance(node.op, gast.And)
                self.add_if(ir.Var(name), rest if is_and else [], [] if is_and else rest, self.line)
            return ir.Var(name)
        if isinstance(node, gast.Attribute):
            return self.attribute(node, target, hint)
        if isinstance(node, gast.Subscript):
            value = self.expr(node.value, None, hint)
            index = self.index(node.slice, hint)
            if isinstance(value, ir.Dct):
                if not (isinstance(index, ir.Const) and index.value in value.keys):
                    known = ", ".join(repr(k) for k in value.keys)
                    self.refuse(
                        node.slice,
                        f"this key of a dict argument (its keys: {known})",
                        "index it with one of its keys, written as a string literal",
                    )
                return value.values[value.keys.index(index.value)]
            if (
                isinstance(value, ir.Tup)
                and isinstance(index, ir.Const)
                and type(index.value) is int
                and -len(value.items) <= index.value < len(value.items)
            ):
                return value.items[index.value]
            prim = registry.lookup(registry.operator.getitem)
            assert prim is not None
            return self.emit(target, hint, prim, [value, index], [], node)
        self.refuse_node(node)

    def index(self, node: Any, hint: str) -> ir.Atom:
        if isinstance(node, gast.Slice):
            parts = [
                ir.Const(None) if p is None else self.expr(p, None, hint)
                for p in (node.lower, node.upper, node.step)
            ]
            return ir.Slc(parts[0], parts[1], parts[2])
        if isinstance(node, gast.Tuple):
            return ir.Tup(tuple(self.index(e, hint) for e in node.elts))
        if isinstance(node, gast.List):
            # x[[0, 2, 0]] picks rows 0, 2, 0 (an integer array), it is not x[0, 2, 0]
            rows = ir.Tup(tuple(self.expr(e, None, hint) for e in node.elts))
            return self.call_prim(registry.np.array, [rows], hint)
        return self.expr(node, None, hint)

    def name(self, node: gast.Name) -> ir.Atom:
        if node.id in self.deleted:
            self.refuse(node, f"reading `{node.id}` after `del {node.id}`", "remove the `del`")
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.local_functions:
            self.refuse(node, f"using the local function `{node.id}` as a value", "call it")
        if self.enclosing is not None and self.enclosing.sees(node.id):
            return self.enclosing.name(node)
        value = self.resolve(node)
        if any(value is t for t in (float, int, bool, complex)) and node.id == value.__name__:
            self.free[node.id] = value  # a builtin type as a value: x.astype(float)
            return ir.Free(node.id)
        if isinstance(
            value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
        ) or callable(value):
            self.refuse(
                node,
                f"using the function or module `{node.id}` as a value",
                "call it, or pass its result",
            )
        name = node.id if node.id not in RESERVED else self.namer.fresh(node.id)
        self.free[name] = value
        return self.free_atom(name, value)

    def outside_name(self, preferred: str, obj: Any) -> str:
        """The name generated code gives an object a user's rule calls (one name per object)."""
        for key, value in self.free.items():
            if value is obj and key.isidentifier():
                return key
        if preferred not in self.free and self.root.names_global(preferred, obj):
            self.free[preferred] = obj  # the program calls it by this name too
            return preferred
        name = self.namer.claim(preferred)
        while name in self.free:
            name = self.namer.fresh(preferred)
        self.free[name] = obj
        return name

    def names_global(self, name: str, obj: Any) -> bool:
        """Does ``name`` mean ``obj`` everywhere in this function (never a local of it)?"""
        for n in gast.walk(self.node):
            if isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load):
                return False
        try:
            return self.parsed.scope.lookup(name) is obj
        except KeyError:
            return False

    def free_atom(self, name: str, value: Any) -> ir.Free:
        if isinstance(value, (int, float)):
            self.scalars.add(name)
        return ir.Free(name)

    def resolve(self, node: gast.Name) -> Any:
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.bound:  # bound on another path (the other branch of an `if`)
            raise UnresolvedNameError(
                f"`{node.id}` is used where it may not be assigned",
                self.parsed.loc(node),
                "assign it on every path before reading it",
            )
        try:
            return self.parsed.scope.lookup(node.id)
        except KeyError:
            local = any(
                isinstance(n, gast.Name) and n.id == node.id and isinstance(n.ctx, gast.Store)
                for n in gast.walk(self.node)
            )
            if local:
                raise UnresolvedNameError(
                    f"`{node.id}` is used before it is assigned",
                    self.parsed.loc(node),
                    "assign it first",
                ) from None
            raise UnresolvedNameError(
                f"name `{node.id}` is not defined",
                self.parsed.loc(node),
                "define it (or import it) before transforming the function",
            ) from None

    def sees(self, name: str) -> bool:
        """Is ``name`` a local of this function (or of one it is nested in)?"""
        return (
            name in self.env
            or name in self.local_functions
            or (self.enclosing is not None and self.enclosing.sees(name))
        )

    def static_object(self, node: Any) -> tuple[bool, Any]:
        """Resolve ``name`` or ``module.attr.attr`` to an object when it is not a local value."""
        if isinstance(node, gast.Name):
            if node.id in self.local_functions:
                return True, self.local_functions[node.id]
            if node.id in self.env:
                return False, None
            if self.enclosing is not None and self.enclosing.sees(node.id):
                return self.enclosing.static_object(node)
            return True, self.resolve(node)
        if isinstance(node, gast.Attribute):
            ok, base = self.static_object(node.value)
            if ok and isinstance(base, types.ModuleType):
                try:
                    value = getattr(base, node.attr)
                    scope = self.root.parsed.scope
                    if isinstance(scope, LiveScope):  # `hm.SCALE`: rebinding it is noticed
                        scope._record("attr", base, node.attr, value)
                    return True, value
                except AttributeError:
                    raise UnresolvedNameError(
                        f"module `{base.__name__}` has no attribute `{node.attr}`",
                        self.parsed.loc(node),
                        "check the spelling",
                    ) from None
            # an attribute of a value (W.T, W.shape) is computed by the program, not snapshot
        return False, None

    def call(self, node: gast.Call, target: str | None, hint: str) -> ir.Atom:
        func = node.func
        if isinstance(func, gast.Call):  # adgen.grad(lambda y: x * y)(2.0): nested AD
            ok, maker = self.static_object(func.func)
            kind = nested.entry_points().get(maker) if ok else None
            if kind in ("grad", "value_and_grad"):
                return self.nested_grad(node, kind, func, node.args, node.keywords)
        if _is_pop(node) and func.value.id in self.env and func.value.id in self.multi:
            return self.pop(node, func.value.id, target, hint)
        args: list[ir.Atom] = []
        ok, fn = self.static_object(func)
        if ok and nested.entry_points().get(fn) == "jvp":
            return self.nested_jvp(node)
        if ok and nested.entry_points().get(fn) is not None:
            self.refuse(
                node,
                "this use of adgen inside a differentiated function",
                "call adgen.grad(f)(x), adgen.value_and_grad(f)(x), adgen.jvp(f, (x,), (t,)) "
                "or out, pullback = adgen.vjp(f, x) there",
            )
        if ok and fn is checkpoint:
            self.refuse(
                node,
                "adgen.checkpoint here",
                "it marks a `for` loop: write `for i in adgen.checkpoint(range(n)):`",
            )
        if not ok:
            if isinstance(func, gast.Attribute):
                method = registry.method_function(func.attr)
                if method is None:
                    self.refuse(
                        func,
                        f"the method `.{func.attr}()`",
                        "call the NumPy function instead, e.g. np.sum(x) for x.sum()",
                    )
                fn, pack = method
                args.append(self.expr(func.value, None, hint))
                rest = [self.expr(a, None, hint) for a in node.args]
                if pack and len(rest) > 1:
                    rest = [ir.Tup(tuple(rest))]
                args.extend(rest)
            else:
                self.refuse(
                    func,
                    "calling a computed value",
                    "call a function by its name (adgen must know which function it is)",
                )
        else:
            for a in node.args:
                if isinstance(a, gast.Starred):
                    self.refuse(a, "`*args` in calls", "pass the arguments one by one")
                args.append(self.expr(a, None, hint))
        kwargs: list[tuple[str, ir.Atom]] = []
        for kw in node.keywords:
            if kw.arg is None:
                self.refuse(kw.value, "`**kwargs` in calls", "pass keyword arguments one by one")
            kwargs.append((kw.arg, self.expr(kw.value, None, hint)))
        if fn is registry.np.array and args and isinstance(args[0], ir.Tup):
            args[0] = self.array_rows(args[0], node, hint)
        if isinstance(fn, LocalPullback):
            if len(node.args) != 1 or node.keywords:
                self.refuse(node, "this call of a pullback", "pass one cotangent")
            ct = self.expr(node.args[0], None, "ct")
            code = nested.derivative_code(fn.lifted, "reverse", fn.params)
            outer = self.outer_values(fn.captured)
            result = self.inline_code(node, code, fn.args + outer + [ct])
            if not (isinstance(result, ir.Tup) and isinstance(result.items[1], ir.Tup)):
                raise InternalError("nested reverse-mode code did not return (value, cotangents)")
            return result.items[1]
        if isinstance(fn, LocalDerivative):
            return self.nested_grad(node, fn.kind, fn.maker, node.args, node.keywords)
        prim = registry.lookup(fn)
        if prim is None and hasattr(fn, "adgen_function"):
            fn = self.derivative_function(fn)
        if prim is None and getattr(fn, "adgen_refuse", None) is not None:
            self.refuse(
                func,
                f"differentiating through the function {fn.adgen_refuse} returns",
                "call adgen.grad / adgen.jvp inside instead, or differentiate f itself",
            )
        if prim is None and (getattr(fn, "__module__", None) or "").startswith(f"{rt.__name__}."):
            # adgen's own helpers are differentiated by their rules only (rules/adjoints.py),
            # never by reading their source
            raise NoRuleError(
                f"adgen cannot differentiate its helper rt.{fn.__name__} again (yet)",
                self.parsed.loc(func),
                "differentiate in another order (e.g. forward mode over reverse mode: "
                "adgen.jvp of adgen.grad, adgen.hessian)",
            )
        if prim is not None:
            prim = prim.localize(self.outside_name)  # a user's rule: name its function, helpers
        if prim is None:
            if isinstance(fn, LocalFunction):
                return self.inline(
                    node, fn.parsed(self), None, fn.defaults, args, kwargs, target, fn.enclosing
                )
            if isinstance(fn, types.FunctionType) or (
                getattr(fn, "adgen_user_function", False) and hasattr(fn, "node")
            ):
                parsed, defaults = self.callee(fn, node)
                return self.inline(node, parsed, fn, defaults, args, kwargs, target, None)
            self.no_rule(func, fn)
        return self.emit(target, hint, prim, args, kwargs, node)

    # -- adgen called inside the function: nested derivatives ----------------------------------
    def nested_function(self, node: Any, f: Any) -> tuple[ParsedFunction, list[str], list[str]]:
        """The function ``f`` differentiated inside: its lifted form (the outer variables it
        reads become extra parameters), its own parameters, and those outer variables."""
        if not isinstance(self.root.parsed.scope, LiveScope):
            self.refuse(node, "adgen.grad / adgen.jvp inside a function read statically")
        if isinstance(f, gast.Lambda):
            fdef = nested.as_def(f, "lam")
        elif isinstance(f, gast.Name) and isinstance(
            local := self.local_functions.get(f.id), LocalFunction
        ):
            fdef = local.node
        else:
            ok, obj = self.static_object(f)
            if not (ok and isinstance(obj, types.FunctionType)):
                self.refuse(
                    f,
                    "differentiating this function inside another",
                    "pass a lambda, a nested def or a module-level function",
                )
            parsed, _ = self.callee(obj, f)  # module-level: reads no outer variables
            return parsed, [a.id for a in parsed.node.args.args], []
        if fdef.args.defaults or fdef.args.vararg or fdef.args.kwarg or fdef.args.kwonlyargs:
            self.refuse(fdef, "defaults, *args or **kwargs on a function differentiated inside")
        captured = [c for c in nested.free_names(fdef) if self.sees(c)]
        for c in captured:
            lowerer: Lowerer | None = self
            while lowerer is not None:
                if c in lowerer.local_functions:
                    self.refuse(
                        f,
                        f"a function differentiated inside that calls the local function `{c}`",
                        "make that helper a module-level function",
                    )
                lowerer = lowerer.enclosing
        params = [a.id for a in fdef.args.args]
        return nested.lifted(fdef, captured, self.parsed), params, captured

    def outer_values(self, captured: list[str]) -> list[ir.Atom]:
        return [
            self.name(gast.Name(id=c, ctx=gast.Load(), annotation=None, type_comment=None))
            for c in captured
        ]

    def inline_code(self, node: Any, code: Any, args: list[ir.Atom]) -> ir.Atom:
        """Inline adgen-generated code (a nested derivative) called with ``args``."""
        assert isinstance(code, types.FunctionType)
        parsed, defaults = self.callee(code, node)
        return self.inline(node, parsed, code, defaults, args, [], None, None)

    def nested_wrt(self, node: Any, params: list[str], wrt: Any) -> tuple[list[str], bool]:
        ok, value = (True, 0) if wrt is None else _literal(wrt)
        single = isinstance(value, (int, str)) and not isinstance(value, bool)
        items = [value] if single else value
        if not ok or not isinstance(items, (list, tuple)) or not items:
            self.refuse(node, "this `wrt`", "write wrt as an integer, a name, or a tuple of those")
        names = []
        for item in items:
            if (
                isinstance(item, int)
                and not isinstance(item, bool)
                and -len(params) <= item < len(params)
            ):
                names.append(params[item])
            elif isinstance(item, str) and item in params:
                names.append(item)
            else:
                self.refuse(node, f"wrt={item!r} here", f"the parameters are {', '.join(params)}")
        return names, single

    def nested_grad(
        self, node: Any, kind: str, maker: gast.Call, call_args: list[Any], keywords: list[Any]
    ) -> ir.Atom:
        """``adgen.grad(F, wrt)(args)`` (or value_and_grad) inside the differentiated function:
        F's generated reverse-mode code, inlined (see :mod:`adgen.nested`)."""
        if keywords or any(isinstance(a, gast.Starred) for a in call_args):
            self.refuse(node, "keyword or starred arguments here", "pass the arguments in order")
        wrt_node = maker.args[1] if len(maker.args) > 1 else None
        for kw in maker.keywords:
            if kw.arg == "wrt":
                wrt_node = kw.value
            elif kw.arg == "has_aux":
                ok, aux = _literal(kw.value)
                if not ok or aux:
                    self.refuse(kw.value, "has_aux inside a differentiated function")
            else:
                self.refuse(kw.value, f"the argument `{kw.arg}` here")
        if len(maker.args) < 1 or len(maker.args) > 2:
            self.refuse(maker, f"this call of adgen.{kind}", f"write adgen.{kind}(f, wrt)")
        f = maker.args[0]
        ok, obj = self.static_object(f)
        if ok and (isinstance(obj, types.FunctionType) or hasattr(obj, "adgen_function")):
            # a module-level function (or derivative): no outer variables to capture
            from . import api

            ok_wrt, wrt = (True, 0) if wrt_node is None else _literal(wrt_node)
            if not ok_wrt:
                self.refuse(wrt_node, "this `wrt`", "write wrt as a constant")
            made = (api.grad if kind == "grad" else api.value_and_grad)(obj, wrt)
            fn = self.derivative_function(made)
            parsed, defaults = self.callee(fn, node)
            args = [self.expr(a, None, "arg") for a in call_args]
            return self.inline(node, parsed, fn, defaults, args, [], None, None)
        lifted, params, captured = self.nested_function(node, f)
        wrt, single = self.nested_wrt(wrt_node or maker, params, wrt_node)
        if len(call_args) != len(params):
            self.refuse(node, f"calling it with {len(call_args)} arguments", "check the call")
        args = [self.expr(a, None, "arg") for a in call_args]
        code = nested.derivative_code(lifted, "reverse", wrt)
        result = self.inline_code(node, code, args + self.outer_values(captured) + [ir.Const(1.0)])
        if not (isinstance(result, ir.Tup) and isinstance(result.items[1], ir.Tup)):
            raise InternalError("nested reverse-mode code did not return (value, gradients)")
        value, grads = result.items[0], result.items[1].items
        gradient: ir.Atom = grads[0] if single else ir.Tup(tuple(grads))
        return gradient if kind == "grad" else ir.Tup((value, gradient))

    def nested_vjp(self, node: gast.Call, out: Any, pullback: Any) -> None:
        """``out, pullback = adgen.vjp(F, *primals)`` inside the differentiated function: out
        is F's value; calling ``pullback(ct)`` inlines F's generated reverse-mode code."""
        if len(node.args) < 2 or node.keywords:
            self.refuse(node, "this call of adgen.vjp", "write adgen.vjp(f, *primals)")
        if any(isinstance(a, gast.Starred) for a in node.args):
            self.refuse(node, "starred arguments here", "pass the primals one by one")
        lifted, params, captured = self.nested_function(node, node.args[0])
        if len(node.args) - 1 != len(params):
            self.refuse(node, f"passing {len(node.args) - 1} primals for {len(params)} parameters")
        args = [self.expr(a, None, "arg") for a in node.args[1:]]
        value = self.inline(
            node, lifted, None, {}, args + self.outer_values(captured), [], None, None
        )
        self.bind_target(out, value)
        self.local_functions[pullback.id] = LocalPullback(lifted, params, captured, args)
        self.bound.add(pullback.id)

    def nested_jvp(self, node: gast.Call) -> ir.Atom:
        """``adgen.jvp(F, (a, b), (ta, tb))`` inside the differentiated function: F's generated
        forward-mode code, inlined; ``None`` tangents hold arguments constant."""
        if len(node.args) != 3 or node.keywords:
            self.refuse(
                node, "this call of adgen.jvp", "write adgen.jvp(f, (args...), (tangents...))"
            )
        f, primals, tangents = node.args
        for part in (primals, tangents):
            if not isinstance(part, (gast.Tuple, gast.List)):
                self.refuse(part, "primals or tangents that are not written as a tuple here")
        lifted, params, captured = self.nested_function(node, f)
        if len(primals.elts) != len(params) or len(tangents.elts) > len(params):
            self.refuse(node, "primals or tangents that do not match the parameters")
        wrt = [
            p
            for p, t in zip(params, tangents.elts)
            if not (isinstance(t, gast.Constant) and t.value is None)
        ]
        args = [self.expr(a, None, "arg") for a in primals.elts]
        dots = [
            self.expr(t, None, "tangent")
            for t in tangents.elts
            if not (isinstance(t, gast.Constant) and t.value is None)
        ]
        if not wrt:
            self.refuse(tangents, "adgen.jvp with every tangent None", "pass a tangent")
        code = nested.derivative_code(lifted, "forward", wrt)
        return self.inline_code(node, code, args + self.outer_values(captured) + dots)

    # -- calls to the user's own functions: inlined ---------------------------------------------
    def derivative_function(self, obj: Any) -> types.FunctionType:
        """A call of an adgen derivative (``g = adgen.grad(f)`` called as ``g(x)``): the plain
        function computing it, whose source calls adgen's generated code, is inlined -- so
        the derivative is taken through the generated code, never through ``f``."""
        fn: types.FunctionType = obj.adgen_function()
        root_scope = self.root.parsed.scope
        if isinstance(root_scope, LiveScope):
            root_scope._record("adgen", obj, "adgen_function", fn)
        return fn

    def callee(self, fn: Any, node: Any) -> tuple[ParsedFunction, dict[str, ir.Atom]]:
        """Parse a called Python function; its default values become atoms."""
        if isinstance(fn, types.FunctionType):
            root_scope = self.root.parsed.scope
            if isinstance(root_scope, LiveScope):
                # the callee's lookups count as the caller's: redefining them is noticed
                scope = LiveScope(fn, root_scope.seen, root_scope._keys)
                scope._record("attr", fn, "__code__", fn.__code__)
                scope._record("attr", fn, "__defaults__", fn.__defaults__)
            else:
                scope = LiveScope(fn)
            try:
                parsed = parse_function(fn, scope)
            except UnsupportedSyntaxError:
                raise
            except AdgenError as exc:
                raise NoRuleError(
                    f"cannot read the source of `{_qualname(fn)}`, called here ({exc.message})",
                    self.parsed.loc(node),
                    "register a derivative rule for it with @adgen.rules.rule",
                ) from None
            names = [a.id for a in parsed.node.args.args]
            values = fn.__defaults__ or ()
            defaults = {
                p: self.value_atom(v, p) for p, v in zip(names[len(names) - len(values) :], values)
            }
            return parsed, defaults
        parsed = ParsedFunction(
            node=fn.node,
            name=fn.node.name,
            filename=fn.scope.filename,
            line_offset=0,
            col_offset=0,
            lines=fn.scope.lines,
            scope=fn.scope,
        )
        names = [a.id for a in fn.node.args.args]
        defaults = {}
        for p, d in zip(names[len(names) - len(fn.node.args.defaults) :], fn.node.args.defaults):
            if not isinstance(d, gast.Constant):
                self.refuse(d, "non-constant default values in a file read statically")
            defaults[p] = ir.Const(d.value)
        return parsed, defaults

    def value_atom(self, value: Any, hint: str) -> ir.Atom:
        """An atom for a Python value known at transform time (a default argument)."""
        if value is None or isinstance(value, (bool, int, float, str)):
            return ir.Const(value)
        name = self.namer.fresh(hint)
        self.free[name] = value
        return self.free_atom(name, value)

    def inline(
        self,
        node: Any,
        parsed: ParsedFunction,
        fn: Any,
        defaults: dict[str, ir.Atom],
        args: list[ir.Atom],
        kwargs: list[tuple[str, ir.Atom]],
        target: str | None,
        enclosing: Lowerer | None,
    ) -> ir.Atom:
        """Lower a call to the user's own function by lowering its body in place."""
        identity = fn.__code__ if isinstance(fn, types.FunctionType) else parsed.node
        if any(identity is f for f in self.root.inlining):
            if not isinstance(fn, types.FunctionType):
                self.refuse(
                    node,
                    f"recursive calls of `{parsed.name}` here (a nested or statically read "
                    "function)",
                    "make it a module-level function, or write the recursion as a loop",
                )
            return self.recursive_call(node, fn, parsed, defaults, args, kwargs)
        if len(self.root.inlining) >= MAX_INLINE_DEPTH:
            self.refuse(
                node, f"calls nested more than {MAX_INLINE_DEPTH} deep", "flatten the helpers"
            )
        sub = Lowerer(parsed, parent=self, fn=fn if isinstance(fn, types.FunctionType) else None)
        sub.enclosing = enclosing
        sub.call_target = target
        sub.block = self.block
        params = sub.params
        if len(args) > len(params):
            self.refuse(
                node, f"calling `{parsed.name}` with {len(args)} arguments", "check the call"
            )
        bound = dict(zip(params, args))
        for k, v in kwargs:
            if k not in params or k in bound:
                self.refuse(
                    node, f"the argument `{k}` in this call of `{parsed.name}`", "check the call"
                )
            bound[k] = v
        for p in params:
            if p not in bound:
                if p not in defaults:
                    self.refuse(
                        node, f"calling `{parsed.name}` without `{p}`", "pass every argument"
                    )
                bound[p] = defaults[p]
        self.root.inlining.append(identity)
        try:
            return sub.lower_inlined(bound)
        finally:
            self.root.inlining.pop()

    def recursive_call(
        self,
        node: Any,
        fn: types.FunctionType,
        parsed: ParsedFunction,
        defaults: dict[str, ir.Atom],
        args: list[ir.Atom],
        kwargs: list[tuple[str, ir.Atom]],
    ) -> ir.Atom:
        """A call that would inline a function into itself: kept as a call, whose derivative is
        the function's own generated derivative (see :mod:`adgen.calls`)."""
        params = [a.id for a in parsed.node.args.args]
        if parsed.node.args.vararg or parsed.node.args.kwarg or parsed.node.args.kwonlyargs:
            self.refuse(node, "recursive calls of functions with *args or keyword-only parameters")
        bound = dict(zip(params, args))
        for k, v in kwargs:
            if k not in params or k in bound:
                self.refuse(node, f"the argument `{k}` in this call of `{parsed.name}`")
            bound[k] = v
        for p in params:
            if p not in bound:
                if p not in defaults:
                    self.refuse(node, f"calling `{parsed.name}` without `{p}`", "pass each one")
                bound[p] = defaults[p]
        spelled = self.root.callee_names.get(fn)
        if spelled is None:
            spelled = self.namer.claim(fn.__name__)
            self.root.callee_names[fn] = spelled
            self.free[spelled] = fn
        prim = registry.user_call(spelled, fn, params)
        name = self.namer.fresh(f"{parsed.name}_out")
        self.block.append(ir.Assign((name,), prim, tuple(bound[p] for p in params), (), self.line))
        self.producers[name] = prim
        return ir.Var(name)

    def lower_inlined(self, bound: dict[str, ir.Atom]) -> ir.Atom:
        args = self.node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            self.refuse(self.node, "`*args`, `**kwargs` and keyword-only parameters", "list them")
        for p, atom in bound.items():
            if p in self.multi:
                self.copy(self.multi[p], atom)
                self.env[p] = ir.Var(self.multi[p])
            else:
                self.env[p] = atom
        body = list(self.node.body)
        if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
            body = body[1:]
        self.check_returns(body)
        body = self.single_exit(body)
        if not isinstance(body[-1], gast.Return):
            self.result = self.call_target or self.namer.claim(self.prefix + "out")
            self.result_items = self.tuple_result(body, self.prefix + "out")
        self.lower_block(body)
        if self.result_items:
            return ir.Tup(tuple(ir.Var(n) for n in self.result_items))
        if self.result is not None:
            return ir.Var(self.result)
        assert self.returned is not None
        return self.returned

    def define_local_function(self, node: Any, stmt: Any, name: str | None = None) -> None:
        """A nested ``def`` or a lambda bound to a name: inlined where it is called, seeing the
        enclosing function's variables as they are at the call."""
        if isinstance(node, gast.FunctionDef):
            if node.decorator_list:
                self.refuse(node, "decorators on nested functions", "define it without decorators")
            name = node.name
        else:
            lam = node
            ret = gast.Return(value=lam.body)
            gast.copy_location(ret, lam.body)
            node = gast.FunctionDef(
                name=name,
                args=lam.args,
                body=[ret],
                decorator_list=[],
                returns=None,
                type_comment=None,
                type_params=[],
            )
            gast.copy_location(node, lam)
        assert name is not None
        defaults = {}
        names = [a.id for a in node.args.args]
        for p, d in zip(names[len(names) - len(node.args.defaults) :], node.args.defaults):
            defaults[p] = self.expr(d, None, p)
        self.local_functions[name] = LocalFunction(node, self, defaults)
        self.bound.add(name)

    def array_rows(self, seq: ir.Tup, node: Any, hint: str) -> ir.Tup:
        """``np.array([[a, b], [c, d]])``: each nested row becomes an array first."""
        prim = registry.lookup(registry.np.array)
        assert prim is not None
        items: list[ir.Atom] = []
        for item in seq.items:
            if isinstance(item, ir.Tup) and any(True for _ in ir.atom_vars(item)):
                inner = self.array_rows(item, node, hint)
                items.append(self.emit(None, hint, prim, [inner], [], node))
            else:
                items.append(item)
        return ir.Tup(tuple(items))

    def no_rule(self, node: Any, fn: Any) -> NoReturn:
        label = _qualname(fn)
        if isinstance(fn, types.FunctionType) or getattr(fn, "adgen_user_function", False):
            raise NoRuleError(
                f"calls to other Python functions (`{label}`) are not differentiated yet",
                self.parsed.loc(node),
                "inline the helper's body, or register a rule for it with @adgen.rules.rule",
            )
        raise NoRuleError(
            f"adgen has no derivative rule for `{label}`",
            self.parsed.loc(node),
            "register one with @adgen.rules.rule(...) (see docs/rules.md), or, if it has no "
            "derivative, adgen.rules.nondifferentiable(...)",
        )

    def attribute(self, node: gast.Attribute, target: str | None, hint: str) -> ir.Atom:
        ok, obj = self.static_object(node)
        if ok:
            base_ok, base = self.static_object(node.value)
            if isinstance(obj, types.ModuleType) or (callable(obj) and not isinstance(obj, type)):
                self.refuse(node, f"using `{node.attr}` as a value", "call it, or pass its result")
            alias = _module_alias(base) if base_ok else None
            if alias is not None:
                return self.free_atom(f"{alias}.{node.attr}", obj)
            name = self.namer.fresh(node.attr)
            self.free[name] = obj
            return self.free_atom(name, obj)
        value = self.expr(node.value, None, hint)
        prim = registry.lookup_attribute(node.attr)
        if prim is None:
            self.refuse(node, f"the attribute `.{node.attr}`", "use the NumPy function instead")
        return self.emit(target, hint, prim, [value], [], node)


def _assigned_in_blocks(body: list[Any]) -> set[str]:
    """User names assigned (or used as loop variables) inside if/for/while blocks."""
    names: set[str] = set()

    def stored(node: Any) -> set[str]:
        return {
            n.id
            for n in gast.walk(node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
        }

    for stmt in body:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            names |= stored(stmt)
    return names


def _name(id_: str, store: bool = False) -> Any:
    ctx = gast.Store() if store else gast.Load()
    return gast.Name(id=id_, ctx=ctx, annotation=None, type_comment=None)


def _set_flag(flag: str, value: bool, where: Any) -> Any:
    stmt = gast.Assign(
        targets=[_name(flag, True)], value=gast.Constant(value=value, kind=None), type_comment=None
    )
    return gast.copy_location(stmt, where)


def _jumps(stmts: list[Any], kind: type) -> bool:
    """Does this loop body hold a ``break``/``continue`` of its own (not of a nested loop)?"""
    for stmt in stmts:
        if isinstance(stmt, kind):
            return True
        if isinstance(stmt, gast.If) and (_jumps(stmt.body, kind) or _jumps(stmt.orelse, kind)):
            return True
    return False


def _structure_jumps(stmts: list[Any], namer: _UserNamer) -> list[Any]:
    """Rewrite ``break`` and ``continue`` as flags guarding the rest of the loop body, so loops
    stay structured (a ``for`` loop keeps running its remaining iterations as no-ops after a
    ``break``; a ``while`` loop stops, as its condition tests the flag first)."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, gast.If):
            stmt.body = _structure_jumps(stmt.body, namer)
            stmt.orelse = _structure_jumps(stmt.orelse, namer)
        elif isinstance(stmt, (gast.For, gast.While)):
            body = _structure_jumps(stmt.body, namer)
            brk = namer.fresh("broke") if _jumps(body, gast.Break) else None
            cont = namer.fresh("skipped") if _jumps(body, gast.Continue) else None
            if brk or cont:
                body = _guard(body, brk, cont)
                if cont:
                    body = [_set_flag(cont, False, stmt), *body]
                if brk and isinstance(stmt, gast.For):
                    # after a `break` the remaining iterations are no-ops, and must not move
                    # the loop variables on: the loop binds fresh names, the guarded body
                    # copies them to the user's
                    body = [*_loop_targets_inside(stmt, namer), *body]
                    guard = gast.UnaryOp(op=gast.Not(), operand=_name(brk))
                    body = [gast.copy_location(gast.If(test=guard, body=body, orelse=[]), stmt)]
                elif brk:
                    stmt.test = gast.BoolOp(
                        op=gast.And(),
                        values=[gast.UnaryOp(op=gast.Not(), operand=_name(brk)), stmt.test],
                    )
                    gast.copy_location(stmt.test, stmt)
                if brk:
                    out.append(_set_flag(brk, False, stmt))
            stmt.body = body
        out.append(stmt)
    return out


def _loop_targets_inside(loop: Any, namer: _UserNamer) -> list[Any]:
    """Give the names ``loop`` binds (its target, or the names of a tuple target) fresh names;
    the assignments, to put at the start of the body, that bind the user's names from them."""
    parts = loop.target.elts if isinstance(loop.target, gast.Tuple) else [loop.target]
    copies = []
    for k, part in enumerate(parts):
        if not isinstance(part, gast.Name):
            continue  # nested unpacking (refused when lowered)
        fresh = gast.copy_location(_name(namer.fresh(f"{part.id}_next"), True), part)
        assign = gast.Assign(targets=[part], value=_name(fresh.id), type_comment=None)
        copies.append(gast.copy_location(assign, part))
        if isinstance(loop.target, gast.Tuple):
            loop.target.elts[k] = fresh
        else:
            loop.target = fresh
    return copies


def _guard(stmts: list[Any], brk: str | None, cont: str | None) -> list[Any]:
    """``break``/``continue`` set their flag; the statements after one run only if unset."""
    out: list[Any] = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, gast.Break):
            assert brk is not None
            out.append(_set_flag(brk, True, stmt))
            return out
        if isinstance(stmt, gast.Continue):
            assert cont is not None
            out.append(_set_flag(cont, True, stmt))
            return out
        if isinstance(stmt, gast.If) and (
            _jumps([stmt], gast.Break) or _jumps([stmt], gast.Continue)
        ):
            stmt.body = _guard(stmt.body, brk, cont)
            stmt.orelse = _guard(stmt.orelse, brk, cont)
            out.append(stmt)
            rest = stmts[i + 1 :]
            if rest:
                flags = [_name(f) for f in (brk, cont) if f]
                test = flags[0] if len(flags) == 1 else gast.BoolOp(op=gast.Or(), values=flags)
                guard = gast.UnaryOp(op=gast.Not(), operand=test)
                out.append(
                    gast.copy_location(
                        gast.If(test=guard, body=_guard(rest, brk, cont), orelse=[]), stmt
                    )
                )
            return out
        out.append(stmt)
    return out


def _written_in_place(nodes: list[Any]) -> set[str]:
    """Names written through a subscript (``y[i] = v``, ``y[i] += v``) or appended to
    (``nodes``: every node of a tree, as :func:`gast.walk` finds them)."""
    names = set(_appended(nodes))
    for n in nodes:
        targets = (
            n.targets
            if isinstance(n, gast.Assign)
            else [n.target]
            if isinstance(n, gast.AugAssign)
            else []
        )
        for t in targets:
            if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                names.add(t.value.id)
    return names


def _rebound(nodes: list[Any]) -> set[str]:
    """Names ``nodes`` bind to a new object (assignment, loop or ``with`` targets); ``+=`` and
    its kin are left out, as they change an array in place (:func:`_written_in_place`)."""
    names: set[str] = set()
    for n in nodes:
        if isinstance(n, gast.AugAssign):
            continue
        targets = (
            n.targets
            if isinstance(n, gast.Assign)
            else [n.target]
            if isinstance(n, (gast.For, gast.AnnAssign, gast.NamedExpr))
            else []
        )
        for t in targets:
            names.update(
                m.id for m in walk(t) if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Store)
            )
    return names


def _literal(node: Any) -> tuple[bool, Any]:
    """``(True, value)`` for a literal written in the source (``1``, ``"x"``, ``(0, 1)``)."""
    try:
        return True, ast.literal_eval(gast.gast_to_ast(node))
    except (ValueError, TypeError, SyntaxError):
        return False, None


def _appended(nodes: list[Any]) -> set[str]:
    """Names of lists grown with ``xs.append(v)`` or shrunk with ``xs.pop()`` (``nodes``: every
    node of a tree)."""
    grown = {
        n.value.func.value.id
        for n in nodes
        if isinstance(n, gast.Expr)
        and isinstance(n.value, gast.Call)
        and isinstance(n.value.func, gast.Attribute)
        and n.value.func.attr == "append"
        and isinstance(n.value.func.value, gast.Name)
    }
    return grown | {n.func.value.id for n in nodes if _is_pop(n)} | _concatenated(nodes)


def _concatenated(nodes: list[Any]) -> set[str]:
    """Names bound to a list concatenation with a list literal (``xs = xs + [v]``,
    ``ys = [v] + xs``, ``xs += [v]``): real lists, grown by appends (``nodes``: every node of
    a tree)."""
    names = set()
    for n in nodes:
        if (
            isinstance(n, gast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], gast.Name)
            and isinstance(n.value, gast.BinOp)
            and isinstance(n.value.op, gast.Add)
            and (isinstance(n.value.left, gast.List) or isinstance(n.value.right, gast.List))
        ):
            names.add(n.targets[0].id)
        elif (
            isinstance(n, gast.AugAssign)
            and isinstance(n.target, gast.Name)
            and isinstance(n.op, gast.Add)
            and isinstance(n.value, gast.List)
        ):
            names.add(n.target.id)
    return names


def _popped_into(nodes: list[Any], lists: set[str]) -> set[str]:
    """Names ``v`` of the statements ``v = xs.pop()`` that pop from one of ``lists``."""
    return {
        n.targets[0].id
        for n in nodes
        if isinstance(n, gast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], gast.Name)
        and _is_pop(n.value)
        and n.value.func.value.id in lists
    }


def _is_pop(node: Any) -> bool:
    """``xs.pop()`` (the last item, taken off the list)."""
    return (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and node.func.attr == "pop"
        and isinstance(node.func.value, gast.Name)
        and not node.args
        and not node.keywords
    )


def _views_of(node: Any, name: str, whole_only: bool = False) -> bool:
    """Could this expression's value share memory with ``name``'s array? (``whole_only``:
    only the object itself counts, not its items -- for lists.)"""
    if isinstance(node, gast.Name):
        return node.id == name
    if isinstance(node, (gast.Subscript, gast.Attribute)):
        return not whole_only and _views_of(node.value, name)
    if isinstance(node, gast.Tuple):
        return any(_views_of(e, name) for e in node.elts)
    if isinstance(node, gast.IfExp):
        return _views_of(node.body, name) or _views_of(node.orelse, name)
    if isinstance(node, gast.Call):
        if whole_only and _is_pop(node):
            return False  # an item of the list, not the list
        if isinstance(node.func, gast.Attribute) and _views_of(node.func.value, name):
            return True
        return any(_views_of(a, name) for a in node.args)
    return False


def _contains_return(node: Any) -> bool:
    """Does this statement hold a ``return`` of its own (not one of a nested ``def``)?"""
    return _find_return(node) is not None


def _find_return(node: Any) -> Any:
    if isinstance(node, gast.Return):
        return node
    if isinstance(node, (gast.FunctionDef, gast.Lambda)):
        return None
    for child in gast.iter_child_nodes(node):
        found = _find_return(child)
        if found is not None:
            return found
    return None


def _returns(node: Any) -> list[Any]:
    """The ``return`` statements of this statement (not those of a nested ``def``)."""
    if isinstance(node, gast.Return):
        return [node]
    if isinstance(node, (gast.FunctionDef, gast.Lambda)):
        return []
    return [r for child in gast.iter_child_nodes(node) for r in _returns(child)]


def _always_returns(stmts: list[Any]) -> bool:
    """Does every path through these statements end in a ``return``?"""
    for stmt in stmts:
        if isinstance(stmt, gast.Return):
            return True
        if (
            isinstance(stmt, gast.If)
            and _always_returns(stmt.body)
            and _always_returns(stmt.orelse)
        ):
            return True
    return False


def _module_alias(module: Any) -> str | None:
    for alias, mod in registry._SPELLING_MODULES:
        if module is mod:
            return alias
    return None


def _qualname(fn: Any) -> str:
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{name}" if module and module != "builtins" else name


def lower(parsed: ParsedFunction, structure: dict[str, trees.Desc] | None = None) -> ir.Function:
    """Lower a parsed function to IR (raising adgen errors that point at the source).

    ``structure`` gives the shape of tree arguments (dicts, lists, tuples of arrays): their
    leaves become parameters of their own.
    """
    return Lowerer(parsed, structure=structure).lower()


def _tree_atom(desc: trees.Desc, leaves: Any) -> ir.Atom:
    if not trees.is_tree(desc):
        return ir.Var(next(leaves))
    if desc[0] == "dict":
        return ir.Dct(tuple(desc[1]), tuple(_tree_atom(d, leaves) for d in desc[2]))
    return ir.Tup(tuple(_tree_atom(d, leaves) for d in desc[1]))


def _constant(atom: ir.Atom) -> tuple[bool, Any]:
    """The Python value of an atom made only of constants (a number, a tuple of numbers)."""
    if isinstance(atom, ir.Const):
        return True, atom.value
    if isinstance(atom, ir.Tup):
        values = [_constant(a) for a in atom.items]
        if all(known for known, _ in values):
            return True, tuple(v for _, v in values)
    return False, None
