# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""Lower the function's body and its statements.

The entry :meth:`~StatementsMixin.lower` (a function's whole body: every path must end in a
``return``; code after an early return moves into the other branch, so each ``return`` ends a
path), the dispatch on a statement's kind (:meth:`~StatementsMixin.statement`) and one method per
kind: assignments and the names they bind (tuple unpacking included), augmented assignments,
``return``, ``if``, ``del``, ``assert`` and expression statements. Loops are lowered in
:mod:`adgen.frontend.lower.loops`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gast

from adgen import ir, seam
from adgen.frontend.lower.calls import LocalDerivative
from adgen.frontend.lower.identities import _raises
from adgen.frontend.lower.state import LowererState
from adgen.frontend.lower.syntax import _concatenated, _is_append, _is_pop, _written_in_place
from adgen.names import RESERVED
from adgen.pyast import walk
from adgen.rules import registry, runtime

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer


# statements that can hold a `return` the single-exit rewriting does not see through
_OPAQUE_BLOCKS = tuple(
    t for t in (gast.Try, getattr(gast, "TryStar", None), gast.With, gast.Match) if t
) + (gast.AsyncWith, gast.AsyncFor)


class StatementsMixin(LowererState):
    """The function body and its statements."""

    # -- entry ----------------------------------------------------------------------------------
    def lower(self: Lowerer) -> ir.Function:
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
        self.refuse_generators()
        body = list(self.node.body)
        if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
            body = body[1:]  # docstring
        self.check_returns(body)
        body = self.single_exit(body)
        self.bind_function_defaults()
        for p in self.params:  # an argument the code is made for None: that constant
            kind = self.kinds.get(p) if self is self.root and p not in self.multi else None
            if kind in ("none", "true", "false"):  # (None, or a bool: an option's value)
                self.env[p] = ir.Const({"none": None, "true": True, "false": False}[kind])
            elif isinstance(kind, tuple) and kind[0] == "str":  # (an option's name)
                self.env[p] = ir.Const(kind[1])
        self.note_param_tuples({p: self.env[p] for p in self.params if p in self.env})
        for p in self.params:
            if p in self.multi and isinstance(self.env[p], (ir.Tup, ir.Dct)):
                # a tuple, list or dict argument that blocks rebind: its leaves are its first
                # value (read through the names the blocks rebind, not the leaves themselves)
                self.bind(p, self.multi[p], self.env[p])
        if any(isinstance(s, gast.If) for s in body) and not isinstance(body[-1], gast.Return):
            # returns inside branches bind one result name; the function returns it at the end
            self.result = self.namer.claim("out")
            self.result_items = self.tuple_result(body, "out")
        self.lowered_body = body
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
    def statement(self: Lowerer, stmt: Any) -> bool:
        """Lower one statement; True if it was a ``return``."""
        if isinstance(stmt, (gast.Assign, gast.AugAssign)) and self.assign_nonlocal(stmt):
            return False  # (`nonlocal idx; idx += n`: the enclosing function's variable)
        if isinstance(stmt, gast.Assign):
            self.lower_assign(stmt)
            return False
        if isinstance(stmt, gast.AugAssign):
            self.lower_aug_assign(stmt)
            return False
        if isinstance(stmt, gast.Nonlocal) and set(stmt.names) <= self.nonlocals:
            return False  # (declared: what it binds is bound in the enclosing function)
        if isinstance(stmt, gast.Return):
            self.lower_return(stmt)
            return True
        if isinstance(stmt, gast.Pass):
            return False
        if isinstance(stmt, gast.Raise):
            self.lower_raise(stmt)  # copied as written: the path ends there
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
        if isinstance(stmt, (gast.Import, gast.ImportFrom)):
            self.lower_import(stmt)
            return False
        if isinstance(stmt, gast.If):
            self.lower_if(stmt)
            return False
        if isinstance(stmt, gast.For):
            self.lower_for(stmt)
            return False
        if isinstance(stmt, gast.While):
            self.lower_while(stmt)
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
            self.lower_expression_statement(stmt)
            return False
        self.refuse_node(stmt)

    def lower_assign(self: Lowerer, stmt: Any) -> None:
        """An assignment: ``y[i] = v``, ``g = adgen.grad(...)``, ``out, pb = adgen.vjp(...)``,
        ``f = lambda ...``, ``a = b = expr`` or a plain one."""
        if self.assign_container(stmt):
            return  # params["gamma"] = g of a dict known key by key; args = list(args)
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Subscript):
            self.write_in_place(stmt, stmt.targets[0], stmt.value, None)
            return
        if (
            len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Call)
        ):
            if self.written_out(stmt, stmt.value, stmt.targets[0].id):  # K = np.exp(K, out=K)
                return
            ok, maker = self.static_object(stmt.value.func)
            kind = seam.entry_kind(maker) if ok else None
            if kind in ("grad", "value_and_grad"):  # g = adgen.grad(lambda y: ...)
                self.local_functions[stmt.targets[0].id] = LocalDerivative(kind, stmt.value)
                self.bound.add(stmt.targets[0].id)
                return
        if (
            len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Tuple)
            and len(stmt.targets[0].elts) == 2
            and all(isinstance(t, gast.Name) for t in stmt.targets[0].elts)
            and isinstance(stmt.value, gast.Call)
        ):
            ok, maker = self.static_object(stmt.value.func)
            if ok and seam.entry_kind(maker) == "vjp":  # out, pb = adgen.vjp(F, x)
                self.nested_vjp(stmt.value, *stmt.targets[0].elts)
                return
        chosen = self.decided_choice(stmt)
        if chosen is not None:  # `f = xp.median if is_numpy(xp) else lambda x, axis: ...`
            self.lower_assign(chosen)
            return
        if (
            isinstance(stmt.value, gast.Lambda)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
        ):
            self.define_local_function(stmt.value, stmt, stmt.targets[0].id)
            return
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Attribute):
            self.assign_attribute(stmt.targets[0], stmt.value)  # self.W = W
            return
        if self.assign_namespace(stmt):
            return  # xp = array_namespace(x)
        if (
            len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and self.assign_static(stmt.targets[0].id, stmt.value)
        ):
            return  # m = Linear(W, b); f = np.tanh; step = self.step
        if self.assign_call_result(stmt):
            return  # k = helper(...): a function or an object it returns, or a value
        if len(stmt.targets) != 1:
            # a = b = expr: evaluate once, bind every target
            atom = self.expr(stmt.value, None)
            for target in stmt.targets:
                self.bind_target(target, atom)
            return
        self.assign(stmt.targets[0], stmt.value)

    def lower_aug_assign(self: Lowerer, stmt: Any) -> None:
        """``y[i] += v`` (in place) or ``y += v`` (``y = y + v`` where nothing else sees y)."""
        if self.assign_static_dict(stmt.target, stmt.value, stmt.op, stmt):
            return  # counts["n"] += 1 of a dict known key by key
        if isinstance(stmt.target, gast.Subscript):
            self.write_in_place(stmt, stmt.target, stmt.value, stmt.op)
            return
        if isinstance(stmt.target, gast.Attribute):  # self.n += 1
            self.update_attribute(stmt)
            return
        if not isinstance(stmt.target, gast.Name):
            self.refuse(stmt, "augmented assignment to subscripts or attributes", "write y = y + v")
        if self.updated_through(stmt):  # `X -= m` of the array a caller passed and owns
            return
        self.check_in_place(stmt)
        binop = gast.BinOp(
            left=gast.Name(id=stmt.target.id, ctx=gast.Load(), annotation=None, type_comment=None),
            op=stmt.op,
            right=stmt.value,
        )
        gast.copy_location(binop, stmt)
        self.assign(stmt.target, binop, augmented=True)

    def lower_return(self: Lowerer, stmt: Any) -> None:
        """``return v``: the function's result, the caller's value (an inlined call), or, where
        returns stand inside branches, the result name(s) they all bind."""
        if stmt.value is None:
            self.refuse(stmt, "`return` without a value", "return the value to differentiate")
        out = self.written_out(stmt, stmt.value, None)  # return np.exp(K, out=K)
        if out is not None:
            name = gast.copy_location(gast.Name(out, gast.Load(), None, None), stmt)
            stmt = gast.copy_location(gast.Return(value=name), stmt)
        # returns inside branches bind the result name(s) on each path
        self.rebound_names.update(self.result_items)
        if self.result is not None:
            self.rebound_names.add(self.result)
        if self.result_items:
            assert isinstance(stmt.value, gast.Tuple)
            for item, elt in zip(self.result_items, stmt.value.elts):
                atom = self.expr(elt, item)
                if atom != ir.Var(item):
                    self.copy(item, atom)
            return
        if self.result is not None:
            if self.static_result_ok and self.returned_in_branch(stmt.value):
                return  # a function or an object (static_results)
            atom = self.expr(stmt.value, self.result)
            if atom != ir.Var(self.result):
                self.copy(self.result, atom)
            self.values_returned = True
            return
        if self.parent is not None:  # an inlined call: the value goes to the caller
            if self.static_result_ok:  # (who may take a function or an object as itself)
                self.returned = self.returned_value(stmt.value)
                return
            self.returned = self.expr(stmt.value, self.call_target, self.prefix + "out")
            return
        # the result is `out` unless the function binds that name or reads a global of it
        taken = "out" in self.bound or "out" in self.root.global_names or "out" in self.free
        result = self.namer.claim("out") if taken else "out"
        self.namer.reserve(result)  # a helper inlined below reading a global `out` renames it
        atom = self.expr(stmt.value, result)
        self.block.append(ir.Return(atom, self.line))

    def lower_if(self: Lowerer, stmt: Any) -> None:
        """``if``/``else``: each branch a block of its own."""
        shortcut = self.decided_chain(stmt.test)
        if shortcut is None:
            shortcut = self.decided_by_kinds(stmt.test)
        test = shortcut if shortcut is not None else self.expr(stmt.test, None, "cond")
        settled = self.outside_copy(self.settled(test))  # (`if pandas_requires_conversion:`)
        test = settled if isinstance(settled, ir.Const) else test
        if isinstance(test, (ir.Tup, ir.Dct)):  # a display here: true where it has items
            test = ir.Const(bool(test.items if isinstance(test, ir.Tup) else test.keys))
        if isinstance(test, ir.Const):
            # decided when transforming (`if b is None:` with b's default): Python runs only
            # that branch, so only that one is lowered (and the other lets no name share an
            # array: InPlaceMixin.ownership_problem)
            self.note_never_run(stmt.orelse if test.value else stmt.body)
            self.root.decided_ifs[(self, id(stmt))] = bool(test.value)
            self.root.kept.append(stmt)
            self.lower_block(stmt.body if test.value else stmt.orelse)
            return
        # each branch starts from what the names meant before the `if` (a name bound in
        # a branch is rebound in blocks, so it has one IR name after it; only statements
        # after an early return, which end the function, bind names of their own there)
        before, made = dict(self.env), dict(self.fresh_binding)
        body, refused = self.branch(stmt.body)
        self.env, after_body = before, self.env
        self.fresh_binding, made_in_body = dict(made), self.fresh_binding  # (note_binding)
        orelse, refused_too = self.branch(stmt.orelse)
        if refused is not None and refused_too is not None:
            raise refused  # no path through the `if` that adgen reads: refused now
        self.env = {**after_body, **self.env}
        self.fresh_binding = fresh_after_branches(made, made_in_body, self.fresh_binding)
        self.add_if(test, body, orelse, self.key(stmt))

    def lower_expression_statement(self: Lowerer, stmt: Any) -> None:
        """An expression statement: a constant (a docstring), ``xs.pop()``, ``xs.append(v)``,
        another call (``print(x)``: run as written; pure operations are dropped) or any other
        expression (``warn(m) if c else None``: evaluated, its value unused)."""
        if isinstance(stmt.value, gast.Constant):
            return
        if isinstance(stmt.value, gast.Yield) and self.on_yield is not None:
            return self.lower_yield(stmt.value)  # (the caller's loop body, here)
        if _is_pop(stmt.value) and stmt.value.func.value.id in self.multi:
            self.pop(stmt.value, stmt.value.func.value.id, None, "dropped")  # xs.pop()
            return
        call = stmt.value
        if _is_append(stmt):
            self.append(stmt, call.func.value.id, call.args[0])
            return
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
        if isinstance(call, gast.Call):
            if self.update_dict(stmt, call) or self.call_write(stmt, call):
                return  # kwds.update(**p) of a dict known key by key; a.fill(v), np.copyto
            ok, fn = self.static_object(call.func)
            if ok and any(fn is c for c in (runtime.refuse_unless, runtime.expect)):
                self.lower_check(call)  # adgen's own check, in its code read again
                return
            if self.written_out(stmt, call, None):  # np.exp(K, out=K): K[...] = np.exp(K)
                return
            self.expr(call, None, "unused")  # print(x), a call made for its effects: kept
            return
        # `warn(...) if c else None`, `c and log(x)`, a bare `x`: evaluated as Python does
        # (each call in it run where Python runs it), the value unused
        self.expr(call, None, "unused")

    def add_if(
        self: Lowerer, test: ir.Atom, body: list[ir.Stmt], orelse: list[ir.Stmt], line: int
    ) -> None:
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

    def lower_block(self: Lowerer, stmts: list[Any]) -> None:
        for stmt in stmts:
            self.line = self.key(stmt)
            self.current = stmt
            self.statement(stmt)
            if isinstance(stmt, (gast.Import, gast.ImportFrom)) and _raises(self.block):
                break  # (an import that fails here: the rest of the block never runs)

    def sub_block(self: Lowerer, stmts: list[Any], branch: bool = False) -> list[ir.Stmt]:
        """Lower the statements of a nested block into their own IR block (``branch``: one
        branch of an ``if``, which runs at most once, after what the block around holds)."""
        saved, self.block = self.block, []
        self.depth += 1
        if branch:
            self.root.open_branches.append((self.block, saved, None))
        try:
            self.lower_block(stmts)
        finally:
            if branch:
                self.root.open_branches.pop()
        self.depth -= 1
        block, self.block = self.block, saved
        return block

    def single_exit(self: Lowerer, stmts: list[Any]) -> list[Any]:
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
                if stmt.orelse:  # (a return adgen leaves the loop by, but an `else` too)
                    self.refuse(stmt, "`else` clauses on loops", "move that code after the loop")
                hint = "set a variable and return after the loop"
                self.refuse(_find_return(stmt), "`return` inside a loop", hint)
            out.append(stmt)
        return out

    def check_returns(self: Lowerer, body: list[Any]) -> None:
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

    def assign(self: Lowerer, target: Any, value: Any, augmented: bool = False) -> None:
        if (
            isinstance(target, gast.Name)
            and isinstance(value, gast.List)
            and target.id in self.list_names(_written_in_place)  # appended or written by index
        ):
            self.new_list(target.id, value.elts)
            return
        if (
            isinstance(target, gast.Name)
            and isinstance(value, gast.BinOp)
            and isinstance(value.op, gast.Mult)
            and isinstance(value.left, gast.List) != isinstance(value.right, gast.List)
            and target.id in self.list_names(_written_in_place)
        ):
            self.repeated_list(target.id, value)  # hs = [np.zeros(n)] * T, then hs[t] = v
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
            if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
                self.check_kept_item(target, value)
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
                        if isinstance(a, ir.Var) and (
                            a.name in self.multi.values() or a.name in self.split_leaves
                        ):
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
        elif isinstance(target, (gast.Tuple, gast.List)):
            # nested unpacking: a, (b, c) = ...; [a, b] = ...
            self.bind_target(target, self.expr(value, None))
        else:
            self.refuse(
                target,
                "assignments to subscripts and attributes",
                "build the array with np.where, np.concatenate or arithmetic instead",
            )

    def bind_target(self: Lowerer, target: Any, atom: ir.Atom) -> None:
        """Bind an assignment's (or a loop's) target to ``atom``, unpacking tuples and lists
        of names nested in any way, as Python does."""
        if isinstance(target, gast.Name):
            self.bind(target.id, self.new_name(target.id), atom)
            return
        if isinstance(target, gast.Subscript):
            # `y[0], y[1] = ...`: Python computes the right side, then assigns the targets
            # left to right; each write is `y[i] = item`
            self.write_in_place(target, target, None, None, atom)
            return
        if isinstance(target, gast.Attribute):  # `self.a, self.b = a, b`: left to right
            self.assign_attribute(target, atom)
            return
        if not isinstance(target, (gast.Tuple, gast.List)):
            self.refuse(
                target,
                "assignments to attributes inside unpacking",
                "unpack into names, then set the attributes",
            )
        starred = [k for k, t in enumerate(target.elts) if isinstance(t, gast.Starred)]
        if starred and isinstance(atom, ir.Tup) and len(atom.items) >= len(target.elts) - 1:
            # `*hidden, last = params` of a tuple or list of known length: the starred name
            # is the list of the items between, as in Python
            k, after = starred[0], len(target.elts) - starred[0] - 1
            end = len(atom.items) - after
            middle = ir.Tup(atom.items[k:end], kind="list")
            parts = (*atom.items[:k], middle, *atom.items[end:])
            unstarred = [t.value if isinstance(t, gast.Starred) else t for t in target.elts]
            for t, a in zip(unstarred, parts):
                self.bind_target(t, a)
            return
        if starred:
            self.refuse(
                target,
                "starred unpacking (`a, *rest = ...`) of a value whose length is known only "
                "when it runs",
                "unpack each item by name, or slice (`rest = xs[1:]`)",
            )
        if (
            isinstance(atom, ir.Tup)
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
                if old in self.producers:  # (not every result has one: a tuple a callee returns)
                    self.producers[new] = self.producers.pop(old)
            self.block[-1].targets = names
            for t, n in zip(target.elts, names):
                self.bind(t.id, n, ir.Var(n))
            return
        if isinstance(atom, ir.Tup):
            if len(atom.items) != len(target.elts):
                self.refuse(
                    target,
                    f"unpacking {len(atom.items)} values into {len(target.elts)} names",
                    "unpack a tuple of the same length",
                )
            items = atom.items
            if any(isinstance(n, gast.Subscript) for n in walk(target)):
                # every item is read before any target is written (`s, y[0] = 2 * s, s`)
                items = tuple(self.kept_apart(a) for a in items)
            for t, a in zip(target.elts, items):
                self.bind_target(t, a)
            return
        last = self.block[-1] if self.block else None
        if (
            all(isinstance(t, gast.Name) for t in target.elts)
            and isinstance(atom, ir.Var)
            and isinstance(last, ir.Assign)
            and last.targets == (atom.name,)
            and (last.prim.outputs is not None or not last.prim.differentiable)
        ):
            # a function's results (`n, m = x.shape`): one name each
            names = tuple(self.new_name(t.id) for t in target.elts)
            last.targets = names
            for t, n in zip(target.elts, names):
                self.env[t.id] = ir.Var(n)
                self.bound.add(t.id)
            return
        if isinstance(atom, (ir.Var, ir.Free)):
            self.unpack(target, atom)
            return
        self.refuse(target, "this kind of unpacking", "unpack a tuple of the same length")


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
    """Does every path through these statements end in a ``return`` (or a ``raise``: a path
    that raises needs no result)?"""
    for stmt in stmts:
        if isinstance(stmt, (gast.Return, gast.Raise)):
            return True
        if (
            isinstance(stmt, gast.If)
            and _always_returns(stmt.body)
            and _always_returns(stmt.orelse)
        ):
            return True
    return False


def fresh_after_branches(
    before: dict[str, Any], body: dict[str, Any], orelse: dict[str, Any]
) -> dict[str, Any]:
    """Where names were last bound to new arrays no other name sees (``fresh_binding``)
    after an ``if`` whose branches left ``body`` and ``orelse``: what neither changed (a
    binding in one branch is not the other's, nor certainly the one after the ``if``)."""
    return {k: v for k, v in before.items() if body.get(k) is v and orelse.get(k) is v}
