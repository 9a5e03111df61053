"""Independent reader for the multiturn tests: loads a multiturn build's Parquet shards (chat/ or
chat-dpo/) with pyarrow and Hugging Face `datasets` and prints what it found as JSON on stdout:
each column's Arrow type (one per column), the `datasets` features, and per row the turns, the
decoded image and the metadata parsed from its JSON text.

usage: read_chat_parquet.py FILE.parquet [FILE.parquet ...]
"""
import json
import os
import sys

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pyarrow.parquet as pq  # noqa: E402
from datasets import load_dataset  # noqa: E402


def main(paths):
    ds = load_dataset("parquet", data_files=paths, split="train", cache_dir=os.environ.get("HF_CACHE_DIR"))
    schema = pq.read_table(paths[0]).schema
    rows = []
    for i in range(len(ds)):
        row = ds[i]
        image = row["image"]
        rows.append({
            "id": row["id"],
            "system": row["system"],
            "conversations": row["conversations"],
            "chosen": row.get("chosen"),
            "rejected": row.get("rejected"),
            "metadata": json.loads(row["metadata"]),
            "provenance": {k: row[k] for k in ("source", "source_id", "license", "image_sha256", "simulated")},
            "decoded_image": {"mode": image.mode, "size": list(image.size)},
        })
    json.dump({
        "arrow_types": {field.name: str(field.type) for field in schema},
        "hf_features": {name: type(feature).__name__ for name, feature in ds.features.items()},
        "rows": rows,
    }, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
