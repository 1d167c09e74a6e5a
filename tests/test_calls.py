"""Calls to the user's own functions, nested defs, lambdas and closures, in both modes.

adgen inlines the body of a called Python function (its derivative code
stands under comments naming the callee's lines), so calls compose with every
other construct: a helper called inside a loop inside a branch, helpers
calling helpers, closures reading the enclosing function's variables.
"""

import importlib.util
import textwrap

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads

SCALE = 3.0
WEIGHTS = np.array([0.5, -1.0, 2.0, 0.25])


def square(x):
    return x * x


def affine(x, a=2.0, b=1.0):
    return a * x + b


def polar(x, y):
    r = np.sqrt(x * x + y * y)
    return r, np.arctan(y / x)


def softplus(x):
    if x > 20.0:
        return x
    return np.log1p(np.exp(x))


def clipped_step(v):
    out = v
    for i in range(3):
        out = out * 0.9 + 0.1 * np.tanh(out)
    return out


def uses_helper_twice(x):
    return square(x) + square(np.sin(x))


def keyword_default_and_literal_arguments(x):
    return affine(x) + affine(x, b=0.5) + affine(x, 3.0, b=x) + affine(a=x, x=2.0)


def tuple_result_unpacked(x, y):
    r, theta = polar(x, y)
    return r * theta


def helper_with_branches(x):
    return softplus(x) + softplus(x - 25.0)


def helper_in_a_loop(x):
    s = 0.0
    for i in range(4):
        s = s + square(x * i)
    return s


def helper_with_a_loop(x):
    return np.sum(clipped_step(x) * WEIGHTS)


def helper_calls_helper(x):
    def cube(z):
        return square(z) * z

    return cube(x) + uses_helper_twice(x)


def nested_def_reads_enclosing_variables(x, w):
    c = w * 2.0

    def model(z):
        return np.tanh(z * c) + w

    return np.sum(model(x) * model(x + 1.0))


def lambda_bound_to_a_name(x):
    f = lambda z: z * z + SCALE  # noqa: E731
    return f(x) * f(2.0 * x)


def closure_sees_the_value_at_call_time(x):
    k = 1.0

    def g(z):
        return z * k

    a = g(x)
    k = 3.0
    return a + g(x)


def global_array_and_constant(x):
    return np.sum(x * WEIGHTS) * SCALE


def make_loss(target):
    def loss(x):
        return np.sum((x - target) ** 2)

    return loss


def helper_rebinds_its_parameter(x):
    def shrink(v):
        v = v * 0.5
        v = v + np.sin(v)
        return v

    return shrink(x) * shrink(x * x)


def helper_in_branch_in_loop(x):
    s = x * 0.0
    for i in range(3):
        if np.sum(x) > i - 1.5:
            s = s + clipped_step(x + i)
        else:
            s = s - square(x)
    return np.sum(s)


V = np.array([0.3, -0.4, 0.8, 0.1])
CASES = [
    (uses_helper_twice, (0.7,)),
    (keyword_default_and_literal_arguments, (0.4,)),
    (tuple_result_unpacked, (0.9, 0.4)),
    (helper_with_branches, (0.5,)),
    (helper_with_branches, (30.0,)),
    (helper_in_a_loop, (0.3,)),
    (helper_with_a_loop, (V,)),
    (helper_calls_helper, (0.6,)),
    (nested_def_reads_enclosing_variables, (V, 0.7)),
    (lambda_bound_to_a_name, (0.4,)),
    (closure_sees_the_value_at_call_time, (0.8,)),
    (global_array_and_constant, (V,)),
    (make_loss(np.array([1.0, 2.0, 3.0, 4.0])), (V,)),
    (helper_rebinds_its_parameter, (0.6,)),
    (helper_in_branch_in_loop, (V,)),
]


@pytest.mark.parametrize(
    "fn, args", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)]
)
def test_calls_both_modes_match_finite_differences(fn, args):
    check_grads(fn, *args)
    value, _ = adgen.vjp(fn, *args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)


def test_closure_value_at_call_time_is_respected():
    # a = x * 1, then k = 3: the second call sees k = 3 -> d/dx = 1 + 3
    assert adgen.grad(closure_sees_the_value_at_call_time)(0.8) == pytest.approx(4.0)


def test_inlined_helper_is_shown_under_its_own_lines():
    src = adgen.source(uses_helper_twice)
    line = square.__code__.co_firstlineno + 1
    assert f"# line {line} of square: return x * x" in src
    assert f"# adjoint of line {line} of square: return x * x" in src
    assert "# adjoint of line 49: return square(x) + square(np.sin(x))\n    # adjoint" not in src


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def fib_like(x, n):
    if n <= 1:
        return x
    return np.sin(fib_like(x, n - 1)) + fib_like(x * 0.5, n - 2)


def tree_sum(v, lo, hi):
    if hi - lo == 1:
        return v[lo] * v[lo]
    mid = (lo + hi) // 2
    return tree_sum(v, lo, mid) + tree_sum(v, mid, hi)


def recursion_inside_a_loop(x):
    s = 0.0
    for k in range(3):
        s = s + power(x + k, k + 1)
    return s


@pytest.mark.parametrize(
    "fn, args",
    [
        (power, (1.5, 4)),
        (power, (1.5, 0)),
        (fib_like, (0.7, 5)),
        (tree_sum, (np.array([0.3, -0.4, 0.8, 1.1, 0.2]), 0, 5)),
        (recursion_inside_a_loop, (0.4,)),
    ],
    ids=["power-4", "power-0", "fib-like", "tree-sum", "in-a-loop"],
)
def test_recursion_both_modes_match_finite_differences(fn, args):
    check_grads(fn, *args)
    value, _ = adgen.vjp(fn, *args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)


def test_recursive_call_uses_the_callees_own_derivative():
    assert adgen.grad(power)(1.5, 4) == pytest.approx(4 * 1.5**3)
    src = adgen.source(power)
    assert "_vjp_" in src  # the recursive call's adjoint calls power's own reverse mode
    assert "_jvp_" in adgen.source(power, mode="forward")


def test_recursion_of_a_nested_function_is_refused_with_the_callers_line():
    def outer(x):
        def fact(n, y):
            if n > 0:
                return y * fact(n - 1, y)
            return 1.0

        return fact(3, x)

    with pytest.raises(adgen.UnsupportedSyntaxError, match="recursive calls") as info:
        adgen.grad(outer)(2.0)
    assert info.value.loc.lineno == outer.__code__.co_firstlineno + 3


def test_local_function_used_as_a_value_is_refused():
    """A name bound to a local function calls it (``h = g``), so does an item of a tuple of
    them; a local function used as a value in arithmetic is refused."""

    def f(x):
        def g(z):
            return z * z

        h = g
        return h(x)

    assert adgen.grad(f)(3.0) == 6.0

    def f2(x):
        def g(z):
            return z

        fs = (g, g)
        return fs[0](x) + g

    def f3(x):
        def g(z):
            return z * z

        fs = (g, np.sin)
        return fs[0](x) + fs[1](x)

    assert adgen.grad(f3)(3.0) == pytest.approx(6.0 + np.cos(3.0))
    with pytest.raises(adgen.UnsupportedSyntaxError, match="local function `g` as a value"):
        adgen.grad(f2)(1.0)


def test_functions_imported_from_another_user_module(tmp_path, monkeypatch):
    (tmp_path / "physics.py").write_text(
        textwrap.dedent(
            """
            import numpy as np

            G = 9.81

            def energy(h, v):
                return G * h + 0.5 * v * v
            """
        )
    )
    (tmp_path / "model.py").write_text(
        textwrap.dedent(
            """
            from physics import energy

            def total(h, v):
                return energy(h, v) * 2.0
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = importlib.util.spec_from_file_location("model", tmp_path / "model.py")
    model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model)
    assert adgen.grad(model.total, wrt=(0, 1))(1.0, 2.0) == pytest.approx((2 * 9.81, 4.0))
    check_grads(model.total, 1.0, 2.0)


def test_redefining_a_helper_is_noticed(tmp_path):
    path = tmp_path / "redef_helper.py"
    path.write_text("def helper(x):\n    return x * x\n\ndef f(x):\n    return helper(x)\n")
    spec = importlib.util.spec_from_file_location("redef_helper", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    g = adgen.grad(mod.f)
    assert g(3.0) == 6.0
    namespace = {}
    exec(compile("def helper(x):\n    return x * x * x\n", str(path), "exec"), namespace)
    path.write_text("def helper(x):\n    return x * x * x\n\ndef f(x):\n    return helper(x)\n")
    import linecache

    linecache.checkcache(str(path))
    mod.helper = namespace["helper"]  # a notebook cell re-run: the global now names new code
    assert g(3.0) == 27.0


def test_helper_without_source_is_refused_at_the_call():
    namespace = {}
    exec("def hidden(x):\n    return x * 2\n", namespace)
    hidden = namespace["hidden"]

    def f(x):
        return hidden(x) + 1.0

    with pytest.raises(adgen.NoRuleError, match="cannot read the source of `hidden`") as info:
        adgen.grad(f)(1.0)
    assert info.value.loc.lineno == f.__code__.co_firstlineno + 1
