"""How much library code adgen differentiates as installed (issue 34's measure).

Functions and methods of statsmodels, SciPy and scikit-learn, each wrapped as a user would
(the data bound by a closure or a model), differentiated in both modes and compared with
central differences. Prints one line per function (OK, REFUSED with adgen's message, WRONG,
CRASH) and the count. Not a test: run it to measure, ``python tests/library_probe.py
[--first] [name-part ...]`` (needs the test extra: scikit-learn, statsmodels, SciPy).
"""

import sys
import traceback
import warnings

import numpy as np
import scipy.optimize as so
import scipy.special as sp
import scipy.stats as st
import sklearn.metrics as mt
import statsmodels.api as sm
from sklearn.metrics import pairwise as pw
from statsmodels.discrete import count_model, truncated_model
from statsmodels.discrete import discrete_model as dm

import adgen

warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
N, P = 30, 4
X = np.column_stack([np.ones(N), rng.normal(size=(N, P - 1))])
B = np.array([0.2, -0.4, 0.3, 0.1])
yb = (rng.random(N) < 1 / (1 + np.exp(-X @ B))).astype(float)
yc = rng.poisson(np.exp(X @ B)).astype(float)
yr = X @ B + 0.3 * rng.normal(size=N)
PR = np.array([0.1, -0.2, 0.25, 0.05])
cases = {}


def case(name):
    def d(fn):
        cases[name] = fn
        return fn

    return d


for nm, mk, pp in [
    ("sm.Logit", lambda: sm.Logit(yb, X), PR),
    ("sm.Probit", lambda: sm.Probit(yb, X), PR),
    ("sm.Poisson", lambda: sm.Poisson(yc, X), PR),
    ("sm.OLS", lambda: sm.OLS(yr, X), PR),
    ("sm.WLS", lambda: sm.WLS(yr, X, weights=np.linspace(1, 2, N)), PR),
    ("sm.GLS", lambda: sm.GLS(yr, X, sigma=np.linspace(1, 2, N)), PR),
    ("sm.NegBin", lambda: sm.NegativeBinomial(yc, X), np.r_[PR, 0.5]),
    ("sm.NegBinP", lambda: dm.NegativeBinomialP(yc, X), np.r_[PR, 0.5]),
    ("sm.GenPoisson", lambda: dm.GeneralizedPoisson(yc, X), np.r_[PR, 0.1]),
    ("sm.ZIP", lambda: count_model.ZeroInflatedPoisson(yc, X), np.r_[0.1, PR]),
    ("sm.ZINB", lambda: count_model.ZeroInflatedNegativeBinomialP(yc, X), np.r_[0.1, PR, 0.5]),
    ("sm.TruncPoisson", lambda: truncated_model.TruncatedLFPoisson(yc, X), PR),
    ("sm.HurdleCount", lambda: truncated_model.HurdleCountModel(yc, X), np.r_[PR, PR]),
    ("sm.GLM.Binomial", lambda: sm.GLM(yb, X, family=sm.families.Binomial()), PR),
    (
        "sm.GLM.Gamma",
        lambda: sm.GLM(np.exp(yr), X, family=sm.families.Gamma(sm.families.links.Log())),
        PR,
    ),
    ("sm.GLM.Poisson", lambda: sm.GLM(yc, X, family=sm.families.Poisson()), PR),
    (
        "sm.GLM.InvGauss",
        lambda: sm.GLM(np.exp(yr), X, family=sm.families.InverseGaussian(sm.families.links.Log())),
        PR,
    ),
    ("sm.MNLogit", lambda: sm.MNLogit(rng.integers(0, 3, N).astype(float), X), np.r_[PR, 0.5 * PR]),
]:

    def mkcase(mk=mk, pp=pp):
        m = mk()
        return m.loglike, pp

    cases[nm] = mkcase


@case("sm.OrderedModel.probit")
def _():
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    m = OrderedModel(rng.integers(0, 3, N).astype(float), X[:, 1:], distr="probit")
    return m.loglike, np.r_[PR[1:], -0.5, 0.3]


@case("sm.HuberT.rho")
def _():
    from statsmodels.robust import norms

    n = norms.HuberT()
    return (lambda z: np.sum(n.rho(z))), rng.normal(size=8) * 2


@case("sm.TukeyBiweight.rho")
def _():
    from statsmodels.robust import norms

    n = norms.TukeyBiweight()
    return (lambda z: np.sum(n.rho(z))), rng.normal(size=8) * 2


@case("sm.families.Binomial.loglike")
def _():
    fam = sm.families.Binomial()
    return (lambda mu: fam.loglike(yb, mu)), rng.uniform(0.2, 0.8, N)


@case("sm.links.Logit.inverse")
def _():
    link = sm.families.links.Logit()
    return (lambda z: np.sum(link.inverse(z) ** 2)), rng.normal(size=5)


@case("scipy.rosen")
def _():
    return so.rosen, rng.normal(size=5)


@case("scipy.logsumexp")
def _():
    return sp.logsumexp, rng.normal(size=5)


@case("scipy.log_softmax")
def _():
    return (lambda z: np.sum(sp.log_softmax(z) * np.arange(5))), rng.normal(size=5)


@case("scipy.norm.logpdf")
def _():
    return (lambda z: np.sum(st.norm.logpdf(z, loc=0.3, scale=2.0))), rng.normal(size=5)


@case("scipy.t.logpdf")
def _():
    return (lambda z: np.sum(st.t.logpdf(z, 4.0))), rng.normal(size=5)


@case("scipy.multivariate_normal.logpdf")
def _():
    return (
        lambda z: np.sum(st.multivariate_normal.logpdf(z, mean=np.zeros(3), cov=np.eye(3)))
    ), rng.normal(size=(4, 3))


@case("scipy.gamma.logpdf")
def _():
    return (lambda z: np.sum(st.gamma.logpdf(z, 2.0))), rng.uniform(0.5, 2, 5)


@case("scipy.huber")
def _():
    return (lambda z: np.sum(sp.huber(1.0, z))), rng.normal(size=5) * 2


@case("scipy.xlogy")
def _():
    return (lambda z: np.sum(sp.xlogy(z, z + 2))), rng.uniform(0.5, 2, 5)


@case("scipy.entropy")
def _():
    return (lambda z: st.entropy(z)), rng.uniform(0.5, 2, 5)


@case("scipy.distance.cdist.cityblock")
def _():
    from scipy.spatial import distance

    y = rng.normal(size=(3, 2))
    return (lambda z: np.sum(distance.cdist(z, y, "cityblock"))), rng.normal(size=(4, 2))


Yk = rng.normal(size=(4, 3))
for nm in [
    "linear_kernel",
    "rbf_kernel",
    "laplacian_kernel",
    "polynomial_kernel",
    "sigmoid_kernel",
    "cosine_similarity",
    "euclidean_distances",
    "manhattan_distances",
    "chi2_kernel",
    "additive_chi2_kernel",
    "cosine_distances",
    "nan_euclidean_distances",
    "paired_euclidean_distances",
]:

    def mkk(nm=nm):
        f = getattr(pw, nm)
        if "chi2" in nm:
            y = np.abs(Yk)
            return (lambda z: np.sum(f(z, y))), np.abs(rng.normal(size=(5, 3))) + 0.1
        if nm.startswith("paired"):
            return (lambda z: np.sum(f(z, Yk))), rng.normal(size=(4, 3))
        return (lambda z: np.sum(f(z, Yk))), rng.normal(size=(5, 3))

    cases["sk." + nm] = mkk
yt = rng.normal(size=N)
for nm in [
    "mean_squared_error",
    "mean_absolute_error",
    "r2_score",
    "explained_variance_score",
    "mean_pinball_loss",
    "mean_squared_log_error",
    "mean_tweedie_deviance",
    "d2_tweedie_score",
]:

    def mkm(nm=nm):
        f = getattr(mt, nm)
        if nm in ("mean_squared_log_error", "mean_tweedie_deviance", "d2_tweedie_score"):
            t = np.exp(yt)
            return (lambda z: f(t, z)), np.exp(rng.normal(size=N))
        return (lambda z: f(yt, z)), rng.normal(size=N)

    cases["sk." + nm] = mkm


@case("sk.log_loss")
def _():
    lab = rng.integers(0, 2, N)
    return (lambda z: mt.log_loss(lab, z)), rng.uniform(0.1, 0.9, N)


@case("sk.brier_score_loss")
def _():
    lab = rng.integers(0, 2, N)
    return (lambda z: mt.brier_score_loss(lab, z)), rng.uniform(0.1, 0.9, N)


@case("sk.GP.log_marginal_likelihood")
def _():
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF

    xg = rng.normal(size=(8, 2))
    yg = np.sin(xg[:, 0])
    gp = GaussianProcessRegressor(RBF(1.0), optimizer=None).fit(xg, yg)
    return (lambda th: gp.log_marginal_likelihood(th)), np.array([0.1])


@case("sk.RBF.__call__")
def _():
    from sklearn.gaussian_process.kernels import RBF

    k = RBF(1.5)
    return (lambda z: np.sum(k(z))), rng.normal(size=(4, 2))


@case("sk.extmath.softmax")
def _():
    from sklearn.utils.extmath import softmax

    return (lambda z: np.sum(softmax(z.copy()) * np.arange(3))), rng.normal(size=(4, 3))


@case("sk.LinearModelLoss")
def _():
    from sklearn._loss.loss import HalfBinomialLoss
    from sklearn.linear_model._linear_loss import LinearModelLoss

    loss = LinearModelLoss(HalfBinomialLoss(), fit_intercept=False)
    return (lambda w: loss.loss(w, X, yb)), PR


@case("sk.huber")
def _():
    from sklearn.linear_model._huber import _huber_loss_and_gradient as h

    return (lambda w: h(w, X, yr, 1.35, 1e-3, np.ones(N))[0]), np.r_[PR, 0.2, 1.3]


@case("sk.nmf._beta_divergence")
def _():
    from sklearn.decomposition._nmf import _beta_divergence

    Xn = np.abs(rng.normal(size=(5, 4)))
    H = np.abs(rng.normal(size=(2, 4)))
    return (lambda W: _beta_divergence(Xn, W, H, 1)), np.abs(rng.normal(size=(5, 2)))


@case("sk.gmm._estimate_log_gaussian_prob")
def _():
    from sklearn.mixture._gaussian_mixture import _estimate_log_gaussian_prob

    prec = np.array([np.eye(2), 2 * np.eye(2)])
    xm = rng.normal(size=(6, 2))
    return (lambda m: np.sum(_estimate_log_gaussian_prob(xm, m, prec, "full"))), rng.normal(
        size=(2, 2)
    )


@case("sk.tsne")
def _():
    from sklearn.manifold import _t_sne as t

    n = 6
    p = np.abs(rng.normal(size=15))
    p *= 0.5 / p.sum()
    return (lambda y: t._kl_divergence(y, p, 1.0, n, 2)[0]), rng.normal(size=12)


@case("sk.mlp.log_loss")
def _():
    from sklearn.neural_network import _base

    y = np.eye(3)[rng.integers(0, 3, 6)]
    return (lambda z: _base.log_loss(y, sp.softmax(z, axis=1))), rng.normal(size=(6, 3))


@case("sk.mlp.squared_loss")
def _():
    from sklearn.neural_network import _base

    y = rng.normal(size=(6, 2))
    return (lambda z: _base.squared_loss(y, z)), rng.normal(size=(6, 2))


# more functions, and harder ones: tests/library_probe_more.py (``python
# tests/library_probe.py --first`` runs the first 67 alone)
if "--first" in sys.argv:
    sys.argv.remove("--first")
else:
    from library_probe_more import cases as more

    cases.update({name: mk for name, mk in more.items() if name not in cases})


def fd(f, x, h=1e-6):
    g = np.zeros(x.size)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        e = e.reshape(x.shape)
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g.reshape(x.shape)


only = sys.argv[1:]
res = {}
for name, mk in cases.items():
    if only and not any(o in name for o in only):
        continue
    try:
        f, x = mk()
    except Exception as e:
        res[name] = "setup " + repr(e)[:80]
        print(f"{name:40s} SETUP {e!r}"[:200])
        continue
    try:
        g = adgen.grad(f)(x)
        want = fd(f, x)
        ok = np.allclose(g, want, rtol=1e-4, atol=1e-5)
        v = np.linspace(-1, 1, x.size).reshape(x.shape)
        t = adgen.jvp(f, (x,), (v,))[1]
        ok2 = np.allclose(t, np.sum(want * v), rtol=1e-4, atol=1e-5)
        st_ = "OK" if ok and ok2 else f"WRONG {np.max(np.abs(g - want))}"
    except adgen.AdgenError as e:
        st_ = "REFUSED " + str(e).replace("\n", " | ")[:300]
    except Exception as e:
        st_ = "CRASH " + repr(e)[:200]
        if only:
            traceback.print_exc()
    res[name] = st_
    print(f"{name:40s} {st_}", flush=True)
print("OK", sum(v == "OK" for v in res.values()), "of", len(res))
