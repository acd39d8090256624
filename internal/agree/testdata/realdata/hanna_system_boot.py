#!/usr/bin/python3
"""Reference widths of the bootstrap over systems of HANNA's system-level correlations.

The design of `m3eval agree --levels levels.csv --cluster system --bootstrap B`: the 11 rows
of the file (10 systems and the Human reference, which has no metric score) are the
clusters; a replicate draws 11 of them with replacement, and every drawn system (with its
full-data means, exact fractions of the ratings) is one point of the system-level
correlation, repeated as often as drawn. Written here with numpy/scipy, B = 4000:

    /usr/bin/python3 hanna_system_boot.py ../../../../../../shared/data/hanna/hanna_metric_scores_llm.csv > hanna/system_boot.json
"""
import csv
import json
import sys
import warnings
from fractions import Fraction

import numpy as np
from scipy import stats

PAIRS = [("bleu", "BLEU Ξ§", "Complexity", "CX"), ("bertscore_f1", "BERTScore F1 Ξε", "Coherence", "CH")]


def main(path):
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    rng = np.random.default_rng(14)
    out = {"B": 4000}
    for slug, mcol, crit, code in PAIRS:
        xs, ys = [], []
        for r in rows:
            if r["Model"] == "Human":
                xs.append(None)
                ys.append(None)
                continue
            ratings = [json.loads(r["Human %d %s" % (k, code)]) for k in (1, 2, 3)]
            xs.append(float(Fraction(int(sum(sum(x) for x in ratings)), 3 * 96)))
            ys.append(float(np.mean(json.loads(r[mcol]))))
        n = len(rows)
        reps = {"pearson": [], "kendall_tau_b": []}
        for _ in range(out["B"]):
            draws = np.bincount(rng.integers(0, n, size=n), minlength=n)
            x, y = [], []
            for s in range(n):
                if xs[s] is not None:
                    x += [xs[s]] * draws[s]
                    y += [ys[s]] * draws[s]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reps["pearson"].append(stats.pearsonr(x, y)[0] if len(x) > 1 and len(set(x)) > 1 and len(set(y)) > 1 else np.nan)
                reps["kendall_tau_b"].append(stats.kendalltau(x, y)[0] if len(x) > 1 else np.nan)
        res = {}
        for k, v in reps.items():
            v = np.array(v, float)
            v = v[~np.isnan(v)]
            lo, hi = np.percentile(v, [2.5, 97.5])
            res[k] = {"lo": float(lo), "hi": float(hi), "width": float(hi - lo)}
        out.setdefault(slug, {})[crit] = res
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
