"""Opens a build's dataset root the way a Hugging Face user would: the configs `datasets` discovers from the
README.md front matter (no arguments), each config loaded by name and the default one without a name, and
the card metadata through huggingface_hub's DatasetCard (which validates the YAML). Prints JSON on stdout.

usage: card_check.py DATASET_ROOT
"""
import contextlib
import json
import os
import sys

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import datasets  # noqa: E402
from datasets import get_dataset_config_names, load_dataset  # noqa: E402
from huggingface_hub import DatasetCard  # noqa: E402

root = sys.argv[1]
cache = os.environ.get("HF_CACHE_DIR")
out = {"datasets_version": datasets.__version__}
with contextlib.redirect_stdout(sys.stderr):
    out["config_names"] = get_dataset_config_names(root)
    for name in out["config_names"]:
        ds = load_dataset(root, name, split="train", cache_dir=cache)
        first = ds[0] if len(ds) else None
        out[name] = {
            "rows": len(ds),
            "columns": ds.column_names,
            "image_feature": type(ds.features["image"]).__name__ if "image" in ds.features else None,
            "image_size": list(first["image"].size) if first is not None else None,
            # A sampled rule verdict's judge score, JSON text in Parquet (null elsewhere).
            # (a multiturn build's configs keep verdicts in their metadata: no such column)
            "judge_audits": [json.loads(v["judgeAudit"]) for row in ds.select_columns(["verdicts"]) for v in row["verdicts"] if v["judgeAudit"]] if "verdicts" in ds.column_names else [],
        }
    default = load_dataset(root, split="train", cache_dir=cache)
    out["default"] = {"rows": len(default), "columns": default.column_names}
    card = DatasetCard.load(os.path.join(root, "README.md"))
    out["card_data"] = card.data.to_dict()
print(json.dumps(out))
