"""What the kinds of values decide when transforming, and the forms of library code around
them (issue 34).

The code adgen makes is made for the call's argument kinds (shapes and dtypes), so the
kind of a value NumPy computes from them is known when transforming: a test of its shape,
rank or type (``if y.shape[1] == 1:``, ``np.isscalar(norms)``) takes one branch for every
call the code serves, and only that branch is lowered. Library helpers written with
positional-only or keyword-only parameters, annotated locals, ``np.finfo(x.dtype).eps``,
and helpers that adgen runs as written when given a namespace module, are read as Python
reads them. Every derivative is checked against a closed form or differences, in both
modes.
"""

import numpy as np
import pytest
from derivative_checks import check

import adgen

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.3, 0.8, -1.1], [2.0, -0.4, 0.6]])


# -- kinds of computed values ----------------------------------------------------------------


def zeros_to_one(scale):
    # (a library's helper: a number passes through, an array's tiny entries become 1 in place)
    if np.isscalar(scale):
        return 1.0 if scale == 0.0 else scale
    scale[scale < 1e-12] = 1.0
    return scale


def unit_rows(x):
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    norms = zeros_to_one(norms)
    return x / norms[:, None]


def unit_rows_energy(x):
    return np.sum(unit_rows(x) * np.arange(3.0))


def test_kind_of_an_einsum_decides_a_scalar_test_and_the_write_reaches_the_callers_array():
    """``np.isscalar`` of an ``np.einsum`` result is decided (its kind computed from the
    argument's), so the helper's in-place write into the caller's new array is lowered at
    its top level, as Python runs it."""
    n = np.linalg.norm(X, axis=1, keepdims=True)
    w = np.arange(3.0)
    want = w / n - X * (X @ w)[:, None] / n**3
    check(unit_rows_energy, X, want)


def as_column_pairs(p):
    # (a binary prediction as two columns: the shape decides, when transforming)
    if p.ndim == 1:
        p = p[:, None]
    if p.shape[1] == 1:
        p = np.concatenate([1 - p, p], axis=1)
    if p.shape[0] != 4:
        raise ValueError(f"expected 4 rows, got {p.shape[0]}")
    return p


def pair_log_likelihood(p):
    labels = np.array([0, 1, 1, 0])
    q = as_column_pairs(p)
    return np.sum(np.log(q[np.arange(4), labels]))


@pytest.mark.parametrize("shape", [(4,), (4, 1), (4, 2)])
def test_shape_tests_take_the_branch_the_argument_shape_gives(shape):
    """``if p.ndim == 1``, ``if p.shape[1] == 1`` and a validation that raises are decided
    for the call's shapes: one branch lowered, the right one for each shape."""
    p = np.linspace(0.2, 0.7, int(np.prod(shape))).reshape(shape)
    check(pair_log_likelihood, p)
    code = adgen.source(pair_log_likelihood, "reverse", args=(p,))
    assert "ValueError" not in code  # (the validation's branch is never taken)
    with pytest.raises(ValueError, match="expected 4 rows"):
        adgen.grad(pair_log_likelihood)(np.full((3, 2), 0.5))


def clipped_log_loss(p):
    eps = np.finfo(p.dtype).eps
    q = np.clip(p, eps, 1 - eps)
    return -np.mean(np.log(q))


def test_finfo_of_a_dtype_is_known_when_transforming():
    p = np.array([0.2, 0.5, 0.9])
    check(clipped_log_loss, p, -1 / p / 3)


# -- forms of library helpers --------------------------------------------------------------


def scaled(x, /, factor=2.0):
    return factor * x


def positional_only_energy(x):
    return np.sum(scaled(x) ** 2) + np.sum(scaled(x, 3.0))


def test_helper_with_positional_only_parameters_is_inlined():
    check(positional_only_energy, X, 8 * X + 3)


def fill_first(a, *, out):
    out[0] = 5.0 * a[0]
    return out


def keyword_only_out(x):
    y = x * 2.0
    z = fill_first(x, out=y)
    return np.sum(z * y) + np.sum(y)


def test_write_into_a_keyword_only_parameter_reaches_the_callers_array():
    """A helper writing into a keyword-only parameter writes into the caller's array: the
    caller's later reads see the write (a wrong first entry before: 37 for 55)."""
    x = np.array([1.0, 2.0, 3.0])
    # y = 2x with y[0] = 5 x[0]: sum(y * y) + sum(y)
    want = np.array([2 * 25 * x[0] + 5, 8 * x[1] + 2, 8 * x[2] + 2])
    check(keyword_only_out, x, want)


def fill_first_kept(a, *, out):
    out[0] = 5.0 * a[0]
    return out


def keyword_only_out_viewed(x):
    y = x * 2.0
    v = y[1:]
    z = fill_first_kept(x, out=y)
    return np.sum(z) + np.sum(v)


def test_write_into_a_keyword_only_parameter_another_name_views_is_refused():
    with pytest.raises(adgen.AdgenError, match="`v` keeps a view"):
        adgen.grad(keyword_only_out_viewed)(np.array([1.0, 2.0, 3.0]))


def annotated_locals(x):
    total: float = 0.0
    rows: list = []
    for k in range(x.shape[0]):
        row: np.ndarray = x[k] ** 2
        rows.append(row)
        total = total + np.sum(row)
    stacked: np.ndarray = np.stack(rows)
    return total + np.sum(stacked * x)


def test_annotated_local_assignments_are_plain_assignments():
    check(annotated_locals, X, 2 * X + 3 * X**2)


def class_count(labels, xp):
    # (bookkeeping adgen does not read: a `match`; run as written, on data only)
    match labels.ndim:
        case 1:
            return xp.asarray(len(set(labels.tolist())))
        case _:
            raise ValueError("labels must be one-dimensional")


def per_class_mean(x):
    labels = np.array([0, 1, 1, 0])
    k = class_count(labels, np)
    return np.sum(x**2) / k


def test_helper_given_data_and_a_namespace_runs_as_written():
    """A helper adgen does not read, given the labels and the namespace module (``xp``):
    run as written, its result a constant of the derivative."""
    check(per_class_mean, X, X)


def per_class_mean_of_x(x):
    return np.sum(x**2) / class_count(x[:, 0], np)


def test_such_a_helper_given_a_differentiated_value_is_refused():
    with pytest.raises(adgen.AdgenError, match="class_count|match"):
        adgen.grad(per_class_mean_of_x)(X)


def _weights_made_of_constants(q):
    w = np.ones(3) * 2.0  # (made of constants: its kind is known when transforming)
    if isinstance(w.dtype, str) or not isinstance(w, np.ndarray):
        raise TypeError("weights must be an array")
    steps = np.arange(3.0)
    return np.sum(q * w) + np.sum(q**2 * steps)


def test_kinds_of_arrays_made_of_constants_are_known():
    q = np.array([0.3, 1.2, 0.8])
    np.testing.assert_allclose(
        adgen.grad(_weights_made_of_constants)(q), 2.0 + 2.0 * q * np.arange(3.0), rtol=1e-12
    )
    v = np.array([1.0, -1.0, 0.5])
    got = adgen.jvp(_weights_made_of_constants, (q,), (v,))[1]
    np.testing.assert_allclose(got, np.dot(2.0 + 2.0 * q * np.arange(3.0), v), rtol=1e-12)


def _flagged(x, keepdims=False, squared=True):
    s = np.sum(x**2 if squared else np.abs(x), keepdims=keepdims)
    if keepdims:
        return s[0]
    return s


def test_a_bool_option_is_a_value_the_code_is_made_for():
    """``keepdims=False`` given by default: the code is made for that value (``if keepdims:``
    decided, the result's kind known), and made again for the other value."""
    x = np.array([0.3, -1.2, 0.7])
    np.testing.assert_allclose(adgen.grad(_flagged)(x), 2.0 * x, rtol=1e-12)
    np.testing.assert_allclose(adgen.grad(_flagged)(x, True), 2.0 * x, rtol=1e-12)
    np.testing.assert_allclose(adgen.grad(_flagged)(x, False, False), np.sign(x), rtol=1e-12)
    np.testing.assert_allclose(adgen.grad(_flagged)(x, True, False), np.sign(x), rtol=1e-12)
    code = adgen.source(_flagged, args=(x,))
    rows = [r.strip() for r in code.splitlines() if not r.strip().startswith("#")]
    assert not any(r.startswith("if ") for r in rows)  # (decided when transforming)


def test_grad_of_logsumexp_does_not_compute_its_value():
    special = pytest.importorskip("scipy.special")
    x = np.array([0.3, -1.2, 0.7, 2.0])
    np.testing.assert_allclose(adgen.grad(special.logsumexp)(x), special.softmax(x), rtol=1e-12)
