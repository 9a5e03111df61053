"""verl's custom reward function for `mmif export --format verl` data, scored by `mmif reward serve`.

verl loads it from `custom_reward_function.path` / `.name` (verl/trainer/ppo/reward.py
`get_custom_reward_fn`) and its reward manager calls
`compute_score(data_source, solution_str, ground_truth, extra_info)` per response, with the row's
`data_source`, the decoded response, `reward_model.ground_truth` (here the ground truth's JSON text)
and `extra_info`. The service does the scoring (mmif_client.py); no verifier is copied here.

    custom_reward_function.path=rewards/verl_reward.py custom_reward_function.name=compute_score
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mmif_client import label, score  # noqa: E402


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    [item] = score([{**label(ground_truth), "response": solution_str}])
    return float(item["reward"])
