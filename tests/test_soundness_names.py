"""A name means what it means where it is written (issue 33, part 0).

adgen inlines helpers, methods, lambdas, comprehensions and nested derivatives' generated
code into the function it differentiates. A global an inlined function reads must stay that
global in the generated code, even where the function being differentiated has a parameter
or a variable of the same name, or adgen made up a name like it (``out``, ``out_1``). Before
the fix, ``loss``'s global ``Y`` below became ``c1``'s parameter ``Y``: ``Y - x`` read
``x - x`` and every derivative was silently zero.

Each derivative is checked against its exact value in both modes and at second order.
"""

from __future__ import annotations

import numpy as np
import pytest
from source_modules import write_module

import adgen

Y = np.array([0.3, -1.2, 2.0])
K = 1.5
E0 = np.array([1.0, 0.0, 0.0])
out = np.array([2.0, -1.0, 0.5])  # a global named like adgen's result variable
out_1 = 3.0  # ... and like its fresh names


def loss(x):
    return np.sum((Y - x) ** 2 * x) * K


def loss_grad(x):
    return K * (Y - x) * (Y - 3.0 * x)


def loss_hess_diag(x):
    return K * (6.0 * x - 4.0 * Y)


def reads_out(x):
    return np.sum(out * x) * out_1


def helper_with_param(x, Y):  # a parameter named like the global its callee reads
    return loss(x) + np.sum(Y * x)


class Model:
    def __init__(self):
        self.w = Y * 2.0

    def score(self, x):
        return np.sum(self.w * x * Y)


MODEL = Model()


# -- the functions differentiated: each rebinds a name some inlined code reads as a global ----
def param_named_like_global(Y):
    return loss(Y)


def param_named_like_scale(K):
    return loss(K) + K[0]


def helper_param_too(Y):
    return helper_with_param(Y, Y)


def local_named_like_global(x):
    Y = x * 2.0
    return loss(x) + np.sum(Y)


def lambda_param(x):
    f = lambda Y: loss(Y) * Y[0]  # noqa: E731
    return f(x)


def closure(Y):
    def inner(x):
        return loss(x) + np.sum(Y)

    return inner(Y * 3.0)


def method(Y):
    return MODEL.score(Y)


def comprehension(Y):
    return sum(loss(Y * i) for i in range(2))


def nested_grad(Y):
    return adgen.grad(loss)(Y)[1]


def nested_jvp(Y):
    return adgen.jvp(loss, (Y,), (E0,))[1]


def nested_lambda_grad(Y):
    return adgen.value_and_grad(lambda x: loss(x) * np.sum(Y))(Y)[1][0]


def made_up_names(x):
    out = reads_out(x)
    out_1 = out * 2.0
    return out_1 + loss(x)


X0 = np.array([0.5, 0.1, -0.4])


def _exact(name: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gradient and the Hessian of each function at ``x``, derived by hand."""
    g, h = loss_grad(x), np.diag(loss_hess_diag(x))
    ones, eye = np.ones(3), np.eye(3)
    if name == "param_named_like_global":
        return g, h
    if name == "param_named_like_scale":
        return g + E0, h
    if name == "helper_param_too":
        return g + 2.0 * x, h + 2.0 * eye
    if name == "local_named_like_global":
        return g + 2.0 * ones, h
    if name == "lambda_param":  # loss(x) * x[0]
        return g * x[0] + loss(x) * E0, h * x[0] + np.outer(g, E0) + np.outer(E0, g)
    if name == "closure":  # loss(3x) + sum(x)
        return 3.0 * loss_grad(3.0 * x) + ones, 9.0 * np.diag(loss_hess_diag(3.0 * x))
    if name == "method":
        return 2.0 * Y * Y, np.zeros((3, 3))
    if name == "comprehension":  # loss(0 * x) + loss(x)
        return g, h
    if name == "nested_grad":  # loss's gradient's item 1: it reads x[1] only
        e1 = np.eye(3)[1]
        return loss_hess_diag(x)[1] * e1, 6.0 * K * np.outer(e1, e1)
    if name == "nested_jvp":  # loss's gradient's item 0
        return loss_hess_diag(x)[0] * E0, 6.0 * K * np.outer(E0, E0)
    if name == "nested_lambda_grad":  # loss's gradient's item 0, times sum(x)
        s, g0, h0 = np.sum(x), g[0], loss_hess_diag(x)[0]
        grad = h0 * s * E0 + g0 * ones
        hess = 6.0 * K * s * np.outer(E0, E0) + h0 * (np.outer(E0, ones) + np.outer(ones, E0))
        return grad, hess
    if name == "made_up_names":
        return 2.0 * out_1 * out + g, h
    raise AssertionError(name)


CASES = [
    param_named_like_global,
    param_named_like_scale,
    helper_param_too,
    local_named_like_global,
    lambda_param,
    closure,
    method,
    comprehension,
    nested_grad,
    nested_jvp,
    nested_lambda_grad,
    made_up_names,
]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_inlined_code_reads_its_own_globals(fn):
    grad, hess = _exact(fn.__name__, X0)
    np.testing.assert_allclose(adgen.grad(fn)(X0), grad, rtol=1e-12, atol=1e-12)
    v = np.array([0.7, -0.2, 1.1])
    np.testing.assert_allclose(adgen.jvp(fn, (X0,), (v,))[1], grad @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(adgen.hvp(fn)(X0, v), hess @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(adgen.hessian(fn)(X0), hess, rtol=1e-12, atol=1e-12)


def test_the_issues_example_nested_jvp_and_grad():
    """issue 33's reproduction: ``d``'s parameter ``y`` is not ``loss``'s global ``y``."""
    x0 = np.array([0.5, 0.1, -0.4])
    want = 6.0 * K * x0[0] - 4.0 * K * Y[0]
    assert adgen.jvp(nested_jvp, (x0,), (E0,))[1] == pytest.approx(want, rel=1e-12)
    assert adgen.grad(nested_jvp)(x0)[0] == pytest.approx(want, rel=1e-12)


def test_helper_of_another_module_reads_its_own_global(tmp_path):
    """A helper in another module whose global has the caller's parameter's name, and another
    module's global of the same name as this one's (two globals ``Y``, two values)."""
    other = write_module(
        tmp_path,
        "hygiene_other",
        "import numpy as np\n"
        "Y = np.array([1.0, 2.0, 3.0])\n"
        "def weigh(x):\n"
        "    return np.sum(Y * x * x)\n",
    )

    def both(Y):  # noqa: N803 (named like both globals on purpose)
        return other.weigh(Y) + loss(Y)

    got = adgen.grad(both)(X0)
    np.testing.assert_allclose(got, 2.0 * other.Y * X0 + loss_grad(X0), rtol=1e-12)
    want_hess = np.diag(2.0 * other.Y + loss_hess_diag(X0))
    np.testing.assert_allclose(adgen.hessian(both)(X0), want_hess, rtol=1e-12, atol=1e-12)


def returns_helper_reading_out(x):
    return reads_out(x)


@pytest.mark.parametrize("fn", [reads_out, returns_helper_reading_out], ids=lambda f: f.__name__)
def test_a_global_named_like_the_result(fn):
    """adgen names a function's result ``out``: the generated code bound ``out`` and read the
    global ``out`` as that local (an UnboundLocalError), directly or in an inlined helper."""
    v = np.array([0.7, -0.2, 1.1])
    np.testing.assert_allclose(adgen.grad(fn)(X0), out * out_1, rtol=1e-12)
    value, tangent = adgen.jvp(fn, (X0,), (v,))
    assert value == pytest.approx(np.sum(out * X0) * out_1, rel=1e-12)
    assert tangent == pytest.approx(np.sum(out * v) * out_1, rel=1e-12)
    np.testing.assert_allclose(adgen.hessian(fn)(X0), np.zeros((3, 3)), atol=1e-15)


DECORATOR = """\
import functools

import numpy as np

SCALE = 100.0  # named like the decorated function's own global


def validated(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)

    return wrapper


def doubled(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return 2.0 * f(*args, **kwargs)

    return wrapper
"""

DECORATED = """\
import numpy as np

from decorators_elsewhere import doubled, validated

SCALE = 1.0


@validated
def loss(x, *, weight=3.0):
    return np.sum(x * x) * SCALE * weight


@doubled
def twice(x):
    return np.sum(np.sin(x))
"""


def test_a_decorated_function_reads_its_own_module(tmp_path):
    """``functools.wraps`` makes a wrapper whose source, for inspect, is the wrapped
    function's: adgen read that body with the wrapper's module's names (`SCALE` was the
    decorator module's 100, a gradient 100 times too large) and without the keyword-only
    defaults. It reads the wrapper's own code, which calls the wrapped function."""
    write_module(tmp_path, "decorators_elsewhere", DECORATOR)
    mod = write_module(tmp_path, "decorated_here", DECORATED)

    def calls_it(x):
        return mod.loss(x)

    x = np.array([1.0, 2.0, -0.5])
    for f in (mod.loss, calls_it):
        np.testing.assert_allclose(adgen.grad(f)(x), 6.0 * x, rtol=1e-12)
        assert adgen.jvp(f, (x,), (np.ones(3),))[1] == pytest.approx(6.0 * x.sum())
        np.testing.assert_allclose(adgen.hessian(f)(x), 6.0 * np.eye(3), rtol=1e-12)
    # what the wrapper does is differentiated too
    np.testing.assert_allclose(adgen.grad(mod.twice)(x), 2.0 * np.cos(x), rtol=1e-12)
