"""Never silently wrong, never a raw exception: the front end and the API's error path.

* C2: a lambda is read from any line Python accepts -- an ``if``/``while`` condition, a line
  with ``@``, comparisons or boolean operators, several lambdas on one line (the right one
  is taken), lambdas over several lines, with defaults, nested, in comprehensions, keyword
  arguments and decorators, after tabs or non-ASCII text -- even when the function holding
  ``adgen.grad(lambda ...)`` is just called in plain Python. A lambda whose text is not the
  code that runs is refused naming file:line, never differentiated.
* C1b: when derivative code fails, reporting the error never calls the user's function
  with the leaves of its dict/list/tuple arguments (nor drops keywords or defaults).
* No raw exception leaves a derivative call: bad calls are adgen errors naming the
  function's line; the user's own errors stay the user's own.

Every test states the exact answer. Run on Python 3.10-3.13.
"""

from __future__ import annotations

import ast
import itertools
import linecache
import random
import sys
import textwrap

import numpy as np
import pytest
from source_modules import write_module

import adgen
from adgen import pipeline

HERE = __file__


def line_of(text: str, path: str = HERE) -> int:
    with open(path, encoding="utf-8") as fh:
        for k, line in enumerate(fh, start=1):
            if text in line:
                return k
    raise AssertionError(text)


def load(tmp_path, name: str, source: str):
    """Import ``source`` as a module from a real file (written exactly as given: tabs,
    semicolons and long lines the formatter would change in this file)."""
    return write_module(tmp_path, name, source)


# -- C2: functions holding adgen.grad(lambda ...) on lines with more than the call ------------
def in_if(x):
    if adgen.grad(lambda s: s * s)(x) > 0:
        return x
    return -x


def in_while(x):
    n = 0.0
    while adgen.grad(lambda s: s * s * s)(x) > 10.0 * n and n < 5.0:
        n = n + 1.0
    return n * x


def with_matmul(x):
    return x @ np.ones(2), adgen.grad(lambda s: s * 2.0)(1.0)


def matmul_starts_the_line(x):
    y = (x
         @ np.ones(2)) + adgen.grad(lambda s: s ** 3)(2.0)  # fmt: skip
    return y


def two_on_a_line(x):
    return adgen.grad(lambda s: s * s)(x), adgen.grad(lambda s: s + s)(x)


def two_alike_on_a_line(x):
    return adgen.grad(lambda s: s * s)(x) + adgen.grad(lambda s: s * s)(2.0 * x)


def defaults_differ(x):
    return adgen.grad(lambda s, k=3.0: s * k)(x) + adgen.grad(lambda s, k=5.0: s * k)(x)


def nested(x):
    return adgen.grad(lambda a: adgen.grad(lambda b: a * b * b)(a))(x)


def in_comprehension(x):
    return [adgen.grad(lambda s: s**k)(x) for k in (1.0, 2.0, 3.0)]


def boolean_and_comparison(x):
    return x > 0 and adgen.grad(lambda s: s * s)(x) > 2.0 or not adgen.grad(lambda s: -s)(x)


def over_several_lines(x):
    return adgen.grad(
        lambda s:
            np.sin(s)
            * s,
    )(x)  # fmt: skip


def in_a_keyword_argument(x):
    order = sorted([3.0, 1.0, 2.0], key=lambda v: adgen.grad(lambda s: -s * v)(1.0))
    return order, adgen.grad(lambda s: s * s * x)(x)


def outer_reads_x(x):
    return adgen.grad(lambda s: s * s * x)(x) + adgen.grad(lambda s: s + s)(x)


def tagged(**lambdas):
    def mark(f):
        f.lambdas = lambdas
        return f

    return mark


@tagged(seven=lambda s: s * 7.0, eight=lambda s: s * 8.0)
def decorated(x):
    return x


def test_lambda_in_an_if_condition_runs_in_plain_python():
    assert in_if(1.5) == 1.5  # grad of s*s at 1.5 is 3.0 > 0: the first branch
    assert in_if(-1.5) == 1.5  # -3.0: the second branch, -x


def test_lambda_in_a_while_condition_runs_in_plain_python():
    assert in_while(2.0) == 4.0  # 12 > 0, 12 > 10, 12 <= 20: two iterations, then 2 * x


def test_lambda_on_a_line_with_matmul():
    value, slope = with_matmul(np.ones(2))
    assert value == 2.0 and slope == 2.0
    assert matmul_starts_the_line(np.ones(2)) == 2.0 + 12.0


def test_the_right_lambda_of_several_on_one_line():
    assert two_on_a_line(1.5) == (3.0, 2.0)
    assert two_alike_on_a_line(1.5) == 3.0 + 6.0
    assert defaults_differ(1.5) == 3.0 + 5.0
    pair = (lambda x: x * x, lambda x: x + x)  # noqa: E731
    assert adgen.grad(pair[0])(3.0) == 6.0
    assert adgen.grad(pair[1])(3.0) == 2.0
    trig = (lambda s: np.sin(s), lambda s: np.cos(s))  # noqa: E731
    assert adgen.grad(trig[0])(0.5) == np.cos(0.5)
    assert adgen.grad(trig[1])(0.5) == -np.sin(0.5)


def test_nested_lambdas_comprehensions_and_boolean_operators():
    assert nested(1.5) == 6.0  # d/da of (d/db a*b*b at b=a) = d/da 2a^2 = 4a
    assert in_comprehension(1.5) == [1.0, 3.0, 6.75]
    assert boolean_and_comparison(1.5) is True


def test_lambda_over_several_lines():
    assert over_several_lines(1.5) == pytest.approx(np.cos(1.5) * 1.5 + np.sin(1.5), rel=1e-15)
    spread = [lambda s: (s
        * 4.0), lambda s: (s
            * 5.0)]  # fmt: skip
    assert [adgen.grad(g)(1.0) for g in spread] == [4.0, 5.0]


def test_lambdas_in_keyword_arguments_and_decorators():
    assert in_a_keyword_argument(1.5) == ([3.0, 2.0, 1.0], 2.0 * 1.5 * 1.5)
    assert adgen.grad(decorated.lambdas["seven"])(1.0) == 7.0
    assert adgen.grad(decorated.lambdas["eight"])(1.0) == 8.0


def test_lambdas_made_in_a_loop_with_defaults():
    powers = [lambda x, p=p: x**p for p in (2.0, 3.0)]
    assert [adgen.grad(g)(2.0) for g in powers] == [4.0, 12.0]
    scaled = list(lambda s, k=k: s * k for k in (2.0, 3.0))
    assert [adgen.grad(g)(1.0) for g in scaled] == [2.0, 3.0]


def test_the_function_holding_the_lambdas_is_differentiated_too():
    assert adgen.grad(in_if)(1.5) == 1.0
    assert adgen.grad(in_if)(-1.5) == -1.0
    # d/dx [2x * x] + d/dx 2 = 4x
    assert adgen.grad(outer_reads_x)(1.5) == 6.0
    assert adgen.grad(nested)(1.5) == 4.0
    assert adgen.grad(lambda x: two_on_a_line(x)[0] + two_on_a_line(x)[1])(1.5) == 2.0


def test_lambdas_after_tabs_and_non_ascii_text(tmp_path):
    source = (
        "import numpy as np\n"
        "import adgen\n"
        "def tabs(x):\n"
        "\treturn\tadgen.grad(lambda s: s*s*s)(x) if x else adgen.grad(lambda s: s)(x)\n"
        "def accents(x):\n"
        '    ñame = "é…" ; return ñame, adgen.grad(lambda s: 4*s)(x), adgen.grad(lambda s: 5*s)(x)'
        "\n"
        "pair = ('ü', lambda s: np.sin(s) * 2.0, '€', lambda s: np.sin(s) * 3.0)\n"
    )
    module = load(tmp_path, "tabs_and_accents", source)
    assert module.tabs(1.5) == 6.75
    assert module.accents(1.5) == ("é…", 4.0, 5.0)
    assert adgen.grad(module.pair[1])(0.5) == pytest.approx(2.0 * np.cos(0.5), rel=1e-15)
    assert adgen.grad(module.pair[3])(0.5) == pytest.approx(3.0 * np.cos(0.5), rel=1e-15)


# lambdas in many places, several to a line: each must be told apart from its neighbours
CONTEXTS = [
    "t = ({a}, {b})",
    "if {a} is not None and {b} is not None:\n    pass",
    "while {a} is None or {b} is None:\n    pass",
    "m = np.eye(2) @ np.eye(2), {a}, {b}",
    "c = ({a} is None) != ({b} is None)",
    "d = {{'a': {a}, 'b': [{b}]}}",
    "k = dict(a={a}, b={b})",
    "z = [{a} for _ in range(1)] + [{b}]",
    "u = ({a},\n     {b})",
    "ñ = 'é'; v = max([1, 2], key=lambda q: -q), {a}, {b}",
    "w = {a} if 1 < 2 <= 3 else {b}",
]
BODIES = [
    ("s * {c}", lambda c, s: c),
    ("{c} * s", lambda c, s: c),
    ("s * s * {c}", lambda c, s: 2.0 * s * c),
    ("np.sin(s) * {c}", lambda c, s: np.cos(s) * c),
    ("np.exp(s * {c})", lambda c, s: c * np.exp(s * c)),
]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_placements_of_lambdas_pick_the_right_one(tmp_path, seed):
    rand = random.Random(seed)
    lines = ["import numpy as np", "made = []", "def reg(f, slope):", "    made.append((f, slope))"]
    lines.append("    return f")
    expected_count = 0
    for k, context in enumerate(CONTEXTS * 2):
        parts = []
        for _ in range(2):
            body, _slope = rand.choice(BODIES)
            c = rand.choice([2.0, 3.0, 0.5, 2.0])
            index = BODIES.index((body, _slope))
            parts.append(f"reg(lambda s: {body.format(c=c)}, ({index}, {c}))")
        lines.append(context.format(a=parts[0], b=parts[1]))
        # the conditional expression evaluates only one of its branches
        expected_count += 1 if " if 1 < 2" in context else 2
    module = load(tmp_path, f"placements_{seed}", "\n".join(lines) + "\n")
    assert len(module.made) == expected_count
    for f, (index, c) in module.made:
        assert adgen.grad(f)(0.5) == pytest.approx(BODIES[index][1](c, 0.5), rel=1e-14)


def test_a_lambda_whose_text_is_not_the_code_that_runs_is_refused(tmp_path):
    namespace: dict = {}
    exec(compile("one = lambda x: x * x\n", "<soundness-one>", "exec"), namespace)
    exec(
        compile("pair = (lambda x: x * x, lambda x: x + x)\n", "<soundness-pair>", "exec"),
        namespace,
    )
    linecache.cache["<soundness-one>"] = (0, None, ["one = lambda x: x - x\n"], "<soundness-one>")
    linecache.cache["<soundness-pair>"] = (
        0,
        None,
        ["pair = (lambda x: x - x, lambda x: x / x)\n"],
        "<soundness-pair>",
    )
    try:
        with pytest.raises(adgen.SourceUnavailableError) as one:
            adgen.grad(namespace["one"])(3.0)
        with pytest.raises(adgen.UnsupportedSyntaxError) as pair:
            adgen.grad(namespace["pair"][1])(3.0)
    finally:
        del linecache.cache["<soundness-one>"], linecache.cache["<soundness-pair>"]
    assert str(one.value).startswith("<soundness-one>:1:7: the lambda on line 1")
    assert str(pair.value).startswith("<soundness-pair>:1:9: cannot tell which of the 2 lambdas")
    for err in (one.value, pair.value):
        assert "hint:" in str(err) and "def" in err.hint


def test_a_lambda_whose_line_holds_no_such_lambda_is_refused():
    namespace: dict = {}
    exec(compile("\nf = lambda x: x * x\n", "<soundness-moved>", "exec"), namespace)
    linecache.cache["<soundness-moved>"] = (
        0,
        None,
        ["f = lambda x: x * x\n", "\n"],
        "<soundness-moved>",
    )
    try:
        with pytest.raises(adgen.SourceUnavailableError, match="no lambda with the parameters"):
            adgen.grad(namespace["f"])(3.0)
    finally:
        del linecache.cache["<soundness-moved>"]


# -- C1b: reporting a failure of derivative code never calls f with flattened leaves -----------
def clipped(x):
    return x * 1.0


def clipped_jvp(x, dx):
    raise ValueError("the jvp rule failed")


def clipped_vjp(g, x):
    raise ValueError("the vjp rule failed")


def with_dict(x, d):
    return np.sum(clipped(x)) + np.sum(d["w"])


def with_list(x, ys):
    return np.sum(clipped(x)) + ys[0] * ys[1]


def with_default(x, d, scale=2.0):
    return np.sum(clipped(x)) * scale + np.sum(d["w"])


def checks_its_input(x, d):
    assert np.all(d["w"] > 0.0)
    return np.sum(x * d["w"])


def well_behaved(x, d, scale=2.0):
    return np.sum(x * x) * scale + np.sum(d["w"] * x[0])


@pytest.fixture
def failing_rule():
    with adgen.rules.registrations():
        adgen.defrule(clipped, jvp=clipped_jvp, vjp=clipped_vjp)
        yield


X = np.array([1.0, 2.0])


@pytest.mark.parametrize(
    ("call", "line"),
    [
        (lambda: adgen.grad(with_dict, wrt=(0, 1))(X, {"w": np.ones(2)}), "def with_dict"),
        (lambda: adgen.grad(with_dict)(X, {"w": np.ones(2)}), "def with_dict"),
        (lambda: adgen.value_and_grad(with_dict, wrt=0)(X, {"w": np.ones(2)}), "def with_dict"),
        (lambda: adgen.grad(with_list, wrt=(0, 1))(X, [1.0, 2.0]), "def with_list"),
        (lambda: adgen.grad(with_list, wrt=(0, 1))(X, (1.0, 2.0)), "def with_list"),
        (lambda: adgen.grad(with_default, wrt=(0, 1))(X, {"w": np.ones(2)}), "def with_default"),
        (
            lambda: adgen.grad(with_default, wrt=(0, 1))(X, d={"w": np.ones(2)}, scale=3.0),
            "def with_default",
        ),
        (lambda: adgen.grad(with_default)(x=X, d={"w": np.ones(2)}), "def with_default"),
    ],
    ids=["dict", "dict-wrt0", "value_and_grad", "list", "tuple", "default", "keywords", "named"],
)
def test_a_failing_derivative_with_container_arguments_is_a_derivative_error(
    failing_rule, call, line
):
    with pytest.raises(adgen.DerivativeError) as info:
        call()
    err = info.value
    # the line whose derivative failed: `return np.sum(clipped(x)) ...` right after the def
    assert (err.loc.filename, err.loc.lineno) == (HERE, line_of(line) + 1), str(err)
    assert isinstance(err.__cause__, ValueError) and "the vjp rule failed" in str(err)


def test_a_failing_forward_derivative_with_container_arguments(failing_rule):
    with pytest.raises(adgen.DerivativeError) as info:
        adgen.jvp(with_dict, (X, {"w": np.ones(2)}), (np.ones(2), None))
    assert info.value.loc.lineno == line_of("def with_dict") + 1
    assert isinstance(info.value.__cause__, ValueError)


def test_the_users_own_error_stays_the_users_own_with_container_arguments():
    d = {"w": np.array([1.0, -1.0])}
    with pytest.raises(AssertionError) as plain:
        checks_its_input(X, d)
    with pytest.raises(AssertionError) as derived:
        adgen.grad(checks_its_input, wrt=(0, 1))(X, d)
    assert type(derived.value) is type(plain.value)
    assert not isinstance(derived.value, adgen.AdgenError)
    # and with valid input the answer is exact: d/dx = w, d/dw = x
    gx, gd = adgen.grad(checks_its_input, wrt=(0, 1))(X, {"w": np.array([2.0, 3.0])})
    assert gx.tolist() == [2.0, 3.0] and gd["w"].tolist() == [1.0, 2.0]


def test_keywords_and_defaults_of_container_calls_give_exact_gradients():
    d = {"w": np.array([1.0, 3.0])}
    # d/dx = 2 x scale + [sum(w), 0];  d/dw = [x0, x0]
    gx, gd = adgen.grad(well_behaved, wrt=(0, 1))(X, d)
    assert gx.tolist() == [2.0 * 2.0 * 1.0 + 4.0, 2.0 * 2.0 * 2.0] and gd["w"].tolist() == [
        1.0,
        1.0,
    ]
    gx, gd = adgen.grad(well_behaved, wrt=("x", "d"))(x=X, d=d, scale=0.5)
    assert gx.tolist() == [1.0 + 4.0, 2.0] and gd["w"].tolist() == [1.0, 1.0]
    value, g = adgen.value_and_grad(well_behaved, wrt="d")(X, d=d)
    assert value == 5.0 * 2.0 + 4.0 and g["w"].tolist() == [1.0, 1.0]


# -- no raw exception: bad calls are adgen errors, the user's errors stay theirs ----------------
def two_params(x, scale=2.0):
    return np.sum(x**3) * scale


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda: adgen.grad(two_params)(X, 2.0, 3.0), "too many positional arguments"),
        (lambda: adgen.grad(two_params)(X, zzz=1.0), "unexpected keyword argument 'zzz'"),
        (lambda: adgen.value_and_grad(with_dict)(X), "missing a required argument: 'd'"),
        (lambda: adgen.grad(two_params)(), "missing a required argument: 'x'"),
        (lambda: adgen.laplacian(two_params)(), "missing a required argument: 'x'"),
        (lambda: adgen.hvp(two_params)(X, 1.0, 2.0, X), "too many positional arguments"),
        (lambda: adgen.jacfwd(two_params)(X, 1.0, 2.0), "too many positional arguments"),
        (lambda: adgen.jacrev(two_params)(X, q=1.0), "unexpected keyword argument 'q'"),
        (lambda: adgen.source(two_params, args=()), "missing a required argument: 'x'"),
        (lambda: adgen.vjp(two_params, X, 1.0, 2.0), "too many positional arguments"),
        (lambda: adgen.jvp(two_params, (X, 1.0, 2.0), (X,)), "too many positional arguments"),
        (lambda: adgen.jvp(two_params, (X,), 1.0), "tangents must be a tuple or list"),
        (lambda: adgen.jvp(two_params, X, (X,)), "primals must be a tuple or list"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_calls_that_do_not_fit_the_parameters_are_adgen_errors(call, says):
    with pytest.raises(adgen.ArgumentError) as info:
        call()
    err = info.value
    assert isinstance(err, TypeError)  # as Python's own error for such a call
    assert says in str(err)
    fn = with_dict if "'d'" in says else two_params
    assert (err.loc.filename, err.loc.lineno) == (HERE, line_of(f"def {fn.__name__}(")), str(err)
    assert err.hint


def test_hvp_and_laplacian_take_keywords():
    # f = scale * sum(x^3): H = diag(6 x) scale
    assert adgen.hvp(two_params)(X, np.ones(2)).tolist() == [12.0, 24.0]
    assert adgen.hvp(two_params)(X, np.ones(2), scale=1.0).tolist() == [6.0, 12.0]
    assert adgen.hvp(two_params)(X, 3.0, np.ones(2)).tolist() == [18.0, 36.0]
    assert adgen.laplacian(two_params)(X) == 36.0
    assert adgen.laplacian(two_params)(X, scale=1.0) == 18.0
    assert adgen.laplacian(two_params)(x=X) == 36.0


def test_jacobians_of_a_tuple_result_are_a_tuple_of_jacobians():
    def pair(y, z):
        return y * z, np.sum(y)

    for jac in (adgen.jacfwd, adgen.jacobian):
        first, second = jac(pair)(X, 2.0)
        assert first.tolist() == [[2.0, 0.0], [0.0, 2.0]]
        assert second.tolist() == [1.0, 1.0]
    # several wrt: the result's structure outside, wrt's inside (as JAX)
    (dy1, dz1), (dy2, dz2) = adgen.jacfwd(pair, wrt=(0, 1))(X, 2.0)
    assert dy1.tolist() == [[2.0, 0.0], [0.0, 2.0]] and dz1.tolist() == [1.0, 2.0]
    assert dy2.tolist() == [1.0, 1.0] and float(dz2) == 0.0
    with pytest.raises(adgen.NonScalarOutputError, match="jacrev needs one array result"):
        adgen.jacrev(pair)(X, 2.0)


def test_a_failure_before_the_first_line_of_derivative_code_names_the_function():
    d = pipeline.derivative(two_params, "reverse", ("x",))
    with pytest.raises(adgen.DerivativeError) as info:
        pipeline.run(d, X)  # too few arguments: fails before any line runs
    err = info.value
    assert (err.loc.filename, err.loc.lineno) == (HERE, line_of("def two_params("))
    assert isinstance(err.__cause__, TypeError) and "`two_params`" in err.message


def divides(x):
    return 1.0 / x


def test_trace_lets_the_users_own_error_through():
    with pytest.raises(ZeroDivisionError):
        divides(0.0)
    with pytest.raises(ZeroDivisionError):
        adgen.trace(divides, 0.0)
    assert "0.5" in str(adgen.trace(divides, 2.0))


def test_every_entry_point_raises_only_adgen_errors_on_bad_calls(failing_rule):
    """A sweep: every API entry point, called wrong or on a failing derivative, raises an
    AdgenError (or the user's own error from running the function itself)."""
    d = {"w": np.ones(2)}
    entry_points = {
        "grad": lambda *a, **k: adgen.grad(with_default, wrt=(0, 1))(*a, **k),
        "value_and_grad": lambda *a, **k: adgen.value_and_grad(with_default)(*a, **k),
        "jacfwd": lambda *a, **k: adgen.jacfwd(with_default)(*a, **k),
        "jacrev": lambda *a, **k: adgen.jacrev(with_default)(*a, **k),
        "jacobian": lambda *a, **k: adgen.jacobian(with_default)(*a, **k),
        "differentiate": lambda *a, **k: adgen.differentiate(with_default).grad(*a, **k),
        "vjp": lambda *a, **k: adgen.vjp(with_default, *a, **k)[1](1.0),
        "jvp": lambda *a, **k: adgen.jvp(with_default, a, (np.ones(2),)),
    }
    calls = [((X, d), {}), ((X,), {"d": d, "scale": 3.0}), ((X, d, 1.0, 2.0), {}), ((), {})]
    for (name, entry), (args, kwargs) in itertools.product(entry_points.items(), calls):
        try:
            entry(*args, **kwargs)
        except adgen.AdgenError:
            continue
        except TypeError as exc:  # vjp and jvp take no keywords, as documented
            assert name in ("vjp", "jvp") and kwargs, (name, args, kwargs, exc)
            continue
        raise AssertionError(f"{name}{args, kwargs} did not fail")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="columns of code are Python 3.11+")
def test_columns_tell_apart_lambdas_whose_code_is_identical_but_for_their_place():
    # identical bytecode, different columns: each error points into its own lambda
    twins = (lambda s: (t := s) * t, lambda s: (t := s) * t)  # noqa: E731
    text = "    twins = (lambda s: (t := s) * t, lambda s: (t := s) * t)"
    columns = []
    for twin in twins:
        with pytest.raises(adgen.UnsupportedSyntaxError, match="`:=`") as info:
            adgen.grad(twin)(1.0)
        assert info.value.loc.lineno == line_of(text)
        columns.append(info.value.loc.col)
    first = text.index("(t := s)") + 1
    assert columns == [first, text.index("(t := s)", first) + 1]


def test_source_of_a_lambda_quotes_its_own_line():
    here = lambda s: np.tanh(s) * 3.0  # noqa: E731
    text = adgen.source(here)
    assert "np.tanh(s) * 3.0" in text
    assert f"line {line_of('here = lambda s: np.tanh(s) * 3.0')}" in text
    assert adgen.grad(here)(0.25) == pytest.approx(3.0 * (1.0 - np.tanh(0.25) ** 2), rel=1e-15)


def test_a_module_level_notebook_style_cell_with_imports(tmp_path):
    # a cell's last line is compiled alone (`single` mode): `np` is not known there as an
    # import, so Python 3.11+ loads `np.sin` as a method; the lambda is still found
    cell = textwrap.dedent(
        """\
        import numpy as np
        scale = 2.0
        out = adgen.grad(lambda x: np.sin(x) * 2.0)(0.0), adgen.grad(lambda x: np.sin(x) * 3.0)(0.0)
        """
    )
    name = "<soundness-cell>"
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
    tree = ast.parse(cell)
    namespace = {"adgen": adgen}
    try:
        exec(compile(ast.Module(tree.body[:2], []), name, "exec"), namespace)
        exec(compile(ast.Interactive(tree.body[2:]), name, "single"), namespace)
    finally:
        del linecache.cache[name]
    assert namespace["out"] == (2.0, 3.0)


def test_the_caret_stands_under_the_column_after_tabs_and_non_ascii_text(tmp_path):
    source = (
        "def make():\n"
        "\tñ = 'é…'; bad = lambda s: (t := s) * t\n"
        "\treturn bad\n"
    )  # fmt: skip
    module = load(tmp_path, "caret_after_accents", source)
    with pytest.raises(adgen.UnsupportedSyntaxError, match="`:=`") as info:
        adgen.grad(module.make())(1.0)
    err = info.value
    line = "\tñ = 'é…'; bad = lambda s: (t := s) * t"
    assert (err.loc.lineno, err.loc.col) == (2, len(line[: line.index("(t :=") + 1].encode()))
    shown, caret = str(err).splitlines()[1:3]
    assert shown == "    " + line.expandtabs()
    assert caret == " " * (4 + line.expandtabs().index("(t :=") + 1) + "^"


def test_lambdas_alike_but_for_where_they_jump_are_told_apart_in_a_notebook_cell():
    # `(a and b) or c` and `a and (b or c)` may compile to the same instructions, jumping to
    # different places; in a cell's last line (compiled alone) the method loads differ too
    cell = (
        "import numpy as np\n"
        "out = (adgen.grad(lambda s: (np.sin(s) * 0.0 and s) or s * 3.0)(1.0),"
        " adgen.grad(lambda s: np.sin(s) * 0.0 and (s or s * 3.0))(1.0))\n"
    )
    name = "<soundness-jumps>"
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
    tree = ast.parse(cell)
    namespace = {"adgen": adgen}
    try:
        exec(compile(ast.Module(tree.body[:1], []), name, "exec"), namespace)
        exec(compile(ast.Interactive(tree.body[1:]), name, "single"), namespace)
    finally:
        del linecache.cache[name]
    # 0.0 is false: the first gives s * 3.0, the second np.sin(s) * 0.0
    assert namespace["out"] == (3.0, 0.0)


# -- a list bound to a name, used as an index (found by a helper while extending calls) -----------
# A list display is lowered as a tuple atom; `x[idx]` then read it as x[0, 2] (one entry)
# instead of rows 0 and 2: the value and the derivative were both silently wrong.


def rows_by_a_named_list(x):
    idx = [0, 2]
    return np.sum(x[idx])


def entry_by_a_named_tuple(x):
    idx = (0, 2)
    return np.sum(x[idx]) * 2.0


def rows_by_a_named_list_in_a_loop(x):
    for i in range(2):
        idx = [i, 1]
        x = x[idx] * 1.0
    return np.sum(x)


def rows_by_a_named_list_and_a_column(x):
    idx = [2, 0]
    return np.sum(x[idx, 1] * x[idx, 1])


def index_passed_in(x, idx):
    return np.sum(x[idx])


def list_rebound_then_used_as_an_index(x, flip):
    idx = [0, 1]
    if flip:
        idx = [1, 0]
    return np.sum(x[idx] * np.arange(3.0))


@pytest.mark.parametrize(
    "fn, value, grad",
    [
        (rows_by_a_named_list, 24.0, [[1, 1, 1], [0, 0, 0], [1, 1, 1]]),
        (entry_by_a_named_tuple, 4.0, [[0, 0, 2], [0, 0, 0], [0, 0, 0]]),
        (rows_by_a_named_list_in_a_loop, 24.0, [[0, 0, 0], [2, 2, 2], [0, 0, 0]]),
        (rows_by_a_named_list_and_a_column, 7.0**2 + 1.0, [[0, 2, 0], [0, 0, 0], [0, 14, 0]]),
    ],
)
def test_a_list_bound_to_a_name_indexes_rows_as_in_python(fn, value, grad):
    x = np.arange(9.0).reshape(3, 3)
    assert fn(x) == value  # what Python computes
    out, g = adgen.value_and_grad(fn)(x)
    assert out == value
    np.testing.assert_array_equal(g, np.array(grad, dtype=float))
    out, tangent = adgen.jvp(fn, (x,), (np.ones((3, 3)),))
    assert out == value and tangent == np.sum(np.array(grad, dtype=float))


@pytest.mark.parametrize("idx", [[0, 2], (0, 2)])
def test_a_list_or_tuple_argument_as_an_index_is_refused(idx):
    x = np.arange(9.0).reshape(3, 3)
    with pytest.raises(adgen.UnsupportedSyntaxError, match="list or tuple: adgen does not know"):
        adgen.grad(index_passed_in)(x, idx)


def test_a_name_bound_to_two_lists_as_an_index_is_refused():
    with pytest.raises(adgen.UnsupportedSyntaxError, match="list picks rows"):
        adgen.grad(list_rebound_then_used_as_an_index)(np.ones((2, 3)), True)


def rows_after_an_early_return(x, flag):
    if flag:
        return np.sum(x)
    idx = [0, 2]
    return np.sum(x[idx] * x[idx])


def rows_in_a_while_loop(x):
    k = 0
    y = x
    while k < 1:
        k = k + 1
        idx = [0, 2]
        y = x[idx]
    return np.sum(y * y)


@pytest.mark.parametrize("fn", [rows_after_an_early_return, rows_in_a_while_loop])
def test_a_named_list_index_where_lowering_copies_its_binding(fn):
    """An early return (or a while loop's guards) makes lowering copy the statements after
    it into a branch: `idx = [0, 2]` is still its one binding, not refused as two (a false
    alarm the fuzzer found)."""
    x = np.arange(9.0).reshape(3, 3)
    args = (x, False) if fn is rows_after_an_early_return else (x,)
    value = fn(*args)
    assert value == np.sum(x[[0, 2]] ** 2)
    out, g = adgen.value_and_grad(fn)(*args)
    want = np.zeros((3, 3))
    want[[0, 2]] = 2 * x[[0, 2]]
    assert out == value
    np.testing.assert_array_equal(g, want)
    assert adgen.jvp(fn, args, (np.ones((3, 3)),) + (None,) * (len(args) - 1))[1] == np.sum(want)
