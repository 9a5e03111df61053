"""The peer workload for bench/peer.ts: Bespoke Labs Curator (PyPI bespokelabs-curator) sending
chat completions with an image to the mmif simulator's OpenAI-compatible URL.

Each of --requests rows becomes one request: an answer-style prompt (the "## Task Description /
## Constraints" layout mmif-engine sends) with one of the --images JPEGs attached as a base64 data
URL, as mmif-engine attaches its images. Curator's online OpenAI backend does the sending, with
max_concurrent_requests = --concurrency, and caches every response to --working-dir as it arrives,
so a killed run started again with the same arguments resumes from that cache.

Run (bench/peer.ts does this; it needs `bash tools/install.sh bench` first):
    tools/bench-venv/bin/python bench/peer_curator.py --base-url http://127.0.0.1:PORT/v1 \
        --images DIR --requests 6000 --concurrency 128 --working-dir /tmp/curator-cache

Prints one JSON line at the end: {"responses", "seconds", "cpu_ms", "peak_rss_mib"} (this process).
Only 127.0.0.1 is contacted: telemetry, the hosted viewer and litellm's remote cost map are off.
"""

import argparse
import importlib.metadata
import importlib.util
import json
import resource
import os
import sys
import time

# Before curator (and litellm, datasets) are imported: nothing may leave the machine.
os.environ["TELEMETRY_ENABLED"] = "false"
os.environ["DO_NOT_TRACK"] = "1"
os.environ.pop("CURATOR_VIEWER", None)
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("OPENAI_API_KEY", "not-needed")
# Curator's OpenAI backend loads tiktoken's cl100k_base, which tiktoken would download; litellm (a
# curator dependency) ships that file, so point tiktoken's cache at litellm's copy.
_litellm = importlib.util.find_spec("litellm")
if _litellm and _litellm.submodule_search_locations:
    os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(list(_litellm.submodule_search_locations)[0], "litellm_core_utils", "tokenizers")

from bespokelabs import curator  # noqa: E402

CONSTRAINTS = [
    "Answer in exactly 3 paragraphs separated by blank lines.",
    "Use between 120 and 180 words.",
    "Mention 'light' at least twice.",
    "Do not use the words 'very' or 'really'.",
    "End your response with the phrase 'That is all.'",
]


class AnswerWithImage(curator.LLM):
    """One answer-style request per row, with the row's image."""

    def prompt(self, row):
        lines = "\n".join(f"{i + 1}. {c}" for i, c in enumerate(CONSTRAINTS))
        text = (
            "## Task Description\n"
            f"Describe what is happening in this image and what it might be used for (item {row['idx']}).\n\n"
            f"## Constraints\n{lines}"
        )
        return text, curator.types.Image(url=row["image"])

    def parse(self, row, response):
        return {"idx": row["idx"], "chars": len(response)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--images", required=True)
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--working-dir", required=True)
    parser.add_argument("--model", default="mmif-sim-vlm")
    args = parser.parse_args()

    images = sorted(os.path.join(args.images, f) for f in os.listdir(args.images) if f.endswith(".jpg"))
    rows = [{"idx": i, "image": images[i % len(images)]} for i in range(args.requests)]
    llm = AnswerWithImage(
        model_name=args.model,
        backend="openai",
        generation_params={"temperature": 0.7, "max_tokens": 1024},
        backend_params={
            "base_url": args.base_url,
            "api_key": "not-needed",
            "max_concurrent_requests": args.concurrency,
            # Only the concurrency cap limits: request and token budgets far above what is sent.
            "max_requests_per_minute": 10_000_000,
            "max_tokens_per_minute": 10_000_000_000,
            "max_retries": 10,
            "seconds_to_pause_on_rate_limit": 1,
        },
    )
    print(f"bespokelabs-curator {importlib.metadata.version('bespokelabs-curator')}: {len(rows)} requests", file=sys.stderr, flush=True)
    started = time.time()
    result = llm(rows, working_dir=args.working_dir)
    seconds = time.time() - started
    dataset = result.dataset
    usage = resource.getrusage(resource.RUSAGE_SELF)
    summary = {
        "responses": len(dataset),
        "seconds": seconds,
        "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1000,
        "peak_rss_mib": usage.ru_maxrss / 1024,
    }
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
