"""Which of ``scipy.special``'s functions adgen differentiates, and realistic programs using them.

Every ufunc of ``scipy.special`` either has a rule in adgen's registry or is listed in
:data:`NO_RULE` with the reason, so the list is explicit: adding a rule means removing its
entry (the test fails on an entry that has a rule), and a new SciPy ufunc fails the test until
it is given a rule or a reason. The rules themselves are checked over shapes, both modes and
second order by ``test_registry_rules.py`` (from their registered examples); here are whole
programs against analytic derivatives, and the refusals of parameters that have no derivative.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import adgen
from adgen.rules.registry import lookup
from adgen.testing import check_grads

pytest.importorskip("scipy.special")
import scipy.special  # noqa: E402  (after the importorskip: SciPy is optional)
import scipy.stats  # noqa: E402

NO_RULE: dict[str, str] = {
    "agm": "no rule yet (its derivatives need complete elliptic integrals)",
    "airye": "no rule yet (scaling differs between x < 0 and x > 0)",
    "bdtrik": "solves for the count k: not differentiable",
    "bdtrin": "solves for the count n: not differentiable",
    "btdtria": "solves for a beta shape: no closed-form derivative",
    "btdtrib": "solves for a beta shape: no closed-form derivative",
    "chdtriv": "solves for the degrees of freedom: no closed-form derivative",
    "chndtr": "non-central chi-square: no rule yet",
    "chndtridf": "non-central chi-square: no rule yet",
    "chndtrinc": "non-central chi-square: no rule yet",
    "chndtrix": "non-central chi-square: no rule yet",
    "elliprc": "Carlson integrals: no rule yet",
    "elliprd": "Carlson integrals: no rule yet",
    "elliprf": "Carlson integrals: no rule yet",
    "elliprg": "Carlson integrals: no rule yet",
    "elliprj": "Carlson integrals: no rule yet",
    "eval_sh_jacobi": "no rule yet",
    "exprel": "no rule yet (a derivative without cancellation near 0 is needed)",
    "fdtridfd": "solves for the degrees of freedom: no closed-form derivative",
    "gdtria": "solves for the rate: no rule yet",
    "gdtrib": "solves for the shape: no closed-form derivative",
    "hankel1": "complex result: no rule yet",
    "hankel1e": "complex result: no rule yet",
    "hankel2": "complex result: no rule yet",
    "hankel2e": "complex result: no rule yet",
    "kelvin": "complex results (ber, bei, ker, kei and their derivatives have rules)",
    "kolmogi": "no rule yet (kolmogorov's density is a series)",
    "kolmogorov": "no rule yet (its density is a series)",
    "mathieu_a": "characteristic value: no closed-form derivative",
    "sph_harm": "complex result (SciPy < 1.17's spherical harmonics, deprecated): no rule",
    "mathieu_b": "characteristic value: no closed-form derivative",
    "mathieu_cem": "no rule yet (x in degrees, q-derivative without closed form)",
    "mathieu_modcem1": "no rule yet",
    "mathieu_modcem2": "no rule yet",
    "mathieu_modsem1": "no rule yet",
    "mathieu_modsem2": "no rule yet",
    "mathieu_sem": "no rule yet (x in degrees, q-derivative without closed form)",
    "modfresnelm": "complex results: no rule yet",
    "modfresnelp": "complex results: no rule yet",
    "nbdtrik": "solves for the count k: not differentiable",
    "nbdtrin": "solves for the count n: not differentiable",
    "ncfdtr": "non-central F: no rule yet",
    "ncfdtri": "non-central F: no rule yet",
    "ncfdtridfd": "non-central F: no rule yet",
    "ncfdtridfn": "non-central F: no rule yet",
    "ncfdtrinc": "non-central F: no rule yet",
    "nctdtr": "non-central t: no rule yet",
    "nctdtridf": "non-central t: no rule yet",
    "nctdtrinc": "non-central t: no rule yet",
    "nctdtrit": "non-central t: no rule yet",
    "obl_ang1": "spheroidal wave functions: no rule yet",
    "obl_ang1_cv": "spheroidal wave functions: no rule yet",
    "obl_cv": "spheroidal characteristic value: no closed-form derivative",
    "obl_rad1": "spheroidal wave functions: no rule yet",
    "obl_rad1_cv": "spheroidal wave functions: no rule yet",
    "obl_rad2": "spheroidal wave functions: no rule yet",
    "obl_rad2_cv": "spheroidal wave functions: no rule yet",
    "pdtrik": "solves for the count k: not differentiable",
    "pro_ang1": "spheroidal wave functions: no rule yet",
    "pro_ang1_cv": "spheroidal wave functions: no rule yet",
    "pro_cv": "spheroidal characteristic value: no closed-form derivative",
    "pro_rad1": "spheroidal wave functions: no rule yet",
    "pro_rad1_cv": "spheroidal wave functions: no rule yet",
    "pro_rad2": "spheroidal wave functions: no rule yet",
    "pro_rad2_cv": "spheroidal wave functions: no rule yet",
    "smirnov": "no rule yet (its density is a finite sum over n)",
    "smirnovi": "no rule yet",
    "stdtridf": "solves for the degrees of freedom: no closed-form derivative",
    "voigt_profile": "no rule yet (its derivatives need wofz, complex)",
    "wofz": "complex (Faddeeva) function: no rule yet",
    "zetac": "derivative in x has no closed form",
}


def special_ufuncs() -> list[str]:
    return sorted(n for n in dir(scipy.special) if isinstance(getattr(scipy.special, n), np.ufunc))


def test_every_special_ufunc_has_a_rule_or_a_reason() -> None:
    names = special_ufuncs()
    missing = [n for n in names if lookup(getattr(scipy.special, n)) is None and n not in NO_RULE]
    assert not missing, f"scipy.special ufuncs with neither a rule nor a reason: {missing}"
    # an entry whose function has a rule now is stale (a name this SciPy lacks is kept: the
    # list serves the SciPy versions adgen is tested with, 1.15 to 1.18)
    stale = [
        n
        for n in NO_RULE
        if hasattr(scipy.special, n) and lookup(getattr(scipy.special, n)) is not None
    ]
    assert not stale, f"NO_RULE entries to remove: {stale}"
    assert all(reason.strip() for reason in NO_RULE.values())
    covered = [n for n in names if lookup(getattr(scipy.special, n)) is not None]
    assert len(covered) > 150, len(covered)


# ------------------------------------------------------------------ refusals by name


def bessel_in_its_order(v, x):
    return scipy.special.jv(v, x)


def gamma_cdf_in_its_shape(a, x):
    return scipy.special.gammainc(a, x)


def beta_cdf_in_b(b, x):
    return scipy.special.betainc(2.0, b, x)


def t_cdf_in_df(df, t):
    return scipy.special.stdtr(df, t)


def boxcox_in_lambda(lmbda, x):
    return scipy.special.boxcox(x, lmbda)


def ellipj_in_m(m, u):
    return scipy.special.ellipj(u, m)[0]


@pytest.mark.parametrize(
    "f, function, param",
    [
        (bessel_in_its_order, "jv", "v"),
        (gamma_cdf_in_its_shape, "gammainc", "a"),
        (beta_cdf_in_b, "betainc", "b"),
        (t_cdf_in_df, "stdtr", "df"),
        (boxcox_in_lambda, "boxcox", "lmbda"),
        (ellipj_in_m, "ellipj", "m"),
    ],
    ids=["jv", "gammainc", "betainc", "stdtr", "boxcox", "ellipj"],
)
def test_parameters_without_derivative_are_refused_by_name(f: Any, function: str, param: str):
    message = f"scipy.special.{function} with respect to its argument `{param}`"
    with pytest.raises(adgen.NonDifferentiableError, match=message.replace(".", r"\.")):
        adgen.grad(f, wrt=0)(0.6, 0.4)
    with pytest.raises(adgen.NonDifferentiableError, match=message.replace(".", r"\.")):
        adgen.jvp(f, (0.6, 0.4), (1.0, 0.0))
    # the other argument is differentiated
    assert np.isfinite(adgen.grad(f, wrt=1)(0.6, 0.4))


# ------------------------------------------------------------------ realistic programs


def both_modes(f: Any, args: tuple[Any, ...], wrt: int) -> tuple[Any, Any]:
    """Reverse-mode gradient and forward-mode derivative (column by column) w.r.t. ``wrt``
    (the other arguments held constant)."""
    g = adgen.grad(f, wrt=wrt)(*args)
    x = args[wrt]
    cols = []
    for k in range(np.size(x)):
        e = np.zeros(np.size(x))
        e[k] = 1.0
        tangents = tuple(e.reshape(np.shape(x)) if i == wrt else None for i in range(len(args)))
        cols.append(adgen.jvp(f, args, tangents)[1])
    return g, np.reshape(cols, np.shape(x))


def airy_disk_power(radius, theta, wavenumber):
    """Fraunhofer diffraction by a circular aperture: sum of (2 J1(x) / x)^2 over angles."""
    x = wavenumber * radius * np.sin(theta)
    return np.sum((2.0 * scipy.special.j1(x) / x) ** 2)


def test_airy_disk_derivative_in_the_aperture_radius() -> None:
    theta = np.array([0.01, 0.02, 0.035, 0.05])
    k, a = 2.0 * np.pi / 0.5, 3.0
    x = k * a * np.sin(theta)
    # d/dx (2 J1 / x)^2 = -8 J1(x) J2(x) / x^2
    expected = np.sum(
        -8.0 * scipy.special.j1(x) * scipy.special.jv(2.0, x) / x**2 * k * np.sin(theta)
    )
    g, t = both_modes(airy_disk_power, (a, theta, k), 0)
    assert g == pytest.approx(expected, rel=1e-10)
    assert t == pytest.approx(expected, rel=1e-10)
    check_grads(adgen.grad(airy_disk_power), a, theta, k, wrt=[0])  # second order


def gamma_cdf(x, shape, scale):
    return scipy.special.gammainc(shape, x / scale)


def test_gamma_cdf_derivatives_are_the_density_and_the_scale_derivative() -> None:
    x, shape, scale = np.array([0.5, 1.5, 3.0, 6.0]), 2.5, 1.7
    pdf = scipy.stats.gamma.pdf(x, shape, scale=scale)
    g, t = both_modes(lambda_sum_gamma_cdf, (x, shape, scale), 0)
    assert g == pytest.approx(pdf, rel=1e-12)
    assert t == pytest.approx(pdf, rel=1e-12)
    # dF/dscale = -(x / scale) pdf
    g, t = both_modes(lambda_sum_gamma_cdf, (x, shape, scale), 2)
    assert g == pytest.approx(np.sum(-x / scale * pdf), rel=1e-12)
    assert t == pytest.approx(np.sum(-x / scale * pdf), rel=1e-12)
    with pytest.raises(adgen.NonDifferentiableError, match="`a`"):
        adgen.grad(lambda_sum_gamma_cdf, wrt=1)(x, shape, scale)


def lambda_sum_gamma_cdf(x, shape, scale):
    return np.sum(gamma_cdf(x, shape, scale))


T_DF = 4.5  # the degrees of freedom: data (a differentiated df is refused)


def censored_t_loglik(mu, sigma, lower, upper):
    """Interval-censored Student t observations: sum log(F(zu) - F(zl))."""
    df = T_DF
    zu = (upper - mu) / sigma
    zl = (lower - mu) / sigma
    return np.sum(np.log(scipy.special.stdtr(df, zu) - scipy.special.stdtr(df, zl)))


def test_interval_censored_student_t_loglikelihood() -> None:
    lower = np.array([-1.0, 0.2, 0.5, 1.5, -2.5])
    upper = lower + np.array([0.7, 0.4, 1.1, 0.3, 2.0])
    mu, sigma, df = 0.3, 1.4, T_DF
    zu, zl = (upper - mu) / sigma, (lower - mu) / sigma
    fu, fl = scipy.stats.t.pdf(zu, df), scipy.stats.t.pdf(zl, df)
    mass = scipy.stats.t.cdf(zu, df) - scipy.stats.t.cdf(zl, df)
    d_mu = np.sum(-(fu - fl) / sigma / mass)
    d_sigma = np.sum(-(fu * zu - fl * zl) / sigma / mass)
    args = (mu, sigma, lower, upper)
    for wrt, expected in ((0, d_mu), (1, d_sigma)):
        g, t = both_modes(censored_t_loglik, args, wrt)
        assert g == pytest.approx(expected, rel=1e-10)
        assert t == pytest.approx(expected, rel=1e-10)
    check_grads(
        adgen.grad(censored_t_loglik, wrt=0), *args, wrt=[0, 1]
    )  # second order  # second order


def spherical_wave_energy(r, k, nmax):
    """sum_n (2n + 1) j_n(k r)^2 (which tends to 1): a partial-wave sum."""
    total = 0.0
    for n in range(nmax):
        total = total + (2.0 * n + 1.0) * scipy.special.spherical_jn(n, k * r) ** 2
    return total


def spherical_slope(z, n, second):
    return scipy.special.spherical_jn(n, z, derivative=second)


def test_spherical_bessel_partial_waves() -> None:
    r, k, nmax = 1.3, 2.0, 6
    n = np.arange(nmax)
    expected = np.sum(
        (2.0 * n + 1.0)
        * 2.0
        * scipy.special.spherical_jn(n, k * r)
        * scipy.special.spherical_jn(n, k * r, derivative=True)
        * k
    )
    assert adgen.grad(spherical_wave_energy)(r, k, nmax) == pytest.approx(expected, rel=1e-12)
    assert adgen.jvp(spherical_wave_energy, (r, k, nmax), (1.0, None, None))[1] == pytest.approx(
        expected, rel=1e-12
    )
    check_grads(adgen.grad(spherical_wave_energy), r, k, nmax, wrt=[0])


@pytest.mark.parametrize("n", [0, 1, 3])
def test_spherical_bessel_derivative_flag_chosen_at_run_time(n: int) -> None:
    """``derivative=`` a variable: the first derivative for False, the second for True (from
    the differential equation), against finite differences of SciPy's own derivative."""
    z, h = 1.7, 1e-6
    first = scipy.special.spherical_jn(n, z, derivative=True)
    second = (
        scipy.special.spherical_jn(n, z + h, derivative=True)
        - scipy.special.spherical_jn(n, z - h, derivative=True)
    ) / (2 * h)
    assert adgen.grad(spherical_slope)(z, n, False) == pytest.approx(first, rel=1e-12)
    assert adgen.grad(spherical_slope)(z, n, True) == pytest.approx(second, rel=1e-7)
    assert adgen.jvp(spherical_slope, (z, n, True), (1.0, None, None))[1] == pytest.approx(
        second, rel=1e-7
    )


def incomplete_beta_quantile(y, a, b):
    return scipy.special.betainc(a, b, scipy.special.betaincinv(a, b, y))


def test_inverse_and_function_compose_to_the_identity() -> None:
    y = np.array([0.1, 0.35, 0.8])
    g = adgen.grad(lambda_sum_beta_roundtrip)(y, 2.5, 1.5)
    assert g == pytest.approx(np.ones(3), rel=1e-9)
    tangent = adgen.jvp(incomplete_beta_quantile, (y, 2.5, 1.5), (np.ones(3), None, None))[1]
    assert tangent == pytest.approx(np.ones(3), rel=1e-9)


def lambda_sum_beta_roundtrip(y, a, b):
    return np.sum(incomplete_beta_quantile(y, a, b))


def student_t_quantile_width(df, p):
    return scipy.special.stdtrit(df, p) - scipy.special.stdtrit(df, 1.0 - p)


def test_student_t_quantile_derivative_is_one_over_the_density() -> None:
    df, p = 3.0, 0.9
    q = scipy.special.stdtrit(df, p)
    expected = 2.0 / scipy.stats.t.pdf(q, df)  # both quantiles move apart, symmetric density
    assert adgen.grad(student_t_quantile_width, wrt=1)(df, p) == pytest.approx(expected, rel=1e-10)
    assert math.isclose(
        adgen.jvp(student_t_quantile_width, (df, p), (None, 1.0))[1], expected, rel_tol=1e-10
    )


def tukey_lambda_cdf(x, lmbda):
    return scipy.special.tklmbda(x, lmbda)


@pytest.mark.parametrize("lmbda", [0.5, 1.5])
def test_tukey_lambda_derivative_is_zero_outside_the_support(lmbda: float) -> None:
    x = np.array([-1.0 / lmbda - 0.3, 1.0 / lmbda + 0.3])  # F is 0 and 1 there
    g = adgen.grad(sum_tukey_lambda_cdf)(x, lmbda)
    assert np.array_equal(g, np.zeros(2))
    assert np.array_equal(adgen.jvp(tukey_lambda_cdf, (x, lmbda), (np.ones(2), None))[1], [0, 0])


def sum_tukey_lambda_cdf(x, lmbda):
    return np.sum(tukey_lambda_cdf(x, lmbda))
