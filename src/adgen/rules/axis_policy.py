"""SciPy's statistics behind its ``_axis_nan_policy`` decorator, read as their plain path.

Most of ``scipy.stats``' descriptive statistics (``skew``, ``kurtosis``, ``sem``, ``gmean``,
``hmean``, ``pmean``, ``variation``, ``iqr``, ``trim_mean``, ``tvar``, ``tstd``,
``median_abs_deviation``...) are a function decorated by ``_axis_nan_policy_factory``. The
wrapper binds the arguments against the function's signature, moves the reduced axis of
each sample last (or ravels them, for ``axis=None``), looks for NaN, masked entries, empty
and too small samples, and then -- on samples with none of those -- calls the function it
wraps along the last axis; the rest of its code is for ``nan_policy``, ``keepdims`` and
samples it returns NaN for. adgen reads such a call as that plain path: each sample moved
(``np.moveaxis(np.atleast_1d(a), axis, -1)``, or ``np.ravel(a)``) and the wrapped function
read as any other with ``axis=-1``. A check the generated code calls as written first
raises where the wrapper would have taken another path (a NaN, a masked array, an empty or
too small sample, samples whose shapes it would broadcast): there it would return NaN, or
compute on other entries, and adgen does not guess a derivative.

Taken: a wrapper whose samples are a fixed number of leading parameters (and keyword
samples such as ``weights``), whose function has an ``axis`` parameter and returns one
value (its result passed through the wrapper unchanged), with ``nan_policy='propagate'``
and ``keepdims=False`` (their defaults) and an ``axis`` known when transforming (an int or
None). :func:`axis_policy` says why for any other, and adgen refuses it by that reason.

>>> import scipy.stats
>>> policy = axis_policy(scipy.stats.skew)
>>> policy.name, policy.n_samples, policy.default_axis, policy.why
('scipy.stats.skew', 1, 0, None)
>>> axis_policy(scipy.stats.ttest_1samp).why
'a result of several values (a result object)'
>>> axis_policy(np.sum) is None
True
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

# the wrapper's own parameters, besides the function's
POLICY_PARAMETERS = ("nan_policy", "keepdims")


@dataclass(frozen=True)
class AxisPolicy:
    """What the wrapper of a decorated statistic holds (see the module's documentation);
    ``why``: None where adgen reads its plain path, else why it does not."""

    name: str
    inner: Any  # the function the wrapper calls
    n_samples: int
    kwd_samples: tuple[str, ...]
    default_axis: Any
    paired: bool
    nan_propagation: bool
    is_too_small: Any
    why: str | None


def axis_policy(fn: Any) -> AxisPolicy | None:
    """The plain path of ``fn`` if it is SciPy's ``axis_nan_policy_wrapper`` (else None)."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_name != "axis_nan_policy_wrapper":
        return None
    if not code.co_filename.replace("\\", "/").endswith("scipy/stats/_axis_nan_policy.py"):
        return None
    cells: dict[str, Any] = {}
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            cells[name] = cell.cell_contents
        except ValueError:  # (an empty cell)
            continue
    inner = cells.get("hypotest_fun_in")
    if inner is None:
        return None
    module = getattr(fn, "__module__", "") or ""
    public = "scipy.stats" if module.startswith("scipy.stats") else module
    name = f"{public}.{getattr(fn, '__name__', 'function')}"
    n_samples = cells.get("n_samples")
    override = cells.get("override") or {}
    why = _why_not(cells, inner, n_samples, override)
    return AxisPolicy(
        name=name,
        inner=inner,
        n_samples=n_samples if type(n_samples) is int else 0,
        kwd_samples=tuple(cells.get("kwd_samples") or ()),
        default_axis=cells.get("default_axis", 0),
        paired=bool(cells.get("paired", False)),
        nan_propagation=bool(override.get("nan_propagation", True)),
        is_too_small=cells.get("is_too_small"),
        why=why,
    )


def _why_not(cells: dict[str, Any], inner: Any, n_samples: Any, override: Any) -> str | None:
    """Why the wrapper's plain path is not what adgen reads (None: it is)."""
    if type(n_samples) is not int or n_samples < 1:
        return "samples given as *args (a number of samples known at each call)"
    if cells.get("n_outputs") != 1 or not _passes_through(
        cells.get("result_to_tuple"), cells.get("tuple_to_result")
    ):
        return "a result of several values (a result object)"
    if override.get("vectorization", False):
        return "a function the wrapper applies slice by slice"
    try:
        parameters = inspect.signature(inner).parameters
    except (TypeError, ValueError):
        return "a function whose signature cannot be read"
    if "axis" not in parameters or "is_too_small" not in cells:
        return "a function the wrapper applies slice by slice"
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)
    if any(p.kind in kinds for p in parameters.values()):
        return "a function with positional-only parameters"
    return None


def _passes_through(result_to_tuple: Any, tuple_to_result: Any) -> bool:
    """Do the wrapper's ``result_to_tuple`` and ``tuple_to_result`` give the function's
    result back unchanged (``lambda x, _: (x,)`` and ``lambda x: x``)?"""
    defaults = getattr(result_to_tuple, "__defaults__", None) or ()
    if getattr(result_to_tuple, "__name__", "") == "result_to_tuple" and defaults:
        # (SciPy before 1.16 wraps the decorator's one-argument function:
        # `def result_to_tuple(res, _, f=result_to_tuple): return f(res)`)
        result_to_tuple = defaults[-1]
    one = getattr(result_to_tuple, "__code__", None)
    back = getattr(tuple_to_result, "__code__", None)
    if one is None or back is None:
        return False
    packs = (lambda x: (x,)) if one.co_argcount == 1 else (lambda x, _: (x,))
    return (
        one.co_code == packs.__code__.co_code
        and one.co_argcount in (1, 2)
        and back.co_code == (lambda x: x).__code__.co_code
        and back.co_argcount == 1
    )


class PlainPathCheck:
    """The check generated code calls, as written, before a statistic's plain path: raises
    ``ValueError`` where SciPy's wrapper would take another path on these samples (given as
    the call gives them, keyword samples by name; ``axis`` as the call says; ``others``: the
    function's other arguments, which decide whether a sample is too small)."""

    adgen_reads_only = True
    __name__ = "plain_path_check"

    def __init__(self, policy: AxisPolicy) -> None:
        self.policy = policy

    def __repr__(self) -> str:
        return f"plain_path_check({self.policy.name})"

    def __call__(self, axis: Any, *samples: Any, **others: Any) -> None:
        name = self.policy.name
        moved = []
        for s in samples:
            if isinstance(s, np.ma.MaskedArray):
                self.refuse(f"a masked array given to {name}", "pass a plain array")
            a = np.asarray(s) if np.isscalar(s) or isinstance(s, (list, tuple)) else s
            if np.size(a) == 0:
                self.refuse(f"an empty sample given to {name}", "")
            if self.policy.nan_propagation and _has_nan(a):
                self.refuse(
                    f"a sample holding NaN given to {name} (SciPy returns NaN there)",
                    "remove the NaN, or differentiate on samples without them",
                )
            if axis is None:
                moved.append(np.reshape(a, (-1,)))
            else:
                moved.append(np.moveaxis(np.reshape(a, (1,)) if np.ndim(a) == 0 else a, axis, -1))
        shapes = {np.shape(m) if self.policy.paired else np.shape(m)[:-1] for m in moved}
        if len(shapes) > 1:
            self.refuse(
                f"samples of {name} whose shapes SciPy broadcasts ({sorted(shapes)})",
                "broadcast them to one shape first",
            )
        if all(np.ndim(m) <= 1 for m in moved) and self.policy.is_too_small(moved, others):
            self.refuse(
                f"a sample too small for {name} (SciPy warns and returns NaN)",
                "give more values",
            )

    @staticmethod
    def refuse(what: str, hint: str) -> None:
        raise ValueError(
            f"adgen: the plain path of SciPy's statistic does not take {what}"
            + (f"; {hint}" if hint else "")
        )


class PlainPathTaken(PlainPathCheck):
    """The test generated code calls, as written, before a statistic's plain path: does
    SciPy's wrapper take it on these samples (:class:`PlainPathCheck` passes)? Where it does
    not, the program's call runs as SciPy writes it -- refused where a differentiated value
    reaches it, whatever the samples hold where none does.

    >>> import scipy.stats
    >>> taken = PlainPathTaken(axis_policy(scipy.stats.skew))
    >>> taken(-1, np.array([1.0, 2.0, 4.0])), taken(-1, np.array([1.0, np.nan, 2.0]))
    (True, False)
    """

    __name__ = "plain_path_taken"

    def __repr__(self) -> str:
        return f"plain_path_taken({self.policy.name})"

    def __call__(self, axis: Any, *samples: Any, **others: Any) -> bool:  # type: ignore[override]
        try:
            super().__call__(axis, *samples, **others)
        except ValueError:
            return False
        return True


def _has_nan(a: Any) -> bool:
    """Does ``a`` hold a NaN (NumPy's arrays and numbers; another library's are not read)?"""
    if not isinstance(a, (np.ndarray, np.generic, float, complex)):
        return False
    return bool(np.issubdtype(np.asarray(a).dtype, np.inexact) and np.isnan(a).any())
