"""Every refusal is an adgen error naming the user's file:line:column, with the line and a caret."""

import importlib.util
import math
import textwrap

import numpy as np
import pytest

import adgen

SOURCE = """\
import numpy as np


def uses_with(x):
    with open("f") as fh:
        pass
    return x


def uses_try(x):
    try:
        print(x)  # (a call made for its effect: adgen cannot run the body twice)
        y = x * 2.0
    except ValueError:
        y = x
    return y


def uses_list(x):
    xs = [x]
    xs.insert(0, x)
    return np.sum(np.array(xs))


def uses_comprehension(x):
    return np.sum(np.stack(x * i for i in range(3)))  # NumPy refuses it


def uses_unwrap(x):
    return np.sum(np.unwrap(x))


def helper(x):
    return x * 2.0


def calls_helper(x):
    return helper(x) + 1.0


def recursive(x):
    if x > 1.0:
        return recursive(x / 2.0)
    return x


def undefined_name(x):
    return x * not_defined_anywhere


def used_before_assigned(x):
    y = z + x
    z = 1.0
    return y


def no_return(x):
    y = x * 2.0


def subscript_store(x):
    x[0] = 1.0
    return x


def method_unknown(x):
    return x.tolist()


def sum_with_initial(x):
    return np.sum(x, initial=1.0)


def vector_valued(x):
    return np.sin(x)


def two_args(x, n):
    return x * n


def uses_yield(x):
    yield x


def uses_class(x):
    class Box:
        pass

    return x


COUNTER = 0


def uses_global(x):
    global COUNTER
    COUNTER = COUNTER + 1
    return x


def uses_del(x):
    y = x * 2.0
    for _ in range(1):
        del y
    return x


def reads_after_del(x):
    gone = x * 2.0
    del gone
    return gone


def uses_eval(x):
    return eval("x * 2")


def calls_computed_function(x, funcs):
    return funcs[0](x)
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("errs") / "user_code.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("user_code", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def line_of(text):
    return SOURCE.splitlines().index(text) + 1


def refusal(fn, mode="reverse"):
    with pytest.raises(adgen.AdgenError) as info:
        adgen.source(fn, mode=mode)
    return info.value


@pytest.mark.parametrize(
    "name, line, kind, words",
    [
        ("uses_yield", "    yield x", adgen.UnsupportedSyntaxError, "`yield`"),
        ("uses_class", "    class Box:", adgen.UnsupportedSyntaxError, "class definitions"),
        ("uses_global", "    global COUNTER", adgen.UnsupportedSyntaxError, "`global`"),
        ("uses_del", "        del y", adgen.UnsupportedSyntaxError, "`del`"),
        ("reads_after_del", "    return gone", adgen.UnsupportedSyntaxError, "after `del gone`"),
        ("uses_eval", '    return eval("x * 2")', adgen.NoRuleError, "`eval`"),
        (
            "calls_computed_function",
            "    return funcs[0](x)",
            adgen.UnsupportedSyntaxError,
            "calling a computed value",
        ),
        ("uses_with", '    with open("f") as fh:', adgen.UnsupportedSyntaxError, "`with` blocks"),
        ("uses_try", "    try:", adgen.UnsupportedSyntaxError, "`try` blocks"),
        (
            "uses_list",
            "    xs.insert(0, x)",
            adgen.UnsupportedSyntaxError,
            "growing a list with `.insert()`",
        ),
        (
            "uses_comprehension",
            "    return np.sum(np.stack(x * i for i in range(3)))  # NumPy refuses it",
            adgen.UnsupportedSyntaxError,
            "generator expression passed",
        ),
        ("uses_unwrap", "    return np.sum(np.unwrap(x))", adgen.NoRuleError, "numpy.unwrap"),
        (
            "undefined_name",
            "    return x * not_defined_anywhere",
            adgen.UnresolvedNameError,
            "`not_defined_anywhere` is not defined",
        ),
        (
            "used_before_assigned",
            "    y = z + x",
            adgen.UnresolvedNameError,
            "before it is assigned",
        ),
        (
            "subscript_store",
            "    x[0] = 1.0",
            adgen.UnsupportedSyntaxError,
            "argument passed by the caller",
        ),
        ("method_unknown", "    return x.tolist()", adgen.UnsupportedSyntaxError, "`.tolist()`"),
        (
            "sum_with_initial",
            "    return np.sum(x, initial=1.0)",
            adgen.UnsupportedSyntaxError,
            "np.sum",
        ),
    ],
)
def test_refusal_names_file_line_column_and_shows_source(mod, name, line, kind, words):
    err = refusal(getattr(mod, name))
    assert isinstance(err, kind)
    assert err.loc is not None and err.loc.filename == mod.__file__
    assert err.loc.lineno == line_of(line)
    text = str(err)
    first, shown, caret = text.splitlines()[:3]
    assert first.startswith(f"{mod.__file__}:{err.loc.lineno}:{err.loc.col + 1}: ")
    assert words in first
    assert shown.strip() == line.strip()
    # the caret stands under the reported column of the shown line
    assert caret.index("^") - 4 == err.loc.col
    assert 0 <= err.loc.col < len(line)
    assert "hint:" in text
    assert err.one_line().count("\n") == 0


def test_caret_points_at_the_construct(mod):
    err = refusal(mod.uses_unwrap)
    line = line_of("    return np.sum(np.unwrap(x))")
    assert (err.loc.lineno, err.loc.col) == (
        line,
        SOURCE.splitlines()[line - 1].index("np.unwrap"),
    )


def test_no_rule_error_says_how_to_register_a_rule(mod):
    err = refusal(mod.uses_unwrap)
    assert "adgen.rules.rule" in err.hint and "nondifferentiable" in err.hint


def test_function_without_return_is_refused(mod):
    err = refusal(mod.no_return)
    assert isinstance(err, adgen.UnsupportedSyntaxError) and "return" in err.message


def test_grad_of_vector_valued_function_is_refused(mod):
    with pytest.raises(adgen.NonScalarOutputError, match=r"shape \(3,\)") as info:
        adgen.grad(mod.vector_valued)(np.ones(3))
    assert info.value.loc.lineno == line_of("def vector_valued(x):")
    assert "vjp" in info.value.hint


@pytest.mark.parametrize("value", [3, True, np.arange(3), "s", [1.0, 2.0]])
def test_differentiating_wrt_a_non_float_is_refused(mod, value):
    with pytest.raises(adgen.NonDifferentiableError, match="`x`"):
        adgen.grad(mod.two_args)(value, 2.0)


def test_integer_argument_not_differentiated_is_fine(mod):
    assert adgen.grad(mod.two_args)(2.0, 3) == 3.0


@pytest.mark.parametrize("wrt", [2, -3, "m", ("x", "x"), (), 1.5, None])
def test_wrt_naming_no_parameter_is_refused(mod, wrt):
    with pytest.raises(adgen.WrtError) as info:
        adgen.grad(mod.two_args, wrt=wrt)
    assert info.value.loc.filename == mod.__file__


def test_source_unavailable_for_builtins_and_exec():
    with pytest.raises(adgen.SourceUnavailableError):
        adgen.grad(math.gcd)  # (a builtin without a rule; np.sin is differentiated by its rule)
    assert adgen.grad(np.sin)(0.3) == pytest.approx(np.cos(0.3), rel=1e-15)
    namespace = {}
    exec("def f(x):\n    return x * x\n", namespace)
    with pytest.raises(adgen.SourceUnavailableError, match="cannot read the source") as info:
        adgen.grad(namespace["f"])(1.0)
    assert "hint:" in str(info.value)


def test_lambda_is_differentiable_when_alone_on_its_line():
    square = lambda x: x * x  # noqa: E731
    assert adgen.grad(square)(3.0) == 6.0


def test_two_lambdas_on_one_line_are_told_apart():
    pair = (lambda x: x * x, lambda x: x + x)  # noqa: E731
    assert adgen.grad(pair[0])(3.0) == 6.0
    assert adgen.grad(pair[1])(3.0) == 2.0


def test_lambdas_whose_text_is_not_the_code_that_runs_are_refused_clearly():
    import linecache

    namespace: dict = {}
    exec(compile("pair = (lambda x: x * x, lambda x: x + x)\n", "<two-lambdas>", "exec"), namespace)
    linecache.cache["<two-lambdas>"] = (
        0,
        None,
        ["pair = (lambda x: x - x, lambda x: x / x)\n"],
        "<two-lambdas>",
    )
    try:
        with pytest.raises(adgen.UnsupportedSyntaxError, match="which of the 2 lambdas") as info:
            adgen.grad(namespace["pair"][0])(3.0)
    finally:
        del linecache.cache["<two-lambdas>"]
    assert str(info.value).startswith("<two-lambdas>:1:9:")
    assert "hint: bind it to a name with def" in str(info.value)


def test_internal_errors_are_wrapped_with_the_function_location(monkeypatch, mod):
    import adgen.modes.reverse

    def broken(*args):
        raise KeyError("boom")

    monkeypatch.setattr(adgen.pipeline, "reverse", broken)
    adgen.backend.cache.clear()
    with pytest.raises(adgen.InternalError, match="internal error") as info:
        adgen.source(mod.helper)
    assert info.value.loc.filename == mod.__file__
    adgen.backend.cache.clear()


def test_errors_form_one_hierarchy():
    for cls in (
        adgen.UnsupportedSyntaxError,
        adgen.NoRuleError,
        adgen.UnresolvedNameError,
        adgen.NonDifferentiableError,
        adgen.NonScalarOutputError,
        adgen.WrtError,
        adgen.ShapeMismatchError,
        adgen.SourceUnavailableError,
        adgen.InternalError,
    ):
        assert issubclass(cls, adgen.AdgenError)


def test_error_message_layout():
    err = adgen.UnsupportedSyntaxError(
        "adgen does not support `with` blocks",
        adgen.errors.SourceLocation("m.py", 3, 4, "    with x:\n"),
        hint="move it out",
    )
    assert str(err) == textwrap.dedent(
        """\
        m.py:3:5: adgen does not support `with` blocks
                with x:
                ^
            hint: move it out"""
    )


def test_differentiated_value_in_a_parameter_without_derivative_is_refused():
    def f(x, y):
        return np.sum(np.where(y, x, 0.0))

    with pytest.raises(adgen.NonDifferentiableError, match="argument `condition`") as info:
        adgen.grad(f, wrt=1)(np.ones(2), np.ones(2))
    assert info.value.loc.lineno == f.__code__.co_firstlineno + 1
    with pytest.raises(adgen.NonDifferentiableError, match="argument `condition`"):
        adgen.jvp(f, (np.ones(2), np.ones(2)), (None, np.ones(2)))
    assert adgen.grad(f)(np.ones(2), np.ones(2)).tolist() == [1.0, 1.0]


def test_in_place_update_of_an_alias_or_argument_is_refused():
    def alias(x):
        a = x
        a += 1.0
        return np.sum(x * a)

    def argument(x):
        x *= 2.0
        return np.sum(x)

    def view(x):
        y = x[1:]
        y += 1.0
        return np.sum(x)

    for fn, why in ((alias, "also `x`"), (argument, "argument"), (view, "view")):
        with pytest.raises(adgen.UnsupportedSyntaxError, match="in-place update") as info:
            adgen.grad(fn)(np.ones(3))
        assert why in info.value.message
        assert "hint: write" in str(info.value)


def test_in_place_update_of_a_fresh_value_is_differentiated():
    def fresh(x):
        y = x * 2.0
        y += x
        total = 0.0
        total += np.sum(y * y)
        return total

    x = np.arange(3.0)
    np.testing.assert_allclose(adgen.grad(fresh)(x), 18.0 * x)
    assert fresh(x) == pytest.approx(np.sum(9 * x * x))


def test_assert_is_kept_and_not_differentiated():
    def checked(x):
        assert x.ndim == 1, "x must be a vector"
        return np.sum(np.sin(x))

    np.testing.assert_allclose(adgen.grad(checked)(np.ones(2)), np.cos(np.ones(2)))
    code = [ln for ln in adgen.source(checked).splitlines() if not ln.strip().startswith("#")]
    assert any(ln.strip().startswith("assert check_") for ln in code)
    assert not any("must be a vector" in ln for ln in code)  # only quoted in comments
    with pytest.raises(AssertionError, match="x must be a vector"):
        adgen.grad(checked)(np.ones((2, 2)))


def _matmul_helper(a, b):
    return a @ b


def test_error_inside_derivative_code_names_the_users_line():
    def f(x, W):
        y = np.tanh(x)
        z = _matmul_helper(y, W)
        return np.sum(z)

    with pytest.raises(adgen.DerivativeError, match="ValueError while computing") as info:
        adgen.jvp(f, (np.ones(3), np.ones((2, 2))), (np.ones(3), None))
    loc = info.value.loc
    assert loc.lineno == _matmul_helper.__code__.co_firstlineno + 1
    assert loc.text.strip() == "return a @ b"
    assert isinstance(info.value.__cause__, ValueError)


_ITEMS = {"a": np.array([0.5, -1.0, 2.0])}


def _identity_of_items(x, p):
    if np.sum(x) > 10.0:  # (decided when the code runs: the refusal below is made then)
        return np.sum(x * x)
    b = p["a"]
    if b is p["a"]:  # (adgen cannot follow this identity: refused when the code runs)
        return np.sum(np.sin(x) * b)
    return np.sum(x)


def _calls_identity_of_items(x):
    return _identity_of_items(x, _ITEMS)


@pytest.mark.parametrize("order", ["grad", "hessian", "hvp"])
def test_refusal_when_derivative_code_runs_names_the_users_line_at_every_order(order):
    x = np.array([0.3, 0.2, 0.1])
    f = _calls_identity_of_items
    run = {
        "grad": lambda: adgen.grad(f)(x),
        "hessian": lambda: adgen.hessian(f)(x),
        "hvp": lambda: adgen.hvp(f)(x, x),
    }[order]
    with pytest.raises(adgen.UnsupportedSyntaxError, match="`is` between values") as info:
        run()
    loc = info.value.loc
    assert loc.filename == __file__
    assert loc.lineno == _identity_of_items.__code__.co_firstlineno + 4
    assert loc.text.strip().startswith("if b is p")
