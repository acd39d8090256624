#!/usr/bin/env python3
"""Writes golden.json: outputs of CPython's random.Random that pyrandom must reproduce.

Run from this directory with CPython 3.11 (the reference version):
    python3 gen_golden.py > golden.json
Each case seeds a fresh random.Random(seed) and applies the listed operations in order on
that one generator, so the test also checks that every operation leaves the state where
CPython leaves it.
"""
import json
import sys
import random

SEEDS = [0, 1, 42, -42, 2**31, 2**32 - 1, 2**32, -(2**63), 2**64 + 5, -(2**70),
         123456789012345678901234567890]

# (op, argument) pairs; sample takes (n, k).
OPS = (
    [("getrandbits", 32)] * 3
    + [("random", None)] * 3
    + [("getrandbits", k) for k in (0, 1, 7, 31, 33, 63, 64, 65, 100, 200, 1000)]
    + [("randbelow", v) for v in (1, 2, 3, 5, 7, 8, 1000, 2**31, 2**32 + 1, 2**53 + 3, 2**62, 2**63 - 1)]
    + [("randbelow_big", v) for v in (2**64, 2**100 + 7, 3**90)]
    + [("shuffle", v) for v in (0, 1, 2, 20, 100)]
    + [("sample", nk) for nk in (
        (0, 0), (5, 0), (5, 5), (21, 5), (22, 5), (85, 6), (86, 6), (100, 100),
        (1045, 333), (1046, 333), (1867, 333), (4117, 1000), (4118, 1000), (20000, 1000),
        (6000, 2000), (3, 1))]
    + [("random", None)]
)


def run(seed):
    rng = random.Random(seed)
    out = []
    for op, arg in OPS:
        if op == "getrandbits":
            res = str(rng.getrandbits(arg))
        elif op == "random":
            res = rng.random().hex()
        elif op == "randbelow":
            res = str(rng._randbelow(arg))
        elif op == "randbelow_big":
            res = str(rng._randbelow(arg))
            arg = str(arg)
        elif op == "shuffle":
            x = list(range(arg))
            rng.shuffle(x)
            res = x
        elif op == "sample":
            res = rng.sample(range(arg[0]), arg[1])
        out.append({"op": op, "arg": arg, "out": res})
    return {"seed": str(seed), "ops": out}


def main():
    doc = {"python": sys.version.split()[0], "cases": [run(s) for s in SEEDS]}
    json.dump(doc, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
