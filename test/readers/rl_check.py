"""Loads `mmif export --format verl` output the way verl's `RLHFDataset` does, or `--format rlvr` output
the way open-instruct loads its RLVR sets (`datasets` rows: `messages` of string contents, `ground_truth`
text, `dataset`), with the same ground-truth check; verl (verl is not installed
here: it needs torch, ray and vllm/sglang; docs/rl-rewards.md) and prints a JSON summary on stdout.

What runs is the code path of volcengine/verl `verl/utils/dataset/rl_dataset.py` RLHFDataset, minus
tokenisation: `_read_files_and_tokenize` (each file through `datasets.load_dataset("parquet",
data_files=f)["train"]`, then `concatenate_datasets`), `_build_messages` (each message's text split on
`<image>`/`<video>` into `{"type": "image"}` and `{"type": "text"}` parts), the image decoding of
`verl/utils/dataset/vision_utils.py` `process_image` (a PIL image, or a `{"bytes"}` dict opened with
PIL), and the reward manager's arguments (`data_source`, `reward_model["ground_truth"]`, `extra_info`,
verl/workers/reward_manager/naive.py) checked against the ground truth's JSON Schema.

usage: rl_check.py verl|rlvr DIR SCHEMA_JSON
"""
import glob
import io
import json
import os
import re
import sys

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import datasets  # noqa: E402
from PIL import Image  # noqa: E402


def process_image(image):
    if isinstance(image, dict) and image.get("bytes") is not None:
        image = Image.open(io.BytesIO(image["bytes"]))
    return image.convert("RGB")


def build_messages(messages):
    for message in messages:
        segments = [s for s in re.split("(<image>|<video>)", message["content"]) if s != ""]
        message["content"] = [{"type": "image"} if s == "<image>" else {"type": "video"} if s == "<video>" else {"type": "text", "text": s} for s in segments]
    return messages


def check_truth(truth, schema):
    """The required keys and enums of the ground truth's JSON Schema (jsonschema is not installed)."""
    problems = [f"missing {k}" for k in schema["required"] if k not in truth]
    for c in truth.get("constraints", []):
        method = c.get("method")
        if method not in ("rule", "direct_judge", "compare_judge"):
            problems.append(f"method {method!r}")
        if method == "rule" and not all(isinstance(v.get("func"), str) and isinstance(v.get("params"), list) for v in c.get("verifiers", [])):
            problems.append(f"rule constraint {c.get('type')} without function calls")
    return problems


def rlvr_row(row, i, out):
    """open-instruct's fields: the prompt is `messages` (string contents, ending with the user turn to
    answer; a chat turn's row has the system message and the earlier turns before it), `ground_truth`
    text, `dataset`."""
    messages = row.pop("messages")
    out["roles"].append([m["role"] for m in messages])
    if not all(isinstance(m["content"], str) and m["role"] in ("system", "user", "assistant") for m in messages) or messages[-1]["role"] != "user":
        out["problems"].append(f"row {i}: messages {messages}")
    messages = messages[-1:]
    if len(row["constraint_type"].split("\n")) != len(json.loads(row["ground_truth"])["constraints"]):
        out["problems"].append(f"row {i}: constraint_type does not list every constraint")
    return [{"type": "text", "text": m["content"]} for m in messages], [process_image(image) for image in row.pop("images")], row["ground_truth"], row["id"], row["dataset"]


def verl_row(row, i, out):
    messages = build_messages(row.pop("prompt"))
    out["roles"].append([m["role"] for m in messages])
    images = [process_image(image) for image in row.pop("images")]
    parts = [p for m in messages for p in m["content"]]
    if sum(p["type"] == "image" for p in parts) != len(images):
        out["problems"].append(f"row {i}: {sum(p['type'] == 'image' for p in parts)} image parts for {len(images)} images")
    if row["extra_info"]["index"] != i:
        out["problems"].append(f"row {i}: extra_info.index {row['extra_info']['index']}")
    return parts, images, row["reward_model"]["ground_truth"], row["extra_info"]["id"], row["data_source"]


def main(form, folder, schema_path):
    with open(schema_path) as f:
        schema = json.load(f)
    files = sorted(glob.glob(os.path.join(folder, "*.parquet")))
    frame = datasets.concatenate_datasets([datasets.load_dataset("parquet", data_files=f, cache_dir=os.environ.get("HF_CACHE_DIR"))["train"] for f in files])
    out = {"rows": len(frame), "columns": sorted(frame.column_names), "ids": [], "prompts": [], "problems": [], "ground_truths": [], "data_sources": [], "image_sizes": [], "roles": []}
    for i in range(len(frame)):
        parts, images, truth_text, record_id, source = (verl_row if form == "verl" else rlvr_row)(dict(frame[i]), i, out)
        truth = json.loads(truth_text)
        out["problems"] += [f"row {i}: {p}" for p in check_truth(truth, schema)]
        out["ids"].append(record_id)
        out["prompts"].append("".join(p.get("text", "") for p in parts))
        out["ground_truths"].append(truth)
        out["data_sources"].append(source)
        out["image_sizes"].append([im.size for im in images])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
