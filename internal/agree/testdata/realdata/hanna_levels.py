#!/usr/bin/python3
"""Reference system-, story-level and overall correlations of HANNA metrics vs criteria.

Computed with numpy/scipy straight from the original wide file (not from m3eval's long-form
conversion), following the data README ("How to recompute the published numbers", items 2
and 3): drop the Human row; system level = correlate the 10 system means over the 96
prompts; story level = for each prompt correlate the 10 systems' values, drop NaN
coefficients, average; overall = correlate all 960 stories once.

The system means of a criterion are computed exactly (fractions of the integer ratings in
the "Human k XX" columns). numpy's float mean of the criterion column breaks one true tie:
in Complexity, GPT and TD-VAE both have mean 359/144, but numpy gives 2.4930555555555554
and 2.493055555555556. The float-mean values (what a numpy/pandas analysis prints) are
kept under "system_level_float_mean"; m3eval matches "system_level", and with --mean float
"system_level_float_mean". "p" holds SciPy's p-values (system level and overall).

    /usr/bin/python3 hanna_levels.py ../../../../../../shared/data/hanna/hanna_metric_scores_llm.csv > hanna/hanna_levels.json
"""
import csv
import json
from fractions import Fraction
import sys
import warnings

import numpy as np
from scipy import stats

METRICS = {"bertscore_f1": "BERTScore F1 Ξε", "bartscore_sh": "BARTScore-SH ΞΔ", "bleu": "BLEU Ξ§",
           "chrf": "chrF Ξ§", "supert_ps": "SUPERT-PS ¤ε"}
CRITERIA = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
CODES = {"Relevance": "RE", "Coherence": "CH", "Empathy": "EM", "Surprise": "SU", "Engagement": "EG", "Complexity": "CX"}


def coeffs(x, y, with_p=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, s, k = stats.pearsonr(x, y), stats.spearmanr(x, y), stats.kendalltau(x, y, variant="b")
        out = {"pearson": float(p[0]), "spearman": float(s[0]), "kendall_tau_b": float(k[0])}
        if with_p:
            # SciPy's default p-values: t (beta) for Pearson, t for Spearman, kendalltau's
            # method="auto" (exact without ties for n <= 33, else asymptotic).
            out["p"] = {"pearson": float(p[1]), "spearman": float(s[1]), "kendall_tau_b": float(k[1])}
        return out


def main(path):
    with open(path, encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Model"] != "Human"]
    col = lambda name: np.array([json.loads(r[name]) for r in rows], float)  # 10 x 96
    out = {}
    for slug, mname in METRICS.items():
        m = col(mname)
        out[slug] = {}
        for c in CRITERIA:
            h = col(c)
            ratings = [[json.loads(r["Human %d %s" % (k, CODES[c])]) for k in (1, 2, 3)] for r in rows]
            exact = [float(Fraction(int(sum(sum(x) for x in sysr)), 3 * 96)) for sysr in ratings]
            res = {"system_level": coeffs(np.array(exact), m.mean(1), True),
                   "system_level_float_mean": coeffs(h.mean(1), m.mean(1), True)}
            per = [coeffs(h[:, i], m[:, i]) for i in range(h.shape[1])]
            res["segment_level"] = {k: float(np.mean([p[k] for p in per if not np.isnan(p[k])])) for k in per[0]}
            res["overall"] = coeffs(h.ravel(), m.ravel(), True)
            out[slug][c] = res
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
