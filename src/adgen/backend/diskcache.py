"""The persistent cache: generated derivative *source* kept on disk between processes.

Off unless switched on by the environment:

* ``ADGEN_CACHE_DIR=/some/dir`` -- keep entries in that directory;
* ``ADGEN_DISK_CACHE=1`` -- keep them in the user cache directory,
  ``$XDG_CACHE_HOME/adgen`` or ``~/.cache/adgen``; ``ADGEN_DISK_CACHE=0`` switches the
  cache off even when ``ADGEN_CACHE_DIR`` is set.

What is stored is the generated source text (a readable ``.py`` file with a one-line
header), never a pickled or marshalled code object; a hit compiles it again.

The key is a SHA-256 over everything the generated text depends on:

* the options of the derivative (the in-memory cache key: mode, ``wrt``, scalar and
  tree specialisation);
* the function itself: module, qualified name, file name, first line, source text, a
  digest of its code object, its default values;
* every outside name the function and the functions inlined into it resolved while
  being read (the list :class:`adgen.frontend.parse.LiveScope` records, which the in-memory
  cache re-checks on every call): each with a fingerprint of the object found --
  a callee's source and code digest, a module's name, a number's value, an array's
  dtype and shape, the type of any other value (generated code only names values;
  it reads them when it runs);
* the lowered IR (statements, line labels, scalar names) and every derivative rule it
  uses (templates and flags), so a rule registered, changed or removed gives a new key;
* adgen's version and a digest of adgen's own source files, the Python version and
  implementation, and NumPy's version.

A disk lookup happens after the function is read and lowered (which is what yields
the dependency list, in milliseconds); it saves the derivation and emission, the
expensive part. A dependency adgen cannot fingerprint (a callable object without a
name) makes the derivative uncacheable on disk: it is built as usual and not stored,
never keyed on less than its dependencies.

Entries are written atomically (a temporary file in the same directory, then
:func:`os.replace`), so a reader never sees half an entry. An entry that does not read
back whole -- truncated, edited, not valid Python -- is ignored, rebuilt and
rewritten. The directory is created private to the user (mode 0o700): its files are
executed, like ``__pycache__``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
import sys
import tempfile
import threading
import types
import warnings
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from adgen import ir
from adgen.generated import Generated
from adgen.version import __version__

FORMAT = 1
_HEADER = "# adgen-cache "
ENV_DIR = "ADGEN_CACHE_DIR"
ENV_SWITCH = "ADGEN_DISK_CACHE"
_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off", "")

stats = {"hits": 0, "misses": 0, "writes": 0, "corrupt": 0, "uncacheable": 0, "errors": 0}
_lock = threading.Lock()
_warned: set[str] = set()
_adgen_digest: str | None = None
# why the last derivative of a function was not cacheable on disk (qualified name -> why)
why_uncacheable: dict[str, str] = {}


class Uncacheable(Exception):
    """An object in a function's dependencies that has no stable fingerprint."""


def _warn_once(message: str) -> None:
    with _lock:
        if message in _warned:
            return
        _warned.add(message)
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def default_directory() -> Path:
    """The user cache directory: ``$XDG_CACHE_HOME/adgen``, else ``~/.cache/adgen``."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "adgen"


def directory() -> Path | None:
    """Where entries are kept, or None when the disk cache is off (the default)."""
    switch = os.environ.get(ENV_SWITCH)
    where = os.environ.get(ENV_DIR, "")
    if switch is not None:
        value = switch.strip().lower()
        if value in _OFF:
            return None
        if value not in _ON:
            _warn_once(
                f"adgen: {ENV_SWITCH}={switch!r} is neither 1 nor 0; the disk cache stays off"
            )
            return None
        return Path(where).expanduser() if where else default_directory()
    return Path(where).expanduser() if where else None


# -- fingerprints ---------------------------------------------------------------------------


def _canonical(value: Any) -> Any:
    """``value`` (tuples, frozensets, strings, numbers) as JSON data in a stable order."""
    if isinstance(value, (frozenset, set)):
        return ["set", sorted(json.dumps(_canonical(v), sort_keys=True) for v in value)]
    if isinstance(value, (tuple, list)):
        return [type(value).__name__, [_canonical(v) for v in value]]
    if isinstance(value, dict):
        return ["dict", [[_canonical(k), _canonical(v)] for k, v in value.items()]]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return ["float", repr(value)]
    raise Uncacheable(f"an option of type {type(value).__name__}")


def _code_digest(code: types.CodeType) -> str:
    h = hashlib.sha256()
    parts: list[Any] = [
        getattr(code, "co_qualname", code.co_name),
        # the file's name, not its directory: generated code names files by their base name,
        # and a notebook kernel's cells live in a directory named after its process id
        os.path.basename(code.co_filename),
        code.co_firstlineno,
        code.co_argcount,
        code.co_kwonlyargcount,
        code.co_flags,
        list(code.co_names),
        list(code.co_varnames),
        list(code.co_freevars),
        list(code.co_cellvars),
        code.co_code.hex(),
    ]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            parts.append(["code", _code_digest(const)])
        else:
            parts.append(_constant(const))
    h.update(json.dumps(parts).encode())
    return h.hexdigest()


def _constant(const: Any) -> Any:
    if isinstance(const, (frozenset, set)):
        return ["set", sorted(json.dumps(_constant(c)) for c in const)]
    if isinstance(const, tuple):
        return ["tuple", [_constant(c) for c in const]]
    return [type(const).__name__, repr(const)]


# function -> (its code object, digest of its source and code): reading source is slow
_function_digests: weakref.WeakKeyDictionary[types.FunctionType, tuple[types.CodeType, str]] = (
    weakref.WeakKeyDictionary()
)
# primitive -> its fingerprint (rules do not change once made; a new rule is a new object)
_primitive_prints: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _function_digest(fn: types.FunctionType) -> str:
    """A digest of a function's source text (comments included: generated code quotes its
    lines) and of its code object."""
    code = fn.__code__
    hit = _function_digests.get(fn)
    if hit is not None and hit[0] is code:
        return hit[1]
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError):
        text = ""  # the code digest still pins it
    digest = hashlib.sha256(f"{_code_digest(code)}\0{text}".encode()).hexdigest()
    _function_digests[fn] = (code, digest)
    return digest


def _named(value: Any) -> list[Any] | None:
    """Module and qualified name of a callable or class that is not a Python function."""
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if not isinstance(name, str):
        return None
    module = getattr(value, "__module__", None)
    kind = type(value)
    return [
        "named",
        f"{kind.__module__}.{kind.__qualname__}",
        module if isinstance(module, str) else None,
        name,
    ]


def fingerprint(value: Any, depth: int = 0) -> Any:
    """JSON data that changes whenever ``value`` could change the code generated for a
    function reading it; :class:`Uncacheable` when adgen cannot tell."""
    import numpy as np

    if depth > 20:
        raise Uncacheable("a deeply nested value")
    if value is None or value is ... or isinstance(value, (bool, int, float, complex, str, bytes)):
        return [type(value).__name__, repr(value)]
    if isinstance(value, types.ModuleType):
        return ["module", value.__name__]
    if isinstance(value, types.FunctionType):
        return [
            "function",
            value.__module__,
            value.__qualname__,
            _function_digest(value),
            fingerprint(value.__defaults__, depth + 1),
            fingerprint(value.__kwdefaults__, depth + 1),
        ]
    if isinstance(value, types.CodeType):
        return ["code", _code_digest(value)]
    if isinstance(value, np.ndarray):  # its values are read when the code runs
        return ["ndarray", value.dtype.str, list(value.shape)]
    if isinstance(value, np.generic):
        return ["numpy", value.dtype.str, repr(value.item())]
    if isinstance(value, (tuple, list)):
        return [type(value).__name__, [fingerprint(v, depth + 1) for v in value]]
    if type(value) is dict:
        return [
            "dict",
            [[fingerprint(k, depth + 1), fingerprint(v, depth + 1)] for k, v in value.items()],
        ]
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if isinstance(value, type) or callable(value):
        named = _named(value)
        if named is None:
            raise Uncacheable(f"a callable {kind}")
        wrapped = getattr(value, "__wrapped__", None)
        if isinstance(wrapped, types.FunctionType):
            named.append(fingerprint(wrapped, depth + 1))
        return named
    # Any other object: generated code only names it (it is read when the code runs, as
    # the attributes of a value are), so its type is what can change the code.
    return ["object", kind]


def _container(kind: str, container: Any) -> Any:
    if kind == "global" and isinstance(container, dict):
        return ["globals", container.get("__name__")]
    if kind == "cell":
        return ["cell"]
    if kind == "adgen":
        return ["adgen", fingerprint(container)]
    return fingerprint(container)


def _primitive(prim: Any) -> Any:
    hit = _primitive_prints.get(prim)
    if hit is None:
        hit = _primitive_prints[prim] = _make_primitive_print(prim)
    return hit


def _make_primitive_print(prim: Any) -> Any:
    def templates(table: dict[str, Any]) -> list[Any]:
        import ast

        return [
            [
                name,
                t.arg,
                [ast.dump(s) for s in t.body],
                sorted(t.free_names),
                t.origin,
                list(t.extra),
                t.refusal,
            ]
            for name, t in sorted(table.items())
        ]

    outputs = prim.outputs
    return [
        prim.name,
        prim.elementwise,
        prim.differentiable,
        prim.view,
        prim.sequence,
        [str(p) for p in prim.params],
        templates(prim.jvp),
        templates(prim.vjp),
        outputs if outputs is None or isinstance(outputs, int) else _named(outputs),
        prim.result_list,
        None if prim.user_fn is None else fingerprint(prim.user_fn),
        None if prim.callee is None else fingerprint(prim.callee),
        [[k, fingerprint(v)] for k, v in sorted(prim.helpers.items())],
    ]


def _primitives(statements: Iterable[ir.Stmt]) -> list[Any]:
    seen: dict[int, Any] = {}
    for stmt in statements:
        if isinstance(stmt, ir.Assign) and id(stmt.prim) not in seen:
            seen[id(stmt.prim)] = _primitive(stmt.prim)
    return sorted(seen.values(), key=lambda p: json.dumps(p, sort_keys=True))


def adgen_digest() -> str:
    """adgen's version and a digest of its own source files (once per process)."""
    global _adgen_digest
    if _adgen_digest is None:
        root = Path(__file__).parent
        h = hashlib.sha256(__version__.encode())
        for path in sorted(root.rglob("*.py")):
            h.update(path.relative_to(root).as_posix().encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
        _adgen_digest = h.hexdigest()
    return _adgen_digest


def key(
    fn: types.FunctionType,
    function: ir.Function,
    seen: list[tuple[str, Any, str, Any]],
    options: Any,
) -> str | None:
    """The disk key of the derivative of ``fn`` with ``options`` (None: not cacheable)."""
    import numpy as np

    try:
        parts = [
            FORMAT,
            adgen_digest(),
            sys.version,
            sys.implementation.cache_tag,
            np.__version__,
            _canonical(options),
            fingerprint(fn),
            os.path.basename(fn.__code__.co_filename),
            fn.__code__.co_firstlineno,
            [[kind, _container(kind, c), name, fingerprint(v)] for kind, c, name, v in seen],
            function.name,
            list(function.params),
            repr(function.body),
            sorted(function.scalars),
            sorted(function.user_names),
            sorted(function.labels.items()),
            sorted(function.free),
            _primitives(function.statements()),
        ]
    except Uncacheable as exc:
        stats["uncacheable"] += 1
        why_uncacheable[fn.__qualname__] = str(exc)
        return None
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


# -- entries --------------------------------------------------------------------------------


def entry_path(where: Path, digest: str) -> Path:
    return where / digest[:2] / f"{digest}.py"


def read(where: Path, digest: str) -> tuple[Generated, dict[str, Any]] | None:
    """The generated source stored under ``digest`` and the outside values the derivation
    added (see :func:`_added`); None if absent or not whole."""
    path = entry_path(where, digest)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        stats["corrupt"] += 1
        return None
    head, _, source = text.partition("\n")
    try:
        if not head.startswith(_HEADER):
            raise ValueError("no header")
        meta = json.loads(head[len(_HEADER) :])
        ok = (
            meta["format"] == FORMAT
            and meta["key"] == digest
            and meta["sha256"] == hashlib.sha256(source.encode()).hexdigest()
        )
        if not ok:
            raise ValueError("a different entry")
        fields = dict(meta["fields"], source=source)
        fields["restoring"] = tuple(fields.get("restoring", ()))
        added = meta["added"]
        if not isinstance(added, dict):
            raise ValueError("no added values")
        return Generated(**fields), added
    except (ValueError, KeyError, TypeError):
        stats["corrupt"] += 1
        return None


def write(where: Path, digest: str, gen: Generated, added: dict[str, Any]) -> None:
    """Store ``gen`` under ``digest``, atomically; a failure only warns (once)."""
    path = entry_path(where, digest)
    fields = {k: v for k, v in dataclasses.asdict(gen).items() if k != "source"}
    meta = {
        "format": FORMAT,
        "key": digest,
        "sha256": hashlib.sha256(gen.source.encode()).hexdigest(),
        "fields": fields,
        "added": added,
    }
    text = _HEADER + json.dumps(meta, sort_keys=True) + "\n" + gen.source
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.parent.mkdir(mode=0o700, exist_ok=True)
        write_atomic(path, text)
    except OSError as exc:
        stats["errors"] += 1
        _warn_once(f"adgen: cannot write the disk cache in {where} ({exc}); not caching there")
        return
    stats["writes"] += 1


def _added(free: dict[str, Any], before: set[str]) -> dict[str, Any] | None:
    """The outside values the derivation added to the function's namespace, as data: the
    derivative of a recursive call (a :class:`adgen.seam.LazyDerivative` of a function the
    namespace already names). None if one of them cannot be written down."""
    from adgen.seam import LazyDerivative

    added: dict[str, Any] = {}
    for name, value in free.items():
        if name in before:
            continue
        if not isinstance(value, LazyDerivative):
            return None
        names = [k for k in before if free[k] is value.fn]
        if not names:
            return None
        added[name] = ["lazy", min(names), value.mode, list(value.wrt)]
    return added


def _restore(free: dict[str, Any], added: dict[str, Any]) -> bool:
    """Put the values :func:`_added` wrote down back into ``free``; False if they do not fit."""
    from adgen.seam import LazyDerivative

    made = {}
    for name, entry in added.items():
        if not (isinstance(entry, list) and len(entry) == 4 and entry[0] == "lazy"):
            return False
        _, holder, mode, wrt = entry
        fn = free.get(holder)
        if name in free or not isinstance(fn, types.FunctionType) or not isinstance(wrt, list):
            return False
        made[name] = LazyDerivative(fn, mode, tuple(wrt))
    free.update(made)
    return True


def generated(
    fn: types.FunctionType,
    function: ir.Function,
    seen: list[tuple[str, Any, str, Any]],
    options: Any,
    make: Callable[[], Generated],
    load: Callable[[Generated], Callable[..., Any]],
) -> tuple[Generated, Callable[..., Any]]:
    """The generated code of a derivative and the compiled function: from the disk cache when
    it is on and holds a whole entry for it, else made by ``make`` (and stored).

    ``load`` compiles generated code in the namespace ``function.free``, to which a hit adds
    what the derivation would have added.
    """
    where = directory()
    digest = key(fn, function, seen, options) if where is not None else None
    if where is not None and digest is not None:
        entry = read(where, digest)
        if entry is not None:
            gen, added = entry
            if _restore(function.free, added):
                try:
                    compiled = load(gen)
                except (SyntaxError, ValueError, KeyError, TypeError):
                    for name in added:  # as they were: the derivation adds them again
                        del function.free[name]
                else:
                    stats["hits"] += 1
                    return gen, compiled
            stats["corrupt"] += 1
        stats["misses"] += 1
    before = set(function.free)
    gen = make()
    compiled = load(gen)
    if where is not None and digest is not None:
        extra = _added(function.free, before)
        if extra is None:
            stats["uncacheable"] += 1
            why_uncacheable[fn.__qualname__] = "the derivation added an outside value"
        else:
            write(where, digest, gen, extra)
    return gen, compiled


def clear(where: Path | None = None) -> int:
    """Delete the entries in ``where`` (default: the configured directory); how many."""
    where = where if where is not None else directory()
    if where is None or not where.is_dir():
        return 0
    count = 0
    for path in where.glob("??/*.py"):
        try:
            path.unlink()
            count += 1
        except OSError:
            pass
    return count


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file of the same directory."""
    target = os.fspath(path)
    directory = os.path.dirname(target) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; be an ordinary file
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
