"""Every piece of code adgen generates for a fixed corpus, written to one text file, so that
a change meant to keep behaviour (a refactoring) can be checked byte for byte::

    python tests/generated_code.py /tmp/before.txt     # on the old code
    python tests/generated_code.py /tmp/after.txt      # on the new code
    diff /tmp/before.txt /tmp/after.txt                # must print nothing

The corpus: every function of ``examples/`` and ``benchmarks/problems/`` (read by the
command line's static reader, as ``python -m adgen FILE --function NAME`` does), every
case of the rule registry (``tests/registry_cases.py``), and the first ``--programs``
random programs of ``tests/fuzz_programs.py`` for a fixed seed. For each: the IR, the
reverse- and forward-mode code for arguments of any shape, and the code specialised for
the case's arguments. A refusal is recorded by its message, which must not change either.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
if (ROOT / "src" / "adgen").is_dir():  # this checkout's adgen, not an installed one
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

import adgen  # noqa: E402
from adgen import cli  # noqa: E402


def _record(out: list[str], title: str, make: Callable[[], str]) -> None:
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = make()
    except adgen.AdgenError as exc:
        text = f"refused: {type(exc).__name__}: {exc.one_line()}"
    except Exception as exc:  # recorded too: a crash must stay a crash, not change silently
        text = f"raised: {type(exc).__name__}: {exc}"
    # temporary folders and process ids change from run to run
    text = re.sub(re.escape(tempfile.gettempdir()) + r"/[^/\s]+/", "<tmp>/", text)
    text = re.sub(r"adgen_fuzz_\d+_", "adgen_fuzz_P_", text)
    out.append(f"==== {title}\n{text.rstrip()}\n")


def _cli(argv: list[str]) -> str:
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
        code = cli.main([*argv, "--color", "never"])
    return f"{stream.getvalue()}exit {code}"


def files(out: list[str]) -> None:
    import ast

    for folder in ("examples", "benchmarks/problems"):
        for path in sorted((ROOT / folder).glob("*.py")):
            tree = ast.parse(path.read_text())
            names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
            rel = path.relative_to(ROOT)
            for name in names:
                for mode in ("reverse", "forward"):
                    argv = [str(rel), "--function", name, "--mode", mode]
                    _record(out, f"{rel} {name} {mode}", lambda a=argv: _cli(a))
                _record(
                    out,
                    f"{rel} {name} ir",
                    lambda r=rel, n=name: _cli([str(r), "--function", n, "--ir"]),
                )


def _sources(out: list[str], title: str, fn: Any, wrt: Any, args: tuple[Any, ...]) -> None:
    _record(out, f"{title} ir", lambda: str(adgen.trace(fn)))
    for mode in ("reverse", "forward"):
        _record(out, f"{title} {mode}", lambda m=mode: adgen.source(fn, m, wrt=wrt))
        _record(
            out,
            f"{title} {mode} specialised",
            lambda m=mode: adgen.source(fn, m, wrt=wrt, args=args),
        )


def registry(out: list[str]) -> None:
    from registry_cases import case_function, registry_cases

    for case in registry_cases():
        fn = case_function(case)
        wrt = tuple(range(len(case.args)))
        _sources(out, f"rule case {case.id}", fn, wrt, case.draw_args())


def fuzz(out: list[str], programs: int, seed: int) -> None:
    from fuzz_check import inputs, load
    from fuzz_run import program_of

    with tempfile.TemporaryDirectory() as folder:
        for index in range(programs):
            program, input_seed = program_of(seed, index, 0.25)
            try:
                fn = load(Path(folder), program.source)
            except Exception as exc:
                out.append(f"==== fuzz {seed}:{index}\nnot loaded: {type(exc).__name__}\n")
                continue
            args = inputs(program, input_seed)
            _sources(out, f"fuzz {seed}:{index}", fn, (0, 1, 2), args)


def corpus(programs: int, seed: int) -> Iterator[str]:
    out: list[str] = []
    files(out)
    registry(out)
    fuzz(out, programs, seed)
    yield from out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the text file to write")
    parser.add_argument("--programs", type=int, default=400, help="random programs (400)")
    parser.add_argument("--seed", type=int, default=2026, help="their seed (2026)")
    args = parser.parse_args()
    with open(args.out, "w") as f:
        n = 0
        for piece in corpus(args.programs, args.seed):
            f.write(piece)
            n += 1
    print(f"{n} pieces of generated code written to {args.out}")


if __name__ == "__main__":
    main()
