"""Python forms real numerical code uses (issue 18, item 3), in both modes with exact answers.

``x is None`` / ``is not None`` (decided when transforming where adgen knows the value, else
tested when the program runs), ``isinstance``, generator expressions given to ``max``,
``min``, ``tuple``, ``any``, ``all``, ``sorted`` or to a function of the user's that iterates
them once, ``max``/``min`` of several values, imports inside the function, unpacking into
subscripts (``(y[0], y[1]) = ...``), and tuples bound to a name that a block rebinds
(``for pair in zip(u, v):``, a state tuple carried through a loop). Each derivative is
checked against its analytic value in reverse mode (``adgen.grad``) and forward mode
(``adgen.jvp``), against central differences (``check_grads``) for the larger programs, and
to second order where adgen supports it; what stays refused is refused with a clear message.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import adgen
from adgen.testing import check_grads


def both_modes(f: Any, args: tuple[Any, ...], wrt: int, expected: Any) -> None:
    """Reverse mode gives ``expected`` (the gradient w.r.t. argument ``wrt``); forward mode
    in a random direction ``t`` gives ``<expected, t>``; both give ``f``'s value."""
    got = adgen.grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-12, atol=1e-12)
    rng = np.random.default_rng(3)
    tangent = rng.standard_normal(np.shape(args[wrt]))
    if not np.ndim(args[wrt]):
        tangent = float(tangent)
    tangents = [_zeros(a) for a in args]
    tangents[wrt] = tangent
    out, out_dot = adgen.jvp(f, args, tangents)
    assert out == pytest.approx(f(*args), rel=1e-12)
    assert out_dot == pytest.approx(float(np.sum(np.asarray(expected) * tangent)), rel=1e-10)


def _zeros(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_zeros(v) for v in value)
    if value is None:
        return None
    return np.zeros_like(value) if np.ndim(value) else 0.0


def _code(source: str) -> str:
    """Generated source without its comments (which quote the user's lines)."""
    return "\n".join(line.split("#")[0] for line in source.splitlines())


# -- x is None -------------------------------------------------------------------------------


def data_loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def penalty(w, scale=None):
    if scale is None:
        scale = 0.5
    return scale * np.sum(w * w)


def training_loss(w, x, y, l2=None, mask=None):
    """A loss with optional regularisation and an optional mask of the weights."""
    if mask is not None:
        w = w * mask
    loss = data_loss(w, x, y)
    if l2 is not None:
        loss = loss + l2 * penalty(w)
    return loss + penalty(w, 0.1) if l2 is None else loss


def _regression_data() -> tuple[Any, Any, Any]:
    rng = np.random.default_rng(0)
    return rng.standard_normal(3) * 0.5, rng.standard_normal((5, 3)), rng.standard_normal(5)


def _training_gradient(w, x, y, l2=None, mask=None):
    m = np.ones_like(w) if mask is None else mask
    v = w * m
    t = np.tanh(x @ v)
    g = (2.0 / len(y)) * x.T @ ((t - y) * (1 - t**2))
    g = g + (2 * 0.1 * v if l2 is None else l2 * v)
    return g * m


@pytest.mark.parametrize("l2", [None, 0.3])
@pytest.mark.parametrize("masked", [False, True])
def test_training_loss_with_optional_regularisation_and_mask(l2, masked):
    w, x, y = _regression_data()
    mask = np.array([1.0, 0.0, 2.0]) if masked else None
    expected = _training_gradient(w, x, y, l2, mask)
    g = adgen.grad(training_loss)(w, x, y, l2, mask)
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-14)
    t = np.array([0.3, -1.0, 0.7])
    zero = np.zeros_like
    out, dot = adgen.jvp(
        training_loss,
        (w, x, y, l2, mask),
        (t, zero(x), zero(y), None if l2 is None else 0.0, None if mask is None else zero(w)),
    )
    assert out == pytest.approx(training_loss(w, x, y, l2, mask), rel=1e-12)
    assert dot == pytest.approx(float(expected @ t), rel=1e-10)
    check_grads(training_loss, w, x, y, l2, mask, wrt=[0])


def test_is_none_of_a_default_argument_is_decided_when_transforming():
    w, x, y = _regression_data()
    # l2 and mask are parameters of the function differentiated: tested when it runs; the
    # `scale is None` of the inlined helper is decided (no test in the generated code)
    code = _code(adgen.source(training_loss))
    assert "scale is None" not in code and "l2 is not None" in code
    assert adgen.grad(training_loss)(w, x, y) == pytest.approx(_training_gradient(w, x, y))

    def regularised(w):
        return penalty(w) + penalty(w, 2.0)

    both_modes(regularised, (w,), 0, w + 4.0 * w)
    assert " is " not in _code(adgen.source(regularised))


def squares(w, b=None):
    z = np.sin(w)
    if z is None or b is not None:
        return np.sum(z) + undefined_on_this_path(b)  # noqa: F821
    return np.sum(z * z)


def test_is_none_of_a_computed_value_is_false_when_transforming():
    def f(w):
        return squares(w)  # z is an array or a number, b is None: one branch is read

    w = np.array([0.2, -0.4])
    both_modes(f, (w,), 0, 2 * np.sin(w) * np.cos(w))
    with pytest.raises(adgen.UnresolvedNameError, match="undefined_on_this_path"):
        adgen.grad(squares)(w, 1.0)  # b a parameter: tested when running, both branches read


def maybe_sine(x, c):
    if c <= 0:
        return None
    return np.sin(x)


def test_is_none_of_a_name_bound_on_several_paths_is_tested_when_running():
    # what made such a name last (np.sin) says nothing of what it holds on the path taken
    def assigned_in_a_branch(x, c):
        y = None
        if c > 0:
            y = np.sin(x)
        if y is None:
            return x * 2.0
        return y

    def returned_from_branches(x, c):
        y = maybe_sine(x, c)
        return x * 2.0 if y is None else y

    def conditional_expression(x, c):
        y = None if c <= 0 else np.sin(x)
        return x * 2.0 if y is None else y

    for f in (assigned_in_a_branch, returned_from_branches, conditional_expression):
        both_modes(f, (1.0, -1.0), 0, 2.0)
        both_modes(f, (1.0, 1.0), 0, math.cos(1.0))


def test_is_none_second_order():
    def f(w, l2=None):
        loss = np.sum(np.sin(w) ** 2)
        if l2 is not None:
            loss = loss + l2 * np.sum(w**4)
        return loss

    w = np.array([0.3, -0.8])
    h = adgen.hessian(f)(w)
    np.testing.assert_allclose(h, np.diag(2 * np.cos(2 * w)), rtol=1e-12, atol=1e-14)
    h2 = adgen.hessian(f)(w, 0.5)
    np.testing.assert_allclose(h2, np.diag(2 * np.cos(2 * w) + 6 * w**2), rtol=1e-12)


_DEFAULT = object()
_OTHER = object()


def scaled_by_mode(x, mode=_DEFAULT):
    if mode is _DEFAULT:
        return x * 2.0
    return x * 3.0


def test_is_of_a_sentinel_object_is_decided_when_transforming():
    def f(x):
        return scaled_by_mode(x) + scaled_by_mode(x, _OTHER)

    both_modes(f, (1.0,), 0, 5.0)
    assert " is " not in _code(adgen.source(f))


def test_is_between_two_computed_values_follows_the_copies():
    """``b = a`` is one object (True), a second ``np.sin(w)`` another (False): as Python
    has them (see :mod:`adgen.frontend.lower.identities`)."""

    def f(w):
        a = np.sin(w)
        b = a
        c = np.sin(w)
        return (np.sum(a) if a is b else 0.0) + (0.0 if a is c else np.sum(c * c))

    w = np.array([0.5, 1.5])
    np.testing.assert_allclose(adgen.grad(f)(w), np.cos(w) + 2 * np.sin(w) * np.cos(w))


def test_is_between_values_a_loop_bound_is_refused():
    def f(w, n):
        a = np.sin(w)
        b = a
        for _ in range(n):
            b = b * 2.0
        return np.sum(a) if a is b else 0.0

    with pytest.raises(adgen.UnsupportedSyntaxError, match="`is` between values") as info:
        adgen.grad(f)(np.ones(2), 2)
    assert "x is None" in info.value.hint


# -- isinstance ---------------------------------------------------------------------------------


def batch_loss(data, w):
    """Accepts the batch as an array or as a list of rows."""
    if isinstance(data, (list, tuple)):
        data = np.stack(data)
    return np.sum(np.tanh(data @ w))


def batch_loss_rows(data, w):
    rows = np.stack(data) if isinstance(data, (list, tuple)) else data
    return np.sum(np.tanh(rows @ w))


def test_loss_accepting_a_list_or_an_array():
    w = np.array([0.5, -0.2])
    d = np.array([[1.0, 2.0], [0.3, 0.1], [-0.4, 0.8]])
    expected = d.T @ (1 - np.tanh(d @ w) ** 2)
    for data in (d, [row for row in d], tuple(row for row in d)):
        for f in (batch_loss, batch_loss_rows):
            g = adgen.grad(f, wrt=1)(data, w)
            np.testing.assert_allclose(g, expected, rtol=1e-12)
        both_modes(batch_loss_rows, (data, w), 1, expected)
    both_modes(batch_loss, (d, w), 1, expected)
    # the rows of a list, differentiated: each row gets its own gradient
    g = adgen.grad(batch_loss_rows)([d[0], d[1]], w)
    assert isinstance(g, list)
    np.testing.assert_allclose(np.stack(g), np.outer(1 - np.tanh(d[:2] @ w) ** 2, w))
    # `data = np.stack(data)`: the list argument is one name holding a tuple, then an array
    with pytest.raises(adgen.NonDifferentiableError, match="tuple of differentiated"):
        adgen.grad(batch_loss)([d[0], d[1]], w)


def total(x):
    if isinstance(x, list):
        return x[0] * x[1]
    if isinstance(x, tuple):
        return x[0] - x[1]
    return np.sum(x * x)  # an array or a number


def test_isinstance_of_displays_arrays_and_numbers_inlined():
    def f(a):
        return total([a, 3.0]) + total((a, a * a)) + total(np.array([a, 1.0])) + total(np.sin(a))

    a = 0.7
    # 3a + (a - a^2) + (a^2 + 1) + sin(a)^2
    both_modes(f, (a,), 0, 3.0 + (1 - 2 * a) + 2 * a + 2 * math.sin(a) * math.cos(a))


def test_isinstance_of_a_scalar_parameter_is_tested_when_running():
    def scaled(x, s=2.0):
        if isinstance(s, (list, np.ndarray)):
            return x * np.sum(s)
        return x * s

    both_modes(scaled, (1.5, 3.0), 0, 3.0)
    both_modes(scaled, (1.5, np.array([1.0, 2.0])), 0, 3.0)
    both_modes(scaled, (1.5, np.array([1.0, 2.0])), 1, np.array([1.5, 1.5]))


def test_isinstance_of_a_result_is_decided_by_the_arguments_kinds():
    def f(x):
        y = np.sin(x)
        return np.sum(x) if isinstance(y, float) else np.sum(y)  # (np.float64 is a float)

    assert adgen.grad(f)(1.0) == 1.0  # np.sin of a float: a NumPy float, a float
    np.testing.assert_allclose(adgen.grad(f)(np.array([0.5, 1.0])), np.cos([0.5, 1.0]))


def test_isinstance_adgen_cannot_decide_is_refused():
    def f(x):
        y = np.sin(x) if x > 0.5 else 2.0 * x  # a NumPy float or a float: the data decide
        return x if isinstance(y, np.float64) else y

    with pytest.raises(adgen.UnsupportedSyntaxError, match="`isinstance` of a value whose type"):
        adgen.grad(f)(1.0)


# -- generator expressions, max and min ---------------------------------------------------------


def multiclass_hinge(W, x, label):
    """The max-margin loss of a linear classifier: max(0, max_{j != y} s_j - s_y + 1)."""
    s = W @ x
    return max(0.0, max(s[j] - s[label] + 1.0 for j in range(len(s)) if j != label))


def _hinge_gradient(W, x, label):
    s = W @ x
    others = [j for j in range(len(s)) if j != label]
    j = max(others, key=lambda k: s[k])
    g = np.zeros_like(W)
    if s[j] - s[label] + 1.0 > 0.0:
        g[j] += x
        g[label] -= x
    return g


@pytest.mark.parametrize("label", [0, 2])
def test_max_margin_loss(label):
    rng = np.random.default_rng(5)
    W, x = rng.standard_normal((4, 3)), rng.standard_normal(3)
    both_modes(lambda W: multiclass_hinge(W, x, label), (W,), 0, _hinge_gradient(W, x, label))
    check_grads(multiclass_hinge, W, x, label, wrt=[0, 1])

    def with_constant_label(W, x):  # the condition j != 1 is decided: the items are unrolled
        return multiclass_hinge(W, x, 1)

    both_modes(lambda W: with_constant_label(W, x), (W,), 0, _hinge_gradient(W, x, 1))


def test_max_and_min_of_several_values_and_of_a_list():
    def f(x):
        big = max(x[0] * x[1], x[1] ** 2, np.sin(x[2]))  # the second
        small = min([x[0], x[1] * 3.0])  # the first
        return big + 2.0 * small

    x = np.array([0.5, 1.5, 0.3])
    both_modes(f, (x,), 0, np.array([2.0, 3.0, 0.0]))
    h = adgen.hessian(f)(x)
    np.testing.assert_allclose(h, np.diag([0.0, 2.0, 0.0]))


def test_max_and_min_of_a_generator_over_an_array_second_order():
    def largest(x):  # the items a list built when running
        return max(x[i] ** 2 * x[0] for i in range(len(x)))

    def smallest(x):
        return min(np.sin(v) for v in x)

    x = np.array([0.5, -2.0, 1.0])  # largest: item 1, x1^2 x0; smallest: sin(x1)
    both_modes(largest, (x,), 0, np.array([4.0, -2.0, 0.0]))
    np.testing.assert_allclose(adgen.hessian(largest)(x), [[0, -4, 0], [-4, 1, 0], [0, 0, 0]])
    both_modes(smallest, (x,), 0, np.array([0.0, np.cos(-2.0), 0.0]))
    np.testing.assert_allclose(adgen.hessian(smallest)(x), np.diag([0.0, -np.sin(-2.0), 0.0]))


def test_max_of_ties_splits_the_derivative_like_np_max():
    def f(a, b):
        return max(a, b, a) + min(a * 1.0 for _ in range(2))

    # max of (a, a, a): three ties, each 1/3; min of (a, a): each 1/2
    g = adgen.grad(f, wrt=(0, 1))(2.0, 2.0)
    assert g == pytest.approx((2.0 / 3.0 + 1.0, 1.0 / 3.0))
    np.testing.assert_allclose(adgen.grad(lambda v: np.max(v))(np.full(3, 2.0)), [1 / 3] * 3)


def test_max_over_the_rows_of_an_array():
    def f(X):
        return max(np.sum(r * r) for r in X)

    X = np.array([[1.0, 2.0], [0.5, 0.1], [-3.0, 0.0]])
    both_modes(f, (X,), 0, np.array([[0.0, 0.0], [0.0, 0.0], [-6.0, 0.0]]))


def test_tuple_of_a_generator_then_unpacked():
    def f(xs, w):
        a, b, c = tuple(np.tanh(w * x) for x in xs)
        return a * b + c

    xs, w = [0.5, -1.0, 2.0], 0.7
    t = [np.tanh(w * x) for x in xs]
    d = [(1 - ti**2) * x for ti, x in zip(t, xs)]
    both_modes(f, (xs, w), 1, d[0] * t[1] + t[0] * d[1] + d[2])
    g = adgen.grad(f)(xs, w)
    assert isinstance(g, list) and len(g) == 3


SIZES = (3, 1, 2)


def picked(x, sizes=SIZES):
    order = sorted(s for s in sizes)
    if all(s > 0 for s in sizes) and not any(s > 5 for s in sizes):
        return x[order[0]] * x[order[2]]
    return x[0]


def test_any_all_and_sorted_of_values_known_when_transforming():
    def f(x):
        return picked(x)  # sizes: the default, known when transforming

    x = np.array([1.0, 2.0, 3.0, 4.0])
    both_modes(f, (x,), 0, np.array([0.0, 4.0, 0.0, 2.0]))
    # sizes an argument: tested when running
    assert adgen.grad(picked)(x, SIZES).tolist() == [0.0, 4.0, 0.0, 2.0]
    code = _code(adgen.source(f))
    assert "any(" not in code and "sorted(" not in code


def test_any_of_values_known_only_when_running():
    def f(x):
        if any(v > 1.0 for v in x):
            return np.sum(x * x)
        return np.sum(x)

    both_modes(f, (np.array([0.5, 2.0]),), 0, np.array([1.0, 4.0]))
    both_modes(f, (np.array([0.5, 0.2]),), 0, np.array([1.0, 1.0]))


def sum_of_squares(values):
    s = 0.0
    for v in values:
        s = s + v * v
    return s


def test_a_generator_given_to_a_function_that_iterates_it_once():
    def f(x):
        return sum_of_squares(x[i] * np.cos(x[i]) for i in range(3))

    x = np.array([0.3, 1.2, -0.4])
    u = x * np.cos(x)
    both_modes(f, (x,), 0, 2 * u * (np.cos(x) - x * np.sin(x)))


def twice_iterated(values):
    return sum(values) + sum(values)  # the second sum of a generator is 0 in Python


def stacked_generator(x):
    return np.sum(np.stack(x[i] for i in range(2)))


def array_of_generator(x):
    return np.sum(np.array(x[i] for i in range(2)))  # an object array in NumPy


def generator_iterated_twice(x):
    return twice_iterated(x[i] for i in range(2))


def tuple_of_rows(x):
    return np.sum(tuple(v for v in x))


@pytest.mark.parametrize(
    ("f", "match"),
    [
        (stacked_generator, "NumPy's functions take sequences"),
        (array_of_generator, "NumPy's functions take sequences"),
        (generator_iterated_twice, "takes each item once"),
    ],
)
def test_generators_adgen_cannot_read_as_a_list_are_refused(f, match):
    with pytest.raises(adgen.UnsupportedSyntaxError, match=match) as info:
        adgen.grad(f)(np.ones(2))
    assert "list comprehension" in info.value.hint


def test_a_tuple_of_rows_given_to_a_numpy_function_is_read_as_a_list():
    """(Refused before issue 34: NumPy reads a tuple and a list of rows alike.)"""
    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    np.testing.assert_allclose(adgen.grad(tuple_of_rows)(x), np.ones((2, 2)))
    assert adgen.jvp(tuple_of_rows, (x,), (np.full((2, 2), 0.5),))[1] == 2.0


def test_a_generator_kept_in_a_name_is_refused():
    def f(x):
        g = (v * 2.0 for v in x)
        return sum(g)

    with pytest.raises(adgen.UnsupportedSyntaxError, match="generator expressions here"):
        adgen.grad(f)(np.ones(2))


# -- imports inside the function ---------------------------------------------------------------


def logistic_loss(w, x, y):
    import math as m

    import numpy as onp
    from scipy import special

    z = x @ w
    return -onp.mean(onp.log(special.expit(y * z))) * m.e / math.e


def test_imports_inside_the_function():
    rng = np.random.default_rng(2)
    w, x = rng.standard_normal(3), rng.standard_normal((6, 3))
    y = np.sign(rng.standard_normal(6))
    p = 1.0 / (1.0 + np.exp(-y * (x @ w)))
    expected = -x.T @ ((1.0 - p) * y) / 6
    both_modes(logistic_loss, (w, x, y), 0, expected)
    np.testing.assert_allclose(
        adgen.hessian(logistic_loss)(w, x, y), (x.T * (p * (1.0 - p))) @ x / 6, rtol=1e-10
    )


def test_imports_adgen_cannot_resolve_are_refused():
    def relative(x):
        from . import something  # noqa: F401

        return x

    def read_outside_the_block(x):
        if x > 0:
            import math
        return math.sin(x)

    def missing(x):
        import adgen_no_such_module  # noqa: F401

        return x

    with pytest.raises(adgen.UnsupportedSyntaxError, match="relative imports"):
        adgen.grad(relative)(1.0)
    with pytest.raises(adgen.UnsupportedSyntaxError, match="imports inside if/for/while"):
        adgen.grad(read_outside_the_block)(1.0)
    with pytest.raises(adgen.AdgenError, match="cannot import `adgen_no_such_module`"):
        adgen.grad(missing)(1.0)


def sine_where_positive(x):
    if x > 0:
        import math as m

        return m.sin(x) * x
    return x * x


def optional_package(x):
    if x > 10:
        import adgen_no_such_module

        return adgen_no_such_module.f(x)
    return 3.0 * x


def test_an_import_inside_a_block_read_only_after_it_in_that_block():
    for x in (0.7, -0.4):
        expected = math.cos(x) * x + math.sin(x) if x > 0 else 2 * x
        both_modes(sine_where_positive, (x,), 0, expected)
    # an import that fails ends its path as Python's does; the other path runs
    both_modes(optional_package, (2.0,), 0, 3.0)
    with pytest.raises(ImportError, match="adgen_no_such_module"):
        adgen.grad(optional_package)(11.0)


# -- unpacking into subscripts -----------------------------------------------------------------


def pendulum(y0, h, steps=4):
    """Symplectic Euler on (angle, velocity), the state written in place."""
    y = y0 * 1.0
    for _ in range(steps):
        (y[0], y[1]) = (y[0] + h * y[1], y[1] - h * np.sin(y[0] + h * y[1]))
    return y[0] ** 2 + 0.5 * y[1] ** 2


def test_ode_step_writing_the_state_through_unpacking():
    y0, h = np.array([0.6, -0.3]), 0.1
    check_grads(pendulum, y0, h)
    g = adgen.grad(pendulum)(y0, h)
    eps = 1e-6
    fd = [(pendulum(y0 + eps * e, h) - pendulum(y0 - eps * e, h)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(g, fd, rtol=1e-7)
    hess = adgen.hessian(pendulum)(y0, h)
    fd2 = [
        (adgen.grad(pendulum)(y0 + eps * e, h) - adgen.grad(pendulum)(y0 - eps * e, h)) / (2 * eps)
        for e in np.eye(2)
    ]
    np.testing.assert_allclose(hess, np.array(fd2), rtol=1e-6, atol=1e-8)


def test_unpacking_into_names_and_subscripts_in_order():
    def f(x):
        y = np.zeros(3)
        s = x
        s, y[0] = 2.0 * s, s  # y[0] is the old s
        y[1], b = np.sin(x), 3.0 * x
        y[2], y[1] = x * x, y[1] + x  # y[1] + x reads the y[1] before this line
        return np.sum(y) + s + b

    x = 0.7
    # y = (x, sin x + x, x^2), s = 2x, b = 3x
    both_modes(f, (x,), 0, 1.0 + math.cos(x) + 1.0 + 2 * x + 2.0 + 3.0)


def test_swapping_entries_by_unpacking():
    def f(x):
        y = x * 1.0
        y[0], y[2] = y[2], y[0]
        return np.sum(y * np.array([1.0, 2.0, 3.0]))

    both_modes(f, (np.array([0.1, 0.2, 0.3]),), 0, np.array([3.0, 2.0, 1.0]))


def test_unpacking_into_an_attribute_is_refused():
    def f(x, obj):
        obj.a, b = x, x
        return b

    with pytest.raises(adgen.UnsupportedSyntaxError, match="assignments to attributes"):
        adgen.grad(f)(1.0, None)


# -- tuples bound to a name a block rebinds -----------------------------------------------------


def test_zip_and_enumerate_items_as_one_tuple():
    def dot(u, v):
        s = 0.0
        for pair in zip(u, v):
            s = s + pair[0] * pair[1]
        return s

    def weighted(u):
        s = 0.0
        for item in enumerate(u):
            s = s + (item[0] + 1.0) * item[1] ** 2
        return s

    u, v = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.4, -1.0])
    both_modes(dot, (u, v), 0, v)
    both_modes(dot, (u, v), 1, u)
    both_modes(weighted, (u,), 0, 2 * u * np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(adgen.hessian(weighted)(u), np.diag([2.0, 4.0, 6.0]))


def test_a_list_of_pairs_iterated_as_tuples():
    def f(pairs, w):
        s = 0.0
        for pair in pairs:
            s = s + np.tanh(w * pair[0]) * pair[1]
        return s

    pairs, w = [(0.5, 2.0), (-1.0, 0.3)], 0.8
    expected = sum((1 - np.tanh(w * a) ** 2) * a * b for a, b in pairs)
    both_modes(f, (pairs, w), 1, expected)
    g = adgen.grad(f)(pairs, w)
    assert g == [
        pytest.approx(((1 - np.tanh(w * a) ** 2) * w * b, np.tanh(w * a))) for a, b in pairs
    ]


def leapfrog(state, h):
    q, p = state
    p = p - 0.5 * h * np.sin(q)
    q = q + h * p
    p = p - 0.5 * h * np.sin(q)
    return q, p


def trajectory_energy(q0, p0, h):
    state = (q0, p0)
    for _ in range(5):
        state = leapfrog(state, h)
    return 0.5 * state[1] ** 2 + (1.0 - np.cos(state[0]))


def test_a_state_tuple_carried_through_a_loop():
    q0, p0, h = 0.4, -0.2, 0.3
    check_grads(trajectory_energy, q0, p0, h)
    g = adgen.grad(trajectory_energy, wrt=(0, 1))(q0, p0, h)
    eps = 1e-6
    fd = (
        (trajectory_energy(q0 + eps, p0, h) - trajectory_energy(q0 - eps, p0, h)) / (2 * eps),
        (trajectory_energy(q0, p0 + eps, h) - trajectory_energy(q0, p0 - eps, h)) / (2 * eps),
    )
    assert g == pytest.approx(fd, rel=1e-7)

    def energy_of(y):
        return trajectory_energy(y[0], y[1], h)

    hess = adgen.hessian(energy_of)(np.array([q0, p0]))
    y = np.array([q0, p0])
    fd2 = [
        (adgen.grad(energy_of)(y + eps * e) - adgen.grad(energy_of)(y - eps * e)) / (2 * eps)
        for e in np.eye(2)
    ]
    np.testing.assert_allclose(hess, np.array(fd2), rtol=1e-6, atol=1e-8)


def test_a_tuple_or_dict_argument_rebound_in_a_loop_reads_its_new_value():
    # every iteration read the argument's first value (a silently wrong result) before
    def tuple_params(params, x):
        for _ in range(3):
            W, b = params
            params = (W * 2.0, b + x)
        return params[0] * params[1]

    def dict_params(params, x):
        for _ in range(3):
            params = {"W": params["W"] * x, "b": params["b"] + 1.0}
        return params["W"] * params["b"]

    # W = 8 W0, b = b0 + 3x;  W = W0 x^3, b = b0 + 3
    assert adgen.value_and_grad(tuple_params, wrt=1)((1.5, 0.5), 2.0) == (78.0, 36.0)
    value, grad = adgen.value_and_grad(dict_params, wrt=(0, 1))({"W": 1.5, "b": 0.5}, 2.0)
    assert value == 42.0 and grad == ({"W": 28.0, "b": 12.0}, 63.0)
    out, dot = adgen.jvp(tuple_params, ((1.5, 0.5), 2.0), ((0.0, 0.0), 1.0))
    assert (out, dot) == (78.0, 36.0)


def test_pieces_of_a_split_bound_in_a_loop():
    def f(a):
        t = 0.0
        k = 0
        while k < 2:
            parts = np.hsplit(a, 2)
            t = t + np.sum(parts[0] * parts[1])
            a = a * 0.5
            k = k + 1
        return t

    a = np.array([[1.0, 2.0], [3.0, -1.0]])
    # sum(a0 * a1) * (1 + 1/4)
    both_modes(f, (a,), 0, 1.25 * a[:, ::-1])


def test_a_tuple_bound_with_several_structures_is_refused():
    def f(x):
        s = 0.0
        for pair in [(x, 1.0), (x, 2.0, 3.0)]:
            s = s + pair[0] * pair[1]
        return s

    with pytest.raises(adgen.UnsupportedSyntaxError, match="another structure") as info:
        adgen.grad(f)(1.0)
    assert "for pair in" in info.value.loc.text

    def two_lengths(x, s):
        pair = (x, x)
        if s > 0.0:
            pair = (x, x, s)  # displays of two lengths: one name holding a tuple, as before
        return pair[0] * pair[1]

    with pytest.raises(adgen.NonDifferentiableError, match="tuple of differentiated"):
        adgen.grad(two_lengths)(1.0, 1.0)

    def g(x, s):
        pair = None  # bound to None too: one name holding a tuple, as before
        if s > 0.0:
            pair = (x, np.cos(x))
            x = pair[0] * pair[1]
        return x

    with pytest.raises(adgen.NonDifferentiableError, match="tuple of differentiated"):
        adgen.grad(g)(1.0, 1.0)


def optional_package_beside_a_lambda(x):
    scale = (lambda v: v * 2.0)(1.5)  # (a lambda's body is an expression, not a block)
    if x > 10:
        import adgen_no_such_module

        return adgen_no_such_module.f(x)
    return scale * x


def test_an_import_in_a_block_of_a_function_that_holds_a_lambda():
    both_modes(optional_package_beside_a_lambda, (2.0,), 0, 3.0)
