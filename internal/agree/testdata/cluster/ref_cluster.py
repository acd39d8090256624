#!/usr/bin/python3
"""Reference for the cluster bootstrap and the BCa interval (internal/agree/cluster_test.go).

    cd internal/agree/testdata/cluster && /usr/bin/python3 ref_cluster.py

writes ratings.csv, auto.csv, clusters.csv (40 episodes x 6 turns, 3 raters, one judge, a
strong episode effect) and cluster.json:

* widths: the 95% percentile interval width of interval Krippendorff's alpha and of Pearson's r
  (item mean rating vs judge score), by a bootstrap written here with numpy: B = 4000
  replicates resampling episodes (cluster) and resampling turns (item). The statistics are
  computed here from first principles (complete data, so alpha is the textbook
  1 - (n-1) D_o / D_e on the coincidences).
* bca: SciPy's own BCa interval (scipy.stats._resampling._bca_interval, the function
  scipy.stats.bootstrap(method="BCa") calls) of the mean of a skewed sample, given a fixed
  set of replicates, and the replicates and sample so that Go recomputes it.
"""
import csv
import json

import numpy as np
from scipy.stats._resampling import _bca_interval

rng = np.random.default_rng(20261123)
E, T, R = 40, 6, 3
ep = rng.normal(0, 1.0, size=E)
truth = np.repeat(ep, T) + rng.normal(0, 0.5, size=E * T)
ratings = np.clip(np.rint(3 + truth[:, None] + rng.normal(0, 0.7, size=(E * T, R))), 1, 5).astype(int)
auto = truth + 0.5 * np.repeat(ep, T) + rng.normal(0, 0.5, size=E * T)
items = ["e%02d_t%d" % (e, t) for e in range(E) for t in range(T)]
cluster = np.repeat(np.arange(E), T)

with open("ratings.csv", "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["item", "rater", "field", "value"])
    for i, it in enumerate(items):
        for r in range(R):
            w.writerow([it, "r%d" % r, "quality", int(ratings[i, r])])
with open("auto.csv", "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["item", "field", "value"])
    for i, it in enumerate(items):
        w.writerow([it, "quality", repr(float(auto[i]))])
with open("clusters.csv", "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["item", "cluster"])
    for i, it in enumerate(items):
        w.writerow([it, "episode%02d" % cluster[i]])


def alpha_interval(X, wts):
    """Interval alpha of complete m-rater data, items weighted by wts (integer counts)."""
    m = X.shape[1]
    # Observed disagreement: per item, sum over ordered pairs of distinct raters of the squared
    # difference, divided by m - 1; expected from all pairable values.
    d_item = ((X[:, :, None] - X[:, None, :]) ** 2).sum(axis=(1, 2)) / (m - 1)
    n = (wts * m).sum()
    do = (wts * d_item).sum()
    vals = np.arange(1, 6)
    nc = np.array([(wts[:, None] * (X == v)).sum() for v in vals], float)
    de = (nc[:, None] * nc[None, :] * (vals[:, None] - vals[None, :]) ** 2).sum()
    return 1 - (n - 1) * do / de


def pearson(x, y, wts):
    mx, my = np.average(x, weights=wts), np.average(y, weights=wts)
    return np.sum(wts * (x - mx) * (y - my)) / np.sqrt(np.sum(wts * (x - mx) ** 2) * np.sum(wts * (y - my) ** 2))


B = 4000
hmean = ratings.mean(axis=1)
out = {"B": B, "estimate": {"alpha_interval": float(alpha_interval(ratings, np.ones(E * T))),
                            "pearson": float(pearson(hmean, auto, np.ones(E * T)))}}
for unit in ("cluster", "item"):
    a, p = [], []
    for _ in range(B):
        if unit == "cluster":
            draws = np.bincount(rng.integers(0, E, size=E), minlength=E)
            wts = draws[cluster].astype(float)
        else:
            wts = np.bincount(rng.integers(0, E * T, size=E * T), minlength=E * T).astype(float)
        a.append(alpha_interval(ratings, wts))
        p.append(pearson(hmean, auto, wts))
    out[unit] = {}
    for name, v in (("alpha_interval", a), ("pearson", p)):
        lo, hi = np.percentile(v, [2.5, 97.5])
        out[unit][name] = {"lo": float(lo), "hi": float(hi), "width": float(hi - lo), "se": float(np.std(v, ddof=1))}

# BCa on a skewed sample with a fixed set of replicates.
sample = rng.exponential(1.0, size=30)
reps = np.array([rng.choice(sample, size=30).mean() for _ in range(999)])
a1, a2, a_hat = _bca_interval((sample,), np.mean, axis=-1, alpha=0.025, theta_hat_b=reps, batch=None)
# As scipy.stats.bootstrap then does (_percentile_along_axis): numpy's percentile at the levels.
lo, hi = np.percentile(reps, [100 * a1, 100 * a2])
out["bca"] = {"sample": sample.tolist(), "replicates": reps.tolist(), "acceleration": float(a_hat),
              "levels": [float(a1), float(a2)], "lo": float(lo), "hi": float(hi)}

with open("cluster.json", "w") as fh:
    json.dump(out, fh, indent=1)
    fh.write("\n")
