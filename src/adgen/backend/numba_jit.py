"""``backend="numba"``: derivative code compiled by Numba, the NumPy code wherever it cannot be.

:func:`wrap` takes the generated function the NumPy backend compiled and returns what the
derivative calls instead: a :class:`NumbaCode` that runs the same code rewritten for Numba
(:mod:`adgen.backend.numba_code`) and compiled by ``numba.njit`` on its first call (Numba
types it for the arguments then). Where that is not possible the answer is the NumPy code's,
never a different one:

* code the rewrite does not take (a SciPy call, an outside object, a helper without a Numba
  form) or that Numba fails to compile: the NumPy code runs, and a :class:`BackendWarning`
  says why, naming the user's line, once per function and reason -- or, with ``strict``, a
  :class:`BackendError` is raised;
* Numba code that raises when it runs (a division by zero under Python's error model, a
  placeholder a helper cannot read): that call runs the NumPy code, which gives its answer or
  raises adgen's error for the user's line.

When adgen's disk cache is on (:mod:`adgen.backend.diskcache`) the rewritten source is written
to a real file under its directory, ``numba/<key>.py``, and compiled with ``cache=True``:
Numba keeps the machine code beside it, and a new process loads it instead of compiling.
The key covers the text, adgen's own sources (the helpers' Numba forms among them) and the
versions of Numba, NumPy and Python. Outside numbers are inlined into the text, and the code
reads no other outside value, so nothing Numba freezes at compile time goes stale.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import linecache
import math
import os
import re
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from adgen import ir
from adgen.backend import diskcache
from adgen.backend.numba_code import NotForNumba, NumbaSource, numba_source, user_line
from adgen.backend.numba_fuse import ARRAY, MISMATCH, fuse
from adgen.errors import BackendError, BackendWarning
from adgen.generated import Generated

BACKENDS = ("numpy", "numba")
ENV = "ADGEN_BACKEND"
_HEADER = "import math\nimport numpy as np\nfrom adgen.backend import numba_runtime as nbrt\n\n"
_warned: set[str] = set()
_lock = threading.Lock()
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')
# the names Numba's compile errors begin with, left out of the reason given
_PIPELINE = re.compile(r"^(Failed in .* mode pipeline|During: |\x1b)")
stats = {
    "compiled": 0,
    "loaded": 0,
    "fallbacks": 0,
    "runtime_fallbacks": 0,
    "fused": 0,  # functions compiled with fused loops
    "unfused": 0,  # of those, compiled again without them (Numba could not type them...)
}


def available() -> bool:
    """Is Numba installed (without importing it)?"""
    return importlib.util.find_spec("numba") is not None


def chosen(backend: str | None, strict: bool = False) -> str:
    """The backend token the pipeline caches under: ``"numpy"``, ``"numba"`` or
    ``"numba:strict"``; ``None`` reads ``$ADGEN_BACKEND`` (default ``numpy``)."""
    name = backend if backend is not None else os.environ.get(ENV, "").strip().lower() or "numpy"
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, not {name!r}")
    if name == "numba" and strict:
        return "numba:strict"
    return name


def refuse(function: ir.Function, why: str, label: str | None, strict: bool) -> None:
    """Say (once) that the NumPy code runs for ``function`` and why; with ``strict``, raise."""
    loc = function.location(label) if label is not None else None
    message = f"backend='numba' cannot compile the derivative of {function.name}: {why}"
    hint = "the NumPy code runs instead (the same answer); strict=True raises this error"
    if strict:
        raise BackendError(
            message, loc, "drop strict=True to run the NumPy code, or backend='numpy'"
        )
    stats["fallbacks"] += 1
    where = f"{loc}: " if loc is not None else ""
    text = f"adgen: {where}{message}; {hint}"
    with _lock:
        if text in _warned:
            return
        _warned.add(text)
    warnings.warn(text, BackendWarning, stacklevel=2)


def rewrite(gen: Generated, free: dict[str, Any]) -> NumbaSource:
    """``gen``'s source rewritten for Numba (:class:`NotForNumba` where it cannot be)."""
    from adgen.backend.numba_runtime import HELPERS
    from adgen.rules.namespace import TEMPLATE_GLOBALS

    return numba_source(gen.source, {**TEMPLATE_GLOBALS, **free}, HELPERS)


def wrap(
    gen: Generated,
    compiled: Callable[..., Any],
    function: ir.Function,
    free: dict[str, Any],
    names: dict[str, Any],
    strict: bool,
) -> Callable[..., Any]:
    """What a derivative compiled for ``backend="numba"`` calls: a :class:`NumbaCode`, or the
    NumPy code ``compiled`` where Numba cannot run it (said by :func:`refuse`)."""
    if not available():
        refuse(function, "Numba is not installed (pip install 'adgen[numba]')", None, strict)
        return compiled
    if names:  # code made for an array-API namespace other than NumPy
        refuse(function, "its arrays are not NumPy arrays", None, strict)
        return compiled
    try:
        source = rewrite(gen, free)
    except NotForNumba as exc:
        label = user_line(gen.source, exc.line) if exc.line is not None else None
        refuse(function, f"it uses {exc.why}", label, strict)
        return compiled
    return NumbaCode(source, compiled, function, strict)


def sample(
    fn: Callable[..., Any], args: tuple[Any, ...], names: tuple[str, ...]
) -> tuple[dict[str, Any], dict[str, str]]:
    """What ``fn``'s names hold while it runs on ``args``: the first value other than ``None``
    of each of ``names`` (what the placeholders of adgen's NumPy code hold, the types Numba
    should give them), and the kind of every name (:func:`adgen.backend.numba_fuse.kinds`:
    what fused loops may read). Read by a trace hook on this
    thread, on ``fn``'s frame only, at the first two runs of each line and at its return.

    >>> import numpy as np
    >>> def f(x, n):
    ...     y = None
    ...     for k in range(n):
    ...         y = x * 2
    ...     return y
    >>> first, kinds = sample(f, (np.ones(2), 2), ("y",))
    >>> first["y"].tolist(), kinds
    ([2.0, 2.0], {'x': 'array', 'n': 'number', 'k': 'number', 'y': 'array'})
    """
    from adgen.backend.numba_fuse import kinds, observed

    code = getattr(fn, "__code__", None)
    seen: dict[str, Any] = {}
    held: dict[str, set[str | None]] = {}
    wanted = set(names)
    runs: dict[int, int] = {}
    if code is None:
        return seen, {}

    def local(frame: Any, event: str, arg: Any) -> Any:
        at = frame.f_lineno
        runs[at] = runs.get(at, 0) + 1
        if runs[at] > 2 and event != "return":
            return local
        for name, value in frame.f_locals.items():
            if value is None:
                continue
            if name in wanted:
                seen[name] = value
                wanted.discard(name)
            held.setdefault(name, set()).add(observed(value))
        return local

    def calls(frame: Any, event: str, arg: Any) -> Any:
        return local if event == "call" and frame.f_code is code else None

    before = sys.gettrace()
    sys.settrace(calls)
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - the call that follows gives the answer, or the error
        pass
    finally:
        sys.settrace(before)
    return seen, kinds(held)


def _described(value: Any) -> str | None:
    """The kinds of ``value`` the texts :meth:`NumbaCode._prepare` makes depend on (types,
    dtypes, ranks), or ``None`` for a value it cannot describe.

    >>> import numpy as np
    >>> _described((np.zeros((2, 3)), 1.5, [2, None]))
    '(ndarray <f8 2,float,[int,NoneType])'
    """
    if isinstance(value, np.ndarray):
        return f"ndarray {value.dtype.str} {value.ndim}"
    if isinstance(value, np.generic):
        return f"{type(value).__name__} {value.dtype.str}"
    if value is None or type(value) in (bool, int, float, complex, str, range):
        return type(value).__name__
    if type(value) in (tuple, list):
        items = [_described(v) for v in value]
        if any(item is None for item in items):
            return None
        ends = "()" if type(value) is tuple else "[]"
        return ends[0] + ",".join(items) + ends[1]  # type: ignore[arg-type]
    return None


class NumbaCode:
    """A derivative's code compiled by Numba (on its first call), the NumPy code as its
    fallback. ``__code__`` is the NumPy code's: an error it raises names the user's line
    (:func:`adgen.pipeline.run`)."""

    def __init__(
        self,
        source: NumbaSource,
        fallback: Callable[..., Any],
        function: ir.Function,
        strict: bool,
    ) -> None:
        self.source = source
        self.fallback = fallback
        self.function = function
        self.strict = strict
        # the code without fused loops, once the first call made it (the fused code's
        # fallback where Numba cannot type it or its arrays' lengths differ)
        self.plain: NumbaSource | None = None
        self.jitted: Any = None
        self.failed = False
        self.ran = False
        self.filename = ""

    @property
    def __code__(self) -> Any:
        return getattr(self.fallback, "__code__", None)

    @property
    def text(self) -> str:
        """The source Numba compiles (with its imports)."""
        return _HEADER + self.source.text

    def __call__(self, *args: Any) -> Any:
        if self.failed:
            return self.fallback(*args)
        if self.plain is None:
            self._prepare(args)
        jitted = self.jitted if self.jitted is not None else self._load()
        from numba.core.errors import NumbaError, NumbaPerformanceWarning

        try:
            if not self.ran:  # (its first call compiles: Numba's advice is not the user's)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", NumbaPerformanceWarning)
                    out = jitted(*args)
                self.ran = True
                return out
            return jitted(*args)
        except NumbaError as exc:  # compiling it for these arguments' types failed
            if self._unfuse():
                return self(*args)
            self.failed = True
            self._refuse_compiled(exc)
            return self.fallback(*args)
        except Exception as exc:  # noqa: BLE001 - the NumPy code gives the answer, or the error
            if MISMATCH in str(exc) and self._unfuse():
                return self(*args)
            stats["runtime_fallbacks"] += 1
            return self.fallback(*args)

    def _prepare(self, args: tuple[Any, ...]) -> None:
        """Before the first compile: the placeholders typed, and the elementwise statements
        fused (:mod:`adgen.backend.numba_fuse`), from what the names hold when the NumPy code
        runs -- on a deep copy of the arguments: the run writes into no array of the caller's
        and moves no random generator it is given (the rewrite refuses ``np.random``'s).
        With the disk cache on, both texts are kept for the arguments' kinds: a new process
        reads them instead of running the NumPy code again."""
        where = self._prepared_path(args)
        if where is not None and self._read_prepared(where):
            return
        try:
            copied = copy.deepcopy(args)
        except Exception:  # noqa: BLE001 - no copy, no run: placeholders stay None, no fusion
            copied = None
        values, kinds = (
            ({}, {}) if copied is None else sample(self.fallback, copied, self.source.placeholders)
        )
        if self.source.placeholders:
            self.source = self.source.typed(values)
        self.plain = self.source
        if ARRAY in kinds.values():
            text = fuse(self.source.text, kinds)
            if text != self.source.text:
                self.source = NumbaSource(self.source.name, text)
                stats["fused"] += 1
        if where is not None and copied is not None:
            texts = {"plain": self.plain.text, "fused": self.source.text}
            try:
                where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                diskcache.write_atomic(where, json.dumps(texts))
            except OSError:
                pass

    def _prepared_path(self, args: tuple[Any, ...]) -> Any:
        """Where the disk cache keeps the texts :meth:`_prepare` makes for ``args``' kinds."""
        where = diskcache.directory()
        kinds = _described(args)
        if where is None or kinds is None:
            return None
        key = "\0".join([self.source.text, kinds, diskcache.adgen_digest()])
        return where / "numba" / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.prep.json"

    def _read_prepared(self, where: Any) -> bool:
        try:
            texts = json.loads(where.read_text(encoding="utf-8"))
            plain, fused = texts["plain"], texts["fused"]
        except (OSError, ValueError, KeyError, TypeError):
            return False
        if not (isinstance(plain, str) and isinstance(fused, str)):
            return False
        self.plain = NumbaSource(self.source.name, plain)
        self.source = self.plain if fused == plain else NumbaSource(self.source.name, fused)
        stats["fused"] += self.source is not self.plain
        return True

    def _unfuse(self) -> bool:
        """Run the code without fused loops from now on (if it had any)."""
        if self.plain is None or self.plain is self.source:
            return False
        self.source, self.jitted, self.ran = self.plain, None, False
        stats["unfused"] += 1
        return True

    def _refuse_compiled(self, exc: Exception) -> None:
        text = str(exc)
        reason = next(
            (
                row.strip()
                for row in text.splitlines()
                if row.strip() and not _PIPELINE.match(row.strip())
            ),
            type(exc).__name__,
        )
        called = next((row.strip()[4:] for row in text.splitlines() if row.startswith(" >>> ")), "")
        if called:
            reason = f"{reason} ({called})"
        label = None
        for match in _FILE_LINE.finditer(text):
            if match.group(1) == self.filename:
                label = user_line(self.text, int(match.group(2)))
                break
        reason = reason if len(reason) <= 300 else reason[:297] + "..."
        refuse(self.function, f"Numba cannot compile it: {reason}", label, self.strict)

    def _load(self) -> Any:
        import numba

        from adgen.backend import numba_runtime

        text = self.text
        where = diskcache.directory()
        digest = hashlib.sha256(
            "\0".join(
                [text, diskcache.adgen_digest(), numba_runtime.versions(), sys.version]
            ).encode()
        ).hexdigest()
        cache = False
        if where is not None:
            path = where / "numba" / f"{digest[:32]}.py"
            try:
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                if not path.exists() or path.read_text(encoding="utf-8") != text:
                    diskcache.write_atomic(path, text)
                self.filename, cache = str(path), True
            except OSError:
                cache = False
        if not cache:
            self.filename = f"<adgen numba {self.source.name} {digest[:8]}>"
            rows = text.splitlines(keepends=True)
            linecache.cache[self.filename] = (len(text), None, rows, self.filename)
        namespace: dict[str, Any] = {"__name__": "adgen.generated_numba", "math": math}
        exec(compile(text, self.filename, "exec"), namespace)
        self.jitted = numba.njit(cache=cache, error_model="python")(namespace[self.source.name])
        stats["compiled"] += 1
        return self.jitted
