"""Checks `mmif export --format mmifeval` against the authors' evaluation scripts and scores its
rule-based constraints with the REFERENCE functions, as their scorer does. Prints JSON on stdout.

From github.com/SYuan03/MM-IFEngine `eval_mmifeval/`:
- inference_multi_constraint_mp.py: reads `data/MM-IFEval/<bench>.jsonl`, finds the image key with
  `get_real_image_key` (`image` first), opens `data/<image>`, resumes by `index`, and prompts
  C-Level lines with `make_prompt_v2(instruction, constraints)`;
- score_multi_constraint_mp_with_image_v11.py: splits lines by `infer_type` ("main" /
  "aux_cmp_gpt", the latter keyed by `id` and `del_cons`), and for each main line's constraint
  dispatches on `judge.method`; `rule_based` runs `globals()[f["func"]](str(prediction), *f["params"])`
  for each of `judge.verify_funcs` (all must pass) and files the score under `constraint["key"]`.

The reference functions are imported from REFERENCE_DIR (../shared/reference), never copied.

usage: mmifeval_score.py DATA_DIR BENCH PREDICTIONS.json REFERENCE_DIR
  PREDICTIONS.json maps a line's id to the response to score.
"""
import json
import os
import sys

REFERENCE_DIR = sys.argv[4]
os.environ.setdefault("NLTK_DATA_PATH", os.path.join(REFERENCE_DIR, "nltk_data"))
sys.path.insert(0, REFERENCE_DIR)
from function_and_compare import *  # noqa: E402,F401,F403  (the scorer's own lookup: globals()[func])


def main(data_dir, bench, predictions_path):
    with open(os.path.join(data_dir, "MM-IFEval", f"{bench}.jsonl")) as f:
        lines = [json.loads(line) for line in f]
    with open(predictions_path) as f:
        predictions = json.load(f)

    problems = []
    indexes = [line["index"] for line in lines]
    if len(set(indexes)) != len(indexes):
        problems.append("index values repeat (the inference script resumes by index)")
    main_lines = [line for line in lines if line.get("infer_type", None) == "main"]
    aux = {}
    for line in lines:
        if line.get("infer_type", None) != "main":
            if line["infer_type"] != "aux_cmp_gpt":
                problems.append(f"{line['id']}: infer_type {line['infer_type']!r}")
            aux.setdefault(line["id"], {})[line["del_cons"]] = line
    scores = {}
    for line in main_lines:
        if line.get("tag") != "C-Level":
            problems.append(f"{line['id']}: tag {line.get('tag')!r}")
        if not os.path.isfile(os.path.join(data_dir, line["image"])):
            problems.append(f"{line['id']}: image {line['image']} is not under the data dir")
        keys = [c["key"] for c in line["constraints"]]
        if len(set(keys)) != len(keys):
            problems.append(f"{line['id']}: constraint keys repeat")
        prediction = predictions[line["id"]]
        score_dict = {}
        for constraint in line["constraints"]:
            method = constraint["judge"]["method"]
            if method == "rule_based":
                score = 1.0
                for func_dict in constraint["judge"]["verify_funcs"]:
                    func = globals()[func_dict["func"]]
                    if not func(str(prediction), *func_dict["params"]):
                        score = 0.0
                        break
                score_dict[constraint["key"]] = score
            elif method == "cmp_gpt":
                twin = aux.get(line["id"], {}).get(constraint["key"])
                if twin is None:
                    problems.append(f"{line['id']}: no aux_cmp_gpt line for {constraint['key']}")
                elif [c["key"] for c in twin["constraints"]] != [k for k in keys if k != constraint["key"]]:
                    problems.append(f"{line['id']}: the aux line for {constraint['key']} does not leave out exactly that constraint")
            elif method != "direct_gpt":
                problems.append(f"{line['id']}: judge method {method!r}")
        scores[line["id"]] = score_dict
    json.dump({"main": len(main_lines), "aux": sum(len(v) for v in aux.values()), "problems": problems, "rule_scores": scores}, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:4])
