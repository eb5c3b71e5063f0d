"""stmbench.stats - the statistics of the regression gate, from scipy.stats.

Each function keeps the meaning the hand-written versions had before issue 32
(tests/golden/ab holds their outputs; tests/python/test_golden.py says how close the
new ones are). scipy.stats is imported when a test first runs, so the tables that do
not need it never load it.
"""
import statistics

LEVEL = 0.90
BOOT = 4000


def median(xs):
    xs = list(xs)
    if not xs:
        raise ValueError("median of nothing")
    return statistics.median(xs)


def bootstrap_median_ci(d, level=LEVEL, n=BOOT, seed=1):
    """Percentile bootstrap interval of the median of d: n resamples drawn by numpy's
    generator from a fixed seed, so the same d always gives the same interval."""
    import numpy as np
    from scipy import stats
    if len(set(d)) == 1:        # every resample has this median
        return d[0], d[0]
    r = stats.bootstrap((np.asarray(d, dtype=float),), np.median, confidence_level=level,
                        n_resamples=n, method="percentile",
                        random_state=np.random.default_rng(seed))
    return float(r.confidence_interval.low), float(r.confidence_interval.high)


def signed_rank_less(d):
    """One-sided p-value of the Wilcoxon signed-rank test that the paired differences d
    tend to be negative. Zeros are dropped first (Wilcoxon's own rule; none left: 1);
    scipy computes the exact null distribution up to 50 pairs and the normal
    approximation beyond, or where |d| has ties."""
    from scipy import stats
    d = [x for x in d if x != 0]
    if not d:
        return 1.0
    return float(stats.wilcoxon(d, alternative="less").pvalue)


def mann_whitney_less(a, b):
    """One-sided p-value that b's values tend to be smaller than a's (the Mann-Whitney
    U test, unpaired): exact for samples up to 30 each (ties count 1/2 in U, the null
    distribution is that without ties), the normal approximation with continuity
    correction above."""
    from scipy import stats
    method = "exact" if len(a) <= 30 and len(b) <= 30 else "asymptotic"
    return float(stats.mannwhitneyu(a, b, alternative="greater", method=method).pvalue)


def welch_log_interval(la, lb, level=LEVEL):
    """The two-sided `level` Welch t interval of mean(lb) - mean(la): la and lb are the
    log medians of A and B, one per code layout (at least 2 each). Where neither side
    varies the interval is the difference itself."""
    import math
    from scipy import stats
    na, nb = len(la), len(lb)
    if na < 2 or nb < 2:
        raise ValueError("a Welch interval needs at least 2 values per side")
    ma, mb = sum(la) / na, sum(lb) / nb
    va = sum((x - ma) ** 2 for x in la) / (na - 1) / na
    vb = sum((x - mb) ** 2 for x in lb) / (nb - 1) / nb
    d = mb - ma
    if va + vb == 0:
        return d, d
    df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    t = float(stats.t.ppf((1 + level) / 2, df))
    h = t * math.sqrt(va + vb)
    return d - h, d + h
