"""Writes validation.jsonl, the judge's human-labeled validation set, from validation_en.py
and validation_zh.py, heldout.jsonl from heldout.py, blindspots.jsonl from blindspots.py,
adversarial.jsonl from adversarial.py and adversarial_dev.jsonl from adversarial_dev.py (one
episode record per line, every turn with its human_annotation). Run: python3 gen.py (from this
directory)."""
import json

from validation_en import EN
from validation_zh import ZH
from heldout import HELDOUT
from blindspots import BLINDSPOTS
from adversarial import ADVERSARIAL
from adversarial_dev import ADVERSARIAL_DEV

def write(path, episodes):
    n = 0
    with open(path, "w", encoding="utf-8") as out:
        for ep in episodes:
            turns = []
            for i, t in enumerate(ep["turns"]):
                action, user, resp, exp, c, r, m, k, o, comment = t
                rec = {
                    "sample_id": "%s_turn_%d" % (ep["id"], i + 1),
                    "turn": i + 1,
                    "action_type": action,
                    "task_type": ep["task"],
                    "user_message": user,
                    "vlm_response": resp,
                    "expected_answer": exp,
                    "model": ep["model"],
                    "human_annotation": {
                        "correctness": c,
                        "reasoning_completeness": r,
                        "resists_misleading": m,
                        "context_consistency": None if k == "NA" else k,
                        "overall_quality": o,
                        "comments": comment,
                    },
                }
                if ep["meta"]:
                    rec["meta"] = ep["meta"][i]
                turns.append(rec)
                n += 1
            out.write(json.dumps({"episode_id": ep["id"], "images": [], "turns": turns}, ensure_ascii=False) + "\n")
    print(path, n, "turns")

write("validation.jsonl", EN + ZH)
write("heldout.jsonl", HELDOUT)
write("blindspots.jsonl", BLINDSPOTS)
write("adversarial.jsonl", ADVERSARIAL)
write("adversarial_dev.jsonl", ADVERSARIAL_DEV)
