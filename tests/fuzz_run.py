"""The long-run fuzzer: many random programs, every outcome recorded, a summary at the end.

    python tests/fuzz_run.py --programs 20000 --seed 123 --out /tmp/fuzz.jsonl --jobs 2

Programs come from the generator of ``tests/test_fuzz.py`` (``fuzz_programs.write_program``),
its random choices made by ``random.Random(f"{seed}:{n}")`` instead of hypothesis: fast,
and program ``n`` of a run with ``--seed seed`` is written again from ``(seed, n)`` alone.
Each is checked and classified by ``fuzz_check.classify`` (ok / wrong / crash / refused /
unsteady / invalid) in a worker process, with a time limit per program (``--timeout``, seconds;
``timeout`` is an outcome of its own).

``--out`` gets one JSON line per program (``seed``, ``index``, ``kind``, ``category``,
``key`` (the message without the program's own names), ``message``, ``features``,
``seconds``; the ``source`` too unless the outcome is ``ok``), then a line
``{"summary": ...}``; the summary is printed too: programs run, defects by class
(wrong derivatives, crashes), refusals by message, the refusal rate, and for each feature
of the generator how many of its programs had a defect.

    python tests/fuzz_run.py --seed 123 --replay 1234
    python tests/fuzz_run.py --seed 123 --shrink 1234

``--replay`` writes program 1234 of seed 123 again, prints it, checks it in this process
and prints the outcome with the traceback; ``--shrink`` then deletes statements, unwraps
blocks and drops terms of the results while the outcome stays the same (same kind and
category, for crashes and refusals the same message), and prints the smallest program.
``--without loopvar,nested,overlap,container`` leaves statement kinds of the generator out
(``fuzz_programs.Writer.statement``; ``overlap``: the overlapping writes; ``nested``: in
conditions too; ``container``: the container argument) to look past known defects.
"""

from __future__ import annotations

import argparse
import ast
import collections
import concurrent.futures as futures
import copy
import json
import random
import signal
import sys
import tempfile
import time
import traceback
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
if (HERE.parent / "src" / "adgen").is_dir():  # this checkout's adgen, not an installed one
    sys.path.insert(0, str(HERE.parent / "src"))

from fuzz_check import Outcome, classify  # noqa: E402
from fuzz_programs import Program, SeededChoices, write_program  # noqa: E402


class Timeout(BaseException):  # not an Exception: nothing on the way catches it
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise Timeout()


def program_of(
    seed: int, index: int, twice_share: float, without: frozenset[str] = frozenset()
) -> tuple[Program, int]:
    """Program ``index`` of the run with ``seed``, and the seed of its arguments."""
    program = write_program(SeededChoices(f"{seed}:{index}"), twice_share, without)
    return program, random.Random(f"{seed}:{index}:inputs").randint(0, 2**16)


_FOLDER: Path | None = None


def _start_worker(folder: str) -> None:
    global _FOLDER
    _FOLDER = Path(folder)
    signal.signal(signal.SIGALRM, _alarm)
    import warnings

    warnings.simplefilter("ignore")  # NumPy's deprecations, adgen's own warnings


def run_one(
    seed: int, index: int, twice_share: float, timeout: float, without: frozenset[str]
) -> dict[str, Any]:
    assert _FOLDER is not None
    start = time.perf_counter()
    program, input_seed = program_of(seed, index, twice_share, without)
    folder = _FOLDER / f"p{index}"
    folder.mkdir(exist_ok=True)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        outcome = classify(program, folder, input_seed)
    except Timeout:
        outcome = Outcome("timeout", f"over {timeout:g} s", "", sorted(program.features))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    record: dict[str, Any] = {
        "seed": seed,
        "index": index,
        "inputs_seed": input_seed,
        "kind": outcome.kind,
        "category": outcome.category,
        "key": outcome.key() if outcome.kind != "ok" else "",
        "message": outcome.message[:2000],
        "features": sorted(program.features),
        "events": [e for e in outcome.events if e not in program.features],
        "twice": program.twice,
        "seconds": round(time.perf_counter() - start, 3),
    }
    if outcome.kind != "ok":
        record["source"] = program.source
    return record


def summary(records: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    kinds = collections.Counter(r["kind"] for r in records)
    by_key: dict[str, dict[str, list[int]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    for r in records:
        if r["kind"] != "ok":
            by_key[r["kind"]][r["key"]].append(r["index"])
    features: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in records:
        for f in r["features"]:
            features[f]["programs"] += 1
            features[f][r["kind"]] += 1
    n = len(records)

    def classes(kind: str) -> list[dict[str, Any]]:
        found = sorted(by_key[kind].items(), key=lambda item: -len(item[1]))
        return [{"count": len(ix), "key": key, "programs": ix[:10]} for key, ix in found]

    return {
        "programs": n,
        "seconds": round(seconds, 1),
        "outcomes": dict(kinds.most_common()),
        "defects": kinds["wrong"] + kinds["crash"],
        "refusal_rate": round(kinds["refused"] / n, 4) if n else 0.0,
        "wrong": classes("wrong"),
        "crash": classes("crash"),
        "refused": classes("refused"),
        "unsteady": classes("unsteady"),
        "invalid": classes("invalid"),
        "timeout": classes("timeout"),
        "features": {
            f: {
                "programs": c["programs"],
                "defects": c["wrong"] + c["crash"],
                "refused": c["refused"],
            }
            for f, c in sorted(features.items())
        },
    }


def show(s: dict[str, Any]) -> str:
    lines = [
        f"{s['programs']} programs in {s['seconds']} s: "
        + ", ".join(f"{k} {v}" for k, v in s["outcomes"].items()),
        f"defects: {s['defects']}; refusal rate: {100 * s['refusal_rate']:.1f}%",
    ]
    for kind in ("wrong", "crash", "refused", "unsteady", "invalid", "timeout"):
        if s[kind]:
            lines.append(f"\n{kind} ({sum(c['count'] for c in s[kind])}), by class:")
            for c in s[kind]:
                lines.append(f"  {c['count']:5d}  {c['key']}  e.g. programs {c['programs'][:5]}")
    risky = [(f, c) for f, c in s["features"].items() if c["defects"] and c["programs"] >= 5]
    risky.sort(key=lambda fc: -fc[1]["defects"] / fc[1]["programs"])
    if risky:
        lines.append("\nfeatures by share of their programs with a defect:")
        for f, c in risky[:25]:
            share = 100 * c["defects"] / c["programs"]
            lines.append(f"  {share:5.1f}%  of {c['programs']:5d}  {f}")
    return "\n".join(lines)


def replay(seed: int, index: int, twice_share: float, without: frozenset[str]) -> None:
    program, input_seed = program_of(seed, index, twice_share, without)
    print(program.source)
    print(f"# twice={program.twice} container={program.container} inputs seed={input_seed}")
    print("# features: " + ", ".join(sorted(program.features)))
    with tempfile.TemporaryDirectory() as folder:
        outcome = classify(program, Path(folder), input_seed)
    print(f"\n{outcome.kind}: {outcome.category}\n{outcome.message}")
    if outcome.error is not None:
        traceback.print_exception(outcome.error)


# -- shrinking a program by hand's first steps ----------------------------------------------------


def _blocks(node: ast.AST, path: tuple[Any, ...] = ()) -> Any:
    """(path, statements) of every block under ``node`` (bodies and else branches)."""
    for name in ("body", "orelse"):
        stmts = getattr(node, name, None)
        if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
            yield path + (name,), stmts
            for i, s in enumerate(stmts):
                yield from _blocks(s, path + (name, i))


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        node = node[step] if isinstance(step, int) else getattr(node, step)
    return node


def _terms(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _terms(node.left) + _terms(node.right)
    return [node]


def _edits(module: ast.Module) -> list[tuple[str, tuple[Any, ...], int]]:
    """Smaller programs: delete a statement, unwrap a block, drop a term of a sum returned."""
    out = []
    for i, node in enumerate(module.body):
        if isinstance(node, ast.FunctionDef) and node.name != "program":
            out.append(("delete", ("body",), i))
    fn = next(i for i, n in enumerate(module.body) if getattr(n, "name", "") == "program")
    for path, stmts in _blocks(module.body[fn], ("body", fn)):
        for i in reversed(range(len(stmts))):
            s = stmts[i]
            if len(stmts) > 1 or path[-1] == "orelse":
                out.append(("delete", path, i))
            if isinstance(s, (ast.If, ast.For, ast.While)):
                out.append(("unwrap body", path, i))
                if s.orelse:
                    out.append(("unwrap orelse", path, i))
            if isinstance(s, ast.Return) and s.value is not None:
                value = s.value.elts[0] if isinstance(s.value, ast.Tuple) else s.value
                for k in range(len(_terms(value))):
                    if len(_terms(value)) > 1:
                        out.append((f"term {k}", path, i))
    return out


def _apply(module: ast.Module, edit: tuple[str, tuple[Any, ...], int]) -> str:
    module = copy.deepcopy(module)
    what, path, i = edit
    stmts = _at(module, path)
    if what == "delete":
        del stmts[i]
    elif what.startswith("unwrap"):
        s = stmts[i]
        stmts[i : i + 1] = s.body if what == "unwrap body" else s.orelse
    else:
        k = int(what.split()[1])
        s = stmts[i]
        tuple_result = isinstance(s.value, ast.Tuple)
        value = s.value.elts[0] if tuple_result else s.value
        terms = _terms(value)
        del terms[k]
        total = terms[0]
        for term in terms[1:]:
            total = ast.BinOp(total, ast.Add(), term)
        if tuple_result:
            s.value.elts[0] = total
        else:
            s.value = total
    return ast.unparse(ast.fix_missing_locations(module)) + "\n"


def shrink(seed: int, index: int, twice_share: float, without: frozenset[str]) -> None:
    program, input_seed = program_of(seed, index, twice_share, without)
    small = shrink_program(program, input_seed)
    print(small.source)
    print(f"# twice={small.twice} container={small.container} inputs seed={input_seed}")


def shrink_program(program: Program, input_seed: int) -> Program:
    """A smaller program with the outcome of ``program`` (itself if none is found)."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        want = classify(program, folder, input_seed)
        print(f"# {want.kind}: {want.key()}", flush=True)
        if want.kind in ("ok", "invalid"):
            return program

        def same(candidate: Program) -> bool:
            signal.setitimer(signal.ITIMER_REAL, 60.0)
            try:
                got = classify(candidate, folder, input_seed)
            except Timeout:
                return False
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            if (got.kind, got.category) != (want.kind, want.category):
                return False
            return want.kind == "wrong" or got.key() == want.key()

        signal.signal(signal.SIGALRM, _alarm)
        if program.twice and not want.category.startswith("second order"):
            once = Program(
                program.source, program.scalar, False, program.features, program.container
            )
            if same(once):
                program = once
        progress = True
        while progress:
            progress = False
            module = ast.parse(program.source)
            edits, k = _edits(module), 0
            while k < len(edits):
                source = _apply(module, edits[k])
                candidate = Program(
                    source, program.scalar, program.twice, program.features, program.container
                )
                if same(candidate):
                    program, progress = candidate, True
                    module = ast.parse(source)
                    edits = _edits(module)  # the same position again: the next candidate
                else:
                    k += 1
    return program


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0, help="index of the first program")
    parser.add_argument("--out", type=Path, help="one JSON line per program, then the summary")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per program")
    parser.add_argument("--twice-share", type=float, default=0.3, help="second-order share")
    parser.add_argument("--replay", type=int, metavar="INDEX", help="check one program here")
    parser.add_argument("--shrink", type=int, metavar="INDEX", help="shrink one program here")
    parser.add_argument("--without", default="", help="statement kinds to leave out (a,b,...)")
    args = parser.parse_args(argv)
    without = frozenset(k for k in args.without.split(",") if k)
    if args.replay is not None:
        replay(args.seed, args.replay, args.twice_share, without)
        return 0
    if args.shrink is not None:
        shrink(args.seed, args.shrink, args.twice_share, without)
        return 0

    out = args.out.open("w") if args.out else None
    records: list[dict[str, Any]] = []
    start = time.perf_counter()
    todo = iter(range(args.start, args.start + args.programs))
    extra = {"max_tasks_per_child": 200} if sys.version_info >= (3, 11) else {}
    with tempfile.TemporaryDirectory() as folder:

        def new_pool() -> futures.ProcessPoolExecutor:
            return futures.ProcessPoolExecutor(
                args.jobs, initializer=_start_worker, initargs=(folder,), **extra
            )

        pools = [new_pool()]
        running: dict[futures.Future[dict[str, Any]], tuple[int, int]] = {}

        def submit() -> None:
            for index in todo:
                task = (args.seed, index, args.twice_share, args.timeout, without)
                running[pools[-1].submit(run_one, *task)] = (index, len(pools))
                if len(running) >= 2 * args.jobs:
                    return

        submit()
        while running:
            done, _ = futures.wait(running, return_when=futures.FIRST_COMPLETED)
            for fut in sorted(done, key=lambda f: running[f]):
                index, generation = running.pop(fut)
                try:
                    record = fut.result()
                except BrokenProcessPool:
                    # a worker died (it is not known which program killed it)
                    program, _ = program_of(args.seed, index, args.twice_share, without)
                    record = {
                        "seed": args.seed,
                        "index": index,
                        "kind": "crash",
                        "category": "worker process died",
                        "key": "worker process died (this or another program then running)",
                        "message": "",
                        "features": sorted(program.features),
                        "events": [],
                        "twice": program.twice,
                        "seconds": 0.0,
                        "source": program.source,
                    }
                    if generation == len(pools):  # the first of its programs seen
                        pools[-1].shutdown(wait=False, cancel_futures=True)
                        pools.append(new_pool())
                records.append(record)
                if out:
                    out.write(json.dumps(record) + "\n")
                    out.flush()
                if len(records) % 100 == 0:
                    kinds = collections.Counter(r["kind"] for r in records)
                    print(f"{len(records)} programs: {dict(kinds)}", file=sys.stderr, flush=True)
            submit()
        pools[-1].shutdown()
    s = summary(sorted(records, key=lambda r: r["index"]), time.perf_counter() - start)
    if out:
        out.write(json.dumps({"summary": s}) + "\n")
        out.close()
    print(show(s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
