#!/usr/bin/python3
"""Reference values of ppi.MaxT for correlated estimates of unequal variance (issue #41 review).

maxt_reference.py checks the Tukey case (independent estimates, equal variances). Here the
estimates are correlated (models scored on shared episodes) and their variances differ, so
the standardised differences have unequal correlations. For a set of pairs, the 95% max-t
critical value c solves P(max_p |Z_A - Z_B| / sd_p / S <= c) = 0.95, Z ~ N(0, cov) and
S = sqrt(chi2_nu / nu) independent (S = 1 for nu = None, i.e. infinity).

- "exact" cases: pairs of full rank (every model against model 0). The probability is a box
  probability of a nonsingular multivariate normal, given S: scipy's multivariate_normal.cdf
  (Genz's integration) with lower_limit, integrated over S by generalized Gauss-Laguerre
  quadrature on the gamma density of nu*S^2/2; c by Brent's root finding.
- "mc" cases: all K(K - 1)/2 pairs, whose differences have a singular covariance (no box
  integration): 4,000,000 seeded numpy draws, Monte-Carlo SE of c about 0.002.

Writes maxt_corr_cases.json to standard output. Debian's /usr/bin/python3 (numpy, scipy).
"""
import json
import math
import sys

import numpy as np
import scipy
from scipy import optimize, special, stats


def diff_matrix(k, pairs):
    c = np.zeros((len(pairs), k))
    for i, (a, b) in enumerate(pairs):
        c[i, a], c[i, b] = 1, -1
    return c


def corr_of_pairs(cov, pairs):
    c = diff_matrix(len(cov), pairs)
    s = c @ cov @ c.T
    sd = np.sqrt(np.diag(s))
    return s / np.outer(sd, sd)


def exact(cov, pairs, nu):
    r = corr_of_pairs(cov, pairs)
    m = len(pairs)

    def box(c):
        return stats.multivariate_normal.cdf(np.full(m, c), mean=np.zeros(m), cov=r,
                                             lower_limit=np.full(m, -c), maxpts=200000 * m,
                                             abseps=1e-7, releps=1e-7)

    if nu is None:
        f = lambda c: box(c) - 0.95
    else:
        x, w = special.roots_genlaguerre(48, nu / 2 - 1)
        w = w / special.gamma(nu / 2)
        s = np.sqrt(2 * x / nu)
        f = lambda c: float(np.sum(w * np.array([box(c * si) for si in s]))) - 0.95
    return optimize.brentq(f, 1.0, 6.0, xtol=1e-6)


def mc(cov, pairs, nu, seed):
    rng = np.random.default_rng(seed)
    c = diff_matrix(len(cov), pairs)
    sd = np.sqrt(np.diag(c @ cov @ c.T))
    root = np.linalg.cholesky(cov)
    out = []
    for _ in range(20):
        z = rng.standard_normal((200000, len(cov))) @ root.T
        t = np.abs(z @ c.T) / sd
        if nu is not None:
            t /= np.sqrt(rng.chisquare(nu, 200000) / nu)[:, None]
        out.append(t.max(axis=1))
    return float(np.quantile(np.concatenate(out), 0.95))


def shared(sd, rho):
    """Covariance of estimates with standard deviations sd and correlations rho (models on
    shared episodes are positively correlated)."""
    sd = np.asarray(sd)
    return np.outer(sd, sd) * rho


rho4 = np.array([[1, .6, .3, .1], [.6, 1, .4, .2], [.3, .4, 1, .5], [.1, .2, .5, 1]])
rho5 = np.array([[1, .7, .5, .3, .2], [.7, 1, .6, .4, .1], [.5, .6, 1, .3, .2],
                 [.3, .4, .3, 1, .6], [.2, .1, .2, .6, 1]])
covs = {
    "4 correlated, unequal": shared([0.12, 0.21, 0.17, 0.30], rho4),
    "5 correlated, unequal": shared([0.10, 0.25, 0.15, 0.20, 0.40], rho5),
    "4 independent, unequal": np.diag([0.01423891, 0.04409417, 0.03079318, 0.03957392]),
}
cases = []
for name, cov in covs.items():
    k = len(cov)
    versus0 = [(0, b) for b in range(1, k)]
    every = [(a, b) for a in range(k) for b in range(a + 1, k)]
    for nu in (6, 10.86722199296949, None):
        cases.append({"name": name, "method": "exact", "cov": cov.tolist(), "pairs": versus0, "nu": nu,
                      "crit": exact(cov, versus0, nu)})
        cases.append({"name": name, "method": "mc", "cov": cov.tolist(), "pairs": every, "nu": nu,
                      "crit": mc(cov, every, nu, 2026)})
json.dump({"generator": "internal/ppi/testdata/maxt_corr_reference.py", "scipy": scipy.__version__,
           "numpy": np.__version__, "cases": cases}, sys.stdout, indent=1)
sys.stdout.write("\n")
