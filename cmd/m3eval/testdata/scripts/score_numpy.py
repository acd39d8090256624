#!/usr/bin/python3
"""numpy anchor for m3eval score's human-vs-judge correlations with episode-cluster bootstrap
(issue #43): the speed reference that BenchmarkScoreGrowth's figures are compared with.

    /usr/bin/python3 score_numpy.py DB [REPLICATES] [SEED]

reads an m3eval SQLite database (the benchmarks' databases, built by BenchmarkScoreGrowth with
$M3EVAL_BENCH_DIR set), and for every scale field that both the annotators and judge "gpt" give
(correctness, reasoning_completeness, overall_quality) computes, from first principles in numpy:

* the item mean of the done, current labels, paired with the judge's score of the item;
* Pearson's r, Spearman's rho (average ranks) and Kendall's tau-b (scipy.stats.kendalltau, the
  only piece not written here) of the pairs;
* REPLICATES (default 1,000) episode-cluster bootstrap replicates of the three: episodes drawn
  with replacement, each item counted as often as its episode was drawn (np.repeat), and the
  2.5% and 97.5% percentiles.

It covers the part of score that dominates its bootstrap (59% of the 1M-turn profile in #43:
the fused Pearson/Spearman/tau-b pass), not the agreement coefficients (alpha, kappa, ICC),
so the ratio it gives is an upper bound on the whole command's. It prints JSON: the points
(to check against score --format json), the intervals and the seconds spent reading and
resampling. Debian's python3-numpy and python3-scipy.
"""
import json
import sqlite3
import sys
import time

import numpy as np
from scipy.stats import kendalltau, rankdata

FIELDS = ["correctness", "reasoning_completeness", "overall_quality"]


def read(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    out = {}
    for f in FIELDS:
        rows = con.execute(
            """SELECT t.episode_id, h.m, CAST(s.value AS REAL) FROM
                (SELECT a.turn_id AS tid, avg(CAST(v.value AS REAL)) AS m FROM annotations a
                 JOIN annotation_values v ON v.annotation_id = a.id AND v.field = ?
                 WHERE a.status = 'done' AND NOT a.stale GROUP BY a.turn_id) h
               JOIN judge_scores s ON s.turn_id = h.tid AND s.field = ?
               JOIN judges j ON j.id = s.judge_id AND j.name = 'gpt'
               JOIN turns t ON t.id = h.tid ORDER BY t.episode_id, t.turn""", (f, f)).fetchall()
        a = np.array(rows, dtype=float)
        out[f] = (a[:, 0].astype(np.int64), a[:, 1], a[:, 2])
    return out


def pearson(x, y):
    x, y = x - x.mean(), y - y.mean()
    return float((x * y).sum() / np.sqrt((x * x).sum() * (y * y).sum()))


def stats(x, y):
    return [pearson(x, y), pearson(rankdata(x), rankdata(y)), float(kendalltau(x, y).statistic)]


def main():
    db = sys.argv[1]
    B = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    t0 = time.perf_counter()
    data = read(db)
    t1 = time.perf_counter()
    result = {}
    for f, (ep, x, y) in data.items():
        _, cl = np.unique(ep, return_inverse=True)
        n_cl = cl.max() + 1
        reps = np.empty((B, 3))
        for b in range(B):
            w = np.bincount(rng.integers(0, n_cl, n_cl), minlength=n_cl)[cl]
            idx = np.repeat(np.arange(len(x)), w)
            reps[b] = stats(x[idx], y[idx])
        lo, hi = np.percentile(reps, [2.5, 97.5], axis=0)
        result[f] = {"n": int(len(x)), "points": dict(zip(["pearson", "spearman", "kendall_tau_b"], stats(x, y))),
                     "low": lo.tolist(), "high": hi.tolist()}
    t2 = time.perf_counter()
    print(json.dumps({"fields": result, "read_s": t1 - t0, "bootstrap_s": t2 - t1, "replicates": B}, indent=1))


if __name__ == "__main__":
    main()
