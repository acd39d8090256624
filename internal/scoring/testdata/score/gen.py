#!/usr/bin/env python3
"""Fixture of the m3eval score end-to-end test (internal/scoring/score_test.go; cmd/m3eval imports it too).

Writes, from one seeded random draw and without any m3eval code:
  * what the test imports into a database: turns.jsonl (every turn), labels_<annotator>.jsonl
    (labeled samples in the guide's format, imported with --annotator), judge_gpt.jsonl and
    judge_rules.csv (automatic scores for import-scores);
  * the same ratings and scores in the oracle's long form: ratings.csv (done labels only,
    NA written as NA), auto_gpt.csv, auto_rules.csv, schema.json and schema_na.json, and one
    ratings_<action_type>.csv per action type;
  * oracle.sh, which runs ../../../../../shared/oracle/oracle.py on them into oracle_*.json.

Run from this folder: python3 gen.py && sh oracle.sh. Rows go in the order m3eval score
streams them (episodes as imported, turn, annotator name), so the raters of every field come
in the same order on both sides.

The judge gpt writes some whole scores as 4.0. The oracle's reference reads them as the
category 4, as its README defines; its R half compares the text "4.0" with the category "4"
and so leaves them out of exact match and kappa, which oracle_gpt*.json list as
"unexplained" disagreements of R:base and R:vcd::Kappa. m3eval matches the reference.
"""
import csv
import json
import random

rng = random.Random(20261122)

FIELDS = ["context_consistency", "correctness", "overall_quality", "reasoning_completeness", "resists_misleading"]
SCALES = ["correctness", "reasoning_completeness", "overall_quality"]
MISLEAD = {"mislead", "mislead_subtle", "memory_injection"}
LATER = ["follow_up", "guidance", "mislead", "memory_injection", "mislead_subtle"]
ANNOTATORS = ["alice", "bob", "carol"]
COVER = {"alice": 0.95, "bob": 0.8, "carol": 0.55}

turns = []
for e in range(9):
    ep = "ep%02d" % e
    for n in range(1, 7):
        action = "initial" if n == 1 else rng.choice(LATER)
        turns.append(dict(sample_id="%s_turn_%d" % (ep, n), episode_id=ep, turn=n, action_type=action,
                          task_type=rng.choice(["spatial", "counting"]), user_message="q%d" % n,
                          vlm_response="a%d" % n, expected_answer="e%d" % n, images=[], model=rng.choice(["m1", "m2"])))


def fixed(field, t):
    """The rubric's fixed NA rules (annotations/rubric.json)."""
    if field == "resists_misleading" and t["action_type"] not in MISLEAD:
        return "NA"
    if field == "context_consistency" and t["turn"] == 1:
        return "NA"
    return None


def clamp(x):
    return max(1, min(5, x))


# A latent quality per turn makes the raters and judges agree somewhat.
quality = {t["sample_id"]: rng.randint(1, 5) for t in turns}
labels = {a: {} for a in ANNOTATORS}  # annotator -> sample -> (status, values)
for t in turns:
    q = quality[t["sample_id"]]
    for a in ANNOTATORS:
        if rng.random() > COVER[a]:
            continue
        vals = {}
        for f in FIELDS:
            fx = fixed(f, t)
            if fx:
                vals[f] = fx
            elif f in SCALES:
                vals[f] = str(clamp(q + rng.choice([-1, 0, 0, 0, 1]) + (1 if a == "bob" and rng.random() < 0.2 else 0)))
            else:
                vals[f] = "Yes" if (q >= 3) != (rng.random() < 0.2) else "No"
        status = "draft" if a == "carol" and rng.random() < 0.15 else "done"
        if status == "draft":
            vals = {"correctness": vals["correctness"]}
        labels[a][t["sample_id"]] = (status, vals)

with open("turns.jsonl", "w") as fh:
    for t in turns:
        fh.write(json.dumps(t) + "\n")

for a in ANNOTATORS:
    with open("labels_%s.jsonl" % a, "w") as fh:
        for t in turns:
            if t["sample_id"] not in labels[a]:
                continue
            status, vals = labels[a][t["sample_id"]]
            ann = {}
            for f, v in vals.items():
                ann[f] = None if v == "NA" else (int(v) if f in SCALES else v)
            ann["comments"] = ""
            if status == "draft":
                ann["status"] = "draft"
            rec = dict(t)
            rec["human_annotation"] = ann
            fh.write(json.dumps(rec) + "\n")

# Judge gpt: JSON Lines, continuous scores on correctness (exact match leaves them out),
# whole numbers elsewhere (some written 4.0), null for NA, some keys left out.
gpt = {}
for t in turns:
    q = quality[t["sample_id"]]
    s = {}
    for f in FIELDS:
        if rng.random() < 0.1:
            continue
        fx = fixed(f, t)
        if fx:
            s[f] = None
        elif f == "correctness":
            s[f] = round(min(5.0, max(1.0, q + rng.gauss(0, 0.8))), 1) if rng.random() < 0.6 else clamp(q + rng.choice([-1, 0, 1]))
        elif f in SCALES:
            s[f] = float(clamp(q + rng.choice([-2, -1, 0, 0, 1]))) if rng.random() < 0.3 else clamp(q + rng.choice([-1, 0, 1]))
        else:
            s[f] = "Yes" if (q >= 3) != (rng.random() < 0.3) else "No"
    gpt[t["sample_id"]] = s
with open("judge_gpt.jsonl", "w") as fh:
    for t in turns:
        fh.write(json.dumps(dict(sample_id=t["sample_id"], **gpt[t["sample_id"]])) + "\n")

# Judge rules: CSV, whole numbers, lower-case choices, NA on fixed turns, empty cells.
rules = {}
for t in turns:
    q = quality[t["sample_id"]]
    s = {}
    for f in FIELDS:
        if rng.random() < 0.15:
            s[f] = ""
            continue
        fx = fixed(f, t)
        if fx:
            s[f] = "NA"
        elif f in SCALES:
            s[f] = str(clamp(q + rng.choice([-2, -1, 0, 1, 2])))
        else:
            s[f] = rng.choice(["yes", "no"])
    rules[t["sample_id"]] = s
with open("judge_rules.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["sample_id"] + FIELDS)
    for t in turns:
        w.writerow([t["sample_id"]] + [rules[t["sample_id"]][f] for f in FIELDS])


def write_ratings(path, keep):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "rater", "field", "value"])
        for t in turns:
            if not keep(t):
                continue
            for a in ANNOTATORS:  # already in name order
                lab = labels[a].get(t["sample_id"])
                if lab is None or lab[0] != "done":
                    continue
                for f in FIELDS:
                    w.writerow([t["sample_id"], a, f, lab[1][f]])


write_ratings("ratings.csv", lambda t: True)
actions = sorted({t["action_type"] for t in turns})
for act in actions:
    write_ratings("ratings_%s.csv" % act, lambda t, act=act: t["action_type"] == act)


def canon(v):
    """How the oracle should see a score: NA for null, the number as written."""
    if v is None:
        return "NA"
    return str(v)


with open("auto_gpt.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["item", "field", "value"])
    for t in turns:
        for f, v in gpt[t["sample_id"]].items():
            w.writerow([t["sample_id"], f, canon(v)])
with open("auto_rules.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["item", "field", "value"])
    for t in turns:
        for f, v in rules[t["sample_id"]].items():
            if v in ("yes", "no"):
                v = v.capitalize()
            w.writerow([t["sample_id"], f, v])

for name, na in (("schema.json", False), ("schema_na.json", True)):
    fields = {f: {"type": "ordinal", "categories": [1, 2, 3, 4, 5]} for f in SCALES}
    for f in ("resists_misleading", "context_consistency"):
        fields[f] = {"type": "nominal", "categories": ["Yes", "No"] + (["NA"] if na else [])}
    with open(name, "w") as fh:
        json.dump({"fields": fields}, fh, indent=1)

O = "/usr/bin/python3 ../../../../../shared/oracle/oracle.py"
with open("oracle.sh", "w") as fh:
    fh.write("#!/bin/sh\n# Reference values of score_test.go; run in this folder after gen.py.\nset -e\n")
    fh.write("%s ratings.csv --auto auto_gpt.csv --schema schema.json -o oracle_gpt.json\n" % O)
    fh.write("%s ratings.csv --auto auto_rules.csv --schema schema.json -o oracle_rules.json\n" % O)
    fh.write("%s ratings.csv --auto auto_gpt.csv --schema schema_na.json --na-category -o oracle_gpt_na.json\n" % O)
    fh.write("%s ratings.csv --auto auto_gpt.csv --schema schema.json --bootstrap 1000 --seed 12345 -o oracle_gpt_boot.json\n" % O)
    for act in actions:
        fh.write("%s ratings_%s.csv --auto auto_gpt.csv --schema schema.json -o oracle_gpt_%s.json\n" % (O, act, act))
print("actions:", actions)
