"""Loads `mmif export --format trl` output with `datasets` and runs every row through the data steps of
TRL's own vision collators, using TRL's functions (no torch: `trl.data_utils` needs only transformers'
tokenizer side). Prints a JSON summary on stdout.

TRL 1.16 (`trl/trainer/dpo_trainer.py` DataCollatorForVisionPreference, `trl/trainer/sft_trainer.py`
DataCollatorForVisionLanguageModeling) does, per example, before the processor turns text and images
into tensors:
- DPO: `is_conversational(example)`; `prepare_multimodal_messages(prompt, images=images)` (which
  raises unless the image placeholders match the images), the same for `chosen` and `rejected`;
  `apply_chat_template(example, processor)` -> prompt / chosen / rejected strings;
- SFT: `prepare_multimodal_messages(messages, images=images)`, then the processor's chat template.
The chat template used here is a small Qwen2-VL-style one written for this check (an image part
renders as `<|image_pad|>`); a real processor's template renders the same parts.

usage: trl_check.py TRL_DIR   (the export's trl/ folder, with sft/ and dpo/)
"""
import contextlib
import glob
import json
import os
import sys

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import datasets  # noqa: E402
from datasets import load_dataset  # noqa: E402

with contextlib.redirect_stdout(sys.stderr):  # transformers announces that torch is absent
    from tokenizers import Tokenizer, models  # noqa: E402
    from transformers import PreTrainedTokenizerFast  # noqa: E402
    from trl.data_utils import apply_chat_template, is_conversational, prepare_multimodal_messages  # noqa: E402

IMAGE_TOKEN = "<|image_pad|>"
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|>" + IMAGE_TOKEN + "<|vision_end|>{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tokenizer():
    t = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")), unk_token="[UNK]")
    t.chat_template = CHAT_TEMPLATE
    return t


def alternates(roles, last):
    """An optional system message, then user and assistant turns alternating from a user turn, ending on `last`."""
    if roles[:1] == ["system"]:
        roles = roles[1:]
    expected = ["user" if i % 2 == 0 else "assistant" for i in range(len(roles))]
    return len(roles) > 0 and roles == expected and roles[-1] == last


def texts_of(messages):
    return [p["text"] for m in messages for p in m["content"] if p["type"] == "text"]


def check_dpo(row, tok):
    if not is_conversational(row):
        return ["not conversational for TRL"], None
    images = row["images"]
    example = {
        "prompt": prepare_multimodal_messages(row["prompt"], images=images),
        "chosen": prepare_multimodal_messages(row["chosen"]),
        "rejected": prepare_multimodal_messages(row["rejected"]),
    }
    rendered = apply_chat_template(example, tok)
    problems = []
    # A multi-turn pair's prompt is the chat so far: [system], user, assistant, ..., user.
    if not alternates([m["role"] for m in example["prompt"]], last="user"):
        problems.append(f"prompt roles {[m['role'] for m in example['prompt']]}")
    if rendered["prompt"].count(IMAGE_TOKEN) != len(images):
        problems.append(f"templated prompt has {rendered['prompt'].count(IMAGE_TOKEN)} image tokens for {len(images)} images")
    for key in ("chosen", "rejected"):
        if [m["role"] for m in example[key]] != ["assistant"] or IMAGE_TOKEN in rendered[key]:
            problems.append(f"{key} is not one assistant text turn")
    return problems, [texts_of(example["prompt"]) + texts_of(example["chosen"]) + texts_of(example["rejected"]), rendered]


def check_sft(row, tok):
    if not is_conversational(row):
        return ["not conversational for TRL"], None
    images = row["images"]
    messages = prepare_multimodal_messages(row["messages"], images=images)
    rendered = tok.apply_chat_template(messages, tokenize=False)
    problems = []
    if not alternates([m["role"] for m in messages], last="assistant"):
        problems.append(f"roles {[m['role'] for m in messages]}")
    if rendered.count(IMAGE_TOKEN) != len(images):
        problems.append(f"templated conversation has {rendered.count(IMAGE_TOKEN)} image tokens for {len(images)} images")
    return problems, [texts_of(messages), rendered]


def main(trl_dir):
    tok = tokenizer()
    out = {"datasets_version": datasets.__version__, "splits": {}}
    for kind, check in (("sft", check_sft), ("dpo", check_dpo)):
        files = sorted(glob.glob(os.path.join(trl_dir, kind, "*.parquet")))
        ds = load_dataset("parquet", data_files=files, split="train", cache_dir=os.environ.get("HF_CACHE_DIR"))
        # No cast: the files declare `images` as a list of `Image` features, so rows hold PIL images.
        problems, texts, image_sizes = [], [], []
        for i in range(len(ds)):
            row = ds[i]
            for j, image in enumerate(row["images"]):
                if not hasattr(image, "size") or image.size[0] <= 0:
                    problems.append(f"row {i} ({row['id']}): images[{j}] is not a decoded image")
            try:
                row_problems, result = check(row, tok)
            except (ValueError, KeyError) as err:  # TRL refusing the row is the finding
                row_problems, result = [f"TRL refused it: {err}"], None
            problems += [f"row {i} ({row['id']}): {p}" for p in row_problems]
            texts.append(result[0] if result else [])
            image_sizes.append([list(im.size) for im in row["images"]])
        out["splits"][kind] = {"rows": len(ds), "columns": sorted(ds.column_names), "ids": list(ds["id"]), "problems": problems, "texts": texts, "image_sizes": image_sizes}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
