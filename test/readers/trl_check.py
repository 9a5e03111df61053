"""Loads `mmif export --format trl` output with `datasets` and checks every row against the fields TRL's
trainers read for vision-language models (no torch needed). Prints a JSON summary on stdout.

The contract, from huggingface/trl (`trl/data_utils.py`, `trl/trainer/dpo_trainer.py`,
`trl/trainer/sft_trainer.py`) and its reference vision preference set `trl-lib/rlaif-v`:
- a row is conversational when its `prompt`/`chosen`/`rejected`/`messages` value is a list of
  `{role, content}` dicts (`is_conversational`); the chat template is applied to them;
- content is a list of parts `{type: "image"}` / `{type: "text", text}`; the processor gets
  `images` (a list of PIL images) beside the templated text, one image per image part;
- DPO: `prompt` ends with the user turn, `chosen` and `rejected` are one assistant turn each;
  SFT: `messages` alternate user/assistant and end with the assistant.

usage: trl_check.py TRL_DIR   (the export's trl/ folder, with sft/ and dpo/)
"""
import glob
import json
import os
import sys

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import datasets  # noqa: E402
from datasets import Image, load_dataset  # noqa: E402


def parts_problems(message, where):
    problems = []
    if not isinstance(message, dict) or set(message) < {"role", "content"}:
        return [f"{where}: not a {{role, content}} message"]
    for part in message["content"]:
        if part["type"] == "text":
            if not isinstance(part["text"], str) or not part["text"]:
                problems.append(f"{where}: empty text part")
        elif part["type"] != "image":
            problems.append(f"{where}: unknown part type {part['type']!r}")
    return problems


def image_parts(messages):
    return sum(1 for m in messages for p in m["content"] if p["type"] == "image")


def check(row, kind):
    problems = []
    images = row["images"]
    for i, image in enumerate(images):
        if not hasattr(image, "size") or image.size[0] <= 0:
            problems.append(f"images[{i}] is not a decoded image: {type(image).__name__}")
    if kind == "dpo":
        conversation = row["prompt"]
        if [m["role"] for m in conversation] != ["user"]:
            problems.append(f"prompt roles {[m['role'] for m in conversation]}")
        for key in ("chosen", "rejected"):
            turns = row[key]
            if [m["role"] for m in turns] != ["assistant"] or image_parts(turns) != 0:
                problems.append(f"{key} is not one assistant text turn")
            problems += [p for m in turns for p in parts_problems(m, key)]
    else:
        conversation = row["messages"]
        roles = [m["role"] for m in conversation]
        if roles != ["user", "assistant"]:
            problems.append(f"messages roles {roles}")
    problems += [p for m in conversation for p in parts_problems(m, "prompt" if kind == "dpo" else "messages")]
    if image_parts(conversation) != len(images):
        problems.append(f"{image_parts(conversation)} image parts for {len(images)} images")
    return problems


def main(trl_dir):
    out = {"datasets_version": datasets.__version__, "splits": {}}
    for kind in ("sft", "dpo"):
        files = sorted(glob.glob(os.path.join(trl_dir, kind, "*.parquet")))
        ds = load_dataset("parquet", data_files=files, split="train", cache_dir=os.environ.get("HF_CACHE_DIR"))
        # The one-line cast the README gives: the {bytes, path} structs become images.
        ds = ds.cast_column("images", [Image()])
        rows = [ds[i] for i in range(len(ds))]
        out["splits"][kind] = {
            "rows": len(ds),
            "columns": sorted(ds.column_names),
            "ids": [r["id"] for r in rows],
            "problems": [f"row {i} ({r['id']}): {p}" for i, r in enumerate(rows) for p in check(r, kind)],
            "texts": [
                [p["text"] for m in (r["prompt"] + r["chosen"] + r["rejected"] if kind == "dpo" else r["messages"]) for p in m["content"] if p["type"] == "text"]
                for r in rows
            ],
            "image_sizes": [[list(im.size) for im in r["images"]] for r in rows],
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
