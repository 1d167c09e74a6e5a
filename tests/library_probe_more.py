"""More library functions as installed, for tests/library_probe.py (issue 34's measure):
statsmodels' GLM families, count and beta models, robust norms and links; SciPy's
distributions, special functions and distances; scikit-learn's kernels, metrics, mixture
and NMF helpers and fitted estimators (the first part), and harder cases -- models with
penalties, mixed and conditional models, neural networks, Gaussian processes (the second).
Each entry makes ``(function of one array, point)``; the probe differentiates it in both
modes against central differences. Not a test: ``python tests/library_probe.py``."""

# ruff: noqa: E731

import warnings

import numpy as np
import scipy.linalg as sl
import scipy.optimize as so
import scipy.special as sp
import scipy.stats as st
import sklearn.metrics as mt
import statsmodels.api as sm
from sklearn.metrics import pairwise as pw

warnings.simplefilter("ignore")
rng = np.random.default_rng(1)
N, P = 30, 4
X = np.column_stack([np.ones(N), rng.normal(size=(N, P - 1))])
B = np.array([0.2, -0.4, 0.3, 0.1])
yc = rng.poisson(np.exp(X @ B)).astype(float)
yp = np.exp(X @ B) * rng.gamma(2.0, 0.5, N)
yr = X @ B + 0.3 * rng.normal(size=N)
PR = np.array([0.1, -0.2, 0.25, 0.05])
cases = {}


def case(name):
    def d(fn):
        cases[name] = fn
        return fn

    return d


F = sm.families
for nm, mk in [
    ("sm.GLM.Gamma.log", lambda: sm.GLM(yp, X, family=F.Gamma(F.links.Log()))),
    ("sm.GLM.Gaussian", lambda: sm.GLM(yr, X, family=F.Gaussian())),
    ("sm.GLM.NegBin", lambda: sm.GLM(yc, X, family=F.NegativeBinomial(alpha=0.7))),
    ("sm.GLM.Tweedie", lambda: sm.GLM(yp, X, family=F.Tweedie(var_power=1.5))),
    ("sm.GLM.InvGauss", lambda: sm.GLM(yp, X, family=F.InverseGaussian(F.links.Log()))),
    (
        "sm.GLM.Poisson.offset",
        lambda: sm.GLM(yc, X, family=F.Poisson(), offset=np.linspace(0, 0.3, N)),
    ),
    ("sm.NegBin.nb1", lambda: sm.NegativeBinomial(yc, X, loglike_method="nb1")),
    ("sm.NegBin.geometric", lambda: sm.NegativeBinomial(yc, X, loglike_method="geometric")),
]:

    def mkg(mk=mk, nm=nm):
        m = mk()
        p = np.r_[PR, 0.5] if nm == "sm.NegBin.nb1" else PR
        return m.loglike, p

    cases[nm] = mkg


@case("sm.BetaModel")
def _():
    from statsmodels.othermod.betareg import BetaModel

    y = 1 / (1 + np.exp(-(X @ B))) * 0.8 + 0.1
    m = BetaModel(y, X)
    return m.loglike, np.r_[PR, 1.5]


@case("sm.TLinearModel")
def _():
    from statsmodels.miscmodels.tmodel import TLinearModel

    m = TLinearModel(yr, X)
    return m.loglike, np.r_[PR, 5.0, 0.5]


for nm in ["Hampel", "AndrewWave", "RamsayE", "TrimmedMean", "LeastSquares", "MQuantileNorm"]:

    def mkn(nm=nm):
        from statsmodels.robust import norms

        n = (
            getattr(norms, nm)()
            if nm != "MQuantileNorm"
            else norms.MQuantileNorm(0.3, norms.HuberT())
        )
        return (lambda z: np.sum(n.rho(z))), rng.normal(size=8) * 1.3

    cases["sm.norms." + nm] = mkn
for nm in ["Probit", "CLogLog", "Log", "Power", "LogC", "CDFLink", "NegativeBinomial", "Cauchy"]:

    def mkl(nm=nm):
        L = getattr(F.links, nm)()
        return (lambda z: np.sum(L.inverse(z)) + np.sum(L.inverse_deriv(z))), rng.uniform(
            -0.5, -0.1, 6
        )

    cases["sm.links." + nm] = mkl


@case("sm.families.Poisson.deviance")
def _():
    fam = F.Poisson()
    return (lambda mu: fam.deviance(yc, mu)), np.exp(X @ PR)


@case("sm.families.Gamma.loglike")
def _():
    fam = F.Gamma()
    return (lambda mu: fam.loglike(yp, mu, scale=1.3)), np.exp(X @ PR)


@case("scipy.beta.logpdf")
def _():
    return (lambda z: np.sum(st.beta.logpdf(z, 2.0, 3.0))), rng.uniform(0.2, 0.8, 5)


@case("scipy.lognorm.logpdf")
def _():
    return (lambda z: np.sum(st.lognorm.logpdf(z, 0.7))), rng.uniform(0.5, 2, 5)


@case("scipy.dirichlet.logpdf")
def _():
    a = np.array([1.5, 2.0, 3.0])
    return (lambda z: st.dirichlet.logpdf(np.r_[z, 1 - np.sum(z)], a)), np.array([0.2, 0.3])


@case("scipy.multivariate_t.logpdf")
def _():
    return (
        lambda z: np.sum(st.multivariate_t.logpdf(z, np.zeros(3), np.eye(3) * 2, df=4))
    ), rng.normal(size=(4, 3))


@case("scipy.poisson.logpmf.mu")
def _():
    return (lambda m: np.sum(st.poisson.logpmf(yc, m))), np.exp(X @ PR)


@case("scipy.binom.logpmf.p")
def _():
    return (lambda p: np.sum(st.binom.logpmf(3, 10, p))), rng.uniform(0.2, 0.8, 4)


@case("scipy.vonmises.logpdf")
def _():
    return (lambda z: np.sum(st.vonmises.logpdf(z, 2.0))), rng.uniform(-1, 1, 5)


@case("scipy.logistic.logpdf")
def _():
    return (lambda z: np.sum(st.logistic.logpdf(z, loc=0.3, scale=1.2))), rng.normal(size=5)


@case("scipy.norm.logcdf")
def _():
    return (lambda z: np.sum(st.norm.logcdf(z))), rng.normal(size=5)


@case("scipy.mvn.frozen")
def _():
    d = st.multivariate_normal(np.zeros(3), np.diag([1.0, 2.0, 3.0]))
    return (lambda z: np.sum(d.logpdf(z))), rng.normal(size=(4, 3))


@case("scipy.kde.logpdf")
def _():
    k = st.gaussian_kde(rng.normal(size=50))
    return (lambda z: np.sum(k.logpdf(z))), rng.normal(size=3)


@case("scipy.softmax")
def _():
    return (lambda z: np.sum(sp.softmax(z, axis=1) ** 2)), rng.normal(size=(3, 4))


@case("scipy.log_expit")
def _():
    return (lambda z: np.sum(sp.log_expit(z))), rng.normal(size=5)


@case("scipy.rosen_der")
def _():
    return (lambda z: np.sum(so.rosen_der(z) * np.arange(5.0))), rng.normal(size=5)


@case("scipy.rosen_hess_prod")
def _():
    return (lambda z: np.sum(so.rosen_hess_prod(z, np.ones(5)))), rng.normal(size=5)


@case("scipy.expm")
def _():
    return (lambda z: np.sum(sl.expm(z))), rng.normal(size=(3, 3)) * 0.3


@case("scipy.logsumexp.b")
def _():
    return (lambda z: sp.logsumexp(z, b=np.arange(1.0, 6.0))), rng.normal(size=5)


@case("scipy.pdist.sqeuclidean")
def _():
    from scipy.spatial import distance

    return (lambda z: np.sum(distance.pdist(z, "sqeuclidean"))), rng.normal(size=(4, 2))


@case("scipy.distance.euclidean")
def _():
    from scipy.spatial import distance

    v = rng.normal(size=3)
    return (lambda z: distance.euclidean(z, v)), rng.normal(size=3)


for nm in ["Matern", "RationalQuadratic", "DotProduct", "ExpSineSquared"]:

    def mkk(nm=nm):
        from sklearn.gaussian_process import kernels

        k = getattr(kernels, nm)()
        return (lambda z: np.sum(k(z))), rng.normal(size=(4, 2))

    cases["sk.kernel." + nm] = mkk


@case("sk.kernel.theta.RBF")
def _():
    from sklearn.gaussian_process.kernels import RBF

    Xd = rng.normal(size=(5, 2))
    k = RBF(1.0)
    return (lambda th: np.sum(k.clone_with_theta(th)(Xd))), np.array([0.3])


for nm in [
    "mean_poisson_deviance",
    "mean_gamma_deviance",
    "max_error",
    "mean_absolute_percentage_error",
]:

    def mkm(nm=nm):
        f = getattr(mt, nm)
        t = np.exp(rng.normal(size=N))
        return (lambda z: f(t, z)), np.exp(rng.normal(size=N))

    cases["sk." + nm] = mkm


@case("sk.pairwise_kernels.rbf")
def _():
    y = rng.normal(size=(3, 2))
    return (lambda z: np.sum(pw.pairwise_kernels(z, y, metric="rbf", gamma=0.5))), rng.normal(
        size=(4, 2)
    )


@case("sk.pairwise_distances")
def _():
    y = rng.normal(size=(3, 2))
    return (lambda z: np.sum(pw.pairwise_distances(z, y))), rng.normal(size=(4, 2))


@case("sk.haversine")
def _():
    y = rng.uniform(-1, 1, size=(3, 2))
    return (lambda z: np.sum(pw.haversine_distances(z, y))), rng.uniform(-1, 1, size=(4, 2))


@case("sk.row_norms")
def _():
    from sklearn.utils.extmath import row_norms

    return (lambda z: np.sum(row_norms(z, squared=True)) + np.sum(row_norms(z))), rng.normal(
        size=(4, 3)
    )


@case("sk.fast_logdet")
def _():
    from sklearn.utils.extmath import fast_logdet

    A = rng.normal(size=(3, 3))
    return (lambda z: fast_logdet(A @ A.T + np.diag(z))), np.array([1.0, 2.0, 3.0])


@case("sk.covariance.log_likelihood")
def _():
    from sklearn.covariance import log_likelihood

    S = np.cov(rng.normal(size=(3, 20)))
    return (lambda d: log_likelihood(S, np.eye(3) + np.diag(d))), np.array([0.1, 0.2, 0.3])


@case("sk.gmm.diag")
def _():
    from sklearn.mixture._gaussian_mixture import (
        _compute_precision_cholesky,
        _estimate_log_gaussian_prob,
    )

    Xd = rng.normal(size=(6, 2))
    cov = np.array([[1.0, 2.0], [0.5, 1.5]])
    pc = _compute_precision_cholesky(cov, "diag")
    return (lambda m: np.sum(_estimate_log_gaussian_prob(Xd, m, pc, "diag"))), rng.normal(
        size=(2, 2)
    )


@case("sk.gmm.spherical")
def _():
    from sklearn.mixture._gaussian_mixture import (
        _compute_precision_cholesky,
        _estimate_log_gaussian_prob,
    )

    Xd = rng.normal(size=(6, 2))
    cov = np.array([1.0, 2.0])
    pc = _compute_precision_cholesky(cov, "spherical")
    return (lambda m: np.sum(_estimate_log_gaussian_prob(Xd, m, pc, "spherical"))), rng.normal(
        size=(2, 2)
    )


@case("sk.nmf.KL")
def _():
    from sklearn.decomposition._nmf import _beta_divergence

    Xd = np.abs(rng.normal(size=(4, 3))) + 0.1
    H = np.abs(rng.normal(size=(2, 3))) + 0.1
    return (lambda W: _beta_divergence(Xd, W, H, 1)), np.abs(rng.normal(size=(4, 2))) + 0.1


@case("sk.nmf.IS")
def _():
    from sklearn.decomposition._nmf import _beta_divergence

    Xd = np.abs(rng.normal(size=(4, 3))) + 0.1
    H = np.abs(rng.normal(size=(2, 3))) + 0.1
    return (lambda W: _beta_divergence(Xd, W, H, "itakura-saito")), np.abs(
        rng.normal(size=(4, 2))
    ) + 0.1


@case("sk.mlp.binary_log_loss")
def _():
    from sklearn.neural_network import _base

    y = (rng.random((6, 1)) < 0.5).astype(float)
    return (lambda z: _base.binary_log_loss(y, z)), rng.uniform(0.1, 0.9, (6, 1))


@case("sk.StandardScaler.transform")
def _():
    from sklearn.preprocessing import StandardScaler

    s = StandardScaler().fit(rng.normal(size=(10, 3)))
    return (lambda z: np.sum(s.transform(z) ** 2)), rng.normal(size=(4, 3))


@case("sk.PCA.transform")
def _():
    from sklearn.decomposition import PCA

    s = PCA(2).fit(rng.normal(size=(10, 3)))
    return (lambda z: np.sum(s.transform(z) ** 2)), rng.normal(size=(4, 3))


@case("sk.Ridge.predict")
def _():
    from sklearn.linear_model import Ridge

    s = Ridge().fit(X, yr)
    return (lambda z: np.sum(s.predict(z) ** 2)), rng.normal(size=(4, 4))


@case("sk.LogReg.predict_proba")
def _():
    from sklearn.linear_model import LogisticRegression

    s = LogisticRegression().fit(X, (yr > 0).astype(int))
    return (lambda z: np.sum(s.predict_proba(z)[:, 1])), rng.normal(size=(4, 4))


# -- harder cases ------------------------------------------------------------------------
rng4 = np.random.default_rng(2)


@case("sk.MLPRegressor._loss_grad_lbfgs")
def _():
    from sklearn.neural_network import MLPRegressor

    X = rng4.normal(size=(12, 3))
    y = rng4.normal(size=12)
    m = MLPRegressor(hidden_layer_sizes=(4,), max_iter=5, random_state=0).fit(X, y)
    # the setup _fit_lbfgs makes
    layer_units = [X.shape[1]] + [4] + [1]
    activations = [X] + [None] * (len(layer_units) - 1)
    deltas = [None] * (len(activations) - 1)
    coef_grads = [np.empty((a, b)) for a, b in zip(layer_units[:-1], layer_units[1:])]
    intercept_grads = [np.empty(b) for b in layer_units[1:]]
    m._coef_indptr = []
    start = 0
    for i in range(len(layer_units) - 1):
        n_fan_in, n_fan_out = layer_units[i], layer_units[i + 1]
        end = start + n_fan_in * n_fan_out
        m._coef_indptr.append((start, end, (n_fan_in, n_fan_out)))
        start = end
    m._intercept_indptr = []
    for i in range(len(layer_units) - 1):
        end = start + layer_units[i + 1]
        m._intercept_indptr.append((start, end))
        start = end
    w0 = np.hstack([c.ravel() for c in m.coefs_] + [b.ravel() for b in m.intercepts_])
    yy = y.reshape(-1, 1)
    return (
        lambda w: m._loss_grad_lbfgs(
            w, X, yy, None, activations, deltas, coef_grads, intercept_grads
        )[0]
    ), w0


@case("sm.PHReg.loglike")
def _():
    import statsmodels.api as sm

    X = rng4.normal(size=(30, 2))
    t = rng4.exponential(size=30)
    st_ = (rng4.random(30) < 0.7).astype(float)
    m = sm.PHReg(t, X, status=st_)
    return m.loglike, np.array([0.2, -0.3])


@case("sm.PHReg.breslow_ties_efron")
def _():
    import statsmodels.api as sm

    X = rng4.normal(size=(30, 2))
    t = np.round(rng4.exponential(size=30), 1)
    st_ = (rng4.random(30) < 0.7).astype(float)
    m = sm.PHReg(t, X, status=st_, ties="efron")
    return m.loglike, np.array([0.2, -0.3])


@case("sm.MixedLM.loglike")
def _():
    import statsmodels.api as sm

    n = 40
    g = np.repeat(np.arange(8), 5)
    X = np.column_stack([np.ones(n), rng4.normal(size=n)])
    y = X @ [1.0, 0.5] + rng4.normal(size=8)[g] + rng4.normal(size=n)
    m = sm.MixedLM(y, X, groups=g)
    m.cov_pen = None
    m.fe_pen = None
    m._cov_sing = 0
    from statsmodels.regression.mixed_linear_model import MixedLMParams

    def f(p):
        return m.loglike(MixedLMParams.from_components(p[:2], np.array([[p[2]]])), profile_fe=False)

    return f, np.array([1.0, 0.4, 0.8])


@case("sm.ConditionalLogit.loglike")
def _():
    from statsmodels.discrete.conditional_models import ConditionalLogit

    n = 40
    g = np.repeat(np.arange(10), 4)
    X = rng4.normal(size=(n, 2))
    y = (rng4.random(n) < 0.5).astype(float)
    m = ConditionalLogit(y, X, groups=g)
    return m.loglike, np.array([0.2, -0.1])


@case("sm.GLMGam.loglike")
def _():
    from statsmodels.gam.api import BSplines, GLMGam

    x = rng4.uniform(0, 1, size=(50, 1))
    y = np.sin(3 * x[:, 0]) + 0.1 * rng4.normal(size=50)
    bs = BSplines(x, df=[5], degree=[3])
    m = GLMGam(y, smoother=bs, alpha=[0.5])
    return m.loglike, rng4.normal(size=m.exog.shape[1]) * 0.1


@case("sm.Logit.loglike_and_score")
def _():
    import statsmodels.api as sm

    X = np.column_stack([np.ones(30), rng4.normal(size=(30, 2))])
    y = (rng4.random(30) < 0.5).astype(float)
    m = sm.Logit(y, X)
    return (lambda b: m.loglike(b) + np.sum(m.score(b) ** 2)), np.array([0.1, 0.2, -0.3])


@case("sm.OLS.loglike.hessian")
def _():
    import statsmodels.api as sm

    X = np.column_stack([np.ones(30), rng4.normal(size=(30, 2))])
    y = X @ [1, 2, 3.0] + rng4.normal(size=30)
    m = sm.GLM(y, X, family=sm.families.Poisson())
    return (lambda b: np.sum(m.hessian(b))), np.array([0.1, 0.02, -0.03])


@case("sk.kernel.RBF.theta_setter")
def _():
    from sklearn.gaussian_process.kernels import RBF

    Xd = rng4.normal(size=(5, 2))
    k = RBF(1.0)

    def f(th):
        k.theta = th
        return np.sum(k(Xd))

    return f, np.array([0.3])


@case("sk.GP.lml")
def _():
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, WhiteKernel

    Xd = rng4.normal(size=(8, 2))
    y = np.sin(Xd[:, 0])
    gp = GaussianProcessRegressor(RBF(1.0) + WhiteKernel(0.1), optimizer=None).fit(Xd, y)
    return (lambda th: gp.log_marginal_likelihood(th)), np.array([0.1, -1.0])


@case("scipy.optimize.curve_fit_model")
def _():

    t = np.linspace(0, 1, 10)
    y = np.exp(-t)
    return (lambda p: np.sum((p[0] * np.exp(-p[1] * t) - y) ** 2)), np.array([1.1, 0.9])


@case("sm.tsa.arma_loglike")
def _():
    from statsmodels.tsa.arima_process import arma_acovf

    return (lambda p: np.sum(arma_acovf(np.r_[1, -p[0]], np.r_[1, p[1]], nobs=5))), np.array(
        [0.5, 0.2]
    )


@case("sm.robust.scale.Huber")
def _():
    from statsmodels.robust.scale import mad

    return (lambda z: mad(z)), rng4.normal(size=9)


@case("sm.stats.weightstats.DescrStatsW")
def _():
    from statsmodels.stats.weightstats import DescrStatsW

    data = rng4.normal(size=10)

    def f(w):
        d = DescrStatsW(data, weights=w)
        return d.mean + d.var

    return f, rng4.uniform(0.5, 1.5, 10)


@case("sk.metrics.log_loss.multiclass")
def _():
    import sklearn.metrics as mt

    lab = np.array([0, 1, 2, 1, 0, 2])

    def f(z):
        p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
        return mt.log_loss(lab, p)

    return f, rng4.normal(size=(6, 3))


@case("sk.metrics.ndcg_like.r2_multioutput")
def _():
    import sklearn.metrics as mt

    yt = rng4.normal(size=(8, 2))
    return (lambda z: mt.r2_score(yt, z, multioutput="variance_weighted")), rng4.normal(size=(8, 2))


@case("sk.kernel_ridge.predict")
def _():
    from sklearn.kernel_ridge import KernelRidge

    X = rng4.normal(size=(10, 2))
    y = np.sin(X[:, 0])
    m = KernelRidge(kernel="rbf", gamma=0.5).fit(X, y)
    return (lambda z: np.sum(m.predict(z))), rng4.normal(size=(3, 2))


@case("sk.GaussianMixture.score_samples")
def _():
    from sklearn.mixture import GaussianMixture

    X = rng4.normal(size=(30, 2))
    m = GaussianMixture(2, random_state=0).fit(X)
    return (lambda z: np.sum(m.score_samples(z))), rng4.normal(size=(4, 2))


@case("sk.SVR.predict_rbf")
def _():
    from sklearn.svm import SVR

    X = rng4.normal(size=(10, 2))
    y = np.sin(X[:, 0])
    m = SVR(gamma=0.5).fit(X, y)
    return (
        lambda z: np.sum(
            m.decision_function(z) if hasattr(m, "decision_function") else m.predict(z)
        )
    ), rng4.normal(size=(3, 2))


@case("sk.MLPRegressor.predict")
def _():
    from sklearn.neural_network import MLPRegressor

    X = rng4.normal(size=(12, 3))
    y = rng4.normal(size=12)
    m = MLPRegressor(hidden_layer_sizes=(4,), max_iter=50, random_state=0).fit(X, y)
    return (lambda z: np.sum(m.predict(z))), rng4.normal(size=(2, 3))


# SciPy's descriptive statistics behind its axis and NaN policy, as installed
import scipy.stats as _ss  # noqa: E402


def _statistic_case(name, make):
    @case(f"scipy.stats.{name}")
    def _():
        x = rng4.gamma(2.0, 1.0, size=15) + 0.5
        return make(), x


_statistic_case("skew", lambda: lambda x: _ss.skew(x))
_statistic_case("kurtosis.bias", lambda: lambda x: _ss.kurtosis(x, bias=False))
_statistic_case("sem.ddof", lambda: lambda x: _ss.sem(x, ddof=2))
_statistic_case("kstat", lambda: lambda x: _ss.kstat(x, 3))
_statistic_case("kstatvar", lambda: lambda x: _ss.kstatvar(x))
_statistic_case("circmean", lambda: lambda x: _ss.circmean(x))
_statistic_case("zscore", lambda: lambda x: np.sum(_ss.zscore(x) ** 3))
_statistic_case("gmean", lambda: lambda x: _ss.gmean(x))
_statistic_case("tvar", lambda: lambda x: _ss.tvar(x))
_statistic_case("variation", lambda: lambda x: _ss.variation(x))
_statistic_case("median_abs_deviation", lambda: lambda x: _ss.median_abs_deviation(x))
_statistic_case("iqr", lambda: lambda x: _ss.iqr(x))
