#!/usr/bin/env python3
"""Sentence-split texts with the REAL nltk (``nltk.sent_tokenize``, English Punkt).

Reads JSON lines ``{"id": ..., "text": "..."}`` on stdin and writes JSON lines
``{"id": ..., "sentences": [...]}`` on stdout, in order.  Used by
``bench/punktAgreement.ts`` and to generate ``test/fixtures/punkt-golden.jsonl``.

The English punkt_tab directory is taken from ``--nltk-data DIR`` (default: the
``NLTK_DATA`` environment variable, else ``tools/venv/nltk_data``); write it first with
    tools/venv/bin/python tools/punkt/export_english.py --nltk-data tools/venv/nltk_data
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--nltk-data",
        default=os.environ.get("NLTK_DATA") or os.path.join(ROOT, "tools", "venv", "nltk_data"),
    )
    args = ap.parse_args()
    data_root = os.path.abspath(args.nltk_data)
    if not os.path.isdir(os.path.join(data_root, "tokenizers", "punkt_tab", "english")):
        sys.exit(
            f"nltk_sentences.py: no punkt_tab/english under {data_root}; run "
            "tools/punkt/export_english.py --nltk-data " + data_root
        )
    os.environ["NLTK_DATA"] = data_root
    import nltk
    import nltk.data

    if data_root not in nltk.data.path:
        nltk.data.path.insert(0, data_root)

    inp = open(sys.stdin.fileno(), "r", encoding="utf-8", newline="\n", closefd=False)
    out = open(sys.stdout.fileno(), "w", encoding="utf-8", newline="\n", closefd=False)
    for line in inp:
        if not line.strip():
            continue
        rec = json.loads(line)
        sents = nltk.sent_tokenize(rec["text"])
        out.write(json.dumps({"id": rec["id"], "sentences": sents}) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
