"""Independent reader for the tests: loads Parquet shards with pyarrow and Hugging Face `datasets`
(not the writer's library) and prints what it found as JSON on stdout.

usage: read_dataset.py FILE.parquet [FILE.parquet ...]
"""
import hashlib
import json
import os
import sys

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pyarrow.parquet as pq  # noqa: E402
from datasets import load_dataset  # noqa: E402


def main(paths):
    out = {"files": []}
    for path in paths:
        table = pq.read_table(path)
        rows = table.to_pylist()
        ds = load_dataset("parquet", data_files=path, split="train", cache_dir=os.environ.get("HF_CACHE_DIR"))
        decoded = [ds[i]["image"] for i in range(len(ds))]
        out["files"].append({
            "path": path,
            "columns": table.schema.names,
            "hf_features": {name: type(feature).__name__ for name, feature in ds.features.items()},
            "rows": [
                {
                    "id": row["id"],
                    "image_sha256": row["image_sha256"],
                    "image_bytes_sha256": hashlib.sha256(row["image"]["bytes"]).hexdigest(),
                    "image_path": row["image"]["path"],
                    "constraint_types": [c["type"] for c in row["constraints"]],
                    "constraints": [{**c, "verifiers": json.loads(c["verifiers"])} for c in row["constraints"]],
                    "verdicts": [{**v, "calls": json.loads(v["calls"])} for v in row["verdicts"]],
                    "decoded_image": {"mode": img.mode, "size": list(img.size)},
                }
                for row, img in zip(rows, decoded)
            ],
        })
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
