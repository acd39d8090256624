#!/usr/bin/python3
"""Independent reference of the small-sample intervals of issue #41 (the review's own code).

Written from the definitions in docs/statistics.md, sharing nothing with the Go code nor with
jackknife_reference.py (which computes each replicate with ppi_py): PPI++ with lambda tuned as
ppi_py's _calc_lam_glm does (clipped to [0, 1]); the delete-one-episode jackknife over the
raw turns, every replicate re-tuning lambda; strata = the episodes with a labeled turn, and
those with unlabeled turns only, per model; each stratum (G_h - 1)/G_h * sum of squared
deviations from its replicates' mean; Satterthwaite's df; scipy's t quantile refined by
Newton steps on t.cdf (scipy 1.10's t.ppf is off by about 1e-8, see README.md).

The data: 4 models on separate episodes, 14 episodes each of 3-8 turns, human values 1-5 with
an episode effect, a judge biased by about +0.5; 7 episodes per model with labels on two
turns of three (so labeled episodes hold unlabeled turns too), 7 with unlabeled turns only.
Writes review_cases.json to standard output. Debian's /usr/bin/python3 (numpy, scipy).
"""
import json
import random
import sys

import numpy as np
import scipy
from scipy import stats


def make():
    rng = random.Random(7)
    models = []
    for m, mu in enumerate((3.6, 3.3, 3.0, 3.0)):
        d = {"human": [], "judge": [], "cluster": [], "unlabeled": [], "cluster_u": []}
        for e in range(14):
            ep = m * 100 + e
            eff = rng.gauss(0, 0.6)
            for t in range(1, rng.randint(3, 8) + 1):
                h = min(5, max(1, round(mu + eff + rng.gauss(0, 0.8))))
                j = min(5, max(1, round(h + 0.5 + rng.gauss(0, 0.7))))
                if e < 7 and t % 3 != 0:
                    d["human"].append(h); d["judge"].append(j); d["cluster"].append(ep)
                else:
                    d["unlabeled"].append(j); d["cluster_u"].append(ep)
        models.append(d)
    return models


def arrays(d):
    return {k: np.array(v, float) for k, v in d.items()}


def lam(d):
    H, J, U = d["human"], d["judge"], d["unlabeled"]
    n, N = len(H), len(U)
    if n == 0 or N == 0:
        return 0.0
    cov = np.mean((H - H.mean()) * (J - J.mean()))
    v = np.var(np.concatenate([J, U]), ddof=1)
    return 0.0 if v == 0 else float(np.clip(cov / ((1 + n / N) * v), 0, 1))


def est(d, tune=True):
    l = lam(d) if tune else 0.0
    rect = np.mean(d["human"] - l * d["judge"])
    return rect + l * d["unlabeled"].mean() if len(d["unlabeled"]) and l else rect


def drop(d, e):
    k, ku = d["cluster"] != e, d["cluster_u"] != e
    return {"human": d["human"][k], "judge": d["judge"][k], "cluster": d["cluster"][k],
            "unlabeled": d["unlabeled"][ku], "cluster_u": d["cluster_u"][ku]}


def strata(d, tune):
    lab = sorted(set(d["cluster"]))
    only = sorted(set(d["cluster_u"]) - set(lab))
    return [(len(s), np.array([est(drop(d, e), tune) for e in s])) for s in (lab, only)]


def var_df(parts):
    v = den = 0.0
    for g, reps in parts:
        vh = (g - 1) / g * float(np.sum((reps - reps.mean()) ** 2))
        v += vh
        den += vh * vh / (g - 1)
    return v, v * v / den


def tq(df):
    q = stats.t.ppf(0.975, df)
    for _ in range(3):
        q -= (stats.t.cdf(q, df) - 0.975) / stats.t.pdf(q, df)
    return float(q)


raw = make()
ms = [arrays(d) for d in raw]
out = {"generator": "internal/ppi/testdata/review_reference.py", "numpy": np.__version__,
       "scipy": scipy.__version__, "models": raw, "ppi": [], "human_only": [], "differences": []}
for d in ms:
    for key, tune in (("ppi", True), ("human_only", False)):
        v, df = var_df(strata(d, tune))
        e, se = float(est(d, tune)), float(np.sqrt(v))
        out[key].append({"estimate": e, "lambda": lam(d) if tune else 0.0, "se": se, "df": df,
                         "ci": [e - tq(df) * se, e + tq(df) * se]})
for a in range(4):
    for b in range(a + 1, 4):
        pa, pb = strata(ms[a], True), strata(ms[b], True)
        v, df = var_df(pa + [(g, -r) for g, r in pb])
        e, se = float(est(ms[a]) - est(ms[b])), float(np.sqrt(v))
        out["differences"].append({"a": a, "b": b, "estimate": e, "se": se, "df": df,
                                   "ci": [e - tq(df) * se, e + tq(df) * se],
                                   "p": float(2 * stats.t.sf(abs(e) / se, df))})
json.dump(out, sys.stdout, indent=1)
sys.stdout.write("\n")
