/**
 * A held-out split in MM-IFEval's evaluation input layout, so a model trained on the rest can be
 * scored with the authors' scripts (github.com/SYuan03/MM-IFEngine `eval_mmifeval/`):
 * `inference_multi_constraint_mp.py` reads `<project>/data/MM-IFEval/<bench>.jsonl`, opens
 * `<project>/data/<image>` and prompts with `make_prompt_v2(instruction, constraints)`;
 * `score_multi_constraint_mp_with_image_v11.py` scores each `infer_type: "main"` line's constraints by
 * `judge.method`: `rule_based` calls `globals()[func](prediction, *params)` for every verify_func,
 * `direct_gpt` asks a judge with the image, `cmp_gpt` compares with the prediction of the line's
 * `aux_cmp_gpt` twin (same `id`, `del_cons` = that constraint's `key`, the constraint left out).
 * Scores are filed under `constraint.key`, so keys are unique within a sample (one constraint per type).
 */
import type { PlannedConstraint } from '../../pipeline/run/stageState.js';
import { rngFor } from '../../domain/random.js';
import { inReferenceScorer } from '../../verification/functions.js';
import type { InstructRecord } from '../contracts/records.js';
import type { MmifevalConstraint, MmifevalLine } from '../../domain/mmifevalLine.js';

/**
 * Whether an image is held out for evaluation: a seeded draw per normalized image (its sha256),
 * independent of order, so all samples of one image are drawn together (builds' `holdout`, and
 * `mmif export --format mmifeval --holdout` on a build that reserved none).
 */
export function isHeldOutImage(seed: number, imageSha256: string, fraction: number): boolean {
  return rngFor(seed, imageSha256, 'mmifeval-holdout')() < fraction;
}

/**
 * A rule the scorer can call stays rule-based; a rule using one of our functions beyond the
 * reference code cannot be called by name there, so the judge scores it, as it does judged types.
 */
export function scorerConstraint(c: PlannedConstraint): MmifevalConstraint {
  if (c.method === 'rule' && c.verifiers.length > 0 && c.verifiers.every((v) => inReferenceScorer(v.func))) {
    return { key: c.type, value: c.value, judge: { method: 'rule_based', verify_funcs: c.verifiers.map(({ func, params }) => ({ func, params })) } };
  }
  return { key: c.type, value: c.value, judge: { method: c.method === 'compare_judge' ? 'cmp_gpt' : 'direct_gpt' } };
}

/** The main line of each record, followed by one aux line per compare-judged constraint. */
export function mmifevalLines(records: readonly InstructRecord[]): MmifevalLine[] {
  const lines: MmifevalLine[] = [];
  for (const r of records) {
    const constraints = r.constraints.map(scorerConstraint);
    const keys = constraints.map((c) => c.key);
    if (new Set(keys).size !== keys.length) throw new Error(`record ${r.id}: constraint types repeat (${keys.join(', ')}); MM-IFEval files scores by type`);
    const line = { id: r.id, image: r.image_path, tag: 'C-Level' as const, instruction: r.instruction };
    lines.push({ ...line, index: lines.length, infer_type: 'main', constraints });
    for (const c of constraints.filter((k) => k.judge.method === 'cmp_gpt')) {
      lines.push({ ...line, index: lines.length, infer_type: 'aux_cmp_gpt', del_cons: c.key, constraints: constraints.filter((k) => k !== c) });
    }
  }
  return lines;
}
