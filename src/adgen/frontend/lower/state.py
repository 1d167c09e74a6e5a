# mypy: disable-error-code="misc"
# (every method takes the whole Lowerer as ``self``, as the parts call each other; mypy wants a
# ``self`` type to be a supertype of the class the method is written in, and says so as "misc")
"""What a Lowerer holds, and the operations every part of it uses.

:class:`LowererState` is the state of one function being lowered (the IR block being built,
the user's names and the IR atoms they mean, the names adgen has taken, the primitives that made
each IR name) and the few operations every other part uses: :meth:`~LowererState.emit` a
primitive's statement, :meth:`~LowererState.new_name` / :meth:`~LowererState.bind` a user's name,
:meth:`~LowererState.copy`, and :meth:`~LowererState.refuse` what adgen does not support. Its
constructor also rewrites ``break``/``continue`` (:mod:`adgen.frontend.lower.jumps`) and picks
one IR
name for each variable assigned inside blocks.
"""

from __future__ import annotations

import contextlib
import re
import types
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn

import gast

from adgen import ir, trees
from adgen.backend.compile import restoring_lists
from adgen.errors import AdgenError, SourceLocation, UnsupportedSyntaxError
from adgen.frontend.lower.at_updates import open_at_updates
from adgen.frontend.lower.blocks import open_guarding_blocks
from adgen.frontend.lower.choices import split_on_chosen_functions
from adgen.frontend.lower.extends import extends_as_appends
from adgen.frontend.lower.jumps import _lift_returns, _structure_jumps
from adgen.frontend.lower.rebinding import split_rebound_lists
from adgen.frontend.lower.syntax import (
    TreeIndex,
    _assigned_in_blocks,
    _fixed_length_lists,
    _last_binding_at,
    _own_nodes,
    _popped_into,
    _written_in_place,
    declared_nonlocal,
    nonlocal_in_nested,
    own_attributes_as_variables,
)
from adgen.frontend.lower.tuple_lists import _split_tuple_lists
from adgen.frontend.parse import ParsedFunction
from adgen.names import RESERVED, Namer
from adgen.pyast import walk
from adgen.rules import registry
from adgen.rules import runtime as rt

if TYPE_CHECKING:
    from adgen.frontend.lower import Lowerer
    from adgen.frontend.lower.calls import LocalDerivative, LocalFunction, LocalPullback


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


_HINTS = {
    gast.With: "adgen reads `with` blocks that only change how warnings show (np.errstate "
    "without 'raise', warnings.catch_warnings()); move file and resource handling (`with "
    "open(...)`) outside the function you differentiate, and pass the data in as an argument",
    gast.Try: "adgen reads a `try` whose every `except` raises, or one whose body only binds "
    "names (it runs it twice) and whose handlers do not read the exception; else test the "
    "condition with `if` instead, or move the `try` outside the function",
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


def _structure(fn: Any, lookup: Callable[[str], Any], means_itself: Any, namer: _UserNamer) -> None:
    """The rewrites of the gast ``FunctionDef`` ``fn`` made before it is lowered, once:
    ``xs.extend(...)`` as appends, a list rebound to what was made of it renamed after,
    guarding ``try``/``with`` blocks and array-api-extra's index updates opened, the code
    after an ``if`` choosing a function split per branch, ``self``'s attributes as
    variables, ``return`` inside loops and ``break``/``continue`` as flags."""
    extends_as_appends(fn)
    split_rebound_lists(fn, namer.fresh)
    open_guarding_blocks(fn, lookup)
    open_at_updates(fn, lookup)
    _fixed_length_lists(fn)  # (read, and kept, before the statements it sees are copied)
    split_on_chosen_functions(fn)
    own_attributes_as_variables(fn, means_itself)
    fn.body = _lift_returns(fn.body, namer)
    fn.body = _structure_jumps(fn.body, namer)
    fn.adgen_structured = True


class RuleNotTaken(Exception):
    """A call of a function with a rule that the rule does not take (``np.sum(x,
    where=mask)``): ``refusal`` says so, raised where a differentiated value reaches it."""

    def __init__(self, refusal: UnsupportedSyntaxError) -> None:
        super().__init__(refusal)
        self.refusal = refusal


class _UserNamer:
    """Fresh names for variables adgen adds to a function: ``namer``'s, never in ``avoid``."""

    def __init__(self, namer: Namer, avoid: set[str]) -> None:
        self.namer, self.avoid = namer, avoid

    def fresh(self, base: str) -> str:
        while True:
            name = self.namer.fresh(base)
            if name not in self.avoid:
                return name


class LowererState:
    """The state of the function being lowered, and the operations every part uses."""

    def __init__(
        self: Lowerer,
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
        self.params = _parameters(parsed.node)
        # lists of tuples kept as one list per position (a rewrite of the tree); for those
        # that cannot be, a use that prevents it (named where their append is refused)
        # (not in adgen's own reverse-mode code read again: its lists are its own)
        own_code = parsed.filename.startswith("<adgen ")
        self.tuple_list_problems = {} if own_code else _split_tuple_lists(self.node)
        local_names = {n.id for n in walk(self.node) if isinstance(n, gast.Name)}
        if parent is None:
            self.namer = Namer(local_names)
            # the names the function's own source reads and never binds: its globals, which
            # keep their names in the generated code (see ExpressionsMixin.free_name)
            self.global_names = local_names - {
                n.id
                for n in walk(self.node)
                if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
            }
            self.free: dict[str, Any] = {}
            # IR name -> primitive that made it
            self.producers: dict[str, registry.Primitive] = {}
            # IR name -> the IR names a view of it may share memory with (every binding's)
            self.bases: dict[str, set[str]] = {}
            self.held: set[str] = set()  # IR names put into a list (a list holds the array)
            self.rebound: set[str] = set()  # IR names bound more than once (in blocks)
            self.scalars: set[str] = set()
            self.block: list[ir.Stmt] = []
            self.top_block = self.block  # (the function's body: where its parameters stand)
            # inlined functions' lines get keys of their own: key -> (label, location)
            self.labels: dict[int, str] = {}
            self.origins: dict[int, SourceLocation] = {}
            self.inlining: list[Any] = []  # code objects being inlined (recursion check)
            # IR names bound more than once (rebound in blocks, any function): what made them
            # last (``producers``) says nothing of the value they hold at a given point
            self.rebound_names: set[str] = set()
            self.callee_names: dict[Any, str] = {}  # functions called, not inlined: their names
            self.root_facts()
            self.prefix = ""
        else:
            self.namer = parent.namer
            self.free = parent.free
            self.producers = parent.producers
            self.bases, self.held, self.rebound = parent.bases, parent.held, parent.rebound
            self.scalars = parent.scalars
            self.rebound_names = parent.rebound_names
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
                self.env[p] = _tree_atom(desc, iter(map(ir.Var, leaves)))
        self.line = self.key(self.node)
        # user variables assigned inside if/for/while: one IR name each (no renaming), so every
        # path through the blocks leaves its value under the same name
        if not getattr(self.node, "adgen_structured", False):
            _structure(self.node, self.parsed.scope.lookup, self.means_itself, self.user_namer)
        self.multi: dict[str, str] = {}
        nodes = _own_nodes(self.node)  # (a nested def's names are its own)
        # adgen's reverse-mode code read again: its `v = stack.pop()` puts back a value v had;
        # v keeps one name, so that "v as differentiable as it was" means all of v's values
        self.restoring = set(restoring_lists(parsed.filename))
        restored = _popped_into(nodes, self.restoring)
        self.nonlocals = declared_nonlocal(self.node)  # (the enclosing function's names)
        for user in sorted(self.rebound_users(nodes, restored)):
            if parent is None:
                self.multi[user] = user if user not in RESERVED else self.namer.fresh(user)
                self.namer.reserve(self.multi[user])
            else:
                self.multi[user] = self.namer.claim(self.prefix + user)
            self.rebound_names.add(self.multi[user])
            self.rebound.add(self.multi[user])
        self.depth = 0  # nesting depth of blocks being lowered
        self.deleted: set[str] = set()  # names unbound by `del` (reading them again is refused)
        # a name rebound in blocks -> (block, position) after its latest binding, where that
        # binding made an array no other name sees (see InPlaceMixin.note_binding)
        self.fresh_binding: dict[str, tuple[list[ir.Stmt], int, Any]] = {}
        # names bound to a list display somewhere in the function (found when first asked)
        self.list_displays: frozenset[str] | None = None
        self.ranges: set[str] = set()  # slices of ranges (r[a:b]): ranges too
        self.result: str | None = None  # the name `return` binds inside blocks
        # ... or, where every `return` gives a tuple of the same length, one name an item
        self.result_items: list[str] = []
        self.call_target: str | None = None  # for an inlined call: the caller's name
        self.returned: ir.Atom | None = None
        # names meaning a function or an object, not an IR value: local functions, derivatives,
        # pullbacks, instances made inside, and Python objects (a function passed as an
        # argument, an object of the user's, `f = np.sin`)
        self.local_functions: dict[str, LocalFunction | LocalDerivative | LocalPullback | Any] = {}
        # the probes of the `try` statements whose handlers go on (frontend/lower/attempts)
        self.local_functions.update(getattr(self.node, "adgen_probes", {}))
        self.frozen: dict[int, Any] = {}  # distributions frozen here, by their call's node
        self.interpolants: dict[int, Any] = {}  # interpolants made here (CubicSpline(t, y))
        self.enclosing: Lowerer | None = None  # the function a nested def is defined in
        self.on_yield: Callable[[Lowerer, ir.Atom], None] | None = None  # (generators.py)
        self.imported: dict[str, Any] = {}  # names an `import` inside the function binds
        # names rebound in blocks whose every binding is a tuple of one structure: one IR name
        # an item (the template: a Tup of those names), False where the first binding was not
        # a tuple; the names that may be split (found when first asked); the items' names
        self.splits: dict[str, ir.Atom | bool] = {}
        self.tuple_shaped: dict[str, int | None] | None = None
        self.split_leaves: set[str] = set()
        self.current: Any = self.node  # the statement being lowered
        # the body as it is lowered: the sides of `if`s decided by options dropped
        # (prune_decided), returns given a single exit -- what a name's reads are judged on
        self.lowered_body: list[Any] | None = None
        self.lowered_index: tuple[list[Any], TreeIndex] | None = None  # (of that body)
        self.stores_found: frozenset[str] | None = None  # (stored_names)
        # inlined where the caller takes a function or an object returned as itself; the
        # ones its returns inside branches gave, and whether another return gave a value
        self.static_result_ok = False
        self.static_returns: list[Any] = []
        self.values_returned = False
        # names blocks rebind, bound outside any block (a parameter, a default): name -> the
        # atom copied there (what it still holds until something binds it again)
        self.first_values: dict[str, ir.Atom] = {}

    def key(self: Lowerer, node: Any) -> int:
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
    def refuse(self: Lowerer, node: Any, what: str, hint: str = "") -> NoReturn:
        raise UnsupportedSyntaxError(f"adgen does not support {what}", self.parsed.loc(node), hint)

    @contextlib.contextmanager
    def noting_refusal(self: Lowerer, cls: type) -> Iterator[None]:
        """Note the refusal raised inside (using an instance of ``cls`` made inside the
        function, or lowering its methods) before it goes on: :func:`lower` may then read
        the function again with such instances made and used as written."""
        try:
            yield
        except AdgenError as exc:
            self.root.instances_refused.setdefault(cls, exc)
            raise

    def refuse_node(self: Lowerer, node: Any) -> NoReturn:
        kind = type(node)
        what = _SYNTAX_NAMES.get(kind, f"`{kind.__name__}`")
        self.refuse(
            node, what, _HINTS.get(kind, "rewrite this part with NumPy calls and arithmetic")
        )

    def rebound_users(self: Lowerer, nodes: list[Any], restored: set[str]) -> set[str]:
        """The user's names that get one IR name for all their bindings: assigned inside
        blocks, written in place, put back by adgen's own code, and those a nested def
        declares ``nonlocal`` (each call may rebind them); not this function's own
        ``nonlocal`` names (the enclosing function's)."""
        stored = {n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        found = (
            _assigned_in_blocks(self.node.body)
            | _written_in_place(nodes)
            | restored
            | (nonlocal_in_nested(self.node) & stored)
        )
        return found - self.nonlocals

    def means_itself(self: Lowerer, name: str) -> bool:
        """Does ``name``, read in the function being lowered, mean that function itself (a
        module-level function of that name, defined in the same file)?"""
        try:
            obj = self.parsed.scope.lookup(name)
        except KeyError:
            return False
        code = getattr(obj, "__code__", None)
        return (
            code is not None
            and code.co_name == name == self.node.name
            and code.co_filename == self.parsed.filename
        )

    def refuse_generators(self: Lowerer) -> None:
        """A generator (``yield``), the function differentiated or a helper, is refused --
        but for one a ``for`` loop of its caller iterates over (:attr:`on_yield`)."""
        if self.on_yield is not None:
            return
        for n in walk(self.node):
            if isinstance(n, (gast.Yield, gast.YieldFrom)):
                self.refuse(
                    n,
                    "`yield` (generators)",
                    "return a list of the values (or a tuple) and iterate over it",
                )

    def call_prim(self: Lowerer, fn: Any, args: list[ir.Atom], hint: str) -> ir.Var:
        prim = registry.lookup(fn)
        assert prim is not None and prim.outputs is None, fn
        out = self.emit(None, hint, prim, args, [], None)
        assert isinstance(out, ir.Var)
        return out

    def copy(self: Lowerer, name: str, atom: ir.Atom) -> None:
        """``name = atom`` as a real statement (a name rebound inside blocks cannot alias)."""
        prim = registry.lookup(registry.assign)
        assert prim is not None
        self.block.append(ir.Assign((name,), prim, (atom,), (), self.line))
        self.producers[name] = prim
        self.note_views((name,), prim, [atom])

    def root_facts(self: Lowerer) -> None:
        """What the function differentiated keeps for every function inlined into it."""
        # inside a library's checked call that skips the checks of the calls it makes
        self.checks_skipped = False
        # the call whose callee may return a function or an object as itself (id)
        self.static_result_for: int | None = None
        # variables of inlined functions done with, bound once: their value (note_settled)
        self.settled_values: dict[str, ir.Atom] = {}
        # kinds computed on samples, by the statement that made the value (IdentitiesMixin)
        self.computed_samples: dict[int, tuple[ir.Assign, Any]] = {}
        # attributes of objects made outside read when transforming, and written as the
        # code runs: (id(object), name) -- never both (ObjectsMixin.store_outside)
        self.attrs_read: set[tuple[int, str]] = set()
        self.attrs_written: set[tuple[int, str]] = set()
        # ... of those written in straight-line code, what each holds since: the atom a read
        # after the write means (a model's `self.W = ...` in a method that unpacks parameters)
        self.attrs_shadowed: dict[tuple[int, str], ir.Atom] = {}
        # ... and every value stored, by id(object): a call run as written given the object
        # may read them back (OutsideMixin.read_back)
        self.stored_into: dict[int, list[ir.Atom]] = {}
        # ... and objects made outside that a call run as written may change (id): their
        # attributes are never read (ObjectsMixin.note_changed)
        self.objects_changed: set[int] = set()
        # the parameters (leaves) differentiated, where lowering is told (IdentitiesMixin)
        self.differentiated: frozenset[str] | None = None
        # the kinds of the arguments the code is made for: parameter -> describe(argument)
        self.kinds: dict[str, Any] = {}
        # classes whose instances made inside are used as values the code cannot follow
        # (passed to a library's function, returned...): the error it gave, by class; and
        # the classes whose instances made inside run as written, this lowering (lower())
        self.instances_refused: dict[type, AdgenError] = {}
        self.as_written_classes: dict[type, AdgenError] = {}
        # parameters of inlined functions given a function or an object, bound again in a
        # block somewhere: (lowerer, name) -- a binding in a block lowered is refused (keyed by
        # the lowerer itself, not its id: a helper's lowerer done with may free its address)
        self.static_params: set[tuple[Any, str]] = set()
        # parameters of inlined functions written into, their callers' names of the array
        # (BuffersMixin.caller_buffer): (lowerer, name) -> [(caller lowerer, name)]
        self.written_through: dict[tuple[Any, str], list[tuple[Any, str]]] = {}
        # nodes (ids) of branches decided never to run, standing nowhere else
        self.never_run: set[int] = set()
        # the nodes whose ids these tables hold, kept alive while the lowering lasts (a copy
        # of a helper's statement freed would give its id to another node)
        self.kept: list[Any] = []
        # IR names bound to a copy a view-making call certainly made (np.asarray(x,
        # copy=True), x[mask]): the statement (IdentitiesMixin.is_copy)
        self.copies: dict[str, ir.Assign] = {}
        # calls of functions inlined (ids of their nodes): did every inlining of the call
        # return a new array (`zi = lfiltic(b, a, y[::-1])`: not a view of `y`)?
        self.fresh_calls: dict[int, bool] = {}
        # `if`s decided when transforming: (lowerer, id(node)) -> the branch taken
        self.decided_ifs: dict[tuple[Any, int], bool] = {}
        # id(lowerer) -> (that lowerer, Counter of its function's nodes): note_never_run
        self.node_counts: dict[int, tuple[Any, Any]] = {}
        # the branches of `if`s being lowered, with the block around each (IdentitiesMixin)
        # (and, while a join of kinds is read, a closed `if`'s branch with where it stands)
        self.open_branches: list[tuple[list[ir.Stmt], list[ir.Stmt], int | None]] = []
        # how many branches the program decides when it runs enclose what is lowered now
        # (a refusal there becomes the branch: DeferredMixin.attempted)
        self.deferring = 0
        # how many loops the program runs (not unrolled), and how many unrolled loops,
        # enclose what is lowered now
        self.looping = 0
        self.unrolling = 0

    def new_name(self: Lowerer, user: str) -> str:
        """The IR name for a new binding of the user's variable ``user``."""
        if user in self.multi:
            return self.multi[user]
        if self.parent is not None:
            return self.namer.claim(self.prefix + user)
        if user not in self.bound and user not in RESERVED:
            self.namer.reserve(user)
            return user
        return self.namer.fresh(user)

    def kept_items(self: Lowerer, atom: Any, hint: str) -> Any:
        """``atom`` with each variable a block may bind again (one IR name for all of its
        bindings) copied to a name of its own: a tuple, list or dict known item by item
        keeps the values its items had when it was made (``t = (v, x)``, then a loop
        rebinding ``v``: ``t[0]`` is still the old ``v``, as in Python)."""
        if isinstance(atom, ir.Var):
            made = self.producers.get(atom.name)
            if made is not None and (
                made is registry.LIST_NEW or made is registry.APPEND or made.lists
            ):  # (a list is one object under both names: a copy would only alias it, which
                # reverse mode refuses for lists changed in place)
                return atom
            if (
                atom.name in self.rebound_names or atom.name in self.split_leaves
            ) and self.bound_again(atom.name):
                kept = self.namer.fresh(f"{hint}_item")
                self.copy(kept, atom)
                return ir.Var(kept)
            return atom
        if isinstance(atom, ir.Tup):
            items = tuple(self.kept_items(a, hint) for a in atom.items)
            return atom if items == atom.items else ir.Tup(items, kind=atom.kind)
        if isinstance(atom, ir.Dct):
            values = tuple(self.kept_items(a, hint) for a in atom.values)
            return atom if values == atom.values else ir.Dct(atom.keys, values)
        return atom

    def bound_again(self: Lowerer, name: str) -> bool:
        """May the variable ``name`` (an IR name blocks rebind) be bound again after the
        statement lowered now: inside a loop, or by a statement of the function written
        after it? A variable of a function this one is inlined in is not bound again while
        this one runs (a container returned there is bound, and asked, there). Where it may
        be, a container keeps a copy (:meth:`kept_items`); elsewhere the name itself, whose
        kind adgen may know."""
        users = [u for u, n in self.multi.items() if n == name]
        if not users:
            return False
        line = getattr(self.current, "lineno", None)
        if line is None or self.root.looping or self.root.unrolling:
            return True
        stores = self.__dict__.get("_store_lines")
        if stores is None:
            stores = {}
            for node in _own_nodes(self.node):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    stores[node.id] = max(stores.get(node.id, 0), getattr(node, "lineno", 0))
            self.__dict__["_store_lines"] = stores
        end = getattr(self.current, "end_lineno", None) or line
        return any(stores.get(u, 0) > end for u in users)

    def bind(self: Lowerer, user: str, name: str, atom: ir.Atom) -> None:
        if self.depth > 0 and (self, user) in self.root.static_params:
            self.refuse(
                self.current,
                f"assigning the parameter `{user}` (a function or an object here) inside a "
                "loop or a branch",
                "give the new value a name of its own",
            )
        self.bound.add(user)
        self.local_functions.pop(user, None)  # no longer a function or an object of its own
        if isinstance(atom, (ir.Tup, ir.Dct)):
            atom = self.kept_items(atom, user)
        self.note_binding(user, name, atom)
        if (
            user in self.multi
            and isinstance(atom, (ir.Tup, ir.Dct))
            and self.depth == 0
            and isinstance(self.current, gast.Assign)
            and _last_binding_at(self.as_lowered(), self.current, user, self.tree_index())
        ):  # `params = {"gamma": ...}` in a branch decided now, bound nowhere after
            self.env[user] = atom
            return
        if user in self.multi and self.bind_split(user, atom):
            return  # a tuple: one name an item
        if isinstance(atom, ir.Var) and atom.name == name:
            self.env[user] = atom
            return
        if user in self.multi or (
            isinstance(atom, ir.Var)
            and (atom.name in self.multi.values() or atom.name in self.split_leaves)
        ):
            # rebound inside blocks, or a copy of such a variable: a real copy, not an alias
            self.copy(name, atom)
            self.env[user] = ir.Var(name)
            rebound = isinstance(atom, ir.Var) and (
                atom.name in self.multi.values() or atom.name in self.split_leaves
            )
            if self.depth == 0 and not rebound:  # (a name bound once keeps its value)
                self.first_values[name] = atom
            return
        # a plain copy (y = x, y = 2.0): the user's name now means that atom
        self.env[user] = atom

    # -- IR statements -------------------------------------------------------------------------
    def emit(
        self: Lowerer,
        target: str | None,
        hint: str,
        prim: registry.Primitive,
        args: list[ir.Atom],
        kwargs: list[tuple[str, ir.Atom]],
        node: Any,
        instead: bool = False,
    ) -> ir.Atom:
        """One IR statement calling ``prim`` (its arguments as its rule takes them) bound
        to ``target`` or a fresh name; its result. A call the rule does not take (a
        parameter it lacks, arguments it cannot bind) is refused, or with ``instead``
        raises :class:`RuleNotTaken` (the caller runs it as written)."""
        alias = registry.keyword_alias(prim.name, [k for k, _ in kwargs])
        while alias is not None:  # np.std(x, correction=1): NumPy's ddof
            if any(k == alias[1] for k, _ in kwargs):
                self.refuse(node, f"{prim.name} given both `{alias[0]}` and `{alias[1]}`", "")
            kwargs = [(alias[1] if k == alias[0] else k, a) for k, a in kwargs]
            alias = registry.keyword_alias(prim.name, [k for k, _ in kwargs])
        for name in registry.omitted_as_none(prim, len(args), [k for k, _ in kwargs]):
            kwargs = [*kwargs, (name, ir.Const(None))]  # np.clip(x, max=1.0): no lower bound
        try:  # written against the function's own signature: as the rule takes it
            args, kwargs, dtype = registry.own_arguments(prim, args, kwargs, _constant)
        except registry.NotTaken as exc:
            refusal = UnsupportedSyntaxError(
                f"adgen does not differentiate {exc.args[1]}", self.parsed.loc(node), exc.args[2]
            )
            raise (RuleNotTaken(refusal) if instead else refusal) from None
        except registry.NotValid as exc:
            raise UnsupportedSyntaxError(
                f"this call, which gives {prim.name} its parameter `{exc.args[0]}` twice, by "
                "position and by name (Python raises TypeError here too)",
                self.parsed.loc(node),
                "pass each argument once",
            ) from None
        if dtype is not None:  # np.exp(x, dtype=np.float64): computed in that type
            cast = registry.lookup(registry.np.asarray)
            assert cast is not None
            if prim.sequence is not None:  # np.stack(arrays, dtype=...): the stack, cast
                joined = self.emit(None, hint, prim, args, kwargs, node)
                return self.emit(target, hint, cast, [joined], [("dtype", dtype)], node)
            args = [self.emit(None, "cast", cast, [a], [("dtype", dtype)], node) for a in args]
        try:
            prim.bind(tuple(args), kwargs)
        except TypeError as exc:
            refusal = UnsupportedSyntaxError(
                *_not_taken(prim, exc), self.parsed.loc(node), _takes(prim)
            )
            raise (RuleNotTaken(refusal) if instead else refusal) from None
        if prim.outputs is not None:
            return self.emit_several(hint, prim, args, kwargs, node)
        name = target if target is not None else self.namer.fresh(hint)
        made = ir.Assign((name,), prim, tuple(args), tuple(kwargs), self.line)
        self.block.append(made)
        self.producers[name] = prim
        if self.copying(prim, args, kwargs):  # (np.asarray(x, copy=True), x[mask]: new)
            self.root.copies[name] = made
        else:
            self.note_views((name,), prim, [*args, *(a for _, a in kwargs)])
        if prim is registry.lookup(registry.operator.getitem) and self.is_range(args[0]):
            if isinstance(args[1], ir.Slc):  # r[a:b] of a range is a range
                self.ranges.add(name)
        return ir.Var(name)

    def note_views(
        self: Lowerer, targets: tuple[str, ...], prim: registry.Primitive, args: list[ir.Atom]
    ) -> None:
        """Remember what the results of a primitive that may return a view (or its argument
        itself) share memory with: its array argument's variables (a rule's first argument:
        ``x[i]`` is a view of ``x``, not of ``i``), or every argument's of a call adgen has no
        rule for."""
        if not prim.view:
            return
        known = prim.differentiable and prim.callee is None and prim.user_fn is None
        shared = {v for a in (args[:1] if known else args) for v in ir.atom_vars(a)}
        for t in targets:
            self.bases.setdefault(t, set()).update(shared - {t})

    def is_range(self: Lowerer, atom: ir.Atom) -> bool:
        """Is this atom a range (``range(...)``, ``rt.backwards(...)``, a slice of one)?"""
        if not isinstance(atom, ir.Var):
            return False
        made = self.producers.get(atom.name)
        ranges = (registry.lookup(range), registry.lookup(rt.backwards))
        return (made is not None and made in ranges) or atom.name in self.ranges

    def emit_several(
        self: Lowerer,
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
        assumed = prim.counted_for(static) if prim.counted_for is not None else None
        if assumed is not None and assumed[0] in bound:  # what the count takes for granted
            param, ndim, what, why = assumed
            axes = self.call_prim(registry.np.ndim, [bound[param]], "ndim")
            test = self.call_prim(registry.operator.eq, [axes, ir.Const(ndim)], "counted")
            words = (("what", ir.Const(what)), ("hint", ir.Const(why)))
            self.block.append(ir.Assign((), registry.ASSERT, (test,), words, self.line))
        names = tuple(self.namer.fresh(hint) for _ in range(count))
        self.block.append(ir.Assign(names, prim, tuple(args), tuple(kwargs), self.line))
        for n in names:
            self.producers[n] = prim
        self.note_views(names, prim, [*args, *(a for _, a in kwargs)])
        if count == 1 and not prim.result_list:  # np.linalg.svd(a, compute_uv=False)
            return ir.Var(names[0])
        return ir.Tup(tuple(ir.Var(n) for n in names))


def _tree_atom(desc: trees.Desc, leaves: Any) -> ir.Atom:
    """The tuple, list or dict atom of ``desc``'s structure holding the atoms ``leaves``
    yields, in order."""
    if not trees.is_tree(desc):
        return next(leaves)  # type: ignore[no-any-return]
    if desc[0] == "dict":
        return ir.Dct(tuple(desc[1]), tuple(_tree_atom(d, leaves) for d in desc[2]))
    return ir.Tup(tuple(_tree_atom(d, leaves) for d in desc[1]), kind=desc[0])


def _constant(atom: ir.Atom) -> tuple[bool, Any]:
    """The Python value of an atom made only of constants (a number, a tuple of numbers)."""
    if isinstance(atom, ir.Const):
        return True, atom.value
    if isinstance(atom, ir.Tup):
        values = [_constant(a) for a in atom.items]
        if all(known for known, _ in values):
            return True, tuple(v for _, v in values)
    return False, None


def _takes(prim: registry.Primitive) -> str:
    return f"adgen's rule for {prim.name} takes ({', '.join(p.name for p in prim.params)})"


def _not_taken(prim: registry.Primitive, exc: TypeError) -> tuple[str]:
    """What a call passes that ``prim``'s rule does not take, in words naming it."""
    text = str(exc)
    for pattern, words in (
        (r"unexpected keyword argument '(\w+)'", "adgen does not differentiate {name} "
         "with `{arg}=` (a parameter of the function that adgen's rule does not take)"),
        (r"multiple values for argument '(\w+)'", "adgen's rule for {name} gets `{arg}` "
         "twice, by position and by name (the call passes it twice, or the function orders "
         "its parameters otherwise than the rule)"),
        (r"missing a required argument: '(\w+)'", "adgen's rule for {name} needs `{arg}`, "
         "which this call does not pass"),
        (r"too many positional arguments", "adgen's rule for {name} takes fewer positional "
         "arguments than this call passes"),
    ):  # fmt: skip
        found = re.search(pattern, text)
        if found is not None:
            arg = found.group(1) if found.groups() else ""
            return (words.format(name=prim.name, arg=arg),)
    return (f"adgen's rule for {prim.name} does not take these arguments ({text})",)


def _parameters(fdef: Any) -> list[str]:
    """Every parameter of ``fdef`` a caller's value binds (positional-only and keyword-only
    too): a write into any writes into the caller's array."""
    spec = fdef.args
    return [a.id for a in [*spec.posonlyargs, *spec.args, *spec.kwonlyargs]]
