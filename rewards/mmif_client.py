"""The one call every trainer's reward function makes: `POST /v1/rewards` of `mmif reward serve`
(docs/rl-rewards.md), standard library only. No verifier logic lives here: the service scores.

MMIF_REWARD_URL names the service (default http://127.0.0.1:8000). A refused batch (4xx) or a judge
that is down (503) raises with the service's one line: a trainer must not train on a made-up reward.
"""
import json
import os
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000"


def score(items, url=None, timeout=600):
    """`items`: [{"id" | "ground_truth", "response"}]; returns the service's items (reward, constraints)."""
    base = (url or os.environ.get("MMIF_REWARD_URL") or DEFAULT_URL).rstrip("/")
    request = urllib.request.Request(f"{base}/v1/rewards", data=json.dumps({"items": items}).encode(), headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.load(response)["items"]
    except urllib.error.HTTPError as err:
        raise RuntimeError(f"mmif reward service {base}: {err.code} {json.load(err).get('error')}") from None


def label(ground_truth):
    """A row's ground truth as the service takes it: a record id, or the ground truth (JSON text or dict)."""
    return {"ground_truth": ground_truth} if not isinstance(ground_truth, str) or ground_truth.lstrip().startswith("{") else {"id": ground_truth}
