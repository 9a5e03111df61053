"""OpenRLHF's own remote reward client against `mmif reward serve`, on a `mmif export --format rlvr`
export: each row becomes a prompt and label through OpenRLHF's `preprocess_data`
(openrlhf/datasets/prompts_dataset.py, as `--data.input_key messages --data.apply_chat_template
--data.label_key ground_truth` set it), and OpenRLHF's `SingleTurnAgentExecutor.execute`
(openrlhf/utils/agent.py, what `--reward.remote_url` sets up) decodes prompt and response tokens into
the query and posts `{query, prompts, labels}` to the URL with its own aiohttp client, reading the
reply as its trainer does. Only the rollout engine is replaced: it "generates" the response given
per row (the tokens of a text). The tokenizer is a byte-level one built here (no download), so
decoding gives the prompt text back byte for byte, as real BPE tokenizers do. Text only, as in
grpo_two_steps.py: the rows' images are dropped. Prints a JSON summary on stdout.

usage: openrlhf_reward_check.py RLVR_DIR RESPONSES_JSON   (MMIF_REWARD_URL names the service;
RESPONSES_JSON maps a record id to the response to score)
"""
import asyncio
import contextlib
import glob
import json
import os
import sys
from types import SimpleNamespace

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

with contextlib.redirect_stdout(sys.stderr):
    from datasets import load_dataset
    from openrlhf.datasets.prompts_dataset import preprocess_data
    from openrlhf.utils.agent import SingleTurnAgentExecutor
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] }}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def byte_tokenizer():
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    core = Tokenizer(models.BPE({c: i for i, c in enumerate(alphabet)}, []))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(tokenizer_object=core)
    tok.chat_template = CHAT_TEMPLATE
    return tok


class ScriptedEngine:
    """The rollout engine's `generate`, answering with the tokens of the response given for the prompt."""

    def __init__(self, tok, responses):
        self.tok, self.responses = tok, responses

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        prompt = self.tok.decode(prompt_token_ids)
        ids = self.tok(self.responses[prompt], add_special_tokens=False)["input_ids"]
        return SimpleNamespace(outputs=[SimpleNamespace(token_ids=ids, finish_reason="stop", logprobs=None)])


async def main(rlvr_dir, responses_file):
    by_id = json.load(open(responses_file))
    data = load_dataset("parquet", data_files=sorted(glob.glob(os.path.join(rlvr_dir, "*.parquet"))), split="train").remove_columns(["images"])
    tok = byte_tokenizer()
    rows = [(row["id"], *preprocess_data(row, None, "messages", "ground_truth", tok.apply_chat_template)) for row in data]
    engine = ScriptedEngine(tok, {prompt: by_id[id_] for id_, prompt, _ in rows})
    executor = SingleTurnAgentExecutor(os.environ["MMIF_REWARD_URL"] + "/get_reward")
    params = SimpleNamespace(max_tokens=None, logprobs=None)
    outputs = [await executor.execute(prompt, label, params, 1_000_000, tok, engine) for _, prompt, label in rows]
    json.dump({"ids": [id_ for id_, _, _ in rows], "labels_are_ground_truth": all(json.loads(label)["id"] == id_ for id_, _, label in rows),
               "rewards": [o["reward"] for o in outputs], "scores": [o["scores"] for o in outputs]}, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
