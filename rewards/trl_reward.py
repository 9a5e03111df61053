"""TRL GRPOTrainer reward functions for `mmif export --format rlvr` (or verl) data, scored by
`mmif reward serve`.

GRPOTrainer calls each reward function as `func(prompts=..., completions=..., completion_ids=...,
**columns)`, every other dataset column passed by name, one value per completion, and takes a list
of floats (TRL docs, "Using a custom reward function"; trl/trainer/grpo_trainer.py
`_calculate_rewards`). A conversational completion is a list of messages: its last message's content
is the response. The whole batch is one request to the service (mmif_client.py); no verifier here.

    from trl_reward import mmif_reward
    GRPOTrainer(model=..., reward_funcs=[mmif_reward], train_dataset=dataset)  # a ground_truth column
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mmif_client import label, score  # noqa: E402


def response_text(completion):
    if isinstance(completion, str):
        return completion
    content = completion[-1]["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content if part.get("type") == "text")


def mmif_reward(completions, ground_truth, **kwargs):
    """The share of a prompt's constraints each completion follows (the service's --reward mode)."""
    items = [{**label(truth), "response": response_text(c)} for c, truth in zip(completions, ground_truth)]
    return [float(item["reward"]) for item in score(items)]
