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

/** The report files' base name: the model, and for chats `.multiturn` (`.appended` for the ablation). */
export function evalReportName(model: string, chats?: { appendInstructions: boolean }): string {
  const base = model.replace(/[^A-Za-z0-9._-]+/g, '_');
  return chats ? `${base}.multiturn${chats.appendInstructions ? '.appended' : ''}` : base;
}
