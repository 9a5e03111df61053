"""Runs the reference verifiers (MM-IFEval's function_and_compare.py, from ../shared/reference, never
copied here) over `mmif verify` call lines: stdin {"id", "response", "func", "params"} -> stdout
{"id", "passed"}, one line each, in order. The project's side of bench/verifyThroughput.ts and of
bench/referenceVerdicts.ts. Usage: NLTK_DATA_PATH=<reference>/nltk_data python3 reference_verify.py <reference dir>
"""
import json
import sys

sys.path.insert(0, sys.argv[1])
import function_and_compare as reference  # noqa: E402

out = sys.stdout
for line in sys.stdin:
    call = json.loads(line)
    passed = getattr(reference, call["func"])(call["response"], *call["params"])
    out.write(json.dumps({"id": call["id"], "passed": bool(passed)}, separators=(",", ":")) + "\n")
