#!/usr/bin/python3
"""Reference values of the small-sample intervals of internal/ppi (issue #41).

Reads the inputs of ppi_cases.json (made by ppi_reference.py) and writes, for each case, the
stratified delete-one-episode jackknife interval of the PPI++ estimate (every replicate's
estimate and lambda computed by ppi_py's own ppi_mean_pointestimate with lam=None, on the
data with the episode removed), of the human-only mean (lambda = 0, numpy means), and of the
difference between consecutive cases, with Satterthwaite's degrees of freedom and scipy's t
quantile. Nothing here shares code with the Go implementation, which computes replicates from
per-episode sums.

Strata: the episodes with a labeled turn, and the episodes with unlabeled turns only
(cases without cluster ids: every turn its own episode). v_h = (G_h - 1)/G_h * sum of the
squared deviations of the replicates from their mean; df = (sum v_h)^2 / sum v_h^2/(G_h-1).

Usage: PPI_PY=/path/to/ppi_py /usr/bin/python3 jackknife_reference.py < ppi_cases.json > jackknife_cases.json
"""
import json
import os
import sys

import numpy as np
from scipy import stats

sys.path.insert(0, os.environ["PPI_PY"])
import ppi_py  # noqa: E402

ALPHA = 0.05


def episodes(case):
    n, N = len(case["human"]), len(case["unlabeled"])
    if case.get("cluster") is None:
        return ["L%d" % i for i in range(n)], ["U%d" % j for j in range(N)]
    return ["E%d" % c for c in case["cluster"]], ["E%d" % c for c in case["cluster_unlabeled"]]


def estimate(Y, Yh, Yu, tune):
    if not tune:
        return float(np.mean(Y))
    return float(ppi_py.ppi_mean_pointestimate(Y, Yh, Yu, lam=None)[0])


def strata(case, tag):
    """Per stratum: the episode ids, tagged by model so that models never share one."""
    cl, clu = episodes(case)
    lab = set(cl)
    unl = [e for e in dict.fromkeys(clu) if e not in lab]
    return [[(tag, e) for e in dict.fromkeys(cl)], [(tag, e) for e in unl]]


def replicates(case, tag, eps, tune):
    """The case's estimate with each episode of eps removed (its own estimate when the episode
    is another model's)."""
    Y, Yh, Yu = (np.array(case[k], float) for k in ("human", "judge", "unlabeled"))
    cl, clu = (np.array(x) for x in episodes(case))
    out = []
    for t, e in eps:
        if t != tag:
            out.append(estimate(Y, Yh, Yu, tune))
            continue
        kl, ku = cl != e, clu != e
        out.append(estimate(Y[kl], Yh[kl], Yu[ku], tune))
    return np.array(out)


def tquantile(p, df):
    """scipy's t.ppf refined by Newton steps on t.cdf: Debian's scipy 1.10 returns
    2.022690911734728 for the 0.975 quantile on 39 df, whose cdf is 0.97499999955 (mpmath's
    integral of the density agrees with scipy's cdf, not with its ppf)."""
    q = float(stats.t.ppf(p, df))
    for _ in range(3):
        q -= (float(stats.t.cdf(q, df)) - p) / float(stats.t.pdf(q, df))
    return q


def interval(models, coef, tune):
    """Estimate, SE, df and 95% interval of sum coef_k theta_k over the jackknife."""
    Y = [np.array(c["human"], float) for c in models]
    est = sum(w * estimate(y, np.array(c["judge"], float), np.array(c["unlabeled"], float), tune)
              for w, y, c in zip(coef, Y, models))
    v, den = 0.0, 0.0
    for tag, c in enumerate(models):
        for eps in strata(c, tag):
            g = len(eps)
            if g < 2:
                continue
            comb = sum(w * replicates(m, t, eps, tune) for t, (w, m) in enumerate(zip(coef, models)))
            vh = (g - 1) / g * float(np.sum((comb - comb.mean()) ** 2))
            v += vh
            den += vh * vh / (g - 1)
    df = v * v / den
    se = float(np.sqrt(v))
    q = tquantile(1 - ALPHA / 2, df)
    return {"estimate": est, "se": se, "df": df, "ci": [est - q * se, est + q * se]}


def main():
    src = json.load(sys.stdin)
    out = []
    cases = src["cases"]
    for i, c in enumerate(cases):
        row = {"name": c["name"], "ppi": interval([c], [1.0], True), "human": interval([c], [1.0], False)}
        if i + 1 < len(cases):
            row["diff_next"] = interval([c, cases[i + 1]], [1.0, -1.0], True)
        out.append(row)
    json.dump({"generator": "internal/ppi/testdata/jackknife_reference.py", "inputs": "ppi_cases.json",
               "ppi_py_commit": os.environ.get("PPI_PY_COMMIT", ""), "cases": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
