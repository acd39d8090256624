#!/usr/bin/python3
"""Vectorized numpy reference for m3eval score's human-vs-judge block with its episode-cluster
bootstrap (issue #43): the anchor m3eval's speed is compared with, written as a competent numpy
user would, not as a loop.

    /usr/bin/python3 score_numpy.py DB [REPLICATES] [SEED] [JUDGE]

reads an m3eval SQLite database (the benchmarks' databases: BenchmarkScoreGrowth and
BenchmarkScoreIntervals1M with $M3EVAL_BENCH_DIR set keep them there) and computes, for every
scale field that the annotators and the judge (default "gpt") both give:

* the human item mean: the average of the done, current labels of each turn (the mean of the
  item means is printed as "human_mean");
* with the judge's score of the item: Pearson's r, Spearman's rho (average ranks) and Kendall's
  tau-b, the statistics of score's "Human vs JUDGE" rows;
* REPLICATES (default 1,000) episode-cluster bootstrap replicates of the three and of the human
  mean, and their 2.5% and 97.5% percentiles.

How it is vectorized. SQL averages the labels (one GROUP BY). Each field's (item mean, score)
pairs are binned on their distinct values: Kx distinct item means (a few dozen: means of two or
three labels of 1..5) by Ky distinct scores. A replicate's data is then a weighted table G
(Kx x Ky): G = episode weights @ P, where P is the sparse episode-by-cell incidence matrix, for
a batch of replicates at once (one sparse-dense product). Every statistic comes from G without
a loop over items: Pearson from its weighted moments, Spearman from the average ranks of its
row and column sums (a cumulative sum), tau-b from concordant and discordant pair counts read
off 2-D cumulative sums of G (the pairs of a cell with the cells below-left and above-left).
The episodes are drawn once per replicate for all fields (np.bincount of uniform draws). Cost
per replicate: O(Kx * Ky) plus the incidence matrix's nonzeros, independent of how many copies
of an item a replicate holds. With continuous values on both sides (no ties at all) Kx * Ky
would be the square of the items; the benchmarks' human means are never continuous.

It does not compute the agreement coefficients among the annotators (alpha, kappa, AC1/AC2,
ICC, the pairs) nor the judge's categorical rows (exact match, kappa with the majority), which
score also prints: the ratio m3eval / this reference therefore overstates m3eval's cost.

It prints JSON: per field n, the points, the intervals; the seconds spent reading and
resampling (wall and process CPU). Needs Debian's python3-numpy and python3-scipy.
"""
import json
import sqlite3
import sys
import time

import numpy as np
from scipy import sparse

FIELDS = ["correctness", "reasoning_completeness", "overall_quality"]
STATS = ["human_mean", "pearson", "spearman", "kendall_tau_b"]
BATCH_CELLS = 1_000_000  # float64 cells of the tables held at once: small batches stay in cache (8 MB)


def read(db, judge):
    """Per field: episode index, human item mean, judge score of the items having both."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    marks = ",".join("?" * len(FIELDS))
    human = con.execute(
        """SELECT v.field, a.turn_id, t.episode_id, avg(CAST(v.value AS REAL))
           FROM annotations a JOIN annotators an ON an.id = a.annotator_id
           JOIN annotation_values v ON v.annotation_id = a.id
           JOIN turns t ON t.id = a.turn_id
           WHERE a.status = 'done' AND NOT a.stale AND an.repeat_of IS NULL AND v.field IN (%s)
           GROUP BY v.field, a.turn_id""" % marks, FIELDS).fetchall()
    auto = con.execute(
        """SELECT s.field, s.turn_id, CAST(s.value AS REAL) FROM judge_scores s
           JOIN judges j ON j.id = s.judge_id WHERE j.name = ? AND s.field IN (%s)""" % marks,
        [judge] + FIELDS).fetchall()
    con.close()
    code = {f: i for i, f in enumerate(FIELDS)}
    h = np.array([(code[f], t, e, m) for f, t, e, m in human], dtype=float).reshape(-1, 4)
    a = np.array([(code[f], t, s) for f, t, s in auto], dtype=float).reshape(-1, 3)
    episodes = np.unique(h[:, 2]).astype(np.int64)  # the clusters: episodes with a label
    out = {}
    for i, f in enumerate(FIELDS):
        hf, af = h[h[:, 0] == i], a[a[:, 0] == i]
        hf = hf[np.argsort(hf[:, 1], kind="stable")]
        pos = np.searchsorted(hf[:, 1], af[:, 1])
        ok = (pos < len(hf)) & (hf[np.minimum(pos, len(hf) - 1), 1] == af[:, 1])
        y = np.full(len(hf), np.nan)
        y[pos[ok]] = af[ok, 2]
        both = ~np.isnan(y)
        ep = np.searchsorted(episodes, hf[both, 2].astype(np.int64))
        out[f] = (ep, hf[both, 3], y[both])
    return out, len(episodes)


class Field:
    """One field's pairs as a sparse episode-by-cell matrix over the (x, y) value grid."""

    def __init__(self, ep, x, y, n_episodes):
        self.xv, xl = np.unique(x, return_inverse=True)
        self.yv, yl = np.unique(y, return_inverse=True)
        self.kx, self.ky = len(self.xv), len(self.yv)
        cell = xl.astype(np.int64) * self.ky + yl
        self.cells, ci = np.unique(cell, return_inverse=True)
        self.P = sparse.csr_matrix((np.ones(len(ep)), (ep, ci)), shape=(n_episodes, len(self.cells)))
        self.PT = self.P.T.tocsr()
        self.n = len(x)
        self.buf = None

    def tables(self, W):
        """The replicates' weighted tables, shape (b, kx, ky), for episode weights W (b, E)."""
        g = np.asarray(self.PT @ W.T).T  # (b, cells)
        if self.buf is None or self.buf.shape[0] != W.shape[0]:
            self.buf = np.zeros((W.shape[0], self.kx * self.ky))
        G = self.buf  # the same cells are set every time: the rest stays 0
        G[:, self.cells] = g
        return G.reshape(W.shape[0], self.kx, self.ky)

    def stats(self, G):
        """human mean, Pearson, Spearman, tau-b of each table; shape (b, 4)."""
        xv, yv = self.xv, self.yv
        rows, cols = G.sum(axis=2), G.sum(axis=1)  # (b, kx), (b, ky)
        n = rows.sum(axis=1)

        def corr(xs, ys):  # weighted Pearson of per-level values xs (b|1, kx), ys (b|1, ky)
            sx, sy = (rows * xs).sum(1), (cols * ys).sum(1)
            sxx, syy = (rows * xs * xs).sum(1), (cols * ys * ys).sum(1)
            sxy = np.einsum("bij,bi,bj->b", G, np.broadcast_to(xs, rows.shape), np.broadcast_to(ys, cols.shape))
            cov = sxy - sx * sy / n
            with np.errstate(invalid="ignore", divide="ignore"):
                return cov / np.sqrt((sxx - sx * sx / n) * (syy - sy * sy / n))

        pearson = corr(xv[None, :], yv[None, :])
        # Average ranks (1-based) of the resampled data: the weight below a level plus the
        # middle of its own run of ties.
        rx = np.cumsum(rows, axis=1) - rows + (rows + 1) / 2
        ry = np.cumsum(cols, axis=1) - cols + (cols + 1) / 2
        spearman = corr(rx, ry)
        # tau-b: pairs of a cell with every cell of lower x and lower y (concordant) or lower
        # x and higher y (discordant). LG sums G over the x levels below (a loop over the few
        # x levels: numpy's cumsum along a strided axis is several times slower), LC sums LG
        # up to each y: the weight below-left of every cell, ties on y included.
        LG = np.empty_like(G)
        LG[:, 0] = 0
        for a in range(1, G.shape[1]):
            np.add(LG[:, a - 1], G[:, a - 1], out=LG[:, a])
        LC = np.cumsum(LG, axis=2)
        g_lc = np.einsum("bij,bij->b", G, LC)
        conc = g_lc - np.einsum("bij,bij->b", G, LG)  # strictly lower y: drop the same y
        disc = (rows * (np.cumsum(rows, axis=1) - rows)).sum(1) - g_lc
        n0 = n * (n - 1) / 2
        tx = (rows * (rows - 1) / 2).sum(1)
        ty = (cols * (cols - 1) / 2).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = (conc - disc) / np.sqrt((n0 - tx) * (n0 - ty))
        mean = (rows * xv[None, :]).sum(1) / n
        return np.stack([mean, pearson, spearman, tau], axis=1)


def main():
    db = sys.argv[1]
    B = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    judge = sys.argv[4] if len(sys.argv) > 4 else "gpt"
    t0, c0 = time.perf_counter(), time.process_time()
    data, E = read(db, judge)
    fields = {f: Field(ep, x, y, E) for f, (ep, x, y) in data.items() if len(x) > 0}
    t1, c1 = time.perf_counter(), time.process_time()
    points = {f: fd.stats(fd.tables(np.ones((1, E))))[0] for f, fd in fields.items()}
    reps = {f: np.empty((B, len(STATS))) for f in fields}
    per = max(1, min(256, BATCH_CELLS // max(fd.kx * fd.ky for fd in fields.values()))) if fields else 1
    for start in range(0, B, per):
        b = min(per, B - start)
        # Episodes drawn with replacement, once per replicate for every field: the count of
        # each episode in each replicate.
        draws = rng.integers(0, E, size=(b, E)) + (np.arange(b) * E)[:, None]
        W = np.bincount(draws.ravel(), minlength=b * E).reshape(b, E).astype(float)
        for f, fd in fields.items():
            reps[f][start:start + b] = fd.stats(fd.tables(W))
    t2, c2 = time.perf_counter(), time.process_time()
    result = {}
    for f, fd in fields.items():
        lo, hi = np.nanpercentile(reps[f], [2.5, 97.5], axis=0)
        result[f] = {"n": fd.n, "grid": [fd.kx, fd.ky],
                     "points": dict(zip(STATS, points[f].tolist())),
                     "ci95_percentile": {s: [lo[i], hi[i]] for i, s in enumerate(STATS)}}
    print(json.dumps({"fields": result, "replicates": B, "judge": judge,
                      "read_s": t1 - t0, "read_cpu_s": c1 - c0,
                      "bootstrap_s": t2 - t1, "bootstrap_cpu_s": c2 - c1}, indent=1))


if __name__ == "__main__":
    main()
