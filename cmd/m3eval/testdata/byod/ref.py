#!/usr/bin/python3
"""Computes the reference statistics of the fixture independently of m3eval, from the raw
files, with Debian's SciPy and scikit-learn: /usr/bin/python3 ref.py > reference.json.
Duplicated judge records keep the first (import-scores --on-duplicate first); judge records
of samples no rater saw are dropped (--skip-unknown)."""
import json, itertools
import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score

raters = {}
model = {}
for r in ("rater_a", "rater_b", "rater_c"):
    raters[r] = {}
    for line in open(f"{r}.jsonl"):
        d = json.loads(line)
        sid = str(d["score_id"])
        raters[r][sid] = int(d["human_answer"])
        model[sid] = d["name"]
judge = {}
for line in open("judge.jsonl"):
    d = json.loads(line)
    sid = str(d["score_id"])
    if sid in model and sid not in judge:
        judge[sid] = int(d["result"]["judge"])

pairs = []
for a, b in itertools.combinations(sorted(raters), 2):
    common = sorted(set(raters[a]) & set(raters[b]))
    x = [raters[a][s] for s in common]
    y = [raters[b][s] for s in common]
    pairs.append({"raters": [a, b], "n": len(common),
                  "cohen_kappa": cohen_kappa_score(x, y),
                  "cohen_kappa_quadratic": cohen_kappa_score(x, y, weights="quadratic"),
                  "pearson": stats.pearsonr(x, y).statistic, "pearson_p": stats.pearsonr(x, y).pvalue})

items = sorted(judge, key=int)
mean = {s: np.mean([raters[r][s] for r in raters if s in raters[r]]) for s in model}
h = [mean[s] for s in items]
j = [judge[s] for s in items]
hva = {"n": len(items), "pearson": stats.pearsonr(h, j).statistic,
       "spearman": stats.spearmanr(h, j).statistic,
       "kendall_tau_b": stats.kendalltau(h, j, variant="b").statistic}

est = {}
for m in sorted(set(model.values())):
    scored = [s for s in items if model[s] == m]
    est[m] = {"n_labeled": len(scored),
              "human_only": float(np.mean([mean[s] for s in scored])),
              "judge_only": float(np.mean([judge[s] for s in scored])),
              "labels_without_judge_score": sum(1 for s in model if model[s] == m and s not in judge),
              "label_values_without_judge_score": sum(1 for r in raters for s in raters[r] if model[s] == m and s not in judge)}

labels = {r: len(v) for r, v in raters.items()}
print(json.dumps({"pairwise": pairs, "human_vs_auto": hva, "estimate": est, "labels_per_rater": labels},
                 indent=1, sort_keys=True, default=float))
