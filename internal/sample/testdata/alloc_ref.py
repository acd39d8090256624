# Reference allocations from the IllusionBench guide's proportional_allocation (section 4.2),
# over seeded random cases. The function is the guide's, as the illusion golden generator
# copies it. Run from this directory: python3 alloc_ref.py > alloc_ref.json
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../illusion/testdata"))
from gen_golden import proportional_allocation  # noqa: E402

rng = random.Random(12)
cases = []
for _ in range(300):
    n = rng.randint(1, 9)
    keys = rng.sample(["mislead", "memory_injection", "recall", "update", "attribute_swap", "grounding", "next_task", "filler", "Easy", "Hard", "Medium"], n)
    counts = {k: rng.choice([0, 1, 2, 3, 7, rng.randint(1, 50), rng.randint(1, 100000)]) for k in keys}
    total = rng.randint(0, max(1, sum(counts.values())))
    a = proportional_allocation(counts, total)
    cases.append({"keys": keys, "counts": [counts[k] for k in keys], "total": total, "want": [a[k] for k in keys]})
print(json.dumps(cases))
