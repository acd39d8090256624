#!/usr/bin/python3
"""Generate extra oracle cases for the agree tests.

Run from this folder with Debian's Python (the oracle needs its numpy/scipy/sklearn):

    /usr/bin/python3 gen_cases.py [/path/to/shared/oracle/oracle.py]

Each case gets ratings.csv, auto.csv, schema.json (unless the case tests schema inference),
cmd.txt (the oracle command, run inside the case folder) and oracle.json. Inputs come from
random.Random with a fixed seed per case, so rerunning reproduces them byte for byte.
"""
import csv
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../../../../shared/oracle/oracle.py")


def write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def missing_form(rng, rows, key, p):
    """Drop a rating in one of the three missing forms: NA, empty, absent row."""
    u = rng.random()
    if u < p / 3:
        rows.append(key + ["NA"])
    elif u < 2 * p / 3:
        rows.append(key + [""])
    elif u < p:
        pass
    else:
        return False
    return True


def ordinal_rating(rng, truth, lo, hi, spread=1):
    return max(lo, min(hi, truth + rng.randint(-spread, spread)))


def case(name, ratings, auto, schema, extra_args):
    d = os.path.join(HERE, "cases", name)
    os.makedirs(d, exist_ok=True)
    write_csv(os.path.join(d, "ratings.csv"), ["item", "rater", "field", "value"], ratings)
    args = ["ratings.csv"]
    if auto is not None:
        header = ["item", "field", "value"]
        write_csv(os.path.join(d, "auto.csv"), header, auto)
        args += ["--auto", "auto.csv"]
    if schema is not None:
        with open(os.path.join(d, "schema.json"), "w", encoding="utf-8") as fh:
            json.dump({"fields": schema}, fh, indent=1)
        args += ["--schema", "schema.json"]
    args += extra_args + ["-o", "oracle.json"]
    cmd = ["/usr/bin/python3", "../../../../../../shared/oracle/oracle.py"] + args
    with open(os.path.join(d, "cmd.txt"), "w", encoding="utf-8") as fh:
        fh.write(" ".join(cmd) + "\n")
    subprocess.run(["/usr/bin/python3", ORACLE] + args, cwd=d, check=True)
    print("wrote", name)


def g01_large():
    """3,000 items, 4 raters, ~15% missing; ordinal 1..5, ordinal 0..10, nominal 3 labels."""
    rng = random.Random(101)
    raters = ["r1", "r2", "r3", "r4"]
    ratings, auto = [], []
    for i in range(3000):
        it = "s%05d" % i
        t5, t10 = rng.randint(1, 5), rng.randint(0, 10)
        tn = rng.choice(["good", "bad", "partial"])
        for r in raters:
            for field, val in (("fluency", ordinal_rating(rng, t5, 1, 5)),
                               ("score", ordinal_rating(rng, t10, 0, 10, 2)),
                               ("verdict", tn if rng.random() < 0.7 else rng.choice(["good", "bad", "partial"]))):
                if not missing_form(rng, ratings, [it, r, field], 0.15):
                    ratings.append([it, r, field, str(val)])
        if rng.random() < 0.95:
            auto.append([it, "fluency", "%.3f" % (t5 + rng.gauss(0, 0.8))])
        auto.append([it, "score", str(ordinal_rating(rng, t10, 0, 10, 3))])
        auto.append([it, "verdict", tn if rng.random() < 0.6 else "bad"])
    schema = {"fluency": {"type": "ordinal", "categories": [1, 2, 3, 4, 5]},
              "score": {"type": "ordinal", "categories": list(range(0, 11))},
              "verdict": {"type": "nominal", "categories": ["bad", "good", "partial"]}}
    case("g01_large_4raters", ratings, auto, schema, ["--no-r"])


def g02_na_category():
    """Yes/No/NA field with --na-category, schema inferred; 5 raters of unequal diligence."""
    rng = random.Random(202)
    raters = ["ann_%d" % k for k in range(5)]
    ratings, auto = [], []
    for i in range(120):
        it = "t%03d" % i
        truth = rng.choice(["Yes", "Yes", "No", "NA"])
        for k, r in enumerate(raters):
            if rng.random() < 0.1 * k:
                ratings.append([it, r, "grounded", ""])
                continue
            v = truth if rng.random() < 0.75 else rng.choice(["Yes", "No", "NA"])
            ratings.append([it, r, "grounded", v])
        auto.append([it, "grounded", truth if rng.random() < 0.7 else rng.choice(["Yes", "No"])])
    case("g02_na_category", ratings, auto, None, ["--na-category", "--bootstrap", "1000", "--seed", "7"])


def g03_inferred():
    """No schema: an integer field 0..7 (outside 1..5, so min..max) and a free-text field;
    auto values written as 4.0, non-numbers and values outside the categories."""
    rng = random.Random(303)
    ratings, auto = [], []
    for i in range(80):
        it = "u%02d" % i
        t = rng.randint(0, 7)
        for r in ("x", "y", "z"):
            if not missing_form(rng, ratings, [it, r, "steps"], 0.2):
                ratings.append([it, r, "steps", str(ordinal_rating(rng, t, 0, 7))])
            ratings.append([it, r, "style", rng.choice(["terse", "verbose", "ok, fine", "ok"])])
        u = rng.random()
        if u < 0.1:
            auto.append([it, "steps", "n/a"])
        elif u < 0.2:
            auto.append([it, "steps", "%d.0" % t])
        elif u < 0.3:
            auto.append([it, "steps", "9"])
        else:
            auto.append([it, "steps", str(ordinal_rating(rng, t, 0, 7))])
        auto.append([it, "style", rng.choice(["terse", "verbose", "ok"])])
    case("g03_inferred_schema", ratings, auto, None, ["--bootstrap", "1000", "--seed", "3"])


def g04_sparse_crowd():
    """12 raters, 150 items, each item rated by 2-5 random raters (crowd style): many pairs
    with few or no co-rated items, no complete item."""
    rng = random.Random(404)
    raters = ["w%02d" % k for k in range(12)]
    ratings, auto = [], []
    for i in range(150):
        it = "c%03d" % i
        t = rng.randint(1, 5)
        for r in rng.sample(raters, rng.randint(2, 5)):
            ratings.append([it, r, "quality", str(ordinal_rating(rng, t, 1, 5))])
            ratings.append([it, r, "safe", "Yes" if rng.random() < 0.9 else "No"])
        auto.append([it, "quality", "%.2f" % (t + rng.gauss(0, 1))])
        auto.append([it, "safe", "Yes"])
    schema = {"quality": {"type": "ordinal", "categories": [1, 2, 3, 4, 5]},
              "safe": {"type": "nominal", "categories": ["No", "Yes"]}}
    case("g04_sparse_crowd", ratings, auto, schema, ["--bootstrap", "1000", "--seed", "11"])


def g05_two_raters_bootstrap():
    """2 raters, 400 items, half co-rated; skewed 1..5 ratings."""
    rng = random.Random(505)
    ratings, auto = [], []
    for i in range(400):
        it = "p%03d" % i
        t = min(5, 1 + int(rng.expovariate(0.8)))
        who = ["a", "b"] if i % 2 == 0 else [rng.choice(["a", "b"])]
        for r in who:
            ratings.append([it, r, "helpful", str(ordinal_rating(rng, t, 1, 5))])
        auto.append([it, "helpful", str(ordinal_rating(rng, t, 1, 5))])
    schema = {"helpful": {"type": "ordinal", "categories": [1, 2, 3, 4, 5]}}
    case("g05_two_raters_bootstrap", ratings, auto, schema, ["--bootstrap", "1000", "--seed", "5"])


def g06_rare_disagreement():
    """Bootstrap where many replicates are undefined: 2 raters, 25 items, all "Yes" except two
    items (so a resample often holds a single value); plus a field rated on one item only."""
    rng = random.Random(606)
    ratings, auto = [], []
    for i in range(25):
        it = "r%02d" % i
        a, b = ("Yes", "No") if i in (3, 17) else ("Yes", "Yes")
        ratings += [[it, "a", "ok", a], [it, "b", "ok", b]]
        auto.append([it, "ok", "Yes"])
        t = 3 + (i % 2)
        ratings += [[it, "a", "level", str(t)], [it, "b", "level", str(t if i % 5 else t - 1)]]
        auto.append([it, "level", "%.1f" % (t + rng.random())])
    ratings += [["only", "a", "lonely", "2"], ["only", "b", "lonely", "4"]]
    schema = {"ok": {"type": "nominal", "categories": ["No", "Yes"]},
              "level": {"type": "ordinal", "categories": [1, 2, 3, 4, 5]},
              "lonely": {"type": "ordinal", "categories": [1, 2, 3, 4, 5]}}
    case("g06_rare_disagreement", ratings, auto, schema, ["--bootstrap", "1000", "--seed", "13"])


def g07_tiny_scores():
    """Pearson on tiny but varying automatic scores (like HANNA's CIDEr column, 1e-310): the
    squared deviations underflow unless they are scaled first."""
    rng = random.Random(707)
    ratings, auto = [], []
    for i in range(30):
        it = "t%02d" % i
        truth = rng.randint(1, 5)
        for r in "abc":
            ratings.append([it, r, "quality", str(ordinal_rating(rng, truth, 1, 5))])
        auto.append([it, "quality", repr((truth + rng.random()) * 1e-310)])
    schema = {"quality": {"type": "ordinal", "categories": [1, 2, 3, 4, 5]}}
    case("g07_tiny_scores", ratings, auto, schema, [])


if __name__ == "__main__":
    wanted = sys.argv[2:] if len(sys.argv) > 2 else None
    for fn in (g01_large, g02_na_category, g03_inferred, g04_sparse_crowd, g05_two_raters_bootstrap,
               g06_rare_disagreement, g07_tiny_scores):
        if wanted is None or fn.__name__ in wanted:
            fn()
