"""Loads LLaVA-style files with Hugging Face `datasets`' JSON builder (`load_dataset("json",
data_files=...)`, https://huggingface.co/docs/datasets/loading#json: a JSON array or JSON lines) and
prints, per file, every record's id, image path (null for a text-only record) and first human turn.

usage: llava_json_load.py FILE [FILE...]   (env HF_CACHE_DIR: the datasets cache to use)
"""
import json
import os
import sys

import datasets

out = {}
for path in sys.argv[1:]:
    table = datasets.load_dataset("json", data_files=path, split="train", cache_dir=os.environ.get("HF_CACHE_DIR"))
    out[path] = [{"id": row["id"], "image": row.get("image"), "human": row["conversations"][0]["value"]} for row in table]
print(json.dumps(out))
