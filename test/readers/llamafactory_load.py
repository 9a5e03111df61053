"""Loads a build's sharegpt data the way LLaMA-Factory does, with whichever `datasets` runs this script,
and checks each row against the contract LLaMA-Factory's converter and multimodal plugin enforce.
Prints a JSON summary on stdout; the Node tests assert on it. No torch or LLaMA-Factory needed.

The steps follow hiyouga/LLaMA-Factory `src/llamafactory/data/`:
- parser.py `get_dataset_list`/`DatasetAttr.join`: the entry's `file_name` is relative to `dataset_dir`;
  `columns` and `tags`, when present, replace EVERY column/tag default (a key left out becomes None).
- loader.py `_load_single_dataset`: a directory's files (all one extension, FILEEXT2TYPE) are passed
  as `data_files` to `load_dataset(<type>, split=...)`.
- converter.py `SharegptDatasetConverter`: turns alternate user/assistant tags; a ranking example
  has an odd number of turns and `chosen`/`rejected` dicts with an assistant tag; media paths are
  joined to `media_dir` (default: `dataset_dir`).
- mm_plugin.py: the `<image>` placeholders of the messages must equal the number of images.

usage: llamafactory_load.py DATASET_DIR [NAME ...]
"""
import json
import os
import sys

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import datasets  # noqa: E402
from datasets import load_dataset  # noqa: E402

# extras/constants.py
FILEEXT2TYPE = {"arrow": "arrow", "csv": "csv", "json": "json", "jsonl": "json", "parquet": "parquet", "txt": "text"}
IMAGE_PLACEHOLDER = "<image>"
COLUMN_DEFAULTS = {"prompt": "instruction", "query": "input", "response": "output", "history": None,
                   "messages": "conversations", "system": None, "tools": None, "images": None, "videos": None,
                   "audios": None, "chosen": None, "rejected": None, "kto_tag": None}
TAG_DEFAULTS = {"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt",
                "observation_tag": "observation", "function_tag": "function_call", "system_tag": "system"}


def dataset_attr(entry):
    attr = {"file_name": entry["file_name"], "formatting": entry.get("formatting", "alpaca"),
            "ranking": entry.get("ranking", False), "split": entry.get("split", "train"), **COLUMN_DEFAULTS, **TAG_DEFAULTS}
    if "columns" in entry:
        for key in COLUMN_DEFAULTS:
            attr[key] = entry["columns"].get(key)
    if "tags" in entry:
        for key in TAG_DEFAULTS:
            attr[key] = entry["tags"].get(key)
    return attr


def load(dataset_dir, attr):
    local_path = os.path.join(dataset_dir, attr["file_name"])
    data_files, data_path = [], None
    if os.path.isdir(local_path):
        for file_name in os.listdir(local_path):
            data_files.append(os.path.join(local_path, file_name))
            file_type = FILEEXT2TYPE.get(file_name.split(".")[-1], None)
            if data_path is None:
                data_path = file_type
            elif data_path != file_type:
                raise ValueError("File types should be identical.")
    elif os.path.isfile(local_path):
        data_files.append(local_path)
        data_path = FILEEXT2TYPE.get(local_path.split(".")[-1], None)
    else:
        raise ValueError(f"File {local_path} not found.")
    if data_path is None:
        raise ValueError("Allowed file types: {}.".format(",".join(FILEEXT2TYPE.keys())))
    return load_dataset(path=data_path, data_files=data_files, split=attr["split"], cache_dir=os.environ.get("HF_CACHE_DIR"))


def check_row(example, attr, dataset_dir):
    """The problems LLaMA-Factory would have with one row (empty: it converts and trains)."""
    problems = []
    user_tags = (attr["user_tag"], attr["observation_tag"])
    assistant_tags = (attr["assistant_tag"], attr["function_tag"])
    messages = example[attr["messages"]]
    for i, message in enumerate(messages):
        if message[attr["role_tag"]] not in (user_tags, assistant_tags)[i % 2]:
            problems.append(f"turn {i}: role {message[attr['role_tag']]!r} out of order")
    if attr["ranking"] == (len(messages) % 2 == 0):
        problems.append(f"{len(messages)} turns for a {'ranking' if attr['ranking'] else 'supervised'} example")
    responses = []
    if attr["ranking"]:
        for key in ("chosen", "rejected"):
            turn = example[attr[key]]
            if not isinstance(turn, dict) or turn.get(attr["role_tag"]) not in assistant_tags:
                problems.append(f"{key} is not an assistant turn: {turn!r}")
            else:
                responses.append([turn])
    else:
        responses.append([])
    images = example[attr["images"]] if attr["images"] else None
    images = images or []
    for extra in responses:
        texts = [m[attr["content_tag"]] for m in list(messages) + extra]
        placeholders = sum(text.count(IMAGE_PLACEHOLDER) for text in texts)
        if placeholders != len(images):
            problems.append(f"{placeholders} {IMAGE_PLACEHOLDER} placeholders for {len(images)} images")
    for image in images:
        if not os.path.isfile(os.path.join(dataset_dir, image)):
            problems.append(f"image {image} does not resolve from dataset_dir")
    return problems


def main(dataset_dir, names):
    with open(os.path.join(dataset_dir, "dataset_info.json")) as f:
        info = json.load(f)
    out = {"datasets_version": datasets.__version__, "entries": {}}
    for name in names or list(info):
        attr = dataset_attr(info[name])
        try:
            ds = load(dataset_dir, attr)
        except Exception as err:  # the failure is the finding: report it, do not crash the summary
            cause = err.__cause__ or err
            out["entries"][name] = {"error": f"{type(cause).__name__}: {cause}"[:2000]}
            continue
        problems, metadata_keys = [], set()
        for i in range(len(ds)):
            row = ds[i]
            problems += [f"row {i} ({row.get('id')}): {p}" for p in check_row(row, attr, dataset_dir)]
            metadata_keys.update(json.loads(row["metadata"]).keys())
        out["entries"][name] = {
            "rows": len(ds),
            "columns": sorted(ds.column_names),
            "features": {k: str(v) for k, v in ds.features.items()},
            "attr": {k: attr[k] for k in ("formatting", "ranking", "messages", "images", "chosen", "rejected", "role_tag", "content_tag", "user_tag", "assistant_tag")},
            "problems": problems,
            "metadata_keys": sorted(metadata_keys),
            "ids": [ds[i]["id"] for i in range(len(ds))],
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
