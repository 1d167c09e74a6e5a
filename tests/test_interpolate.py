"""SciPy's interpolation objects in differentiated programs (issue 35, item 4): an
interpolant made outside the function (``CubicSpline``, ``PchipInterpolator``,
``Akima1DInterpolator``, ``BSpline``/``make_interp_spline``, ``interp1d``, a linear
``RegularGridInterpolator``) called inside it, differentiated w.r.t. the points it is
evaluated at, in both modes and at second order, against the interpolant's own
derivatives, analytic slopes or central differences; and the refusals, by name, of what
has no rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import adgen
from adgen.errors import AdgenError

pytest.importorskip("scipy.interpolate")
import scipy.interpolate as si  # noqa: E402

T = np.linspace(0.0, 3.0, 7)
Y = np.sin(T) + 0.3 * T
X = np.array([0.25, 1.1, 1.7, 2.95])
CS = si.CubicSpline(T, Y)


def both_modes(f: Any, x: Any, expected: Any, rtol: float = 1e-9) -> None:
    """Reverse mode gives ``expected``; forward mode in a random direction its inner product."""
    np.testing.assert_allclose(adgen.grad(f)(x), expected, rtol=rtol, atol=1e-12)
    tangent = np.random.default_rng(4).standard_normal(np.shape(x))
    out, out_dot = adgen.jvp(f, (x,), (tangent,))
    assert out == pytest.approx(f(x), rel=1e-13)
    assert out_dot == pytest.approx(float(np.sum(expected * tangent)), rel=rtol, abs=1e-12)


def central(f: Any, x: Any, h: float = 1e-6) -> Any:
    flat = np.asarray(x, float).ravel()
    out = np.empty_like(flat)
    for i in range(flat.size):
        e = np.zeros_like(flat)
        e[i] = h
        out[i] = (f((flat + e).reshape(np.shape(x))) - f((flat - e).reshape(np.shape(x)))) / (2 * h)
    return out.reshape(np.shape(x))


# -- splines made outside, evaluated at differentiated points -------------------------------


def curve_loss(s: Any) -> Any:
    """Squared distances of the points ``curve(s)`` of a spline-parametrised plane curve to
    targets: the parameters of the closest points are what is fitted."""
    p = CURVE(s)
    return np.sum((p - TARGETS) ** 2)


CURVE = si.CubicSpline(T, np.stack([np.cos(T), np.sin(2 * T)], axis=1))
TARGETS = np.array([[1.0, 0.1], [0.2, 0.5], [-0.9, -0.4], [-1.0, 0.2]])


def test_spline_curve_at_differentiated_parameters() -> None:
    # d/ds_i sum_k (c_k(s_i) - q_ik)^2 = 2 sum_k (c_k(s_i) - q_ik) c_k'(s_i)
    expected = 2 * np.sum((CURVE(X) - TARGETS) * CURVE(X, 1), axis=1)
    both_modes(curve_loss, X, expected)
    # the Hessian is diagonal: 2 sum_k (c_k'^2 + (c_k - q_k) c_k'')
    hess = adgen.hessian(curve_loss)(X)
    diag = 2 * np.sum(CURVE(X, 1) ** 2 + (CURVE(X) - TARGETS) * CURVE(X, 2), axis=1)
    np.testing.assert_allclose(hess, np.diag(diag), rtol=1e-9, atol=1e-12)


def test_spline_along_another_axis() -> None:
    curve = si.CubicSpline(T, np.stack([np.cos(T), np.sin(T)]), axis=1)  # values (2, n)
    weights = np.array([[1.0], [-2.0]])

    def f(s: Any) -> Any:
        return np.sum(weights * curve(s) ** 2)

    expected = np.sum(weights * 2 * curve(X) * curve(X, 1), axis=0)
    both_modes(f, X, expected)


@pytest.mark.parametrize(
    "make",
    [
        lambda: si.PchipInterpolator(T, Y),
        lambda: si.Akima1DInterpolator(T, Y),
        lambda: si.make_interp_spline(T, Y, k=3),
        lambda: si.CubicSpline(T, Y, bc_type="natural"),
    ],
    ids=["pchip", "akima", "make_interp_spline", "natural"],
)
def test_interpolants_against_their_own_derivative(make: Any) -> None:
    s = make()

    def f(x: Any) -> Any:
        return np.sum(np.exp(s(x)))

    both_modes(f, X, np.exp(s(X)) * s.derivative()(X))
    np.testing.assert_allclose(adgen.grad(f)(X), central(f, X), rtol=1e-6)


def test_derivative_orders() -> None:
    def slope(x: Any) -> Any:
        return np.sum(CS(x, 1) * x)

    def curvature(x: Any) -> Any:
        return np.sum(CS.derivative(2)(x) ** 2)

    def named(x: Any) -> Any:
        return np.sum(CS(x, nu=2) ** 2)

    both_modes(slope, X, CS(X, 2) * X + CS(X, 1))
    both_modes(curvature, X, 2 * CS(X, 2) * CS(X, 3))
    both_modes(named, X, 2 * CS(X, 2) * CS(X, 3))
    # a cubic's third derivative is piecewise constant: the Hessian is 2 c'''^2 on the diagonal
    np.testing.assert_allclose(adgen.hessian(named)(X), np.diag(2 * CS(X, 3) ** 2), atol=1e-10)


def test_scalar_point_and_knot_convention() -> None:
    # a piecewise-linear B-spline: at a knot SciPy evaluates the piece on the right
    bs = si.make_interp_spline([0.0, 1.0, 2.0], [0.0, 1.0, 3.0], k=1)

    def f(x: Any) -> Any:
        return bs(x) * 1.0

    assert adgen.grad(f)(0.5) == pytest.approx(1.0)
    assert adgen.grad(f)(1.0) == pytest.approx(2.0)  # the right piece's slope
    assert float(adgen.jvp(f, (1.0,), (1.0,))[1]) == pytest.approx(2.0)


# -- interp1d of tabulated data ----------------------------------------------------------------

TABLE_X = np.array([0.0, 0.5, 1.0, 2.0, 4.0])
TABLE_Y = np.array([1.0, 0.8, 0.5, 0.1, -0.3])


def test_interp1d_linear_of_a_table() -> None:
    table = si.interp1d(TABLE_X, TABLE_Y)
    data = np.array([0.3, 0.9, 1.4, 3.1])

    def loss(a: Any) -> Any:  # a model y = table(a * data) fitted by its scale a
        return np.sum((table(a * data) - 0.2) ** 2)

    a = 1.1
    pts = a * data
    seg = np.searchsorted(TABLE_X, pts) - 1
    slopes = (TABLE_Y[seg + 1] - TABLE_Y[seg]) / (TABLE_X[seg + 1] - TABLE_X[seg])
    expected = float(np.sum(2 * (table(pts) - 0.2) * slopes * data))
    assert adgen.grad(loss)(a) == pytest.approx(expected, rel=1e-12)
    assert float(adgen.jvp(loss, (a,), (1.0,))[1]) == pytest.approx(expected, rel=1e-12)


def test_interp1d_linear_knots_and_outside() -> None:
    def value(table: Any) -> Any:
        return lambda x: np.sum(table(x) * np.array([1.0, 2.0, 3.0, 4.0]))

    # at a knot interp1d evaluates the segment on the left (the first knot: the first one)
    knots = np.array([0.0, 0.5, 1.0, 4.0])
    left = np.array([-0.4, -0.4, -0.6, -0.2]) * np.array([1.0, 2.0, 3.0, 4.0])
    both_modes(value(si.interp1d(TABLE_X, TABLE_Y)), knots, left)
    # outside the table: the fill value (derivative 0), or the edge segment extrapolated
    outside = np.array([-1.0, 0.25, 3.0, 5.0])
    filled = si.interp1d(TABLE_X, TABLE_Y, bounds_error=False, fill_value=2.0)
    both_modes(value(filled), outside, np.array([0.0, -0.8, -0.6, 0.0]))
    extra = si.interp1d(TABLE_X, TABLE_Y, fill_value="extrapolate")
    both_modes(value(extra), outside, np.array([-0.4, -0.8, -0.6, -0.8]))


@pytest.mark.parametrize("kind", ["slinear", "quadratic", "cubic"])
def test_interp1d_spline_kinds(kind: str) -> None:
    table = si.interp1d(TABLE_X, TABLE_Y, kind=kind)
    same = si.make_interp_spline(
        TABLE_X, TABLE_Y, k={"slinear": 1, "quadratic": 2, "cubic": 3}[kind]
    )
    pts = np.array([0.2, 0.7, 1.5, 3.3])
    np.testing.assert_allclose(table(pts), same(pts), rtol=1e-12)  # the spline it evaluates

    def f(x: Any) -> Any:
        return np.sum(table(x) ** 2)

    both_modes(f, pts, 2 * table(pts) * same(pts, 1))
    np.testing.assert_allclose(adgen.grad(f)(pts), central(f, pts), rtol=1e-6)


def test_interp1d_of_rows() -> None:
    rows = np.stack([TABLE_Y, TABLE_Y**2])  # (2, n): interpolated along the last axis
    table = si.interp1d(TABLE_X, rows, kind="cubic")

    def f(x: Any) -> Any:
        return np.sum(table(x)[1] - table(x)[0])

    pts = np.array([0.2, 1.5, 3.3])
    np.testing.assert_allclose(adgen.grad(f)(pts), central(f, pts), rtol=1e-6)


# -- a linear grid interpolant ---------------------------------------------------------------

GRID = (np.array([0.0, 1.0, 3.0]), np.array([0.0, 0.5, 1.0, 2.0]))
VALUES = np.cos(np.arange(12.0)).reshape(3, 4)
FIELD = si.RegularGridInterpolator(GRID, VALUES)


def test_grid_interpolant_gradient() -> None:
    pts = np.array([[0.3, 0.2], [2.0, 1.5], [1.0, 0.7]])

    def energy(p: Any) -> Any:
        return np.sum(FIELD(p) ** 2)

    # bilinear in a cell: the slope along one axis is the difference across the cell
    expected = np.empty_like(pts)
    for k, (a, b) in enumerate(pts):
        i = min(max(np.searchsorted(GRID[0], a) - 1, 0), 1)
        j = min(max(np.searchsorted(GRID[1], b) - 1, 0), 2)
        x0, x1, y0, y1 = GRID[0][i], GRID[0][i + 1], GRID[1][j], GRID[1][j + 1]
        u, v = (a - x0) / (x1 - x0), (b - y0) / (y1 - y0)
        f00, f01 = VALUES[i, j], VALUES[i, j + 1]
        f10, f11 = VALUES[i + 1, j], VALUES[i + 1, j + 1]
        du = ((1 - v) * (f10 - f00) + v * (f11 - f01)) / (x1 - x0)
        dv = ((1 - u) * (f01 - f00) + u * (f11 - f10)) / (y1 - y0)
        expected[k] = 2 * FIELD(pts[k : k + 1])[0] * np.array([du, dv])
    both_modes(energy, pts, expected)


def test_grid_interpolant_second_order_refused() -> None:
    def energy(p: Any) -> Any:
        return np.sum(FIELD(p) ** 2)

    with pytest.raises(AdgenError, match="second derivative of a RegularGridInterpolator"):
        adgen.hessian(energy)(np.array([[0.3, 0.2]]))


# -- interpolants made inside, from differentiated data --------------------------------------

OBS_T = np.array([0.2, 0.9, 1.3, 2.2, 2.8])
OBS = np.cos(OBS_T)


def spline_fit_loss(y: Any) -> Any:
    """A spline through the values ``y`` at the nodes ``T`` fitted to observations, with a
    roughness penalty on its second derivative."""
    s = si.CubicSpline(T, y, bc_type="natural")
    return np.sum((s(OBS_T) - OBS) ** 2) + 0.1 * np.sum(s.derivative(2)(T) ** 2)


def weights(make: Any, x: Any, nu: int = 0) -> Any:
    """W[i, j]: the interpolant of the j-th basis vector at x[i] (value = W @ y)."""
    return np.stack([make(e)(x, nu) if nu else make(e)(x) for e in np.eye(len(T))], axis=1)


def test_spline_fitted_inside_a_loss() -> None:
    make = lambda v: si.CubicSpline(T, v, bc_type="natural")  # noqa: E731
    W, D = weights(make, OBS_T), weights(make, T, 2)
    expected = 2 * W.T @ (W @ Y - OBS) + 0.2 * D.T @ (D @ Y)
    both_modes(spline_fit_loss, Y, expected)
    # the loss is quadratic in y: its Hessian is constant
    np.testing.assert_allclose(
        adgen.hessian(spline_fit_loss)(Y), 2 * W.T @ W + 0.2 * D.T @ D, rtol=1e-9, atol=1e-10
    )


def quadratic_spline_loss(y: Any) -> Any:
    s = si.make_interp_spline(T, y, k=2)
    return np.sum((s(X) - np.sin(X)) ** 2)


def cubic_table_loss(y: Any) -> Any:
    s = si.interp1d(T, y, kind="cubic")
    return np.sum((s(X) - np.sin(X)) ** 2)


def linear_table_loss(y: Any) -> Any:
    return np.sum((si.interp1d(T, y)(X) - np.sin(X)) ** 2)


@pytest.mark.parametrize(
    ("loss", "make"),
    [
        (quadratic_spline_loss, lambda v: si.make_interp_spline(T, v, k=2)),
        (cubic_table_loss, lambda v: si.interp1d(T, v, kind="cubic")),
        (linear_table_loss, lambda v: si.interp1d(T, v)),
    ],
    ids=["make_interp_spline", "interp1d-cubic", "interp1d-linear"],
)
def test_other_makers_inside(loss: Any, make: Any) -> None:
    W = weights(make, X)
    both_modes(loss, Y, 2 * W.T @ (W @ Y - np.sin(X)))


def test_data_and_points_both_differentiated() -> None:
    def f(y: Any, x: Any) -> Any:
        return np.sum(si.CubicSpline(T, y)(x) ** 3)

    gy, gx = adgen.grad(f, wrt=(0, 1))(Y, X)
    cs = si.CubicSpline(T, Y)
    W = weights(lambda v: si.CubicSpline(T, v), X)
    np.testing.assert_allclose(gy, W.T @ (3 * cs(X) ** 2), rtol=1e-9)
    np.testing.assert_allclose(gx, 3 * cs(X) ** 2 * cs(X, 1), rtol=1e-9)
    # mixed second derivative d/dx (df/dy) = W'^T diag(6 s s') + ...: against differences
    mixed = adgen.jacobian(adgen.grad(f, wrt=0), wrt=1)(Y, X)
    h = 1e-6
    cols = [
        (adgen.grad(f, wrt=0)(Y, X + h * e) - adgen.grad(f, wrt=0)(Y, X - h * e)) / (2 * h)
        for e in np.eye(len(X))
    ]
    np.testing.assert_allclose(mixed, np.stack(cols, axis=1), rtol=1e-6, atol=1e-8)


def test_points_of_interpolants_made_inside() -> None:
    knots = np.array([0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 3.0, 3.0])
    coef = np.array([0.5, -1.0, 2.0, 0.3, 1.0])

    def pchip(x: Any) -> Any:  # not linear in its data: the points are still differentiated
        return np.sum(si.PchipInterpolator(T, Y)(x) ** 2)

    def clamped(x: Any) -> Any:
        s = si.CubicSpline(T, Y, bc_type=((1, 0.5), (2, -1.0)))
        return np.sum(s.derivative()(x))

    def bspline(c: Any) -> Any:  # a B-spline is linear in its coefficients
        return np.sum(si.BSpline(knots, c, 2)(X) ** 2)

    p = si.PchipInterpolator(T, Y)
    both_modes(pchip, X, 2 * p(X) * p(X, 1))
    cs = si.CubicSpline(T, Y, bc_type=((1, 0.5), (2, -1.0)))
    both_modes(clamped, X, cs(X, 2))
    b = si.BSpline(knots, coef, 2)
    W = np.stack([si.BSpline(knots, e, 2)(X) for e in np.eye(len(coef))], axis=1)
    both_modes(bspline, coef, W.T @ (2 * b(X)))


def squared_at(s: Any, x: Any) -> Any:
    return s(x) ** 2


def test_made_inside_and_passed_to_a_function_of_ours() -> None:
    def f(y: Any) -> Any:
        s = si.CubicSpline(T, y)
        return np.sum(squared_at(s, X))

    W = weights(lambda v: si.CubicSpline(T, v), X)
    both_modes(f, Y, W.T @ (2 * si.CubicSpline(T, Y)(X)))


def test_spline_of_vector_data_inside() -> None:
    data = np.stack([Y, Y**2], axis=1)  # (n, 2): a plane curve through the points

    def f(y: Any) -> Any:
        return np.sum(si.CubicSpline(T, y)(X) * np.array([1.0, -2.0]))

    W = weights(lambda v: si.CubicSpline(T, v), X)
    expected = np.stack([W.sum(axis=0), -2 * W.sum(axis=0)], axis=1)
    both_modes(f, data, expected)


# -- refusals ----------------------------------------------------------------------------------


def refused(f: Any, x: Any, *words: str) -> str:
    with pytest.raises(AdgenError) as info:
        adgen.grad(f)(x)
    message = str(info.value)
    for word in words:
        assert word in message, message
    assert "test_interpolate.py:" in message, message  # the call's file and line
    return message


# -- a linear grid interpolant made inside, from differentiated values --------------------------

GRID_POINTS = np.array([[0.3, 0.2], [2.0, 1.5], [1.0, 0.7], [2.9, 1.9], [0.05, 0.5]])
GRID_OBS = np.sin(GRID_POINTS[:, 0]) + GRID_POINTS[:, 1]


def field_fit_loss(values: Any) -> Any:
    """A field on a grid, fitted to observations at scattered points by bilinear
    interpolation, with a smoothness penalty (a terrain or temperature map fitted to
    stations)."""
    field = si.RegularGridInterpolator(GRID, values)
    misfit = field(GRID_POINTS) - GRID_OBS
    return np.sum(misfit**2) + 0.1 * np.sum(np.diff(values, axis=0) ** 2)


def test_grid_interpolant_made_inside_from_differentiated_values() -> None:
    # the interpolant is linear in the values: W[i, j] is the interpolant of the j-th basis
    # field at the i-th point, the value W @ vec(values), the gradient 2 W^T r + penalty's
    basis = np.eye(VALUES.size).reshape(*VALUES.shape, VALUES.size)
    W = si.RegularGridInterpolator(GRID, basis)(GRID_POINTS)
    r = W @ VALUES.ravel() - GRID_OBS
    d = np.diff(VALUES, axis=0)
    penalty = np.zeros_like(VALUES)
    penalty[1:] += 0.2 * d
    penalty[:-1] -= 0.2 * d
    expected = (2.0 * W.T @ r).reshape(VALUES.shape) + penalty
    both_modes(field_fit_loss, VALUES, expected)
    # the Hessian is constant: 2 W^T W plus the penalty's
    H = adgen.hessian(field_fit_loss)(VALUES).reshape(VALUES.size, VALUES.size)
    D = np.diff(np.eye(VALUES.size).reshape(*VALUES.shape, -1), axis=0).reshape(-1, VALUES.size)
    np.testing.assert_allclose(H, 2.0 * W.T @ W + 0.2 * D.T @ D, rtol=1e-10, atol=1e-12)


def test_grid_interpolant_made_inside_values_and_points_together() -> None:
    def loss(values: Any, points: Any) -> Any:
        field = si.RegularGridInterpolator(
            GRID, values, "linear", bounds_error=False, fill_value=None
        )
        return np.sum(np.tanh(field(points)))

    outside = GRID_POINTS * np.array([1.1, 1.05])  # (one point past the grid: extrapolated)
    gv, gp = adgen.grad(loss, wrt=(0, 1))(VALUES, outside)
    np.testing.assert_allclose(gv, central(lambda v: loss(v, outside), VALUES), rtol=1e-7)
    np.testing.assert_allclose(gp, central(lambda p: loss(VALUES, p), outside), rtol=1e-6)


def test_grid_interpolant_made_inside_not_linear_is_refused_only_where_differentiated() -> None:
    def nearest(values: Any) -> Any:
        return np.sum(si.RegularGridInterpolator(GRID, values, method="nearest")(GRID_POINTS))

    def filled(values: Any) -> Any:
        field = si.RegularGridInterpolator(GRID, values, bounds_error=False, fill_value=0.0)
        return np.sum(field(GRID_POINTS))

    for f in (nearest, filled):
        with pytest.raises(AdgenError, match="RegularGridInterpolator made inside the function"):
            adgen.grad(f)(VALUES)

    def scaled(s: Any) -> Any:  # (no derivative reaches the interpolant)
        field = si.RegularGridInterpolator(GRID, VALUES, method="nearest")
        return s * np.sum(field(GRID_POINTS))

    assert adgen.grad(scaled)(2.0) == pytest.approx(scaled(1.0))


def test_unsupported_interpolants_refused_by_name() -> None:
    nearest = si.interp1d(TABLE_X, TABLE_Y, kind="nearest")
    smooth = si.UnivariateSpline(T, Y)
    nearest_grid = si.RegularGridInterpolator(GRID, VALUES, method="nearest")

    def a(x: Any) -> Any:
        return np.sum(nearest(x))

    def b(x: Any) -> Any:
        return np.sum(smooth(x))

    def c(p: Any) -> Any:
        return np.sum(nearest_grid(p))

    refused(a, X, "interp1d of a piecewise constant kind")
    refused(b, X, "UnivariateSpline` (scipy.interpolate) object")
    refused(c, np.array([[0.3, 0.2]]), "RegularGridInterpolator with method 'nearest'")


def test_calls_with_options_refused() -> None:
    def extrapolating(x: Any) -> Any:
        return np.sum(CS(x, 0, extrapolate=False))

    def order(x: Any) -> Any:
        n = int(x.size > 2)
        return np.sum(CS(x, n))

    refused(extrapolating, X, "this call of a `CubicSpline`", "extrapolate")
    refused(order, X, "derivative order `nu` of a `CubicSpline` that is not a constant")


def test_made_inside_with_a_differentiated_order_refused() -> None:
    def order(y: Any) -> Any:
        return np.sum(si.CubicSpline(T, y, bc_type=(1, 0.5))(X))

    def knots(t: Any) -> Any:
        return np.sum(si.CubicSpline(t, Y)(X))

    def pchip(y: Any) -> Any:
        return np.sum(si.PchipInterpolator(T, y)(X))

    def options(y: Any) -> Any:
        return np.sum(si.CubicSpline(T, y, axis=0)(X))

    refused(order, Y, "not linear in them", "boundary values")
    refused(knots, T, "w.r.t. the knots of an interpolant made inside")
    refused(pchip, Y, "PchipInterpolator")
    refused(options, Y, "the option `axis` of `CubicSpline` made inside")


def test_other_objects_named_by_their_type() -> None:
    twice = np.vectorize(lambda v: 2.0 * v)

    def f(x: Any) -> Any:
        return np.sum(twice(x))

    message = refused(f, X, "calling a `numpy.vectorize` object")
    assert "0x" not in message  # no object's repr
