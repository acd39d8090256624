#!/usr/bin/python3
"""Reference values for internal/ppi (regenerate: see README.md next to this file).

PPI_PY names the directory that holds the ppi_py package (github aangelopoulos/ppi_py, not
vendored here). Run with Debian's /usr/bin/python3 (python3-numpy, -scipy, -statsmodels,
-numba, -sklearn). Writes ppi_cases.json to standard output.

Two kinds of case:
  * "ppi_py": one turn per episode. Expected values come from ppi_py itself:
    ppi_mean_pointestimate and ppi_mean_ci with lam=None, _calc_lam_glm for lambda (the same
    call ppi_mean_ci makes), classical_mean_ci for the human-only interval.
  * "clustered": several turns per episode. Expected values come from a cluster-robust
    sandwich computed by statsmodels (OLS on a stacked design, cov_type="cluster",
    use_correction=False), with lambda from ppi_py.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.environ["PPI_PY"])
import ppi_py  # noqa: E402
from ppi_py.ppi import _calc_lam_glm  # noqa: E402
import statsmodels.api as sm  # noqa: E402

ALPHA = 0.05


def ppi_lambda(Y, Yhat, Yu):
    """The lambda ppi_mean_ci computes when lam=None (copied call, not formula)."""
    th1 = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yu, lam=1)
    g = (Y - th1).reshape(-1, 1)
    gh = (Yhat - th1).reshape(-1, 1)
    ghu = (Yu - th1).reshape(-1, 1)
    return float(_calc_lam_glm(g, gh, ghu, np.eye(1), coord=None, clip=True))


def make(rng, n, N, kind, bias, noise, per_episode):
    """Human values Y and judge values on labeled and unlabeled turns, with episode ids."""
    total = n + N
    episodes = np.repeat(np.arange((total + per_episode - 1) // per_episode), per_episode)[:total]
    ep_effect = rng.normal(0, 0.7, episodes.max() + 1)[episodes]
    latent = 3 + ep_effect + rng.normal(0, 1, total)
    if kind == "scale":
        y = np.clip(np.round(latent), 1, 5)
        yh = np.clip(np.round(latent + bias + rng.normal(0, noise, total)), 1, 5)
    elif kind == "yesno":
        y = (latent > 3).astype(float)
        yh = ((latent + bias + rng.normal(0, noise, total)) > 3).astype(float)
    elif kind == "inverse":  # a judge that scores backwards: lambda clips to 0
        y = np.clip(np.round(latent), 1, 5)
        yh = np.clip(np.round(6 - latent + rng.normal(0, noise, total)), 1, 5)
    else:  # continuous judge on a scale field
        y = np.clip(np.round(latent), 1, 5)
        yh = latent + bias + rng.normal(0, noise, total)
    perm = rng.permutation(total)
    lab, unl = perm[:n], perm[n:]
    return y[lab], yh[lab], yh[unl], episodes[lab], episodes[unl]


def clustered(Y, Yhat, Yu, cl, clu, lam):
    """PPI estimate and SE with lambda fixed, by statsmodels' cluster-robust OLS."""
    n, N = len(Y), len(Yu)
    resp = np.concatenate([Y - lam * Yhat, lam * Yu])
    X = np.zeros((n + N, 2))
    X[:n, 0] = 1
    X[n:, 1] = 1
    groups = np.concatenate([cl, clu])
    fit = sm.OLS(resp, X).fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False})
    c = np.array([1.0, 1.0])
    return float(c @ fit.params), float(np.sqrt(c @ fit.cov_params() @ c))


def human_clustered(Y, cl):
    fit = sm.OLS(Y, np.ones((len(Y), 1))).fit(cov_type="cluster", cov_kwds={"groups": cl, "use_correction": False})
    return float(fit.params[0]), float(np.sqrt(fit.cov_params()[0, 0]))


def main():
    rng = np.random.default_rng(20261125)
    specs = [
        # name, n, N, kind, bias, noise, turns per episode
        ("scale_good_judge", 40, 400, "scale", 0.4, 0.5, 1),
        ("scale_noisy_judge", 30, 200, "scale", -0.3, 2.0, 1),
        ("yesno_biased_judge", 50, 500, "yesno", 0.5, 0.6, 1),
        ("continuous_judge", 25, 150, "continuous", 0.2, 0.3, 1),
        ("useless_judge", 20, 80, "scale", 0.0, 50.0, 1),
        ("small_n", 3, 10, "scale", 0.5, 0.5, 1),
        ("inverse_judge", 30, 120, "inverse", 0.0, 0.5, 1),
        ("clustered_scale", 40, 300, "scale", 0.4, 0.6, 4),
        ("clustered_yesno", 60, 240, "yesno", -0.4, 0.8, 6),
    ]
    cases = []
    for name, n, N, kind, bias, noise, per in specs:
        Y, Yhat, Yu, cl, clu = make(rng, n, N, kind, bias, noise, per)
        lam = ppi_lambda(Y, Yhat, Yu)
        case = {
            "name": name,
            "human": Y.tolist(),
            "judge": Yhat.tolist(),
            "unlabeled": Yu.tolist(),
            "alpha": ALPHA,
            "lambda": lam,
        }
        if per == 1:
            case["reference"] = "ppi_py"
            case["estimate"] = float(ppi_py.ppi_mean_pointestimate(Y, Yhat, Yu, lam=None)[0])
            lo, hi = ppi_py.ppi_mean_ci(Y, Yhat, Yu, alpha=ALPHA, lam=None)
            case["ci"] = [float(lo[0]), float(hi[0])]
            hlo, hhi = ppi_py.classical_mean_ci(Y, alpha=ALPHA)
            case["human_ci"] = [float(hlo), float(hhi)]
            case["human_estimate"] = float(Y.mean())
        else:
            case["reference"] = "statsmodels cluster-robust OLS"
            case["cluster"] = cl.tolist()
            case["cluster_unlabeled"] = clu.tolist()
            est, se = clustered(Y, Yhat, Yu, cl, clu, lam)
            z = float(__import__("scipy.stats").stats.norm.ppf(1 - ALPHA / 2))
            case["estimate"] = est
            case["ci"] = [est - z * se, est + z * se]
            hest, hse = human_clustered(Y, cl)
            case["human_estimate"] = hest
            case["human_ci"] = [hest - z * hse, hest + z * hse]
        cases.append(case)
    json.dump({"generator": "internal/ppi/testdata/ppi_reference.py",
               "ppi_py_commit": os.environ.get("PPI_PY_COMMIT", ""),
               "cases": cases}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
