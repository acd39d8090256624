#!/usr/bin/python3
"""Writes one small conversation log per format that `m3eval import --from` reads.

Usage (Debian's Python with python3-pandas, python3-numpy, python3-xlsxwriter; the
producers' repositories checked out, their code is not committed here):

    /usr/bin/python3 gen_logs.py LMMS_EVAL_REPO VLMEVALKIT_REPO

- lmms-eval: the sample log is written by lmms-eval's own EvaluationTracker.save_results_samples
  (lmms_eval/loggers/evaluation_tracker.py), fed samples built as lmms_eval/evaluator.py builds
  them (its is_multimodal_content filter of doc and _collect_input_media for input_media),
  scored by the IllusionBench task's process_results_shape
  (lmms_eval/tasks/unig2u/illusionbench/arshia_utils.py).
- VLMEvalKit: prediction files are written by vlmeval/smp/file.py's dump (xlsx through
  pandas/xlsxwriter, tsv with QUOTE_ALL, json as to_dict("records")) from rows shaped as
  vlmeval/inference_mt.py leaves them: the dataset's columns, 'image' popped, 'prediction'
  the model's list of answers (MMDU) or one answer.
- openai and sharegpt have no single producer to run: they are written by json.dumps in
  their documented layouts (OpenAI chat completions requests and responses; LLaVA's
  conversations with from/value and the <image> placeholder, a JSON array as LLaVA's
  convert scripts dump it).
The functions are taken from the producers' sources with the ast module and run unchanged;
their modules are not imported because they need torch, transformers or loguru.
"""
import ast
import base64
import csv
import datetime
import json
import mimetypes
import os
import pickle
import struct
import sys
import types
import zlib
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import pandas as pd

OUT = os.path.dirname(os.path.abspath(__file__))


def extract(path, funcs=(), names=(), classes=(), methods=()):
    """Returns the source of the named top-level functions, assignments, classes and
    methods (as functions taking self) of a Python file."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    body = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in funcs:
            body.append(node)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
            body.append(node)
        elif isinstance(node, ast.ClassDef):
            if node.name in classes:
                body.append(node)
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name in methods:
                    item.decorator_list = []
                    body.append(item)
    return ast.Module(body=body, type_ignores=[])


def run(module, ns, filename):
    exec(compile(module, filename, "exec"), ns)
    return ns


def png(w, h, rgb):
    """A small solid PNG, written by hand so that no imaging library is needed."""
    raw = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))

    def chunk(tag, data):
        c = struct.pack(">I", len(data)) + tag + data
        return c + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


class Logger:
    def info(self, *a, **k): pass
    def warning(self, *a, **k): pass
    def debug(self, *a, **k): pass


def lmms_eval(repo):
    ns = {"os": os, "re": __import__("re"), "json": json, "np": np, "Path": Path, "base64": base64,
          "mimetypes": mimetypes, "Any": Any, "Optional": Optional, "Tuple": Tuple, "List": List,
          "Dict": Dict, "Union": Union, "eval_logger": Logger(), "Image": None,
          "torch": types.SimpleNamespace(Tensor=type("Tensor", (), {}))}
    run(extract(os.path.join(repo, "lmms_eval/utils.py"), funcs={"handle_non_serializable", "sanitize_list", "is_multimodal_content"}), ns, "utils.py")
    run(extract(os.path.join(repo, "lmms_eval/evaluator.py"),
                funcs={"_looks_like_image_ref", "_guess_image_mime", "_append_image_source", "_extract_image_sources", "_collect_input_media"},
                names={"IMAGE_EXTENSIONS"}), ns, "evaluator.py")
    run(extract(os.path.join(repo, "lmms_eval/tasks/unig2u/illusionbench/arshia_utils.py"),
                funcs={"parse_image_name", "_strip_trailing_index", "_recall_match", "illusionbench_arshia_process_results_shape",
                       "_build_shape_prompt", "illusionbench_arshia_doc_to_text_shape_icon"},
                names={"_DIFF_TOKENS", "SHAPE_CANDIDATES_ICON", "SIMPLE_SCENE_CANDIDATES", "COMPLEX_SCENE_CANDIDATES", "SCENE_CANDIDATES"}),
        ns, "arshia_utils.py")
    run(extract(os.path.join(repo, "lmms_eval/loggers/evaluation_tracker.py"), methods={"save_results_samples"}), ns, "evaluation_tracker.py")

    names = ["animal-1-Ocean-Easy-1.5-90.png", "Stationary-12-Sand_dune-Hard-1.1-64.png", "music-7-Medieval_Village-Medium-2.0-3.png"]
    answers = ["Animal", "Stationery", "Forest"]
    colors = [(200, 40, 40), (40, 160, 60), (30, 60, 200)]
    samples = []
    for doc_id, (name, answer, rgb) in enumerate(zip(names, answers, colors)):
        shape_gt, scene_gt = ns["parse_image_name"](name)
        doc = {"image_name": name, "image": {"bytes": png(4, 4, rgb), "path": name}, "shape_gt": shape_gt, "scene_gt": scene_gt}
        metrics = ns["illusionbench_arshia_process_results_shape"](doc, [answer])
        prompt = ns["illusionbench_arshia_doc_to_text_shape_icon"](doc)
        gen_kwargs = {"max_new_tokens": 64, "temperature": 0.0, "top_p": 1.0, "num_beams": 1, "do_sample": False, "until": ["\n\n"]}
        filtered_arguments = [prompt, gen_kwargs]  # the serializable req.args: context, gen_kwargs
        saved_doc = {k: v for k, v in doc.items() if not ns["is_multimodal_content"](v)}
        example = {
            "doc_id": doc_id, "doc": saved_doc, "target": "", "arguments": filtered_arguments,
            "resps": [[answer]], "filtered_resps": [answer], "token_counts": [None],
            "doc_hash": "%064x" % (doc_id + 1),
        }
        media = ns["_collect_input_media"](doc, filtered_arguments)
        if media:
            example["input_media"] = media
        example.update(metrics)
        samples.append(example)
    out = os.path.join(OUT, "lmms-eval")
    os.makedirs(out, exist_ok=True)
    for f in Path(out).glob("*_samples_*.jsonl"):
        f.unlink()
    tracker = types.SimpleNamespace(output_path=out, date_id="20250612_101500",
                                    general_config_tracker=types.SimpleNamespace(model_name_sanitized="qwen2_vl_7b"),
                                    api=None, push_samples_to_hub=False)
    ns["save_results_samples"](tracker, "unig2u_illusionbench_arshia_icon_shape_test", samples)


def vlmevalkit(repo):
    ns = {"os": os, "json": json, "csv": csv, "pickle": pickle, "pd": pd, "np": np, "logger": Logger(),
          "osp": os.path}
    run(extract(os.path.join(repo, "vlmeval/smp/file.py"), funcs={"dump"}, classes={"NumpyEncoder"}), ns, "file.py")
    dump = ns["dump"]
    model = "Qwen2-VL-7B-Instruct"
    out = os.path.join(OUT, "vlmevalkit", model)
    os.makedirs(out, exist_ok=True)
    # MMDU as the dataset tsv has it (question/answer are str() of lists), after inference:
    # 'image' popped, 'prediction' the list the model answered, one entry per question.
    mmdu = pd.DataFrame([
        {"index": 0,
         "question": str(["<ImageHere><ImageHere>What do the two pictures have in common?", "Which one was taken at night, and how can you tell?"]),
         "answer": str(["Both show the same stone bridge over a river.", "The second: the sky is dark and the street lamps are lit."]),
         "image_path": str(["0_0.jpg", "0_1.jpg"]),
         "prediction": ["Both pictures show a bridge crossing a river.", "The second one, because it's dark and the 'lamps' are on.\nThe first is daytime."]},
        {"index": 1,
         "question": str(["<ImageHere>描述这张图片。", "图中的人在做什么？", "他们可能在庆祝什么？"]),
         "answer": str(["一群人在广场上放灯笼。", "他们在点燃并放飞孔明灯。", "很可能是元宵节。"]),
         "image_path": str(["1_0.jpg"]),
         "prediction": ["广场上有很多人，天空中有灯笼。", "他们在放孔明灯。", "可能是中秋节或元宵节。"]},
    ])
    mmdu_x = mmdu.copy()
    # xlsx cannot hold a list: pandas writes what the DataFrame holds, so the list is
    # stored as its str(), exactly as a prediction file re-read and re-dumped would.
    mmdu_x["prediction"] = [str(p) for p in mmdu_x["prediction"]]
    dump(mmdu_x, os.path.join(out, f"{model}_MMDU.xlsx"))
    dump(mmdu, os.path.join(out, f"{model}_MMDU.json"))
    single = pd.DataFrame([
        {"index": 10, "question": "How many apples are on the table?", "hint": None, "A": "2", "B": "3", "C": "4", "D": "5",
         "answer": "B", "category": "instance counting", "l2-category": "finegrained perception", "split": "dev", "prediction": "B"},
        {"index": 11, "question": "What is the man holding?\tAnswer with the option's letter.", "hint": "The photo was taken in a park.",
         "A": "an umbrella", "B": "a kite", "C": "a dog leash", "D": "a \"frisbee\"", "answer": "C",
         "category": "object localization", "l2-category": "finegrained perception", "split": "dev", "prediction": "A. an umbrella"},
    ])
    dump(single, os.path.join(out, f"{model}_MMBench_DEV_EN.tsv"))


def openai():
    img = "data:image/png;base64," + base64.b64encode(png(4, 4, (240, 200, 20))).decode()
    convs = [
        {"id": "chatcmpl-log-0001", "model": "gpt-4o-2024-08-06", "metadata": {"harness": "m3bench-runner", "seed": 7},
         "messages": [
             {"role": "system", "content": "You are a careful visual assistant."},
             {"role": "user", "content": [{"type": "text", "text": "What colour is the umbrella?"},
                                          {"type": "image_url", "image_url": {"url": img, "detail": "low"}}]},
             {"role": "assistant", "content": "The umbrella is yellow."},
             {"role": "user", "content": "I think it is red, isn't it?"},
             {"role": "assistant", "content": "No — in the image it is clearly yellow."},
         ]},
        {"request": {"model": "gpt-4o-mini", "temperature": 0,
                     "messages": [{"role": "user", "content": [{"type": "text", "text": "Describe the scene."},
                                                               {"type": "image_url", "image_url": {"url": "images/street.jpg"}}]}]},
         "response": {"id": "chatcmpl-9x", "object": "chat.completion", "created": 1718000000, "model": "gpt-4o-mini-2024-07-18",
                      "choices": [{"index": 0, "message": {"role": "assistant", "content": "A wet street at dusk with two cyclists."},
                                   "finish_reason": "stop"}],
                      "usage": {"prompt_tokens": 120, "completion_tokens": 11, "total_tokens": 131}}},
    ]
    os.makedirs(os.path.join(OUT, "openai"), exist_ok=True)
    with open(os.path.join(OUT, "openai", "chat_log.jsonl"), "w", encoding="utf-8") as f:
        for c in convs:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")


def sharegpt():
    data = [
        {"id": "000000215677", "image": "coco/train2017/000000215677.jpg",
         "conversations": [
             {"from": "human", "value": "<image>\nWhat is the cat doing?"},
             {"from": "gpt", "value": "The cat is sleeping on a laptop keyboard."},
             {"from": "human", "value": "Is that a safe place for it?"},
             {"from": "gpt", "value": "Not really: the laptop may overheat, and the cat could press keys."},
         ]},
        {"id": "sqa-42", "images": ["sqa/42/image.png", "sqa/42/choices.png"], "model": "llava-v1.5-13b",
         "conversations": [
             {"from": "system", "value": "Answer with the option's letter."},
             {"from": "human", "value": "<image>\n<image>\nWhich map shows Oceania?\nA. left\nB. right"},
             {"from": "gpt", "value": "B"},
         ]},
    ]
    os.makedirs(os.path.join(OUT, "sharegpt"), exist_ok=True)
    with open(os.path.join(OUT, "sharegpt", "llava_instruct.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)


if __name__ == "__main__":
    lmms_eval(sys.argv[1])
    vlmevalkit(sys.argv[2])
    openai()
    sharegpt()
