/**
 * One line of MM-IFEval's evaluation input (github.com/SYuan03/MM-IFEngine `eval_mmifeval/`): a
 * `main` line per sample and an `aux_cmp_gpt` twin per compare-judged constraint (`del_cons`, that
 * constraint left out). Written by output/formats/mmifeval.ts, read by `mmif eval` (pipeline/evaluation/).
 */
export interface MmifevalConstraint {
  key: string;
  value: string;
  judge: { method: 'rule_based' | 'direct_gpt' | 'cmp_gpt'; verify_funcs?: Array<{ func: string; params: unknown[] }> };
}

export interface MmifevalLine {
  id: string;
  index: number;
  image: string;
  tag: 'C-Level';
  infer_type: 'main' | 'aux_cmp_gpt';
  instruction: string;
  constraints: MmifevalConstraint[];
  del_cons?: string;
}
