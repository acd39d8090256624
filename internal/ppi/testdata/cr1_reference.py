#!/usr/bin/python3
"""statsmodels reference for the human-only jackknife interval of internal/ppi (issue #41).

With every episode the same size, the jackknife over episodes of a mean equals the variance of
the episode means over G, which is statsmodels' cluster-robust variance of an intercept-only
OLS with its default small-sample correction (G/(G-1) * (N-1)/(N-K), K = 1) and its t
interval on G - 1 degrees of freedom. Writes cr1_cases.json to standard output. Run with
Debian's /usr/bin/python3 (python3-numpy, python3-statsmodels).
"""
import json
import sys

import numpy as np
import statsmodels
import statsmodels.api as sm

rng = np.random.default_rng(41)
cases = []
for name, G, m in (("eq_6x3", 6, 3), ("eq_10x5", 10, 5), ("eq_25x4", 25, 4)):
    cl = np.repeat(np.arange(G), m)
    y = np.clip(np.round(3 + rng.normal(0, 0.7, G)[cl] + rng.normal(0, 1, G * m)), 1, 5)
    fit = sm.OLS(y, np.ones((len(y), 1))).fit(cov_type="cluster", cov_kwds={"groups": cl}, use_t=True)
    lo, hi = fit.conf_int(alpha=0.05)[0]
    cases.append({"name": name, "human": y.tolist(), "cluster": cl.tolist(), "estimate": float(fit.params[0]),
                  "se": float(fit.bse[0]), "df": G - 1, "ci": [float(lo), float(hi)]})
json.dump({"generator": "internal/ppi/testdata/cr1_reference.py", "statsmodels": statsmodels.__version__, "cases": cases},
          sys.stdout, indent=1)
sys.stdout.write("\n")
