"""The reverse-mode function as a whole: :func:`reverse`.

Refuses what reverse mode cannot do, learns which names must be saved (a first sweep that
only records what the adjoint reads), writes the function around the two sweeps (saving
stacks, the values the forward sweep frees, the adjoints that start at zero, the result),
and runs the passes of :mod:`adgen.backend.codeopt` over its text.
"""

from __future__ import annotations

import ast
import copy
import os

from adgen import ir
from adgen.backend.codeopt import reuse_buffers as reuse
from adgen.backend.codeopt.batch_saves import batch_saves
from adgen.backend.codeopt.collect_terms import collect_terms
from adgen.backend.codeopt.direct_reductions import direct_reductions
from adgen.backend.codeopt.drop_broadcasts import drop_broadcasts
from adgen.backend.codeopt.drop_copies import drop_copies
from adgen.backend.codeopt.drop_dead import drop_dead
from adgen.backend.codeopt.fuse_temporaries import fuse_temporaries
from adgen.backend.codeopt.keep_shapes_only import keep_shapes_and_free
from adgen.backend.codeopt.save_shapes_only import save_shapes_only
from adgen.backend.codeopt.share_repeated import share_repeated
from adgen.backend.codeopt.sum_before_linear import sum_before_linear
from adgen.backend.emit import CodeWriter
from adgen.errors import UnsupportedSyntaxError
from adgen.generated import Generated
from adgen.middle.analysis import Facts
from adgen.middle.shapes import (
    Classes,
    Signature,
    broadcast_classes,
    specialise,
    specialised_for,
)
from adgen.modes.complexvalues import ComplexValues, refuse_complex
from adgen.modes.expand import call, loc_of, name, zero_like
from adgen.modes.reverse.blocks import _names
from adgen.modes.reverse.state import _assign
from adgen.modes.reverse.sweeps import _Reverse
from adgen.names import Namer
from adgen.pyast import Transformer


class _Rename(Transformer):
    def __init__(self, names: dict[str, ast.expr]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.names.get(node.id, node)


def _sweep(
    fn: ir.Function,
    wrt: list[str],
    scalars: frozenset[str],
    namer: Namer,
    pushed: set[str],
    facts: Facts,
    classes: Classes,
    text: bool = True,
    aux: bool = False,
    seed: str = "",
    known: dict[str, tuple[tuple[int, ...], str]] | None = None,
    complex_values: ComplexValues | None = None,
) -> tuple[_Reverse, CodeWriter]:
    gen = _Reverse(fn, wrt, scalars, namer, pushed, facts, classes, known, complex_values)
    ret = fn.body[-1]
    assert isinstance(ret, ir.Return)
    sweep = CodeWriter(1, text)
    # the adjoints starting from zero: written by the sweep where first read (or assigned
    # by their first contribution), not before it
    gen.deferred = _start_from_zero(gen, ret)
    gen.pending = set(gen.deferred)
    if isinstance(ret.value, ir.Var) and ret.value.name in gen.facts.useful:
        seed = namer.adjoint(ret.value.name)
        gen.adjoint[ret.value.name] = seed
        gen.aliasable.add(seed)
    elif aux and isinstance(ret.value, ir.Tup):
        head = ret.value.items[0]
        if isinstance(head, ir.Var) and head.name in gen.facts.useful:
            gen.accumulate(head.name, name(seed), sweep)
    elif isinstance(ret.value, ir.Tup):
        # one cotangent per result: out_bar[k] seeds the adjoint of the k-th result, and
        # out_bar[k][j] the j-th item of a tuple result (adgen's reverse code returns
        # (out, (x_bar, ...)), and is differentiated again)
        for var, part in _seed_parts(ret.value, name(seed)):
            if var in gen.facts.useful:
                gen.accumulate(var, part, sweep)
    gen.adjoint_block(fn.body, sweep)
    return gen, sweep


def _start_from_zero(gen: _Reverse, ret: ir.Return) -> set[str]:
    """The names whose adjoint starts as zeros before the adjoint sweep: those of the
    values it manages (rebound, or read in blocks), but not the result's (it starts as the
    cotangent), an iteration's own values (each iteration assigns theirs), lists and arrays
    written into (theirs are added to and written into item by item)."""
    facts = gen.facts
    result = ret.value.name if isinstance(ret.value, ir.Var) else None
    return {
        v
        for v in facts.managed
        if v not in gen.local_names and v != result and v not in facts.mutated | facts.lists
    }


def reverse(
    fn: ir.Function,
    wrt: list[str],
    scalars: frozenset[str] = frozenset(),
    aux: bool = False,
    batch: bool = True,
    signature: Signature = (),
    fuse: bool = True,
    value: bool = True,
) -> Generated:
    """``aux=True``: the function returns ``(value, aux)``; only ``value`` is differentiated
    (the cotangent passed is ``value``'s) and ``aux`` is returned as it is. ``batch=False``
    keeps one save per value in loops (:mod:`adgen.backend.codeopt.batch_saves` packs them into
    tuples, which adgen cannot differentiate again: code meant for higher order is not
    batched).
    ``signature`` describes the arguments the code is specialised for
    (:func:`adgen.middle.shapes.infer`): their shapes decide broadcasting when the code is made.
    ``fuse=False`` keeps one statement per IR statement (no
    :mod:`adgen.backend.codeopt.fuse_temporaries`). ``value=False`` (``adgen.grad``, which
    hands back the gradient only): where the shapes show the result to be a real number,
    the code returns ``None`` in its place and the work only the result needed is dropped
    (:mod:`adgen.backend.codeopt.drop_dead`)."""
    ret = _refuse_results(fn, aux)
    namer = Namer(fn.user_names | set(fn.free))
    if isinstance(ret.value, ir.Var):
        seed = namer.adjoint(ret.value.name)
    else:  # a tuple (or constant) result: a cotangent name no variable's adjoint can take
        seed = namer.claim("out_bar")
    gen_name = namer.claim(f"{fn.name}_vjp")
    # first pass: save every rebound name, to learn which ones the adjoint sweep reads
    facts = Facts(fn, wrt)
    fn = facts.fn  # (a branch reaching a call run as written made a refusal: Facts)
    classes, shapes, known = specialise(
        fn, broadcast_classes(fn, scalars, facts.rebound), signature
    )
    values = refuse_complex(fn, facts.varied, known)  # (every sweep below reads it)
    pushed, reads, swept = _saved_names(
        fn, wrt, scalars, namer, facts, classes, aux, seed, known, values
    )
    _refuse_unsupported(fn, facts, reads)
    gen, sweep = swept or _sweep(
        fn,
        wrt,
        scalars,
        namer,
        pushed,
        facts,
        classes,
        aux=aux,
        seed=seed,
        known=known,
        complex_values=values,
    )

    w = CodeWriter()
    w.comment(
        f"adgen: reverse mode (vector-Jacobian product) of {fn.name} "
        f"({os.path.basename(fn.filename)}:{fn.firstlineno}) w.r.t. {', '.join(wrt)}"
        + (f"; for scalar {', '.join(p for p in fn.params if p in scalars)}" if scalars else "")
        + specialised_for(fn, shapes)
    )
    w.open(f"def {gen_name}({', '.join(fn.params + [seed])}):")
    _open_stacks(w, fn, gen)
    dead = _freed(fn, gen, sweep, ret)
    gen.forward_block(fn.body, w, dead)
    # the adjoint sweep restores old values of saved names: keep the results aside (a copy if
    # the sweep puts old values back into the array itself)
    kept: dict[str, ast.expr] = {}
    for var in sorted(set(ir.atom_vars(ret.value)) & (gen.pushed | gen.restored)):
        held = call("rt.copy_of", name(var)) if var in gen.facts.mutated else name(var)
        kept[var] = name(namer.fresh(var))
        w.stmt(_assign(kept[var].id, held))  # type: ignore[attr-defined]
    result_value = _Rename(kept).visit(ir.atom_to_ast(ret.value))
    dropped = not value and _real_number(ret.value, known)
    if dropped:  # (grad: the caller reads the gradient only)
        result_value = ast.Constant(None)
    for v in sorted(gen.facts.managed):
        if v in gen.local_names or v in gen.deferred:
            continue  # each iteration assigns it before anything reads it; the sweep starts it
        if not (isinstance(ret.value, ir.Var) and v == ret.value.name):
            w.stmt(_assign(gen.bar(v), zero_like(v, gen.classes)))
        elif v in gen.facts.mutated:  # the caller's cotangent is never written into
            w.stmt(_assign(gen.bar(v), call("rt.copy_of", name(gen.bar(v)))))
    w.extend(sweep)
    grads: list[ast.expr] = []
    for p in wrt:
        if p in gen.facts.managed:
            grads.append(name(gen.bar(p)))
        elif p in gen.adjoint:
            grads.append(name(gen.adjoint[p]))
        else:
            grads.append(call("np.zeros_like", name(p)))
    result = ast.Tuple(elts=[result_value, ast.Tuple(elts=grads, ctx=ast.Load())], ctx=ast.Load())
    w.stmt(ast.Return(value=result))
    w.close()
    text = _optimize(w.render(), gen, known, batch, fuse)
    if dropped:
        text = drop_dead(text)
    return Generated(gen_name, fn.params + [seed], text, gen.restoring)


def _real_number(atom: ir.Atom, known: dict[str, tuple[tuple[int, ...], str]]) -> bool:
    """Do the call's shapes show the result ``atom`` to be one real number?"""
    if not isinstance(atom, ir.Var) or atom.name not in known:
        return False
    shape, dtype = known[atom.name]
    return shape == () and dtype in ("float64", "float32", "float16", "float")


def _seed_parts(atom: ir.Atom, seed: ast.expr) -> list[tuple[str, ast.expr]]:
    """``(variable, the part of the cotangent seeding it)`` for each variable of a result,
    a tuple's items by subscripts (nested tuples too)."""
    if isinstance(atom, ir.Var):
        return [(atom.name, seed)]
    if not isinstance(atom, ir.Tup):
        return []
    return [
        part
        for k, item in enumerate(atom.items)
        for part in _seed_parts(
            item, ast.Subscript(value=seed, slice=ast.Constant(k), ctx=ast.Load())
        )
    ]


def _flat_results(atom: ir.Atom) -> bool:
    """Are the results variables, constants or (nested) tuples of them?"""
    if isinstance(atom, ir.Tup):
        return all(_flat_results(item) for item in atom.items)
    return isinstance(atom, (ir.Var, ir.Const, ir.Free))


def _refuse_results(fn: ir.Function, aux: bool) -> ir.Return:
    """The function's ``return``, whose value must be a flat tuple (or a single value) for
    reverse mode to seed a cotangent for each item; with ``aux``, a pair."""
    ret = fn.body[-1]
    assert isinstance(ret, ir.Return)
    if aux and not (isinstance(ret.value, ir.Tup) and len(ret.value.items) == 2):
        raise UnsupportedSyntaxError(
            "has_aux=True needs the function to return a pair (value, aux)",
            loc_of(fn, ret.line),
            "return value, aux",
        )
    results = ret.value.items if isinstance(ret.value, ir.Tup) else (ret.value,)
    if aux:
        results = results[:1]
    if not all(_flat_results(a) for a in results):
        raise UnsupportedSyntaxError(
            "reverse mode of a function returning a dict (or a tuple holding one)",
            loc_of(fn, ret.line),
            "return the arrays as a tuple (forward mode, adgen.jvp, takes dict results)",
        )
    return ret


def _saved_names(
    fn: ir.Function,
    wrt: list[str],
    scalars: frozenset[str],
    namer: Namer,
    facts: Facts,
    classes: Classes,
    aux: bool,
    seed: str,
    known: dict[str, tuple[tuple[int, ...], str]],
    complex_values: ComplexValues,
) -> tuple[set[str], set[str], tuple[_Reverse, CodeWriter] | None]:
    """The names the forward sweep saves before overwriting them (those whose old value the
    adjoint sweep reads), what the adjoint sweep reads, and the sweep itself when it served
    as the probe (None: sweep again, saving those names)."""
    candidates = facts.multi - facts.test_names
    pushed = set(candidates)
    swept: tuple[_Reverse, CodeWriter] | None = None
    if not candidates and not aux:
        # nothing to save (straight-line code, mostly): the probe would sweep with the same
        # (empty) set and read what the sweep reads, so the sweep itself serves as the probe
        swept = _sweep(
            fn,
            wrt,
            scalars,
            namer,
            pushed,
            facts,
            classes,
            seed=seed,
            known=known,
            complex_values=complex_values,
        )
        reads = swept[1].reads
    else:
        written = _written_under_other_names(fn)
        for _ in range(5):  # saving fewer names can make a restore unnecessary: iterate
            probe_namer = copy.deepcopy(namer)  # only what the probe reads is used: no text
            _, probe = _sweep(
                fn,
                wrt,
                scalars,
                probe_namer,
                pushed,
                facts,
                classes,
                text=False,
                known=known,
                complex_values=complex_values,
            )
            reads = probe.reads | {
                t for t, group in written if t not in probe.reads and group & probe.reads
            }
            if candidates & reads == pushed:
                break
            pushed = candidates & reads
    return pushed, reads, swept


def _written_under_other_names(fn: ir.Function) -> list[tuple[str, set[str]]]:
    """The names in-place writes (``t[i] = v``) go through, each with the names that may hold
    its array (``t = b``: a helper's ``out`` parameter given the caller's ``b``, then
    ``np.exp(x, out)`` writes into ``b``'s array). Where the adjoint sweep reads one of those
    under another name, the values the write overwrites are that name's, and must be saved
    as a write through it would save them."""
    group: dict[str, str] = {}

    def root(v: str) -> str:
        while group.get(v, v) != v:
            v = group[v]
        return v

    statements = [s for s in fn.statements() if isinstance(s, ir.Assign)]
    for stmt in statements:
        if (
            stmt.prim.name == "assign"
            and len(stmt.targets) == 1
            and isinstance(stmt.args[0], ir.Var)
        ):
            a, b = root(stmt.targets[0]), root(stmt.args[0].name)
            if a != b:
                group[a] = b
    members: dict[str, set[str]] = {}
    for v in {*group, *group.values()}:
        members.setdefault(root(v), set()).add(v)
    return [
        (t, members.get(root(t), {t}))
        for stmt in statements
        if stmt.prim.name == "setitem"
        for t in stmt.targets
    ]


def _refuse_unsupported(fn: ir.Function, facts: Facts, reads: set[str]) -> None:
    """Refuse what the adjoint sweep cannot undo: a list changed in place under two names
    (in adgen's own code), and a loop condition whose values the adjoint sweep reads."""
    readers: dict[str, int] = {}
    for stmt in fn.statements():
        if isinstance(stmt, ir.Assign):
            for v in {v for a in ir.stmt_args(stmt) for v in ir.atom_vars(a)}:
                readers[v] = readers.get(v, 0) + 1
    for stmt in fn.statements():
        if (
            fn.filename.startswith("<adgen ")  # the user's lists are checked when lowering
            and isinstance(stmt, ir.Assign)
            and stmt.prim.name == "assign"
            and isinstance(stmt.args[0], ir.Var)
            and stmt.args[0].name in facts.lists
            and readers.get(stmt.args[0].name, 0) > 1  # not a temporary read only here
            and {stmt.targets[0], stmt.args[0].name} & facts.mutated
            and {stmt.targets[0], stmt.args[0].name} & facts.useful
        ):
            # one list object under two names, changed in place (adgen's own code, where
            # lists are not checked for aliases): the adjoint would treat them as two lists
            raise UnsupportedSyntaxError(
                "reverse mode of a list bound to a second name "
                f"(`{stmt.targets[0]} = {stmt.args[0].name}`) and changed in place",
                loc_of(fn, stmt.line),
                "differentiate in another order (forward mode over this code: adgen.jvp)",
            )
        if isinstance(stmt, ir.While) and facts.test_names & reads:
            raise UnsupportedSyntaxError(
                "reverse mode cannot replay this loop condition",
                loc_of(fn, stmt.line),
                "compute the condition into a variable inside the loop body",
            )


def _open_stacks(w: CodeWriter, fn: ir.Function, gen: _Reverse) -> None:
    """The lists the forward sweep saves values and snapshots on, and ``None`` for each
    saved name that has no value yet where it may first be saved."""
    if gen.pushed or gen.counters:
        w.stmt(_assign(gen.stack, ast.List(elts=[], ctx=ast.Load())))
    if any(gen.checkpoint_needed.values()):
        w.stmt(_assign(gen.snapshots, ast.List(elts=[], ctx=ast.Load())))
    unbound = sorted(
        v
        for v in gen.pushed | gen.restored
        if v not in fn.params
        and not any(
            id(s) in gen.first_binding and v in s.targets
            for s in fn.body
            if isinstance(s, ir.Assign)
        )
    )
    if unbound:
        w.stmt(
            ast.Assign(
                targets=[ast.Name(id=v, ctx=ast.Store()) for v in unbound],
                value=ast.Constant(None),
                lineno=0,
            )
        )


def _freed(
    fn: ir.Function, gen: _Reverse, sweep: CodeWriter, ret: ir.Return
) -> dict[int, list[str]]:
    """The values the forward sweep deletes after each top-level statement (by its place):
    those last used there that neither the adjoint sweep nor the result reads."""
    facts = gen.facts
    keep = sweep.reads | set(ir.atom_vars(ret.value)) | set(fn.params) | facts.multi | facts.managed
    last_use: dict[str, int] = {}
    for i, stmt in enumerate(fn.body):
        for v in _names(stmt):
            last_use[v] = i
    # values worth freeing: results of differentiable operations (a comparison's bool or a
    # shape is not worth a `del` line)
    worth = {
        t
        for s in fn.statements()
        if isinstance(s, ir.Assign) and s.prim.differentiable
        for t in s.targets
    }
    dead: dict[int, list[str]] = {}
    for v, i in last_use.items():
        if v not in keep and v in worth and gen.classes.get(v, frozenset({v})):
            dead.setdefault(i, []).append(v)
    dead.pop(len(fn.body) - 1, None)
    return dead


def _optimize(
    text: str,
    gen: _Reverse,
    known: dict[str, tuple[tuple[int, ...], str]],
    batch: bool,
    fuse: bool,
) -> str:
    """The passes of :mod:`adgen.backend.codeopt` over the written function, in their order."""
    text = drop_copies(text)
    text = batch_saves(text, gen.stack) if batch else text
    text = save_shapes_only(text, gen.stack)
    if known:  # code specialised for shapes: adjoints have their values' shapes
        sizes = {v: k[0] for v, k in known.items()}
        sizes.update({gen.bar(v): k[0] for v, k in known.items() if gen.bar(v) not in known})
        text = sum_before_linear(text, sizes)
    # code for NumPy arrays of known shapes that adgen does not read again
    for_numpy = fuse and batch and reuse.applies(known)
    if for_numpy:
        text = collect_terms(text, known)
    # names provably holding scalars (and their adjoints): nothing to free or shrink
    scalar = {v for v, cls in gen.classes.items() if cls == frozenset()}
    small = frozenset(scalar | {gen.bar(v) for v in scalar})
    text = share_repeated(fuse_temporaries(text)) if fuse else text
    if for_numpy:  # (an adjoint has its value's shape and dtype)
        bars = {gen.bar(v): k for v, k in known.items() if gen.bar(v) not in known}
        text = drop_broadcasts(text, {**bars, **known})
    text = keep_shapes_and_free(text, small)
    if for_numpy:
        text = reuse.reuse_buffers(text, known)
        text = direct_reductions(text, {**bars, **known})
    return text
