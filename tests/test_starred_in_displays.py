"""``*seq`` inside a tuple display where the length of ``seq`` is known only when the code
runs -- the shape idiom ``np.reshape(v, (n, *x.shape[1:]))`` of NumPy code and of SciPy's
own helpers: the tuple is joined when the code runs (a shape: no derivative passes), and a
differentiated value put in such a tuple is refused by name in both modes."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from derivative_checks import differences
from source_modules import import_file

import adgen
from adgen.errors import AdgenError


def batched_norms(x):
    """Rows regrouped in pairs: the trailing axes spread from the input's shape."""
    shp = x.shape
    pairs = np.reshape(x * 2.0, (shp[0] // 2, 2, *shp[1:]))
    return np.sum(np.sqrt(np.sum(pairs**2, axis=1) + 1.0))


def channels_last(x):
    y = np.reshape(x, (*x.shape[:-1], 2, x.shape[-1] // 2))
    return np.sum(np.sin(y) * np.arange(y.shape[-1]))


@pytest.mark.parametrize("f", [batched_norms, channels_last])
@pytest.mark.parametrize("shape", [(4, 6), (6, 2, 4)], ids=["matrix", "3-d"])
def test_a_shape_spread_in_a_tuple_is_joined_when_the_code_runs(f, shape):
    x = np.cos(np.arange(np.prod(shape), dtype=float)).reshape(shape)
    expected = differences(f, x)
    np.testing.assert_allclose(adgen.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    direction = np.sin(np.arange(x.size)).reshape(shape)
    _, t = adgen.jvp(f, (x,), (direction,))
    np.testing.assert_allclose(t, np.sum(expected * direction), rtol=1e-6, atol=1e-8)
    v = direction
    hv = adgen.hvp(f)(x, v)
    g = adgen.grad(f)
    fd = (g(x + 1e-5 * v) - g(x - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-6)


def values_of_unknown_count(x):
    t = (1.0, *x[x > 0.5])
    return np.sum(np.array(t) ** 2)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_differentiated_value_spread_into_such_a_tuple_is_refused(mode):
    x = np.linspace(0.0, 1.0, 5)
    with pytest.raises(AdgenError, match="whose length is not known") as info:
        if mode == "grad":
            adgen.grad(values_of_unknown_count)(x)
        else:
            adgen.jvp(values_of_unknown_count, (x,), (x,))
    assert "in values_of_unknown_count" in str(info.value)


def test_the_derivative_of_such_a_function_exports_as_a_standalone_module(tmp_path):
    path = adgen.export(batched_norms, tmp_path / "norms_vjp.py")
    assert "joined_items(" in path.read_text()
    sys.path.insert(0, str(tmp_path))  # (the module imports the runtime written beside it)
    try:
        module = import_file(path)
    finally:
        sys.path.remove(str(tmp_path))
    x = np.cos(np.arange(24.0)).reshape(4, 6)
    value, (gradient,) = module.batched_norms_vjp(x, 1.0)
    assert value == pytest.approx(batched_norms(x), rel=1e-14)
    np.testing.assert_allclose(gradient, adgen.grad(batched_norms)(x), rtol=1e-14)
