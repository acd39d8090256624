#!/usr/bin/python3
"""Writes task_golden.json: what the lab's lmms-eval IllusionBench task computes.

Usage (Debian's Python; the task file comes from EvolvingLMMs-Lab/lmms-eval,
lmms_eval/tasks/unig2u/illusionbench/arshia_utils.py, and is not committed here):
    /usr/bin/python3 gen_task_golden.py PATH/TO/arshia_utils.py > task_golden.json

The task's own functions (parse_image_name, _strip_trailing_index, _recall_match,
_extract_fields) are taken from its source with the ast module and run unchanged; the
module itself is not imported because it needs datasets and PIL. process_docs is
illusionbench_arshia_process_docs's loop over a list instead of a datasets.Dataset.
"""
import ast
import json
import os
import re
import sys
from typing import Dict, List, Optional, Tuple

WANT_FUNCS = {"parse_image_name", "_strip_trailing_index", "_recall_match", "_extract_fields"}
WANT_NAMES = {"_DIFF_TOKENS", "_LINE_SHAPE", "_LINE_SCENE"}

src = open(sys.argv[1], encoding="utf-8").read()
tree = ast.parse(src)
body = []
for node in tree.body:
    if isinstance(node, ast.FunctionDef) and node.name in WANT_FUNCS:
        body.append(node)
    elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in WANT_NAMES for t in node.targets):
        body.append(node)
ns = {"re": re, "os": os, "Optional": Optional, "Tuple": Tuple, "List": List, "Dict": Dict}
exec(compile(ast.Module(body=body, type_ignores=[]), "arshia_utils.py", "exec"), ns)

NAMES = [
    "animal-100-Sand_dune-Hard-1.1-64.png",
    "animal-1-Medieval_Village-Easy-1.5-90.png",
    "face_emoji-7-Ocean-Medium-1.png",
    "Stationary-2-Sand_dune-Hard-1.png",
    "mercedes-benz-12-City-easy-2.0-1.JPG",
    "animal-Ocean-Easy.png",            # no index, no version: the task keeps it
    "animal-3-Ocean-Hard",              # no version, no extension
    "cat-Forest-Medium-1.png",          # no index
    "Hard-1-Ocean-Easy-1.png",          # difficulty token first
    "animal-3-Ocean.png",               # no difficulty
    "animal--3--Cloud--Easy--1.png",    # empty parts
    "dir/sub/bird-4-Cloud-Easy-9.webp",
    "",
    "guitar-٣-Museum-Hard-1.png",       # an Arabic-Indic digit as the index
    "sand-dune-5-Time_square-easy-x.png",
    "a-b-EASY-c.png",
]

docs = []
for i, name in enumerate(NAMES):
    try:
        shape, scene = ns["parse_image_name"](name) if name else (None, None)
        kept = name != ""
    except Exception:
        shape, scene, kept = None, None, False
    docs.append({"image_name": name, "kept": kept, "shape_gt": shape, "scene_gt": scene})

PREDS = [
    "Animal", "animal.", "The shape is a Sand Dune", "sand-dune", "sand_dune", "Face Emoji",
    "face_emoji", "Stationery", "  ANIMAL  ", "", "Shape: animal\nScene: Ocean",
    "shape : cat\r\nSCENE:  forest  \nScene: ocean", "Shape: \nScene: x", "Shape:\nshape: Car",
    "Mercedes Benz", "mercedes-benz", "McDonald's", "Shape: dog\u2028Scene: city",
]
GTS = ["animal", "Sand_dune", "face_emoji", "Stationary", "mercedes-benz", "Mcdonalds", "cat", "ocean", "forest", "city"]
matches = [{"pred": p, "gt": g, "hit": ns["_recall_match"](p, g)} for p in PREDS for g in GTS]
fields = []
for p in PREDS:
    s, c = ns["_extract_fields"](p)
    fields.append({"pred": p, "shape": s, "scene": c})

json.dump({"docs": docs, "matches": matches, "fields": fields}, sys.stdout, ensure_ascii=False, indent=1)
print()
