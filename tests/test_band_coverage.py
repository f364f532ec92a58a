"""Coverage of the bootstrap sup-t bands, by simulation from a known binormal model.

Model: positives' scores ~ N(mu, 1), negatives' ~ N(0, 1), discretised on ``K`` equally spaced
thresholds (the lowest bin takes the whole lower tail). Each simulated test set is one
multinomial draw of per-bin counts per class, so a replicate costs O(K). The *true* curves are
those of this discretised population, computed here independently of the package with scipy:

* ROC: linear interpolation through ``(0, 0)`` and ``(Phi(-t), Phi(mu - t))`` at the thresholds;
* AP(eta): ``sum_k dT_k * prec_k(eta)`` (the population value of the step AP);
* PR-AUC(eta): the Davis-Goadrich interpolated area, integrated along each ROC segment with
  ``scipy.integrate.quad_vec`` (adaptive, tolerance 1e-10);
* max-F1(eta): the largest F1 over the thresholds (F1 is monotone along a ROC segment);
* PR curve at eta: precision at recall r on the interpolated ROC.

``test_reference_*`` check this reference against the continuous binormal integrals.

Monte-Carlo error: with R outer replicates the observed coverage has s.d.
``sqrt(0.95 * 0.05 / R)`` = 0.015 at R = 200, so asserting >= 0.90 at nominal 0.95 leaves
3.2 s.d. (a correct band fails the test with probability < 1e-3); a band whose real coverage is
0.85 passes with probability < 1e-3 too. The assertions are on the regimes where the bands are
claimed valid; the regime where they are not (prevalences whose estimate rests on fewer than
``MIN_FP_SUPPORT`` false positives) is asserted to be *flagged* and the failure there is
asserted as well, so the documentation (docs/statistics.md, "Coverage") cannot go stale.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from mlflow_imbalance import RocCounts
from mlflow_imbalance import uncertainty as u

R_OUTER = 200
B_BOOT = 200
R_COST = 150
MC_FLOOR = 0.90  # nominal 0.95 minus 3.2 Monte-Carlo s.d. at R = 200 (see module docstring)


# ---------------------------------------------------------------------------- the reference
def binormal_model(mu: float, k: int = 120, low: float = -4.0, span: float = 4.0) -> dict:
    """Discretised binormal population: thresholds (descending), cumulative T, F, bin masses."""
    thr = np.linspace(low, mu + span, k)[::-1]
    t = stats.norm.sf(thr - mu)
    f = stats.norm.sf(thr)
    t[-1] = f[-1] = 1.0  # lowest bin takes the lower tail
    return {
        "mu": mu,
        "thr": thr,
        "T": t,
        "F": f,
        "pp": np.diff(t, prepend=0.0),
        "pn": np.diff(f, prepend=0.0),
    }


def true_curves(
    m: dict, fpr_grid: np.ndarray, eta: np.ndarray, recall_grid: np.ndarray, pr_eta: float
) -> dict[str, np.ndarray]:
    """The population curves of the discretised model (independent of the package)."""
    tz, fz = np.r_[0.0, m["T"]], np.r_[0.0, m["F"]]
    dt, df = np.diff(tz), np.diff(fz)
    o = (eta / (1 - eta))[:, None]
    t, f = m["T"][None, :], m["F"][None, :]
    ap = (o * t / (o * t + f)) @ dt
    max_f1 = np.max(2 * o * t / (o + o * t + f), axis=1)

    def prec_along(s: float) -> np.ndarray:
        ts, fs = tz[:-1] + s * dt, fz[:-1] + s * df
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(ts > 0, o * ts / (o * ts + fs), o * dt / (o * dt + df))
        return p @ dt

    pr_auc, _ = integrate.quad_vec(prec_along, 0.0, 1.0, epsabs=1e-10, epsrel=1e-10)
    op = pr_eta / (1 - pr_eta)
    fq = np.interp(recall_grid, tz, fz)
    return {
        "roc": np.interp(fpr_grid, fz, tz),
        "ap": ap,
        "pr_auc": np.asarray(pr_auc),
        "max_f1": max_f1,
        "pr": op * recall_grid / (op * recall_grid + fq),
    }


def skewed_model(k: int = 25) -> dict:
    """Skewed, heavily tied population: 25 score levels (every score is a tie of thousands),
    negatives geometric from the bottom (exp(-0.35 s)), positives piled at the top with a long
    lower tail; ROC-AUC 0.984. Same keys as :func:`binormal_model`."""
    s = np.arange(k, dtype=float)[::-1]  # descending thresholds
    pn = np.exp(-0.35 * s)
    pn /= pn.sum()
    pp = np.exp(-0.5 * (k - 1 - s) ** 0.8) + 0.02 * np.exp(-0.2 * s)
    pp /= pp.sum()
    t, f = np.cumsum(pp), np.cumsum(pn)
    t[-1] = f[-1] = 1.0
    return {"mu": None, "thr": s, "T": t, "F": f, "pp": pp, "pn": pn}


def mixture_model(k: int = 6000, low: float = -9.0, high: float = 15.0) -> dict:
    """Heavy-tailed, gradient-boosted-like scores (log-odds scale), quasi-continuous.

    Negatives: 0.97 N(-3, 1) + 0.03 Laplace(0, 1) (a small heavy-tailed share of hard
    negatives scoring high); positives: 0.7 N(2, 1) + 0.3 Laplace(0, 1.5) (a third of them
    poorly separated, with a long tail both ways). ``k`` equally spaced levels on [low, high]
    (step 0.004 by default: at 10^6 negatives almost no ties above the top 1 %), so it stands
    for continuous scores. Same keys as :func:`binormal_model`."""
    thr = np.linspace(low, high, k)[::-1]
    f = 0.97 * stats.norm.sf(thr + 3.0) + 0.03 * stats.laplace.sf(thr)
    t = 0.7 * stats.norm.sf(thr - 2.0) + 0.3 * stats.laplace.sf(thr, scale=1.5)
    t[-1] = f[-1] = 1.0
    return {
        "mu": None,
        "thr": thr,
        "T": t,
        "F": f,
        "pp": np.diff(t, prepend=0.0),
        "pn": np.diff(f, prepend=0.0),
    }


def continuous_binormal(mu: float = 2.0) -> dict:
    """Binormal with 6,000 score levels on [-8, mu + 8] (step 0.003): continuous scores for the
    coverage study (ties among the top 10^4 of 10^6 negatives are rare)."""
    return binormal_model(mu, k=6000, low=-8.0, span=8.0)


def draw_counts(rng: np.random.Generator, m: dict, n_pos: int, n_neg: int, r: int) -> list:
    """``r`` test sets from the model as RocCounts (empty bins dropped)."""
    pos = rng.multinomial(n_pos, m["pp"], size=r)
    neg = rng.multinomial(n_neg, m["pn"], size=r)
    out = []
    for p, n in zip(pos, neg, strict=True):
        keep = (p + n) > 0
        out.append(RocCounts(m["thr"][keep], np.cumsum(p[keep]), np.cumsum(n[keep]), n_pos, n_neg))
    return out


def covers(band: u.Band, truth: np.ndarray, mask: np.ndarray | None = None) -> bool:
    """True curve inside the band at every (masked) grid point."""
    ok = (band.low <= truth + 1e-12) & (truth <= band.high + 1e-12)
    return bool(np.all(ok if mask is None else ok[mask]))


# ---------------------------------------------------------------------------- reference checks
def test_reference_matches_continuous_binormal():
    """Fine discretisation -> the continuous binormal AUC, AP and ROC (closed form / quad)."""
    mu = 1.5
    m = binormal_model(mu, k=4000, low=-8.0, span=8.0)
    f = np.array([1e-3, 0.01, 0.1, 0.5])
    eta = np.array([1e-3, 0.05, 0.5])
    ref = true_curves(m, f, eta, np.array([0.5]), 0.5)
    np.testing.assert_allclose(ref["roc"], stats.norm.sf(stats.norm.isf(f) - mu), atol=2e-3)
    for j, e in enumerate(eta):
        o = e / (1 - e)

        def prec(x, o=o):
            tt, ff = stats.norm.sf(x - mu), stats.norm.sf(x)
            return o * tt / (o * tt + ff) * stats.norm.pdf(x - mu)

        ap_cont = integrate.quad(prec, -12, 12 + mu, limit=200)[0]
        assert abs(ref["ap"][j] - ap_cont) < 3e-3
        assert abs(ref["pr_auc"][j] - ap_cont) < 3e-3
    # ROC-AUC of the binormal model is Phi(mu / sqrt 2)
    tz, fz = np.r_[0, m["T"]], np.r_[0, m["F"]]
    auc = np.sum(np.diff(fz) * (tz[1:] + tz[:-1]) / 2)
    assert abs(auc - stats.norm.cdf(mu / np.sqrt(2))) < 1e-4


def test_reference_large_sample_estimates_converge():
    """Our estimates on a huge test set approach the reference (so the target is the same)."""
    m = binormal_model(2.0)
    eta = np.array([1e-3, 0.01, 0.3])
    c = draw_counts(np.random.default_rng(0), m, 10**6, 10**7, 1)[0]
    ref = true_curves(m, np.array([0.01]), eta, np.array([0.5]), 0.01)
    for key in ("ap", "pr_auc", "max_f1"):
        est = u.prevalence_band(c, key, eta, n_boot=2, seed=0).estimate
        np.testing.assert_allclose(est, ref[key], atol=3e-3)


# ---------------------------------------------------------------------------- coverage
@pytest.fixture(scope="module")
def sets_200_1e4() -> tuple[dict, list]:
    m = binormal_model(2.0)
    return m, draw_counts(np.random.default_rng(20240611), m, 200, 10_000, R_OUTER)


def test_roc_band_simultaneous_coverage(sets_200_1e4):
    """ROC band, default grid (100 log-spaced FPRs from 1/n_neg to 1): coverage >= 0.90.

    Before the binomial scale floor this was 0.07: where TPR_hat = 1 at high FPR every replicate
    is 1 and the band collapsed onto the estimate.
    """
    m, sets = sets_200_1e4
    grid = np.logspace(-4, 0, 100)
    truth = true_curves(m, grid, np.array([0.5]), np.array([0.5]), 0.5)["roc"]
    hits = [covers(u.roc_band(c, n_boot=B_BOOT, seed=i), truth) for i, c in enumerate(sets)]
    assert np.allclose(u.roc_band(sets[0], n_boot=2).grid, grid)
    assert np.mean(hits) >= MC_FLOOR, np.mean(hits)


def test_prevalence_bands_coverage_where_supported(sets_200_1e4):
    """The earlier count-bootstrap band (``construction="bootstrap"``): AP, PR-AUC, max-F1 vs
    eta, coverage >= 0.90 over the supported part of the grid."""
    m, sets = sets_200_1e4
    eta = np.logspace(-4, np.log10(0.5), 12)
    truth = true_curves(m, np.array([0.5]), eta, np.array([0.5]), 0.5)
    for key in ("ap", "pr_auc", "max_f1"):
        hits = []
        for i, c in enumerate(sets[:100] if key != "ap" else sets):
            band = u.prevalence_band(c, key, eta, n_boot=B_BOOT, seed=i, construction="bootstrap")
            hits.append(covers(band, truth[key], band.extra["supported"]))
        # 100 replicates for PR-AUC / max-F1: s.d. 0.022, floor 0.88 is 3.2 s.d.
        floor = MC_FLOOR if len(hits) == R_OUTER else 0.88
        assert np.mean(hits) >= floor, (key, np.mean(hits))


def test_low_prevalence_is_flagged_and_not_covered(sets_200_1e4):
    """eta = 1e-4 with 10^4 negatives: a handful of FPs at the top. The earlier count-bootstrap
    band (``construction="bootstrap"``; the default is now the Bayesian band, tested below) misses
    the truth most of the time (estimate biased up, bootstrap cannot create false positives), and
    the band says so: ``supported`` is False there and the method text states it."""
    m, sets = sets_200_1e4
    eta = np.array([1e-4, 0.1])
    truth = true_curves(m, np.array([0.5]), eta, np.array([0.5]), 0.5)["ap"]
    hits, flagged = [], []
    for i, c in enumerate(sets[:60]):
        band = u.prevalence_band(c, "ap", eta, n_boot=B_BOOT, seed=i, construction="bootstrap")
        hits.append(covers(band, truth, np.array([True, False])))
        flagged.append(not band.extra["supported"][0] and "NOT covered" in band.method)
    assert np.mean(hits) < 0.7  # documented failure (~0.35 in the benchmark)
    assert np.mean(flagged) >= 0.95


def test_pr_band_coverage_where_supported(sets_200_1e4):
    """The sup-t PR band option at eta = 0.01 over 100 recalls: coverage >= 0.90 where
    supported (the default construction is the mapped ROC band, tested below)."""
    m, sets = sets_200_1e4
    rgrid = np.linspace(0.01, 1.0, 100)
    truth = true_curves(m, np.array([0.5]), np.array([0.5]), rgrid, 0.01)["pr"]
    hits, unsup = [], []
    for i, c in enumerate(sets):
        band = u.pr_band(c, 0.01, n_boot=B_BOOT, seed=i, construction="sup-t")
        hits.append(covers(band, truth, band.extra["supported"]))
        unsup.append(np.mean(~band.extra["supported"]))
    assert np.mean(hits) >= MC_FLOOR, np.mean(hits)
    assert np.mean(unsup) < 0.3  # the claim is not vacuous: most recalls are supported


def test_rate_floor_keeps_degenerate_points_open():
    """TPR_hat = 1 at high FPR: every replicate equal, yet the band's lower edge is < 1."""
    c = RocCounts([2.0, 1.0, 0.0], [50, 50, 50], [0, 5, 100], 50, 100)
    band = u.roc_band(c, np.array([0.1, 0.5, 1.0]), n_boot=50, seed=0)
    assert np.all(band.estimate == 1.0) and np.all(band.low < 0.99) and np.all(band.high == 1.0)


def test_pr_band_from_roc_covers_at_every_prevalence(sets_200_1e4):
    """The ROC band mapped through eq. 8 (what the report draws): coverage >= 0.90 over the
    WHOLE recall grid at eta = 1e-4 ... 0.5 jointly (one band per test set for all eta),
    where the sup-t PR band covers only 0.1 over the whole grid (it needs FP support)."""
    m, sets = sets_200_1e4
    rgrid = np.linspace(0.01, 1.0, 100)
    etas = (1e-4, 1e-3, 1e-2, 0.5)
    truths = {e: true_curves(m, np.array([0.5]), np.array([0.5]), rgrid, e)["pr"] for e in etas}
    hits, width = [], []
    for i, c in enumerate(sets):
        rb = u.roc_band(c, n_boot=B_BOOT, seed=i)
        bands = {e: u.pr_band_from_roc(rb, e, rgrid) for e in etas}
        hits.append(all(covers(bands[e], truths[e]) for e in etas))
        width.append(np.mean(bands[1e-2].high - bands[1e-2].low))
    assert np.mean(hits) >= MC_FLOOR, np.mean(hits)
    # not vacuous: at eta = 0.01 the mapped band is far from the trivial [0, 1]
    assert np.mean(width) < 0.45, np.mean(width)
    # ... and it is what u.pr_band gives by default (same replicates: same seed)
    c = sets[0]
    pb = u.pr_band(c, 1e-2, rgrid, n_boot=B_BOOT, seed=0)
    ref = u.pr_band_from_roc(
        u.roc_band(c, n_boot=B_BOOT, seed=0), 1e-2, rgrid, estimate=pb.estimate
    )
    np.testing.assert_allclose(pb.low, ref.low)
    np.testing.assert_allclose(pb.high, ref.high)
    assert pb.extra["supported"].all()


@pytest.mark.parametrize(
    "mu, n_pos, n_neg", [(2.0, 200, 10_000), (2.0, 50, 1_000), (1.0, 200, 10_000)]
)
def test_prevalence_band_from_roc_covers_jointly_over_eta(mu, n_pos, n_neg, sets_200_1e4):
    """PR-AUC(eta), max-F1(eta) and AP(eta) from the ROC band (``prevalence_band_from_roc``,
    what the report draws for PR-AUC and max-F1): coverage >= 0.90 over ALL 12 eta in
    [1e-4, 0.5] and all three metrics jointly (one ROC band per test set) -- including
    eta = 1e-4, where the bootstrap band covers ~0.3 -- with no false-positive support mask."""
    if (mu, n_pos, n_neg) == (2.0, 200, 10_000):
        m, sets = sets_200_1e4
    else:
        m = binormal_model(mu)
        sets = draw_counts(np.random.default_rng(n_pos + n_neg), m, n_pos, n_neg, R_OUTER)
    eta = np.logspace(-4, np.log10(0.5), 12)
    truth = true_curves(m, np.array([0.5]), eta, np.array([0.5]), 0.5)
    hits, width = [], {k: [] for k in ("ap", "pr_auc", "max_f1")}
    for i, c in enumerate(sets):
        rb = u.roc_band(c, n_boot=B_BOOT, seed=i)
        ok = True
        for key in width:
            band = u.prevalence_band_from_roc(rb, eta, key)
            assert band.extra["supported"].all()
            ok &= covers(band, truth[key])
            width[key].append(band.high - band.low)
        hits.append(ok)
    assert np.mean(hits) >= MC_FLOOR, np.mean(hits)
    # not vacuous: at eta = 0.5 the PR-AUC and max-F1 bands are far from [0, 1]
    for key in ("pr_auc", "max_f1"):
        assert np.mean(np.asarray(width[key])[:, -1]) < 0.3, (key, np.mean(width[key], axis=0))


# ---------------------------------------------------------------------------- the new bands
@pytest.mark.parametrize(
    ("model", "n_pos", "n_neg"),
    [("binormal", 200, 20_000), ("skewed", 200, 20_000), ("binormal", 100, 1_000_000)],
)
def test_bayesian_prevalence_band_covers_at_every_eta(model, n_pos, n_neg):
    """Smoke test of the default band (Bayesian count bootstrap, simultaneous credible band):
    AP and PR-AUC over 12 eta in [1e-4, 0.5] covered jointly in >= 0.88 of R = 100 test sets
    (nominal 0.95, s.d. 0.022: 3.2 s.d.), and pointwise at eta = 1e-4 -- where the earlier
    band covered 0.43-0.50 -- in >= 0.88. Not vacuous: the mean width at eta = 0.5 is under
    twice the estimator's true 2.5-97.5% spread (simulated here)."""
    m = binormal_model(2.0) if model == "binormal" else skewed_model()
    r = 100
    sets = draw_counts(np.random.default_rng(n_pos + n_neg + 7), m, n_pos, n_neg, r)
    eta = np.logspace(-4, np.log10(0.5), 12)
    truth = true_curves(m, np.array([0.5]), eta, np.array([0.5]), 0.5)
    for key in ("ap", "pr_auc"):
        sim, low_end, width, est = [], [], [], []
        for i, c in enumerate(sets):
            band = u.prevalence_band(c, key, eta, n_boot=300, seed=i)
            ok = (band.low <= truth[key] + 1e-12) & (truth[key] <= band.high + 1e-12)
            sim.append(ok.all())
            low_end.append(ok[0])
            width.append(band.high - band.low)
            est.append(band.estimate)
            assert band.extra["supported"].all()
        spread = np.diff(np.percentile(est, [2.5, 97.5], axis=0), axis=0)[0]
        assert np.mean(sim) >= 0.88, (key, np.mean(sim))
        assert np.mean(low_end) >= 0.88, (key, np.mean(low_end))
        assert np.mean(width, axis=0)[-1] < 2.0 * spread[-1], (key, np.mean(width, 0), spread)


def test_bayesian_max_f1_band_smoke():
    """max-F1 against eta, default band (re-centred for the maximum's selection bias):
    simultaneous coverage >= 0.85 at R = 100 in the binormal 200 / 20,000 regime (measured
    ~0.95 in the benchmark; this guards against a regression to the uncorrected 0.85-0.90)."""
    m = binormal_model(2.0)
    sets = draw_counts(np.random.default_rng(3), m, 200, 20_000, 100)
    eta = np.logspace(-4, np.log10(0.5), 12)
    truth = true_curves(m, np.array([0.5]), eta, np.array([0.5]), 0.5)["max_f1"]
    hits = [covers(u.prevalence_band(c, "max_f1", eta, n_boot=300, seed=i), truth)
            for i, c in enumerate(sets)]  # fmt: skip
    assert np.mean(hits) >= 0.85, np.mean(hits)


def test_max_band_holds_its_draws_and_collapses_on_constant_draws():
    """max_band by construction: at most (MAX_LOWER_ALPHA + MAX_UPPER_ALPHA) * alpha of the
    draws leave the band anywhere on the grid (one-sided sup-t quantiles; the credible-band
    floor only lowers the lower edge); constant draws give a zero-width band at that value."""
    from mlflow_imbalance.stats.posterior import MAX_LOWER_ALPHA, MAX_UPPER_ALPHA, max_band

    rng = np.random.default_rng(5)
    # correlated draws in (0, 1) over 12 grid points, logit-normal around 0.27
    z = rng.standard_normal((400, 1)) + 0.6 * rng.standard_normal((400, 12))
    draws = 1 / (1 + np.exp(-(0.3 * z - 1.0)))
    low, high, ext = max_band(draws, 0.95)
    inside = np.all((draws >= low - 1e-12) & (draws <= high + 1e-12), axis=1)
    assert inside.mean() >= 1 - (MAX_LOWER_ALPHA + MAX_UPPER_ALPHA) * 0.05 - 1e-12
    med = np.median(draws, axis=0)
    assert np.all(low < med) and np.all(med < high)
    c_lo, c_hi = ext["critical_values"]
    # maxima over 12 correlated grid points at one-sided levels >= 0.97: beyond one point's z
    assert min(c_lo, c_hi) > stats.norm.isf(0.03)
    lo0, hi0, _ = max_band(np.full((50, 3), 0.3), 0.95)
    np.testing.assert_allclose(lo0, 0.3, atol=1e-12)
    np.testing.assert_allclose(hi0, 0.3, atol=1e-12)


def test_bayesian_max_f1_band_width_at_low_prevalence():
    """Binormal P / N = 100 / 10^6, eta = 1e-4: the mean width of the default max-F1 band over
    R = 60 test sets is < 1.55 x the estimator's true 2.5-97.5% spread (simulated from 2,000
    test sets). Measured: 1.44 here (1.42 at R = 300); the earlier credible band calibrated to
    hold 1 - alpha/2 of the draws: 1.66 here (1.63 at R = 300, 1.72 at B = 1000)."""
    m = binormal_model(2.0)
    eta = np.logspace(-4, np.log10(0.5), 12)
    sets = draw_counts(np.random.default_rng(11), m, 100, 1_000_000, 60)
    bands = [u.prevalence_band(c, "max_f1", eta, n_boot=300, seed=i) for i, c in enumerate(sets)]
    width = [b.high[0] - b.low[0] for b in bands]
    ref = draw_counts(np.random.default_rng(12), m, 100, 1_000_000, 2000)
    est = np.array([u.metric_values(c, "max_f1", eta[:1])[0] for c in ref])
    spread = np.diff(np.percentile(est, [2.5, 97.5]))[0]
    assert np.mean(width) < 1.55 * spread, (np.mean(width), spread)


def test_headline_intervals_cover_at_low_prevalence():
    """Headline AP / PR-AUC / max-F1 intervals (hook and report table) at the test prevalence,
    1e-3 and 1e-4: pointwise coverage >= 0.88 at R = 100 (the earlier percentile bootstrap
    covered 0.88-0.90 at 1e-3 and far less at 1e-4)."""
    m = binormal_model(2.0)
    n_pos, n_neg = 200, 20_000
    sets = draw_counts(np.random.default_rng(11), m, n_pos, n_neg, 100)
    eta = np.array([n_pos / (n_pos + n_neg), 1e-3, 1e-4])
    truth = true_curves(m, np.array([0.5]), eta, np.array([0.5]), 0.5)
    hits = {k: [] for k in ("ap", "pr_auc", "max_f1")}
    for i, c in enumerate(sets):
        h = u.headline_intervals(c, eta, n_boot=300, seed=i)
        for k in hits:
            lo, hi = h.intervals[k][:, 0], h.intervals[k][:, 1]
            hits[k].append((lo <= truth[k] + 1e-12) & (truth[k] <= hi + 1e-12))
    for k, v in hits.items():
        cov = np.mean(v, axis=0)
        assert np.all(cov >= 0.88), (k, cov)


@pytest.mark.parametrize("path", ["draws", "headline_intervals"])
def test_min_cost_interval_covers_after_the_minimum_over_thresholds(path):
    """The lowest expected cost is a minimum over thresholds, biased down: the plain
    equal-tailed interval of the draws left the truth above it in 10-19% of test sets with
    C_FN = 100 (continuous binormal, 200 / 20,000; docs/statistics.md). ``min_cost_interval``
    (recentred for the selection bias, α split as max-F1's mirrored, united with the plain
    interval, the upper limit at least that of the cost at the chosen threshold): pooled
    coverage over eta = 1e-3, 1e-2, 0.1 at least 0.92 at R = 150, and at least 0.895 (0.95
    minus 3.2 MC s.d.) at eta = 0.1, where the positives' unseen lower tail decides the
    minimum (here 0.920; without the chosen threshold's limit 0.873, the plain interval
    lower still). Truth: the model's minimum by a dense threshold grid (scipy). ``path``: the
    report's (its draws handed to ``min_cost_interval``) and the logging hook's
    (``headline_intervals(costs=...)``), on the same test sets."""
    from mlflow_imbalance.core import curves
    from mlflow_imbalance.stats.bootstrap import (
        bayesian_statistics,
        chosen_cost_statistic,
        min_cost_statistic,
    )
    from mlflow_imbalance.stats.posterior import min_cost_interval

    etas, cfn = np.array([1e-3, 1e-2, 0.1]), 100.0
    t = np.linspace(-8.0, 14.0, 200_001)
    fpr, tpr = stats.norm.sf(t), stats.norm.sf(t - 2.0)
    truth = np.array([min(np.min((1 - e) * fpr + cfn * e * (1 - tpr)), cfn * e) for e in etas])
    rng = np.random.default_rng(17)  # the test sets (the same for both paths)
    y = np.r_[np.ones(200, bool), np.zeros(20_000, bool)]
    hits = []
    for i in range(R_COST):
        c = RocCounts.from_scores(y, np.where(y, 2.0, 0.0) + rng.normal(size=y.size))
        exact = np.atleast_1d(curves.optimal_operating_point(c, etas, 1.0, cfn).cost)
        if path == "draws":
            thin = u.thin_for_bootstrap(c, 80).counts
            st = {
                "cost": min_cost_statistic(thin, etas, 1.0, cfn),
                "chosen": chosen_cost_statistic(thin, etas, 1.0, cfn),
            }
            d = bayesian_statistics(thin, st, 300, i, base_for=("cost",))
            est = st["cost"].estimate(thin)
            lo, hi = min_cost_interval(d["cost"], d["cost:base"], est, exact, chosen=d["chosen"])
        else:
            h = u.headline_intervals(c, etas, n_boot=300, seed=i, costs=(1.0, cfn))
            lo, hi = h.intervals["cost"].T
        assert np.all(lo >= 0) and np.all(lo <= exact) and np.all(exact <= hi)
        hits.append((lo <= truth) & (truth <= hi))
    cov = np.mean(hits, axis=0)
    assert np.mean(hits) >= 0.92 and cov[2] >= 0.895, cov
