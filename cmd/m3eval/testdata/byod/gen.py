#!/usr/bin/python3
"""Writes the "bring your own data" fixture: a multimodal-judge benchmark's layout, one JSONL
per human rater and one file of a VLM judge's scores, as the files of issue #39 look. Run from
this directory: /usr/bin/python3 gen.py (deterministic: random.Random(39))."""
import json, random

rng = random.Random(39)
models = ["cogvlm", "llava", "qwen-vl"]
N = 36
items = []
for k in range(N):
    truth = rng.randint(1, 5)
    items.append({"score_id": k, "name": models[k % 3], "id": 100 + k,
                  "instruction": f"Question {k}: what is in the picture?",
                  "answer": f"Answer {k} of {models[k % 3]}: a picture of thing {k}.",
                  "image_path": f"images/img{k % 4}.png", "truth": truth})

def rate(truth, noise):
    return max(1, min(5, truth + rng.choice(noise)))

raters = {"rater_a": (0, 0, 0, 1, -1), "rater_b": (0, 0, 1, -1, 1, 0), "rater_c": (0, -1, 1, 2, 0)}
for r, noise in raters.items():
    # rater_c rates only the first 24 items: not every item is rated by everyone.
    subset = items if r != "rater_c" else items[:24]
    with open(f"{r}.jsonl", "w") as f:
        for it in subset:
            h = rate(it["truth"], noise)
            rec = {k: v for k, v in it.items() if k != "truth"}
            rec["human_answer"] = str(h) if it["score_id"] % 5 else h  # text mostly, a number sometimes
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")

with open("judge.jsonl", "w") as f:
    for it in items:
        if it["score_id"] % 9 == 8:
            continue  # no judge score for some items: estimate leaves their labels out
        j = rate(it["truth"], (0, 0, 1, -1))
        score = str(j) if it["score_id"] % 2 else j  # string or number
        rec = {"score_id": it["score_id"], "name": it["name"], "result": {"name": it["name"].upper(), "judge": score, "analysis": "looks right"}}
        f.write(json.dumps(rec) + "\n")
        if it["score_id"] in (3, 10):
            # listed twice with another score: --on-duplicate first keeps the one above
            rec = dict(rec, result=dict(rec["result"], judge=str(max(1, j - 1))))
            f.write(json.dumps(rec) + "\n")
    for unknown in (900, 901):  # judged samples the raters never saw
        f.write(json.dumps({"score_id": unknown, "name": "cogvlm", "result": {"name": "COGVLM", "judge": 3, "analysis": ""}}) + "\n")

# Three of the four images the records name (img3.png is missing on purpose: the import
# summary lists it). Tiny 4x4 PNGs written with zlib, no imaging library needed.
import os, struct, zlib
os.makedirs("images", exist_ok=True)
def png(path, rgb):
    raw = b"".join(b"\x00" + bytes(rgb) * 4 for _ in range(4))
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
for i, c in enumerate([(200, 30, 30), (30, 200, 30), (30, 30, 200)]):
    png(f"images/img{i}.png", c)
