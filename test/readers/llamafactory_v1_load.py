"""Loads `mmif export --format llamafactory-v1` output with LLaMA-Factory's OWN v1 data engine (PyPI
`llamafactory`, installed without its dependencies) and prints a JSON summary on stdout.

`llamafactory/v1/core/data_engine.py` DataEngine reads a registration YAML with OmegaConf and subclasses
torch's Dataset; neither is installed in the test venvs (torch is the trainers' opt-in profile), and
the data path uses neither beyond that: so `omegaconf.OmegaConf.load` is given as PyYAML's safe_load
of the same file and `torch.utils.data.Dataset` as a plain class. Then what runs is theirs: the YAML's
entries, `v1/plugins/data_plugins/loader.py` (source `local`: a folder's files by extension through
`datasets.load_dataset`), the data index, and `DataEngine[i]` (a sample with no converter is passed as
stored). Each sample is then checked against `v1/utils/types.py` (SFTSample / DPOSample, Message,
Content: roles, part types, a numeric `loss_weight`), and every `image_url` must be a file under the
dataset root.

usage: llamafactory_v1_load.py DATASET_ROOT YAML...  (run with the dataset root as working directory)
"""
import contextlib
import importlib
import json
import os
import sys
import types
import typing

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import datasets  # noqa: E402,F401  (before the torch stand-in: it looks for a real torch)
import yaml  # noqa: E402


def data_engine_class():
    stubs = [name for name in ("torch", "torch.utils", "torch.utils.data") if name not in sys.modules]
    for name in stubs:
        sys.modules[name] = types.ModuleType(name)
    sys.modules["torch.utils.data"].Dataset = type("Dataset", (), {})
    omegaconf = types.ModuleType("omegaconf")

    class OmegaConf:
        @staticmethod
        def load(path):
            with open(path) as f:
                return yaml.safe_load(f)

    omegaconf.OmegaConf = OmegaConf
    sys.modules.setdefault("omegaconf", omegaconf)
    with contextlib.redirect_stdout(sys.stderr):
        engine = importlib.import_module("llamafactory.v1.core.data_engine")
        types_module = importlib.import_module("llamafactory.v1.utils.types")
        importlib.import_module("llamafactory.v1.plugins.data_plugins.loader")
    # Gone again once read: `datasets` looks for a real torch in sys.modules when it hashes.
    for name in stubs:
        del sys.modules[name]
    return engine.DataEngine, types_module


def message_problems(messages, message_type, content_type, root):
    roles = typing.get_args(message_type.__annotations__["role"])
    part_types = typing.get_args(content_type.__annotations__["type"])
    problems = []
    for m in messages:
        if m["role"] not in roles:
            problems.append(f"role {m['role']!r}")
        # A float per types.py; an int is one too there (PEP 484's numeric tower), and JSON writes 1.0 as 1.
        if not isinstance(m.get("loss_weight"), (int, float)) or isinstance(m.get("loss_weight"), bool):
            problems.append(f"loss_weight {m.get('loss_weight')!r}")
        for part in m["content"]:
            if part["type"] not in part_types or not isinstance(part["value"], str):
                problems.append(f"part {part}")
            elif part["type"] == "image_url" and not os.path.isfile(os.path.join(root, part["value"])):
                problems.append(f"image {part['value']} is not a file under the dataset root")
    return problems


def main(root, registrations):
    DataEngine, t = data_engine_class()
    out = {}
    for registration in registrations:
        engine = DataEngine(registration)
        samples = [engine[i] for i in range(len(engine))]
        problems = []
        for i, s in enumerate(samples):
            keys = ["messages"] if "messages" in s else ["chosen_messages", "rejected_messages"]
            missing = [k for k in keys if k not in s]
            problems += [f"sample {i}: no {k}" for k in missing]
            for k in keys:
                problems += [f"sample {i} {k}: {p}" for p in message_problems(s.get(k, []), t.Message, t.Content, root)]
        out[registration] = {
            "datasets": sorted(engine.dataset_infos.keys()),
            "samples": len(samples),
            "problems": problems,
            "extra_info": [json.loads(s["extra_info"]) for s in samples],
            "texts": [[p["value"] for k in ("messages", "chosen_messages", "rejected_messages") for m in s.get(k, []) for p in m["content"] if p["type"] == "text"] for s in samples],
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
