"""Calls that write into an array the function made (issue 35): ``a.fill(v)``, ``a.sort()``,
``np.copyto``, ``np.put``, ``np.put_along_axis``, ``np.putmask``, ``np.add.at`` and
``np.subtract.at`` as
statements, read as the writes they make (``a[...] = v``, ``a[...] = np.sort(a)``,
``a[...] = rt.added_at(a, index, b)``...) with the checks every in-place write has; ``out=``
passed on by a helper (``None`` by default: no write). Each
program is checked in both modes and at second order against central differences; the
forms whose semantics adgen does not read are refused by name."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
from derivative_checks import differences

import adgen
from adgen.errors import AdgenError


def check_both_modes_and_second_order(f, x):
    gradient = adgen.grad(f)(x)
    np.testing.assert_allclose(gradient, differences(f, x), rtol=1e-6, atol=1e-8)
    direction = np.linspace(0.5, -0.7, x.size).reshape(x.shape)
    _, tangent = adgen.jvp(f, (x,), (direction,))
    np.testing.assert_allclose(tangent, np.sum(gradient * direction), rtol=1e-8, atol=1e-10)
    hessian = adgen.hessian(f)(x).reshape(x.size, x.size)
    g = adgen.grad(f)
    rows = [differences(lambda v, i=i: g(v).flat[i], x).ravel() for i in range(x.size)]
    expected = np.stack(rows)
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-6)


# -- programs in the styles these calls are written in ----------------------------------------
def bar_energy(k):
    """Elastic energy of a chain of springs under a unit load at every node: the stiffness
    matrix assembled element by element with ``np.add.at`` (as finite-element codes do)."""
    n = k.size + 1
    K = np.zeros((n, n))
    first = np.arange(n - 1)
    rows = np.stack([first, first, first + 1, first + 1], axis=1)
    cols = np.stack([first, first + 1, first, first + 1], axis=1)
    local = np.stack([k, -k, -k, k], axis=1)
    np.add.at(K, (rows.ravel(), cols.ravel()), local.ravel())
    K[0, :] = 0.0
    K[0, 0] = 1.0
    load = np.empty(n)
    load.fill(1.0)
    load[0] = 0.0
    u = np.linalg.solve(K, load)
    return 0.5 * u @ load


def trimmed_mean_loss(x):
    """A robust loss: the mean of the middle of the sorted squared residuals."""
    r = (x - np.array([0.1, 2.0, -0.4, 0.9, 0.3, -1.2])) ** 2
    r.sort()
    return np.mean(r[1:-1])


def binned_sums(x):
    """Weighted counts per bin (``np.add.at`` with repeated bins), less a correction
    (``np.subtract.at``), squared: the scatter of a histogram with weights."""
    bins = np.array([0, 1, 1, 3, 0, 2])
    acc = np.zeros(4)
    np.add.at(acc, bins, x * np.tanh(x))
    np.subtract.at(acc, np.array([2, 2]), 0.5 * x[:2])
    return np.sum(acc**2)


def padded_signal(x):
    """A buffer filled with ``np.copyto``, values placed with ``np.put`` and
    ``np.put_along_axis``, then a smooth functional of it."""
    buf = np.zeros((2, 4))
    np.copyto(buf, np.sin(x[:4]))
    np.put(buf, [0, -1], x[4:6] ** 2)
    np.put_along_axis(buf, np.array([[2], [1]]), x[:2].reshape(2, 1) * 3.0, axis=1)
    return np.sum(np.exp(buf) * np.arange(8.0).reshape(2, 4))


def filled_with_a_differentiated_value(x):
    a = np.empty(3)
    a.fill(x[0] * x[1])
    return np.sum(a * x)


def sorted_along_an_axis(x):
    m = np.outer(x, x) + np.diag(x)
    m.sort(axis=0)
    return np.sum(m[0] * m[-1])


def clipped_by_putmask(x):
    """Entries over a threshold replaced by a repeating pattern of values computed from
    ``x`` (``np.putmask`` repeats its values by the flat position)."""
    a = x * 2.0
    np.putmask(a, a > 0.5, np.array([x[0] ** 2, np.tanh(x[1])]))
    return np.sum(a**3) + a[0] * a[-1]


def _expit(x, out=None):  # scikit-learn's helpers pass their `out=None` on
    return scipy.special.expit(x, out=out)


def _exp(x, out=None):
    return np.exp(x, out)


def _exp_keyword(x, out=None):
    return np.exp(x, out=out)  # (positional `None` is refused by name on NumPy < 2.3)


def out_none_passed_on(x):
    return np.sum(_expit(x) * x) + np.sum(_exp_keyword(x[1:]) ** 2)


def out_buffer_passed_on(x):
    buffer = np.zeros(x.size)
    _expit(x * 2.0, out=buffer)
    return np.sum(buffer**2) + np.sum(_exp(x, buffer))


def read_then_written_through_a_helper(x):
    # the helper's write overwrites values the caller read before: reverse mode must save
    # them as a write under the caller's own name would (it read the new values: wrong)
    b = np.zeros(x.size)
    b[...] = np.tanh(2.0 * x)
    a = np.sum(b**2)
    _exp(x, b)
    return a + np.sum(b * x)


def _expit_into(x, out=None):
    return scipy.special.expit(x, out)  # (its output passed after its input)


def buffer_written_only_through_a_helper(x):
    b = np.tanh(x) * 0.625
    a = np.sum(b**2)
    _expit_into(x, b)
    return np.sum(b * a)


PROGRAMS = [
    (buffer_written_only_through_a_helper, np.array([0.3, -0.2, 0.5])),
    (read_then_written_through_a_helper, np.array([0.3, -1.2, 0.5])),
    (out_none_passed_on, np.array([0.3, -1.2, 0.5])),
    (out_buffer_passed_on, np.array([0.3, -1.2, 0.5])),
    (bar_energy, np.array([1.3, 0.8, 2.1, 1.6])),
    (trimmed_mean_loss, np.array([0.4, 1.1, 0.2, 0.5, -0.3, 0.7])),
    (binned_sums, np.array([0.3, -0.8, 1.2, 0.5, -0.1, 0.9])),
    (padded_signal, np.array([0.2, -0.5, 0.9, 0.4, 1.1, -0.6])),
    (filled_with_a_differentiated_value, np.array([0.7, -1.3, 0.4])),
    (sorted_along_an_axis, np.array([0.7, -1.3, 0.4])),
    (clipped_by_putmask, np.array([0.4, -0.3, 0.9, 0.1, 0.6])),
]


@pytest.mark.parametrize(("f", "x"), PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_a_write_made_by_a_call_is_differentiated(f, x):
    check_both_modes_and_second_order(f, x)


def test_the_program_runs_as_python_runs_it():
    """The generated code's value is the function's (the writes are the calls' own)."""
    for f, x in PROGRAMS:
        value, _ = adgen.value_and_grad(f)(x)
        np.testing.assert_allclose(value, f(x), rtol=1e-12)


def test_an_outside_object_written_with_add_at_runs_as_written():
    """``np.add.at`` into an outside object's array, of constants: run as written, once a
    call (in both modes), as any call without a derivative."""

    class Tally:
        def __init__(self):
            self.counts = np.zeros(3, dtype=int)

    tally = Tally()

    def f(x):
        np.add.at(tally.counts, np.array([0, 2, 2]), 1)
        return np.sum(x**2)

    adgen.grad(f)(np.ones(3))
    adgen.jvp(f, (np.ones(3),), (np.ones(3),))
    assert tally.counts.tolist() == [2, 0, 4]


def test_writing_into_an_argument_is_refused():
    def f(x):
        x.sort()
        return np.sum(x * np.arange(3.0))

    with pytest.raises(AdgenError, match="in-place write into `x`"):
        adgen.grad(f)(np.array([3.0, 1.0, 2.0]))


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("np.copyto(a, x, where=x > 0)", "`copyto` with `where` other than True"),
        ("np.put(a, [4], x[0], mode='wrap')", "`put` with `mode` other than 'raise'"),
        ("a.fill(x[0], 1)", "a.fill()` (its arguments)"),
        ("np.add.at(a, [0])", "ufunc's `.at`"),
    ],
)
def test_forms_whose_semantics_adgen_does_not_read_are_refused_by_name(tmp_path, body, words):
    source = (
        "import numpy as np\n\n\ndef f(x):\n    a = np.zeros(3)\n"
        f"    {body}\n    return np.sum(a * x)\n"
    )
    path = tmp_path / "forms.py"
    path.write_text(source)
    namespace: dict = {}
    exec(compile(source, str(path), "exec"), namespace)
    with pytest.raises(AdgenError, match=words.replace("(", r"\(").replace(")", r"\)")):
        adgen.grad(namespace["f"])(np.array([0.5, -1.0, 2.0]))


# -- library calls that write into what they are given -----------------------------------------
def smoothed_edges(x):
    """SciPy's private helper fills its last argument; its result is not read."""
    from scipy.signal._savitzky_golay import _fit_edge

    y = np.zeros_like(x)
    _fit_edge(x, 0, 5, 0, 5, -1, 2, 0, 1.0, y)
    return np.sum(y * y)


def filtered_into_a_buffer(x):
    """``output=`` is where SciPy's ndimage writes its result."""
    import scipy.ndimage as ndi

    buf = np.zeros_like(x)
    ndi.convolve1d(x, np.array([0.25, 0.5, 0.25]), output=buf)
    return np.sum(buf * buf)


@pytest.mark.parametrize("f", [smoothed_edges, filtered_into_a_buffer])
def test_a_library_call_that_writes_into_its_arguments_is_refused_not_a_zero_gradient(f):
    pytest.importorskip("scipy")
    x = np.linspace(0.3, 1.7, 9) ** 2
    assert np.any(differences(f, x) != 0)  # the result does depend on x
    for differentiate in (lambda: adgen.grad(f)(x), lambda: adgen.jvp(f, (x,), (x,))):
        with pytest.raises(AdgenError):
            differentiate()
