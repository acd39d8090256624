# Reference allocations from the IllusionBench guide's proportional_allocation (section 4.2),
# copied verbatim, over seeded random cases. Run: python3 alloc_ref.py > alloc_ref.json
import json
import random

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
