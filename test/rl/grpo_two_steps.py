"""TRL's GRPOTrainer, two steps on CPU, rewarded by `mmif reward serve` through rewards/trl_reward.py,
on a `mmif export --format rlvr` export. The policy is a tiny randomly initialised Llama built here
(no download): a word-level tokenizer over the export's own prompts, one layer of width 16. It is a
text model, so the rows' images are dropped; the prompt is the row's `messages`, the reward function
gets the row's `ground_truth` column by name, as GRPOTrainer passes dataset columns. Prints a JSON
summary on stdout (steps done, every reward the service returned, the trainer's log).

usage: grpo_two_steps.py RLVR_DIR REWARDS_DIR OUT_DIR   (MMIF_REWARD_URL names the service)
"""
import contextlib
import glob
import json
import os
import sys

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

with contextlib.redirect_stdout(sys.stderr):
    import torch
    from datasets import load_dataset
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    from trl import GRPOConfig, GRPOTrainer

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|> {{ message['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)


def tokenizer_for(texts):
    specials = ["[UNK]", "[PAD]", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|system|>"]
    words = sorted({w for t in texts for w in t.split()} - set(specials))
    vocab = {w: i for i, w in enumerate(specials + words)}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", bos_token="<s>", eos_token="</s>")
    tok.chat_template = CHAT_TEMPLATE
    return tok


def main(rlvr_dir, rewards_dir, out_dir):
    sys.path.insert(0, rewards_dir)
    from trl_reward import mmif_reward

    torch.manual_seed(0)
    data = load_dataset("parquet", data_files=sorted(glob.glob(os.path.join(rlvr_dir, "*.parquet"))), split="train")
    data = data.map(lambda row: {"prompt": row["messages"]}).remove_columns(["images", "messages"])
    tok = tokenizer_for([m["content"] for row in data for m in row["prompt"]])
    config = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=4096, pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    model = LlamaForCausalLM(config)
    rewards = []

    def mmif(completions, ground_truth, **kwargs):
        out = mmif_reward(completions, ground_truth, **kwargs)
        rewards.append(out)
        return out

    args = GRPOConfig(output_dir=out_dir, max_steps=2, per_device_train_batch_size=2, num_generations=2, max_completion_length=8,
                      use_cpu=True, report_to=[], logging_steps=1, save_strategy="no", bf16=False, seed=0)
    with contextlib.redirect_stdout(sys.stderr):
        trainer = GRPOTrainer(model=model, processing_class=tok, reward_funcs=[mmif], args=args, train_dataset=data)
        trainer.train()
    json.dump({"steps": trainer.state.global_step, "rewards": rewards, "log": trainer.state.log_history, "rows": len(data)}, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:4])
