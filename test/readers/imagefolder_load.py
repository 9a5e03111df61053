"""Loads folders with Hugging Face `datasets`' own ImageFolder builder (`load_dataset("imagefolder",
data_dir=...)`, https://huggingface.co/docs/datasets/image_dataset#imagefolder) and prints, per folder
and split, every row: its image file relative to the folder and its metadata columns. The images are
cast to `Image(decode=False)` so each row keeps the file it came from.

usage: imagefolder_load.py DIR [DIR...]   (env HF_CACHE_DIR: the datasets cache to use)
"""
import json
import os
import sys

import datasets

out = {}
for folder in sys.argv[1:]:
    loaded = datasets.load_dataset("imagefolder", data_dir=folder, cache_dir=os.environ.get("HF_CACHE_DIR"))
    splits = {}
    for split, table in loaded.items():
        rows = []
        for row in table.cast_column("image", datasets.Image(decode=False)):
            image = row.pop("image")
            rows.append({"file": os.path.relpath(image["path"], folder), **row})
        splits[split] = rows
    out[folder] = splits
print(json.dumps(out))
