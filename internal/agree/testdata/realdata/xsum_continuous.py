#!/usr/bin/python3
"""Reference for a continuous human side: XSum's aggregated Faithful and Factual scores
(one number per summary, eval_scores_xsum_summaries.csv) against the automatic metrics.

SciPy 1.10 pearsonr, spearmanr and kendalltau (coefficient and default p-value) of each
metric with each human score, over the 1,992 summaries, straight from the original file:

    /usr/bin/python3 xsum_continuous.py ../../../../../../shared/data/xsum-hallucinations/eval_scores_xsum_summaries.csv > xsum/continuous.json
"""
import csv
import json
import sys
import warnings

import numpy as np
from scipy import stats

METRICS = ["R1", "R2", "RL", "BERTScore", "Entailment"]
HUMAN = ["Faithful", "Factual"]


def main(path):
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = {"n": len(rows)}
    for h in HUMAN:
        x = np.array([float(r[h]) for r in rows])
        out[h] = {}
        for m in METRICS:
            y = np.array([float(r[m]) for r in rows])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                p, s, k = stats.pearsonr(x, y), stats.spearmanr(x, y), stats.kendalltau(x, y)
            out[h][m] = {"pearson": [float(p[0]), float(p[1])], "spearman": [float(s[0]), float(s[1])],
                         "kendall_tau_b": [float(k[0]), float(k[1])]}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
