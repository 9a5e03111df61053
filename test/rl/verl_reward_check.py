"""rewards/verl_reward.py loaded by verl's own loader and called as verl's reward manager calls it.

verl (PyPI 0.9.1, installed without its dependencies by `tools/install.sh rl`) loads a custom reward
function with `verl.utils.import_utils.load_extern_object(module_path, object_name)`
(verl/trainer/ppo/reward.py `get_custom_reward_fn`); that module imports only the standard library,
so it is loaded here from its file (verl's package `__init__` imports ray). The function is then
called per row with keyword arguments as verl's reward managers pass them: `data_source`,
`solution_str`, `ground_truth` (`reward_model.ground_truth`) and `extra_info`. Prints the scores.

usage: verl_reward_check.py VERL_DIR REWARD_MODULE RESPONSES_JSON   (MMIF_REWARD_URL names the service)
"""
import glob
import importlib.util
import json
import os
import sys

from datasets import load_dataset


def verl_loader():
    root = os.path.dirname(importlib.util.find_spec("verl").origin)
    spec = importlib.util.spec_from_file_location("verl_import_utils", os.path.join(root, "utils", "import_utils.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_extern_object


def main(verl_dir, reward_module, responses_json):
    with open(responses_json) as f:
        responses = json.load(f)
    compute_score = verl_loader()(module_path=reward_module, object_name="compute_score")
    rows = load_dataset("parquet", data_files=sorted(glob.glob(os.path.join(verl_dir, "*.parquet"))), split="train")
    scores = []
    for row in rows:
        scores.append(compute_score(data_source=row["data_source"], solution_str=responses[row["extra_info"]["id"]],
                                    ground_truth=row["reward_model"]["ground_truth"], extra_info=row["extra_info"]))
    json.dump({"ids": [row["extra_info"]["id"] for row in rows], "scores": scores}, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:4])
