"""What the Dask tests share: a block in which nothing may be computed, and conversions."""

from __future__ import annotations

import warnings
from typing import Any

import dask
import dask.array as da
import numpy as np


class ComputedError(Exception):
    """Raised by the scheduler of a block that must not compute anything."""


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise ComputedError("a Dask array was computed where everything should stay lazy")


def lazily() -> Any:
    """A context in which computing a Dask array raises (and Dask's warnings too: it warns
    when it computes a NumPy function it does not implement)."""
    return _Lazily()


class _Lazily:
    def __enter__(self) -> None:
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("error")
        self._config = dask.config.set(scheduler=_refuse)
        self._config.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._config.__exit__(*exc)
        self._warnings.__exit__(*exc)


def to_dask(value: Any) -> Any:
    """A NumPy array as a Dask array of two chunks per axis; anything else as it is."""
    if isinstance(value, np.ndarray):
        return da.from_array(value, chunks=tuple(max(1, (n + 1) // 2) for n in value.shape))
    if isinstance(value, tuple):
        return tuple(to_dask(v) for v in value)
    return value


def computed(value: Any) -> Any:
    """``value`` (an array, or a tuple or list of them) with its Dask arrays computed, all in
    one graph (as ``dask.compute`` does: a deep graph, a long time loop's, is ordered once)."""
    return dask.compute(value, scheduler="sync")[0]


def assert_close(got: Any, want: Any) -> None:
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_close(g, w)
        return
    if want is None:
        assert got is None
        return
    np.testing.assert_allclose(
        np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=1e-9, atol=1e-10
    )
