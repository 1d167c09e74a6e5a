"""The public API: grad, value_and_grad, jvp, vjp, differentiate, source, trace, check_grads."""

import importlib.util
import inspect
import math
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import adgen
from adgen.backend import cache
from adgen.testing import check_grads

# The AD survey's running example (Baydin et al., Tables 2 and 3): at (2, 5),
# y = 11.652, dy/dx1 = 5.5 and dy/dx2 = x1 - cos(x2) = 1.7163...


def survey(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


def loss(w, X, y):
    r = X @ w - y
    return np.sum(r * r) / 2.0


def test_grad_of_survey_example_matches_tables():
    assert adgen.grad(survey)(2.0, 5.0) == pytest.approx(5.5)
    assert adgen.grad(survey, wrt=1)(2.0, 5.0) == pytest.approx(2.0 - math.cos(5.0))


def test_wrt_accepts_index_name_negative_index_and_tuple():
    g = adgen.grad(survey, wrt=("x1", 1))(2.0, 5.0)
    assert isinstance(g, tuple) and len(g) == 2
    assert g == pytest.approx((5.5, 2.0 - math.cos(5.0)))
    assert adgen.grad(survey, wrt="x2")(2.0, 5.0) == pytest.approx(g[1])
    assert adgen.grad(survey, wrt=-1)(2.0, 5.0) == pytest.approx(g[1])


def test_value_and_grad_returns_the_primal_value():
    value, g = adgen.value_and_grad(survey)(2.0, 5.0)
    assert value == pytest.approx(11.652071455223084)
    assert g == pytest.approx(5.5)


def test_keyword_arguments_and_defaults_are_bound_like_the_function(rng):
    def scaled(x, scale=3.0):
        return np.sum(scale * x * x)

    x = rng.standard_normal(4)
    np.testing.assert_allclose(adgen.grad(scaled)(x), 6.0 * x)
    np.testing.assert_allclose(adgen.grad(scaled)(x, scale=0.5), x)
    np.testing.assert_allclose(adgen.grad(scaled, wrt="scale")(x=x, scale=2.0), np.sum(x * x))


def test_least_squares_gradient_matches_closed_form(rng):
    X = rng.standard_normal((20, 3))
    y = rng.standard_normal(20)
    w = rng.standard_normal(3)
    np.testing.assert_allclose(adgen.grad(loss)(w, X, y), X.T @ (X @ w - y), rtol=1e-12)


@pytest.mark.parametrize(
    "x, kind",
    [
        (1.5, float),
        (np.float64(1.5), np.float64),
        (np.float32(1.5), np.float32),
        (np.array(1.5), np.ndarray),
        (np.array([1.5, 2.5], dtype=np.float32), np.ndarray),
    ],
    ids=["float", "np.float64", "np.float32", "0-d", "float32-vector"],
)
def test_gradient_has_type_dtype_and_shape_of_argument(x, kind):
    def f(x):
        return np.sum(np.sin(x) * x)

    g = adgen.grad(f)(x)
    assert type(g) is kind
    assert np.shape(g) == np.shape(x)
    if isinstance(x, (np.ndarray, np.generic)):
        assert g.dtype == x.dtype
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-6)


def test_float32_derivative_code_stays_float32(rng):
    def f(x, w):
        return np.sum(np.tanh(x @ w) ** 2)

    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    d = adgen.pipeline.derivative(adgen.frontend.parse.unwrap(f), "reverse", ("w",))
    _, (raw,) = d.compiled(x, w, np.float32(1.0))
    assert raw.dtype == np.float32  # not cast back by the API: computed in float32


def test_gradient_is_a_fresh_writeable_array_that_never_aliases_inputs(rng):
    def total(x):
        return np.sum(x)

    def ident(x):
        return x

    x = rng.standard_normal(3)
    g = adgen.grad(total)(x)
    g[0] = 42.0  # writeable (not a broadcast view)
    np.testing.assert_array_equal(adgen.grad(total)(x), np.ones(3))
    ct = np.ones(3)
    _, pullback = adgen.vjp(ident, x)
    (gx,) = pullback(ct)
    assert not np.shares_memory(gx, ct)
    _, tangent = adgen.jvp(ident, (x,), (ct,))
    assert not np.shares_memory(tangent, ct)


def test_inputs_tangents_and_cotangents_are_not_modified(rng):
    def f(x, y):
        z = x * y + np.exp(x)
        return z[1:] - np.sum(z)

    x, y = rng.standard_normal(4), rng.standard_normal(4)
    copies = x.copy(), y.copy()
    tx = rng.standard_normal(4)
    ct = rng.standard_normal(3)
    tx_copy, ct_copy = tx.copy(), ct.copy()
    adgen.jvp(f, (x, y), (tx, None))
    _, pullback = adgen.vjp(f, x, y)
    pullback(ct)
    for before, after in zip((*copies, tx_copy, ct_copy), (x, y, tx, ct)):
        np.testing.assert_array_equal(before, after)


def test_jvp_with_none_tangent_holds_argument_constant():
    value, tangent = adgen.jvp(survey, (2.0, 5.0), (1.0, None))
    assert value == pytest.approx(11.652071455223084)
    assert tangent == pytest.approx(5.5)
    _, both = adgen.jvp(survey, (2.0, 5.0), (1.0, 1.0))
    assert both == pytest.approx(5.5 + 2.0 - math.cos(5.0))


def test_jvp_of_array_function_matches_jacobian(rng):
    def f(x):
        return np.sin(x) * x[::-1]

    x, v = rng.standard_normal(5), rng.standard_normal(5)
    J = np.diag(np.cos(x) * x[::-1]) + np.diag(np.sin(x))[:, ::-1]
    out, t = adgen.jvp(f, (x,), (v,))
    np.testing.assert_allclose(out, f(x))
    np.testing.assert_allclose(t, J @ v, rtol=1e-12)


def test_vjp_gives_one_cotangent_per_primal_and_none_for_integers(rng):
    def f(x, n):
        return x[:n] * 2.0

    x = rng.standard_normal(4)
    out, pullback = adgen.vjp(f, x, 2)
    np.testing.assert_allclose(out, 2.0 * x[:2])
    gx, gn = pullback(np.array([1.0, 10.0]))
    np.testing.assert_allclose(gx, [2.0, 20.0, 0.0, 0.0])
    assert gn is None


def test_vjp_cotangent_shape_is_checked(rng):
    def f(x):
        return x * 2.0

    _, pullback = adgen.vjp(f, np.ones(3))
    with pytest.raises(adgen.ShapeMismatchError, match=r"shape \(2,\)"):
        pullback(np.ones(2))


def test_jvp_tangent_shape_is_checked():
    with pytest.raises(adgen.ShapeMismatchError, match="tangent of `x1`"):
        adgen.jvp(survey, (2.0, 5.0), (np.ones(3), None))


@adgen.differentiate
def decorated(x):
    return x * np.exp(x)


@adgen.differentiate(wrt="y", mode="forward")
def decorated_y(x, y):
    return x * y * y


def test_differentiate_runs_original_and_exposes_derivatives():
    assert decorated(1.0) == pytest.approx(math.e)
    assert decorated.grad(1.0) == pytest.approx(2 * math.e)
    value, g = decorated.value_and_grad(0.0)
    assert (value, g) == (0.0, 1.0)
    _, t = decorated.jvp((1.0,), (2.0,))
    assert t == pytest.approx(4 * math.e)
    _, pullback = decorated.vjp(1.0)
    assert pullback(1.0)[0] == pytest.approx(2 * math.e)
    assert "def decorated_vjp(x, out_bar):" in decorated.source()
    assert "def decorated_jvp(x, x_dot):" in decorated.source(mode="forward")


def test_differentiate_with_arguments_sets_defaults():
    assert decorated_y(2.0, 3.0) == 18.0
    assert decorated_y.grad(2.0, 3.0) == pytest.approx(12.0)
    assert "def decorated_y_jvp(x, y, y_dot):" in decorated_y.source()
    assert decorated_y.__name__ == "decorated_y"


def test_source_names_follow_the_documented_convention():
    src = adgen.source(survey, mode="reverse", wrt=(0, 1))
    assert "def survey_vjp(x1, x2, out_bar):" in src
    assert "x1_bar" in src and "x2_bar" in src
    assert "# line " in src and "# adjoint of line " in src
    assert "return np.log(x1) + x1 * x2 - np.sin(x2)" in src  # quoted original line
    fsrc = adgen.source(survey, mode="forward")
    assert "def survey_jvp(x1, x2, x1_dot):" in fsrc and "x2_dot" not in fsrc


def test_generated_code_is_visible_to_inspect_and_tracebacks():
    d = adgen.pipeline.derivative(adgen.frontend.parse.unwrap(survey), "reverse", ("x1",))
    assert inspect.getsource(d.compiled) == d.generated.source.split("\n", 1)[1]
    assert d.compiled.__code__.co_filename.startswith("<adgen survey_vjp ")

    def bad_shapes(a, b):
        return np.sum(a @ b)

    d = adgen.pipeline.derivative(adgen.frontend.parse.unwrap(bad_shapes), "reverse", ("a",))
    with pytest.raises(ValueError) as info:
        d.compiled(np.ones((2, 3)), np.ones((2, 3)), 1.0)
    frames = [f for f in info.traceback if "adgen bad_shapes_vjp" in str(f.path)]
    assert frames and "a @ b" in str(frames[-1].statement)


def test_an_error_in_the_primal_points_at_the_users_line():
    def bad_shapes(a, b):
        return np.sum(a @ b)

    with pytest.raises(ValueError) as info:
        adgen.grad(bad_shapes)(np.ones((2, 3)), np.ones((2, 3)))
    last = info.traceback[-1]
    assert str(last.path) == __file__ and "return np.sum(a @ b)" in str(last.statement)


def test_output_is_identical_across_processes():
    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, {tests!r})
        import adgen, test_api
        print(adgen.source(test_api.loss, wrt=0))
        print(adgen.source(test_api.survey, mode="forward", wrt=(0, 1)))
        """
    ).format(tests=os.path.dirname(__file__))
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        for _ in range(2)
    ]
    assert runs[0].stdout == runs[1].stdout
    assert "def loss_vjp(w, X, y, out_bar):" in runs[0].stdout


def test_cache_serves_the_same_derivative_until_something_changes():
    def f(x):
        return x * x

    g = adgen.grad(f)
    builds = cache.stats["builds"]
    assert g(3.0) == 6.0 and g(4.0) == 8.0
    assert cache.stats["builds"] == builds + 1


def _load_module(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_changing_a_global_the_function_reads_never_serves_stale_code(tmp_path):
    mod = _load_module(
        tmp_path,
        "scaled_mod",
        """
        import numpy as np
        SCALE = 2.0

        def f(x):
            return SCALE * np.sin(x)
        """,
    )
    g = adgen.grad(mod.f)
    assert g(0.0) == pytest.approx(2.0)
    mod.SCALE = 5.0
    assert g(0.0) == pytest.approx(5.0)


def test_redefining_a_function_in_place_is_noticed(tmp_path):
    mod = _load_module(tmp_path, "redef_mod", "def f(x):\n    return x * x\n")
    g = adgen.grad(mod.f)
    assert g(3.0) == 6.0
    mod.f.__code__ = compile("def f(x):\n    return x * x * x\n", mod.__file__, "exec").co_consts[0]
    # the source on disk is re-read only if it changed too; here the code object changed,
    # so the cached derivative must not be served
    (tmp_path / "redef_mod.py").write_text("def f(x):\n    return x * x * x\n")
    import linecache

    linecache.checkcache(mod.__file__)
    assert g(3.0) == 27.0


def test_closure_cells_are_resolved_and_tracked():
    def make(c):
        def f(x):
            return c * x * x

        def set_c(v):
            nonlocal c
            c = v

        return f, set_c

    f, set_c = make(3.0)
    assert adgen.grad(f)(1.0) == pytest.approx(6.0)
    set_c(10.0)
    assert adgen.grad(f)(1.0) == pytest.approx(20.0)


def test_any_spelling_of_a_numpy_function_is_the_same_primitive():
    import numpy as onp
    from numpy import sin as npsin

    def a(x):
        return onp.sin(x) + npsin(x) + math.sin(x)

    assert adgen.grad(a)(0.3) == pytest.approx(3 * math.cos(0.3))
    # one primitive: the optimizer computes np.sin(x) once for both spellings
    code = "\n".join(line for line in adgen.source(a).splitlines() if "#" not in line)
    assert code.count("np.sin(x)") == 1 and "math.sin(x)" in code
    assert adgen.source(a, optimize=False).count("= np.sin(x)") == 2


def test_no_files_are_written(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cwd_before = set(os.listdir("."))

    def f(x):
        return np.tanh(x) * 3.0

    adgen.grad(f)(0.5)
    adgen.jvp(f, (0.5,), (1.0,))
    assert list(tmp_path.iterdir()) == []
    assert set(os.listdir(".")) == cwd_before


def test_trace_lists_the_three_address_code_with_source_lines():
    t = adgen.trace(survey)
    text = str(t)
    assert "out_1 = np.log(x1)" in text and "# line" in text
    assert "return out" in text
    valued = str(adgen.trace(survey, 2.0, 5.0))
    assert "0.693147" in valued and "11.6521" in valued  # like the survey's Table 2


def test_check_grads_passes_on_correct_code_and_catches_a_wrong_derivative(monkeypatch, rng):
    def f(x):
        return np.sum(np.exp(x) * x)

    x = rng.standard_normal(3)
    check_grads(f, x)
    real_jvp = adgen.testing.jvp

    def skewed(fn, primals, tangents):
        out, t = real_jvp(fn, primals, tangents)
        return out, t * 1.01

    monkeypatch.setattr(adgen.testing, "jvp", skewed)
    with pytest.raises(AssertionError, match="disagrees with finite differences"):
        check_grads(f, x)
    with pytest.raises(AssertionError, match="reverse mode"):
        check_grads(f, x, modes=("reverse",))


def faster(x):
    return np.sum(np.sin(1e5 * x))


def test_check_grads_tries_a_smaller_step_before_it_complains():
    """At step 1e-6, sin(1e5 x) turns 0.1 rad: the differences are 0.2 % off, more than the
    tolerance; at 1e-8 they agree with adgen's exact derivative, which passes."""
    x = np.array([0.3, -0.2])
    np.testing.assert_allclose(adgen.grad(faster)(x), 1e5 * np.cos(1e5 * x), rtol=1e-9)
    check_grads(faster, x)


def test_check_grads_says_when_finite_differences_cannot_judge(monkeypatch):
    """A function that varies faster than the step: central differences at two steps
    disagree with each other, and check_grads says so instead of blaming adgen."""

    def fast(x):
        return np.sum(np.sin(1e7 * x))

    x = np.array([0.3, -0.2])
    # adgen is right (cos(1e7 x) 1e7), the finite differences are not
    np.testing.assert_allclose(adgen.grad(fast)(x), 1e7 * np.cos(1e7 * x), rtol=1e-9)
    with pytest.raises(
        AssertionError,
        match=r"cannot be checked here: central differences at steps 1e-06 and 0.0001 disagree",
    ):
        check_grads(fast, x)
    # a wrong derivative of a smooth function is still called wrong, not unsteady
    real_jvp = adgen.testing.jvp

    def skewed(fn, primals, tangents):
        out, t = real_jvp(fn, primals, tangents)
        return out, t * 1.01

    monkeypatch.setattr(adgen.testing, "jvp", skewed)
    with pytest.raises(AssertionError, match="disagrees with finite differences") as caught:
        check_grads(lambda x: np.sum(np.exp(x) * x), x)
    assert "cannot be checked" not in str(caught.value)


def large_and_flat(y, s):
    return 3.0e7 + np.sum(s * y)


def test_check_grads_allows_for_the_rounding_of_large_values(monkeypatch):
    """A value of 3e7 with a derivative near 1: at step 1e-6 rounding f alone moves the
    differences by ~1e-3, above the tolerance, though adgen is exact (the fuzzer's check
    called such a program wrong). A derivative off by more than that rounding is still
    wrong."""
    y, s = np.array([0.3, -0.7, 0.2]), 0.6
    check_grads(large_and_flat, y, s)
    real_jvp = adgen.testing.jvp

    def skewed(fn, primals, tangents):
        out, t = real_jvp(fn, primals, tangents)
        return out, t + 0.5

    monkeypatch.setattr(adgen.testing, "jvp", skewed)
    with pytest.raises(AssertionError, match="disagrees with finite differences"):
        check_grads(large_and_flat, y, s)


def array_and_scalar(x):
    a = np.sin(x) * 2.0
    return a, np.sum(a * x), 3.0


def test_jvp_and_vjp_of_tuple_results(rng):
    x = rng.uniform(0.5, 1.5, 3)
    out, pullback = adgen.vjp(array_and_scalar, x)
    assert isinstance(out, tuple) and len(out) == 3
    ct = (rng.standard_normal(3), 0.7, 2.0)
    (gx,) = pullback(ct)
    expected = 2.0 * np.cos(x) * ct[0] + 0.7 * (2.0 * np.cos(x) * x + 2.0 * np.sin(x))
    np.testing.assert_allclose(gx, expected, rtol=1e-12)
    v = rng.standard_normal(3)
    value, tangent = adgen.jvp(array_and_scalar, (x,), (v,))
    assert isinstance(tangent, tuple) and len(tangent) == 3
    np.testing.assert_allclose(tangent[0], 2.0 * np.cos(x) * v)
    assert tangent[2] == 0.0
    # <u, J v> = <J^T u, v> across all results
    lhs = np.sum(ct[0] * tangent[0]) + ct[1] * tangent[1]
    assert lhs == pytest.approx(np.sum(gx * v))


def test_tuple_result_cotangent_structure_is_checked(rng):
    _, pullback = adgen.vjp(array_and_scalar, np.ones(3))
    with pytest.raises(adgen.ShapeMismatchError, match="tuple of 3 cotangents"):
        pullback(np.ones(3))
    with pytest.raises(adgen.ShapeMismatchError, match="cotangent 0 has shape"):
        pullback((np.ones(2), 1.0, 1.0))


def test_grad_of_tuple_result_is_refused():
    with pytest.raises(adgen.NonScalarOutputError, match="tuple of 3 values"):
        adgen.grad(array_and_scalar)(np.ones(3))


def checked_log(x, scale=2.0):
    if np.any(x <= 0):
        raise ValueError("x must be positive")
    return np.sum(np.log(x)) * scale


def test_grad_called_again_takes_its_short_way_with_the_same_answers_and_errors():
    # the second call of a gradient made for these kinds runs the code made already; its
    # defaults filled, its errors the function's own, its gradient returned as the first's
    g = adgen.grad(checked_log)
    x = np.array([0.5, 2.0])
    first = g(x)
    again = g(x)
    np.testing.assert_array_equal(first, again)
    assert again is not first and again.flags.writeable
    np.testing.assert_allclose(g(np.array([1.0, 4.0])), [2.0, 0.5], rtol=1e-15)
    with pytest.raises(ValueError, match="must be positive"):
        g(np.array([1.0, -1.0]))
    np.testing.assert_allclose(adgen.grad(checked_log, wrt=(0, 1))(x, 3.0)[1], np.sum(np.log(x)))
