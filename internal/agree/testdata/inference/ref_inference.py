#!/usr/bin/python3
"""Reference values for m3eval's tests of significance (internal/agree/infer_test.go).

Run with Debian's Python (it sees python3-scipy, python3-statsmodels) and R with psych:

    cd internal/agree/testdata/inference && /usr/bin/python3 ref_inference.py > inference.json

* correlations: scipy.stats.pearsonr, spearmanr and kendalltau (method="auto", and
  method="exact" where there are no ties) p-values on seeded samples: small n without ties
  (exact Kendall), n = 40 (asymptotic), ties (tie-corrected asymptotic), perfect order.
* kappa: statsmodels.stats.inter_rater.cohens_kappa (z_value, pvalue_two_sided) on
  confusion tables, unweighted and with linear / quadratic weights on the category values.
* icc: R psych::ICC (F, df1, df2, p, lower bound, upper bound for the six forms), through
  Rscript, on seeded items x raters matrices.
* williams: R psych::r.test(n, r12, r13, r23), Williams' t for dependent correlations.
* adjust: statsmodels.stats.multitest.multipletests, methods "holm" and "fdr_bh".
"""
import json
import subprocess
import sys
import warnings

import numpy as np
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.multitest import multipletests


def corr_cases():
    rng = np.random.default_rng(14)
    cases = []

    def add(name, x, y):
        x, y = np.asarray(x, float), np.asarray(y, float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pr = stats.pearsonr(x, y)
            sr = stats.spearmanr(x, y)
            kt = stats.kendalltau(x, y)
        c = {"name": name, "x": x.tolist(), "y": y.tolist(),
             "pearson": [float(pr[0]), float(pr[1])],
             "spearman": [float(sr[0]), float(sr[1])],
             "kendall": [float(kt[0]), float(kt[1])]}
        if len(set(x.tolist())) == len(x) and len(set(y.tolist())) == len(y):
            c["kendall_exact_p"] = float(stats.kendalltau(x, y, method="exact")[1])
        cases.append(c)

    for n in (5, 8, 10, 20, 33):
        x = rng.normal(size=n)
        add("no_ties_n%d" % n, x, 0.5 * x + rng.normal(size=n))
    x = rng.normal(size=40)
    add("no_ties_n40", x, 0.3 * x + rng.normal(size=40))
    x = rng.integers(1, 6, size=30)
    add("ties_n30", x, x + rng.integers(0, 3, size=30))
    x = rng.integers(1, 4, size=200)
    add("ties_n200", x, rng.integers(1, 6, size=200) + x)
    add("perfect_n10", np.arange(10), np.arange(10) * 2.0)
    add("one_swap_n40", np.arange(40), np.r_[np.arange(38), 39, 38])
    add("reversed_n7", np.arange(7), -np.arange(7.0))
    return cases


def kappa_cases():
    rng = np.random.default_rng(41)
    out = []
    values = [1, 2, 3, 4, 5]
    for name, n in (("t50", 50), ("t200", 200)):
        truth = rng.integers(1, 6, size=n)
        a = np.clip(truth + rng.integers(-1, 2, size=n), 1, 5)
        b = np.clip(truth + rng.integers(-1, 2, size=n), 1, 5)
        table = np.zeros((5, 5), int)
        for i, j in zip(a, b):
            table[i - 1, j - 1] += 1
        res = {"name": name, "values": values, "table": table.tolist()}
        for key, kw in (("unweighted", {}), ("linear", {"weights": values, "wt": "linear"}),
                        ("quadratic", {"weights": values, "wt": "quadratic"})):
            r = cohens_kappa(table, **kw)
            res[key] = {"kappa": float(r.kappa), "z": float(r.z_value), "p": float(r.pvalue_two_sided)}
        out.append(res)
    return out


def icc_cases():
    rng = np.random.default_rng(7)
    mats = {}
    for name, n, k in (("n20k3", 20, 3), ("n50k4", 50, 4), ("n8k2", 8, 2)):
        truth = rng.integers(1, 6, size=n)
        m = np.clip(truth[:, None] + rng.integers(-1, 2, size=(n, k)) + (np.arange(k) % 2), 1, 5)
        mats[name] = m.tolist()
    script = r'''
suppressMessages(library(psych)); suppressMessages(library(jsonlite))
mats <- fromJSON(file("stdin"))
out <- lapply(mats, function(m) {
  r <- psych::ICC(as.matrix(m), alpha = 0.05, lmer = FALSE)$results
  list(icc = r$ICC, F = r$F, df1 = r$df1, df2 = r$df2, p = r$p, lower = r[["lower bound"]], upper = r[["upper bound"]])
})
cat(toJSON(out, digits = NA, auto_unbox = TRUE))
'''
    res = subprocess.run(["Rscript", "-e", script], input=json.dumps(mats), capture_output=True, text=True, check=True)
    r = json.loads(res.stdout)
    return [{"name": k, "matrix": mats[k], **r[k]} for k in mats]


def williams_cases():
    rng = np.random.default_rng(99)
    cases = []
    for n in (20, 60, 200):
        h = rng.normal(size=n)
        a = h + rng.normal(size=n)
        b = 0.5 * h + rng.normal(size=n) + 0.3 * a
        r12, r13, r23 = np.corrcoef(h, a)[0, 1], np.corrcoef(h, b)[0, 1], np.corrcoef(a, b)[0, 1]
        cases.append({"n": n, "r12": float(r12), "r13": float(r13), "r23": float(r23)})
    script = r'''
suppressMessages(library(psych)); suppressMessages(library(jsonlite))
cs <- fromJSON(file("stdin"), simplifyDataFrame = FALSE)
out <- lapply(cs, function(c) { r <- psych::r.test(n = c$n, r12 = c$r12, r13 = c$r13, r23 = c$r23); list(t = r$t, p = r$p) })
cat(toJSON(out, digits = NA, auto_unbox = TRUE))
'''
    res = subprocess.run(["Rscript", "-e", script], input=json.dumps(cases), capture_output=True, text=True, check=True)
    for c, r in zip(cases, json.loads(res.stdout)):
        c.update(r)
    return cases


def adjust_cases():
    p = [0.01, 0.04, 0.03, 0.2, 0.04, 0.5, 0.0001, 0.9, 0.049, 0.012]
    return [{"p": p, "holm": multipletests(p, method="holm")[1].tolist(),
             "bh": multipletests(p, method="fdr_bh")[1].tolist()}]


if __name__ == "__main__":
    json.dump({"correlations": corr_cases(), "kappa": kappa_cases(), "icc": icc_cases(),
               "adjust": adjust_cases(), "williams": williams_cases()}, sys.stdout, indent=1)
    print()
