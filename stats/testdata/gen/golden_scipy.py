"""Regenerates ../golden_scipy.json and cross-checks ../golden_r.json against scipy.

Run from the repository root with Debian's python (apt-get install python3-scipy):
    /usr/bin/python3 stats/testdata/gen/golden_scipy.py

scipy supplies the studentized range with infinite degrees of freedom (R's ptukey is only
accurate to about 1e-8 there, and qtukey to 1e-4). The rank tests are recomputed with scipy and
must agree with R to 1e-9 relative; a disagreement stops the script, so the two references
never silently diverge.
"""
import json
import math
import sys

import numpy as np
import scipy
from scipy import stats

TOL = 1e-9


def close(a, b):
    return a == b or abs(a - b) <= TOL * max(abs(b), 1e-300)


def alt(a):
    return {"two.sided": "two-sided", "greater": "greater", "less": "less"}[a]


def main():
    with open("stats/testdata/golden_r.json") as f:
        r = json.load(f)
    bad = []
    for c in r["mann_whitney"]:
        res = stats.mannwhitneyu(c["x"], c["y"], alternative=alt(c["alternative"]),
                                 method="exact" if c["exact"] else "asymptotic")
        if not (close(res.statistic, c["statistic"]) and close(res.pvalue, c["p_value"])):
            bad.append(("mann_whitney", c["name"], c["alternative"], res.pvalue, c["p_value"]))
    for c in r["signed_rank"]:
        res = stats.wilcoxon(c["x"], c["y"], alternative=alt(c["alternative"]),
                             zero_method="wilcox", correction=True,
                             mode="exact" if c["exact"] else "approx")
        if not close(res.pvalue, c["p_value"]):
            bad.append(("signed_rank", c["name"], c["alternative"], res.pvalue, c["p_value"]))
    for c in r["kruskal_wallis"]:
        res = stats.kruskal(*c["groups"])
        if not (close(res.statistic, c["statistic"]) and close(res.pvalue, c["p_value"])):
            bad.append(("kruskal_wallis", c["name"], res.pvalue, c["p_value"]))
    for c in r["friedman"]:
        cols = np.array(c["blocks"]).T
        res = stats.friedmanchisquare(*cols)
        if not (close(res.statistic, c["statistic"]) and close(res.pvalue, c["p_value"])):
            bad.append(("friedman", c["name"], res.pvalue, c["p_value"]))
    for b in bad:
        print("scipy disagrees with R:", b, file=sys.stderr)

    sr = []
    for k in (2, 3, 4, 5, 10, 20, 50):
        for q in (0.5, 1.5, 2.5, 3.5, 4.5, 6.0):
            sr.append({"k": k, "q": q, "p": float(stats.studentized_range.cdf(q, k, np.inf))})
    quant = []
    for k in (2, 3, 5, 10, 20):
        for p in (0.90, 0.95):
            quant.append({"k": k, "p": p, "q": float(stats.studentized_range.ppf(p, k, np.inf))})
    out = {
        "generator": "scipy " + scipy.__version__,
        "studentized_range_cdf": sr,
        "studentized_range_quantile": quant,
    }
    with open("stats/testdata/golden_scipy.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
