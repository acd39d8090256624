#!/usr/bin/env python3
"""Writes select_golden.json: the guide's make_arshia_testset.py selection on synthetic splits.

Run from this directory with CPython 3.11:
    python3 gen_golden.py > select_golden.json

proportional_allocation, build_index and sample_refs below are copied from the guide
(../shared/spec/illusionbench-testset.md, section 4.2) with one change: build_index takes
the list of image_name strings instead of a datasets.Dataset. The image names come from
synth_names, a formula the Go test repeats, so the golden file needs no name lists.
"""
import json
import random
import sys
from collections import defaultdict

DIFF_TOKENS = ["easy", "medium", "hard"]


def parse_difficulty(image_name: str) -> str:
    name = image_name.lower()
    for tok in DIFF_TOKENS:
        if f"-{tok}-" in name:
            return tok.capitalize()
    return "Unknown"


def proportional_allocation(counts: dict, total: int) -> dict:
    grand = sum(counts.values())
    if grand == 0:
        return {k: 0 for k in counts}
    alloc = {}
    remainder = []
    running = 0
    for k, c in counts.items():
        exact = c / grand * total
        floor_val = int(exact)
        alloc[k] = floor_val
        running += floor_val
        remainder.append((exact - floor_val, k))
    remainder.sort(reverse=True)
    for _, k in remainder:
        if running >= total:
            break
        alloc[k] += 1
        running += 1
    return alloc


def build_index(names, parse_fn):
    idx_by_diff = defaultdict(list)
    for i, name in enumerate(names):
        idx_by_diff[parse_fn(name)].append(i)
    return idx_by_diff


def sample_refs(idx_by_diff: dict, alloc: dict, rng: random.Random) -> list:
    refs = []
    for diff, indices in idx_by_diff.items():
        n = alloc.get(diff, 0)
        chosen = rng.sample(indices, min(n, len(indices)))
        refs.extend(chosen)
    return sorted(refs)


SHAPES = ["animal", "face_emoji", "Stationary", "mercedes-benz", "paper_clip", "vehicle"]
SCENES = ["Sand_dune", "Ocean", "Medieval_Village", "Time_square", "under-water"]
DIFFS = ["Easy", "Medium", "Hard", "EASY", "hard"]


def synth_names(size, salt, weights):
    """Deterministic names; weights are cumulative thresholds out of 100 for Easy, Medium,
    Hard; the rest has no difficulty token (the Unknown group)."""
    out = []
    for i in range(size):
        x = (i * 2654435761 + salt * 40503) % 2**32
        b = x % 100
        shape = SHAPES[(x >> 8) % len(SHAPES)]
        scene = SCENES[(x >> 12) % len(SCENES)]
        if b < weights[0]:
            d = DIFFS[0] if (x >> 16) % 4 else DIFFS[3]
        elif b < weights[1]:
            d = DIFFS[1]
        elif b < weights[2]:
            d = DIFFS[2] if (x >> 16) % 3 else DIFFS[4]
        else:
            out.append(f"{shape}-{i}-{scene}-{x % 7}.{x % 10}-{x % 97}.png")
            continue
        out.append(f"{shape}-{i}-{scene}-{d}-{x % 7}.{x % 10}-{x % 97}.png")
    return out


def split_names(split, size):
    # Constant names for tie tests: every group exactly the same size.
    if split.get("equal"):
        return [f"s-{i}-c-{DIFFS[i % 3]}-1.png" for i in range(size)]
    return synth_names(size, split["salt"], split["weights"])


CASES = [
    # The lab's shape: three splits, 1000 each, seed 42; large groups use the set branch.
    {"name": "paper_sizes", "seed": 42, "n": 1000, "splits": [
        {"name": "Illusion_ICON", "size": 20000, "salt": 1, "weights": [34, 67, 99]},
        {"name": "Illusion_LOGO", "size": 5600, "salt": 2, "weights": [30, 70, 100]},
        {"name": "Illusion_IN", "size": 6900, "salt": 3, "weights": [50, 80, 97]},
    ]},
    # Small groups: the pool branch of random.sample.
    {"name": "pool_branch", "seed": 42, "n": 300, "splits": [
        {"name": "A", "size": 900, "salt": 4, "weights": [40, 75, 100]},
        {"name": "B", "size": 350, "salt": 5, "weights": [20, 60, 90]},
    ]},
    # Fewer rows than n: groups are allocated more than they hold (min(k, available)).
    {"name": "short_groups", "seed": 7, "n": 100, "splits": [
        {"name": "tiny", "size": 40, "salt": 6, "weights": [50, 80, 95]},
        {"name": "next", "size": 500, "salt": 7, "weights": [33, 66, 99]},
    ]},
    # Equal remainders: the tie goes to the larger key (Medium > Hard > Easy).
    {"name": "ties", "seed": 0, "n": 10, "splits": [
        {"name": "eq", "size": 30, "equal": True},
        {"name": "eq2", "size": 3000, "equal": True},
    ]},
    # A negative and a large seed, an empty split and n = 0.
    {"name": "odd_seeds", "seed": -123456789, "n": 250, "splits": [
        {"name": "empty", "size": 0, "salt": 8, "weights": [30, 60, 90]},
        {"name": "x", "size": 2500, "salt": 9, "weights": [10, 20, 30]},
    ]},
    {"name": "zero_n", "seed": 2**40 + 3, "n": 0, "splits": [
        {"name": "z", "size": 100, "salt": 10, "weights": [30, 60, 90]},
    ]},
]


def run(case):
    rng = random.Random(case["seed"])
    out = []
    for split in case["splits"]:
        names = split_names(split, split["size"])
        idx_by_diff = build_index(names, parse_difficulty)
        counts = {d: len(v) for d, v in idx_by_diff.items()}
        alloc = proportional_allocation(counts, case["n"])
        indices = sample_refs(idx_by_diff, alloc, rng)
        out.append({
            "split": split["name"],
            "original_counts": [[k, v] for k, v in counts.items()],
            "allocated": [[k, v] for k, v in alloc.items()],
            "indices": indices,
            "first_names": names[:3],
        })
    return {**case, "results": out}


if __name__ == "__main__":
    doc = {"python": sys.version.split()[0], "cases": [run(c) for c in CASES]}
    json.dump(doc, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
