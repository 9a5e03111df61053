"""verl's own dataset class on a `mmif export --format verl` export: `RLHFDataset`
(verl/utils/dataset/rl_dataset.py) reads the Parquet files, filters overlong prompts through the
processor (its chat template, `qwen_vl_utils.process_vision_info` and the processor's image
expansion: a prompt it cannot process is counted as overlong and dropped, so every row kept is one it
processed), and `__getitem__` gives the `raw_prompt` a rollout renders. The processor is a
Qwen2-VL one built here (no download): its image processor's defaults and a word-level tokenizer over
the export's own prompts with Qwen's vision tokens. Prints a JSON summary on stdout: per row kept,
the record id, data source, the prompt's parts and the images' sizes, the ground truth, and the
number of prompt tokens the processor made (image tokens included).

usage: verl_dataset_check.py VERL_DIR CACHE_DIR
"""
import contextlib
import glob
import json
import os
import sys

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

with contextlib.redirect_stdout(sys.stderr):
    import datasets
    from omegaconf import OmegaConf
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2VLImageProcessor, Qwen2VLProcessor, Qwen2VLVideoProcessor
    from verl.utils.dataset.rl_dataset import RLHFDataset
    from verl.utils.tokenizer import build_multimodal_processor_inputs

VISION = ["<|vision_start|>", "<|image_pad|>", "<|vision_end|>", "<|video_pad|>"]
SPECIALS = ["[UNK]", "[PAD]", "<|im_start|>", "<|im_end|>", *VISION]
# Qwen2-VL's template, reduced to what these rows hold: an image part, text parts.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }} "
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|> {% endfor %}{% if add_generation_prompt %}<|im_start|>assistant {% endif %}"
)


def processor_for(texts):
    words = sorted({w for t in texts for w in t.split()} - set(SPECIALS))
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(SPECIALS + words)}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", eos_token="<|im_end|>", additional_special_tokens=SPECIALS[2:])
    tok.chat_template = CHAT_TEMPLATE
    processor = Qwen2VLProcessor(image_processor=Qwen2VLImageProcessor(), tokenizer=tok, video_processor=Qwen2VLVideoProcessor(), chat_template=CHAT_TEMPLATE)
    return tok, processor


def main(verl_dir, cache_dir):
    files = sorted(glob.glob(os.path.join(verl_dir, "*.parquet")))
    raw = datasets.load_dataset("parquet", data_files=files, split="train")
    tok, processor = processor_for([m["content"] for row in raw for m in row["prompt"]])
    config = OmegaConf.create({"cache_dir": cache_dir, "prompt_key": "prompt", "image_key": "images", "max_prompt_length": 1_000_000,
                               "filter_overlong_prompts": True, "filter_overlong_prompts_workers": 1, "truncation": "error"})
    with contextlib.redirect_stdout(sys.stderr):
        dataset = RLHFDataset(data_files=files, tokenizer=tok, config=config, processor=processor)
    rows = []
    for i in range(len(dataset)):
        row = dataset[i]
        parts = [p for m in row["raw_prompt"] for p in m["content"]]
        images = [p["image"] for p in parts if p["type"] == "image"]
        text = processor.apply_chat_template(row["raw_prompt"], add_generation_prompt=True, tokenize=False)
        with contextlib.redirect_stdout(sys.stderr):
            from qwen_vl_utils import process_vision_info
            vision, _ = process_vision_info(row["raw_prompt"], image_patch_size=dataset.image_patch_size, return_video_metadata=True)
            tokens = build_multimodal_processor_inputs(processor, text=[text], images=vision, videos=None, audio=None, mm_processor_kwargs={})["input_ids"][0]
        rows.append({
            "id": row["extra_info"]["id"],
            "data_source": row["data_source"],
            "parts": [p["type"] for p in parts],
            "text": "".join(p["text"] for p in parts if p["type"] == "text"),
            "image_sizes": [list(im.size) for im in images],
            "ground_truth": json.loads(row["reward_model"]["ground_truth"]),
            "image_tokens": int(sum(1 for t in tokens.tolist() if t == tok.convert_tokens_to_ids("<|image_pad|>"))),
        })
    json.dump({"class": f"{type(dataset).__module__}.{type(dataset).__name__}", "read": len(raw), "kept": len(dataset), "rows": rows}, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:3])
