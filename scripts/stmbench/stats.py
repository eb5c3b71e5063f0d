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




def cluster_bootstrap_median_ci(groups, level=LEVEL, n=BOOT, seed=1):
    """Percentile interval of the median of the values of all groups (the paired log
    ratios, one group per code layout), from a two-stage bootstrap: each resample draws
    the layouts with replacement, then the values within each drawn layout. So the
    interval is as wide as the layouts disagree (placement), not only as the pairs
    scatter; and, being of a median, one stalled run does not carry it. A fixed seed:
    the same groups give the same interval."""
    import numpy as np
    rng = np.random.default_rng(seed)
    gs = [np.asarray(g, dtype=float) for g in groups if len(g)]
    if len(gs) < 2:
        raise ValueError("a cluster bootstrap needs at least 2 groups")
    L = len(gs)
    sizes = {len(g) for g in gs}
    if len(sizes) == 1:                  # the usual case: one array operation
        k = sizes.pop()
        G = np.stack(gs)                                  # L x k
        li = rng.integers(0, L, (n, L, 1))
        vi = rng.integers(0, k, (n, L, k))
        stat = np.median(G[li, vi].reshape(n, L * k), axis=1)
    else:
        stat = np.empty(n)
        for i in range(n):
            parts = [gs[j][rng.integers(0, len(gs[j]), len(gs[j]))]
                     for j in rng.integers(0, L, L)]
            stat[i] = np.median(np.concatenate(parts))
    a = (1 - level) / 2
    return float(np.quantile(stat, a)), float(np.quantile(stat, 1 - a))
