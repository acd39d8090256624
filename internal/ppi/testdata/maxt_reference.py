#!/usr/bin/python3
"""Reference values of ppi.MaxT (issue #41): Tukey's studentized range.

For K independent estimates of equal variance, the maximum over all pairs of
|Z_a - Z_b| / sd(Z_a - Z_b) / sqrt(chi2_nu / nu) is the studentized range of K means on nu
degrees of freedom divided by sqrt(2), so the 95% max-t critical value of all pairs is
scipy.stats.studentized_range.ppf(0.95, K, nu) / sqrt(2) (Tukey's HSD). Writes
maxt_cases.json to standard output. Run with Debian's /usr/bin/python3 (python3-scipy).
"""
import json
import math
import sys

from scipy import stats

cases = []
for k in (2, 3, 4, 6):
    for nu in (5, 10, 40, None):
        df = nu if nu is not None else math.inf
        q = float(stats.studentized_range.ppf(0.95, k, df))
        cases.append({"k": k, "nu": nu, "crit": q / math.sqrt(2)})
json.dump({"generator": "internal/ppi/testdata/maxt_reference.py", "scipy": stats.__name__ and __import__("scipy").__version__,
           "cases": cases}, sys.stdout, indent=1)
sys.stdout.write("\n")
