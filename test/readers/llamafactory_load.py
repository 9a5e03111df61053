"""Loads a build's sharegpt data with LLaMA-Factory's OWN code (PyPI `llamafactory`, installed without
its dependencies) under whichever `datasets` runs this script, and prints a JSON summary on stdout.

LLaMA-Factory's packages import torch, transformers and peft at import time (`llamafactory/__init__`,
`data/__init__` -> collator, `extras/misc`, `extras/constants`), none of which the data path below
uses. So its package folders are registered without running their `__init__`, the three names
`extras/constants.py` imports from peft/transformers are given as the file names they stand for, and
`extras/misc` (torch) is replaced by the two env checks the parser calls. What then runs is theirs:
- `data/parser.py` `get_dataset_list`: reads `<dataset_dir>/dataset_info.json` into `DatasetAttr`s;
- the file branch of `data/loader.py` `_load_single_dataset` (that module imports torch): a folder's
  files, one type by extension (`extras/constants.py` FILEEXT2TYPE), to `load_dataset(type, ...)`;
  it is repeated here as written in 0.9.5;
- `data/converter.py` `align_dataset`: the sharegpt converter (role tags, turn counts, ranking
  pairs; a broken row becomes an empty prompt and response) and media paths joined to `media_dir`
  (which defaults to `dataset_dir`).
Then the check `data/mm_plugin.py` makes before training (`_validate_messages`): as many `<image>`
placeholders in the messages as the row has images; and every image path must be a file.

usage: llamafactory_load.py DATASET_DIR
"""
import contextlib
import importlib
import json
import os
import sys
import types

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import datasets  # noqa: E402
from datasets import load_dataset  # noqa: E402


def import_llamafactory_data():
    spec = importlib.util.find_spec("llamafactory")
    if spec is None:
        raise SystemExit("llamafactory is not installed in this venv: run bash tools/install.sh test")
    root = os.path.dirname(spec.origin)
    for name, folder in (("llamafactory", root), ("llamafactory.extras", f"{root}/extras"), ("llamafactory.data", f"{root}/data")):
        package = types.ModuleType(name)
        package.__path__ = [folder]
        sys.modules[name] = package
    weights = {"peft.utils": {"SAFETENSORS_WEIGHTS_NAME": "adapter_model.safetensors", "WEIGHTS_NAME": "adapter_model.bin"},
               "transformers.utils": {"SAFE_WEIGHTS_INDEX_NAME": "model.safetensors.index.json", "SAFE_WEIGHTS_NAME": "model.safetensors",
                                      "WEIGHTS_INDEX_NAME": "pytorch_model.bin.index.json", "WEIGHTS_NAME": "pytorch_model.bin"}}
    stubs = [name for name in weights if importlib.util.find_spec(name.split(".")[0]) is None]
    for name in stubs:
        module = types.ModuleType(name)
        module.__dict__.update(weights[name])
        sys.modules[name.split(".")[0]] = types.ModuleType(name.split(".")[0])
        sys.modules[name] = module
    misc = types.ModuleType("llamafactory.extras.misc")
    misc.use_modelscope = lambda: os.getenv("USE_MODELSCOPE_HUB", "0").lower() in ["true", "y", "1"]
    misc.use_openmind = lambda: os.getenv("USE_OPENMIND_HUB", "0").lower() in ["true", "y", "1"]
    sys.modules["llamafactory.extras.misc"] = misc
    # Their logger writes to the stdout of the moment it is first configured: keep it off our JSON.
    with contextlib.redirect_stdout(sys.stderr):
        constants = importlib.import_module("llamafactory.extras.constants")
        parser = importlib.import_module("llamafactory.data.parser")
        converter = importlib.import_module("llamafactory.data.converter")
    # Gone again once read: `datasets` looks for a real `transformers` in sys.modules when it hashes.
    for name in stubs:
        del sys.modules[name], sys.modules[name.split(".")[0]]
    return constants, parser, converter


def load_file_dataset(dataset_attr, dataset_dir, constants):
    """`_load_single_dataset`, load_from == "file" (llamafactory 0.9.5 data/loader.py)."""
    data_files = []
    local_path = os.path.join(dataset_dir, dataset_attr.dataset_name)
    if os.path.isdir(local_path):
        for file_name in os.listdir(local_path):
            data_files.append(os.path.join(local_path, file_name))
    elif os.path.isfile(local_path):
        data_files.append(local_path)
    else:
        raise ValueError(f"File {local_path} not found.")
    data_path = constants.FILEEXT2TYPE.get(os.path.splitext(data_files[0])[-1][1:], None)
    if data_path is None:
        raise ValueError("Allowed file types: {}.".format(",".join(constants.FILEEXT2TYPE.keys())))
    if any(data_path != constants.FILEEXT2TYPE.get(os.path.splitext(f)[-1][1:], None) for f in data_files):
        raise ValueError("File types should be identical.")
    return load_dataset(path=data_path, data_files=data_files, split=dataset_attr.split, cache_dir=os.environ.get("HF_CACHE_DIR"))


def row_problems(aligned, placeholder, dataset_dir):
    if not aligned["_prompt"] or not aligned["_response"]:
        return ["LLaMA-Factory's converter found the row abnormal and skipped it"]
    problems = []
    images = aligned["_images"] or []
    # The pairwise processor encodes prompt + chosen and prompt + rejected, each checked on its own.
    for response in ([aligned["_response"][0]], [aligned["_response"][1]]) if len(aligned["_response"]) == 2 else ([aligned["_response"][0]],):
        count = sum(m["content"].count(placeholder) for m in aligned["_prompt"] + response)
        if count != len(images):
            problems.append(f"{count} {placeholder} placeholders for {len(images)} images")
    # `_find_medias` joins a path to media_dir (= dataset_dir) only when that file exists.
    problems += [f"image {image} is not a file under dataset_dir" for image in images if not (image.startswith(dataset_dir) and os.path.isfile(image))]
    return problems


def main(dataset_dir):
    constants, parser, converter = import_llamafactory_data()
    with open(os.path.join(dataset_dir, constants.DATA_CONFIG)) as f:
        names = list(json.load(f))
    data_args = types.SimpleNamespace(dataset_dir=dataset_dir, media_dir=dataset_dir, streaming=False, preprocessing_num_workers=None, overwrite_cache=True)
    training_args = types.SimpleNamespace(local_process_index=0)
    out = {"datasets_version": datasets.__version__, "entries": {}}
    for name, dataset_attr in zip(names, parser.get_dataset_list(names, dataset_dir)):
        try:
            raw = load_file_dataset(dataset_attr, dataset_dir, constants)
            with contextlib.redirect_stdout(sys.stderr):
                aligned = converter.align_dataset(raw, dataset_attr, data_args, training_args)
        except Exception as err:  # the failure is the finding: report it, do not crash the summary
            cause = err.__cause__ or err
            out["entries"][name] = {"error": f"{type(cause).__name__}: {cause}"[:2000]}
            continue
        problems, metadata_keys = [], set()
        for i in range(len(raw)):
            problems += [f"row {i} ({raw[i]['id']}): {p}" for p in row_problems(aligned[i], constants.IMAGE_PLACEHOLDER, dataset_dir)]
            metadata_keys.update(json.loads(raw[i]["metadata"]).keys())
        out["entries"][name] = {
            "rows": len(raw),
            "columns": sorted(raw.column_names),
            "attr": {k: getattr(dataset_attr, k) for k in ("formatting", "ranking", "messages", "images", "chosen", "rejected", "role_tag", "content_tag", "user_tag", "assistant_tag")},
            "problems": problems,
            "metadata_keys": sorted(metadata_keys),
            "ids": [raw[i]["id"] for i in range(len(raw))],
            "responses": [len(aligned[i]["_response"]) for i in range(len(aligned))],
            # The converter's view of each row: prompt messages (a multi-turn chat's history) and system text.
            "prompt_messages": [len(aligned[i]["_prompt"]) for i in range(len(aligned))],
            "systems": [aligned[i]["_system"] for i in range(len(aligned))],
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
