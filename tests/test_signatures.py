"""NumPy's own signatures where library code uses more of them (issue 34's corpus).

``np.sum(a, axis, dtype)`` and ``np.mean`` with ``dtype`` (positionally, as NumPy orders
them: SciPy's ``rosen`` sums with ``dtype=x.dtype``), ``np.reshape(..., order=)`` (statsmodels'
MNLogit), ``np.ravel(..., order="K")`` (scikit-learn's t-SNE) and ``np.asarray(..., order=,
copy=)``: each against its exact derivative, in both modes.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.special

import adgen
from adgen.rules import lookup as registry_lookup

A = np.arange(6.0).reshape(2, 3) / 7.0
# NumPy 2.3 gave its C functions readable signatures (np.concatenate, np.where...): before,
# adgen cannot tell which parameters they have, and refuses those its rules do not take
SIGNATURES_READABLE = np.lib.NumpyVersion(np.__version__) >= "2.3.0"
W = np.cos(np.arange(6.0)).reshape(2, 3)


def sum_in_float64(a):
    return np.sum(np.sum(a, 0, np.float64) * np.arange(3.0)) + np.mean(a, 1, np.float64)[1]


def sum_in_integers(a):
    return np.sum(np.sum(a * 10.0, axis=1, dtype=int)) * 1.0 + np.sum(a)


def reshaped_in_fortran_order(a):
    return np.sum(np.reshape(a, (3, 2), order="F") * W.reshape(3, 2))


def reshaped_in_the_layout(a):
    return np.sum(np.reshape(a.T, (6,), "A") * W.ravel())


def asarray_with_its_options(a):
    return np.sum(np.asarray(a, order="F", copy=True) * W)


@pytest.mark.parametrize(
    "f, grad",
    [
        (sum_in_float64, np.arange(3.0)[None, :] + np.array([[0.0], [1.0 / 3.0]])),
        (sum_in_integers, np.ones((2, 3))),  # the integer sum is piecewise constant
        (reshaped_in_fortran_order, np.reshape(np.ravel(W.reshape(3, 2), "F"), (2, 3), "F")),
        (reshaped_in_the_layout, np.reshape(W.ravel(), (3, 2), "F").T),
        (asarray_with_its_options, W),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_more_of_numpys_signature_has_the_exact_derivative(f, grad):
    np.testing.assert_allclose(adgen.grad(f)(A), grad, rtol=1e-13, atol=1e-15)
    v = np.sin(np.arange(6.0)).reshape(2, 3)
    assert np.isclose(adgen.jvp(f, (A,), (v,))[1], np.sum(grad * v), rtol=1e-13)


def test_a_fourth_positional_argument_of_np_sum_is_its_out_not_keepdims():
    def into_nothing(a):
        return np.sum(np.sum(a, 0, None, None) * np.arange(3.0))

    def into_a_buffer(a):
        buffer = np.zeros(3)
        return np.sum(np.sum(a, 0, None, buffer))

    np.testing.assert_allclose(adgen.grad(into_nothing)(A), np.tile(np.arange(3.0), (2, 1)))
    with pytest.raises(adgen.AdgenError, match=r"np\.sum with `out=` other than its default"):
        adgen.grad(into_a_buffer)(A)


def ufunc_options(a):
    b = np.exp(a, dtype=np.float64, casting="same_kind") + np.add(a, W, order="C", subok=True)
    return np.sum(b * np.cumsum(a, axis=1, dtype=np.float64)) + np.sum(np.copy(a, order="F"))


def clipped_with_numpy_21_names(a):
    return np.sum(np.clip(a, min=0.2, max=0.5) * W)


def defaults_passed_as_they_are(a):
    b = np.exp(a, out=None, where=True) * np.sum(a, 0, None, None)
    c = scipy.special.erf(a, out=None) + np.cumsum(a, axis=0, out=None)
    return np.sum(b * W + c) + np.median(a, overwrite_input=False) + np.mean(a, where=True)


def options_in_another_dtype(a):
    traced = np.trace(a[:, :2], dtype=np.float64) * 1.0
    stacked = np.stack([a, W], dtype=np.float64, casting="same_kind")
    return (
        traced
        + np.sum(np.concatenate([a, a * a], axis=1, dtype=np.float64) ** 2)
        + np.sum(stacked * stacked)
    )


def reductions_in_another_dtype(a):
    # dtype= of the reductions beside np.sum/np.mean: the reduction of the cast, as for them
    spread = np.var(a, axis=0, dtype=np.float64) @ np.std(a, axis=0, ddof=1, dtype=np.float64)
    return (
        spread
        + np.prod(a, dtype=np.float64)
        + np.nansum(a * a, dtype=np.float64)
        + np.nanmean(np.sin(a), dtype=np.float64)
        + np.nanstd(a, dtype=np.float64)
        + np.nanvar(a, axis=1, dtype=np.float64)[0]
        + np.nanprod(a + 1.0, dtype=np.float64)
    )


def leave_to_overwrite_the_input(a):
    square = a[:, :2] @ a[:, :2].T + 2.0 * np.eye(2)
    inverse = scipy.linalg.inv(square.copy(), overwrite_a=True, check_finite=False)
    return np.sum(inverse) + np.sum(np.array(a, order="F", subok=True, like=None) * W)


@pytest.mark.parametrize(
    "fn",
    [
        ufunc_options,
        clipped_with_numpy_21_names,
        defaults_passed_as_they_are,
        options_in_another_dtype,
        reductions_in_another_dtype,
        leave_to_overwrite_the_input,
    ],
)
def test_options_that_do_not_change_the_derivative(fn):
    if fn in (options_in_another_dtype, leave_to_overwrite_the_input) and not SIGNATURES_READABLE:
        # (NumPy < 2.3: refused by the parameter's name; SciPy < 1.16's inv, read as
        # installed, by the LAPACK function it picks when it runs)
        words = "a parameter of the function|calling a computed value"
        with pytest.raises(adgen.AdgenError, match=words):
            adgen.grad(fn)(A)
        return
    h = 1e-6
    expected = np.zeros_like(A)
    for i in np.ndindex(A.shape):
        e = np.zeros_like(A)
        e[i] = h
        expected[i] = (fn(A + e) - fn(A - e)) / (2 * h)
    np.testing.assert_allclose(adgen.grad(fn)(A), expected, rtol=1e-6, atol=1e-9)
    direction = np.cos(np.arange(6.0)).reshape(2, 3)
    np.testing.assert_allclose(
        adgen.jvp(fn, (A,), (direction,))[1], np.sum(expected * direction), rtol=1e-6
    )


def test_a_trace_in_float32_is_the_trace_of_the_cast():
    def traced(a):
        return np.trace(a[:, :2], dtype=np.float32) * 1.0

    np.testing.assert_array_equal(adgen.grad(traced)(A), np.eye(2, 3))


def masked(a):
    return np.sum(np.exp(a, where=a > 0.3))


def started(a):
    return np.amax(a, initial=0.0)


def summed_where(a):
    return np.sum(a, where=a > 0.3)


def into_a_buffer(a):
    buffer = np.empty_like(a)
    return np.sum(np.cumsum(a, axis=1, out=buffer))


def sorted_by_field(a):
    return np.sum(np.sort(a, order="x"))


def logm_with_its_error(a):
    return np.sum(scipy.linalg.logm(a[:, :2] @ a[:, :2].T + np.eye(2), disp=False)[0])


@pytest.mark.parametrize(
    "fn, words",
    [
        (masked, "np.exp with `where=` other than its default, True"),
        (started, "np.amax with `initial=` (a parameter of the function that adgen takes only "
         "when it is left out)"),
        (summed_where, "np.sum with `where=` (a parameter of the function that adgen takes "
         "only when it is left out)"),
        (into_a_buffer, "np.cumsum with `out=` other than its default, None"),
        (sorted_by_field, "np.sort with `order=` other than its default, None"),
        # (SciPy < 1.18: its default True, "takes only when it is left out"; 1.18 deprecates
        # it behind a marker: "its rule does not take")
        (logm_with_its_error, "scipy.linalg.logm with `disp=` (a parameter of the function "
         "that adgen"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)  # fmt: skip
def test_a_parameter_the_rule_does_not_take_is_refused_by_name(fn, words):
    if fn is logm_with_its_error and registry_lookup(scipy.linalg.logm) is None:
        pytest.skip("scipy.linalg's rules need SciPy >= 1.16")
    with pytest.raises(adgen.AdgenError) as info:
        adgen.grad(fn)(A)
    text = str(info.value)
    line = fn.__code__.co_firstlineno + (2 if fn is into_a_buffer else 1)
    assert f"adgen does not differentiate {words}" in text, text
    assert f"test_signatures.py:{line}:" in text, text
    assert "unexpected keyword" not in text and "TypeError" not in text


# -- every parameter of every registered function ----------------------------------------------
#
# For each NumPy and SciPy function with a rule, every parameter of the function itself (its
# ``inspect.signature``; a ufunc's keywords; a SciPy distribution's shapes, ``loc`` and
# ``scale``) is either taken by the rule, or read by lowering (adgen.rules.registry.own_arguments):
# at the same position under the rule's name, left out where it changes nothing (``order=``
# of a layout, ``casting=``, ``subok=``, ``overwrite_a=``, or the parameter's default passed
# as it is), a cast (``dtype=`` of ufuncs and of functions summing or stacking in it), or
# refused naming it and the function. What cannot be checked so is in the tables below.

# functions whose signature hides parameters in ``*args`` / ``**kwargs``: what those take
HIDDEN = {
    "np.clip": "**kwargs: np.minimum's ufunc keywords, refused naming them",
    "np.einsum": "**kwargs: dtype, order, casting, refused naming them (the rule takes optimize)",
    "np.gradient": "*varargs: the spacings, the rule's spacing0 to spacing3",
    "np.atleast_1d": "*arys: one array a call, as the rule takes it (more: refused)",
    "np.atleast_2d": "*arys: one array a call, as the rule takes it (more: refused)",
    "np.atleast_3d": "*arys: one array a call, as the rule takes it (more: refused)",
    "np.pad": "**kwargs: the mode's options; the rule takes constant_values, others refused",
    "scipy.spatial.distance.pdist": "**kwargs: the metric's options, the rule's p, V, VI, w",
    "scipy.spatial.distance.cdist": "**kwargs: the metric's options, the rule's p, V, VI, w",
}
# parameters whose default in the signature is not what leaving them out means: refused at
# any value (np.array's ndmax=0 asks for a 0-d array)
SIGNATURE_DEFAULT_DIFFERS = {"ndmax"}
# parameters no call can pass as the rule takes it: (function, parameter) -> why
UNACCOUNTED: dict[tuple[str, str], str] = {}
# parameters lowering reads into another call before the rule sees the call: (function,
# parameter) -> how (np.array(x, dtype, copy=..., order=...) is np.asarray's call on NumPy 2)
READ_BY_LOWERING = {
    ("np.array", name): "np.asarray(x, dtype, order=..., copy=True)"
    for name in ("dtype", "copy", "order")
}
# (lfilter with an initial state: read as adgen.rules.signal.lfilter_with_state)
READ_BY_LOWERING[("scipy.signal.lfilter", "zi")] = "the filter and the state's response"


def _own_parameters():
    """(spelling, function, primitive, parameters of the function the rule does not take by
    name) for every NumPy and SciPy function with a rule; and the functions hiding some."""
    from adgen.rules import registered, registry
    from adgen.rules.namespace import spelling

    found, hidden = [], set()
    for fn, prim in registered():
        try:
            path = spelling(fn)
        except ValueError:
            continue
        if not path.startswith(("np.", "scipy.")):
            continue
        own = registry.own_signature(fn)
        if own is None and not SIGNATURES_READABLE:
            continue  # (NumPy < 2.3: its parameters not known, those the rule lacks refused)
        assert own is not None, f"{path}: no readable signature"
        params = list(own.parameters.values())
        taken = {p.name for p in prim.params}
        if any(p.kind is p.VAR_KEYWORD for p in prim.params):
            continue  # (a call run as written: it takes whatever the function takes)
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            hidden.add(path)
        missing = [
            p
            for p in params
            if p.name not in taken and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        found.append((path, fn, prim, own, missing))
    return found, hidden


def test_every_parameter_of_every_registered_function_is_taken_or_refused_by_name():
    from adgen.rules import registry

    found, hidden = _own_parameters()
    assert hidden == set(HIDDEN)
    assert len(found) > 300  # (NumPy's and SciPy's functions with rules, reached)
    unaccounted, refused, accepted = {}, 0, 0
    for path, _, prim, own, missing in found:
        ordered = [
            p
            for p in own.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        theirs = [p for p in prim.params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        for param in missing:
            at = ordered.index(param) if param in ordered else len(theirs)
            if at < len(theirs) and (
                param.kind is param.POSITIONAL_ONLY or theirs[at].name not in own.parameters
            ):
                continue  # the rule's name for the same position (np.round's `a`: its `x`)
            if param.default is param.empty:
                unaccounted[(path, param.name)] = "required, and the rule does not take it"
                continue
            if param.name in SIGNATURE_DEFAULT_DIFFERS:
                with pytest.raises(registry.NotTaken):
                    registry.own_option(prim, param, (True, param.default))
            elif param.default is not np._NoValue:  # the default, passed as it is: left out
                assert registry.own_option(prim, param, (True, param.default)) == "drop", path
            try:  # a value the code decides when it runs
                how = registry.own_option(prim, param, (False, None))
            except registry.NotTaken as exc:
                refused += 1
                assert exc.args[0] == param.name
                assert exc.args[1].startswith(f"{prim.name} with `{param.name}=` "), exc.args
                assert f"`{param.name}=`" in exc.args[2]
            else:
                accepted += 1
                assert how in ("drop", "cast")
                assert param.name in (
                    "order",
                    "casting",
                    "subok",
                    "dtype",
                ) or param.name.startswith("overwrite_")
    assert unaccounted == UNACCOUNTED
    assert refused > 500 and accepted > 500  # (the ufuncs' keywords, each way)


def test_a_hidden_keyword_the_rule_does_not_take_is_refused_by_name():
    def einsum_in_float32(a):
        return np.sum(np.einsum("ij,ij->i", a, W, dtype=np.float32))

    def padded_with_edges(a):
        return np.sum(np.pad(a, 1, mode="maximum", stat_length=2))

    with pytest.raises(adgen.AdgenError, match=r"np\.einsum with `dtype=`") as info:
        adgen.grad(einsum_in_float32)(A)
    assert "test_signatures.py:" in str(info.value)
    with pytest.raises(adgen.AdgenError, match=r"np\.pad with `stat_length=`"):
        adgen.grad(padded_with_edges)(A)


def _with_keywords(call: str, spelled: str, words: dict[str, str]) -> str | None:
    """``call`` (an example's) with ``words`` passed to its call of ``spelled``; None if the
    example calls it in no way that can take them."""
    import ast

    tree = ast.parse(call, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == spelled:
            given = {k.arg for k in node.keywords}
            if None in given or any(isinstance(a, ast.Starred) for a in node.args):
                return None
            for key, value in words.items():
                if key not in given:
                    node.keywords.append(
                        ast.keyword(arg=key, value=ast.parse(value, mode="eval").body)
                    )
            return ast.unparse(tree)
    return None


def _example_calls():
    """For each NumPy or SciPy function with an example and parameters its rule does not take
    by name: (spelling, example case, its call with each such parameter at its default, its call
    with the first one a rule cannot take at another value, and that parameter)."""
    import dataclasses

    from registry_cases import _from_example

    from adgen.rules import registry

    out = []
    for path, fn, prim, own, missing in _own_parameters()[0]:
        if not prim.differentiable or not prim.examples:
            continue
        ordered = [p for p in own.parameters.values() if p.kind is not p.KEYWORD_ONLY]
        case = _from_example(prim, prim.examples[0])[0]
        defaults, refused = {}, None
        for param in missing:
            if param.kind is param.POSITIONAL_ONLY or param.default in (param.empty, np._NoValue):
                continue
            if param in ordered and ordered.index(param) < len(prim.params):
                continue  # (where the call may pass it by position)
            if param.name in SIGNATURE_DEFAULT_DIFFERS or (
                param.name == "keepdims" and getattr(fn, "signature", None)
            ):  # (np.matvec refuses keepdims=False itself: its core dimensions differ)
                continue
            text = repr(param.default)
            try:
                if not registry._same_default(eval(text, {"np": np}), param.default):
                    continue
            except Exception:
                continue
            defaults[param.name] = text
            if refused is None and (path, param.name) not in READ_BY_LOWERING:
                try:
                    registry.own_option(prim, param, (False, None))
                except registry.NotTaken:
                    refused = param.name
        if "dtype" in defaults:  # (NumPy refuses a ufunc both, even None and None)
            defaults.pop("signature", None)
        if not defaults:
            continue
        plain = _with_keywords(case.call, path, {})
        given = _with_keywords(case.call, path, defaults)
        other = (
            None
            if refused is None
            else _with_keywords(case.call, path, {refused: "('not', 'the default')"})
        )
        if plain is None or given is None:
            continue
        out.append((path, dataclasses.replace(case, call=plain), given, other, refused))
    return out


def test_every_example_takes_its_functions_parameters_at_their_defaults_and_refuses_others():
    """Each function's first registered example, called with every parameter of the function
    its rule does not take by name passed at its default: the same value and derivative as
    without them; and with one such parameter at another value: refused naming it and the
    function at the line of the call."""
    import importlib
    import tempfile
    from pathlib import Path

    from source_modules import write_module

    from adgen.testing import _cotangent_like

    calls = _example_calls()
    assert len(calls) > 100
    lines = [
        "import math",
        "import numpy as np",
        "import scipy.linalg",
        "import scipy.special",
        "import scipy.signal",
        "import scipy.stats",
        "import scipy.spatial.distance",
        "from adgen import runtime as rt",
        "",
    ]
    for k, (_, case, given, other, _) in enumerate(calls):
        params = ", ".join(n for n, _ in case.args)
        lines += [f"def plain_{k}({params}):", f"    return {case.call}", ""]
        lines += [f"def given_{k}({params}):", f"    return {given}", ""]
        if other is not None:
            lines += [f"def other_{k}({params}):", f"    return {other}", ""]
    with tempfile.TemporaryDirectory() as folder:
        module = write_module(Path(folder), "signature_calls", "\n".join(lines))
        checked, refused, rejected = 0, 0, 0
        as_written: list[str] = []
        for k, (path, case, given, other, param) in enumerate(calls):
            args = case.draw_args()
            try:  # (NumPy itself rejects some of its defaults passed explicitly: a
                getattr(module, f"given_{k}")(*args)  # multi-output ufunc's out=None in 2.2)
            except (TypeError, ValueError):
                rejected += 1
                continue
            out, pullback = adgen.vjp(getattr(module, f"plain_{k}"), *args)
            out_given, pullback_given = adgen.vjp(getattr(module, f"given_{k}"), *args)
            seed = _cotangent_like(np.random.default_rng(k), out)
            for a, b in zip(_leaves(out), _leaves(out_given), strict=True):
                np.testing.assert_allclose(b, a, rtol=1e-12, err_msg=given)
            for a, b in zip(_leaves(pullback(seed)), _leaves(pullback_given(seed)), strict=True):
                np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14, err_msg=given)
            checked += 1
            if other is None:
                continue
            try:  # (transformed, not run: NumPy would refuse it)
                _ = adgen.grad(getattr(module, f"other_{k}")).source
            except adgen.AdgenError as info:
                text = str(info)
                assert f"with `{param}=`" in text and path.split(".")[-1] in text, (other, text)
                assert "signature_calls.py:" in text, text
                assert "unexpected keyword" not in text and "multiple values" not in text
                refused += 1
                continue
            # no differentiated value reaches the call (`np.ndarray((2, 3), offset=...)`): it
            # runs as written, and NumPy judges the value as it does without adgen
            with pytest.raises((TypeError, ValueError, adgen.AdgenError)):
                adgen.grad(getattr(module, f"other_{k}"))(*args)
            as_written.append(other)
        importlib.invalidate_caches()
    assert checked + rejected == len(calls) and refused > 100
    assert len(as_written) <= 5, as_written
    assert rejected <= (0 if SIGNATURES_READABLE else 30)  # (NumPy 2.4: none rejected)


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def given_twice(a):
    return np.sum(a, 0, axis=0)


def out_given_twice(a):
    return np.sum(np.exp(a, a * 0.0, out=None))


@pytest.mark.parametrize(
    ("fn", "param"), [(given_twice, "axis"), (out_given_twice, "out")], ids=["axis", "out"]
)
def test_a_parameter_given_twice_is_refused_as_python_refuses_it(fn, param):
    # not blamed on adgen's rule: Python raises TypeError at this call too
    with pytest.raises(TypeError):
        fn(A)
    if param == "out" and not SIGNATURES_READABLE:
        pytest.skip("NumPy < 2.3 does not say whether a ufunc's out= may be positional")
    with pytest.raises(adgen.AdgenError, match=r"test_signatures\.py:\d+") as info:
        adgen.grad(fn)(A)
    said = str(info.value)
    assert f"its parameter `{param}` twice, by position and by name" in said
    assert "Python raises TypeError here too" in said
    assert "multiple values" not in said and "rule" not in said
