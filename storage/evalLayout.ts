/**
 * Where an evaluation (`mmif eval`, the evaluateModel workflow) keeps its state and reports,
 * relative to its output (`<data>/MM-IFEval/eval` by default). The state of run `<evalId>` is under
 * `_work/<evalId>/`: its config, the items planned, and one result per item, written once, so a
 * resumed run skips what is done.
 */
import { pad } from './buildLayout.js';

export function evalLayout(evalId: string) {
  const work = `_work/${evalId}`;
  return {
    config: `${work}/config.json`,
    items: `${work}/items.json`,
    result: (index: number) => `${work}/results/item-${pad(index)}.json`,
  };
}
export type EvalLayout = ReturnType<typeof evalLayout>;

/**
 * The report files' base name: the eval id, so that two evals (another prompt form, another setting)
 * never overwrite each other's reports, and a re-run of one eval rewrites its own with the same bytes.
 */
export const evalReportName = (evalId: string): string => evalId;

/**
 * What an eval id says before its hash: the model, and the prompt form (`inline`, `numbered`) or
 * `multiturn` (`.appended` for the ablation).
 */
export function evalIdPrefix(model: string, form: { prompt: string; chats?: { appendInstructions: boolean } }): string {
  const base = model.replace(/[^A-Za-z0-9._-]+/g, '_');
  return form.chats ? `${base}.multiturn${form.chats.appendInstructions ? '.appended' : ''}` : `${base}.${form.prompt}`;
}
